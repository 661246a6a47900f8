/* plot.h - drawing timelines and segment maps with cairo, and
 * writing them as SVG, PNG, PDF or a self-contained HTML page. */
#ifndef CCA_PLOT_H
#define CCA_PLOT_H

#include <cairo.h>
#include <glib.h>
#include <stdbool.h>

#include "allocator.h"
#include "replay.h"
#include "snapshot.h"
#include "timeline.h"

/* One replay on a timeline plot. */
typedef struct {
	const char *label; /* legend: "recorded" or the what-if's settings */
	const CcaTimeline *tl;
	/* the legend's figures of a what-if whose figures have bounds (the
	 * ranges and why); NULL: TL's peak reserved and OOMs */
	const char *figures;
} CcaPlotRun;

/* Titles and geometry shared by both plots.  Sizes are pixels (points in
 * PDF). */
typedef struct {
	const char *title;
	const char *subtitle;
	int width;
	int height;  /* timeline only: the segment map computes its own */
	bool x_time; /* timeline: x is seconds since the first time_us */
} CcaPlotStyle;

/* A segment map: the segments of one state (borrowed CcaStateSegment). */
typedef struct {
	const GArray *segments;
	guint max_rows; /* segments drawn: those with the most free space beside live
			 * blocks, in address order; 0: all */
} CcaPlotSegments;

/* Replays device OPT->device of SNAP once under OPT (its hooks and
 * stop_after are its own) for the state a segment map draws: with
 * AT_PEAK, the state at the first entry with the most reserved bytes;
 * otherwise the state after entry AT as `ccasim step --at` shows it
 * (CcaStepAt: AT's own when the replay hands AT to the observer, else that
 * of the last entry before AT when the model does nothing up to AT, else
 * that of the first one after AT).  Stores the state (CcaStateSegment;
 * free with cca_allocator_state_free()) in *STATE and the entry it follows
 * in *SHOWN; *STATE is NULL when the replay stopped before AT (an OOM).
 * *WHATIF (when not NULL): whether the replay was a what-if.  FALSE with
 * ERROR when the replay fails. */
gboolean cca_plot_segments_state(const CcaSnapshot *snap, const CcaReplayOptions *opt, bool at_peak,
				 uint64_t at, GArray **state, uint64_t *shown, bool *whatif,
				 GError **error);

/* The output formats, chosen from the file name's extension. */
typedef enum {
	CCA_PLOT_SVG,
	CCA_PLOT_PNG,
	CCA_PLOT_PDF,
	CCA_PLOT_HTML,
} CcaPlotFormat;

/* Parses PATH's extension (.svg, .png, .pdf, .html/.htm, any case);
 * FALSE with ERROR for anything else. */
gboolean cca_plot_format_from_path(const char *path, CcaPlotFormat *format, GError **error);

/* Height in pixels a segment map of SEGS needs at STYLE->width. */
int cca_plot_segments_height(const CcaPlotStyle *style, const CcaPlotSegments *segs);

/* Draws a timeline of RUNS (the first is the reference run) on CR, which
 * covers STYLE->width x STYLE->height: reserved, allocated and active
 * bytes against the event index or time, decimated to one column per
 * pixel with each column's minimum and maximum kept, the OOMs (red
 * crosses), the memory-fraction cap (dashed line), each run's reserved
 * peak, axes in MiB or GiB, a legend and the titles.  With HOVER, appends
 * the columns' values as a JSON object for an HTML page. */
void cca_plot_draw_timeline(cairo_t *cr, const CcaPlotStyle *style, const CcaPlotRun *runs,
			    guint n_runs, GString *hover);

/* Draws the segment map of SEGS on CR (STYLE->width wide, as high as
 * cca_plot_segments_height() says): one row per segment with its blocks
 * coloured by state, the rounding inside allocated blocks and the free
 * space beside live blocks told apart from wholly free segments, sizes
 * labelled, and a legend.  With HOVER, appends the rows as JSON. */
void cca_plot_draw_segments(cairo_t *cr, const CcaPlotStyle *style, const CcaPlotSegments *segs,
			    GString *hover);

/* A drawing callback for cca_plot_write(). */
typedef void (*CcaPlotDrawFunc)(cairo_t *cr, void *data, GString *hover);

/* Creates PATH in FORMAT at WIDTH x HEIGHT and calls DRAW on it; an HTML
 * page embeds the SVG inline with a small script that shows the values
 * under the mouse (from DRAW's hover JSON), under the title TITLE.  The
 * file is written to PATH.XXXXXX and renamed over PATH on success.
 * Returns FALSE with ERROR on I/O or cairo errors. */
gboolean cca_plot_write(const char *path, CcaPlotFormat format, int width, int height,
			const char *title, CcaPlotDrawFunc draw, void *data, GError **error);

#endif
