/* trace.h - ccasim's msgpack trace format (doc/trace-format.md).
 *
 * A trace is a sequence of msgpack objects: a header map, the string,
 * frame and stack tables, the final segments, the annotations, then one
 * array of fixed-shape events per device.  The writer accepts any
 * CcaSnapshot; the reader parses everything but the events eagerly and
 * streams the events straight from the file's bytes.
 */
#ifndef CCA_TRACE_H
#define CCA_TRACE_H

#include <stddef.h>

#include "input.h"
#include "sniff.h" /* CCA_TRACE_FORMAT, cca_sniff_trace() */
#include "snapshot.h"

G_BEGIN_DECLS

#define CCA_TRACE_VERSION 1 /* the only version this code reads and writes */

/* Writes SNAP to PATH as a ccasim-trace (version CCA_TRACE_VERSION).
 * Events are read through cca_event_cursor_new(), so SNAP may be an
 * in-memory or a streamed snapshot (PATH may even be SNAP's own file).
 * The bytes go to a temporary "PATH.XXXXXX" in the same directory that is
 * renamed over PATH only when everything was written; on any failure the
 * temporary is removed, so no partial file is ever left.  Returns FALSE
 * with ERROR set (G_FILE_ERROR for I/O, CCA_INPUT_ERROR when SNAP holds an
 * id outside its tables or a cursor fails), naming PATH. */
gboolean cca_trace_write(const CcaSnapshot *snap, const char *path, GError **error);

/* Reads the ccasim-trace held by INPUT.  Always takes ownership of INPUT's
 * contents, on success and failure alike: they move into the snapshot's
 * stream_priv and *INPUT is zeroed, so a later cca_input_clear(INPUT) is
 * harmless.  The header, tables, segments and annotations are decoded
 * eagerly; every event is validated once here (shape, action, ids within
 * the tables, no trailing bytes) but not stored: events[d] is NULL for
 * every device and cursors decode the events from the bytes one at a
 * time.  snap->source is INPUT's path; snap->pickle_protocol is the
 * protocol of the pickle the trace was converted from (0 if none).
 * Returns NULL with ERROR (CCA_INPUT_ERROR) set to one line
 * "PATH: offset N: what (context)" on any malformed input. */
CcaSnapshot *cca_trace_load_input(CcaInput *input, GError **error);

/* One device's trace events encoded as a trace stores them (about 27
 * bytes an event for a typical trace, against sizeof(CcaEvent) == 64):
 * what a reader builds in place of a CcaEvent array when the snapshot is
 * only going to be written out.  cca_trace_write() copies these bytes as
 * they are, after checking the ids they hold against the tables. */
typedef struct CcaTraceEvents CcaTraceEvents;

/* A new empty store; free with cca_trace_events_free(). */
CcaTraceEvents *cca_trace_events_new(void);

/* Frees TE; NULL is allowed. */
void cca_trace_events_free(CcaTraceEvents *te);

/* Makes room for BYTES more bytes of events at once: a guess from the
 * input's size saves growing the store later.  Only address space: pages
 * never written cost no memory. */
void cca_trace_events_reserve(CcaTraceEvents *te, size_t bytes);

/* Appends EV (encoded as cca_trace_write() would encode it).  EV is not
 * checked here: its ids are, when the store is written or read. */
void cca_trace_events_add(CcaTraceEvents *te, const CcaEvent *ev);

/* The number of events in TE. */
uint64_t cca_trace_events_count(const CcaTraceEvents *te);

/* A new store holding the events of TE. */
CcaTraceEvents *cca_trace_events_copy(const CcaTraceEvents *te);

/* Makes EVENTS[0 .. snap->n_devices) SNAP's events, taking them (each
 * entry is set to NULL; a NULL entry counts as no events): snap->n_events
 * is set from them, snap->events[d] (if any) are freed and cursors decode
 * the stores, as for a loaded trace.  SNAP must not hold a streamed trace
 * already (stream_priv NULL). */
void cca_trace_events_attach(CcaSnapshot *snap, CcaTraceEvents **events);

/* The file SNAP was first read from: for a snapshot loaded from a trace,
 * the header's "source" (the pickle it was converted from) when it has
 * one; otherwise snap->source.  Borrowed; may be NULL. */
const char *cca_trace_origin(const CcaSnapshot *snap);

G_END_DECLS

#endif
