/* timeline.c - reserved, allocated and active memory over a replay.
 *
 * The observer folds each handled entry into its bucket (min, max, first,
 * last per series); entries the engine consumes without an observer call
 * (a free's immediate free_completed, empty_cache bursts) change nothing
 * that the next handled entry does not show.  An oom the model records is
 * noted and attached to the entry handled next.  When the engine restarts
 * a replay (a trace found to start mid-run) the buckets start over.
 */
#include "config.h"

#include "timeline.h"

#include <string.h>

typedef struct {
	CcaTimeline *tl;
	bool oom_pending;
	uint64_t oom_size;
	int64_t last_index; /* -1 before the first entry */
} Collect;

static void
timeline_reset(CcaTimeline *tl)
{
	memset(tl->buckets, 0, sizeof *tl->buckets * tl->n_buckets);
	g_array_set_size(tl->ooms, 0);
	tl->n_ooms = 0;
	tl->has_time = false;
	tl->peak_reserved = 0;
	tl->peak_index = 0;
	memset(&tl->figures, 0, sizeof tl->figures);
}

static void
collect_observer(void *data, uint64_t index, const CcaEvent *ev, const CcaAllocator *alloc)
{
	Collect *c = data;
	CcaTimeline *tl = c->tl;
	if ((int64_t)index <= c->last_index) {
		timeline_reset(tl);
	}
	c->last_index = (int64_t)index;
	const CcaStats *st = cca_allocator_stats(alloc);
	int64_t v[CCA_SERIES_COUNT] = {
		st->reserved_bytes[CCA_STAT_ALL].current,
		st->allocated_bytes[CCA_STAT_ALL].current,
		st->active_bytes[CCA_STAT_ALL].current,
	};
	uint64_t n = tl->n_events ? tl->n_events : 1;
	uint64_t bi = index < n ? index * tl->n_buckets / n : tl->n_buckets - 1;
	CcaTimelineBucket *b = &tl->buckets[bi];
	if (b->n == 0) {
		memcpy(b->first, v, sizeof v);
		memcpy(b->min, v, sizeof v);
		memcpy(b->max, v, sizeof v);
		b->i_first = index;
		b->t_first = ev->time_us;
	}
	for (int s = 0; s < CCA_SERIES_COUNT; s++) {
		if (v[s] < b->min[s])
			b->min[s] = v[s];
		if (v[s] > b->max[s])
			b->max[s] = v[s];
	}
	memcpy(b->last, v, sizeof v);
	b->i_last = index;
	b->t_last = ev->time_us;
	b->n++;
	if (ev->time_us != CCA_TIME_NONE) {
		if (!tl->has_time || ev->time_us < tl->t_min)
			tl->t_min = ev->time_us;
		if (!tl->has_time || ev->time_us > tl->t_max)
			tl->t_max = ev->time_us;
		tl->has_time = true;
	}
	if (cca_figures_observe(&tl->figures, index, ev, alloc) & CCA_FIGURES_RESERVED_PEAK) {
		tl->peak_reserved = tl->figures.reserved_peak.reserved;
		tl->peak_index = tl->figures.reserved_peak.index;
	}
	if (c->oom_pending) {
		c->oom_pending = false;
		tl->n_ooms++;
		if (tl->ooms->len < CCA_TIMELINE_MAX_OOMS) {
			CcaTimelineOom o = {
				.index = index,
				.time_us = ev->time_us,
				.reserved = (uint64_t)v[CCA_SERIES_RESERVED],
				.size = ev->action == CCA_ACTION_OOM ||
							ev->action == CCA_ACTION_ALLOC
						? ev->size
						: c->oom_size,
				.recorded = ev->action == CCA_ACTION_OOM,
			};
			g_array_append_val(tl->ooms, o);
		}
	}
	tl->allowed_maximum = cca_allocator_allowed_maximum(alloc);
}

static void
collect_model(void *data, uint64_t cause, const CcaEvent *trace, const CcaEvent *ev)
{
	Collect *c = data;
	if (ev->action == CCA_ACTION_OOM) {
		c->oom_pending = true;
		c->oom_size = ev->size;
	}
}

gboolean
cca_timeline_collect(const CcaSnapshot *snap, const CcaReplayOptions *options, uint32_t max_buckets,
		     CcaTimeline *tl, GError **error)
{
	memset(tl, 0, sizeof *tl);
	int d = options->device;
	tl->n_events = d >= 0 && d < snap->n_devices ? snap->n_events[d] : 0;
	uint64_t nb = max_buckets ? max_buckets : 1;
	if (tl->n_events && tl->n_events < nb)
		nb = tl->n_events;
	tl->n_buckets = (uint32_t)nb;
	tl->buckets = g_new0(CcaTimelineBucket, tl->n_buckets);
	tl->ooms = g_array_new(FALSE, FALSE, sizeof(CcaTimelineOom));
	tl->device_memory = options->capacity_set ? options->device_memory : 0;
	Collect c = {.tl = tl, .last_index = -1};
	CcaReplayOptions opt = *options;
	opt.observer = collect_observer;
	opt.observer_data = &c;
	opt.on_model_event = collect_model;
	opt.on_model_event_data = &c;
	if (!cca_replay_run(snap, &opt, &tl->result, error)) {
		cca_timeline_clear(tl);
		return FALSE;
	}
	return TRUE;
}

void
cca_timeline_clear(CcaTimeline *tl)
{
	g_free(tl->buckets);
	if (tl->ooms)
		g_array_free(tl->ooms, TRUE);
	cca_replay_result_clear(&tl->result);
	memset(tl, 0, sizeof *tl);
}
