/* pickle.h - a safe reader for the subset of Python's pickle format that
 * memory snapshots use.  Executes and imports nothing.
 *
 * cca_pickle_parse() runs the pickle stack machine over a byte buffer and
 * builds an immutable value graph in an arena owned by the CcaPickle.
 * Memoized objects are shared, never copied, so the graph is a DAG (a
 * hostile pickle can even make it cyclic: walkers must bound their depth).
 * Strings point into the input buffer, which must outlive the CcaPickle.
 *
 * Supported: protocols 2..5 and the opcodes of doc/trace-format.md §12.1, plus GLOBAL and
 * REDUCE for `torch.jit._pickle restore_type_tag` only (it returns its first
 * argument).  Every opcode that could import or call code is refused with
 * CCA_INPUT_ERROR_FORBIDDEN; other opcodes snapshots never use are refused
 * with CCA_INPUT_ERROR_CORRUPT.
 */
#ifndef CCA_PICKLE_H
#define CCA_PICKLE_H

#include <glib.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

G_BEGIN_DECLS

/* Most MARKs that may be open at once (nesting of MARK-built containers). */
#define CCA_PICKLE_MAX_MARKS 10000

typedef enum {
	CCA_PICKLE_NONE = 0,
	CCA_PICKLE_BOOL,
	CCA_PICKLE_INT,	   /* fits int64_t: `i` */
	CCA_PICKLE_UINT,   /* 2^63 .. 2^64-1 (9-byte LONG1): `u` */
	CCA_PICKLE_FLOAT,  /* `f` */
	CCA_PICKLE_STR,	   /* `s`, `len` bytes of UTF-8 in the input, not NUL-terminated */
	CCA_PICKLE_LIST,   /* `items[0 .. len)` */
	CCA_PICKLE_TUPLE,  /* `items[0 .. len)` */
	CCA_PICKLE_DICT,   /* `len` pairs: key items[2k], value items[2k+1], in insertion order */
	CCA_PICKLE_GLOBAL, /* the restore_type_tag callable (GLOBAL without its REDUCE) */
} CcaPickleType;

typedef struct CcaPickleValue CcaPickleValue;

/* One node of the value graph.  Containers may appear under several
 * parents (memo sharing); dicts keep duplicate keys (the later one wins
 * in cca_pickle_dict_get()). */
struct CcaPickleValue {
	uint8_t type; /* CcaPickleType */
	uint32_t len; /* str bytes; list/tuple items; dict pairs */
	union {
		bool b;
		int64_t i;
		uint64_t u;
		double f;
		const char *s;
		CcaPickleValue **items;
	};
};

/* A parsed pickle: the arena holding its graph, and the root. */
typedef struct CcaPickle CcaPickle;

/* Parses the LEN bytes at DATA, which must start with PROTO 2..5 and end
 * with STOP (bytes after STOP are ignored).  NAME (a path) starts every
 * error message: "NAME: offset N: what", N being the offset of the opcode
 * at fault.  Returns the parsed pickle, or NULL with ERROR set in
 * CCA_INPUT_ERROR: _TRUNCATED (input ends early), _CORRUPT (malformed or
 * unsupported opcode), _FORBIDDEN (an opcode that would import or call
 * code), _LIMIT (a count or integer too large).  Never executes anything,
 * runs in time linear in LEN.  DATA must outlive the result. */
CcaPickle *cca_pickle_parse(const unsigned char *data, size_t len, const char *name,
			    GError **error);

/* The parser's stack as a consumer's claim() sees it: values
 * stack[0 .. depth), and marks[0 .. n_marks) the depths saved by the open
 * MARKs (a mark at depth m sits between stack[m-1] and stack[m]). */
typedef struct {
	CcaPickleValue *const *stack;
	size_t depth;
	const size_t *marks;
	size_t n_marks;
} CcaPickleStack;

/* The bytes [lo, hi) holding the nodes that are freed when a consume()
 * call returns. */
typedef struct {
	const void *lo, *hi;
} CcaPickleTransient;

/* TRUE when V lies in T (so V must not be remembered after consume()). */
static inline gboolean
cca_pickle_transient_has(const CcaPickleTransient *t, const void *v)
{
	return t != NULL && (const char *)v >= (const char *)t->lo &&
	       (const char *)v < (const char *)t->hi;
}

/* A consumer takes the items of chosen lists while they are parsed, so
 * that a huge list (a device trace) never has to sit in memory as nodes.
 * claim() is called before a MARK is pushed while the stack top is an
 * empty list; returning TRUE claims that list for the batch of items up
 * to the matching APPENDS.  consume() then receives those N items, fully
 * built, and must convert or copy what it needs: after it returns, the
 * nodes inside TRANSIENT are reused, so it must not keep pointers to them
 * (other nodes stay valid for the pickle's life).  The consumed items are
 * not stored in the list.  consume() returns FALSE with ERROR set to stop
 * the parse.  A batch the parser cannot handle this way (a MARK popped by
 * another opcode, an older container extended inside it) falls back to
 * ordinary parsing: its items are then stored in the list as usual, and no
 * further list is claimed. */
typedef struct {
	gboolean (*claim)(void *user, const CcaPickleStack *stack);
	gboolean (*consume)(void *user, const CcaPickleValue *list, CcaPickleValue *const *items,
			    size_t n, const CcaPickleTransient *transient, GError **error);
} CcaPickleConsumer;

/* cca_pickle_parse() with a CONSUMER (may be NULL) called with USER.  A
 * memo reference to a consumed item is refused (CCA_INPUT_ERROR_CORRUPT):
 * snapshots never share trace entries. */
CcaPickle *cca_pickle_parse_full(const unsigned char *data, size_t len, const char *name,
				 const CcaPickleConsumer *consumer, void *user, GError **error);

/* Told the offset POS the parse has reached. */
typedef void (*CcaPickleProgress)(void *user, size_t pos);

/* cca_pickle_parse_full() that also calls PROGRESS (may be NULL) with
 * PROGRESS_USER every few hundred KiB of input, so that the owner of the
 * input can drop the pages behind the parse (cca_input_advance()).  Str
 * nodes keep pointing into the input: pages dropped must read back the
 * same bytes if they are touched again. */
CcaPickle *cca_pickle_parse_progress(const unsigned char *data, size_t len, const char *name,
				     const CcaPickleConsumer *consumer, void *user,
				     CcaPickleProgress progress, void *progress_user,
				     GError **error);

/* A value graph made by hand rather than parsed (the Python module walks
 * a snapshot dict into one): an empty CcaPickle with no root, protocol 0.
 * Its containers have no offset (cca_pickle_offset() gives (size_t)-1). */
CcaPickle *cca_pickle_build_new(void);

/* A new node of PICKLE of TYPE: LEN is a str's byte count (set `s` with
 * cca_pickle_build_bytes()) or a container's item count (pairs for a
 * dict), whose items[] (2 * LEN for a dict) start NULL and must all be
 * set before the graph is read.  cca_pickle_n_nodes() then counts every
 * node and every item slot: the work a walk of the graph may take. */
CcaPickleValue *cca_pickle_build_node(CcaPickle *pickle, CcaPickleType type, uint32_t len);

/* A copy of the LEN bytes at S in PICKLE's arena (NUL-terminated). */
const char *cca_pickle_build_bytes(CcaPickle *pickle, const char *s, size_t len);

/* Makes ROOT (a node of PICKLE) the value cca_pickle_root() returns. */
void cca_pickle_build_set_root(CcaPickle *pickle, const CcaPickleValue *root);

/* Frees PICKLE and its whole graph; NULL is allowed. */
void cca_pickle_free(CcaPickle *pickle);

/* The object STOP returned; owned by PICKLE. */
const CcaPickleValue *cca_pickle_root(const CcaPickle *pickle);

/* The protocol of PICKLE's PROTO header (2..5). */
int cca_pickle_protocol(const CcaPickle *pickle);

/* Number of nodes made while parsing PICKLE (shared nodes count once;
 * nodes of consumed items count too, though they are gone). */
size_t cca_pickle_n_nodes(const CcaPickle *pickle);

/* Byte offset of the opcode that created the container VALUE (EMPTY_DICT,
 * TUPLE2, ...), for error messages; (size_t)-1 for scalars. */
size_t cca_pickle_offset(const CcaPickleValue *value);

/* Python's name for TYPE ("int", "str", "dict", ...), for messages. */
const char *cca_pickle_type_name(CcaPickleType type);

/* A dict key to look up, with a cache of the last key node it matched:
 * snapshots memoize their keys, so later lookups usually match by pointer
 * without comparing bytes.  Initialise with CCA_PICKLE_KEY("name"). */
typedef struct {
	const char *str;
	size_t len;
	const CcaPickleValue *hit; /* last matching key node, or NULL */
} CcaPickleKey;

#define CCA_PICKLE_KEY(literal)                      \
	{                                            \
		(literal), sizeof(literal) - 1, NULL \
	}

/* Returns the value stored under the str key KEY in DICT (the last one
 * when the key repeats), or NULL when DICT has no such key or is not a
 * dict.  Updates KEY's cache. */
const CcaPickleValue *cca_pickle_dict_get(const CcaPickleValue *dict, CcaPickleKey *key);

/* TRUE when VALUE is a str equal to the LEN bytes at STR. */
gboolean cca_pickle_str_equal(const CcaPickleValue *value, const char *str, size_t len);

/* Returns VALUE as Python's repr() would print it ("{'a': [1, 2.5]}"),
 * descending at most MAX_DEPTH containers ("..." below that).  For tests
 * and diagnostics.  Free with g_free(). */
char *cca_pickle_repr(const CcaPickleValue *value, int max_depth);


/* An open-addressing map from a node (by its address, never its content)
 * to a pointer-sized value: the parser's young containers to their
 * copies, the snapshot reader's nodes to table ids.  A zeroed map is
 * empty; free with cca_pickle_node_map_clear(). */
typedef struct {
	const void **keys; /* NULL: a free slot */
	uintptr_t *values;
	size_t cap; /* power of two, or 0 */
	size_t n;
} CcaPickleNodeMap;

static inline size_t
cca_pickle_node_map_slot(const CcaPickleNodeMap *m, const void *key)
{
	uint64_t h = (uint64_t)(uintptr_t)key * 0x9e3779b97f4a7c15ull;
	return (size_t)(h >> 32) & (m->cap - 1);
}

/* TRUE with *VALUE set when M holds KEY. */
static inline gboolean
cca_pickle_node_map_get(const CcaPickleNodeMap *m, const void *key, uintptr_t *value)
{
	if (m->n == 0)
		return FALSE;
	for (size_t i = cca_pickle_node_map_slot(m, key);; i = (i + 1) & (m->cap - 1)) {
		if (m->keys[i] == key) {
			*value = m->values[i];
			return TRUE;
		}
		if (m->keys[i] == NULL)
			return FALSE;
	}
}

/* Adds KEY (not NULL, not yet in M) with VALUE. */
void cca_pickle_node_map_put(CcaPickleNodeMap *m, const void *key, uintptr_t value);

/* Empties M, keeping its table for the next fill. */
void cca_pickle_node_map_reset(CcaPickleNodeMap *m);

/* Frees M's table and leaves it empty. */
void cca_pickle_node_map_clear(CcaPickleNodeMap *m);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(CcaPickle, cca_pickle_free)

G_END_DECLS

#endif
