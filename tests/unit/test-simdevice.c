/* test-simdevice.c - the simulated device's address models
 * (sim/device/simdevice.c; doc/driver-va.md, "Other users of the address
 * space").
 *
 * Every bound model has a name that parses back to it; each places
 * segments 2 MiB-aligned without overlapping a live one; a moved model
 * gives the same addresses on every run of its seed, the driver's rules
 * moved by other users (its addresses part from the driver model's), and
 * every seed its own.
 */
#include "config.h"

#include <glib.h>
#include <string.h>

#include "simdevice.h"

#define N_CALLS 400
#define MIB (UINT64_C(1) << 20)

/* Allocates and frees a fixed mix of segments (2 to 160 MiB, a third of
 * them freed again) on a new device of MODEL; stores each base in BASES
 * and checks alignment and overlap on the way. */
static void
run_sequence(CcaAddressModel model, uint64_t *bases)
{
	CcaSimDeviceConfig config = {.address_model = model};
	CcaDevice *dev = cca_simdevice_new(&config);
	uint64_t live[N_CALLS], size[N_CALLS];
	guint n_live = 0;
	GRand *rand = g_rand_new_with_seed(7);
	for (guint i = 0; i < N_CALLS; i++) {
		uint64_t sz = 2 * MIB * (uint64_t)g_rand_int_range(rand, 1, 81);
		uint64_t ptr = 0;
		g_assert_true(dev->ops->segment_alloc(dev, sz, 0, &ptr));
		g_assert_cmpuint(ptr % (2 * MIB), ==, 0);
		for (guint k = 0; k < n_live; k++)
			g_assert_true(ptr + sz <= live[k] || live[k] + size[k] <= ptr);
		bases[i] = ptr;
		live[n_live] = ptr;
		size[n_live++] = sz;
		if (g_rand_int_range(rand, 0, 3) == 0) {
			guint k = (guint)g_rand_int_range(rand, 0, (gint32)n_live);
			dev->ops->segment_free(dev, live[k], size[k]);
			live[k] = live[--n_live];
			size[k] = size[n_live];
		}
	}
	g_rand_free(rand);
	cca_device_free(dev);
}

static void
test_names(void)
{
	guint n;
	const CcaAddressModel *models = cca_simdevice_bound_models(&n);
	g_assert_cmpuint(n, <=, CCA_ADDRESS_BOUND_MODELS);
	if (!g_getenv("CCASIM_ADDRESS_MODELS"))
		g_assert_cmpuint(n, ==, CCA_ADDRESS_BOUND_MODELS);
	g_assert_cmpint(models[0], ==, CCA_ADDRESS_DRIVER);
	for (guint m = 0; m < n; m++) {
		CcaAddressModel back;
		const char *name = cca_simdevice_address_model_name(models[m]);
		g_assert_true(cca_simdevice_address_model_parse(name, &back));
		g_assert_cmpint(back, ==, models[m]);
	}
	CcaAddressModel unused;
	g_assert_false(cca_simdevice_address_model_parse("moved:0", &unused));
	g_assert_false(cca_simdevice_address_model_parse("moved:17", &unused));
}

static void
test_every_model_places(void)
{
	static const CcaAddressModel models[] = {
		CCA_ADDRESS_ASCENDING, CCA_ADDRESS_DESCENDING, CCA_ADDRESS_DRIVER,
		CCA_ADDRESS_MOVED,     CCA_ADDRESS_MOVED_LAST,
	};
	for (guint m = 0; m < G_N_ELEMENTS(models); m++) {
		uint64_t bases[N_CALLS];
		run_sequence(models[m], bases);
	}
}

static void
test_moved(void)
{
	uint64_t driver[N_CALLS], first[CCA_ADDRESS_MOVED_SEEDS][N_CALLS];
	run_sequence(CCA_ADDRESS_DRIVER, driver);
	for (guint s = 0; s < CCA_ADDRESS_MOVED_SEEDS; s++) {
		uint64_t again[N_CALLS];
		run_sequence(CCA_ADDRESS_MOVED + s, first[s]);
		run_sequence(CCA_ADDRESS_MOVED + s, again);
		g_assert_cmpmem(first[s], sizeof first[s], again, sizeof again);
		g_assert_true(memcmp(first[s], driver, sizeof driver) != 0);
		for (guint t = 0; t < s; t++)
			g_assert_true(memcmp(first[s], first[t], sizeof driver) != 0);
	}
}

int
main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/simdevice/names", test_names);
	g_test_add_func("/simdevice/every-model-places", test_every_model_places);
	g_test_add_func("/simdevice/moved", test_moved);
	return g_test_run();
}
