/* cmd_replay.c - `ccasim replay TRACE`: option parsing and output only. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "event_cursor.h"
#include "replay.h"
#include "simdevice.h"
#include "json.h"
#include "plan.h"
#include "report.h"
#include "sensitivity.h"
#include "settings.h"
#include "snapshot.h"
#include "snapshot_load.h"
#include "text.h"
#include "timing.h"

/* replay's own options; the shared ones are in CcaCliArgs. */
typedef struct {
	CcaCliArgs common;
	gboolean check;
	gboolean invariants;
	gboolean address_ties;
	gboolean sensitivity;
	char *addresses_from;
	char *completions;
	char *oom_exit_status; /* --oom-exit-status, or NULL: CCA_CLI_OOM_STATUS */
	gboolean no_bounds;
	gboolean wide; /* --wide: whole lines */
} ReplayArgs;

/* --address-sensitivity: one what-if per address model, side by side;
 * -1 on an error (printed). */
static int
report_sensitivity(const CcaSnapshot *snap, const CcaReplayOptions *opt, json_t *devs, GString *out)
{
	CcaSensitivity sens;
	GError *error = NULL;
	if (!cca_sensitivity_run(snap, opt, NULL, 0, &sens, &error)) {
		cca_cli_print_error("replay", error);
		g_error_free(error);
		return -1;
	}
	if (devs) {
		json_t *o = json_object(), *figures = json_object();
		json_object_set_new(o, "device", json_integer(opt->device));
		json_object_set_new(o, "varies", cca_json_bool(sens.varies));
		for (int f = 0; f < CCA_FIGURE_COUNT; f++) {
			json_t *fig = json_object();
			for (int m = 0; m < sens.n_models; m++)
				json_object_set_new(
					fig, cca_simdevice_address_model_name(sens.models[m]),
					json_integer(sens.values[m][f]));
			json_object_set_new(fig, "min", json_integer(sens.min[f]));
			json_object_set_new(fig, "max", json_integer(sens.max[f]));
			json_object_set_new(figures, cca_sensitivity_figure_name((CcaFigure)f),
					    fig);
		}
		json_object_set_new(o, "figures", figures);
		json_array_append_new(devs, o);
		return 0;
	}
	g_autofree char *shown = cca_text_path(snap->source);
	g_string_append_printf(out, "%s, device %d: address sensitivity\n  %-26s", shown,
			       opt->device, "figure");
	for (int m = 0; m < sens.n_models; m++)
		g_string_append_printf(out, " %16s",
				       cca_simdevice_address_model_name(sens.models[m]));
	g_string_append(out, "\n");
	for (int f = 0; f < CCA_FIGURE_COUNT; f++) {
		g_string_append_printf(out, "  %-26s", cca_sensitivity_figure_name((CcaFigure)f));
		for (int m = 0; m < sens.n_models; m++)
			g_string_append_printf(out, " %16" G_GINT64_FORMAT, sens.values[m][f]);
		g_string_append(out, sens.min[f] != sens.max[f] ? "  <- varies\n" : "\n");
	}
	g_string_append(out, sens.varies ? "The device's address choice changes this answer: "
					   "trust the driver column, within the range shown.\n"
					 : "No figure depends on the device's address choice.\n");
	return 0;
}

/* Replays one device and adds its report to DEVS (--json) or OUT;
 * returns the exit status (-1: an error, printed), and sets *OOM when the replay ran out of
 * memory (stopped by it, or past it with --keep-going). */
static int
replay_device(const CcaSnapshot *snap, const CcaReplayOptions *opt, json_t *devs, GString *out,
	      gboolean first, gboolean *oom)
{
	CcaReplayResult result;
	memset(&result, 0, sizeof result);
	GError *error = NULL;
	gint64 start = g_get_monotonic_time();
	/* planned here, so that --json can show the plan; its entries are
	 * left to the replay, which then reads the trace once */
	g_autoptr(CcaPlan) plan =
		cca_plan_new_unread(snap, opt->device, opt->pytorch_version, opt->rewind, &error);
	CcaReplayOptions planned = *opt;
	planned.plan = plan;
	gboolean ok = plan && cca_replay_run(snap, &planned, &result, &error);
	if (g_getenv("CCASIM_TIMING")) /* for benchmarks: the replay alone */
		fprintf(stderr, "timing: replay of device %d: %.6f s\n", opt->device,
			(double)(g_get_monotonic_time() - start) / 1e6);
	if (!ok) {
		cca_cli_print_error("replay", error);
		g_error_free(error);
		return -1;
	}
	/* a what-if with frees deferred by record_stream: its figures depend
	 * on when they complete, bounded over the timings (timing.h) */
	CcaTiming timing = {0};
	if (opt->completion == CCA_COMPLETION_RECORDED && !opt->no_bounds &&
	    !cca_timing_run(snap, &planned, &result, &timing, &error)) {
		cca_cli_print_error("replay", error);
		g_error_free(error);
		cca_timing_clear(&timing);
		cca_replay_result_clear(&result);
		return -1;
	}
	CcaReportContext ctx = {
		.trace = snap->source,
		.device = opt->device,
		/* the settings the recording began with: the plan's */
		.settings = opt->settings ? opt->settings : &plan->recorded,
		.memory_fraction = opt->memory_fraction,
		.device_memory = cca_plan_device_memory(plan, opt->device_memory),
		.device_memory_set = opt->capacity_set,
		.snap = snap,
	};
	if (devs) {
		json_t *o = cca_report_replay_to_json(&ctx, &result);
		json_object_set_new(o, "plan", cca_plan_to_json(plan));
		cca_timing_add_json(&timing, o);
		json_array_append_new(devs, o);
	} else {
		if (!first)
			g_string_append_c(out, '\n');
		cca_report_replay_text(&ctx, &result, out);
		cca_timing_describe(&timing, out);
	}
	cca_timing_clear(&timing);
	if (result.stopped_by_oom || result.stats.num_ooms > 0)
		*oom = TRUE;
	int status = result.check_ran && !result.check_passed ? 1 : 0;
	g_autofree char *shown = cca_text_path(snap->source);
	if (status) /* one line on stderr too: the report may scroll past */
		fprintf(stderr, "ccasim replay: %s: --check failed on device %d%s%s\n", shown,
			opt->device, cca_report_check_may_need_cap(&ctx) ? "; " : "",
			cca_report_check_may_need_cap(&ctx) ? cca_report_cap_hint() : "");
	cca_replay_result_clear(&result);
	return status;
}

/* Everything after option parsing; ARGS owns its strings (freed by the
 * caller). */
static int
run_replay(const CcaCliCommand *cmd, ReplayArgs *args, const char *path)
{
	GError *error = NULL;
	if (args->check && args->addresses_from)
		return cca_cli_usage(cmd, "--check compares with the recorded run and cannot "
					  "take --addresses-from");
	gint64 oom_status = CCA_CLI_OOM_STATUS;
	if (!cca_cli_parse_int(cmd->name, "--oom-exit-status", args->oom_exit_status, 0, 125,
			       &oom_status))
		return 2;
	CcaReplayOptions opt;
	int status;
	/* the events are checked as they are replayed, each decoded once:
	 * whatever the replays did not read is checked before the report is
	 * printed */
	args->common.streaming = TRUE;
	g_autoptr(CcaSnapshot) snap = cca_cli_load(&args->common, "replay", path, &opt, &status);
	if (!snap)
		return status;
	opt.check = args->check;
	if (args->completions && !cca_timing_parse(args->completions, &opt, &error)) {
		int s = cca_cli_usage(cmd, "%s", error->message);
		g_error_free(error);
		return s;
	}
	opt.check_invariants = args->invariants;
	/* a what-if's bounds need its decisions by address (timing.h):
	 * counted in its one replay rather than by another */
	opt.count_address_ties =
		args->address_ties || args->sensitivity ||
		(!args->no_bounds && (args->common.n_settings || opt.force_whatif ||
				      opt.memory_fraction > 0 || opt.capacity_set));
	opt.no_bounds = args->no_bounds;
	if (args->common.n_settings)
		opt.settings = &args->common.settings[0];
	g_autoptr(CcaSnapshot) other = NULL;
	if (args->addresses_from) {
		other = cca_snapshot_load(args->addresses_from, &error);
		if (!other) {
			cca_cli_print_error("replay", error);
			g_error_free(error);
			return 1;
		}
		opt.addresses_from = other;
	}
	GString *out = g_string_new(NULL);
	int device = args->common.device;
	int first_dev = device >= 0 ? device : 0;
	int last_dev = device >= 0 ? device : snap->n_devices - 1;
	gboolean several = last_dev > first_dev;
	status = 0;
	json_t *devs = args->common.json ? json_array() : NULL;
	gboolean oom = FALSE, failed = FALSE;
	/* a what-if's bounds and --address-sensitivity replay the device
	 * again: its events are decoded once, into memory (doc/architecture.md, "What one
	 * event costs") */
	gboolean again = args->sensitivity ||
			 (!args->no_bounds && opt.completion == CCA_COMPLETION_RECORDED &&
			  (args->common.n_settings || opt.force_whatif || opt.memory_fraction > 0 ||
			   opt.capacity_set));
	for (int d = first_dev; d <= last_dev && status != 1; d++) {
		opt.device = d;
		/* a bad entry is named in file order, as a full load names it */
		if (!cca_event_cursor_check(snap, d, &error) ||
		    (again && !cca_event_cursor_hold(snap, d, &error))) {
			failed = TRUE;
			break;
		}
		if (args->sensitivity && d != first_dev && !devs)
			g_string_append_c(out, '\n');
		int s = args->sensitivity
				? report_sensitivity(snap, &opt, devs, out)
				: replay_device(snap, &opt, devs, out, d == first_dev, &oom);
		if (s < 0) { /* an error, printed: no report */
			failed = TRUE;
			break;
		}
		if (s)
			status = s;
	}
	if (!failed && !cca_event_cursor_check(snap, snap->n_devices, &error))
		failed = TRUE;
	if (failed) {
		if (error) {
			cca_cli_print_error("replay", error);
			g_error_free(error);
		}
		if (devs)
			json_decref(devs);
		g_string_free(out, TRUE);
		return 1;
	}
	/* a run that ran out of memory has its own status (the report says
	 * where; nothing on stderr, as diff(1) says nothing of its status 1),
	 * unless --check asked whether the model matches the recording
	 * (doc/ccasim.1, EXIT STATUS) */
	if (status == 0 && oom && !args->check)
		status = (int)oom_status;
	if (devs && several) {
		json_t *doc = json_object();
		json_object_set_new(doc, "devices", devs);
		cca_json_append(out, doc);
		g_string_append_c(out, '\n');
	} else if (devs) {
		if (json_array_size(devs) > 0) {
			cca_json_append(out, json_incref(json_array_get(devs, 0)));
			g_string_append_c(out, '\n');
		}
		json_decref(devs);
	}
	if (devs) {
		fputs(out->str, stdout);
	} else {
		/* the text fits COLUMNS as explain's does; piped without
		 * COLUMNS, or with --wide, its lines stay whole */
		g_autoptr(GString) fitted = g_string_new(NULL);
		cca_text_fit(fitted, out->str, cca_text_fit_width(args->wide));
		fputs(fitted->str, stdout);
	}
	g_string_free(out, TRUE);
	return status;
}

int
cca_cmd_replay(const CcaCliCommand *cmd, int argc, char **argv)
{
	ReplayArgs args = {0};
	GOptionEntry entries[] = {
		{"wide", 'w', 0, G_OPTION_ARG_NONE, &args.wide,
		 "Whole lines (default: wrapped to COLUMNS, or to the terminal's width)", NULL},
		{"check", 0, 0, G_OPTION_ARG_NONE, &args.check,
		 "Compare every entry and the final state with the trace; exit 1 on divergence",
		 NULL},
		{"addresses-from", 0, 0, G_OPTION_ARG_FILENAME, &args.addresses_from,
		 "Take segment addresses, in order, from another recorded run", "TRACE"},
		{"address-sensitivity", 0, 0, G_OPTION_ARG_NONE, &args.sensitivity,
		 "Replay under the driver, ascending and descending address models and say "
		 "whether any figure changes",
		 NULL},
		{"invariants", 0, 0, G_OPTION_ARG_NONE, &args.invariants,
		 "Check the model's invariants after every event (slow)", NULL},
		{"address-ties", 0, 0, G_OPTION_ARG_NONE, &args.address_ties,
		 "Count the decisions that went by device address alone (address_ties in --json; "
		 "0: every address model gives this run)",
		 NULL},
		{"completions", 0, 0, G_OPTION_ARG_STRING, &args.completions,
		 "When a what-if's frees deferred by record_stream complete: recorded (default, "
		 "then bounds over the others), earliest, early:D, lag:D, sized:D, random:M/SEED, "
		 "late:K, never",
		 "WHEN"},
		{"oom-exit-status", 0, 0, G_OPTION_ARG_STRING, &args.oom_exit_status,
		 "Exit with N when the replayed run runs out of memory (default 3; 0: success; "
		 "--check exits by the check alone)",
		 "N"},
		{"no-bounds", 0, 0, G_OPTION_ARG_NONE, &args.no_bounds,
		 "A what-if's figures under the recorded completions and the driver's placement "
		 "alone, without the bounds over the others (one replay; for benchmarks)",
		 NULL},
		G_OPTION_ENTRY_NULL,
	};
	int status = cca_cli_parse(cmd, entries,
				   "Replays a PyTorch memory snapshot (pickle or msgpack trace)\n"
				   "through the caching-allocator model and prints memory_stats().",
				   NULL, &args.common, &argc, &argv);
	if (status < 0)
		status = argc == 2 ? run_replay(cmd, &args, argv[1])
				   : cca_cli_usage(cmd, "expected one TRACE (see --help)");
	cca_cli_args_clear(&args.common);
	g_free(args.addresses_from);
	g_free(args.completions);
	g_free(args.oom_exit_status);
	return status;
}
