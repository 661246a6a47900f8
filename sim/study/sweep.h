/* sweep.h - what-if studies: one trace replayed under a grid of settings.
 *
 * A sweep holds one row per allocator setting.  Each row is replayed
 * exactly as `ccasim replay --config` replays it, once per device address
 * model (what-if rows only: a row under the recorded settings replays the
 * trace's own addresses), and reports the figures of the primary model
 * plus, for every figure, the range over all models.  Rows run in
 * parallel; the result does not depend on the number of threads.
 */
#ifndef CCA_SWEEP_H
#define CCA_SWEEP_H

#include <glib.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "calibration.h"
#include "capbound.h"
#include "device.h"
#include "simdevice.h"
#include "replay.h"
#include "settings.h"
#include "snapshot.h"
#include "stats.h"
#include "timing.h"

G_BEGIN_DECLS

/* The figures of one replay.  All are stored as doubles (byte counts stay
 * exact below 2^53). */
typedef enum {
	CCA_SWEEP_FIG_PEAK_RESERVED = 0,   /* bytes: reserved_bytes.all.peak */
	CCA_SWEEP_FIG_PEAK_ALLOCATED,	   /* bytes: allocated_bytes.all.peak */
	CCA_SWEEP_FIG_FRAGMENTATION,	   /* 1 - active_bytes.all.peak / reserved_bytes.all.peak */
	CCA_SWEEP_FIG_UNALLOCATED_AT_PEAK, /* bytes reserved but not allocated at the reserved peak
					    */
	CCA_SWEEP_FIG_MALLOCS,		   /* num_device_alloc: cudaMalloc calls and maps */
	CCA_SWEEP_FIG_FREES,		   /* num_device_free: cudaFree calls and unmaps */
	CCA_SWEEP_FIG_RETRIES,		   /* num_alloc_retries */
	CCA_SWEEP_FIG_OOMS,		   /* num_ooms */
	CCA_SWEEP_FIG_SYNCS,		   /* num_sync_all_streams */
	CCA_SWEEP_FIG_TIME_US,		   /* predicted allocator time, microseconds (cost model) */
	CCA_SWEEP_FIG_OOM,		   /* 1 when the program would have died of OOM, else 0 */
	CCA_SWEEP_FIG_COUNT
} CcaSweepFigure;

/* Machine name of FIGURE ("peak_reserved", ...), as in --json and --csv. */
const char *cca_sweep_figure_name(CcaSweepFigure figure);

/* What "best" means. */
typedef enum {
	CCA_GOAL_RESERVED = 0, /* least peak reserved memory */
	CCA_GOAL_MALLOCS,      /* fewest cudaMalloc calls */
	CCA_GOAL_TIME,	       /* least predicted allocator time */
} CcaGoal;

/* Parses "reserved", "mallocs" or "time"; FALSE with ERROR otherwise. */
gboolean cca_sweep_goal_parse(const char *text, CcaGoal *goal, GError **error);

/* The name cca_sweep_goal_parse() accepts for GOAL (static). */
const char *cca_sweep_goal_name(CcaGoal goal);

/* At most one recorded replay plus one per address model
 * (cca_simdevice_bound_models(), replay's bounds: a what-if row's figures
 * are the first model's, the others only widen its ranges). */
#define CCA_SWEEP_MAX_MODELS (1 + CCA_ADDRESS_BOUND_MODELS)

/* One replay of a row. */
typedef struct {
	double value[CCA_SWEEP_FIG_COUNT];
	CcaStats stats;		 /* memory_stats() at the end (or at the OOM) */
	CcaCost cost;		 /* allocator time by cause */
	uint64_t events;	 /* trace events consumed */
	uint64_t oom_event;	 /* first unexpected OOM's event; valid when value[OOM] */
	bool whatif;		 /* the engine replayed a what-if */
	CcaAddressModel model;	 /* the address model (CCA_ADDRESS_RECORDED: the trace's own) */
	uint64_t address_ties;	 /* the replay's decisions by address alone */
	uint32_t same_under;	 /* the models that give this run (CcaReplayResult) */
	uint64_t reach;		 /* no block of the replay was larger (cca_allocator_reach()) */
	CcaSplitSeen split_seen; /* the sizes it compared with max_split_size (CcaReplayResult) */
	uint64_t split_of;	 /* the max_split_size it was replayed under */
	/* FALSE: copied from another run: the row's primary, which met no
	 * tie, or its twin's (cca_sweep_twin()) */
	bool replayed;
	uint64_t deferred_frees; /* frees that waited for another stream (record_stream) */
	CcaCapBound cap;	 /* a cap the recording proves (the recorded row's replay) */
	/* a window whose rebuilt start passes the cap or the device: the OOM
	 * (oom_event 0) is before the window (CcaReplayResult) */
	bool oom_before_window;
} CcaSweepRun;

/* One setting and its results. */
typedef struct {
	char *conf;	      /* canonical PYTORCH_CUDA_ALLOC_CONF ("" = PyTorch's defaults) */
	char *origin;	      /* where the row came from: "recorded", "grid", "--set", ... */
	CcaSettings settings; /* parsed */
	bool recorded;	      /* the trace's recorded settings: replayed on its own addresses */
	guint n_runs;	      /* replays, see cca_sweep_row_models() */
	CcaSweepRun runs[CCA_SWEEP_MAX_MODELS];			 /* primary first */
	double lo[CCA_SWEEP_FIG_COUNT], hi[CCA_SWEEP_FIG_COUNT]; /* range over the runs */
	bool sensitive;	      /* some figure differs between address models */
	bool address_checked; /* the address choice was looked at (see above) */
	/* stream timing: a what-if row whose primary run deferred frees is
	 * replayed under every completion timing (cca_timing_run()); tlo..thi
	 * bound each figure over them (the primary value where the timing
	 * changes nothing, and for the figures no memory_stats() key gives:
	 * fragmentation, unallocated at peak, time) */
	CcaTiming timing;
	double tlo[CCA_SWEEP_FIG_COUNT], thi[CCA_SWEEP_FIG_COUNT];
} CcaSweepRow;

/* ROW may run out of memory: its primary run does, or another address
 * model or stream timing does.  A row "fits" only when this is false. */
bool cca_sweep_row_may_oom(const CcaSweepRow *row);

/* The error of a sweep or fit whose options' cancel flag was set. */
#define CCA_SWEEP_ERROR (cca_sweep_error_quark())
GQuark cca_sweep_error_quark(void);
enum {
	CCA_SWEEP_ERROR_CANCELLED,
};

/* Called from worker threads, serialised by the sweep, after each replay:
 * DONE of TOTAL replays finished. */
typedef void (*CcaSweepProgress)(void *data, guint done, guint total);

/* How a sweep replays. */
typedef struct {
	double memory_fraction; /* 0: none */
	/* the cap the recording ran under (--recorded-memory-fraction): a
	 * row of the recorded settings under it replays the recording */
	double recorded_memory_fraction; /* 0: none, or not known */
	uint64_t device_memory;		 /* totalGlobalMem; 0: the H200's */
	bool capacity_set;		 /* cudaMalloc fails past device_memory */
	/* the recording ran on a device of device_memory (capacity_set, the
	 * GPU ccasim-record recorded less the memory outside the allocator):
	 * a row of the recorded settings on it replays the recording */
	bool recorded_capacity_set;
	const CcaCalibrationTable *calibration; /* NULL: CCA_SWEEP_FIG_TIME_US stays 0 */
	guint threads;				/* 0: one per core */
	CcaSweepProgress progress;		/* NULL: none */
	void *progress_data;
	/* non-NULL: once *cancel is non-zero (set by a signal handler, say)
	 * no further replay starts and the run fails with CCA_SWEEP_ERROR_CANCELLED */
	const volatile int *cancel;
	/* replay every address model even where the primary run met no
	 * address tie (cca_allocator_address_ties()), whose figures the
	 * other models then share without a replay */
	bool all_address_models;
	/* replay each what-if row under every address model, not just the
	 * driver's, and the recorded row under them too when the cap acts:
	 * the rows' lo..hi ranges and address_sensitive (unchecked, and
	 * one replay per row, without it) */
	bool address_sensitivity;
	/* leave the stream-timing bounds out (the rows' timing stays
	 * untimed): one replay per row and model, as for a trace without
	 * deferred frees */
	bool no_timing_bounds;
} CcaSweepOptions;

/* A sweep of one device of one trace. */
typedef struct {
	const CcaSnapshot *snap; /* borrowed */
	int device;
	uint32_t pytorch_version; /* rules every row is parsed and replayed by */
	GPtrArray *rows;	  /* CcaSweepRow*, owned; the recorded row first until sorted */
	char *recorded_conf;	  /* canonical string of the recorded settings */
	/* the trace's plan, made by cca_sweep_plan() and shared by every
	 * replay of the sweep (one planning pass at most, for all rows) */
	struct CcaPlan *plan;
} CcaSweep;

/* Creates a sweep of device DEVICE of SNAP (borrowed: it must outlive the
 * sweep) with one row, the trace's recorded settings.  PYTORCH_VERSION 0
 * means guessed from the snapshot, as replay does.  Returns NULL with ERROR
 * when the device does not exist or the recorded settings do not parse. */
CcaSweep *cca_sweep_new(const CcaSnapshot *snap, int device, uint32_t pytorch_version,
			GError **error);

/* Plans SWEEP's trace once (cca_plan_new()), unless done: every replay
 * of the sweep then shares the plan.  Returns FALSE with ERROR on bad
 * input.  cca_sweep_run() and cca_fit_run() call it. */
gboolean cca_sweep_plan(CcaSweep *sweep, GError **error);

/* Frees SWEEP and its rows (not the snapshot); NULL allowed. */
void cca_sweep_free(CcaSweep *sweep);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(CcaSweep, cca_sweep_free)

/* Adds a row for CONF (PYTORCH_CUDA_ALLOC_CONF syntax) labelled ORIGIN,
 * unless a row with equal settings exists already.  Returns FALSE with
 * ERROR (CCA_SETTINGS_ERROR, PyTorch's message) when CONF does not parse. */
gboolean cca_sweep_add_config(CcaSweep *sweep, const char *conf, const char *origin,
			      GError **error);

/* Adds the default grid: PyTorch's defaults; max_split_size_mb 32 to 4096
 * by powers of two and the smallest whole MiB above the 50th, 90th and
 * 99th percentiles of the trace's requests of large_segment_size or more;
 * roundup_power2_divisions 2, 4, 8, 16; expandable_segments alone and
 * with max_split_size_mb 128 and 512; with CAPPED (a memory fraction is
 * set, so PyTorch's garbage collection can act) also
 * garbage_collection_threshold 0.6 and 0.8, alone and with
 * max_split_size_mb 256.  Keys the replayed PyTorch release lacks are
 * left out.  FALSE with ERROR only when the trace cannot be read. */
gboolean cca_sweep_add_default_grid(CcaSweep *sweep, bool capped, GError **error);

/* Adds the product of N_SETS specifications "KEY=V1,V2,..." (commas inside
 * [...] belong to the value; the value "default" leaves KEY out): one row
 * per combination, keys in the order given, e.g. {"max_split_size_mb=128,
 * 512", "expandable_segments=True,False"} adds four rows.  Returns FALSE
 * with ERROR naming the specification on a missing '=', an empty value, a
 * key given twice, or a combination PyTorch would reject. */
gboolean cca_sweep_add_sets(CcaSweep *sweep, const char *const *sets, guint n_sets, GError **error);

/* Replays every row under OPTIONS: each (row, model) pair of
 * cca_sweep_row_models() is one task on a pool of OPTIONS->threads
 * threads.  A capped recorded row keeps its what-if replays only when the
 * cap changed its plain replay (checked by one more replay without the
 * cap); otherwise the trace's addresses hold and the row has one run.
 * Fills the rows' runs, ranges and sensitivity.  Returns FALSE with ERROR when a replay fails on
 * bad input (the first failing row in row order). */
gboolean cca_sweep_run(CcaSweep *sweep, const CcaSweepOptions *options, GError **error);

/* The replays ROW gets, primary first, into MODELS (room for
 * CCA_SWEEP_MAX_MODELS); returns their number.  A what-if row: one per
 * address model.  A recorded row: CCA_ADDRESS_RECORDED (the trace's own
 * addresses, as `ccasim replay` does), then, when CAPPED (a memory
 * fraction or device memory), one what-if per address model: once a cap
 * sends the run off the recording, the trace's addresses stop saying
 * where new segments go. */
guint cca_sweep_row_models(const CcaSweepRow *row, bool capped, CcaAddressModel *models);

/* The row whose runs row R of SWEEP (planned) may share, -1 when none:
 * another row of the same settings but a larger max_split_size, the
 * largest such, when neither is the recorded row nor replays the
 * recording and the trace makes no calls that change settings.  A run of
 * that twin is R's too when its reach (CcaSweepRun's) stays below R's
 * max_split_size (cca_settings_same_model_below()): sweep and fit then
 * copy it with cca_sweep_run_share() instead of replaying. */
int cca_sweep_twin(const CcaSweep *sweep, guint r);

/* DST becomes SRC, a run of ROW's twin (cca_sweep_twin()) that is ROW's
 * too: only memory_stats()'s max_split_size is ROW's own.  DST may be SRC. */
void cca_sweep_run_share(CcaSweepRun *dst, const CcaSweepRun *src, const CcaSweepRow *row);

/* Replays ROW's settings once under OPTIONS into RUN, exactly as `ccasim
 * replay --config ROW` does with --address-model MODEL (keep_going off:
 * an OOM that the recording did not have ends the replay).  For a recorded
 * row, MODEL CCA_ADDRESS_RECORDED is that plain replay and any other model
 * adds --whatif.  Thread-safe for distinct RUNs.  FALSE with ERROR on bad
 * input. */
gboolean cca_sweep_replay(const CcaSweep *sweep, const CcaSweepRow *row,
			  const CcaSweepOptions *options, CcaAddressModel model, CcaSweepRun *run,
			  GError **error);

/* The options cca_sweep_replay() replays ROW under OPTIONS with address
 * MODEL by, into OUT (pointing into SWEEP, ROW and OPTIONS: valid while
 * they are). */
void cca_sweep_replay_options(const CcaSweep *sweep, const CcaSweepRow *row,
			      const CcaSweepOptions *options, CcaAddressModel model,
			      CcaReplayOptions *out);

/* Sorts the rows best first for GOAL: rows that run out of memory last,
 * then by the goal's figure (primary model), then peak reserved, then
 * the settings string.  The order is total, so it is deterministic. */
void cca_sweep_sort(CcaSweep *sweep, CcaGoal goal);

/* The best row for GOAL that does not run out of memory (NULL if every
 * row does), after cca_sweep_sort() or not.  Appends to WHY one or two
 * plain sentences, built from the numbers, on why it is the best (or why
 * no row fits).  OPTIONS gives the capacity it was judged under. */
const CcaSweepRow *cca_sweep_recommend(const CcaSweep *sweep, CcaGoal goal,
				       const CcaSweepOptions *options, GString *why);

/* The notes on the settings of every row, in row order, each once
 * (cca_settings_add_notes(): keys PyTorch accepts that change nothing
 * ccasim models).  Free with g_ptr_array_unref(). */
GPtrArray *cca_sweep_notes(const CcaSweep *sweep);

/* What a sweep of a window (a trace that starts mid-run, by its plan)
 * assumes, as a sentence; NULL for a trace from the start or an unplanned
 * sweep.  cca_sweep_notes() gives it first. */
const char *cca_sweep_window_note(const CcaSweep *sweep);

/* cca_sweep_window_note() for --json: {"assumes": NOTE, "start_reserved"
 * (cca_plan_start_reserved()), "oom_before_window" (RUN's, or null when
 * RUN is NULL: fit, whose rows search the capacity)}, or null; the key
 * "window" of sweep's, fit's and fleet's JSON, as of replay's. */
json_t *cca_sweep_window_json(const CcaSweep *sweep, const CcaSweepRun *run);

/* What the printers say about the run besides the rows. */
typedef struct {
	const char *trace; /* path */
	CcaGoal goal;
	const CcaSweepOptions *options;
	const CcaSweepRow *recommended; /* NULL: no recommendation */
	const char *why;		/* its sentences */
	/* with sweep --gpu: the GPU's name, and where the memory outside the
	 * allocator subtracted from its total comes from (NULL otherwise) */
	const char *gpu, *context_source;
	uint64_t gpu_total, context;
	/* every column (unalloc at peak, address choice), whole settings and
	 * lo..hi ranges in the cells; without it the table fits in
	 * CCA_TEXT_COLUMNS, long settings end in "..." and the ranges go to a
	 * line under their row */
	bool wide;
} CcaSweepReport;

/* Appends the rows (in their current order) as an aligned table (see
 * CcaSweepReport.wide), then a line "note: NOTE" for each of
 * cca_sweep_notes(); prose is wrapped to CCA_TEXT_COLUMNS. */
void cca_sweep_print_text(const CcaSweep *sweep, const CcaSweepReport *report, GString *out);

/* Appends one JSON object: the run's context, "notes" (cca_sweep_notes()),
 * "window" (cca_sweep_window_json()), "cap_proved" (what the recorded
 * row's replay proved of a cap: cca_capbound_to_json()),
 * "rows" (rank, settings, origin, "notes" on its settings, every figure
 * with its "_range" [min, max] or null) and "recommendation" (null or
 * {"settings", "why"}). */
void cca_sweep_print_json(const CcaSweep *sweep, const CcaSweepReport *report, GString *out);

/* The object cca_sweep_print_json() appends, as a new JSON value (the
 * caller owns the reference): the Python module hands it out as a dict. */
json_t *cca_sweep_to_json(const CcaSweep *sweep, const CcaSweepReport *report);

/* Appends CSV: a header line, then one line per row: rank, settings,
 * origin, recorded, address_sensitive, then per figure its value, min and
 * max. */
void cca_sweep_print_csv(const CcaSweep *sweep, GString *out);

G_END_DECLS

#endif
