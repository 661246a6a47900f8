/* cmd_fleet.c - `ccasim fleet run` and `ccasim fleet merge`: option
 * parsing and output only (sim/study/fleet.c does the work). */
#include "config.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "calibration.h"
#include "commands.h"
#include "fleet.h"
#include "text.h"

/* Prints a warning for each line of SKIPPED shown (escaped, one line
 * each), then how many more there were. */
static void
print_skipped(const char *cmd, const CcaFleetSkipped *skipped)
{
	guint shown = skipped->shown ? skipped->shown->len : 0;
	for (guint i = 0; i < shown; i++) {
		g_autofree char *line = cca_text_display(g_ptr_array_index(skipped->shown, i), -1,
							 CCA_CLI_MESSAGE_MAX);
		fprintf(stderr, "ccasim %s: warning: %s; line skipped\n", cmd, line);
	}
	if (skipped->count > shown)
		fprintf(stderr,
			"ccasim %s: warning: %" G_GUINT64_FORMAT
			" more lines that are no fleet rows skipped\n",
			cmd, skipped->count - shown);
}

static int
fleet_run(const CcaCliCommand *cmd, int argc, char **argv)
{
	g_auto(CcaCliArgs) args = {0};
	g_auto(GStrv) sets = NULL;
	g_autofree char *out_dir = NULL, *shard_text = NULL, *gpu = NULL, *calibration = NULL;
	gboolean default_grid = FALSE;
	int shards = 0;
	GOptionEntry entries[] = {
		{"out", 'o', 0, G_OPTION_ARG_FILENAME, &out_dir,
		 "The run folder: fleet.json and one rows.I-of-N.jsonl per shard (required; "
		 "a re-run skips the rows already there)",
		 "DIR"},
		{"set", 's', 0, G_OPTION_ARG_STRING_ARRAY, &sets,
		 "Add the rows of a grid, as sweep --set (repeatable)", "KEY=V1,V2,..."},
		{"default-grid", 0, 0, G_OPTION_ARG_NONE, &default_grid,
		 "Also add sweep's default grid (the default without --config or --set)", NULL},
		{"gpu", 0, 0, G_OPTION_ARG_STRING, &gpu,
		 "The GPU of jobs whose manifest line names none (a preset of 'fit --list-gpus'; "
		 "default: what ccasim-record recorded, else the H200)",
		 "NAME"},
		{"shard", 0, 0, G_OPTION_ARG_STRING, &shard_text,
		 "Run shard I of N (default: from SLURM_ARRAY_TASK_ID, JOB_COMPLETION_INDEX, "
		 "OMPI_COMM_WORLD_RANK or PMI_RANK; else 0/1)",
		 "I/N"},
		{"shards", 0, 0, G_OPTION_ARG_INT, &shards,
		 "The number of shards of a Kubernetes Indexed Job (JOB_COMPLETION_INDEX)", "N"},
		{"calibration", 0, 0, G_OPTION_ARG_FILENAME, &calibration,
		 "cudaMalloc/cudaFree timing by size (JSON; default: the built-in H200 table)",
		 "FILE"},
		G_OPTION_ENTRY_NULL,
	};
	int status = cca_cli_parse(
		cmd, entries,
		"Replays every snapshot of INPUTS (files, folders searched recursively, or\n"
		"manifests *.manifest / *.list: 'PATH [gpu=NAME] [cap=SIZE] [fraction=F]' a\n"
		"line) under a grid of settings on the job's own device, and appends one\n"
		"JSON line per (snapshot, setting) to DIR.  Shards split the snapshots by\n"
		"content hash; `ccasim fleet merge DIR` prints the report.",
		"The grid and limits are those of `ccasim sweep`.  A job's own device: the\n"
		"manifest's gpu= and cap= or fraction=, else --gpu and --memory-fraction,\n"
		"else what ccasim-record recorded, else --device-memory, else the H200.\n"
		"See doc/fleet.md.",
		&args, &argc, &argv);
	if (status >= 0)
		return status;
	if (argc < 2)
		return cca_cli_usage(cmd, "expected one or more INPUTS (see --help)");
	if (!out_dir)
		return cca_cli_usage(cmd, "--out DIR is required");
	if (!cca_cli_check_int(cmd->name, "--shards", shards, 0, G_MAXINT))
		return 2;
	g_autoptr(GError) error = NULL;
	guint index = 0, count = 1;
	const char *source = "--shard";
	if (shard_text) {
		if (!cca_fleet_shard_parse(shard_text, &index, &count, &error)) {
			cca_cli_print_error(cmd->name, error);
			return 2;
		}
	} else if (!cca_fleet_shard_from_env(NULL, (guint)shards, &index, &count, &source,
					     &error)) {
		cca_cli_print_error(cmd->name, error);
		return 2;
	}
	g_autoptr(CcaCalibrationTable) cal = calibration ? cca_calibration_load(calibration, &error)
							 : cca_calibration_new_h200();
	if (!cal) {
		fprintf(stderr, "ccasim %s: --calibration: %s\n", cmd->name, error->message);
		return 1;
	}
	CcaFleetOptions opt = {
		.configs = (const char *const *)args.configs,
		.sets = (const char *const *)sets,
		.default_grid = default_grid || (!args.configs && !sets),
		.pytorch_version = args.pytorch_version,
		.gpu = gpu,
		.memory_fraction = args.memory_fraction,
		.device_memory = args.device_memory,
		.calibration = cal,
	};
	if (!cca_fleet_options_check(&opt, &error)) {
		cca_cli_print_error(cmd->name, error);
		return 2;
	}
	g_autoptr(GPtrArray) jobs =
		g_ptr_array_new_with_free_func((GDestroyNotify)cca_fleet_job_free);
	if (!cca_fleet_inputs((const char *const *)argv + 1, (guint)argc - 1, jobs, &error)) {
		cca_cli_print_error(cmd->name, error);
		return 1;
	}
	CcaCliProgress progress = {.command = "fleet run"};
	gboolean show = !args.no_progress && isatty(STDERR_FILENO);
	gint64 t0 = g_get_monotonic_time();
	CcaFleetStats stats;
	gboolean ok = cca_fleet_run(jobs, &opt, out_dir, index, count, (guint)args.jobs,
				    show ? cca_cli_progress : NULL, &progress, &stats, &error);
	cca_cli_progress_end(&progress);
	print_skipped(cmd->name, &stats.bad_rows);
	cca_fleet_stats_clear(&stats);
	if (!ok) {
		cca_cli_print_error(cmd->name, error);
		return 1;
	}
	double s = (double)(g_get_monotonic_time() - t0) / 1e6;
	fprintf(stderr,
		"ccasim %s: shard %u/%u (%s): %u of %u snapshots here, %u complete already; "
		"%" G_GUINT64_FORMAT " rows written (%u error rows) in %.2f s\n",
		cmd->name, index, count, source, stats.jobs, jobs->len, stats.skipped, stats.rows,
		stats.errors, s);
	return 0;
}

static int
fleet_merge(const CcaCliCommand *cmd, int argc, char **argv)
{
	g_auto(CcaCliArgs) args = {0};
	gboolean csv = FALSE, wide = FALSE, allow_missing = FALSE;
	GOptionEntry entries[] = {
		{"csv", 0, 0, G_OPTION_ARG_NONE, &csv, "Print the settings table as CSV", NULL},
		{"allow-missing", 0, 0, G_OPTION_ARG_NONE, &allow_missing,
		 "Report even when shards left no rows file (named on stderr and in the report); "
		 "without it merge exits 1",
		 NULL},
		{"wide", 'w', 0, G_OPTION_ARG_NONE, &wide,
		 "Print whole paths and settings (lines may exceed 100 columns)", NULL},
		G_OPTION_ENTRY_NULL,
	};
	int status = cca_cli_parse(
		cmd, entries,
		"Merges the rows of `ccasim fleet run` folders (any number of shards, each\n"
		"row once) into one report: what to set fleet-wide and what it saves, the\n"
		"settings best first, the jobs no setting saves with the smallest card that\n"
		"would, and the best setting per job.  The report depends only on the rows,\n"
		"not on how they were sharded.",
		"See doc/fleet.md.", &args, &argc, &argv);
	if (status >= 0)
		return status;
	if (argc < 2)
		return cca_cli_usage(cmd, "expected one or more run folders DIR (see --help)");
	if (args.json && csv)
		return cca_cli_usage(cmd, "--json and --csv exclude each other");
	g_autoptr(CcaFleetMerge) merge = cca_fleet_merge_new();
	g_autoptr(GError) error = NULL;
	for (int i = 1; i < argc; i++)
		if (!cca_fleet_merge_add_dir(merge, argv[i], &error)) {
			cca_cli_print_error(cmd->name, error);
			return 1;
		}
	print_skipped(cmd->name, cca_fleet_merge_skipped(merge));
	if (!cca_fleet_merge_check(merge, &error)) {
		cca_cli_print_error(cmd->name, error);
		return 1;
	}
	/* a shard that never ran: its jobs would be missing from the report */
	g_autoptr(GPtrArray) missing = cca_fleet_merge_missing(merge);
	if (missing->len) {
		g_autoptr(GString) list = g_string_new(NULL);
		for (guint i = 0; i < missing->len; i++)
			g_string_append_printf(list, "%s%s", i ? ", " : "",
					       (const char *)g_ptr_array_index(missing, i));
		/* "2/3" is rows.2-of-3.jsonl */
		g_auto(GStrv) first = g_strsplit(g_ptr_array_index(missing, 0), "/", 2);
		g_autofree char *file = missing->len == 1 ? g_strdup_printf("rows.%s-of-%s.jsonl",
									    first[0], first[1])
							  : g_strdup("rows files of theirs");
		g_autofree char *shown = cca_text_display(list->str, -1, CCA_CLI_MESSAGE_MAX);
		fprintf(stderr,
			"ccasim %s: %s: missing shard%s %s: no %s in the folders given; %s\n",
			cmd->name, allow_missing ? "warning" : "error",
			missing->len == 1 ? "" : "s", shown, file,
			allow_missing ? "the report leaves out their jobs"
				      : "run them, or merge anyway with --allow-missing");
		if (!allow_missing)
			return 1;
	}
	g_autoptr(GString) out = g_string_new(NULL);
	if (args.json)
		cca_fleet_merge_print_json(merge, out);
	else if (csv)
		cca_fleet_merge_print_csv(merge, out);
	else
		cca_fleet_merge_print_text(merge, out, wide ? G_MAXUINT : CCA_TEXT_COLUMNS);
	fputs(out->str, stdout);
	return 0;
}

/* `ccasim fleet`'s commands (see cli.h). */
static const CcaCliCommand fleet_commands[] = {
	{"fleet run", fleet_run, "replay many snapshots under a grid, one JSON line a row",
	 "INPUTS... --out DIR",
	 CCA_CLI_INPUT | CCA_CLI_LIMITS | CCA_CLI_CONFIGS | CCA_CLI_VERSION | CCA_CLI_JOBS,
	 "Add a row with these settings (PYTORCH_CUDA_ALLOC_CONF syntax; repeatable)"},
	{"fleet merge", fleet_merge, "merge run folders into one report", "DIR...", CCA_CLI_JSON,
	 NULL},
};

static void
fleet_usage(FILE *out)
{
	fprintf(out, "Usage: ccasim fleet COMMAND [OPTION...]\n\n"
		     "Replays a fleet of snapshots under a grid of settings, sharded over Slurm\n"
		     "arrays, Kubernetes Indexed Jobs or MPI (doc/fleet.md).\n\n"
		     "Commands:\n");
	for (size_t i = 0; i < G_N_ELEMENTS(fleet_commands); i++) {
		const CcaCliCommand *c = &fleet_commands[i];
		g_autofree char *usage =
			g_strdup_printf("%s %s", c->name + strlen("fleet "), c->params);
		fprintf(out, "  %-26s %s\n", usage, c->summary);
	}
}

int
cca_cmd_fleet(const CcaCliCommand *cmd, int argc, char **argv)
{
	(void)cmd;
	if (argc < 2) {
		fleet_usage(stderr);
		return 2;
	}
	const char *sub = argv[1];
	if (strcmp(sub, "--help") == 0 || strcmp(sub, "-h") == 0 || strcmp(sub, "help") == 0) {
		fleet_usage(stdout);
		return 0;
	}
	return cca_cli_dispatch(fleet_commands, G_N_ELEMENTS(fleet_commands), "ccasim fleet",
				argc - 1, argv + 1);
}
