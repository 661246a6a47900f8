/* addrmap.h - containers of trace addresses: an open-addressing map from
 * a trace address to a value, shared by the engine (address -> model
 * block) and the plan (the trace's own live addresses), and sorted lists
 * of live segments and address ranges.  The checks of a trace's entries
 * that use them are check.c's.  Internal to sim/: static inline
 * functions.
 */
#ifndef CCA_ADDRMAP_H
#define CCA_ADDRMAP_H

#include <glib.h>
#include <stdint.h>

#include "allocator.h"
#include "pytorch.h"


/* Open-addressing map from a trace address to the model's block handle:
 * linear probing, and a removal shifts the entries after it back (no
 * tombstones, so that a long replay's frees leave no probe chains behind:
 * each put or get looks at a key or two). */
typedef struct {
	uint64_t *keys;
	CcaHandle *values;
	uint32_t cap; /* power of two */
	uint32_t len;
} AddrMap;

#define MAP_EMPTY UINT64_MAX
/* A key the map keeps for itself, as MAP_EMPTY (cca_check_event() refuses
 * both as addresses: check.h's CCA_CHECK_ADDRESS_LIMIT). */
#define MAP_TOMB (UINT64_MAX - 1)
/* Values: a model handle (below HANDLE_FAILED), or HANDLE_FAILED for an
 * allocation that OOMed (--keep-going); FREE_REQUESTED is set while the
 * trace's free_requested of the block waits for its free_completed.
 * map_get() answers CCA_NIL for an address it does not hold. */
#define HANDLE_FAILED UINT32_C(0x7ffffffe)
#define FREE_REQUESTED UINT32_C(0x80000000)
#define HANDLE_OF(v) ((v) & ~FREE_REQUESTED)
/* Expandable segments map and unmap whole pages of 2 MiB (small pool) or
 * 20 MiB (large), in reservations aligned to the 2 MiB granularity. */
#define CCA_PAGE_GRANULE CCA_EXPANDABLE_GRANULE

static inline uint32_t
map_hash(uint64_t key)
{
	key ^= key >> 33;
	key *= UINT64_C(0xff51afd7ed558ccd);
	key ^= key >> 33;
	return (uint32_t)key;
}

static inline void
map_init(AddrMap *m, uint32_t cap)
{
	m->cap = cap;
	m->len = 0;
	m->keys = g_new(uint64_t, cap);
	m->values = g_new(CcaHandle, cap);
	for (uint32_t i = 0; i < cap; i++)
		m->keys[i] = MAP_EMPTY;
}

static inline void
map_clear(AddrMap *m)
{
	g_free(m->keys);
	g_free(m->values);
}

static inline void map_put(AddrMap *m, uint64_t key, CcaHandle value);

static inline void
map_grow(AddrMap *m)
{
	AddrMap old = *m;
	map_init(m, old.cap * 2);
	for (uint32_t i = 0; i < old.cap; i++)
		if (old.keys[i] < MAP_TOMB)
			map_put(m, old.keys[i], old.values[i]);
	map_clear(&old);
}

/* Keys are trace addresses; UINT64_MAX and UINT64_MAX-1 never occur:
 * cca_check_event() (check.c) refuses them before any entry gets here. */
static inline void
map_put(AddrMap *m, uint64_t key, CcaHandle value)
{
	if ((m->len + 1) * 4 > m->cap * 3)
		map_grow(m);
	uint32_t mask = m->cap - 1, i = map_hash(key) & mask;
	while (m->keys[i] != MAP_EMPTY) {
		if (m->keys[i] == key) {
			m->values[i] = value;
			return;
		}
		i = (i + 1) & mask;
	}
	m->keys[i] = key;
	m->values[i] = value;
	m->len++;
}

static inline CcaHandle
map_get(const AddrMap *m, uint64_t key)
{
	uint32_t mask = m->cap - 1, i = map_hash(key) & mask;
	while (m->keys[i] != MAP_EMPTY) {
		if (m->keys[i] == key)
			return m->values[i];
		i = (i + 1) & mask;
	}
	return CCA_NIL;
}

/* The slot of KEY, or MAP_NO_SLOT; good until the next put or removal. */
#define MAP_NO_SLOT UINT32_MAX
static inline uint32_t
map_find(const AddrMap *m, uint64_t key)
{
	uint32_t mask = m->cap - 1, i = map_hash(key) & mask;
	while (m->keys[i] != MAP_EMPTY) {
		if (m->keys[i] == key)
			return i;
		i = (i + 1) & mask;
	}
	return MAP_NO_SLOT;
}

/* Removes the entry in slot I (from map_find()). */
static inline void
map_remove_at(AddrMap *m, uint32_t i)
{
	uint32_t mask = m->cap - 1;
	/* the hole at I: each later entry of the run whose home is not
	 * between the hole and it (cyclically) moves back into the hole */
	for (uint32_t j = (i + 1) & mask; m->keys[j] != MAP_EMPTY; j = (j + 1) & mask) {
		uint32_t home = map_hash(m->keys[j]) & mask;
		if (((j - home) & mask) >= ((j - i) & mask)) {
			m->keys[i] = m->keys[j];
			m->values[i] = m->values[j];
			i = j;
		}
	}
	m->keys[i] = MAP_EMPTY;
	m->len--;
}

static inline void
map_remove(AddrMap *m, uint64_t key)
{
	uint32_t i = map_find(m, key);
	if (i != MAP_NO_SLOT)
		map_remove_at(m, i);
}

/* ------------------------------------------------ live ranges */

/* One cudaMalloc segment the trace holds at this point of the replay. */
typedef struct {
	uint64_t address, size;
} LiveSegment;

/* Index of the first segment of SEGS (by address) at or above ADDR. */
static inline guint
segments_lower_bound(const GArray *segs, uint64_t addr)
{
	guint lo = 0, hi = segs->len;
	while (lo < hi) {
		guint mid = (lo + hi) / 2;
		if (g_array_index(segs, LiveSegment, mid).address < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Adds [ADDR, ADDR+SIZE) to SEGS, or returns the segment it overlaps
 * (NULL when none; then it was added). */
static inline const LiveSegment *
segments_add(GArray *segs, uint64_t addr, uint64_t size)
{
	guint i = segments_lower_bound(segs, addr);
	if (i > 0) {
		const LiveSegment *prev = &g_array_index(segs, LiveSegment, i - 1);
		if (prev->address + prev->size > addr)
			return prev;
	}
	if (i < segs->len) {
		const LiveSegment *next = &g_array_index(segs, LiveSegment, i);
		if (next->address < addr + size)
			return next;
	}
	LiveSegment seg = {addr, size};
	g_array_insert_val(segs, i, seg);
	return NULL;
}

static inline void
segments_remove(GArray *segs, uint64_t addr)
{
	guint i = segments_lower_bound(segs, addr);
	if (i < segs->len && g_array_index(segs, LiveSegment, i).address == addr)
		g_array_remove_index(segs, i);
}

/* Does any range of RANGES (LiveSegment, disjoint, by address) meet
 * [A, B)? */
static inline bool
ranges_meet(const GArray *ranges, uint64_t a, uint64_t b)
{
	guint i = segments_lower_bound(ranges, a);
	if (i > 0) {
		const LiveSegment *prev = &g_array_index(ranges, LiveSegment, i - 1);
		if (prev->address + prev->size > a)
			return true;
	}
	return i < ranges->len && g_array_index(ranges, LiveSegment, i).address < b;
}

/* Takes [A, B) out of RANGES, splitting the ranges it cuts. */
static inline void
ranges_cut(GArray *ranges, uint64_t a, uint64_t b)
{
	guint i = segments_lower_bound(ranges, a);
	if (i > 0)
		i--;
	while (i < ranges->len) {
		LiveSegment *r = &g_array_index(ranges, LiveSegment, i);
		uint64_t start = r->address, end = r->address + r->size;
		if (start >= b)
			break;
		if (end <= a) {
			i++;
			continue;
		}
		if (start < a && end > b) { /* [A, B) lies inside: split in two */
			r->size = a - start;
			LiveSegment tail = {b, end - b};
			g_array_insert_val(ranges, i + 1, tail);
			return;
		}
		if (start < a) {
			r->size = a - start;
			i++;
		} else if (end > b) {
			r->address = b;
			r->size = end - b;
			return;
		} else {
			g_array_remove_index(ranges, i);
		}
	}
}

/* Adds [A, B), which meets none of RANGES, merging it with neighbours. */
static inline void
ranges_add(GArray *ranges, uint64_t a, uint64_t b)
{
	guint i = segments_lower_bound(ranges, a);
	if (i > 0) {
		LiveSegment *prev = &g_array_index(ranges, LiveSegment, i - 1);
		if (prev->address + prev->size == a) {
			prev->size += b - a;
			if (i < ranges->len && g_array_index(ranges, LiveSegment, i).address == b) {
				prev->size += g_array_index(ranges, LiveSegment, i).size;
				g_array_remove_index(ranges, i);
			}
			return;
		}
	}
	if (i < ranges->len && g_array_index(ranges, LiveSegment, i).address == b) {
		LiveSegment *next = &g_array_index(ranges, LiveSegment, i);
		next->address = a;
		next->size += b - a;
		return;
	}
	LiveSegment r = {a, b - a};
	g_array_insert_val(ranges, i, r);
}

#endif
