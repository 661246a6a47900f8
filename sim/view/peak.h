/* peak.h - what made the peak: the live blocks at each peak and OOM,
 * grouped by the code that allocated them.
 *
 * A peak observer rides along one replay (fed from its before_request,
 * observer and on_model_event hooks, as explain.h's explainer is) and
 * copies the allocator's state at the reserved peak, at the allocated
 * peak (figures.h: the first entry at which each maximum is reached) and
 * at every OOM, recorded or of the model.  Each live block keeps its
 * origin, the trace's alloc entry that made it (a what-if replays the
 * recorded requests, so a block's stack is its recorded alloc entry's);
 * each segment keeps the request that made it reserved (the alloc whose
 * malloc called cudaMalloc or mapped its pages).  The report groups the
 * live blocks of each moment by call stack, by the record_function
 * annotations open when they were allocated and by user metadata,
 * largest first, each grouping summing exactly to the bytes allocated
 * then; lists the free bytes stranded in each segment (for an OOM, why
 * they could not serve the failing request); and lists the requests that
 * created the segments standing then.
 */
#ifndef CCA_PEAK_H
#define CCA_PEAK_H

#include <glib.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "allocator.h"
#include "replay.h"
#include "snapshot.h"

G_BEGIN_DECLS

typedef struct CcaPeak CcaPeak;

/* The moments a peak observer keeps. */
typedef enum {
	CCA_PEAK_RESERVED = 0, /* the reserved peak */
	CCA_PEAK_ALLOCATED,    /* the allocated peak */
	CCA_PEAK_OOM,	       /* an OOM (recorded, or of the model) */
} CcaPeakKind;

/* The OOMs a peak observer keeps the state of (the first ones); the
 * others are counted. */
#define CCA_PEAK_MAX_OOMS 16

/* The group a block with no recorded stack (annotation, user metadata)
 * goes to. */
#define CCA_PEAK_NO_STACK "(no stack recorded)"
#define CCA_PEAK_NO_ANNOTATION "(no annotation open)"
#define CCA_PEAK_NO_METADATA "(no user metadata)"

/* Creates a peak observer of a replay of device DEVICE of SNAP (borrowed;
 * it must outlive the observer).  Free with cca_peak_free(). */
CcaPeak *cca_peak_new(const CcaSnapshot *snap, int device);

/* Frees PEAK; NULL is allowed. */
void cca_peak_free(CcaPeak *peak);

/* Feed from the replay's observer (same arguments): takes the state at a
 * new peak and after an OOM (a copy of every live block at each rise of a
 * peak: cca_peak_collect() copies once per moment). */
void cca_peak_observe(CcaPeak *peak, uint64_t index, const CcaEvent *event,
		      const CcaAllocator *alloc);

/* Feed from the replay's on_model_event hook (same arguments): the
 * origin of every block and segment, and the OOMs. */
void cca_peak_model_event(CcaPeak *peak, uint64_t cause, const CcaEvent *trace,
			  const CcaEvent *model);

/* For two replays of one run, as cca_peak_collect() makes them (the cost
 * linear in the live blocks): cca_peak_begin_find() before the first,
 * which then finds the moments (and counts the OOMs) without keeping
 * origins or copying any state; cca_peak_begin_take() after it returns
 * the stop_after for the second replay (0: no moment, none needed), in
 * which the peak copies the state at each moment found.  Feed both
 * replays as above. */
void cca_peak_begin_find(CcaPeak *peak);
uint64_t cca_peak_begin_take(CcaPeak *peak);

/* Replays device OPTIONS->device of SNAP (OPTIONS's hooks must be unset)
 * with a peak observer; returns it with the replay's result in *RESULT
 * (cleared by the caller with cca_replay_result_clear()), or NULL with
 * ERROR as cca_replay_run() does.  Two replays from one plan: the first
 * finds the moments and gives RESULT, the second, stopped after the last
 * moment, copies the state once at each, so the cost is linear in the
 * live blocks however often the peaks rise. */
CcaPeak *cca_peak_collect(const CcaSnapshot *snap, const CcaReplayOptions *options,
			  CcaReplayResult *result, GError **error);

/* The report of PEAK as a new JSON object: "figures" (figures.h, with
 * STATS's peak segment count when STATS is not NULL) and "moments", one
 * per moment kept: {"kind" ("reserved_peak", "allocated_peak", "oom"),
 * "event", "time_us", "reserved", "allocated" (bytes then), "live_blocks",
 * "groups" {"stack", "annotation", "user_metadata"}: arrays of {"key",
 * "bytes", "blocks"} largest first (and "frames" for a stack), each
 * summing to "allocated"; "free_segments": every segment holding free
 * bytes then, most free first, with "reason" for an OOM; "segments": every
 * segment standing then with "created_by" (its request, or null: made
 * before the trace); for an OOM "request" and "why"}, and "ooms" (all
 * counted). */
json_t *cca_peak_to_json(const CcaPeak *peak, const CcaStats *stats);

/* Appends the report of PEAK for people: at each moment the TOP largest
 * groups of each kind, the TOP segments with most free bytes (with the
 * reason for an OOM) and the TOP largest segments with the request that
 * made each. */
void cca_peak_append_text(GString *out, const CcaPeak *peak, guint top);

/* Appends the live blocks of PEAK's moment KIND (the first OOM for
 * CCA_PEAK_OOM) as folded stacks, one line "root;...;leaf BYTES" per
 * stack, largest first, as flamegraph.pl and speedscope read them.
 * Returns FALSE (appending nothing) when PEAK kept no such moment. */
gboolean cca_peak_append_folded(GString *out, const CcaPeak *peak, CcaPeakKind kind);

/* Appends what changes from A (e.g. the recorded settings) to B (a
 * what-if) for people: the figures of both and, at each one's reserved
 * peak, the TOP stack groups whose bytes differ most. */
void cca_peak_append_changes(GString *out, const CcaPeak *a, const CcaPeak *b, guint top);

/* The same as a new JSON object: {"figures": {"a", "b"}, "stack_groups":
 * [{"key", "bytes_a", "bytes_b"}] by |bytes_b - bytes_a|, largest first}. */
json_t *cca_peak_changes_to_json(const CcaPeak *a, const CcaPeak *b);

/* One run of `ccasim peak`: a replay with a peak observer. */
typedef struct {
	CcaReplayResult result;	  /* the replay's result */
	CcaPeak *peak;		  /* what the observer kept; NULL until collected */
	char *label;		  /* the settings replayed, for people (report.h) */
	uint32_t pytorch_version; /* the rules replayed (rules.h: maybe unvalidated) */
} CcaPeakRun;

/* Fills RUN (zeroed by the caller) with a replay of SNAP under OPTIONS
 * (its hooks unset) and its peak observer, as cca_peak_collect() does.
 * FALSE with ERROR as cca_replay_run(); clear RUN with
 * cca_peak_run_clear() either way. */
gboolean cca_peak_run_collect(CcaPeakRun *run, const CcaSnapshot *snap,
			      const CcaReplayOptions *options, GError **error);

/* Frees what RUN holds and zeroes it. */
void cca_peak_run_clear(CcaPeakRun *run);

/* The document `ccasim peak --json` prints, a new JSON object: for A alone
 * (B NULL) cca_peak_to_json() of A with "trace" (TRACE, the name as given),
 * "device" (DEVICE), "settings" (A's label) and "whatif"; with B (a replay
 * under other settings, --under) {"a": that of A, "b": that of B,
 * "changes": cca_peak_changes_to_json(A, B)}. */
json_t *cca_peak_run_to_json(const char *trace, int device, const CcaPeakRun *a,
			     const CcaPeakRun *b);

/* The figures PEAK's observer saw (figures.h). */
const CcaFigures *cca_peak_figures(const CcaPeak *peak);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(CcaPeak, cca_peak_free)

G_END_DECLS

#endif
