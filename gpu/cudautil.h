/* cudautil.h - what the GPU modules share: opening a device, the
 * virtual-memory driver API reached through cudart, CUDA errors as GErrors
 * (domain CCA_CUDA_ERROR of cudaerror.h), a monotonic clock and medians.
 * Private to gpu/: it includes the CUDA headers, which the rest of ccasim
 * never sees.
 */
#ifndef CCA_CUDAUTIL_H
#define CCA_CUDAUTIL_H

#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime.h>
#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "cudaerror.h"

G_BEGIN_DECLS

/* The VMM entry points, taken from the driver through
 * cudaGetDriverEntryPointByVersion (ABI of CUDA 12.0), so that no link
 * against libcuda is needed. */
typedef struct {
	PFN_cuMemAddressReserve_v10020 address_reserve;
	PFN_cuMemAddressFree_v10020 address_free;
	PFN_cuMemCreate_v10020 create;
	PFN_cuMemRelease_v10020 release;
	PFN_cuMemMap_v10020 map;
	PFN_cuMemUnmap_v10020 unmap;
	PFN_cuMemSetAccess_v10020 set_access;
	PFN_cuMemGetAllocationGranularity_v10020 granularity;
	PFN_cuGetErrorString_v6000 error_string;
	CUmemAllocationProp prop; /* pinned device memory on the current device */
	CUmemAccessDesc access;	  /* read-write from the current device */
} CcaVmm;

/* Selects CUDA device ORDINAL and creates its primary context.  Returns
 * FALSE with CCA_CUDA_ERROR_NO_DEVICE and the message "no CUDA device:
 * <cudaGetErrorString>" when there is no usable device. */
gboolean cca_cudautil_open(int ordinal, GError **error);

/* Loads the VMM entry points for device ORDINAL (the current one).
 * Returns FALSE with ERROR when the driver lacks them or the device does
 * not support virtual memory management. */
gboolean cca_cudautil_vmm_load(CcaVmm *vmm, int ordinal, GError **error);

/* The driver's minimum allocation granularity of VMM (bytes); 0 when it
 * cannot be read. */
uint64_t cca_cudautil_vmm_granularity(const CcaVmm *vmm);

/* Sets ERROR to "WHAT: <cudaGetErrorString(ERR)>" (CCA_CUDA_ERROR_FAILED). */
void cca_cudautil_set_error(GError **error, cudaError_t err, const char *what);

/* The driver's message for RES, or "CUresult N" when it has none. */
const char *cca_cudautil_vmm_strerror(const CcaVmm *vmm, CUresult res);

/* Nanoseconds of CLOCK_MONOTONIC. */
int64_t cca_cudautil_clock_ns(void);

/* Bytes of device memory in use (total - free of cudaMemGetInfo) and the
 * total; returns false when cudaMemGetInfo fails. */
bool cca_cudautil_used(uint64_t *used, uint64_t *total);

/* The median of N values (sorts VALUES in place); 0 when N is 0. */
double cca_cudautil_median(double *values, size_t n);

G_END_DECLS

#endif
