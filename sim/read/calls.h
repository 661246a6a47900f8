/* calls.h - the program's calls into the allocator that ccasim-record saw.
 *
 * A snapshot records the allocator's events, not the program's calls: an
 * empty_cache() that freed nothing, _set_allocator_settings(),
 * set_per_process_memory_fraction() and the stats resets leave no entry.
 * ccasim-record (record/ccasim_record.py) writes each such call into the
 * snapshot's external_annotations as "ccasim:KIND k=v ..." with the
 * device's allocator counts at the call (allocation.all.allocated,
 * allocation.all.freed, num_ooms): doc/recording.md gives the format.
 * The counts place a call exactly between two trace entries, where the
 * annotation's time_us alone could not (many entries share a
 * microsecond): the call came after the ALLOCS-th alloc entry, the
 * FREES-th free_requested and the OOMS-th oom of the process, counted from
 * the last `dump` record back to the trace's own entries.
 */
#ifndef CCA_CALLS_H
#define CCA_CALLS_H

#include <glib.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "snapshot.h"

G_BEGIN_DECLS

typedef enum {
	CCA_CALL_START = 0,	     /* the recorder started */
	CCA_CALL_EMPTY_CACHE,	     /* torch.cuda.empty_cache() */
	CCA_CALL_SET_SETTINGS,	     /* torch.cuda.memory._set_allocator_settings(S) */
	CCA_CALL_MEMORY_FRACTION,    /* torch.cuda.set_per_process_memory_fraction(F) */
	CCA_CALL_RESET_PEAK,	     /* reset_peak_memory_stats() and the reset_max_* */
	CCA_CALL_RESET_ACCUMULATED,  /* reset_accumulated_memory_stats() */
	CCA_CALL_MEMPOOL_CREATE,     /* torch.cuda.MemPool() */
	CCA_CALL_MEMPOOL_RELEASE,    /* the MemPool's release */
	CCA_CALL_USE_MEM_POOL_ENTER, /* with torch.cuda.use_mem_pool(pool): */
	CCA_CALL_USE_MEM_POOL_EXIT,
	CCA_CALL_CAPTURE_BEGIN, /* CUDAGraph.capture_begin() */
	CCA_CALL_CAPTURE_END,
	CCA_CALL_DEVICE_MEMORY, /* a sample of cudaMemGetInfo against reserved */
	CCA_CALL_DUMP,		/* the snapshot was taken */
	CCA_CALLS_KINDS
} CcaCallsKind;

/* When a device_memory sample was taken. */
typedef enum {
	CCA_SAMPLE_START = 0,
	CCA_SAMPLE_PEAK, /* the sample of the highest reserved bytes */
	CCA_SAMPLE_DUMP,
} CcaSampleWhen;

/* One recorded call. */
typedef struct {
	CcaCallsKind kind;
	guint order; /* its place among the records (they come in call order, but
		      * for a capture_begin, written at its capture's end) */
	int64_t time_us;
	uint64_t allocs, frees, ooms; /* the device's counts at the call */
	/* the trace entry the call came right before (cca_calls_place()):
	 * entries [0, POSITION) happened before it; the trace's length when
	 * it came after every entry */
	uint64_t position;
	/* empty_cache: where its releases begin, if it released anything:
	 * POSITION past the completions its synchronisation recorded */
	uint64_t releases_at;
	bool in_window; /* FALSE: the call came before the trace's first entry */
	char *text;	/* set_settings: the string; start: the conf; dump: the reason */
	char *torch;	/* start: torch.__version__ */
	double fraction;
	int64_t pool[2];
	uint64_t total, free, reserved; /* device_memory */
	CcaSampleWhen when;
} CcaCall;

/* The calls recorded for one device, in the order they were made (by
 * their counts, then their records' order). */
typedef struct {
	GArray *calls; /* CcaCall */
	bool placed;   /* cca_calls_place() ran */
	/* the index in CALLS of the last dump record, -1 when none */
	int last_dump;
	/* the last device_memory sample of each kind, -1 when none */
	int sample[3];
} CcaCalls;

/* Name of KIND as the record spells it ("empty_cache"). */
const char *cca_calls_kind_name(CcaCallsKind kind);

/* Whether SNAP holds any ccasim-record annotation for DEVICE (cheap). */
bool cca_calls_present(const CcaSnapshot *snap, int device);

/* Parses the ccasim-record annotations of DEVICE in SNAP (those whose name
 * starts "ccasim:"; others are the program's own and are skipped).
 * Returns a new CcaCalls (empty when there are none), or NULL with ERROR
 * (CCA_INPUT_ERROR_CORRUPT: "FILE: external_annotations[I]: ...", naming
 * the field) when a record is malformed. */
CcaCalls *cca_calls_parse(const CcaSnapshot *snap, int device, GError **error);

/* The trace's own counts of the entries a ccasim-record record counts, as
 * a reader of the trace tallies them (cca_calls_tally_note()) for
 * cca_calls_place(): an alloc entry is allocation.all.allocated's
 * increase, a free_requested entry its freed one (free() counts the
 * allocation freed before its events complete), an oom entry num_ooms. */
typedef struct {
	uint64_t allocs, frees, ooms;
} CcaCallsTally;

/* Counts an entry of action ACTION into TALLY. */
static inline void
cca_calls_tally_note(CcaCallsTally *tally, uint8_t action)
{
	tally->allocs += action == CCA_ACTION_ALLOC;
	tally->frees += action == CCA_ACTION_FREE_REQUESTED;
	tally->ooms += action == CCA_ACTION_OOM;
}

/* Places each call between DEVICE's trace entries by its counts, relative
 * to the last dump record (whose counts are those of the trace's end).
 * TALLY holds the trace's counts when the caller read its entries already
 * (NULL: counted here, one more read).  Without a dump record the calls
 * are placed by time: before the first entry recorded at or after the
 * call's time_us.  Returns FALSE with ERROR (CCA_INPUT_ERROR_CORRUPT) when
 * the counts contradict the trace (the dump counts fewer entries than the
 * trace holds, or a call's counts name no point of it). */
gboolean cca_calls_place(CcaCalls *calls, const CcaSnapshot *snap, int device,
			 const CcaCallsTally *tally, GError **error);

/* How many calls of KIND CALLS holds (in the trace's window or not). */
guint cca_calls_count(const CcaCalls *calls, CcaCallsKind kind);

/* The device_memory sample taken WHEN, or NULL. */
const CcaCall *cca_calls_sample(const CcaCalls *calls, CcaSampleWhen when);

/* The device's total memory as ccasim-record's cudaMemGetInfo samples
 * saw it (the peak's, else the dump's, else the start's), or 0 when CALLS
 * holds none. */
uint64_t cca_calls_total_memory(const CcaCalls *calls);

/* Bytes the process held outside the caching allocator at sample S:
 * total - free - reserved (0 when negative). */
uint64_t cca_calls_outside_bytes(const CcaCall *s);

/* One line describing call C ("empty_cache at entry 1234",
 * "set_allocator_settings max_split_size_mb:64 at entry 88"). */
char *cca_calls_describe(const CcaCall *c);

/* Call C as a new JSON object: kind, position (null before the window),
 * time_us, allocs, frees, ooms and the kind's own fields (settings,
 * fraction, pool, when/total/free/reserved/outside, reason, torch, conf). */
json_t *cca_calls_call_to_json(const CcaCall *c);

void cca_calls_free(CcaCalls *calls);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(CcaCalls, cca_calls_free)

G_END_DECLS

#endif
