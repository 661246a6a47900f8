/* fuzz-html.c - libFuzzer target for the HTML pages ccasim writes.
 *
 * The bytes are cut at each NUL into strings, which fill, in turn (the
 * list repeated when short): the two runs' labels (where the recorded
 * PYTORCH_CUDA_ALLOC_CONF goes), a frame's name and filename, an
 * annotation's name, an allocation's user_metadata, the title and the
 * trace's file name.  A four-entry trace (a segment, one block allocated
 * and freed, under the annotation) built in memory with those strings is
 * written as `view`'s page (cca_htmlview_write(), with the peak
 * attribution of its frames) and as `plot`'s HTML timeline
 * (cca_plot_write()); the first byte's low bit picks which.  A trace the
 * replay refuses (an annotation named "ccasim:..." is a recorded call) is
 * a result; a writer failing on a trace that replayed aborts.  The page
 * must hold exactly the writer's own script elements (as many
 * "</script" as "<script", case ignored), no "<!--" anywhere, no raw
 * U+2028/U+2029 inside a script element, and a Content-Security-Policy
 * naming the hash of its inline script; otherwise the target aborts.
 */
#include "config.h"

#include <glib.h>
#include <glib/gstdio.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "html.h"
#include "htmlview.h"
#include "json.h"
#include "peak.h"
#include "plot.h"
#include "replay.h"
#include "snapshot.h"
#include "timeline.h"

const char cca_fuzz_target[] = "html";

enum {
	FIELD_LABEL0,
	FIELD_LABEL1,
	FIELD_FRAME,
	FIELD_FILE,
	FIELD_ANNOTATION,
	FIELD_METADATA,
	FIELD_TITLE,
	FIELD_SOURCE,
	N_FIELDS
};

#define ADDR ((uint64_t)1 << 32)
#define SEGMENT ((uint64_t)2 << 20)

static void
push(GArray *events, CcaAction action, uint64_t size, int64_t t, uint32_t stack, uint32_t meta)
{
	CcaEvent ev = {0};
	ev.action = (uint8_t)action;
	ev.addr = ADDR;
	ev.size = size;
	ev.time_us = t;
	ev.stack = stack;
	ev.compile_context = CCA_ID_NONE;
	ev.user_metadata = meta;
	g_array_append_val(events, ev);
}

/* The trace: one 2 MiB segment whose 512-byte block is allocated and
 * freed inside annotation F[FIELD_ANNOTATION]; the final state holds the
 * free segment. */
static CcaSnapshot *
make_snapshot(char **f)
{
	CcaSnapshot *snap = cca_snapshot_new();
	snap->source = g_strdup(f[FIELD_SOURCE]);
	CcaFrame frame = {
		.name = cca_snapshot_intern(snap, f[FIELD_FRAME], strlen(f[FIELD_FRAME])),
		.filename = cca_snapshot_intern(snap, f[FIELD_FILE], strlen(f[FIELD_FILE])),
		.line = 1,
	};
	g_array_append_val(snap->frames, frame);
	uint32_t frame_id = snap->frames->len - 1, end = 1;
	g_array_append_val(snap->stack_frames, frame_id);
	g_array_append_val(snap->stack_offsets, end); /* stack 1: [frame] */
	uint32_t meta = cca_snapshot_intern(snap, f[FIELD_METADATA], strlen(f[FIELD_METADATA]));
	uint32_t name = cca_snapshot_intern(snap, f[FIELD_ANNOTATION], strlen(f[FIELD_ANNOTATION]));
	CcaAnnotation start = {cca_snapshot_intern(snap, "START", 5), name, 0, 1};
	CcaAnnotation stop = {cca_snapshot_intern(snap, "END", 3), name, 0, 3};
	g_array_append_val(snap->annotations, start);
	g_array_append_val(snap->annotations, stop);

	snap->n_devices = 1;
	snap->events = g_new0(GArray *, 1);
	snap->n_events = g_new0(uint64_t, 1);
	GArray *ev = g_array_new(FALSE, TRUE, sizeof(CcaEvent));
	push(ev, CCA_ACTION_SEGMENT_ALLOC, SEGMENT, 1, 1, CCA_ID_NONE);
	push(ev, CCA_ACTION_ALLOC, 512, 2, 1, meta);
	push(ev, CCA_ACTION_FREE_REQUESTED, 512, 3, 1, CCA_ID_NONE);
	push(ev, CCA_ACTION_FREE_COMPLETED, 512, 4, 1, CCA_ID_NONE);
	snap->events[0] = ev;
	snap->n_events[0] = ev->len;

	CcaSnapSegment seg = {
		.address = ADDR, .total_size = SEGMENT, .is_small = true, .n_blocks = 1};
	CcaSnapBlock blk = {.address = ADDR, .size = SEGMENT, .state = CCA_BLOCK_INACTIVE};
	g_array_append_val(snap->segments, seg);
	g_array_append_val(snap->blocks, blk);
	return snap;
}

/* Where ASCII-case-insensitive NEEDLE first occurs in [P, END), or NULL. */
static const char *
find(const char *p, const char *end, const char *needle)
{
	size_t n = strlen(needle);
	for (; p + n <= end; p++)
		if (g_ascii_strncasecmp(p, needle, n) == 0)
			return p;
	return NULL;
}

static size_t
count(const char *p, const char *end, const char *needle)
{
	size_t n = 0;
	while ((p = find(p, end, needle)) != NULL) {
		n++;
		p++;
	}
	return n;
}

/* Aborts unless PAGE (LEN bytes) holds SCRIPTS script elements and no
 * more, no comment opener, no raw U+2028/U+2029 in a script element, and
 * a policy with the hash of its one inline script. */
static void
check_page(const char *page, size_t len, size_t scripts)
{
	const char *end = page + len;
	if (count(page, end, "<script") != scripts || count(page, end, "</script") != scripts)
		abort(); /* a script element opened or closed by the input */
	if (find(page, end, "<!--") != NULL)
		abort();
	const char *csp = find(page, end, "<meta http-equiv=\"Content-Security-Policy\"");
	const char *style = find(page, end, "<style");
	if (csp == NULL || style == NULL || csp > style)
		abort();
	const char *inline_script = NULL;
	for (const char *p = page; (p = find(p, end, "<script")) != NULL;) {
		const char *body = memchr(p, '>', (size_t)(end - p));
		const char *close = body ? find(body, end, "</script") : NULL;
		if (close == NULL)
			abort();
		body++;
		for (const char *q = body; q + 2 < close; q++)
			if ((unsigned char)q[0] == 0xe2 && (unsigned char)q[1] == 0x80 &&
			    ((unsigned char)q[2] == 0xa8 || (unsigned char)q[2] == 0xa9))
				abort();
		if (body - p == (ptrdiff_t)strlen("<script>")) {
			g_autofree char *code = g_strndup(body, (gsize)(close - body));
			g_autofree char *hash = cca_html_hash(code);
			const char *csp_end = memchr(csp, '>', (size_t)(end - csp));
			if (inline_script || !csp_end || !find(csp, csp_end, hash))
				abort(); /* two inline scripts, or one the policy refuses */
			inline_script = body;
		}
		p = close + 1;
	}
	if (inline_script == NULL)
		abort();
}

typedef struct {
	const CcaPlotStyle *style;
	const CcaPlotRun *runs;
} Drawing;

static void
draw(cairo_t *cr, void *data, GString *hover)
{
	const Drawing *d = data;
	cca_plot_draw_timeline(cr, d->style, d->runs, 2, hover);
}

static gboolean
write_plot(const CcaSnapshot *snap, char **f, const char *path)
{
	CcaReplayOptions opt;
	CcaTimeline tls[2];
	CcaPlotRun runs[2] = {0};
	cca_replay_options_init(&opt);
	memset(tls, 0, sizeof tls);
	for (int r = 0; r < 2; r++) {
		if (!cca_timeline_collect(snap, &opt, 64, &tls[r], NULL)) {
			/* refused: an annotation named "ccasim:..." is a recorded call */
			for (int k = 0; k < r; k++)
				cca_timeline_clear(&tls[k]);
			return FALSE;
		}
		runs[r].label = f[FIELD_LABEL0 + r];
		runs[r].tl = &tls[r];
	}
	CcaPlotStyle style = {
		.title = f[FIELD_TITLE],
		.subtitle = f[FIELD_LABEL0],
		.width = 640,
		.height = 400,
	};
	Drawing d = {&style, runs};
	if (!cca_plot_write(path, CCA_PLOT_HTML, style.width, style.height, f[FIELD_TITLE], draw,
			    &d, NULL))
		abort(); /* the trace replayed: no string may make the writer fail */
	for (int r = 0; r < 2; r++)
		cca_timeline_clear(&tls[r]);
	return TRUE;
}

static gboolean
write_view(const CcaSnapshot *snap, char **f, const char *path)
{
	CcaReplayOptions opt;
	CcaReplayResult pres;
	cca_replay_options_init(&opt);
	CcaPeak *peak = cca_peak_collect(snap, &opt, &pres, NULL);
	if (peak == NULL)
		return FALSE; /* refused, as in write_plot() */
	json_t *o = cca_peak_to_json(peak, &pres.stats);
	char *peak_json = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	cca_peak_free(peak);
	cca_replay_result_clear(&pres);
	const CcaHtmlviewRun runs[2] = {{f[FIELD_LABEL0], NULL}, {f[FIELD_LABEL1], NULL}};
	CcaHtmlviewResult res;
	if (!cca_htmlview_write(snap, &opt, runs, 2, f[FIELD_TITLE], peak_json, path, &res, NULL))
		abort(); /* the trace replayed: no string may make the writer fail */
	free(peak_json);
	return TRUE;
}

/* The directory the pages are written to, one per process. */
static char *dir;

static void
remove_dir(void)
{
	g_rmdir(dir);
	g_free(dir);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (dir == NULL) {
		if ((dir = g_dir_make_tmp("ccasim-fuzz-html-XXXXXX", NULL)) == NULL)
			abort();
		atexit(remove_dir);
	}
	if (size == 0)
		return 0;
	gboolean plot = data[0] & 1;
	/* the strings: cut at NULs, repeated to fill every field */
	GPtrArray *parts = g_ptr_array_new_with_free_func(g_free);
	const char *p = (const char *)data + 1, *end = (const char *)data + size;
	while (p <= end) {
		const char *nul = memchr(p, '\0', (size_t)(end - p));
		const char *stop = nul ? nul : end;
		g_ptr_array_add(parts, g_strndup(p, (gsize)(stop - p)));
		p = stop + 1;
	}
	char *f[N_FIELDS];
	for (guint i = 0; i < N_FIELDS; i++)
		f[i] = g_ptr_array_index(parts, i % parts->len);

	CcaSnapshot *snap = make_snapshot(f);
	g_autofree char *path = g_build_filename(dir, plot ? "p.html" : "v.html", NULL);
	if (plot ? write_plot(snap, f, path) : write_view(snap, f, path)) {
		char *page = NULL;
		gsize len = 0;
		if (!g_file_get_contents(path, &page, &len, NULL))
			abort();
		check_page(page, len, plot ? 2 : 3);
		g_free(page);
		g_unlink(path);
	}
	cca_snapshot_free(snap);
	g_ptr_array_unref(parts);
	return 0;
}
