/* fleet.c - a fleet of snapshots under a grid of settings: jobs, shards,
 * rows, run directories and the merged report (fleet.h).
 *
 * Model: a job is one snapshot on its own device.  Each device of the
 * snapshot with trace entries is swept (sweep.c, the same rows and
 * replays as `ccasim sweep`) under the job's own limit; every sweep row
 * becomes one JSON Lines row.  Nothing here replays by itself: the rows'
 * figures are cca_sweep_replay()'s.
 *
 * Invariants: a row's text depends only on the job, the options and the
 * snapshot's bytes (not on threads, shards or time), so a re-run writes
 * the same text and a merge can keep a row once by its key; the report is
 * computed from rows sorted by key, so it depends only on the set of rows.
 *
 * long-file: jobs, shards, rows, run folders and the merged report are
 * one file format (doc/fleet.md) written and read here; a split into
 * fleet_run.c and fleet_merge.c is the natural cut, left for when the
 * format settles.
 */
#include "config.h"

#include "fleet.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "calls.h"
#include "capbound.h"
#include "event_cursor.h"
#include "device.h"
#include "simdevice.h"
#include "input.h"
#include "json.h"
#include "parallel.h"
#include "rules.h"
#include "number.h"
#include "size.h"
#include "snapshot.h"
#include "snapshot_load.h"
#include "sweep.h"
#include "table.h"
#include "text.h"

#define FLEET_ROWS_PREFIX "rows."
#define FLEET_ROWS_SUFFIX ".jsonl"
#define FLEET_OPTIONS_FILE "fleet.json"

/* ---------------------------------------------------------------- jobs */

void
cca_fleet_job_free(CcaFleetJob *job)
{
	if (!job)
		return;
	g_free(job->path);
	g_free(job->gpu);
	g_free(job);
}

static void
job_free(gpointer p)
{
	cca_fleet_job_free(p);
}

/* The length of NAME's snapshot extension (".pickle.xz", ".msgpack"...),
 * the longest that matches; 0 when NAME has none. */
static gsize
snapshot_extension_length(const char *name)
{
	static const char *const kinds[] = {".pickle", ".pkl", ".msgpack", ".mp"};
	static const char *const packs[] = {"", ".xz", ".gz"};
	gsize longest = 0;
	for (guint k = 0; k < G_N_ELEMENTS(kinds); k++)
		for (guint p = 0; p < G_N_ELEMENTS(packs); p++) {
			g_autofree char *end = g_strconcat(kinds[k], packs[p], NULL);
			if (g_str_has_suffix(name, end))
				longest = MAX(longest, strlen(end));
		}
	return longest;
}

/* Names that are snapshots when met inside a folder. */
static bool
is_snapshot_name(const char *name)
{
	return snapshot_extension_length(name) > 0;
}

static bool
is_manifest_name(const char *name)
{
	return g_str_has_suffix(name, ".manifest") || g_str_has_suffix(name, ".list");
}

static CcaFleetJob *
job_new(const char *path)
{
	CcaFleetJob *job = g_new0(CcaFleetJob, 1);
	job->path = g_strdup(path);
	return job;
}

/* A folder's identity: its device and inode. */
typedef struct {
	dev_t dev;
	ino_t ino;
} FolderId;

static guint
folder_id_hash(gconstpointer p)
{
	const FolderId *f = p;
	return g_int64_hash(&(gint64){(gint64)f->ino}) ^ (guint)f->dev;
}

static gboolean
folder_id_equal(gconstpointer a, gconstpointer b)
{
	const FolderId *x = a, *y = b;
	return x->dev == y->dev && x->ino == y->ino;
}

/* Adds the snapshots under folder DIR (whose stat() is ST) to JOBS.  A
 * link to a file is followed, a link to a folder is not (a "self -> ."
 * link would list the tree again at every level), and a folder reached
 * twice (a bind mount, an input inside another) is searched once: SEEN
 * holds the FolderIds searched. */
static gboolean
add_folder(const char *dir, const GStatBuf *st, GPtrArray *jobs, GHashTable *seen, guint depth,
	   GError **error)
{
	FolderId id = {st->st_dev, st->st_ino};
	if (g_hash_table_contains(seen, &id))
		return TRUE;
	g_hash_table_add(seen, g_memdup2(&id, sizeof id));
	if (depth > CCA_FLEET_MAX_DEPTH) {
		g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_LOOP,
			    "%s: folders nested more than %d deep", dir, CCA_FLEET_MAX_DEPTH);
		return FALSE;
	}
	g_autoptr(GDir) d = g_dir_open(dir, 0, error);
	if (!d)
		return FALSE;
	const char *name;
	while ((name = g_dir_read_name(d))) {
		g_autofree char *path = g_build_filename(dir, name, NULL);
		GStatBuf lst, fst;
		if (g_lstat(path, &lst) != 0)
			continue; /* gone since it was listed */
		if (S_ISDIR(lst.st_mode)) {
			if (!add_folder(path, &lst, jobs, seen, depth + 1, error))
				return FALSE;
		} else if (S_ISLNK(lst.st_mode)) {
			/* a link to a regular file counts; a dangling link, a
			 * link to a folder or to anything else does not */
			if (g_stat(path, &fst) == 0 && S_ISREG(fst.st_mode) &&
			    is_snapshot_name(name))
				g_ptr_array_add(jobs, job_new(path));
		} else if (S_ISREG(lst.st_mode) && is_snapshot_name(name)) {
			g_ptr_array_add(jobs, job_new(path));
		}
	}
	return TRUE;
}

static gboolean
add_manifest(const char *manifest, GPtrArray *jobs, GError **error)
{
	g_autofree char *text = NULL;
	gsize len;
	if (!cca_input_read_file(manifest, CCA_FLEET_MAX_MANIFEST_SIZE,
				 "the limit of a fleet manifest", &text, &len, error))
		return FALSE;
	return cca_fleet_manifest_parse(text, len, manifest, jobs, error);
}

gboolean
cca_fleet_manifest_parse(const char *text, gsize len, const char *manifest, GPtrArray *jobs,
			 GError **error)
{
	if (memchr(text, '\0', len)) {
		g_set_error(error, CCA_INPUT_ERROR, CCA_INPUT_ERROR_CORRUPT,
			    "%s: offset %" G_GSIZE_FORMAT ": not a manifest (it holds NUL bytes)",
			    manifest, (gsize)((const char *)memchr(text, '\0', len) - text));
		return FALSE;
	}
	g_autofree char *copy = g_strndup(text, len);
	g_autofree char *base = g_path_get_dirname(manifest);
	g_auto(GStrv) lines = g_strsplit(copy, "\n", -1);
	for (guint i = 0; lines[i]; i++) {
		char *hash = strchr(lines[i], '#');
		if (hash)
			*hash = '\0';
		g_auto(GStrv) words = g_strsplit_set(g_strstrip(lines[i]), " \t", -1);
		if (!words[0] || !*words[0])
			continue;
		CcaFleetJob *job = g_new0(CcaFleetJob, 1);
		job->path = g_path_is_absolute(words[0]) ? g_strdup(words[0])
							 : g_build_filename(base, words[0], NULL);
		g_ptr_array_add(jobs, job);
		for (guint w = 1; words[w]; w++) {
			const char *word = words[w];
			GError *local = NULL;
			if (!*word)
				continue;
			if (g_str_has_prefix(word, "gpu=")) {
				GError *why = NULL;
				if (!cca_fit_gpu_preset_find(word + 4, &why)) {
					g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
						    "%s:%u: %s", manifest, i + 1, why->message);
					g_error_free(why);
					return FALSE;
				}
				g_free(job->gpu);
				job->gpu = g_strdup(word + 4);
			} else if (g_str_has_prefix(word, "cap=")) {
				if (!cca_size_parse_device(word + 4, "cap", &job->cap, &local)) {
					g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
						    "%s:%u: cap=%s: %s", manifest, i + 1, word + 4,
						    local ? local->message : "must be above 0");
					g_clear_error(&local);
					return FALSE;
				}
			} else if (g_str_has_prefix(word, "fraction=")) {
				char *end;
				double f = g_ascii_strtod(word + 9, &end);
				if (*end || !(f > 0 && f <= 1)) {
					g_set_error(
						error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
						"%s:%u: fraction=%s: must be a number in (0, 1]",
						manifest, i + 1, word + 9);
					return FALSE;
				}
				job->fraction = f;
			} else {
				g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
					    "%s:%u: unknown field '%s' (gpu=NAME, cap=SIZE, "
					    "fraction=F)",
					    manifest, i + 1, word);
				return FALSE;
			}
		}
		if (job->cap && job->fraction) {
			g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
				    "%s:%u: give cap= or fraction=, not both", manifest, i + 1);
			return FALSE;
		}
	}
	return TRUE;
}

static gint
job_compare(gconstpointer a, gconstpointer b)
{
	const CcaFleetJob *x = *(CcaFleetJob *const *)a, *y = *(CcaFleetJob *const *)b;
	return strcmp(x->path, y->path);
}

gboolean
cca_fleet_inputs(const char *const *inputs, guint n_inputs, GPtrArray *jobs, GError **error)
{
	g_autoptr(GPtrArray) found = g_ptr_array_new_with_free_func(job_free);
	g_autoptr(GHashTable) seen =
		g_hash_table_new_full(folder_id_hash, folder_id_equal, g_free, NULL);
	for (guint i = 0; i < n_inputs; i++) {
		const char *in = inputs[i];
		GStatBuf st;
		if (g_stat(in, &st) != 0) {
			g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(errno), "%s: %s",
				    in, g_strerror(errno));
			return FALSE;
		}
		if (S_ISDIR(st.st_mode)) {
			/* a folder named as an input is searched even through a link */
			if (!add_folder(in, &st, found, seen, 0, error))
				return FALSE;
		} else if (is_manifest_name(in)) {
			if (!add_manifest(in, found, error))
				return FALSE;
		} else {
			g_ptr_array_add(found, job_new(in));
		}
	}
	/* stable by path: the first entry of a path wins */
	g_ptr_array_sort(found, job_compare);
	const char *last = NULL;
	for (guint i = 0; i < found->len; i++) {
		CcaFleetJob *job = g_ptr_array_index(found, i);
		if (last && strcmp(job->path, last) == 0)
			continue;
		last = job->path;
		g_ptr_array_index(found, i) = NULL;
		g_ptr_array_add(jobs, job);
	}
	return TRUE;
}

/* ------------------------------------------------------------ identity */

gboolean
cca_fleet_identify(const char *path, uint64_t *size, char sha256[65], GError **error)
{
	uint64_t max, stat_size;
	unsigned ratio;
	cca_input_get_limits(&max, &ratio);
	int fd = cca_input_open_regular(path, max, "raise it with --max-input-size", &stat_size,
					error);
	if (fd < 0)
		return FALSE;
	g_autoptr(GChecksum) sum = g_checksum_new(G_CHECKSUM_SHA256);
	enum {
		CHUNK = 4 * CCA_MIB
	};
	g_autofree guchar *buf = g_malloc(CHUNK);
	uint64_t total = 0;
	for (;;) {
		ssize_t n = read(fd, buf, CHUNK);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int e = errno;
			g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(e),
				    "%s: offset %" G_GUINT64_FORMAT ": %s", path, total,
				    g_strerror(e));
			close(fd);
			return FALSE;
		}
		if (n == 0)
			break;
		g_checksum_update(sum, buf, (gssize)n);
		total += (uint64_t)n;
		if (total > max) { /* it grew past the limit while being read */
			cca_input_set_too_large(error, path, max, "raise it with --max-input-size");
			close(fd);
			return FALSE;
		}
	}
	close(fd);
	*size = total;
	g_strlcpy(sha256, g_checksum_get_string(sum), 65);
	return TRUE;
}

guint
cca_fleet_shard_of(const char *sha256, guint n)
{
	uint64_t v = 0;
	for (guint i = 0; i < 16 && g_ascii_isxdigit(sha256[i]); i++)
		v = v << 4 | (uint64_t)g_ascii_xdigit_value(sha256[i]);
	return n ? (guint)(v % n) : 0;
}

static gboolean
parse_uint(const char *text, guint64 max, guint64 *out)
{
	return text && *text && g_ascii_string_to_unsigned(text, 10, 0, max, out, NULL);
}

gboolean
cca_fleet_shard_parse(const char *text, guint *index, guint *count, GError **error)
{
	const char *slash = strchr(text, '/');
	g_autofree char *i_text = slash ? g_strndup(text, (gsize)(slash - text)) : NULL;
	guint64 i, n;
	if (!slash || !parse_uint(i_text, G_MAXUINT32, &i) ||
	    !parse_uint(slash + 1, G_MAXUINT32, &n) || n == 0 || i >= n) {
		g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
			    "--shard: expected I/N with 0 <= I < N, got '%s'", text);
		return FALSE;
	}
	*index = (guint)i;
	*count = (guint)n;
	return TRUE;
}

gboolean
cca_fleet_shard_from_env(const char *const *env, guint shards, guint *index, guint *count,
			 const char **source, GError **error)
{
	g_auto(GStrv) own = env ? NULL : g_get_environ();
	const char *const *e = env ? env : (const char *const *)own;
	const char *slurm_id = g_environ_getenv((char **)e, "SLURM_ARRAY_TASK_ID");
	const char *k8s = g_environ_getenv((char **)e, "JOB_COMPLETION_INDEX");
	static const struct {
		const char *rank, *size;
	} mpi[] = {{"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"}, {"PMI_RANK", "PMI_SIZE"}};
	guint64 i, n;
	*index = 0;
	*count = 1;
	*source = "none";
	if (slurm_id) {
		const char *cnt = g_environ_getenv((char **)e, "SLURM_ARRAY_TASK_COUNT");
		const char *min = g_environ_getenv((char **)e, "SLURM_ARRAY_TASK_MIN");
		const char *step = g_environ_getenv((char **)e, "SLURM_ARRAY_TASK_STEP");
		guint64 lo = 0, st = 1;
		if (!parse_uint(slurm_id, G_MAXUINT32, &i) || !parse_uint(cnt, G_MAXUINT32, &n) ||
		    n == 0 || (min && !parse_uint(min, G_MAXUINT32, &lo)) ||
		    (step && (!parse_uint(step, G_MAXUINT32, &st) || st == 0)) || i < lo ||
		    (i - lo) % st || (i - lo) / st >= n) {
			g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
				    "SLURM_ARRAY_TASK_ID=%s with SLURM_ARRAY_TASK_COUNT=%s, "
				    "SLURM_ARRAY_TASK_MIN=%s, SLURM_ARRAY_TASK_STEP=%s names no "
				    "shard (an array 0-N or a range with one step is needed)",
				    slurm_id, cnt ? cnt : "(unset)", min ? min : "(unset)",
				    step ? step : "(unset)");
			return FALSE;
		}
		*index = (guint)((i - lo) / st);
		*count = (guint)n;
		*source = "SLURM_ARRAY_TASK_ID";
		return TRUE;
	}
	if (k8s) {
		if (shards == 0) {
			g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
				    "JOB_COMPLETION_INDEX=%s is set but not the number of shards: "
				    "pass --shards N (the Job's completions)",
				    k8s);
			return FALSE;
		}
		if (!parse_uint(k8s, G_MAXUINT32, &i) || i >= shards) {
			g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
				    "JOB_COMPLETION_INDEX=%s: must be below --shards %u", k8s,
				    shards);
			return FALSE;
		}
		*index = (guint)i;
		*count = shards;
		*source = "JOB_COMPLETION_INDEX";
		return TRUE;
	}
	for (guint m = 0; m < G_N_ELEMENTS(mpi); m++) {
		const char *r = g_environ_getenv((char **)e, mpi[m].rank);
		const char *s = g_environ_getenv((char **)e, mpi[m].size);
		if (!r)
			continue;
		if (!parse_uint(r, G_MAXUINT32, &i) || !parse_uint(s, G_MAXUINT32, &n) || n == 0 ||
		    i >= n) {
			g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
				    "%s=%s with %s=%s names no shard", mpi[m].rank, r, mpi[m].size,
				    s ? s : "(unset)");
			return FALSE;
		}
		*index = (guint)i;
		*count = (guint)n;
		*source = mpi[m].rank;
		return TRUE;
	}
	if (shards > 1) {
		g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
			    "--shards %u without JOB_COMPLETION_INDEX: say which shard with "
			    "--shard I/%u",
			    shards, shards);
		return FALSE;
	}
	return TRUE;
}

/* ------------------------------------------------------------- options */

/* A sweep of SNAP's DEVICE with the grid of OPTIONS. */
static CcaSweep *
build_grid(const CcaSnapshot *snap, int device, const CcaFleetOptions *options, GError **error)
{
	g_autoptr(CcaSweep) sweep = cca_sweep_new(snap, device, options->pytorch_version, error);
	if (!sweep)
		return NULL;
	for (const char *const *c = options->configs; c && *c; c++)
		if (!cca_sweep_add_config(sweep, *c, "--config", error)) {
			g_prefix_error(error, "--config %s: ", *c);
			return NULL;
		}
	guint n_sets = options->sets ? g_strv_length((char **)options->sets) : 0;
	if (!cca_sweep_add_sets(sweep, options->sets, n_sets, error))
		return NULL;
	/* every job runs under a limit, so the cap rows belong to the grid */
	if (options->default_grid && !cca_sweep_add_default_grid(sweep, true, error))
		return NULL;
	return g_steal_pointer(&sweep);
}

gboolean
cca_fleet_options_check(const CcaFleetOptions *options, GError **error)
{
	GError *why = NULL;
	if (options->gpu && !cca_fit_gpu_preset_find(options->gpu, &why)) {
		g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "--gpu: %s",
			    why->message);
		g_error_free(why);
		return FALSE;
	}
	if (options->gpu && options->device_memory) {
		g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
			    "--gpu sets the device memory: leave out --device-memory");
		return FALSE;
	}
	/* the grid must parse: try it on an empty snapshot */
	g_autoptr(CcaSnapshot) empty = cca_snapshot_new();
	empty->n_devices = 1;
	empty->n_events = g_new0(uint64_t, 1);
	empty->events = g_new0(GArray *, 1);
	empty->events[0] = g_array_new(FALSE, FALSE, sizeof(CcaEvent));
	CcaFleetOptions o = *options;
	o.default_grid = false;
	g_autoptr(CcaSweep) sweep = build_grid(empty, 0, &o, error);
	return sweep != NULL;
}

char *
cca_fleet_options_describe(const CcaFleetOptions *options)
{
	json_t *doc = json_object();
	json_object_set_new(doc, "format", json_string("ccasim fleet 1"));
	json_t *configs = json_array(), *sets = json_array();
	for (const char *const *c = options->configs; c && *c; c++)
		json_array_append_new(configs, cca_json_string(*c));
	for (const char *const *s = options->sets; s && *s; s++)
		json_array_append_new(sets, cca_json_string(*s));
	json_object_set_new(doc, "configs", configs);
	json_object_set_new(doc, "sets", sets);
	json_object_set_new(doc, "default_grid", json_boolean(options->default_grid));
	json_object_set_new(doc, "pytorch_version",
			    options->pytorch_version ? json_integer(options->pytorch_version)
						     : json_null());
	json_object_set_new(doc, "gpu", options->gpu ? cca_json_string(options->gpu) : json_null());
	json_object_set_new(doc, "memory_fraction", cca_json_real(options->memory_fraction));
	json_object_set_new(doc, "device_memory", cca_json_uint(options->device_memory));
	json_object_set_new(doc, "time_model", json_boolean(options->calibration != NULL));
	char *text = json_dumps(doc, JSON_COMPACT);
	json_decref(doc);
	char *out = g_strconcat(text, "\n", NULL);
	free(text);
	return out;
}

/* --------------------------------------------------------- own device */

/* The device a job ran on, and the sweep options that replay it there. */
typedef struct {
	char *gpu;	    /* a preset's name, or a phrase */
	const char *source; /* where the device comes from */
	uint64_t total;	    /* the GPU's memory */
	uint64_t context;   /* memory outside the allocator */
	uint64_t cap;	    /* 0: none */
	uint64_t limit;	    /* what the allocator may reserve */
	/* the cap is the largest the recording allows: its OOM proved one
	 * nobody passed (capbound.h), between cap_proved.lo and .hi */
	CcaCapBound cap_proved;
	CcaSweepOptions opt;
} OwnDevice;

/* The total memory ccasim-record saw on DEVICE of SNAP; FALSE if none. */
static gboolean
recorded_total(const CcaSnapshot *snap, int device, uint64_t *total, GError **error)
{
	if (!cca_calls_present(snap, device))
		return FALSE;
	g_autoptr(CcaCalls) calls = cca_calls_parse(snap, device, error);
	if (!calls)
		return FALSE;
	*total = cca_calls_total_memory(calls);
	return *total != 0;
}

/* What DEVICE of SNAP, replayed as recorded without a cap, proves of a
 * cap nobody passed (zeroed when nothing, or when it does not replay). */
static void
prove_cap(const CcaSnapshot *snap, int device, CcaCapBound *cap)
{
	memset(cap, 0, sizeof *cap);
	if (cca_calls_present(snap, device) || !cca_event_cursor_has_oom(snap, device))
		return; /* ccasim-record holds every fraction call */
	CcaReplayOptions opt;
	cca_replay_options_init(&opt);
	opt.device = device;
	CcaReplayResult res;
	if (cca_replay_run(snap, &opt, &res, NULL))
		cca_replay_cap_proved(&res, false, cap);
	cca_replay_result_clear(&res);
}

static gboolean
own_device(const CcaFleetJob *job, const CcaFleetOptions *options, const CcaSnapshot *snap,
	   int device, OwnDevice *own, GError **error)
{
	memset(own, 0, sizeof *own);
	const char *ctx_source = NULL;
	own->context = CCA_GPU_CONTEXT_BYTES;
	if (!cca_fit_recorded_context(snap, device, &own->context, &ctx_source, error) && *error)
		return FALSE;
	const char *gpu_name = job->gpu ? job->gpu : options->gpu;
	uint64_t rec_total = 0;
	if (gpu_name) {
		const CcaGpuPreset *p = cca_fit_gpu_preset_find(gpu_name, NULL); /* checked */
		own->gpu = g_strdup(p->name);
		own->total = p->total_memory;
		own->source = job->gpu ? "manifest" : "--gpu";
	} else if (recorded_total(snap, device, &rec_total, error)) {
		guint n;
		const CcaGpuPreset *p = cca_fit_gpu_presets(&n);
		own->gpu = g_strdup("recorded GPU");
		for (guint i = 0; i < n; i++)
			if (p[i].total_memory == rec_total) {
				g_free(own->gpu);
				own->gpu = g_strdup(p[i].name);
				break;
			}
		own->total = rec_total;
		own->source = "recorded by ccasim-record";
	} else if (*error) {
		return FALSE;
	} else if (options->device_memory) {
		own->gpu = g_strdup("--device-memory");
		own->total = options->device_memory;
		own->context = 0;
		own->source = "--device-memory";
	} else {
		own->gpu = g_strdup("H200");
		own->total = CCA_H200_TOTAL_MEMORY;
		own->source = "assumed (no GPU in the manifest, the options or the snapshot)";
	}
	double fraction = job->fraction > 0 ? job->fraction : 0;
	if (job->cap)
		own->cap = job->cap;
	else if (fraction == 0 && !job->gpu && options->memory_fraction > 0)
		fraction = options->memory_fraction;
	if (fraction > 0)
		own->cap = (uint64_t)(fraction * (double)own->total);
	if (!own->cap) {
		/* no cap given: the recording may prove one; take the largest
		 * it allows, under which it runs out where it did */
		prove_cap(snap, device, &own->cap_proved);
		if (own->cap_proved.proved)
			own->cap = own->cap_proved.hi;
	}
	uint64_t usable = own->total > own->context ? own->total - own->context : 0;
	own->opt.calibration = options->calibration;
	own->opt.threads = 1;
	own->opt.cancel = options->cancel;
	/* "fits" only when every address model fits, as replay's bounds */
	own->opt.address_sensitivity = true;
	if (own->cap && own->cap < usable) {
		/* as set_per_process_memory_fraction(): a fraction of the total */
		own->opt.device_memory = own->total;
		own->opt.memory_fraction =
			fraction > 0 ? fraction : (double)own->cap / (double)own->total;
		/* the job's own cap: its own settings replay the recording */
		own->opt.recorded_memory_fraction = own->opt.memory_fraction;
		own->limit = own->cap;
	} else {
		own->cap = 0;
		own->opt.device_memory = usable;
		own->opt.capacity_set = true;
		/* the GPU ccasim-record recorded, less what it measured outside
		 * the allocator, is the device the job ran on: its own settings
		 * replay the recording (PyTorch's peaks, doc/fleet.md) */
		own->opt.recorded_capacity_set = rec_total > 0 && !gpu_name;
		own->limit = usable;
	}
	if (own->limit == 0) {
		g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
			    "the memory outside the allocator fills the whole %s", own->gpu);
		return FALSE;
	}
	return TRUE;
}

/* -------------------------------------------------------------- rows */

static void
append_row(GString *out, json_t *row)
{
	char *text = json_dumps(row, JSON_COMPACT);
	g_string_append(out, text);
	g_string_append_c(out, '\n');
	free(text);
}

static json_t *
identity(const CcaFleetJob *job, bool known, uint64_t size, const char *sha)
{
	json_t *row = json_object();
	json_object_set_new(row, "path", cca_json_string(job->path));
	json_object_set_new(row, "size", known ? cca_json_uint(size) : json_null());
	json_object_set_new(row, "sha256", known ? cca_json_string(sha) : json_null());
	return row;
}

static void
error_row(const CcaFleetJob *job, bool known, uint64_t size, const char *sha, const char *message,
	  GHashTable *done, GString *out)
{
	json_t *row = identity(job, known, size, sha);
	json_object_set_new(row, "rows", json_integer(1));
	json_object_set_new(row, "device", json_null());
	json_object_set_new(row, "error", cca_json_string(message));
	g_autofree char *key = g_strdup_printf("%s\n%s\nerror", job->path, known ? sha : "");
	if (!done || !g_hash_table_contains(done, key))
		append_row(out, row);
	json_decref(row);
}

/* The smallest preset on which ROW runs without OOM, or NULL. */
static const CcaGpuPreset *
smallest_gpu(const CcaSweep *sweep, const CcaSweepRow *row, const OwnDevice *own,
	     const CcaGpuPreset *const *order, guint n, GError **error)
{
	for (guint i = 0; i < n; i++) {
		uint64_t usable = cca_fit_gpu_usable(order[i], own->context);
		if (usable == 0)
			continue;
		CcaSweepOptions o = own->opt;
		o.memory_fraction = 0;
		o.device_memory = usable;
		o.capacity_set = true;
		o.recorded_capacity_set = false; /* another card: a what-if */
		CcaSweepRun run;
		guint nm;
		const CcaAddressModel *models = cca_simdevice_bound_models(&nm);
		if (!cca_sweep_replay(sweep, row, &o,
				      row->recorded ? CCA_ADDRESS_RECORDED : models[0], &run,
				      error))
			return NULL;
		if (run.value[CCA_SWEEP_FIG_OOM] == 0)
			return order[i];
	}
	return NULL;
}

static gint
preset_by_total(gconstpointer a, gconstpointer b)
{
	const CcaGpuPreset *x = *(const CcaGpuPreset *const *)a,
			   *y = *(const CcaGpuPreset *const *)b;
	return x->total_memory < y->total_memory ? -1 : x->total_memory > y->total_memory;
}

/* Sweeps DEVICE of SNAP for JOB into ROWS (json_t objects). */
static gboolean
sweep_device(const CcaFleetJob *job, const CcaFleetOptions *options, const CcaSnapshot *snap,
	     int device, GPtrArray *rows, GError **error)
{
	OwnDevice own;
	if (!own_device(job, options, snap, device, &own, error)) {
		g_free(own.gpu);
		return FALSE;
	}
	g_autofree char *gpu = own.gpu; /* freed on every return */
	(void)gpu;
	g_autoptr(CcaSweep) sweep = build_grid(snap, device, options, error);
	if (!sweep || !cca_sweep_run(sweep, &own.opt, error))
		return FALSE;
	bool any_fits = false;
	for (guint r = 0; r < sweep->rows->len; r++) {
		const CcaSweepRow *row = g_ptr_array_index(sweep->rows, r);
		any_fits |= !cca_sweep_row_may_oom(row);
	}
	guint n_presets;
	const CcaGpuPreset *presets = cca_fit_gpu_presets(&n_presets);
	g_autofree const CcaGpuPreset **order = g_new(const CcaGpuPreset *, n_presets);
	for (guint i = 0; i < n_presets; i++)
		order[i] = &presets[i];
	qsort(order, n_presets, sizeof *order, preset_by_total);
	for (guint r = 0; r < sweep->rows->len; r++) {
		const CcaSweepRow *row = g_ptr_array_index(sweep->rows, r);
		const CcaSweepRun *run = &row->runs[0];
		/* "fits" only when no address model and no stream timing runs
		 * out; "may_not_fit" when the primary replay alone fits */
		bool fits = !cca_sweep_row_may_oom(row);
		bool primary_fits = run->value[CCA_SWEEP_FIG_OOM] == 0;
		json_t *o = json_object();
		json_object_set_new(o, "device", json_integer(device));
		json_object_set_new(o, "setting", cca_json_string(row->conf));
		json_object_set_new(o, "origin", cca_json_string(row->origin));
		json_object_set_new(o, "recorded", json_boolean(row->recorded));
		json_t *dev = json_object();
		json_object_set_new(dev, "gpu", cca_json_string(own.gpu));
		json_object_set_new(dev, "total", cca_json_uint(own.total));
		json_object_set_new(dev, "cap", own.cap ? cca_json_uint(own.cap) : json_null());
		json_object_set_new(dev, "limit", cca_json_uint(own.limit));
		json_object_set_new(dev, "source", cca_json_string(own.source));
		json_object_set_new(dev, "cap_proved", cca_capbound_to_json(&own.cap_proved));
		json_object_set_new(o, "own_device", dev);
		json_object_set_new(o, "fits", json_boolean(fits));
		json_object_set_new(o, "may_not_fit", json_boolean(primary_fits && !fits));
		/* a window: the figures cover it alone (cca_sweep_window_note()) */
		json_object_set_new(o, "window", cca_sweep_window_json(sweep, run));
		/* rules modelled from source, never checked on hardware */
		json_object_set_new(
			o, "unvalidated",
			json_boolean(cca_rules_for(sweep->pytorch_version)->unvalidated));
		json_object_set_new(o, "oom_event",
				    primary_fits ? json_null() : cca_json_uint(run->oom_event));
		json_t *bounds = json_object();
		for (guint f = 0; f < CCA_SWEEP_FIG_COUNT; f++) {
			double lo = MIN(row->lo[f], row->tlo[f]), hi = MAX(row->hi[f], row->thi[f]);
			if (f == CCA_SWEEP_FIG_OOM || f == CCA_SWEEP_FIG_FRAGMENTATION || lo == hi)
				continue;
			json_t *pair = json_array();
			json_array_append_new(pair, cca_json_uint((uint64_t)lo));
			json_array_append_new(pair, cca_json_uint((uint64_t)hi));
			json_object_set_new(bounds, cca_sweep_figure_name((CcaSweepFigure)f), pair);
		}
		json_object_set_new(o, "bounds", bounds);
		for (guint f = 0; f < CCA_SWEEP_FIG_COUNT; f++) {
			if (f == CCA_SWEEP_FIG_OOM)
				continue;
			double v = run->value[f];
			json_object_set_new(o, cca_sweep_figure_name((CcaSweepFigure)f),
					    f == CCA_SWEEP_FIG_FRAGMENTATION
						    ? cca_json_fixed(v, 6)
						    : cca_json_uint((uint64_t)v));
		}
		json_object_set_new(o, "events", cca_json_uint(run->events));
		if (!any_fits && !fits) {
			const CcaGpuPreset *p =
				smallest_gpu(sweep, row, &own, order, n_presets, error);
			if (!p && *error) {
				json_decref(o);
				return FALSE;
			}
			json_object_set_new(o, "smallest_gpu",
					    p ? cca_json_string(p->name) : json_null());
		}
		g_ptr_array_add(rows, o);
	}
	return TRUE;
}

void
cca_fleet_job_run(const CcaFleetJob *job, const CcaFleetOptions *options, GHashTable *done,
		  GString *out)
{
	uint64_t size = 0;
	char sha[65] = "";
	GError *error = NULL;
	if (!cca_fleet_identify(job->path, &size, sha, &error)) {
		error_row(job, false, 0, NULL, error->message, done, out);
		g_error_free(error);
		return;
	}
	/* each device's rows replay it: its events are decoded once, into
	 * memory, and let go after its rows; a bad event anywhere is an error
	 * row, as the load's would be */
	g_autoptr(CcaSnapshot) snap = cca_snapshot_load_streaming(job->path, &error);
	g_autoptr(GPtrArray) rows = g_ptr_array_new_with_free_func((GDestroyNotify)json_decref);
	for (int d = 0; snap && d < snap->n_devices && !error; d++) {
		if (snap->n_events[d] == 0 || !cca_event_cursor_hold(snap, d, &error))
			continue;
		gboolean held = snap->events[d] != NULL && snap->format == CCA_FORMAT_MSGPACK;
		sweep_device(job, options, snap, d, rows, &error);
		if (held)
			g_clear_pointer(&snap->events[d], g_array_unref);
	}
	if (snap && !error)
		cca_event_cursor_check(snap, snap->n_devices, &error);
	if (!error && rows->len == 0)
		g_set_error(&error, CCA_INPUT_ERROR, CCA_INPUT_ERROR_NOT_SNAPSHOT,
			    "%s: the snapshot has no trace entries to replay (record it after "
			    "torch.cuda.memory._record_memory_history())",
			    job->path);
	if (error) {
		g_autofree char *msg =
			g_str_has_prefix(error->message, job->path)
				? g_strdup(error->message)
				: g_strdup_printf("%s: %s", job->path, error->message);
		error_row(job, true, size, sha, msg, done, out);
		g_error_free(error);
		return;
	}
	for (guint i = 0; i < rows->len; i++) {
		json_t *o = g_ptr_array_index(rows, i);
		g_autofree char *key =
			g_strdup_printf("%s\n%s\n%d\n%s", job->path, sha,
					(int)json_integer_value(json_object_get(o, "device")),
					json_string_value(json_object_get(o, "setting")));
		if (done && g_hash_table_contains(done, key))
			continue;
		json_t *row = identity(job, true, size, sha);
		json_object_set_new(row, "rows", json_integer(rows->len));
		json_object_update(row, o);
		append_row(out, row);
		json_decref(row);
	}
}

/* Whether V is an integer in [LO, HI]. */
static bool
int_in(json_t *v, json_int_t lo, json_int_t hi)
{
	return json_is_integer(v) && json_integer_value(v) >= lo && json_integer_value(v) <= hi;
}

/* Whether SHA is a SHA-256 in lowercase hex, as cca_fleet_identify()
 * writes it. */
static bool
is_sha256(const char *sha)
{
	if (!sha || strlen(sha) != 64)
		return false;
	for (const char *c = sha; *c; c++)
		if (!g_ascii_isdigit(*c) && !(*c >= 'a' && *c <= 'f'))
			return false;
	return true;
}

/* The first field of ROW (an object) that a fleet row cannot hold, as
 * "KEY: what it must be", or NULL when the row is whole.  Checks the
 * fields the merge reads, so that a report is never built of values no
 * replay gives (a peak past what the model can reserve would overflow the
 * sums of saved memory). */
static const char *
row_problem(json_t *row, bool is_error)
{
	json_t *sha = json_object_get(row, "sha256");
	const char *path = json_string_value(json_object_get(row, "path"));
	if (!path || !*path)
		return "path: must be a non-empty string";
	if (!int_in(json_object_get(row, "rows"), 1, G_MAXUINT32))
		return "rows: must be an integer from 1 to 2^32 - 1";
	if (is_error) {
		if (!json_is_string(json_object_get(row, "error")))
			return "error: must be a string";
		if (!json_is_null(sha) && sha && !is_sha256(json_string_value(sha)))
			return "sha256: must be 64 hex digits or null";
		return NULL;
	}
	if (!is_sha256(json_string_value(sha)))
		return "sha256: must be 64 hex digits";
	if (!int_in(json_object_get(row, "size"), 0, INT64_MAX))
		return "size: must be an integer of 0 or more";
	if (!int_in(json_object_get(row, "device"), 0, G_MAXINT32))
		return "device: must be an integer from 0 to 2^31 - 1";
	if (!json_is_string(json_object_get(row, "setting")))
		return "setting: must be a string";
	if (!json_is_boolean(json_object_get(row, "recorded")))
		return "recorded: must be true or false";
	if (!json_is_boolean(json_object_get(row, "fits")))
		return "fits: must be true or false";
	json_t *maybe = json_object_get(row, "may_not_fit");
	if (maybe && !json_is_boolean(maybe))
		return "may_not_fit: must be true or false";
	json_t *window = json_object_get(row, "window");
	if (window && !json_is_null(window) && !json_is_object(window))
		return "window: must be null or an object";
	if (!int_in(json_object_get(row, "peak_reserved"), 0, (json_int_t)CCA_REPLAY_MAX_RESERVED))
		return "peak_reserved: must be an integer from 0 to 2^48 (what a replay can "
		       "reserve)";
	json_t *oom = json_object_get(row, "oom_event");
	if (oom && !json_is_null(oom) && !int_in(oom, 0, INT64_MAX))
		return "oom_event: must be null or an integer of 0 or more";
	json_t *gpu = json_object_get(row, "smallest_gpu");
	if (gpu && !json_is_null(gpu) && !json_is_string(gpu))
		return "smallest_gpu: must be null or a string";
	json_t *dev = json_object_get(row, "own_device");
	json_t *cap = json_object_get(dev, "cap");
	if (!json_is_object(dev) || !json_is_string(json_object_get(dev, "gpu")) ||
	    !int_in(json_object_get(dev, "limit"), 0, INT64_MAX) ||
	    (cap && !json_is_null(cap) && !int_in(cap, 0, INT64_MAX)))
		return "own_device: must be an object with a string gpu, a limit of 0 or more and "
		       "a cap of 0 or more or null";
	json_t *source = json_object_get(dev, "source");
	if (source && !json_is_string(source))
		return "own_device: source must be a string";
	return NULL;
}

char *
cca_fleet_row_key(const char *line, gsize len, char **job_key, guint *job_rows, GError **error)
{
	/* jansson reads past a NUL byte between tokens; the merge keeps the
	 * line as a C string, so a row holds none */
	if (memchr(line, '\0', len)) {
		g_set_error(error, CCA_INPUT_ERROR, CCA_INPUT_ERROR_CORRUPT,
			    "not a fleet row: it holds a NUL byte");
		return NULL;
	}
	json_error_t je;
	json_t *row = json_loadb(line, len, JSON_REJECT_DUPLICATES, &je);
	if (!row) {
		g_set_error(error, CCA_INPUT_ERROR, CCA_INPUT_ERROR_CORRUPT,
			    "column %d: not JSON: %s", je.column, je.text);
		return NULL;
	}
	bool is_error = json_is_object(row) && json_object_get(row, "error") != NULL;
	const char *why = !json_is_object(row) ? "a JSON object with path, sha256, rows, device, "
						 "setting..."
					       : row_problem(row, is_error);
	if (why) {
		g_set_error(error, CCA_INPUT_ERROR, CCA_INPUT_ERROR_CORRUPT, "not a fleet row: %s",
			    why);
		json_decref(row);
		return NULL;
	}
	const char *path = json_string_value(json_object_get(row, "path"));
	const char *sha = json_string_value(json_object_get(row, "sha256"));
	json_int_t rows = json_integer_value(json_object_get(row, "rows"));
	char *key = is_error ? g_strdup_printf("%s\n%s\nerror", path, sha ? sha : "")
			     : g_strdup_printf("%s\n%s\n%" JSON_INTEGER_FORMAT "\n%s", path, sha,
					       json_integer_value(json_object_get(row, "device")),
					       json_string_value(json_object_get(row, "setting")));
	if (job_key)
		*job_key = g_strdup_printf("%s\n%s", path, sha ? sha : "");
	if (job_rows)
		*job_rows = (guint)rows;
	json_decref(row);
	return key;
}

/* ---------------------------------------------------------- run folder */

void
cca_fleet_skipped_clear(CcaFleetSkipped *skipped)
{
	g_clear_pointer(&skipped->shown, g_ptr_array_unref);
	skipped->count = 0;
}

/* Counts a line left out in SKIPPED, keeping WARNING ("FILE:LINE: why")
 * while fewer than CCA_FLEET_SKIPPED_SHOWN are kept. */
static void
skipped_add(CcaFleetSkipped *skipped, const char *warning)
{
	skipped->count++;
	if (!skipped->shown)
		skipped->shown = g_ptr_array_new_with_free_func(g_free);
	if (skipped->shown->len < CCA_FLEET_SKIPPED_SHOWN)
		g_ptr_array_add(skipped->shown, g_strdup(warning));
}

void
cca_fleet_stats_clear(CcaFleetStats *stats)
{
	cca_fleet_skipped_clear(&stats->bad_rows);
}

/* Reads rows file FILE whole (a regular file of at most
 * CCA_FLEET_MAX_ROWS_SIZE bytes) into *TEXT and *LEN. */
static gboolean
read_rows_file(const char *file, char **text, gsize *len, GError **error)
{
	return cca_input_read_file(file, CCA_FLEET_MAX_ROWS_SIZE, "the limit of a fleet rows file",
				   text, len, error);
}

/* Reads FILE's rows into DONE (key set) and JOB_DONE (job key -> rows
 * seen), counting them in *N; a line that is no row goes to BAD.  With
 * TRUNCATE, a torn last line is cut off the file (it is this process's
 * own file); otherwise skipped. */
static gboolean
read_rows(const char *file, GHashTable *done, GHashTable *job_total, GHashTable *job_seen,
	  bool truncate_torn, guint64 *n, CcaFleetSkipped *bad, GError **error)
{
	g_autofree char *text = NULL;
	gsize len;
	if (!read_rows_file(file, &text, &len, error))
		return FALSE;
	gsize end = len;
	while (end > 0 && text[end - 1] != '\n')
		end--;
	if (end < len && truncate_torn && truncate(file, (off_t)end) != 0) {
		g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(errno), "%s: %s", file,
			    g_strerror(errno));
		return FALSE;
	}
	gsize pos = 0;
	guint64 lineno = 0;
	while (pos < end) {
		const char *nl = memchr(text + pos, '\n', end - pos);
		gsize l = (gsize)(nl - (text + pos));
		lineno++;
		char *job_key = NULL;
		guint rows = 0;
		GError *local = NULL;
		char *key = cca_fleet_row_key(text + pos, l, &job_key, &rows, &local);
		if (!key) {
			g_autofree char *warning = g_strdup_printf("%s:%" G_GUINT64_FORMAT ": %s",
								   file, lineno, local->message);
			skipped_add(bad, warning);
			g_error_free(local);
			pos += l + 1;
			continue;
		}
		if (!g_hash_table_contains(done, key)) {
			g_hash_table_add(done, key);
			(*n)++;
			g_hash_table_insert(job_total, g_strdup(job_key), GUINT_TO_POINTER(rows));
			guint seen = GPOINTER_TO_UINT(g_hash_table_lookup(job_seen, job_key));
			g_hash_table_insert(job_seen, job_key, GUINT_TO_POINTER(seen + 1));
		} else {
			g_free(key);
			g_free(job_key);
		}
		pos += l + 1;
	}
	return TRUE;
}

static gboolean
write_all(int fd, const char *buf, gsize len)
{
	while (len > 0) {
		ssize_t n = write(fd, buf, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return FALSE;
		buf += n;
		len -= (gsize)n;
	}
	return TRUE;
}

/* Writes DIR/fleet.json with TEXT, or checks that the one there equals it. */
static gboolean
settle_options(const char *dir, const char *text, GError **error)
{
	g_autofree char *path = g_build_filename(dir, FLEET_OPTIONS_FILE, NULL);
	g_autofree char *have = NULL;
	if (!g_file_test(path, G_FILE_TEST_EXISTS)) {
		/* shards may race here: each writes its own file and renames it */
		g_autofree char *tmp = g_strdup_printf("%s.%d.tmp", path, (int)getpid());
		if (!g_file_set_contents(tmp, text, -1, error))
			return FALSE;
		if (rename(tmp, path) != 0) {
			g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(errno), "%s: %s",
				    path, g_strerror(errno));
			unlink(tmp);
			return FALSE;
		}
	}
	gsize len;
	if (!cca_input_read_file(path, CCA_FLEET_MAX_OPTIONS_SIZE, "the limit of fleet.json", &have,
				 &len, error))
		return FALSE;
	if (strlen(have) != len || strcmp(have, text) != 0) {
		/* the first 400 bytes say which options; the file may be larger */
		gsize have_len = strlen(g_strchomp(have));
		g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
			    "%s holds a run with other options (%.*s%s): use another --out, or the "
			    "same grid and devices",
			    path, (int)MIN(have_len, 400), have, have_len > 400 ? "..." : "");
		return FALSE;
	}
	return TRUE;
}

static gint
name_compare(gconstpointer a, gconstpointer b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names of the row files (FLEET_ROWS_SUFFIX) in run folder DIR,
 * sorted (so that warnings come in one order); NULL with ERROR when DIR
 * cannot be read. */
static GPtrArray *
row_files(const char *dir, GError **error)
{
	g_autoptr(GDir) d = g_dir_open(dir, 0, error);
	if (!d)
		return NULL;
	GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
	const char *name;
	while ((name = g_dir_read_name(d)))
		if (g_str_has_suffix(name, FLEET_ROWS_SUFFIX))
			g_ptr_array_add(names, g_strdup(name));
	g_ptr_array_sort(names, name_compare);
	return names;
}

typedef struct {
	const GPtrArray *jobs; /* the shard's */
	const CcaFleetOptions *options;
	GHashTable *done;
	int fd;
	GMutex lock;
	guint64 rows;
	guint errors;
	bool write_failed;
	int write_errno;
} RunState;

static void
run_one(void *data, guint i)
{
	RunState *s = data;
	g_autoptr(GString) out = g_string_new(NULL);
	cca_fleet_job_run(g_ptr_array_index(s->jobs, i), s->options, s->done, out);
	guint64 rows = 0;
	guint errors = 0;
	bool ok = true;
	int e = 0;
	for (gsize pos = 0; pos < out->len && ok;) {
		const char *nl = memchr(out->str + pos, '\n', out->len - pos);
		gsize l = (gsize)(nl - (out->str + pos)) + 1;
		/* one write(2) a line under O_APPEND: lines never interleave */
		ok = write_all(s->fd, out->str + pos, l);
		e = errno;
		if (g_strstr_len(out->str + pos, (gssize)l, "\"error\":"))
			errors++;
		rows++;
		pos += l;
	}
	g_mutex_lock(&s->lock);
	s->rows += rows;
	s->errors += errors;
	if (!ok && !s->write_failed) {
		s->write_failed = true;
		s->write_errno = e;
	}
	g_mutex_unlock(&s->lock);
}

gboolean
cca_fleet_run(const GPtrArray *jobs, const CcaFleetOptions *options, const char *dir, guint index,
	      guint count, guint threads, CcaFleetProgress progress, void *progress_data,
	      CcaFleetStats *stats, GError **error)
{
	memset(stats, 0, sizeof *stats);
	if (g_mkdir_with_parents(dir, 0777) != 0) {
		g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(errno), "%s: %s", dir,
			    g_strerror(errno));
		return FALSE;
	}
	g_autofree char *desc = cca_fleet_options_describe(options);
	if (!settle_options(dir, desc, error))
		return FALSE;
	g_autofree char *own_name =
		g_strdup_printf(FLEET_ROWS_PREFIX "%u-of-%u" FLEET_ROWS_SUFFIX, index, count);
	g_autofree char *own_path = g_build_filename(dir, own_name, NULL);
	g_autoptr(GHashTable) done = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	g_autoptr(GHashTable) job_total =
		g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	g_autoptr(GHashTable) job_seen =
		g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	{
		g_autoptr(GPtrArray) names = row_files(dir, error);
		if (!names)
			return FALSE;
		for (guint i = 0; i < names->len; i++) {
			const char *n = g_ptr_array_index(names, i);
			g_autofree char *path = g_build_filename(dir, n, NULL);
			if (!read_rows(path, done, job_total, job_seen, strcmp(n, own_name) == 0,
				       &stats->done, &stats->bad_rows, error))
				return FALSE;
		}
	}
	/* the shard's jobs that are not complete in DIR */
	g_autoptr(GPtrArray) mine = g_ptr_array_new();
	for (guint i = 0; i < jobs->len; i++) {
		const CcaFleetJob *job = g_ptr_array_index(jobs, i);
		uint64_t size;
		char sha[65] = "";
		GError *local = NULL;
		bool known = cca_fleet_identify(job->path, &size, sha, &local);
		g_clear_error(&local);
		/* an unreadable file goes by its path's hash */
		g_autofree char *path_sha =
			known ? NULL
			      : g_compute_checksum_for_string(G_CHECKSUM_SHA256, job->path, -1);
		if (cca_fleet_shard_of(known ? sha : path_sha, count) != index)
			continue;
		stats->jobs++;
		g_autofree char *job_key = g_strdup_printf("%s\n%s", job->path, sha);
		gpointer total;
		if (g_hash_table_lookup_extended(job_total, job_key, NULL, &total) &&
		    GPOINTER_TO_UINT(g_hash_table_lookup(job_seen, job_key)) >=
			    GPOINTER_TO_UINT(total)) {
			stats->skipped++;
			continue;
		}
		g_ptr_array_add(mine, (gpointer)job);
	}
	int fd = open(own_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0666);
	if (fd < 0) {
		g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(errno), "%s: %s", own_path,
			    g_strerror(errno));
		return FALSE;
	}
	RunState s = {.jobs = mine, .options = options, .done = done, .fd = fd};
	g_mutex_init(&s.lock);
	cca_parallel_run(mine->len, threads, run_one, &s, (CcaSweepProgress)progress,
			 progress_data);
	g_mutex_clear(&s.lock);
	stats->rows = s.rows;
	stats->errors = s.errors;
	if (close(fd) != 0 && !s.write_failed) {
		s.write_failed = true;
		s.write_errno = errno;
	}
	if (s.write_failed) {
		g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(s.write_errno), "%s: %s",
			    own_path, g_strerror(s.write_errno));
		return FALSE;
	}
	return TRUE;
}

gboolean
cca_fleet_append(const char *dir, const CcaFleetOptions *options, const char *name,
		 const char *rows, gsize len, GError **error)
{
	bool name_ok = *name != '\0';
	for (const char *c = name; *c; c++)
		name_ok &= g_ascii_isalnum(*c) || *c == '-' || *c == '_';
	if (!name_ok || (len && rows[len - 1] != '\n')) {
		g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
			    !name_ok ? "bad rows file name '%s' (letters, digits, - and _)"
				     : "%s: the rows do not end with a newline",
			    name);
		return FALSE;
	}
	if (g_mkdir_with_parents(dir, 0777) != 0) {
		g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(errno), "%s: %s", dir,
			    g_strerror(errno));
		return FALSE;
	}
	g_autofree char *desc = cca_fleet_options_describe(options);
	if (!settle_options(dir, desc, error))
		return FALSE;
	g_autofree char *file = g_strconcat(FLEET_ROWS_PREFIX, name, FLEET_ROWS_SUFFIX, NULL);
	g_autofree char *path = g_build_filename(dir, file, NULL);
	int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0666);
	bool ok = fd >= 0;
	for (gsize pos = 0; ok && pos < len;) {
		const char *nl = memchr(rows + pos, '\n', len - pos);
		gsize l = (gsize)(nl - (rows + pos)) + 1;
		ok = write_all(fd, rows + pos, l);
		pos += l;
	}
	int e = errno;
	if (fd >= 0 && close(fd) != 0 && ok) {
		ok = false;
		e = errno;
	}
	if (!ok) {
		g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(e), "%s: %s", path,
			    g_strerror(e));
		return FALSE;
	}
	return TRUE;
}

/* --------------------------------------------------------------- merge */

struct CcaFleetMerge {
	GHashTable *rows;	 /* key -> the row's text, owned */
	char *options;		 /* fleet.json of the first folder added */
	char *options_source;	 /* its folder */
	GPtrArray *dirs;	 /* the folders added (char*), for "no rows" */
	CcaFleetSkipped skipped; /* lines that were no rows */
	/* the shards whose rows files were found: shard count N -> the set
	 * of indices I + 1 (rows.I-of-N.jsonl) */
	GHashTable *shards;
};

CcaFleetMerge *
cca_fleet_merge_new(void)
{
	CcaFleetMerge *m = g_new0(CcaFleetMerge, 1);
	m->rows = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
	m->dirs = g_ptr_array_new_with_free_func(g_free);
	m->shards = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL,
					  (GDestroyNotify)g_hash_table_unref);
	return m;
}

void
cca_fleet_merge_free(CcaFleetMerge *merge)
{
	if (!merge)
		return;
	g_hash_table_unref(merge->rows);
	g_free(merge->options);
	g_free(merge->options_source);
	g_ptr_array_unref(merge->dirs);
	g_hash_table_unref(merge->shards);
	cca_fleet_skipped_clear(&merge->skipped);
	g_free(merge);
}

gboolean
cca_fleet_merge_add(CcaFleetMerge *merge, const char *line, gsize len, const char *name,
		    guint64 lineno, GError **error)
{
	GError *local = NULL;
	char *key = cca_fleet_row_key(line, len, NULL, NULL, &local);
	if (!key) {
		g_set_error(error, CCA_INPUT_ERROR, CCA_INPUT_ERROR_CORRUPT,
			    "%s:%" G_GUINT64_FORMAT ": %s", name, lineno, local->message);
		g_error_free(local);
		return FALSE;
	}
	const char *have = g_hash_table_lookup(merge->rows, key);
	char *text = g_strndup(line, len);
	if (have && strcmp(have, text) <= 0) {
		g_free(key);
		g_free(text);
		return TRUE;
	}
	g_hash_table_replace(merge->rows, key, text);
	return TRUE;
}

void
cca_fleet_merge_add_text(CcaFleetMerge *merge, const char *text, gsize len, const char *name)
{
	gsize pos = 0;
	guint64 lineno = 0;
	for (;;) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		if (!nl)
			break; /* a torn last line: its job is incomplete */
		lineno++;
		GError *local = NULL;
		if (!cca_fleet_merge_add(merge, text + pos, (gsize)(nl - (text + pos)), name,
					 lineno, &local)) {
			skipped_add(&merge->skipped, local->message);
			g_error_free(local);
		}
		pos = (gsize)(nl - text) + 1;
	}
}

const CcaFleetSkipped *
cca_fleet_merge_skipped(const CcaFleetMerge *merge)
{
	return &merge->skipped;
}

gboolean
cca_fleet_merge_check(const CcaFleetMerge *merge, GError **error)
{
	if (g_hash_table_size(merge->rows) > 0)
		return TRUE;
	g_autoptr(GString) dirs = g_string_new(NULL);
	for (guint i = 0; i < merge->dirs->len; i++)
		g_string_append_printf(dirs, "%s%s", i ? ", " : "",
				       (char *)g_ptr_array_index(merge->dirs, i));
	g_set_error(error, CCA_INPUT_ERROR, CCA_INPUT_ERROR_NOT_SNAPSHOT,
		    "%s: no fleet rows yet (fleet run has written none%s): nothing to report",
		    merge->dirs->len ? dirs->str : "(no folder)",
		    merge->skipped.count ? ", and the lines there are no rows" : "");
	return FALSE;
}

/* Orders guints. */
static gint
compare_uint(gconstpointer a, gconstpointer b)
{
	guint x = *(const guint *)a, y = *(const guint *)b;
	return (x > y) - (x < y);
}

/* Notes the shard of rows file NAME when it is named as cca_fleet_run()
 * names them, rows.I-of-N.jsonl (not cca_fleet_append()'s own names). */
static void
note_shard(CcaFleetMerge *merge, const char *name)
{
	if (!g_str_has_prefix(name, FLEET_ROWS_PREFIX))
		return;
	const char *p = name + strlen(FLEET_ROWS_PREFIX);
	uint64_t i, n;
	if (!cca_number_scan_u64(&p, &i) || !g_str_has_prefix(p, "-of-"))
		return;
	p += 4;
	if (!cca_number_scan_u64(&p, &n) || strcmp(p, FLEET_ROWS_SUFFIX) != 0 || n == 0 || i >= n ||
	    n > G_MAXUINT32)
		return;
	GHashTable *seen = g_hash_table_lookup(merge->shards, GUINT_TO_POINTER((guint)n));
	if (!seen) {
		seen = g_hash_table_new(g_direct_hash, g_direct_equal);
		g_hash_table_insert(merge->shards, GUINT_TO_POINTER((guint)n), seen);
	}
	g_hash_table_add(seen, GUINT_TO_POINTER((guint)i + 1));
}

gboolean
cca_fleet_merge_add_dir(CcaFleetMerge *merge, const char *dir, GError **error)
{
	g_autofree char *opt_path = g_build_filename(dir, FLEET_OPTIONS_FILE, NULL);
	g_autofree char *opts = NULL;
	gsize opts_len;
	if (!cca_input_read_file(opt_path, CCA_FLEET_MAX_OPTIONS_SIZE, "the limit of fleet.json",
				 &opts, &opts_len, error)) {
		g_prefix_error(error, "not a fleet run folder: ");
		return FALSE;
	}
	g_ptr_array_add(merge->dirs, g_strdup(dir));
	if (!merge->options) {
		merge->options = g_steal_pointer(&opts);
		merge->options_source = g_strdup(dir);
	} else if (strcmp(merge->options, opts) != 0) {
		g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
			    "%s ran other options than %s (their fleet.json differ): merge runs "
			    "of one grid",
			    dir, merge->options_source);
		return FALSE;
	}
	g_autoptr(GPtrArray) names = row_files(dir, error);
	if (!names)
		return FALSE;
	for (guint i = 0; i < names->len; i++) {
		g_autofree char *path = g_build_filename(dir, g_ptr_array_index(names, i), NULL);
		g_autofree char *text = NULL;
		gsize len;
		if (!read_rows_file(path, &text, &len, error))
			return FALSE;
		cca_fleet_merge_add_text(merge, text, len, path);
		note_shard(merge, g_ptr_array_index(names, i));
	}
	return TRUE;
}

GPtrArray *
cca_fleet_merge_missing(const CcaFleetMerge *merge)
{
	GPtrArray *missing = g_ptr_array_new_with_free_func(g_free);
	GHashTableIter it;
	gpointer key, value;
	g_autoptr(GArray) counts = g_array_new(FALSE, FALSE, sizeof(guint));
	g_hash_table_iter_init(&it, merge->shards);
	while (g_hash_table_iter_next(&it, &key, &value)) {
		guint n = GPOINTER_TO_UINT(key);
		/* one shard count whose every shard ran covers every job */
		if (g_hash_table_size(value) == n)
			return missing;
		g_array_append_val(counts, n);
	}
	g_array_sort(counts, compare_uint);
	for (guint c = 0; c < counts->len; c++) {
		guint n = g_array_index(counts, guint, c);
		GHashTable *seen = g_hash_table_lookup(merge->shards, GUINT_TO_POINTER(n));
		for (guint i = 0; i < n; i++)
			if (!g_hash_table_contains(seen, GUINT_TO_POINTER(i + 1)))
				g_ptr_array_add(missing, g_strdup_printf("%u/%u", i, n));
	}
	return missing;
}

/* One parsed row of the report. */
typedef struct {
	char *setting;		      /* canonical settings string */
	char *shown;		      /* SETTING escaped for the text report */
	bool recorded;		      /* the job's own settings */
	bool fits;		      /* no OOM on the job's own device */
	bool may_not_fit;	      /* !fits, but only some timings or placements OOM */
	bool window;		      /* the trace starts mid-run: figures of the window alone */
	uint64_t peak;		      /* peak reserved bytes (up to the OOM when !fits) */
	uint64_t oom_event;	      /* where it ran out, when !fits */
	bool before_window;	      /* ... before the window: its start did not fit */
	const CcaGpuPreset *smallest; /* smallest card that fits, when asked */
} MRow;

typedef struct {
	char *name;	 /* path, with " device N" when N > 0 */
	gsize path_len;	 /* the bytes of NAME that are the path */
	char *own;	 /* its own device, in words */
	char *own_short; /* the same with "*" for " (assumed)" (text tables) */
	bool assumed;	 /* no GPU in the manifest, the options or the snapshot */
	uint64_t limit;
	uint64_t cap; /* its own device's cap, 0 when none */
	GArray *rows; /* MRow, by setting */
	MRow *base;   /* the recorded row */
	MRow *best;   /* least peak reserved among rows that fit, or NULL */
	MRow *card;   /* with no row fitting: the row of the smallest card, or NULL */
} MJob;

typedef struct {
	char *setting;
	char *shown; /* SETTING escaped for the text report */
	guint jobs, oom, saves, breaks;
	GArray *saved;	     /* int64_t: base peak - peak, over jobs that fit both ways */
	int64_t saved_total; /* their sum, held at INT64_MIN..INT64_MAX (never wraps) */
	int64_t saved_median;
	bool all_jobs; /* ran on every job */
} MSetting;

typedef struct {
	GPtrArray *jobs;     /* MJob*, by name */
	GPtrArray *settings; /* MSetting*, best first */
	GPtrArray *errors;   /* char* "path: message", sorted */
	guint64 skipped;     /* lines of the rows files that were no rows */
	guint snapshots;     /* distinct snapshots replayed */
	guint complete;	     /* jobs replayed under their own settings */
	guint base_oom;	     /* jobs whose own settings OOM */
	guint base_maybe;    /* of those, jobs that OOM under some timings or placements only */
	guint windows;	     /* jobs whose traces start mid-run */
	guint rescued;	     /* of those, jobs some setting fits */
	guint unsaved;	     /* jobs no setting fits */
	MSetting *answer;    /* the setting to use fleet-wide, or NULL */
} MReport;

static void
mjob_free(gpointer p)
{
	MJob *j = p;
	for (guint i = 0; i < j->rows->len; i++) {
		g_free(g_array_index(j->rows, MRow, i).setting);
		g_free(g_array_index(j->rows, MRow, i).shown);
	}
	g_array_free(j->rows, TRUE);
	g_free(j->name);
	g_free(j->own);
	g_free(j->own_short);
	g_free(j);
}

static void
msetting_free(gpointer p)
{
	MSetting *s = p;
	g_free(s->setting);
	g_free(s->shown);
	g_array_free(s->saved, TRUE);
	g_free(s);
}

static void
report_clear(MReport *r)
{
	g_ptr_array_unref(r->jobs);
	g_ptr_array_unref(r->settings);
	g_ptr_array_unref(r->errors);
}

static gint
str_ptr_compare(gconstpointer a, gconstpointer b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static gint
mjob_compare(gconstpointer a, gconstpointer b)
{
	return strcmp((*(MJob *const *)a)->name, (*(MJob *const *)b)->name);
}

static gint
int64_compare(gconstpointer a, gconstpointer b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

/* Settings best first: on every job before on some, fewest OOMs, most
 * reserved memory saved, then by name. */
static gint
msetting_compare(gconstpointer a, gconstpointer b)
{
	const MSetting *x = *(MSetting *const *)a, *y = *(MSetting *const *)b;
	if (x->all_jobs != y->all_jobs)
		return x->all_jobs ? -1 : 1;
	if (x->jobs - x->oom != y->jobs - y->oom)
		return x->jobs - x->oom > y->jobs - y->oom ? -1 : 1;
	if (x->saved_total != y->saved_total)
		return x->saved_total > y->saved_total ? -1 : 1;
	return strcmp(x->setting, y->setting);
}

/* The longest form of a path, setting or message of a row the text
 * report shows (cca_text_display()): a whole path of PATH_MAX bytes. */
#define FLEET_SHOWN_MAX 4096

/* TEXT (from a row) as the text report shows it: escaped, one line. */
static char *
shown(const char *text)
{
	return cca_text_display(text, -1, FLEET_SHOWN_MAX);
}

/* A + B held at INT64_MIN..INT64_MAX instead of wrapping. */
static int64_t
add_saturated(int64_t a, int64_t b)
{
	if (b > 0 && a > INT64_MAX - b)
		return INT64_MAX;
	if (b < 0 && a < INT64_MIN - b)
		return INT64_MIN;
	return a + b;
}

/* Whether a row's own_device DEV was assumed rather than given. */
static bool
device_assumed(json_t *dev)
{
	const char *source = json_string_value(json_object_get(dev, "source"));
	return source && g_str_has_prefix(source, "assumed");
}

static uint64_t juint(json_t *o, const char *key);

/* The row's own_device DEV in words: "H200 (assumed), cap 35.20 MiB";
 * MARK: "H200*, cap ..." for the text tables. */
static char *
own_words(json_t *dev, bool mark)
{
	const char *gpu = json_string_value(json_object_get(dev, "gpu"));
	json_t *cap = json_object_get(dev, "cap");
	char a[32];
	g_autofree char *gpu_shown = shown(gpu ? gpu : "?");
	GString *s = g_string_new(gpu_shown);
	if (device_assumed(dev))
		g_string_append(s, mark ? "*" : " (assumed)");
	/* a cap nobody passed, that the recording's OOM proved: the largest
	 * it allows was taken */
	json_t *proved = json_object_get(dev, "cap_proved");
	char b[32];
	if (json_is_object(proved) && json_is_integer(cap))
		g_string_append_printf(s, ", cap inferred %s..%s (the largest taken)",
				       cca_size_format(juint(proved, "lo"), a),
				       cca_size_format((uint64_t)json_integer_value(cap), b));
	else if (json_is_integer(cap))
		g_string_append_printf(s, ", cap %s",
				       cca_size_format((uint64_t)json_integer_value(cap), a));
	return g_string_free(s, FALSE);
}

static uint64_t
juint(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);
	return json_is_integer(v) && json_integer_value(v) > 0 ? (uint64_t)json_integer_value(v)
							       : 0;
}

/* A better best row: fits, less peak reserved, the job's own settings on
 * a tie, then by name. */
static bool
row_better(const MRow *a, const MRow *b)
{
	if (!b)
		return true;
	if (a->peak != b->peak)
		return a->peak < b->peak;
	if (a->recorded != b->recorded)
		return a->recorded;
	return strcmp(a->setting, b->setting) < 0;
}

static void
report_build(CcaFleetMerge *m, MReport *r)
{
	memset(r, 0, sizeof *r);
	r->jobs = g_ptr_array_new_with_free_func(mjob_free);
	r->settings = g_ptr_array_new_with_free_func(msetting_free);
	r->errors = g_ptr_array_new_with_free_func(g_free);
	r->skipped = m->skipped.count;
	g_autoptr(GHashTable) jobs = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	/* rows in key order: everything below is then independent of input order */
	g_autofree gpointer *keys = g_hash_table_get_keys_as_array(m->rows, NULL);
	guint n_keys = g_hash_table_size(m->rows);
	qsort(keys, n_keys, sizeof *keys, str_ptr_compare);
	for (guint k = 0; k < n_keys; k++) {
		json_t *row = json_loads(g_hash_table_lookup(m->rows, keys[k]), 0, NULL);
		g_assert(row != NULL); /* cca_fleet_merge_add() keeps rows that parse */
		const char *path = json_string_value(json_object_get(row, "path"));
		const char *err = json_string_value(json_object_get(row, "error"));
		if (err) {
			g_ptr_array_add(r->errors, g_strdup(err));
			json_decref(row);
			continue;
		}
		const char *sha = json_string_value(json_object_get(row, "sha256"));
		json_int_t device = json_integer_value(json_object_get(row, "device"));
		g_autofree char *jk =
			g_strdup_printf("%s\n%s\n%" JSON_INTEGER_FORMAT, path, sha, device);
		MJob *job = g_hash_table_lookup(jobs, jk);
		if (!job) {
			job = g_new0(MJob, 1);
			job->name = device ? g_strdup_printf("%s device %" JSON_INTEGER_FORMAT,
							     path, device)
					   : g_strdup(path);
			job->path_len = strlen(path);
			json_t *dev = json_object_get(row, "own_device");
			job->own = own_words(dev, false);
			job->own_short = own_words(dev, true);
			job->assumed = device_assumed(dev);
			job->limit = juint(dev, "limit");
			job->cap = juint(dev, "cap");
			job->rows = g_array_new(FALSE, TRUE, sizeof(MRow));
			g_hash_table_insert(jobs, g_strdup(jk), job);
			g_ptr_array_add(r->jobs, job);
		}
		MRow mr = {0};
		mr.setting = g_strdup(json_string_value(json_object_get(row, "setting")));
		mr.shown = shown(mr.setting);
		mr.recorded = json_is_true(json_object_get(row, "recorded"));
		mr.fits = json_is_true(json_object_get(row, "fits"));
		mr.may_not_fit = json_is_true(json_object_get(row, "may_not_fit"));
		mr.window = json_is_object(json_object_get(row, "window"));
		mr.peak = juint(row, "peak_reserved");
		mr.oom_event = juint(row, "oom_event");
		mr.before_window = json_is_true(
			json_object_get(json_object_get(row, "window"), "oom_before_window"));
		const char *gpu = json_string_value(json_object_get(row, "smallest_gpu"));
		mr.smallest = gpu ? cca_fit_gpu_preset_find(gpu, NULL) : NULL;
		g_array_append_val(job->rows, mr);
		json_decref(row);
	}
	g_ptr_array_sort(r->jobs, mjob_compare);
	g_ptr_array_sort(r->errors, str_ptr_compare);
	g_autoptr(GHashTable) snaps = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	g_autoptr(GHashTable) settings = g_hash_table_new(g_str_hash, g_str_equal);
	for (guint j = 0; j < r->jobs->len; j++) {
		MJob *job = g_ptr_array_index(r->jobs, j);
		g_hash_table_add(snaps, g_strdup(job->name));
		for (guint i = 0; i < job->rows->len; i++) {
			MRow *row = &g_array_index(job->rows, MRow, i);
			if (row->recorded)
				job->base = row;
			if (row->fits && row_better(row, job->best))
				job->best = row;
			if (!row->fits && row->smallest &&
			    (!job->card ||
			     row->smallest->total_memory < job->card->smallest->total_memory ||
			     (row->smallest->total_memory == job->card->smallest->total_memory &&
			      row_better(row, job->card))))
				job->card = row;
		}
		if (!job->base)
			continue; /* an incomplete job: its recorded row is missing */
		r->windows += job->base->window;
		if (!job->base->fits) {
			r->base_oom++;
			r->base_maybe += job->base->may_not_fit;
			if (job->best)
				r->rescued++;
		}
		if (!job->best)
			r->unsaved++;
		for (guint i = 0; i < job->rows->len; i++) {
			MRow *row = &g_array_index(job->rows, MRow, i);
			MSetting *s = g_hash_table_lookup(settings, row->setting);
			if (!s) {
				s = g_new0(MSetting, 1);
				s->setting = g_strdup(row->setting);
				s->shown = g_strdup(row->shown);
				s->saved = g_array_new(FALSE, FALSE, sizeof(int64_t));
				g_hash_table_insert(settings, s->setting, s);
				g_ptr_array_add(r->settings, s);
			}
			s->jobs++;
			s->oom += !row->fits;
			s->saves += !job->base->fits && row->fits;
			s->breaks += job->base->fits && !row->fits;
			if (job->base->fits && row->fits) {
				int64_t d = (int64_t)job->base->peak - (int64_t)row->peak;
				g_array_append_val(s->saved, d);
				s->saved_total = add_saturated(s->saved_total, d);
			}
		}
	}
	for (guint j = 0; j < r->jobs->len; j++)
		r->complete += ((MJob *)g_ptr_array_index(r->jobs, j))->base != NULL;
	r->snapshots = g_hash_table_size(snaps);
	for (guint i = 0; i < r->settings->len; i++) {
		MSetting *s = g_ptr_array_index(r->settings, i);
		s->all_jobs = s->jobs == r->complete;
		g_array_sort(s->saved, int64_compare);
		if (s->saved->len)
			s->saved_median = g_array_index(s->saved, int64_t, (s->saved->len - 1) / 2);
	}
	g_ptr_array_sort(r->settings, msetting_compare);
	if (r->settings->len) {
		MSetting *best = g_ptr_array_index(r->settings, 0);
		guint base_fits = r->complete - r->base_oom;
		if (best->all_jobs &&
		    (best->jobs - best->oom > base_fits ||
		     (best->jobs - best->oom == base_fits && best->saved_total > 0)))
			r->answer = best;
	}
}

static const char *
setting_words(const char *conf)
{
	return *conf ? conf : "(PyTorch defaults)";
}

/* Formats a signed byte count. */
static const char *
signed_size(int64_t v, char buf[40])
{
	char a[32];
	cca_size_format(v < 0 ? (uint64_t)-v : (uint64_t)v, a);
	g_snprintf(buf, 40, "%s%s", v < 0 ? "-" : "", a);
	return buf;
}

/* The length of the folder all of JOBS' names lie in, its '/' included
 * ("/data/snaps/" of "/data/snaps/a.pickle" and "/data/snaps/b/c.pickle");
 * 0 when they share none but the root. */
static gsize
common_folder(GPtrArray *jobs)
{
	const char *first = NULL;
	gsize n = 0;
	for (guint j = 0; j < jobs->len; j++) {
		const char *name = ((MJob *)g_ptr_array_index(jobs, j))->name;
		if (!first) {
			first = name;
			n = strlen(name);
			continue;
		}
		gsize i = 0;
		while (i < n && name[i] && name[i] == first[i])
			i++;
		n = i;
	}
	while (n > 0 && first[n - 1] != '/')
		n--;
	return n > 1 ? n : 0;
}

/* Appends TEXT to OUT as one paragraph wrapped at WIDTH. */
static void
paragraph(GString *out, const char *text, guint width)
{
	cca_text_wrap(out, text, width, 0);
}

/* Appends the printf-formatted paragraph FMT to OUT, wrapped at WIDTH. */
static void paragraphf(GString *out, guint width, const char *fmt, ...) G_GNUC_PRINTF(3, 4);

static void
paragraphf(GString *out, guint width, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	g_autofree char *text = g_strdup_vprintf(fmt, ap);
	va_end(ap);
	paragraph(out, text, width);
}

/* A settings cell shortened to WIDTH: brief key names, then a middle cut
 * (a table's shorten). */
static char *
shorten_setting(const char *cell, guint width)
{
	return cca_settings_cell(cell, width, NULL);
}

/* The note under the report when a settings cell used brief names. */
static void
print_brief_names(GString *out, guint width)
{
	g_autoptr(GString) p = g_string_new(NULL);
	cca_settings_append_brief_note(p);
	paragraph(out, p->str, width);
}

/* BYTES of peak reserved memory saved (negative: spent) in words: "saves
 * 1.00 GiB of reserved memory at the peak WHERE", "costs ... more",
 * "changes no ..."; WHERE NULL: the short form ("saves 1.00 GiB"). */
static char *
saved_words(int64_t bytes, const char *where)
{
	char a[32];
	cca_size_format(bytes < 0 ? (uint64_t)-bytes : (uint64_t)bytes, a);
	if (!where)
		return bytes > 0   ? g_strdup_printf("saves %s", a)
		       : bytes < 0 ? g_strdup_printf("costs %s more", a)
				   : g_strdup("unchanged");
	return bytes > 0 ? g_strdup_printf("saves %s of reserved memory at the peak %s", a, where)
	       : bytes < 0
		       ? g_strdup_printf("costs %s more reserved memory at the peak %s", a, where)
		       : g_strdup_printf("changes no reserved memory at the peak %s", where);
}

/* How the text report names R's jobs: each name less the FOLDER bytes all
 * share and, unless two would then read the same, less its snapshot
 * extension, escaped (shown()).  Sets *STRIPPED to whether the extensions
 * went (false when there are no jobs); returns a new array (g_strfreev)
 * in R->jobs' order. */
static char **
job_display_names(const MReport *r, gsize folder, bool *stripped)
{
	guint n = r->jobs->len;
	char **names = g_new0(char *, n + 1);
	g_autoptr(GHashTable) seen = g_hash_table_new(g_str_hash, g_str_equal);
	*stripped = n > 0;
	for (guint j = 0; j < n; j++) {
		const MJob *job = g_ptr_array_index(r->jobs, j);
		g_autofree char *path = g_strndup(job->name, job->path_len);
		gsize ext = snapshot_extension_length(path);
		if (ext + folder >= job->path_len) /* a name that is all extension */
			ext = 0;
		g_autofree char *raw =
			g_strdup_printf("%.*s%s", (int)(job->path_len - ext - folder),
					job->name + folder, job->name + job->path_len);
		names[j] = shown(raw);
		if (!g_hash_table_add(seen, names[j]))
			*stripped = false;
	}
	if (!*stripped)
		for (guint j = 0; j < n; j++) {
			const MJob *job = g_ptr_array_index(r->jobs, j);
			g_free(names[j]);
			names[j] = shown(job->name + folder);
		}
	return names;
}

/* The report's opening: the fleet, the answer, what choosing per job
 * gives, and how the tables name the jobs: under the folder of FOLDER
 * bytes of the first job's name, less their extensions when STRIPPED. */
/* Returns a new string: N and NOUN, its plural with an "s" unless N is 1
 * ("1 job", "3 jobs"; NOUN "snapshot", "setting"). */
static char *
count_words(guint64 n, const char *noun)
{
	return g_strdup_printf("%" G_GUINT64_FORMAT " %s%s", n, noun, n == 1 ? "" : "s");
}

static void
print_answer(const MReport *r, gsize folder, bool stripped, GString *out, guint width)
{
	g_autofree char *jobs = count_words(r->complete, "job");
	g_autofree char *settings = count_words(r->settings->len, "setting");
	g_autofree char *failed = count_words(r->errors->len, "snapshot");
	if (r->errors->len)
		paragraphf(out, width,
			   "Fleet: %s replayed under %s on %s own device%s; %s could not be "
			   "replayed.",
			   jobs, settings, r->complete == 1 ? "its" : "their",
			   r->complete == 1 ? "" : "s", failed);
	else
		paragraphf(out, width, "Fleet: %s replayed under %s on %s own device%s.", jobs,
			   settings, r->complete == 1 ? "its" : "their",
			   r->complete == 1 ? "" : "s");
	const char *maybe = r->base_maybe ? " or may (their replay fits, another stream timing or "
					    "segment placement runs out)"
					  : "";
	if (r->base_oom)
		paragraphf(out, width,
			   "Under the settings they ran with, %u of the %s run%s out of memory on "
			   "%s own device%s%s.",
			   r->base_oom, jobs, r->base_oom == 1 ? "s" : "",
			   r->base_oom == 1 ? "its" : "their", r->base_oom == 1 ? "" : "s", maybe);
	else
		paragraphf(out, width,
			   "Under the settings they ran with, no job runs out of memory on its "
			   "own device%s.",
			   maybe);
	if (r->windows == 1)
		paragraphf(out, width,
			   "1 of the jobs is a window of its run (its trace starts mid-run): its "
			   "peaks, counts and fits cover the window alone, from the state the "
			   "recording had when it opened.");
	else if (r->windows)
		paragraphf(
			out, width,
			"%u of the jobs are windows of their runs (their traces start mid-run): "
			"their peaks, counts and fits cover the window alone, from the state the "
			"recording had when it opened.",
			r->windows);
	g_string_append_c(out, '\n');
	if (r->answer) {
		const MSetting *s = r->answer;
		g_autofree char *breaks =
			s->breaks ? g_strdup_printf("makes %u that fit run out", s->breaks)
				  : g_strdup("makes none that fit run out");
		g_autofree char *total = saved_words(s->saved_total, "in total");
		g_autofree char *median = saved_words(s->saved_median, NULL);
		g_autofree char *both = count_words(s->saved->len, "job");
		g_autofree char *saves =
			r->base_oom
				? g_strdup_printf("it saves %u of the %u that ran out of memory "
						  "%s %s",
						  s->saves, r->base_oom, s->breaks ? "but" : "and",
						  breaks)
				: g_strdup_printf("it %s", breaks);
		paragraphf(out, width,
			   "Answer: set PYTORCH_CUDA_ALLOC_CONF=%s on every job: %s. Over the %s "
			   "that fit%s both ways it %s (the median job: %s).",
			   *s->shown ? s->shown : "\"\" (PyTorch's defaults)", saves, both,
			   s->saved->len == 1 ? "s" : "", total, median);
	} else {
		paragraph(out,
			  "Answer: no single setting does better than each job's own settings on "
			  "every job.",
			  width);
	}
	if (r->base_oom)
		paragraphf(out, width,
			   "Choosing per job (below), the best settings save %u of the %u that ran "
			   "out of memory.",
			   r->rescued, r->base_oom);
	if (r->unsaved) {
		g_autofree char *unsaved = count_words(r->unsaved, "job");
		paragraphf(out, width, "%s fit%s under no setting: %s a bigger card (below).",
			   unsaved, r->unsaved == 1 ? "s" : "",
			   r->unsaved == 1 ? "it needs" : "they need");
	}
	if (r->jobs->len && (folder || stripped)) {
		g_autofree char *under =
			g_strndup(((MJob *)g_ptr_array_index(r->jobs, 0))->name, folder);
		g_autofree char *under_shown = shown(under);
		paragraphf(out, width, "Jobs are named below by their path%s%s%s.",
			   folder ? " under " : "", under_shown,
			   stripped ? ", less the extension (.pickle.xz and the like)" : "");
	}
}

/* The shards that left no rows file, when some did (merge ran with
 * --allow-missing): their jobs are not in the report. */
static void
print_missing(CcaFleetMerge *merge, GString *out, guint width)
{
	g_autoptr(GPtrArray) missing = cca_fleet_merge_missing(merge);
	if (!missing->len)
		return;
	g_autoptr(GString) list = g_string_new(NULL);
	for (guint i = 0; i < missing->len; i++)
		g_string_append_printf(list, "%s%s", i ? ", " : "",
				       (const char *)g_ptr_array_index(missing, i));
	paragraphf(out, width,
		   "Missing: shard%s %s left no rows file; %s jobs are not in this report.",
		   missing->len == 1 ? "" : "s", list->str, missing->len == 1 ? "its" : "their");
}

/* The count of lines left out, when there are some. */
static void
print_skipped(const MReport *r, GString *out, guint width)
{
	if (r->skipped) {
		g_autofree char *lines = count_words(r->skipped, "line");
		paragraphf(out, width,
			   "%s of the rows files %s no fleet row%s and %s left out (the warnings "
			   "name the first).",
			   lines, r->skipped == 1 ? "is" : "are", r->skipped == 1 ? "" : "s",
			   r->skipped == 1 ? "was" : "were");
	}
}

/* The snapshots that could not be replayed, with the reason each. */
static void
print_errors(const MReport *r, GString *out, guint width)
{
	if (!r->errors->len)
		return;
	g_string_append(out, "\nSnapshots that could not be replayed\n");
	for (guint i = 0; i < r->errors->len; i++) {
		g_autofree char *message = shown(g_ptr_array_index(r->errors, i));
		paragraph(out, message, width);
	}
}

/* The settings that ran on every job, best first; TRUE when a setting was
 * shortened. */
static bool
print_settings(const MReport *r, GString *out, guint width)
{
	static const CcaTableColumn columns[] = {
		{"setting", .elastic = TRUE, .min = 25, .shorten = shorten_setting},
		{"jobs", .right = TRUE},
		{"oom", .right = TRUE},
		{"saves", .right = TRUE},
		{"breaks", .right = TRUE},
		{"saved total", .right = TRUE},
		{"saved median", .right = TRUE},
	};
	char a[40], b[40], n1[16], n2[16], n3[16], n4[16];
	g_string_append_c(out, '\n');
	paragraph(out,
		  "Settings, best first (oom: jobs that run out of memory on their own device; "
		  "saves/breaks: against the job's own settings; saved: peak reserved memory "
		  "saved over jobs that fit both ways)",
		  width);
	g_autoptr(CcaTable) table = cca_table_new(columns, G_N_ELEMENTS(columns));
	g_snprintf(n1, sizeof n1, "%u", r->complete);
	g_snprintf(n2, sizeof n2, "%u", r->base_oom);
	cca_table_add(table,
		      (const char *[]){"(each job's own settings)", n1, n2, "-", "-", "-", "-"});
	guint partial = 0;
	for (guint i = 0; i < r->settings->len; i++) {
		const MSetting *s = g_ptr_array_index(r->settings, i);
		if (!s->all_jobs) {
			partial++;
			continue;
		}
		g_snprintf(n1, sizeof n1, "%u", s->jobs);
		g_snprintf(n2, sizeof n2, "%u", s->oom);
		g_snprintf(n3, sizeof n3, "%u", s->saves);
		g_snprintf(n4, sizeof n4, "%u", s->breaks);
		cca_table_add(table, (const char *[]){setting_words(s->shown), n1, n2, n3, n4,
						      signed_size(s->saved_total, a),
						      signed_size(s->saved_median, b)});
	}
	bool shortened = cca_table_print(table, out, width) & 1u;
	if (partial) {
		g_autofree char *more = count_words(partial, "more setting");
		paragraphf(out, width,
			   "(%s ran on some jobs only: values taken from each "
			   "trace's requests, and jobs' own settings; see --json)",
			   more);
	}
	return shortened;
}

/* The note under a table that shows assumed devices as "H200*". */
static void
print_assumed_note(GString *out, guint width)
{
	paragraph(out,
		  "*: assumed (no GPU in the manifest, the options or the snapshot); give one with "
		  "gpu= in a manifest or --gpu",
		  width);
}

/* The jobs no setting fits, with the smallest card that would; TRUE when
 * a setting was shortened. */
static bool
print_unsaved(const MReport *r, char *const *names, GString *out, guint width)
{
	static const CcaTableColumn columns[] = {
		{"job", .elastic = TRUE, .cut = CCA_TABLE_CUT_START},
		{"own device", .elastic = TRUE, .min = 20},
		{"smallest card", .right = FALSE},
		{"with setting", .elastic = TRUE, .min = 24, .shorten = shorten_setting},
	};
	bool assumed = false;
	g_string_append_c(out, '\n');
	paragraph(out,
		  "Jobs no setting saves, with the smallest card that would (fit's GPU presets, "
		  "the card's whole memory: no cap)",
		  width);
	g_autoptr(CcaTable) table = cca_table_new(columns, G_N_ELEMENTS(columns));
	for (guint j = 0; j < r->jobs->len; j++) {
		const MJob *job = g_ptr_array_index(r->jobs, j);
		if (!job->base || job->best)
			continue;
		assumed |= job->assumed;
		cca_table_add(table,
			      (const char *[]){names[j], job->own_short,
					       job->card ? job->card->smallest->name
							 : "none of the presets",
					       job->card ? setting_words(job->card->shown) : "-"});
	}
	bool shortened = cca_table_print(table, out, width) & (1u << 3);
	if (assumed)
		print_assumed_note(out, width);
	return shortened;
}

/* Orders job indices by their own device: capped ones first, smallest
 * cap first, then by its words, then by name. */
static gint
by_device(gconstpointer a, gconstpointer b, gpointer data)
{
	const MReport *r = data;
	guint i = *(const guint *)a, j = *(const guint *)b;
	const MJob *x = g_ptr_array_index(r->jobs, i), *y = g_ptr_array_index(r->jobs, j);
	uint64_t cx = x->cap ? x->cap : UINT64_MAX, cy = y->cap ? y->cap : UINT64_MAX;
	if (cx != cy)
		return cx < cy ? -1 : 1;
	int c = strcmp(x->own, y->own);
	return c ? c : (i > j) - (i < j);
}

/* Each job's own result and its best setting, in groups by own device,
 * each headed by a line naming it; TRUE when a setting was shortened. */
static bool
print_best(const MReport *r, char *const *names, GString *out, guint width)
{
	static const CcaTableColumn columns[] = {
		{"job", .elastic = TRUE, .cut = CCA_TABLE_CUT_START},
		{"own result", .right = FALSE},
		{"best setting", .elastic = TRUE, .min = 24, .shorten = shorten_setting},
		{"own peak", .right = TRUE},
		{"best peak", .right = TRUE},
	};
	char a[40], b[40];
	g_string_append_c(out, '\n');
	paragraph(out,
		  "Best setting per job (least peak reserved among the settings that fit its own "
		  "device), by own device",
		  width);
	g_autoptr(GArray) order = g_array_new(FALSE, FALSE, sizeof(guint));
	for (guint j = 0; j < r->jobs->len; j++)
		if (((MJob *)g_ptr_array_index(r->jobs, j))->base)
			g_array_append_val(order, j);
	g_array_sort_with_data(order, by_device, (gpointer)r);
	g_autoptr(CcaTable) table = cca_table_new(columns, G_N_ELEMENTS(columns));
	const char *device = NULL;
	for (guint k = 0; k < order->len; k++) {
		guint j = g_array_index(order, guint, k);
		const MJob *job = g_ptr_array_index(r->jobs, j);
		if (!device || strcmp(device, job->own) != 0) {
			device = job->own;
			g_autofree char *line = g_strdup_printf("on %s:", device);
			cca_table_add_line(table, line);
		}
		g_autofree char *own_result = job->base->fits	       ? g_strdup("fits")
					      : job->base->may_not_fit ? g_strdup("may not fit")
					      : job->base->before_window
						      ? g_strdup("OOM before the window")
						      : g_strdup_printf("OOM at %" G_GUINT64_FORMAT,
									job->base->oom_event);
		const char *best = !job->best		    ? "none fits"
				   : job->best == job->base ? "its own"
							    : setting_words(job->best->shown);
		cca_table_add(table,
			      (const char *[]){
				      names[j], own_result, best,
				      job->base->fits ? cca_size_format(job->base->peak, a) : "-",
				      job->best ? cca_size_format(job->best->peak, b) : "-"});
	}
	return cca_table_print(table, out, width) & (1u << 2);
}

void
cca_fleet_merge_print_text(CcaFleetMerge *merge, GString *out, guint width)
{
	MReport r;
	report_build(merge, &r);
	if (r.complete == 0) {
		/* every snapshot failed, or no job has all its rows yet: no
		 * setting can be compared with a job's own */
		g_autofree char *failed = count_words(r.errors->len, "snapshot");
		paragraphf(
			out, width,
			"Fleet: no job was replayed under its own settings, so no setting can be "
			"compared with them: %s could not be replayed.",
			r.errors->len ? failed : "no snapshot");
		if (r.jobs->len) {
			g_autofree char *partial = count_words(r.jobs->len, "job");
			paragraphf(out, width,
				   "%s ha%s some of %s rows only (%s run is not complete).",
				   partial, r.jobs->len == 1 ? "s" : "ve",
				   r.jobs->len == 1 ? "its" : "their",
				   r.jobs->len == 1 ? "its" : "their");
		}
		print_missing(merge, out, width);
		print_skipped(&r, out, width);
		print_errors(&r, out, width);
		report_clear(&r);
		return;
	}
	gsize folder = common_folder(r.jobs);
	bool stripped;
	g_auto(GStrv) names = job_display_names(&r, folder, &stripped);
	print_answer(&r, folder, stripped, out, width);
	print_missing(merge, out, width);
	print_skipped(&r, out, width);
	bool shortened = print_settings(&r, out, width);
	if (r.unsaved)
		shortened |= print_unsaved(&r, names, out, width);
	print_errors(&r, out, width);
	shortened |= print_best(&r, names, out, width);
	if (shortened)
		print_brief_names(out, width);
	report_clear(&r);
}

static json_t *
setting_json(const MSetting *s)
{
	json_t *o = json_object();
	json_object_set_new(o, "setting", cca_json_string(s->setting));
	json_object_set_new(o, "jobs", json_integer(s->jobs));
	json_object_set_new(o, "all_jobs", json_boolean(s->all_jobs));
	json_object_set_new(o, "oom", json_integer(s->oom));
	json_object_set_new(o, "saves", json_integer(s->saves));
	json_object_set_new(o, "breaks", json_integer(s->breaks));
	json_object_set_new(o, "fit_both", json_integer(s->saved->len));
	json_object_set_new(o, "saved_total", json_integer(s->saved_total));
	json_object_set_new(o, "saved_median", json_integer(s->saved_median));
	return o;
}

void
cca_fleet_merge_print_json(CcaFleetMerge *merge, GString *out)
{
	MReport r;
	report_build(merge, &r);
	json_t *doc = json_object();
	json_object_set_new(doc, "jobs_replayed", json_integer(r.complete));
	json_object_set_new(doc, "snapshots_failed", json_integer(r.errors->len));
	json_object_set_new(doc, "rows_skipped", cca_json_uint(r.skipped));
	json_object_set_new(doc, "own_settings_oom", json_integer(r.base_oom));
	json_object_set_new(doc, "saved_by_best_per_job", json_integer(r.rescued));
	json_object_set_new(doc, "saved_by_none", json_integer(r.unsaved));
	json_object_set_new(doc, "answer", r.answer ? setting_json(r.answer) : json_null());
	json_t *settings = json_array();
	for (guint i = 0; i < r.settings->len; i++)
		json_array_append_new(settings, setting_json(g_ptr_array_index(r.settings, i)));
	json_object_set_new(doc, "settings", settings);
	json_t *jobs = json_array();
	for (guint j = 0; j < r.jobs->len; j++) {
		MJob *job = g_ptr_array_index(r.jobs, j);
		if (!job->base)
			continue;
		json_t *o = json_object();
		json_object_set_new(o, "job", cca_json_string(job->name));
		json_object_set_new(o, "own_device", cca_json_string(job->own));
		json_object_set_new(o, "limit", cca_json_uint(job->limit));
		json_object_set_new(o, "own_setting", cca_json_string(job->base->setting));
		json_object_set_new(o, "own_fits", json_boolean(job->base->fits));
		json_object_set_new(o, "own_peak_reserved", cca_json_uint(job->base->peak));
		json_object_set_new(o, "best_setting",
				    job->best ? cca_json_string(job->best->setting) : json_null());
		json_object_set_new(o, "best_peak_reserved",
				    job->best ? cca_json_uint(job->best->peak) : json_null());
		json_object_set_new(o, "smallest_gpu",
				    job->card ? cca_json_string(job->card->smallest->name)
					      : json_null());
		json_object_set_new(o, "smallest_gpu_setting",
				    job->card ? cca_json_string(job->card->setting) : json_null());
		json_array_append_new(jobs, o);
	}
	json_object_set_new(doc, "jobs", jobs);
	json_object_set_new(doc, "errors", cca_json_strings(r.errors));
	g_autoptr(GPtrArray) missing = cca_fleet_merge_missing(merge);
	json_object_set_new(doc, "missing_shards", cca_json_strings(missing));
	cca_json_append_indented(out, doc, 2); /* releases DOC */
	g_string_append_c(out, '\n');
	report_clear(&r);
}

/* Appends S as a CSV field (quoted when it holds a comma or a quote). */
static void
csv_field(GString *out, const char *s)
{
	if (!strpbrk(s, ",\"\n")) {
		g_string_append(out, s);
		return;
	}
	g_string_append_c(out, '"');
	for (; *s; s++) {
		if (*s == '"')
			g_string_append_c(out, '"');
		g_string_append_c(out, *s);
	}
	g_string_append_c(out, '"');
}

void
cca_fleet_merge_print_csv(CcaFleetMerge *merge, GString *out)
{
	MReport r;
	report_build(merge, &r);
	/* name: the setting in words, as the text report names it ("(PyTorch
	 * defaults)" for the empty setting) */
	g_string_append(out, "rank,setting,jobs,all_jobs,oom,saves,breaks,fit_both,saved_total,"
			     "saved_median,name\n");
	for (guint i = 0; i < r.settings->len; i++) {
		MSetting *s = g_ptr_array_index(r.settings, i);
		g_string_append_printf(out, "%u,", i + 1);
		csv_field(out, s->shown);
		g_string_append_printf(
			out, ",%u,%s,%u,%u,%u,%u,%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT ",",
			s->jobs, s->all_jobs ? "true" : "false", s->oom, s->saves, s->breaks,
			s->saved->len, s->saved_total, s->saved_median);
		csv_field(out, setting_words(s->shown));
		g_string_append_c(out, '\n');
	}
	report_clear(&r);
}
