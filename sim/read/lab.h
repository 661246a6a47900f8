/* lab.h - a lab program: a few lines of allocations, read as a trace.
 *
 * A lab is a small text file a learner writes to rerun an experiment
 * (doc/lab.md):
 *
 *   # ccasim lab
 *   settings expandable_segments:True
 *   alloc 16M x8
 *   free 2,4,6,8
 *   stream 1
 *   alloc 32M x4
 *   free all
 *   empty_cache
 *
 * and record_stream, fraction, a settings change mid-program, a MemPool
 * region (mempool N ... end, release_mempool N) and a graph capture
 * (capture S ... end).
 *
 * It has no recorded addresses, so the reader runs the program once
 * through the allocator model (under the lab's own settings, on a
 * simulated H200 with no cap) and keeps the entries the model records:
 * the trace is self-consistent, and every command takes it as it takes
 * a recorded trace (a what-if replays its requests under other
 * settings).
 */
#ifndef CCA_LAB_H
#define CCA_LAB_H

#include <glib.h>
#include <stdbool.h>
#include <stddef.h>

#include "sniff.h" /* CCA_LAB_MAGIC, cca_sniff_lab() */
#include "snapshot.h"

G_BEGIN_DECLS

/* Reads the lab program of LEN bytes at DATA, runs it through the model
 * and returns the snapshot of what it recorded: one device, its entries
 * (time_us = the entry's index), the final segments, and the lab's
 * settings as the recorded allocator_settings.  NAME names the input in
 * messages.  Returns NULL with ERROR (CCA_INPUT_ERROR) "NAME: line N:
 * ..." on a line that does not parse, a free of a tensor that is not
 * live, a request the simulated device cannot hold, or a program over
 * the limits (a million tensors, 2^40 bytes a request). */
CcaSnapshot *cca_lab_load(const unsigned char *data, size_t len, const char *name, GError **error);

/* The lab line that made EVENT ("lab line N: TEXT", its user_metadata in
 * a lab's trace), or NULL when EVENT came from no lab line.  Borrowed
 * from SNAP. */
const char *cca_lab_event_line(const CcaSnapshot *snap, const CcaEvent *event);

/* The first entry of DEVICE in SNAP that lab line LINE made, preferring
 * a request (alloc or oom) when REQUEST; TRUE with *INDEX set, or FALSE
 * with ERROR (CCA_INPUT_ERROR_CORRUPT) "line N made no trace entry ..."
 * naming the next line that did, or saying the trace is no lab's. */
gboolean cca_lab_find_line(const CcaSnapshot *snap, int device, uint64_t line, bool request,
			   uint64_t *index, GError **error);

G_END_DECLS

#endif
