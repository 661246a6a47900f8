/* calibrate.c - the latency of the device calls, by size.
 *
 * What a cudaMalloc, a cudaFree, and the VMM mapping and unmapping of
 * expandable segments cost on this GPU, and a synchronisation of an idle
 * device, as medians over repetitions (the first call of each size is not
 * timed: it pays for lazily created driver state).  The map figure covers
 * cuMemCreate+cuMemMap of every page and one cuMemSetAccess, the unmap
 * figure cuMemUnmap+cuMemRelease of every page, as the allocator does them.
 */
#include "config.h"

#include "calibrate.h"

#include <stdio.h>
#include <string.h>

#include "cudautil.h"
#include "json.h"
#include "size.h"


/* Times one cudaMalloc/cudaFree pair of SIZE bytes; FALSE on an error. */
static gboolean
time_malloc(uint64_t size, double *malloc_us, double *free_us, uint64_t *delta, GError **error)
{
	void *p = NULL;
	uint64_t u0 = 0, u1 = 0;
	cca_cudautil_used(&u0, NULL);
	int64_t t0 = cca_cudautil_clock_ns();
	cudaError_t err = cudaMalloc(&p, size);
	int64_t t1 = cca_cudautil_clock_ns();
	if (err != cudaSuccess) {
		cudaGetLastError();
		cca_cudautil_set_error(error, err, "cudaMalloc");
		return FALSE;
	}
	cca_cudautil_used(&u1, NULL);
	int64_t t2 = cca_cudautil_clock_ns();
	err = cudaFree(p);
	int64_t t3 = cca_cudautil_clock_ns();
	if (err != cudaSuccess) {
		cudaGetLastError();
		cca_cudautil_set_error(error, err, "cudaFree");
		return FALSE;
	}
	*malloc_us = (double)(t1 - t0) / 1e3;
	*free_us = (double)(t3 - t2) / 1e3;
	*delta = u1 - u0;
	return TRUE;
}

/* Times mapping then unmapping N pages of PAGE bytes at VA. */
static gboolean
time_map(const CcaVmm *vmm, CUdeviceptr va, uint64_t page, uint64_t n, double *map_us,
	 double *unmap_us, GError **error)
{
	CUmemGenericAllocationHandle *h = g_new0(CUmemGenericAllocationHandle, n);
	CUresult res = CUDA_SUCCESS;
	uint64_t made = 0, mapped = 0;
	int64_t t0 = cca_cudautil_clock_ns();
	while (res == CUDA_SUCCESS && made < n)
		if ((res = vmm->create(&h[made], page, &vmm->prop, 0)) == CUDA_SUCCESS)
			made++;
	while (res == CUDA_SUCCESS && mapped < n)
		if ((res = vmm->map(va + mapped * page, page, 0, h[mapped], 0)) == CUDA_SUCCESS)
			mapped++;
	if (res == CUDA_SUCCESS)
		res = vmm->set_access(va, n * page, &vmm->access, 1);
	int64_t t1 = cca_cudautil_clock_ns();
	for (uint64_t i = 0; i < mapped; i++)
		vmm->unmap(va + i * page, page);
	for (uint64_t i = 0; i < made; i++)
		vmm->release(h[i]);
	int64_t t2 = cca_cudautil_clock_ns();
	g_free(h);
	if (res != CUDA_SUCCESS) {
		g_set_error(error, CCA_CUDA_ERROR, CCA_CUDA_ERROR_FAILED, "mapping pages: %s",
			    cca_cudautil_vmm_strerror(vmm, res));
		return FALSE;
	}
	*map_us = (double)(t1 - t0) / 1e3;
	*unmap_us = (double)(t2 - t1) / 1e3;
	return TRUE;
}

/* Measures one size into ROW. */
static gboolean
calibrate_size(const CcaVmm *vmm, uint64_t mb, unsigned reps, CcaCalibrationRow *row,
	       GError **error)
{
	uint64_t size = mb * CCA_MIB;
	double *m = g_new(double, reps), *f = g_new(double, reps);
	double *mp = g_new(double, reps), *up = g_new(double, reps);
	double ignored_a, ignored_b;
	gboolean ok = time_malloc(size, &ignored_a, &ignored_b, &row->used_delta, error);
	for (unsigned i = 0; ok && i < reps; i++)
		ok = time_malloc(size, &m[i], &f[i], &row->used_delta, error);
	row->mb = mb;
	row->malloc_us = ok ? cca_cudautil_median(m, reps) : 0.0;
	row->free_us = ok ? cca_cudautil_median(f, reps) : 0.0;
	row->map_us = row->unmap_us = -1.0;
	row->page_mb = mb >= 20 ? 20 : 2;
	uint64_t page = row->page_mb * CCA_MIB, n = (size + page - 1) / page;
	CUdeviceptr va = 0;
	if (ok && vmm && vmm->address_reserve(&va, n * page, 0, 0, 0) == CUDA_SUCCESS) {
		ok = time_map(vmm, va, page, n, &ignored_a, &ignored_b, error);
		for (unsigned i = 0; ok && i < reps; i++)
			ok = time_map(vmm, va, page, n, &mp[i], &up[i], error);
		vmm->address_free(va, n * page);
		if (ok) {
			row->map_us = cca_cudautil_median(mp, reps);
			row->unmap_us = cca_cudautil_median(up, reps);
		}
	}
	g_free(m);
	g_free(f);
	g_free(mp);
	g_free(up);
	return ok;
}

gboolean
cca_calibrate(int ordinal, const uint64_t *sizes_mb, size_t n_sizes, unsigned reps,
	      CcaCalibration *cal, GError **error)
{
	memset(cal, 0, sizeof *cal);
	cal->rows = g_array_new(FALSE, FALSE, sizeof(CcaCalibrationRow));
	cal->reps = reps ? reps : 1;
	if (!cca_cudautil_open(ordinal, error))
		return FALSE;
	struct cudaDeviceProp prop;
	cudaError_t err = cudaGetDeviceProperties(&prop, ordinal);
	if (err != cudaSuccess) {
		cca_cudautil_set_error(error, err, "cudaGetDeviceProperties");
		return FALSE;
	}
	cal->device = g_strdup(prop.name);
	cal->total_memory = prop.totalGlobalMem;
	int runtime = 0;
	cudaRuntimeGetVersion(&runtime);
	cudaDriverGetVersion(&cal->driver_version);
	cal->lib = g_strdup_printf("cudart_static %d.%d", runtime / 1000, runtime % 1000 / 10);
	CcaVmm vmm;
	GError *vmm_error = NULL;
	gboolean have_vmm = cca_cudautil_vmm_load(&vmm, ordinal, &vmm_error);
	if (!have_vmm) {
		fprintf(stderr, "ccasim gpu calibrate: no map/unmap figures: %s\n",
			vmm_error->message);
		g_error_free(vmm_error);
	} else {
		cal->granularity = cca_cudautil_vmm_granularity(&vmm);
	}
	double *sync = g_new(double, cal->reps);
	cudaDeviceSynchronize();
	for (unsigned i = 0; i < cal->reps; i++) {
		int64_t t0 = cca_cudautil_clock_ns();
		cudaDeviceSynchronize();
		sync[i] = (double)(cca_cudautil_clock_ns() - t0) / 1e3;
	}
	cal->sync_us = cca_cudautil_median(sync, cal->reps);
	g_free(sync);
	for (size_t i = 0; i < n_sizes; i++) {
		uint64_t free_mem = 0, used = 0, total = 0;
		if (cca_cudautil_used(&used, &total))
			free_mem = total - used;
		/* the map test holds as much again as cudaMalloc at most */
		if (sizes_mb[i] * CCA_MIB + 64 * CCA_MIB > free_mem) {
			fprintf(stderr,
				"ccasim gpu calibrate: skipping %" G_GUINT64_FORMAT
				" MiB: only %" G_GUINT64_FORMAT " MiB free\n",
				sizes_mb[i], free_mem / CCA_MIB);
			continue;
		}
		CcaCalibrationRow row;
		if (!calibrate_size(have_vmm ? &vmm : NULL, sizes_mb[i], cal->reps, &row, error))
			return FALSE;
		g_array_append_val(cal->rows, row);
	}
	return TRUE;
}

void
cca_calibrate_to_json(const CcaCalibration *cal, GString *out)
{
	json_t *o = json_object(), *rows = json_array();
	json_object_set_new(o, "lib", cca_json_string(cal->lib));
	json_object_set_new(o, "device", cca_json_string(cal->device));
	json_object_set_new(o, "total_memory", cca_json_uint(cal->total_memory));
	json_object_set_new(o, "granularity", cca_json_uint(cal->granularity));
	json_object_set_new(o, "driver_version", json_integer(cal->driver_version));
	json_object_set_new(o, "reps", json_integer(cal->reps));
	json_object_set_new(o, "sync_us", cca_json_fixed(cal->sync_us, 3));
	for (guint i = 0; i < cal->rows->len; i++) {
		const CcaCalibrationRow *r = &g_array_index(cal->rows, CcaCalibrationRow, i);
		json_t *row = json_object();
		json_object_set_new(row, "mb", cca_json_uint(r->mb));
		json_object_set_new(row, "malloc_us_median", cca_json_fixed(r->malloc_us, 3));
		json_object_set_new(row, "free_us_median", cca_json_fixed(r->free_us, 3));
		if (r->map_us >= 0.0) {
			json_object_set_new(row, "map_us_median", cca_json_fixed(r->map_us, 3));
			json_object_set_new(row, "unmap_us_median", cca_json_fixed(r->unmap_us, 3));
			json_object_set_new(row, "map_page_mb", cca_json_uint(r->page_mb));
		}
		json_object_set_new(row, "used_delta", cca_json_uint(r->used_delta));
		json_array_append_new(rows, row);
	}
	json_object_set_new(o, "rows", rows);
	cca_json_append_indented(out, o, 1);
	g_string_append_c(out, '\n');
}

void
cca_calibrate_clear(CcaCalibration *cal)
{
	g_free(cal->device);
	g_free(cal->lib);
	if (cal->rows)
		g_array_free(cal->rows, TRUE);
	memset(cal, 0, sizeof *cal);
}
