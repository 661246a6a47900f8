/* test-fleet.c - the fleet engine (sim/study/fleet.c): which shard the
 * engines' environments name, that content-hash shards cover every
 * snapshot once for any N, a real job's rows, and a merge that does not
 * depend on the order or repetition of its rows. */
#include "config.h"

#include <glib.h>
#include <jansson.h>
#include <string.h>

#include "fleet.h"
#include "replay.h"
#include "testutil.h"
#include "text.h"

typedef struct {
	const char *name;
	const char *env[8]; /* "K=V", NULL-terminated */
	guint shards;	    /* --shards */
	gboolean ok;
	guint index, count;
	const char *source;
} EnvCase;

static const EnvCase env_cases[] = {
	{"none", {NULL}, 0, TRUE, 0, 1, "none"},
	{"slurm",
	 {"SLURM_ARRAY_TASK_ID=5", "SLURM_ARRAY_TASK_COUNT=4", "SLURM_ARRAY_TASK_MIN=2", NULL},
	 0,
	 TRUE,
	 3,
	 4,
	 "SLURM_ARRAY_TASK_ID"},
	{"slurm-step",
	 {"SLURM_ARRAY_TASK_ID=6", "SLURM_ARRAY_TASK_COUNT=3", "SLURM_ARRAY_TASK_MIN=2",
	  "SLURM_ARRAY_TASK_STEP=2", NULL},
	 0,
	 TRUE,
	 2,
	 3,
	 "SLURM_ARRAY_TASK_ID"},
	{"slurm-off-step",
	 {"SLURM_ARRAY_TASK_ID=5", "SLURM_ARRAY_TASK_COUNT=3", "SLURM_ARRAY_TASK_MIN=2",
	  "SLURM_ARRAY_TASK_STEP=2", NULL},
	 0,
	 FALSE,
	 0,
	 0,
	 NULL},
	{"slurm-no-count", {"SLURM_ARRAY_TASK_ID=1", NULL}, 0, FALSE, 0, 0, NULL},
	{"slurm-before-mpi",
	 {"SLURM_ARRAY_TASK_ID=0", "SLURM_ARRAY_TASK_COUNT=2", "OMPI_COMM_WORLD_RANK=3",
	  "OMPI_COMM_WORLD_SIZE=4", NULL},
	 0,
	 TRUE,
	 0,
	 2,
	 "SLURM_ARRAY_TASK_ID"},
	{"k8s", {"JOB_COMPLETION_INDEX=7", NULL}, 8, TRUE, 7, 8, "JOB_COMPLETION_INDEX"},
	{"k8s-no-count", {"JOB_COMPLETION_INDEX=0", NULL}, 0, FALSE, 0, 0, NULL},
	{"k8s-over", {"JOB_COMPLETION_INDEX=8", NULL}, 8, FALSE, 0, 0, NULL},
	{"ompi",
	 {"OMPI_COMM_WORLD_RANK=3", "OMPI_COMM_WORLD_SIZE=4", NULL},
	 0,
	 TRUE,
	 3,
	 4,
	 "OMPI_COMM_WORLD_RANK"},
	{"ompi-bad",
	 {"OMPI_COMM_WORLD_RANK=4", "OMPI_COMM_WORLD_SIZE=4", NULL},
	 0,
	 FALSE,
	 0,
	 0,
	 NULL},
	{"pmi", {"PMI_RANK=1", "PMI_SIZE=2", NULL}, 0, TRUE, 1, 2, "PMI_RANK"},
	{"pmi-garbage", {"PMI_RANK=x", "PMI_SIZE=2", NULL}, 0, FALSE, 0, 0, NULL},
	{"shards-alone", {NULL}, 4, FALSE, 0, 0, NULL},
};

static void
test_env_case(gconstpointer data)
{
	const EnvCase *c = data;
	guint index = 99, count = 99;
	const char *source = NULL;
	g_autoptr(GError) error = NULL;
	gboolean ok = cca_fleet_shard_from_env(c->env, c->shards, &index, &count, &source, &error);
	g_assert_cmpint(ok, ==, c->ok);
	if (!ok) {
		g_assert_nonnull(error);
		g_assert_null(strchr(error->message, '\n'));
		return;
	}
	g_assert_cmpuint(index, ==, c->index);
	g_assert_cmpuint(count, ==, c->count);
	g_assert_cmpstr(source, ==, c->source);
}

/* For N of 1 to 64, each of 1000 hashes lands on exactly one shard in [0, N). */
static void
test_shard_cover(void)
{
	for (guint n = 1; n <= 64; n++)
		for (guint k = 0; k < 1000; k++) {
			g_autofree char *text = g_strdup_printf("%u", k);
			g_autofree char *sha =
				g_compute_checksum_for_string(G_CHECKSUM_SHA256, text, -1);
			guint hits = 0;
			for (guint i = 0; i < n; i++)
				hits += cca_fleet_shard_of(sha, n) == i;
			g_assert_cmpuint(hits, ==, 1);
		}
}

/* A real job: seedfrag.cap under its cap gives its own row plus the
 * grid's, each with the file's identity; merged in any order and
 * repeated, the report is the same. */
static void
test_job_and_merge(void)
{
	g_autofree char *path = cca_test_trace_path("pytorch-2.11/seedfrag.cap.pickle.xz");
	CcaFleetJob job = {.path = path, .cap = 695475968};
	const char *sets[] = {"expandable_segments=True,False", NULL};
	CcaFleetOptions opt = {.sets = sets};
	g_autoptr(GString) rows = g_string_new(NULL);
	cca_fleet_job_run(&job, &opt, NULL, rows);
	g_test_message("%s", rows->str);
	g_auto(GStrv) lines = g_strsplit(rows->str, "\n", -1);
	g_assert_cmpuint(g_strv_length(lines), ==, 3); /* recorded, exp:True, "" at the end */
	uint64_t size;
	char sha[65];
	g_assert_true(cca_fleet_identify(path, &size, sha, NULL));
	for (guint i = 0; i < 2; i++) {
		g_assert_nonnull(strstr(lines[i], sha));
		g_assert_nonnull(strstr(lines[i], "\"cap\":695475968"));
	}
	g_autoptr(CcaFleetMerge) a = cca_fleet_merge_new();
	g_autoptr(CcaFleetMerge) b = cca_fleet_merge_new();
	for (guint i = 0; i < 2; i++)
		g_assert_true(cca_fleet_merge_add(a, lines[i], strlen(lines[i]), "a", i + 1, NULL));
	for (guint i = 0; i < 4; i++) /* reversed, and each twice */
		g_assert_true(cca_fleet_merge_add(b, lines[1 - i % 2], strlen(lines[1 - i % 2]),
						  "b", i, NULL));
	g_autoptr(GString) ra = g_string_new(NULL);
	g_autoptr(GString) rb = g_string_new(NULL);
	cca_fleet_merge_print_text(a, ra, CCA_TEXT_COLUMNS);
	cca_fleet_merge_print_text(b, rb, CCA_TEXT_COLUMNS);
	g_assert_cmpstr(ra->str, ==, rb->str);
	g_assert_nonnull(strstr(ra->str, "Fleet: 1 job replayed under 2 settings"));
}

static void
test_bad_rows(void)
{
	static const char *const bad[] = {"", "{", "[]", "{\"path\":\"a\"}",
					  "{\"path\":\"a\",\"rows\":1,\"device\":0}"};
	g_autoptr(CcaFleetMerge) m = cca_fleet_merge_new();
	for (guint i = 0; i < G_N_ELEMENTS(bad); i++) {
		g_autoptr(GError) error = NULL;
		g_assert_false(
			cca_fleet_merge_add(m, bad[i], strlen(bad[i]), "rows.jsonl", 7, &error));
		g_assert_true(g_str_has_prefix(error->message, "rows.jsonl:7: "));
	}
}

/* Sums of saved memory cannot wrap: 33000 jobs whose own settings reserve
 * the most a replay can (2^48 bytes) and another setting nothing save
 * just past 2^63 bytes in all, held at INT64_MAX, so that setting stays the
 * answer (a wrapped sum, negative, made it no answer). */
static void
test_saved_saturates(void)
{
	g_autoptr(CcaFleetMerge) m = cca_fleet_merge_new();
	for (guint j = 0; j < 33000; j++)
		for (int own = 0; own < 2; own++) {
			g_autofree char *row = g_strdup_printf(
				"{\"path\":\"/j/%u.pickle\",\"size\":1,\"sha256\":\"%064x\",\"rows\":2,"
				"\"device\":0,\"setting\":\"%s\",\"recorded\":%s,\"fits\":true,"
				"\"oom_event\":null,\"peak_reserved\":%" G_GUINT64_FORMAT ","
				"\"own_device\":{\"gpu\":\"H200\",\"total\":1,\"cap\":null,"
				"\"limit\":1,\"source\":\"test\"}}",
				j, j, own ? "" : "expandable_segments:True", own ? "true" : "false",
				own ? (guint64)CCA_REPLAY_MAX_RESERVED : 0);
			g_assert_true(cca_fleet_merge_add(m, row, strlen(row), "rows", j, NULL));
		}
	g_autoptr(GString) out = g_string_new(NULL);
	cca_fleet_merge_print_json(m, out);
	json_error_t je;
	json_t *doc = json_loads(out->str, 0, &je);
	json_t *answer = json_object_get(doc, "answer");
	g_assert_true(json_is_object(answer));
	g_assert_cmpstr(json_string_value(json_object_get(answer, "setting")), ==,
			"expandable_segments:True");
	g_assert_cmpint(json_integer_value(json_object_get(answer, "saved_total")), ==, INT64_MAX);
	json_decref(doc);
}

/* A row out of range is no fleet row: a peak past what a replay can
 * reserve, a negative size, a sha256 that is no SHA-256. */
static void
test_rows_in_range(void)
{
	static const char *const bad[] = {
		"\"peak_reserved\":281474976710657", /* 2^48 + 1 */
		"\"peak_reserved\":-1",
		"\"peak_reserved\":9223372036854775807",
		"\"size\":-1",
		"\"device\":-1",
		"\"rows\":0",
		"\"sha256\":\"xyz\"",
		"\"fits\":1",
		"\"own_device\":null",
	};
	for (guint i = 0; i <= G_N_ELEMENTS(bad); i++) {
		/* BAD[i] comes first: JSON_REJECT_DUPLICATES refuses the row
		 * unless the good field of that name is left out */
		/* the last round: the good fields alone, a row */
		const char *b = i < G_N_ELEMENTS(bad) ? bad[i] : "\"x\":0";
		const char *key_end = strchr(b + 1, '"');
		g_autofree char *key = g_strndup(b, (gsize)(key_end - b) + 1);
		g_autoptr(GString) row = g_string_new("{");
		g_string_append(row, b);
		static const char *const good[] = {
			"\"path\":\"/a.pickle\"",
			"\"size\":1",
			"\"sha256\":\"0000000000000000000000000000000000000000000000000000000000000000\"",
			"\"rows\":1",
			"\"device\":0",
			"\"setting\":\"\"",
			"\"recorded\":true",
			"\"fits\":true",
			"\"peak_reserved\":0",
			"\"own_device\":{\"gpu\":\"H200\",\"limit\":1}",
		};
		for (guint g = 0; g < G_N_ELEMENTS(good); g++)
			if (!g_str_has_prefix(good[g], key))
				g_string_append_printf(row, ",%s", good[g]);
		g_string_append_c(row, '}');
		g_autoptr(GError) error = NULL;
		g_test_message("%s", row->str);
		g_autofree char *k = cca_fleet_row_key(row->str, row->len, NULL, NULL, &error);
		if (i == G_N_ELEMENTS(bad)) {
			g_assert_no_error(error);
			g_assert_nonnull(k);
			continue;
		}
		g_assert_null(k);
		g_assert_nonnull(strstr(error->message, "not a fleet row: "));
	}
}

int
main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	CCA_TEST_ADD_ROWS("/fleet/env", env_cases, name, test_env_case);
	g_test_add_func("/fleet/shard-cover", test_shard_cover);
	g_test_add_func("/fleet/job-and-merge", test_job_and_merge);
	g_test_add_func("/fleet/bad-rows", test_bad_rows);
	g_test_add_func("/fleet/saved-saturates", test_saved_saturates);
	g_test_add_func("/fleet/rows-in-range", test_rows_in_range);
	return g_test_run();
}
