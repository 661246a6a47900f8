/* fleet.h - many snapshots x a grid of settings, sharded over the engines
 * teams already run (Slurm arrays, Kubernetes Indexed Jobs, MPI, Dask).
 *
 * A fleet is a list of jobs: one snapshot each, with the job's own device
 * (a GPU preset or a cap, from a manifest, the command line, ccasim-record's
 * records, or the H200 assumed).  Each snapshot is read once and replayed
 * under every setting of a sweep grid (sweep.h) on the job's own device;
 * each (snapshot, device, setting) gives one JSON Lines row holding the
 * sweep's figures, the snapshot's identity (path, size, SHA-256 of its
 * bytes) and whether the run fits its own device.  A snapshot that cannot
 * be read or replayed gives one error row instead.
 *
 * Rows are the unit of resumption and of merging: a run directory holds
 * fleet.json (the options every shard must share) and rows.I-of-N.jsonl
 * files, appended one write(2) per line with O_APPEND; a re-run skips the
 * rows already there, and a merge reads every row file of any number of
 * directories, keeps each row once and prints a report that depends only
 * on the set of rows, never on how they were sharded, threaded or resumed.
 *
 * Shards split the jobs by the snapshot's content hash (the first 8 bytes
 * of its SHA-256, modulo N), so any N covers each snapshot exactly once
 * and a copy of a snapshot under another name lands on the same shard.
 *
 * The per-snapshot entry point, cca_fleet_job_run(), is what a language
 * binding maps over files (Dask, Ray): it returns the job's rows as text.
 */
#ifndef CCA_FLEET_H
#define CCA_FLEET_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "calibration.h"
#include "fit.h"
#include "size.h"

G_BEGIN_DECLS

/* What fleet reads beside the snapshots, each read whole, refused with an
 * error naming the file above these sizes (doc/hardening.md).  Snapshots
 * themselves are held to the input limit (cca_input_set_limits(),
 * --max-input-size) when they are hashed and loaded. */
/* A manifest: a million jobs of 64-byte lines. */
#define CCA_FLEET_MAX_MANIFEST_SIZE ((uint64_t)64 * CCA_MIB)
/* A rows file (rows.*.jsonl): some 8 million rows of 500 bytes. */
#define CCA_FLEET_MAX_ROWS_SIZE ((uint64_t)4 * CCA_GIB)
/* fleet.json: one JSON object of the options, a few hundred bytes. */
#define CCA_FLEET_MAX_OPTIONS_SIZE ((uint64_t)CCA_MIB)
/* Folders nested deeper than this below an input are refused. */
#define CCA_FLEET_MAX_DEPTH 64
/* The warnings of skipped rows kept word for word (the rest are counted). */
#define CCA_FLEET_SKIPPED_SHOWN 10

/* Lines of rows files that were not fleet rows (cca_fleet_row_key()) and
 * were left out: how many, and the first CCA_FLEET_SKIPPED_SHOWN
 * warnings, "FILE:LINE: why" (raw: show them with cca_text_display()). */
typedef struct {
	guint64 count;
	GPtrArray *shown; /* char*, owned; NULL until the first */
} CcaFleetSkipped;

/* Frees what SKIPPED holds and zeroes it. */
void cca_fleet_skipped_clear(CcaFleetSkipped *skipped);

/* One job: a snapshot and what the manifest says of its device. */
typedef struct {
	char *path;	 /* the snapshot, as given or resolved against the manifest's folder */
	char *gpu;	 /* manifest gpu=NAME (a preset of fit --list-gpus), or NULL */
	uint64_t cap;	 /* manifest cap=BYTES: what the allocator may reserve; 0: none */
	double fraction; /* manifest fraction=F (set_per_process_memory_fraction); 0: none */
} CcaFleetJob;

/* Frees JOB and its strings; NULL allowed. */
void cca_fleet_job_free(CcaFleetJob *job);

/* Expands N_INPUTS INPUTS into JOBS (CcaFleetJob*, appended, owned by the
 * array's free function cca_fleet_job_free): a folder is searched
 * recursively for regular snapshot files (names ending .pickle, .pkl,
 * .msgpack or .mp, optionally followed by .xz or .gz; links to files are
 * followed, links to folders are not, and no folder is searched twice); a
 * file named *.manifest or *.list is a manifest (cca_fleet_manifest_parse(),
 * a regular file of at most CCA_FLEET_MAX_MANIFEST_SIZE); any other input
 * is a snapshot (one that is no regular file becomes an error row when it
 * runs).  Jobs come sorted by path, duplicates (same path) once, the first
 * manifest entry winning.  Returns FALSE with ERROR naming the input (and
 * the manifest's line) for a missing input, an unreadable folder or
 * manifest, folders nested deeper than CCA_FLEET_MAX_DEPTH, a bad manifest
 * line or an unknown GPU. */
gboolean cca_fleet_inputs(const char *const *inputs, guint n_inputs, GPtrArray *jobs,
			  GError **error);

/* Appends the jobs of manifest text TEXT (LEN bytes) to JOBS: one job a
 * line, "PATH [gpu=NAME] [cap=SIZE] [fraction=F]", '#' comments and blank
 * lines ignored, PATH relative to the folder of NAME (the manifest's path,
 * also naming it in errors).  FALSE with ERROR ("NAME:LINE: ...") for a
 * NUL byte, an unknown field or GPU, a bad cap or fraction, or both; the
 * jobs of the lines before stay in JOBS. */
gboolean cca_fleet_manifest_parse(const char *text, gsize len, const char *name, GPtrArray *jobs,
				  GError **error);

/* The identity of a snapshot file: its size and the SHA-256 of its bytes
 * (lowercase hex).  FALSE with ERROR ("PATH: ...") when it cannot be
 * opened, is not a regular file (a FIFO or a device is refused without
 * waiting on it) or holds more than the input limit
 * (cca_input_get_limits(), --max-input-size). */
gboolean cca_fleet_identify(const char *path, uint64_t *size, char sha256[65], GError **error);

/* The shard, in [0, N), of a snapshot whose SHA-256 is SHA256 (hex). */
guint cca_fleet_shard_of(const char *sha256, guint n);

/* Parses "I/N" (0 <= I < N) into *INDEX and *COUNT; FALSE with ERROR. */
gboolean cca_fleet_shard_parse(const char *text, guint *index, guint *count, GError **error);

/* The shard of this process from the environment ENV (g_get_environ()
 * form, NULL: the process's): Slurm job arrays (SLURM_ARRAY_TASK_ID,
 * SLURM_ARRAY_TASK_COUNT, SLURM_ARRAY_TASK_MIN, SLURM_ARRAY_TASK_STEP),
 * a Kubernetes Indexed Job (JOB_COMPLETION_INDEX, with the count
 * SHARDS > 0 given once on the command line), Open MPI
 * (OMPI_COMM_WORLD_RANK, OMPI_COMM_WORLD_SIZE) and PMI launchers (MPICH's
 * Hydra, srun: PMI_RANK, PMI_SIZE), in that order.  Sets *INDEX, *COUNT
 * and *SOURCE (static: the variable used; "none" and 0/1 when no engine
 * is found).  FALSE with ERROR when a variable is malformed or out of
 * range, or JOB_COMPLETION_INDEX comes without SHARDS. */
gboolean cca_fleet_shard_from_env(const char *const *env, guint shards, guint *index, guint *count,
				  const char **source, GError **error);

/* How every job of a fleet is replayed (the same for all shards). */
typedef struct {
	const char *const *configs; /* --config rows, NULL-terminated, or NULL */
	const char *const *sets;    /* --set specifications, NULL-terminated, or NULL */
	bool default_grid;	    /* add sweep's default grid (with the cap rows) */
	uint32_t pytorch_version;   /* 0: guessed per snapshot */
	/* the device of a job whose manifest line names none: */
	const char *gpu;			/* a preset name, or NULL */
	double memory_fraction;			/* 0: none */
	uint64_t device_memory;			/* 0: none */
	const CcaCalibrationTable *calibration; /* NULL: time_us stays 0 */
	/* non-NULL: once *cancel is non-zero (a signal handler sets it), each
	 * job's sweep stops before its next replay (CcaSweepOptions' cancel)
	 * and the job's rows are incomplete: the caller drops them */
	const volatile int *cancel;
} CcaFleetOptions;

/* Checks OPTIONS (a known --gpu, a grid that parses) before any job runs.
 * FALSE with ERROR. */
gboolean cca_fleet_options_check(const CcaFleetOptions *options, GError **error);

/* The canonical text of OPTIONS (one JSON object and a newline) that
 * fleet.json holds: shards and re-runs of one directory must agree on it.
 * Free with g_free(). */
char *cca_fleet_options_describe(const CcaFleetOptions *options);

/* Runs JOB: identifies its snapshot, loads it once, and for each device
 * with trace entries replays every setting of the grid on the job's own
 * device (sweep.h; one address model, one thread: callers run jobs in
 * parallel), then, for a device where no setting fits, replays the
 * settings on each GPU preset, smallest first, until one fits.  Appends
 * the job's rows to OUT, one JSON object and '\n' each, skipping those
 * whose key (cca_fleet_row_key()) is in DONE (may be NULL).  Bad input
 * never fails: it becomes one error row.  Thread-safe. */
void cca_fleet_job_run(const CcaFleetJob *job, const CcaFleetOptions *options, GHashTable *done,
		       GString *out);

/* The key of one row of text LINE (LEN bytes, no '\n'): "PATH\nSHA\nDEVICE\n
 * SETTING" (DEVICE "error" for an error row), and in *JOB_KEY (may be
 * NULL) "PATH\nSHA" with *JOB_ROWS the rows its job has in all.  Returns a
 * new string, or NULL with ERROR when LINE is not a fleet row: not a JSON
 * object, or a field the merge reads missing, of another type or out of
 * range (a sha256 of 64 hex digits, rows 1 to 2^32 - 1, device 0 to
 * 2^31 - 1, a peak_reserved of at most CCA_REPLAY_MAX_RESERVED bytes,
 * sizes and oom_event not negative). */
char *cca_fleet_row_key(const char *line, gsize len, char **job_key, guint *job_rows,
			GError **error);

/* What a run of a shard did. */
typedef struct {
	guint jobs;		  /* jobs of the shard */
	guint skipped;		  /* jobs whose rows were all there already */
	guint64 rows;		  /* rows written now */
	guint errors;		  /* error rows written now */
	guint64 done;		  /* rows found in the directory at the start */
	CcaFleetSkipped bad_rows; /* lines there that were no rows, left out */
} CcaFleetStats;

/* Frees what STATS holds (its bad_rows). */
void cca_fleet_stats_clear(CcaFleetStats *stats);

/* Called after each job, serialised: DONE of TOTAL jobs finished. */
typedef void (*CcaFleetProgress)(void *data, guint done, guint total);

/* Runs shard INDEX of COUNT of JOBS (CcaFleetJob*) into directory DIR
 * (created if needed): writes or checks DIR/fleet.json against OPTIONS,
 * reads the rows of every DIR/...jsonl file (a torn last line of this shard's
 * own file is cut off; a line that is no row is left out, in STATS'
 * bad_rows, and its job runs again if its rows are incomplete), then runs the shard's jobs not
 * complete there on THREADS threads (0: one per core), appending each row to
 * DIR/rows.INDEX-of-COUNT.jsonl with one write(2) under O_APPEND.  Fills
 * STATS (clear it with cca_fleet_stats_clear(), also after FALSE).  FALSE
 * with ERROR on I/O errors, a rows file or fleet.json over its size limit
 * or not a regular file, or when DIR holds a run with other options; bad
 * snapshots are error rows, not errors. */
gboolean cca_fleet_run(const GPtrArray *jobs, const CcaFleetOptions *options, const char *dir,
		       guint index, guint count, guint threads, CcaFleetProgress progress,
		       void *progress_data, CcaFleetStats *stats, GError **error);

/* Appends LEN bytes of ROWS (whole lines of cca_fleet_job_run()) to
 * DIR/rows.NAME.jsonl, one write(2) a line under O_APPEND, after writing or
 * checking DIR/fleet.json against OPTIONS as cca_fleet_run() does: for
 * callers that run jobs elsewhere (a Dask or Ray map) and collect their
 * rows into a run folder `fleet merge` reads.  NAME: letters, digits, '-'
 * and '_'.  FALSE with ERROR on I/O errors, a bad NAME, rows that do not
 * end in '\n', or a folder of other options. */
gboolean cca_fleet_append(const char *dir, const CcaFleetOptions *options, const char *name,
			  const char *rows, gsize len, GError **error);

/* --------------------------------------------------------------- merge */

typedef struct CcaFleetMerge CcaFleetMerge;

/* An empty merge. */
CcaFleetMerge *cca_fleet_merge_new(void);

void cca_fleet_merge_free(CcaFleetMerge *merge);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(CcaFleetMerge, cca_fleet_merge_free)

/* Adds one row (LINE, LEN bytes, no '\n'; NAME and LINENO name it in
 * errors).  A row whose key is already there is kept once (the smaller
 * text wins, so the order rows come in does not matter).  FALSE with
 * ERROR ("NAME:LINENO: ...") when LINE is not a fleet row. */
gboolean cca_fleet_merge_add(CcaFleetMerge *merge, const char *line, gsize len, const char *name,
			     guint64 lineno, GError **error);

/* Adds the rows of LEN bytes of rows-file text TEXT, NAME naming it in
 * warnings: each line through cca_fleet_merge_add(); a line that is no
 * fleet row is left out and counted (cca_fleet_merge_skipped()); a last
 * line without '\n', torn by a kill, is left out silently. */
void cca_fleet_merge_add_text(CcaFleetMerge *merge, const char *text, gsize len, const char *name);

/* Adds every row of run directory DIR (DIR/fleet.json, each DIR/...jsonl,
 * through cca_fleet_merge_add_text()).  FALSE with ERROR on I/O errors, a
 * fleet.json or rows file over its size limit (CCA_FLEET_MAX_OPTIONS_SIZE,
 * CCA_FLEET_MAX_ROWS_SIZE) or not a regular file, or a fleet.json that
 * differs from that of a directory added before.  Bad rows are no error. */
gboolean cca_fleet_merge_add_dir(CcaFleetMerge *merge, const char *dir, GError **error);

/* The shards of the runs added that left no rows file, each "I/N", in
 * order: for each shard count N of the rows files rows.I-of-N.jsonl
 * found, the indices I < N not found.  Empty when nothing is missing:
 * every shard of some count N was found (a re-run under another count
 * covers the same jobs), or no rows file is named by shard.  Free with
 * g_ptr_array_unref(). */
GPtrArray *cca_fleet_merge_missing(const CcaFleetMerge *merge);

/* The lines left out so far because they were no fleet rows. */
const CcaFleetSkipped *cca_fleet_merge_skipped(const CcaFleetMerge *merge);

/* Whether MERGE holds any row to report on: FALSE with ERROR ("DIR...: no
 * fleet rows yet ...", naming the folders added) when none of them held a
 * row, error rows included (a run that has written only fleet.json).  The
 * print functions work either way. */
gboolean cca_fleet_merge_check(const CcaFleetMerge *merge, GError **error);

/* The report on the rows added: what to set fleet-wide and what it saves,
 * the settings best first, the best setting per job, the jobs no setting
 * saves with the smallest card that would, and the unreadable snapshots
 * (all a report of rows that are all errors says), and how many lines were
 * left out.  Paths, settings and messages of the rows are shown escaped
 * (cca_text_display()).  Depends only on the set of rows added.  Prose is wrapped and tables cut
 * to WIDTH columns (CCA_TEXT_COLUMNS by default; G_MAXUINT: --wide, no
 * cut). */
void cca_fleet_merge_print_text(CcaFleetMerge *merge, GString *out, guint width);

/* The same as one JSON object ("answer", "settings", "jobs", "errors",
 * "rows_skipped"). */
void cca_fleet_merge_print_json(CcaFleetMerge *merge, GString *out);

/* The settings table as CSV: a header line, then one line per setting
 * (settings escaped as in the text report). */
void cca_fleet_merge_print_csv(CcaFleetMerge *merge, GString *out);

G_END_DECLS

#endif
