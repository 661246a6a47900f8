/* cmd_gpu.c - `ccasim gpu replay|calibrate|info`: option parsing and
 * output only; the work is in gpu/. */
#include "config.h"

#include <glib.h>
#include <stdio.h>
#include <string.h>

#include "inputargs.h"
#include "commands.h"
#include "viewargs.h"

#ifndef HAVE_CUDA

int
cca_cmd_gpu(int argc, char **argv)
{
	fprintf(stderr, "ccasim gpu: ccasim was built without CUDA\n");
	return 2;
}

#else

#include "../gpu/calibrate.h"
#include "../gpu/cudadevice.h"
#include "../gpu/gpureplay.h"
#include "device.h"
#include "engine.h"
#include "json.h"
#include "report.h"
#include "settings.h"
#include "sizes.h"
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

/* Parses ARGV with ENTRIES; returns FALSE after printing the error. */
static gboolean
parse(const char *command, const char *params, const char *summary, GOptionEntry *entries,
      int *argc, char ***argv)
{
	g_autoptr(GOptionContext) octx = g_option_context_new(params);
	g_option_context_set_summary(octx, summary);
	g_option_context_add_main_entries(octx, entries, NULL);
	g_option_context_add_group(octx, cca_inputargs_group());
	GError *error = NULL;
	if (!g_option_context_parse(octx, argc, argv, &error)) {
		report_error(command, error);
		return FALSE;
	}
	return TRUE;
}

/* ------------------------------------------------------------- replay */

typedef struct {
	char *config;
	char *memory_fraction;
	char *device_memory;
	int device;
	int gpu;
	gboolean keep_going;
	gboolean whatif;
	char *address_model;
	gboolean json;
	gboolean touch;
	gboolean calls;
	char *tolerance;
	char *pytorch_version;
	char *output;
} GpuReplayArgs;

static void
gpu_replay_args_clear(GpuReplayArgs *a)
{
	g_free(a->config);
	g_free(a->address_model);
	g_free(a->memory_fraction);
	g_free(a->device_memory);
	g_free(a->tolerance);
	g_free(a->pytorch_version);
	g_free(a->output);
}

static int
gpu_replay(int argc, char **argv)
{
	GpuReplayArgs args = {0};
	GOptionEntry entries[] = {
		{"config", 'c', 0, G_OPTION_ARG_STRING, &args.config,
		 "Allocator settings (PYTORCH_CUDA_ALLOC_CONF syntax) instead of the recorded ones",
		 "STRING"},
		{"memory-fraction", 0, 0, G_OPTION_ARG_STRING, &args.memory_fraction,
		 "set_per_process_memory_fraction(F) of the GPU's memory", "F"},
		{"device-memory", 0, 0, G_OPTION_ARG_STRING, &args.device_memory,
		 "Act as a device of this many bytes (cudaMalloc refused past it)", "BYTES"},
		{"device", 'd', 0, G_OPTION_ARG_INT, &args.device,
		 "Replay this device of the trace (default 0)", "N"},
		{"gpu", 'g', 0, G_OPTION_ARG_INT, &args.gpu, "CUDA device to run on (default 0)",
		 "N"},
		{"touch", 0, 0, G_OPTION_ARG_NONE, &args.touch,
		 "Memset every allocated block on its stream", NULL},
		{"tolerance", 0, 0, G_OPTION_ARG_STRING, &args.tolerance,
		 "Bytes measured and simulated reserved memory may differ by (default: the "
		 "driver's granularity)",
		 "BYTES"},
		{"keep-going", 0, 0, G_OPTION_ARG_NONE, &args.keep_going,
		 "Skip requests that run out of memory instead of stopping", NULL},
		{"whatif", 0, 0, G_OPTION_ARG_NONE, &args.whatif,
		 "Predict as a what-if even under the recorded settings (another cap or device)",
		 NULL},
		{"address-model", 0, 0, G_OPTION_ARG_STRING, &args.address_model,
		 "Addresses of the predicted what-if: driver (default), ascending or descending",
		 "MODEL"},
		{"pytorch-version", 0, 0, G_OPTION_ARG_STRING, &args.pytorch_version,
		 "Replay by the rules of this release (default: guessed from the snapshot)", "X.Y"},
		{"json", 0, 0, G_OPTION_ARG_NONE, &args.json, "Print one JSON object", NULL},
		{"calls", 0, 0, G_OPTION_ARG_NONE, &args.calls,
		 "With --json, list every device call (kind, bytes, ns, used delta, used, ok)",
		 NULL},
		{"output", 'o', 0, G_OPTION_ARG_FILENAME, &args.output,
		 "Write the report to FILE instead of standard output", "FILE"},
		{0},
	};
	if (!parse("replay", "TRACE",
		   "Replays a trace with the allocator policy on a CUDA GPU and prints, side by\n"
		   "side, the simulated and the measured figures. Exit status 1 when they\n"
		   "disagree beyond the driver's granularity.",
		   entries, &argc, &argv)) {
		gpu_replay_args_clear(&args);
		return 2;
	}
	int status = 2;
	GError *error = NULL;
	CcaSettings settings;
	cca_settings_init(&settings);
	CcaGpuReplayOptions opt = {
		.ordinal = args.gpu, .touch = args.touch, .keep_calls = args.calls};
	cca_replay_options_init(&opt.replay);
	opt.replay.keep_going = args.keep_going;
	opt.replay.device = args.device;
	g_autoptr(CcaSnapshot) snap = NULL;
	if (argc != 2) {
		fprintf(stderr, "ccasim gpu replay: expected one TRACE (see --help)\n");
		goto out;
	}
	bool capacity_set = false;
	if (!cca_view_check_int("gpu replay", "--device", args.device, 0, G_MAXINT) ||
	    !cca_view_check_int("gpu replay", "--gpu", args.gpu, 0, G_MAXINT) ||
	    !cca_view_parse_limits("gpu replay", args.memory_fraction, &opt.replay.memory_fraction,
				   args.device_memory, args.pytorch_version, &opt.capacity,
				   &capacity_set, &opt.replay.pytorch_version) ||
	    !cca_view_parse_whatif("gpu replay", args.whatif, args.address_model, &opt.replay))
		goto out;
	if (args.tolerance &&
	    !cca_size_parse(args.tolerance, "--tolerance", &opt.tolerance, &error)) {
		status = report_error("replay", error);
		goto out;
	}
	/* no GPU: say so before reading a trace that may be large */
	CcaCudaInfo info;
	if (!cca_cuda_info(args.gpu, &info, &error)) {
		status = report_error("replay", error);
		goto out;
	}
	g_free(info.name);
	snap = cca_snapshot_load(argv[1], &error);
	if (!snap) {
		status = report_error("replay", error);
		goto out;
	}
	if (!cca_view_check_device("gpu replay", snap, argv[1], args.device, &status))
		goto out;
	if (!opt.replay.pytorch_version)
		opt.replay.pytorch_version = cca_replay_guess_pytorch_version(snap);
	if (args.config) {
		settings.pytorch_version = opt.replay.pytorch_version;
		if (!cca_settings_parse(&settings, args.config, &error)) {
			g_prefix_error(&error, "--config: ");
			status = report_error("replay", error);
			status = 2;
			goto out;
		}
		opt.replay.settings = &settings;
	}
	CcaGpuReplayResult result;
	if (!cca_gpu_replay_run(snap, &opt, &result, &error)) {
		cca_gpu_replay_result_clear(&result);
		status = report_error("replay", error);
		goto out;
	}
	CcaSettings recorded;
	cca_settings_init(&recorded);
	recorded.pytorch_version = opt.replay.pytorch_version;
	cca_settings_from_recorded(&recorded, &snap->settings, NULL);
	CcaReportContext ctx = {
		.trace = snap->source,
		.device = args.device,
		.settings = opt.replay.settings ? opt.replay.settings : &recorded,
		.memory_fraction = opt.replay.memory_fraction,
		.device_memory = result.record.total_memory,
		.device_memory_set = capacity_set,
	};
	GString *out = g_string_new(NULL);
	if (args.json) {
		cca_gpu_replay_report_json(&ctx, &opt, &result, out);
		g_string_append_c(out, '\n');
	} else {
		cca_gpu_replay_report_text(&ctx, &opt, &result, out);
	}
	status = result.passed ? 0 : 1;
	if (args.output) {
		if (!g_file_set_contents(args.output, out->str, (gssize)out->len, &error))
			status = report_error("replay", error);
	} else {
		fputs(out->str, stdout);
	}
	g_string_free(out, TRUE);
	cca_settings_clear(&recorded);
	cca_gpu_replay_result_clear(&result);
out:
	cca_settings_clear(&settings);
	gpu_replay_args_clear(&args);
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
		if (!g_ascii_string_to_unsigned(g_strstrip(*p), 10, 1, 1 << 20, &mb, NULL)) {
			g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
				    "--sizes: '%s' is not a size in MiB (1 to 1048576)", *p);
			return FALSE;
		}
		uint64_t v = mb;
		g_array_append_val(sizes, v);
	}
	return TRUE;
}

static int
gpu_calibrate(int argc, char **argv)
{
	char *output = NULL, *sizes_text = NULL;
	int reps = 7, gpu = 0;
	GOptionEntry entries[] = {
		{"output", 'o', 0, G_OPTION_ARG_FILENAME, &output,
		 "Write the calibration JSON to FILE (default: standard output)", "FILE"},
		{"sizes", 0, 0, G_OPTION_ARG_STRING, &sizes_text,
		 "Sizes in MiB (default 2,20,64,256,1024,4096,16384)", "LIST"},
		{"reps", 0, 0, G_OPTION_ARG_INT, &reps, "Timed repetitions per size (default 7)",
		 "N"},
		{"gpu", 'g', 0, G_OPTION_ARG_INT, &gpu, "CUDA device (default 0)", "N"},
		{0},
	};
	int status = 2;
	GError *error = NULL;
	GArray *sizes = g_array_new(FALSE, FALSE, sizeof(uint64_t));
	CcaCalibration cal = {0};
	if (!parse("calibrate", "",
		   "Measures cudaMalloc/cudaFree and VMM map/unmap latency by size and writes\n"
		   "the calibration file the cost model reads.",
		   entries, &argc, &argv))
		goto out;
	if (argc != 1) {
		fprintf(stderr, "ccasim gpu calibrate: unexpected argument '%s'\n", argv[1]);
		goto out;
	}
	if (!cca_view_check_int("gpu calibrate", "--reps", reps, 1, 1000) ||
	    !cca_view_check_int("gpu calibrate", "--gpu", gpu, 0, G_MAXINT))
		goto out;
	if (!parse_sizes(sizes_text ? sizes_text : "2,20,64,256,1024,4096,16384", sizes, &error)) {
		status = report_error("calibrate", error);
		goto out;
	}
	if (!cca_calibrate(gpu, (const uint64_t *)sizes->data, sizes->len, (unsigned)reps, &cal,
			   &error)) {
		status = report_error("calibrate", error);
		goto out;
	}
	GString *json = g_string_new(NULL);
	cca_calibration_to_json(&cal, json);
	status = 0;
	if (output) {
		if (!g_file_set_contents(output, json->str, (gssize)json->len, &error))
			status = report_error("calibrate", error);
	} else {
		fputs(json->str, stdout);
	}
	g_string_free(json, TRUE);
out:
	cca_calibration_clear(&cal);
	g_array_free(sizes, TRUE);
	g_free(output);
	g_free(sizes_text);
	return status;
}

/* --------------------------------------------------------------- info */

static int
gpu_info(int argc, char **argv)
{
	int gpu = 0;
	gboolean json = FALSE;
	GOptionEntry entries[] = {
		{"gpu", 'g', 0, G_OPTION_ARG_INT, &gpu, "CUDA device (default 0)", "N"},
		{"json", 0, 0, G_OPTION_ARG_NONE, &json, "Print one JSON object", NULL},
		{0},
	};
	if (!parse("info", "", "Describes a CUDA device as the GPU replay sees it.", entries, &argc,
		   &argv))
		return 2;
	if (argc != 1) {
		fprintf(stderr, "ccasim gpu info: unexpected argument '%s'\n", argv[1]);
		return 2;
	}
	if (!cca_view_check_int("gpu info", "--gpu", gpu, 0, G_MAXINT))
		return 2;
	CcaCudaInfo info;
	GError *error = NULL;
	if (!cca_cuda_info(gpu, &info, &error))
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

static void
gpu_usage(FILE *out)
{
	fprintf(out, "Usage: ccasim gpu COMMAND [OPTION...]\n\n"
		     "Runs the allocator policy on a CUDA GPU.\n\n"
		     "Commands:\n"
		     "  replay TRACE  replay on the GPU and compare with the simulation\n"
		     "  calibrate     time cudaMalloc/cudaFree and map/unmap by size\n"
		     "  info          describe the GPU\n");
}

int
cca_cmd_gpu(int argc, char **argv)
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
	if (strcmp(sub, "replay") == 0)
		return gpu_replay(argc - 1, argv + 1);
	if (strcmp(sub, "calibrate") == 0)
		return gpu_calibrate(argc - 1, argv + 1);
	if (strcmp(sub, "info") == 0)
		return gpu_info(argc - 1, argv + 1);
	fprintf(stderr, "ccasim gpu: unknown command '%s' (see 'ccasim gpu --help')\n", sub);
	return 2;
}

#endif
