/* test-allocator.c - the policy, one behaviour per test.
 *
 * The expected numbers are the H200 observations of doc/allocator-model.md,
 * "Measured on an H200" (torch 2.11.0+cu130, recorded with
 * _record_memory_history), e.g. "segment_alloc
 * 20971520 S1 | alloc 1048577 S1+0 | alloc 5242880 S1+1049088".
 */
#include "config.h"

#include <glib.h>
#include <string.h>

#include "allocator.h"
#include "shadow.h"
#include "simdevice.h"
#include "testutil.h"


typedef struct {
	CcaDevice *device;
	CcaAllocator *alloc;
	CcaSettings settings;
	GArray *events; /* CcaEvent */
} Fixture;

static void
record(void *data, const CcaEvent *ev)
{
	g_array_append_val(((Fixture *)data)->events, *ev);
}

static void
fixture_setup(Fixture *f, const char *conf, double fraction)
{
	cca_settings_init(&f->settings);
	if (conf) {
		GError *error = NULL;
		g_assert_true(cca_settings_parse(&f->settings, conf, &error));
		g_assert_no_error(error);
	}
	CcaSimDeviceConfig dc = {.total_memory = CCA_H200_TOTAL_MEMORY};
	f->device = cca_simdevice_new(&dc);
	f->events = g_array_new(FALSE, FALSE, sizeof(CcaEvent));
	CcaLimits limits = {.memory_fraction = fraction};
	f->alloc = cca_allocator_new(&f->settings, &limits, f->device, record, f);
}

static void
fixture_teardown(Fixture *f)
{
	GString *why = g_string_new(NULL);
	gboolean ok = cca_allocator_check_invariants(f->alloc, why);
	if (!ok)
		g_test_message("%s", why->str);
	g_assert_true(ok);
	g_string_free(why, TRUE);
	cca_allocator_free(f->alloc);
	cca_device_free(f->device);
	cca_settings_clear(&f->settings);
	g_array_free(f->events, TRUE);
}

static const CcaEvent *
event_at(Fixture *f, guint i)
{
	g_assert_cmpuint(i, <, f->events->len);
	return &g_array_index(f->events, CcaEvent, i);
}

static uint64_t
addr_of(Fixture *f, CcaHandle h)
{
	return cca_allocator_block_address(f->alloc, h);
}

static const CcaStats *
stats(Fixture *f)
{
	return cca_allocator_stats(f->alloc);
}

/* cca_allocator_round_size() under CONF (NULL: the defaults): each
 * request and the size it rounds to (a 0 request ends the list). */
typedef struct {
	const char *name;
	const char *conf;
	uint64_t rounded[4][2];
} RoundCase;

static const RoundCase round_cases[] = {
	{"round-size", NULL, {{1, 512}, {512, 512}, {513, 1024}, {1048577, 1049088}}},
	/* H200: 1 200 000 → 1 310 720; 314 585 145 → 335 544 320 */
	{"round-size-power2-divisions",
	 "roundup_power2_divisions:4",
	 {{1200000, 1310720}, {3145735, 3670016}, {314585145, 335544320}, {1 << 22, 1 << 22}}},
	{"round-size-power2-list",
	 "roundup_power2_divisions:[256:1,512:2,>:4]",
	 {{1200000, 1200128}, {314585145, 314585600}}},
};

/* One row of round_cases. */
static void
test_round_size(gconstpointer data)
{
	const RoundCase *c = data;
	Fixture f;
	fixture_setup(&f, c->conf, 0);
	for (guint i = 0; i < G_N_ELEMENTS(c->rounded) && c->rounded[i][0] != 0; i++)
		g_assert_cmpuint(cca_allocator_round_size(f.alloc, c->rounded[i][0]), ==,
				 c->rounded[i][1]);
	fixture_teardown(&f);
}

/* Before 2.4 one division already rounded to the next power of two
 * (divisions > 0); from 2.4 on it means plain 512-byte rounding. */
static void
test_round_size_one_division_by_version(void)
{
	CcaSettings s;
	cca_settings_init(&s);
	GError *error = NULL;
	g_assert_true(cca_settings_parse(&s, "roundup_power2_divisions:1", &error));
	g_assert_cmpuint(cca_allocator_round_size_under(&s, 1200000), ==, 1200128);
	s.pytorch_version = 203;
	g_assert_cmpuint(cca_allocator_round_size_under(&s, 1200000), ==, 2097152);
	g_assert_cmpuint(cca_allocator_round_size_under(&s, 1048576), ==, 1048576);
	cca_settings_clear(&s);
}

/* Before 2.9 a fraction of 1.0 still set a limit, and with it enabled
 * garbage collection; 2.9+ imposes none. */
static void
test_fraction_one_by_version(void)
{
	CcaSettings s;
	cca_settings_init(&s);
	CcaSimDeviceConfig dc = {.total_memory = CCA_H200_TOTAL_MEMORY};
	CcaDevice *dev = cca_simdevice_new(&dc);
	CcaLimits limits = {.memory_fraction = 1.0};
	CcaAllocator *a = cca_allocator_new(&s, &limits, dev, NULL, NULL);
	g_assert_cmpuint(cca_allocator_allowed_maximum(a), ==, 0);
	cca_allocator_free(a);
	s.pytorch_version = 208;
	a = cca_allocator_new(&s, &limits, dev, NULL, NULL);
	g_assert_cmpuint(cca_allocator_allowed_maximum(a), ==, CCA_H200_TOTAL_MEMORY);
	cca_allocator_free(a);
	cca_device_free(dev);
	cca_settings_clear(&s);
}

static void
test_small_pool_packs_one_segment(void)
{
	Fixture f;
	fixture_setup(&f, NULL, 0);
	CcaHandle a = cca_allocator_malloc(f.alloc, 1, 0);
	CcaHandle b = cca_allocator_malloc(f.alloc, 512, 0);
	CcaHandle c = cca_allocator_malloc(f.alloc, 513, 0);
	CcaHandle d = cca_allocator_malloc(f.alloc, CCA_MIB, 0);
	uint64_t s0 = addr_of(&f, a);
	g_assert_cmpuint(addr_of(&f, b) - s0, ==, 512);
	g_assert_cmpuint(addr_of(&f, c) - s0, ==, 1024);
	g_assert_cmpuint(addr_of(&f, d) - s0, ==, 2048);
	g_assert_cmpint(stats(&f)->segment[CCA_STAT_SMALL_POOL].current, ==, 1);
	g_assert_cmpint(stats(&f)->reserved_bytes[CCA_STAT_ALL].current, ==, 2 * CCA_MIB);
	g_assert_cmpuint(event_at(&f, 0)->action, ==, CCA_ACTION_SEGMENT_ALLOC);
	g_assert_cmpuint(event_at(&f, 0)->size, ==, 2 * CCA_MIB);
	g_assert_cmpuint(event_at(&f, 1)->action, ==, CCA_ACTION_ALLOC);
	g_assert_cmpuint(event_at(&f, 1)->size, ==, 1);
	fixture_teardown(&f);
}

static void
test_large_segment_sizes(void)
{
	Fixture f;
	fixture_setup(&f, NULL, 0);
	cca_allocator_malloc(f.alloc, CCA_MIB + 1, 0);
	cca_allocator_malloc(f.alloc, 5 * CCA_MIB, 0);
	CcaHandle c = cca_allocator_malloc(f.alloc, 10 * CCA_MIB - 1, 0);
	cca_allocator_malloc(f.alloc, 10 * CCA_MIB, 0);
	CcaHandle e = cca_allocator_malloc(f.alloc, 11 * CCA_MIB + 5, 0);
	CcaHandle g = cca_allocator_malloc(f.alloc, 25 * CCA_MIB, 0);
	/* segment sizes in order: 20 MiB, 10 MiB, 12 MiB, 26 MiB */
	uint64_t sizes[4], n = 0;
	for (guint i = 0; i < f.events->len; i++)
		if (event_at(&f, i)->action == CCA_ACTION_SEGMENT_ALLOC)
			sizes[n++] = event_at(&f, i)->size;
	g_assert_cmpuint(n, ==, 4);
	g_assert_cmpuint(sizes[0], ==, 20971520);
	g_assert_cmpuint(sizes[1], ==, 10485760);
	g_assert_cmpuint(sizes[2], ==, 12582912);
	g_assert_cmpuint(sizes[3], ==, 27262976);
	(void)c;
	(void)e;
	(void)g;
	/* whole unsplit blocks count in allocated_bytes (H200 default run) */
	g_assert_cmpint(stats(&f)->allocated_bytes[CCA_STAT_ALL].current, ==,
			1049088 + 5242880 + 10485760 + 10485760 + 12582912 + 27262976);
	fixture_teardown(&f);
}

static void
test_best_fit_prefers_smallest_block(void)
{
	Fixture f;
	fixture_setup(&f, NULL, 0);
	CcaHandle front = cca_allocator_malloc(f.alloc, 5 * CCA_MIB, 0); /* 20 MiB segment */
	CcaHandle back = cca_allocator_malloc(f.alloc, 15 * CCA_MIB, 0); /* its remainder */
	CcaHandle ten = cca_allocator_malloc(f.alloc, 10 * CCA_MIB, 0);	 /* 10 MiB segment */
	uint64_t ten_addr = addr_of(&f, ten);
	g_assert_cmpint(stats(&f)->segment[CCA_STAT_ALL].current, ==, 2);
	cca_allocator_free_block(f.alloc, ten, false);
	cca_allocator_free_block(f.alloc, front, false);
	cca_allocator_free_block(f.alloc, back, false);
	CcaHandle three = cca_allocator_malloc(f.alloc, 3 * CCA_MIB, 0);
	g_assert_cmpuint(addr_of(&f, three), ==, ten_addr);
	fixture_teardown(&f);
}

static void
test_free_merges_neighbours(void)
{
	Fixture f;
	fixture_setup(&f, NULL, 0);
	CcaHandle a = cca_allocator_malloc(f.alloc, 2 * CCA_MIB, 0);
	CcaHandle b = cca_allocator_malloc(f.alloc, 2 * CCA_MIB, 0);
	g_assert_cmpint(stats(&f)->inactive_split[CCA_STAT_ALL].current, ==, 1);
	cca_allocator_free_block(f.alloc, a, false);
	g_assert_cmpint(stats(&f)->inactive_split[CCA_STAT_ALL].current, ==, 2);
	cca_allocator_free_block(f.alloc, b, false);
	g_assert_cmpint(stats(&f)->inactive_split[CCA_STAT_ALL].current, ==, 0);
	g_assert_cmpint(stats(&f)->inactive_split_bytes[CCA_STAT_ALL].current, ==, 0);
	fixture_teardown(&f);
}

static void
test_empty_cache_releases_large_then_small(void)
{
	Fixture f;
	fixture_setup(&f, NULL, 0);
	CcaHandle s = cca_allocator_malloc(f.alloc, 100, 0);
	CcaHandle l = cca_allocator_malloc(f.alloc, 5 * CCA_MIB, 0);
	cca_allocator_free_block(f.alloc, s, false);
	cca_allocator_free_block(f.alloc, l, false);
	guint before = f.events->len;
	cca_allocator_empty_cache(f.alloc);
	g_assert_cmpuint(f.events->len, ==, before + 2);
	g_assert_cmpuint(event_at(&f, before)->size, ==, 20 * CCA_MIB);
	g_assert_cmpuint(event_at(&f, before + 1)->size, ==, 2 * CCA_MIB);
	g_assert_cmpint(stats(&f)->num_sync_all_streams, ==, 1);
	g_assert_cmpint(stats(&f)->reserved_bytes[CCA_STAT_ALL].current, ==, 0);
	fixture_teardown(&f);
}

/* ~MemPool: the pool's cached segments go, small first then large; the
 * default pool's stay. */
static void
test_mempool_release_frees_its_own_small_first(void)
{
	Fixture f;
	fixture_setup(&f, NULL, 0);
	const int64_t id[2] = {0, 1};
	int k = cca_allocator_mempool(f.alloc, id);
	g_assert_cmpint(k, >, 0);
	CcaHandle d = cca_allocator_malloc(f.alloc, 5 * CCA_MIB, 0);
	CcaHandle l = cca_allocator_malloc_in(f.alloc, 5 * CCA_MIB, 0, (uint32_t)k);
	CcaHandle s = cca_allocator_malloc_in(f.alloc, 100, 0, (uint32_t)k);
	cca_allocator_free_block(f.alloc, d, false);
	cca_allocator_free_block(f.alloc, l, false);
	cca_allocator_free_block(f.alloc, s, false);
	guint before = f.events->len;
	cca_allocator_mempool_release(f.alloc, (uint32_t)k);
	g_assert_cmpuint(f.events->len, ==, before + 2);
	g_assert_cmpuint(event_at(&f, before)->size, ==, 2 * CCA_MIB);
	g_assert_cmpuint(event_at(&f, before + 1)->size, ==, 20 * CCA_MIB);
	g_assert_cmpint(stats(&f)->num_sync_all_streams, ==, 1);
	g_assert_cmpint(stats(&f)->reserved_bytes[CCA_STAT_ALL].current, ==, 20 * CCA_MIB);
	fixture_teardown(&f);
}

/* What empty_cache() would release, in its order: large, then small. */
static void
test_cached_segments_in_empty_cache_order(void)
{
	Fixture f;
	fixture_setup(&f, NULL, 0);
	CcaHandle s = cca_allocator_malloc(f.alloc, 100, 0);
	CcaHandle l = cca_allocator_malloc(f.alloc, 5 * CCA_MIB, 0);
	uint64_t small = addr_of(&f, s), large = addr_of(&f, l);
	cca_allocator_free_block(f.alloc, s, false);
	cca_allocator_free_block(f.alloc, l, false);
	g_autoptr(GArray) would = cca_allocator_cached_segments(f.alloc);
	g_assert_cmpuint(would->len, ==, 2);
	g_assert_cmpuint(g_array_index(would, uint64_t, 0), ==, large);
	g_assert_cmpuint(g_array_index(would, uint64_t, 1), ==, small);
	fixture_teardown(&f);
}

/* Releasing named segments: each must be a whole cached segment, named
 * once; else nothing happens. */
static void
test_release_segments_whole_and_once(void)
{
	Fixture f;
	fixture_setup(&f, NULL, 0);
	CcaHandle a = cca_allocator_malloc(f.alloc, 100, 0);
	CcaHandle b = cca_allocator_malloc(f.alloc, 100, 0); /* same 2 MiB segment */
	CcaHandle l = cca_allocator_malloc(f.alloc, 5 * CCA_MIB, 0);
	uint64_t small = addr_of(&f, a), large = addr_of(&f, l);
	cca_allocator_free_block(f.alloc, a, false);
	cca_allocator_free_block(f.alloc, l, false);
	uint64_t both[2] = {small, large}, twice[2] = {large, large};
	guint before = f.events->len;
	g_assert_false(cca_allocator_release_segments(f.alloc, both, 2)); /* b lives in small */
	g_assert_false(cca_allocator_release_segments(f.alloc, twice, 2));
	g_assert_cmpuint(f.events->len, ==, before);
	g_assert_cmpint(stats(&f)->num_sync_all_streams, ==, 0);
	g_assert_true(cca_allocator_release_segments(f.alloc, &large, 1));
	g_assert_cmpuint(f.events->len, ==, before + 1);
	g_assert_cmpuint(event_at(&f, before)->addr, ==, large);
	cca_allocator_free_block(f.alloc, b, false);
	fixture_teardown(&f);
}

/* A request to a private pool (a capture underway) does not release every
 * cached block and retry: it fails where a default-pool request retries. */
static void
test_capture_skips_release_all_retry(void)
{
	Fixture f;
	fixture_setup(&f, NULL, 30.0 * CCA_MIB / (double)CCA_H200_TOTAL_MEMORY);
	const int64_t id[2] = {1, 0};
	int k = cca_allocator_mempool(f.alloc, id);
	CcaHandle d = cca_allocator_malloc(f.alloc, 20 * CCA_MIB, 0);
	cca_allocator_free_block(f.alloc, d, false); /* 20 MiB cached in the default pool */
	g_assert_true(cca_allocator_malloc_in(f.alloc, 20 * CCA_MIB, 0, (uint32_t)k) == CCA_NIL);
	g_assert_cmpint(stats(&f)->num_alloc_retries, ==, 0);
	g_assert_cmpint(stats(&f)->num_ooms, ==, 1);
	CcaHandle h = cca_allocator_malloc(f.alloc, 22 * CCA_MIB, 0);
	g_assert_true(h != CCA_NIL);
	g_assert_cmpint(stats(&f)->num_alloc_retries, ==, 1);
	cca_allocator_free_block(f.alloc, h, false);
	fixture_teardown(&f);
}

static void
test_max_split_size_oversize_rules(void)
{
	/* H200: max_split_size_mb:100 */
	Fixture f;
	fixture_setup(&f, "max_split_size_mb:100", 0);
	CcaHandle a = cca_allocator_malloc(f.alloc, 150 * CCA_MIB, 0);
	uint64_t seg = addr_of(&f, a);
	cca_allocator_free_block(f.alloc, a, false);
	CcaHandle b = cca_allocator_malloc(f.alloc, 135 * CCA_MIB, 0);
	g_assert_cmpuint(addr_of(&f, b), ==, seg); /* 150 < 135 + 20: reused, whole */
	cca_allocator_free_block(f.alloc, b, false);
	CcaHandle c = cca_allocator_malloc(f.alloc, 125 * CCA_MIB, 0);
	g_assert_cmpuint(addr_of(&f, c), !=, seg); /* 150 >= 125 + 20: new segment */
	cca_allocator_free_block(f.alloc, c, false);
	CcaHandle d = cca_allocator_malloc(f.alloc, 60 * CCA_MIB, 0);
	g_assert_cmpint(stats(&f)->segment[CCA_STAT_ALL].current, ==, 3);
	g_assert_cmpint(stats(&f)->oversize_allocations.allocated, ==, 3);
	g_assert_cmpint(stats(&f)->oversize_allocations.peak, ==, 1);
	g_assert_cmpint(stats(&f)->oversize_segments.allocated, ==, 2);
	g_assert_cmpint(stats(&f)->oversize_segments.current, ==, 2);
	g_assert_cmpint(stats(&f)->max_split_size, ==, 100 * CCA_MIB);
	g_assert_cmpint(stats(&f)->num_alloc_retries, ==, 0);
	(void)d;
	fixture_teardown(&f);
}

static void
test_memory_fraction_cascade(void)
{
	/* H200: fraction = 1 GiB / total; 600 MiB kept, 300 MiB freed, 350
	 * MiB (release + retry), then 2000 MiB (OOM). */
	Fixture f;
	fixture_setup(&f, NULL, (double)(1024 * CCA_MIB) / (double)CCA_H200_TOTAL_MEMORY);
	cca_allocator_malloc(f.alloc, 600 * CCA_MIB, 0);
	CcaHandle b = cca_allocator_malloc(f.alloc, 300 * CCA_MIB, 0);
	cca_allocator_free_block(f.alloc, b, false);
	CcaHandle c = cca_allocator_malloc(f.alloc, 350 * CCA_MIB, 0);
	g_assert_cmpuint(c, !=, CCA_NIL);
	cca_allocator_free_block(f.alloc, c, false);
	CcaHandle d = cca_allocator_malloc(f.alloc, 2000 * CCA_MIB, 0);
	g_assert_cmpuint(d, ==, CCA_NIL);
	const CcaEvent *last = event_at(&f, f.events->len - 1);
	g_assert_cmpuint(last->action, ==, CCA_ACTION_OOM);
	g_assert_cmpuint(last->size, ==, 2097152000);
	g_assert_cmpint(stats(&f)->num_alloc_retries, ==, 2);
	g_assert_cmpint(stats(&f)->num_sync_all_streams, ==, 2);
	g_assert_cmpint(stats(&f)->num_ooms, ==, 1);
	g_assert_cmpint(stats(&f)->num_device_alloc, ==, 3);
	g_assert_cmpint(stats(&f)->num_device_free, ==, 2);
	fixture_teardown(&f);
}

static void
test_expandable_segments_map_pages(void)
{
	/* H200: expandable_segments:True: 1000 B, 5 MiB, 3 × 16 MiB */
	Fixture f;
	fixture_setup(&f, "expandable_segments:True", 0);
	CcaHandle h[5];
	h[0] = cca_allocator_malloc(f.alloc, 1000, 0);
	h[1] = cca_allocator_malloc(f.alloc, 5 * CCA_MIB, 0);
	uint64_t base = addr_of(&f, h[1]);
	h[2] = cca_allocator_malloc(f.alloc, 16 * CCA_MIB, 0);
	h[3] = cca_allocator_malloc(f.alloc, 16 * CCA_MIB, 0);
	h[4] = cca_allocator_malloc(f.alloc, 16 * CCA_MIB, 0);
	g_assert_cmpuint(addr_of(&f, h[2]) - base, ==, 5242880);
	g_assert_cmpuint(addr_of(&f, h[3]) - base, ==, 22020096);
	g_assert_cmpuint(addr_of(&f, h[4]) - base, ==, 38797312);
	for (int i = 0; i < 5; i++)
		cca_allocator_free_block(f.alloc, h[i], false);
	cca_allocator_empty_cache(f.alloc);
	g_assert_cmpint(stats(&f)->num_device_alloc, ==, 4);
	g_assert_cmpint(stats(&f)->num_device_free, ==, 2);
	g_assert_cmpint(stats(&f)->reserved_bytes[CCA_STAT_ALL].peak, ==, 65011712);
	g_assert_cmpint(stats(&f)->segment[CCA_STAT_ALL].peak, ==, 0);
	const CcaEvent *unmap = event_at(&f, f.events->len - 2);
	g_assert_cmpuint(unmap->action, ==, CCA_ACTION_SEGMENT_UNMAP);
	g_assert_cmpuint(unmap->size, ==, 62914560);
	fixture_teardown(&f);
}

static void
test_deferred_free_stays_active(void)
{
	Fixture f;
	fixture_setup(&f, NULL, 0);
	CcaHandle a = cca_allocator_malloc(f.alloc, 4096, 0);
	cca_allocator_free_block(f.alloc, a, true);
	g_assert_true(cca_allocator_is_pending(f.alloc, a));
	g_assert_cmpint(stats(&f)->allocated_bytes[CCA_STAT_ALL].current, ==, 0);
	g_assert_cmpint(stats(&f)->active_bytes[CCA_STAT_ALL].current, ==, 4096);
	cca_allocator_complete_free(f.alloc, a);
	g_assert_cmpint(stats(&f)->active_bytes[CCA_STAT_ALL].current, ==, 0);
	fixture_teardown(&f);
}

/* The H200's capped run (1 GiB): 600 MiB kept, 300 MiB used on another
 * stream and freed, its event outstanding.  A 200 MiB request the 300 MiB
 * block could serve goes to the cascade while the block waits: the cap
 * refuses 200 MiB more, release_cached_blocks completes the event and
 * releases the now whole 300 MiB segment, and the retry makes a new
 * segment (there is no second lookup). */
static void
test_pending_block_goes_to_synchronisation(void)
{
	const uint64_t MB = CCA_MIB;
	Fixture f;
	fixture_setup(&f, NULL, 1024.0 * (double)MB / (double)CCA_H200_TOTAL_MEMORY);
	cca_allocator_malloc(f.alloc, 600 * MB, 0);
	CcaHandle b = cca_allocator_malloc(f.alloc, 300 * MB, 0);
	cca_allocator_free_block(f.alloc, b, true);
	g_assert_true(cca_allocator_would_synchronize_in(f.alloc, 200 * MB, 0, 0));
	guint first = f.events->len;
	g_assert_cmpuint(cca_allocator_malloc(f.alloc, 200 * MB, 0), !=, CCA_NIL);
	g_assert_cmpuint(event_at(&f, first)->action, ==, CCA_ACTION_FREE_COMPLETED);
	g_assert_cmpuint(event_at(&f, first)->size, ==, 314572800);
	g_assert_cmpuint(event_at(&f, first + 1)->action, ==, CCA_ACTION_SEGMENT_FREE);
	g_assert_cmpuint(event_at(&f, first + 1)->size, ==, 314572800);
	g_assert_cmpuint(event_at(&f, first + 2)->action, ==, CCA_ACTION_SEGMENT_ALLOC);
	g_assert_cmpuint(event_at(&f, first + 2)->size, ==, 209715200);
	g_assert_cmpint(stats(&f)->num_sync_all_streams, ==, 1);
	g_assert_cmpint(stats(&f)->num_alloc_retries, ==, 1);
	fixture_teardown(&f);
}

/* The same state with the event completed first (process_events): the
 * 300 MiB block serves the request, nothing synchronises. */
static void
test_completed_block_serves_request(void)
{
	const uint64_t MB = CCA_MIB;
	Fixture f;
	fixture_setup(&f, NULL, 1024.0 * (double)MB / (double)CCA_H200_TOTAL_MEMORY);
	cca_allocator_malloc(f.alloc, 600 * MB, 0);
	CcaHandle b = cca_allocator_malloc(f.alloc, 300 * MB, 0);
	cca_allocator_free_block(f.alloc, b, true);
	cca_allocator_complete_free(f.alloc, b);
	g_assert_false(cca_allocator_would_synchronize_in(f.alloc, 200 * MB, 0, 0));
	guint first = f.events->len;
	g_assert_cmpuint(cca_allocator_malloc(f.alloc, 200 * MB, 0), !=, CCA_NIL);
	g_assert_cmpuint(event_at(&f, first)->action, ==, CCA_ACTION_ALLOC);
	g_assert_cmpint(stats(&f)->num_sync_all_streams, ==, 0);
	fixture_teardown(&f);
}

/* A synchronisation completes the pending frees in the order the
 * recording showed (cca_allocator_pending_first), not the order of the
 * frees. */
static void
test_synchronisation_order(void)
{
	Fixture f;
	fixture_setup(&f, NULL, 0);
	CcaHandle a = cca_allocator_malloc(f.alloc, 4096, 0);
	CcaHandle b = cca_allocator_malloc(f.alloc, 8192, 7);
	cca_allocator_free_block(f.alloc, a, true);
	cca_allocator_free_block(f.alloc, b, true);
	g_assert_cmpuint(cca_allocator_n_pending(f.alloc), ==, 2);
	cca_allocator_pending_first(f.alloc, b);
	guint first = f.events->len;
	cca_allocator_empty_cache(f.alloc);
	g_assert_cmpuint(event_at(&f, first)->action, ==, CCA_ACTION_FREE_COMPLETED);
	g_assert_cmpuint(event_at(&f, first)->size, ==, 8192);
	g_assert_cmpuint(event_at(&f, first + 1)->action, ==, CCA_ACTION_FREE_COMPLETED);
	g_assert_cmpuint(event_at(&f, first + 1)->size, ==, 4096);
	g_assert_cmpuint(cca_allocator_n_pending(f.alloc), ==, 0);
	fixture_teardown(&f);
}

/* Seeded random request streams: the invariants hold after every step. */
/* A trace that starts mid-run: its unseen prefix is taken to be the
 * allocations of the live blocks it starts with, and nothing else.  Seeding
 * the state those allocations leave gives the counters the allocations
 * themselves give, inactive_split's decreases included (alloc_found_block
 * lowers inactive_split_bytes by each block cut from an already-split
 * tail, and inactive_split when a block takes the whole tail), and counts
 * one num_device_alloc per segment.  Sizes are requests, 0 ends a row. */
static const struct {
	const char *what;
	uint64_t sizes[8];
} seed_prefix_rows[] = {
	{"small: one cut, a free tail", {37888, 0}},
	{"small: several cuts, a free tail", {37888, 512, 4096, 100000, 0}},
	{"small: the last block takes the whole tail", {CCA_MIB, CCA_MIB, 0}},
	{"small: one block, unsplit", {2 * CCA_MIB, 0}},
	{"large: cuts of a 20 MiB segment", {3 * CCA_MIB, 5 * CCA_MIB, 2 * CCA_MIB, 0}},
	{"large: the last block absorbs a remainder under 1 MiB",
	 {6 * CCA_MIB, 6 * CCA_MIB, 7 * CCA_MIB + CCA_MIB / 2, 0}},
	{"small and large interleaved, two small segments",
	 {CCA_MIB, 3 * CCA_MIB, 700000, 512, 900000, 4 * CCA_MIB, 0}},
};

static void
test_seed_prefix_counters(void)
{
	for (gsize r = 0; r < G_N_ELEMENTS(seed_prefix_rows); r++) {
		Fixture ran, seeded;
		fixture_setup(&ran, NULL, 0);
		fixture_setup(&seeded, NULL, 0);
		for (int i = 0; seed_prefix_rows[r].sizes[i] != 0; i++)
			g_assert_cmpuint(
				cca_allocator_malloc(ran.alloc, seed_prefix_rows[r].sizes[i], 0),
				!=, CCA_NIL);
		GArray *state = cca_allocator_state(ran.alloc);
		for (guint i = 0; i < state->len; i++) {
			const CcaStateSegment *s = &g_array_index(state, CcaStateSegment, i);
			cca_allocator_seed_segment(seeded.alloc, s->address, s->total_size,
						   s->stream, s->is_small);
		}
		for (guint i = 0; i < state->len; i++) {
			const CcaStateSegment *s = &g_array_index(state, CcaStateSegment, i);
			for (size_t k = 0; k < s->n_blocks; k++) {
				const CcaStateBlock *sb = &s->blocks[k];
				if (sb->state != CCA_BLOCK_ACTIVE_ALLOCATED)
					continue;
				CcaHandle h = cca_allocator_seed_block(seeded.alloc, sb->address,
								       sb->size, sb->requested_size,
								       false);
				g_assert_cmpuint(h, !=, CCA_NIL);
			}
		}
		cca_allocator_state_free(state);
		cca_allocator_seed_finish(seeded.alloc);
		const CcaStats *want = stats(&ran), *got = stats(&seeded);
		g_test_message("%s", seed_prefix_rows[r].what);
		for (int t = 0; t < CCA_STAT_TYPES; t++) {
			const CcaStat *w[] = {&want->inactive_split[t],
					      &want->inactive_split_bytes[t], &want->allocation[t],
					      &want->segment[t]};
			const CcaStat *g[] = {&got->inactive_split[t],
					      &got->inactive_split_bytes[t], &got->allocation[t],
					      &got->segment[t]};
			for (gsize k = 0; k < G_N_ELEMENTS(w); k++) {
				g_assert_cmpint(g[k]->current, ==, w[k]->current);
				g_assert_cmpint(g[k]->allocated, ==, w[k]->allocated);
				g_assert_cmpint(g[k]->freed, ==, w[k]->freed);
			}
		}
		g_assert_cmpint(got->num_device_alloc, ==, want->num_device_alloc);
		fixture_teardown(&ran);
		fixture_teardown(&seeded);
	}
}

/* A segment with a free block before a live one had frees before the
 * trace: how its splits came and went is unknown, and the seed adds no
 * decrease for it (only what its state shows). */
static void
test_seed_prefix_with_frees_unknown(void)
{
	Fixture f;
	fixture_setup(&f, NULL, 0);
	const uint64_t base = 0x7f0000000000ull;
	cca_allocator_seed_segment(f.alloc, base, 2 * CCA_MIB, 0, true);
	g_assert_cmpuint(cca_allocator_seed_block(f.alloc, base, 512, 512, false), !=, CCA_NIL);
	g_assert_cmpuint(cca_allocator_seed_block(f.alloc, base + 4096, 512, 512, false), !=,
			 CCA_NIL);
	cca_allocator_seed_finish(f.alloc);
	const CcaStat *isb = &stats(&f)->inactive_split_bytes[CCA_STAT_SMALL_POOL];
	g_assert_cmpint(isb->current, ==, 2 * CCA_MIB - 1024);
	g_assert_cmpint(isb->allocated, ==, isb->current);
	g_assert_cmpint(isb->freed, ==, 0);
	g_assert_cmpint(stats(&f)->num_device_alloc, ==, 1);
	fixture_teardown(&f);
}

static void
test_stress_random_invariants(void)
{
	const char *confs[] = {NULL, "max_split_size_mb:64", "expandable_segments:True",
			       "roundup_power2_divisions:4",
			       "garbage_collection_threshold:0.6,max_split_size_mb:256"};
	for (guint c = 0; c < G_N_ELEMENTS(confs); c++) {
		guint32 seed = g_test_rand_int();
		g_test_message("stress %s seed %u", confs[c] ? confs[c] : "default", seed);
		GRand *rand = g_rand_new_with_seed(seed);
		Fixture f;
		fixture_setup(&f, confs[c], 0.004);
		GArray *live = g_array_new(FALSE, FALSE, sizeof(CcaHandle));
		GString *why = g_string_new(NULL);
		for (int step = 0; step < 3000; step++) {
			int op = g_rand_int_range(rand, 0, 10);
			if (op < 5 || live->len == 0) {
				uint64_t size = (uint64_t)g_rand_int_range(rand, 1, 1 << 20) *
						(uint64_t)g_rand_int_range(rand, 1, 48);
				uint64_t stream = g_rand_int_range(rand, 0, 3) == 0 ? 7 : 0;
				CcaHandle h = cca_allocator_malloc(f.alloc, size, stream);
				if (h != CCA_NIL)
					g_array_append_val(live, h);
			} else if (op < 9) {
				guint i = g_rand_int_range(rand, 0, live->len);
				CcaHandle h = g_array_index(live, CcaHandle, i);
				g_array_remove_index_fast(live, i);
				cca_allocator_free_block(f.alloc, h,
							 g_rand_int_range(rand, 0, 8) == 0);
				if (cca_allocator_is_pending(f.alloc, h) &&
				    g_rand_int_range(rand, 0, 2) == 0)
					cca_allocator_complete_free(f.alloc, h);
			} else {
				cca_allocator_empty_cache(f.alloc);
			}
			g_string_truncate(why, 0);
			if (!cca_allocator_check_invariants(f.alloc, why))
				g_error("seed %u step %d: %s", seed, step, why->str);
		}
		g_string_free(why, TRUE);
		g_array_free(live, TRUE);
		g_rand_free(rand);
		fixture_teardown(&f);
	}
}

/* A free block taken over an equal one of its own segment and a third in
 * another segment went by address: under a placement with the other
 * segment below, the third is taken (shadow.h follows that placement). */
static void
test_tie_past_own_segment(void)
{
	CcaSettings settings;
	cca_settings_init(&settings);
	CcaSimDeviceConfig dc = {.total_memory = CCA_H200_TOTAL_MEMORY,
				 .address_model = CCA_ADDRESS_ASCENDING};
	uint32_t followed = 1u << CCA_ADDRESS_ASCENDING | 1u << CCA_ADDRESS_DESCENDING |
			    1u << CCA_ADDRESS_DRIVER;
	CcaDevice *dev = cca_shadow_new(cca_simdevice_new(&dc), followed, &dc);
	CcaLimits limits = {0};
	CcaAllocator *a = cca_allocator_new(&settings, &limits, dev, NULL, NULL);
	cca_allocator_count_address_ties(a, true);
	cca_allocator_on_address_tie(a, cca_shadow_tie, dev);
	const uint64_t four = 4 * CCA_MIB;
	CcaHandle seg_a[5]; /* one 20 MiB segment: x1 y1 x2 y2 z */
	for (int i = 0; i < 5; i++)
		seg_a[i] = cca_allocator_malloc(a, four, 0);
	CcaHandle w = cca_allocator_malloc(a, four, 0); /* a second segment ... */
	cca_allocator_malloc(a, 16 * CCA_MIB, 0);	/* ... filled */
	uint64_t first = cca_allocator_block_address(a, seg_a[0]);
	cca_allocator_free_block(a, w, false);
	cca_allocator_free_block(a, seg_a[0], false);
	cca_allocator_free_block(a, seg_a[2], false);
	g_assert_cmpuint(cca_allocator_address_ties(a), ==, 0);
	CcaHandle taken = cca_allocator_malloc(a, four, 0);
	g_assert_cmpuint(cca_allocator_block_address(a, taken), ==, first);
	g_assert_cmpuint(cca_allocator_address_ties(a), ==, 1);
	/* descending puts the second segment below the first, and so does the
	 * driver (a new region below the context's) */
	g_assert_cmphex(cca_shadow_same(dev), ==, 1u << CCA_ADDRESS_ASCENDING);
	cca_allocator_free(a);
	cca_device_free(dev);
	cca_settings_clear(&settings);
}

int
main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	CCA_TEST_ADD_ROWS("/allocator", round_cases, name, test_round_size);
	g_test_add_func("/allocator/round-size-one-division-by-version",
			test_round_size_one_division_by_version);
	g_test_add_func("/allocator/fraction-one-by-version", test_fraction_one_by_version);
	g_test_add_func("/allocator/small-pool-packs-one-segment",
			test_small_pool_packs_one_segment);
	g_test_add_func("/allocator/large-segment-sizes", test_large_segment_sizes);
	g_test_add_func("/allocator/mempool-release-frees-its-own-small-first",
			test_mempool_release_frees_its_own_small_first);
	g_test_add_func("/allocator/cached-segments-in-empty-cache-order",
			test_cached_segments_in_empty_cache_order);
	g_test_add_func("/allocator/release-segments-whole-and-once",
			test_release_segments_whole_and_once);
	g_test_add_func("/allocator/capture-skips-release-all-retry",
			test_capture_skips_release_all_retry);
	g_test_add_func("/allocator/best-fit-prefers-smallest-block",
			test_best_fit_prefers_smallest_block);
	g_test_add_func("/allocator/free-merges-neighbours", test_free_merges_neighbours);
	g_test_add_func("/allocator/empty-cache-releases-large-then-small",
			test_empty_cache_releases_large_then_small);
	g_test_add_func("/allocator/max-split-size-oversize-rules",
			test_max_split_size_oversize_rules);
	g_test_add_func("/allocator/memory-fraction-cascade", test_memory_fraction_cascade);
	g_test_add_func("/allocator/expandable-segments-map-pages",
			test_expandable_segments_map_pages);
	g_test_add_func("/allocator/deferred-free-stays-active", test_deferred_free_stays_active);
	g_test_add_func("/allocator/seed-prefix-counters", test_seed_prefix_counters);
	g_test_add_func("/allocator/seed-prefix-with-frees-unknown",
			test_seed_prefix_with_frees_unknown);
	g_test_add_func("/allocator/pending-block-goes-to-synchronisation",
			test_pending_block_goes_to_synchronisation);
	g_test_add_func("/allocator/completed-block-serves-request",
			test_completed_block_serves_request);
	g_test_add_func("/allocator/synchronisation-order", test_synchronisation_order);
	g_test_add_func("/allocator/stress-random-invariants", test_stress_random_invariants);
	g_test_add_func("/allocator/tie-past-own-segment", test_tie_past_own_segment);
	return g_test_run();
}
