/* test-replay.c - the model against PyTorch 2.11 itself.
 *
 * Every W.C in traces/pytorch-2.11 was recorded by torch 2.11 on an H200;
 * W.C.json holds what torch.cuda.memory_stats() reported at the end of the
 * same run, and the cap the run had.  /replay/recorded/W.C replays the
 * trace under its recorded settings with --check (every trace entry and
 * the final segments) and compares all 122 memory_stats keys.
 * /replay/whatif/W.C replays W.default under settings C with the segment
 * addresses of whatif/replay.W.C (the same requests replayed through the
 * real allocator) and compares the reserved-memory figures of
 * whatif/replay.W.C.json.
 */
#include "config.h"

#include <glib.h>
#include <string.h>

#include "engine.h"
#include "settings.h"
#include "snapshot.h"
#include "stats.h"
#include "testutil.h"

#define H200_TOTAL G_GINT64_CONSTANT(150109880320)

typedef struct {
	char *name;  /* W.C */
	char *trace; /* the pickle */
	char *json;  /* memory_stats of the real run */
	char *default_trace; /* what-if: W.default's pickle */
} Case;

static char *
read_text(const char *path)
{
	char *text = NULL;
	GError *error = NULL;
	g_file_get_contents(path, &text, NULL, &error);
	g_assert_no_error(error);
	return text;
}

/* The run's memory fraction: min(1, cap / total), as capture.py set it. */
static double
fraction_of(const char *json)
{
	gint64 cap = 0, total = H200_TOTAL;
	cca_test_json_int(json, "cap_bytes", &cap);
	cca_test_json_int(json, "total_memory", &total);
	if (cap == 0)
		return 0.0;
	double f = (double)cap / (double)total;
	return f < 1.0 ? f : 1.0;
}

typedef struct {
	const char *json;
	const char *const *only; /* NULL: every key */
	GString *diffs;
	guint compared;
} Compare;

static gboolean
key_selected(const Compare *c, const char *name)
{
	if (!c->only)
		return TRUE;
	for (const char *const *p = c->only; *p; p++)
		if (g_str_has_prefix(name, *p))
			return TRUE;
	return FALSE;
}

static void
compare_one(const char *name, int64_t value, void *data)
{
	Compare *c = data;
	if (!key_selected(c, name))
		return;
	gint64 expected;
	g_assert_true(cca_test_json_int(c->json, name, &expected));
	c->compared++;
	if (expected != value)
		g_string_append_printf(c->diffs, " %s: torch %" G_GINT64_FORMAT " model %" G_GINT64_FORMAT
					 ";",
				       name, expected, value);
}

static void
assert_stats_equal(const CcaStats *stats, const char *json, const char *const *only)
{
	Compare c = {json, only, g_string_new(NULL), 0};
	cca_stats_foreach(stats, compare_one, &c);
	if (c.diffs->len)
		g_test_message("memory_stats differ:%s", c.diffs->str);
	g_assert_cmpstr(c.diffs->str, ==, "");
	g_assert_cmpuint(c.compared, >, 0);
	g_string_free(c.diffs, TRUE);
}

static void
test_recorded(gconstpointer data)
{
	const Case *tc = data;
	g_autofree char *json = read_text(tc->json);
	GError *error = NULL;
	g_autoptr(CcaSnapshot) snap = cca_snapshot_load(tc->trace, &error);
	g_assert_no_error(error);
	CcaReplayOptions opt;
	cca_replay_options_init(&opt);
	opt.memory_fraction = fraction_of(json);
	opt.check = TRUE;
	CcaReplayResult res;
	g_assert_true(cca_replay_run(snap, &opt, &res, &error));
	g_assert_no_error(error);
	if (!res.check_passed)
		g_test_message("check: %s", res.check_message);
	g_assert_true(res.check_passed);
	assert_stats_equal(&res.stats, json, NULL);
	cca_replay_result_clear(&res);
}

static const char *const reserved_keys[] = {
	"reserved_bytes.", "segment.", "num_device_alloc", "num_device_free",
	"num_alloc_retries", "num_ooms", NULL,
};

static void
test_whatif(gconstpointer data)
{
	const Case *tc = data;
	g_autofree char *json = read_text(tc->json);
	g_autofree char *conf = cca_test_json_string(json, "conf");
	g_assert_nonnull(conf);
	CcaSettings settings;
	cca_settings_init(&settings);
	GError *error = NULL;
	g_assert_true(cca_settings_parse(&settings, conf, &error));
	g_autoptr(CcaSnapshot) snap = cca_snapshot_load(tc->default_trace, &error);
	g_assert_no_error(error);
	g_autoptr(CcaSnapshot) addresses = cca_snapshot_load(tc->trace, &error);
	g_assert_no_error(error);
	CcaReplayOptions opt;
	cca_replay_options_init(&opt);
	opt.settings = &settings;
	opt.memory_fraction = fraction_of(json);
	opt.addresses_from = addresses;
	CcaReplayResult res;
	g_assert_true(cca_replay_run(snap, &opt, &res, &error));
	g_assert_no_error(error);
	assert_stats_equal(&res.stats, json, reserved_keys);
	cca_replay_result_clear(&res);
	cca_settings_clear(&settings);
}

static void
case_free(gpointer data)
{
	Case *tc = data;
	g_free(tc->name);
	g_free(tc->trace);
	g_free(tc->json);
	g_free(tc->default_trace);
	g_free(tc);
}

static gint
compare_names(gconstpointer a, gconstpointer b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static GPtrArray *
sorted_names(const char *dir, const char *prefix)
{
	GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
	GDir *d = g_dir_open(dir, 0, NULL);
	g_assert_nonnull(d);
	const char *name;
	while ((name = g_dir_read_name(d)))
		if (g_str_has_suffix(name, ".json") && g_str_has_prefix(name, prefix) &&
		    !g_str_has_prefix(name, "h200-"))
			g_ptr_array_add(names, g_strndup(name, strlen(name) - 5));
	g_dir_close(d);
	g_ptr_array_sort(names, compare_names);
	return names;
}

int
main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_set_nonfatal_assertions();
	g_autofree char *dir = cca_test_trace_path("pytorch-2.11");
	g_autofree char *whatif_dir = g_build_filename(dir, "whatif", NULL);
	GPtrArray *cases = g_ptr_array_new_with_free_func(case_free);

	GPtrArray *names = sorted_names(dir, "");
	for (guint i = 0; i < names->len; i++) {
		const char *name = g_ptr_array_index(names, i);
		Case *tc = g_new0(Case, 1);
		tc->name = g_strdup(name);
		tc->trace = g_strdup_printf("%s/%s.pickle.xz", dir, name);
		tc->json = g_strdup_printf("%s/%s.json", dir, name);
		g_ptr_array_add(cases, tc);
		g_autofree char *path = g_strdup_printf("/replay/recorded/%s", name);
		g_test_add_data_func(path, tc, test_recorded);
	}
	g_ptr_array_free(names, TRUE);

	names = sorted_names(whatif_dir, "replay.");
	for (guint i = 0; i < names->len; i++) {
		const char *name = g_ptr_array_index(names, i);
		const char *wc = name + strlen("replay.");
		Case *tc = g_new0(Case, 1);
		tc->name = g_strdup(wc);
		tc->trace = g_strdup_printf("%s/%s.pickle.xz", whatif_dir, name);
		tc->json = g_strdup_printf("%s/%s.json", whatif_dir, name);
		g_autofree char *workload = g_strndup(wc, strchr(wc, '.') - wc);
		tc->default_trace = g_strdup_printf("%s/%s.default.pickle.xz", dir, workload);
		g_ptr_array_add(cases, tc);
		g_autofree char *path = g_strdup_printf("/replay/whatif-recorded/%s", wc);
		g_test_add_data_func(path, tc, test_recorded);
		g_autofree char *path2 = g_strdup_printf("/replay/whatif/%s", wc);
		g_test_add_data_func(path2, tc, test_whatif);
	}
	g_ptr_array_free(names, TRUE);

	int status = g_test_run();
	g_ptr_array_free(cases, TRUE);
	return status;
}
