/* pickle.c - a safe unpickler for PyTorch memory snapshots.
 *
 * Models the pickle virtual machine of CPython's _pickle.c for the opcodes
 * snapshot writers emit (doc/trace-format.md §12): a value stack, a stack of marks (saved
 * stack depths; the top one is the "fence" no ordinary pop may cross) and
 * a memo of shared objects.  Nothing is imported or called: the one GLOBAL
 * allowed (torch.jit._pickle.restore_type_tag) is an identity function on
 * its first argument, applied by REDUCE.
 *
 * Invariants: every length or count read from the input is checked against
 * the bytes that remain before it is used; each opcode does work
 * proportional to the bytes it consumed or the stack entries it pops, so a
 * parse is linear in the input; nodes live in a bump arena of large chunks
 * (no per-node malloc) and are immutable once built, except that lists and
 * dicts grow while APPEND(S)/SETITEM(S) fill them.
 *
 * With a consumer (cca_pickle_parse_full()), the items of a claimed list
 * are built in a "young" chunk that is reused batch after batch: at the
 * batch's APPENDS, whatever the memo still reaches is copied out, the
 * consumer converts the items and the chunk is emptied.  The invariant
 * that makes this safe: outside a batch's own items, nothing old points
 * into the young chunk (the memo is fixed up, scalars are copied out when
 * memoized, and extending an old container ends the batch by promotion).
 *
 * Speed: the opcode loop keeps its read position, stack top, memo and
 * allocation window in locals and runs the opcodes of trace entries
 * inline; inside a batch, a dict of scalars (a trace entry) is read in
 * one pass by pickle_fast_dict(), which builds exactly the nodes, memo
 * entries and allocations the opcodes would, or leaves the dict to them.
 * A progress hook lets the owner of the input drop the pages behind the
 * parse.
 *
 * long-file: one pickle virtual machine: the opcode loop, its inline fast
 * paths for trace entries and the young-chunk arena keep their state in
 * the loop's locals and share the invariants above; split, each part would
 * need the others' statics and the hot loop would lose its inlining.
 */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "input.h"
#include "pickle.h"
#include "size.h"
#include "snapshot.h"
#include "text.h"

#define PICKLE_CHUNK_MIN ((size_t)(64 * CCA_KIB))
#define PICKLE_CHUNK_MAX ((size_t)(8 * CCA_MIB))
#define PICKLE_MAX_LEN UINT32_MAX /* most items/bytes one node holds */

/* ------------------------------------------------------------ arena */

typedef struct PickleChunk PickleChunk;
struct PickleChunk {
	PickleChunk *next;
	size_t size;
	size_t used;
	max_align_t data[]; /* size bytes */
};

/* A bump allocator: allocations are 8-byte aligned and freed all at once.
 * Chunks double from 64 KiB to 8 MiB, so a small pickle stays small and a
 * big one makes few chunks; big chunks ask for transparent huge pages,
 * because page faults on fresh memory are most of the cost of a big
 * parse. */
typedef struct {
	PickleChunk *head; /* the chunk being filled; older chunks follow */
	size_t next_size;  /* size of the next regular chunk */
} PickleArena;

/* A chunk of SIZE bytes; HUGE asks for transparent huge pages when it is
 * big enough (a chunk that will be filled, not one reused from its
 * start). */
static PickleChunk *
pickle_chunk_new(size_t size, PickleChunk *next, gboolean huge)
{
	size_t total = sizeof(PickleChunk) + size;
	PickleChunk *chunk;
#ifdef MADV_HUGEPAGE
	if (huge && total >= CCA_INPUT_HUGE_PAGE) {
		total = (total + CCA_INPUT_HUGE_PAGE - 1) & ~(CCA_INPUT_HUGE_PAGE - 1);
		chunk = aligned_alloc(CCA_INPUT_HUGE_PAGE, total);
		if (chunk != NULL)
			madvise(chunk, total, MADV_HUGEPAGE);
		size = total - sizeof(PickleChunk);
	} else
#else
	(void)huge;
#endif
		chunk = malloc(total);
	if (chunk == NULL)
		g_error("out of memory allocating %zu bytes", total);
	chunk->next = next;
	chunk->size = size;
	chunk->used = 0;
	return chunk;
}

static void *
pickle_arena_alloc(PickleArena *arena, size_t size)
{
	size = (size + 7) & ~(size_t)7;
	PickleChunk *head = arena->head;
	if (G_LIKELY(head != NULL && head->size - head->used >= size)) {
		void *ptr = (char *)head->data + head->used;
		head->used += size;
		return ptr;
	}
	if (head != NULL && size > arena->next_size / 4) {
		/* A big array gets a chunk of its own behind the current one,
		 * which keeps filling. */
		head->next = pickle_chunk_new(size, head->next, TRUE);
		head->next->used = size;
		return head->next->data;
	}
	arena->next_size = MIN(MAX(arena->next_size * 2, PICKLE_CHUNK_MIN), PICKLE_CHUNK_MAX);
	arena->head = pickle_chunk_new(MAX(size, arena->next_size), head, TRUE);
	arena->head->used = size;
	return arena->head->data;
}

static void
pickle_arena_clear(PickleArena *arena)
{
	PickleChunk *chunk = arena->head;
	while (chunk != NULL) {
		PickleChunk *next = chunk->next;
		free(chunk);
		chunk = next;
	}
	arena->head = NULL;
}

/* ------------------------------------------------------------ nodes */

/* Lists, tuples and dicts carry their capacity (in items or pairs) and
 * the offset of the opcode that created them. */
typedef struct {
	CcaPickleValue value; /* first: a container is cast to and from it */
	uint32_t cap;
	uint32_t consumed; /* young item handed to the consumer (batch end only) */
	size_t offset;
} PickleContainer;

struct CcaPickle {
	PickleArena arena;
	const CcaPickleValue *root;
	int protocol;
	size_t n_nodes;
};

static gboolean
pickle_is_container(const CcaPickleValue *value)
{
	return value->type == CCA_PICKLE_LIST || value->type == CCA_PICKLE_TUPLE ||
	       value->type == CCA_PICKLE_DICT;
}

/* ------------------------------------------------------------ opcodes */

typedef enum {
	OP_UNKNOWN = 0,
	OP_OK,		/* handled */
	OP_FORBIDDEN,	/* would import, call or build arbitrary objects */
	OP_UNSUPPORTED, /* harmless, but no snapshot writer emits it */
} OpKind;

typedef struct {
	const char *name;
	OpKind kind;
} OpInfo;

#define OP(byte, opname, opkind) [byte] = {#opname, opkind}
static const OpInfo pickle_ops[256] = {
	OP(0x28, MARK, OP_OK),
	OP(0x2e, STOP, OP_OK),
	OP(0x30, POP, OP_OK),
	OP(0x31, POP_MARK, OP_OK),
	OP(0x32, DUP, OP_UNSUPPORTED),
	OP(0x46, FLOAT, OP_UNSUPPORTED),
	OP(0x49, INT, OP_UNSUPPORTED),
	OP(0x4a, BININT, OP_OK),
	OP(0x4b, BININT1, OP_OK),
	OP(0x4c, LONG, OP_UNSUPPORTED),
	OP(0x4d, BININT2, OP_OK),
	OP(0x4e, NONE, OP_OK),
	OP(0x50, PERSID, OP_FORBIDDEN),
	OP(0x51, BINPERSID, OP_FORBIDDEN),
	OP(0x52, REDUCE, OP_OK),
	OP(0x53, STRING, OP_UNSUPPORTED),
	OP(0x54, BINSTRING, OP_UNSUPPORTED),
	OP(0x55, SHORT_BINSTRING, OP_UNSUPPORTED),
	OP(0x56, UNICODE, OP_UNSUPPORTED),
	OP(0x58, BINUNICODE, OP_OK),
	OP(0x61, APPEND, OP_OK),
	OP(0x62, BUILD, OP_FORBIDDEN),
	OP(0x63, GLOBAL, OP_OK),
	OP(0x64, DICT, OP_OK),
	OP(0x7d, EMPTY_DICT, OP_OK),
	OP(0x65, APPENDS, OP_OK),
	OP(0x67, GET, OP_UNSUPPORTED),
	OP(0x68, BINGET, OP_OK),
	OP(0x69, INST, OP_FORBIDDEN),
	OP(0x6a, LONG_BINGET, OP_OK),
	OP(0x6c, LIST, OP_OK),
	OP(0x5d, EMPTY_LIST, OP_OK),
	OP(0x6f, OBJ, OP_FORBIDDEN),
	OP(0x70, PUT, OP_UNSUPPORTED),
	OP(0x71, BINPUT, OP_OK),
	OP(0x72, LONG_BINPUT, OP_OK),
	OP(0x73, SETITEM, OP_OK),
	OP(0x74, TUPLE, OP_OK),
	OP(0x29, EMPTY_TUPLE, OP_OK),
	OP(0x75, SETITEMS, OP_OK),
	OP(0x47, BINFLOAT, OP_OK),
	OP(0x80, PROTO, OP_OK),
	OP(0x81, NEWOBJ, OP_FORBIDDEN),
	OP(0x82, EXT1, OP_FORBIDDEN),
	OP(0x83, EXT2, OP_FORBIDDEN),
	OP(0x84, EXT4, OP_FORBIDDEN),
	OP(0x85, TUPLE1, OP_OK),
	OP(0x86, TUPLE2, OP_OK),
	OP(0x87, TUPLE3, OP_OK),
	OP(0x88, NEWTRUE, OP_OK),
	OP(0x89, NEWFALSE, OP_OK),
	OP(0x8a, LONG1, OP_OK),
	OP(0x8b, LONG4, OP_OK),
	OP(0x42, BINBYTES, OP_UNSUPPORTED),
	OP(0x43, SHORT_BINBYTES, OP_UNSUPPORTED),
	OP(0x8c, SHORT_BINUNICODE, OP_OK),
	OP(0x8d, BINUNICODE8, OP_OK),
	OP(0x8e, BINBYTES8, OP_UNSUPPORTED),
	OP(0x8f, EMPTY_SET, OP_UNSUPPORTED),
	OP(0x90, ADDITEMS, OP_UNSUPPORTED),
	OP(0x91, FROZENSET, OP_UNSUPPORTED),
	OP(0x92, NEWOBJ_EX, OP_FORBIDDEN),
	OP(0x93, STACK_GLOBAL, OP_FORBIDDEN),
	OP(0x94, MEMOIZE, OP_OK),
	OP(0x95, FRAME, OP_OK),
	OP(0x96, BYTEARRAY8, OP_FORBIDDEN),
	OP(0x97, NEXT_BUFFER, OP_FORBIDDEN),
	OP(0x98, READONLY_BUFFER, OP_FORBIDDEN),
};
#undef OP

/* ------------------------------------------------------------ the machine */

/* A consumer batch: the items between a claimed MARK and its APPENDS are
 * allocated in `young`, a chunk reused batch after batch.  At the APPENDS
 * the young containers the memo still refers to are copied out, the
 * consumer converts the items, and `young` is emptied.  Anything the
 * batch cannot handle (the mark popped by another opcode, an older
 * container extended with young values, `young` full) promotes the young
 * chunk to the persistent arena and ends the batch: the graph is then the
 * one a plain parse builds.  The one difference a consumer makes is that a
 * consumed item cannot be referenced again through the memo. */
typedef struct {
	const CcaPickleConsumer *consumer;
	void *user;
	gboolean active;
	size_t mark;	      /* index in marks[] of the batch's MARK */
	CcaPickleValue *list; /* the claimed list */
	PickleChunk *young;   /* allocations of the active batch */
	size_t *puts;	      /* memo indices given young containers */
	size_t n_puts, puts_cap;
	CcaPickleNodeMap copies;      /* young container -> its persistent copy */
	GPtrArray *work;	      /* young containers whose copies need items */
	CcaPickleValue *strings[256]; /* persistent str copies, by a content hash */
} PickleBatch;

#define PICKLE_YOUNG_MIN ((size_t)(256 * CCA_KIB))
#define PICKLE_YOUNG_MAX ((size_t)(32 * CCA_MIB)) /* virtual: untouched pages are free */

typedef struct {
	const unsigned char *data;
	size_t len;
	size_t pos;   /* next byte to read */
	size_t op_at; /* offset of the opcode being run */
	const char *name;
	GError **error;
	CcaPickle *pickle;

	CcaPickleValue **stack;
	size_t depth, stack_cap;
	size_t *marks; /* saved depths */
	size_t n_marks, marks_cap;
	CcaPickleValue **memo;
	size_t memo_cap;   /* slots allocated (NULL where never put) */
	size_t memo_count; /* slots filled: MEMOIZE's next index */

	CcaPickleValue *none, *true_, *false_, *tag;
	CcaPickleValue *small_ints[256]; /* BININT1 values, made on first use */

	PickleBatch batch;
	CcaPickleProgress progress; /* or NULL */
	void *progress_user;
	size_t next_progress; /* offset of its next call; SIZE_MAX for none */
} PickleParser;

#define PICKLE_PROGRESS_STEP ((size_t)256 << 10)

/* The memo entry of a consumed item: a node no parse makes, whose address
 * the hot paths compare against a constant. */
static CcaPickleValue pickle_tombstone_node;
#define PICKLE_TOMBSTONE (&pickle_tombstone_node)

static gboolean pickle_fail(PickleParser *p, int code, const char *fmt, ...) G_GNUC_PRINTF(3, 4);

static gboolean
pickle_fail(PickleParser *p, int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	g_propagate_error(p->error, g_error_new_valist(CCA_INPUT_ERROR, code, fmt, ap));
	va_end(ap);
	g_prefix_error(p->error, "%s: offset %zu: ", p->name, p->op_at);
	return FALSE;
}

static const char *
pickle_op_name(uint8_t op)
{
	return pickle_ops[op].name ? pickle_ops[op].name : "unknown";
}

static gboolean
pickle_fail_forbidden(PickleParser *p, uint8_t op, const char *detail)
{
	return pickle_fail(
		p, CCA_INPUT_ERROR_FORBIDDEN,
		"pickle opcode %s (0x%02x) is not allowed: snapshots never execute code%s",
		pickle_op_name(op), op, detail);
}

/* Checks that N argument bytes follow the opcode. */
static gboolean
pickle_need(PickleParser *p, uint64_t n)
{
	if (n <= p->len - p->pos)
		return TRUE;
	uint8_t op = p->data[p->op_at];
	return pickle_fail(p, CCA_INPUT_ERROR_TRUNCATED,
			   "truncated pickle: %s needs %" G_GUINT64_FORMAT " bytes, %zu remain",
			   pickle_op_name(op), n, p->len - p->pos);
}

static uint64_t
pickle_le(const unsigned char *b, int n)
{
	uint64_t v = 0;
	for (int i = n - 1; i >= 0; i--)
		v = (v << 8) | b[i];
	return v;
}

static inline uint32_t
pickle_le32(const unsigned char *b)
{
	uint32_t v;
	memcpy(&v, b, sizeof v);
	return GUINT32_FROM_LE(v);
}

/* ------------------------------------------------------------ young/old */

static gboolean
pickle_young(const PickleParser *p, const void *v)
{
	const PickleChunk *y = p->batch.young;
	return p->batch.active && (const char *)v >= (const char *)y->data &&
	       (const char *)v < (const char *)y->data + y->used;
}

/* Ends the active batch by making its young chunk part of the persistent
 * arena: every young node simply becomes old. */
static void
pickle_batch_promote(PickleParser *p)
{
	PickleBatch *b = &p->batch;
	PickleChunk *head = p->pickle->arena.head;
	b->young->next = head->next;
	head->next = b->young;
	b->young = NULL;
	b->active = FALSE;
	b->n_puts = 0;
	/* Real snapshots never get here; stop batching, so that a hostile
	 * pickle cannot make one young chunk per MARK. */
	b->consumer = NULL;
}

/* Allocates SIZE bytes where new nodes go: the young chunk during a batch,
 * else the persistent arena. */
static inline void *
pickle_alloc(PickleParser *p, size_t size)
{
	if (p->batch.active) {
		PickleChunk *y = p->batch.young;
		size = (size + 7) & ~(size_t)7;
		if (G_LIKELY(y->size - y->used >= size)) {
			void *ptr = (char *)y->data + y->used;
			y->used += size;
			return ptr;
		}
		pickle_batch_promote(p); /* a batch this big is no real trace's */
	}
	return pickle_arena_alloc(&p->pickle->arena, size);
}

static inline CcaPickleValue *
pickle_node(PickleParser *p, CcaPickleType type)
{
	CcaPickleValue *v = pickle_alloc(p, sizeof *v);
	*v = (CcaPickleValue){.type = type};
	p->pickle->n_nodes++;
	return v;
}

/* A new empty container made by the opcode at offset AT. */
static inline CcaPickleValue *
pickle_container_at(PickleParser *p, CcaPickleType type, size_t at)
{
	PickleContainer *c = pickle_alloc(p, sizeof *c);
	*c = (PickleContainer){.value = {.type = type}, .offset = at};
	p->pickle->n_nodes++;
	return &c->value;
}

static inline CcaPickleValue *
pickle_container(PickleParser *p, CcaPickleType type)
{
	return pickle_container_at(p, type, p->op_at);
}

static CcaPickleValue *
pickle_int(PickleParser *p, int64_t i)
{
	CcaPickleValue *v = pickle_node(p, CCA_PICKLE_INT);
	v->i = i;
	return v;
}

static inline gboolean
pickle_push(PickleParser *p, CcaPickleValue *v)
{
	if (G_UNLIKELY(p->depth == p->stack_cap)) {
		p->stack_cap *= 2;
		p->stack = g_renew(CcaPickleValue *, p->stack, p->stack_cap);
	}
	p->stack[p->depth++] = v;
	return TRUE;
}

static size_t
pickle_fence(const PickleParser *p)
{
	return p->n_marks > 0 ? p->marks[p->n_marks - 1] : 0;
}

/* Checks that N values sit above the fence. */
static gboolean
pickle_have(PickleParser *p, size_t n)
{
	if (p->depth - pickle_fence(p) >= n)
		return TRUE;
	uint8_t op = p->data[p->op_at];
	return pickle_fail(p, CCA_INPUT_ERROR_CORRUPT,
			   "pickle stack underflow: %s needs %zu values above the mark, %zu there",
			   pickle_op_name(op), n, p->depth - pickle_fence(p));
}

/* Pops the top mark into *MARK. */
static gboolean
pickle_pop_mark(PickleParser *p, size_t *mark)
{
	if (p->n_marks == 0) {
		uint8_t op = p->data[p->op_at];
		return pickle_fail(p, CCA_INPUT_ERROR_CORRUPT, "%s (0x%02x) without a MARK",
				   pickle_op_name(op), op);
	}
	if (p->batch.active && p->n_marks - 1 == p->batch.mark)
		pickle_batch_promote(p); /* not the batch's APPENDS */
	*mark = p->marks[--p->n_marks];
	return TRUE;
}

/* Makes room for N more items (pairs for a dict) in container V. */
static gboolean
pickle_reserve(PickleParser *p, CcaPickleValue *v, size_t n)
{
	PickleContainer *c = (PickleContainer *)v;
	if (n > PICKLE_MAX_LEN - v->len)
		return pickle_fail(p, CCA_INPUT_ERROR_LIMIT, "container of more than %u items",
				   PICKLE_MAX_LEN);
	size_t need = v->len + n;
	if (need <= c->cap)
		return TRUE;
	/* The first fill is exact (most containers get one batch); later
	 * ones double, so a list grown in batches costs amortised O(1). */
	size_t cap = c->cap == 0 ? need : MAX(need, MIN((size_t)c->cap * 2, PICKLE_MAX_LEN));
	size_t per = v->type == CCA_PICKLE_DICT ? 2 : 1;
	CcaPickleValue **items = pickle_alloc(p, cap * per * sizeof *items);
	if (v->len > 0)
		memcpy(items, v->items, (size_t)v->len * per * sizeof *items);
	v->items = items;
	c->cap = (uint32_t)cap;
	return TRUE;
}

/* Appends the N values at SRC to list or dict V (N even for a dict). */
static gboolean
pickle_extend(PickleParser *p, CcaPickleValue *v, CcaPickleValue **src, size_t n)
{
	size_t per = v->type == CCA_PICKLE_DICT ? 2 : 1;
	if (p->batch.active && !pickle_young(p, v))
		pickle_batch_promote(p); /* an old container must not hold young values */
	if (!pickle_reserve(p, v, n / per))
		return FALSE;
	if (n > 0) /* items is NULL while the container is empty */
		memcpy(v->items + (size_t)v->len * per, src, n * sizeof *src);
	v->len += (uint32_t)(n / per);
	return TRUE;
}

static gboolean
pickle_expect_target(PickleParser *p, const CcaPickleValue *target, CcaPickleType type)
{
	if (target->type == type)
		return TRUE;
	uint8_t op = p->data[p->op_at];
	return pickle_fail(p, CCA_INPUT_ERROR_CORRUPT, "%s onto a %s, expected a %s",
			   pickle_op_name(op), cca_pickle_type_name(target->type),
			   cca_pickle_type_name(type));
}

/* ------------------------------------------------------------ batches */

void
cca_pickle_node_map_put(CcaPickleNodeMap *m, const void *key, uintptr_t value)
{
	if (2 * (m->n + 1) > m->cap) {
		CcaPickleNodeMap old = *m;
		m->cap = old.cap ? old.cap * 2 : 64;
		m->keys = g_new0(const void *, m->cap);
		m->values = g_new(uintptr_t, m->cap);
		m->n = 0;
		for (size_t i = 0; i < old.cap; i++)
			if (old.keys[i] != NULL)
				cca_pickle_node_map_put(m, old.keys[i], old.values[i]);
		g_free(old.keys);
		g_free(old.values);
	}
	size_t i = cca_pickle_node_map_slot(m, key);
	while (m->keys[i] != NULL)
		i = (i + 1) & (m->cap - 1);
	m->keys[i] = key;
	m->values[i] = value;
	m->n++;
}

void
cca_pickle_node_map_reset(CcaPickleNodeMap *m)
{
	if (m->n > 0)
		memset(m->keys, 0, m->cap * sizeof *m->keys);
	m->n = 0;
}

void
cca_pickle_node_map_clear(CcaPickleNodeMap *m)
{
	g_free(m->keys);
	g_free(m->values);
	memset(m, 0, sizeof *m);
}

/* memcmp() == 0, inline for the short strings snapshots are made of. */
static inline gboolean
pickle_bytes_equal(const char *a, const char *b, size_t n)
{
	if (n > 16)
		return memcmp(a, b, n) == 0;
	for (size_t i = 0; i < n; i++)
		if (a[i] != b[i])
			return FALSE;
	return TRUE;
}

/* A persistent copy of young scalar V.  Equal strings may share one
 * copy: PyTorch writes some strings afresh for every trace entry ("N/A"),
 * and strings are immutable, so nobody can tell. */
static inline CcaPickleValue *
pickle_copy_scalar_old(PickleParser *p, const CcaPickleValue *v)
{
	CcaPickleValue **slot = NULL;
	if (v->type == CCA_PICKLE_STR && v->len > 0) {
		const unsigned char *s = (const unsigned char *)v->s;
		slot = &p->batch.strings[(v->len * 131u + s[0] * 31u + s[v->len - 1]) & 255];
		const CcaPickleValue *old = *slot;
		if (old != NULL && old->len == v->len && pickle_bytes_equal(old->s, v->s, v->len))
			return *slot;
	}
	CcaPickleValue *copy = pickle_arena_alloc(&p->pickle->arena, sizeof *copy);
	*copy = *v;
	if (slot != NULL)
		*slot = copy;
	return copy;
}

/* A persistent copy of young node V.  Containers get a header and an
 * items array whose slots are filled later from b->work. */
static CcaPickleValue *
pickle_copy_old(PickleParser *p, CcaPickleValue *v)
{
	PickleBatch *b = &p->batch;
	if (!pickle_is_container(v))
		return pickle_copy_scalar_old(p, v);
	uintptr_t copy;
	if (cca_pickle_node_map_get(&b->copies, v, &copy))
		return (CcaPickleValue *)copy;
	PickleContainer *c = pickle_arena_alloc(&p->pickle->arena, sizeof *c);
	*c = *(PickleContainer *)v;
	c->cap = v->len;
	c->consumed = 0;
	size_t n = (size_t)v->len * (v->type == CCA_PICKLE_DICT ? 2 : 1);
	c->value.items =
		n ? pickle_arena_alloc(&p->pickle->arena, n * sizeof *c->value.items) : NULL;
	cca_pickle_node_map_put(&b->copies, v, (uintptr_t)&c->value);
	g_ptr_array_add(b->work, v);
	return &c->value;
}

/* Copies young V and everything young it reaches into the persistent
 * arena, preserving sharing (and cycles); returns V's copy. */
static CcaPickleValue *
pickle_evacuate(PickleParser *p, CcaPickleValue *v)
{
	PickleBatch *b = &p->batch;
	if (!pickle_young(p, v))
		return v;
	CcaPickleValue *copy = pickle_copy_old(p, v);
	while (b->work->len > 0) {
		CcaPickleValue *old = g_ptr_array_steal_index_fast(b->work, b->work->len - 1);
		uintptr_t dst_at = 0;
		cca_pickle_node_map_get(&b->copies, old, &dst_at); /* pickle_copy_old() put it */
		CcaPickleValue *dst = (CcaPickleValue *)dst_at;
		size_t n = (size_t)old->len * (old->type == CCA_PICKLE_DICT ? 2 : 1);
		for (size_t i = 0; i < n; i++) {
			CcaPickleValue *item = old->items[i];
			dst->items[i] = pickle_young(p, item) ? pickle_copy_old(p, item) : item;
		}
	}
	return copy;
}

/* Called before a MARK is pushed: lets the consumer claim the empty list
 * on top of the stack for a batch. */
static void
pickle_batch_claim(PickleParser *p)
{
	PickleBatch *b = &p->batch;
	if (b->consumer == NULL || b->active || p->depth == 0)
		return;
	CcaPickleValue *list = p->stack[p->depth - 1];
	if (list->type != CCA_PICKLE_LIST || list->len != 0)
		return;
	CcaPickleStack view = {p->stack, p->depth, p->marks, p->n_marks};
	if (!b->consumer->claim(b->user, &view))
		return;
	if (b->young == NULL) {
		/* Sized to the input, so small pickles stay cheap; a batch that
		 * outgrows it is promoted, which is always correct. */
		size_t size = MIN(MAX(p->len * 4, PICKLE_YOUNG_MIN), PICKLE_YOUNG_MAX);
		b->young = pickle_chunk_new(size, NULL, FALSE);
	}
	b->young->used = 0;
	b->active = TRUE;
	b->mark = p->n_marks; /* the index the MARK is about to get */
	b->list = list;
	b->n_puts = 0;
}

/* The batch's APPENDS: moves what the memo keeps out of the young chunk,
 * hands the items above MARK to the consumer, and empties the chunk. */
static gboolean
pickle_batch_end(PickleParser *p, size_t mark)
{
	PickleBatch *b = &p->batch;
	CcaPickleValue **items = p->stack + mark;
	size_t n = p->depth - mark;
	g_assert(mark > 0 && p->stack[mark - 1] == b->list);
	for (size_t i = 0; i < n; i++)
		if (pickle_is_container(items[i]) && pickle_young(p, items[i]))
			((PickleContainer *)items[i])->consumed = 1;
	for (size_t i = 0; i < b->n_puts; i++) {
		CcaPickleValue **slot = &p->memo[b->puts[i]];
		if (pickle_young(p, *slot) && ((PickleContainer *)*slot)->consumed)
			*slot = PICKLE_TOMBSTONE; /* trace entries are never shared */
		else
			*slot = pickle_evacuate(p, *slot);
	}
	const PickleChunk *y = b->young;
	CcaPickleTransient transient = {y->data, (const char *)y->data + y->used};
	gboolean ok = b->consumer->consume(b->user, b->list, items, n, &transient, p->error);
	p->depth = mark;
	b->active = FALSE;
	b->n_puts = 0;
	b->young->used = 0;
	cca_pickle_node_map_reset(&b->copies);
	return ok;
}

/* ------------------------------------------------------------ opcode handlers */

static gboolean
pickle_op_proto(PickleParser *p)
{
	if (!pickle_need(p, 1))
		return FALSE;
	int proto = p->data[p->pos++];
	if (proto < 2 || proto > 5)
		return pickle_fail(p, CCA_INPUT_ERROR_CORRUPT,
				   "unsupported pickle protocol %d (expected 2..5)", proto);
	if (p->pickle->protocol == 0)
		p->pickle->protocol = proto;
	return TRUE;
}

/* Decodes an N-byte little-endian two's complement integer (LONG1/LONG4). */
static gboolean
pickle_op_long(PickleParser *p, uint64_t n)
{
	if (!pickle_need(p, n))
		return FALSE;
	const unsigned char *b = p->data + p->pos;
	p->pos += n;
	if (n == 0)
		return pickle_push(p, pickle_int(p, 0));
	uint64_t v = pickle_le(b, (int)MIN(n, 8));
	if (n < 8) {
		if (b[n - 1] & 0x80)
			v |= ~(uint64_t)0 << (8 * n);
		return pickle_push(p, pickle_int(p, (int64_t)v));
	}
	/* Bytes past the eighth may only repeat the sign. */
	uint8_t fill = b[n - 1];
	gboolean fits = n == 8 || fill == 0x00 || fill == 0xff;
	for (uint64_t i = 8; fits && i < n; i++)
		fits = b[i] == fill;
	if (fits && n > 8 && fill == 0xff && !(v >> 63))
		fits = FALSE; /* below -2^63 */
	if (!fits)
		return pickle_fail(p, CCA_INPUT_ERROR_LIMIT,
				   "integer of %" G_GUINT64_FORMAT " bytes does not fit in 64 bits",
				   n);
	if (n > 8 && fill == 0x00 && (v >> 63)) {
		CcaPickleValue *u = pickle_node(p, CCA_PICKLE_UINT);
		u->u = v;
		return pickle_push(p, u);
	}
	return pickle_push(p, pickle_int(p, (int64_t)v));
}

static gboolean
pickle_op_float(PickleParser *p)
{
	if (!pickle_need(p, 8))
		return FALSE;
	uint64_t bits = 0;
	for (int i = 0; i < 8; i++)
		bits = (bits << 8) | p->data[p->pos + i]; /* big-endian */
	p->pos += 8;
	CcaPickleValue *v = pickle_node(p, CCA_PICKLE_FLOAT);
	memcpy(&v->f, &bits, sizeof v->f);
	return pickle_push(p, v);
}

/* A string whose length is an ARG_BYTES-byte little-endian prefix. */
static gboolean
pickle_op_unicode(PickleParser *p, int arg_bytes)
{
	if (!pickle_need(p, (uint64_t)arg_bytes))
		return FALSE;
	uint64_t n = pickle_le(p->data + p->pos, arg_bytes);
	p->pos += (size_t)arg_bytes;
	if (!pickle_need(p, n))
		return FALSE;
	if (n > PICKLE_MAX_LEN)
		return pickle_fail(p, CCA_INPUT_ERROR_LIMIT,
				   "string of %" G_GUINT64_FORMAT " bytes is too long", n);
	if (!cca_text_is_pickle_utf8((const char *)p->data + p->pos, (gsize)n))
		return pickle_fail(p, CCA_INPUT_ERROR_CORRUPT,
				   "a string of %" G_GUINT64_FORMAT
				   " bytes that is not UTF-8 (Python's pickle refuses it)",
				   n);
	CcaPickleValue *v = pickle_node(p, CCA_PICKLE_STR);
	v->s = (const char *)p->data + p->pos;
	v->len = (uint32_t)n;
	p->pos += n;
	return pickle_push(p, v);
}

/* Memos of at least this many bytes are mappings of their own. */
#define PICKLE_MEMO_MAP ((size_t)CCA_MIB)

static void
pickle_memo_free(CcaPickleValue **memo, size_t cap)
{
	size_t size = cap * sizeof *memo;
	if (size >= PICKLE_MEMO_MAP)
		munmap(memo, size);
	else
		free(memo);
}

/* Gives the memo CAP zeroed slots, keeping those it has.  A big memo is a
 * mapping that asks for transparent huge pages: it is filled front to
 * back, and one fault per 4 KiB costs more than the stores (two faults,
 * as a slot is read before it is written). */
static void
pickle_memo_grow(PickleParser *p, size_t cap)
{
	size_t size = cap * sizeof *p->memo;
	CcaPickleValue **memo = NULL;
	if (size >= PICKLE_MEMO_MAP) {
		size = (size + CCA_INPUT_HUGE_PAGE - 1) & ~(CCA_INPUT_HUGE_PAGE - 1);
		cap = size / sizeof *p->memo;
		/* Map a huge page more, then trim to a 2 MiB-aligned start. */
		char *raw = mmap(NULL, size + CCA_INPUT_HUGE_PAGE, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (raw != MAP_FAILED) {
			uintptr_t lo = ((uintptr_t)raw + CCA_INPUT_HUGE_PAGE - 1) &
				       ~(uintptr_t)(CCA_INPUT_HUGE_PAGE - 1);
			size_t head = lo - (uintptr_t)raw;
			if (head > 0)
				munmap(raw, head);
			munmap((char *)lo + size, CCA_INPUT_HUGE_PAGE - head);
			memo = (CcaPickleValue **)lo;
#ifdef MADV_HUGEPAGE
			madvise(memo, size, MADV_HUGEPAGE);
#endif
		}
	} else {
		memo = calloc(cap, sizeof *memo);
	}
	if (memo == NULL)
		g_error("out of memory growing the pickle memo to %zu entries", cap);
	if (p->memo != NULL) {
		memcpy(memo, p->memo, p->memo_cap * sizeof *memo);
		pickle_memo_free(p->memo, p->memo_cap);
	}
	p->memo = memo;
	p->memo_cap = cap;
}

static gboolean
pickle_memo_put(PickleParser *p, uint64_t idx)
{
	if (!pickle_have(p, 1))
		return FALSE;
	/* A writer numbers memo entries densely, each put costing at least
	 * one byte, so no real index exceeds the input's length. */
	if (idx >= (uint64_t)p->len + 256)
		return pickle_fail(p, CCA_INPUT_ERROR_LIMIT,
				   "memo index %" G_GUINT64_FORMAT " is beyond any real pickle's",
				   idx);
	if (idx >= p->memo_cap)
		pickle_memo_grow(p, MAX(p->memo_cap * 2, (size_t)idx + 1));
	if (p->memo[idx] == NULL)
		p->memo_count++;
	CcaPickleValue *v = p->stack[p->depth - 1];
	if (p->batch.active && pickle_young(p, v)) {
		if (pickle_is_container(v)) {
			/* Copied out at the batch's end, once complete. */
			PickleBatch *b = &p->batch;
			if (b->n_puts == b->puts_cap) {
				b->puts_cap = MAX(b->puts_cap * 2, 1024);
				b->puts = g_renew(size_t, b->puts, b->puts_cap);
			}
			b->puts[b->n_puts++] = (size_t)idx;
		} else {
			/* A new scalar is referenced by the stack alone: move it
			 * out of the young chunk now. */
			v = pickle_copy_old(p, v);
			p->stack[p->depth - 1] = v;
		}
	}
	p->memo[idx] = v;
	return TRUE;
}

static gboolean
pickle_memo_get(PickleParser *p, uint64_t idx)
{
	if (idx >= p->memo_cap || p->memo[idx] == NULL)
		return pickle_fail(p, CCA_INPUT_ERROR_CORRUPT,
				   "memo index %" G_GUINT64_FORMAT " is empty", idx);
	if (p->memo[idx] == PICKLE_TOMBSTONE)
		return pickle_fail(p, CCA_INPUT_ERROR_CORRUPT,
				   "memo index %" G_GUINT64_FORMAT
				   " refers to a trace entry, which snapshots never share",
				   idx);
	return pickle_push(p, p->memo[idx]);
}

/* BINPUT/LONG_BINPUT/BINGET/LONG_BINGET with an ARG_BYTES-byte index. */
static gboolean
pickle_op_memo(PickleParser *p, int arg_bytes, gboolean put)
{
	if (!pickle_need(p, (uint64_t)arg_bytes))
		return FALSE;
	uint64_t idx = pickle_le(p->data + p->pos, arg_bytes);
	p->pos += (size_t)arg_bytes;
	return put ? pickle_memo_put(p, idx) : pickle_memo_get(p, idx);
}

/* Pushes a tuple of the values above stack index FROM, popping them. */
static gboolean
pickle_tuple_from(PickleParser *p, size_t from, CcaPickleType type)
{
	size_t n = p->depth - from;
	CcaPickleValue *t = pickle_container(p, type);
	if (n > 0) {
		if (!pickle_reserve(p, t, type == CCA_PICKLE_DICT ? n / 2 : n))
			return FALSE;
		memcpy(t->items, p->stack + from, n * sizeof *p->stack);
		t->len = (uint32_t)(type == CCA_PICKLE_DICT ? n / 2 : n);
	}
	p->depth = from;
	return pickle_push(p, t);
}

static gboolean
pickle_op_tuple_n(PickleParser *p, size_t n)
{
	if (!pickle_have(p, n))
		return FALSE;
	return pickle_tuple_from(p, p->depth - n, CCA_PICKLE_TUPLE);
}

/* TUPLE, LIST and DICT: build a new container from the values above the
 * mark. */
static gboolean
pickle_op_build_marked(PickleParser *p, CcaPickleType type)
{
	size_t mark = 0;
	if (!pickle_pop_mark(p, &mark))
		return FALSE;
	if (type == CCA_PICKLE_DICT && (p->depth - mark) % 2 != 0)
		return pickle_fail(p, CCA_INPUT_ERROR_CORRUPT,
				   "DICT with an odd number of values (%zu) above the mark",
				   p->depth - mark);
	return pickle_tuple_from(p, mark, type);
}

static gboolean
pickle_op_append(PickleParser *p)
{
	if (!pickle_have(p, 2))
		return FALSE;
	CcaPickleValue *list = p->stack[p->depth - 2];
	if (!pickle_expect_target(p, list, CCA_PICKLE_LIST))
		return FALSE;
	if (!pickle_extend(p, list, p->stack + p->depth - 1, 1))
		return FALSE;
	p->depth--;
	return TRUE;
}

static gboolean
pickle_op_setitem(PickleParser *p)
{
	if (!pickle_have(p, 3))
		return FALSE;
	CcaPickleValue *dict = p->stack[p->depth - 3];
	if (!pickle_expect_target(p, dict, CCA_PICKLE_DICT))
		return FALSE;
	if (!pickle_extend(p, dict, p->stack + p->depth - 2, 2))
		return FALSE;
	p->depth -= 2;
	return TRUE;
}

/* APPENDS and SETITEMS: move the values above the mark into the list or
 * dict just below it. */
static gboolean
pickle_op_extend_marked(PickleParser *p, CcaPickleType type)
{
	size_t mark = 0;
	if (p->batch.active && p->n_marks - 1 == p->batch.mark && type == CCA_PICKLE_LIST) {
		mark = p->marks[--p->n_marks];
		return pickle_batch_end(p, mark);
	}
	if (!pickle_pop_mark(p, &mark))
		return FALSE;
	if (mark == 0 || mark - 1 < pickle_fence(p))
		return pickle_fail(p, CCA_INPUT_ERROR_CORRUPT,
				   "pickle stack underflow: %s has no container below its mark",
				   pickle_op_name(p->data[p->op_at]));
	CcaPickleValue *target = p->stack[mark - 1];
	if (!pickle_expect_target(p, target, type))
		return FALSE;
	size_t n = p->depth - mark;
	if (type == CCA_PICKLE_DICT && n % 2 != 0)
		return pickle_fail(p, CCA_INPUT_ERROR_CORRUPT,
				   "SETITEMS with an odd number of values (%zu) above the mark", n);
	if (n > 0 && !pickle_extend(p, target, p->stack + mark, n))
		return FALSE;
	p->depth = mark;
	return TRUE;
}

static gboolean
pickle_op_mark(PickleParser *p)
{
	if (p->n_marks >= CCA_PICKLE_MAX_MARKS)
		return pickle_fail(p, CCA_INPUT_ERROR_LIMIT, "more than %d nested MARKs",
				   CCA_PICKLE_MAX_MARKS);
	if (p->n_marks == p->marks_cap) {
		p->marks_cap *= 2;
		p->marks = g_renew(size_t, p->marks, p->marks_cap);
	}
	pickle_batch_claim(p);
	p->marks[p->n_marks++] = p->depth;
	return TRUE;
}

static gboolean
pickle_op_pop(PickleParser *p)
{
	if (p->depth > pickle_fence(p))
		p->depth--;
	else if (p->n_marks > 0) {
		if (p->batch.active && p->n_marks - 1 == p->batch.mark)
			pickle_batch_promote(p);
		p->n_marks--; /* as CPython: POP right after MARK drops the mark */
	} else
		return pickle_have(p, 1);
	return TRUE;
}

static gboolean
pickle_op_pop_mark(PickleParser *p)
{
	size_t mark = 0;
	if (!pickle_pop_mark(p, &mark))
		return FALSE;
	p->depth = mark;
	return TRUE;
}

/* Copies at most 60 bytes of S into a printable, escaped string. */
static char *
pickle_printable(const unsigned char *s, size_t len)
{
	GString *out = g_string_new(NULL);
	for (size_t i = 0; i < len && i < 60; i++) {
		if (s[i] >= 0x20 && s[i] < 0x7f && s[i] != '\\')
			g_string_append_c(out, (char)s[i]);
		else
			g_string_append_printf(out, "\\x%02x", s[i]);
	}
	if (len > 60)
		g_string_append(out, "...");
	return g_string_free(out, FALSE);
}

/* Reads one newline-terminated GLOBAL argument line. */
static gboolean
pickle_global_line(PickleParser *p, const unsigned char **line, size_t *len)
{
	const unsigned char *start = p->data + p->pos;
	const unsigned char *nl = memchr(start, '\n', p->len - p->pos);
	if (nl == NULL)
		return pickle_fail(p, CCA_INPUT_ERROR_TRUNCATED,
				   "truncated pickle: GLOBAL argument has no newline");
	*line = start;
	*len = (size_t)(nl - start);
	p->pos += *len + 1;
	return TRUE;
}

static gboolean
pickle_op_global(PickleParser *p)
{
	static const char module[] = "torch.jit._pickle";
	static const char name[] = "restore_type_tag";
	const unsigned char *m = NULL, *n = NULL;
	size_t mlen = 0, nlen = 0;
	if (!pickle_global_line(p, &m, &mlen) || !pickle_global_line(p, &n, &nlen))
		return FALSE;
	if (mlen == sizeof module - 1 && memcmp(m, module, mlen) == 0 && nlen == sizeof name - 1 &&
	    memcmp(n, name, nlen) == 0)
		return pickle_push(p, p->tag);
	g_autofree char *pm = pickle_printable(m, mlen);
	g_autofree char *pn = pickle_printable(n, nlen);
	g_autofree char *detail = g_strdup_printf(" (%s.%s)", pm, pn);
	return pickle_fail_forbidden(p, 0x63, detail);
}

static gboolean
pickle_op_reduce(PickleParser *p)
{
	if (!pickle_have(p, 2))
		return FALSE;
	CcaPickleValue *args = p->stack[p->depth - 1];
	CcaPickleValue *callable = p->stack[p->depth - 2];
	if (callable != p->tag)
		return pickle_fail_forbidden(p, 0x52, "");
	if (args->type != CCA_PICKLE_TUPLE || args->len < 1)
		return pickle_fail(
			p, CCA_INPUT_ERROR_CORRUPT,
			"REDUCE of restore_type_tag needs a tuple of arguments, got a %s",
			cca_pickle_type_name(args->type));
	p->depth -= 2;
	return pickle_push(p, args->items[0]);
}

static gboolean
pickle_op_stop(PickleParser *p)
{
	if (p->depth != 1 || p->n_marks != 0)
		return pickle_fail(
			p, CCA_INPUT_ERROR_CORRUPT,
			"STOP with %zu values and %zu marks on the stack (expected 1 and 0)",
			p->depth, p->n_marks);
	p->pickle->root = p->stack[0];
	return TRUE;
}

static gboolean
pickle_op_refused(PickleParser *p, uint8_t op)
{
	switch (pickle_ops[op].kind) {
	case OP_FORBIDDEN:
		return pickle_fail_forbidden(p, op, "");
	case OP_UNSUPPORTED:
		return pickle_fail(
			p, CCA_INPUT_ERROR_CORRUPT,
			"pickle opcode %s (0x%02x) is not supported: memory snapshots never "
			"use it",
			pickle_op_name(op), op);
	default:
		return pickle_fail(p, CCA_INPUT_ERROR_CORRUPT, "unknown pickle opcode 0x%02x", op);
	}
}

static CcaPickleValue *
pickle_small_int(PickleParser *p, uint8_t i)
{
	if (p->small_ints[i] == NULL) {
		/* Cached across batches, so never young. */
		CcaPickleValue *v = pickle_arena_alloc(&p->pickle->arena, sizeof *v);
		memset(v, 0, sizeof *v);
		v->type = CCA_PICKLE_INT;
		v->i = i;
		p->pickle->n_nodes++;
		p->small_ints[i] = v;
	}
	return p->small_ints[i];
}

/* LONG1 when the loop's fast path declines (more than 8 bytes, or fewer
 * than 9 to read). */
static gboolean
pickle_op_long1(PickleParser *p)
{
	if (!pickle_need(p, 1))
		return FALSE;
	p->pos++;
	return pickle_op_long(p, p->data[p->pos - 1]);
}

static void
pickle_grow_stack(PickleParser *p)
{
	p->stack_cap *= 2;
	p->stack = g_renew(CcaPickleValue *, p->stack, p->stack_cap);
}

/* The chunk new nodes go to: see pickle_alloc(). */
static inline PickleChunk *
pickle_window(const PickleParser *p)
{
	return p->batch.active ? p->batch.young : p->pickle->arena.head;
}

/* ------------------------------------------------------------ trace entries */

/* The most pairs pickle_fast_dict() takes in one dict. */
#define PICKLE_FAST_PAIRS 16

/* MEMOIZE of V, the value on top of the stack, as op_memoize does it;
 * returns what the stack top becomes.  The caller checked that slot
 * memo_count is free and below memo_cap. */
static inline CcaPickleValue *
pickle_fast_memoize(PickleParser *p, CcaPickleValue *v)
{
	size_t idx = p->memo_count++;
	if (p->batch.active && pickle_young(p, v)) {
		if (pickle_is_container(v)) {
			PickleBatch *b = &p->batch;
			if (b->n_puts == b->puts_cap) {
				b->puts_cap = MAX(b->puts_cap * 2, 1024);
				b->puts = g_renew(size_t, b->puts, b->puts_cap);
			}
			b->puts[b->n_puts++] = idx;
		} else {
			v = pickle_copy_scalar_old(p, v);
		}
	}
	p->memo[idx] = v;
	return v;
}

/* EMPTY_DICT in a consumer batch, where nearly every dict is a trace
 * entry: EMPTY_DICT [MEMOIZE] MARK (key value)* SETITEMS, the keys memo
 * references, the values ints, strs (maybe memoized), None, bools or
 * memo references, FRAMEs anywhere.  Such a dict is read in one pass,
 * then built with the nodes, memo entries and allocations, in the order,
 * that the opcodes one by one would make; anything else returns FALSE
 * before changing anything, and the loop runs the opcodes itself.  P's
 * fields are current (SAVE()); p->pos is just past the EMPTY_DICT. */
static gboolean
pickle_fast_dict(PickleParser *p)
{
	const unsigned char *const d = p->data;
	const size_t len = p->len;
	CcaPickleValue **const memo = p->memo;
	const size_t first = p->memo_count; /* memo refs must be below */
	const size_t refs = MIN(first, p->memo_cap);
	size_t pos = p->pos, n = 0, n_memo = 0, n_new = 0, idx;
	gboolean memo_dict = FALSE;
	/* The pairs: key, and value node or, when NULL, a new int (`num`)
	 * or str (`str`, `num` bytes, memoized when `memo` is set). */
	CcaPickleValue *key[PICKLE_FAST_PAIRS], *val[PICKLE_FAST_PAIRS];
	int64_t num[PICKLE_FAST_PAIRS];
	const unsigned char *str[PICKLE_FAST_PAIRS];
	bool memoized[PICKLE_FAST_PAIRS];
	CcaPickleValue *v;

	/* [MEMOIZE] MARK */
	for (;;) {
		if (pos >= len)
			return FALSE;
		if (d[pos] == 0x95) { /* FRAME */
			if (len - pos < 9)
				return FALSE;
			pos += 9;
		} else if (d[pos] == 0x94 && !memo_dict) {
			memo_dict = TRUE;
			n_memo++;
			pos++;
		} else if (d[pos] == 0x28) {
			pos++;
			break;
		} else {
			return FALSE;
		}
	}
	if (p->n_marks >= CCA_PICKLE_MAX_MARKS)
		return FALSE;
	for (;;) {
		/* the key, or the SETITEMS */
		if (pos >= len)
			return FALSE;
		switch (d[pos]) {
		case 0x6a: /* LONG_BINGET */
			if (len - pos < 5)
				return FALSE;
			idx = pickle_le32(d + pos + 1);
			pos += 5;
			break;
		case 0x68: /* BINGET */
			if (len - pos < 2)
				return FALSE;
			idx = d[pos + 1];
			pos += 2;
			break;
		case 0x75: /* SETITEMS */
			pos++;
			goto build;
		case 0x95: /* FRAME */
			if (len - pos < 9)
				return FALSE;
			pos += 9;
			continue;
		default:
			return FALSE;
		}
		if (idx >= refs || (v = memo[idx]) == NULL || v == PICKLE_TOMBSTONE ||
		    n == PICKLE_FAST_PAIRS)
			return FALSE;
		key[n] = v;
		val[n] = NULL;
		str[n] = NULL;
		memoized[n] = false;
value:
		if (pos >= len)
			return FALSE;
		size_t avail = len - pos - 1; /* bytes after the opcode */
		switch (d[pos]) {
		case 0x8a: /* LONG1 */
			if (avail < 9 || d[pos + 1] == 0 || d[pos + 1] > 8)
				return FALSE;
			{
				uint64_t bits;
				memcpy(&bits, d + pos + 2, 8);
				bits = GUINT64_FROM_LE(bits);
				unsigned shift = 64 - 8 * d[pos + 1];
				num[n] = (int64_t)(bits << shift) >> shift;
			}
			pos += 2 + (size_t)d[pos + 1];
			n_new++;
			break;
		case 0x4b: /* BININT1 */
			if (avail < 1 || (val[n] = p->small_ints[d[pos + 1]]) == NULL)
				return FALSE;
			pos += 2;
			break;
		case 0x4d: /* BININT2 */
			if (avail < 2)
				return FALSE;
			num[n] = (int64_t)(d[pos + 1] | (unsigned)d[pos + 2] << 8);
			pos += 3;
			n_new++;
			break;
		case 0x4a: /* BININT */
			if (avail < 4)
				return FALSE;
			num[n] = (int32_t)pickle_le32(d + pos + 1);
			pos += 5;
			n_new++;
			break;
		case 0x8c: /* SHORT_BINUNICODE [MEMOIZE] */
			if (avail < 1 || avail - 1 < d[pos + 1] ||
			    !cca_text_is_pickle_utf8((const char *)d + pos + 2, d[pos + 1]))
				return FALSE;
			str[n] = d + pos + 2;
			num[n] = d[pos + 1];
			pos += 2 + (size_t)d[pos + 1];
			n_new++;
			while (pos < len && d[pos] == 0x95) {
				if (len - pos < 9)
					return FALSE;
				pos += 9;
			}
			if (pos < len && d[pos] == 0x94) {
				memoized[n] = true;
				n_memo++;
				pos++;
			}
			break;
		case 0x4e: /* NONE */
			val[n] = p->none;
			pos++;
			break;
		case 0x88: /* NEWTRUE */
			val[n] = p->true_;
			pos++;
			break;
		case 0x89: /* NEWFALSE */
			val[n] = p->false_;
			pos++;
			break;
		case 0x6a: /* LONG_BINGET */
			if (avail < 4)
				return FALSE;
			idx = pickle_le32(d + pos + 1);
			pos += 5;
			goto ref;
		case 0x68: /* BINGET */
			if (avail < 1)
				return FALSE;
			idx = d[pos + 1];
			pos += 2;
ref:
			if (idx >= refs || (v = memo[idx]) == NULL || v == PICKLE_TOMBSTONE)
				return FALSE;
			val[n] = v;
			break;
		case 0x95: /* FRAME */
			if (avail < 8)
				return FALSE;
			pos += 9;
			goto value;
		default:
			return FALSE;
		}
		n++;
	}

build:
	/* Each MEMOIZE must take the next slot, free and allocated. */
	if (first + n_memo > p->memo_cap || first + n_memo > len + 256)
		return FALSE;
	for (size_t i = first; i < first + n_memo; i++)
		if (memo[i] != NULL)
			return FALSE;

	/* EMPTY_DICT, MEMOIZE, the values in order, then SETITEMS' items
	 * array: in one piece of the young chunk when it has room (the same
	 * addresses the allocations one by one would get), else one by one
	 * (which may end the batch as those would). */
	size_t need = sizeof(PickleContainer) + n_new * sizeof(CcaPickleValue) +
		      (n > 0 ? 2 * n * sizeof(CcaPickleValue *) : 0);
	char *chunk = NULL;
	PickleChunk *y = p->batch.young;
	if (y->size - y->used >= need) {
		chunk = (char *)y->data + y->used;
		y->used += need;
	}
	PickleContainer *c = chunk ? (PickleContainer *)chunk : pickle_alloc(p, sizeof *c);
	chunk = chunk ? chunk + sizeof *c : NULL;
	*c = (PickleContainer){.value = {.type = CCA_PICKLE_DICT}, .offset = p->op_at};
	CcaPickleValue *dict = &c->value;
	if (memo_dict)
		dict = pickle_fast_memoize(p, dict);
	for (size_t i = 0; i < n; i++) {
		if (val[i] != NULL)
			continue;
		if (chunk != NULL) {
			v = (CcaPickleValue *)chunk;
			chunk += sizeof *v;
		} else {
			v = pickle_alloc(p, sizeof *v);
		}
		if (str[i] != NULL) {
			*v = (CcaPickleValue){.type = CCA_PICKLE_STR,
					      .len = (uint32_t)num[i],
					      .s = (const char *)str[i]};
			if (memoized[i])
				v = pickle_fast_memoize(p, v);
		} else {
			*v = (CcaPickleValue){.type = CCA_PICKLE_INT, .i = num[i]};
		}
		val[i] = v;
	}
	p->pickle->n_nodes += 1 + n_new;
	if (n > 0) {
		if (p->batch.active && !pickle_young(p, dict))
			pickle_batch_promote(p); /* as pickle_extend() */
		CcaPickleValue **items =
			chunk ? (CcaPickleValue **)chunk : pickle_alloc(p, 2 * n * sizeof *items);
		for (size_t i = 0; i < n; i++) {
			items[2 * i] = key[i];
			items[2 * i + 1] = val[i];
		}
		dict->items = items;
		dict->len = (uint32_t)n;
		c->cap = (uint32_t)n;
	}
	p->pos = pos;
	return pickle_push(p, dict);
}

/* Tells the progress hook how far the parse got; returns the offset of
 * the next call. */
static size_t
pickle_progress(PickleParser *p)
{
	if (p->progress != NULL) {
		p->progress(p->progress_user, p->pos);
		return p->pos + PICKLE_PROGRESS_STEP;
	}
	return SIZE_MAX;
}

/* The opcode loop.  Dispatch is threaded (one indirect jump per handler,
 * a GNU C extension): the jump after a handler predicts the opcode that
 * usually follows it, which a single switch cannot.  The opcodes that
 * make up a trace entry run inline on locals (read position, stack top)
 * that the compiler keeps in registers; the others, and the inline ones'
 * uncommon cases, run out of line on the parser's fields, between SAVE()
 * and LOAD().  Handlers return FALSE with the error set. */
static gboolean
pickle_run_ops(PickleParser *p)
{
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Woverride-init" /* the default, then each opcode */
	static const void *const dispatch[256] = {
		[0 ... 255] = &&op_refused, [0x8c] = &&op_short_binunicode,
		[0x94] = &&op_memoize,	    [0x68] = &&op_binget,
		[0x6a] = &&op_long_binget,  [0x71] = &&op_binput,
		[0x72] = &&op_long_binput,  [0x4b] = &&op_binint1,
		[0x4d] = &&op_binint2,	    [0x4a] = &&op_binint,
		[0x8a] = &&op_long1,	    [0x8b] = &&op_long4,
		[0x28] = &&op_mark,	    [0x7d] = &&op_empty_dict,
		[0x5d] = &&op_empty_list,   [0x29] = &&op_empty_tuple,
		[0x75] = &&op_setitems,	    [0x65] = &&op_appends,
		[0x73] = &&op_setitem,	    [0x61] = &&op_append,
		[0x85] = &&op_tuple1,	    [0x86] = &&op_tuple2,
		[0x87] = &&op_tuple3,	    [0x74] = &&op_tuple,
		[0x6c] = &&op_list,	    [0x64] = &&op_dict,
		[0x58] = &&op_binunicode,   [0x8d] = &&op_binunicode8,
		[0x47] = &&op_binfloat,	    [0x88] = &&op_newtrue,
		[0x89] = &&op_newfalse,	    [0x4e] = &&op_none,
		[0x95] = &&op_frame,	    [0x80] = &&op_proto,
		[0x30] = &&op_pop,	    [0x31] = &&op_pop_mark,
		[0x63] = &&op_global,	    [0x52] = &&op_reduce,
		[0x2e] = &&op_stop,
	};
#pragma GCC diagnostic pop
	const unsigned char *const data = p->data;
	const size_t len = p->len;
	size_t pos, at = p->op_at, limit, idx, n;
	CcaPickleValue **sp, **sp_end, *v;
	CcaPickleValue **memo;
	size_t memo_cap;
	/* The allocation window: the free bytes of the chunk new nodes go to
	 * (the young chunk in a batch, else the arena's head chunk), bumped
	 * here and written back by SAVE(). */
	char *bump, *bump_end, *young_lo;
	size_t nodes = 0; /* nodes made since the last SAVE() */
	uint8_t op;

/* The parser's fields from the locals, and back.  Out-of-line code runs
 * between a SAVE() and a LOAD(); nothing inline changes which chunk the
 * window belongs to. */
#define SAVE()                                                        \
	do {                                                          \
		p->pos = pos;                                         \
		p->op_at = at;                                        \
		p->depth = (size_t)(sp - p->stack);                   \
		PickleChunk *w_ = pickle_window(p);                   \
		if (w_ != NULL)                                       \
			w_->used = (size_t)(bump - (char *)w_->data); \
		p->pickle->n_nodes += nodes;                          \
		nodes = 0;                                            \
	} while (0)
#define LOAD()                                                                    \
	do {                                                                      \
		pos = p->pos;                                                     \
		sp = p->stack + p->depth;                                         \
		sp_end = p->stack + p->stack_cap;                                 \
		memo = p->memo;                                                   \
		memo_cap = p->memo_cap;                                           \
		PickleChunk *w_ = pickle_window(p);                               \
		bump = w_ != NULL ? (char *)w_->data + w_->used : NULL;           \
		bump_end = w_ != NULL ? (char *)w_->data + w_->size : NULL;       \
		young_lo = p->batch.active ? (char *)p->batch.young->data : NULL; \
	} while (0)
#define NEXT()                                \
	do {                                  \
		if (G_UNLIKELY(pos >= limit)) \
			goto boundary;        \
		at = pos;                     \
		op = data[pos++];             \
		goto *dispatch[op];           \
	} while (0)
/* Runs an out-of-line handler, then the next opcode. */
#define CALL(call)                       \
	do {                             \
		SAVE();                  \
		if (G_UNLIKELY(!(call))) \
			return FALSE;    \
		LOAD();                  \
		NEXT();                  \
	} while (0)
#define PUSH(x)                                 \
	do {                                    \
		if (G_UNLIKELY(sp == sp_end)) { \
			SAVE();                 \
			pickle_grow_stack(p);   \
			LOAD();                 \
		}                               \
		*sp++ = (x);                    \
	} while (0)
/* DST = SIZE bytes (a multiple of 8) where new nodes go. */
#define ALLOC(dst, size)                                            \
	do {                                                        \
		size_t size_ = (size);                              \
		if (G_LIKELY((size_t)(bump_end - bump) >= size_)) { \
			(dst) = (void *)bump;                       \
			bump += size_;                              \
		} else {                                            \
			SAVE();                                     \
			(dst) = pickle_alloc(p, size_);             \
			LOAD();                                     \
		}                                                   \
	} while (0)
/* V = a new node of type KIND. */
#define NODE(kind)                                     \
	do {                                           \
		ALLOC(v, sizeof(CcaPickleValue));      \
		*v = (CcaPickleValue){.type = (kind)}; \
		nodes++;                               \
	} while (0)
/* As pickle_young(), for nodes made since the last LOAD() too. */
#define YOUNG(x) (young_lo != NULL && (char *)(x) >= young_lo && (char *)(x) < bump)

	LOAD();
	limit = MIN(len, p->next_progress);
	NEXT();

	/* BINGET and LONG_BINGET of filled slots; the rest (empty, a
	 * consumed trace entry) is for pickle_op_memo() to report.  Two
	 * copies, so that each has its own dispatch jump to predict. */
op_binget:
	if (G_UNLIKELY(pos >= len))
		CALL(pickle_op_memo(p, 1, FALSE));
	idx = data[pos];
	if (G_UNLIKELY(idx >= memo_cap || (v = memo[idx]) == NULL || v == PICKLE_TOMBSTONE))
		CALL(pickle_op_memo(p, 1, FALSE));
	pos += 1;
	PUSH(v);
	NEXT();
op_long_binget:
	if (G_UNLIKELY(len - pos < 4))
		CALL(pickle_op_memo(p, 4, FALSE));
	idx = (size_t)pickle_le32(data + pos);
	if (G_UNLIKELY(idx >= memo_cap || (v = memo[idx]) == NULL || v == PICKLE_TOMBSTONE))
		CALL(pickle_op_memo(p, 4, FALSE));
	pos += 4;
	PUSH(v);
	NEXT();
op_short_binunicode:
	if (G_UNLIKELY(pos >= len || len - pos - 1 < data[pos] ||
		       !cca_text_is_pickle_utf8((const char *)data + pos + 1, data[pos])))
		CALL(pickle_op_unicode(p, 1)); /* says what is wrong */
	n = data[pos];
	NODE(CCA_PICKLE_STR);
	v->s = (const char *)data + pos + 1;
	v->len = (uint32_t)n;
	pos += 1 + n;
	PUSH(v);
	NEXT();
op_long1:
	if (G_UNLIKELY(len - pos < 9 || data[pos] == 0 || data[pos] > 8))
		CALL(pickle_op_long1(p));
	{
		/* At most 8 bytes with 8 readable: one unaligned load. */
		uint64_t bits;
		memcpy(&bits, data + pos + 1, 8);
		bits = GUINT64_FROM_LE(bits);
		unsigned shift = 64 - 8 * data[pos];
		pos += 1 + (size_t)data[pos];
		NODE(CCA_PICKLE_INT);
		v->i = (int64_t)(bits << shift) >> shift; /* sign-extend from byte n */
	}
	PUSH(v);
	NEXT();
op_binint1:
	if (G_UNLIKELY(pos >= len))
		CALL(pickle_need(p, 1));
	v = p->small_ints[data[pos]];
	if (G_UNLIKELY(v == NULL)) {
		SAVE();
		v = pickle_small_int(p, data[pos]);
		LOAD();
	}
	pos++;
	PUSH(v);
	NEXT();
op_binint2:
	if (G_UNLIKELY(len - pos < 2))
		CALL(pickle_need(p, 2));
	NODE(CCA_PICKLE_INT);
	v->i = (int64_t)pickle_le(data + pos, 2);
	pos += 2;
	PUSH(v);
	NEXT();
op_binint:
	if (G_UNLIKELY(len - pos < 4))
		CALL(pickle_need(p, 4));
	NODE(CCA_PICKLE_INT);
	v->i = (int32_t)pickle_le32(data + pos);
	pos += 4;
	PUSH(v);
	NEXT();
op_memoize:
	idx = p->memo_count;
	if (G_UNLIKELY(sp - p->stack <= (ptrdiff_t)pickle_fence(p) || idx >= memo_cap))
		CALL(pickle_memo_put(p, idx));
	v = sp[-1];
	if (YOUNG(v)) {
		/* As pickle_memo_put(): a young container is copied out at the
		 * batch's end, a young scalar now (to the arena, not the
		 * window). */
		if (pickle_is_container(v)) {
			PickleBatch *b = &p->batch;
			if (G_UNLIKELY(b->n_puts == b->puts_cap))
				CALL(pickle_memo_put(p, idx));
			b->puts[b->n_puts++] = idx;
		} else {
			v = pickle_copy_scalar_old(p, v);
			sp[-1] = v;
		}
	}
	p->memo_count += memo[idx] == NULL;
	memo[idx] = v;
	NEXT();
op_mark:
	if (G_UNLIKELY(p->n_marks == p->marks_cap || p->n_marks >= CCA_PICKLE_MAX_MARKS ||
		       (p->batch.consumer != NULL && !p->batch.active)))
		CALL(pickle_op_mark(p));
	p->marks[p->n_marks++] = (size_t)(sp - p->stack);
	NEXT();
op_empty_dict:
	if (p->batch.active) {
		SAVE();
		gboolean built = pickle_fast_dict(p);
		LOAD();
		if (built)
			NEXT();
	}
	ALLOC(v, sizeof(PickleContainer));
	*(PickleContainer *)v = (PickleContainer){.value = {.type = CCA_PICKLE_DICT}, .offset = at};
	nodes++;
	PUSH(v);
	NEXT();
op_setitems : {
	/* A dict just below the mark, filled with the pairs above it. */
	size_t nm = p->n_marks;
	if (G_UNLIKELY(nm == 0 || (p->batch.active && nm - 1 == p->batch.mark)))
		CALL(pickle_op_extend_marked(p, CCA_PICKLE_DICT));
	size_t mark = p->marks[nm - 1];
	size_t below = nm > 1 ? p->marks[nm - 2] : 0;
	CcaPickleValue **base = p->stack + mark;
	n = (size_t)(sp - base);
	if (G_UNLIKELY(mark == 0 || mark - 1 < below || (n & 1) != 0))
		CALL(pickle_op_extend_marked(p, CCA_PICKLE_DICT));
	v = base[-1];
	if (G_UNLIKELY(v->type != CCA_PICKLE_DICT || (p->batch.active && !YOUNG(v))))
		CALL(pickle_op_extend_marked(p, CCA_PICKLE_DICT));
	PickleContainer *c = (PickleContainer *)v;
	if (c->cap == 0 && n > 0 && n / 2 <= PICKLE_MAX_LEN) {
		/* The first fill, as pickle_reserve() makes it: exact. */
		ALLOC(v->items, n * sizeof *v->items);
		c->cap = (uint32_t)(n / 2);
		base = p->stack + mark;
	} else if (G_UNLIKELY(n / 2 > c->cap - v->len)) {
		SAVE();
		if (!pickle_reserve(p, v, n / 2))
			return FALSE;
		LOAD();
		base = p->stack + mark;
	}
	if (n > 0) { /* items is NULL while the dict is empty */
		CcaPickleValue **dst = v->items + 2 * (size_t)v->len;
		for (size_t i = 0; i < n; i++)
			dst[i] = base[i];
	}
	v->len += (uint32_t)(n / 2);
	p->n_marks = nm - 1;
	sp = base;
	NEXT();
}
op_binput:
	CALL(pickle_op_memo(p, 1, TRUE));
op_long_binput:
	CALL(pickle_op_memo(p, 4, TRUE));
op_long4:
	if (G_UNLIKELY(len - pos < 4))
		CALL(pickle_need(p, 4));
	pos += 4;
	CALL(pickle_op_long(p, pickle_le32(data + pos - 4)));
op_empty_list:
	CALL(pickle_push(p, pickle_container(p, CCA_PICKLE_LIST)));
op_empty_tuple:
	CALL(pickle_push(p, pickle_container(p, CCA_PICKLE_TUPLE)));
op_appends:
	CALL(pickle_op_extend_marked(p, CCA_PICKLE_LIST));
op_setitem:
	CALL(pickle_op_setitem(p));
op_append:
	CALL(pickle_op_append(p));
op_tuple1:
	CALL(pickle_op_tuple_n(p, 1));
op_tuple2:
	CALL(pickle_op_tuple_n(p, 2));
op_tuple3:
	CALL(pickle_op_tuple_n(p, 3));
op_tuple:
	CALL(pickle_op_build_marked(p, CCA_PICKLE_TUPLE));
op_list:
	CALL(pickle_op_build_marked(p, CCA_PICKLE_LIST));
op_dict:
	CALL(pickle_op_build_marked(p, CCA_PICKLE_DICT));
op_binunicode:
	CALL(pickle_op_unicode(p, 4));
op_binunicode8:
	CALL(pickle_op_unicode(p, 8));
op_binfloat:
	CALL(pickle_op_float(p));
op_newtrue:
	PUSH(p->true_);
	NEXT();
op_newfalse:
	PUSH(p->false_);
	NEXT();
op_none:
	PUSH(p->none);
	NEXT();
op_frame: /* the length is only a buffering hint */
	if (G_UNLIKELY(len - pos < 8))
		CALL(pickle_need(p, 8));
	pos += 8;
	NEXT();
op_proto:
	CALL(pickle_op_proto(p));
op_pop:
	CALL(pickle_op_pop(p));
op_pop_mark:
	CALL(pickle_op_pop_mark(p));
op_global:
	CALL(pickle_op_global(p));
op_reduce:
	CALL(pickle_op_reduce(p));
op_stop:
	SAVE();
	return pickle_op_stop(p);
op_refused:
	SAVE();
	return pickle_op_refused(p, op);
boundary:
	SAVE();
	if (pos >= len) {
		p->op_at = len;
		return pickle_fail(p, CCA_INPUT_ERROR_TRUNCATED,
				   "truncated pickle: no STOP opcode");
	}
	p->next_progress = pickle_progress(p);
	limit = MIN(len, p->next_progress);
	NEXT();
#undef YOUNG
#undef NODE
#undef ALLOC
#undef PUSH
#undef CALL
#undef NEXT
#undef LOAD
#undef SAVE
}

static void
pickle_parser_init(PickleParser *p, CcaPickle *pickle)
{
	p->pickle = pickle;
	p->stack_cap = 1024;
	p->stack = g_new(CcaPickleValue *, p->stack_cap);
	p->marks_cap = 64;
	p->marks = g_new(size_t, p->marks_cap);
	/* A real pickle memoizes about one object per 35 bytes: size the memo
	 * for that up front.  Slots never used cost nothing. */
	pickle_memo_grow(p, MIN(p->len / 16 + 256, (size_t)1 << 26));
	p->none = pickle_node(p, CCA_PICKLE_NONE);
	p->true_ = pickle_node(p, CCA_PICKLE_BOOL);
	p->true_->b = true;
	p->false_ = pickle_node(p, CCA_PICKLE_BOOL);
	p->tag = pickle_node(p, CCA_PICKLE_GLOBAL);
	p->batch.work = g_ptr_array_new();
}

static void
pickle_parser_clear(PickleParser *p)
{
	g_free(p->stack);
	g_free(p->marks);
	pickle_memo_free(p->memo, p->memo_cap);
	free(p->batch.young);
	g_free(p->batch.puts);
	cca_pickle_node_map_clear(&p->batch.copies);
	g_ptr_array_unref(p->batch.work);
}

static gboolean
pickle_run(PickleParser *p)
{
	if (p->len == 0)
		return pickle_fail(p, CCA_INPUT_ERROR_TRUNCATED, "empty pickle");
	if (p->data[0] != 0x80)
		return pickle_fail(p, CCA_INPUT_ERROR_CORRUPT,
				   "not a pickle of protocol 2 or later (first byte 0x%02x)",
				   p->data[0]);
	return pickle_run_ops(p);
}

CcaPickle *
cca_pickle_parse(const unsigned char *data, size_t len, const char *name, GError **error)
{
	return cca_pickle_parse_full(data, len, name, NULL, NULL, error);
}

CcaPickle *
cca_pickle_parse_full(const unsigned char *data, size_t len, const char *name,
		      const CcaPickleConsumer *consumer, void *user, GError **error)
{
	return cca_pickle_parse_progress(data, len, name, consumer, user, NULL, NULL, error);
}

CcaPickle *
cca_pickle_parse_progress(const unsigned char *data, size_t len, const char *name,
			  const CcaPickleConsumer *consumer, void *user, CcaPickleProgress progress,
			  void *progress_user, GError **error)
{
	CcaPickle *pickle = g_new0(CcaPickle, 1);
	PickleParser p;
	memset(&p, 0, sizeof p);
	p.data = data;
	p.len = len;
	p.name = name;
	p.error = error;
	p.batch.consumer = consumer;
	p.batch.user = user;
	p.progress = progress;
	p.progress_user = progress_user;
	p.next_progress = p.progress != NULL ? PICKLE_PROGRESS_STEP : SIZE_MAX;
	pickle_parser_init(&p, pickle);
	gboolean ok = pickle_run(&p);
	pickle_parser_clear(&p);
	if (!ok) {
		cca_pickle_free(pickle);
		return NULL;
	}
	return pickle;
}

/* ------------------------------------------------------------ building */

CcaPickle *
cca_pickle_build_new(void)
{
	CcaPickle *pickle = g_new0(CcaPickle, 1);
	pickle->protocol = 0;
	return pickle;
}

CcaPickleValue *
cca_pickle_build_node(CcaPickle *pickle, CcaPickleType type, uint32_t len)
{
	pickle->n_nodes++;
	if (type == CCA_PICKLE_LIST || type == CCA_PICKLE_TUPLE || type == CCA_PICKLE_DICT) {
		PickleContainer *c = pickle_arena_alloc(&pickle->arena, sizeof *c);
		size_t slots = type == CCA_PICKLE_DICT ? 2 * (size_t)len : len;
		*c = (PickleContainer){
			.value = {.type = type, .len = len}, .cap = len, .offset = (size_t)-1};
		c->value.items =
			slots ? pickle_arena_alloc(&pickle->arena, slots * sizeof(CcaPickleValue *))
			      : NULL;
		for (size_t i = 0; i < slots; i++)
			c->value.items[i] = NULL;
		pickle->n_nodes += slots;
		return &c->value;
	}
	CcaPickleValue *v = pickle_arena_alloc(&pickle->arena, sizeof *v);
	*v = (CcaPickleValue){.type = type, .len = len};
	return v;
}

const char *
cca_pickle_build_bytes(CcaPickle *pickle, const char *s, size_t len)
{
	char *copy = pickle_arena_alloc(&pickle->arena, len + 1);
	memcpy(copy, s, len);
	copy[len] = '\0';
	return copy;
}

void
cca_pickle_build_set_root(CcaPickle *pickle, const CcaPickleValue *root)
{
	pickle->root = root;
}

void
cca_pickle_free(CcaPickle *pickle)
{
	if (pickle == NULL)
		return;
	pickle_arena_clear(&pickle->arena);
	g_free(pickle);
}

const CcaPickleValue *
cca_pickle_root(const CcaPickle *pickle)
{
	return pickle->root;
}

int
cca_pickle_protocol(const CcaPickle *pickle)
{
	return pickle->protocol;
}

size_t
cca_pickle_n_nodes(const CcaPickle *pickle)
{
	return pickle->n_nodes;
}

size_t
cca_pickle_offset(const CcaPickleValue *value)
{
	if (value == NULL || !pickle_is_container(value))
		return (size_t)-1;
	return ((const PickleContainer *)value)->offset;
}

const char *
cca_pickle_type_name(CcaPickleType type)
{
	switch (type) {
	case CCA_PICKLE_NONE:
		return "None";
	case CCA_PICKLE_BOOL:
		return "bool";
	case CCA_PICKLE_INT:
	case CCA_PICKLE_UINT:
		return "int";
	case CCA_PICKLE_FLOAT:
		return "float";
	case CCA_PICKLE_STR:
		return "str";
	case CCA_PICKLE_LIST:
		return "list";
	case CCA_PICKLE_TUPLE:
		return "tuple";
	case CCA_PICKLE_DICT:
		return "dict";
	case CCA_PICKLE_GLOBAL:
		return "global";
	}
	return "?";
}

gboolean
cca_pickle_str_equal(const CcaPickleValue *value, const char *str, size_t len)
{
	return value != NULL && value->type == CCA_PICKLE_STR && value->len == len &&
	       memcmp(value->s, str, len) == 0;
}

const CcaPickleValue *
cca_pickle_dict_get(const CcaPickleValue *dict, CcaPickleKey *key)
{
	if (dict == NULL || dict->type != CCA_PICKLE_DICT)
		return NULL;
	/* Backwards, so that the last of duplicate keys wins. */
	for (uint32_t i = dict->len; i-- > 0;) {
		const CcaPickleValue *k = dict->items[2 * i];
		if (k == key->hit)
			return dict->items[2 * i + 1];
		if (cca_pickle_str_equal(k, key->str, key->len)) {
			key->hit = k;
			return dict->items[2 * i + 1];
		}
	}
	return NULL;
}

/* ------------------------------------------------------------ repr */

static void
pickle_repr_str(GString *out, const char *s, size_t len)
{
	/* Python prefers single quotes, and switches to double quotes when
	 * the string holds a single quote but no double quote. */
	char q = memchr(s, '\'', len) && !memchr(s, '"', len) ? '"' : '\'';
	g_string_append_c(out, q);
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '\\' || c == (unsigned char)q)
			g_string_append_printf(out, "\\%c", c);
		else if (c == '\n')
			g_string_append(out, "\\n");
		else if (c == '\r')
			g_string_append(out, "\\r");
		else if (c == '\t')
			g_string_append(out, "\\t");
		else if (c < 0x20 || c == 0x7f)
			g_string_append_printf(out, "\\x%02x", c);
		else
			g_string_append_c(out, (char)c);
	}
	g_string_append_c(out, q);
}

/* The shortest decimal that reads back as F, as Python's repr(). */
static void
pickle_repr_float(GString *out, double f)
{
	if (isnan(f)) {
		g_string_append(out, "nan");
		return;
	}
	if (isinf(f)) {
		g_string_append(out, f < 0 ? "-inf" : "inf");
		return;
	}
	char buf[64];
	for (int prec = 1; prec <= 17; prec++) {
		g_snprintf(buf, sizeof buf, "%.*g", prec, f);
		if (g_ascii_strtod(buf, NULL) == f)
			break;
	}
	g_string_append(out, buf);
	if (!strpbrk(buf, ".en"))
		g_string_append(out, ".0");
}

static void pickle_repr(GString *out, const CcaPickleValue *v, int depth);

static void
pickle_repr_items(GString *out, const CcaPickleValue *v, int depth)
{
	const char *open = v->type == CCA_PICKLE_LIST	? "["
			   : v->type == CCA_PICKLE_DICT ? "{"
							: "(";
	const char *close = v->type == CCA_PICKLE_LIST	 ? "]"
			    : v->type == CCA_PICKLE_DICT ? "}"
							 : ")";
	g_string_append(out, open);
	if (depth <= 0 && v->len > 0) {
		g_string_append(out, "...");
	} else if (v->type == CCA_PICKLE_DICT) {
		for (uint32_t i = 0; i < v->len; i++) {
			if (i > 0)
				g_string_append(out, ", ");
			pickle_repr(out, v->items[2 * i], depth - 1);
			g_string_append(out, ": ");
			pickle_repr(out, v->items[2 * i + 1], depth - 1);
		}
	} else {
		for (uint32_t i = 0; i < v->len; i++) {
			if (i > 0)
				g_string_append(out, ", ");
			pickle_repr(out, v->items[i], depth - 1);
		}
		if (v->type == CCA_PICKLE_TUPLE && v->len == 1)
			g_string_append_c(out, ',');
	}
	g_string_append(out, close);
}

static void
pickle_repr(GString *out, const CcaPickleValue *v, int depth)
{
	switch ((CcaPickleType)v->type) {
	case CCA_PICKLE_NONE:
		g_string_append(out, "None");
		break;
	case CCA_PICKLE_BOOL:
		g_string_append(out, v->b ? "True" : "False");
		break;
	case CCA_PICKLE_INT:
		g_string_append_printf(out, "%" G_GINT64_FORMAT, (gint64)v->i);
		break;
	case CCA_PICKLE_UINT:
		g_string_append_printf(out, "%" G_GUINT64_FORMAT, (guint64)v->u);
		break;
	case CCA_PICKLE_FLOAT:
		pickle_repr_float(out, v->f);
		break;
	case CCA_PICKLE_STR:
		pickle_repr_str(out, v->s, v->len);
		break;
	case CCA_PICKLE_LIST:
	case CCA_PICKLE_TUPLE:
	case CCA_PICKLE_DICT:
		pickle_repr_items(out, v, depth);
		break;
	case CCA_PICKLE_GLOBAL:
		g_string_append(out, "<function restore_type_tag>");
		break;
	}
}

char *
cca_pickle_repr(const CcaPickleValue *value, int max_depth)
{
	GString *out = g_string_new(NULL);
	pickle_repr(out, value, max_depth);
	return g_string_free(out, FALSE);
}
