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
	/* the replay bounded was a what-if (false: a replay of the
	 * recording, whose figures are the trace's) */
	bool whatif;
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
 * when BASE is no what-if, OPTIONS->no_bounds is set, or BASE deferred no
 * free and decided nothing by address alone; else replays every other timing (OUT->timed) and every
 * other address model (OUT->placed) and fills OUT->bounds with the keys
 * that differ (BASE's values included).  Returns FALSE with ERROR on
 * bad input only; clear OUT with cca_timing_clear() either way. */
gboolean cca_timing_run(const CcaSnapshot *snap, const CcaReplayOptions *options,
			const CcaReplayResult *base, CcaTiming *out, GError **error);

void cca_timing_clear(CcaTiming *timing);

/* cca_timing_run() for a command that replays OPTIONS of SNAP for its own
 * view (explain, peak, diff, plot, view), so that it prints the bounds
 * `replay` prints: BASE, when not NULL, is its replay of OPTIONS under the
 * recorded completions (any observers; a replay of the recording ends it
 * at once); without it the what-if is replayed once here, counting its
 * decisions by address as `replay` does.  Plans when OPTIONS->plan is
 * NULL; calls no observer of OPTIONS.  OUT as cca_timing_run()'s; nothing
 * to do when OPTIONS asks for one completion timing (not
 * CCA_COMPLETION_RECORDED) or no_bounds.  Returns FALSE with ERROR on bad
 * input only; clear OUT with cca_timing_clear() either way. */
gboolean cca_timing_bound(const CcaSnapshot *snap, const CcaReplayOptions *options,
			  const CcaReplayResult *base, CcaTiming *out, GError **error);

/* What TIMING says of the figures of its replay: "recorded" (a replay of
 * the recording: the trace's figures), "bounded" (a what-if some of whose
 * memory_stats() keys differ between the timings or address models
 * replayed) or "what-if" (one whose figures are the same under all). */
const char *cca_timing_certainty(const CcaTiming *timing);

/* Why TIMING's headline figures (sensitivity.h's cca_sensitivity_figure_keys) are bounded,
 * in a few words ("stream timing", "address placement", "stream timing
 * and address placement"); NULL when none of them has bounds (other keys
 * may: cca_timing_certainty() says "bounded" then). */
const char *cca_timing_why(const CcaTiming *timing);

/* The headline figures of TIMING that have bounds, in words, appended to
 * OUT: "reserved peak 384.00 MiB .. 9.83 GiB, cudaMalloc 13 .. 282";
 * nothing when none has. */
void cca_timing_append_headline_ranges(const CcaTiming *timing, GString *out);

/* Adds "certainty" (cca_timing_certainty()), "bounds" and
 * "bounds_timings" (cca_timing_add_json()) to DOC, the JSON of one run of
 * a command other than replay (peak, diff, plot, view). */
void cca_timing_add_run_json(const CcaTiming *timing, json_t *doc);

/* For a command that prints the recorded timing's figures first and
 * their bounds at the end (explain): one line saying so, appended to
 * OUT; nothing when TIMING has no bounds. */
void cca_timing_describe_lead(const CcaTiming *timing, GString *out);

/* The range of byte key NAME as "LO .. HI" in binary units
 * (cca_size_format()), or VALUE's size when it has no bound; a new
 * string. */
char *cca_timing_format_bytes(const CcaTiming *timing, const char *name, uint64_t value);

/* cca_timing_describe() of the keys KEYS (NULL-terminated; NULL: all)
 * alone: the same reasons and the same lines, for a command that shows
 * some figures; nothing when OUT is not timed or placed. */
void cca_timing_describe_keys(const CcaTiming *timing, const char *const *keys, GString *out);

/* cca_timing_describe_keys() of the headline figures (sensitivity.h's
 * cca_sensitivity_figure_keys), for a command
 * that shows those figures (nothing when none of them has bounds); with
 * STATE (it shows the blocks or segments
 * of a moment too) a last line says that the bounds are of the figures
 * alone, not of that state. */
void cca_timing_describe_headline(const CcaTiming *timing, bool state, GString *out);

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
