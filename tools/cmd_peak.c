/* cmd_peak.c - `ccasim peak TRACE`: option parsing and output only. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "figures.h"
#include "rules.h"
#include "json.h"
#include "outfile.h"
#include "peak.h"
#include "report.h"
#include "text.h"
#include "timing.h"

/* Replays R and bounds its figures into TIMING as replay does
 * (timing.h). */
static gboolean
peak_run(const CcaSnapshot *snap, const CcaReplayOptions *opt, CcaPeakRun *r, CcaTiming *timing)
{
	g_autoptr(GError) error = NULL;
	/* its decisions by address counted in its one replay, as replay's */
	CcaReplayOptions o = *opt;
	o.count_address_ties = true;
	if (!cca_peak_run_collect(r, snap, &o, &error) ||
	    !cca_timing_bound(snap, &o, &r->result, timing, &error)) {
		cca_cli_print_error("peak", error);
		return FALSE;
	}
	return r->peak != NULL;
}

static void
peak_run_text(GString *out, const char *trace, int device, const CcaPeakRun *r,
	      const CcaTiming *timing, guint top)
{
	g_autofree char *shown = cca_text_path(trace);
	g_string_append_printf(
		out, "%s, device %d: %" G_GUINT64_FORMAT " events, %s%s%s%s\n", shown, device,
		r->result.events, r->label, cca_timing_why(timing) ? ", bounded by " : "",
		cca_timing_why(timing) ? cca_timing_why(timing) : "",
		cca_rules_for(r->pytorch_version)->unvalidated
			? ", unvalidated rules (modelled from source, doc/versions.md)"
			: "");
	if (r->result.start_reconstructed)
		cca_text_wrap(out, cca_report_window_peaks(), CCA_TEXT_COLUMNS, 2);
	cca_figures_append_text(out, &r->result.figures, &r->result.stats, "  ");
	cca_timing_describe_headline(timing, true, out);
	cca_peak_append_text(out, r->peak, top);
}

int
cca_cmd_peak(const CcaCliCommand *cmd, int argc, char **argv)
{
	g_auto(CcaCliArgs) args = {0};
	int top = 10;
	g_autofree char *under = NULL, *folded = NULL, *moment = NULL;
	gboolean wide = FALSE;
	GOptionEntry entries[] = {
		{"wide", 'w', 0, G_OPTION_ARG_NONE, &wide,
		 "Whole lines (default: wrapped to COLUMNS, or to the terminal's width)", NULL},
		{"under", 'u', 0, G_OPTION_ARG_STRING, &under,
		 "Also replay under these settings (PYTORCH_CUDA_ALLOC_CONF syntax) and show what "
		 "changes",
		 "SETTINGS"},
		{"top", 'n', 0, G_OPTION_ARG_INT, &top, "Rows of each list (default 10)", "N"},
		{"folded", 0, 0, G_OPTION_ARG_FILENAME, &folded,
		 "Write the live blocks of --moment as folded stacks (flamegraph.pl, speedscope) to "
		 "FILE ('-': standard output)",
		 "FILE"},
		{"moment", 0, 0, G_OPTION_ARG_STRING, &moment,
		 "The moment --folded writes: reserved (default), allocated or oom (the first)",
		 "WHICH"},
		{"no-bounds", 0, 0, G_OPTION_ARG_NONE, &args.no_bounds,
		 "A what-if's figures under the recorded completions and the driver's placement "
		 "alone, without replaying the others for their bounds (faster; replay --no-bounds)",
		 NULL},
		G_OPTION_ENTRY_NULL,
	};
	int status = cca_cli_parse(
		cmd, entries,
		"What made the peak: at the reserved peak, the allocated peak and every OOM, the\n"
		"live blocks grouped by call stack, by the record_function annotations open when\n"
		"each was allocated and by user metadata, largest first (each grouping sums to\n"
		"the bytes allocated then); the free bytes stranded in each segment (for an OOM,\n"
		"why they could not serve the request); the request that made each segment.",
		"The peak moments and counts are those of `ccasim replay` (doc/figures.md).", &args,
		&argc, &argv);
	if (status >= 0)
		return status;
	if (argc != 2)
		return cca_cli_usage(cmd, "expected one TRACE (see --help)");
	if (!cca_cli_check_int("peak", "--top", top, 1, G_MAXINT))
		return 2;
	CcaPeakKind kind = CCA_PEAK_RESERVED;
	if (moment && strcmp(moment, "allocated") == 0)
		kind = CCA_PEAK_ALLOCATED;
	else if (moment && strcmp(moment, "oom") == 0)
		kind = CCA_PEAK_OOM;
	else if (moment && strcmp(moment, "reserved") != 0)
		return cca_cli_usage(cmd, "--moment: reserved, allocated or oom, got '%s'", moment);
	if (moment && !folded)
		return cca_cli_usage(cmd, "--moment is for --folded");
	CcaReplayOptions opt;
	g_autoptr(CcaSnapshot) snap = cca_cli_load(&args, "peak", argv[1], &opt, &status);
	if (!snap)
		return status;
	if (args.n_settings)
		opt.settings = &args.settings[0];
	g_auto(CcaSettings) under_settings;
	cca_settings_init(&under_settings);
	if (under) {
		g_autoptr(GError) error = NULL;
		under_settings.pytorch_version = opt.pytorch_version;
		if (!cca_settings_parse_exact(&under_settings, under, &error)) {
			fprintf(stderr, "ccasim peak: --under '%s': %s\n", under, error->message);
			return 2;
		}
	}
	CcaPeakRun a = {0}, b = {0};
	CcaTiming ta = {0}, tb = {0};
	int rc = 1;
	if (!peak_run(snap, &opt, &a, &ta))
		goto out;
	if (under) {
		CcaReplayOptions ob = opt;
		ob.settings = &under_settings;
		if (!peak_run(snap, &ob, &b, &tb))
			goto out;
	}
	const CcaPeakRun *shown = under ? &b : &a;
	if (folded) {
		g_autoptr(GString) f = g_string_new(NULL);
		if (!cca_peak_append_folded(f, shown->peak, kind)) {
			fprintf(stderr, "ccasim peak: no %s in this replay\n",
				kind == CCA_PEAK_OOM ? "OOM" : "peak");
			goto out;
		}
		g_autoptr(GError) error = NULL;
		char *tmp = NULL;
		FILE *fp = cca_outfile_open(folded, &tmp, &error);
		if (!fp || !cca_outfile_close(fp, tmp, folded,
					      fwrite(f->str, 1, f->len, fp) == f->len, &error)) {
			cca_cli_print_error("peak", error);
			goto out;
		}
		if (strcmp(folded, "-") == 0) {
			rc = 0;
			goto out;
		}
	}
	if (args.json) {
		json_t *o = cca_peak_run_to_json(argv[1], opt.device, &a, under ? &b : NULL);
		cca_timing_add_run_json(&ta, under ? json_object_get(o, "a") : o);
		if (under)
			cca_timing_add_run_json(&tb, json_object_get(o, "b"));
		cca_json_print(stdout, o);
	} else {
		g_autoptr(GString) out = g_string_new(NULL);
		if (under) {
			g_string_append(out, "A: ");
			peak_run_text(out, argv[1], opt.device, &a, &ta, top);
			g_string_append(out, "\nB: ");
			peak_run_text(out, argv[1], opt.device, &b, &tb, top);
			cca_peak_append_changes(out, a.peak, b.peak, top);
		} else {
			peak_run_text(out, argv[1], opt.device, &a, &ta, top);
		}
		g_autoptr(GString) fitted = g_string_new(NULL);
		cca_text_fit(fitted, out->str, cca_text_fit_width(wide));
		fputs(fitted->str, stdout);
	}
	rc = 0;
out:
	cca_peak_run_clear(&a);
	cca_peak_run_clear(&b);
	cca_timing_clear(&ta);
	cca_timing_clear(&tb);
	return rc;
}
