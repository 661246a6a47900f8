/* tree.h - ordered sets of free blocks (B+-trees with the keys inline).
 *
 * A pool's free set is ordered exactly as PyTorch's BlockComparatorSize:
 * (stream, size, address), or from 2.12 (stream, size, allocation counter,
 * address) (CcaBlock.counter, 0 under the address order); its unmapped set
 * (expandable segments) as BlockComparatorAddress: (stream, address).
 *
 * Each set is a B+-tree whose nodes hold the full keys, so a descent
 * compares keys inside a node rather than loading a block per level.
 * Leaves hold (key, block handle) entries and are chained in key order;
 * a block in a set names its leaf (CcaBlock.tree_leaf), so the neighbour
 * steps and erase start from the block without a descent.  Nodes come
 * from a pool owned by the tree, reused through a free list: the steady
 * state allocates nothing.
 *
 * Memory: a node is 576 bytes (nine cache lines) for up to 15 entries.  A
 * free block costs about 60 bytes of nodes at the 2/3 fill random inserts
 * leave (52 when keys arrive in order, 75 after long random churn, 144 at
 * the fewest entries a leaf may keep), and every block 4 bytes of
 * tree_leaf, where the treap's links and priority took 16 (CcaBlock is 80
 * bytes, was 88).
 */
#ifndef CCA_TREE_H
#define CCA_TREE_H

#include <glib.h>

#include "block.h"

/* Keys per node (leaf entries, or inner separators with one child more). */
#define CCA_TREE_CAP 15
/* The fewest keys of a node other than the root; below it a node borrows
 * from or merges with a sibling. */
#define CCA_TREE_MIN 4

/* A block's place in a set's order; size and counter are 0 in an
 * address-ordered set. */
typedef struct {
	uint64_t stream, size, counter, ptr;
} CcaTreeKey;

/* One node: a leaf holds N (key, handle) entries, an inner node N
 * separators and N + 1 children (every key under slot[i] is below key[i],
 * every key under slot[i + 1] at least key[i]). */
typedef struct {
	_Alignas(64) uint16_t n;
	uint8_t is_leaf;
	uint8_t is_free;		 /* on the tree's free list */
	uint32_t prev, next;		 /* leaves: neighbours in key order; free list link */
	uint32_t slot[CCA_TREE_CAP + 1]; /* leaf: block handles; inner: child nodes */
	CcaTreeKey key[CCA_TREE_CAP];
} CcaTreeNode;

typedef struct {
	CcaTreeNode *nodes; /* the node pool, 64-byte aligned */
	uint32_t n_nodes;   /* nodes made (in the tree or on the free list) */
	uint32_t cap_nodes; /* room in NODES */
	uint32_t free_node; /* head of the free list, CCA_NIL when empty */
	uint32_t root; /* CCA_NIL until the first insert; then a leaf, empty or not, or inner */
	uint32_t first_leaf; /* the leftmost and rightmost leaves, CCA_NIL with ROOT */
	uint32_t last_leaf;
	uint32_t height; /* levels, 0 before the first insert, 1 when the root is a leaf */
	bool by_size;	 /* (stream, size, counter, ptr) when true, else (stream, ptr) */
	uint32_t count;	 /* blocks in the set */
} CcaTree;

/* Initialises an empty tree ordered by size (BY_SIZE) or by address; it
 * allocates nothing until the first insert. */
void cca_tree_init(CcaTree *tree, bool by_size);

/* Frees TREE's nodes; TREE is then empty (the blocks are not touched). */
void cca_tree_clear(CcaTree *tree);

/* Inserts block H (not in any set; its key must differ from every key in
 * TREE) and sets its tree_leaf. */
void cca_tree_insert(CcaTree *tree, CcaBlock *slab, CcaHandle h);

/* Removes block H (must be in TREE) and sets its tree_leaf to CCA_NIL.
 * Goes by the key H had when inserted, so H's fields may have changed. */
void cca_tree_erase(CcaTree *tree, CcaBlock *slab, CcaHandle h);

/* Gives the entry of block OLD (in TREE) to block H (OLD itself, or a
 * block in no set) under H's current key, when that key keeps the entry's
 * place in the order (after the entry before it, before the one after it)
 * without crossing a separator: then sets H's tree_leaf (OLD's becomes
 * CCA_NIL) and returns TRUE, else changes nothing and returns FALSE.  The
 * set afterwards holds the keys an erase of OLD and insert of H would
 * leave, at a fraction of their cost. */
bool cca_tree_replace(CcaTree *tree, CcaBlock *slab, CcaHandle old, CcaHandle h);

/* First block whose key is >= (STREAM, SIZE, counter 0, PTR); CCA_NIL if
 * none.  SIZE is ignored by address-ordered trees. */
CcaHandle cca_tree_lower_bound(const CcaTree *tree, const CcaBlock *slab, uint64_t stream,
			       uint64_t size, uint64_t ptr);

/* The smallest / largest block, or CCA_NIL. */
CcaHandle cca_tree_first(const CcaTree *tree, const CcaBlock *slab);
CcaHandle cca_tree_last(const CcaTree *tree, const CcaBlock *slab);

/* The block after / before H (which must be in TREE) in order, or CCA_NIL. */
CcaHandle cca_tree_next(const CcaTree *tree, const CcaBlock *slab, CcaHandle h);
CcaHandle cca_tree_prev(const CcaTree *tree, const CcaBlock *slab, CcaHandle h);

/* Checks TREE over the SLAB_LEN blocks of SLAB (the invariant walker's
 * part for one tree, cca_allocator_check_invariants()): every node index
 * inside the pool and reached once, all leaves at the tree's height, every
 * node but the root holding CCA_TREE_MIN to CCA_TREE_CAP keys (a root leaf
 * may be empty), keys
 * strictly increasing along the leaves and inside the bounds of their
 * separators, the leaf chain and first/last leaves matching the in-order
 * walk, every handle inside the slab, in use, naming this leaf as its
 * tree_leaf and with its block's key, the free list holding the other
 * nodes, and TREE's count the number of entries.  Returns TRUE, or FALSE
 * with the first broken rule appended to WHY (when not NULL). */
gboolean cca_tree_check(const CcaTree *tree, const CcaBlock *slab, uint32_t slab_len, GString *why);

#endif
