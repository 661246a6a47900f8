/* test-fit.c - the smallest device memory a trace runs in (/fit/...).
 *
 * /fit/default/W: for each W.default, the capacity fit reports runs
 * without OOM and 2 MiB less does not, both checked again by replays built
 * as `ccasim replay --device-memory` builds them.  /fit/oom/W.C: for every
 * capped W.C whose real run died of OOM, fit under its setting (on the
 * W.C trace itself and on W.default) reports more than the cap.
 */
#include "config.h"

#include <glib.h>
#include <string.h>

#include "replay.h"
#include "simdevice.h"
#include "fit.h"
#include "settings.h"
#include "snapshot.h"
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

/* `ccasim replay TRACE --device-memory CAPACITY` (SETTINGS: NULL, the
 * recorded ones; else a what-if under them and MODEL): did a request
 * fail? */
static bool
replay_ooms(const CcaSnapshot *snap, const CcaSettings *settings, CcaAddressModel model,
	    uint64_t capacity)
{
	CcaReplayOptions opt;
	cca_replay_options_init(&opt);
	opt.device_memory = capacity;
	opt.capacity_set = true;
	opt.settings = settings;
	opt.pytorch_version =
		settings ? settings->pytorch_version : cca_replay_guess_pytorch_version(snap);
	opt.address_model = model;
	CcaReplayResult res;
	GError *error = NULL;
	g_assert_true(cca_replay_run(snap, &opt, &res, &error));
	g_assert_no_error(error);
	bool oom = res.unexpected_ooms > 0 || res.stats.num_ooms > 0;
	cca_replay_result_clear(&res);
	return oom;
}

static CcaFitRow *
fit_rows(CcaSweep *sweep, const CcaFitOptions *extra)
{
	CcaFitOptions opt = {.context = CCA_GPU_CONTEXT_BYTES};
	if (extra)
		opt = *extra;
	GError *error = NULL;
	CcaFitRow *rows = cca_fit_run(sweep, &opt, &error);
	g_assert_no_error(error);
	g_assert_nonnull(rows);
	return rows;
}

static void
test_default(gconstpointer data)
{
	const char *workload = data;
	g_autofree char *name = g_strdup_printf("%s.default", workload);
	g_autoptr(CcaSnapshot) snap = cca_test_load_trace(name);
	GError *error = NULL;
	g_autoptr(CcaSweep) sweep = cca_sweep_new(snap, 0, 0, &error);
	g_assert_no_error(error);
	g_autofree CcaFitRow *rows = fit_rows(sweep, NULL);
	const CcaFitRun *run = &rows[0].runs[0];
	g_assert_true(rows[0].row->recorded);
	g_assert_cmpuint(rows[0].n_runs, ==,
			 1 + bound_models()); /* its own addresses, then each model */
	g_assert_cmpint(rows[0].runs[0].at.model, ==, CCA_ADDRESS_RECORDED);
	g_assert_true(run->found);
	g_assert_cmpuint(run->capacity % CCA_FIT_STEP, ==, 0);
	g_assert_cmpuint(run->capacity, >, CCA_FIT_STEP);
	g_assert_true(run->below_run);
	g_assert_false(run->below_fits);
	g_assert_cmpfloat(run->at.value[CCA_SWEEP_FIG_OOM], ==, 0);
	g_assert_cmpfloat(run->below.value[CCA_SWEEP_FIG_OOM], ==, 1);
	g_assert_cmpfloat(run->at.value[CCA_SWEEP_FIG_PEAK_RESERVED], <=, (double)run->capacity);
	/* independently: replay at the answer and 2 MiB below */
	g_assert_false(replay_ooms(snap, NULL, CCA_ADDRESS_DRIVER, run->capacity));
	g_assert_true(replay_ooms(snap, NULL, CCA_ADDRESS_DRIVER, run->capacity - CCA_FIT_STEP));
	g_test_message("%s: fits in %" G_GUINT64_FORMAT " MiB (%u replays); peak reserved there "
		       "%.0f MiB; %" G_GUINT64_FORMAT
		       " MiB runs out of memory at event %" G_GUINT64_FORMAT,
		       name, run->capacity >> 20, run->replays,
		       run->at.value[CCA_SWEEP_FIG_PEAK_RESERVED] / 1048576.0,
		       (run->capacity - CCA_FIT_STEP) >> 20, run->below.oom_event);
}

/* A capped run W.C that died of OOM. */
typedef struct {
	const CcaTestRun *run;
	uint64_t cap;
	char *conf; /* its PYTORCH_CUDA_ALLOC_CONF */
} OomCase;

static void
test_oom(gconstpointer data)
{
	const OomCase *tc = data;
	const char *name = tc->run->name;
	GError *error = NULL;
	/* the W.C trace itself, under its recorded settings */
	g_autoptr(CcaSnapshot) snap = cca_test_load_trace(name);
	g_autoptr(CcaSweep) sweep = cca_sweep_new(snap, 0, 0, &error);
	g_autofree CcaFitRow *rows = fit_rows(sweep, NULL);
	const CcaFitRun *run = &rows[0].runs[0];
	g_assert_true(run->found);
	g_test_message("%s (cap %" G_GUINT64_FORMAT " bytes = %.1f MiB): its own trace fits in "
		       "%" G_GUINT64_FORMAT " MiB",
		       name, tc->cap, (double)tc->cap / 1048576.0, run->capacity >> 20);
	g_assert_cmpuint(run->capacity, >, tc->cap);
	g_assert_false(replay_ooms(snap, NULL, CCA_ADDRESS_DRIVER, run->capacity));
	g_assert_true(replay_ooms(snap, NULL, CCA_ADDRESS_DRIVER, run->capacity - CCA_FIT_STEP));
	/* the whole program (W.default) under setting C */
	g_autofree char *dname = g_strdup_printf("%s.default", tc->run->workload);
	g_autoptr(CcaSnapshot) full = cca_test_load_trace(dname);
	g_autoptr(CcaSweep) s2 = cca_sweep_new(full, 0, 0, &error);
	g_assert_true(cca_sweep_add_config(s2, tc->conf, "--config", &error));
	g_autofree CcaFitRow *r2 = fit_rows(s2, NULL);
	CcaSettings s;
	cca_settings_init(&s);
	g_assert_true(cca_settings_parse(&s, tc->conf, &error));
	g_autofree char *canonical = cca_settings_to_string(&s);
	cca_settings_clear(&s);
	const CcaFitRow *row = NULL;
	for (guint i = 0; i < s2->rows->len; i++)
		if (strcmp(r2[i].row->conf, canonical) == 0)
			row = &r2[i];
	g_assert_nonnull(row);
	for (guint m = 0; m < row->n_runs; m++) {
		g_assert_true(row->runs[m].found);
		g_assert_cmpuint(row->runs[m].capacity, >, tc->cap);
		g_assert_true(!row->runs[m].below_run || !row->runs[m].below_fits);
	}
	g_test_message("%s: %s under \"%s\" fits in %" G_GUINT64_FORMAT "..%" G_GUINT64_FORMAT
		       " MiB",
		       name, dname, tc->conf, row->lo >> 20, row->hi >> 20);
}

static void
test_gpu_presets(void)
{
	guint n;
	const CcaGpuPreset *presets = cca_fit_gpu_presets(&n);
	g_assert_cmpuint(n, >=, 12);
	for (guint i = 0; i < n; i++) {
		const char *k = presets[i].kind;
		g_assert_true(strcmp(k, "measured") == 0 || strcmp(k, "reported") == 0 ||
			      strcmp(k, "estimate") == 0);
		g_assert_cmpuint(strlen(presets[i].source), >, 10);
		g_assert_cmpuint(presets[i].total_memory, >, UINT64_C(8) << 30);
		g_assert_true(cca_fit_gpu_preset_find(presets[i].name, NULL) == &presets[i]);
	}
	const CcaGpuPreset *h200 = cca_fit_gpu_preset_find("H200", NULL);
	g_assert_cmpuint(h200->total_memory, ==, UINT64_C(150109880320));
	g_assert_cmpstr(h200->kind, ==, "measured");
	g_assert_cmpuint(cca_fit_gpu_usable(h200, CCA_GPU_CONTEXT_BYTES), ==,
			 UINT64_C(150109880320) - (UINT64_C(690) << 20));
	g_assert_cmpuint(cca_fit_gpu_usable(h200, UINT64_C(1) << 50), ==, 0);
}

/* A GPU name finds a preset only when it is a preset's name or alias
 * (without case, ' ', '-', '_'); a shorter name never picks a card: it is
 * refused in one line that lists the candidates. */
static const struct {
	const char *name;
	const char *found; /* NULL: refused */
	const char *error; /* the whole message when refused */
} gpu_name_cases[] = {
	{"a100 40gb", "A100-40GB", NULL},
	{"rtx_4090", "RTX-4090", NULL},
	{"4090", "RTX-4090", NULL},
	{"h100", "H100-80GB", NULL},
	{"L4", "L4", NULL},
	{"l40s", "L40S", NULL},
	{"A100", NULL, "ambiguous GPU 'A100': it could be A100-80GB, A100-40GB (give one of them)"},
	{"V100", NULL, "ambiguous GPU 'V100': it could be V100-32GB, V100-16GB (give one of them)"},
	{"rtx", NULL, "ambiguous GPU 'rtx': it could be RTX-4090, RTX-3090 (give one of them)"},
	{"L40", NULL, "unknown GPU 'L40': did you mean L40S?"},
	{"A100-60GB", NULL,
	 "unknown GPU 'A100-60GB': the presets are H200, H100-80GB, A100-80GB, A100-40GB, L40S, "
	 "A10G, L4, RTX-4090, RTX-3090, V100-32GB, V100-16GB, T4 (fit --list-gpus)"},
	{"", NULL,
	 "unknown GPU '': the presets are H200, H100-80GB, A100-80GB, A100-40GB, L40S, A10G, L4, "
	 "RTX-4090, RTX-3090, V100-32GB, V100-16GB, T4 (fit --list-gpus)"},
};

static void
test_gpu_name(gconstpointer data)
{
	guint i = GPOINTER_TO_UINT(data);
	g_autoptr(GError) error = NULL;
	const CcaGpuPreset *g = cca_fit_gpu_preset_find(gpu_name_cases[i].name, &error);
	if (gpu_name_cases[i].found) {
		g_assert_no_error(error);
		g_assert_cmpstr(g->name, ==, gpu_name_cases[i].found);
	} else {
		g_assert_null(g);
		g_assert_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE);
		g_assert_cmpstr(error->message, ==, gpu_name_cases[i].error);
	}
}

/* The --gpu answer is a replay at the GPU's usable memory. */
static void
test_gpu_answer(void)
{
	g_autoptr(CcaSnapshot) snap = cca_test_load_trace("seedfrag.default");
	GError *error = NULL;
	g_autoptr(CcaSweep) sweep = cca_sweep_new(snap, 0, 0, &error);
	g_autofree CcaFitRow *probe = fit_rows(sweep, NULL);
	uint64_t need = probe[0].runs[0].capacity;
	const CcaGpuPreset big = {"big", "", need + CCA_GPU_CONTEXT_BYTES, "estimate", "a test"};
	const CcaGpuPreset small = {"small", "", need + CCA_GPU_CONTEXT_BYTES - CCA_FIT_STEP,
				    "estimate", "a test"};
	const CcaGpuPreset *t4 = cca_fit_gpu_preset_find("T4", NULL);
	const CcaGpuPreset *gpus[] = {&big, &small, t4};
	CcaFitOptions opt = {.gpus = gpus, .n_gpus = 3, .context = CCA_GPU_CONTEXT_BYTES};
	g_autofree CcaFitRow *rows = fit_rows(sweep, &opt);
	g_assert_cmpint(rows[0].runs[0].gpu_fits[0], ==, 1);
	g_assert_cmpint(rows[0].runs[0].gpu_fits[1], ==, 0);
	g_assert_cmpint(rows[0].runs[0].gpu_fits[2], ==, 1);
	GString *out = g_string_new(NULL);
	CcaFitReport report = {.trace = "seedfrag", .options = &opt};
	cca_fit_print_json(sweep, rows, 1, &report, out);
	g_assert_nonnull(strstr(out->str, "\"small\": false"));
	g_assert_nonnull(strstr(out->str, "\"big\": true"));
	g_string_free(out, TRUE);
}

/* What-if rows are searched under every address model; the range holds
 * each model's answer and each answer is backed by its two replays. */
static void
test_whatif_rows(void)
{
	g_autoptr(CcaSnapshot) snap = cca_test_load_trace("multistream.default");
	GError *error = NULL;
	g_autoptr(CcaSweep) sweep = cca_sweep_new(snap, 0, 0, &error);
	const char *sets[] = {"max_split_size_mb=32,128", "expandable_segments=True,False"};
	g_assert_true(cca_sweep_add_sets(sweep, sets, 2, &error));
	CcaFitOptions opt = {.threads = 2};
	g_autofree CcaFitRow *rows = fit_rows(sweep, &opt);
	guint n = sweep->rows->len;
	cca_fit_sort(rows, n);
	for (guint i = 0; i < n; i++) {
		const CcaFitRow *f = &rows[i];
		g_assert_cmpuint(f->n_runs, ==,
				 f->row->recorded ? 1 + bound_models() : bound_models());
		for (guint m = 0; m < f->n_runs; m++) {
			const CcaFitRun *r = &f->runs[m];
			g_assert_true(r->found);
			g_assert_cmpuint(r->capacity, >=, f->lo);
			g_assert_cmpuint(r->capacity, <=, f->hi);
			g_assert_true(r->below_run && !r->below_fits);
		}
		if (i > 0)
			g_assert_cmpuint(rows[i - 1].runs[0].capacity, <=, f->runs[0].capacity);
	}
}

/* A row whose first address model decided nothing by address alone at
 * its answer and a step below gives that answer to the other models
 * without a replay (it holds under each, replayed here); a row that did
 * decide by address searches each model.  dyninfer: expandable segments
 * never tie, max_split_size_mb:128 does (680 ties uncapped). */
static void
test_shared_answer(void)
{
	g_autoptr(CcaSnapshot) snap = cca_test_load_trace("dyninfer.default");
	GError *error = NULL;
	g_autoptr(CcaSweep) sweep = cca_sweep_new(snap, 0, 0, &error);
	const char *sets[] = {"expandable_segments=True", "max_split_size_mb=128"};
	for (guint i = 0; i < G_N_ELEMENTS(sets); i++)
		g_assert_true(cca_sweep_add_sets(sweep, &sets[i], 1, &error));
	g_assert_no_error(error);
	CcaFitOptions opt = {.threads = 2};
	g_autofree CcaFitRow *rows = fit_rows(sweep, &opt);
	guint shared = 0, searched = 0;
	for (guint i = 0; i < sweep->rows->len; i++) {
		const CcaFitRow *f = &rows[i];
		if (f->row->recorded)
			continue;
		const CcaFitRun *first = &f->runs[0];
		bool tie_free = first->at.address_ties == 0 && first->below.address_ties == 0;
		for (guint m = 1; m < f->n_runs; m++) {
			const CcaFitRun *r = &f->runs[m];
			if (!tie_free) {
				g_assert_cmpuint(r->replays, >, 0);
				searched++;
				continue;
			}
			g_assert_cmpuint(r->replays, ==, 0);
			g_assert_false(r->at.replayed);
			g_assert_cmpuint(r->capacity, ==, first->capacity);
			g_assert_false(
				replay_ooms(snap, &f->row->settings, r->at.model, r->capacity));
			g_assert_true(replay_ooms(snap, &f->row->settings, r->at.model,
						  r->capacity - CCA_FIT_STEP));
			shared++;
		}
	}
	g_assert_cmpuint(shared, ==, bound_models() - 1);
	g_assert_cmpuint(searched, ==, bound_models() - 1);
}

/* Rows that differ in max_split_size alone, above every segment their
 * replays made, share their searches: the 512 and 1024 MiB rows take the
 * 4096 MiB row's runs without a replay (cca_settings_same_model_below()),
 * and each shared run is the one a fit of that row alone finds, every
 * figure and memory_stats() key alike but max_split_size. */
static void
test_max_split_twins(void)
{
	g_autoptr(CcaSnapshot) snap = cca_test_load_trace("dyninfer.default");
	GError *error = NULL;
	g_autoptr(CcaSweep) sweep = cca_sweep_new(snap, 0, 0, &error);
	const char *sets[] = {"max_split_size_mb=512,1024,4096"};
	g_assert_true(cca_sweep_add_sets(sweep, sets, 1, &error));
	g_assert_no_error(error);
	CcaFitOptions opt = {.threads = 2};
	g_autofree CcaFitRow *rows = fit_rows(sweep, &opt);
	guint shared = 0;
	for (guint i = 0; i < sweep->rows->len; i++) {
		const CcaFitRow *f = &rows[i];
		if (f->row->recorded)
			continue;
		/* the row alone: no twin to share with */
		g_autoptr(CcaSweep) alone = cca_sweep_new(snap, 0, 0, &error);
		g_autofree char *set = g_strdup_printf("max_split_size_mb=%" G_GUINT64_FORMAT,
						       f->row->settings.max_split_size >> 20);
		const char *one[] = {set};
		g_assert_true(cca_sweep_add_sets(alone, one, 1, &error));
		g_autofree CcaFitRow *own = fit_rows(alone, &opt);
		const CcaFitRow *g = own[0].row->recorded ? &own[1] : &own[0];
		g_assert_cmpuint(g->row->settings.max_split_size, ==,
				 f->row->settings.max_split_size);
		g_assert_cmpuint(f->n_runs, ==, g->n_runs);
		for (guint m = 0; m < f->n_runs; m++) {
			const CcaFitRun *a = &f->runs[m], *b = &g->runs[m];
			/* (the 4096 MiB row, and G, may share a model's search
			 * with their first model's too: shadow.h) */
			if (f->row->settings.max_split_size < UINT64_C(4096) << 20)
				shared += a->replays == 0;
			g_assert_cmpint(a->found, ==, b->found);
			g_assert_cmpuint(a->capacity, ==, b->capacity);
			g_assert_cmpint(a->below_fits, ==, b->below_fits);
			g_assert_true(memcmp(a->at.value, b->at.value, sizeof a->at.value) == 0);
			g_assert_true(memcmp(&a->at.stats, &b->at.stats, sizeof a->at.stats) == 0);
			g_assert_true(memcmp(&a->below.stats, &b->below.stats,
					     sizeof a->below.stats) == 0);
		}
	}
	/* the 512 and 1024 MiB rows, under every address model */
	g_assert_cmpuint(shared, ==, 2 * bound_models());
}

static void
oom_case_free(gpointer data)
{
	OomCase *tc = data;
	g_free(tc->conf);
	g_free(tc);
}

int
main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	static const char *const workloads[] = {"bert",	     "dyninfer", "gpt2gen", "multistream",
						"resnet152", "seedfrag", "stacks"};
	for (guint i = 0; i < G_N_ELEMENTS(workloads); i++) {
		g_autofree char *path = g_strdup_printf("/fit/default/%s", workloads[i]);
		g_test_add_data_func(path, workloads[i], test_default);
	}
	GPtrArray *runs = cca_test_runs(FALSE);
	GPtrArray *cases = g_ptr_array_new_with_free_func(oom_case_free);
	for (guint i = 0; i < runs->len; i++) {
		const CcaTestRun *run = g_ptr_array_index(runs, i);
		g_autofree char *json = cca_test_read_text(run->json);
		gint64 cap = 0;
		g_autofree char *status = cca_test_json_string(json, "status");
		cca_test_json_int(json, "cap_bytes", &cap);
		if (cap == 0 || !status || !g_str_has_prefix(status, "oom"))
			continue;
		OomCase *tc = g_new0(OomCase, 1);
		tc->run = run;
		tc->cap = (uint64_t)cap;
		tc->conf = cca_test_json_string(json, "PYTORCH_CUDA_ALLOC_CONF");
		if (!tc->conf)
			tc->conf = g_strdup("");
		g_autofree char *path = g_strdup_printf("/fit/oom/%s", run->name);
		g_ptr_array_add(cases, tc);
		g_test_add_data_func(path, tc, test_oom);
	}
	g_test_add_func("/fit/gpu-presets", test_gpu_presets);
	for (guint i = 0; i < G_N_ELEMENTS(gpu_name_cases); i++) {
		g_autofree char *path =
			g_strdup_printf("/fit/gpu-name/%u-%s", i, gpu_name_cases[i].name);
		g_test_add_data_func(path, GUINT_TO_POINTER(i), test_gpu_name);
	}
	g_test_add_func("/fit/gpu-answer", test_gpu_answer);
	g_test_add_func("/fit/whatif-rows", test_whatif_rows);
	g_test_add_func("/fit/shared-answer", test_shared_answer);
	g_test_add_func("/fit/max-split-twins", test_max_split_twins);
	int status = g_test_run();
	g_ptr_array_unref(cases);
	g_ptr_array_unref(runs);
	return status;
}
