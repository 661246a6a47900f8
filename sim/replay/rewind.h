/* rewind.h - the allocator state at a trace's first event.
 *
 * A trace recorded with a bounded ring buffer, or switched on late, starts
 * with memory already in use: it frees blocks it never allocated and the
 * final `segments` hold blocks and segments no event created.  Reading the
 * trace against the final state tells which segments and live blocks
 * existed before its first event; the replay seeds the model with them.
 */
#ifndef CCA_REWIND_H
#define CCA_REWIND_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "settings.h"
#include "snapshot.h"

G_BEGIN_DECLS

/* Whether to rebuild the state at the trace's first event. */
typedef enum {
	CCA_REWIND_AUTO = 0, /* when the trace starts or frees like a mid-run trace */
	CCA_REWIND_ALWAYS,
	CCA_REWIND_NEVER,
} CcaRewind;


/* A segment that existed when the trace began. */
typedef struct {
	uint64_t address;
	uint64_t size;
	uint64_t stream;
	bool is_small;
	bool is_expandable;
	int64_t event; /* the trace entry that frees it; -1: a final segment */
} CcaStartSegment;

/* A block that was live (allocated or pending a deferred free) when the
 * trace began. */
typedef struct {
	uint64_t address;
	uint64_t size;		 /* block bytes (exact when still live at the end) */
	uint64_t requested_size; /* unrounded request */
	uint64_t stream;
	bool pending;	 /* freed, waiting for its stream events */
	bool size_exact; /* size read from the final state, not inferred */
} CcaStartBlock;

/* An expandable segment's address reservation in use at the start: its
 * mapped runs are the is_expandable CcaStartSegments of its pool and
 * stream. */
typedef struct {
	uint64_t base; /* lowest address the trace or the final state shows */
	uint64_t stream;
	bool is_small;
} CcaStartReservation;

typedef struct {
	bool mid_run;	      /* the trace does not start from an empty allocator */
	GArray *segments;     /* CcaStartSegment, by address (expandable: mapped runs) */
	GArray *reservations; /* CcaStartReservation */
	GArray *blocks;	      /* CcaStartBlock, by address */
	uint64_t live_bytes;  /* sum of block sizes */
	/* Expandable memory in use at the start that could not be rebuilt
	 * (the replay is then approximate). */
	bool has_expandable;
} CcaStartState;

/* Reads device DEVICE of SNAP and fills START.  Block sizes of blocks freed
 * during the trace are inferred from their request under SETTINGS and the
 * splitting rules (PyTorch's shouldSplit()).  Returns FALSE with ERROR on a read error
 * or a trace whose events contradict its final state. */
gboolean cca_rewind_start_state(const CcaSnapshot *snap, int device, const CcaSettings *settings,
				CcaStartState *start, GError **error);

void cca_rewind_start_state_clear(CcaStartState *start);

G_END_DECLS

#endif
