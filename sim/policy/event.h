/* event.h - one trace entry of PyTorch's caching allocator.
 *
 * The types an event is made of (the action, the block states of a final
 * segment list, the entry itself) and their names (event.c), apart from
 * the snapshot reader that loads them (sim/read/snapshot.h, which
 * includes this header): the allocator policy (sim/policy/) owns them and
 * emits events without knowing about snapshots or readers.
 */
#ifndef CCA_EVENT_H
#define CCA_EVENT_H

#include <stddef.h>
#include <stdint.h>

/* Trace actions, in the order of PyTorch's TraceEntry::Action. */
typedef enum {
	CCA_ACTION_ALLOC = 0,
	CCA_ACTION_FREE_REQUESTED,
	CCA_ACTION_FREE_COMPLETED,
	CCA_ACTION_SEGMENT_ALLOC,
	CCA_ACTION_SEGMENT_FREE,
	CCA_ACTION_SEGMENT_MAP,
	CCA_ACTION_SEGMENT_UNMAP,
	CCA_ACTION_OOM,
	CCA_ACTION_SNAPSHOT,
	CCA_ACTION_COUNT
} CcaAction;

/* Block states in the final `segments` list. */
typedef enum {
	CCA_BLOCK_INACTIVE = 0,
	CCA_BLOCK_ACTIVE_ALLOCATED,
	CCA_BLOCK_ACTIVE_PENDING_FREE, /* also read from "active_awaiting_free" */
} CcaBlockState;

#define CCA_TIME_NONE INT64_MIN /* time_us absent (torch < 2.2) */
#define CCA_ID_NONE 0u		/* string/stack id meaning "absent" */

/* One trace entry.  Sizes and addresses are device bytes, never host
 * pointers.  For CCA_ACTION_OOM, `addr` holds the entry's `device_free`. */
typedef struct {
	uint64_t addr;		  /* block/segment address; device_free for oom */
	uint64_t size;		  /* bytes exactly as recorded (doc/trace-format.md §6) */
	uint64_t stream;	  /* int64(cudaStream_t) reinterpreted; 0 = legacy default */
	int64_t time_us;	  /* epoch microseconds, CCA_TIME_NONE if absent */
	uint32_t stack;		  /* stack-table id of `frames`, CCA_ID_NONE if none */
	uint32_t compile_context; /* string id, CCA_ID_NONE if absent */
	uint32_t user_metadata;	  /* string id, CCA_ID_NONE if absent */
	uint8_t action;		  /* CcaAction */
	uint8_t has_pool_id;	  /* pool_id key present (post-2.11) */
	int64_t pool_id[2];	  /* (0,0) default pool */
} CcaEvent;

/* Name of ACTION as PyTorch spells it ("alloc", "segment_free", ...). */
const char *cca_event_action_name(CcaAction action);

/* Parses a PyTorch action name; returns -1 when unknown. */
int cca_event_action_from_name(const char *name, size_t len);

/* Name of a block state as PyTorch spells it. */
const char *cca_event_block_state_name(CcaBlockState state);

/* Parses a block state name, accepting both "active_pending_free" and the
 * documented "active_awaiting_free"; returns -1 when unknown. */
int cca_event_block_state_from_name(const char *name, size_t len);

#endif
