/* report.h - replay results for people (tables) and machines (JSON). */
#ifndef CCA_REPORT_H
#define CCA_REPORT_H

#include <glib.h>
#include <jansson.h>
#include <stdbool.h>

#include "replay.h"
#include "settings.h"
#include "snapshot.h"

G_BEGIN_DECLS

/* What a report says about the run besides the result. */
typedef struct {
	const char *trace; /* path */
	int device;
	const CcaSettings *settings; /* the settings replayed */
	double memory_fraction;	     /* 0: none */
	uint64_t device_memory;	     /* totalGlobalMem used */
	bool device_memory_set;	     /* --device-memory given (a cap of its own) */
	const CcaSnapshot *snap;     /* the snapshot replayed, or NULL: whether it is
					newer than the rules applied */
} CcaReportContext;

/* Whether a failed --check of CTX's run may come from a cap the snapshot
 * cannot hold: true when neither a memory fraction nor a device memory
 * was given, and the snapshot is no ccasim-record dump (which holds every
 * fraction call the program made).  PyTorch does not record set_per_process_memory_fraction(),
 * so a trace recorded under one replays uncapped unless it is passed. */
bool cca_report_check_may_need_cap(const CcaReportContext *ctx);

/* The one-sentence advice for such a failure (no newline): that the cap is
 * not in the snapshot, and how to pass it. */
const char *cca_report_cap_hint(void);

/* The sentence that says what a window of a run (a trace that starts
 * mid-run) can and cannot tell (static). */
const char *cca_report_window_known(void);

/* The sentence that says what a what-if of a window of a run assumes
 * (static). */
const char *cca_report_window_assumes(void);

/* The note over the peaks of a window (explain, peak): they are the
 * window's own, not the run's. */
const char *cca_report_window_peaks(void);

/* The "window" key of a replay's JSON, which every command's --json of
 * the replay carries: null for a trace from the start, else {unknown_keys
 * (memory_stats keys the window cannot know), known
 * (cca_report_window_known()), for a what-if assumes
 * (cca_report_window_assumes()), start_reserved (the bytes the rebuilt
 * start reserves) and oom_before_window (true when they pass the cap or
 * the device: the program could not have reached the window)}. */
json_t *cca_report_window_json(const CcaReplayResult *res);

/* RESULT as a new JSON object: {"trace", "device", "settings", "notes"
 * (cca_settings_add_notes() of the settings replayed: [] when none),
 * "snapshot_newer_than_rules" (true when CTX's snapshot comes from a
 * PyTorch newer than the rules replayed), "snapshot_newer_note" (its one
 * line, or null), "snapshot_format_release" ("2.14": the lowest release
 * its format proves after 2.11, or null),
 * "whatif", "memory_stats" (all 122 keys; in a "window" of a run, those
 * it cannot determine null), "oom" (null or the first
 * unexpected OOM), "events", "check" (null unless --check; a failed check
 * that cca_report_check_may_need_cap() has a "hint"), ...}. */
json_t *cca_report_replay_to_json(const CcaReportContext *ctx, const CcaReplayResult *result);

/* Appends RESULT as a human summary: a line "  note: NOTE" for a snapshot
 * newer than the rules replayed and for each of
 * cca_settings_add_notes() of the settings replayed, peaks,
 * fragmentation, device calls, retries, OOMs (with a PyTorch-like OOM
 * message) and the check (a failed one followed by cca_report_cap_hint()
 * where it applies). */
void cca_report_replay_text(const CcaReportContext *ctx, const CcaReplayResult *result,
			    GString *out);

/* A one-line description of the settings of a replay: "recorded settings
 * \"CONF\"" or "what-if \"CONF\"", plus the cap, "recorded" when it is the
 * one given as the recording's (--recorded-memory-fraction), else
 * "what-if".  Free with g_free(). */
char *cca_report_settings_label(const CcaSnapshot *snap, const CcaReplayOptions *opt);

G_END_DECLS

#endif
