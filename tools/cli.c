/* cli.c - the shared option groups, declared once, the one parser, and
 * what the commands share besides: the checks behind the options, the
 * loading of a trace to replay, the what-if grid and the progress bar.
 *
 * Each group is a GOptionGroup whose entries write into a CcaCliArgs;
 * cca_cli_parse() adds the groups a command's table entry names, parses,
 * and checks the shared values with the checks below, so that every
 * command words a bad --device, fraction or version the same way.  This
 * file and the commands print; the library (sim/) returns its errors.
 */
#include "config.h"

#include "cli.h"
#include "simdevice.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "input.h"
#include "number.h"
#include "size.h"
#include "snapshot_load.h"
#include "text.h"

/* ------------------------------------------------------------ checks */

gboolean
cca_cli_check_int(const char *cmd, const char *option, gint64 value, gint64 min, gint64 max)
{
	if (value >= min && value <= max)
		return TRUE;
	if (max >= G_MAXINT && value < min) /* no bound a user would meet */
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
cca_cli_parse_int(const char *cmd, const char *option, const char *text, gint64 min, gint64 max,
		  gint64 *value)
{
	if (text == NULL)
		return TRUE;
	const char *p = text;
	int64_t v = 0;
	if (!cca_number_scan_i64(&p, &v) || *p != '\0') {
		g_autofree char *shown = cca_text_display(text, -1, 64);
		fprintf(stderr, "ccasim %s: %s: expected a whole number, got '%s'\n", cmd, option,
			shown);
		return FALSE;
	}
	if (!cca_cli_check_int(cmd, option, v, min, max))
		return FALSE;
	*value = v;
	return TRUE;
}

gboolean
cca_cli_parse_context(const char *cmd, const char *text, uint64_t *context)
{
	g_autoptr(GError) error = NULL;
	uint64_t bytes = 0;
	if (!cca_size_parse(text, "--context", &bytes, &error)) {
		cca_cli_print_error(cmd, error);
		return FALSE;
	}
	if (bytes >= CCA_CLI_MAX_CONTEXT) {
		g_autofree char *shown = cca_text_display(text, -1, 64);
		fprintf(stderr, "ccasim %s: --context: must be under 1 TiB, got '%s'\n", cmd,
			shown);
		return FALSE;
	}
	*context = bytes;
	return TRUE;
}

gboolean
cca_cli_parse_fraction(const char *cmd, const char *option, const char *text, double *fraction)
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
cca_cli_parse_limits(const char *cmd, const char *memory_fraction, double *fraction,
		     const char *device_memory, const char *pytorch_version, uint64_t *bytes,
		     bool *capacity_set, uint32_t *version)
{
	GError *error = NULL;
	if (!cca_cli_parse_fraction(cmd, "--memory-fraction", memory_fraction, fraction))
		return FALSE;
	if (device_memory) {
		if (!cca_size_parse_device(device_memory, "--device-memory", bytes, &error)) {
			cca_cli_print_error(cmd, error);
			g_error_free(error);
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
cca_cli_check_device(const char *cmd, const CcaSnapshot *snap, const char *path, int device,
		     int *status)
{
	g_autofree char *shown = cca_text_path(path);
	GError *error = NULL;
	if (!cca_snapshot_check_history(snap, &error)) {
		cca_cli_print_error(cmd, error);
		g_error_free(error);
		*status = 1;
		return FALSE;
	}
	if (device < 0 || device >= snap->n_devices) {
		fprintf(stderr, "ccasim %s: %s: no device %d (the trace has %d)\n", cmd, shown,
			device, snap->n_devices);
		*status = 2;
		return FALSE;
	}
	return TRUE;
}

CcaSnapshot *
cca_cli_load(CcaCliArgs *args, const char *cmd, const char *path, CcaReplayOptions *opt,
	     int *status)
{
	GError *error = NULL;
	cca_replay_options_init(opt);
	opt->memory_fraction = args->memory_fraction;
	opt->recorded_memory_fraction = args->recorded_memory_fraction;
	opt->device_memory = args->device_memory;
	opt->capacity_set = args->capacity_set;
	opt->pytorch_version = args->pytorch_version;
	opt->keep_going = args->keep_going;
	opt->no_bounds = args->no_bounds;
	opt->bound_threads = (guint)args->jobs; /* 0: one per core */
	opt->force_whatif = args->whatif || args->address_model_text != NULL;
	if (args->address_model_text)
		opt->address_model = args->address_model;
	CcaSnapshot *snap = args->streaming ? cca_snapshot_load_streaming(path, &error)
					    : cca_snapshot_load(path, &error);
	if (!snap) {
		cca_cli_print_error(cmd, error);
		g_error_free(error);
		*status = 1;
		return NULL;
	}
	if (!opt->pytorch_version)
		opt->pytorch_version = cca_replay_guess_pytorch_version(snap);
	int device = args->device >= 0 ? args->device : 0;
	if (!cca_cli_check_device(cmd, snap, path, device, status)) {
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
		if (!cca_settings_parse_exact(&args->settings[i], args->configs[i], &error)) {
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
cca_cli_print_error(const char *cmd, const GError *error)
{
	g_autofree char *shown = cca_text_display(error->message, -1, CCA_CLI_MESSAGE_MAX);
	fprintf(stderr, "ccasim %s: %s\n", cmd, shown);
}

/* ------------------------------------------------------------ input limits */

/* --max-input-size SIZE: bytes (as cca_size_parse() reads them, e.g. 2GiB) a compressed, piped or
 * plain input may hold. */
static gboolean
cca_cli_max_input_size(const char *name, const char *value, gpointer data, GError **error)
{
	(void)data;
	uint64_t size = 0, old_size;
	unsigned ratio;
	GError *local = NULL;
	if (!cca_size_parse(value, name, &size, &local) || size == 0) {
		g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "%s",
			    local ? local->message : "--max-input-size: must be above 0");
		g_clear_error(&local);
		return FALSE;
	}
	cca_input_get_limits(&old_size, &ratio);
	cca_input_set_limits(size, ratio);
	return TRUE;
}

/* --max-inflate-ratio N: decompressed bytes allowed per compressed byte. */
static gboolean
cca_cli_max_inflate_ratio(const char *name, const char *value, gpointer data, GError **error)
{
	(void)data;
	char *end = NULL;
	guint64 ratio = g_ascii_strtoull(value, &end, 10);
	if (end == value || *end != '\0' || ratio < 1 || ratio > 1000000) {
		g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
			    "%s: expected a whole number from 1 to 1000000, got '%s'", name, value);
		return FALSE;
	}
	uint64_t size;
	unsigned old_ratio;
	cca_input_get_limits(&size, &old_ratio);
	cca_input_set_limits(size, (unsigned)ratio);
	return TRUE;
}

/* The group "input" of --max-input-size and --max-inflate-ratio; they set
 * the process-wide input limits (cca_input_set_limits()) as they are
 * parsed. */
static GOptionGroup *
cca_cli_input_group(void)
{
	static const GOptionEntry entries[] = {
		{"max-input-size", 0, 0, G_OPTION_ARG_CALLBACK, (void *)cca_cli_max_input_size,
		 "Refuse an input that holds (or decompresses to) more than SIZE bytes "
		 "(default 16GiB)",
		 "BYTES"},
		{"max-inflate-ratio", 0, 0, G_OPTION_ARG_CALLBACK,
		 (void *)cca_cli_max_inflate_ratio,
		 "Refuse a compressed input that grows more than N-fold past its first 64 MiB "
		 "(default 200)",
		 "N"},
		G_OPTION_ENTRY_NULL,
	};
	GOptionGroup *group = g_option_group_new(
		"input", "Input limits:", "Show the input limit options", NULL, NULL);
	g_option_group_add_entries(group, entries);
	return group;
}

/* ------------------------------------------------------------ the parser */

/* Adds a group NAME titled TITLE in --help, holding ENTRIES. */
static void
cca_cli_add_group(GOptionContext *octx, const char *name, const char *title,
		  const GOptionEntry *entries)
{
	g_autofree char *help = g_strdup_printf("Show the %s options", name);
	GOptionGroup *group = g_option_group_new(name, title, help, NULL, NULL);
	g_option_group_add_entries(group, entries);
	g_option_context_add_group(octx, group);
}

/* Adds the shared groups of CMD to OCTX, writing into ARGS. */
static void
cca_cli_add_groups(GOptionContext *octx, const CcaCliCommand *cmd, CcaCliArgs *args)
{
	guint g = cmd->groups;
	const GOptionEntry device[] = {
		{"device", 'd', 0, G_OPTION_ARG_STRING, &args->device_text,
		 g & CCA_CLI_ALL_DEVICES ? "Replay only this device (default: every device)"
					 : "Which device of the trace (default 0)",
		 "N"},
		G_OPTION_ENTRY_NULL,
	};
	const GOptionEntry limits[] = {
		{"memory-fraction", 0, 0, G_OPTION_ARG_STRING, &args->memory_fraction_text,
		 "set_per_process_memory_fraction(F) of the device memory: the cap", "F"},
		{"device-memory", 0, 0, G_OPTION_ARG_STRING, &args->device_memory_text,
		 "Device memory (e.g. 80G, 24GiB, 80GB: G is GiB, GB 10^9 bytes); alone, "
		 "cudaMalloc fails past it",
		 "BYTES"},
		{"recorded-memory-fraction", 0, 0, G_OPTION_ARG_STRING,
		 &args->recorded_fraction_text,
		 "The cap the recording ran under (a snapshot does not hold it; ccasim-record's "
		 "does): the replay's own cap unless --memory-fraction gives another, and what a "
		 "what-if learns the program's empty_cache() calls under",
		 "F"},
		G_OPTION_ENTRY_NULL,
	};
	/* the last entry of LIMITS, alone */
	const GOptionEntry *recorded_cap = &limits[G_N_ELEMENTS(limits) - 2];
	const char *config_help = cmd->config_help ? cmd->config_help
				  : g & CCA_CLI_CONFIGS
					  ? "Allocator settings (PYTORCH_CUDA_ALLOC_CONF syntax); "
					    "repeatable"
					  : "Allocator settings (PYTORCH_CUDA_ALLOC_CONF syntax) "
					    "instead of the recorded ones";
	const GOptionEntry config[] = {
		{"config", 'c', 0, G_OPTION_ARG_STRING_ARRAY, &args->configs, config_help,
		 "STRING"},
		G_OPTION_ENTRY_NULL,
	};
	const GOptionEntry whatif[] = {
		{"whatif", 0, 0, G_OPTION_ARG_NONE, &args->whatif,
		 "A what-if even under the recorded settings (another cap or device): ignore "
		 "the trace's segment entries and addresses",
		 NULL},
		{"address-model", 0, 0, G_OPTION_ARG_STRING, &args->address_model_text,
		 "Addresses of a what-if's segments: driver (default), ascending, descending or "
		 "moved:1 to moved:16 (the driver moved by other users of the address space)",
		 "MODEL"},
		G_OPTION_ENTRY_NULL,
	};
	const GOptionEntry version[] = {
		{"pytorch-version", 0, 0, G_OPTION_ARG_STRING, &args->pytorch_version_text,
		 "Replay by the rules of this release, 2.0 to 2.11 (default: guessed)", "X.Y"},
		G_OPTION_ENTRY_NULL,
	};
	const GOptionEntry json[] = {
		{"json", 0, 0, G_OPTION_ARG_NONE, &args->json, "Print one JSON object", NULL},
		G_OPTION_ENTRY_NULL,
	};
	const GOptionEntry keep_going[] = {
		{"keep-going", 0, 0, G_OPTION_ARG_NONE, &args->keep_going,
		 "Skip requests that run out of memory instead of stopping", NULL},
		G_OPTION_ENTRY_NULL,
	};
	const GOptionEntry jobs[] = {
		{"jobs", 'j', 0, G_OPTION_ARG_INT, &args->jobs,
		 "Replay on N threads (default: one per core)", "N"},
		{"no-progress", 0, 0, G_OPTION_ARG_NONE, &args->no_progress,
		 "No progress bar (it only shows when stderr is a terminal)", NULL},
		G_OPTION_ENTRY_NULL,
	};

	if (g & CCA_CLI_DEVICE)
		cca_cli_add_group(octx, "device", "Device:", device);
	if (g & CCA_CLI_LIMITS)
		cca_cli_add_group(octx, "limits", "Memory limits:", limits);
	else if (g & CCA_CLI_RECORDED_CAP)
		cca_cli_add_group(octx, "limits", "Memory limits:", recorded_cap);
	if (g & (CCA_CLI_CONFIG | CCA_CLI_CONFIGS))
		cca_cli_add_group(octx, "config", "Settings:", config);
	if (g & CCA_CLI_WHATIF)
		cca_cli_add_group(octx, "whatif", "What-if:", whatif);
	if (g & CCA_CLI_VERSION)
		cca_cli_add_group(octx, "version", "PyTorch version:", version);
	if (g & CCA_CLI_KEEP_GOING)
		cca_cli_add_group(octx, "oom", "Out of memory:", keep_going);
	if (g & CCA_CLI_JOBS)
		cca_cli_add_group(octx, "jobs", "Threads:", jobs);
	if (g & CCA_CLI_JSON)
		cca_cli_add_group(octx, "json", "Output:", json);
	if (g & CCA_CLI_INPUT)
		g_option_context_add_group(octx, cca_cli_input_group());
}

int
cca_cli_usage(const CcaCliCommand *cmd, const char *format, ...)
{
	va_list ap;
	va_start(ap, format);
	g_autofree char *message = g_strdup_vprintf(format, ap);
	va_end(ap);
	fprintf(stderr, "ccasim %s: %s\n", cmd->name, message);
	return 2;
}

/* Checks the shared values in ARGS and derives the rest; FALSE after
 * printing the usage error. */
static gboolean
cca_cli_check(const CcaCliCommand *cmd, CcaCliArgs *args)
{
	guint g = cmd->groups;
	args->n_configs = args->configs ? g_strv_length(args->configs) : 0;
	if ((g & CCA_CLI_JOBS) && !cca_cli_check_int(cmd->name, "--jobs", args->jobs, 0, G_MAXINT))
		return FALSE;
	/* `sweep --pytorch-version all` tabulates every release
	 * (doc/versions.md); another command takes one release */
	args->all_releases = args->pytorch_version_text &&
			     strcmp(args->pytorch_version_text, "all") == 0 &&
			     strcmp(cmd->name, "sweep") == 0;
	if (!cca_cli_parse_limits(cmd->name, args->memory_fraction_text, &args->memory_fraction,
				  args->device_memory_text,
				  args->all_releases ? NULL : args->pytorch_version_text,
				  &args->device_memory, &args->capacity_set,
				  &args->pytorch_version) ||
	    !cca_cli_parse_fraction(cmd->name, "--recorded-memory-fraction",
				    args->recorded_fraction_text, &args->recorded_memory_fraction))
		return FALSE;
	/* the recording's cap is the replay's unless another is given */
	if (args->recorded_memory_fraction > 0 && !args->memory_fraction_text)
		args->memory_fraction = args->recorded_memory_fraction;
	gint64 device = g & CCA_CLI_ALL_DEVICES ? -1 : 0;
	if (!cca_cli_parse_int(cmd->name, "--device", args->device_text, 0, G_MAXINT, &device))
		return FALSE;
	args->device = (int)device;
	if (args->n_configs > 1 && !(g & CCA_CLI_CONFIGS)) {
		cca_cli_usage(cmd, "--config: give it once");
		return FALSE;
	}
	args->address_model = CCA_ADDRESS_DRIVER;
	if (args->address_model_text &&
	    (!cca_simdevice_address_model_parse(args->address_model_text, &args->address_model) ||
	     args->address_model == CCA_ADDRESS_RECORDED)) {
		cca_cli_usage(cmd,
			      "--address-model: unknown model '%s' (driver, ascending, "
			      "descending)",
			      args->address_model_text);
		return FALSE;
	}
	return TRUE;
}

/* Is one of ARGV's options (before "--") a request for help? */
static gboolean
cca_cli_wants_help(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0)
			break;
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
			return TRUE;
	}
	return FALSE;
}

int
cca_cli_parse(const CcaCliCommand *cmd, const GOptionEntry *entries, const char *summary,
	      const char *description, CcaCliArgs *args, int *argc, char ***argv)
{
	g_autoptr(GOptionContext) octx = g_option_context_new(cmd->params);
	g_autoptr(GError) error = NULL;

	/* --help is answered below, with every group: GLib's own would list the
	 * main group alone and a --help-GROUP for each of the others */
	gboolean help_given = FALSE;
	const GOptionEntry help_entry[] = {
		{"help", 'h', 0, G_OPTION_ARG_NONE, &help_given, "Show this help", NULL},
		G_OPTION_ENTRY_NULL,
	};
	g_option_context_set_help_enabled(octx, FALSE);
	if (summary)
		g_option_context_set_summary(octx, summary);
	if (description)
		g_option_context_set_description(octx, description);
	if (entries)
		g_option_context_add_main_entries(octx, entries, NULL);
	g_option_context_add_main_entries(octx, help_entry, NULL);
	cca_cli_add_groups(octx, cmd, args);
	if (cca_cli_wants_help(*argc, *argv)) {
		/* every group's options, not the main group's alone */
		g_autofree char *help = g_option_context_get_help(octx, FALSE, NULL);
		fputs(help, stdout);
		return 0;
	}
	if (!g_option_context_parse(octx, argc, argv, &error)) {
		/* the message quotes what was typed: shown as cca_cli_print_error() would */
		g_autofree char *shown = cca_text_display(error->message, -1, CCA_CLI_MESSAGE_MAX);
		return cca_cli_usage(cmd, "%s (see 'ccasim %s --help')", shown, cmd->name);
	}
	return cca_cli_check(cmd, args) ? -1 : 2;
}

/* Is WORD the last word of the command name NAME ("replay" of "gpu replay")? */
static gboolean
cca_cli_is_named(const char *name, const char *word)
{
	const char *last = strrchr(name, ' ');
	return strcmp(last ? last + 1 : name, word) == 0;
}

int
cca_cli_dispatch(const CcaCliCommand *table, gsize n, const char *prefix, int argc, char **argv)
{
	for (gsize i = 0; i < n; i++)
		if (cca_cli_is_named(table[i].name, argv[0])) {
			/* --help of a command reads "Usage: ccasim COMMAND ..." */
			g_autofree char *prgname = g_strdup_printf("ccasim %s", table[i].name);
			g_set_prgname(prgname);
			return table[i].run(&table[i], argc, argv);
		}
	fprintf(stderr, "%s: unknown command '%s' (see '%s --help')\n", prefix, argv[0], prefix);
	return 2;
}

void
cca_cli_args_clear(CcaCliArgs *args)
{
	for (guint i = 0; i < args->n_settings; i++)
		cca_settings_clear(&args->settings[i]);
	g_free(args->settings);
	g_strfreev(args->configs);
	g_free(args->memory_fraction_text);
	g_free(args->recorded_fraction_text);
	g_free(args->device_memory_text);
	g_free(args->pytorch_version_text);
	g_free(args->address_model_text);
	g_free(args->device_text);
	memset(args, 0, sizeof *args);
}

/* ------------------------------------------------------------ what-if commands */

int
cca_cli_build_grid(const char *cmd, const CcaCliArgs *args, const CcaSnapshot *snap, int device,
		   const char *const *configs, const char *const *sets, gboolean default_grid,
		   CcaSweep **out)
{
	GError *error = NULL;
	int status;
	if (!cca_cli_check_device(cmd, snap, snap->source, device, &status))
		return status;
	CcaSweep *sweep = cca_sweep_new(snap, device, args->pytorch_version, &error);
	if (!sweep) {
		cca_cli_print_error(cmd, error);
		g_error_free(error);
		return 1;
	}
	for (const char *const *p = configs; p && *p; p++)
		if (!cca_sweep_add_config(sweep, *p, "--config", &error)) {
			fprintf(stderr, "ccasim %s: --config %s: %s\n", cmd, *p, error->message);
			g_error_free(error);
			cca_sweep_free(sweep);
			return 2;
		}
	guint n_sets = sets ? g_strv_length((char **)sets) : 0;
	if (!cca_sweep_add_sets(sweep, sets, n_sets, &error)) {
		cca_cli_print_error(cmd, error);
		g_error_free(error);
		cca_sweep_free(sweep);
		return 2;
	}
	if (default_grid && !cca_sweep_add_default_grid(sweep, args->memory_fraction > 0, &error)) {
		cca_cli_print_error(cmd, error);
		g_error_free(error);
		cca_sweep_free(sweep);
		return 1;
	}
	*out = sweep;
	return 0;
}

void
cca_cli_progress(void *data, guint done, guint total)
{
	CcaCliProgress *p = data;
	enum {
		WIDTH = 30
	};
	guint filled = total ? done * WIDTH / total : WIDTH;
	char bar[WIDTH + 1];
	for (guint i = 0; i < WIDTH; i++)
		bar[i] = i < filled ? '#' : '.';
	bar[WIDTH] = '\0';
	fprintf(stderr, "\rccasim %s: [%s] %u/%u replays", p->command, bar, done, total);
	fflush(stderr);
	p->shown = true;
}

void
cca_cli_progress_end(CcaCliProgress *p)
{
	if (p->shown)
		fputs("\r\033[K", stderr);
	p->shown = false;
}
