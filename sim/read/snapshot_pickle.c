/* snapshot_pickle.c - PyTorch memory-snapshot pickles -> CcaSnapshot.
 *
 * Reads the value graph of sim/read/pickle.c against the snapshot schema of
 * every torch release from 2.0 to 2.11 (doc/trace-format.md §12.3): a dict with
 * `segments` and optional `device_traces`, `allocator_settings` and
 * `external_annotations`, or a bare list of segments.  Legacy (<= 2.0)
 * blocks carry `history` instead of `address`/`requested_size`/`frames`.
 * Keys of releases after 2.11 (doc/trace-format.md §11): per-entry
 * `pool_id` is read into the events, `annotate` entries are left out,
 * user_metadata that is not a str is rendered as compact JSON, and the
 * rest (host memory, forward_frames, keys nobody documents) is counted in
 * snap->newer and ignored, whatever its type.
 *
 * The trace entries, nearly all of a big pickle, are converted while it
 * is parsed: the reader is the parser's consumer (pickle.h) for the inner
 * lists of `device_traces`, so their nodes are recycled batch by batch
 * and never all sit in memory.  Everything else is read from the finished
 * graph.  Both paths run the same code (conv_event()) and give the same
 * snapshot, table ids included (traces are converted first either way).
 * A compact load (cca_snapshot_pickle_load_with()) sends the converted
 * events to trace-encoded stores (trace.h) instead of CcaEvent arrays.
 *
 * Invariants: keys are classified by the identity of their (memoized) key
 * node first, through a per-kind "shape" of the last dict's keys, so a
 * dict costs one pass over its pairs; frames and stacks are interned by
 * node identity, then by content; no node of a consumer batch
 * (cca_pickle_transient_has()) is remembered by identity; the whole walk
 * is charged against a budget proportional to the pickle's size, so
 * shared containers cannot blow it up.
 *
 * long-file: one walk of the snapshot schema of every release; the key
 * shapes and interning tables are shared by the streamed and the
 * whole-graph paths, which must give the same snapshot (conv_event()).
 */
#include "config.h"

#include <string.h>
#include <sys/mman.h>

#include "pickle.h"
#include "snapshot.h"
#include "input.h"
#include "trace_events.h"

#define CONV_MAX_DEVICES (1 << 16)
#define CONV_MAX_RESERVE (1u << 24) /* events reserved up front (1 GiB of virtual memory) */

/* ------------------------------------------------------------ node ids */

/* The 32-bit id a map of conv's (a CcaPickleNodeMap) holds for KEY: TRUE
 * with *ID set, FALSE when KEY has none. */
static inline gboolean
conv_id_get(const CcaPickleNodeMap *m, const void *key, uint32_t *id)
{
	uintptr_t value;
	if (!cca_pickle_node_map_get(m, key, &value))
		return FALSE;
	*id = (uint32_t)value;
	return TRUE;
}

/* ------------------------------------------------------------ keys */

/* Every key of every schema version that the reader uses. */
typedef enum {
	K_OTHER = 0,
	K_ACTION,
	K_ADDR,
	K_DEVICE_FREE,
	K_SIZE,
	K_STREAM,
	K_TIME_US,
	K_COMPILE_CONTEXT,
	K_USER_METADATA,
	K_FRAMES,
	K_POOL_ID,
	K_DEVICE,
	K_ADDRESS,
	K_TOTAL_SIZE,
	K_ALLOCATED_SIZE,
	K_ACTIVE_SIZE,
	K_REQUESTED_SIZE,
	K_SEGMENT_TYPE,
	K_SEGMENT_POOL_ID,
	K_IS_EXPANDABLE,
	K_BLOCKS,
	K_STATE,
	K_HISTORY,
	K_REAL_SIZE,
	K_NAME,
	K_FILENAME,
	K_LINE,
	K_STAGE,
	K_CPP_FRAMES,	  /* <= 2.0 entries and history: ignored */
	K_FORWARD_FRAMES, /* after 2.11: ignored, counted */
	K_FX,		  /* any "fx_*" frame key (2.10 augment_with_fx_traces): ignored */
	K_COUNT
} KeyId;

static const char *const conv_key_names[K_COUNT] = {
	[K_OTHER] = "",
	[K_ACTION] = "action",
	[K_ADDR] = "addr",
	[K_DEVICE_FREE] = "device_free",
	[K_SIZE] = "size",
	[K_STREAM] = "stream",
	[K_TIME_US] = "time_us",
	[K_COMPILE_CONTEXT] = "compile_context",
	[K_USER_METADATA] = "user_metadata",
	[K_FRAMES] = "frames",
	[K_POOL_ID] = "pool_id",
	[K_DEVICE] = "device",
	[K_ADDRESS] = "address",
	[K_TOTAL_SIZE] = "total_size",
	[K_ALLOCATED_SIZE] = "allocated_size",
	[K_ACTIVE_SIZE] = "active_size",
	[K_REQUESTED_SIZE] = "requested_size",
	[K_SEGMENT_TYPE] = "segment_type",
	[K_SEGMENT_POOL_ID] = "segment_pool_id",
	[K_IS_EXPANDABLE] = "is_expandable",
	[K_BLOCKS] = "blocks",
	[K_STATE] = "state",
	[K_HISTORY] = "history",
	[K_REAL_SIZE] = "real_size",
	[K_NAME] = "name",
	[K_FILENAME] = "filename",
	[K_LINE] = "line",
	[K_STAGE] = "stage",
	[K_CPP_FRAMES] = "cpp_frames",
	[K_FORWARD_FRAMES] = "forward_frames",
	[K_FX] = "fx_",
};

/* The keys each kind of dict may hold, in any release the reader knows;
 * the others are counted by name (CcaSnapshotNewer) and ignored. */
#define KB(k) (1u << (k))
#define KEYS_EVENT                                                                    \
	(KB(K_ACTION) | KB(K_ADDR) | KB(K_DEVICE_FREE) | KB(K_SIZE) | KB(K_STREAM) |  \
	 KB(K_TIME_US) | KB(K_COMPILE_CONTEXT) | KB(K_USER_METADATA) | KB(K_FRAMES) | \
	 KB(K_POOL_ID) | KB(K_CPP_FRAMES) | KB(K_FORWARD_FRAMES))
#define KEYS_SEGMENT                                                                    \
	(KB(K_DEVICE) | KB(K_ADDRESS) | KB(K_TOTAL_SIZE) | KB(K_ALLOCATED_SIZE) |       \
	 KB(K_ACTIVE_SIZE) | KB(K_REQUESTED_SIZE) | KB(K_STREAM) | KB(K_SEGMENT_TYPE) | \
	 KB(K_SEGMENT_POOL_ID) | KB(K_IS_EXPANDABLE) | KB(K_FRAMES) | KB(K_BLOCKS) |    \
	 KB(K_FORWARD_FRAMES))
#define KEYS_BLOCK                                                                        \
	(KB(K_ADDRESS) | KB(K_SIZE) | KB(K_REQUESTED_SIZE) | KB(K_STATE) | KB(K_FRAMES) | \
	 KB(K_HISTORY) | KB(K_FORWARD_FRAMES))
#define KEYS_HISTORY (KB(K_ADDR) | KB(K_REAL_SIZE) | KB(K_FRAMES) | KB(K_CPP_FRAMES))
#define KEYS_FRAME (KB(K_NAME) | KB(K_FILENAME) | KB(K_LINE) | KB(K_FX))

/* The key nodes of the last dict of one kind, by position, with their
 * ids: consecutive trace entries share their key nodes in the same order,
 * so most keys are classified by one pointer compare, and most dicts
 * match the whole shape (then `pos` and `present` are theirs too). */
#define SHAPE_KEYS 16
typedef struct {
	const CcaPickleValue *key[SHAPE_KEYS];
	uint8_t id[SHAPE_KEYS];
	uint32_t n;	       /* keys of that dict, all persistent; SHAPE_NONE if not */
	uint32_t pos[K_COUNT]; /* its Fields.pos */
	uint32_t present;      /* its Fields.present */
} Shape;

#define SHAPE_NONE UINT32_MAX

/* The values of one dict by KeyId: the value of key k is the second item
 * of pair pos[k] of `items`, when bit k of `present` is set (the last of
 * duplicate keys). */
typedef struct {
	CcaPickleValue *const *items;
	const uint32_t *pos; /* own, or the matching shape's */
	uint32_t present;
	uint32_t own[K_COUNT];
	const CcaPickleValue *dict;
} Fields;

G_STATIC_ASSERT(K_COUNT <= 32);

/* ------------------------------------------------------------ context */

/* A string-table entry remembered by content; `s` is the table's copy. */
typedef struct {
	const CcaPickleValue *node; /* last persistent node seen with it */
	const char *s;
	uint32_t len;
	uint32_t id;
} StrSlot;

/* A device-trace list whose entries were converted while parsing, into
 * `events` or, for a compact load, `enc`. */
typedef struct {
	const CcaPickleValue *list;
	uint32_t device;     /* its index in device_traces, for messages */
	GArray *events;	     /* CcaEvent; NULL once handed to the snapshot */
	CcaTraceEvents *enc; /* compact: NULL once handed to the snapshot */
	uint64_t seen;	     /* entries consumed, annotate entries included */
} Claim;

/* Where the walk is, for error messages. */
typedef enum {
	WHERE_TOP = 0,
	WHERE_SEGMENT,
	WHERE_BLOCK,
	WHERE_EVENT,
	WHERE_SETTINGS,
	WHERE_ANNOTATION,
} Where;

typedef struct {
	CcaSnapshot *snap;
	const char *name;
	GError **error;
	uint64_t budget; /* dict pairs and list items still allowed */
	size_t input_len;

	Where where;
	uint32_t idx[2];
	const CcaPickleValue *at; /* container being read, for its offset */

	const CcaPickleTransient *transient; /* nodes not to remember, in consume() */
	CcaPickleNodeMap keys;		     /* key str node -> KeyId */
	Shape event_shape, block_shape, segment_shape, frame_shape, other_shape;
	StrSlot str_cache[256];		       /* recent strings by a cheap content hash */
	const CcaPickleValue *action_node[16]; /* action str nodes seen, by address */
	uint8_t action_id[16];		       /* ... and their CcaAction */
	CcaPickleNodeMap claims;	       /* claimed device-trace list -> index in `claimed` */
	GArray *claimed;		       /* Claim */
	CcaPickleNodeMap frames;	       /* frame dict node -> frame id */
	CcaPickleNodeMap stacks;	       /* frames list node -> stack id */
	CcaPickleNodeMap rendered;	       /* non-str metadata node -> string id */
	uint64_t render_visits, render_bytes;  /* work of the rendering under way */
	GHashTable *frame_ids;		       /* CcaFrame content -> frame id */
	GHashTable *stack_ids;		       /* GBytes of frame ids -> stack id */
	GArray *scratch;		       /* uint32_t frame ids of the stack being built */

	gboolean compact;     /* events go to trace-encoded stores, not arrays */
	CcaTraceEvents **enc; /* compact: [snap->n_devices] each device's store */
	int n_enc;	      /* entries of `enc` */
} Conv;

static char *
conv_where(const Conv *c)
{
	switch (c->where) {
	case WHERE_SEGMENT:
		return g_strdup_printf("segments[%u]: ", c->idx[0]);
	case WHERE_BLOCK:
		return g_strdup_printf("segments[%u].blocks[%u]: ", c->idx[0], c->idx[1]);
	case WHERE_EVENT:
		return g_strdup_printf("device_traces[%u][%u]: ", c->idx[0], c->idx[1]);
	case WHERE_SETTINGS:
		return g_strdup("allocator_settings: ");
	case WHERE_ANNOTATION:
		return g_strdup_printf("external_annotations[%u]: ", c->idx[0]);
	case WHERE_TOP:
		break;
	}
	return g_strdup("");
}

static gboolean conv_fail(Conv *c, int code, const char *fmt, ...) G_GNUC_PRINTF(3, 4);

static gboolean
conv_fail(Conv *c, int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	g_autofree char *what = g_strdup_vprintf(fmt, ap);
	va_end(ap);
	g_autofree char *where = conv_where(c);
	size_t offset = cca_pickle_offset(c->at);
	if (offset != (size_t)-1)
		g_set_error(c->error, CCA_INPUT_ERROR, code, "%s: offset %zu: %s%s", c->name,
			    offset, where, what);
	else
		g_set_error(c->error, CCA_INPUT_ERROR, code, "%s: %s%s", c->name, where, what);
	return FALSE;
}

/* Charges N units of work; fails once the pickle's shared objects would
 * make the walk larger than the pickle itself could justify. */
static inline gboolean
conv_charge(Conv *c, uint64_t n)
{
	if (n <= c->budget) {
		c->budget -= n;
		return TRUE;
	}
	return conv_fail(c, CCA_INPUT_ERROR_LIMIT,
			 "shared objects expand the pickle beyond any real snapshot's size");
}

/* "a str", "an int", "None": a value's type for messages. */
static const char *
conv_a(const CcaPickleValue *v)
{
	switch ((CcaPickleType)v->type) {
	case CCA_PICKLE_NONE:
		return "None";
	case CCA_PICKLE_INT:
	case CCA_PICKLE_UINT:
		return "an int";
	case CCA_PICKLE_BOOL:
		return "a bool";
	case CCA_PICKLE_FLOAT:
		return "a float";
	case CCA_PICKLE_STR:
		return "a str";
	case CCA_PICKLE_LIST:
		return "a list";
	case CCA_PICKLE_TUPLE:
		return "a tuple";
	case CCA_PICKLE_DICT:
		return "a dict";
	case CCA_PICKLE_GLOBAL:
		return "a global";
	}
	return "a value";
}

static gboolean
conv_type_error(Conv *c, KeyId key, const CcaPickleValue *v, const char *expected)
{
	return conv_fail(c, CCA_INPUT_ERROR_CORRUPT, "key '%s' is %s, expected %s",
			 conv_key_names[key], conv_a(v), expected);
}

static gboolean
conv_missing(Conv *c, KeyId key)
{
	return conv_fail(c, CCA_INPUT_ERROR_CORRUPT, "missing key '%s'", conv_key_names[key]);
}

static KeyId
conv_key(Conv *c, const CcaPickleValue *k)
{
	uint32_t id;
	if (conv_id_get(&c->keys, k, &id))
		return (KeyId)id;
	id = K_OTHER;
	if (k->type == CCA_PICKLE_STR) {
		for (uint32_t i = 1; i < K_COUNT; i++)
			if (cca_pickle_str_equal(k, conv_key_names[i], strlen(conv_key_names[i])))
				id = i;
		if (id == K_OTHER && k->len > 3 && memcmp(k->s, "fx_", 3) == 0)
			id = K_FX;
	}
	if (!cca_pickle_transient_has(c->transient, k))
		cca_pickle_node_map_put(&c->keys, k, id);
	return (KeyId)id;
}

/* Reads the pairs of DICT into F (the later of duplicate keys wins),
 * classifying keys through SHAPE first. */
static inline gboolean
conv_fields(Conv *c, const CcaPickleValue *dict, Fields *f, Shape *shape)
{
	uint32_t n = dict->len;
	f->dict = dict;
	f->items = dict->items;
	if (!conv_charge(c, n))
		return FALSE;
	if (n == shape->n && n <= SHAPE_KEYS) {
		/* Its key nodes are persistent: equal pointers, equal keys. */
		uint32_t i = 0;
		while (i < n && shape->key[i] == dict->items[2 * i])
			i++;
		if (i == n) {
			f->pos = shape->pos;
			f->present = shape->present;
			return TRUE;
		}
	}
	gboolean whole = n <= SHAPE_KEYS;
	f->present = 0;
	f->pos = f->own;
	for (uint32_t i = 0; i < n; i++) {
		const CcaPickleValue *k = dict->items[2 * i];
		KeyId id;
		if (i < SHAPE_KEYS && shape->key[i] == k) {
			id = (KeyId)shape->id[i];
		} else {
			id = conv_key(c, k);
			if (i < SHAPE_KEYS && !cca_pickle_transient_has(c->transient, k)) {
				shape->key[i] = k;
				shape->id[i] = (uint8_t)id;
			}
		}
		whole = whole && shape->key[i] == k;
		f->own[id] = i;
		f->present |= 1u << id;
	}
	shape->n = whole ? n : SHAPE_NONE;
	if (whole) {
		memcpy(shape->pos, f->own, sizeof shape->pos);
		shape->present = f->present;
	}
	return TRUE;
}

/* F's value for KEY, or NULL when absent or None. */
static inline const CcaPickleValue *
conv_get(const Fields *f, KeyId key)
{
	if (!(f->present & (1u << key)))
		return NULL;
	const CcaPickleValue *v = f->items[2 * (size_t)f->pos[key] + 1];
	return v->type != CCA_PICKLE_NONE ? v : NULL;
}

/* Counts the key K, unknown in a dict of KIND, as "KIND.K". */
static void
conv_unknown_name(Conv *c, const char *kind, const CcaPickleValue *k)
{
	char name[96];
	int n = g_snprintf(name, sizeof name, "%s.", kind);
	if (k->type == CCA_PICKLE_STR) {
		size_t len = MIN((size_t)k->len, sizeof name - (size_t)n - 1);
		memcpy(name + n, k->s, len);
		n += (int)len;
	} else {
		n += g_snprintf(name + n, sizeof name - (size_t)n, "<%s key>",
				cca_pickle_type_name((CcaPickleType)k->type));
	}
	cca_snapshot_newer_add_unknown(&c->snap->newer, name, (size_t)n);
}

/* Records, by name, the keys of F that a dict of its KIND ("segment")
 * does not hold in any release the reader knows (KNOWN: KB() bits).  Cheap
 * unless there are some: one test of F's key set. */
static void
conv_unknown(Conv *c, const Fields *f, uint32_t known, const char *kind)
{
	if (G_LIKELY((f->present & ~known) == 0))
		return;
	for (uint32_t i = 0; i < f->dict->len; i++) {
		const CcaPickleValue *k = f->items[2 * (size_t)i];
		KeyId id = conv_key(c, k);
		if (!(known & KB(id)))
			conv_unknown_name(c, kind, k);
	}
}

/* Counts F's forward_frames (after 2.11, ignored whatever its type). */
static inline void
conv_forward_frames(Conv *c, const Fields *f)
{
	if (f->present & KB(K_FORWARD_FRAMES))
		c->snap->newer.forward_frames++;
}

/* ------------------------------------------------------------ scalars */

static inline gboolean
conv_is_int(const CcaPickleValue *v)
{
	return v->type == CCA_PICKLE_INT || v->type == CCA_PICKLE_UINT;
}

/* An int as its 64-bit pattern (addresses, streams: negative int64
 * values are reinterpreted).  *OUT is left alone when absent. */
static inline gboolean
conv_bits(Conv *c, const Fields *f, KeyId key, gboolean required, uint64_t *out)
{
	const CcaPickleValue *v = conv_get(f, key);
	if (v == NULL)
		return required ? conv_missing(c, key) : TRUE;
	if (!conv_is_int(v))
		return conv_type_error(c, key, v, "an int");
	*out = v->type == CCA_PICKLE_UINT ? v->u : (uint64_t)v->i;
	return TRUE;
}

/* A byte count: an int >= 0. */
static inline gboolean
conv_size(Conv *c, const Fields *f, KeyId key, gboolean required, uint64_t *out)
{
	const CcaPickleValue *v = conv_get(f, key);
	if (v != NULL && v->type == CCA_PICKLE_INT && v->i < 0)
		return conv_fail(c, CCA_INPUT_ERROR_CORRUPT,
				 "key '%s' is negative (%" G_GINT64_FORMAT ")", conv_key_names[key],
				 (gint64)v->i);
	return conv_bits(c, f, key, required, out);
}

/* A signed int in [LO, HI]. */
static inline gboolean
conv_i64(Conv *c, const Fields *f, KeyId key, gboolean required, int64_t lo, int64_t hi,
	 int64_t *out)
{
	const CcaPickleValue *v = conv_get(f, key);
	if (v == NULL)
		return required ? conv_missing(c, key) : TRUE;
	if (!conv_is_int(v))
		return conv_type_error(c, key, v, "an int");
	if (v->type == CCA_PICKLE_UINT || v->i < lo || v->i > hi)
		return conv_fail(c, CCA_INPUT_ERROR_CORRUPT, "key '%s' is out of range",
				 conv_key_names[key]);
	*out = v->i;
	return TRUE;
}

static gboolean
conv_bool(Conv *c, const Fields *f, KeyId key, bool *out)
{
	const CcaPickleValue *v = conv_get(f, key);
	if (v == NULL)
		return TRUE;
	if (v->type != CCA_PICKLE_BOOL)
		return conv_type_error(c, key, v, "a bool");
	*out = v->b;
	return TRUE;
}

/* Interns the str node V.  PyTorch writes some strings afresh for every
 * entry ("N/A"), so a small cache keyed by content beats one keyed by
 * node. */
static inline uint32_t
conv_intern(Conv *c, const CcaPickleValue *v)
{
	const unsigned char *b = (const unsigned char *)v->s;
	size_t h = v->len == 0 ? 0 : (v->len * 131u + b[0] * 31u + b[v->len - 1]) & 255;
	StrSlot *slot = &c->str_cache[h];
	gboolean keep = !cca_pickle_transient_has(c->transient, v);
	if (slot->node == v)
		return slot->id;
	if (slot->s != NULL && slot->len == v->len && memcmp(slot->s, v->s, v->len) == 0) {
		if (keep)
			slot->node = v;
		return slot->id;
	}
	uint32_t id = cca_snapshot_intern(c->snap, v->s, v->len);
	slot->node = keep ? v : NULL;
	slot->s = cca_snapshot_string(c->snap, id);
	slot->len = (uint32_t)strlen(slot->s);
	slot->id = id;
	return id;
}

/* An optional str as a string id (CCA_ID_NONE when absent). */
static inline gboolean
conv_str(Conv *c, const Fields *f, KeyId key, uint32_t *out)
{
	const CcaPickleValue *v = conv_get(f, key);
	*out = CCA_ID_NONE;
	if (v == NULL)
		return TRUE;
	if (v->type != CCA_PICKLE_STR)
		return conv_type_error(c, key, v, "a str");
	*out = conv_intern(c, v);
	return TRUE;
}

/* ------------------------------------------------------------ rendered metadata */

/* Later releases may give user_metadata as a dict (MemoryViz shows either
 * a str or an object's "key: value" lines).  The reader keeps any value
 * that is not a str as a string, so every view shows it: compact JSON
 * with sorted keys, as Python's json.dumps(v, separators=(",", ":"),
 * sort_keys=True, ensure_ascii=False) writes it, bounded in depth, items
 * and bytes ("..." where cut) since the value is untrusted. */
#define RENDER_MAX_DEPTH 8
#define RENDER_MAX_ITEMS 256 /* per container */
#define RENDER_MAX_BYTES 4096
#define RENDER_MAX_VISITS 16384 /* nodes one rendering may visit (keys included) */

static void conv_render(Conv *c, GString *out, const CcaPickleValue *v, int depth);

static void
conv_render_str(Conv *c, GString *out, const char *s, size_t len)
{
	size_t start = out->len;
	g_string_append_c(out, '"');
	for (size_t i = 0; i < len && out->len < RENDER_MAX_BYTES; i++) {
		unsigned char ch = (unsigned char)s[i];
		switch (ch) {
		case '"':
			g_string_append(out, "\\\"");
			break;
		case '\\':
			g_string_append(out, "\\\\");
			break;
		case '\n':
			g_string_append(out, "\\n");
			break;
		case '\r':
			g_string_append(out, "\\r");
			break;
		case '\t':
			g_string_append(out, "\\t");
			break;
		case '\b':
			g_string_append(out, "\\b");
			break;
		case '\f':
			g_string_append(out, "\\f");
			break;
		default:
			if (ch < 0x20)
				g_string_append_printf(out, "\\u%04x", ch);
			else
				g_string_append_c(out, (char)ch);
		}
	}
	g_string_append_c(out, '"');
	c->render_bytes += out->len - start;
}

/* A float as Python's repr() writes it, for the common cases: the
 * shortest %g that reads back the same, with ".0" on whole numbers. */
static void
conv_render_float(GString *out, double d)
{
	if (d != d) {
		g_string_append(out, "NaN");
		return;
	}
	if (d == 1.0 / 0.0 || d == -1.0 / 0.0) {
		g_string_append(out, d > 0 ? "Infinity" : "-Infinity");
		return;
	}
	char buf[G_ASCII_DTOSTR_BUF_SIZE];
	for (int p = 1; p <= 17; p++) {
		char fmt[8];
		g_snprintf(fmt, sizeof fmt, "%%.%dg", p);
		g_ascii_formatd(buf, sizeof buf, fmt, d);
		if (g_ascii_strtod(buf, NULL) == d)
			break;
	}
	g_string_append(out, buf);
	if (strpbrk(buf, ".e") == NULL)
		g_string_append(out, ".0");
}

/* One key of a dict being rendered, and its text for sorting. */
typedef struct {
	const CcaPickleValue *key, *value;
	char *text; /* the key as JSON wants it: a str's bytes, else its rendering */
	size_t len;
} RenderPair;

static int
conv_render_pair_cmp(const void *a, const void *b)
{
	const RenderPair *x = a, *y = b;
	int r = memcmp(x->text, y->text, MIN(x->len, y->len));
	return r != 0 ? r : (x->len > y->len) - (x->len < y->len);
}

static void
conv_render_dict(Conv *c, GString *out, const CcaPickleValue *v, int depth)
{
	uint32_t n = MIN(v->len, RENDER_MAX_ITEMS);
	RenderPair *pairs = g_new(RenderPair, n ? n : 1);
	for (uint32_t i = 0; i < n; i++) {
		pairs[i].key = v->items[2 * (size_t)i];
		pairs[i].value = v->items[2 * (size_t)i + 1];
		if (pairs[i].key->type == CCA_PICKLE_STR) {
			pairs[i].len = MIN(pairs[i].key->len, RENDER_MAX_BYTES);
			pairs[i].text = g_strndup(pairs[i].key->s, pairs[i].len);
			pairs[i].len = strlen(pairs[i].text); /* stops at a NUL */
		} else {
			GString *k = g_string_new(NULL);
			conv_render(c, k, pairs[i].key, depth + 1);
			pairs[i].len = k->len;
			pairs[i].text = g_string_free(k, FALSE);
		}
	}
	qsort(pairs, n, sizeof *pairs, conv_render_pair_cmp);
	g_string_append_c(out, '{');
	for (uint32_t i = 0; i < n && out->len < RENDER_MAX_BYTES; i++) {
		if (i > 0)
			g_string_append_c(out, ',');
		conv_render_str(c, out, pairs[i].text, pairs[i].len);
		g_string_append_c(out, ':');
		conv_render(c, out, pairs[i].value, depth + 1);
	}
	if (v->len > n)
		g_string_append(out, ",...");
	g_string_append_c(out, '}');
	for (uint32_t i = 0; i < n; i++)
		g_free(pairs[i].text);
	g_free(pairs);
}

static void
conv_render(Conv *c, GString *out, const CcaPickleValue *v, int depth)
{
	if (out->len >= RENDER_MAX_BYTES)
		return;
	if (c->render_visits >= RENDER_MAX_VISITS) {
		g_string_append(out, "...");
		return;
	}
	c->render_visits++;
	switch ((CcaPickleType)v->type) {
	case CCA_PICKLE_NONE:
	case CCA_PICKLE_GLOBAL:
		g_string_append(out, "null");
		return;
	case CCA_PICKLE_BOOL:
		g_string_append(out, v->b ? "true" : "false");
		return;
	case CCA_PICKLE_INT:
		g_string_append_printf(out, "%" G_GINT64_FORMAT, (gint64)v->i);
		return;
	case CCA_PICKLE_UINT:
		g_string_append_printf(out, "%" G_GUINT64_FORMAT, (guint64)v->u);
		return;
	case CCA_PICKLE_FLOAT:
		conv_render_float(out, v->f);
		return;
	case CCA_PICKLE_STR:
		conv_render_str(c, out, v->s, v->len);
		return;
	case CCA_PICKLE_LIST:
	case CCA_PICKLE_TUPLE:
	case CCA_PICKLE_DICT:
		break;
	}
	if (depth >= RENDER_MAX_DEPTH) {
		g_string_append(out, "...");
		return;
	}
	if (v->type == CCA_PICKLE_DICT) {
		conv_render_dict(c, out, v, depth);
		return;
	}
	uint32_t n = MIN(v->len, RENDER_MAX_ITEMS);
	g_string_append_c(out, '[');
	for (uint32_t i = 0; i < n && out->len < RENDER_MAX_BYTES; i++) {
		if (i > 0)
			g_string_append_c(out, ',');
		conv_render(c, out, v->items[i], depth + 1);
	}
	if (v->len > n)
		g_string_append(out, ",...");
	g_string_append_c(out, ']');
}

/* user_metadata or compile_context as a string id: a str as it is, any
 * other value rendered (conv_render()); CCA_ID_NONE when absent.  A
 * shared value is rendered once. */
static gboolean
conv_meta(Conv *c, const Fields *f, KeyId key, uint32_t *out)
{
	const CcaPickleValue *v = conv_get(f, key);
	if (v == NULL || v->type == CCA_PICKLE_STR)
		return conv_str(c, f, key, out);
	c->snap->newer.rendered_metadata++;
	*out = CCA_ID_NONE; /* {} and [] say "unset", as "" does */
	if ((v->type == CCA_PICKLE_DICT || v->type == CCA_PICKLE_LIST ||
	     v->type == CCA_PICKLE_TUPLE) &&
	    v->len == 0)
		return TRUE;
	if (conv_id_get(&c->rendered, v, out))
		return TRUE;
	/* one walk is bounded by RENDER_MAX_* whatever the graph; charging
	 * what it did keeps many such values within the budget */
	g_autoptr(GString) text = g_string_new(NULL);
	c->render_visits = 0;
	c->render_bytes = 0;
	conv_render(c, text, v, 0);
	if (!conv_charge(c, c->render_visits + c->render_bytes / 16))
		return FALSE;
	if (text->len >= RENDER_MAX_BYTES) {
		g_string_truncate(text, RENDER_MAX_BYTES);
		g_string_append(text, "...");
	}
	*out = cca_snapshot_intern(c->snap, text->str, text->len);
	if (!cca_pickle_transient_has(c->transient, v))
		cca_pickle_node_map_put(&c->rendered, v, *out);
	return TRUE;
}

/* A (int, int) pool id; *PRESENT tells whether the key was there. */
static inline gboolean
conv_pool(Conv *c, const Fields *f, KeyId key, int64_t pool[2], bool *present)
{
	const CcaPickleValue *v = conv_get(f, key);
	pool[0] = pool[1] = 0;
	*present = v != NULL;
	if (v == NULL)
		return TRUE;
	if (v->type != CCA_PICKLE_TUPLE && v->type != CCA_PICKLE_LIST)
		return conv_type_error(c, key, v, "a pair of ints");
	if (v->len != 2)
		return conv_fail(c, CCA_INPUT_ERROR_CORRUPT,
				 "key '%s' is %s of %u items, expected a pair of ints",
				 conv_key_names[key], conv_a(v), v->len);
	for (int i = 0; i < 2; i++) {
		if (v->items[i]->type == CCA_PICKLE_UINT)
			return conv_fail(c, CCA_INPUT_ERROR_CORRUPT,
					 "key '%s' is out of range (an int above 2^63-1)",
					 conv_key_names[key]);
		if (v->items[i]->type != CCA_PICKLE_INT)
			return conv_fail(c, CCA_INPUT_ERROR_CORRUPT,
					 "key '%s' holds %s, expected a pair of ints",
					 conv_key_names[key], conv_a(v->items[i]));
	}
	pool[0] = v->items[0]->i;
	pool[1] = v->items[1]->i;
	return TRUE;
}

/* ------------------------------------------------------------ frames */

static guint
conv_frame_hash(gconstpointer p)
{
	const CcaFrame *fr = p;
	return fr->name * 31u + fr->filename * 1000003u + (guint)fr->line * 7919u;
}

static gboolean
conv_frame_equal(gconstpointer a, gconstpointer b)
{
	const CcaFrame *x = a, *y = b;
	return x->name == y->name && x->filename == y->filename && x->line == y->line;
}

/* Interns one frame dict: {name, filename, line}. */
static gboolean
conv_frame(Conv *c, const CcaPickleValue *v, uint32_t index, uint32_t *out)
{
	if (conv_id_get(&c->frames, v, out))
		return TRUE;
	if (v->type != CCA_PICKLE_DICT)
		return conv_fail(c, CCA_INPUT_ERROR_CORRUPT, "frames[%u] is %s, expected a dict",
				 index, conv_a(v));
	Fields f;
	CcaFrame fr = {0, 0, 0};
	if (!conv_fields(c, v, &f, &c->frame_shape))
		return FALSE;
	conv_unknown(c, &f, KEYS_FRAME, "frame");
	if (!conv_str(c, &f, K_NAME, &fr.name) || !conv_str(c, &f, K_FILENAME, &fr.filename) ||
	    !conv_i64(c, &f, K_LINE, FALSE, INT64_MIN, INT64_MAX, &fr.line))
		return FALSE;
	gpointer id;
	if (g_hash_table_lookup_extended(c->frame_ids, &fr, NULL, &id)) {
		*out = GPOINTER_TO_UINT(id);
	} else {
		*out = c->snap->frames->len;
		g_array_append_val(c->snap->frames, fr);
		g_hash_table_insert(c->frame_ids, g_memdup2(&fr, sizeof fr),
				    GUINT_TO_POINTER(*out));
	}
	if (!cca_pickle_transient_has(c->transient, v))
		cca_pickle_node_map_put(&c->frames, v, *out);
	return TRUE;
}

/* Appends the stack in c->scratch to the stack table (or finds it). */
static uint32_t
conv_add_stack(Conv *c)
{
	CcaSnapshot *snap = c->snap;
	GArray *ids = c->scratch;
	if (ids->len == 0)
		return 0;
	GBytes *key = g_bytes_new(ids->data, ids->len * sizeof(uint32_t));
	gpointer found;
	if (g_hash_table_lookup_extended(c->stack_ids, key, NULL, &found)) {
		g_bytes_unref(key);
		return GPOINTER_TO_UINT(found);
	}
	uint32_t id = cca_snapshot_n_stacks(snap);
	g_array_append_vals(snap->stack_frames, ids->data, ids->len);
	uint32_t end = snap->stack_frames->len;
	g_array_append_val(snap->stack_offsets, end);
	g_hash_table_insert(c->stack_ids, key, GUINT_TO_POINTER(id));
	return id;
}

/* A `frames` list as a stack id (0 for absent or empty). */
static gboolean
conv_stack(Conv *c, const CcaPickleValue *v, uint32_t *out)
{
	*out = 0;
	if (v == NULL || v->type == CCA_PICKLE_NONE)
		return TRUE;
	if (conv_id_get(&c->stacks, v, out))
		return TRUE;
	if (v->type != CCA_PICKLE_LIST && v->type != CCA_PICKLE_TUPLE)
		return conv_type_error(c, K_FRAMES, v, "a list");
	if (!conv_charge(c, v->len))
		return FALSE;
	g_array_set_size(c->scratch, 0);
	for (uint32_t i = 0; i < v->len; i++) {
		uint32_t frame;
		if (!conv_frame(c, v->items[i], i, &frame))
			return FALSE;
		g_array_append_val(c->scratch, frame);
	}
	*out = conv_add_stack(c);
	if (!cca_pickle_transient_has(c->transient, v))
		cca_pickle_node_map_put(&c->stacks, v, *out);
	return TRUE;
}

/* ------------------------------------------------------------ events */

/* conv_action()'s answer for an `annotate` entry (after 2.11:
 * torch.cuda.memory._annotate_memory() labels an allocation; addr is its
 * base, size 0, the label in user_metadata).  It changes no allocator
 * state, so the reader counts it and leaves it out of the events. */
#define CONV_ANNOTATE CCA_ACTION_COUNT

static inline gboolean
conv_action(Conv *c, const Fields *f, CcaAction *out)
{
	const CcaPickleValue *v = conv_get(f, K_ACTION);
	if (v == NULL)
		return conv_missing(c, K_ACTION);
	if (v->type != CCA_PICKLE_STR)
		return conv_type_error(c, K_ACTION, v, "a str");
	/* The pickler shares an action's str between entries when PyTorch
	 * did (then a node compare does), else makes one per entry (then a
	 * length-bucketed compare is cheap). */
	size_t slot = ((uintptr_t)v >> 3) & (G_N_ELEMENTS(c->action_node) - 1);
	if (c->action_node[slot] == v) {
		*out = (CcaAction)c->action_id[slot];
		return TRUE;
	}
	int action = cca_event_action_from_name(v->s, v->len);
	if (action < 0 && cca_pickle_str_equal(v, "annotate", 8))
		action = CONV_ANNOTATE;
	if (action < 0) {
		g_autofree char *name = cca_pickle_repr(v, 0);
		return conv_fail(c, CCA_INPUT_ERROR_CORRUPT, "unknown action %s", name);
	}
	if (!cca_pickle_transient_has(c->transient, v)) {
		c->action_node[slot] = v;
		c->action_id[slot] = (uint8_t)action;
	}
	*out = (CcaAction)action;
	return TRUE;
}

static gboolean
conv_event(Conv *c, const CcaPickleValue *v, CcaEvent *ev)
{
	memset(ev, 0, sizeof *ev);
	if (v->type != CCA_PICKLE_DICT)
		return conv_fail(c, CCA_INPUT_ERROR_CORRUPT, "trace entry is %s, expected a dict",
				 conv_a(v));
	Fields f;
	CcaAction action = CCA_ACTION_ALLOC;
	bool has_pool = false;
	ev->time_us = CCA_TIME_NONE;
	if (!conv_fields(c, v, &f, &c->event_shape) || !conv_action(c, &f, &action))
		return FALSE;
	ev->action = (uint8_t)action;
	if (action == CONV_ANNOTATE) {
		c->snap->newer.annotate_entries++;
		return TRUE;
	}
	conv_unknown(c, &f, KEYS_EVENT, "entry");
	conv_forward_frames(c, &f);
	/* An oom entry records the free device memory in place of addr. */
	KeyId addr =
		action == CCA_ACTION_OOM && conv_get(&f, K_ADDR) == NULL ? K_DEVICE_FREE : K_ADDR;
	if (!conv_bits(c, &f, addr, TRUE, &ev->addr) ||
	    !conv_size(c, &f, K_SIZE, TRUE, &ev->size) ||
	    !conv_bits(c, &f, K_STREAM, FALSE, &ev->stream) ||
	    !conv_i64(c, &f, K_TIME_US, FALSE, INT64_MIN, INT64_MAX, &ev->time_us) ||
	    !conv_meta(c, &f, K_COMPILE_CONTEXT, &ev->compile_context) ||
	    !conv_meta(c, &f, K_USER_METADATA, &ev->user_metadata) ||
	    !conv_stack(c, conv_get(&f, K_FRAMES), &ev->stack) ||
	    !conv_pool(c, &f, K_POOL_ID, ev->pool_id, &has_pool))
		return FALSE;
	ev->has_pool_id = has_pool;
	c->snap->newer.pool_id_entries += has_pool;
	return TRUE;
}

/* How many entries of LIST were consumed while parsing (0 when none). */
static uint64_t
conv_claim_seen(Conv *c, const CcaPickleValue *list)
{
	uint32_t i;
	return conv_id_get(&c->claims, list, &i) ? g_array_index(c->claimed, Claim, i).seen : 0;
}

/* conv_take_claimed() for a compact load. */
static CcaTraceEvents *
conv_take_claimed_enc(Conv *c, const CcaPickleValue *list)
{
	uint32_t i;
	if (!conv_id_get(&c->claims, list, &i))
		return cca_trace_events_new();
	Claim *cl = &g_array_index(c->claimed, Claim, i);
	if (cl->enc == NULL) /* the same list twice in device_traces */
		return cca_trace_events_copy(c->enc[cl->device]);
	return g_steal_pointer(&cl->enc);
}

/* The events consumed from LIST while parsing (a new empty array when
 * none); the caller owns the result. */
static GArray *
conv_take_claimed(Conv *c, const CcaPickleValue *list)
{
	uint32_t i;
	if (!conv_id_get(&c->claims, list, &i))
		return g_array_new(FALSE, FALSE, sizeof(CcaEvent));
	Claim *cl = &g_array_index(c->claimed, Claim, i);
	if (cl->events == NULL) {
		/* The same list twice in device_traces: copy the first. */
		GArray *first = c->snap->events[cl->device];
		GArray *copy = g_array_sized_new(FALSE, FALSE, sizeof(CcaEvent), first->len);
		g_array_append_vals(copy, first->data, first->len);
		return copy;
	}
	GArray *events = cl->events;
	cl->events = NULL;
	return events;
}

/* The pickle consumer's claim(): takes the inner lists of device_traces,
 * recognised by the stack below them while the top-level dict is being
 * filled: the str 'device_traces', the outer list, then either the inner
 * list itself or a MARK and the inner lists before it. */
static gboolean
conv_claim(void *user, const CcaPickleStack *st)
{
	Conv *c = user;
	const CcaPickleValue *list = st->stack[st->depth - 1];
	uint32_t index;
	if (conv_id_get(&c->claims, list, &index))
		return TRUE; /* its next batch */
	size_t top = st->depth - 1;
	size_t mark = st->n_marks > 0 ? st->marks[st->n_marks - 1] : 0;
	size_t outer_at;
	if (st->n_marks > 0 && mark >= 2 && mark <= top)
		outer_at = mark - 1; /* [K, O, MARK, L0, ..., L] */
	else if ((st->n_marks == 0 || mark < top) && top >= 2)
		outer_at = top - 1; /* [K, O, L] */
	else
		return FALSE;
	const CcaPickleValue *outer = st->stack[outer_at];
	const CcaPickleValue *key = st->stack[outer_at - 1];
	if (outer->type != CCA_PICKLE_LIST || !cca_pickle_str_equal(key, "device_traces", 13) ||
	    c->claimed->len >= CONV_MAX_DEVICES)
		return FALSE;
	Claim cl = {list, outer->len + (uint32_t)(top - outer_at - 1), NULL, NULL, 0};
	if (c->compact) {
		/* An encoded entry is smaller than its pickle: reserving the
		 * input's size for the first list keeps it from moving. */
		cl.enc = cca_trace_events_new();
		if (c->claimed->len == 0)
			cca_trace_events_reserve(cl.enc, c->input_len);
	} else {
		/* Reserve room for as many entries as the input could hold
		 * (one takes 32 bytes at least): pages never written cost
		 * nothing, while growing a big array copies it. */
		guint reserve =
			c->claimed->len == 0 ? (guint)MIN(c->input_len / 32, CONV_MAX_RESERVE) : 64;
		cl.events = g_array_sized_new(FALSE, FALSE, sizeof(CcaEvent), reserve);
		cca_input_advise_huge(cl.events->data, (size_t)reserve * sizeof(CcaEvent));
	}
	cca_pickle_node_map_put(&c->claims, list, c->claimed->len);
	g_array_append_val(c->claimed, cl);
	return TRUE;
}

/* The pickle consumer's consume(): converts a batch of trace entries. */
static gboolean
conv_consume(void *user, const CcaPickleValue *list, CcaPickleValue *const *items, size_t n,
	     const CcaPickleTransient *transient, GError **error)
{
	Conv *c = user;
	uint32_t index;
	if (!conv_id_get(&c->claims, list, &index))
		g_assert_not_reached();
	Claim *cl = &g_array_index(c->claimed, Claim, index);
	if (!conv_charge(c, n))
		return FALSE;
	c->transient = transient;
	c->where = WHERE_EVENT;
	c->idx[0] = cl->device;
	gboolean ok = TRUE;
	/* messages name an entry by its index in the pickle's list */
	uint64_t first = cl->seen;
	cl->seen += n;
	if (cl->enc != NULL) {
		for (size_t i = 0; ok && i < n; i++) {
			CcaEvent ev;
			c->idx[1] = (uint32_t)(first + i);
			c->at = items[i];
			ok = conv_event(c, items[i], &ev);
			if (ok && ev.action != CONV_ANNOTATE)
				cca_trace_events_add(cl->enc, &ev);
		}
	} else {
		guint kept = cl->events->len;
		g_array_set_size(cl->events, kept + n);
		for (size_t i = 0; ok && i < n; i++) {
			CcaEvent *ev = &g_array_index(cl->events, CcaEvent, kept);
			c->idx[1] = (uint32_t)(first + i);
			c->at = items[i];
			ok = conv_event(c, items[i], ev);
			kept += ok && ev->action != CONV_ANNOTATE;
		}
		g_array_set_size(cl->events, kept);
	}
	c->transient = NULL;
	c->at = NULL;
	(void)error; /* the same GError** as c->error */
	return ok;
}

static gboolean
conv_device_trace(Conv *c, uint32_t device, const CcaPickleValue *list)
{
	CcaSnapshot *snap = c->snap;
	c->where = WHERE_TOP;
	c->at = list;
	if (list->type != CCA_PICKLE_LIST)
		return conv_fail(c, CCA_INPUT_ERROR_CORRUPT,
				 "device_traces[%u] is %s, expected a list", device, conv_a(list));
	if (!conv_charge(c, list->len))
		return FALSE;
	/* Entries consumed while parsing come first: once a list has stored
	 * items the parser never claims it again. */
	uint64_t first = conv_claim_seen(c, list);
	if (c->compact) {
		CcaTraceEvents *te = conv_take_claimed_enc(c, list);
		c->enc[device] = te;
		c->where = WHERE_EVENT;
		c->idx[0] = device;
		for (uint32_t i = 0; i < list->len; i++) {
			CcaEvent ev;
			c->idx[1] = (uint32_t)(first + i);
			c->at = list->items[i];
			if (!conv_event(c, list->items[i], &ev))
				return FALSE;
			if (ev.action != CONV_ANNOTATE)
				cca_trace_events_add(te, &ev);
		}
		snap->n_events[device] = cca_trace_events_count(te);
		return TRUE;
	}
	GArray *events = conv_take_claimed(c, list);
	guint kept = events->len;
	snap->events[device] = events;
	g_array_set_size(events, kept + list->len);
	c->where = WHERE_EVENT;
	c->idx[0] = device;
	for (uint32_t i = 0; i < list->len; i++) {
		CcaEvent *ev = &g_array_index(events, CcaEvent, kept);
		c->idx[1] = (uint32_t)(first + i);
		c->at = list->items[i];
		if (!conv_event(c, list->items[i], ev))
			return FALSE;
		kept += ev->action != CONV_ANNOTATE;
	}
	g_array_set_size(events, kept);
	snap->n_events[device] = events->len;
	return TRUE;
}

static gboolean
conv_device_traces(Conv *c, const CcaPickleValue *traces)
{
	CcaSnapshot *snap = c->snap;
	c->at = traces;
	if (traces->type != CCA_PICKLE_LIST)
		return conv_fail(c, CCA_INPUT_ERROR_CORRUPT,
				 "'device_traces' is %s, expected a list", conv_a(traces));
	if (traces->len > CONV_MAX_DEVICES)
		return conv_fail(c, CCA_INPUT_ERROR_LIMIT,
				 "'device_traces' lists %u devices (max %d)", traces->len,
				 CONV_MAX_DEVICES);
	if (!conv_charge(c, traces->len))
		return FALSE;
	snap->n_devices = (int)traces->len;
	for (uint32_t d = 0; d < traces->len; d++)
		if (!conv_device_trace(c, d, traces->items[d]))
			return FALSE;
	return TRUE;
}

/* ------------------------------------------------------------ segments */

/* Legacy (<= 2.0) blocks: requested size and frames from history[0]. */
static gboolean
conv_block_history(Conv *c, const Fields *f, CcaSnapBlock *b, const CcaPickleValue **frames)
{
	const CcaPickleValue *h = conv_get(f, K_HISTORY);
	if (h == NULL)
		return TRUE;
	if (h->type != CCA_PICKLE_LIST)
		return conv_type_error(c, K_HISTORY, h, "a list");
	if (h->len == 0)
		return TRUE;
	if (h->items[0]->type != CCA_PICKLE_DICT)
		return conv_fail(c, CCA_INPUT_ERROR_CORRUPT, "history[0] is %s, expected a dict",
				 conv_a(h->items[0]));
	Fields hf;
	if (!conv_fields(c, h->items[0], &hf, &c->other_shape))
		return FALSE;
	conv_unknown(c, &hf, KEYS_HISTORY, "history");
	if (conv_get(f, K_REQUESTED_SIZE) == NULL &&
	    !conv_size(c, &hf, K_REAL_SIZE, FALSE, &b->requested_size))
		return FALSE;
	if (*frames == NULL)
		*frames = conv_get(&hf, K_FRAMES);
	return TRUE;
}

/* One block at address *NEXT (the segment's prefix sum), which it
 * advances. */
static gboolean
conv_block(Conv *c, const CcaPickleValue *v, uint64_t *next)
{
	if (v->type != CCA_PICKLE_DICT)
		return conv_fail(c, CCA_INPUT_ERROR_CORRUPT, "block is %s, expected a dict",
				 conv_a(v));
	Fields f;
	CcaSnapBlock b;
	memset(&b, 0, sizeof b);
	b.address = *next;
	if (!conv_fields(c, v, &f, &c->block_shape))
		return FALSE;
	conv_unknown(c, &f, KEYS_BLOCK, "block");
	conv_forward_frames(c, &f);
	if (!conv_size(c, &f, K_SIZE, TRUE, &b.size) ||
	    !conv_bits(c, &f, K_ADDRESS, FALSE, &b.address))
		return FALSE;
	if (b.address != *next)
		return conv_fail(c, CCA_INPUT_ERROR_CORRUPT,
				 "block address %" G_GUINT64_FORMAT
				 " is not where the previous blocks end (%" G_GUINT64_FORMAT ")",
				 (guint64)b.address, (guint64)*next);
	const CcaPickleValue *state = conv_get(&f, K_STATE);
	if (state == NULL)
		return conv_missing(c, K_STATE);
	int s = state->type == CCA_PICKLE_STR
			? cca_event_block_state_from_name(state->s, state->len)
			: -1;
	if (s < 0) {
		g_autofree char *r = cca_pickle_repr(state, 0);
		return conv_fail(c, CCA_INPUT_ERROR_CORRUPT, "unknown block state %s", r);
	}
	b.state = (uint8_t)s;
	b.requested_size = b.size;
	const CcaPickleValue *frames = conv_get(&f, K_FRAMES);
	if (!conv_block_history(c, &f, &b, &frames) ||
	    !conv_size(c, &f, K_REQUESTED_SIZE, FALSE, &b.requested_size) ||
	    !conv_stack(c, frames, &b.stack))
		return FALSE;
	*next = b.address + b.size;
	g_array_append_val(c->snap->blocks, b);
	return TRUE;
}

static gboolean
conv_segment_type(Conv *c, const Fields *f, bool *is_small)
{
	const CcaPickleValue *v = conv_get(f, K_SEGMENT_TYPE);
	if (v == NULL)
		return conv_missing(c, K_SEGMENT_TYPE);
	if (cca_pickle_str_equal(v, "small", 5) || cca_pickle_str_equal(v, "large", 5)) {
		*is_small = v->s[0] == 's';
		return TRUE;
	}
	g_autofree char *r = cca_pickle_repr(v, 0);
	return conv_fail(c, CCA_INPUT_ERROR_CORRUPT, "unknown segment_type %s", r);
}

/* Sums of the segment's blocks, for fields older versions lack. */
static void
conv_segment_sums(const CcaSnapshot *snap, const CcaSnapSegment *seg, uint64_t *allocated,
		  uint64_t *active, uint64_t *requested)
{
	*allocated = *active = *requested = 0;
	for (uint32_t i = 0; i < seg->n_blocks; i++) {
		const CcaSnapBlock *b =
			&g_array_index(snap->blocks, CcaSnapBlock, seg->first_block + i);
		if (b->state == CCA_BLOCK_ACTIVE_ALLOCATED)
			*allocated += b->size;
		if (b->state != CCA_BLOCK_INACTIVE) {
			*active += b->size;
			*requested += b->requested_size;
		}
	}
}

static gboolean
conv_blocks(Conv *c, const Fields *f, CcaSnapSegment *seg)
{
	const CcaPickleValue *blocks = conv_get(f, K_BLOCKS);
	if (blocks == NULL)
		return conv_missing(c, K_BLOCKS);
	if (blocks->type != CCA_PICKLE_LIST)
		return conv_type_error(c, K_BLOCKS, blocks, "a list");
	if (!conv_charge(c, blocks->len))
		return FALSE;
	seg->first_block = c->snap->blocks->len;
	uint64_t next = seg->address;
	c->where = WHERE_BLOCK;
	for (uint32_t i = 0; i < blocks->len; i++) {
		c->idx[1] = i;
		c->at = blocks->items[i];
		if (!conv_block(c, blocks->items[i], &next))
			return FALSE;
	}
	c->where = WHERE_SEGMENT;
	c->at = f->dict;
	seg->n_blocks = blocks->len;
	if (next - seg->address != seg->total_size)
		return conv_fail(c, CCA_INPUT_ERROR_CORRUPT,
				 "blocks cover %" G_GUINT64_FORMAT
				 " bytes of the segment's %" G_GUINT64_FORMAT,
				 (guint64)(next - seg->address), (guint64)seg->total_size);
	return TRUE;
}

static gboolean
conv_segment(Conv *c, const CcaPickleValue *v)
{
	if (v->type != CCA_PICKLE_DICT)
		return conv_fail(c, CCA_INPUT_ERROR_CORRUPT, "segment is %s, expected a dict",
				 conv_a(v));
	Fields f;
	CcaSnapSegment seg;
	int64_t device = 0;
	bool has_pool;
	memset(&seg, 0, sizeof seg);
	if (!conv_fields(c, v, &f, &c->segment_shape))
		return FALSE;
	conv_unknown(c, &f, KEYS_SEGMENT, "segment");
	conv_forward_frames(c, &f);
	if (!conv_i64(c, &f, K_DEVICE, FALSE, 0, INT32_MAX, &device) ||
	    !conv_bits(c, &f, K_ADDRESS, TRUE, &seg.address) ||
	    !conv_size(c, &f, K_TOTAL_SIZE, TRUE, &seg.total_size) ||
	    !conv_bits(c, &f, K_STREAM, FALSE, &seg.stream) ||
	    !conv_segment_type(c, &f, &seg.is_small) ||
	    !conv_pool(c, &f, K_SEGMENT_POOL_ID, seg.pool_id, &has_pool) ||
	    !conv_bool(c, &f, K_IS_EXPANDABLE, &seg.is_expandable) ||
	    !conv_stack(c, conv_get(&f, K_FRAMES), &seg.stack) || !conv_blocks(c, &f, &seg))
		return FALSE;
	seg.device = (int32_t)device;
	conv_segment_sums(c->snap, &seg, &seg.allocated_size, &seg.active_size,
			  &seg.requested_size);
	if (!conv_size(c, &f, K_ALLOCATED_SIZE, FALSE, &seg.allocated_size) ||
	    !conv_size(c, &f, K_ACTIVE_SIZE, FALSE, &seg.active_size) ||
	    !conv_size(c, &f, K_REQUESTED_SIZE, FALSE, &seg.requested_size))
		return FALSE;
	g_array_append_val(c->snap->segments, seg);
	return TRUE;
}

static int
conv_segment_cmp(gconstpointer a, gconstpointer b)
{
	const CcaSnapSegment *x = a, *y = b;
	if (x->address != y->address)
		return x->address < y->address ? -1 : 1;
	return (x->device > y->device) - (x->device < y->device);
}

/* Sorts the segments by address (PyTorch already does), keeping each
 * segment's blocks contiguous and in segment order. */
static void
conv_sort_segments(CcaSnapshot *snap)
{
	GArray *segs = snap->segments;
	gboolean sorted = TRUE;
	for (guint i = 1; i < segs->len && sorted; i++)
		sorted = conv_segment_cmp(&g_array_index(segs, CcaSnapSegment, i - 1),
					  &g_array_index(segs, CcaSnapSegment, i)) <= 0;
	if (sorted)
		return;
	g_array_sort(segs, conv_segment_cmp);
	GArray *blocks = g_array_sized_new(FALSE, FALSE, sizeof(CcaSnapBlock), snap->blocks->len);
	for (guint i = 0; i < segs->len; i++) {
		CcaSnapSegment *s = &g_array_index(segs, CcaSnapSegment, i);
		g_array_append_vals(blocks,
				    &g_array_index(snap->blocks, CcaSnapBlock, s->first_block),
				    s->n_blocks);
		s->first_block = blocks->len - s->n_blocks;
	}
	g_array_unref(snap->blocks);
	snap->blocks = blocks;
}

static gboolean
conv_segments(Conv *c, const CcaPickleValue *list)
{
	c->where = WHERE_TOP;
	c->at = list;
	if (list->type != CCA_PICKLE_LIST)
		return conv_fail(c, CCA_INPUT_ERROR_CORRUPT, "'segments' is %s, expected a list",
				 conv_a(list));
	if (!conv_charge(c, list->len))
		return FALSE;
	for (uint32_t i = 0; i < list->len; i++) {
		c->where = WHERE_SEGMENT;
		c->idx[0] = i;
		c->at = list->items[i];
		if (!conv_segment(c, list->items[i]))
			return FALSE;
	}
	conv_sort_segments(c->snap);
	return TRUE;
}

/* ------------------------------------------------------------ settings */

/* roundup_power2_divisions: {"1": n, "2": n, ... "32768": n} (or a list
 * of 16 ints), index log2 of the MiB bucket. */
static gboolean
conv_roundup(Conv *c, const CcaPickleValue *v, uint32_t out[16])
{
	if (v->type != CCA_PICKLE_DICT && v->type != CCA_PICKLE_LIST)
		return conv_fail(c, CCA_INPUT_ERROR_CORRUPT,
				 "roundup_power2_divisions is %s, expected a dict", conv_a(v));
	gboolean dict = v->type == CCA_PICKLE_DICT;
	if (!conv_charge(c, v->len))
		return FALSE;
	for (uint32_t i = 0; i < v->len; i++) {
		const CcaPickleValue *key = dict ? v->items[2 * i] : NULL;
		const CcaPickleValue *val = dict ? v->items[2 * i + 1] : v->items[i];
		int index = -1;
		if (key == NULL)
			index = i < 16 ? (int)i : -1;
		for (int b = 0; key != NULL && b < 16 && index < 0; b++) {
			char name[8];
			g_snprintf(name, sizeof name, "%d", 1 << b);
			if (cca_pickle_str_equal(key, name, strlen(name)))
				index = b;
		}
		if (index < 0)
			continue; /* not a bucket this model knows */
		if (val->type != CCA_PICKLE_INT || val->i < 0 || val->i > UINT32_MAX)
			return conv_fail(c, CCA_INPUT_ERROR_CORRUPT,
					 "roundup_power2_divisions[%d] is not a small int >= 0",
					 1 << index);
		out[index] = (uint32_t)val->i;
	}
	return TRUE;
}

static gboolean
conv_settings(Conv *c, const CcaPickleValue *v)
{
	CcaPickleKey k_conf = CCA_PICKLE_KEY("PYTORCH_CUDA_ALLOC_CONF");
	CcaPickleKey k_max_split = CCA_PICKLE_KEY("max_split_size");
	CcaPickleKey k_gc = CCA_PICKLE_KEY("garbage_collection_threshold");
	CcaPickleKey k_exp = CCA_PICKLE_KEY("expandable_segments");
	CcaPickleKey k_threads = CCA_PICKLE_KEY("pinned_num_register_threads");
	CcaPickleKey k_release = CCA_PICKLE_KEY("release_lock_on_cudamalloc");
	CcaPickleKey k_host_reg = CCA_PICKLE_KEY("pinned_use_cuda_host_register");
	CcaPickleKey k_reuse = CCA_PICKLE_KEY("graph_capture_record_stream_reuse");
	CcaPickleKey k_roundup = CCA_PICKLE_KEY("roundup_power2_divisions");
	CcaPickleKey k_overflowed = CCA_PICKLE_KEY("trace_alloc_overflowed");
	CcaPickleKey k_max_entries = CCA_PICKLE_KEY("trace_alloc_max_entries");
	static const char *const known_keys[] = {
		"PYTORCH_CUDA_ALLOC_CONF",	 "max_split_size",
		"garbage_collection_threshold",	 "expandable_segments",
		"pinned_num_register_threads",	 "release_lock_on_cudamalloc",
		"pinned_use_cuda_host_register", "graph_capture_record_stream_reuse",
		"roundup_power2_divisions",	 "trace_alloc_overflowed",
		"trace_alloc_max_entries",
	};
	struct {
		CcaPickleKey *key;
		bool *out;
	} bools[] = {
		{&k_exp, &c->snap->settings.expandable_segments},
		{&k_release, &c->snap->settings.release_lock_on_cudamalloc},
		{&k_host_reg, &c->snap->settings.pinned_use_cuda_host_register},
		{&k_reuse, &c->snap->settings.graph_capture_record_stream_reuse},
	};
	CcaRecordedSettings *s = &c->snap->settings;
	const CcaPickleValue *x;

	c->where = WHERE_SETTINGS;
	c->at = v;
	if (v->type != CCA_PICKLE_DICT)
		return conv_fail(c, CCA_INPUT_ERROR_CORRUPT, "is %s, expected a dict", conv_a(v));
	if (!conv_charge(c, v->len))
		return FALSE;
	s->present = true;
	g_free(s->conf);
	x = cca_pickle_dict_get(v, &k_conf);
	if (x != NULL && x->type != CCA_PICKLE_STR && x->type != CCA_PICKLE_NONE)
		return conv_fail(c, CCA_INPUT_ERROR_CORRUPT, "'%s' is %s, expected a str",
				 k_conf.str, conv_a(x));
	s->conf = x != NULL && x->type == CCA_PICKLE_STR ? g_strndup(x->s, x->len) : g_strdup("");

	x = cca_pickle_dict_get(v, &k_max_split);
	if (x != NULL && x->type == CCA_PICKLE_INT)
		s->max_split_size = x->i < 0 ? -1 : x->i;
	else if (x != NULL && x->type == CCA_PICKLE_UINT)
		s->max_split_size = -1; /* SIZE_MAX written unsigned */
	else if (x != NULL)
		return conv_fail(c, CCA_INPUT_ERROR_CORRUPT, "'%s' is %s, expected an int",
				 k_max_split.str, conv_a(x));

	x = cca_pickle_dict_get(v, &k_gc);
	if (x != NULL && x->type == CCA_PICKLE_FLOAT)
		s->garbage_collection_threshold = x->f;
	else if (x != NULL && x->type == CCA_PICKLE_INT)
		s->garbage_collection_threshold = (double)x->i;
	else if (x != NULL)
		return conv_fail(c, CCA_INPUT_ERROR_CORRUPT, "'%s' is %s, expected a float",
				 k_gc.str, conv_a(x));

	x = cca_pickle_dict_get(v, &k_threads);
	if (x != NULL && x->type == CCA_PICKLE_INT)
		s->pinned_num_register_threads = x->i;
	else if (x != NULL)
		return conv_fail(c, CCA_INPUT_ERROR_CORRUPT, "'%s' is %s, expected an int",
				 k_threads.str, conv_a(x));

	for (size_t i = 0; i < G_N_ELEMENTS(bools); i++) {
		x = cca_pickle_dict_get(v, bools[i].key);
		if (x == NULL)
			continue;
		if (x->type != CCA_PICKLE_BOOL)
			return conv_fail(c, CCA_INPUT_ERROR_CORRUPT, "'%s' is %s, expected a bool",
					 bools[i].key->str, conv_a(x));
		*bools[i].out = x->b;
		if (bools[i].key == &k_reuse)
			s->has_graph_capture_record_stream_reuse = true;
	}

	/* after 2.11: whether the ring of trace entries overflowed, and its
	 * size (shown by `info`; the plan finds a mid-run start itself) */
	CcaSnapshotNewer *n = &c->snap->newer;
	x = cca_pickle_dict_get(v, &k_overflowed);
	if (x != NULL && x->type == CCA_PICKLE_BOOL)
		n->trace_alloc_overflowed = x->b;
	else if (x != NULL && x->type != CCA_PICKLE_NONE)
		return conv_fail(c, CCA_INPUT_ERROR_CORRUPT, "'%s' is %s, expected a bool",
				 k_overflowed.str, conv_a(x));
	x = cca_pickle_dict_get(v, &k_max_entries);
	if (x != NULL && ((x->type == CCA_PICKLE_INT && x->i >= 0) || x->type == CCA_PICKLE_UINT))
		n->trace_alloc_max_entries =
			x->type == CCA_PICKLE_UINT || x->i == INT64_MAX ? INT64_MAX : x->i;
	else if (x != NULL && x->type != CCA_PICKLE_NONE)
		return conv_fail(c, CCA_INPUT_ERROR_CORRUPT, "'%s' is %s, expected an int >= 0",
				 k_max_entries.str, conv_a(x));

	for (uint32_t i = 0; i < v->len; i++) {
		const CcaPickleValue *k = v->items[2 * (size_t)i];
		gboolean known = FALSE;
		for (size_t j = 0; j < G_N_ELEMENTS(known_keys) && !known; j++)
			known = cca_pickle_str_equal(k, known_keys[j], strlen(known_keys[j]));
		if (!known)
			conv_unknown_name(c, "allocator_settings", k);
	}

	x = cca_pickle_dict_get(v, &k_roundup);
	return x == NULL || conv_roundup(c, x, s->roundup_power2_divisions);
}

/* ------------------------------------------------------------ annotations */

static gboolean
conv_annotations(Conv *c, const CcaPickleValue *list)
{
	c->where = WHERE_TOP;
	c->at = list;
	if (list->type != CCA_PICKLE_LIST)
		return conv_fail(c, CCA_INPUT_ERROR_CORRUPT,
				 "'external_annotations' is %s, expected a list", conv_a(list));
	if (!conv_charge(c, list->len))
		return FALSE;
	c->where = WHERE_ANNOTATION;
	for (uint32_t i = 0; i < list->len; i++) {
		const CcaPickleValue *v = list->items[i];
		CcaAnnotation a;
		memset(&a, 0, sizeof a); /* padding too: tables compare bytewise */
		a.time_us = CCA_TIME_NONE;
		int64_t device = 0;
		Fields f;
		c->idx[0] = i;
		c->at = v;
		if (v->type != CCA_PICKLE_DICT)
			return conv_fail(c, CCA_INPUT_ERROR_CORRUPT, "is %s, expected a dict",
					 conv_a(v));
		if (!conv_fields(c, v, &f, &c->other_shape) ||
		    !conv_str(c, &f, K_STAGE, &a.stage) || !conv_str(c, &f, K_NAME, &a.name) ||
		    !conv_i64(c, &f, K_DEVICE, FALSE, INT32_MIN, INT32_MAX, &device) ||
		    !conv_i64(c, &f, K_TIME_US, FALSE, INT64_MIN, INT64_MAX, &a.time_us))
			return FALSE;
		a.device = (int32_t)device;
		g_array_append_val(c->snap->annotations, a);
	}
	return TRUE;
}

/* ------------------------------------------------------------ top level */

static gboolean
conv_not_snapshot(Conv *c, const char *why)
{
	g_set_error(c->error, CCA_INPUT_ERROR, CCA_INPUT_ERROR_NOT_SNAPSHOT,
		    "%s: not a PyTorch memory snapshot (%s)", c->name, why);
	return FALSE;
}

/* A bare list is a "segments only" snapshot when its items are dicts. */
static gboolean
conv_bare_list(Conv *c, const CcaPickleValue *root)
{
	for (uint32_t i = 0; i < root->len; i++)
		if (root->items[i]->type != CCA_PICKLE_DICT) {
			g_autofree char *why =
				g_strdup_printf("top-level list holds %s, not segment dicts",
						conv_a(root->items[i]));
			return conv_not_snapshot(c, why);
		}
	return conv_segments(c, root);
}

/* A top-level value, NULL when absent or None. */
static const CcaPickleValue *
conv_top(const CcaPickleValue *root, CcaPickleKey *key)
{
	const CcaPickleValue *v = cca_pickle_dict_get(root, key);
	return v != NULL && v->type != CCA_PICKLE_NONE ? v : NULL;
}

/* The top-level keys of releases after 2.11, counted and ignored:
 * host_segments and host_traces (2.14, pinned host memory when
 * record_pinned_host_memory=True); any other key is counted by name. */
static gboolean
conv_top_newer(Conv *c, const CcaPickleValue *root)
{
	static const char *const known[] = {"segments", "device_traces", "allocator_settings",
					    "external_annotations"};
	CcaSnapshotNewer *n = &c->snap->newer;
	if (!conv_charge(c, root->len))
		return FALSE;
	for (uint32_t i = 0; i < root->len; i++) {
		const CcaPickleValue *k = root->items[2 * (size_t)i];
		const CcaPickleValue *v = root->items[2 * (size_t)i + 1];
		gboolean listed = v->type == CCA_PICKLE_LIST || v->type == CCA_PICKLE_TUPLE;
		if (cca_pickle_str_equal(k, "host_segments", 13)) {
			n->host_segments = listed ? v->len : 0;
			/* shown, not simulated: the pinned host memory they hold
			 * (each item's int total_size; other items add nothing) */
			n->host_bytes = 0;
			for (uint32_t j = 0; listed && j < v->len; j++) {
				CcaPickleKey k_total = CCA_PICKLE_KEY("total_size");
				const CcaPickleValue *t =
					v->items[j]->type == CCA_PICKLE_DICT
						? cca_pickle_dict_get(v->items[j], &k_total)
						: NULL;
				if (t && t->type == CCA_PICKLE_INT && t->i > 0 &&
				    t->i <= INT64_MAX - n->host_bytes)
					n->host_bytes += t->i;
			}
		} else if (cca_pickle_str_equal(k, "host_traces", 11)) {
			/* a list of per-host lists of entries, or of entries */
			n->host_traces = 0;
			if (listed && !conv_charge(c, v->len))
				return FALSE;
			for (uint32_t j = 0; listed && j < v->len; j++) {
				const CcaPickleValue *t = v->items[j];
				n->host_traces += t->type == CCA_PICKLE_LIST ? t->len : 1;
			}
		} else {
			gboolean ok = FALSE;
			for (size_t j = 0; j < G_N_ELEMENTS(known) && !ok; j++)
				ok = cca_pickle_str_equal(k, known[j], strlen(known[j]));
			if (!ok)
				conv_unknown_name(c, "snapshot", k);
		}
	}
	return TRUE;
}

static gboolean
conv_root(Conv *c, const CcaPickleValue *root)
{
	CcaPickleKey k_segments = CCA_PICKLE_KEY("segments");
	CcaPickleKey k_traces = CCA_PICKLE_KEY("device_traces");
	CcaPickleKey k_settings = CCA_PICKLE_KEY("allocator_settings");
	CcaPickleKey k_annotations = CCA_PICKLE_KEY("external_annotations");

	if (root->type == CCA_PICKLE_LIST)
		return conv_bare_list(c, root);
	if (root->type != CCA_PICKLE_DICT) {
		g_autofree char *why =
			g_strdup_printf("top level is %s, expected a dict", conv_a(root));
		return conv_not_snapshot(c, why);
	}
	const CcaPickleValue *segments = conv_top(root, &k_segments);
	const CcaPickleValue *traces = conv_top(root, &k_traces);
	const CcaPickleValue *settings = conv_top(root, &k_settings);
	const CcaPickleValue *annotations = conv_top(root, &k_annotations);
	if (segments == NULL && traces == NULL)
		return conv_not_snapshot(c, "top-level dict has no 'device_traces' or 'segments'");
	/* Traces first: in a streamed load their entries were converted
	 * during the parse, and the same order gives the same table ids (and
	 * unknown key names in the same order). */
	return (traces == NULL || conv_device_traces(c, traces)) && conv_top_newer(c, root) &&
	       (segments == NULL || conv_segments(c, segments)) &&
	       (settings == NULL || conv_settings(c, settings)) &&
	       (annotations == NULL || conv_annotations(c, annotations));
}

static void
conv_init(Conv *c, CcaSnapshot *snap, const char *name, size_t len, GError **error)
{
	memset(c, 0, sizeof *c);
	c->snap = snap;
	c->name = name;
	c->error = error;
	c->budget = 2 * (uint64_t)len + 4096;
	c->input_len = len;
	c->frame_ids = g_hash_table_new_full(conv_frame_hash, conv_frame_equal, g_free, NULL);
	c->stack_ids = g_hash_table_new_full(g_bytes_hash, g_bytes_equal,
					     (GDestroyNotify)g_bytes_unref, NULL);
	c->scratch = g_array_new(FALSE, FALSE, sizeof(uint32_t));
	c->claimed = g_array_new(FALSE, FALSE, sizeof(Claim));
}

static void
conv_clear(Conv *c)
{
	cca_pickle_node_map_clear(&c->keys);
	cca_pickle_node_map_clear(&c->claims);
	for (guint i = 0; i < c->claimed->len; i++) {
		Claim *cl = &g_array_index(c->claimed, Claim, i);
		if (cl->events != NULL)
			g_array_unref(cl->events);
		cca_trace_events_free(cl->enc);
	}
	for (int d = 0; d < c->n_enc; d++)
		cca_trace_events_free(c->enc[d]);
	g_free(c->enc);
	g_array_unref(c->claimed);
	cca_pickle_node_map_clear(&c->frames);
	cca_pickle_node_map_clear(&c->stacks);
	cca_pickle_node_map_clear(&c->rendered);
	g_hash_table_unref(c->frame_ids);
	g_hash_table_unref(c->stack_ids);
	g_array_unref(c->scratch);
}

/* Allocates the per-device arrays once the device count is known. */
static void
conv_alloc_devices(Conv *c, CcaSnapshot *snap, const CcaPickleValue *root)
{
	CcaPickleKey k_traces = CCA_PICKLE_KEY("device_traces");
	const CcaPickleValue *traces = cca_pickle_dict_get(root, &k_traces);
	size_t n = traces != NULL && traces->type == CCA_PICKLE_LIST ? traces->len : 0;
	n = MIN(n, (size_t)CONV_MAX_DEVICES);
	if (c->compact) {
		c->enc = g_new0(CcaTraceEvents *, MAX(n, 1));
		c->n_enc = (int)n;
	} else {
		snap->events = g_new0(GArray *, MAX(n, 1));
	}
	snap->n_events = g_new0(uint64_t, MAX(n, 1));
}

CcaSnapshot *
cca_snapshot_pickle_load(const unsigned char *data, size_t len, const char *name, GError **error)
{
	return cca_snapshot_pickle_load_full(data, len, name, TRUE, error);
}

/* Both public loaders. */
static CcaSnapshot *
conv_load(const unsigned char *data, size_t len, const char *name, gboolean stream,
	  gboolean compact, void (*progress)(void *user, size_t pos), void *user, GError **error)
{
	static const CcaPickleConsumer consumer = {conv_claim, conv_consume};
	g_autoptr(CcaSnapshot) snap = cca_snapshot_new();
	Conv c;
	conv_init(&c, snap, name, len, error);
	c.compact = compact;
	g_autoptr(CcaPickle) pickle = cca_pickle_parse_progress(
		data, len, name, stream ? &consumer : NULL, &c, progress, user, error);
	gboolean ok = pickle != NULL;
	if (ok) {
		snap->format = CCA_FORMAT_PICKLE;
		snap->source = g_strdup(name);
		snap->pickle_protocol = cca_pickle_protocol(pickle);
		conv_alloc_devices(&c, snap, cca_pickle_root(pickle));
		ok = conv_root(&c, cca_pickle_root(pickle));
	}
	if (ok && compact)
		cca_trace_events_attach(snap, c.enc); /* takes the stores */
	conv_clear(&c);
	return ok ? g_steal_pointer(&snap) : NULL;
}

CcaSnapshot *
cca_snapshot_pickle_load_value(const CcaPickle *pickle, const char *name, GError **error)
{
	const CcaPickleValue *root = cca_pickle_root(pickle);
	g_return_val_if_fail(root != NULL, NULL);
	g_autoptr(CcaSnapshot) snap = cca_snapshot_new();
	Conv c;
	/* the budget of a pickle of one byte per node and item slot */
	conv_init(&c, snap, name, cca_pickle_n_nodes(pickle), error);
	snap->format = CCA_FORMAT_PICKLE;
	snap->source = g_strdup(name);
	snap->pickle_protocol = 0;
	conv_alloc_devices(&c, snap, root);
	gboolean ok = conv_root(&c, root);
	conv_clear(&c);
	return ok ? g_steal_pointer(&snap) : NULL;
}

CcaSnapshot *
cca_snapshot_pickle_load_full(const unsigned char *data, size_t len, const char *name,
			      gboolean stream, GError **error)
{
	return conv_load(data, len, name, stream, FALSE, NULL, NULL, error);
}

CcaSnapshot *
cca_snapshot_pickle_load_with(const unsigned char *data, size_t len, const char *name,
			      gboolean compact, void (*progress)(void *user, size_t pos),
			      void *user, GError **error)
{
	return conv_load(data, len, name, TRUE, compact, progress, user, error);
}
