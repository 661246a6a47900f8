/* replay.h - replaying a trace through the allocator model.
 *
 * The engine reads one device's events in order and drives the model with
 * the program's requests: alloc (malloc), free_requested (free, deferred
 * when its free_completed comes later), deferred free_completed, empty_cache
 * calls recognised in the trace, and the recorded OOMs.  Segment events are
 * the allocator's own outputs: in recorded mode they are what the model
 * must produce (and with --check every emitted entry is compared with the
 * trace); in what-if mode they are ignored.
 *
 * A replay is planned first (plan.h: one read of the trace that checks it
 * and settles whether it starts mid-run, its recorded addresses, whether
 * it releases segments) and then runs exactly once, never restarting.
 * Which mode it runs in is decided up front, from the options and the
 * plan:
 *   - recorded mode when the settings are the recorded ones, no
 *     addresses_from is given, and either --check (the cap given is then
 *     the recording's), or none of: force_whatif, a cap other than the
 *     recording's (memory_fraction in (0, 1) or capacity_set, against
 *     recorded_memory_fraction and recorded_capacity_set: none unless
 *     given), a trace of requests alone (no segment entries, no final
 *     segments), a garbage_collection_threshold in the recorded settings
 *     with no cap at all (garbage collection acts only under a cap, and
 *     PyTorch does not record the cap: the recording ran under one that
 *     is unknown; but cca_replay_run() first tries the cap its oom entry
 *     proves, and replays the recording under it when both ends of the
 *     interval reproduce it: CcaReplayResult.cap_inferred);
 *   - a what-if otherwise.  A what-if of a trace that releases segments
 *     needs where the program called empty_cache(): one planning pass
 *     under the recording's conditions (recorded settings and addresses,
 *     the recording's cap), run once per plan and shared by every replay
 *     of that plan (the planning pass, replay.c).
 * A recorded-mode replay whose model nonetheless leaves the recording's
 * segments (diverged_from_recording) stops there: ask for a what-if.
 */
#ifndef CCA_REPLAY_H
#define CCA_REPLAY_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "allocator.h"
#include "capbound.h"
#include "check.h"
#include "device.h"
#include "simdevice.h"
#include "figures.h"
#include "rewind.h"
#include "settings.h"
#include "snapshot.h"
#include "stats.h"

G_BEGIN_DECLS

typedef struct CcaPlan CcaPlan;

/* When the frees deferred by record_stream (free_requested now,
 * free_completed later) complete in a what-if: a race with the GPU that
 * the trace shows for one run only (doc/whatif.md, "Stream timing").  A
 * replay of the recording always keeps the trace's completions. */
typedef enum {
	/* where the recording's free_completed entries are */
	CCA_COMPLETION_RECORDED = 0,
	/* at the completion_shift-th malloc after the free (1: the next
	 * malloc's process_events, the earliest PyTorch can see it), or at
	 * the recorded completion when that comes first */
	CCA_COMPLETION_EARLY,
	/* completion_shift mallocs after the recorded completion (0: at the
	 * next malloc, as recorded); CCA_COMPLETION_NEVER: only when the
	 * model synchronises (a cascade's release_cached_blocks,
	 * empty_cache()) */
	CCA_COMPLETION_LATE,
	/* at the completion_shift-th malloc after the free, wherever the
	 * recorded completion is (a GPU as far behind for every free) */
	CCA_COMPLETION_LAG,
	/* at a malloc drawn for each free from the 1st to the
	 * (completion_shift + 1)-th after it, by completion_seed: a GPU
	 * behind by varying amounts (each free's draw its own, so one
	 * stream's frees may complete out of their order: a run no program
	 * makes, which can only widen the bounds it enters) */
	CCA_COMPLETION_RANDOM,
	/* at the malloc 1 + completion_shift x size / largest after the free,
	 * the largest of the frees deferred so far: a stream's work on a
	 * tensor takes longer the larger it is */
	CCA_COMPLETION_SIZED,
} CcaCompletion;
#define CCA_COMPLETION_NEVER UINT32_MAX

/* Called after the engine has handled trace entry INDEX (EVENT), with the
 * model's state then; ALLOC is only valid during the call.  For timelines,
 * diffs and step-through views.  The same signature serves
 * before_request (see CcaReplayOptions). */
typedef void (*CcaReplayObserver)(void *data, uint64_t index, const CcaEvent *event,
				  const CcaAllocator *alloc);

/* The cause of a model entry made while the engine handles no trace
 * entry: before the first one (while the start of a mid-run trace is
 * rebuilt) or after the last.  The model records nothing then today; an
 * observer still has to expect it. */
#define CCA_REPLAY_NO_CAUSE UINT64_MAX

/* Called for each entry the model records (segment_alloc, alloc,
 * free_requested, free_completed, segment_free, segment_map,
 * segment_unmap, oom), in order.  CAUSE is the index of the trace entry
 * the engine was handling when the model recorded it, and TRACE that
 * entry as the trace has it:
 *   - an alloc, free_requested, deferred free_completed or oom entry (a
 *     free_requested whose free_completed is the very next entry is
 *     handled with it: both model entries have the free_requested as
 *     their cause; and what a malloc does, including the frees it
 *     completes and the segments it releases, has the alloc as its
 *     cause, though the recording shows those before the alloc; so have
 *     the recording's completions a what-if holds past the malloc whose
 *     synchronisation made them, applied once it has run);
 *   - for an empty_cache() the program called, or the release of a
 *     private pool (a MemPool or graph it let go), the first entry of the
 *     recorded burst of releases (segment_free or segment_unmap) that
 *     shows the call, in recorded mode and in a what-if alike (where the
 *     recording's releases are otherwise ignored);
 *   - CCA_REPLAY_NO_CAUSE, with TRACE NULL, outside any entry (above).
 * TRACE and MODEL are only valid during the call. */
typedef void (*CcaReplayModelFunc)(void *data, uint64_t cause, const CcaEvent *trace,
				   const CcaEvent *model);

/* What one replay does. */
typedef struct {
	const CcaSettings *settings; /* NULL: the trace's recorded settings */
	double memory_fraction;	     /* 0: none */
	uint64_t device_memory;	     /* totalGlobalMem; 0: the H200's */
	bool capacity_set;	     /* cudaMalloc fails past device_memory */
	int device;		     /* which device's trace */
	bool check;		     /* compare every entry and the final state */
	bool keep_going;	     /* skip requests that OOM unexpectedly */
	bool check_invariants;	     /* run the invariant walker after each event */
	/* Segment addresses: NULL means the trace's own (recorded mode), or
	 * synthetic ones for a what-if; else the recorded bases of this run. */
	const CcaSnapshot *addresses_from;
	CcaAddressModel address_model; /* without recorded addresses */
	CcaRewind rewind;
	uint32_t pytorch_version; /* rules of this release; 0: guessed from the trace */
	/* A what-if even under the recorded settings (another cap or device
	 * size): the trace's segment entries and addresses are not used. */
	bool force_whatif;
	/* Replay a recording under garbage_collection_threshold with no cap
	 * known in recorded mode all the same, its releases as the trace has
	 * them: the pass that proves its cap (cca_replay_run()). */
	bool gc_uncapped_recorded;
	CcaReplayObserver observer; /* NULL: none */
	void *observer_data;
	/* Model entries (segment_alloc, alloc, oom, ...) as they are recorded,
	 * with the trace entry that caused each; NULL: none.  Runs besides
	 * --check's comparison. */
	CcaReplayModelFunc on_model_event;
	void *on_model_event_data;
	/* Called before the engine hands trace entry INDEX (EVENT) to the
	 * model, with the state it meets (ALLOC valid only during the call):
	 * each cause of CcaReplayModelFunc above, once, before the model
	 * entries it causes: an alloc, free_requested, deferred
	 * free_completed or oom entry, or the first release of an
	 * empty_cache() or pool-release burst (before the segments go).
	 * Entries handled as no-ops (segment and snapshot entries) have none.
	 * The observer then hears of INDEX once it is handled (of its
	 * free_completed, for a free handled with it; of no entry of a
	 * release burst).  NULL: none. */
	CcaReplayObserver before_request;
	void *before_request_data;
	/* The device of the replay (not of the pass that finds a what-if's
	 * empty_cache calls, which always simulates the recording); NULL:
	 * the simulated device.  Called once per replay with the simulated
	 * device's configuration (addresses, total memory, capacity); must
	 * return a device (freed by the engine through its destroy op). */
	CcaDevice *(*make_device)(void *data, const CcaSimDeviceConfig *cfg);
	void *make_device_data;
	/* The plan of SNAP's device (cca_plan_new()), shared by replays of
	 * several settings; NULL: the replay plans on its own (then rewind and
	 * pytorch_version above apply). */
	CcaPlan *plan;
	/* The cap the recording ran under (see the rule above); with check
	 * the cap given is taken as the recording's. */
	double recorded_memory_fraction;
	bool recorded_capacity_set;
	/* Called once when the replay ends (however it ends, without a read
	 * error), with the model's final state; ALLOC is only valid during
	 * the call.  NULL: none. */
	void (*on_finish)(void *data, const CcaAllocator *alloc);
	void *on_finish_data;
	/* Stop once trace entry STOP_AFTER - 1 has been handled (the state
	 * "after event STOP_AFTER - 1"); 0: replay the whole trace. */
	uint64_t stop_after;
	/* count the model's decisions by address alone (address_ties below;
	 * a little slower) */
	bool count_address_ties;
	/* studies that replay many times (stream-timing bounds: timing.h)
	 * start no further replay once *cancel is non-zero; the replay itself
	 * ignores it.  NULL: never. */
	const volatile int *cancel;
	/* the caller wants no bounds of a what-if over stream timing and
	 * address placement (timing.h): read by the commands, not the replay */
	bool no_bounds;
	/* threads the bounds' replays run on (timing.h; 0: one per core);
	 * cca_replay_options_init() gives 1, for callers that run replays
	 * in parallel already.  Read by timing.c, not the replay. */
	guint bound_threads;
	/* on_model_event wants segment entries alone (segment_alloc, _free,
	 * _map, _unmap): the model builds no others for it */
	bool model_segments_only;
	/* when deferred frees complete in a what-if (CcaCompletion above);
	 * CCA_COMPLETION_RECORDED (0) unless a study of stream timing asks */
	CcaCompletion completion;
	uint32_t completion_shift;
	uint64_t completion_seed; /* CCA_COMPLETION_RANDOM */
} CcaReplayOptions;

/* What a replay found. */
typedef struct {
	CcaStats stats;
	uint64_t events;	  /* trace events consumed */
	bool whatif;		  /* settings or addresses differ from the recording */
	uint32_t pytorch_version; /* whose rules were replayed (211 = 2.11) */
	/* In recorded mode the model did not make the recording's segments
	 * (the cap or device differs): the replay stopped there. */
	bool diverged_from_recording;
	bool stopped_after;	  /* options->stop_after ended the replay */
	uint64_t pool_releases;	  /* private pools released before the dump (~MemPool) */
	uint64_t replays;	  /* observed model replays: 1 */
	uint64_t planning_passes; /* the planning pass ran for this replay: 0 or 1 */
	uint64_t allowed_maximum; /* memory-fraction limit in bytes, 0 if none */
	/* the model's decisions that went by device address alone
	 * (cca_allocator_address_ties()): 0 means any address model gives
	 * this run */
	uint64_t address_ties;
	bool address_ties_counted; /* options->count_address_ties */
	/* the address models (bits 1u << CcaAddressModel) of the bounds that
	 * decided every tie as this what-if did, so give this run
	 * (shadow.h); 0 unless it counted its ties */
	uint32_t same_under;
	uint64_t reach; /* cca_allocator_reach() at the end */
	/* the sizes compared with max_split_size (cca_allocator_split_seen()
	 * at the end); none (below UINT64_MAX) for a rebuilt start, whose
	 * rebuilding compares sizes too */
	CcaSplitSeen split_seen;
	/* best-fit ties the allocation counter decided that 2.11 decided by
	 * address (cca_allocator_counter_ties(); 2.12+ rules, counted with
	 * address_ties) */
	uint64_t counter_ties;
	uint64_t oom_rejections; /* throw_on_cudamalloc_oom's (2.12+) */
	/* the release the trace comes from (cca_plan_detect_release()),
	 * which may differ from pytorch_version in a what-if across releases */
	uint32_t trace_release;
	/* the peak moments (figures.h: the one definition every command
	 * uses), sampled after each entry the observer hears of */
	CcaFigures figures;
	uint64_t reserved_at_peak;  /* = figures.reserved_peak.reserved */
	uint64_t allocated_at_peak; /* = figures.reserved_peak.allocated */
	/* OOMs */
	uint64_t recorded_ooms;	  /* oom entries the trace itself had */
	uint64_t unexpected_ooms; /* requests that failed only in the model */
	bool stopped_by_oom;	  /* the first unexpected OOM ended the replay */
	uint64_t oom_event;	  /* index of the first unexpected OOM's event */
	uint64_t oom_size;	  /* its request (bytes, unrounded) */
	uint64_t oom_alloc_size;  /* the segment it asked for */
	uint64_t oom_reserved, oom_allocated, oom_free, oom_largest_free;
	uint64_t oom_stream;
	/* the trace's first oom entry, as the model met it: its index, the
	 * segment it asked for, the model's reserved and allocated bytes and
	 * cap then, and the device's free memory the entry recorded */
	bool recorded_oom_seen;
	uint64_t recorded_oom_event, recorded_oom_alloc_size, recorded_oom_reserved,
		recorded_oom_allocated, recorded_oom_allowed, recorded_oom_device_free;
	/* a recording under garbage_collection_threshold with no cap known
	 * whose oom entry proved one (capbound.h): the replay ran under the
	 * largest cap proved (allowed_maximum = cap_inferred.hi), and
	 * reproduced the recording there and at the smallest (.replayed) */
	CcaCapBound cap_inferred;
	/* inference from the trace */
	uint64_t empty_cache_calls; /* empty_cache() replayed */
	/* the program's calls ccasim-record saw that the replay applied
	 * (empty_cache, settings, fraction, stats resets: doc/recording.md) */
	uint64_t recorded_calls_applied;
	uint64_t recorded_empty_cache_calls; /* of them, and of empty_cache_calls */
	uint64_t unknown_frees;		     /* frees of blocks the trace never allocated */
	/* frees the model deferred (record_stream: their free_completed did
	 * not follow at once); 0: no figure depends on stream timing */
	uint64_t deferred_frees;
	uint64_t inferred_private_segments; /* private-pool segments told from the trace */
	/* a trace that started mid-run: the state rebuilt at its start */
	bool start_reconstructed;
	uint64_t start_segments;
	uint64_t start_blocks;
	uint64_t start_live_bytes;
	uint64_t start_blocks_unplaced; /* blocks that fit no free range */
	bool start_expandable_missing;	/* expandable segments in use at the start, not rebuilt */
	uint64_t start_reserved;	/* bytes the rebuilt start reserves */
	/* the rebuilt start holds more than the cap or the device: the program
	 * could not have reached the window under them.  The replay stopped
	 * before its first entry with one unexpected OOM (oom_event 0,
	 * oom_reserved = start_reserved, oom_size 0). */
	bool oom_before_window;
	/* --check */
	bool check_ran;
	bool check_passed;
	uint64_t check_compared; /* entries compared */
	char *check_message;	 /* first divergence, NULL if none */
} CcaReplayResult;

/* Replays device OPTIONS->device of SNAP once (planning first unless
 * OPTIONS->plan is given).  Returns FALSE with ERROR on bad
 * input (a corrupt trace, an unusable setting) only; OOMs and failed
 * checks are results.  Clear RESULT with cca_replay_result_clear(). */
gboolean cca_replay_run(const CcaSnapshot *snap, const CcaReplayOptions *options,
			CcaReplayResult *result, GError **error);

void cca_replay_result_clear(CcaReplayResult *result);

/* What RESULT, a replay under the recorded settings, proves of a cap
 * nobody passed (capbound.h, doc/whatif.md "A cap nobody passed"), into
 * OUT: the cap the replay itself inferred (cap_inferred), else, for a
 * replay of the recording (not a what-if) under no cap (no memory fraction
 * given, recorded, or set by a call ccasim-record saw; no device capacity:
 * CAPACITY_GIVEN false), the bound the trace's first oom entry proves with
 * the peak of reserved memory (cca_capbound_prove()).  Otherwise OUT is
 * zeroed: nothing was proved (a cap was known, no oom, or the device was
 * full, which its capacity explains). */
void cca_replay_cap_proved(const CcaReplayResult *result, bool capacity_given, CcaCapBound *out);

/* Model passes this process has run so far, over all threads: observed
 * replays (one per cca_replay_run()) in *REPLAYS, planning passes
 * (the planning pass, replay.c) in *PLANNING.  Either may be NULL.  The
 * CLI prints them on stderr at exit when CCASIM_STATS is set. */
void cca_replay_totals(uint64_t *replays, uint64_t *planning);

/* The planning pass behind the planning pass, replay.c: replays PLAN's
 * trace under its recorded settings and addresses and the cap
 * MEMORY_FRACTION / DEVICE_MEMORY / CAPACITY_SET, appending to FOUND the
 * trace positions where the program called empty_cache(), to SYNCED
 * those of the free_completed entries a malloc's synchronisation made
 * (its cascade's release_cached_blocks), and to SPANS (CcaPlanPoolSpan)
 * and RELEASES (CcaPlanPoolRelease) the private pools it released before
 * the dump, told from an empty_cache() by which segments a burst frees in
 * which order.  Returns FALSE with ERROR on bad input. */
gboolean cca_replay_find_empty_cache(const CcaPlan *plan, double memory_fraction,
				     uint64_t device_memory, bool capacity_set, GArray *found,
				     GArray *synced, GArray *spans, GArray *releases,
				     GError **error);


/* Why the rules of APPLIED were applied to SNAP: "detected: ..." or
 * "asked for (--pytorch-version); the trace is X.Y (...)".  Free with
 * g_free(). */
char *cca_replay_rules_reason(const CcaSnapshot *snap, uint32_t applied);

/* cca_plan_detect_release() without the reason. */
uint32_t cca_replay_guess_pytorch_version(const CcaSnapshot *snap);

/* Fills OPTIONS with the defaults (recorded settings, device 0). */
void cca_replay_options_init(CcaReplayOptions *options);

G_END_DECLS

#endif
