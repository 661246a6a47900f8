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
#include "snapshot.h"

G_BEGIN_DECLS

#define CCA_TRACE_FORMAT "ccasim-trace" /* the header's "format" value */
#define CCA_TRACE_VERSION 1		/* the only version this code reads and writes */

/* Writes SNAP to PATH as a ccasim-trace (version CCA_TRACE_VERSION).
 * Events are read through cca_event_cursor_new(), so SNAP may be an
 * in-memory or a streamed snapshot (PATH may even be SNAP's own file).
 * The bytes go to a temporary "PATH.XXXXXX" in the same directory that is
 * renamed over PATH only when everything was written; on any failure the
 * temporary is removed, so no partial file is ever left.  Returns FALSE
 * with ERROR set (G_FILE_ERROR for I/O, CCA_INPUT_ERROR when SNAP holds an
 * id outside its tables or a cursor fails), naming PATH. */
gboolean cca_trace_write(const CcaSnapshot *snap, const char *path, GError **error);

/* Returns TRUE when the LEN bytes at DATA (a file's first bytes; a short
 * prefix is fine) start with a map whose first key is "format" with the
 * value "ccasim-trace".  Never reads past DATA + LEN. */
gboolean cca_trace_sniff(const unsigned char *data, size_t len);

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

/* The file SNAP was first read from: for a snapshot loaded from a trace,
 * the header's "source" (the pickle it was converted from) when it has
 * one; otherwise snap->source.  Borrowed; may be NULL. */
const char *cca_trace_origin(const CcaSnapshot *snap);

G_END_DECLS

#endif
