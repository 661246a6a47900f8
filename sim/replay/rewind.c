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
 * (large pool: a remainder of 1 MiB or less, or an oversize request), or
 * to an address the trace allocates at while the block still lives (an
 * allocation starts a free block: the bytes before it were the block's).
 */
#include "config.h"

#include "rewind.h"

#include <stddef.h>
#include <string.h>

#include "allocator.h"
#include "check.h"
#include "event_cursor.h"
#include "pytorch.h"

#define GRANULE CCA_EXPANDABLE_GRANULE

/* What the trace says of a 2 MiB granule of expandable address space. */
enum {
	GRANULE_MAPPED_AT_START = 1,
	GRANULE_UNMAPPED_AT_START = 2
};

typedef struct {
	GHashTable *granules;	    /* granule address → GRANULE_* (first map/unmap seen) */
	GHashTable *granule_stream; /* granule address → its stream (uint64_t) */
	GHashTable *live;	    /* trace address → 1: blocks the trace allocated, live */
	GHashTable *segments;	    /* segment address → 1: segments the trace created, live */
	GHashTable *first_stream;   /* pre-trace segment address → stream (from its free) */
	GArray *freed_blocks;	    /* CcaStartBlock: pre-trace blocks freed in the trace */
	GArray *freed_segments;	    /* CcaStartSegment: pre-trace segments freed in the trace */
	GHashTable *pending; /* trace address → 1: free_requested, completion not yet seen */
	/* trace address → 1 + the index of the entry that freed (or completed
	 * the free of) a block live at the start */
	GHashTable *freed_at;
	/* trace address → 1 + the index of the first alloc entry there */
	GHashTable *first_alloc;
	/* address ranges of expandable memory some entry (or a final mapped
	 * run) has touched: their granules are in `granules` already */
	GArray *touched; /* TouchedRange, disjoint, by address, merged */
	bool too_much;	 /* more than MAX_GRANULES granules touched */
} Scan;

typedef struct {
	uint64_t start, end;
} TouchedRange;

/* The most expandable address space a trace may touch: 1 TiB (2^19
 * granules), more than three times the memory of the largest device (a
 * reservation spans 1 1/8 of it, and what is mapped at once is at most
 * the memory); it bounds the rewind's work (about a second) and memory
 * whatever the trace. */
#define MAX_GRANULES (UINT32_C(1) << 19)

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

/* Hash of a 64-bit address: g_int64_hash() folds the halves together,
 * which leaves every multiple of 2 MiB (a granule, a block) with its low
 * 21 bits zero and the table with long chains. */
static guint
address_hash(gconstpointer key)
{
	uint64_t v = *(const uint64_t *)key * UINT64_C(0x9e3779b97f4a7c15);
	return (guint)(v >> 32);
}

static GHashTable *
u64_set(void)
{
	return g_hash_table_new_full(address_hash, g_int64_equal, g_free, NULL);
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

/* Records STATE and STREAM for every granule of [A, B) no earlier entry
 * or final run touched.  Work is proportional to the new granules (each
 * is recorded once) and the ranges [A, B) meets, not to B - A. */
static void
touch_range(Scan *scan, uint64_t a, uint64_t b, guint state, uint64_t stream)
{
	GArray *t = scan->touched;
	guint lo = 0, hi = t->len;
	while (lo < hi) { /* first range ending at or after A */
		guint mid = (lo + hi) / 2;
		if (g_array_index(t, TouchedRange, mid).end < a)
			lo = mid + 1;
		else
			hi = mid;
	}
	guint first = lo, i = lo;
	uint64_t at = a;
	while (at < b && !scan->too_much) {
		if (i < t->len && g_array_index(t, TouchedRange, i).start <= at) {
			at = MAX(at, g_array_index(t, TouchedRange, i).end);
			i++;
			continue;
		}
		uint64_t gap_end = i < t->len ? MIN(g_array_index(t, TouchedRange, i).start, b) : b;
		if ((gap_end - at + GRANULE - 1) / GRANULE >
		    MAX_GRANULES - g_hash_table_size(scan->granules)) {
			scan->too_much = true; /* refused before any work */
			return;
		}
		for (uint64_t g = at; g < gap_end; g += GRANULE) {
			g_hash_table_insert(scan->granules, g_memdup2(&g, sizeof g),
					    GUINT_TO_POINTER(state));
			g_hash_table_insert(scan->granule_stream, g_memdup2(&g, sizeof g),
					    g_memdup2(&stream, sizeof stream));
		}
		at = gap_end;
	}
	/* merge [A, B) with the ranges it meets or touches */
	guint last = first;
	uint64_t start = a, end = b;
	while (last < t->len && g_array_index(t, TouchedRange, last).start <= b) {
		start = MIN(start, g_array_index(t, TouchedRange, last).start);
		end = MAX(end, g_array_index(t, TouchedRange, last).end);
		last++;
	}
	if (last > first)
		g_array_remove_range(t, first, last - first);
	TouchedRange r = {start, end};
	g_array_insert_val(t, first, r);
}

static void
note_freed_at(Scan *scan, uint64_t addr, uint64_t index)
{
	g_hash_table_insert(scan->freed_at, g_memdup2(&addr, sizeof addr),
			    g_memdup2(&(uint64_t){index + 1}, sizeof(uint64_t)));
}

static void
scan_event(Scan *scan, const CcaEvent *ev, uint64_t index)
{
	switch (ev->action) {
	case CCA_ACTION_ALLOC:
		set_add(scan->live, ev->addr);
		if (!g_hash_table_contains(scan->first_alloc, &ev->addr))
			g_hash_table_insert(scan->first_alloc,
					    g_memdup2(&ev->addr, sizeof ev->addr),
					    g_memdup2(&(uint64_t){index + 1}, sizeof(uint64_t)));
		break;
	case CCA_ACTION_FREE_REQUESTED:
		if (!g_hash_table_remove(scan->live, &ev->addr)) {
			CcaStartBlock b = {.address = ev->addr,
					   .requested_size = ev->size,
					   .stream = ev->stream};
			g_array_append_val(scan->freed_blocks, b);
			note_freed_at(scan, ev->addr, index);
		}
		set_add(scan->pending, ev->addr);
		break;
	case CCA_ACTION_FREE_COMPLETED:
		if (g_hash_table_remove(scan->pending, &ev->addr)) {
			if (g_hash_table_contains(scan->freed_at, &ev->addr))
				note_freed_at(scan, ev->addr, index); /* its free ends here */
		} else {
			/* freed before the trace began: it was pending at the start */
			CcaStartBlock b = {.address = ev->addr,
					   .requested_size = ev->size,
					   .stream = ev->stream,
					   .pending = true};
			g_array_append_val(scan->freed_blocks, b);
			note_freed_at(scan, ev->addr, index);
		}
		break;
	case CCA_ACTION_SEGMENT_ALLOC:
		set_add(scan->segments, ev->addr);
		break;
	case CCA_ACTION_SEGMENT_MAP:
	case CCA_ACTION_SEGMENT_UNMAP:
		/* the first map of a granule says it was unmapped at the start,
		 * the first unmap that it was mapped */
		touch_range(scan, ev->addr, ev->addr + ev->size,
			    ev->action == CCA_ACTION_SEGMENT_MAP ? GRANULE_UNMAPPED_AT_START
								 : GRANULE_MAPPED_AT_START,
			    ev->stream);
		break;
	case CCA_ACTION_SEGMENT_FREE:
		if (!g_hash_table_remove(scan->segments, &ev->addr)) {
			CcaStartSegment s = {.address = ev->addr,
					     .size = ev->size,
					     .stream = ev->stream,
					     .is_small = ev->size == CCA_SMALL_BUFFER,
					     .event = (int64_t)index};
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

/* The first alloc entry at each address: (address, index), by address. */
typedef struct {
	uint64_t address, index;
} AllocStart;

static gint
alloc_start_order(gconstpointer a, gconstpointer b)
{
	return by_address(a, b, offsetof(AllocStart, address));
}

/* The lowest address of ALLOCS at or after FROM (UINT64_MAX: none), and
 * the index of its first alloc in *INDEX. */
static uint64_t
alloc_start_after(const GArray *allocs, uint64_t from, uint64_t *index)
{
	guint lo = 0, hi = allocs->len;
	while (lo < hi) {
		guint mid = (lo + hi) / 2;
		if (g_array_index(allocs, AllocStart, mid).address < from)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == allocs->len)
		return UINT64_MAX;
	const AllocStart *a = &g_array_index(allocs, AllocStart, lo);
	*index = a->index;
	return a->address;
}

/* Infers the sizes of blocks known only by their request (PyTorch's
 * shouldSplit(), cca_pytorch_should_split()): the
 * request rounded, grown over what follows when the allocator would not
 * have split that off: up to the next live block or the segment's end, or
 * up to an address the trace allocates at while the block is still live
 * (an alloc takes the start of a free block, so the bytes before it were
 * not free: the block's unsplit remainder).  ALLOCS are the first alloc
 * entries by address, FREED_AT the entry that ended each block's life. */
static void
infer_sizes(CcaStartState *start, const CcaSettings *settings, const GArray *allocs,
	    GHashTable *freed_at)
{
	for (guint i = 0; i < start->blocks->len; i++) {
		CcaStartBlock *b = &g_array_index(start->blocks, CcaStartBlock, i);
		if (b->size_exact)
			continue;
		uint64_t size = cca_allocator_round_size_under(settings, b->requested_size);
		uint64_t end = next_boundary(start->segments, start->blocks, i);
		const CcaStartSegment *seg = segment_of(start->segments, b->address);
		if (end == UINT64_MAX || end <= b->address + size || !seg) {
			b->size = size;
			continue;
		}
		bool expandable = settings->expandable_segments || seg->is_expandable;
		uint64_t at = 0;
		uint64_t next = alloc_start_after(allocs, b->address + size, &at);
		const uint64_t *freed = g_hash_table_lookup(freed_at, &b->address);
		if (next < end && freed && at < *freed &&
		    !cca_pytorch_should_split(seg->is_small, expandable, size,
					      next - b->address - size, settings->max_split_size))
			end = next; /* the block reaches the later alloc's start */
		if (!cca_pytorch_should_split(seg->is_small, expandable, size,
					      end - b->address - size, settings->max_split_size))
			size = end - b->address;
		b->size = size;
	}
}

/* Notes the granules of the final mapped run S that no event touched:
 * they were mapped at the start. */
static void
note_final_run(Scan *scan, const CcaSnapSegment *s)
{
	touch_range(scan, s->address, s->address + s->total_size, GRANULE_MAPPED_AT_START,
		    s->stream);
}

static gint
u64_order(gconstpointer a, gconstpointer b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* The pool of the reservation of granules [FIRST, LAST] of STREAM: the
 * final state's segment_type when it shows one, else small when some
 * run is not made of whole 20 MiB pages. */
static bool
cluster_is_small(const CcaSnapshot *snap, int device, uint64_t stream, const uint64_t *g, guint n)
{
	for (guint i = 0; i < snap->segments->len; i++) {
		const CcaSnapSegment *s = &g_array_index(snap->segments, CcaSnapSegment, i);
		if (s->device == device && s->is_expandable && s->stream == stream &&
		    s->address >= g[0] && s->address <= g[n - 1])
			return s->is_small;
	}
	for (guint i = 0; i < n;) {
		guint j = i + 1;
		while (j < n && g[j] == g[j - 1] + GRANULE)
			j++;
		if ((uint64_t)(j - i) * GRANULE % CCA_LARGE_BUFFER != 0)
			return true;
		i = j;
	}
	return false;
}

/* Groups the expandable granules the trace and the final state show into
 * reservations (one per stream and pool; reservations lie 1 1/8 of the
 * device memory apart, so a gap of 64 GiB separates them) and emits the
 * runs that were mapped at the start. */
static void
rebuild_reservations(Scan *scan, const CcaSnapshot *snap, int device, CcaStartState *start)
{
	GHashTable *by_stream = g_hash_table_new_full(g_int64_hash, g_int64_equal, NULL,
						      (GDestroyNotify)g_array_unref);
	GHashTableIter it;
	gpointer key, value;
	g_hash_table_iter_init(&it, scan->granule_stream);
	while (g_hash_table_iter_next(&it, &key, &value)) {
		GArray *list = g_hash_table_lookup(by_stream, value);
		if (!list) {
			list = g_array_new(FALSE, FALSE, sizeof(uint64_t));
			g_hash_table_insert(by_stream, value, list);
		}
		g_array_append_val(list, *(uint64_t *)key);
	}
	g_hash_table_iter_init(&it, by_stream);
	while (g_hash_table_iter_next(&it, &key, &value)) {
		uint64_t stream = *(uint64_t *)key;
		GArray *list = value;
		g_array_sort(list, u64_order);
		const uint64_t *g = (const uint64_t *)list->data;
		for (guint i = 0; i < list->len;) {
			guint j = i + 1;
			while (j < list->len && g[j] - g[j - 1] < (UINT64_C(64) << 30))
				j++;
			CcaStartReservation res = {
				g[i], stream, cluster_is_small(snap, device, stream, g + i, j - i)};
			g_array_append_val(start->reservations, res);
			/* runs of granules mapped at the start */
			for (guint k = i; k < j;) {
				if (GPOINTER_TO_UINT(g_hash_table_lookup(scan->granules, &g[k])) !=
				    GRANULE_MAPPED_AT_START) {
					k++;
					continue;
				}
				guint e = k + 1;
				while (e < j && g[e] == g[e - 1] + GRANULE &&
				       GPOINTER_TO_UINT(g_hash_table_lookup(
					       scan->granules, &g[e])) == GRANULE_MAPPED_AT_START)
					e++;
				CcaStartSegment seg = {g[k],   (uint64_t)(e - k) * GRANULE,
						       stream, res.is_small,
						       true,   -1};
				g_array_append_val(start->segments, seg);
				k = e;
			}
			i = j;
		}
	}
	g_hash_table_destroy(by_stream);
}

/* The cudaMalloc segments of the start (SEGMENTS, by address) must not
 * overlap: a segment_free of a segment the trace did not create names
 * one, and so does each final segment it did not create. */
static gboolean
check_start_segments(const CcaSnapshot *snap, const GArray *segments, GError **error)
{
	const CcaStartSegment *prev = NULL;
	for (guint i = 0; i < segments->len; i++) {
		const CcaStartSegment *s = &g_array_index(segments, CcaStartSegment, i);
		if (s->is_expandable)
			continue;
		if (prev &&
		    (s->address < prev->address + prev->size || s->address == prev->address)) {
			const CcaStartSegment *by = s->event >= 0 ? s : prev;
			const CcaStartSegment *other = by == s ? prev : s;
			if (by->event < 0) {
				g_set_error(error, CCA_INPUT_ERROR, CCA_INPUT_ERROR_CORRUPT,
					    "%s: final segment at 0x%" G_GINT64_MODIFIER
					    "x overlaps the one at 0x%" G_GINT64_MODIFIER "x",
					    snap->source, s->address, prev->address);
				return FALSE;
			}
			g_set_error(error, CCA_INPUT_ERROR, CCA_INPUT_ERROR_CORRUPT,
				    "%s: event %" G_GINT64_FORMAT
				    ": segment_free of %" G_GUINT64_FORMAT
				    " bytes at 0x%" G_GINT64_MODIFIER
				    "x overlaps the segment of %" G_GUINT64_FORMAT
				    " bytes at 0x%" G_GINT64_MODIFIER "x live when the trace began",
				    snap->source, by->event, by->size, by->address, other->size,
				    other->address);
			return FALSE;
		}
		prev = s;
	}
	return TRUE;
}

gboolean
cca_rewind_start_state(const CcaSnapshot *snap, int device, const CcaSettings *settings,
		       CcaStartState *start, GError **error)
{
	memset(start, 0, sizeof *start);
	start->segments = g_array_new(FALSE, FALSE, sizeof(CcaStartSegment));
	start->blocks = g_array_new(FALSE, FALSE, sizeof(CcaStartBlock));
	start->reservations = g_array_new(FALSE, FALSE, sizeof(CcaStartReservation));
	Scan scan = {
		.granules = u64_set(),
		.granule_stream =
			g_hash_table_new_full(address_hash, g_int64_equal, g_free, g_free),
		.live = u64_set(),
		.segments = u64_set(),
		.pending = u64_set(),
		.freed_blocks = g_array_new(FALSE, FALSE, sizeof(CcaStartBlock)),
		.freed_segments = g_array_new(FALSE, FALSE, sizeof(CcaStartSegment)),
		.freed_at = g_hash_table_new_full(address_hash, g_int64_equal, g_free, g_free),
		.first_alloc = g_hash_table_new_full(address_hash, g_int64_equal, g_free, g_free),
		.touched = g_array_new(FALSE, FALSE, sizeof(TouchedRange)),
	};
	g_autoptr(CcaEventCursor) cursor = cca_event_cursor_new(snap, device);
	CcaEvent ev;
	GError *local = NULL;
	for (uint64_t i = 0; cca_event_cursor_next(cursor, &ev, &local); i++) {
		/* the engine checks each entry too, but only as it replays */
		if (!cca_check_event(snap, &ev, i, &local))
			break;
		scan_event(&scan, &ev, i);
		if (scan.too_much) {
			g_set_error(&local, CCA_INPUT_ERROR, CCA_INPUT_ERROR_LIMIT,
				    "%s: event %" G_GUINT64_FORMAT
				    ": %s: the trace touches more than 1 TiB of expandable "
				    "address space",
				    snap->source, i, cca_event_action_name(ev.action));
			break;
		}
	}
	gboolean ok = local == NULL;
	if (!ok)
		g_propagate_error(error, local);

	/* the final state: what no event created existed at the start */
	for (guint i = 0; ok && i < snap->segments->len; i++) {
		const CcaSnapSegment *s = &g_array_index(snap->segments, CcaSnapSegment, i);
		if (s->device != device)
			continue;
		if (s->is_expandable) {
			/* a mapped run at the end: its granules no event touched
			 * were mapped at the start too */
			note_final_run(&scan, s);
			if (scan.too_much) {
				g_set_error(error, CCA_INPUT_ERROR, CCA_INPUT_ERROR_LIMIT,
					    "%s: final segment %u (0x%" G_GINT64_MODIFIER
					    "x): the trace touches more than 1 TiB of expandable "
					    "address space",
					    snap->source, i, s->address);
				ok = FALSE;
				break;
			}
		} else if (!set_has(scan.segments, s->address)) {
			CcaStartSegment seg = {s->address,  s->total_size, s->stream,
					       s->is_small, false,	   -1};
			g_array_append_val(start->segments, seg);
		}
		for (uint32_t k = 0; k < s->n_blocks; k++) {
			const CcaSnapBlock *b =
				&g_array_index(snap->blocks, CcaSnapBlock, s->first_block + k);
			if (b->state == CCA_BLOCK_INACTIVE || set_has(scan.live, b->address) ||
			    set_has(scan.pending, b->address))
				continue;
			const uint64_t *freed = g_hash_table_lookup(scan.freed_at, &b->address);
			if (freed) {
				/* the trace freed the block it found there and never
				 * allocated one there again */
				g_set_error(error, CCA_INPUT_ERROR, CCA_INPUT_ERROR_CORRUPT,
					    "%s: event %" G_GUINT64_FORMAT
					    ": the trace frees the block at 0x%" G_GINT64_MODIFIER
					    "x (live when it began) and never allocates it again, "
					    "but its final state has it %s",
					    snap->source, *freed - 1, b->address,
					    cca_event_block_state_name(b->state));
				ok = FALSE;
				break;
			}
			CcaStartBlock sb = {b->address,
					    b->size,
					    b->requested_size,
					    s->stream,
					    b->state == CCA_BLOCK_ACTIVE_PENDING_FREE,
					    true};
			g_array_append_val(start->blocks, sb);
		}
	}
	rebuild_reservations(&scan, snap, device, start);
	g_array_append_vals(start->segments, scan.freed_segments->data, scan.freed_segments->len);
	g_array_append_vals(start->blocks, scan.freed_blocks->data, scan.freed_blocks->len);
	g_array_sort(start->segments, segment_order);
	if (ok)
		ok = check_start_segments(snap, start->segments, error);
	g_array_sort(start->blocks, block_order);
	g_autoptr(GArray) allocs = g_array_new(FALSE, FALSE, sizeof(AllocStart));
	GHashTableIter it;
	gpointer key, value;
	g_hash_table_iter_init(&it, scan.first_alloc);
	while (g_hash_table_iter_next(&it, &key, &value)) {
		AllocStart a = {*(const uint64_t *)key, *(const uint64_t *)value};
		g_array_append_val(allocs, a);
	}
	g_array_sort(allocs, alloc_start_order);
	infer_sizes(start, settings, allocs, scan.freed_at);
	for (guint i = 0; i < start->blocks->len; i++)
		start->live_bytes += g_array_index(start->blocks, CcaStartBlock, i).size;
	start->mid_run = start->segments->len > 0 || start->blocks->len > 0 ||
			 start->has_expandable || start->reservations->len > 0;

	g_hash_table_destroy(scan.granules);
	g_hash_table_destroy(scan.granule_stream);
	g_hash_table_destroy(scan.live);
	g_hash_table_destroy(scan.segments);
	g_hash_table_destroy(scan.pending);
	g_hash_table_destroy(scan.freed_at);
	g_hash_table_destroy(scan.first_alloc);
	g_array_free(scan.touched, TRUE);
	g_array_free(scan.freed_blocks, TRUE);
	g_array_free(scan.freed_segments, TRUE);
	return ok;
}

void
cca_rewind_start_state_clear(CcaStartState *start)
{
	g_clear_pointer(&start->reservations, g_array_unref);
	g_clear_pointer(&start->segments, g_array_unref);
	g_clear_pointer(&start->blocks, g_array_unref);
	memset(start, 0, sizeof *start);
}
