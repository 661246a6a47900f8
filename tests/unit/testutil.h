/* testutil.h - fixture lookup shared by the test programs. */
#ifndef CCA_TESTUTIL_H
#define CCA_TESTUTIL_H

#include <glib.h>

#include "replay.h"

/* Path of a fixture under the source tree's traces/ (e.g.
 * "pytorch-2.11/samples/snap_default_2.11.pickle").  Free with g_free(). */
char *cca_test_trace_path(const char *relative);

/* Path of a file under the source tree's tests/data/.  Free with g_free(). */
char *cca_test_data_path(const char *relative);


/* The whole text of PATH (the test fails if it cannot be read).  Free
 * with g_free(). */
char *cca_test_read_text(const char *path);

/* Appends to EVENTS an entry ACTION of SIZE bytes at ADDR, on stream 0,
 * recorded at TIME_US (CCA_TIME_NONE: untimed). */
void cca_test_push_event(GArray *events, CcaAction action, uint64_t addr, uint64_t size,
			 int64_t time_us);

/* The names in DIR that start with PREFIX and end with SUFFIX, not
 * starting with EXCEPT (NULL: none left out), each less SUFFIX, sorted.
 * Free with g_ptr_array_free(). */
GPtrArray *cca_test_sorted_names(const char *dir, const char *prefix, const char *suffix,
				 const char *except);

/* One run recorded in traces/pytorch-2.11: W.C, the workload W under
 * the settings C, or the what-if whatif/replay.W.C (W.default's requests
 * replayed under C through the real allocator). */
typedef struct {
	char *name;	     /* W.C */
	char *workload;	     /* W */
	char *trace;	     /* the run's pickle */
	char *json;	     /* the run's figures: memory_stats, cap, settings */
	char *default_trace; /* W.default's pickle */
} CcaTestRun;

/* The recorded runs (WHATIF: the what-if runs), sorted by name.  Free
 * with g_ptr_array_unref(). */
GPtrArray *cca_test_runs(gboolean whatif);

/* Registers a test PREFIX/NAME running FUNC with each CcaTestRun of RUNS,
 * NAME being the run's name. */
void cca_test_add_runs(const char *prefix, const GPtrArray *runs, GTestDataFunc func);

/* Registers a test PREFIX/NAME for each of the N rows of ROWS (SIZE
 * bytes each), NAME the string at NAME_OFFSET in the row, running FUNC
 * with the row. */
void cca_test_add_rows(const char *prefix, const void *rows, gsize n, gsize size, gsize name_offset,
		       GTestDataFunc func);

/* The same for the array ROWS, whose rows are named by their string
 * member FIELD. */
#define CCA_TEST_ADD_ROWS(prefix, rows, field, func)                                          \
	cca_test_add_rows((prefix), (rows), G_N_ELEMENTS(rows), sizeof((rows)[0]),            \
			  (gsize)((const char *)&(rows)[0].field - (const char *)&(rows)[0]), \
			  (func))

/* A random generator seeded with SEED, the seed said in the test's log
 * (to repeat a failure).  Free with g_rand_free(). */
GRand *cca_test_seeded_rand(guint32 seed);

/* Mutants of the sample traces/pytorch-2.11/samples/NAME: the sample's
 * LEN bytes, a buffer as long for the current mutant, and the seeded
 * generator making them (cca_test_seeded_rand()). */
typedef struct {
	guint8 *sample;
	guint8 *buf;
	gsize len;
	GRand *rand;
} CcaTestMutants;

void cca_test_mutants_init(CcaTestMutants *m, const char *name, guint32 seed);

/* The next mutant in M->buf: the sample with FLIPS bytes at random places
 * (the same place may come twice) set to random values. */
guint8 *cca_test_mutants_next(CcaTestMutants *m, int flips);

void cca_test_mutants_clear(CcaTestMutants *m);

/* Loads the trace at PATH (the test fails on error).  Free with
 * cca_snapshot_free(). */
struct CcaSnapshot *cca_test_load(const char *path);

/* The test fails unless A and B hold the same keys of releases after
 * 2.11 (CcaSnapshotNewer: counts, the unknown key names in order). */
void cca_test_assert_newer_equal(const struct CcaSnapshot *a, const struct CcaSnapshot *b);

/* The bytes of traces/pytorch-2.11/samples/NAME, *LEN of them (the test
 * fails if it cannot be read).  Free with g_free(). */
guint8 *cca_test_read_sample(const char *name, gsize *len);

/* Loads traces/pytorch-2.11/NAME.pickle.xz (the test fails on error).
 * Free with cca_snapshot_free(). */
struct CcaSnapshot *cca_test_load_trace(const char *name);

/* The memory fraction of the run JSON describes: min(1, cap_bytes /
 * total_memory), the H200's total when the JSON has none, 0 without a
 * cap (as capture.py and torch_replay.py set it). */
double cca_test_memory_fraction(const char *json);

/* A new snapshot of one device named SOURCE whose events are EVENTS
 * (taken; NULL: a new empty array).  Free with cca_snapshot_free(). */
struct CcaSnapshot *cca_test_snapshot_new(const char *source, GArray *events);

/* Replays SNAP with OPT (NULL: the defaults) and --check into RES, which
 * the caller clears with cca_replay_result_clear(): the test fails when
 * the replay fails or its check finds a difference (said in the log). */
void cca_test_replay_checked(const struct CcaSnapshot *snap, const CcaReplayOptions *opt,
			     CcaReplayResult *res);

/* Finds "KEY": <integer> in the flat JSON text JSON (the memory_stats
 * files of traces/, whose keys are unique); FALSE if absent. */
gboolean cca_test_json_int(const char *json, const char *key, gint64 *out);

/* Finds "KEY": "<string>" (no escapes) in JSON; NULL if absent.  Free
 * with g_free(). */
char *cca_test_json_string(const char *json, const char *key);
#endif
