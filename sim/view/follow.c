/* follow.c - which trace entry drives the model during a replay.
 *
 * Two cursors walk the trace beside the engine.  The driver cursor finds,
 * after each observed entry K, the first request entry after K (an
 * immediate free_completed, the engine's pop of a free_requested's
 * partner, is not one).  The match cursor steps through the trace in
 * lock-step with the model's own entries for as long as they agree (a
 * replay under the recorded settings reproduces the trace, so every model
 * entry then finds its own trace entry and metadata).
 *
 * Invariants: driver_index > last_observed once the driver was looked up;
 * indices only grow until a restart resets both cursors.
 */
#include "config.h"

#include "follow.h"

struct CcaFollow {
	const CcaSnapshot *snap;
	int device;
	int64_t last_observed; /* -1 before the first entry */
	/* driver cursor */
	CcaEventCursor *dcur;
	uint64_t dread; /* entries read from dcur */
	CcaEvent prev;	/* the entry read last */
	bool have_prev;
	CcaEvent driver;
	uint64_t driver_index;
	bool have_driver;
	bool at_end;
	/* match cursor */
	CcaEventCursor *mcur;
	CcaEvent peek;
	bool have_peek;
	bool matching;
};

static void
follow_reset(CcaFollow *f)
{
	if (f->dcur)
		cca_event_cursor_free(f->dcur);
	if (f->mcur)
		cca_event_cursor_free(f->mcur);
	f->dcur = cca_event_cursor_new(f->snap, f->device);
	f->mcur = cca_event_cursor_new(f->snap, f->device);
	f->last_observed = -1;
	f->dread = 0;
	f->have_prev = f->have_driver = f->at_end = false;
	f->have_peek = false;
	f->matching = true;
}

CcaFollow *
cca_follow_new(const CcaSnapshot *snap, int device)
{
	CcaFollow *f = g_new0(CcaFollow, 1);
	f->snap = snap;
	f->device = device;
	follow_reset(f);
	return f;
}

void
cca_follow_free(CcaFollow *f)
{
	if (!f)
		return;
	cca_event_cursor_free(f->dcur);
	cca_event_cursor_free(f->mcur);
	g_free(f);
}

gboolean
cca_follow_observed(CcaFollow *f, uint64_t index)
{
	if ((int64_t)index <= f->last_observed) {
		follow_reset(f);
		f->last_observed = (int64_t)index;
		return FALSE;
	}
	f->last_observed = (int64_t)index;
	return TRUE;
}

/* Is EV, read at INDEX right after PREV, an entry the engine acts on? */
static bool
is_request(const CcaFollow *f, const CcaEvent *ev)
{
	switch (ev->action) {
	case CCA_ACTION_ALLOC:
	case CCA_ACTION_FREE_REQUESTED:
	case CCA_ACTION_OOM:
		return true;
	case CCA_ACTION_FREE_COMPLETED:
		/* right after its free_requested: consumed with it */
		return !(f->have_prev && f->prev.action == CCA_ACTION_FREE_REQUESTED &&
			 f->prev.addr == ev->addr);
	default:
		return false;
	}
}

const CcaEvent *
cca_follow_driver(CcaFollow *f, uint64_t *index)
{
	while (!f->have_driver || (int64_t)f->driver_index <= f->last_observed) {
		if (f->at_end)
			return NULL;
		CcaEvent ev;
		if (!cca_event_cursor_next(f->dcur, &ev, NULL)) {
			f->at_end = true;
			return NULL;
		}
		uint64_t i = f->dread++;
		bool request = is_request(f, &ev);
		f->prev = ev;
		f->have_prev = true;
		if (request && (int64_t)i > f->last_observed) {
			f->driver = ev;
			f->driver_index = i;
			f->have_driver = true;
		}
	}
	if (index)
		*index = f->driver_index;
	return &f->driver;
}

static bool
same_entry(const CcaEvent *trace, const CcaEvent *model)
{
	if (trace->action != model->action || trace->size != model->size ||
	    trace->stream != model->stream)
		return false;
	return trace->action == CCA_ACTION_OOM || trace->addr == model->addr;
}

static void
copy_meta(CcaEvent *out, const CcaEvent *from)
{
	out->time_us = from->time_us;
	out->stack = from->stack;
	out->compile_context = from->compile_context;
	out->user_metadata = from->user_metadata;
}

void
cca_follow_annotate(CcaFollow *f, const CcaEvent *model, CcaEvent *out)
{
	*out = *model;
	if (f->matching && !f->have_peek) {
		while (cca_event_cursor_next(f->mcur, &f->peek, NULL))
			if (f->peek.action != CCA_ACTION_SNAPSHOT) {
				f->have_peek = true;
				break;
			}
	}
	if (f->matching && f->have_peek && same_entry(&f->peek, model)) {
		copy_meta(out, &f->peek);
		f->have_peek = false;
		return;
	}
	f->matching = false;
	const CcaEvent *driver = cca_follow_driver(f, NULL);
	if (driver)
		copy_meta(out, driver);
	else {
		out->time_us = CCA_TIME_NONE;
		out->stack = out->compile_context = out->user_metadata = CCA_ID_NONE;
	}
}

gboolean
cca_follow_matching(const CcaFollow *f)
{
	return f->matching;
}
