/* stepview.c - one trace entry at a time, for teaching.
 *
 * A step view is one replay that stops looking at the model after the
 * entry asked for: the explainer rides along to say why a request needed
 * new memory, the model's own entries for the step are kept, and the
 * allocator state is copied where CcaStepAt says (stepview.h): after AT
 * when the observer hears of it, else after the last entry before AT when
 * the model does nothing in between, else after the entry AT was handled
 * with.  Whether the model did anything between the last entry and AT, the
 * engine's before_request calls tell: each request and each empty_cache()
 * it hands the model.  An empty_cache() before AT empties the cache before
 * it is known whether a request follows up to AT, so the state before it
 * is copied and held until that is known.
 */
#include "config.h"

#include "stepview.h"
#include "event_cursor.h"

#include <string.h>

#include "explain.h"
#include "lab.h"
#include "pytorch.h"
#include "rules.h"
#include "stack.h"
#include "size.h"

/* ------------------------------------------------- where AT is shown */

void
cca_stepview_at_init(CcaStepAt *t, uint64_t at)
{
	memset(t, 0, sizeof *t);
	t->at = at;
}

static CcaStepAtAction
step_at_take(CcaStepAt *t, uint64_t shown)
{
	t->shown = shown;
	t->done = true;
	return CCA_STEP_AT_TAKE;
}

CcaStepAtAction
cca_stepview_at_before(CcaStepAt *t, uint64_t index, const CcaEvent *event)
{
	if (t->done || t->request || !t->have_last)
		return CCA_STEP_AT_WAIT;
	bool emptying = event->action == CCA_ACTION_SEGMENT_FREE ||
			event->action == CCA_ACTION_SEGMENT_UNMAP;
	if (!emptying && index <= t->at) {
		/* AT is handled with this request, or after it */
		t->request = true;
		t->held = false;
		return CCA_STEP_AT_WAIT;
	}
	if (index > t->at) {		    /* the model did nothing up to AT since LAST */
		if (t->held && t->released) /* the empty_cache() at AT: the state now */
			return step_at_take(t, t->at);
		if (t->held) {
			t->done = true;
			return CCA_STEP_AT_KEEP;
		}
		return step_at_take(t, t->last);
	}
	/* an empty_cache() at or before AT: the state after LAST is lost
	 * unless copied now; whether it is the answer, what follows tells */
	if (t->held)
		return CCA_STEP_AT_WAIT;
	t->held = true;
	t->released = false;
	t->shown = t->last;
	return CCA_STEP_AT_HOLD;
}

void
cca_stepview_at_model(CcaStepAt *t, uint64_t cause, const CcaEvent *model)
{
	if (!t->done && t->held && cause <= t->at &&
	    (model->action == CCA_ACTION_SEGMENT_FREE || model->action == CCA_ACTION_SEGMENT_UNMAP))
		t->released = true;
}

CcaStepAtAction
cca_stepview_at_observe(CcaStepAt *t, uint64_t index)
{
	if (t->done)
		return CCA_STEP_AT_WAIT;
	if (index < t->at) {
		t->last = index;
		t->have_last = true;
		t->request = t->held = false;
		return CCA_STEP_AT_WAIT;
	}
	if (index == t->at || t->request || !t->have_last)
		return step_at_take(t, index);
	if (t->held && t->released) /* the empty_cache() at AT: the state now */
		return step_at_take(t, t->at);
	if (t->held) {
		t->done = true;
		return CCA_STEP_AT_KEEP;
	}
	/* nothing acted since LAST: the state now is the state then */
	return step_at_take(t, t->last);
}

CcaStepAtAction
cca_stepview_at_finish(CcaStepAt *t)
{
	if (t->done || t->request || !t->have_last)
		return CCA_STEP_AT_WAIT;
	if (t->held && t->released)
		return step_at_take(t, t->at);
	if (t->held) {
		t->done = true;
		return CCA_STEP_AT_KEEP;
	}
	return step_at_take(t, t->last);
}

/* ---------------------------------------------------------- the view */

typedef struct {
	const CcaStepParams *params;
	CcaStepAt where; /* where AT is shown */
	CcaExplainer *x;
	GArray *events;		 /* CcaEvent: model entries since the last handled entry */
	GArray *last_events;	 /* CcaEvent: those of the last handled entry */
	CcaRequestRecord record; /* of the last handled entry, when have_record */
	bool have_record;
	/* the last entry the observer heard of before AT, its record */
	CcaEvent last_entry;
	CcaRequestRecord last_record;
	bool last_has_record;
	/* the copy, taken where WHERE said */
	bool captured;	/* final */
	bool at_finish; /* taken when the replay ended, before reaching AT */
	uint64_t shown;
	CcaEvent entry;
	GArray *shown_events; /* CcaEvent: the model's entries for SHOWN */
	CcaRequestRecord shown_record;
	bool shown_has_record;
	GArray *state; /* NULL until a copy was taken */
	CcaStats stats;
	uint64_t allowed_maximum;
	uint64_t large_page;	/* an expandable large-pool page (large_segment_size) */
	CcaEvent release_entry; /* the last release entry at or before AT */
	bool release_is_pool;	/* a lab's release_mempool line made it */
	const CcaSnapshot *snap;
} Step;

static void
step_record(void *data, const CcaRequestRecord *record, const CcaAllocator *alloc)
{
	Step *s = data;
	s->record = *record;
	s->have_record = true;
}

/* Copies the state now into S, as after entry INDEX (EV), whose model
 * entries were EVENTS and request record (when HAS_RECORD) RECORD,
 * replacing a copy held. */
static void
step_copy(Step *s, uint64_t index, const CcaEvent *ev, const GArray *events,
	  const CcaRequestRecord *record, bool has_record, const CcaAllocator *alloc)
{
	cca_allocator_state_free(s->state);
	if (s->shown_events)
		g_array_free(s->shown_events, TRUE);
	s->shown = index;
	s->entry = *ev;
	s->shown_events = g_array_copy((GArray *)events);
	s->state = cca_allocator_state(alloc);
	s->stats = *cca_allocator_stats(alloc);
	s->allowed_maximum = cca_allocator_allowed_maximum(alloc);
	s->large_page = cca_allocator_settings(alloc)->large_segment_size;
	s->shown_record = *record;
	s->shown_has_record = has_record;
}

/* Acts on what S->where said: a copy as after the last entry before AT,
 * or as after the entry INDEX (EV) just handled. */
static void
step_act(Step *s, CcaStepAtAction action, uint64_t index, const CcaEvent *ev,
	 const CcaAllocator *alloc)
{
	switch (action) {
	case CCA_STEP_AT_WAIT:
		return;
	case CCA_STEP_AT_KEEP:
		s->captured = true;
		return;
	case CCA_STEP_AT_TAKE:
	case CCA_STEP_AT_HOLD:
		if (action == CCA_STEP_AT_TAKE && s->where.released &&
		    s->where.shown == s->where.at && index != s->where.at) {
			/* the releases of the empty_cache() at AT, applied since */
			CcaRequestRecord none = {0};
			step_copy(s, s->where.at, &s->release_entry, s->events, &none, false,
				  alloc);
		} else if (s->where.shown == index)
			step_copy(s, index, ev, s->events, &s->record, s->have_record, alloc);
		else
			step_copy(s, s->where.shown, &s->last_entry, s->last_events,
				  &s->last_record, s->last_has_record, alloc);
		s->captured = action == CCA_STEP_AT_TAKE;
		return;
	}
}

static void
step_before(void *data, uint64_t index, const CcaEvent *ev, const CcaAllocator *alloc)
{
	Step *s = data;
	if (s->captured)
		return;
	if ((ev->action == CCA_ACTION_SEGMENT_FREE || ev->action == CCA_ACTION_SEGMENT_UNMAP) &&
	    index <= s->where.at) {
		s->release_entry = *ev;
		const char *line = cca_lab_event_line(s->snap, ev);
		s->release_is_pool = line && strstr(line, ": release_mempool ") != NULL;
	}
	step_act(s, cca_stepview_at_before(&s->where, index, ev), UINT64_MAX, NULL, alloc);
	if (!s->captured)
		cca_explain_before(s->x, index, ev, alloc);
}

static void
step_observer(void *data, uint64_t index, const CcaEvent *ev, const CcaAllocator *alloc)
{
	Step *s = data;
	if (s->captured)
		return;
	s->have_record = false;
	cca_explain_observe(s->x, index, ev, alloc);
	step_act(s, cca_stepview_at_observe(&s->where, index), index, ev, alloc);
	if (s->captured || index >= s->params->at)
		return;
	s->last_entry = *ev;
	s->last_record = s->record;
	s->last_has_record = s->have_record;
	GArray *t = s->last_events;
	s->last_events = s->events;
	s->events = t;
	g_array_set_size(s->events, 0);
}

static void
step_model(void *data, uint64_t cause, const CcaEvent *trace, const CcaEvent *ev)
{
	Step *s = data;
	if (s->captured)
		return;
	cca_stepview_at_model(&s->where, cause, ev);
	cca_explain_model_event(s->x, cause, trace, ev);
	g_array_append_val(s->events, *ev);
}

/* The replay ended before the observer heard of AT or of anything after
 * it (checked once the replay's result is known: it may have stopped
 * early). */
static void
step_finish(void *data, const CcaAllocator *alloc)
{
	Step *s = data;
	if (s->captured)
		return;
	CcaStepAtAction action = cca_stepview_at_finish(&s->where);
	step_act(s, action, UINT64_MAX, NULL, alloc);
	s->at_finish = s->captured;
}

static const char *
sz(uint64_t bytes, char buf[32])
{
	return cca_size_format(bytes, buf);
}

static void
describe_entry(GString *out, const CcaEvent *ev)
{
	char a[32], b[32];
	g_string_append_printf(out, "%s", cca_event_action_name(ev->action));
	if (ev->action == CCA_ACTION_OOM)
		g_string_append_printf(out, " of %s (device_free %s)", sz(ev->size, a),
				       sz(ev->addr, b));
	else
		g_string_append_printf(out,
				       " 0x%" G_GINT64_MODIFIER "x, %s (%" G_GUINT64_FORMAT " B)",
				       ev->addr, sz(ev->size, a), ev->size);
	g_string_append_printf(out, " on stream %" G_GUINT64_FORMAT, ev->stream);
}

/* The block or segment of STATE that holds ADDR. */
static const CcaStateBlock *
find_block(GArray *state, uint64_t addr, const CcaStateSegment **seg)
{
	for (guint i = 0; i < state->len; i++) {
		const CcaStateSegment *s = &g_array_index(state, CcaStateSegment, i);
		if (addr < s->address || addr - s->address >= s->total_size)
			continue;
		*seg = s;
		for (size_t k = 0; k < s->n_blocks; k++)
			if (addr >= s->blocks[k].address &&
			    addr - s->blocks[k].address < s->blocks[k].size)
				return &s->blocks[k];
	}
	return NULL;
}

static bool
has_model(const Step *s, CcaAction action)
{
	for (guint i = 0; i < s->events->len; i++)
		if (g_array_index(s->events, CcaEvent, i).action == action)
			return true;
	return false;
}

static void
describe_free(GString *out, const Step *s)
{
	char a[32], b[32];
	const CcaEvent *ev = &s->entry;
	bool completed = has_model(s, CCA_ACTION_FREE_COMPLETED);
	/* the model's own address: in a what-if it may differ from the trace's */
	uint64_t addr = ev->addr;
	for (guint i = 0; i < s->events->len; i++) {
		const CcaEvent *m = &g_array_index(s->events, CcaEvent, i);
		if (m->action == CCA_ACTION_FREE_COMPLETED) {
			addr = m->addr;
			break;
		}
	}
	const CcaStateSegment *seg = NULL;
	const CcaStateBlock *blk = find_block(s->state, addr, &seg);
	if (ev->action == CCA_ACTION_FREE_REQUESTED && !completed) {
		g_string_append(out,
				"  The tensor was used on another stream (record_stream), so "
				"the block stays active_pending_free until that stream's work "
				"completes (a later free_completed): nobody can reuse it yet.\n");
		return;
	}
	if (!completed) {
		g_string_append(out, "  Nothing to do: the block was not pending.\n");
		return;
	}
	if (ev->action == CCA_ACTION_FREE_COMPLETED)
		g_string_append(out, "  The other stream's work has finished: the block");
	else
		g_string_append(out, "  The block");
	if (!blk) {
		bool released = has_model(s, CCA_ACTION_SEGMENT_FREE) ||
				has_model(s, CCA_ACTION_SEGMENT_UNMAP);
		g_string_append(out, released ? " returned to its pool and its segment was "
						"released.\n"
					      : " returned to its pool.\n");
		return;
	}
	if (cca_explain_private_pool(seg->pool_id))
		g_string_append_printf(out,
				       " returns to private pool (%" G_GINT64_FORMAT
				       ", %" G_GINT64_FORMAT ")'s",
				       seg->pool_id[0], seg->pool_id[1]);
	else
		g_string_append(out, " returns to the");
	g_string_append_printf(out,
			       " %s pool of stream %" G_GUINT64_FORMAT
			       "; merged with any free neighbours it is now a free block of %s "
			       "in a %s segment.\n",
			       seg->is_small ? "small" : "large", seg->stream, sz(blk->size, a),
			       sz(seg->total_size, b));
	if (seg->n_blocks == 1)
		g_string_append(
			out, seg->is_small
				     ? "  The whole segment is free again: empty_cache() or an "
				       "allocation that runs out can return it to the device.\n"
				     : "  The whole segment is free again: empty_cache(), garbage "
				       "collection or an allocation that runs out can return it to "
				       "the device.\n");
	else if (seg->is_expandable && blk->address + blk->size == seg->address + seg->total_size)
		g_string_append(
			out, "  It is the free tail of an expandable segment's mapped pages: a "
			     "larger request of this pool and stream grows it by mapping more "
			     "pages after it, and empty_cache() unmaps the whole pages inside it "
			     "(the rest of the reservation is address space, not memory).\n");
	else if (seg->is_expandable)
		g_string_append(out, "  Live blocks share this expandable segment's mapped pages: "
				     "the free block serves requests that fit in it, and "
				     "empty_cache() unmaps the whole pages inside it (none if it "
				     "holds no whole page).\n");
	else
		g_string_append(out,
				"  The segment still holds live blocks, so this free space "
				"can only serve requests that fit in it (fragmentation), and the "
				"segment cannot be released.\n");
}

static void
describe_fit(GString *out, const Step *s)
{
	char a[32], b[32], c[32];
	const CcaRequestWhy *w = &s->record.why;
	const CcaStateSegment *seg = NULL;
	const CcaStateBlock *blk = find_block(s->state, s->record.address, &seg);
	if (s->record.cascade_valid && cca_explain_private_pool(s->record.cascade.pool_id)) {
		g_autofree char *why = cca_explain_pool_reason(s->record.cascade.pool_id);
		g_string_append_printf(
			out,
			"  Served from the cache: the request rounds to %s (%" G_GUINT64_FORMAT
			" B). It went to %s; a cached block of that pool's %s pool "
			"served it (a private pool's blocks serve only its own "
			"requests).\n",
			sz(w->size, a), w->size, why, w->small_pool ? "small" : "large");
		if (blk && blk->size > w->size)
			g_string_append_printf(out,
					       "  It is handed out whole (%s more than needed).\n",
					       sz(blk->size - w->size, a));
		return;
	}
	g_string_append_printf(
		out,
		"  Served from the cache: the request rounds to %s (%" G_GUINT64_FORMAT
		" B); the smallest free block of the %s pool on stream %" G_GUINT64_FORMAT
		" that holds it (best fit) has %s.\n",
		sz(w->size, a), w->size, w->small_pool ? "small" : "large", w->stream,
		sz(w->candidate_size, b));
	if (s->record.cascade_valid)
		g_string_append(out, "  It went to the default pools: no capture of its stream and "
				     "no use_mem_pool region was underway (get_pool).\n");
	if (w->fitting_blocks > 1 && w->same_size > 1)
		g_string_append_printf(
			out,
			"  %u free blocks there could hold it; %u of them have that size, "
			"and the one at the lowest address wins (the free set is ordered "
			"by stream, size, address).\n",
			w->fitting_blocks, w->same_size);
	else if (w->fitting_blocks > 1)
		g_string_append_printf(out,
				       "  %u free blocks there could hold it; best fit takes the "
				       "smallest.\n",
				       w->fitting_blocks);
	if (blk && blk->size < w->candidate_size)
		g_string_append_printf(
			out,
			"  It is split: the request takes its first %s, the other %s "
			"stays free.\n",
			sz(blk->size, a), sz(w->candidate_size - blk->size, c));
	else if (blk && blk->size > w->size)
		g_string_append_printf(
			out,
			"  It is handed out whole (%s more than needed): large-pool "
			"blocks are split only when more than 1 MiB would remain (512 B "
			"under expandable_segments:True), and never at max_split_size or "
			"above.\n",
			sz(blk->size - w->size, a));
}

static void
describe_decision(GString *out, const Step *s, const CcaReplayResult *res)
{
	const CcaEvent *ev = &s->entry;
	g_string_append(out, "What the allocator did:\n");
	switch (ev->action) {
	case CCA_ACTION_ALLOC:
	case CCA_ACTION_OOM:
		if (!s->have_record) {
			g_string_append(out, "  (the request was skipped after an earlier OOM)\n");
		} else if (s->record.segments || s->record.oom) {
			cca_explain_append_request(out, &s->record, "  ");
			cca_explain_append_cascade(out, &s->record, "  ");
		} else {
			describe_fit(out, s);
		}
		break;
	case CCA_ACTION_FREE_REQUESTED:
	case CCA_ACTION_FREE_COMPLETED:
		describe_free(out, s);
		break;
	case CCA_ACTION_SNAPSHOT:
		g_string_append(out, "  Nothing: a _snapshot() call was recorded here.\n");
		break;
	default:
		if ((ev->action == CCA_ACTION_SEGMENT_FREE ||
		     ev->action == CCA_ACTION_SEGMENT_UNMAP) &&
		    (has_model(s, CCA_ACTION_SEGMENT_FREE) ||
		     has_model(s, CCA_ACTION_SEGMENT_UNMAP))) {
			if (s->release_is_pool)
				g_string_append(
					out,
					"  The program deleted a MemPool here: ~MemPool made its "
					"pool freeable (releasePool) and emptyCache(pool) "
					"synchronized and released that pool's wholly free cached "
					"segments, small ones first; the other pools keep theirs.\n");
			else
				g_string_append(
					out,
					"  The program released cached memory here (empty_cache(), "
					"or a MemPool's deletion, which releases only its own pool): "
					"release_cached_blocks synchronized the streams and released "
					"every wholly free cached segment of the default pools and of "
					"the freeable private pools, and unmapped the whole free "
					"pages of expandable segments.\n");
			break;
		}
		if (res->whatif)
			g_string_append(out,
					"  Nothing: this is the recorded run's own segment entry, "
					"which a what-if replay ignores.\n");
		else
			g_string_append(out,
					"  Nothing yet: this is the allocator's own output for the "
					"next request, which the model produces when it gets "
					"there.\n");
		break;
	}
	if (s->events->len) {
		g_string_append(out, "  Model entries:");
		for (guint i = 0; i < s->events->len; i++) {
			const CcaEvent *m = &g_array_index(s->events, CcaEvent, i);
			char a[32];
			g_string_append_printf(out, "%s %s %s", i ? ";" : "",
					       cca_event_action_name(m->action), sz(m->size, a));
		}
		g_string_append_c(out, '\n');
	}
}

/* In a what-if the trace's addresses are the recorded run's: names the
 * model's own address for ASKED when it differs. */
static void
describe_model_address(GString *out, const Step *s, const CcaEvent *asked)
{
	for (guint i = 0; i < s->events->len; i++) {
		const CcaEvent *m = &g_array_index(s->events, CcaEvent, i);
		if (m->action != asked->action || m->action == CCA_ACTION_OOM)
			continue;
		if (m->addr != asked->addr)
			g_string_append_printf(
				out,
				"  (that address is the recorded run's; in this what-if "
				"the model's block is at 0x%" G_GINT64_MODIFIER "x)\n",
				m->addr);
		return;
	}
}

static bool
touched(const Step *s, const CcaStateSegment *seg)
{
	for (guint i = 0; i < s->events->len; i++) {
		const CcaEvent *m = &g_array_index(s->events, CcaEvent, i);
		if (m->action != CCA_ACTION_OOM && m->addr >= seg->address &&
		    m->addr - seg->address < seg->total_size)
			return true;
	}
	return s->entry.action != CCA_ACTION_OOM && s->entry.addr >= seg->address &&
	       s->entry.addr - seg->address < seg->total_size;
}

/* One character per 1/WIDTH of SEG: the state holding most of its range
 * ('#' allocated, 'p' pending free, '.' free); in an expandable segment
 * of PAGE-byte pages, '|' where a page ends inside the column (the mapped
 * run starts on a page boundary). */
static void
segment_bar(GString *out, const CcaStateSegment *seg, guint width, uint64_t page)
{
	size_t k = 0;
	for (guint c = 0; c < width; c++) {
		uint64_t lo = seg->address + seg->total_size * c / width;
		uint64_t hi = seg->address + seg->total_size * (c + 1) / width;
		if (seg->is_expandable && page && c > 0 &&
		    (lo - seg->address) / page != (hi - 1 - seg->address) / page) {
			g_string_append_c(out, '|');
			continue;
		}
		if (seg->is_expandable && page && c > 0 && (lo - seg->address) % page == 0) {
			g_string_append_c(out, '|');
			continue;
		}
		uint64_t cover[3] = {0};
		while (k < seg->n_blocks && seg->blocks[k].address + seg->blocks[k].size <= lo)
			k++;
		for (size_t j = k; j < seg->n_blocks && seg->blocks[j].address < hi; j++) {
			uint64_t b_lo = MAX(lo, seg->blocks[j].address);
			uint64_t b_hi = MIN(hi, seg->blocks[j].address + seg->blocks[j].size);
			cover[seg->blocks[j].state] += b_hi - b_lo;
		}
		int best = 0;
		for (int t = 1; t < 3; t++)
			if (cover[t] > cover[best])
				best = t;
		g_string_append_c(out, "#p."[best == CCA_BLOCK_INACTIVE		  ? 2
					     : best == CCA_BLOCK_ACTIVE_ALLOCATED ? 0
										  : 1]);
	}
}

typedef struct {
	bool small;
	uint64_t stream;
	int64_t pool_id[2]; /* (0, 0): the default pools */
	uint32_t free_blocks;
	uint64_t free_bytes, largest;
	uint32_t pending;
} PoolRow;

static void
describe_state(GString *out, const Step *s, const CcaStepParams *params)
{
	char a[32], b[32], c[32], d[32];
	const CcaStats *st = &s->stats;
	g_string_append_printf(out,
			       "After it: reserved %s in %u segment%s, allocated %s, active %s, "
			       "requested %s",
			       sz((uint64_t)st->reserved_bytes[CCA_STAT_ALL].current, a),
			       s->state->len, s->state->len == 1 ? "" : "s",
			       sz((uint64_t)st->allocated_bytes[CCA_STAT_ALL].current, b),
			       sz((uint64_t)st->active_bytes[CCA_STAT_ALL].current, c),
			       sz((uint64_t)st->requested_bytes[CCA_STAT_ALL].current, d));
	if (s->allowed_maximum)
		g_string_append_printf(out, ", cap %s", sz(s->allowed_maximum, a));
	g_string_append(out, ".\n");

	/* pools: free blocks per (pool, stream) */
	GArray *rows = g_array_new(FALSE, TRUE, sizeof(PoolRow));
	for (guint i = 0; i < s->state->len; i++) {
		const CcaStateSegment *seg = &g_array_index(s->state, CcaStateSegment, i);
		PoolRow *row = NULL;
		for (guint r = 0; r < rows->len; r++) {
			PoolRow *x = &g_array_index(rows, PoolRow, r);
			if (x->small == seg->is_small && x->stream == seg->stream &&
			    x->pool_id[0] == seg->pool_id[0] && x->pool_id[1] == seg->pool_id[1])
				row = x;
		}
		if (!row) {
			PoolRow n = {.small = seg->is_small,
				     .stream = seg->stream,
				     .pool_id = {seg->pool_id[0], seg->pool_id[1]}};
			g_array_append_val(rows, n);
			row = &g_array_index(rows, PoolRow, rows->len - 1);
		}
		for (size_t k = 0; k < seg->n_blocks; k++) {
			const CcaStateBlock *blk = &seg->blocks[k];
			if (blk->state == CCA_BLOCK_INACTIVE) {
				row->free_blocks++;
				row->free_bytes += blk->size;
				row->largest = MAX(row->largest, blk->size);
			} else if (blk->state == CCA_BLOCK_ACTIVE_PENDING_FREE) {
				row->pending++;
			}
		}
	}
	g_string_append(out, "Pools (free blocks are cached for later requests of the same "
			     "pool and stream):\n");
	if (rows->len == 0)
		g_string_append(out, "  (empty: nothing reserved)\n");
	for (guint r = 0; r < rows->len; r++) {
		const PoolRow *x = &g_array_index(rows, PoolRow, r);
		if (cca_explain_private_pool(x->pool_id))
			g_string_append_printf(out,
					       "  private pool (%" G_GINT64_FORMAT
					       ", %" G_GINT64_FORMAT ")'s",
					       x->pool_id[0], x->pool_id[1]);
		else
			g_string_append(out, " ");
		g_string_append_printf(
			out,
			" %s pool, stream %" G_GUINT64_FORMAT ": %u free block%s, %s, largest %s",
			x->small ? "small" : "large", x->stream, x->free_blocks,
			x->free_blocks == 1 ? "" : "s", sz(x->free_bytes, a), sz(x->largest, b));
		if (x->pending)
			g_string_append_printf(out, "; %u pending free", x->pending);
		g_string_append_c(out, '\n');
	}
	g_array_free(rows, TRUE);

	guint width = params->bar_width >= 8 ? params->bar_width : 8;
	guint limit = params->max_segments ? params->max_segments : G_MAXUINT;
	g_string_append_printf(
		out, "Segments (* touched by this entry, listed first; then address order; "
		     "'#' allocated, 'p' pending free, '.' free, '|' a page boundary of "
		     "an expandable segment):\n");
	guint shown = 0, hidden = 0;
	for (int pass = 0; pass < 2; pass++)
		for (guint i = 0; i < s->state->len; i++) {
			const CcaStateSegment *seg = &g_array_index(s->state, CcaStateSegment, i);
			bool t = touched(s, seg);
			/* touched segments first claim the limit, then the rest in order */
			if (pass == 0 && !t)
				continue;
			if (pass == 1 && t)
				continue;
			if (shown >= limit) {
				hidden++;
				continue;
			}
			shown++;
			uint64_t used = 0, free = 0;
			for (size_t k = 0; k < seg->n_blocks; k++)
				if (seg->blocks[k].state == CCA_BLOCK_INACTIVE)
					free += seg->blocks[k].size;
				else
					used += seg->blocks[k].size;
			g_string_append_printf(out, " %c0x%012" G_GINT64_MODIFIER "x %10s %s |",
					       t ? '*' : ' ', seg->address, sz(seg->total_size, a),
					       seg->is_small ? "small" : "large");
			uint64_t page = cca_pytorch_expandable_page(seg->is_small, s->large_page);
			segment_bar(out, seg, width, page);
			g_string_append_printf(out, "| %zu block%s, %s used, %s free",
					       seg->n_blocks, seg->n_blocks == 1 ? "" : "s",
					       sz(used, b), sz(free, c));
			if (cca_explain_private_pool(seg->pool_id))
				g_string_append_printf(out,
						       "; private pool (%" G_GINT64_FORMAT
						       ", %" G_GINT64_FORMAT ")",
						       seg->pool_id[0], seg->pool_id[1]);
			if (seg->is_expandable && page)
				g_string_append_printf(
					out, "; %" G_GUINT64_FORMAT " mapped page%s of %s",
					seg->total_size / page,
					seg->total_size / page == 1 ? "" : "s", sz(page, a));
			g_string_append_c(out, '\n');
		}
	if (hidden)
		g_string_append_printf(out,
				       "  ... %u more segment%s (--max-segments 0 lists all)\n",
				       hidden, hidden == 1 ? "" : "s");
}

gboolean
cca_stepview_describe(const CcaSnapshot *snap, const CcaReplayOptions *options,
		      const CcaStepParams *params, GString *out, GError **error)
{
	int d = options->device;
	uint64_t n = d >= 0 && d < snap->n_devices ? snap->n_events[d] : 0;
	if (params->at >= n) {
		g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
			    "event %" G_GUINT64_FORMAT
			    " is past the trace's end (%" G_GUINT64_FORMAT " events)",
			    params->at, n);
		return FALSE;
	}
	Step s = {
		.params = params,
		.snap = snap,
		.events = g_array_new(FALSE, FALSE, sizeof(CcaEvent)),
		.last_events = g_array_new(FALSE, FALSE, sizeof(CcaEvent)),
	};
	cca_stepview_at_init(&s.where, params->at);
	s.x = cca_explain_new(step_record, &s);
	CcaReplayOptions opt = *options;
	opt.before_request = step_before;
	opt.before_request_data = &s;
	opt.observer = step_observer;
	opt.observer_data = &s;
	opt.on_model_event = step_model;
	opt.on_model_event_data = &s;
	opt.on_finish = step_finish;
	opt.on_finish_data = &s;
	/* nothing after AT shows: a partial replay */
	opt.stop_after = params->at + 1;
	CcaReplayResult res;
	gboolean ok = cca_replay_run(snap, &opt, &res, error);
	/* a copy held that nothing confirmed, or taken when the replay
	 * stopped early (it never got to AT) */
	if (s.state && (!s.captured || (ok && s.at_finish &&
					(res.stopped_by_oom || res.diverged_from_recording)))) {
		cca_allocator_state_free(g_steal_pointer(&s.state));
		g_array_free(g_steal_pointer(&s.shown_events), TRUE);
	}
	if (s.state) { /* what the copy saw */
		g_array_free(s.events, TRUE);
		s.events = g_steal_pointer(&s.shown_events);
		s.record = s.shown_record;
		s.have_record = s.shown_has_record;
	}
	if (ok) {
		/* the entry asked for, as the trace has it */
		g_autoptr(CcaEventCursor) cur = cca_event_cursor_new(snap, d);
		CcaEvent asked = {0}, first = {.time_us = CCA_TIME_NONE};
		for (uint64_t i = 0; i <= params->at; i++) {
			if (!cca_event_cursor_next(cur, &asked, NULL))
				break;
			if (i == 0)
				first = asked;
		}
		g_string_append_printf(out,
				       "Event %" G_GUINT64_FORMAT " of %" G_GUINT64_FORMAT ": ",
				       params->at, n);
		describe_entry(out, &asked);
		if (asked.time_us != CCA_TIME_NONE && first.time_us != CCA_TIME_NONE)
			g_string_append_printf(out, ", t = %.6f s",
					       (double)(asked.time_us - first.time_us) / 1e6);
		g_string_append_c(out, '\n');
		const char *lab_line = cca_lab_event_line(snap, &asked);
		if (lab_line)
			g_string_append_printf(out, "  made by %s\n", lab_line);
		if (cca_rules_for(res.pytorch_version)->unvalidated)
			g_string_append_printf(
				out,
				"  under PyTorch %u.%u's rules, unvalidated: modelled "
				"from source (doc/versions.md)\n",
				res.pytorch_version / 100, res.pytorch_version % 100);
		if (s.state && res.whatif && s.shown == params->at)
			describe_model_address(out, &s, &asked);
		if (asked.stack != CCA_ID_NONE) {
			g_string_append(out, "  from ");
			cca_stack_append(out, snap, asked.stack);
			g_string_append_c(out, '\n');
		}
		if (!s.state) {
			g_string_append(out,
					"The replay ended before this entry (an OOM stopped it; "
					"--keep-going goes on).\n");
		} else {
			if (s.shown != params->at)
				g_string_append_printf(out,
						       "(the engine handles it together with event "
						       "%" G_GUINT64_FORMAT
						       ": the state below is after "
						       "both)\n",
						       s.shown);
			if (s.shown != params->at &&
			    (s.entry.action != asked.action || s.entry.addr != asked.addr)) {
				g_string_append_printf(out, "Event %" G_GUINT64_FORMAT ": ",
						       s.shown);
				describe_entry(out, &s.entry);
				g_string_append_c(out, '\n');
			}
			describe_decision(out, &s, &res);
			describe_state(out, &s, params);
		}
		cca_replay_result_clear(&res);
	}
	cca_explain_free(s.x);
	g_array_free(s.events, TRUE);
	g_array_free(s.last_events, TRUE);
	if (s.shown_events)
		g_array_free(s.shown_events, TRUE);
	cca_allocator_state_free(s.state);
	return ok;
}

typedef struct {
	CcaExplainer *x;
	GArray *mallocs, *ooms;
} Index;

static void
index_record(void *data, const CcaRequestRecord *r, const CcaAllocator *alloc)
{
	Index *ix = data;
	if (r->segments && ix->mallocs)
		g_array_append_val(ix->mallocs, r->index);
	if (r->oom && ix->ooms)
		g_array_append_val(ix->ooms, r->index);
}

static void
index_before(void *data, uint64_t index, const CcaEvent *ev, const CcaAllocator *alloc)
{
	Index *ix = data;
	cca_explain_before(ix->x, index, ev, alloc);
}

static void
index_observer(void *data, uint64_t index, const CcaEvent *ev, const CcaAllocator *alloc)
{
	Index *ix = data;
	cca_explain_observe(ix->x, index, ev, alloc);
}

static void
index_model(void *data, uint64_t cause, const CcaEvent *trace, const CcaEvent *ev)
{
	Index *ix = data;
	cca_explain_model_event(ix->x, cause, trace, ev);
}

gboolean
cca_stepview_index(const CcaSnapshot *snap, const CcaReplayOptions *options, GArray *mallocs,
		   GArray *ooms, GError **error)
{
	Index ix = {.mallocs = mallocs, .ooms = ooms};
	ix.x = cca_explain_new(index_record, &ix);
	CcaReplayOptions opt = *options;
	opt.before_request = index_before;
	opt.before_request_data = &ix;
	opt.observer = index_observer;
	opt.observer_data = &ix;
	opt.on_model_event = index_model;
	opt.on_model_event_data = &ix;
	CcaReplayResult res;
	gboolean ok = cca_replay_run(snap, &opt, &res, error);
	if (ok)
		cca_replay_result_clear(&res);
	cca_explain_free(ix.x);
	return ok;
}
