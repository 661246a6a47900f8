/* snapshot.h - the one internal model of a PyTorch memory snapshot.
 *
 * Every input format (pickle from torch 2.0 to 2.11, and ccasim's own
 * msgpack trace) is normalised into a CcaSnapshot: recorded allocator
 * settings, the final segment/block state, string/frame/stack tables and,
 * per device, the ordered trace events.  Frames and stacks are interned
 * once; events refer to a stack by id.
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
#include "pytorch.h"

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

/* The recorded `allocator_settings` (torch >= 2.3); `present` is false
 * when the snapshot has none. */
typedef struct CcaRecordedSettings {
	bool present;
	char *conf;		/* PYTORCH_CUDA_ALLOC_CONF string, "" when unset; owned */
	int64_t max_split_size; /* bytes, -1 = unlimited */
	double garbage_collection_threshold;
	bool expandable_segments;
	int64_t pinned_num_register_threads;
	bool release_lock_on_cudamalloc;
	bool pinned_use_cuda_host_register;
	bool graph_capture_record_stream_reuse;
	bool has_graph_capture_record_stream_reuse;
	uint32_t roundup_power2_divisions[CCA_ROUNDUP_INTERVALS]; /* index i = sizes [2^(20+i),
								     2^(21+i)) */
} CcaRecordedSettings;

/* Where the snapshot came from. */
typedef enum {
	CCA_FORMAT_PICKLE = 0,
	CCA_FORMAT_MSGPACK,
} CcaFormat;

typedef struct CcaSnapshot CcaSnapshot;
typedef struct CcaEventCursor CcaEventCursor;

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

/* The normalised snapshot.  Tables are public and read-only for users. */
struct CcaSnapshot {
	CcaFormat format;
	char *source;	     /* path it was read from; owned */
	int pickle_protocol; /* 2..5 for pickles, 0 otherwise */
	CcaRecordedSettings settings;

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
};

/* Reads PATH, which may be a pickle or a ccasim msgpack trace, plain or
 * compressed with xz or gzip (detected from the first bytes, not the
 * name).  Returns a new snapshot or NULL with ERROR set to a one-line
 * message naming the file and the byte offset of the problem. */
CcaSnapshot *cca_snapshot_load(const char *path, GError **error);

/* Builds a snapshot from the LEN bytes of a PyTorch memory-snapshot
 * pickle at DATA (protocol 2..5, any schema from torch 2.0 to 2.11).  NAME
 * names the input in error messages ("NAME: offset N: ...").  DATA is only
 * read during the call; the snapshot copies what it keeps.  Returns NULL
 * with ERROR (CCA_INPUT_ERROR) set on malformed, hostile or non-snapshot
 * input. */
CcaSnapshot *cca_snapshot_load_pickle(const unsigned char *data, size_t len, const char *name,
				      GError **error);

/* cca_snapshot_load_pickle(), choosing whether the trace entries are
 * converted while the pickle is parsed (STREAM, the default: their nodes
 * are recycled batch by batch) or from the complete value graph.  Both
 * give the same snapshot; the second exists to test that. */
CcaSnapshot *cca_snapshot_load_pickle_full(const unsigned char *data, size_t len, const char *name,
					   gboolean stream, GError **error);

/* cca_snapshot_load_pickle() with two options.  COMPACT keeps the trace
 * events encoded as a ccasim trace stores them (about 27 bytes an event,
 * against 64 in a CcaEvent) rather than in events[d], which stay NULL:
 * cursors decode them, as for a loaded trace, and cca_trace_write()
 * copies their bytes.  PROGRESS, when not NULL, is called with USER and
 * the offset the parse has reached every few hundred KiB (see
 * cca_pickle_parse_progress()). */
CcaSnapshot *cca_snapshot_load_pickle_with(const unsigned char *data, size_t len, const char *name,
					   gboolean compact,
					   void (*progress)(void *user, size_t pos), void *user,
					   GError **error);

/* cca_snapshot_load() for a snapshot that is only going to be written out
 * with cca_trace_write(), as `ccasim convert` does: a pickle's events are
 * kept encoded (cca_snapshot_load_pickle_with()'s COMPACT), which takes
 * less than half the memory and lets the writer copy them. */
CcaSnapshot *cca_snapshot_load_compact(const char *path, GError **error);

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

/* Name of ACTION as PyTorch spells it ("alloc", "segment_free", ...). */
const char *cca_action_name(CcaAction action);

/* Parses a PyTorch action name; returns -1 when unknown. */
int cca_action_from_name(const char *name, size_t len);

/* Name of a block state as PyTorch spells it. */
const char *cca_block_state_name(CcaBlockState state);

/* Parses a block state name, accepting both "active_pending_free" and the
 * documented "active_awaiting_free"; returns -1 when unknown. */
int cca_block_state_from_name(const char *name, size_t len);

/* Opens a cursor over device DEVICE's events (in trace order).  Works for
 * in-memory and streamed snapshots alike.  Free with
 * cca_event_cursor_free().  DEVICE must be in [0, n_devices) (NULL and a
 * critical warning otherwise); NULL too when a streamed snapshot's reader
 * cannot open one. */
CcaEventCursor *cca_event_cursor_new(const CcaSnapshot *snap, int device);

/* Stores the next event in *OUT and returns TRUE; returns FALSE at the end
 * (ERROR unset) or on corrupt input (ERROR set, naming file and offset). */
gboolean cca_event_cursor_next(CcaEventCursor *cursor, CcaEvent *out, GError **error);

/* Stores up to N next events of CURSOR in OUT[] and returns how many: N,
 * or fewer at the end (ERROR unset) or before an event that is corrupt
 * (ERROR set; the events before it are stored and counted).  The same
 * events, in the same order, as N calls of cca_event_cursor_next(). */
guint cca_event_cursor_next_many(CcaEventCursor *cursor, CcaEvent *out, guint n, GError **error);

/* Index of the next event the cursor will return. */
uint64_t cca_event_cursor_position(const CcaEventCursor *cursor);

void cca_event_cursor_free(CcaEventCursor *cursor);

/* Error domain for all input problems. */
#define CCA_INPUT_ERROR (cca_input_error_quark())
GQuark cca_input_error_quark(void);

typedef enum {
	CCA_INPUT_ERROR_IO,	      /* cannot open/read/decompress */
	CCA_INPUT_ERROR_TRUNCATED,    /* input ends early */
	CCA_INPUT_ERROR_CORRUPT,      /* malformed bytes */
	CCA_INPUT_ERROR_FORBIDDEN,    /* pickle opcode that would execute code */
	CCA_INPUT_ERROR_NOT_SNAPSHOT, /* well-formed but not a memory snapshot */
	CCA_INPUT_ERROR_LIMIT,	      /* absurd counts or sizes */
} CcaInputError;

G_DEFINE_AUTOPTR_CLEANUP_FUNC(CcaSnapshot, cca_snapshot_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC(CcaEventCursor, cca_event_cursor_free)

G_END_DECLS

#endif
