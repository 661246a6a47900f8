/* pytorch.h - PyTorch's caching-allocator constants and size rules.
 *
 * Every number the model takes from PyTorch 2.11's CUDACachingAllocator
 * is defined here once, derived where it derives, with PyTorch's name and
 * the file that defines it (c10/cuda/CUDACachingAllocator.cpp unless
 * said); nowhere else writes them as numbers (tests/lint/check-prefixes.sh
 * checks).  The rules built on them alone (round_size's 512-byte rounding,
 * the pool of a size, get_allocation_size, should_split, the expandable
 * segment's page and reservation) are static inline functions, so that
 * the policy (allocator.c) and what infers the policy's choices
 * (rewind.c, the devices) state each of them once.  This header includes
 * nothing of the readers; the units (CCA_MIB) are size.h's.
 */
#ifndef CCA_PYTORCH_H
#define CCA_PYTORCH_H

#include <stdbool.h>
#include <stdint.h>

#include "size.h" /* the units: kMB (c10/core/AllocatorConfig.h) is CCA_MIB */

/* Block and segment sizes (CUDACachingAllocator.cpp). */
#define CCA_MIN_BLOCK_SIZE UINT64_C(512) /* kMinBlockSize: blocks are multiples of it; 512 B */
#define CCA_SMALL_SIZE CCA_MIB		 /* kSmallSize: largest small-pool block; 1 MiB */
#define CCA_SMALL_BUFFER (2 * CCA_MIB)	 /* kSmallBuffer: small-pool segment and page; 2 MiB */
/* kMinLargeAlloc: large requests under it get a large_segment_size
 * segment; 10 MiB */
#define CCA_MIN_LARGE_ALLOC (10 * CCA_MIB)
#define CCA_ROUND_LARGE (2 * CCA_MIB) /* kRoundLarge: larger segments round to it; 2 MiB */

/* c10/core/AllocatorConfig.h (c10::CachingAllocator). */
#define CCA_LARGE_BUFFER (20 * CCA_MIB) /* kLargeBuffer: default large_segment_size; 20 MiB */
/* kRoundUpPowerOfTwoIntervals: roundup_power2_divisions entries, for
 * sizes [0, 2 MiB), [2 MiB, 4 MiB) .. [32 GiB, inf) */
#define CCA_ROUNDUP_INTERVALS 16
#define CCA_PINNED_MAX_REGISTER_THREADS 128 /* kPinnedMaxRegisterThreads */

/* Defaults of the settings (AcceleratorAllocatorConfig's members):
 * max_split_size_mb unlimited (SIZE_MAX), large_segment_size_mb
 * kLargeBuffer, max_non_split_rounding_mb = large_segment_size. */
#define CCA_MAX_SPLIT_SIZE_DEFAULT UINT64_MAX
#define CCA_LARGE_SEGMENT_SIZE_DEFAULT CCA_LARGE_BUFFER
/* large_segment_size_mb must be > kMinLargeAlloc / kMB: 10 */
#define CCA_LARGE_SEGMENT_MIN_MB (CCA_MIN_LARGE_ALLOC / CCA_MIB)

/* Expandable segments (ExpandableSegment): pages of kSmallBuffer (small
 * pool) or large_segment_size (large); every page is a multiple of the
 * smallest, the 2 MiB granule the mapped runs of a trace are made of. */
#define CCA_EXPANDABLE_GRANULE CCA_SMALL_BUFFER

/* SIZE rounded up to a multiple of kMinBlockSize, at least kMinBlockSize:
 * round_size when no roundup_power2_divisions entry applies. */
static inline uint64_t
cca_pytorch_round_min_block(uint64_t size)
{
	if (size < CCA_MIN_BLOCK_SIZE)
		return CCA_MIN_BLOCK_SIZE;
	return CCA_MIN_BLOCK_SIZE * ((size + CCA_MIN_BLOCK_SIZE - 1) / CCA_MIN_BLOCK_SIZE);
}

/* get_pool: TRUE when a block of SIZE bytes (rounded) belongs to the
 * small pool. */
static inline bool
cca_pytorch_is_small(uint64_t size)
{
	return size <= CCA_SMALL_SIZE;
}

/* get_allocation_size: the bytes of the segment cudaMalloc'd for a block
 * of SIZE bytes (rounded); LARGE_SEGMENT_SIZE is the setting. */
static inline uint64_t
cca_pytorch_segment_size(uint64_t size, uint64_t large_segment_size)
{
	if (cca_pytorch_is_small(size))
		return CCA_SMALL_BUFFER;
	if (size < CCA_MIN_LARGE_ALLOC)
		return large_segment_size;
	return CCA_ROUND_LARGE * ((size + CCA_ROUND_LARGE - 1) / CCA_ROUND_LARGE);
}

/* should_split: whether a free block split for a request of SIZE bytes
 * (rounded) keeps its REMAINING bytes as a block of their own.  IS_SMALL:
 * the block is of the small pool; EXPANDABLE: expandable segments are on;
 * MAX_SPLIT_SIZE is the setting.  The small pool and expandable segments
 * split a remainder of kMinBlockSize or more; the large pool one of more
 * than kSmallSize, for a request under max_split_size. */
static inline bool
cca_pytorch_should_split(bool is_small, bool expandable, uint64_t size, uint64_t remaining,
			 uint64_t max_split_size)
{
	if (is_small || expandable)
		return remaining >= CCA_MIN_BLOCK_SIZE;
	return size < max_split_size && remaining > CCA_SMALL_SIZE;
}

/* The page of an expandable segment: kSmallBuffer for the small pool,
 * LARGE_SEGMENT_SIZE (the setting) for the large one. */
static inline uint64_t
cca_pytorch_expandable_page(bool is_small, uint64_t large_segment_size)
{
	return is_small ? CCA_SMALL_BUFFER : large_segment_size;
}

/* The address space an expandable segment of PAGE-byte pages reserves on
 * a device of TOTAL_MEMORY bytes: 1 1/8 of it, rounded up to whole pages
 * (ExpandableSegment's max_handles_).  PAGE must not be 0. */
static inline uint64_t
cca_pytorch_reservation_size(uint64_t total_memory, uint64_t page)
{
	uint64_t space = total_memory + total_memory / 8;
	return page * ((space + page - 1) / page);
}

/* The address space of a new expandable segment of PAGE-byte pages under
 * expandable_segments_reserve (2.15+, CUDAAllocatorConfig's
 * ExpandableSegmentReserveSpec::resolveBytes and clamp_reserve_bytes):
 * VALUE of TOTAL_MEMORY (or VALUE GiB when GIB), truncated to bytes, at
 * most the historical reserve, then rounded up to whole pages
 * (numSegments).  PAGE must not be 0. */
static inline uint64_t
cca_pytorch_expandable_reserve(uint64_t total_memory, uint64_t page, double value, bool gib)
{
	uint64_t full = total_memory + total_memory / 8;
	double bytes = gib ? value * (double)(UINT64_C(1) << 30) : value * (double)total_memory;
	uint64_t reserve = bytes >= (double)full ? full : (uint64_t)bytes;
	return page * ((reserve + page - 1) / page);
}

#endif
