/* export.c - a simulated run written as a PyTorch snapshot or a Chrome
 * trace.
 *
 * A snapshot lists the final segments before the trace entries, so each
 * device is replayed once, its model entries (with the trace's metadata)
 * kept in a temporary file as they come and its final state taken when the
 * replay ends; the pickle is written once every device has been replayed:
 * the segments, then each device's entries read back.  Memory stays that
 * of the live blocks, whatever the trace's length.
 *
 * Invariants of the captured state: segments sorted by address; the
 * blocks of a segment tile it in address order.
 */
#include "config.h"

#include "export.h"

#include "outfile.h"
#include "plan.h"
#include "event_cursor.h"

#include <errno.h>
#include <math.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "follow.h"
#include "json.h"
#include "pickle_write.h"

/* ------------------------------------------------------ captured state */

typedef struct {
	uint64_t address;
	uint64_t size;
	uint64_t requested_size;
	uint8_t state;	/* CcaBlockState */
	uint32_t stack; /* of its allocation, CCA_ID_NONE if unknown */
} ExBlock;

typedef struct {
	int device;
	uint64_t address;
	uint64_t total_size;
	uint64_t stream;
	bool is_small;
	bool is_expandable;
	GArray *blocks; /* ExBlock */
} ExSeg;

static void
exseg_clear(gpointer p)
{
	ExSeg *s = p;
	if (s->blocks)
		g_array_free(s->blocks, TRUE);
}

static GArray *
exstate_new(void)
{
	GArray *a = g_array_new(FALSE, TRUE, sizeof(ExSeg));
	g_array_set_clear_func(a, exseg_clear);
	return a;
}

/* Appends the allocator's current segments to OUT, giving each live
 * block its stack from STACKS (address -> stack + 1). */
static void
exstate_capture(GArray *out, int device, const CcaAllocator *alloc, GHashTable *stacks)
{
	GArray *state = cca_allocator_state(alloc);
	for (guint i = 0; i < state->len; i++) {
		const CcaStateSegment *s = &g_array_index(state, CcaStateSegment, i);
		ExSeg seg = {
			.device = device,
			.address = s->address,
			.total_size = s->total_size,
			.stream = s->stream,
			.is_small = s->is_small,
			.is_expandable = s->is_expandable,
			.blocks = g_array_sized_new(FALSE, FALSE, sizeof(ExBlock), s->n_blocks),
		};
		for (size_t k = 0; k < s->n_blocks; k++) {
			const CcaStateBlock *b = &s->blocks[k];
			ExBlock eb = {b->address, b->size, b->requested_size, (uint8_t)b->state, 0};
			if (b->state != CCA_BLOCK_INACTIVE) {
				gpointer v = g_hash_table_lookup(stacks, &b->address);
				eb.stack = v ? GPOINTER_TO_UINT(v) - 1 : CCA_ID_NONE;
			}
			g_array_append_val(seg.blocks, eb);
		}
		g_array_append_val(out, seg);
	}
	cca_allocator_state_free(state);
}

static gint
exseg_compare(gconstpointer a, gconstpointer b)
{
	const ExSeg *x = a, *y = b;
	if (x->address != y->address)
		return x->address < y->address ? -1 : 1;
	return x->device - y->device;
}

/* ------------------------------------------------------ device replays */

/* One device's replay: its final state, and its model entries annotated
 * with the trace's metadata, appended to SPILL (CcaEvent records). */
typedef struct {
	CcaFollow *follow;
	int device;
	GArray *state;	    /* all devices' segments */
	GHashTable *stacks; /* live block address -> stack + 1 */
	FILE *spill;
	uint64_t entries; /* written to SPILL */
} Device;

static void
device_finish(void *data, const CcaAllocator *alloc)
{
	Device *dv = data;
	exstate_capture(dv->state, dv->device, alloc, dv->stacks);
}

static void
device_model(void *data, uint64_t cause, const CcaEvent *trace, const CcaEvent *ev)
{
	Device *dv = data;
	if (ev->action == CCA_ACTION_ALLOC) {
		uint64_t *key = g_new(uint64_t, 1);
		*key = ev->addr;
		g_hash_table_replace(dv->stacks, key,
				     GUINT_TO_POINTER((trace ? trace->stack : 0) + 1));
	} else if (ev->action == CCA_ACTION_FREE_COMPLETED) {
		g_hash_table_remove(dv->stacks, &ev->addr);
	}
	CcaEvent out;
	cca_follow_annotate(dv->follow, trace, ev, &out);
	/* a write error shows in ferror(), checked when the replays end */
	if (fwrite(&out, sizeof out, 1, dv->spill) == 1)
		dv->entries++;
}

/* Replays device OPT->device of SNAP once: appends its final segments to
 * STATE and its annotated model entries to SPILL, and stores their count
 * in *ENTRIES.  Clears RESULT->matched when an entry departs from the
 * trace. */
static gboolean
replay_device(const CcaSnapshot *snap, const CcaReplayOptions *opt, GArray *state, FILE *spill,
	      uint64_t *entries, CcaExportResult *result, GError **error)
{
	Device dv = {
		.follow = cca_follow_new(snap, opt->device),
		.device = opt->device,
		.state = state,
		.stacks = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL),
		.spill = spill,
	};
	CcaReplayOptions o = *opt;
	o.check = false;
	o.observer = NULL;
	o.before_request = NULL;
	o.on_model_event = device_model;
	o.on_model_event_data = &dv;
	o.on_finish = device_finish;
	o.on_finish_data = &dv;
	CcaReplayResult res;
	gboolean ok = cca_replay_run(snap, &o, &res, error);
	if (ok)
		cca_replay_result_clear(&res);
	*entries = dv.entries;
	if (!cca_follow_matching(dv.follow))
		result->matched = FALSE;
	cca_follow_free(dv.follow);
	g_hash_table_destroy(dv.stacks);
	return ok;
}

/* A temporary file, already unlinked, for the model's entries. */
static FILE *
spill_open(GError **error)
{
	char *name = NULL;
	int fd = g_file_open_tmp("ccasim-export-XXXXXX", &name, error);
	if (fd < 0)
		return NULL;
	g_unlink(name);
	g_free(name);
	FILE *f = fdopen(fd, "w+b");
	if (!f) {
		int e = errno;
		close(fd);
		g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(e),
			    "cannot open a temporary file for the trace entries: %s",
			    g_strerror(e));
	}
	return f;
}

/* ----------------------------------------------------- pickle writing */

typedef struct {
	CcaPickleWriter *w;
	const CcaSnapshot *snap;
	GArray *frame_memo; /* uint32_t memo index + 1 per frame id */
	bool entry_frames;  /* trace entries carry "frames" */
} Out;

static void
key(Out *o, const char *k, gboolean last)
{
	cca_pickle_write_item(o->w, last);
	cca_pickle_write_str(o->w, k, -1);
}

static void
write_frames(Out *o, uint32_t stack)
{
	cca_pickle_write_list_begin(o->w);
	const CcaSnapshot *snap = o->snap;
	if (stack != CCA_ID_NONE && stack < cca_snapshot_n_stacks(snap)) {
		uint32_t lo = g_array_index(snap->stack_offsets, uint32_t, stack);
		uint32_t hi = g_array_index(snap->stack_offsets, uint32_t, stack + 1);
		for (uint32_t i = lo; i < hi; i++) {
			uint32_t f = g_array_index(snap->stack_frames, uint32_t, i);
			cca_pickle_write_item(o->w, i + 1 == hi);
			if (f >= o->frame_memo->len)
				g_array_set_size(o->frame_memo, f + 1);
			uint32_t *memo = &g_array_index(o->frame_memo, uint32_t, f);
			if (*memo) {
				cca_pickle_write_get(o->w, *memo - 1);
				continue;
			}
			*memo = cca_pickle_write_memo_mark(o->w) + 1;
			const CcaFrame *fr = &g_array_index(snap->frames, CcaFrame, f);
			cca_pickle_write_dict_begin(o->w);
			key(o, "name", FALSE);
			cca_pickle_write_str(o->w, cca_snapshot_string(snap, fr->name), -1);
			key(o, "filename", FALSE);
			cca_pickle_write_str(o->w, cca_snapshot_string(snap, fr->filename), -1);
			key(o, "line", TRUE);
			cca_pickle_write_int(o->w, fr->line);
			cca_pickle_write_end(o->w);
		}
	}
	cca_pickle_write_end(o->w);
}

static void
write_segment(Out *o, const ExSeg *s)
{
	uint64_t allocated = 0, active = 0, requested = 0;
	for (guint k = 0; k < s->blocks->len; k++) {
		const ExBlock *b = &g_array_index(s->blocks, ExBlock, k);
		if (b->state == CCA_BLOCK_ACTIVE_ALLOCATED)
			allocated += b->size;
		if (b->state != CCA_BLOCK_INACTIVE) {
			active += b->size;
			requested += b->requested_size;
		}
	}
	CcaPickleWriter *w = o->w;
	cca_pickle_write_dict_begin(w);
	key(o, "device", FALSE);
	cca_pickle_write_int(w, s->device);
	key(o, "address", FALSE);
	cca_pickle_write_uint(w, s->address);
	key(o, "total_size", FALSE);
	cca_pickle_write_uint(w, s->total_size);
	key(o, "allocated_size", FALSE);
	cca_pickle_write_uint(w, allocated);
	key(o, "active_size", FALSE);
	cca_pickle_write_uint(w, active);
	key(o, "requested_size", FALSE);
	cca_pickle_write_uint(w, requested);
	key(o, "stream", FALSE);
	cca_pickle_write_int(w, (int64_t)s->stream);
	key(o, "segment_type", FALSE);
	cca_pickle_write_str(w, s->is_small ? "small" : "large", -1);
	key(o, "segment_pool_id", FALSE);
	cca_pickle_write_int_pair(w, 0, 0);
	key(o, "is_expandable", FALSE);
	cca_pickle_write_bool(w, s->is_expandable);
	key(o, "frames", FALSE);
	write_frames(o, CCA_ID_NONE);
	key(o, "blocks", TRUE);
	cca_pickle_write_list_begin(w);
	for (guint k = 0; k < s->blocks->len; k++) {
		const ExBlock *b = &g_array_index(s->blocks, ExBlock, k);
		cca_pickle_write_item(w, k + 1 == s->blocks->len);
		cca_pickle_write_dict_begin(w);
		key(o, "address", FALSE);
		cca_pickle_write_uint(w, b->address);
		key(o, "size", FALSE);
		cca_pickle_write_uint(w, b->size);
		key(o, "requested_size", FALSE);
		cca_pickle_write_uint(w, b->requested_size);
		key(o, "state", FALSE);
		cca_pickle_write_str(w, cca_event_block_state_name(b->state), -1);
		key(o, "frames", TRUE);
		write_frames(o, b->state == CCA_BLOCK_INACTIVE ? CCA_ID_NONE : b->stack);
		cca_pickle_write_end(w);
	}
	cca_pickle_write_end(w);
	cca_pickle_write_end(w);
}

static void
write_entry(Out *o, const CcaEvent *ev, gboolean last)
{
	CcaPickleWriter *w = o->w;
	const CcaSnapshot *snap = o->snap;
	cca_pickle_write_item(w, last);
	cca_pickle_write_dict_begin(w);
	key(o, "action", FALSE);
	cca_pickle_write_str(w, cca_event_action_name(ev->action), -1);
	key(o, ev->action == CCA_ACTION_OOM ? "device_free" : "addr", FALSE);
	cca_pickle_write_uint(w, ev->addr);
	key(o, "size", FALSE);
	cca_pickle_write_uint(w, ev->size);
	key(o, "stream", FALSE);
	cca_pickle_write_int(w, (int64_t)ev->stream);
	key(o, "time_us", FALSE);
	cca_pickle_write_int(w, ev->time_us == CCA_TIME_NONE ? 0 : ev->time_us);
	key(o, "compile_context", FALSE);
	cca_pickle_write_str(w,
			     ev->compile_context == CCA_ID_NONE
				     ? "N/A"
				     : cca_snapshot_string(snap, ev->compile_context),
			     -1);
	key(o, "user_metadata", !o->entry_frames);
	cca_pickle_write_str(w, cca_snapshot_string(snap, ev->user_metadata), -1);
	if (o->entry_frames) {
		key(o, "frames", TRUE);
		write_frames(o, ev->stack);
	}
	cca_pickle_write_end(w);
}

/* Writes the next N entries of SPILL as one device's trace. */
static gboolean
write_device_entries(Out *o, FILE *spill, uint64_t n, GError **error)
{
	cca_pickle_write_list_begin(o->w);
	for (uint64_t k = 0; k < n; k++) {
		CcaEvent ev;
		if (fread(&ev, sizeof ev, 1, spill) != 1) {
			g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_IO,
				    "cannot read back the temporary file of trace entries");
			return FALSE;
		}
		write_entry(o, &ev, k + 1 == n);
	}
	cca_pickle_write_end(o->w);
	return TRUE;
}

static void
write_settings(Out *o, const CcaSettings *st, const char *conf)
{
	CcaPickleWriter *w = o->w;
	cca_pickle_write_dict_begin(w);
	key(o, "PYTORCH_CUDA_ALLOC_CONF", FALSE);
	cca_pickle_write_str(w, conf, -1);
	key(o, "max_split_size", FALSE);
	cca_pickle_write_int(w,
			     st->max_split_size == UINT64_MAX ? -1 : (int64_t)st->max_split_size);
	key(o, "garbage_collection_threshold", FALSE);
	cca_pickle_write_float(w, st->garbage_collection_threshold);
	key(o, "expandable_segments", FALSE);
	cca_pickle_write_bool(w, st->expandable_segments);
	key(o, "pinned_num_register_threads", FALSE);
	cca_pickle_write_int(w, st->pinned_num_register_threads);
	key(o, "release_lock_on_cudamalloc", FALSE);
	cca_pickle_write_bool(w, st->release_lock_on_cudamalloc);
	key(o, "pinned_use_cuda_host_register", FALSE);
	cca_pickle_write_bool(w, st->pinned_use_cuda_host_register);
	key(o, "graph_capture_record_stream_reuse", FALSE);
	cca_pickle_write_bool(w, st->graph_capture_record_stream_reuse);
	key(o, "roundup_power2_divisions", TRUE);
	cca_pickle_write_dict_begin(w);
	for (int i = 0; i < CCA_ROUNDUP_INTERVALS; i++) {
		char k[16];
		g_snprintf(k, sizeof k, "%u", 1u << i);
		key(o, k, i + 1 == CCA_ROUNDUP_INTERVALS);
		cca_pickle_write_int(w, st->roundup_power2_divisions[i]);
	}
	cca_pickle_write_end(w);
	cca_pickle_write_end(w);
}

static void
write_annotations(Out *o)
{
	const CcaSnapshot *snap = o->snap;
	CcaPickleWriter *w = o->w;
	guint n = snap->annotations ? snap->annotations->len : 0;
	cca_pickle_write_list_begin(w);
	for (guint i = 0; i < n; i++) {
		const CcaAnnotation *a = &g_array_index(snap->annotations, CcaAnnotation, i);
		cca_pickle_write_item(w, i + 1 == n);
		cca_pickle_write_dict_begin(w);
		key(o, "stage", FALSE);
		cca_pickle_write_str(w, cca_snapshot_string(snap, a->stage), -1);
		key(o, "name", FALSE);
		cca_pickle_write_str(w, cca_snapshot_string(snap, a->name), -1);
		key(o, "device", FALSE);
		cca_pickle_write_int(w, a->device);
		key(o, "time_us", TRUE);
		cca_pickle_write_int(w, a->time_us == CCA_TIME_NONE ? 0 : a->time_us);
		cca_pickle_write_end(w);
	}
	cca_pickle_write_end(w);
}

/* The fraction F of the default device (the H200's total memory, which a
 * replay of the file assumes) whose cap, (uint64_t)(F * total) as the
 * allocator computes it, is exactly CAP bytes (CAP below that total). */
static double
fraction_of_default_device(uint64_t cap)
{
	double total = (double)CCA_H200_TOTAL_MEMORY;
	double f = (double)cap / total;
	while ((uint64_t)(f * total) < cap)
		f = nextafter(f, 1.0);
	while (f > 0.0 && (uint64_t)(f * total) > cap)
		f = nextafter(f, 0.0);
	return f;
}

/* The cap a replay under OPT runs under, as a memory fraction a replay of
 * the exported file on the default device applies (0: none, or none that
 * a fraction can say; *UNRECORDED is then set when there was a cap). */
static double
recorded_fraction(const CcaReplayOptions *opt, gboolean *unrecorded)
{
	*unrecorded = FALSE;
	if (!opt->capacity_set)
		return opt->memory_fraction;
	/* cudaMalloc fails past device_memory; a fraction below 1 caps lower */
	uint64_t cap = opt->device_memory;
	if (opt->memory_fraction > 0.0 && opt->memory_fraction < 1.0)
		cap = (uint64_t)(opt->memory_fraction * (double)opt->device_memory);
	if (cap == 0 || cap >= CCA_H200_TOTAL_MEMORY) {
		*unrecorded = TRUE;
		return 0.0;
	}
	return fraction_of_default_device(cap);
}

/* The settings a replay under OPT uses, and the PYTORCH_CUDA_ALLOC_CONF
 * string to record for them: a cap (--memory-fraction, --device-memory)
 * becomes per_process_memory_fraction of the default device, so that the
 * file replays as it ran (*UNRECORDED: a cap no fraction can say). */
static gboolean
replayed_settings(const CcaSnapshot *snap, const CcaReplayOptions *opt, CcaSettings *out,
		  char **conf, gboolean *unrecorded, GError **error)
{
	cca_settings_init(out);
	out->pytorch_version = opt->pytorch_version ? opt->pytorch_version
						    : cca_replay_guess_pytorch_version(snap);
	if (opt->settings)
		cca_settings_copy(out, opt->settings);
	else if (!cca_plan_start_settings(snap, opt->device, out, error))
		return FALSE;
	double fraction = recorded_fraction(opt, unrecorded);
	if (fraction > 0.0) {
		out->has_per_process_memory_fraction = true;
		out->per_process_memory_fraction = fraction;
		*conf = cca_settings_to_string(out);
	} else if (!opt->settings && snap->settings.present && snap->settings.conf) {
		*conf = g_strdup(snap->settings.conf);
	} else {
		*conf = cca_settings_to_string(out);
	}
	return TRUE;
}

gboolean
cca_export_pickle(const CcaSnapshot *snap, const CcaReplayOptions *options, const char *path,
		  CcaExportResult *result, GError **error)
{
	memset(result, 0, sizeof *result);
	result->matched = TRUE;
	int n = snap->n_devices;
	uint64_t *entries = g_new0(uint64_t, n > 0 ? n : 1); /* of each device, in SPILL */
	GArray *state = exstate_new();
	FILE *spill = spill_open(error);
	gboolean ok = spill != NULL;
	for (int d = 0; d < n && ok; d++) {
		CcaReplayOptions o = *options;
		o.device = d;
		ok = replay_device(snap, &o, state, spill, &entries[d], result, error);
	}
	if (ok && (fflush(spill) != 0 || ferror(spill) || fseek(spill, 0, SEEK_SET) != 0)) {
		g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_IO,
			    "cannot write the temporary file of trace entries: %s",
			    g_strerror(errno));
		ok = FALSE;
	}
	g_array_sort(state, exseg_compare);
	CcaSettings settings = {0};
	char *conf = NULL;
	if (ok)
		ok = replayed_settings(snap, options, &settings, &conf, &result->cap_unrecorded,
				       error);
	char *tmp = NULL;
	FILE *f = ok ? cca_outfile_open(path, &tmp, error) : NULL;
	if (ok && f) {
		Out o = {
			.w = cca_pickle_write_new(f),
			.snap = snap,
			.frame_memo = g_array_new(FALSE, TRUE, sizeof(uint32_t)),
			/* PyTorch gives entries "frames" only when recording
			 * captured context: a trace with no stack at all had none */
			.entry_frames = cca_snapshot_n_stacks(snap) > 1,
		};
		cca_pickle_write_dict_begin(o.w);
		key(&o, "segments", FALSE);
		cca_pickle_write_list_begin(o.w);
		for (guint i = 0; i < state->len; i++) {
			const ExSeg *s = &g_array_index(state, ExSeg, i);
			cca_pickle_write_item(o.w, i + 1 == state->len);
			write_segment(&o, s);
			result->segments++;
			result->blocks += s->blocks->len;
		}
		cca_pickle_write_end(o.w);
		key(&o, "device_traces", FALSE);
		cca_pickle_write_list_begin(o.w);
		for (int d = 0; d < n && ok; d++) {
			cca_pickle_write_item(o.w, d + 1 == n);
			ok = write_device_entries(&o, spill, entries[d], error);
			result->entries += entries[d];
		}
		cca_pickle_write_end(o.w);
		key(&o, "allocator_settings", FALSE);
		write_settings(&o, &settings, conf);
		key(&o, "external_annotations", TRUE);
		write_annotations(&o);
		cca_pickle_write_end(o.w);
		GError *werr = NULL;
		if (!cca_pickle_write_finish(o.w, ok ? &werr : NULL) && ok && ferror(f)) {
			g_clear_error(&werr); /* cca_outfile_close() says why */
		} else if (werr != NULL) {
			g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_IO, "%s: %s", path,
				    werr->message);
			g_error_free(werr);
			ok = FALSE;
		}
		g_array_free(o.frame_memo, TRUE);
		ok = cca_outfile_close(f, tmp, path, ok, error);
	} else if (ok) {
		ok = FALSE;
	}
	g_free(conf);
	cca_settings_clear(&settings);
	g_array_free(state, TRUE);
	g_free(entries);
	if (spill)
		fclose(spill);
	return ok;
}

/* ------------------------------------------------------- chrome trace */

#define CCA_CHROME_COUNTERS 3

typedef struct {
	FILE *f;
	const CcaSnapshot *snap;
	int device;
	int64_t t0; /* first time_us, CCA_TIME_NONE when the trace has none */
	uint64_t index;
	int64_t last[CCA_CHROME_COUNTERS]; /* last written; -1 before */
	GHashTable *live;		   /* block address -> allocation id */
	uint64_t next_id;
	uint64_t written;
} Chrome;

static const char *const chrome_counter[CCA_CHROME_COUNTERS] = {"reserved", "allocated", "active"};

static int64_t
chrome_ts(const Chrome *c, int64_t time_us, uint64_t index)
{
	if (c->t0 == CCA_TIME_NONE || time_us == CCA_TIME_NONE)
		return (int64_t)index;
	return time_us - c->t0;
}

/* Writes one more element of the "traceEvents" array and releases EV. */
static void
chrome_emit(FILE *f, json_t *ev)
{
	fputs(",\n", f);
	cca_json_print(f, ev);
}

/* One counter per series: viewers stack the values of one counter's
 * args, and reserved already contains allocated, which contains active. */
static void
chrome_observer(void *data, uint64_t index, const CcaEvent *ev, const CcaAllocator *alloc)
{
	Chrome *c = data;
	c->index = index;
	const CcaStats *st = cca_allocator_stats(alloc);
	int64_t v[CCA_CHROME_COUNTERS] = {
		st->reserved_bytes[CCA_STAT_ALL].current,
		st->allocated_bytes[CCA_STAT_ALL].current,
		st->active_bytes[CCA_STAT_ALL].current,
	};
	for (int k = 0; k < CCA_CHROME_COUNTERS; k++) {
		if (v[k] == c->last[k])
			continue;
		c->last[k] = v[k];
		chrome_emit(c->f,
			    json_pack("{s:s, s:s, s:I, s:i, s:{s:I}}", "name", chrome_counter[k],
				      "ph", "C", "ts", (json_int_t)chrome_ts(c, ev->time_us, index),
				      "pid", c->device, "args", "bytes", (json_int_t)v[k]));
		c->written++;
	}
}

/* The innermost frame of STACK as "name (file:line)", or NULL. */
static char *
chrome_frame(const CcaSnapshot *snap, uint32_t stack)
{
	if (stack == CCA_ID_NONE || stack >= cca_snapshot_n_stacks(snap))
		return NULL;
	uint32_t lo = g_array_index(snap->stack_offsets, uint32_t, stack);
	uint32_t hi = g_array_index(snap->stack_offsets, uint32_t, stack + 1);
	if (lo >= hi)
		return NULL;
	const CcaFrame *fr = &g_array_index(snap->frames, CcaFrame,
					    g_array_index(snap->stack_frames, uint32_t, lo));
	return g_strdup_printf("%s (%s:%d)", cca_snapshot_string(snap, fr->name),
			       cca_snapshot_string(snap, fr->filename), (int)fr->line);
}

/* An allocation's life as an async pair: "b" at its alloc, "e" with the
 * same id when its block is freed (free_completed). */
static void
chrome_block(Chrome *c, const CcaEvent *trace, const CcaEvent *ev, uint64_t index, int64_t ts)
{
	json_t *e;
	if (ev->action == CCA_ACTION_ALLOC) {
		uint64_t id = ++c->next_id;
		uint64_t *key = g_new(uint64_t, 1);
		*key = ev->addr;
		g_hash_table_replace(c->live, key, g_memdup2(&id, sizeof id));
		json_t *args = json_pack("{s:o, s:o, s:o, s:o}", "addr", cca_json_uint(ev->addr),
					 "size", cca_json_uint(ev->size), "stream",
					 cca_json_uint(ev->stream), "event", cca_json_uint(index));
		if (trace) {
			g_autofree char *frame = chrome_frame(c->snap, trace->stack);
			if (frame)
				json_object_set_new(args, "frame", cca_json_string(frame));
			const char *meta = cca_snapshot_string(c->snap, trace->user_metadata);
			if (meta && *meta)
				json_object_set_new(args, "user_metadata", cca_json_string(meta));
		}
		e = json_pack("{s:s, s:s, s:s, s:o, s:I, s:i, s:i, s:o}", "name", "allocation",
			      "cat", "allocation", "ph", "b", "id", cca_json_uint(id), "ts",
			      (json_int_t)ts, "pid", c->device, "tid", 0, "args", args);
	} else {
		uint64_t *id = g_hash_table_lookup(c->live, &ev->addr);
		if (!id)
			return;
		e = json_pack("{s:s, s:s, s:s, s:o, s:I, s:i, s:i}", "name", "allocation", "cat",
			      "allocation", "ph", "e", "id", cca_json_uint(*id), "ts",
			      (json_int_t)ts, "pid", c->device, "tid", 0);
		g_hash_table_remove(c->live, &ev->addr);
	}
	chrome_emit(c->f, e);
	c->written++;
}

static void
chrome_model(void *data, uint64_t cause, const CcaEvent *trace, const CcaEvent *ev)
{
	Chrome *c = data;
	/* at the time of the entry that caused it */
	uint64_t index = trace ? cause : c->index;
	int64_t ts = chrome_ts(c, trace ? trace->time_us : CCA_TIME_NONE, index);
	const char *name;
	switch (ev->action) {
	case CCA_ACTION_ALLOC:
	case CCA_ACTION_FREE_COMPLETED:
		chrome_block(c, trace, ev, index, ts);
		return;
	case CCA_ACTION_SEGMENT_ALLOC:
		name = "cudaMalloc";
		break;
	case CCA_ACTION_SEGMENT_FREE:
		name = "cudaFree";
		break;
	case CCA_ACTION_SEGMENT_MAP:
		name = "map";
		break;
	case CCA_ACTION_SEGMENT_UNMAP:
		name = "unmap";
		break;
	case CCA_ACTION_OOM:
		name = "OOM";
		break;
	default:
		return;
	}
	json_t *args = json_object();
	json_object_set_new(args, ev->action == CCA_ACTION_OOM ? "device_free" : "addr",
			    cca_json_uint(ev->addr));
	json_object_set_new(args, "size", cca_json_uint(ev->size));
	json_object_set_new(args, "stream", cca_json_uint(ev->stream));
	json_object_set_new(args, "event", cca_json_uint(index));
	chrome_emit(c->f,
		    json_pack("{s:s, s:s, s:s, s:I, s:i, s:i, s:o}", "name", name, "ph", "i", "s",
			      "p", "ts", (json_int_t)ts, "pid", c->device, "tid", 0, "args", args));
	c->written++;
}

/* The program's annotations of device C->device (record_function ranges,
 * optimizer steps) on their own thread: a START and the next END of the
 * same name make one "X" slice; an END with no START is dropped, a START
 * with no END lasts to END_TS; other stages are instants.  ccasim-record's
 * own records ("ccasim:...") are instants too.  Nothing when the trace
 * has no times (annotations carry times alone). */
static void
chrome_annotations(Chrome *c, int64_t end_ts)
{
	const CcaSnapshot *snap = c->snap;
	guint n = snap->annotations ? snap->annotations->len : 0;
	if (c->t0 == CCA_TIME_NONE || n == 0)
		return;
	chrome_emit(c->f,
		    json_pack("{s:s, s:s, s:i, s:i, s:{s:s}}", "name", "thread_name", "ph", "M",
			      "pid", c->device, "tid", 1, "args", "name", "annotations"));
	/* name id -> stack of open START times */
	GHashTable *open = g_hash_table_new_full(NULL, NULL, NULL, (GDestroyNotify)g_array_unref);
	for (guint i = 0; i < n; i++) {
		const CcaAnnotation *a = &g_array_index(snap->annotations, CcaAnnotation, i);
		if (a->device != c->device || a->time_us == CCA_TIME_NONE)
			continue;
		const char *name = cca_snapshot_string(snap, a->name);
		const char *stage = cca_snapshot_string(snap, a->stage);
		int64_t ts = a->time_us - c->t0;
		gpointer k = GUINT_TO_POINTER(a->name);
		bool record = g_str_has_prefix(name, "ccasim:");
		if (!record && strcmp(stage, "START") == 0) {
			GArray *st = g_hash_table_lookup(open, k);
			if (!st) {
				st = g_array_new(FALSE, FALSE, sizeof(int64_t));
				g_hash_table_insert(open, k, st);
			}
			g_array_append_val(st, ts);
		} else if (!record && strcmp(stage, "END") == 0) {
			GArray *st = g_hash_table_lookup(open, k);
			if (!st || st->len == 0)
				continue;
			int64_t t = g_array_index(st, int64_t, st->len - 1);
			g_array_set_size(st, st->len - 1);
			chrome_emit(c->f,
				    json_pack("{s:s, s:s, s:s, s:I, s:I, s:i, s:i}", "name", name,
					      "cat", "annotation", "ph", "X", "ts", (json_int_t)t,
					      "dur", (json_int_t)MAX(ts - t, 0), "pid", c->device,
					      "tid", 1));
			c->written++;
		} else {
			chrome_emit(c->f, json_pack("{s:s, s:s, s:s, s:s, s:I, s:i, s:i, s:{s:s}}",
						    "name", name, "cat", "annotation", "ph", "i",
						    "s", "t", "ts", (json_int_t)ts, "pid",
						    c->device, "tid", 1, "args", "stage", stage));
			c->written++;
		}
	}
	GHashTableIter it;
	gpointer k, v;
	g_hash_table_iter_init(&it, open);
	while (g_hash_table_iter_next(&it, &k, &v)) {
		GArray *st = v;
		for (guint j = 0; j < st->len; j++) {
			int64_t t = g_array_index(st, int64_t, j);
			chrome_emit(c->f,
				    json_pack("{s:s, s:s, s:s, s:I, s:I, s:i, s:i}", "name",
					      cca_snapshot_string(snap, GPOINTER_TO_UINT(k)), "cat",
					      "annotation", "ph", "X", "ts", (json_int_t)t, "dur",
					      (json_int_t)MAX(end_ts - t, 0), "pid", c->device,
					      "tid", 1));
			c->written++;
		}
	}
	g_hash_table_destroy(open);
}

gboolean
cca_export_chrome(const CcaSnapshot *snap, const CcaReplayOptions *options, const char *path,
		  CcaExportResult *result, GError **error)
{
	memset(result, 0, sizeof *result);
	result->matched = TRUE;
	char *tmp = NULL;
	FILE *f = cca_outfile_open(path, &tmp, error);
	if (!f)
		return FALSE;
	gboolean ok = TRUE;
	/* the events are streamed: only the frame around "traceEvents" is
	 * written here, every value goes through jansson */
	json_t *other = json_pack("{s:s, s:o}", "producer", "ccasim", "trace",
				  cca_json_string(snap->source));
	fputs("{\"displayTimeUnit\": \"ms\", \"otherData\": ", f);
	cca_json_print(f, other);
	fputs(",\n\"traceEvents\": [\n", f);
	cca_json_print(f, json_pack("{s:s, s:s, s:i, s:{}}", "name", "ccasim", "ph", "M", "pid", -1,
				    "args"));
	for (int d = 0; d < snap->n_devices && ok; d++) {
		Chrome c = {
			.f = f,
			.snap = snap,
			.device = d,
			.t0 = CCA_TIME_NONE,
			.last = {-1, -1, -1},
			.live = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, g_free),
		};
		g_autoptr(CcaEventCursor) cur = cca_event_cursor_new(snap, d);
		CcaEvent ev;
		int64_t t_last = CCA_TIME_NONE;
		if (cca_event_cursor_next(cur, &ev, NULL))
			c.t0 = t_last = ev.time_us;
		while (c.t0 != CCA_TIME_NONE && cca_event_cursor_next(cur, &ev, NULL))
			if (ev.time_us != CCA_TIME_NONE)
				t_last = ev.time_us;
		g_autofree char *label = g_strdup_printf("GPU %d memory (ccasim)", d);
		chrome_emit(f, json_pack("{s:s, s:s, s:i, s:{s:s}}", "name", "process_name", "ph",
					 "M", "pid", d, "args", "name", label));
		CcaReplayOptions o = *options;
		o.device = d;
		o.check = false;
		o.observer = chrome_observer;
		o.observer_data = &c;
		o.on_model_event = chrome_model;
		o.on_model_event_data = &c;
		CcaReplayResult res;
		ok = cca_replay_run(snap, &o, &res, error);
		if (ok) {
			cca_replay_result_clear(&res);
			chrome_annotations(&c, t_last == CCA_TIME_NONE ? 0 : t_last - c.t0);
		}
		g_hash_table_destroy(c.live);
		result->entries += c.written;
	}
	fprintf(f, "\n]}\n");
	/* a write error is reported by cca_outfile_close() */
	return cca_outfile_close(f, tmp, path, ok, error);
}
