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
 */
#include "config.h"

#include <glib.h>
#include <stdio.h>

#include "snapshot.h"
#include "trace.h"

#define SIDE_STREAM UINT64_C(0x5a5a000)

typedef struct {
	CcaSnapshot *snap;
	GArray *events;
	uint64_t target;
	uint64_t next_addr; /* unique fake addresses, 512-aligned */
	int64_t time_us;
	GRand *rand;
} Gen;

static uint64_t
gen_alloc(Gen *g, uint64_t size, uint64_t stream)
{
	uint64_t addr = g->next_addr;
	g->next_addr += (size + 511) / 512 * 512 + 512;
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

int
main(int argc, char **argv)
{
	gint64 n = 10000000;
	gint seed = 1;
	char *out = NULL;
	GOptionEntry entries[] = {
		{"events", 'n', 0, G_OPTION_ARG_INT64, &n, "Number of events (at least)", "N"},
		{"seed", 's', 0, G_OPTION_ARG_INT, &seed, "Random seed", "SEED"},
		{"output", 'o', 0, G_OPTION_ARG_FILENAME, &out, "Output msgpack trace", "FILE"},
		{NULL, 0, 0, 0, NULL, NULL, NULL},
	};
	g_autoptr(GOptionContext) ctx = g_option_context_new("- write a synthetic trace");
	g_option_context_add_main_entries(ctx, entries, NULL);
	GError *error = NULL;
	if (!g_option_context_parse(ctx, &argc, &argv, &error) || !out || n <= 0) {
		fprintf(stderr, "gen-trace: %s\n", error ? error->message : "-o FILE is required");
		return 2;
	}
	Gen g = {.snap = cca_snapshot_new(),
		 .target = (uint64_t)n,
		 .next_addr = UINT64_C(0x7f0000000000),
		 .time_us = 1700000000000000,
		 .rand = g_rand_new_with_seed((guint32)seed)};
	g.events = g_array_sized_new(FALSE, FALSE, sizeof(CcaEvent), (guint)n + 4096);
	while (g.events->len < g.target) {
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
	return ok ? 0 : 1;
}
