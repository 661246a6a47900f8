/* cmd_fit.c - `ccasim fit TRACE`: option parsing and output only. */
#include "config.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "inputargs.h"
#include "commands.h"
#include "viewargs.h"
#include "fit.h"
#include "sizes.h"
#include "snapshot.h"
#include "sweep.h"
#include "whatif_cli.h"

typedef struct {
	char **configs;
	char **sets;
	gboolean default_grid;
	gboolean recorded;
	char **gpus;
	gboolean list_gpus;
	char *context;
	int device;
	char *pytorch_version;
	int jobs;
	gboolean json;
	gboolean no_progress;
} FitArgs;

static void
fit_args_clear(FitArgs *a)
{
	g_strfreev(a->configs);
	g_strfreev(a->sets);
	g_strfreev(a->gpus);
	g_free(a->context);
	g_free(a->pytorch_version);
}

/* Resolves --gpu names ("all" for every preset) into GPUS; returns FALSE
 * after printing a usage error. */
static gboolean
resolve_gpus(char **names, const CcaGpuPreset **gpus, guint *n)
{
	*n = 0;
	guint n_presets;
	const CcaGpuPreset *presets = cca_gpu_presets(&n_presets);
	for (char **p = names; p && *p; p++) {
		if (g_ascii_strcasecmp(*p, "all") == 0) {
			for (guint i = 0; i < n_presets && *n < CCA_FIT_MAX_GPUS; i++)
				gpus[(*n)++] = &presets[i];
			continue;
		}
		const CcaGpuPreset *g = cca_gpu_preset_find(*p);
		if (!g) {
			fprintf(stderr, "ccasim fit: --gpu: unknown GPU '%s' (see --list-gpus)\n",
				*p);
			return FALSE;
		}
		if (*n == CCA_FIT_MAX_GPUS) {
			fprintf(stderr, "ccasim fit: --gpu: at most %d GPUs\n", CCA_FIT_MAX_GPUS);
			return FALSE;
		}
		gpus[(*n)++] = g;
	}
	return TRUE;
}

int
cca_cmd_fit(int argc, char **argv)
{
	FitArgs args = {0};
	GOptionEntry entries[] = {
		{"config", 'c', 0, G_OPTION_ARG_STRING_ARRAY, &args.configs,
		 "Fit under these settings (PYTORCH_CUDA_ALLOC_CONF syntax; repeatable)", "STRING"},
		{"set", 's', 0, G_OPTION_ARG_STRING_ARRAY, &args.sets,
		 "Fit under each setting of a grid, as for sweep (repeatable)", "KEY=V1,V2,..."},
		{"default-grid", 0, 0, G_OPTION_ARG_NONE, &args.default_grid,
		 "Also fit the default grid (the default without --config, --set, --recorded)",
		 NULL},
		{"recorded", 0, 0, G_OPTION_ARG_NONE, &args.recorded,
		 "Fit only under the trace's recorded settings", NULL},
		{"gpu", 0, 0, G_OPTION_ARG_STRING_ARRAY, &args.gpus,
		 "Also say whether it fits on this GPU (a preset, or 'all'; repeatable)", "NAME"},
		{"list-gpus", 0, 0, G_OPTION_ARG_NONE, &args.list_gpus,
		 "List the GPU presets, their memory and its source, and exit", NULL},
		{"context", 0, 0, G_OPTION_ARG_STRING, &args.context,
		 "Memory the CUDA context takes on a --gpu (default 690MiB, measured on the H200)",
		 "BYTES"},
		{"device", 'd', 0, G_OPTION_ARG_INT, &args.device,
		 "Which device of the trace (default 0)", "N"},
		{"pytorch-version", 0, 0, G_OPTION_ARG_STRING, &args.pytorch_version,
		 "Replay by the rules of this release, 2.0 to 2.11 (default: guessed)", "X.Y"},
		{"jobs", 'j', 0, G_OPTION_ARG_INT, &args.jobs,
		 "Search on N threads (default: one per core)", "N"},
		{"json", 0, 0, G_OPTION_ARG_NONE, &args.json, "Print one JSON object", NULL},
		{"no-progress", 0, 0, G_OPTION_ARG_NONE, &args.no_progress,
		 "No progress bar (it only shows when stderr is a terminal)", NULL},
		{NULL, 0, 0, 0, NULL, NULL, NULL},
	};
	g_autoptr(GOptionContext) octx = g_option_context_new("TRACE");
	g_option_context_set_summary(
		octx,
		"Finds the smallest device memory, to 2 MiB, at which the trace runs without\n"
		"running out of memory, under each setting of the grid.  Each answer is\n"
		"checked by a replay at that size (no OOM) and one 2 MiB below (OOM).");
	g_autofree char *presets = NULL;
	{
		GString *s = g_string_new("Device memory means what PyTorch may reserve "
					  "(--device-memory of replay).\n\n");
		cca_gpu_presets_print(CCA_GPU_CONTEXT_BYTES, s);
		presets = g_string_free(s, FALSE);
	}
	g_option_context_set_description(octx, presets);
	g_option_context_add_main_entries(octx, entries, NULL);
	g_option_context_add_group(octx, cca_inputargs_group());
	GError *error = NULL;
	if (!g_option_context_parse(octx, &argc, &argv, &error)) {
		cca_view_print_error("fit", error);
		g_error_free(error);
		fit_args_clear(&args);
		return 2;
	}
	uint64_t context = CCA_GPU_CONTEXT_BYTES;
	if (args.context && !cca_size_parse(args.context, "--context", &context, &error)) {
		cca_view_print_error("fit", error);
		g_error_free(error);
		fit_args_clear(&args);
		return 2;
	}
	if (args.list_gpus) {
		GString *s = g_string_new(NULL);
		cca_gpu_presets_print(context, s);
		fputs(s->str, stdout);
		g_string_free(s, TRUE);
		fit_args_clear(&args);
		return 0;
	}
	CcaWhatifCommon common = {
		.command = "fit",
		.pytorch_version = args.pytorch_version,
		.device = args.device,
		.jobs = args.jobs,
	};
	const CcaGpuPreset *gpus[CCA_FIT_MAX_GPUS];
	guint n_gpus = 0;
	int status = 0;
	if (argc != 2) {
		fprintf(stderr, "ccasim fit: expected one TRACE (see --help)\n");
		status = 2;
	} else if (!cca_whatif_common_check(&common) || !resolve_gpus(args.gpus, gpus, &n_gpus)) {
		status = 2;
	}
	if (status) {
		fit_args_clear(&args);
		return status;
	}
	g_autoptr(CcaSnapshot) snap = cca_snapshot_load(argv[1], &error);
	if (!snap) {
		cca_view_print_error("fit", error);
		g_error_free(error);
		fit_args_clear(&args);
		return 1;
	}
	gboolean chosen = args.configs || args.sets || args.recorded;
	g_autoptr(CcaSweep) sweep = NULL;
	status = cca_whatif_build_grid(
		&common, snap, args.device, (const char *const *)args.configs,
		(const char *const *)args.sets, args.default_grid || !chosen, &sweep);
	if (status) {
		fit_args_clear(&args);
		return status;
	}
	CcaFitOptions opt = {
		.threads = (guint)args.jobs,
		.gpus = gpus,
		.n_gpus = n_gpus,
		.context = context,
	};
	CcaWhatifProgress progress = {.command = "fit"};
	if (!args.no_progress && isatty(STDERR_FILENO)) {
		opt.progress = cca_whatif_progress;
		opt.progress_data = &progress;
	}
	CcaFitRow *rows = cca_fit_run(sweep, &opt, &error);
	cca_whatif_progress_end(&progress);
	if (!rows) {
		cca_view_print_error("fit", error);
		g_error_free(error);
		fit_args_clear(&args);
		return 1;
	}
	guint n = sweep->rows->len;
	cca_fit_sort(rows, n);
	CcaFitReport report = {.trace = argv[1], .options = &opt};
	GString *out = g_string_new(NULL);
	if (args.json) {
		cca_fit_print_json(sweep, rows, n, &report, out);
		g_string_append_c(out, '\n');
	} else {
		cca_fit_print_text(sweep, rows, n, &report, out);
	}
	fputs(out->str, stdout);
	g_string_free(out, TRUE);
	g_free(rows);
	fit_args_clear(&args);
	return 0;
}
