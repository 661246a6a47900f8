/* test-trace.c - the msgpack trace format (sim/read/trace.c) and byte sizes
 * (sim/util/size.c).
 *
 * Round trips compare every field of every table entry, segment, block
 * and event between a snapshot and its written-and-reloaded trace.  The
 * corrupt-input cases are built with msgpack-c from a minimal valid trace
 * (one tweak each) plus the committed files of tests/data/msgpack-bad/;
 * each must fail with one CCA_INPUT_ERROR line naming the file and an
 * offset, and never crash or over-allocate.  `-m perf` adds a timing of
 * convert and streaming on a large real trace.  /json/escape covers the
 * JSON string writer of sim/util/json.c used by `info --json`.
 */
#include "config.h"

#include <errno.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <msgpack.h>
#include <string.h>

#include "input.h"
#include "json.h"
#include "size.h"
#include "snapshot.h"
#include "event_cursor.h"
#include "snapshot_load.h"
#include "testutil.h"
#include "trace.h"
#include "trace_write.h"

/* ------------------------------------------------------------------ */
/* Helpers                                                             */
/* ------------------------------------------------------------------ */

/* A fresh temporary directory, removed (with its files) by tmpdir_free. */
static char *
tmpdir_new(void)
{
	g_autoptr(GError) error = NULL;
	char *dir = g_dir_make_tmp("test-trace-XXXXXX", &error);
	g_assert_no_error(error);
	return dir;
}

/* Number of entries in DIR. */
static guint
dir_entries(const char *dir)
{
	g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
	guint n = 0;
	g_assert_nonnull(d);
	while (g_dir_read_name(d))
		n++;
	return n;
}

static void
tmpdir_free(char *dir)
{
	g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
	const char *name;
	while (d && (name = g_dir_read_name(d))) {
		g_autofree char *p = g_build_filename(dir, name, NULL);
		g_unlink(p);
	}
	g_rmdir(dir);
	g_free(dir);
}

/* Loads LEN bytes as a trace named NAME through cca_trace_load_input(). */
static CcaSnapshot *
load_bytes(const void *data, size_t len, const char *name, GError **error)
{
	CcaInput input = {0};
	input.heap = g_malloc(len + 1);
	memcpy(input.heap, data, len);
	input.data = input.heap;
	input.len = len;
	input.path = g_strdup(name);
	CcaSnapshot *snap = cca_trace_load_input(&input, error);
	g_assert_null(input.heap); /* ownership moved */
	cca_input_clear(&input);
	return snap;
}

static uint64_t assert_snapshots_equal(const CcaSnapshot *a, const CcaSnapshot *b);

/* load_bytes() through cca_trace_load_input_streaming(): the events'
 * fields are checked as cursors read them, or by cca_event_cursor_check(). */
static CcaSnapshot *
load_bytes_streaming(const void *data, size_t len, const char *name, GError **error)
{
	CcaInput input = {0};
	input.heap = g_malloc(len + 1);
	memcpy(input.heap, data, len);
	input.data = input.heap;
	input.len = len;
	input.path = g_strdup(name);
	CcaSnapshot *snap = cca_trace_load_input_streaming(&input, error);
	g_assert_null(input.heap);
	cca_input_clear(&input);
	return snap;
}

/* The streaming load of LEN bytes at DATA finds what the full load did
 * (EAGER, or the error EAGER_ERROR): the same snapshot, pool_id entries
 * counted, or the same one-line error, from the load, a cursor or
 * cca_event_cursor_check(); READ_FIRST streams every event before the
 * check, as a replay does. */
static void
assert_streaming_same(const void *data, size_t len, const char *name, const CcaSnapshot *eager,
		      const GError *eager_error, gboolean read_first)
{
	g_autoptr(GError) local = NULL;
	g_autoptr(CcaSnapshot) snap = load_bytes_streaming(data, len, name, &local);
	if (snap != NULL && read_first) {
		for (int d = 0; d < snap->n_devices && local == NULL; d++) {
			g_autoptr(CcaEventCursor) cur = cca_event_cursor_new(snap, d);
			CcaEvent ev;
			while (cca_event_cursor_next(cur, &ev, &local))
				;
			/* a cursor's error is the first bad event of its device;
			 * the check names the first of the file */
			g_clear_error(&local);
		}
	}
	if (snap != NULL)
		cca_event_cursor_check(snap, snap->n_devices, &local);
	if (eager_error != NULL) {
		g_assert_nonnull(local);
		g_assert_cmpstr(local->message, ==, eager_error->message);
		return;
	}
	g_assert_no_error(local);
	g_assert_nonnull(snap);
	cca_test_assert_newer_equal(eager, snap);
	assert_snapshots_equal(eager, snap);
}

/* Asserts ERROR is one CCA_INPUT_ERROR line "NAME: offset N: ...". */
static void
assert_load_error(const GError *error, const char *name)
{
	g_assert_nonnull(error);
	g_assert_true(error->domain == CCA_INPUT_ERROR);
	g_assert_true(g_str_has_prefix(error->message, name));
	g_assert_nonnull(strstr(error->message, ": offset "));
	g_assert_null(strchr(error->message, '\n'));
}

static void
assert_settings_equal(const CcaRecordedSettings *a, const CcaRecordedSettings *b)
{
	g_assert_cmpint(a->present, ==, b->present);
	if (!a->present)
		return;
	g_assert_cmpstr(a->conf, ==, b->conf);
	g_assert_cmpint(a->max_split_size, ==, b->max_split_size);
	g_assert_cmpfloat(a->garbage_collection_threshold, ==, b->garbage_collection_threshold);
	g_assert_cmpint(a->expandable_segments, ==, b->expandable_segments);
	g_assert_cmpint(a->pinned_num_register_threads, ==, b->pinned_num_register_threads);
	g_assert_cmpint(a->release_lock_on_cudamalloc, ==, b->release_lock_on_cudamalloc);
	g_assert_cmpint(a->pinned_use_cuda_host_register, ==, b->pinned_use_cuda_host_register);
	g_assert_cmpint(a->has_graph_capture_record_stream_reuse, ==,
			b->has_graph_capture_record_stream_reuse);
	if (a->has_graph_capture_record_stream_reuse)
		g_assert_cmpint(a->graph_capture_record_stream_reuse, ==,
				b->graph_capture_record_stream_reuse);
	for (int i = 0; i < 16; i++)
		g_assert_cmpuint(a->roundup_power2_divisions[i], ==,
				 b->roundup_power2_divisions[i]);
}

static void
assert_tables_equal(const CcaSnapshot *a, const CcaSnapshot *b)
{
	g_assert_cmpuint(a->strings->len, ==, b->strings->len);
	for (guint i = 0; i < a->strings->len; i++)
		g_assert_cmpstr(cca_snapshot_string(a, i), ==, cca_snapshot_string(b, i));
	g_assert_cmpuint(a->frames->len, ==, b->frames->len);
	for (guint i = 1; i < a->frames->len; i++) {
		const CcaFrame *x = &g_array_index(a->frames, CcaFrame, i);
		const CcaFrame *y = &g_array_index(b->frames, CcaFrame, i);
		g_assert_cmpuint(x->name, ==, y->name);
		g_assert_cmpuint(x->filename, ==, y->filename);
		g_assert_cmpint(x->line, ==, y->line);
	}
	g_assert_cmpuint(cca_snapshot_n_stacks(a), ==, cca_snapshot_n_stacks(b));
	g_assert_cmpuint(a->stack_offsets->len, ==, b->stack_offsets->len);
	for (guint i = 0; i < a->stack_offsets->len; i++)
		g_assert_cmpuint(g_array_index(a->stack_offsets, uint32_t, i), ==,
				 g_array_index(b->stack_offsets, uint32_t, i));
	g_assert_cmpuint(a->stack_frames->len, ==, b->stack_frames->len);
	for (guint i = 0; i < a->stack_frames->len; i++)
		g_assert_cmpuint(g_array_index(a->stack_frames, uint32_t, i), ==,
				 g_array_index(b->stack_frames, uint32_t, i));
}

static void
assert_block_equal(const CcaSnapBlock *x, const CcaSnapBlock *y)
{
	g_assert_cmpuint(x->address, ==, y->address);
	g_assert_cmpuint(x->size, ==, y->size);
	g_assert_cmpuint(x->requested_size, ==, y->requested_size);
	g_assert_cmpuint(x->stack, ==, y->stack);
	g_assert_cmpuint(x->state, ==, y->state);
}

static void
assert_segments_equal(const CcaSnapshot *a, const CcaSnapshot *b)
{
	g_assert_cmpuint(a->segments->len, ==, b->segments->len);
	for (guint i = 0; i < a->segments->len; i++) {
		const CcaSnapSegment *x = &g_array_index(a->segments, CcaSnapSegment, i);
		const CcaSnapSegment *y = &g_array_index(b->segments, CcaSnapSegment, i);
		g_assert_cmpint(x->device, ==, y->device);
		g_assert_cmpuint(x->address, ==, y->address);
		g_assert_cmpuint(x->total_size, ==, y->total_size);
		g_assert_cmpuint(x->allocated_size, ==, y->allocated_size);
		g_assert_cmpuint(x->active_size, ==, y->active_size);
		g_assert_cmpuint(x->requested_size, ==, y->requested_size);
		g_assert_cmpuint(x->stream, ==, y->stream);
		g_assert_cmpint(x->is_small, ==, y->is_small);
		g_assert_cmpint(x->is_expandable, ==, y->is_expandable);
		g_assert_cmpint(x->pool_id[0], ==, y->pool_id[0]);
		g_assert_cmpint(x->pool_id[1], ==, y->pool_id[1]);
		g_assert_cmpuint(x->stack, ==, y->stack);
		g_assert_cmpuint(x->n_blocks, ==, y->n_blocks);
		for (guint j = 0; j < x->n_blocks; j++)
			assert_block_equal(
				&g_array_index(a->blocks, CcaSnapBlock, x->first_block + j),
				&g_array_index(b->blocks, CcaSnapBlock, y->first_block + j));
	}
	g_assert_cmpuint(a->annotations->len, ==, b->annotations->len);
	for (guint i = 0; i < a->annotations->len; i++) {
		const CcaAnnotation *x = &g_array_index(a->annotations, CcaAnnotation, i);
		const CcaAnnotation *y = &g_array_index(b->annotations, CcaAnnotation, i);
		g_assert_cmpuint(x->stage, ==, y->stage);
		g_assert_cmpuint(x->name, ==, y->name);
		g_assert_cmpint(x->device, ==, y->device);
		g_assert_cmpint(x->time_us, ==, y->time_us);
	}
}

static void
assert_event_equal(const CcaEvent *x, const CcaEvent *y)
{
	g_assert_cmpuint(x->action, ==, y->action);
	g_assert_cmpuint(x->addr, ==, y->addr);
	g_assert_cmpuint(x->size, ==, y->size);
	g_assert_cmpuint(x->stream, ==, y->stream);
	g_assert_cmpint(x->time_us, ==, y->time_us);
	g_assert_cmpuint(x->stack, ==, y->stack);
	g_assert_cmpuint(x->compile_context, ==, y->compile_context);
	g_assert_cmpuint(x->user_metadata, ==, y->user_metadata);
	g_assert_cmpuint(x->has_pool_id, ==, y->has_pool_id);
	if (x->has_pool_id) {
		g_assert_cmpint(x->pool_id[0], ==, y->pool_id[0]);
		g_assert_cmpint(x->pool_id[1], ==, y->pool_id[1]);
	}
}

/* Compares every event of every device, reading both through cursors. */
static uint64_t
assert_events_equal(const CcaSnapshot *a, const CcaSnapshot *b)
{
	uint64_t total = 0;
	g_assert_cmpint(a->n_devices, ==, b->n_devices);
	for (int d = 0; d < a->n_devices; d++) {
		g_autoptr(CcaEventCursor) ca = cca_event_cursor_new(a, d);
		g_autoptr(CcaEventCursor) cb = cca_event_cursor_new(b, d);
		g_autoptr(GError) error = NULL;
		CcaEvent x, y;
		g_assert_cmpuint(a->n_events[d], ==, b->n_events[d]);
		while (cca_event_cursor_next(ca, &x, &error)) {
			g_assert_true(cca_event_cursor_next(cb, &y, &error));
			assert_event_equal(&x, &y);
			total++;
		}
		g_assert_no_error(error);
		g_assert_false(cca_event_cursor_next(cb, &y, &error));
		g_assert_no_error(error);
		g_assert_cmpuint(cca_event_cursor_position(cb), ==, a->n_events[d]);
	}
	return total;
}

static uint64_t
assert_snapshots_equal(const CcaSnapshot *a, const CcaSnapshot *b)
{
	g_assert_cmpint(a->pickle_protocol, ==, b->pickle_protocol);
	assert_settings_equal(&a->settings, &b->settings);
	assert_tables_equal(a, b);
	assert_segments_equal(a, b);
	return assert_events_equal(a, b);
}

/* Writes SNAP to DIR/NAME, reloads it, checks it equals SNAP and streams. */
static CcaSnapshot *
roundtrip(const CcaSnapshot *snap, const char *dir, const char *name)
{
	g_autoptr(GError) error = NULL;
	g_autofree char *path = g_build_filename(dir, name, NULL);
	gboolean ok = cca_trace_write(snap, path, &error);
	g_assert_no_error(error);
	g_assert_true(ok);
	CcaSnapshot *back = cca_test_load(path);
	g_assert_cmpint(back->format, ==, CCA_FORMAT_MSGPACK);
	g_assert_cmpstr(back->source, ==, path);
	if (cca_trace_origin(snap) != NULL)
		g_assert_cmpstr(cca_trace_origin(back), ==, cca_trace_origin(snap));
	else
		g_assert_cmpstr(cca_trace_origin(back), ==, path);
	for (int d = 0; d < back->n_devices; d++)
		g_assert_null(back->events[d]);
	uint64_t n = assert_snapshots_equal(snap, back);
	g_test_message("%s: %" G_GUINT64_FORMAT " events round-tripped", name, n);
	return back;
}

/* Reads a whole file. */
static GBytes *
read_bytes(const char *path)
{
	g_autoptr(GError) error = NULL;
	char *data;
	gsize len;
	g_assert_true(g_file_get_contents(path, &data, &len, &error));
	return g_bytes_new_take(data, len);
}

/* Loads SOURCE (a fixture), round-trips it through a trace, then writes
 * the reloaded trace again and checks the second file is byte-identical
 * to the first. */
static void
roundtrip_fixture(const char *source)
{
	char *dir = tmpdir_new();
	g_autoptr(CcaSnapshot) snap = cca_test_load(source);
	g_autoptr(CcaSnapshot) back = roundtrip(snap, dir, "a.msgpack");
	g_autoptr(CcaSnapshot) again = roundtrip(back, dir, "b.msgpack");
	g_autofree char *pa = g_build_filename(dir, "a.msgpack", NULL);
	g_autofree char *pb = g_build_filename(dir, "b.msgpack", NULL);
	g_autoptr(GBytes) ba = read_bytes(pa);
	g_autoptr(GBytes) bb = read_bytes(pb);
	g_assert_true(g_bytes_equal(ba, bb));
	assert_snapshots_equal(snap, again);
	cca_test_assert_newer_equal(snap, again);
	tmpdir_free(dir);
}

/* ------------------------------------------------------------------ */
/* Round trips                                                         */
/* ------------------------------------------------------------------ */

static void
test_roundtrip_samples(void)
{
	static const char *const samples[] = {
		"pytorch-2.11/samples/snap_default_2.11.pickle",
		"pytorch-2.11/samples/snap_expandable_2.11.pickle",
		"pytorch-2.11/samples/snap_state_2.11.pickle",
	};
	for (size_t i = 0; i < G_N_ELEMENTS(samples); i++) {
		g_autofree char *path = cca_test_trace_path(samples[i]);
		roundtrip_fixture(path);
	}
}

static GBytes *write_sample_trace(const char *dir, const char *file, CcaSnapshot **snap);

/* Whether BYTES hold the bytes of STR anywhere. */
static gboolean
bytes_contain(GBytes *bytes, const char *str)
{
	gsize len, n = strlen(str);
	const char *p = g_bytes_get_data(bytes, &len);
	for (gsize i = 0; i + n <= len; i++)
		if (memcmp(p + i, str, n) == 0)
			return TRUE;
	return FALSE;
}

/* Snapshots of releases after 2.11: convert keeps every entry's pool id
 * (9-element events) and what the header's newer_keys map says, loaded
 * plainly or as convert loads (compact); a 2.11 sample's trace has no
 * newer_keys, so its bytes are those of earlier ccasims. */
static void
test_roundtrip_newer(void)
{
	static const char *const fixtures[] = {"newer-2.14.pickle", "newer-hostile.pickle",
					       "post-2.11.pickle"};
	for (size_t i = 0; i < G_N_ELEMENTS(fixtures); i++) {
		g_autofree char *path = cca_test_data_path(fixtures[i]);
		roundtrip_fixture(path);
		char *dir = tmpdir_new();
		g_autoptr(GError) error = NULL;
		g_autoptr(CcaSnapshot) compact = cca_snapshot_load_compact(path, &error);
		g_assert_no_error(error);
		g_autoptr(CcaSnapshot) back = roundtrip(compact, dir, "c.msgpack");
		g_autoptr(CcaSnapshot) plain = cca_test_load(path);
		assert_events_equal(plain, back);
		cca_test_assert_newer_equal(plain, back);
		cca_test_assert_newer_equal(compact, back);
		g_autofree char *file = g_build_filename(dir, "c.msgpack", NULL);
		g_autoptr(GBytes) bytes = read_bytes(file);
		g_assert_true(bytes_contain(bytes, "newer_keys"));
		tmpdir_free(dir);
	}
	g_autofree char *newer_path = cca_test_data_path("newer-2.14.pickle");
	g_autoptr(CcaSnapshot) newer = cca_test_load(newer_path);
	g_assert_cmpuint(newer->newer.pool_id_entries, ==, 44);
	char *dir = tmpdir_new();
	CcaSnapshot *sample = NULL;
	g_autoptr(GBytes) bytes = write_sample_trace(dir, "s.msgpack", &sample);
	g_assert_false(bytes_contain(bytes, "newer_keys"));
	cca_snapshot_free(sample);
	tmpdir_free(dir);
}

static void
test_roundtrip_real(void)
{
	static const char *const traces[] = {
		"pytorch-2.11/multistream.default.pickle.xz",
		"pytorch-2.11/dyninfer.cap.pickle.xz",
	};
	for (size_t i = 0; i < G_N_ELEMENTS(traces); i++) {
		g_autofree char *path = cca_test_trace_path(traces[i]);
		roundtrip_fixture(path);
	}
}

/* Appends an event to device D of a hand-built snapshot. */
static void
built_event(CcaSnapshot *snap, int d, CcaEvent ev)
{
	g_array_append_val(snap->events[d], ev);
	snap->n_events[d]++;
}

/* A hand-built snapshot with the edge cases the samples lack: 64-bit
 * extremes, negative streams and pools, missing times, pool ids, a string
 * longer than the writer's buffer, three devices (one without events). */
static CcaSnapshot *
built_snapshot(void)
{
	CcaSnapshot *snap = cca_snapshot_new();
	snap->source = g_strdup("built by hand");
	snap->pickle_protocol = 5;
	g_autofree char *big = g_strnfill(200000, 'x');
	uint32_t s_name = cca_snapshot_intern(snap, "f\xc3\xa9", 3);
	uint32_t s_file = cca_snapshot_intern(snap, big, strlen(big));
	uint32_t s_start = cca_snapshot_intern(snap, "START", 5);
	CcaFrame fr = {s_name, s_file, -42};
	g_array_append_val(snap->frames, fr);
	fr.line = INT64_MAX;
	g_array_append_val(snap->frames, fr);
	uint32_t frames[] = {1, 2, 1, 2}, ends[] = {3, 4}; /* stacks 1 and 2 */
	g_array_append_vals(snap->stack_frames, frames, 4);
	g_array_append_vals(snap->stack_offsets, ends, 2);

	snap->settings.present = true;
	snap->settings.conf = g_strdup("expandable_segments:True,max_split_size_mb:128");
	snap->settings.max_split_size = 128 << 20;
	snap->settings.garbage_collection_threshold = 0.6;
	snap->settings.expandable_segments = true;
	snap->settings.pinned_num_register_threads = 8;
	snap->settings.has_graph_capture_record_stream_reuse = true;
	snap->settings.graph_capture_record_stream_reuse = true;
	for (int i = 0; i < 16; i++)
		snap->settings.roundup_power2_divisions[i] = (uint32_t)i * 3;

	CcaSnapBlock blocks[] = {
		{UINT64_MAX - 1023, 512, 17, 2, CCA_BLOCK_ACTIVE_ALLOCATED},
		{UINT64_MAX - 511, 512, 0, 0, CCA_BLOCK_ACTIVE_PENDING_FREE},
	};
	g_array_append_vals(snap->blocks, blocks, 2);
	CcaSnapSegment seg = {.device = 2,
			      .address = UINT64_MAX - 1023,
			      .total_size = 1024,
			      .allocated_size = 512,
			      .active_size = 1024,
			      .requested_size = 17,
			      .stream = (uint64_t)-1,
			      .is_small = true,
			      .pool_id = {-1, INT64_MIN},
			      .stack = 2,
			      .first_block = 0,
			      .n_blocks = 2};
	g_array_append_val(snap->segments, seg);
	CcaSnapSegment empty = {.device = -1, .first_block = 2, .n_blocks = 0};
	g_array_append_val(snap->segments, empty);
	CcaAnnotation ann[] = {{s_start, s_name, 0, 1796003718032017},
			       {s_start, 0, 1, CCA_TIME_NONE}};
	g_array_append_vals(snap->annotations, ann, 2);

	snap->n_devices = 3;
	snap->events = g_new0(GArray *, 3);
	snap->n_events = g_new0(uint64_t, 3);
	for (int d = 0; d < 3; d++)
		snap->events[d] = g_array_new(FALSE, TRUE, sizeof(CcaEvent));
	built_event(snap, 0,
		    (CcaEvent){.action = CCA_ACTION_SEGMENT_ALLOC,
			       .addr = UINT64_MAX,
			       .size = 1ull << 63,
			       .stream = (uint64_t)INT64_MIN,
			       .time_us = CCA_TIME_NONE});
	built_event(snap, 0,
		    (CcaEvent){.action = CCA_ACTION_OOM,
			       .addr = 0,
			       .size = 127,
			       .stream = 128,
			       .time_us = -1,
			       .stack = 2,
			       .compile_context = s_name,
			       .user_metadata = s_file});
	built_event(snap, 2,
		    (CcaEvent){.action = CCA_ACTION_SNAPSHOT,
			       .time_us = INT64_MAX,
			       .has_pool_id = 1,
			       .pool_id = {INT64_MIN, -5}});
	built_event(snap, 2,
		    (CcaEvent){.action = CCA_ACTION_FREE_COMPLETED,
			       .addr = 1u << 16,
			       .size = 1u << 8,
			       .stream = 0xffff,
			       .time_us = 1ll << 40,
			       .stack = 1,
			       .has_pool_id = 1,
			       .pool_id = {0, 1}});
	return snap;
}

static void
test_roundtrip_built(void)
{
	char *dir = tmpdir_new();
	g_autoptr(CcaSnapshot) snap = built_snapshot();
	g_autoptr(CcaSnapshot) back = roundtrip(snap, dir, "built.msgpack");
	g_autoptr(CcaSnapshot) again = roundtrip(back, dir, "built2.msgpack");
	assert_snapshots_equal(snap, again);
	/* the events of device 1 stream as empty; cursors are independent */
	g_autoptr(CcaEventCursor) c1 = cca_event_cursor_new(back, 1);
	g_autoptr(CcaEventCursor) c2a = cca_event_cursor_new(back, 2);
	g_autoptr(CcaEventCursor) c2b = cca_event_cursor_new(back, 2);
	CcaEvent ev;
	g_assert_false(cca_event_cursor_next(c1, &ev, NULL));
	g_assert_true(cca_event_cursor_next(c2a, &ev, NULL));
	g_assert_true(cca_event_cursor_next(c2a, &ev, NULL));
	g_assert_cmpuint(ev.pool_id[1], ==, 1);
	g_assert_true(cca_event_cursor_next(c2b, &ev, NULL));
	g_assert_cmpint(ev.pool_id[0], ==, INT64_MIN);
	g_assert_false(cca_event_cursor_next(c2a, &ev, NULL));
	/* a trace written over its own file (the writer reads while writing) */
	g_autofree char *path = g_build_filename(dir, "built.msgpack", NULL);
	g_autoptr(GError) error = NULL;
	g_assert_true(cca_trace_write(back, path, &error));
	g_assert_no_error(error);
	g_autoptr(CcaSnapshot) self = cca_test_load(path);
	assert_snapshots_equal(snap, self);
	/* three devices through the streaming load: held (device 2) or
	 * streamed, the same snapshot; every byte changed, the same outcome
	 * as the full load (inside the 200000-byte string only its first and
	 * last 64 bytes: each load reads the whole string, so all of them
	 * would cost len^2 and took 114 s, 875 s under the sanitizers) */
	g_autoptr(GBytes) bytes = read_bytes(path);
	gsize len;
	const unsigned char *data = g_bytes_get_data(bytes, &len);
	g_autoptr(CcaSnapshot) held = load_bytes_streaming(data, len, "built.msgpack", &error);
	g_assert_no_error(error);
	g_assert_true(cca_event_cursor_hold_one(held, 2, &error));
	g_assert_no_error(error);
	g_assert_nonnull(held->events[2]);
	assert_snapshots_equal(snap, held);
	g_autofree unsigned char *buf = g_memdup2(data, len);
	gsize big_from = 0, big_to = 0; /* the run of 'x' of the long string */
	for (gsize at = 0, run = 0; at < len; at++) {
		run = data[at] == 'x' ? run + 1 : 0;
		if (run > big_to - big_from) {
			big_from = at + 1 - run;
			big_to = at + 1;
		}
	}
	g_assert_cmpuint(big_to - big_from, ==, 200000);
	for (gsize at = 0; at < len; at++) {
		static const unsigned char nasty[] = {0x7f, 0xa1, 0xc0, 0xc1, 0xcf, 0xdc, 0xff};
		if (at == big_from + 64)
			at = big_to - 64;
		for (gsize k = 0; k < sizeof nasty; k++) {
			buf[at] = nasty[k];
			g_autoptr(GError) local = NULL;
			g_autoptr(CcaSnapshot) m = load_bytes(buf, len, "mut.msgpack", &local);
			assert_streaming_same(buf, len, "mut.msgpack", m, local, (at + k) % 2);
		}
		buf[at] = data[at];
	}
	tmpdir_free(dir);
}

/* ------------------------------------------------------------------ */
/* Bad input                                                           */
/* ------------------------------------------------------------------ */

/* One deviation from the minimal valid trace. */
typedef struct {
	const char *name;
	const char *expect; /* substring of the error message, NULL: load must work */
	const char *format;
	int version;
	int64_t strings_count; /* header count; 0 = right */
	int64_t events_count;
	uint64_t action, addr, stack, compile_context, frame_name, stack_frame, block_state;
	int event_len;
	bool string0, huge_strings, deep_header, no_counts, stack_count_short;
	const char *trailing;
} Tweak;

static void
pack_str(msgpack_packer *pk, const char *s)
{
	msgpack_pack_str(pk, strlen(s));
	msgpack_pack_str_body(pk, s, strlen(s));
}

static void
pack_header(msgpack_packer *pk, const Tweak *t)
{
	msgpack_pack_map(pk, t->no_counts ? 3 : 4 + t->deep_header);
	pack_str(pk, "format");
	pack_str(pk, t->format ? t->format : "ccasim-trace");
	pack_str(pk, "version");
	msgpack_pack_int(pk, t->version ? t->version : 1);
	pack_str(pk, "devices");
	msgpack_pack_int(pk, 1);
	if (t->deep_header) {
		pack_str(pk, "future");
		for (int i = 0; i < 100; i++)
			msgpack_pack_array(pk, 1);
		msgpack_pack_nil(pk);
	}
	if (t->no_counts)
		return;
	pack_str(pk, "counts");
	msgpack_pack_map(pk, 8);
	const char *keys[] = {"strings",  "frames", "stacks",	  "stack_frames",
			      "segments", "blocks", "annotations"};
	int64_t values[] = {t->strings_count ? t->strings_count : 2,
			    2,
			    t->stack_count_short ? 1 : 2,
			    1,
			    1,
			    1,
			    1};
	for (int i = 0; i < 7; i++) {
		pack_str(pk, keys[i]);
		msgpack_pack_int64(pk, values[i]);
	}
	pack_str(pk, "events");
	msgpack_pack_array(pk, 1);
	msgpack_pack_int64(pk, t->events_count ? t->events_count : 1);
}

static void
pack_tables(msgpack_packer *pk, const Tweak *t)
{
	if (t->huge_strings) {
		msgpack_pack_array(pk, UINT32_MAX);
		return;
	}
	msgpack_pack_array(pk, 2);
	pack_str(pk, t->string0 ? "oops" : "");
	pack_str(pk, "x");
	msgpack_pack_array(pk, 2);
	msgpack_pack_array(pk, 3);
	msgpack_pack_int(pk, 0), msgpack_pack_int(pk, 0), msgpack_pack_int(pk, 0);
	msgpack_pack_array(pk, 3);
	msgpack_pack_uint64(pk, t->frame_name ? t->frame_name : 1);
	msgpack_pack_int(pk, 1);
	msgpack_pack_int(pk, 7);
	msgpack_pack_array(pk, 2);
	msgpack_pack_array(pk, 0);
	msgpack_pack_array(pk, 1);
	msgpack_pack_uint64(pk, t->stack_frame ? t->stack_frame : 1);
}

static void
pack_state(msgpack_packer *pk, const Tweak *t)
{
	msgpack_pack_array(pk, 1);
	msgpack_pack_array(pk, 12);
	uint64_t u[] = {4096, 512, 512, 512, 100, 0};
	msgpack_pack_int(pk, 0);
	for (int i = 0; i < 6; i++)
		msgpack_pack_uint64(pk, u[i]);
	msgpack_pack_true(pk);
	msgpack_pack_false(pk);
	msgpack_pack_array(pk, 2);
	msgpack_pack_int(pk, 0), msgpack_pack_int(pk, 0);
	msgpack_pack_int(pk, 1);
	msgpack_pack_array(pk, 1);
	msgpack_pack_array(pk, 5);
	msgpack_pack_uint64(pk, 4096), msgpack_pack_uint64(pk, 512), msgpack_pack_uint64(pk, 100);
	msgpack_pack_int(pk, 1);
	msgpack_pack_uint64(pk, t->block_state ? t->block_state : 1);
	msgpack_pack_array(pk, 1);
	msgpack_pack_array(pk, 4);
	msgpack_pack_int(pk, 1), msgpack_pack_int(pk, 1), msgpack_pack_int(pk, 0);
	msgpack_pack_nil(pk);
}

static void
pack_events(msgpack_packer *pk, const Tweak *t)
{
	msgpack_pack_array(pk, 1);
	int len = t->event_len ? t->event_len : 8;
	msgpack_pack_array(pk, len);
	msgpack_pack_uint64(pk, t->action);
	msgpack_pack_uint64(pk, t->addr ? t->addr : 4096);
	msgpack_pack_uint64(pk, 100);
	msgpack_pack_int64(pk, -1); /* a negative stream is fine */
	msgpack_pack_int64(pk, 5);
	msgpack_pack_uint64(pk, t->stack ? t->stack : 1);
	msgpack_pack_uint64(pk, t->compile_context ? t->compile_context : 1);
	msgpack_pack_uint64(pk, 0);
	for (int i = 8; i < len; i++)
		msgpack_pack_nil(pk);
}

/* The minimal trace with tweak T applied. */
static GBytes *
tweaked_trace(const Tweak *t)
{
	msgpack_sbuffer sb;
	msgpack_packer pk;
	msgpack_sbuffer_init(&sb);
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	pack_header(&pk, t);
	pack_tables(&pk, t);
	if (!t->huge_strings) {
		pack_state(&pk, t);
		pack_events(&pk, t);
	}
	if (t->trailing)
		msgpack_sbuffer_write(&sb, t->trailing, strlen(t->trailing));
	GBytes *bytes = g_bytes_new(sb.data, sb.size);
	msgpack_sbuffer_destroy(&sb);
	return bytes;
}

static void
test_corrupt_tweaks(void)
{
	const Tweak tweaks[] = {
		{.name = "valid", .expect = NULL},
		{.name = "format", .expect = "not a ccasim-trace", .format = "other"},
		{.name = "version", .expect = "unsupported ccasim-trace version 2", .version = 2},
		{.name = "no-counts", .expect = "key counts", .no_counts = true},
		{.name = "strings-count", .expect = "header counts 5", .strings_count = 5},
		{.name = "strings-count-huge", .expect = "string", .strings_count = 1ll << 40},
		{.name = "events-count", .expect = "device 0 events", .events_count = 1000},
		{.name = "huge-string-table", .expect = "bytes that remain", .huge_strings = true},
		{.name = "deep-header", .expect = "deeper", .deep_header = true},
		{.name = "string0", .expect = "string 0 must be empty", .string0 = true},
		{.name = "frame-name", .expect = "name 2 out of range", .frame_name = 2},
		{.name = "stack-frame", .expect = "frame id 9 out of range", .stack_frame = 9},
		{.name = "stack-count", .expect = "stack", .stack_count_short = true},
		{.name = "block-state",
		 .expect = "state 3 out of range (must be below 3)",
		 .block_state = 3},
		{.name = "action", .expect = "action 9 out of range", .action = 9},
		{.name = "event-stack", .expect = "(event 0 of device 0)", .stack = 2},
		{.name = "event-string",
		 .expect = "compile_context 2 out of range",
		 .compile_context = 2},
		{.name = "event-shape",
		 .expect = "event has 10 elements, expected 8 (9 with pool_id)",
		 .event_len = 10},
		{.name = "event-pool", .expect = "pool_id", .event_len = 9},
		{.name = "trailing", .expect = "trailing garbage", .trailing = "\xc0"},
	};
	for (size_t i = 0; i < G_N_ELEMENTS(tweaks); i++) {
		const Tweak *t = &tweaks[i];
		g_autoptr(GBytes) bytes = tweaked_trace(t);
		g_autoptr(GError) error = NULL;
		gsize len;
		const void *data = g_bytes_get_data(bytes, &len);
		g_autoptr(CcaSnapshot) snap = load_bytes(data, len, t->name, &error);
		g_test_message("%s: %s", t->name, error ? error->message : "loaded");
		if (t->expect == NULL) {
			g_assert_no_error(error);
			g_assert_nonnull(snap);
			g_assert_true(cca_sniff_trace(data, len));
			continue;
		}
		g_assert_null(snap);
		assert_load_error(error, t->name);
		if (strstr(error->message, t->expect) == NULL)
			g_error("%s: '%s' does not mention '%s'", t->name, error->message,
				t->expect);
	}
}

/* Raw byte strings that are not traces at all. */
static void
test_corrupt_raw(void)
{
	static const struct {
		const char *name;
		const char *bytes;
		size_t len;
	} raw[] = {
		{"map32-huge", "\xdf\xff\xff\xff\xff\xff\x0a", 7},
		{"array32-huge", "\xdd\xff\xff\xff\xff\x00", 6},
		{"str32-huge", "\xdb\xff\xff\xff\xff", 5},
		{"bad-byte", "\xc1", 1},
		{"empty", "", 0},
		{"nil", "\xc0", 1},
		{"header-only",
		 "\x81\xa6"
		 "format\xac"
		 "ccasim-trace",
		 21},
	};
	for (size_t i = 0; i < G_N_ELEMENTS(raw); i++) {
		g_autoptr(GError) error = NULL;
		g_autoptr(CcaSnapshot) snap =
			load_bytes(raw[i].bytes, raw[i].len, raw[i].name, &error);
		g_test_message("%s: %s", raw[i].name, error ? error->message : "loaded");
		g_assert_null(snap);
		assert_load_error(error, raw[i].name);
	}
}

/* Every file of tests/data/msgpack-bad/ fails to load, through the
 * sniffing loader, with one line naming the file. */
static void
test_corrupt_files(void)
{
	g_autofree char *dir = cca_test_data_path("msgpack-bad");
	g_autoptr(GError) error = NULL;
	g_autoptr(GDir) d = g_dir_open(dir, 0, &error);
	const char *name;
	guint n = 0;

	g_assert_no_error(error);
	while ((name = g_dir_read_name(d))) {
		if (!g_str_has_suffix(name, ".msgpack"))
			continue;
		g_autofree char *path = g_build_filename(dir, name, NULL);
		g_autoptr(GError) local = NULL;
		g_autoptr(CcaSnapshot) snap = cca_snapshot_load(path, &local);
		g_test_message("%s: %s", name, local ? local->message : "loaded");
		g_assert_null(snap);
		g_assert_nonnull(local);
		g_assert_true(local->domain == CCA_INPUT_ERROR);
		g_assert_true(g_str_has_prefix(local->message, path));
		g_assert_null(strchr(local->message, '\n'));
		n++;
	}
	g_assert_cmpuint(n, >=, 10);
}

/* Converts the 2.11 default sample to the msgpack trace FILE in DIR and
 * returns the trace's bytes; the sample as loaded in *SNAP. */
static GBytes *
write_sample_trace(const char *dir, const char *file, CcaSnapshot **snap)
{
	g_autofree char *sample =
		cca_test_trace_path("pytorch-2.11/samples/snap_default_2.11.pickle");
	g_autofree char *path = g_build_filename(dir, file, NULL);
	*snap = cca_test_load(sample);
	g_autoptr(GError) error = NULL;
	g_assert_true(cca_trace_write(*snap, path, &error));
	g_assert_no_error(error);
	return read_bytes(path);
}

/* Every proper prefix of a small converted trace fails cleanly. */
static void
test_truncated_every_prefix(void)
{
	char *dir = tmpdir_new();
	g_autoptr(CcaSnapshot) snap = NULL;
	g_autoptr(GBytes) bytes = write_sample_trace(dir, "t.msgpack", &snap);
	g_autoptr(GError) error = NULL;
	gsize len;
	const unsigned char *data = g_bytes_get_data(bytes, &len);

	for (gsize n = 0; n < len; n++) {
		g_autoptr(GError) local = NULL;
		g_autoptr(CcaSnapshot) cut = load_bytes(data, n, "cut.msgpack", &local);
		if (cut != NULL)
			g_error("a prefix of %" G_GSIZE_FORMAT "/%" G_GSIZE_FORMAT " bytes loaded",
				n, len);
		assert_load_error(local, "cut.msgpack");
		assert_streaming_same(data, n, "cut.msgpack", NULL, local, n % 2);
	}
	g_autoptr(CcaSnapshot) whole = load_bytes(data, len, "whole.msgpack", &error);
	g_assert_no_error(error);
	assert_snapshots_equal(snap, whole);
	g_test_message("%" G_GSIZE_FORMAT " prefixes rejected", len);
	tmpdir_free(dir);
}

/* Streams every event of SNAP; returns FALSE with ERROR on a bad one. */
static gboolean
stream_all(const CcaSnapshot *snap, GError **error)
{
	for (int d = 0; d < snap->n_devices; d++) {
		g_autoptr(CcaEventCursor) cur = cca_event_cursor_new(snap, d);
		CcaEvent ev;
		while (cca_event_cursor_next(cur, &ev, error))
			g_assert_cmpuint(ev.action, <, CCA_ACTION_COUNT);
		if (error && *error)
			return FALSE;
	}
	return TRUE;
}

/* Seeded random byte mutations of a converted sample: each either loads
 * and streams completely or fails with one clean line. */
static void
test_mutations(void)
{
	char *dir = tmpdir_new();
	g_autoptr(CcaSnapshot) snap = NULL;
	g_autoptr(GBytes) bytes = write_sample_trace(dir, "m.msgpack", &snap);
	gsize len;
	const unsigned char *data = g_bytes_get_data(bytes, &len);
	g_autofree unsigned char *buf = g_malloc(len);
	guint32 seed = (guint32)g_test_rand_int();
	g_autoptr(GRand) rng = g_rand_new_with_seed(seed);
	unsigned loaded = 0;

	g_test_message("seed %u", seed);
	for (int round = 0; round < 3000; round++) {
		memcpy(buf, data, len);
		int flips = g_rand_int_range(rng, 1, 4);
		for (int k = 0; k < flips; k++) {
			gsize at = (gsize)g_rand_int_range(rng, 0, (gint32)len);
			static const unsigned char nasty[] = {0x00, 0x7f, 0xc0, 0xc1, 0xcf, 0xd3,
							      0xdc, 0xdd, 0xde, 0xdf, 0xff};
			buf[at] = g_rand_boolean(rng)
					  ? (unsigned char)g_rand_int(rng)
					  : nasty[g_rand_int_range(rng, 0, sizeof nasty)];
		}
		g_autoptr(GError) local = NULL;
		g_autoptr(CcaSnapshot) m = load_bytes(buf, len, "mut.msgpack", &local);
		assert_streaming_same(buf, len, "mut.msgpack", m, local, round % 2);
		if (m == NULL) {
			assert_load_error(local, "mut.msgpack");
			continue;
		}
		g_assert_true(stream_all(m, &local));
		g_assert_no_error(local);
		loaded++;
	}
	g_test_message("%u of 3000 mutants still loaded", loaded);
	tmpdir_free(dir);
}

static void
test_sniff(void)
{
	static const unsigned char good[] = "\x88\xa6"
					    "format\xac"
					    "ccasim-trace";
	static const unsigned char map16[] = "\xde\x00\x08\xa6"
					     "format\xd9\x0c"
					     "ccasim-trace";
	g_assert_true(cca_sniff_trace(good, sizeof good - 1));
	g_assert_true(cca_sniff_trace(map16, sizeof map16 - 1));
	for (size_t n = 0; n + 1 < sizeof good; n++)
		g_assert_false(cca_sniff_trace(good, n));
	g_assert_false(cca_sniff_trace((const unsigned char *)"\x80", 1));
	g_assert_false(cca_sniff_trace((const unsigned char *)"\x81\xa6"
							      "formaX\xac"
							      "ccasim-trace",
				       21));
	g_assert_false(cca_sniff_trace((const unsigned char *)"\x81\xa6"
							      "format\xac"
							      "ccasim-tracX",
				       21));
	g_assert_false(cca_sniff_trace((const unsigned char *)"\x80\x04\x95", 3)); /* a pickle */
}

/* ------------------------------------------------------------------ */
/* No partial output                                                   */
/* ------------------------------------------------------------------ */

static void
test_no_partial_output(void)
{
	char *dir = tmpdir_new();
	g_autoptr(CcaSnapshot) snap = built_snapshot();
	g_autoptr(GError) error = NULL;

	/* a directory that cannot exist: /dev/null is a file */
	g_assert_false(cca_trace_write(snap, "/dev/null/x.msgpack", &error));
	g_assert_nonnull(error);
	g_assert_true(g_str_has_prefix(error->message, "/dev/null/x.msgpack: "));
	g_clear_error(&error);

	/* an id outside the tables in the middle of the events: the writer
	 * fails mid-way, leaves no temporary and keeps the old file */
	g_autofree char *path = g_build_filename(dir, "out.msgpack", NULL);
	g_assert_true(g_file_set_contents(path, "old", 3, NULL));
	g_array_index(snap->events[2], CcaEvent, 1).stack = 99;
	g_assert_false(cca_trace_write(snap, path, &error));
	g_assert_error(error, CCA_INPUT_ERROR, CCA_INPUT_ERROR_CORRUPT);
	g_assert_nonnull(strstr(error->message, "event 1 of device 2"));
	g_clear_error(&error);
	g_assert_cmpuint(dir_entries(dir), ==, 1);
	g_autoptr(GBytes) old = read_bytes(path);
	g_assert_cmpuint(g_bytes_get_size(old), ==, 3);

	/* a bad table entry is caught before anything is created */
	g_array_index(snap->events[2], CcaEvent, 1).stack = 0;
	g_array_index(snap->frames, CcaFrame, 1).name = 1000;
	g_autofree char *other = g_build_filename(dir, "new.msgpack", NULL);
	g_assert_false(cca_trace_write(snap, other, &error));
	g_assert_nonnull(error);
	g_assert_cmpuint(dir_entries(dir), ==, 1);
	g_assert_false(g_file_test(other, G_FILE_TEST_EXISTS));
	tmpdir_free(dir);
}

/* ------------------------------------------------------------------ */
/* Timing (-m perf)                                                    */
/* ------------------------------------------------------------------ */

static void
test_perf_stream(void)
{
	const char *rel = g_getenv("CCA_PERF_TRACE");
	g_autofree char *source =
		cca_test_trace_path(rel ? rel : "pytorch-2.11/gpt2gen.default.pickle.xz");
	char *dir = tmpdir_new();
	g_autofree char *path = g_build_filename(dir, "perf.msgpack", NULL);
	g_autoptr(GError) error = NULL;
	uint64_t n = 0;

	if (!g_test_perf()) {
		g_test_skip("timing runs with -m perf");
		tmpdir_free(dir);
		return;
	}
	gint64 t0 = g_get_monotonic_time();
	g_autoptr(CcaSnapshot) snap = cca_test_load(source);
	gint64 t1 = g_get_monotonic_time();
	g_assert_true(cca_trace_write(snap, path, &error));
	gint64 t2 = g_get_monotonic_time();
	g_autoptr(CcaSnapshot) back = cca_test_load(path);
	gint64 t3 = g_get_monotonic_time();
	for (int round = 0; round < 5; round++) {
		for (int d = 0; d < back->n_devices; d++) {
			g_autoptr(CcaEventCursor) cur = cca_event_cursor_new(back, d);
			CcaEvent ev;
			while (cca_event_cursor_next(cur, &ev, NULL))
				n++;
		}
	}
	gint64 t4 = g_get_monotonic_time();
	g_test_minimized_result((double)(t4 - t3) * 1000.0 / (double)n,
				"stream: %.1f ns/event over %" G_GUINT64_FORMAT " events",
				(double)(t4 - t3) * 1000.0 / (double)n, n);
	g_test_message("load pickle %.3f s, write trace %.3f s, open trace (validating) %.3f s",
		       (t1 - t0) / 1e6, (t2 - t1) / 1e6, (t3 - t2) / 1e6);
	tmpdir_free(dir);
}

/* ------------------------------------------------------------------ */
/* Sizes                                                               */
/* ------------------------------------------------------------------ */

static void
test_sizes_parse(void)
{
	static const struct {
		const char *text;
		uint64_t value;
	} good[] = {
		{"0", 0},
		{"1048576", 1048576},
		{"17B", 17},
		{"24GiB", 24ull << 30},
		{"24gib", 24ull << 30},
		{"80GB", 80000000000ull},
		{"1KiB", 1024},
		{"1kb", 1000},
		{"3MiB", 3 << 20},
		{"3MB", 3000000},
		{"2TiB", 2ull << 40},
		{"2TB", 2000000000000ull},
		{"512 MiB", 512ull << 20},
		{"18446744073709551615", UINT64_MAX},
		{"16777215TiB", 16777215ull << 40},
		/* K, M, G, T are binary, as PyTorch prints sizes; decimals
		 * that make whole bytes */
		{"12G", 12ull << 30},
		{"12g", 12ull << 30},
		{"12GiB", 12ull << 30},
		{"12GB", 12000000000ull},
		{"16M", 16ull << 20},
		{"4K", 4096},
		{"1T", 1ull << 40},
		{"1.5GiB", 3ull << 29},
		{"1.5G", 3ull << 29},
		{"0.5K", 512},
		{"2.5KB", 2500},
		{"1.25MB", 1250000},
	};
	static const char *const bad[] = {
		"",
		"-1",
		"GiB",
		"12XB",
		"1.5",
		"1.5B",
		"0.1KiB",
		"1.",
		"0x10",
		"1e6",
		"1.5E3",
		"1 2",
		"18446744073709551616",
		"16777216TiB",
		"99999999999999999999",
		" 1",
		"1GiBx",
	};
	for (size_t i = 0; i < G_N_ELEMENTS(good); i++) {
		g_autoptr(GError) error = NULL;
		uint64_t v = 1;
		g_assert_true(cca_size_parse(good[i].text, "--cap", &v, &error));
		g_assert_no_error(error);
		g_assert_cmpuint(v, ==, good[i].value);
	}
	for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
		g_autoptr(GError) error = NULL;
		uint64_t v = 7;
		g_assert_false(cca_size_parse(bad[i], "--cap", &v, &error));
		g_assert_nonnull(error);
		g_assert_true(g_str_has_prefix(error->message, "--cap: "));
		g_assert_cmpuint(v, ==, 7);
	}
}

static void
test_sizes_format(void)
{
	static const struct {
		uint64_t bytes;
		const char *text;
	} cases[] = {
		{0, "0 bytes"},
		{17, "17 bytes"},
		{1024, "1024 bytes"},
		{1025, "1.00 KiB"},
		{512 * 1024, "512.00 KiB"},
		{1 << 20, "1024.00 KiB"},
		{(1 << 20) + 1, "1.00 MiB"},
		{20 << 20, "20.00 MiB"},
		{1ull << 30, "1024.00 MiB"},
		{2093796557ull, "1.95 GiB"},
		{80ull << 30, "80.00 GiB"},
		{UINT64_MAX, "17179869184.00 GiB"},
	};
	for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
		char buf[32];
		g_assert_cmpstr(cca_size_format(cases[i].bytes, buf), ==, cases[i].text);
	}
}

/* ------------------------------------------------------------------ */
/* JSON strings                                                        */
/* ------------------------------------------------------------------ */

static void
test_json_escape(void)
{
	static const struct {
		const char *in, *out;
	} cases[] = {
		{"", "\"\""},
		{"plain /path/x.py", "\"plain /path/x.py\""},
		{"q\"b\\", "\"q\\\"b\\\\\""},
		{"a\nb\tc\r\b\f", "\"a\\nb\\tc\\r\\b\\f\""},
		{"\x01\x1f\x7f", "\"\\u0001\\u001F\x7f\""}, /* jansson: DEL is not escaped */
		{"f\xc3\xa9 \xe2\x82\xac", "\"f\xc3\xa9 \xe2\x82\xac\""},
		{"bad\xff\xc3", "\"bad\xef\xbf\xbd\xef\xbf\xbd\""}, /* U+FFFD each */
	};
	for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autoptr(GString) out = g_string_new(NULL);
		cca_json_append_string(out, cases[i].in);
		g_assert_cmpstr(out->str, ==, cases[i].out);
	}
	g_autoptr(GString) out = g_string_new(NULL);
	cca_json_append_string(out, NULL);
	g_assert_cmpstr(out->str, ==, "null");
}

/* The offset of the first N bytes at NEEDLE in the LEN bytes at DATA. */
static gsize
find_bytes(const char *data, gsize len, const char *needle, gsize n)
{
	for (gsize at = 0; at + n <= len; at++)
		if (memcmp(data + at, needle, n) == 0)
			return at;
	g_assert_not_reached();
}

/* The built snapshot written by this ccasim, as bytes; the offset of the
 * header's counts map into *COUNTS_AT and of its pool_id_entries key
 * into *KEY_AT. */
static GBytes *
built_bytes(gsize *counts_at, gsize *key_at)
{
	char *dir = tmpdir_new();
	g_autoptr(CcaSnapshot) snap = built_snapshot();
	g_autofree char *path = g_build_filename(dir, "built.msgpack", NULL);
	g_autoptr(GError) error = NULL;
	g_assert_true(cca_trace_write(snap, path, &error));
	g_assert_no_error(error);
	GBytes *bytes = read_bytes(path);
	tmpdir_free(dir);
	gsize len;
	const char *data = g_bytes_get_data(bytes, &len);
	*counts_at = find_bytes(data, len,
				"\xa6"
				"counts",
				7) +
		     7;
	*key_at = find_bytes(data, len,
			     "\xaf"
			     "pool_id_entries",
			     16);
	return bytes;
}

/* The header counts the events with a pool_id (the built snapshot has 2,
 * on its last device); a count that lies is the same one-line error from
 * either load, at the end of the events, whichever reads them. */
static void
test_pool_id_count(void)
{
	gsize counts_at, key_at, len;
	g_autoptr(GBytes) bytes = built_bytes(&counts_at, &key_at);
	const unsigned char *data = g_bytes_get_data(bytes, &len);
	g_assert_cmpuint(data[counts_at], ==, 0x89); /* eight counts and pool_id_entries */
	g_assert_cmpuint(data[key_at + 16], ==, 2);
	g_autofree unsigned char *buf = g_memdup2(data, len);
	for (unsigned lie = 0; lie < 4; lie++) {
		if (lie == 2)
			continue;
		buf[key_at + 16] = (unsigned char)lie;
		g_autoptr(GError) eager_error = NULL;
		g_autoptr(CcaSnapshot) eager = load_bytes(buf, len, "lie.msgpack", &eager_error);
		g_assert_null(eager);
		assert_load_error(eager_error, "lie.msgpack");
		g_autofree char *says = g_strdup_printf(
			"offset %zu: the events hold 2 pool_id entries, the header's "
			"counts.pool_id_entries says %u",
			len, lie);
		g_assert_nonnull(strstr(eager_error->message, says));
		assert_streaming_same(buf, len, "lie.msgpack", NULL, eager_error, TRUE);
		assert_streaming_same(buf, len, "lie.msgpack", NULL, eager_error, FALSE);
	}
}

/* A trace of an earlier ccasim has no counts.pool_id_entries: both loads
 * count the pool_ids from the events. */
static void
test_pool_id_count_absent(void)
{
	gsize counts_at, key_at, len;
	g_autoptr(GBytes) bytes = built_bytes(&counts_at, &key_at);
	const unsigned char *data = g_bytes_get_data(bytes, &len);
	g_autoptr(GError) error = NULL;
	g_autoptr(CcaSnapshot) now = load_bytes(data, len, "now.msgpack", &error);
	g_assert_no_error(error);
	/* without the key and its value (one byte) */
	g_autoptr(GByteArray) old = g_byte_array_new();
	g_byte_array_append(old, data, (guint)key_at);
	old->data[counts_at] = 0x88;
	g_byte_array_append(old, data + key_at + 17, (guint)(len - key_at - 17));
	g_autoptr(CcaSnapshot) eager = load_bytes(old->data, old->len, "old.msgpack", &error);
	g_assert_no_error(error);
	g_assert_cmpuint(eager->newer.pool_id_entries, ==, 2);
	assert_snapshots_equal(now, eager);
	assert_streaming_same(old->data, old->len, "old.msgpack", eager, NULL, TRUE);
}

/* With the count in the header, the streaming load leaves the last
 * device's events to its cursor: a bad last event is not the load's
 * error but the cursor's, when it gets there (the load walked it before). */
static void
test_pool_id_count_tail_unread(void)
{
	gsize counts_at, key_at, len;
	g_autoptr(GBytes) bytes = built_bytes(&counts_at, &key_at);
	const unsigned char *data = g_bytes_get_data(bytes, &len);
	g_autofree unsigned char *buf = g_memdup2(data, len);
	/* the last event's first field, its action (fixint 7) after 0x99 */
	gsize at = len - 1;
	while (!(buf[at] == 0x99 && buf[at + 1] == CCA_ACTION_FREE_COMPLETED))
		at--;
	buf[at + 1] = 0xc1; /* never used in msgpack */
	g_autoptr(GError) error = NULL;
	g_autoptr(CcaSnapshot) snap = load_bytes_streaming(buf, len, "tail.msgpack", &error);
	g_assert_no_error(error);
	g_autoptr(CcaEventCursor) cur = cca_event_cursor_new(snap, 2);
	CcaEvent ev;
	g_assert_true(cca_event_cursor_next(cur, &ev, &error));
	g_assert_false(cca_event_cursor_next(cur, &ev, &error));
	assert_load_error(error, "tail.msgpack");
	g_assert_nonnull(strstr(error->message, "event 1 of device 2"));
}

int
main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/trace/roundtrip-built", test_roundtrip_built);
	g_test_add_func("/trace/roundtrip-samples", test_roundtrip_samples);
	g_test_add_func("/trace/roundtrip-real", test_roundtrip_real);
	g_test_add_func("/trace/roundtrip-newer", test_roundtrip_newer);
	g_test_add_func("/trace/truncated-every-prefix", test_truncated_every_prefix);
	g_test_add_func("/trace/corrupt", test_corrupt_tweaks);
	g_test_add_func("/trace/corrupt-raw", test_corrupt_raw);
	g_test_add_func("/trace/corrupt-files", test_corrupt_files);
	g_test_add_func("/trace/mutations", test_mutations);
	g_test_add_func("/trace/pool-id-count", test_pool_id_count);
	g_test_add_func("/trace/pool-id-count-absent", test_pool_id_count_absent);
	g_test_add_func("/trace/pool-id-count-tail-unread", test_pool_id_count_tail_unread);
	g_test_add_func("/trace/sniff", test_sniff);
	g_test_add_func("/trace/no-partial-output", test_no_partial_output);
	g_test_add_func("/trace/perf-stream", test_perf_stream);
	g_test_add_func("/sizes/parse", test_sizes_parse);
	g_test_add_func("/sizes/format", test_sizes_format);
	g_test_add_func("/json/escape", test_json_escape);
	return g_test_run();
}
