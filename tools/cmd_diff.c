/* cmd_diff.c - `ccasim diff`: option parsing and output only. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "diff.h"
#include "replay.h"
#include "settings.h"
#include "snapshot.h"
#include "snapshot_load.h"
#include "text.h"

/* One side: its trace, settings and label. */
typedef struct {
	CcaSnapshot *snap; /* owned or shared (see owns_snap) */
	bool owns_snap;
	CcaSettings settings;
	bool has_settings; /* --config given for this side */
	char *label;
	CcaReplayOptions opt;
} Side;

static void
side_clear(Side *s)
{
	if (s->owns_snap)
		cca_snapshot_free(s->snap);
	cca_settings_clear(&s->settings);
	g_free(s->label);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(Side, side_clear)
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(CcaDiff, cca_diff_clear)

/* Parses CONF for side S; prints the usage error and returns FALSE. */
static gboolean
side_settings(Side *s, const char *conf, uint32_t version)
{
	GError *error = NULL;
	cca_settings_init(&s->settings);
	s->settings.pytorch_version = version;
	if (!cca_settings_parse_exact(&s->settings, conf, &error)) {
		fprintf(stderr, "ccasim diff: --config %s: %s\n", conf, error->message);
		g_error_free(error);
		return FALSE;
	}
	s->has_settings = true;
	return TRUE;
}

int
cca_cmd_diff(const CcaCliCommand *cmd, int argc, char **argv)
{
	g_auto(CcaCliArgs) args = {0};
	int top = 10;
	g_auto(GStrv) fail_if = NULL;
	gboolean wide = FALSE;
	GOptionEntry entries[] = {
		{"wide", 'w', 0, G_OPTION_ARG_NONE, &wide,
		 "Whole lines (default: wrapped to COLUMNS, or to the terminal's width)", NULL},
		{"top", 'n', 0, G_OPTION_ARG_INT, &top,
		 "List this many segment and request sizes (default 10)", "N"},
		{"fail-if", 0, 0, G_OPTION_ARG_STRING_ARRAY, &fail_if,
		 "Exit 1 when a condition holds, e.g. peak_reserved>+5%, num_device_alloc>+10, "
		 "oom (repeatable; commas separate several)",
		 "EXPR"},
		G_OPTION_ENTRY_NULL,
	};
	int status = cca_cli_parse(
		cmd, entries,
		"Replays one trace under two settings (--config A --config B), or two\n"
		"traces, side by side: the first event after which their reserved memory\n"
		"differs, and where the difference in the peak comes from (segments by\n"
		"size, live blocks by requested size).",
		"Two traces are first compared as programs: the share of allocation\n"
		"requests that match by size and stream, with a warning below 90 %.\n"
		"When both hold record_function annotations (ProfilerStep#N,\n"
		"Optimizer.step; not ccasim-record's), they are paired by name and the\n"
		"first pair where reserved memory differs is named.\n\n"
		"--fail-if makes diff a gate for CI: each condition is oom (B runs out of\n"
		"memory) or METRIC OP VALUE, OP one of > >= < <=, VALUE +N% or -N% (the\n"
		"change from A to B in percent of A), +N or -N (the change; sizes take\n"
		"units: +512M), or N (B's own value).  Metrics: peak_reserved,\n"
		"peak_allocated, peak_live, peak_free, peak_segments, final_reserved,\n"
		"num_device_alloc, num_device_free, num_alloc_retries, num_ooms,\n"
		"num_sync_all_streams.  Exit 1 when one holds, naming it on stderr.\n"
		"See doc/whatif.md.",
		&args, &argc, &argv);
	if (status >= 0)
		return status;
	if (argc != 2 && argc != 3)
		return cca_cli_usage(
			cmd, "expected TRACE --config A --config B, or two traces (see --help)");
	if (args.n_configs > 2)
		return cca_cli_usage(cmd, "at most two --config");
	if (argc == 2 && args.n_configs == 0)
		return cca_cli_usage(cmd,
				     "one trace needs --config (B's settings, or A's and B's)");
	if (!cca_cli_check_int("diff", "--top", top, 0, G_MAXINT))
		return 2;
	g_autoptr(GError) error = NULL;
	g_autoptr(GArray) conditions = g_array_new(FALSE, FALSE, sizeof(CcaDiffCondition));
	g_array_set_clear_func(conditions, (GDestroyNotify)cca_diff_condition_clear);
	for (char **f = fail_if; f && *f; f++)
		if (!cca_diff_conditions_parse(*f, conditions, &error)) {
			cca_cli_print_error("diff", error);
			return 2;
		}
	g_auto(Side) a = {0};
	g_auto(Side) b = {0};
	a.snap = cca_snapshot_load(argv[1], &error);
	a.owns_snap = true;
	if (a.snap && argc == 3) {
		b.snap = cca_snapshot_load(argv[2], &error);
		b.owns_snap = true;
	} else {
		b.snap = a.snap;
	}
	if (!a.snap || !b.snap) {
		cca_cli_print_error("diff", error);
		return 1;
	}
	uint32_t version = args.pytorch_version;
	uint32_t va = version ? version : cca_replay_guess_pytorch_version(a.snap);
	uint32_t vb = version ? version : cca_replay_guess_pytorch_version(b.snap);
	gboolean ok = TRUE;
	if (args.n_configs == 2)
		ok = side_settings(&a, args.configs[0], va) &&
		     side_settings(&b, args.configs[1], vb);
	else if (args.n_configs == 1 && argc == 3)
		ok = side_settings(&a, args.configs[0], va) &&
		     side_settings(&b, args.configs[0], vb);
	else if (args.n_configs == 1)
		ok = side_settings(&b, args.configs[0], vb);
	if (!ok)
		return 2;
	for (int s = 0; s < 2; s++) {
		Side *side = s ? &b : &a;
		if (!cca_cli_check_device("diff", side->snap, side->snap->source, args.device,
					  &status))
			return status;
		cca_replay_options_init(&side->opt);
		side->opt.settings = side->has_settings ? &side->settings : NULL;
		side->opt.memory_fraction = args.memory_fraction;
		side->opt.recorded_memory_fraction = args.recorded_memory_fraction;
		side->opt.device_memory = args.device_memory;
		side->opt.capacity_set = args.capacity_set;
		side->opt.address_model = args.address_model;
		side->opt.force_whatif = args.whatif;
		side->opt.device = args.device;
		side->opt.pytorch_version = s ? vb : va;
		g_autofree char *conf =
			side->has_settings ? cca_settings_to_string(&side->settings) : NULL;
		g_autofree char *trace = cca_text_path(argv[s && argc == 3 ? 2 : 1]);
		if (!conf)
			side->label = g_strdup_printf("%s, recorded settings", trace);
		else if (!*conf)
			side->label = g_strdup_printf("%s, PyTorch's defaults", trace);
		else
			side->label = g_strdup_printf("%s, \"%s\"", trace, conf);
	}
	g_auto(CcaDiff) diff = {0};
	if (!cca_diff_run(a.snap, &a.opt, b.snap, &b.opt, &diff, &error)) {
		cca_cli_print_error("diff", error);
		return 1;
	}
	g_autofree CcaDiffVerdict *verdicts = g_new0(CcaDiffVerdict, conditions->len + 1);
	gboolean failed = FALSE;
	for (guint i = 0; i < conditions->len; i++)
		failed |= cca_diff_condition_eval(&g_array_index(conditions, CcaDiffCondition, i),
						  &diff, &verdicts[i]);
	CcaDiffReport report = {
		.label_a = a.label,
		.label_b = b.label,
		.top = (guint)top,
		.conditions = (const CcaDiffCondition *)(void *)conditions->data,
		.verdicts = verdicts,
		.n_conditions = conditions->len,
	};
	g_autoptr(GString) out = g_string_new(NULL);
	if (args.json) {
		cca_diff_print_json(&diff, &report, out);
		g_string_append_c(out, '\n');
		fputs(out->str, stdout);
	} else {
		cca_diff_print_text(&diff, &report, out);
		g_autoptr(GString) fitted = g_string_new(NULL);
		cca_text_fit(fitted, out->str, cca_text_fit_width(wide));
		fputs(fitted->str, stdout);
	}
	/* the gate: one line on stderr per condition that holds */
	for (guint i = 0; i < conditions->len; i++)
		if (verdicts[i].holds) {
			g_autofree char *shown = cca_text_display(
				g_array_index(conditions, CcaDiffCondition, i).text, -1, 80);
			fprintf(stderr, "ccasim diff: --fail-if: %s holds\n", shown);
		}
	return failed ? 1 : 0;
}
