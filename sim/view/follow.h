/* follow.h - which trace entry drives the model during a replay.
 *
 * The engine calls a replay's observer after each trace entry it handles
 * and its on_model_event hook for each entry the model records, but the
 * hook is not told which trace entry caused the model entry.  A follower,
 * fed the observer's indices, answers that: the model entries emitted
 * after observed entry K belong to the next request entry after K (the
 * "driver": an alloc, free_requested, deferred free_completed or oom).  It
 * also gives each model entry the trace's metadata (time_us, frames,
 * compile_context, user_metadata): the matching trace entry's while the
 * model reproduces the trace entry for entry, the driver's afterwards.
 */
#ifndef CCA_FOLLOW_H
#define CCA_FOLLOW_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "snapshot.h"

G_BEGIN_DECLS

typedef struct CcaFollow CcaFollow;

/* Creates a follower of device DEVICE's trace in SNAP (borrowed; must
 * outlive the follower).  Free with cca_follow_free(). */
CcaFollow *cca_follow_new(const CcaSnapshot *snap, int device);

void cca_follow_free(CcaFollow *follow);

/* Tells FOLLOW that the engine handled trace entry INDEX (call it from the
 * replay observer).  Returns FALSE when INDEX is not after the previous
 * one: the engine restarted the replay (a trace found to start mid-run),
 * and FOLLOW has reset itself to the trace's start. */
gboolean cca_follow_observed(CcaFollow *follow, uint64_t index);

/* The trace entry whose handling emits the model entries now arriving:
 * the first request entry after the last observed one.  Stores its index
 * in *INDEX (may be NULL).  Returns NULL past the trace's end.  The
 * pointer is valid until the next call on FOLLOW. */
const CcaEvent *cca_follow_driver(CcaFollow *follow, uint64_t *index);

/* Copies MODEL into *OUT and gives it the trace's time_us, stack,
 * compile_context and user_metadata: those of the next trace entry when
 * that entry is MODEL itself (same action, size, stream and address),
 * else those of the driver.  Once a model entry differs from the trace,
 * every later one takes the driver's.  Call once per model entry, in
 * order. */
void cca_follow_annotate(CcaFollow *follow, const CcaEvent *model, CcaEvent *out);

/* TRUE while every model entry so far matched the trace entry for entry. */
gboolean cca_follow_matching(const CcaFollow *follow);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(CcaFollow, cca_follow_free)

G_END_DECLS

#endif
