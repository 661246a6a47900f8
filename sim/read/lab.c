/* lab.c - a lab program read as a trace (lab.h, doc/lab.md).
 *
 * One pass over the lines: each command drives the allocator model
 * directly (alloc -> malloc, free -> free, empty_cache), and the model's
 * emit callback appends the entries it records to the snapshot's one
 * device.  Tensors are numbered from 1 in the order they are allocated;
 * a number names the same tensor for the whole program.
 *
 * Invariants: a live tensor has a block in the model; a freed one has
 * none (CCA_NIL) and cannot be freed again.  The live tensors are also
 * linked in number order (LabTensor's prev and next), so that `free last`
 * finds the highest live number in constant time and `free all` visits
 * only live tensors, however many were freed before.
 */
#include "config.h"

#include "lab.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "allocator.h"
#include "device.h"
#include "simdevice.h"
#include "number.h"
#include "settings.h"
#include "size.h"

/* Tensors one lab may allocate, and the largest request: a lab is a
 * classroom experiment, not a workload. */
#define LAB_MAX_TENSORS 1000000u
#define LAB_MAX_REQUEST (UINT64_C(1) << 40)

/* One tensor: its block, and its live neighbours by number (0: none). */
typedef struct {
	CcaHandle handle; /* CCA_NIL once freed */
	uint32_t prev, next;
	uint64_t stream;     /* the stream it was allocated on */
	bool used_elsewhere; /* record_stream on another stream: its free is deferred */
} LabTensor;

/* A capture or a use_mem_pool region underway (captures_underway). */
typedef struct {
	bool capture;	 /* a graph capture: only its stream's requests go to the pool */
	uint64_t stream; /* the capture's stream */
	uint64_t outer;	 /* the stream current before the capture */
	uint32_t pool;	 /* the model's index of the pool */
	int64_t id[2];	 /* the pool's id */
} LabRegion;

/* Mempools and graphs a lab may name. */
#define LAB_MAX_POOLS 32u

typedef struct {
	const char *name;
	guint line;
	CcaSnapshot *snap;
	GArray *events;	      /* CcaEvent, the model's entries */
	GArray *tensors;      /* LabTensor per tensor number - 1 */
	uint32_t first, last; /* the lowest and highest live numbers; 0: none live */
	CcaSettings settings;
	bool have_settings;
	uint32_t release; /* `pytorch X.Y` (doc/lab.md), 0: none said */
	char *conf;
	CcaAllocator *alloc;
	CcaDevice *device;
	uint64_t stream;
	char *text;	 /* the current line, as written (for the entries' user_metadata) */
	GArray *pending; /* CcaHandle: frees waiting for another stream's work */
	GArray *regions; /* LabRegion, innermost last */
	bool mempool_made[LAB_MAX_POOLS + 1]; /* `mempool N` seen (MemPool created) */
	bool mempool_dead[LAB_MAX_POOLS + 1]; /* `release_mempool N` seen */
	uint32_t graphs;		      /* graphs captured so far */
	bool settings_changed;		      /* a `settings` line after the first command */
	char *first_conf;		      /* the settings the program started with */
} Lab;

static gboolean G_GNUC_PRINTF(3, 4) lab_fail(const Lab *lab, GError **error, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	g_autofree char *msg = g_strdup_vprintf(fmt, ap);
	va_end(ap);
	g_set_error(error, CCA_INPUT_ERROR, CCA_INPUT_ERROR_CORRUPT, "%s: line %u: %s", lab->name,
		    lab->line, msg);
	return FALSE;
}

static void
lab_record(void *data, const CcaEvent *event)
{
	Lab *lab = data;
	CcaEvent ev = *event;
	ev.time_us = (int64_t)lab->events->len; /* one microsecond an entry */
	if (lab->text) {
		/* the line that made the entry, for `step` and `explain` (doc/lab.md) */
		g_autofree char *meta = g_strdup_printf("lab line %u: %s", lab->line, lab->text);
		ev.user_metadata = cca_snapshot_intern(lab->snap, meta, strlen(meta));
	}
	g_array_append_val(lab->events, ev);
}

/* Appends the ccasim-record annotation "ccasim:KIND" with the model's
 * counts now (calls.h) and the fields EXTRA (" k=v ...", or ""). */
static void
lab_call(Lab *lab, const char *kind, const char *extra)
{
	const CcaStats *st = cca_allocator_stats(lab->alloc);
	g_autofree char *name =
		g_strdup_printf("ccasim:%s allocs=%" G_GINT64_FORMAT " frees=%" G_GINT64_FORMAT
				" ooms=%" G_GINT64_FORMAT "%s",
				kind, st->allocation[CCA_STAT_ALL].allocated,
				st->allocation[CCA_STAT_ALL].freed, st->num_ooms, extra);
	CcaAnnotation a = {
		.stage = cca_snapshot_intern(lab->snap, "START", 5),
		.name = cca_snapshot_intern(lab->snap, name, strlen(name)),
		.device = 0,
		.time_us = 0,
	};
	g_array_append_val(lab->snap->annotations, a);
}

/* TEXT as a record's field value: every byte outside A-Za-z0-9._:,/+-
 * as %XX (doc/recording.md, "The record format"). */
static char *
lab_enc(const char *text)
{
	GString *out = g_string_new(NULL);
	for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
		if (g_ascii_isalnum(*p) || strchr("._:,/+-", *p))
			g_string_append_c(out, (char)*p);
		else
			g_string_append_printf(out, "%%%02X", *p);
	}
	return g_string_free(out, FALSE);
}

/* The model, made at the first command that needs it (after `settings`). */
static void
lab_start(Lab *lab)
{
	if (lab->alloc)
		return;
	if (!lab->have_settings)
		cca_settings_init(&lab->settings);
	if (lab->release)
		lab->settings.pytorch_version = lab->release;
	CcaSimDeviceConfig dc = {.total_memory = CCA_H200_TOTAL_MEMORY,
				 .capacity = CCA_H200_TOTAL_MEMORY,
				 .address_model = CCA_ADDRESS_DRIVER};
	lab->device = cca_simdevice_new(&dc);
	CcaLimits limits = {0};
	lab->alloc = cca_allocator_new(&lab->settings, &limits, lab->device, lab_record, lab);
	/* the release, as ccasim-record's start record names torch's */
	if (lab->release) {
		/* with the conf it started with, which a later settings change
		 * needs (lab_start_record()) */
		g_autofree char *conf = lab_enc(lab->conf ? lab->conf : "");
		g_autofree char *extra = g_strdup_printf(
			" v=1 torch=%u.%u.0 conf=%s", lab->release / 100, lab->release % 100, conf);
		lab_call(lab, "start", extra);
	}
}

/* A size as cca_size_parse() reads it on the command line (K, M, G and
 * their KiB, MiB, GiB forms are powers of 1024, KB, MB, GB powers of
 * 1000; decimals that give whole bytes; no hex, no exponent), from 1
 * byte to 1 TiB (doc/lab.md). */
static gboolean
lab_size(const Lab *lab, const char *text, uint64_t *out, GError **error)
{
	g_autoptr(GError) local = NULL;
	uint64_t bytes = 0;
	if (!cca_size_parse(text, NULL, &bytes, &local))
		return lab_fail(lab, error, "%s", local->message);
	if (bytes < 1 || bytes > LAB_MAX_REQUEST)
		return lab_fail(lab, error, "size '%s': must be 1 byte to 1 TiB", text);
	*out = bytes;
	return TRUE;
}

static gboolean
lab_uint(const Lab *lab, const char *text, const char *what, uint64_t max, uint64_t *out,
	 GError **error)
{
	if (!g_ascii_isdigit(text[0]))
		return lab_fail(lab, error, "%s '%s' is no number", what, text);
	if (!cca_number_parse_u64(text, max, out))
		return lab_fail(lab, error, "%s '%s': expected a number up to %" G_GUINT64_FORMAT,
				what, text, max);
	return TRUE;
}

/* The pool a request on STREAM goes to (get_pool): the innermost region
 * whose filter takes it (a capture takes its own stream's requests, a
 * use_mem_pool region every request of the program's one thread), else
 * the default pool (0). */
static uint32_t
lab_pool(const Lab *lab, uint64_t stream)
{
	for (guint i = lab->regions->len; i-- > 0;) {
		const LabRegion *r = &g_array_index(lab->regions, LabRegion, i);
		if (!r->capture || r->stream == stream)
			return r->pool;
	}
	return 0;
}

/* process_events at the start of malloc: the frees waiting for another
 * stream complete (a lab launches no work, so the streams' events have
 * completed; gpu/lab-check.py synchronizes to make sure).  Skipped while
 * a capture or a use_mem_pool region is underway, as malloc skips it. */
static void
lab_process_events(Lab *lab)
{
	if (lab->regions->len > 0)
		return;
	for (guint i = 0; i < lab->pending->len; i++) {
		CcaHandle h = g_array_index(lab->pending, CcaHandle, i);
		if (cca_allocator_is_pending(lab->alloc, h))
			cca_allocator_complete_free(lab->alloc, h);
	}
	g_array_set_size(lab->pending, 0);
}

/* A number N of a `mempool N`, `release_mempool N` line: 1 to LAB_MAX_POOLS. */
static gboolean
lab_pool_number(const Lab *lab, char **w, guint n, uint64_t *out, GError **error)
{
	if (n != 2)
		return lab_fail(lab, error, "expected '%s N' (a pool number, 1 to %u)", w[0],
				LAB_MAX_POOLS);
	return lab_uint(lab, w[1], "pool", LAB_MAX_POOLS, out, error) &&
	       (*out > 0 || lab_fail(lab, error, "pool numbers start at 1"));
}

/* mempool N: `with torch.cuda.use_mem_pool(pool N):` (the MemPool made at
 * its first use, id (0, N)); `end` leaves it. */
static gboolean
lab_mempool(Lab *lab, char **w, guint n, GError **error)
{
	uint64_t k;
	if (!lab_pool_number(lab, w, n, &k, error))
		return FALSE;
	if (lab->mempool_dead[k])
		return lab_fail(lab, error, "pool %" G_GUINT64_FORMAT " was released", k);
	lab_start(lab);
	g_autofree char *f = g_strdup_printf(" pool=0,%" G_GUINT64_FORMAT, k);
	if (!lab->mempool_made[k]) {
		lab->mempool_made[k] = true;
		lab_call(lab, "mempool_create", f);
	}
	LabRegion r = {.capture = false, .id = {0, (int64_t)k}};
	int idx = cca_allocator_mempool(lab->alloc, r.id);
	if (idx <= 0)
		return lab_fail(lab, error, "too many pools");
	r.pool = (uint32_t)idx;
	lab_call(lab, "use_mem_pool_enter", f);
	g_array_append_val(lab->regions, r);
	return TRUE;
}

/* release_mempool N: the MemPool dies (`del pool`): ~MemPool releases
 * the pool and empties its cache (cca_allocator_mempool_release()). */
static gboolean
lab_release_mempool(Lab *lab, char **w, guint n, GError **error)
{
	uint64_t k;
	if (!lab_pool_number(lab, w, n, &k, error))
		return FALSE;
	if (!lab->mempool_made[k] || lab->mempool_dead[k])
		return lab_fail(lab, error, "no live pool %" G_GUINT64_FORMAT, k);
	for (guint i = 0; i < lab->regions->len; i++)
		if (g_array_index(lab->regions, LabRegion, i).id[1] == (int64_t)k &&
		    !g_array_index(lab->regions, LabRegion, i).capture)
			return lab_fail(lab, error,
					"pool %" G_GUINT64_FORMAT " is in use ('end' first)", k);
	if (lab->regions->len > 0)
		return lab_fail(lab, error, "release a pool outside every region ('end' first)");
	int64_t id[2] = {0, (int64_t)k};
	lab_start(lab);
	cca_allocator_mempool_release(lab->alloc, (uint32_t)cca_allocator_mempool(lab->alloc, id));
	lab->mempool_dead[k] = true;
	g_autofree char *f = g_strdup_printf(" pool=0,%" G_GUINT64_FORMAT, k);
	/* the recorder writes it when the object has died, after its release */
	lab_call(lab, "mempool_release", f);
	g_array_set_size(lab->pending, 0); /* its emptyCache synchronized */
	return TRUE;
}

/* capture S: `with torch.cuda.graph(g, stream=S):` a new graph, captured
 * on stream S into a pool of its own (id (G, 0)): torch.cuda.graph calls
 * empty_cache() first, then capture_begin; `end` calls capture_end and
 * returns to the stream current before.  The graph lives to the end. */
static gboolean
lab_capture(Lab *lab, char **w, guint n, GError **error)
{
	uint64_t s;
	if (n != 2)
		return lab_fail(lab, error, "expected 'capture S' (the capture's stream, not 0)");
	if (!lab_uint(lab, w[1], "stream", G_MAXINT64, &s, error))
		return FALSE;
	if (s == 0)
		return lab_fail(lab, error, "stream 0 (the default stream) cannot capture");
	for (guint i = 0; i < lab->regions->len; i++)
		if (g_array_index(lab->regions, LabRegion, i).capture)
			return lab_fail(lab, error, "a capture is underway already");
	if (lab->graphs >= LAB_MAX_POOLS)
		return lab_fail(lab, error, "more than %u graphs", LAB_MAX_POOLS);
	lab_start(lab);
	if (lab->regions->len == 0) {
		lab_call(lab, "empty_cache", "");
		cca_allocator_empty_cache(lab->alloc);
		g_array_set_size(lab->pending, 0);
	}
	if (lab->graphs == 0) {
		/* CUDAGraph::capture_begin registers the default CUDA generator
		 * with its first graph, which allocates the generator's seed and
		 * offset (two 8-byte int64 tensors) before beginAllocateToPool:
		 * on the capture stream, in the default pool, alive while a
		 * graph is (measured on the H200: graph.lab, pools.lab) */
		for (int i = 0; i < 2; i++) {
			lab_process_events(lab);
			if (cca_allocator_malloc_in(lab->alloc, 8, s, 0) == CCA_NIL)
				return lab_fail(lab, error,
						"the graph's generator state does not fit");
		}
	}
	LabRegion r = {.capture = true,
		       .stream = s,
		       .outer = lab->stream,
		       .id = {(int64_t)++lab->graphs, 0}};
	int idx = cca_allocator_mempool(lab->alloc, r.id);
	if (idx <= 0)
		return lab_fail(lab, error, "too many pools");
	r.pool = (uint32_t)idx;
	g_autofree char *f = g_strdup_printf(" pool=%u,0", lab->graphs);
	lab_call(lab, "capture_begin", f);
	g_array_append_val(lab->regions, r);
	lab->stream = s;
	return TRUE;
}

/* end: leaves the innermost capture or use_mem_pool region. */
static gboolean
lab_end(Lab *lab, guint n, GError **error)
{
	if (n != 1)
		return lab_fail(lab, error, "end takes nothing");
	if (lab->regions->len == 0)
		return lab_fail(lab, error, "no capture or mempool region to end");
	LabRegion r = g_array_index(lab->regions, LabRegion, lab->regions->len - 1);
	g_array_set_size(lab->regions, lab->regions->len - 1);
	g_autofree char *f =
		g_strdup_printf(" pool=%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT, r.id[0], r.id[1]);
	lab_call(lab, r.capture ? "capture_end" : "use_mem_pool_exit", f);
	if (r.capture)
		lab->stream = r.outer;
	return TRUE;
}

/* record_stream T S: tensor T is used on stream S too
 * (`t.record_stream(s)`); freeing it then waits for S's work.  A no-op
 * for the tensor's own stream, as in PyTorch. */
static gboolean
lab_record_stream(Lab *lab, char **w, guint n, GError **error)
{
	uint64_t k, s;
	if (n != 3)
		return lab_fail(lab, error, "expected 'record_stream T S' (a tensor, a stream)");
	if (!lab_uint(lab, w[1], "tensor", LAB_MAX_TENSORS, &k, error) ||
	    !lab_uint(lab, w[2], "stream", G_MAXINT64, &s, error))
		return FALSE;
	if (k == 0 || k > lab->tensors->len ||
	    g_array_index(lab->tensors, LabTensor, k - 1).handle == CCA_NIL)
		return lab_fail(lab, error, "tensor %" G_GUINT64_FORMAT " is not live", k);
	LabTensor *t = &g_array_index(lab->tensors, LabTensor, k - 1);
	if (s != t->stream)
		t->used_elsewhere = true;
	return TRUE;
}

/* fraction F: torch.cuda.set_per_process_memory_fraction(F). */
static gboolean
lab_fraction(Lab *lab, char **w, guint n, GError **error)
{
	if (n != 2)
		return lab_fail(lab, error, "expected 'fraction F' (0 < F <= 1)");
	char *end = NULL;
	double f = g_ascii_strtod(w[1], &end);
	if (!g_ascii_isdigit(w[1][0]) || end == w[1] || *end || !(f > 0.0) || f > 1.0)
		return lab_fail(lab, error, "fraction '%s': expected a number, 0 < F <= 1", w[1]);
	lab_start(lab);
	g_autofree char *field = g_strdup_printf(" fraction=%s", w[1]);
	lab_call(lab, "memory_fraction", field);
	cca_allocator_set_memory_fraction(lab->alloc, f);
	return TRUE;
}

/* settings CONF after the first command: _set_allocator_settings(CONF). */
static gboolean
lab_set_settings(Lab *lab, const char *conf, GError **error)
{
	g_auto(CcaSettings) s = {0};
	GError *local = NULL;
	cca_settings_copy(&s, cca_allocator_settings(lab->alloc));
	if (!cca_settings_parse_onto(&s, conf, &local)) {
		lab_fail(lab, error, "settings: %s", local->message);
		g_error_free(local);
		return FALSE;
	}
	g_autofree char *enc = lab_enc(conf);
	g_autofree char *field = g_strdup_printf(" settings=%s", enc);
	lab_call(lab, "set_allocator_settings", field);
	cca_allocator_set_settings(lab->alloc, &s);
	lab->settings_changed = true;
	return TRUE;
}

static gboolean
lab_alloc(Lab *lab, char **w, guint n, GError **error)
{
	uint64_t size = 0, count = 1;
	/* `alloc SIZE catch`: the program catches the OutOfMemoryError of a
	 * request that fails (an oom entry; no tensor number is taken) */
	bool catch = n == 3 && strcmp(w[2], "catch") == 0;
	if (n < 2 || n > 3)
		return lab_fail(lab, error,
				"expected 'alloc SIZE', 'alloc SIZE xN' or 'alloc SIZE catch'");
	if (!lab_size(lab, w[1], &size, error))
		return FALSE;
	if (n == 3 && !catch) {
		if (w[2][0] != 'x')
			return lab_fail(lab, error,
					"expected xN (a count) after the size, got '%s'", w[2]);
		if (!lab_uint(lab, w[2] + 1, "count", LAB_MAX_TENSORS, &count, error))
			return FALSE;
	}
	if (lab->tensors->len + count > LAB_MAX_TENSORS)
		return lab_fail(lab, error, "more than %u tensors", LAB_MAX_TENSORS);
	lab_start(lab);
	uint32_t pool = lab_pool(lab, lab->stream);
	for (uint64_t i = 0; i < count; i++) {
		lab_process_events(lab);
		CcaHandle h = cca_allocator_malloc_in(lab->alloc, size, lab->stream, pool);
		if (h == CCA_NIL && catch)
			return TRUE;
		if (h == CCA_NIL)
			return lab_fail(
				lab, error,
				"tensor %u (%s) does not fit: out of memory on the simulated "
				"H200 (139.80 GiB) or under the memory fraction",
				lab->tensors->len + 1, w[1]);
		LabTensor t = {.handle = h, .prev = lab->last, .next = 0, .stream = lab->stream};
		g_array_append_val(lab->tensors, t);
		uint32_t k = lab->tensors->len;
		if (lab->last)
			g_array_index(lab->tensors, LabTensor, lab->last - 1).next = k;
		else
			lab->first = k;
		lab->last = k;
	}
	return TRUE;
}

static gboolean
lab_free_one(Lab *lab, uint64_t k, GError **error)
{
	if (k == 0 || k > lab->tensors->len)
		return lab_fail(lab, error, "no tensor %" G_GUINT64_FORMAT " (%u allocated so far)",
				k, lab->tensors->len);
	LabTensor *t = &g_array_index(lab->tensors, LabTensor, k - 1);
	if (t->handle == CCA_NIL)
		return lab_fail(lab, error, "tensor %" G_GUINT64_FORMAT " is already free", k);
	/* free(): a block used on another stream waits for that stream's
	 * work (insert_events); process_events completes it later */
	cca_allocator_free_block(lab->alloc, t->handle, t->used_elsewhere);
	if (t->used_elsewhere)
		g_array_append_val(lab->pending, t->handle);
	t->handle = CCA_NIL;
	if (t->prev)
		g_array_index(lab->tensors, LabTensor, t->prev - 1).next = t->next;
	else
		lab->first = t->next;
	if (t->next)
		g_array_index(lab->tensors, LabTensor, t->next - 1).prev = t->prev;
	else
		lab->last = t->prev;
	t->prev = t->next = 0;
	return TRUE;
}

/* free all | free last [N] | free LIST (N or A-B, comma-separated). */
static gboolean
lab_free(Lab *lab, char **w, guint n, GError **error)
{
	if (n < 2)
		return lab_fail(lab, error, "expected 'free all', 'free last [N]' or 'free 1,3-5'");
	lab_start(lab);
	if (strcmp(w[1], "all") == 0 && n == 2) {
		/* lowest number first (doc/lab.md) */
		while (lab->first)
			if (!lab_free_one(lab, lab->first, error))
				return FALSE;
		return TRUE;
	}
	if (strcmp(w[1], "last") == 0 && n <= 3) {
		uint64_t count = 1;
		if (n == 3 && !lab_uint(lab, w[2], "count", LAB_MAX_TENSORS, &count, error))
			return FALSE;
		for (; lab->last && count > 0; count--)
			if (!lab_free_one(lab, lab->last, error))
				return FALSE;
		return TRUE;
	}
	if (n != 2)
		return lab_fail(lab, error, "expected one list of tensors, e.g. 'free 1,3-5'");
	g_auto(GStrv) items = g_strsplit(w[1], ",", -1);
	for (guint i = 0; items[i]; i++) {
		char *dash = strchr(items[i], '-');
		uint64_t lo, hi;
		if (dash)
			*dash = '\0';
		if (!lab_uint(lab, items[i], "tensor", LAB_MAX_TENSORS, &lo, error))
			return FALSE;
		hi = lo;
		if (dash && !lab_uint(lab, dash + 1, "tensor", LAB_MAX_TENSORS, &hi, error))
			return FALSE;
		if (hi < lo)
			return lab_fail(lab, error,
					"range %" G_GUINT64_FORMAT "-%" G_GUINT64_FORMAT
					" runs backwards",
					lo, hi);
		for (uint64_t k = lo; k <= hi; k++)
			if (!lab_free_one(lab, k, error))
				return FALSE;
	}
	return TRUE;
}

static gboolean
lab_line(Lab *lab, char *text, GError **error)
{
	char *hash = strchr(text, '#');
	if (hash)
		*hash = '\0';
	g_strstrip(text);
	if (*text == '\0')
		return TRUE;
	g_auto(GStrv) w = g_regex_split_simple("[ \t]+", text, 0, 0);
	guint n = g_strv_length(w);
	if (strcmp(w[0], "alloc") == 0)
		return lab_alloc(lab, w, n, error);
	if (strcmp(w[0], "free") == 0)
		return lab_free(lab, w, n, error);
	if (strcmp(w[0], "stream") == 0) {
		if (n != 2)
			return lab_fail(lab, error, "expected 'stream N'");
		return lab_uint(lab, w[1], "stream", G_MAXINT64, &lab->stream, error);
	}
	if (strcmp(w[0], "empty_cache") == 0) {
		if (n != 1)
			return lab_fail(lab, error, "empty_cache takes nothing");
		if (lab->regions->len > 0)
			return lab_fail(
				lab, error,
				"empty_cache inside a capture or mempool region ('end' first)");
		lab_start(lab);
		/* recorded as ccasim-record would: a call that may free nothing
		 * leaves no entry, and replays apply it where it was made */
		lab_call(lab, "empty_cache", "");
		cca_allocator_empty_cache(lab->alloc);
		g_array_set_size(lab->pending, 0); /* it synchronized */
		return TRUE;
	}
	if (strcmp(w[0], "record_stream") == 0)
		return lab_record_stream(lab, w, n, error);
	if (strcmp(w[0], "fraction") == 0)
		return lab_fraction(lab, w, n, error);
	if (strcmp(w[0], "mempool") == 0)
		return lab_mempool(lab, w, n, error);
	if (strcmp(w[0], "release_mempool") == 0)
		return lab_release_mempool(lab, w, n, error);
	if (strcmp(w[0], "capture") == 0)
		return lab_capture(lab, w, n, error);
	if (strcmp(w[0], "end") == 0)
		return lab_end(lab, n, error);
	if (strcmp(w[0], "pytorch") == 0) {
		if (n != 2)
			return lab_fail(lab, error, "expected 'pytorch X.Y'");
		if (lab->release || lab->have_settings || lab->alloc)
			return lab_fail(
				lab, error,
				"pytorch comes once, before settings and every other command");
		GError *local = NULL;
		if (!cca_settings_pytorch_version_parse(w[1], &lab->release, &local)) {
			lab_fail(lab, error, "pytorch: %s", local->message);
			g_error_free(local);
			return FALSE;
		}
		return TRUE;
	}
	if (strcmp(w[0], "settings") == 0) {
		if (n != 2)
			return lab_fail(lab, error,
					"expected 'settings KEY:VALUE,...' (no spaces)");
		if (lab->have_settings || lab->alloc) {
			/* a change mid-program */
			lab_start(lab);
			return lab_set_settings(lab, w[1], error);
		}
		GError *local = NULL;
		cca_settings_init(&lab->settings);
		if (lab->release)
			lab->settings.pytorch_version = lab->release;
		lab->have_settings = true;
		if (!cca_settings_parse(&lab->settings, w[1], &local)) {
			lab_fail(lab, error, "settings: %s", local->message);
			g_error_free(local);
			return FALSE;
		}
		lab->conf = g_strdup(w[1]);
		return TRUE;
	}
	g_autofree char *shown = g_strescape(w[0], NULL);
	return lab_fail(lab, error,
			"unknown command '%.40s' (alloc, free, stream, record_stream, empty_cache, "
			"settings, fraction, mempool, release_mempool, capture, end, pytorch)",
			shown);
}

/* A ccasim-record `start` record, first of all, with the settings the
 * program started with: a snapshot's allocator_settings are those at the
 * dump, and a replay takes the start's conf with the changes made since
 * (doc/recording.md). */
static void
lab_start_record(Lab *lab)
{
	g_autofree char *conf = lab_enc(lab->conf ? lab->conf : "");
	g_autofree char *name = g_strdup_printf(
		"ccasim:start allocs=0 frees=0 ooms=0 v=1 torch=2.11.0 conf=%s stacks=none", conf);
	CcaAnnotation a = {
		.stage = cca_snapshot_intern(lab->snap, "START", 5),
		.name = cca_snapshot_intern(lab->snap, name, strlen(name)),
		.device = 0,
		.time_us = 0,
	};
	g_array_prepend_val(lab->snap->annotations, a);
}

/* The lab's settings as a recording's allocator_settings. */
static void
lab_settings(Lab *lab)
{
	CcaRecordedSettings *r = &lab->snap->settings;
	/* those in force at the end, as a snapshot's allocator_settings */
	const CcaSettings *s = cca_allocator_settings(lab->alloc);
	r->present = true;
	r->conf = g_strdup(lab->conf ? lab->conf : "");
	r->max_split_size = s->max_split_size == UINT64_MAX ? -1 : (int64_t)s->max_split_size;
	r->garbage_collection_threshold = s->garbage_collection_threshold;
	r->expandable_segments = s->expandable_segments;
	r->pinned_num_register_threads = s->pinned_num_register_threads;
	r->release_lock_on_cudamalloc = s->release_lock_on_cudamalloc;
	r->pinned_use_cuda_host_register = s->pinned_use_cuda_host_register;
	/* a key 2.11 writes: the replay guesses 2.11's rules, the model's own */
	r->has_graph_capture_record_stream_reuse = true;
	r->graph_capture_record_stream_reuse = s->graph_capture_record_stream_reuse;
	memcpy(r->roundup_power2_divisions, s->roundup_power2_divisions,
	       sizeof r->roundup_power2_divisions);
}

/* The model's final state as the snapshot's segments. */
static void
lab_final_state(Lab *lab)
{
	CcaSnapshot *snap = lab->snap;
	GArray *state = cca_allocator_state(lab->alloc);
	for (guint i = 0; i < state->len; i++) {
		const CcaStateSegment *m = &g_array_index(state, CcaStateSegment, i);
		CcaSnapSegment seg = {.address = m->address,
				      .total_size = m->total_size,
				      .stream = m->stream,
				      .is_small = m->is_small,
				      .is_expandable = m->is_expandable,
				      .pool_id = {m->pool_id[0], m->pool_id[1]},
				      .first_block = snap->blocks->len,
				      .n_blocks = (uint32_t)m->n_blocks};
		for (size_t b = 0; b < m->n_blocks; b++) {
			const CcaStateBlock *x = &m->blocks[b];
			CcaSnapBlock sb = {.address = x->address,
					   .size = x->size,
					   .requested_size = x->requested_size,
					   .state = x->state};
			if (x->state != CCA_BLOCK_INACTIVE) {
				seg.allocated_size += x->size;
				seg.active_size += x->size;
				seg.requested_size += x->requested_size;
			}
			g_array_append_val(snap->blocks, sb);
		}
		g_array_append_val(snap->segments, seg);
	}
	cca_allocator_state_free(state);
}

CcaSnapshot *
cca_lab_load(const unsigned char *data, size_t len, const char *name, GError **error)
{
	Lab lab = {.name = name};
	lab.snap = cca_snapshot_new();
	lab.snap->source = g_strdup(name);
	lab.events = g_array_new(FALSE, FALSE, sizeof(CcaEvent));
	lab.tensors = g_array_new(FALSE, FALSE, sizeof(LabTensor));
	lab.pending = g_array_new(FALSE, FALSE, sizeof(CcaHandle));
	lab.regions = g_array_new(FALSE, FALSE, sizeof(LabRegion));
	gboolean ok = TRUE;
	if (memchr(data, '\0', len) != NULL) {
		lab.line = 1;
		for (size_t i = 0; i < len && data[i]; i++)
			lab.line += data[i] == '\n';
		ok = lab_fail(&lab, error, "a NUL byte: a lab is text");
	}
	size_t pos = 0;
	while (ok && pos < len) {
		const unsigned char *nl = memchr(data + pos, '\n', len - pos);
		size_t end = nl ? (size_t)(nl - data) : len;
		lab.line++;
		g_autofree char *text = g_strndup((const char *)data + pos, end - pos);
		if (!g_utf8_validate(text, -1, NULL))
			ok = lab_fail(&lab, error, "not UTF-8 text");
		else {
			g_autofree char *shown = g_strdup(text);
			char *hash = strchr(shown, '#');
			if (hash)
				*hash = '\0';
			lab.text = g_strstrip(shown);
			ok = lab_line(&lab, text, error);
			lab.text = NULL;
		}
		pos = end + 1;
	}
	if (ok && lab.regions->len > 0) {
		lab.line++;
		ok = lab_fail(&lab, error, "a capture or mempool region has no 'end'");
	}
	if (ok) {
		lab_start(&lab);			  /* an empty program records nothing */
		if (lab.settings_changed && !lab.release) /* a release wrote one already */
			lab_start_record(&lab);
		if (lab.snap->annotations->len)
			lab_call(&lab, "dump", " reason=lab");
		lab_settings(&lab);
		lab_final_state(&lab);
		lab.snap->n_devices = 1;
		lab.snap->events = g_new0(GArray *, 1);
		lab.snap->n_events = g_new0(uint64_t, 1);
		lab.snap->n_events[0] = lab.events->len;
		lab.snap->events[0] = g_steal_pointer(&lab.events);
	}
	if (lab.alloc)
		cca_allocator_free(lab.alloc);
	cca_device_free(lab.device);
	if (lab.have_settings || lab.alloc)
		cca_settings_clear(&lab.settings);
	g_free(lab.conf);
	g_array_free(lab.tensors, TRUE);
	g_array_free(lab.pending, TRUE);
	g_array_free(lab.regions, TRUE);
	if (lab.events)
		g_array_free(lab.events, TRUE);
	if (!ok) {
		cca_snapshot_free(lab.snap);
		return NULL;
	}
	return lab.snap;
}

const char *
cca_lab_event_line(const CcaSnapshot *snap, const CcaEvent *event)
{
	if (event->user_metadata == CCA_ID_NONE)
		return NULL;
	const char *meta = cca_snapshot_string(snap, event->user_metadata);
	return meta && g_str_has_prefix(meta, "lab line ") ? meta : NULL;
}

/* The line number of a "lab line N: ..." string, 0 when none. */
static uint64_t
meta_line(const char *meta)
{
	return meta ? g_ascii_strtoull(meta + strlen("lab line "), NULL, 10) : 0;
}

gboolean
cca_lab_find_line(const CcaSnapshot *snap, int device, uint64_t line, bool request, uint64_t *index,
		  GError **error)
{
	/* a lab's entries are in memory; a compact trace's are no lab's */
	const GArray *events = snap->events ? snap->events[device] : NULL;
	bool found = false, any = false;
	uint64_t first = 0, next_line = 0, next_index = 0;
	for (guint i = 0; events && i < events->len; i++) {
		const CcaEvent *ev = &g_array_index(events, CcaEvent, i);
		uint64_t l = meta_line(cca_lab_event_line(snap, ev));
		any |= l > 0;
		if (l == line) {
			if (!found)
				first = i;
			found = true;
			if (!request || ev->action == CCA_ACTION_ALLOC ||
			    ev->action == CCA_ACTION_OOM) {
				*index = i;
				return TRUE;
			}
		} else if (l > line && next_line == 0) {
			next_line = l;
			next_index = i;
		}
	}
	if (found) {
		*index = first;
		return TRUE;
	}
	if (!any)
		g_set_error(error, CCA_INPUT_ERROR, CCA_INPUT_ERROR_CORRUPT,
			    "%s: not a lab (its entries name no lab lines): use the event number",
			    snap->source ? snap->source : "the trace");
	else if (next_line)
		g_set_error(error, CCA_INPUT_ERROR, CCA_INPUT_ERROR_CORRUPT,
			    "line %" G_GUINT64_FORMAT " made no trace entry (a comment, a setting, "
			    "a region's start or end, or a call that freed nothing); the next "
			    "entry is event %" G_GUINT64_FORMAT ", of line %" G_GUINT64_FORMAT,
			    line, next_index, next_line);
	else
		g_set_error(error, CCA_INPUT_ERROR, CCA_INPUT_ERROR_CORRUPT,
			    "line %" G_GUINT64_FORMAT " made no trace entry, nor did any line "
			    "after it",
			    line);
	return FALSE;
}
