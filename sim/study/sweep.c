/* sweep.c - one trace under a grid of allocator settings.
 *
 * Models what `ccasim replay --config` gives for each setting of a grid:
 * every row is replayed through cca_replay_run() with the same options the
 * replay command builds, so a row's figures are that command's figures.
 * A what-if row is replayed once per address model; the first model's
 * figures are the row's, the others give each figure a [min, max] range
 * (a row "varies" when the driver's choice of addresses could change it).
 *
 * Invariants: rows hold pairwise unequal settings (cca_settings_equal);
 * the recorded row exists exactly once; results live in per-task slots
 * and are never written by two threads, so the outcome is independent of
 * the thread count and completion order.
 *
 * long-file: the grid, the rows, their address models and stream timings
 * share the per-task slots above; the timings' bounds of a row are the
 * natural cut (beside timing.c), left until the what-if work settles.
 */
#include "config.h"

#include "sweep.h"
#include "simdevice.h"

#include "rules.h"

#include <math.h>
#include <string.h>

#include "json.h"
#include "parallel.h"
#include "plan.h"
#include "event_cursor.h"
#include "size.h"
#include "text.h"

#define SWEEP_MAX_ROWS 10000 /* a --set product larger than this is refused */

guint
cca_sweep_row_models(const CcaSweepRow *row, bool capped, CcaAddressModel *models)
{
	guint n = 0;
	if (row->recorded)
		models[n++] = CCA_ADDRESS_RECORDED;
	guint n_models;
	const CcaAddressModel *sweep_models = cca_simdevice_bound_models(&n_models);
	if (!row->recorded || capped)
		for (guint m = 0; m < n_models; m++)
			models[n++] = sweep_models[m];
	return n;
}

static const char *const figure_names[CCA_SWEEP_FIG_COUNT] = {
	[CCA_SWEEP_FIG_PEAK_RESERVED] = "peak_reserved",
	[CCA_SWEEP_FIG_PEAK_ALLOCATED] = "peak_allocated",
	[CCA_SWEEP_FIG_FRAGMENTATION] = "fragmentation",
	[CCA_SWEEP_FIG_UNALLOCATED_AT_PEAK] = "unallocated_at_peak",
	[CCA_SWEEP_FIG_MALLOCS] = "cuda_malloc",
	[CCA_SWEEP_FIG_FREES] = "cuda_free",
	[CCA_SWEEP_FIG_RETRIES] = "alloc_retries",
	[CCA_SWEEP_FIG_OOMS] = "num_ooms",
	[CCA_SWEEP_FIG_SYNCS] = "syncs",
	[CCA_SWEEP_FIG_TIME_US] = "time_us",
	[CCA_SWEEP_FIG_OOM] = "oom",
};

const char *
cca_sweep_figure_name(CcaSweepFigure figure)
{
	return figure < CCA_SWEEP_FIG_COUNT ? figure_names[figure] : "unknown";
}

static const char *const goal_names[] = {"reserved", "mallocs", "time"};

gboolean
cca_sweep_goal_parse(const char *text, CcaGoal *goal, GError **error)
{
	for (guint i = 0; i < G_N_ELEMENTS(goal_names); i++)
		if (strcmp(text, goal_names[i]) == 0) {
			*goal = (CcaGoal)i;
			return TRUE;
		}
	g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
		    "--goal: unknown goal '%s' (reserved, mallocs, time)", text);
	return FALSE;
}

const char *
cca_sweep_goal_name(CcaGoal goal)
{
	return goal < G_N_ELEMENTS(goal_names) ? goal_names[goal] : "unknown";
}

/* The figure a goal minimises. */
static CcaSweepFigure
goal_figure(CcaGoal goal)
{
	switch (goal) {
	case CCA_GOAL_MALLOCS:
		return CCA_SWEEP_FIG_MALLOCS;
	case CCA_GOAL_TIME:
		return CCA_SWEEP_FIG_TIME_US;
	case CCA_GOAL_RESERVED:
		break;
	}
	return CCA_SWEEP_FIG_PEAK_RESERVED;
}

/* ------------------------------------------------------------- rows */

static void
row_free(gpointer data)
{
	CcaSweepRow *row = data;
	g_free(row->conf);
	g_free(row->origin);
	cca_settings_clear(&row->settings);
	cca_timing_clear(&row->timing);
	g_free(row);
}

CcaSweep *
cca_sweep_new(const CcaSnapshot *snap, int device, uint32_t pytorch_version, GError **error)
{
	if (device < 0 || device >= snap->n_devices) {
		g_set_error(error, CCA_INPUT_ERROR, CCA_INPUT_ERROR_NOT_SNAPSHOT,
			    "%s: no device %d in the trace (it has %d)", snap->source, device,
			    snap->n_devices);
		return NULL;
	}
	CcaSweep *sweep = g_new0(CcaSweep, 1);
	sweep->snap = snap;
	sweep->device = device;
	sweep->pytorch_version =
		pytorch_version ? pytorch_version : cca_replay_guess_pytorch_version(snap);
	sweep->rows = g_ptr_array_new_with_free_func(row_free);
	CcaSweepRow *row = g_new0(CcaSweepRow, 1);
	cca_settings_init(&row->settings);
	/* the recording's settings are read by its own release, then
	 * replayed under the sweep's (a what-if across releases, as replay
	 * does: doc/versions.md) */
	uint32_t trace_release = cca_plan_detect_release(snap, NULL);
	row->settings.pytorch_version =
		cca_rules_same_decisions(sweep->pytorch_version, trace_release)
			? sweep->pytorch_version
			: trace_release;
	if (!cca_plan_start_settings(snap, device, &row->settings, error)) {
		row_free(row);
		cca_sweep_free(sweep);
		return NULL;
	}
	row->settings.pytorch_version = sweep->pytorch_version;
	row->conf = cca_settings_to_string(&row->settings);
	row->origin = g_strdup("recorded");
	row->recorded = true;
	sweep->recorded_conf = g_strdup(row->conf);
	g_ptr_array_add(sweep->rows, row);
	return sweep;
}

void
cca_sweep_free(CcaSweep *sweep)
{
	if (!sweep)
		return;
	g_ptr_array_free(sweep->rows, TRUE);
	g_free(sweep->recorded_conf);
	cca_plan_free(sweep->plan);
	g_free(sweep);
}

gboolean
cca_sweep_plan(CcaSweep *sweep, GError **error)
{
	if (!sweep->plan)
		sweep->plan = cca_plan_new(sweep->snap, sweep->device, sweep->pytorch_version,
					   CCA_REWIND_AUTO, error);
	return sweep->plan != NULL;
}

gboolean
cca_sweep_add_config(CcaSweep *sweep, const char *conf, const char *origin, GError **error)
{
	CcaSettings settings;
	cca_settings_init(&settings);
	settings.pytorch_version = sweep->pytorch_version;
	if (!cca_settings_parse_exact(&settings, conf, error)) {
		cca_settings_clear(&settings);
		return FALSE;
	}
	for (guint i = 0; i < sweep->rows->len; i++) {
		const CcaSweepRow *r = g_ptr_array_index(sweep->rows, i);
		if (cca_settings_equal(&r->settings, &settings)) {
			cca_settings_clear(&settings);
			return TRUE;
		}
	}
	CcaSweepRow *row = g_new0(CcaSweepRow, 1);
	row->settings = settings;
	row->conf = cca_settings_to_string(&settings);
	row->origin = g_strdup(origin);
	/* the engine replays a row in recorded mode when it models what the
	 * recorded settings model (cca_settings_same_model()) */
	const CcaSweepRow *first = g_ptr_array_index(sweep->rows, 0);
	row->recorded = cca_settings_same_model(&row->settings, &first->settings);
	g_ptr_array_add(sweep->rows, row);
	return TRUE;
}

/* Adds CONF to the default grid; a key the replayed release lacks (a
 * settings error) leaves the row out. */
static void
add_grid_row(CcaSweep *sweep, const char *conf, const char *origin)
{
	GError *local = NULL;
	if (!cca_sweep_add_config(sweep, conf, origin, &local)) {
		g_debug("default grid: %s left out: %s", conf, local->message);
		g_clear_error(&local);
	}
}

static gint
compare_u64(gconstpointer a, gconstpointer b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

gboolean
cca_sweep_add_default_grid(CcaSweep *sweep, bool capped, GError **error)
{
	add_grid_row(sweep, "", "grid: defaults");
	for (unsigned mb = 32; mb <= 4096; mb *= 2) {
		g_autofree char *conf = g_strdup_printf("max_split_size_mb:%u", mb);
		add_grid_row(sweep, conf, "grid");
	}
	/* max_split_size_mb just above the sizes the program asks for most:
	 * blocks below the limit split and merge as usual */
	CcaSettings defaults;
	cca_settings_init(&defaults);
	uint64_t floor_bytes = defaults.large_segment_size;
	cca_settings_clear(&defaults);
	GArray *sizes = g_array_new(FALSE, FALSE, sizeof(uint64_t));
	g_autoptr(CcaEventCursor) cursor = cca_event_cursor_new(sweep->snap, sweep->device);
	CcaEvent ev;
	GError *local = NULL;
	while (cca_event_cursor_next(cursor, &ev, &local))
		if (ev.action == CCA_ACTION_ALLOC && ev.size >= floor_bytes)
			g_array_append_val(sizes, ev.size);
	if (local) {
		g_propagate_error(error, local);
		g_array_free(sizes, TRUE);
		return FALSE;
	}
	g_array_sort(sizes, compare_u64);
	static const struct {
		double q;
		const char *origin;
	} quantiles[] = {{0.50, "trace: p50 request"},
			 {0.90, "trace: p90 request"},
			 {0.99, "trace: p99 request"}};
	for (guint i = 0; i < G_N_ELEMENTS(quantiles) && sizes->len; i++) {
		guint k = (guint)ceil(quantiles[i].q * sizes->len);
		k = k ? k - 1 : 0;
		uint64_t mb = g_array_index(sizes, uint64_t, k) / CCA_MIB + 1;
		g_autofree char *conf = g_strdup_printf("max_split_size_mb:%" G_GUINT64_FORMAT, mb);
		add_grid_row(sweep, conf, quantiles[i].origin);
	}
	g_array_free(sizes, TRUE);
	for (unsigned d = 2; d <= 16; d *= 2) {
		g_autofree char *conf = g_strdup_printf("roundup_power2_divisions:%u", d);
		add_grid_row(sweep, conf, "grid");
	}
	add_grid_row(sweep, "expandable_segments:True", "grid");
	add_grid_row(sweep, "expandable_segments:True,max_split_size_mb:128", "grid");
	add_grid_row(sweep, "expandable_segments:True,max_split_size_mb:512", "grid");
	if (capped) {
		add_grid_row(sweep, "garbage_collection_threshold:0.6", "grid: cap");
		add_grid_row(sweep, "garbage_collection_threshold:0.8", "grid: cap");
		add_grid_row(sweep, "garbage_collection_threshold:0.6,max_split_size_mb:256",
			     "grid: cap");
		add_grid_row(sweep, "garbage_collection_threshold:0.8,max_split_size_mb:256",
			     "grid: cap");
	}
	return TRUE;
}

/* Splits TEXT at commas outside [...]; FALSE on an empty value or an
 * unbalanced bracket. */
static gboolean
split_values(const char *text, GPtrArray *values)
{
	int depth = 0;
	const char *start = text;
	for (const char *p = text;; p++) {
		if (*p == '[')
			depth++;
		else if (*p == ']' && --depth < 0)
			return FALSE;
		if (*p == '\0' || (*p == ',' && depth == 0)) {
			g_autofree char *v = g_strstrip(g_strndup(start, (gsize)(p - start)));
			if (*v == '\0')
				return FALSE;
			g_ptr_array_add(values, g_steal_pointer(&v));
			if (*p == '\0')
				break;
			start = p + 1;
		}
	}
	return depth == 0;
}

gboolean
cca_sweep_add_sets(CcaSweep *sweep, const char *const *sets, guint n_sets, GError **error)
{
	if (n_sets == 0)
		return TRUE;
	GPtrArray *keys = g_ptr_array_new_with_free_func(g_free);
	GPtrArray *values = g_ptr_array_new_with_free_func((GDestroyNotify)g_ptr_array_unref);
	gboolean ok = TRUE;
	guint64 combos = 1;
	for (guint i = 0; i < n_sets && ok; i++) {
		const char *eq = strchr(sets[i], '=');
		g_autofree char *key =
			eq ? g_strstrip(g_strndup(sets[i], (gsize)(eq - sets[i]))) : NULL;
		GPtrArray *vals = g_ptr_array_new_with_free_func(g_free);
		if (!eq || *key == '\0') {
			g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
				    "--set %s: expected KEY=V1,V2,...", sets[i]);
			ok = FALSE;
		} else if (!split_values(eq + 1, vals)) {
			g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
				    "--set %s: empty value or unbalanced [ ] in the list", sets[i]);
			ok = FALSE;
		} else {
			for (guint k = 0; k < keys->len; k++)
				if (strcmp(g_ptr_array_index(keys, k), key) == 0) {
					g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
						    "--set %s: key '%s' is given twice", sets[i],
						    key);
					ok = FALSE;
				}
		}
		if (ok) {
			combos *= vals->len;
			if (combos > SWEEP_MAX_ROWS) {
				g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
					    "--set: the grid would have more than %d rows",
					    SWEEP_MAX_ROWS);
				ok = FALSE;
			}
		}
		g_ptr_array_add(keys, g_steal_pointer(&key));
		g_ptr_array_add(values, vals);
	}
	guint *at = g_new0(guint, n_sets);
	while (ok) {
		GString *conf = g_string_new(NULL);
		for (guint i = 0; i < n_sets; i++) {
			GPtrArray *vals = g_ptr_array_index(values, i);
			const char *v = g_ptr_array_index(vals, at[i]);
			if (strcmp(v, "default") == 0)
				continue;
			if (conf->len)
				g_string_append_c(conf, ',');
			g_string_append_printf(conf, "%s:%s",
					       (const char *)g_ptr_array_index(keys, i), v);
		}
		if (!cca_sweep_add_config(sweep, conf->str, "--set", error)) {
			g_prefix_error(error, "--set: \"%s\": ", conf->str);
			ok = FALSE;
		}
		g_string_free(conf, TRUE);
		/* next combination: the last key varies fastest */
		bool more = false;
		for (guint i = n_sets; ok && i-- > 0;) {
			GPtrArray *vals = g_ptr_array_index(values, i);
			if (++at[i] < vals->len) {
				more = true;
				break;
			}
			at[i] = 0;
		}
		if (!more)
			break;
	}
	g_free(at);
	g_ptr_array_free(keys, TRUE);
	g_ptr_array_free(values, TRUE);
	return ok;
}

/* ----------------------------------------------------------- replays */

/* The model's segment entries of one replay, in order. */
typedef struct {
	uint8_t action;
	uint64_t size;
} SegmentEntry;

static void
collect_segment_entry(void *data, uint64_t cause, const CcaEvent *trace, const CcaEvent *ev)
{
	if (ev->action < CCA_ACTION_SEGMENT_ALLOC || ev->action > CCA_ACTION_SEGMENT_UNMAP)
		return;
	SegmentEntry e = {ev->action, ev->size};
	g_array_append_val((GArray *)data, e);
}

void
cca_sweep_replay_options(const CcaSweep *sweep, const CcaSweepRow *row,
			 const CcaSweepOptions *options, CcaAddressModel model,
			 CcaReplayOptions *out)
{
	CcaReplayOptions opt;
	cca_replay_options_init(&opt);
	opt.settings = &row->settings;
	opt.memory_fraction = options->memory_fraction;
	opt.recorded_memory_fraction = options->recorded_memory_fraction;
	opt.device_memory = options->device_memory;
	opt.capacity_set = options->capacity_set;
	opt.recorded_capacity_set = options->recorded_capacity_set;
	opt.device = sweep->device;
	opt.pytorch_version = sweep->pytorch_version;
	opt.plan = sweep->plan;
	opt.cancel = options->cancel; /* studies of the row stop between replays */
	/* the other address models may share the run */
	opt.count_address_ties = options->address_sensitivity;
	if (model == CCA_ADDRESS_RECORDED) {
		opt.address_model = CCA_ADDRESS_DRIVER; /* unused: the trace's addresses */
	} else {
		opt.address_model = model;
		opt.force_whatif = row->recorded;
	}
	*out = opt;
}

gboolean
cca_sweep_replay(const CcaSweep *sweep, const CcaSweepRow *row, const CcaSweepOptions *options,
		 CcaAddressModel model, CcaSweepRun *run, GError **error)
{
	CcaReplayOptions opt;
	cca_sweep_replay_options(sweep, row, options, model, &opt);
	GArray *entries = g_array_new(FALSE, FALSE, sizeof(SegmentEntry));
	if (options->calibration) { /* the cost model prices the segment entries */
		opt.on_model_event = collect_segment_entry;
		opt.on_model_event_data = entries;
		opt.model_segments_only = true;
	}
	CcaReplayResult res;
	if (!cca_replay_run(sweep->snap, &opt, &res, error)) {
		g_array_free(entries, TRUE);
		cca_replay_result_clear(&res);
		return FALSE;
	}
	memset(run, 0, sizeof *run);
	const CcaStats *st = &res.stats;
	run->stats = *st;
	run->events = res.events;
	run->whatif = res.whatif;
	run->model = model;
	run->address_ties = res.address_ties;
	run->same_under = res.same_under;
	run->reach = res.reach;
	run->split_seen = res.split_seen;
	run->split_of = row->settings.max_split_size;
	run->deferred_frees = res.deferred_frees;
	run->replayed = true;
	double reserved = (double)st->reserved_bytes[CCA_STAT_ALL].peak;
	double *v = run->value;
	v[CCA_SWEEP_FIG_PEAK_RESERVED] = reserved;
	v[CCA_SWEEP_FIG_PEAK_ALLOCATED] = (double)st->allocated_bytes[CCA_STAT_ALL].peak;
	v[CCA_SWEEP_FIG_FRAGMENTATION] = cca_stats_fragmentation(st);
	v[CCA_SWEEP_FIG_UNALLOCATED_AT_PEAK] =
		(double)(res.reserved_at_peak - res.allocated_at_peak);
	v[CCA_SWEEP_FIG_MALLOCS] = (double)st->num_device_alloc;
	v[CCA_SWEEP_FIG_FREES] = (double)st->num_device_free;
	v[CCA_SWEEP_FIG_RETRIES] = (double)st->num_alloc_retries;
	v[CCA_SWEEP_FIG_OOMS] = (double)st->num_ooms;
	v[CCA_SWEEP_FIG_SYNCS] = (double)st->num_sync_all_streams;
	bool oom = res.unexpected_ooms > 0 || st->num_ooms > 0;
	v[CCA_SWEEP_FIG_OOM] = oom ? 1.0 : 0.0;
	/* the OOM the model met, else the recording's own */
	run->oom_event = res.unexpected_ooms	 ? res.oom_event
			 : res.recorded_oom_seen ? res.recorded_oom_event
						 : res.events;
	cca_replay_cap_proved(&res, options->capacity_set, &run->cap);
	run->oom_before_window = res.oom_before_window;
	if (options->calibration) {
		/* A replay that restarts from a rebuilt start (a mid-run
		 * trace) reports the entries of both attempts: the last
		 * pass's are the last num_device_alloc + num_device_free. */
		uint64_t n = (uint64_t)(st->num_device_alloc + st->num_device_free);
		guint first = n < entries->len ? entries->len - (guint)n : 0;
		for (guint i = first; i < entries->len; i++) {
			const SegmentEntry *e = &g_array_index(entries, SegmentEntry, i);
			CcaEvent ev = {.action = e->action, .size = e->size};
			cca_calibration_cost_add_event(&run->cost, options->calibration, &ev,
						       row->settings.large_segment_size);
		}
		cca_calibration_cost_add_syncs(&run->cost, options->calibration,
					       (uint64_t)st->num_sync_all_streams);
		v[CCA_SWEEP_FIG_TIME_US] = cca_calibration_cost_total_us(&run->cost);
	}
	g_array_free(entries, TRUE);
	cca_replay_result_clear(&res);
	return TRUE;
}

G_DEFINE_QUARK(cca - sweep - error - quark, cca_sweep_error)

/* One (row, model) task of a sweep. */
typedef struct {
	CcaSweepRow *row;
	CcaAddressModel model;
	const CcaSweepOptions *options;
	CcaSweepRun *out;
	GError *error;
} SweepTask;

typedef struct {
	const CcaSweep *sweep;
	SweepTask *tasks;
} SweepJob;

static void
sweep_task_run(void *data, guint i)
{
	SweepJob *job = data;
	SweepTask *t = &job->tasks[i];
	if (t->options->cancel && *t->options->cancel) {
		g_set_error(&t->error, CCA_SWEEP_ERROR, CCA_SWEEP_ERROR_CANCELLED, "interrupted");
		return;
	}
	cca_sweep_replay(job->sweep, t->row, t->options, t->model, t->out, &t->error);
}

/* Fills ROW's ranges and sensitivity from its runs. */
static void
row_ranges(CcaSweepRow *row)
{
	row->sensitive = false;
	for (int f = 0; f < CCA_SWEEP_FIG_COUNT; f++) {
		row->lo[f] = row->hi[f] = row->runs[0].value[f];
		for (guint m = 1; m < row->n_runs; m++) {
			double v = row->runs[m].value[f];
			row->lo[f] = MIN(row->lo[f], v);
			row->hi[f] = MAX(row->hi[f], v);
		}
		/* time follows from the counts; tiny float noise is no range */
		if (row->hi[f] - row->lo[f] >
		    (f == CCA_SWEEP_FIG_TIME_US ? 1e-6 * row->hi[f] : 0.0))
			row->sensitive = true;
	}
}

/* The memory_stats() key that gives each figure, where one does. */
static const char *const figure_keys[CCA_SWEEP_FIG_COUNT] = {
	[CCA_SWEEP_FIG_PEAK_RESERVED] = "reserved_bytes.all.peak",
	[CCA_SWEEP_FIG_PEAK_ALLOCATED] = "allocated_bytes.all.peak",
	[CCA_SWEEP_FIG_MALLOCS] = "num_device_alloc",
	[CCA_SWEEP_FIG_FREES] = "num_device_free",
	[CCA_SWEEP_FIG_RETRIES] = "num_alloc_retries",
	[CCA_SWEEP_FIG_OOMS] = "num_ooms",
	[CCA_SWEEP_FIG_SYNCS] = "num_sync_all_streams",
	[CCA_SWEEP_FIG_OOM] = "num_ooms",
};

/* Fills ROW's tlo..thi from its primary value and its timing bounds. */
static void
row_timing_ranges(CcaSweepRow *row)
{
	for (int f = 0; f < CCA_SWEEP_FIG_COUNT; f++) {
		row->tlo[f] = row->thi[f] = row->runs[0].value[f];
		const CcaTimingBound *b =
			figure_keys[f] ? cca_timing_lookup(&row->timing, figure_keys[f]) : NULL;
		if (!b)
			continue;
		if (f == CCA_SWEEP_FIG_OOM) {
			/* some timing ran out of memory, or none did */
			row->tlo[f] = b->lo > 0;
			row->thi[f] = b->hi > 0;
		} else {
			row->tlo[f] = MIN(row->tlo[f], (double)b->lo);
			row->thi[f] = MAX(row->thi[f], (double)b->hi);
		}
	}
}

bool
cca_sweep_row_may_oom(const CcaSweepRow *row)
{
	return row->runs[0].value[CCA_SWEEP_FIG_OOM] != 0 || row->hi[CCA_SWEEP_FIG_OOM] != 0 ||
	       row->thi[CCA_SWEEP_FIG_OOM] != 0;
}

/* One row's stream-timing bounds: its primary replay again, then every
 * timing of cca_timing_run(). */
typedef struct {
	const CcaSweep *sweep;
	const CcaSweepOptions *options;
	CcaSweepRow **rows;
	GError **errors;
} TimingJob;

static void
timing_task_run(void *data, guint i)
{
	TimingJob *job = data;
	CcaSweepRow *row = job->rows[i];
	if (job->options->cancel && *job->options->cancel) {
		g_set_error(&job->errors[i], CCA_SWEEP_ERROR, CCA_SWEEP_ERROR_CANCELLED,
			    "interrupted");
		return;
	}
	CcaReplayOptions opt;
	cca_sweep_replay_options(job->sweep, row, job->options, row->runs[0].model, &opt);
	CcaReplayResult base;
	if (cca_replay_run(job->sweep->snap, &opt, &base, &job->errors[i]))
		cca_timing_run(job->sweep->snap, &opt, &base, &row->timing, &job->errors[i]);
	cca_replay_result_clear(&base);
	if (job->errors[i] &&
	    g_error_matches(job->errors[i], CCA_TIMING_ERROR, CCA_TIMING_ERROR_CANCELLED)) {
		g_clear_error(&job->errors[i]);
		g_set_error(&job->errors[i], CCA_SWEEP_ERROR, CCA_SWEEP_ERROR_CANCELLED,
			    "interrupted");
	}
}

/* Bounds the what-if rows whose primary run deferred frees over stream
 * timing (doc/whatif.md, "Stream timing"). */
static gboolean
sweep_timing(CcaSweep *sweep, const CcaSweepOptions *options, GError **error)
{
	guint n_rows = sweep->rows->len, n = 0;
	CcaSweepRow **rows = g_new0(CcaSweepRow *, n_rows ? n_rows : 1);
	for (guint i = 0; i < n_rows; i++) {
		CcaSweepRow *row = g_ptr_array_index(sweep->rows, i);
		cca_timing_clear(&row->timing);
		if (!options->no_timing_bounds && row->runs[0].whatif &&
		    row->runs[0].deferred_frees > 0)
			rows[n++] = row;
	}
	GError **errors = g_new0(GError *, n ? n : 1);
	TimingJob job = {sweep, options, rows, errors};
	if (n > 0)
		cca_parallel_run(n, options->threads, timing_task_run, &job, NULL, NULL);
	gboolean ok = TRUE;
	for (guint i = 0; i < n; i++) {
		if (errors[i] && ok) {
			g_propagate_error(error, errors[i]);
			ok = FALSE;
		} else if (errors[i]) {
			g_error_free(errors[i]);
		}
	}
	for (guint i = 0; i < n_rows; i++)
		row_timing_ranges(g_ptr_array_index(sweep->rows, i));
	g_free(errors);
	g_free(rows);
	return ok;
}

int
cca_sweep_twin(const CcaSweep *sweep, guint r)
{
	const CcaPlan *plan = sweep->plan;
	const CcaSweepRow *row = g_ptr_array_index(sweep->rows, r);
#define SWEEP_TWIN_ELIGIBLE(w) \
	(!(w)->recorded && !cca_settings_same_model(&(w)->settings, &plan->recorded))
	if (plan == NULL || plan->calls != NULL || !SWEEP_TWIN_ELIGIBLE(row))
		return -1;
	int best = -1;
	uint64_t best_split = row->settings.max_split_size;
	for (guint q = 0; q < sweep->rows->len; q++) {
		const CcaSweepRow *w = g_ptr_array_index(sweep->rows, q);
		if (q != r && SWEEP_TWIN_ELIGIBLE(w) && w->settings.max_split_size > best_split &&
		    cca_settings_same_model_below(&w->settings, &row->settings, 0)) {
			best = (int)q;
			best_split = w->settings.max_split_size;
		}
	}
#undef SWEEP_TWIN_ELIGIBLE
	return best;
}

void
cca_sweep_run_share(CcaSweepRun *dst, const CcaSweepRun *src, const CcaSweepRow *row)
{
	*dst = *src;
	dst->stats.max_split_size = cca_settings_max_split_stat(&row->settings);
	dst->replayed = false;
}

/* Whether run T of row W, already made under address model MODEL, is
 * ROW's too: its largest block stayed below both rows' max_split_size
 * (cca_settings_same_model_below()), or ROW's lies between the sizes the
 * run compared with the setting (cca_settings_same_model_between()). */
static bool
run_serves(const CcaSweepRow *w, const CcaSweepRun *t, const CcaSweepRow *row,
	   CcaAddressModel model)
{
	if (t->model != model)
		return false;
	if (cca_settings_same_model_below(&w->settings, &row->settings, t->reach))
		return true;
	CcaSettings origin = w->settings; /* shallow: only compared */
	origin.max_split_size = t->split_of;
	return cca_settings_same_model_between(&origin, &row->settings, t->split_seen.below,
					       t->split_seen.from);
}

/* Moves the first of TASKS[0..N)'s errors into ERROR and frees the others;
 * FALSE when there was one. */
static gboolean
take_task_errors(SweepTask *tasks, guint n, GError **error)
{
	gboolean ok = TRUE;
	for (guint i = 0; i < n; i++) {
		if (tasks[i].error && ok) {
			g_propagate_error(error, tasks[i].error);
			ok = FALSE;
		} else if (tasks[i].error) {
			g_error_free(tasks[i].error);
		}
		tasks[i].error = NULL;
	}
	return ok;
}

/* Whether rows Q and R of SWEEP may share runs: neither is the recorded
 * row nor replays the recording, the trace changes no settings, and they
 * differ at most in max_split_size (cca_sweep_twin()'s rows). */
static bool
sweep_family(const CcaSweep *sweep, guint q, guint r)
{
	const CcaPlan *plan = sweep->plan;
	const CcaSweepRow *a = g_ptr_array_index(sweep->rows, q);
	const CcaSweepRow *b = g_ptr_array_index(sweep->rows, r);
	return q != r && plan != NULL && plan->calls == NULL && !a->recorded && !b->recorded &&
	       !cca_settings_same_model(&a->settings, &plan->recorded) &&
	       !cca_settings_same_model(&b->settings, &plan->recorded) &&
	       cca_settings_same_model_below(&a->settings, &b->settings, 0);
}

/* Row R's pass in cca_sweep_run(): how many rows of its family
 * (sweep_family()) have a larger max_split_size; those go first. */
static guint
sweep_rank(const CcaSweep *sweep, guint r)
{
	const CcaSweepRow *row = g_ptr_array_index(sweep->rows, r);
	guint rank = 0;
	for (guint q = 0; q < sweep->rows->len; q++) {
		const CcaSweepRow *w = g_ptr_array_index(sweep->rows, q);
		rank += w->settings.max_split_size > row->settings.max_split_size &&
			sweep_family(sweep, q, r);
	}
	return rank;
}

/* A run already made of a row of an earlier pass (RANK) that is run M of
 * row I under MODEL too (run_serves()), the largest max_split_size's
 * first; NULL when none. */
static const CcaSweepRun *
shared_run(const CcaSweep *sweep, const guint *rank, guint i, guint m, CcaAddressModel model)
{
	const CcaSweepRow *row = g_ptr_array_index(sweep->rows, i);
	const CcaSweepRun *best = NULL;
	guint best_rank = rank[i];
	for (guint q = 0; q < sweep->rows->len; q++) {
		const CcaSweepRow *w = g_ptr_array_index(sweep->rows, q);
		if (rank[q] < best_rank && m < w->n_runs && sweep_family(sweep, q, i) &&
		    run_serves(w, &w->runs[m], row, model)) {
			best = &w->runs[m];
			best_rank = rank[q];
		}
	}
	return best;
}

/* Runs the first N of JOB's tasks on OPTIONS' threads; FALSE with the
 * first task's error in ERROR (the others freed). */
static gboolean
run_tasks(SweepJob *job, guint n, const CcaSweepOptions *options, GError **error)
{
	if (n > 0)
		cca_parallel_run(n, options->threads, sweep_task_run, job, options->progress,
				 options->progress_data);
	return take_task_errors(job->tasks, n, error);
}

gboolean
cca_sweep_run(CcaSweep *sweep, const CcaSweepOptions *options, GError **error)
{
	if (!cca_sweep_plan(sweep, error))
		return FALSE;
	/* a cap other than the recording's: the recorded row may act
	 * otherwise than the recording did */
	bool capped = (options->memory_fraction > 0 &&
		       options->memory_fraction != options->recorded_memory_fraction) ||
		      options->capacity_set;
	guint n_rows = sweep->rows->len, n_tasks = 0;
	CcaSweepOptions uncapped = *options;
	uncapped.memory_fraction = 0;
	uncapped.capacity_set = false;
	uncapped.device_memory = 0;
	/* a capped recorded row's plain replay without the cap */
	CcaSweepRun *probes = g_new0(CcaSweepRun, n_rows);
	SweepTask *tasks = g_new0(SweepTask, n_rows * (CCA_SWEEP_MAX_MODELS + 1));
	typedef CcaAddressModel RowModels[CCA_SWEEP_MAX_MODELS];
	RowModels *models = g_new0(RowModels, n_rows ? n_rows : 1);
	/* rows that may take the runs of rows of their family with a larger
	 * max_split_size go after them (sweep_rank()) */
	guint *rank = g_new(guint, n_rows ? n_rows : 1), n_passes = 1;
	for (guint i = 0; i < n_rows; i++) {
		CcaSweepRow *row = g_ptr_array_index(sweep->rows, i);
		row->n_runs = cca_sweep_row_models(row, capped, models[i]);
		/* one replay per row unless the address choice is asked for
		 * (the recorded settings uncapped replay the trace's own) */
		row->address_checked = options->address_sensitivity || row->n_runs == 1;
		if (!options->address_sensitivity)
			row->n_runs = 1;
		rank[i] = sweep_rank(sweep, i);
		n_passes = MAX(n_passes, rank[i] + 1);
	}
	SweepJob job = {sweep, tasks};
	gboolean ok = TRUE;
	/* first each row's primary run (and probe) ... */
	for (guint pass = 0; pass < n_passes && ok; pass++) {
		n_tasks = 0;
		for (guint i = 0; i < n_rows; i++) {
			CcaSweepRow *row = g_ptr_array_index(sweep->rows, i);
			if (rank[i] != pass)
				continue;
			const CcaSweepRun *t = shared_run(sweep, rank, i, 0, models[i][0]);
			if (t) {
				cca_sweep_run_share(&row->runs[0], t, row);
				continue;
			}
			tasks[n_tasks++] =
				(SweepTask){row, models[i][0], options, &row->runs[0], NULL};
			if (row->recorded && capped)
				tasks[n_tasks++] = (SweepTask){row, CCA_ADDRESS_RECORDED, &uncapped,
							       &probes[i], NULL};
		}
		ok = run_tasks(&job, n_tasks, options, error);
	}
	/* ... then the other address models of the rows whose primary what-if
	 * took a decision by address: the others give the same run.  Nothing
	 * reads these runs' ties (the primary's decide the sharing), so they
	 * count none and follow no other model (shadow.h) */
	CcaSweepOptions others = *options;
	others.address_sensitivity = false;
	for (guint pass = 0; pass < n_passes && ok; pass++) {
		n_tasks = 0;
		for (guint i = 0; i < n_rows; i++) {
			CcaSweepRow *row = g_ptr_array_index(sweep->rows, i);
			if (rank[i] != pass)
				continue;
			/* a run that met no tie, or the models that decided its
			 * ties as it did (shadow.h), give the row's run */
			bool shares = models[i][0] != CCA_ADDRESS_RECORDED &&
				      !options->all_address_models;
			uint32_t same = !shares				 ? 0
					: row->runs[0].address_ties == 0 ? UINT32_MAX
									 : row->runs[0].same_under;
			for (guint m = 1; m < row->n_runs; m++) {
				const CcaSweepRun *t;
				if (same & 1u << models[i][m]) {
					row->runs[m] = row->runs[0];
					row->runs[m].model = models[i][m];
					row->runs[m].replayed = false;
				} else if ((t = shared_run(sweep, rank, i, m, models[i][m]))) {
					cca_sweep_run_share(&row->runs[m], t, row);
				} else {
					tasks[n_tasks++] = (SweepTask){row, models[i][m], &others,
								       &row->runs[m], NULL};
				}
			}
		}
		ok = run_tasks(&job, n_tasks, options, error);
	}
	g_free(rank);
	g_free(tasks);
	g_free(models);
	for (guint i = 0; ok && i < n_rows; i++) {
		CcaSweepRow *row = g_ptr_array_index(sweep->rows, i);
		if (row->recorded && capped &&
		    memcmp(&probes[i].stats, &row->runs[0].stats, sizeof(CcaStats)) == 0)
			row->n_runs = 1; /* the cap never acted: the recording holds */
		row_ranges(row);
	}
	g_free(probes);
	return ok && sweep_timing(sweep, options, error);
}

/* ---------------------------------------------------------- ranking */

static int
compare_double(double a, double b)
{
	return a < b ? -1 : a > b;
}

static int
compare_rows(const CcaSweepRow *a, const CcaSweepRow *b, CcaGoal goal)
{
	const double *x = a->runs[0].value, *y = b->runs[0].value;
	int c = compare_double(x[CCA_SWEEP_FIG_OOM], y[CCA_SWEEP_FIG_OOM]);
	if (c == 0) /* then the rows that may run out under some address or timing */
		c = (int)cca_sweep_row_may_oom(a) - (int)cca_sweep_row_may_oom(b);
	if (c == 0)
		c = compare_double(x[goal_figure(goal)], y[goal_figure(goal)]);
	if (c == 0)
		c = compare_double(x[CCA_SWEEP_FIG_PEAK_RESERVED], y[CCA_SWEEP_FIG_PEAK_RESERVED]);
	if (c == 0)
		c = strcmp(a->conf, b->conf);
	return c;
}

static gint
compare_rows_sort(gconstpointer a, gconstpointer b, gpointer goal)
{
	return compare_rows(*(CcaSweepRow *const *)a, *(CcaSweepRow *const *)b,
			    (CcaGoal)GPOINTER_TO_INT(goal));
}

void
cca_sweep_sort(CcaSweep *sweep, CcaGoal goal)
{
	g_ptr_array_sort_with_data(sweep->rows, compare_rows_sort, GINT_TO_POINTER(goal));
}

static const CcaSweepRow *
recorded_row(const CcaSweep *sweep)
{
	for (guint i = 0; i < sweep->rows->len; i++) {
		const CcaSweepRow *row = g_ptr_array_index(sweep->rows, i);
		if (row->recorded && strcmp(row->origin, "recorded") == 0)
			return row;
	}
	return g_ptr_array_index(sweep->rows, 0);
}

/* "under the cap of X" / "on a device of X" / "" */
static char *
capacity_phrase(const CcaSweep *sweep, const CcaSweepOptions *options)
{
	char a[32];
	uint64_t total = cca_plan_device_memory(sweep->plan, options->device_memory);
	if (options->memory_fraction > 0 && options->memory_fraction < 1)
		return g_strdup_printf(
			" under the cap of %s",
			cca_size_format((uint64_t)(options->memory_fraction * (double)total), a));
	if (options->capacity_set)
		return g_strdup_printf(" on a device of %s", cca_size_format(total, a));
	return g_strdup("");
}

static const char *
conf_label(const char *conf)
{
	return *conf ? conf : "(PyTorch defaults)";
}

/* "\"conf\"" or "PyTorch's defaults" */
static char *
settings_name(const CcaSweepRow *row)
{
	return *row->conf ? g_strdup_printf("\"%s\"", row->conf) : g_strdup("PyTorch's defaults");
}

/* What to do to get ROW's settings. */
static char *
settings_advice(const CcaSweepRow *row)
{
	return *row->conf ? g_strdup_printf("Set PYTORCH_CUDA_ALLOC_CONF=\"%s\"", row->conf)
			  : g_strdup("Use PyTorch's defaults (unset PYTORCH_CUDA_ALLOC_CONF)");
}

/* Says what BASE's (the recorded row's) replay proved of a cap nobody
 * passed (capbound.h): the rows ran without it. */
static void
append_cap_proved(GString *why, const CcaSweepRow *base)
{
	const CcaCapBound *c = &base->runs[0].cap;
	if (!c->proved)
		return;
	char a[32], b[32], d[32];
	g_string_append_printf(
		why,
		" But the recording ran out of memory at event %" G_GUINT64_FORMAT
		" while the device had %s free: a cap was in force, allowing between %s and %s "
		"(`ccasim replay` says why), and these rows ran without it. Give it with "
		"--recorded-memory-fraction for an answer under it.",
		c->event, cca_size_format(c->device_free, a), cca_size_format(c->lo, b),
		cca_size_format(c->hi, d));
}

const CcaSweepRow *
cca_sweep_recommend(const CcaSweep *sweep, CcaGoal goal, const CcaSweepOptions *options,
		    GString *why)
{
	const CcaSweepRow *best = NULL, *base = recorded_row(sweep), *furthest = NULL;
	const CcaSweepRow *maybe = NULL; /* the best that fits under some timings only */
	for (guint i = 0; i < sweep->rows->len; i++) {
		const CcaSweepRow *row = g_ptr_array_index(sweep->rows, i);
		if (!furthest || row->runs[0].oom_event > furthest->runs[0].oom_event)
			furthest = row;
		if (!cca_sweep_row_may_oom(row) && (!best || compare_rows(row, best, goal) < 0))
			best = row;
		if (row->runs[0].value[CCA_SWEEP_FIG_OOM] == 0 &&
		    (!maybe || compare_rows(row, maybe, goal) < 0))
			maybe = row;
	}
	g_autofree char *cap = capacity_phrase(sweep, options);
	char a[32], b[32], c[32];
	if (!best && maybe) {
		g_autofree char *name = settings_name(maybe);
		g_string_append_printf(
			why,
			"No setting in this grid is sure to run without running out of memory%s. "
			"%s runs to the end with the recorded stream timing and the driver's "
			"placement, but %s. `ccasim fit` finds the device memory each setting "
			"needs.",
			cap, name,
			maybe->thi[CCA_SWEEP_FIG_OOM] != 0
				? "runs out under other completion timings of its deferred frees, "
				  "which another run of the program can meet"
				: "runs out under other placements of its segments");
		append_cap_proved(why, base);
		return NULL;
	}
	if (!best && furthest && furthest->runs[0].oom_before_window) {
		g_string_append_printf(
			why,
			"No setting can run%s: the state the recording had when the window "
			"opened reserves %s, more than that, so the program could not have "
			"reached the window under it. `ccasim fit` finds the device memory each "
			"setting needs from the window's start.",
			cap, cca_size_format(cca_plan_start_reserved(sweep->plan), a));
		return NULL;
	}
	if (!best) {
		g_autofree char *name = settings_name(furthest);
		g_string_append_printf(
			why,
			"No setting in this grid runs without running out of memory%s; "
			"%s gets furthest (to event %" G_GUINT64_FORMAT
			" of the trace). `ccasim fit` finds the device memory each "
			"setting needs.",
			cap, name, furthest->runs[0].oom_event);
		append_cap_proved(why, base);
		return NULL;
	}
	CcaSweepFigure f = goal_figure(goal);
	const double *bv = best->runs[0].value, *rv = base->runs[0].value;
	bool base_ok = !cca_sweep_row_may_oom(base);
	if (base_ok && best != base && rv[f] == bv[f]) {
		best = base; /* a tie: keep what the program already uses */
		bv = rv;
	}
	uint64_t best_res = (uint64_t)bv[CCA_SWEEP_FIG_PEAK_RESERVED];
	uint64_t base_res = (uint64_t)rv[CCA_SWEEP_FIG_PEAK_RESERVED];
	g_autofree char *base_name = settings_name(base);
	g_autofree char *advice = settings_advice(best);
	if (best == base) {
		g_string_append_printf(
			why,
			"The recorded settings (%s) are already the best in this grid "
			"for %s%s: %s reserved at peak, %.0f cudaMalloc calls",
			base_name, cca_sweep_goal_name(goal), cap, cca_size_format(best_res, a),
			bv[CCA_SWEEP_FIG_MALLOCS]);
		if (goal == CCA_GOAL_TIME)
			g_string_append_printf(why, ", %.2f ms of predicted allocator time",
					       bv[CCA_SWEEP_FIG_TIME_US] / 1000.0);
		g_string_append(why, ".");
	} else if (!base_ok) {
		g_string_append_printf(why,
				       "%s: it runs to the end%s, where the recorded settings (%s) "
				       "run out of memory at event %" G_GUINT64_FORMAT
				       ". It reserves %s at peak with %.0f cudaMalloc calls.",
				       advice, cap, base_name, base->runs[0].oom_event,
				       cca_size_format(best_res, a), bv[CCA_SWEEP_FIG_MALLOCS]);
	} else if (goal == CCA_GOAL_RESERVED) {
		uint64_t saved = base_res - best_res;
		g_string_append_printf(
			why,
			"%s: it reserves %s at peak, %s (%.1f%%) less than the %s of "
			"the recorded settings (%s), and makes %.0f cudaMalloc calls "
			"against %.0f.",
			advice, cca_size_format(best_res, a), cca_size_format(saved, b),
			base_res ? 100.0 * (double)saved / (double)base_res : 0.0,
			cca_size_format(base_res, c), base_name, bv[CCA_SWEEP_FIG_MALLOCS],
			rv[CCA_SWEEP_FIG_MALLOCS]);
	} else if (goal == CCA_GOAL_MALLOCS) {
		g_string_append_printf(
			why,
			"%s: it makes %.0f cudaMalloc calls against %.0f with the "
			"recorded settings (%s), and reserves %s at peak against %s.",
			advice, bv[CCA_SWEEP_FIG_MALLOCS], rv[CCA_SWEEP_FIG_MALLOCS], base_name,
			cca_size_format(best_res, a), cca_size_format(base_res, b));
	} else {
		const CcaCost *k = &best->runs[0].cost;
		g_string_append_printf(
			why,
			"%s: its predicted allocator time is %.2f ms (cudaMalloc %.2f, "
			"cudaFree %.2f, synchronisations %.2f) against %.2f ms with the "
			"recorded settings (%s), and it reserves %s at peak against %s.",
			advice, bv[CCA_SWEEP_FIG_TIME_US] / 1000.0, k->malloc_us / 1000.0,
			k->free_us / 1000.0, k->sync_us / 1000.0,
			rv[CCA_SWEEP_FIG_TIME_US] / 1000.0, base_name, cca_size_format(best_res, a),
			cca_size_format(base_res, b));
	}
	if (best->sensitive)
		g_string_append_printf(
			why,
			" Where the driver places segments can change this: peak reserved %s to %s, "
			"%.0f to %.0f cudaMalloc calls.",
			cca_size_format((uint64_t)best->lo[CCA_SWEEP_FIG_PEAK_RESERVED], a),
			cca_size_format((uint64_t)best->hi[CCA_SWEEP_FIG_PEAK_RESERVED], b),
			best->lo[CCA_SWEEP_FIG_MALLOCS], best->hi[CCA_SWEEP_FIG_MALLOCS]);
	else if (*cap && best != base && base_ok)
		g_string_append_printf(why, " Both run without running out of memory%s.", cap);
	if (best->timing.timed &&
	    (best->tlo[CCA_SWEEP_FIG_PEAK_RESERVED] != best->thi[CCA_SWEEP_FIG_PEAK_RESERVED] ||
	     best->tlo[CCA_SWEEP_FIG_MALLOCS] != best->thi[CCA_SWEEP_FIG_MALLOCS]))
		g_string_append_printf(
			why,
			" When its deferred frees complete is up to the GPU: over %u completion "
			"timings peak reserved is %s to %s, %.0f to %.0f cudaMalloc calls.",
			best->timing.scenarios,
			cca_size_format((uint64_t)best->tlo[CCA_SWEEP_FIG_PEAK_RESERVED], a),
			cca_size_format((uint64_t)best->thi[CCA_SWEEP_FIG_PEAK_RESERVED], b),
			best->tlo[CCA_SWEEP_FIG_MALLOCS], best->thi[CCA_SWEEP_FIG_MALLOCS]);
	return best;
}

/* ---------------------------------------------------------- printing */

typedef enum {
	CELL_MIB,     /* bytes shown in MiB, one decimal */
	CELL_COUNT,   /* integer */
	CELL_PERCENT, /* a fraction shown in percent */
	CELL_MS,      /* microseconds shown in milliseconds */
} CellKind;

static void
cell_value(GString *out, double v, CellKind kind)
{
	switch (kind) {
	case CELL_MIB:
		g_string_append_printf(out, "%.1f", v / (double)CCA_MIB);
		break;
	case CELL_COUNT:
		g_string_append_printf(out, "%.0f", v);
		break;
	case CELL_PERCENT:
		g_string_append_printf(out, "%.2f", 100.0 * v);
		break;
	case CELL_MS:
		g_string_append_printf(out, "%.2f", v / 1000.0);
		break;
	}
}

static const struct {
	const char *head1, *head2;
	int figure; /* -1: not a figure */
	CellKind kind;
	bool wide_only;	  /* shown with --wide only */
	const char *name; /* in a sensitivity line */
} columns[] = {
	{"#", "", -1, CELL_COUNT, false, NULL},
	{"settings", "PYTORCH_CUDA_ALLOC_CONF", -1, CELL_COUNT, false, NULL},
	{"reserved", "peak MiB", CCA_SWEEP_FIG_PEAK_RESERVED, CELL_MIB, false, "reserved"},
	{"allocated", "peak MiB", CCA_SWEEP_FIG_PEAK_ALLOCATED, CELL_MIB, false, "allocated"},
	{"frag", "%", CCA_SWEEP_FIG_FRAGMENTATION, CELL_PERCENT, false, "frag %"},
	{"unalloc", "at peak MiB", CCA_SWEEP_FIG_UNALLOCATED_AT_PEAK, CELL_MIB, true,
	 "unalloc at peak"},
	{"cuda", "Malloc", CCA_SWEEP_FIG_MALLOCS, CELL_COUNT, false, "cudaMalloc"},
	{"cuda", "Free", CCA_SWEEP_FIG_FREES, CELL_COUNT, false, "cudaFree"},
	{"alloc", "retries", CCA_SWEEP_FIG_RETRIES, CELL_COUNT, false, "retries"},
	{"OOM", "", CCA_SWEEP_FIG_OOM, CELL_COUNT, false, "OOM"},
	{"alloc", "time ms", CCA_SWEEP_FIG_TIME_US, CELL_MS, false, "time ms"},
	{"address", "choice", -1, CELL_COUNT, true, NULL},
};

#define N_COLUMNS G_N_ELEMENTS(columns)
#define COLUMN_SETTINGS 1

/* FIGURE's value differs between ROW's address models, as printed. */
static bool
ranged(const CcaSweepRow *row, CcaSweepFigure f, CellKind kind)
{
	g_autoptr(GString) lo = g_string_new(NULL), hi = g_string_new(NULL);
	cell_value(lo, row->lo[f], kind);
	cell_value(hi, row->hi[f], kind);
	return strcmp(lo->str, hi->str) != 0;
}

/* The cell of FIGURE of ROW: the primary value, or with RANGES "lo..hi"
 * when the address models disagree. */
static char *
cell(const CcaSweepRow *row, CcaSweepFigure f, CellKind kind, bool ranges)
{
	GString *out = g_string_new(NULL);
	if (ranges && ranged(row, f, kind)) {
		cell_value(out, row->lo[f], kind);
		g_string_append(out, "..");
		cell_value(out, row->hi[f], kind);
	} else {
		cell_value(out, row->runs[0].value[f], kind);
	}
	return g_string_free(out, FALSE);
}

static char *
row_cell(const CcaSweepRow *row, guint rank, guint c, bool ranges)
{
	switch (c) {
	case 0:
		return g_strdup_printf("%u", rank);
	case COLUMN_SETTINGS:
		if (g_str_has_prefix(row->origin, "trace: "))
			return g_strdup_printf("%s (%s)", conf_label(row->conf), row->origin + 7);
		return g_strdup_printf("%s%s", conf_label(row->conf),
				       row->recorded ? " (recorded)" : "");
	case N_COLUMNS - 1:
		return g_strdup(row->n_runs == 1 && row->recorded ? "recorded"
				: !row->address_checked		  ? "-"
				: row->sensitive		  ? "varies"
								  : "stable");
	default:
		break;
	}
	if (columns[c].figure == CCA_SWEEP_FIG_OOM) {
		if (row->lo[CCA_SWEEP_FIG_OOM] != row->hi[CCA_SWEEP_FIG_OOM] ||
		    row->tlo[CCA_SWEEP_FIG_OOM] != row->thi[CCA_SWEEP_FIG_OOM])
			return g_strdup("depends");
		return g_strdup(row->runs[0].value[CCA_SWEEP_FIG_OOM] ? "yes" : "no");
	}
	return cell(row, (CcaSweepFigure)columns[c].figure, columns[c].kind, ranges);
}

/* The timing line of ROW (NULL when no figure depends on when its
 * deferred frees complete): each figure bounded, with its bounds. */
static char *
timing_line(const CcaSweepRow *row)
{
	if (!row->timing.timed)
		return NULL;
	GString *l = g_string_new(NULL);
	g_string_append_printf(l, "stream timing (%u timings) varies:", row->timing.scenarios);
	bool any = false;
	for (guint c = 0; c < N_COLUMNS; c++) {
		int f = columns[c].figure;
		if (f < 0 || f == CCA_SWEEP_FIG_OOM)
			continue;
		g_autoptr(GString) lo = g_string_new(NULL), hi = g_string_new(NULL);
		cell_value(lo, row->tlo[f], columns[c].kind);
		cell_value(hi, row->thi[f], columns[c].kind);
		if (strcmp(lo->str, hi->str) == 0)
			continue;
		g_string_append_printf(l, "%s %s %s..%s", any ? "," : "", columns[c].name, lo->str,
				       hi->str);
		any = true;
	}
	if (row->tlo[CCA_SWEEP_FIG_OOM] != row->thi[CCA_SWEEP_FIG_OOM]) {
		g_string_append_printf(l, "%s OOM under some timings", any ? "," : "");
		any = true;
	}
	if (!any) {
		g_string_free(l, TRUE);
		return NULL;
	}
	return g_string_free(l, FALSE);
}

/* The sensitivity line of ROW (NULL when no figure depends on the
 * address model): each figure that differs, with its range. */
static char *
sensitivity_line(const CcaSweepRow *row)
{
	if (!row->address_checked || !row->sensitive)
		return NULL;
	GString *l = g_string_new("address choice varies:");
	bool any = false;
	for (guint c = 0; c < N_COLUMNS; c++) {
		int f = columns[c].figure;
		if (f < 0 || f == CCA_SWEEP_FIG_OOM ||
		    !ranged(row, (CcaSweepFigure)f, columns[c].kind))
			continue;
		g_autofree char *v = cell(row, (CcaSweepFigure)f, columns[c].kind, true);
		g_string_append_printf(l, "%s %s %s", any ? "," : "", columns[c].name, v);
		any = true;
	}
	if (row->lo[CCA_SWEEP_FIG_OOM] != row->hi[CCA_SWEEP_FIG_OOM])
		g_string_append_printf(l, "%s OOM under some models", any ? "," : "");
	else if (!any)
		g_string_append(l, " in figures within rounding");
	return g_string_free(l, FALSE);
}

GPtrArray *
cca_sweep_notes(const CcaSweep *sweep)
{
	GPtrArray *notes = g_ptr_array_new_with_free_func(g_free);
	const char *window = cca_sweep_window_note(sweep);
	if (window)
		g_ptr_array_add(notes, g_strdup(window));
	for (guint r = 0; r < sweep->rows->len; r++)
		cca_settings_add_notes(
			&((const CcaSweepRow *)g_ptr_array_index(sweep->rows, r))->settings, notes);
	return notes;
}

const char *
cca_sweep_window_note(const CcaSweep *sweep)
{
	if (!sweep->plan || !sweep->plan->mid_run)
		return NULL;
	return "the trace is a window of the run (it starts mid-run): every row starts from the "
	       "state the recording had when the window opened, rebuilt under the recorded "
	       "settings, and its figures (peaks, counts, what fits) cover the window alone, "
	       "not the run before it";
}

json_t *
cca_sweep_window_json(const CcaSweep *sweep, const CcaSweepRun *run)
{
	const char *note = cca_sweep_window_note(sweep);
	if (!note)
		return json_null();
	json_t *o = json_object();
	json_object_set_new(o, "assumes", cca_json_string(note));
	json_object_set_new(o, "start_reserved",
			    cca_json_uint(cca_plan_start_reserved(sweep->plan)));
	json_object_set_new(o, "oom_before_window",
			    run ? cca_json_bool(run->oom_before_window) : json_null());
	return o;
}

/* The narrowest the settings column is cut to. */
enum {
	SWEEP_MIN_SETTINGS = 6
};

/* Appends the paragraph TEXT, wrapped to the terminal's width unless
 * WIDE. */
static void
append_paragraph(GString *out, const char *text, bool wide)
{
	cca_text_wrap(out, text, wide ? G_MAXUINT : CCA_TEXT_COLUMNS, 2);
}

static void
append_context(GString *out, const CcaSweep *sweep, const CcaSweepReport *report)
{
	const CcaSweepOptions *o = report->options;
	bool wide = report->wide;
	char a[32], b[32];
	uint64_t total = cca_plan_device_memory(sweep->plan, o->device_memory);
	g_autoptr(GString) p = g_string_new(NULL);
	g_autofree char *trace = cca_text_path(report->trace);
	g_string_append_printf(p,
			       "%s, device %d: %" G_GUINT64_FORMAT " events, %u settings, "
			       "PyTorch %u.%u rules%s, best first by %s",
			       trace, sweep->device, sweep->snap->n_events[sweep->device],
			       sweep->rows->len, sweep->pytorch_version / 100,
			       sweep->pytorch_version % 100,
			       cca_rules_for(sweep->pytorch_version)->unvalidated
				       ? " (unvalidated: modelled from source, doc/versions.md)"
				       : "",
			       cca_sweep_goal_name(report->goal));
	if (o->memory_fraction > 0)
		g_string_append_printf(
			p, ", cap %s (memory fraction %g of %s)",
			cca_size_format((uint64_t)(o->memory_fraction * (double)total), a),
			o->memory_fraction, cca_size_format(total, b));
	else if (o->capacity_set)
		g_string_append_printf(p, ", device memory %s", cca_size_format(total, a));
	append_paragraph(out, p->str, wide);
	if (report->gpu) {
		char c[32];
		g_string_truncate(p, 0);
		g_string_append_printf(p,
				       "GPU %s: %s total less %s outside the caching allocator "
				       "(%s) leaves %s to reserve",
				       report->gpu, cca_size_format(report->gpu_total, a),
				       cca_size_format(report->context, b), report->context_source,
				       cca_size_format(total, c));
		append_paragraph(out, p->str, wide);
	}
}

/* Appends one table line of the cells CELLS of the columns SHOWN, each
 * padded to WIDTH. */
static void
append_table_line(GString *out, char *const *cells, const bool *shown, const guint *width)
{
	g_autoptr(GString) l = g_string_new(NULL);
	bool first = true;
	for (guint c = 0; c < N_COLUMNS; c++) {
		if (!shown[c])
			continue;
		if (!first)
			g_string_append(l, "  ");
		first = false;
		cca_text_pad(l, cells[c], width[c], c != COLUMN_SETTINGS && c != N_COLUMNS - 1);
	}
	g_strchomp(l->str);
	g_string_append_printf(out, "%s\n", l->str);
}

void
cca_sweep_print_text(const CcaSweep *sweep, const CcaSweepReport *report, GString *out)
{
	append_context(out, sweep, report);
	bool wide = report->wide;
	guint n = sweep->rows->len;
	bool shown[N_COLUMNS];
	guint width[N_COLUMNS];
	char *heads[2][N_COLUMNS];
	for (guint c = 0; c < N_COLUMNS; c++) {
		shown[c] = wide || !columns[c].wide_only;
		heads[0][c] = g_strdup(columns[c].head1);
		heads[1][c] = g_strdup(columns[c].head2);
		width[c] = MAX(strlen(columns[c].head1), strlen(columns[c].head2));
	}
	char ***cells = g_new0(char **, n);
	for (guint r = 0; r < n; r++) {
		cells[r] = g_new0(char *, N_COLUMNS + 1); /* NULL-terminated: g_strfreev() */
		for (guint c = 0; c < N_COLUMNS; c++) {
			cells[r][c] = row_cell(g_ptr_array_index(sweep->rows, r), r + 1, c, wide);
			width[c] = MAX(width[c], cca_text_width(cells[r][c]));
		}
	}
	gboolean abbreviated = FALSE;
	if (!wide) {
		/* the settings take what the other columns leave of the line */
		guint others = 0;
		for (guint c = 0; c < N_COLUMNS; c++)
			if (shown[c] && c != COLUMN_SETTINGS)
				others += width[c] + 2;
		/* at least SWEEP_MIN_SETTINGS ("ex...e") when the others leave
		 * less (a table of every column at 80) */
		guint line_width = CCA_TEXT_COLUMNS;
		guint room = others + SWEEP_MIN_SETTINGS < line_width ? line_width - others
								      : SWEEP_MIN_SETTINGS;
		if (width[COLUMN_SETTINGS] > room) {
			width[COLUMN_SETTINGS] = room;
			for (guint r = 0; r <= n + 1; r++) {
				char **p = r < n ? &cells[r][COLUMN_SETTINGS]
						 : &heads[r - n][COLUMN_SETTINGS];
				char *cut = r < n ? cca_settings_cell(*p, room, &abbreviated)
						  : cca_text_ellipsize(*p, room);
				g_free(*p);
				*p = cut;
			}
		}
	}
	append_table_line(out, heads[0], shown, width);
	append_table_line(out, heads[1], shown, width);
	for (guint r = 0; r < n; r++) {
		append_table_line(out, cells[r], shown, width);
		const CcaSweepRow *row = g_ptr_array_index(sweep->rows, r);
		char *lines[2] = {wide ? NULL : sensitivity_line(row), timing_line(row)};
		for (guint k = 0; k < 2; k++) {
			if (!lines[k])
				continue;
			g_autoptr(GString) l = g_string_new(NULL);
			guint indent = width[0] + 2;
			for (guint i = 0; i < indent; i++)
				g_string_append_c(l, ' ');
			g_string_append(l, lines[k]);
			cca_text_wrap(out, l->str, CCA_TEXT_COLUMNS, indent + 2);
			g_free(lines[k]);
		}
		g_strfreev(cells[r]);
	}
	g_free(cells);
	for (guint c = 0; c < N_COLUMNS; c++) {
		g_free(heads[0][c]);
		g_free(heads[1][c]);
	}
	guint n_models;
	const CcaAddressModel *models = cca_simdevice_bound_models(&n_models);
	g_autoptr(GString) p = g_string_new(NULL);
	if (!report->options->address_sensitivity) {
		g_string_append_printf(
			p,
			"address choice (--no-bounds): one replay per row, what-if rows with the %s "
			"address model, the recorded settings with the trace's own addresses; "
			"without --no-bounds each what-if row is also replayed under the other "
			"models and the figures that differ show their range (lo..hi).",
			cca_simdevice_address_model_name(models[0]));
	} else {
		g_autofree char *names = cca_simdevice_bound_models_text();
		g_string_append_printf(
			p,
			"address choice: what-if rows are replayed with each address model (%s, "
			"the first shown",
			names);
		g_string_append_printf(
			p,
			"), the recorded settings with the trace's own addresses (and each "
			"model too if the cap changes their run); lo..hi is the range where "
			"they differ%s.",
			wide ? "" : ", on a line under the row; rows without one are stable");
	}
	append_paragraph(out, p->str, wide);
	if (!wide)
		append_paragraph(out,
				 "--wide shows every column (unalloc at peak, address "
				 "choice) and whole settings; --csv and --json too.",
				 false);
	if (abbreviated) {
		g_string_truncate(p, 0);
		cca_settings_append_brief_note(p);
		append_paragraph(out, p->str, false);
	}
	if (report->options->calibration) {
		g_string_truncate(p, 0);
		g_string_append_printf(
			p,
			"alloc time: cudaMalloc/cudaFree by size from %s, %.0f us per "
			"synchronisation%s (doc/cost-model.md).",
			report->options->calibration->source, report->options->calibration->sync_us,
			report->options->calibration->sync_measured ? "" : " (assumed)");
		append_paragraph(out, p->str, wide);
	}
	g_autoptr(GPtrArray) notes = cca_sweep_notes(sweep);
	for (guint i = 0; i < notes->len; i++) {
		g_autofree char *note =
			g_strdup_printf("note: %s", (const char *)g_ptr_array_index(notes, i));
		append_paragraph(out, note, wide);
	}
	if (report->why) {
		g_autofree char *why = g_strdup_printf("recommendation: %s", report->why);
		g_string_append_c(out, '\n');
		append_paragraph(out, why, wide);
	}
}

/* A double in JSON/CSV: locale-independent. */
static void
append_double(GString *out, double v, const char *format)
{
	char buf[G_ASCII_DTOSTR_BUF_SIZE];
	g_string_append(out, g_ascii_formatd(buf, sizeof buf, format, v));
}

static bool
figure_is_integer(int f)
{
	return f != CCA_SWEEP_FIG_FRAGMENTATION && f != CCA_SWEEP_FIG_TIME_US &&
	       f != CCA_SWEEP_FIG_OOM;
}

static json_t *
figure_json(int f, double v)
{
	if (f == CCA_SWEEP_FIG_OOM)
		return cca_json_bool(v != 0);
	if (figure_is_integer(f))
		return cca_json_uint((uint64_t)v);
	return cca_json_fixed(v, f == CCA_SWEEP_FIG_FRAGMENTATION ? 6 : 3);
}

/* The names of the sweep's address models, as a new JSON array. */
static json_t *
models_json(const CcaAddressModel *models, guint n)
{
	json_t *list = json_array();
	for (guint m = 0; m < n; m++)
		json_array_append_new(list,
				      cca_json_string(cca_simdevice_address_model_name(models[m])));
	return list;
}

static json_t *
row_json(const CcaSweepRow *row, guint rank)
{
	const CcaSweepRun *run = &row->runs[0];
	json_t *o = json_object();
	json_object_set_new(o, "rank", json_integer(rank));
	json_object_set_new(o, "settings", cca_json_string(row->conf));
	json_object_set_new(o, "origin", cca_json_string(row->origin));
	json_object_set_new(o, "recorded", cca_json_bool(row->recorded));
	g_autoptr(GPtrArray) notes = g_ptr_array_new_with_free_func(g_free);
	cca_settings_add_notes(&row->settings, notes);
	json_object_set_new(o, "notes", cca_json_strings(notes));
	json_object_set_new(o, "whatif", cca_json_bool(run->whatif));
	json_object_set_new(o, "replays", json_integer(row->n_runs));
	json_object_set_new(o, "address_sensitive",
			    row->address_checked ? cca_json_bool(row->sensitive) : json_null());
	json_object_set_new(o, "events", cca_json_uint(run->events));
	json_t *models = json_array();
	for (guint m = 0; m < row->n_runs; m++)
		json_array_append_new(models, cca_json_string(cca_simdevice_address_model_name(
						      row->runs[m].model)));
	json_object_set_new(o, "models", models);
	for (int f = 0; f < CCA_SWEEP_FIG_COUNT; f++) {
		g_autofree char *range_key = g_strconcat(figure_names[f], "_range", NULL);
		json_object_set_new(o, figure_names[f], figure_json(f, run->value[f]));
		json_t *range = json_null();
		if (row->lo[f] != row->hi[f]) {
			range = json_array();
			json_array_append_new(range, figure_json(f, row->lo[f]));
			json_array_append_new(range, figure_json(f, row->hi[f]));
		}
		json_object_set_new(o, range_key, range);
		g_autofree char *bounds_key = g_strconcat(figure_names[f], "_bounds", NULL);
		json_t *bounds = json_null();
		if (row->tlo[f] != row->thi[f]) {
			bounds = json_array();
			json_array_append_new(bounds, figure_json(f, row->tlo[f]));
			json_array_append_new(bounds, figure_json(f, row->thi[f]));
		}
		json_object_set_new(o, bounds_key, bounds);
	}
	/* "fits" only where no address model and no stream timing runs out */
	json_object_set_new(o, "may_oom", cca_json_bool(cca_sweep_row_may_oom(row)));
	json_object_set_new(o, "timing",
			    row->timing.timed ? json_integer(row->timing.scenarios) : json_null());
	json_object_set_new(o, "bounds", cca_timing_to_json(&row->timing));
	json_object_set_new(o, "oom_event",
			    run->value[CCA_SWEEP_FIG_OOM] ? cca_json_uint(run->oom_event)
							  : json_null());
	json_t *time = json_object();
	json_object_set_new(time, "malloc_us", cca_json_fixed(run->cost.malloc_us, 3));
	json_object_set_new(time, "free_us", cca_json_fixed(run->cost.free_us, 3));
	json_object_set_new(time, "sync_us", cca_json_fixed(run->cost.sync_us, 3));
	json_object_set_new(o, "time", time);
	return o;
}

json_t *
cca_sweep_to_json(const CcaSweep *sweep, const CcaSweepReport *report)
{
	const CcaSweepOptions *o = report->options;
	g_autofree char *version = g_strdup_printf("%u.%u", sweep->pytorch_version / 100,
						   sweep->pytorch_version % 100);
	json_t *doc = json_object();
	json_object_set_new(doc, "trace", cca_json_string(report->trace));
	json_object_set_new(doc, "device", json_integer(sweep->device));
	json_object_set_new(doc, "events", cca_json_uint(sweep->snap->n_events[sweep->device]));
	json_object_set_new(doc, "pytorch_version", cca_json_string(version));
	json_object_set_new(doc, "unvalidated",
			    cca_json_bool(cca_rules_for(sweep->pytorch_version)->unvalidated));
	json_object_set_new(doc, "goal", cca_json_string(cca_sweep_goal_name(report->goal)));
	json_object_set_new(doc, "memory_fraction", cca_json_real(o->memory_fraction));
	json_object_set_new(doc, "device_memory",
			    cca_json_uint(cca_plan_device_memory(sweep->plan, o->device_memory)));
	json_object_set_new(doc, "capacity_set", cca_json_bool(o->capacity_set));
	json_t *gpu = json_null();
	if (report->gpu) {
		gpu = json_object();
		json_object_set_new(gpu, "name", cca_json_string(report->gpu));
		json_object_set_new(gpu, "total_memory", cca_json_uint(report->gpu_total));
		json_object_set_new(gpu, "context", cca_json_uint(report->context));
		json_object_set_new(gpu, "context_source", cca_json_string(report->context_source));
	}
	json_object_set_new(doc, "gpu", gpu);
	guint n_models;
	const CcaAddressModel *models = cca_simdevice_bound_models(&n_models);
	json_object_set_new(doc, "address_models",
			    models_json(models, o->address_sensitivity ? n_models : 1));
	json_t *cal = json_null();
	if (o->calibration) {
		cal = json_object();
		json_object_set_new(cal, "source", cca_json_string(o->calibration->source));
		json_object_set_new(cal, "sync_us", cca_json_fixed(o->calibration->sync_us, 3));
		json_object_set_new(cal, "sync_measured",
				    cca_json_bool(o->calibration->sync_measured));
	}
	json_object_set_new(doc, "calibration", cal);
	g_autoptr(GPtrArray) notes = cca_sweep_notes(sweep);
	json_object_set_new(doc, "notes", cca_json_strings(notes));
	const CcaSweepRow *base = recorded_row(sweep);
	/* every row starts from the same rebuilt state under the same cap */
	json_object_set_new(doc, "window",
			    cca_sweep_window_json(sweep, base ? &base->runs[0] : NULL));
	json_object_set_new(doc, "cap_proved",
			    base ? cca_capbound_to_json(&base->runs[0].cap) : json_null());
	json_t *rows = json_array();
	for (guint r = 0; r < sweep->rows->len; r++)
		json_array_append_new(rows, row_json(g_ptr_array_index(sweep->rows, r), r + 1));
	json_object_set_new(doc, "rows", rows);
	json_t *rec = json_null();
	if (report->why) {
		rec = json_object();
		json_object_set_new(
			rec, "settings",
			cca_json_string(report->recommended ? report->recommended->conf : NULL));
		json_object_set_new(rec, "why", cca_json_string(report->why));
	}
	json_object_set_new(doc, "recommendation", rec);
	return doc;
}

void
cca_sweep_print_json(const CcaSweep *sweep, const CcaSweepReport *report, GString *out)
{
	cca_json_append(out, cca_sweep_to_json(sweep, report));
}

static void
append_csv_string(GString *out, const char *s)
{
	g_string_append_c(out, '"');
	for (const char *p = s; *p; p++) {
		if (*p == '"')
			g_string_append_c(out, '"');
		g_string_append_c(out, *p);
	}
	g_string_append_c(out, '"');
}

static void
append_csv_figure(GString *out, int f, double v)
{
	if (figure_is_integer(f) || f == CCA_SWEEP_FIG_OOM)
		g_string_append_printf(out, "%" G_GUINT64_FORMAT, (uint64_t)v);
	else
		append_double(out, v, f == CCA_SWEEP_FIG_FRAGMENTATION ? "%.6f" : "%.3f");
}

void
cca_sweep_print_csv(const CcaSweep *sweep, GString *out)
{
	g_string_append(out, "rank,settings,origin,recorded,address_sensitive");
	for (int f = 0; f < CCA_SWEEP_FIG_COUNT; f++)
		g_string_append_printf(out, ",%s,%s_min,%s_max", figure_names[f], figure_names[f],
				       figure_names[f]);
	g_string_append_c(out, '\n');
	for (guint r = 0; r < sweep->rows->len; r++) {
		const CcaSweepRow *row = g_ptr_array_index(sweep->rows, r);
		g_string_append_printf(out, "%u,", r + 1);
		append_csv_string(out, row->conf);
		g_string_append_c(out, ',');
		append_csv_string(out, row->origin);
		if (row->address_checked)
			g_string_append_printf(out, ",%d,%d", row->recorded, row->sensitive);
		else
			g_string_append_printf(out, ",%d,", row->recorded);
		for (int f = 0; f < CCA_SWEEP_FIG_COUNT; f++) {
			g_string_append_c(out, ',');
			append_csv_figure(out, f, row->runs[0].value[f]);
			g_string_append_c(out, ',');
			append_csv_figure(out, f, row->lo[f]);
			g_string_append_c(out, ',');
			append_csv_figure(out, f, row->hi[f]);
		}
		g_string_append_c(out, '\n');
	}
}
