/* follow.c - the trace's metadata on the model's entries.
 *
 * One cursor steps through the trace in lock-step with the model's own
 * entries for as long as they agree (a replay under the recorded settings
 * reproduces the trace, so every model entry then finds its own trace
 * entry and metadata).  Once they part, the cursor is left alone and each
 * model entry takes the metadata of the trace entry that caused it, which
 * the engine names.
 *
 * Invariant: once matching is false it stays false, and the cursor is not
 * read again.
 */
#include "config.h"

#include "follow.h"
#include "event_cursor.h"

struct CcaFollow {
	CcaEventCursor *cursor;
	CcaEvent peek; /* the next trace entry to match, when have_peek */
	bool have_peek;
	bool matching;
};

CcaFollow *
cca_follow_new(const CcaSnapshot *snap, int device)
{
	CcaFollow *f = g_new0(CcaFollow, 1);
	f->cursor = cca_event_cursor_new(snap, device);
	f->matching = true;
	return f;
}

void
cca_follow_free(CcaFollow *f)
{
	if (!f)
		return;
	cca_event_cursor_free(f->cursor);
	g_free(f);
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
cca_follow_annotate(CcaFollow *f, const CcaEvent *trace, const CcaEvent *model, CcaEvent *out)
{
	*out = *model;
	if (f->matching && !f->have_peek) {
		while (cca_event_cursor_next(f->cursor, &f->peek, NULL))
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
	if (trace)
		copy_meta(out, trace);
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
