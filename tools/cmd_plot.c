/* cmd_plot.c - `ccasim plot TRACE -o FILE`: replays, collects timelines
 * or one state (sim/view/plot.c), and has them drawn there: the command's
 * options and output only. */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "figures.h"
#include "json.h"
#include "plot.h"
#include "report.h"
#include "rules.h"
#include "simdevice.h"
#include "size.h"
#include "text.h"
#include "timeline.h"
#include "timing.h"

/* Buckets per timeline: several per pixel of any sensible plot width. */
#define PLOT_BUCKETS 8192

typedef struct {
	char *output;
	char *x_axis;
	gboolean segments;
	char *at_text; /* --at, or NULL: the reserved peak */
	gint64 at;     /* --at parsed; -1: not given */
	int width, height, max_rows;
	char *title;
} PlotArgs;

static void
plot_args_clear(PlotArgs *pa)
{
	g_free(pa->output);
	g_free(pa->x_axis);
	g_free(pa->title);
	g_free(pa->at_text);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(PlotArgs, plot_args_clear)

typedef struct {
	const CcaPlotStyle *style;
	const CcaPlotRun *runs;
	guint n_runs;
	const CcaPlotSegments *segs;
} Drawing;

static void
draw_timeline(cairo_t *cr, void *data, GString *hover)
{
	const Drawing *d = data;
	cca_plot_draw_timeline(cr, d->style, d->runs, d->n_runs, hover);
}

static void
draw_segments(cairo_t *cr, void *data, GString *hover)
{
	const Drawing *d = data;
	cca_plot_draw_segments(cr, d->style, d->segs, hover);
}

static const char *
base_name(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

/* The title a plot shows: --title, else FORMAT filled in; either as a
 * display string (cca_text_display()), at most PLOT_TITLE_MAX bytes. */
#define PLOT_TITLE_MAX 1024
static char *G_GNUC_PRINTF(2, 3) plot_title(const PlotArgs *pa, const char *format, ...)
{
	if (pa->title)
		return cca_text_display(pa->title, -1, PLOT_TITLE_MAX);
	va_list ap;
	va_start(ap, format);
	g_autofree char *t = g_strdup_vprintf(format, ap);
	va_end(ap);
	return cca_text_display(t, -1, PLOT_TITLE_MAX);
}

static int
plot_timeline(const CcaSnapshot *snap, CcaReplayOptions *opt, const CcaCliArgs *va,
	      const PlotArgs *pa, CcaPlotFormat format, const char *trace)
{
	guint n_runs = 1 + va->n_settings;
	CcaTimeline *tls = g_new0(CcaTimeline, n_runs);
	CcaPlotRun *runs = g_new0(CcaPlotRun, n_runs);
	char **labels = g_new0(char *, n_runs + 1);
	/* the legend's figures of a what-if with bounds (NULL: the plot's) */
	char **legends = g_new0(char *, n_runs + 1);
	CcaTiming *timings = g_new0(CcaTiming, n_runs);
	GError *error = NULL;
	int status = 0;
	guint done = 0;
	/* each run's decisions by address counted in its one replay, for its
	 * bounds (timing.h), as replay's */
	opt->count_address_ties = true;
	for (guint r = 0; r < n_runs; r++) {
		opt->settings = r == 0 ? NULL : &va->settings[r - 1];
		if (!cca_timeline_collect(snap, opt, PLOT_BUCKETS, &tls[r], &error)) {
			cca_cli_print_error("plot", error);
			g_error_free(error);
			status = 1;
			break;
		}
		done++;
		if (!cca_timing_bound(snap, opt, &tls[r].result, &timings[r], &error)) {
			cca_cli_print_error("plot", error);
			g_error_free(error);
			status = 1;
			break;
		}
		if (r > 0) {
			g_autofree char *conf =
				cca_text_display(va->configs[r - 1], -1, CCA_TEXT_DISPLAY_MAX);
			labels[r] = g_strdup_printf("what-if %s", conf);
		} else if (snap->settings.present && snap->settings.conf && *snap->settings.conf) {
			g_autofree char *conf =
				cca_text_display(snap->settings.conf, -1, CCA_TEXT_DISPLAY_MAX);
			labels[r] = g_strdup_printf("recorded %s", conf);
		} else {
			labels[r] = g_strdup("recorded (defaults)");
		}
		if (r == 0 && timings[r].whatif) {
			/* the recorded settings under another cap, device or
			 * release: a what-if all the same */
			char *l = g_strconcat("what-if: ", labels[r], NULL);
			g_free(labels[r]);
			labels[r] = l;
		}
		if (cca_timing_why(&timings[r])) {
			/* the legend's figures: replay's ranges (timing.h) */
			g_autofree char *peak = cca_timing_format_bytes(
				&timings[r], "reserved_bytes.all.peak", tls[r].peak_reserved);
			const CcaTimingBound *oom = cca_timing_lookup(&timings[r], "num_ooms");
			g_autofree char *ooms =
				oom ? g_strdup_printf("%" G_GINT64_FORMAT " .. %" G_GINT64_FORMAT,
						      oom->lo, oom->hi)
				    : g_strdup_printf("%" G_GUINT64_FORMAT, tls[r].n_ooms);
			legends[r] =
				g_strdup_printf("peak reserved %s (bounded), %s OOMs", peak, ooms);
		}
		runs[r].label = labels[r];
		runs[r].figures = legends[r];
		runs[r].tl = &tls[r];
	}
	opt->settings = NULL;
	if (status == 0) {
		bool x_time = pa->x_axis && strcmp(pa->x_axis, "time") == 0;
		if (x_time && !tls[0].has_time) {
			g_autofree char *shown = cca_text_path(trace);
			fprintf(stderr, "ccasim plot: %s has no time_us: plotting against events\n",
				shown);
			x_time = false;
		}
		g_autofree char *label = cca_report_settings_label(snap, opt);
		g_autofree char *title =
			plot_title(pa, "%s: reserved, allocated and active memory (device %d)",
				   base_name(trace), opt->device);
		GString *sub = g_string_new(NULL);
		g_string_append_printf(
			sub, "%s, PyTorch %u.%u rules%s, %" G_GUINT64_FORMAT " events", label,
			opt->pytorch_version / 100, opt->pytorch_version % 100,
			cca_rules_for(opt->pytorch_version)->unvalidated ? " (unvalidated)" : "",
			tls[0].n_events);
		if (n_runs > 1)
			g_string_append_printf(sub, "; %u what-if%s overlaid", n_runs - 1,
					       n_runs == 2 ? "" : "s");
		for (guint r = 0; r < n_runs; r++)
			if (legends[r]) { /* the first run with bounds says why */
				g_string_append_printf(sub, "; bounded: over %s, as replay's",
						       cca_timing_why(&timings[r]));
				break;
			}
		CcaPlotStyle style = {
			.title = title,
			.subtitle = sub->str,
			.width = pa->width,
			.height = pa->height,
			.x_time = x_time,
		};
		Drawing d = {.style = &style, .runs = runs, .n_runs = n_runs};
		if (!cca_plot_write(pa->output, format, style.width, style.height, title,
				    draw_timeline, &d, &error)) {
			cca_cli_print_error("plot", error);
			g_error_free(error);
			status = 1;
		} else if (va->json) {
			/* the figures the plot draws (its peak label), for machines */
			json_t *o = json_object(), *a = json_array();
			json_object_set_new(o, "output", cca_json_string(pa->output));
			for (guint r = 0; r < n_runs; r++) {
				json_t *run = json_object();
				json_object_set_new(run, "label", cca_json_string(labels[r]));
				json_object_set_new(run, "peak_label_bytes",
						    cca_json_uint(tls[r].peak_reserved));
				json_object_set_new(run, "peak_label_event",
						    cca_json_uint(tls[r].peak_index));
				/* the legend names the bounds; the curves are the
				 * recorded timing's */
				json_object_set_new(run, "legend_figures",
						    legends[r] ? cca_json_string(legends[r])
							       : json_null());
				cca_timing_add_run_json(&timings[r], run);
				json_object_set_new(run, "figures",
						    cca_figures_to_json_in(
							    &tls[r].figures, &tls[r].result.stats,
							    tls[r].result.start_reconstructed));
				/* a window of the run, as replay --json says it */
				json_object_set_new(run, "window",
						    cca_report_window_json(&tls[r].result));
				json_array_append_new(a, run);
			}
			json_object_set_new(o, "window", cca_report_window_json(&tls[0].result));
			json_object_set_new(o, "runs", a);
			cca_json_print(stdout, o);
		} else {
			char a[32];
			g_autofree char *output = cca_text_path(pa->output);
			printf("%s: timeline of %" G_GUINT64_FORMAT " events", output,
			       tls[0].n_events);
			for (guint r = 0; r < n_runs; r++) {
				printf("%s %s peak reserved %s (%" G_GUINT64_FORMAT " OOM%s)",
				       r ? ";" : ",", labels[r],
				       cca_size_format(tls[r].peak_reserved, a), tls[r].n_ooms,
				       tls[r].n_ooms == 1 ? "" : "s");
				if (cca_timing_why(&timings[r])) {
					g_autoptr(GString) b = g_string_new(NULL);
					cca_timing_append_headline_ranges(&timings[r], b);
					printf(", bounded by %s: %s", cca_timing_why(&timings[r]),
					       b->str);
				}
			}
			printf("\n");
		}
		g_string_free(sub, TRUE);
	}
	for (guint r = 0; r < done; r++) {
		cca_timeline_clear(&tls[r]);
		cca_timing_clear(&timings[r]);
	}
	g_free(timings);
	for (guint r = 0; r < n_runs; r++)
		g_free(legends[r]);
	g_free(legends);
	g_strfreev(labels);
	g_free(runs);
	g_free(tls);
	return status;
}

static int
plot_segments(const CcaSnapshot *snap, CcaReplayOptions *opt, const CcaCliArgs *va,
	      const PlotArgs *pa, CcaPlotFormat format, const char *trace)
{
	GError *error = NULL;
	if (va->n_settings > 1) {
		fprintf(stderr,
			"ccasim plot: --segments draws one run: give at most one --config\n");
		return 2;
	}
	if (va->n_settings)
		opt->settings = &va->settings[0];
	uint64_t at = 0;
	bool at_peak = pa->at_text == NULL;
	if (!at_peak) {
		at = (uint64_t)pa->at;
		if (at >= snap->n_events[opt->device]) {
			fprintf(stderr,
				"ccasim plot: --at %" G_GUINT64_FORMAT
				" is past the trace's end (%" G_GUINT64_FORMAT " events)\n",
				at, snap->n_events[opt->device]);
			return 2;
		}
	}
	GArray *state = NULL;
	uint64_t shown = 0;
	bool whatif = false;
	if (!cca_plot_segments_state(snap, opt, at_peak, at, &state, &shown, &whatif, &error)) {
		cca_cli_print_error("plot", error);
		g_error_free(error);
		return 1;
	}
	if (!state) {
		fprintf(stderr,
			"ccasim plot: the replay stopped before event %" G_GUINT64_FORMAT
			" (an OOM; --keep-going goes on)\n",
			at);
		return 1;
	}
	/* a what-if's bounds (timing.h), of its figures: the map drawn is the
	 * recorded timing's */
	CcaTiming timing = {0}; /* zeroed: a replay of the recording */
	if (whatif && !cca_timing_bound(snap, opt, NULL, &timing, &error)) {
		cca_cli_print_error("plot", error);
		g_error_free(error);
		cca_timing_clear(&timing);
		cca_allocator_state_free(state);
		return 1;
	}
	g_autofree char *label = cca_report_settings_label(snap, opt);
	g_autofree char *title = plot_title(
		pa, "%s: segments%s (after event %" G_GUINT64_FORMAT ", device %d)",
		base_name(trace), at_peak ? " at the reserved peak" : "", shown, opt->device);
	GString *subs = g_string_new(NULL);
	g_string_append_printf(subs, "%s, PyTorch %u.%u rules%s", label, opt->pytorch_version / 100,
			       opt->pytorch_version % 100,
			       cca_rules_for(opt->pytorch_version)->unvalidated ? " (unvalidated)"
										: "");
	if (cca_timing_why(&timing)) {
		g_string_append_printf(subs, "; bounded by %s: ", cca_timing_why(&timing));
		cca_timing_append_headline_ranges(&timing, subs);
		g_string_append_printf(subs,
				       " (the map: the recorded timing, the %s address model)",
				       cca_simdevice_address_model_name(opt->address_model));
	}
	g_autofree char *sub = g_string_free(subs, FALSE);
	CcaPlotSegments segs = {.segments = state, .max_rows = (guint)pa->max_rows};
	CcaPlotStyle style = {.title = title, .subtitle = sub, .width = pa->width};
	style.height = cca_plot_segments_height(&style, &segs);
	Drawing d = {.style = &style, .segs = &segs};
	int status = 0;
	if (!cca_plot_write(pa->output, format, style.width, style.height, title, draw_segments, &d,
			    &error)) {
		cca_cli_print_error("plot", error);
		g_error_free(error);
		status = 1;
	} else if (va->json) {
		/* allocated: PyTorch's allocated_bytes, which a block waiting
		 * for its stream's events (pending free) has left already;
		 * active: both, the blocks the map draws live */
		uint64_t reserved = 0, allocated = 0, active = 0;
		for (guint i = 0; i < state->len; i++) {
			const CcaStateSegment *sg = &g_array_index(state, CcaStateSegment, i);
			reserved += sg->total_size;
			for (size_t k = 0; k < sg->n_blocks; k++) {
				if (sg->blocks[k].state != CCA_BLOCK_INACTIVE)
					active += sg->blocks[k].size;
				if (sg->blocks[k].state == CCA_BLOCK_ACTIVE_ALLOCATED)
					allocated += sg->blocks[k].size;
			}
		}
		json_t *o = json_object();
		json_object_set_new(o, "output", cca_json_string(pa->output));
		json_object_set_new(o, "event", cca_json_uint(shown));
		json_object_set_new(o, "at_reserved_peak", cca_json_bool(at_peak));
		json_object_set_new(o, "segments", cca_json_uint(state->len));
		json_object_set_new(o, "reserved", cca_json_uint(reserved));
		json_object_set_new(o, "allocated", cca_json_uint(allocated));
		json_object_set_new(o, "active", cca_json_uint(active));
		cca_timing_add_run_json(&timing, o);
		cca_json_print(stdout, o);
	} else {
		g_autofree char *output = cca_text_path(pa->output);
		printf("%s: segment map after event %" G_GUINT64_FORMAT ", %u segments", output,
		       shown, state->len);
		if (cca_timing_why(&timing)) {
			g_autoptr(GString) b = g_string_new(NULL);
			cca_timing_append_headline_ranges(&timing, b);
			printf(" (the recorded timing, the %s address model); bounded by %s: %s",
			       cca_simdevice_address_model_name(opt->address_model),
			       cca_timing_why(&timing), b->str);
		}
		printf("\n");
	}
	cca_timing_clear(&timing);
	cca_allocator_state_free(state);
	opt->settings = NULL;
	return status;
}

int
cca_cmd_plot(const CcaCliCommand *cmd, int argc, char **argv)
{
	g_auto(CcaCliArgs) va = {0};
	g_auto(PlotArgs) pa = {.at = -1, .width = 1200, .height = 640, .max_rows = 120};
	GOptionEntry entries[] = {
		{"output", 'o', 0, G_OPTION_ARG_FILENAME, &pa.output,
		 "The image to write: .svg, .png, .pdf or .html (required)", "FILE"},
		{"x", 0, 0, G_OPTION_ARG_STRING, &pa.x_axis,
		 "Timeline x axis: event (default) or time (time_us)", "AXIS"},
		{"segments", 0, 0, G_OPTION_ARG_NONE, &pa.segments,
		 "Draw the segment map at the reserved peak (or --at) instead of the timeline",
		 NULL},
		{"at", 0, 0, G_OPTION_ARG_STRING, &pa.at_text, "Segment map after this event",
		 "EVENT"},
		{"width", 0, 0, G_OPTION_ARG_INT, &pa.width, "Image width in pixels (default 1200)",
		 "PX"},
		{"height", 0, 0, G_OPTION_ARG_INT, &pa.height,
		 "Timeline height in pixels (default 640)", "PX"},
		{"max-rows", 0, 0, G_OPTION_ARG_INT, &pa.max_rows,
		 "Segments drawn in a segment map: those with the most free space beside live "
		 "blocks, drawn in address order (default 120; 0: all)",
		 "N"},
		{"title", 0, 0, G_OPTION_ARG_STRING, &pa.title, "Title instead of the default",
		 "TEXT"},
		{"no-bounds", 0, 0, G_OPTION_ARG_NONE, &va.no_bounds,
		 "A what-if's figures under the recorded completions and the driver's placement "
		 "alone, without replaying the others for their bounds (faster; replay --no-bounds)",
		 NULL},
		{NULL, 0, 0, 0, NULL, NULL, NULL},
	};
	int status = cca_cli_parse(
		cmd, entries,
		"Plots reserved, allocated and active memory over the trace for the\n"
		"recorded run and every --config what-if, with OOMs and the cap marked;\n"
		"or, with --segments, the segment map at the reserved peak.",
		NULL, &va, &argc, &argv);
	if (status >= 0)
		return status;
	CcaPlotFormat format = CCA_PLOT_SVG;
	g_autoptr(GError) error = NULL;
	if (argc != 2 || !pa.output)
		return cca_cli_usage(cmd, "expected one TRACE and -o FILE (see --help)");
	if (!cca_plot_format_from_path(pa.output, &format, &error)) {
		cca_cli_print_error("plot", error);
		return 2;
	}
	if (pa.x_axis && strcmp(pa.x_axis, "time") != 0 && strcmp(pa.x_axis, "event") != 0)
		return cca_cli_usage(cmd, "--x: expected event or time");
	if (!cca_cli_check_int("plot", "--width", pa.width, 480, 20000) ||
	    !cca_cli_check_int("plot", "--height", pa.height, 320, 20000) ||
	    !cca_cli_check_int("plot", "--max-rows", pa.max_rows, 0, G_MAXINT) ||
	    !cca_cli_parse_int("plot", "--at", pa.at_text, 0, G_MAXINT64, &pa.at))
		return 2;
	if (pa.at_text && !pa.segments)
		return cca_cli_usage(cmd, "--at needs --segments");
	CcaReplayOptions opt;
	g_autoptr(CcaSnapshot) snap = cca_cli_load(&va, "plot", argv[1], &opt, &status);
	if (!snap)
		return status;
	return pa.segments ? plot_segments(snap, &opt, &va, &pa, format, argv[1])
			   : plot_timeline(snap, &opt, &va, &pa, format, argv[1]);
}
