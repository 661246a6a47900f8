/* test-driverva.c - the driver address model against the H200 probes.
 *
 * traces/driver-probe/scripts/NAME.txt are cudaMalloc/cudaFree sequences
 * (runs of one size, mixes, frees and reuse, and the segment sequences of
 * the recorded runs); results/NAME.out is what gpu/va_probe printed for
 * each on the H200 (driver 580, CUDA 13), one fresh process per script.
 * The model must give every address, relative to the first segment.
 *
 * /driverva/reference: the model, which keeps its regions under a max-tree
 * of their gaps, gives the addresses of a plain reading of its rules (a
 * scan of every region and free range, below) on long random sequences
 * with thousands of regions standing and returned.
 */
#include "config.h"

#include <glib.h>
#include <stdio.h>
#include <string.h>

#include "driverva.h"
#include "testutil.h"

#define BASE UINT64_C(0x7f0000000000)

static void
test_probe(gconstpointer data)
{
	const char *name = data;
	g_autofree char *dir = cca_test_trace_path("driver-probe");
	g_autofree char *script_path = g_strdup_printf("%s/scripts/%s.txt", dir, name);
	g_autofree char *result_path = g_strdup_printf("%s/results/%s.out", dir, name);
	g_autofree char *script = NULL, *result = NULL;
	g_assert_true(g_file_get_contents(script_path, &script, NULL, NULL));
	g_assert_true(g_file_get_contents(result_path, &result, NULL, NULL));

	CcaDriverVA *va = cca_driverva_new(BASE);
	GArray *ptrs = g_array_new(FALSE, FALSE, sizeof(uint64_t));
	gchar **results = g_strsplit(result, "\n", -1);
	gchar **lines = g_strsplit(script, "\n", -1);
	guint r = 0, compared = 0;
	uint64_t first = 0;
	for (gchar **l = lines; *l; l++) {
		char op;
		unsigned long long arg;
		if (**l == '#' || sscanf(*l, " %c %llu", &op, &arg) != 2)
			continue;
		if (op == 'f') {
			cca_driverva_release(va, g_array_index(ptrs, uint64_t, arg));
			continue;
		}
		uint64_t ptr = cca_driverva_alloc(va, arg);
		if (!first)
			first = ptr;
		g_array_append_val(ptrs, ptr);
		/* the probe's line for this allocation: "a ID SIZE 0xADDR REL" */
		while (results[r] && results[r][0] != 'a')
			r++;
		g_assert_nonnull(results[r]);
		long long id, size, rel;
		char hex[32];
		g_assert_cmpint(sscanf(results[r], "a %lld %lld %31s %lld", &id, &size, hex, &rel),
				==, 4);
		r++;
		if ((int64_t)(ptr - first) != rel)
			g_test_message(
				"%s: segment %lld of %lld bytes: probe %+lld MiB, model %+lld MiB",
				name, id, size, rel / 1048576,
				(long long)(int64_t)(ptr - first) / 1048576);
		g_assert_cmpint((int64_t)(ptr - first), ==, rel);
		compared++;
	}
	g_assert_cmpuint(compared, >, 0);
	g_strfreev(lines);
	g_strfreev(results);
	g_array_free(ptrs, TRUE);
	cca_driverva_free(va);
}

/* ------------------------------------------------ the rules, read plainly */

#define MIB UINT64_C(1048576)
#define REF_GRANULE (2 * MIB)
#define REF_REGION (32 * MIB)

typedef struct {
	uint64_t start, size;
	GArray *used; /* uint64_t offset, size pairs, sorted by offset */
	bool permanent;
} RefRegion;

typedef struct {
	GPtrArray *regions; /* RefRegion*, creation order */
	GArray *free;	    /* uint64_t start, end pairs, unordered */
} RefVA;

static void
ref_use(RefRegion *r, uint64_t offset, uint64_t size)
{
	guint k = 0;
	while (k < r->used->len / 2 && g_array_index(r->used, uint64_t, 2 * k) <= offset)
		k++;
	uint64_t pair[2] = {offset, size};
	g_array_insert_vals(r->used, 2 * k, pair, 2);
}

static RefRegion *
ref_region(RefVA *va, uint64_t start, uint64_t size, bool permanent)
{
	RefRegion *r = g_new0(RefRegion, 1);
	*r = (RefRegion){start, size, g_array_new(FALSE, FALSE, sizeof(uint64_t)), permanent};
	g_ptr_array_add(va->regions, r);
	return r;
}

static RefVA *
ref_new(uint64_t base)
{
	RefVA *va = g_new0(RefVA, 1);
	va->regions = g_ptr_array_new();
	va->free = g_array_new(FALSE, FALSE, sizeof(uint64_t));
	ref_use(ref_region(va, base, REF_REGION, true), 0, 8 * MIB);
	ref_use(ref_region(va, base - 96 * MIB, REF_REGION, true), 0, 30 * MIB);
	uint64_t heap[2] = {base - (MIB << 20), base - 480 * MIB};
	g_array_append_vals(va->free, heap, 2);
	return va;
}

static void
ref_free(RefVA *va)
{
	for (guint i = 0; i < va->regions->len; i++) {
		RefRegion *r = g_ptr_array_index(va->regions, i);
		g_array_free(r->used, TRUE);
		g_free(r);
	}
	g_ptr_array_free(va->regions, TRUE);
	g_array_free(va->free, TRUE);
	g_free(va);
}

static uint64_t
ref_alloc(RefVA *va, uint64_t size)
{
	uint64_t need = (size + REF_GRANULE - 1) / REF_GRANULE * REF_GRANULE;
	/* the most recent region with a gap: its smallest (lowest) one */
	for (guint i = va->regions->len; i-- > 0;) {
		RefRegion *r = g_ptr_array_index(va->regions, i);
		uint64_t pos = 0, best = UINT64_MAX, best_gap = UINT64_MAX;
		for (guint k = 0; k <= r->used->len / 2; k++) {
			uint64_t next = k < r->used->len / 2
						? g_array_index(r->used, uint64_t, 2 * k)
						: r->size;
			if (next >= pos + need && next - pos < best_gap)
				best_gap = next - pos, best = pos;
			if (k < r->used->len / 2)
				pos = g_array_index(r->used, uint64_t, 2 * k) +
				      g_array_index(r->used, uint64_t, 2 * k + 1);
		}
		if (best != UINT64_MAX) {
			ref_use(r, best, need);
			return r->start + best;
		}
	}
	/* a new region from the top of the highest free range larger than it */
	uint64_t region = (need + REF_REGION - 1) / REF_REGION * REF_REGION;
	guint pick = G_MAXUINT;
	for (guint i = 0; i < va->free->len / 2; i++) {
		uint64_t s = g_array_index(va->free, uint64_t, 2 * i);
		uint64_t e = g_array_index(va->free, uint64_t, 2 * i + 1);
		if (e - s > region &&
		    (pick == G_MAXUINT || e > g_array_index(va->free, uint64_t, 2 * pick + 1)))
			pick = i;
	}
	if (pick == G_MAXUINT)
		return 0;
	g_array_index(va->free, uint64_t, 2 * pick + 1) -= region;
	RefRegion *r =
		ref_region(va, g_array_index(va->free, uint64_t, 2 * pick + 1), region, false);
	ref_use(r, 0, need);
	return r->start;
}

static void
ref_release(RefVA *va, uint64_t ptr)
{
	for (guint i = 0; i < va->regions->len; i++) {
		RefRegion *r = g_ptr_array_index(va->regions, i);
		for (guint k = 0; k < r->used->len / 2; k++) {
			if (r->start + g_array_index(r->used, uint64_t, 2 * k) != ptr)
				continue;
			g_array_remove_range(r->used, 2 * k, 2);
			if (r->used->len == 0 && !r->permanent) {
				uint64_t s = r->start, e = r->start + r->size;
				for (guint f = 0; f < va->free->len / 2;) {
					uint64_t fs = g_array_index(va->free, uint64_t, 2 * f);
					uint64_t fe = g_array_index(va->free, uint64_t, 2 * f + 1);
					if (fe == s || fs == e) {
						s = fe == s ? fs : s;
						e = fs == e ? fe : e;
						g_array_remove_range(va->free, 2 * f, 2);
					} else {
						f++;
					}
				}
				uint64_t pair[2] = {s, e};
				g_array_append_vals(va->free, pair, 2);
				g_array_free(r->used, TRUE);
				g_free(r);
				g_ptr_array_remove_index(va->regions, i);
			}
			return;
		}
	}
}

/* SEED's random cudaMalloc/cudaFree sequence of OPS calls, holding about
 * LIVE segments, gives the same addresses from the model and the rules. */
static void
test_reference(gconstpointer data)
{
	const guint *params = data; /* seed, ops, live */
	GRand *rand = g_rand_new_with_seed(params[0]);
	CcaDriverVA *va = cca_driverva_new(BASE);
	RefVA *ref = ref_new(BASE);
	GArray *live = g_array_new(FALSE, FALSE, sizeof(uint64_t));
	const uint64_t sizes[] = {2 * MIB,  2 * MIB,  4 * MIB,	20 * MIB,
				  34 * MIB, 64 * MIB, 300 * MIB};
	for (guint op = 0; op < params[1]; op++) {
		bool alloc =
			live->len == 0 || (live->len < params[2] ? g_rand_int_range(rand, 0, 3) > 0
								 : g_rand_boolean(rand));
		if (alloc) {
			uint64_t size = sizes[g_rand_int_range(rand, 0, G_N_ELEMENTS(sizes))] -
					(uint64_t)g_rand_int_range(rand, 0, 4096);
			uint64_t got = cca_driverva_alloc(va, size),
				 expected = ref_alloc(ref, size);
			g_assert_cmpuint(expected, !=, 0);
			g_assert_cmphex(got, ==, expected);
			g_array_append_val(live, got);
		} else {
			guint k = (guint)g_rand_int_range(rand, 0, (gint32)live->len);
			uint64_t ptr = g_array_index(live, uint64_t, k);
			g_array_remove_index_fast(live, k);
			cca_driverva_release(va, ptr);
			ref_release(ref, ptr);
		}
	}
	g_array_free(live, TRUE);
	ref_free(ref);
	cca_driverva_free(va);
	g_rand_free(rand);
}

int
main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_autofree char *dir = cca_test_trace_path("driver-probe/scripts");
	GPtrArray *names = cca_test_sorted_names(dir, "", ".txt", NULL);
	for (guint i = 0; i < names->len; i++) {
		g_autofree char *path =
			g_strdup_printf("/driverva/probe/%s", (char *)g_ptr_array_index(names, i));
		g_test_add_data_func(path, g_ptr_array_index(names, i), test_probe);
	}
	static const guint cases[][3] = {{1, 20000, 50}, {2, 20000, 3000}, {3, 60000, 400}};
	for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autofree char *path =
			g_strdup_printf("/driverva/reference/seed%u-%u-calls-%u-live", cases[i][0],
					cases[i][1], cases[i][2]);
		g_test_add_data_func(path, cases[i], test_reference);
	}
	int status = g_test_run();
	g_ptr_array_free(names, TRUE);
	return status;
}
