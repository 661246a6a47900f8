/* allocator.c - PyTorch 2.11's CUDACachingAllocator policy, one device.
 *
 * Follows doc/allocator-model.md; each section names the PyTorch function it models.
 * State: a slab of blocks; per pool (small, large) a free set ordered
 * (stream, size, address) and an unmapped set ordered (stream, address);
 * the expandable-segment reservations; the deferred frees in the order
 * they were requested; DeviceStats.
 *
 * Invariants (checked by cca_allocator_check_invariants):
 *  - the blocks of a segment tile it: prev/next links are consistent and
 *    addresses contiguous;
 *  - a block is in its pool's free set iff it is mapped, not allocated and
 *    has no outstanding events; in the unmapped set iff it is unmapped;
 *  - reserved/allocated/active byte stats equal sums over blocks.
 *
 * long-file: the policy itself is under 1500 lines; mid-run seeding
 * (cca_allocator_seed*) and the state/explain queries are to move to
 * their own policy files, after the speed work in this file lands.
 */
#include "config.h"

#include "allocator.h"

#include <math.h>
#include <string.h>

#include "block.h"
#include "tree.h"
#include "pytorch.h"
#include "rules.h"

typedef struct {
	CcaTree blocks;	  /* free mapped blocks, (stream, size, ptr) */
	CcaTree unmapped; /* unmapped expandable space, (stream, ptr) */
	bool is_small;
	uint64_t get_free_blocks_call_count; /* gc age clock (garbage_collect_cached_blocks) */
} CcaPool;

typedef struct {
	uint64_t base; /* reservation start */
	uint64_t size; /* reserved bytes (page * max_handles) */
	uint64_t page; /* 2 MiB (small) or large_segment_size */
	uint64_t stream;
	bool is_small;
	bool live;
} CcaExpandableSegment;

struct CcaAllocator {
	CcaSettings settings;
	CcaDevice *device;
	CcaEmitFunc emit;
	void *emit_data;

	CcaBlock *slab;
	uint32_t slab_len, slab_cap;
	/* slab slots of deleted blocks, reused last in first out */
	CcaHandle *free_handles;
	uint32_t n_free_handles, cap_free_handles;

	/* pools[2k] small, pools[2k+1] large of mempool k; k = 0 is the
	 * device's default pool pair, k > 0 private pools (MemPool, graphs) */
	CcaPool pools[2 * CCA_MAX_MEMPOOLS];
	int64_t mempool_ids[CCA_MAX_MEMPOOLS][2];
	bool mempool_freeable[CCA_MAX_MEMPOOLS]; /* its segments may be released */
	uint32_t n_mempools;
	GArray *expandable; /* CcaExpandableSegment */
	GArray *pending;    /* CcaHandle: deferred frees, oldest first */

	uint64_t total_reserved;  /* total_allocated_memory in PyTorch */
	uint64_t allowed_maximum; /* 0 = no memory fraction in force */
	bool fraction_set;
	CcaStats stats;
	/* decisions that went by device address alone (see
	 * cca_allocator_address_ties()) */
	uint64_t address_ties;
	uint64_t largest_segment; /* cca_allocator_reach() */
	CcaSplitSeen *split_seen; /* cca_allocator_split_seen(); written by const paths too */
	bool count_ties;	  /* cca_allocator_count_address_ties() */
	CcaTieFunc on_tie;	  /* cca_allocator_on_address_tie() */
	void *on_tie_data;
	GArray *tie_group; /* CcaTieBlock: the blocks of the tie heard */
	/* the release's rules (rules.h), from settings.pytorch_version */
	const CcaRules *rules;
	uint64_t next_counter;	 /* the last allocation counter drawn */
	uint64_t counter_ties;	 /* ties the counter decided (address before 2.12) */
	uint64_t oom_rejections; /* throw_on_cudamalloc_oom's immediate OOMs */
	uint32_t emit_mask;	 /* cca_allocator_emit_only() */
	uint64_t n_mallocs;	 /* malloc calls so far */
	/* what the last malloc did, stage by stage (cca_allocator_last_cascade()) */
	CcaCascade cascade;
	bool cascade_dirty;	 /* a stage past get_free_block wrote to it */
	uint32_t released_n;	 /* segment_free/unmap so far, for the stages */
	uint64_t released_bytes; /* their bytes */
	bool refused_by_cap;	 /* the last alloc_block failed at the cap */
	/* the first blocks of mapped runs (cca_allocator_segment_count()),
	 * kept by every device call; seeding marks it stale and the next
	 * count walks the slab once */
	uint64_t mapped_runs;
	bool mapped_runs_stale;
#ifdef CCA_DEBUG
	uint64_t debug_ops; /* operations since the last invariant walk */
#endif
};

/* Everything one malloc() works with (AllocParams). */
typedef struct {
	uint64_t orig_size;
	uint64_t size;	     /* rounded */
	uint64_t alloc_size; /* segment bytes */
	uint64_t stream;
	CcaPool *pool;
	CcaHandle block;
} AllocParams;

/* ------------------------------------------------------------------ slab */

static inline CcaBlock *
B(const CcaAllocator *a, CcaHandle h)
{
	return &a->slab[h];
}

/* Debug builds (--enable-debug, CCA_DEBUG) check what the public functions
 * are given with CCA_ASSERT and the allocator's invariants after the
 * operations that change its state, aborting on the first broken one;
 * other builds compile both away.  The walk costs O(live blocks): it runs
 * after every operation while at most DEBUG_WALK_BLOCKS blocks live, and
 * beyond that once every live/DEBUG_WALK_BLOCKS operations, so a debug
 * replay costs at most about DEBUG_WALK_BLOCKS block visits per event
 * instead of growing with the state.  A broken invariant that lasts is
 * caught at most live/DEBUG_WALK_BLOCKS operations after the one that
 * broke it; one mended before the next walk goes unseen. */
#ifdef CCA_DEBUG
#define CCA_ASSERT(expr) g_assert(expr)
enum {
	DEBUG_WALK_BLOCKS = 256
};

static void
debug_check(CcaAllocator *a, const char *operation)
{
	uint64_t live = a->slab_len - a->n_free_handles;
	if (live > DEBUG_WALK_BLOCKS && ++a->debug_ops * DEBUG_WALK_BLOCKS < live)
		return;
	a->debug_ops = 0;
	g_autoptr(GString) why = g_string_new(NULL);
	if (!cca_allocator_check_invariants(a, why))
		g_error("allocator invariant broken after %s: %s", operation, why->str);
}
#define CCA_CHECK_INVARIANTS(a, operation) debug_check((a), (operation))
#else
#define CCA_ASSERT(expr) ((void)0)
#define CCA_CHECK_INVARIANTS(a, operation) ((void)0)
#endif

/* H names a block of the slab that is live (not deleted). */
G_GNUC_UNUSED static inline bool
handle_valid(const CcaAllocator *a, CcaHandle h)
{
	return h < a->slab_len && B(a, h)->live;
}

static CcaHandle
block_new(CcaAllocator *a, uint64_t ptr, uint64_t size, uint64_t stream, uint8_t pool)
{
	CcaHandle h;
	if (a->n_free_handles > 0) {
		h = a->free_handles[--a->n_free_handles];
	} else {
		if (a->slab_len == a->slab_cap) {
			a->slab_cap = a->slab_cap ? a->slab_cap * 2 : 1024;
			a->slab = g_renew(CcaBlock, a->slab, a->slab_cap);
		}
		h = a->slab_len++;
	}
	CcaBlock *b = B(a, h);
	memset(b, 0, sizeof *b);
	b->ptr = ptr;
	b->size = size;
	b->stream = stream;
	b->prev = b->next = CCA_NIL;
	b->tree_leaf = CCA_NIL;
	b->expandable = -1;
	b->pool = pool;
	b->is_small = pool % 2 == 0;
	b->mapped = true;
	b->live = true;
	/* 2.12 (#178362): every new Block draws the counter */
	if (a->rules->order == CCA_ORDER_BLOCK_COUNTER)
		b->counter = ++a->next_counter;
	return h;
}

/* The counter of a block cut from PARENT (a split, a remap, an unmap):
 * 2.13+ (#183591) inherits the segment's counter; 2.12's block drew its
 * own in block_new(). */
static void
inherit_counter(CcaAllocator *a, CcaHandle h, CcaHandle parent)
{
	if (a->rules->order == CCA_ORDER_SEGMENT_COUNTER)
		B(a, h)->counter = B(a, parent)->counter;
}

/* The counter of a new segment's first block: 2.13+ draws it at cudaMalloc
 * and at each new expandable segment (#183591). */
static void
segment_counter(CcaAllocator *a, CcaHandle h)
{
	if (a->rules->order == CCA_ORDER_SEGMENT_COUNTER)
		B(a, h)->counter = ++a->next_counter;
}

static void
block_delete(CcaAllocator *a, CcaHandle h)
{
	B(a, h)->live = false;
	if (G_UNLIKELY(a->n_free_handles == a->cap_free_handles)) {
		a->cap_free_handles = a->cap_free_handles ? a->cap_free_handles * 2 : 1024;
		a->free_handles = g_renew(CcaHandle, a->free_handles, a->cap_free_handles);
	}
	a->free_handles[a->n_free_handles++] = h;
}

static inline CcaPool *
pool_of(CcaAllocator *a, CcaHandle h)
{
	return &a->pools[B(a, h)->pool];
}

static inline uint8_t
pool_index(const CcaAllocator *a, const CcaPool *pool)
{
	return (uint8_t)(pool - a->pools);
}

static inline CcaStatType
stat_type(bool is_small)
{
	return is_small ? CCA_STAT_SMALL_POOL : CCA_STAT_LARGE_POOL;
}

static inline bool
is_split(const CcaBlock *b)
{
	return b->prev != CCA_NIL || b->next != CCA_NIL;
}

/* Whether live block H starts a mapped run: a segment, or a mapped run of
 * an expandable segment, as cca_allocator_state() lists them. */
static inline bool
run_head(const CcaAllocator *a, CcaHandle h)
{
	const CcaBlock *b = B(a, h);
	return b->mapped && (b->prev == CCA_NIL || !B(a, b->prev)->mapped);
}

/* The mapped runs counted by walking the slab. */
static uint64_t
mapped_runs_walk(const CcaAllocator *a)
{
	uint64_t n = 0;
	for (CcaHandle h = 0; h < a->slab_len; h++)
		if (B(a, h)->live && run_head(a, h))
			n++;
	return n;
}

/* insert_into_blocks: into the free set, resetting the gc age base. */
static void
pool_insert_block(CcaAllocator *a, CcaHandle h)
{
	CcaPool *pool = pool_of(a, h);
	B(a, h)->gc_count_base = pool->get_free_blocks_call_count;
	B(a, h)->set = CCA_SET_BLOCKS;
	cca_tree_insert(&pool->blocks, a->slab, h);
}

static void
pool_insert_unmapped(CcaAllocator *a, CcaHandle h)
{
	B(a, h)->set = CCA_SET_UNMAPPED;
	cca_tree_insert(&pool_of(a, h)->unmapped, a->slab, h);
}

static void
pool_erase(CcaAllocator *a, CcaHandle h)
{
	CcaPool *pool = pool_of(a, h);
	if (B(a, h)->set == CCA_SET_BLOCKS)
		cca_tree_erase(&pool->blocks, a->slab, h);
	else if (B(a, h)->set == CCA_SET_UNMAPPED)
		cca_tree_erase(&pool->unmapped, a->slab, h);
	B(a, h)->set = CCA_SET_NONE;
}

/* insert_into_blocks for H in the place of OLD, a block of the same
 * pool's free set under the key it was inserted with (H itself, whose size
 * or address changed since, or a neighbour H merged): H takes OLD's entry
 * when its key keeps that place in the order (cca_tree_replace()), else
 * OLD is erased and H inserted.  OLD is in no set afterwards. */
static void
pool_insert_in_place_of(CcaAllocator *a, CcaHandle h, CcaHandle old)
{
	CcaPool *pool = pool_of(a, h);
	if (!cca_tree_replace(&pool->blocks, a->slab, old, h)) {
		pool_erase(a, old);
		pool_insert_block(a, h);
		return;
	}
	B(a, old)->set = CCA_SET_NONE;
	B(a, h)->set = CCA_SET_BLOCKS;
	B(a, h)->gc_count_base = pool->get_free_blocks_call_count;
}

static void
emit(CcaAllocator *a, CcaAction action, uint64_t addr, uint64_t size, uint64_t stream)
{
	if (!a->emit || !(a->emit_mask & (1u << action)))
		return;
	CcaEvent ev = {
		.addr = addr,
		.size = size,
		.stream = stream,
		.time_us = CCA_TIME_NONE,
		.action = (uint8_t)action,
	};
	a->emit(a->emit_data, &ev);
}

/* ---------- sizes: round_size, get_allocation_size */

static uint64_t
roundup_power2_next_division(uint64_t size, uint32_t divisions)
{
	if ((size & (size - 1)) == 0)
		return size;
	int log2_size = 63 - __builtin_clzll(size);
	uint64_t power2_floor = UINT64_C(1) << log2_size;
	uint64_t step = power2_floor >> (__builtin_ctz(divisions));
	if (step == 0)
		return 2 * power2_floor;
	uint64_t low = size & ~(step - 1);
	return low == size ? size : low + step;
}

/* round_size under SETTINGS and their RULES. */
static inline uint64_t
round_size_with(const CcaSettings *settings, const CcaRules *rules, uint64_t size)
{
	if (size < CCA_MIN_BLOCK_SIZE)
		return CCA_MIN_BLOCK_SIZE;
	uint32_t divisions = cca_settings_roundup_divisions(settings, size);
	/* before 2.4 one division (divisions > 0) already rounded up to the
	 * next power of two (doc/versions.md) */
	uint32_t least = rules->roundup_one_division_rounds ? 0 : 1;
	if (divisions > least && size > CCA_MIN_BLOCK_SIZE * divisions)
		return roundup_power2_next_division(size, divisions);
	return cca_pytorch_round_min_block(size);
}

uint64_t
cca_allocator_round_size_under(const CcaSettings *settings, uint64_t size)
{
	return round_size_with(settings, cca_rules_for(settings->pytorch_version), size);
}

uint64_t
cca_allocator_round_size(const CcaAllocator *a, uint64_t size)
{
	return round_size_with(&a->settings, a->rules, size);
}

static uint64_t
allocation_size(const CcaAllocator *a, uint64_t size)
{
	return cca_pytorch_segment_size(size, a->settings.large_segment_size);
}

uint64_t
cca_allocator_segment_size(const CcaAllocator *a, uint64_t orig_size)
{
	return allocation_size(a, cca_allocator_round_size(a, orig_size));
}

static bool
gc_enabled(const CcaAllocator *a)
{
	return a->fraction_set && a->settings.garbage_collection_threshold > 0.0;
}

/* ---------- lookup: get_free_block */

/* A free mapped block's size plus the unmapped space right after it. */
static uint64_t
expandable_size(const CcaAllocator *a, CcaHandle h)
{
	const CcaBlock *b = B(a, h);
	if (b->next != CCA_NIL && !B(a, b->next)->mapped)
		return b->size + B(a, b->next)->size;
	return b->size;
}

/* Notes size X compared with max_split_size (cca_allocator_split_seen()). */
static inline void
split_compared(const CcaAllocator *a, uint64_t x)
{
	CcaSplitSeen *seen = a->split_seen;
	if (x >= a->settings.max_split_size) {
		if (x < seen->from)
			seen->from = x;
	} else if (x > seen->below) {
		seen->below = x;
	}
}

/* X >= max_split_size, noted: every comparison of a size with the setting
 * goes through here or split_compared(). */
static inline bool
oversize(const CcaAllocator *a, uint64_t x)
{
	split_compared(a, x);
	return x >= a->settings.max_split_size;
}

/* Notes the sizes a search of POOL's free set by a key of max_split_size
 * met: the block IT found (CCA_NIL: none) and the one before it.  Under
 * any setting between the two the search finds IT again. */
static void
search_compared(const CcaAllocator *a, const CcaPool *pool, CcaHandle it)
{
	CcaHandle before = it == CCA_NIL ? cca_tree_last(&pool->blocks, a->slab)
					 : cca_tree_prev(&pool->blocks, a->slab, it);
	if (it != CCA_NIL)
		split_compared(a, B(a, it)->size);
	if (before != CCA_NIL)
		split_compared(a, B(a, before)->size);
}

/* The block get_free_block would take, without taking it. */
static CcaHandle
find_free_block(const CcaAllocator *a, const CcaPool *pool, uint64_t size, uint64_t stream)
{
	CcaHandle it = cca_tree_lower_bound(&pool->blocks, a->slab, stream, size, 0);
	if (it == CCA_NIL || B(a, it)->stream != stream)
		return CCA_NIL;
	if (B(a, it)->expandable >= 0) {
		if (a->settings.expandable_segments) {
			for (;;) {
				CcaHandle next = cca_tree_next(&pool->blocks, a->slab, it);
				if (B(a, it)->expandable < 0 || next == CCA_NIL ||
				    B(a, next)->stream != stream ||
				    expandable_size(a, next) >= expandable_size(a, it))
					break;
				it = next;
			}
		} else {
			while (it != CCA_NIL && B(a, it)->expandable >= 0 &&
			       B(a, it)->stream == stream)
				it = cca_tree_next(&pool->blocks, a->slab, it);
			if (it == CCA_NIL || B(a, it)->stream != stream)
				return CCA_NIL;
		}
	}
	bool large = oversize(a, size);
	if (!large && oversize(a, B(a, it)->size))
		return CCA_NIL;
	if (large && B(a, it)->size >= size + a->settings.max_non_split_rounding)
		return CCA_NIL;
	return it;
}

/* The first block of the segment (or mapped run) that holds H. */
static CcaHandle
segment_head(const CcaAllocator *a, CcaHandle h)
{
	while (B(a, h)->prev != CCA_NIL && B(a, B(a, h)->prev)->mapped)
		h = B(a, h)->prev;
	return h;
}

/* The first block of H's segment when it is at most 16 blocks before H,
 * else CCA_NIL. */
static CcaHandle
segment_head_near(const CcaAllocator *a, CcaHandle h)
{
	for (int steps = 0; steps < 16; steps++) {
		if (B(a, h)->prev == CCA_NIL)
			return h;
		h = B(a, h)->prev;
	}
	return CCA_NIL;
}

/* Live expandable segments of STREAM in the pool of smallness IS_SMALL. */
static guint
expandable_segments_of(const CcaAllocator *a, uint64_t stream, bool is_small)
{
	guint n = 0;
	for (guint i = 0; i < a->expandable->len; i++) {
		const CcaExpandableSegment *e =
			&g_array_index(a->expandable, CcaExpandableSegment, i);
		n += e->live && e->stream == stream && e->is_small == is_small;
	}
	return n;
}

/* Tells the tie listener of a decision by address among the free blocks
 * of one stream and size from FIRST on (CCA_TIE_FIRST: of FIRST's counter
 * too), or, when FIRST is CCA_NIL or they are too many, of one it cannot
 * check. */
static void
hear_tie(CcaAllocator *a, CcaTieKind kind, CcaHandle first)
{
	if (!a->on_tie || !a->count_ties)
		return;
	GArray *g = a->tie_group;
	g_array_set_size(g, 0);
	const CcaBlock *f = first == CCA_NIL ? NULL : B(a, first);
	for (CcaHandle h = first; h != CCA_NIL;
	     h = cca_tree_next(&pool_of(a, h)->blocks, a->slab, h)) {
		const CcaBlock *b = B(a, h);
		if (b->stream != f->stream || b->size != f->size ||
		    (kind == CCA_TIE_FIRST && b->counter != f->counter))
			break;
		if (g->len == CCA_TIE_GROUP_MAX || b->expandable >= 0) {
			g_array_set_size(g, 0);
			break;
		}
		CcaTieBlock t = {b->ptr, b->counter};
		g_array_append_val(g, t);
	}
	a->on_tie(a->on_tie_data, kind, (const CcaTieBlock *)(void *)g->data, g->len);
}

/* The first free block of H's stream and size in H's set. */
static CcaHandle
first_of_size(CcaAllocator *a, CcaHandle h)
{
	const CcaTree *set = &pool_of(a, h)->blocks;
	for (CcaHandle p = cca_tree_prev(set, a->slab, h);
	     p != CCA_NIL && B(a, p)->stream == B(a, h)->stream && B(a, p)->size == B(a, h)->size;
	     p = cca_tree_prev(set, a->slab, p))
		h = p;
	return h;
}

/* Counts an address tie when free block H was taken over one that differs
 * from it in address alone and lies in another segment: a block after H
 * in the set's order with its stream, size and counter, in a segment
 * other than H's (blocks of one segment keep their order whatever its
 * address); or H lies in an expandable segment while its stream has
 * another (the choice between segments then goes by their addresses).
 * A segment not seen within a few neighbours is taken as another. */
static void
note_choice(CcaAllocator *a, CcaHandle h)
{
	const CcaBlock *b = B(a, h);
	if (b->expandable >= 0) {
		if (expandable_segments_of(a, b->stream, b->is_small) > 1) {
			a->address_ties++;
			hear_tie(a, CCA_TIE_FIRST, CCA_NIL);
		}
		return;
	}
	const CcaTree *set = &pool_of(a, h)->blocks;
	CcaHandle n = cca_tree_next(set, a->slab, h);
	if (n == CCA_NIL || B(a, n)->stream != b->stream || B(a, n)->size != b->size)
		return;
	CcaHandle head = segment_head_near(a, h);
	bool apart = head == CCA_NIL || segment_head_near(a, n) != head;
	/* 2.12+: the counter decides what 2.11 decided by address */
	if (B(a, n)->counter != b->counter) {
		if (apart)
			a->counter_ties++;
		return;
	}
	/* the blocks of H's key after H that lie in H's segment come first
	 * (its addresses are below the next segment's): the first one past
	 * them decides */
	for (guint seen = 0; !apart; seen++) {
		n = cca_tree_next(set, a->slab, n);
		if (n == CCA_NIL || B(a, n)->stream != b->stream || B(a, n)->size != b->size ||
		    B(a, n)->counter != b->counter)
			return;
		apart = seen == CCA_TIE_GROUP_MAX || segment_head_near(a, n) != head;
	}
	a->address_ties++;
	hear_tie(a, CCA_TIE_FIRST, h);
}

static bool
get_free_block(CcaAllocator *a, AllocParams *p)
{
	if (gc_enabled(a))
		p->pool->get_free_blocks_call_count++;
	CcaHandle h = find_free_block(a, p->pool, p->size, p->stream);
	if (h == CCA_NIL)
		return false;
	if (a->count_ties)
		note_choice(a, h);
	/* left in the free set for alloc_found_block(), which takes it out
	 * or moves what a split leaves of it (pool.blocks.erase, then
	 * insert_into_blocks of the remainder) */
	p->block = h;
	return true;
}

/* ---------- releasing: release_block */

static void
release_block(CcaAllocator *a, CcaHandle h)
{
	CcaBlock *b = B(a, h);
	uint64_t ptr = b->ptr, size = b->size, stream = b->stream;
	bool is_small = b->is_small;
	a->stats.num_device_free++;
	a->released_n++;
	a->released_bytes += size;
	emit(a, CCA_ACTION_SEGMENT_FREE, ptr, size, stream);
	a->device->ops->segment_free(a->device, ptr, size);
	a->total_reserved -= size;
	cca_stat_array_sub(a->stats.segment, stat_type(is_small), 1);
	cca_stat_array_sub(a->stats.reserved_bytes, stat_type(is_small), (int64_t)size);
	if (oversize(a, size))
		cca_stat_update(&a->stats.oversize_segments, -1);
	a->mapped_runs--; /* a whole cudaMalloc segment, one run */
	pool_erase(a, h);
	block_delete(a, h);
}

/* try_merge_blocks: merges free neighbour SRC into DST; returns the bytes
 * merged (0 when SRC cannot merge).  SRC leaves its set and the slab,
 * except that when KEPT is not NULL, *KEPT is still CCA_NIL and SRC is in
 * the free set of DST's pool, SRC stays in both and *KEPT names it, for
 * DST to take its place (pool_insert_in_place_of()). */
static uint64_t
try_merge_blocks(CcaAllocator *a, CcaHandle dst, CcaHandle src, CcaHandle *kept)
{
	if (src == CCA_NIL)
		return 0;
	CcaBlock *s = B(a, src), *d = B(a, dst);
	if (s->allocated || s->event_count > 0 || d->mapped != s->mapped)
		return 0;
	if (d->prev == src) {
		d->ptr = s->ptr;
		d->prev = s->prev;
		if (d->prev != CCA_NIL)
			B(a, d->prev)->next = dst;
	} else {
		d->next = s->next;
		if (d->next != CCA_NIL)
			B(a, d->next)->prev = dst;
	}
	uint64_t subsumed = s->size;
	d->size += subsumed;
	if (kept && *kept == CCA_NIL && s->set == CCA_SET_BLOCKS && s->pool == d->pool) {
		*kept = src;
		return subsumed;
	}
	pool_erase(a, src);
	block_delete(a, src);
	return subsumed;
}

/* free_block: the block returns to its pool, merging neighbours. */
static void
free_block_now(CcaAllocator *a, CcaHandle h)
{
	CcaBlock *b = B(a, h);
	emit(a, CCA_ACTION_FREE_COMPLETED, b->ptr, b->requested_size, b->stream);
	uint64_t original_size = b->size, requested = b->requested_size;
	bool is_small = b->is_small, expandable = b->expandable >= 0;
	int64_t net_blocks = 0, net_bytes = 0;
	CcaHandle neighbours[2] = {b->prev, b->next}, kept = CCA_NIL;
	for (int i = 0; i < 2; i++) {
		uint64_t subsumed = try_merge_blocks(a, h, neighbours[i], &kept);
		if (subsumed > 0) {
			net_blocks--;
			net_bytes -= (int64_t)subsumed;
		}
	}
	if (kept != CCA_NIL) {
		pool_insert_in_place_of(a, h, kept);
		block_delete(a, kept);
	} else {
		pool_insert_block(a, h);
	}
	b = B(a, h);
	if (is_split(b)) {
		net_blocks++;
		net_bytes += (int64_t)b->size;
	}
	CcaStatType t = stat_type(is_small);
	if (!expandable) {
		cca_stat_array_update(a->stats.inactive_split, t, net_blocks);
		cca_stat_array_update(a->stats.inactive_split_bytes, t, net_bytes);
	}
	cca_stat_array_sub(a->stats.active, t, 1);
	cca_stat_array_sub(a->stats.active_bytes, t, (int64_t)original_size);
	cca_stat_array_sub(a->stats.requested_bytes, t, (int64_t)requested);
}

void
cca_allocator_free_block(CcaAllocator *a, CcaHandle h, bool deferred)
{
	CCA_ASSERT(handle_valid(a, h));
	CcaBlock *b = B(a, h);
	/* callers free allocated blocks only (the engine refuses a trace
	 * that frees a block twice before it gets here) */
	g_assert(b->live && b->allocated);
	b->allocated = false;
	CcaStatType t = stat_type(b->is_small);
	cca_stat_array_sub(a->stats.allocation, t, 1);
	cca_stat_array_sub(a->stats.allocated_bytes, t, (int64_t)b->size);
	emit(a, CCA_ACTION_FREE_REQUESTED, b->ptr, b->requested_size, b->stream);
	if (oversize(a, b->size))
		cca_stat_update(&a->stats.oversize_allocations, -1);
	if (deferred) {
		b->event_count = 1;
		g_array_append_val(a->pending, h);
	} else {
		free_block_now(a, h);
	}
	CCA_CHECK_INVARIANTS(a, "free");
}

static void
remove_pending(CcaAllocator *a, CcaHandle h)
{
	for (guint i = 0; i < a->pending->len; i++)
		if (g_array_index(a->pending, CcaHandle, i) == h) {
			g_array_remove_index(a->pending, i);
			return;
		}
}

void
cca_allocator_complete_free(CcaAllocator *a, CcaHandle h)
{
	CCA_ASSERT(h < a->slab_len);
	if (!cca_allocator_is_pending(a, h))
		return;
	remove_pending(a, h);
	B(a, h)->event_count = 0;
	free_block_now(a, h);
	CCA_CHECK_INVARIANTS(a, "complete_free");
}

bool
cca_allocator_is_allocated(const CcaAllocator *a, CcaHandle h)
{
	return h < a->slab_len && B(a, h)->live && B(a, h)->allocated;
}

bool
cca_allocator_is_pending(const CcaAllocator *a, CcaHandle h)
{
	return h < a->slab_len && B(a, h)->live && !B(a, h)->allocated && B(a, h)->event_count > 0;
}

guint
cca_allocator_n_pending(const CcaAllocator *a)
{
	return a->pending->len;
}

void
cca_allocator_pending_first(CcaAllocator *a, CcaHandle h)
{
	CCA_ASSERT(h < a->slab_len);
	if (!cca_allocator_is_pending(a, h))
		return;
	remove_pending(a, h);
	g_array_prepend_val(a->pending, h);
}

/* synchronize_and_free_events: every deferred free completes, in the
 * order of a->pending (PyTorch: each stream's events in the order they
 * were recorded, the streams in the order of a hash map). */
static void
synchronize_and_free_events(CcaAllocator *a)
{
	a->stats.num_sync_all_streams++;
	while (a->pending->len > 0) {
		CcaHandle h = g_array_index(a->pending, CcaHandle, 0);
		g_array_remove_index(a->pending, 0);
		B(a, h)->event_count = 0;
		free_block_now(a, h);
	}
}

/* ---------- expandable segments: map_block, unmap_block */

static CcaExpandableSegment *
segment_of(const CcaAllocator *a, CcaHandle h)
{
	return &g_array_index(a->expandable, CcaExpandableSegment, B(a, h)->expandable);
}

static bool
allocatable(const CcaAllocator *a, CcaHandle h)
{
	return h != CCA_NIL && !B(a, h)->allocated && B(a, h)->event_count == 0;
}

static CcaHandle
find_expandable_block(CcaAllocator *a, AllocParams *p)
{
	CcaPool *pool = p->pool;
	if (expandable_segments_of(a, p->stream, pool->is_small) > 1) {
		a->address_ties++; /* the first that fits, by address */
		hear_tie(a, CCA_TIE_FIRST, CCA_NIL);
	}
	for (CcaHandle u = cca_tree_lower_bound(&pool->unmapped, a->slab, p->stream, 0, 0);
	     u != CCA_NIL && B(a, u)->stream == p->stream;
	     u = cca_tree_next(&pool->unmapped, a->slab, u)) {
		CcaHandle c = u;
		if (allocatable(a, B(a, c)->prev))
			c = B(a, c)->prev;
		uint64_t bytes = 0;
		for (CcaHandle b = c; bytes < p->size && allocatable(a, b); b = B(a, b)->next)
			bytes += B(a, b)->size;
		if (bytes >= p->size)
			return c;
	}
	CcaExpandableSegment seg = {
		.page = cca_pytorch_expandable_page(pool->is_small, a->settings.large_segment_size),
		.stream = p->stream,
		.is_small = pool->is_small,
		.live = true,
	};
	seg.size = cca_pytorch_reservation_size(a->device->total_memory, seg.page);
	if (a->rules->expandable_reserve && a->settings.has_expandable_segments_reserve)
		seg.size = cca_pytorch_expandable_reserve(
			a->device->total_memory, seg.page, a->settings.expandable_segments_reserve,
			a->settings.expandable_segments_reserve_gib);
	seg.base = a->device->ops->reserve(a->device, seg.size, p->stream);
	g_array_append_val(a->expandable, seg);
	CcaHandle h = block_new(a, seg.base, seg.size, p->stream, pool_index(a, pool));
	segment_counter(a, h);
	B(a, h)->mapped = false;
	B(a, h)->expandable = (int32_t)a->expandable->len - 1;
	pool_insert_unmapped(a, h);
	return h;
}

/* map_block: maps whole pages covering SIZE bytes at the start of unmapped
 * block H, merging it with free mapped neighbours. */
static bool
map_block(CcaAllocator *a, CcaHandle h, uint64_t size)
{
	const CcaExpandableSegment *seg = segment_of(a, h);
	uint64_t offset = B(a, h)->ptr - seg->base;
	uint64_t first_page = offset / seg->page;
	uint64_t end_page = (offset + size + seg->page - 1) / seg->page;
	uint64_t mapped_ptr = seg->base + first_page * seg->page;
	uint64_t mapped_size = (end_page - first_page) * seg->page;
	if (!a->device->ops->map(a->device, mapped_ptr, mapped_size))
		return false;
	pool_erase(a, h);
	/* the runs: H starts one unless its previous block is mapped, and
	 * its next block stops starting one if H maps all of itself */
	if (!(B(a, h)->prev != CCA_NIL && B(a, B(a, h)->prev)->mapped))
		a->mapped_runs++;
	if (mapped_size >= B(a, h)->size && B(a, h)->next != CCA_NIL && B(a, B(a, h)->next)->mapped)
		a->mapped_runs--;
	B(a, h)->mapped = true;
	if (mapped_size < B(a, h)->size) {
		CcaBlock *b = B(a, h);
		uint64_t rest_ptr = b->ptr + mapped_size, rest_size = b->size - mapped_size;
		uint64_t stream = b->stream;
		uint8_t pool = b->pool;
		int32_t exp = b->expandable;
		CcaHandle rest = block_new(a, rest_ptr, rest_size, stream, pool);
		inherit_counter(a, rest, h);
		b = B(a, h);
		CcaBlock *r = B(a, rest);
		r->mapped = false;
		r->expandable = exp;
		r->prev = h;
		r->next = b->next;
		if (b->next != CCA_NIL)
			B(a, b->next)->prev = rest;
		b->next = rest;
		pool_insert_unmapped(a, rest);
		b->size = mapped_size;
	}
	try_merge_blocks(a, h, B(a, h)->prev, NULL);
	try_merge_blocks(a, h, B(a, h)->next, NULL);
	pool_insert_block(a, h);
	a->total_reserved += mapped_size;
	cca_stat_array_update(a->stats.reserved_bytes, stat_type(B(a, h)->is_small),
			      (int64_t)mapped_size);
	a->stats.num_device_alloc++;
	emit(a, CCA_ACTION_SEGMENT_MAP, mapped_ptr, mapped_size, B(a, h)->stream);
	return true;
}

static CcaHandle
try_allocate_expandable_block(CcaAllocator *a, AllocParams *p)
{
	CcaHandle c = find_expandable_block(a, p);
	/* 2.15 (#192269): a request past a whole new segment's reserve fails
	 * before any page is mapped (doc/versions.md) */
	if (a->rules->expandable_reserve && !B(a, c)->mapped && B(a, c)->prev == CCA_NIL &&
	    B(a, c)->next == CCA_NIL && B(a, c)->size < p->size)
		return CCA_NIL;
	if (!B(a, c)->mapped) {
		uint64_t want = B(a, c)->size < p->size ? B(a, c)->size : p->size;
		if (!map_block(a, c, want))
			return CCA_NIL;
	}
	while (B(a, c)->size < p->size) {
		uint64_t remaining = p->size - B(a, c)->size;
		CcaHandle n = B(a, c)->next;
		/* a request larger than a whole reservation (1 1/8 of the device
		 * memory): torch's cuMemCreate fails before it runs off the
		 * segment's end; a device without a capacity here does not */
		if (n == CCA_NIL)
			return CCA_NIL;
		uint64_t want = remaining < B(a, n)->size ? remaining : B(a, n)->size;
		if (!map_block(a, n, want))
			return CCA_NIL;
		c = n;
	}
	pool_erase(a, c);
	return c;
}

/* unmap_block: unmaps the whole pages inside free block H. */
static void
unmap_block(CcaAllocator *a, CcaHandle h)
{
	const CcaExpandableSegment *seg = segment_of(a, h);
	uint64_t page = seg->page, base = seg->base;
	CcaBlock *b = B(a, h);
	uint64_t begin = (b->ptr - base + page - 1) / page;
	uint64_t end = (b->ptr + b->size - base) / page;
	if (begin >= end)
		return;
	uint64_t unmapped_ptr = base + begin * page, unmapped_size = (end - begin) * page;
	a->device->ops->unmap(a->device, unmapped_ptr, unmapped_size);
	pool_erase(a, h);
	b = B(a, h);
	uint64_t before = unmapped_ptr - b->ptr;
	uint64_t after = b->size - (before + unmapped_size);
	uint64_t stream = b->stream;
	bool is_small = b->is_small;
	uint8_t pool = b->pool;
	int32_t exp = b->expandable;
	/* the runs: the part before keeps H's start of a run (none is left
	 * without it), the part after starts one (or H's next block does,
	 * when mapped) */
	if (before == 0 && run_head(a, h))
		a->mapped_runs--;
	if (after > 0 || (b->next != CCA_NIL && B(a, b->next)->mapped))
		a->mapped_runs++;
	if (before > 0) {
		CcaHandle f = block_new(a, B(a, h)->ptr, before, stream, pool);
		inherit_counter(a, f, h);
		CcaBlock *fb = B(a, f), *hb = B(a, h);
		fb->expandable = exp;
		fb->prev = hb->prev;
		fb->next = h;
		if (hb->prev != CCA_NIL)
			B(a, hb->prev)->next = f;
		hb->prev = f;
		pool_insert_block(a, f);
	}
	if (after > 0) {
		CcaHandle f = block_new(a, unmapped_ptr + unmapped_size, after, stream, pool);
		inherit_counter(a, f, h);
		CcaBlock *fb = B(a, f), *hb = B(a, h);
		fb->expandable = exp;
		fb->prev = h;
		fb->next = hb->next;
		if (hb->next != CCA_NIL)
			B(a, hb->next)->prev = f;
		hb->next = f;
		pool_insert_block(a, f);
	}
	b = B(a, h);
	b->ptr = unmapped_ptr;
	b->size = unmapped_size;
	b->mapped = false;
	try_merge_blocks(a, h, B(a, h)->prev, NULL);
	try_merge_blocks(a, h, B(a, h)->next, NULL);
	pool_insert_unmapped(a, h);
	a->total_reserved -= unmapped_size;
	cca_stat_array_sub(a->stats.reserved_bytes, stat_type(is_small), (int64_t)unmapped_size);
	a->stats.num_device_free++;
	a->released_n++;
	a->released_bytes += unmapped_size;
	emit(a, CCA_ACTION_SEGMENT_UNMAP, unmapped_ptr, unmapped_size, stream);
}

static void
release_expandable_segment(CcaAllocator *a, CcaHandle h)
{
	CcaExpandableSegment *seg = segment_of(a, h);
	a->device->ops->unreserve(a->device, seg->base, seg->size);
	seg->live = false;
	pool_erase(a, h);
	block_delete(a, h);
}

/* ---------- release cascade: release_available_cached_blocks, release_cached_blocks */

static void
release_blocks(CcaAllocator *a, CcaPool *pool)
{
	GArray *to_unmap = g_array_new(FALSE, FALSE, sizeof(CcaHandle));
	CcaHandle it = cca_tree_first(&pool->blocks, a->slab);
	while (it != CCA_NIL) {
		CcaHandle h = it;
		it = cca_tree_next(&pool->blocks, a->slab, it);
		if (B(a, h)->expandable >= 0)
			g_array_append_val(to_unmap, h);
		else if (!is_split(B(a, h)))
			release_block(a, h);
	}
	for (guint i = 0; i < to_unmap->len; i++) {
		CcaHandle h = g_array_index(to_unmap, CcaHandle, i);
		unmap_block(a, h);
		if (!is_split(B(a, h)) && !B(a, h)->mapped)
			release_expandable_segment(a, h);
	}
	g_array_free(to_unmap, TRUE);
}

static bool
release_cached_blocks(CcaAllocator *a)
{
	synchronize_and_free_events(a);
	release_blocks(a, &a->pools[1]);
	release_blocks(a, &a->pools[0]);
	for (uint32_t k = 1; k < a->n_mempools; k++) {
		if (!a->mempool_freeable[k])
			continue;
		release_blocks(a, &a->pools[2 * k]);
		release_blocks(a, &a->pools[2 * k + 1]);
	}
	return true;
}

void
cca_allocator_empty_cache(CcaAllocator *a)
{
	release_cached_blocks(a);
	CCA_CHECK_INVARIANTS(a, "empty_cache");
}

/* Appends to OUT (uint64_t) the bases of the whole cached segments of POOL
 * that release_blocks() would free, in its order (expandable ones aside). */
static void
cached_segments_of(const CcaAllocator *a, const CcaPool *pool, GArray *out)
{
	for (CcaHandle h = cca_tree_first(&pool->blocks, a->slab); h != CCA_NIL;
	     h = cca_tree_next(&pool->blocks, a->slab, h))
		if (B(a, h)->expandable < 0 && !is_split(B(a, h)))
			g_array_append_val(out, B(a, h)->ptr);
}

GArray *
cca_allocator_cached_segments(const CcaAllocator *a)
{
	GArray *out = g_array_new(FALSE, FALSE, sizeof(uint64_t));
	cached_segments_of(a, &a->pools[1], out);
	cached_segments_of(a, &a->pools[0], out);
	for (uint32_t k = 1; k < a->n_mempools; k++) {
		if (!a->mempool_freeable[k])
			continue;
		cached_segments_of(a, &a->pools[2 * k], out);
		cached_segments_of(a, &a->pools[2 * k + 1], out);
	}
	return out;
}

/* Is pool index POOL one release_cached_blocks() frees (a default pool,
 * or a private pool whose owner is gone)? */
static bool
pool_releasable(const CcaAllocator *a, uint32_t pool)
{
	uint32_t k = pool / 2;
	return k == 0 || a->mempool_freeable[k];
}

GArray *
cca_allocator_segments_whole_after_sync(const CcaAllocator *a)
{
	GArray *out = cca_allocator_cached_segments(a);
	for (guint i = 0; i < a->pending->len; i++) {
		CcaHandle h = g_array_index(a->pending, CcaHandle, i);
		const CcaBlock *b = B(a, h);
		if (b->expandable >= 0 || !pool_releasable(a, b->pool))
			continue;
		while (b->prev != CCA_NIL)
			b = B(a, b->prev);
		uint64_t base = b->ptr;
		bool whole = true;
		for (; whole && b; b = b->next != CCA_NIL ? B(a, b->next) : NULL)
			whole = !b->allocated;
		bool seen = false;
		for (guint j = 0; whole && !seen && j < out->len; j++)
			seen = g_array_index(out, uint64_t, j) == base;
		if (whole && !seen)
			g_array_append_val(out, base);
	}
	return out;
}

/* The whole cached segments of every pool, by base address (a new table
 * of CcaHandle + 1). */
static GHashTable *
cached_segments_by_address(const CcaAllocator *a)
{
	GHashTable *t = g_hash_table_new(g_int64_hash, g_int64_equal);
	for (uint32_t i = 0; i < 2 * a->n_mempools; i++)
		for (CcaHandle h = cca_tree_first(&a->pools[i].blocks, a->slab); h != CCA_NIL;
		     h = cca_tree_next(&a->pools[i].blocks, a->slab, h))
			if (B(a, h)->expandable < 0 && !is_split(B(a, h)))
				g_hash_table_insert(t, &B(a, h)->ptr, GUINT_TO_POINTER(h + 1));
	return t;
}

gboolean
cca_allocator_release_segments(CcaAllocator *a, const uint64_t *addrs, guint n)
{
	GHashTable *t = cached_segments_by_address(a);
	gboolean ok = TRUE;
	for (guint i = 0; i < n && ok; i++) /* each once */
		ok = g_hash_table_remove(t, &addrs[i]);
	g_hash_table_destroy(t);
	if (!ok)
		return FALSE;
	synchronize_and_free_events(a);
	/* the synchronization may have merged blocks: look them up again */
	t = cached_segments_by_address(a);
	GArray *handles = g_array_new(FALSE, FALSE, sizeof(CcaHandle));
	for (guint i = 0; i < n; i++) {
		CcaHandle h = GPOINTER_TO_UINT(g_hash_table_lookup(t, &addrs[i]));
		if (h != 0)
			g_array_append_val(handles, (CcaHandle){h - 1});
	}
	g_hash_table_destroy(t);
	for (guint i = 0; i < handles->len; i++)
		release_block(a, g_array_index(handles, CcaHandle, i));
	g_array_free(handles, TRUE);
	CCA_CHECK_INVARIANTS(a, "release_segments");
	return TRUE;
}

void
cca_allocator_mempool_release(CcaAllocator *a, uint32_t mempool)
{
	if (mempool == 0 || mempool >= a->n_mempools)
		return;
	a->mempool_freeable[mempool] = true;
	synchronize_and_free_events(a);
	release_blocks(a, &a->pools[2 * mempool]);
	release_blocks(a, &a->pools[2 * mempool + 1]);
	CCA_CHECK_INVARIANTS(a, "mempool_release");
}

static bool
release_available_cached_blocks(CcaAllocator *a, const AllocParams *p)
{
	uint64_t max_split = a->settings.max_split_size;
	if (max_split == UINT64_MAX)
		return false;
	CcaPool *pool = p->pool;
	/* the key is max_split_size unless the request is larger: then
	 * RELEASED is compared with it too */
	bool by_split = !oversize(a, p->size);
	uint64_t key_size = by_split ? max_split : p->size;
	/* PyTorch never holds a free block of max_split_size or more that is
	 * split (should_split keeps oversize blocks whole, and no segment of
	 * its own is larger than max_split_size and split), so it releases
	 * such a block as the whole segment it is.  A state rebuilt for a
	 * mid-run trace can hold one; releasing it would free part of a
	 * segment, so a split block is passed over here as an expandable one
	 * is. */
	CcaHandle it = cca_tree_lower_bound(&pool->blocks, a->slab, p->stream, key_size, 0);
	search_compared(a, pool, it);
	if (it != CCA_NIL && B(a, it)->stream == p->stream && B(a, it)->expandable < 0 &&
	    !is_split(B(a, it))) {
		note_choice(a, it);
		release_block(a, it);
		return true;
	}
	CcaHandle first = cca_tree_first(&pool->blocks, a->slab);
	if (it == first)
		return false;
	/* walk down from the largest block below the key */
	it = it == CCA_NIL ? cca_tree_last(&pool->blocks, a->slab)
			   : cca_tree_prev(&pool->blocks, a->slab, it);
	uint64_t released = 0;
	while (it != CCA_NIL && !(by_split ? oversize(a, released) : released >= key_size) &&
	       oversize(a, B(a, it)->size) && B(a, it)->stream == p->stream) {
		CcaHandle cur = it;
		bool is_first = cur == first;
		if (!is_first)
			it = cca_tree_prev(&pool->blocks, a->slab, it);
		if (!is_first && B(a, it)->stream == B(a, cur)->stream &&
		    B(a, it)->size == B(a, cur)->size) {
			a->address_ties++; /* which of two segments is released first */
			hear_tie(a, CCA_TIE_ORDER, first_of_size(a, it));
		}
		if (B(a, cur)->expandable < 0 && !is_split(B(a, cur))) {
			released += B(a, cur)->size;
			release_block(a, cur);
		}
		if (is_first)
			break;
	}
	return by_split ? oversize(a, released) : released >= key_size;
}

/* garbage_collect_cached_blocks. */
static void
garbage_collect_cached_blocks(CcaAllocator *a)
{
	uint64_t threshold =
		(uint64_t)(a->settings.garbage_collection_threshold * (double)a->allowed_maximum);
	if (a->total_reserved <= threshold)
		return;
	uint64_t target = a->total_reserved - threshold;
	CcaPool *large = &a->pools[1];
	double total_age = 0.0;
	int64_t freeable = 0;
	for (CcaHandle h = cca_tree_first(&large->blocks, a->slab); h != CCA_NIL;
	     h = cca_tree_next(&large->blocks, a->slab, h)) {
		if (!is_split(B(a, h)) && B(a, h)->expandable < 0) {
			total_age += (double)(large->get_free_blocks_call_count -
					      B(a, h)->gc_count_base);
			freeable++;
		}
	}
	if (freeable == 0)
		return;
	uint64_t reclaimed = 0;
	bool freed = true;
	while (reclaimed < target && freed && freeable > 0) {
		double age_threshold = total_age / (double)freeable;
		freed = false;
		CcaHandle it = cca_tree_first(&large->blocks, a->slab);
		while (it != CCA_NIL) {
			CcaHandle h = it;
			it = cca_tree_next(&large->blocks, a->slab, it);
			const CcaBlock *b = B(a, h);
			double age = (double)(large->get_free_blocks_call_count - b->gc_count_base);
			if (!is_split(b) && b->expandable < 0 && age >= age_threshold) {
				freed = true;
				reclaimed += b->size;
				total_age -= age;
				freeable--;
				release_block(a, h);
			}
		}
	}
}

/* Whether reserving SIZE more bytes would pass the memory fraction. */
static bool
over_cap(const CcaAllocator *a, uint64_t size)
{
	return a->fraction_set && a->total_reserved + size > a->allowed_maximum;
}

/* alloc_block: a new segment (or mapped pages) for P. */
static bool
alloc_block(CcaAllocator *a, AllocParams *p, bool is_retry)
{
	if (is_retry)
		a->stats.num_alloc_retries++;
	a->refused_by_cap = over_cap(a, p->alloc_size);
	if (a->refused_by_cap)
		return false;
	if (a->settings.expandable_segments) {
		p->block = try_allocate_expandable_block(a, p);
		return p->block != CCA_NIL;
	}
	uint64_t ptr;
	if (!a->device->ops->segment_alloc(a->device, p->alloc_size, p->stream, &ptr))
		return false;
	a->total_reserved += p->alloc_size;
	a->largest_segment = MAX(a->largest_segment, p->alloc_size);
	p->block = block_new(a, ptr, p->alloc_size, p->stream, pool_index(a, p->pool));
	a->mapped_runs++;
	segment_counter(a, p->block);
	CcaStatType t = stat_type(p->pool->is_small);
	cca_stat_array_add(a->stats.segment, t, 1);
	cca_stat_array_add(a->stats.reserved_bytes, t, (int64_t)p->alloc_size);
	if (oversize(a, p->alloc_size))
		cca_stat_update(&a->stats.oversize_segments, 1);
	a->stats.num_device_alloc++;
	emit(a, CCA_ACTION_SEGMENT_ALLOC, ptr, p->alloc_size, p->stream);
	return true;
}

/* ---------- malloc: DeviceCachingAllocator::malloc */

/* The releases of one stage of the cascade: counted from here to
 * cascade_stage_end(). */
static void
cascade_stage_begin(CcaAllocator *a)
{
	a->released_n = 0;
	a->released_bytes = 0;
}

static void
cascade_stage_end(const CcaAllocator *a, uint32_t *n, uint64_t *bytes)
{
	*n = a->released_n;
	*bytes = a->released_bytes;
}

const CcaCascade *
cca_allocator_last_cascade(const CcaAllocator *a)
{
	return &a->cascade;
}

static bool
should_split(const CcaAllocator *a, CcaHandle h, uint64_t size)
{
	const CcaBlock *b = B(a, h);
	if (!b->is_small && !a->settings.expandable_segments)
		split_compared(a, size); /* the large pool's rule compares SIZE */
	return cca_pytorch_should_split(b->is_small, a->settings.expandable_segments, size,
					b->size - size, a->settings.max_split_size);
}

static CcaHandle
alloc_found_block(CcaAllocator *a, AllocParams *p)
{
	CcaHandle h = p->block;
	bool already_split = is_split(B(a, h));
	bool expandable = B(a, h)->expandable >= 0;
	CcaStatType t = stat_type(B(a, h)->is_small);
	if (should_split(a, h, p->size)) {
		CcaBlock *rest = B(a, h);
		CcaHandle blk = block_new(a, rest->ptr, p->size, p->stream, rest->pool);
		inherit_counter(a, blk, h);
		rest = B(a, h);
		CcaBlock *nb = B(a, blk);
		nb->expandable = rest->expandable;
		nb->prev = rest->prev;
		if (nb->prev != CCA_NIL)
			B(a, nb->prev)->next = blk;
		nb->next = h;
		rest->prev = blk;
		rest->ptr += p->size;
		rest->size -= p->size;
		if (rest->set == CCA_SET_BLOCKS)
			pool_insert_in_place_of(a, h, h);
		else
			pool_insert_block(a, h);
		if (!expandable) {
			if (already_split) {
				cca_stat_array_sub(a->stats.inactive_split_bytes, t,
						   (int64_t)p->size);
			} else {
				cca_stat_array_add(a->stats.inactive_split_bytes, t,
						   (int64_t)B(a, h)->size);
				cca_stat_array_add(a->stats.inactive_split, t, 1);
			}
		}
		h = blk;
	} else {
		pool_erase(a, h);
		if (already_split && !expandable) {
			cca_stat_array_sub(a->stats.inactive_split_bytes, t,
					   (int64_t)B(a, h)->size);
			cca_stat_array_sub(a->stats.inactive_split, t, 1);
		}
	}
	CcaBlock *b = B(a, h);
	b->allocated = true;
	b->requested_size = p->orig_size;
	emit(a, CCA_ACTION_ALLOC, b->ptr, p->orig_size, b->stream);
	cca_stat_array_add(a->stats.allocation, t, 1);
	cca_stat_array_add(a->stats.allocated_bytes, t, (int64_t)b->size);
	cca_stat_array_add(a->stats.active, t, 1);
	cca_stat_array_add(a->stats.active_bytes, t, (int64_t)b->size);
	cca_stat_array_add(a->stats.requested_bytes, t, (int64_t)p->orig_size);
	if (oversize(a, b->size))
		cca_stat_update(&a->stats.oversize_allocations, 1);
	return h;
}

static void
init_params_in(const CcaAllocator *a, AllocParams *p, uint64_t orig_size, uint64_t stream,
	       uint32_t mempool)
{
	p->orig_size = orig_size;
	p->size = cca_allocator_round_size(a, orig_size);
	p->alloc_size = allocation_size(a, p->size);
	p->stream = stream;
	p->pool = (CcaPool *)&a->pools[2 * mempool + (cca_pytorch_is_small(p->size) ? 0 : 1)];
	p->block = CCA_NIL;
}

static void
init_params(const CcaAllocator *a, AllocParams *p, uint64_t orig_size, uint64_t stream)
{
	init_params_in(a, p, orig_size, stream, 0);
}

CcaHandle
cca_allocator_malloc(CcaAllocator *a, uint64_t orig_size, uint64_t stream)
{
	return cca_allocator_malloc_in(a, orig_size, stream, 0);
}

CcaHandle
cca_allocator_malloc_in(CcaAllocator *a, uint64_t orig_size, uint64_t stream, uint32_t mempool)
{
	AllocParams p;
	init_params_in(a, &p, orig_size, stream, mempool < a->n_mempools ? mempool : 0);
	CcaCascade *c = &a->cascade;
	if (a->cascade_dirty) { /* a hit writes only the fields below */
		memset(c, 0, sizeof *c);
		a->cascade_dirty = false;
	}
	c->serial = ++a->n_mallocs;
	c->orig_size = orig_size;
	c->alloc_size = p.alloc_size;
	c->pool_id[0] = a->mempool_ids[mempool < a->n_mempools ? mempool : 0][0];
	c->pool_id[1] = a->mempool_ids[mempool < a->n_mempools ? mempool : 0][1];
	bool found = get_free_block(a, &p);
	c->cache_hit = found;
	if (!found) {
		a->cascade_dirty = true;
		if (gc_enabled(a)) {
			/* the threshold it measured reserved memory against, before it ran */
			c->gc_ran = true;
			c->gc_threshold = (uint64_t)(a->settings.garbage_collection_threshold *
						     (double)a->allowed_maximum);
			c->gc_reserved_before = a->total_reserved;
			cascade_stage_begin(a);
			garbage_collect_cached_blocks(a);
			cascade_stage_end(a, &c->gc_released, &c->gc_released_bytes);
		}
		/* a request to a private pool is made while a capture or a
		 * use_mem_pool region is underway, and then PyTorch skips the
		 * release of every cached block and its retry */
		bool capturing = p.pool != &a->pools[0] && p.pool != &a->pools[1];
		c->first_ok = found = alloc_block(a, &p, false);
		c->first_refused_by_cap = !found && a->refused_by_cap;
		/* 2.12+ (#179473): throw_on_cudamalloc_oom with a memory
		 * fraction rejects a request past it before any driver call
		 * and skips every retry */
		c->rejected = c->first_refused_by_cap && a->rules->throw_on_cudamalloc_oom &&
			      a->settings.throw_on_cudamalloc_oom;
		if (c->rejected)
			a->oom_rejections++;
		if (!found && !c->rejected && a->settings.max_split_size != UINT64_MAX) {
			c->oversize_ran = true;
			cascade_stage_begin(a);
			bool enough = release_available_cached_blocks(a, &p);
			cascade_stage_end(a, &c->oversize_released, &c->oversize_released_bytes);
			if (enough) {
				c->oversize_alloc_tried = true;
				c->oversize_alloc_ok = found = alloc_block(a, &p, false);
			}
		}
		if (!found && !capturing && !c->rejected) {
			c->release_all_ran = true;
			c->synced = a->pending->len;
			cascade_stage_begin(a);
			release_cached_blocks(a);
			cascade_stage_end(a, &c->release_all_released, &c->release_all_bytes);
			c->retry_ok = found = alloc_block(a, &p, true);
			c->retry_refused_by_cap = !found && a->refused_by_cap;
		}
		c->capturing = capturing;
	}
	CcaHandle h = CCA_NIL;
	if (found) {
		h = alloc_found_block(a, &p);
	} else {
		c->oom = true;
		a->stats.num_ooms++;
		emit(a, CCA_ACTION_OOM, a->device->ops->free_memory(a->device), p.size, stream);
	}
	CCA_CHECK_INVARIANTS(a, "malloc");
	return h;
}

/* Fills *P for malloc(ORIG_SIZE) on STREAM in pool MEMPOOL and says
 * whether a cached block would serve it (get_free_block, without taking). */
static bool
cached_block_serves(const CcaAllocator *a, AllocParams *p, uint64_t orig_size, uint64_t stream,
		    uint32_t mempool)
{
	init_params_in(a, p, orig_size, stream, mempool < a->n_mempools ? mempool : 0);
	return find_free_block(a, p->pool, p->size, p->stream) != CCA_NIL;
}

/* Whether the cudaMalloc (or page map) of SIZE bytes would fail: past the
 * memory fraction, or refused by the device. */
static bool
segment_refused(const CcaAllocator *a, uint64_t size)
{
	return over_cap(a, size) || a->device->ops->would_refuse(a->device, size);
}

bool
cca_allocator_would_serve(const CcaAllocator *a, uint64_t orig_size, uint64_t stream,
			  uint32_t mempool)
{
	AllocParams p;
	return cached_block_serves(a, &p, orig_size, stream, mempool);
}

/* Whether garbage collection would release something now: it is on, the
 * reserved memory is past its threshold, and the default large pool holds
 * a whole cached segment. */
static bool
gc_would_release(const CcaAllocator *a)
{
	if (!gc_enabled(a))
		return false;
	uint64_t threshold =
		(uint64_t)(a->settings.garbage_collection_threshold * (double)a->allowed_maximum);
	if (a->total_reserved <= threshold)
		return false;
	const CcaPool *large = &a->pools[1];
	for (CcaHandle h = cca_tree_first(&large->blocks, a->slab); h != CCA_NIL;
	     h = cca_tree_next(&large->blocks, a->slab, h))
		if (!is_split(B(a, h)) && B(a, h)->expandable < 0)
			return true;
	return false;
}

bool
cca_allocator_would_release(const CcaAllocator *a, uint64_t orig_size, uint64_t stream)
{
	return cca_allocator_would_release_in(a, orig_size, stream, 0);
}

bool
cca_allocator_would_release_in(const CcaAllocator *a, uint64_t orig_size, uint64_t stream,
			       uint32_t mempool)
{
	AllocParams p;
	if (cached_block_serves(a, &p, orig_size, stream, mempool))
		return false;
	return gc_would_release(a) || segment_refused(a, p.alloc_size);
}

/* Would release_available_cached_blocks(P) release a segment?  Pure:
 * the walk of release_available_cached_blocks without the releases. */
static bool
would_release_available(const CcaAllocator *a, const AllocParams *p)
{
	uint64_t max_split = a->settings.max_split_size;
	if (max_split == UINT64_MAX)
		return false;
	const CcaPool *pool = p->pool;
	uint64_t key_size = oversize(a, p->size) ? p->size : max_split;
	CcaHandle it = cca_tree_lower_bound(&pool->blocks, a->slab, p->stream, key_size, 0);
	search_compared(a, pool, it);
	if (it != CCA_NIL && B(a, it)->stream == p->stream && B(a, it)->expandable < 0 &&
	    !is_split(B(a, it)))
		return true;
	if (it == cca_tree_first(&pool->blocks, a->slab))
		return false;
	it = it == CCA_NIL ? cca_tree_last(&pool->blocks, a->slab)
			   : cca_tree_prev(&pool->blocks, a->slab, it);
	for (; it != CCA_NIL && oversize(a, B(a, it)->size) && B(a, it)->stream == p->stream;
	     it = cca_tree_prev(&pool->blocks, a->slab, it))
		if (B(a, it)->expandable < 0 && !is_split(B(a, it)))
			return true;
	return false;
}

bool
cca_allocator_would_synchronize_in(const CcaAllocator *a, uint64_t orig_size, uint64_t stream,
				   uint32_t mempool)
{
	AllocParams p;
	if (cached_block_serves(a, &p, orig_size, stream, mempool))
		return false;
	if (gc_would_release(a))
		return false; /* garbage collection releases first */
	return segment_refused(a, p.alloc_size) && !would_release_available(a, &p);
}

/* --------------------------------------------------------- construction */

CcaAllocator *
cca_allocator_new(const CcaSettings *settings, const CcaLimits *limits, CcaDevice *device,
		  CcaEmitFunc emit_fn, void *emit_data)
{
	CcaAllocator *a = g_new0(CcaAllocator, 1);
	a->split_seen = g_new(CcaSplitSeen, 1);
	*a->split_seen = (CcaSplitSeen){.below = 0, .from = UINT64_MAX};
	cca_settings_copy(&a->settings, settings);
	a->rules = cca_rules_for(settings->pytorch_version);
	a->device = device;
	a->emit = emit_fn;
	a->emit_data = emit_data;
	a->emit_mask = UINT32_MAX;
	a->expandable = g_array_new(FALSE, FALSE, sizeof(CcaExpandableSegment));
	a->pending = g_array_new(FALSE, FALSE, sizeof(CcaHandle));
	for (int i = 0; i < 2 * CCA_MAX_MEMPOOLS; i++) {
		cca_tree_init(&a->pools[i].blocks, true);
		cca_tree_init(&a->pools[i].unmapped, false);
		a->pools[i].is_small = i % 2 == 0;
	}
	a->n_mempools = 1; /* the default pool (0, 0) */
	double fraction = limits ? limits->memory_fraction : 0.0;
	if (fraction <= 0.0 && settings->has_per_process_memory_fraction)
		fraction = settings->per_process_memory_fraction;
	if (fraction > 0.0)
		cca_allocator_set_memory_fraction(a, fraction);
	a->stats.max_split_size = cca_settings_max_split_stat(settings);
	CCA_CHECK_INVARIANTS(a, "new");
	return a;
}

void
cca_allocator_set_memory_fraction(CcaAllocator *a, double fraction)
{
	/* 2.9+ imposes no limit at a fraction of 1; older releases set the
	 * limit (and enabled garbage collection) for any fraction */
	bool old_rules = cca_rules_for(a->settings.pytorch_version)->fraction_one_is_a_limit;
	a->fraction_set = fraction > 0.0 && (fraction < 1.0 || old_rules);
	a->allowed_maximum =
		a->fraction_set ? (uint64_t)(fraction * (double)a->device->total_memory) : 0;
}

void
cca_allocator_set_settings(CcaAllocator *a, const CcaSettings *settings)
{
	/* memory_stats()'s max_split_size keeps the value the allocator was
	 * made with, as DeviceStats does; another max_split_size mid-run
	 * leaves no setting the run is the same under */
	if (settings->max_split_size != a->settings.max_split_size)
		*a->split_seen = (CcaSplitSeen){.below = UINT64_MAX, .from = 0};
	cca_settings_copy(&a->settings, settings);
	a->rules = cca_rules_for(settings->pytorch_version);
	CCA_CHECK_INVARIANTS(a, "settings");
}

void
cca_allocator_reset_peak_stats(CcaAllocator *a)
{
	cca_stats_reset_peak(&a->stats);
}

void
cca_allocator_reset_accumulated_stats(CcaAllocator *a)
{
	cca_stats_reset_accumulated(&a->stats);
}

void
cca_allocator_free(CcaAllocator *a)
{
	if (!a)
		return;
	cca_settings_clear(&a->settings);
	g_free(a->split_seen);
	for (int i = 0; i < 2 * CCA_MAX_MEMPOOLS; i++) {
		cca_tree_clear(&a->pools[i].blocks);
		cca_tree_clear(&a->pools[i].unmapped);
	}
	g_free(a->slab);
	g_free(a->free_handles);
	g_array_free(a->expandable, TRUE);
	g_array_free(a->pending, TRUE);
	if (a->tie_group)
		g_array_free(a->tie_group, TRUE);
	g_free(a);
}

const CcaSettings *
cca_allocator_settings(const CcaAllocator *a)
{
	return &a->settings;
}

const CcaStats *
cca_allocator_stats(const CcaAllocator *a)
{
	return &a->stats;
}

uint64_t
cca_allocator_reserved(const CcaAllocator *a)
{
	return a->total_reserved;
}

uint64_t
cca_allocator_allowed_maximum(const CcaAllocator *a)
{
	return a->fraction_set ? a->allowed_maximum : 0;
}

uint64_t
cca_allocator_block_address(const CcaAllocator *a, CcaHandle h)
{
	CCA_ASSERT(handle_valid(a, h));
	return B(a, h)->ptr;
}

void
cca_allocator_emit_only(CcaAllocator *a, uint32_t mask)
{
	a->emit_mask = mask;
}

void
cca_allocator_count_address_ties(CcaAllocator *a, bool count)
{
	a->count_ties = count;
}

void
cca_allocator_on_address_tie(CcaAllocator *a, CcaTieFunc func, void *data)
{
	a->on_tie = func;
	a->on_tie_data = data;
	if (func && !a->tie_group)
		a->tie_group = g_array_new(FALSE, FALSE, sizeof(CcaTieBlock));
}

uint64_t
cca_allocator_reach(const CcaAllocator *a)
{
	if (a->expandable->len > 0) {
		int64_t peak = a->stats.reserved_bytes[CCA_STAT_ALL].peak;
		return MAX(a->largest_segment, peak > 0 ? (uint64_t)peak : 0);
	}
	return a->largest_segment;
}

CcaSplitSeen
cca_allocator_split_seen(const CcaAllocator *a)
{
	return *a->split_seen;
}

uint64_t
cca_allocator_address_ties(const CcaAllocator *a)
{
	return a->address_ties;
}

uint64_t
cca_allocator_counter_ties(const CcaAllocator *a)
{
	return a->counter_ties;
}

uint64_t
cca_allocator_oom_rejections(const CcaAllocator *a)
{
	return a->oom_rejections;
}

uint64_t
cca_allocator_largest_free(const CcaAllocator *a)
{
	uint64_t largest = 0;
	for (uint32_t i = 0; i < 2 * a->n_mempools; i++)
		for (CcaHandle h = cca_tree_first(&a->pools[i].blocks, a->slab); h != CCA_NIL;
		     h = cca_tree_next(&a->pools[i].blocks, a->slab, h))
			if (B(a, h)->size > largest)
				largest = B(a, h)->size;
	return largest;
}

/* ------------------------------------------------------- private pools */

int
cca_allocator_mempool(CcaAllocator *a, const int64_t id[2])
{
	if (id[0] == 0 && id[1] == 0)
		return 0;
	for (uint32_t k = 1; k < a->n_mempools; k++)
		if (a->mempool_ids[k][0] == id[0] && a->mempool_ids[k][1] == id[1])
			return (int)k;
	if (a->n_mempools == CCA_MAX_MEMPOOLS)
		return -1;
	uint32_t k = a->n_mempools++;
	a->mempool_ids[k][0] = id[0];
	a->mempool_ids[k][1] = id[1];
	return (int)k;
}

void
cca_allocator_mempool_set_freeable(CcaAllocator *a, uint32_t mempool, bool freeable)
{
	if (mempool > 0 && mempool < a->n_mempools)
		a->mempool_freeable[mempool] = freeable;
}

/* -------------------------------------------------- seeding a start state */

void
cca_allocator_seed_segment(CcaAllocator *a, uint64_t ptr, uint64_t size, uint64_t stream,
			   bool is_small)
{
	a->device->ops->adopt(a->device, ptr, size);
	a->total_reserved += size;
	a->largest_segment = MAX(a->largest_segment, size);
	CcaHandle h = block_new(a, ptr, size, stream, is_small ? 0 : 1);
	segment_counter(a, h);
	pool_insert_block(a, h);
	CcaStatType t = stat_type(is_small);
	cca_stat_array_add(a->stats.segment, t, 1);
	cca_stat_array_add(a->stats.reserved_bytes, t, (int64_t)size);
	if (oversize(a, size))
		cca_stat_update(&a->stats.oversize_segments, 1);
	/* one cudaMalloc before the trace (alloc_block counts each) */
	a->stats.num_device_alloc++;
	a->mapped_runs_stale = true;
	CCA_CHECK_INVARIANTS(a, "seed_segment");
}

int
cca_allocator_seed_reservation(CcaAllocator *a, uint64_t base, uint64_t stream, bool is_small)
{
	CcaExpandableSegment seg = {
		.base = base,
		.page = cca_pytorch_expandable_page(is_small, a->settings.large_segment_size),
		.stream = stream,
		.is_small = is_small,
		.live = true,
	};
	seg.size = cca_pytorch_reservation_size(a->device->total_memory, seg.page);
	g_array_append_val(a->expandable, seg);
	CcaHandle h = block_new(a, base, seg.size, stream, is_small ? 0 : 1);
	segment_counter(a, h);
	B(a, h)->mapped = false;
	B(a, h)->expandable = (int32_t)a->expandable->len - 1;
	pool_insert_unmapped(a, h);
	a->mapped_runs_stale = true;
	CCA_CHECK_INVARIANTS(a, "seed_reservation");
	return (int)a->expandable->len - 1;
}

gboolean
cca_allocator_seed_mapped(CcaAllocator *a, uint64_t ptr, uint64_t size)
{
	for (CcaHandle h = 0; h < a->slab_len; h++) {
		CcaBlock *b = B(a, h);
		if (!b->live || b->set != CCA_SET_UNMAPPED || ptr < b->ptr ||
		    ptr + size > b->ptr + b->size)
			continue;
		/* only whole pages of the reservation: map_block() rounds to
		 * them, and would map a part of a page seeded here again */
		const CcaExpandableSegment *seg = segment_of(a, h);
		if ((ptr - seg->base) % seg->page != 0 || size % seg->page != 0)
			return FALSE;
		/* cut [ptr, ptr+size) out of the unmapped block, as mapped free
		 * space (map_block without a device call or trace entry) */
		pool_erase(a, h);
		b = B(a, h);
		uint8_t pool = b->pool;
		int32_t exp = b->expandable;
		uint64_t stream = b->stream;
		if (b->ptr < ptr) {
			CcaHandle before = block_new(a, b->ptr, ptr - B(a, h)->ptr, stream, pool);
			inherit_counter(a, before, h);
			CcaBlock *bb = B(a, before), *hb = B(a, h);
			bb->mapped = false;
			bb->expandable = exp;
			bb->prev = hb->prev;
			bb->next = h;
			if (hb->prev != CCA_NIL)
				B(a, hb->prev)->next = before;
			hb->prev = before;
			hb->size -= ptr - hb->ptr;
			hb->ptr = ptr;
			pool_insert_unmapped(a, before);
		}
		if (B(a, h)->size > size) {
			CcaBlock *hb = B(a, h);
			CcaHandle after = block_new(a, ptr + size, hb->size - size, stream, pool);
			inherit_counter(a, after, h);
			CcaBlock *ab = B(a, after);
			hb = B(a, h);
			ab->mapped = false;
			ab->expandable = exp;
			ab->prev = h;
			ab->next = hb->next;
			if (hb->next != CCA_NIL)
				B(a, hb->next)->prev = after;
			hb->next = after;
			hb->size = size;
			pool_insert_unmapped(a, after);
		}
		B(a, h)->mapped = true;
		pool_insert_block(a, h);
		a->device->ops->adopt(a->device, ptr, size);
		a->total_reserved += size;
		cca_stat_array_update(a->stats.reserved_bytes, stat_type(B(a, h)->is_small),
				      (int64_t)size);
		a->mapped_runs_stale = true;
		CCA_CHECK_INVARIANTS(a, "seed_mapped");
		return TRUE;
	}
	return FALSE;
}

/* The free block that contains [PTR, PTR+SIZE), or CCA_NIL (a linear
 * walk: seeding happens once, before the replay). */
static CcaHandle
free_block_containing(const CcaAllocator *a, uint64_t ptr, uint64_t size)
{
	for (CcaHandle h = 0; h < a->slab_len; h++) {
		const CcaBlock *b = B(a, h);
		if (b->live && b->set == CCA_SET_BLOCKS && b->ptr <= ptr &&
		    ptr + size <= b->ptr + b->size)
			return h;
	}
	return CCA_NIL;
}

/* Cuts [PTR, PTR+SIZE) out of free block F; returns the middle block,
 * out of every set; the pieces before and after stay free. */
static CcaHandle
carve(CcaAllocator *a, CcaHandle f, uint64_t ptr, uint64_t size)
{
	pool_erase(a, f);
	CcaBlock *fb = B(a, f);
	uint64_t stream = fb->stream;
	uint8_t pool = fb->pool;
	int32_t exp = fb->expandable;
	if (fb->ptr < ptr) { /* F keeps the front; the rest is a new block */
		CcaHandle rest =
			block_new(a, ptr, B(a, f)->ptr + B(a, f)->size - ptr, stream, pool);
		inherit_counter(a, rest, f);
		fb = B(a, f);
		CcaBlock *rb = B(a, rest);
		rb->expandable = exp;
		rb->next = fb->next;
		if (rb->next != CCA_NIL)
			B(a, rb->next)->prev = rest;
		rb->prev = f;
		fb->next = rest;
		fb->size = ptr - fb->ptr;
		pool_insert_block(a, f);
		f = rest;
	}
	fb = B(a, f);
	if (fb->size > size) {
		CcaHandle after = block_new(a, ptr + size, B(a, f)->size - size, stream, pool);
		inherit_counter(a, after, f);
		fb = B(a, f);
		CcaBlock *ab = B(a, after);
		ab->expandable = exp;
		ab->next = fb->next;
		if (ab->next != CCA_NIL)
			B(a, ab->next)->prev = after;
		ab->prev = f;
		fb->next = after;
		fb->size = size;
		pool_insert_block(a, after);
	}
	return f;
}

CcaHandle
cca_allocator_seed_block(CcaAllocator *a, uint64_t ptr, uint64_t size, uint64_t requested,
			 bool pending)
{
	CcaHandle f = free_block_containing(a, ptr, size);
	if (f == CCA_NIL)
		return CCA_NIL;
	CcaHandle h = carve(a, f, ptr, size);
	CcaBlock *b = B(a, h);
	CcaStatType t = stat_type(b->is_small);
	b->requested_size = requested;
	if (pending) {
		b->event_count = 1;
		g_array_append_val(a->pending, h);
	} else {
		b->allocated = true;
		cca_stat_array_add(a->stats.allocation, t, 1);
		cca_stat_array_add(a->stats.allocated_bytes, t, (int64_t)size);
		if (oversize(a, size))
			cca_stat_update(&a->stats.oversize_allocations, 1);
	}
	cca_stat_array_add(a->stats.active, t, 1);
	cca_stat_array_add(a->stats.active_bytes, t, (int64_t)size);
	/* (a snapshot's number: the signed update takes any) */
	cca_stat_array_update(a->stats.requested_bytes, t, (int64_t)requested);
	a->mapped_runs_stale = true;
	CCA_CHECK_INVARIANTS(a, "seed_block");
	return h;
}

static void
stat_restart(CcaStat *stat)
{
	stat->peak = stat->current;
	stat->allocated = stat->current;
	stat->freed = 0;
}

/* The decreases of inactive_split(_bytes) that the unseen prefix of a
 * mid-run trace made, taken (as for every other counter) to be the
 * allocations of the seeded live blocks and nothing else.  With no free,
 * each allocation cuts the front of its segment's one free tail block
 * (alloc_found_block), so a segment reads [live blocks in allocation order]
 * [free tail or nothing]: the first cut raised inactive_split_bytes by the
 * tail then left, every later block lowered it by its size, and the last
 * one, taking the whole tail, lowered inactive_split by one.  A segment
 * with a free block before a live one had frees before the trace: its
 * history is unknown and adds nothing. */
static void
seed_prefix_split_history(CcaAllocator *a)
{
	CcaStats *st = &a->stats;
	for (CcaHandle h = 0; h < a->slab_len; h++) {
		const CcaBlock *b = B(a, h);
		if (!b->live || b->prev != CCA_NIL || b->expandable >= 0 ||
		    b->set == CCA_SET_BLOCKS)
			continue;
		int64_t later_bytes = 0, tail_taken = 1;
		bool known = true;
		for (CcaHandle n = b->next; n != CCA_NIL; n = B(a, n)->next) {
			const CcaBlock *nb = B(a, n);
			if (nb->set != CCA_SET_BLOCKS)
				later_bytes += (int64_t)nb->size;
			else if (nb->next == CCA_NIL)
				tail_taken = 0;
			else
				known = false;
		}
		if (!known || b->next == CCA_NIL)
			continue;
		CcaStatType types[2] = {CCA_STAT_ALL, stat_type(b->is_small)};
		for (int i = 0; i < 2; i++) {
			st->inactive_split_bytes[types[i]].allocated += later_bytes;
			st->inactive_split_bytes[types[i]].freed += later_bytes;
			st->inactive_split[types[i]].allocated += tail_taken;
			st->inactive_split[types[i]].freed += tail_taken;
		}
	}
}

void
cca_allocator_seed_finish(CcaAllocator *a)
{
	CcaStats *st = &a->stats;
	for (int t = 0; t < CCA_STAT_TYPES; t++) {
		st->inactive_split[t].current = 0;
		st->inactive_split_bytes[t].current = 0;
	}
	for (CcaHandle h = 0; h < a->slab_len; h++) {
		const CcaBlock *b = B(a, h);
		if (b->live && b->set == CCA_SET_BLOCKS && b->expandable < 0 && is_split(b)) {
			CcaStatType t = stat_type(b->is_small);
			st->inactive_split[CCA_STAT_ALL].current++;
			st->inactive_split[t].current++;
			st->inactive_split_bytes[CCA_STAT_ALL].current += (int64_t)b->size;
			st->inactive_split_bytes[t].current += (int64_t)b->size;
		}
	}
	CcaStat *arrays[] = {
		st->allocation,	     st->segment,	 st->active,	   st->inactive_split,
		st->allocated_bytes, st->reserved_bytes, st->active_bytes, st->inactive_split_bytes,
		st->requested_bytes};
	for (size_t i = 0; i < G_N_ELEMENTS(arrays); i++)
		for (int t = 0; t < CCA_STAT_TYPES; t++)
			stat_restart(&arrays[i][t]);
	stat_restart(&st->oversize_allocations);
	stat_restart(&st->oversize_segments);
	seed_prefix_split_history(a);
	CCA_CHECK_INVARIANTS(a, "seed_finish");
}

/* ------------------------------------------------------------ state view */

static CcaBlockState
state_of(const CcaBlock *b)
{
	if (b->allocated)
		return CCA_BLOCK_ACTIVE_ALLOCATED;
	if (b->event_count > 0)
		return CCA_BLOCK_ACTIVE_PENDING_FREE;
	return CCA_BLOCK_INACTIVE;
}

static int
compare_segments(gconstpointer x, gconstpointer y)
{
	const CcaStateSegment *s = x, *t = y;
	return s->address < t->address ? -1 : s->address > t->address;
}

uint64_t
cca_allocator_segment_count(const CcaAllocator *a)
{
	/* without expandable segments every segment is one cudaMalloc, which
	 * the segment stat counts; the walk is for mapped runs */
	if (a->expandable->len == 0)
		return (uint64_t)a->stats.segment[CCA_STAT_ALL].current;
	if (a->mapped_runs_stale) { /* once after seeding: the count is a cache */
		CcaAllocator *m = (CcaAllocator *)a;
		m->mapped_runs = mapped_runs_walk(a);
		m->mapped_runs_stale = false;
	}
	return a->mapped_runs;
}

GArray *
cca_allocator_state(const CcaAllocator *a)
{
	GArray *segments = g_array_new(FALSE, TRUE, sizeof(CcaStateSegment));
	for (CcaHandle h = 0; h < a->slab_len; h++) {
		const CcaBlock *head = B(a, h);
		if (!head->live || !head->mapped)
			continue;
		if (head->prev != CCA_NIL && B(a, head->prev)->mapped)
			continue; /* not the first block of a mapped run */
		GArray *blocks = g_array_new(FALSE, FALSE, sizeof(CcaStateBlock));
		CcaStateSegment seg = {
			.address = head->ptr,
			.stream = head->stream,
			.is_small = head->is_small,
			.is_expandable = head->expandable >= 0,
		};
		uint32_t mempool = head->pool / 2u;
		if (mempool > 0) {
			seg.pool_id[0] = a->mempool_ids[mempool][0];
			seg.pool_id[1] = a->mempool_ids[mempool][1];
		}
		for (CcaHandle b = h; b != CCA_NIL && B(a, b)->mapped; b = B(a, b)->next) {
			CcaStateBlock sb = {B(a, b)->ptr, B(a, b)->size, B(a, b)->requested_size,
					    state_of(B(a, b))};
			g_array_append_val(blocks, sb);
			seg.total_size += B(a, b)->size;
		}
		seg.n_blocks = blocks->len;
		seg.blocks = (const CcaStateBlock *)g_array_free(blocks, FALSE);
		g_array_append_val(segments, seg);
	}
	g_array_sort(segments, compare_segments);
	return segments;
}

void
cca_allocator_state_free(GArray *segments)
{
	if (!segments)
		return;
	for (guint i = 0; i < segments->len; i++)
		g_free((gpointer)g_array_index(segments, CcaStateSegment, i).blocks);
	g_array_free(segments, TRUE);
}

/* ------------------------------------------------------------ invariants */

static gboolean check_fail(GString *why, const char *fmt, ...) G_GNUC_PRINTF(2, 3);

static gboolean
check_fail(GString *why, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	if (why)
		g_string_append_vprintf(why, fmt, ap);
	va_end(ap);
	return FALSE;
}

gboolean
cca_allocator_check_invariants(const CcaAllocator *a, GString *why)
{
	int64_t reserved[3] = {0}, allocated[3] = {0}, active[3] = {0};
	uint32_t in_sets = 0;
	for (CcaHandle h = 0; h < a->slab_len; h++) {
		const CcaBlock *b = B(a, h);
		if (!b->live)
			continue;
		int t = b->is_small ? CCA_STAT_SMALL_POOL : CCA_STAT_LARGE_POOL;
		if (b->next != CCA_NIL) {
			const CcaBlock *n = B(a, b->next);
			if (!n->live || n->prev != h || b->ptr + b->size != n->ptr)
				return check_fail(why,
						  "block %u at 0x%" G_GINT64_MODIFIER
						  "x does not tile with its next block",
						  h, b->ptr);
		}
		if (b->prev != CCA_NIL && B(a, b->prev)->next != h)
			return check_fail(why, "block %u: prev link is not mirrored", h);
		CcaBlockSet expected = !b->mapped			      ? CCA_SET_UNMAPPED
				       : (b->allocated || b->event_count > 0) ? CCA_SET_NONE
									      : CCA_SET_BLOCKS;
		if (b->set != expected)
			return check_fail(why,
					  "block %u at 0x%" G_GINT64_MODIFIER
					  "x is in set %d, expected %d",
					  h, b->ptr, b->set, expected);
		if (b->set != CCA_SET_NONE)
			in_sets++;
		if (b->mapped) {
			reserved[t] += (int64_t)b->size;
			if (b->allocated)
				allocated[t] += (int64_t)b->size;
			if (b->allocated || b->event_count > 0)
				active[t] += (int64_t)b->size;
		}
	}
	uint32_t tree_total = 0;
	for (uint32_t i = 0; i < 2 * a->n_mempools; i++)
		tree_total += a->pools[i].blocks.count + a->pools[i].unmapped.count;
	if (tree_total != in_sets)
		return check_fail(why, "%u blocks claim a set but the sets hold %u", in_sets,
				  tree_total);
	for (uint32_t i = 0; i < 2 * a->n_mempools; i++)
		if (!cca_tree_check(&a->pools[i].blocks, a->slab, a->slab_len, why) ||
		    !cca_tree_check(&a->pools[i].unmapped, a->slab, a->slab_len, why))
			return FALSE;
	for (int t = CCA_STAT_SMALL_POOL; t <= CCA_STAT_LARGE_POOL; t++) {
		if (reserved[t] != a->stats.reserved_bytes[t].current)
			return check_fail(why,
					  "reserved_bytes[%d] %" G_GINT64_FORMAT
					  " != sum over blocks %" G_GINT64_FORMAT,
					  t, a->stats.reserved_bytes[t].current, reserved[t]);
		if (allocated[t] != a->stats.allocated_bytes[t].current)
			return check_fail(why,
					  "allocated_bytes[%d] %" G_GINT64_FORMAT
					  " != sum over blocks %" G_GINT64_FORMAT,
					  t, a->stats.allocated_bytes[t].current, allocated[t]);
		if (active[t] != a->stats.active_bytes[t].current)
			return check_fail(why,
					  "active_bytes[%d] %" G_GINT64_FORMAT
					  " != sum over blocks %" G_GINT64_FORMAT,
					  t, a->stats.active_bytes[t].current, active[t]);
	}
	if ((uint64_t)(reserved[1] + reserved[2]) != a->total_reserved)
		return check_fail(why, "total reserved does not match the blocks");
	if (!a->mapped_runs_stale && a->mapped_runs != mapped_runs_walk(a))
		return check_fail(why,
				  "%" G_GUINT64_FORMAT " mapped runs counted, %" G_GUINT64_FORMAT
				  " on the blocks",
				  a->mapped_runs, mapped_runs_walk(a));
	return TRUE;
}

/* ------------------------------------------------ explaining a request */

/* Classifies why no cached block serves P (find_free_block said no),
 * following find_free_block's steps. */
static CcaWhyKind
explain_miss(const CcaAllocator *a, const AllocParams *p, CcaRequestWhy *why)
{
	const CcaPool *pool = p->pool;
	CcaHandle it = cca_tree_lower_bound(&pool->blocks, a->slab, p->stream, p->size, 0);
	if (it == CCA_NIL || B(a, it)->stream != p->stream)
		return why->free_blocks_stream == 0 ? CCA_WHY_EMPTY_POOL : CCA_WHY_TOO_SMALL;
	if (B(a, it)->expandable >= 0 && !a->settings.expandable_segments) {
		while (it != CCA_NIL && B(a, it)->expandable >= 0 && B(a, it)->stream == p->stream)
			it = cca_tree_next(&pool->blocks, a->slab, it);
		if (it == CCA_NIL || B(a, it)->stream != p->stream)
			return CCA_WHY_EXPANDABLE_ONLY;
	}
	why->candidate_size = B(a, it)->size;
	return CCA_WHY_OVERSIZE;
}

void
cca_allocator_explain_request(const CcaAllocator *a, uint64_t orig_size, uint64_t stream,
			      CcaRequestWhy *why)
{
	AllocParams p;
	init_params(a, &p, orig_size, stream);
	memset(why, 0, sizeof *why);
	why->orig_size = orig_size;
	why->size = p.size;
	why->size_512 = cca_pytorch_round_min_block(orig_size);
	why->alloc_size = p.alloc_size;
	why->stream = stream;
	why->small_pool = p.pool->is_small;
	why->expandable = a->settings.expandable_segments;
	why->max_split_size = a->settings.max_split_size;
	why->max_non_split_rounding = a->settings.max_non_split_rounding;
	why->reserved = a->total_reserved;
	why->allowed_maximum = cca_allocator_allowed_maximum(a);
	why->over_cap = over_cap(a, p.alloc_size);
	why->device_refuses = a->device->ops->would_refuse(a->device, p.alloc_size);
	why->would_release = cca_allocator_would_release(a, orig_size, stream);

	/* the pool's free blocks, on this stream and on the others */
	for (CcaHandle h = cca_tree_first(&p.pool->blocks, a->slab); h != CCA_NIL;
	     h = cca_tree_next(&p.pool->blocks, a->slab, h)) {
		const CcaBlock *b = B(a, h);
		if (b->stream == stream) {
			why->free_bytes_stream += b->size;
			why->free_blocks_stream++;
			if (b->size > why->largest_free_stream)
				why->largest_free_stream = b->size;
		} else if (b->size > why->largest_free_other) {
			why->largest_free_other = b->size;
		}
	}
	for (guint i = 0; i < a->pending->len; i++) {
		const CcaBlock *b = B(a, g_array_index(a->pending, CcaHandle, i));
		if (b->stream == stream && b->is_small == p.pool->is_small)
			why->pending_bytes += b->size;
	}
	/* free bytes of both pools: stranded beside live blocks, or cached in
	 * wholly free segments (expandable space is unmappable: cached) */
	GHashTable *heads = g_hash_table_new(NULL, NULL);
	for (int i = 0; i < 2; i++)
		for (CcaHandle h = cca_tree_first(&a->pools[i].blocks, a->slab); h != CCA_NIL;
		     h = cca_tree_next(&a->pools[i].blocks, a->slab, h)) {
			const CcaBlock *b = B(a, h);
			if (b->expandable < 0 && is_split(b)) {
				why->stranded_bytes += b->size;
				g_hash_table_add(heads, GUINT_TO_POINTER(segment_head(a, h) + 1));
			} else {
				why->cached_bytes += b->size;
			}
		}
	why->stranded_segments = g_hash_table_size(heads);
	g_hash_table_destroy(heads);

	if (find_free_block(a, p.pool, p.size, stream) != CCA_NIL)
		why->kind = CCA_WHY_FITS;
	else
		why->kind = explain_miss(a, &p, why);
	if (why->kind == CCA_WHY_FITS || why->kind == CCA_WHY_OVERSIZE) {
		CcaHandle it = cca_tree_lower_bound(&p.pool->blocks, a->slab, stream, p.size, 0);
		if (why->kind == CCA_WHY_FITS)
			it = find_free_block(a, p.pool, p.size, stream);
		if (it != CCA_NIL && why->candidate_size == 0)
			why->candidate_size = B(a, it)->size;
	}
	/* the candidates best fit chose among */
	for (CcaHandle h = cca_tree_first(&p.pool->blocks, a->slab); h != CCA_NIL;
	     h = cca_tree_next(&p.pool->blocks, a->slab, h)) {
		const CcaBlock *b = B(a, h);
		if (b->stream != stream || b->size < p.size)
			continue;
		why->fitting_blocks++;
		why->same_size += b->size == why->candidate_size;
	}
}
