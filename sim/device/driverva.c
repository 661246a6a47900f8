/* driverva.c - the CUDA driver's placement of cudaMalloc segments.
 *
 * Rules (doc/driver-va.md has the probe evidence):
 *  - sizes are taken in 2 MiB granules;
 *  - the driver keeps regions of address space, each a multiple of
 *    32 MiB; a request goes into the most recently created region that has
 *    a gap large enough for it, into that region's smallest such gap (the
 *    lowest of equal gaps);
 *  - with no such gap, a new region of the request rounded up to 32 MiB is
 *    cut from the top of the highest free address range that is strictly
 *    larger than it;
 *  - a region whose segments are all freed returns to the free ranges
 *    (merged with its neighbours); the two regions the CUDA context itself
 *    uses at start-up are never returned;
 *  - at start-up the context leaves 24 MiB free above its first 8 MiB in
 *    the region at BASE, 2 MiB free at the top of the region 96 MiB below,
 *    and the free range for new regions ends 480 MiB below BASE.
 */
#include "config.h"

#include "driverva.h"

#include "device.h"

#define GRANULE CCA_H200_GRANULARITY
#define REGION_ALIGN (32 * CCA_MIB)

typedef struct {
	uint64_t offset, size; /* a segment inside its region */
	uint64_t ptr;
} Used;

typedef struct {
	uint64_t start, size;
	GArray *used; /* Used, sorted by offset */
	bool permanent;
	guint slot;	  /* its index in CcaDriverVA.slots */
	uint64_t max_gap; /* its largest gap */
} Region;

typedef struct {
	uint64_t start, end; /* [start, end) */
} Range;

struct CcaDriverVA {
	/* Region* in creation order, NULL where a region was returned; the
	 * max-tree holds each slot's largest gap (0 for NULL) at leaf
	 * tree_cap + slot, and at each inner node the larger of its two
	 * children's */
	GPtrArray *slots;
	uint64_t *tree;
	guint tree_cap;	    /* leaves, a power of two */
	guint live;	    /* regions not returned */
	GHashTable *by_ptr; /* segment address -> Region* */
	GArray *free;	    /* Range, sorted by start (so by end: they are disjoint) */
};

static Region *
region_new(uint64_t start, uint64_t size, bool permanent)
{
	Region *r = g_new0(Region, 1);
	r->start = start;
	r->size = size;
	r->permanent = permanent;
	r->max_gap = size;
	r->used = g_array_new(FALSE, FALSE, sizeof(Used));
	return r;
}

static void
region_free(gpointer data)
{
	Region *r = data;
	if (!r)
		return;
	g_array_free(r->used, TRUE);
	g_free(r);
}

/* R's largest gap between (and around) its segments. */
static uint64_t
region_max_gap(const Region *r)
{
	uint64_t pos = 0, best = 0;
	for (guint i = 0; i <= r->used->len; i++) {
		uint64_t next = i < r->used->len ? g_array_index(r->used, Used, i).offset : r->size;
		if (next > pos && next - pos > best)
			best = next - pos;
		if (i < r->used->len) {
			const Used *u = &g_array_index(r->used, Used, i);
			if (u->offset + u->size > pos)
				pos = u->offset + u->size;
		}
	}
	return best;
}

/* Sets slot SLOT's leaf to GAP and mends the maxima above it. */
static void
tree_set(CcaDriverVA *va, guint slot, uint64_t gap)
{
	guint n = va->tree_cap + slot;
	va->tree[n] = gap;
	for (n /= 2; n >= 1; n /= 2) {
		uint64_t l = va->tree[2 * n], r = va->tree[2 * n + 1];
		va->tree[n] = l > r ? l : r;
	}
}

/* Rebuilds the tree over the slots (after they moved or grew). */
static void
tree_build(CcaDriverVA *va)
{
	guint cap = 16;
	while (cap < va->slots->len * 2)
		cap *= 2;
	g_free(va->tree);
	va->tree_cap = cap;
	va->tree = g_new0(uint64_t, 2 * (gsize)cap);
	for (guint i = 0; i < va->slots->len; i++) {
		Region *r = g_ptr_array_index(va->slots, i);
		va->tree[cap + i] = r ? r->max_gap : 0;
	}
	for (guint n = cap - 1; n >= 1; n--) {
		uint64_t l = va->tree[2 * n], r = va->tree[2 * n + 1];
		va->tree[n] = l > r ? l : r;
	}
}

/* Adds R as the most recent region. */
static void
region_add(CcaDriverVA *va, Region *r)
{
	if (va->slots->len == va->tree_cap) {
		if (va->live * 2 <= va->slots->len) { /* drop the returned slots */
			guint k = 0;
			for (guint i = 0; i < va->slots->len; i++) {
				Region *x = g_ptr_array_index(va->slots, i);
				if (x) {
					x->slot = k;
					g_ptr_array_index(va->slots, k++) = x;
				}
			}
			g_ptr_array_set_size(va->slots, k);
		}
		r->slot = va->slots->len;
		g_ptr_array_add(va->slots, r);
		tree_build(va);
	} else {
		r->slot = va->slots->len;
		g_ptr_array_add(va->slots, r);
		tree_set(va, r->slot, r->max_gap);
	}
	va->live++;
}

/* The most recent region with a gap of at least SIZE bytes, or NULL. */
static Region *
region_with_gap(const CcaDriverVA *va, uint64_t size)
{
	if (va->tree[1] < size)
		return NULL;
	guint n = 1;
	while (n < va->tree_cap) /* the later (right) child first */
		n = va->tree[2 * n + 1] >= size ? 2 * n + 1 : 2 * n;
	return g_ptr_array_index(va->slots, n - va->tree_cap);
}

/* Notes SIZE bytes at OFFSET of R in use; R->used stays sorted by offset. */
static void
region_use(CcaDriverVA *va, Region *r, uint64_t offset, uint64_t size)
{
	Used u = {offset, size, r->start + offset};
	guint lo = 0, hi = r->used->len;
	while (lo < hi) {
		guint mid = (lo + hi) / 2;
		if (g_array_index(r->used, Used, mid).offset <= offset)
			lo = mid + 1;
		else
			hi = mid;
	}
	g_array_insert_val(r->used, lo, u);
	g_hash_table_insert(va->by_ptr, g_memdup2(&u.ptr, sizeof u.ptr), r);
	r->max_gap = region_max_gap(r);
	tree_set(va, r->slot, r->max_gap);
}

CcaDriverVA *
cca_driverva_new(uint64_t base)
{
	CcaDriverVA *va = g_new0(CcaDriverVA, 1);
	va->slots = g_ptr_array_new(); /* (no free function: compaction moves them) */
	va->by_ptr = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
	va->free = g_array_new(FALSE, FALSE, sizeof(Range));
	tree_build(va);
	Region *context = region_new(base, REGION_ALIGN, true);
	region_add(va, context);
	region_use(va, context, 0, 8 * CCA_MIB);
	Region *below = region_new(base - 96 * CCA_MIB, REGION_ALIGN, true);
	region_add(va, below);
	region_use(va, below, 0, 30 * CCA_MIB);
	Range heap = {base - CCA_TIB, base - 480 * CCA_MIB};
	g_array_append_val(va->free, heap);
	return va;
}

void
cca_driverva_free(CcaDriverVA *va)
{
	if (!va)
		return;
	g_hash_table_destroy(va->by_ptr);
	for (guint i = 0; i < va->slots->len; i++)
		region_free(g_ptr_array_index(va->slots, i));
	g_ptr_array_free(va->slots, TRUE);
	g_free(va->tree);
	g_array_free(va->free, TRUE);
	g_free(va);
}

/* The offset of R's smallest gap of at least SIZE bytes (lowest among
 * equal ones), or UINT64_MAX. */
static uint64_t
region_best_gap(Region *r, uint64_t size)
{
	uint64_t pos = 0, best = UINT64_MAX, best_gap = UINT64_MAX;
	for (guint i = 0; i <= r->used->len; i++) {
		uint64_t next = i < r->used->len ? g_array_index(r->used, Used, i).offset : r->size;
		if (next >= pos + size && next - pos < best_gap) {
			best_gap = next - pos;
			best = pos;
		}
		if (i < r->used->len) {
			const Used *u = &g_array_index(r->used, Used, i);
			if (u->offset + u->size > pos)
				pos = u->offset + u->size;
		}
	}
	return best;
}

/* Cuts a new region of SIZE bytes from the top of the highest free range
 * strictly larger than SIZE. */
static Region *
region_carve(CcaDriverVA *va, uint64_t size)
{
	for (guint i = va->free->len; i-- > 0;) { /* highest first */
		Range *f = &g_array_index(va->free, Range, i);
		if (f->end - f->start <= size)
			continue;
		f->end -= size;
		Region *r = region_new(f->end, size, false);
		region_add(va, r);
		return r;
	}
	return NULL;
}

uint64_t
cca_driverva_alloc(CcaDriverVA *va, uint64_t size)
{
	uint64_t granules = (size + GRANULE - 1) / GRANULE * GRANULE;
	Region *r = region_with_gap(va, granules);
	if (r) {
		uint64_t offset = region_best_gap(r, granules);
		region_use(va, r, offset, granules);
		return r->start + offset;
	}
	uint64_t region_size = (granules + REGION_ALIGN - 1) / REGION_ALIGN * REGION_ALIGN;
	r = region_carve(va, region_size);
	if (!r)
		return 0;
	region_use(va, r, 0, granules);
	return r->start;
}

/* Returns the range [START, END) to the free ranges, merging neighbours. */
static void
free_range(CcaDriverVA *va, uint64_t start, uint64_t end)
{
	guint lo = 0, hi = va->free->len; /* the first range above START */
	while (lo < hi) {
		guint mid = (lo + hi) / 2;
		if (g_array_index(va->free, Range, mid).start < start)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < va->free->len && g_array_index(va->free, Range, lo).start == end) {
		end = g_array_index(va->free, Range, lo).end;
		g_array_remove_index(va->free, lo);
	}
	if (lo > 0 && g_array_index(va->free, Range, lo - 1).end == start) {
		g_array_index(va->free, Range, lo - 1).end = end;
		return;
	}
	Range merged = {start, end};
	g_array_insert_val(va->free, lo, merged);
}

void
cca_driverva_release(CcaDriverVA *va, uint64_t ptr)
{
	Region *r = g_hash_table_lookup(va->by_ptr, &ptr);
	if (!r)
		return;
	for (guint k = 0; k < r->used->len; k++) {
		if (g_array_index(r->used, Used, k).ptr != ptr)
			continue;
		g_hash_table_remove(va->by_ptr, &ptr);
		g_array_remove_index(r->used, k);
		if (r->used->len == 0 && !r->permanent) {
			free_range(va, r->start, r->start + r->size);
			tree_set(va, r->slot, 0);
			g_ptr_array_index(va->slots, r->slot) = NULL;
			region_free(r);
			va->live--;
		} else {
			r->max_gap = region_max_gap(r);
			tree_set(va, r->slot, r->max_gap);
		}
		return;
	}
}
