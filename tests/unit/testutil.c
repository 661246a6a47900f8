/* testutil.c - fixture lookup shared by the test programs. */
#include "config.h"

#include "testutil.h"

#include "device.h"
#include "simdevice.h"
#include "snapshot.h"
#include "snapshot_load.h"

#include <string.h>

static const char *
source_dir(void)
{
	const char *dir = g_getenv("top_srcdir");
	return dir ? dir : ".";
}

char *
cca_test_trace_path(const char *relative)
{
	return g_build_filename(source_dir(), "traces", relative, NULL);
}

char *
cca_test_data_path(const char *relative)
{
	return g_build_filename(source_dir(), "tests", "data", relative, NULL);
}

static const char *
json_value(const char *json, const char *key)
{
	g_autofree char *needle = g_strdup_printf("\"%s\": ", key);
	const char *at = strstr(json, needle);
	return at ? at + strlen(needle) : NULL;
}

gboolean
cca_test_json_int(const char *json, const char *key, gint64 *out)
{
	const char *v = json_value(json, key);
	if (!v || !(g_ascii_isdigit(*v) || *v == '-'))
		return FALSE;
	*out = g_ascii_strtoll(v, NULL, 10);
	return TRUE;
}

char *
cca_test_json_string(const char *json, const char *key)
{
	const char *v = json_value(json, key);
	if (!v || *v != '"')
		return NULL;
	const char *end = strchr(v + 1, '"');
	return end ? g_strndup(v + 1, end - v - 1) : NULL;
}

char *
cca_test_read_text(const char *path)
{
	char *text = NULL;
	GError *error = NULL;
	g_file_get_contents(path, &text, NULL, &error);
	g_assert_no_error(error);
	return text;
}

void
cca_test_push_event(GArray *events, CcaAction action, uint64_t addr, uint64_t size, int64_t time_us)
{
	CcaEvent ev = {.addr = addr, .size = size, .time_us = time_us, .action = action};
	g_array_append_val(events, ev);
}

static gint
compare_names(gconstpointer a, gconstpointer b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

GPtrArray *
cca_test_sorted_names(const char *dir, const char *prefix, const char *suffix, const char *except)
{
	GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
	GDir *d = g_dir_open(dir, 0, NULL);
	g_assert_nonnull(d);
	const char *name;
	while ((name = g_dir_read_name(d)))
		if (g_str_has_suffix(name, suffix) && g_str_has_prefix(name, prefix) &&
		    (except == NULL || !g_str_has_prefix(name, except)))
			g_ptr_array_add(names, g_strndup(name, strlen(name) - strlen(suffix)));
	g_dir_close(d);
	g_ptr_array_sort(names, compare_names);
	return names;
}

static void
test_run_free(gpointer data)
{
	CcaTestRun *run = data;
	g_free(run->name);
	g_free(run->workload);
	g_free(run->trace);
	g_free(run->json);
	g_free(run->default_trace);
	g_free(run);
}

GPtrArray *
cca_test_runs(gboolean whatif)
{
	g_autofree char *dir = cca_test_trace_path("pytorch-2.11");
	g_autofree char *run_dir = whatif ? g_build_filename(dir, "whatif", NULL) : g_strdup(dir);
	const char *prefix = whatif ? "replay." : "";
	/* h200-*.json are the timing tables */
	GPtrArray *files = cca_test_sorted_names(run_dir, prefix, ".json", "h200-");
	GPtrArray *runs = g_ptr_array_new_with_free_func(test_run_free);
	for (guint i = 0; i < files->len; i++) {
		const char *file = g_ptr_array_index(files, i);
		CcaTestRun *run = g_new0(CcaTestRun, 1);
		run->name = g_strdup(file + strlen(prefix));
		run->workload = g_strndup(run->name, strcspn(run->name, "."));
		run->trace = g_strdup_printf("%s/%s.pickle.xz", run_dir, file);
		run->json = g_strdup_printf("%s/%s.json", run_dir, file);
		run->default_trace = g_strdup_printf("%s/%s.default.pickle.xz", dir, run->workload);
		g_ptr_array_add(runs, run);
	}
	g_ptr_array_unref(files);
	return runs;
}

void
cca_test_add_runs(const char *prefix, const GPtrArray *runs, GTestDataFunc func)
{
	for (guint i = 0; i < runs->len; i++) {
		const CcaTestRun *run = g_ptr_array_index(runs, i);
		g_autofree char *path = g_strdup_printf("%s/%s", prefix, run->name);
		g_test_add_data_func(path, run, func);
	}
}

void
cca_test_add_rows(const char *prefix, const void *rows, gsize n, gsize size, gsize name_offset,
		  GTestDataFunc func)
{
	for (gsize i = 0; i < n; i++) {
		const char *row = (const char *)rows + i * size;
		const char *name;
		memcpy(&name, row + name_offset, sizeof name);
		g_autofree char *path = g_strdup_printf("%s/%s", prefix, name);
		g_test_add_data_func(path, row, func);
	}
}

GRand *
cca_test_seeded_rand(guint32 seed)
{
	g_test_message("seed %u", seed);
	return g_rand_new_with_seed(seed);
}

void
cca_test_mutants_init(CcaTestMutants *m, const char *name, guint32 seed)
{
	m->rand = cca_test_seeded_rand(seed);
	m->sample = cca_test_read_sample(name, &m->len);
	m->buf = g_malloc(m->len);
}

guint8 *
cca_test_mutants_next(CcaTestMutants *m, int flips)
{
	memcpy(m->buf, m->sample, m->len);
	for (int f = 0; f < flips; f++) {
		/* the value drawn before the place, as the seeds always gave */
		guint8 value = (guint8)g_rand_int_range(m->rand, 0, 256);
		m->buf[g_rand_int_range(m->rand, 0, (gint32)m->len)] = value;
	}
	return m->buf;
}

void
cca_test_mutants_clear(CcaTestMutants *m)
{
	g_rand_free(m->rand);
	g_free(m->sample);
	g_free(m->buf);
}

CcaSnapshot *
cca_test_load(const char *path)
{
	g_autoptr(GError) error = NULL;
	CcaSnapshot *snap = cca_snapshot_load(path, &error);
	g_assert_no_error(error);
	g_assert_nonnull(snap);
	return snap;
}

void
cca_test_assert_newer_equal(const CcaSnapshot *a, const CcaSnapshot *b)
{
	const CcaSnapshotNewer *x = &a->newer, *y = &b->newer;
	g_assert_cmpuint(x->pool_id_entries, ==, y->pool_id_entries);
	g_assert_cmpuint(x->annotate_entries, ==, y->annotate_entries);
	g_assert_cmpuint(x->forward_frames, ==, y->forward_frames);
	g_assert_cmpint(x->host_segments, ==, y->host_segments);
	g_assert_cmpint(x->host_traces, ==, y->host_traces);
	g_assert_cmpint(x->trace_alloc_overflowed, ==, y->trace_alloc_overflowed);
	g_assert_cmpint(x->trace_alloc_max_entries, ==, y->trace_alloc_max_entries);
	g_assert_cmpuint(x->rendered_metadata, ==, y->rendered_metadata);
	g_assert_cmpuint(x->n_unknown, ==, y->n_unknown);
	for (uint32_t i = 0; i < x->n_unknown; i++) {
		g_assert_cmpstr(x->unknown_name[i], ==, y->unknown_name[i]);
		g_assert_cmpuint(x->unknown_count[i], ==, y->unknown_count[i]);
	}
	g_assert_cmpuint(x->unknown_more, ==, y->unknown_more);
}

guint8 *
cca_test_read_sample(const char *name, gsize *len)
{
	g_autofree char *rel = g_strdup_printf("pytorch-2.11/samples/%s", name);
	g_autofree char *path = cca_test_trace_path(rel);
	guint8 *bytes = NULL;
	g_assert_true(g_file_get_contents(path, (char **)&bytes, len, NULL));
	return bytes;
}

CcaSnapshot *
cca_test_load_trace(const char *name)
{
	g_autofree char *rel = g_strdup_printf("pytorch-2.11/%s.pickle.xz", name);
	g_autofree char *path = cca_test_trace_path(rel);
	return cca_test_load(path);
}

CcaSnapshot *
cca_test_snapshot_new(const char *source, GArray *events)
{
	CcaSnapshot *snap = cca_snapshot_new();
	snap->source = g_strdup(source);
	snap->n_devices = 1;
	snap->events = g_new0(GArray *, 1);
	snap->n_events = g_new0(uint64_t, 1);
	snap->events[0] = events ? events : g_array_new(FALSE, TRUE, sizeof(CcaEvent));
	snap->n_events[0] = snap->events[0]->len;
	return snap;
}

void
cca_test_replay_checked(const CcaSnapshot *snap, const CcaReplayOptions *opt, CcaReplayResult *res)
{
	CcaReplayOptions checked;
	if (opt != NULL)
		checked = *opt;
	else
		cca_replay_options_init(&checked);
	checked.check = TRUE;
	GError *error = NULL;
	g_assert_true(cca_replay_run(snap, &checked, res, &error));
	g_assert_no_error(error);
	if (!res->check_passed)
		g_test_message("%s: check: %s", snap->source, res->check_message);
	g_assert_true(res->check_passed);
}

double
cca_test_memory_fraction(const char *json)
{
	gint64 cap = 0, total = (gint64)CCA_H200_TOTAL_MEMORY;
	cca_test_json_int(json, "cap_bytes", &cap);
	cca_test_json_int(json, "total_memory", &total);
	if (cap == 0)
		return 0.0;
	double f = (double)cap / (double)total;
	return f < 1.0 ? f : 1.0;
}
