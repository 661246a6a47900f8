/* timing.h - bounds of a what-if's figures over stream timing.
 *
 * A block used on another stream (record_stream) is freed in two steps:
 * free_requested now, free_completed when the stream's events have
 * finished, which the next malloc's process_events (or a synchronisation)
 * sees.  When that is, is a race between CPU and GPU: the trace shows it
 * for the recorded run alone, and another run of the same program, the
 * same requests, can see each completion earlier or later.  A what-if of
 * such a trace is replayed under several completion timings
 * (CcaCompletion, replay.h), from the earliest PyTorch allows to none at
 * all before the model synchronises; each memory_stats() key that differs
 * between them is bounded by their least and greatest values
 * (doc/whatif.md, "Stream timing").  A what-if whose replay decided
 * something by device address alone is replayed under every address
 * model too (where the driver puts a segment is the driver's choice), and
 * the bounds hold those figures as well.
 */
#ifndef CCA_TIMING_H
#define CCA_TIMING_H

#include <glib.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "replay.h"

G_BEGIN_DECLS

/* The error of a study whose replay options' cancel flag was set. */
#define CCA_TIMING_ERROR (cca_timing_error_quark())
GQuark cca_timing_error_quark(void);
enum {
	CCA_TIMING_ERROR_CANCELLED,
};

/* One memory_stats() key whose value depends on the timing. */
typedef struct {
	char name[96]; /* "reserved_bytes.all.peak" */
	int64_t lo, hi;
	/* a timing that gave each (--completions' spelling: "earliest",
	 * "never", "random:2/5", ...) */
	char lo_timing[32], hi_timing[32];
} CcaTimingBound;

typedef struct {
	/* the what-if had frees deferred by record_stream: the timings were
	 * replayed; false: every figure is the trace's, no bounds */
	bool timed;
	uint64_t deferred_frees; /* of the replay under the recorded timing */
	guint scenarios;	 /* timings replayed, the recorded one included */
	/* the what-if took decisions by device address alone (ties between
	 * equal free blocks, the order of releases): it was replayed under
	 * every other address model too, whose figures the bounds hold */
	bool placed;
	uint64_t address_ties; /* of the replay under the recorded timing */
	guint address_models;  /* models replayed, the what-if's own included */
	GArray *bounds;	       /* CcaTimingBound, keys with lo < hi, in key order */
} CcaTiming;

/* Bounds the what-if OPTIONS of SNAP (planned: OPTIONS->plan set) over
 * stream timing and address placement, given BASE, its replay under the
 * recorded completions: nothing to do (OUT->timed and OUT->placed false)
 * when BASE is no what-if, or deferred no free and decided nothing by
 * address alone; else replays every other timing (OUT->timed) and every
 * other address model (OUT->placed) and fills OUT->bounds with the keys
 * that differ (BASE's values included).  Returns FALSE with ERROR on
 * bad input only; clear OUT with cca_timing_clear() either way. */
gboolean cca_timing_run(const CcaSnapshot *snap, const CcaReplayOptions *options,
			const CcaReplayResult *base, CcaTiming *out, GError **error);

void cca_timing_clear(CcaTiming *timing);

/* Whether the what-if OPTIONS of SNAP runs without running out of memory
 * under every completion timing cca_timing_run() replays, the recorded
 * one included: the timing most likely to run out ("never") first, and
 * none after the first that runs out.  *FITS is TRUE when all fit;
 * otherwise FAILED (32 bytes, or NULL) gets the --completions spelling
 * of the timing that ran out.  Returns FALSE with ERROR on bad input
 * only. */
gboolean cca_timing_all_fit(const CcaSnapshot *snap, const CcaReplayOptions *options,
			    gboolean *fits, char failed[32], GError **error);

/* The bound of memory_stats() key NAME, or NULL when it does not depend
 * on the timing. */
const CcaTimingBound *cca_timing_lookup(const CcaTiming *timing, const char *name);

/* OUT's bounds as {KEY: [lo, hi], ...}; null when OUT is not timed. */
json_t *cca_timing_to_json(const CcaTiming *timing);

/* Adds "bounds" (cca_timing_to_json()) and "bounds_timings"
 * (cca_timing_sources_to_json()) to DOC, a replay's report. */
void cca_timing_add_json(const CcaTiming *timing, json_t *doc);

/* Why the figures are uncertain, and each bound, one per line, appended
 * to OUT; nothing when OUT is not timed. */
void cca_timing_describe(const CcaTiming *timing, GString *out);

/* The timings of OUT's bounds as {KEY: [timing of lo, timing of hi]};
 * null when OUT is not timed. */
json_t *cca_timing_sources_to_json(const CcaTiming *timing);

/* Parses the replay option --completions WHEN ("recorded", "earliest",
 * "early:D", "lag:D", "sized:D", "random:M/SEED", "late:K", "never") into
 * OPTIONS; FALSE with ERROR on a bad value. */
gboolean cca_timing_parse(const char *when, CcaReplayOptions *options, GError **error);

G_END_DECLS

#endif
