/* snapshot_load.h - a snapshot from a file or bytes, whatever its format.
 *
 * The loader: opens the input (input.h), asks sniff.h what it is and runs
 * that format's reader (snapshot_pickle.c, trace.c, lab.c).  The model it
 * fills is snapshot.h's.
 */
#ifndef CCA_SNAPSHOT_LOAD_H
#define CCA_SNAPSHOT_LOAD_H

#include <glib.h>
#include <stddef.h>

#include "snapshot.h"

G_BEGIN_DECLS

/* Reads PATH, which may be a pickle or a ccasim msgpack trace, plain or
 * compressed with xz or gzip (detected from the first bytes, not the
 * name).  Returns a new snapshot or NULL with ERROR set to a one-line
 * message naming the file and the byte offset of the problem. */
CcaSnapshot *cca_snapshot_load(const char *path, GError **error);

/* cca_snapshot_load() of the LEN bytes at DATA (only read during the
 * call) instead of a file, NAME standing for the path in messages. */
CcaSnapshot *cca_snapshot_load_memory(const unsigned char *data, size_t len, const char *name,
				      GError **error);

/* cca_snapshot_load() for a snapshot that is only going to be written out
 * with cca_trace_write(), as `ccasim convert` does: a pickle's events are
 * kept encoded (cca_snapshot_pickle_load_with()'s COMPACT), which takes
 * less than half the memory and lets the writer copy them. */
CcaSnapshot *cca_snapshot_load_compact(const char *path, GError **error);

/* cca_snapshot_load() for a caller that reads each device's events in
 * order (a replay, or cca_event_cursor_hold()): a ccasim trace's events
 * are checked as a cursor decodes them rather than here
 * (cca_trace_load_input_streaming()), so the caller must call
 * cca_event_cursor_check() before it writes anything it found. */
CcaSnapshot *cca_snapshot_load_streaming(const char *path, GError **error);

G_END_DECLS

#endif
