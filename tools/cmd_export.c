/* cmd_export.c - `ccasim export TRACE -o OUT`: option parsing and output
 * only (the writers are in sim/view/export.c). */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "export.h"
#include "text.h"

/* Loads, replays and writes; returns the exit status. */
static int
export_run(CcaCliArgs *args, const char *trace, const char *output, gboolean chrome)
{
	CcaReplayOptions opt;
	int status;
	g_autoptr(CcaSnapshot) snap = cca_cli_load(args, "export", trace, &opt, &status);
	if (!snap)
		return status;
	if (args->n_settings)
		opt.settings = &args->settings[0];
	CcaExportResult res;
	GError *error = NULL;
	gboolean ok = chrome ? cca_export_chrome(snap, &opt, output, &res, &error)
			     : cca_export_pickle(snap, &opt, output, &res, &error);
	if (!ok) {
		cca_cli_print_error("export", error);
		g_error_free(error);
		return 1;
	}
	g_autofree char *shown = cca_text_path(output);
	if (res.cap_unrecorded)
		fprintf(stderr,
			"ccasim export: note: %s records no cap: --device-memory is not below the "
			"default device's memory, which a replay of the file assumes\n",
			shown);
	if (chrome)
		printf("%s: %" G_GUINT64_FORMAT " trace events\n", shown, res.entries);
	else
		printf("%s: %" G_GUINT64_FORMAT " trace entries%s, %" G_GUINT64_FORMAT
		       " segments, %" G_GUINT64_FORMAT " blocks\n",
		       shown, res.entries, res.matched ? " (the input's own, entry for entry)" : "",
		       res.segments, res.blocks);
	return 0;
}

int
cca_cmd_export(const CcaCliCommand *cmd, int argc, char **argv)
{
	g_auto(CcaCliArgs) args = {0};
	g_autofree char *output = NULL, *format = NULL;
	GOptionEntry entries[] = {
		{"output", 'o', 0, G_OPTION_ARG_FILENAME, &output, "Where to write (required)",
		 "OUT"},
		{"format", 'f', 0, G_OPTION_ARG_STRING, &format,
		 "pickle (default: a PyTorch memory snapshot for torch.cuda._memory_viz and "
		 "pytorch.org/memory_viz) or chrome (a Chrome/Perfetto JSON trace)",
		 "FORMAT"},
		G_OPTION_ENTRY_NULL,
	};
	int status = cca_cli_parse(
		cmd, entries,
		"Writes the simulated run (under the recorded settings or a --config\n"
		"what-if) as a PyTorch 2.11 memory snapshot, which PyTorch's own viewers\n"
		"open, or as a Chrome/Perfetto trace with memory counters.",
		NULL, &args, &argc, &argv);
	if (status >= 0)
		return status;
	if (format && strcmp(format, "chrome") != 0 && strcmp(format, "pickle") != 0)
		return cca_cli_usage(cmd, "--format: unknown format '%s' (pickle, chrome)", format);
	if (argc != 2 || !output)
		return cca_cli_usage(
			cmd, "expected one TRACE, -o OUT and at most one --config (see --help)");
	return export_run(&args, argv[1], output, format && strcmp(format, "chrome") == 0);
}
