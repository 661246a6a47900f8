/* simdevice.h - the simulated device: a CcaDevice (device.h) with a
 * capacity, a memory fraction's cap and a model of where the driver puts
 * segments (simdevice.c, driverva.c; doc/architecture.md, "The layers").
 */
#ifndef CCA_SIMDEVICE_H
#define CCA_SIMDEVICE_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "device.h"
#include "driverva.h" /* CCA_H200_GRANULARITY */
#include "size.h"

G_BEGIN_DECLS

/* The seeds of CCA_ADDRESS_MOVED. */
#define CCA_ADDRESS_MOVED_SEEDS 16

/* How the simulated device chooses segment addresses. */
typedef enum {
	CCA_ADDRESS_ASCENDING = 0, /* each new segment above the previous ones */
	CCA_ADDRESS_DESCENDING,	   /* each new segment below the previous ones */
	CCA_ADDRESS_RECORDED,	   /* the k-th segment takes the k-th recorded base */
	CCA_ADDRESS_DRIVER,	   /* where the CUDA driver would put it (driverva.c) */
	/* the driver's rules while other users of the address space (lazy
	 * module loads, library workspaces) take parts of it at moments
	 * drawn from seed 1 to CCA_ADDRESS_MOVED_SEEDS (doc/driver-va.md,
	 * "Other users of the address space") */
	CCA_ADDRESS_MOVED,
	CCA_ADDRESS_MOVED_LAST = CCA_ADDRESS_MOVED + CCA_ADDRESS_MOVED_SEEDS - 1,
} CcaAddressModel;

/* The model's name ("ascending", "descending", "recorded", "driver",
 * "moved:1" .. "moved:16"). */
const char *cca_simdevice_address_model_name(CcaAddressModel model);

/* The address models a what-if is replayed under to bound what depends on
 * where the driver puts segments, CCA_ADDRESS_BOUND_MODELS of them: the
 * driver's (a what-if's own, first), ascending, descending and every
 * moved seed.  Stores the count in *N: all of them, or the first K when
 * the environment sets CCASIM_ADDRESS_MODELS=K (1 <= K; for slow builds:
 * .ci/run's sanitizer stage keeps 3, the models before the moved ones). */
const CcaAddressModel *cca_simdevice_bound_models(guint *n);

#define CCA_ADDRESS_BOUND_MODELS (3 + CCA_ADDRESS_MOVED_SEEDS)

/* The models cca_simdevice_bound_models() gives, for people, in their
 * order ("driver, ascending, descending, moved:1..16"); free with
 * g_free(). */
char *cca_simdevice_bound_models_text(void);

/* Parses a model name; FALSE if unknown. */
gboolean cca_simdevice_address_model_parse(const char *name, CcaAddressModel *model);

/* The simulated device's configuration. */
typedef struct {
	uint64_t total_memory; /* totalGlobalMem; the H200's figure by default */
	uint64_t capacity;     /* bytes cudaMalloc may hand out; 0 = unlimited */
	CcaAddressModel address_model;
	/* CCA_ADDRESS_RECORDED: segment bases in order (segment_alloc
	 * addresses of a recorded run), and the bases of expandable
	 * reservations in order (first segment_map of each reservation),
	 * as uint64_t.  Borrowed; the replay may append to them while it
	 * reads the trace.  Past their end, addresses are ascending. */
	const GArray *segment_bases;
	const GArray *reservation_bases;
} CcaSimDeviceConfig;

/* torch.cuda.get_device_properties(0).total_memory of the H200 that
 * recorded the bundled traces. */
#define CCA_H200_TOTAL_MEMORY UINT64_C(150109880320)

/* Creates a simulated device.  Free with cca_device_free(). */
CcaDevice *cca_simdevice_new(const CcaSimDeviceConfig *config);

/* Makes every allocation of the simulated device DEV fail while REFUSE is
 * true (a recorded device-side OOM replayed as it happened). */
void cca_simdevice_set_refuse(CcaDevice *dev, bool refuse);

G_END_DECLS

#endif
