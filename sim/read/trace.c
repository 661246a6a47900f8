/* trace.c - ccasim's msgpack trace format: writer and streaming reader.
 *
 * Layout (doc/trace-format.md is the reference): a sequence of msgpack
 * objects
 *   header map, strings[], frames[], stacks[], segments[], annotations[],
 *   then for each device an array of events
 * where every table entry and every event is a fixed-position array.
 *
 * Writer: inline emitters that make the bytes msgpack-c's packer makes,
 * into a 1 MiB buffer written to a temporary file, renamed into place
 * only on success.  Every id is checked against its table before it is
 * written, so the writer never produces a file its reader would reject.
 *
 * Encoded events (CcaTraceEvents): a converter that only writes its
 * snapshot out keeps each device's events in the bytes the writer would
 * make for them, with the largest id of each kind; the writer checks
 * those against the tables and copies the bytes.
 *
 * Reader: the whole file is held in memory (mapped or decompressed) and
 * owned by the snapshot.  Invariants the reader establishes before it
 * returns a snapshot:
 *  - every container count was checked against the bytes that remain
 *    before anything was allocated for it;
 *  - every string/frame/stack id is below its table's size, every action
 *    below CCA_ACTION_COUNT, every block state a CcaBlockState;
 *  - each device's event array was walked once and the file ends exactly
 *    after the last device's events.
 * Events are then decoded again, one per cursor step, by a small
 * hand-written bounds-checked decoder (the hot path); msgpack-c's unpacker
 * is only used for the header map, after its extent was validated.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* mremap() */
#endif
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <msgpack.h>
#include <stdarg.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "input.h"
#include "outfile.h"
#include "size.h"
#include "text.h"
#include "trace.h"

/* ------------------------------------------------------------------ */
/* Primitive decoder                                                   */
/* ------------------------------------------------------------------ */

/* A read position in a byte range.  Decoders advance `p` only on
 * success, so on failure `p` points at the offending item. */
typedef struct {
	const unsigned char *p;
	const unsigned char *end;
} CcaMp;

/* Decoder results; 0 is success. */
enum {
	CCA_MP_OK = 0,
	CCA_MP_TRUNCATED, /* the item runs past the end */
	CCA_MP_NOT_UINT,
	CCA_MP_NOT_INT,
	CCA_MP_NOT_ARRAY,
	CCA_MP_NOT_MAP,
	CCA_MP_NOT_STR,
	CCA_MP_NOT_BOOL,
	CCA_MP_BAD_BYTE,  /* 0xc1, never used by msgpack */
	CCA_MP_TOO_MANY,  /* a container count exceeds the bytes that remain */
	CCA_MP_TOO_DEEP,  /* nesting beyond CCA_MP_MAX_DEPTH */
	CCA_MP_RANGE,	  /* an id or code at or above its limit */
	CCA_MP_NOT_INT32, /* an integer outside int32 */
	CCA_MP_SHAPE,	  /* an array of the wrong length */
	CCA_MP_MISMATCH,  /* a table's length differs from the header's count */
	CCA_MP_NOT_EMPTY, /* string 0 or stack 0 is not empty */
	CCA_MP_NOT_UTF8,  /* a str that is not UTF-8 (cca_text_is_pickle_utf8()) */
};

#define CCA_MP_MAX_DEPTH 32

/* Details of a decoding failure, filled on the (cold) error path. */
typedef struct {
	int code;
	const unsigned char *at; /* start of the offending item */
	const char *field;	 /* name of the field, or NULL */
	uint64_t value;		 /* CCA_MP_RANGE/SHAPE/MISMATCH: the value found */
	uint64_t limit;		 /* ... and the bound it broke */
} CcaMpFault;

static inline uint64_t
cca_mp_be(const unsigned char *p, unsigned n)
{
	switch (n) {
	case 1:
		return p[0];
	case 2:
		return (uint64_t)p[0] << 8 | p[1];
	case 4:
		return (uint64_t)p[0] << 24 | (uint64_t)p[1] << 16 | (uint64_t)p[2] << 8 | p[3];
	default:
		return cca_mp_be(p, 4) << 32 | cca_mp_be(p + 4, 4);
	}
}

/* Reads any msgpack integer.  *BITS receives the value as a 64-bit
 * pattern (negative values in two's complement) and *NEG whether it was
 * negative. */
static inline int
cca_mp_intbits(CcaMp *r, uint64_t *bits, bool *neg)
{
	const unsigned char *p = r->p;
	if (G_UNLIKELY(p >= r->end))
		return CCA_MP_TRUNCATED;
	unsigned c = *p;
	if (G_LIKELY(c <= 0x7f)) {
		*bits = c;
		*neg = false;
		r->p = p + 1;
		return CCA_MP_OK;
	}
	if (c >= 0xe0) {
		*bits = (uint64_t)(int64_t)(int8_t)c;
		*neg = true;
		r->p = p + 1;
		return CCA_MP_OK;
	}
	if (c < 0xcc || c > 0xd3)
		return CCA_MP_NOT_INT;
	unsigned n = 1u << (c & 3); /* cc..cf and d0..d3 carry 1, 2, 4, 8 bytes */
	if (G_UNLIKELY((size_t)(r->end - p - 1) < n))
		return CCA_MP_TRUNCATED;
	uint64_t v = cca_mp_be(p + 1, n);
	if (c >= 0xd0) { /* sign-extend */
		unsigned shift = 64 - 8 * n;
		v = (uint64_t)((int64_t)(v << shift) >> shift);
		*neg = (int64_t)v < 0;
	} else {
		*neg = false;
	}
	*bits = v;
	r->p = p + 1 + n;
	return CCA_MP_OK;
}

/* Reads a non-negative integer (any encoding). */
static inline int
cca_mp_uint(CcaMp *r, uint64_t *out)
{
	const unsigned char *p = r->p;
	if (G_LIKELY(p < r->end && *p <= 0x7f)) {
		*out = *p;
		r->p = p + 1;
		return CCA_MP_OK;
	}
	bool neg;
	int rc = cca_mp_intbits(r, out, &neg);
	if (rc == CCA_MP_NOT_INT || (rc == CCA_MP_OK && neg)) {
		r->p = p;
		return CCA_MP_NOT_UINT;
	}
	return rc;
}

/* Reads an integer in int64 range. */
static inline int
cca_mp_int(CcaMp *r, int64_t *out)
{
	const unsigned char *p = r->p;
	uint64_t bits;
	bool neg;
	int rc = cca_mp_intbits(r, &bits, &neg);
	if (rc)
		return rc;
	if (!neg && bits > INT64_MAX) {
		r->p = p;
		return CCA_MP_RANGE;
	}
	*out = (int64_t)bits;
	return CCA_MP_OK;
}

/* Reads an integer as a 64-bit pattern: uint64 as is, int64 reinterpreted. */
static inline int
cca_mp_bits(CcaMp *r, uint64_t *out)
{
	bool neg;
	return cca_mp_intbits(r, out, &neg);
}

/* Consumes a nil and returns true when the next item is one. */
static inline bool
cca_mp_nil(CcaMp *r)
{
	if (r->p < r->end && *r->p == 0xc0) {
		r->p++;
		return true;
	}
	return false;
}

/* Reads the header of a container: fixed types FIX_LO..FIX_LO+15, and the
 * 16/32-bit forms C16/C32.  The count is checked against the remaining
 * bytes: each element (PER elements each) needs at least one byte. */
static inline int
cca_mp_container(CcaMp *r, unsigned fix_lo, unsigned c16, unsigned per, uint32_t *out, int not )
{
	const unsigned char *p = r->p;
	if (G_UNLIKELY(p >= r->end))
		return CCA_MP_TRUNCATED;
	unsigned c = *p;
	uint64_t n;
	unsigned hdr;
	if (c >= fix_lo && c <= fix_lo + 15) {
		n = c - fix_lo;
		hdr = 1;
	} else if (c == c16 || c == c16 + 1) {
		unsigned w = c == c16 ? 2 : 4;
		if ((size_t)(r->end - p - 1) < w)
			return CCA_MP_TRUNCATED;
		n = cca_mp_be(p + 1, w);
		hdr = 1 + w;
	} else {
		return not ;
	}
	if (n * per > (uint64_t)(r->end - p - hdr))
		return CCA_MP_TOO_MANY;
	*out = (uint32_t)n;
	r->p = p + hdr;
	return CCA_MP_OK;
}

static inline int
cca_mp_array(CcaMp *r, uint32_t *out)
{
	return cca_mp_container(r, 0x90, 0xdc, 1, out, CCA_MP_NOT_ARRAY);
}

static inline int
cca_mp_map(CcaMp *r, uint32_t *out)
{
	return cca_mp_container(r, 0x80, 0xde, 2, out, CCA_MP_NOT_MAP);
}

/* Reads a str; *S points into the buffer (not NUL-terminated). */
static int
cca_mp_str(CcaMp *r, const char **s, uint32_t *len)
{
	const unsigned char *p = r->p;
	if (p >= r->end)
		return CCA_MP_TRUNCATED;
	unsigned c = *p, hdr;
	uint64_t n;
	if (c >= 0xa0 && c <= 0xbf) {
		n = c - 0xa0;
		hdr = 1;
	} else if (c >= 0xd9 && c <= 0xdb) {
		unsigned w = 1u << (c - 0xd9);
		if ((size_t)(r->end - p - 1) < w)
			return CCA_MP_TRUNCATED;
		n = cca_mp_be(p + 1, w);
		hdr = 1 + w;
	} else {
		return CCA_MP_NOT_STR;
	}
	if (n > (uint64_t)(r->end - p - hdr))
		return CCA_MP_TRUNCATED;
	if (!cca_text_is_pickle_utf8((const char *)p + hdr, (gsize)n))
		return CCA_MP_NOT_UTF8;
	*s = (const char *)p + hdr;
	*len = (uint32_t)n;
	r->p = p + hdr + n;
	return CCA_MP_OK;
}

/* Skips N payload bytes after a HDR-byte header. */
static int
cca_mp_skip_bytes(CcaMp *r, size_t hdr, uint64_t n)
{
	if ((uint64_t)(r->end - r->p) < hdr || n > (uint64_t)(r->end - r->p) - hdr)
		return CCA_MP_TRUNCATED;
	r->p += hdr + n;
	return CCA_MP_OK;
}

/* Skips one complete object of any type, checking every container count
 * against the remaining bytes and the nesting depth. */
static int
cca_mp_skip(CcaMp *r, int depth)
{
	if (depth > CCA_MP_MAX_DEPTH)
		return CCA_MP_TOO_DEEP;
	if (r->p >= r->end)
		return CCA_MP_TRUNCATED;
	unsigned c = *r->p;
	uint32_t n;
	int rc;
	if (c <= 0x7f || c >= 0xe0 || c == 0xc0 || c == 0xc2 || c == 0xc3)
		return cca_mp_skip_bytes(r, 1, 0);
	if ((c >= 0x90 && c <= 0x9f) || c == 0xdc || c == 0xdd) {
		if ((rc = cca_mp_array(r, &n)))
			return rc;
		for (uint32_t i = 0; i < n; i++)
			if ((rc = cca_mp_skip(r, depth + 1)))
				return rc;
		return CCA_MP_OK;
	}
	if ((c >= 0x80 && c <= 0x8f) || c == 0xde || c == 0xdf) {
		if ((rc = cca_mp_map(r, &n)))
			return rc;
		for (uint64_t i = 0; i < 2 * (uint64_t)n; i++)
			if ((rc = cca_mp_skip(r, depth + 1)))
				return rc;
		return CCA_MP_OK;
	}
	if ((c >= 0xa0 && c <= 0xbf) || (c >= 0xd9 && c <= 0xdb)) {
		const char *s;
		return cca_mp_str(r, &s, &n);
	}
	if (c >= 0xcc && c <= 0xd3)
		return cca_mp_skip_bytes(r, 1, 1u << (c & 3));
	if (c >= 0xd4 && c <= 0xd8) /* fixext: type byte + 1..16 bytes */
		return cca_mp_skip_bytes(r, 2, 1u << (c - 0xd4));
	if (c == 0xca || c == 0xcb)
		return cca_mp_skip_bytes(r, 1, c == 0xca ? 4 : 8);
	if ((c >= 0xc4 && c <= 0xc6) || (c >= 0xc7 && c <= 0xc9)) {
		bool ext = c >= 0xc7;
		unsigned w = 1u << (c - (ext ? 0xc7 : 0xc4));
		if ((size_t)(r->end - r->p - 1) < w)
			return CCA_MP_TRUNCATED;
		return cca_mp_skip_bytes(r, 1 + w + ext, cca_mp_be(r->p + 1, w));
	}
	return CCA_MP_BAD_BYTE; /* 0xc1 */
}

/* Records a failure in F and returns its code. */
static int
cca_mp_fault(CcaMpFault *f, int code, const char *field, const unsigned char *at, uint64_t value,
	     uint64_t limit)
{
	f->code = code;
	f->field = field;
	f->at = at;
	f->value = value;
	f->limit = limit;
	return code;
}

/* Runs CALL, a decoder on `r`; on failure records it in `f` and returns. */
#define CCA_MP_TRY(call, name)                                          \
	do {                                                            \
		const unsigned char *at_ = r->p;                        \
		int rc_ = (call);                                       \
		if (G_UNLIKELY(rc_))                                    \
			return cca_mp_fault(f, rc_, (name), at_, 0, 0); \
	} while (0)

/* Reads an id and checks it against the table size LIMIT. */
#define CCA_MP_ID(dst, limit, name)                                                         \
	do {                                                                                \
		const unsigned char *id_at_ = r->p;                                         \
		uint64_t id_;                                                               \
		CCA_MP_TRY(cca_mp_uint(r, &id_), (name));                                   \
		if (G_UNLIKELY(id_ >= (limit)))                                             \
			return cca_mp_fault(f, CCA_MP_RANGE, (name), id_at_, id_, (limit)); \
		(dst) = (uint32_t)id_;                                                      \
	} while (0)

/* Reads an array header and requires exactly LEN elements. */
static inline int
cca_mp_tuple(CcaMp *r, uint32_t len, const char *name, CcaMpFault *f)
{
	const unsigned char *at = r->p;
	uint32_t n;
	CCA_MP_TRY(cca_mp_array(r, &n), name);
	if (n != len)
		return cca_mp_fault(f, CCA_MP_SHAPE, name, at, n, len);
	return CCA_MP_OK;
}

/* Reads an int64 that may be nil (stored as NONE). */
static inline int
cca_mp_opt_int(CcaMp *r, int64_t none, int64_t *out, const char *name, CcaMpFault *f)
{
	if (cca_mp_nil(r)) {
		*out = none;
		return CCA_MP_OK;
	}
	CCA_MP_TRY(cca_mp_int(r, out), name);
	return CCA_MP_OK;
}

/* Reads a (int64, int64) pool id. */
static inline int
cca_mp_pool(CcaMp *r, int64_t pool[2], CcaMpFault *f)
{
	int rc = cca_mp_tuple(r, 2, "pool_id", f);
	if (rc)
		return rc;
	CCA_MP_TRY(cca_mp_int(r, &pool[0]), "pool_id");
	CCA_MP_TRY(cca_mp_int(r, &pool[1]), "pool_id");
	return CCA_MP_OK;
}

/* Reads an integer that must fit in int32. */
static int
cca_mp_int32(CcaMp *r, int32_t *out, const char *name, CcaMpFault *f)
{
	const unsigned char *at = r->p;
	int64_t v;
	CCA_MP_TRY(cca_mp_int(r, &v), name);
	if (v < INT32_MIN || v > INT32_MAX)
		return cca_mp_fault(f, CCA_MP_NOT_INT32, name, at, (uint64_t)v, 0);
	*out = (int32_t)v;
	return CCA_MP_OK;
}

/* Reads a msgpack bool. */
static int
cca_mp_bool(CcaMp *r, bool *out, const char *name, CcaMpFault *f)
{
	if (r->p >= r->end)
		return cca_mp_fault(f, CCA_MP_TRUNCATED, name, r->p, 0, 0);
	if (*r->p != 0xc2 && *r->p != 0xc3)
		return cca_mp_fault(f, CCA_MP_NOT_BOOL, name, r->p, 0, 0);
	*out = *r->p++ == 0xc3;
	return CCA_MP_OK;
}

/* ------------------------------------------------------------------ */
/* Errors                                                              */
/* ------------------------------------------------------------------ */

/* Sets ERROR to "PATH: offset N: WHAT (CONTEXT)". */
static void G_GNUC_PRINTF(6, 7)
	cca_trace_error(GError **error, int code, const char *path, size_t offset,
			const char *context, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	g_autofree char *what = g_strdup_vprintf(fmt, ap);
	va_end(ap);
	if (context && *context)
		g_set_error(error, CCA_INPUT_ERROR, code, "%s: offset %zu: %s (%s)", path, offset,
			    what, context);
	else
		g_set_error(error, CCA_INPUT_ERROR, code, "%s: offset %zu: %s", path, offset, what);
}

/* Turns the fault F into ERROR; BASE is the start of the file. */
static void
cca_trace_fault_error(GError **error, const CcaMpFault *f, const char *path,
		      const unsigned char *base, const unsigned char *end, const char *context)
{
	size_t off = (size_t)(f->at - base);
	const char *field = f->field ? f->field : "value";
	int byte = f->at < end ? *f->at : -1;
	static const char *const expected[] = {
		[CCA_MP_NOT_UINT] = "an unsigned integer",
		[CCA_MP_NOT_INT] = "an integer",
		[CCA_MP_NOT_ARRAY] = "an array",
		[CCA_MP_NOT_MAP] = "a map",
		[CCA_MP_NOT_STR] = "a string",
		[CCA_MP_NOT_BOOL] = "a bool",
	};

	switch (f->code) {
	case CCA_MP_TRUNCATED:
		cca_trace_error(error, CCA_INPUT_ERROR_TRUNCATED, path, off, context,
				"file ends inside %s (%zu bytes)", field, (size_t)(end - base));
		break;
	case CCA_MP_NOT_UINT:
	case CCA_MP_NOT_INT:
	case CCA_MP_NOT_ARRAY:
	case CCA_MP_NOT_MAP:
	case CCA_MP_NOT_STR:
	case CCA_MP_NOT_BOOL:
		cca_trace_error(error, CCA_INPUT_ERROR_CORRUPT, path, off, context,
				"expected %s for %s, found byte 0x%02x", expected[f->code], field,
				byte);
		break;
	case CCA_MP_NOT_UTF8:
		cca_trace_error(error, CCA_INPUT_ERROR_CORRUPT, path, off, context,
				"%s is not UTF-8 text", field);
		break;
	case CCA_MP_BAD_BYTE:
		cca_trace_error(error, CCA_INPUT_ERROR_CORRUPT, path, off, context,
				"invalid msgpack byte 0x%02x in %s", byte, field);
		break;
	case CCA_MP_TOO_MANY:
		cca_trace_error(error, CCA_INPUT_ERROR_LIMIT, path, off, context,
				"%s claims more elements than the %zu bytes that remain", field,
				(size_t)(end - f->at));
		break;
	case CCA_MP_TOO_DEEP:
		cca_trace_error(error, CCA_INPUT_ERROR_LIMIT, path, off, context,
				"%s nests deeper than %d levels", field, CCA_MP_MAX_DEPTH);
		break;
	case CCA_MP_RANGE:
		cca_trace_error(error, CCA_INPUT_ERROR_CORRUPT, path, off, context,
				"%s %" G_GUINT64_FORMAT
				" out of range (must be below %" G_GUINT64_FORMAT ")",
				field, f->value, f->limit);
		break;
	case CCA_MP_NOT_INT32:
		cca_trace_error(error, CCA_INPUT_ERROR_CORRUPT, path, off, context,
				"%s %" G_GINT64_FORMAT " is not a 32-bit integer", field,
				(gint64)f->value);
		break;
	case CCA_MP_SHAPE:
		cca_trace_error(error, CCA_INPUT_ERROR_CORRUPT, path, off, context,
				"%s has %" G_GUINT64_FORMAT " elements, expected %" G_GUINT64_FORMAT
				"%s",
				field, f->value, f->limit,
				strcmp(field, "event") == 0 ? " (9 with pool_id)" : "");
		break;
	case CCA_MP_MISMATCH:
		cca_trace_error(error, CCA_INPUT_ERROR_CORRUPT, path, off, context,
				"%s holds %" G_GUINT64_FORMAT
				" entries but the header counts %" G_GUINT64_FORMAT,
				field, f->value, f->limit);
		break;
	case CCA_MP_NOT_EMPTY:
	default:
		cca_trace_error(error, CCA_INPUT_ERROR_CORRUPT, path, off, context,
				"%s must be empty", field);
		break;
	}
}

/* ------------------------------------------------------------------ */
/* Events (shared by the validation pass and the cursors)              */
/* ------------------------------------------------------------------ */

/* Table sizes the ids of an event are checked against. */
typedef struct {
	uint32_t n_strings;
	uint32_t n_stacks;
} CcaTraceLimits;

/* The fast path's integer: a positive fixint or a uint 8/16/32/64 at *P,
 * read without bounds checks (the caller made sure enough bytes remain);
 * false, with *P unmoved, for any other item. */
G_ALWAYS_INLINE static inline bool
cca_mp_fast_uint(const unsigned char **pp, uint64_t *out)
{
	const unsigned char *p = *pp;
	unsigned c = p[0];
	if (G_LIKELY(c <= 0x7f)) {
		*out = c;
		*pp = p + 1;
		return true;
	}
	uint16_t v16;
	uint32_t v32;
	uint64_t v64;
	switch (c) {
	case 0xcc:
		*out = p[1];
		*pp = p + 2;
		return true;
	case 0xcd:
		memcpy(&v16, p + 1, 2);
		*out = GUINT16_FROM_BE(v16);
		*pp = p + 3;
		return true;
	case 0xce:
		memcpy(&v32, p + 1, 4);
		*out = GUINT32_FROM_BE(v32);
		*pp = p + 5;
		return true;
	case 0xcf:
		memcpy(&v64, p + 1, 8);
		*out = GUINT64_FROM_BE(v64);
		*pp = p + 9;
		return true;
	default:
		return false;
	}
}

/* The longest event the fast path decodes: an array header, eight
 * integers of at most nine bytes each. */
#define CCA_TRACE_FAST_EVENT_BYTES (1 + 8 * 9)

/* The common event, decoded without per-field bounds checks: an 8-array of
 * unsigned integers (time_us nil or unsigned, stream unsigned) whose ids
 * are in range.  Returns false, having written nothing to R, for anything
 * else; the checked decoder then handles it (and reports any fault). */
G_ALWAYS_INLINE static inline bool
cca_trace_decode_event_fast(CcaMp *r, const CcaTraceLimits *lim, CcaEvent *ev)
{
	const unsigned char *p = r->p;
	if (G_UNLIKELY((size_t)(r->end - p) < CCA_TRACE_FAST_EVENT_BYTES || p[0] != 0x98))
		return false;
	p++;
	uint64_t action, addr, size, stream, stack, cc, um;
	int64_t time_us;
	if (!cca_mp_fast_uint(&p, &action) || action >= CCA_ACTION_COUNT ||
	    !cca_mp_fast_uint(&p, &addr) || !cca_mp_fast_uint(&p, &size) ||
	    !cca_mp_fast_uint(&p, &stream))
		return false;
	if (*p == 0xc0) {
		time_us = CCA_TIME_NONE;
		p++;
	} else {
		uint64_t t;
		if (!cca_mp_fast_uint(&p, &t) || t > INT64_MAX)
			return false;
		time_us = (int64_t)t;
	}
	if (!cca_mp_fast_uint(&p, &stack) || stack >= lim->n_stacks || !cca_mp_fast_uint(&p, &cc) ||
	    cc >= lim->n_strings || !cca_mp_fast_uint(&p, &um) || um >= lim->n_strings)
		return false;
	ev->action = (uint8_t)action;
	ev->addr = addr;
	ev->size = size;
	ev->stream = stream;
	ev->time_us = time_us;
	ev->stack = (uint32_t)stack;
	ev->compile_context = (uint32_t)cc;
	ev->user_metadata = (uint32_t)um;
	ev->has_pool_id = false;
	ev->pool_id[0] = 0;
	ev->pool_id[1] = 0;
	r->p = p;
	return true;
}

/* Decodes one event at R into EV, validating it fully.  Returns CCA_MP_OK
 * or a failure recorded in F. */
static inline int
cca_trace_decode_event(CcaMp *r, const CcaTraceLimits *lim, CcaEvent *ev, CcaMpFault *f)
{
	if (G_LIKELY(cca_trace_decode_event_fast(r, lim, ev)))
		return CCA_MP_OK;

	uint32_t n;
	uint64_t action;
	const unsigned char *at = r->p;

	CCA_MP_TRY(cca_mp_array(r, &n), "event");
	if (G_UNLIKELY(n != 8 && n != 9))
		return cca_mp_fault(f, CCA_MP_SHAPE, "event", at, n, 8);
	at = r->p;
	CCA_MP_TRY(cca_mp_uint(r, &action), "action");
	if (G_UNLIKELY(action >= CCA_ACTION_COUNT))
		return cca_mp_fault(f, CCA_MP_RANGE, "action", at, action, CCA_ACTION_COUNT);
	ev->action = (uint8_t)action;
	CCA_MP_TRY(cca_mp_uint(r, &ev->addr), "addr");
	CCA_MP_TRY(cca_mp_uint(r, &ev->size), "size");
	CCA_MP_TRY(cca_mp_bits(r, &ev->stream), "stream");
	int rc = cca_mp_opt_int(r, CCA_TIME_NONE, &ev->time_us, "time_us", f);
	if (rc)
		return rc;
	CCA_MP_ID(ev->stack, lim->n_stacks, "stack");
	CCA_MP_ID(ev->compile_context, lim->n_strings, "compile_context");
	CCA_MP_ID(ev->user_metadata, lim->n_strings, "user_metadata");
	ev->has_pool_id = n == 9;
	if (n == 9)
		return cca_mp_pool(r, ev->pool_id, f);
	ev->pool_id[0] = 0;
	ev->pool_id[1] = 0;
	return CCA_MP_OK;
}

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
} CcaTraceCursor;

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
		cca_trace_fault_error(error, &f, c->priv->input.path, c->priv->input.data, c->r.end,
				      ctx);
		c->n = c->index; /* stay at the end after an error */
		return FALSE;
	}
	c->index++;
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
	cca_trace_error(error, CCA_INPUT_ERROR_CORRUPT, ld->path, ld->header_at, ctx, "%s", what);
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
		cca_trace_fault_error(error, &f, ld->path, ld->base, ld->r.end, NULL);
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
	cca_trace_fault_error(error, f, ld->path, ld->base, ld->r.end, ctx);
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
		cca_trace_error(error, CCA_INPUT_ERROR_CORRUPT, ld->path,
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
		cca_trace_error(error, CCA_INPUT_ERROR_CORRUPT, ld->path,
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
	return TRUE;
}

/* Sets up the per-device event state of the snapshot and scans every
 * device's events; the file must end right after the last one. */
static gboolean
cca_trace_read_events(CcaTraceLoad *ld, GError **error)
{
	CcaSnapshot *snap = ld->snap;
	int n = (int)ld->counts.devices;

	snap->n_devices = n;
	snap->events = g_new0(GArray *, n ? n : 1);
	snap->n_events = g_new0(uint64_t, n ? n : 1);
	ld->priv->dev = g_new0(const unsigned char *, n ? n : 1);
	for (int d = 0; d < n; d++) {
		snap->n_events[d] = ld->counts.events[d];
		if (!cca_trace_scan_device(ld, d, error))
			return FALSE;
	}
	if (ld->r.p != ld->r.end) {
		cca_trace_error(error, CCA_INPUT_ERROR_CORRUPT, ld->path,
				(size_t)(ld->r.p - ld->base), NULL,
				"%zu bytes of trailing garbage after the last device's events",
				(size_t)(ld->r.end - ld->r.p));
		return FALSE;
	}
	return TRUE;
}

CcaSnapshot *
cca_trace_load_input(CcaInput *input, GError **error)
{
	g_autoptr(CcaSnapshot) snap = cca_snapshot_new();
	CcaTracePriv *priv = g_new0(CcaTracePriv, 1);
	CcaTraceLoad ld = {0};

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
		      cca_trace_read_annotations(&ld, error) && cca_trace_read_events(&ld, error);
	g_free(ld.counts.events);
	if (!ok)
		return NULL;
	snap->stream_cursor_new = cca_trace_cursor_new;
	return g_steal_pointer(&snap);
}

/* ------------------------------------------------------------------ */
/* Writer                                                              */
/* ------------------------------------------------------------------ */

/* The writer encodes straight into one output buffer with the inline
 * emitters below (no per-field calls through msgpack-c's packer) and
 * hands it to write() a mebibyte at a time.  The emitters make exactly
 * the bytes msgpack-c's packer makes for the same calls (smallest
 * integer encoding, str8 for strings of 32..255 bytes), so the format's
 * bytes do not depend on which of the two wrote a file. */

#define CCA_OUT_SIZE ((size_t)CCA_MIB) /* bytes per write() */
#define CCA_OUT_ITEM 96		       /* most bytes of one event or fixed entry */

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

/* TAG, then the N bytes at BE (a big-endian value). */
static inline unsigned char *
cca_put_tagged(unsigned char *p, unsigned char tag, const void *be, size_t n)
{
	p[0] = tag;
	memcpy(p + 1, be, n);
	return p + 1 + n;
}

static inline unsigned char *
cca_put_be16(unsigned char *p, unsigned char tag, uint16_t v)
{
	const uint16_t be = GUINT16_TO_BE(v);
	return cca_put_tagged(p, tag, &be, 2);
}

static inline unsigned char *
cca_put_be32(unsigned char *p, unsigned char tag, uint32_t v)
{
	const uint32_t be = GUINT32_TO_BE(v);
	return cca_put_tagged(p, tag, &be, 4);
}

static inline unsigned char *
cca_put_be64(unsigned char *p, unsigned char tag, uint64_t v)
{
	const uint64_t be = GUINT64_TO_BE(v);
	return cca_put_tagged(p, tag, &be, 8);
}

/* An unsigned integer in its smallest encoding. */
static inline unsigned char *
cca_put_uint(unsigned char *p, uint64_t v)
{
	if (v < 0x80) {
		*p = (unsigned char)v;
		return p + 1;
	}
	if (v <= 0xff) {
		p[0] = 0xcc;
		p[1] = (unsigned char)v;
		return p + 2;
	}
	if (v <= 0xffff)
		return cca_put_be16(p, 0xcd, (uint16_t)v);
	if (v <= 0xffffffff)
		return cca_put_be32(p, 0xce, (uint32_t)v);
	return cca_put_be64(p, 0xcf, v);
}

/* A signed integer: as an unsigned one when >= 0, else the smallest of
 * negative fixint and int8..int64. */
static inline unsigned char *
cca_put_int(unsigned char *p, int64_t v)
{
	if (v >= 0)
		return cca_put_uint(p, (uint64_t)v);
	if (v >= -32) {
		*p = (unsigned char)(int8_t)v;
		return p + 1;
	}
	if (v >= INT8_MIN) {
		p[0] = 0xd0;
		p[1] = (unsigned char)(int8_t)v;
		return p + 2;
	}
	if (v >= INT16_MIN)
		return cca_put_be16(p, 0xd1, (uint16_t)(int16_t)v);
	if (v >= INT32_MIN)
		return cca_put_be32(p, 0xd2, (uint32_t)(int32_t)v);
	return cca_put_be64(p, 0xd3, (uint64_t)v);
}

/* A container header: fixarray/fixmap (FIX | n) below 16, else the
 * 16- or 32-bit form (TAG16, TAG16 + 1). */
static inline unsigned char *
cca_put_container(unsigned char *p, unsigned fix, unsigned char tag16, uint32_t n)
{
	if (n < 16) {
		*p = (unsigned char)(fix | n);
		return p + 1;
	}
	if (n <= 0xffff)
		return cca_put_be16(p, tag16, (uint16_t)n);
	return cca_put_be32(p, (unsigned char)(tag16 + 1), n);
}

static inline unsigned char *
cca_put_array(unsigned char *p, uint32_t n)
{
	return cca_put_container(p, 0x90, 0xdc, n);
}

static inline unsigned char *
cca_put_map(unsigned char *p, uint32_t n)
{
	return cca_put_container(p, 0x80, 0xde, n);
}

static inline unsigned char *
cca_put_nil(unsigned char *p)
{
	*p = 0xc0;
	return p + 1;
}

static inline unsigned char *
cca_put_bool(unsigned char *p, bool b)
{
	*p = b ? 0xc3 : 0xc2;
	return p + 1;
}

/* An int64 that is nil when it equals NONE. */
static inline unsigned char *
cca_put_opt_int(unsigned char *p, int64_t v, int64_t none)
{
	return v == none ? cca_put_nil(p) : cca_put_int(p, v);
}

static inline unsigned char *
cca_put_pool(unsigned char *p, const int64_t pool[2])
{
	*p++ = 0x92;
	p = cca_put_int(p, pool[0]);
	return cca_put_int(p, pool[1]);
}

static unsigned char *
cca_put_double(unsigned char *p, double d)
{
	uint64_t bits;
	memcpy(&bits, &d, sizeof bits);
	return cca_put_be64(p, 0xcb, bits);
}

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

static void
cca_trace_pack_header(CcaOut *o, const CcaSnapshot *snap, const CcaTraceSizes *sz)
{
	bool newer = cca_trace_has_newer(&snap->newer);
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
	cca_out_map(o, 8);
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

/* Encodes one event at P (CCA_OUT_ITEM bytes of room). */
static inline unsigned char *
cca_put_event(unsigned char *p, const CcaEvent *ev)
{
	*p++ = ev->has_pool_id ? 0x99 : 0x98; /* 9 or 8 fields */
	p = cca_put_uint(p, ev->action);
	p = cca_put_uint(p, ev->addr);
	p = cca_put_uint(p, ev->size);
	p = cca_put_uint(p, ev->stream);
	p = cca_put_opt_int(p, ev->time_us, CCA_TIME_NONE);
	p = cca_put_uint(p, ev->stack);
	p = cca_put_uint(p, ev->compile_context);
	p = cca_put_uint(p, ev->user_metadata);
	if (ev->has_pool_id)
		p = cca_put_pool(p, ev->pool_id);
	return p;
}

G_STATIC_ASSERT(CCA_OUT_ITEM >= 1 + 1 + 3 * 9 + 9 + 3 * 5 + 1 + 2 * 9);

/* ------------------------------------------------------------------ */
/* Encoded events                                                      */
/* ------------------------------------------------------------------ */

/* One device's events in the bytes a trace stores them as, in one
 * anonymous mapping grown with mremap() (no copy, no transient double).
 * The ids are checked at write time against their tables through the
 * largest of each kind, which the encoder keeps. */
struct CcaTraceEvents {
	unsigned char *buf; /* a mapping of `cap` bytes, or NULL */
	size_t len;	    /* bytes used */
	size_t cap;
	uint64_t n;	     /* events */
	uint32_t max_stack;  /* largest stack id among them */
	uint32_t max_string; /* largest compile_context/user_metadata id */
	uint8_t max_action;
};

#define CCA_TRACE_EVENTS_MIN ((size_t)64 << 10) /* first mapping, unless reserved */

CcaTraceEvents *
cca_trace_events_new(void)
{
	return g_new0(CcaTraceEvents, 1);
}

void
cca_trace_events_free(CcaTraceEvents *te)
{
	if (te == NULL)
		return;
	if (te->buf != NULL)
		munmap(te->buf, te->cap);
	g_free(te);
}

uint64_t
cca_trace_events_count(const CcaTraceEvents *te)
{
	return te->n;
}

/* A new anonymous mapping of SIZE bytes (a multiple of the page size).
 * One of at least CCA_INPUT_HUGE_PAGE bytes starts on a 2 MiB boundary and asks
 * for transparent huge pages: a big store is filled front to back, and a
 * fault per 4 KiB page costs more than the writes.  A smaller one keeps
 * small pages, so that a device with few events costs little.
 * MAP_FAILED when out of memory. */
static void *
cca_trace_events_map(size_t size)
{
	if (size < CCA_INPUT_HUGE_PAGE)
		return mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *raw = mmap(NULL, size + CCA_INPUT_HUGE_PAGE, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (raw == MAP_FAILED)
		return MAP_FAILED;
	uintptr_t lo =
		((uintptr_t)raw + CCA_INPUT_HUGE_PAGE - 1) & ~(uintptr_t)(CCA_INPUT_HUGE_PAGE - 1);
	size_t head = lo - (uintptr_t)raw;
	if (head > 0)
		munmap(raw, head);
	munmap((char *)lo + size, CCA_INPUT_HUGE_PAGE - head);
#ifdef MADV_HUGEPAGE
	madvise((void *)lo, size, MADV_HUGEPAGE);
#endif
	return (void *)lo;
}

/* Makes room for NEED more bytes: in place when the mapping can grow
 * there, else in a new mapping (the bytes copied once).  Out of memory is
 * fatal when FATAL, else returns FALSE with TE unchanged. */
static gboolean
cca_trace_events_grow(CcaTraceEvents *te, size_t need, gboolean fatal)
{
	size_t cap = MAX(te->cap, CCA_TRACE_EVENTS_MIN);
	while (cap - te->len < need)
		cap *= 2;
	/* Whole pages; whole huge pages once that big. */
	size_t unit = cap >= CCA_INPUT_HUGE_PAGE ? CCA_INPUT_HUGE_PAGE : (size_t)4096;
	cap = (cap + unit - 1) & ~(unit - 1);
	void *p = MAP_FAILED;
#ifdef MREMAP_MAYMOVE
	/* In place only: a moved mapping would lose its alignment. */
	if (te->buf != NULL && (p = mremap(te->buf, te->cap, cap, 0)) != MAP_FAILED) {
#ifdef MADV_HUGEPAGE
		if (cap >= CCA_INPUT_HUGE_PAGE)
			madvise(p, cap, MADV_HUGEPAGE);
#endif
	}
#endif
	if (p == MAP_FAILED) {
		p = cca_trace_events_map(cap);
		if (p != MAP_FAILED && te->buf != NULL) {
			memcpy(p, te->buf, te->len);
			munmap(te->buf, te->cap);
		}
	}
	if (p == MAP_FAILED) {
		if (fatal)
			g_error("out of memory growing the encoded events to %zu bytes", cap);
		return FALSE;
	}
	te->buf = p;
	te->cap = cap;
	return TRUE;
}

void
cca_trace_events_reserve(CcaTraceEvents *te, size_t bytes)
{
	if (bytes > te->cap - te->len)
		cca_trace_events_grow(te, bytes, FALSE); /* only a hint */
}

void
cca_trace_events_add(CcaTraceEvents *te, const CcaEvent *ev)
{
	if (G_UNLIKELY(te->cap - te->len < CCA_OUT_ITEM))
		cca_trace_events_grow(te, CCA_OUT_ITEM, TRUE);
	te->len = (size_t)(cca_put_event(te->buf + te->len, ev) - te->buf);
	te->n++;
	te->max_action = MAX(te->max_action, ev->action);
	te->max_stack = MAX(te->max_stack, ev->stack);
	te->max_string = MAX(te->max_string, MAX(ev->compile_context, ev->user_metadata));
}

CcaTraceEvents *
cca_trace_events_copy(const CcaTraceEvents *te)
{
	CcaTraceEvents *copy = cca_trace_events_new();
	*copy = *te;
	copy->buf = NULL;
	copy->len = copy->cap = 0;
	if (te->len > 0) {
		cca_trace_events_grow(copy, te->len, TRUE);
		memcpy(copy->buf, te->buf, te->len);
		copy->len = te->len;
	}
	return copy;
}

/* What a snapshot with encoded events keeps: one store per device. */
typedef struct {
	CcaTraceEvents **dev; /* [n_devices], owned */
	int n_devices;
} CcaTraceEventsPriv;

static void
cca_trace_events_priv_free(void *data)
{
	CcaTraceEventsPriv *priv = data;
	for (int d = 0; d < priv->n_devices; d++)
		cca_trace_events_free(priv->dev[d]);
	g_free(priv->dev);
	g_free(priv);
}

/* One cursor over one device's encoded events. */
typedef struct {
	CcaMp r;
	const CcaTraceEvents *te;
	const char *path;
	CcaTraceLimits limits;
	uint64_t index;
	int device;
} CcaTraceEventsCursor;

static gboolean
cca_trace_events_cursor_next(void *state, CcaEvent *out, GError **error)
{
	CcaTraceEventsCursor *c = state;
	CcaMpFault f;
	if (c->index >= c->te->n)
		return FALSE;
	if (G_UNLIKELY(cca_trace_decode_event(&c->r, &c->limits, out, &f))) {
		/* Only if the store was damaged: it holds what it was given. */
		g_autofree char *ctx = g_strdup_printf("event %" G_GUINT64_FORMAT " of device %d",
						       c->index, c->device);
		cca_trace_fault_error(error, &f, c->path, c->te->buf, c->r.end, ctx);
		c->index = c->te->n;
		return FALSE;
	}
	c->index++;
	return TRUE;
}

static const CcaCursorOps cca_trace_events_cursor_ops = {
	.next = cca_trace_events_cursor_next,
	.free = cca_trace_cursor_free,
};

/* The snapshot's stream_cursor_new. */
static void *
cca_trace_events_cursor_new(const CcaSnapshot *snap, int device, const CcaCursorOps **ops)
{
	const CcaTraceEventsPriv *priv = snap->stream_priv;
	g_return_val_if_fail(priv != NULL && device >= 0 && device < priv->n_devices, NULL);
	CcaTraceEventsCursor *c = g_new0(CcaTraceEventsCursor, 1);
	c->te = priv->dev[device];
	c->r.p = c->te->buf;
	c->r.end = c->te->buf + c->te->len;
	c->path = snap->source ? snap->source : "(snapshot)";
	/* Like a cursor over an events array, this one leaves the ids to
	 * whoever reads them (cca_trace_write() checks them). */
	c->limits.n_strings = UINT32_MAX;
	c->limits.n_stacks = UINT32_MAX;
	c->device = device;
	*ops = &cca_trace_events_cursor_ops;
	return c;
}

void
cca_trace_events_attach(CcaSnapshot *snap, CcaTraceEvents **events)
{
	g_return_if_fail(snap->stream_priv == NULL && snap->n_devices >= 0);
	CcaTraceEventsPriv *priv = g_new0(CcaTraceEventsPriv, 1);
	priv->n_devices = snap->n_devices;
	priv->dev = g_new0(CcaTraceEvents *, MAX(snap->n_devices, 1));
	if (snap->n_events == NULL)
		snap->n_events = g_new0(uint64_t, MAX(snap->n_devices, 1));
	for (int d = 0; d < snap->n_devices; d++) {
		priv->dev[d] = events[d] != NULL ? events[d] : cca_trace_events_new();
		events[d] = NULL;
		snap->n_events[d] = priv->dev[d]->n;
		if (snap->events != NULL && snap->events[d] != NULL)
			g_clear_pointer(&snap->events[d], g_array_unref);
	}
	snap->stream_priv = priv;
	snap->stream_priv_free = cca_trace_events_priv_free;
	snap->stream_cursor_new = cca_trace_events_cursor_new;
}

/* DEVICE's encoded events when SNAP holds them and they may be copied as
 * they are (counted right, ids inside the tables of SZ); else NULL. */
static const CcaTraceEvents *
cca_trace_events_of(const CcaSnapshot *snap, int device, const CcaTraceSizes *sz)
{
	if (snap->stream_cursor_new != cca_trace_events_cursor_new)
		return NULL;
	const CcaTraceEventsPriv *priv = snap->stream_priv;
	if (device >= priv->n_devices)
		return NULL;
	const CcaTraceEvents *te = priv->dev[device];
	if (te->n != snap->n_events[device] || te->max_action >= CCA_ACTION_COUNT ||
	    (te->n > 0 && (te->max_stack >= sz->stacks || te->max_string >= sz->strings)))
		return NULL; /* the cursor finds the culprit */
	return te;
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
	const CcaTraceEvents *te = events ? NULL : cca_trace_events_of(snap, d, sz);
	if (te != NULL) {
		/* Already in the trace's bytes: written straight from there. */
		if (te->len > 0 && cca_out_flush(o))
			cca_out_write_all(o, te->buf, te->len);
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
