/* fit.h - the smallest device memory a trace runs in, and GPU presets.
 *
 * For each row of a sweep (each setting) and each address model, a
 * bisection over device capacities (--device-memory, in 2 MiB steps) finds
 * a capacity at which the whole trace runs without running out of memory
 * while 2 MiB less does not; both are replayed and kept.
 */
#ifndef CCA_FIT_H
#define CCA_FIT_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "size.h"
#include "sweep.h"

G_BEGIN_DECLS

#define CCA_FIT_STEP (2 * CCA_MIB) /* the search's resolution: 2 MiB */
#define CCA_FIT_LIMIT CCA_TIB	   /* the largest device tried: 1 TiB */
#define CCA_FIT_MAX_GPUS 16

/* Memory a CUDA context and PyTorch's libraries take on the device before
 * the allocator reserves anything: 690 MiB, measured on the H200 with
 * torch 2.11 and CUDA 13 from the OOM messages of the bundled traces
 * (multistream.cap: 698 MiB in use, 18 MiB of it reserved by PyTorch;
 * dyninfer.cap: 1.50 GiB in use, 850 MiB reserved).  Assumed, not
 * measured, for every other GPU. */
#define CCA_GPU_CONTEXT_BYTES (690 * CCA_MIB)

/* A GPU model that `fit --gpu` knows. */
typedef struct {
	const char *name;      /* "A100-40GB" */
	const char *aliases;   /* other accepted names, comma-separated */
	uint64_t total_memory; /* totalGlobalMem, bytes */
	const char *kind;      /* "measured", "reported" or "estimate" */
	const char *source;    /* where the figure comes from */
} CcaGpuPreset;

/* The presets, in a fixed order; stores their number in *N. */
const CcaGpuPreset *cca_fit_gpu_presets(guint *n);

/* The preset called exactly NAME (or one of its aliases), compared
 * without case, spaces, '-' and '_' ("a100 40gb" finds "A100-40GB").
 * Otherwise NULL with ERROR (G_OPTION_ERROR_BAD_VALUE), one line: NAME
 * beginning several preset names is ambiguous and they are listed
 * ("A100": A100-80GB, A100-40GB); beginning one, that one is suggested;
 * else every preset is listed.  A shorter name never picks a card. */
const CcaGpuPreset *cca_fit_gpu_preset_find(const char *name, GError **error);

/* The memory the recording held outside the caching allocator (CUDA
 * context, NCCL, cuBLAS workspaces), when ccasim-record sampled it on
 * DEVICE of SNAP: the sample at the highest reserved bytes, else the one at
 * the dump, else at the start.  Returns TRUE with *BYTES and *SOURCE (a
 * static phrase: "recorded by ccasim-record at the peak sample") when it
 * did; FALSE with ERROR unset when it did not; FALSE with ERROR when the
 * records are malformed. */
gboolean cca_fit_recorded_context(const CcaSnapshot *snap, int device, uint64_t *bytes,
				  const char **source, GError **error);

/* The phrase for the preset context (CCA_GPU_CONTEXT_BYTES). */
#define CCA_GPU_CONTEXT_SOURCE "measured on the H200; assumed elsewhere"

/* Bytes PyTorch can reserve on GPU: its total memory less CONTEXT (0 if
 * the context does not fit). */
uint64_t cca_fit_gpu_usable(const CcaGpuPreset *gpu, uint64_t context);

/* The fit of one row under one address model. */
typedef struct {
	bool found;	   /* some capacity up to CCA_FIT_LIMIT runs without OOM */
	uint64_t capacity; /* the smallest such capacity found (a multiple of 2 MiB) */
	CcaSweepRun at;	   /* the replay at CAPACITY (or at the limit when !found) */
	bool below_run;	   /* BELOW was replayed (CAPACITY > 2 MiB) */
	CcaSweepRun below; /* the replay at CAPACITY - 2 MiB */
	bool below_fits;   /* it did not run out of memory (a non-monotone case) */
	guint replays;	   /* replays the search took (0: shared, see fit.c) */
	uint64_t reach;	   /* no block of those replays was larger (CcaSweepRun's) */
	int8_t gpu_fits[CCA_FIT_MAX_GPUS]; /* 1/0: the replay at the GPU's usable memory */
} CcaFitRun;

/* The fits of one sweep row. */
typedef struct {
	const CcaSweepRow *row; /* borrowed from the sweep */
	guint n_runs;		/* as the row: 1 (recorded) or one per address model */
	CcaFitRun runs[CCA_SWEEP_MAX_MODELS];
	uint64_t lo, hi; /* range of the found capacities over the runs */
	bool sensitive;	 /* the runs disagree (capacity, found or a GPU answer) */
	/* stream timing: the first run's answer defers frees to other
	 * streams, so it was searched again with every completion timing
	 * (cca_timing_all_fit()) from that answer up */
	bool timed;
	bool timing_found;	  /* some capacity up to CCA_FIT_LIMIT fits every timing */
	uint64_t timing_capacity; /* the smallest such (>= runs[0].capacity) */
	char timing_failed[32];	  /* a timing that runs out a step below it ("" if none) */
	guint timing_probes;	  /* capacities tried under every timing */
	/* 1/0 per GPU: every timing fits at its usable memory (timed rows
	 * whose first run fits there) */
	int8_t timing_gpu_fits[CCA_FIT_MAX_GPUS];
} CcaFitRow;

/* The capacity ROW is sure to run in: the stream-timing answer where
 * there is one, else its first run's; FALSE when none was found. */
bool cca_fit_row_capacity(const CcaFitRow *row, uint64_t *capacity);

/* How to fit. */
typedef struct {
	guint threads;		   /* 0: one per core */
	CcaSweepProgress progress; /* called after each (row, model) search */
	void *progress_data;
	const volatile int *cancel;	 /* as CcaSweepOptions' cancel, checked per replay */
	const CcaGpuPreset *const *gpus; /* also replay at each GPU's usable memory */
	guint n_gpus;			 /* at most CCA_FIT_MAX_GPUS */
	uint64_t context;		 /* subtracted from a GPU's total memory */
	const char *context_source;	 /* where CONTEXT comes from, for people */
	/* the cap the recording ran under (--recorded-memory-fraction; 0:
	 * none or not known): what the what-ifs learn the program's
	 * empty_cache() calls under, as in a sweep */
	double recorded_memory_fraction;
	/* leave the bounds out: the answers hold for the recorded
	 * completions and the driver's placement only (each row searched
	 * under its primary address model alone; CcaSweepOptions'
	 * no_timing_bounds) */
	bool no_timing_bounds;
} CcaFitOptions;

/* Fits every row of SWEEP (whose rows need not have been run).  Returns a
 * new array of SWEEP->rows->len CcaFitRow in the sweep's row order (free
 * with g_free()), or NULL with ERROR when a replay fails on bad input. */
CcaFitRow *cca_fit_run(CcaSweep *sweep, const CcaFitOptions *options, GError **error);

/* Sorts N fit rows: found first, by capacity, then by settings string. */
void cca_fit_sort(CcaFitRow *rows, guint n);

/* What the fit printers say besides the rows. */
typedef struct {
	const char *trace;
	const CcaFitOptions *options;
	/* every column (address choice), whole settings, lo..hi in the cells
	 * and the GPUs' sources; without it the table fits in
	 * CCA_TEXT_COLUMNS: long settings end in "...", ranges go to a line
	 * under their row, and GPU columns that do not fit become a matrix
	 * under the table */
	bool wide;
} CcaFitReport;

/* Appends N fit rows as an aligned table (see CcaFitReport.wide), then
 * the GPU figures used and a line "note: NOTE" for each of
 * cca_sweep_notes(); prose is wrapped to CCA_TEXT_COLUMNS. */
void cca_fit_print_text(const CcaSweep *sweep, const CcaFitRow *rows, guint n,
			const CcaFitReport *report, GString *out);

/* Appends one JSON object: context, "gpus", "notes" (cca_sweep_notes())
 * and "rows". */
void cca_fit_print_json(const CcaSweep *sweep, const CcaFitRow *rows, guint n,
			const CcaFitReport *report, GString *out);

/* The object cca_fit_print_json() appends, as a new JSON value (the
 * caller owns the reference). */
json_t *cca_fit_to_json(const CcaSweep *sweep, const CcaFitRow *rows, guint n,
			const CcaFitReport *report);

/* Appends the preset table (name, total memory, usable memory after
 * CONTEXT, kind, source) as text. */
void cca_fit_gpu_presets_print(uint64_t context, GString *out);

G_END_DECLS

#endif
