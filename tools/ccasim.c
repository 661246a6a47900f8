/* ccasim.c - the command-line entry point: dispatches to a subcommand. */
#include "config.h"

#include <errno.h>
#include <glib.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "replay.h"

/* Groups every command that replays a trace takes. */
#define VIEW \
	(CCA_CLI_INPUT | CCA_CLI_DEVICE | CCA_CLI_LIMITS | CCA_CLI_VERSION | CCA_CLI_KEEP_GOING)
#define WHATIF_STUDY (CCA_CLI_INPUT | CCA_CLI_DEVICE | CCA_CLI_VERSION | CCA_CLI_JSON)

/* Every command: name, runner, summary, parameters, shared option groups
 * (cli.h) and, where --config means something particular, its help. */
static const CcaCliCommand commands[] = {
	{"convert", cca_cmd_convert, "convert a snapshot pickle into a msgpack trace",
	 "SNAPSHOT -o TRACE.msgpack", CCA_CLI_INPUT, NULL},
	{"info", cca_cmd_info, "summarise a snapshot or trace (--json for machines)", "FILE",
	 CCA_CLI_INPUT | CCA_CLI_JSON, NULL},
	{"replay", cca_cmd_replay, "replay a trace through the allocator model", "TRACE",
	 VIEW | CCA_CLI_ALL_DEVICES | CCA_CLI_CONFIG | CCA_CLI_WHATIF | CCA_CLI_JSON | CCA_CLI_JOBS,
	 NULL},
	{"plot", cca_cmd_plot, "plot memory over time or the segment map (svg, png, pdf, html)",
	 "TRACE", VIEW | CCA_CLI_CONFIGS | CCA_CLI_JSON | CCA_CLI_JOBS,
	 "What-if allocator settings (PYTORCH_CUDA_ALLOC_CONF syntax); repeat to overlay "
	 "several"},
	{"view", cca_cmd_view,
	 "write one offline HTML page: timeline, allocations, segment map, peak", "TRACE...",
	 VIEW | CCA_CLI_CONFIGS | CCA_CLI_JOBS,
	 "What-if allocator settings (PYTORCH_CUDA_ALLOC_CONF syntax); repeat to overlay "
	 "several"},
	{"explain", cca_cmd_explain, "explain in plain language why memory was reserved", "TRACE",
	 VIEW | CCA_CLI_CONFIG | CCA_CLI_JOBS, NULL},
	{"peak", cca_cmd_peak,
	 "what made the peak: live blocks by stack, annotation and metadata; stranded free "
	 "memory",
	 "TRACE", VIEW | CCA_CLI_CONFIG | CCA_CLI_JSON | CCA_CLI_JOBS, NULL},
	{"step", cca_cmd_step, "walk through the allocator's decisions event by event", "TRACE",
	 VIEW | CCA_CLI_CONFIG, NULL},
	{"export", cca_cmd_export, "write the simulated run as a PyTorch snapshot or Chrome trace",
	 "TRACE", VIEW | CCA_CLI_CONFIG, NULL},
	{"sweep", cca_cmd_sweep, "replay a trace under a grid of settings, best first", "TRACE",
	 WHATIF_STUDY | CCA_CLI_LIMITS | CCA_CLI_CONFIGS | CCA_CLI_JOBS,
	 "Add a row with these settings (PYTORCH_CUDA_ALLOC_CONF syntax; repeatable)"},
	{"fit", cca_cmd_fit, "find the smallest device memory a trace runs in", "TRACE",
	 WHATIF_STUDY | CCA_CLI_CONFIGS | CCA_CLI_JOBS | CCA_CLI_RECORDED_CAP,
	 "Fit under these settings (PYTORCH_CUDA_ALLOC_CONF syntax; repeatable)"},
	{"diff", cca_cmd_diff, "compare two replays: where reserved memory parts",
	 "TRACE [TRACE_B]",
	 WHATIF_STUDY | CCA_CLI_LIMITS | CCA_CLI_CONFIGS | CCA_CLI_WHATIF | CCA_CLI_JOBS,
	 "Settings of A, then of B (PYTORCH_CUDA_ALLOC_CONF syntax; once: of B with one trace, "
	 "of both with two)"},
	{"fleet", cca_cmd_fleet, "replay many snapshots x settings, sharded; merge a report",
	 "run|merge", 0, NULL},
	{"gpu", cca_cmd_gpu, "replay on a CUDA GPU against the simulation; calibrate", "COMMAND", 0,
	 NULL},
};

static void
print_usage(FILE *out)
{
	fprintf(out, "Usage: ccasim COMMAND [OPTION...] FILE...\n\n"
		     "Simulates PyTorch's CUDA caching allocator on memory-snapshot traces.\n\n"
		     "Commands:\n");
	for (size_t i = 0; i < G_N_ELEMENTS(commands); i++)
		fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].summary);
	fprintf(out, "\nRun 'ccasim COMMAND --help' for a command's options.\n"
		     "Inputs may be pickles (torch.cuda.memory._dump_snapshot) or msgpack traces,\n"
		     "plain or compressed with xz or gzip.\n");
}

/* With CCASIM_MEMORY_REPORT set, prints the process's memory figures
 * from /proc/self/status on exit (for benchmarks): VmHWM is the peak
 * resident set including the mapped trace file, RssAnon the heap. */
static void
report_memory(void)
{
	char *status = NULL;
	if (!g_file_get_contents("/proc/self/status", &status, NULL, NULL))
		return;
	gchar **lines = g_strsplit(status, "\n", -1);
	for (gchar **l = lines; *l; l++)
		if (g_str_has_prefix(*l, "VmHWM:") || g_str_has_prefix(*l, "RssAnon:") ||
		    g_str_has_prefix(*l, "RssFile:"))
			fprintf(stderr, "memory: %s\n", *l);
	g_strfreev(lines);
	g_free(status);
}

/* CCASIM_STATS: the model passes the command ran (doc/architecture.md,
 * "Glossary": planning pass; tests/cli/test-replay-count.sh reads them). */
static void
report_stats(void)
{
	uint64_t replays, planning;
	cca_replay_totals(&replays, &planning);
	fprintf(stderr,
		"stats: %" G_GUINT64_FORMAT " replays, %" G_GUINT64_FORMAT " planning passes\n",
		replays, planning);
}

/* Flushes and closes standard output and returns STATUS, or 1 after one
 * line on stderr when a write to it failed (a full disk, a closed pipe
 * with SIGPIPE ignored): a report that was not written all is an error,
 * exit 1 (2 stays 2), never 0 nor a status that reports a finding.  A closed pipe under SIGPIPE's
 * default action kills the process by the signal, as any filter's (doc/ccasim.1, EXIT STATUS). */
static int
finish_stdout(int status)
{
	/* a write that failed earlier left its errno, unless a later call
	 * failed too: the best there is without a wrapper on every write */
	int failed = ferror(stdout);
	int err = failed ? errno : 0;
	if (fflush(stdout) != 0) {
		failed = 1;
		err = errno;
	}
	/* EBADF from fclose alone: stdout was closed and nothing was written */
	if (fclose(stdout) != 0 && !failed && errno != EBADF) {
		failed = 1;
		err = errno;
	}
	if (!failed)
		return status;
	fprintf(stderr, "ccasim: standard output: %s\n", err ? g_strerror(err) : "write error");
	/* a report not written whole is an error whatever the command found
	 * (replay's status of a run out of memory included) */
	return status == 2 ? 2 : 1;
}

int
main(int argc, char **argv)
{
	if (g_getenv("CCASIM_MEMORY_REPORT"))
		atexit(report_memory);
	if (g_getenv("CCASIM_STATS"))
		atexit(report_stats);
	setlocale(LC_ALL, "");
	g_set_prgname("ccasim");
	if (argc < 2) {
		print_usage(stderr);
		return 2;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
	    strcmp(argv[1], "help") == 0) {
		print_usage(stdout);
		return finish_stdout(0);
	}
	if (strcmp(argv[1], "--version") == 0) {
		printf("ccasim %s\n", PACKAGE_VERSION);
		return finish_stdout(0);
	}
	return finish_stdout(
		cca_cli_dispatch(commands, G_N_ELEMENTS(commands), "ccasim", argc - 1, argv + 1));
}
