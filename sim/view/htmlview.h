/* htmlview.h - one self-contained, offline HTML page of a replay: the
 * memory timeline of every run (zoom and pan, exact at any zoom), the
 * allocations under the mouse, the segment map at any event and a place
 * for the peak attribution.
 *
 * The page embeds its data compactly (varint deltas, gzip, base64) and
 * its own script and style: it loads nothing from the network.  The
 * series are kept whole as change points (an event where a value
 * changes); the page draws them through a min/max pyramid, one column
 * per pixel, so no peak narrower than a pixel is lost and zooming in
 * shows every step.  The model's block and segment events of the first
 * run are embedded as a log: the page rebuilds the segment map at any
 * event from it (applying the model's decisions, not deciding anything)
 * and shows for each allocation its size, stream, stack and annotation.
 */
#ifndef CCA_HTMLVIEW_H
#define CCA_HTMLVIEW_H

#include <glib.h>
#include <jansson.h>
#include <stdint.h>

#include "replay.h"
#include "snapshot.h"

G_BEGIN_DECLS

/* One run of the page: the first is the reference (its model events feed
 * the per-allocation views, the segment map and the hover), the others
 * what-ifs of the same snapshot, or other snapshots (the ranks of one
 * job), each with a log of its own. */
typedef struct {
	const char *label;	     /* legend: "recorded ..." or "what-if ..." */
	const CcaSettings *settings; /* NULL: the recorded ones */
	/* NULL: the page's snapshot and options; else another snapshot (a
	 * rank) replayed under OPT (NULL: the page's options), whose model
	 * events the page embeds too */
	const CcaSnapshot *snap;
	const CcaReplayOptions *opt;
	/* keys added to the run's object in the page's data (a what-if's
	 * "certainty", "bounds" and "bounds_timings", as replay --json has
	 * them); borrowed; NULL: none */
	json_t *extra;
} CcaHtmlviewRun;

/* The most runs one page holds. */
#define CCA_HTMLVIEW_MAX_RUNS 16

/* What a page holds. */
typedef struct {
	uint64_t n_events; /* trace entries of the device (longest run) */
	uint64_t peak_reserved[CCA_HTMLVIEW_MAX_RUNS]; /* bytes, per run */
	uint64_t log_records;			       /* model events embedded (all logs) */
	uint64_t data_bytes;			       /* the embedded data, compressed */
	uint64_t page_bytes;			       /* the whole file */
} CcaHtmlviewResult;

/* Replays device OPT->device of SNAP once per run of RUNS (1 <= N_RUNS <=
 * CCA_HTMLVIEW_MAX_RUNS; OPT's hooks must be unset; each run's settings
 * replace OPT->settings; a run with a snapshot of its own replays that)
 * and writes the page to PATH under TITLE.  PEAK_JSON, when not NULL, is
 * a JSON object (`ccasim peak --json`) shown in the page's peak section;
 * without it the section says how to get one.  The file is written to
 * PATH.XXXXXX as the replays go (memory is that of the live blocks and
 * the distinct stacks, not of the trace's length) and renamed over PATH
 * on success; on failure nothing is left.  Returns FALSE with
 * ERROR when a replay fails, PEAK_JSON is no JSON object or on I/O
 * errors. */
gboolean cca_htmlview_write(const CcaSnapshot *snap, const CcaReplayOptions *opt,
			    const CcaHtmlviewRun *runs, guint n_runs, const char *title,
			    const char *peak_json, const char *path, CcaHtmlviewResult *result,
			    GError **error);

G_END_DECLS

#endif
