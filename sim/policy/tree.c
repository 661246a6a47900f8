/* tree.c - B+-trees of free blocks, ordered as PyTorch orders blocks.
 *
 * Invariants: every leaf is at the same depth; every node but the root
 * holds CCA_TREE_MIN to CCA_TREE_CAP keys; keys increase strictly along
 * the leaf chain and lie inside the bounds their separators give; each
 * entry's key is its block's key and its block's tree_leaf names the leaf.
 * cca_tree_check() walks a tree and checks all of them
 * (tests/unit/test-tree.c; cca_allocator_check_invariants() runs it on
 * every pool's trees).
 *
 * Insert descends by key and splits full nodes on the way back up; erase
 * starts from the block's leaf and descends only when the leaf falls below
 * CCA_TREE_MIN, to borrow from or merge with a sibling.  Entries that move
 * to another leaf (a split, a merge, a borrow) have their blocks'
 * tree_leaf rewritten: the only block loads besides the one operated on.
 */
#include "config.h"

#include "tree.h"

#include <stdarg.h>
#include <string.h>

/* A node below the fewest keys holds at least one (erase_rebalance()
 * descends by it), and a sibling it cannot merge with can lend one. */
G_STATIC_ASSERT(CCA_TREE_MIN >= 2 && 2 * CCA_TREE_MIN <= CCA_TREE_CAP);

/* Deep enough for 2^32 entries at CCA_TREE_MIN + 1 children a node. */
#define MAX_HEIGHT 16

static inline CcaTreeNode *
node(const CcaTree *tree, uint32_t i)
{
	return &tree->nodes[i];
}

static inline CcaTreeKey
key_of(const CcaTree *tree, const CcaBlock *b)
{
	CcaTreeKey k = {b->stream, 0, 0, b->ptr};
	if (tree->by_size) {
		k.size = b->size;
		k.counter = b->counter;
	}
	return k;
}

/* A < B in (stream, size, counter, ptr) order. */
static inline bool
key_less(const CcaTreeKey *a, const CcaTreeKey *b)
{
	if (a->stream != b->stream)
		return a->stream < b->stream;
	if (a->size != b->size)
		return a->size < b->size;
	if (a->counter != b->counter)
		return a->counter < b->counter;
	return a->ptr < b->ptr;
}

static inline bool
key_equal(const CcaTreeKey *a, const CcaTreeKey *b)
{
	return a->stream == b->stream && a->size == b->size && a->counter == b->counter &&
	       a->ptr == b->ptr;
}

/* The first of the N keys of NODE that is >= K (N when none). */
static inline uint32_t
lower_index(const CcaTreeNode *nd, const CcaTreeKey *k)
{
	uint32_t lo = 0, hi = nd->n;
	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;
		if (key_less(&nd->key[mid], k))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The first of the N keys of NODE that is > K (N when none): the child of
 * an inner node whose range holds K. */
static inline uint32_t
upper_index(const CcaTreeNode *nd, const CcaTreeKey *k)
{
	uint32_t lo = 0, hi = nd->n;
	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;
		if (key_less(k, &nd->key[mid]))
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

/* The position of handle H in leaf LEAF. */
static inline uint32_t
slot_of(const CcaTreeNode *leaf, CcaHandle h)
{
	uint32_t i = 0;
	while (i < leaf->n && leaf->slot[i] != h)
		i++;
	g_assert(i < leaf->n);
	return i;
}

void
cca_tree_init(CcaTree *tree, bool by_size)
{
	memset(tree, 0, sizeof *tree);
	tree->free_node = CCA_NIL;
	tree->root = tree->first_leaf = tree->last_leaf = CCA_NIL;
	tree->by_size = by_size;
}

void
cca_tree_clear(CcaTree *tree)
{
	g_aligned_free(tree->nodes);
	cca_tree_init(tree, tree->by_size);
}

/* A fresh node from the free list or the pool (which may move: node
 * pointers taken before are stale). */
static uint32_t
node_new(CcaTree *tree, bool is_leaf)
{
	uint32_t i;
	if (tree->free_node != CCA_NIL) {
		i = tree->free_node;
		tree->free_node = node(tree, i)->next;
	} else {
		if (tree->n_nodes == tree->cap_nodes) {
			uint32_t cap = tree->cap_nodes ? tree->cap_nodes * 2 : 4;
			CcaTreeNode *nodes = g_aligned_alloc(cap, sizeof *nodes, 64);
			if (tree->n_nodes)
				memcpy(nodes, tree->nodes, tree->n_nodes * sizeof *nodes);
			g_aligned_free(tree->nodes);
			tree->nodes = nodes;
			tree->cap_nodes = cap;
		}
		i = tree->n_nodes++;
	}
	CcaTreeNode *nd = node(tree, i);
	nd->n = 0;
	nd->is_leaf = is_leaf;
	nd->is_free = false;
	nd->prev = nd->next = CCA_NIL;
	return i;
}

static void
node_free(CcaTree *tree, uint32_t i)
{
	CcaTreeNode *nd = node(tree, i);
	nd->is_free = true;
	nd->n = 0;
	nd->next = tree->free_node;
	tree->free_node = i;
}

/* Rewrites the tree_leaf of the blocks in entries [FROM, TO) of LEAF. */
static void
adopt(CcaBlock *slab, const CcaTreeNode *leaf, uint32_t leaf_index, uint32_t from, uint32_t to)
{
	for (uint32_t i = from; i < to; i++)
		slab[leaf->slot[i]].tree_leaf = leaf_index;
}

/* The path of a descent: the node at each level and the child taken. */
typedef struct {
	uint32_t node[MAX_HEIGHT];
	uint32_t child[MAX_HEIGHT];
} Path;

/* Descends to the leaf whose range holds K, filling PATH's inner levels;
 * returns the leaf. */
static uint32_t
descend(const CcaTree *tree, const CcaTreeKey *k, Path *path)
{
	uint32_t cur = tree->root;
	for (uint32_t level = 0; level + 1 < tree->height; level++) {
		const CcaTreeNode *nd = node(tree, cur);
		uint32_t c = upper_index(nd, k);
		if (path) {
			path->node[level] = cur;
			path->child[level] = c;
		}
		cur = nd->slot[c];
	}
	return cur;
}

/* How many of a full node's CAP + 1 keys (with the one added at AT) its
 * left half keeps, at most MOST: the middle, except that a key added at
 * either end leaves the other half as full as it may be, so that keys
 * arriving in order (addresses, a growing size) fill nodes to about 3/4
 * rather than 1/2. */
static inline uint32_t
split_point(uint32_t at, uint32_t most)
{
	if (at == CCA_TREE_CAP)
		return most;
	if (at == 0)
		return CCA_TREE_MIN;
	return (CCA_TREE_CAP + 1) / 2;
}

/* Inserts separator SEP and its right child RIGHT into the inner node at
 * LEVEL of PATH, after the child the path took; splits upward. */
static void
insert_inner(CcaTree *tree, Path *path, int level, CcaTreeKey sep, uint32_t right)
{
	for (; level >= 0; level--) {
		uint32_t pi = path->node[level], at = path->child[level];
		CcaTreeNode *p = node(tree, pi);
		if (p->n < CCA_TREE_CAP) {
			memmove(&p->key[at + 1], &p->key[at], (p->n - at) * sizeof p->key[0]);
			memmove(&p->slot[at + 2], &p->slot[at + 1],
				(p->n - at) * sizeof p->slot[0]);
			p->key[at] = sep;
			p->slot[at + 1] = right;
			p->n++;
			return;
		}
		/* split: CAP + 1 keys, CAP + 2 children; key M goes up */
		CcaTreeKey keys[CCA_TREE_CAP + 1];
		uint32_t kids[CCA_TREE_CAP + 2];
		memcpy(keys, p->key, at * sizeof keys[0]);
		keys[at] = sep;
		memcpy(&keys[at + 1], &p->key[at], (CCA_TREE_CAP - at) * sizeof keys[0]);
		memcpy(kids, p->slot, (at + 1) * sizeof kids[0]);
		kids[at + 1] = right;
		memcpy(&kids[at + 2], &p->slot[at + 1], (CCA_TREE_CAP - at) * sizeof kids[0]);
		uint32_t ri = node_new(tree, false);
		p = node(tree, pi);
		CcaTreeNode *r = node(tree, ri);
		uint32_t m = split_point(at, CCA_TREE_CAP - CCA_TREE_MIN);
		p->n = (uint16_t)m;
		memcpy(p->key, keys, m * sizeof keys[0]);
		memcpy(p->slot, kids, (m + 1) * sizeof kids[0]);
		r->n = (uint16_t)(CCA_TREE_CAP - m);
		memcpy(r->key, &keys[m + 1], r->n * sizeof keys[0]);
		memcpy(r->slot, &kids[m + 1], (r->n + 1u) * sizeof kids[0]);
		sep = keys[m];
		right = ri;
	}
	/* the root split: a new root above the two halves */
	uint32_t old = tree->root;
	uint32_t ni = node_new(tree, false);
	CcaTreeNode *root = node(tree, ni);
	root->n = 1;
	root->key[0] = sep;
	root->slot[0] = old;
	root->slot[1] = right;
	tree->root = ni;
	tree->height++;
}

/* Inserts block H of key K at AT in full leaf LI, whose path from the
 * root is PATH: splits it, and its parents as they fill. */
static G_GNUC_NO_INLINE void
insert_split(CcaTree *tree, CcaBlock *slab, CcaHandle h, const CcaTreeKey *k, uint32_t li,
	     uint32_t at)
{
	Path path;
	uint32_t reached = descend(tree, k, &path);
	g_assert(reached == li);
	CcaTreeNode *leaf = node(tree, li);
	/* split: CAP + 1 entries, the left leaf keeps the first M */
	CcaTreeKey keys[CCA_TREE_CAP + 1];
	uint32_t handles[CCA_TREE_CAP + 1];
	memcpy(keys, leaf->key, at * sizeof keys[0]);
	keys[at] = *k;
	memcpy(&keys[at + 1], &leaf->key[at], (CCA_TREE_CAP - at) * sizeof keys[0]);
	memcpy(handles, leaf->slot, at * sizeof handles[0]);
	handles[at] = h;
	memcpy(&handles[at + 1], &leaf->slot[at], (CCA_TREE_CAP - at) * sizeof handles[0]);
	uint32_t ri = node_new(tree, true);
	leaf = node(tree, li);
	CcaTreeNode *r = node(tree, ri);
	uint32_t m = split_point(at, CCA_TREE_CAP + 1 - CCA_TREE_MIN);
	leaf->n = (uint16_t)m;
	memcpy(leaf->key, keys, m * sizeof keys[0]);
	memcpy(leaf->slot, handles, m * sizeof handles[0]);
	r->n = (uint16_t)(CCA_TREE_CAP + 1 - m);
	memcpy(r->key, &keys[m], r->n * sizeof keys[0]);
	memcpy(r->slot, &handles[m], r->n * sizeof handles[0]);
	if (at < m)
		slab[h].tree_leaf = li;
	adopt(slab, r, ri, 0, r->n);
	r->prev = li;
	r->next = leaf->next;
	if (leaf->next != CCA_NIL)
		node(tree, leaf->next)->prev = ri;
	else
		tree->last_leaf = ri;
	leaf->next = ri;
	insert_inner(tree, &path, (int)tree->height - 2, r->key[0], ri);
}

void
cca_tree_insert(CcaTree *tree, CcaBlock *slab, CcaHandle h)
{
	CcaTreeKey k = key_of(tree, &slab[h]);
	tree->count++;
	if (tree->root == CCA_NIL) {
		tree->root = tree->first_leaf = tree->last_leaf = node_new(tree, true);
		tree->height = 1;
	}
	uint32_t li = descend(tree, &k, NULL);
	CcaTreeNode *leaf = node(tree, li);
	uint32_t at = lower_index(leaf, &k);
	if (leaf->n == CCA_TREE_CAP) {
		insert_split(tree, slab, h, &k, li, at);
		return;
	}
	memmove(&leaf->key[at + 1], &leaf->key[at], (leaf->n - at) * sizeof leaf->key[0]);
	memmove(&leaf->slot[at + 1], &leaf->slot[at], (leaf->n - at) * sizeof leaf->slot[0]);
	leaf->key[at] = k;
	leaf->slot[at] = h;
	leaf->n++;
	slab[h].tree_leaf = li;
}

/* Takes leaf LI out of the leaf chain and frees it. */
static void
leaf_unlink(CcaTree *tree, uint32_t li)
{
	CcaTreeNode *leaf = node(tree, li);
	if (leaf->prev != CCA_NIL)
		node(tree, leaf->prev)->next = leaf->next;
	else
		tree->first_leaf = leaf->next;
	if (leaf->next != CCA_NIL)
		node(tree, leaf->next)->prev = leaf->prev;
	else
		tree->last_leaf = leaf->prev;
	node_free(tree, li);
}

/* Removes separator AT and child AT + 1 (RIGHT_CHILD) or child AT
 * (!RIGHT_CHILD) from inner node P. */
static void
inner_remove(CcaTreeNode *p, uint32_t at, bool right_child)
{
	uint32_t c = right_child ? at + 1 : at;
	memmove(&p->key[at], &p->key[at + 1], (p->n - at - 1) * sizeof p->key[0]);
	memmove(&p->slot[c], &p->slot[c + 1], (p->n - c) * sizeof p->slot[0]);
	p->n--;
}

/* Leaf LI, child C of inner node PI, fell below CCA_TREE_MIN: borrows an
 * entry from a sibling or merges into one. */
static void
fix_leaf(CcaTree *tree, CcaBlock *slab, uint32_t pi, uint32_t c, uint32_t li)
{
	CcaTreeNode *p = node(tree, pi), *leaf = node(tree, li);
	if (c > 0) {
		uint32_t si = p->slot[c - 1];
		CcaTreeNode *s = node(tree, si);
		if (s->n + leaf->n <= CCA_TREE_CAP) {
			/* append the leaf's entries to its left sibling */
			memcpy(&s->key[s->n], leaf->key, leaf->n * sizeof s->key[0]);
			memcpy(&s->slot[s->n], leaf->slot, leaf->n * sizeof s->slot[0]);
			s->n = (uint16_t)(s->n + leaf->n);
			adopt(slab, s, si, s->n - leaf->n, s->n);
			inner_remove(p, c - 1, true);
			leaf_unlink(tree, li);
		} else {
			/* take the sibling's last entry */
			memmove(&leaf->key[1], leaf->key, leaf->n * sizeof leaf->key[0]);
			memmove(&leaf->slot[1], leaf->slot, leaf->n * sizeof leaf->slot[0]);
			s->n--;
			leaf->key[0] = s->key[s->n];
			leaf->slot[0] = s->slot[s->n];
			leaf->n++;
			slab[leaf->slot[0]].tree_leaf = li;
			p->key[c - 1] = leaf->key[0];
		}
	} else {
		uint32_t si = p->slot[c + 1];
		CcaTreeNode *s = node(tree, si);
		if (s->n + leaf->n <= CCA_TREE_CAP) {
			/* prepend the leaf's entries to its right sibling */
			memmove(&s->key[leaf->n], s->key, s->n * sizeof s->key[0]);
			memmove(&s->slot[leaf->n], s->slot, s->n * sizeof s->slot[0]);
			memcpy(s->key, leaf->key, leaf->n * sizeof s->key[0]);
			memcpy(s->slot, leaf->slot, leaf->n * sizeof s->slot[0]);
			s->n = (uint16_t)(s->n + leaf->n);
			adopt(slab, s, si, 0, leaf->n);
			inner_remove(p, c, false);
			leaf_unlink(tree, li);
		} else {
			/* take the sibling's first entry */
			leaf->key[leaf->n] = s->key[0];
			leaf->slot[leaf->n] = s->slot[0];
			slab[leaf->slot[leaf->n]].tree_leaf = li;
			leaf->n++;
			s->n--;
			memmove(s->key, &s->key[1], s->n * sizeof s->key[0]);
			memmove(s->slot, &s->slot[1], s->n * sizeof s->slot[0]);
			p->key[c] = s->key[0];
		}
	}
}

/* Inner node NI, child C of inner node PI, fell below CCA_TREE_MIN keys:
 * borrows through the parent from a sibling or merges with one. */
static void
fix_inner(CcaTree *tree, uint32_t pi, uint32_t c, uint32_t ni)
{
	CcaTreeNode *p = node(tree, pi), *nd = node(tree, ni);
	if (c > 0) {
		uint32_t si = p->slot[c - 1];
		CcaTreeNode *s = node(tree, si);
		if (s->n + 1 + nd->n <= CCA_TREE_CAP) {
			s->key[s->n] = p->key[c - 1];
			memcpy(&s->key[s->n + 1], nd->key, nd->n * sizeof s->key[0]);
			memcpy(&s->slot[s->n + 1], nd->slot, (nd->n + 1u) * sizeof s->slot[0]);
			s->n = (uint16_t)(s->n + 1 + nd->n);
			inner_remove(p, c - 1, true);
			node_free(tree, ni);
		} else {
			memmove(&nd->key[1], nd->key, nd->n * sizeof nd->key[0]);
			memmove(&nd->slot[1], nd->slot, (nd->n + 1u) * sizeof nd->slot[0]);
			nd->key[0] = p->key[c - 1];
			nd->slot[0] = s->slot[s->n];
			nd->n++;
			p->key[c - 1] = s->key[s->n - 1];
			s->n--;
		}
	} else {
		uint32_t si = p->slot[c + 1];
		CcaTreeNode *s = node(tree, si);
		if (nd->n + 1 + s->n <= CCA_TREE_CAP) {
			nd->key[nd->n] = p->key[c];
			memcpy(&nd->key[nd->n + 1], s->key, s->n * sizeof nd->key[0]);
			memcpy(&nd->slot[nd->n + 1], s->slot, (s->n + 1u) * sizeof nd->slot[0]);
			nd->n = (uint16_t)(nd->n + 1 + s->n);
			inner_remove(p, c, true);
			node_free(tree, si);
		} else {
			nd->key[nd->n] = p->key[c];
			nd->slot[nd->n + 1] = s->slot[0];
			nd->n++;
			p->key[c] = s->key[0];
			memmove(s->key, &s->key[1], (s->n - 1u) * sizeof s->key[0]);
			memmove(s->slot, &s->slot[1], s->n * sizeof s->slot[0]);
			s->n--;
		}
	}
}

/* Leaf LI (not the root) fell below CCA_TREE_MIN entries: borrows or
 * merges up the path from the root, and drops a root left with one child. */
static G_GNUC_NO_INLINE void
erase_rebalance(CcaTree *tree, CcaBlock *slab, uint32_t li)
{
	/* the separators still bound the leaf's range: any of its keys (it
	 * holds CCA_TREE_MIN - 1 > 0) leads back to it */
	Path path;
	CcaTreeKey k = node(tree, li)->key[0];
	uint32_t reached = descend(tree, &k, &path);
	g_assert(reached == li);
	int level = (int)tree->height - 2;
	fix_leaf(tree, slab, path.node[level], path.child[level], li);
	for (level--; level >= 0; level--) {
		uint32_t ni = path.node[level + 1];
		if (node(tree, ni)->n >= CCA_TREE_MIN)
			return;
		fix_inner(tree, path.node[level], path.child[level], ni);
	}
	CcaTreeNode *root = node(tree, tree->root);
	if (root->n == 0) {
		uint32_t old = tree->root;
		tree->root = root->slot[0];
		tree->height--;
		node_free(tree, old);
	}
}

void
cca_tree_erase(CcaTree *tree, CcaBlock *slab, CcaHandle h)
{
	uint32_t li = slab[h].tree_leaf;
	CcaTreeNode *leaf = node(tree, li);
	uint32_t at = slot_of(leaf, h);
	memmove(&leaf->key[at], &leaf->key[at + 1], (leaf->n - at - 1) * sizeof leaf->key[0]);
	memmove(&leaf->slot[at], &leaf->slot[at + 1], (leaf->n - at - 1) * sizeof leaf->slot[0]);
	leaf->n--;
	slab[h].tree_leaf = CCA_NIL;
	tree->count--;
	/* the root leaf stays, even empty, for the next insert */
	if (tree->height > 1 && leaf->n < CCA_TREE_MIN)
		erase_rebalance(tree, slab, li);
}

bool
cca_tree_replace(CcaTree *tree, CcaBlock *slab, CcaHandle old, CcaHandle h)
{
	uint32_t li = slab[old].tree_leaf;
	CcaTreeNode *leaf = node(tree, li);
	uint32_t at = slot_of(leaf, old);
	CcaTreeKey k = key_of(tree, &slab[h]);
	/* inside the leaf, between its neighbours; at either end of a leaf
	 * the separators above bound it too, so the key may only move
	 * inwards there (a separator lies between the old key and the
	 * neighbouring leaf's), unless the leaf is the first or last */
	bool above = at > 0 ? key_less(&leaf->key[at - 1], &k)
			    : li == tree->first_leaf || key_less(&leaf->key[at], &k);
	bool below = at + 1 < leaf->n ? key_less(&k, &leaf->key[at + 1])
				      : li == tree->last_leaf || key_less(&k, &leaf->key[at]);
	if (!above || !below)
		return false;
	leaf->key[at] = k;
	leaf->slot[at] = h;
	if (old != h)
		slab[old].tree_leaf = CCA_NIL;
	slab[h].tree_leaf = li;
	return true;
}

CcaHandle
cca_tree_lower_bound(const CcaTree *tree, const CcaBlock *slab, uint64_t stream, uint64_t size,
		     uint64_t ptr)
{
	(void)slab;
	if (tree->root == CCA_NIL)
		return CCA_NIL;
	CcaTreeKey k = {stream, tree->by_size ? size : 0, 0, ptr};
	const CcaTreeNode *leaf = node(tree, descend(tree, &k, NULL));
	uint32_t at = lower_index(leaf, &k);
	if (at < leaf->n)
		return leaf->slot[at];
	return leaf->next != CCA_NIL ? node(tree, leaf->next)->slot[0] : CCA_NIL;
}

CcaHandle
cca_tree_first(const CcaTree *tree, const CcaBlock *slab)
{
	(void)slab;
	if (tree->count == 0)
		return CCA_NIL;
	return node(tree, tree->first_leaf)->slot[0];
}

CcaHandle
cca_tree_last(const CcaTree *tree, const CcaBlock *slab)
{
	(void)slab;
	if (tree->count == 0)
		return CCA_NIL;
	const CcaTreeNode *leaf = node(tree, tree->last_leaf);
	return leaf->slot[leaf->n - 1];
}

CcaHandle
cca_tree_next(const CcaTree *tree, const CcaBlock *slab, CcaHandle h)
{
	const CcaTreeNode *leaf = node(tree, slab[h].tree_leaf);
	uint32_t at = slot_of(leaf, h);
	if (at + 1 < leaf->n)
		return leaf->slot[at + 1];
	return leaf->next != CCA_NIL ? node(tree, leaf->next)->slot[0] : CCA_NIL;
}

CcaHandle
cca_tree_prev(const CcaTree *tree, const CcaBlock *slab, CcaHandle h)
{
	const CcaTreeNode *leaf = node(tree, slab[h].tree_leaf);
	uint32_t at = slot_of(leaf, h);
	if (at > 0)
		return leaf->slot[at - 1];
	if (leaf->prev == CCA_NIL)
		return CCA_NIL;
	const CcaTreeNode *p = node(tree, leaf->prev);
	return p->slot[p->n - 1];
}

/* ------------------------------------------------------------- check */

/* The walk of cca_tree_check(): nodes and entries reached so far, the last
 * leaf and key in order. */
typedef struct {
	const CcaTree *tree;
	const CcaBlock *slab;
	uint32_t slab_len;
	uint8_t *seen_node; /* per pool node: reached */
	uint32_t nodes;	    /* nodes reached */
	uint32_t entries;   /* entries reached */
	uint32_t last_leaf; /* the previous leaf in order, CCA_NIL before the first */
	bool have_last;
	CcaTreeKey last; /* the previous key in order */
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

/* Checks the subtree at node NI, LEVEL levels below the root, whose keys
 * must be >= LO (when LO is not NULL) and < HI (when HI is not NULL). */
static gboolean
tree_check_node(TreeCheck *c, uint32_t ni, uint32_t level, const CcaTreeKey *lo,
		const CcaTreeKey *hi)
{
	const CcaTree *tree = c->tree;
	if (ni >= tree->n_nodes)
		return tree_check_fail(c, "tree: node %u outside the pool of %u", ni,
				       tree->n_nodes);
	if (c->seen_node[ni])
		return tree_check_fail(c, "tree: node %u reached twice", ni);
	c->seen_node[ni] = 1;
	c->nodes++;
	const CcaTreeNode *nd = node(tree, ni);
	bool is_leaf = level + 1 == tree->height;
	if (nd->is_free)
		return tree_check_fail(c, "tree: node %u is in the tree and on the free list", ni);
	if (nd->is_leaf != is_leaf)
		return tree_check_fail(c, "tree: node %u at level %u of %u says leaf %u", ni, level,
				       tree->height, nd->is_leaf);
	/* the root: a leaf may be empty, an inner node has two children */
	uint32_t min = level == 0 ? (is_leaf ? 0 : 1) : CCA_TREE_MIN;
	if (nd->n < min || nd->n > CCA_TREE_CAP)
		return tree_check_fail(c, "tree: node %u holds %u keys, outside its fill %u to %u",
				       ni, nd->n, min, CCA_TREE_CAP);
	for (uint32_t i = 0; i < nd->n; i++) {
		if ((lo && key_less(&nd->key[i], lo)) || (hi && !key_less(&nd->key[i], hi)))
			return tree_check_fail(c, "tree: key %u of node %u outside its separators",
					       i, ni);
		if (i > 0 && !key_less(&nd->key[i - 1], &nd->key[i]))
			return tree_check_fail(
				c, "tree: key %u of node %u is not after key %u in key order", i,
				ni, i - 1);
	}
	if (!is_leaf) {
		for (uint32_t i = 0; i <= nd->n; i++)
			if (!tree_check_node(c, nd->slot[i], level + 1,
					     i > 0 ? &nd->key[i - 1] : lo,
					     i < nd->n ? &nd->key[i] : hi))
				return FALSE;
		return TRUE;
	}
	if (nd->prev != c->last_leaf)
		return tree_check_fail(c, "tree: leaf %u has prev %u, the walk came from %u", ni,
				       nd->prev, c->last_leaf);
	if (c->last_leaf == CCA_NIL ? tree->first_leaf != ni : node(tree, c->last_leaf)->next != ni)
		return tree_check_fail(c, "tree: leaf %u is not linked after %u", ni, c->last_leaf);
	c->last_leaf = ni;
	for (uint32_t i = 0; i < nd->n; i++) {
		CcaHandle h = nd->slot[i];
		if (h >= c->slab_len)
			return tree_check_fail(c, "tree: handle %u outside the slab of %u", h,
					       c->slab_len);
		if (++c->entries > tree->count)
			return tree_check_fail(c, "tree: more blocks reached than its count %u",
					       tree->count);
		const CcaBlock *b = &c->slab[h];
		if (!b->live)
			return tree_check_fail(c, "tree: block %u is not in use", h);
		if (b->tree_leaf != ni)
			return tree_check_fail(c, "tree: block %u says leaf %u, found in leaf %u",
					       h, b->tree_leaf, ni);
		CcaTreeKey k = key_of(tree, b);
		if (!key_equal(&k, &nd->key[i]))
			return tree_check_fail(c, "tree: block %u has a key other than its entry's",
					       h);
		if (c->have_last && !key_less(&c->last, &k))
			return tree_check_fail(
				c, "tree: block %u is not after the one before it in key order", h);
		c->last = k;
		c->have_last = true;
	}
	return TRUE;
}

gboolean
cca_tree_check(const CcaTree *tree, const CcaBlock *slab, uint32_t slab_len, GString *why)
{
	TreeCheck c = {tree, slab, slab_len, NULL, 0, 0, CCA_NIL, false, {0, 0, 0, 0}, why};
	if (tree->root == CCA_NIL) {
		if (tree->count != 0 || tree->height != 0 || tree->first_leaf != CCA_NIL ||
		    tree->last_leaf != CCA_NIL)
			return tree_check_fail(&c, "tree: empty, but its count says %u (height %u)",
					       tree->count, tree->height);
	} else {
		if (tree->height == 0 || tree->height > MAX_HEIGHT)
			return tree_check_fail(&c, "tree: height %u", tree->height);
		c.seen_node = g_new0(uint8_t, tree->n_nodes);
		gboolean ok = tree_check_node(&c, tree->root, 0, NULL, NULL);
		if (ok && tree->last_leaf != c.last_leaf)
			ok = tree_check_fail(&c, "tree: last leaf %u, the walk ended at %u",
					     tree->last_leaf, c.last_leaf);
		if (ok && c.last_leaf != CCA_NIL && node(tree, c.last_leaf)->next != CCA_NIL)
			ok = tree_check_fail(&c, "tree: last leaf %u links on", c.last_leaf);
		if (ok && c.entries != tree->count)
			ok = tree_check_fail(&c, "tree: %u blocks reached, its count says %u",
					     c.entries, tree->count);
		/* every other node is on the free list, once */
		uint32_t on_free = 0;
		for (uint32_t i = tree->free_node; ok && i != CCA_NIL; i = node(tree, i)->next) {
			if (i >= tree->n_nodes || c.seen_node[i] || !node(tree, i)->is_free)
				ok = tree_check_fail(&c, "tree: free list reaches node %u", i);
			else
				c.seen_node[i] = 1;
			on_free++;
		}
		if (ok && c.nodes + on_free != tree->n_nodes)
			ok = tree_check_fail(&c,
					     "tree: %u nodes in the tree and %u free of %u made",
					     c.nodes, on_free, tree->n_nodes);
		g_free(c.seen_node);
		return ok;
	}
	return TRUE;
}
