/* replay.c - the replay loop: trace events in, allocator requests out.
 *
 * Inputs taken from the trace: alloc → malloc; free_requested → free
 * (deferred when its free_completed is not the very next entry, i.e. the
 * block was used on another stream); a deferred free_completed → the
 * block's events finished; a burst of segment_free/segment_unmap that no
 * malloc explains → empty_cache(), or a private pool's release (~MemPool);
 * oom → a request that failed.
 *
 * Telling an empty_cache from the failure cascade (doc/allocator-model.md,
 * "How ccasim replays a trace"): a burst is
 * part of the next malloc only if that malloc, run on the current model
 * state, would release memory (gc, or its first cudaMalloc fails under the
 * cap or the device).  What-if replays cannot ask their own model (its
 * state differs), so they first replay the trace under its recorded
 * settings to find where the program called empty_cache().
 *
 * Memory: the engine holds the live blocks and a lookahead window that is
 * only as long as the longest release burst, never the trace.
 *
 * long-file: the loop, its lookahead window, the --check comparison and
 * the planning pass share the Replay state.  The planning pass is the
 * same loop run under the recorded settings (run_pass with its Pass), so
 * it stays beside the loop; plan.c keeps what is read from the trace
 * alone.
 */
#include "config.h"

#include "replay.h"
#include "event_cursor.h"

#include <math.h>
#include <stdarg.h>
#include <string.h>

#include "addrmap.h"
#include "allocator.h"
#include "calls.h"
#include "shadow.h"
#include "simdevice.h"
#include "plan.h"
#include "rewind.h"
#include "rules.h"
#include "size.h"

/* ------------------------------------------------ recorded addresses */

/* The segment bases of a recorded run, collected in trace order: the
 * k-th segment_alloc, and the first segment_map of each expandable
 * reservation (a map further than a reservation's span from every known
 * base opens a new one). */
typedef struct {
	GArray *segment_bases;	    /* uint64_t */
	GArray *segment_sizes;	    /* uint64_t, of the same segment_allocs */
	GArray *reservation_bases;  /* uint64_t */
	GArray *known_reservations; /* uint64_t: in use before the trace began */
	uint64_t reservation_span;
} RecordedAddresses;

static void
addresses_init(RecordedAddresses *ra, uint64_t reservation_span)
{
	ra->segment_bases = g_array_new(FALSE, FALSE, sizeof(uint64_t));
	ra->segment_sizes = g_array_new(FALSE, FALSE, sizeof(uint64_t));
	ra->reservation_bases = g_array_new(FALSE, FALSE, sizeof(uint64_t));
	ra->known_reservations = g_array_new(FALSE, FALSE, sizeof(uint64_t));
	ra->reservation_span = reservation_span;
}

static void
addresses_clear(RecordedAddresses *ra)
{
	g_clear_pointer(&ra->segment_bases, g_array_unref);
	g_clear_pointer(&ra->segment_sizes, g_array_unref);
	g_clear_pointer(&ra->reservation_bases, g_array_unref);
	g_clear_pointer(&ra->known_reservations, g_array_unref);
}

/* Notes EV's address if it is a segment_alloc or opens a reservation. */
static void
addresses_note(RecordedAddresses *ra, const CcaEvent *ev)
{
	if (ev->action == CCA_ACTION_SEGMENT_ALLOC) {
		g_array_append_val(ra->segment_bases, ev->addr);
		g_array_append_val(ra->segment_sizes, ev->size);
	} else if (ev->action == CCA_ACTION_SEGMENT_MAP) {
		const GArray *lists[] = {ra->reservation_bases, ra->known_reservations};
		for (guint l = 0; l < G_N_ELEMENTS(lists); l++)
			for (guint i = 0; i < lists[l]->len; i++) {
				uint64_t base = g_array_index(lists[l], uint64_t, i);
				if (ev->addr >= base && ev->addr - base < ra->reservation_span)
					return;
			}
		g_array_append_val(ra->reservation_bases, ev->addr);
	}
}

/* Collects every recorded address of device DEVICE of SNAP up front (for
 * --addresses-from, whose trace is not the one replayed). */
static gboolean
addresses_scan(RecordedAddresses *ra, const CcaSnapshot *snap, int device, GError **error)
{
	g_autoptr(CcaEventCursor) cursor = cca_event_cursor_new(snap, device);
	CcaEvent ev;
	GError *local = NULL;
	for (uint64_t i = 0; cca_event_cursor_next(cursor, &ev, &local); i++) {
		if (!cca_check_event(snap, &ev, i, &local))
			break;
		addresses_note(ra, &ev);
	}
	if (local) {
		g_propagate_error(error, local);
		return FALSE;
	}
	return TRUE;
}

/* --------------------------------------------------- lookahead window */

typedef struct {
	CcaEventCursor *cursor;
	const CcaSnapshot *snap;
	CcaTraceCheck check; /* the trace's segments and mappings read so far */
	bool trusted;	     /* a plan checked every entry: skip the checks */
	/* an unread plan's recorded mode: the trace's own addresses, noted
	 * as the entries are read (the segment_alloc or first map a
	 * cudaMalloc borrows precedes the alloc it serves) */
	RecordedAddresses *feed;
	uint64_t segment_entries; /* segment_alloc/free/map/unmap entries read */
	/* an unread plan: the trace's reservations as the entries are read,
	 * and where a burst that releases whole reservations of a private
	 * pool begins (uint64_t positions): only a read plan routes such a
	 * pool's requests, so a replay meeting one must be done again */
	CcaPlanReservations *reservations;
	GArray *pool_bursts;
	/* ring of buffered events; a refill leaves the WINDOW_SPARE slots
	 * before HEAD alone, and a ring outgrown stays in RETIRED until the
	 * window is cleared: an entry popped lately stays readable where it
	 * was (replay_loop() handles it in place) */
	CcaEvent *ring;
	uint32_t cap, head, len;
	GPtrArray *retired;
	uint64_t position; /* index of ring[head] in the trace */
	/* events in memory (a pickle's, or held: cca_event_cursor_hold()):
	 * the ring is then the events themselves, read in place (HEAD the
	 * position, CAP a power of two above their number, so that no index
	 * wraps), and no cursor is used */
	const CcaEvent *direct;
	uint64_t direct_len;
	gboolean at_end; /* no entry is read after the ring's */
	GError *pending; /* why, when a corrupt entry ended it */
} Window;

static void
window_init(Window *w, const CcaSnapshot *snap, int device)
{
	memset(w, 0, sizeof *w);
	w->snap = snap;
	cca_check_walk_init(&w->check);
	const GArray *held = snap->events != NULL ? snap->events[device] : NULL;
	if (held != NULL && held->len <= (G_MAXUINT32 >> 1) + 1) {
		w->direct = (const CcaEvent *)(const void *)held->data;
		w->direct_len = held->len;
		w->cap = 1;
		while (w->cap < held->len)
			w->cap *= 2;
		w->ring = (CcaEvent *)held->data; /* never written */
		return;
	}
	w->cursor = cca_event_cursor_new(snap, device);
	w->cap = 64;
	w->ring = g_new(CcaEvent, w->cap);
	w->retired = g_ptr_array_new_with_free_func(g_free);
}

static void
window_clear(Window *w)
{
	if (w->reservations) {
		cca_plan_reservations_clear(w->reservations);
		g_free(w->reservations);
		g_array_free(w->pool_bursts, TRUE);
	}
	cca_event_cursor_free(w->cursor);
	cca_check_walk_clear(&w->check);
	if (w->direct == NULL) {
		g_free(w->ring);
		g_ptr_array_free(w->retired, TRUE);
	}
	g_clear_error(&w->pending);
}

/* Checks EV, trace entry INDEX, as it is read (cca_check_walk_event()),
 * unless a plan checked the trace already. */
static gboolean
window_check(Window *w, const CcaEvent *ev, uint64_t index, GError **error)
{
	return w->trusted || cca_check_walk_event(&w->check, w->snap, ev, index, error);
}

/* How many entries the window reads at a time, at most. */
#define WINDOW_BATCH 64
/* How many entries ahead of the one it checks the window prefetches. */
#define WINDOW_PREFETCH 16
/* How many of the entries popped last a refill of the ring keeps: the
 * entry replay_loop() handles and the free_completed its
 * free_requested may pop. */
#define WINDOW_SPARE 2

/* Reads entries until event POSITION+K is in the window (window_peek()'s
 * slow path), a batch at a time; returns it or NULL past the end.  A
 * corrupt entry ends the window before it: the error is given when the
 * entry is needed, after the entries before it were handled. */
static G_NO_INLINE const CcaEvent *
window_fill(Window *w, uint32_t k, GError **error)
{
	while (w->len <= k) {
		if (w->at_end) {
			if (w->pending) {
				g_propagate_error(error, w->pending);
				w->pending = NULL;
			}
			return NULL;
		}
		const CcaEvent *slots;
		uint32_t want;
		guint got;
		if (w->direct != NULL) {
			uint64_t next = w->position + w->len;
			want = MAX(WINDOW_BATCH, k + 1 - w->len);
			got = (guint)MIN((uint64_t)want, w->direct_len - next);
			slots = &w->direct[next];
		} else {
			if (w->len + WINDOW_SPARE >= w->cap) {
				CcaEvent *ring = g_new(CcaEvent, w->cap * 2);
				for (uint32_t i = 0; i < w->len; i++)
					ring[WINDOW_SPARE + i] =
						w->ring[(w->head + i) & (w->cap - 1)];
				g_ptr_array_add(w->retired, w->ring);
				w->ring = ring;
				w->head = WINDOW_SPARE;
				w->cap *= 2;
			}
			uint32_t tail = (w->head + w->len) & (w->cap - 1);
			uint32_t room = MIN(w->cap - w->len - WINDOW_SPARE, w->cap - tail);
			want = MIN(room, MAX(WINDOW_BATCH, k + 1 - w->len));
			got = cca_event_cursor_next_many(w->cursor, &w->ring[tail], want,
							 &w->pending);
			slots = &w->ring[tail];
		}
		for (guint i = 0; i < got; i++) {
			const CcaEvent *slot = &slots[i];
			/* events in memory are read once each, in order: ask
			 * for the lines a few events on before they are needed */
			if (w->direct != NULL &&
			    w->position + w->len + WINDOW_PREFETCH < w->direct_len)
				__builtin_prefetch(
					&w->direct[w->position + w->len + WINDOW_PREFETCH]);
			if (!window_check(w, slot, w->position + w->len, &w->pending)) {
				got = i;
				break;
			}
			if (w->feed)
				addresses_note(w->feed, slot);
			if (w->reservations &&
			    cca_plan_reservations_note(w->reservations, slot, w->position + w->len))
				g_array_append_val(w->pool_bursts, w->reservations->burst_at);
			if (slot->action >= CCA_ACTION_SEGMENT_ALLOC &&
			    slot->action <= CCA_ACTION_SEGMENT_UNMAP)
				w->segment_entries++;
			w->len++;
		}
		if (got < want) {
			w->at_end = TRUE;
			if (w->reservations && cca_plan_reservations_finish(w->reservations))
				g_array_append_val(w->pool_bursts, w->reservations->burst_at);
		}
	}
	return &w->ring[(w->head + k) & (w->cap - 1)];
}

/* Makes event POSITION+K available; returns it or NULL past the end.
 * The ring's capacity is a power of two. */
static inline const CcaEvent *
window_peek(Window *w, uint32_t k, GError **error)
{
	if (G_LIKELY(k < w->len))
		return &w->ring[(w->head + k) & (w->cap - 1)];
	return window_fill(w, k, error);
}

/* Does a burst that releases whole reservations of a private pool begin
 * at trace position POSITION?  (Known once the window holds the entry
 * after the burst, or the trace's end.) */
static bool
window_pool_burst(const Window *w, uint64_t position)
{
	for (guint i = 0; w->pool_bursts && i < w->pool_bursts->len; i++)
		if (g_array_index(w->pool_bursts, uint64_t, i) == position)
			return true;
	return false;
}

static void
window_pop(Window *w)
{
	w->head = (w->head + 1) & (w->cap - 1);
	w->len--;
	w->position++;
}

/* ------------------------------------------------------------- replay */

typedef struct {
	const CcaSnapshot *snap;
	const CcaReplayOptions *opt;
	CcaReplayResult *res;
	CcaAllocator *alloc;
	CcaDevice *device;
	Window in;
	AddrMap live;
	bool recorded_mode;	      /* trace segment events are expected outputs */
	const GArray *empty_cache_at; /* what-if: trace positions of empty_cache */
	guint next_empty_cache;
	GArray *empty_cache_found; /* recorded mode: positions found */
	/* completions a malloc's synchronisation made (trace positions):
	 * found in recorded mode, kept from its lookup in a what-if */
	GArray *synced_found;
	const GArray *synced_at;
	guint next_synced;
	GArray *late; /* CcaEvent: what-if completions held past a malloc */
	/* a what-if of an unread plan of an uncapped recording: each burst of
	 * releases is the program's empty_cache(), found as it is read */
	bool online_bursts;
	bool in_burst;	    /* the last entry read belongs to a burst */
	bool needs_entries; /* a burst before an oom: the plan must read them */
	/* the stream and pool of the last alloc entry, and whether segments
	 * were released since the last request entry */
	uint64_t last_alloc_stream;
	uint32_t last_alloc_pool;
	bool released_since_request;
	/* recorded mode: the trace entry of each live recorded segment's
	 * segment_alloc (address -> index + 1), and the private pools found
	 * released before the dump (planning pass: CcaPlanPoolSpan,
	 * CcaPlanPoolRelease) */
	GHashTable *segment_from;
	GArray *spans_found, *releases_found;
	/* what-if: the plan's pools released before the dump */
	const GArray *pool_spans, *pool_releases;
	guint next_pool_release;
	/* a read plan's pools released with whole expandable reservations
	 * (CcaPlan.reservation_spans, reservation_releases), in every mode */
	const GArray *reservation_spans, *reservation_releases;
	guint next_reservation_release;
	/* the first trace position at which maybe_empty_cache() has work
	 * (a pool release, a reservation release, an empty_cache), UINT64_MAX
	 * when none is left; 0 until worked out (scheduled_next()) */
	uint64_t scheduled_at;
	/* a read plan's use_mem_pool regions (CcaPlan.pool_regions), the next */
	const GArray *pool_regions;
	guint next_region;
	RecordedAddresses *feed; /* recorded mode: the trace's own addresses */
	uint64_t model_segments; /* segment_allocs the model recorded */
	bool diverged;		 /* recorded mode: the model's segments are not the recording's */
	/* segments of private pools (MemPool, graphs) in the final state:
	 * an alloc inside one was made in that pool */
	GArray *private_segments; /* PrivateSegment, by address */
	/* recorded mode: private segments the trace shows but the final
	 * state no longer has (PrivateSegment, unordered), and the last
	 * segment_alloc read, which opens the segment of the next alloc */
	GArray *inferred_private;
	CcaEvent last_segment_alloc;
	bool have_segment_alloc;
	GArray *deferred;   /* Deferred, oldest first */
	bool seen_deferred; /* a free whose completion did not follow at once */
	/* a what-if's completion timing (CcaReplayOptions.completion; always
	 * CCA_COMPLETION_RECORDED in recorded mode), and the mallocs (alloc
	 * and oom entries) handled so far, the clock of its due points */
	CcaCompletion completion;
	uint64_t mallocs;
	uint64_t largest_deferred; /* CCA_COMPLETION_SIZED: bytes */
	/* the program's calls ccasim-record saw (the plan's), the next one */
	const CcaCalls *calls;
	guint next_call;
	/* --check */
	CcaEventCursor *expect;
	uint64_t expect_read;	  /* entries read from the expect cursor */
	uint64_t expect_position; /* index of the entry last read */
	/* the trace entry being handled (cause_begin()), the cause of the
	 * model entries recorded now: its index (CCA_REPLAY_NO_CAUSE outside
	 * any) and the entry, valid while its handling lasts */
	uint64_t cause;
	const CcaEvent *cause_event;
	GError *error;
} Replay;

typedef struct {
	uint64_t address, size;
	uint32_t mempool; /* the allocator's index of its pool */
	uint64_t from;	  /* the trace entry that made it (CcaPlanPrivateSegment) */
} PrivateSegment;

/* A deferred free whose free_completed the trace has not shown yet: its
 * trace address, and the model's synchronisations (num_sync_all_streams)
 * when it was deferred.  A later synchronisation completed it.  Under a
 * completion timing other than the recorded one (complete_due()), also
 * its block, the malloc before whose lookup it completes (DUE), whether
 * it has (DONE), and whether the trace's free_completed has been read
 * (RECORDED: the address is then no longer the engine's, and the entry
 * only waits for DUE). */
typedef struct {
	uint64_t address;
	int64_t syncs;
	CcaHandle handle;
	uint64_t due;
	bool done, recorded;
} Deferred;


/* The private pools of the final state's segments (a 2.11 trace entry
 * carries no pool id; the segments do), from PLAN. */
static GArray *
private_segments_new(const CcaPlan *plan, CcaAllocator *alloc)
{
	GArray *segs = g_array_new(FALSE, FALSE, sizeof(PrivateSegment));
	for (guint i = 0; i < plan->private_segments->len; i++) {
		const CcaPlanPrivateSegment *s =
			&g_array_index(plan->private_segments, CcaPlanPrivateSegment, i);
		int k = cca_allocator_mempool(alloc, s->pool_id);
		if (k <= 0)
			continue;
		PrivateSegment ps = {s->address, s->size, (uint32_t)k, s->from};
		g_array_append_val(segs, ps);
	}
	return segs;
}

/* The allocator's index of the private pool LABEL that the program
 * released before the dump (0 when the allocator has no room for it). */
static uint32_t
released_pool(const Replay *r, uint32_t label)
{
	const int64_t id[2] = {-2, (int64_t)label + 1};
	int k = cca_allocator_mempool(r->alloc, id);
	return k > 0 ? (uint32_t)k : 0;
}

/* The allocator's index of the private pool LABEL that the plan's read
 * found released with whole expandable reservations (0 when the
 * allocator has no room for it). */
static uint32_t
reservation_pool(const Replay *r, uint32_t label)
{
	int64_t id[2] = {-3, (int64_t)label + 1};
	/* a mempool_release call named it: the pool its use_mem_pool
	 * regions' requests went to */
	const GArray *rels = r->reservation_releases;
	if (rels && label < rels->len) {
		const CcaPlanPoolRelease *rel = &g_array_index(rels, CcaPlanPoolRelease, label);
		if (rel->id[0] != 0 || rel->id[1] != 0)
			id[0] = rel->id[0], id[1] = rel->id[1];
	}
	int k = cca_allocator_mempool(r->alloc, id);
	return k > 0 ? (uint32_t)k : 0;
}

/* The MemPool whose use_mem_pool region holds trace entry INDEX, as
 * ccasim-record's calls show (0: none; the entries come in order). */
static uint32_t
region_pool(Replay *r, uint64_t index)
{
	const GArray *regions = r->pool_regions;
	if (!regions || regions->len == 0)
		return 0;
	while (r->next_region < regions->len &&
	       g_array_index(regions, CcaPlanPoolRegion, r->next_region).from <= index)
		r->next_region++;
	if (r->next_region == 0)
		return 0;
	const CcaPlanPoolRegion *g = &g_array_index(regions, CcaPlanPoolRegion, r->next_region - 1);
	if (g->id[0] == 0 && g->id[1] == 0)
		return 0;
	int k = cca_allocator_mempool(r->alloc, g->id);
	return k > 0 ? (uint32_t)k : 0;
}

/* pool_of_address()'s search: the pool of the block the trace allocated at ADDR: a private pool
 * when ADDR lies in one of its segments or reservations, else the default pool (0). */
static G_NO_INLINE uint32_t
pool_of_address_in(const Replay *r, uint64_t addr)
{
	const GArray *segs = r->private_segments;
	guint lo = 0, hi = segs ? segs->len : 0;
	while (lo < hi) {
		guint mid = (lo + hi) / 2;
		const PrivateSegment *ps = &g_array_index(segs, PrivateSegment, mid);
		if (addr < ps->address) {
			hi = mid;
		} else if (addr >= ps->address + ps->size) {
			lo = mid + 1;
		} else if (r->in.position >= ps->from) {
			return ps->mempool;
		} else { /* before it was made, the range held another segment:
			  * perhaps one of a pool released since */
			break;
		}
	}
	const GArray *spans = r->pool_spans;
	for (guint i = 0; spans && i < spans->len; i++) {
		const CcaPlanPoolSpan *sp = &g_array_index(spans, CcaPlanPoolSpan, i);
		if (addr >= sp->address && addr < sp->address + sp->size &&
		    sp->from < r->in.position && r->in.position <= sp->to)
			return released_pool(r, sp->label);
	}
	/* a reservation of a pool released before the dump, from its first
	 * map to the release: the address range may serve another pool
	 * before and after */
	const GArray *rspans = r->reservation_spans;
	for (guint i = 0; rspans && i < rspans->len; i++) {
		const CcaPlanPoolSpan *sp = &g_array_index(rspans, CcaPlanPoolSpan, i);
		if (addr >= sp->address && addr - sp->address < sp->size &&
		    sp->from < r->in.position && r->in.position <= sp->to)
			return reservation_pool(r, sp->label);
	}
	const GArray *inferred = r->inferred_private;
	for (guint i = 0; inferred && i < inferred->len; i++) {
		const PrivateSegment *ps = &g_array_index(inferred, PrivateSegment, i);
		if (addr >= ps->address && addr < ps->address + ps->size)
			return ps->mempool;
	}
	return 0;
}

/* pool_of_address(), at once when no private segment, span or inferred
 * pool exists (most traces: the lookup per alloc is then two tests). */
static inline uint32_t
pool_of_address(const Replay *r, uint64_t addr)
{
	if ((r->private_segments == NULL || r->private_segments->len == 0) &&
	    (r->pool_spans == NULL || r->pool_spans->len == 0) &&
	    (r->reservation_spans == NULL || r->reservation_spans->len == 0) &&
	    (r->inferred_private == NULL || r->inferred_private->len == 0))
		return 0;
	return pool_of_address_in(r, addr);
}

/* The pool of recorded alloc EV: the entry's own pool_id where the
 * snapshot has one (after 2.11; (0, 0): the default pools), else the private segment it lies in
 * (pool_of_address()).  A private pool freed before the dump
 * leaves no segment in the final state; but when the recording opened a
 * new segment for EV although the default pool had a free block for it,
 * EV was made in a private pool (a MemPool or a graph's): its segment
 * then belongs to an inferred private pool. */
static uint32_t
pool_of_alloc(Replay *r, const CcaEvent *ev)
{
	if (ev->has_pool_id) {
		/* newer PyTorch records each entry's pool: the recording says,
		 * (0, 0) being the default pools */
		if (ev->pool_id[0] == 0 && ev->pool_id[1] == 0)
			return 0;
		int k = cca_allocator_mempool(r->alloc, ev->pool_id);
		if (k > 0)
			return (uint32_t)k;
	}
	/* a use_mem_pool region ccasim-record saw: the program's pool */
	uint32_t pool = region_pool(r, r->in.position - 1);
	if (pool != 0)
		return pool;
	pool = pool_of_address(r, ev->addr);
	if (pool != 0 || !r->feed || !r->have_segment_alloc ||
	    r->last_segment_alloc.addr != ev->addr || r->last_segment_alloc.stream != ev->stream ||
	    !cca_allocator_would_serve(r->alloc, ev->size, ev->stream, 0))
		return pool;
	static const int64_t inferred_id[2] = {-1, 1};
	int k = cca_allocator_mempool(r->alloc, inferred_id);
	if (k <= 0)
		return 0;
	cca_allocator_mempool_set_freeable(r->alloc, (uint32_t)k, false); /* in use again */
	PrivateSegment ps = {r->last_segment_alloc.addr, r->last_segment_alloc.size, (uint32_t)k,
			     0};
	g_array_append_val(r->inferred_private, ps);
	r->res->inferred_private_segments++;
	return (uint32_t)k;
}

static int64_t
syncs_now(const Replay *r)
{
	return cca_allocator_stats(r->alloc)->num_sync_all_streams;
}

static void
deferred_add(Replay *r, uint64_t address, CcaHandle handle, uint64_t size)
{
	Deferred d = {address, syncs_now(r), handle, UINT64_MAX, false, false};
	if (r->completion == CCA_COMPLETION_EARLY || r->completion == CCA_COMPLETION_LAG)
		d.due = r->mallocs + r->opt->completion_shift;
	else if (r->completion == CCA_COMPLETION_SIZED) {
		r->largest_deferred = MAX(r->largest_deferred, size);
		d.due = r->mallocs + 1 +
			(uint64_t)((double)r->opt->completion_shift * (double)size /
				   (double)MAX(r->largest_deferred, 1));
	} else if (r->completion == CCA_COMPLETION_RANDOM) {
		/* splitmix64 of the seed and the mallocs so far: frees
		 * requested between the same two mallocs had their events
		 * recorded together and finish together; the same draw on
		 * every replay of this timing */
		uint64_t x = r->opt->completion_seed * UINT64_C(0x9e3779b97f4a7c15) + r->mallocs;
		x = (x ^ (x >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
		x = (x ^ (x >> 27)) * UINT64_C(0x94d049bb133111eb);
		x ^= x >> 31;
		d.due = r->mallocs + 1 + x % ((uint64_t)r->opt->completion_shift + 1);
	}
	g_array_append_val(r->deferred, d);
}

/* Whether the deferred free at ADDRESS was completed early by
 * complete_due() (then it is taken off the list), under a completion
 * timing other than the recorded one.  Under CCA_COMPLETION_LATE, a free
 * not yet completed gets its due point and stays on the list (true: the
 * trace's entry must not complete it); under CCA_COMPLETION_LAG it keeps
 * the one it has. */
static bool
deferred_timed(Replay *r, uint64_t address)
{
	if (G_LIKELY(r->completion == CCA_COMPLETION_RECORDED))
		return false;
	for (guint i = r->deferred->len; i-- > 0;) {
		Deferred *d = &g_array_index(r->deferred, Deferred, i);
		if (d->address != address || d->recorded)
			continue;
		if (d->done) {
			g_array_remove_index(r->deferred, i);
			return true;
		}
		if (r->completion == CCA_COMPLETION_EARLY)
			return false;
		if (r->completion == CCA_COMPLETION_LAG || r->completion == CCA_COMPLETION_RANDOM ||
		    r->completion == CCA_COMPLETION_SIZED) { /* its due point stands */
			d->recorded = true;
			return true;
		}
		/* the trace's free_completed stands before the malloc whose
		 * process_events saw it: shift 0 completes it there */
		uint32_t shift = r->opt->completion_shift;
		d->due = shift == CCA_COMPLETION_NEVER ? UINT64_MAX : r->mallocs + 1 + shift;
		d->recorded = true;
		return true;
	}
	return false;
}

/* Before the lookup of a malloc (its process_events), under a completion
 * timing other than the recorded one: counts the malloc and completes
 * the deferred frees due by it, in the order they were deferred (each
 * stream's events complete in the order they were recorded). */
static void
complete_due(Replay *r)
{
	if (G_LIKELY(r->completion == CCA_COMPLETION_RECORDED))
		return;
	r->mallocs++;
	for (guint i = 0; i < r->deferred->len;) {
		Deferred *d = &g_array_index(r->deferred, Deferred, i);
		/* a synchronisation of the model since it was deferred
		 * completed it already (its handle may name another block):
		 * done, whatever its due point (so the list holds no more
		 * than the model's pending frees) */
		bool synced = syncs_now(r) != d->syncs;
		if (d->done || (d->due > r->mallocs && !synced)) {
			i++;
			continue;
		}
		if (!synced)
			cca_allocator_complete_free(r->alloc, d->handle);
		d->done = true;
		if (d->recorded)
			g_array_remove_index(r->deferred, i);
		else
			i++;
	}
}

/* Takes the deferred free at ADDRESS off the list: was it completed by a
 * synchronisation of the model since it was deferred?  (Then the handle
 * the map holds may name another block by now: the merge that followed
 * can have deleted it and a new block reused it, or the block itself can
 * have been allocated and freed again.) */
static bool
deferred_take(Replay *r, uint64_t address)
{
	for (guint i = r->deferred->len; i-- > 0;) {
		Deferred d = g_array_index(r->deferred, Deferred, i);
		if (d.address == address && !d.recorded) {
			g_array_remove_index(r->deferred, i);
			return syncs_now(r) > d.syncs;
		}
	}
	return false;
}

static void
describe_event(GString *out, const CcaEvent *ev)
{
	g_string_append_printf(out, "%s size=%" G_GUINT64_FORMAT, cca_event_action_name(ev->action),
			       ev->size);
	if (ev->action == CCA_ACTION_OOM)
		g_string_append_printf(out, " device_free=%" G_GUINT64_FORMAT, ev->addr);
	else
		g_string_append_printf(out, " addr=0x%" G_GINT64_MODIFIER "x", ev->addr);
	g_string_append_printf(out, " stream=%" G_GUINT64_FORMAT, ev->stream);
}

static void
check_fail(Replay *r, const char *what, const CcaEvent *trace, const CcaEvent *model)
{
	CcaReplayResult *res = r->res;
	if (!res->check_passed)
		return;
	res->check_passed = false;
	GString *msg = g_string_new(NULL);
	g_string_append_printf(msg, "event %" G_GUINT64_FORMAT ": %s", r->expect_position, what);
	if (trace) {
		g_string_append(msg, "; trace: ");
		describe_event(msg, trace);
	}
	if (model) {
		g_string_append(msg, "; model: ");
		describe_event(msg, model);
	}
	res->check_message = g_string_free(msg, FALSE);
}

/* Next trace entry the model must produce (snapshot entries skipped). */
static gboolean
expect_next(Replay *r, CcaEvent *ev)
{
	while (cca_event_cursor_next(r->expect, ev, r->error ? NULL : &r->error)) {
		r->expect_position = r->expect_read++;
		if (ev->action != CCA_ACTION_SNAPSHOT)
			return TRUE;
	}
	return FALSE;
}

static bool
events_match(const CcaEvent *trace, const CcaEvent *model)
{
	if (trace->action != model->action || trace->size != model->size ||
	    trace->stream != model->stream)
		return false;
	return trace->action == CCA_ACTION_OOM || trace->addr == model->addr;
}

/* Receives every entry the model records. */
static void
on_model_event(void *data, const CcaEvent *model)
{
	Replay *r = data;
	if (r->opt->on_model_event)
		r->opt->on_model_event(r->opt->on_model_event_data, r->cause, r->cause_event,
				       model);
	if (model->action == CCA_ACTION_SEGMENT_ALLOC && r->feed) {
		/* the k-th segment must be the recording's k-th, or the run is
		 * not the recorded one (another cap or device size) */
		uint64_t k = r->model_segments++;
		const GArray *sizes = r->feed->segment_sizes;
		/* a recorded segment_alloc precedes the alloc it serves, so it has
		 * been read by now: none there means the recording made none */
		if (k >= sizes->len || g_array_index(sizes, uint64_t, k) != model->size)
			r->diverged = true;
	}
	if (!r->expect || !r->res->check_passed)
		return;
	CcaEvent trace;
	if (!expect_next(r, &trace)) {
		check_fail(r, "the model recorded an entry after the trace ended", NULL, model);
		return;
	}
	r->res->check_compared++;
	if (!events_match(&trace, model))
		check_fail(r, "the model diverges from the trace", &trace, model);
}

/* The engine starts handling trace entry INDEX (EV, which must outlive
 * the handling): what the model records until the next call is its doing
 * (CcaReplayModelFunc); before_request hears of it first. */
static inline void
cause_begin(Replay *r, uint64_t index, const CcaEvent *ev)
{
	r->cause = index;
	r->cause_event = ev;
	if (r->opt->before_request)
		r->opt->before_request(r->opt->before_request_data, index, ev, r->alloc);
}

static void
record_unexpected_oom(Replay *r, const CcaEvent *ev)
{
	CcaReplayResult *res = r->res;
	res->unexpected_ooms++;
	if (res->unexpected_ooms > 1)
		return;
	const CcaStats *st = cca_allocator_stats(r->alloc);
	res->oom_event = r->in.position - 1;
	res->oom_size = ev->size;
	res->oom_stream = ev->stream;
	res->oom_alloc_size = cca_allocator_segment_size(r->alloc, ev->size);
	res->oom_reserved = cca_allocator_reserved(r->alloc);
	res->oom_allocated = (uint64_t)st->allocated_bytes[CCA_STAT_ALL].current;
	res->oom_free = r->device->ops->free_memory(r->device);
	res->oom_largest_free = cca_allocator_largest_free(r->alloc);
}

static void replay_late_completions(Replay *r);

/* An alloc entry: malloc; returns false when the replay must stop. */
static bool
replay_alloc(Replay *r, const CcaEvent *ev)
{
	cause_begin(r, r->in.position - 1, ev);
	uint32_t pool = pool_of_alloc(r, ev);
	r->last_alloc_stream = ev->stream;
	r->last_alloc_pool = pool;
	complete_due(r);
	CcaHandle h = cca_allocator_malloc_in(r->alloc, ev->size, ev->stream, pool);
	/* before EV's address is mapped: a completion held past this malloc
	 * may have the same trace address (its segment released and the
	 * driver handing the address out again) */
	replay_late_completions(r);
	r->have_segment_alloc = false;
	if (h == CCA_NIL) {
		record_unexpected_oom(r, ev);
		if (!r->opt->keep_going) {
			r->res->stopped_by_oom = true;
			return false;
		}
		map_put(&r->live, ev->addr, HANDLE_FAILED);
		return true;
	}
	g_assert(h < HANDLE_FAILED); /* a slab of 2^31 blocks would not fit in memory */
	map_put(&r->live, ev->addr, h);
	return true;
}

/* Makes DEV refuse allocations while REFUSE is true, when it can. */
static void
device_set_refuse(CcaDevice *dev, bool refuse)
{
	if (dev->ops->set_refuse)
		dev->ops->set_refuse(dev, refuse);
}

/* An oom entry the trace recorded: the program's request failed there. */
static void
replay_recorded_oom(Replay *r, const CcaEvent *ev)
{
	cause_begin(r, r->in.position - 1, ev);
	r->res->recorded_ooms++;
	/* Without a cap the device itself refused (doc/allocator-model.md, "How
	 * ccasim replays a trace"). */
	bool device_refused = cca_allocator_allowed_maximum(r->alloc) == 0 && !r->opt->capacity_set;
	device_set_refuse(r->device, device_refused);
	/* the failed request's pool: an oom entry has no address, but a
	 * request made during a capture follows others of its stream there;
	 * and a capture skips the release of all cached blocks, so an oom
	 * after released segments was made outside one */
	uint32_t pool = ev->stream == r->last_alloc_stream && !r->released_since_request
				? r->last_alloc_pool
				: 0;
	/* a use_mem_pool region ccasim-record saw, or the entry's own pool
	 * (newer PyTorch): the recording says */
	int k = ev->has_pool_id && (ev->pool_id[0] != 0 || ev->pool_id[1] != 0)
			? cca_allocator_mempool(r->alloc, ev->pool_id)
			: 0;
	uint32_t region = region_pool(r, r->in.position - 1);
	if (k > 0)
		pool = (uint32_t)k;
	else if (ev->has_pool_id && ev->pool_id[0] == 0 && ev->pool_id[1] == 0)
		pool = 0; /* (0, 0): the default pools */
	else if (region != 0)
		pool = region;
	complete_due(r);
	CcaHandle h = cca_allocator_malloc_in(r->alloc, ev->size, ev->stream, pool);
	device_set_refuse(r->device, false);
	replay_late_completions(r);
	CcaReplayResult *res = r->res;
	if (!res->recorded_oom_seen) {
		res->recorded_oom_seen = true;
		res->recorded_oom_event = r->in.position - 1;
		res->recorded_oom_alloc_size = cca_allocator_segment_size(r->alloc, ev->size);
		res->recorded_oom_reserved = cca_allocator_reserved(r->alloc);
		res->recorded_oom_allocated = (uint64_t)cca_allocator_stats(r->alloc)
						      ->allocated_bytes[CCA_STAT_ALL]
						      .current;
		res->recorded_oom_allowed = cca_allocator_allowed_maximum(r->alloc);
		res->recorded_oom_device_free = ev->addr; /* an oom entry's device_free */
	}
	if (h != CCA_NIL) /* the request fits here: it is given back at once */
		cca_allocator_free_block(r->alloc, h, false);
}

static bool is_release(const CcaEvent *ev);

/* A free_requested entry (trace entry INDEX): free, deferred unless its
 * free_completed is the next entry.  A block whose free was requested
 * and has not completed cannot be freed again: such a trace is refused
 * (FALSE, r->error set), before the model sees it. */
static gboolean
replay_free_requested(Replay *r, const CcaEvent *ev, uint64_t index)
{
	/* (nothing below puts to or removes from the map before SLOT is used) */
	uint32_t slot = map_find(&r->live, ev->addr);
	CcaHandle v = slot != MAP_NO_SLOT ? r->live.values[slot] : CCA_NIL;
	if (v != CCA_NIL && (v & FREE_REQUESTED)) {
		if (!r->error)
			cca_check_double_free_error(&r->error, r->snap, index, ev->addr);
		return FALSE;
	}
	cause_begin(r, index, ev);
	const CcaEvent *next = window_peek(&r->in, 0, &r->error);
	bool immediate =
		next && next->action == CCA_ACTION_FREE_COMPLETED && next->addr == ev->addr;
	/* ... unless releases follow the completion in a trace that has shown
	 * a deferred free (blocks used on other streams): then it may instead
	 * be the next malloc's synchronisation completing such a block (free()
	 * and the synchronisation record the same pair); the block waits, and
	 * the completion is judged where it stands (completions_by_malloc()),
	 * applied there when it is no malloc's */
	if (immediate && r->seen_deferred) {
		const CcaEvent *after = window_peek(&r->in, 1, &r->error);
		if (after && is_release(after))
			immediate = false;
		next = window_peek(&r->in, 0, &r->error); /* the lookahead may move it */
	}
	if (!immediate &&
	    !(next && next->action == CCA_ACTION_FREE_COMPLETED && next->addr == ev->addr))
		r->seen_deferred = true;
	if (immediate)
		window_pop(&r->in);
	if (v == CCA_NIL || v == HANDLE_FAILED) {
		if (v == CCA_NIL)
			r->res->unknown_frees++;
		else if (!immediate) /* its free_completed is still to come */
			r->live.values[slot] = HANDLE_FAILED | FREE_REQUESTED;
		else
			map_remove_at(&r->live, slot);
		return TRUE;
	}
	/* unflagged: allocated, as only the engine frees a block it mapped */
	cca_allocator_free_block(r->alloc, v, !immediate);
	if (immediate) {
		map_remove_at(&r->live, slot);
	} else {
		r->live.values[slot] = v | FREE_REQUESTED;
		deferred_add(r, ev->addr, v, ev->size);
		r->res->deferred_frees++;
	}
	return TRUE;
}

/* Applies the free_completed entry EV, within the cause being handled. */
static void
complete_free_entry(Replay *r, const CcaEvent *ev)
{
	uint32_t slot = map_find(&r->live, ev->addr);
	if (slot == MAP_NO_SLOT)
		return;
	CcaHandle v = r->live.values[slot];
	CcaHandle h = HANDLE_OF(v);
	if (h != HANDLE_FAILED && !(v & FREE_REQUESTED))
		/* its free_requested was not recorded (skip_actions): the free
		 * happened here, and completed at once */
		cca_allocator_free_block(r->alloc, h, false);
	else if (h != HANDLE_FAILED && !deferred_timed(r, ev->addr) && !deferred_take(r, ev->addr))
		cca_allocator_complete_free(r->alloc, h);
	/* else the model's own synchronisation completed it (the malloc's
	 * cascade or an empty_cache() that came earlier here than in the
	 * recording): PyTorch has no entry left to act on, nor has the model
	 * (nothing above puts to or removes from the map: SLOT holds) */
	map_remove_at(&r->live, slot);
}

/* A free_completed entry, the last one popped: a cause of its own. */
static void
replay_free_completed(Replay *r, const CcaEvent *ev)
{
	cause_begin(r, r->in.position - 1, ev);
	complete_free_entry(r, ev);
}

static bool
is_release(const CcaEvent *ev)
{
	return ev->action == CCA_ACTION_SEGMENT_FREE || ev->action == CCA_ACTION_SEGMENT_UNMAP;
}

/* The burst of END entries at the window's head (recorded mode, no malloc
 * caused it) as a private pool's release (~MemPool: releasePool, then
 * emptyCache of that pool): it frees a small-pool segment before a
 * large-pool one (a pool releases its small blocks first; nothing else
 * does), each kind in the free set's (stream, size, address) order, whole
 * cached segments, but not those empty_cache() would free in its order.  Then the model releases
 * exactly those, the planning pass notes the pool (its segments' spans and the release), and the
 * burst's entries are consumed; returns whether it was one. */
static bool
replay_pool_release(Replay *r, uint32_t end)
{
	g_autoptr(GArray) freed = g_array_new(FALSE, FALSE, sizeof(uint64_t));
	CcaBurstOrder order = {0};
	CcaEvent last; /* the previous segment_free (a copy: the window may move) */
	const CcaEvent *prev = NULL;
	for (uint32_t i = 0; i < end; i++) {
		const CcaEvent *ev = window_peek(&r->in, i, &r->error);
		if (ev->action == CCA_ACTION_SEGMENT_UNMAP)
			return false; /* pages: whole reservations are the read's */
		if (ev->action != CCA_ACTION_SEGMENT_FREE)
			continue;
		bool is_small = ev->size == CCA_SMALL_BUFFER;
		/* a pool's free set is released in its order: small blocks by
		 * (stream, size, address), then large ones likewise */
		if (prev && (prev->size == CCA_SMALL_BUFFER) == is_small &&
		    (prev->stream > ev->stream ||
		     (prev->stream == ev->stream &&
		      (prev->size > ev->size ||
		       (prev->size == ev->size && prev->addr > ev->addr)))))
			return false;
		if (prev && prev->size != CCA_SMALL_BUFFER && is_small)
			return false;
		cca_plan_burst_order_note(&order, ev->size);
		g_array_append_val(freed, ev->addr);
		last = *ev;
		prev = &last;
	}
	if (!order.pool_order) /* only a private pool frees in this order */
		return false;
	g_autoptr(GArray) would = cca_allocator_cached_segments(r->alloc);
	if (freed->len == 0 ||
	    (would->len == freed->len &&
	     memcmp(would->data, freed->data, freed->len * sizeof(uint64_t)) == 0))
		return false;
	/* (the burst's first entry: a release) */
	cause_begin(r, r->in.position, window_peek(&r->in, 0, &r->error));
	if (!cca_allocator_release_segments(r->alloc, (const uint64_t *)freed->data, freed->len))
		return false;
	uint64_t position = r->in.position;
	uint32_t label = r->releases_found ? r->releases_found->len : 0;
	if (r->releases_found) {
		CcaPlanPoolRelease rel = {position, label, {0, 0}};
		g_array_append_val(r->releases_found, rel);
	}
	r->res->pool_releases++;
	for (uint32_t i = 0; i < end; i++) {
		CcaEvent copy = *window_peek(&r->in, 0, &r->error);
		window_pop(&r->in);
		if (copy.action == CCA_ACTION_FREE_COMPLETED) {
			replay_free_completed(r, &copy);
			continue;
		}
		gpointer from = NULL;
		if (r->segment_from &&
		    g_hash_table_steal_extended(r->segment_from, GSIZE_TO_POINTER(copy.addr), NULL,
						&from) &&
		    r->spans_found) {
			CcaPlanPoolSpan sp = {copy.addr, copy.size, GPOINTER_TO_SIZE(from) - 1,
					      position, label};
			g_array_append_val(r->spans_found, sp);
		}
	}
	return true;
}

/* The trace's completion at ADDRESS is the model's own output (its
 * malloc's synchronisation): the address is no longer the engine's to
 * complete. */
static void
forget_completed(Replay *r, uint64_t address)
{
	CcaHandle v = map_get(&r->live, address);
	if (v != CCA_NIL && (v & FREE_REQUESTED)) {
		map_remove(&r->live, address);
		deferred_take(r, address);
	}
}

/* The burst of END entries at the window's head (recorded mode), when
 * the plan's read found it to release whole expandable reservations of a
 * private pool (CcaPlan.reservation_releases): ~MemPool's emptyCache(id)
 * releases that pool (its small blocks, then its large ones), whose
 * requests were routed to it since each reservation's first map; the
 * burst's entries are the model's outputs and are consumed.  Returns
 * whether it was one. */
static bool
replay_reservation_release(Replay *r, uint32_t end)
{
	const GArray *rels = r->reservation_releases;
	while (rels && r->next_reservation_release < rels->len &&
	       g_array_index(rels, CcaPlanPoolRelease, r->next_reservation_release).position <
		       r->in.position)
		r->next_reservation_release++;
	r->scheduled_at = 0;
	if (!rels || r->next_reservation_release == rels->len)
		return false;
	const CcaPlanPoolRelease *rel =
		&g_array_index(rels, CcaPlanPoolRelease, r->next_reservation_release);
	if (rel->position != r->in.position)
		return false;
	r->next_reservation_release++;
	r->res->pool_releases++;
	cause_begin(r, r->in.position, window_peek(&r->in, 0, &r->error));
	cca_allocator_mempool_release(r->alloc, reservation_pool(r, rel->label));
	for (uint32_t i = 0; i < end; i++) {
		CcaEvent copy = *window_peek(&r->in, 0, &r->error);
		window_pop(&r->in);
		if (copy.action == CCA_ACTION_FREE_COMPLETED)
			replay_free_completed(r, &copy);
		else if (r->segment_from)
			g_hash_table_remove(r->segment_from, GSIZE_TO_POINTER(copy.addr));
	}
	return true;
}

/* The length of the burst of releases (and the completions among them)
 * at the window's head. */
static uint32_t
burst_length(Replay *r)
{
	uint32_t end = 0;
	const CcaEvent *ev;
	while ((ev = window_peek(&r->in, end, &r->error)) &&
	       (is_release(ev) || ev->action == CCA_ACTION_FREE_COMPLETED))
		end++;
	return end;
}

/* A burst of releases starts at the window's head (recorded mode):
 * decide whether the next malloc causes it or the program emptied the
 * cache, and act.  Returns false when the replay must stop: the burst
 * releases whole reservations of a private pool that an unread plan did
 * not route (needs_entries). */
static bool
replay_release_burst(Replay *r)
{
	uint32_t end = burst_length(r);
	const CcaEvent *ev;
	r->released_since_request = true;
	if (window_pool_burst(&r->in, r->in.position)) {
		r->needs_entries = true;
		return false;
	}
	if (replay_reservation_release(r, end))
		return true;
	/* a private pool's segments are released only once its MemPool or
	 * graph is gone: the recording releasing one says so */
	for (uint32_t i = 0; i < end; i++) {
		const CcaEvent *rel = window_peek(&r->in, i, &r->error);
		if (rel->action != CCA_ACTION_SEGMENT_FREE)
			continue;
		uint32_t pool = pool_of_address(r, rel->addr);
		if (pool != 0)
			cca_allocator_mempool_set_freeable(r->alloc, pool, true);
		for (guint j = 0; j < r->inferred_private->len; j++)
			if (g_array_index(r->inferred_private, PrivateSegment, j).address ==
			    rel->addr) {
				g_array_remove_index_fast(r->inferred_private, j);
				break;
			}
	}
	uint32_t k = end;
	while ((ev = window_peek(&r->in, k, &r->error)) &&
	       (ev->action == CCA_ACTION_SEGMENT_ALLOC || ev->action == CCA_ACTION_SEGMENT_MAP))
		k++;
	bool by_malloc = false;
	if (ev && (ev->action == CCA_ACTION_ALLOC || ev->action == CCA_ACTION_OOM)) {
		bool refuse = ev->action == CCA_ACTION_OOM &&
			      cca_allocator_allowed_maximum(r->alloc) == 0 && !r->opt->capacity_set;
		device_set_refuse(r->device, refuse);
		uint32_t pool = ev->action == CCA_ACTION_ALLOC ? pool_of_address(r, ev->addr) : 0;
		by_malloc = cca_allocator_would_release_in(r->alloc, ev->size, ev->stream, pool);
		device_set_refuse(r->device, false);
	}
	if (by_malloc) {
		/* The releases (and the completions their synchronisation
		 * caused) are the malloc's own outputs.  Its
		 * synchronize_and_free_events() walks PyTorch's events stream
		 * by stream, the streams in a hash map's order, keyed by the
		 * streams the blocks were used on, which no entry records: the
		 * model completes them in the recording's order. */
		for (uint32_t i = end; i-- > 0;) {
			const CcaEvent *c = window_peek(&r->in, i, &r->error);
			if (c->action != CCA_ACTION_FREE_COMPLETED)
				continue;
			CcaHandle v = map_get(&r->live, c->addr);
			if (v != CCA_NIL && (v & FREE_REQUESTED) && HANDLE_OF(v) != HANDLE_FAILED)
				cca_allocator_pending_first(r->alloc, HANDLE_OF(v));
		}
		for (uint32_t i = 0; i < end; i++) {
			const CcaEvent *rel = window_peek(&r->in, 0, &r->error);
			if (rel->action == CCA_ACTION_FREE_COMPLETED)
				forget_completed(r, rel->addr);
			else if (r->segment_from)
				g_hash_table_remove(r->segment_from, GSIZE_TO_POINTER(rel->addr));
			window_pop(&r->in);
		}
		return true;
	}
	if (replay_pool_release(r, end))
		return true;
	uint64_t position = r->in.position;
	g_array_append_val(r->empty_cache_found, position);
	r->res->empty_cache_calls++;
	if (r->cause != position) /* unless a pool's release was tried first */
		cause_begin(r, position, window_peek(&r->in, 0, &r->error));
	cca_allocator_empty_cache(r->alloc);
	for (uint32_t i = 0; i < end; i++) {
		CcaEvent copy = *window_peek(&r->in, 0, &r->error);
		window_pop(&r->in);
		if (copy.action == CCA_ACTION_FREE_COMPLETED)
			replay_free_completed(r, &copy);
		else if (r->segment_from)
			g_hash_table_remove(r->segment_from, GSIZE_TO_POINTER(copy.addr));
	}
	return true;
}

/* Do the releases among window entries [FROM, TO) free every segment that
 * release_cached_blocks() would after a synchronisation now? */
static bool
releases_cover(Replay *r, uint32_t from, uint32_t to)
{
	g_autoptr(GArray) whole = cca_allocator_segments_whole_after_sync(r->alloc);
	for (guint i = 0; i < whole->len; i++) {
		uint64_t base = g_array_index(whole, uint64_t, i);
		bool released = false;
		for (uint32_t k = from; k < to && !released; k++) {
			const CcaEvent *ev = window_peek(&r->in, k, &r->error);
			released = ev->action == CCA_ACTION_SEGMENT_FREE && ev->addr == base;
		}
		if (!released)
			return false;
	}
	return true;
}

/* Completions at the window's head that come right before a release or
 * an oom, with no request between, are the process_events of the malloc
 * that ends there, or its synchronisation: release_cached_blocks
 * completes every pending free before it releases, after the malloc's
 * lookup failed without them.  They are the synchronisation's when they
 * are every pending free and the malloc, with them still pending, goes
 * straight to release_cached_blocks (no cached block serves it, the cap
 * or the device refuses it, nothing else is released first).  Then they
 * are the malloc's outputs: the model keeps the blocks pending, its
 * synchronisation completes them in the trace's order, and they leave
 * the window here (true).  Otherwise they are applied where they appear
 * (false). */
static bool
completions_by_malloc(Replay *r)
{
	uint32_t n = 0, k;
	const CcaEvent *ev;
	while ((ev = window_peek(&r->in, n, &r->error)) && ev->action == CCA_ACTION_FREE_COMPLETED)
		n++;
	if (!ev || !(is_release(ev) || ev->action == CCA_ACTION_OOM))
		return false;
	for (k = n;
	     (ev = window_peek(&r->in, k, &r->error)) &&
	     (is_release(ev) || ev->action == CCA_ACTION_FREE_COMPLETED ||
	      ev->action == CCA_ACTION_SEGMENT_ALLOC || ev->action == CCA_ACTION_SEGMENT_MAP);
	     k++)
		;
	if (!ev || (ev->action != CCA_ACTION_ALLOC && ev->action != CCA_ACTION_OOM))
		return false;
	const CcaEvent request = *ev; /* the malloc's outcome */
	guint pending = 0;
	for (uint32_t i = 0; i < n; i++) {
		CcaHandle v = map_get(&r->live, window_peek(&r->in, i, &r->error)->addr);
		if (v != CCA_NIL && (v & FREE_REQUESTED) && HANDLE_OF(v) != HANDLE_FAILED &&
		    cca_allocator_is_pending(r->alloc, HANDLE_OF(v)))
			pending++;
	}
	if (pending == 0 || pending != cca_allocator_n_pending(r->alloc))
		return false;
	bool refuse = request.action == CCA_ACTION_OOM &&
		      cca_allocator_allowed_maximum(r->alloc) == 0 && !r->opt->capacity_set;
	uint32_t pool = request.action == CCA_ACTION_ALLOC ? pool_of_address(r, request.addr) : 0;
	device_set_refuse(r->device, refuse);
	bool held =
		cca_allocator_would_synchronize_in(r->alloc, request.size, request.stream, pool);
	device_set_refuse(r->device, false);
	if (!held)
		return false;
	/* release_cached_blocks() frees every segment whole after the
	 * synchronisation: a recording that kept one made no synchronisation
	 * here (the events had finished, and garbage collection freed what the
	 * malloc needed) */
	if (!releases_cover(r, n, k))
		return false;
	for (uint32_t i = n; i-- > 0;) {
		CcaHandle v = map_get(&r->live, window_peek(&r->in, i, &r->error)->addr);
		if (v != CCA_NIL && HANDLE_OF(v) != HANDLE_FAILED)
			cca_allocator_pending_first(r->alloc, HANDLE_OF(v));
	}
	for (uint32_t i = 0; i < n; i++) {
		if (r->synced_found) {
			uint64_t position = r->in.position;
			g_array_append_val(r->synced_found, position);
		}
		forget_completed(r, window_peek(&r->in, 0, &r->error)->addr);
		window_pop(&r->in);
	}
	return true;
}

/* What-if: is the completion at the window's head one that the
 * recording's malloc made in its synchronisation?  Its event had not
 * finished when that malloc began, so the malloc's lookup must not see it
 * here either: it is held (true) and applied after the next request
 * (replay_late_completions), unless this run's own synchronisation
 * completes it first. */
static bool
hold_synced_completion(Replay *r, const CcaEvent *ev)
{
	const GArray *at = r->synced_at;
	while (r->next_synced < at->len &&
	       g_array_index(at, uint64_t, r->next_synced) < r->in.position)
		r->next_synced++;
	if (r->next_synced == at->len ||
	    g_array_index(at, uint64_t, r->next_synced) != r->in.position ||
	    ev->action != CCA_ACTION_FREE_COMPLETED)
		return false;
	r->next_synced++;
	g_array_append_val(r->late, *ev);
	window_pop(&r->in);
	return true;
}

static void
replay_late_completions(Replay *r)
{
	if (G_LIKELY(r->late->len == 0))
		return;
	for (guint i = 0; i < r->late->len; i++)
		/* part of the request being handled: its cause */
		complete_free_entry(r, &g_array_index(r->late, CcaEvent, i));
	g_array_set_size(r->late, 0);
}

/* The first trace position at which one of maybe_empty_cache()'s loops
 * would act, UINT64_MAX when none would again. */
static uint64_t
scheduled_next(const Replay *r)
{
	uint64_t at = UINT64_MAX;
	if (r->pool_releases && r->next_pool_release < r->pool_releases->len)
		at = MIN(at,
			 g_array_index(r->pool_releases, CcaPlanPoolRelease, r->next_pool_release)
				 .position);
	const GArray *rels = r->reservation_releases;
	if (!r->recorded_mode && rels && r->next_reservation_release < rels->len)
		at = MIN(at, g_array_index(rels, CcaPlanPoolRelease, r->next_reservation_release)
				     .position);
	if (r->empty_cache_at && r->next_empty_cache < r->empty_cache_at->len)
		at = MIN(at, g_array_index(r->empty_cache_at, uint64_t, r->next_empty_cache));
	return at;
}

static void
maybe_empty_cache(Replay *r)
{
	if (G_LIKELY(r->in.position < r->scheduled_at))
		return;
	while (r->pool_releases && r->next_pool_release < r->pool_releases->len) {
		const CcaPlanPoolRelease *rel =
			&g_array_index(r->pool_releases, CcaPlanPoolRelease, r->next_pool_release);
		if (rel->position > r->in.position)
			break;
		r->next_pool_release++;
		r->res->pool_releases++;
		/* the entry at the head: the recording's first release */
		cause_begin(r, r->in.position, window_peek(&r->in, 0, &r->error));
		cca_allocator_mempool_release(r->alloc, released_pool(r, rel->label));
	}
	/* a what-if: the pools released with whole reservations, where the
	 * recording released them (a recorded replay releases them as it
	 * meets their bursts) */
	const GArray *rels = r->reservation_releases;
	while (!r->recorded_mode && rels && r->next_reservation_release < rels->len) {
		const CcaPlanPoolRelease *rel =
			&g_array_index(rels, CcaPlanPoolRelease, r->next_reservation_release);
		if (rel->position > r->in.position)
			break;
		r->next_reservation_release++;
		r->res->pool_releases++;
		cause_begin(r, r->in.position, window_peek(&r->in, 0, &r->error));
		cca_allocator_mempool_release(r->alloc, reservation_pool(r, rel->label));
	}
	while (r->empty_cache_at && r->next_empty_cache < r->empty_cache_at->len &&
	       g_array_index(r->empty_cache_at, uint64_t, r->next_empty_cache) <= r->in.position) {
		r->next_empty_cache++;
		r->res->empty_cache_calls++;
		/* the entry at the head: the recording's first release */
		cause_begin(r, r->in.position, window_peek(&r->in, 0, &r->error));
		cca_allocator_empty_cache(r->alloc);
	}
	r->scheduled_at = scheduled_next(r);
}

/* A recorded empty_cache() call at the window's head.  In recorded mode
 * the completions its synchronisation recorded come first: the model's
 * synchronisation makes them in that order, and they and the releases
 * after them are the call's own outputs. */
static void
apply_empty_cache_call(Replay *r)
{
	uint32_t n = 0;
	const CcaEvent *ev;
	if (r->recorded_mode) {
		while ((ev = window_peek(&r->in, n, &r->error)) &&
		       ev->action == CCA_ACTION_FREE_COMPLETED)
			n++;
		for (uint32_t i = n; i-- > 0;) {
			CcaHandle v = map_get(&r->live, window_peek(&r->in, i, &r->error)->addr);
			if (v != CCA_NIL && (v & FREE_REQUESTED) && HANDLE_OF(v) != HANDLE_FAILED)
				cca_allocator_pending_first(r->alloc, HANDLE_OF(v));
		}
	}
	r->res->empty_cache_calls++;
	r->res->recorded_calls_applied++;
	r->res->recorded_empty_cache_calls++;
	cause_begin(r, r->in.position, window_peek(&r->in, 0, &r->error));
	cca_allocator_empty_cache(r->alloc);
	if (!r->recorded_mode)
		return;
	for (uint32_t i = 0; i < n; i++) {
		forget_completed(r, window_peek(&r->in, 0, &r->error)->addr);
		window_pop(&r->in);
	}
	while ((ev = window_peek(&r->in, 0, &r->error)) && is_release(ev)) {
		if (r->segment_from)
			g_hash_table_remove(r->segment_from, GSIZE_TO_POINTER(ev->addr));
		r->released_since_request = true;
		window_pop(&r->in);
	}
}

/* A recorded mempool_release call C at the window's head: ~MemPool's
 * releasePool and emptyCache(id), which come before the calls after it
 * (an empty_cache() right after a del).  Where the plan found the pool's
 * release (CcaPlan.reservation_releases), a replay of the recording
 * applies that, the burst's entries its outputs (a what-if applied it in
 * maybe_empty_cache()); otherwise the pool C names, whose use_mem_pool
 * regions' requests went to it, is released here, and in a replay of the
 * recording the releases at the head are its outputs. */
static void
apply_mempool_release_call(Replay *r, const CcaCall *c)
{
	const GArray *rels = r->reservation_releases;
	for (guint i = 0; rels && i < rels->len; i++)
		if (g_array_index(rels, CcaPlanPoolRelease, i).position == r->in.position) {
			const CcaEvent *head = window_peek(&r->in, 0, &r->error);
			if (r->recorded_mode && head && is_release(head))
				replay_reservation_release(r, burst_length(r));
			return;
		}
	int k = cca_allocator_mempool(r->alloc, c->pool);
	if (k <= 0)
		return;
	r->res->pool_releases++;
	r->res->recorded_calls_applied++;
	cause_begin(r, r->in.position, window_peek(&r->in, 0, &r->error));
	cca_allocator_mempool_release(r->alloc, (uint32_t)k);
	const CcaEvent *ev;
	while (r->recorded_mode && (ev = window_peek(&r->in, 0, &r->error)) && is_release(ev)) {
		if (r->segment_from)
			g_hash_table_remove(r->segment_from, GSIZE_TO_POINTER(ev->addr));
		r->released_since_request = true;
		window_pop(&r->in);
	}
}

/* Applies the recorded calls that came before the entry at the window's
 * head (both modes: they are the program's, whatever the settings). */
static void
apply_calls(Replay *r)
{
	const GArray *calls = r->calls->calls;
	while (r->next_call < calls->len) {
		const CcaCall *c = &g_array_index(calls, CcaCall, r->next_call);
		if (c->in_window && c->position > r->in.position)
			break;
		r->next_call++;
		if (!c->in_window)
			continue;
		switch (c->kind) {
		case CCA_CALL_MEMPOOL_RELEASE:
			apply_mempool_release_call(r, c);
			break;
		case CCA_CALL_EMPTY_CACHE:
			apply_empty_cache_call(r);
			break;
		case CCA_CALL_SET_SETTINGS: {
			g_auto(CcaSettings) s = {0};
			cca_settings_copy(&s, cca_allocator_settings(r->alloc));
			/* the plan parsed the string: it cannot fail here, but a
			 * string ccasim cannot model leaves the settings be */
			if (cca_settings_parse_onto(&s, c->text, NULL))
				cca_allocator_set_settings(r->alloc, &s);
			r->res->recorded_calls_applied++;
			break;
		}
		case CCA_CALL_MEMORY_FRACTION:
			cca_allocator_set_memory_fraction(r->alloc, c->fraction);
			r->res->recorded_calls_applied++;
			break;
		case CCA_CALL_RESET_PEAK:
			cca_allocator_reset_peak_stats(r->alloc);
			r->res->recorded_calls_applied++;
			break;
		case CCA_CALL_RESET_ACCUMULATED:
			cca_allocator_reset_accumulated_stats(r->alloc);
			r->res->recorded_calls_applied++;
			break;
		default: /* the others change nothing a replay models */
			break;
		}
	}
}

/* Online burst detection (Replay.online_bursts) at the entry the window's
 * head holds, of action ACTION, as the plan's read would find it: a
 * release after anything but a release or free_completed opens a burst,
 * the program's empty_cache().  A burst whose next request is an oom may
 * be that oom's own release, and one that frees a small-pool segment
 * before a large one a private pool's (CcaPlan.burst_may_release_pool),
 * and so is one that unmaps whole reservations, a small-pool one before
 * a large-pool one (CcaPlanReservations): then only the read plan can
 * tell or route, and the replay stops with needs_entries set (returns
 * false). */
static bool
online_burst(Replay *r, uint8_t action)
{
	if (action == CCA_ACTION_FREE_COMPLETED)
		return true;
	if (action != CCA_ACTION_SEGMENT_FREE && action != CCA_ACTION_SEGMENT_UNMAP) {
		r->in_burst = false;
		return true;
	}
	if (r->in_burst)
		return true;
	r->in_burst = true;
	uint32_t k = 0;
	const CcaEvent *ev;
	CcaBurstOrder order = {0};
	while ((ev = window_peek(&r->in, k, &r->error)) &&
	       (is_release(ev) || ev->action == CCA_ACTION_FREE_COMPLETED ||
		ev->action == CCA_ACTION_SEGMENT_ALLOC || ev->action == CCA_ACTION_SEGMENT_MAP)) {
		if (ev->action == CCA_ACTION_SEGMENT_FREE)
			cca_plan_burst_order_note(&order, ev->size);
		k++;
	}
	if (order.pool_order || (ev && ev->action == CCA_ACTION_OOM) ||
	    window_pool_burst(&r->in, r->in.position)) {
		r->needs_entries = true;
		return false;
	}
	uint64_t position = r->in.position;
	g_array_append_val(r->empty_cache_found, position);
	r->res->empty_cache_calls++;
	cause_begin(r, r->in.position, window_peek(&r->in, 0, &r->error));
	cca_allocator_empty_cache(r->alloc);
	return true;
}

/* The main loop; returns false on a read error (r->error). */
static bool
replay_loop(Replay *r)
{
	GString *why = r->opt->check_invariants ? g_string_new(NULL) : NULL;
	/* an observer or the invariants see every entry */
	const bool watched = r->opt->observer != NULL || why != NULL;
	const CcaEvent *peeked;
	while ((peeked = window_peek(&r->in, 0, &r->error))) {
		maybe_empty_cache(r);
		if (r->calls) {
			apply_calls(r);
			if (!(peeked = window_peek(&r->in, 0, &r->error)))
				break;
		}
		if (r->online_bursts) {
			/* only a release may begin a burst (online_burst()) */
			uint8_t action = peeked->action;
			if (G_UNLIKELY(action == CCA_ACTION_SEGMENT_FREE ||
				       action == CCA_ACTION_SEGMENT_UNMAP)) {
				if (!online_burst(r, action))
					break;
				/* the lookahead may move it */
				peeked = window_peek(&r->in, 0, &r->error);
			} else if (action != CCA_ACTION_FREE_COMPLETED) {
				r->in_burst = false;
			}
		}
		if (r->recorded_mode && is_release(peeked)) {
			if (!replay_release_burst(r))
				break;
			continue;
		}
		if (r->recorded_mode && peeked->action == CCA_ACTION_FREE_COMPLETED) {
			if (completions_by_malloc(r))
				continue;
			peeked = window_peek(&r->in, 0, &r->error); /* its lookahead may move it */
		}
		if (r->synced_at) {
			if (hold_synced_completion(r, peeked))
				continue;
			peeked = window_peek(&r->in, 0, &r->error);
		}
		/* the entry outlives its pop: events read in place stay where
		 * they are, and a ring keeps the slots popped last
		 * (WINDOW_SPARE) */
		const CcaEvent *ev = peeked;
		window_pop(&r->in);
		bool go_on = true;
		if (is_release(ev))
			r->released_since_request = true;
		else if (ev->action == CCA_ACTION_ALLOC || ev->action == CCA_ACTION_FREE_REQUESTED)
			r->released_since_request = false;
		switch (ev->action) {
		case CCA_ACTION_ALLOC:
			go_on = replay_alloc(r, ev);
			break;
		case CCA_ACTION_FREE_REQUESTED:
			go_on = replay_free_requested(r, ev, r->in.position - 1);
			break;
		case CCA_ACTION_FREE_COMPLETED:
			replay_free_completed(r, ev);
			break;
		case CCA_ACTION_OOM:
			replay_recorded_oom(r, ev);
			break;
		case CCA_ACTION_SEGMENT_ALLOC:
			r->last_segment_alloc = *ev;
			r->have_segment_alloc = true;
			if (r->segment_from)
				g_hash_table_insert(r->segment_from, GSIZE_TO_POINTER(ev->addr),
						    GSIZE_TO_POINTER(r->in.position));
			break;
		default: /* segment entries are outputs; snapshot entries nothing */
			break;
		}
		if (G_UNLIKELY(cca_allocator_reserved(r->alloc) > CCA_REPLAY_MAX_RESERVED)) {
			if (!r->error)
				g_set_error(&r->error, CCA_INPUT_ERROR, CCA_INPUT_ERROR_LIMIT,
					    "%s: event %" G_GUINT64_FORMAT
					    ": %s: the model holds %" G_GUINT64_FORMAT
					    " bytes, more than 256 TiB (2^48 bytes), more than any "
					    "device",
					    r->snap->source, r->in.position - 1,
					    cca_event_action_name(ev->action),
					    cca_allocator_reserved(r->alloc));
			break;
		}
		cca_figures_observe(&r->res->figures, r->in.position - 1, ev, r->alloc);
		if (G_UNLIKELY(watched)) {
			if (r->opt->observer)
				r->opt->observer(r->opt->observer_data, r->in.position - 1, ev,
						 r->alloc);
			if (why && !cca_allocator_check_invariants(r->alloc, why))
				g_error("invariant broken after event %" G_GUINT64_FORMAT ": %s",
					r->in.position - 1, why->str);
		}
		if (!go_on || (r->diverged && !r->expect))
			break;
		if (G_UNLIKELY(r->opt->stop_after && r->in.position >= r->opt->stop_after)) {
			r->res->stopped_after = true;
			break;
		}
	}
	/* calls after the last entry (a stats reset before the dump) */
	if (r->calls && r->in.at_end && r->in.len == 0 && !r->error && !r->res->stopped_by_oom &&
	    !r->res->stopped_after)
		apply_calls(r);
	if (why)
		g_string_free(why, TRUE);
	r->res->events = r->in.position;
	return r->error == NULL;
}

/* ------------------------------------------------------ final state */

static const char *
state_name(CcaBlockState s)
{
	return cca_event_block_state_name(s);
}

static void
check_final_state(Replay *r)
{
	CcaReplayResult *res = r->res;
	GArray *model = cca_allocator_state(r->alloc);
	const CcaSnapshot *snap = r->snap;
	guint mi = 0;
	GString *msg = NULL;
	for (guint si = 0; si < snap->segments->len && !msg; si++) {
		const CcaSnapSegment *s = &g_array_index(snap->segments, CcaSnapSegment, si);
		if (s->device != r->opt->device)
			continue;
		if (mi >= model->len) {
			msg = g_string_new(NULL);
			g_string_printf(
				msg,
				"final state: the snapshot has segment 0x%" G_GINT64_MODIFIER
				"x (%" G_GUINT64_FORMAT " bytes) that the model lacks",
				s->address, s->total_size);
			break;
		}
		const CcaStateSegment *m = &g_array_index(model, CcaStateSegment, mi++);
		if (m->address != s->address || m->total_size != s->total_size ||
		    m->n_blocks != s->n_blocks) {
			msg = g_string_new(NULL);
			g_string_printf(msg,
					"final state: snapshot segment 0x%" G_GINT64_MODIFIER
					"x of %" G_GUINT64_FORMAT
					" bytes in %u blocks, model 0x%" G_GINT64_MODIFIER
					"x of %" G_GUINT64_FORMAT " in %zu",
					s->address, s->total_size, s->n_blocks, m->address,
					m->total_size, m->n_blocks);
			break;
		}
		for (uint32_t b = 0; b < s->n_blocks; b++) {
			const CcaSnapBlock *sb =
				&g_array_index(snap->blocks, CcaSnapBlock, s->first_block + b);
			const CcaStateBlock *mb = &m->blocks[b];
			bool active = sb->state != CCA_BLOCK_INACTIVE;
			if (sb->address != mb->address || sb->size != mb->size ||
			    sb->state != mb->state ||
			    (active && sb->requested_size != mb->requested_size)) {
				msg = g_string_new(NULL);
				g_string_printf(msg,
						"final state: block 0x%" G_GINT64_MODIFIER
						"x: snapshot %s %" G_GUINT64_FORMAT
						" bytes, model 0x%" G_GINT64_MODIFIER
						"x %s %" G_GUINT64_FORMAT " bytes",
						sb->address, state_name(sb->state), sb->size,
						mb->address, state_name(mb->state), mb->size);
				break;
			}
		}
	}
	if (!msg && mi < model->len) {
		const CcaStateSegment *m = &g_array_index(model, CcaStateSegment, mi);
		msg = g_string_new(NULL);
		g_string_printf(msg,
				"final state: the model has segment 0x%" G_GINT64_MODIFIER
				"x (%" G_GUINT64_FORMAT " bytes) that the snapshot lacks",
				m->address, m->total_size);
	}
	cca_allocator_state_free(model);
	if (msg && res->check_passed) {
		res->check_passed = false;
		res->check_message = g_string_free(msg, FALSE);
	} else if (msg) {
		g_string_free(msg, TRUE);
	}
}

static void
check_trace_exhausted(Replay *r)
{
	CcaEvent trace;
	if (r->res->check_passed && expect_next(r, &trace))
		check_fail(r, "the trace has entries the model did not produce", &trace, NULL);
}

/* ------------------------------------------------------------ driver */

uint32_t
cca_replay_guess_pytorch_version(const CcaSnapshot *snap)
{
	return cca_plan_detect_release(snap, NULL);
}

char *
cca_replay_rules_reason(const CcaSnapshot *snap, uint32_t applied)
{
	g_autofree char *why = NULL;
	uint32_t detected = snap ? cca_plan_detect_release(snap, &why) : 0;
	if (snap && applied == detected)
		return g_strdup_printf("detected: %s", why);
	if (!snap)
		return g_strdup("asked for (--pytorch-version)");
	return g_strdup_printf("asked for (--pytorch-version); the trace is %u.%u (%s)",
			       detected / 100, detected % 100, why);
}

void
cca_replay_options_init(CcaReplayOptions *options)
{
	memset(options, 0, sizeof *options);
	options->address_model = CCA_ADDRESS_DRIVER;
	options->bound_threads = 1;
}

void
cca_replay_result_clear(CcaReplayResult *result)
{
	g_free(result->check_message);
	memset(result, 0, sizeof *result);
}

/* The address space of one expandable reservation: 1 1/8 of the device
 * memory in whole pages.  The small pool's 2 MiB pages give the smaller
 * span; a map further than that from every known base opens a new
 * reservation (the driver places reservations at least a span apart). */
static uint64_t
reservation_span(uint64_t total_memory)
{
	return cca_pytorch_reservation_size(total_memory, CCA_EXPANDABLE_GRANULE);
}

/* One pass.  EMPTY_CACHE_AT (what-if) gives where empty_cache() is
 * called; FOUND (recorded mode) receives the positions it infers. */
/* Seeds the model with the state the trace started from. */
static void
seed_start(Replay *r, const CcaStartState *start)
{
	CcaReplayResult *res = r->res;
	res->start_reconstructed = true;
	res->start_expandable_missing = start->has_expandable;
	for (guint i = 0; i < start->reservations->len; i++) {
		const CcaStartReservation *v =
			&g_array_index(start->reservations, CcaStartReservation, i);
		cca_allocator_seed_reservation(r->alloc, v->base, v->stream, v->is_small);
	}
	for (guint i = 0; i < start->segments->len; i++) {
		const CcaStartSegment *s = &g_array_index(start->segments, CcaStartSegment, i);
		if (!s->is_expandable) {
			cca_allocator_seed_segment(r->alloc, s->address, s->size, s->stream,
						   s->is_small);
			/* cca_rewind_start_state() refused overlapping ones */
			const LiveSegment *other =
				segments_add(r->in.check.segments, s->address, s->size);
			g_assert(other == NULL);
		} else if (!cca_allocator_seed_mapped(r->alloc, s->address, s->size))
			res->start_expandable_missing = true;
		res->start_segments++;
	}
	for (guint i = 0; i < start->blocks->len; i++) {
		const CcaStartBlock *b = &g_array_index(start->blocks, CcaStartBlock, i);
		CcaHandle h = cca_allocator_seed_block(r->alloc, b->address, b->size,
						       b->requested_size, b->pending);
		if (h == CCA_NIL) {
			res->start_blocks_unplaced++;
			continue;
		}
		map_put(&r->live, b->address, b->pending ? h | FREE_REQUESTED : h);
		if (b->pending)
			deferred_add(r, b->address, h, b->size);
		res->start_blocks++;
		res->start_live_bytes += b->size;
	}
	cca_allocator_seed_finish(r->alloc);
	res->start_reserved = cca_allocator_reserved(r->alloc);
}

/* Whether the state seed_start() rebuilt fits under the replay's limits:
 * PyTorch's alloc_block() never lets the bytes reserved pass the allowed
 * maximum, and a device never holds more than its memory.  A start that
 * holds more means the program could not have reached the window under
 * them: the replay records an OOM before the window's first entry
 * (doc/whatif.md, "Windows") and replays nothing. */
static bool
start_fits(Replay *r)
{
	CcaReplayResult *res = r->res;
	uint64_t allowed = cca_allocator_allowed_maximum(r->alloc);
	bool over_cap = allowed != 0 && res->start_reserved > allowed;
	bool over_device = r->opt->capacity_set && r->device->ops->would_refuse(r->device, 0);
	if (!over_cap && !over_device)
		return true;
	const CcaStats *st = cca_allocator_stats(r->alloc);
	res->oom_before_window = true;
	res->unexpected_ooms = 1;
	res->stopped_by_oom = true;
	res->oom_event = 0;
	res->oom_reserved = res->start_reserved;
	res->oom_allocated = (uint64_t)st->allocated_bytes[CCA_STAT_ALL].current;
	res->oom_free = r->device->ops->free_memory(r->device);
	res->oom_largest_free = cca_allocator_largest_free(r->alloc);
	return false;
}

/* What one pass of the replay loop takes (run_pass()). */
typedef struct {
	const CcaPlan *plan;
	const CcaReplayOptions *opt;
	const CcaSettings *settings;  /* the settings replayed */
	bool recorded_mode;	      /* the recording's own conditions */
	RecordedAddresses *addresses; /* the recorded addresses to place segments at, or NULL */
	const GArray *empty_cache_at; /* the plan's empty_cache() positions, or NULL */
	const GArray *synced_at;      /* the plan's synchronising mallocs, or NULL */
	bool online_bursts;	      /* find empty_cache() bursts as the entries are read */
	/* filled when not NULL: empty_cache() positions, synchronising
	 * mallocs, private pools' spans and releases found */
	GArray *found, *synced_found, *spans_found, *releases_found;
	CcaReplayResult *res;
	bool *needs_entries;	   /* set when the plan must read the entries; may be NULL */
	uint64_t *segment_entries; /* segment entries read; may be NULL */
} Pass;

/* The bound models (cca_simdevice_bound_models()) other than OWN, as a
 * mask of 1u << CcaAddressModel. */
static uint32_t
shadow_models(CcaAddressModel own)
{
	guint n;
	const CcaAddressModel *models = cca_simdevice_bound_models(&n);
	uint32_t mask = 0;
	for (guint m = 0; m < n; m++)
		if (models[m] != own)
			mask |= 1u << models[m];
	return mask;
}

static gboolean
run_pass(const Pass *pass, GError **error)
{
	const CcaPlan *plan = pass->plan;
	const CcaReplayOptions *opt = pass->opt;
	const CcaSettings *settings = pass->settings;
	bool recorded_mode = pass->recorded_mode;
	RecordedAddresses *addresses = pass->addresses;
	const GArray *empty_cache_at = pass->empty_cache_at;
	const GArray *synced_at = pass->synced_at;
	bool online_bursts = pass->online_bursts;
	GArray *found = pass->found, *synced_found = pass->synced_found;
	GArray *spans_found = pass->spans_found, *releases_found = pass->releases_found;
	CcaReplayResult *res = pass->res;
	bool *needs_entries = pass->needs_entries;
	uint64_t *segment_entries = pass->segment_entries;
	const CcaSnapshot *snap = plan->snap;
	const CcaStartState *start = plan->mid_run ? &plan->start : NULL;
	CcaSimDeviceConfig dc = {
		.total_memory = opt->device_memory ? opt->device_memory : CCA_H200_TOTAL_MEMORY,
		.capacity = opt->capacity_set ? opt->device_memory : 0,
		.address_model = addresses ? CCA_ADDRESS_RECORDED : opt->address_model,
	};
	if (addresses) {
		dc.segment_bases = addresses->segment_bases;
		dc.reservation_bases = addresses->reservation_bases;
	}
	Replay r = {
		.snap = snap,
		.opt = opt,
		.res = res,
		.recorded_mode = recorded_mode,
		.empty_cache_at = empty_cache_at,
		.empty_cache_found = found,
		.synced_found = synced_found,
		.synced_at = synced_at,
		.online_bursts = online_bursts,
		.spans_found = spans_found,
		.releases_found = releases_found,
		.cause = CCA_REPLAY_NO_CAUSE,
		.completion = recorded_mode ? CCA_COMPLETION_RECORDED : opt->completion,
	};
	if (recorded_mode)
		r.segment_from = g_hash_table_new(NULL, NULL);
	else if (empty_cache_at) /* the planning pass ran, or the bursts are known */
		r.pool_spans = plan->pool_spans, r.pool_releases = plan->pool_releases;
	r.device = opt->make_device ? opt->make_device(opt->make_device_data, &dc)
				    : cca_simdevice_new(&dc);
	/* a what-if counting its ties follows the other address models too:
	 * those that decide every tie as it does give its run (shadow.h) */
	bool shadowed =
		opt->count_address_ties && !recorded_mode && !addresses && !opt->make_device;
	if (shadowed)
		r.device = cca_shadow_new(r.device, shadow_models(opt->address_model), &dc);
	CcaLimits limits = {.memory_fraction = opt->memory_fraction};
	res->check_passed = true;
	if (opt->check && recorded_mode) {
		res->check_ran = true;
		r.expect = cca_event_cursor_new(snap, opt->device);
	}
	/* the model's entries matter to an observer, to --check and to a
	 * replay of the recording (its segments); a what-if nobody watches
	 * needs none built */
	bool hear_model = opt->on_model_event || recorded_mode || r.expect;
	r.alloc = cca_allocator_new(settings, &limits, r.device, hear_model ? on_model_event : NULL,
				    &r);
	/* under 2.12+ rules the ties a counter decides are always counted
	 * (reported as what 2.11 decided by address) */
	cca_allocator_count_address_ties(r.alloc,
					 opt->count_address_ties ||
						 cca_rules_for(settings->pytorch_version)->order !=
							 CCA_ORDER_ADDRESS);
	if (shadowed)
		cca_allocator_on_address_tie(r.alloc, cca_shadow_tie, r.device);
	/* without --check or a listener of every entry, a replay of the
	 * recording needs its segment_allocs alone (divergence) */
	if (hear_model && !r.expect && (!opt->on_model_event || opt->model_segments_only))
		cca_allocator_emit_only(r.alloc, 1u << CCA_ACTION_SEGMENT_ALLOC |
							 1u << CCA_ACTION_SEGMENT_FREE |
							 1u << CCA_ACTION_SEGMENT_MAP |
							 1u << CCA_ACTION_SEGMENT_UNMAP);
	res->allowed_maximum = cca_allocator_allowed_maximum(r.alloc);
	r.calls = plan->calls;
	r.private_segments = private_segments_new(plan, r.alloc);
	r.inferred_private = g_array_new(FALSE, FALSE, sizeof(PrivateSegment));
	r.deferred = g_array_new(FALSE, FALSE, sizeof(Deferred));
	r.late = g_array_new(FALSE, FALSE, sizeof(CcaEvent));
	window_init(&r.in, snap, opt->device);
	/* The replayed trace's own addresses arrive as it is read: the
	 * segment_alloc (or first map) a cudaMalloc borrows precedes the
	 * alloc it serves. */
	if (recorded_mode)
		r.feed = addresses;
	/* the plan checked every entry, unless it left them unread or a
	 * rebuilt start's segments must be part of the check */
	r.in.trusted = plan->entries_read && (start == NULL || !start->mid_run);
	if (recorded_mode && !plan->entries_read)
		r.in.feed = addresses;
	if (plan->entries_read) {
		r.reservation_spans = plan->reservation_spans;
		r.reservation_releases = plan->reservation_releases;
		r.pool_regions = plan->pool_regions;
	} else {
		r.in.reservations = g_new(CcaPlanReservations, 1);
		cca_plan_reservations_init(r.in.reservations);
		r.in.pool_bursts = g_array_new(FALSE, FALSE, sizeof(uint64_t));
	}
	map_init(&r.live, 1024);
	bool reached = true;
	if (start && start->mid_run) {
		seed_start(&r, start);
		reached = start_fits(&r);
	}
	gboolean ok = reached ? replay_loop(&r) : TRUE;
	r.cause = CCA_REPLAY_NO_CAUSE;
	r.cause_event = NULL;
	if (ok && opt->on_finish)
		opt->on_finish(opt->on_finish_data, r.alloc);
	if (ok && r.feed && !r.expect && !r.diverged && r.in.at_end &&
	    r.model_segments != r.feed->segment_sizes->len)
		r.diverged = true;
	res->diverged_from_recording = r.diverged && !r.expect;
	if (ok && r.expect) {
		if (!res->stopped_by_oom)
			check_trace_exhausted(&r);
		if (!res->stopped_by_oom)
			check_final_state(&r);
	}
	if (!ok)
		g_propagate_error(error, r.error);
	res->stats = *cca_allocator_stats(r.alloc);
	res->reserved_at_peak = res->figures.reserved_peak.reserved;
	res->allocated_at_peak = res->figures.reserved_peak.allocated;
	res->address_ties = cca_allocator_address_ties(r.alloc);
	res->reach = cca_allocator_reach(r.alloc);
	res->split_seen = start && start->mid_run ? (CcaSplitSeen){.below = UINT64_MAX, .from = 0}
						  : cca_allocator_split_seen(r.alloc);
	res->counter_ties = cca_allocator_counter_ties(r.alloc);
	res->oom_rejections = cca_allocator_oom_rejections(r.alloc);
	res->address_ties_counted = opt->count_address_ties;
	res->same_under = shadowed ? cca_shadow_same(r.device) : 0;
	if (segment_entries)
		*segment_entries = r.in.segment_entries;
	if (needs_entries)
		*needs_entries = r.needs_entries;
	map_clear(&r.live);
	g_array_free(r.private_segments, TRUE);
	g_array_free(r.inferred_private, TRUE);
	if (r.segment_from)
		g_hash_table_destroy(r.segment_from);
	g_array_free(r.deferred, TRUE);
	g_array_free(r.late, TRUE);
	window_clear(&r.in);
	if (r.expect)
		cca_event_cursor_free(r.expect);
	cca_allocator_free(r.alloc);
	cca_device_free(r.device);
	return ok;
}

static gint total_replays, total_planning; /* atomic */

void
cca_replay_totals(uint64_t *replays, uint64_t *planning)
{
	if (replays)
		*replays = (uint64_t)g_atomic_int_get(&total_replays);
	if (planning)
		*planning = (uint64_t)g_atomic_int_get(&total_planning);
}

/* RA: the recorded addresses of PLAN's trace, its reservations told apart
 * by SPAN (those of a rebuilt start were in use before the trace began). */
static void
addresses_from_plan(RecordedAddresses *ra, const CcaPlan *plan, uint64_t span)
{
	addresses_init(ra, span);
	g_array_append_vals(ra->segment_bases, plan->segment_bases->data, plan->segment_bases->len);
	g_array_append_vals(ra->segment_sizes, plan->segment_sizes->data, plan->segment_sizes->len);
	if (plan->mid_run)
		for (guint i = 0; i < plan->start.reservations->len; i++)
			g_array_append_val(
				ra->known_reservations,
				g_array_index(plan->start.reservations, CcaStartReservation, i)
					.base);
	for (guint i = 0; i < plan->map_addresses->len; i++) {
		CcaEvent ev = {.action = CCA_ACTION_SEGMENT_MAP,
			       .addr = g_array_index(plan->map_addresses, uint64_t, i)};
		addresses_note(ra, &ev);
	}
}

gboolean
cca_replay_find_empty_cache(const CcaPlan *plan, double memory_fraction, uint64_t device_memory,
			    bool capacity_set, GArray *found, GArray *synced, GArray *spans,
			    GArray *releases, GError **error)
{
	CcaReplayOptions opt;
	cca_replay_options_init(&opt);
	opt.device = plan->device;
	opt.memory_fraction = memory_fraction;
	opt.device_memory = device_memory;
	opt.capacity_set = capacity_set;
	opt.keep_going = true;
	RecordedAddresses own;
	addresses_from_plan(
		&own, plan,
		reservation_span(device_memory ? device_memory : CCA_H200_TOTAL_MEMORY));
	CcaReplayResult scratch;
	memset(&scratch, 0, sizeof scratch);
	g_atomic_int_inc(&total_planning);
	Pass pass = {
		.plan = plan,
		.opt = &opt,
		.settings = &plan->recorded,
		.recorded_mode = true,
		.addresses = &own,
		.found = found,
		.synced_found = synced,
		.spans_found = spans,
		.releases_found = releases,
		.res = &scratch,
	};
	gboolean ok = run_pass(&pass, error);
	cca_replay_result_clear(&scratch);
	addresses_clear(&own);
	return ok;
}

/* A cap of FRACTION: none at or past the whole device. */
static double
cap_fraction(double fraction)
{
	return fraction > 0.0 && fraction < 1.0 ? fraction : 0.0;
}

/* The planning pass: where the program called empty_cache(), a model pass over the
 * trace under its recorded settings and addresses, and the cap the
 * recording ran under (MEMORY_FRACTION, DEVICE_MEMORY, CAPACITY_SET as in
 * CcaReplayOptions; a what-if assumes none).  Only a trace with releases
 * needs it; without, the positions are known to be none at once.  Nor
 * does one recorded without a cap (none given, none in its recorded
 * settings) whose bursts are followed by no oom entry: with no cap no
 * malloc collects garbage or sees cudaMalloc fail, so every burst is an
 * empty_cache() call, at the burst's first entry.  Runs at
 * most once per plan (thread-safe): a later call returns the stored
 * positions, and *RAN (may be NULL) says whether this call replayed.
 * Returns FALSE with ERROR on a read error. */
static gboolean
plan_find_empty_cache(CcaPlan *p, double memory_fraction, uint64_t device_memory, bool capacity_set,
		      bool *ran, GError **error)
{
	if (ran)
		*ran = false;
	g_mutex_lock(&p->lock);
	gboolean ok = TRUE;
	if (!p->empty_cache_known) {
		bool capped = memory_fraction > 0.0 || capacity_set || p->calls_set_fraction ||
			      p->recorded.has_per_process_memory_fraction;
		if (p->has_releases && !capped && !p->burst_before_oom &&
		    !p->burst_may_release_pool) {
			/* no cap, so no garbage collection and no cudaMalloc
			 * failure: no malloc releases memory, and every burst
			 * is the program's empty_cache(), but a pool's release
			 * and a recorded call's */
			cca_plan_bursts_as_empty_cache(p);
		} else if (p->has_releases) {
			ok = cca_replay_find_empty_cache(
				p, memory_fraction, device_memory, capacity_set, p->empty_cache_at,
				p->synced_at, p->pool_spans, p->pool_releases, error);
			if (ran)
				*ran = ok;
		}
		if (ok)
			cca_plan_set_empty_cache_known(p, memory_fraction, device_memory,
						       capacity_set);
	}
	g_mutex_unlock(&p->lock);
	return ok;
}


/* Replays under PLAN (see cca_replay_run()).  A plan whose entries were
 * not read is taken at its word: *REDO is set when the replay met what
 * only a read of every entry could have told (a free of a block the trace
 * never allocated: it started mid-run; a segment entry in a trace taken
 * for requests alone), and the replay must then be done again with the
 * entries read. */
static gboolean
replay_planned(const CcaSnapshot *snap, const CcaReplayOptions *opt, CcaPlan *plan,
	       CcaReplayResult *res, bool *redo, GError **error)
{
	res->pytorch_version = plan->pytorch_version;
	res->trace_release = plan->trace_release;
	/* a what-if across releases: the recording's settings under the
	 * asked release's rules (doc/versions.md) */
	g_auto(CcaSettings) upgraded = {0};
	if (!opt->settings && plan->across_releases) {
		cca_settings_copy(&upgraded, &plan->recorded);
		upgraded.pytorch_version = plan->pytorch_version;
	}
	const CcaSettings *settings =
		opt->settings ? opt->settings
			      : (plan->across_releases ? &upgraded : &plan->recorded);
	/* keys that change no device memory (notes) do not make a what-if */
	bool same_settings = !opt->settings || opt->check ||
			     cca_settings_same_model(opt->settings, &plan->recorded);
	/* The rule (replay.h): decided here, never by replaying. */
	bool same_cap =
		cap_fraction(opt->memory_fraction) == cap_fraction(opt->recorded_memory_fraction) &&
		opt->capacity_set == opt->recorded_capacity_set;
	bool requests_only = !plan->has_segments && !plan->has_segment_entries;
	/* garbage collection acts only under a cap, which PyTorch does not
	 * record: a recording with a threshold and no known cap ran under
	 * one that is unknown, so it cannot be reproduced */
	bool uncapped = cap_fraction(opt->memory_fraction) == 0.0 && !opt->capacity_set &&
			!plan->recorded.has_per_process_memory_fraction &&
			!plan->calls_set_fraction;
	bool gc_without_cap = plan->recorded.garbage_collection_threshold > 0.0 && uncapped &&
			      !opt->gc_uncapped_recorded;
	/* a what-if across releases replays the requests alone, unless
	 * --check asks whether the trace follows the asked release's rules */
	bool recorded_mode = same_settings && opt->addresses_from == NULL &&
			     (opt->check || (!plan->across_releases && same_cap && !requests_only &&
					     !gc_without_cap && !opt->force_whatif));
	res->whatif = !recorded_mode;
	/* a what-if needs the entries' facts (releases, addresses), except
	 * on a trace of requests alone, which has none, and of a recording
	 * without a cap, whose bursts of releases are all empty_cache() calls
	 * but one before an oom: those the replay finds as it reads */
	bool recorded_uncapped =
		cap_fraction(opt->recorded_memory_fraction) == 0.0 && !opt->recorded_capacity_set &&
		!plan->recorded.has_per_process_memory_fraction && !plan->calls_set_fraction;
	/* a private segment's requests are told by when it was made: a read */
	bool online_bursts = !recorded_mode && !plan->entries_read && recorded_uncapped &&
			     opt->addresses_from == NULL && plan->private_segments->len == 0;
	if (!recorded_mode && !requests_only && !online_bursts &&
	    !cca_plan_read_entries(plan, opt->rewind, error))
		return FALSE;
	uint64_t total = opt->device_memory ? opt->device_memory : CCA_H200_TOTAL_MEMORY;
	uint64_t span = reservation_span(total);
	RecordedAddresses own, other;
	if (recorded_mode)
		addresses_from_plan(&own, plan, span);
	else
		addresses_init(&own, span);
	addresses_init(&other, span);
	gboolean ok = TRUE;
	if (opt->addresses_from)
		ok = addresses_scan(&other, opt->addresses_from, 0, error);
	const GArray *empty_cache_at = NULL, *synced_at = NULL;
	if (ok && !recorded_mode && !online_bursts && plan->has_releases) {
		/* where did the program call empty_cache()?  Only a replay under
		 * the recorded settings can tell: the plan's planning pass */
		bool ran = false;
		ok = plan_find_empty_cache(plan, opt->recorded_memory_fraction,
					   opt->recorded_capacity_set ? opt->device_memory : 0,
					   opt->recorded_capacity_set, &ran, error);
		res->planning_passes = ran ? 1 : 0;
		empty_cache_at = plan->empty_cache_at;
		if (plan->synced_at->len > 0)
			synced_at = plan->synced_at;
	}
	GArray *found = g_array_new(FALSE, FALSE, sizeof(uint64_t));
	uint64_t segment_entries = 0;
	bool needs_entries = false;
	if (ok) {
		RecordedAddresses *addresses = recorded_mode	     ? &own
					       : opt->addresses_from ? &other
								     : NULL;
		Pass pass = {
			.plan = plan,
			.opt = opt,
			.settings = settings,
			.recorded_mode = recorded_mode,
			.addresses = addresses,
			.empty_cache_at = empty_cache_at,
			.synced_at = synced_at,
			.online_bursts = online_bursts,
			.found = found,
			.res = res,
			.needs_entries = &needs_entries,
			.segment_entries = &segment_entries,
		};
		ok = run_pass(&pass, error);
		res->replays = 1;
		g_atomic_int_inc(&total_replays);
	}
	*redo = ok && !plan->entries_read &&
		((res->unknown_frees > 0 && opt->rewind == CCA_REWIND_AUTO) ||
		 (requests_only && segment_entries > 0) || res->diverged_from_recording ||
		 needs_entries);
	if (ok && online_bursts && !*redo && !res->stopped_after && !res->stopped_by_oom)
		cca_plan_note_empty_cache(plan, found, opt->recorded_memory_fraction,
					  opt->recorded_capacity_set ? opt->device_memory : 0,
					  opt->recorded_capacity_set);
	g_array_free(found, TRUE);
	addresses_clear(&own);
	addresses_clear(&other);
	return ok;
}

/* cca_replay_run() under PLAN, once (but the redo below). */
static gboolean
replay_with_plan(const CcaSnapshot *snap, const CcaReplayOptions *opt, CcaPlan *plan,
		 CcaReplayResult *res, GError **error)
{
	memset(res, 0, sizeof *res);
	g_return_val_if_fail(plan->snap == snap && plan->device == opt->device, FALSE);
	bool redo = false;
	if (!replay_planned(snap, opt, plan, res, &redo, error))
		return FALSE;
	if (!redo)
		return TRUE;
	/* The unread plan was wrong about the trace: its entries tell it
	 * started mid-run, or that it is no trace of requests alone, or the
	 * recorded settings did not make the recording's segments (another
	 * cap, or an inconsistent trace).  Nobody watched that replay, so it
	 * is done again with the entries read, the last case as a what-if. */
	bool diverged = res->diverged_from_recording;
	CcaReplayOptions again = *opt;
	cca_replay_result_clear(res);
	if (!cca_plan_read_entries(plan, opt->rewind, error))
		return FALSE;
	/* ... unless the read found pools released before the dump: the
	 * unread replay sent their requests to the default pool, and the
	 * recorded settings may reproduce the recording once they are routed
	 * (doc/private-pools.md); a replay that still diverges is done once
	 * more as a what-if */
	bool pools = plan->reservation_releases->len > 0;
	again.force_whatif = opt->force_whatif || (diverged && !pools);
	if (!replay_planned(snap, &again, plan, res, &redo, error))
		return FALSE;
	res->replays = 2;
	if (diverged && pools && !again.force_whatif && res->diverged_from_recording) {
		again.force_whatif = true;
		cca_replay_result_clear(res);
		if (!replay_planned(snap, &again, plan, res, &redo, error))
			return FALSE;
		res->replays = 3;
	}
	res->diverged_from_recording = diverged && (!pools || res->whatif);
	return TRUE;
}

void
cca_replay_cap_proved(const CcaReplayResult *res, bool capacity_given, CcaCapBound *out)
{
	if (res->cap_inferred.proved) {
		*out = res->cap_inferred;
		return;
	}
	memset(out, 0, sizeof *out);
	if (capacity_given || res->whatif || !res->recorded_oom_seen || res->recorded_oom_allowed ||
	    res->allowed_maximum)
		return;
	/* every segment the run got fitted under the cap: the peak of the
	 * bytes reserved, within an entry too (reserved_bytes.all.peak) */
	uint64_t peak = MAX(res->figures.reserved_peak.reserved,
			    (uint64_t)res->stats.reserved_bytes[CCA_STAT_ALL].peak);
	cca_capbound_prove(peak, res->recorded_oom_event, res->recorded_oom_reserved,
			   res->recorded_oom_alloc_size, res->recorded_oom_device_free, out);
}

/* The most bytes device DEVICE of SNAP held reserved by its segment
 * entries (segment_alloc and segment_map add, segment_free and
 * segment_unmap take away), from START bytes at its first entry: what the
 * recorded run itself reserved, which every cap it ran under allowed. */
static uint64_t
trace_reserved_peak(const CcaSnapshot *snap, int device, uint64_t start)
{
	g_autoptr(CcaEventCursor) c = cca_event_cursor_new(snap, device);
	CcaEvent ev;
	uint64_t now = start, peak = start;
	while (cca_event_cursor_next(c, &ev, NULL)) {
		if (ev.action == CCA_ACTION_SEGMENT_ALLOC || ev.action == CCA_ACTION_SEGMENT_MAP)
			now += ev.size;
		else if (ev.action == CCA_ACTION_SEGMENT_FREE ||
			 ev.action == CCA_ACTION_SEGMENT_UNMAP)
			now = now > ev.size ? now - ev.size : 0;
		peak = MAX(peak, now);
	}
	return peak;
}

/* A replay of PLAN's recording under its own settings that would be a
 * what-if only because it ran under garbage_collection_threshold and no
 * cap is known (replay_planned()), though its oom entry may prove one. */
static bool
gc_cap_unknown(const CcaSnapshot *snap, const CcaReplayOptions *opt, const CcaPlan *plan)
{
	return plan->recorded.garbage_collection_threshold > 0.0 &&
	       cap_fraction(opt->memory_fraction) == 0.0 && !opt->capacity_set &&
	       cap_fraction(opt->recorded_memory_fraction) == 0.0 && !opt->recorded_capacity_set &&
	       !plan->recorded.has_per_process_memory_fraction && !plan->calls_set_fraction &&
	       plan->calls == NULL && !plan->across_releases && !opt->force_whatif &&
	       !opt->gc_uncapped_recorded && opt->addresses_from == NULL &&
	       (!opt->settings || cca_settings_same_model(opt->settings, &plan->recorded)) &&
	       cca_event_cursor_has_oom(snap, opt->device);
}

/* The memory fraction whose allowed maximum on a device of TOTAL bytes
 * is BYTES (cca_allocator_set_memory_fraction() truncates). */
static double
fraction_for(uint64_t bytes, uint64_t total)
{
	double f = ((double)bytes + 0.5) / (double)total;
	while (f > 0.0 && (uint64_t)(f * (double)total) > bytes)
		f = nextafter(f, 0.0);
	while ((uint64_t)(f * (double)total) < bytes)
		f = nextafter(f, 1.0);
	return f;
}

/* OPT without what watches a replay: a pass nobody sees. */
static void
unwatched(CcaReplayOptions *opt)
{
	opt->observer = NULL;
	opt->on_model_event = NULL;
	opt->before_request = NULL;
	opt->on_finish = NULL;
	opt->make_device = NULL;
	opt->stop_after = 0;
	opt->check = false;
}

/* OPT under a cap of BYTES known to be the recording's. */
static void
under_cap(CcaReplayOptions *opt, uint64_t bytes)
{
	uint64_t total = opt->device_memory ? opt->device_memory : CCA_H200_TOTAL_MEMORY;
	opt->memory_fraction = opt->recorded_memory_fraction = fraction_for(bytes, total);
}

/* Whether RES, a replay under a cap of BYTES, reproduced the recording. */
static bool
reproduced(const CcaReplayResult *res, uint64_t bytes)
{
	return !res->whatif && !res->diverged_from_recording && res->allowed_maximum == bytes &&
	       (!res->check_ran || res->check_passed);
}

/* A recording under garbage_collection_threshold with no cap known
 * (gc_cap_unknown()): garbage collection acts only under a cap, so such a
 * replay would be a what-if without it.  Its oom entry may prove the cap
 * all the same (doc/whatif.md, "A cap nobody passed"): a pass in recorded
 * mode that takes the trace's releases as they are gives the peak and the
 * oom, the rule gives [lo, hi], and the recording is replayed under lo and
 * under hi; when both reproduce it (--check: every model entry the
 * trace's, in order), the
 * figures are the recording's whichever cap in the interval it ran under,
 * and RES is the replay under hi.  Otherwise RES is the what-if, with the
 * interval (unreplayed) in cap_inferred when one was proved.  Returns
 * FALSE with ERROR on bad input. */
static gboolean
replay_gc_recording(const CcaSnapshot *snap, const CcaReplayOptions *opt, CcaPlan *plan,
		    CcaReplayResult *res, GError **error)
{
	CcaReplayOptions probe_opt = *opt;
	unwatched(&probe_opt);
	probe_opt.gc_uncapped_recorded = true;
	CcaReplayResult probe;
	if (!replay_with_plan(snap, &probe_opt, plan, &probe, error)) {
		cca_replay_result_clear(&probe);
		return FALSE;
	}
	CcaCapBound cap;
	cca_replay_cap_proved(&probe, false, &cap);
	bool probe_ok = !probe.whatif && !probe.diverged_from_recording;
	uint64_t replays = probe.replays;
	cca_replay_result_clear(&probe);
	if (cap.proved) /* the model's peak, and the recording's own */
		cap.lo = MAX(cap.lo,
			     trace_reserved_peak(snap, opt->device, cca_plan_start_reserved(plan)));
	if (!probe_ok || cap.lo > cap.hi)
		memset(&cap, 0, sizeof cap);
	/* each end checked entry by entry (--check): the model's every
	 * segment entry, in order, must be the trace's */
	bool ends = cap.proved;
	for (int end = 0; ends && end < 2; end++) {
		uint64_t bytes = end == 0 ? cap.lo : cap.hi;
		CcaReplayOptions end_opt = probe_opt;
		end_opt.gc_uncapped_recorded = false;
		end_opt.check = true;
		under_cap(&end_opt, bytes);
		CcaReplayResult r;
		if (!replay_with_plan(snap, &end_opt, plan, &r, error)) {
			cca_replay_result_clear(&r);
			return FALSE;
		}
		ends = reproduced(&r, bytes) && r.check_ran && r.check_passed;
		replays += r.replays;
		cca_replay_result_clear(&r);
	}
	if (ends) {
		CcaReplayOptions hi_opt = *opt;
		under_cap(&hi_opt, cap.hi);
		if (!replay_with_plan(snap, &hi_opt, plan, res, error))
			return FALSE;
		if (reproduced(res, cap.hi)) {
			cap.replayed = true;
			res->cap_inferred = cap;
			res->replays += replays;
			return TRUE;
		}
		replays += res->replays;
		cca_replay_result_clear(res);
	}
	if (!replay_with_plan(snap, opt, plan, res, error))
		return FALSE;
	res->cap_inferred = cap; /* proved, but not reproduced under it */
	res->replays += replays;
	return TRUE;
}

gboolean
cca_replay_run(const CcaSnapshot *snap, const CcaReplayOptions *opt, CcaReplayResult *res,
	       GError **error)
{
	memset(res, 0, sizeof *res);
	g_autoptr(CcaPlan) own_plan = NULL;
	CcaPlan *plan = opt->plan;
	/* A replay nobody watches reads the trace once: the plan leaves the
	 * entries to it (cca_plan_new_unread()) and reads them only when the
	 * replay needs what they tell. */
	bool watched = opt->observer || opt->on_model_event || opt->before_request ||
		       opt->make_device || opt->on_finish || opt->stop_after;
	if (!plan) {
		own_plan = watched ? cca_plan_new(snap, opt->device, opt->pytorch_version,
						  opt->rewind, error)
				   : cca_plan_new_unread(snap, opt->device, opt->pytorch_version,
							 opt->rewind, error);
		if (!own_plan)
			return FALSE;
		plan = own_plan;
	}
	/* the GPU the recording was made on, unless the options name one:
	 * its fractions and expandable segments' reservations are of its
	 * memory (an H100's recording otherwise maps at H200 offsets) */
	CcaReplayOptions on_recorded_gpu;
	if (opt->device_memory == 0 && plan->recorded_total_memory != 0) {
		on_recorded_gpu = *opt;
		on_recorded_gpu.device_memory = cca_plan_device_memory(plan, 0);
		opt = &on_recorded_gpu;
	}
	if (gc_cap_unknown(snap, opt, plan))
		return replay_gc_recording(snap, opt, plan, res, error);
	return replay_with_plan(snap, opt, plan, res, error);
}
