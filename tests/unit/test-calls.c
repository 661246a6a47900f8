/* test-calls.c - the program's calls that ccasim-record saw: where each
 * lands between the trace's entries, and what a replay does with it. */
#include "config.h"

#include <glib.h>
#include <string.h>

#include "calls.h"
#include "replay.h"
#include "simdevice.h"
#include "size.h"
#include "testutil.h"

#define MB CCA_MIB
#define S0 UINT64_C(0x7f0000000000)
#define S1 (S0 + 64 * MB)

/* Appends an entry stamped 1000 + its index (placement by time needs
 * times). */
static void
push(GArray *events, CcaAction action, uint64_t addr, uint64_t size)
{
	cca_test_push_event(events, action, addr, size, 1000 + (int64_t)events->len);
}

/* A one-device snapshot of EVENTS (taken) with the annotations NAMES
 * (NULL-terminated; each time_us 0). */
static CcaSnapshot *
snapshot_with(GArray *events, const char *const *names)
{
	CcaSnapshot *snap = cca_snapshot_new();
	snap->source = g_strdup("calls");
	snap->n_devices = 1;
	snap->events = g_new0(GArray *, 1);
	snap->n_events = g_new0(uint64_t, 1);
	snap->events[0] = events;
	snap->n_events[0] = events->len;
	for (guint i = 0; names && names[i]; i++) {
		CcaAnnotation a = {
			.stage = cca_snapshot_intern(snap, "START", 5),
			.name = cca_snapshot_intern(snap, names[i], strlen(names[i])),
			.device = 0,
			.time_us = 0,
		};
		g_array_append_val(snap->annotations, a);
	}
	return snap;
}

/* Adds a final segment of SNAP at ADDR, TOTAL bytes, holding the N
 * blocks BLOCKS (address order; requested_size = size when allocated). */
static void
final_segment(CcaSnapshot *snap, uint64_t addr, uint64_t total, const CcaSnapBlock *blocks, guint n)
{
	CcaSnapSegment seg = {.address = addr,
			      .total_size = total,
			      .first_block = snap->blocks->len,
			      .n_blocks = n};
	for (guint i = 0; i < n; i++) {
		CcaSnapBlock b = blocks[i];
		if (b.state != CCA_BLOCK_INACTIVE) {
			b.requested_size = b.size;
			seg.allocated_size += b.size;
			seg.active_size += b.size;
		}
		g_array_append_val(snap->blocks, b);
	}
	g_array_append_val(snap->segments, seg);
}

#define LIVE(at, n)                                                               \
	{                                                                         \
		.address = (at), .size = (n), .state = CCA_BLOCK_ACTIVE_ALLOCATED \
	}
#define FREE(at, n)                                                       \
	{                                                                 \
		.address = (at), .size = (n), .state = CCA_BLOCK_INACTIVE \
	}

/* --------------------------------------------------------- placement */

/* The trace every placement case shares:
 *   0 segment_alloc S0   1 alloc S0 (allocs 1)   2 free_requested S0 (frees 1)
 *   3 free_completed S0 (free() completed it at once)
 *   4 segment_alloc S1   5 alloc S1 (allocs 2)   6 free_requested S1 (frees 2)
 *   7 alloc S0 (allocs 3: S1's free waits for its stream's events)
 *   8 free_completed S1 (an empty_cache's synchronisation)
 *   9 segment_free S1   10 oom (ooms 1)                                 */
static GArray *
placement_trace(void)
{
	GArray *ev = g_array_new(FALSE, FALSE, sizeof(CcaEvent));
	push(ev, CCA_ACTION_SEGMENT_ALLOC, S0, 20 * MB);
	push(ev, CCA_ACTION_ALLOC, S0, 20 * MB);
	push(ev, CCA_ACTION_FREE_REQUESTED, S0, 20 * MB);
	push(ev, CCA_ACTION_FREE_COMPLETED, S0, 20 * MB);
	push(ev, CCA_ACTION_SEGMENT_ALLOC, S1, 20 * MB);
	push(ev, CCA_ACTION_ALLOC, S1, 20 * MB);
	push(ev, CCA_ACTION_FREE_REQUESTED, S1, 20 * MB);
	push(ev, CCA_ACTION_ALLOC, S0, 20 * MB);
	push(ev, CCA_ACTION_FREE_COMPLETED, S1, 20 * MB);
	push(ev, CCA_ACTION_SEGMENT_FREE, S1, 20 * MB);
	push(ev, CCA_ACTION_OOM, 0, 40 * MB);
	return ev;
}

typedef struct {
	const char *name;
	const char *record;   /* the call, before the dump record */
	const char *dump;     /* the dump record (NULL: none) */
	uint64_t position;    /* where it lands */
	uint64_t releases_at; /* for empty_cache */
	gboolean in_window;
} PlaceCase;

#define DUMP "ccasim:dump allocs=3 frees=2 ooms=1 reason=exit"

static const PlaceCase place_cases[] = {
	{"before-everything", "ccasim:reset_peak allocs=0 frees=0 ooms=0", DUMP, 0, 0, TRUE},
	{"after-an-alloc", "ccasim:reset_peak allocs=1 frees=0 ooms=0", DUMP, 2, 2, TRUE},
	{"after-free-and-its-completion", "ccasim:reset_peak allocs=1 frees=1 ooms=0", DUMP, 4, 4,
	 TRUE},
	{"after-a-deferred-free", "ccasim:reset_peak allocs=2 frees=2 ooms=0", DUMP, 7, 7, TRUE},
	{"empty-cache-before-its-releases", "ccasim:empty_cache allocs=3 frees=2 ooms=0", DUMP, 8,
	 9, TRUE},
	{"after-an-oom", "ccasim:empty_cache allocs=3 frees=2 ooms=1", DUMP, 11, 11, TRUE},
	/* a ring of entries: the dump counts 5 allocs, the trace holds 3 */
	{"counts-from-the-dump-back", "ccasim:reset_peak allocs=3 frees=2 ooms=0",
	 "ccasim:dump allocs=5 frees=4 ooms=1 reason=oom", 2, 2, TRUE},
	{"before-the-window", "ccasim:reset_peak allocs=1 frees=1 ooms=0",
	 "ccasim:dump allocs=5 frees=4 ooms=1 reason=oom", 0, 0, FALSE},
};

static void
test_place(gconstpointer data)
{
	const PlaceCase *pc = data;
	const char *names[] = {pc->record, pc->dump, NULL};
	g_autoptr(CcaSnapshot) snap = snapshot_with(placement_trace(), names);
	GError *error = NULL;
	g_autoptr(CcaCalls) calls = cca_calls_parse(snap, 0, &error);
	g_assert_no_error(error);
	g_assert_true(cca_calls_place(calls, snap, 0, NULL, &error));
	g_assert_no_error(error);
	const CcaCall *c = &g_array_index(calls->calls, CcaCall, 0);
	g_assert_cmpint(c->in_window, ==, pc->in_window);
	g_assert_cmpuint(c->position, ==, pc->position);
	g_assert_cmpuint(c->releases_at, ==, pc->releases_at);
}

/* Without a dump record the counts have nothing to count from: the call
 * goes before the first entry recorded after its time. */
static void
test_place_by_time(void)
{
	GArray *ev = placement_trace(); /* entry I at time_us 1000 + I */
	g_autoptr(CcaSnapshot) snap = snapshot_with(ev, NULL);
	const char *name = "ccasim:empty_cache allocs=9 frees=9 ooms=0";
	CcaAnnotation a = {.stage = cca_snapshot_intern(snap, "START", 5),
			   .name = cca_snapshot_intern(snap, name, strlen(name)),
			   .time_us = 1004};
	g_array_append_val(snap->annotations, a);
	GError *error = NULL;
	g_autoptr(CcaCalls) calls = cca_calls_parse(snap, 0, &error);
	g_assert_true(cca_calls_place(calls, snap, 0, NULL, &error));
	g_assert_no_error(error);
	g_assert_cmpuint(g_array_index(calls->calls, CcaCall, 0).position, ==, 5);
}

/* A dump that counts fewer entries than the trace holds contradicts it. */
static void
test_place_contradiction(void)
{
	const char *names[] = {"ccasim:dump allocs=1 frees=2 ooms=1 reason=exit", NULL};
	g_autoptr(CcaSnapshot) snap = snapshot_with(placement_trace(), names);
	GError *error = NULL;
	g_autoptr(CcaCalls) calls = cca_calls_parse(snap, 0, &error);
	g_assert_false(cca_calls_place(calls, snap, 0, NULL, &error));
	g_assert_error(error, CCA_INPUT_ERROR, CCA_INPUT_ERROR_CORRUPT);
	g_assert_nonnull(strstr(error->message, "fewer entries than the trace holds"));
	g_error_free(error);
}

/* ----------------------------------------------------------- parsing */

typedef struct {
	const char *name;
	const char *record;
	const char *error; /* a part of the message; NULL: parses */
} ParseCase;

static const ParseCase parse_cases[] = {
	{"settings-decoded",
	 "ccasim:set_allocator_settings allocs=1 frees=0 ooms=0 "
	 "settings=max_split_size_mb%3A64%2Cgarbage_collection_threshold%3A0.6",
	 NULL},
	{"unknown-fields-ignored", "ccasim:empty_cache allocs=1 frees=0 ooms=0 later=1", NULL},
	{"unknown-call", "ccasim:launch_rockets allocs=1", "unknown call 'launch_rockets'"},
	{"count-missing", "ccasim:empty_cache allocs=1 frees=0", "field 'ooms' missing"},
	{"count-not-a-number", "ccasim:empty_cache allocs=-1 frees=0 ooms=0",
	 "field 'allocs': not a count"},
	{"fraction-out-of-range", "ccasim:memory_fraction allocs=0 frees=0 ooms=0 fraction=1.5",
	 "field 'fraction': not a fraction"},
	{"settings-missing", "ccasim:set_allocator_settings allocs=0 frees=0 ooms=0",
	 "field 'settings' missing"},
	{"bad-percent", "ccasim:set_allocator_settings allocs=0 frees=0 ooms=0 settings=%4",
	 "not KEY=VALUE"},
	{"nul-byte", "ccasim:set_allocator_settings allocs=0 frees=0 ooms=0 settings=a%00b",
	 "not KEY=VALUE"},
	{"bad-pool", "ccasim:mempool_create allocs=0 frees=0 ooms=0 pool=1", "not a pool id"},
	{"bad-sample",
	 "ccasim:device_memory allocs=0 frees=0 ooms=0 when=later total=1 free=1 "
	 "reserved=1",
	 "field 'when'"},
};

static void
test_parse(gconstpointer data)
{
	const ParseCase *pc = data;
	const char *names[] = {pc->record, NULL};
	g_autoptr(CcaSnapshot) snap = snapshot_with(placement_trace(), names);
	GError *error = NULL;
	g_autoptr(CcaCalls) calls = cca_calls_parse(snap, 0, &error);
	if (!pc->error) {
		g_assert_no_error(error);
		g_assert_cmpuint(calls->calls->len, ==, 1);
		return;
	}
	g_assert_null(calls);
	g_assert_error(error, CCA_INPUT_ERROR, CCA_INPUT_ERROR_CORRUPT);
	g_assert_nonnull(strstr(error->message, "calls: external_annotations[0]: "));
	if (!strstr(error->message, pc->error))
		g_error("message '%s' lacks '%s'", error->message, pc->error);
	g_error_free(error);
}

/* Annotations of the program's own record_function scopes are not calls. */
static void
test_others_skipped(void)
{
	const char *names[] = {"Optimizer.step", "ccasim:empty_cache allocs=0 frees=0 ooms=0",
			       NULL};
	g_autoptr(CcaSnapshot) snap = snapshot_with(placement_trace(), names);
	g_autoptr(CcaCalls) calls = cca_calls_parse(snap, 0, NULL);
	g_assert_cmpuint(calls->calls->len, ==, 1);
	g_assert_cmpuint(cca_calls_count(calls, CCA_CALL_EMPTY_CACHE), ==, 1);
}

/* The memory outside the allocator: total - free - reserved. */
static void
test_outside_bytes(void)
{
	const char *names[] = {"ccasim:device_memory allocs=0 frees=0 ooms=0 when=peak "
			       "total=1000 free=300 reserved=500",
			       NULL};
	g_autoptr(CcaSnapshot) snap = snapshot_with(placement_trace(), names);
	g_autoptr(CcaCalls) calls = cca_calls_parse(snap, 0, NULL);
	const CcaCall *s = cca_calls_sample(calls, CCA_SAMPLE_PEAK);
	g_assert_nonnull(s);
	g_assert_cmpuint(cca_calls_outside_bytes(s), ==, 200);
	g_assert_null(cca_calls_sample(calls, CCA_SAMPLE_DUMP));
}

/* ----------------------------------------------------------- replays */

/* A 20 MiB block allocated, freed and cached in S0, then another 20 MiB
 * request.  With RELEASED the program called empty_cache() between them:
 * the recording shows its release of S0 and the request's new segment;
 * without, the request is served from the cache. */
static GArray *
empty_cache_trace(gboolean released)
{
	GArray *ev = g_array_new(FALSE, FALSE, sizeof(CcaEvent));
	push(ev, CCA_ACTION_SEGMENT_ALLOC, S0, 20 * MB);
	push(ev, CCA_ACTION_ALLOC, S0, 20 * MB);
	push(ev, CCA_ACTION_FREE_REQUESTED, S0, 20 * MB);
	push(ev, CCA_ACTION_FREE_COMPLETED, S0, 20 * MB);
	if (released) {
		push(ev, CCA_ACTION_SEGMENT_FREE, S0, 20 * MB);
		push(ev, CCA_ACTION_SEGMENT_ALLOC, S1, 20 * MB);
		push(ev, CCA_ACTION_ALLOC, S1, 20 * MB);
	} else {
		push(ev, CCA_ACTION_ALLOC, S0, 20 * MB);
	}
	return ev;
}

static void
replay_ok(CcaSnapshot *snap, const CcaReplayOptions *opt, CcaReplayResult *res)
{
	GError *error = NULL;
	g_assert_true(cca_replay_run(snap, opt, res, &error));
	g_assert_no_error(error);
}

/* Replays SNAP under its recorded settings with --check, which passes. */
static void
replay_checked(CcaSnapshot *snap, CcaReplayResult *res)
{
	CcaReplayOptions opt;
	cca_replay_options_init(&opt);
	opt.check = true;
	replay_ok(snap, &opt, res);
	g_assert_true(res->check_passed);
}

/* The recorded call explains its release: --check passes, the call is
 * counted once (not once more as a found empty_cache). */
static void
test_empty_cache_recorded(void)
{
	const char *names[] = {"ccasim:empty_cache allocs=1 frees=1 ooms=0",
			       "ccasim:dump allocs=2 frees=1 ooms=0 reason=exit", NULL};
	g_autoptr(CcaSnapshot) snap = snapshot_with(empty_cache_trace(TRUE), names);
	const CcaSnapBlock final[] = {LIVE(S1, 20 * MB)};
	final_segment(snap, S1, 20 * MB, final, 1);
	CcaReplayResult res;
	replay_checked(snap, &res);
	g_assert_cmpuint(res.empty_cache_calls, ==, 1);
	g_assert_cmpuint(res.recorded_empty_cache_calls, ==, 1);
	g_assert_cmpint(res.stats.num_sync_all_streams, ==, 1);
	g_assert_cmpint(res.stats.num_device_free, ==, 1);
	cca_replay_result_clear(&res);
}

/* An empty_cache() that freed nothing in the recording (its segment was
 * in use) still synchronises there, and a what-if in which the cache
 * holds the segment at that moment releases it. */
static void
test_empty_cache_silent(void)
{
	GArray *ev = g_array_new(FALSE, FALSE, sizeof(CcaEvent));
	push(ev, CCA_ACTION_SEGMENT_ALLOC, S0, 20 * MB);
	push(ev, CCA_ACTION_ALLOC, S0, 8 * MB);
	push(ev, CCA_ACTION_ALLOC, S0 + 8 * MB, 8 * MB);
	push(ev, CCA_ACTION_FREE_REQUESTED, S0, 8 * MB);
	push(ev, CCA_ACTION_FREE_COMPLETED, S0, 8 * MB);
	/* empty_cache() here: S0 still holds a live block */
	push(ev, CCA_ACTION_FREE_REQUESTED, S0 + 8 * MB, 8 * MB);
	push(ev, CCA_ACTION_FREE_COMPLETED, S0 + 8 * MB, 8 * MB);
	const char *names[] = {"ccasim:empty_cache allocs=2 frees=1 ooms=0",
			       "ccasim:dump allocs=2 frees=2 ooms=0 reason=exit", NULL};
	g_autoptr(CcaSnapshot) snap = snapshot_with(ev, names);
	const CcaSnapBlock final[] = {FREE(S0, 20 * MB)};
	final_segment(snap, S0, 20 * MB, final, 1);
	CcaReplayResult res;
	replay_checked(snap, &res);
	g_assert_cmpint(res.stats.num_sync_all_streams, ==, 1);
	g_assert_cmpint(res.stats.num_device_free, ==, 0);
	cca_replay_result_clear(&res);
	/* a what-if repeats the call too */
	CcaSettings s;
	cca_settings_init(&s);
	g_assert_true(cca_settings_parse(&s, "expandable_segments:True", NULL));
	CcaReplayOptions opt;
	cca_replay_options_init(&opt);
	opt.settings = &s;
	replay_ok(snap, &opt, &res);
	g_assert_true(res.whatif);
	g_assert_cmpint(res.stats.num_sync_all_streams, ==, 1);
	g_assert_cmpuint(res.recorded_empty_cache_calls, ==, 1);
	cca_replay_result_clear(&res);
	cca_settings_clear(&s);
}

/* _set_allocator_settings("max_split_size_mb:20") mid-run: a 30 MiB block
 * freed afterwards is oversize, and the settings the recording began with
 * come from the recorder's start record, not the dump's. */
static void
test_settings_change(void)
{
	GArray *ev = g_array_new(FALSE, FALSE, sizeof(CcaEvent));
	push(ev, CCA_ACTION_SEGMENT_ALLOC, S0, 30 * MB);
	push(ev, CCA_ACTION_ALLOC, S0, 30 * MB);
	push(ev, CCA_ACTION_FREE_REQUESTED, S0, 30 * MB);
	push(ev, CCA_ACTION_FREE_COMPLETED, S0, 30 * MB);
	push(ev, CCA_ACTION_ALLOC, S0, 30 * MB);
	const char *names[] = {"ccasim:start allocs=0 frees=0 ooms=0 v=1 conf=",
			       "ccasim:set_allocator_settings allocs=1 frees=1 ooms=0 "
			       "settings=max_split_size_mb%3A20",
			       "ccasim:dump allocs=2 frees=1 ooms=0 reason=exit", NULL};
	g_autoptr(CcaSnapshot) snap = snapshot_with(ev, names);
	snap->settings.present = true;
	snap->settings.conf = g_strdup("max_split_size_mb:20");
	snap->settings.max_split_size = 20 * MB;
	const CcaSnapBlock final[] = {LIVE(S0, 30 * MB)};
	final_segment(snap, S0, 30 * MB, final, 1);
	CcaReplayResult res;
	replay_checked(snap, &res);
	/* the second 30 MiB allocation is oversize under the new setting */
	g_assert_cmpint(res.stats.oversize_allocations.allocated, ==, 1);
	/* memory_stats()' max_split_size keeps the value the run began with */
	g_assert_cmpint(res.stats.max_split_size, ==, -1);
	cca_replay_result_clear(&res);
}

/* set_per_process_memory_fraction() mid-run: the next cudaMalloc past the
 * cap fails. */
static void
test_fraction_change(void)
{
	GArray *ev = g_array_new(FALSE, FALSE, sizeof(CcaEvent));
	push(ev, CCA_ACTION_SEGMENT_ALLOC, S0, 20 * MB);
	push(ev, CCA_ACTION_ALLOC, S0, 20 * MB);
	push(ev, CCA_ACTION_OOM, 0, 20 * MB);
	g_autofree char *frac =
		g_strdup_printf("ccasim:memory_fraction allocs=1 frees=0 ooms=0 fraction=%.17g",
				30.0 * (double)MB / (double)CCA_H200_TOTAL_MEMORY);
	const char *names[] = {frac, "ccasim:dump allocs=1 frees=0 ooms=1 reason=oom", NULL};
	g_autoptr(CcaSnapshot) snap = snapshot_with(ev, names);
	const CcaSnapBlock final[] = {LIVE(S0, 20 * MB)};
	final_segment(snap, S0, 20 * MB, final, 1);
	CcaReplayResult res;
	replay_checked(snap, &res);
	g_assert_cmpint(res.stats.num_ooms, ==, 1);
	g_assert_cmpuint(res.unexpected_ooms, ==, 0);
	cca_replay_result_clear(&res);
}

/* reset_peak_memory_stats() then reset_accumulated_memory_stats() after
 * a free: the peak restarts from the current bytes, the counts from 0. */
static void
test_stats_resets(void)
{
	GArray *ev = g_array_new(FALSE, FALSE, sizeof(CcaEvent));
	push(ev, CCA_ACTION_SEGMENT_ALLOC, S0, 40 * MB);
	push(ev, CCA_ACTION_ALLOC, S0, 40 * MB);
	push(ev, CCA_ACTION_FREE_REQUESTED, S0, 40 * MB);
	push(ev, CCA_ACTION_FREE_COMPLETED, S0, 40 * MB);
	push(ev, CCA_ACTION_ALLOC, S0, 30 * MB);
	push(ev, CCA_ACTION_ALLOC, S0 + 30 * MB, 10 * MB);
	push(ev, CCA_ACTION_FREE_REQUESTED, S0, 30 * MB);
	push(ev, CCA_ACTION_FREE_COMPLETED, S0, 30 * MB);
	push(ev, CCA_ACTION_ALLOC, S0, 2 * MB);
	const char *names[] = {"ccasim:reset_peak allocs=3 frees=2 ooms=0",
			       "ccasim:reset_accumulated allocs=3 frees=2 ooms=0",
			       "ccasim:dump allocs=4 frees=2 ooms=0 reason=exit", NULL};
	g_autoptr(CcaSnapshot) snap = snapshot_with(ev, names);
	const CcaSnapBlock final[] = {LIVE(S0, 2 * MB), FREE(S0 + 2 * MB, 28 * MB),
				      LIVE(S0 + 30 * MB, 10 * MB)};
	final_segment(snap, S0, 40 * MB, final, 3);
	CcaReplayResult res;
	replay_checked(snap, &res);
	g_assert_cmpint(res.stats.allocated_bytes[CCA_STAT_ALL].peak, ==, 12 * MB);
	g_assert_cmpint(res.stats.allocation[CCA_STAT_ALL].allocated, ==, 1);
	g_assert_cmpint(res.stats.num_device_alloc, ==, 0);
	g_assert_cmpint(res.stats.reserved_bytes[CCA_STAT_ALL].peak, ==, 40 * MB);
	cca_replay_result_clear(&res);
}

int
main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	CCA_TEST_ADD_ROWS("/calls/place", place_cases, name, test_place);
	g_test_add_func("/calls/place/by-time", test_place_by_time);
	g_test_add_func("/calls/place/contradiction", test_place_contradiction);
	CCA_TEST_ADD_ROWS("/calls/parse", parse_cases, name, test_parse);
	g_test_add_func("/calls/parse/others-skipped", test_others_skipped);
	g_test_add_func("/calls/outside-bytes", test_outside_bytes);
	g_test_add_func("/calls/replay/empty-cache-recorded", test_empty_cache_recorded);
	g_test_add_func("/calls/replay/empty-cache-silent", test_empty_cache_silent);
	g_test_add_func("/calls/replay/settings-change", test_settings_change);
	g_test_add_func("/calls/replay/fraction-change", test_fraction_change);
	g_test_add_func("/calls/replay/stats-resets", test_stats_resets);
	return g_test_run();
}
