/* viewargs.c - the replay options shared by plot, explain, step and
 * export: option table, checks and loading. */
#include "config.h"

#include "viewargs.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sizes.h"
#include "text.h"

void
cca_view_args_add(GOptionContext *ctx, CcaViewArgs *args, guint flags)
{
	gboolean many_configs = (flags & CCA_VIEW_ARGS_MANY_CONFIGS) != 0;
	args->device = CCA_VIEW_UNSET;
	args->flags = flags;
	GOptionEntry entries[] = {
		{"config", 'c', 0, G_OPTION_ARG_STRING_ARRAY, &args->configs,
		 many_configs
			 ? "What-if allocator settings (PYTORCH_CUDA_ALLOC_CONF syntax); "
			   "repeat to overlay several"
			 : "Allocator settings (PYTORCH_CUDA_ALLOC_CONF syntax) instead of the "
			   "recorded ones",
		 "STRING"},
		{"memory-fraction", 0, 0, G_OPTION_ARG_STRING, &args->memory_fraction,
		 "set_per_process_memory_fraction(F) of the device memory", "F"},
		{"device-memory", 0, 0, G_OPTION_ARG_STRING, &args->device_memory,
		 "Device memory (e.g. 80GB, 24GiB); alone, cudaMalloc fails past it", "BYTES"},
		{"device", 'd', 0, G_OPTION_ARG_INT, &args->device,
		 flags & CCA_VIEW_ARGS_ALL_DEVICES
			 ? "Replay only this device (default: every device)"
			 : "Which device's trace (default 0)",
		 "N"},
		{"pytorch-version", 0, 0, G_OPTION_ARG_STRING, &args->pytorch_version,
		 "Replay by the rules of this release, 2.0 to 2.11 (default: guessed)", "X.Y"},
		{"keep-going", 0, 0, G_OPTION_ARG_NONE, &args->keep_going,
		 "Skip requests that run out of memory instead of stopping", NULL},
		{NULL, 0, 0, 0, NULL, NULL, NULL},
	};
	g_option_context_add_main_entries(ctx, entries, NULL);
	GOptionEntry whatif[] = {
		{"whatif", 0, 0, G_OPTION_ARG_NONE, &args->whatif,
		 "A what-if even under the recorded settings (another cap or device): ignore "
		 "the trace's segment entries and addresses",
		 NULL},
		{"address-model", 0, 0, G_OPTION_ARG_STRING, &args->address_model,
		 "Addresses of a what-if's segments: driver (default), ascending or descending",
		 "MODEL"},
		{NULL, 0, 0, 0, NULL, NULL, NULL},
	};
	if (flags & CCA_VIEW_ARGS_WHATIF)
		g_option_context_add_main_entries(ctx, whatif, NULL);
}

gboolean
cca_view_check_int(const char *cmd, const char *option, gint64 value, gint64 min, gint64 max)
{
	if (value >= min && value <= max)
		return TRUE;
	if (max >= G_MAXINT) /* no bound a user would meet */
		fprintf(stderr,
			"ccasim %s: %s: must be %" G_GINT64_FORMAT " or more, got %" G_GINT64_FORMAT
			"\n",
			cmd, option, min, value);
	else
		fprintf(stderr,
			"ccasim %s: %s: must be %" G_GINT64_FORMAT " to %" G_GINT64_FORMAT
			", got %" G_GINT64_FORMAT "\n",
			cmd, option, min, max, value);
	return FALSE;
}

gboolean
cca_view_parse_fraction(const char *cmd, const char *option, const char *text, double *fraction)
{
	*fraction = 0.0;
	if (text == NULL)
		return TRUE;
	char *end = NULL;
	double f = g_ascii_strtod(text, &end);
	if (end == text || *end != '\0' || !isfinite(f) || f <= 0.0 || f > 1.0) {
		g_autofree char *shown = cca_text_display(text, -1, 64);
		fprintf(stderr,
			"ccasim %s: %s: expected a fraction of the device memory in (0, 1], got "
			"'%s'\n",
			cmd, option, shown);
		return FALSE;
	}
	*fraction = f;
	return TRUE;
}

gboolean
cca_view_parse_limits(const char *cmd, const char *memory_fraction, double *fraction,
		      const char *device_memory, const char *pytorch_version, uint64_t *bytes,
		      bool *capacity_set, uint32_t *version)
{
	GError *error = NULL;
	if (!cca_view_parse_fraction(cmd, "--memory-fraction", memory_fraction, fraction))
		return FALSE;
	if (device_memory) {
		if (!cca_size_parse(device_memory, "--device-memory", bytes, &error)) {
			cca_view_print_error(cmd, error);
			g_error_free(error);
			return FALSE;
		}
		if (*bytes == 0) {
			fprintf(stderr, "ccasim %s: --device-memory: must be more than 0\n", cmd);
			return FALSE;
		}
		*capacity_set = true;
	}
	if (pytorch_version && !cca_pytorch_version_parse(pytorch_version, version, &error)) {
		fprintf(stderr, "ccasim %s: --pytorch-version: %s\n", cmd, error->message);
		g_error_free(error);
		return FALSE;
	}
	return TRUE;
}

gboolean
cca_view_parse_whatif(const char *cmd, gboolean whatif, const char *address_model,
		      CcaReplayOptions *opt)
{
	opt->force_whatif = whatif || address_model != NULL;
	if (address_model && (!cca_address_model_parse(address_model, &opt->address_model) ||
			      opt->address_model == CCA_ADDRESS_RECORDED)) {
		fprintf(stderr,
			"ccasim %s: --address-model: unknown model '%s' (driver, ascending, "
			"descending)\n",
			cmd, address_model);
		return FALSE;
	}
	return TRUE;
}

gboolean
cca_view_check_device(const char *cmd, const CcaSnapshot *snap, const char *path, int device,
		      int *status)
{
	if (snap->n_devices == 0) {
		fprintf(stderr,
			"ccasim %s: %s: the snapshot has segments but no trace entries "
			"(device_traces), so there is nothing to replay: record it after "
			"torch.cuda.memory._record_memory_history() ('ccasim info' shows what it "
			"has)\n",
			cmd, path);
		*status = 1;
		return FALSE;
	}
	if (device < 0 || device >= snap->n_devices) {
		fprintf(stderr, "ccasim %s: %s: no device %d (the trace has %d)\n", cmd, path,
			device, snap->n_devices);
		*status = 2;
		return FALSE;
	}
	return TRUE;
}

CcaSnapshot *
cca_view_args_load(CcaViewArgs *args, const char *cmd, const char *path, CcaReplayOptions *opt,
		   int *status)
{
	GError *error = NULL;
	cca_replay_options_init(opt);
	*status = 2;
	guint n_configs = args->configs ? g_strv_length(args->configs) : 0;
	if (!cca_view_parse_limits(cmd, args->memory_fraction, &opt->memory_fraction,
				   args->device_memory, args->pytorch_version, &opt->device_memory,
				   &opt->capacity_set, &opt->pytorch_version))
		return NULL;
	if (args->device != CCA_VIEW_UNSET &&
	    !cca_view_check_int(cmd, "--device", args->device, 0, G_MAXINT))
		return NULL;
	if (args->device == CCA_VIEW_UNSET)
		args->device = args->flags & CCA_VIEW_ARGS_ALL_DEVICES ? -1 : 0;
	if (n_configs > 1 && !(args->flags & CCA_VIEW_ARGS_MANY_CONFIGS)) {
		fprintf(stderr, "ccasim %s: --config: give it once\n", cmd);
		return NULL;
	}
	opt->keep_going = args->keep_going;
	if (!cca_view_parse_whatif(cmd, args->whatif, args->address_model, opt))
		return NULL;
	CcaSnapshot *snap = cca_snapshot_load(path, &error);
	if (!snap) {
		cca_view_print_error(cmd, error);
		g_error_free(error);
		*status = 1;
		return NULL;
	}
	if (!opt->pytorch_version)
		opt->pytorch_version = cca_replay_guess_pytorch_version(snap);
	int device = args->device >= 0 ? args->device : 0;
	if (!cca_view_check_device(cmd, snap, path, device, status)) {
		cca_snapshot_free(snap);
		return NULL;
	}
	opt->device = device;
	args->settings = g_new0(CcaSettings, n_configs ? n_configs : 1);
	args->n_settings = n_configs;
	for (guint i = 0; i < n_configs; i++) {
		cca_settings_init(&args->settings[i]);
		args->settings[i].pytorch_version = opt->pytorch_version;
		if (!cca_settings_parse(&args->settings[i], args->configs[i], &error)) {
			fprintf(stderr, "ccasim %s: --config '%s': %s\n", cmd, args->configs[i],
				error->message);
			g_error_free(error);
			cca_snapshot_free(snap);
			return NULL;
		}
	}
	*status = 0;
	return snap;
}

void
cca_view_print_error(const char *cmd, const GError *error)
{
	g_autofree char *shown = cca_text_display(error->message, -1, CCA_VIEW_MESSAGE_MAX);
	fprintf(stderr, "ccasim %s: %s\n", cmd, shown);
}

void
cca_view_args_clear(CcaViewArgs *args)
{
	for (guint i = 0; i < args->n_settings; i++)
		cca_settings_clear(&args->settings[i]);
	g_free(args->settings);
	g_strfreev(args->configs);
	g_free(args->memory_fraction);
	g_free(args->device_memory);
	g_free(args->pytorch_version);
	g_free(args->address_model);
	memset(args, 0, sizeof *args);
}

char *
cca_view_settings_label(const CcaSnapshot *snap, const CcaReplayOptions *opt)
{
	GString *s = g_string_new(NULL);
	if (opt->settings) {
		g_autofree char *conf = cca_settings_to_string(opt->settings);
		g_autofree char *shown = cca_text_display(conf, -1, CCA_TEXT_DISPLAY_MAX);
		g_string_append_printf(s, "what-if \"%s\"", shown);
	} else if (snap->settings.present && snap->settings.conf && *snap->settings.conf) {
		g_autofree char *shown =
			cca_text_display(snap->settings.conf, -1, CCA_TEXT_DISPLAY_MAX);
		g_string_append_printf(s, "recorded settings \"%s\"", shown);
	} else {
		g_string_append(s, "recorded settings (PyTorch's defaults)");
	}
	char buf[32];
	if (opt->memory_fraction > 0.0)
		g_string_append_printf(s, ", memory fraction %.4g", opt->memory_fraction);
	if (opt->capacity_set)
		g_string_append_printf(s, ", device memory %s",
				       cca_size_format(opt->device_memory, buf));
	return g_string_free(s, FALSE);
}
