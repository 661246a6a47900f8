/* explain.h - why the allocator reserved memory, in plain language.
 *
 * An explainer rides along a replay (fed from its before_request, observer
 * and on_model_event hooks) and produces one CcaRequestRecord per request
 * (alloc or oom entry): the pool state the request met, what the model
 * did for it (segments reserved, cached segments released, retries, an
 * OOM) and the block it got.  cca_explain_run() turns the records of a
 * whole replay, plus the state at the reserved peak, into the report of
 * `ccasim explain`.
 */
#ifndef CCA_EXPLAIN_H
#define CCA_EXPLAIN_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "allocator.h"
#include "replay.h"
#include "snapshot.h"

G_BEGIN_DECLS

/* One request and what the model did for it. */
typedef struct {
	uint64_t index;	   /* its trace entry */
	CcaEvent request;  /* that entry (alloc, or an oom the trace recorded) */
	CcaRequestWhy why; /* the state it met (before any release it caused) */
	bool why_valid;
	uint32_t segments; /* segment_alloc/segment_map entries it caused */
	uint64_t segment_bytes;
	uint32_t releases; /* segment_free/unmap it caused (gc, retries) */
	uint64_t released_bytes;
	uint32_t emptied; /* segment_free/unmap of an empty_cache() just before it */
	uint64_t emptied_bytes;
	int64_t retries;    /* num_alloc_retries it added */
	bool oom;	    /* the model recorded an oom for it */
	uint64_t address;   /* the block it got; 0 after an oom */
	CcaCascade cascade; /* what its malloc did, stage by stage */
	bool cascade_valid; /* the model ran a malloc for it */
} CcaRequestRecord;

/* Receives each finished request record, with the allocator state right
 * after the request (valid only during the call). */
typedef void (*CcaRequestFunc)(void *data, const CcaRequestRecord *record,
			       const CcaAllocator *alloc);

typedef struct CcaExplainer CcaExplainer;

/* Creates an explainer that calls FN (may be NULL) with DATA for every
 * request, once the request is handled.  Free with cca_explain_free(). */
CcaExplainer *cca_explain_new(CcaRequestFunc fn, void *data);

/* Frees EXPLAINER; NULL is allowed. */
void cca_explain_free(CcaExplainer *explainer);

/* Feed from the replay's before_request hook (same arguments): an alloc
 * or oom entry opens a record, with the state the request meets; the
 * releases of an empty_cache() before it go to that record. */
void cca_explain_before(CcaExplainer *explainer, uint64_t index, const CcaEvent *event,
			const CcaAllocator *alloc);

/* Feed from the replay's observer (same arguments): hands the record of
 * request INDEX, now handled, to FN. */
void cca_explain_observe(CcaExplainer *explainer, uint64_t index, const CcaEvent *event,
			 const CcaAllocator *alloc);

/* Feed from the replay's on_model_event hook (same arguments). */
void cca_explain_model_event(CcaExplainer *explainer, uint64_t cause, const CcaEvent *trace,
			     const CcaEvent *model);

/* Appends a plain-language account of RECORD (which reserved memory or
 * ran out of it): the request, its rounding and pool, why no cached block
 * served it, the segment size rule, releases and retries, and for an OOM
 * the free memory stranded in split blocks.  Each line starts with
 * INDENT. */
void cca_explain_append_request(GString *out, const CcaRequestRecord *record, const char *indent);

/* Whether POOL_ID (a segment_pool_id) names a private pool, not the
 * default (0, 0). */
bool cca_explain_private_pool(const int64_t pool_id[2]);

/* A new string naming private pool POOL_ID and why a request goes there:
 * a pool the program made (0, N) through use_mem_pool or a capture into
 * it, a capture's own (N, 0) through a capture of its stream, else one
 * the replay inferred. */
char *cca_explain_pool_reason(const int64_t pool_id[2]);

/* Appends the stages of RECORD's malloc one per line, in PyTorch's
 * order (get_free_block, garbage_collect_cached_blocks, cudaMalloc,
 * release_available_cached_blocks, release_cached_blocks with its
 * synchronisation, the retry, the OOM), each with what it released and
 * why, and the memory_stats() key that counts it; stages that did not
 * run say why.  Nothing when the record has no cascade (no malloc ran).
 * Each line starts with INDENT. */
void cca_explain_append_cascade(GString *out, const CcaRequestRecord *record, const char *indent);

/* What `ccasim explain` shows. */
typedef struct {
	guint limit;	/* cudaMalloc calls listed one by one; 0: all */
	guint top;	/* rows of each ranking at the peak */
	bool one_event; /* explain only trace entry EVENT, stage by stage */
	uint64_t event;
	/* not NULL: gets the result of the replay of the whole trace (the
	 * figures' replay; the caller clears it with
	 * cca_replay_result_clear()) */
	CcaReplayResult *result;
} CcaExplainParams;

/* Replays device OPTIONS->device of SNAP once (taking the state at each
 * new reserved peak) and appends the report to OUT; with
 * PARAMS->one_event, only the account of request PARAMS->event and its
 * stages (cca_explain_append_cascade()), or a line saying the entry is
 * no request.  Otherwise: a summary
 * of the run, every cudaMalloc with its reason (up to PARAMS->limit),
 * every OOM with its reason, and at the reserved peak the free memory
 * split into stranded/cached/rounding and the request sizes and call
 * sites that strand the most.  OPTIONS's observer hooks must be unset.
 * Returns FALSE with ERROR as cca_replay_run() does. */
gboolean cca_explain_run(const CcaSnapshot *snap, const CcaReplayOptions *options,
			 const CcaExplainParams *params, GString *out, GError **error);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(CcaExplainer, cca_explain_free)

G_END_DECLS

#endif
