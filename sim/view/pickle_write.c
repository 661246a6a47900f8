/* pickle_write.c - writing protocol-4 pickles as CPython's C pickler does.
 *
 * Bytes collect in the current frame; at an item boundary a frame of
 * 64 KiB or more is committed as FRAME <u64 length> <bytes> (a final frame
 * under 4 bytes goes out unframed, and a string of 64 KiB or more is
 * written outside any frame, as CPython does).  The memo is implicit:
 * every MEMOIZE takes the next index; strings are looked up by content so
 * that equal strings are written once.
 *
 * Invariant: the container stack holds one entry per open dict or list;
 * `batch` counts the items of its open batch (0..1000) and `marked` says
 * whether that batch opened with a MARK (it did unless its first item was
 * the container's last).
 */
#include "config.h"

#include "pickle_write.h"
#include "text.h"

#include <stdbool.h>
#include <string.h>

#define FRAME_TARGET 65536
#define FRAME_MIN 4
#define BATCH 1000

enum {
	OP_MARK = '(',
	OP_STOP = '.',
	OP_BININT = 'J',
	OP_BININT1 = 'K',
	OP_BININT2 = 'M',
	OP_NONE = 'N',
	OP_BINUNICODE = 'X',
	OP_APPEND = 'a',
	OP_APPENDS = 'e',
	OP_BINGET = 'h',
	OP_LONG_BINGET = 'j',
	OP_SETITEM = 's',
	OP_SETITEMS = 'u',
	OP_EMPTY_DICT = '}',
	OP_EMPTY_LIST = ']',
	OP_BINFLOAT = 'G',
	OP_PROTO = 0x80,
	OP_TUPLE2 = 0x86,
	OP_NEWTRUE = 0x88,
	OP_NEWFALSE = 0x89,
	OP_LONG1 = 0x8a,
	OP_SHORT_BINUNICODE = 0x8c,
	OP_MEMOIZE = 0x94,
	OP_FRAME = 0x95,
};

typedef struct {
	bool dict;
	bool marked;
	uint32_t batch;
} Container;

struct CcaPickleWriter {
	FILE *out;
	GString *frame;
	GArray *stack;	     /* Container */
	GHashTable *strings; /* char* (owned) -> memo index + 1 */
	uint32_t memo;	     /* entries memoized so far */
	bool failed;
};

static void
raw_write(CcaPickleWriter *w, const void *data, size_t len)
{
	if (len && fwrite(data, 1, len, w->out) != len)
		w->failed = true;
}

static void
commit_frame(CcaPickleWriter *w, bool force)
{
	GString *f = w->frame;
	if (f->len == 0 || (!force && f->len < FRAME_TARGET))
		return;
	if (f->len >= FRAME_MIN) {
		unsigned char head[9] = {OP_FRAME};
		uint64_t n = f->len;
		for (int i = 0; i < 8; i++)
			head[1 + i] = (unsigned char)(n >> (8 * i));
		raw_write(w, head, sizeof head);
	}
	raw_write(w, f->str, f->len);
	g_string_truncate(f, 0);
}

static inline void
put(CcaPickleWriter *w, unsigned char op)
{
	g_string_append_c(w->frame, (char)op);
}

static void
put_bytes(CcaPickleWriter *w, const void *data, size_t len)
{
	g_string_append_len(w->frame, data, (gssize)len);
}

static void
put_le(CcaPickleWriter *w, uint64_t v, int n)
{
	unsigned char b[8];
	for (int i = 0; i < n; i++)
		b[i] = (unsigned char)(v >> (8 * i));
	put_bytes(w, b, (size_t)n);
}

static void
memoize(CcaPickleWriter *w)
{
	put(w, OP_MEMOIZE);
	w->memo++;
}

CcaPickleWriter *
cca_pickle_write_new(FILE *out)
{
	CcaPickleWriter *w = g_new0(CcaPickleWriter, 1);
	w->out = out;
	w->frame = g_string_sized_new(FRAME_TARGET + 4096);
	w->stack = g_array_new(FALSE, FALSE, sizeof(Container));
	w->strings = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	unsigned char proto[2] = {OP_PROTO, 4};
	raw_write(w, proto, 2);
	return w;
}

gboolean
cca_pickle_write_finish(CcaPickleWriter *w, GError **error)
{
	gboolean open = w->stack->len > 0;
	put(w, OP_STOP);
	commit_frame(w, true);
	if (fflush(w->out) != 0)
		w->failed = true;
	gboolean ok = !w->failed && !open;
	if (!ok)
		g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_IO, "%s",
			    open ? "pickle writer finished inside an open container"
				 : "cannot write the pickle");
	g_string_free(w->frame, TRUE);
	g_array_free(w->stack, TRUE);
	g_hash_table_destroy(w->strings);
	g_free(w);
	return ok;
}

void
cca_pickle_write_int(CcaPickleWriter *w, int64_t v)
{
	if (v >= 0 && v <= 0xff) {
		put(w, OP_BININT1);
		put_le(w, (uint64_t)v, 1);
	} else if (v >= 0 && v <= 0xffff) {
		put(w, OP_BININT2);
		put_le(w, (uint64_t)v, 2);
	} else if (v >= INT32_MIN && v <= INT32_MAX) {
		put(w, OP_BININT);
		put_le(w, (uint64_t)(uint32_t)(int32_t)v, 4);
	} else {
		/* LONG1: the fewest little-endian two's-complement bytes */
		int n = 8;
		while (n > 1) {
			int64_t top = v >> (8 * (n - 1) - 1); /* the bits the shorter form drops */
			if (top != 0 && top != -1)
				break;
			n--;
		}
		put(w, OP_LONG1);
		put(w, (unsigned char)n);
		put_le(w, (uint64_t)v, n);
	}
}

void
cca_pickle_write_uint(CcaPickleWriter *w, uint64_t v)
{
	if (v <= (uint64_t)INT64_MAX) {
		cca_pickle_write_int(w, (int64_t)v);
		return;
	}
	put(w, OP_LONG1);
	put(w, 9);
	put_le(w, v, 8);
	put(w, 0);
}

void
cca_pickle_write_bool(CcaPickleWriter *w, gboolean v)
{
	put(w, v ? OP_NEWTRUE : OP_NEWFALSE);
}

void
cca_pickle_write_float(CcaPickleWriter *w, double v)
{
	uint64_t bits;
	memcpy(&bits, &v, sizeof bits);
	unsigned char b[8];
	for (int i = 0; i < 8; i++)
		b[i] = (unsigned char)(bits >> (56 - 8 * i));
	put(w, OP_BINFLOAT);
	put_bytes(w, b, 8);
}

void
cca_pickle_write_none(CcaPickleWriter *w)
{
	put(w, OP_NONE);
}

void
cca_pickle_write_get(CcaPickleWriter *w, uint32_t index)
{
	if (index < 256) {
		put(w, OP_BINGET);
		put(w, (unsigned char)index);
	} else {
		put(w, OP_LONG_BINGET);
		put_le(w, index, 4);
	}
}

uint32_t
cca_pickle_write_memo_mark(const CcaPickleWriter *w)
{
	return w->memo;
}

void
cca_pickle_write_str(CcaPickleWriter *w, const char *s, gssize len)
{
	size_t n = len < 0 ? strlen(s) : (size_t)len;
	/* the readers refuse strings Python's pickle would not load; one made
	 * elsewhere is mended rather than written as a pickle nobody loads */
	g_autofree char *mended = NULL;
	if (!cca_text_is_pickle_utf8(s, n)) {
		mended = g_utf8_make_valid(s, (gssize)n);
		s = mended;
		n = strlen(mended);
	}
	g_autofree char *key = g_strndup(s, n);
	gpointer hit = g_hash_table_lookup(w->strings, key);
	if (hit) {
		cca_pickle_write_get(w, GPOINTER_TO_UINT(hit) - 1);
		return;
	}
	if (n < 256) {
		put(w, OP_SHORT_BINUNICODE);
		put(w, (unsigned char)n);
		put_bytes(w, s, n);
	} else if (n < FRAME_TARGET) {
		put(w, OP_BINUNICODE);
		put_le(w, n, 4);
		put_bytes(w, s, n);
	} else {
		/* large payloads go outside frames */
		commit_frame(w, true);
		unsigned char head[5] = {OP_BINUNICODE};
		for (int i = 0; i < 4; i++)
			head[1 + i] = (unsigned char)((uint64_t)n >> (8 * i));
		raw_write(w, head, 5);
		raw_write(w, s, n);
	}
	g_hash_table_insert(w->strings, g_steal_pointer(&key), GUINT_TO_POINTER(w->memo + 1));
	memoize(w);
}

static void
container_begin(CcaPickleWriter *w, bool dict)
{
	put(w, dict ? OP_EMPTY_DICT : OP_EMPTY_LIST);
	memoize(w);
	Container c = {.dict = dict};
	g_array_append_val(w->stack, c);
}

void
cca_pickle_write_dict_begin(CcaPickleWriter *w)
{
	container_begin(w, true);
}

void
cca_pickle_write_list_begin(CcaPickleWriter *w)
{
	container_begin(w, false);
}

static void
close_batch(CcaPickleWriter *w, Container *c)
{
	if (c->marked)
		put(w, c->dict ? OP_SETITEMS : OP_APPENDS);
	else
		put(w, c->dict ? OP_SETITEM : OP_APPEND);
	c->batch = 0;
}

void
cca_pickle_write_item(CcaPickleWriter *w, gboolean last)
{
	g_return_if_fail(w->stack->len > 0);
	Container *c = &g_array_index(w->stack, Container, w->stack->len - 1);
	if (c->batch == BATCH)
		close_batch(w, c);
	if (c->batch == 0) {
		c->marked = !last;
		if (c->marked)
			put(w, OP_MARK);
	}
	c->batch++;
	commit_frame(w, false);
}

void
cca_pickle_write_end(CcaPickleWriter *w)
{
	g_return_if_fail(w->stack->len > 0);
	Container *c = &g_array_index(w->stack, Container, w->stack->len - 1);
	if (c->batch > 0)
		close_batch(w, c);
	g_array_set_size(w->stack, w->stack->len - 1);
	commit_frame(w, false);
}

void
cca_pickle_write_int_pair(CcaPickleWriter *w, int64_t a, int64_t b)
{
	cca_pickle_write_int(w, a);
	cca_pickle_write_int(w, b);
	put(w, OP_TUPLE2);
	memoize(w);
}
