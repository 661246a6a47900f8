/* gen_trace.c - writes a synthetic training-loop trace of N events.
 *
 * For benchmarks of the replay and the plots: a seeded, deterministic
 * request stream shaped like training steps (a forward pass that keeps
 * activations of layer-dependent sizes, small temporaries, a backward pass
 * that frees them in reverse order, and some tensors freed from a second
 * stream, i.e. deferred frees).  Only request entries are written (alloc,
 * free_requested, free_completed): replaying it under any settings is a
 * what-if by construction.
 *
 *   gen-trace [-n EVENTS] [-s SEED] -o OUT.msgpack
 *   gen-trace -r TRACE [-n EVENTS] -o OUT.msgpack
 *   gen-trace -l LIVE [-s SEED] -o OUT.msgpack
 *
 * With -r, the events of device 0 of a real TRACE are repeated until
 * there are N: repetition k shifts every address by k TiB and ends by
 * freeing the blocks it left allocated and calling empty_cache() (a burst
 * of segment_free), so each repetition starts from an empty cache (stack
 * and context ids are dropped, and the final state is empty: a replay of
 * it is a what-if, whose empty_cache() calls a recorded pass must find).
 *
 * With -l, a trace that holds LIVE blocks at once (for the costs that grow
 * with the live blocks): LIVE allocations of mostly small sizes (every
 * 64th one from the large pool, 1 to 3 MiB), each fourth followed by a temporary allocated and
 * freed, then every block freed in a random order; about 3.75 LIVE events.
 * The reserved and allocated peaks rise all through the first half.
 */
#include "config.h"

#include <glib.h>
#include <stdbool.h>
#include <stdio.h>

#include "pytorch.h"
#include "snapshot.h"
#include "event_cursor.h"
#include "snapshot_load.h"
#include "trace_write.h"
#include "pytorch.h"

/* PyTorch's empty_cache() order of whole segments: large-pool ones
 * (anything but a 2 MiB small-pool segment) first, then by stream, size,
 * address. */
static gint
empty_cache_order(gconstpointer pa, gconstpointer pb)
{
	const CcaEvent *a = pa, *b = pb;
	bool sa = a->size == CCA_SMALL_BUFFER, sb = b->size == CCA_SMALL_BUFFER;
	if (sa != sb)
		return sa ? 1 : -1;
	if (a->stream != b->stream)
		return a->stream < b->stream ? -1 : 1;
	if (a->size != b->size)
		return a->size < b->size ? -1 : 1;
	return a->addr < b->addr ? -1 : a->addr > b->addr;
}

#define SIDE_STREAM UINT64_C(0x5a5a000)

typedef struct {
	CcaSnapshot *snap;
	GArray *events;
	uint64_t target;
	uint64_t next_addr; /* unique fake addresses, kMinBlockSize-aligned */
	int64_t time_us;
	GRand *rand;
} Gen;

static uint64_t
gen_alloc(Gen *g, uint64_t size, uint64_t stream)
{
	uint64_t addr = g->next_addr;
	g->next_addr += (size + CCA_MIN_BLOCK_SIZE - 1) / CCA_MIN_BLOCK_SIZE * CCA_MIN_BLOCK_SIZE +
			CCA_MIN_BLOCK_SIZE;
	CcaEvent ev = {.addr = addr,
		       .size = size,
		       .stream = stream,
		       .time_us = g->time_us++,
		       .action = CCA_ACTION_ALLOC};
	g_array_append_val(g->events, ev);
	return addr;
}

static void
gen_free(Gen *g, uint64_t addr, uint64_t size, uint64_t stream, gboolean complete)
{
	CcaEvent ev = {.addr = addr,
		       .size = size,
		       .stream = stream,
		       .time_us = g->time_us++,
		       .action = CCA_ACTION_FREE_REQUESTED};
	g_array_append_val(g->events, ev);
	if (complete) {
		ev.action = CCA_ACTION_FREE_COMPLETED;
		g_array_append_val(g->events, ev);
	}
}

static void
gen_complete(Gen *g, uint64_t addr, uint64_t size, uint64_t stream)
{
	CcaEvent ev = {.addr = addr,
		       .size = size,
		       .stream = stream,
		       .time_us = g->time_us++,
		       .action = CCA_ACTION_FREE_COMPLETED};
	g_array_append_val(g->events, ev);
}

/* One training step of LAYERS layers with batch factor BATCH. */
static void
gen_step(Gen *g, int layers, uint64_t batch)
{
	uint64_t addrs[256], sizes[256];
	for (int l = 0; l < layers; l++) {
		sizes[l] = batch * (uint64_t)(1 + l % 7) * 262144 + (uint64_t)(l % 3) * 4096;
		addrs[l] = gen_alloc(g, sizes[l], 0);
		uint64_t tmp = gen_alloc(g, (uint64_t)g_rand_int_range(g->rand, 1, 65536), 0);
		gen_free(g, tmp, 0, 0, TRUE);
	}
	uint64_t side_addr = 0, side_size = 0;
	for (int l = layers - 1; l >= 0; l--) {
		uint64_t grad = gen_alloc(g, sizes[l], 0);
		gen_free(g, addrs[l], sizes[l], 0, TRUE);
		if (side_addr)
			gen_complete(g, side_addr, side_size, SIDE_STREAM);
		side_addr = 0;
		if (l % 5 == 0) { /* used on the side stream: a deferred free */
			side_size = sizes[l] / 2;
			side_addr = gen_alloc(g, side_size, SIDE_STREAM);
			gen_free(g, side_addr, side_size, SIDE_STREAM, FALSE);
		}
		gen_free(g, grad, sizes[l], 0, TRUE);
	}
	if (side_addr)
		gen_complete(g, side_addr, side_size, SIDE_STREAM);
}

/* LIVE blocks allocated, then freed in a random order. */
static void
gen_live(Gen *g, uint64_t live)
{
	GArray *addrs = g_array_sized_new(FALSE, FALSE, sizeof(uint64_t), (guint)live);
	GArray *sizes = g_array_sized_new(FALSE, FALSE, sizeof(uint64_t), (guint)live);
	for (uint64_t i = 0; i < live; i++) {
		uint64_t size =
			i % 64 == 63 ? (uint64_t)g_rand_int_range(g->rand, (gint32)CCA_SMALL_SIZE,
								  (gint32)(3 * CCA_SMALL_SIZE))
				     : (uint64_t)g_rand_int_range(g->rand, 1, 32768);
		uint64_t addr = gen_alloc(g, size, 0);
		g_array_append_val(addrs, addr);
		g_array_append_val(sizes, size);
		if (i % 4 == 3) {
			uint64_t tmp =
				gen_alloc(g, (uint64_t)g_rand_int_range(g->rand, 1, 65536), 0);
			gen_free(g, tmp, 0, 0, TRUE);
		}
	}
	for (guint n = addrs->len; n > 0; n--) { /* Fisher-Yates: a random order */
		guint k = (guint)g_rand_int_range(g->rand, 0, (gint32)n);
		uint64_t addr = g_array_index(addrs, uint64_t, k);
		uint64_t size = g_array_index(sizes, uint64_t, k);
		g_array_index(addrs, uint64_t, k) = g_array_index(addrs, uint64_t, n - 1);
		g_array_index(sizes, uint64_t, k) = g_array_index(sizes, uint64_t, n - 1);
		gen_free(g, addr, size, 0, TRUE);
	}
	g_array_free(addrs, TRUE);
	g_array_free(sizes, TRUE);
}

/* Appends device 0's events of TRACE to G until it has G->target. */
static gboolean
gen_repeat(Gen *g, const char *trace, GError **error)
{
	g_autoptr(CcaSnapshot) src = cca_snapshot_load(trace, error);
	if (!src)
		return FALSE;
	for (uint64_t k = 0; g->events->len < g->target; k++) {
		uint64_t shift = k << 40;
		g_autoptr(GHashTable) live =
			g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
		g_autoptr(GArray) blocks = g_array_new(FALSE, FALSE, sizeof(CcaEvent));
		g_autoptr(GArray) segments = g_array_new(FALSE, FALSE, sizeof(CcaEvent));
		g_autoptr(CcaEventCursor) c = cca_event_cursor_new(src, 0);
		CcaEvent ev;
		while (cca_event_cursor_next(c, &ev, error) && g->events->len < g->target) {
			if (ev.action == CCA_ACTION_SNAPSHOT)
				continue;
			if (ev.action != CCA_ACTION_OOM)
				ev.addr += shift;
			ev.stack = ev.compile_context = ev.user_metadata = CCA_ID_NONE;
			ev.time_us = g->time_us++;
			g_array_append_val(g->events, ev);
			if (ev.action == CCA_ACTION_ALLOC) {
				g_array_append_val(blocks, ev);
				g_hash_table_insert(live, g_memdup2(&ev.addr, sizeof ev.addr),
						    GUINT_TO_POINTER(1));
			} else if (ev.action == CCA_ACTION_SEGMENT_ALLOC) {
				g_array_append_val(segments, ev);
			} else if (ev.action == CCA_ACTION_SEGMENT_FREE) {
				for (guint i = 0; i < segments->len; i++)
					if (g_array_index(segments, CcaEvent, i).addr == ev.addr)
						g_array_remove_index_fast(segments, i--);
			} else if (ev.action == CCA_ACTION_FREE_REQUESTED) {
				g_hash_table_remove(live, &ev.addr);
			}
		}
		if (*error)
			return FALSE;
		if (g->events->len >= g->target)
			break;
		for (guint i = 0; i < blocks->len; i++) {
			CcaEvent *b = &g_array_index(blocks, CcaEvent, i);
			if (g_hash_table_remove(live, &b->addr))
				gen_free(g, b->addr, b->size, b->stream, TRUE);
		}
		/* empty_cache() releases the large pool, then the small one, each
		 * in the free set's (stream, size, address) order */
		g_array_sort(segments, empty_cache_order);
		for (guint i = 0; i < segments->len; i++) {
			CcaEvent seg = g_array_index(segments, CcaEvent, i);
			seg.action = CCA_ACTION_SEGMENT_FREE;
			seg.time_us = g->time_us++;
			g_array_append_val(g->events, seg);
		}
	}
	return TRUE;
}

int
main(int argc, char **argv)
{
	gint64 n = 10000000, live = 0;
	gint seed = 1;
	char *out = NULL, *repeat = NULL;
	GOptionEntry entries[] = {
		{"repeat", 'r', 0, G_OPTION_ARG_FILENAME, &repeat, "Repeat this real trace",
		 "TRACE"},
		{"events", 'n', 0, G_OPTION_ARG_INT64, &n, "Number of events (at least)", "N"},
		{"live", 'l', 0, G_OPTION_ARG_INT64, &live, "Hold this many blocks at once",
		 "LIVE"},
		{"seed", 's', 0, G_OPTION_ARG_INT, &seed, "Random seed", "SEED"},
		{"output", 'o', 0, G_OPTION_ARG_FILENAME, &out, "Output msgpack trace", "FILE"},
		{NULL, 0, 0, 0, NULL, NULL, NULL},
	};
	g_autoptr(GOptionContext) ctx = g_option_context_new("- write a synthetic trace");
	g_option_context_add_main_entries(ctx, entries, NULL);
	GError *error = NULL;
	if (!g_option_context_parse(ctx, &argc, &argv, &error) || !out || n <= 0 || live < 0 ||
	    live > G_MAXINT32 / 4) {
		fprintf(stderr, "gen-trace: %s\n",
			error ? error->message
			      : "-o FILE is required, -n N above 0, -l LIVE at most 536870911");
		return 2;
	}
	Gen g = {.snap = cca_snapshot_new(),
		 .target = (uint64_t)n,
		 .next_addr = UINT64_C(0x7f0000000000),
		 .time_us = 1700000000000000,
		 .rand = g_rand_new_with_seed((guint32)seed)};
	if (live > 0)
		g.target = (uint64_t)live * 4;
	g.events = g_array_sized_new(FALSE, FALSE, sizeof(CcaEvent), (guint)g.target + 4096);
	if (repeat && !gen_repeat(&g, repeat, &error)) {
		fprintf(stderr, "gen-trace: %s\n", error->message);
		return 1;
	}
	if (live > 0)
		gen_live(&g, (uint64_t)live);
	while (!repeat && !live && g.events->len < g.target) {
		int layers = 24 + g_rand_int_range(g.rand, 0, 48);
		gen_step(&g, layers, (uint64_t)g_rand_int_range(g.rand, 1, 9));
	}
	g.snap->source = g_strdup("synthetic");
	g.snap->n_devices = 1;
	g.snap->events = g_new0(GArray *, 1);
	g.snap->n_events = g_new0(uint64_t, 1);
	g.snap->events[0] = g.events;
	g.snap->n_events[0] = g.events->len;
	gboolean ok = cca_trace_write(g.snap, out, &error);
	if (!ok)
		fprintf(stderr, "gen-trace: %s\n", error->message);
	else
		printf("%s: %u events\n", out, g.events->len);
	g_rand_free(g.rand);
	cca_snapshot_free(g.snap);
	g_free(out);
	g_free(repeat);
	return ok ? 0 : 1;
}
