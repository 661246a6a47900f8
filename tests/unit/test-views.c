/* test-views.c - the views of a replay: the pickle writer, export, the
 * timeline, explain and step.
 *
 * /views/pickle-write/...: what cca_pickle_write_* produces reads back
 * through the project's own unpickler with the same values, with
 * CPython's byte encodings for ints, batches and frames.
 * /views/export/W: a replay of traces/pytorch-2.11/W.default exported
 * under the recorded settings loads back, replays with --check, and has
 * the input's entries and final segments.
 * /views/timeline, /views/explain, /views/step: figures and wording on
 * seedfrag.default (the "Swiss cheese" workload) and multistream.
 */
#include "config.h"

#include <glib.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <string.h>

#include "allocator.h"
#include "simdevice.h"
#include "replay.h"
#include "snapshot_load.h"
#include "event_cursor.h"
#include "explain.h"
#include "export.h"
#include "pickle.h"
#include "pickle_write.h"
#include "stepview.h"
#include "testutil.h"
#include "timeline.h"

/* ------------------------------------------------------ pickle writer */

/* Writes with FN into a temporary file and returns its bytes. */
static GBytes *
write_pickle(void (*fn)(CcaPickleWriter *w))
{
	FILE *f = tmpfile();
	g_assert_nonnull(f);
	CcaPickleWriter *w = cca_pickle_write_new(f);
	fn(w);
	GError *error = NULL;
	g_assert_true(cca_pickle_write_finish(w, &error));
	g_assert_no_error(error);
	long n = ftell(f);
	rewind(f);
	char *data = g_malloc(n);
	g_assert_cmpint(fread(data, 1, n, f), ==, n);
	fclose(f);
	return g_bytes_new_take(data, n);
}

static char *
repr_of(GBytes *bytes)
{
	gsize n;
	const unsigned char *data = g_bytes_get_data(bytes, &n);
	GError *error = NULL;
	g_autoptr(CcaPickle) p = cca_pickle_parse(data, n, "test", &error);
	g_assert_no_error(error);
	return cca_pickle_repr(cca_pickle_root(p), 8);
}

static void
write_ints(CcaPickleWriter *w)
{
	static const int64_t v[] = {0,
				    255,
				    256,
				    65535,
				    65536,
				    -1,
				    INT32_MAX,
				    INT64_C(2147483648),
				    INT64_C(0x7f3a2c000000),
				    INT64_MAX,
				    INT64_MIN};
	cca_pickle_write_list_begin(w);
	for (size_t i = 0; i < G_N_ELEMENTS(v); i++) {
		cca_pickle_write_item(w, FALSE);
		cca_pickle_write_int(w, v[i]);
	}
	cca_pickle_write_item(w, TRUE);
	cca_pickle_write_uint(w, UINT64_MAX);
	cca_pickle_write_end(w);
}

static gboolean
contains(GBytes *bytes, const char *hex)
{
	gsize n;
	const unsigned char *data = g_bytes_get_data(bytes, &n);
	g_autofree char *dump = g_malloc(2 * n + 1);
	for (gsize i = 0; i < n; i++)
		g_snprintf(dump + 2 * i, 3, "%02x", data[i]);
	return strstr(dump, hex) != NULL;
}

static void
test_pickle_ints(void)
{
	g_autoptr(GBytes) b = write_pickle(write_ints);
	g_autofree char *r = repr_of(b);
	g_assert_cmpstr(r, ==,
			"[0, 255, 256, 65535, 65536, -1, 2147483647, 2147483648, 139887823028224, "
			"9223372036854775807, -9223372036854775808, 18446744073709551615]");
	/* CPython's encodings (doc/trace-format.md, "Integers") */
	g_assert_true(contains(b, "8004")); /* PROTO 4 */
	g_assert_true(contains(b, "4b00"));
	g_assert_true(contains(b, "4bff"));
	g_assert_true(contains(b, "4d0001"));
	g_assert_true(contains(b, "4dffff"));
	g_assert_true(contains(b, "4a00000100"));
	g_assert_true(contains(b, "4affffffff"));
	g_assert_true(contains(b, "8a050000008000"));
	g_assert_true(contains(b, "8a060000002c3a7f"));
	g_assert_true(contains(b, "8a08ffffffffffffff7f"));
	g_assert_true(contains(b, "8a080000000000000080"));
	g_assert_true(contains(b, "8a09ffffffffffffffff00"));
}

static void
write_containers(CcaPickleWriter *w)
{
	cca_pickle_write_dict_begin(w);
	cca_pickle_write_item(w, FALSE);
	cca_pickle_write_str(w, "one", -1);
	cca_pickle_write_list_begin(w); /* a list of one: APPEND */
	cca_pickle_write_item(w, TRUE);
	cca_pickle_write_bool(w, TRUE);
	cca_pickle_write_end(w);
	cca_pickle_write_item(w, FALSE);
	cca_pickle_write_str(w, "many", -1);
	cca_pickle_write_list_begin(w); /* 1001 items: a batch of 1000, then APPEND */
	for (int i = 0; i < 1001; i++) {
		cca_pickle_write_item(w, i == 1000);
		cca_pickle_write_int(w, i);
	}
	cca_pickle_write_end(w);
	cca_pickle_write_item(w, FALSE);
	cca_pickle_write_str(w, "empty", -1);
	cca_pickle_write_dict_begin(w);
	cca_pickle_write_end(w);
	cca_pickle_write_item(w, FALSE);
	cca_pickle_write_str(w, "pair", -1);
	cca_pickle_write_int_pair(w, 0, 1);
	cca_pickle_write_item(w, FALSE);
	cca_pickle_write_str(w, "float", -1);
	cca_pickle_write_float(w, 0.6);
	cca_pickle_write_item(w, FALSE);
	cca_pickle_write_str(w, "none", -1);
	cca_pickle_write_none(w);
	cca_pickle_write_item(w, FALSE);
	cca_pickle_write_str(w, "again", -1);
	cca_pickle_write_str(w, "one", -1); /* memoized: a BINGET */
	cca_pickle_write_item(w, TRUE);
	char *big = g_strnfill(70000, 'x'); /* outside any frame */
	cca_pickle_write_str(w, "big", -1);
	cca_pickle_write_str(w, big, -1);
	g_free(big);
	cca_pickle_write_end(w);
}

static void
test_pickle_containers(void)
{
	g_autoptr(GBytes) b = write_pickle(write_containers);
	gsize n;
	const unsigned char *data = g_bytes_get_data(b, &n);
	GError *error = NULL;
	g_autoptr(CcaPickle) p = cca_pickle_parse(data, n, "test", &error);
	g_assert_no_error(error);
	const CcaPickleValue *root = cca_pickle_root(p);
	g_assert_cmpint(root->type, ==, CCA_PICKLE_DICT);
	g_assert_cmpuint(root->len, ==, 8);
	CcaPickleKey k_many = CCA_PICKLE_KEY("many"), k_big = CCA_PICKLE_KEY("big");
	CcaPickleKey k_again = CCA_PICKLE_KEY("again"), k_pair = CCA_PICKLE_KEY("pair");
	const CcaPickleValue *many = cca_pickle_dict_get(root, &k_many);
	g_assert_cmpuint(many->len, ==, 1001);
	g_assert_cmpint(many->items[1000]->i, ==, 1000);
	g_assert_cmpuint(cca_pickle_dict_get(root, &k_big)->len, ==, 70000);
	g_assert_true(cca_pickle_str_equal(cca_pickle_dict_get(root, &k_again), "one", 3));
	g_assert_cmpint(cca_pickle_dict_get(root, &k_pair)->type, ==, CCA_PICKLE_TUPLE);
	g_autofree char *head = cca_pickle_repr(root, 2);
	g_test_message("%.60s", head);
	g_assert_true(g_str_has_prefix(head, "{'one': [True], 'many': [0, 1, 2,"));
	/* the first frame starts right after PROTO: 80 04 95 <u64 length> */
	g_assert_cmpint(data[2], ==, 0x95);
	/* batches: 1000 items end in APPENDS, the 1001st in APPEND */
	g_assert_true(contains(b, "4de70365"));	    /* 999, APPENDS */
	g_assert_true(contains(b, "4de80361"));	    /* 1000, APPEND */
	g_assert_true(contains(b, "5d948861"));	    /* [], MEMOIZE, True, APPEND */
	g_assert_true(contains(b, "4b004b018694")); /* (0, 1): TUPLE2 MEMOIZE */
}

/* ------------------------------------------------------------- export */

/* BACK, an exported trace, replays as it was recorded (--check passes). */
static void
assert_replays_as_recorded(const CcaSnapshot *back)
{
	CcaReplayResult res;
	cca_test_replay_checked(back, NULL, &res);
	cca_replay_result_clear(&res);
}

static void
test_export(gconstpointer data)
{
	const char *name = data;
	g_autoptr(CcaSnapshot) snap = cca_test_load_trace(name);
	g_autofree char *dir = g_dir_make_tmp("test-views-XXXXXX", NULL);
	g_autofree char *out = g_build_filename(dir, "export.pickle", NULL);
	CcaReplayOptions opt;
	cca_replay_options_init(&opt);
	CcaExportResult er;
	GError *error = NULL;
	g_assert_true(cca_export_pickle(snap, &opt, out, &er, &error));
	g_assert_no_error(error);
	g_assert_true(er.matched);
	g_assert_cmpuint(er.entries, ==, snap->n_events[0]);

	g_autoptr(CcaSnapshot) back = cca_snapshot_load(out, &error);
	g_assert_no_error(error);
	g_assert_cmpint(back->pickle_protocol, ==, 4);
	g_assert_cmpint(back->n_devices, ==, snap->n_devices);
	g_assert_cmpuint(back->n_events[0], ==, snap->n_events[0]);
	g_assert_cmpuint(back->segments->len, ==, snap->segments->len);
	g_assert_cmpuint(back->blocks->len, ==, snap->blocks->len);
	g_assert_true(back->settings.present);
	g_assert_cmpstr(back->settings.conf, ==, snap->settings.conf);
	/* the same entries, and the same final blocks */
	g_autoptr(CcaEventCursor) a = cca_event_cursor_new(snap, 0);
	g_autoptr(CcaEventCursor) b = cca_event_cursor_new(back, 0);
	CcaEvent ea, eb;
	while (cca_event_cursor_next(a, &ea, NULL)) {
		g_assert_true(cca_event_cursor_next(b, &eb, NULL));
		g_assert_cmpint(ea.action, ==, eb.action);
		g_assert_cmpuint(ea.addr, ==, eb.addr);
		g_assert_cmpuint(ea.size, ==, eb.size);
		g_assert_cmpuint(ea.stream, ==, eb.stream);
		g_assert_cmpint(ea.time_us, ==, eb.time_us);
	}
	for (guint i = 0; i < snap->blocks->len; i++) {
		const CcaSnapBlock *x = &g_array_index(snap->blocks, CcaSnapBlock, i);
		const CcaSnapBlock *y = &g_array_index(back->blocks, CcaSnapBlock, i);
		g_assert_cmpuint(x->address, ==, y->address);
		g_assert_cmpuint(x->size, ==, y->size);
		g_assert_cmpint(x->state, ==, y->state);
		g_assert_cmpuint(x->requested_size, ==, y->requested_size);
	}
	/* and it replays as it was recorded */
	assert_replays_as_recorded(back);
	g_unlink(out);
	g_rmdir(dir);
}

/* A what-if exported and replayed as recorded reproduces itself. */
static void
test_export_whatif(void)
{
	g_autoptr(CcaSnapshot) snap = cca_test_load_trace("seedfrag.default");
	g_auto(CcaSettings) settings = {0};
	GError *error = NULL;
	g_assert_true(cca_settings_parse(&settings, "expandable_segments:True", &error));
	g_autofree char *dir = g_dir_make_tmp("test-views-XXXXXX", NULL);
	g_autofree char *out = g_build_filename(dir, "whatif.pickle", NULL);
	CcaReplayOptions opt;
	cca_replay_options_init(&opt);
	opt.settings = &settings;
	opt.memory_fraction = 0.01;
	CcaExportResult er;
	g_assert_true(cca_export_pickle(snap, &opt, out, &er, &error));
	g_assert_no_error(error);
	g_autoptr(CcaSnapshot) back = cca_snapshot_load(out, &error);
	g_assert_no_error(error);
	g_assert_true(back->settings.expandable_segments);
	g_assert_nonnull(strstr(back->settings.conf, "per_process_memory_fraction:0.01"));
	assert_replays_as_recorded(back);
	g_unlink(out);
	g_rmdir(dir);
}

/* ----------------------------------------------------------- timeline */

static void
test_timeline(void)
{
	g_autoptr(CcaSnapshot) snap = cca_test_load_trace("seedfrag.default");
	CcaReplayOptions opt;
	cca_replay_options_init(&opt);
	for (guint nb = 1; nb <= 4096; nb *= 8) {
		CcaTimeline tl;
		GError *error = NULL;
		g_assert_true(cca_timeline_collect(snap, &opt, nb, &tl, &error));
		g_assert_no_error(error);
		g_assert_cmpuint(tl.n_buckets, ==, MIN(nb, snap->n_events[0]));
		/* every peak survives decimation */
		int64_t max[CCA_SERIES_COUNT] = {0};
		uint64_t seen = 0;
		for (uint32_t i = 0; i < tl.n_buckets; i++) {
			for (int s = 0; s < CCA_SERIES_COUNT; s++)
				max[s] = MAX(max[s], tl.buckets[i].max[s]);
			seen += tl.buckets[i].n;
		}
		const CcaStats *st = &tl.result.stats;
		g_assert_cmpint(max[CCA_SERIES_RESERVED], ==, st->reserved_bytes[0].peak);
		g_assert_cmpint(max[CCA_SERIES_ALLOCATED], ==, st->allocated_bytes[0].peak);
		g_assert_cmpint(max[CCA_SERIES_ACTIVE], ==, st->active_bytes[0].peak);
		g_assert_cmpuint(tl.peak_reserved, ==, (uint64_t)st->reserved_bytes[0].peak);
		g_assert_cmpuint(tl.peak_index, ==, 1743); /* the 300 MiB tensor */
		g_assert_cmpuint(seen, >, 0);
		g_assert_cmpuint(seen, <=, snap->n_events[0]);
		g_assert_true(tl.has_time);
		cca_timeline_clear(&tl);
	}
}

/* OOMs of a capped what-if are marked where they happen. */
static void
test_timeline_ooms(void)
{
	g_autoptr(CcaSnapshot) snap = cca_test_load_trace("seedfrag.default");
	CcaReplayOptions opt;
	cca_replay_options_init(&opt);
	opt.memory_fraction = 0.004; /* 600 MiB of the H200 */
	opt.keep_going = TRUE;
	CcaTimeline tl;
	GError *error = NULL;
	g_assert_true(cca_timeline_collect(snap, &opt, 512, &tl, &error));
	g_assert_no_error(error);
	g_assert_cmpuint(tl.n_ooms, >, 0);
	g_assert_cmpuint(tl.n_ooms, ==, (uint64_t)tl.result.stats.num_ooms);
	g_assert_cmpuint(tl.allowed_maximum, ==, (uint64_t)(0.004 * 150109880320.0));
	for (guint i = 0; i < tl.ooms->len; i++)
		g_assert_cmpuint(g_array_index(tl.ooms, CcaTimelineOom, i).reserved, <=,
				 tl.allowed_maximum);
	cca_timeline_clear(&tl);
}

/* ------------------------------------------------------ explain, step */

static void
test_explain_request(void)
{
	g_auto(CcaSettings) settings = {0};
	GError *error = NULL;
	g_assert_true(cca_settings_parse(&settings, "max_split_size_mb:64", &error));
	CcaSimDeviceConfig dc = {.total_memory = UINT64_C(80) << 30};
	CcaDevice *dev = cca_simdevice_new(&dc);
	CcaAllocator *a = cca_allocator_new(&settings, NULL, dev, NULL, NULL);
	CcaRequestWhy w;
	cca_allocator_explain_request(a, 1000, 0, &w);
	g_assert_cmpint(w.kind, ==, CCA_WHY_EMPTY_POOL);
	g_assert_true(w.small_pool);
	g_assert_cmpuint(w.size, ==, 1024);
	g_assert_cmpuint(w.alloc_size, ==, 2 << 20);
	/* free space stranded beside a live block is told apart */
	CcaHandle x = cca_allocator_malloc(a, 4 << 20, 0);
	CcaHandle y = cca_allocator_malloc(a, 4 << 20, 0);
	cca_allocator_free_block(a, x, false);
	cca_allocator_explain_request(a, 19 << 20, 0, &w);
	g_assert_cmpint(w.kind, ==, CCA_WHY_TOO_SMALL);
	g_assert_cmpuint(w.stranded_bytes, ==, 16 << 20);
	g_assert_cmpuint(w.stranded_segments, ==, 1);
	g_assert_cmpuint(w.free_bytes_stream, ==, 16 << 20);
	g_assert_cmpuint(w.largest_free_stream, ==, 12 << 20);
	/* a 100 MiB block, freed: a 30 MiB request may not split it */
	CcaHandle big = cca_allocator_malloc(a, 100 << 20, 0);
	cca_allocator_free_block(a, big, false);
	cca_allocator_explain_request(a, 30 << 20, 0, &w);
	g_assert_cmpint(w.kind, ==, CCA_WHY_OVERSIZE);
	g_assert_cmpuint(w.candidate_size, ==, 100 << 20);
	g_assert_cmpuint(w.cached_bytes, ==, 100 << 20);
	/* ... nor may a 70 MiB one take it whole (slack >= 20 MiB) */
	cca_allocator_explain_request(a, 70 << 20, 0, &w);
	g_assert_cmpint(w.kind, ==, CCA_WHY_OVERSIZE);
	/* a 90 MiB one may */
	cca_allocator_explain_request(a, 90 << 20, 0, &w);
	g_assert_cmpint(w.kind, ==, CCA_WHY_FITS);
	/* on another stream nothing is cached */
	cca_allocator_explain_request(a, 90 << 20, 7, &w);
	g_assert_cmpint(w.kind, ==, CCA_WHY_EMPTY_POOL);
	g_assert_cmpuint(w.largest_free_other, ==, 100 << 20);
	cca_allocator_free_block(a, y, false);
	cca_allocator_free(a);
	cca_device_free(dev);
}

static void
test_explain_seedfrag(void)
{
	g_autoptr(CcaSnapshot) snap = cca_test_load_trace("seedfrag.default");
	CcaReplayOptions opt;
	cca_replay_options_init(&opt);
	CcaExplainParams params = {.limit = 0, .top = 5};
	GString *out = g_string_new(NULL);
	GError *error = NULL;
	g_assert_true(cca_explain_run(snap, &opt, &params, out, &error));
	g_assert_no_error(error);
	const char *expect[] = {
		"601 requests; 67 of them reserved new memory (884.00 MiB in 67 cudaMalloc",
		"52  the pool had no free block on the stream",
		"15  every free block on the stream was too small",
		"event 1743: alloc of 300.00 MiB (314572800 B) on stream 0 -> cudaMalloc 300.00 MiB",
		"a block must be one contiguous range: fragmentation",
		"At the reserved peak (after event 1743): 884.00 MiB reserved in 67 segments",
		"requests of 9.00 MiB (9437184 B)",
	};
	for (size_t i = 0; i < G_N_ELEMENTS(expect); i++)
		if (!strstr(out->str, expect[i])) {
			g_test_message("missing \"%s\" in:\n%s", expect[i], out->str);
			g_assert_not_reached();
		}
	g_string_free(out, TRUE);
}

static void
test_explain_frames(void)
{
	g_autoptr(CcaSnapshot) snap = cca_test_load_trace("stacks.default");
	CcaReplayOptions opt;
	cca_replay_options_init(&opt);
	CcaExplainParams params = {.limit = 3, .top = 5};
	GString *out = g_string_new(NULL);
	GError *error = NULL;
	g_assert_true(cca_explain_run(snap, &opt, &params, out, &error));
	g_assert_no_error(error);
	g_assert_nonnull(strstr(out->str, "Call sites that strand the most free memory"));
	g_assert_nonnull(
		strstr(out->str, "wl_stacks (capture.py:129) via convert (module.py:1370)"));
	g_string_free(out, TRUE);
}

/* Releases go to what caused them, as the engine says: the recording's
 * OOM cascade to the oom (snap_default: 312 MiB released before an oom
 * entry, which a malloc run out of memory releases itself), an
 * empty_cache() the program called to the request after it, though that
 * request would have released the same segments itself (resnet152.cap
 * under a cap of 0.02: 21 segments at event 12755). */
static void
test_explain_releases(void)
{
	g_autofree char *path =
		cca_test_trace_path("pytorch-2.11/samples/snap_default_2.11.pickle");
	g_autoptr(CcaSnapshot) sample = cca_test_load(path);
	CcaReplayOptions opt;
	cca_replay_options_init(&opt);
	CcaExplainParams params = {.limit = 0, .top = 5};
	GString *out = g_string_new(NULL);
	GError *error = NULL;
	g_assert_true(cca_explain_run(sample, &opt, &params, out, &error));
	g_assert_no_error(error);
	g_assert_nonnull(strstr(out->str, "event 38: request (recorded oom) of 10240.00 GiB"));
	g_assert_nonnull(strstr(
		out->str,
		"Releasing every wholly free cached segment (312.00 MiB) did not make room."));
	g_assert_null(strstr(out->str, "had just called empty_cache()"));

	g_autoptr(CcaSnapshot) snap = cca_test_load_trace("resnet152.cap");
	opt.memory_fraction = 0.02;
	opt.keep_going = true;
	g_string_truncate(out, 0);
	g_assert_true(cca_explain_run(snap, &opt, &params, out, &error));
	g_assert_no_error(error);
	const char *at = strstr(out->str, "event 12755: alloc of 147.00 MiB");
	g_assert_nonnull(at);
	const char *next = strstr(at + 1, "  event ");
	g_autofree char *record = g_strndup(at, next ? (gsize)(next - at) : strlen(at));
	g_assert_true(g_str_has_prefix(record, "event 12755: alloc of 147.00 MiB (154140819 B) on "
					       "stream 0 -> cudaMalloc 148.00 MiB\n"));
	g_assert_nonnull(strstr(record, "The program had just called empty_cache(), which returned "
					"21 cached segments (636.00 MiB) to the device."));
	g_assert_null(strstr(record, "tried again"));
	g_string_free(out, TRUE);
}

static char *
step_at(const char *trace, uint64_t at)
{
	g_autoptr(CcaSnapshot) snap = cca_test_load_trace(trace);
	CcaReplayOptions opt;
	cca_replay_options_init(&opt);
	CcaStepParams params = {.at = at, .max_segments = 3, .bar_width = 20};
	GString *out = g_string_new(NULL);
	GError *error = NULL;
	g_assert_true(cca_stepview_describe(snap, &opt, &params, out, &error));
	g_assert_no_error(error);
	return g_string_free(out, FALSE);
}

static void
test_step(void)
{
	g_autofree char *a = step_at("seedfrag.default", 1743);
	g_assert_true(g_str_has_prefix(a, "Event 1743 of 1870: alloc 0x"));
	g_assert_nonnull(strstr(a, "-> cudaMalloc 300.00 MiB"));
	g_assert_nonnull(strstr(a, "After it: reserved 884.00 MiB in 67 segments"));
	g_assert_nonnull(strstr(a, " *0x"));
	g_assert_nonnull(strstr(a, "|####################|"));
	g_assert_nonnull(strstr(a, "... 64 more segments"));
	/* a deferred free (record_stream) stays pending */
	g_autofree char *b = step_at("multistream.default", 348);
	g_assert_nonnull(strstr(b, "active_pending_free"));
	g_assert_nonnull(strstr(b, "|pppppppppppppppppppp|"));
	g_assert_nonnull(strstr(b, "1 pending free"));
	/* a free's immediate free_completed is shown with it */
	g_autofree char *c = step_at("multistream.default", 19);
	g_assert_nonnull(strstr(c, "handles it together with event 20"));
	g_assert_nonnull(strstr(c, "The block returns to the small pool"));
	/* past the end */
	g_autoptr(CcaSnapshot) snap = cca_test_load_trace("seedfrag.default");
	CcaReplayOptions opt;
	cca_replay_options_init(&opt);
	CcaStepParams params = {.at = 1870, .bar_width = 20};
	GString *out = g_string_new(NULL);
	GError *error = NULL;
	g_assert_false(cca_stepview_describe(snap, &opt, &params, out, &error));
	g_assert_nonnull(error);
	g_error_free(error);
	g_string_free(out, TRUE);
}

static void
test_step_index(void)
{
	g_autoptr(CcaSnapshot) snap = cca_test_load_trace("seedfrag.default");
	CcaReplayOptions opt;
	cca_replay_options_init(&opt);
	GArray *mallocs = g_array_new(FALSE, FALSE, sizeof(uint64_t));
	GError *error = NULL;
	g_assert_true(cca_stepview_index(snap, &opt, mallocs, NULL, &error));
	g_assert_no_error(error);
	g_assert_cmpuint(mallocs->len, ==, 67);
	g_assert_cmpuint(g_array_index(mallocs, uint64_t, 0), ==, 1);
	g_assert_cmpuint(g_array_index(mallocs, uint64_t, 66), ==, 1743);
	g_array_free(mallocs, TRUE);
}

int
main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/views/pickle-write/ints", test_pickle_ints);
	g_test_add_func("/views/pickle-write/containers", test_pickle_containers);
	g_test_add_data_func("/views/export/seedfrag", "seedfrag.default", test_export);
	g_test_add_data_func("/views/export/multistream", "multistream.default", test_export);
	g_test_add_data_func("/views/export/stacks", "stacks.default", test_export);
	g_test_add_func("/views/export/whatif", test_export_whatif);
	g_test_add_func("/views/timeline/peaks-survive-decimation", test_timeline);
	g_test_add_func("/views/timeline/ooms", test_timeline_ooms);
	g_test_add_func("/views/explain/request", test_explain_request);
	g_test_add_func("/views/explain/seedfrag", test_explain_seedfrag);
	g_test_add_func("/views/explain/call-sites", test_explain_frames);
	g_test_add_func("/views/explain/releases", test_explain_releases);
	g_test_add_func("/views/step/at", test_step);
	g_test_add_func("/views/step/index", test_step_index);
	return g_test_run();
}
