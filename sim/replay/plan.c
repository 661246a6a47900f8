/* plan.c - one read of a trace that settles what a replay needs to know.
 *
 * The read checks each entry as the engine would (cca_check_walk_event()
 * and the free_requested rule), and tracks the trace's own live addresses
 * the way the engine's address map does without a rebuilt start: a
 * free_requested of an address not live is a free of a block the trace
 * never allocated, which says the trace started mid-run.
 */
#include "config.h"

#include "plan.h"
#include "event_cursor.h"

#include <string.h>

#include "addrmap.h"
#include "check.h"
#include "json.h"
#include "simdevice.h"

static gint
private_order(gconstpointer a, gconstpointer b)
{
	const CcaPlanPrivateSegment *x = a, *y = b;
	return x->address < y->address ? -1 : x->address > y->address;
}

/* A segment_alloc at ADDR, trace entry INDEX: if a private segment of the
 * final state starts there, the segment was (last) made then. */
static void
note_private_from(CcaPlan *p, uint64_t addr, uint64_t index)
{
	guint lo = 0, hi = p->private_segments->len;
	while (lo < hi) {
		guint mid = (lo + hi) / 2;
		CcaPlanPrivateSegment *ps =
			&g_array_index(p->private_segments, CcaPlanPrivateSegment, mid);
		if (addr < ps->address) {
			hi = mid;
		} else if (addr > ps->address) {
			lo = mid + 1;
		} else {
			ps->from = index;
			return;
		}
	}
}

/* ------------------------------------------ expandable reservations */

void
cca_plan_reservations_init(CcaPlanReservations *rs)
{
	memset(rs, 0, sizeof *rs);
	rs->live = g_array_new(FALSE, FALSE, sizeof(CcaPlanReservation));
	rs->released = g_array_new(FALSE, FALSE, sizeof(CcaPlanReservation));
}

void
cca_plan_reservations_clear(CcaPlanReservations *rs)
{
	g_clear_pointer(&rs->live, g_array_unref);
	g_clear_pointer(&rs->released, g_array_unref);
}

void
cca_plan_reservations_copy(CcaPlanReservations *dst, const CcaPlanReservations *src)
{
	*dst = *src;
	dst->live = g_array_copy(src->live);
	dst->released = g_array_copy(src->released);
}

/* The index in RS->live of the reservation whose [base, end] (END_IN) or
 * [base, end) holds ADDR; -1 if none. */
static int
reservation_at(const CcaPlanReservations *rs, uint64_t addr, bool end_in)
{
	for (guint i = 0; i < rs->live->len; i++) {
		const CcaPlanReservation *v = &g_array_index(rs->live, CcaPlanReservation, i);
		if (!v->is_segment && addr >= v->base &&
		    (addr < v->end || (end_in && addr == v->end)))
			return (int)i;
	}
	return -1;
}

/* The index in RS->live of the cudaMalloc segment at ADDR; -1 if none. */
static int
segment_at(const CcaPlanReservations *rs, uint64_t addr)
{
	for (guint i = 0; i < rs->live->len; i++) {
		const CcaPlanReservation *v = &g_array_index(rs->live, CcaPlanReservation, i);
		if (v->is_segment && v->base == addr)
			return (int)i;
	}
	return -1;
}

/* Notes in RS's burst the release of a small-pool (SMALL) or large-pool
 * reservation or segment: a pool releases its small blocks before its
 * large ones, so a large one before a small one is no pool's release. */
static void
burst_note_kind(CcaPlanReservations *rs, bool small)
{
	if (small && rs->saw_large)
		rs->not_pool = true;
	rs->saw_large = rs->saw_large || !small;
	cca_plan_burst_order_note_kind(&rs->order, small);
}

/* A segment_free EV in the burst being read: a whole segment the trace
 * made, released in the free set's (stream, size, address) order within
 * its kind, or no pool's release. */
static void
segments_free(CcaPlanReservations *rs, const CcaEvent *ev)
{
	int k = segment_at(rs, ev->addr);
	if (k < 0 || rs->saw_unmap) {
		rs->not_pool = true; /* made before the trace began */
		if (k >= 0)
			g_array_remove_index(rs->live, (guint)k);
		return;
	}
	CcaPlanReservation v = g_array_index(rs->live, CcaPlanReservation, k);
	g_array_remove_index(rs->live, (guint)k);
	const CcaPlanReservation *p = &rs->last_free;
	if (rs->saw_free && p->is_small == v.is_small &&
	    (p->stream > v.stream ||
	     (p->stream == v.stream && (p->end - p->base > v.end - v.base ||
					(p->end - p->base == v.end - v.base && p->base > v.base)))))
		rs->not_pool = true;
	rs->saw_free = true;
	rs->last_free = v;
	g_array_append_val(rs->released, v);
	burst_note_kind(rs, v.is_small);
}

/* The burst being read ends: did it release whole reservations of one
 * private pool (none of those it unmapped is still live)? */
static bool
reservations_burst_end(CcaPlanReservations *rs)
{
	rs->in_burst = false;
	if (rs->not_pool || !rs->order.pool_order || rs->released->len == 0)
		return false;
	for (guint i = 0; i < rs->released->len; i++)
		if (reservation_at(rs, g_array_index(rs->released, CcaPlanReservation, i).base,
				   false) >= 0)
			return false;
	return true;
}

/* A segment_unmap EV in the burst being read. */
static void
reservations_unmap(CcaPlanReservations *rs, const CcaEvent *ev)
{
	int k = reservation_at(rs, ev->addr, false);
	if (k < 0) {
		rs->not_pool = true;
		return;
	}
	CcaPlanReservation *v = &g_array_index(rs->live, CcaPlanReservation, k);
	bool seen = false;
	for (guint i = 0; i < rs->released->len && !seen; i++)
		seen = g_array_index(rs->released, CcaPlanReservation, i).base == v->base;
	if (!seen)
		g_array_append_val(rs->released, *v);
	if (rs->saw_free)
		rs->not_pool = true;
	rs->saw_unmap = true;
	burst_note_kind(rs, v->is_small);
	if (ev->size > v->mapped)
		rs->not_pool = true; /* pages mapped before the trace began */
	v->mapped = ev->size < v->mapped ? v->mapped - ev->size : 0;
	if (v->mapped == 0) /* its last page: release_expandable_segment */
		g_array_remove_index(rs->live, (guint)k);
}

bool
cca_plan_reservations_read(CcaPlanReservations *rs, const CcaEvent *ev, uint64_t position)
{
	bool release =
		ev->action == CCA_ACTION_SEGMENT_FREE || ev->action == CCA_ACTION_SEGMENT_UNMAP;
	bool verdict = false;
	if (rs->in_burst && !release && ev->action != CCA_ACTION_FREE_COMPLETED)
		verdict = reservations_burst_end(rs);
	if (release && !rs->in_burst) {
		rs->in_burst = true;
		rs->not_pool = false;
		rs->order = (CcaBurstOrder){0};
		rs->saw_free = rs->saw_unmap = rs->saw_large = false;
		rs->burst_at = position;
		g_array_set_size(rs->released, 0);
	}
	switch (ev->action) {
	case CCA_ACTION_SEGMENT_MAP: {
		int k = reservation_at(rs, ev->addr, true);
		if (k < 0) {
			CcaPlanReservation v = {.base = ev->addr,
						.end = ev->addr + ev->size,
						.mapped = ev->size,
						.from = position,
						.is_small = ev->size == CCA_SMALL_BUFFER,
						.stream = ev->stream};
			g_array_append_val(rs->live, v);
		} else {
			CcaPlanReservation *v = &g_array_index(rs->live, CcaPlanReservation, k);
			v->mapped += ev->size;
			v->end = MAX(v->end, ev->addr + ev->size);
		}
		break;
	}
	case CCA_ACTION_SEGMENT_UNMAP:
		reservations_unmap(rs, ev);
		break;
	case CCA_ACTION_SEGMENT_ALLOC: {
		/* a small-pool segment is one kSmallBuffer */
		CcaPlanReservation v = {.base = ev->addr,
					.end = ev->addr + ev->size,
					.mapped = ev->size,
					.from = position,
					.is_small = ev->size == CCA_SMALL_BUFFER,
					.is_segment = true,
					.stream = ev->stream};
		g_array_append_val(rs->live, v);
		break;
	}
	case CCA_ACTION_SEGMENT_FREE:
		segments_free(rs, ev);
		break;
	default:
		break;
	}
	return verdict;
}

bool
cca_plan_reservations_finish(CcaPlanReservations *rs)
{
	return rs->in_burst && reservations_burst_end(rs);
}

/* The burst RS just read released whole reservations of one private pool:
 * the plan notes the release and each reservation's span. */
static void
plan_note_reservation_release(CcaPlan *p, const CcaPlanReservations *rs)
{
	uint32_t label = p->reservation_releases->len;
	CcaPlanPoolRelease rel = {rs->burst_at, label, {0, 0}};
	g_array_append_val(p->reservation_releases, rel);
	for (guint i = 0; i < rs->released->len; i++) {
		const CcaPlanReservation *v = &g_array_index(rs->released, CcaPlanReservation, i);
		CcaPlanPoolSpan sp = {v->base, v->end - v->base, v->from, rs->burst_at, label};
		g_array_append_val(p->reservation_spans, sp);
	}
}

/* ------------------------------------------------------------ the read */

/* Reads every entry of the plan's device: checks, addresses, releases,
 * live addresses, the pools released with whole expandable reservations.
 * FIRST receives the first entry that is not a `snapshot` mark (action
 * 0xff if none): plan_first_says_mid_run() judges the start by it. */
static gboolean
plan_read(CcaPlan *p, CcaEvent *first, GError **error)
{
	const CcaSnapshot *snap = p->snap;
	g_autoptr(CcaEventCursor) cursor = cca_event_cursor_new(snap, p->device);
	CcaTraceCheck check;
	cca_check_walk_init(&check);
	AddrMap live;
	map_init(&live, 1024);
	CcaEvent ev;
	GError *local = NULL;
	first->action = 0xff;
	uint64_t i = 0;
	/* release bursts: runs of segment_free/unmap and free_completed
	 * opened by a release, as the engine's recorded mode sees them */
	bool in_burst = false, after_burst = false;
	CcaBurstOrder order = {0};
	CcaPlanReservations reservations;
	cca_plan_reservations_init(&reservations);
	for (; cca_event_cursor_next(cursor, &ev, &local); i++) {
		bool release = ev.action == CCA_ACTION_SEGMENT_FREE ||
			       ev.action == CCA_ACTION_SEGMENT_UNMAP;
		if (in_burst && !release && ev.action != CCA_ACTION_FREE_COMPLETED) {
			in_burst = false;
			after_burst = true;
		}
		if (after_burst && ev.action != CCA_ACTION_SEGMENT_ALLOC &&
		    ev.action != CCA_ACTION_SEGMENT_MAP) {
			/* the request after a burst: an oom may have caused it */
			if (ev.action == CCA_ACTION_OOM)
				p->burst_before_oom = true;
			after_burst = false;
		}
		if (!in_burst && release) {
			in_burst = true;
			order = (CcaBurstOrder){0};
			g_array_append_val(p->burst_at, i);
		}
		if (ev.action == CCA_ACTION_SEGMENT_FREE &&
		    cca_plan_burst_order_note(&order, ev.size))
			p->burst_may_release_pool = true;
		if (first->action == 0xff && ev.action != CCA_ACTION_SNAPSHOT)
			*first = ev;
		if (!cca_check_walk_event(&check, snap, &ev, i, &local))
			break;
		if (cca_plan_reservations_note(&reservations, &ev, i))
			plan_note_reservation_release(p, &reservations);
		if ((ev.action == CCA_ACTION_ALLOC || ev.action == CCA_ACTION_OOM) &&
		    ev.size > p->max_request)
			p->max_request = ev.size;
		cca_calls_tally_note(&p->tally, ev.action);
		switch (ev.action) {
		case CCA_ACTION_ALLOC:
			map_put(&live, ev.addr, 0);
			break;
		case CCA_ACTION_FREE_REQUESTED: {
			CcaHandle v = map_get(&live, ev.addr);
			if (v == CCA_NIL) {
				p->unknown_frees++;
			} else if (v & FREE_REQUESTED) {
				cca_check_double_free_error(&local, snap, i, ev.addr);
			} else {
				map_put(&live, ev.addr, FREE_REQUESTED);
			}
			break;
		}
		case CCA_ACTION_FREE_COMPLETED:
			map_remove(&live, ev.addr);
			break;
		case CCA_ACTION_SEGMENT_ALLOC:
			p->has_segment_entries = true;
			note_private_from(p, ev.addr, i);
			g_array_append_val(p->segment_bases, ev.addr);
			g_array_append_val(p->segment_sizes, ev.size);
			break;
		case CCA_ACTION_SEGMENT_MAP:
			p->has_segment_entries = true;
			g_array_append_val(p->map_addresses, ev.addr);
			break;
		case CCA_ACTION_SEGMENT_FREE:
		case CCA_ACTION_SEGMENT_UNMAP:
			p->has_releases = true;
			break;
		default:
			break;
		}
		if (local)
			break;
	}
	p->events = i;
	if (!local && cca_plan_reservations_finish(&reservations))
		plan_note_reservation_release(p, &reservations);
	cca_plan_reservations_clear(&reservations);
	map_clear(&live);
	cca_check_walk_clear(&check);
	if (local) {
		g_propagate_error(error, local);
		return FALSE;
	}
	return TRUE;
}

/* The plan's facts that need no read of the entries: the recorded
 * settings, the final state (checked), its private-pool segments. */
static CcaPlan *
plan_init(const CcaSnapshot *snap, int device, uint32_t pytorch_version, GError **error)
{
	if (device < 0 || device >= snap->n_devices) {
		g_set_error(error, CCA_INPUT_ERROR, CCA_INPUT_ERROR_NOT_SNAPSHOT,
			    "%s: no device %d in the trace (it has %d)", snap->source, device,
			    snap->n_devices);
		return NULL;
	}
	if (!cca_check_final_state(snap, device, error))
		return NULL;
	CcaPlan *p = g_new0(CcaPlan, 1);
	p->snap = snap;
	p->device = device;
	g_mutex_init(&p->lock);
	cca_settings_init(&p->recorded);
	p->segment_bases = g_array_new(FALSE, FALSE, sizeof(uint64_t));
	p->segment_sizes = g_array_new(FALSE, FALSE, sizeof(uint64_t));
	p->map_addresses = g_array_new(FALSE, FALSE, sizeof(uint64_t));
	p->private_segments = g_array_new(FALSE, FALSE, sizeof(CcaPlanPrivateSegment));
	p->empty_cache_at = g_array_new(FALSE, FALSE, sizeof(uint64_t));
	p->pool_spans = g_array_new(FALSE, FALSE, sizeof(CcaPlanPoolSpan));
	p->pool_releases = g_array_new(FALSE, FALSE, sizeof(CcaPlanPoolRelease));
	p->reservation_spans = g_array_new(FALSE, FALSE, sizeof(CcaPlanPoolSpan));
	p->reservation_releases = g_array_new(FALSE, FALSE, sizeof(CcaPlanPoolRelease));
	p->synced_at = g_array_new(FALSE, FALSE, sizeof(uint64_t));
	p->pool_regions = g_array_new(FALSE, FALSE, sizeof(CcaPlanPoolRegion));
	p->burst_at = g_array_new(FALSE, FALSE, sizeof(uint64_t));
	p->trace_release = cca_plan_detect_release(snap, NULL);
	p->pytorch_version = pytorch_version ? pytorch_version : p->trace_release;
	/* another release that decides as the trace's (2.5 for a 2.11
	 * recording) reads the recording by its own rules, as before; one
	 * that decides otherwise (2.13 for 2.11) is a what-if across them */
	p->across_releases = !cca_rules_same_decisions(p->pytorch_version, p->trace_release);
	p->recorded.pytorch_version = p->across_releases ? p->trace_release : p->pytorch_version;
	if (!cca_settings_from_recorded(&p->recorded, &snap->settings, error)) {
		g_prefix_error(error, "%s: recorded allocator_settings: ", snap->source);
		cca_plan_free(p);
		return NULL;
	}
	for (guint i = 0; i < snap->segments->len; i++) {
		const CcaSnapSegment *s = &g_array_index(snap->segments, CcaSnapSegment, i);
		if (s->device != device)
			continue;
		p->has_segments = true;
		if (s->pool_id[0] == 0 && s->pool_id[1] == 0)
			continue;
		CcaPlanPrivateSegment ps = {
			s->address, s->total_size, {s->pool_id[0], s->pool_id[1]}, 0};
		g_array_append_val(p->private_segments, ps);
	}
	g_array_sort(p->private_segments, private_order);
	if (cca_calls_present(snap, device)) {
		p->calls = cca_calls_parse(snap, device, error);
		if (!p->calls) {
			cca_plan_free(p);
			return NULL;
		}
		p->calls_set_fraction = cca_calls_count(p->calls, CCA_CALL_MEMORY_FRACTION) > 0;
		p->recorded_total_memory = cca_calls_total_memory(p->calls);
	}
	return p;
}

/* Does a trace whose first entry is FIRST (action 0xff: none) start
 * mid-run?  A trace that starts from an empty allocator opens with the
 * memory its first request needs; any other first entry, with a final
 * state to rebuild from, means it starts mid-run.  (A trace of requests
 * alone, with no segments at all, is just requests.)  FIRST is the first
 * entry past the `snapshot` marks: PyTorch's snapshot() records one each
 * time the program takes a snapshot (`torch.cuda.memory._snapshot()`),
 * with no effect on the allocator, so a program that takes one before
 * its first request still records from the start. */
static bool
plan_first_says_mid_run(const CcaPlan *p, const CcaEvent *first)
{
	/* a ring that says it overflowed (2.12+ allocator_settings'
	 * trace_alloc_overflowed) lost its first entries, whatever they are */
	if (p->has_segments && p->snap->newer.trace_alloc_overflowed == 1)
		return true;
	return p->has_segments && first->action != 0xff &&
	       first->action != CCA_ACTION_SEGMENT_ALLOC &&
	       first->action != CCA_ACTION_SEGMENT_MAP && first->action != CCA_ACTION_OOM;
}

/* SETTINGS (the dump's) become those in force when the trace began, when
 * the placed CALLS show the program changing them mid-run: the
 * recorder's start conf with the changes made before the window; without
 * a start record the dump's stay.  SOURCE names the file in errors. */
static gboolean
settings_at_start(const CcaCalls *calls, CcaSettings *settings, const char *source, GError **error)
{
	if (cca_calls_count(calls, CCA_CALL_SET_SETTINGS) == 0)
		return TRUE;
	bool started = false;
	for (guint i = 0; i < calls->calls->len; i++) {
		const CcaCall *c = &g_array_index(calls->calls, CcaCall, i);
		GError *local = NULL;
		if (c->kind == CCA_CALL_START && !started) {
			started = true;
			g_auto(CcaSettings) s = {0};
			s.pytorch_version = settings->pytorch_version;
			if (!cca_settings_parse(&s, c->text, &local)) {
				g_set_error(error, CCA_INPUT_ERROR, CCA_INPUT_ERROR_CORRUPT,
					    "%s: the ccasim-record start conf: %s", source,
					    local->message);
				g_error_free(local);
				return FALSE;
			}
			cca_settings_copy(settings, &s);
		} else if (c->kind == CCA_CALL_SET_SETTINGS && !c->in_window && started &&
			   !cca_settings_parse_onto(settings, c->text, &local)) {
			g_set_error(error, CCA_INPUT_ERROR, CCA_INPUT_ERROR_CORRUPT,
				    "%s: the ccasim-record call set_allocator_settings: %s", source,
				    local->message);
			g_error_free(local);
			return FALSE;
		}
	}
	return TRUE;
}

static gboolean
plan_settings_at_start(CcaPlan *p, GError **error)
{
	return settings_at_start(p->calls, &p->recorded, p->snap->source, error);
}

gboolean
cca_plan_start_settings(const CcaSnapshot *snap, int device, CcaSettings *settings, GError **error)
{
	if (!cca_settings_from_recorded(settings, &snap->settings, error)) {
		g_prefix_error(error, "%s: recorded allocator_settings: ", snap->source);
		return FALSE;
	}
	if (device < 0 || device >= snap->n_devices || !cca_calls_present(snap, device))
		return TRUE;
	g_autoptr(CcaCalls) calls = cca_calls_parse(snap, device, error);
	if (!calls)
		return FALSE;
	if (cca_calls_count(calls, CCA_CALL_SET_SETTINGS) == 0)
		return TRUE;
	return cca_calls_place(calls, snap, device, NULL, error) &&
	       settings_at_start(calls, settings, snap->source, error);
}

/* The use_mem_pool regions of P's placed calls (P->pool_regions), and the
 * id of each pool released where a mempool_release call names one.
 * Regions nest (use_mem_pool inside another restores the outer pool on
 * exit); the records do not say which thread entered one, and the replay
 * takes every request in it for the pool's (doc/private-pools.md). */
static void
plan_pool_calls(CcaPlan *p)
{
	g_array_set_size(p->pool_regions, 0);
	if (!p->calls)
		return;
	g_autoptr(GArray) stack = g_array_new(FALSE, FALSE, sizeof(CcaPlanPoolRegion));
	for (guint i = 0; i < p->calls->calls->len; i++) {
		const CcaCall *c = &g_array_index(p->calls->calls, CcaCall, i);
		if (!c->in_window)
			continue;
		if (c->kind == CCA_CALL_MEMPOOL_RELEASE) {
			for (guint k = 0; k < p->reservation_releases->len; k++) {
				CcaPlanPoolRelease *rel = &g_array_index(p->reservation_releases,
									 CcaPlanPoolRelease, k);
				if (rel->position == c->position) {
					rel->id[0] = c->pool[0];
					rel->id[1] = c->pool[1];
				}
			}
			continue;
		}
		if (c->kind != CCA_CALL_USE_MEM_POOL_ENTER && c->kind != CCA_CALL_USE_MEM_POOL_EXIT)
			continue;
		if (c->kind == CCA_CALL_USE_MEM_POOL_ENTER) {
			CcaPlanPoolRegion in = {c->position, {c->pool[0], c->pool[1]}};
			g_array_append_val(stack, in);
		} else if (stack->len > 0) {
			g_array_set_size(stack, stack->len - 1);
		}
		CcaPlanPoolRegion now = {c->position, {0, 0}};
		if (stack->len > 0) {
			const CcaPlanPoolRegion *top =
				&g_array_index(stack, CcaPlanPoolRegion, stack->len - 1);
			now.id[0] = top->id[0];
			now.id[1] = top->id[1];
		}
		/* a region of no entry gives way to the one after it */
		if (p->pool_regions->len > 0 &&
		    g_array_index(p->pool_regions, CcaPlanPoolRegion, p->pool_regions->len - 1)
				    .from == now.from)
			g_array_set_size(p->pool_regions, p->pool_regions->len - 1);
		g_array_append_val(p->pool_regions, now);
	}
}

/* Reads P's entries and settles the start: mid-run by its first entry or
 * by frees of blocks it never allocated, then rebuilt. */
static gboolean
plan_finish(CcaPlan *p, CcaRewind rewind, GError **error)
{
	CcaEvent first;
	if (!plan_read(p, &first, error))
		return FALSE;
	if (p->calls && !p->calls->placed &&
	    (!cca_calls_place(p->calls, p->snap, p->device, &p->tally, error) ||
	     !plan_settings_at_start(p, error)))
		return FALSE;
	p->entries_read = true;
	p->mid_run = false;
	p->mid_run_by_frees = false;
	if (rewind == CCA_REWIND_ALWAYS)
		p->mid_run = true;
	else if (rewind == CCA_REWIND_AUTO) {
		p->mid_run = plan_first_says_mid_run(p, &first);
		/* so does a trace that frees blocks it never allocated */
		if (!p->mid_run && p->unknown_frees > 0)
			p->mid_run = p->mid_run_by_frees = true;
	}
	if (p->mid_run) { /* pages mapped before it began are not in its entries */
		g_array_set_size(p->reservation_spans, 0);
		g_array_set_size(p->reservation_releases, 0);
	}
	plan_pool_calls(p);
	if (p->mid_run &&
	    !cca_rewind_start_state(p->snap, p->device, &p->recorded, &p->start, error))
		return FALSE;
	/* an overflowed ring is a window even when the state before it
	 * rebuilds empty: what it counted before its first entry is unknown */
	if (p->mid_run && p->snap->newer.trace_alloc_overflowed == 1)
		p->start.mid_run = true;
	return TRUE;
}

CcaPlan *
cca_plan_new(const CcaSnapshot *snap, int device, uint32_t pytorch_version, CcaRewind rewind,
	     GError **error)
{
	CcaPlan *p = plan_init(snap, device, pytorch_version, error);
	if (p && !plan_finish(p, rewind, error)) {
		cca_plan_free(p);
		return NULL;
	}
	return p;
}

CcaPlan *
cca_plan_new_unread(const CcaSnapshot *snap, int device, uint32_t pytorch_version, CcaRewind rewind,
		    GError **error)
{
	CcaPlan *p = plan_init(snap, device, pytorch_version, error);
	if (!p)
		return NULL;
	CcaEvent first = {.action = 0xff};
	GError *local = NULL;
	{
		g_autoptr(CcaEventCursor) c = cca_event_cursor_new(snap, device);
		do {
			if (!cca_event_cursor_next(c, &first, &local)) {
				first.action = 0xff;
				break;
			}
		} while (first.action == CCA_ACTION_SNAPSHOT);
	}
	/* a read error or a start to rebuild (its rewind reads the trace
	 * anyway): read it all */
	bool read_all = local != NULL || rewind == CCA_REWIND_ALWAYS || p->calls != NULL ||
			(rewind == CCA_REWIND_AUTO && plan_first_says_mid_run(p, &first));
	g_clear_error(&local);
	/* until the entries are read, the first tells whether the trace has
	 * segment entries at all (a trace without opens with a request) */
	p->has_segment_entries =
		first.action == CCA_ACTION_SEGMENT_ALLOC || first.action == CCA_ACTION_SEGMENT_MAP;
	if (read_all && !plan_finish(p, rewind, error)) {
		cca_plan_free(p);
		return NULL;
	}
	return p;
}

gboolean
cca_plan_read_entries(CcaPlan *p, CcaRewind rewind, GError **error)
{
	if (p->entries_read)
		return TRUE;
	/* what the unread plan took for granted is settled afresh */
	g_array_set_size(p->segment_bases, 0);
	g_array_set_size(p->segment_sizes, 0);
	g_array_set_size(p->map_addresses, 0);
	g_array_set_size(p->burst_at, 0);
	g_array_set_size(p->reservation_spans, 0);
	g_array_set_size(p->reservation_releases, 0);
	p->has_segment_entries = p->has_releases = p->burst_before_oom = false;
	p->unknown_frees = 0;
	p->tally = (CcaCallsTally){0};
	p->max_request = 0;
	return plan_finish(p, rewind, error);
}

uint64_t
cca_plan_start_reserved(const CcaPlan *plan)
{
	if (!plan || !plan->mid_run || !plan->start.mid_run)
		return 0;
	uint64_t total = 0;
	for (guint i = 0; i < plan->start.segments->len; i++)
		total += g_array_index(plan->start.segments, CcaStartSegment, i).size;
	return total;
}

void
cca_plan_free(CcaPlan *p)
{
	if (!p)
		return;
	cca_settings_clear(&p->recorded);
	cca_rewind_start_state_clear(&p->start);
	g_array_free(p->segment_bases, TRUE);
	g_array_free(p->segment_sizes, TRUE);
	g_array_free(p->map_addresses, TRUE);
	g_array_free(p->private_segments, TRUE);
	g_array_free(p->empty_cache_at, TRUE);
	g_array_free(p->pool_spans, TRUE);
	g_array_free(p->pool_releases, TRUE);
	g_array_free(p->reservation_spans, TRUE);
	g_array_free(p->reservation_releases, TRUE);
	g_array_free(p->synced_at, TRUE);
	g_array_free(p->pool_regions, TRUE);
	g_array_free(p->burst_at, TRUE);
	cca_calls_free(p->calls);
	g_mutex_clear(&p->lock);
	g_free(p);
}

/* The plan's empty_cache() positions are known, found under the cap
 * MEMORY_FRACTION / DEVICE_MEMORY / CAPACITY_SET (the lock held). */
void
cca_plan_set_empty_cache_known(CcaPlan *p, double memory_fraction, uint64_t device_memory,
			       bool capacity_set)
{
	p->empty_cache_known = true;
	p->empty_cache_memory_fraction = memory_fraction;
	p->empty_cache_device_memory = device_memory;
	p->empty_cache_capacity_set = capacity_set;
}

/* Does a recorded empty_cache() call's release, or a MemPool's
 * (mempool_release), begin at trace entry AT? */
static bool
plan_call_releases_at(const CcaPlan *p, uint64_t at)
{
	for (guint i = 0; p->calls && i < p->calls->calls->len; i++) {
		const CcaCall *c = &g_array_index(p->calls->calls, CcaCall, i);
		if (c->in_window && ((c->kind == CCA_CALL_EMPTY_CACHE && c->releases_at == at) ||
				     (c->kind == CCA_CALL_MEMPOOL_RELEASE && c->position == at)))
			return true;
	}
	return false;
}

/* Every burst of P is the program's empty_cache() but those the read
 * found to release a pool's reservations (the lock held). */
void
cca_plan_bursts_as_empty_cache(CcaPlan *p)
{
	guint k = 0;
	for (guint i = 0; i < p->burst_at->len; i++) {
		uint64_t at = g_array_index(p->burst_at, uint64_t, i);
		const GArray *rel = p->reservation_releases;
		while (k < rel->len && g_array_index(rel, CcaPlanPoolRelease, k).position < at)
			k++;
		if (k < rel->len && g_array_index(rel, CcaPlanPoolRelease, k).position == at)
			continue;
		/* a recorded call made it: replays apply those themselves */
		if (plan_call_releases_at(p, at))
			continue;
		g_array_append_val(p->empty_cache_at, at);
	}
}

void
cca_plan_note_empty_cache(CcaPlan *p, const GArray *positions, double memory_fraction,
			  uint64_t device_memory, bool capacity_set)
{
	g_mutex_lock(&p->lock);
	if (!p->empty_cache_known) {
		g_array_append_vals(p->empty_cache_at, positions->data, positions->len);
		cca_plan_set_empty_cache_known(p, memory_fraction, device_memory, capacity_set);
	}
	g_mutex_unlock(&p->lock);
}

char *
cca_plan_describe(const CcaPlan *p)
{
	GString *out = g_string_new(NULL);
	g_string_append_printf(
		out, "plan of %s, device %d: %" G_GUINT64_FORMAT " events, PyTorch %u.%u rules\n",
		p->snap->source, p->device, p->events, p->pytorch_version / 100,
		p->pytorch_version % 100);
	g_string_append_printf(out,
			       "  recorded segments: %u segment_alloc, %u segment_map; "
			       "final state: %s; releases: %s\n",
			       p->segment_bases->len, p->map_addresses->len,
			       p->has_segments ? "segments" : "none",
			       p->has_releases ? "yes" : "none");
	if (p->mid_run)
		g_string_append_printf(
			out, "  starts mid-run (%s): %u segments, %u live blocks rebuilt\n",
			p->mid_run_by_frees ? "it frees blocks it never allocated"
					    : "its first entry",
			p->start.segments ? p->start.segments->len : 0,
			p->start.blocks ? p->start.blocks->len : 0);
	else
		g_string_append(out, "  starts from an empty allocator\n");
	if (p->private_segments->len)
		g_string_append_printf(out, "  private-pool segments in the final state: %u\n",
				       p->private_segments->len);
	if (p->reservation_releases->len)
		g_string_append_printf(out,
				       "  private pools released with whole expandable "
				       "reservations: %u (%u reservations)\n",
				       p->reservation_releases->len, p->reservation_spans->len);
	if (p->empty_cache_known)
		g_string_append_printf(out, "  empty_cache() calls found: %u\n",
				       p->empty_cache_at->len);
	if (p->calls && p->calls->calls->len)
		g_string_append_printf(
			out, "  calls recorded by ccasim-record: %u (%u empty_cache)\n",
			p->calls->calls->len, cca_calls_count(p->calls, CCA_CALL_EMPTY_CACHE));
	return g_string_free(out, FALSE);
}

static gint
position_order(gconstpointer a, gconstpointer b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

json_t *
cca_plan_to_json(const CcaPlan *p)
{
	json_t *o = json_object();
	json_object_set_new(o, "mid_run", cca_json_bool(p->mid_run));
	json_object_set_new(o, "mid_run_by_frees", cca_json_bool(p->mid_run_by_frees));
	json_object_set_new(
		o, "start_segments",
		cca_json_uint(p->mid_run && p->start.segments ? p->start.segments->len : 0));
	json_object_set_new(
		o, "start_blocks",
		cca_json_uint(p->mid_run && p->start.blocks ? p->start.blocks->len : 0));
	json_object_set_new(o, "entries_read", cca_json_bool(p->entries_read));
	json_object_set_new(o, "has_releases",
			    p->entries_read ? cca_json_bool(p->has_releases) : json_null());
	json_object_set_new(o, "empty_cache_positions",
			    p->empty_cache_known ? cca_json_uint(p->empty_cache_at->len)
						 : json_null());
	json_object_set_new(o, "recorded_calls",
			    cca_json_uint(p->calls ? p->calls->calls->len : 0));
	/* the positions themselves, for tools that replay the calls
	 * (gpu-scripts/torch_replay.py --empty-cache-at) */
	json_t *at = json_null();
	if (p->empty_cache_known) {
		/* the found positions and the recorded calls, in trace order */
		g_autoptr(GArray) all = g_array_new(FALSE, FALSE, sizeof(uint64_t));
		g_array_append_vals(all, p->empty_cache_at->data, p->empty_cache_at->len);
		for (guint i = 0; p->calls && i < p->calls->calls->len; i++) {
			const CcaCall *c = &g_array_index(p->calls->calls, CcaCall, i);
			if (c->kind == CCA_CALL_EMPTY_CACHE && c->in_window)
				g_array_append_val(all, c->position);
		}
		g_array_sort(all, position_order);
		at = json_array();
		for (guint i = 0; i < all->len; i++)
			json_array_append_new(at, cca_json_uint(g_array_index(all, uint64_t, i)));
	}
	json_object_set_new(o, "empty_cache_at", at);
	json_object_set_new(o, "private_segments", cca_json_uint(p->private_segments->len));
	json_object_set_new(o, "pytorch_version", cca_json_uint(p->pytorch_version));
	return o;
}

/* The release ccasim-record's start record names (torch.__version__,
 * "2.13.0+cu130"), 0 when there is none; *TORCH gets the text. */
static uint32_t
recorded_torch_release(const CcaSnapshot *snap, char **torch)
{
	for (int d = 0; d < snap->n_devices; d++) {
		if (!cca_calls_present(snap, d))
			continue;
		g_autoptr(CcaCalls) calls = cca_calls_parse(snap, d, NULL);
		for (guint i = 0; calls && i < calls->calls->len; i++) {
			const CcaCall *c = &g_array_index(calls->calls, CcaCall, i);
			unsigned major = 0, minor = 0;
			if (c->kind != CCA_CALL_START || c->torch == NULL ||
			    sscanf(c->torch, "%u.%u", &major, &minor) != 2 || major != 2)
				continue;
			*torch = g_strdup(c->torch);
			return 200 + MIN(minor, 99u);
		}
	}
	return 0;
}

uint32_t
cca_plan_detect_release(const CcaSnapshot *snap, char **why)
{
	g_autofree char *torch = NULL;
	uint32_t recorded = recorded_torch_release(snap, &torch);
	if (recorded >= CCA_PYTORCH_VERSION_OLDEST) {
		uint32_t release = MIN(recorded, CCA_PYTORCH_VERSION_NEWEST);
		if (why)
			*why = g_strdup_printf(
				"ccasim-record's start record says torch %s%s", torch,
				recorded > release ? ", newer than the newest rules" : "");
		return release;
	}
	/* keys a later release writes, or that only a later release accepts
	 * in the recorded PYTORCH_CUDA_ALLOC_CONF: a lower bound */
	const char *key = NULL, *conf_key = NULL;
	uint32_t format = cca_snapshot_format_release(snap, &key);
	uint32_t conf = snap->settings.present
				? cca_settings_conf_release(snap->settings.conf, &conf_key)
				: 0;
	if (format > 0 || conf > CCA_PYTORCH_VERSION_VALIDATED) {
		uint32_t release = MIN(MAX(format, conf), CCA_PYTORCH_VERSION_NEWEST);
		if (why)
			*why = conf > format
				       ? g_strdup_printf("its allocator_settings name %s, a key "
							 "PyTorch %u.%u added: %u.%u or later",
							 conf_key, conf / 100, conf % 100,
							 conf / 100, conf % 100)
				       : g_strdup_printf("its format has %s: %u.%u or later", key,
							 format / 100, format % 100);
		return release;
	}
	const CcaRecordedSettings *rs = &snap->settings;
	if (rs->present && rs->has_graph_capture_record_stream_reuse) {
		if (why)
			*why = g_strdup("nothing newer than 2.11; allocator_settings has "
					"graph_capture_record_stream_reuse (2.9+)");
		return CCA_PYTORCH_VERSION_DEFAULT;
	}
	CcaEvent first = {.time_us = CCA_TIME_NONE};
	for (int d = 0; d < snap->n_devices; d++) {
		g_autoptr(CcaEventCursor) c = cca_event_cursor_new(snap, d);
		if (cca_event_cursor_next(c, &first, NULL))
			break;
	}
	const struct {
		bool when;
		uint32_t release;
		const char *text;
	} marks[] = {
		{first.compile_context != CCA_ID_NONE, 208, "its entries have compile_context"},
		{rs->present, 204, "it has allocator_settings (2.3 to 2.7: 2.4 taken)"},
		{first.time_us != CCA_TIME_NONE, 202, "its entries have time_us"},
		{true, 201, "it has none of the later keys (2.0 or 2.1: 2.1 taken)"},
	};
	for (size_t i = 0; i < G_N_ELEMENTS(marks); i++)
		if (marks[i].when) {
			if (why)
				*why = g_strdup(marks[i].text);
			return marks[i].release;
		}
	return CCA_PYTORCH_VERSION_DEFAULT;
}

uint64_t
cca_plan_device_memory(const CcaPlan *plan, uint64_t given)
{
	if (given)
		return given;
	return plan && plan->recorded_total_memory ? plan->recorded_total_memory
						   : CCA_H200_TOTAL_MEMORY;
}
