/* htmlview.c - the offline HTML page of `ccasim view`.
 *
 * Each run is replayed once; an observer appends the change points of
 * reserved, allocated and active bytes (the entry index and the new value,
 * as varint deltas) and, for the first run and each run of another
 * snapshot (a rank), a model-event hook appends the log of the model's
 * segment and block events with the entry that caused each.  An alloc
 * record carries the block's size besides the request's: the model's
 * events hold the request alone, so the records of one entry wait in a
 * small batch until the observer sees the allocated bytes after it (the
 * block is that change plus the blocks the entry freed, whose sizes a
 * table of the live blocks keeps).  A trace that starts mid-run begins
 * with its rebuilt state, written as records of its first entry.  Memory
 * is that of the encoded streams (a few bytes per entry) and of the live
 * blocks, whatever the trace's length: the streams go out as the replay
 * goes, in frames, through one zlib deflate stream (gzip, level
 * DATA_LEVEL) and base64 into the page, which is written to a temporary
 * file renamed over the page at the end.  The page's script (htmlview.js,
 * built into htmlview-js.h) decodes them with the browser's own
 * DecompressionStream.  The counts and the page's other facts (the JSON
 * "meta" after the data) are known at the end only.
 *
 * The binary layout (all integers LEB128 varints; "z" ones zigzag-coded):
 * a sequence of frames: STREAM, LENGTH, then LENGTH bytes of that stream;
 * the bytes of one stream are the concatenation of its frames, in order.
 * Stream 4 r + s (s = 0, 1, 2) is run r's series s (reserved, allocated,
 * active), 4 r + 3 run r's log, if it has one.
 *   a series (its COUNT in meta's runs[r].counts): COUNT pairs (index -
 *     previous index, z value - previous value), both previous starting
 *     at 0.  The active series shares its first runs[r].active_shared
 *     points with the allocated one (the points up to the first entry
 *     where a block waited for its stream): its stream holds the points
 *     after them, the first relative to the last shared point;
 *   a log (its COUNT in meta's logs[j].count; the first run's, then each
 *     other snapshot's): COUNT records: KIND (one byte, enum LogKind),
 *     z (cause - previous cause), then for a free: the records since its
 *     alloc's record, whose address it has, or 0 (an alloc the log does
 *     not hold) and z (address - previous address); for the others:
 *     z (address - previous address), then by kind: segment alloc or map:
 *     size, stream; segment free or unmap: size; alloc: size, z (block
 *     size - size), stream, stack + 1 (0: none), user_metadata + 1 (0:
 *     none; an index into the log's "metadata"); oom: size.
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
#include "rules.h"
#include "size.h"

static const char htmlview_js[] =
#include "htmlview-js.h"
	;

static const char htmlview_css[] =
#include "htmlview-css.h"
	;

enum {
	SERIES = 3,
	/* streams per run: its series and its log */
	RUN_STREAMS = SERIES + 1,
	/* a stream's bytes go out in frames of about this size */
	FRAME_BYTES = 256 * 1024,
	/* bytes of deflate output per line of base64 (a multiple of 3: no
	 * padding inside) */
	BASE64_LINE = 57 * 1024,
};

/* The zlib level of the page's data, chosen by measurement (doc/view.md,
 * "Data and size"): against level 6 it takes 40 % of the compression's
 * CPU for data 12 % larger, which the browser inflates as fast. */
#define DATA_LEVEL 4

typedef enum {
	LOG_SEGMENT_ALLOC = 0,
	LOG_SEGMENT_FREE,
	LOG_SEGMENT_MAP,
	LOG_SEGMENT_UNMAP,
	LOG_ALLOC,
	LOG_FREE,
	LOG_OOM,
} LogKind;

/* The snapshot's pinned host memory (2.14+ host_segments and
 * host_traces), shown as info shows it and not simulated; null when the
 * snapshot has neither key. */
static json_t *
host_json(const CcaSnapshot *snap)
{
	const CcaSnapshotNewer *n = &snap->newer;
	if (n->host_segments < 0 && n->host_traces < 0)
		return json_null();
	json_t *o = json_object();
	json_object_set_new(o, "segments", json_integer(MAX(n->host_segments, 0)));
	json_object_set_new(o, "bytes", json_integer(MAX(n->host_bytes, 0)));
	json_object_set_new(o, "traces", json_integer(MAX(n->host_traces, 0)));
	return o;
}

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

/* ------------------------------------------------------ the data out */

/* The page's data as it goes out: frames through one deflate stream
 * (gzip) into base64 lines of F. */
typedef struct {
	FILE *f;
	z_stream z;
	bool started, failed;
	guint8 *line; /* deflate output not yet in base64, < BASE64_LINE */
	gsize line_len;
	uint64_t bytes; /* deflate output so far */
} DataOut;

static gboolean
data_start(DataOut *d, FILE *f, GError **error)
{
	memset(d, 0, sizeof *d);
	d->f = f;
	if (deflateInit2(&d->z, DATA_LEVEL, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
		g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_NOMEM, "zlib: cannot compress");
		return FALSE;
	}
	d->started = true;
	d->line = g_malloc(BASE64_LINE);
	return TRUE;
}

/* Writes the base64 of the deflate output held as one line. */
static void
data_line(DataOut *d)
{
	if (!d->line_len)
		return;
	g_autofree char *b = g_base64_encode(d->line, d->line_len);
	fputs(b, d->f);
	fputc('\n', d->f);
	d->line_len = 0;
}

/* Deflates N bytes at P (FLUSH: Z_NO_FLUSH, or Z_FINISH at the end). */
static void
data_deflate(DataOut *d, const guint8 *p, gsize n, int flush)
{
	if (d->failed)
		return;
	guint8 buf[1 << 16];
	d->z.next_in = (guint8 *)p;
	while (true) {
		guint chunk = n > (1u << 30) ? (1u << 30) : (guint)n;
		d->z.avail_in = chunk;
		n -= chunk;
		int rc;
		do {
			d->z.next_out = buf;
			d->z.avail_out = sizeof buf;
			rc = deflate(&d->z, n ? Z_NO_FLUSH : flush);
			if (rc == Z_STREAM_ERROR) {
				d->failed = true;
				return;
			}
			gsize got = sizeof buf - d->z.avail_out;
			d->bytes += got;
			for (gsize off = 0; off < got;) {
				gsize k = MIN(got - off, BASE64_LINE - d->line_len);
				memcpy(d->line + d->line_len, buf + off, k);
				d->line_len += k;
				off += k;
				if (d->line_len == BASE64_LINE)
					data_line(d);
			}
		} while (d->z.avail_out == 0 || (flush == Z_FINISH && !n && rc != Z_STREAM_END));
		if (!n)
			return;
	}
}

static void
data_put_varint(DataOut *d, uint64_t v)
{
	guint8 buf[10];
	guint n = 0;
	do {
		guint8 byte = v & 0x7f;
		v >>= 7;
		buf[n++] = byte | (v ? 0x80 : 0);
	} while (v);
	data_deflate(d, buf, n, Z_NO_FLUSH);
}

/* Sends B's bytes as a frame of stream ID and empties B. */
static void
data_frame(DataOut *d, guint id, GByteArray *b)
{
	if (!b || !b->len)
		return;
	data_put_varint(d, id);
	data_put_varint(d, b->len);
	data_deflate(d, b->data, b->len, Z_NO_FLUSH);
	g_byte_array_set_size(b, 0);
}

/* Ends the deflate stream and writes what is left of it; FALSE with
 * ERROR if zlib failed. */
static gboolean
data_finish(DataOut *d, GError **error)
{
	data_deflate(d, NULL, 0, Z_FINISH);
	data_line(d);
	if (d->failed) {
		g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_FAILED, "zlib: compression failed");
		return FALSE;
	}
	return TRUE;
}

static void
data_clear(DataOut *d)
{
	if (d->started)
		deflateEnd(&d->z);
	g_free(d->line);
	d->started = false;
	d->line = NULL;
}

/* ----------------------------------------------------------- one run */

typedef struct {
	GByteArray *pts; /* change points */
	uint64_t count;
	uint64_t last_index;
	int64_t last_value;
	bool any;
	bool held; /* the points are the allocated series': not written */
} Series;

/* One model record of the entry being handled, before its block size is
 * known. */
typedef struct {
	guint8 kind; /* LogKind */
	uint64_t cause, addr, size, stream;
	guint stack, meta;
} Pending;

typedef struct {
	const CcaSnapshot *snap;
	int device;
	DataOut *out;
	guint first_stream; /* its streams: FIRST_STREAM + 0 .. RUN_STREAMS - 1 */
	Series series[SERIES];
	uint64_t active_shared; /* the active series' points shared with allocated */
	uint64_t peak[SERIES];
	uint64_t peak_index[SERIES];
	int64_t last_index;
	json_t *ooms; /* entry indices */
	uint64_t n_ooms;
	uint64_t cap;
	/* a run with a log (the first, and each rank's) */
	GByteArray *log; /* NULL: no log */
	uint64_t log_count;
	uint64_t log_cause, log_addr;
	GArray *pending;      /* Pending: the records since the last flush */
	GHashTable *live;     /* block address -> block size + 1 */
	GHashTable *live_rec; /* block address -> its alloc's record + 1 */
	int64_t allocated;    /* allocated bytes at the last flush */
	bool seeded;	      /* the state at the trace's start is written */
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
	if (!s->held) {
		put_varint(s->pts, index - (s->any ? s->last_index : 0));
		put_zigzag(s->pts, value - (s->any ? s->last_value : 0));
	}
	s->last_index = index;
	s->last_value = value;
	s->any = true;
	s->count++;
}

/* Writes one record of the log. BLOCK: an alloc's block size. */
static void
log_put(Run *r, const Pending *p, uint64_t block)
{
	if (p->kind == LOG_ALLOC)
		g_hash_table_insert(r->live_rec, GSIZE_TO_POINTER(p->addr),
				    GSIZE_TO_POINTER(r->log_count + 1));
	g_byte_array_append(r->log, &p->kind, 1);
	put_zigzag(r->log, (int64_t)(p->cause - r->log_cause));
	r->log_cause = p->cause;
	if (p->kind == LOG_FREE) {
		/* the alloc's record holds the address */
		gsize rec = GPOINTER_TO_SIZE(
			g_hash_table_lookup(r->live_rec, GSIZE_TO_POINTER(p->addr)));
		put_varint(r->log, rec ? r->log_count - (rec - 1) : 0);
		if (!rec)
			put_zigzag(r->log, (int64_t)(p->addr - r->log_addr));
		g_hash_table_remove(r->live_rec, GSIZE_TO_POINTER(p->addr));
		r->log_addr = p->addr;
		r->log_count++;
		return;
	}
	put_zigzag(r->log, (int64_t)(p->addr - r->log_addr));
	r->log_addr = p->addr;
	switch ((LogKind)p->kind) {
	case LOG_SEGMENT_ALLOC:
	case LOG_SEGMENT_MAP:
		put_varint(r->log, p->size);
		put_varint(r->log, p->stream);
		break;
	case LOG_SEGMENT_FREE:
	case LOG_SEGMENT_UNMAP:
	case LOG_OOM:
		put_varint(r->log, p->size);
		break;
	case LOG_ALLOC:
		put_varint(r->log, p->size);
		put_zigzag(r->log, (int64_t)(block - p->size));
		put_varint(r->log, p->stream);
		put_varint(r->log, p->stack);
		put_varint(r->log, p->meta);
		break;
	case LOG_FREE:
		break;
	}
	r->log_count++;
}

/* Writes the batch of records: the allocated bytes went from r->allocated
 * to ALLOCATED over it, so its alloc's block is that change plus the
 * blocks its frees released.  An entry makes one alloc at most; were
 * there more, all but the last would take the rounded request
 * (cca_allocator_round_size()) and the last the rest. */
static void
run_flush(Run *r, const CcaAllocator *alloc, int64_t allocated)
{
	if (!r->log)
		return;
	GArray *pend = r->pending;
	int64_t change = allocated - r->allocated;
	r->allocated = allocated;
	guint last_alloc = G_MAXUINT;
	int64_t others = 0;
	for (guint i = 0; i < pend->len; i++) {
		const Pending *p = &g_array_index(pend, Pending, i);
		gsize held = p->kind == LOG_FREE ? GPOINTER_TO_SIZE(g_hash_table_lookup(
							   r->live, GSIZE_TO_POINTER(p->addr)))
						 : 0;
		if (held)
			change += (int64_t)(held - 1);
		if (p->kind == LOG_ALLOC)
			last_alloc = i;
	}
	for (guint i = 0; i < pend->len; i++) {
		const Pending *p = &g_array_index(pend, Pending, i);
		uint64_t block = 0;
		if (p->kind == LOG_ALLOC) {
			if (i == last_alloc)
				block = change - others >= (int64_t)p->size
						? (uint64_t)(change - others)
						: cca_allocator_round_size(alloc, p->size);
			else
				block = cca_allocator_round_size(alloc, p->size);
			others += (int64_t)block;
			g_hash_table_insert(r->live, GSIZE_TO_POINTER(p->addr),
					    GSIZE_TO_POINTER(block + 1));
		} else if (p->kind == LOG_FREE) {
			g_hash_table_remove(r->live, GSIZE_TO_POINTER(p->addr));
		}
		log_put(r, p, block);
	}
	g_array_set_size(pend, 0);
}

/* Sends R's streams that hold a frame's worth (all that they hold when
 * ALL) to the page's data. */
static void
run_spill(Run *r, bool all)
{
	for (int s = 0; s < SERIES; s++)
		if (all || r->series[s].pts->len >= FRAME_BYTES)
			data_frame(r->out, r->first_stream + s, r->series[s].pts);
	if (r->log && (all || r->log->len >= FRAME_BYTES))
		data_frame(r->out, r->first_stream + SERIES, r->log);
}

/* Writes the model's state before the first entry (a trace that started
 * mid-run) as records of entry INDEX: its segments and live blocks. */
static void
run_seed(Run *r, uint64_t index, const CcaAllocator *alloc)
{
	r->seeded = true;
	const CcaStats *st = cca_allocator_stats(alloc);
	r->allocated = st->allocated_bytes[CCA_STAT_ALL].current;
	if (!r->log || st->reserved_bytes[CCA_STAT_ALL].current == 0)
		return;
	GArray *state = cca_allocator_state(alloc);
	for (guint i = 0; i < state->len; i++) {
		const CcaStateSegment *s = &g_array_index(state, CcaStateSegment, i);
		Pending p = {s->is_expandable ? LOG_SEGMENT_MAP : LOG_SEGMENT_ALLOC,
			     index,
			     s->address,
			     s->total_size,
			     s->stream,
			     0,
			     0};
		log_put(r, &p, 0);
		for (size_t k = 0; k < s->n_blocks; k++) {
			const CcaStateBlock *b = &s->blocks[k];
			if (b->state == CCA_BLOCK_INACTIVE)
				continue;
			Pending q = {LOG_ALLOC, index, b->address, b->requested_size,
				     s->stream, 0,     0};
			log_put(r, &q, b->size);
			g_hash_table_insert(r->live, GSIZE_TO_POINTER(b->address),
					    GSIZE_TO_POINTER(b->size + 1));
		}
	}
	cca_allocator_state_free(state);
}

static void
run_before(void *data, uint64_t index, const CcaEvent *ev, const CcaAllocator *alloc)
{
	Run *r = data;
	(void)ev;
	if (!r->seeded)
		run_seed(r, index, alloc);
}

static void
run_finish(void *data, const CcaAllocator *alloc)
{
	Run *r = data;
	const CcaStats *st = cca_allocator_stats(alloc);
	if (!r->seeded)
		r->seeded = true;
	run_flush(r, alloc, st->allocated_bytes[CCA_STAT_ALL].current);
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
	if (!r->seeded)
		r->seeded = true; /* no request came first: nothing was rebuilt */
	run_flush(r, alloc, v[1]);
	/* the engine never restarts a replay (replay.h); entries go forward */
	if ((int64_t)index <= r->last_index)
		return;
	r->last_index = (int64_t)index;
	/* active bytes the same as allocated all along so far (no block
	 * waited for its stream): the allocated series' points stand for it */
	if (r->series[2].held && v[2] != v[1]) {
		r->series[2].held = false;
		r->active_shared = r->series[2].count;
	}
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
	run_spill(r, false);
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
	uint64_t c = cause != CCA_REPLAY_NO_CAUSE ? cause
		     : r->pending->len
			     ? g_array_index(r->pending, Pending, r->pending->len - 1).cause
			     : r->log_cause;
	Pending p = {(guint8)kind, c, ev->addr, ev->size, ev->stream, 0, 0};
	if (kind == LOG_ALLOC && trace) {
		p.stack = run_stack(r, trace->stack);
		p.meta = run_metadata(r, trace->user_metadata);
	}
	g_array_append_val(r->pending, p);
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
	if (r->log) {
		g_byte_array_free(r->log, TRUE);
		g_array_free(r->pending, TRUE);
		g_hash_table_destroy(r->live);
		g_hash_table_destroy(r->live_rec);
	}
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

/* Starts run R of SNAP's device D, with a log when LOG, whose streams
 * (FIRST_STREAM on) go to OUT. */
static void
run_init(Run *r, const CcaSnapshot *snap, int d, bool log, DataOut *out, guint first_stream)
{
	r->snap = snap;
	r->device = d;
	r->out = out;
	r->first_stream = first_stream;
	r->last_index = -1;
	r->ooms = json_array();
	for (int s = 0; s < SERIES; s++)
		r->series[s].pts = g_byte_array_new();
	r->series[2].held = true;
	if (!log)
		return;
	r->log = g_byte_array_new();
	r->pending = g_array_new(FALSE, FALSE, sizeof(Pending));
	r->live = g_hash_table_new(NULL, NULL);
	r->live_rec = g_hash_table_new(NULL, NULL);
	r->stacks = g_hash_table_new(NULL, NULL);
	r->frames = g_hash_table_new(NULL, NULL);
	r->metadata = g_hash_table_new(NULL, NULL);
	r->stack_list = json_array();
	r->frame_list = json_array();
	r->meta_list = json_array();
	guint na = snap->annotations ? snap->annotations->len : 0;
	uint64_t n_events = d >= 0 && d < snap->n_devices ? snap->n_events[d] : 0;
	if (na) {
		r->ann_order = g_array_new(FALSE, FALSE, sizeof(guint));
		r->ann_index = g_new0(uint64_t, na);
		for (guint a = 0; a < na; a++) {
			const CcaAnnotation *an =
				&g_array_index(snap->annotations, CcaAnnotation, a);
			if (an->device == d && an->time_us != CCA_TIME_NONE) {
				r->ann_index[a] = n_events ? n_events - 1 : 0;
				g_array_append_val(r->ann_order, a);
			}
		}
		sort_snap = snap;
		g_array_sort(r->ann_order, annotation_by_time);
	}
}

gboolean
cca_htmlview_write(const CcaSnapshot *snap, const CcaReplayOptions *opt, const CcaHtmlviewRun *runs,
		   guint n_runs, const char *title, const char *peak_json, const char *path,
		   CcaHtmlviewResult *result, GError **error)
{
	memset(result, 0, sizeof *result);
	g_return_val_if_fail(n_runs >= 1 && n_runs <= CCA_HTMLVIEW_MAX_RUNS, FALSE);
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
	/* the page goes out as the replays go: its data first, the facts
	 * known at the end (meta) after it */
	char *tmp = NULL;
	FILE *f = cca_outfile_open(path, &tmp, error);
	if (!f) {
		json_decref(peak);
		return FALSE;
	}
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
	cca_html_put_data_start(f, "application/octet-stream", "data");
	fputc('\n', f);
	DataOut out;
	gboolean ok = data_start(&out, f, error);
	Run *rs = g_new0(Run, n_runs);
	json_t *meta = json_object(), *jruns = json_array(), *jlogs = json_array();
	guint n_logs = 0;
	for (guint i = 0; i < n_runs && ok; i++) {
		Run *r = &rs[i];
		const CcaSnapshot *s = runs[i].snap ? runs[i].snap : snap;
		const CcaReplayOptions *ro = runs[i].opt ? runs[i].opt : opt;
		int d = ro->device;
		uint64_t n_events = d >= 0 && d < s->n_devices ? s->n_events[d] : 0;
		result->n_events = MAX(result->n_events, n_events);
		/* a log per snapshot: the first run's, and each rank's */
		bool log = i == 0 || (runs[i].snap && runs[i].snap != snap);
		run_init(r, s, d, log, &out, i * RUN_STREAMS);
		CcaReplayOptions o = *ro;
		o.settings = runs[i].settings;
		o.observer = run_observer;
		o.observer_data = r;
		o.on_model_event = run_model;
		o.on_model_event_data = r;
		if (log) {
			o.before_request = run_before;
			o.before_request_data = r;
			o.on_finish = run_finish;
			o.on_finish_data = r;
		}
		CcaReplayResult res;
		ok = cca_replay_run(s, &o, &res, error);
		if (!ok)
			break;
		run_spill(r, true);
		if (r->series[2].held)
			r->active_shared = r->series[2].count;
		result->peak_reserved[i] = r->peak[0];
		json_t *jr = json_object();
		json_object_set_new(jr, "label", cca_json_string(runs[i].label));
		json_object_set_new(jr, "log", json_integer(log ? (json_int_t)n_logs : -1));
		json_object_set_new(jr, "n_events", cca_json_uint(n_events));
		/* the data's layout (above) */
		json_object_set_new(jr, "counts",
				    json_pack("[I, I, I]", (json_int_t)r->series[0].count,
					      (json_int_t)r->series[1].count,
					      (json_int_t)r->series[2].count));
		json_object_set_new(jr, "active_shared", cca_json_uint(r->active_shared));
		/* the last entry the run handled: past it the run has no value */
		json_object_set_new(jr, "end", json_integer(r->last_index));
		json_object_set_new(jr, "stopped_by_oom", cca_json_bool(res.stopped_by_oom));
		json_object_set_new(jr, "diverged", cca_json_bool(res.diverged_from_recording));
		json_object_set_new(jr, "peak_reserved", cca_json_uint(r->peak[0]));
		json_object_set_new(jr, "peak_reserved_event", cca_json_uint(r->peak_index[0]));
		json_object_set_new(jr, "peak_allocated", cca_json_uint(r->peak[1]));
		json_object_set_new(jr, "peak_allocated_event", cca_json_uint(r->peak_index[1]));
		json_object_set_new(jr, "peak_active", cca_json_uint(r->peak[2]));
		json_object_set_new(jr, "cap", cca_json_uint(r->cap));
		json_object_set_new(jr, "device_memory", cca_json_uint(ro->device_memory));
		json_object_set_new(jr, "n_ooms", cca_json_uint(r->n_ooms));
		json_object_set_new(jr, "ooms", json_incref(r->ooms));
		json_object_set_new(jr, "whatif", cca_json_bool(res.whatif));
		json_object_set_new(jr, "pytorch_version", cca_json_uint(res.pytorch_version));
		json_object_set_new(jr, "unvalidated",
				    cca_json_bool(cca_rules_for(res.pytorch_version)->unvalidated));
		if (runs[i].extra)
			json_object_update(jr, runs[i].extra);
		json_array_append_new(jruns, jr);
		if (log) {
			json_t *jl = json_object();
			json_t *anns = json_array();
			annotations_json(r, anns);
			json_object_set_new(jl, "run", json_integer(i));
			json_object_set_new(jl, "trace", cca_json_string(s->source));
			json_object_set_new(jl, "device", json_integer(d));
			json_object_set_new(jl, "n_events", cca_json_uint(n_events));
			json_object_set_new(jl, "count", cca_json_uint(r->log_count));
			json_object_set_new(jl, "annotations", anns);
			json_object_set_new(jl, "frames", json_incref(r->frame_list));
			json_object_set_new(jl, "stacks", json_incref(r->stack_list));
			json_object_set_new(jl, "metadata", json_incref(r->meta_list));
			json_array_append_new(jlogs, jl);
			result->log_records += r->log_count;
			n_logs++;
		}
		cca_replay_result_clear(&res);
	}
	if (ok)
		ok = data_finish(&out, error);
	result->data_bytes = out.bytes;
	data_clear(&out);
	if (ok) {
		cca_html_put_data_end(f);
		const CcaHtmlviewRun *r0 = &runs[0];
		const CcaSnapshot *s0 = r0->snap ? r0->snap : snap;
		json_object_set_new(meta, "title", cca_json_string(page.title));
		json_object_set_new(meta, "trace", cca_json_string(s0->source));
		json_object_set_new(meta, "device",
				    json_integer(r0->opt ? r0->opt->device : opt->device));
		json_object_set_new(meta, "n_events", cca_json_uint(result->n_events));
		json_object_set_new(meta, "host", host_json(s0));
		json_object_set_new(meta, "runs", jruns);
		json_object_set_new(meta, "logs", jlogs);
		json_object_set_new(meta, "peak", peak ? peak : json_null());
		peak = NULL;
		jruns = jlogs = NULL;
		char *m = json_dumps(meta, JSON_COMPACT | JSON_ENSURE_ASCII);
		cca_html_put_json(f, "meta", m ? m : "{}");
		free(m);
		cca_html_put_script_and_end(f, &page);
		long size = ftell(f);
		result->page_bytes = size > 0 ? (uint64_t)size : 0;
	}
	/* on error the temporary file goes: no partial page */
	ok = cca_outfile_close(f, tmp, path, ok, error);
	json_decref(meta);
	json_decref(jruns);
	json_decref(jlogs);
	json_decref(peak);
	for (guint i = 0; i < n_runs; i++)
		run_clear(&rs[i]);
	g_free(rs);
	return ok;
}
