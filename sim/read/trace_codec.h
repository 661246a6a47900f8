/* trace_codec.h - the msgpack bytes of a ccasim trace, one item at a time.
 *
 * doc/trace-format.md is the reference.  Decoding: a read position in a
 * byte range (CcaMp) and bounds-checked decoders that advance it only on
 * success, so that on failure it points at the offending item; every
 * container count is checked against the bytes that remain.  A failure
 * is a code and, on the cold path, a CcaMpFault that
 * cca_trace_codec_fault() turns into the reader's one-line error.
 * Events have a fast decoder for the common shape and a checked one.
 * Encoding: emitters that write at a pointer the caller made room at
 * (CCA_OUT_ITEM bytes for one event or fixed entry) and make exactly the
 * bytes msgpack-c's packer makes for the same calls (smallest integer
 * encoding, str8 for strings of 32..255 bytes).
 *
 * Everything here is static inline: the readers (trace.c,
 * trace_events.c) and the writer (trace_write.c) run it per event.
 */
#ifndef CCA_TRACE_CODEC_H
#define CCA_TRACE_CODEC_H

#include <glib.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "event.h"
#include "text.h"

G_BEGIN_DECLS

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
static inline int
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
static inline int
cca_mp_skip_bytes(CcaMp *r, size_t hdr, uint64_t n)
{
	if ((uint64_t)(r->end - r->p) < hdr || n > (uint64_t)(r->end - r->p) - hdr)
		return CCA_MP_TRUNCATED;
	r->p += hdr + n;
	return CCA_MP_OK;
}

/* Skips one complete object of any type, checking every container count
 * against the remaining bytes and the nesting depth. */
static inline int
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
static inline int
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
static inline int
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
static inline int
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
/* Events (shared by the validation pass and the cursors)              */
/* ------------------------------------------------------------------ */

/* Table sizes the ids of an event are checked against. */
typedef struct {
	uint32_t n_strings;
	uint32_t n_stacks;
} CcaTraceLimits;

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
	/* the fast path's integer: a positive fixint or a uint 8/16/32/64
	 * at P, read without bounds checks (enough bytes remain) into a local
	 * that stays in a register, the encodings in the order traces use
	 * them most; anything else leaves the event to the checked decoder */
#define CCA_FAST_UINT(out)                           \
	do {                                         \
		unsigned c_ = *p;                    \
		if (G_LIKELY(c_ <= 0x7f)) {          \
			(out) = c_;                  \
			p++;                         \
		} else if (c_ == 0xcf) {             \
			uint64_t v_;                 \
			memcpy(&v_, p + 1, 8);       \
			(out) = GUINT64_FROM_BE(v_); \
			p += 9;                      \
		} else if (c_ == 0xcd) {             \
			uint16_t v_;                 \
			memcpy(&v_, p + 1, 2);       \
			(out) = GUINT16_FROM_BE(v_); \
			p += 3;                      \
		} else if (c_ == 0xce) {             \
			uint32_t v_;                 \
			memcpy(&v_, p + 1, 4);       \
			(out) = GUINT32_FROM_BE(v_); \
			p += 5;                      \
		} else if (c_ == 0xcc) {             \
			(out) = p[1];                \
			p += 2;                      \
		} else {                             \
			return false;                \
		}                                    \
	} while (0)
	CCA_FAST_UINT(action);
	if (action >= CCA_ACTION_COUNT)
		return false;
	CCA_FAST_UINT(addr);
	CCA_FAST_UINT(size);
	CCA_FAST_UINT(stream);
	if (*p == 0xc0) {
		time_us = CCA_TIME_NONE;
		p++;
	} else {
		uint64_t t;
		CCA_FAST_UINT(t);
		if (t > INT64_MAX)
			return false;
		time_us = (int64_t)t;
	}
	CCA_FAST_UINT(stack);
	CCA_FAST_UINT(cc);
	CCA_FAST_UINT(um);
#undef CCA_FAST_UINT
	if (stack >= lim->n_stacks || cc >= lim->n_strings || um >= lim->n_strings)
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
/* Encoder                                                             */
/* ------------------------------------------------------------------ */

#define CCA_OUT_ITEM 96 /* most bytes of one event or fixed entry */

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

static inline unsigned char *
cca_put_double(unsigned char *p, double d)
{
	uint64_t bits;
	memcpy(&bits, &d, sizeof bits);
	return cca_put_be64(p, 0xcb, bits);
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
/* Errors                                                              */
/* ------------------------------------------------------------------ */

/* Sets ERROR (CCA_INPUT_ERROR, CODE) to "PATH: offset OFFSET: WHAT
 * (CONTEXT)", WHAT made from FMT; no parentheses when CONTEXT is NULL or
 * empty. */
void cca_trace_codec_error(GError **error, int code, const char *path, size_t offset,
			   const char *context, const char *fmt, ...) G_GNUC_PRINTF(6, 7);

/* Turns the fault F into ERROR ("PATH: offset N: what (CONTEXT)"): BASE
 * is the start of the bytes, END their end, so that the offset counts
 * from the file's first byte. */
void cca_trace_codec_fault(GError **error, const CcaMpFault *f, const char *path,
			   const unsigned char *base, const unsigned char *end,
			   const char *context);

G_END_DECLS

#endif
