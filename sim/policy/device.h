/* device.h - the device interface under the allocator policy.
 *
 * The policy (allocator.c) never touches memory itself: it asks a device
 * for segments (cudaMalloc/cudaFree), for virtual reservations and pages
 * (the VMM calls behind expandable segments) and for its free memory.  The
 * simulated device (simdevice.c) and the CUDA device (gpu/) implement the
 * same operations, so the policy is written once.
 */
#ifndef CCA_DEVICE_H
#define CCA_DEVICE_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "pytorch.h"

G_BEGIN_DECLS

typedef struct CcaDevice CcaDevice;

/* Operations of a device.  Sizes and addresses are device bytes. */
typedef struct {
	/* cudaMalloc: reserves SIZE bytes for a segment requested on STREAM;
	 * stores its base in *PTR and returns true, or returns false when the
	 * device is out of memory. */
	bool (*segment_alloc)(CcaDevice *dev, uint64_t size, uint64_t stream, uint64_t *ptr);
	/* cudaFree of a segment returned by segment_alloc. */
	void (*segment_free)(CcaDevice *dev, uint64_t ptr, uint64_t size);
	/* Takes over a segment of SIZE bytes at PTR that was allocated before
	 * the replay began (a trace that starts mid-run). */
	void (*adopt)(CcaDevice *dev, uint64_t ptr, uint64_t size);
	/* cuMemAddressReserve: reserves SIZE bytes of address space (no
	 * memory) for an expandable segment of STREAM; returns its base. */
	uint64_t (*reserve)(CcaDevice *dev, uint64_t size, uint64_t stream);
	/* cuMemAddressFree of a reservation. */
	void (*unreserve)(CcaDevice *dev, uint64_t ptr, uint64_t size);
	/* cuMemCreate+cuMemMap of SIZE bytes at PTR (whole pages); false when
	 * the device is out of memory (nothing is mapped then). */
	bool (*map)(CcaDevice *dev, uint64_t ptr, uint64_t size);
	/* cuMemUnmap+cuMemRelease of SIZE bytes at PTR. */
	void (*unmap)(CcaDevice *dev, uint64_t ptr, uint64_t size);
	/* Would an allocation or map of SIZE bytes fail now?  (Lets the
	 * engine tell a failure cascade from an empty_cache in a trace.) */
	bool (*would_refuse)(const CcaDevice *dev, uint64_t size);
	/* cudaMemGetInfo's free bytes. */
	uint64_t (*free_memory)(CcaDevice *dev);
	/* Releases the device object itself. */
	void (*destroy)(CcaDevice *dev);
	/* Optional (NULL: the device cannot be told to refuse): while REFUSE
	 * is true every segment_alloc and map fails, as the device did at a
	 * recorded device-side OOM. */
	void (*set_refuse)(CcaDevice *dev, bool refuse);
} CcaDeviceOps;

/* A device: the ops plus its total memory (totalGlobalMem). */
struct CcaDevice {
	const CcaDeviceOps *ops;
	uint64_t total_memory;
};

/* How the simulated device chooses segment addresses. */
typedef enum {
	CCA_ADDRESS_ASCENDING = 0, /* each new segment above the previous ones */
	CCA_ADDRESS_DESCENDING,	   /* each new segment below the previous ones */
	CCA_ADDRESS_RECORDED,	   /* the k-th segment takes the k-th recorded base */
	CCA_ADDRESS_DRIVER,	   /* where the CUDA driver would put it (driverva.c) */
} CcaAddressModel;

/* The model's name ("ascending", "descending", "recorded", "driver"). */
const char *cca_simdevice_address_model_name(CcaAddressModel model);

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

/* cuMemGetAllocationGranularity (minimum) on the H200: 2 MiB.  Segments
 * and mappings are made of whole granules. */
#define CCA_H200_GRANULARITY (2 * CCA_MIB)

/* Creates a simulated device.  Free with cca_device_free(). */
CcaDevice *cca_simdevice_new(const CcaSimDeviceConfig *config);

/* Makes every allocation of the simulated device DEV fail while REFUSE is
 * true (a recorded device-side OOM replayed as it happened). */
void cca_simdevice_set_refuse(CcaDevice *dev, bool refuse);

/* Destroys DEV (NULL allowed), whichever device it is. */
static inline void
cca_device_free(CcaDevice *dev)
{
	if (dev)
		dev->ops->destroy(dev);
}

G_END_DECLS

#endif
