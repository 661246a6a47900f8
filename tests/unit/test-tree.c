/* test-tree.c - the treaps behind best fit (sim/policy/tree.c): inserts and
 * erases in a seeded random order keep the order PyTorch's comparators
 * give (BlockComparatorSize: stream, size, counter, address, the counter 0
 * here as under 2.11's rules; BlockComparatorAddress: stream, address), and cca_tree_check()
 * accepts every such tree and names each kind of damage: a parent link, the key order, a priority,
 * the count, a handle outside the slab. */
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
		slab[h].left = slab[h].right = slab[h].parent = CCA_NIL;
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
	if (sort_by_size && a->counter != b->counter) /* 0 here: the address order */
		return a->counter < b->counter ? -1 : 1;
	return a->ptr < b->ptr ? -1 : a->ptr > b->ptr;
}

/* Checks that TREE holds exactly the N handles IN (any order), in key order. */
static void
assert_walk(const CcaTree *tree, const CcaBlock *slab, CcaHandle *in, uint32_t n)
{
	sort_slab = slab;
	sort_by_size = tree->by_size;
	qsort(in, n, sizeof *in, key_order);
	CcaHandle h = cca_tree_first(tree, slab);
	for (uint32_t i = 0; i < n; i++, h = cca_tree_next(slab, h))
		g_assert_cmpuint(h, ==, in[i]);
	g_assert_cmpuint(h, ==, CCA_NIL);
	g_assert_cmpuint(tree->count, ==, n);
}

static void
check_ok(const CcaTree *tree, const CcaBlock *slab)
{
	g_autoptr(GString) why = g_string_new(NULL);
	gboolean ok = cca_tree_check(tree, slab, N_BLOCKS, why);
	if (!ok)
		g_test_message("cca_tree_check: %s", why->str);
	g_assert_true(ok);
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
}

/* Kinds of damage, each made on a fresh tree, and the words of the
 * message cca_tree_check() must give. */
typedef enum {
	BREAK_PARENT,
	BREAK_ORDER,
	BREAK_PRIORITY,
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
	{"parent-link", BREAK_PARENT, "has parent"},
	{"key-order", BREAK_ORDER, "in key order"},
	{"priority", BREAK_PRIORITY, "not its handle's"},
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
	CcaHandle root = tree.root, first = cca_tree_first(&tree, slab);
	CcaHandle child = slab[root].left != CCA_NIL ? slab[root].left : slab[root].right;
	uint32_t slab_len = N_BLOCKS;
	switch (c->damage) {
	case BREAK_PARENT:
		slab[child].parent = CCA_NIL;
		break;
	case BREAK_ORDER: /* the smallest key becomes larger than every other */
		slab[first].stream = G_MAXUINT64;
		break;
	case BREAK_PRIORITY:
		slab[root].priority ^= 1;
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
}

int
main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_data_func("/tree/order/by-size", GINT_TO_POINTER(TRUE), test_tree_order);
	g_test_add_data_func("/tree/order/by-address", GINT_TO_POINTER(FALSE), test_tree_order);
	CCA_TEST_ADD_ROWS("/tree/damage", damage_cases, name, test_tree_damage);
	return g_test_run();
}
