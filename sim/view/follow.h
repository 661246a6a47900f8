/* follow.h - the trace's metadata on the model's entries.
 *
 * The engine tells a replay's on_model_event hook which trace entry
 * caused each model entry (CcaReplayModelFunc); a follower gives each
 * model entry the trace's metadata (time_us, frames, compile_context,
 * user_metadata): the matching trace entry's while the model reproduces
 * the trace entry for entry, the cause's afterwards.
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

/* Frees FOLLOW; NULL is allowed. */
void cca_follow_free(CcaFollow *follow);

/* Copies MODEL into *OUT and gives it the trace's time_us, stack,
 * compile_context and user_metadata: those of the next trace entry when
 * that entry is MODEL itself (same action, size, stream and address),
 * else those of TRACE, the entry that caused MODEL (as the engine passes
 * it to on_model_event; NULL: none, and OUT gets no metadata).  Once a
 * model entry differs from the trace, every later one takes its cause's.
 * Call once per model entry, in order. */
void cca_follow_annotate(CcaFollow *follow, const CcaEvent *trace, const CcaEvent *model,
			 CcaEvent *out);

/* TRUE while every model entry so far matched the trace entry for entry. */
gboolean cca_follow_matching(const CcaFollow *follow);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(CcaFollow, cca_follow_free)

G_END_DECLS

#endif
