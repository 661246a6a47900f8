/* plan.h - what one read of a trace settles before any replay.
 *
 * A plan is data about device DEVICE of a trace, gathered in one read of
 * its events (plus the rewind's own read when the trace starts mid-run):
 * the recorded settings and PyTorch version; whether the trace starts
 * mid-run (its first entry is no segment_alloc, segment_map or oom while
 * the final state holds segments, or it frees blocks it never allocated)
 * and the start state rebuilt then; the recorded segment and reservation
 * addresses; whether it releases segments; the private-pool segments of
 * the final state; the private pools released before the dump with whole
 * expandable reservations (CcaPlanReservations).  The read validates every entry
 * (cca_check_event(), cca_check_final_state(), no second
 * free_requested of a block before its free_completed), so a replay of a
 * planned trace starts from checked input.
 *
 * Where a what-if calls empty_cache() needs one model pass under the
 * recording's conditions: the replay runs it once (its planning pass,
 * replay.c) and stores the positions in the plan, for every replay that
 * shares it; the plan itself never replays.
 */
#ifndef CCA_PLAN_H
#define CCA_PLAN_H

#include <glib.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "calls.h"
#include "pytorch.h"
#include "rewind.h"
#include "settings.h"
#include "snapshot.h"

G_BEGIN_DECLS

/* A segment of a private pool (MemPool, CUDA graph) in the final state. */
typedef struct {
	uint64_t address, size;
	int64_t pool_id[2];
	/* the trace entry that made it (its last segment_alloc at ADDRESS);
	 * 0 when the trace shows none or its entries were not read.  The
	 * address range may have held a default-pool segment before. */
	uint64_t from;
} CcaPlanPrivateSegment;

/* A segment of a private pool that was released before the dump (a
 * MemPool deleted), as the planning pass found it: the requests at
 * addresses in [ADDRESS, ADDRESS + SIZE) after trace entry FROM and before
 * entry TO went to pool LABEL. */
typedef struct {
	uint64_t address, size;
	uint64_t from, to;
	uint32_t label;
} CcaPlanPoolSpan;

/* Where the program released pool LABEL (~MemPool): trace position; and
 * the pool's id when ccasim-record's mempool_release call names it there
 * (ID {0, 0} when unknown). */
typedef struct {
	uint64_t position;
	uint32_t label;
	int64_t id[2];
} CcaPlanPoolRelease;

/* From trace entry FROM on (until the next region), the program's
 * requests went to the MemPool ID (torch.cuda.use_mem_pool), or, with ID
 * {0, 0}, to no pool the records name, as ccasim-record's
 * use_mem_pool_enter and use_mem_pool_exit calls show. */
typedef struct {
	uint64_t from;
	int64_t id[2];
} CcaPlanPoolRegion;

/* The order of a burst of releases, fed each segment_free's size in turn:
 * POOL_ORDER turns true once a small-pool segment was freed before a
 * large-pool one, which only a private pool's release does (empty_cache()
 * frees the default large pool first; garbage collection and the oversize
 * release free large blocks alone). */
typedef struct {
	bool small_seen, pool_order;
} CcaBurstOrder;

/* Notes the release of a small-pool (SMALL) or large-pool segment or
 * expandable reservation in ORDER; returns ORDER->pool_order. */
static inline bool
cca_plan_burst_order_note_kind(CcaBurstOrder *order, bool small)
{
	order->pool_order = order->pool_order || (order->small_seen && !small);
	order->small_seen = order->small_seen || small;
	return order->pool_order;
}

/* Notes a segment_free of SIZE in ORDER (a small-pool segment is one
 * kSmallBuffer); returns ORDER->pool_order. */
static inline bool
cca_plan_burst_order_note(CcaBurstOrder *order, uint64_t size)
{
	return cca_plan_burst_order_note_kind(order, size == CCA_SMALL_BUFFER);
}

/* An expandable segment's reservation (ExpandableSegment) as the trace's
 * segment_map and segment_unmap entries show it, or a cudaMalloc segment
 * (IS_SEGMENT) from its segment_alloc to its segment_free.  find_expandable_block
 * maps pages at the start of an unmapped block: the reservation's base or
 * right after pages mapped before, so a map extends the live reservation
 * whose [BASE, END] holds its address and otherwise opens a new
 * reservation.  A reservation unmapped to its last page is released
 * (release_blocks: release_expandable_segment) and leaves the table. */
typedef struct {
	uint64_t base, end; /* the pages mapped in it so far lie in [BASE, END) */
	uint64_t mapped;    /* bytes mapped now */
	uint64_t from;	    /* trace position of its first segment_map */
	/* its pages are kSmallBuffer: a small pool's (a small request maps
	 * one 2 MiB page; a large page, large_segment_size, is over 10 MiB) */
	bool is_small;
	bool is_segment; /* a cudaMalloc segment: [BASE, END) from its segment_alloc */
	uint64_t stream; /* of its first map or segment_alloc */
} CcaPlanReservation;

/* The reservations and segments of a trace read in order, and whether the
 * burst of releases being read (a run of segment_free/segment_unmap and
 * free_completed entries) releases whole reservations, or segments, of one
 * private pool: ~MemPool's emptyCache(id) runs release_blocks on the
 * pool's small blocks, then its large ones, each in the free set's
 * (stream, size, address) order, and a pool's reservations are wholly free
 * once its tensors are gone; empty_cache() releases the default pool's
 * large segments (pages) before its small ones, and garbage collection and
 * the oversize release free large blocks alone.  So a burst that releases
 * only whole reservations, or only segments the trace made, a small-pool
 * one before a large-pool one and never a large one before a small one
 * (segments: each kind in the free set's order), is a private pool's
 * release (doc/private-pools.md). */
typedef struct {
	GArray *live; /* CcaPlanReservation */
	bool in_burst;
	/* the burst released what no pool release of whole reservations
	 * does: a segment_free, pages of no known reservation, more pages
	 * than the trace mapped there */
	bool not_pool;
	CcaBurstOrder order;
	/* the kinds of release the burst holds, and its last segment_free
	 * (the free set's order) */
	bool saw_free, saw_unmap, saw_large;
	CcaPlanReservation last_free;
	uint64_t burst_at; /* trace position of the burst's first release */
	GArray *released;  /* CcaPlanReservation: those the burst unmapped, as before it */
} CcaPlanReservations;

void cca_plan_reservations_init(CcaPlanReservations *rs);
void cca_plan_reservations_clear(CcaPlanReservations *rs);

/* Makes DST (not initialised) a copy of SRC. */
void cca_plan_reservations_copy(CcaPlanReservations *dst, const CcaPlanReservations *src);

/* cca_plan_reservations_note() of an entry that tells RS something: one
 * in a release burst, or a segment entry. */
bool cca_plan_reservations_read(CcaPlanReservations *rs, const CcaEvent *ev, uint64_t position);

/* Notes trace entry EV, at trace position POSITION, in RS.  Returns TRUE
 * when EV is the first entry after a burst that released whole
 * reservations of one private pool: RS->burst_at and RS->released say
 * where and which, until the next burst begins.  Inline: every entry of
 * a trace comes here, and most tell RS nothing. */
static inline bool
cca_plan_reservations_note(CcaPlanReservations *rs, const CcaEvent *ev, uint64_t position)
{
	if (!rs->in_burst &&
	    (ev->action < CCA_ACTION_SEGMENT_ALLOC || ev->action > CCA_ACTION_SEGMENT_UNMAP))
		return false;
	return cca_plan_reservations_read(rs, ev, position);
}

/* The trace ended: cca_plan_reservations_note()'s verdict on the burst
 * being read, if any (FALSE when none). */
bool cca_plan_reservations_finish(CcaPlanReservations *rs);

typedef struct CcaPlan CcaPlan;

struct CcaPlan {
	const CcaSnapshot *snap; /* borrowed */
	int device;
	uint32_t pytorch_version; /* whose rules (211 = 2.11) */
	CcaSettings recorded;	  /* the recorded settings, by those rules */
	/* The release the trace comes from (cca_plan_detect_release()).
	 * When PYTORCH_VERSION decides allocations otherwise
	 * (cca_rules_same_decisions()), the plan is a what-if across
	 * releases: RECORDED is read by the trace's release, and a replay
	 * applies it under PYTORCH_VERSION's rules. */
	uint32_t trace_release;
	bool across_releases;
	/* FALSE for a plan of cca_plan_new_unread() whose entries were not
	 * read: the fields below that come from the entries (events,
	 * max_request, has_segment_entries, has_releases, burst_at,
	 * burst_before_oom, unknown_frees, the recorded addresses) are then
	 * empty, and a replay checks each entry as it reads it */
	bool entries_read;
	uint64_t events;	  /* trace entries of the device */
	uint64_t max_request;	  /* the largest alloc or oom request (bytes) */
	bool has_segments;	  /* the final state holds segments of the device */
	bool has_segment_entries; /* the trace has segment_alloc/segment_map entries */
	bool has_releases;	  /* ... segment_free/segment_unmap entries */
	/* where each burst of releases begins (uint64_t trace positions), and
	 * whether the request after one is an oom entry */
	GArray *burst_at;
	bool burst_before_oom;
	/* a burst frees a small-pool segment before a large-pool one, which
	 * empty_cache() of the default pools never does: a private pool's
	 * release, which only the planning pass can tell apart */
	bool burst_may_release_pool;
	/* mid-run: the state the trace started from, rebuilt (start.mid_run) */
	bool mid_run;
	bool mid_run_by_frees;	/* told by frees of blocks the trace never allocated */
	uint64_t unknown_frees; /* such frees, counted as the trace was read */
	CcaCallsTally tally;	/* its alloc, free_requested and oom entries */
	CcaStartState start;
	/* recorded addresses, in trace order (uint64_t): each segment_alloc's
	 * base and size, each segment_map's address */
	GArray *segment_bases, *segment_sizes, *map_addresses;
	GArray *private_segments; /* CcaPlanPrivateSegment, by address */
	/* where the program called empty_cache() (trace positions), once
	 * the planning pass (replay.c) ran; found under the cap below */
	bool empty_cache_known;
	GArray *empty_cache_at; /* uint64_t */
	/* ... and the private pools the program released before the dump,
	 * found with them (CcaPlanPoolSpan, CcaPlanPoolRelease by position) */
	GArray *pool_spans, *pool_releases;
	/* the private pools that the program released before the dump, told
	 * by the read alone (CcaPlanReservations): each reservation's extent
	 * from its first map, or each segment's from its segment_alloc, to the
	 * release (CcaPlanPoolSpan) and the releases (CcaPlanPoolRelease by
	 * position), labels of their own; empty for a trace that starts
	 * mid-run (a reservation in use before it began hides its pages) */
	GArray *reservation_spans, *reservation_releases;
	/* and where a malloc's synchronisation completed deferred frees
	 * (uint64_t trace positions of those free_completed entries): a
	 * what-if keeps them from that malloc's lookup */
	GArray *synced_at;
	/* the program's calls ccasim-record saw (NULL when the snapshot has
	 * none), placed between the entries once they are read; the
	 * empty_cache() positions above are then those no recorded call
	 * explains (a call the recorder did not wrap) */
	CcaCalls *calls;
	bool calls_set_fraction; /* a recorded set_per_process_memory_fraction() */
	/* the device's total memory ccasim-record saw (0: not recorded): the
	 * memory a replay's fractions and expandable reservations are of
	 * when no --device-memory is given (doc/recording.md) */
	uint64_t recorded_total_memory;
	/* the use_mem_pool regions the calls show (CcaPlanPoolRegion, by FROM;
	 * empty without such calls) */
	GArray *pool_regions;
	double empty_cache_memory_fraction;
	uint64_t empty_cache_device_memory;
	bool empty_cache_capacity_set;
	GMutex lock; /* guards the empty_cache fields */
};

/* The settings a recording of device DEVICE of SNAP began with, into
 * SETTINGS (initialised, its pytorch_version set): the snapshot's
 * allocator_settings, which are those at the dump, unless ccasim-record's
 * calls show the program changing them mid-run (then its start conf and
 * the changes before the trace's window).  Returns FALSE with ERROR on bad
 * recorded settings or records. */
gboolean cca_plan_start_settings(const CcaSnapshot *snap, int device, CcaSettings *settings,
				 GError **error);

/* Plans device DEVICE of SNAP (borrowed: it must outlive the plan) under
 * the rules of PYTORCH_VERSION (0: guessed from the trace) and REWIND.
 * Returns NULL with ERROR (CCA_INPUT_ERROR) on bad input: no such device,
 * an entry or final state the engine would refuse, unusable recorded
 * settings, a mid-run trace whose start cannot be rebuilt.  Free with
 * cca_plan_free(). */
CcaPlan *cca_plan_new(const CcaSnapshot *snap, int device, uint32_t pytorch_version,
		      CcaRewind rewind, GError **error);

/* cca_plan_new() for a replay that reads the entries itself: settles what
 * the final state and the first entry tell (a trace that starts mid-run is
 * read whole, as cca_plan_new() reads it) and leaves the entries unread
 * (PLAN->entries_read FALSE), so that a replay under the recorded settings
 * reads the trace once.  Such a replay meeting a free of a block the trace
 * never allocated needs the full plan (cca_plan_read_entries()) and a
 * replay again.  Returns NULL with ERROR as cca_plan_new(). */
CcaPlan *cca_plan_new_unread(const CcaSnapshot *snap, int device, uint32_t pytorch_version,
			     CcaRewind rewind, GError **error);

/* Reads the entries of a plan of cca_plan_new_unread() (nothing when they
 * were read): the plan becomes cca_plan_new()'s under REWIND.  Returns
 * FALSE with ERROR on bad input. */
gboolean cca_plan_read_entries(CcaPlan *plan, CcaRewind rewind, GError **error);

void cca_plan_free(CcaPlan *plan);

/* The bytes PLAN's rebuilt start reserves (its segments and mapped runs,
 * as the replay seeds them); 0 for a trace from the start or a NULL PLAN.  A cap or a
 * device below it cannot have reached the window (doc/whatif.md,
 * "Windows"). */
uint64_t cca_plan_start_reserved(const CcaPlan *plan);

/* The device memory a replay of PLAN is of: GIVEN (--device-memory) when
 * not 0, else the total ccasim-record saw, else the H200's (also for a
 * NULL PLAN). */
uint64_t cca_plan_device_memory(const CcaPlan *plan, uint64_t given);

/* The plan's empty_cache() positions are known, found under the cap
 * MEMORY_FRACTION / DEVICE_MEMORY / CAPACITY_SET.  Call with PLAN->lock
 * held (the planning pass, replay.c, does). */
void cca_plan_set_empty_cache_known(CcaPlan *plan, double memory_fraction, uint64_t device_memory,
				    bool capacity_set);

/* Takes every burst of PLAN for the program's empty_cache() but those its
 * read found to release a pool's reservations: what a recording without a
 * cap proves (no malloc releases memory there).  PLAN->lock held. */
void cca_plan_bursts_as_empty_cache(CcaPlan *plan);

/* Stores POSITIONS (uint64_t trace positions) as where the program called
 * empty_cache() under the recording's cap MEMORY_FRACTION / DEVICE_MEMORY /
 * CAPACITY_SET, unless the plan knows them already: what a what-if that
 * found them as it read the trace (a recording without a cap) tells the
 * plan. */
void cca_plan_note_empty_cache(CcaPlan *p, const GArray *positions, double memory_fraction,
			       uint64_t device_memory, bool capacity_set);

/* The plan as text, a few lines for people. */
char *cca_plan_describe(const CcaPlan *plan);

/* The plan as a JSON object (a new reference): mid_run,
 * start_segments, start_blocks, entries_read, has_releases (null while
 * the entries are unread), empty_cache_positions (null until found),
 * empty_cache_at (the positions, null until found), private_segments,
 * pytorch_version. */
json_t *cca_plan_to_json(const CcaPlan *plan);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(CcaPlan, cca_plan_free)

/* The PyTorch release SNAP comes from (doc/versions.md, "Which release
 * made a trace"): the torch version ccasim-record's start record names;
 * else the lowest release its format or the keys of its recorded
 * PYTORCH_CUDA_ALLOC_CONF prove (cca_snapshot_format_release(),
 * cca_settings_conf_release()); else 2.11 with allocator_settings'
 * graph_capture_record_stream_reuse; compile_context 2.8;
 * allocator_settings 2.3 to 2.7 (2.4 assumed); time_us 2.2; none of them
 * 2.0/2.1 (2.1 assumed).  WHY (NULL: not wanted) gets one line saying
 * which of these decided; free with g_free(). */
uint32_t cca_plan_detect_release(const CcaSnapshot *snap, char **why);

G_END_DECLS

#endif
