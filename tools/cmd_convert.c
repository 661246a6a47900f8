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

#include "inputargs.h"
#include "commands.h"
#include "snapshot.h"
#include "trace.h"

typedef struct {
	char *output;
	gboolean verbose;
} CcaConvertOptions;

/* Prints a usage error and returns exit status 2. */
static int
cca_convert_usage(const char *what)
{
	fprintf(stderr, "ccasim convert: %s (see 'ccasim convert --help')\n", what);
	return 2;
}

/* Parses ARGV into OPTS; returns -1 to go on or an exit status. */
static int
cca_convert_parse(int *argc, char ***argv, CcaConvertOptions *opts)
{
	const GOptionEntry entries[] = {
		{"output", 'o', 0, G_OPTION_ARG_FILENAME, &opts->output,
		 "write the msgpack trace to FILE (required)", "FILE"},
		{"verbose", 'v', 0, G_OPTION_ARG_NONE, &opts->verbose,
		 "print what was written to stderr", NULL},
		G_OPTION_ENTRY_NULL,
	};
	g_autoptr(GOptionContext) ctx = g_option_context_new("SNAPSHOT -o TRACE.msgpack");
	g_autoptr(GError) error = NULL;

	g_set_prgname("ccasim convert");
	g_option_context_set_summary(
		ctx,
		"Converts a PyTorch memory-snapshot pickle (torch.cuda.memory._dump_snapshot),\n"
		"plain or compressed with xz or gzip, into a ccasim msgpack trace\n"
		"(doc/trace-format.md).  A msgpack trace as input is re-written.");
	g_option_context_set_description(
		ctx,
		"The output is written to a temporary file next to it and renamed into place,\n"
		"so a failed conversion never leaves a partial file.\n\n"
		"Exit status: 0 success, 1 bad input or failed write, 2 usage error.");
	g_option_context_add_main_entries(ctx, entries, NULL);
	g_option_context_add_group(ctx, cca_inputargs_group());
	if (!g_option_context_parse(ctx, argc, argv, &error))
		return cca_convert_usage(error->message);
	if (*argc < 2)
		return cca_convert_usage("missing SNAPSHOT");
	if (*argc > 2)
		return cca_convert_usage("expected exactly one SNAPSHOT");
	if (opts->output == NULL || *opts->output == '\0')
		return cca_convert_usage("missing -o TRACE.msgpack");
	return -1;
}

int
cca_cmd_convert(int argc, char **argv)
{
	CcaConvertOptions opts = {0};
	g_autoptr(GError) error = NULL;
	int status = cca_convert_parse(&argc, &argv, &opts);

	if (status < 0) {
		/* Only written out: a pickle's events can stay encoded. */
		g_autoptr(CcaSnapshot) snap = cca_snapshot_load_compact(argv[1], &error);
		if (snap == NULL || !cca_trace_write(snap, opts.output, &error)) {
			fprintf(stderr, "ccasim convert: %s\n", error->message);
			status = 1;
		} else {
			status = 0;
			if (opts.verbose) {
				uint64_t events = 0;
				for (int d = 0; d < snap->n_devices; d++)
					events += snap->n_events[d];
				fprintf(stderr,
					"ccasim convert: wrote %s: %d device(s), %" G_GUINT64_FORMAT
					" events, %u segments\n",
					opts.output, snap->n_devices, events, snap->segments->len);
			}
		}
	}
	g_free(opts.output);
	return status;
}
