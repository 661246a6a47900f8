/* stepview.h - one trace entry at a time, for teaching (`ccasim step`).
 *
 * cca_stepview_describe() replays a trace up to one entry and writes what a
 * student needs to follow the allocator there: the entry, what the model
 * did for it and why, and the pools and segments afterwards (one text bar
 * per segment).  cca_stepview_index() finds the entries worth jumping to.
 */
#ifndef CCA_STEPVIEW_H
#define CCA_STEPVIEW_H

#include <glib.h>
#include <stdint.h>

#include "replay.h"
#include "snapshot.h"

G_BEGIN_DECLS

/* What a step view shows. */
typedef struct {
	uint64_t at;	    /* the trace entry (index) */
	guint max_segments; /* segments listed; 0: all */
	guint bar_width;    /* characters of a segment's bar (>= 8) */
} CcaStepParams;

/* Replays device OPTIONS->device of SNAP (hooks unset) up to entry
 * PARAMS->at and appends its step view to OUT.  The state shown is the
 * one after AT, or after the entry the engine handles AT with (a free and
 * its immediate free_completed are handled as one; a segment entry of the
 * recorded run is an output of the request after it, and shows the state
 * before that request).  Returns FALSE with ERROR on bad input or when AT
 * is past the trace's end. */
gboolean cca_stepview_describe(const CcaSnapshot *snap, const CcaReplayOptions *options,
			       const CcaStepParams *params, GString *out, GError **error);

/* Replays device OPTIONS->device of SNAP and appends to MALLOCS the
 * indices (uint64_t) of the requests that reserved memory (cudaMalloc or
 * map) and to OOMS those that ran out of memory, in order.  Either may be
 * NULL.  Returns FALSE with ERROR as cca_replay_run() does. */
gboolean cca_stepview_index(const CcaSnapshot *snap, const CcaReplayOptions *options,
			    GArray *mallocs, GArray *ooms, GError **error);

G_END_DECLS

#endif
