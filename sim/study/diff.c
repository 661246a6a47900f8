/* diff.c - where two replays' reserved memory parts.
 *
 * Models nothing new: it watches two ordinary replays through the
 * engine's observer.  Each replay's reserved bytes are recorded after
 * every trace entry the engine hands the observer (entries it consumes
 * inside another, such as a free_completed right after its
 * free_requested, carry the previous value); the first index at which the
 * two carried values differ is the first difference.  The same replay
 * takes the allocator's state whenever reserved memory reaches a new peak
 * (at most once per cudaMalloc or page map), so the state at the peak
 * entry is at hand when the replay ends: one replay per side.
 */
#include "config.h"

#include "diff.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "event_cursor.h"
#include "plan.h"
#include "figures.h"
#include "json.h"
#include "rules.h"
#include "number.h"
#include "size.h"
#include "text.h"

typedef struct {
	uint64_t index;
	uint64_t reserved;
} Sample;

/* Observer of a side's replay: the reserved timeline, and the state at
 * the first entry with the peak reserved bytes. */
typedef struct {
	GArray *samples;    /* Sample */
	GArray *state;	    /* CcaStateSegment, from cca_allocator_state() */
	CcaFigures figures; /* the peak moments (figures.h) */
} Timeline;

static void
timeline_observe(void *data, uint64_t index, const CcaEvent *event, const CcaAllocator *alloc)
{
	Timeline *t = data;
	Sample s = {index, cca_allocator_reserved(alloc)};
	cca_figures_observe(&t->figures, index, event, alloc);
	g_array_append_val(t->samples, s);
}

/* Observer of the second replay: the state at the reserved peak the first
 * found (copied once, however often the peak rose). */
static void
timeline_take(void *data, uint64_t index, const CcaEvent *event, const CcaAllocator *alloc)
{
	Timeline *t = data;
	(void)event;
	if (index == t->figures.reserved_peak.index && !t->state)
		t->state = cca_allocator_state(alloc);
}

/* Replays one side; leaves its timeline in *SAMPLES and its state at the
 * peak in *STATE (from a second replay stopped there, from the same
 * plan). */
static gboolean
diff_side(const CcaSnapshot *snap, const CcaReplayOptions *opt, CcaDiffSide *side, GArray **samples,
	  GArray **state, GError **error)
{
	CcaReplayOptions o = *opt;
	g_autoptr(CcaPlan) own_plan = NULL;
	if (!o.plan) {
		own_plan =
			cca_plan_new(snap, opt->device, opt->pytorch_version, opt->rewind, error);
		if (!own_plan)
			return FALSE;
		o.plan = own_plan;
	}
	/* its decisions by address counted in its one replay, for its bounds
	 * (timing.h), as replay's */
	o.count_address_ties = true;
	Timeline t = {.samples = g_array_new(FALSE, FALSE, sizeof(Sample))};
	o.observer = timeline_observe;
	o.observer_data = &t;
	*samples = t.samples;
	if (!cca_replay_run(snap, &o, &side->result, error))
		return FALSE;
	if (t.figures.reserved_peak.seen) {
		CcaReplayResult again;
		o.observer = timeline_take;
		o.stop_after = t.figures.reserved_peak.index + 1;
		if (!cca_replay_run(snap, &o, &again, error)) {
			cca_allocator_state_free(t.state);
			return FALSE;
		}
		cca_replay_result_clear(&again);
	}
	side->events_seen = t.samples->len;
	side->peak_reserved = t.figures.reserved_peak.reserved;
	side->peak_event = t.figures.reserved_peak.index;
	if (t.samples->len)
		side->final_reserved =
			g_array_index(t.samples, Sample, t.samples->len - 1).reserved;
	*state = t.state ? t.state : g_array_new(FALSE, TRUE, sizeof(CcaStateSegment));
	for (guint i = 0; i < (*state)->len; i++) {
		const CcaStateSegment *seg = &g_array_index(*state, CcaStateSegment, i);
		side->peak_segments++;
		for (size_t b = 0; b < seg->n_blocks; b++) {
			if (seg->blocks[b].state == CCA_BLOCK_INACTIVE)
				side->peak_free += seg->blocks[b].size;
			else
				side->peak_live += seg->blocks[b].size;
		}
	}
	return TRUE;
}

/* The first index where the carried reserved values differ. */
static void
first_difference(CcaDiff *diff, GArray *sa, GArray *sb)
{
	guint i = 0, j = 0;
	uint64_t va = 0, vb = 0;
	while (i < sa->len || j < sb->len) {
		uint64_t ia = i < sa->len ? g_array_index(sa, Sample, i).index : UINT64_MAX;
		uint64_t ib = j < sb->len ? g_array_index(sb, Sample, j).index : UINT64_MAX;
		uint64_t at = MIN(ia, ib);
		if (ia == at)
			va = g_array_index(sa, Sample, i++).reserved;
		if (ib == at)
			vb = g_array_index(sb, Sample, j++).reserved;
		if (va != vb) {
			diff->differs = true;
			diff->first_event = at;
			diff->reserved_a = va;
			diff->reserved_b = vb;
			return;
		}
	}
}

/* Reads entry INDEX of device DEVICE of SNAP into *EV. */
static gboolean
read_event(const CcaSnapshot *snap, int device, uint64_t index, CcaEvent *ev)
{
	g_autoptr(CcaEventCursor) cursor = cca_event_cursor_new(snap, device);
	for (uint64_t i = 0; cca_event_cursor_next(cursor, ev, NULL); i++)
		if (i == index)
			return TRUE;
	return FALSE;
}

/* ------------------------------------------------------------ groups */

static CcaDiffGroup *
group_of(GHashTable *map, GArray *groups, uint64_t size)
{
	gpointer slot;
	if (g_hash_table_lookup_extended(map, &size, NULL, &slot))
		return &g_array_index(groups, CcaDiffGroup, GPOINTER_TO_UINT(slot));
	CcaDiffGroup g = {.size = size};
	g_array_append_val(groups, g);
	uint64_t *key = g_new(uint64_t, 1);
	*key = size;
	g_hash_table_insert(map, key, GUINT_TO_POINTER(groups->len - 1));
	return &g_array_index(groups, CcaDiffGroup, groups->len - 1);
}

static void
add_state(GArray *segments, GArray *requests, GHashTable *seg_map, GHashTable *req_map,
	  const GArray *state, bool b_side)
{
	for (guint i = 0; i < state->len; i++) {
		const CcaStateSegment *seg = &g_array_index(state, CcaStateSegment, i);
		CcaDiffGroup *g = group_of(seg_map, segments, seg->total_size);
		uint64_t free_bytes = 0;
		for (size_t k = 0; k < seg->n_blocks; k++) {
			const CcaStateBlock *blk = &seg->blocks[k];
			if (blk->state == CCA_BLOCK_INACTIVE) {
				free_bytes += blk->size;
				continue;
			}
			CcaDiffGroup *r = group_of(req_map, requests, blk->requested_size);
			if (b_side) {
				r->count_b++;
				r->bytes_b += blk->size;
			} else {
				r->count_a++;
				r->bytes_a += blk->size;
			}
		}
		if (b_side) {
			g->count_b++;
			g->bytes_b += seg->total_size;
			g->free_b += free_bytes;
		} else {
			g->count_a++;
			g->bytes_a += seg->total_size;
			g->free_a += free_bytes;
		}
	}
}

static uint64_t
abs_diff(uint64_t a, uint64_t b)
{
	return a > b ? a - b : b - a;
}

static gint
compare_groups(gconstpointer pa, gconstpointer pb)
{
	const CcaDiffGroup *a = pa, *b = pb;
	uint64_t da = abs_diff(a->bytes_a, a->bytes_b), db = abs_diff(b->bytes_a, b->bytes_b);
	if (da != db)
		return da > db ? -1 : 1;
	return a->size < b->size ? -1 : a->size > b->size;
}

/* Drops groups that are the same on both sides, then sorts. */
static void
finish_groups(GArray *groups)
{
	guint k = 0;
	for (guint i = 0; i < groups->len; i++) {
		const CcaDiffGroup *g = &g_array_index(groups, CcaDiffGroup, i);
		if (g->count_a != g->count_b || g->bytes_a != g->bytes_b || g->free_a != g->free_b)
			g_array_index(groups, CcaDiffGroup, k++) = *g;
	}
	g_array_set_size(groups, k);
	g_array_sort(groups, compare_groups);
}

/* ---------------------------------------------------- program, marks */

/* One mark of a trace: a user annotation placed at a trace entry. */
typedef struct {
	const char *name; /* the snapshot's string */
	guint occurrence; /* of NAME, from 1 */
	uint64_t index;	  /* first entry at or after its time */
	int64_t time_us;
} Mark;

static gint
compare_marks(gconstpointer pa, gconstpointer pb)
{
	const Mark *a = pa, *b = pb;
	return a->time_us < b->time_us ? -1 : a->time_us > b->time_us;
}

/* One read of device DEVICE of SNAP: the histogram of its allocation
 * requests by (size, stream number) into HIST (key: a g_strdup'd
 * "size/stream", value: count), their number, and its marks (Mark, by
 * time, each placed at an entry). */
static gboolean
read_program(const CcaSnapshot *snap, int device, GHashTable *hist, uint64_t *requests,
	     GArray *marks, GError **error)
{
	GHashTable *streams = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
	GHashTable *seen = g_hash_table_new(g_str_hash, g_str_equal); /* name -> count */
	for (guint i = 0; i < snap->annotations->len; i++) {
		const CcaAnnotation *an = &g_array_index(snap->annotations, CcaAnnotation, i);
		const char *stage = cca_snapshot_string(snap, an->stage);
		const char *name = cca_snapshot_string(snap, an->name);
		if (an->device != device || !stage || strcmp(stage, "START") != 0 || !name ||
		    g_str_has_prefix(name, "ccasim:") || an->time_us == CCA_TIME_NONE)
			continue;
		guint n = GPOINTER_TO_UINT(g_hash_table_lookup(seen, name)) + 1;
		g_hash_table_insert(seen, (gpointer)name, GUINT_TO_POINTER(n));
		Mark m = {name, n, 0, an->time_us};
		g_array_append_val(marks, m);
	}
	g_hash_table_destroy(seen);
	g_array_sort(marks, compare_marks);
	*requests = 0;
	g_autoptr(CcaEventCursor) cursor = cca_event_cursor_new(snap, device);
	CcaEvent ev;
	uint64_t index = 0;
	guint next_mark = 0;
	gboolean ok = TRUE;
	while ((ok = cca_event_cursor_next(cursor, &ev, error)) && ev.action != CCA_ACTION_COUNT) {
		for (; next_mark < marks->len && ev.time_us != CCA_TIME_NONE &&
		       g_array_index(marks, Mark, next_mark).time_us <= ev.time_us;
		     next_mark++)
			g_array_index(marks, Mark, next_mark).index = index;
		index++;
		if (ev.action != CCA_ACTION_ALLOC)
			continue;
		gpointer rank;
		if (!g_hash_table_lookup_extended(streams, &ev.stream, NULL, &rank)) {
			uint64_t *key = g_new(uint64_t, 1);
			*key = ev.stream;
			rank = GUINT_TO_POINTER(g_hash_table_size(streams));
			g_hash_table_insert(streams, key, rank);
		}
		char *key = g_strdup_printf("%" G_GUINT64_FORMAT "/%u", ev.size,
					    GPOINTER_TO_UINT(rank));
		gpointer count = g_hash_table_lookup(hist, key);
		g_hash_table_replace(hist, key, GSIZE_TO_POINTER(GPOINTER_TO_SIZE(count) + 1));
		(*requests)++;
	}
	for (; next_mark < marks->len; next_mark++) /* after the last entry */
		g_array_index(marks, Mark, next_mark).index = index;
	g_hash_table_destroy(streams);
	return ok || !(error && *error);
}

/* Reserved bytes carried just before entry INDEX in SAMPLES. */
static uint64_t
reserved_before(GArray *samples, uint64_t index)
{
	guint lo = 0, hi = samples->len; /* first sample with .index >= INDEX */
	while (lo < hi) {
		guint mid = lo + (hi - lo) / 2;
		if (g_array_index(samples, Sample, mid).index < index)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? g_array_index(samples, Sample, lo - 1).reserved : 0;
}

/* Fills DIFF's program similarity and mark alignment from the two reads. */
static gboolean
compare_programs(CcaDiff *diff, const CcaSnapshot *snap_a, int dev_a, const CcaSnapshot *snap_b,
		 int dev_b, GArray *sa, GArray *sb, GError **error)
{
	GHashTable *ha = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	GHashTable *hb = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	GArray *ma = g_array_new(FALSE, TRUE, sizeof(Mark));
	GArray *mb = g_array_new(FALSE, TRUE, sizeof(Mark));
	gboolean ok = read_program(snap_a, dev_a, ha, &diff->requests_a, ma, error) &&
		      read_program(snap_b, dev_b, hb, &diff->requests_b, mb, error);
	if (ok) {
		uint64_t common = 0;
		GHashTableIter it;
		gpointer key, value;
		g_hash_table_iter_init(&it, ha);
		while (g_hash_table_iter_next(&it, &key, &value))
			common += MIN(GPOINTER_TO_SIZE(value),
				      GPOINTER_TO_SIZE(g_hash_table_lookup(hb, key)));
		uint64_t most = MAX(diff->requests_a, diff->requests_b);
		diff->similarity = most ? (double)common / (double)most : 1.0;
		diff->marks_a = ma->len;
		diff->marks_b = mb->len;
		for (guint i = 0; i < ma->len; i++) {
			const Mark *a = &g_array_index(ma, Mark, i);
			const Mark *b = NULL;
			for (guint j = 0; j < mb->len && !b; j++) {
				const Mark *c = &g_array_index(mb, Mark, j);
				if (c->occurrence == a->occurrence && strcmp(c->name, a->name) == 0)
					b = c;
			}
			if (!b)
				continue;
			diff->marks_paired++;
			uint64_t ra = reserved_before(sa, a->index);
			uint64_t rb = reserved_before(sb, b->index);
			if (ra != rb && !diff->mark_differs) {
				diff->mark_differs = true;
				diff->mark_name = g_strdup(a->name);
				diff->mark_occurrence = a->occurrence;
				diff->mark_event_a = a->index;
				diff->mark_event_b = b->index;
				diff->mark_reserved_a = ra;
				diff->mark_reserved_b = rb;
			}
		}
	}
	g_hash_table_destroy(ha);
	g_hash_table_destroy(hb);
	g_array_free(ma, TRUE);
	g_array_free(mb, TRUE);
	return ok;
}

/* Adds the notes on the settings OPT replays SNAP under (its --config, or
 * the recorded ones) to NOTES. */
static void
add_notes(const CcaSnapshot *snap, const CcaReplayOptions *opt, GPtrArray *notes)
{
	if (opt->settings) {
		cca_settings_add_notes(opt->settings, notes);
		return;
	}
	CcaSettings recorded;
	cca_settings_init(&recorded);
	recorded.pytorch_version = opt->pytorch_version;
	if (cca_plan_start_settings(snap, opt->device, &recorded, NULL))
		cca_settings_add_notes(&recorded, notes);
	cca_settings_clear(&recorded);
}

gboolean
cca_diff_run(const CcaSnapshot *snap_a, const CcaReplayOptions *opt_a, const CcaSnapshot *snap_b,
	     const CcaReplayOptions *opt_b, CcaDiff *diff, GError **error)
{
	memset(diff, 0, sizeof *diff);
	diff->segments = g_array_new(FALSE, TRUE, sizeof(CcaDiffGroup));
	diff->requests = g_array_new(FALSE, TRUE, sizeof(CcaDiffGroup));
	diff->notes = g_ptr_array_new_with_free_func(g_free);
	add_notes(snap_a, opt_a, diff->notes);
	add_notes(snap_b, opt_b, diff->notes);
	GArray *sa = NULL, *sb = NULL, *state_a = NULL, *state_b = NULL;
	gboolean ok = diff_side(snap_a, opt_a, &diff->a, &sa, &state_a, error) &&
		      diff_side(snap_b, opt_b, &diff->b, &sb, &state_b, error) &&
		      cca_timing_bound(snap_a, opt_a, &diff->a.result, &diff->a.timing, error) &&
		      cca_timing_bound(snap_b, opt_b, &diff->b.result, &diff->b.timing, error);
	diff->two_traces = snap_a != snap_b;
	diff->similarity = 1.0;
	if (ok)
		ok = compare_programs(diff, snap_a, opt_a->device, snap_b, opt_b->device, sa, sb,
				      error);
	if (ok) {
		first_difference(diff, sa, sb);
		if (diff->differs) {
			read_event(snap_a, opt_a->device, diff->first_event, &diff->event_a);
			diff->have_event_b = read_event(snap_b, opt_b->device, diff->first_event,
							&diff->event_b);
		}
		GHashTable *seg_map =
			g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
		GHashTable *req_map =
			g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
		add_state(diff->segments, diff->requests, seg_map, req_map, state_a, false);
		add_state(diff->segments, diff->requests, seg_map, req_map, state_b, true);
		g_hash_table_destroy(seg_map);
		g_hash_table_destroy(req_map);
		finish_groups(diff->segments);
		finish_groups(diff->requests);
	}
	if (sa)
		g_array_free(sa, TRUE);
	if (sb)
		g_array_free(sb, TRUE);
	cca_allocator_state_free(state_a);
	cca_allocator_state_free(state_b);
	return ok;
}

void
cca_diff_clear(CcaDiff *diff)
{
	cca_replay_result_clear(&diff->a.result);
	cca_replay_result_clear(&diff->b.result);
	cca_timing_clear(&diff->a.timing);
	cca_timing_clear(&diff->b.timing);
	if (diff->segments)
		g_array_free(diff->segments, TRUE);
	if (diff->requests)
		g_array_free(diff->requests, TRUE);
	if (diff->notes)
		g_ptr_array_unref(diff->notes);
	g_free(diff->mark_name);
	memset(diff, 0, sizeof *diff);
}

/* ---------------------------------------------------------- printing */

/* "+1.00 MiB", "-512.00 KiB", "0 bytes" */
static const char *
signed_size(int64_t d, char buf[40])
{
	char s[32];
	if (d == 0) {
		g_strlcpy(buf, "0 bytes", 40);
		return buf;
	}
	g_snprintf(buf, 40, "%c%s", d < 0 ? '-' : '+',
		   cca_size_format(d < 0 ? (uint64_t)-d : (uint64_t)d, s));
	return buf;
}

static void
describe_event(GString *out, const CcaEvent *ev)
{
	char a[32];
	g_string_append_printf(out, "%s of %s on stream %" G_GUINT64_FORMAT,
			       cca_event_action_name(ev->action), cca_size_format(ev->size, a),
			       ev->stream);
}

/* What a side that is a window of its run (it starts mid-run) covers. */
#define DIFF_WINDOW_NOTE                                                                        \
	"a window of the run (the trace starts mid-run): its peak and counts cover the window " \
	"alone, from the state the recording had when it opened"

static void
print_side(GString *out, const char *name, const char *label, const CcaDiffSide *s)
{
	char a[32], b[32], c[32];
	g_string_append_printf(
		out, "%s: %s%s\n", name, label,
		cca_rules_for(s->result.pytorch_version)->unvalidated
			? ", unvalidated rules (modelled from source, doc/versions.md)"
			: "");
	if (s->result.start_reconstructed)
		g_string_append(out, "   " DIFF_WINDOW_NOTE "\n");
	g_string_append_printf(out,
			       "   peak reserved %s after event %" G_GUINT64_FORMAT
			       ": %s in live blocks, %s cached free, %" G_GUINT64_FORMAT
			       " segments\n",
			       cca_size_format(s->peak_reserved, a), s->peak_event,
			       cca_size_format(s->peak_live, b), cca_size_format(s->peak_free, c),
			       s->peak_segments);
	g_string_append_printf(out,
			       "   %" G_GINT64_FORMAT " cudaMalloc, %" G_GINT64_FORMAT
			       " cudaFree, %" G_GINT64_FORMAT " retries, %" G_GINT64_FORMAT
			       " OOMs%s",
			       s->result.stats.num_device_alloc, s->result.stats.num_device_free,
			       s->result.stats.num_alloc_retries, s->result.stats.num_ooms,
			       s->result.start_reconstructed ? " within the window" : "");
	if (s->result.oom_before_window)
		g_string_append(out, "; out of memory before the window (its start does not fit)");
	else if (s->result.stopped_by_oom)
		g_string_append_printf(out, "; stopped by an OOM at event %" G_GUINT64_FORMAT,
				       s->result.oom_event);
	g_string_append_c(out, '\n');
	if (cca_timing_why(&s->timing)) {
		/* replay's bounds of the figures above (timing.h) */
		g_string_append_printf(out, "   bounded by %s: ", cca_timing_why(&s->timing));
		gsize len = out->len;
		cca_timing_append_headline_ranges(&s->timing, out);
		if (out->len == len)
			g_string_append(out, "none of these figures varies");
		g_string_append(out, "; the segments and blocks at the peak are the recorded "
				     "timing's\n");
	}
}

static void
print_groups(GString *out, const GArray *groups, guint top, bool segments)
{
	char a[32], b[32], c[32];
	char d[40];
	guint n = MIN(groups->len, top);
	if (n == 0) {
		g_string_append(out, "   (no difference)\n");
		return;
	}
	g_string_append_printf(out, "   %-14s %22s %22s %14s%s\n",
			       segments ? "segment size" : "request size", "A", "B", "B - A",
			       segments ? "   cached free A / B" : "");
	for (guint i = 0; i < n; i++) {
		const CcaDiffGroup *g = &g_array_index(groups, CcaDiffGroup, i);
		g_autofree char *ca = g_strdup_printf("%" G_GUINT64_FORMAT " x = %s", g->count_a,
						      cca_size_format(g->bytes_a, a));
		g_autofree char *cb = g_strdup_printf("%" G_GUINT64_FORMAT " x = %s", g->count_b,
						      cca_size_format(g->bytes_b, b));
		g_string_append_printf(out, "   %-14s %22s %22s %14s", cca_size_format(g->size, c),
				       ca, cb,
				       signed_size((int64_t)g->bytes_b - (int64_t)g->bytes_a, d));
		if (segments) {
			char e[32], f[32];
			g_string_append_printf(out, "   %s / %s", cca_size_format(g->free_a, e),
					       cca_size_format(g->free_b, f));
		}
		g_string_append_c(out, '\n');
	}
	if (groups->len > n)
		g_string_append_printf(out, "   ... %u more sizes differ\n", groups->len - n);
}

/* The lines on two traces: how alike their programs are, and the first
 * annotation at which reserved memory differs. */
static void
print_program(GString *out, const CcaDiff *diff)
{
	char a[32], b[32];
	if (!diff->two_traces)
		return;
	if (diff->similarity >= CCA_DIFF_SAME_PROGRAM)
		g_string_append_printf(
			out,
			"program: the same: %.1f %% of the allocation requests match "
			"by size and stream (A %" G_GUINT64_FORMAT ", B %" G_GUINT64_FORMAT
			" requests)\n",
			100.0 * diff->similarity, diff->requests_a, diff->requests_b);
	else
		g_string_append_printf(
			out,
			"warning: the traces look like different programs: only "
			"%.1f %% of the allocation requests match by size and stream "
			"(A %" G_GUINT64_FORMAT ", B %" G_GUINT64_FORMAT
			" requests); events are compared by index\n",
			100.0 * diff->similarity, diff->requests_a, diff->requests_b);
	if (diff->marks_paired == 0) {
		if (diff->marks_a || diff->marks_b)
			g_string_append_printf(out,
					       "annotations: none in common (A %u, B %u): events "
					       "are aligned by index\n",
					       diff->marks_a, diff->marks_b);
		return;
	}
	g_string_append_printf(out, "annotations: %u paired by name (A %u, B %u); ",
			       diff->marks_paired, diff->marks_a, diff->marks_b);
	if (!diff->mark_differs) {
		g_string_append(out, "reserved memory is the same at each\n");
		return;
	}
	g_autofree char *name = cca_text_display(diff->mark_name, -1, 80);
	g_string_append_printf(out,
			       "reserved first differs at \"%s\" #%u (event %" G_GUINT64_FORMAT
			       " in A, %" G_GUINT64_FORMAT " in B): A reserves %s, B %s\n",
			       name, diff->mark_occurrence, diff->mark_event_a, diff->mark_event_b,
			       cca_size_format(diff->mark_reserved_a, a),
			       cca_size_format(diff->mark_reserved_b, b));
}

/* The comparison without the gate (cca_diff_print_text()). */
static void
print_comparison(const CcaDiff *diff, const CcaDiffReport *report, GString *out)
{
	char a[32], b[32];
	char d[40], e[40], f[40];
	guint top = report->top ? report->top : 10;
	print_side(out, "A", report->label_a, &diff->a);
	print_side(out, "B", report->label_b, &diff->b);
	for (guint i = 0; diff->notes && i < diff->notes->len; i++)
		g_string_append_printf(out, "note: %s\n",
				       (const char *)g_ptr_array_index(diff->notes, i));
	print_program(out, diff);
	if (!diff->differs) {
		g_string_append(out, "\nReserved memory is the same after every event: the two "
				     "replays do not differ in reserved memory.\n");
		return;
	}
	g_string_append_printf(out, "\nfirst difference: after event %" G_GUINT64_FORMAT " (",
			       diff->first_event);
	describe_event(out, &diff->event_a);
	if (diff->have_event_b && (diff->event_b.action != diff->event_a.action ||
				   diff->event_b.size != diff->event_a.size)) {
		g_string_append(out, " in A, ");
		describe_event(out, &diff->event_b);
		g_string_append(out, " in B");
	}
	g_string_append_printf(out, "): A reserves %s, B %s\n",
			       cca_size_format(diff->reserved_a, a),
			       cca_size_format(diff->reserved_b, b));
	int64_t dp = (int64_t)diff->b.peak_reserved - (int64_t)diff->a.peak_reserved;
	g_string_append_printf(
		out, "peak difference: B - A = %s (live blocks %s, cached free %s)\n",
		signed_size(dp, d),
		signed_size((int64_t)diff->b.peak_live - (int64_t)diff->a.peak_live, e),
		signed_size((int64_t)diff->b.peak_free - (int64_t)diff->a.peak_free, f));
	g_string_append(out, "\nsegments at each peak, by size (largest differences first):\n");
	print_groups(out, diff->segments, top, true);
	g_string_append(
		out,
		"\nlive blocks at each peak, by requested size (largest differences first):\n");
	print_groups(out, diff->requests, top, false);
}

static json_t *
groups_json(const GArray *groups, bool segments)
{
	json_t *list = json_array();
	for (guint i = 0; i < groups->len; i++) {
		const CcaDiffGroup *g = &g_array_index(groups, CcaDiffGroup, i);
		json_t *o = json_object();
		json_object_set_new(o, "size", cca_json_uint(g->size));
		json_object_set_new(o, "count_a", cca_json_uint(g->count_a));
		json_object_set_new(o, "count_b", cca_json_uint(g->count_b));
		json_object_set_new(o, "bytes_a", cca_json_uint(g->bytes_a));
		json_object_set_new(o, "bytes_b", cca_json_uint(g->bytes_b));
		if (segments) {
			json_object_set_new(o, "free_a", cca_json_uint(g->free_a));
			json_object_set_new(o, "free_b", cca_json_uint(g->free_b));
		}
		json_array_append_new(list, o);
	}
	return list;
}

static json_t *
side_json(const char *label, const CcaDiffSide *s)
{
	const CcaStats *st = &s->result.stats;
	json_t *o = json_object();
	json_object_set_new(o, "label", cca_json_string(label));
	json_object_set_new(o, "peak_event", cca_json_uint(s->peak_event));
	json_object_set_new(o, "peak_reserved", cca_json_uint(s->peak_reserved));
	json_object_set_new(o, "peak_live", cca_json_uint(s->peak_live));
	json_object_set_new(o, "peak_free", cca_json_uint(s->peak_free));
	json_object_set_new(o, "peak_segments", cca_json_uint(s->peak_segments));
	json_object_set_new(o, "figures",
			    cca_figures_to_json_in(&s->result.figures, &s->result.stats,
						   s->result.start_reconstructed));
	/* a window cannot know the run's peaks and counts (replay's
	 * memory_stats: null); peak_* above and the window's own counts under
	 * "window" are what it saw */
	bool window = s->result.start_reconstructed;
	static const struct {
		const char *key, *stat;
	} keys[] = {
		{"reserved_bytes_peak", "reserved_bytes.all.peak"},
		{"num_device_alloc", "num_device_alloc"},
		{"num_device_free", "num_device_free"},
		{"num_alloc_retries", "num_alloc_retries"},
		{"num_ooms", "num_ooms"},
	};
	const int64_t values[] = {st->reserved_bytes[CCA_STAT_ALL].peak, st->num_device_alloc,
				  st->num_device_free, st->num_alloc_retries, st->num_ooms};
	json_t *seen = json_object();
	for (guint k = 0; k < G_N_ELEMENTS(keys); k++) {
		bool known = !window || cca_stats_known_in_window(keys[k].stat);
		json_object_set_new(o, keys[k].key, known ? json_integer(values[k]) : json_null());
		json_object_set_new(seen, keys[k].key, json_integer(values[k]));
	}
	if (window) {
		json_t *w = json_object();
		json_object_set_new(w, "assumes", cca_json_string(DIFF_WINDOW_NOTE));
		json_object_set_new(w, "within", seen);
		json_object_set_new(w, "start_reserved", cca_json_uint(s->result.start_reserved));
		json_object_set_new(w, "oom_before_window",
				    cca_json_bool(s->result.oom_before_window));
		json_object_set_new(o, "window", w);
	} else {
		json_decref(seen);
		json_object_set_new(o, "window", json_null());
	}
	json_object_set_new(o, "stopped_by_oom", cca_json_bool(s->result.stopped_by_oom));
	cca_timing_add_run_json(&s->timing, o);
	json_object_set_new(o, "unvalidated",
			    cca_json_bool(cca_rules_for(s->result.pytorch_version)->unvalidated));
	return o;
}

/* ---------------------------------------------------------------- the gate */

/* The metrics a condition may name, in the order --fail-if's errors list
 * them; BYTES: a size (thresholds take units). */
static const struct {
	const char *name;
	bool bytes;
} gate_metrics[] = {
	{"peak_reserved", true},     {"peak_allocated", true},	      {"peak_live", true},
	{"peak_free", true},	     {"peak_segments", false},	      {"final_reserved", true},
	{"num_device_alloc", false}, {"num_device_free", false},      {"num_alloc_retries", false},
	{"num_ooms", false},	     {"num_sync_all_streams", false},
};

/* Metric M of side S. */
static double
gate_metric(const CcaDiffSide *s, int m)
{
	const CcaStats *st = &s->result.stats;
	switch (m) {
	case 0:
		return (double)s->peak_reserved;
	case 1:
		return (double)st->allocated_bytes[CCA_STAT_ALL].peak;
	case 2:
		return (double)s->peak_live;
	case 3:
		return (double)s->peak_free;
	case 4:
		return (double)s->peak_segments;
	case 5:
		return (double)s->final_reserved;
	case 6:
		return (double)st->num_device_alloc;
	case 7:
		return (double)st->num_device_free;
	case 8:
		return (double)st->num_alloc_retries;
	case 9:
		return (double)st->num_ooms;
	default:
		return (double)st->num_sync_all_streams;
	}
}

/* The memory_stats() key of each metric, whose bounds bound it (timing.h);
 * NULL: a figure at the reserved peak that no key gives. */
static const char *const gate_keys[] = {
	"reserved_bytes.all.peak",
	"allocated_bytes.all.peak",
	NULL,
	NULL,
	NULL,
	"reserved_bytes.all.current",
	"num_device_alloc",
	"num_device_free",
	"num_alloc_retries",
	"num_ooms",
	"num_sync_all_streams",
};

/* Metric M of side S over every run its bounds hold: [*LO, *HI]; TRUE
 * when S has bounds of it. *UNBOUNDED: S has bounds, but none of M. */
static bool
gate_range(const CcaDiffSide *s, int m, double *lo, double *hi, bool *unbounded)
{
	G_STATIC_ASSERT(G_N_ELEMENTS(gate_keys) == G_N_ELEMENTS(gate_metrics));
	*lo = *hi = gate_metric(s, m);
	const char *key = gate_keys[m];
	const CcaTimingBound *b = key ? cca_timing_lookup(&s->timing, key) : NULL;
	if (b) {
		*lo = (double)b->lo;
		*hi = (double)b->hi;
		return true;
	}
	if (s->timing.bounds && s->timing.bounds->len > 0 &&
	    (!key || (s->result.start_reconstructed && !cca_stats_known_in_window(key))))
		*unbounded = true;
	return false;
}

/* Did side S run out of memory (stopped by it, or past it)? */
static bool
gate_oom(const CcaDiffSide *s)
{
	return s->result.stopped_by_oom || s->result.stats.num_ooms > 0;
}

/* Whether side S runs out of memory in every run its bounds hold (*LO)
 * and in some (*HI); TRUE when S has bounds of num_ooms. */
static bool
gate_oom_range(const CcaDiffSide *s, double *lo, double *hi)
{
	*lo = *hi = gate_oom(s);
	const CcaTimingBound *b = cca_timing_lookup(&s->timing, "num_ooms");
	if (!b)
		return false;
	*lo = b->lo > 0;
	*hi = b->hi > 0 || s->result.stopped_by_oom;
	return true;
}

/* The change of kind KIND from A to B ((B - A) / A in percent: from 0, any
 * growth is infinitely many percent). */
static double
gate_change(CcaDiffGateKind kind, double a, double b)
{
	switch (kind) {
	case CCA_DIFF_GATE_B:
		return b;
	case CCA_DIFF_GATE_CHANGE:
		return b - a;
	default:
		return a != 0 ? 100.0 * (b - a) / a : b == 0 ? 0.0 : b > 0 ? INFINITY : -INFINITY;
	}
}

/* Whether CHANGE OP VALUE. */
static bool
gate_compare(int op, double change, double value)
{
	switch (op) {
	case '>':
		return change > value;
	case 'G':
		return change >= value;
	case '<':
		return change < value;
	default:
		return change <= value;
	}
}

static gboolean
gate_fail(const char *text, const char *why, GError **error)
{
	g_autofree char *shown = cca_text_display(text, -1, 80);
	GString *names = g_string_new("oom");
	for (guint i = 0; i < G_N_ELEMENTS(gate_metrics); i++)
		g_string_append_printf(names, ", %s", gate_metrics[i].name);
	g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
		    "--fail-if '%s': %s (e.g. peak_reserved>+5%%, num_device_alloc>+10, "
		    "peak_reserved>20G, oom; metrics: %s; see 'ccasim diff --help')",
		    shown, why, names->str);
	g_string_free(names, TRUE);
	return FALSE;
}

/* Parses one condition TEXT (trimmed, not empty) into C. */
static gboolean
gate_parse_one(const char *text, CcaDiffCondition *c, GError **error)
{
	memset(c, 0, sizeof *c);
	if (strcmp(text, "oom") == 0) {
		c->metric = -1;
		c->text = g_strdup(text);
		return TRUE;
	}
	const char *op = strpbrk(text, "<>");
	if (!op)
		return gate_fail(text, "no comparison (> >= < <=)", error);
	g_autofree char *name = g_strstrip(g_strndup(text, (gsize)(op - text)));
	int metric = -1;
	for (guint i = 0; i < G_N_ELEMENTS(gate_metrics); i++)
		if (strcmp(name, gate_metrics[i].name) == 0)
			metric = (int)i;
	if (metric < 0)
		return gate_fail(text, *name ? "unknown metric" : "no metric before the comparison",
				 error);
	c->op = op[1] == '=' ? (op[0] == '>' ? 'G' : 'L') : op[0];
	g_autofree char *value = g_strstrip(g_strdup(op + (op[1] == '=' ? 2 : 1)));
	char *v = value;
	int sign = 0;
	if (*v == '+' || *v == '-') {
		sign = *v == '-' ? -1 : 1;
		v++;
	}
	gsize len = strlen(v);
	if (len == 0)
		return gate_fail(text, "no value after the comparison", error);
	if (v[len - 1] == '%') {
		v[len - 1] = '\0';
		char *end = NULL;
		double pct = g_ascii_strtod(v, &end);
		if (!g_ascii_isdigit(*v) || end == v || *end || !isfinite(pct))
			return gate_fail(text, "a percentage is a number and %", error);
		c->kind = CCA_DIFF_GATE_PERCENT;
		c->value = sign < 0 ? -pct : pct;
	} else {
		uint64_t n = 0;
		if (gate_metrics[metric].bytes) {
			g_autoptr(GError) local = NULL;
			if (!cca_size_parse(v, NULL, &n, &local))
				return gate_fail(text, local->message, error);
		} else if (!cca_number_parse_u64(v, UINT64_MAX, &n)) {
			return gate_fail(text, "a count is a whole number", error);
		}
		c->kind = sign ? CCA_DIFF_GATE_CHANGE : CCA_DIFF_GATE_B;
		c->value = sign < 0 ? -(double)n : (double)n;
	}
	c->metric = metric;
	c->text = g_strdup(text);
	return TRUE;
}

gboolean
cca_diff_conditions_parse(const char *text, GArray *conditions, GError **error)
{
	g_auto(GStrv) parts = g_strsplit(text, ",", -1);
	guint before = conditions->len;
	for (char **p = parts; *p; p++) {
		g_strstrip(*p);
		CcaDiffCondition c;
		if (!**p) {
			gate_fail(text, "an empty condition", error);
		} else if (gate_parse_one(*p, &c, error)) {
			g_array_append_val(conditions, c);
			continue;
		}
		for (guint i = before; i < conditions->len; i++)
			cca_diff_condition_clear(&g_array_index(conditions, CcaDiffCondition, i));
		g_array_set_size(conditions, before);
		return FALSE;
	}
	return TRUE;
}

void
cca_diff_condition_clear(CcaDiffCondition *condition)
{
	g_clear_pointer(&condition->text, g_free);
}

bool
cca_diff_condition_eval(const CcaDiffCondition *c, const CcaDiff *diff, CcaDiffVerdict *v)
{
	memset(v, 0, sizeof *v);
	if (c->metric < 0) {
		v->a = gate_oom(&diff->a);
		v->b = gate_oom(&diff->b);
		v->change = v->b;
		v->bounded = gate_oom_range(&diff->a, &v->a_lo, &v->a_hi) |
			     gate_oom_range(&diff->b, &v->b_lo, &v->b_hi);
		v->change_lo = v->b_lo;
		v->change_hi = v->b_hi;
		/* B runs out in every run */
		v->holds = v->b_lo != 0;
		v->depends = !v->holds && v->b_hi != 0;
		return v->holds;
	}
	v->a = gate_metric(&diff->a, c->metric);
	v->b = gate_metric(&diff->b, c->metric);
	v->change = gate_change(c->kind, v->a, v->b);
	v->bounded = gate_range(&diff->a, c->metric, &v->a_lo, &v->a_hi, &v->unbounded) |
		     gate_range(&diff->b, c->metric, &v->b_lo, &v->b_hi, &v->unbounded);
	/* every end: the change is monotone in each side's value, so its
	 * extremes are at the corners */
	const double as[2] = {v->a_lo, v->a_hi}, bs[2] = {v->b_lo, v->b_hi};
	bool all = true, some = false;
	for (int i = 0; i < 2; i++)
		for (int j = 0; j < 2; j++) {
			double x = gate_change(c->kind, as[i], bs[j]);
			if ((i == 0 && j == 0) || x < v->change_lo)
				v->change_lo = x;
			if ((i == 0 && j == 0) || x > v->change_hi)
				v->change_hi = x;
			bool h = gate_compare(c->op, x, c->value);
			all &= h;
			some |= h;
		}
	v->holds = all;
	v->depends = some && !all;
	return v->holds;
}

/* Appends metric M's value X in words: a size for byte metrics. */
static void
gate_value(GString *out, int m, double x)
{
	char a[32];
	if (m >= 0 && gate_metrics[m].bytes)
		g_string_append(out, cca_size_format((uint64_t)x, a));
	else
		g_string_append_printf(out, "%.0f", x);
}

/* The ranges of a bounded verdict V of C: "; bounded: A LO .. HI, B ..,
 * change ..". */
static void
print_gate_bounds(GString *out, const CcaDiffCondition *c, const CcaDiffVerdict *v)
{
	g_string_append(out, "; bounded: A ");
	gate_value(out, c->metric, v->a_lo);
	g_string_append(out, " .. ");
	gate_value(out, c->metric, v->a_hi);
	g_string_append(out, ", B ");
	gate_value(out, c->metric, v->b_lo);
	g_string_append(out, " .. ");
	gate_value(out, c->metric, v->b_hi);
	if (c->kind == CCA_DIFF_GATE_PERCENT) {
		g_string_append(out, ", change ");
		for (int k = 0; k < 2; k++) {
			double x = k ? v->change_hi : v->change_lo;
			if (isfinite(x))
				g_string_append_printf(out, "%+.1f %%", x);
			else
				g_string_append(out, x > 0 ? "+inf" : "-inf");
			if (!k)
				g_string_append(out, " .. ");
		}
	} else if (c->kind == CCA_DIFF_GATE_CHANGE) {
		char d[40], e[40];
		if (gate_metrics[c->metric].bytes)
			g_string_append_printf(out, ", change %s .. %s",
					       signed_size((int64_t)v->change_lo, d),
					       signed_size((int64_t)v->change_hi, e));
		else
			g_string_append_printf(out, ", change %+.0f .. %+.0f", v->change_lo,
					       v->change_hi);
	}
}

static void
print_gate(const CcaDiffReport *report, GString *out)
{
	if (!report->n_conditions)
		return;
	g_string_append(out, "\ngate (--fail-if):\n");
	for (guint i = 0; i < report->n_conditions; i++) {
		const CcaDiffCondition *c = &report->conditions[i];
		const CcaDiffVerdict *v = &report->verdicts[i];
		g_autofree char *shown = cca_text_display(c->text, -1, 80);
		g_string_append_printf(out, "   %s: %s: ", shown,
				       v->holds	    ? "HOLDS"
				       : v->depends ? "does not hold at every end of the bounds"
						    : "does not hold");
		if (c->metric < 0) {
			g_string_append_printf(out, "A %s, B %s",
					       v->a ? "ran out of memory" : "fits",
					       v->b ? "ran out of memory" : "fits");
			if (v->bounded)
				g_string_append_printf(
					out, " under the recorded timing; B %s",
					v->b_lo	  ? "runs out under every timing"
					: v->b_hi ? "runs out under some timing (depends)"
						  : "fits under every timing");
			g_string_append_c(out, '\n');
			continue;
		}
		g_string_append(out, "A ");
		gate_value(out, c->metric, v->a);
		g_string_append(out, ", B ");
		gate_value(out, c->metric, v->b);
		if (c->kind == CCA_DIFF_GATE_PERCENT && isfinite(v->change)) {
			g_string_append_printf(out, ", change %+.1f %%", v->change);
		} else if (c->kind == CCA_DIFF_GATE_PERCENT) {
			g_string_append(out, ", change from 0");
		} else if (c->kind == CCA_DIFF_GATE_CHANGE) {
			char d[40];
			if (gate_metrics[c->metric].bytes)
				g_string_append_printf(out, ", change %s",
						       signed_size((int64_t)v->change, d));
			else
				g_string_append_printf(out, ", change %+.0f", v->change);
		}
		if (v->bounded)
			print_gate_bounds(out, c, v);
		else if (v->unbounded)
			g_string_append(out, " (the recorded timing's: this figure has no bounds)");
		g_string_append_c(out, '\n');
	}
}

void
cca_diff_print_text(const CcaDiff *diff, const CcaDiffReport *report, GString *out)
{
	print_comparison(diff, report, out);
	print_gate(report, out);
}

/* [LO, HI] of condition C as JSON (booleans for oom, a real for a
 * CHANGE in percent, null for an infinite one), or null when not
 * BOUNDED. */
static json_t *
gate_pair(const CcaDiffCondition *c, bool bounded, double lo, double hi, bool change)
{
	if (!bounded)
		return json_null();
	json_t *pair = json_array();
	for (int k = 0; k < 2; k++) {
		double x = k ? hi : lo;
		json_array_append_new(pair, c->metric < 0  ? cca_json_bool(x != 0)
					    : !isfinite(x) ? json_null()
					    : change && c->kind == CCA_DIFF_GATE_PERCENT
						    ? json_real(x)
						    : json_integer((json_int_t)x));
	}
	return pair;
}

/* REPORT's conditions and verdicts as JSON, or null without any. */
static json_t *
gate_json(const CcaDiffReport *report)
{
	if (!report->n_conditions)
		return json_null();
	json_t *list = json_array();
	bool failed = false;
	for (guint i = 0; i < report->n_conditions; i++) {
		const CcaDiffCondition *c = &report->conditions[i];
		const CcaDiffVerdict *v = &report->verdicts[i];
		json_t *o = json_object();
		json_object_set_new(o, "condition", cca_json_string(c->text));
		json_object_set_new(
			o, "metric",
			cca_json_string(c->metric < 0 ? "oom" : gate_metrics[c->metric].name));
		json_object_set_new(o, "compare",
				    cca_json_string(c->metric < 0		      ? "b"
						    : c->kind == CCA_DIFF_GATE_B      ? "b"
						    : c->kind == CCA_DIFF_GATE_CHANGE ? "change"
										      : "percent"));
		if (c->metric < 0) {
			json_object_set_new(o, "a", cca_json_bool(v->a != 0));
			json_object_set_new(o, "b", cca_json_bool(v->b != 0));
			json_object_set_new(o, "change", json_null());
		} else {
			json_object_set_new(o, "a", json_integer((json_int_t)v->a));
			json_object_set_new(o, "b", json_integer((json_int_t)v->b));
			json_object_set_new(o, "change",
					    !isfinite(v->change) ? json_null()
					    : c->kind == CCA_DIFF_GATE_PERCENT
						    ? json_real(v->change)
						    : json_integer((json_int_t)v->change));
		}
		json_object_set_new(o, "holds", cca_json_bool(v->holds));
		/* the ranges over every run the sides' bounds hold (null: the
		 * values above are the only ones) */
		json_object_set_new(o, "bounded", cca_json_bool(v->bounded));
		json_object_set_new(o, "depends", cca_json_bool(v->depends));
		json_object_set_new(o, "unbounded", cca_json_bool(v->unbounded));
		json_object_set_new(o, "a_bounds",
				    gate_pair(c, v->bounded, v->a_lo, v->a_hi, false));
		json_object_set_new(o, "b_bounds",
				    gate_pair(c, v->bounded, v->b_lo, v->b_hi, false));
		json_object_set_new(o, "change_bounds",
				    gate_pair(c, v->bounded, v->change_lo, v->change_hi, true));
		failed |= v->holds;
		json_array_append_new(list, o);
	}
	json_t *gate = json_object();
	json_object_set_new(gate, "failed", cca_json_bool(failed));
	json_object_set_new(gate, "conditions", list);
	return gate;
}

void
cca_diff_print_json(const CcaDiff *diff, const CcaDiffReport *report, GString *out)
{
	json_t *o = json_object();
	json_object_set_new(o, "a", side_json(report->label_a, &diff->a));
	json_object_set_new(o, "b", side_json(report->label_b, &diff->b));
	json_object_set_new(o, "notes", cca_json_strings(diff->notes));
	json_object_set_new(o, "differs", cca_json_bool(diff->differs));
	json_t *first = json_null();
	if (diff->differs) {
		first = json_object();
		json_object_set_new(first, "event", cca_json_uint(diff->first_event));
		json_object_set_new(first, "action",
				    cca_json_string(cca_event_action_name(diff->event_a.action)));
		json_object_set_new(first, "size", cca_json_uint(diff->event_a.size));
		json_object_set_new(first, "stream", cca_json_uint(diff->event_a.stream));
		json_object_set_new(first, "reserved_a", cca_json_uint(diff->reserved_a));
		json_object_set_new(first, "reserved_b", cca_json_uint(diff->reserved_b));
	}
	json_object_set_new(o, "first_difference", first);
	json_t *peak = json_object();
	json_object_set_new(
		peak, "reserved",
		json_integer((int64_t)diff->b.peak_reserved - (int64_t)diff->a.peak_reserved));
	json_object_set_new(peak, "live",
			    json_integer((int64_t)diff->b.peak_live - (int64_t)diff->a.peak_live));
	json_object_set_new(peak, "free",
			    json_integer((int64_t)diff->b.peak_free - (int64_t)diff->a.peak_free));
	json_object_set_new(peak, "segments", groups_json(diff->segments, true));
	json_object_set_new(peak, "requests", groups_json(diff->requests, false));
	json_object_set_new(o, "peak_difference", peak);
	json_t *program = json_object();
	json_object_set_new(program, "two_traces", cca_json_bool(diff->two_traces));
	json_object_set_new(program, "similarity", json_real(diff->similarity));
	json_object_set_new(program, "same_program",
			    cca_json_bool(diff->similarity >= CCA_DIFF_SAME_PROGRAM));
	json_object_set_new(program, "requests_a", cca_json_uint(diff->requests_a));
	json_object_set_new(program, "requests_b", cca_json_uint(diff->requests_b));
	json_object_set_new(o, "program", program);
	json_t *marks = json_object();
	json_object_set_new(marks, "marks_a", json_integer(diff->marks_a));
	json_object_set_new(marks, "marks_b", json_integer(diff->marks_b));
	json_object_set_new(marks, "paired", json_integer(diff->marks_paired));
	json_t *md = json_null();
	if (diff->mark_differs) {
		md = json_object();
		json_object_set_new(md, "name", cca_json_string(diff->mark_name));
		json_object_set_new(md, "occurrence", json_integer(diff->mark_occurrence));
		json_object_set_new(md, "event_a", cca_json_uint(diff->mark_event_a));
		json_object_set_new(md, "event_b", cca_json_uint(diff->mark_event_b));
		json_object_set_new(md, "reserved_a", cca_json_uint(diff->mark_reserved_a));
		json_object_set_new(md, "reserved_b", cca_json_uint(diff->mark_reserved_b));
	}
	json_object_set_new(marks, "first_difference", md);
	json_object_set_new(o, "annotations", marks);
	json_object_set_new(o, "gate", gate_json(report));
	cca_json_append(out, o);
}
