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

G_END_DECLS

#endif
