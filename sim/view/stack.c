/* stack.c - a recorded call stack in one line (stack.h): the call site
 * (the first frame outside torch's own files) and the innermost frame.
 * Names and file names come from the trace: shown escaped and bounded
 * (cca_text_display()).
 */
#include "config.h"

#include <string.h>

#include "stack.h"
#include "text.h"

static bool
is_torch_file(const char *filename)
{
	return strstr(filename, "/torch/") != NULL || g_str_has_prefix(filename, "torch/");
}

void
cca_stack_append_frame(GString *out, const CcaSnapshot *snap, uint32_t frame_id)
{
	const CcaFrame *fr = &g_array_index(snap->frames, CcaFrame, frame_id);
	const char *file = cca_snapshot_string(snap, fr->filename);
	const char *base = strrchr(file, '/');
	/* names come from the trace: shown escaped and bounded */
	g_autofree char *name =
		cca_text_display(cca_snapshot_string(snap, fr->name), -1, CCA_TEXT_DISPLAY_MAX);
	g_autofree char *where = cca_text_display(base ? base + 1 : file, -1, CCA_TEXT_DISPLAY_MAX);
	g_string_append_printf(out, "%s (%s:%" G_GINT64_FORMAT ")", name, where, fr->line);
}

void
cca_stack_append(GString *out, const CcaSnapshot *snap, uint32_t stack)
{
	if (stack == CCA_ID_NONE || stack >= cca_snapshot_n_stacks(snap)) {
		g_string_append(out, "(no frames)");
		return;
	}
	uint32_t lo = g_array_index(snap->stack_offsets, uint32_t, stack);
	uint32_t hi = g_array_index(snap->stack_offsets, uint32_t, stack + 1);
	if (lo == hi) {
		g_string_append(out, "(no frames)");
		return;
	}
	uint32_t site = g_array_index(snap->stack_frames, uint32_t, lo);
	for (uint32_t i = lo; i < hi; i++) {
		uint32_t f = g_array_index(snap->stack_frames, uint32_t, i);
		const CcaFrame *fr = &g_array_index(snap->frames, CcaFrame, f);
		if (!is_torch_file(cca_snapshot_string(snap, fr->filename))) {
			site = f;
			break;
		}
	}
	cca_stack_append_frame(out, snap, site);
	uint32_t inner = g_array_index(snap->stack_frames, uint32_t, lo);
	if (inner != site) {
		g_string_append(out, " via ");
		cca_stack_append_frame(out, snap, inner);
	}
}
