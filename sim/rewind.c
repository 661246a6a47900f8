/* rewind.c - which segments and blocks a trace's first event found.
 *
 * One forward pass over the events keeps the set of blocks and segments
 * the trace itself created.  A free of a block it did not create, or a
 * segment_free of a segment it did not create, names something that
 * existed at the start; so does every block and segment of the final state
 * that no event created.  Blocks still live at the end have their exact
 * size in the final state; a block freed during the trace has only its
 * request: its size is round_size(request), grown to the next live
 * neighbour when the allocator would not have split the remainder off
 * (large pool: a remainder of 1 MiB or less, or an oversize request).
 */
#include "config.h"

#include "rewind.h"

#include <string.h>

#include "allocator.h"

#define SMALL_SEGMENT UINT64_C(2097152)

typedef struct {
	GHashTable *live;	  /* trace address → 1: blocks the trace allocated, live */
	GHashTable *segments;	  /* segment address → 1: segments the trace created, live */
	GHashTable *first_stream; /* pre-trace segment address → stream (from its free) */
	GArray *freed_blocks;	  /* CcaStartBlock: pre-trace blocks freed in the trace */
	GArray *freed_segments;	  /* CcaStartSegment: pre-trace segments freed in the trace */
	GHashTable *pending;	  /* trace address → 1: free_requested, completion not yet seen */
} Scan;

static gint
by_address(gconstpointer a, gconstpointer b, size_t offset)
{
	uint64_t x = *(const uint64_t *)((const char *)a + offset);
	uint64_t y = *(const uint64_t *)((const char *)b + offset);
	return x < y ? -1 : x > y;
}

static gint
segment_order(gconstpointer a, gconstpointer b)
{
	return by_address(a, b, G_STRUCT_OFFSET(CcaStartSegment, address));
}

static gint
block_order(gconstpointer a, gconstpointer b)
{
	return by_address(a, b, G_STRUCT_OFFSET(CcaStartBlock, address));
}

static GHashTable *
u64_set(void)
{
	return g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
}

static void
set_add(GHashTable *set, uint64_t key)
{
	g_hash_table_add(set, g_memdup2(&key, sizeof key));
}

static gboolean
set_has(GHashTable *set, uint64_t key)
{
	return g_hash_table_contains(set, &key);
}

static void
scan_event(Scan *scan, const CcaEvent *ev)
{
	switch (ev->action) {
	case CCA_ACTION_ALLOC:
		set_add(scan->live, ev->addr);
		break;
	case CCA_ACTION_FREE_REQUESTED:
		if (!g_hash_table_remove(scan->live, &ev->addr)) {
			CcaStartBlock b = {.address = ev->addr,
					   .requested_size = ev->size,
					   .stream = ev->stream};
			g_array_append_val(scan->freed_blocks, b);
		}
		set_add(scan->pending, ev->addr);
		break;
	case CCA_ACTION_FREE_COMPLETED:
		if (!g_hash_table_remove(scan->pending, &ev->addr)) {
			/* freed before the trace began: it was pending at the start */
			CcaStartBlock b = {.address = ev->addr,
					   .requested_size = ev->size,
					   .stream = ev->stream,
					   .pending = true};
			g_array_append_val(scan->freed_blocks, b);
		}
		break;
	case CCA_ACTION_SEGMENT_ALLOC:
		set_add(scan->segments, ev->addr);
		break;
	case CCA_ACTION_SEGMENT_FREE:
		if (!g_hash_table_remove(scan->segments, &ev->addr)) {
			CcaStartSegment s = {.address = ev->addr,
					     .size = ev->size,
					     .stream = ev->stream,
					     .is_small = ev->size == SMALL_SEGMENT};
			g_array_append_val(scan->freed_segments, s);
		}
		break;
	default:
		break;
	}
}

/* Where the live block at index I of the sorted BLOCKS must end: the next
 * block's start or its segment's end. */
static uint64_t
next_boundary(const GArray *segments, const GArray *blocks, guint i)
{
	const CcaStartBlock *b = &g_array_index(blocks, CcaStartBlock, i);
	uint64_t end = UINT64_MAX;
	for (guint s = 0; s < segments->len; s++) {
		const CcaStartSegment *seg = &g_array_index(segments, CcaStartSegment, s);
		if (seg->address <= b->address && b->address < seg->address + seg->size)
			end = seg->address + seg->size;
	}
	if (i + 1 < blocks->len) {
		uint64_t next = g_array_index(blocks, CcaStartBlock, i + 1).address;
		if (next < end)
			end = next;
	}
	return end;
}

static const CcaStartSegment *
segment_of(const GArray *segments, uint64_t address)
{
	for (guint s = 0; s < segments->len; s++) {
		const CcaStartSegment *seg = &g_array_index(segments, CcaStartSegment, s);
		if (seg->address <= address && address < seg->address + seg->size)
			return seg;
	}
	return NULL;
}

/* Infers the sizes of blocks known only by their request (spec §4.1). */
static void
infer_sizes(CcaStartState *start, const CcaSettings *settings)
{
	for (guint i = 0; i < start->blocks->len; i++) {
		CcaStartBlock *b = &g_array_index(start->blocks, CcaStartBlock, i);
		if (b->size_exact)
			continue;
		uint64_t size = cca_round_size(settings, b->requested_size);
		uint64_t end = next_boundary(start->segments, start->blocks, i);
		const CcaStartSegment *seg = segment_of(start->segments, b->address);
		if (end != UINT64_MAX && end > b->address + size && seg && !seg->is_small) {
			uint64_t rest = end - b->address - size;
			if (size >= settings->max_split_size || rest <= (UINT64_C(1) << 20))
				size += rest;
		}
		b->size = size;
	}
}

gboolean
cca_rewind_start_state(const CcaSnapshot *snap, int device, const CcaSettings *settings,
		       CcaStartState *start, GError **error)
{
	memset(start, 0, sizeof *start);
	start->segments = g_array_new(FALSE, FALSE, sizeof(CcaStartSegment));
	start->blocks = g_array_new(FALSE, FALSE, sizeof(CcaStartBlock));
	Scan scan = {
		.live = u64_set(),
		.segments = u64_set(),
		.pending = u64_set(),
		.freed_blocks = g_array_new(FALSE, FALSE, sizeof(CcaStartBlock)),
		.freed_segments = g_array_new(FALSE, FALSE, sizeof(CcaStartSegment)),
	};
	g_autoptr(CcaEventCursor) cursor = cca_event_cursor_new(snap, device);
	CcaEvent ev;
	GError *local = NULL;
	while (cca_event_cursor_next(cursor, &ev, &local))
		scan_event(&scan, &ev);
	gboolean ok = local == NULL;
	if (!ok)
		g_propagate_error(error, local);

	/* the final state: what no event created existed at the start */
	for (guint i = 0; ok && i < snap->segments->len; i++) {
		const CcaSnapSegment *s = &g_array_index(snap->segments, CcaSnapSegment, i);
		if (s->device != device)
			continue;
		if (s->is_expandable) {
			/* live blocks no event allocated: the expandable segment
			 * was in use at the start (not rebuilt, see rewind.h) */
			for (uint32_t k = 0; k < s->n_blocks; k++) {
				const CcaSnapBlock *b = &g_array_index(snap->blocks, CcaSnapBlock,
								       s->first_block + k);
				if (b->state != CCA_BLOCK_INACTIVE &&
				    !set_has(scan.live, b->address) &&
				    !set_has(scan.pending, b->address))
					start->has_expandable = true;
			}
			continue;
		}
		if (!set_has(scan.segments, s->address)) {
			CcaStartSegment seg = {s->address, s->total_size, s->stream, s->is_small,
					       false};
			g_array_append_val(start->segments, seg);
		}
		for (uint32_t k = 0; k < s->n_blocks; k++) {
			const CcaSnapBlock *b =
				&g_array_index(snap->blocks, CcaSnapBlock, s->first_block + k);
			if (b->state == CCA_BLOCK_INACTIVE || set_has(scan.live, b->address) ||
			    set_has(scan.pending, b->address))
				continue;
			CcaStartBlock sb = {b->address,
					    b->size,
					    b->requested_size,
					    s->stream,
					    b->state == CCA_BLOCK_ACTIVE_PENDING_FREE,
					    true};
			g_array_append_val(start->blocks, sb);
		}
	}
	g_array_append_vals(start->segments, scan.freed_segments->data, scan.freed_segments->len);
	g_array_append_vals(start->blocks, scan.freed_blocks->data, scan.freed_blocks->len);
	g_array_sort(start->segments, segment_order);
	g_array_sort(start->blocks, block_order);
	infer_sizes(start, settings);
	for (guint i = 0; i < start->blocks->len; i++)
		start->live_bytes += g_array_index(start->blocks, CcaStartBlock, i).size;
	start->mid_run =
		start->segments->len > 0 || start->blocks->len > 0 || start->has_expandable;

	g_hash_table_destroy(scan.live);
	g_hash_table_destroy(scan.segments);
	g_hash_table_destroy(scan.pending);
	g_array_free(scan.freed_blocks, TRUE);
	g_array_free(scan.freed_segments, TRUE);
	return ok;
}

void
cca_start_state_clear(CcaStartState *start)
{
	if (start->segments)
		g_array_free(start->segments, TRUE);
	if (start->blocks)
		g_array_free(start->blocks, TRUE);
	memset(start, 0, sizeof *start);
}
