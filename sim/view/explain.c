/* explain.c - why the allocator reserved memory, in plain language.
 *
 * Models nothing itself: it watches a replay.  Before each request (the
 * engine's before_request call) it asks the allocator what the request
 * will meet (cca_allocator_explain_request(), a pure query); while the
 * request runs it counts the model's entries the engine says it caused
 * (segments reserved, segments released, the oom); after it (the observer
 * call), it hands the record out.  The releases of an empty_cache() the
 * program called go to the request that follows it.
 *
 * The report needs the state at the reserved peak, which only the end of
 * the replay tells: the state is copied whenever reserved memory reaches a
 * new peak (at most once per cudaMalloc or page map), with the stack of
 * each live block, so one replay suffices.
 *
 * The report attributes the free bytes of each segment at the reserved
 * peak to the live blocks that keep the segment reserved, in proportion
 * to their sizes: a segment is only returned to the device when all of
 * its blocks are free, so its live blocks strand its free space.
 */
#include "config.h"

#include "explain.h"

#include <string.h>

#include "figures.h"
#include "lab.h"
#include "peak.h"
#include "plan.h"
#include "pytorch.h"
#include "stack.h"
#include "size.h"
#include "report.h"
#include "text.h"

struct CcaExplainer {
	CcaRequestFunc fn;
	void *data;
	CcaRequestRecord cur; /* the request being handled */
	bool have_cur;
	int64_t retries_before;
	uint64_t serial_before; /* the allocator's last malloc before the request */
	/* an empty_cache() since the last request: its cause and releases,
	 * which go to the next request when it is an alloc or oom */
	uint64_t emptying;
	bool have_emptying;
	uint32_t emptied;
	uint64_t emptied_bytes;
};

CcaExplainer *
cca_explain_new(CcaRequestFunc fn, void *data)
{
	CcaExplainer *x = g_new0(CcaExplainer, 1);
	x->fn = fn;
	x->data = data;
	return x;
}

void
cca_explain_free(CcaExplainer *x)
{
	g_free(x);
}

static bool
is_request_action(uint8_t action)
{
	return action == CCA_ACTION_ALLOC || action == CCA_ACTION_OOM;
}

static bool
is_release_action(uint8_t action)
{
	return action == CCA_ACTION_SEGMENT_FREE || action == CCA_ACTION_SEGMENT_UNMAP;
}

void
cca_explain_before(CcaExplainer *x, uint64_t index, const CcaEvent *event,
		   const CcaAllocator *alloc)
{
	x->have_cur = false;
	if (is_release_action(event->action)) { /* an empty_cache() */
		x->emptying = index;
		x->have_emptying = true;
		return;
	}
	if (!is_request_action(event->action)) {
		/* a free in between: the releases concerned no request */
		x->have_emptying = false;
		x->emptied = 0;
		x->emptied_bytes = 0;
		return;
	}
	memset(&x->cur, 0, sizeof x->cur);
	x->cur.index = index;
	x->cur.request = *event;
	x->cur.emptied = x->emptied;
	x->cur.emptied_bytes = x->emptied_bytes;
	x->have_emptying = false;
	x->emptied = 0;
	x->emptied_bytes = 0;
	x->have_cur = true;
	/* the state the request meets, after any empty_cache() before it */
	cca_allocator_explain_request(alloc, event->size, event->stream, &x->cur.why);
	x->cur.why_valid = true;
	x->retries_before = cca_allocator_stats(alloc)->num_alloc_retries;
	x->serial_before = cca_allocator_last_cascade(alloc)->serial;
}

void
cca_explain_observe(CcaExplainer *x, uint64_t index, const CcaEvent *event,
		    const CcaAllocator *alloc)
{
	if (!x->have_cur || x->cur.index != index)
		return;
	x->cur.retries = cca_allocator_stats(alloc)->num_alloc_retries - x->retries_before;
	const CcaCascade *c = cca_allocator_last_cascade(alloc);
	/* exactly one malloc ran for the request: its stages are the record's */
	x->cur.cascade_valid = c->serial == x->serial_before + 1;
	if (x->cur.cascade_valid)
		x->cur.cascade = *c;
	if (x->fn)
		x->fn(x->data, &x->cur, alloc);
	x->have_cur = false;
}

void
cca_explain_model_event(CcaExplainer *x, uint64_t cause, const CcaEvent *trace,
			const CcaEvent *model)
{
	if (x->have_emptying && cause == x->emptying) {
		if (is_release_action(model->action)) {
			x->emptied++;
			x->emptied_bytes += model->size;
		}
		return;
	}
	if (!x->have_cur || cause != x->cur.index)
		return;
	CcaRequestRecord *r = &x->cur;
	switch (model->action) {
	case CCA_ACTION_SEGMENT_ALLOC:
	case CCA_ACTION_SEGMENT_MAP:
		r->segments++;
		r->segment_bytes += model->size;
		break;
	case CCA_ACTION_SEGMENT_FREE:
	case CCA_ACTION_SEGMENT_UNMAP:
		r->releases++;
		r->released_bytes += model->size;
		break;
	case CCA_ACTION_OOM:
		r->oom = true;
		break;
	case CCA_ACTION_ALLOC:
		r->address = model->addr;
		break;
	default:
		break;
	}
}

/* ------------------------------------------------------------ wording */

static const char *
sz(uint64_t bytes, char buf[32])
{
	return cca_size_format(bytes, buf);
}

static const char *
pool_name(bool small)
{
	return small ? "small" : "large";
}

bool
cca_explain_private_pool(const int64_t pool_id[2])
{
	return pool_id[0] != 0 || pool_id[1] != 0;
}

char *
cca_explain_pool_reason(const int64_t pool_id[2])
{
	/* MemPool::graph_pool_handle(is_user_created): (0, N) for a pool the
	 * program made (torch.cuda.MemPool(), torch.cuda.graph_pool_handle(),
	 * which torch.compile's cudagraph trees share), (N, 0) for the pool
	 * CUDAGraph::capture_begin makes when given none; other ids are a
	 * pool the replay inferred */
	if (pool_id[0] == 0 && pool_id[1] > 0)
		return g_strdup_printf(
			"private pool (0, %" G_GINT64_FORMAT
			"), one the program made (torch.cuda.MemPool(), or "
			"torch.cuda.graph_pool_handle() as torch.compile's cudagraph trees use): a "
			"use_mem_pool region of its thread, or a capture of its stream into that pool, "
			"was underway",
			pool_id[1]);
	if (pool_id[0] > 0 && pool_id[1] == 0)
		return g_strdup_printf("private pool (%" G_GINT64_FORMAT
				       ", 0), the one a CUDA graph capture made for itself "
				       "(torch.cuda.graph without a pool): its stream was being "
				       "captured, and the capture takes its stream's requests",
				       pool_id[0]);
	return g_strdup_printf("private pool (%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT
			       "), one the replay inferred from the trace (doc/private-pools.md)",
			       pool_id[0], pool_id[1]);
}

static void
explain_rounding(GString *out, const CcaRequestWhy *w, const char *indent)
{
	char a[32], b[32];
	if (w->size != w->size_512)
		g_string_append_printf(
			out,
			"%sroundup_power2_divisions rounds it up to %s, %" G_GUINT64_FORMAT
			" B (%s more than the 512-byte rounding).\n",
			indent, sz(w->size, a), w->size, sz(w->size - w->size_512, b));
	else if (w->size != w->orig_size)
		g_string_append_printf(out,
				       "%sIt rounds up to %s, %" G_GUINT64_FORMAT
				       " B (blocks are multiples of 512 B).\n",
				       indent, sz(w->size, a), w->size);
}

static void
explain_miss(GString *out, const CcaRequestRecord *r, const char *indent)
{
	const CcaRequestWhy *w = &r->why;
	char a[32], b[32], c[32];
	const char *pool = pool_name(w->small_pool);
	if (r->emptied)
		g_string_append_printf(
			out,
			"%sThe program had just called empty_cache(), which returned %u "
			"cached segment%s (%s) to the device.\n",
			indent, r->emptied, r->emptied == 1 ? "" : "s", sz(r->emptied_bytes, a));
	switch (w->kind) {
	case CCA_WHY_FITS:
		g_string_append_printf(out, "%sA cached block of %s could serve it.\n", indent,
				       sz(w->candidate_size, a));
		break;
	case CCA_WHY_EMPTY_POOL:
		g_string_append_printf(out,
				       "%sNo free block: the %s pool had nothing cached on stream "
				       "%" G_GUINT64_FORMAT ".\n",
				       indent, pool, w->stream);
		break;
	case CCA_WHY_TOO_SMALL:
		g_string_append_printf(out,
				       "%sNo free block large enough on stream %" G_GUINT64_FORMAT
				       ": the %s pool's %u free block%s there hold%s %s, the "
				       "largest %s.\n",
				       indent, w->stream, pool, w->free_blocks_stream,
				       w->free_blocks_stream == 1 ? "" : "s",
				       w->free_blocks_stream == 1 ? "s" : "",
				       sz(w->free_bytes_stream, a), sz(w->largest_free_stream, b));
		if (w->free_bytes_stream >= w->size)
			g_string_append_printf(
				out,
				"%sTogether they would hold the request, but a block "
				"must be one contiguous range: fragmentation.\n",
				indent);
		break;
	case CCA_WHY_OVERSIZE:
		if (w->size < w->max_split_size)
			g_string_append_printf(
				out,
				"%sA free block of %s would hold it, but max_split_size (%s) keeps "
				"requests below it out of blocks of %s or more, which are never "
				"split.\n",
				indent, sz(w->candidate_size, a), sz(w->max_split_size, b),
				sz(w->max_split_size, c));
		else
			g_string_append_printf(
				out,
				"%sA free block of %s would hold it, but it is larger than the "
				"request by max_non_split_rounding (%s) or more, so max_split_size "
				"forbids handing it out whole.\n",
				indent, sz(w->candidate_size, a), sz(w->max_non_split_rounding, b));
		break;
	case CCA_WHY_EXPANDABLE_ONLY:
		g_string_append_printf(
			out,
			"%sOnly blocks of expandable segments would hold it, and this "
			"configuration does not use them.\n",
			indent);
		break;
	}
	if (w->kind != CCA_WHY_FITS && w->largest_free_other >= w->size)
		g_string_append_printf(out,
				       "%sAnother stream had a free block of %s, but cached blocks "
				       "are never shared across streams.\n",
				       indent, sz(w->largest_free_other, a));
	if (w->pending_bytes)
		g_string_append_printf(out,
				       "%s%s of this stream's blocks were still waiting for "
				       "record_stream frees to complete.\n",
				       indent, sz(w->pending_bytes, a));
}

static void
explain_segment_rule(GString *out, const CcaRequestRecord *r, const char *indent)
{
	const CcaRequestWhy *w = &r->why;
	char a[32], b[32];
	if (w->expandable) {
		g_string_append_printf(out,
				       "%sWith expandable segments it maps %s of pages onto the "
				       "stream's %s-pool segment instead of a new cudaMalloc.\n",
				       indent, sz(r->segment_bytes, a), pool_name(w->small_pool));
		return;
	}
	if (w->small_pool)
		g_string_append_printf(
			out,
			"%sSmall-pool requests (up to 1 MiB) get a 2 MiB segment that "
			"later small requests share.\n",
			indent);
	else if (w->size < CCA_MIN_LARGE_ALLOC)
		g_string_append_printf(
			out,
			"%sRequests between 1 and 10 MiB get a %s segment (the large "
			"segment size) that later requests share: %s is left over.\n",
			indent, sz(w->alloc_size, a), sz(w->alloc_size - w->size, b));
	else
		g_string_append_printf(out,
				       "%sRequests of 10 MiB or more get a segment of their own, "
				       "rounded up to 2 MiB: %s.\n",
				       indent, sz(w->alloc_size, a));
}

static void
explain_oom(GString *out, const CcaRequestRecord *r, const char *indent)
{
	const CcaRequestWhy *w = &r->why;
	char a[32], b[32], c[32];
	if (w->allowed_maximum)
		g_string_append_printf(out,
				       "%sA new segment of %s would take the %s reserved past the "
				       "memory-fraction cap of %s.\n",
				       indent, sz(w->alloc_size, a), sz(w->reserved, b),
				       sz(w->allowed_maximum, c));
	else
		g_string_append_printf(out,
				       "%sThe device could not provide a new segment of %s (%s "
				       "reserved).\n",
				       indent, sz(w->alloc_size, a), sz(w->reserved, b));
	if (r->releases)
		g_string_append_printf(out,
				       "%sReleasing every wholly free cached segment (%s) did not "
				       "make room.\n",
				       indent, sz(r->released_bytes, a));
	if (r->cascade_valid && cca_explain_private_pool(r->cascade.pool_id)) {
		if (!r->cascade.release_all_ran && w->cached_bytes)
			g_string_append_printf(
				out,
				"%sThe cache held %s in wholly free segments, but "
				"release_cached_blocks does not run while a capture or a "
				"use_mem_pool region is underway, and no other pool's "
				"block serves this pool's request.\n",
				indent, sz(w->cached_bytes, a));
		return;
	}
	if (w->stranded_bytes)
		g_string_append_printf(out,
				       "%s%s was free but stranded in split blocks of %u segment%s "
				       "that also hold live tensors; the largest free block on the "
				       "stream was %s.\n",
				       indent, sz(w->stranded_bytes, a), w->stranded_segments,
				       w->stranded_segments == 1 ? "" : "s",
				       sz(w->largest_free_stream, b));
	if (w->stranded_bytes + w->cached_bytes >= w->size)
		g_string_append_printf(out,
				       "%sIn total the cache held %s free, more than the %s "
				       "requested: a defragmented cache would have served it.\n",
				       indent, sz(w->stranded_bytes + w->cached_bytes, a),
				       sz(w->size, b));
}

/* Why the cudaMalloc (or page map) of R's malloc was refused. */
static const char *
refusal(const CcaRequestRecord *r, bool by_cap)
{
	if (by_cap)
		return "would pass the memory-fraction cap";
	if (r->why.expandable)
		return "(a page map) found the device full";
	return "found the device full";
}

/* The releases of a request that got its memory, by the stage that made
 * them (the compact account of `explain`'s list). */
static void
explain_releases(GString *out, const CcaRequestRecord *r, const char *indent)
{
	char a[32], b[32], c[32];
	const CcaCascade *k = &r->cascade;
	if (!r->cascade_valid) {
		g_string_append_printf(out, "%sThe allocator released %u cached segment%s (%s).\n",
				       indent, r->releases, r->releases == 1 ? "" : "s",
				       sz(r->released_bytes, a));
		return;
	}
	if (k->gc_released)
		g_string_append_printf(
			out,
			"%sGarbage collection (garbage_collect_cached_blocks) first released %u "
			"unsplit large-pool block%s (%s): reserved memory (%s) was past "
			"garbage_collection_threshold of the cap (%s).\n",
			indent, k->gc_released, k->gc_released == 1 ? "" : "s",
			sz(k->gc_released_bytes, a), sz(k->gc_reserved_before, b),
			sz(k->gc_threshold, c));
	if (k->oversize_released)
		g_string_append_printf(
			out,
			"%sThe first cudaMalloc %s, so release_available_cached_blocks released %u "
			"cached block%s of max_split_size or more (%s)%s.\n",
			indent, refusal(r, k->first_refused_by_cap), k->oversize_released,
			k->oversize_released == 1 ? "" : "s", sz(k->oversize_released_bytes, a),
			k->oversize_alloc_tried
				? " and tried again"
				: ", less than the request, so it reported failure and did not try "
				  "again (the blocks stay released)");
	if (k->release_all_ran)
		g_string_append_printf(
			out,
			"%sThe cudaMalloc %s, so release_cached_blocks synchronized the streams and "
			"released every wholly free cached segment of the default pools and the "
			"freeable private pools (%u, %s), then tried once more (num_alloc_retries).\n",
			indent, refusal(r, k->first_refused_by_cap), k->release_all_released,
			sz(k->release_all_bytes, a));
}

void
cca_explain_append_cascade(GString *out, const CcaRequestRecord *r, const char *indent)
{
	char a[32], b[32], c[32], d[32];
	if (!r->cascade_valid)
		return;
	const CcaCascade *k = &r->cascade;
	const CcaRequestWhy *w = &r->why;
	const char *map = w->expandable ? "map" : "cudaMalloc";
	int n = 1;
	g_string_append_printf(out, "%sStage by stage (DeviceCachingAllocator::malloc):\n", indent);
	if (k->cache_hit) {
		g_string_append_printf(out,
				       "%s  %d. get_free_block: a cached block serves it; nothing "
				       "else runs.\n",
				       indent, n);
		return;
	}
	if (cca_explain_private_pool(k->pool_id))
		g_string_append_printf(
			out,
			"%s  %d. get_free_block: no cached block of private pool (%" G_GINT64_FORMAT
			", %" G_GINT64_FORMAT ")'s %s pool on stream %" G_GUINT64_FORMAT
			" serves it.\n",
			indent, n++, k->pool_id[0], k->pool_id[1], pool_name(w->small_pool),
			w->stream);
	else
		g_string_append_printf(
			out,
			"%s  %d. get_free_block: no cached block of the %s pool on stream "
			"%" G_GUINT64_FORMAT " serves it.\n",
			indent, n++, pool_name(w->small_pool), w->stream);
	if (!k->gc_ran)
		g_string_append_printf(
			out,
			"%s  %d. garbage_collect_cached_blocks: skipped (it runs only "
			"with garbage_collection_threshold under a memory fraction).\n",
			indent, n++);
	else if (k->gc_reserved_before <= k->gc_threshold)
		g_string_append_printf(
			out,
			"%s  %d. garbage_collect_cached_blocks: nothing to do, reserved "
			"%s is within the threshold (%s).\n",
			indent, n++, sz(k->gc_reserved_before, a), sz(k->gc_threshold, b));
	else
		g_string_append_printf(
			out,
			"%s  %d. garbage_collect_cached_blocks: reserved %s is past the threshold "
			"(%s), so it released %u unsplit large-pool block%s (%s): in each pass every "
			"one whose age (the large pool's lookups since it was freed) was at least the "
			"average, without stopping at the %s excess; another pass only while less "
			"than that was reclaimed; never split blocks, never the small pool.\n",
			indent, n++, sz(k->gc_reserved_before, a), sz(k->gc_threshold, b),
			k->gc_released, k->gc_released == 1 ? "" : "s", sz(k->gc_released_bytes, c),
			sz(k->gc_reserved_before - k->gc_threshold, d));
	if (k->first_ok && w->expandable) {
		g_string_append_printf(out,
				       "%s  %d. alloc_block: mapped %s of pages onto the stream's "
				       "reservation (num_device_alloc + 1).\n",
				       indent, n, sz(r->segment_bytes, a));
		return;
	}
	if (k->first_ok) {
		g_string_append_printf(
			out,
			"%s  %d. alloc_block: %s of %s succeeded (num_device_alloc + "
			"1).\n",
			indent, n, map, sz(k->alloc_size, a));
		return;
	}
	g_string_append_printf(out, "%s  %d. alloc_block: %s of %s refused: it %s.\n", indent, n++,
			       map, sz(k->alloc_size, a), refusal(r, k->first_refused_by_cap));
	if (!k->oversize_ran)
		g_string_append_printf(out,
				       "%s  %d. release_available_cached_blocks: skipped (it runs "
				       "only with max_split_size_mb).\n",
				       indent, n++);
	else {
		g_string_append_printf(
			out,
			"%s  %d. release_available_cached_blocks: %s (max_split_size %s): "
			"released %u (%s)%s.\n",
			indent, n++,
			k->oversize_released == 1 && k->oversize_released_bytes >= w->size
				? "the smallest cached block of the stream at least as large as "
				  "the request and at least max_split_size"
				: "no single cached block of max_split_size or more was as large "
				  "as the request, so the largest ones, largest first, until the "
				  "request's size was freed",
			sz(w->max_split_size, a), k->oversize_released,
			sz(k->oversize_released_bytes, b),
			k->oversize_alloc_tried ? "" : "; not enough, so no second cudaMalloc");
		if (k->oversize_alloc_tried) {
			if (k->oversize_alloc_ok) {
				g_string_append_printf(
					out, "%s  %d. alloc_block again: succeeded.\n", indent, n);
				return;
			}
			g_string_append_printf(out, "%s  %d. alloc_block again: refused.\n", indent,
					       n++);
		}
	}
	if (!k->release_all_ran) {
		g_string_append_printf(out,
				       "%s  %d. release_cached_blocks: skipped (a capture or a "
				       "use_mem_pool region was underway).\n",
				       indent, n++);
	} else {
		g_string_append_printf(
			out,
			"%s  %d. release_cached_blocks: synchronize_and_free_events completed %u "
			"pending free%s (num_sync_all_streams + 1), then every wholly free cached "
			"segment of the default pools (every stream) and of the freeable private "
			"pools was released: %u (%s).\n",
			indent, n++, k->synced, k->synced == 1 ? "" : "s", k->release_all_released,
			sz(k->release_all_bytes, a));
		if (k->retry_ok) {
			g_string_append_printf(out,
					       "%s  %d. alloc_block(isRetry): succeeded "
					       "(num_alloc_retries + 1).\n",
					       indent, n);
			return;
		}
		g_string_append_printf(out,
				       "%s  %d. alloc_block(isRetry): refused again "
				       "(num_alloc_retries + 1): it %s.\n",
				       indent, n++, refusal(r, k->retry_refused_by_cap));
	}
	g_string_append_printf(out,
			       "%s  %d. out of memory: an oom entry, num_ooms + 1, "
			       "OutOfMemoryError.\n",
			       indent, n);
}

void
cca_explain_append_request(GString *out, const CcaRequestRecord *r, const char *indent)
{
	char a[32], b[32];
	const CcaRequestWhy *w = &r->why;
	bool recorded_oom = r->request.action == CCA_ACTION_OOM;
	g_string_append_printf(out,
			       "%sevent %" G_GUINT64_FORMAT ": %s of %s (%" G_GUINT64_FORMAT
			       " B) on stream %" G_GUINT64_FORMAT " -> ",
			       indent, r->index, recorded_oom ? "request (recorded oom)" : "alloc",
			       sz(r->request.size, a), r->request.size, r->request.stream);
	if (r->oom)
		g_string_append(out, "OUT OF MEMORY");
	else if (r->segments)
		g_string_append_printf(out, "%s %s", w->expandable ? "mapped" : "cudaMalloc",
				       sz(r->segment_bytes, b));
	else
		g_string_append(out, "a cached block");
	if (r->retries)
		g_string_append_printf(out, " after %" G_GINT64_FORMAT " retr%s", r->retries,
				       r->retries == 1 ? "y" : "ies");
	g_string_append_c(out, '\n');
	if (!r->why_valid)
		return;
	g_autofree char *more = g_strconcat(indent, "  ", NULL);
	explain_rounding(out, w, more);
	g_string_append_printf(out, "%sIt belongs to the %s pool (%s).\n", more,
			       pool_name(w->small_pool),
			       w->small_pool ? "blocks up to 1 MiB" : "blocks over 1 MiB");
	if (r->cascade_valid && cca_explain_private_pool(r->cascade.pool_id)) {
		/* WHY looked at the default pools: the private pool's own account */
		g_autofree char *why = cca_explain_pool_reason(r->cascade.pool_id);
		g_string_append_printf(out, "%sIt went to %s.\n", more, why);
		g_string_append_printf(
			out,
			"%s%s: a private pool's blocks serve only its own "
			"requests, and the default pools' never serve them.\n",
			more,
			r->cascade.cache_hit
				? "A cached block of that pool served it"
				: "No cached block of that pool on the stream served it");
	} else {
		g_string_append_printf(out,
				       "%sIt went to the default pools: no capture of its stream "
				       "and no use_mem_pool region was underway (get_pool).\n",
				       more);
		explain_miss(out, r, more);
	}
	if (r->releases && !r->oom)
		explain_releases(out, r, more);
	if (r->oom)
		explain_oom(out, r, more);
	else if (r->segments)
		explain_segment_rule(out, r, more);
}

/* ------------------------------------------------------------- report */

/* The replay: every request that reserved memory or failed, and the
 * state at the peak with the stack of every live block. */
typedef struct {
	CcaExplainer *x;
	GArray *records; /* CcaRequestRecord: segments or oom */
	uint64_t kinds[5];
	uint64_t requests;
	uint64_t peak_reserved;
	uint64_t peak_index;
	bool have_peak;
	GHashTable *stacks;   /* live block address -> stack id + 1 */
	GArray *state;	      /* CcaStateSegment at the peak */
	GArray *state_stacks; /* uint32_t: stack of each block of STATE, in order */
	CcaFigures figures;   /* the peak moments (figures.h) */
	CcaPeak *peak;	      /* what made the peak (peak.h), from the same replay */
	const CcaExplainParams *params;
	CcaRequestRecord asked; /* request params->event, with one_event */
	bool have_asked;
	bool taking;	     /* the second replay: copies the state at the peak the first found */
	uint64_t large_page; /* an expandable large-pool page at the peak (large_segment_size) */
} Pass;

static void
pass_record(void *data, const CcaRequestRecord *r, const CcaAllocator *alloc)
{
	Pass *p = data;
	p->requests++;
	if (p->params->one_event && r->index == p->params->event) {
		p->asked = *r;
		p->have_asked = true;
	}
	if (r->segments == 0 && !r->oom)
		return;
	g_array_append_val(p->records, *r);
	if (r->segments && r->why_valid)
		p->kinds[r->why.kind]++;
}

static void
pass_before(void *data, uint64_t index, const CcaEvent *ev, const CcaAllocator *alloc)
{
	Pass *p = data;
	cca_explain_before(p->x, index, ev, alloc);
}

/* Copies the state now, the peak so far, with its blocks' stacks. */
static void
pass_take_peak(Pass *p, const CcaAllocator *alloc)
{
	cca_allocator_state_free(p->state);
	p->state = cca_allocator_state(alloc);
	p->large_page = cca_allocator_settings(alloc)->large_segment_size;
	g_array_set_size(p->state_stacks, 0);
	for (guint i = 0; i < p->state->len; i++) {
		const CcaStateSegment *s = &g_array_index(p->state, CcaStateSegment, i);
		for (size_t k = 0; k < s->n_blocks; k++) {
			const CcaStateBlock *blk = &s->blocks[k];
			uint32_t stack = 0;
			if (blk->state != CCA_BLOCK_INACTIVE) {
				gpointer sv = g_hash_table_lookup(p->stacks, &blk->address);
				stack = sv ? GPOINTER_TO_UINT(sv) - 1 : 0;
			}
			g_array_append_val(p->state_stacks, stack);
		}
	}
}

static void
pass_observer(void *data, uint64_t index, const CcaEvent *ev, const CcaAllocator *alloc)
{
	Pass *p = data;
	cca_peak_observe(p->peak, index, ev, alloc);
	if (p->taking) {
		if (p->have_peak && index == p->peak_index)
			pass_take_peak(p, alloc);
		return;
	}
	cca_explain_observe(p->x, index, ev, alloc);
	if (cca_figures_observe(&p->figures, index, ev, alloc) & CCA_FIGURES_RESERVED_PEAK) {
		p->peak_reserved = p->figures.reserved_peak.reserved;
		p->peak_index = index;
		p->have_peak = true;
	}
}

static void
pass_model(void *data, uint64_t cause, const CcaEvent *trace, const CcaEvent *ev)
{
	Pass *p = data;
	cca_peak_model_event(p->peak, cause, trace, ev);
	if (!p->taking) {
		cca_explain_model_event(p->x, cause, trace, ev);
		return;
	}
	if (ev->action == CCA_ACTION_ALLOC) {
		uint64_t *key = g_new(uint64_t, 1);
		*key = ev->addr;
		g_hash_table_replace(p->stacks, key,
				     GUINT_TO_POINTER((trace ? trace->stack : 0) + 1));
	} else if (ev->action == CCA_ACTION_FREE_COMPLETED) {
		g_hash_table_remove(p->stacks, &ev->addr);
	}
}

typedef struct {
	char *label;
	double bytes; /* stranded free bytes attributed */
	uint64_t blocks;
} Rank;

static void
rank_add(GHashTable *t, const char *label, double bytes)
{
	Rank *r = g_hash_table_lookup(t, label);
	if (!r) {
		r = g_new0(Rank, 1);
		r->label = g_strdup(label);
		g_hash_table_insert(t, r->label, r);
	}
	r->bytes += bytes;
	r->blocks++;
}

static void
rank_free(gpointer p)
{
	Rank *r = p;
	g_free(r->label);
	g_free(r);
}

static gint
rank_compare(gconstpointer a, gconstpointer b)
{
	const Rank *x = *(Rank *const *)a, *y = *(Rank *const *)b;
	if (x->bytes != y->bytes)
		return x->bytes < y->bytes ? 1 : -1;
	return strcmp(x->label, y->label);
}

static void
rank_print(GString *out, GHashTable *t, guint top, const char *what)
{
	GPtrArray *rows = g_ptr_array_new();
	GHashTableIter it;
	gpointer value;
	g_hash_table_iter_init(&it, t);
	while (g_hash_table_iter_next(&it, NULL, &value))
		g_ptr_array_add(rows, value);
	g_ptr_array_sort(rows, rank_compare);
	char a[32];
	for (guint i = 0; i < rows->len && i < top; i++) {
		const Rank *r = g_ptr_array_index(rows, i);
		g_string_append_printf(out, "    %12s  %6" G_GUINT64_FORMAT " %s%s  %s\n",
				       sz((uint64_t)(r->bytes + 0.5), a), r->blocks, what,
				       r->blocks == 1 ? " " : "s", r->label);
	}
	if (rows->len > top)
		g_string_append_printf(out, "    (%u more)\n", rows->len - top);
	g_ptr_array_unref(rows);
}

static void
append_peak(GString *out, const CcaSnapshot *snap, const Pass *p, const CcaExplainParams *params)
{
	char a[32], b[32], c[32], d[32], e[32];
	uint64_t reserved = 0, allocated = 0, requested = 0, pending = 0, stranded = 0, cached = 0;
	uint32_t stranded_segs = 0, cached_segs = 0;
	GHashTable *by_size = g_hash_table_new_full(g_str_hash, g_str_equal, NULL, rank_free);
	GHashTable *by_site = g_hash_table_new_full(g_str_hash, g_str_equal, NULL, rank_free);
	bool frames = false;
	GString *label = g_string_new(NULL);
	guint nth = 0; /* blocks before segment I: its first in p->state_stacks */
	for (guint i = 0; i < p->state->len; i++) {
		const CcaStateSegment *s = &g_array_index(p->state, CcaStateSegment, i);
		const uint32_t *stacks = &g_array_index(p->state_stacks, uint32_t, nth);
		nth += (guint)s->n_blocks;
		uint64_t free = 0, live = 0;
		reserved += s->total_size;
		for (size_t k = 0; k < s->n_blocks; k++) {
			const CcaStateBlock *blk = &s->blocks[k];
			if (blk->state == CCA_BLOCK_INACTIVE) {
				free += blk->size;
				continue;
			}
			live += blk->size;
			if (blk->state == CCA_BLOCK_ACTIVE_ALLOCATED) {
				allocated += blk->size;
				requested += blk->requested_size;
			} else {
				pending += blk->size;
			}
		}
		if (live == 0) {
			cached += free;
			cached_segs++;
			continue;
		}
		if (free == 0)
			continue;
		if (s->is_expandable) {
			/* empty_cache() unmaps every whole page of a free block
			 * (release_blocks, unmap_block) even beside live blocks:
			 * those pages are releasable, the rest of the block is not */
			uint64_t page = cca_pytorch_expandable_page(s->is_small, p->large_page);
			uint64_t pages = 0;
			for (size_t k = 0; page && k < s->n_blocks; k++) {
				const CcaStateBlock *blk = &s->blocks[k];
				if (blk->state != CCA_BLOCK_INACTIVE)
					continue;
				uint64_t off = blk->address - s->address;
				uint64_t lo = (off + page - 1) / page * page;
				uint64_t hi = (off + blk->size) / page * page;
				pages += hi > lo ? hi - lo : 0;
			}
			if (pages) {
				cached += pages;
				cached_segs++;
				free -= pages;
				if (free == 0)
					continue;
			}
		}
		stranded += free;
		stranded_segs++;
		for (size_t k = 0; k < s->n_blocks; k++) {
			const CcaStateBlock *blk = &s->blocks[k];
			if (blk->state == CCA_BLOCK_INACTIVE)
				continue;
			double share = (double)free * (double)blk->size / (double)live;
			g_string_printf(label, "requests of %s (%" G_GUINT64_FORMAT " B)",
					sz(blk->requested_size, a), blk->requested_size);
			rank_add(by_size, label->str, share);
			uint32_t stack = stacks[k];
			g_string_truncate(label, 0);
			cca_stack_append(label, snap, stack);
			if (stack != CCA_ID_NONE)
				frames = true;
			rank_add(by_site, label->str, share);
		}
	}
	g_string_append_printf(out,
			       "\nAt the reserved peak (after event %" G_GUINT64_FORMAT
			       "): %s reserved in %u segments\n",
			       p->peak_index, sz(reserved, a), p->state->len);
	g_string_append_printf(out, "  %-44s %12s\n", "allocated to tensors (requested bytes)",
			       sz(requested, a));
	g_string_append_printf(out, "  %-44s %12s\n", "allocated beyond requests (rounding, tails)",
			       sz(allocated - requested, b));
	if (pending)
		g_string_append_printf(out, "  %-44s %12s\n", "freed, waiting for record_stream",
				       sz(pending, c));
	g_string_append_printf(out, "  %-44s %12s  (%u segments)\n",
			       "free, stranded beside live blocks", sz(stranded, d), stranded_segs);
	g_string_append_printf(out, "  %-44s %12s  (%u segments)\n",
			       "free, releasable (segments, whole pages)", sz(cached, e),
			       cached_segs);
	if (stranded) {
		g_string_append(out,
				"  Request sizes whose live blocks strand the most free "
				"memory (a segment's free bytes shared by its live blocks):\n");
		rank_print(out, by_size, params->top, "block");
		if (frames) {
			g_string_append(out, "  Call sites that strand the most free memory:\n");
			rank_print(out, by_site, params->top, "block");
		} else {
			g_string_append(out, "  (the trace has no frames: record with "
					     "_record_memory_history(context=\"all\") to see call "
					     "sites)\n");
		}
	}
	g_string_free(label, TRUE);
	g_hash_table_destroy(by_size);
	g_hash_table_destroy(by_site);
}

static const char *const kind_text[] = {
	[CCA_WHY_FITS] = "a cached block fit, but empty_cache() had just released it",
	[CCA_WHY_EMPTY_POOL] = "the pool had no free block on the stream",
	[CCA_WHY_TOO_SMALL] = "every free block on the stream was too small",
	[CCA_WHY_OVERSIZE] = "the max_split_size rules refused the block that fit",
	[CCA_WHY_EXPANDABLE_ONLY] = "only expandable-segment blocks fit",
};

static void
append_summary(GString *out, const CcaReplayResult *res, const Pass *pass)
{
	char a[32], b[32], c[32];
	const CcaStats *st = &res->stats;
	uint64_t mallocs = 0, bytes = 0, ooms = 0;
	for (guint i = 0; i < pass->records->len; i++) {
		const CcaRequestRecord *r = &g_array_index(pass->records, CcaRequestRecord, i);
		mallocs += r->segments;
		bytes += r->segment_bytes;
		ooms += r->oom;
	}
	g_string_append_printf(out,
			       "%" G_GUINT64_FORMAT " requests; %" G_GUINT64_FORMAT
			       " of them reserved new memory (%s in %" G_GUINT64_FORMAT
			       " cudaMalloc/map calls):\n",
			       pass->requests, pass->records->len - ooms, sz(bytes, a), mallocs);
	for (int k = 0; k < 5; k++)
		if (pass->kinds[k])
			g_string_append_printf(out, "  %6" G_GUINT64_FORMAT "  %s\n",
					       pass->kinds[k], kind_text[k]);
	g_string_append_printf(out,
			       "Peak reserved %s against peak allocated %s: the cache held %s "
			       "(%.1f %% of its peak) more than the tensors %s needed at once.\n",
			       sz((uint64_t)st->reserved_bytes[CCA_STAT_ALL].peak, a),
			       sz((uint64_t)st->allocated_bytes[CCA_STAT_ALL].peak, b),
			       sz((uint64_t)(st->reserved_bytes[CCA_STAT_ALL].peak -
					     st->allocated_bytes[CCA_STAT_ALL].peak),
				  c),
			       st->reserved_bytes[CCA_STAT_ALL].peak
				       ? 100.0 *
						 (double)(st->reserved_bytes[CCA_STAT_ALL].peak -
							  st->allocated_bytes[CCA_STAT_ALL].peak) /
						 (double)st->reserved_bytes[CCA_STAT_ALL].peak
				       : 0.0,
			       res->start_reconstructed ? "within the window" : "ever");
	g_string_append_printf(out,
			       "%" G_GINT64_FORMAT " alloc retr%s, %" G_GINT64_FORMAT
			       " OOM%s, %" G_GUINT64_FORMAT " empty_cache() call%s.\n",
			       st->num_alloc_retries, st->num_alloc_retries == 1 ? "y" : "ies",
			       st->num_ooms, st->num_ooms == 1 ? "" : "s", res->empty_cache_calls,
			       res->empty_cache_calls == 1 ? "" : "s");
	if (res->recorded_calls_applied)
		g_string_append_printf(
			out,
			"ccasim-record saw the program's calls: %" G_GUINT64_FORMAT
			" empty_cache() (repeated here whether or not they freed anything) and %" G_GUINT64_FORMAT
			" settings, memory-fraction or stats-reset call%s, each applied where the "
			"program made it.\n",
			res->recorded_empty_cache_calls,
			res->recorded_calls_applied - res->recorded_empty_cache_calls,
			res->recorded_calls_applied - res->recorded_empty_cache_calls == 1 ? ""
											   : "s");
	if (res->oom_before_window)
		g_string_append(out, "The window's start holds more than the cap or the device: "
				     "the program could not have reached it, and nothing was "
				     "replayed.\n");
	else if (res->stopped_by_oom)
		g_string_append_printf(
			out,
			"The replay stopped at the first OOM (event %" G_GUINT64_FORMAT
			"); --keep-going replays past it.\n",
			res->oom_event);
}

/* A lab's request: the line that made it, above its account. */
static void
append_lab_line(GString *out, const CcaSnapshot *snap, const CcaRequestRecord *r)
{
	const char *line = cca_lab_event_line(snap, &r->request);
	if (line)
		g_string_append_printf(out, "  (made by %s)\n", line);
}

gboolean
cca_explain_run(const CcaSnapshot *snap, const CcaReplayOptions *options,
		const CcaExplainParams *params, GString *out, GError **error)
{
	Pass pass = {
		.records = g_array_new(FALSE, FALSE, sizeof(CcaRequestRecord)),
		.stacks = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL),
		.state_stacks = g_array_new(FALSE, FALSE, sizeof(uint32_t)),
		.params = params,
	};
	pass.x = cca_explain_new(pass_record, &pass);
	pass.peak = cca_peak_new(snap, options->device);
	CcaReplayOptions opt = *options;
	g_autoptr(CcaPlan) own_plan = NULL;
	if (!opt.plan) { /* both replays from one plan */
		own_plan = cca_plan_new(snap, options->device, options->pytorch_version,
					options->rewind, error);
		if (!own_plan) {
			cca_explain_free(pass.x);
			g_hash_table_destroy(pass.stacks);
			g_array_free(pass.records, TRUE);
			g_array_free(pass.state_stacks, TRUE);
			cca_peak_free(pass.peak);
			return FALSE;
		}
		opt.plan = own_plan;
	}
	opt.before_request = pass_before;
	opt.before_request_data = &pass;
	opt.observer = pass_observer;
	opt.observer_data = &pass;
	opt.on_model_event = pass_model;
	opt.on_model_event_data = &pass;
	/* the first replay explains and finds the moments; the second, stopped
	 * after the last of them, copies the state at each (once, however
	 * often the peaks rose) */
	CcaReplayResult res;
	cca_peak_begin_find(pass.peak);
	gboolean ok = cca_replay_run(snap, &opt, &res, error);
	uint64_t stop = ok ? cca_peak_begin_take(pass.peak) : 0;
	if (ok && pass.have_peak && pass.peak_index + 1 > stop)
		stop = pass.peak_index + 1;
	if (ok && stop > 0) {
		CcaReplayResult again;
		pass.taking = true;
		opt.before_request = NULL;
		opt.stop_after = stop;
		ok = cca_replay_run(snap, &opt, &again, error);
		if (ok)
			cca_replay_result_clear(&again);
		else
			cca_replay_result_clear(&res);
	}
	cca_explain_free(pass.x);
	g_hash_table_destroy(pass.stacks);
	if (!ok) {
		g_array_free(pass.records, TRUE);
		g_array_free(pass.state_stacks, TRUE);
		cca_allocator_state_free(pass.state);
		cca_peak_free(pass.peak);
		return FALSE;
	}
	if (params->result) {
		*params->result = res;
		params->result->check_message = g_strdup(res.check_message);
	}
	if (params->one_event) {
		/* a lab's events are in memory; a compact trace's are no lab's */
		const char *lab_line =
			snap->events && snap->events[options->device] &&
					params->event < snap->n_events[options->device]
				? cca_lab_event_line(snap,
						     &g_array_index(snap->events[options->device],
								    CcaEvent, params->event))
				: NULL;
		if (lab_line)
			g_string_append_printf(out, "(made by %s)\n", lab_line);
		if (pass.have_asked) {
			cca_explain_append_request(out, &pass.asked, "");
			cca_explain_append_cascade(out, &pass.asked, "");
		} else if (res.stopped_by_oom && params->event > res.oom_event) {
			g_string_append_printf(
				out,
				"The replay stopped at the OOM of event %" G_GUINT64_FORMAT
				", before event %" G_GUINT64_FORMAT " (--keep-going goes on).\n",
				res.oom_event, params->event);
		} else {
			g_string_append_printf(
				out,
				"Event %" G_GUINT64_FORMAT
				" is no request (alloc or oom entry): `ccasim step --at "
				"%" G_GUINT64_FORMAT "` shows what it did.\n",
				params->event, params->event);
		}
		cca_replay_result_clear(&res);
		g_array_free(pass.records, TRUE);
		g_array_free(pass.state_stacks, TRUE);
		cca_allocator_state_free(pass.state);
		cca_peak_free(pass.peak);
		return TRUE;
	}
	if (res.start_reconstructed)
		cca_text_wrap(out, cca_report_window_peaks() + 2, CCA_TEXT_COLUMNS, 2);
	append_summary(out, &res, &pass);
	cca_figures_append_text(out, &res.figures, &res.stats, "  ");

	guint listed = 0, n_mallocs = 0;
	for (guint i = 0; i < pass.records->len; i++)
		n_mallocs += !g_array_index(pass.records, CcaRequestRecord, i).oom;
	if (n_mallocs) {
		if (params->limit && n_mallocs > params->limit)
			g_string_append_printf(
				out,
				"\nWhy memory was reserved (the first %u of %u; --limit 0 "
				"lists all):\n",
				params->limit, n_mallocs);
		else
			g_string_append(out, "\nWhy memory was reserved:\n");
	}
	for (guint i = 0; i < pass.records->len; i++) {
		const CcaRequestRecord *r = &g_array_index(pass.records, CcaRequestRecord, i);
		if (r->oom || (params->limit && listed >= params->limit))
			continue;
		listed++;
		append_lab_line(out, snap, r);
		cca_explain_append_request(out, r, "  ");
	}
	guint ooms = 0;
	for (guint i = 0; i < pass.records->len; i++) {
		const CcaRequestRecord *r = &g_array_index(pass.records, CcaRequestRecord, i);
		if (!r->oom)
			continue;
		if (ooms++ == 0)
			g_string_append(out, "\nWhy the allocator ran out of memory:\n");
		if (ooms <= (params->limit ? params->limit : G_MAXUINT)) {
			append_lab_line(out, snap, r);
			cca_explain_append_request(out, r, "  ");
		}
	}

	if (pass.have_peak)
		append_peak(out, snap, &pass, params);
	g_string_append(out, "\nWhat made the peak (as `ccasim peak` shows it):\n");
	cca_peak_append_text(out, pass.peak, params->top);
	cca_peak_free(pass.peak);
	cca_replay_result_clear(&res);
	g_array_free(pass.records, TRUE);
	g_array_free(pass.state_stacks, TRUE);
	cca_allocator_state_free(pass.state);
	return TRUE;
}
