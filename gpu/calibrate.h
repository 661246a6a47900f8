/* calibrate.h - measuring what device calls cost, for the cost model. */
#ifndef CCA_CALIBRATE_H
#define CCA_CALIBRATE_H

#include <glib.h>
#include <stdint.h>

G_BEGIN_DECLS

/* One size's medians, in microseconds. */
typedef struct {
	uint64_t mb;	  /* MiB per call */
	double malloc_us; /* cudaMalloc */
	double free_us;	  /* cudaFree */
	double map_us;	 /* cuMemCreate+cuMemMap per page, then cuMemSetAccess; < 0: not measured */
	double unmap_us; /* cuMemUnmap+cuMemRelease per page; < 0: not measured */
	uint64_t page_mb;    /* VMM page used for map/unmap: 20 MiB (2 MiB below 20 MiB) */
	uint64_t used_delta; /* driver's used-memory delta of the last cudaMalloc */
} CcaCalibrationRow;

/* What a calibration measured. */
typedef struct {
	char *device;	       /* GPU name */
	char *lib;	       /* "cudart_static 13.0" or the like */
	uint64_t total_memory; /* totalGlobalMem */
	uint64_t granularity;  /* VMM minimum granularity */
	int driver_version;
	unsigned reps;
	double sync_us; /* median cudaDeviceSynchronize with nothing in flight */
	GArray *rows;	/* CcaCalibrationRow, by size */
} CcaCalibration;

/* Times REPS (>= 1) cudaMalloc/cudaFree pairs and REPS map/unmap pairs for
 * each of the N_SIZES sizes SIZES_MB (MiB) on CUDA device ORDINAL, after one
 * untimed pair per size, and REPS cudaDeviceSynchronize calls, and keeps
 * the medians.  Sizes that do not fit in
 * the free memory are skipped with a warning on stderr.  Returns FALSE
 * with ERROR ("no CUDA device: ..." when there is none, or the failing
 * call).  Clear CAL with cca_calibrate_clear(). */
gboolean cca_calibrate(int ordinal, const uint64_t *sizes_mb, size_t n_sizes, unsigned reps,
		       CcaCalibration *cal, GError **error);

/* Appends CAL as the cost model's calibration JSON:
 * {"lib", "device", "total_memory", "granularity", "driver_version", "reps",
 *  "sync_us", "rows": [{"mb", "malloc_us_median", "free_us_median", "map_us_median",
 *  "unmap_us_median", "map_page_mb", "used_delta"}, ...]}, the layout of
 * traces/pytorch-2.11/h200-cudamalloc-timing.json plus the optional keys. */
void cca_calibrate_to_json(const CcaCalibration *cal, GString *out);

void cca_calibrate_clear(CcaCalibration *cal);

G_END_DECLS

#endif
