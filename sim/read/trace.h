/* trace.h - ccasim's msgpack trace format (doc/trace-format.md): the
 * reader.
 *
 * A trace is a sequence of msgpack objects: a header map, the string,
 * frame and stack tables, the final segments, the annotations, then one
 * array of fixed-shape events per device.  The reader parses everything
 * but the events eagerly and streams the events straight from the file's
 * bytes.  The writer is trace_write.h; events kept encoded, trace_events.h.
 */
#ifndef CCA_TRACE_H
#define CCA_TRACE_H

#include <stddef.h>

#include "input.h"
#include "sniff.h" /* CCA_TRACE_FORMAT, cca_sniff_trace() */
#include "snapshot.h"

G_BEGIN_DECLS

#define CCA_TRACE_VERSION 1 /* the only version this code reads and writes */

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

/* cca_trace_load_input() for a caller that reads the events once, in
 * order, as a replay does: the events' shape, count and the end of the
 * file are checked here (and pool_id_entries counted), their fields only
 * as a cursor decodes them, so that each event is decoded once.  When the
 * header gives counts.pool_id_entries (doc/trace-format.md §2.2), the
 * last device with events is not walked at all: its cursor checks that
 * they end where the file's empty arrays after them begin and hold the
 * pool_ids the header leaves them.  A cursor then reports a bad event
 * ("PATH: offset N: ... (event I of device D)") when it gets to it;
 * cca_event_cursor_check() checks the events no cursor read to the end
 * and must succeed before the caller trusts the snapshot (reports
 * anything). */
CcaSnapshot *cca_trace_load_input_streaming(CcaInput *input, GError **error);

/* The file SNAP was first read from: for a snapshot loaded from a trace,
 * the header's "source" (the pickle it was converted from) when it has
 * one; otherwise snap->source.  Borrowed; may be NULL. */
const char *cca_trace_origin(const CcaSnapshot *snap);

G_END_DECLS

#endif
