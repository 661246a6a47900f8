/* cmd_convert.c - `ccasim convert SNAPSHOT -o TRACE.msgpack`: rewrites a
 * snapshot pickle (or a msgpack trace) as a ccasim msgpack trace.
 *
 * Exit status: 0 written, 1 unreadable input or failed write (one line on
 * stderr), 2 usage error.  The output appears atomically or not at all
 * (cca_trace_write() renames a finished temporary into place).
 */
#include "config.h"

#include <glib.h>
#include <stdio.h>

#include "commands.h"
#include "snapshot.h"
#include "snapshot_load.h"
#include "trace_write.h"
#include "text.h"

int
cca_cmd_convert(const CcaCliCommand *cmd, int argc, char **argv)
{
	g_auto(CcaCliArgs) args = {0};
	g_autofree char *output = NULL;
	gboolean verbose = FALSE;
	const GOptionEntry entries[] = {
		{"output", 'o', 0, G_OPTION_ARG_FILENAME, &output,
		 "write the msgpack trace to FILE (required)", "FILE"},
		{"verbose", 'v', 0, G_OPTION_ARG_NONE, &verbose, "print what was written to stderr",
		 NULL},
		G_OPTION_ENTRY_NULL,
	};
	int status = cca_cli_parse(
		cmd, entries,
		"Converts a PyTorch memory-snapshot pickle (torch.cuda.memory._dump_snapshot),\n"
		"plain or compressed with xz or gzip, into a ccasim msgpack trace\n"
		"(doc/trace-format.md).  A msgpack trace as input is re-written.",
		"The output is written to a temporary file next to it and renamed into place,\n"
		"so a failed conversion never leaves a partial file.\n\n"
		"Exit status: 0 success, 1 bad input or failed write, 2 usage error.",
		&args, &argc, &argv);
	if (status >= 0)
		return status;
	if (argc < 2)
		return cca_cli_usage(cmd, "missing SNAPSHOT (see 'ccasim convert --help')");
	if (argc > 2)
		return cca_cli_usage(cmd,
				     "expected exactly one SNAPSHOT (see 'ccasim convert --help')");
	if (output == NULL || *output == '\0')
		return cca_cli_usage(cmd, "missing -o TRACE.msgpack (see 'ccasim convert --help')");
	/* Only written out: a pickle's events can stay encoded. */
	g_autoptr(GError) error = NULL;
	g_autoptr(CcaSnapshot) snap = cca_snapshot_load_compact(argv[1], &error);
	if (snap == NULL || !cca_trace_write(snap, output, &error)) {
		cca_cli_print_error("convert", error);
		return 1;
	}
	if (verbose) {
		uint64_t events = 0;
		g_autofree char *shown = cca_text_path(output);
		for (int d = 0; d < snap->n_devices; d++)
			events += snap->n_events[d];
		fprintf(stderr,
			"ccasim convert: wrote %s: %d device(s), %" G_GUINT64_FORMAT
			" events, %u segments\n",
			shown, snap->n_devices, events, snap->segments->len);
	}
	return 0;
}
