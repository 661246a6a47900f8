/* trace_events.h - one device's events kept in the bytes a ccasim trace
 * stores them as (doc/trace-format.md). */
#ifndef CCA_TRACE_EVENTS_H
#define CCA_TRACE_EVENTS_H

#include <glib.h>
#include <stddef.h>
#include <stdint.h>

#include "event.h"
#include "snapshot.h"

G_BEGIN_DECLS

/* One device's trace events encoded as a trace stores them (about 27
 * bytes an event for a typical trace, against sizeof(CcaEvent) == 64):
 * what a reader builds in place of a CcaEvent array when the snapshot is
 * only going to be written out.  cca_trace_write() copies these bytes as
 * they are, after checking the ids they hold against the tables. */
typedef struct CcaTraceEvents CcaTraceEvents;

/* A new empty store; free with cca_trace_events_free(). */
CcaTraceEvents *cca_trace_events_new(void);

/* Frees TE; NULL is allowed. */
void cca_trace_events_free(CcaTraceEvents *te);

/* Makes room for BYTES more bytes of events at once: a guess from the
 * input's size saves growing the store later.  Only address space: pages
 * never written cost no memory. */
void cca_trace_events_reserve(CcaTraceEvents *te, size_t bytes);

/* Appends EV (encoded as cca_trace_write() would encode it).  EV is not
 * checked here: its ids are, when the store is written or read. */
void cca_trace_events_add(CcaTraceEvents *te, const CcaEvent *ev);

/* The number of events in TE. */
uint64_t cca_trace_events_count(const CcaTraceEvents *te);

/* How many of TE's events carry a pool_id (2.12+). */
uint64_t cca_trace_events_pools(const CcaTraceEvents *te);

/* A new store holding the events of TE. */
CcaTraceEvents *cca_trace_events_copy(const CcaTraceEvents *te);

/* Makes EVENTS[0 .. snap->n_devices) SNAP's events, taking them (each
 * entry is set to NULL; a NULL entry counts as no events): snap->n_events
 * is set from them, snap->events[d] (if any) are freed and cursors decode
 * the stores, as for a loaded trace.  SNAP must not hold a streamed trace
 * already (stream_priv NULL). */
void cca_trace_events_attach(CcaSnapshot *snap, CcaTraceEvents **events);

/* DEVICE's store when SNAP's events were attached with
 * cca_trace_events_attach() and may be copied as they are: counted as
 * snap->n_events says, every action known and every id below N_STRINGS
 * (compile_context, user_metadata) and N_STACKS (stack); else NULL (a
 * cursor then finds the culprit).  Borrowed from SNAP. */
const CcaTraceEvents *cca_trace_events_of(const CcaSnapshot *snap, int device, uint32_t n_strings,
					  uint32_t n_stacks);

/* TE's bytes, as cca_trace_write() writes them; *LEN gets their number.
 * Borrowed; NULL when TE holds no event. */
const unsigned char *cca_trace_events_bytes(const CcaTraceEvents *te, size_t *len);

G_END_DECLS

#endif
