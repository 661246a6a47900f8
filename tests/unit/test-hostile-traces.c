/* test-hostile-traces.c - traces that would break the model's invariants are
 * refused (doc/hardening.md, "Traces the model could not survive").
 *
 * Every hostile trace is built here, replayed from memory (as a pickle's
 * events are held) and from a msgpack trace written with cca_trace_write()
 * (streamed), and must fail with one CCA_INPUT_ERROR line naming the trace
 * entry ("event N") or the final segment, never with a GLib warning or
 * critical (main() makes both fatal).  Consistent traces of the same shape
 * (a stream-ordered free pair, a mid-run trace whose final blocks are all
 * pending frees) must replay.
 *
 * `test-hostile-traces --write-corpus DIR` writes each hostile trace to
 * DIR/hostile-model-NAME.msgpack: the seeds of tests/fuzz/corpus-replay/
 * and of tests/cli/test-replay-hostile.sh.
 */
#include "config.h"

#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#include "replay.h"
#include "settings.h"
#include "snapshot.h"
#include "snapshot_load.h"
#include "testutil.h"
#include "trace_write.h"

#define S0 UINT64_C(0x7f0000000000) /* a segment base */
#define S1 UINT64_C(0x7f0000400000)
#ifndef CCA_REPLAY_MAX_BYTES /* older replay.h */
#define CCA_REPLAY_MAX_BYTES ((UINT64_C(1) << 48) - 1)
#endif

/* ------------------------------------------------------------ builder */

static CcaSnapshot *
snap_new(const char *name)
{
	CcaSnapshot *snap = cca_snapshot_new();
	snap->source = g_strdup(name);
	snap->n_devices = 1;
	snap->events = g_new0(GArray *, 1);
	snap->n_events = g_new0(uint64_t, 1);
	snap->events[0] = g_array_new(FALSE, TRUE, sizeof(CcaEvent));
	return snap;
}

static void
push(CcaSnapshot *snap, CcaAction action, uint64_t addr, uint64_t size)
{
	cca_test_push_event(snap->events[0], action, addr, size, CCA_TIME_NONE);
	snap->n_events[0] = snap->events[0]->len;
}

/* One event of a trace: {action, address, size}. */
typedef struct {
	CcaAction action;
	uint64_t addr;
	uint64_t size;
} Push;

/* Pushes the N_ROWS events of ROWS in order. */
static void
push_rows(CcaSnapshot *snap, const Push *rows, size_t n_rows)
{
	for (size_t i = 0; i < n_rows; i++)
		push(snap, rows[i].action, rows[i].addr, rows[i].size);
}

#define PUSH_ROWS(snap, rows) push_rows((snap), (rows), G_N_ELEMENTS(rows))

/* A final segment of SIZE bytes at ADDR whose blocks are N_BLOCKS entries
 * of (size, state) pairs, laid end to end from ADDR. */
static void
add_segment(CcaSnapshot *snap, uint64_t addr, uint64_t size, bool is_small, guint n_blocks,
	    const uint64_t (*blocks)[2])
{
	CcaSnapSegment seg = {.address = addr,
			      .total_size = size,
			      .is_small = is_small,
			      .first_block = snap->blocks->len,
			      .n_blocks = n_blocks};
	uint64_t at = addr;
	for (guint i = 0; i < n_blocks; i++) {
		CcaSnapBlock b = {.address = at,
				  .size = blocks[i][0],
				  .requested_size =
					  blocks[i][1] == CCA_BLOCK_INACTIVE ? 0 : blocks[i][0],
				  .state = (uint8_t)blocks[i][1]};
		at += blocks[i][0];
		g_array_append_val(snap->blocks, b);
	}
	g_array_append_val(snap->segments, seg);
}

/* A final small segment at S0 of two 512-byte blocks pending free, then
 * the rest inactive. */
static void
add_pending_segment(CcaSnapshot *snap)
{
	const uint64_t blocks[][2] = {{512, CCA_BLOCK_ACTIVE_PENDING_FREE},
				      {512, CCA_BLOCK_ACTIVE_PENDING_FREE},
				      {2 * CCA_MIB - 1024, CCA_BLOCK_INACTIVE}};
	add_segment(snap, S0, 2 * CCA_MIB, true, 3, blocks);
}

/* ----------------------------------------------------- hostile traces */

/* An alloc at the address map's empty marker 2^64-1. */
static const Push events_sentinel_empty[] = {
	{CCA_ACTION_ALLOC, S0, 512},
	{CCA_ACTION_ALLOC, UINT64_MAX, 512},
	{CCA_ACTION_FREE_REQUESTED, UINT64_MAX, 512},
	{CCA_ACTION_FREE_COMPLETED, UINT64_MAX, 512},
};

/* A free at the map's deleted marker 2^64-2. */
static const Push events_sentinel_deleted[] = {
	{CCA_ACTION_ALLOC, UINT64_MAX - 1, 512},
	{CCA_ACTION_FREE_REQUESTED, UINT64_MAX - 1, 512},
	{CCA_ACTION_FREE_COMPLETED, UINT64_MAX - 1, 512},
};

/* free_requested twice for one block, the first one stream-ordered (its
 * free_completed not next): the second is a genuine double free. */
static const Push events_double_free[] = {
	{CCA_ACTION_SEGMENT_ALLOC, S0, 2 * CCA_MIB}, {CCA_ACTION_ALLOC, S0, 512},
	{CCA_ACTION_FREE_REQUESTED, S0, 512},	     {CCA_ACTION_FREE_REQUESTED, S0, 512},
	{CCA_ACTION_FREE_COMPLETED, S0, 512},
};

/* The same, the blocks many: a critical per block on the old code. */
static CcaSnapshot *
trace_double_free_many(void)
{
	CcaSnapshot *snap = snap_new("double-free-many");
	push(snap, CCA_ACTION_SEGMENT_ALLOC, S0, 2 * CCA_MIB);
	for (uint64_t i = 0; i < 64; i++)
		push(snap, CCA_ACTION_ALLOC, S0 + 512 * i, 512);
	for (int twice = 0; twice < 2; twice++)
		for (uint64_t i = 0; i < 64; i++)
			push(snap, CCA_ACTION_FREE_REQUESTED, S0 + 512 * i, 512);
	return snap;
}

/* A request of 2^63 bytes. */
static const Push events_size_2p63[] = {
	{CCA_ACTION_ALLOC, S0, UINT64_C(1) << 63},
};

/* A request of 2^64-1 bytes (it rounded to a 0-byte block). */
static const Push events_size_max[] = {
	{CCA_ACTION_ALLOC, S0, UINT64_MAX},
	{CCA_ACTION_FREE_REQUESTED, S0, UINT64_MAX},
	{CCA_ACTION_FREE_COMPLETED, S0, UINT64_MAX},
};

/* A request just past the bound: 256 TiB. */
static const Push events_size_256t[] = {
	{CCA_ACTION_ALLOC, S0, CCA_REPLAY_MAX_BYTES + 1},
};

/* Many requests of the bound each: together more than any device. */
static CcaSnapshot *
trace_total_too_large(void)
{
	CcaSnapshot *snap = snap_new("total-too-large");
	for (uint64_t i = 0; i < 4; i++)
		push(snap, CCA_ACTION_ALLOC, S0 + i * (CCA_REPLAY_MAX_BYTES + 2 * CCA_MIB),
		     CCA_REPLAY_MAX_BYTES);
	return snap;
}

/* A segment_alloc whose end wraps past 2^64. */
static const Push events_segment_event_wraps[] = {
	{CCA_ACTION_SEGMENT_ALLOC, UINT64_MAX - CCA_MIB + 1, 2 * CCA_MIB},
	{CCA_ACTION_ALLOC, UINT64_MAX - CCA_MIB + 1, 1536 * 1024},
};

/* Two segment_allocs over the same bytes, the first still live. */
static const Push events_segment_event_overlap[] = {
	{CCA_ACTION_SEGMENT_ALLOC, S0, 20 * CCA_MIB},
	{CCA_ACTION_ALLOC, S0, 20 * CCA_MIB},
	{CCA_ACTION_SEGMENT_ALLOC, S0 + 2 * CCA_MIB, 20 * CCA_MIB},
	{CCA_ACTION_ALLOC, S0 + 2 * CCA_MIB, 20 * CCA_MIB},
};

/* A segment_alloc of 0 bytes (a 0-byte segment overlaps nothing and
 * would sit at the address of the next). */
static const Push events_segment_zero[] = {
	{CCA_ACTION_SEGMENT_ALLOC, S0, 2 * CCA_MIB},
	{CCA_ACTION_ALLOC, S0, 512},
	{CCA_ACTION_SEGMENT_ALLOC, S1, 0},
};

/* A mid-run trace releasing a segment it never made (so one live when it
 * began) that overlaps a final segment also live then. */
static CcaSnapshot *
trace_start_segment_overlap(void)
{
	CcaSnapshot *snap = snap_new("start-segment-overlap");
	const uint64_t blocks[][2] = {{20 * CCA_MIB, CCA_BLOCK_ACTIVE_ALLOCATED}};
	add_segment(snap, S0, 20 * CCA_MIB, false, 1, blocks);
	const Push events[] = {
		{CCA_ACTION_ALLOC, S0 + 40 * CCA_MIB, 512},
		{CCA_ACTION_FREE_REQUESTED, S0 + 40 * CCA_MIB, 512},
		{CCA_ACTION_FREE_COMPLETED, S0 + 40 * CCA_MIB, 512},
		{CCA_ACTION_SEGMENT_FREE, S0 + 2 * CCA_MIB, 20 * CCA_MIB},
	};
	PUSH_ROWS(snap, events);
	return snap;
}

#define E0 UINT64_C(0x2a54000000) /* an expandable reservation */

/* A segment_unmap of pages the trace has already unmapped. */
static const Push events_unmap_twice[] = {
	{CCA_ACTION_SEGMENT_MAP, E0, 20 * CCA_MIB},   {CCA_ACTION_ALLOC, E0, CCA_MIB},
	{CCA_ACTION_FREE_REQUESTED, E0, CCA_MIB},     {CCA_ACTION_FREE_COMPLETED, E0, CCA_MIB},
	{CCA_ACTION_SEGMENT_UNMAP, E0, 20 * CCA_MIB}, {CCA_ACTION_SEGMENT_UNMAP, E0, 20 * CCA_MIB},
};

/* A segment_map of part of a 2 MiB page. */
static const Push events_map_misaligned[] = {
	{CCA_ACTION_SEGMENT_MAP, E0 + 512, 2 * CCA_MIB},
	{CCA_ACTION_ALLOC, E0 + 512, CCA_MIB},
};

/* A mid-run trace unmapping 2 TiB of expandable memory at once. */
static CcaSnapshot *
trace_unmap_huge(void)
{
	CcaSnapshot *snap = snap_new("unmap-huge");
	const uint64_t blocks[][2] = {{512, CCA_BLOCK_ACTIVE_ALLOCATED},
				      {2 * CCA_MIB - 512, CCA_BLOCK_INACTIVE}};
	add_segment(snap, S0, 2 * CCA_MIB, true, 2, blocks);
	const Push events[] = {
		{CCA_ACTION_FREE_REQUESTED, S0 + 512, 512},
		{CCA_ACTION_FREE_COMPLETED, S0 + 512, 512},
		{CCA_ACTION_SEGMENT_UNMAP, E0, UINT64_C(2) << 40},
	};
	PUSH_ROWS(snap, events);
	return snap;
}

/* A final segment whose end wraps past 2^64. */
static CcaSnapshot *
trace_final_wraps(void)
{
	CcaSnapshot *snap = snap_new("final-wraps");
	const uint64_t blocks[][2] = {{20 * CCA_MIB, CCA_BLOCK_ACTIVE_ALLOCATED}};
	add_segment(snap, UINT64_MAX - 2 * CCA_MIB + 1, 20 * CCA_MIB, false, 1, blocks);
	push(snap, CCA_ACTION_FREE_REQUESTED, UINT64_MAX - 2 * CCA_MIB + 1, 20 * CCA_MIB);
	return snap;
}

/* Two final segments over the same bytes. */
static CcaSnapshot *
trace_final_overlap(void)
{
	CcaSnapshot *snap = snap_new("final-overlap");
	const uint64_t blocks[][2] = {{20 * CCA_MIB, CCA_BLOCK_ACTIVE_ALLOCATED}};
	add_segment(snap, S0, 20 * CCA_MIB, false, 1, blocks);
	add_segment(snap, S0 + 2 * CCA_MIB, 20 * CCA_MIB, false, 1, blocks);
	const Push events[] = {
		{CCA_ACTION_FREE_REQUESTED, S0, 20 * CCA_MIB},
		{CCA_ACTION_FREE_REQUESTED, S0 + 2 * CCA_MIB, 20 * CCA_MIB},
	};
	PUSH_ROWS(snap, events);
	return snap;
}

/* A recorded garbage_collection_threshold of NaN. */
static CcaSnapshot *
trace_gc_nan(void)
{
	CcaSnapshot *snap = snap_new("gc-nan");
	snap->settings.present = true;
	snap->settings.conf = g_strdup("");
	snap->settings.max_split_size = -1;
	snap->settings.garbage_collection_threshold = NAN;
	push(snap, CCA_ACTION_ALLOC, S0, 512);
	return snap;
}

/* A recorded garbage_collection_threshold of +inf. */
static CcaSnapshot *
trace_gc_inf(void)
{
	CcaSnapshot *snap = trace_gc_nan();
	g_free(snap->source);
	snap->source = g_strdup("gc-inf");
	snap->settings.garbage_collection_threshold = INFINITY;
	return snap;
}

/* A recorded roundup_power2_divisions entry of 3. */
static CcaSnapshot *
trace_roundup_not_pow2(void)
{
	CcaSnapshot *snap = trace_gc_nan();
	g_free(snap->source);
	snap->source = g_strdup("roundup-not-pow2");
	snap->settings.garbage_collection_threshold = 0;
	snap->settings.roundup_power2_divisions[2] = 3;
	return snap;
}

/* A recorded max_split_size below the large segment size (found by the
 * replay fuzzer: the split remainder of a fresh 20 MiB segment then
 * counted as an oversize block and was released as a whole segment). */
static CcaSnapshot *
trace_max_split_small(void)
{
	CcaSnapshot *snap = trace_gc_nan();
	g_free(snap->source);
	snap->source = g_strdup("max-split-small");
	snap->settings.garbage_collection_threshold = 0;
	snap->settings.max_split_size = 16 * (int64_t)CCA_MIB - 1;
	return snap;
}

/* A 10 MB recorded PYTORCH_CUDA_ALLOC_CONF that PyTorch would refuse. */
static CcaSnapshot *
trace_conf_huge(void)
{
	CcaSnapshot *snap = trace_gc_nan();
	g_free(snap->source);
	snap->source = g_strdup("conf-huge");
	snap->settings.garbage_collection_threshold = 0;
	g_free(snap->settings.conf);
	snap->settings.conf = g_malloc(10 * CCA_MIB + 3);
	memset(snap->settings.conf, 'k', 10 * CCA_MIB);
	memcpy(snap->settings.conf + 10 * CCA_MIB, ":1", 3);
	return snap;
}

/* A final block at the map's empty marker, freed by the trace. */
static CcaSnapshot *
trace_final_block_sentinel(void)
{
	CcaSnapshot *snap = snap_new("final-block-sentinel");
	const uint64_t blocks[][2] = {{CCA_MIB, CCA_BLOCK_INACTIVE},
				      {CCA_MIB, CCA_BLOCK_ACTIVE_ALLOCATED}};
	add_segment(snap, S0, 2 * CCA_MIB, true, 2, blocks);
	g_array_index(snap->blocks, CcaSnapBlock, 1).address = UINT64_MAX;
	push(snap, CCA_ACTION_FREE_COMPLETED, S1, 512);
	return snap;
}

/* A mid-run trace whose final blocks are all pending frees, although the
 * trace completed those frees: it contradicts its final state. */
static CcaSnapshot *
trace_pending_contradicted(void)
{
	CcaSnapshot *snap = snap_new("pending-contradicted");
	add_pending_segment(snap);
	const Push events[] = {
		{CCA_ACTION_FREE_REQUESTED, S0, 512},
		{CCA_ACTION_FREE_REQUESTED, S0 + 512, 512},
		{CCA_ACTION_ALLOC, S0 + 1024, 512},
		{CCA_ACTION_FREE_COMPLETED, S0, 512},
		{CCA_ACTION_FREE_COMPLETED, S0 + 512, 512},
	};
	PUSH_ROWS(snap, events);
	return snap;
}

/* A hostile trace: built by BUILD, or else a trace named NAME of the
 * N_EVENTS events of EVENTS alone. */
typedef struct {
	const char *name;
	CcaSnapshot *(*build)(void);
	const Push *events;
	size_t n_events;
	const char *expect; /* in the error message */
} Hostile;

#define HOSTILE_BUILT(name, build, expect)   \
	{                                    \
		name, build, NULL, 0, expect \
	}
#define HOSTILE_EVENTS(name, events, expect)                     \
	{                                                        \
		name, NULL, events, G_N_ELEMENTS(events), expect \
	}

static const Hostile hostile[] = {
	HOSTILE_EVENTS("sentinel-empty", events_sentinel_empty, "event 1: "),
	HOSTILE_EVENTS("sentinel-deleted", events_sentinel_deleted, "event 0: "),
	HOSTILE_EVENTS("double-free", events_double_free, "event 3: "),
	HOSTILE_BUILT("double-free-many", trace_double_free_many, "event 129: "),
	HOSTILE_EVENTS("size-2p63", events_size_2p63, "event 0: "),
	HOSTILE_EVENTS("size-max", events_size_max, "event 0: "),
	HOSTILE_EVENTS("size-256t", events_size_256t, "event 0: "),
	HOSTILE_BUILT("total-too-large", trace_total_too_large, "event "),
	HOSTILE_EVENTS("segment-event-wraps", events_segment_event_wraps, "event 0: "),
	HOSTILE_EVENTS("segment-event-overlap", events_segment_event_overlap, "event 2: "),
	HOSTILE_EVENTS("segment-zero", events_segment_zero, "event 2: "),
	HOSTILE_BUILT("start-segment-overlap", trace_start_segment_overlap, "event 3: "),
	HOSTILE_EVENTS("unmap-twice", events_unmap_twice, "event 5: "),
	HOSTILE_EVENTS("map-misaligned", events_map_misaligned, "event 0: "),
	HOSTILE_BUILT("unmap-huge", trace_unmap_huge, "event 2: "),
	HOSTILE_BUILT("final-wraps", trace_final_wraps, "final segment 0"),
	HOSTILE_BUILT("final-overlap", trace_final_overlap, "final segment 1"),
	HOSTILE_BUILT("final-block-sentinel", trace_final_block_sentinel,
		      "final segment 0 (0x7f0000000000, 2097152 bytes): block 1"),
	HOSTILE_BUILT("pending-contradicted", trace_pending_contradicted, "event 3: "),
	HOSTILE_BUILT("gc-nan", trace_gc_nan, "garbage_collection_threshold"),
	HOSTILE_BUILT("gc-inf", trace_gc_inf, "garbage_collection_threshold"),
	HOSTILE_BUILT("roundup-not-pow2", trace_roundup_not_pow2, "roundup_power2_divisions"),
	HOSTILE_BUILT("max-split-small", trace_max_split_small,
		      "max_split_size_mb too small, must be >= 20"),
	HOSTILE_BUILT("conf-huge", trace_conf_huge, "bytes)"),
};

static CcaSnapshot *
hostile_build(const Hostile *h)
{
	if (h->build != NULL)
		return h->build();
	CcaSnapshot *snap = snap_new(h->name);
	push_rows(snap, h->events, h->n_events);
	return snap;
}

/* Replays SNAP with OPT's options (and the invariant walker) and returns
 * the error, which must be a one-line CCA_INPUT_ERROR or settings error. */
static GError *
replay_error(const CcaSnapshot *snap, bool whatif)
{
	CcaReplayOptions opt;
	cca_replay_options_init(&opt);
	opt.check_invariants = true;
	opt.force_whatif = whatif;
	CcaReplayResult res;
	GError *error = NULL;
	gboolean ok = cca_replay_run(snap, &opt, &res, &error);
	cca_replay_result_clear(&res);
	if (ok)
		g_assert_null(error);
	return error;
}

static char *
write_trace(const CcaSnapshot *snap, const char *dir, const char *name)
{
	g_autofree char *file = g_strdup_printf("hostile-model-%s.msgpack", name);
	char *path = g_build_filename(dir, file, NULL);
	GError *error = NULL;
	g_assert_true(cca_trace_write(snap, path, &error));
	g_assert_no_error(error);
	return path;
}

static void
assert_refused(GError *error, const char *expect)
{
	g_assert_nonnull(error);
	g_test_message("%s", error->message);
	g_assert_null(strchr(error->message, '\n'));
	g_assert_cmpuint(strlen(error->message), <, 1000);
	g_assert_nonnull(strstr(error->message, expect));
	g_error_free(error);
}

static void
test_refused(gconstpointer data)
{
	const Hostile *h = data;
	g_autoptr(CcaSnapshot) snap = hostile_build(h);
	/* held in memory, as a pickle's events are */
	assert_refused(replay_error(snap, false), h->expect);
	assert_refused(replay_error(snap, true), h->expect);
	/* streamed from a msgpack trace */
	g_autofree char *dir = g_dir_make_tmp("test-hostile-traces-XXXXXX", NULL);
	g_assert_nonnull(dir);
	g_autofree char *path = write_trace(snap, dir, h->name);
	GError *error = NULL;
	g_autoptr(CcaSnapshot) back = cca_snapshot_load(path, &error);
	g_assert_no_error(error);
	assert_refused(replay_error(back, false), h->expect);
	g_assert_cmpint(g_unlink(path), ==, 0);
	g_assert_cmpint(g_rmdir(dir), ==, 0);
}

/* ------------------------------------------------- consistent traces */

static void
assert_replays(const CcaSnapshot *snap, bool check)
{
	CcaReplayOptions opt;
	cca_replay_options_init(&opt);
	opt.check_invariants = true;
	opt.check = check;
	CcaReplayResult res;
	GError *error = NULL;
	g_assert_true(cca_replay_run(snap, &opt, &res, &error));
	g_assert_no_error(error);
	if (check && !res.check_passed)
		g_test_message("%s", res.check_message);
	g_assert_true(!check || res.check_passed);
	cca_replay_result_clear(&res);
}

/* free_requested then free_completed of one address, apart (a block used
 * on another stream, record_stream) or adjacent: the normal pairs. */
static void
test_free_pairs_accepted(void)
{
	g_autoptr(CcaSnapshot) snap = snap_new("free-pairs");
	const Push events[] = {
		{CCA_ACTION_SEGMENT_ALLOC, S0, 2 * CCA_MIB},
		{CCA_ACTION_ALLOC, S0, 512},
		{CCA_ACTION_ALLOC, S0 + 512, 512},
		{CCA_ACTION_FREE_REQUESTED, S0, 512},
		{CCA_ACTION_FREE_REQUESTED, S0 + 512, 512},
		{CCA_ACTION_FREE_COMPLETED, S0 + 512, 512},
		{CCA_ACTION_ALLOC, S0 + 512, 512},
		{CCA_ACTION_FREE_COMPLETED, S0, 512},
		{CCA_ACTION_FREE_REQUESTED, S0 + 512, 512},
		{CCA_ACTION_FREE_COMPLETED, S0 + 512, 512},
	};
	PUSH_ROWS(snap, events);
	assert_replays(snap, false);
}

/* A mid-run trace whose final blocks are all pending frees: the frees
 * were requested in the trace (stream-ordered), their free_completed
 * comes after the dump.  It replays to the recorded final state. */
static void
test_mid_run_all_pending(void)
{
	g_autoptr(CcaSnapshot) snap = snap_new("mid-run-all-pending");
	add_pending_segment(snap);
	g_array_index(snap->blocks, CcaSnapBlock, 0).requested_size = 512;
	g_array_index(snap->blocks, CcaSnapBlock, 1).requested_size = 512;
	const Push events[] = {
		{CCA_ACTION_FREE_REQUESTED, S0, 512},
		{CCA_ACTION_ALLOC, S0 + 512, 512},
		{CCA_ACTION_FREE_REQUESTED, S0 + 512, 512},
	};
	PUSH_ROWS(snap, events);
	assert_replays(snap, true);
}

/* The same final state, the blocks pending before the trace began and
 * the trace only completing other frees. */
static void
test_mid_run_pending_before_start(void)
{
	g_autoptr(CcaSnapshot) snap = snap_new("mid-run-pending-at-start");
	add_pending_segment(snap);
	g_array_index(snap->blocks, CcaSnapBlock, 0).requested_size = 512;
	g_array_index(snap->blocks, CcaSnapBlock, 1).requested_size = 512;
	const Push events[] = {
		{CCA_ACTION_ALLOC, S0 + 1024, 512},
		{CCA_ACTION_FREE_REQUESTED, S0 + 1024, 512},
		{CCA_ACTION_FREE_COMPLETED, S0 + 1024, 512},
	};
	PUSH_ROWS(snap, events);
	assert_replays(snap, true);
}

/* The bound itself is accepted: a request of 256 TiB - 1 replays without
 * overflowing a statistic (the simulated device has no capacity here). */
static void
test_size_bound_accepted(void)
{
	g_autoptr(CcaSnapshot) snap = snap_new("size-bound");
	const Push events[] = {
		{CCA_ACTION_ALLOC, S0, CCA_REPLAY_MAX_BYTES},
		{CCA_ACTION_FREE_REQUESTED, S0, CCA_REPLAY_MAX_BYTES},
		{CCA_ACTION_FREE_COMPLETED, S0, CCA_REPLAY_MAX_BYTES},
	};
	PUSH_ROWS(snap, events);
	CcaReplayOptions opt;
	cca_replay_options_init(&opt);
	opt.check_invariants = true;
	opt.keep_going = true;
	CcaReplayResult res;
	GError *error = NULL;
	g_assert_true(cca_replay_run(snap, &opt, &res, &error));
	g_assert_no_error(error);
	g_assert_cmpint(res.stats.reserved_bytes[CCA_STAT_ALL].peak, >=, 0);
	cca_replay_result_clear(&res);
}

/* With expandable segments a request larger than a whole reservation
 * (1 1/8 of the device memory) on a device without a capacity is an OOM:
 * torch's cuMemCreate fails before the mapping runs off the reservation. */
static void
test_expandable_larger_than_reservation(void)
{
	g_autoptr(CcaSnapshot) snap = snap_new("expandable-huge-request");
	push(snap, CCA_ACTION_ALLOC, S0, 2048 * CCA_MIB);
	CcaSettings settings;
	cca_settings_init(&settings);
	GError *error = NULL;
	g_assert_true(cca_settings_parse(&settings, "expandable_segments:True", &error));
	CcaReplayOptions opt;
	cca_replay_options_init(&opt);
	opt.settings = &settings;
	opt.device_memory = 1024 * CCA_MIB;
	opt.check_invariants = true;
	CcaReplayResult res;
	g_assert_true(cca_replay_run(snap, &opt, &res, &error));
	g_assert_no_error(error);
	g_assert_true(res.stopped_by_oom);
	cca_replay_result_clear(&res);
	cca_settings_clear(&settings);
}

/* ----------------------------------------------------------------- main */

static int
write_corpus(const char *dir)
{
	for (gsize i = 0; i < G_N_ELEMENTS(hostile); i++) {
		g_autoptr(CcaSnapshot) snap = hostile_build(&hostile[i]);
		g_autofree char *path = write_trace(snap, dir, hostile[i].name);
		g_print("%s\n", path);
	}
	return 0;
}

int
main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "--write-corpus") == 0)
		return write_corpus(argv[2]);
	g_log_set_always_fatal(G_LOG_LEVEL_WARNING | G_LOG_LEVEL_CRITICAL);
	g_test_init(&argc, &argv, NULL);
	CCA_TEST_ADD_ROWS("/replay/refuse", hostile, name, test_refused);
	g_test_add_func("/replay/accept/free-pairs", test_free_pairs_accepted);
	g_test_add_func("/replay/accept/mid-run-all-pending", test_mid_run_all_pending);
	g_test_add_func("/replay/accept/mid-run-pending-before-start",
			test_mid_run_pending_before_start);
	g_test_add_func("/replay/accept/size-bound", test_size_bound_accepted);
	g_test_add_func("/replay/accept/expandable-larger-than-reservation",
			test_expandable_larger_than_reservation);
	return g_test_run();
}
