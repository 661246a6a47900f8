/* trace_write.h - a snapshot written as a ccasim trace (doc/trace-format.md). */
#ifndef CCA_TRACE_WRITE_H
#define CCA_TRACE_WRITE_H

#include <glib.h>

#include "snapshot.h"
#include "event_cursor.h"

G_BEGIN_DECLS

/* Writes SNAP to PATH as a ccasim-trace (version CCA_TRACE_VERSION).
 * Events are read through cca_event_cursor_new(), so SNAP may be an
 * in-memory or a streamed snapshot (PATH may even be SNAP's own file).
 * The bytes go to a temporary "PATH.XXXXXX" in the same directory that is
 * renamed over PATH only when everything was written; on any failure the
 * temporary is removed, so no partial file is ever left.  Returns FALSE
 * with ERROR set (G_FILE_ERROR for I/O, CCA_INPUT_ERROR when SNAP holds an
 * id outside its tables or a cursor fails), naming PATH. */
gboolean cca_trace_write(const CcaSnapshot *snap, const char *path, GError **error);

G_END_DECLS

#endif
