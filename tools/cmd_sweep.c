/* cmd_sweep.c - `ccasim sweep TRACE`: option parsing and output only. */
#include "config.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "inputargs.h"
#include "calibration.h"
#include "commands.h"
#include "viewargs.h"
#include "settings.h"
#include "sizes.h"
#include "snapshot.h"
#include "sweep.h"
#include "whatif_cli.h"

typedef struct {
	char **configs;
	char **sets;
	gboolean default_grid;
	char *memory_fraction;
	char *device_memory;
	int device;
	char *pytorch_version;
	char *calibration;
	char *goal;
	gboolean recommend;
	int jobs;
	gboolean json;
	gboolean csv;
	gboolean no_progress;
} SweepArgs;

static void
sweep_args_clear(SweepArgs *a)
{
	g_strfreev(a->configs);
	g_strfreev(a->sets);
	g_free(a->memory_fraction);
	g_free(a->device_memory);
	g_free(a->pytorch_version);
	g_free(a->calibration);
	g_free(a->goal);
}

int
cca_cmd_sweep(int argc, char **argv)
{
	SweepArgs args = {.jobs = 0};
	GOptionEntry entries[] = {
		{"config", 'c', 0, G_OPTION_ARG_STRING_ARRAY, &args.configs,
		 "Add a row with these settings (PYTORCH_CUDA_ALLOC_CONF syntax; repeatable)",
		 "STRING"},
		{"set", 's', 0, G_OPTION_ARG_STRING_ARRAY, &args.sets,
		 "Add the rows of a grid: KEY takes each value in turn, other --set keys "
		 "combine with it; 'default' leaves KEY out (repeatable)",
		 "KEY=V1,V2,..."},
		{"default-grid", 0, 0, G_OPTION_ARG_NONE, &args.default_grid,
		 "Also add the default grid (the default without --config or --set)", NULL},
		{"memory-fraction", 0, 0, G_OPTION_ARG_STRING, &args.memory_fraction,
		 "set_per_process_memory_fraction(F) of the device memory: the cap", "F"},
		{"device-memory", 0, 0, G_OPTION_ARG_STRING, &args.device_memory,
		 "Device memory (e.g. 80GB, 24GiB); alone, cudaMalloc fails past it", "BYTES"},
		{"device", 'd', 0, G_OPTION_ARG_INT, &args.device,
		 "Which device of the trace (default 0)", "N"},
		{"pytorch-version", 0, 0, G_OPTION_ARG_STRING, &args.pytorch_version,
		 "Replay by the rules of this release, 2.0 to 2.11 (default: guessed)", "X.Y"},
		{"calibration", 0, 0, G_OPTION_ARG_FILENAME, &args.calibration,
		 "cudaMalloc/cudaFree timing by size (JSON; default: the built-in H200 table)",
		 "FILE"},
		{"goal", 'g', 0, G_OPTION_ARG_STRING, &args.goal,
		 "What best means: reserved (least peak reserved, the default), mallocs (fewest "
		 "cudaMalloc calls) or time (least predicted allocator time)",
		 "GOAL"},
		{"recommend", 'r', 0, G_OPTION_ARG_NONE, &args.recommend,
		 "Name the best setting for the goal and capacity, and say why", NULL},
		{"jobs", 'j', 0, G_OPTION_ARG_INT, &args.jobs,
		 "Replay on N threads (default: one per core)", "N"},
		{"json", 0, 0, G_OPTION_ARG_NONE, &args.json, "Print one JSON object", NULL},
		{"csv", 0, 0, G_OPTION_ARG_NONE, &args.csv, "Print CSV, one line per row", NULL},
		{"no-progress", 0, 0, G_OPTION_ARG_NONE, &args.no_progress,
		 "No progress bar (it only shows when stderr is a terminal)", NULL},
		{NULL, 0, 0, 0, NULL, NULL, NULL},
	};
	g_autoptr(GOptionContext) octx = g_option_context_new("TRACE");
	g_option_context_set_summary(
		octx, "Replays a trace under a grid of allocator settings and prints one row per\n"
		      "setting, best first: peak reserved and allocated memory, fragmentation,\n"
		      "cudaMalloc/cudaFree calls, retries, OOM, predicted allocator time, and\n"
		      "whether the driver's choice of addresses could change the row.");
	g_option_context_set_description(
		octx, "Without --config or --set the grid is the default one: the recorded\n"
		      "settings, PyTorch's defaults, max_split_size_mb 32..4096 and three values\n"
		      "from the trace's request sizes, roundup_power2_divisions 2..16,\n"
		      "expandable_segments with and without max_split_size_mb, and with\n"
		      "--memory-fraction garbage_collection_threshold 0.6 and 0.8.\n"
		      "Every row equals `ccasim replay --config ROW` under the same cap.\n"
		      "See doc/whatif.md.");
	g_option_context_add_main_entries(octx, entries, NULL);
	g_option_context_add_group(octx, cca_inputargs_group());
	GError *error = NULL;
	int status = 0;
	if (!g_option_context_parse(octx, &argc, &argv, &error)) {
		cca_view_print_error("sweep", error);
		g_error_free(error);
		sweep_args_clear(&args);
		return 2;
	}
	CcaWhatifCommon common = {
		.command = "sweep",
		.memory_fraction_text = args.memory_fraction,
		.device_memory = args.device_memory,
		.pytorch_version = args.pytorch_version,
		.device = args.device,
		.jobs = args.jobs,
	};
	CcaGoal goal = CCA_GOAL_RESERVED;
	if (argc != 2) {
		fprintf(stderr, "ccasim sweep: expected one TRACE (see --help)\n");
		status = 2;
	} else if (args.json && args.csv) {
		fprintf(stderr, "ccasim sweep: --json and --csv exclude each other\n");
		status = 2;
	} else if (args.goal && !cca_goal_parse(args.goal, &goal, &error)) {
		cca_view_print_error("sweep", error);
		g_clear_error(&error);
		status = 2;
	} else if (!cca_whatif_common_check(&common)) {
		status = 2;
	}
	if (status) {
		sweep_args_clear(&args);
		return status;
	}
	g_autoptr(CcaCalibrationTable) cal = NULL;
	if (args.calibration)
		cal = cca_calibration_load(args.calibration, &error);
	else
		cal = cca_calibration_new_h200();
	if (!cal) {
		fprintf(stderr, "ccasim sweep: --calibration: %s\n", error->message);
		g_error_free(error);
		sweep_args_clear(&args);
		return 1;
	}
	g_autoptr(CcaSnapshot) snap = cca_snapshot_load(argv[1], &error);
	if (!snap) {
		cca_view_print_error("sweep", error);
		g_error_free(error);
		sweep_args_clear(&args);
		return 1;
	}
	g_autoptr(CcaSweep) sweep = NULL;
	status =
		cca_whatif_build_grid(&common, snap, args.device, (const char *const *)args.configs,
				      (const char *const *)args.sets,
				      args.default_grid || (!args.configs && !args.sets), &sweep);
	if (status) {
		sweep_args_clear(&args);
		return status;
	}
	CcaSweepOptions opt = {
		.memory_fraction = common.memory_fraction,
		.device_memory = common.device_memory_bytes,
		.capacity_set = common.capacity_set,
		.calibration = cal,
		.threads = (guint)args.jobs,
	};
	CcaWhatifProgress progress = {.command = "sweep"};
	if (!args.no_progress && isatty(STDERR_FILENO)) {
		opt.progress = cca_whatif_progress;
		opt.progress_data = &progress;
	}
	gboolean ok = cca_sweep_run(sweep, &opt, &error);
	cca_whatif_progress_end(&progress);
	if (!ok) {
		cca_view_print_error("sweep", error);
		g_error_free(error);
		sweep_args_clear(&args);
		return 1;
	}
	cca_sweep_sort(sweep, goal);
	GString *why = g_string_new(NULL);
	CcaSweepReport report = {.trace = argv[1], .goal = goal, .options = &opt};
	if (args.recommend) {
		report.recommended = cca_sweep_recommend(sweep, goal, &opt, why);
		report.why = why->str;
	}
	GString *out = g_string_new(NULL);
	if (args.json) {
		cca_sweep_print_json(sweep, &report, out);
		g_string_append_c(out, '\n');
	} else if (args.csv) {
		cca_sweep_print_csv(sweep, out);
	} else {
		cca_sweep_print_text(sweep, &report, out);
	}
	fputs(out->str, stdout);
	g_string_free(out, TRUE);
	g_string_free(why, TRUE);
	sweep_args_clear(&args);
	return 0;
}
