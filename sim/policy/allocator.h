/* allocator.h - the caching allocator policy of PyTorch 2.11.
 *
 * One CcaAllocator models one DeviceCachingAllocator (default pools; no
 * private/graph pools): size rounding, small and large pools, best fit per
 * stream, splitting and merging, max_split_size, stream-ordered frees, the
 * memory fraction, the failure cascade, garbage collection, expandable
 * segments and empty_cache.  Every trace entry the real allocator records
 * is emitted, in the real order, through the emit callback.
 */
#ifndef CCA_ALLOCATOR_H
#define CCA_ALLOCATOR_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "device.h"
#include "handle.h"
#include "event.h"
#include "settings.h"
#include "stats.h"

G_BEGIN_DECLS

/* Private pools (torch.cuda.MemPool, CUDA graphs) one allocator keeps,
 * the default pool included. */
#define CCA_MAX_MEMPOOLS 64


typedef struct CcaAllocator CcaAllocator;

/* Receives every trace entry the allocator records (action, addr, size,
 * stream; addr is device_free for an oom). */
typedef void (*CcaEmitFunc)(void *user_data, const CcaEvent *event);

/* Limits of one replay. */
typedef struct {
	/* set_per_process_memory_fraction(f); 0 or >= 1 means no limit */
	double memory_fraction;
} CcaLimits;

/* Creates an allocator with SETTINGS (copied) on DEVICE (borrowed; its
 * total_memory sizes the memory fraction and expandable reservations).
 * EMIT may be NULL. */
CcaAllocator *cca_allocator_new(const CcaSettings *settings, const CcaLimits *limits,
				CcaDevice *device, CcaEmitFunc emit, void *emit_data);

void cca_allocator_free(CcaAllocator *alloc);

/* torch's round_size(): the block size a request of ORIG_SIZE bytes gets. */
uint64_t cca_allocator_round_size(const CcaAllocator *alloc, uint64_t orig_size);

/* round_size() under SETTINGS, without an allocator. */
uint64_t cca_allocator_round_size_under(const CcaSettings *settings, uint64_t orig_size);

/* Bytes a new segment for a request of ORIG_SIZE would take (the figure
 * PyTorch's OOM message calls "Tried to allocate"). */
uint64_t cca_allocator_segment_size(const CcaAllocator *alloc, uint64_t orig_size);

/* malloc(ORIG_SIZE) on STREAM.  Returns the allocated block, or CCA_NIL
 * after recording an oom (num_ooms counts it; nothing is rolled back). */
CcaHandle cca_allocator_malloc(CcaAllocator *alloc, uint64_t orig_size, uint64_t stream);

/* malloc(ORIG_SIZE) on STREAM inside the private pool MEMPOOL (an index
 * from cca_allocator_mempool(); 0 is the default pool). */
CcaHandle cca_allocator_malloc_in(CcaAllocator *alloc, uint64_t orig_size, uint64_t stream,
				  uint32_t mempool);

/* The index of the pool with id ID (segment_pool_id; (0,0) is the default
 * pool, index 0), created on first use; -1 when CCA_MAX_MEMPOOLS are in
 * use. */
int cca_allocator_mempool(CcaAllocator *alloc, const int64_t id[2]);

/* Marks private pool MEMPOOL freeable (its MemPool or graph was released):
 * empty_cache and the retry cascade then release its free segments too. */
void cca_allocator_mempool_set_freeable(CcaAllocator *alloc, uint32_t mempool, bool freeable);

/* A MemPool deleted: ~MemPool's releasePool() marks private pool MEMPOOL
 * freeable and its emptyCache(id) synchronizes the streams
 * (num_sync_all_streams) and releases the pool's cached segments, small
 * ones first, then large, each in the free set's order; other pools keep
 * theirs. */
void cca_allocator_mempool_release(CcaAllocator *alloc, uint32_t mempool);

/* The bases of the segments empty_cache() would release now, in the order
 * it would release them (expandable segments aside), as a new GArray of
 * uint64_t. */
GArray *cca_allocator_cached_segments(const CcaAllocator *alloc);

/* The bases of the segments release_cached_blocks() would free after its
 * synchronisation: the whole cached segments now and those whose only
 * blocks not free are waiting for a deferred free (a new GArray of
 * uint64_t, no particular order; expandable segments aside). */
GArray *cca_allocator_segments_whole_after_sync(const CcaAllocator *alloc);

/* Synchronizes the streams (num_sync_all_streams) and releases the whole
 * cached segments at ADDRS[0..N) in that order, of whatever pool: what a
 * pool's release shows in a trace whose pool the model did not know.
 * Returns FALSE, having done nothing, when one of them is no whole cached
 * segment. */
gboolean cca_allocator_release_segments(CcaAllocator *alloc, const uint64_t *addrs, guint n);

/* free() of allocated BLOCK.  With DEFERRED (the block was used on another
 * stream: record_stream) the block stays active, pending until
 * cca_allocator_complete_free() or a synchronisation completes it;
 * otherwise it returns to its pool at once. */
void cca_allocator_free_block(CcaAllocator *alloc, CcaHandle block, bool deferred);

/* Completes the deferred free of BLOCK (its stream events finished):
 * free_completed, merge, back to the pool.  A no-op when BLOCK is no
 * longer pending. */
void cca_allocator_complete_free(CcaAllocator *alloc, CcaHandle block);

/* Is BLOCK allocated (malloc'd and not yet freed)? */
bool cca_allocator_is_allocated(const CcaAllocator *alloc, CcaHandle block);

/* Is BLOCK waiting for a deferred free to complete? */
bool cca_allocator_is_pending(const CcaAllocator *alloc, CcaHandle block);

/* How many blocks wait for a deferred free to complete. */
guint cca_allocator_n_pending(const CcaAllocator *alloc);

/* The next synchronisation completes pending BLOCK first, the others in
 * their order after it (a recording shows the order in which one
 * synchronisation completed its frees).  A no-op when BLOCK is not
 * pending. */
void cca_allocator_pending_first(CcaAllocator *alloc, CcaHandle block);

/* torch.cuda.empty_cache(): synchronise, complete pending frees, release
 * every whole free segment (unmap free pages of expandable segments). */
void cca_allocator_empty_cache(CcaAllocator *alloc);

/* Would malloc(ORIG_SIZE) on STREAM, in the current state, release
 * memory (garbage collection or the failure cascade) before it returns?
 * Pure: changes nothing. */
bool cca_allocator_would_release(const CcaAllocator *alloc, uint64_t orig_size, uint64_t stream);

/* Would malloc(ORIG_SIZE) on STREAM in pool MEMPOOL be served from a
 * cached free block (no new memory)?  Pure. */
bool cca_allocator_would_serve(const CcaAllocator *alloc, uint64_t orig_size, uint64_t stream,
			       uint32_t mempool);

/* cca_allocator_would_release() for a request in private pool MEMPOOL. */
bool cca_allocator_would_release_in(const CcaAllocator *alloc, uint64_t orig_size, uint64_t stream,
				    uint32_t mempool);

/* Would malloc(ORIG_SIZE) on STREAM in pool MEMPOOL, in the current
 * state, synchronise before it releases anything: no cached block serves
 * it, garbage collection and the oversize release free nothing, and the
 * first cudaMalloc is refused (the cap or the device), so its
 * release_cached_blocks() completes every pending free first.  Pure. */
bool cca_allocator_would_synchronize_in(const CcaAllocator *alloc, uint64_t orig_size,
					uint64_t stream, uint32_t mempool);

/* Seeding a state that existed before the trace began (a trace that
 * starts mid-run): segments first, then the live blocks inside them, then
 * cca_allocator_seed_finish() once, which derives inactive_split and
 * restarts peaks and cumulative counters from the seeded state, taking the
 * unseen prefix to be the seeded segments' cudaMallocs and the live blocks'
 * allocations (doc/allocator-model.md, "Traces that start mid-run"). */

/* Adds a cudaMalloc segment of SIZE bytes at PTR, wholly free. */
void cca_allocator_seed_segment(CcaAllocator *alloc, uint64_t ptr, uint64_t size, uint64_t stream,
				bool is_small);

/* Marks [PTR, PTR+SIZE) of a seeded segment as a live block (allocated, or
 * PENDING a deferred free) of REQUESTED bytes; returns it, or CCA_NIL when
 * no free block covers the range. */
CcaHandle cca_allocator_seed_block(CcaAllocator *alloc, uint64_t ptr, uint64_t size,
				   uint64_t requested, bool pending);

/* Adds an expandable segment's reservation at BASE for STREAM's small or
 * large pool, wholly unmapped; returns its index. */
int cca_allocator_seed_reservation(CcaAllocator *alloc, uint64_t base, uint64_t stream,
				   bool is_small);

/* Marks [PTR, PTR+SIZE) of a seeded reservation as mapped, free memory
 * (whole pages); FALSE when no unmapped space of a reservation covers it
 * or it is not whole pages from the reservation's base. */
gboolean cca_allocator_seed_mapped(CcaAllocator *alloc, uint64_t ptr, uint64_t size);

void cca_allocator_seed_finish(CcaAllocator *alloc);

/* torch.cuda.set_per_process_memory_fraction(FRACTION) mid-run: the
 * allowed maximum becomes FRACTION of the device's memory (none at 0, nor
 * at 1 under 2.9+ rules). */
void cca_allocator_set_memory_fraction(CcaAllocator *alloc, double fraction);

/* _set_allocator_settings() mid-run: SETTINGS (copied; see
 * cca_settings_parse_onto()) govern every later request.  Blocks and
 * segments stay as they are. */
void cca_allocator_set_settings(CcaAllocator *alloc, const CcaSettings *settings);

/* The settings in force (borrowed). */
const CcaSettings *cca_allocator_settings(const CcaAllocator *alloc);

/* torch.cuda.reset_peak_memory_stats(): every peak becomes the current
 * value. */
void cca_allocator_reset_peak_stats(CcaAllocator *alloc);

/* torch.cuda.reset_accumulated_memory_stats(): every cumulative count
 * (allocated, freed, retries, OOMs, syncs, device allocs and frees)
 * restarts from 0. */
void cca_allocator_reset_accumulated_stats(CcaAllocator *alloc);

/* The statistics (memory_stats()). */
const CcaStats *cca_allocator_stats(const CcaAllocator *alloc);

/* Total bytes reserved from the device (cudaMalloc'd plus mapped). */
uint64_t cca_allocator_reserved(const CcaAllocator *alloc);

/* Allowed maximum reserved bytes under the memory fraction; 0 if none. */
uint64_t cca_allocator_allowed_maximum(const CcaAllocator *alloc);

/* Address of BLOCK. */
uint64_t cca_allocator_block_address(const CcaAllocator *alloc, CcaHandle block);

/* Decisions so far that went by device address alone: a free block taken
 * (or an oversize one released) over another of the same stream and size
 * (and counter) in another segment, two such blocks released in address
 * order, or space found in one of several expandable segments of a
 * stream.
 * While it is 0, the run is the same whatever addresses the device gives
 * its segments (the address models of a what-if agree). */
uint64_t cca_allocator_address_ties(const CcaAllocator *alloc);

/* No block the allocator has held so far was larger: its largest segment
 * (a cudaMalloc, or one seeded for a rebuilt start), or, once it has
 * held an expandable segment, the peak of reserved bytes.  A run whose
 * reach stays below max_split_size is the same run under any other
 * max_split_size above it (cca_settings_same_model_below()). */
uint64_t cca_allocator_reach(const CcaAllocator *alloc);

/* The sizes the allocator compared with max_split_size so far (requests,
 * blocks, segments, the bytes an oversize release freed, and the free
 * blocks on either side of its search): BELOW the largest under the
 * setting (0: none), FROM the smallest at or above it (UINT64_MAX: none).
 * Every comparison came out the same under any max_split_size M with
 * BELOW < M <= FROM, so that the run, but for memory_stats()'s
 * max_split_size, is the run under M (cca_settings_same_model_split()).
 * A change of max_split_size mid-run leaves none: BELOW UINT64_MAX. */
typedef struct {
	uint64_t below, from;
} CcaSplitSeen;
CcaSplitSeen cca_allocator_split_seen(const CcaAllocator *alloc);

/* Decisions so far where the free block taken had another of its stream
 * and size next in order that only the allocation counter put after it
 * (2.12+, doc/versions.md): under 2.11's rules the address decided them.
 * Counted when cca_allocator_count_address_ties() is on. */
uint64_t cca_allocator_counter_ties(const CcaAllocator *alloc);

/* Requests throw_on_cudamalloc_oom rejected at the memory fraction
 * without trying any release (2.12+; PyTorch's num_oom_rejections). */
uint64_t cca_allocator_oom_rejections(const CcaAllocator *alloc);

/* Whether to count every decision that cca_allocator_address_ties()
 * counts; off by default, since the check of each free block taken costs
 * a walk to its segment's head (the oversize release and expandable
 * segments, which are rare, are always counted). */
void cca_allocator_count_address_ties(CcaAllocator *alloc, bool count);

/* A decision by device address (cca_allocator_on_address_tie()): the
 * free blocks of one stream and size whose addresses decided it, in the
 * set's order.  CCA_TIE_FIRST: the first was taken because no other is
 * below it; CCA_TIE_ORDER: they were visited (released) in this order. */
typedef enum {
	CCA_TIE_FIRST,
	CCA_TIE_ORDER
} CcaTieKind;

typedef struct {
	uint64_t ptr, counter; /* the block's address and allocation counter */
} CcaTieBlock;

/* Hears of each decision cca_allocator_address_ties() counts, with the
 * blocks it compared (borrowed for the call); N is 0 when they cannot be
 * listed (more than CCA_TIE_GROUP_MAX, or space in expandable segments):
 * the listener must then take any placement to decide otherwise. */
typedef void (*CcaTieFunc)(void *data, CcaTieKind kind, const CcaTieBlock *blocks, guint n);

#define CCA_TIE_GROUP_MAX 256

/* Sets the listener of address ties (NULL: none); it is heard only while
 * cca_allocator_count_address_ties() is on. */
void cca_allocator_on_address_tie(CcaAllocator *alloc, CcaTieFunc func, void *data);

/* Emits only the entries whose action bit (1 << CcaAction) is in MASK (all
 * by default): a listener of segment entries alone spares the others. */
void cca_allocator_emit_only(CcaAllocator *alloc, uint32_t mask);

/* Size of the largest free block on STREAM's pools (for OOM reports). */
uint64_t cca_allocator_largest_free(const CcaAllocator *alloc);

/* One block of the current state, as a snapshot reports it. */
typedef struct {
	uint64_t address;
	uint64_t size;
	uint64_t requested_size;
	CcaBlockState state;
} CcaStateBlock;

/* One segment of the current state (a cudaMalloc segment, or one mapped
 * run of an expandable segment). */
typedef struct {
	uint64_t address;
	uint64_t total_size;
	uint64_t stream;
	bool is_small;
	bool is_expandable;
	int64_t pool_id[2]; /* segment_pool_id; (0, 0) the default pool */
	const CcaStateBlock *blocks;
	size_t n_blocks;
} CcaStateSegment;

/* How many segments cca_allocator_state() would list now (a mapped run
 * of an expandable segment is one).  Constant time: a count the device
 * calls keep (after seeding, the first call walks the blocks once). */
uint64_t cca_allocator_segment_count(const CcaAllocator *alloc);

/* Returns the current segments sorted by address, as _snapshot() lists
 * them; free with cca_allocator_state_free(). */
GArray *cca_allocator_state(const CcaAllocator *alloc);
void cca_allocator_state_free(GArray *segments);

/* Checks the invariants (blocks tile their segments, free blocks are in
 * their pool's set and nowhere else, stats equal sums over blocks).
 * Returns FALSE with a description in WHY on the first violation.  In a
 * debug build (--enable-debug: CCA_DEBUG) the functions above that change
 * the allocator's state run it before returning (after every call while
 * at most 256 blocks live, then once every live/256 calls, so the walk's
 * cost per call stays bounded) and abort with the description when it
 * fails; handles passed in are asserted valid. */
gboolean cca_allocator_check_invariants(const CcaAllocator *alloc, GString *why);

/* ------------------------------------------------ explaining a request */

/* Why the allocator would reserve memory for a request (an explain/step
 * query; see cca_allocator_explain_request()). */
typedef enum {
	CCA_WHY_FITS = 0,	 /* a cached block serves it: no new memory */
	CCA_WHY_EMPTY_POOL,	 /* no free block of this pool on its stream at all */
	CCA_WHY_TOO_SMALL,	 /* free blocks on the stream, all smaller than the request */
	CCA_WHY_OVERSIZE,	 /* the max_split_size rules refuse the block that fits */
	CCA_WHY_EXPANDABLE_ONLY, /* only expandable-segment blocks fit (feature off) */
} CcaWhyKind;

/* What malloc(orig_size) on `stream` would find in the current state.
 * Sizes are bytes.  "Free" blocks are mapped, unallocated blocks with no
 * pending stream events (the pool's free set). */
typedef struct {
	uint64_t orig_size;  /* the request, unrounded */
	uint64_t size;	     /* round_size(): the block size it needs */
	uint64_t size_512;   /* the request rounded to 512 bytes only */
	uint64_t alloc_size; /* bytes a new segment (or mapping) would take */
	uint64_t stream;
	bool small_pool;	 /* size <= 1 MiB */
	bool expandable;	 /* expandable_segments is on */
	CcaWhyKind kind;	 /* CCA_WHY_FITS: served from the cache */
	uint64_t candidate_size; /* first free block >= size on the stream, 0 if none */
	uint32_t fitting_blocks; /* free blocks of the pool on the stream >= size */
	uint32_t same_size;	 /* of them, those of candidate_size (address decides) */
	uint64_t max_split_size; /* UINT64_MAX when unlimited */
	uint64_t max_non_split_rounding;
	uint64_t largest_free_stream; /* largest free block of the pool on the stream */
	uint64_t free_bytes_stream;   /* free bytes of the pool on the stream */
	uint32_t free_blocks_stream;  /* how many free blocks that is */
	uint64_t largest_free_other;  /* largest free block of the pool on other streams */
	uint64_t pending_bytes;	      /* blocks of the pool and stream awaiting deferred frees */
	uint64_t stranded_bytes;      /* free bytes in segments that also hold live blocks */
	uint32_t stranded_segments;   /* segments holding such free bytes */
	uint64_t cached_bytes;	      /* free bytes in wholly free segments (releasable) */
	uint64_t reserved;	      /* bytes reserved now */
	uint64_t allowed_maximum;     /* memory-fraction cap, 0 if none */
	bool over_cap;		      /* reserved + alloc_size would pass the cap */
	bool device_refuses;	      /* the device would refuse alloc_size now */
	bool would_release;	      /* malloc would release memory (gc or retry) */
} CcaRequestWhy;

/* Fills WHY with what malloc(ORIG_SIZE) on STREAM would find in ALLOC's
 * current state: its rounding, its pool, whether a cached block serves it
 * and, if not, why (kind), the free space of its pool on that stream and
 * on others, the free bytes stranded in split segments and the cap.
 * Pure: changes nothing.  Costs a walk over the free blocks. */
void cca_allocator_explain_request(const CcaAllocator *alloc, uint64_t orig_size, uint64_t stream,
				   CcaRequestWhy *why);

/* What one malloc did, stage by stage, in the order of PyTorch's
 * DeviceCachingAllocator::malloc: get_free_block (a cache hit ends it),
 * garbage_collect_cached_blocks (only with a garbage_collection_threshold
 * under a memory fraction), alloc_block (cudaMalloc or a page map),
 * release_available_cached_blocks (only with max_split_size) and
 * alloc_block again, release_cached_blocks (synchronize_and_free_events,
 * then every whole free segment) and alloc_block(isRetry), the OOM.  A
 * stage that did not run has its flag false and its counts 0.  Bytes are
 * device bytes; releases count segment_free and segment_unmap entries. */
typedef struct {
	uint64_t serial;	     /* 1 for the allocator's first malloc, then +1 each */
	uint64_t orig_size;	     /* the request */
	uint64_t alloc_size;	     /* bytes the new segment (or mapping) would take */
	int64_t pool_id[2];	     /* the pool get_pool chose (segment_pool_id; (0, 0) default) */
	bool cache_hit;		     /* get_free_block found a block: nothing else ran */
	bool gc_ran;		     /* garbage_collect_cached_blocks was called */
	uint64_t gc_threshold;	     /* threshold x allowed maximum, bytes */
	uint64_t gc_reserved_before; /* reserved bytes it measured */
	uint32_t gc_released;	     /* unsplit large-pool blocks it released */
	uint64_t gc_released_bytes;
	bool first_ok;		   /* the first alloc_block succeeded */
	bool first_refused_by_cap; /* it failed at the memory fraction (else the device) */
	bool oversize_ran;	   /* release_available_cached_blocks was called */
	uint32_t oversize_released;
	uint64_t oversize_released_bytes;
	bool oversize_alloc_tried; /* it freed enough, so alloc_block ran again */
	bool oversize_alloc_ok;
	bool capturing;	      /* a private pool's request: no release_cached_blocks */
	bool release_all_ran; /* release_cached_blocks was called */
	uint32_t synced;      /* pending frees its synchronisation completed */
	uint32_t release_all_released;
	uint64_t release_all_bytes;
	bool retry_ok;		   /* alloc_block(isRetry) succeeded (num_alloc_retries + 1) */
	bool retry_refused_by_cap; /* the retry failed at the memory fraction */
	/* throw_on_cudamalloc_oom (2.12+) rejected it at the fraction: no
	 * release and no retry ran */
	bool rejected;
	bool oom; /* every stage failed: an oom entry, num_ooms + 1 */
} CcaCascade;

/* What the last cca_allocator_malloc() (or _malloc_in()) did, stage by
 * stage (borrowed; overwritten by the next malloc).  All zero before the
 * first. */
const CcaCascade *cca_allocator_last_cascade(const CcaAllocator *alloc);

G_END_DECLS

#endif
