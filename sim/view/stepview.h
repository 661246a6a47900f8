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
#include <stdbool.h>
#include <stdint.h>

#include "replay.h"
#include "snapshot.h"

G_BEGIN_DECLS

/* What a step view shows. */
typedef struct {
	uint64_t at;	    /* the trace entry (index) */
	guint max_segments; /* segments listed; 0: all */
	guint bar_width;    /* characters of a segment's bar (>= 8) */
	gboolean wide;	    /* the command's --wide: lines not fitted to COLUMNS */
} CcaStepParams;

/* Where a view of trace entry AT takes the allocator's state (`step
 * --at`, `plot --segments --at`): after AT when the observer hears of AT;
 * else, when the model does nothing between the last entry before AT the
 * observer heard of (LAST) and AT, after LAST: AT was then a segment entry
 * of the recorded run (an output of the request after it) or a release
 * of an empty_cache() burst (shown before the cache was emptied); else
 * after the first entry past AT the observer hears of (AT was handled
 * with it or with a request before it: a free and its immediate
 * free_completed).  Fed from a replay's before_request and observer hooks
 * and its end, each call says what to do with the state now. */
typedef enum {
	CCA_STEP_AT_WAIT = 0, /* nothing */
	CCA_STEP_AT_TAKE,     /* copy it, as after entry SHOWN: the answer */
	/* copy it, as after entry SHOWN, and hold it: a later KEEP makes it
	 * the answer, a later TAKE or HOLD replaces it; if neither comes, it
	 * is none */
	CCA_STEP_AT_HOLD,
	CCA_STEP_AT_KEEP, /* the copy held is the answer */
} CcaStepAtAction;

typedef struct {
	uint64_t at;
	uint64_t shown; /* the entry of the last TAKE or HOLD */
	/* private */
	uint64_t last; /* LAST, when have_last */
	bool have_last;
	bool request; /* a request came after LAST, at or before AT */
	bool held;    /* a copy after LAST is held */
	bool done;    /* the answer is known */
	/* the model released memory for a release entry at or before AT since
	 * the copy was held (an empty_cache() the program made there): the
	 * state after it, not the copy, is the answer */
	bool released;
} CcaStepAt;

/* Starts T for entry AT. */
void cca_stepview_at_init(CcaStepAt *t, uint64_t at);

/* Feed from before_request (its INDEX and EVENT); returns what to do. */
CcaStepAtAction cca_stepview_at_before(CcaStepAt *t, uint64_t index, const CcaEvent *event);

/* Feed from on_model_event (its CAUSE and the model's entry MODEL):
 * notes the releases of an empty_cache() at or before AT. */
void cca_stepview_at_model(CcaStepAt *t, uint64_t cause, const CcaEvent *model);

/* Feed from the observer (its INDEX); returns what to do. */
CcaStepAtAction cca_stepview_at_observe(CcaStepAt *t, uint64_t index);

/* Call once the replay has ended (on_finish) without an answer; returns
 * what to do.  A replay that stopped early (an OOM, a divergence) never
 * got to AT: a TAKE or KEEP here then means nothing. */
CcaStepAtAction cca_stepview_at_finish(CcaStepAt *t);

/* Replays device OPTIONS->device of SNAP once (hooks unset), up to entry
 * PARAMS->at, and appends its step view to OUT.  The state shown is the
 * one after AT, or after the entry the engine handles AT with (a free and
 * its immediate free_completed are handled as one; a segment entry of the
 * recorded run is an output of the request after it, and shows the state
 * before that request): see CcaStepAt.  Returns FALSE with ERROR on bad
 * input or when AT is past the trace's end. */
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
