/* cmd_replay.c - `ccasim replay TRACE`: option parsing and output only. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "engine.h"
#include "report.h"
#include "sensitivity.h"
#include "settings.h"
#include "sizes.h"
#include "snapshot.h"

typedef struct {
	char *config;
	double memory_fraction;
	char *device_memory;
	int device;
	gboolean check;
	gboolean keep_going;
	gboolean json;
	gboolean invariants;
	gboolean whatif;
	gboolean sensitivity;
	char *addresses_from;
	char *address_model;
	char *pytorch_version;
} ReplayArgs;

static gboolean
parse_address_model(const char *name, CcaAddressModel *out, GError **error)
{
	if (!name) {
		*out = CCA_ADDRESS_DRIVER;
		return TRUE;
	}
	if (!cca_address_model_parse(name, out) || *out == CCA_ADDRESS_RECORDED) {
		g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
			    "--address-model: unknown model '%s' (driver, ascending, descending)",
			    name);
		return FALSE;
	}
	return TRUE;
}

/* --address-sensitivity: one what-if per address model, side by side. */
static int
report_sensitivity(const CcaSnapshot *snap, const CcaReplayOptions *opt, gboolean json,
		   GString *out)
{
	CcaSensitivity sens;
	GError *error = NULL;
	if (!cca_replay_sensitivity(snap, opt, NULL, 0, &sens, &error)) {
		fprintf(stderr, "ccasim replay: %s\n", error->message);
		g_error_free(error);
		return 1;
	}
	if (json) {
		g_string_append_printf(out, "{\"device\": %d, \"varies\": %s, \"figures\": {",
				       opt->device, sens.varies ? "true" : "false");
		for (int f = 0; f < CCA_FIGURE_COUNT; f++) {
			g_string_append_printf(out, "%s\"%s\": {", f ? ", " : "",
					       cca_figure_name((CcaFigure)f));
			for (int m = 0; m < sens.n_models; m++)
				g_string_append_printf(out, "\"%s\": %" G_GINT64_FORMAT ", ",
						       cca_address_model_name(sens.models[m]),
						       sens.values[m][f]);
			g_string_append_printf(out,
					       "\"min\": %" G_GINT64_FORMAT
					       ", \"max\": %" G_GINT64_FORMAT "}",
					       sens.min[f], sens.max[f]);
		}
		g_string_append(out, "}}");
		return 0;
	}
	g_string_append_printf(out, "%s, device %d: address sensitivity\n  %-26s", snap->source,
			       opt->device, "figure");
	for (int m = 0; m < sens.n_models; m++)
		g_string_append_printf(out, " %16s", cca_address_model_name(sens.models[m]));
	g_string_append(out, "\n");
	for (int f = 0; f < CCA_FIGURE_COUNT; f++) {
		g_string_append_printf(out, "  %-26s", cca_figure_name((CcaFigure)f));
		for (int m = 0; m < sens.n_models; m++)
			g_string_append_printf(out, " %16" G_GINT64_FORMAT, sens.values[m][f]);
		g_string_append(out, sens.min[f] != sens.max[f] ? "  <- varies\n" : "\n");
	}
	g_string_append(out, sens.varies ? "The device's address choice changes this answer: "
					   "trust the driver column, within the range shown.\n"
					 : "No figure depends on the device's address choice.\n");
	return 0;
}

/* Replays one device and prints its report; returns the exit status. */
static int
replay_device(const CcaSnapshot *snap, const CcaReplayOptions *opt, const ReplayArgs *args,
	      GString *out, gboolean first)
{
	CcaReplayResult result;
	GError *error = NULL;
	if (!cca_replay_run(snap, opt, &result, &error)) {
		fprintf(stderr, "ccasim replay: %s\n", error->message);
		g_error_free(error);
		return 1;
	}
	CcaSettings recorded;
	cca_settings_init(&recorded);
	recorded.pytorch_version = opt->pytorch_version;
	cca_settings_from_recorded(&recorded, &snap->settings, NULL);
	CcaReportContext ctx = {
		.trace = snap->source,
		.device = opt->device,
		.settings = opt->settings ? opt->settings : &recorded,
		.memory_fraction = opt->memory_fraction,
		.device_memory = opt->device_memory ? opt->device_memory : CCA_H200_TOTAL_MEMORY,
	};
	if (args->json) {
		if (!first)
			g_string_append(out, ", ");
		cca_report_replay_json(&ctx, &result, out);
	} else {
		if (!first)
			g_string_append_c(out, '\n');
		cca_report_replay_text(&ctx, &result, out);
	}
	int status = result.check_ran && !result.check_passed ? 1 : 0;
	cca_settings_clear(&recorded);
	cca_replay_result_clear(&result);
	return status;
}

/* Everything after option parsing; ARGS owns its strings (freed by the
 * caller on every path). */
static int
run_replay(ReplayArgs *args, const char *path)
{
	GError *error = NULL;
	CcaReplayOptions opt;
	cca_replay_options_init(&opt);
	opt.memory_fraction = args->memory_fraction;
	opt.check = args->check;
	opt.keep_going = args->keep_going;
	opt.check_invariants = args->invariants;
	opt.force_whatif = args->whatif || args->address_model != NULL;
	if (args->memory_fraction < 0.0 || args->memory_fraction > 1.0) {
		fprintf(stderr, "ccasim replay: --memory-fraction: must be in [0, 1]\n");
		return 2;
	}
	if (args->device_memory) {
		if (!cca_size_parse(args->device_memory, "--device-memory", &opt.device_memory,
				    &error)) {
			fprintf(stderr, "ccasim replay: %s\n", error->message);
			g_error_free(error);
			return 2;
		}
		opt.capacity_set = TRUE;
	}
	if (!parse_address_model(args->address_model, &opt.address_model, &error)) {
		fprintf(stderr, "ccasim replay: %s\n", error->message);
		g_error_free(error);
		return 2;
	}
	if (args->check && args->addresses_from) {
		fprintf(stderr, "ccasim replay: --check compares with the recorded run and "
				"cannot take --addresses-from\n");
		return 2;
	}
	if (args->pytorch_version &&
	    !cca_pytorch_version_parse(args->pytorch_version, &opt.pytorch_version, &error)) {
		fprintf(stderr, "ccasim replay: --pytorch-version: %s\n", error->message);
		g_error_free(error);
		return 2;
	}
	g_auto(CcaSettings) settings;
	cca_settings_init(&settings);
	g_autoptr(CcaSnapshot) snap = cca_snapshot_load(path, &error);
	if (!snap) {
		fprintf(stderr, "ccasim replay: %s\n", error->message);
		g_error_free(error);
		return 1;
	}
	if (!opt.pytorch_version)
		opt.pytorch_version = cca_replay_guess_pytorch_version(snap);
	if (args->config) {
		settings.pytorch_version = opt.pytorch_version;
		if (!cca_settings_parse(&settings, args->config, &error)) {
			fprintf(stderr, "ccasim replay: --config: %s\n", error->message);
			g_error_free(error);
			return 2;
		}
		opt.settings = &settings;
	}
	g_autoptr(CcaSnapshot) other = NULL;
	if (args->addresses_from) {
		other = cca_snapshot_load(args->addresses_from, &error);
		if (!other) {
			fprintf(stderr, "ccasim replay: %s\n", error->message);
			g_error_free(error);
			return 1;
		}
		opt.addresses_from = other;
	}
	if (args->device >= snap->n_devices) {
		fprintf(stderr, "ccasim replay: %s: no device %d (the trace has %d)\n", path,
			args->device, snap->n_devices);
		return 2;
	}
	GString *out = g_string_new(NULL);
	int status = 0, first_dev = args->device >= 0 ? args->device : 0;
	int last_dev = args->device >= 0 ? args->device : snap->n_devices - 1;
	gboolean several = last_dev > first_dev;
	if (args->json && several)
		g_string_append(out, "{\"devices\": [");
	for (int d = first_dev; d <= last_dev && status != 1; d++) {
		opt.device = d;
		if (args->sensitivity && d != first_dev)
			g_string_append(out, args->json ? ", " : "\n");
		int s = args->sensitivity ? report_sensitivity(snap, &opt, args->json, out)
					  : replay_device(snap, &opt, args, out, d == first_dev);
		if (s)
			status = s;
	}
	if (args->json && several)
		g_string_append(out, "]}");
	if (args->json)
		g_string_append_c(out, '\n');
	fputs(out->str, stdout);
	g_string_free(out, TRUE);
	return status;
}

int
cca_cmd_replay(int argc, char **argv)
{
	ReplayArgs args = {.device = -1};
	int status;
	GOptionEntry entries[] = {
		{"config", 'c', 0, G_OPTION_ARG_STRING, &args.config,
		 "Allocator settings (PYTORCH_CUDA_ALLOC_CONF syntax) instead of the recorded ones",
		 "STRING"},
		{"memory-fraction", 0, 0, G_OPTION_ARG_DOUBLE, &args.memory_fraction,
		 "set_per_process_memory_fraction(F) of the device memory", "F"},
		{"device-memory", 0, 0, G_OPTION_ARG_STRING, &args.device_memory,
		 "Device memory (e.g. 80GB, 24GiB); alone, cudaMalloc fails past it", "BYTES"},
		{"device", 'd', 0, G_OPTION_ARG_INT, &args.device,
		 "Replay only this device (default: every device)", "N"},
		{"check", 0, 0, G_OPTION_ARG_NONE, &args.check,
		 "Compare every entry and the final state with the trace; exit 1 on divergence",
		 NULL},
		{"keep-going", 0, 0, G_OPTION_ARG_NONE, &args.keep_going,
		 "Skip requests that run out of memory instead of stopping", NULL},
		{"json", 0, 0, G_OPTION_ARG_NONE, &args.json, "Print one JSON object", NULL},
		{"addresses-from", 0, 0, G_OPTION_ARG_FILENAME, &args.addresses_from,
		 "Take segment addresses, in order, from another recorded run", "TRACE"},
		{"whatif", 0, 0, G_OPTION_ARG_NONE, &args.whatif,
		 "A what-if even under the recorded settings (another cap or device): ignore "
		 "the trace's segment entries and addresses",
		 NULL},
		{"address-sensitivity", 0, 0, G_OPTION_ARG_NONE, &args.sensitivity,
		 "Replay under the driver, ascending and descending address models and say "
		 "whether any figure changes",
		 NULL},
		{"address-model", 0, 0, G_OPTION_ARG_STRING, &args.address_model,
		 "Addresses of a what-if's segments: driver (default), ascending or descending",
		 "MODEL"},
		{"pytorch-version", 0, 0, G_OPTION_ARG_STRING, &args.pytorch_version,
		 "Replay by the rules of this release, 2.0 to 2.11 (default: guessed from the "
		 "snapshot's format)",
		 "X.Y"},
		{"invariants", 0, 0, G_OPTION_ARG_NONE, &args.invariants,
		 "Check the model's invariants after every event (slow)", NULL},
		{NULL, 0, 0, 0, NULL, NULL, NULL},
	};
	g_autoptr(GOptionContext) octx = g_option_context_new("TRACE");
	g_option_context_set_summary(
		octx, "Replays a PyTorch memory snapshot (pickle or msgpack trace)\n"
		      "through the caching-allocator model and prints memory_stats().");
	g_option_context_add_main_entries(octx, entries, NULL);
	GError *error = NULL;
	if (!g_option_context_parse(octx, &argc, &argv, &error)) {
		fprintf(stderr, "ccasim replay: %s\n", error->message);
		g_error_free(error);
		status = 2;
	} else if (argc != 2) {
		fprintf(stderr, "ccasim replay: expected one TRACE (see --help)\n");
		status = 2;
	} else {
		status = run_replay(&args, argv[1]);
	}
	g_free(args.config);
	g_free(args.device_memory);
	g_free(args.addresses_from);
	g_free(args.address_model);
	g_free(args.pytorch_version);
	return status;
}
