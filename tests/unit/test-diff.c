/* test-diff.c - two replays side by side (/diff/...).
 *
 * Identical settings report no difference; different ones report the
 * first entry after which reserved bytes part (checked against an
 * independent replay with its own observer), and the peak's difference
 * adds up from the groups it lists.
 */
#include "config.h"

#include <glib.h>
#include <string.h>

#include "diff.h"
#include "replay.h"
#include "settings.h"
#include "snapshot.h"
#include "testutil.h"

static void
options_for(CcaReplayOptions *opt, CcaSettings *settings, const char *conf)
{
	cca_replay_options_init(opt);
	if (!conf)
		return;
	GError *error = NULL;
	cca_settings_init(settings);
	g_assert_true(cca_settings_parse(settings, conf, &error));
	opt->settings = settings;
}

static void
test_identical(void)
{
	g_autoptr(CcaSnapshot) snap = cca_test_load_trace("seedfrag.default");
	CcaReplayOptions a, b;
	CcaSettings sa = {0}, sb = {0};
	options_for(&a, &sa, NULL);
	options_for(&b, &sb, ""); /* the recorded settings, spelled out */
	CcaDiff diff;
	GError *error = NULL;
	g_assert_true(cca_diff_run(snap, &a, snap, &b, &diff, &error));
	g_assert_false(diff.differs);
	g_assert_cmpuint(diff.a.peak_reserved, ==, diff.b.peak_reserved);
	g_assert_cmpuint(diff.a.peak_event, ==, diff.b.peak_event);
	g_assert_cmpuint(diff.segments->len, ==, 0);
	g_assert_cmpuint(diff.requests->len, ==, 0);
	g_assert_cmpuint(diff.a.peak_live + diff.a.peak_free, ==, diff.a.peak_reserved);
	GString *out = g_string_new(NULL);
	CcaDiffReport report = {"A", "B", 0};
	cca_diff_print_text(&diff, &report, out);
	g_assert_nonnull(strstr(out->str, "do not differ"));
	g_string_truncate(out, 0);
	cca_diff_print_json(&diff, &report, out);
	g_assert_nonnull(strstr(out->str, "\"differs\": false, \"first_difference\": null"));
	g_string_free(out, TRUE);
	cca_diff_clear(&diff);
	cca_settings_clear(&sb);
}

/* Reserved bytes after each entry the observer sees, carried forward. */
typedef struct {
	GArray *reserved; /* uint64_t per trace index */
} Carry;

static void
carry_observe(void *data, uint64_t index, const CcaEvent *event, const CcaAllocator *alloc)
{
	Carry *c = data;
	uint64_t last =
		c->reserved->len ? g_array_index(c->reserved, uint64_t, c->reserved->len - 1) : 0;
	while (c->reserved->len < index)
		g_array_append_val(c->reserved, last);
	uint64_t now = cca_allocator_reserved(alloc);
	g_array_append_val(c->reserved, now);
}

static GArray *
carried(const CcaSnapshot *snap, const CcaReplayOptions *opt)
{
	CcaReplayOptions o = *opt;
	Carry c = {g_array_new(FALSE, FALSE, sizeof(uint64_t))};
	o.observer = carry_observe;
	o.observer_data = &c;
	CcaReplayResult res;
	GError *error = NULL;
	g_assert_true(cca_replay_run(snap, &o, &res, &error));
	cca_replay_result_clear(&res);
	return c.reserved;
}

static void
test_configs(void)
{
	g_autoptr(CcaSnapshot) snap = cca_test_load_trace("dyninfer.default");
	CcaReplayOptions a, b;
	CcaSettings sa = {0}, sb = {0};
	options_for(&a, &sa, "");
	options_for(&b, &sb, "max_split_size_mb:128");
	CcaDiff diff;
	GError *error = NULL;
	g_assert_true(cca_diff_run(snap, &a, snap, &b, &diff, &error));
	g_assert_true(diff.differs);
	g_assert_cmpuint(diff.reserved_a, !=, diff.reserved_b);
	/* an independent look at the two timelines */
	GArray *ra = carried(snap, &a), *rb = carried(snap, &b);
	guint n = MIN(ra->len, rb->len);
	g_assert_cmpuint(diff.first_event, <, n);
	for (guint i = 0; i < diff.first_event; i++)
		g_assert_cmpuint(g_array_index(ra, uint64_t, i), ==,
				 g_array_index(rb, uint64_t, i));
	g_assert_cmpuint(g_array_index(ra, uint64_t, diff.first_event), ==, diff.reserved_a);
	g_assert_cmpuint(g_array_index(rb, uint64_t, diff.first_event), ==, diff.reserved_b);
	g_array_free(ra, TRUE);
	g_array_free(rb, TRUE);
	/* the groups add up to the peaks' difference */
	int64_t seg = 0, req = 0, free_ = 0;
	for (guint i = 0; i < diff.segments->len; i++) {
		const CcaDiffGroup *g = &g_array_index(diff.segments, CcaDiffGroup, i);
		seg += (int64_t)g->bytes_b - (int64_t)g->bytes_a;
		free_ += (int64_t)g->free_b - (int64_t)g->free_a;
		if (i)
			g_assert_cmpuint(MAX(g->bytes_a, g->bytes_b) - MIN(g->bytes_a, g->bytes_b),
					 <=,
					 MAX((g - 1)->bytes_a, (g - 1)->bytes_b) -
						 MIN((g - 1)->bytes_a, (g - 1)->bytes_b));
	}
	for (guint i = 0; i < diff.requests->len; i++) {
		const CcaDiffGroup *g = &g_array_index(diff.requests, CcaDiffGroup, i);
		req += (int64_t)g->bytes_b - (int64_t)g->bytes_a;
	}
	g_assert_cmpint(seg, ==, (int64_t)diff.b.peak_reserved - (int64_t)diff.a.peak_reserved);
	g_assert_cmpint(req, ==, (int64_t)diff.b.peak_live - (int64_t)diff.a.peak_live);
	g_assert_cmpint(free_, ==, (int64_t)diff.b.peak_free - (int64_t)diff.a.peak_free);
	/* the timeline's peak is the memory_stats peak at an entry boundary */
	g_assert_cmpuint(diff.a.peak_reserved, <=,
			 (uint64_t)diff.a.result.stats.reserved_bytes[CCA_STAT_ALL].peak);
	g_assert_cmpuint(diff.b.peak_reserved, ==, UINT64_C(2755657728));
	GString *out = g_string_new(NULL);
	CcaDiffReport report = {"A", "B", 3};
	cca_diff_print_text(&diff, &report, out);
	g_test_message("%s", out->str);
	g_assert_nonnull(strstr(out->str, "first difference: after event"));
	g_assert_nonnull(strstr(out->str, "peak difference: B - A = +"));
	g_string_free(out, TRUE);
	cca_diff_clear(&diff);
	cca_settings_clear(&sa);
	cca_settings_clear(&sb);
}

/* Two traces: the default run and the expandable-segments run of bert. */
static void
test_two_traces(void)
{
	g_autoptr(CcaSnapshot) a_snap = cca_test_load_trace("multistream.default");
	g_autoptr(CcaSnapshot) b_snap = cca_test_load_trace("multistream.exp");
	CcaReplayOptions a, b;
	cca_replay_options_init(&a);
	cca_replay_options_init(&b);
	CcaDiff diff;
	GError *error = NULL;
	g_assert_true(cca_diff_run(a_snap, &a, b_snap, &b, &diff, &error));
	g_assert_true(diff.differs);
	g_assert_true(diff.have_event_b);
	g_assert_cmpint((int64_t)diff.a.peak_reserved, ==,
			diff.a.result.stats.reserved_bytes[CCA_STAT_ALL].peak);
	g_assert_cmpint((int64_t)diff.b.peak_reserved, ==,
			diff.b.result.stats.reserved_bytes[CCA_STAT_ALL].peak);
	cca_diff_clear(&diff);
}

int
main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/diff/identical", test_identical);
	g_test_add_func("/diff/configs", test_configs);
	g_test_add_func("/diff/two-traces", test_two_traces);
	return g_test_run();
}
