/* test-calibration.c - the cudaMalloc/cudaFree timing table and the cost
 * model (/cost/...): the built-in H200 table equals the shipped file,
 * interpolation is log-log between points, clamped below and linear above,
 * bad files fail with one-line errors, and a sweep's time figure is the
 * sum the model's segment entries and synchronisations predict.
 */
#include "config.h"

#include <glib.h>
#include <math.h>
#include <string.h>

#include "calibration.h"
#include "replay.h"
#include "simdevice.h"
#include "snapshot.h"
#include "sweep.h"
#include "testutil.h"


/* TEXT parsed as the timing file NAME (the test fails on error). */
static CcaCalibrationTable *
parse_ok(const char *text, const char *name)
{
	GError *error = NULL;
	CcaCalibrationTable *cal = cca_calibration_parse(text, strlen(text), name, &error);
	g_assert_no_error(error);
	return cal;
}

static void
test_builtin_matches_file(void)
{
	g_autofree char *path = cca_test_trace_path("pytorch-2.11/h200-cudamalloc-timing.json");
	GError *error = NULL;
	g_autoptr(CcaCalibrationTable) file = cca_calibration_load(path, &error);
	g_assert_no_error(error);
	g_autoptr(CcaCalibrationTable) builtin = cca_calibration_new_h200();
	g_assert_cmpuint(file->n_points, ==, builtin->n_points);
	for (guint i = 0; i < file->n_points; i++) {
		g_assert_cmpuint(file->points[i].bytes, ==, builtin->points[i].bytes);
		g_assert_cmpfloat(file->points[i].malloc_us, ==, builtin->points[i].malloc_us);
		g_assert_cmpfloat(file->points[i].free_us, ==, builtin->points[i].free_us);
	}
	g_assert_false(file->has_map);
	g_assert_false(file->sync_measured);
	g_assert_cmpfloat(file->sync_us, ==, CCA_CALIBRATION_DEFAULT_SYNC_US);
}

static void
test_interpolation(void)
{
	const char *text =
		"{\"rows\": [{\"mb\": 2, \"malloc_us_median\": 10, \"free_us_median\": 40},"
		" {\"mb\": 8, \"malloc_us_median\": 40, \"free_us_median\": 10}],"
		" \"sync_us\": 7.5, \"device\": \"Test GPU\"}";
	g_autoptr(CcaCalibrationTable) cal = parse_ok(text, "t.json");
	g_assert_cmpstr(cal->gpu, ==, "Test GPU");
	g_assert_true(cal->sync_measured);
	g_assert_cmpfloat(cal->sync_us, ==, 7.5);
	/* at the points */
	g_assert_cmpfloat_with_epsilon(cca_calibration_malloc_us(cal, 2 * CCA_MIB), 10.0, 1e-9);
	g_assert_cmpfloat_with_epsilon(cca_calibration_malloc_us(cal, 8 * CCA_MIB), 40.0, 1e-9);
	/* halfway in log(size) is the geometric mean of the times */
	g_assert_cmpfloat_with_epsilon(cca_calibration_malloc_us(cal, 4 * CCA_MIB), 20.0, 1e-9);
	g_assert_cmpfloat_with_epsilon(cca_calibration_free_us(cal, 4 * CCA_MIB), 20.0, 1e-9);
	/* clamped below the smallest size */
	g_assert_cmpfloat(cca_calibration_malloc_us(cal, 512), ==, 10.0);
	g_assert_cmpfloat(cca_calibration_free_us(cal, 1 * CCA_MIB), ==, 40.0);
	/* proportional to size above the largest */
	g_assert_cmpfloat_with_epsilon(cca_calibration_malloc_us(cal, 32 * CCA_MIB), 160.0, 1e-9);
	g_assert_cmpfloat_with_epsilon(cca_calibration_free_us(cal, 16 * CCA_MIB), 20.0, 1e-9);
	/* monotone pieces stay between their ends */
	for (uint64_t b = 2 * CCA_MIB; b <= 8 * CCA_MIB; b += CCA_MIB / 2) {
		double t = cca_calibration_malloc_us(cal, b);
		g_assert_cmpfloat(t, >=, 10.0 - 1e-9);
		g_assert_cmpfloat(t, <=, 40.0 + 1e-9);
	}
	/* no map figures: a map costs one cudaMalloc of a page per page */
	g_assert_false(cal->has_map);
	g_assert_cmpfloat_with_epsilon(cca_calibration_map_us(cal, 6 * CCA_MIB, 2 * CCA_MIB), 30.0,
				       1e-9);
	g_assert_cmpfloat_with_epsilon(cca_calibration_unmap_us(cal, 6 * CCA_MIB, 2 * CCA_MIB),
				       120.0, 1e-9);
}

static void
test_map_columns(void)
{
	const char *text =
		"{\"lib\": \"x\", \"total_memory\": 1, \"rows\": ["
		"{\"mb\": 20, \"malloc_us_median\": 50, \"free_us_median\": 50, \"map_us_median\": 30,"
		" \"unmap_us_median\": 20, \"map_page_mb\": 20, \"used_delta\": 0},"
		"{\"mb\": 80, \"malloc_us_median\": 80, \"free_us_median\": 90, \"map_us_median\": 120,"
		" \"unmap_us_median\": 80, \"map_page_mb\": 20, \"used_delta\": 0}]}";
	g_autoptr(CcaCalibrationTable) cal = parse_ok(text, "gpu.json");
	g_assert_true(cal->has_map);
	g_assert_cmpfloat_with_epsilon(cca_calibration_map_us(cal, 40 * CCA_MIB, 20 * CCA_MIB),
				       60.0, 1e-9);
	g_assert_cmpfloat_with_epsilon(cca_calibration_unmap_us(cal, 80 * CCA_MIB, 20 * CCA_MIB),
				       80.0, 1e-9);
	CcaCost cost = {0};
	CcaEvent map = {.action = CCA_ACTION_SEGMENT_MAP, .size = 20 * CCA_MIB};
	CcaEvent alloc = {.action = CCA_ACTION_SEGMENT_ALLOC, .size = 80 * CCA_MIB};
	CcaEvent free_ = {.action = CCA_ACTION_SEGMENT_FREE, .size = 20 * CCA_MIB};
	CcaEvent other = {.action = CCA_ACTION_ALLOC, .size = 80 * CCA_MIB};
	cca_calibration_cost_add_event(&cost, cal, &map, 20 * CCA_MIB);
	cca_calibration_cost_add_event(&cost, cal, &alloc, 20 * CCA_MIB);
	cca_calibration_cost_add_event(&cost, cal, &free_, 20 * CCA_MIB);
	cca_calibration_cost_add_event(&cost, cal, &other, 20 * CCA_MIB);
	cca_calibration_cost_add_syncs(&cost, cal, 2);
	g_assert_cmpuint(cost.mallocs, ==, 2);
	g_assert_cmpuint(cost.frees, ==, 1);
	g_assert_cmpuint(cost.syncs, ==, 2);
	g_assert_cmpfloat_with_epsilon(cost.malloc_us, 30.0 + 80.0, 1e-9);
	g_assert_cmpfloat_with_epsilon(cost.free_us, 50.0, 1e-9);
	g_assert_cmpfloat_with_epsilon(cost.sync_us, 2 * CCA_CALIBRATION_DEFAULT_SYNC_US, 1e-9);
	g_assert_cmpfloat_with_epsilon(cca_calibration_cost_total_us(&cost), 110.0 + 50.0 + 100.0,
				       1e-9);
}

static void
test_bad_files(void)
{
	static const struct {
		const char *text;
		const char *message;
	} cases[] = {
		{"", "bad.json: offset 0: "},
		{"[]", "bad.json: expected a JSON object, found an array"},
		{"{", "bad.json: offset 1: "},
		{"{\"rows\": [] }", "bad.json: \"rows\" is empty"},
		{"{\"lib\": \"x\"}", "bad.json: no \"rows\" array"},
		{"{\"rows\": {}}", "bad.json: rows: expected the \"rows\" array, found an object"},
		{"{\"rows\": [2]}", "bad.json: rows[0]: expected an object, found a number"},
		{"{\"rows\": [{\"mb\": 2}]}", "bad.json: rows[0]: no \"malloc_us_median\""},
		{"{\"rows\": [{\"malloc_us_median\": 1, \"free_us_median\": 1}]}",
		 "bad.json: rows[0]: no \"mb\""},
		{"{\"rows\": [{\"mb\": -2, \"malloc_us_median\": 1, \"free_us_median\": 1}]}",
		 "rows[0]: \"mb\" must be in (0, 1048576]"},
		{"{\"rows\": [{\"mb\": 2, \"malloc_us_median\": 0, \"free_us_median\": 1}]}",
		 "rows[0]: times must be greater than 0"},
		{"{\"rows\": [{\"mb\": 2, \"malloc_us_median\": 1, \"free_us_median\": 1},"
		 " {\"mb\": 2, \"malloc_us_median\": 1, \"free_us_median\": 1}]}",
		 "two rows measure the same size"},
		{"{\"rows\": [{\"mb\": 2, \"malloc_us_median\": 1., \"free_us_median\": 1}]}",
		 "bad.json: offset "},
		{"{\"rows\": [{\"mb\": \"2\", \"malloc_us_median\": 1, \"free_us_median\": 1}]}",
		 "bad.json: rows[0].mb: expected a number, found a string"},
		{"{\"rows\": [{\"mb\": 2, \"malloc_us_median\": 1, \"free_us_median\": 1}]} x",
		 "bad.json: offset "},
		{"{\"rows\": [{\"mb\": 2, \"malloc_us_median\": 1, \"free_us_median\": 1e999}]}",
		 "bad.json: offset "},
		{"{\"gpu\": \"a\nb\", \"rows\": []}", "bad.json: offset "},
		{"{\"gpu\": \"\\q\"}", "bad.json: offset "},
		{"{\"gpu\": 3, \"rows\": [{\"mb\": 2, \"malloc_us_median\": 1, \"free_us_median\": 1}]}",
		 "bad.json: gpu: expected a string, found a number"},
		{"{\"sync_us\": \"1\", \"rows\": []}", "bad.json: sync_us: expected a number"},
		{"{\"gpu\": \"a\\u0000b\", \"rows\": []}", "bad.json: offset "},
		{"{\"rows\": [{\"mb\": 2, \"malloc_us_median\": 1, \"free_us_median\": 1}]}\n\xff",
		 "bad.json: offset "},
		{"{\"x\": [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]",
		 "bad.json: offset "},
		{"{\"x\": tru}", "bad.json: offset "},
		{"{\"sync_us\": -1, \"rows\": [{\"mb\": 2, \"malloc_us_median\": 1, \"free_us_median\": 1}]}",
		 "bad.json: sync_us: must not be negative"},
	};
	for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
		GError *error = NULL;
		CcaCalibrationTable *cal = cca_calibration_parse(
			cases[i].text, strlen(cases[i].text), "bad.json", &error);
		g_assert_null(cal);
		g_assert_nonnull(error);
		g_assert_true(error->domain == CCA_CALIBRATION_ERROR);
		if (!strstr(error->message, cases[i].message))
			g_test_message("case %u: got '%s'", i, error->message);
		g_assert_nonnull(strstr(error->message, cases[i].message));
		g_assert_true(g_str_has_prefix(error->message, "bad.json: "));
		g_assert_null(strchr(error->message, '\n'));
		g_error_free(error);
	}
	/* the error domains are proper names (clang-format once spaced them out) */
	g_assert_cmpstr(g_quark_to_string(CCA_CALIBRATION_ERROR), ==,
			"cca-calibration-error-quark");
	g_assert_cmpstr(g_quark_to_string(CCA_INPUT_ERROR), ==, "cca-input-error-quark");
	GError *error = NULL;
	g_assert_null(cca_calibration_load("/nonexistent/timing.json", &error));
	g_assert_true(error->domain == G_FILE_ERROR);
	g_error_free(error);
}

/* The sweep's time figure is the model's segment entries and syncs. */
typedef struct {
	const CcaCalibrationTable *cal;
	CcaCost cost;
	uint64_t large_page;
} Tally;

static void
tally_event(void *data, uint64_t cause, const CcaEvent *trace, const CcaEvent *ev)
{
	Tally *t = data;
	cca_calibration_cost_add_event(&t->cost, t->cal, ev, t->large_page);
}

static void
test_sweep_time(void)
{
	g_autoptr(CcaSnapshot) snap = cca_test_load_trace("dyninfer.default");
	GError *error = NULL;
	g_autoptr(CcaSweep) sweep = cca_sweep_new(snap, 0, 0, &error);
	g_assert_true(cca_sweep_add_config(sweep, "expandable_segments:True", "t", &error));
	g_assert_true(cca_sweep_add_config(sweep, "max_split_size_mb:128", "t", &error));
	g_autoptr(CcaCalibrationTable) cal = cca_calibration_new_h200();
	double fraction = 1.0e9 / (double)CCA_H200_TOTAL_MEMORY; /* the cascade syncs */
	CcaSweepOptions opt = {.calibration = cal, .memory_fraction = fraction, .threads = 1};
	g_assert_true(cca_sweep_run(sweep, &opt, &error));
	for (guint i = 0; i < sweep->rows->len; i++) {
		const CcaSweepRow *row = g_ptr_array_index(sweep->rows, i);
		Tally t = {.cal = cal, .large_page = row->settings.large_segment_size};
		CcaReplayOptions ro;
		cca_replay_options_init(&ro);
		ro.settings = &row->settings;
		ro.memory_fraction = fraction;
		ro.on_model_event = tally_event;
		ro.on_model_event_data = &t;
		CcaReplayResult res;
		g_assert_true(cca_replay_run(snap, &ro, &res, &error));
		cca_calibration_cost_add_syncs(&t.cost, cal,
					       (uint64_t)res.stats.num_sync_all_streams);
		g_assert_cmpuint(t.cost.mallocs, ==, (uint64_t)res.stats.num_device_alloc);
		g_assert_cmpuint(t.cost.frees, ==, (uint64_t)res.stats.num_device_free);
		g_assert_cmpfloat_with_epsilon(row->runs[0].value[CCA_SWEEP_FIG_TIME_US],
					       cca_calibration_cost_total_us(&t.cost), 1e-6);
		g_assert_cmpfloat(row->runs[0].value[CCA_SWEEP_FIG_TIME_US], >, 0);
		g_test_message("%s: %.1f us (%" G_GUINT64_FORMAT " mallocs, %" G_GUINT64_FORMAT
			       " frees, %" G_GUINT64_FORMAT " syncs)",
			       row->conf, cca_calibration_cost_total_us(&t.cost), t.cost.mallocs,
			       t.cost.frees, t.cost.syncs);
		cca_replay_result_clear(&res);
	}
}

int
main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/cost/builtin-matches-file", test_builtin_matches_file);
	g_test_add_func("/cost/interpolation", test_interpolation);
	g_test_add_func("/cost/map-columns", test_map_columns);
	g_test_add_func("/cost/bad-files", test_bad_files);
	g_test_add_func("/cost/sweep-time", test_sweep_time);
	return g_test_run();
}
