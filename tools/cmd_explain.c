/* cmd_explain.c - `ccasim explain TRACE`: option parsing and output only. */
#include "config.h"

#include <stdio.h>

#include "commands.h"
#include "lab.h"
#include "explain.h"
#include "report.h"
#include "rules.h"
#include "text.h"
#include "timing.h"

int
cca_cmd_explain(const CcaCliCommand *cmd, int argc, char **argv)
{
	g_auto(CcaCliArgs) args = {0};
	int limit = 20, top = 8;
	gint64 event = -1, line = -1; /* -1: not given */
	g_autofree char *event_text = NULL, *line_text = NULL;
	gboolean wide = FALSE;
	GOptionEntry entries[] = {
		{"wide", 'w', 0, G_OPTION_ARG_NONE, &wide,
		 "Whole lines (default: wrapped to COLUMNS, or to the terminal's width)", NULL},
		{"limit", 'n', 0, G_OPTION_ARG_INT, &limit,
		 "cudaMalloc calls and OOMs explained one by one (default 20; 0: all)", "N"},
		{"top", 0, 0, G_OPTION_ARG_INT, &top,
		 "Rows of each ranking at the reserved peak (default 8)", "N"},
		{"event", 'e', 0, G_OPTION_ARG_STRING, &event_text,
		 "Explain only this trace entry's request, stage by stage (free-block search, "
		 "garbage collection, cudaMalloc, oversize release, synchronize and release "
		 "all, retry, OOM)",
		 "N"},
		{"line", 0, 0, G_OPTION_ARG_STRING, &line_text,
		 "A lab: explain the first request that lab line N made (as --event)", "N"},
		{"no-bounds", 0, 0, G_OPTION_ARG_NONE, &args.no_bounds,
		 "A what-if's figures under the recorded completions and the driver's placement "
		 "alone, without replaying the others for their bounds (faster; replay --no-bounds)",
		 NULL},
		G_OPTION_ENTRY_NULL,
	};
	int status = cca_cli_parse(
		cmd, entries,
		"Explains a replay in plain language: why each cudaMalloc happened (no free\n"
		"block on the stream, too small, the max_split_size rules, rounding), why\n"
		"each retry and OOM happened, and which request sizes and call sites strand\n"
		"free memory at the reserved peak.",
		NULL, &args, &argc, &argv);
	if (status >= 0)
		return status;
	if (argc != 2)
		return cca_cli_usage(cmd, "expected one TRACE (see --help)");
	if (!cca_cli_check_int("explain", "--limit", limit, 0, G_MAXINT) ||
	    !cca_cli_check_int("explain", "--top", top, 1, G_MAXINT) ||
	    !cca_cli_parse_int("explain", "--event", event_text, 0, G_MAXINT64, &event) ||
	    !cca_cli_parse_int("explain", "--line", line_text, 1, G_MAXINT64, &line))
		return 2;
	if (event_text && line_text)
		return cca_cli_usage(cmd, "--event and --line name the same thing: give one");
	CcaReplayOptions opt;
	g_autoptr(CcaSnapshot) snap = cca_cli_load(&args, "explain", argv[1], &opt, &status);
	if (!snap)
		return status;
	if (args.n_settings)
		opt.settings = &args.settings[0];
	g_autofree char *label = cca_report_settings_label(snap, &opt);
	g_autofree char *trace = cca_text_path(argv[1]);
	g_autoptr(GString) out = g_string_new(NULL);
	g_string_append_printf(
		out, "%s, device %d: %" G_GUINT64_FORMAT " events, %s, PyTorch %u.%u rules%s\n",
		trace, opt.device, snap->n_events[opt.device], label, opt.pytorch_version / 100,
		opt.pytorch_version % 100,
		cca_rules_for(opt.pytorch_version)->unvalidated
			? " (unvalidated: modelled from source, doc/versions.md)"
			: "");
	if (line > 0) {
		g_autoptr(GError) error = NULL;
		uint64_t index = 0;
		if (!cca_lab_find_line(snap, opt.device, (uint64_t)line, true, &index, &error)) {
			fprintf(stderr, "ccasim explain: %s: --line: %s\n", trace, error->message);
			return 2;
		}
		event = (gint64)index;
	}
	if (event >= 0 && (uint64_t)event >= snap->n_events[opt.device]) {
		fprintf(stderr,
			"ccasim explain: --event: the trace has %" G_GUINT64_FORMAT
			" events on device %d, got %" G_GINT64_FORMAT "\n",
			snap->n_events[opt.device], opt.device, event);
		return 2;
	}
	CcaExplainParams params = {.limit = (guint)limit,
				   .top = (guint)top,
				   .one_event = event >= 0,
				   .event = event >= 0 ? (uint64_t)event : 0};
	g_autoptr(GError) error = NULL;
	/* a what-if's figures, bounded as replay bounds them (timing.h), from
	 * explain's own replay, which counts its decisions by address as
	 * replay's does */
	CcaReplayResult base = {0};
	params.result = &base;
	opt.count_address_ties = true;
	g_autoptr(GString) body = g_string_new(NULL);
	CcaTiming timing = {0};
	gboolean ok = cca_explain_run(snap, &opt, &params, body, &error) &&
		      cca_timing_bound(snap, &opt, &base, &timing, &error);
	if (ok) {
		cca_timing_describe_lead(&timing, out);
		g_string_append_len(out, body->str, (gssize)body->len);
		cca_timing_describe_headline(&timing, true, out);
	}
	cca_timing_clear(&timing);
	cca_replay_result_clear(&base);
	if (!ok) {
		cca_cli_print_error("explain", error);
		return 1;
	}
	g_autoptr(GString) fitted = g_string_new(NULL);
	cca_text_fit(fitted, out->str, cca_text_fit_width(wide));
	fputs(fitted->str, stdout);
	return 0;
}
