/* cmd_fit.c - `ccasim fit TRACE`: option parsing and output only. */
#include "config.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "fit.h"
#include "size.h"
#include "snapshot.h"
#include "event_cursor.h"
#include "snapshot_load.h"
#include "sweep.h"

/* Resolves --gpu names ("all" for every preset) into GPUS; returns FALSE
 * after printing a usage error. */
static gboolean
resolve_gpus(char **names, const CcaGpuPreset **gpus, guint *n)
{
	*n = 0;
	guint n_presets;
	const CcaGpuPreset *presets = cca_fit_gpu_presets(&n_presets);
	for (char **p = names; p && *p; p++) {
		if (g_ascii_strcasecmp(*p, "all") == 0) {
			for (guint i = 0; i < n_presets && *n < CCA_FIT_MAX_GPUS; i++)
				gpus[(*n)++] = &presets[i];
			continue;
		}
		g_autoptr(GError) error = NULL;
		const CcaGpuPreset *g = cca_fit_gpu_preset_find(*p, &error);
		if (!g) {
			fprintf(stderr, "ccasim fit: --gpu: %s\n", error->message);
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
cca_cmd_fit(const CcaCliCommand *cmd, int argc, char **argv)
{
	g_auto(CcaCliArgs) args = {0};
	g_auto(GStrv) sets = NULL, gpu_names = NULL;
	g_autofree char *context_text = NULL;
	gboolean default_grid = FALSE, recorded = FALSE, list_gpus = FALSE, wide = FALSE,
		 no_bounds = FALSE;
	GOptionEntry entries[] = {
		{"set", 's', 0, G_OPTION_ARG_STRING_ARRAY, &sets,
		 "Fit under each setting of a grid, as for sweep (repeatable)", "KEY=V1,V2,..."},
		{"default-grid", 0, 0, G_OPTION_ARG_NONE, &default_grid,
		 "Also fit the default grid (the default without --config, --set, --recorded)",
		 NULL},
		{"recorded", 0, 0, G_OPTION_ARG_NONE, &recorded,
		 "Fit only under the trace's recorded settings", NULL},
		{"gpu", 0, 0, G_OPTION_ARG_STRING_ARRAY, &gpu_names,
		 "Also say whether it fits on this GPU (a preset, or 'all'; repeatable)", "NAME"},
		{"no-bounds", 0, 0, G_OPTION_ARG_NONE, &no_bounds,
		 "Search each row under the recorded completions of its deferred frees and the "
		 "driver's placement alone, not every timing and address model (faster; the "
		 "answer may not hold for another run)",
		 NULL},
		{"wide", 'w', 0, G_OPTION_ARG_NONE, &wide,
		 "Print every column, whole settings, ranges in the cells and the GPUs' "
		 "sources (the table fits in 100 columns without it)",
		 NULL},
		{"list-gpus", 0, 0, G_OPTION_ARG_NONE, &list_gpus,
		 "List the GPU presets, their memory and its source, and exit", NULL},
		{"context", 0, 0, G_OPTION_ARG_STRING, &context_text,
		 "Memory outside the caching allocator on a --gpu (default: what ccasim-record "
		 "recorded, else 690MiB, measured on the H200)",
		 "BYTES"},
		G_OPTION_ENTRY_NULL,
	};
	g_autoptr(GString) presets = g_string_new("Device memory means what PyTorch may reserve "
						  "(--device-memory of replay).\n\n");
	cca_fit_gpu_presets_print(CCA_GPU_CONTEXT_BYTES, presets);
	int status = cca_cli_parse(
		cmd, entries,
		"Finds the smallest device memory, to 2 MiB, at which the trace runs without\n"
		"running out of memory, under each setting of the grid.  Each answer is\n"
		"checked by a replay at that size (no OOM) and one 2 MiB below (OOM).",
		presets->str, &args, &argc, &argv);
	if (status >= 0)
		return status;
	g_autoptr(GError) error = NULL;
	uint64_t context = CCA_GPU_CONTEXT_BYTES;
	if (context_text && !cca_cli_parse_context("fit", context_text, &context))
		return 2;
	if (list_gpus) {
		g_autoptr(GString) s = g_string_new(NULL);
		cca_fit_gpu_presets_print(context, s);
		fputs(s->str, stdout);
		return 0;
	}
	const CcaGpuPreset *gpus[CCA_FIT_MAX_GPUS];
	guint n_gpus = 0;
	if (argc != 2)
		return cca_cli_usage(cmd, "expected one TRACE (see --help)");
	if (!resolve_gpus(gpu_names, gpus, &n_gpus))
		return 2;
	/* every row replays the device: its events decoded once, into memory */
	g_autoptr(CcaSnapshot) snap = cca_snapshot_load_streaming(argv[1], &error);
	if (snap && !cca_event_cursor_hold_one(snap, args.device, &error))
		g_clear_pointer(&snap, cca_snapshot_free);
	if (!snap) {
		cca_cli_print_error("fit", error);
		return 1;
	}
	gboolean chosen = args.configs || sets || recorded;
	g_autoptr(CcaSweep) sweep = NULL;
	status = cca_cli_build_grid("fit", &args, snap, args.device,
				    (const char *const *)args.configs, (const char *const *)sets,
				    default_grid || !chosen, &sweep);
	if (status)
		return status;
	const char *context_source = context_text ? "given with --context" : NULL;
	if (!context_text &&
	    !cca_fit_recorded_context(snap, args.device, &context, &context_source, &error) &&
	    error) {
		cca_cli_print_error("fit", error);
		return 1;
	}
	CcaFitOptions opt = {
		.no_timing_bounds = no_bounds,
		.threads = (guint)args.jobs,
		.gpus = gpus,
		.n_gpus = n_gpus,
		.context = context,
		.context_source = context_source,
		.recorded_memory_fraction = args.recorded_memory_fraction,
	};
	CcaCliProgress progress = {.command = "fit"};
	if (!args.no_progress && isatty(STDERR_FILENO)) {
		opt.progress = cca_cli_progress;
		opt.progress_data = &progress;
	}
	g_autofree CcaFitRow *rows = cca_fit_run(sweep, &opt, &error);
	cca_cli_progress_end(&progress);
	if (!rows) {
		cca_cli_print_error("fit", error);
		return 1;
	}
	guint n = sweep->rows->len;
	cca_fit_sort(rows, n);
	CcaFitReport report = {.trace = argv[1], .options = &opt, .wide = wide};
	g_autoptr(GString) out = g_string_new(NULL);
	if (args.json) {
		cca_fit_print_json(sweep, rows, n, &report, out);
		g_string_append_c(out, '\n');
	} else {
		cca_fit_print_text(sweep, rows, n, &report, out);
	}
	fputs(out->str, stdout);
	return 0;
}
