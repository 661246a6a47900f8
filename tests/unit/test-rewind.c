/* test-rewind.c - traces that start mid-run.
 *
 * A real trace with its first part cut off (the final `segments` kept) is
 * what a bounded ring buffer records.  Replayed with the start rebuilt
 * from the final state, the model must produce exactly the entries of the
 * remaining window (checked entry by entry by --check, which also holds
 * for the full trace, so they equal the full replay's), and the same final
 * segments.
 */
#include "config.h"

#include <glib.h>
#include <stdlib.h>

#include "replay.h"
#include "simdevice.h"
#include "rewind.h"
#include "snapshot_load.h"
#include "testutil.h"

typedef struct {
	const char *trace;
	double cut;	 /* fraction of the events removed from the front */
	double fraction; /* the run's memory fraction */
} Cut;

static CcaSnapshot *
load_cut(const Cut *c, guint *removed)
{
	g_autofree char *path = cca_test_trace_path(c->trace);
	GError *error = NULL;
	CcaSnapshot *snap = cca_snapshot_load(path, &error);
	g_assert_no_error(error);
	g_assert_nonnull(snap->events[0]);
	*removed = (guint)(snap->events[0]->len * c->cut);
	g_array_remove_range(snap->events[0], 0, *removed);
	snap->n_events[0] = snap->events[0]->len;
	return snap;
}

static void
test_cut_replays_the_window(gconstpointer data)
{
	const Cut *c = data;
	guint removed;
	g_autoptr(CcaSnapshot) snap = load_cut(c, &removed);
	CcaReplayOptions opt;
	cca_replay_options_init(&opt);
	opt.memory_fraction = c->fraction;
	CcaReplayResult res;
	cca_test_replay_checked(snap, &opt, &res);
	g_test_message("%s cut %u events: start rebuilt with %" G_GUINT64_FORMAT
		       " segments and %" G_GUINT64_FORMAT " live blocks",
		       c->trace, removed, res.start_segments, res.start_blocks);
	g_assert_true(res.start_reconstructed);
	g_assert_cmpuint(res.start_blocks_unplaced, ==, 0);
	g_assert_cmpuint(res.unknown_frees, ==, 0);
	g_assert_cmpuint(res.check_compared, ==, snap->n_events[0]);
	cca_replay_result_clear(&res);
}

static void
test_whole_trace_is_not_mid_run(void)
{
	g_autoptr(CcaSnapshot) snap = cca_test_load_trace("bert.default");
	GError *error = NULL;
	CcaSettings settings;
	cca_settings_init(&settings);
	CcaStartState start;
	g_assert_true(cca_rewind_start_state(snap, 0, &settings, &start, &error));
	g_assert_false(start.mid_run);
	g_assert_cmpuint(start.segments->len, ==, 0);
	cca_rewind_start_state_clear(&start);
	cca_settings_clear(&settings);
}

static void
test_start_state_of_cut_trace(void)
{
	/* seedfrag keeps every 512x512 tensor: 100 of them live early on */
	Cut c = {"pytorch-2.11/seedfrag.default.pickle.xz", 0.5, 0};
	guint removed;
	g_autoptr(CcaSnapshot) snap = load_cut(&c, &removed);
	CcaSettings settings;
	cca_settings_init(&settings);
	CcaStartState start;
	GError *error = NULL;
	g_assert_true(cca_rewind_start_state(snap, 0, &settings, &start, &error));
	g_assert_true(start.mid_run);
	g_assert_cmpuint(start.blocks->len, >, 0);
	for (guint i = 1; i < start.blocks->len; i++) {
		const CcaStartBlock *a = &g_array_index(start.blocks, CcaStartBlock, i - 1);
		const CcaStartBlock *b = &g_array_index(start.blocks, CcaStartBlock, i);
		g_assert_cmpuint(a->address + a->size, <=, b->address);
	}
	cca_rewind_start_state_clear(&start);
	cca_settings_clear(&settings);
}

static const Cut cuts[] = {
	{"pytorch-2.11/seedfrag.default.pickle.xz", 0.5, 0},
	{"pytorch-2.11/resnet152.default.pickle.xz", 0.5, 0},
	{"pytorch-2.11/bert.default.pickle.xz", 0.5, 0},
	{"pytorch-2.11/gpt2gen.default.pickle.xz", 0.5, 0},
	{"pytorch-2.11/multistream.default.pickle.xz", 0.5, 0},
	{"pytorch-2.11/dyninfer.default.pickle.xz", 0.5, 0},
	{"pytorch-2.11/bert.ms128.pickle.xz", 0.5, 0},
	{"pytorch-2.11/gpt2gen.rp4.pickle.xz", 0.3, 0},
	{"pytorch-2.11/multistream.ms512.pickle.xz", 0.5, 0},
	/* expandable segments in use at the start: reservations and mapped
	 * pages rebuilt too */
	{"pytorch-2.11/bert.exp.pickle.xz", 0.5, 0},
	{"pytorch-2.11/gpt2gen.exp.pickle.xz", 0.3, 0},
	{"pytorch-2.11/multistream.exp.pickle.xz", 0.5, 0},
	{"pytorch-2.11/resnet152.exp.pickle.xz", 0.8, 0},
	/* capped: 1.10 x the default run's peak allocated (see the JSON) */
	{"pytorch-2.11/seedfrag.cap.pickle.xz", 0.5, 695475968.0 / (double)CCA_H200_TOTAL_MEMORY},
	{"pytorch-2.11/dyninfer.capms.pickle.xz", 0.5, 927911987.0 / (double)CCA_H200_TOTAL_MEMORY},
};

int
main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/rewind/whole-trace-is-not-mid-run", test_whole_trace_is_not_mid_run);
	g_test_add_func("/rewind/start-state-of-cut-trace", test_start_state_of_cut_trace);
	for (guint i = 0; i < G_N_ELEMENTS(cuts); i++) {
		g_autofree char *base = g_path_get_basename(cuts[i].trace);
		g_autofree char *path = g_strdup_printf("/rewind/cut-replays-the-window/%s", base);
		g_test_add_data_func(path, &cuts[i], test_cut_replays_the_window);
	}
	return g_test_run();
}
