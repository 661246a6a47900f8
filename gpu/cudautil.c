/* cudautil.c - opening a GPU, the VMM driver API through cudart, clocks.
 *
 * The driver API (cuMemCreate, cuMemMap, ...) is reached through
 * cudaGetDriverEntryPointByVersion, as PyTorch's expandable segments
 * reach it, so the binary links only cudart (statically, with
 * --enable-static-gpu) and needs nothing but the driver on the GPU host.
 */
#include "config.h"

#include "cudautil.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The CUDA release whose driver ABI the entry points are asked for. */
#define CCA_VMM_ABI 12000

gboolean
cca_cudautil_open(int ordinal, GError **error)
{
	int count = 0;
	cudaError_t err = cudaGetDeviceCount(&count);
	if (err == cudaSuccess && count == 0)
		err = cudaErrorNoDevice;
	if (err == cudaSuccess && (ordinal < 0 || ordinal >= count))
		err = cudaErrorInvalidDevice;
	if (err == cudaSuccess)
		err = cudaSetDevice(ordinal);
	if (err == cudaSuccess)
		err = cudaFree(NULL); /* creates the primary context */
	if (err != cudaSuccess) {
		cudaGetLastError();
		g_set_error(error, CCA_CUDA_ERROR, CCA_CUDA_ERROR_NO_DEVICE, "no CUDA device: %s",
			    cudaGetErrorString(err));
		return FALSE;
	}
	return TRUE;
}

static gboolean
vmm_entry(const char *symbol, void **fn, GError **error)
{
	enum cudaDriverEntryPointQueryResult status = cudaDriverEntryPointSymbolNotFound;
	cudaError_t err = cudaGetDriverEntryPointByVersion(symbol, fn, CCA_VMM_ABI,
							   cudaEnableDefault, &status);
	if (err != cudaSuccess || status != cudaDriverEntryPointSuccess || !*fn) {
		cudaGetLastError();
		g_set_error(error, CCA_CUDA_ERROR, CCA_CUDA_ERROR_FAILED,
			    "the CUDA driver does not provide %s (%s)", symbol,
			    err != cudaSuccess ? cudaGetErrorString(err) : "symbol not found");
		return FALSE;
	}
	return TRUE;
}

gboolean
cca_cudautil_vmm_load(CcaVmm *vmm, int ordinal, GError **error)
{
	memset(vmm, 0, sizeof *vmm);
	struct {
		const char *name;
		void **fn;
	} entries[] = {
		{"cuMemAddressReserve", (void **)&vmm->address_reserve},
		{"cuMemAddressFree", (void **)&vmm->address_free},
		{"cuMemCreate", (void **)&vmm->create},
		{"cuMemRelease", (void **)&vmm->release},
		{"cuMemMap", (void **)&vmm->map},
		{"cuMemUnmap", (void **)&vmm->unmap},
		{"cuMemSetAccess", (void **)&vmm->set_access},
		{"cuMemGetAllocationGranularity", (void **)&vmm->granularity},
		{"cuGetErrorString", (void **)&vmm->error_string},
	};
	for (size_t i = 0; i < G_N_ELEMENTS(entries); i++)
		if (!vmm_entry(entries[i].name, entries[i].fn, error))
			return FALSE;
	vmm->prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
	vmm->prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	vmm->prop.location.id = ordinal;
	vmm->access.location = vmm->prop.location;
	vmm->access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
	size_t gran = 0;
	CUresult res = vmm->granularity(&gran, &vmm->prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM);
	if (res != CUDA_SUCCESS || gran == 0) {
		g_set_error(error, CCA_CUDA_ERROR, CCA_CUDA_ERROR_FAILED,
			    "cuMemGetAllocationGranularity: %s (no virtual memory management?)",
			    cca_cudautil_vmm_strerror(vmm, res));
		return FALSE;
	}
	return TRUE;
}

uint64_t
cca_cudautil_vmm_granularity(const CcaVmm *vmm)
{
	size_t gran = 0;
	if (!vmm->granularity ||
	    vmm->granularity(&gran, &vmm->prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM) != CUDA_SUCCESS)
		return 0;
	return gran;
}

void
cca_cudautil_set_error(GError **error, cudaError_t err, const char *what)
{
	g_set_error(error, CCA_CUDA_ERROR, CCA_CUDA_ERROR_FAILED, "%s: %s", what,
		    cudaGetErrorString(err));
}

const char *
cca_cudautil_vmm_strerror(const CcaVmm *vmm, CUresult res)
{
	static char buf[32];
	const char *s = NULL;
	if (vmm->error_string && vmm->error_string(res, &s) == CUDA_SUCCESS && s)
		return s;
	g_snprintf(buf, sizeof buf, "CUresult %d", (int)res);
	return buf;
}

int64_t
cca_cudautil_clock_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

bool
cca_cudautil_used(uint64_t *used, uint64_t *total)
{
	size_t free_b = 0, total_b = 0;
	if (cudaMemGetInfo(&free_b, &total_b) != cudaSuccess) {
		cudaGetLastError();
		return false;
	}
	*used = total_b - free_b;
	if (total)
		*total = total_b;
	return true;
}

static int
compare_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

double
cca_cudautil_median(double *values, size_t n)
{
	if (n == 0)
		return 0.0;
	qsort(values, n, sizeof *values, compare_double);
	return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2.0;
}
