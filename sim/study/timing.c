/* timing.c - a what-if's figures bounded over stream timing.
 *
 * The timings replayed (timing_scenarios): the recorded one (the base
 * replay, given), deferred frees completing by the 1st, 2nd, 4th and 8th
 * malloc after the free (the 1st is the earliest PyTorch allows: the next
 * malloc's process_events; each no later than recorded), by the 1st,
 * 2nd, 4th, 8th and 16th malloc after the recorded completion, and never
 * before the model synchronises (a cascade's release_cached_blocks or an
 * empty_cache()): the latest the program allows, since its own
 * synchronisations (torch.cuda.synchronize(), .item()) are not in the
 * trace.  Every key is bounded by its least and greatest value over them.
 * Reserved memory is not monotone in completion times (a block that
 * returns earlier can be split where a later one would have made a
 * segment), so the shifts in between are replayed too, not the two
 * extremes alone; doc/whatif.md gives the coverage measured on live runs.
 *
 * Invariant: a key is in the bounds only when two timings disagree on it,
 * and lo <= every replayed value <= hi.
 */
#include "config.h"

#include "timing.h"

#include <string.h>

#include "number.h"
#include "parallel.h"
#include "plan.h"
#include "sensitivity.h"
#include "size.h"
#include "stats.h"
#include "text.h"

typedef struct {
	CcaCompletion completion;
	uint32_t shift;
	uint64_t seed;
} Scenario;

static const Scenario timing_scenarios[] = {
	{CCA_COMPLETION_EARLY, 1, 0},  {CCA_COMPLETION_EARLY, 2, 0},
	{CCA_COMPLETION_EARLY, 4, 0},  {CCA_COMPLETION_EARLY, 8, 0},
	{CCA_COMPLETION_LATE, 1, 0},   {CCA_COMPLETION_LATE, 2, 0},
	{CCA_COMPLETION_LATE, 4, 0},   {CCA_COMPLETION_LATE, 8, 0},
	{CCA_COMPLETION_LATE, 16, 0},  {CCA_COMPLETION_LATE, CCA_COMPLETION_NEVER, 0},
	{CCA_COMPLETION_LAG, 2, 0},    {CCA_COMPLETION_LAG, 3, 0},
	{CCA_COMPLETION_LAG, 4, 0},    {CCA_COMPLETION_LAG, 6, 0},
	{CCA_COMPLETION_LAG, 8, 0},    {CCA_COMPLETION_LAG, 12, 0},
	{CCA_COMPLETION_LAG, 16, 0},   {CCA_COMPLETION_LAG, 24, 0},
	{CCA_COMPLETION_LAG, 32, 0},   {CCA_COMPLETION_LAG, 48, 0},
	{CCA_COMPLETION_LAG, 64, 0},   {CCA_COMPLETION_RANDOM, 1, 1},
	{CCA_COMPLETION_RANDOM, 1, 2}, {CCA_COMPLETION_RANDOM, 1, 3},
	{CCA_COMPLETION_RANDOM, 1, 4}, {CCA_COMPLETION_RANDOM, 1, 5},
	{CCA_COMPLETION_RANDOM, 1, 6}, {CCA_COMPLETION_RANDOM, 1, 7},
	{CCA_COMPLETION_RANDOM, 1, 8}, {CCA_COMPLETION_RANDOM, 2, 1},
	{CCA_COMPLETION_RANDOM, 2, 2}, {CCA_COMPLETION_RANDOM, 2, 3},
	{CCA_COMPLETION_RANDOM, 2, 4}, {CCA_COMPLETION_RANDOM, 2, 5},
	{CCA_COMPLETION_RANDOM, 2, 6}, {CCA_COMPLETION_RANDOM, 2, 7},
	{CCA_COMPLETION_RANDOM, 2, 8}, {CCA_COMPLETION_RANDOM, 4, 1},
	{CCA_COMPLETION_RANDOM, 4, 2}, {CCA_COMPLETION_RANDOM, 4, 3},
	{CCA_COMPLETION_RANDOM, 4, 4}, {CCA_COMPLETION_RANDOM, 4, 5},
	{CCA_COMPLETION_RANDOM, 4, 6}, {CCA_COMPLETION_RANDOM, 4, 7},
	{CCA_COMPLETION_RANDOM, 4, 8}, {CCA_COMPLETION_RANDOM, 8, 1},
	{CCA_COMPLETION_RANDOM, 8, 2}, {CCA_COMPLETION_RANDOM, 8, 3},
	{CCA_COMPLETION_RANDOM, 8, 4}, {CCA_COMPLETION_RANDOM, 8, 5},
	{CCA_COMPLETION_RANDOM, 8, 6}, {CCA_COMPLETION_RANDOM, 8, 7},
	{CCA_COMPLETION_RANDOM, 8, 8},
};

/* SC's spelling in --completions (NULL: the recorded timing) into BUF. */
static const char *
scenario_name(const Scenario *sc, char buf[32])
{
	if (!sc)
		return "recorded";
	switch (sc->completion) {
	case CCA_COMPLETION_EARLY:
		if (sc->shift == 1)
			return "earliest";
		g_snprintf(buf, 32, "early:%u", sc->shift);
		break;
	case CCA_COMPLETION_LATE:
		if (sc->shift == CCA_COMPLETION_NEVER)
			return "never";
		g_snprintf(buf, 32, "late:%u", sc->shift);
		break;
	case CCA_COMPLETION_LAG:
		g_snprintf(buf, 32, "lag:%u", sc->shift);
		break;
	case CCA_COMPLETION_SIZED:
		g_snprintf(buf, 32, "sized:%u", sc->shift);
		break;
	case CCA_COMPLETION_RANDOM:
		g_snprintf(buf, 32, "random:%u/%" G_GUINT64_FORMAT, sc->shift, sc->seed);
		break;
	default:
		return "recorded";
	}
	return buf;
}

typedef struct {
	GArray *all; /* CcaTimingBound of every key, in key order */
	guint i;
	bool first;
	const char *timing; /* the timing of the stats being folded */
} Fold;

static void
fold_one(const char *name, int64_t value, void *data)
{
	Fold *f = data;
	if (f->first) {
		CcaTimingBound b = {.lo = value, .hi = value};
		g_strlcpy(b.name, name, sizeof b.name);
		g_strlcpy(b.lo_timing, f->timing, sizeof b.lo_timing);
		g_strlcpy(b.hi_timing, f->timing, sizeof b.hi_timing);
		g_array_append_val(f->all, b);
		return;
	}
	CcaTimingBound *b = &g_array_index(f->all, CcaTimingBound, f->i++);
	g_assert(strcmp(b->name, name) == 0); /* cca_stats_foreach's fixed order */
	if (value < b->lo) {
		b->lo = value;
		g_strlcpy(b->lo_timing, f->timing, sizeof b->lo_timing);
	}
	if (value > b->hi) {
		b->hi = value;
		g_strlcpy(b->hi_timing, f->timing, sizeof b->hi_timing);
	}
}

static void
fold(Fold *f, const CcaStats *stats)
{
	f->i = 0;
	cca_stats_foreach(stats, fold_one, f);
	f->first = false;
}

G_DEFINE_QUARK(cca - timing - error - quark, cca_timing_error)

/* Replays SNAP under O into RES (cleared by the caller), unless OPTIONS'
 * cancel flag is set: then FALSE with CCA_TIMING_ERROR_CANCELLED. */
static gboolean
replay_unless_cancelled(const CcaSnapshot *snap, const CcaReplayOptions *o, CcaReplayResult *res,
			GError **error)
{
	if (o->cancel && *o->cancel) {
		memset(res, 0, sizeof *res);
		g_set_error(error, CCA_TIMING_ERROR, CCA_TIMING_ERROR_CANCELLED, "interrupted");
		return FALSE;
	}
	return cca_replay_run(snap, o, res, error);
}

/* Whether BASE, a what-if replayed under OPTIONS, decided something by
 * address alone (*TIES), and under which other address models it decided
 * all of it the same (*SAME, res.same_under); replays it once more
 * counting, when it did not count. */
static gboolean
address_ties_of(const CcaSnapshot *snap, const CcaReplayOptions *options,
		const CcaReplayResult *base, uint64_t *ties, uint32_t *same, GError **error)
{
	if (base->address_ties_counted) {
		*ties = base->address_ties;
		*same = base->same_under;
		return TRUE;
	}
	CcaReplayOptions o = *options;
	o.count_address_ties = true;
	CcaReplayResult res;
	gboolean ok = replay_unless_cancelled(snap, &o, &res, error);
	*ties = ok ? res.address_ties : 0;
	*same = ok ? res.same_under : 0;
	cca_replay_result_clear(&res);
	return ok;
}

/* One replay of the bounds: its options, its name in the bounds, and
 * what it gave (the stats, or the error). */
typedef struct {
	CcaReplayOptions opt;
	char name[32];
	CcaStats stats;
	GError *error;
} BoundTask;

typedef struct {
	const CcaSnapshot *snap;
	BoundTask *tasks;
} BoundJob;

static void
bound_task_run(void *data, guint i)
{
	BoundJob *job = data;
	BoundTask *t = &job->tasks[i];
	CcaReplayResult res;
	if (replay_unless_cancelled(job->snap, &t->opt, &res, &t->error))
		t->stats = res.stats;
	cca_replay_result_clear(&res);
}

gboolean
cca_timing_run(const CcaSnapshot *snap, const CcaReplayOptions *options,
	       const CcaReplayResult *base, CcaTiming *out, GError **error)
{
	memset(out, 0, sizeof *out);
	out->bounds = g_array_new(FALSE, FALSE, sizeof(CcaTimingBound));
	out->whatif = base->whatif;
	if (!base->whatif || options->no_bounds)
		return TRUE;
	uint64_t ties = 0;
	uint32_t same = 0;
	if (!address_ties_of(snap, options, base, &ties, &same, error))
		return FALSE;
	out->timed = base->deferred_frees > 0;
	out->placed = ties > 0;
	if (!out->timed && !out->placed)
		return TRUE;
	out->deferred_frees = base->deferred_frees;
	out->address_ties = ties;
	out->scenarios = 1;
	out->address_models = 1;
	/* every other timing, then where the driver puts each segment (its
	 * own choice): every other model; replayed on OPTIONS->bound_threads,
	 * folded in this order whatever the threads */
	guint n_models;
	const CcaAddressModel *models = cca_simdevice_bound_models(&n_models);
	guint n_tasks = 0;
	BoundTask *tasks = g_new0(BoundTask, G_N_ELEMENTS(timing_scenarios) + n_models);
	for (guint s = 0; out->timed && s < G_N_ELEMENTS(timing_scenarios); s++) {
		BoundTask *t = &tasks[n_tasks++];
		t->opt = *options;
		t->opt.completion = timing_scenarios[s].completion;
		t->opt.completion_shift = timing_scenarios[s].shift;
		t->opt.completion_seed = timing_scenarios[s].seed;
		char buf[32];
		g_strlcpy(t->name, scenario_name(&timing_scenarios[s], buf), sizeof t->name);
	}
	guint first_model = n_tasks;
	for (guint m = 0; out->placed && m < n_models; m++) {
		if (models[m] == options->address_model)
			continue;
		if (same & 1u << models[m]) { /* the what-if's own run */
			out->address_models++;
			continue;
		}
		BoundTask *t = &tasks[n_tasks++];
		t->opt = *options;
		t->opt.address_model = models[m];
		g_snprintf(t->name, sizeof t->name, "address:%s",
			   cca_simdevice_address_model_name(models[m]));
	}
	/* only their stats are folded: none needs its ties counted, nor
	 * the other models followed (shadow.h) */
	for (guint i = 0; i < n_tasks; i++)
		tasks[i].opt.count_address_ties = false;
	BoundJob job = {snap, tasks};
	cca_parallel_run(n_tasks, options->bound_threads, bound_task_run, &job, NULL, NULL);
	Fold f = {.all = g_array_new(FALSE, FALSE, sizeof(CcaTimingBound)),
		  .first = true,
		  .timing = "recorded"};
	fold(&f, &base->stats);
	gboolean ok = TRUE;
	for (guint i = 0; i < n_tasks; i++) {
		if (!ok) {
			g_clear_error(&tasks[i].error);
			continue;
		}
		if (tasks[i].error != NULL) { /* the first in order, as one thread finds it */
			g_propagate_error(error, tasks[i].error);
			ok = FALSE;
			continue;
		}
		f.timing = tasks[i].name;
		fold(&f, &tasks[i].stats);
		if (i < first_model)
			out->scenarios++;
		else
			out->address_models++;
	}
	g_free(tasks);
	for (guint i = 0; i < f.all->len; i++) {
		const CcaTimingBound *b = &g_array_index(f.all, CcaTimingBound, i);
		/* a window of a run cannot know these at all (report.c) */
		if (b->lo < b->hi &&
		    (!base->start_reconstructed || cca_stats_known_in_window(b->name)))
			g_array_append_val(out->bounds, *b);
	}
	g_array_free(f.all, TRUE);
	return ok;
}

/* A replay ran out of memory: an OOM the recording did not have, or any
 * when it is a what-if (sweep.c's figure "oom"). */
static bool
ran_out(const CcaReplayResult *res)
{
	return res->unexpected_ooms > 0 || res->stats.num_ooms > 0;
}

gboolean
cca_timing_all_fit(const CcaSnapshot *snap, const CcaReplayOptions *options, gboolean *fits,
		   char failed[32], GError **error)
{
	*fits = TRUE;
	if (failed)
		failed[0] = '\0';
	/* "never" is timing_scenarios' tenth; then the recorded timing, then
	 * the rest in order */
	const guint never = 9;
	g_assert(timing_scenarios[never].shift == CCA_COMPLETION_NEVER);
	for (int k = -2; k < (int)G_N_ELEMENTS(timing_scenarios) && *fits; k++) {
		const Scenario *sc = k == -2   ? &timing_scenarios[never]
				     : k == -1 ? NULL
					       : &timing_scenarios[k];
		if (k == (int)never)
			continue;
		CcaReplayOptions o = *options;
		if (sc) {
			o.completion = sc->completion;
			o.completion_shift = sc->shift;
			o.completion_seed = sc->seed;
		}
		CcaReplayResult res;
		gboolean ok = replay_unless_cancelled(snap, &o, &res, error);
		if (ok && ran_out(&res)) {
			*fits = FALSE;
			if (failed) {
				char buf[32];
				g_strlcpy(failed, scenario_name(sc, buf), 32);
			}
		}
		cca_replay_result_clear(&res);
		if (!ok)
			return FALSE;
	}
	return TRUE;
}

void
cca_timing_clear(CcaTiming *timing)
{
	if (timing->bounds)
		g_array_free(timing->bounds, TRUE);
	memset(timing, 0, sizeof *timing);
}

const CcaTimingBound *
cca_timing_lookup(const CcaTiming *timing, const char *name)
{
	for (guint i = 0; timing->bounds && i < timing->bounds->len; i++) {
		const CcaTimingBound *b = &g_array_index(timing->bounds, CcaTimingBound, i);
		if (strcmp(b->name, name) == 0)
			return b;
	}
	return NULL;
}

/* TIMING's bounds as {KEY: [lo, hi]}: the bytes, or with SOURCES the
 * timings that gave them; null when TIMING ran none. */
static json_t *
bounds_json(const CcaTiming *timing, bool sources)
{
	if (!timing->timed && !timing->placed)
		return json_null();
	json_t *o = json_object();
	for (guint i = 0; i < timing->bounds->len; i++) {
		const CcaTimingBound *b = &g_array_index(timing->bounds, CcaTimingBound, i);
		json_t *pair = json_array();
		json_array_append_new(pair,
				      sources ? json_string(b->lo_timing) : json_integer(b->lo));
		json_array_append_new(pair,
				      sources ? json_string(b->hi_timing) : json_integer(b->hi));
		json_object_set_new(o, b->name, pair);
	}
	return o;
}

json_t *
cca_timing_to_json(const CcaTiming *timing)
{
	return bounds_json(timing, false);
}

json_t *
cca_timing_sources_to_json(const CcaTiming *timing)
{
	return bounds_json(timing, true);
}

void
cca_timing_add_json(const CcaTiming *timing, json_t *doc)
{
	json_object_set_new(doc, "bounds", cca_timing_to_json(timing));
	json_object_set_new(doc, "bounds_timings", cca_timing_sources_to_json(timing));
}

/* Whether memory_stats() key NAME counts bytes. */
static bool
is_bytes(const char *name)
{
	return strstr(name, "_bytes.") != NULL;
}

/* Whether KEYS (NULL-terminated; NULL: every key) holds NAME. */
static bool
key_wanted(const char *const *keys, const char *name)
{
	if (!keys)
		return true;
	for (; *keys; keys++)
		if (strcmp(*keys, name) == 0)
			return true;
	return false;
}

void
cca_timing_describe(const CcaTiming *timing, GString *out)
{
	cca_timing_describe_keys(timing, NULL, out);
}

void
cca_timing_describe_keys(const CcaTiming *timing, const char *const *keys, GString *out)
{
	if (!timing->timed && !timing->placed)
		return;
	guint shown = 0; /* bounds of KEYS */
	for (guint i = 0; i < timing->bounds->len; i++)
		shown += key_wanted(keys, g_array_index(timing->bounds, CcaTimingBound, i).name);
	g_autofree char *placed = g_strdup_printf(
		"address placement: the what-if decided %" G_GUINT64_FORMAT " times by device "
		"address alone (equal free blocks, the order of releases), and where the driver "
		"puts a new segment is its own choice: replayed under %u address models, %s",
		timing->address_ties, timing->address_models,
		shown == 0	? "every figure above is the same."
		: timing->timed ? "the bounds below hold them too."
				: "these figures vary; each lies between the least and "
				  "the greatest of them (and the model that gave it):");
	g_autofree char *why =
		!timing->timed
			? NULL
			: g_strdup_printf(
				  "stream timing: the completions of frees deferred by record_stream are a race "
				  "with the GPU (%" G_GUINT64_FORMAT
				  " frees here), which the trace shows for the "
				  "recorded run alone; another run of the same program sees them earlier or later. "
				  "Replayed under %u timings, from the next malloc's process_events (earliest) to "
				  "none before the model synchronises (never: the program's own synchronisations "
				  "are not in the trace), %s",
				  timing->deferred_frees, timing->scenarios,
				  shown == 0
					  ? "every figure above is the same."
					  : "these figures vary; each lies between the least and "
					    "the greatest of them (and the timing that gave it):");
	g_string_append_c(out, '\n');
	if (timing->placed && timing->timed) {
		cca_text_wrap(out, placed, G_MAXUINT, 0);
		if (out->len > 0 && out->str[out->len - 1] != '\n')
			g_string_append_c(out, '\n');
	}
	cca_text_wrap(out, why ? why : placed, G_MAXUINT, 0);
	if (out->len > 0 && out->str[out->len - 1] != '\n')
		g_string_append_c(out, '\n');
	for (guint i = 0; i < timing->bounds->len; i++) {
		const CcaTimingBound *b = &g_array_index(timing->bounds, CcaTimingBound, i);
		if (!key_wanted(keys, b->name))
			continue;
		g_string_append_printf(out, "  %-40s %16" G_GINT64_FORMAT " .. %" G_GINT64_FORMAT,
				       b->name, b->lo, b->hi);
		if (is_bytes(b->name) && b->lo >= 0) {
			char lo[32], hi[32];
			g_string_append_printf(out, "  (%s .. %s)",
					       cca_size_format((uint64_t)b->lo, lo),
					       cca_size_format((uint64_t)b->hi, hi));
		}
		g_string_append_printf(out, "  [%s .. %s]\n", b->lo_timing, b->hi_timing);
	}
}

gboolean
cca_timing_bound(const CcaSnapshot *snap, const CcaReplayOptions *options,
		 const CcaReplayResult *base, CcaTiming *out, GError **error)
{
	memset(out, 0, sizeof *out);
	out->bounds = g_array_new(FALSE, FALSE, sizeof(CcaTimingBound));
	if (base && !base->whatif)
		return TRUE;
	if (options->completion != CCA_COMPLETION_RECORDED || options->no_bounds) {
		out->whatif = base ? base->whatif : true;
		return TRUE;
	}
	CcaReplayOptions o = *options;
	o.observer = NULL;
	o.on_model_event = NULL;
	o.before_request = NULL;
	o.on_finish = NULL;
	o.stop_after = 0;
	o.check = false;
	o.model_segments_only = false;
	g_autoptr(CcaPlan) own_plan = NULL;
	if (!o.plan) {
		own_plan = cca_plan_new(snap, o.device, o.pytorch_version, o.rewind, error);
		if (!own_plan)
			return FALSE;
		o.plan = own_plan;
	}
	/* as replay's own: its decisions by address counted in it */
	o.count_address_ties = true;
	CcaReplayResult own;
	memset(&own, 0, sizeof own);
	if (!base) {
		if (!cca_replay_run(snap, &o, &own, error)) {
			cca_replay_result_clear(&own);
			return FALSE;
		}
		base = &own;
	}
	cca_timing_clear(out);
	gboolean ok = cca_timing_run(snap, &o, base, out, error);
	cca_replay_result_clear(&own);
	return ok;
}

const char *
cca_timing_certainty(const CcaTiming *timing)
{
	if (!timing->whatif)
		return "recorded";
	return timing->bounds && timing->bounds->len > 0 ? "bounded" : "what-if";
}

const char *
cca_timing_why(const CcaTiming *timing)
{
	bool varies = false; /* a headline figure */
	for (guint k = 0; cca_sensitivity_figure_keys[k] && !varies; k++)
		varies = cca_timing_lookup(timing, cca_sensitivity_figure_keys[k]) != NULL;
	if (!varies)
		return NULL;
	return timing->timed && timing->placed ? "stream timing and address placement"
	       : timing->timed		       ? "stream timing"
					       : "address placement";
}

/* The words of each headline figure (cca_sensitivity_figure_keys), in its order. */
static const char *const headline_labels[CCA_FIGURE_COUNT] = {
	"reserved peak", "allocated peak", "peak segment count", "cudaMalloc", "cudaFree",
	"retries",	 "OOMs",
};

void
cca_timing_append_headline_ranges(const CcaTiming *timing, GString *out)
{
	bool first = true;
	for (guint k = 0; cca_sensitivity_figure_keys[k]; k++) {
		const CcaTimingBound *b = cca_timing_lookup(timing, cca_sensitivity_figure_keys[k]);
		if (!b)
			continue;
		g_string_append_printf(out, "%s%s ", first ? "" : ", ", headline_labels[k]);
		first = false;
		if (is_bytes(b->name)) {
			g_autofree char *r = cca_timing_format_bytes(timing, b->name, 0);
			g_string_append(out, r);
		} else {
			g_string_append_printf(out, "%" G_GINT64_FORMAT " .. %" G_GINT64_FORMAT,
					       b->lo, b->hi);
		}
	}
}

void
cca_timing_describe_headline(const CcaTiming *timing, bool state, GString *out)
{
	if (!cca_timing_why(timing))
		return; /* its figures are the same under every run replayed */
	cca_timing_describe_keys(timing, cca_sensitivity_figure_keys, out);
	if (state)
		g_string_append(out, "The bounds are of these figures, not of the blocks and "
				     "segments shown, which are the recorded timing's under the "
				     "what-if's own address model.\n");
}

void
cca_timing_add_run_json(const CcaTiming *timing, json_t *doc)
{
	json_object_set_new(doc, "certainty", json_string(cca_timing_certainty(timing)));
	cca_timing_add_json(timing, doc);
}

void
cca_timing_describe_lead(const CcaTiming *timing, GString *out)
{
	const char *why = cca_timing_why(timing);
	if (!why)
		return;
	/* the one run the figures below come from */
	const char *one = timing->timed && timing->placed
				  ? "the recorded timing's under the driver's placement"
			  : timing->timed ? "the recorded timing's"
					  : "those of the driver's placement";
	g_string_append_printf(out,
			       "bounded (%s): the figures below are %s; the ranges at the end hold "
			       "every run (as replay prints them).\n",
			       why, one);
}

char *
cca_timing_format_bytes(const CcaTiming *timing, const char *name, uint64_t value)
{
	char lo[32], hi[32];
	const CcaTimingBound *b = cca_timing_lookup(timing, name);
	if (!b || b->lo < 0)
		return g_strdup(cca_size_format(value, lo));
	cca_size_format((uint64_t)b->lo, lo);
	cca_size_format((uint64_t)b->hi, hi);
	if (strcmp(lo, hi) == 0) /* the bytes, where the units hide the range */
		return g_strdup_printf("%s (%" G_GINT64_FORMAT " .. %" G_GINT64_FORMAT " B)", lo,
				       b->lo, b->hi);
	return g_strdup_printf("%s .. %s", lo, hi);
}

gboolean
cca_timing_parse(const char *when, CcaReplayOptions *options, GError **error)
{
	uint64_t n = 0, seed = 0;
	const char *p;
	g_autofree char *spec = NULL;
	if (strcmp(when, "recorded") == 0) {
		options->completion = CCA_COMPLETION_RECORDED;
		options->completion_shift = 0;
	} else if (strcmp(when, "earliest") == 0) {
		options->completion = CCA_COMPLETION_EARLY;
		options->completion_shift = 1;
	} else if (strcmp(when, "never") == 0) {
		options->completion = CCA_COMPLETION_LATE;
		options->completion_shift = CCA_COMPLETION_NEVER;
	} else if (g_str_has_prefix(when, "early:") &&
		   cca_number_parse_u64(when + 6, CCA_COMPLETION_NEVER - 1, &n) && n >= 1) {
		options->completion = CCA_COMPLETION_EARLY;
		options->completion_shift = (uint32_t)n;
	} else if (g_str_has_prefix(when, "lag:") &&
		   cca_number_parse_u64(when + 4, CCA_COMPLETION_NEVER - 1, &n) && n >= 1) {
		options->completion = CCA_COMPLETION_LAG;
		options->completion_shift = (uint32_t)n;
	} else if (g_str_has_prefix(when, "sized:") &&
		   cca_number_parse_u64(when + 6, CCA_COMPLETION_NEVER - 1, &n)) {
		options->completion = CCA_COMPLETION_SIZED;
		options->completion_shift = (uint32_t)n;
	} else if (g_str_has_prefix(when, "random:") && (p = strchr(when + 7, '/')) &&
		   (spec = g_strndup(when + 7, (gsize)(p - when - 7))) &&
		   cca_number_parse_u64(spec, CCA_COMPLETION_NEVER - 1, &n) &&
		   cca_number_parse_u64(p + 1, UINT64_MAX, &seed)) {
		options->completion = CCA_COMPLETION_RANDOM;
		options->completion_shift = (uint32_t)n;
		options->completion_seed = seed;
	} else if (g_str_has_prefix(when, "late:") &&
		   cca_number_parse_u64(when + 5, CCA_COMPLETION_NEVER - 1, &n)) {
		options->completion = CCA_COMPLETION_LATE;
		options->completion_shift = (uint32_t)n;
	} else {
		g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
			    "--completions: '%s' is none of recorded, earliest, early:D (D >= 1), "
			    "lag:D (D >= 1), sized:D, random:M/SEED, late:K (K >= 0), never",
			    when);
		return FALSE;
	}
	return TRUE;
}
