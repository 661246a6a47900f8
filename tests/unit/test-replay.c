/* test-replay.c - the model against PyTorch 2.11 itself.
 *
 * Every W.C in traces/pytorch-2.11 was recorded by torch 2.11 on an H200;
 * W.C.json holds what torch.cuda.memory_stats() reported at the end of the
 * same run, and the cap the run had.  /replay/recorded/W.C replays the
 * trace under its recorded settings with --check (every trace entry and
 * the final segments) and compares all 122 memory_stats keys.
 * /replay/whatif/W.C replays W.default under settings C with the segment
 * addresses of whatif/replay.W.C (the same requests replayed through the
 * real allocator) and compares the reserved-memory figures of
 * whatif/replay.W.C.json.
 * /replay/patterns/rscap.C does what /replay/recorded does for the
 * record_stream traces of traces/patterns-2.11 (two streams, each tensor
 * used on the other; rscap.cap ran out of memory under its cap).
 */
#include "config.h"

#include <glib.h>
#include <string.h>

#include "allocator.h"
#include "simdevice.h"
#include "plan.h"
#include "replay.h"
#include "settings.h"
#include "snapshot.h"
#include "event_cursor.h"
#include "snapshot_load.h"
#include "stats.h"
#include "testutil.h"


/* The run's memory fraction: min(1, cap / total), as capture.py set it. */
typedef struct {
	const char *json;
	const char *const *only; /* NULL: every key */
	GString *diffs;
	guint compared;
} Compare;

static gboolean
key_selected(const Compare *c, const char *name)
{
	if (!c->only)
		return TRUE;
	for (const char *const *p = c->only; *p; p++)
		if (g_str_has_prefix(name, *p))
			return TRUE;
	return FALSE;
}

static void
compare_one(const char *name, int64_t value, void *data)
{
	Compare *c = data;
	if (!key_selected(c, name))
		return;
	gint64 expected;
	g_assert_true(cca_test_json_int(c->json, name, &expected));
	c->compared++;
	if (expected != value)
		g_string_append_printf(
			c->diffs, " %s: torch %" G_GINT64_FORMAT " model %" G_GINT64_FORMAT ";",
			name, expected, value);
}

static void
assert_stats_equal(const CcaStats *stats, const char *json, const char *const *only)
{
	Compare c = {json, only, g_string_new(NULL), 0};
	cca_stats_foreach(stats, compare_one, &c);
	if (c.diffs->len)
		g_test_message("memory_stats differ:%s", c.diffs->str);
	g_assert_cmpstr(c.diffs->str, ==, "");
	g_assert_cmpuint(c.compared, >, 0);
	g_string_free(c.diffs, TRUE);
}

static void
test_recorded(gconstpointer data)
{
	const CcaTestRun *tc = data;
	g_autofree char *json = cca_test_read_text(tc->json);
	GError *error = NULL;
	g_autoptr(CcaSnapshot) snap = cca_snapshot_load(tc->trace, &error);
	g_assert_no_error(error);
	CcaReplayOptions opt;
	cca_replay_options_init(&opt);
	opt.memory_fraction = cca_test_memory_fraction(json);
	CcaReplayResult res;
	cca_test_replay_checked(snap, &opt, &res);
	assert_stats_equal(&res.stats, json, NULL);
	cca_replay_result_clear(&res);
}

static const char *const reserved_keys[] = {
	"reserved_bytes.", "segment.", "num_device_alloc", "num_device_free", "num_alloc_retries",
	"num_ooms",	   NULL,
};

/* Segment bases the model chose, relative to its first segment. */
static void
collect_segment(void *data, uint64_t cause, const CcaEvent *trace, const CcaEvent *ev)
{
	if (ev->action == CCA_ACTION_SEGMENT_ALLOC)
		g_array_append_val((GArray *)data, ev->addr);
}

/* How many of the first segment bases of TRACE (relative to its first)
 * equal MODEL's (relative to its first), in order. */
static guint
same_relative_bases(const CcaSnapshot *trace, const GArray *model, guint *total)
{
	g_autoptr(CcaEventCursor) c = cca_event_cursor_new(trace, 0);
	CcaEvent ev;
	guint k = 0, same = 0;
	uint64_t first = 0;
	while (cca_event_cursor_next(c, &ev, NULL)) {
		if (ev.action != CCA_ACTION_SEGMENT_ALLOC)
			continue;
		if (k == 0)
			first = ev.addr;
		if (k < model->len && ev.addr - first == g_array_index(model, uint64_t, k) -
								 g_array_index(model, uint64_t, 0))
			same++;
		k++;
	}
	*total = k;
	return same;
}

/* A what-if TC ready to replay: its conf parsed, its default trace, the
 * recorded what-if, and options that replay the default trace under the
 * conf and the recorded memory fraction. */
typedef struct {
	char *json; /* the recorded what-if's figures */
	CcaSettings settings;
	CcaSnapshot *snap;     /* W.default */
	CcaSnapshot *recorded; /* the what-if as recorded */
	CcaReplayOptions opt;
} Whatif;

static void
whatif_setup(Whatif *w, const CcaTestRun *tc)
{
	w->json = cca_test_read_text(tc->json);
	g_autofree char *conf = cca_test_json_string(w->json, "conf");
	g_assert_nonnull(conf);
	cca_settings_init(&w->settings);
	GError *error = NULL;
	g_assert_true(cca_settings_parse(&w->settings, conf, &error));
	w->snap = cca_snapshot_load(tc->default_trace, &error);
	g_assert_no_error(error);
	w->recorded = cca_snapshot_load(tc->trace, &error);
	g_assert_no_error(error);
	cca_replay_options_init(&w->opt);
	w->opt.settings = &w->settings;
	w->opt.memory_fraction = cca_test_memory_fraction(w->json);
}

/* Replays W's default trace with W's options into RES. */
static void
whatif_replay(Whatif *w, CcaReplayResult *res)
{
	GError *error = NULL;
	g_assert_true(cca_replay_run(w->snap, &w->opt, res, &error));
	g_assert_no_error(error);
}

/* RES, W's replay, must give the reserved-memory figures of the recorded
 * what-if; clears RES and W. */
static void
whatif_check_and_clear(Whatif *w, CcaReplayResult *res)
{
	assert_stats_equal(&res->stats, w->json, reserved_keys);
	cca_replay_result_clear(res);
	cca_settings_clear(&w->settings);
	g_clear_pointer(&w->snap, cca_snapshot_free);
	g_clear_pointer(&w->recorded, cca_snapshot_free);
	g_clear_pointer(&w->json, g_free);
}

/* Without the answer: the driver address model must place the what-if's
 * segments as the real what-if run did, and so give its figures. */
static void
test_whatif_driver(gconstpointer data)
{
	const CcaTestRun *tc = data;
	Whatif w;
	whatif_setup(&w, tc);
	w.opt.force_whatif = TRUE;
	w.opt.address_model = CCA_ADDRESS_DRIVER;
	GArray *bases = g_array_new(FALSE, FALSE, sizeof(uint64_t));
	w.opt.on_model_event = collect_segment;
	w.opt.on_model_event_data = bases;
	CcaReplayResult res;
	whatif_replay(&w, &res);
	guint total, same = same_relative_bases(w.recorded, bases, &total);
	g_test_message("%s: %u of %u segment bases at the real run's relative address", tc->name,
		       same, total);
	g_array_free(bases, TRUE);
	whatif_check_and_clear(&w, &res);
}

/* With the answer: the segment addresses of the recorded what-if. */
static void
test_whatif(gconstpointer data)
{
	Whatif w;
	whatif_setup(&w, data);
	w.opt.addresses_from = w.recorded;
	CcaReplayResult res;
	whatif_replay(&w, &res);
	whatif_check_and_clear(&w, &res);
}

/* Appends device SRC's segments and blocks of FROM to INTO as device D. */
static void
append_segments(CcaSnapshot *into, const CcaSnapshot *from, int d)
{
	for (guint i = 0; i < from->segments->len; i++) {
		CcaSnapSegment seg = g_array_index(from->segments, CcaSnapSegment, i);
		const CcaSnapBlock *blocks =
			&g_array_index(from->blocks, CcaSnapBlock, seg.first_block);
		seg.device = d;
		seg.first_block = into->blocks->len;
		g_array_append_vals(into->blocks, blocks, seg.n_blocks);
		g_array_append_val(into->segments, seg);
	}
}

/* A hand-made two-device snapshot: device 0 runs seedfrag, device 1
 * dyninfer (both recorded with default settings).  Each device replays
 * against its own device and matches its own run. */
static void
test_two_devices(void)
{
	const char *workloads[2] = {"seedfrag", "dyninfer"};
	CcaSnapshot *parts[2];
	g_autoptr(CcaSnapshot) both = cca_snapshot_new();
	both->source = g_strdup("two-devices");
	both->n_devices = 2;
	both->events = g_new0(GArray *, 2);
	both->n_events = g_new0(uint64_t, 2);
	GError *error = NULL;
	for (int d = 0; d < 2; d++) {
		g_autofree char *name =
			g_strdup_printf("pytorch-2.11/%s.default.pickle.xz", workloads[d]);
		g_autofree char *path = cca_test_trace_path(name);
		parts[d] = cca_snapshot_load(path, &error);
		g_assert_no_error(error);
		both->events[d] = g_array_ref(parts[d]->events[0]);
		both->n_events[d] = parts[d]->n_events[0];
		append_segments(both, parts[d], d);
	}
	for (int d = 0; d < 2; d++) {
		g_autofree char *name =
			g_strdup_printf("pytorch-2.11/%s.default.json", workloads[d]);
		g_autofree char *json_path = cca_test_trace_path(name);
		g_autofree char *json = cca_test_read_text(json_path);
		CcaReplayOptions opt;
		cca_replay_options_init(&opt);
		opt.device = d;
		CcaReplayResult res;
		cca_test_replay_checked(both, &opt, &res);
		assert_stats_equal(&res.stats, json, NULL);
		cca_replay_result_clear(&res);
		cca_snapshot_free(parts[d]);
	}
}

/* ------------------------------------------------ the H200 default run */

static void
push(GArray *events, CcaAction action, uint64_t addr, uint64_t size)
{
	cca_test_push_event(events, action, addr, size, CCA_TIME_NONE);
}

static void
push_free(GArray *events, uint64_t addr, uint64_t size)
{
	push(events, CCA_ACTION_FREE_REQUESTED, addr, size);
	push(events, CCA_ACTION_FREE_COMPLETED, addr, size);
}

/* The default-settings run of doc/allocator-model.md, "Measured on an H200",
 * entry for entry (segment
 * addresses made up; the driver's are not reproducible): ten requests,
 * their frees, a 3 MiB request and free, then torch.cuda.empty_cache(). */
static CcaSnapshot *
spec14_default_trace(void)
{
	const uint64_t MB = CCA_MIB, S0 = UINT64_C(0x7f0000000000), S1 = S0 + 64 * MB,
		       S2 = S0 + 128 * MB, S3 = S0 + 192 * MB, S4 = S0 + 256 * MB;
	GArray *ev = g_array_new(FALSE, FALSE, sizeof(CcaEvent));
	push(ev, CCA_ACTION_SEGMENT_ALLOC, S0, 2097152);
	push(ev, CCA_ACTION_ALLOC, S0, 1);
	push(ev, CCA_ACTION_ALLOC, S0 + 512, 512);
	push(ev, CCA_ACTION_ALLOC, S0 + 1024, 513);
	push(ev, CCA_ACTION_ALLOC, S0 + 2048, 1048576);
	push(ev, CCA_ACTION_SEGMENT_ALLOC, S1, 20971520);
	push(ev, CCA_ACTION_ALLOC, S1, 1048577);
	push(ev, CCA_ACTION_ALLOC, S1 + 1049088, 5242880);
	push(ev, CCA_ACTION_ALLOC, S1 + 6291968, 10485759);
	push(ev, CCA_ACTION_SEGMENT_ALLOC, S2, 10485760);
	push(ev, CCA_ACTION_ALLOC, S2, 10485760);
	push(ev, CCA_ACTION_SEGMENT_ALLOC, S3, 12582912);
	push(ev, CCA_ACTION_ALLOC, S3, 11534341);
	push(ev, CCA_ACTION_SEGMENT_ALLOC, S4, 27262976);
	push(ev, CCA_ACTION_ALLOC, S4, 26214400);
	push_free(ev, S0 + 2048, 1048576);
	push_free(ev, S4, 26214400);
	push_free(ev, S3, 11534341);
	push_free(ev, S2, 10485760);
	push_free(ev, S1 + 6291968, 10485759);
	push_free(ev, S1 + 1049088, 5242880);
	push_free(ev, S1, 1048577);
	push_free(ev, S0 + 1024, 513);
	push_free(ev, S0 + 512, 512);
	push_free(ev, S0, 1);
	push(ev, CCA_ACTION_ALLOC, S2, 3145728);
	push_free(ev, S2, 3145728);
	push(ev, CCA_ACTION_SEGMENT_FREE, S2, 10485760);
	push(ev, CCA_ACTION_SEGMENT_FREE, S3, 12582912);
	push(ev, CCA_ACTION_SEGMENT_FREE, S1, 20971520);
	push(ev, CCA_ACTION_SEGMENT_FREE, S4, 27262976);
	push(ev, CCA_ACTION_SEGMENT_FREE, S0, 2097152);
	return cca_test_snapshot_new("spec-14-default", ev);
}

static void
test_spec14_default_run(void)
{
	g_autoptr(CcaSnapshot) snap = spec14_default_trace();
	CcaReplayResult res;
	cca_test_replay_checked(snap, NULL, &res);
	const CcaStats *st = &res.stats;
	g_assert_cmpint(st->allocation[CCA_STAT_ALL].allocated, ==, 11);
	g_assert_cmpint(st->allocation[CCA_STAT_ALL].peak, ==, 10);
	g_assert_cmpint(st->allocated_bytes[CCA_STAT_ALL].peak, ==, 68160000);
	g_assert_cmpint(st->requested_bytes[CCA_STAT_ALL].peak, ==, 66061319);
	g_assert_cmpint(st->reserved_bytes[CCA_STAT_ALL].peak, ==, 73400320);
	g_assert_cmpint(st->segment[CCA_STAT_ALL].allocated, ==, 5);
	g_assert_cmpint(st->segment[CCA_STAT_ALL].peak, ==, 5);
	g_assert_cmpint(st->segment[CCA_STAT_SMALL_POOL].peak, ==, 1);
	g_assert_cmpint(st->segment[CCA_STAT_LARGE_POOL].peak, ==, 4);
	g_assert_cmpint(st->inactive_split[CCA_STAT_ALL].allocated, ==, 3);
	g_assert_cmpint(st->inactive_split[CCA_STAT_ALL].peak, ==, 2);
	g_assert_cmpint(st->inactive_split_bytes[CCA_STAT_ALL].peak, ==, 22017536);
	g_assert_cmpint(st->num_device_alloc, ==, 5);
	g_assert_cmpint(st->num_device_free, ==, 5);
	g_assert_cmpint(st->max_split_size, ==, -1);
	g_assert_cmpint(st->num_alloc_retries, ==, 0);
	g_assert_cmpint(st->num_ooms, ==, 0);
	cca_replay_result_clear(&res);
}

/* The trailing segment_free burst, caused by no allocation, is the
 * program's empty_cache(): one synchronisation, and a what-if replay under
 * other settings calls it at the same place. */
static void
test_empty_cache_recognised(void)
{
	g_autoptr(CcaSnapshot) snap = spec14_default_trace();
	CcaReplayOptions opt;
	cca_replay_options_init(&opt);
	CcaReplayResult res;
	GError *error = NULL;
	g_assert_true(cca_replay_run(snap, &opt, &res, &error));
	g_assert_cmpuint(res.empty_cache_calls, ==, 1);
	g_assert_cmpint(res.stats.num_sync_all_streams, ==, 1);
	cca_replay_result_clear(&res);

	CcaSettings other;
	cca_settings_init(&other);
	g_assert_true(cca_settings_parse(&other, "max_split_size_mb:20", &error));
	opt.settings = &other;
	g_assert_true(cca_replay_run(snap, &opt, &res, &error));
	g_assert_true(res.whatif);
	g_assert_cmpuint(res.empty_cache_calls, ==, 1);
	g_assert_cmpint(res.stats.num_sync_all_streams, ==, 1);
	g_assert_cmpint(res.stats.reserved_bytes[CCA_STAT_ALL].current, ==, 0);
	cca_replay_result_clear(&res);
	cca_settings_clear(&other);
}

/* An OOM the recording did not have (a what-if on a smaller cap) stops
 * the replay where PyTorch would have raised; --keep-going skips the
 * request and goes on. */
static void
test_unexpected_oom(void)
{
	g_autoptr(CcaSnapshot) snap = cca_test_load_trace("seedfrag.default");
	GError *error = NULL;
	CcaReplayOptions opt;
	cca_replay_options_init(&opt);
	opt.memory_fraction = 512.0 * 1048576.0 / (double)CCA_H200_TOTAL_MEMORY; /* a 512 MiB cap */
	CcaReplayResult res;
	g_assert_true(cca_replay_run(snap, &opt, &res, &error));
	g_assert_true(res.stopped_by_oom);
	g_assert_cmpuint(res.unexpected_ooms, ==, 1);
	g_assert_cmpint(res.stats.num_ooms, ==, 1);
	g_assert_cmpuint(res.events, <, snap->n_events[0]);
	g_assert_cmpuint(res.oom_reserved + res.oom_alloc_size, >, res.allowed_maximum);
	uint64_t stopped_at = res.oom_event;
	cca_replay_result_clear(&res);

	opt.keep_going = TRUE;
	g_assert_true(cca_replay_run(snap, &opt, &res, &error));
	g_assert_false(res.stopped_by_oom);
	g_assert_cmpuint(res.oom_event, ==, stopped_at);
	g_assert_cmpuint(res.unexpected_ooms, >=, 1);
	g_assert_cmpint(res.stats.num_ooms, ==, (gint64)res.unexpected_ooms);
	g_assert_cmpuint(res.events, ==, snap->n_events[0]);
	cca_replay_result_clear(&res);
}

/* The three sample snapshots (traces/pytorch-2.11/samples): a MemPool allocation
 * (segment_pool_id (0,1)), a record_stream free, a 10 TiB request the
 * device refused (with the cascade before it), expandable segments, and
 * the one-entry enabled="state" buffer. */
static void
test_sample(gconstpointer data)
{
	g_autofree char *rel = g_strdup_printf("pytorch-2.11/samples/%s", (const char *)data);
	g_autofree char *path = cca_test_trace_path(rel);
	GError *error = NULL;
	g_autoptr(CcaSnapshot) snap = cca_snapshot_load(path, &error);
	g_assert_no_error(error);
	CcaReplayResult res;
	cca_test_replay_checked(snap, NULL, &res);
	g_assert_cmpuint(res.check_compared, ==, snap->n_events[0]);
	cca_replay_result_clear(&res);
}

/* A trace recorded with skip_actions=["free_requested"] has only the
 * completions: each is the free, at once.  The replay keeps its figures. */
static void
test_skipped_free_requested(void)
{
	g_autofree char *path = cca_test_trace_path("pytorch-2.11/bert.default.pickle.xz");
	g_autofree char *json_path = cca_test_trace_path("pytorch-2.11/bert.default.json");
	g_autofree char *json = cca_test_read_text(json_path);
	GError *error = NULL;
	g_autoptr(CcaSnapshot) snap = cca_snapshot_load(path, &error);
	g_assert_no_error(error);
	GArray *events = snap->events[0];
	guint kept = 0;
	for (guint i = 0; i < events->len; i++) {
		CcaEvent ev = g_array_index(events, CcaEvent, i);
		if (ev.action != CCA_ACTION_FREE_REQUESTED)
			g_array_index(events, CcaEvent, kept++) = ev;
	}
	g_array_set_size(events, kept);
	snap->n_events[0] = kept;
	CcaReplayOptions opt;
	cca_replay_options_init(&opt);
	CcaReplayResult res;
	g_assert_true(cca_replay_run(snap, &opt, &res, &error));
	g_assert_cmpuint(res.unknown_frees, ==, 0);
	assert_stats_equal(&res.stats, json, reserved_keys);
	cca_replay_result_clear(&res);
}

static void
record_event(void *data, const CcaEvent *ev)
{
	g_array_append_val((GArray *)data, *ev);
}

/* A snapshot named NAME of the trace EVENTS (taken) that allocator A
 * recorded, dumped now: its final segments are A's, all of the default
 * pool (a private pool's are gone). */
static CcaSnapshot *
model_snapshot(const char *name, GArray *events, const CcaAllocator *a)
{
	CcaSnapshot *snap = cca_test_snapshot_new(name, events);
	GArray *state = cca_allocator_state(a);
	for (guint i = 0; i < state->len; i++) {
		const CcaStateSegment *m = &g_array_index(state, CcaStateSegment, i);
		g_assert_cmpint(m->pool_id[1], ==, 0);
		CcaSnapSegment seg = {.address = m->address,
				      .total_size = m->total_size,
				      .stream = m->stream,
				      .is_small = m->is_small,
				      .is_expandable = m->is_expandable,
				      .first_block = snap->blocks->len,
				      .n_blocks = (uint32_t)m->n_blocks};
		for (size_t b = 0; b < m->n_blocks; b++) {
			CcaSnapBlock sb = {.address = m->blocks[b].address,
					   .size = m->blocks[b].size,
					   .requested_size = m->blocks[b].requested_size,
					   .state = m->blocks[b].state};
			g_array_append_val(snap->blocks, sb);
		}
		g_array_append_val(snap->segments, seg);
	}
	cca_allocator_state_free(state);
	return snap;
}

/* A MemPool freed before the dump leaves no segment in the final state.
 * The trace is recorded from the model itself: blocks cached in the
 * default pool, then a private pool's requests that open new segments
 * although the cache could serve them, then the pool released and
 * emptied.  Replayed, the private requests are told from the default
 * ones and the replay matches entry for entry. */
static void
test_private_pool_freed_before_dump(void)
{
	CcaSettings settings;
	cca_settings_init(&settings);
	CcaSimDeviceConfig dc = {.total_memory = CCA_H200_TOTAL_MEMORY};
	CcaDevice *dev = cca_simdevice_new(&dc);
	GArray *events = g_array_new(FALSE, FALSE, sizeof(CcaEvent));
	CcaLimits limits = {0};
	CcaAllocator *a = cca_allocator_new(&settings, &limits, dev, record_event, events);
	const uint64_t MB = CCA_MIB;
	CcaHandle cached[3];
	for (int i = 0; i < 3; i++)
		cached[i] = cca_allocator_malloc(a, (uint64_t)(4 + i) * MB, 0);
	for (int i = 0; i < 3; i++)
		cca_allocator_free_block(a, cached[i], false);
	const int64_t pool_id[2] = {0, 1};
	int k = cca_allocator_mempool(a, pool_id);
	CcaHandle p1 = cca_allocator_malloc_in(a, 4 * MB, 0, (uint32_t)k);
	CcaHandle p2 = cca_allocator_malloc_in(a, 2 * MB, 0, (uint32_t)k); /* same segment */
	CcaHandle d1 = cca_allocator_malloc(a, 5 * MB, 0);		   /* default cache */
	cca_allocator_free_block(a, p1, false);
	cca_allocator_free_block(a, p2, false);
	cca_allocator_free_block(a, d1, false);
	cca_allocator_mempool_set_freeable(a, (uint32_t)k, true);
	cca_allocator_empty_cache(a);
	CcaHandle after = cca_allocator_malloc(a, 3 * MB, 0);
	cca_allocator_free_block(a, after, false);
	g_autoptr(CcaSnapshot) snap = model_snapshot("mempool-freed", events, a);
	cca_allocator_free(a);
	cca_device_free(dev);

	CcaReplayResult res;
	cca_test_replay_checked(snap, NULL, &res);
	g_assert_cmpuint(res.inferred_private_segments, ==, 1);
	g_assert_cmpuint(res.empty_cache_calls, ==, 1);
	cca_replay_result_clear(&res);
	cca_settings_clear(&settings);
}

/* A trace under expandable_segments:True recorded from the model: a
 * 30 MiB block of the default pool opens its large reservation; then,
 * with POOL, a MemPool's small request and two large ones open the pool's
 * own reservations (the default pool's could have grown), their blocks
 * die and ~MemPool releases the pool; without, the same requests go to
 * the default pool, the 30 MiB block dies too and empty_cache() unmaps
 * every page.  Then an 8 MiB request of the default pool, kept to the
 * dump. */
static void
pool_program(CcaAllocator *a, bool pool)
{
	const uint64_t MB = CCA_MIB;
	CcaHandle keep = cca_allocator_malloc(a, 30 * MB, 0);
	const int64_t pool_id[2] = {0, 1};
	uint32_t k = pool ? (uint32_t)cca_allocator_mempool(a, pool_id) : 0;
	CcaHandle mine[3] = {
		cca_allocator_malloc_in(a, MB / 2, 0, k),
		cca_allocator_malloc_in(a, 40 * MB, 0, k),
		cca_allocator_malloc_in(a, 24 * MB, 0, k),
	};
	for (int i = 0; i < 3; i++)
		cca_allocator_free_block(a, mine[i], false);
	if (pool) {
		cca_allocator_mempool_release(a, k);
	} else {
		cca_allocator_free_block(a, keep, false);
		cca_allocator_empty_cache(a);
	}
	cca_allocator_malloc(a, 8 * MB, 0);
}

static CcaSnapshot *
expandable_trace(const char *name, bool pool)
{
	CcaSettings settings;
	cca_settings_init(&settings);
	settings.expandable_segments = true;
	CcaSimDeviceConfig dc = {.total_memory = CCA_H200_TOTAL_MEMORY};
	CcaDevice *dev = cca_simdevice_new(&dc);
	GArray *events = g_array_new(FALSE, FALSE, sizeof(CcaEvent));
	CcaLimits limits = {0};
	CcaAllocator *a = cca_allocator_new(&settings, &limits, dev, record_event, events);
	pool_program(a, pool);
	CcaSnapshot *snap = model_snapshot(name, events, a);
	snap->settings.present = true;
	snap->settings.conf = g_strdup("expandable_segments:True");
	snap->settings.expandable_segments = true;
	snap->settings.max_split_size = -1;
	snap->settings.pinned_num_register_threads = 1;
	cca_allocator_free(a);
	cca_device_free(dev);
	cca_settings_clear(&settings);
	return snap;
}

/* A MemPool under expandable segments released before the dump: its
 * reservations leave no trace in the final state and no entry names the
 * pool, but ~MemPool unmaps whole reservations, the small one first.
 * The plan's read finds that burst and each reservation the pool owned:
 * its extent, from its first segment_map to the release. */
static void
test_plan_pool_reservations(void)
{
	g_autoptr(CcaSnapshot) snap = expandable_trace("mempool-expandable", true);
	const GArray *events = snap->events[0];
	/* what the recording shows: the unmap burst, and each reservation's
	 * first map */
	guint burst = events->len;
	for (guint i = 0; i < events->len && burst == events->len; i++)
		if (g_array_index(events, CcaEvent, i).action == CCA_ACTION_SEGMENT_UNMAP)
			burst = i;
	g_assert_cmpuint(burst, <, events->len);
	GError *error = NULL;
	g_autoptr(CcaPlan) plan = cca_plan_new(snap, 0, 0, CCA_REWIND_AUTO, &error);
	g_assert_no_error(error);
	g_assert_cmpuint(plan->reservation_releases->len, ==, 1);
	const CcaPlanPoolRelease *rel =
		&g_array_index(plan->reservation_releases, CcaPlanPoolRelease, 0);
	g_assert_cmpuint(rel->position, ==, burst);
	guint unmaps = 0;
	for (guint i = burst; i < events->len; i++) {
		const CcaEvent *ev = &g_array_index(events, CcaEvent, i);
		if (ev->action != CCA_ACTION_SEGMENT_UNMAP)
			break;
		g_assert_cmpuint(unmaps, <, plan->reservation_spans->len);
		const CcaPlanPoolSpan *sp =
			&g_array_index(plan->reservation_spans, CcaPlanPoolSpan, unmaps++);
		/* the whole reservation: its every mapped page, unmapped at once */
		g_assert_cmpuint(sp->address, ==, ev->addr);
		g_assert_cmpuint(sp->size, ==, ev->size);
		g_assert_cmpuint(sp->to, ==, burst);
		g_assert_cmpuint(sp->label, ==, rel->label);
		guint first = 0;
		while (g_array_index(events, CcaEvent, first).action != CCA_ACTION_SEGMENT_MAP ||
		       g_array_index(events, CcaEvent, first).addr != ev->addr)
			first++;
		g_assert_cmpuint(sp->from, ==, first);
	}
	g_assert_cmpuint(unmaps, ==, 2);
	g_assert_cmpuint(plan->reservation_spans->len, ==, unmaps);
}

/* ... and the recorded replay routes the pool's requests to a private
 * pool from the start (their reservations are its own, not the default
 * pool's grown) and releases it at the burst: entry for entry the
 * recording, with one pool release and no empty_cache(). */
static void
test_pool_reservations_replayed(void)
{
	g_autoptr(CcaSnapshot) snap = expandable_trace("mempool-expandable", true);
	CcaReplayResult res;
	cca_test_replay_checked(snap, NULL, &res);
	g_assert_cmpuint(res.pool_releases, ==, 1);
	g_assert_cmpuint(res.empty_cache_calls, ==, 0);
	cca_replay_result_clear(&res);
}

/* ... and a what-if of it (expandable segments off) routes the same
 * requests to a private pool and releases it where the recording did:
 * what the program itself makes of those settings. */
static void
test_pool_reservations_whatif(void)
{
	g_autoptr(CcaSnapshot) snap = expandable_trace("mempool-expandable", true);
	CcaSettings off;
	cca_settings_init(&off);
	CcaSimDeviceConfig dc = {.total_memory = CCA_H200_TOTAL_MEMORY};
	CcaDevice *dev = cca_simdevice_new(&dc);
	CcaLimits limits = {0};
	CcaAllocator *a = cca_allocator_new(&off, &limits, dev, NULL, NULL);
	pool_program(a, true);
	CcaStats truth = *cca_allocator_stats(a);
	cca_allocator_free(a);
	cca_device_free(dev);

	CcaReplayOptions opt;
	cca_replay_options_init(&opt);
	opt.settings = &off;
	CcaReplayResult res;
	GError *error = NULL;
	g_assert_true(cca_replay_run(snap, &opt, &res, &error));
	g_assert_no_error(error);
	g_assert_true(res.whatif);
	g_assert_cmpuint(res.pool_releases, ==, 1);
	const CcaStat *got = &res.stats.reserved_bytes[CCA_STAT_ALL];
	const CcaStat *want = &truth.reserved_bytes[CCA_STAT_ALL];
	g_assert_cmpint(got->current, ==, want->current);
	g_assert_cmpint(got->peak, ==, want->peak);
	g_assert_cmpint(res.stats.num_device_alloc, ==, truth.num_device_alloc);
	g_assert_cmpint(res.stats.num_device_free, ==, truth.num_device_free);
	cca_replay_result_clear(&res);
	cca_settings_clear(&off);
}

/* empty_cache() unmapping whole reservations of the default pool (its
 * large pages before its small ones) is no pool's release. */
static void
test_default_reservations_emptied(void)
{
	g_autoptr(CcaSnapshot) snap = expandable_trace("default-expandable", false);
	GError *error = NULL;
	g_autoptr(CcaPlan) plan = cca_plan_new(snap, 0, 0, CCA_REWIND_AUTO, &error);
	g_assert_no_error(error);
	g_assert_cmpuint(plan->reservation_releases->len, ==, 0);
	CcaReplayResult res;
	cca_test_replay_checked(snap, NULL, &res);
	g_assert_cmpuint(res.pool_releases, ==, 0);
	g_assert_cmpuint(res.empty_cache_calls, ==, 1);
	cca_replay_result_clear(&res);
}

/* ------------------------------------- stream-ordered frees under a cap */

/* The run NAME (W.C) of traces/patterns-2.11. */
static CcaTestRun *
pattern_run(const char *name)
{
	g_autofree char *dir = cca_test_trace_path("patterns-2.11");
	CcaTestRun *tc = g_new0(CcaTestRun, 1);
	tc->name = g_strdup(name);
	tc->workload = g_strndup(name, strcspn(name, "."));
	tc->trace = g_strdup_printf("%s/%s.pickle.xz", dir, name);
	tc->json = g_strdup_printf("%s/%s.json", dir, name);
	tc->default_trace = g_strdup_printf("%s/%s.default.pickle.xz", dir, tc->workload);
	return tc;
}

static void
pattern_run_free(gpointer data)
{
	CcaTestRun *tc = data;
	g_free(tc->name);
	g_free(tc->workload);
	g_free(tc->trace);
	g_free(tc->json);
	g_free(tc->default_trace);
	g_free(tc);
}

/* rscap.cap, entries 1470-1474: a 16 MiB block of stream 303300288 used on
 * the default stream is freed (its event still outstanding), an 8 MiB
 * request takes the rest of its segment, then free_completed of the 16
 * MiB block, segment_free of a 2 MiB segment and the oom of an 8 MiB
 * request: that malloc's lookup failed without the block, the cap refused
 * a 20 MiB segment, release_cached_blocks completed the event and
 * released the 2 MiB segment, and the retry was refused too.  The same
 * what-if without the recording's addresses, told the recording's cap,
 * must fail there as well, and give PyTorch's 122 figures. */
static void
test_whatif_keeps_synced_completion(void)
{
	g_autoptr(CcaSnapshot) snap = NULL;
	CcaTestRun *tc = pattern_run("rscap.cap");
	g_autofree char *json = cca_test_read_text(tc->json);
	GError *error = NULL;
	snap = cca_snapshot_load(tc->trace, &error);
	g_assert_no_error(error);
	CcaReplayOptions opt;
	cca_replay_options_init(&opt);
	opt.memory_fraction = cca_test_memory_fraction(json);
	opt.recorded_memory_fraction = opt.memory_fraction;
	opt.force_whatif = TRUE;
	CcaReplayResult res;
	g_assert_true(cca_replay_run(snap, &opt, &res, &error));
	g_assert_no_error(error);
	g_assert_true(res.whatif);
	g_assert_cmpint(res.stats.num_ooms, ==, 1);
	g_assert_cmpuint(res.unexpected_ooms, ==, 0);
	assert_stats_equal(&res.stats, json, NULL);
	cca_replay_result_clear(&res);
	pattern_run_free(tc);
}

/* A trace made by hand: 20 MiB blocks A, B, C (each a whole 20 MiB
 * segment) on one stream, A and B freed with their events outstanding.
 * Replayed under a 24 MiB cap, B's malloc synchronises (completing A),
 * releases A's segment and makes a new one, whose block B then is (the
 * model reuses A's slot).  The trace's later free_completed of A must
 * not complete B: C's malloc still finds B pending, synchronises and
 * releases again, as PyTorch would. */
static void
test_later_completion_after_sync(void)
{
	const uint64_t MB = CCA_MIB, S1 = UINT64_C(0x7f0000000000), S2 = S1 + 64 * MB;
	GArray *ev = g_array_new(FALSE, FALSE, sizeof(CcaEvent));
	push(ev, CCA_ACTION_SEGMENT_ALLOC, S1, 20 * MB);
	push(ev, CCA_ACTION_ALLOC, S1, 20 * MB);
	push(ev, CCA_ACTION_FREE_REQUESTED, S1, 20 * MB);
	push(ev, CCA_ACTION_SEGMENT_ALLOC, S2, 20 * MB);
	push(ev, CCA_ACTION_ALLOC, S2, 20 * MB);
	push(ev, CCA_ACTION_FREE_REQUESTED, S2, 20 * MB);
	push(ev, CCA_ACTION_FREE_COMPLETED, S1, 20 * MB); /* A's event done */
	push(ev, CCA_ACTION_ALLOC, S1, 20 * MB);	  /* C reuses A's block */
	push(ev, CCA_ACTION_FREE_COMPLETED, S2, 20 * MB);
	push_free(ev, S1, 20 * MB);
	g_autoptr(CcaSnapshot) snap = cca_snapshot_new();
	snap->source = g_strdup("later-completion");
	snap->n_devices = 1;
	snap->events = g_new0(GArray *, 1);
	snap->n_events = g_new0(uint64_t, 1);
	snap->events[0] = ev;
	snap->n_events[0] = ev->len;
	CcaReplayOptions opt;
	cca_replay_options_init(&opt);
	opt.memory_fraction = 24.0 * (double)MB / (double)CCA_H200_TOTAL_MEMORY;
	CcaReplayResult res;
	GError *error = NULL;
	g_assert_true(cca_replay_run(snap, &opt, &res, &error));
	g_assert_no_error(error);
	g_assert_true(res.whatif);
	g_assert_cmpint(res.stats.num_ooms, ==, 0);
	g_assert_cmpint(res.stats.num_sync_all_streams, ==, 2);
	g_assert_cmpint(res.stats.num_alloc_retries, ==, 2);
	g_assert_cmpint(res.stats.num_device_alloc, ==, 3);
	g_assert_cmpint(res.stats.num_device_free, ==, 2);
	g_assert_cmpint(res.stats.active[CCA_STAT_ALL].current, ==, 0);
	cca_replay_result_clear(&res);
}

/* What the engine tells observers of a replay, in order: each trace entry
 * it hands the model (before_request), the model entries with the entry
 * that caused them (on_model_event), then the entry handled (observer). */
typedef struct {
	const char *name; /* TRACE, or TRACE,CONF for a what-if */
	const char *trace;
	const char *conf; /* NULL: the recorded settings */
	bool whatif;	  /* the replay is a what-if */
} CauseRow;

typedef struct {
	uint64_t n_events;
	uint64_t before;       /* the last before_request index */
	CcaEvent before_event; /* and its entry */
	bool have_before;
	int64_t last_observed; /* -1 before the first */
	uint64_t empty_caches; /* before_request calls for an empty_cache() */
	uint64_t model_entries;
	bool recorded;
} Causes;

static bool
is_release(uint8_t action)
{
	return action == CCA_ACTION_SEGMENT_FREE || action == CCA_ACTION_SEGMENT_UNMAP;
}

static void
causes_before(void *data, uint64_t index, const CcaEvent *ev, const CcaAllocator *alloc)
{
	Causes *c = data;
	g_assert_cmpuint(index, <, c->n_events);
	/* each entry once, in order, after the one observed last */
	g_assert_true(!c->have_before || index > c->before);
	g_assert_cmpint((int64_t)index, >, c->last_observed);
	g_assert_true(ev->action == CCA_ACTION_ALLOC || ev->action == CCA_ACTION_FREE_REQUESTED ||
		      ev->action == CCA_ACTION_FREE_COMPLETED || ev->action == CCA_ACTION_OOM ||
		      is_release(ev->action));
	c->empty_caches += is_release(ev->action);
	c->before = index;
	c->before_event = *ev;
	c->have_before = true;
}

static void
causes_model(void *data, uint64_t cause, const CcaEvent *trace, const CcaEvent *model)
{
	Causes *c = data;
	c->model_entries++;
	/* the entry before_request announced last */
	g_assert_true(c->have_before);
	g_assert_cmpuint(cause, ==, c->before);
	g_assert_nonnull(trace);
	g_assert_cmpint(trace->action, ==, c->before_event.action);
	g_assert_cmpuint(trace->addr, ==, c->before_event.addr);
	g_assert_cmpuint(trace->size, ==, c->before_event.size);
	if (is_release(trace->action)) /* an empty_cache() releases, nothing else */
		g_assert_true(is_release(model->action));
	if (model->action == CCA_ACTION_ALLOC) {
		g_assert_cmpint(trace->action, ==, CCA_ACTION_ALLOC);
		g_assert_cmpuint(trace->size, ==, model->size);
		if (c->recorded) /* the recording's own block */
			g_assert_cmpuint(trace->addr, ==, model->addr);
	}
}

static void
causes_observe(void *data, uint64_t index, const CcaEvent *ev, const CcaAllocator *alloc)
{
	Causes *c = data;
	g_assert_cmpint((int64_t)index, >, c->last_observed);
	c->last_observed = (int64_t)index;
}

static void
causes_attach(Causes *c, CcaReplayOptions *opt)
{
	opt->before_request = causes_before;
	opt->before_request_data = c;
	opt->on_model_event = causes_model;
	opt->on_model_event_data = c;
	opt->observer = causes_observe;
	opt->observer_data = c;
}

static void
test_causes(gconstpointer data)
{
	const CauseRow *row = data;
	g_autoptr(CcaSnapshot) snap = cca_test_load_trace(row->trace);
	GError *error = NULL;
	CcaSettings settings;
	cca_settings_init(&settings);
	CcaReplayOptions opt;
	cca_replay_options_init(&opt);
	if (row->conf) {
		g_assert_true(cca_settings_parse(&settings, row->conf, &error));
		opt.settings = &settings;
	}
	Causes c = {.n_events = snap->n_events[0], .last_observed = -1, .recorded = !row->whatif};
	causes_attach(&c, &opt);
	CcaReplayResult res;
	g_assert_true(cca_replay_run(snap, &opt, &res, &error));
	g_assert_no_error(error);
	g_assert_cmpuint(res.whatif, ==, row->whatif);
	g_assert_cmpuint(res.empty_cache_calls, >, 0);
	g_assert_cmpuint(c.empty_caches, ==, res.empty_cache_calls);
	g_assert_cmpuint(c.model_entries, >, 0);
	cca_replay_result_clear(&res);
	cca_settings_clear(&settings);
}

/* The same of a what-if that holds the recording's completions past the
 * malloc whose synchronisation made them (rscap.cap under its cap, as
 * /replay/whatif-keeps-synced-completion replays it): applied with that
 * malloc, they have its cause. */
static void
test_causes_synced(void)
{
	CcaTestRun *tc = pattern_run("rscap.cap");
	g_autofree char *json = cca_test_read_text(tc->json);
	GError *error = NULL;
	g_autoptr(CcaSnapshot) snap = cca_snapshot_load(tc->trace, &error);
	g_assert_no_error(error);
	CcaReplayOptions opt;
	cca_replay_options_init(&opt);
	opt.memory_fraction = cca_test_memory_fraction(json);
	opt.recorded_memory_fraction = opt.memory_fraction;
	opt.force_whatif = TRUE;
	Causes c = {.n_events = snap->n_events[0], .last_observed = -1};
	causes_attach(&c, &opt);
	CcaReplayResult res;
	g_assert_true(cca_replay_run(snap, &opt, &res, &error));
	g_assert_no_error(error);
	g_assert_true(res.whatif);
	g_assert_cmpuint(c.model_entries, >, 0);
	cca_replay_result_clear(&res);
	pattern_run_free(tc);
}

/* Traces whose program called empty_cache(), replayed as recorded (the
 * cap traces) and as what-ifs (the gc traces, recorded under an unknown
 * cap, and other settings). */
static const CauseRow cause_rows[] = {
	{"seedfrag.cap", "seedfrag.cap", NULL, false},
	{"resnet152.cap", "resnet152.cap", NULL, false},
	{"dyninfer.cap", "dyninfer.cap", NULL, false},
	{"seedfrag.cap,ms128", "seedfrag.cap", "max_split_size_mb:128", true},
	{"seedfrag.gc", "seedfrag.gc", NULL, true},
	{"bert.gc", "bert.gc", NULL, true},
	{"bert.gc,ms128", "bert.gc", "max_split_size_mb:128", true},
};

/* What-ifs of real traces whose ties some other address models decide as
 * the driver's does (shadow.h). */
static const struct {
	const char *name, *trace, *conf;
} shadow_cases[] = {
	{"dyninfer-rp4", "dyninfer.default", "roundup_power2_divisions:4"},
	{"dyninfer-ms128", "dyninfer.default", "max_split_size_mb:128"},
	{"stacks-rp4", "stacks.default", "roundup_power2_divisions:4"},
	{"gpt2gen-ms128", "gpt2gen.default", "max_split_size_mb:128"},
};

/* A model the what-if's replay finds to decide every address tie as it
 * did gives, replayed on its own, the same memory_stats() and peaks. */
static void
test_shadow_same_run(gconstpointer data)
{
	guint c = GPOINTER_TO_UINT(data);
	guint n, shared = 0;
	const CcaAddressModel *models = cca_simdevice_bound_models(&n);
	if (n < CCA_ADDRESS_BOUND_MODELS) { /* none of these cases' sharers */
		g_test_skip("CCASIM_ADDRESS_MODELS keeps only the first models");
		return;
	}
	CcaSnapshot *snap = cca_test_load_trace(shadow_cases[c].trace);
	CcaSettings settings;
	cca_settings_init(&settings);
	GError *error = NULL;
	g_assert_true(cca_settings_parse(&settings, shadow_cases[c].conf, &error));
	CcaReplayOptions opt;
	cca_replay_options_init(&opt);
	opt.settings = &settings;
	opt.address_model = CCA_ADDRESS_DRIVER;
	opt.count_address_ties = true;
	CcaReplayResult base;
	g_assert_true(cca_replay_run(snap, &opt, &base, &error));
	g_assert_cmpuint(base.address_ties, >, 0);
	g_assert_cmpuint(base.same_under, !=, 0);
	for (guint m = 1; m < n; m++) {
		if (!(base.same_under & 1u << models[m]))
			continue;
		CcaReplayOptions o = opt;
		o.address_model = models[m];
		o.count_address_ties = false;
		CcaReplayResult res;
		g_assert_true(cca_replay_run(snap, &o, &res, &error));
		g_assert_true(memcmp(&res.stats, &base.stats, sizeof res.stats) == 0);
		g_assert_cmpuint(res.reserved_at_peak, ==, base.reserved_at_peak);
		g_assert_cmpuint(res.allocated_at_peak, ==, base.allocated_at_peak);
		cca_replay_result_clear(&res);
		shared++;
	}
	g_test_message("%s: %u of %u other models share the run", shadow_cases[c].name, shared,
		       n - 1);
	cca_replay_result_clear(&base);
	cca_settings_clear(&settings);
	cca_snapshot_free(snap);
}

int
main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_set_nonfatal_assertions();
	GPtrArray *recorded = cca_test_runs(FALSE);
	cca_test_add_runs("/replay/recorded", recorded, test_recorded);
	GPtrArray *whatifs = cca_test_runs(TRUE);
	cca_test_add_runs("/replay/whatif-recorded", whatifs, test_recorded);
	cca_test_add_runs("/replay/whatif", whatifs, test_whatif);
	cca_test_add_runs("/replay/whatif-driver", whatifs, test_whatif_driver);
	g_autofree char *patterns = cca_test_trace_path("patterns-2.11");
	GPtrArray *names = cca_test_sorted_names(patterns, "rscap.", ".json", NULL);
	GPtrArray *pattern_runs = g_ptr_array_new_with_free_func(pattern_run_free);
	for (guint i = 0; i < names->len; i++)
		g_ptr_array_add(pattern_runs, pattern_run(g_ptr_array_index(names, i)));
	g_ptr_array_unref(names);
	cca_test_add_runs("/replay/patterns", pattern_runs, test_recorded);
	g_test_add_func("/replay/two-devices", test_two_devices);
	g_test_add_data_func("/replay/sample/default", "snap_default_2.11.pickle", test_sample);
	g_test_add_data_func("/replay/sample/expandable", "snap_expandable_2.11.pickle",
			     test_sample);
	g_test_add_data_func("/replay/sample/state", "snap_state_2.11.pickle", test_sample);
	g_test_add_func("/replay/spec14-default-run", test_spec14_default_run);
	g_test_add_func("/replay/empty-cache-recognised", test_empty_cache_recognised);
	g_test_add_func("/replay/unexpected-oom", test_unexpected_oom);
	g_test_add_func("/replay/skipped-free-requested", test_skipped_free_requested);
	CCA_TEST_ADD_ROWS("/replay/causes", cause_rows, name, test_causes);
	g_test_add_func("/replay/causes-synced", test_causes_synced);
	g_test_add_func("/replay/private-pool-freed-before-dump",
			test_private_pool_freed_before_dump);
	g_test_add_func("/replay/plan-pool-reservations", test_plan_pool_reservations);
	g_test_add_func("/replay/pool-reservations-replayed", test_pool_reservations_replayed);
	g_test_add_func("/replay/pool-reservations-whatif", test_pool_reservations_whatif);
	g_test_add_func("/replay/default-reservations-emptied", test_default_reservations_emptied);
	g_test_add_func("/replay/whatif-keeps-synced-completion",
			test_whatif_keeps_synced_completion);
	g_test_add_func("/replay/later-completion-after-sync", test_later_completion_after_sync);
	for (guint c = 0; c < G_N_ELEMENTS(shadow_cases); c++) {
		g_autofree char *path =
			g_strdup_printf("/replay/shadow-same-run/%s", shadow_cases[c].name);
		g_test_add_data_func(path, GUINT_TO_POINTER(c), test_shadow_same_run);
	}
	int status = g_test_run();
	g_ptr_array_unref(recorded);
	g_ptr_array_unref(whatifs);
	g_ptr_array_unref(pattern_runs);
	return status;
}
