/* cmd_sweep.c - `ccasim sweep TRACE`: option parsing and output only. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "calibration.h"
#include "commands.h"
#include "plan.h"
#include "fit.h"
#include "json.h"
#include "replay.h"
#include "rules.h"
#include "settings.h"
#include "size.h"
#include "snapshot.h"
#include "event_cursor.h"
#include "snapshot_load.h"
#include "sweep.h"

/* `sweep --pytorch-version all`: the grid of ARGS under every release
 * from 2.0 to the newest (doc/versions.md), one table of release x
 * setting; rows of a release not validated on hardware are labelled. */
static int
sweep_all_releases(CcaCliArgs *args, const CcaSnapshot *snap, const char *const *sets,
		   gboolean default_grid, const CcaSweepOptions *opt, const char *trace)
{
	g_autoptr(GError) error = NULL;
	json_t *rows = json_array();
	g_autoptr(GString) out = g_string_new(NULL);
	char a[32], b[32];
	g_autofree char *why = NULL;
	uint32_t detected = cca_plan_detect_release(snap, &why);
	g_string_append_printf(out, "%s, device %d: the trace is PyTorch %u.%u (%s)\n", trace,
			       args->device, detected / 100, detected % 100, why);
	g_string_append_printf(out, "%-8s %-40s %13s %13s %8s %4s  %s\n", "release", "setting",
			       "peak reserved", "peak alloc", "mallocs", "OOM", "");
	for (uint32_t release = CCA_PYTORCH_VERSION_OLDEST; release <= CCA_PYTORCH_VERSION_NEWEST;
	     release++) {
		args->pytorch_version = release;
		g_autoptr(CcaSweep) sweep = NULL;
		int status = cca_cli_build_grid("sweep", args, snap, args->device,
						(const char *const *)args->configs, sets,
						default_grid, &sweep);
		if (status) {
			json_decref(rows);
			return status;
		}
		if (!cca_sweep_run(sweep, opt, &error)) {
			cca_cli_print_error("sweep", error);
			json_decref(rows);
			return 1;
		}
		const CcaRules *rules = cca_rules_for(release);
		for (guint i = 0; i < sweep->rows->len; i++) {
			const CcaSweepRow *row = g_ptr_array_index(sweep->rows, i);
			const double *v = row->runs[0].value;
			g_autofree char *conf = g_strdup(row->conf[0] ? row->conf : "(defaults)");
			g_string_append_printf(
				out, "%u.%-6u %-40.40s %13s %13s %8.0f %4s  %s%s\n", release / 100,
				release % 100, conf,
				cca_size_format((uint64_t)v[CCA_SWEEP_FIG_PEAK_RESERVED], a),
				cca_size_format((uint64_t)v[CCA_SWEEP_FIG_PEAK_ALLOCATED], b),
				v[CCA_SWEEP_FIG_MALLOCS], v[CCA_SWEEP_FIG_OOM] ? "yes" : "-",
				row->recorded ? "recorded" : row->origin,
				rules->unvalidated ? ", unvalidated" : "");
			json_t *o = json_object();
			g_autofree char *shown =
				g_strdup_printf("%u.%u", release / 100, release % 100);
			json_object_set_new(o, "release", cca_json_string(shown));
			json_object_set_new(o, "setting", cca_json_string(row->conf));
			json_object_set_new(o, "origin", cca_json_string(row->origin));
			for (int f = 0; f < CCA_SWEEP_FIG_COUNT; f++)
				json_object_set_new(o, cca_sweep_figure_name(f), json_real(v[f]));
			json_object_set_new(o, "best_fit_order",
					    cca_json_string(cca_rules_order_name(rules->order)));
			json_object_set_new(o, "unvalidated", cca_json_bool(rules->unvalidated));
			json_array_append_new(rows, o);
		}
	}
	if (args->json) {
		json_t *doc = json_object();
		json_object_set_new(doc, "trace", cca_json_string(trace));
		json_object_set_new(doc, "device", json_integer(args->device));
		g_autofree char *shown = g_strdup_printf("%u.%u", detected / 100, detected % 100);
		json_object_set_new(doc, "trace_release", cca_json_string(shown));
		json_object_set_new(doc, "trace_release_why", cca_json_string(why));
		json_object_set_new(doc, "rows", rows);
		char *text = json_dumps(doc, JSON_INDENT(2));
		printf("%s\n", text);
		free(text);
		json_decref(doc);
	} else {
		json_decref(rows);
		g_string_append(out, "Releases after 2.11 are modelled from PyTorch's source "
				     "(unvalidated: doc/versions.md).\n");
		fputs(out->str, stdout);
	}
	return 0;
}

int
cca_cmd_sweep(const CcaCliCommand *cmd, int argc, char **argv)
{
	g_auto(CcaCliArgs) args = {0};
	g_auto(GStrv) sets = NULL;
	g_autofree char *calibration = NULL, *goal_name = NULL, *gpu_name = NULL,
			*context_text = NULL;
	gboolean default_grid = FALSE, recommend = FALSE, csv = FALSE, all_models = FALSE,
		 sensitivity = FALSE, wide = FALSE, no_bounds = FALSE;
	GOptionEntry entries[] = {
		{"set", 's', 0, G_OPTION_ARG_STRING_ARRAY, &sets,
		 "Add the rows of a grid: KEY takes each value in turn, other --set keys "
		 "combine with it; 'default' leaves KEY out (repeatable)",
		 "KEY=V1,V2,..."},
		{"default-grid", 0, 0, G_OPTION_ARG_NONE, &default_grid,
		 "Also add the default grid (the default without --config or --set)", NULL},
		{"calibration", 0, 0, G_OPTION_ARG_FILENAME, &calibration,
		 "cudaMalloc/cudaFree timing by size (JSON; default: the built-in H200 table)",
		 "FILE"},
		{"goal", 'g', 0, G_OPTION_ARG_STRING, &goal_name,
		 "What best means: reserved (least peak reserved, the default), mallocs (fewest "
		 "cudaMalloc calls) or time (least predicted allocator time)",
		 "GOAL"},
		{"recommend", 'r', 0, G_OPTION_ARG_NONE, &recommend,
		 "Name the best setting for the goal and capacity, and say why", NULL},
		{"csv", 0, 0, G_OPTION_ARG_NONE, &csv, "Print CSV, one line per row", NULL},
		{"wide", 'w', 0, G_OPTION_ARG_NONE, &wide,
		 "Print every column and whole settings, ranges in the cells (the table "
		 "fits in 100 columns without it)",
		 NULL},
		{"address-sensitivity", 0, 0, G_OPTION_ARG_NONE, &sensitivity,
		 "Replay each what-if row under every address model (driver, ascending, "
		 "descending, moved:1-16) and show where figures differ (lo..hi): the default "
		 "unless --no-bounds",
		 NULL},
		{"no-bounds", 0, 0, G_OPTION_ARG_NONE, &no_bounds,
		 "Judge each row by one replay: the recorded completions of its deferred frees "
		 "and the driver's placement alone, without the other timings and address models "
		 "(faster; no bounds, and 'fits' may be wrong for another run)",
		 NULL},
		{"all-address-models", 0, 0, G_OPTION_ARG_NONE, &all_models,
		 "With --address-sensitivity, replay every address model, also for rows whose "
		 "first replay took no decision by address (those share its figures otherwise)",
		 NULL},
		{"gpu", 0, 0, G_OPTION_ARG_STRING, &gpu_name,
		 "Replay every row on this GPU (a preset of 'fit --list-gpus'): its total memory "
		 "less the memory outside the caching allocator, as --device-memory",
		 "NAME"},
		{"context", 0, 0, G_OPTION_ARG_STRING, &context_text,
		 "With --gpu, the memory outside the caching allocator (default: what "
		 "ccasim-record recorded, else 690MiB, measured on the H200)",
		 "BYTES"},
		G_OPTION_ENTRY_NULL,
	};
	int status = cca_cli_parse(
		cmd, entries,
		"Replays a trace under a grid of allocator settings and prints one row per\n"
		"setting, best first: peak reserved and allocated memory, fragmentation,\n"
		"cudaMalloc/cudaFree calls, retries, OOM, predicted allocator time, and\n"
		"(unless --no-bounds) whether the driver's choice of addresses or the\n"
		"timing of stream-ordered frees could change the row.",
		"Without --config or --set the grid is the default one: the recorded\n"
		"settings, PyTorch's defaults, max_split_size_mb 32..4096 and three values\n"
		"from the trace's request sizes, roundup_power2_divisions 2..16,\n"
		"expandable_segments with and without max_split_size_mb, and with\n"
		"--memory-fraction garbage_collection_threshold 0.6 and 0.8.\n"
		"Every row equals `ccasim replay --config ROW` under the same cap.\n"
		"See doc/whatif.md.",
		&args, &argc, &argv);
	if (status >= 0)
		return status;
	g_autoptr(GError) error = NULL;
	CcaGoal goal = CCA_GOAL_RESERVED;
	if (argc != 2)
		return cca_cli_usage(cmd, "expected one TRACE (see --help)");
	if (args.json && csv)
		return cca_cli_usage(cmd, "--json and --csv exclude each other");
	if (goal_name && !cca_sweep_goal_parse(goal_name, &goal, &error)) {
		cca_cli_print_error("sweep", error);
		return 2;
	}
	g_autoptr(CcaCalibrationTable) cal = calibration ? cca_calibration_load(calibration, &error)
							 : cca_calibration_new_h200();
	if (!cal) {
		fprintf(stderr, "ccasim sweep: --calibration: %s\n", error->message);
		return 1;
	}
	/* every row replays the device: its events decoded once, into memory */
	g_autoptr(CcaSnapshot) snap = cca_snapshot_load_streaming(argv[1], &error);
	if (snap && !cca_event_cursor_hold_one(snap, args.device, &error))
		g_clear_pointer(&snap, cca_snapshot_free);
	if (!snap) {
		cca_cli_print_error("sweep", error);
		return 1;
	}
	const CcaGpuPreset *gpu = NULL;
	uint64_t context = CCA_GPU_CONTEXT_BYTES;
	const char *context_source = CCA_GPU_CONTEXT_SOURCE;
	if (context_text && !gpu_name)
		return cca_cli_usage(cmd, "--context needs --gpu");
	if (gpu_name) {
		if (args.memory_fraction > 0 || args.capacity_set)
			return cca_cli_usage(
				cmd, "--gpu sets the device memory: leave out --device-memory and "
				     "--memory-fraction");
		if (!(gpu = cca_fit_gpu_preset_find(gpu_name, &error))) {
			fprintf(stderr, "ccasim sweep: --gpu: %s\n", error->message);
			return 2;
		}
		if (context_text) {
			if (!cca_cli_parse_context("sweep", context_text, &context))
				return 2;
			context_source = "given with --context";
		} else if (!cca_fit_recorded_context(snap, args.device, &context, &context_source,
						     &error) &&
			   error) {
			cca_cli_print_error("sweep", error);
			return 1;
		}
		uint64_t usable = cca_fit_gpu_usable(gpu, context);
		if (usable == 0) {
			fprintf(stderr,
				"ccasim sweep: --gpu %s: the memory outside the allocator "
				"fills the whole GPU\n",
				gpu->name);
			return 2;
		}
		args.device_memory = usable;
		args.capacity_set = TRUE;
	}
	if (args.all_releases) {
		if (recommend || csv || sensitivity || all_models)
			return cca_cli_usage(cmd, "--pytorch-version all tabulates releases: "
						  "leave out --recommend, --csv and the address "
						  "options");
		CcaSweepOptions all = {
			.memory_fraction = args.memory_fraction,
			.recorded_memory_fraction = args.recorded_memory_fraction,
			.device_memory = args.device_memory,
			.capacity_set = args.capacity_set,
			.calibration = cal,
			.threads = (guint)args.jobs,
		};
		/* one row per release (the recorded settings) unless the grid
		 * is asked for */
		return sweep_all_releases(&args, snap, (const char *const *)sets, default_grid,
					  &all, argv[1]);
	}
	g_autoptr(CcaSweep) sweep = NULL;
	status = cca_cli_build_grid("sweep", &args, snap, args.device,
				    (const char *const *)args.configs, (const char *const *)sets,
				    default_grid || (!args.configs && !sets), &sweep);
	if (status)
		return status;
	CcaSweepOptions opt = {
		.memory_fraction = args.memory_fraction,
		.recorded_memory_fraction = args.recorded_memory_fraction,
		.device_memory = args.device_memory,
		.capacity_set = args.capacity_set,
		.calibration = cal,
		.threads = (guint)args.jobs,
		.all_address_models = all_models,
		/* a what-if's bounds hold every address model, as replay's do */
		.address_sensitivity = sensitivity || all_models || !no_bounds,
		.no_timing_bounds = no_bounds,
	};
	CcaCliProgress progress = {.command = "sweep"};
	if (!args.no_progress && isatty(STDERR_FILENO)) {
		opt.progress = cca_cli_progress;
		opt.progress_data = &progress;
	}
	gboolean ok = cca_sweep_run(sweep, &opt, &error);
	cca_cli_progress_end(&progress);
	if (!ok) {
		cca_cli_print_error("sweep", error);
		return 1;
	}
	cca_sweep_sort(sweep, goal);
	g_autoptr(GString) why = g_string_new(NULL);
	CcaSweepReport report = {.trace = argv[1], .goal = goal, .options = &opt, .wide = wide};
	if (gpu) {
		report.gpu = gpu->name;
		report.gpu_total = gpu->total_memory;
		report.context = context;
		report.context_source = context_source;
	}
	if (recommend) {
		report.recommended = cca_sweep_recommend(sweep, goal, &opt, why);
		report.why = why->str;
	}
	g_autoptr(GString) out = g_string_new(NULL);
	if (args.json) {
		cca_sweep_print_json(sweep, &report, out);
		g_string_append_c(out, '\n');
	} else if (csv) {
		cca_sweep_print_csv(sweep, out);
	} else {
		cca_sweep_print_text(sweep, &report, out);
	}
	fputs(out->str, stdout);
	return 0;
}
