/* check.c - a trace's entries and final state checked against what the
 * model can hold (check.h), before the model or the rewind sees them.
 *
 * Invariant: an entry this file accepts has an address below
 * CCA_CHECK_ADDRESS_LIMIT (so never an address map's marker), a size the
 * statistics cannot overflow with (CCA_REPLAY_MAX_BYTES), and an address
 * range that does not wrap; a walk also refuses a segment_alloc over a
 * live segment and a map of mapped (an unmap of unmapped) memory.
 */
#include "config.h"

#include <stdarg.h>
#include <string.h>

#include "addrmap.h"
#include "check.h"

G_STATIC_ASSERT(CCA_CHECK_ADDRESS_LIMIT == MAP_TOMB);

gboolean
cca_check_event(const CcaSnapshot *snap, const CcaEvent *ev, uint64_t index, GError **error)
{
	if (G_LIKELY(cca_check_event_in_range(ev)) || ev->action == CCA_ACTION_SNAPSHOT)
		return TRUE;
	bool segment =
		ev->action >= CCA_ACTION_SEGMENT_ALLOC && ev->action <= CCA_ACTION_SEGMENT_UNMAP;
	bool pages = ev->action == CCA_ACTION_SEGMENT_MAP || ev->action == CCA_ACTION_SEGMENT_UNMAP;
	const char *what;
	if (segment && ev->size == 0)
		what = "a segment of 0 bytes";
	else if (pages && ((ev->addr | ev->size) & (CCA_EXPANDABLE_GRANULE - 1)) != 0)
		what = "expandable segments map whole 2 MiB pages at 2 MiB boundaries";
	else if (ev->action == CCA_ACTION_OOM)
		what = "a request of 4 EiB (2^62 bytes) or more, past what any size rounds to";
	else if (ev->size > CCA_REPLAY_MAX_BYTES)
		what = "its size is 256 TiB (2^48 bytes) or more, larger than any device";
	else if (ev->addr >= CCA_CHECK_ADDRESS_LIMIT)
		what = "its address is 2^64-1 or 2^64-2, which no device memory has";
	else
		what = "its address range wraps past 2^64";
	g_set_error(error, CCA_INPUT_ERROR, CCA_INPUT_ERROR_LIMIT,
		    "%s: event %" G_GUINT64_FORMAT ": %s of %" G_GUINT64_FORMAT
		    " bytes at 0x%" G_GINT64_MODIFIER "x: %s",
		    snap->source, index, cca_event_action_name(ev->action), ev->size, ev->addr,
		    what);
	return FALSE;
}

static gint
segment_index_order(gconstpointer a, gconstpointer b, gpointer data)
{
	const GArray *segs = data;
	uint64_t x = g_array_index(segs, CcaSnapSegment, *(const guint *)a).address;
	uint64_t y = g_array_index(segs, CcaSnapSegment, *(const guint *)b).address;
	return x < y ? -1 : x > y;
}

static gboolean final_state_error(const CcaSnapshot *snap, guint i, GError **error, const char *fmt,
				  ...) G_GNUC_PRINTF(4, 5);

static gboolean
final_state_error(const CcaSnapshot *snap, guint i, GError **error, const char *fmt, ...)
{
	va_list args;
	va_start(args, fmt);
	g_autofree char *what = g_strdup_vprintf(fmt, args);
	va_end(args);
	const CcaSnapSegment *s = &g_array_index(snap->segments, CcaSnapSegment, i);
	g_set_error(error, CCA_INPUT_ERROR, CCA_INPUT_ERROR_CORRUPT,
		    "%s: final segment %u (0x%" G_GINT64_MODIFIER "x, %" G_GUINT64_FORMAT
		    " bytes): %s",
		    snap->source, i, s->address, s->total_size, what);
	return FALSE;
}

gboolean
cca_check_final_state(const CcaSnapshot *snap, int device, GError **error)
{
	g_autoptr(GArray) order = g_array_new(FALSE, FALSE, sizeof(guint));
	for (guint i = 0; i < snap->segments->len; i++) {
		const CcaSnapSegment *s = &g_array_index(snap->segments, CcaSnapSegment, i);
		if (s->device != device)
			continue;
		if (s->total_size == 0)
			return final_state_error(snap, i, error, "a segment of 0 bytes");
		if (s->total_size > CCA_REPLAY_MAX_BYTES)
			return final_state_error(snap, i, error,
						 "256 TiB (2^48 bytes) or more, larger than "
						 "any device");
		if (s->address >= CCA_CHECK_ADDRESS_LIMIT ||
		    s->total_size > CCA_CHECK_ADDRESS_LIMIT - s->address)
			return final_state_error(snap, i, error,
						 "its address range wraps past 2^64");
		if (s->first_block > snap->blocks->len ||
		    s->n_blocks > snap->blocks->len - s->first_block)
			return final_state_error(snap, i, error, "its blocks are not in the table");
		uint64_t at = s->address, end = s->address + s->total_size;
		for (uint32_t k = 0; k < s->n_blocks; k++) {
			const CcaSnapBlock *b =
				&g_array_index(snap->blocks, CcaSnapBlock, s->first_block + k);
			if (b->address < at || b->address >= end || b->size > end - b->address ||
			    b->size == 0)
				return final_state_error(
					snap, i, error,
					"block %u (0x%" G_GINT64_MODIFIER "x, %" G_GUINT64_FORMAT
					" bytes) is not inside the segment after the block before it",
					k, b->address, b->size);
			at = b->address + b->size;
		}
		g_array_append_val(order, i);
	}
	g_array_sort_with_data(order, segment_index_order, snap->segments);
	for (guint k = 1; k < order->len; k++) {
		const CcaSnapSegment *prev = &g_array_index(snap->segments, CcaSnapSegment,
							    g_array_index(order, guint, k - 1));
		guint i = g_array_index(order, guint, k);
		if (g_array_index(snap->segments, CcaSnapSegment, i).address <
		    prev->address + prev->total_size)
			return final_state_error(snap, i, error,
						 "it overlaps the segment of %" G_GUINT64_FORMAT
						 " bytes at 0x%" G_GINT64_MODIFIER "x",
						 prev->total_size, prev->address);
	}
	return TRUE;
}


void
cca_check_walk_init(CcaTraceCheck *c)
{
	c->segments = g_array_new(FALSE, FALSE, sizeof(LiveSegment));
	c->mapped = g_array_new(FALSE, FALSE, sizeof(LiveSegment));
	c->unmapped = g_array_new(FALSE, FALSE, sizeof(LiveSegment));
}

void
cca_check_walk_clear(CcaTraceCheck *c)
{
	g_array_free(c->segments, TRUE);
	g_array_free(c->mapped, TRUE);
	g_array_free(c->unmapped, TRUE);
}

gboolean
cca_check_walk_rest(CcaTraceCheck *w, const CcaSnapshot *snap, const CcaEvent *ev, uint64_t index,
		    GError **error)
{
	if (!cca_check_event(snap, ev, index, error))
		return FALSE;
	if (ev->action == CCA_ACTION_SEGMENT_MAP || ev->action == CCA_ACTION_SEGMENT_UNMAP) {
		bool map = ev->action == CCA_ACTION_SEGMENT_MAP;
		GArray *to = map ? w->mapped : w->unmapped, *from = map ? w->unmapped : w->mapped;
		uint64_t end = ev->addr + ev->size;
		if (ranges_meet(to, ev->addr, end)) {
			g_set_error(error, CCA_INPUT_ERROR, CCA_INPUT_ERROR_CORRUPT,
				    "%s: event %" G_GUINT64_FORMAT ": %s of %" G_GUINT64_FORMAT
				    " bytes at 0x%" G_GINT64_MODIFIER "x: part of it is already %s",
				    snap->source, index, cca_event_action_name(ev->action),
				    ev->size, ev->addr, map ? "mapped" : "unmapped");
			return FALSE;
		}
		ranges_cut(from, ev->addr, end);
		ranges_add(to, ev->addr, end);
	} else if (ev->action == CCA_ACTION_SEGMENT_FREE) {
		segments_remove(w->segments, ev->addr);
	} else if (ev->action == CCA_ACTION_SEGMENT_ALLOC) {
		const LiveSegment *other = segments_add(w->segments, ev->addr, ev->size);
		if (other) {
			g_set_error(error, CCA_INPUT_ERROR, CCA_INPUT_ERROR_CORRUPT,
				    "%s: event %" G_GUINT64_FORMAT
				    ": segment_alloc of %" G_GUINT64_FORMAT
				    " bytes at 0x%" G_GINT64_MODIFIER
				    "x overlaps the live segment of %" G_GUINT64_FORMAT
				    " bytes at 0x%" G_GINT64_MODIFIER "x",
				    snap->source, index, ev->size, ev->addr, other->size,
				    other->address);
			return FALSE;
		}
	}
	return TRUE;
}
