/* trace_events.c - one device's events kept in a trace's bytes.
 *
 * A converter that only writes its snapshot out keeps each device's
 * events in the bytes the writer would make for them (trace_codec.h's
 * cca_put_event(), about 27 bytes an event against sizeof(CcaEvent) ==
 * 64), with the largest id of each kind; the writer (trace_write.c)
 * checks those against the tables and copies the bytes, and cursors
 * decode them as a loaded trace's are decoded.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* mremap() */
#endif
#include "config.h"

#include <string.h>
#include <sys/mman.h>

#include "input.h"
#include "trace_codec.h"
#include "trace_events.h"

/* One device's events in the bytes a trace stores them as, in one
 * anonymous mapping grown with mremap() (no copy, no transient double).
 * The ids are checked at write time against their tables through the
 * largest of each kind, which the encoder keeps. */
struct CcaTraceEvents {
	unsigned char *buf; /* a mapping of `cap` bytes, or NULL */
	size_t len;	    /* bytes used */
	size_t cap;
	uint64_t n;	     /* events */
	uint64_t pools;	     /* events with a pool_id */
	uint32_t max_stack;  /* largest stack id among them */
	uint32_t max_string; /* largest compile_context/user_metadata id */
	uint8_t max_action;
};

#define CCA_TRACE_EVENTS_MIN ((size_t)64 << 10) /* first mapping, unless reserved */

CcaTraceEvents *
cca_trace_events_new(void)
{
	return g_new0(CcaTraceEvents, 1);
}

void
cca_trace_events_free(CcaTraceEvents *te)
{
	if (te == NULL)
		return;
	if (te->buf != NULL)
		munmap(te->buf, te->cap);
	g_free(te);
}

uint64_t
cca_trace_events_count(const CcaTraceEvents *te)
{
	return te->n;
}

uint64_t
cca_trace_events_pools(const CcaTraceEvents *te)
{
	return te->pools;
}

/* A new anonymous mapping of SIZE bytes (a multiple of the page size).
 * One of at least CCA_INPUT_HUGE_PAGE bytes starts on a 2 MiB boundary and asks
 * for transparent huge pages: a big store is filled front to back, and a
 * fault per 4 KiB page costs more than the writes.  A smaller one keeps
 * small pages, so that a device with few events costs little.
 * MAP_FAILED when out of memory. */
static void *
cca_trace_events_map(size_t size)
{
	if (size < CCA_INPUT_HUGE_PAGE)
		return mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *raw = mmap(NULL, size + CCA_INPUT_HUGE_PAGE, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (raw == MAP_FAILED)
		return MAP_FAILED;
	uintptr_t lo =
		((uintptr_t)raw + CCA_INPUT_HUGE_PAGE - 1) & ~(uintptr_t)(CCA_INPUT_HUGE_PAGE - 1);
	size_t head = lo - (uintptr_t)raw;
	if (head > 0)
		munmap(raw, head);
	munmap((char *)lo + size, CCA_INPUT_HUGE_PAGE - head);
#ifdef MADV_HUGEPAGE
	madvise((void *)lo, size, MADV_HUGEPAGE);
#endif
	return (void *)lo;
}

/* Makes room for NEED more bytes: in place when the mapping can grow
 * there, else in a new mapping (the bytes copied once).  Out of memory is
 * fatal when FATAL, else returns FALSE with TE unchanged. */
static gboolean
cca_trace_events_grow(CcaTraceEvents *te, size_t need, gboolean fatal)
{
	size_t cap = MAX(te->cap, CCA_TRACE_EVENTS_MIN);
	while (cap - te->len < need)
		cap *= 2;
	/* Whole pages; whole huge pages once that big. */
	size_t unit = cap >= CCA_INPUT_HUGE_PAGE ? CCA_INPUT_HUGE_PAGE : (size_t)4096;
	cap = (cap + unit - 1) & ~(unit - 1);
	void *p = MAP_FAILED;
#ifdef MREMAP_MAYMOVE
	/* In place only: a moved mapping would lose its alignment. */
	if (te->buf != NULL && (p = mremap(te->buf, te->cap, cap, 0)) != MAP_FAILED) {
#ifdef MADV_HUGEPAGE
		if (cap >= CCA_INPUT_HUGE_PAGE)
			madvise(p, cap, MADV_HUGEPAGE);
#endif
	}
#endif
	if (p == MAP_FAILED) {
		p = cca_trace_events_map(cap);
		if (p != MAP_FAILED && te->buf != NULL) {
			memcpy(p, te->buf, te->len);
			munmap(te->buf, te->cap);
		}
	}
	if (p == MAP_FAILED) {
		if (fatal)
			g_error("out of memory growing the encoded events to %zu bytes", cap);
		return FALSE;
	}
	te->buf = p;
	te->cap = cap;
	return TRUE;
}

void
cca_trace_events_reserve(CcaTraceEvents *te, size_t bytes)
{
	if (bytes > te->cap - te->len)
		cca_trace_events_grow(te, bytes, FALSE); /* only a hint */
}

void
cca_trace_events_add(CcaTraceEvents *te, const CcaEvent *ev)
{
	if (G_UNLIKELY(te->cap - te->len < CCA_OUT_ITEM))
		cca_trace_events_grow(te, CCA_OUT_ITEM, TRUE);
	te->len = (size_t)(cca_put_event(te->buf + te->len, ev) - te->buf);
	te->n++;
	te->pools += ev->has_pool_id;
	te->max_action = MAX(te->max_action, ev->action);
	te->max_stack = MAX(te->max_stack, ev->stack);
	te->max_string = MAX(te->max_string, MAX(ev->compile_context, ev->user_metadata));
}

CcaTraceEvents *
cca_trace_events_copy(const CcaTraceEvents *te)
{
	CcaTraceEvents *copy = cca_trace_events_new();
	*copy = *te;
	copy->buf = NULL;
	copy->len = copy->cap = 0;
	if (te->len > 0) {
		cca_trace_events_grow(copy, te->len, TRUE);
		memcpy(copy->buf, te->buf, te->len);
		copy->len = te->len;
	}
	return copy;
}

/* What a snapshot with encoded events keeps: one store per device. */
typedef struct {
	CcaTraceEvents **dev; /* [n_devices], owned */
	int n_devices;
} CcaTraceEventsPriv;

static void
cca_trace_events_priv_free(void *data)
{
	CcaTraceEventsPriv *priv = data;
	for (int d = 0; d < priv->n_devices; d++)
		cca_trace_events_free(priv->dev[d]);
	g_free(priv->dev);
	g_free(priv);
}

/* One cursor over one device's encoded events. */
typedef struct {
	CcaMp r;
	const CcaTraceEvents *te;
	const char *path;
	CcaTraceLimits limits;
	uint64_t index;
	int device;
} CcaTraceEventsCursor;

static gboolean
cca_trace_events_cursor_next(void *state, CcaEvent *out, GError **error)
{
	CcaTraceEventsCursor *c = state;
	CcaMpFault f;
	if (c->index >= c->te->n)
		return FALSE;
	if (G_UNLIKELY(cca_trace_decode_event(&c->r, &c->limits, out, &f))) {
		/* Only if the store was damaged: it holds what it was given. */
		g_autofree char *ctx = g_strdup_printf("event %" G_GUINT64_FORMAT " of device %d",
						       c->index, c->device);
		cca_trace_codec_fault(error, &f, c->path, c->te->buf, c->r.end, ctx);
		c->index = c->te->n;
		return FALSE;
	}
	c->index++;
	return TRUE;
}

static void
cca_trace_events_cursor_free(void *state)
{
	g_free(state);
}

static const CcaCursorOps cca_trace_events_cursor_ops = {
	.next = cca_trace_events_cursor_next,
	.free = cca_trace_events_cursor_free,
};

/* The snapshot's stream_cursor_new. */
static void *
cca_trace_events_cursor_new(const CcaSnapshot *snap, int device, const CcaCursorOps **ops)
{
	const CcaTraceEventsPriv *priv = snap->stream_priv;
	g_return_val_if_fail(priv != NULL && device >= 0 && device < priv->n_devices, NULL);
	CcaTraceEventsCursor *c = g_new0(CcaTraceEventsCursor, 1);
	c->te = priv->dev[device];
	c->r.p = c->te->buf;
	c->r.end = c->te->buf + c->te->len;
	c->path = snap->source ? snap->source : "(snapshot)";
	/* Like a cursor over an events array, this one leaves the ids to
	 * whoever reads them (cca_trace_write() checks them). */
	c->limits.n_strings = UINT32_MAX;
	c->limits.n_stacks = UINT32_MAX;
	c->device = device;
	*ops = &cca_trace_events_cursor_ops;
	return c;
}

void
cca_trace_events_attach(CcaSnapshot *snap, CcaTraceEvents **events)
{
	g_return_if_fail(snap->stream_priv == NULL && snap->n_devices >= 0);
	CcaTraceEventsPriv *priv = g_new0(CcaTraceEventsPriv, 1);
	priv->n_devices = snap->n_devices;
	priv->dev = g_new0(CcaTraceEvents *, MAX(snap->n_devices, 1));
	if (snap->n_events == NULL)
		snap->n_events = g_new0(uint64_t, MAX(snap->n_devices, 1));
	for (int d = 0; d < snap->n_devices; d++) {
		priv->dev[d] = events[d] != NULL ? events[d] : cca_trace_events_new();
		events[d] = NULL;
		snap->n_events[d] = priv->dev[d]->n;
		if (snap->events != NULL && snap->events[d] != NULL)
			g_clear_pointer(&snap->events[d], g_array_unref);
	}
	snap->stream_priv = priv;
	snap->stream_priv_free = cca_trace_events_priv_free;
	snap->stream_cursor_new = cca_trace_events_cursor_new;
}

const CcaTraceEvents *
cca_trace_events_of(const CcaSnapshot *snap, int device, uint32_t n_strings, uint32_t n_stacks)
{
	if (snap->stream_cursor_new != cca_trace_events_cursor_new)
		return NULL;
	const CcaTraceEventsPriv *priv = snap->stream_priv;
	if (device >= priv->n_devices)
		return NULL;
	const CcaTraceEvents *te = priv->dev[device];
	if (te->n != snap->n_events[device] || te->max_action >= CCA_ACTION_COUNT ||
	    (te->n > 0 && (te->max_stack >= n_stacks || te->max_string >= n_strings)))
		return NULL; /* the cursor finds the culprit */
	return te;
}

const unsigned char *
cca_trace_events_bytes(const CcaTraceEvents *te, size_t *len)
{
	*len = te->len;
	return te->buf;
}
