/* figures.h - the one definition of each headline figure of a replay.
 *
 * `replay`, `explain`, `plot`, `diff`, `peak` and the studies all name
 * the same moments and counts, defined here once (doc/figures.md):
 *   - the reserved peak: the first trace entry after which the bytes
 *     reserved are at their maximum over the replay (entries compared
 *     after the engine has handled each one, as its observer sees them);
 *   - the allocated peak: likewise for the bytes allocated;
 *   - unallocated at the reserved peak: reserved - allocated at the
 *     reserved peak (cached free bytes, and blocks the program freed that
 *     wait for another stream's events: PyTorch's allocated_bytes leaves
 *     them out);
 *   - segments at the reserved peak: the segments standing then, as
 *     _snapshot() lists them (a mapped run of an expandable segment is
 *     one);
 *   - peak segment count: PyTorch's segment.all.peak, the most cudaMalloc
 *     segments ever held at once since the last reset_peak_memory_stats()
 *     (expandable segments are not counted), which need not be at the
 *     reserved peak.
 * The engine keeps one CcaFigures in every CcaReplayResult; a view that
 * takes the state at a peak feeds its own CcaFigures from its observer
 * with the same function, so both name the same entry.
 */
#ifndef CCA_FIGURES_H
#define CCA_FIGURES_H

#include <glib.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "allocator.h"
#include "event.h"
#include "stats.h"

G_BEGIN_DECLS

/* The model's state after one trace entry. */
typedef struct {
	bool seen;	    /* some entry was handled */
	uint64_t index;	    /* the trace entry */
	int64_t time_us;    /* its time, CCA_TIME_NONE if absent */
	uint64_t reserved;  /* bytes reserved then */
	uint64_t allocated; /* bytes allocated then (allocated_bytes: pending frees left out) */
	uint64_t active;    /* bytes active then */
	uint64_t segments;  /* segments standing then (cca_allocator_segment_count()) */
} CcaMoment;

/* The two peak moments of a replay so far. */
typedef struct {
	CcaMoment reserved_peak;
	CcaMoment allocated_peak;
	/* the segment count last taken, and the device calls it was taken
	 * after (the count changes only with a cudaMalloc, cudaFree, map or
	 * unmap), with the reserved bytes then */
	bool counted;
	uint64_t count, count_device_calls, count_reserved;
} CcaFigures;

/* cca_figures_observe()'s answer: which peaks entry INDEX set. */
#define CCA_FIGURES_RESERVED_PEAK 1u
#define CCA_FIGURES_ALLOCATED_PEAK 2u

/* Names the figures carry everywhere (text and doc). */
#define CCA_FIGURES_LABEL_RESERVED_PEAK "reserved peak"
#define CCA_FIGURES_LABEL_ALLOCATED_PEAK "allocated peak"
#define CCA_FIGURES_LABEL_UNALLOCATED "unallocated at the reserved peak"
#define CCA_FIGURES_LABEL_SEGMENTS_AT_PEAK "segments at the reserved peak"
#define CCA_FIGURES_LABEL_PEAK_SEGMENT_COUNT "peak segment count"

/* Feeds the state ALLOC has after the engine handled trace entry INDEX
 * (EVENT): a new maximum of reserved (allocated) bytes, strictly greater
 * than every earlier entry's, makes INDEX the reserved (allocated) peak.
 * Call it from an observer, once per entry, in order.  Returns the
 * CCA_FIGURES_* bits of the peaks INDEX set (0: none), so that a view
 * takes its copy of the state exactly there.  Constant time. */
static inline unsigned cca_figures_observe(CcaFigures *figures, uint64_t index,
					   const CcaEvent *event, const CcaAllocator *alloc);

/* cca_figures_observe() at an entry that may have made a peak (the
 * inline test said so). */
unsigned cca_figures_take(CcaFigures *figures, uint64_t index, const CcaEvent *event,
			  const CcaAllocator *alloc);

static inline unsigned
cca_figures_observe(CcaFigures *figures, uint64_t index, const CcaEvent *event,
		    const CcaAllocator *alloc)
{
	/* called for every entry: only a new maximum needs the rest */
	const CcaStats *st = cca_allocator_stats(alloc);
	if (G_LIKELY(figures->reserved_peak.seen && figures->allocated_peak.seen &&
		     (uint64_t)st->reserved_bytes[CCA_STAT_ALL].current <=
			     figures->reserved_peak.reserved &&
		     (uint64_t)st->allocated_bytes[CCA_STAT_ALL].current <=
			     figures->allocated_peak.allocated))
		return 0;
	return cca_figures_take(figures, index, event, alloc);
}

/* Bytes reserved but not allocated at the reserved peak (0 before any
 * entry). */
uint64_t cca_figures_unallocated_at_reserved_peak(const CcaFigures *figures);

/* PyTorch's segment.all.peak of STATS: the peak segment count. */
uint64_t cca_figures_peak_segment_count(const CcaStats *stats);

/* The figures as a new JSON object: "reserved_peak" and "allocated_peak"
 * (each {"event", "time_us" (null if absent), "reserved", "allocated",
 * "active"}, "segments" in the reserved peak's, or null before any
 * entry), "unallocated_at_reserved_peak", "segments_at_reserved_peak",
 * and "peak_segment_count" from STATS (omitted when STATS is NULL). */
json_t *cca_figures_to_json(const CcaFigures *figures, const CcaStats *stats);

/* cca_figures_to_json() of a replay; in a WINDOW of a run (a trace that
 * starts mid-run) "peak_segment_count" is null, as segment.all.peak is:
 * the run before the window may have held more.  The moments are the
 * window's own. */
json_t *cca_figures_to_json_in(const CcaFigures *figures, const CcaStats *stats, bool window);

/* Appends the figures for people, one line each, starting with INDENT:
 * the two peaks with their entry, the unallocated bytes and the segments
 * at the reserved peak, and (when STATS is not NULL) the peak segment
 * count. Bytes are exact, followed by the size in binary units. */
void cca_figures_append_text(GString *out, const CcaFigures *figures, const CcaStats *stats,
			     const char *indent);

G_END_DECLS

#endif
