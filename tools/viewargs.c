/* viewargs.c - the checks behind the shared options and the loading
 * every replaying command shares. */
#include "config.h"

#include "viewargs.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "size.h"
#include "text.h"

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
	if (pytorch_version &&
	    !cca_settings_pytorch_version_parse(pytorch_version, version, &error)) {
		fprintf(stderr, "ccasim %s: --pytorch-version: %s\n", cmd, error->message);
		g_error_free(error);
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
cca_view_args_load(CcaCliArgs *args, const char *cmd, const char *path, CcaReplayOptions *opt,
		   int *status)
{
	GError *error = NULL;
	cca_replay_options_init(opt);
	opt->memory_fraction = args->memory_fraction;
	opt->device_memory = args->device_memory;
	opt->capacity_set = args->capacity_set;
	opt->pytorch_version = args->pytorch_version;
	opt->keep_going = args->keep_going;
	opt->force_whatif = args->whatif || args->address_model_text != NULL;
	if (args->address_model_text)
		opt->address_model = args->address_model;
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
	*status = 2;
	args->settings = g_new0(CcaSettings, args->n_configs ? args->n_configs : 1);
	args->n_settings = args->n_configs;
	for (guint i = 0; i < args->n_configs; i++) {
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
