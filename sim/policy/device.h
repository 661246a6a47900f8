/* device.h - the device interface under the allocator policy.
 *
 * The policy (allocator.c) never touches memory itself: it asks a device
 * for segments (cudaMalloc/cudaFree), for virtual reservations and pages
 * (the VMM calls behind expandable segments) and for its free memory.  The
 * simulated device (simdevice.c) and the CUDA device (gpu/) implement the
 * same operations, so the policy is written once.  The simulated
 * device's own interface is sim/device/simdevice.h.
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

/* Destroys DEV (NULL allowed), whichever device it is. */
static inline void
cca_device_free(CcaDevice *dev)
{
	if (dev)
		dev->ops->destroy(dev);
}

G_END_DECLS

#endif
