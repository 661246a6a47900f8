/* ccasim.c - the command-line entry point: dispatches to a subcommand. */
#include "config.h"

#include <glib.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"

typedef struct {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
} CcaCommand;

static const CcaCommand commands[] = {
	{"convert", cca_cmd_convert, "convert a snapshot pickle into a msgpack trace"},
	{"info", cca_cmd_info, "summarise a snapshot or trace (--json for machines)"},
	{"replay", cca_cmd_replay, "replay a trace through the allocator model"},
	{"plot", cca_cmd_plot, "plot memory over time or the segment map (svg, png, pdf, html)"},
	{"explain", cca_cmd_explain, "explain in plain language why memory was reserved"},
	{"step", cca_cmd_step, "walk through the allocator's decisions event by event"},
	{"export", cca_cmd_export, "write the simulated run as a PyTorch snapshot or Chrome trace"},
	{"sweep", cca_cmd_sweep, "replay a trace under a grid of settings, best first"},
	{"fit", cca_cmd_fit, "find the smallest device memory a trace runs in"},
	{"diff", cca_cmd_diff, "compare two replays: where reserved memory parts"},
	{"gpu", cca_cmd_gpu, "replay on a CUDA GPU against the simulation; calibrate"},
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

int
main(int argc, char **argv)
{
	if (g_getenv("CCASIM_MEMORY_REPORT"))
		atexit(report_memory);
	setlocale(LC_ALL, "");
	g_set_prgname("ccasim");
	if (argc < 2) {
		print_usage(stderr);
		return 2;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
	    strcmp(argv[1], "help") == 0) {
		print_usage(stdout);
		return 0;
	}
	if (strcmp(argv[1], "--version") == 0) {
		printf("ccasim %s\n", PACKAGE_VERSION);
		return 0;
	}
	for (size_t i = 0; i < G_N_ELEMENTS(commands); i++)
		if (strcmp(argv[1], commands[i].name) == 0) {
			/* --help of a command reads "Usage: ccasim COMMAND ..." */
			g_autofree char *name = g_strdup_printf("ccasim %s", argv[1]);
			g_set_prgname(name);
			return commands[i].run(argc - 1, argv + 1);
		}
	fprintf(stderr, "ccasim: unknown command '%s' (see 'ccasim --help')\n", argv[1]);
	return 2;
}
