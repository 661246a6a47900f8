/* event_cursor.c - reading one device's events of a snapshot in trace
 * order: over snap->events[d] when the events are in memory, otherwise
 * through the streaming reader's stream_cursor_new hook (a ccasim trace
 * mapped from its file, or a pickle's events kept encoded).
 */
#include "config.h"

#include "event_cursor.h"

#include <string.h>

#include "snapshot.h"

struct CcaEventCursor {
	const CcaSnapshot *snap;
	GArray *events;		 /* in-memory events, or NULL when streamed */
	const CcaCursorOps *ops; /* streamed: the reader's functions */
	void *state;		 /* streamed: the reader's cursor */
	uint64_t position;	 /* events returned so far */
	gboolean done;
};

CcaEventCursor *
cca_event_cursor_new(const CcaSnapshot *snap, int device)
{
	g_return_val_if_fail(snap != NULL, NULL);
	g_return_val_if_fail(device >= 0 && device < snap->n_devices, NULL);
	CcaEventCursor *cursor = g_new0(CcaEventCursor, 1);
	cursor->snap = snap;
	if (snap->events != NULL && snap->events[device] != NULL) {
		cursor->events = snap->events[device];
		return cursor;
	}
	if (snap->stream_cursor_new != NULL)
		cursor->state = snap->stream_cursor_new(snap, device, &cursor->ops);
	if (cursor->state == NULL || cursor->ops == NULL) {
		g_free(cursor);
		return NULL;
	}
	return cursor;
}

gboolean
cca_event_cursor_next(CcaEventCursor *cursor, CcaEvent *out, GError **error)
{
	if (cursor->done)
		return FALSE;
	gboolean ok;
	if (cursor->events != NULL) {
		ok = cursor->position < cursor->events->len;
		if (ok)
			*out = g_array_index(cursor->events, CcaEvent, cursor->position);
	} else {
		ok = cursor->ops->next(cursor->state, out, error);
	}
	if (!ok) {
		cursor->done = TRUE;
		return FALSE;
	}
	cursor->position++;
	return TRUE;
}

guint
cca_event_cursor_next_many(CcaEventCursor *cursor, CcaEvent *out, guint n, GError **error)
{
	if (cursor->done || n == 0)
		return 0;
	guint got;
	if (cursor->events != NULL) {
		guint left = cursor->events->len - (guint)cursor->position;
		got = MIN(n, left);
		memcpy(out, &g_array_index(cursor->events, CcaEvent, cursor->position),
		       got * sizeof *out);
	} else if (cursor->ops->next_many != NULL) {
		got = cursor->ops->next_many(cursor->state, out, n, error);
	} else {
		for (got = 0; got < n && cursor->ops->next(cursor->state, &out[got], error); got++)
			;
	}
	cursor->position += got;
	if (got < n)
		cursor->done = TRUE;
	return got;
}

uint64_t
cca_event_cursor_position(const CcaEventCursor *cursor)
{
	return cursor->position;
}

void
cca_event_cursor_free(CcaEventCursor *cursor)
{
	if (cursor == NULL)
		return;
	if (cursor->state != NULL && cursor->ops != NULL && cursor->ops->free != NULL)
		cursor->ops->free(cursor->state);
	g_free(cursor);
}

gboolean
cca_event_cursor_check(const CcaSnapshot *snap, int upto, GError **error)
{
	if (snap->stream_check == NULL)
		return TRUE;
	for (int d = 0; d < upto && d < snap->n_devices; d++)
		if ((snap->events == NULL || snap->events[d] == NULL) &&
		    !snap->stream_check(snap, d, error))
			return FALSE;
	return TRUE;
}

gboolean
cca_event_cursor_hold(const CcaSnapshot *snap, int device, GError **error)
{
	g_return_val_if_fail(device >= 0 && device < snap->n_devices, FALSE);
	if (snap->events == NULL || snap->events[device] != NULL)
		return TRUE;
	if (!cca_event_cursor_check(snap, device, error))
		return FALSE;
	g_autoptr(CcaEventCursor) cursor = cca_event_cursor_new(snap, device);
	if (cursor == NULL)
		return TRUE; /* nothing to hold: cursors say so themselves */
	uint64_t n = snap->n_events[device];
	if (n > G_MAXUINT) /* a GArray's limit: they stay streamed */
		return cca_event_cursor_check(snap, device + 1, error);
	GArray *events = g_array_sized_new(FALSE, FALSE, sizeof(CcaEvent), (guint)n);
	g_array_set_size(events, (guint)n);
	GError *local = NULL;
	guint got = cca_event_cursor_next_many(cursor, (CcaEvent *)(void *)events->data, (guint)n,
					       &local);
	if (local != NULL || got != n) {
		g_array_unref(events);
		if (local != NULL)
			g_propagate_error(error, local);
		return local == NULL;
	}
	snap->events[device] = events;
	return TRUE;
}

gboolean
cca_event_cursor_hold_one(const CcaSnapshot *snap, int device, GError **error)
{
	if (device >= 0 && device < snap->n_devices && !cca_event_cursor_hold(snap, device, error))
		return FALSE;
	return cca_event_cursor_check(snap, snap->n_devices, error);
}

bool
cca_event_cursor_has_oom(const CcaSnapshot *snap, int device)
{
	g_autoptr(CcaEventCursor) c = cca_event_cursor_new(snap, device);
	CcaEvent ev;
	while (cca_event_cursor_next(c, &ev, NULL))
		if (ev.action == CCA_ACTION_OOM)
			return true;
	return false;
}
