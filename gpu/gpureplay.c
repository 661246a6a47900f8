/* gpureplay.c - the policy on a GPU against the policy in simulation.
 *
 * The three replays go through cca_replay_run(): the GPU one with a
 * CUDA device from make_device, the exact simulation with a simulated
 * device handed the GPU's segment addresses.  Both are forced into the
 * engine's what-if mode (addresses_from = the trace itself), so that
 * where the program called empty_cache() is found once, on a simulation
 * of the recording, and the two runs see the same requests; the GPU run
 * then differs from the simulation only where the device answers
 * differently, which is what is measured.
 *
 * Invariants of the comparison: the k-th successful segment call of the
 * GPU (cudaMalloc, cudaFree, map, unmap) is the k-th segment entry of the
 * simulation, with the same address and size; reserved memory after it is
 * the running sum of those entries' sizes, each rounded up to the driver's
 * granularity, and is what cudaMemGetInfo must show above the baseline.
 */
#include "config.h"

#include "gpureplay.h"
#include "event_cursor.h"

#include <string.h>

#include "cudautil.h"
#include "json.h"
#include "settings.h"
#include "simdevice.h"
#include "size.h"

#define DEFAULT_GRANULARITY CCA_H200_GRANULARITY

/* One entry the policy recorded, as compared. */
typedef struct {
	uint64_t addr;
	uint64_t size;
	uint64_t stream;
	uint8_t action;
} Entry;

typedef enum {
	RUN_PREDICTED,
	RUN_GPU,
	RUN_SIM,
} RunKind;

/* One of the three replays while it runs. */
typedef struct {
	RunKind kind;
	CcaGpuReplayResult *res;
	CcaDevice *pending;	 /* the CUDA device until the engine asks for it */
	CcaDevice *cuda;	 /* the CUDA device while the engine holds it */
	GArray *gpu_entries;	 /* Entry: what the GPU run recorded */
	GArray *segment_entries; /* Entry: the simulation's segment entries */
	uint64_t last_index;	 /* index of the trace's last event */
	uint64_t ooms;		 /* num_ooms at the previous event */
	uint64_t peak;		 /* largest reserved seen between events */
	CcaLayout *at_peak, *at_end;
} Run;

static void fail(CcaGpuReplayResult *res, const char *fmt, ...) G_GNUC_PRINTF(2, 3);

static void
fail(CcaGpuReplayResult *res, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	g_ptr_array_add(res->failures, g_strdup_vprintf(fmt, ap));
	va_end(ap);
}

static bool
is_segment_action(uint8_t action)
{
	return action == CCA_ACTION_SEGMENT_ALLOC || action == CCA_ACTION_SEGMENT_FREE ||
	       action == CCA_ACTION_SEGMENT_MAP || action == CCA_ACTION_SEGMENT_UNMAP;
}

static void
describe_entry(GString *out, const Entry *e)
{
	g_string_append_printf(out, "%s size=%" G_GUINT64_FORMAT, cca_event_action_name(e->action),
			       e->size);
	if (e->action != CCA_ACTION_OOM)
		g_string_append_printf(out, " addr=0x%" G_GINT64_MODIFIER "x", e->addr);
	g_string_append_printf(out, " stream=%" G_GUINT64_FORMAT, e->stream);
}

/* ------------------------------------------------------------ layouts */

static void
layout_clear(CcaLayout *l)
{
	g_free(l->exact);
	g_free(l->canonical);
	if (l->lines)
		g_ptr_array_free(l->lines, TRUE);
	memset(l, 0, sizeof *l);
}

static gint
compare_lines(gconstpointer a, gconstpointer b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static char
state_letter(uint8_t state, bool exact)
{
	if (state == CCA_BLOCK_INACTIVE)
		return 'f';
	return exact && state == CCA_BLOCK_ACTIVE_PENDING_FREE ? 'p' : 'a';
}

/* Takes ALLOC's segments and blocks into L. */
static void
layout_take(CcaLayout *l, const CcaAllocator *alloc)
{
	layout_clear(l);
	GArray *segs = cca_allocator_state(alloc);
	GString *exact = g_string_new(NULL);
	l->lines = g_ptr_array_new_with_free_func(g_free);
	for (guint i = 0; i < segs->len; i++) {
		const CcaStateSegment *s = &g_array_index(segs, CcaStateSegment, i);
		GString *line = g_string_new(NULL);
		g_string_append_printf(line, "%" G_GUINT64_FORMAT ":", s->total_size);
		g_string_append_printf(exact,
				       "%" G_GINT64_MODIFIER "x:%" G_GUINT64_FORMAT
				       ":%" G_GUINT64_FORMAT ":",
				       s->address, s->total_size, s->stream);
		for (size_t b = 0; b < s->n_blocks; b++) {
			const CcaStateBlock *blk = &s->blocks[b];
			g_string_append_printf(line,
					       "%s%" G_GUINT64_FORMAT "+%" G_GUINT64_FORMAT "%c",
					       b ? "," : "", blk->address - s->address, blk->size,
					       state_letter(blk->state, false));
			g_string_append_printf(exact,
					       "%" G_GINT64_MODIFIER "x+%" G_GUINT64_FORMAT
					       "%c%" G_GUINT64_FORMAT ",",
					       blk->address, blk->size,
					       state_letter(blk->state, true), blk->requested_size);
		}
		g_string_append_c(exact, '\n');
		g_ptr_array_add(l->lines, g_string_free(line, FALSE));
		l->blocks += (uint32_t)s->n_blocks;
	}
	g_ptr_array_sort(l->lines, compare_lines);
	GString *canonical = g_string_new(NULL);
	for (guint i = 0; i < l->lines->len; i++) {
		if (i)
			g_string_append_c(canonical, '\n');
		g_string_append(canonical, g_ptr_array_index(l->lines, i));
	}
	l->canonical = g_compute_checksum_for_string(G_CHECKSUM_SHA256, canonical->str, -1);
	l->exact = g_compute_checksum_for_string(G_CHECKSUM_SHA256, exact->str, -1);
	l->segments = segs->len;
	l->reserved = cca_allocator_reserved(alloc);
	l->taken = true;
	g_string_free(canonical, TRUE);
	g_string_free(exact, TRUE);
	cca_allocator_state_free(segs);
}

/* --------------------------------------------------- engine callbacks */

static CcaDevice *
make_device(void *data, const CcaSimDeviceConfig *cfg)
{
	Run *run = data;
	if (run->kind == RUN_GPU && run->pending) {
		run->cuda = run->pending;
		run->pending = NULL;
		return run->cuda;
	}
	CcaSimDeviceConfig dc = *cfg;
	if (run->kind == RUN_SIM) {
		dc.address_model = CCA_ADDRESS_RECORDED;
		dc.segment_bases = run->res->record.segment_bases;
		dc.reservation_bases = run->res->record.reservation_bases;
	} else {
		/* the engine replays again from a rebuilt start: not on a GPU */
		fail(run->res, "the engine needed a second device for the GPU run");
	}
	return cca_simdevice_new(&dc);
}

static void
on_entry(void *data, uint64_t cause, const CcaEvent *trace, const CcaEvent *ev)
{
	Run *run = data;
	Entry e = {.addr = ev->addr, .size = ev->size, .stream = ev->stream, .action = ev->action};
	CcaGpuReplayResult *res = run->res;
	if (run->kind == RUN_GPU) {
		g_array_append_val(run->gpu_entries, e);
		if (run->cuda)
			cca_cudadevice_on_event(run->cuda, ev);
		return;
	}
	if (is_segment_action(e.action))
		g_array_append_val(run->segment_entries, e);
	if (res->entries_divergence)
		return;
	uint64_t k = res->entries_compared++;
	GString *msg = NULL;
	if (k >= run->gpu_entries->len) {
		msg = g_string_new(NULL);
		g_string_printf(msg, "entry %" G_GUINT64_FORMAT ": the simulation recorded ", k);
		describe_entry(msg, &e);
		g_string_append(msg, " after the GPU run ended");
	} else {
		const Entry *g = &g_array_index(run->gpu_entries, Entry, k);
		bool same = g->action == e.action && g->size == e.size && g->stream == e.stream &&
			    (e.action == CCA_ACTION_OOM || g->addr == e.addr);
		if (!same) {
			msg = g_string_new(NULL);
			g_string_printf(msg, "entry %" G_GUINT64_FORMAT ": GPU ", k);
			describe_entry(msg, g);
			g_string_append(msg, "; simulation ");
			describe_entry(msg, &e);
		}
	}
	if (msg)
		res->entries_divergence = g_string_free(msg, FALSE);
}

static void
observe(void *data, uint64_t index, const CcaEvent *event, const CcaAllocator *alloc)
{
	Run *run = data;
	uint64_t reserved = cca_allocator_reserved(alloc);
	if (reserved > run->peak) {
		run->peak = reserved;
		layout_take(run->at_peak, alloc);
	}
	uint64_t ooms = (uint64_t)cca_allocator_stats(alloc)->num_ooms;
	bool oom = event->action == CCA_ACTION_ALLOC && ooms > run->ooms;
	run->ooms = ooms;
	if (index == run->last_index || oom)
		layout_take(run->at_end, alloc);
}

/* ------------------------------------------------------- comparisons */

static int64_t
abs64(int64_t v)
{
	return v < 0 ? -v : v;
}

static uint8_t
action_of_call(uint8_t kind)
{
	switch (kind) {
	case CCA_CALL_MALLOC:
		return CCA_ACTION_SEGMENT_ALLOC;
	case CCA_CALL_FREE:
		return CCA_ACTION_SEGMENT_FREE;
	case CCA_CALL_MAP:
		return CCA_ACTION_SEGMENT_MAP;
	case CCA_CALL_UNMAP:
		return CCA_ACTION_SEGMENT_UNMAP;
	default:
		return CCA_ACTION_COUNT;
	}
}

/* Per kind: how many calls, how long. */
static void
summarise_times(CcaGpuReplayResult *res)
{
	const GArray *calls = res->record.calls;
	for (int kind = 0; kind < CCA_CALL_KINDS; kind++) {
		CcaCallTimes *t = &res->times[kind];
		GArray *us = g_array_new(FALSE, FALSE, sizeof(double));
		for (guint i = 0; i < calls->len; i++) {
			const CcaDeviceCall *c = &g_array_index(calls, CcaDeviceCall, i);
			if (c->kind != kind)
				continue;
			t->calls++;
			if (!c->ok)
				t->failed++;
			double v = (double)c->ns / 1e3;
			g_array_append_val(us, v);
			t->total_ms += v / 1e3;
			if (v > t->max_us)
				t->max_us = v;
		}
		t->median_us = cca_cudautil_median((double *)us->data, us->len);
		g_array_free(us, TRUE);
	}
}

/* Reserved memory after every segment call: the driver against the
 * simulation's entries. */
static void
compare_reserved(CcaGpuReplayResult *res, const GArray *sim_segments, uint64_t gran,
		 int64_t *expected_peak)
{
	const GArray *calls = res->record.calls;
	int64_t expected = 0;
	uint64_t k = 0, live = 0;
	bool mismatch_noted = false;
	*expected_peak = 0;
	for (guint i = 0; i < calls->len; i++) {
		const CcaDeviceCall *c = &g_array_index(calls, CcaDeviceCall, i);
		uint8_t action = action_of_call(c->kind);
		if (action == CCA_ACTION_COUNT)
			continue; /* reservations hold no memory */
		if (!c->ok) {
			if (c->kind == CCA_CALL_MALLOC || c->kind == CCA_CALL_MAP)
				res->driver_ooms++;
			continue;
		}
		switch (c->kind) {
		case CCA_CALL_MALLOC:
			res->mallocs++;
			if (++live > res->peak_segments)
				res->peak_segments = live;
			break;
		case CCA_CALL_FREE:
			res->frees++;
			live--;
			break;
		case CCA_CALL_MAP:
			res->maps++;
			break;
		default:
			res->unmaps++;
			break;
		}
		const Entry *e =
			k < sim_segments->len ? &g_array_index(sim_segments, Entry, k) : NULL;
		if (!mismatch_noted &&
		    (!e || e->action != action || e->addr != c->ptr || e->size != c->size)) {
			GString *msg = g_string_new(NULL);
			g_string_printf(msg,
					"segment call %" G_GUINT64_FORMAT
					": GPU %s of %" G_GUINT64_FORMAT
					" bytes at 0x%" G_GINT64_MODIFIER "x; simulation ",
					k, cca_cudadevice_call_kind_name(c->kind), c->size, c->ptr);
			if (e)
				describe_entry(msg, e);
			else
				g_string_append(msg, "none");
			fail(res, "%s", msg->str);
			g_string_free(msg, TRUE);
			mismatch_noted = true;
		}
		/* the simulation's figure, at the driver's granularity */
		uint64_t size = e ? e->size : c->size;
		int64_t rounded = (int64_t)((size + gran - 1) / gran * gran);
		bool grows = c->kind == CCA_CALL_MALLOC || c->kind == CCA_CALL_MAP;
		expected += grows ? rounded : -rounded;
		if (expected > *expected_peak)
			*expected_peak = expected;
		int64_t diff = abs64(c->used - expected);
		if (diff == 0)
			res->reserved_exact++;
		if (c->used_delta == (grows ? rounded : -rounded))
			res->delta_exact++;
		if (diff > res->reserved_max_diff) {
			res->reserved_max_diff = diff;
			res->reserved_worst_op = res->segment_ops;
		}
		res->segment_ops++;
		k++;
	}
	if (!mismatch_noted && k != sim_segments->len)
		fail(res, "the simulation made %u segment calls, the GPU %" G_GUINT64_FORMAT,
		     sim_segments->len, k);
}

typedef struct {
	const CcaStats *other;
	char *first; /* first key that differs */
} StatsDiff;

static void
stats_differ(const char *name, int64_t value, void *data)
{
	StatsDiff *d = data;
	int64_t other = 0;
	if (d->first || !cca_stats_lookup(d->other, name, &other) || other == value)
		return;
	d->first = g_strdup_printf("%s: GPU run %" G_GINT64_FORMAT ", simulation %" G_GINT64_FORMAT,
				   name, value, other);
}

static void
compare_runs(CcaGpuReplayResult *res, const Run *gpu, const Run *sim,
	     const CcaGpuReplayOptions *opt)
{
	uint64_t gran = res->record.granularity ? res->record.granularity : DEFAULT_GRANULARITY;
	res->tolerance = opt->tolerance ? opt->tolerance : gran;
	res->entries = gpu->gpu_entries->len;
	if (res->record.error)
		fail(res, "CUDA: %s", res->record.error);
	if (res->entries_divergence)
		fail(res, "the policy diverged: %s", res->entries_divergence);
	else if (res->entries_compared != res->entries)
		fail(res,
		     "the GPU run recorded %" G_GUINT64_FORMAT
		     " entries, the simulation %" G_GUINT64_FORMAT,
		     res->entries, res->entries_compared);
	summarise_times(res);
	int64_t expected_peak = 0;
	compare_reserved(res, sim->segment_entries, gran, &expected_peak);
	if ((uint64_t)res->reserved_max_diff > res->tolerance)
		fail(res,
		     "reserved memory: the driver's figure differs from the simulation's by %" G_GINT64_FORMAT
		     " bytes after segment call %" G_GUINT64_FORMAT " (tolerance %" G_GUINT64_FORMAT
		     ")",
		     res->reserved_max_diff, res->reserved_worst_op, res->tolerance);
	if ((uint64_t)abs64(res->record.peak_used - expected_peak) > res->tolerance)
		fail(res,
		     "peak reserved: driver %" G_GINT64_FORMAT ", simulation %" G_GINT64_FORMAT
		     " bytes",
		     res->record.peak_used, expected_peak);
	if ((uint64_t)abs64(res->record.final_used) > res->tolerance)
		fail(res, "%" G_GINT64_FORMAT " bytes of device memory still used after cleanup",
		     res->record.final_used);
	if (res->driver_ooms)
		fail(res, "the driver refused %" G_GUINT64_FORMAT " allocations", res->driver_ooms);
	StatsDiff d = {.other = &res->simulated.stats};
	cca_stats_foreach(&res->gpu.stats, stats_differ, &d);
	if (d.first) {
		fail(res, "memory_stats differ: %s", d.first);
		g_free(d.first);
	}
	const CcaLayout *pairs[2][2] = {{&res->gpu_peak, &res->sim_peak},
					{&res->gpu_end, &res->sim_end}};
	const char *when[2] = {"at the reserved peak", "at the end"};
	for (int i = 0; i < 2; i++) {
		const CcaLayout *g = pairs[i][0], *s = pairs[i][1];
		if (g->taken != s->taken || (g->taken && strcmp(g->exact, s->exact) != 0))
			fail(res, "blocks within segments differ %s", when[i]);
	}
	res->passed = res->failures->len == 0;
}

/* ------------------------------------------------------------- driver */

/* The trace's streams (distinct, in order of appearance) and its number
 * of events. */
static gboolean
scan_trace(const CcaSnapshot *snap, int device, GArray *streams, uint64_t *n_events, GError **error)
{
	g_autoptr(CcaEventCursor) cursor = cca_event_cursor_new(snap, device);
	CcaEvent ev;
	GError *local = NULL;
	*n_events = 0;
	while (cca_event_cursor_next(cursor, &ev, &local)) {
		(*n_events)++;
		if (ev.action != CCA_ACTION_ALLOC)
			continue;
		bool known = false;
		for (guint i = 0; i < streams->len && !known; i++)
			known = g_array_index(streams, uint64_t, i) == ev.stream;
		if (!known)
			g_array_append_val(streams, ev.stream);
	}
	if (local) {
		g_propagate_error(error, local);
		return FALSE;
	}
	return TRUE;
}

/* Runs one replay of OPTIONS as KIND into OUT. */
static gboolean
run_one(const CcaSnapshot *snap, const CcaReplayOptions *base, Run *run, CcaReplayResult *out,
	GError **error)
{
	CcaReplayOptions o = *base;
	o.observer = observe;
	o.observer_data = run;
	if (run->kind != RUN_PREDICTED) {
		o.addresses_from = snap;
		o.make_device = make_device;
		o.make_device_data = run;
		o.on_model_event = on_entry;
		o.on_model_event_data = run;
	}
	gboolean ok = cca_replay_run(snap, &o, out, error);
	run->cuda = NULL; /* destroyed with the engine's pass */
	return ok;
}

gboolean
cca_gpureplay_run(const CcaSnapshot *snap, const CcaGpuReplayOptions *opt, CcaGpuReplayResult *res,
		  GError **error)
{
	memset(res, 0, sizeof *res);
	cca_cudadevice_record_init(&res->record);
	res->failures = g_ptr_array_new_with_free_func(g_free);
	int device = opt->replay.device;
	if (device < 0 || device >= snap->n_devices) {
		g_set_error(error, CCA_INPUT_ERROR, CCA_INPUT_ERROR_NOT_SNAPSHOT,
			    "%s: no device %d in the trace (it has %d)", snap->source, device,
			    snap->n_devices);
		return FALSE;
	}
	CcaCudaInfo info;
	if (!cca_cudadevice_info(opt->ordinal, &info, error))
		return FALSE;
	g_free(info.name);
	GArray *streams = g_array_new(FALSE, FALSE, sizeof(uint64_t));
	uint64_t n_events = 0;
	CcaReplayOptions base = opt->replay;
	base.device_memory = opt->capacity ? opt->capacity : info.total_memory;
	base.capacity_set = opt->capacity != 0;
	base.check = false;
	base.addresses_from = NULL;
	base.make_device = NULL;
	base.on_model_event = NULL;
	Run pred = {.kind = RUN_PREDICTED,
		    .res = res,
		    .at_peak = &res->pred_peak,
		    .at_end = &res->pred_end};
	Run gpu = {.kind = RUN_GPU, .res = res, .at_peak = &res->gpu_peak, .at_end = &res->gpu_end};
	Run sim = {.kind = RUN_SIM, .res = res, .at_peak = &res->sim_peak, .at_end = &res->sim_end};
	gpu.gpu_entries = g_array_new(FALSE, FALSE, sizeof(Entry));
	sim.gpu_entries = gpu.gpu_entries;
	sim.segment_entries = g_array_new(FALSE, FALSE, sizeof(Entry));
	CcaSettings recorded;
	cca_settings_init(&recorded);
	gboolean ok = scan_trace(snap, device, streams, &n_events, error);
	pred.last_index = gpu.last_index = sim.last_index = n_events ? n_events - 1 : 0;
	if (ok)
		ok = run_one(snap, &base, &pred, &res->predicted, error);
	if (ok && res->predicted.start_reconstructed) {
		g_set_error(error, CCA_CUDA_ERROR, CCA_CUDA_ERROR_UNSUPPORTED,
			    "%s starts mid-run: its first segments were allocated before the trace "
			    "began, which a GPU cannot reproduce (replay it with `ccasim replay`)",
			    snap->source);
		ok = FALSE;
	}
	const CcaSettings *settings = opt->replay.settings;
	if (ok && !settings) {
		recorded.pytorch_version = res->predicted.pytorch_version;
		ok = cca_settings_from_recorded(&recorded, &snap->settings, error);
		settings = &recorded;
	}
	if (ok) {
		CcaCudaDeviceConfig dc = {
			.ordinal = opt->ordinal,
			.capacity = opt->capacity,
			.large_page = settings->large_segment_size,
			.streams = (const uint64_t *)streams->data,
			.n_streams = streams->len,
			.touch = opt->touch,
			.record = &res->record,
		};
		gpu.pending = cca_cudadevice_new(&dc, error);
		ok = gpu.pending != NULL;
	}
	if (ok)
		ok = run_one(snap, &base, &gpu, &res->gpu, error);
	if (gpu.pending) /* never handed to the engine */
		cca_device_free(gpu.pending);
	if (ok)
		ok = run_one(snap, &base, &sim, &res->simulated, error);
	if (ok)
		compare_runs(res, &gpu, &sim, opt);
	cca_settings_clear(&recorded);
	g_array_free(streams, TRUE);
	g_array_free(gpu.gpu_entries, TRUE);
	g_array_free(sim.segment_entries, TRUE);
	return ok;
}

void
cca_gpureplay_result_clear(CcaGpuReplayResult *res)
{
	cca_replay_result_clear(&res->predicted);
	cca_replay_result_clear(&res->gpu);
	cca_replay_result_clear(&res->simulated);
	cca_cudadevice_record_clear(&res->record);
	g_free(res->entries_divergence);
	CcaLayout *layouts[] = {&res->gpu_peak, &res->gpu_end,	 &res->sim_peak,
				&res->sim_end,	&res->pred_peak, &res->pred_end};
	for (size_t i = 0; i < G_N_ELEMENTS(layouts); i++)
		layout_clear(layouts[i]);
	if (res->failures)
		g_ptr_array_free(res->failures, TRUE);
	memset(res, 0, sizeof *res);
}

/* ------------------------------------------------------------ reports */

/* What the three columns show for one run's statistics. */
typedef struct {
	int64_t peak_reserved, final_reserved, peak_allocated, segments_peak;
	int64_t mallocs, frees, maps, unmaps, retries, ooms, empty_cache;
} Figures;

static Figures
figures_of(const CcaReplayResult *r)
{
	const CcaStats *st = &r->stats;
	const CcaStat *seg = &st->segment[CCA_STAT_ALL];
	Figures f = {
		.peak_reserved = st->reserved_bytes[CCA_STAT_ALL].peak,
		.final_reserved = st->reserved_bytes[CCA_STAT_ALL].current,
		.peak_allocated = st->allocated_bytes[CCA_STAT_ALL].peak,
		.segments_peak = seg->peak,
		.mallocs = seg->allocated,
		.frees = seg->freed,
		.maps = st->num_device_alloc - seg->allocated,
		.unmaps = st->num_device_free - seg->freed,
		.retries = st->num_alloc_retries,
		.ooms = st->num_ooms,
		.empty_cache = (int64_t)r->empty_cache_calls,
	};
	return f;
}

/* The driver's own figures (counts of calls made, memory it reports). */
static Figures
figures_measured(const CcaGpuReplayResult *res)
{
	Figures f = figures_of(&res->gpu); /* what only the policy knows */
	const GArray *calls = res->record.calls;
	f.peak_reserved = res->record.peak_used;
	f.final_reserved = 0;
	for (guint i = calls->len; i > 0; i--) {
		const CcaDeviceCall *c = &g_array_index(calls, CcaDeviceCall, i - 1);
		if (c->kind != CCA_CALL_RESERVE && c->kind != CCA_CALL_UNRESERVE) {
			f.final_reserved = c->used;
			break;
		}
	}
	f.segments_peak = (int64_t)res->peak_segments;
	f.mallocs = (int64_t)res->mallocs;
	f.frees = (int64_t)res->frees;
	f.maps = (int64_t)res->maps;
	f.unmaps = (int64_t)res->unmaps;
	return f;
}

static void
row3(GString *out, const char *label, int64_t a, int64_t b, int64_t c, bool bytes)
{
	g_string_append_printf(out,
			       "  %-26s %16" G_GINT64_FORMAT " %16" G_GINT64_FORMAT
			       " %16" G_GINT64_FORMAT "%s\n",
			       label, a, b, c, bytes ? " B" : "");
}

static const char *
layout_verdict(const CcaLayout *a, const CcaLayout *b, bool exact)
{
	if (!a->taken || !b->taken)
		return "not taken";
	return strcmp(exact ? a->exact : a->canonical, exact ? b->exact : b->canonical) == 0
		       ? "identical"
		       : "DIFFERENT";
}

void
cca_gpureplay_report_text(const CcaReportContext *ctx, const CcaGpuReplayOptions *opt,
			  const CcaGpuReplayResult *res, GString *out)
{
	const CcaCudaRecord *rec = &res->record;
	g_autofree char *conf = cca_settings_to_string(ctx->settings);
	char a[32], b[32], c[32];
	g_string_append_printf(out, "%s, device %d: %" G_GUINT64_FORMAT " events, settings \"%s\"",
			       ctx->trace, ctx->device, res->gpu.events, conf);
	if (res->gpu.allowed_maximum)
		g_string_append_printf(out, ", cap %s",
				       cca_size_format(res->gpu.allowed_maximum, a));
	g_string_append_printf(out,
			       "\non %s: %s total, VMM granularity %s; %s used before the replay "
			       "(context, streams)%s\n",
			       rec->name ? rec->name : "?", cca_size_format(rec->total_memory, a),
			       cca_size_format(rec->granularity, b),
			       cca_size_format(rec->baseline_used, c),
			       opt->touch ? "; every block memset on its stream" : "");
	g_string_append(out, "\n  predicted: `ccasim replay` (no GPU); simulated: the same, on the "
			     "GPU's addresses;\n  measured: the driver (cudaMemGetInfo, calls "
			     "made); other rows: the policy on the GPU\n\n");
	g_string_append_printf(out, "  %-26s %16s %16s %16s\n", "", "predicted", "simulated",
			       "measured");
	Figures p = figures_of(&res->predicted), s = figures_of(&res->simulated);
	Figures m = figures_measured(res);
	row3(out, "peak reserved", p.peak_reserved, s.peak_reserved, m.peak_reserved, true);
	row3(out, "reserved at the end", p.final_reserved, s.final_reserved, m.final_reserved,
	     true);
	row3(out, "peak allocated", p.peak_allocated, s.peak_allocated, m.peak_allocated, true);
	row3(out, "segments at peak", p.segments_peak, s.segments_peak, m.segments_peak, false);
	row3(out, "cudaMalloc", p.mallocs, s.mallocs, m.mallocs, false);
	row3(out, "cudaFree", p.frees, s.frees, m.frees, false);
	row3(out, "map (cuMemMap runs)", p.maps, s.maps, m.maps, false);
	row3(out, "unmap", p.unmaps, s.unmaps, m.unmaps, false);
	row3(out, "alloc retries", p.retries, s.retries, m.retries, false);
	row3(out, "OOMs", p.ooms, s.ooms, m.ooms, false);
	row3(out, "empty_cache calls", p.empty_cache, s.empty_cache, m.empty_cache, false);

	g_string_append_printf(
		out,
		"\nreserved after each segment operation (driver: used memory minus "
		"the baseline; simulation:\nsegment bytes rounded up to the %s "
		"granularity): %" G_GUINT64_FORMAT " operations, %" G_GUINT64_FORMAT
		" exact, largest difference %" G_GINT64_FORMAT " B (tolerance %" G_GUINT64_FORMAT
		" B)\n",
		cca_size_format(rec->granularity ? rec->granularity : DEFAULT_GRANULARITY, a),
		res->segment_ops, res->reserved_exact, res->reserved_max_diff, res->tolerance);
	g_string_append_printf(out,
			       "each operation's own used-memory delta equal to its rounded size: "
			       "%" G_GUINT64_FORMAT " of %" G_GUINT64_FORMAT "\n",
			       res->delta_exact, res->segment_ops);
	if (res->entries_divergence)
		g_string_append_printf(out, "entries: %s\n", res->entries_divergence);
	else
		g_string_append_printf(out,
				       "entries: the %" G_GUINT64_FORMAT
				       " the policy recorded on the GPU are the simulation's\n",
				       res->entries);
	g_string_append_printf(
		out,
		"blocks within segments, GPU against simulation: at the reserved "
		"peak (%u segments, %u blocks) %s, at the end (%u segments, %u blocks) "
		"%s\n",
		res->gpu_peak.segments, res->gpu_peak.blocks,
		layout_verdict(&res->gpu_peak, &res->sim_peak, true), res->gpu_end.segments,
		res->gpu_end.blocks, layout_verdict(&res->gpu_end, &res->sim_end, true));
	g_string_append_printf(out,
			       "blocks within segments, GPU against prediction (offsets, placement "
			       "aside): at the peak %s, at the end %s\n",
			       layout_verdict(&res->gpu_peak, &res->pred_peak, false),
			       layout_verdict(&res->gpu_end, &res->pred_end, false));
	g_string_append_printf(out, "\n  %-22s %8s %7s %11s %11s %11s\n", "device call", "calls",
			       "failed", "total ms", "median us", "max us");
	for (int k = 0; k < CCA_CALL_KINDS; k++) {
		const CcaCallTimes *t = &res->times[k];
		if (!t->calls)
			continue;
		g_string_append_printf(out,
				       "  %-22s %8" G_GUINT64_FORMAT " %7" G_GUINT64_FORMAT
				       " %11.3f %11.1f %11.1f\n",
				       cca_cudadevice_call_kind_name(k), t->calls, t->failed,
				       t->total_ms, t->median_us, t->max_us);
	}
	g_string_append_printf(out,
			       "\nblocks memset: %" G_GUINT64_FORMAT
			       "; stream-ordered frees waited for: %" G_GUINT64_FORMAT
			       "; CUDA streams: %u; left after cleanup: %" G_GINT64_FORMAT " B\n",
			       rec->touches, rec->stream_waits, rec->n_streams, rec->final_used);
	if (res->passed) {
		g_string_append(out, "result: PASS (the GPU agrees with the simulation)\n");
		return;
	}
	g_string_append(out, "result: FAIL\n");
	for (guint i = 0; i < res->failures->len; i++)
		g_string_append_printf(out, "  - %s\n",
				       (char *)g_ptr_array_index(res->failures, i));
}

static json_t *
json_layout(const CcaLayout *l, bool lines)
{
	if (!l->taken)
		return json_null();
	json_t *o = json_object();
	json_object_set_new(o, "segments", json_integer(l->segments));
	json_object_set_new(o, "blocks", json_integer(l->blocks));
	json_object_set_new(o, "reserved", cca_json_uint(l->reserved));
	json_object_set_new(o, "exact", cca_json_string(l->exact));
	json_object_set_new(o, "canonical", cca_json_string(l->canonical));
	if (lines) {
		json_t *list = json_array();
		for (guint i = 0; i < l->lines->len; i++)
			json_array_append_new(list,
					      cca_json_string(g_ptr_array_index(l->lines, i)));
		json_object_set_new(o, "lines", list);
	}
	return o;
}

static json_t *
json_figures(const Figures *f)
{
	json_t *o = json_object();
	json_object_set_new(o, "peak_reserved", json_integer(f->peak_reserved));
	json_object_set_new(o, "final_reserved", json_integer(f->final_reserved));
	json_object_set_new(o, "peak_allocated", json_integer(f->peak_allocated));
	json_object_set_new(o, "segments_peak", json_integer(f->segments_peak));
	json_object_set_new(o, "cudaMalloc", json_integer(f->mallocs));
	json_object_set_new(o, "cudaFree", json_integer(f->frees));
	json_object_set_new(o, "map", json_integer(f->maps));
	json_object_set_new(o, "unmap", json_integer(f->unmaps));
	json_object_set_new(o, "num_alloc_retries", json_integer(f->retries));
	json_object_set_new(o, "num_ooms", json_integer(f->ooms));
	json_object_set_new(o, "empty_cache_calls", json_integer(f->empty_cache));
	return o;
}

static json_t *
json_gpu(const CcaGpuReplayOptions *opt, const CcaCudaRecord *rec)
{
	json_t *o = json_object();
	json_object_set_new(o, "name", cca_json_string(rec->name));
	json_object_set_new(o, "ordinal", json_integer(opt->ordinal));
	json_object_set_new(o, "total_memory", cca_json_uint(rec->total_memory));
	json_object_set_new(o, "granularity", cca_json_uint(rec->granularity));
	json_object_set_new(o, "baseline_used", cca_json_uint(rec->baseline_used));
	json_object_set_new(o, "final_used", json_integer(rec->final_used));
	json_object_set_new(o, "streams", json_integer(rec->n_streams));
	json_object_set_new(o, "touches", cca_json_uint(rec->touches));
	json_object_set_new(o, "stream_waits", cca_json_uint(rec->stream_waits));
	json_object_set_new(o, "refused", cca_json_uint(rec->refused));
	json_object_set_new(o, "error", cca_json_string(rec->error));
	return o;
}

static json_t *
json_call_times(const CcaGpuReplayResult *res)
{
	json_t *o = json_object();
	for (int k = 0; k < CCA_CALL_KINDS; k++) {
		const CcaCallTimes *t = &res->times[k];
		if (!t->calls)
			continue;
		json_t *kind = json_object();
		json_object_set_new(kind, "calls", cca_json_uint(t->calls));
		json_object_set_new(kind, "failed", cca_json_uint(t->failed));
		json_object_set_new(kind, "total_ms", cca_json_fixed(t->total_ms, 3));
		json_object_set_new(kind, "median_us", cca_json_fixed(t->median_us, 1));
		json_object_set_new(kind, "max_us", cca_json_fixed(t->max_us, 1));
		json_object_set_new(o, cca_cudadevice_call_kind_name(k), kind);
	}
	return o;
}

/* [call, bytes, ns, used delta, used, ok] in call order */
static json_t *
json_calls(const CcaCudaRecord *rec)
{
	json_t *list = json_array();
	for (guint i = 0; i < rec->calls->len; i++) {
		const CcaDeviceCall *call = &g_array_index(rec->calls, CcaDeviceCall, i);
		json_array_append_new(list, json_pack("[s, I, I, I, I, i]",
						      cca_cudadevice_call_kind_name(call->kind),
						      (json_int_t)call->size, (json_int_t)call->ns,
						      (json_int_t)call->used_delta,
						      (json_int_t)call->used, (int)call->ok));
	}
	return list;
}

void
cca_gpureplay_report_json(const CcaReportContext *ctx, const CcaGpuReplayOptions *opt,
			  const CcaGpuReplayResult *res, GString *out)
{
	const CcaCudaRecord *rec = &res->record;
	g_autofree char *conf = cca_settings_to_string(ctx->settings);
	json_t *o = json_object();
	json_object_set_new(o, "trace", cca_json_string(ctx->trace));
	json_object_set_new(o, "device", json_integer(ctx->device));
	json_object_set_new(o, "settings", cca_json_string(conf));
	json_object_set_new(o, "memory_fraction", cca_json_real(ctx->memory_fraction));
	json_object_set_new(o, "capacity", cca_json_uint(opt->capacity));
	json_object_set_new(o, "touch", cca_json_bool(opt->touch));
	json_object_set_new(o, "gpu", json_gpu(opt, rec));
	Figures p = figures_of(&res->predicted), s = figures_of(&res->simulated);
	Figures m = figures_measured(res);
	json_t *figures = json_object();
	json_object_set_new(figures, "predicted", json_figures(&p));
	json_object_set_new(figures, "simulated", json_figures(&s));
	json_object_set_new(figures, "measured", json_figures(&m));
	json_object_set_new(o, "figures", figures);
	json_t *check = json_object();
	json_object_set_new(check, "segment_ops", cca_json_uint(res->segment_ops));
	json_object_set_new(check, "exact", cca_json_uint(res->reserved_exact));
	json_object_set_new(check, "delta_exact", cca_json_uint(res->delta_exact));
	json_object_set_new(check, "max_diff", json_integer(res->reserved_max_diff));
	json_object_set_new(check, "worst_op", cca_json_uint(res->reserved_worst_op));
	json_object_set_new(check, "tolerance", cca_json_uint(res->tolerance));
	json_object_set_new(check, "driver_ooms", cca_json_uint(res->driver_ooms));
	json_object_set_new(o, "reserved_check", check);
	json_t *entries = json_object();
	json_object_set_new(entries, "gpu", cca_json_uint(res->entries));
	json_object_set_new(entries, "compared", cca_json_uint(res->entries_compared));
	json_object_set_new(entries, "divergence", cca_json_string(res->entries_divergence));
	json_object_set_new(o, "entries", entries);
	json_t *layout = json_object();
	json_object_set_new(layout, "gpu_peak", json_layout(&res->gpu_peak, false));
	json_object_set_new(layout, "sim_peak", json_layout(&res->sim_peak, false));
	json_object_set_new(layout, "predicted_peak", json_layout(&res->pred_peak, false));
	json_object_set_new(layout, "gpu_end", json_layout(&res->gpu_end, true));
	json_object_set_new(layout, "sim_end", json_layout(&res->sim_end, false));
	json_object_set_new(layout, "predicted_end", json_layout(&res->pred_end, false));
	json_object_set_new(o, "layout", layout);
	json_object_set_new(o, "call_times", json_call_times(res));
	if (opt->keep_calls)
		json_object_set_new(o, "calls", json_calls(rec));
	json_object_set_new(o, "predicted", cca_report_replay_to_json(ctx, &res->predicted));
	json_object_set_new(o, "simulated", cca_report_replay_to_json(ctx, &res->simulated));
	json_object_set_new(o, "gpu_run", cca_report_replay_to_json(ctx, &res->gpu));
	json_object_set_new(o, "passed", cca_json_bool(res->passed));
	json_t *failures = json_array();
	for (guint i = 0; i < res->failures->len; i++)
		json_array_append_new(failures,
				      cca_json_string(g_ptr_array_index(res->failures, i)));
	json_object_set_new(o, "failures", failures);
	cca_json_append(out, o);
}
