/* trace.c - ccasim's msgpack trace format: the streaming reader.
 *
 * Layout (doc/trace-format.md is the reference): a sequence of msgpack
 * objects
 *   header map, strings[], frames[], stacks[], segments[], annotations[],
 *   then for each device an array of events
 * where every table entry and every event is a fixed-position array.
 * The bytes are decoded by trace_codec.h; the writer is trace_write.c and
 * the store of encoded events trace_events.c.
 *
 * The whole file is held in memory (mapped or decompressed) and
 * owned by the snapshot.  Invariants the reader establishes before it
 * returns a snapshot:
 *  - every container count was checked against the bytes that remain
 *    before anything was allocated for it;
 *  - every string/frame/stack id is below its table's size, every action
 *    below CCA_ACTION_COUNT, every block state a CcaBlockState;
 *  - each device's event array was walked once and the file ends exactly
 *    after the last device's events.
 * A load checks every event's fields there and then (decoding each
 * once, then again per cursor step), unless it streams
 * (cca_trace_load_input_streaming()): then the walk reads the events'
 * shape alone, a cursor decodes and checks each event as it reads it
 * (the hot path: a small hand-written bounds-checked decoder), and
 * cca_event_cursor_check() decodes those no cursor read to the end, with
 * the error the load would have given.  msgpack-c's unpacker is only
 * used for the header map, after its extent was validated.
 */
#include "config.h"

#include <msgpack.h>
#include <stdarg.h>
#include <string.h>

#include "input.h"
#include "text.h"
#include "trace.h"
#include "trace_codec.h"

/* ------------------------------------------------------------------ */
/* The reader's private state and its cursors                          */
/* ------------------------------------------------------------------ */

/* What a streamed snapshot keeps: the file's bytes and where each
 * device's events begin. */
typedef struct {
	CcaInput input;		   /* owned; the bytes everything points into */
	char *origin;		   /* header "source", or NULL */
	const unsigned char **dev; /* [n_devices] first byte of device d's first event */
	CcaTraceLimits limits;
	/* [n_devices] (atomic): 1 once every event of device d was decoded
	 * and checked, by the load, a cursor that got to its end or
	 * cca_trace_check_device() */
	gint *checked;
	/* A load that took the header's counts.pool_id_entries walked every
	 * device but the last with events, TAIL (-1: none; it walked them
	 * all): that device's events must end at TAIL_END (where the empty
	 * arrays of the devices after it begin) with TAIL_POOLS pool_ids,
	 * which its cursor or cca_trace_check_device() checks. */
	int tail;
	const unsigned char *tail_end;
	uint64_t tail_pools;
} CcaTracePriv;

static void
cca_trace_priv_free(void *data)
{
	CcaTracePriv *priv = data;
	if (priv == NULL)
		return;
	cca_input_clear(&priv->input);
	g_free(priv->origin);
	g_free(priv->dev);
	g_free(priv->checked);
	g_free(priv);
}

/* One cursor over one device's events. */
typedef struct {
	CcaMp r;
	const CcaTracePriv *priv;
	uint64_t index; /* events returned so far */
	uint64_t n;	/* events of the device */
	int device;
	size_t released; /* mapped bytes before this offset were given back */
	uint64_t pools;	 /* events with a pool_id so far */
} CcaTraceCursor;

static CcaSnapshot *cca_trace_load(CcaInput *input, gboolean streaming, GError **error);

/* Whether device D's events, read to R (the byte after the last) with
 * POOLS pool_ids, end where the load took them to end (CcaTracePriv's
 * tail); else FALSE with the error the full load gives for the file
 * (cca_trace_load_input()'s, the same whichever load read it). */
static gboolean
cca_trace_tail_ok(const CcaTracePriv *priv, int d, const unsigned char *r, uint64_t pools,
		  GError **error)
{
	if (d != priv->tail || (r == priv->tail_end && pools == priv->tail_pools))
		return TRUE;
	/* the same bytes, borrowed, through the full load */
	CcaInput view = {.data = priv->input.data,
			 .len = priv->input.len,
			 .path = g_strdup(priv->input.path)};
	GError *full = NULL;
	CcaSnapshot *snap = cca_trace_load(&view, FALSE, &full);
	if (snap != NULL) { /* not reached: the full load checks what the tail does */
		cca_snapshot_free(snap);
		cca_trace_codec_error(error, CCA_INPUT_ERROR_CORRUPT,
				      priv->input.path ? priv->input.path : "(trace)",
				      (size_t)(r - priv->input.data), NULL,
				      "device %d's events do not end where the header says", d);
		return FALSE;
	}
	g_propagate_error(error, full);
	return FALSE;
}

static gboolean
cca_trace_cursor_next(void *state, CcaEvent *out, GError **error)
{
	CcaTraceCursor *c = state;
	CcaMpFault f;
	if (c->index >= c->n)
		return FALSE;
	if (G_UNLIKELY(cca_trace_decode_event(&c->r, &c->priv->limits, out, &f))) {
		g_autofree char *ctx = g_strdup_printf("event %" G_GUINT64_FORMAT " of device %d",
						       c->index, c->device);
		cca_trace_codec_fault(error, &f, c->priv->input.path, c->priv->input.data, c->r.end,
				      ctx);
		c->n = c->index; /* stay at the end after an error */
		return FALSE;
	}
	c->pools += out->has_pool_id;
	if (G_UNLIKELY(++c->index == c->n)) {
		if (!cca_trace_tail_ok(c->priv, c->device, c->r.p, c->pools, error)) {
			c->n = c->index - 1; /* the last event is not given */
			return FALSE;
		}
		g_atomic_int_set(&c->priv->checked[c->device], 1);
	}
	/* a streamed trace is never resident whole: pages behind go back */
	if (G_UNLIKELY((c->index & 0xffff) == 0))
		c->released = cca_input_release_behind(&c->priv->input, c->released,
						       (size_t)(c->r.p - c->priv->input.data));
	return TRUE;
}

static guint
cca_trace_cursor_next_many(void *state, CcaEvent *out, guint n, GError **error)
{
	guint got = 0;
	while (got < n && cca_trace_cursor_next(state, &out[got], error))
		got++;
	return got;
}

static void
cca_trace_cursor_free(void *state)
{
	g_free(state);
}

static const CcaCursorOps cca_trace_cursor_ops = {
	.next = cca_trace_cursor_next,
	.next_many = cca_trace_cursor_next_many,
	.free = cca_trace_cursor_free,
};

/* The snapshot's stream_cursor_new. */
static void *
cca_trace_cursor_new(const CcaSnapshot *snap, int device, const CcaCursorOps **ops)
{
	const CcaTracePriv *priv = snap->stream_priv;
	g_return_val_if_fail(priv != NULL && device >= 0 && device < snap->n_devices, NULL);
	CcaTraceCursor *c = g_new0(CcaTraceCursor, 1);
	c->priv = priv;
	c->r.p = priv->dev[device];
	c->r.end = priv->input.data + priv->input.len;
	c->n = snap->n_events[device];
	c->device = device;
	*ops = &cca_trace_cursor_ops;
	return c;
}

/* The snapshot's stream_check: decodes and checks every event of DEVICE
 * unless that was done already, with the load's error for the first bad
 * one. */
static gboolean
cca_trace_check_device(const CcaSnapshot *snap, int device, GError **error)
{
	const CcaTracePriv *priv = snap->stream_priv;
	g_return_val_if_fail(priv != NULL && device >= 0 && device < snap->n_devices, FALSE);
	if (g_atomic_int_get(&priv->checked[device]))
		return TRUE;
	CcaMp r = {.p = priv->dev[device], .end = priv->input.data + priv->input.len};
	size_t released = 0;
	uint64_t pools = 0;
	for (uint64_t i = 0; i < snap->n_events[device]; i++) {
		CcaEvent ev;
		CcaMpFault f;
		if (G_UNLIKELY(cca_trace_decode_event(&r, &priv->limits, &ev, &f))) {
			g_autofree char *ctx = g_strdup_printf(
				"event %" G_GUINT64_FORMAT " of device %d", i, device);
			cca_trace_codec_fault(error, &f,
					      priv->input.path ? priv->input.path : "(trace)",
					      priv->input.data, r.end, ctx);
			return FALSE;
		}
		pools += ev.has_pool_id;
		if (G_UNLIKELY((i & 0xffff) == 0xffff))
			released = cca_input_release_behind(&priv->input, released,
							    (size_t)(r.p - priv->input.data));
	}
	if (!cca_trace_tail_ok(priv, device, r.p, pools, error))
		return FALSE;
	g_atomic_int_set(&priv->checked[device], 1);
	return TRUE;
}

const char *
cca_trace_origin(const CcaSnapshot *snap)
{
	if (snap->stream_priv_free == cca_trace_priv_free) {
		const CcaTracePriv *priv = snap->stream_priv;
		if (priv->origin)
			return priv->origin;
	}
	return snap->source;
}

/* ------------------------------------------------------------------ */
/* Reader: header (through msgpack-c's unpacker)                        */
/* ------------------------------------------------------------------ */

/* The header's counts. */
typedef struct {
	uint64_t strings, frames, stacks, stack_frames, segments, blocks, annotations;
	uint64_t *events; /* [devices] */
	uint64_t devices;
	uint64_t pools; /* "pool_id_entries": events with a pool_id, when HAS_POOLS */
	bool has_pools;
} CcaTraceCounts;

/* State of one load. */
typedef struct {
	CcaSnapshot *snap;
	CcaTracePriv *priv;
	const char *path;
	const unsigned char *base;
	CcaMp r;
	CcaTraceCounts counts;
	size_t header_at; /* offset of the header map */
} CcaTraceLoad;

/* Reports a problem with the header (at its offset), naming KEY when not
 * NULL; returns FALSE. */
static gboolean cca_trace_header_error(CcaTraceLoad *ld, GError **error, const char *key,
				       const char *fmt, ...) G_GNUC_PRINTF(4, 5);

static gboolean
cca_trace_header_error(CcaTraceLoad *ld, GError **error, const char *key, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	g_autofree char *what = g_strdup_vprintf(fmt, ap);
	va_end(ap);
	g_autofree char *ctx = key ? g_strdup_printf("key %s", key) : NULL;
	cca_trace_codec_error(error, CCA_INPUT_ERROR_CORRUPT, ld->path, ld->header_at, ctx, "%s",
			      what);
	return FALSE;
}

static bool
cca_obj_str_is(const msgpack_object *o, const char *want)
{
	return o->type == MSGPACK_OBJECT_STR && o->via.str.size == strlen(want) &&
	       memcmp(o->via.str.ptr, want, o->via.str.size) == 0;
}

static bool
cca_obj_uint(const msgpack_object *o, uint64_t *out)
{
	if (o->type != MSGPACK_OBJECT_POSITIVE_INTEGER)
		return false;
	*out = o->via.u64;
	return true;
}

static bool
cca_obj_int(const msgpack_object *o, int64_t *out)
{
	if (o->type == MSGPACK_OBJECT_NEGATIVE_INTEGER) {
		*out = o->via.i64;
		return true;
	}
	if (o->type == MSGPACK_OBJECT_POSITIVE_INTEGER && o->via.u64 <= INT64_MAX) {
		*out = (int64_t)o->via.u64;
		return true;
	}
	return false;
}

static bool
cca_obj_bool(const msgpack_object *o, bool *out)
{
	if (o->type != MSGPACK_OBJECT_BOOLEAN)
		return false;
	*out = o->via.boolean;
	return true;
}

static bool
cca_obj_double(const msgpack_object *o, double *out)
{
	int64_t i;
	if (o->type == MSGPACK_OBJECT_FLOAT64 || o->type == MSGPACK_OBJECT_FLOAT32) {
		*out = o->via.f64;
		return true;
	}
	if (cca_obj_int(o, &i)) {
		*out = (double)i;
		return true;
	}
	return false;
}

/* Copies a str or nil object into a new string (NULL for nil). */
static bool
cca_obj_strdup(const msgpack_object *o, char **out)
{
	if (o->type == MSGPACK_OBJECT_NIL) {
		*out = NULL;
		return true;
	}
	if (o->type != MSGPACK_OBJECT_STR ||
	    !cca_text_is_pickle_utf8(o->via.str.ptr, o->via.str.size))
		return false;
	*out = g_strndup(o->via.str.ptr, o->via.str.size);
	return true;
}

/* Like cca_obj_strdup(), freeing the previous *OUT first. */
static bool
cca_obj_replace_str(const msgpack_object *o, char **out)
{
	g_free(*out);
	*out = NULL;
	return cca_obj_strdup(o, out);
}

/* Bit flags of the allocator_settings keys that must be present. */
enum {
	CCA_SET_PRESENT = 1 << 0,
	CCA_SET_CONF = 1 << 1,
	CCA_SET_MAX_SPLIT = 1 << 2,
	CCA_SET_GC = 1 << 3,
	CCA_SET_EXPANDABLE = 1 << 4,
	CCA_SET_THREADS = 1 << 5,
	CCA_SET_RELEASE_LOCK = 1 << 6,
	CCA_SET_HOST_REGISTER = 1 << 7,
	CCA_SET_REUSE = 1 << 8,
	CCA_SET_ROUNDUP = 1 << 9,
	CCA_SET_ALL = (1 << 10) - 1,
};

/* Parses one allocator_settings key/value into S; *SEEN gets its flag. */
static bool
cca_trace_setting(const msgpack_object_kv *kv, CcaRecordedSettings *s, unsigned *seen)
{
	const msgpack_object *k = &kv->key, *v = &kv->val;
#define CCA_SET_KEY(name, flag, parse) \
	if (cca_obj_str_is(k, name)) { \
		*seen |= flag;         \
		return parse;          \
	}
	CCA_SET_KEY("present", CCA_SET_PRESENT, cca_obj_bool(v, &s->present));
	CCA_SET_KEY("PYTORCH_CUDA_ALLOC_CONF", CCA_SET_CONF, cca_obj_replace_str(v, &s->conf));
	CCA_SET_KEY("max_split_size", CCA_SET_MAX_SPLIT, cca_obj_int(v, &s->max_split_size));
	CCA_SET_KEY("garbage_collection_threshold", CCA_SET_GC,
		    cca_obj_double(v, &s->garbage_collection_threshold));
	CCA_SET_KEY("expandable_segments", CCA_SET_EXPANDABLE,
		    cca_obj_bool(v, &s->expandable_segments));
	CCA_SET_KEY("pinned_num_register_threads", CCA_SET_THREADS,
		    cca_obj_int(v, &s->pinned_num_register_threads));
	CCA_SET_KEY("release_lock_on_cudamalloc", CCA_SET_RELEASE_LOCK,
		    cca_obj_bool(v, &s->release_lock_on_cudamalloc));
	CCA_SET_KEY("pinned_use_cuda_host_register", CCA_SET_HOST_REGISTER,
		    cca_obj_bool(v, &s->pinned_use_cuda_host_register));
#undef CCA_SET_KEY
	if (cca_obj_str_is(k, "graph_capture_record_stream_reuse")) {
		*seen |= CCA_SET_REUSE;
		s->has_graph_capture_record_stream_reuse = v->type != MSGPACK_OBJECT_NIL;
		s->graph_capture_record_stream_reuse = false;
		return v->type == MSGPACK_OBJECT_NIL ||
		       cca_obj_bool(v, &s->graph_capture_record_stream_reuse);
	}
	if (cca_obj_str_is(k, "roundup_power2_divisions")) {
		*seen |= CCA_SET_ROUNDUP;
		if (v->type != MSGPACK_OBJECT_ARRAY || v->via.array.size != 16)
			return false;
		for (int i = 0; i < 16; i++) {
			uint64_t d;
			if (!cca_obj_uint(&v->via.array.ptr[i], &d) || d > UINT32_MAX)
				return false;
			s->roundup_power2_divisions[i] = (uint32_t)d;
		}
		return true;
	}
	return true; /* unknown keys are ignored (additive header changes) */
}

static gboolean
cca_trace_parse_settings(CcaTraceLoad *ld, const msgpack_object *o, GError **error)
{
	CcaRecordedSettings *s = &ld->snap->settings;
	unsigned seen = 0;
	if (o->type != MSGPACK_OBJECT_MAP)
		return cca_trace_header_error(ld, error, "allocator_settings", "expected a map");
	for (uint32_t i = 0; i < o->via.map.size; i++) {
		const msgpack_object_kv *kv = &o->via.map.ptr[i];
		if (!cca_trace_setting(kv, s, &seen)) {
			g_autofree char *key =
				kv->key.type == MSGPACK_OBJECT_STR
					? g_strndup(kv->key.via.str.ptr, kv->key.via.str.size)
					: g_strdup("?");
			return cca_trace_header_error(ld, error, "allocator_settings",
						      "bad value for '%s'", key);
		}
	}
	if (seen != CCA_SET_ALL)
		return cca_trace_header_error(ld, error, "allocator_settings",
					      "missing keys (mask 0x%03x of 0x%03x)", seen,
					      CCA_SET_ALL);
	return TRUE;
}

/* An int >= -1 or nil (-1) of the newer_keys map. */
static bool
cca_obj_opt_count(const msgpack_object *o, int64_t *out)
{
	if (o->type == MSGPACK_OBJECT_NIL) {
		*out = -1;
		return true;
	}
	return cca_obj_int(o, out) && *out >= 0;
}

/* Parses one newer_keys key/value (doc/trace-format.md §2.3) into N;
 * unknown keys are ignored. */
static bool
cca_trace_newer_key(const msgpack_object_kv *kv, CcaSnapshotNewer *n)
{
	const msgpack_object *k = &kv->key, *v = &kv->val;
	bool b;
	if (cca_obj_str_is(k, "annotate_entries"))
		return cca_obj_uint(v, &n->annotate_entries);
	if (cca_obj_str_is(k, "forward_frames"))
		return cca_obj_uint(v, &n->forward_frames);
	if (cca_obj_str_is(k, "rendered_metadata"))
		return cca_obj_uint(v, &n->rendered_metadata);
	if (cca_obj_str_is(k, "host_segments"))
		return cca_obj_opt_count(v, &n->host_segments);
	if (cca_obj_str_is(k, "host_traces"))
		return cca_obj_opt_count(v, &n->host_traces);
	if (cca_obj_str_is(k, "trace_alloc_max_entries"))
		return cca_obj_opt_count(v, &n->trace_alloc_max_entries);
	if (cca_obj_str_is(k, "trace_alloc_overflowed")) {
		n->trace_alloc_overflowed = -1;
		if (v->type == MSGPACK_OBJECT_NIL)
			return true;
		if (!cca_obj_bool(v, &b))
			return false;
		n->trace_alloc_overflowed = b;
		return true;
	}
	if (cca_obj_str_is(k, "unknown_more"))
		return cca_obj_uint(v, &n->unknown_more);
	if (cca_obj_str_is(k, "unknown_keys")) {
		if (v->type != MSGPACK_OBJECT_MAP)
			return false;
		for (uint32_t i = 0; i < v->via.map.size; i++) {
			const msgpack_object_kv *e = &v->via.map.ptr[i];
			uint64_t count;
			if (e->key.type != MSGPACK_OBJECT_STR || !cca_obj_uint(&e->val, &count) ||
			    count == 0)
				return false;
			uint32_t before = n->n_unknown;
			cca_snapshot_newer_add_unknown(n, e->key.via.str.ptr, e->key.via.str.size);
			/* added once: the rest of its count */
			if (n->n_unknown > before)
				n->unknown_count[before] += count - 1;
			else
				n->unknown_more += count - 1;
		}
		return true;
	}
	return true;
}

static gboolean
cca_trace_parse_newer(CcaTraceLoad *ld, const msgpack_object *o, GError **error)
{
	CcaSnapshotNewer *n = &ld->snap->newer;
	if (o->type != MSGPACK_OBJECT_MAP)
		return cca_trace_header_error(ld, error, "newer_keys", "expected a map");
	for (uint32_t i = 0; i < o->via.map.size; i++) {
		const msgpack_object_kv *kv = &o->via.map.ptr[i];
		if (!cca_trace_newer_key(kv, n)) {
			g_autofree char *key = kv->key.type == MSGPACK_OBJECT_STR
						       ? g_strndup(kv->key.via.str.ptr,
								   MIN(kv->key.via.str.size, 64))
						       : g_strdup("?");
			g_autofree char *shown = cca_text_display(key, -1, 64);
			return cca_trace_header_error(ld, error, "newer_keys", "bad value for '%s'",
						      shown);
		}
	}
	return TRUE;
}

/* Parses the "counts" map. */
static gboolean
cca_trace_parse_counts(CcaTraceLoad *ld, const msgpack_object *o, GError **error)
{
	CcaTraceCounts *c = &ld->counts;
	struct {
		const char *key;
		uint64_t *dst;
	} fields[] = {
		{"strings", &c->strings},	  {"frames", &c->frames},
		{"stacks", &c->stacks},		  {"stack_frames", &c->stack_frames},
		{"segments", &c->segments},	  {"blocks", &c->blocks},
		{"annotations", &c->annotations},
	};
	unsigned seen = 0;
	const msgpack_object *events = NULL;

	if (o->type != MSGPACK_OBJECT_MAP)
		return cca_trace_header_error(ld, error, "counts", "expected a map");
	for (uint32_t i = 0; i < o->via.map.size; i++) {
		const msgpack_object_kv *kv = &o->via.map.ptr[i];
		if (cca_obj_str_is(&kv->key, "events"))
			events = &kv->val;
		if (cca_obj_str_is(&kv->key, "pool_id_entries")) {
			if (!cca_obj_uint(&kv->val, &c->pools))
				return cca_trace_header_error(ld, error, "counts",
							      "'pool_id_entries' must be an "
							      "unsigned integer");
			c->has_pools = true;
		}
		for (size_t j = 0; j < G_N_ELEMENTS(fields); j++) {
			if (!cca_obj_str_is(&kv->key, fields[j].key))
				continue;
			if (!cca_obj_uint(&kv->val, fields[j].dst) || *fields[j].dst > UINT32_MAX)
				return cca_trace_header_error(ld, error, "counts",
							      "'%s' must be an integer below 2^32",
							      fields[j].key);
			seen |= 1u << j;
		}
	}
	if (seen != (1u << G_N_ELEMENTS(fields)) - 1 || events == NULL)
		return cca_trace_header_error(ld, error, "counts", "missing keys");
	if (events->type != MSGPACK_OBJECT_ARRAY || events->via.array.size != c->devices)
		return cca_trace_header_error(ld, error, "counts",
					      "'events' must be an array of %" G_GUINT64_FORMAT
					      " counts, one per device",
					      c->devices);
	c->events = g_new0(uint64_t, c->devices ? c->devices : 1);
	for (uint64_t d = 0; d < c->devices; d++)
		if (!cca_obj_uint(&events->via.array.ptr[d], &c->events[d]))
			return cca_trace_header_error(ld, error, "counts",
						      "'events' entry %" G_GUINT64_FORMAT
						      " is not an unsigned integer",
						      d);
	return TRUE;
}

/* Handles one top-level header key; unknown keys are ignored. */
static gboolean
cca_trace_header_key(CcaTraceLoad *ld, const msgpack_object_kv *kv, unsigned *seen, GError **error)
{
	const msgpack_object *k = &kv->key, *v = &kv->val;
	CcaSnapshot *snap = ld->snap;
	uint64_t u;
	int64_t i;

	if (cca_obj_str_is(k, "format")) {
		*seen |= 1;
		if (!cca_obj_str_is(v, CCA_TRACE_FORMAT))
			return cca_trace_header_error(ld, error, "format", "not a %s file",
						      CCA_TRACE_FORMAT);
	} else if (cca_obj_str_is(k, "version")) {
		*seen |= 2;
		if (!cca_obj_uint(v, &u))
			return cca_trace_header_error(ld, error, "version", "expected an integer");
		if (u != CCA_TRACE_VERSION)
			return cca_trace_header_error(ld, error, "version",
						      "unsupported %s version %" G_GUINT64_FORMAT
						      " (this ccasim reads version %d)",
						      CCA_TRACE_FORMAT, u, CCA_TRACE_VERSION);
	} else if (cca_obj_str_is(k, "devices")) {
		*seen |= 4;
		if (!cca_obj_uint(v, &ld->counts.devices) || ld->counts.devices > 65536)
			return cca_trace_header_error(ld, error, "devices",
						      "expected an integer up to 65536");
	} else if (cca_obj_str_is(k, "source")) {
		g_clear_pointer(&ld->priv->origin, g_free);
		if (!cca_obj_strdup(v, &ld->priv->origin))
			return cca_trace_header_error(ld, error, "source",
						      "expected a string or nil");
	} else if (cca_obj_str_is(k, "pickle_protocol")) {
		if (!cca_obj_int(v, &i) || i < 0 || i > 255)
			return cca_trace_header_error(ld, error, "pickle_protocol",
						      "expected an integer 0..255");
		snap->pickle_protocol = (int)i;
	}
	return TRUE;
}

/* Parses the header map (everything but "counts" and settings, which need
 * "devices" first and are handled by the caller). */
static gboolean
cca_trace_parse_header_map(CcaTraceLoad *ld, const msgpack_object *o, GError **error)
{
	const msgpack_object *counts = NULL, *settings = NULL, *newer = NULL;
	unsigned seen = 0;

	if (o->type != MSGPACK_OBJECT_MAP)
		return cca_trace_header_error(ld, error, NULL, "the header is not a map");
	for (uint32_t i = 0; i < o->via.map.size; i++) {
		const msgpack_object_kv *kv = &o->via.map.ptr[i];
		if (cca_obj_str_is(&kv->key, "counts"))
			counts = &kv->val;
		else if (cca_obj_str_is(&kv->key, "allocator_settings"))
			settings = &kv->val;
		else if (cca_obj_str_is(&kv->key, "newer_keys"))
			newer = &kv->val;
		else if (!cca_trace_header_key(ld, kv, &seen, error))
			return FALSE;
	}
	static const char *const required[] = {"format", "version", "devices"};
	for (unsigned i = 0; i < G_N_ELEMENTS(required); i++)
		if (!(seen & (1u << i)))
			return cca_trace_header_error(ld, error, required[i],
						      "the header lacks a required key");
	if (counts == NULL)
		return cca_trace_header_error(ld, error, "counts",
					      "the header lacks a required key");
	if (!cca_trace_parse_counts(ld, counts, error))
		return FALSE;
	ld->snap->settings.present = false;
	return (settings == NULL || cca_trace_parse_settings(ld, settings, error)) &&
	       (newer == NULL || cca_trace_parse_newer(ld, newer, error));
}

/* Reads the header object: validates its extent with the primitive
 * decoder (so no count can make msgpack-c over-allocate), then unpacks it
 * with msgpack-c. */
static gboolean
cca_trace_read_header(CcaTraceLoad *ld, GError **error)
{
	const unsigned char *start = ld->r.p;
	CcaMpFault f;
	int rc;

	ld->header_at = (size_t)(start - ld->base);
	if ((rc = cca_mp_skip(&ld->r, 0))) {
		/* the skip stops at the offending item */
		cca_mp_fault(&f, rc, "header", ld->r.p, 0, 0);
		cca_trace_codec_fault(error, &f, ld->path, ld->base, ld->r.end, NULL);
		return FALSE;
	}

	msgpack_unpacked u;
	size_t off = 0;
	msgpack_unpacked_init(&u);
	msgpack_unpack_return ret =
		msgpack_unpack_next(&u, (const char *)start, (size_t)(ld->r.p - start), &off);
	gboolean ok;
	if (ret != MSGPACK_UNPACK_SUCCESS) /* NOMEM included: a corrupt file */
		ok = cca_trace_header_error(
			ld, error, NULL, "msgpack-c cannot decode the header (error %d)", (int)ret);
	else
		ok = cca_trace_parse_header_map(ld, &u.data, error);
	msgpack_unpacked_destroy(&u);
	return ok;
}

/* ------------------------------------------------------------------ */
/* Reader: tables, segments, annotations, event validation             */
/* ------------------------------------------------------------------ */

/* Reports the fault F at the load's position, with a printf-style
 * context ("frame 3", "segment 2, block 5"). */
static gboolean G_GNUC_PRINTF(4, 5) cca_trace_load_fault(CcaTraceLoad *ld, const CcaMpFault *f,
							 GError **error, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	g_autofree char *ctx = g_strdup_vprintf(fmt, ap);
	va_end(ap);
	cca_trace_codec_fault(error, f, ld->path, ld->base, ld->r.end, ctx);
	return FALSE;
}

/* Reads a table's array header: it must hold exactly COUNT entries (the
 * header's count) of at least MIN_BYTES bytes each. */
static gboolean
cca_trace_table_header(CcaTraceLoad *ld, const char *name, uint64_t count, unsigned min_bytes,
		       GError **error)
{
	CcaMp *r = &ld->r;
	CcaMpFault fault, *f = &fault;
	const unsigned char *at = r->p;
	uint32_t n;
	int rc = cca_mp_array(r, &n);

	if (rc)
		cca_mp_fault(f, rc, name, at, 0, 0);
	else if (n != count)
		rc = cca_mp_fault(f, CCA_MP_MISMATCH, name, at, n, count);
	else if ((uint64_t)n * min_bytes > (uint64_t)(r->end - r->p))
		rc = cca_mp_fault(f, CCA_MP_TOO_MANY, name, at, n, 0);
	if (rc)
		return cca_trace_load_fault(ld, f, error, "%s table", name);
	return TRUE;
}

/* Decodes string I of the string table. */
static int
cca_trace_read_string(CcaTraceLoad *ld, uint32_t i, CcaMpFault *f)
{
	CcaMp *r = &ld->r;
	const char *s;
	uint32_t len;
	const unsigned char *at = r->p;
	CCA_MP_TRY(cca_mp_str(r, &s, &len), "string");
	if (i == 0 && len != 0)
		return cca_mp_fault(f, CCA_MP_NOT_EMPTY, "string 0", at, 0, 0);
	g_ptr_array_add(ld->snap->strings, g_strndup(s, len));
	return CCA_MP_OK;
}

static gboolean
cca_trace_read_strings(CcaTraceLoad *ld, GError **error)
{
	CcaMpFault f;
	uint32_t n = (uint32_t)ld->counts.strings;

	if (n == 0) {
		cca_trace_codec_error(error, CCA_INPUT_ERROR_CORRUPT, ld->path,
				      (size_t)(ld->r.p - ld->base), "string table",
				      "the table must hold at least the empty string 0");
		return FALSE;
	}
	if (!cca_trace_table_header(ld, "strings", n, 1, error))
		return FALSE;
	g_ptr_array_set_size(ld->snap->strings, 0);
	for (uint32_t i = 0; i < n; i++)
		if (cca_trace_read_string(ld, i, &f))
			return cca_trace_load_fault(ld, &f, error, "string %u", i);
	ld->priv->limits.n_strings = n;
	return TRUE;
}

/* Decodes frame [name, filename, line] into FR. */
static int
cca_trace_read_frame(CcaTraceLoad *ld, CcaFrame *fr, CcaMpFault *f)
{
	CcaMp *r = &ld->r;
	uint32_t n_strings = ld->priv->limits.n_strings;
	int rc = cca_mp_tuple(r, 3, "frame", f);
	if (rc)
		return rc;
	CCA_MP_ID(fr->name, n_strings, "name");
	CCA_MP_ID(fr->filename, n_strings, "filename");
	CCA_MP_TRY(cca_mp_int(r, &fr->line), "line");
	return CCA_MP_OK;
}

static gboolean
cca_trace_read_frames(CcaTraceLoad *ld, GError **error)
{
	CcaMpFault f;
	uint32_t n = (uint32_t)ld->counts.frames;
	GArray *frames = ld->snap->frames;

	if (!cca_trace_table_header(ld, "frames", n, 4, error))
		return FALSE;
	g_array_set_size(frames, n);
	for (uint32_t i = 0; i < n; i++)
		if (cca_trace_read_frame(ld, &g_array_index(frames, CcaFrame, i), &f))
			return cca_trace_load_fault(ld, &f, error, "frame %u", i);
	return TRUE;
}

/* Decodes stack I (an array of frame ids) and appends it. */
static int
cca_trace_read_stack(CcaTraceLoad *ld, uint32_t i, CcaMpFault *f)
{
	CcaMp *r = &ld->r;
	CcaSnapshot *snap = ld->snap;
	uint32_t n_frames = snap->frames->len;
	const unsigned char *at = r->p;
	uint32_t m;

	CCA_MP_TRY(cca_mp_array(r, &m), "stack");
	if (i == 0 && m != 0)
		return cca_mp_fault(f, CCA_MP_NOT_EMPTY, "stack 0", at, 0, 0);
	if ((uint64_t)snap->stack_frames->len + m > ld->counts.stack_frames)
		return cca_mp_fault(f, CCA_MP_MISMATCH, "the stack table", at,
				    (uint64_t)snap->stack_frames->len + m, ld->counts.stack_frames);
	for (uint32_t j = 0; j < m; j++) {
		uint32_t frame;
		CCA_MP_ID(frame, n_frames, "frame id");
		g_array_append_val(snap->stack_frames, frame);
	}
	uint32_t end = snap->stack_frames->len;
	g_array_append_val(snap->stack_offsets, end);
	return CCA_MP_OK;
}

static gboolean
cca_trace_read_stacks(CcaTraceLoad *ld, GError **error)
{
	CcaMpFault f;
	CcaSnapshot *snap = ld->snap;
	uint32_t n = (uint32_t)ld->counts.stacks;
	uint32_t zero = 0;

	if (n == 0) {
		cca_trace_codec_error(error, CCA_INPUT_ERROR_CORRUPT, ld->path,
				      (size_t)(ld->r.p - ld->base), "stack table",
				      "the table must hold at least the empty stack 0");
		return FALSE;
	}
	if (!cca_trace_table_header(ld, "stacks", n, 1, error))
		return FALSE;
	if (ld->counts.stack_frames > (uint64_t)(ld->r.end - ld->r.p)) {
		cca_mp_fault(&f, CCA_MP_TOO_MANY, "stack_frames count", ld->r.p, 0, 0);
		return cca_trace_load_fault(ld, &f, error, "stack table");
	}
	g_array_set_size(snap->stack_offsets, 0);
	g_array_set_size(snap->stack_frames, 0);
	g_array_append_val(snap->stack_offsets, zero);
	for (uint32_t i = 0; i < n; i++)
		if (cca_trace_read_stack(ld, i, &f))
			return cca_trace_load_fault(ld, &f, error, "stack %u", i);
	if (snap->stack_frames->len != ld->counts.stack_frames) {
		cca_mp_fault(&f, CCA_MP_MISMATCH, "the stack table", ld->r.p,
			     snap->stack_frames->len, ld->counts.stack_frames);
		return cca_trace_load_fault(ld, &f, error, "key stack_frames");
	}
	ld->priv->limits.n_stacks = n;
	return TRUE;
}

/* Decodes block [address, size, requested_size, stack, state]. */
static int
cca_trace_read_block(CcaTraceLoad *ld, CcaSnapBlock *b, CcaMpFault *f)
{
	CcaMp *r = &ld->r;
	const unsigned char *at;
	uint64_t state;
	int rc = cca_mp_tuple(r, 5, "block", f);
	if (rc)
		return rc;
	CCA_MP_TRY(cca_mp_uint(r, &b->address), "address");
	CCA_MP_TRY(cca_mp_uint(r, &b->size), "size");
	CCA_MP_TRY(cca_mp_uint(r, &b->requested_size), "requested_size");
	CCA_MP_ID(b->stack, ld->priv->limits.n_stacks, "stack");
	at = r->p;
	CCA_MP_TRY(cca_mp_uint(r, &state), "state");
	if (state > CCA_BLOCK_ACTIVE_PENDING_FREE)
		return cca_mp_fault(f, CCA_MP_RANGE, "state", at, state,
				    CCA_BLOCK_ACTIVE_PENDING_FREE + 1);
	b->state = (uint8_t)state;
	return CCA_MP_OK;
}

/* Decodes the scalar fields of a segment (all but its blocks). */
static int
cca_trace_read_segment_fields(CcaTraceLoad *ld, CcaSnapSegment *s, CcaMpFault *f)
{
	CcaMp *r = &ld->r;
	bool small, expandable;
	int rc = cca_mp_tuple(r, 12, "segment", f);
	if (rc || (rc = cca_mp_int32(r, &s->device, "device", f)))
		return rc;
	CCA_MP_TRY(cca_mp_uint(r, &s->address), "address");
	CCA_MP_TRY(cca_mp_uint(r, &s->total_size), "total_size");
	CCA_MP_TRY(cca_mp_uint(r, &s->allocated_size), "allocated_size");
	CCA_MP_TRY(cca_mp_uint(r, &s->active_size), "active_size");
	CCA_MP_TRY(cca_mp_uint(r, &s->requested_size), "requested_size");
	CCA_MP_TRY(cca_mp_bits(r, &s->stream), "stream");
	if ((rc = cca_mp_bool(r, &small, "is_small", f)) ||
	    (rc = cca_mp_bool(r, &expandable, "is_expandable", f)) ||
	    (rc = cca_mp_pool(r, s->pool_id, f)))
		return rc;
	s->is_small = small;
	s->is_expandable = expandable;
	CCA_MP_ID(s->stack, ld->priv->limits.n_stacks, "stack");
	return CCA_MP_OK;
}

/* Decodes segment I with its blocks. */
static gboolean
cca_trace_read_segment(CcaTraceLoad *ld, uint32_t i, GError **error)
{
	CcaSnapshot *snap = ld->snap;
	CcaMp *r = &ld->r;
	CcaMpFault fault, *f = &fault;
	CcaSnapSegment s = {0};
	uint32_t n;
	const unsigned char *at;

	if (cca_trace_read_segment_fields(ld, &s, f))
		return cca_trace_load_fault(ld, f, error, "segment %u", i);
	at = r->p;
	int rc = cca_mp_array(r, &n);
	if (rc)
		cca_mp_fault(f, rc, "blocks", at, 0, 0);
	else if ((uint64_t)snap->blocks->len + n > ld->counts.blocks)
		rc = cca_mp_fault(f, CCA_MP_MISMATCH, "the block lists", at,
				  (uint64_t)snap->blocks->len + n, ld->counts.blocks);
	if (rc)
		return cca_trace_load_fault(ld, f, error, "segment %u", i);
	s.first_block = snap->blocks->len;
	s.n_blocks = n;
	for (uint32_t j = 0; j < n; j++) {
		CcaSnapBlock b = {0};
		if (cca_trace_read_block(ld, &b, f))
			return cca_trace_load_fault(ld, f, error, "segment %u, block %u", i, j);
		g_array_append_val(snap->blocks, b);
	}
	g_array_append_val(snap->segments, s);
	return TRUE;
}

static gboolean
cca_trace_read_segments(CcaTraceLoad *ld, GError **error)
{
	CcaSnapshot *snap = ld->snap;
	uint32_t n = (uint32_t)ld->counts.segments;

	if (!cca_trace_table_header(ld, "segments", n, 13, error))
		return FALSE;
	if (ld->counts.blocks * 6 > (uint64_t)(ld->r.end - ld->r.p)) {
		CcaMpFault f;
		cca_mp_fault(&f, CCA_MP_TOO_MANY, "blocks count", ld->r.p, 0, 0);
		return cca_trace_load_fault(ld, &f, error, "segments table");
	}
	g_array_set_size(snap->segments, 0);
	g_array_set_size(snap->blocks, 0);
	for (uint32_t i = 0; i < n; i++)
		if (!cca_trace_read_segment(ld, i, error))
			return FALSE;
	if (snap->blocks->len != ld->counts.blocks) {
		CcaMpFault f;
		cca_mp_fault(&f, CCA_MP_MISMATCH, "the block lists", ld->r.p, snap->blocks->len,
			     ld->counts.blocks);
		return cca_trace_load_fault(ld, &f, error, "key blocks");
	}
	return TRUE;
}

/* Decodes annotation [stage, name, device, time_us|nil]. */
static int
cca_trace_read_annotation(CcaTraceLoad *ld, CcaAnnotation *a, CcaMpFault *f)
{
	CcaMp *r = &ld->r;
	uint32_t n_strings = ld->priv->limits.n_strings;
	int rc = cca_mp_tuple(r, 4, "annotation", f);
	if (rc)
		return rc;
	CCA_MP_ID(a->stage, n_strings, "stage");
	CCA_MP_ID(a->name, n_strings, "name");
	if ((rc = cca_mp_int32(r, &a->device, "device", f)))
		return rc;
	return cca_mp_opt_int(r, CCA_TIME_NONE, &a->time_us, "time_us", f);
}

static gboolean
cca_trace_read_annotations(CcaTraceLoad *ld, GError **error)
{
	CcaMpFault f;
	uint32_t n = (uint32_t)ld->counts.annotations;
	GArray *annotations = ld->snap->annotations;

	if (!cca_trace_table_header(ld, "annotations", n, 5, error))
		return FALSE;
	g_array_set_size(annotations, n);
	for (uint32_t i = 0; i < n; i++)
		if (cca_trace_read_annotation(ld, &g_array_index(annotations, CcaAnnotation, i),
					      &f))
			return cca_trace_load_fault(ld, &f, error, "annotation %u", i);
	return TRUE;
}

/* Walks device D's event array once, validating every event, and
 * remembers where its events start. */
static gboolean
cca_trace_scan_device(CcaTraceLoad *ld, int d, GError **error)
{
	CcaMpFault f;
	CcaEvent ev;
	uint64_t n = ld->counts.events[d];
	g_autofree char *name = g_strdup_printf("device %d events", d);

	if (!cca_trace_table_header(ld, name, n, 9, error))
		return FALSE;
	ld->priv->dev[d] = ld->r.p;
	for (uint64_t i = 0; i < n; i++) {
		if (G_UNLIKELY(cca_trace_decode_event(&ld->r, &ld->priv->limits, &ev, &f)))
			return cca_trace_load_fault(
				ld, &f, error, "event %" G_GUINT64_FORMAT " of device %d", i, d);
		ld->snap->newer.pool_id_entries += ev.has_pool_id;
		if (G_UNLIKELY((i & 0xffff) == 0xffff))
			cca_input_advance(&ld->priv->input,
					  (size_t)(ld->r.p - ld->priv->input.data));
	}
	ld->priv->checked[d] = 1;
	return TRUE;
}

/* The length of the msgpack item an event's field starts with, by its
 * first byte, when it is an integer or nil (all a well-formed event's
 * fields but pool_id are): fixints, nil, uint and int 8..64 (1 to 9
 * bytes); CCA_TRACE_WALK_BAD for anything else, a bit no length has. */
#define CCA_TRACE_WALK_BAD 16
static const uint8_t cca_trace_walk_len[256] = {
	1,  1,	1,  1,	1,  1,	1,  1,	1,  1,	1,  1,	1,  1,	1,  1,	1,  1,	1,  1,	1,  1,
	1,  1,	1,  1,	1,  1,	1,  1,	1,  1,	1,  1,	1,  1,	1,  1,	1,  1,	1,  1,	1,  1,
	1,  1,	1,  1,	1,  1,	1,  1,	1,  1,	1,  1,	1,  1,	1,  1,	1,  1,	1,  1,	1,  1,
	1,  1,	1,  1,	1,  1,	1,  1,	1,  1,	1,  1,	1,  1,	1,  1,	1,  1,	1,  1,	1,  1,
	1,  1,	1,  1,	1,  1,	1,  1,	1,  1,	1,  1,	1,  1,	1,  1,	1,  1,	1,  1,	1,  1,
	1,  1,	1,  1,	1,  1,	1,  1,	1,  1,	1,  1,	1,  1,	1,  1,	1,  1,	16, 16, 16, 16,
	16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16,
	16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16,
	16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 1,  16, 16, 16, 16, 16,
	16, 16, 16, 16, 16, 16, 2,  3,	5,  9,	2,  3,	5,  9,	16, 16, 16, 16, 16, 16, 16, 16,
	16, 16, 16, 16, 1,  1,	1,  1,	1,  1,	1,  1,	1,  1,	1,  1,	1,  1,	1,  1,	1,  1,
	1,  1,	1,  1,	1,  1,	1,  1,	1,  1,	1,  1,	1,  1,
};

/* The most bytes cca_trace_walk_event() reads: an array header, eight
 * fields, pool_id's header and its two integers, each field at most
 * CCA_TRACE_WALK_BAD bytes on. */
#define CCA_TRACE_WALK_MAX (1 + 8 * CCA_TRACE_WALK_BAD + 1 + 2 * CCA_TRACE_WALK_BAD)

/* Steps *PP over one event (fixarray 8 of integers or nil, or 9 whose
 * last is a fixarray of two integers), at least CCA_TRACE_WALK_MAX bytes
 * before the end, and adds 1 to *POOLS when it has a pool_id.  FALSE for
 * any other shape (the event may still be well formed: the full decoder
 * then decides). */
G_ALWAYS_INLINE static inline bool
cca_trace_walk_event(const unsigned char **pp, uint64_t *pools)
{
	const unsigned char *p = *pp;
	unsigned head = *p++, seen = 0;
	if (head != 0x98 && head != 0x99)
		return false;
		/* a bad field stops nothing: SEEN says, at the end */
#define CCA_TRACE_WALK_FIELD()                          \
	do {                                            \
		unsigned len_ = cca_trace_walk_len[*p]; \
		seen |= len_;                           \
		p += len_;                              \
	} while (0)
	CCA_TRACE_WALK_FIELD(); /* action */
	CCA_TRACE_WALK_FIELD(); /* addr */
	CCA_TRACE_WALK_FIELD(); /* size */
	CCA_TRACE_WALK_FIELD(); /* stream */
	CCA_TRACE_WALK_FIELD(); /* time_us */
	CCA_TRACE_WALK_FIELD(); /* stack */
	CCA_TRACE_WALK_FIELD(); /* compile_context */
	CCA_TRACE_WALK_FIELD(); /* user_metadata */
	if (head == 0x99) {
		if (*p != 0x92)
			return false;
		p++;
		CCA_TRACE_WALK_FIELD();
		CCA_TRACE_WALK_FIELD();
		++*pools;
	}
#undef CCA_TRACE_WALK_FIELD
	*pp = p;
	return !(seen & CCA_TRACE_WALK_BAD);
}

/* The structure of device D's events alone (their shape, how many there
 * are, where they end), for a load that leaves their fields to be checked
 * as they are read: remembers where they start, counts those with a
 * pool_id and moves past them.  FALSE (no error set) when anything is
 * unusual; the caller then checks the events in full. */
static bool
cca_trace_walk_device(CcaTraceLoad *ld, int d, uint64_t *pools)
{
	uint64_t n = ld->counts.events[d];
	const unsigned char *end = ld->r.end;
	uint32_t len;
	CcaMp hdr = ld->r;
	if (cca_mp_array(&hdr, &len) || len != n || (uint64_t)len * 9 > (uint64_t)(end - hdr.p))
		return false;
	const unsigned char *p = hdr.p;
	ld->priv->dev[d] = p;
	for (uint64_t i = 0; i < n; i++) {
		size_t left = (size_t)(end - p);
		if (G_UNLIKELY(left < CCA_TRACE_WALK_MAX)) {
			/* the last few events: walked in a copy padded with
			 * zeros, so that no byte past the end is read */
			unsigned char tail[CCA_TRACE_WALK_MAX] = {0};
			const unsigned char *q = tail;
			memcpy(tail, p, left);
			if (!cca_trace_walk_event(&q, pools) || (size_t)(q - tail) > left)
				return false;
			p += q - tail;
		} else if (G_UNLIKELY(!cca_trace_walk_event(&p, pools))) {
			return false;
		}
		if (G_UNLIKELY((i & 0xffff) == 0xffff))
			cca_input_advance(&ld->priv->input, (size_t)(p - ld->priv->input.data));
	}
	ld->r.p = p;
	return true;
}

/* A load that checks the events' fields as they are read: walks the
 * structure of every device's events and the end of the file; FALSE when
 * anything is unusual (the caller then checks everything in full). */
static bool
cca_trace_walk_events(CcaTraceLoad *ld)
{
	uint64_t pools = 0;
	for (int d = 0; d < ld->snap->n_devices; d++)
		if (!cca_trace_walk_device(ld, d, &pools))
			return false;
	if (ld->r.p != ld->r.end || (ld->counts.has_pools && pools != ld->counts.pools))
		return false;
	ld->snap->newer.pool_id_entries += pools;
	return true;
}

/* A load that checks the events' fields as they are read and takes the
 * header's counts.pool_id_entries: walks the structure of every device's
 * events but the last device with any (whose events a replay reads), and
 * takes that device's to end where the empty arrays of the devices after
 * it begin (CcaTracePriv's tail, checked by its cursor).  FALSE when
 * anything is unusual (the caller then walks or checks everything). */
static bool
cca_trace_walk_events_hinted(CcaTraceLoad *ld)
{
	int n = ld->snap->n_devices, last = -1;
	for (int d = 0; d < n; d++)
		if (ld->counts.events[d] > 0)
			last = d;
	if (last < 0 || !ld->counts.has_pools)
		return false;
	uint64_t pools = 0;
	for (int d = 0; d < last; d++)
		if (!cca_trace_walk_device(ld, d, &pools))
			return false;
	uint64_t count = ld->counts.events[last];
	uint32_t len;
	CcaMp hdr = ld->r;
	if (cca_mp_array(&hdr, &len) || len != count || pools > ld->counts.pools)
		return false;
	/* each device after it: an empty array, one byte */
	size_t after = (size_t)(n - 1 - last);
	if ((size_t)(ld->r.end - hdr.p) < after)
		return false;
	const unsigned char *tail_end = ld->r.end - after;
	for (const unsigned char *q = tail_end; q < ld->r.end; q++)
		if (*q != 0x90)
			return false;
	/* the shortest event takes 9 bytes */
	if (count > (uint64_t)(tail_end - hdr.p) / 9)
		return false;
	ld->priv->dev[last] = hdr.p;
	ld->priv->tail = last;
	ld->priv->tail_end = tail_end;
	ld->priv->tail_pools = ld->counts.pools - pools;
	ld->snap->newer.pool_id_entries += ld->counts.pools;
	ld->r.p = ld->r.end;
	return true;
}

/* Sets up the per-device event state of the snapshot and scans every
 * device's events; the file must end right after the last one. */
static gboolean
cca_trace_read_events(CcaTraceLoad *ld, gboolean streaming, GError **error)
{
	CcaSnapshot *snap = ld->snap;
	int n = (int)ld->counts.devices;

	snap->n_devices = n;
	snap->events = g_new0(GArray *, n ? n : 1);
	snap->n_events = g_new0(uint64_t, n ? n : 1);
	ld->priv->dev = g_new0(const unsigned char *, n ? n : 1);
	ld->priv->checked = g_new0(gint, n ? n : 1);
	for (int d = 0; d < n; d++)
		snap->n_events[d] = ld->counts.events[d];
	const unsigned char *events_at = ld->r.p;
	if (streaming && cca_trace_walk_events_hinted(ld))
		return TRUE;
	ld->r.p = events_at;
	if (streaming && cca_trace_walk_events(ld))
		return TRUE;
	ld->r.p = events_at; /* checked in full: the first bad event named */
	for (int d = 0; d < n; d++) {
		if (!cca_trace_scan_device(ld, d, error))
			return FALSE;
	}
	if (ld->r.p != ld->r.end) {
		cca_trace_codec_error(
			error, CCA_INPUT_ERROR_CORRUPT, ld->path, (size_t)(ld->r.p - ld->base),
			NULL, "%zu bytes of trailing garbage after the last device's events",
			(size_t)(ld->r.end - ld->r.p));
		return FALSE;
	}
	if (ld->counts.has_pools && snap->newer.pool_id_entries != ld->counts.pools) {
		cca_trace_codec_error(error, CCA_INPUT_ERROR_CORRUPT, ld->path,
				      (size_t)(ld->r.p - ld->base), NULL,
				      "the events hold %" G_GUINT64_FORMAT
				      " pool_id entries, the header's counts.pool_id_entries says "
				      "%" G_GUINT64_FORMAT,
				      snap->newer.pool_id_entries, ld->counts.pools);
		return FALSE;
	}
	return TRUE;
}

/* cca_trace_load_input() and cca_trace_load_input_streaming(). */
static CcaSnapshot *
cca_trace_load(CcaInput *input, gboolean streaming, GError **error)
{
	g_autoptr(CcaSnapshot) snap = cca_snapshot_new();
	CcaTracePriv *priv = g_new0(CcaTracePriv, 1);
	CcaTraceLoad ld = {0};
	priv->tail = -1;

	priv->input = *input;
	memset(input, 0, sizeof *input);
	snap->stream_priv = priv;
	snap->stream_priv_free = cca_trace_priv_free;
	snap->format = CCA_FORMAT_MSGPACK;
	g_free(snap->source);
	snap->source = g_strdup(priv->input.path);
	snap->pickle_protocol = 0;

	ld.snap = snap;
	ld.priv = priv;
	ld.path = priv->input.path ? priv->input.path : "(trace)";
	if (priv->input.data == NULL) { /* an empty input: point at no bytes, not NULL */
		static const unsigned char none[1];
		priv->input.data = none;
		priv->input.len = 0;
	}
	ld.base = priv->input.data;
	ld.r.p = priv->input.data;
	ld.r.end = priv->input.data + priv->input.len;

	gboolean ok = cca_trace_read_header(&ld, error) && cca_trace_read_strings(&ld, error) &&
		      cca_trace_read_frames(&ld, error) && cca_trace_read_stacks(&ld, error) &&
		      cca_trace_read_segments(&ld, error) &&
		      cca_trace_read_annotations(&ld, error) &&
		      cca_trace_read_events(&ld, streaming, error);
	g_free(ld.counts.events);
	if (!ok)
		return NULL;
	snap->stream_cursor_new = cca_trace_cursor_new;
	snap->stream_check = cca_trace_check_device;
	return g_steal_pointer(&snap);
}

CcaSnapshot *
cca_trace_load_input(CcaInput *input, GError **error)
{
	return cca_trace_load(input, FALSE, error);
}

CcaSnapshot *
cca_trace_load_input_streaming(CcaInput *input, GError **error)
{
	return cca_trace_load(input, TRUE, error);
}
