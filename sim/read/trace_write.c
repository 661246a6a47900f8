/* trace_write.c - ccasim's msgpack trace format: the writer.
 *
 * Layout: doc/trace-format.md.  Inline emitters (trace_codec.h) make the
 * bytes msgpack-c's packer makes, into a 1 MiB buffer written to a
 * temporary file, renamed into place only on success.  Every id is
 * checked against its table before it is written, so the writer never
 * produces a file its reader (trace.c) would reject.  Events kept encoded
 * (trace_events.c) are copied as they are once their largest ids are
 * checked.
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <string.h>
#include <unistd.h>

#include "event_cursor.h"
#include "input.h"
#include "outfile.h"
#include "size.h"
#include "trace.h"
#include "trace_codec.h"
#include "trace_events.h"
#include "trace_write.h"

/* The writer encodes straight into one output buffer with the inline
 * emitters of trace_codec.h (no per-field calls through msgpack-c's packer) and
 * hands it to write() a mebibyte at a time.  The emitters make exactly
 * the bytes msgpack-c's packer makes for the same calls (smallest
 * integer encoding, str8 for strings of 32..255 bytes), so the format's
 * bytes do not depend on which of the two wrote a file. */

#define CCA_OUT_SIZE ((size_t)CCA_MIB) /* bytes per write() */

/* A buffered file descriptor.  The first write error sticks: later
 * flushes discard their bytes and the caller reports `err`. */
typedef struct {
	unsigned char *p;   /* next free byte of buf */
	unsigned char *end; /* buf + CCA_OUT_SIZE */
	unsigned char *buf;
	int fd;
	int err; /* errno of the first failure, 0 if none */
} CcaOut;

static bool
cca_out_write_all(CcaOut *o, const unsigned char *p, size_t len)
{
	while (len > 0 && o->err == 0) {
		ssize_t w = write(o->fd, p, len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			o->err = w < 0 ? errno : EIO;
			break;
		}
		p += w;
		len -= (size_t)w;
	}
	return o->err == 0;
}

static bool
cca_out_flush(CcaOut *o)
{
	bool ok = cca_out_write_all(o, o->buf, (size_t)(o->p - o->buf));
	o->p = o->buf;
	return ok;
}

/* Makes room for N <= CCA_OUT_SIZE more bytes at o->p and returns o->p. */
static inline unsigned char *
cca_out_room(CcaOut *o, size_t n)
{
	if (G_UNLIKELY((size_t)(o->end - o->p) < n))
		cca_out_flush(o);
	return o->p;
}

/* The emitters write at P, which has room (cca_out_room()), and return
 * the byte after what they wrote. */

/* The LEN bytes at S as a str (any length). */
static void
cca_out_strn(CcaOut *o, const char *s, size_t len)
{
	unsigned char *p = cca_out_room(o, 5);
	if (len < 32)
		*p++ = (unsigned char)(0xa0 | len);
	else if (len <= 0xff) {
		*p++ = 0xd9;
		*p++ = (unsigned char)len;
	} else if (len <= 0xffff)
		p = cca_put_be16(p, 0xda, (uint16_t)len);
	else
		p = cca_put_be32(p, 0xdb, (uint32_t)len);
	o->p = p;
	if (len <= (size_t)(o->end - o->p) || (len <= CCA_OUT_SIZE && cca_out_flush(o))) {
		memcpy(o->p, s, len);
		o->p += len;
	} else {
		cca_out_flush(o);
		cca_out_write_all(o, (const unsigned char *)s, len);
	}
}

/* A NUL-terminated string, nil for NULL. */
static void
cca_out_str(CcaOut *o, const char *s)
{
	if (s == NULL)
		o->p = cca_put_nil(cca_out_room(o, 1));
	else
		cca_out_strn(o, s, strlen(s));
}

static inline void
cca_out_uint(CcaOut *o, uint64_t v)
{
	o->p = cca_put_uint(cca_out_room(o, 9), v);
}

static inline void
cca_out_int(CcaOut *o, int64_t v)
{
	o->p = cca_put_int(cca_out_room(o, 9), v);
}

static inline void
cca_out_array(CcaOut *o, uint32_t n)
{
	o->p = cca_put_array(cca_out_room(o, 5), n);
}

static inline void
cca_out_map(CcaOut *o, uint32_t n)
{
	o->p = cca_put_map(cca_out_room(o, 5), n);
}

static inline void
cca_out_bool(CcaOut *o, bool b)
{
	o->p = cca_put_bool(cca_out_room(o, 1), b);
}

/* Table sizes as written: every table holds at least its entry 0. */
typedef struct {
	uint32_t strings, frames, stacks, stack_frames, segments, blocks, annotations;
} CcaTraceSizes;

static uint32_t
cca_trace_n_stacks(const CcaSnapshot *snap)
{
	return snap->stack_offsets->len > 1 ? snap->stack_offsets->len - 1 : 1;
}

static uint32_t
cca_trace_stack_start(const CcaSnapshot *snap, uint32_t i)
{
	return i + 1 < snap->stack_offsets->len ? g_array_index(snap->stack_offsets, uint32_t, i)
						: 0;
}

static uint32_t
cca_trace_stack_end(const CcaSnapshot *snap, uint32_t i)
{
	return i + 1 < snap->stack_offsets->len
		       ? g_array_index(snap->stack_offsets, uint32_t, i + 1)
		       : 0;
}

static gboolean G_GNUC_PRINTF(3, 4)
	cca_trace_bad_snapshot(GError **error, const char *path, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	g_autofree char *what = g_strdup_vprintf(fmt, ap);
	va_end(ap);
	g_set_error(error, CCA_INPUT_ERROR, CCA_INPUT_ERROR_CORRUPT, "%s: cannot write a trace: %s",
		    path, what);
	return FALSE;
}

/* Checks the tables' ids (entries 0 are written as empty whatever they
 * hold) and fills SZ. */
static gboolean
cca_trace_check_tables(const CcaSnapshot *snap, const char *path, CcaTraceSizes *sz, GError **error)
{
	sz->strings = MAX(snap->strings->len, 1u);
	sz->frames = MAX(snap->frames->len, 1u);
	sz->stacks = cca_trace_n_stacks(snap);
	sz->stack_frames = 0;
	for (uint32_t i = 1; i < snap->strings->len; i++)
		if (g_ptr_array_index(snap->strings, i) == NULL)
			return cca_trace_bad_snapshot(error, path, "string %u is NULL", i);
	for (uint32_t i = 1; i < snap->frames->len; i++) {
		const CcaFrame *fr = &g_array_index(snap->frames, CcaFrame, i);
		if (fr->name >= sz->strings || fr->filename >= sz->strings)
			return cca_trace_bad_snapshot(error, path,
						      "frame %u names string %u/%u of %u", i,
						      fr->name, fr->filename, sz->strings);
	}
	for (uint32_t i = 1; i < sz->stacks; i++) {
		uint32_t a = cca_trace_stack_start(snap, i), b = cca_trace_stack_end(snap, i);
		if (a > b || b > snap->stack_frames->len)
			return cca_trace_bad_snapshot(error, path, "stack %u spans [%u, %u) of %u",
						      i, a, b, snap->stack_frames->len);
		for (uint32_t j = a; j < b; j++)
			if (g_array_index(snap->stack_frames, uint32_t, j) >= sz->frames)
				return cca_trace_bad_snapshot(
					error, path, "stack %u holds frame %u of %u", i,
					g_array_index(snap->stack_frames, uint32_t, j), sz->frames);
		sz->stack_frames += b - a;
	}
	return TRUE;
}

/* Checks segments, blocks and annotations and fills the rest of SZ. */
static gboolean
cca_trace_check_state(const CcaSnapshot *snap, const char *path, CcaTraceSizes *sz, GError **error)
{
	uint64_t blocks = 0;
	sz->segments = snap->segments->len;
	sz->annotations = snap->annotations->len;
	for (uint32_t i = 0; i < snap->segments->len; i++) {
		const CcaSnapSegment *s = &g_array_index(snap->segments, CcaSnapSegment, i);
		if (s->stack >= sz->stacks)
			return cca_trace_bad_snapshot(error, path, "segment %u has stack %u of %u",
						      i, s->stack, sz->stacks);
		if ((uint64_t)s->first_block + s->n_blocks > snap->blocks->len)
			return cca_trace_bad_snapshot(
				error, path, "segment %u has blocks [%u, +%u) of %u", i,
				s->first_block, s->n_blocks, snap->blocks->len);
		for (uint32_t j = 0; j < s->n_blocks; j++) {
			const CcaSnapBlock *b =
				&g_array_index(snap->blocks, CcaSnapBlock, s->first_block + j);
			if (b->stack >= sz->stacks || b->state > CCA_BLOCK_ACTIVE_PENDING_FREE)
				return cca_trace_bad_snapshot(
					error, path, "segment %u, block %u: stack %u, state %u", i,
					j, b->stack, b->state);
		}
		blocks += s->n_blocks;
	}
	if (blocks > UINT32_MAX)
		return cca_trace_bad_snapshot(error, path, "more than 2^32 blocks");
	sz->blocks = (uint32_t)blocks;
	for (uint32_t i = 0; i < snap->annotations->len; i++) {
		const CcaAnnotation *a = &g_array_index(snap->annotations, CcaAnnotation, i);
		if (a->stage >= sz->strings || a->name >= sz->strings)
			return cca_trace_bad_snapshot(error, path,
						      "annotation %u names string %u/%u", i,
						      a->stage, a->name);
	}
	if (snap->n_devices < 0 || snap->n_devices > 65536 ||
	    (snap->n_devices > 0 && snap->n_events == NULL))
		return cca_trace_bad_snapshot(error, path, "bad device count %d", snap->n_devices);
	return TRUE;
}

static void
cca_trace_pack_settings(CcaOut *o, const CcaRecordedSettings *s)
{
	cca_out_map(o, 10);
	cca_out_str(o, "present");
	cca_out_bool(o, s->present);
	cca_out_str(o, "PYTORCH_CUDA_ALLOC_CONF");
	cca_out_str(o, s->conf);
	cca_out_str(o, "max_split_size");
	cca_out_int(o, s->max_split_size);
	cca_out_str(o, "garbage_collection_threshold");
	o->p = cca_put_double(cca_out_room(o, 9), s->garbage_collection_threshold);
	cca_out_str(o, "expandable_segments");
	cca_out_bool(o, s->expandable_segments);
	cca_out_str(o, "pinned_num_register_threads");
	cca_out_int(o, s->pinned_num_register_threads);
	cca_out_str(o, "release_lock_on_cudamalloc");
	cca_out_bool(o, s->release_lock_on_cudamalloc);
	cca_out_str(o, "pinned_use_cuda_host_register");
	cca_out_bool(o, s->pinned_use_cuda_host_register);
	cca_out_str(o, "graph_capture_record_stream_reuse");
	if (s->has_graph_capture_record_stream_reuse)
		cca_out_bool(o, s->graph_capture_record_stream_reuse);
	else
		o->p = cca_put_nil(cca_out_room(o, 1));
	cca_out_str(o, "roundup_power2_divisions");
	cca_out_array(o, 16);
	for (int i = 0; i < 16; i++)
		cca_out_uint(o, s->roundup_power2_divisions[i]);
}

/* Whether SNAP holds keys of later releases that only the header can
 * carry (pool ids travel in the events). */
static bool
cca_trace_has_newer(const CcaSnapshotNewer *n)
{
	return n->annotate_entries || n->forward_frames || n->rendered_metadata ||
	       n->host_segments >= 0 || n->host_traces >= 0 || n->trace_alloc_overflowed >= 0 ||
	       n->trace_alloc_max_entries >= 0 || n->n_unknown || n->unknown_more;
}

static void
cca_out_opt_count(CcaOut *o, int64_t v)
{
	o->p = cca_put_opt_int(cca_out_room(o, 9), v, -1);
}

/* The newer_keys map (doc/trace-format.md §2.3). */
static void
cca_trace_pack_newer(CcaOut *o, const CcaSnapshotNewer *n)
{
	cca_out_map(o, 9);
	cca_out_str(o, "annotate_entries");
	cca_out_uint(o, n->annotate_entries);
	cca_out_str(o, "forward_frames");
	cca_out_uint(o, n->forward_frames);
	cca_out_str(o, "host_segments");
	cca_out_opt_count(o, n->host_segments);
	cca_out_str(o, "host_traces");
	cca_out_opt_count(o, n->host_traces);
	cca_out_str(o, "trace_alloc_overflowed");
	if (n->trace_alloc_overflowed < 0)
		cca_out_opt_count(o, -1);
	else
		cca_out_bool(o, n->trace_alloc_overflowed);
	cca_out_str(o, "trace_alloc_max_entries");
	cca_out_opt_count(o, n->trace_alloc_max_entries);
	cca_out_str(o, "rendered_metadata");
	cca_out_uint(o, n->rendered_metadata);
	cca_out_str(o, "unknown_keys");
	cca_out_map(o, n->n_unknown);
	for (uint32_t i = 0; i < n->n_unknown; i++) {
		cca_out_str(o, n->unknown_name[i]);
		cca_out_uint(o, n->unknown_count[i]);
	}
	cca_out_str(o, "unknown_more");
	cca_out_uint(o, n->unknown_more);
}

/* Stores in *N how many of device D's events carry a pool_id: counted
 * in memory, kept by a trace's bytes, or read once by a cursor ahead of
 * the writing; FALSE when that cursor fails (the writing then reports
 * the bad event). */
static bool
cca_trace_device_pools(const CcaSnapshot *snap, int d, const CcaTraceSizes *sz, uint64_t *n)
{
	const GArray *events = snap->events != NULL ? snap->events[d] : NULL;
	*n = 0;
	if (events != NULL) {
		for (guint i = 0; i < events->len; i++)
			*n += g_array_index(events, CcaEvent, i).has_pool_id;
		return true;
	}
	const CcaTraceEvents *te = cca_trace_events_of(snap, d, sz->strings, sz->stacks);
	if (te != NULL) {
		*n = cca_trace_events_pools(te);
		return true;
	}
	g_autoptr(CcaEventCursor) cur = cca_event_cursor_new(snap, d);
	if (cur == NULL)
		return false;
	GError *local = NULL;
	CcaEvent ev;
	while (cca_event_cursor_next(cur, &ev, &local))
		*n += ev.has_pool_id;
	if (local == NULL)
		return true;
	g_error_free(local);
	return false;
}

/* The events with a pool_id over every device, into *N (the header's
 * counts.pool_id_entries); FALSE when a device's events cannot be read
 * (the header then leaves the count out). */
static bool
cca_trace_pools(const CcaSnapshot *snap, const CcaTraceSizes *sz, uint64_t *n)
{
	*n = 0;
	for (int d = 0; d < snap->n_devices; d++) {
		uint64_t k;
		if (!cca_trace_device_pools(snap, d, sz, &k))
			return false;
		*n += k;
	}
	return true;
}

static void
cca_trace_pack_header(CcaOut *o, const CcaSnapshot *snap, const CcaTraceSizes *sz)
{
	bool newer = cca_trace_has_newer(&snap->newer);
	uint64_t pools;
	bool pools_known = cca_trace_pools(snap, sz, &pools);
	cca_out_map(o, newer ? 9 : 8);
	cca_out_str(o, "format"); /* first: cca_sniff_trace() relies on it */
	cca_out_str(o, CCA_TRACE_FORMAT);
	cca_out_str(o, "version");
	cca_out_uint(o, CCA_TRACE_VERSION);
	cca_out_str(o, "generator");
	cca_out_str(o, PACKAGE_NAME " " PACKAGE_VERSION);
	cca_out_str(o, "source");
	cca_out_str(o, cca_trace_origin(snap));
	cca_out_str(o, "pickle_protocol");
	cca_out_int(o, snap->pickle_protocol);
	cca_out_str(o, "devices");
	cca_out_uint(o, (uint32_t)snap->n_devices);
	cca_out_str(o, "allocator_settings");
	cca_trace_pack_settings(o, &snap->settings);
	if (newer) {
		cca_out_str(o, "newer_keys");
		cca_trace_pack_newer(o, &snap->newer);
	}
	cca_out_str(o, "counts");
	cca_out_map(o, pools_known ? 9 : 8);
	const struct {
		const char *key;
		uint32_t n;
	} counts[] = {
		{"strings", sz->strings},	  {"frames", sz->frames},
		{"stacks", sz->stacks},		  {"stack_frames", sz->stack_frames},
		{"segments", sz->segments},	  {"blocks", sz->blocks},
		{"annotations", sz->annotations},
	};
	for (size_t i = 0; i < G_N_ELEMENTS(counts); i++) {
		cca_out_str(o, counts[i].key);
		cca_out_uint(o, counts[i].n);
	}
	cca_out_str(o, "events");
	cca_out_array(o, (uint32_t)snap->n_devices);
	for (int d = 0; d < snap->n_devices; d++)
		cca_out_uint(o, snap->n_events[d]);
	if (pools_known) {
		cca_out_str(o, "pool_id_entries");
		cca_out_uint(o, pools);
	}
}

/* Packs the string, frame and stack tables; entries 0 are written empty. */
static void
cca_trace_pack_tables(CcaOut *o, const CcaSnapshot *snap, const CcaTraceSizes *sz)
{
	cca_out_array(o, sz->strings);
	cca_out_strn(o, "", 0);
	for (uint32_t i = 1; i < sz->strings; i++)
		cca_out_str(o, g_ptr_array_index(snap->strings, i));
	cca_out_array(o, sz->frames);
	for (uint32_t i = 0; i < sz->frames; i++) {
		static const CcaFrame none = {0};
		const CcaFrame *fr = i ? &g_array_index(snap->frames, CcaFrame, i) : &none;
		unsigned char *p = cca_out_room(o, CCA_OUT_ITEM);
		*p++ = 0x93;
		p = cca_put_uint(p, fr->name);
		p = cca_put_uint(p, fr->filename);
		o->p = cca_put_int(p, fr->line);
	}
	cca_out_array(o, sz->stacks);
	cca_out_array(o, 0);
	for (uint32_t i = 1; i < sz->stacks; i++) {
		uint32_t a = cca_trace_stack_start(snap, i), b = cca_trace_stack_end(snap, i);
		cca_out_array(o, b - a);
		for (uint32_t j = a; j < b; j++)
			cca_out_uint(o, g_array_index(snap->stack_frames, uint32_t, j));
	}
}

/* Packs the final segments (with their blocks) and the annotations. */
static void
cca_trace_pack_state(CcaOut *o, const CcaSnapshot *snap)
{
	cca_out_array(o, snap->segments->len);
	for (uint32_t i = 0; i < snap->segments->len; i++) {
		const CcaSnapSegment *s = &g_array_index(snap->segments, CcaSnapSegment, i);
		unsigned char *p = cca_out_room(o, 2 * CCA_OUT_ITEM);
		*p++ = 0x9c; /* 12 fields */
		p = cca_put_int(p, s->device);
		p = cca_put_uint(p, s->address);
		p = cca_put_uint(p, s->total_size);
		p = cca_put_uint(p, s->allocated_size);
		p = cca_put_uint(p, s->active_size);
		p = cca_put_uint(p, s->requested_size);
		p = cca_put_uint(p, s->stream);
		p = cca_put_bool(p, s->is_small);
		p = cca_put_bool(p, s->is_expandable);
		p = cca_put_pool(p, s->pool_id);
		p = cca_put_uint(p, s->stack);
		o->p = cca_put_array(p, s->n_blocks);
		for (uint32_t j = 0; j < s->n_blocks; j++) {
			const CcaSnapBlock *b =
				&g_array_index(snap->blocks, CcaSnapBlock, s->first_block + j);
			p = cca_out_room(o, CCA_OUT_ITEM);
			*p++ = 0x95; /* 5 fields */
			p = cca_put_uint(p, b->address);
			p = cca_put_uint(p, b->size);
			p = cca_put_uint(p, b->requested_size);
			p = cca_put_uint(p, b->stack);
			o->p = cca_put_uint(p, b->state);
		}
	}
	cca_out_array(o, snap->annotations->len);
	for (uint32_t i = 0; i < snap->annotations->len; i++) {
		const CcaAnnotation *a = &g_array_index(snap->annotations, CcaAnnotation, i);
		unsigned char *p = cca_out_room(o, CCA_OUT_ITEM);
		*p++ = 0x94; /* 4 fields */
		p = cca_put_uint(p, a->stage);
		p = cca_put_uint(p, a->name);
		p = cca_put_int(p, a->device);
		o->p = cca_put_opt_int(p, a->time_us, CCA_TIME_NONE);
	}
}


static inline gboolean
cca_trace_event_ok(const CcaEvent *ev, const CcaTraceSizes *sz)
{
	return ev->action < CCA_ACTION_COUNT && ev->stack < sz->stacks &&
	       ev->compile_context < sz->strings && ev->user_metadata < sz->strings;
}

static gboolean
cca_trace_bad_event(GError **error, const char *path, int d, uint64_t i, const CcaEvent *ev)
{
	return cca_trace_bad_snapshot(error, path,
				      "event %" G_GUINT64_FORMAT " of device %d: action %u, "
				      "stack %u, strings %u/%u outside the tables",
				      i, d, ev->action, ev->stack, ev->compile_context,
				      ev->user_metadata);
}

/* Packs the N in-memory events at EV (of device D), checking each one;
 * stops after the first one not packed.  Returns the number packed, or
 * (uint64_t)-1 with ERROR set. */
static uint64_t
cca_trace_pack_array(CcaOut *o, const CcaEvent *ev, uint64_t len, uint64_t n, int d,
		     const CcaTraceSizes *sz, const char *path, GError **error)
{
	uint64_t i = 0;
	for (; i < len; i++) {
		if (G_UNLIKELY(!cca_trace_event_ok(&ev[i], sz))) {
			cca_trace_bad_event(error, path, d, i, &ev[i]);
			return (uint64_t)-1;
		}
		if (i == n)
			return n + 1; /* one more than announced */
		unsigned char *p = o->p;
		if (G_UNLIKELY((size_t)(o->end - p) < CCA_OUT_ITEM))
			p = cca_out_room(o, CCA_OUT_ITEM);
		o->p = cca_put_event(p, &ev[i]);
	}
	return i;
}

/* Packs device D's events, checking each one: straight from the array
 * when they are in memory, else as read by its cursor. */
static gboolean
cca_trace_pack_device(CcaOut *o, const CcaSnapshot *snap, int d, const CcaTraceSizes *sz,
		      const char *path, GError **error)
{
	uint64_t n = snap->n_events[d], i = 0;
	const GArray *events = snap->events != NULL ? snap->events[d] : NULL;
	g_autoptr(CcaEventCursor) cur = events ? NULL : cca_event_cursor_new(snap, d);
	GError *local = NULL;
	CcaEvent ev;

	if (events == NULL && cur == NULL)
		return cca_trace_bad_snapshot(error, path, "device %d: no event cursor", d);
	cca_out_array(o, (uint32_t)MIN(n, UINT32_MAX));
	if (n > UINT32_MAX)
		return cca_trace_bad_snapshot(error, path, "device %d has 2^32 events or more", d);
	const CcaTraceEvents *te =
		events ? NULL : cca_trace_events_of(snap, d, sz->strings, sz->stacks);
	if (te != NULL) {
		/* Already in the trace's bytes: written straight from there. */
		size_t len;
		const unsigned char *bytes = cca_trace_events_bytes(te, &len);
		if (len > 0 && cca_out_flush(o))
			cca_out_write_all(o, bytes, len);
		return TRUE;
	}
	if (events != NULL) {
		i = cca_trace_pack_array(o, (const CcaEvent *)(const void *)events->data,
					 events->len, n, d, sz, path, error);
		if (i == (uint64_t)-1)
			return FALSE;
	} else {
		while (cca_event_cursor_next(cur, &ev, &local)) {
			if (!cca_trace_event_ok(&ev, sz))
				return cca_trace_bad_event(error, path, d, i, &ev);
			if (++i > n)
				break;
			o->p = cca_put_event(cca_out_room(o, CCA_OUT_ITEM), &ev);
		}
		if (local) {
			g_propagate_error(error, local);
			return FALSE;
		}
	}
	if (i != n)
		return cca_trace_bad_snapshot(error, path,
					      "device %d: its cursor gave %s%" G_GUINT64_FORMAT
					      " events, n_events says %" G_GUINT64_FORMAT,
					      d, i > n ? "more than " : "", i > n ? n : i, n);
	return TRUE;
}

/* Packs the whole trace into O; FALSE with ERROR on bad contents (the
 * caller checks O for I/O errors). */
static gboolean
cca_trace_pack(CcaOut *o, const CcaSnapshot *snap, const CcaTraceSizes *sz, const char *path,
	       GError **error)
{
	cca_trace_pack_header(o, snap, sz);
	cca_trace_pack_tables(o, snap, sz);
	cca_trace_pack_state(o, snap);
	for (int d = 0; d < snap->n_devices && o->err == 0; d++)
		if (!cca_trace_pack_device(o, snap, d, sz, path, error))
			return FALSE;
	return TRUE;
}

static gboolean
cca_trace_io_error(GError **error, int err, const char *path, const char *what)
{
	g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(err), "%s: %s: %s", path, what,
		    g_strerror(err));
	return FALSE;
}

/* Writes the trace into the open FD (left open). */
static gboolean
cca_trace_write_fd(int fd, const CcaSnapshot *snap, const CcaTraceSizes *sz, const char *path,
		   GError **error)
{
	CcaOut out;
	/* Not zeroed: every byte is written before it is read. */
	out.buf = g_malloc(CCA_OUT_SIZE);
	out.p = out.buf;
	out.end = out.buf + CCA_OUT_SIZE;
	out.fd = fd;
	out.err = 0;
	gboolean ok = cca_trace_pack(&out, snap, sz, path, error);
	if (ok)
		cca_out_flush(&out);
	if (ok && out.err)
		ok = cca_trace_io_error(error, out.err, path, "cannot write");
	g_free(out.buf);
	return ok;
}

gboolean
cca_trace_write(const CcaSnapshot *snap, const char *path, GError **error)
{
	CcaTraceSizes sz = {0};
	if (!cca_trace_check_tables(snap, path, &sz, error) ||
	    !cca_trace_check_state(snap, path, &sz, error))
		return FALSE;

	char *tmp = NULL;
	FILE *f = cca_outfile_open(path, &tmp, error);
	if (f == NULL)
		return FALSE;
	/* Nothing goes through F's buffer: the packer writes to its fd. */
	gboolean ok = cca_trace_write_fd(fileno(f), snap, &sz, path, error);
	return cca_outfile_close(f, tmp, path, ok, error);
}
