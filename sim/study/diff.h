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
#include "timing.h"

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
	/* the bounds of a what-if's figures, as `replay` prints them
	 * (cca_timing_bound()); the state at the peak is the recorded
	 * timing's */
	CcaTiming timing;
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
 * overwritten), bounds each side that is a what-if (cca_timing_bound())
 * and fills DIFF (clear it with cca_diff_clear()).  SNAP_A
 * may be SNAP_B.  Returns FALSE with ERROR on bad input only. */
gboolean cca_diff_run(const CcaSnapshot *snap_a, const CcaReplayOptions *opt_a,
		      const CcaSnapshot *snap_b, const CcaReplayOptions *opt_b, CcaDiff *diff,
		      GError **error);

/* Frees what DIFF holds and zeroes it; safe on a zeroed or cleared DIFF. */
void cca_diff_clear(CcaDiff *diff);

/* A condition of `diff --fail-if` on the two replays (doc/whatif.md,
 * "Diff as a gate"): "oom" (B runs out of memory), or METRIC OP VALUE with
 * OP one of > >= < <= and VALUE one of
 *   [+|-]N%      the change from A to B, in percent of A's value;
 *   +N or -N     the change from A to B (B - A), a size for byte metrics;
 *   N            B's own value (a size for byte metrics). */
typedef enum {
	CCA_DIFF_GATE_B,       /* B's value */
	CCA_DIFF_GATE_CHANGE,  /* B - A */
	CCA_DIFF_GATE_PERCENT, /* (B - A) / A, in percent */
} CcaDiffGateKind;

typedef struct {
	char *text;	      /* as given, spaces trimmed (owned) */
	int metric;	      /* index of the metric; -1: "oom" */
	int op;		      /* '>', '<', 'G' (>=) or 'L' (<=) */
	CcaDiffGateKind kind; /* what VALUE is compared with */
	double value;	      /* the threshold */
} CcaDiffCondition;

/* A condition's outcome on a diff.  A side whose figures have bounds
 * (CcaDiffSide.timing) gives a range of the metric; the change is then a
 * range too (B's range minus A's: every run of each), and the condition
 * holds only when it holds at every end of that range, as sweep's "fits"
 * holds only when every timing fits. */
typedef struct {
	double a, b;   /* the metric of each side under the recorded timing (oom: 1 or 0) */
	double change; /* what the threshold was compared with */
	bool holds;
	/* a side's metric has bounds: the ranges below differ from the
	 * values above */
	bool bounded;
	double a_lo, a_hi, b_lo, b_hi, change_lo, change_hi;
	/* it holds at one end of the range but not at the other */
	bool depends;
	/* a side has bounds, but not of this metric (peak_live, peak_free,
	 * peak_segments, or a peak of a window): judged by the recorded
	 * timing's value alone */
	bool unbounded;
} CcaDiffVerdict;

/* Parses TEXT, one or more conditions separated by commas, appending each
 * to CONDITIONS (an array of CcaDiffCondition; free each with
 * cca_diff_condition_clear()).  FALSE with ERROR ("--fail-if 'X': why",
 * naming the metrics) on a bad condition, CONDITIONS as it was. */
gboolean cca_diff_conditions_parse(const char *text, GArray *conditions, GError **error);

/* Frees what CONDITION holds. */
void cca_diff_condition_clear(CcaDiffCondition *condition);

/* Evaluates CONDITION on DIFF into VERDICT; returns VERDICT->holds. */
bool cca_diff_condition_eval(const CcaDiffCondition *condition, const CcaDiff *diff,
			     CcaDiffVerdict *verdict);

/* What the printers say besides the comparison. */
typedef struct {
	const char *label_a, *label_b; /* "trace, settings" of each side */
	guint top;		       /* groups listed (0: 10) */
	/* --fail-if: the conditions and their verdicts (N_CONDITIONS each; 0:
	 * no gate) */
	const CcaDiffCondition *conditions;
	const CcaDiffVerdict *verdicts;
	guint n_conditions;
} CcaDiffReport;

/* Appends the comparison for people (a line "note: NOTE" for each of
 * DIFF's notes after the two sides, and with REPORT's conditions a last
 * part "gate:" with a line for each, "holds" or "does not hold", A's and
 * B's values and the change).  Two traces get a line on how alike
 * their programs are, "warning: ..." below CCA_DIFF_SAME_PROGRAM, and the
 * first annotation where reserved memory differs when they share
 * annotations. */
void cca_diff_print_text(const CcaDiff *diff, const CcaDiffReport *report, GString *out);

/* Appends one JSON object: "a", "b", "notes", "differs", "first_difference",
 * "gate" (null without conditions, else {"failed": any holds,
 * "conditions": [{condition, metric, a, b, change, holds}]}),
 * "peak_difference" with "segments" and "requests", "program" (two_traces,
 * similarity, same_program, requests_a, requests_b) and "annotations"
 * (marks_a, marks_b, paired, first_difference: null or {name, occurrence,
 * event_a, event_b, reserved_a, reserved_b}). */
void cca_diff_print_json(const CcaDiff *diff, const CcaDiffReport *report, GString *out);

G_END_DECLS

#endif
