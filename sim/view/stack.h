/* stack.h - a recorded call stack in one line, shared by the views
 * (explain.c, peak.c, stepview.c). */
#ifndef CCA_STACK_H
#define CCA_STACK_H

#include <glib.h>
#include <stdint.h>

#include "snapshot.h"

G_BEGIN_DECLS

/* Appends a one-line description of stack STACK of SNAP: the first frame
 * outside torch's own files (the call site) and the innermost frame, or
 * "(no frames)". */
void cca_stack_append(GString *out, const CcaSnapshot *snap, uint32_t stack);

/* Appends frame FRAME_ID of SNAP as "name (file:line)", the file without
 * its folders, name and file escaped for display (cca_text_display()). */
void cca_stack_append_frame(GString *out, const CcaSnapshot *snap, uint32_t frame_id);

G_END_DECLS

#endif
