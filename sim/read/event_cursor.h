/* event_cursor.h - one device's events of a snapshot, in trace order,
 * whether they are in memory or stream from the reader that loaded them. */
#ifndef CCA_EVENT_CURSOR_H
#define CCA_EVENT_CURSOR_H

#include <glib.h>
#include <stdint.h>
#include <stdbool.h>

#include "event.h"
#include "snapshot.h"
#include "event_cursor.h"

G_BEGIN_DECLS

typedef struct CcaEventCursor CcaEventCursor;

/* Opens a cursor over device DEVICE's events (in trace order).  Works for
 * in-memory and streamed snapshots alike.  Free with
 * cca_event_cursor_free().  DEVICE must be in [0, n_devices) (NULL and a
 * critical warning otherwise); NULL too when a streamed snapshot's reader
 * cannot open one. */
CcaEventCursor *cca_event_cursor_new(const CcaSnapshot *snap, int device);

/* Stores the next event in *OUT and returns TRUE; returns FALSE at the end
 * (ERROR unset) or on corrupt input (ERROR set, naming file and offset). */
gboolean cca_event_cursor_next(CcaEventCursor *cursor, CcaEvent *out, GError **error);

/* Stores up to N next events of CURSOR in OUT[] and returns how many: N,
 * or fewer at the end (ERROR unset) or before an event that is corrupt
 * (ERROR set; the events before it are stored and counted).  The same
 * events, in the same order, as N calls of cca_event_cursor_next(). */
guint cca_event_cursor_next_many(CcaEventCursor *cursor, CcaEvent *out, guint n, GError **error);

/* Index of the next event the cursor will return. */
uint64_t cca_event_cursor_position(const CcaEventCursor *cursor);

void cca_event_cursor_free(CcaEventCursor *cursor);

/* Checks every event of devices [0, UPTO) of SNAP that no cursor has
 * checked yet (a snapshot from cca_snapshot_load_streaming() checks an
 * event when a cursor reads it), in file order; FALSE with ERROR naming
 * the first bad one, as the load would have.  TRUE at once for a snapshot
 * whose reader checked everything.  Safe to call from several threads. */
gboolean cca_event_cursor_check(const CcaSnapshot *snap, int upto, GError **error);

/* Decodes device DEVICE's events once into memory (snap->events[DEVICE],
 * sizeof(CcaEvent) bytes an event), for a caller that replays them many
 * times: cursors then copy them instead of decoding each again.  Checks
 * the devices before it first (cca_event_cursor_check()), so that a bad
 * event is named in file order.  Does nothing when they are in memory
 * already.  Not thread-safe: call it before the replays start.  FALSE
 * with ERROR on a bad event (nothing changed). */
gboolean cca_event_cursor_hold(const CcaSnapshot *snap, int device, GError **error);

/* For a study that replays device DEVICE of SNAP (from
 * cca_snapshot_load_streaming()) many times: holds DEVICE's events
 * (cca_event_cursor_hold(), when DEVICE is one of SNAP's) and checks every
 * other device's, so that SNAP is then as trusted as cca_snapshot_load()
 * leaves it, with the same error for a bad event, and each event was
 * decoded once.  FALSE with ERROR on a bad event. */
gboolean cca_event_cursor_hold_one(const CcaSnapshot *snap, int device, GError **error);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(CcaEventCursor, cca_event_cursor_free)

/* Whether device DEVICE of SNAP has an oom entry: a read of its entries,
 * no replay (false where they cannot be read). */
bool cca_event_cursor_has_oom(const CcaSnapshot *snap, int device);

G_END_DECLS

#endif
