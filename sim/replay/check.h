/* check.h - the checks of a trace's entries and final state, before the
 * model or the rewind sees them (doc/architecture.md, "The layers":
 * "every entry checked against what the model could survive").
 *
 * One entry on its own (cca_check_event(), its fast half inline), the
 * entries in order (a CcaTraceCheck walk: segments live, memory mapped
 * and unmapped so far) and a device's final segments
 * (cca_check_final_state()).  Used by the plan, the rewind and the replay.
 */
#ifndef CCA_CHECK_H
#define CCA_CHECK_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "input.h"
#include "pytorch.h"
#include "snapshot.h"

G_BEGIN_DECLS

/* The most bytes one request, block or segment of a trace may have:
 * 2^48 - 1; 256 TiB is a thousand times the largest device made (a 288 GB
 * accelerator).  A request rounds to at most 2^48 bytes, so no size
 * rounds to 0.  The model may hold at most CCA_REPLAY_MAX_RESERVED bytes
 * reserved at once, so no current or peak statistic nears 2^63 (the
 * cumulative ones saturate).  Larger figures are no recording of a real
 * program. */
#define CCA_REPLAY_MAX_BYTES ((UINT64_C(1) << 48) - 1)
#define CCA_REPLAY_MAX_RESERVED (UINT64_C(1) << 48)

/* The most bytes an `oom` entry's request may have: 2^62 - 1.  A program
 * may ask for more than any device holds and be refused (PyTorch's own
 * test_out_of_memory asks for 800 PB), and the trace records that
 * request as it was asked; it never becomes a block, so no statistic
 * adds it, and every rounding of it stays below 2^63. */
#define CCA_REPLAY_MAX_OOM_REQUEST ((UINT64_C(1) << 62) - 1)

/* The first address no entry may reach: the two top addresses are the
 * address map's markers (addrmap.h's MAP_TOMB and MAP_EMPTY). */
#define CCA_CHECK_ADDRESS_LIMIT (UINT64_MAX - 1)

/* Does EV carry an address (not an oom's device_free or a snapshot)? */
static inline bool
cca_check_event_has_address(const CcaEvent *ev)
{
	return ev->action != CCA_ACTION_OOM && ev->action != CCA_ACTION_SNAPSHOT;
}

/* Is EV, on its own, an entry the model can hold: a size below 2^48 (an
 * `oom` entry's request below 2^62: CCA_REPLAY_MAX_OOM_REQUEST), an
 * address range that neither holds a map marker nor wraps past 2^64, a
 * segment of some bytes, maps and unmaps of whole pages?  The fast half
 * of cca_check_event(), which says why when it is not. */
static inline bool
cca_check_event_in_range(const CcaEvent *ev)
{
	bool segment =
		ev->action >= CCA_ACTION_SEGMENT_ALLOC && ev->action <= CCA_ACTION_SEGMENT_UNMAP;
	bool pages = ev->action == CCA_ACTION_SEGMENT_MAP || ev->action == CCA_ACTION_SEGMENT_UNMAP;
	uint64_t max =
		ev->action == CCA_ACTION_OOM ? CCA_REPLAY_MAX_OOM_REQUEST : CCA_REPLAY_MAX_BYTES;
	return ev->size <= max &&
	       (!cca_check_event_has_address(ev) ||
		(ev->addr < CCA_CHECK_ADDRESS_LIMIT &&
		 ev->size <= CCA_CHECK_ADDRESS_LIMIT - ev->addr)) &&
	       (!segment || ev->size > 0) &&
	       (!pages || ((ev->addr | ev->size) & (CCA_EXPANDABLE_GRANULE - 1)) == 0);
}

/* Sets ERROR for free_requested entry INDEX of SNAP at ADDR, a block whose
 * free the trace had requested already and not completed. */
static inline void
cca_check_double_free_error(GError **error, const CcaSnapshot *snap, uint64_t index, uint64_t addr)
{
	g_set_error(error, CCA_INPUT_ERROR, CCA_INPUT_ERROR_CORRUPT,
		    "%s: event %" G_GUINT64_FORMAT
		    ": free_requested of the block at 0x%" G_GINT64_MODIFIER
		    "x, whose free was already requested and has not completed",
		    snap->source, index, addr);
}

/* Checks trace entry INDEX (EV) of SNAP on its own, before the model or
 * the rewind sees it: no address is 2^64-1 or 2^64-2 (the engine's map
 * markers), no size exceeds CCA_REPLAY_MAX_BYTES, no [addr, addr+size)
 * wraps past 2^64 (oom and snapshot entries carry no address), no
 * segment entry is of 0 bytes.  Returns
 * FALSE with ERROR (CCA_INPUT_ERROR_LIMIT) set to one line
 * "SOURCE: event INDEX: ..." otherwise.  Cheap: a few comparisons. */
gboolean cca_check_event(const CcaSnapshot *snap, const CcaEvent *ev, uint64_t index,
			 GError **error);

/* Checks the final segments of device DEVICE of SNAP: each of 1 to
 * CCA_REPLAY_MAX_BYTES bytes, not wrapping past 2^64, not overlapping another;
 * its blocks inside it, in order, not overlapping, at no marker address.
 * Returns FALSE with ERROR (CCA_INPUT_ERROR_CORRUPT) set to one line
 * "SOURCE: final segment I (0xADDR): ..." otherwise. */
gboolean cca_check_final_state(const CcaSnapshot *snap, int device, GError **error);

/* What the check of a trace's entries remembers: the trace's cudaMalloc
 * segments live at the point read so far (a segment_alloc over one of
 * them is refused), and the expandable memory it has mapped, and
 * unmapped, so far (ranges it has not touched are in neither: a
 * segment_map of mapped memory or a segment_unmap of unmapped memory is
 * refused). */
typedef struct {
	GArray *segments;	   /* LiveSegment, by address */
	GArray *mapped, *unmapped; /* LiveSegment, by address */
} CcaTraceCheck;

/* Starts a walk over a trace's entries: nothing live, mapped or unmapped. */
void cca_check_walk_init(CcaTraceCheck *c);

/* Frees what the walk C holds. */
void cca_check_walk_clear(CcaTraceCheck *c);

/* cca_check_walk_event() past its fast path: EV on its own
 * (cca_check_event()), then a segment entry against the walk. */
gboolean cca_check_walk_rest(CcaTraceCheck *w, const CcaSnapshot *snap, const CcaEvent *ev,
			     uint64_t index, GError **error);

/* Checks EV, trace entry INDEX of SNAP, as it is read: on its own
 * (cca_check_event()), a segment_alloc against the segments live then, a
 * segment_map/unmap against what the trace mapped and unmapped.  Returns
 * FALSE with ERROR (CCA_INPUT_ERROR) set to one line otherwise. */
static inline gboolean
cca_check_walk_event(CcaTraceCheck *w, const CcaSnapshot *snap, const CcaEvent *ev, uint64_t index,
		     GError **error)
{
	/* the common entries (alloc and the frees) in range: nothing more to
	 * check, and no call */
	if (G_LIKELY(ev->action <= CCA_ACTION_FREE_COMPLETED && cca_check_event_in_range(ev)))
		return TRUE;
	return cca_check_walk_rest(w, snap, ev, index, error);
}

G_END_DECLS

#endif
