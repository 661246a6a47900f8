/* cmd_view.c - `ccasim view TRACE -o PAGE.html`: replays the recorded run
 * and every --config what-if and has sim/view/htmlview.c write one
 * offline page of them; `ccasim view RANK0 RANK1 ... -o PAGE.html` one
 * page of several snapshots (the ranks of one job), a row each: the
 * command's options and output only. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "peak.h"
#include "htmlview.h"
#include "report.h"
#include "rules.h"
#include "size.h"
#include "text.h"
#include "timing.h"

/* The most runs a page of one trace draws (the recording and its
 * what-ifs), and the most snapshots of a page of ranks. */
#define VIEW_MAX_RUNS 8
#define VIEW_MAX_RANKS CCA_HTMLVIEW_MAX_RUNS

static const char *
base_name(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

/* The recorded run's peak attribution as compact JSON (one replay of its
 * own: the page's replays do not keep the live blocks' origins); NULL
 * after printing the error. */
static char *
peak_of(const CcaSnapshot *snap, const CcaReplayOptions *opt)
{
	CcaReplayResult pres;
	GError *perr = NULL;
	g_autoptr(CcaPeak) peak = cca_peak_collect(snap, opt, &pres, &perr);
	if (!peak) {
		cca_cli_print_error("view", perr);
		g_error_free(perr);
		return NULL;
	}
	json_t *o = cca_peak_to_json(peak, &pres.stats);
	char *text = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	cca_replay_result_clear(&pres);
	return text;
}

/* Bounds run RUN of SNAP (OPT with RUN's settings) as replay does
 * (timing.h): RUN->extra gets its "certainty", "bounds" and
 * "bounds_timings" (a new object, the caller's); a what-if with bounds
 * gets *NOTE (", bounded by WHY: RANGES", the caller's) and RUN->label
 * LABEL with it (*PAGE_LABEL, the caller's).  FALSE after printing the
 * error. */
static gboolean
run_bounds(const CcaSnapshot *snap, const CcaReplayOptions *opt, CcaHtmlviewRun *run,
	   const char *label, char **note, char **page_label)
{
	CcaReplayOptions o = run->opt ? *run->opt : *opt;
	if (run->settings)
		o.settings = run->settings;
	CcaTiming timing = {0};
	GError *error = NULL;
	if (!cca_timing_bound(run->snap ? run->snap : snap, &o, NULL, &timing, &error)) {
		cca_cli_print_error("view", error);
		g_error_free(error);
		cca_timing_clear(&timing);
		return FALSE;
	}
	run->extra = json_object();
	cca_timing_add_run_json(&timing, run->extra);
	if (timing.whatif && g_str_has_prefix(label, "recorded")) {
		/* the recorded settings under another cap, device or release:
		 * a what-if all the same */
		*page_label = g_strconcat("what-if: ", label, NULL);
		label = *page_label;
		run->label = *page_label;
	}
	if (cca_timing_why(&timing)) {
		GString *n = g_string_new(NULL);
		g_string_append_printf(n, ", bounded by %s: ", cca_timing_why(&timing));
		cca_timing_append_headline_ranges(&timing, n);
		*note = g_string_free(n, FALSE);
		char *was = *page_label; /* LABEL may be it */
		*page_label = g_strconcat(label, *note, NULL);
		g_free(was);
		run->label = *page_label;
	}
	cca_timing_clear(&timing);
	return TRUE;
}

/* The summary's LABEL of a run that run_bounds() found a what-if under the
 * recorded settings (its PAGE_LABEL says so): prefixed as the page's. */
static void
summary_label(char **label, const char *page_label)
{
	if (page_label && g_str_has_prefix(page_label, "what-if: ") &&
	    !g_str_has_prefix(*label, "what-if: ")) {
		char *l = g_strconcat("what-if: ", *label, NULL);
		g_free(*label);
		*label = l;
	}
}

/* Writes the page and prints its one-line summary; the exit status. */
static int
view_write(const CcaSnapshot *snap, const CcaReplayOptions *opt, const CcaHtmlviewRun *runs,
	   guint n_runs, const char *page_title, const char *peak_json, const char *output,
	   char *const *labels, char *const *notes)
{
	CcaHtmlviewResult res;
	GError *error = NULL;
	if (!cca_htmlview_write(snap, opt, runs, n_runs, page_title, peak_json, output, &res,
				&error)) {
		cca_cli_print_error("view", error);
		g_error_free(error);
		return 1;
	}
	char a[32], b[32];
	g_autofree char *shown = cca_text_path(output);
	printf("%s: %" G_GUINT64_FORMAT " events, %u run%s, %" G_GUINT64_FORMAT
	       " model events; page %s (data %s)",
	       shown, res.n_events, n_runs, n_runs == 1 ? "" : "s", res.log_records,
	       cca_size_format(res.page_bytes, a), cca_size_format(res.data_bytes, b));
	for (guint r = 0; r < n_runs && r < G_N_ELEMENTS(res.peak_reserved); r++)
		printf("%s %s peak reserved %s%s", r ? ";" : ",", labels[r],
		       cca_size_format(res.peak_reserved[r], a), notes[r] ? notes[r] : "");
	printf("\n");
	return 0;
}

/* A page of N snapshots PATHS (the ranks of one job): each rank's recorded
 * run, a row each; the peak attribution is the first rank's. */
static int
view_ranks(CcaCliArgs *va, char **paths, guint n, const char *output, const char *title,
	   const char *peak_json)
{
	CcaSnapshot *snaps[VIEW_MAX_RANKS] = {0};
	CcaReplayOptions opts[VIEW_MAX_RANKS];
	CcaHtmlviewRun runs[VIEW_MAX_RANKS] = {{0}};
	char *labels[VIEW_MAX_RANKS] = {0};
	char *notes[VIEW_MAX_RANKS] = {0}, *page_labels[VIEW_MAX_RANKS] = {0};
	g_autofree char *peak = peak_json ? g_strdup(peak_json) : NULL;
	int status = 0;
	for (guint i = 0; i < n && status == 0; i++) {
		/* cca_cli_load() makes the (empty) what-if table anew each time */
		g_clear_pointer(&va->settings, g_free);
		snaps[i] = cca_cli_load(va, "view", paths[i], &opts[i], &status);
		if (!snaps[i])
			break;
		labels[i] = g_strdup_printf("rank %u: %s", i, base_name(paths[i]));
		runs[i].label = labels[i];
		runs[i].snap = snaps[i];
		runs[i].opt = &opts[i];
		if (!run_bounds(snaps[i], &opts[i], &runs[i], labels[i], &notes[i],
				&page_labels[i]))
			status = 1;
		summary_label(&labels[i], page_labels[i]);
	}
	if (status == 0 && !peak && !(peak = peak_of(snaps[0], &opts[0])))
		status = 1;
	if (status == 0) {
		g_autofree char *page_title =
			title ? cca_text_display(title, -1, CCA_TEXT_DISPLAY_MAX)
			      : g_strdup_printf("%u ranks: memory (device %d)", n, opts[0].device);
		status = view_write(snaps[0], &opts[0], runs, n, page_title, peak, output, labels,
				    notes);
	}
	for (guint i = 0; i < n; i++) {
		if (snaps[i])
			cca_snapshot_free(snaps[i]);
		g_free(labels[i]);
		g_free(notes[i]);
		g_free(page_labels[i]);
		if (runs[i].extra)
			json_decref(runs[i].extra);
	}
	return status;
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
		{"no-bounds", 0, 0, G_OPTION_ARG_NONE, &va.no_bounds,
		 "A what-if's figures under the recorded completions and the driver's placement "
		 "alone, without replaying the others for their bounds (faster; replay --no-bounds)",
		 NULL},
		G_OPTION_ENTRY_NULL,
	};
	int status = cca_cli_parse(
		cmd, entries,
		"Writes one self-contained HTML page (no network) of the recorded run and\n"
		"every --config what-if: memory over the trace (zoom and pan, exact at\n"
		"any zoom), every allocation as a band (size, stack, annotation,\n"
		"category), segments over time, the segment map and a flame graph at\n"
		"any event, a search over the allocations and the peak attribution\n"
		"(doc/view.md).\n"
		"With several TRACEs (the ranks of one job) the page has a row per rank\n"
		"on a shared axis, each rank's peaks, the rank that peaks and its skew.",
		NULL, &va, &argc, &argv);
	if (status >= 0)
		return status;
	if (argc < 2 || !output)
		return cca_cli_usage(cmd, "expected TRACE... and -o FILE (see --help)");
	guint n_traces = (guint)argc - 1;
	if (n_traces > VIEW_MAX_RANKS)
		return cca_cli_usage(cmd, "at most %d TRACEs in one page", VIEW_MAX_RANKS);
	if (n_traces > 1 && va.n_configs)
		return cca_cli_usage(cmd, "--config what-ifs take one TRACE (a page of ranks "
					  "draws the recorded runs)");
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
	if (n_traces > 1)
		return view_ranks(&va, argv + 1, n_traces, output, title, peak_json);
	CcaReplayOptions opt;
	g_autoptr(CcaSnapshot) snap = cca_cli_load(&va, "view", argv[1], &opt, &status);
	if (!snap)
		return status;
	if (!peak_json) {
		peak_json = peak_of(snap, &opt);
		if (!peak_json)
			return 1;
	}
	status = 0;
	guint n_runs = 1 + va.n_settings;
	CcaHtmlviewRun runs[VIEW_MAX_RUNS] = {{0}};
	char *labels[VIEW_MAX_RUNS] = {0};
	char *notes[VIEW_MAX_RUNS] = {0}, *page_labels[VIEW_MAX_RUNS] = {0};
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
		if (cca_rules_for(opt.pytorch_version)->unvalidated) {
			/* a release whose rules are modelled from source says so
			 * in the page, as replay does in its text */
			char *l = g_strdup_printf("%s, PyTorch %u.%u rules (unvalidated)",
						  labels[r], opt.pytorch_version / 100,
						  opt.pytorch_version % 100);
			g_free(labels[r]);
			labels[r] = l;
		}
		runs[r].label = labels[r];
		runs[r].settings = r ? &va.settings[r - 1] : NULL;
		if (status == 0 &&
		    !run_bounds(snap, &opt, &runs[r], labels[r], &notes[r], &page_labels[r]))
			status = 1;
		summary_label(&labels[r], page_labels[r]);
	}
	g_autofree char *page_title =
		title ? cca_text_display(title, -1, CCA_TEXT_DISPLAY_MAX)
		      : g_strdup_printf("%s: memory (device %d)", base_name(argv[1]), opt.device);
	if (status == 0)
		status = view_write(snap, &opt, runs, n_runs, page_title, peak_json, output, labels,
				    notes);
	for (guint r = 0; r < n_runs; r++) {
		g_free(labels[r]);
		g_free(notes[r]);
		g_free(page_labels[r]);
		if (runs[r].extra)
			json_decref(runs[r].extra);
	}
	return status;
}
