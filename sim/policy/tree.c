/* tree.c - treaps over the block slab, ordered as PyTorch orders blocks.
 *
 * Invariants: an in-order walk is sorted by the tree's key; a parent's
 * priority is >= its children's; parent links mirror child links.
 * Priorities are a hash of the handle, so runs are deterministic.
 */
#include "config.h"

#include "tree.h"

static uint32_t
priority_of(CcaHandle h)
{
	uint32_t x = h * 0x9E3779B1u;
	x ^= x >> 16;
	x *= 0x85EBCA6Bu;
	x ^= x >> 13;
	return x;
}

/* Three-way comparison of block A with the key (STREAM, SIZE, COUNTER,
 * PTR); the counter (block.h) is 0 under the address order. */
static inline int
compare_key(const CcaTree *tree, const CcaBlock *a, uint64_t stream, uint64_t size,
	    uint64_t counter, uint64_t ptr)
{
	if (a->stream != stream)
		return a->stream < stream ? -1 : 1;
	if (tree->by_size && a->size != size)
		return a->size < size ? -1 : 1;
	if (tree->by_size && a->counter != counter)
		return a->counter < counter ? -1 : 1;
	if (a->ptr != ptr)
		return a->ptr < ptr ? -1 : 1;
	return 0;
}

void
cca_tree_init(CcaTree *tree, bool by_size)
{
	tree->root = CCA_NIL;
	tree->by_size = by_size;
	tree->count = 0;
}

/* Replaces the child link of PARENT that points at OLD with NEW. */
static void
replace_child(CcaTree *tree, CcaBlock *slab, CcaHandle parent, CcaHandle old, CcaHandle new)
{
	if (parent == CCA_NIL)
		tree->root = new;
	else if (slab[parent].left == old)
		slab[parent].left = new;
	else
		slab[parent].right = new;
	if (new != CCA_NIL)
		slab[new].parent = parent;
}

/* Rotates X above its parent. */
static void
rotate_up(CcaTree *tree, CcaBlock *slab, CcaHandle x)
{
	CcaHandle p = slab[x].parent;
	CcaHandle g = slab[p].parent;
	if (slab[p].left == x) {
		CcaHandle b = slab[x].right;
		slab[p].left = b;
		if (b != CCA_NIL)
			slab[b].parent = p;
		slab[x].right = p;
	} else {
		CcaHandle b = slab[x].left;
		slab[p].right = b;
		if (b != CCA_NIL)
			slab[b].parent = p;
		slab[x].left = p;
	}
	slab[p].parent = x;
	replace_child(tree, slab, g, p, x);
}

void
cca_tree_insert(CcaTree *tree, CcaBlock *slab, CcaHandle h)
{
	CcaBlock *b = &slab[h];
	b->left = b->right = b->parent = CCA_NIL;
	b->priority = priority_of(h);
	CcaHandle parent = CCA_NIL, cur = tree->root;
	bool go_left = false;
	while (cur != CCA_NIL) {
		parent = cur;
		go_left = compare_key(tree, &slab[cur], b->stream, b->size, b->counter, b->ptr) > 0;
		cur = go_left ? slab[cur].left : slab[cur].right;
	}
	b->parent = parent;
	if (parent == CCA_NIL)
		tree->root = h;
	else if (go_left)
		slab[parent].left = h;
	else
		slab[parent].right = h;
	while (b->parent != CCA_NIL && slab[b->parent].priority < b->priority)
		rotate_up(tree, slab, h);
	tree->count++;
}

void
cca_tree_erase(CcaTree *tree, CcaBlock *slab, CcaHandle h)
{
	CcaBlock *b = &slab[h];
	/* rotate the node down until it has at most one child */
	while (b->left != CCA_NIL && b->right != CCA_NIL) {
		CcaHandle child =
			slab[b->left].priority > slab[b->right].priority ? b->left : b->right;
		rotate_up(tree, slab, child);
	}
	CcaHandle child = b->left != CCA_NIL ? b->left : b->right;
	replace_child(tree, slab, b->parent, h, child);
	b->left = b->right = b->parent = CCA_NIL;
	tree->count--;
}

CcaHandle
cca_tree_lower_bound(const CcaTree *tree, const CcaBlock *slab, uint64_t stream, uint64_t size,
		     uint64_t ptr)
{
	CcaHandle cur = tree->root, best = CCA_NIL;
	while (cur != CCA_NIL) {
		if (compare_key(tree, &slab[cur], stream, size, 0, ptr) >= 0) {
			best = cur;
			cur = slab[cur].left;
		} else {
			cur = slab[cur].right;
		}
	}
	return best;
}

CcaHandle
cca_tree_first(const CcaTree *tree, const CcaBlock *slab)
{
	CcaHandle cur = tree->root;
	if (cur == CCA_NIL)
		return CCA_NIL;
	while (slab[cur].left != CCA_NIL)
		cur = slab[cur].left;
	return cur;
}

CcaHandle
cca_tree_last(const CcaTree *tree, const CcaBlock *slab)
{
	CcaHandle cur = tree->root;
	if (cur == CCA_NIL)
		return CCA_NIL;
	while (slab[cur].right != CCA_NIL)
		cur = slab[cur].right;
	return cur;
}

CcaHandle
cca_tree_next(const CcaBlock *slab, CcaHandle h)
{
	if (slab[h].right != CCA_NIL) {
		h = slab[h].right;
		while (slab[h].left != CCA_NIL)
			h = slab[h].left;
		return h;
	}
	CcaHandle p = slab[h].parent;
	while (p != CCA_NIL && slab[p].right == h) {
		h = p;
		p = slab[p].parent;
	}
	return p;
}

CcaHandle
cca_tree_prev(const CcaBlock *slab, CcaHandle h)
{
	if (slab[h].left != CCA_NIL) {
		h = slab[h].left;
		while (slab[h].right != CCA_NIL)
			h = slab[h].right;
		return h;
	}
	CcaHandle p = slab[h].parent;
	while (p != CCA_NIL && slab[p].left == h) {
		h = p;
		p = slab[p].parent;
	}
	return p;
}
