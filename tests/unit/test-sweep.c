/* test-sweep.c - what-if sweeps against `replay --config` and PyTorch.
 *
 * /sweep/set-* and /sweep/default-grid check how grids are built;
 * /sweep/equals-replay/W replays the default grid of W and checks every
 * row's memory_stats() against a replay built the way `ccasim replay
 * --config ROW` builds it; /sweep/deterministic compares 1 and 4 threads;
 * /sweep/whatif/W.C checks the row for setting C of a sweep of W.default
 * against whatif/replay.W.C.json (what torch 2.11 itself reserved for the
 * same request stream): equal, or inside the row's address-model range,
 * or neither (marked incomplete: a known gap of the address models), and
 * /sweep/whatif/counts (run last in its suite) reports the three counts.
 */
#include "config.h"

#include <glib.h>
#include <string.h>

#include "calibration.h"
#include "replay.h"
#include "simdevice.h"
#include "settings.h"
#include "snapshot.h"
#include "stats.h"
#include "sweep.h"
#include "testutil.h"

/* The address models a what-if row is replayed under (CCASIM_ADDRESS_MODELS
 * may keep fewer: cca_simdevice_bound_models()). */
static guint
bound_models(void)
{
	guint n;
	(void)cca_simdevice_bound_models(&n);
	return n;
}

/* The row of SWEEP whose setting string is CONF, or NULL. */
static const CcaSweepRow *
find_row(const CcaSweep *sweep, const char *conf)
{
	for (guint i = 0; i < sweep->rows->len; i++) {
		const CcaSweepRow *row = g_ptr_array_index(sweep->rows, i);
		if (strcmp(row->conf, conf) == 0)
			return row;
	}
	return NULL;
}

/* A sweep of device 0 of SNAP over the default grid (CAPPED: the grid for
 * a capped run); the test fails if it cannot be built. */
static CcaSweep *
default_grid_sweep(const CcaSnapshot *snap, bool capped)
{
	GError *error = NULL;
	CcaSweep *sweep = cca_sweep_new(snap, 0, 0, &error);
	g_assert_true(cca_sweep_add_default_grid(sweep, capped, &error));
	g_assert_no_error(error);
	return sweep;
}

/* ------------------------------------------------------- grid building */

static void
test_set_product(void)
{
	g_autoptr(CcaSnapshot) snap = cca_test_load_trace("seedfrag.default");
	GError *error = NULL;
	g_autoptr(CcaSweep) sweep = cca_sweep_new(snap, 0, 0, &error);
	g_assert_no_error(error);
	g_assert_cmpuint(sweep->rows->len, ==, 1);
	const CcaSweepRow *recorded = g_ptr_array_index(sweep->rows, 0);
	g_assert_true(recorded->recorded);
	g_assert_cmpstr(recorded->conf, ==, "");
	const char *sets[] = {"max_split_size_mb=128, 512,default",
			      "expandable_segments=True,False"};
	g_assert_true(cca_sweep_add_sets(sweep, sets, 2, &error));
	g_assert_no_error(error);
	/* 3 x 2 = 6 combinations; "expandable_segments:False" alone equals the
	 * defaults (the recorded row), so 5 new rows */
	g_assert_cmpuint(sweep->rows->len, ==, 6);
	const char *want[] = {"max_split_size_mb:128,expandable_segments:True",
			      "max_split_size_mb:128",
			      "max_split_size_mb:512,expandable_segments:True",
			      "max_split_size_mb:512", "expandable_segments:True"};
	for (guint i = 0; i < G_N_ELEMENTS(want); i++) {
		const CcaSweepRow *row = find_row(sweep, want[i]);
		g_assert_nonnull(row);
		g_assert_cmpstr(row->origin, ==, "--set");
		g_assert_false(row->recorded);
	}
	/* list values keep their commas inside [...] */
	const char *lists[] = {"roundup_power2_divisions=[256:1,512:2,>:4],4"};
	g_assert_true(cca_sweep_add_sets(sweep, lists, 1, &error));
	g_assert_no_error(error);
	g_assert_cmpuint(sweep->rows->len, ==, 8);
	g_assert_nonnull(find_row(sweep, "roundup_power2_divisions:4"));
	/* adding an existing setting again is a no-op */
	g_assert_true(cca_sweep_add_config(sweep, "max_split_size_mb:128", "--config", &error));
	g_assert_cmpuint(sweep->rows->len, ==, 8);
}

static void
test_set_errors(void)
{
	g_autoptr(CcaSnapshot) snap = cca_test_load_trace("seedfrag.default");
	static const struct {
		const char *set;
		const char *message; /* a substring of the error */
	} cases[] = {
		{"max_split_size_mb", "expected KEY=V1,V2"},
		{"=128", "expected KEY=V1,V2"},
		{"max_split_size_mb=", "empty value"},
		{"max_split_size_mb=128,,512", "empty value"},
		{"roundup_power2_divisions=[256:1,4", "unbalanced"},
		{"roundup_power2_divisions=256:1]", "unbalanced"},
		{"no_such_key=1", "Unrecognized key 'no_such_key'"},
		{"max_split_size_mb=10", "max_split_size_mb:10"},
		{"garbage_collection_threshold=1.5", "garbage_collection_threshold"},
	};
	for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
		GError *error = NULL;
		g_autoptr(CcaSweep) sweep = cca_sweep_new(snap, 0, 0, &error);
		const char *sets[] = {cases[i].set};
		g_assert_false(cca_sweep_add_sets(sweep, sets, 1, &error));
		g_assert_nonnull(error);
		if (!strstr(error->message, cases[i].message))
			g_test_message("--set %s: %s", cases[i].set, error->message);
		g_assert_nonnull(strstr(error->message, cases[i].message));
		g_assert_null(strchr(error->message, '\n'));
		g_clear_error(&error);
	}
	GError *error = NULL;
	g_autoptr(CcaSweep) sweep = cca_sweep_new(snap, 0, 0, &error);
	const char *twice[] = {"max_split_size_mb=128", "max_split_size_mb=256"};
	g_assert_false(cca_sweep_add_sets(sweep, twice, 2, &error));
	g_assert_nonnull(strstr(error->message, "given twice"));
	g_clear_error(&error);
	g_assert_null(cca_sweep_new(snap, 3, 0, &error));
	g_assert_nonnull(strstr(error->message, "no device 3"));
	g_clear_error(&error);
}

static void
test_default_grid(void)
{
	g_autoptr(CcaSnapshot) snap = cca_test_load_trace("dyninfer.default");
	g_autoptr(CcaSweep) plain = default_grid_sweep(snap, false);
	g_autoptr(CcaSweep) capped = default_grid_sweep(snap, true);
	const CcaSweepRow *first = g_ptr_array_index(plain->rows, 0);
	g_assert_cmpstr(first->origin, ==, "recorded");
	for (unsigned mb = 32; mb <= 4096; mb *= 2) {
		g_autofree char *conf = g_strdup_printf("max_split_size_mb:%u", mb);
		g_assert_nonnull(find_row(plain, conf));
	}
	for (unsigned d = 2; d <= 16; d *= 2) {
		g_autofree char *conf = g_strdup_printf("roundup_power2_divisions:%u", d);
		g_assert_nonnull(find_row(plain, conf));
	}
	g_assert_nonnull(find_row(plain, "expandable_segments:True"));
	g_assert_nonnull(find_row(plain, "max_split_size_mb:128,expandable_segments:True"));
	guint derived = 0;
	for (guint i = 0; i < plain->rows->len; i++) {
		const CcaSweepRow *row = g_ptr_array_index(plain->rows, i);
		derived += g_str_has_prefix(row->origin, "trace: ");
		g_assert_null(strstr(row->conf, "garbage_collection"));
		for (guint j = 0; j < i; j++)
			g_assert_false(cca_settings_equal(
				&row->settings,
				&((const CcaSweepRow *)g_ptr_array_index(plain->rows, j))
					 ->settings));
	}
	g_assert_cmpuint(derived, >=, 1);
	g_assert_nonnull(find_row(capped, "garbage_collection_threshold:0.6"));
	g_assert_nonnull(find_row(capped, "garbage_collection_threshold:0.8"));
	g_assert_nonnull(
		find_row(capped, "max_split_size_mb:256,garbage_collection_threshold:0.6"));
	g_assert_cmpuint(capped->rows->len, ==, plain->rows->len + 4);
}

/* ------------------------------------------- rows equal replay --config */

typedef struct {
	const char *trace;
	double cap_fraction; /* 0: none */
} EqualCase;

static void
compare_stat(const char *name, int64_t value, void *data)
{
	const CcaStats *other = data;
	int64_t expected = 0;
	g_assert_true(cca_stats_lookup(other, name, &expected));
	if (expected != value)
		g_test_message("%s: replay %" G_GINT64_FORMAT ", sweep %" G_GINT64_FORMAT, name,
			       expected, value);
	g_assert_cmpint(value, ==, expected);
}

static void
test_equals_replay(gconstpointer data)
{
	const EqualCase *tc = data;
	g_autoptr(CcaSnapshot) snap = cca_test_load_trace(tc->trace);
	g_autoptr(CcaSweep) sweep = default_grid_sweep(snap, tc->cap_fraction > 0);
	GError *error = NULL;
	g_autoptr(CcaCalibrationTable) cal = cca_calibration_new_h200();
	CcaSweepOptions opt = {.memory_fraction = tc->cap_fraction,
			       .calibration = cal,
			       .address_sensitivity = true};
	g_assert_true(cca_sweep_run(sweep, &opt, &error));
	g_assert_no_error(error);
	guint checked = 0;
	for (guint i = 0; i < sweep->rows->len; i++) {
		const CcaSweepRow *row = g_ptr_array_index(sweep->rows, i);
		/* what tools/cmd_replay.c builds for --config ROW */
		CcaReplayOptions ro;
		cca_replay_options_init(&ro);
		ro.memory_fraction = tc->cap_fraction;
		ro.pytorch_version = cca_replay_guess_pytorch_version(snap);
		CcaSettings settings;
		cca_settings_init(&settings);
		settings.pytorch_version = ro.pytorch_version;
		g_assert_true(cca_settings_parse(&settings, row->conf, &error));
		ro.settings = &settings;
		CcaReplayResult res;
		g_assert_true(cca_replay_run(snap, &ro, &res, &error));
		cca_stats_foreach(&row->runs[0].stats, compare_stat, &res.stats);
		g_assert_cmpfloat(row->runs[0].value[CCA_SWEEP_FIG_PEAK_RESERVED], ==,
				  (double)res.stats.reserved_bytes[CCA_STAT_ALL].peak);
		g_assert_cmpfloat(row->runs[0].value[CCA_SWEEP_FIG_UNALLOCATED_AT_PEAK], ==,
				  (double)(res.reserved_at_peak - res.allocated_at_peak));
		g_assert_cmpfloat(row->runs[0].value[CCA_SWEEP_FIG_OOM], ==,
				  res.unexpected_ooms || res.stats.num_ooms ? 1.0 : 0.0);
		g_assert_cmpuint(row->runs[0].events, ==, res.events);
		g_assert_true(row->lo[CCA_SWEEP_FIG_PEAK_RESERVED] <=
			      row->runs[0].value[CCA_SWEEP_FIG_PEAK_RESERVED]);
		g_assert_true(row->hi[CCA_SWEEP_FIG_PEAK_RESERVED] >=
			      row->runs[0].value[CCA_SWEEP_FIG_PEAK_RESERVED]);
		/* what-if rows: one run per address model; the recorded row:
		 * its own addresses, plus each model when the cap acted */
		if (row->recorded)
			g_assert_true(row->n_runs == 1 ||
				      (tc->cap_fraction > 0 && row->n_runs == 1 + bound_models()));
		else
			g_assert_cmpuint(row->n_runs, ==, bound_models());
		g_assert_cmpint(row->runs[0].model, ==,
				row->recorded ? CCA_ADDRESS_RECORDED : CCA_ADDRESS_DRIVER);
		cca_replay_result_clear(&res);
		cca_settings_clear(&settings);
		checked++;
	}
	g_test_message("%s: %u rows equal their replay", tc->trace, checked);
	g_assert_cmpuint(checked, >=, 15);
}

/* ------------------------------------------------------- determinism */

static char *
sweep_output(const CcaSnapshot *snap, guint threads, bool csv)
{
	g_autoptr(CcaSweep) sweep = default_grid_sweep(snap, true);
	GError *error = NULL;
	g_autoptr(CcaCalibrationTable) cal = cca_calibration_new_h200();
	CcaSweepOptions opt = {.memory_fraction = 0.005, .calibration = cal, .threads = threads};
	g_assert_true(cca_sweep_run(sweep, &opt, &error));
	cca_sweep_sort(sweep, CCA_GOAL_RESERVED);
	GString *why = g_string_new(NULL);
	CcaSweepReport report = {.trace = "t", .goal = CCA_GOAL_RESERVED, .options = &opt};
	report.recommended = cca_sweep_recommend(sweep, CCA_GOAL_RESERVED, &opt, why);
	report.why = why->str;
	GString *out = g_string_new(NULL);
	if (csv)
		cca_sweep_print_csv(sweep, out);
	else
		cca_sweep_print_json(sweep, &report, out);
	g_string_free(why, TRUE);
	return g_string_free(out, FALSE);
}

static void
test_deterministic(void)
{
	g_autoptr(CcaSnapshot) snap = cca_test_load_trace("dyninfer.default");
	g_autofree char *one = sweep_output(snap, 1, false);
	g_autofree char *four = sweep_output(snap, 4, false);
	g_autofree char *again = sweep_output(snap, 4, false);
	g_assert_cmpstr(one, ==, four);
	g_assert_cmpstr(four, ==, again);
	g_autofree char *csv1 = sweep_output(snap, 1, true);
	g_autofree char *csv3 = sweep_output(snap, 3, true);
	g_assert_cmpstr(csv1, ==, csv3);
	g_assert_true(g_str_has_prefix(csv1, "rank,settings,origin,recorded,address_sensitive,"));
}

/* Rows that differ in max_split_size alone, above every segment their
 * replays made, take the largest such row's runs (cca_sweep_twin()): each
 * is the run a sweep of that row alone makes, every figure and
 * memory_stats() key alike but max_split_size, and replayed false. */
static void
test_max_split_twins(void)
{
	g_autoptr(CcaSnapshot) snap = cca_test_load_trace("dyninfer.default");
	GError *error = NULL;
	g_autoptr(CcaSweep) sweep = cca_sweep_new(snap, 0, 0, &error);
	const char *sets[] = {"max_split_size_mb=512,1024,4096"};
	g_assert_true(cca_sweep_add_sets(sweep, sets, 1, &error));
	CcaSweepOptions opt = {.threads = 2, .address_sensitivity = true};
	g_assert_true(cca_sweep_run(sweep, &opt, &error));
	g_assert_no_error(error);
	guint shared = 0;
	for (guint i = 0; i < sweep->rows->len; i++) {
		const CcaSweepRow *row = g_ptr_array_index(sweep->rows, i);
		if (row->recorded)
			continue;
		g_autoptr(CcaSweep) alone = cca_sweep_new(snap, 0, 0, &error);
		g_autofree char *set = g_strdelimit(g_strdup(row->conf), ":", '=');
		const char *one[] = {set};
		g_assert_true(cca_sweep_add_sets(alone, one, 1, &error));
		g_assert_true(cca_sweep_run(alone, &opt, &error));
		g_assert_no_error(error);
		const CcaSweepRow *own = find_row(alone, row->conf);
		g_assert_nonnull(own);
		g_assert_cmpint(cca_sweep_twin(alone, 1), ==, -1);
		g_assert_cmpuint(row->n_runs, ==, own->n_runs);
		for (guint m = 0; m < row->n_runs; m++) {
			const CcaSweepRun *a = &row->runs[m], *b = &own->runs[m];
			g_assert_true(memcmp(a->value, b->value, sizeof a->value) == 0);
			g_assert_true(memcmp(&a->stats, &b->stats, sizeof a->stats) == 0);
			g_assert_cmpuint(a->events, ==, b->events);
			shared += !a->replayed && b->replayed;
		}
	}
	/* the 512 and 1024 MiB rows: every run */
	g_assert_cmpuint(shared, >=, 2);
}

/* Sorting is total: ties on every figure fall back to the settings string. */
static void
test_sort_order(void)
{
	g_autoptr(CcaSnapshot) snap = cca_test_load_trace("seedfrag.default");
	g_autoptr(CcaSweep) sweep = default_grid_sweep(snap, false);
	GError *error = NULL;
	CcaSweepOptions opt = {.threads = 2};
	g_assert_true(cca_sweep_run(sweep, &opt, &error));
	for (int goal = CCA_GOAL_RESERVED; goal <= CCA_GOAL_MALLOCS; goal++) {
		cca_sweep_sort(sweep, (CcaGoal)goal);
		CcaSweepFigure f = goal == CCA_GOAL_MALLOCS ? CCA_SWEEP_FIG_MALLOCS
							    : CCA_SWEEP_FIG_PEAK_RESERVED;
		for (guint i = 1; i < sweep->rows->len; i++) {
			const CcaSweepRow *a = g_ptr_array_index(sweep->rows, i - 1);
			const CcaSweepRow *b = g_ptr_array_index(sweep->rows, i);
			g_assert_cmpfloat(a->runs[0].value[CCA_SWEEP_FIG_OOM], <=,
					  b->runs[0].value[CCA_SWEEP_FIG_OOM]);
			if (a->runs[0].value[CCA_SWEEP_FIG_OOM] ==
			    b->runs[0].value[CCA_SWEEP_FIG_OOM])
				g_assert_cmpfloat(a->runs[0].value[f], <=, b->runs[0].value[f]);
			if (a->runs[0].value[f] == b->runs[0].value[f] &&
			    a->runs[0].value[CCA_SWEEP_FIG_PEAK_RESERVED] ==
				    b->runs[0].value[CCA_SWEEP_FIG_PEAK_RESERVED] &&
			    a->runs[0].value[CCA_SWEEP_FIG_OOM] ==
				    b->runs[0].value[CCA_SWEEP_FIG_OOM])
				g_assert_cmpint(strcmp(a->conf, b->conf), <, 0);
		}
	}
}

/* The recommendation under a cap that the recorded settings exceed. */
static void
test_recommend(void)
{
	g_autoptr(CcaSnapshot) snap = cca_test_load_trace("dyninfer.default");
	GError *error = NULL;
	g_autoptr(CcaSweep) sweep = cca_sweep_new(snap, 0, 0, &error);
	g_assert_true(cca_sweep_add_config(sweep, "expandable_segments:True", "--config", &error));
	g_assert_true(cca_sweep_add_config(sweep, "max_split_size_mb:128", "--config", &error));
	/* dyninfer reserves 1758 MiB by default and 924 MiB with expandable
	 * segments: under a cap of 945 MiB the defaults run out of memory even
	 * after freeing their cache, expandable segments do not */
	CcaSweepOptions opt = {.memory_fraction = 0.0066};
	g_assert_true(cca_sweep_run(sweep, &opt, &error));
	GString *why = g_string_new(NULL);
	const CcaSweepRow *best = cca_sweep_recommend(sweep, CCA_GOAL_RESERVED, &opt, why);
	g_test_message("%s", why->str);
	g_assert_nonnull(best);
	g_assert_cmpstr(best->conf, ==, "expandable_segments:True");
	g_assert_nonnull(strstr(why->str, "PYTORCH_CUDA_ALLOC_CONF=\"expandable_segments:True\""));
	g_assert_nonnull(strstr(why->str, "run out of memory at event"));
	g_string_truncate(why, 0);
	/* under a cap nothing fits */
	opt.memory_fraction = 100e6 / (double)CCA_H200_TOTAL_MEMORY;
	g_assert_true(cca_sweep_run(sweep, &opt, &error));
	g_assert_null(cca_sweep_recommend(sweep, CCA_GOAL_RESERVED, &opt, why));
	g_assert_nonnull(strstr(why->str, "No setting in this grid"));
	g_string_free(why, TRUE);
}

/* ------------------------------------------------ PyTorch's what-ifs */

static guint n_equal, n_range, n_neither;

static const struct {
	const char *key;
	CcaSweepFigure figure;
} whatif_keys[] = {
	{"reserved_bytes.all.peak", CCA_SWEEP_FIG_PEAK_RESERVED},
	{"num_device_alloc", CCA_SWEEP_FIG_MALLOCS},
	{"num_device_free", CCA_SWEEP_FIG_FREES},
	{"num_alloc_retries", CCA_SWEEP_FIG_RETRIES},
	{"num_ooms", CCA_SWEEP_FIG_OOMS},
};

static void
test_whatif(gconstpointer data)
{
	const CcaTestRun *tc = data;
	g_autofree char *json = cca_test_read_text(tc->json);
	g_autofree char *conf = cca_test_json_string(json, "conf");
	g_assert_nonnull(conf);
	g_autofree char *name = g_strdup_printf("%s.default", tc->workload);
	g_autoptr(CcaSnapshot) snap = cca_test_load_trace(name);
	GError *error = NULL;
	g_autoptr(CcaSweep) sweep = cca_sweep_new(snap, 0, 0, &error);
	g_assert_true(cca_sweep_add_config(sweep, conf, "whatif", &error));
	CcaSweepOptions opt = {.memory_fraction = cca_test_memory_fraction(json)};
	g_assert_true(cca_sweep_run(sweep, &opt, &error));
	g_assert_no_error(error);
	/* the row of C: its canonical string */
	CcaSettings s;
	cca_settings_init(&s);
	g_assert_true(cca_settings_parse(&s, conf, &error));
	g_autofree char *canonical = cca_settings_to_string(&s);
	cca_settings_clear(&s);
	const CcaSweepRow *row = find_row(sweep, canonical);
	g_assert_nonnull(row);
	bool equal = true, within = true;
	GString *why = g_string_new(NULL);
	for (guint k = 0; k < G_N_ELEMENTS(whatif_keys); k++) {
		gint64 truth;
		g_assert_true(cca_test_json_int(json, whatif_keys[k].key, &truth));
		CcaSweepFigure f = whatif_keys[k].figure;
		double v = row->runs[0].value[f];
		if (v != (double)truth)
			equal = false;
		if ((double)truth < row->lo[f] || (double)truth > row->hi[f])
			within = false;
		if (v != (double)truth)
			g_string_append_printf(
				why, " %s: torch %" G_GINT64_FORMAT ", row %.0f [%.0f, %.0f];",
				whatif_keys[k].key, truth, v, row->lo[f], row->hi[f]);
	}
	if (equal) {
		n_equal++;
	} else if (within) {
		n_range++;
		g_test_message("%s: within the row's range:%s", tc->name, why->str);
	} else {
		n_neither++;
		g_autofree char *msg = g_strdup_printf("%s: outside the address models' range:%s",
						       tc->name, why->str);
		g_test_incomplete(msg);
	}
	g_string_free(why, TRUE);
}

static void
test_whatif_counts(void)
{
	g_test_message("whatif rows: %u equal, %u within the address range, %u neither", n_equal,
		       n_range, n_neither);
	g_assert_cmpuint(n_equal + n_range + n_neither, ==, 48);
	g_assert_cmpuint(n_equal + n_range, >, 0);
}

int
main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/sweep/set-product", test_set_product);
	g_test_add_func("/sweep/set-errors", test_set_errors);
	g_test_add_func("/sweep/default-grid", test_default_grid);
	static const EqualCase equal_cases[] = {
		{"seedfrag.default", 0.0},
		{"multistream.default", 0.0},
		{"dyninfer.default", 0.0},
		{"dyninfer.default",
		 927911987.0 / (double)CCA_H200_TOTAL_MEMORY}, /* dyninfer.cap's cap: OOM rows */
		{"multistream.cap",
		 36914380.0 / (double)CCA_H200_TOTAL_MEMORY}, /* a trace that ends in an OOM */
	};
	for (guint i = 0; i < G_N_ELEMENTS(equal_cases); i++) {
		g_autofree char *path =
			g_strdup_printf("/sweep/equals-replay/%s%s", equal_cases[i].trace,
					equal_cases[i].cap_fraction > 0 ? "+cap" : "");
		g_test_add_data_func(path, &equal_cases[i], test_equals_replay);
	}
	g_test_add_func("/sweep/deterministic", test_deterministic);
	g_test_add_func("/sweep/max-split-twins", test_max_split_twins);
	g_test_add_func("/sweep/sort-order", test_sort_order);
	g_test_add_func("/sweep/recommend", test_recommend);

	GPtrArray *whatifs = cca_test_runs(TRUE);
	cca_test_add_runs("/sweep/whatif", whatifs, test_whatif);
	g_test_add_func("/sweep/whatif/counts", test_whatif_counts);
	int status = g_test_run();
	g_ptr_array_unref(whatifs);
	return status;
}
