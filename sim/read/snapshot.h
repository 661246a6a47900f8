/* snapshot.h - the one internal model of a PyTorch memory snapshot.
 *
 * Every input format (pickle from torch 2.0 to 2.11 and the keys later
 * releases add, and ccasim's own msgpack trace) is normalised into a
 * CcaSnapshot: recorded allocator settings, the final segment/block
 * state, string/frame/stack tables, per device the ordered trace events,
 * and what the snapshot holds of releases after 2.11 (CcaSnapshotNewer).
 * Frames and stacks are interned once; events refer to a stack by id.
 *
 * Events are reached through a CcaEventCursor so that a msgpack trace can
 * be streamed from a mapped file without materialising every event.
 */
#ifndef CCA_SNAPSHOT_H
#define CCA_SNAPSHOT_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "event.h"
#include "input.h"
#include "pytorch.h"
#include "settings.h" /* CcaRecordedSettings */

typedef struct CcaPickle CcaPickle;

G_BEGIN_DECLS

/* One block of a final segment, in address order. */
typedef struct {
	uint64_t address;
	uint64_t size;		 /* rounded block bytes */
	uint64_t requested_size; /* unrounded request (0 when unknown) */
	uint32_t stack;		 /* stack id of the block's frames */
	uint8_t state;		 /* CcaBlockState */
} CcaSnapBlock;

/* One final segment (one cudaMalloc, or one mapped run of an expandable
 * segment).  Its blocks are snap->blocks[first_block .. first_block+n_blocks). */
typedef struct {
	int32_t device;
	uint64_t address;
	uint64_t total_size;
	uint64_t allocated_size;
	uint64_t active_size;
	uint64_t requested_size;
	uint64_t stream;
	bool is_small; /* segment_type == "small" */
	bool is_expandable;
	int64_t pool_id[2];
	uint32_t stack;
	uint32_t first_block;
	uint32_t n_blocks;
} CcaSnapSegment;

/* One interned stack frame; name/filename are string ids. */
typedef struct {
	uint32_t name;
	uint32_t filename;
	int64_t line;
} CcaFrame;

/* One external annotation (record_function START/END). */
typedef struct {
	uint32_t stage; /* string id: "START"/"END" */
	uint32_t name;	/* string id */
	int32_t device;
	int64_t time_us;
} CcaAnnotation;

/* Distinct unknown key names a snapshot remembers (the rest are counted
 * in `unknown_more`). */
#define CCA_NEWER_MAX_NAMES 16

/* What a snapshot holds that PyTorch 2.11 never wrote (doc/trace-format.md
 * §11 says which release adds each key).  The reader keeps what helps
 * (per-entry pool ids, rendered metadata) and counts the rest, so that
 * `info` and `replay` can say the snapshot is newer than the rules they
 * apply.  Counts are 0, and the -1 fields -1, when the key is absent. */
typedef struct {
	uint64_t pool_id_entries;	 /* trace entries with `pool_id` (2.12+) */
	uint64_t annotate_entries;	 /* `annotate` entries, skipped: they change no state */
	uint64_t forward_frames;	 /* dicts with `forward_frames`, ignored */
	int64_t host_segments;		 /* items of top-level `host_segments`, -1 absent */
	int64_t host_bytes;		 /* their total_size summed (2.14+), -1 absent */
	int64_t host_traces;		 /* entries of top-level `host_traces`, -1 absent */
	int8_t trace_alloc_overflowed;	 /* allocator_settings key: -1 absent, 0, 1 */
	int64_t trace_alloc_max_entries; /* allocator_settings key, -1 absent */
	uint64_t rendered_metadata;	 /* user_metadata/compile_context not a str: rendered */
	uint32_t n_unknown;		 /* distinct unknown keys named below */
	char *unknown_name[CCA_NEWER_MAX_NAMES]; /* "segment.internal_metadata"; owned */
	uint64_t unknown_count[CCA_NEWER_MAX_NAMES];
	uint64_t unknown_more; /* occurrences of further unknown names */
} CcaSnapshotNewer;

/* Where the snapshot came from. */
typedef enum {
	CCA_FORMAT_PICKLE = 0,
	CCA_FORMAT_MSGPACK,
	CCA_FORMAT_LAB, /* a lab program run through the model (lab.h) */
} CcaFormat;

/* How a cursor over a streamed snapshot (events[d] == NULL) gets its
 * events: the reader that streams them supplies these.  `next` stores the
 * next event in *OUT and returns TRUE, or returns FALSE at the end (ERROR
 * unset) or on corrupt input (ERROR set); `next_many` (may be NULL) stores
 * up to N next events in OUT[] and returns how many, fewer than N only at
 * the end or before corrupt input (then ERROR set); `free` releases
 * STATE. */
typedef struct {
	gboolean (*next)(void *state, CcaEvent *out, GError **error);
	guint (*next_many)(void *state, CcaEvent *out, guint n, GError **error);
	void (*free)(void *state);
} CcaCursorOps;

typedef struct CcaSnapshot CcaSnapshot;
/* The normalised snapshot.  Tables are public and read-only for users. */
struct CcaSnapshot {
	CcaFormat format;
	char *source;	     /* path it was read from; owned */
	int pickle_protocol; /* 2..5 for pickles, 0 otherwise */
	CcaRecordedSettings settings;
	CcaSnapshotNewer newer; /* keys of releases after 2.11 */

	/* string table: strings[0] is "" (CCA_ID_NONE) */
	GPtrArray *strings; /* char* owned */
	/* frame table: frames->data[0] unused */
	GArray *frames; /* CcaFrame */
	/* stack table: stack i is stack_frames[stack_offsets[i] ..
	 * stack_offsets[i+1]) (frame ids); stack 0 is the empty stack */
	GArray *stack_offsets; /* uint32_t, n_stacks + 1 entries */
	GArray *stack_frames;  /* uint32_t frame ids */

	GArray *segments;    /* CcaSnapSegment, sorted by address */
	GArray *blocks;	     /* CcaSnapBlock */
	GArray *annotations; /* CcaAnnotation */

	int n_devices; /* length of device_traces */
	/* Per-device event arrays when events are held in memory (pickle
	 * input); NULL entries when the events stream from a mapped file. */
	GArray **events; /* [n_devices] of GArray<CcaEvent> */
	/* Per-device event counts (always filled). */
	uint64_t *n_events;

	/* private: the backing store of a streamed msgpack trace */
	void *stream_priv;
	void (*stream_priv_free)(void *);
	/* private: opens a streamed cursor over DEVICE's events; returns its
	 * state and sets *OPS.  Set by the reader that set stream_priv. */
	void *(*stream_cursor_new)(const CcaSnapshot *snap, int device, const CcaCursorOps **ops);
	/* private: decodes and checks every event of DEVICE, unless that was
	 * done; FALSE with ERROR naming the first bad one.  NULL when the
	 * reader checked every event before it returned the snapshot. */
	gboolean (*stream_check)(const CcaSnapshot *snap, int device, GError **error);
};

/* Builds a snapshot from the value graph PICKLE (made with
 * cca_pickle_build_new(), a snapshot dict as torch.cuda.memory._snapshot()
 * returns it), with every check cca_snapshot_pickle_load() makes; NAME
 * names it in messages ("NAME: device_traces[0][5]: ...", no offset).
 * The walk is bounded by cca_pickle_n_nodes() as a pickle's is by its
 * size, so shared containers and cycles cannot blow it up. */
CcaSnapshot *cca_snapshot_pickle_load_value(const CcaPickle *pickle, const char *name,
					    GError **error);

/* Builds a snapshot from the LEN bytes of a PyTorch memory-snapshot
 * pickle at DATA (protocol 2..5, any schema from torch 2.0 to 2.11, and
 * later ones: doc/trace-format.md §11).  NAME
 * names the input in error messages ("NAME: offset N: ...").  DATA is only
 * read during the call; the snapshot copies what it keeps.  Returns NULL
 * with ERROR (CCA_INPUT_ERROR) set on malformed, hostile or non-snapshot
 * input. */
CcaSnapshot *cca_snapshot_pickle_load(const unsigned char *data, size_t len, const char *name,
				      GError **error);

/* cca_snapshot_pickle_load(), choosing whether the trace entries are
 * converted while the pickle is parsed (STREAM, the default: their nodes
 * are recycled batch by batch) or from the complete value graph.  Both
 * give the same snapshot; the second exists to test that. */
CcaSnapshot *cca_snapshot_pickle_load_full(const unsigned char *data, size_t len, const char *name,
					   gboolean stream, GError **error);

/* cca_snapshot_pickle_load() with two options.  COMPACT keeps the trace
 * events encoded as a ccasim trace stores them (about 27 bytes an event,
 * against 64 in a CcaEvent) rather than in events[d], which stay NULL:
 * cursors decode them, as for a loaded trace, and cca_trace_write()
 * copies their bytes.  PROGRESS, when not NULL, is called with USER and
 * the offset the parse has reached every few hundred KiB (see
 * cca_pickle_parse_progress()). */
CcaSnapshot *cca_snapshot_pickle_load_with(const unsigned char *data, size_t len, const char *name,
					   gboolean compact,
					   void (*progress)(void *user, size_t pos), void *user,
					   GError **error);

/* Returns an empty snapshot owning its tables, for builders (readers,
 * tests).  Free with cca_snapshot_free(). */
CcaSnapshot *cca_snapshot_new(void);

/* Frees SNAP and everything it owns; NULL is allowed. */
void cca_snapshot_free(CcaSnapshot *snap);

/* Interns STR (LEN bytes, not NUL-terminated) in SNAP's string table and
 * returns its id.  Equal strings get the same id. */
uint32_t cca_snapshot_intern(CcaSnapshot *snap, const char *str, size_t len);

/* Returns the string of ID ("" for CCA_ID_NONE). */
const char *cca_snapshot_string(const CcaSnapshot *snap, uint32_t id);

/* Returns the number of stacks (including the empty stack 0). */
uint32_t cca_snapshot_n_stacks(const CcaSnapshot *snap);

/* Does SNAP hold a history to replay: a trace entry on some device?  A
 * snapshot taken without torch.cuda.memory._record_memory_history() (or
 * ccasim-record) has none: its device_traces are empty or missing, and
 * only the final segments remain.  Returns TRUE, or FALSE with ERROR
 * (CCA_INPUT_ERROR_NOT_SNAPSHOT) saying so in one line that names the
 * file, what it holds, and how to record a history. */
gboolean cca_snapshot_check_history(const CcaSnapshot *snap, GError **error);

/* Counts one occurrence of the unknown key NAME (LEN bytes, untrusted;
 * "kind.key", e.g. "segment.internal_metadata") in NEWER: the first
 * CCA_NEWER_MAX_NAMES distinct names are kept (truncated to 64 bytes),
 * further ones only counted. */
void cca_snapshot_newer_add_unknown(CcaSnapshotNewer *newer, const char *name, size_t len);

/* The lowest PyTorch release (212 = 2.12) that SNAP's format proves, from
 * the keys of later releases it holds, or 0 when nothing proves a release
 * after 2.11.  *KEY (may be NULL) is set to what proves it ("top-level
 * host_segments", static). */
uint32_t cca_snapshot_format_release(const CcaSnapshot *snap, const char **key);

/* One sentence (no newline) saying that SNAP comes from a PyTorch newer
 * than the RULES ccasim applies (211 = 2.11) and what shows it, or NULL
 * when its format proves no release after RULES.  Free with g_free(). */
char *cca_snapshot_newer_note(const CcaSnapshot *snap, uint32_t rules);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(CcaSnapshot, cca_snapshot_free)

G_END_DECLS

#endif
