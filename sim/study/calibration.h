/* calibration.h - how long cudaMalloc and cudaFree take, by size, and the
 * allocator-time cost model built on it (doc/cost-model.md).
 *
 * A calibration table holds median cudaMalloc/cudaFree wall times at a few
 * segment sizes, measured on one GPU (the JSON of
 * traces/pytorch-2.11/h200-cudamalloc-timing.json, or the one gpu/'s
 * calibration writes, which may add the expandable-segment map/unmap
 * times).  Between two measured sizes a time is interpolated linearly in
 * log(size)-log(time); below the smallest it is clamped to the smallest
 * size's time, above the largest it grows in proportion to the size.
 * (The type is not called CcaCalibration: gpu/calibrate.h, which measures
 * the figures, has a struct of that name.)
 */
#ifndef CCA_CALIBRATION_H
#define CCA_CALIBRATION_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "snapshot.h"
#include "stats.h"

G_BEGIN_DECLS

/* The cost of one synchronisation of all streams (the release cascade,
 * empty_cache) when the calibration file does not give "sync_us": an
 * assumption, not a measurement (doc/cost-model.md). */
#define CCA_CALIBRATION_DEFAULT_SYNC_US 50.0

/* One measured size. */
typedef struct {
	uint64_t bytes;	  /* segment size */
	double malloc_us; /* median cudaMalloc time, microseconds */
	double free_us;	  /* median cudaFree time, microseconds */
	double map_us;	  /* median time to create and map BYTES as VMM pages; < 0: not measured */
	double unmap_us;  /* median time to unmap and release them; < 0: not measured */
} CcaCalibrationPoint;

/* A calibration table, points sorted by size (strictly increasing). */
typedef struct {
	char *source;		     /* file it was read from, or "built-in H200"; owned */
	char *gpu;		     /* the file's "device" (or "gpu") name, or NULL; owned */
	double sync_us;		     /* cost of one synchronisation, microseconds */
	bool sync_measured;	     /* sync_us came from the file */
	CcaCalibrationPoint *points; /* owned */
	guint n_points;		     /* at least 1 */
	bool has_map;		     /* every point has map_us and unmap_us */
} CcaCalibrationTable;

/* Error domain for calibration files. */
#define CCA_CALIBRATION_ERROR (cca_calibration_error_quark())
GQuark cca_calibration_error_quark(void);

typedef enum {
	CCA_CALIBRATION_ERROR_SYNTAX, /* not JSON, or JSON of the wrong shape */
	CCA_CALIBRATION_ERROR_VALUE,  /* a missing, negative or repeated figure */
} CcaCalibrationError;

/* Parses the LEN bytes of TEXT, a calibration file named NAME (for
 * messages):
 *   {"rows": [{"mb": M, "malloc_us_median": T, "free_us_median": T,
 *              "map_us_median": T, "unmap_us_median": T (both optional)}, ...],
 *    "sync_us": T (optional), "device" or "gpu": "name" (optional), ...}
 * Other keys are ignored.  Sizes are MiB (M > 0, integer or not); times are
 * microseconds (> 0; a negative map time means "not measured").  Returns
 * a new calibration, or NULL with ERROR set to one line: "NAME: offset N:
 * what" when TEXT is not JSON, "NAME: KEY: what" when KEY (e.g. "rows[2].mb")
 * has the wrong type (both CCA_CALIBRATION_ERROR_SYNTAX), "NAME: rows[i]:
 * what" for a missing or bad figure (_VALUE). */
CcaCalibrationTable *cca_calibration_parse(const char *text, gsize len, const char *name,
					   GError **error);

/* The largest calibration file read: a table of a few dozen sizes is a
 * few kilobytes; 16 MiB leaves room for notes and raw samples. */
#define CCA_CALIBRATION_MAX_FILE_SIZE ((uint64_t)16 << 20)

/* Reads and parses the file PATH; NULL with ERROR (G_FILE_ERROR when it
 * cannot be opened, CCA_INPUT_ERROR when it is not a regular file or holds
 * more than CCA_CALIBRATION_MAX_FILE_SIZE bytes, else as
 * cca_calibration_parse()). */
CcaCalibrationTable *cca_calibration_load(const char *path, GError **error);

/* The H200 table shipped as traces/pytorch-2.11/h200-cudamalloc-timing.json
 * (torch 2.11, CUDA 13), built in so that the cost model works without
 * the source tree; sync_us is the default assumption.  Free with
 * cca_calibration_free(). */
CcaCalibrationTable *cca_calibration_new_h200(void);

/* Frees CAL (NULL allowed). */
void cca_calibration_free(CcaCalibrationTable *cal);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(CcaCalibrationTable, cca_calibration_free)

/* Predicted time of one cudaMalloc of BYTES bytes, microseconds (> 0). */
double cca_calibration_malloc_us(const CcaCalibrationTable *cal, uint64_t bytes);

/* Predicted time of one cudaFree of a segment of BYTES bytes, microseconds. */
double cca_calibration_free_us(const CcaCalibrationTable *cal, uint64_t bytes);

/* Predicted time to map BYTES of an expandable segment in pages of PAGE
 * bytes, microseconds: the measured map times when the table has them,
 * else one cudaMalloc of PAGE bytes per page. */
double cca_calibration_map_us(const CcaCalibrationTable *cal, uint64_t bytes, uint64_t page);

/* The same for unmapping (cudaFree of PAGE bytes per page without map
 * figures). */
double cca_calibration_unmap_us(const CcaCalibrationTable *cal, uint64_t bytes, uint64_t page);

/* Allocator time of one replay, microseconds, split by cause. */
typedef struct {
	double malloc_us; /* cudaMalloc calls and expandable-segment maps */
	double free_us;	  /* cudaFree calls and unmaps */
	double sync_us;	  /* num_sync_all_streams synchronisations */
	uint64_t mallocs, frees, syncs;
} CcaCost;

/* Adds the cost of one segment entry EV that the model recorded to COST:
 * segment_alloc and segment_free cost one cudaMalloc/cudaFree of their
 * size; segment_map and segment_unmap cost cca_calibration_map_us() and
 * _unmap_us() of their size (PAGE is large_segment_size for a size it
 * divides, else 2 MiB: the large and small pools' page sizes).
 * Other actions are ignored.  LARGE_PAGE is the settings'
 * large_segment_size in bytes. */
void cca_calibration_cost_add_event(CcaCost *cost, const CcaCalibrationTable *cal,
				    const CcaEvent *ev, uint64_t large_page);

/* Adds NUM_SYNCS synchronisations of all streams to COST. */
void cca_calibration_cost_add_syncs(CcaCost *cost, const CcaCalibrationTable *cal,
				    uint64_t num_syncs);

/* Total of COST, microseconds. */
double cca_calibration_cost_total_us(const CcaCost *cost);

G_END_DECLS

#endif
