/* diff.h - two replays side by side: where their reserved memory parts.
 *
 * Two replays (one trace under two settings, or two traces) are compared
 * event by event on reserved bytes; at each run's reserved peak the
 * segments and the live blocks are grouped (segments by size, blocks by
 * requested size) so that the difference in the peak can be traced to
 * the segments and request sizes it comes from.
 */
#ifndef CCA_DIFF_H
#define CCA_DIFF_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "replay.h"
#include "snapshot.h"

G_BEGIN_DECLS

/* One group at the two peaks: segments of one size, or live blocks of one
 * requested size. */
typedef struct {
	uint64_t size;		   /* segment bytes, or requested bytes of a block */
	uint64_t count_a, count_b; /* segments or blocks */
	uint64_t bytes_a, bytes_b; /* their bytes (segment sizes, or block sizes) */
	uint64_t free_a, free_b;   /* segments: inactive bytes inside them */
} CcaDiffGroup;

/* One side of the comparison, at its reserved peak. */
typedef struct {
	CcaReplayResult result;	 /* the replay (stats, OOM) */
	uint64_t events_seen;	 /* trace entries the observer saw */
	uint64_t peak_event;	 /* first entry after which reserved was at its maximum */
	uint64_t peak_reserved;	 /* bytes reserved then */
	uint64_t peak_live;	 /* bytes of allocated and pending blocks then */
	uint64_t peak_free;	 /* bytes of inactive blocks (cached) then */
	uint64_t peak_segments;	 /* segments then */
	uint64_t final_reserved; /* after the last entry replayed */
} CcaDiffSide;

/* The comparison. */
typedef struct {
	CcaDiffSide a, b;
	bool differs;			 /* reserved bytes differ after some entry */
	uint64_t first_event;		 /* the first such entry (index in the trace) */
	uint64_t reserved_a, reserved_b; /* reserved after it */
	CcaEvent event_a;		 /* that entry of A's trace */
	bool have_event_b;		 /* B's trace has an entry there (read into EVENT_B) */
	CcaEvent event_b;
	GArray *segments; /* CcaDiffGroup by segment size, largest |bytes_b - bytes_a| first */
	GArray *requests; /* CcaDiffGroup by requested size of live blocks, same order */
	GPtrArray *notes; /* char *: cca_settings_add_notes() of A's and B's settings */
	/* Two recordings (not one trace under two settings): */
	bool two_traces;
	/* how alike their programs are: of the allocation requests, keyed by
	 * size and stream (streams numbered in order of first use), the share
	 * both traces make, min(count A, count B) summed over the keys over
	 * the larger trace's requests; 1 for one trace */
	double similarity;
	uint64_t requests_a, requests_b; /* allocation requests of each trace */
	/* Alignment by annotations: record_function START annotations that
	 * are not ccasim-record's ("ccasim:..."), such as ProfilerStep#N or
	 * Optimizer.step, paired by name and occurrence; each placed at the
	 * first trace entry at or after its time. */
	guint marks_a, marks_b;			   /* such annotations of each trace */
	guint marks_paired;			   /* pairs found in both */
	bool mark_differs;			   /* reserved differs at some pair */
	char *mark_name;			   /* the first such pair's name (owned) */
	guint mark_occurrence;			   /* its occurrence of that name, from 1 */
	uint64_t mark_event_a, mark_event_b;	   /* the entry each is placed at */
	uint64_t mark_reserved_a, mark_reserved_b; /* reserved just before it */
} CcaDiff;

/* Below this similarity two traces are said not to be runs of the same
 * program (diff warns). */
#define CCA_DIFF_SAME_PROGRAM 0.9

/* Replays device OPT_A->device of SNAP_A under OPT_A and device
 * OPT_B->device of SNAP_B under OPT_B (each twice: once for the reserved
 * timeline, once to take the state at the peak; their observer fields are
 * overwritten) and fills DIFF (clear it with cca_diff_clear()).  SNAP_A
 * may be SNAP_B.  Returns FALSE with ERROR on bad input only. */
gboolean cca_diff_run(const CcaSnapshot *snap_a, const CcaReplayOptions *opt_a,
		      const CcaSnapshot *snap_b, const CcaReplayOptions *opt_b, CcaDiff *diff,
		      GError **error);

/* Frees what DIFF holds and zeroes it; safe on a zeroed or cleared DIFF. */
void cca_diff_clear(CcaDiff *diff);

/* What the printers say besides the comparison. */
typedef struct {
	const char *label_a, *label_b; /* "trace, settings" of each side */
	guint top;		       /* groups listed (0: 10) */
} CcaDiffReport;

/* Appends the comparison for people (a line "note: NOTE" for each of
 * DIFF's notes after the two sides).  Two traces get a line on how alike
 * their programs are, "warning: ..." below CCA_DIFF_SAME_PROGRAM, and the
 * first annotation where reserved memory differs when they share
 * annotations. */
void cca_diff_print_text(const CcaDiff *diff, const CcaDiffReport *report, GString *out);

/* Appends one JSON object: "a", "b", "notes", "differs", "first_difference",
 * "peak_difference" with "segments" and "requests", "program" (two_traces,
 * similarity, same_program, requests_a, requests_b) and "annotations"
 * (marks_a, marks_b, paired, first_difference: null or {name, occurrence,
 * event_a, event_b, reserved_a, reserved_b}). */
void cca_diff_print_json(const CcaDiff *diff, const CcaDiffReport *report, GString *out);

G_END_DECLS

#endif
