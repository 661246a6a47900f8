/* tree.h - ordered sets of free blocks (treaps over the block slab).
 *
 * A pool's free set is ordered exactly as PyTorch's BlockComparatorSize:
 * (stream, size, address), or from 2.12 (stream, size, allocation counter,
 * address) (CcaBlock.counter, 0 under the address order); its unmapped set (expandable segments) as
 * BlockComparatorAddress: (stream, address).  Both are treaps whose nodes
 * are the blocks themselves (intrusive links), so insert, erase, lower
 * bound and neighbour steps cost O(log n) and allocate nothing.
 */
#ifndef CCA_TREE_H
#define CCA_TREE_H

#include <glib.h>

#include "block.h"

typedef struct {
	CcaHandle root;
	bool by_size; /* (stream, size, ptr) when true, else (stream, ptr) */
	uint32_t count;
} CcaTree;

/* Initialises an empty tree ordered by size (BY_SIZE) or by address. */
void cca_tree_init(CcaTree *tree, bool by_size);

/* Inserts block H (not in any set). */
void cca_tree_insert(CcaTree *tree, CcaBlock *slab, CcaHandle h);

/* Removes block H (must be in TREE). */
void cca_tree_erase(CcaTree *tree, CcaBlock *slab, CcaHandle h);

/* First block whose key is >= (STREAM, SIZE, counter 0, PTR); CCA_NIL if
 * none.  SIZE is ignored by address-ordered trees. */
CcaHandle cca_tree_lower_bound(const CcaTree *tree, const CcaBlock *slab, uint64_t stream,
			       uint64_t size, uint64_t ptr);

/* The smallest / largest block, or CCA_NIL. */
CcaHandle cca_tree_first(const CcaTree *tree, const CcaBlock *slab);
CcaHandle cca_tree_last(const CcaTree *tree, const CcaBlock *slab);

/* The block after / before H in order, or CCA_NIL. */
CcaHandle cca_tree_next(const CcaBlock *slab, CcaHandle h);
CcaHandle cca_tree_prev(const CcaBlock *slab, CcaHandle h);

/* Checks TREE over the SLAB_LEN blocks of SLAB (the invariant walker's
 * part for one tree, cca_allocator_check_invariants()): every handle in
 * the slab and reached once, parent links mirror child links, the root
 * has no parent, each block's priority is its handle's and no lower than
 * its children's, an in-order walk is strictly increasing in the tree's
 * key, and TREE's count is the number of blocks reached.  Returns TRUE, or
 * FALSE with the first broken rule appended to WHY (when not NULL). */
gboolean cca_tree_check(const CcaTree *tree, const CcaBlock *slab, uint32_t slab_len, GString *why);

#endif
