/* block.h - blocks and the slab that holds them.
 *
 * A block is a sub-range of a segment.  Blocks live in one growable array
 * and are named by 32-bit handles; prev/next link address neighbours of the
 * same segment, and tree_leaf names the leaf of its pool's ordered set that
 * holds a free block.  No host pointers to blocks are kept across slab growth.
 */
#ifndef CCA_BLOCK_H
#define CCA_BLOCK_H

#include <stdbool.h>
#include <stdint.h>

#include "handle.h"

/* Which set a block is in. */
typedef enum {
	CCA_SET_NONE = 0, /* allocated, pending, or being worked on */
	CCA_SET_BLOCKS,	  /* the pool's free set, keyed (stream, size, ptr) */
	CCA_SET_UNMAPPED, /* the pool's unmapped set, keyed (stream, ptr) */
} CcaBlockSet;

typedef struct {
	uint64_t ptr;		 /* device address of the first byte */
	uint64_t size;		 /* bytes */
	uint64_t requested_size; /* unrounded request of the last allocation */
	uint64_t stream;	 /* allocation stream (key of the free set) */
	uint64_t gc_count_base;	 /* pool lookup count when inserted in the set */
	CcaHandle prev, next;	 /* address neighbours inside the segment */
	uint32_t tree_leaf;	 /* its set's leaf holding it (tree.h), CCA_NIL if none */
	uint32_t event_count;	 /* outstanding stream events (deferred free) */
	int32_t expandable;	 /* index of its expandable segment, -1 if none */
	uint8_t is_small;	 /* pool: small (true) or large */
	uint8_t pool;		 /* index of its pool (CcaAllocator.pools) */
	uint8_t allocated;
	uint8_t mapped; /* false only for unmapped expandable address space */
	uint8_t set;	/* CcaBlockSet */
	uint8_t live;	/* slab slot in use */
	/* The allocation counter between size and address in the free set's
	 * key (2.12+, rules.h's CcaBlockOrder); 0 under the address order,
	 * which then orders as (stream, size, address) */
	uint64_t counter;
} CcaBlock;

#endif
