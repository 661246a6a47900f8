/* calls.c - ccasim-record's annotations: parsed, then placed in the trace. */
#include "config.h"

#include "calls.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "event_cursor.h"
#include "input.h"
#include "number.h"

#define CALL_PREFIX "ccasim:"

static const char *const kind_names[CCA_CALLS_KINDS] = {
	[CCA_CALL_START] = "start",
	[CCA_CALL_EMPTY_CACHE] = "empty_cache",
	[CCA_CALL_SET_SETTINGS] = "set_allocator_settings",
	[CCA_CALL_MEMORY_FRACTION] = "memory_fraction",
	[CCA_CALL_RESET_PEAK] = "reset_peak",
	[CCA_CALL_RESET_ACCUMULATED] = "reset_accumulated",
	[CCA_CALL_MEMPOOL_CREATE] = "mempool_create",
	[CCA_CALL_MEMPOOL_RELEASE] = "mempool_release",
	[CCA_CALL_USE_MEM_POOL_ENTER] = "use_mem_pool_enter",
	[CCA_CALL_USE_MEM_POOL_EXIT] = "use_mem_pool_exit",
	[CCA_CALL_CAPTURE_BEGIN] = "capture_begin",
	[CCA_CALL_CAPTURE_END] = "capture_end",
	[CCA_CALL_DEVICE_MEMORY] = "device_memory",
	[CCA_CALL_DUMP] = "dump",
};

static const char *const when_names[] = {"start", "peak", "dump"};

const char *
cca_calls_kind_name(CcaCallsKind kind)
{
	return kind < CCA_CALLS_KINDS ? kind_names[kind] : "?";
}

static bool
is_call_annotation(const CcaSnapshot *snap, const CcaAnnotation *a, int device)
{
	if (a->device != device)
		return false;
	const char *stage = cca_snapshot_string(snap, a->stage);
	const char *name = cca_snapshot_string(snap, a->name);
	return strcmp(stage, "START") == 0 && g_str_has_prefix(name, CALL_PREFIX);
}

bool
cca_calls_present(const CcaSnapshot *snap, int device)
{
	for (guint i = 0; i < snap->annotations->len; i++)
		if (is_call_annotation(snap, &g_array_index(snap->annotations, CcaAnnotation, i),
				       device))
			return true;
	return false;
}

/* Does a record of KIND name a private pool (pool=A,B)? */
static bool
kind_has_pool(CcaCallsKind kind)
{
	return kind >= CCA_CALL_MEMPOOL_CREATE && kind <= CCA_CALL_CAPTURE_END;
}

static void
call_clear(CcaCall *c)
{
	g_free(c->text);
	g_free(c->torch);
}

void
cca_calls_free(CcaCalls *calls)
{
	if (!calls)
		return;
	for (guint i = 0; i < calls->calls->len; i++)
		call_clear(&g_array_index(calls->calls, CcaCall, i));
	g_array_free(calls->calls, TRUE);
	g_free(calls);
}

/* Decodes the percent-encoding of S; NULL when a %XX is malformed or
 * decodes to a NUL. */
static char *
pct_decode(const char *s)
{
	GString *out = g_string_sized_new(strlen(s));
	for (const char *p = s; *p; p++) {
		if (*p != '%') {
			g_string_append_c(out, *p);
			continue;
		}
		int hi = p[1] ? g_ascii_xdigit_value(p[1]) : -1;
		int lo = hi >= 0 && p[2] ? g_ascii_xdigit_value(p[2]) : -1;
		if (hi < 0 || lo < 0 || (hi == 0 && lo == 0)) {
			g_string_free(out, TRUE);
			return NULL;
		}
		g_string_append_c(out, (char)(hi * 16 + lo));
		p += 2;
	}
	return g_string_free(out, FALSE);
}

static gboolean
parse_count(const char *v, uint64_t *out)
{
	return cca_number_parse_u64(v, UINT64_MAX, out);
}

static gboolean
parse_pool(const char *v, int64_t pool[2])
{
	int64_t a, b;
	if (!cca_number_scan_i64(&v, &a) || *v++ != ',' || !cca_number_scan_i64(&v, &b) || *v)
		return FALSE;
	pool[0] = a;
	pool[1] = b;
	return TRUE;
}

/* Sets one field K=V of C; FALSE with WHY when V is bad for K.  Fields a
 * kind does not use are ignored (later recorders may add some). */
static gboolean
call_field(CcaCall *c, const char *k, const char *v, unsigned *seen, const char **why)
{
	if (strcmp(k, "allocs") == 0 || strcmp(k, "frees") == 0 || strcmp(k, "ooms") == 0) {
		uint64_t *dst = k[0] == 'a' ? &c->allocs : k[0] == 'f' ? &c->frees : &c->ooms;
		*seen |= k[0] == 'a' ? 1u : k[0] == 'f' ? 2u : 4u;
		if (!parse_count(v, dst))
			return *why = "not a count", FALSE;
		return TRUE;
	}
	if (kind_has_pool(c->kind) && strcmp(k, "pool") == 0)
		return parse_pool(v, c->pool) ? TRUE : (*why = "not a pool id A,B", FALSE);
	switch (c->kind) {
	case CCA_CALL_START:
		if (strcmp(k, "conf") == 0)
			g_free(c->text), c->text = g_strdup(v);
		else if (strcmp(k, "torch") == 0)
			g_free(c->torch), c->torch = g_strdup(v);
		break;
	case CCA_CALL_SET_SETTINGS:
		if (strcmp(k, "settings") == 0) {
			g_free(c->text);
			c->text = g_strdup(v);
			*seen |= 8u;
		}
		break;
	case CCA_CALL_DUMP:
		if (strcmp(k, "reason") == 0)
			g_free(c->text), c->text = g_strdup(v);
		break;
	case CCA_CALL_MEMORY_FRACTION:
		if (strcmp(k, "fraction") == 0) {
			char *end;
			double f = g_ascii_strtod(v, &end);
			if (end == v || *end || !isfinite(f) || f < 0.0 || f > 1.0)
				return *why = "not a fraction in [0, 1]", FALSE;
			c->fraction = f;
			*seen |= 8u;
		}
		break;
	case CCA_CALL_DEVICE_MEMORY:
		if (strcmp(k, "when") == 0) {
			guint w;
			for (w = 0; w < G_N_ELEMENTS(when_names); w++)
				if (strcmp(v, when_names[w]) == 0)
					break;
			if (w == G_N_ELEMENTS(when_names))
				return *why = "not start, peak or dump", FALSE;
			c->when = (CcaSampleWhen)w;
			*seen |= 8u;
		} else if (strcmp(k, "total") == 0 || strcmp(k, "free") == 0 ||
			   strcmp(k, "reserved") == 0) {
			uint64_t *dst = k[0] == 't'   ? &c->total
					: k[0] == 'f' ? &c->free
						      : &c->reserved;
			if (!parse_count(v, dst))
				return *why = "not a count", FALSE;
			*seen |= k[0] == 't' ? 16u : k[0] == 'f' ? 32u : 64u;
		}
		break;
	default:
		break;
	}
	return TRUE;
}

/* The fields KIND needs beyond the counts (bits of call_field's SEEN). */
static unsigned
required_fields(CcaCallsKind kind)
{
	switch (kind) {
	case CCA_CALL_SET_SETTINGS:
	case CCA_CALL_MEMORY_FRACTION:
		return 7u | 8u;
	case CCA_CALL_DEVICE_MEMORY:
		return 7u | 8u | 16u | 32u | 64u;
	default:
		return 7u;
	}
}

static const char *
missing_field(CcaCallsKind kind, unsigned missing)
{
	if (missing & 1u)
		return "allocs";
	if (missing & 2u)
		return "frees";
	if (missing & 4u)
		return "ooms";
	if (missing & 8u)
		return kind == CCA_CALL_SET_SETTINGS	  ? "settings"
		       : kind == CCA_CALL_MEMORY_FRACTION ? "fraction"
							  : "when";
	if (missing & 16u)
		return "total";
	if (missing & 32u)
		return "free";
	return "reserved";
}

/* Parses annotation NAME into C; FALSE with a message in *MSG. */
static gboolean
call_parse(CcaCall *c, const char *name, char **msg)
{
	const char *rest = name + strlen(CALL_PREFIX);
	size_t klen = strcspn(rest, " ");
	int kind = -1;
	for (int k = 0; k < CCA_CALLS_KINDS; k++)
		if (strlen(kind_names[k]) == klen && strncmp(rest, kind_names[k], klen) == 0)
			kind = k;
	if (kind < 0) {
		g_autofree char *shown = g_strndup(rest, MIN(klen, 40));
		g_autofree char *escaped = g_strescape(shown, NULL);
		*msg = g_strdup_printf("unknown call '%s'", escaped);
		return FALSE;
	}
	c->kind = (CcaCallsKind)kind;
	unsigned seen = 0;
	g_auto(GStrv) fields = g_strsplit(rest + klen, " ", -1);
	for (guint i = 0; fields[i]; i++) {
		if (!fields[i][0])
			continue;
		const char *eq = strchr(fields[i], '=');
		g_autofree char *key = eq ? g_strndup(fields[i], eq - fields[i]) : NULL;
		g_autofree char *value = eq ? pct_decode(eq + 1) : NULL;
		const char *why = NULL;
		if (!eq || !value) {
			*msg = g_strdup_printf("%s: field %u is not KEY=VALUE (percent-encoded)",
					       kind_names[kind], i);
			return FALSE;
		}
		if (!call_field(c, key, value, &seen, &why)) {
			g_autofree char *k = g_strescape(key, NULL);
			*msg = g_strdup_printf("%s: field '%s': %s", kind_names[kind], k, why);
			return FALSE;
		}
	}
	unsigned need = required_fields(c->kind);
	if ((seen & need) != need) {
		*msg = g_strdup_printf("%s: field '%s' missing", kind_names[kind],
				       missing_field(c->kind, need & ~seen));
		return FALSE;
	}
	return TRUE;
}

/* Calls in the order they were made: the counts only grow, so their sum
 * orders them; equal sums keep the records' order. */
static gint
call_order(gconstpointer a, gconstpointer b)
{
	const CcaCall *x = a, *y = b;
	uint64_t sx = x->allocs + x->frees + x->ooms, sy = y->allocs + y->frees + y->ooms;
	if (sx != sy)
		return sx < sy ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

CcaCalls *
cca_calls_parse(const CcaSnapshot *snap, int device, GError **error)
{
	CcaCalls *calls = g_new0(CcaCalls, 1);
	calls->calls = g_array_new(FALSE, TRUE, sizeof(CcaCall));
	calls->last_dump = -1;
	for (int w = 0; w < 3; w++)
		calls->sample[w] = -1;
	for (guint i = 0; i < snap->annotations->len; i++) {
		const CcaAnnotation *a = &g_array_index(snap->annotations, CcaAnnotation, i);
		if (!is_call_annotation(snap, a, device))
			continue;
		CcaCall c = {.time_us = a->time_us, .in_window = true};
		char *msg = NULL;
		if (!call_parse(&c, cca_snapshot_string(snap, a->name), &msg)) {
			call_clear(&c);
			g_set_error(error, CCA_INPUT_ERROR, CCA_INPUT_ERROR_CORRUPT,
				    "%s: external_annotations[%u]: %s", snap->source, i, msg);
			g_free(msg);
			cca_calls_free(calls);
			return NULL;
		}
		c.order = calls->calls->len;
		g_array_append_val(calls->calls, c);
	}
	g_array_sort(calls->calls, call_order);
	for (guint i = 0; i < calls->calls->len; i++) {
		const CcaCall *c = &g_array_index(calls->calls, CcaCall, i);
		if (c->kind == CCA_CALL_DUMP)
			calls->last_dump = (int)i;
		if (c->kind == CCA_CALL_DEVICE_MEMORY) {
			int s = calls->sample[c->when];
			/* the peak: the highest reserved; start and dump: the last */
			if (s < 0 || c->when != CCA_SAMPLE_PEAK ||
			    c->reserved >= g_array_index(calls->calls, CcaCall, s).reserved)
				calls->sample[c->when] = (int)i;
		}
	}
	return calls;
}

guint
cca_calls_count(const CcaCalls *calls, CcaCallsKind kind)
{
	guint n = 0;
	for (guint i = 0; calls && i < calls->calls->len; i++)
		n += g_array_index(calls->calls, CcaCall, i).kind == kind;
	return n;
}

const CcaCall *
cca_calls_sample(const CcaCalls *calls, CcaSampleWhen when)
{
	if (!calls || calls->sample[when] < 0)
		return NULL;
	return &g_array_index(calls->calls, CcaCall, calls->sample[when]);
}

uint64_t
cca_calls_total_memory(const CcaCalls *calls)
{
	static const CcaSampleWhen order[] = {CCA_SAMPLE_PEAK, CCA_SAMPLE_DUMP, CCA_SAMPLE_START};
	for (guint i = 0; i < G_N_ELEMENTS(order); i++) {
		const CcaCall *s = cca_calls_sample(calls, order[i]);
		if (s && s->total)
			return s->total;
	}
	return 0;
}

uint64_t
cca_calls_outside_bytes(const CcaCall *s)
{
	uint64_t used = s->total > s->free ? s->total - s->free : 0;
	return used > s->reserved ? used - s->reserved : 0;
}

/* ------------------------------------------------------------ placing */

/* Whether two tallies hold the same counts. */
static bool
tally_equal(const CcaCallsTally *a, const CcaCallsTally *b)
{
	return a->allocs == b->allocs && a->frees == b->frees && a->ooms == b->ooms;
}

static gboolean place_error(GError **error, const CcaSnapshot *snap, const CcaCall *c,
			    const char *fmt, ...) G_GNUC_PRINTF(4, 5);

static gboolean
place_error(GError **error, const CcaSnapshot *snap, const CcaCall *c, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	g_autofree char *what = g_strdup_vprintf(fmt, ap);
	va_end(ap);
	g_set_error(error, CCA_INPUT_ERROR, CCA_INPUT_ERROR_CORRUPT,
		    "%s: the ccasim-record call %s (allocs=%" G_GUINT64_FORMAT
		    " frees=%" G_GUINT64_FORMAT " ooms=%" G_GUINT64_FORMAT ") %s",
		    snap->source, cca_calls_kind_name(c->kind), c->allocs, c->frees, c->ooms, what);
	return FALSE;
}

/* Places by time: before the first entry recorded after the call's
 * time_us (entries of the same microsecond are taken to come first). */
static gboolean
place_by_time(CcaCalls *calls, const CcaSnapshot *snap, int device, GError **error)
{
	g_autoptr(CcaEventCursor) cur = cca_event_cursor_new(snap, device);
	CcaEvent ev;
	GError *local = NULL;
	uint64_t i = 0;
	guint k = 0, n = calls->calls->len;
	/* the records are in call order, which is time order */
	while (k < n && cca_event_cursor_next(cur, &ev, &local)) {
		CcaCall *c;
		while (k < n && ev.time_us != CCA_TIME_NONE &&
		       ev.time_us > (c = &g_array_index(calls->calls, CcaCall, k))->time_us) {
			c->position = c->releases_at = i;
			k++;
		}
		i++;
	}
	if (local) {
		g_propagate_error(error, local);
		return FALSE;
	}
	for (; k < n; k++) {
		CcaCall *c = &g_array_index(calls->calls, CcaCall, k);
		c->position = c->releases_at = snap->n_events[device];
	}
	return TRUE;
}

gboolean
cca_calls_place(CcaCalls *calls, const CcaSnapshot *snap, int device, const CcaCallsTally *tally,
		GError **error)
{
	calls->placed = true;
	guint n = calls->calls->len;
	if (n == 0)
		return TRUE;
	if (calls->last_dump < 0)
		return place_by_time(calls, snap, device, error);
	/* pass 1, unless the caller read them: the trace's own counts; the
	 * dump's minus them are the counts before its first entry */
	CcaCallsTally counted = {0};
	GError *local = NULL;
	CcaEvent ev;
	if (!tally) {
		g_autoptr(CcaEventCursor) cur = cca_event_cursor_new(snap, device);
		while (cca_event_cursor_next(cur, &ev, &local))
			cca_calls_tally_note(&counted, ev.action);
		if (local) {
			g_propagate_error(error, local);
			return FALSE;
		}
		tally = &counted;
	}
	const CcaCall *dump = &g_array_index(calls->calls, CcaCall, calls->last_dump);
	if (dump->allocs < tally->allocs || dump->frees < tally->frees || dump->ooms < tally->ooms)
		return place_error(error, snap, dump,
				   "counts fewer entries than the trace holds (%" G_GUINT64_FORMAT
				   " alloc, %" G_GUINT64_FORMAT
				   " free_requested, %" G_GUINT64_FORMAT " oom)",
				   tally->allocs, tally->frees, tally->ooms);
	const CcaCallsTally base = {dump->allocs - tally->allocs, dump->frees - tally->frees,
				    dump->ooms - tally->ooms};
	/* each call's target: its counts within the trace */
	g_autofree CcaCallsTally *target = g_new0(CcaCallsTally, n);
	/* stage: 0 not reached, 1 reached at POSITION (a direct completion
	 * may follow), 2 empty_cache past its completions, 3 placed */
	g_autofree uint8_t *stage = g_new0(uint8_t, n);
	for (guint j = 0; j < n; j++) {
		CcaCall *c = &g_array_index(calls->calls, CcaCall, j);
		if (c->allocs < base.allocs || c->frees < base.frees || c->ooms < base.ooms) {
			c->in_window = false;
			c->position = c->releases_at = 0;
			stage[j] = 3;
		} else {
			target[j] = (CcaCallsTally){c->allocs - base.allocs, c->frees - base.frees,
						    c->ooms - base.ooms};
		}
	}
	/* pass 2: reach each target, then step past what belongs before */
	g_autoptr(CcaEventCursor) cur = cca_event_cursor_new(snap, device);
	CcaCallsTally seen = {0};
	CcaEvent prev = {.action = 0xff};
	guint first = 0; /* calls before FIRST are placed */
	for (uint64_t i = 0;; i++) {
		bool have = cca_event_cursor_next(cur, &ev, &local);
		/* calls whose counts are those before entry I */
		for (guint j = first; j < n; j++) {
			if (stage[j] == 0 && tally_equal(&target[j], &seen)) {
				stage[j] = 1;
				g_array_index(calls->calls, CcaCall, j).position = i;
			}
		}
		for (guint j = first; j < n; j++) {
			CcaCall *c = &g_array_index(calls->calls, CcaCall, j);
			if (stage[j] == 1 && c->position == i) {
				/* free() completes a block used on no other stream
				 * at once: its free_completed precedes the call */
				bool direct = have && prev.action == CCA_ACTION_FREE_REQUESTED &&
					      ev.action == CCA_ACTION_FREE_COMPLETED &&
					      ev.addr == prev.addr;
				if (direct)
					c->position = i + 1;
				c->releases_at = c->position;
				stage[j] = c->kind == CCA_CALL_EMPTY_CACHE ? 2 : 3;
				if (direct)
					continue;
			}
			/* empty_cache(): its synchronisation's completions come
			 * first, its releases (if any) after them */
			if (stage[j] == 2 && c->releases_at == i) {
				if (have && ev.action == CCA_ACTION_FREE_COMPLETED)
					c->releases_at = i + 1;
				else
					stage[j] = 3;
			}
		}
		while (first < n && stage[first] == 3)
			first++;
		if (!have)
			break;
		cca_calls_tally_note(&seen, ev.action);
		prev = ev;
	}
	if (local) {
		g_propagate_error(error, local);
		return FALSE;
	}
	for (guint j = 0; j < n; j++) {
		const CcaCall *c = &g_array_index(calls->calls, CcaCall, j);
		if (stage[j] == 0)
			return place_error(error, snap, c,
					   "names no point of the trace: its counts do not "
					   "occur together between two entries");
		if (j > 0 && c->in_window &&
		    c->position < g_array_index(calls->calls, CcaCall, j - 1).position)
			return place_error(error, snap, c,
					   "comes before the call recorded ahead of it");
	}
	return TRUE;
}

char *
cca_calls_describe(const CcaCall *c)
{
	GString *s = g_string_new(cca_calls_kind_name(c->kind));
	if (kind_has_pool(c->kind))
		g_string_append_printf(s, " pool (%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT ")",
				       c->pool[0], c->pool[1]);
	switch (c->kind) {
	case CCA_CALL_SET_SETTINGS:
		g_string_append_printf(s, " \"%s\"", c->text ? c->text : "");
		break;
	case CCA_CALL_MEMORY_FRACTION:
		g_string_append_printf(s, " %g", c->fraction);
		break;
	case CCA_CALL_DEVICE_MEMORY:
		g_string_append_printf(s,
				       " at %s: %" G_GUINT64_FORMAT " of %" G_GUINT64_FORMAT
				       " bytes free, %" G_GUINT64_FORMAT
				       " reserved, %" G_GUINT64_FORMAT " outside the allocator",
				       when_names[c->when], c->free, c->total, c->reserved,
				       cca_calls_outside_bytes(c));
		break;
	case CCA_CALL_DUMP:
		g_string_append_printf(s, " (%s)", c->text ? c->text : "?");
		break;
	case CCA_CALL_START:
		g_string_append_printf(s, " (torch %s, PYTORCH_CUDA_ALLOC_CONF \"%s\")",
				       c->torch ? c->torch : "?", c->text ? c->text : "");
		break;
	default:
		break;
	}
	if (c->in_window)
		g_string_append_printf(s, " before entry %" G_GUINT64_FORMAT, c->position);
	else
		g_string_append(s, " before the trace's first entry");
	return g_string_free(s, FALSE);
}

json_t *
cca_calls_call_to_json(const CcaCall *c)
{
	json_t *o = json_object();
	json_object_set_new(o, "kind", json_string(cca_calls_kind_name(c->kind)));
	json_object_set_new(o, "position",
			    c->in_window ? json_integer((json_int_t)c->position) : json_null());
	json_object_set_new(o, "time_us", json_integer(c->time_us));
	json_object_set_new(o, "allocs", json_integer((json_int_t)c->allocs));
	json_object_set_new(o, "frees", json_integer((json_int_t)c->frees));
	json_object_set_new(o, "ooms", json_integer((json_int_t)c->ooms));
	if (kind_has_pool(c->kind))
		json_object_set_new(
			o, "pool",
			json_pack("[II]", (json_int_t)c->pool[0], (json_int_t)c->pool[1]));
	switch (c->kind) {
	case CCA_CALL_START:
		json_object_set_new(o, "torch", json_string(c->torch ? c->torch : ""));
		json_object_set_new(o, "conf", json_string(c->text ? c->text : ""));
		break;
	case CCA_CALL_SET_SETTINGS:
		json_object_set_new(o, "settings", json_string(c->text ? c->text : ""));
		break;
	case CCA_CALL_MEMORY_FRACTION:
		json_object_set_new(o, "fraction", json_real(c->fraction));
		break;
	case CCA_CALL_DEVICE_MEMORY:
		json_object_set_new(o, "when", json_string(when_names[c->when]));
		json_object_set_new(o, "total", json_integer((json_int_t)c->total));
		json_object_set_new(o, "free", json_integer((json_int_t)c->free));
		json_object_set_new(o, "reserved", json_integer((json_int_t)c->reserved));
		json_object_set_new(o, "outside",
				    json_integer((json_int_t)cca_calls_outside_bytes(c)));
		break;
	case CCA_CALL_DUMP:
		json_object_set_new(o, "reason", json_string(c->text ? c->text : ""));
		break;
	default:
		break;
	}
	return o;
}
