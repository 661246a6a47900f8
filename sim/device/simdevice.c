/* simdevice.c - the simulated device: address assignment and capacity.
 *
 * Addresses: a recorded run's segment bases are handed out in order (so
 * that ties between equal-size free blocks break as they did on the GPU:
 * doc/driver-va.md); past them, or without them, segments are placed by
 * the driver's rules (driverva.c), by those rules while other users of the
 * address space take parts of it (the moved models), or ascending or
 * descending in 2 MiB-aligned address space.  Capacity: when set, a
 * cudaMalloc or page map that would take the used bytes past it fails.
 */
#include "config.h"

#include "device.h"
#include "simdevice.h"

#include <string.h>

#include "driverva.h"

#define SIM_BASE UINT64_C(0x7f0000000000) /* first synthetic segment address */
#define SIM_ALIGN CCA_H200_GRANULARITY	  /* synthetic segment alignment */
#define SIM_VA_BASE UINT64_C(0x302000000) /* first reservation (H200, driver 580) */
#define SIM_VA_ALIGN UINT64_C(33554432)	  /* reservations start 32 MiB-aligned */
/* CCA_ADDRESS_MOVED: before a new segment, one time in MOVED_ODDS, another
 * user of the address space takes 2 MiB << k of it (k drawn from 0 to
 * MOVED_MAX_SHIFT: 2 MiB to 512 MiB) and keeps it. */
#define MOVED_ODDS 4
#define MOVED_MAX_SHIFT 8

typedef struct {
	CcaDevice base;
	CcaSimDeviceConfig config;
	uint64_t used;	  /* bytes currently allocated or mapped */
	uint64_t next_up; /* next synthetic ascending address */
	uint64_t next_down;
	uint64_t next_va;
	size_t segments_handed;
	size_t reservations_handed;
	bool refuse;
	CcaDriverVA *driver; /* CCA_ADDRESS_DRIVER */
	uint64_t rng;	     /* CCA_ADDRESS_MOVED: splitmix64 state (0: not moved) */
	GArray *released_va; /* uint64_t base, uint64_t size pairs given back */
} SimDevice;

static bool
sim_has_room(const SimDevice *sim, uint64_t size)
{
	if (sim->refuse)
		return false;
	if (sim->config.capacity == 0)
		return true;
	return size <= sim->config.capacity && sim->used <= sim->config.capacity - size;
}

static uint64_t
sim_align_up(uint64_t v)
{
	return (v + SIM_ALIGN - 1) & ~(SIM_ALIGN - 1);
}

/* splitmix64: a fixed sequence per seed on every platform. */
static uint64_t
moved_next(SimDevice *sim)
{
	uint64_t z = (sim->rng += UINT64_C(0x9e3779b97f4a7c15));
	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

static uint64_t
sim_synthetic_base(SimDevice *sim, uint64_t size)
{
	if (sim->driver && sim->rng) {
		/* another user's allocation, never given back (doc/driver-va.md) */
		uint64_t r = moved_next(sim);
		if (r % MOVED_ODDS == 0)
			(void)cca_driverva_alloc(sim->driver,
						 SIM_ALIGN << ((r >> 32) % (MOVED_MAX_SHIFT + 1)));
	}
	if (sim->driver)
		return cca_driverva_alloc(sim->driver, size);
	if (sim->config.address_model == CCA_ADDRESS_DESCENDING) {
		sim->next_down -= sim_align_up(size);
		return sim->next_down;
	}
	uint64_t ptr = sim->next_up;
	sim->next_up += sim_align_up(size);
	return ptr;
}

static bool
sim_segment_alloc(CcaDevice *dev, uint64_t size, uint64_t stream, uint64_t *ptr)
{
	SimDevice *sim = (SimDevice *)dev;
	if (!sim_has_room(sim, size))
		return false;
	sim->used += size;
	const GArray *bases = sim->config.segment_bases;
	if (sim->config.address_model == CCA_ADDRESS_RECORDED && bases &&
	    sim->segments_handed < bases->len) {
		uint64_t recorded = g_array_index(bases, uint64_t, sim->segments_handed++);
		if (recorded + size > sim->next_up)
			sim->next_up = sim_align_up(recorded + size);
		*ptr = recorded;
		return true;
	}
	*ptr = sim_synthetic_base(sim, size);
	return true;
}

static void
sim_segment_free(CcaDevice *dev, uint64_t ptr, uint64_t size)
{
	SimDevice *sim = (SimDevice *)dev;
	sim->used -= size;
	if (sim->driver)
		cca_driverva_release(sim->driver, ptr);
}

static void
sim_adopt(CcaDevice *dev, uint64_t ptr, uint64_t size)
{
	SimDevice *sim = (SimDevice *)dev;
	sim->used += size;
	if (ptr + size > sim->next_up)
		sim->next_up = sim_align_up(ptr + size);
}

/* cuMemAddressReserve: the driver hands out reservations one after the
 * other, each 32 MiB-aligned right after the previous one (0x302000000,
 * 0x2a54000000, 0x51a8000000 in the recorded traces), and gives an address
 * back to the next reservation of the same size once it is freed. */
static uint64_t
sim_reserve(CcaDevice *dev, uint64_t size, uint64_t stream)
{
	SimDevice *sim = (SimDevice *)dev;
	uint64_t base;
	const GArray *bases = sim->config.reservation_bases;
	if (sim->config.address_model == CCA_ADDRESS_RECORDED && bases &&
	    sim->reservations_handed < bases->len) {
		base = g_array_index(bases, uint64_t, sim->reservations_handed++);
	} else {
		base = 0;
		for (guint i = 0; i + 1 < sim->released_va->len; i += 2)
			if (g_array_index(sim->released_va, uint64_t, i + 1) == size) {
				base = g_array_index(sim->released_va, uint64_t, i);
				g_array_remove_range(sim->released_va, i, 2);
				return base;
			}
		base = sim->next_va;
	}
	uint64_t end = (base + size + SIM_VA_ALIGN - 1) & ~(SIM_VA_ALIGN - 1);
	if (end > sim->next_va)
		sim->next_va = end;
	return base;
}

static void
sim_unreserve(CcaDevice *dev, uint64_t ptr, uint64_t size)
{
	SimDevice *sim = (SimDevice *)dev;
	g_array_append_val(sim->released_va, ptr);
	g_array_append_val(sim->released_va, size);
}

static bool
sim_map(CcaDevice *dev, uint64_t ptr, uint64_t size)
{
	SimDevice *sim = (SimDevice *)dev;
	if (!sim_has_room(sim, size))
		return false;
	sim->used += size;
	return true;
}

static void
sim_unmap(CcaDevice *dev, uint64_t ptr, uint64_t size)
{
	SimDevice *sim = (SimDevice *)dev;
	sim->used -= size;
}

static bool
sim_would_refuse(const CcaDevice *dev, uint64_t size)
{
	return !sim_has_room((const SimDevice *)dev, size);
}

static uint64_t
sim_free_memory(CcaDevice *dev)
{
	SimDevice *sim = (SimDevice *)dev;
	uint64_t total = sim->config.capacity ? sim->config.capacity : sim->base.total_memory;
	return sim->used < total ? total - sim->used : 0;
}

static void
sim_destroy(CcaDevice *dev)
{
	cca_driverva_free(((SimDevice *)dev)->driver);
	g_array_free(((SimDevice *)dev)->released_va, TRUE);
	g_free(dev);
}

static const CcaDeviceOps sim_ops = {
	.segment_alloc = sim_segment_alloc,
	.segment_free = sim_segment_free,
	.adopt = sim_adopt,
	.reserve = sim_reserve,
	.unreserve = sim_unreserve,
	.map = sim_map,
	.unmap = sim_unmap,
	.would_refuse = sim_would_refuse,
	.free_memory = sim_free_memory,
	.destroy = sim_destroy,
	.set_refuse = cca_simdevice_set_refuse,
};

CcaDevice *
cca_simdevice_new(const CcaSimDeviceConfig *config)
{
	SimDevice *sim = g_new0(SimDevice, 1);
	sim->base.ops = &sim_ops;
	sim->config = *config;
	if (sim->config.total_memory == 0)
		sim->config.total_memory = CCA_H200_TOTAL_MEMORY;
	sim->base.total_memory = sim->config.total_memory;
	sim->next_up = SIM_BASE;
	sim->next_down = SIM_BASE;
	sim->next_va = SIM_VA_BASE;
	sim->released_va = g_array_new(FALSE, FALSE, sizeof(uint64_t));
	if (config->address_model == CCA_ADDRESS_DRIVER)
		sim->driver = cca_driverva_new(SIM_BASE);
	if (config->address_model >= CCA_ADDRESS_MOVED &&
	    config->address_model <= CCA_ADDRESS_MOVED_LAST) {
		sim->driver = cca_driverva_new(SIM_BASE);
		sim->rng = (uint64_t)(config->address_model - CCA_ADDRESS_MOVED + 1);
	}
	return &sim->base;
}

void
cca_simdevice_set_refuse(CcaDevice *dev, bool refuse)
{
	((SimDevice *)dev)->refuse = refuse;
}

static const char *const model_names[] = {
	"ascending", "descending", "recorded", "driver",   "moved:1",  "moved:2",  "moved:3",
	"moved:4",   "moved:5",	   "moved:6",  "moved:7",  "moved:8",  "moved:9",  "moved:10",
	"moved:11",  "moved:12",   "moved:13", "moved:14", "moved:15", "moved:16",
};
G_STATIC_ASSERT(G_N_ELEMENTS(model_names) == CCA_ADDRESS_MOVED_LAST + 1);

static const CcaAddressModel bound_models[] = {
	CCA_ADDRESS_DRIVER,	CCA_ADDRESS_ASCENDING,	CCA_ADDRESS_DESCENDING,
	CCA_ADDRESS_MOVED,	CCA_ADDRESS_MOVED + 1,	CCA_ADDRESS_MOVED + 2,
	CCA_ADDRESS_MOVED + 3,	CCA_ADDRESS_MOVED + 4,	CCA_ADDRESS_MOVED + 5,
	CCA_ADDRESS_MOVED + 6,	CCA_ADDRESS_MOVED + 7,	CCA_ADDRESS_MOVED + 8,
	CCA_ADDRESS_MOVED + 9,	CCA_ADDRESS_MOVED + 10, CCA_ADDRESS_MOVED + 11,
	CCA_ADDRESS_MOVED + 12, CCA_ADDRESS_MOVED + 13, CCA_ADDRESS_MOVED + 14,
	CCA_ADDRESS_MOVED + 15,
};
G_STATIC_ASSERT(G_N_ELEMENTS(bound_models) == CCA_ADDRESS_BOUND_MODELS);
G_STATIC_ASSERT(CCA_ADDRESS_MOVED + 15 == CCA_ADDRESS_MOVED_LAST);

const CcaAddressModel *
cca_simdevice_bound_models(guint *n)
{
	*n = G_N_ELEMENTS(bound_models);
	/* slow builds (sanitizers and the invariant walker) may keep fewer */
	const char *keep = g_getenv("CCASIM_ADDRESS_MODELS");
	if (keep) {
		guint64 k = g_ascii_strtoull(keep, NULL, 10);
		if (k >= 1 && k < *n)
			*n = (guint)k;
	}
	return bound_models;
}

char *
cca_simdevice_bound_models_text(void)
{
	guint n;
	const CcaAddressModel *models = cca_simdevice_bound_models(&n);
	GString *s = g_string_new(NULL);
	for (guint m = 0; m < n; m++) {
		/* a run of moved seeds as one range: "moved:1..16" */
		guint last = m;
		while (models[m] >= CCA_ADDRESS_MOVED && last + 1 < n &&
		       models[last + 1] == models[last] + 1)
			last++;
		g_string_append_printf(s, "%s%s", m ? ", " : "",
				       cca_simdevice_address_model_name(models[m]));
		if (last > m)
			g_string_append_printf(s, "..%u",
					       (guint)(models[last] - CCA_ADDRESS_MOVED + 1));
		m = last;
	}
	return g_string_free(s, FALSE);
}

const char *
cca_simdevice_address_model_name(CcaAddressModel model)
{
	return (unsigned)model < G_N_ELEMENTS(model_names) ? model_names[model] : "?";
}

gboolean
cca_simdevice_address_model_parse(const char *name, CcaAddressModel *model)
{
	for (guint i = 0; i < G_N_ELEMENTS(model_names); i++)
		if (strcmp(name, model_names[i]) == 0) {
			*model = (CcaAddressModel)i;
			return TRUE;
		}
	return FALSE;
}
