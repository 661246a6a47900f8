/* cmd_gpu.c - `ccasim gpu replay|calibrate|info`: option parsing and
 * output only; the work is in gpu/. */
#include "config.h"

#include <glib.h>
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "plan.h"

#ifndef HAVE_CUDA

int
cca_cmd_gpu(const CcaCliCommand *cmd, int argc, char **argv)
{
	fprintf(stderr, "ccasim gpu: ccasim was built without CUDA\n");
	return 2;
}

#else

#include "../gpu/calibrate.h"
#include "../gpu/cudadevice.h"
#include "../gpu/gpureplay.h"
#include "device.h"
#include "replay.h"
#include "json.h"
#include "report.h"
#include "settings.h"
#include "size.h"
#include "snapshot.h"

/* Prints ERROR for COMMAND and returns the exit status it calls for: 2
 * for a usage error or no GPU, 1 otherwise. */
static int
report_error(const char *command, GError *error)
{
	int status = error->domain == G_OPTION_ERROR || (error->domain == CCA_CUDA_ERROR &&
							 error->code == CCA_CUDA_ERROR_NO_DEVICE)
			     ? 2
			     : 1;
	fprintf(stderr, "ccasim gpu %s: %s\n", command, error->message);
	g_error_free(error);
	return status;
}

/* ------------------------------------------------------------- replay */

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(CcaGpuReplayResult, cca_gpureplay_result_clear)

static int
gpu_replay(const CcaCliCommand *cmd, int argc, char **argv)
{
	g_auto(CcaCliArgs) args = {0};
	g_autofree char *tolerance = NULL, *output = NULL;
	int gpu = 0;
	gboolean touch = FALSE, calls = FALSE;
	GOptionEntry entries[] = {
		{"gpu", 'g', 0, G_OPTION_ARG_INT, &gpu, "CUDA device to run on (default 0)", "N"},
		{"touch", 0, 0, G_OPTION_ARG_NONE, &touch,
		 "Memset every allocated block on its stream", NULL},
		{"tolerance", 0, 0, G_OPTION_ARG_STRING, &tolerance,
		 "Bytes measured and simulated reserved memory may differ by (default: the "
		 "driver's granularity)",
		 "BYTES"},
		{"calls", 0, 0, G_OPTION_ARG_NONE, &calls,
		 "With --json, list every device call (kind, bytes, ns, used delta, used, ok)",
		 NULL},
		{"output", 'o', 0, G_OPTION_ARG_FILENAME, &output,
		 "Write the report to FILE instead of standard output", "FILE"},
		G_OPTION_ENTRY_NULL,
	};
	int status = cca_cli_parse(
		cmd, entries,
		"Replays a trace with the allocator policy on a CUDA GPU and prints, side by\n"
		"side, the simulated and the measured figures. Exit status 1 when they\n"
		"disagree beyond the driver's granularity.",
		NULL, &args, &argc, &argv);
	if (status >= 0)
		return status;
	if (argc != 2)
		return cca_cli_usage(cmd, "expected one TRACE (see --help)");
	if (!cca_cli_check_int("gpu replay", "--gpu", gpu, 0, G_MAXINT))
		return 2;
	GError *error = NULL;
	CcaGpuReplayOptions opt = {.ordinal = gpu, .touch = touch, .keep_calls = calls};
	if (tolerance && !cca_size_parse(tolerance, "--tolerance", &opt.tolerance, &error))
		return report_error("replay", error);
	/* no GPU: say so before reading a trace that may be large */
	CcaCudaInfo info;
	if (!cca_cudadevice_info(gpu, &info, &error))
		return report_error("replay", error);
	g_free(info.name);
	CcaReplayOptions *replay = &opt.replay;
	g_autoptr(CcaSnapshot) snap = cca_cli_load(&args, "gpu replay", argv[1], replay, &status);
	if (!snap)
		return status;
	/* the GPU run makes its own device of this many bytes */
	opt.capacity = replay->device_memory;
	if (args.n_settings)
		replay->settings = &args.settings[0];
	g_auto(CcaGpuReplayResult) result = {0};
	if (!cca_gpureplay_run(snap, &opt, &result, &error))
		return report_error("replay", error);
	g_auto(CcaSettings) recorded = {0};
	cca_settings_init(&recorded);
	recorded.pytorch_version = replay->pytorch_version;
	cca_plan_start_settings(snap, replay->device, &recorded, NULL);
	CcaReportContext ctx = {
		.trace = snap->source,
		.device = replay->device,
		.settings = replay->settings ? replay->settings : &recorded,
		.memory_fraction = replay->memory_fraction,
		.device_memory = result.record.total_memory,
		.device_memory_set = args.capacity_set,
	};
	g_autoptr(GString) out = g_string_new(NULL);
	if (args.json) {
		cca_gpureplay_report_json(&ctx, &opt, &result, out);
		g_string_append_c(out, '\n');
	} else {
		cca_gpureplay_report_text(&ctx, &opt, &result, out);
	}
	status = result.passed ? 0 : 1;
	if (!output)
		fputs(out->str, stdout);
	else if (!g_file_set_contents(output, out->str, (gssize)out->len, &error))
		status = report_error("replay", error);
	return status;
}

/* ---------------------------------------------------------- calibrate */

/* Parses "2,20,64" into SIZES (MiB). */
static gboolean
parse_sizes(const char *text, GArray *sizes, GError **error)
{
	g_auto(GStrv) parts = g_strsplit(text, ",", -1);
	for (char **p = parts; *p; p++) {
		guint64 mb = 0;
		if (!g_ascii_string_to_unsigned(g_strstrip(*p), 10, 1, CCA_TIB / CCA_MIB, &mb,
						NULL)) {
			g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
				    "--sizes: '%s' is not a size in MiB (1 to 1048576)", *p);
			return FALSE;
		}
		uint64_t v = mb;
		g_array_append_val(sizes, v);
	}
	return TRUE;
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(CcaCalibration, cca_calibrate_clear)

static int
gpu_calibrate(const CcaCliCommand *cmd, int argc, char **argv)
{
	g_auto(CcaCliArgs) args = {0};
	g_autofree char *output = NULL, *sizes_text = NULL;
	int reps = 7, gpu = 0;
	GOptionEntry entries[] = {
		{"output", 'o', 0, G_OPTION_ARG_FILENAME, &output,
		 "Write the calibration JSON to FILE (default: standard output)", "FILE"},
		{"sizes", 0, 0, G_OPTION_ARG_STRING, &sizes_text,
		 "Sizes in MiB (default 2,20,64,256,1024,4096,16384)", "LIST"},
		{"reps", 0, 0, G_OPTION_ARG_INT, &reps, "Timed repetitions per size (default 7)",
		 "N"},
		{"gpu", 'g', 0, G_OPTION_ARG_INT, &gpu, "CUDA device (default 0)", "N"},
		G_OPTION_ENTRY_NULL,
	};
	int status = cca_cli_parse(
		cmd, entries,
		"Measures cudaMalloc/cudaFree and VMM map/unmap latency by size and writes\n"
		"the calibration file the cost model reads.",
		NULL, &args, &argc, &argv);
	if (status >= 0)
		return status;
	if (argc != 1)
		return cca_cli_usage(cmd, "unexpected argument '%s'", argv[1]);
	if (!cca_cli_check_int("gpu calibrate", "--reps", reps, 1, 1000) ||
	    !cca_cli_check_int("gpu calibrate", "--gpu", gpu, 0, G_MAXINT))
		return 2;
	GError *error = NULL;
	g_autoptr(GArray) sizes = g_array_new(FALSE, FALSE, sizeof(uint64_t));
	if (!parse_sizes(sizes_text ? sizes_text : "2,20,64,256,1024,4096,16384", sizes, &error))
		return report_error("calibrate", error);
	g_auto(CcaCalibration) cal = {0};
	if (!cca_calibrate(gpu, (const uint64_t *)sizes->data, sizes->len, (unsigned)reps, &cal,
			   &error))
		return report_error("calibrate", error);
	g_autoptr(GString) json = g_string_new(NULL);
	cca_calibrate_to_json(&cal, json);
	if (!output)
		fputs(json->str, stdout);
	else if (!g_file_set_contents(output, json->str, (gssize)json->len, &error))
		return report_error("calibrate", error);
	return 0;
}

/* --------------------------------------------------------------- info */

static int
gpu_info(const CcaCliCommand *cmd, int argc, char **argv)
{
	g_auto(CcaCliArgs) args = {0};
	int gpu = 0;
	GOptionEntry entries[] = {
		{"gpu", 'g', 0, G_OPTION_ARG_INT, &gpu, "CUDA device (default 0)", "N"},
		G_OPTION_ENTRY_NULL,
	};
	int status =
		cca_cli_parse(cmd, entries, "Describes a CUDA device as the GPU replay sees it.",
			      NULL, &args, &argc, &argv);
	if (status >= 0)
		return status;
	if (argc != 1)
		return cca_cli_usage(cmd, "unexpected argument '%s'", argv[1]);
	if (!cca_cli_check_int("gpu info", "--gpu", gpu, 0, G_MAXINT))
		return 2;
	gboolean json = args.json;
	CcaCudaInfo info;
	GError *error = NULL;
	if (!cca_cudadevice_info(gpu, &info, &error))
		return report_error("info", error);
	GString *out = g_string_new(NULL);
	if (json) {
		g_autofree char *cc = g_strdup_printf("%d.%d", info.cc_major, info.cc_minor);
		json_t *o = json_object();
		json_object_set_new(o, "ordinal", json_integer(gpu));
		json_object_set_new(o, "name", cca_json_string(info.name));
		json_object_set_new(o, "total_memory", cca_json_uint(info.total_memory));
		json_object_set_new(o, "free_memory", cca_json_uint(info.free_memory));
		json_object_set_new(o, "granularity", cca_json_uint(info.granularity));
		json_object_set_new(o, "driver_version", json_integer(info.driver_version));
		json_object_set_new(o, "runtime_version", json_integer(info.runtime_version));
		json_object_set_new(o, "compute_capability", cca_json_string(cc));
		cca_json_append(out, o);
		g_string_append_c(out, '\n');
	} else {
		g_string_append_printf(out,
				       "GPU %d: %s, compute capability %d.%d\n"
				       "  total memory     %" G_GUINT64_FORMAT " B\n"
				       "  free memory      %" G_GUINT64_FORMAT " B\n"
				       "  VMM granularity  %" G_GUINT64_FORMAT " B\n"
				       "  driver %d, runtime %d\n",
				       gpu, info.name, info.cc_major, info.cc_minor,
				       info.total_memory, info.free_memory, info.granularity,
				       info.driver_version, info.runtime_version);
	}
	fputs(out->str, stdout);
	g_string_free(out, TRUE);
	g_free(info.name);
	return 0;
}

/* --------------------------------------------------------------- main */

/* `ccasim gpu`'s commands (see cli.h). */
static const CcaCliCommand gpu_commands[] = {
	{"gpu replay", gpu_replay, "replay on the GPU and compare with the simulation", "TRACE",
	 CCA_CLI_INPUT | CCA_CLI_DEVICE | CCA_CLI_LIMITS | CCA_CLI_CONFIG | CCA_CLI_WHATIF |
		 CCA_CLI_VERSION | CCA_CLI_KEEP_GOING | CCA_CLI_JSON,
	 NULL},
	{"gpu calibrate", gpu_calibrate, "time cudaMalloc/cudaFree and map/unmap by size", "",
	 CCA_CLI_INPUT, NULL},
	{"gpu info", gpu_info, "describe the GPU", "", CCA_CLI_INPUT | CCA_CLI_JSON, NULL},
};

static void
gpu_usage(FILE *out)
{
	fprintf(out, "Usage: ccasim gpu COMMAND [OPTION...]\n\n"
		     "Runs the allocator policy on a CUDA GPU.\n\n"
		     "Commands:\n");
	for (size_t i = 0; i < G_N_ELEMENTS(gpu_commands); i++) {
		const CcaCliCommand *c = &gpu_commands[i];
		g_autofree char *usage =
			g_strdup_printf("%s %s", c->name + strlen("gpu "), c->params);
		fprintf(out, "  %-13s %s\n", usage, c->summary);
	}
}

int
cca_cmd_gpu(const CcaCliCommand *cmd, int argc, char **argv)
{
	if (argc < 2) {
		gpu_usage(stderr);
		return 2;
	}
	const char *sub = argv[1];
	if (strcmp(sub, "--help") == 0 || strcmp(sub, "-h") == 0 || strcmp(sub, "help") == 0) {
		gpu_usage(stdout);
		return 0;
	}
	return cca_cli_dispatch(gpu_commands, G_N_ELEMENTS(gpu_commands), "ccasim gpu", argc - 1,
				argv + 1);
}

#endif
