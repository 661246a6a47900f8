/* peak.c - the live blocks at each peak and OOM, by the code that made
 * them.
 *
 * Models nothing: it watches one replay.  The model's alloc entries carry
 * the trace entry that caused them (CcaReplayModelFunc), so a table keyed
 * by the model's block address keeps each live block's origin (the
 * recorded alloc entry: its stack, user metadata and time) until its
 * free_completed; another keeps, per segment base (or page mapping), the
 * request that made it.  At a new peak (figures.h's rule, the same the
 * engine applies to its result) and after an OOM the state is copied
 * with the origin of each block and segment.  cca_peak_collect() replays
 * twice so that the copies stay linear in the live blocks: the first
 * replay finds the moments (keeping no origin and copying no state), the
 * second, stopped after the last of them, copies the state once at each.
 * A block's annotation is the path of record_function ranges (START/END
 * pairs of the snapshot's external annotations, by time_us) open when its
 * alloc entry was recorded; ccasim-record's own "ccasim:" entries are no
 * ranges and are left out.
 *
 * Invariant: at each moment the live blocks of the copied state sum to
 * the bytes allocated then (stats' allocated_bytes.all.current), so each
 * grouping sums to it exactly.
 */
#include "config.h"

#include "peak.h"

#include <string.h>

#include "rules.h"
#include "stack.h"
#include "figures.h"
#include "json.h"
#include "plan.h"
#include "report.h"
#include "size.h"
#include "text.h"

/* The trace's alloc entry that made a block or a segment. */
typedef struct {
	bool known;
	uint64_t index;
	int64_t time_us;
	uint64_t size; /* the request, bytes */
	uint64_t stream;
	uint32_t stack;
	uint32_t user_metadata;
} Origin;

/* One moment kept. */
typedef struct {
	CcaPeakKind kind;
	uint64_t index;
	int64_t time_us;
	uint64_t reserved, allocated;
	GArray *state;	  /* CcaStateSegment */
	GArray *blocks;	  /* Origin of each block of STATE, in order */
	GArray *creators; /* Origin of each segment of STATE */
	/* an OOM */
	bool recorded;	   /* the trace recorded it */
	bool model_failed; /* the model's request failed too */
	uint64_t oom_size; /* the request, bytes */
	uint64_t oom_stream;
	CcaRequestWhy why;
} Moment;

/* One range of time with the same record_function ranges open. */
typedef struct {
	int64_t from; /* time_us the range begins */
	char *path;   /* "outer > inner", or NULL: none open */
} AnnotationSpan;

/* What cca_peak_observe() does with each entry. */
typedef enum {
	PEAK_EVERY, /* keeps the origins, copies the state at every moment */
	PEAK_FIND,  /* finds the moments: no origins, no copies */
	PEAK_TAKE,  /* copies the state at the moments PEAK_FIND found */
} PeakMode;

struct CcaPeak {
	const CcaSnapshot *snap;
	int device;
	PeakMode mode;
	uint64_t take_at[2]; /* PEAK_TAKE: the entries of peaks[] (figures.h) */
	bool take[2];
	CcaFigures figures;
	GHashTable *live;     /* model block address -> Origin* */
	GHashTable *segments; /* segment base or mapping address -> Origin* */
	Moment peaks[2];      /* CCA_PEAK_RESERVED, CCA_PEAK_ALLOCATED */
	GArray *ooms;	      /* Moment */
	uint64_t n_ooms;
	bool oom_pending;
	uint64_t oom_size, oom_stream;
	uint64_t last_oom; /* PEAK_FIND: the entry of the last OOM kept */
	GArray *spans;	   /* AnnotationSpan by time */
};

/* ------------------------------------------------------- annotations */

static gint
annotation_compare(gconstpointer a, gconstpointer b)
{
	const CcaAnnotation *x = *(CcaAnnotation *const *)a, *y = *(CcaAnnotation *const *)b;
	if (x->time_us != y->time_us)
		return x->time_us < y->time_us ? -1 : 1;
	return x < y ? -1 : x > y;
}

/* The spans of time with the same ranges open, from SNAP's annotations
 * of DEVICE. */
static GArray *
annotation_spans(const CcaSnapshot *snap, int device)
{
	GArray *spans = g_array_new(FALSE, FALSE, sizeof(AnnotationSpan));
	if (!snap->annotations)
		return spans;
	g_autoptr(GPtrArray) sorted = g_ptr_array_new();
	for (guint i = 0; i < snap->annotations->len; i++) {
		CcaAnnotation *a = &g_array_index(snap->annotations, CcaAnnotation, i);
		const char *name = cca_snapshot_string(snap, a->name);
		if (a->device != device || a->time_us == CCA_TIME_NONE ||
		    g_str_has_prefix(name, "ccasim:"))
			continue;
		g_ptr_array_add(sorted, a);
	}
	g_ptr_array_sort(sorted, annotation_compare);
	g_autoptr(GPtrArray) open = g_ptr_array_new(); /* names, outermost first */
	for (guint i = 0; i < sorted->len; i++) {
		const CcaAnnotation *a = g_ptr_array_index(sorted, i);
		const char *stage = cca_snapshot_string(snap, a->stage);
		const char *name = cca_snapshot_string(snap, a->name);
		if (strcmp(stage, "START") == 0) {
			g_ptr_array_add(open, (gpointer)name);
		} else if (strcmp(stage, "END") == 0) {
			/* the innermost open range of that name closes */
			guint k = open->len;
			while (k > 0 && strcmp(g_ptr_array_index(open, k - 1), name) != 0)
				k--;
			if (k == 0)
				continue; /* an END without its START: the range began before */
			g_ptr_array_remove_index(open, k - 1);
		} else {
			continue;
		}
		GString *path = NULL;
		for (guint k = 0; k < open->len; k++) {
			if (!path)
				path = g_string_new(NULL);
			else
				g_string_append(path, " > ");
			g_autofree char *shown = cca_text_display(g_ptr_array_index(open, k), -1,
								  CCA_TEXT_DISPLAY_MAX);
			g_string_append(path, shown);
		}
		AnnotationSpan s = {a->time_us, path ? g_string_free(path, FALSE) : NULL};
		/* several changes at one time: the last one holds from then */
		if (spans->len &&
		    g_array_index(spans, AnnotationSpan, spans->len - 1).from == s.from) {
			g_free(g_array_index(spans, AnnotationSpan, spans->len - 1).path);
			g_array_index(spans, AnnotationSpan, spans->len - 1) = s;
		} else {
			g_array_append_val(spans, s);
		}
	}
	return spans;
}

/* The ranges open at time T (a block's alloc), or NULL. */
static const char *
annotation_at(const GArray *spans, int64_t t)
{
	if (t == CCA_TIME_NONE || spans->len == 0)
		return NULL;
	guint lo = 0, hi = spans->len; /* the last span with from <= t */
	while (lo < hi) {
		guint mid = lo + (hi - lo) / 2;
		if (g_array_index(spans, AnnotationSpan, mid).from <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? g_array_index(spans, AnnotationSpan, lo - 1).path : NULL;
}

/* ------------------------------------------------------- the observer */

CcaPeak *
cca_peak_new(const CcaSnapshot *snap, int device)
{
	CcaPeak *p = g_new0(CcaPeak, 1);
	p->snap = snap;
	p->device = device;
	/* keys point into their values (Entry) */
	p->live = g_hash_table_new_full(g_int64_hash, g_int64_equal, NULL, g_free);
	p->segments = g_hash_table_new_full(g_int64_hash, g_int64_equal, NULL, g_free);
	p->ooms = g_array_new(FALSE, TRUE, sizeof(Moment));
	p->spans = annotation_spans(snap, device);
	return p;
}

static void
moment_clear(Moment *m)
{
	cca_allocator_state_free(m->state);
	if (m->blocks)
		g_array_free(m->blocks, TRUE);
	if (m->creators)
		g_array_free(m->creators, TRUE);
	memset(m, 0, sizeof *m);
}

void
cca_peak_free(CcaPeak *p)
{
	if (!p)
		return;
	g_hash_table_destroy(p->live);
	g_hash_table_destroy(p->segments);
	for (int i = 0; i < 2; i++)
		moment_clear(&p->peaks[i]);
	for (guint i = 0; i < p->ooms->len; i++)
		moment_clear(&g_array_index(p->ooms, Moment, i));
	g_array_free(p->ooms, TRUE);
	for (guint i = 0; i < p->spans->len; i++)
		g_free(g_array_index(p->spans, AnnotationSpan, i).path);
	g_array_free(p->spans, TRUE);
	g_free(p);
}

/* A table's value: one allocation per entry, its key inside it. */
typedef struct {
	uint64_t addr;
	Origin origin;
} Entry;

static void
table_put(GHashTable *t, uint64_t addr, const CcaEvent *trace, uint64_t cause)
{
	Entry *e = g_new0(Entry, 1);
	e->addr = addr;
	if (trace && (trace->action == CCA_ACTION_ALLOC || trace->action == CCA_ACTION_OOM)) {
		e->origin = (Origin){true,	    cause,	  trace->time_us,      trace->size,
				     trace->stream, trace->stack, trace->user_metadata};
	}
	g_hash_table_replace(t, &e->addr, e);
}

static Origin
table_get(GHashTable *t, uint64_t addr)
{
	Entry *e = g_hash_table_lookup(t, &addr);
	return e ? e->origin : (Origin){0};
}

void
cca_peak_model_event(CcaPeak *p, uint64_t cause, const CcaEvent *trace, const CcaEvent *model)
{
	if (p->mode == PEAK_FIND && model->action != CCA_ACTION_OOM)
		return; /* the moments alone */
	switch (model->action) {
	case CCA_ACTION_ALLOC:
		table_put(p->live, model->addr, trace, cause);
		break;
	case CCA_ACTION_FREE_COMPLETED:
		g_hash_table_remove(p->live, &model->addr);
		break;
	case CCA_ACTION_SEGMENT_ALLOC:
	case CCA_ACTION_SEGMENT_MAP:
		table_put(p->segments, model->addr, trace, cause);
		break;
	case CCA_ACTION_SEGMENT_FREE:
	case CCA_ACTION_SEGMENT_UNMAP:
		g_hash_table_remove(p->segments, &model->addr);
		break;
	case CCA_ACTION_OOM:
		p->oom_pending = true;
		p->oom_size = model->size;
		p->oom_stream = model->stream;
		break;
	default:
		break;
	}
}

/* Copies the state ALLOC has now into M, with every origin. */
static void
moment_take(CcaPeak *p, Moment *m, CcaPeakKind kind, uint64_t index, const CcaEvent *ev,
	    const CcaAllocator *alloc)
{
	moment_clear(m);
	const CcaStats *st = cca_allocator_stats(alloc);
	m->kind = kind;
	m->index = index;
	m->time_us = ev ? ev->time_us : CCA_TIME_NONE;
	m->reserved = (uint64_t)st->reserved_bytes[CCA_STAT_ALL].current;
	m->allocated = (uint64_t)st->allocated_bytes[CCA_STAT_ALL].current;
	m->state = cca_allocator_state(alloc);
	m->blocks = g_array_new(FALSE, TRUE, sizeof(Origin));
	m->creators = g_array_sized_new(FALSE, TRUE, sizeof(Origin), m->state->len);
	for (guint i = 0; i < m->state->len; i++) {
		const CcaStateSegment *s = &g_array_index(m->state, CcaStateSegment, i);
		Origin c = table_get(p->segments, s->address);
		g_array_append_val(m->creators, c);
		for (size_t k = 0; k < s->n_blocks; k++) {
			Origin o = {0};
			if (s->blocks[k].state != CCA_BLOCK_INACTIVE)
				o = table_get(p->live, s->blocks[k].address);
			g_array_append_val(m->blocks, o);
		}
	}
}

void
cca_peak_observe(CcaPeak *p, uint64_t index, const CcaEvent *ev, const CcaAllocator *alloc)
{
	unsigned set;
	if (p->mode == PEAK_TAKE) /* the moments the first replay found */
		set = (p->take[0] && index == p->take_at[0] ? CCA_FIGURES_RESERVED_PEAK : 0) |
		      (p->take[1] && index == p->take_at[1] ? CCA_FIGURES_ALLOCATED_PEAK : 0);
	else
		set = cca_figures_observe(&p->figures, index, ev, alloc);
	if (p->mode != PEAK_FIND && (set & CCA_FIGURES_RESERVED_PEAK))
		moment_take(p, &p->peaks[CCA_PEAK_RESERVED], CCA_PEAK_RESERVED, index, ev, alloc);
	if (p->mode != PEAK_FIND && (set & CCA_FIGURES_ALLOCATED_PEAK))
		moment_take(p, &p->peaks[CCA_PEAK_ALLOCATED], CCA_PEAK_ALLOCATED, index, ev, alloc);
	bool recorded = ev && ev->action == CCA_ACTION_OOM;
	if (!p->oom_pending && !recorded)
		return;
	if (p->mode != PEAK_TAKE) /* (the first replay counted them all) */
		p->n_ooms++;
	if (p->mode == PEAK_FIND) {
		if (p->n_ooms <= CCA_PEAK_MAX_OOMS)
			p->last_oom = index; /* the last OOM whose state is kept */
		p->oom_pending = false;
		return;
	}
	if (p->ooms->len < CCA_PEAK_MAX_OOMS) {
		g_array_set_size(p->ooms, p->ooms->len + 1);
		Moment *m = &g_array_index(p->ooms, Moment, p->ooms->len - 1);
		moment_take(p, m, CCA_PEAK_OOM, index, ev, alloc);
		m->recorded = recorded;
		m->model_failed = p->oom_pending;
		m->oom_size = p->oom_pending ? p->oom_size : ev->size;
		m->oom_stream = p->oom_pending ? p->oom_stream : ev->stream;
		/* the state the failure left (after the release cascade): what
		 * the request could not use */
		cca_allocator_explain_request(alloc, m->oom_size, m->oom_stream, &m->why);
	}
	p->oom_pending = false;
}

void
cca_peak_begin_find(CcaPeak *p)
{
	p->mode = PEAK_FIND;
}

uint64_t
cca_peak_begin_take(CcaPeak *p)
{
	uint64_t stop = 0;
	const CcaMoment *at[2] = {&p->figures.reserved_peak, &p->figures.allocated_peak};
	for (int k = 0; k < 2; k++) {
		p->take[k] = at[k]->seen;
		p->take_at[k] = at[k]->index;
		if (at[k]->seen && at[k]->index + 1 > stop)
			stop = at[k]->index + 1;
	}
	if (p->n_ooms > 0 && p->last_oom + 1 > stop)
		stop = p->last_oom + 1;
	p->mode = PEAK_TAKE;
	p->oom_pending = false;
	return stop;
}

static void
peak_observer(void *data, uint64_t index, const CcaEvent *ev, const CcaAllocator *alloc)
{
	cca_peak_observe(data, index, ev, alloc);
}

static void
peak_model(void *data, uint64_t cause, const CcaEvent *trace, const CcaEvent *model)
{
	cca_peak_model_event(data, cause, trace, model);
}

CcaPeak *
cca_peak_collect(const CcaSnapshot *snap, const CcaReplayOptions *options, CcaReplayResult *result,
		 GError **error)
{
	CcaPeak *p = cca_peak_new(snap, options->device);
	g_autoptr(CcaPlan) own_plan = NULL;
	CcaReplayOptions o = *options;
	if (!o.plan) { /* both replays from one plan */
		own_plan = cca_plan_new(snap, options->device, options->pytorch_version,
					options->rewind, error);
		if (!own_plan) {
			cca_peak_free(p);
			return NULL;
		}
		o.plan = own_plan;
	}
	o.observer = peak_observer;
	o.observer_data = p;
	o.on_model_event = peak_model;
	o.on_model_event_data = p;
	/* the first replay finds the moments, and gives the result */
	cca_peak_begin_find(p);
	if (!cca_replay_run(snap, &o, result, error)) {
		cca_peak_free(p);
		return NULL;
	}
	o.stop_after = cca_peak_begin_take(p);
	if (o.stop_after == 0)
		return p; /* no entry: no moment */
	/* the second copies the state at each, and stops after the last */
	CcaReplayResult again;
	if (!cca_replay_run(snap, &o, &again, error)) {
		cca_replay_result_clear(result);
		cca_peak_free(p);
		return NULL;
	}
	cca_replay_result_clear(&again);
	return p;
}

gboolean
cca_peak_run_collect(CcaPeakRun *run, const CcaSnapshot *snap, const CcaReplayOptions *options,
		     GError **error)
{
	run->label = cca_report_settings_label(snap, options);
	run->pytorch_version = options->pytorch_version;
	run->peak = cca_peak_collect(snap, options, &run->result, error);
	return run->peak != NULL;
}

void
cca_peak_run_clear(CcaPeakRun *run)
{
	cca_replay_result_clear(&run->result);
	cca_peak_free(run->peak);
	g_free(run->label);
	memset(run, 0, sizeof *run);
}

/* The report of one run with what names it. */
static json_t *
run_json(const char *trace, int device, const CcaPeakRun *r)
{
	json_t *o = cca_peak_to_json(r->peak, &r->result.stats);
	json_object_set_new(o, "trace", cca_json_string(trace));
	json_object_set_new(o, "device", json_integer(device));
	json_object_set_new(o, "settings", cca_json_string(r->label));
	json_object_set_new(o, "whatif", cca_json_bool(r->result.whatif));
	json_object_set_new(o, "window", cca_report_window_json(&r->result));
	if (r->result.start_reconstructed) /* segment.all.peak: the run's, unknown */
		json_object_set_new(json_object_get(o, "figures"), "peak_segment_count",
				    json_null());
	/* rules modelled from source, never checked on hardware (doc/versions.md) */
	json_object_set_new(o, "unvalidated",
			    cca_json_bool(cca_rules_for(r->pytorch_version)->unvalidated));
	return o;
}

json_t *
cca_peak_run_to_json(const char *trace, int device, const CcaPeakRun *a, const CcaPeakRun *b)
{
	if (!b)
		return run_json(trace, device, a);
	json_t *o = json_object();
	json_object_set_new(o, "a", run_json(trace, device, a));
	json_object_set_new(o, "b", run_json(trace, device, b));
	json_object_set_new(o, "changes", cca_peak_changes_to_json(a->peak, b->peak));
	return o;
}

const CcaFigures *
cca_peak_figures(const CcaPeak *p)
{
	return &p->figures;
}

/* ------------------------------------------------------------ groups */

typedef enum {
	BY_STACK = 0,
	BY_ANNOTATION,
	BY_METADATA,
	BY_COUNT
} GroupBy;

static const char *const group_names[BY_COUNT] = {"stack", "annotation", "user_metadata"};

typedef struct {
	char *key;
	uint32_t stack; /* BY_STACK: the stack id, 0 for none */
	uint64_t bytes;
	uint64_t blocks;
} Group;

static void
group_free(gpointer g)
{
	g_free(((Group *)g)->key);
	g_free(g);
}

static gint
group_compare(gconstpointer a, gconstpointer b)
{
	const Group *x = *(Group *const *)a, *y = *(Group *const *)b;
	if (x->bytes != y->bytes)
		return x->bytes < y->bytes ? 1 : -1;
	return strcmp(x->key, y->key);
}

static bool
has_frames(const CcaSnapshot *snap, uint32_t stack)
{
	if (stack == CCA_ID_NONE || stack >= cca_snapshot_n_stacks(snap))
		return false;
	return g_array_index(snap->stack_offsets, uint32_t, stack) <
	       g_array_index(snap->stack_offsets, uint32_t, stack + 1);
}

/* One frame as "name (file:line)", escaped for display
 * (cca_stack_append_frame()). */
static char *
frame_label(const CcaSnapshot *snap, uint32_t frame_id)
{
	GString *s = g_string_new(NULL);
	cca_stack_append_frame(s, snap, frame_id);
	return g_string_free(s, FALSE);
}

/* The key of a block of origin O in grouping BY. */
static char *
group_key(const CcaPeak *p, GroupBy by, const Origin *o)
{
	switch (by) {
	case BY_STACK: {
		if (!o->known || !has_frames(p->snap, o->stack))
			return g_strdup(CCA_PEAK_NO_STACK);
		GString *s = g_string_new(NULL);
		cca_stack_append(s, p->snap, o->stack);
		/* stacks that show alike stay apart: their id */
		g_string_append_printf(s, " [stack %u]", o->stack);
		return g_string_free(s, FALSE);
	}
	case BY_ANNOTATION: {
		const char *path = o->known ? annotation_at(p->spans, o->time_us) : NULL;
		return g_strdup(path ? path : CCA_PEAK_NO_ANNOTATION);
	}
	default: {
		const char *md = o->known && o->user_metadata != CCA_ID_NONE
					 ? cca_snapshot_string(p->snap, o->user_metadata)
					 : NULL;
		if (!md || !*md)
			return g_strdup(CCA_PEAK_NO_METADATA);
		return cca_text_display(md, -1, CCA_TEXT_DISPLAY_MAX);
	}
	}
}

/* The bytes and blocks of M the program freed that wait for another
 * stream's events (record_stream): live, but no longer allocated. */
static void
moment_pending(const Moment *m, uint64_t *bytes, uint64_t *blocks)
{
	*bytes = *blocks = 0;
	for (guint i = 0; i < m->state->len; i++) {
		const CcaStateSegment *s = &g_array_index(m->state, CcaStateSegment, i);
		for (size_t k = 0; k < s->n_blocks; k++)
			if (s->blocks[k].state == CCA_BLOCK_ACTIVE_PENDING_FREE) {
				*bytes += s->blocks[k].size;
				(*blocks)++;
			}
	}
}

/* The live blocks of M grouped BY, largest first (Group *), and their
 * sum in *TOTAL. */
static GPtrArray *
moment_groups(const CcaPeak *p, const Moment *m, GroupBy by, uint64_t *total)
{
	GHashTable *t = g_hash_table_new(g_str_hash, g_str_equal);
	GPtrArray *rows = g_ptr_array_new_with_free_func(group_free);
	*total = 0;
	guint bi = 0;
	for (guint i = 0; i < m->state->len; i++) {
		const CcaStateSegment *s = &g_array_index(m->state, CcaStateSegment, i);
		for (size_t k = 0; k < s->n_blocks; k++, bi++) {
			/* allocated blocks: a freed one waiting for another
			 * stream's events is counted apart (moment_pending()) */
			if (s->blocks[k].state != CCA_BLOCK_ACTIVE_ALLOCATED)
				continue;
			const Origin *o = &g_array_index(m->blocks, Origin, bi);
			char *key = group_key(p, by, o);
			Group *g = g_hash_table_lookup(t, key);
			if (!g) {
				g = g_new0(Group, 1);
				g->key = key;
				g->stack =
					by == BY_STACK && o->known && has_frames(p->snap, o->stack)
						? o->stack
						: 0;
				g_hash_table_insert(t, g->key, g);
				g_ptr_array_add(rows, g);
			} else {
				g_free(key);
			}
			g->bytes += s->blocks[k].size;
			g->blocks++;
			*total += s->blocks[k].size;
		}
	}
	g_hash_table_destroy(t);
	g_ptr_array_sort(rows, group_compare);
	return rows;
}

/* ------------------------------------------------- free space and why */

/* Free bytes, their largest block and live bytes of segment S. */
static void
segment_free(const CcaStateSegment *s, uint64_t *free, uint64_t *largest, uint64_t *live)
{
	*free = *largest = *live = 0;
	for (size_t k = 0; k < s->n_blocks; k++) {
		if (s->blocks[k].state == CCA_BLOCK_INACTIVE) {
			*free += s->blocks[k].size;
			if (s->blocks[k].size > *largest)
				*largest = s->blocks[k].size;
		} else {
			*live += s->blocks[k].size;
		}
	}
}

/* Why the free blocks of segment S (the largest LARGEST bytes) could not
 * serve the failing request WHY describes. */
static const char *
segment_reason(const CcaStateSegment *s, uint64_t largest, const CcaRequestWhy *why)
{
	if (s->pool_id[0] != 0 || s->pool_id[1] != 0)
		return "other pool (a private pool: MemPool or CUDA graph)";
	if (s->is_small != why->small_pool)
		return s->is_small ? "other pool (the small pool: blocks up to 1 MiB)"
				   : "other pool (the large pool: blocks over 1 MiB)";
	if (s->stream != why->stream)
		return "other stream";
	if (largest < why->size)
		return "too small";
	if (why->size < why->max_split_size && largest >= why->max_split_size)
		return "oversize: not split (a block of max_split_size or more serves only a request "
		       "of max_split_size or more)";
	if (why->size >= why->max_split_size && largest > why->size + why->max_non_split_rounding)
		return "oversize: not split (more than max_non_split_rounding beyond the request)";
	if (s->is_expandable && !why->expandable)
		return "an expandable segment (the feature is off now)";
	return "fits now (freed by the failure's release of cached blocks)";
}

/* ----------------------------------------------------------- JSON */

static const char *
kind_name(CcaPeakKind k)
{
	return k == CCA_PEAK_RESERVED	 ? "reserved_peak"
	       : k == CCA_PEAK_ALLOCATED ? "allocated_peak"
					 : "oom";
}

static json_t *
stack_frames_json(const CcaSnapshot *snap, uint32_t stack)
{
	json_t *a = json_array();
	if (!has_frames(snap, stack))
		return a;
	uint32_t lo = g_array_index(snap->stack_offsets, uint32_t, stack);
	uint32_t hi = g_array_index(snap->stack_offsets, uint32_t, stack + 1);
	for (uint32_t i = lo; i < hi; i++) {
		g_autofree char *f =
			frame_label(snap, g_array_index(snap->stack_frames, uint32_t, i));
		json_array_append_new(a, cca_json_string(f));
	}
	return a;
}

static json_t *
origin_json(const CcaPeak *p, const Origin *o)
{
	if (!o->known)
		return json_null();
	json_t *j = json_object();
	json_object_set_new(j, "event", cca_json_uint(o->index));
	json_object_set_new(j, "size", cca_json_uint(o->size));
	json_object_set_new(j, "stream", cca_json_uint(o->stream));
	g_autofree char *key = group_key(p, BY_STACK, o);
	json_object_set_new(j, "stack", cca_json_string(key));
	json_object_set_new(j, "frames", stack_frames_json(p->snap, o->stack));
	return j;
}

static json_t *
moment_json(const CcaPeak *p, const Moment *m)
{
	json_t *o = json_object();
	json_object_set_new(o, "kind", cca_json_string(kind_name(m->kind)));
	json_object_set_new(o, "event", cca_json_uint(m->index));
	json_object_set_new(o, "time_us",
			    m->time_us == CCA_TIME_NONE ? json_null() : json_integer(m->time_us));
	json_object_set_new(o, "reserved", cca_json_uint(m->reserved));
	json_object_set_new(o, "allocated", cca_json_uint(m->allocated));
	json_t *groups = json_object();
	uint64_t live_blocks = 0;
	for (int by = 0; by < BY_COUNT; by++) {
		uint64_t total;
		g_autoptr(GPtrArray) rows = moment_groups(p, m, by, &total);
		json_t *a = json_array();
		for (guint i = 0; i < rows->len; i++) {
			const Group *g = g_ptr_array_index(rows, i);
			json_t *r = json_object();
			json_object_set_new(r, "key", cca_json_string(g->key));
			json_object_set_new(r, "bytes", cca_json_uint(g->bytes));
			json_object_set_new(r, "blocks", cca_json_uint(g->blocks));
			if (by == BY_STACK)
				json_object_set_new(r, "frames",
						    stack_frames_json(p->snap, g->stack));
			json_array_append_new(a, r);
			if (by == 0)
				live_blocks += g->blocks;
		}
		json_object_set_new(groups, group_names[by], a);
	}
	json_object_set_new(o, "live_blocks", cca_json_uint(live_blocks));
	json_object_set_new(o, "groups", groups);
	uint64_t pending, pending_blocks;
	moment_pending(m, &pending, &pending_blocks);
	json_object_set_new(o, "pending_free", cca_json_uint(pending));
	json_object_set_new(o, "pending_free_blocks", cca_json_uint(pending_blocks));
	/* free space, most free first */
	json_t *segs = json_array(), *frees = json_array();
	for (guint i = 0; i < m->state->len; i++) {
		const CcaStateSegment *s = &g_array_index(m->state, CcaStateSegment, i);
		uint64_t fr, largest, live;
		segment_free(s, &fr, &largest, &live);
		json_t *j = json_object();
		char addr[32];
		g_snprintf(addr, sizeof addr, "0x%" G_GINT64_MODIFIER "x", s->address);
		json_object_set_new(j, "address", cca_json_string(addr));
		json_object_set_new(j, "size", cca_json_uint(s->total_size));
		json_object_set_new(j, "stream", cca_json_uint(s->stream));
		json_object_set_new(j, "pool", cca_json_string(s->is_small ? "small" : "large"));
		json_object_set_new(j, "expandable", cca_json_bool(s->is_expandable));
		json_object_set_new(j, "live", cca_json_uint(live));
		json_object_set_new(j, "free", cca_json_uint(fr));
		json_object_set_new(j, "largest_free_block", cca_json_uint(largest));
		json_object_set_new(j, "created_by",
				    origin_json(p, &g_array_index(m->creators, Origin, i)));
		if (fr) {
			json_t *f = json_deep_copy(j);
			json_object_set_new(f, "stranded", cca_json_bool(live != 0));
			if (m->kind == CCA_PEAK_OOM)
				json_object_set_new(
					f, "reason",
					cca_json_string(segment_reason(s, largest, &m->why)));
			json_array_append_new(frees, f);
		}
		json_array_append_new(segs, j);
	}
	/* most free first (stable on address) */
	size_t n = json_array_size(frees);
	json_t **v = g_new(json_t *, n ? n : 1);
	for (size_t i = 0; i < n; i++)
		v[i] = json_incref(json_array_get(frees, i));
	for (size_t i = 1; i < n; i++) { /* insertion sort: stable */
		json_t *x = v[i];
		uint64_t fx = (uint64_t)json_integer_value(json_object_get(x, "free"));
		size_t k = i;
		while (k > 0 &&
		       (uint64_t)json_integer_value(json_object_get(v[k - 1], "free")) < fx) {
			v[k] = v[k - 1];
			k--;
		}
		v[k] = x;
	}
	json_array_clear(frees);
	for (size_t i = 0; i < n; i++)
		json_array_append_new(frees, v[i]);
	g_free(v);
	json_object_set_new(o, "free_segments", frees);
	json_object_set_new(o, "segments", segs);
	if (m->kind == CCA_PEAK_OOM) {
		json_t *r = json_object();
		json_object_set_new(r, "size", cca_json_uint(m->oom_size));
		json_object_set_new(r, "rounded", cca_json_uint(m->why.size));
		json_object_set_new(r, "segment_size", cca_json_uint(m->why.alloc_size));
		json_object_set_new(r, "stream", cca_json_uint(m->oom_stream));
		json_object_set_new(r, "pool",
				    cca_json_string(m->why.small_pool ? "small" : "large"));
		json_object_set_new(r, "recorded", cca_json_bool(m->recorded));
		json_object_set_new(r, "model_failed", cca_json_bool(m->model_failed));
		json_object_set_new(o, "request", r);
		json_t *w = json_object();
		json_object_set_new(w, "largest_free_on_stream",
				    cca_json_uint(m->why.largest_free_stream));
		json_object_set_new(w, "free_on_stream", cca_json_uint(m->why.free_bytes_stream));
		json_object_set_new(w, "largest_free_other_streams",
				    cca_json_uint(m->why.largest_free_other));
		json_object_set_new(w, "stranded", cca_json_uint(m->why.stranded_bytes));
		json_object_set_new(w, "cached", cca_json_uint(m->why.cached_bytes));
		json_object_set_new(w, "over_cap", cca_json_bool(m->why.over_cap));
		json_object_set_new(w, "allowed_maximum", cca_json_uint(m->why.allowed_maximum));
		json_object_set_new(o, "why", w);
	}
	return o;
}

json_t *
cca_peak_to_json(const CcaPeak *p, const CcaStats *stats)
{
	json_t *o = json_object();
	json_object_set_new(o, "figures", cca_figures_to_json(&p->figures, stats));
	json_t *moments = json_array();
	for (int i = 0; i < 2; i++)
		if (p->peaks[i].state)
			json_array_append_new(moments, moment_json(p, &p->peaks[i]));
	for (guint i = 0; i < p->ooms->len; i++)
		json_array_append_new(moments, moment_json(p, &g_array_index(p->ooms, Moment, i)));
	json_object_set_new(o, "moments", moments);
	json_object_set_new(o, "ooms", cca_json_uint(p->n_ooms));
	return o;
}

/* ----------------------------------------------------------- text */

static gint
free_index_compare(gconstpointer a, gconstpointer b, gpointer data)
{
	const uint64_t *fr = data;
	guint x = *(const guint *)a, y = *(const guint *)b;
	if (fr[x] != fr[y])
		return fr[x] < fr[y] ? 1 : -1;
	return x < y ? -1 : x > y;
}

static void
moment_text(GString *out, const CcaPeak *p, const Moment *m, guint top)
{
	char a[32], b[32], c[32];
	if (m->kind == CCA_PEAK_OOM)
		g_string_append_printf(out,
				       "\nAt the OOM after event %" G_GUINT64_FORMAT
				       " (%s%s): a request of %s "
				       "(%s rounded) on stream %" G_GUINT64_FORMAT ",",
				       m->index, m->recorded ? "recorded" : "of the model",
				       m->recorded && m->model_failed	 ? ", and the model's"
				       : m->recorded && !m->model_failed ? "; the model served it"
									 : "",
				       cca_size_format(m->oom_size, a),
				       cca_size_format(m->why.size, b), m->oom_stream);
	else
		g_string_append_printf(out, "\nAt the %s (after event %" G_GUINT64_FORMAT "):",
				       m->kind == CCA_PEAK_RESERVED
					       ? CCA_FIGURES_LABEL_RESERVED_PEAK
					       : CCA_FIGURES_LABEL_ALLOCATED_PEAK,
				       m->index);
	g_string_append_printf(out, " %s reserved in %u segments, %s allocated\n",
			       cca_size_format(m->reserved, a), m->state->len,
			       cca_size_format(m->allocated, c));
	static const char *const titles[BY_COUNT] = {"call stack", "annotation (record_function)",
						     "user metadata"};
	for (int by = 0; by < BY_COUNT; by++) {
		uint64_t total;
		g_autoptr(GPtrArray) rows = moment_groups(p, m, by, &total);
		if (by != BY_STACK && rows->len == 1 &&
		    strcmp(((Group *)g_ptr_array_index(rows, 0))->key,
			   by == BY_ANNOTATION ? CCA_PEAK_NO_ANNOTATION : CCA_PEAK_NO_METADATA) ==
			    0)
			continue; /* nothing to tell */
		g_string_append_printf(out, "  live blocks by %s (%u groups, %s in all):\n",
				       titles[by], rows->len, cca_size_format(total, a));
		for (guint i = 0; i < rows->len && i < top; i++) {
			const Group *g = g_ptr_array_index(rows, i);
			g_string_append_printf(
				out, "    %12s %5.1f %% %6" G_GUINT64_FORMAT " blocks  %s\n",
				cca_size_format(g->bytes, a),
				total ? 100.0 * (double)g->bytes / (double)total : 0.0, g->blocks,
				g->key);
		}
		if (rows->len > top)
			g_string_append_printf(out, "    (%u more)\n", rows->len - top);
	}
	uint64_t pending, pending_blocks;
	moment_pending(m, &pending, &pending_blocks);
	if (pending)
		g_string_append_printf(out,
				       "  and %s in %" G_GUINT64_FORMAT
				       " blocks the program freed, waiting for another stream's "
				       "events (record_stream): not allocated, still reserved\n",
				       cca_size_format(pending, a), pending_blocks);
	/* free space */
	guint n = m->state->len;
	g_autofree uint64_t *fr = g_new0(uint64_t, n ? n : 1);
	g_autofree uint64_t *lg = g_new0(uint64_t, n ? n : 1);
	g_autoptr(GArray) order = g_array_new(FALSE, FALSE, sizeof(guint));
	uint64_t free_total = 0;
	for (guint i = 0; i < n; i++) {
		uint64_t live;
		segment_free(&g_array_index(m->state, CcaStateSegment, i), &fr[i], &lg[i], &live);
		if (fr[i]) {
			g_array_append_val(order, i);
			free_total += fr[i];
		}
	}
	g_array_sort_with_data(order, free_index_compare, fr);
	g_string_append_printf(out, "  free bytes in %u segments (%s), most first:\n", order->len,
			       cca_size_format(free_total, a));
	for (guint i = 0; i < order->len && i < top; i++) {
		guint k = g_array_index(order, guint, i);
		const CcaStateSegment *s = &g_array_index(m->state, CcaStateSegment, k);
		g_string_append_printf(
			out,
			"    %12s free of %s (largest block %s), %s pool, stream %" G_GUINT64_FORMAT
			"%s",
			cca_size_format(fr[k], a), cca_size_format(s->total_size, b),
			cca_size_format(lg[k], c), s->is_small ? "small" : "large", s->stream,
			fr[k] == s->total_size ? ", wholly free" : "");
		if (m->kind == CCA_PEAK_OOM)
			g_string_append_printf(out, ": %s", segment_reason(s, lg[k], &m->why));
		g_string_append(out, "\n");
	}
	if (order->len > top)
		g_string_append_printf(out, "    (%u more)\n", order->len - top);
	/* the requests that made the segments, largest segments first */
	g_autoptr(GArray) by_size = g_array_new(FALSE, FALSE, sizeof(guint));
	g_autofree uint64_t *sizes = g_new0(uint64_t, n ? n : 1);
	for (guint i = 0; i < n; i++) {
		sizes[i] = g_array_index(m->state, CcaStateSegment, i).total_size;
		g_array_append_val(by_size, i);
	}
	g_array_sort_with_data(by_size, free_index_compare, sizes);
	g_string_append(out,
			"  segments standing and the request that made each, largest first:\n");
	for (guint i = 0; i < n && i < top; i++) {
		guint k = g_array_index(by_size, guint, i);
		const CcaStateSegment *s = &g_array_index(m->state, CcaStateSegment, k);
		const Origin *o = &g_array_index(m->creators, Origin, k);
		g_string_append_printf(out, "    %12s at 0x%" G_GINT64_MODIFIER "x: ",
				       cca_size_format(s->total_size, a), s->address);
		if (!o->known) {
			g_string_append(out, "made before the trace began\n");
			continue;
		}
		g_autofree char *key = group_key(p, BY_STACK, o);
		g_string_append_printf(out, "event %" G_GUINT64_FORMAT ", alloc of %s, %s\n",
				       o->index, cca_size_format(o->size, b), key);
	}
	if (n > top)
		g_string_append_printf(out, "    (%u more)\n", n - top);
}

void
cca_peak_append_text(GString *out, const CcaPeak *p, guint top)
{
	const Moment *r = &p->peaks[CCA_PEAK_RESERVED], *a = &p->peaks[CCA_PEAK_ALLOCATED];
	if (r->state)
		moment_text(out, p, r, top);
	if (a->state && r->state && a->index == r->index)
		g_string_append_printf(
			out,
			"\nThe allocated peak is the same moment (after event %" G_GUINT64_FORMAT
			").\n",
			a->index);
	else if (a->state)
		moment_text(out, p, a, top);
	for (guint i = 0; i < p->ooms->len; i++)
		moment_text(out, p, &g_array_index(p->ooms, Moment, i), top);
	if (p->n_ooms > p->ooms->len)
		g_string_append_printf(out, "\n(%" G_GUINT64_FORMAT " more OOMs not shown)\n",
				       p->n_ooms - p->ooms->len);
}

/* ---------------------------------------------------------- folded */

/* Appends the frames of stack STACK root first, ';' between them and
 * none inside (flamegraph.pl splits on ';' and on the last space). */
static void
append_folded_stack(GString *out, const CcaSnapshot *snap, uint32_t stack)
{
	uint32_t lo = g_array_index(snap->stack_offsets, uint32_t, stack);
	uint32_t hi = g_array_index(snap->stack_offsets, uint32_t, stack + 1);
	for (uint32_t i = hi; i > lo; i--) {
		g_autofree char *f =
			frame_label(snap, g_array_index(snap->stack_frames, uint32_t, i - 1));
		g_strdelimit(f, ";", ':');
		if (i != hi)
			g_string_append_c(out, ';');
		g_string_append(out, f);
	}
}

gboolean
cca_peak_append_folded(GString *out, const CcaPeak *p, CcaPeakKind kind)
{
	const Moment *m = kind == CCA_PEAK_OOM
				  ? (p->ooms->len ? &g_array_index(p->ooms, Moment, 0) : NULL)
				  : &p->peaks[kind];
	if (!m || !m->state)
		return FALSE;
	uint64_t total;
	g_autoptr(GPtrArray) rows = moment_groups(p, m, BY_STACK, &total);
	for (guint i = 0; i < rows->len; i++) {
		const Group *g = g_ptr_array_index(rows, i);
		if (g->stack)
			append_folded_stack(out, p->snap, g->stack);
		else
			g_string_append(out, CCA_PEAK_NO_STACK);
		g_string_append_printf(out, " %" G_GUINT64_FORMAT "\n", g->bytes);
	}
	return TRUE;
}

/* ---------------------------------------------------------- changes */

typedef struct {
	const char *key;
	uint64_t a, b;
} Change;

static gint
change_compare(gconstpointer x, gconstpointer y)
{
	const Change *c = x, *d = y;
	uint64_t dc = c->a > c->b ? c->a - c->b : c->b - c->a;
	uint64_t dd = d->a > d->b ? d->a - d->b : d->b - d->a;
	if (dc != dd)
		return dc < dd ? 1 : -1;
	return strcmp(c->key, d->key);
}

/* The stack groups at A's and B's reserved peaks, by |b - a|. */
static GArray *
changes(const CcaPeak *a, const CcaPeak *b, GPtrArray **keep_a, GPtrArray **keep_b)
{
	uint64_t ta, tb;
	static const Moment none;
	const Moment *ma = a->peaks[CCA_PEAK_RESERVED].state ? &a->peaks[CCA_PEAK_RESERVED] : NULL;
	const Moment *mb = b->peaks[CCA_PEAK_RESERVED].state ? &b->peaks[CCA_PEAK_RESERVED] : NULL;
	(void)none;
	*keep_a = ma ? moment_groups(a, ma, BY_STACK, &ta) : g_ptr_array_new();
	*keep_b = mb ? moment_groups(b, mb, BY_STACK, &tb) : g_ptr_array_new();
	GArray *rows = g_array_new(FALSE, TRUE, sizeof(Change));
	GHashTable *t = g_hash_table_new(g_str_hash, g_str_equal);
	for (guint i = 0; i < (*keep_a)->len; i++) {
		const Group *g = g_ptr_array_index(*keep_a, i);
		Change c = {g->key, g->bytes, 0};
		g_array_append_val(rows, c);
		g_hash_table_insert(t, g->key, GUINT_TO_POINTER(rows->len));
	}
	for (guint i = 0; i < (*keep_b)->len; i++) {
		const Group *g = g_ptr_array_index(*keep_b, i);
		guint k = GPOINTER_TO_UINT(g_hash_table_lookup(t, g->key));
		if (k) {
			g_array_index(rows, Change, k - 1).b = g->bytes;
		} else {
			Change c = {g->key, 0, g->bytes};
			g_array_append_val(rows, c);
		}
	}
	g_hash_table_destroy(t);
	g_array_sort(rows, change_compare);
	return rows;
}

void
cca_peak_append_changes(GString *out, const CcaPeak *a, const CcaPeak *b, guint top)
{
	char x[32], y[32], z[32];
	const CcaMoment *ra = &a->figures.reserved_peak, *rb = &b->figures.reserved_peak;
	g_string_append(out, "\nWhat changes (A: first run, B: second):\n");
	g_string_append_printf(out,
			       "  %-33s %12s -> %12s (event %" G_GUINT64_FORMAT
			       " -> %" G_GUINT64_FORMAT ")\n",
			       CCA_FIGURES_LABEL_RESERVED_PEAK, cca_size_format(ra->reserved, x),
			       cca_size_format(rb->reserved, y), ra->index, rb->index);
	g_string_append_printf(
		out, "  %-33s %12s -> %12s\n", CCA_FIGURES_LABEL_UNALLOCATED,
		cca_size_format(cca_figures_unallocated_at_reserved_peak(&a->figures), x),
		cca_size_format(cca_figures_unallocated_at_reserved_peak(&b->figures), y));
	g_string_append_printf(out, "  %-33s %12" G_GUINT64_FORMAT " -> %12" G_GUINT64_FORMAT "\n",
			       CCA_FIGURES_LABEL_SEGMENTS_AT_PEAK, ra->segments, rb->segments);
	g_string_append_printf(out, "  %-33s %12s -> %12s\n", CCA_FIGURES_LABEL_ALLOCATED_PEAK,
			       cca_size_format(a->figures.allocated_peak.allocated, x),
			       cca_size_format(b->figures.allocated_peak.allocated, y));
	GPtrArray *ka, *kb;
	g_autoptr(GArray) rows = changes(a, b, &ka, &kb);
	g_string_append(
		out, "  live blocks at the reserved peak by call stack, largest changes first:\n");
	for (guint i = 0; i < rows->len && i < top; i++) {
		const Change *c = &g_array_index(rows, Change, i);
		int64_t d = (int64_t)(c->b - c->a);
		g_string_append_printf(
			out, "    %12s -> %12s (%s%s)  %s\n", cca_size_format(c->a, x),
			cca_size_format(c->b, y), d < 0 ? "-" : "+",
			cca_size_format(d < 0 ? (uint64_t)-d : (uint64_t)d, z), c->key);
	}
	g_ptr_array_unref(ka);
	g_ptr_array_unref(kb);
}

json_t *
cca_peak_changes_to_json(const CcaPeak *a, const CcaPeak *b)
{
	json_t *o = json_object(), *f = json_object(), *g = json_array();
	json_object_set_new(f, "a", cca_figures_to_json(&a->figures, NULL));
	json_object_set_new(f, "b", cca_figures_to_json(&b->figures, NULL));
	json_object_set_new(o, "figures", f);
	GPtrArray *ka, *kb;
	g_autoptr(GArray) rows = changes(a, b, &ka, &kb);
	for (guint i = 0; i < rows->len; i++) {
		const Change *c = &g_array_index(rows, Change, i);
		json_t *r = json_object();
		json_object_set_new(r, "key", cca_json_string(c->key));
		json_object_set_new(r, "bytes_a", cca_json_uint(c->a));
		json_object_set_new(r, "bytes_b", cca_json_uint(c->b));
		json_array_append_new(g, r);
	}
	json_object_set_new(o, "stack_groups", g);
	g_ptr_array_unref(ka);
	g_ptr_array_unref(kb);
	return o;
}
