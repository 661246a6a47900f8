/* cmd_view.c - `ccasim view TRACE -o PAGE.html`: replays the recorded run
 * and every --config what-if and has sim/view/htmlview.c write one
 * offline page of them: the command's options and output only. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "peak.h"
#include "htmlview.h"
#include "report.h"
#include "size.h"
#include "text.h"

/* The most runs a page draws (the recording and its what-ifs). */
#define VIEW_MAX_RUNS 8

static const char *
base_name(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

int
cca_cmd_view(const CcaCliCommand *cmd, int argc, char **argv)
{
	g_auto(CcaCliArgs) va = {0};
	g_autofree char *output = NULL, *peak_path = NULL, *title = NULL;
	GOptionEntry entries[] = {
		{"output", 'o', 0, G_OPTION_ARG_FILENAME, &output,
		 "The page to write (.html; required)", "FILE"},
		{"peak", 0, 0, G_OPTION_ARG_FILENAME, &peak_path,
		 "Show this peak attribution (a JSON object, `ccasim peak --json`; default: the "
		 "recorded run's, computed here)",
		 "FILE"},
		{"title", 0, 0, G_OPTION_ARG_STRING, &title, "Title instead of the default",
		 "TEXT"},
		G_OPTION_ENTRY_NULL,
	};
	int status = cca_cli_parse(
		cmd, entries,
		"Writes one self-contained HTML page (no network) of the recorded run and\n"
		"every --config what-if: memory over the trace (zoom and pan, exact at\n"
		"any zoom), the allocation under the mouse (size, stream, stack,\n"
		"annotation), the segment map at any event and the peak attribution.",
		NULL, &va, &argc, &argv);
	if (status >= 0)
		return status;
	if (argc != 2 || !output)
		return cca_cli_usage(cmd, "expected one TRACE and -o FILE (see --help)");
	if (va.n_settings + 1 > VIEW_MAX_RUNS)
		return cca_cli_usage(cmd, "at most %d --config what-ifs", VIEW_MAX_RUNS - 1);
	g_autofree char *peak_json = NULL;
	if (peak_path) {
		GError *error = NULL;
		if (!g_file_get_contents(peak_path, &peak_json, NULL, &error)) {
			cca_cli_print_error("view", error);
			g_error_free(error);
			return 1;
		}
	}
	CcaReplayOptions opt;
	g_autoptr(CcaSnapshot) snap = cca_cli_load(&va, "view", argv[1], &opt, &status);
	if (!snap)
		return status;
	if (!peak_json) {
		/* the peak attribution of the recorded run (one replay of its own;
		 * the page's replays do not keep the live blocks' origins) */
		CcaReplayResult pres;
		GError *perr = NULL;
		g_autoptr(CcaPeak) peak = cca_peak_collect(snap, &opt, &pres, &perr);
		if (!peak) {
			cca_cli_print_error("view", perr);
			g_error_free(perr);
			return 1;
		}
		json_t *o = cca_peak_to_json(peak, &pres.stats);
		peak_json = json_dumps(o, JSON_COMPACT);
		json_decref(o);
		cca_replay_result_clear(&pres);
	}
	guint n_runs = 1 + va.n_settings;
	CcaHtmlviewRun runs[VIEW_MAX_RUNS];
	char *labels[VIEW_MAX_RUNS] = {0};
	for (guint r = 0; r < n_runs; r++) {
		if (r > 0) {
			g_autofree char *conf =
				cca_text_display(va.configs[r - 1], -1, CCA_TEXT_DISPLAY_MAX);
			labels[r] = g_strdup_printf("what-if %s", conf);
		} else if (snap->settings.present && snap->settings.conf && *snap->settings.conf) {
			g_autofree char *conf =
				cca_text_display(snap->settings.conf, -1, CCA_TEXT_DISPLAY_MAX);
			labels[r] = g_strdup_printf("recorded %s", conf);
		} else {
			labels[r] = g_strdup("recorded (defaults)");
		}
		runs[r].label = labels[r];
		runs[r].settings = r ? &va.settings[r - 1] : NULL;
	}
	g_autofree char *page_title =
		title ? cca_text_display(title, -1, CCA_TEXT_DISPLAY_MAX)
		      : g_strdup_printf("%s: memory (device %d)", base_name(argv[1]), opt.device);
	CcaHtmlviewResult res;
	GError *error = NULL;
	if (!cca_htmlview_write(snap, &opt, runs, n_runs, page_title, peak_json, output, &res,
				&error)) {
		cca_cli_print_error("view", error);
		g_error_free(error);
		status = 1;
	} else {
		char a[32], b[32];
		g_autofree char *shown = cca_text_path(output);
		printf("%s: %" G_GUINT64_FORMAT " events, %u run%s, %" G_GUINT64_FORMAT
		       " model events; page %s (data %s)",
		       shown, res.n_events, n_runs, n_runs == 1 ? "" : "s", res.log_records,
		       cca_size_format(res.page_bytes, a), cca_size_format(res.data_bytes, b));
		for (guint r = 0; r < n_runs && r < G_N_ELEMENTS(res.peak_reserved); r++)
			printf("%s %s peak reserved %s", r ? ";" : ",", labels[r],
			       cca_size_format(res.peak_reserved[r], a));
		printf("\n");
		status = 0;
	}
	for (guint r = 0; r < n_runs; r++)
		g_free(labels[r]);
	return status;
}
