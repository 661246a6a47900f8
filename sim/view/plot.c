/* plot.c - timelines and segment maps drawn with cairo.
 *
 * Rendering is cairo's (vector paths, antialiasing, text); this file only
 * lays plots out.  A timeline is decimated to one column per pixel of the
 * plot area: each column keeps the first, last, smallest and largest
 * value of the buckets that fall in it, and the path visits all four, so
 * no peak narrower than a pixel disappears.  A segment map draws one row
 * per segment, every bar spanning the full width (sizes are in the
 * labels and in a small bar proportional to the largest segment).
 */
#include "config.h"

#include "plot.h"

#include "outfile.h"

#include <cairo-pdf.h>
#include <cairo-svg.h>
#include <errno.h>
#include <fontconfig/fontconfig.h>
#include <glib/gstdio.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "html.h"
#include "json.h"
#include "plan.h"
#include "replay.h"
#include "size.h"
#include "stepview.h"

#define FONT "DejaVu Sans"
#define MONO "DejaVu Sans Mono"

/* ----------------------------------------------------------- helpers */

/* The text of an SVG (or HTML) image: cairo's SVG surface writes text as
 * glyph outlines, which no one can search or copy, so text() appends
 * <text> elements here instead and cca_plot_write() puts them at the end
 * of the SVG.  NULL for the other formats, which cairo draws.  One image
 * is drawn at a time (the CLI draws one per process). */
static GString *svg_text;
static const char *cur_family = FONT;
static double cur_size = 12;
static bool cur_bold;

static void
font(cairo_t *cr, double size, bool bold)
{
	cairo_select_font_face(cr, FONT, CAIRO_FONT_SLANT_NORMAL,
			       bold ? CAIRO_FONT_WEIGHT_BOLD : CAIRO_FONT_WEIGHT_NORMAL);
	cairo_set_font_size(cr, size);
	cur_family = FONT;
	cur_size = size;
	cur_bold = bold;
}

static void
mono(cairo_t *cr, double size)
{
	cairo_select_font_face(cr, MONO, CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
	cairo_set_font_size(cr, size);
	cur_family = MONO;
	cur_size = size;
	cur_bold = false;
}

/* Appends S at (X, Y) in user space as an SVG <text> with the current
 * font, colour and transformation; ALIGN as text() takes it. */
static void
svg_text_append(cairo_t *cr, double x, double y, const char *s, double align)
{
	double dx = x, dy = y;
	cairo_user_to_device(cr, &dx, &dy);
	cairo_matrix_t m;
	cairo_get_matrix(cr, &m);
	double angle = atan2(m.yx, m.xx) * 180 / G_PI;
	double r = 0, g = 0, b = 0, a = 1;
	cairo_pattern_get_rgba(cairo_get_source(cr), &r, &g, &b, &a);
	char num[4][G_ASCII_DTOSTR_BUF_SIZE];
	g_string_append_printf(svg_text,
			       "<text x=\"%s\" y=\"%s\" font-family=\"%s\" font-size=\"%s\"%s",
			       g_ascii_formatd(num[0], sizeof num[0], "%.2f", dx),
			       g_ascii_formatd(num[1], sizeof num[1], "%.2f", dy), cur_family,
			       g_ascii_formatd(num[2], sizeof num[2], "%.1f", cur_size),
			       cur_bold ? " font-weight=\"bold\"" : "");
	if (align > 0.75)
		g_string_append(svg_text, " text-anchor=\"end\"");
	else if (align > 0.25)
		g_string_append(svg_text, " text-anchor=\"middle\"");
	if (fabs(angle) > 0.01)
		g_string_append_printf(svg_text, " transform=\"rotate(%s %s %s)\"",
				       g_ascii_formatd(num[3], sizeof num[3], "%.1f", angle),
				       num[0], num[1]);
	g_string_append_printf(svg_text, " fill=\"#%02x%02x%02x\"", (int)lround(r * 255),
			       (int)lround(g * 255), (int)lround(b * 255));
	g_string_append_c(svg_text, '>');
	g_autofree char *escaped = cca_html_escape(s); /* XML text too */
	g_string_append(svg_text, escaped);
	g_string_append(svg_text, "</text>\n");
}

/* Width of S in the current font.  cairo refuses text that is not UTF-8
 * by putting CR in an error state (the whole image then fails), so such
 * bytes are measured, and drawn, as U+FFFD. */
static double
text_width(cairo_t *cr, const char *s)
{
	cairo_text_extents_t e;
	g_autofree char *valid = g_utf8_validate(s, -1, NULL) ? NULL : g_utf8_make_valid(s, -1);
	cairo_text_extents(cr, valid ? valid : s, &e);
	return e.x_advance;
}

/* Draws S with its baseline at Y; ALIGN 0 left of X, 0.5 centred, 1
 * right of it. */
static void
text(cairo_t *cr, double x, double y, const char *s, double align)
{
	if (svg_text) {
		svg_text_append(cr, x, y, s, align);
		return;
	}
	g_autofree char *valid = g_utf8_validate(s, -1, NULL) ? NULL : g_utf8_make_valid(s, -1);
	cairo_move_to(cr, x - align * text_width(cr, s), y);
	cairo_show_text(cr, valid ? valid : s);
}

/* The most bytes of a string fit() measures: more than the widest plot
 * (20000 px) shows at 8 px, so longer text is cut before it is measured. */
#define FIT_MAX_BYTES 8192

/* The length of the longest prefix of S (LEN bytes) that ends on a UTF-8
 * character boundary and is at most CUT bytes. */
static gsize
utf8_prefix(const char *s, gsize len, gsize cut)
{
	if (cut >= len)
		return len;
	while (cut > 0 && ((unsigned char)s[cut] & 0xc0) == 0x80)
		cut--;
	return cut;
}

/* S shrunk (down to 8 px, then cut with an ellipsis) to fit MAX px in the
 * current face at SIZE; leaves the font set.  S should already be a
 * display string (cca_text_display()).  Linear in the length of S: it is
 * first cut to FIT_MAX_BYTES, and the cut point of the ellipsis is found
 * by a binary search, O(log n) measurements of at most FIT_MAX_BYTES. */
static char *
fit(cairo_t *cr, const char *s, double size, double max, bool bold)
{
	gsize full = strlen(s);
	gsize len = utf8_prefix(s, full, FIT_MAX_BYTES);
	g_autofree char *head = g_strndup(s, len);
	double sz = size;
	font(cr, sz, bold);
	double w = text_width(cr, head);
	while (w > max && sz > 8.0) {
		sz -= 0.5;
		font(cr, sz, bold);
		w = text_width(cr, head);
	}
	if (w <= max && len == full)
		return g_steal_pointer(&head);
	/* The longest prefix that fits with the ellipsis: LO fits (or is 0),
	 * HI does not. */
	gsize lo = 0, hi = len + 1;
	while (hi - lo > 1) {
		gsize mid = utf8_prefix(head, len, lo + (hi - lo) / 2);
		if (mid <= lo) /* inside LO's character: try its end */
			mid = lo + (gsize)g_utf8_skip[(unsigned char)head[lo]];
		if (mid >= hi)
			break;
		g_autofree char *try = g_strdup_printf("%.*s\u2026", (int)mid, head);
		if (text_width(cr, try) <= max)
			lo = mid;
		else
			hi = mid;
	}
	return g_strdup_printf("%.*s\u2026", (int)lo, head);
}

static void
rgb(cairo_t *cr, guint32 hex)
{
	cairo_set_source_rgb(cr, ((hex >> 16) & 0xff) / 255.0, ((hex >> 8) & 0xff) / 255.0,
			     (hex & 0xff) / 255.0);
}

static void
rgba(cairo_t *cr, guint32 hex, double alpha)
{
	cairo_set_source_rgba(cr, ((hex >> 16) & 0xff) / 255.0, ((hex >> 8) & 0xff) / 255.0,
			      (hex & 0xff) / 255.0, alpha);
}

/* A "nice" step (1, 2, 2.5 or 5 times a power of ten) for about TICKS
 * ticks over RANGE. */
static double
nice_step(double range, int ticks)
{
	if (range <= 0)
		return 1;
	double raw = range / ticks, mag = pow(10, floor(log10(raw))), n = raw / mag;
	double step = n <= 1 ? 1 : n <= 2 ? 2 : n <= 2.5 ? 2.5 : n <= 5 ? 5 : 10;
	return step * mag;
}

static int
decimals(double step)
{
	int d = 0;
	while (d < 4 && fabs(step * pow(10, d) - floor(step * pow(10, d) + 0.5)) > 1e-6)
		d++;
	return d;
}

/* Bytes in the unit a memory axis of at most MAX bytes uses. */
static void
byte_unit(double max, double *scale, const char **name)
{
	if (max >= 2.0 * (double)CCA_GIB) {
		*scale = (double)CCA_GIB;
		*name = "GiB";
	} else if (max >= 2.0 * (double)CCA_MIB) {
		*scale = (double)CCA_MIB;
		*name = "MiB";
	} else {
		*scale = (double)CCA_KIB;
		*name = "KiB";
	}
}

/* An event count as "250k", "1.5M". */
static void
count_label(char *buf, size_t len, double v)
{
	if (v >= 1e6)
		g_snprintf(buf, len, "%gM", v / 1e6);
	else if (v >= 1e3)
		g_snprintf(buf, len, "%gk", v / 1e3);
	else
		g_snprintf(buf, len, "%g", v);
}

/* -------------------------------------------------------- timeline */

/* One colour per run (the recording first), the series told apart by
 * their line: reserved solid, allocated wide and pale, active thin and
 * dotted. */
static const guint32 run_colour[] = {0x1f77b4, 0xff7f0e, 0x2ca02c, 0x9467bd,
				     0x8c564b, 0xe377c2, 0x17becf, 0x7f7f7f};
static const char *const series_name[CCA_SERIES_COUNT] = {"reserved", "allocated", "active"};

typedef struct {
	double first, last, min, max;
	bool has;
} Col;

static guint32
line_colour(guint run, int series)
{
	(void)series;
	return run_colour[run % G_N_ELEMENTS(run_colour)];
}

/* The opacity of SERIES's line. */
static double
line_alpha(int series)
{
	return series == CCA_SERIES_ALLOCATED ? 0.45 : 1.0;
}

/* Line style of SERIES: width and dash (the same in every run). */
static void
line_style(cairo_t *cr, guint run, int series)
{
	static const double dot[] = {2, 2.5};
	(void)run;
	/* active, usually equal to allocated, is drawn thin over a wide
	 * allocated line: both stay visible, and dense data stays solid */
	static const double width[CCA_SERIES_COUNT] = {1.8, 3.2, 1.0};
	cairo_set_line_width(cr, width[series]);
	if (series == CCA_SERIES_ACTIVE)
		cairo_set_dash(cr, dot, 2, 0);
	else
		cairo_set_dash(cr, NULL, 0, 0);
}

static void
col_add(Col *c, double first, double last, double lo, double hi)
{
	if (!c->has) {
		c->first = first;
		c->min = lo;
		c->max = hi;
		c->has = true;
	}
	c->min = MIN(c->min, lo);
	c->max = MAX(c->max, hi);
	c->last = last;
}

typedef struct {
	const CcaPlotStyle *style;
	double x0, x1, y0, y1; /* plot area: x0 left, y1 bottom */
	double xmax;	       /* events or seconds at x1 */
	double ymax;	       /* bytes at y0 */
	int64_t t_origin;
} Frame;

static double
fx(const Frame *f, double v)
{
	return f->x0 + (f->xmax > 0 ? v / f->xmax : 0) * (f->x1 - f->x0);
}

static double
fy(const Frame *f, double bytes)
{
	return f->y1 - (f->ymax > 0 ? bytes / f->ymax : 0) * (f->y1 - f->y0);
}

/* The x value of entry INDEX at TIME_US. */
static double
xval(const Frame *f, uint64_t index, int64_t time_us)
{
	if (f->style->x_time)
		return time_us == CCA_TIME_NONE ? 0 : (double)(time_us - f->t_origin) / 1e6;
	return (double)index;
}

/* Folds TL's buckets into NCOLS columns for each series. */
static void
columns(const Frame *f, const CcaTimeline *tl, Col *cols[CCA_SERIES_COUNT], int ncols)
{
	for (uint32_t i = 0; i < tl->n_buckets; i++) {
		const CcaTimelineBucket *b = &tl->buckets[i];
		if (b->n == 0)
			continue;
		double a = xval(f, b->i_first, b->t_first), z = xval(f, b->i_last, b->t_last);
		int ca = (int)floor((fx(f, a) - f->x0)), cz = (int)floor((fx(f, z) - f->x0));
		ca = CLAMP(ca, 0, ncols - 1);
		cz = CLAMP(cz, 0, ncols - 1);
		for (int s = 0; s < CCA_SERIES_COUNT; s++) {
			if (ca != cz)
				col_add(&cols[s][ca], b->first[s], b->first[s], b->first[s],
					b->first[s]);
			col_add(&cols[s][cz], ca != cz ? b->first[s] : b->first[s], b->last[s],
				b->min[s], b->max[s]);
		}
	}
}

/* A step path that only bends where the value changes: long flat runs
 * become one segment, which keeps vector output small. */
typedef struct {
	cairo_t *cr;
	bool started, hold;
	double px, py, hx;
} Pen;

static void
pen_to(Pen *p, double x, double y)
{
	y = round(y * 4) / 4; /* quarter pixels: short numbers in vector output */
	if (!p->started) {
		cairo_move_to(p->cr, x, y);
		p->px = x;
		p->py = y;
		p->started = true;
		return;
	}
	if (fabs(y - p->py) < 0.05) { /* flat: extend the pending run */
		p->hx = x;
		p->hold = x != p->px;
		return;
	}
	if (x != p->px)
		cairo_line_to(p->cr, x, p->py);
	cairo_line_to(p->cr, x, y);
	p->px = x;
	p->py = y;
	p->hold = false;
}

static void
stroke_series(cairo_t *cr, const Frame *f, const Col *col, int ncols)
{
	Pen pen = {.cr = cr};
	for (int c = 0; c < ncols; c++) {
		if (!col[c].has)
			continue;
		double x = f->x0 + c + 0.5;
		pen_to(&pen, x, fy(f, col[c].first));
		pen_to(&pen, x, fy(f, col[c].min));
		pen_to(&pen, x, fy(f, col[c].max));
		pen_to(&pen, x, fy(f, col[c].last));
	}
	if (pen.hold)
		cairo_line_to(cr, pen.hx, pen.py);
	if (pen.started)
		cairo_stroke(cr);
}

static void
draw_cross(cairo_t *cr, double x, double y, double r)
{
	cairo_move_to(cr, x - r, y - r);
	cairo_line_to(cr, x + r, y + r);
	cairo_move_to(cr, x - r, y + r);
	cairo_line_to(cr, x + r, y - r);
}

static void
titles(cairo_t *cr, const CcaPlotStyle *style, double *bottom)
{
	double w = style->width;
	rgb(cr, 0x202020);
	g_autofree char *t = fit(cr, style->title ? style->title : "", 17, w - 40, true);
	text(cr, w / 2, 28, t, 0.5);
	rgb(cr, 0x505050);
	g_autofree char *s = fit(cr, style->subtitle ? style->subtitle : "", 12, w - 40, false);
	text(cr, w / 2, 48, s, 0.5);
	*bottom = 62;
}

/* The legend's swatch for one line style. */
static void
swatch_line(cairo_t *cr, double x, double y, guint run, int series)
{
	rgba(cr, line_colour(run, series), line_alpha(series));
	line_style(cr, run, series);
	cairo_move_to(cr, x, y);
	cairo_line_to(cr, x + 26, y);
	cairo_stroke(cr);
	cairo_set_dash(cr, NULL, 0, 0);
}

/* The legend's entry for a limit line (limit_line()): a dashed swatch in
 * COLOUR at X, Y and LABEL after it; returns the x of the next entry. */
static double
legend_limit(cairo_t *cr, double x, double y, const double dash[2], guint32 colour,
	     const char *label)
{
	rgb(cr, colour);
	cairo_set_line_width(cr, 1.2);
	cairo_set_dash(cr, dash, 2, 0);
	cairo_move_to(cr, x, y);
	cairo_line_to(cr, x + 26, y);
	cairo_stroke(cr);
	cairo_set_dash(cr, NULL, 0, 0);
	rgb(cr, 0x202020);
	text(cr, x + 32, y + 4, label, 0);
	return x + 32 + text_width(cr, label) + 22;
}

/* The most peak labels one panel keeps clear of each other. */
#define CCA_PLOT_MAX_LABELS 64

/* The baseline for a label of width W at X, as near Y as it can be (a line
 * of 13 pixels up, then down, in turn) without overlapping the N labels
 * PLACED (x, baseline, width) and within [TOP, BOTTOM]. */
static double
label_place(double placed[][3], guint n, double x, double y, double w, double top, double bottom)
{
	for (int k = 0; k < 40; k++) {
		double ly = y + (k % 2 ? 1 : -1) * ((k + 1) / 2) * 13.0;
		if (ly < top || ly > bottom)
			continue;
		bool clash = false;
		for (guint i = 0; i < n && !clash; i++)
			clash = x < placed[i][0] + placed[i][2] && placed[i][0] < x + w &&
				ly - 11 < placed[i][1] && placed[i][1] - 11 < ly;
		if (!clash)
			return ly;
	}
	return MAX(top, MIN(y, bottom));
}

/* A limit of the device at BYTES across frame F: a dashed line of COLOUR
 * (DASH: on, off) and LABEL above its left end, moved off the labels
 * PLACED so far when AVOID (else where it falls); the label joins
 * PLACED. */
static void
limit_line(cairo_t *cr, const Frame *f, double bytes, guint32 colour, const double dash[2],
	   const char *label, bool avoid, double placed[][3], guint *n_placed)
{
	double y = round(fy(f, bytes)) + 0.5;
	rgb(cr, colour);
	cairo_set_line_width(cr, 1.2);
	cairo_set_dash(cr, dash, 2, 0);
	cairo_move_to(cr, f->x0, y);
	cairo_line_to(cr, f->x1, y);
	cairo_stroke(cr);
	cairo_set_dash(cr, NULL, 0, 0);
	font(cr, 11, false);
	double tw = text_width(cr, label);
	double ly = avoid ? label_place(placed, *n_placed, f->x0 + 6, y - 5, tw, f->y0 + 10, f->y1)
			  : y - 5;
	text(cr, f->x0 + 6, ly, label, 0);
	placed[*n_placed][0] = f->x0 + 6;
	placed[*n_placed][1] = ly;
	placed[*n_placed][2] = tw;
	(*n_placed)++;
}

/* Whether the timeline draws a panel per run: when one run's reserved
 * peak is more than TIMELINE_DWARF times another's, a shared axis would
 * flatten the smaller runs into a line at the bottom. */
#define TIMELINE_DWARF 4.0
static bool
timeline_split(const CcaPlotRun *runs, guint n_runs)
{
	uint64_t lo = UINT64_MAX, hi = 0;
	for (guint r = 0; r < n_runs; r++) {
		uint64_t p = runs[r].tl->peak_reserved;
		if (p == 0)
			continue;
		lo = MIN(lo, p);
		hi = MAX(hi, p);
	}
	return n_runs > 1 && hi > 0 && (double)hi > TIMELINE_DWARF * (double)lo;
}

void
cca_plot_draw_timeline(cairo_t *cr, const CcaPlotStyle *style, const CcaPlotRun *runs, guint n_runs,
		       GString *hover)
{
	double W = style->width, H = style->height;
	rgb(cr, 0xffffff);
	cairo_paint(cr);
	double top;
	titles(cr, style, &top);

	/* the x range, and whether one run dwarfs the others */
	Frame f = {.style = style};
	uint64_t cap = 0, n_events = 0;
	int64_t t_min = INT64_MAX, t_max = INT64_MIN;
	for (guint r = 0; r < n_runs; r++) {
		const CcaTimeline *tl = runs[r].tl;
		cap = MAX(cap, tl->allowed_maximum);
		n_events = MAX(n_events, tl->n_events);
		if (tl->has_time) {
			t_min = MIN(t_min, tl->t_min);
			t_max = MAX(t_max, tl->t_max);
		}
	}
	if (style->x_time && t_min <= t_max) {
		f.t_origin = t_min;
		f.xmax = MAX((double)(t_max - t_min) / 1e6, 1e-6);
	} else {
		f.xmax = MAX((double)n_events, 1.0);
	}
	bool split = timeline_split(runs, n_runs);
	guint n_panels = split ? n_runs : 1;

	/* legend: a row per run plus a row of markers */
	double legend_rows = n_runs + 1, legend_h = legend_rows * 18 + 8;
	f.x0 = 84;
	f.x1 = W - 28;
	double area_top = top + 14, area_bottom = H - 46 - legend_h, gap = 18;
	if (area_bottom - area_top < 80.0 * n_panels + gap * (n_panels - 1))
		area_bottom = area_top + 80.0 * n_panels + gap * (n_panels - 1);
	double ph = (area_bottom - area_top - gap * (n_panels - 1)) / n_panels;

	/* the columns, once: x alone decides them */
	int ncols = MAX(1, (int)(f.x1 - f.x0));
	Col **cols = g_new0(Col *, n_runs * CCA_SERIES_COUNT);
	for (guint r = 0; r < n_runs; r++) {
		for (int s = 0; s < CCA_SERIES_COUNT; s++)
			cols[r * CCA_SERIES_COUNT + s] = g_new0(Col, ncols);
		columns(&f, runs[r].tl, &cols[r * CCA_SERIES_COUNT], ncols);
	}
	char buf[64];
	bool any_cap_shown = false, any_dev_shown = false;
	double xstep = nice_step(f.xmax, 8);
	int xd = decimals(xstep);
	for (guint p = 0; p < n_panels; p++) {
		guint r0 = split ? p : 0, r1 = split ? p + 1 : n_runs;
		f.y0 = area_top + p * (ph + gap);
		f.y1 = f.y0 + ph;
		double data_max = 0;
		uint64_t pcap = 0, pdev = 0;
		for (guint r = r0; r < r1; r++) {
			const CcaTimeline *tl = runs[r].tl;
			for (uint32_t i = 0; i < tl->n_buckets; i++)
				if (tl->buckets[i].n)
					data_max = MAX(data_max,
						       tl->buckets[i].max[CCA_SERIES_RESERVED]);
			pcap = MAX(pcap, tl->allowed_maximum);
			pdev = MAX(pdev, tl->device_memory);
		}
		bool cap_shown = pcap > 0 && (double)pcap <= 3.0 * MAX(data_max, 1.0);
		bool dev_shown = pdev > 0 && (double)pdev <= 3.0 * MAX(data_max, 1.0);
		any_cap_shown |= cap_shown;
		any_dev_shown |= dev_shown;
		double ymax = MAX(data_max, cap_shown ? (double)pcap : 0.0);
		ymax = MAX(ymax, dev_shown ? (double)pdev : 0.0);
		if (ymax <= 0)
			ymax = 1024.0 * 1024;
		double unit;
		const char *unit_name;
		byte_unit(ymax, &unit, &unit_name);
		double ystep = nice_step(ymax * 1.05 / unit, split ? 4 : 6);
		f.ymax = ceil(ymax * 1.05 / unit / ystep) * ystep * unit;

		/* grid and axes */
		cairo_set_line_width(cr, 1);
		font(cr, 11, false);
		int yd = decimals(ystep);
		for (double v = 0; v <= f.ymax / unit + ystep * 1e-6; v += ystep) {
			double y = round(fy(&f, v * unit)) + 0.5;
			rgb(cr, v == 0 ? 0x404040 : 0xe4e4e4);
			cairo_move_to(cr, f.x0, y);
			cairo_line_to(cr, f.x1, y);
			cairo_stroke(cr);
			rgb(cr, 0x404040);
			g_snprintf(buf, sizeof buf, "%.*f", yd, v);
			text(cr, f.x0 - 6, y + 4, buf, 1);
		}
		bool last = p + 1 == n_panels;
		for (double v = 0; v <= f.xmax + xstep * 1e-6; v += xstep) {
			double x = round(fx(&f, v)) + 0.5;
			rgb(cr, v == 0 ? 0x404040 : 0xe4e4e4);
			cairo_move_to(cr, x, f.y0);
			cairo_line_to(cr, x, f.y1);
			cairo_stroke(cr);
			if (!last)
				continue;
			rgb(cr, 0x404040);
			cairo_move_to(cr, x, f.y1);
			cairo_line_to(cr, x, f.y1 + 4);
			cairo_stroke(cr);
			if (style->x_time)
				g_snprintf(buf, sizeof buf, "%.*f", xd, v);
			else
				count_label(buf, sizeof buf, v);
			text(cr, x, f.y1 + 17, buf, 0.5);
		}
		font(cr, 12, false);
		rgb(cr, 0x404040);
		if (last)
			text(cr, (f.x0 + f.x1) / 2, f.y1 + 36,
			     style->x_time ? "time since the first event (s)" : "trace event", 0.5);
		cairo_save(cr);
		cairo_translate(cr, 22, (f.y0 + f.y1) / 2);
		cairo_rotate(cr, -G_PI / 2);
		g_snprintf(buf, sizeof buf, "memory (%s)", unit_name);
		text(cr, 0, 0, buf, 0.5);
		cairo_restore(cr);
		if (split) {
			font(cr, 11, true);
			rgb(cr, line_colour(p, CCA_SERIES_RESERVED));
			g_autofree char *label = fit(cr, runs[p].label, 11, f.x1 - f.x0 - 12, true);
			text(cr, f.x0, f.y0 - 5, label, 0); /* above its panel */
		}

		/* labels placed so far: x, baseline y, width */
		double placed[CCA_PLOT_MAX_LABELS][3];
		guint n_placed = 0;

		/* the cap, in the axis's unit */
		if (cap_shown) {
			static const double dash[] = {8, 4};
			g_snprintf(buf, sizeof buf, "cap %.2f %s", (double)pcap / unit, unit_name);
			limit_line(cr, &f, (double)pcap, 0xd62728, dash, buf, false, placed,
				   &n_placed);
		}

		/* the device's memory (--device-memory): where cudaMalloc fails */
		if (dev_shown) {
			static const double dash[] = {2, 3};
			g_snprintf(buf, sizeof buf, "device memory %.2f %s", (double)pdev / unit,
				   unit_name);
			limit_line(cr, &f, (double)pdev, 0x7f0000, dash, buf, true, placed,
				   &n_placed);
		}

		/* series: columns of one pixel; what-ifs first, the reference on
		 * top */
		cairo_save(cr);
		cairo_rectangle(cr, f.x0 - 1, f.y0 - 4, f.x1 - f.x0 + 2, f.y1 - f.y0 + 5);
		cairo_clip(cr);
		cairo_set_line_join(cr, CAIRO_LINE_JOIN_ROUND);
		static const int order[CCA_SERIES_COUNT] = {CCA_SERIES_ALLOCATED, CCA_SERIES_ACTIVE,
							    CCA_SERIES_RESERVED};
		for (guint k = r1; k-- > r0;)
			for (int i = 0; i < CCA_SERIES_COUNT; i++) {
				int s = order[i];
				rgba(cr, line_colour(k, s), line_alpha(s));
				line_style(cr, k, s);
				stroke_series(cr, &f, cols[k * CCA_SERIES_COUNT + s], ncols);
			}
		cairo_set_dash(cr, NULL, 0, 0);
		/* OOMs: one cross per run, pixel column and 4-pixel band at most */
		cairo_set_line_width(cr, 1.6);
		GHashTable *drawn = g_hash_table_new(NULL, NULL);
		for (guint r = r0; r < r1; r++) {
			const CcaTimeline *tl = runs[r].tl;
			rgb(cr, 0xd62728);
			g_hash_table_remove_all(drawn);
			for (guint i = 0; i < tl->ooms->len; i++) {
				const CcaTimelineOom *o =
					&g_array_index(tl->ooms, CcaTimelineOom, i);
				double x = fx(&f, xval(&f, o->index, o->time_us));
				double y = fy(&f, (double)o->reserved);
				guint cell = ((guint)(x / 3) << 12) | (guint)(y / 4);
				if (!g_hash_table_add(drawn, GUINT_TO_POINTER(cell + 1)))
					continue;
				draw_cross(cr, x, y, 4);
			}
			cairo_stroke(cr);
		}
		g_hash_table_destroy(drawn);
		cairo_restore(cr);
		/* each run's reserved peak, labelled in the axis's unit; a label
		 * that would overlap one placed before moves a line up (or down) */
		font(cr, 11, false);
		for (guint r = r0; r < r1; r++) {
			const CcaTimeline *tl = runs[r].tl;
			if (tl->peak_reserved == 0)
				continue;
			/* the peak's x: its bucket's time or index */
			const CcaTimelineBucket *b =
				&tl->buckets[tl->n_events
						     ? tl->peak_index * tl->n_buckets / tl->n_events
						     : 0];
			double x = fx(&f, xval(&f, tl->peak_index, b->t_last));
			double y = fy(&f, (double)tl->peak_reserved);
			rgb(cr, line_colour(r, CCA_SERIES_RESERVED));
			cairo_new_sub_path(cr);
			cairo_arc(cr, x, y, 3.5, 0, 2 * G_PI);
			cairo_fill(cr);
			g_snprintf(buf, sizeof buf, "peak %.2f %s",
				   (double)tl->peak_reserved / unit, unit_name);
			double tw = text_width(cr, buf);
			double lx = x + 6 + tw > f.x1 ? x - 6 - tw : x + 6;
			double ly = label_place(placed, n_placed, lx, y - 6, tw, f.y0 + 10, f.y1);
			if (n_placed < CCA_PLOT_MAX_LABELS) {
				placed[n_placed][0] = lx;
				placed[n_placed][1] = ly;
				placed[n_placed][2] = tw;
				n_placed++;
			}
			text(cr, lx, ly, buf, 0);
		}
	}
	f.y0 = area_top;
	f.y1 = area_bottom;
	char a[32];

	/* legend */
	double ly = H - legend_h + 4;
	double lx0 = f.x0;
	for (guint r = 0; r < n_runs; r++) {
		double y = ly + 18 * r + 9;
		font(cr, 11, true);
		rgb(cr, 0x202020);
		g_autofree char *label = fit(cr, runs[r].label, 11, 260, true);
		text(cr, lx0, y + 4, label, 0);
		double x = lx0 + 270;
		font(cr, 11, false);
		for (int s = 0; s < CCA_SERIES_COUNT; s++) {
			swatch_line(cr, x, y, r, s);
			rgb(cr, 0x202020);
			text(cr, x + 32, y + 4, series_name[s], 0);
			x += 32 + text_width(cr, series_name[s]) + 22;
		}
		const CcaTimeline *tl = runs[r].tl;
		if (runs[r].figures)
			g_strlcpy(buf, runs[r].figures, sizeof buf);
		else
			g_snprintf(buf, sizeof buf, "peak reserved %s, %" G_GUINT64_FORMAT " OOM%s",
				   cca_size_format(tl->peak_reserved, a), tl->n_ooms,
				   tl->n_ooms == 1 ? "" : "s");
		rgb(cr, 0x505050);
		g_autofree char *shown = fit(cr, buf, 11, W - x - 16, false);
		text(cr, x + 8, y + 4, shown, 0);
	}
	{
		double y = ly + 18 * n_runs + 9, x = lx0 + 270;
		rgb(cr, 0xd62728);
		cairo_set_line_width(cr, 2);
		draw_cross(cr, x + 13, y, 5);
		cairo_stroke(cr);
		rgb(cr, 0x202020);
		text(cr, x + 32, y + 4, "OOM", 0);
		x += 32 + text_width(cr, "OOM") + 22;
		if (cap) {
			static const double dash[] = {8, 4};
			g_snprintf(buf, sizeof buf, "memory-fraction cap %s%s",
				   cca_size_format(cap, a),
				   any_cap_shown ? "" : " (off the scale)");
			x = legend_limit(cr, x, y, dash, 0xd62728, buf);
		}
		uint64_t dev = 0;
		for (guint r = 0; r < n_runs; r++)
			dev = MAX(dev, runs[r].tl->device_memory);
		if (dev) {
			static const double dash[] = {2, 3};
			g_snprintf(buf, sizeof buf, "device memory %s%s", cca_size_format(dev, a),
				   any_dev_shown ? "" : " (off the scale)");
			x = legend_limit(cr, x, y, dash, 0x7f0000, buf);
		}
		rgb(cr, 0x404040);
		cairo_new_sub_path(cr);
		cairo_arc(cr, x + 13, y, 3.5, 0, 2 * G_PI);
		cairo_fill(cr);
		rgb(cr, 0x202020);
		text(cr, x + 32, y + 4, "reserved peak", 0);
	}

	if (hover) {
		json_t *o = json_object(), *labels = json_array(), *list = json_array();
		json_object_set_new(o, "kind", json_string("timeline"));
		json_object_set_new(o, "svgw", cca_json_real(W));
		json_object_set_new(o, "svgh", cca_json_real(H));
		json_object_set_new(o, "left", cca_json_real(f.x0));
		json_object_set_new(o, "top", cca_json_real(f.y0));
		json_object_set_new(o, "width", cca_json_real(f.x1 - f.x0));
		json_object_set_new(o, "height", cca_json_real(f.y1 - f.y0));
		json_object_set_new(o, "x_time", cca_json_bool(style->x_time));
		for (guint r = 0; r < n_runs; r++)
			json_array_append_new(labels, cca_json_string(runs[r].label));
		json_object_set_new(o, "runs", labels);
		/* [column, x value, [[series maxima (-1: none)] for each run]] */
		for (int c = 0; c < ncols; c++) {
			bool any = false;
			for (guint r = 0; r < n_runs; r++)
				any |= cols[r * CCA_SERIES_COUNT][c].has;
			if (!any)
				continue;
			json_t *col = json_array(), *per_run = json_array();
			json_array_append_new(col, json_integer(c));
			json_array_append_new(col,
					      cca_json_real((c + 0.5) / (f.x1 - f.x0) * f.xmax));
			for (guint r = 0; r < n_runs; r++) {
				json_t *maxima = json_array();
				for (int k = 0; k < CCA_SERIES_COUNT; k++) {
					const Col *cl = &cols[r * CCA_SERIES_COUNT + k][c];
					json_array_append_new(
						maxima,
						json_integer(cl->has ? (json_int_t)llround(cl->max)
								     : -1));
				}
				json_array_append_new(per_run, maxima);
			}
			json_array_append_new(col, per_run);
			json_array_append_new(list, col);
		}
		json_object_set_new(o, "cols", list);
		cca_json_append(hover, o);
	}
	for (guint i = 0; i < n_runs * CCA_SERIES_COUNT; i++)
		g_free(cols[i]);
	g_free(cols);
}

/* ----------------------------------------------------- segment map */

enum {
	C_REQUESTED = 0x4c72b0,
	C_ROUNDING = 0xf28e2b,
	C_PENDING = 0xb07aa1,
	C_STRANDED = 0xff9d9a,
	C_CACHED = 0xc9c9c9,
};

typedef struct {
	const CcaStateSegment *seg;
	uint64_t free, live, requested, allocated;
} Row;

/* Segments worth drawing first: free space beside live blocks, then any
 * free space, then by address. */
static gint
row_by_free(gconstpointer a, gconstpointer b)
{
	const Row *x = a, *y = b;
	uint64_t xs = x->live ? x->free : 0, ys = y->live ? y->free : 0;
	if (xs != ys)
		return xs < ys ? 1 : -1;
	if (x->free != y->free)
		return x->free < y->free ? 1 : -1;
	return x->seg->address < y->seg->address ? -1 : x->seg->address > y->seg->address;
}

static gint
row_by_address(gconstpointer a, gconstpointer b)
{
	const Row *x = a, *y = b;
	return x->seg->address < y->seg->address ? -1 : x->seg->address > y->seg->address;
}

#define SEG_TOP 118.0
#define SEG_ROW_MIN 9.0
#define SEG_ROW_MAX 20.0
#define SEG_LEGEND 64.0

static guint
rows_shown(const CcaPlotSegments *segs)
{
	guint n = segs->segments->len;
	return segs->max_rows && n > segs->max_rows ? segs->max_rows : n;
}

static double
row_height(guint rows)
{
	return rows <= 20 ? SEG_ROW_MAX : rows <= 60 ? 14.0 : rows <= 120 ? 11.0 : SEG_ROW_MIN;
}

int
cca_plot_segments_height(const CcaPlotStyle *style, const CcaPlotSegments *segs)
{
	guint rows = rows_shown(segs);
	return (int)ceil(SEG_TOP + MAX(rows, 1) * row_height(rows) + 24 + SEG_LEGEND);
}

static void
legend_box(cairo_t *cr, double x, double y, guint32 colour, const char *label, double *next)
{
	rgb(cr, colour);
	cairo_rectangle(cr, x, y - 9, 16, 11);
	cairo_fill(cr);
	rgb(cr, 0x202020);
	text(cr, x + 22, y, label, 0);
	*next = x + 22 + text_width(cr, label) + 20;
}

void
cca_plot_draw_segments(cairo_t *cr, const CcaPlotStyle *style, const CcaPlotSegments *segs,
		       GString *hover)
{
	double W = style->width;
	rgb(cr, 0xffffff);
	cairo_paint(cr);
	double top;
	titles(cr, style, &top);

	guint n = segs->segments->len;
	GArray *rows = g_array_sized_new(FALSE, TRUE, sizeof(Row), n);
	uint64_t tot_free_stranded = 0, tot_cached = 0, tot_requested = 0, tot_rounding = 0,
		 tot_reserved = 0, largest = 1;
	for (guint i = 0; i < n; i++) {
		const CcaStateSegment *s = &g_array_index(segs->segments, CcaStateSegment, i);
		Row r = {.seg = s};
		for (size_t k = 0; k < s->n_blocks; k++) {
			const CcaStateBlock *b = &s->blocks[k];
			if (b->state == CCA_BLOCK_INACTIVE) {
				r.free += b->size;
			} else {
				r.live += b->size;
				if (b->state == CCA_BLOCK_ACTIVE_ALLOCATED) {
					r.allocated += b->size;
					r.requested += MIN(b->requested_size, b->size);
				}
			}
		}
		if (r.live)
			tot_free_stranded += r.free;
		else
			tot_cached += r.free;
		tot_requested += r.requested;
		tot_rounding += r.allocated - r.requested;
		tot_reserved += s->total_size;
		largest = MAX(largest, s->total_size);
		g_array_append_val(rows, r);
	}
	guint shown = rows_shown(segs);
	if (shown < n) {
		g_array_sort(rows, row_by_free);
		g_array_set_size(rows, shown);
	}
	g_array_sort(rows, row_by_address);

	/* the totals line */
	char a[32], b[32], c[32], d[32], e[32], buf[256];
	g_snprintf(buf, sizeof buf,
		   "%s reserved in %u segments: %s requested, %s rounding, %s free beside live "
		   "blocks, %s in free segments",
		   cca_size_format(tot_reserved, a), n, cca_size_format(tot_requested, b),
		   cca_size_format(tot_rounding, c), cca_size_format(tot_free_stranded, d),
		   cca_size_format(tot_cached, e));
	rgb(cr, 0x303030);
	g_autofree char *totals = fit(cr, buf, 12, W - 40, false);
	text(cr, W / 2, top + 4, totals, 0.5);
	if (shown < n) {
		g_snprintf(
			buf, sizeof buf,
			"(showing the %u of the %u segments with the most free space beside live "
			"blocks, in address order; --max-rows shows more)",
			shown, n);
		font(cr, 11, false);
		rgb(cr, 0x606060);
		text(cr, W / 2, top + 20, buf, 0.5);
	}

	double rh = row_height(shown);
	double label_w = 252, size_w = 54, free_w = 104;
	double bx0 = 16 + label_w + size_w + 8, bx1 = W - 16 - free_w;
	double y = SEG_TOP;
	font(cr, 11, true);
	rgb(cr, 0x303030);
	text(cr, 16, y - 8, "segment (address, size, pool, stream)", 0);
	text(cr, bx0 + (bx1 - bx0) / 2, y - 20, "blocks, from the segment's start to its end", 0.5);
	text(cr, W - 16, y - 8, "free", 1);
	font(cr, 10, false);
	rgb(cr, 0x707070);
	for (int q = 0; q <= 4; q++) {
		double x = bx0 + (bx1 - bx0) * q / 4;
		g_snprintf(buf, sizeof buf, "%d%%", q * 25);
		text(cr, x, y - 5, buf, q == 0 ? 0 : q == 4 ? 1 : 0.5);
	}
	json_t *hover_rows = hover ? json_array() : NULL;
	for (guint i = 0; i < rows->len; i++, y += rh) {
		const Row *r = &g_array_index(rows, Row, i);
		const CcaStateSegment *s = r->seg;
		double bar_h = MAX(rh - 3, 6), by = y + (rh - bar_h) / 2;
		if (i % 2 == 0) {
			rgb(cr, 0xf6f6f6);
			cairo_rectangle(cr, 8, y, W - 16, rh);
			cairo_fill(cr);
		}
		/* label */
		mono(cr, rh >= 12 ? 10 : 8);
		rgb(cr, 0x202020);
		g_snprintf(buf, sizeof buf, "0x%" G_GINT64_MODIFIER "x %10s %s s%" G_GUINT64_FORMAT,
			   s->address, cca_size_format(s->total_size, a),
			   s->is_expandable ? "exp"
			   : s->is_small    ? "S"
					    : "L",
			   s->stream);
		g_autofree char *lab = g_strdup(buf);
		if (text_width(cr, lab) > label_w) {
			g_free(lab);
			g_snprintf(buf, sizeof buf, "%10s %s", cca_size_format(s->total_size, a),
				   s->is_expandable ? "exp"
				   : s->is_small    ? "S"
						    : "L");
			lab = g_strdup(buf);
		}
		text(cr, 16, by + bar_h - 1.5, lab, 0);
		/* size relative to the largest segment */
		rgb(cr, 0x808080);
		cairo_rectangle(cr, 16 + label_w, by + bar_h / 2 - 2,
				MAX(1.0, (size_w - 8) * (double)s->total_size / (double)largest),
				4);
		cairo_fill(cr);
		/* blocks: one fill per colour, contiguous runs merged */
		double span = bx1 - bx0;
		static const guint32 colours[] = {C_REQUESTED, C_ROUNDING, C_PENDING, C_STRANDED,
						  C_CACHED};
		for (size_t ci = 0; ci < G_N_ELEMENTS(colours); ci++) {
			double run0 = 0, run1 = -1;
			bool any = false;
			for (size_t k = 0; k < s->n_blocks; k++) {
				const CcaStateBlock *blk = &s->blocks[k];
				double x = bx0 + span * (double)(blk->address - s->address) /
							 s->total_size;
				double w = span * (double)blk->size / s->total_size;
				double a0 = x, a1 = x + w; /* the part of this colour */
				if (blk->state == CCA_BLOCK_INACTIVE) {
					if (colours[ci] != (r->live ? C_STRANDED : C_CACHED))
						continue;
				} else if (blk->state == CCA_BLOCK_ACTIVE_PENDING_FREE) {
					if (colours[ci] != C_PENDING)
						continue;
				} else {
					uint64_t req = MIN(blk->requested_size, blk->size);
					double wr = span * (double)req / s->total_size;
					if (colours[ci] == C_REQUESTED)
						a1 = x + wr;
					else if (colours[ci] == C_ROUNDING)
						a0 = x + wr;
					else
						continue;
				}
				a0 = round(a0 * 4) / 4;
				a1 = round(a1 * 4) / 4;
				if (a1 <= a0)
					continue;
				if (any && a0 <= run1 + 1e-9) {
					run1 = a1;
					continue;
				}
				if (any)
					cairo_rectangle(cr, run0, by, run1 - run0, bar_h);
				run0 = a0;
				run1 = a1;
				any = true;
			}
			if (any) {
				cairo_rectangle(cr, run0, by, run1 - run0, bar_h);
				rgb(cr, colours[ci]);
				cairo_fill(cr);
			}
		}
		/* thin boundaries between blocks wide enough to show them, and
		 * the sizes of wide blocks */
		bool bounds = false;
		for (size_t k = 1; k < s->n_blocks; k++) {
			const CcaStateBlock *blk = &s->blocks[k];
			double x = bx0 + span * (double)(blk->address - s->address) / s->total_size;
			if (span * (double)blk->size / s->total_size >= 3) {
				cairo_rectangle(cr, round(x * 4) / 4, by, 0.75, bar_h);
				bounds = true;
			}
		}
		if (bounds) {
			rgb(cr, 0xffffff);
			cairo_fill(cr);
		}
		for (size_t k = 0; k < s->n_blocks; k++) {
			const CcaStateBlock *blk = &s->blocks[k];
			double x = bx0 + span * (double)(blk->address - s->address) / s->total_size;
			double w = span * (double)blk->size / s->total_size;
			if (w < 64 || bar_h < 11)
				continue;
			font(cr, 10, false);
			cca_size_format(blk->size, a);
			if (text_width(cr, a) + 6 >= w)
				continue;
			rgb(cr, blk->state == CCA_BLOCK_INACTIVE ? 0x303030 : 0xffffff);
			text(cr, x + w / 2, by + bar_h / 2 + 3.6, a, 0.5);
		}
		rgb(cr, 0x909090);
		cairo_set_line_width(cr, 0.6);
		cairo_rectangle(cr, bx0, by, span, bar_h);
		cairo_stroke(cr);
		/* free bytes */
		font(cr, rh >= 12 ? 10 : 8, false);
		rgb(cr, r->free ? 0x202020 : 0x909090);
		text(cr, W - 16, by + bar_h - 1.5, cca_size_format(r->free, a), 1);
		if (hover) {
			g_snprintf(buf, sizeof buf,
				   "0x%" G_GINT64_MODIFIER
				   "x: %s %s-pool segment%s, stream %" G_GUINT64_FORMAT
				   "; %zu block(s); %s requested, %s rounding, %s free",
				   s->address, cca_size_format(s->total_size, a),
				   s->is_small ? "small" : "large",
				   s->is_expandable ? " (expandable)" : "", s->stream, s->n_blocks,
				   cca_size_format(r->requested, b),
				   cca_size_format(r->allocated - r->requested, c),
				   cca_size_format(r->free, d));
			json_array_append_new(hover_rows,
					      json_pack("{s:o, s:o, s:o}", "y0", cca_json_real(y),
							"y1", cca_json_real(y + rh), "text",
							cca_json_string(buf)));
		}
	}
	if (hover) {
		json_t *o = json_object();
		json_object_set_new(o, "kind", json_string("segments"));
		json_object_set_new(o, "svgw", cca_json_real(W));
		json_object_set_new(o, "svgh", json_integer(cca_plot_segments_height(style, segs)));
		json_object_set_new(o, "rows", hover_rows);
		cca_json_append(hover, o);
	}

	/* legend */
	double ly = y + 28, lx = 16;
	font(cr, 11, false);
	legend_box(cr, lx, ly, C_REQUESTED, "allocated: requested bytes", &lx);
	legend_box(cr, lx, ly, C_ROUNDING, "allocated beyond the request (rounding, unsplit tail)",
		   &lx);
	legend_box(cr, lx, ly, C_PENDING, "freed, waiting for record_stream", &lx);
	lx = 16;
	ly += 20;
	legend_box(cr, lx, ly, C_STRANDED, "free beside live blocks (external fragmentation)", &lx);
	legend_box(cr, lx, ly, C_CACHED, "free segment (empty_cache() releases it)", &lx);
	font(cr, 10, false);
	rgb(cr, 0x606060);
	text(cr, W - 16, ly, "bars span the full width; grey mini-bar: size vs largest", 1);
	g_array_free(rows, TRUE);
}

/* ------------------------------------------------------------ output */

/* ------------------------------------------------------------ the state a segment map draws */

/* The state at the reserved peak, or after entry AT as `ccasim step
 * --at` shows it (CcaStepAt, stepview.h). */
typedef struct {
	CcaStepAt where;
	bool at_peak;	 /* AT unknown: the reserved peak (figures.h) */
	bool peak_found; /* at_peak: the first replay found it; copy it there */
	CcaFigures figures;
	uint64_t shown;
	GArray *state;
	bool done;	/* STATE is the answer */
	bool at_finish; /* STATE taken when the replay ended */
} PlotCapture;

static void
plot_capture_act(PlotCapture *c, CcaStepAtAction action, const CcaAllocator *alloc)
{
	if (action == CCA_STEP_AT_WAIT)
		return;
	if (action != CCA_STEP_AT_KEEP) {
		cca_allocator_state_free(c->state);
		c->state = cca_allocator_state(alloc);
		c->shown = c->where.shown;
	}
	c->done = action != CCA_STEP_AT_HOLD;
}

static void
plot_capture_before(void *data, uint64_t index, const CcaEvent *ev, const CcaAllocator *alloc)
{
	PlotCapture *c = data;
	if (!c->done)
		plot_capture_act(c, cca_stepview_at_before(&c->where, index, ev), alloc);
}

static void
plot_capture_observer(void *data, uint64_t index, const CcaEvent *ev, const CcaAllocator *alloc)
{
	PlotCapture *c = data;
	if (c->at_peak) {	    /* the same moment every command names */
		if (!c->peak_found) /* the first replay finds it */
			cca_figures_observe(&c->figures, index, ev, alloc);
		else if (index == c->figures.reserved_peak.index && !c->done) {
			c->state = cca_allocator_state(alloc); /* the second copies it */
			c->shown = index;
			c->done = true;
		}
		return;
	}
	if (!c->done)
		plot_capture_act(c, cca_stepview_at_observe(&c->where, index), alloc);
}

static void
plot_capture_finish(void *data, const CcaAllocator *alloc)
{
	PlotCapture *c = data;
	if (c->at_peak || c->done)
		return;
	plot_capture_act(c, cca_stepview_at_finish(&c->where), alloc);
	c->at_finish = c->done;
}

gboolean
cca_plot_segments_state(const CcaSnapshot *snap, const CcaReplayOptions *opt, bool at_peak,
			uint64_t at, GArray **state, uint64_t *shown, bool *whatif, GError **error)
{
	/* one replay up to AT only; at the reserved peak, one to find it and
	 * one stopped there that copies the state (once, however often the
	 * peak rose), from one plan */
	PlotCapture c = {.at_peak = at_peak};
	cca_stepview_at_init(&c.where, at);
	CcaReplayOptions o = *opt;
	g_autoptr(CcaPlan) own_plan = NULL;
	if (at_peak && !o.plan) {
		own_plan =
			cca_plan_new(snap, opt->device, opt->pytorch_version, opt->rewind, error);
		if (!own_plan)
			return FALSE;
		o.plan = own_plan;
	}
	o.observer = plot_capture_observer;
	o.observer_data = &c;
	if (!at_peak) {
		o.before_request = plot_capture_before;
		o.before_request_data = &c;
		o.on_finish = plot_capture_finish;
		o.on_finish_data = &c;
		o.stop_after = at + 1;
	}
	CcaReplayResult res;
	gboolean ok = cca_replay_run(snap, &o, &res, error);
	if (ok && at_peak && c.figures.reserved_peak.seen) {
		cca_replay_result_clear(&res);
		c.peak_found = true;
		o.stop_after = c.figures.reserved_peak.index + 1;
		ok = cca_replay_run(snap, &o, &res, error);
	}
	/* a copy held that nothing confirmed, or taken when the replay stopped
	 * early (it never got to AT) */
	if (!c.done || (ok && c.at_finish && (res.stopped_by_oom || res.diverged_from_recording)))
		cca_allocator_state_free(g_steal_pointer(&c.state));
	if (!ok) {
		cca_allocator_state_free(c.state);
		return FALSE;
	}
	if (whatif)
		*whatif = res.whatif;
	cca_replay_result_clear(&res);
	*state = c.state;
	*shown = c.shown;
	return TRUE;
}

gboolean
cca_plot_format_from_path(const char *path, CcaPlotFormat *format, GError **error)
{
	const char *dot = strrchr(path, '.');
	const char *ext = dot ? dot + 1 : "";
	if (g_ascii_strcasecmp(ext, "svg") == 0)
		*format = CCA_PLOT_SVG;
	else if (g_ascii_strcasecmp(ext, "png") == 0)
		*format = CCA_PLOT_PNG;
	else if (g_ascii_strcasecmp(ext, "pdf") == 0)
		*format = CCA_PLOT_PDF;
	else if (g_ascii_strcasecmp(ext, "html") == 0 || g_ascii_strcasecmp(ext, "htm") == 0)
		*format = CCA_PLOT_HTML;
	else {
		g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
			    "%s: unknown image type (use .svg, .png, .pdf or .html)", path);
		return FALSE;
	}
	return TRUE;
}

static cairo_status_t
write_file(void *closure, const unsigned char *data, unsigned int length)
{
	return fwrite(data, 1, length, closure) == length ? CAIRO_STATUS_SUCCESS
							  : CAIRO_STATUS_WRITE_ERROR;
}

static cairo_status_t
write_gstring(void *closure, const unsigned char *data, unsigned int length)
{
	g_string_append_len(closure, (const char *)data, length);
	return CAIRO_STATUS_SUCCESS;
}

/* The plot page's script: the values under the mouse, from the hover
 * data block (cca_plot_draw_timeline() or _segments()); when done, #plot
 * says data-status="ready" (tests read it). */
static const char html_script[] =
	"\n'use strict';\n"
	"(function () {\n"
	"  var D = JSON.parse(document.getElementById('hover').textContent);\n"
	"  var svg = document.querySelector('#plot svg'), tip = document.getElementById('tip');\n"
	"  function fmt(b) {\n"
	"    if (b < 0) return '-';\n"
	"    var u = ['B', 'KiB', 'MiB', 'GiB', 'TiB'], i = 0;\n"
	"    while (b >= 1024 && i < 4) { b /= 1024; i++; }\n"
	"    return b.toFixed(i ? 2 : 0) + ' ' + u[i];\n"
	"  }\n"
	"  function esc(s) { return String(s).replace(/[&<>\"']/g, function (c) {\n"
	"    return {'&': '&amp;', '<': '&lt;', '>': '&gt;', '\"': '&quot;', \"'\": '&#39;'}[c]; }); }\n"
	"  function at(e) {\n"
	"    var r = svg.getBoundingClientRect();\n"
	"    var x = (e.clientX - r.left) * D.svgw / r.width, y = (e.clientY - r.top) * D.svgh / "
	"r.height;\n"
	"    if (D.kind === 'segments') {\n"
	"      for (var i = 0; i < D.rows.length; i++)\n"
	"        if (y >= D.rows[i].y0 && y < D.rows[i].y1) return esc(D.rows[i].text);\n"
	"      return null;\n"
	"    }\n"
	"    if (x < D.left || x > D.left + D.width || y < D.top || y > D.top + D.height) "
	"return null;\n"
	"    var c = Math.floor(x - D.left), best = null;\n"
	"    for (var k = 0; k < D.cols.length; k++)\n"
	"      if (best === null || Math.abs(D.cols[k][0] - c) < Math.abs(best[0] - c)) best = "
	"D.cols[k];\n"
	"    if (!best) return null;\n"
	"    var h = (D.x_time ? 't = ' + best[1].toFixed(3) + ' s' : 'event ' + "
	"Math.round(best[1])) + '<table>';\n"
	"    h += '<tr><th></th><th>reserved</th><th>allocated</th><th>active</th></tr>';\n"
	"    for (var r = 0; r < D.runs.length; r++)\n"
	"      h += '<tr><td>' + esc(D.runs[r]) + '</td><td>' + fmt(best[2][r][0]) + "
	"'</td><td>' +\n"
	"        fmt(best[2][r][1]) + '</td><td>' + fmt(best[2][r][2]) + '</td></tr>';\n"
	"    return h + '</table>';\n"
	"  }\n"
	"  if (svg && D.kind) {\n"
	"    svg.addEventListener('mousemove', function (e) {\n"
	"      var h = at(e);\n"
	"      if (!h) { tip.style.display = 'none'; return; }\n"
	"      tip.innerHTML = h; tip.style.display = 'block';\n"
	"      tip.style.left = (e.pageX + 14) + 'px'; tip.style.top = (e.pageY + 14) + 'px';\n"
	"    });\n"
	"    svg.addEventListener('mouseleave', function () { tip.style.display = 'none'; });\n"
	"  }\n"
	"  document.getElementById('plot').setAttribute('data-status', 'ready');\n"
	"})();\n";

static const char html_style[] =
	"\nbody { font-family: 'DejaVu Sans', sans-serif; margin: 16px; }\n"
	"#plot svg { max-width: 100%; height: auto; }\n"
	"#tip { position: absolute; display: none; background: #fffff4; border: 1px "
	"solid #999;\n  padding: 6px 8px; font-size: 12px; pointer-events: none; "
	"box-shadow: 2px 2px 4px #0003; }\n"
	"#tip td, #tip th { padding: 1px 6px; text-align: right; }\n";

/* Writes the page: the SVG inline (its text escaped by svg_text_append()),
 * the hover values as a JSON data block, the script; every part through
 * html.h. */
static void
write_html(FILE *f, const char *title, const GString *svg, const GString *hover)
{
	const char *body = svg->str;
	const char *decl = strstr(body, "?>");
	if (g_str_has_prefix(body, "<?xml") && decl)
		body = decl + 2;
	const CcaHtmlPage page = {
		.title = title ? title : "ccasim plot",
		.style = html_style,
		.script = html_script,
	};
	cca_html_put_head(f, &page);
	fputs("<div id=\"plot\">", f);
	fputs(body, f);
	fputs("</div>\n<div id=\"tip\"></div>\n", f);
	cca_html_put_json(f, "hover", hover->len ? hover->str : "{}");
	cca_html_put_script_and_end(f, &page);
}

gboolean
cca_plot_write(const char *path, CcaPlotFormat format, int width, int height, const char *title,
	       CcaPlotDrawFunc draw, void *data, GError **error)
{
	char *tmp = NULL;
	FILE *f = cca_outfile_open(path, &tmp, error);
	if (!f)
		return FALSE;
	cairo_surface_t *surface = NULL;
	GString *svg = NULL, *hover = NULL;
	switch (format) {
	case CCA_PLOT_SVG: /* the text goes in after cairo's SVG */
		svg = g_string_new(NULL);
		surface = cairo_svg_surface_create_for_stream(write_gstring, svg, width, height);
		break;
	case CCA_PLOT_HTML:
		svg = g_string_new(NULL);
		hover = g_string_new(NULL);
		surface = cairo_svg_surface_create_for_stream(write_gstring, svg, width, height);
		break;
	case CCA_PLOT_PDF:
		surface = cairo_pdf_surface_create_for_stream(write_file, f, width, height);
		break;
	case CCA_PLOT_PNG:
		surface = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, width, height);
		break;
	}
	if (format == CCA_PLOT_SVG || format == CCA_PLOT_HTML)
		cairo_svg_surface_set_document_unit(surface, CAIRO_SVG_UNIT_PX);
	if (format == CCA_PLOT_SVG || format == CCA_PLOT_HTML)
		svg_text = g_string_new(NULL);
	cairo_t *cr = cairo_create(surface);
	draw(cr, data, hover);
	cairo_status_t status = cairo_status(cr);
	cairo_destroy(cr);
	if (status == CAIRO_STATUS_SUCCESS && format == CCA_PLOT_PNG)
		status = cairo_surface_write_to_png_stream(surface, write_file, f);
	cairo_surface_finish(surface);
	if (status == CAIRO_STATUS_SUCCESS)
		status = cairo_surface_status(surface);
	cairo_surface_destroy(surface);
	/* cairo and fontconfig keep fonts cached for the process's life; one
	 * image per process, so hand them back now (both start afresh if
	 * asked again) */
	cairo_debug_reset_static_data();
	FcFini();
	if (svg_text && svg) {
		/* the text elements last, over the drawing, before </svg> */
		const char *end = g_strrstr(svg->str, "</svg>");
		if (end)
			g_string_insert(svg, end - svg->str, svg_text->str);
		g_string_free(svg_text, TRUE);
		svg_text = NULL;
	}
	if (status == CAIRO_STATUS_SUCCESS && format == CCA_PLOT_SVG)
		fputs(svg->str, f);
	if (status == CAIRO_STATUS_SUCCESS && format == CCA_PLOT_HTML)
		write_html(f, title, svg, hover);
	if (svg)
		g_string_free(svg, TRUE);
	if (hover)
		g_string_free(hover, TRUE);
	/* a failed write is the file's error: cca_outfile_close() names it */
	gboolean ok =
		status == CAIRO_STATUS_SUCCESS || (status == CAIRO_STATUS_WRITE_ERROR && ferror(f));
	if (!ok)
		g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_IO, "%s: cairo: %s", path,
			    cairo_status_to_string(status));
	return cca_outfile_close(f, tmp, path, ok, error);
}
