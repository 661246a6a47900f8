/* cli.c - the shared option groups, declared once, and the one parser.
 *
 * Each group is a GOptionGroup whose entries write into a CcaCliArgs;
 * cca_cli_parse() adds the groups a command's table entry names, parses,
 * and checks the shared values with the viewargs.c checks, so that every
 * command words a bad --device, fraction or version the same way.
 */
#include "config.h"

#include "cli.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "inputargs.h"
#include "text.h"
#include "viewargs.h"

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
		{"device", 'd', 0, G_OPTION_ARG_INT, &args->device,
		 g & CCA_CLI_ALL_DEVICES ? "Replay only this device (default: every device)"
					 : "Which device of the trace (default 0)",
		 "N"},
		G_OPTION_ENTRY_NULL,
	};
	const GOptionEntry limits[] = {
		{"memory-fraction", 0, 0, G_OPTION_ARG_STRING, &args->memory_fraction_text,
		 "set_per_process_memory_fraction(F) of the device memory: the cap", "F"},
		{"device-memory", 0, 0, G_OPTION_ARG_STRING, &args->device_memory_text,
		 "Device memory (e.g. 80GB, 24GiB); alone, cudaMalloc fails past it", "BYTES"},
		G_OPTION_ENTRY_NULL,
	};
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
		 "Addresses of a what-if's segments: driver (default), ascending or descending",
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
		g_option_context_add_group(octx, cca_inputargs_group());
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
	if ((g & CCA_CLI_JOBS) && !cca_view_check_int(cmd->name, "--jobs", args->jobs, 0, G_MAXINT))
		return FALSE;
	if (!cca_view_parse_limits(cmd->name, args->memory_fraction_text, &args->memory_fraction,
				   args->device_memory_text, args->pytorch_version_text,
				   &args->device_memory, &args->capacity_set,
				   &args->pytorch_version))
		return FALSE;
	if (args->device != CCA_VIEW_UNSET &&
	    !cca_view_check_int(cmd->name, "--device", args->device, 0, G_MAXINT))
		return FALSE;
	if (args->device == CCA_VIEW_UNSET)
		args->device = g & CCA_CLI_ALL_DEVICES ? -1 : 0;
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
	args->device = CCA_VIEW_UNSET;
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
		/* the message quotes what was typed: shown as cca_view_print_error() would */
		g_autofree char *shown = cca_text_display(error->message, -1, CCA_VIEW_MESSAGE_MAX);
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
	g_free(args->device_memory_text);
	g_free(args->pytorch_version_text);
	g_free(args->address_model_text);
	memset(args, 0, sizeof *args);
}
