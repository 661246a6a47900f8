/* test-tree.c - the B+-trees behind best fit (sim/policy/tree.c): inserts
 * and erases in a seeded random order keep the order PyTorch's comparators
 * give (BlockComparatorSize: stream, size, counter, address, the counter 0
 * here as under 2.11's rules; BlockComparatorAddress: stream, address); a
 * randomized differential test against a sorted array checks insert,
 * erase, lower_bound, next and prev with counters too; and cca_tree_check()
 * accepts every such tree and names each kind of damage: a block's leaf
 * link, the key order, a block's key, a node's fill, the count, a handle
 * outside the slab. */
#include "config.h"

#include <glib.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "tree.h"

#define N_BLOCKS 600

/* A slab of N_BLOCKS blocks with keys from RNG: three streams, sizes with
 * many ties (so the address breaks them), distinct addresses. */
static CcaBlock *
make_slab(GRand *rng)
{
	CcaBlock *slab = g_new0(CcaBlock, N_BLOCKS);
	for (uint32_t h = 0; h < N_BLOCKS; h++) {
		slab[h].stream = (uint64_t)g_rand_int_range(rng, 0, 3);
		slab[h].size = 512 * (uint64_t)g_rand_int_range(rng, 1, 40);
		slab[h].ptr = (uint64_t)h * 4096 + (uint64_t)g_rand_int_range(rng, 0, 8) * 512;
		slab[h].live = 1;
		slab[h].tree_leaf = CCA_NIL;
	}
	return slab;
}

static const CcaBlock *sort_slab;
static gboolean sort_by_size;

static int
key_order(const void *pa, const void *pb)
{
	const CcaBlock *a = &sort_slab[*(const CcaHandle *)pa],
		       *b = &sort_slab[*(const CcaHandle *)pb];
	if (a->stream != b->stream)
		return a->stream < b->stream ? -1 : 1;
	if (sort_by_size && a->size != b->size)
		return a->size < b->size ? -1 : 1;
	if (sort_by_size && a->counter != b->counter)
		return a->counter < b->counter ? -1 : 1;
	return a->ptr < b->ptr ? -1 : a->ptr > b->ptr;
}

/* Checks that TREE holds exactly the N handles IN (any order), in key order. */
static void
assert_walk(const CcaTree *tree, const CcaBlock *slab, CcaHandle *in, uint32_t n)
{
	sort_slab = slab;
	sort_by_size = tree->by_size;
	if (n > 0) /* qsort's base must not be NULL, even for no elements */
		qsort(in, n, sizeof *in, key_order);
	CcaHandle h = cca_tree_first(tree, slab);
	for (uint32_t i = 0; i < n; i++, h = cca_tree_next(tree, slab, h))
		g_assert_cmpuint(h, ==, in[i]);
	g_assert_cmpuint(h, ==, CCA_NIL);
	g_assert_cmpuint(tree->count, ==, n);
}

/* Asserts that cca_tree_check() accepts TREE over the first SLAB_LEN blocks. */
static void
check_slab_ok(const CcaTree *tree, const CcaBlock *slab, uint32_t slab_len)
{
	g_autoptr(GString) why = g_string_new(NULL);
	gboolean ok = cca_tree_check(tree, slab, slab_len, why);
	if (!ok)
		g_test_message("cca_tree_check: %s", why->str);
	g_assert_true(ok);
}

static void
check_ok(const CcaTree *tree, const CcaBlock *slab)
{
	check_slab_ok(tree, slab, N_BLOCKS);
}

static void
test_tree_order(gconstpointer data)
{
	gboolean by_size = GPOINTER_TO_INT(data);
	guint32 seed = g_test_rand_int();
	g_test_message("seed %u", seed);
	g_autoptr(GRand) rng = g_rand_new_with_seed(seed);
	g_autofree CcaBlock *slab = make_slab(rng);
	g_autofree CcaHandle *order = g_new(CcaHandle, N_BLOCKS);
	for (uint32_t i = 0; i < N_BLOCKS; i++)
		order[i] = i;
	for (uint32_t i = N_BLOCKS - 1; i > 0; i--) {
		uint32_t j = (uint32_t)g_rand_int_range(rng, 0, (gint32)i + 1);
		CcaHandle t = order[i];
		order[i] = order[j];
		order[j] = t;
	}
	CcaTree tree;
	cca_tree_init(&tree, by_size);
	for (uint32_t i = 0; i < N_BLOCKS; i++) {
		cca_tree_insert(&tree, slab, order[i]);
		check_ok(&tree, slab);
	}
	g_autofree CcaHandle *in = g_memdup2(order, N_BLOCKS * sizeof *order);
	assert_walk(&tree, slab, in, N_BLOCKS);
	/* erase every other block of the insertion order */
	uint32_t kept = 0;
	for (uint32_t i = 0; i < N_BLOCKS; i++) {
		if (i % 2 == 0) {
			cca_tree_erase(&tree, slab, order[i]);
			check_ok(&tree, slab);
		} else {
			in[kept++] = order[i];
		}
	}
	assert_walk(&tree, slab, in, kept);
	/* lower_bound agrees with the walk: the first block >= each block's key */
	for (uint32_t i = 0; i < kept; i++) {
		const CcaBlock *b = &slab[in[i]];
		g_assert_cmpuint(cca_tree_lower_bound(&tree, slab, b->stream, b->size, b->ptr), ==,
				 in[i]);
	}
	cca_tree_clear(&tree);
}

/* ------------------------------------------- differential against an array */

#define DIFF_BLOCKS 4000
#define DIFF_OPS 60000

/* -1, 0 or 1 as block A orders before, with or after the key (STREAM,
 * SIZE, COUNTER, PTR) in the order of a by-size (BY_SIZE) or address set. */
static int
compare_to_key(const CcaBlock *a, gboolean by_size, uint64_t stream, uint64_t size,
	       uint64_t counter, uint64_t ptr)
{
	if (a->stream != stream)
		return a->stream < stream ? -1 : 1;
	if (by_size && a->size != size)
		return a->size < size ? -1 : 1;
	if (by_size && a->counter != counter)
		return a->counter < counter ? -1 : 1;
	return a->ptr < ptr ? -1 : a->ptr > ptr;
}

/* The sorted array the tree is checked against: handles in key order. */
typedef struct {
	CcaHandle *h;
	uint32_t n;
} Reference;

/* The first position of REF whose block is >= the key. */
static uint32_t
ref_lower_bound(const Reference *ref, const CcaBlock *slab, gboolean by_size, uint64_t stream,
		uint64_t size, uint64_t counter, uint64_t ptr)
{
	uint32_t lo = 0, hi = ref->n;
	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;
		if (compare_to_key(&slab[ref->h[mid]], by_size, stream, size, counter, ptr) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The position of block H in REF (which holds it). */
static uint32_t
ref_find(const Reference *ref, const CcaBlock *slab, gboolean by_size, CcaHandle h)
{
	const CcaBlock *b = &slab[h];
	uint32_t at = ref_lower_bound(ref, slab, by_size, b->stream, b->size, b->counter, b->ptr);
	g_assert_cmpuint(at, <, ref->n);
	g_assert_cmpuint(ref->h[at], ==, h);
	return at;
}

/* Random keys with many ties: four streams (one of them the largest
 * value), eight sizes, counters 0 to 3 when WITH_COUNTER. */
static void
random_key(GRand *rng, CcaBlock *b, gboolean with_counter)
{
	static const uint64_t streams[] = {0, 7, 8, G_MAXUINT64};
	b->stream = streams[g_rand_int_range(rng, 0, 4)];
	b->size = 512 * (uint64_t)(1u << g_rand_int_range(rng, 0, 8));
	b->counter = with_counter ? (uint64_t)g_rand_int_range(rng, 0, 4) : 0;
}

/* Inserts, erases (with the key changed while out of the set, as a split
 * or merge changes it), lower bounds at random keys and neighbour steps
 * from random members, each compared with the sorted array; the tree is
 * grown to thousands of blocks and drained to none twice so that splits,
 * borrows, merges and the root's collapse all run. */
static void
test_tree_differential(gconstpointer data)
{
	guint mode = GPOINTER_TO_UINT(data); /* 0 by address, 1 by size, 2 by size and counter */
	gboolean by_size = mode > 0;
	guint32 seed = g_test_rand_int();
	g_test_message("seed %u", seed);
	g_autoptr(GRand) rng = g_rand_new_with_seed(seed);
	g_autofree CcaBlock *slab = g_new0(CcaBlock, DIFF_BLOCKS);
	g_autofree gboolean *in = g_new0(gboolean, DIFF_BLOCKS);
	for (uint32_t h = 0; h < DIFF_BLOCKS; h++) {
		random_key(rng, &slab[h], mode == 2);
		slab[h].ptr = (uint64_t)h * 4096;
		slab[h].live = 1;
		slab[h].tree_leaf = CCA_NIL;
	}
	Reference ref = {g_new(CcaHandle, DIFF_BLOCKS), 0};
	CcaTree tree;
	cca_tree_init(&tree, by_size);
	uint32_t max_height = 0, emptied = 0;
	for (uint32_t op = 0; op < DIFF_OPS; op++) {
		/* phases: grow, drain, grow, mixed (twice as long), drain */
		static const int insert_odds_of[6] = {85, 10, 85, 50, 50, 10};
		int insert_odds = insert_odds_of[op / (DIFF_OPS / 6)];
		uint32_t count_before = tree.count;
		int what = g_rand_int_range(rng, 0, 100);
		CcaHandle h = (CcaHandle)g_rand_int_range(rng, 0, DIFF_BLOCKS);
		if (what < insert_odds) {
			if (in[h])
				continue;
			random_key(rng, &slab[h], mode == 2);
			uint32_t at = ref_lower_bound(&ref, slab, by_size, slab[h].stream,
						      slab[h].size, slab[h].counter, slab[h].ptr);
			memmove(&ref.h[at + 1], &ref.h[at], (ref.n - at) * sizeof ref.h[0]);
			ref.h[at] = h;
			ref.n++;
			in[h] = TRUE;
			cca_tree_insert(&tree, slab, h);
		} else if (ref.n > 0) {
			/* erase a member picked from the array */
			uint32_t at = (uint32_t)g_rand_int_range(rng, 0, (gint32)ref.n);
			h = ref.h[at];
			if (what % 3 == 0) {
				/* a neighbour step from it first */
				g_assert_cmpuint(cca_tree_next(&tree, slab, h), ==,
						 at + 1 < ref.n ? ref.h[at + 1] : CCA_NIL);
				g_assert_cmpuint(cca_tree_prev(&tree, slab, h), ==,
						 at > 0 ? ref.h[at - 1] : CCA_NIL);
			}
			cca_tree_erase(&tree, slab, h);
			memmove(&ref.h[at], &ref.h[at + 1], (ref.n - at - 1) * sizeof ref.h[0]);
			ref.n--;
			in[h] = FALSE;
			g_assert_cmpuint(slab[h].tree_leaf, ==, CCA_NIL);
		}
		g_assert_cmpuint(tree.count, ==, ref.n);
		/* a lower bound at a random key, and at a member's key */
		CcaBlock q;
		random_key(rng, &q, FALSE);
		q.ptr = (uint64_t)g_rand_int_range(rng, 0, DIFF_BLOCKS + 1) * 4096 -
			(uint64_t)g_rand_int_range(rng, 0, 2);
		uint32_t at = ref_lower_bound(&ref, slab, by_size, q.stream, q.size, 0, q.ptr);
		g_assert_cmpuint(cca_tree_lower_bound(&tree, slab, q.stream, q.size, q.ptr), ==,
				 at < ref.n ? ref.h[at] : CCA_NIL);
		g_assert_cmpuint(cca_tree_first(&tree, slab), ==, ref.n ? ref.h[0] : CCA_NIL);
		g_assert_cmpuint(cca_tree_last(&tree, slab), ==,
				 ref.n ? ref.h[ref.n - 1] : CCA_NIL);
		if (ref.n > 0) {
			uint32_t m = (uint32_t)g_rand_int_range(rng, 0, (gint32)ref.n);
			CcaHandle mh = ref.h[m];
			g_assert_cmpuint(ref_find(&ref, slab, by_size, mh), ==, m);
			g_assert_cmpuint(cca_tree_next(&tree, slab, mh), ==,
					 m + 1 < ref.n ? ref.h[m + 1] : CCA_NIL);
			g_assert_cmpuint(cca_tree_prev(&tree, slab, mh), ==,
					 m > 0 ? ref.h[m - 1] : CCA_NIL);
			/* lower_bound at a member's (stream, size, ptr): itself under
			 * counter 0, else the first of its stream and size at or
			 * after its address */
			const CcaBlock *b = &slab[mh];
			uint32_t lb =
				ref_lower_bound(&ref, slab, by_size, b->stream, b->size, 0, b->ptr);
			g_assert_cmpuint(
				cca_tree_lower_bound(&tree, slab, b->stream, b->size, b->ptr), ==,
				lb < ref.n ? ref.h[lb] : CCA_NIL);
		}
		if (op % 97 == 0 || tree.count < 40)
			check_slab_ok(&tree, slab, DIFF_BLOCKS);
		max_height = MAX(max_height, tree.height);
		emptied += count_before > 0 && tree.count == 0;
	}
	check_slab_ok(&tree, slab, DIFF_BLOCKS);
	g_autofree CcaHandle *walk = g_memdup2(ref.h, ref.n * sizeof ref.h[0]);
	assert_walk(&tree, slab, walk, ref.n);
	g_test_message("height reached %u, emptied %u times, %u blocks at the end", max_height,
		       emptied, ref.n);
	g_assert_cmpuint(max_height, >=, 3);
	g_assert_cmpuint(emptied, >, 0);
	cca_tree_clear(&tree);
	g_free(ref.h);
}

/* Kinds of damage, each made on a fresh tree, and the words of the
 * message cca_tree_check() must give. */
typedef enum {
	BREAK_LEAF_LINK,
	BREAK_ORDER,
	BREAK_BLOCK_KEY,
	BREAK_FILL,
	BREAK_COUNT_HIGH,
	BREAK_COUNT_LOW,
	BREAK_SLAB,
} Damage;

typedef struct {
	const char *name;
	Damage damage;
	const char *says;
} DamageCase;

static const DamageCase damage_cases[] = {
	{"leaf-link", BREAK_LEAF_LINK, "found in leaf"},
	{"key-order", BREAK_ORDER, "in key order"},
	{"block-key", BREAK_BLOCK_KEY, "a key other than its entry's"},
	{"node-fill", BREAK_FILL, "outside its fill"},
	{"count-too-high", BREAK_COUNT_HIGH, "its count says"},
	{"count-too-low", BREAK_COUNT_LOW, "more blocks reached than its count"},
	{"handle-outside-slab", BREAK_SLAB, "outside the slab"},
};

static void
test_tree_damage(gconstpointer data)
{
	const DamageCase *c = data;
	g_autoptr(GRand) rng = g_rand_new_with_seed(25);
	g_autofree CcaBlock *slab = make_slab(rng);
	CcaTree tree;
	cca_tree_init(&tree, TRUE);
	for (uint32_t h = 0; h < N_BLOCKS; h++)
		cca_tree_insert(&tree, slab, h);
	check_ok(&tree, slab);
	CcaHandle first = cca_tree_first(&tree, slab), second = cca_tree_next(&tree, slab, first);
	CcaTreeNode *first_leaf = &tree.nodes[tree.first_leaf];
	uint32_t slab_len = N_BLOCKS;
	g_assert_cmpuint(tree.height, >=, 2);
	g_assert_cmpuint(first_leaf->n, >=, 2);
	switch (c->damage) {
	case BREAK_LEAF_LINK: /* the first block names the last leaf */
		slab[first].tree_leaf = tree.last_leaf;
		break;
	case BREAK_ORDER: { /* the two smallest entries swap places */
		CcaTreeKey k = first_leaf->key[0];
		first_leaf->key[0] = first_leaf->key[1];
		first_leaf->key[1] = k;
		first_leaf->slot[0] = second;
		first_leaf->slot[1] = first;
		break;
	}
	case BREAK_BLOCK_KEY: /* a block's key changes under its entry */
		slab[first].stream = G_MAXUINT64;
		break;
	case BREAK_FILL: /* a leaf below the fewest keys a node may hold */
		first_leaf->n = CCA_TREE_MIN - 1;
		break;
	case BREAK_COUNT_HIGH:
		tree.count++;
		break;
	case BREAK_COUNT_LOW:
		tree.count--;
		break;
	case BREAK_SLAB: /* the slab ends before the tree's largest handle */
		slab_len = N_BLOCKS - 1;
		break;
	}
	g_autoptr(GString) why = g_string_new(NULL);
	g_assert_false(cca_tree_check(&tree, slab, slab_len, why));
	g_test_message("cca_tree_check: %s", why->str);
	g_assert_nonnull(strstr(why->str, c->says));
	cca_tree_clear(&tree);
}

int
main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_data_func("/tree/order/by-size", GINT_TO_POINTER(TRUE), test_tree_order);
	g_test_add_data_func("/tree/order/by-address", GINT_TO_POINTER(FALSE), test_tree_order);
	g_test_add_data_func("/tree/differential/by-address", GUINT_TO_POINTER(0),
			     test_tree_differential);
	g_test_add_data_func("/tree/differential/by-size", GUINT_TO_POINTER(1),
			     test_tree_differential);
	g_test_add_data_func("/tree/differential/by-size-and-counter", GUINT_TO_POINTER(2),
			     test_tree_differential);
	CCA_TEST_ADD_ROWS("/tree/damage", damage_cases, name, test_tree_damage);
	return g_test_run();
}
