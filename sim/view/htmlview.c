/* htmlview.c - the offline HTML page of `ccasim view`.
 *
 * Each run is replayed once; an observer appends the change points of
 * reserved, allocated and active bytes (the entry index and the new value,
 * as varint deltas) and, for the first run, a model-event hook appends the
 * log of the model's segment and block events with the entry that caused
 * each.  Memory is that of the encoded streams (a few bytes per entry),
 * whatever the trace's length.  The streams are gzipped and base64-encoded
 * into the page; the page's script (htmlview.js, built into
 * htmlview-js.h) decodes them with the browser's own DecompressionStream.
 *
 * The binary layout (all integers LEB128 varints; "z" ones zigzag-coded):
 *   per run, per series (reserved, allocated, active): COUNT, then COUNT
 *     pairs (index - previous index, z value - previous value), both
 *     previous starting at 0;
 *   the log: COUNT, then COUNT records: KIND (one byte, enum LogKind),
 *     z (cause - previous cause), z (address - previous address), then
 *     by kind: segment alloc or map: size, stream; segment free or unmap:
 *     size; alloc: size, stream, stack + 1 (0: none), user_metadata + 1
 *     (0: none; an index into the JSON's "metadata"); free: nothing; oom:
 *     size.
 * Invariants: change-point indices strictly increase within a series; a
 * record's cause is the entry that caused it (an event outside any entry
 * takes the previous record's).
 */
#include "config.h"

#include "htmlview.h"

#include "outfile.h"

#include <string.h>
#include <zlib.h>

#include "html.h"
#include "json.h"
#include "size.h"

static const char htmlview_js[] =
#include "htmlview-js.h"
	;

static const char htmlview_css[] =
#include "htmlview-css.h"
	;

enum {
	SERIES = 3
};

typedef enum {
	LOG_SEGMENT_ALLOC = 0,
	LOG_SEGMENT_FREE,
	LOG_SEGMENT_MAP,
	LOG_SEGMENT_UNMAP,
	LOG_ALLOC,
	LOG_FREE,
	LOG_OOM,
} LogKind;

/* ----------------------------------------------------------- varints */

static void
put_varint(GByteArray *b, uint64_t v)
{
	guint8 buf[10];
	guint n = 0;
	do {
		guint8 byte = v & 0x7f;
		v >>= 7;
		buf[n++] = byte | (v ? 0x80 : 0);
	} while (v);
	g_byte_array_append(b, buf, n);
}

static void
put_zigzag(GByteArray *b, int64_t v)
{
	put_varint(b, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63));
}

/* ----------------------------------------------------------- one run */

typedef struct {
	GByteArray *pts; /* change points */
	uint64_t count;
	uint64_t last_index;
	int64_t last_value;
	bool any;
} Series;

typedef struct {
	const CcaSnapshot *snap;
	int device;
	Series series[SERIES];
	uint64_t peak[SERIES];
	uint64_t peak_index[SERIES];
	int64_t last_index;
	json_t *ooms; /* entry indices */
	uint64_t n_ooms;
	uint64_t cap;
	/* the first run only */
	GByteArray *log; /* NULL: no log */
	uint64_t log_count;
	uint64_t log_cause, log_addr;
	GHashTable *stacks;   /* stack id + 1 -> json index + 1 */
	json_t *stack_list;   /* [[frame index]] */
	GHashTable *frames;   /* frame id + 1 -> index + 1 */
	json_t *frame_list;   /* ["name (file:line)"] */
	GHashTable *metadata; /* string id + 1 -> index + 1 */
	json_t *meta_list;
	/* annotations: time -> entry index */
	GArray *ann_order; /* indices into snap->annotations, by time */
	guint ann_next;
	uint64_t *ann_index; /* per annotation: its entry */
} Run;

static void
series_add(Series *s, uint64_t index, int64_t value)
{
	if (s->any && value == s->last_value)
		return;
	put_varint(s->pts, index - (s->any ? s->last_index : 0));
	put_zigzag(s->pts, value - (s->any ? s->last_value : 0));
	s->last_index = index;
	s->last_value = value;
	s->any = true;
	s->count++;
}

static void
run_observer(void *data, uint64_t index, const CcaEvent *ev, const CcaAllocator *alloc)
{
	Run *r = data;
	const CcaStats *st = cca_allocator_stats(alloc);
	int64_t v[SERIES] = {
		st->reserved_bytes[CCA_STAT_ALL].current,
		st->allocated_bytes[CCA_STAT_ALL].current,
		st->active_bytes[CCA_STAT_ALL].current,
	};
	/* the engine never restarts a replay (replay.h); entries go forward */
	if ((int64_t)index <= r->last_index)
		return;
	r->last_index = (int64_t)index;
	for (int s = 0; s < SERIES; s++) {
		series_add(&r->series[s], index, v[s]);
		if ((uint64_t)v[s] > r->peak[s]) {
			r->peak[s] = (uint64_t)v[s];
			r->peak_index[s] = index;
		}
	}
	r->cap = cca_allocator_allowed_maximum(alloc);
	if (r->ann_order && ev->time_us != CCA_TIME_NONE) {
		while (r->ann_next < r->ann_order->len) {
			guint a = g_array_index(r->ann_order, guint, r->ann_next);
			const CcaAnnotation *an =
				&g_array_index(r->snap->annotations, CcaAnnotation, a);
			if (an->time_us > ev->time_us)
				break;
			r->ann_index[a] = index;
			r->ann_next++;
		}
	}
}

/* The JSON index + 1 of frame F, added on first use. */
static guint
run_frame(Run *r, uint32_t f)
{
	gpointer v = g_hash_table_lookup(r->frames, GUINT_TO_POINTER(f + 1));
	if (v)
		return GPOINTER_TO_UINT(v);
	const CcaSnapshot *snap = r->snap;
	const CcaFrame *fr = &g_array_index(snap->frames, CcaFrame, f);
	g_autofree char *s =
		g_strdup_printf("%s (%s:%" G_GINT64_FORMAT ")", cca_snapshot_string(snap, fr->name),
				cca_snapshot_string(snap, fr->filename), fr->line);
	json_array_append_new(r->frame_list, cca_json_string(s));
	guint idx = (guint)json_array_size(r->frame_list);
	g_hash_table_insert(r->frames, GUINT_TO_POINTER(f + 1), GUINT_TO_POINTER(idx));
	return idx;
}

/* The JSON index + 1 of STACK (0: none), added on first use. */
static guint
run_stack(Run *r, uint32_t stack)
{
	const CcaSnapshot *snap = r->snap;
	if (stack == CCA_ID_NONE || stack >= cca_snapshot_n_stacks(snap))
		return 0;
	gpointer v = g_hash_table_lookup(r->stacks, GUINT_TO_POINTER(stack + 1));
	if (v)
		return GPOINTER_TO_UINT(v);
	uint32_t lo = g_array_index(snap->stack_offsets, uint32_t, stack);
	uint32_t hi = g_array_index(snap->stack_offsets, uint32_t, stack + 1);
	json_t *list = json_array();
	for (uint32_t i = lo; i < hi; i++)
		json_array_append_new(
			list,
			json_integer(run_frame(r, g_array_index(snap->stack_frames, uint32_t, i)) -
				     1));
	json_array_append_new(r->stack_list, list);
	guint idx = (guint)json_array_size(r->stack_list);
	g_hash_table_insert(r->stacks, GUINT_TO_POINTER(stack + 1), GUINT_TO_POINTER(idx));
	return idx;
}

static guint
run_metadata(Run *r, uint32_t id)
{
	const char *s = id == CCA_ID_NONE ? NULL : cca_snapshot_string(r->snap, id);
	if (!s || !*s)
		return 0;
	gpointer v = g_hash_table_lookup(r->metadata, GUINT_TO_POINTER(id + 1));
	if (v)
		return GPOINTER_TO_UINT(v);
	json_array_append_new(r->meta_list, cca_json_string(s));
	guint idx = (guint)json_array_size(r->meta_list);
	g_hash_table_insert(r->metadata, GUINT_TO_POINTER(id + 1), GUINT_TO_POINTER(idx));
	return idx;
}

static void
run_model(void *data, uint64_t cause, const CcaEvent *trace, const CcaEvent *ev)
{
	Run *r = data;
	if (ev->action == CCA_ACTION_OOM) {
		uint64_t at = cause != CCA_REPLAY_NO_CAUSE ? cause : r->log_cause;
		if (r->n_ooms++ < 2000)
			json_array_append_new(r->ooms, json_integer((json_int_t)at));
	}
	if (!r->log)
		return;
	LogKind kind;
	switch (ev->action) {
	case CCA_ACTION_SEGMENT_ALLOC:
		kind = LOG_SEGMENT_ALLOC;
		break;
	case CCA_ACTION_SEGMENT_FREE:
		kind = LOG_SEGMENT_FREE;
		break;
	case CCA_ACTION_SEGMENT_MAP:
		kind = LOG_SEGMENT_MAP;
		break;
	case CCA_ACTION_SEGMENT_UNMAP:
		kind = LOG_SEGMENT_UNMAP;
		break;
	case CCA_ACTION_ALLOC:
		kind = LOG_ALLOC;
		break;
	case CCA_ACTION_FREE_COMPLETED:
		kind = LOG_FREE;
		break;
	case CCA_ACTION_OOM:
		kind = LOG_OOM;
		break;
	default:
		return;
	}
	uint64_t c = cause != CCA_REPLAY_NO_CAUSE ? cause : r->log_cause;
	guint8 k = (guint8)kind;
	g_byte_array_append(r->log, &k, 1);
	put_zigzag(r->log, (int64_t)(c - r->log_cause));
	put_zigzag(r->log, (int64_t)(ev->addr - r->log_addr));
	r->log_cause = c;
	r->log_addr = ev->addr;
	switch (kind) {
	case LOG_SEGMENT_ALLOC:
	case LOG_SEGMENT_MAP:
		put_varint(r->log, ev->size);
		put_varint(r->log, ev->stream);
		break;
	case LOG_SEGMENT_FREE:
	case LOG_SEGMENT_UNMAP:
	case LOG_OOM:
		put_varint(r->log, ev->size);
		break;
	case LOG_ALLOC:
		put_varint(r->log, ev->size);
		put_varint(r->log, ev->stream);
		put_varint(r->log, trace ? run_stack(r, trace->stack) : 0);
		put_varint(r->log, trace ? run_metadata(r, trace->user_metadata) : 0);
		break;
	case LOG_FREE:
		break;
	}
	r->log_count++;
}

static const CcaSnapshot *sort_snap;

static gint
annotation_by_time(gconstpointer a, gconstpointer b)
{
	const CcaAnnotation *x =
		&g_array_index(sort_snap->annotations, CcaAnnotation, *(const guint *)a);
	const CcaAnnotation *y =
		&g_array_index(sort_snap->annotations, CcaAnnotation, *(const guint *)b);
	if (x->time_us != y->time_us)
		return x->time_us < y->time_us ? -1 : 1;
	return *(const guint *)a < *(const guint *)b ? -1 : 1;
}

static void
run_clear(Run *r)
{
	for (int s = 0; s < SERIES; s++)
		if (r->series[s].pts)
			g_byte_array_free(r->series[s].pts, TRUE);
	if (r->log)
		g_byte_array_free(r->log, TRUE);
	json_decref(r->ooms);
	if (r->stacks) {
		g_hash_table_destroy(r->stacks);
		g_hash_table_destroy(r->frames);
		g_hash_table_destroy(r->metadata);
		json_decref(r->stack_list);
		json_decref(r->frame_list);
		json_decref(r->meta_list);
	}
	if (r->ann_order)
		g_array_free(r->ann_order, TRUE);
	g_free(r->ann_index);
}

/* --------------------------------------------------------- the page */

/* Appends the page's annotations (START/END pairs of one name become one
 * range; others are points) of R's device to ARR. */
static void
annotations_json(const Run *r, json_t *arr)
{
	const CcaSnapshot *snap = r->snap;
	if (!r->ann_order)
		return;
	GHashTable *open = g_hash_table_new_full(NULL, NULL, NULL, (GDestroyNotify)g_array_unref);
	for (guint i = 0; i < r->ann_order->len; i++) {
		guint a = g_array_index(r->ann_order, guint, i);
		const CcaAnnotation *an = &g_array_index(snap->annotations, CcaAnnotation, a);
		const char *name = cca_snapshot_string(snap, an->name);
		const char *stage = cca_snapshot_string(snap, an->stage);
		uint64_t at = r->ann_index[a];
		gpointer key = GUINT_TO_POINTER(an->name + 1);
		if (strcmp(stage, "START") == 0 && !g_str_has_prefix(name, "ccasim:")) {
			GArray *st = g_hash_table_lookup(open, key);
			if (!st) {
				st = g_array_new(FALSE, FALSE, sizeof(uint64_t));
				g_hash_table_insert(open, key, st);
			}
			g_array_append_val(st, at);
			continue;
		}
		if (strcmp(stage, "END") == 0 && !g_str_has_prefix(name, "ccasim:")) {
			GArray *st = g_hash_table_lookup(open, key);
			if (!st || st->len == 0)
				continue;
			uint64_t from = g_array_index(st, uint64_t, st->len - 1);
			g_array_set_size(st, st->len - 1);
			json_array_append_new(
				arr, json_pack("{s:o, s:I, s:I}", "name", cca_json_string(name),
					       "start", (json_int_t)from, "end", (json_int_t)at));
			continue;
		}
		json_array_append_new(arr,
				      json_pack("{s:o, s:I, s:I}", "name", cca_json_string(name),
						"start", (json_int_t)at, "end", (json_int_t)at));
	}
	g_hash_table_destroy(open);
}

/* Gzips IN (RFC 1952, for DecompressionStream("gzip")). */
static gboolean
gzip_bytes(const GByteArray *in, GByteArray *out, GError **error)
{
	z_stream z;
	memset(&z, 0, sizeof z);
	if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
		g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_NOMEM, "zlib: cannot compress");
		return FALSE;
	}
	z.next_in = in->data;
	z.avail_in = 0;
	gsize left = in->len;
	guint8 buf[1 << 16];
	int rc;
	do {
		if (z.avail_in == 0 && left) {
			guint chunk = left > (1u << 30) ? (1u << 30) : (guint)left;
			z.avail_in = chunk;
			left -= chunk;
		}
		z.next_out = buf;
		z.avail_out = sizeof buf;
		rc = deflate(&z, left || z.avail_in ? Z_NO_FLUSH : Z_FINISH);
		g_byte_array_append(out, buf, (guint)(sizeof buf - z.avail_out));
	} while (rc == Z_OK || rc == Z_BUF_ERROR);
	deflateEnd(&z);
	if (rc != Z_STREAM_END) {
		g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_FAILED, "zlib: compression failed");
		return FALSE;
	}
	return TRUE;
}

/* Writes base64 of DATA into F in lines (no whole copy in memory). */
static void
put_base64(FILE *f, const guint8 *data, gsize len)
{
	const gsize chunk = 57 * 1024; /* a multiple of 3: no padding inside */
	for (gsize off = 0; off < len; off += chunk) {
		gsize n = MIN(chunk, len - off);
		g_autofree char *b = g_base64_encode(data + off, n);
		fputs(b, f);
		fputc('\n', f);
	}
}

gboolean
cca_htmlview_write(const CcaSnapshot *snap, const CcaReplayOptions *opt, const CcaHtmlviewRun *runs,
		   guint n_runs, const char *title, const char *peak_json, const char *path,
		   CcaHtmlviewResult *result, GError **error)
{
	memset(result, 0, sizeof *result);
	json_t *peak = NULL;
	if (peak_json) {
		json_error_t jerr;
		peak = json_loads(peak_json, 0, &jerr);
		if (!peak || !json_is_object(peak)) {
			g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_INVAL, "peak attribution: %s",
				    peak ? "not a JSON object" : jerr.text);
			json_decref(peak);
			return FALSE;
		}
	}
	int d = opt->device;
	result->n_events = d >= 0 && d < snap->n_devices ? snap->n_events[d] : 0;
	Run *rs = g_new0(Run, n_runs);
	gboolean ok = TRUE;
	GByteArray *raw = g_byte_array_new();
	json_t *meta = json_object(), *jruns = json_array(), *anns = json_array();
	for (guint i = 0; i < n_runs && ok; i++) {
		Run *r = &rs[i];
		r->snap = snap;
		r->device = d;
		r->last_index = -1;
		r->ooms = json_array();
		for (int s = 0; s < SERIES; s++)
			r->series[s].pts = g_byte_array_new();
		if (i == 0) {
			r->log = g_byte_array_new();
			r->stacks = g_hash_table_new(NULL, NULL);
			r->frames = g_hash_table_new(NULL, NULL);
			r->metadata = g_hash_table_new(NULL, NULL);
			r->stack_list = json_array();
			r->frame_list = json_array();
			r->meta_list = json_array();
			guint na = snap->annotations ? snap->annotations->len : 0;
			if (na) {
				r->ann_order = g_array_new(FALSE, FALSE, sizeof(guint));
				r->ann_index = g_new0(uint64_t, na);
				for (guint a = 0; a < na; a++) {
					const CcaAnnotation *an =
						&g_array_index(snap->annotations, CcaAnnotation, a);
					if (an->device == d && an->time_us != CCA_TIME_NONE) {
						r->ann_index[a] =
							result->n_events ? result->n_events - 1 : 0;
						g_array_append_val(r->ann_order, a);
					}
				}
				sort_snap = snap;
				g_array_sort(r->ann_order, annotation_by_time);
			}
		}
		CcaReplayOptions o = *opt;
		o.settings = runs[i].settings;
		o.observer = run_observer;
		o.observer_data = r;
		o.on_model_event = run_model;
		o.on_model_event_data = r;
		CcaReplayResult res;
		ok = cca_replay_run(snap, &o, &res, error);
		if (!ok)
			break;
		for (int s = 0; s < SERIES; s++) {
			put_varint(raw, r->series[s].count);
			g_byte_array_append(raw, r->series[s].pts->data, r->series[s].pts->len);
		}
		if (i < G_N_ELEMENTS(result->peak_reserved))
			result->peak_reserved[i] = r->peak[0];
		json_t *jr = json_object();
		json_object_set_new(jr, "label", cca_json_string(runs[i].label));
		json_object_set_new(jr, "peak_reserved", cca_json_uint(r->peak[0]));
		json_object_set_new(jr, "peak_reserved_event", cca_json_uint(r->peak_index[0]));
		json_object_set_new(jr, "peak_allocated", cca_json_uint(r->peak[1]));
		json_object_set_new(jr, "peak_allocated_event", cca_json_uint(r->peak_index[1]));
		json_object_set_new(jr, "peak_active", cca_json_uint(r->peak[2]));
		json_object_set_new(jr, "cap", cca_json_uint(r->cap));
		json_object_set_new(jr, "n_ooms", cca_json_uint(r->n_ooms));
		json_object_set_new(jr, "ooms", json_incref(r->ooms));
		json_object_set_new(jr, "whatif", cca_json_bool(res.whatif));
		json_array_append_new(jruns, jr);
		cca_replay_result_clear(&res);
	}
	GByteArray *gz = g_byte_array_new();
	if (ok) {
		Run *r0 = &rs[0];
		put_varint(raw, r0->log_count);
		g_byte_array_append(raw, r0->log->data, r0->log->len);
		result->log_records = r0->log_count;
		annotations_json(r0, anns);
		ok = gzip_bytes(raw, gz, error);
		result->data_bytes = gz->len;
		json_object_set_new(meta, "title", cca_json_string(title ? title : "ccasim view"));
		json_object_set_new(meta, "trace", cca_json_string(snap->source));
		json_object_set_new(meta, "device", json_integer(d));
		json_object_set_new(meta, "n_events", cca_json_uint(result->n_events));
		json_object_set_new(meta, "runs", jruns);
		json_object_set_new(meta, "annotations", anns);
		json_object_set_new(meta, "frames", json_incref(r0->frame_list));
		json_object_set_new(meta, "stacks", json_incref(r0->stack_list));
		json_object_set_new(meta, "metadata", json_incref(r0->meta_list));
		json_object_set_new(meta, "peak", peak ? peak : json_null());
		peak = NULL;
		jruns = anns = NULL;
	}
	char *tmp = NULL;
	FILE *f = ok ? cca_outfile_open(path, &tmp, error) : NULL;
	if (f) {
		const CcaHtmlPage page = {
			.title = title ? title : "ccasim view",
			.style = htmlview_css,
			.script = htmlview_js,
		};
		cca_html_put_head(f, &page);
		fputs("<pre id=\"js-errors\"></pre>\n<h1 id=\"title\">", f);
		cca_html_put_text(f, page.title);
		fputs("</h1>\n<div id=\"app\" data-status=\"loading\">Loading&hellip; (this page "
		      "needs JavaScript)</div>\n",
		      f);
		char *m = json_dumps(meta, JSON_COMPACT | JSON_ENSURE_ASCII);
		cca_html_put_json(f, "meta", m ? m : "{}");
		free(m);
		cca_html_put_data_start(f, "application/octet-stream", "data");
		fputc('\n', f);
		put_base64(f, gz->data, gz->len); /* base64: nothing to escape */
		cca_html_put_data_end(f);
		cca_html_put_script_and_end(f, &page);
		long size = ftell(f);
		result->page_bytes = size > 0 ? (uint64_t)size : 0;
		ok = cca_outfile_close(f, tmp, path, TRUE, error);
	} else {
		ok = FALSE;
	}
	json_decref(meta);
	json_decref(jruns);
	json_decref(anns);
	json_decref(peak);
	g_byte_array_free(gz, TRUE);
	g_byte_array_free(raw, TRUE);
	for (guint i = 0; i < n_runs; i++)
		run_clear(&rs[i]);
	g_free(rs);
	return ok;
}
