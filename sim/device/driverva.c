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
	GArray *used; /* Used, unordered */
	bool permanent;
} Region;

typedef struct {
	uint64_t start, end; /* [start, end) */
} Range;

struct CcaDriverVA {
	GPtrArray *regions; /* Region*, in creation order */
	GArray *free;	    /* Range */
};

static Region *
region_new(uint64_t start, uint64_t size, bool permanent)
{
	Region *r = g_new0(Region, 1);
	r->start = start;
	r->size = size;
	r->permanent = permanent;
	r->used = g_array_new(FALSE, FALSE, sizeof(Used));
	return r;
}

static void
region_free(gpointer data)
{
	Region *r = data;
	g_array_free(r->used, TRUE);
	g_free(r);
}

/* Notes SIZE bytes at OFFSET of R in use; R->used stays sorted by offset. */
static void
region_use(Region *r, uint64_t offset, uint64_t size)
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
}

CcaDriverVA *
cca_driverva_new(uint64_t base)
{
	CcaDriverVA *va = g_new0(CcaDriverVA, 1);
	va->regions = g_ptr_array_new_with_free_func(region_free);
	va->free = g_array_new(FALSE, FALSE, sizeof(Range));
	Region *context = region_new(base, REGION_ALIGN, true);
	region_use(context, 0, 8 * CCA_MIB);
	g_ptr_array_add(va->regions, context);
	Region *below = region_new(base - 96 * CCA_MIB, REGION_ALIGN, true);
	region_use(below, 0, 30 * CCA_MIB);
	g_ptr_array_add(va->regions, below);
	Range heap = {base - CCA_TIB, base - 480 * CCA_MIB};
	g_array_append_val(va->free, heap);
	return va;
}

void
cca_driverva_free(CcaDriverVA *va)
{
	if (!va)
		return;
	g_ptr_array_free(va->regions, TRUE);
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
	guint pick = G_MAXUINT;
	for (guint i = 0; i < va->free->len; i++) {
		const Range *f = &g_array_index(va->free, Range, i);
		if (f->end - f->start > size &&
		    (pick == G_MAXUINT || f->end > g_array_index(va->free, Range, pick).end))
			pick = i;
	}
	if (pick == G_MAXUINT)
		return NULL;
	Range *f = &g_array_index(va->free, Range, pick);
	f->end -= size;
	Region *r = region_new(f->end, size, false);
	g_ptr_array_add(va->regions, r);
	return r;
}

uint64_t
cca_driverva_alloc(CcaDriverVA *va, uint64_t size)
{
	uint64_t granules = (size + GRANULE - 1) / GRANULE * GRANULE;
	for (guint i = va->regions->len; i-- > 0;) {
		Region *r = g_ptr_array_index(va->regions, i);
		uint64_t offset = region_best_gap(r, granules);
		if (offset != UINT64_MAX) {
			region_use(r, offset, granules);
			return r->start + offset;
		}
	}
	uint64_t region_size = (granules + REGION_ALIGN - 1) / REGION_ALIGN * REGION_ALIGN;
	Region *r = region_carve(va, region_size);
	if (!r)
		return 0;
	region_use(r, 0, granules);
	return r->start;
}

/* Returns the range [START, END) to the free ranges, merging neighbours. */
static void
free_range(CcaDriverVA *va, uint64_t start, uint64_t end)
{
	for (guint i = 0; i < va->free->len;) {
		Range *f = &g_array_index(va->free, Range, i);
		if (f->end == start) {
			start = f->start;
			g_array_remove_index_fast(va->free, i);
		} else if (f->start == end) {
			end = f->end;
			g_array_remove_index_fast(va->free, i);
		} else {
			i++;
		}
	}
	Range merged = {start, end};
	g_array_append_val(va->free, merged);
}

void
cca_driverva_release(CcaDriverVA *va, uint64_t ptr)
{
	for (guint i = 0; i < va->regions->len; i++) {
		Region *r = g_ptr_array_index(va->regions, i);
		if (ptr < r->start || ptr >= r->start + r->size)
			continue;
		for (guint k = 0; k < r->used->len; k++) {
			if (g_array_index(r->used, Used, k).ptr != ptr)
				continue;
			g_array_remove_index(r->used, k);
			if (r->used->len == 0 && !r->permanent) {
				free_range(va, r->start, r->start + r->size);
				g_ptr_array_remove_index(va->regions, i);
			}
			return;
		}
	}
}
