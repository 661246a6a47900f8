/* tree.c - treaps over the block slab, ordered as PyTorch orders blocks.
 *
 * Invariants: an in-order walk is sorted by the tree's key; a parent's
 * priority is >= its children's; parent links mirror child links.
 * Priorities are a hash of the handle, so runs are deterministic.
 * cca_tree_check() walks a tree and checks all three (tests/unit/test-tree.c;
 * cca_allocator_check_invariants() runs it on every pool's trees).
 */
#include "config.h"

#include "tree.h"

#include <stdarg.h>

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

/* ------------------------------------------------------------- check */

/* The walk of cca_tree_check(): blocks reached so far, the last one in
 * order, and the first broken rule. */
typedef struct {
	const CcaTree *tree;
	const CcaBlock *slab;
	uint32_t slab_len;
	uint32_t seen;
	CcaHandle last; /* the previous block in order, CCA_NIL before the first */
	GString *why;
} TreeCheck;

static gboolean G_GNUC_PRINTF(2, 3) tree_check_fail(TreeCheck *c, const char *fmt, ...)
{
	if (c->why) {
		va_list ap;
		va_start(ap, fmt);
		g_string_append_vprintf(c->why, fmt, ap);
		va_end(ap);
	}
	return FALSE;
}

/* Checks the subtree at H, whose parent is PARENT, in order. */
static gboolean
tree_check_node(TreeCheck *c, CcaHandle h, CcaHandle parent)
{
	if (h == CCA_NIL)
		return TRUE;
	if (h >= c->slab_len)
		return tree_check_fail(c, "tree: handle %u outside the slab of %u", h, c->slab_len);
	if (++c->seen > c->tree->count)
		return tree_check_fail(c, "tree: more blocks reached than its count %u (a cycle?)",
				       c->tree->count);
	const CcaBlock *b = &c->slab[h];
	if (b->parent != parent)
		return tree_check_fail(c, "tree: block %u has parent %u, reached from %u", h,
				       b->parent, parent);
	if (b->priority != priority_of(h))
		return tree_check_fail(c, "tree: block %u has priority %u, not its handle's %u", h,
				       b->priority, priority_of(h));
	if (parent != CCA_NIL && c->slab[parent].priority < b->priority)
		return tree_check_fail(c, "tree: block %u has a higher priority than its parent %u",
				       h, parent);
	if (!tree_check_node(c, b->left, h))
		return FALSE;
	if (c->last != CCA_NIL) {
		const CcaBlock *p = &c->slab[c->last];
		if (compare_key(c->tree, p, b->stream, b->size, b->counter, b->ptr) >= 0)
			return tree_check_fail(
				c, "tree: block %u is not after block %u in key order", h, c->last);
	}
	c->last = h;
	return tree_check_node(c, b->right, h);
}

gboolean
cca_tree_check(const CcaTree *tree, const CcaBlock *slab, uint32_t slab_len, GString *why)
{
	TreeCheck c = {tree, slab, slab_len, 0, CCA_NIL, why};
	if (!tree_check_node(&c, tree->root, CCA_NIL))
		return FALSE;
	if (c.seen != tree->count)
		return tree_check_fail(&c, "tree: %u blocks reached, its count says %u", c.seen,
				       tree->count);
	return TRUE;
}
