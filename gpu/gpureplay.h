/* gpureplay.h - a trace replayed by the policy on a real GPU, checked
 * against the simulation.
 *
 * Three replays of the same trace under the same settings, through the
 * same engine and policy:
 *  - predicted: the simulation `ccasim replay` runs (no GPU involved, the
 *    GPU's total memory);
 *  - gpu: the policy on the CUDA device (cudadevice.h), on the driver's
 *    addresses, every device call timed and measured;
 *  - simulated: the simulation again, given the GPU run's segment
 *    addresses in order, so that it must agree with the GPU run exactly.
 * The GPU run and the simulation are compared entry by entry (every
 * segment, block and OOM the policy records), reserved memory after every
 * segment operation against the driver's used-memory figure, device-call
 * counts, peaks, and the blocks within segments at the reserved peak and
 * at the end.
 */
#ifndef CCA_GPUREPLAY_H
#define CCA_GPUREPLAY_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "cudadevice.h"
#include "replay.h"
#include "report.h"

G_BEGIN_DECLS

/* What one GPU replay does. */
typedef struct {
	/* settings, memory_fraction, device (of the trace), keep_going,
	 * pytorch_version, rewind; force_whatif and address_model (the
	 * prediction's: the GPU run and its simulation are what-ifs on the
	 * GPU's addresses anyway); device_memory and capacity_set are ignored
	 * (see capacity); the callbacks are the GPU replay's own */
	CcaReplayOptions replay;
	int ordinal;	    /* CUDA device */
	uint64_t capacity;  /* 0: the GPU as it is; else it acts as a device of this many bytes */
	bool touch;	    /* memset every block on its stream */
	uint64_t tolerance; /* bytes measured and simulated may differ by; 0: the granularity */
	bool keep_calls;    /* keep the call log for the JSON report */
} CcaGpuReplayOptions;

/* The blocks within segments at one moment: a digest of the exact layout
 * (addresses) and one of the layout up to segment placement (each segment
 * as its size and its blocks' offsets, sizes and active/free state, the
 * segments sorted; the same text gpu-scripts/torch_replay.py hashes). */
typedef struct {
	bool taken;
	uint64_t reserved; /* bytes reserved then */
	uint32_t segments;
	uint32_t blocks;
	char *exact;	  /* SHA-256 of the exact layout, hex */
	char *canonical;  /* SHA-256 of the canonical layout, hex */
	GPtrArray *lines; /* char *: the canonical layout, one segment a line, sorted */
} CcaLayout;

/* Time of one kind of device call. */
typedef struct {
	uint64_t calls;
	uint64_t failed;
	double total_ms;
	double median_us;
	double max_us;
} CcaCallTimes;

/* What a GPU replay found. */
typedef struct {
	CcaReplayResult predicted;
	CcaReplayResult gpu;
	CcaReplayResult simulated;
	CcaCudaRecord record; /* the GPU's calls */
	uint64_t tolerance;   /* bytes, as used */

	/* entry by entry: the GPU run's policy against the simulation */
	uint64_t entries; /* entries the GPU run recorded */
	uint64_t entries_compared;
	char *entries_divergence; /* first difference, NULL if none */

	/* reserved memory after each successful segment call */
	uint64_t segment_ops;	    /* calls compared */
	uint64_t reserved_exact;    /* measured == simulated (granularity-rounded) */
	uint64_t delta_exact;	    /* the call's own used-memory delta == its bytes */
	int64_t reserved_max_diff;  /* largest |measured - simulated|, bytes */
	uint64_t reserved_worst_op; /* index (among compared calls) of that one */
	uint64_t driver_ooms;	    /* cudaMalloc/map refused by the driver */

	/* measured figures */
	uint64_t mallocs, frees, maps, unmaps; /* successful calls */
	uint64_t peak_segments;		       /* most cudaMalloc segments live at once */
	CcaCallTimes times[CCA_CALL_KINDS];

	/* layouts of the GPU run, the simulation and the prediction */
	CcaLayout gpu_peak, gpu_end, sim_peak, sim_end, pred_peak, pred_end;

	bool passed;
	GPtrArray *failures; /* char *: why not, one line each */
} CcaGpuReplayResult;

/* Replays device OPTIONS->replay.device of SNAP three times as above and
 * compares.  Returns FALSE with ERROR when it cannot run: a bad trace or
 * setting, no GPU (CCA_CUDA_ERROR_NO_DEVICE, "no CUDA device: ..."), or a
 * trace that starts mid-run (CCA_CUDA_ERROR_UNSUPPORTED: its first
 * segments were never allocated in this process).  Disagreement is a
 * result: RESULT->passed and RESULT->failures.  Clear RESULT with
 * cca_gpureplay_result_clear(). */
gboolean cca_gpureplay_run(const CcaSnapshot *snap, const CcaGpuReplayOptions *options,
			   CcaGpuReplayResult *result, GError **error);

void cca_gpureplay_result_clear(CcaGpuReplayResult *result);

/* Appends RESULT side by side (predicted, simulated, measured) for people:
 * reserved peak and after every segment operation, segments, device
 * calls, layouts, call times, the verdict.  CTX describes the run. */
void cca_gpureplay_report_text(const CcaReportContext *ctx, const CcaGpuReplayOptions *options,
			       const CcaGpuReplayResult *result, GString *out);

/* Appends RESULT as one JSON object: "trace", "device", "settings",
 * "memory_fraction", "capacity", "touch"; "gpu" (the device: name, total
 * memory, granularity, baseline and final used memory, streams, touches,
 * stream waits, error); "figures" ({"predicted", "simulated", "measured"}:
 * peak and final reserved, peak allocated, segments at peak, cudaMalloc,
 * cudaFree, map, unmap, retries, OOMs, empty_cache calls); "reserved_check";
 * "entries"; "layout" (digests at the peak and at the end of each run, and
 * the GPU run's final canonical layout); "call_times" (per call kind);
 * "calls" (the call log, with OPTIONS->keep_calls); "predicted",
 * "simulated" and "gpu_run" (each cca_report_replay_to_json()'s object);
 * "passed"; "failures". */
void cca_gpureplay_report_json(const CcaReportContext *ctx, const CcaGpuReplayOptions *options,
			       const CcaGpuReplayResult *result, GString *out);

G_END_DECLS

#endif
