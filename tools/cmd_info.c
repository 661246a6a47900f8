/* cmd_info.c - `ccasim info FILE [--json]`: what a snapshot or trace holds.
 *
 * Reads every event once (through the cursors, so a msgpack trace is
 * streamed) and summarises: input format and origin, per-device event
 * counts by action and time span, the final segments and blocks, the
 * interned frame/stack/string tables, the recorded allocator settings and
 * what the snapshot holds of releases after 2.11 (CcaSnapshotNewer: it
 * says so when the format shows a PyTorch newer than the newest rules
 * ccasim applies).  Counts exclude the tables' reserved entries 0, so a
 * pickle and its conversion report the same numbers.  --json prints one
 * JSON object.
 */
#include "config.h"

#include <glib.h>
#include <math.h>
#include <stdio.h>

#include "calls.h"
#include "commands.h"
#include "plan.h"
#include "lab.h"
#include "replay.h"
#include "rules.h"
#include "settings.h"
#include "json.h"
#include "report.h"
#include "size.h"
#include "snapshot.h"
#include "event_cursor.h"
#include "snapshot_load.h"
#include "text.h"
#include "trace.h"

/* What one device's events hold. */
typedef struct {
	uint64_t events;
	uint64_t actions[CCA_ACTION_COUNT];
	int64_t first_time_us; /* smallest time_us, CCA_TIME_NONE if none */
	int64_t last_time_us;  /* largest time_us */
	/* a window of the run (the plan's rebuilt start, doc/whatif.md,
	 * "Windows"), or why the plan could not tell (NULL: it could) */
	bool mid_run;
	uint64_t start_segments, start_blocks, start_live_bytes, start_reserved;
	char *plan_error;
} CcaInfoDevice;

/* The whole summary. */
typedef struct {
	const char *file;
	const CcaSnapshot *snap;
	CcaInfoDevice *devices;		  /* [snap->n_devices] */
	uint64_t blocks;		  /* blocks of the final segments */
	uint64_t reserved;		  /* bytes of the final segments */
	uint32_t strings, frames, stacks; /* table sizes without entry 0 */
	CcaCalls **calls;		  /* [snap->n_devices]: ccasim-record's, or NULL */
} CcaInfo;

/* Counts device D's events into DEV. */
static gboolean
cca_info_scan_device(const CcaSnapshot *snap, int d, CcaInfoDevice *dev, GError **error)
{
	g_autoptr(CcaEventCursor) cur = cca_event_cursor_new(snap, d);
	GError *local = NULL;
	CcaEvent ev;

	dev->first_time_us = CCA_TIME_NONE;
	dev->last_time_us = CCA_TIME_NONE;
	if (cur == NULL) {
		g_set_error(error, CCA_INPUT_ERROR, CCA_INPUT_ERROR_IO,
			    "%s: device %d: cannot read its events", snap->source, d);
		return FALSE;
	}
	while (cca_event_cursor_next(cur, &ev, &local)) {
		dev->events++;
		if (ev.action < CCA_ACTION_COUNT)
			dev->actions[ev.action]++;
		if (ev.time_us == CCA_TIME_NONE)
			continue;
		if (dev->first_time_us == CCA_TIME_NONE || ev.time_us < dev->first_time_us)
			dev->first_time_us = ev.time_us;
		if (dev->last_time_us == CCA_TIME_NONE || ev.time_us > dev->last_time_us)
			dev->last_time_us = ev.time_us;
	}
	if (local) {
		g_propagate_error(error, local);
		return FALSE;
	}
	return TRUE;
}

/* Whether device D of SNAP is a window of its run, by its plan, into DEV;
 * a trace the replay refuses leaves the question open (plan_error). */
static void
cca_info_window(const CcaSnapshot *snap, int d, CcaInfoDevice *dev)
{
	g_autoptr(GError) err = NULL;
	g_autoptr(CcaPlan) plan = cca_plan_new(snap, d, 0, CCA_REWIND_AUTO, &err);
	if (!plan) {
		dev->plan_error = g_strdup(err->message);
		return;
	}
	dev->mid_run = plan->mid_run && plan->start.mid_run;
	if (!dev->mid_run)
		return;
	dev->start_segments = plan->start.segments->len;
	dev->start_blocks = plan->start.blocks->len;
	dev->start_live_bytes = plan->start.live_bytes;
	dev->start_reserved = cca_plan_start_reserved(plan);
}

static gboolean
cca_info_gather(CcaInfo *info, GError **error)
{
	const CcaSnapshot *snap = info->snap;
	uint32_t n_stacks = cca_snapshot_n_stacks(snap);

	info->devices = g_new0(CcaInfoDevice, snap->n_devices ? snap->n_devices : 1);
	info->calls = g_new0(CcaCalls *, snap->n_devices ? snap->n_devices : 1);
	for (int d = 0; d < snap->n_devices; d++) {
		if (!cca_info_scan_device(snap, d, &info->devices[d], error))
			return FALSE;
		cca_info_window(snap, d, &info->devices[d]);
		if (!cca_calls_present(snap, d))
			continue;
		info->calls[d] = cca_calls_parse(snap, d, error);
		const uint64_t *n = info->devices[d].actions; /* the scan's counts */
		const CcaCallsTally tally = {n[CCA_ACTION_ALLOC], n[CCA_ACTION_FREE_REQUESTED],
					     n[CCA_ACTION_OOM]};
		if (!info->calls[d] || !cca_calls_place(info->calls[d], snap, d, &tally, error))
			return FALSE;
	}
	for (guint i = 0; i < snap->segments->len; i++) {
		const CcaSnapSegment *s = &g_array_index(snap->segments, CcaSnapSegment, i);
		info->blocks += s->n_blocks;
		info->reserved += s->total_size;
	}
	info->strings = snap->strings->len > 0 ? snap->strings->len - 1 : 0;
	info->frames = snap->frames->len > 0 ? snap->frames->len - 1 : 0;
	info->stacks = n_stacks > 0 ? n_stacks - 1 : 0;
	return TRUE;
}

/* ------------------------------------------------------------------ */
/* JSON                                                                */
/* ------------------------------------------------------------------ */

/* The recorded settings with PyTorch's key names, or null. */
static json_t *
cca_info_json_settings(const CcaRecordedSettings *s)
{
	if (!s->present)
		return json_null();
	json_t *o = json_object(), *roundup = json_object();
	json_object_set_new(o, "PYTORCH_CUDA_ALLOC_CONF", cca_json_string(s->conf ? s->conf : ""));
	json_object_set_new(o, "max_split_size", json_integer(s->max_split_size));
	json_object_set_new(o, "garbage_collection_threshold",
			    cca_json_real(s->garbage_collection_threshold));
	json_object_set_new(o, "expandable_segments", cca_json_bool(s->expandable_segments));
	json_object_set_new(o, "pinned_num_register_threads",
			    json_integer(s->pinned_num_register_threads));
	json_object_set_new(o, "release_lock_on_cudamalloc",
			    cca_json_bool(s->release_lock_on_cudamalloc));
	json_object_set_new(o, "pinned_use_cuda_host_register",
			    cca_json_bool(s->pinned_use_cuda_host_register));
	if (s->has_graph_capture_record_stream_reuse)
		json_object_set_new(o, "graph_capture_record_stream_reuse",
				    cca_json_bool(s->graph_capture_record_stream_reuse));
	for (int i = 0; i < 16; i++) {
		char key[16];
		g_snprintf(key, sizeof key, "%u", 1u << i);
		json_object_set_new(roundup, key, json_integer(s->roundup_power2_divisions[i]));
	}
	json_object_set_new(o, "roundup_power2_divisions", roundup);
	return o;
}

static json_t *
cca_info_json_device(int d, const CcaInfoDevice *dev)
{
	json_t *o = json_object(), *actions = json_object();
	json_object_set_new(o, "device", json_integer(d));
	json_object_set_new(o, "events", cca_json_uint(dev->events));
	for (int a = 0; a < CCA_ACTION_COUNT; a++)
		json_object_set_new(actions, cca_event_action_name(a),
				    cca_json_uint(dev->actions[a]));
	json_object_set_new(o, "actions", actions);
	json_t *time = json_null();
	if (dev->first_time_us != CCA_TIME_NONE) {
		time = json_object();
		json_object_set_new(time, "first", json_integer(dev->first_time_us));
		json_object_set_new(time, "last", json_integer(dev->last_time_us));
	}
	json_object_set_new(o, "time_us", time);
	/* as replay --json's "window": null for a trace from the start */
	json_t *window = json_null();
	if (dev->plan_error) {
		window = json_object();
		json_object_set_new(window, "unknown", cca_json_string(dev->plan_error));
	} else if (dev->mid_run) {
		window = json_object();
		json_object_set_new(window, "known", cca_json_string(cca_report_window_known()));
		json_object_set_new(window, "start_segments", cca_json_uint(dev->start_segments));
		json_object_set_new(window, "start_live_blocks", cca_json_uint(dev->start_blocks));
		json_object_set_new(window, "start_live_bytes",
				    cca_json_uint(dev->start_live_bytes));
		json_object_set_new(window, "start_reserved", cca_json_uint(dev->start_reserved));
	}
	json_object_set_new(o, "window", window);
	return o;
}

/* An optional count (-1: absent) as JSON. */
static json_t *
cca_info_json_opt(int64_t v)
{
	return v < 0 ? json_null() : json_integer(v);
}

/* The keys of releases after 2.11, with PyTorch's names where it has
 * them. */
static json_t *
cca_info_json_newer(const CcaSnapshotNewer *n)
{
	json_t *o = json_object(), *unknown = json_object();
	json_object_set_new(o, "pool_id_entries", cca_json_uint(n->pool_id_entries));
	json_object_set_new(o, "annotate_entries", cca_json_uint(n->annotate_entries));
	json_object_set_new(o, "forward_frames", cca_json_uint(n->forward_frames));
	json_object_set_new(o, "host_segments", cca_info_json_opt(n->host_segments));
	json_object_set_new(o, "host_bytes", cca_info_json_opt(n->host_bytes));
	json_object_set_new(o, "host_traces", cca_info_json_opt(n->host_traces));
	json_object_set_new(o, "trace_alloc_overflowed",
			    n->trace_alloc_overflowed < 0
				    ? json_null()
				    : cca_json_bool(n->trace_alloc_overflowed != 0));
	json_object_set_new(o, "trace_alloc_max_entries",
			    cca_info_json_opt(n->trace_alloc_max_entries));
	json_object_set_new(o, "rendered_metadata", cca_json_uint(n->rendered_metadata));
	for (uint32_t i = 0; i < n->n_unknown; i++) {
		/* a name is untrusted: two names equal once made safe to
		 * show add up */
		g_autofree char *name = cca_text_display(n->unknown_name[i], -1, 80);
		json_t *was = json_object_get(unknown, name);
		uint64_t count =
			n->unknown_count[i] + (was ? (uint64_t)json_integer_value(was) : 0);
		json_object_set_new(unknown, name, cca_json_uint(count));
	}
	json_object_set_new(o, "unknown_keys", unknown);
	json_object_set_new(o, "unknown_more", cca_json_uint(n->unknown_more));
	return o;
}

static void
cca_info_print_json(const CcaInfo *info)
{
	const CcaSnapshot *snap = info->snap;
	g_autoptr(GString) out = g_string_new(NULL);
	json_t *o = json_object(), *devices = json_array();

	json_object_set_new(o, "file", cca_json_string(info->file));
	json_object_set_new(o, "format",
			    cca_json_string(snap->format == CCA_FORMAT_MSGPACK ? "msgpack"
					    : snap->format == CCA_FORMAT_LAB   ? "lab"
									       : "pickle"));
	json_object_set_new(o, "source", cca_json_string(cca_trace_origin(snap)));
	json_object_set_new(o, "pickle_protocol", json_integer(snap->pickle_protocol));
	for (int d = 0; d < snap->n_devices; d++)
		json_array_append_new(devices, cca_info_json_device(d, &info->devices[d]));
	json_object_set_new(o, "devices", devices);
	json_object_set_new(o, "history", cca_json_bool(cca_snapshot_check_history(snap, NULL)));
	json_object_set_new(o, "segments", json_integer(snap->segments->len));
	json_object_set_new(o, "blocks", cca_json_uint(info->blocks));
	json_object_set_new(o, "reserved_bytes", cca_json_uint(info->reserved));
	json_object_set_new(o, "frames", json_integer(info->frames));
	json_object_set_new(o, "stacks", json_integer(info->stacks));
	json_object_set_new(o, "strings", json_integer(info->strings));
	json_object_set_new(o, "annotations", json_integer(snap->annotations->len));
	json_object_set_new(o, "allocator_settings", cca_info_json_settings(&snap->settings));
	g_autofree char *why = NULL;
	uint32_t detected = cca_plan_detect_release(snap, &why);
	g_autofree char *note = cca_snapshot_newer_note(snap, detected);
	uint32_t release = cca_snapshot_format_release(snap, NULL);
	g_autofree char *shown =
		release ? g_strdup_printf("%u.%u", release / 100, release % 100) : NULL;
	g_autofree char *detected_shown = g_strdup_printf("%u.%u", detected / 100, detected % 100);
	json_t *rules = json_object();
	json_object_set_new(rules, "release", cca_json_string(detected_shown));
	json_object_set_new(rules, "why", cca_json_string(why));
	json_object_set_new(rules, "best_fit_order",
			    cca_json_string(cca_rules_order_name(cca_rules_for(detected)->order)));
	json_object_set_new(rules, "unvalidated",
			    cca_json_bool(cca_rules_for(detected)->unvalidated));
	json_object_set_new(o, "rules", rules);
	json_object_set_new(o, "unvalidated", cca_json_bool(cca_rules_for(detected)->unvalidated));
	json_object_set_new(o, "snapshot_newer_than_rules", cca_json_bool(note != NULL));
	json_object_set_new(o, "snapshot_newer_note", note ? cca_json_string(note) : json_null());
	json_object_set_new(o, "snapshot_format_release",
			    shown ? cca_json_string(shown) : json_null());
	json_object_set_new(o, "newer_keys", cca_info_json_newer(&snap->newer));
	/* what ccasim-record saw: the program's calls, device memory samples */
	json_t *calls = json_array();
	for (int d = 0; d < snap->n_devices; d++)
		for (guint i = 0; info->calls[d] && i < info->calls[d]->calls->len; i++) {
			json_t *c = cca_calls_call_to_json(
				&g_array_index(info->calls[d]->calls, CcaCall, i));
			json_object_set_new(c, "device", json_integer(d));
			json_array_append_new(calls, c);
		}
	json_object_set_new(o, "recorded_calls", calls);
	cca_json_append(out, o);
	g_string_append_c(out, '\n');
	fputs(out->str, stdout);
}

/* ------------------------------------------------------------------ */
/* Human summary                                                       */
/* ------------------------------------------------------------------ */

/* The human summary being written, fitted to COLUMNS when it is printed
 * (cca_text_fit()). */
static GString *info_out;

static void
cca_info_print_device(int d, const CcaInfoDevice *dev)
{
	g_string_append_printf(info_out, "  device %d: %" G_GUINT64_FORMAT " events", d,
			       dev->events);
	if (dev->first_time_us != CCA_TIME_NONE) {
		char span[G_ASCII_DTOSTR_BUF_SIZE];
		g_ascii_formatd(span, sizeof span, "%.3f",
				(double)(dev->last_time_us - dev->first_time_us) / 1e6);
		g_string_append_printf(info_out,
				       ", spanning %s s (time_us %" G_GINT64_FORMAT
				       " .. %" G_GINT64_FORMAT ")",
				       span, dev->first_time_us, dev->last_time_us);
	}
	g_string_append_printf(info_out, "\n");
	if (dev->mid_run) {
		char a[32], b[32];
		g_string_append_printf(
			info_out,
			"    a window of the run (it starts mid-run): its start holds "
			"%" G_GUINT64_FORMAT " segments (%s reserved) and %" G_GUINT64_FORMAT
			" live blocks (%s)\n",
			dev->start_segments, cca_size_format(dev->start_reserved, a),
			dev->start_blocks, cca_size_format(dev->start_live_bytes, b));
	}
	for (int a = 0; a < CCA_ACTION_COUNT; a++)
		if (dev->actions[a])
			g_string_append_printf(info_out, "    %-15s %" G_GUINT64_FORMAT "\n",
					       cca_event_action_name(a), dev->actions[a]);
}

/* Prints one "  KEY  VALUE" line of the settings table. */
static void
cca_info_setting(const char *key, const char *value)
{
	g_string_append_printf(info_out, "  %-34s %s\n", key, value);
}

static const char *
cca_info_bool(bool b)
{
	return b ? "true" : "false";
}

static void
cca_info_print_settings(const CcaRecordedSettings *s)
{
	char num[G_ASCII_DTOSTR_BUF_SIZE];
	if (!s->present) {
		g_string_append_printf(info_out,
				       "allocator settings: not recorded (torch < 2.3)\n");
		return;
	}
	g_string_append_printf(info_out, "allocator settings:\n");
	g_autofree char *shown = cca_text_display(s->conf, -1, CCA_TEXT_DISPLAY_MAX);
	g_autofree char *conf = g_strdup_printf("\"%s\"", shown);
	cca_info_setting("PYTORCH_CUDA_ALLOC_CONF", conf);
	g_autofree char *split = g_strdup_printf("%" G_GINT64_FORMAT "%s", s->max_split_size,
						 s->max_split_size < 0 ? " (unlimited)" : "");
	cca_info_setting("max_split_size", split);
	g_ascii_formatd(num, sizeof num, "%g", s->garbage_collection_threshold);
	cca_info_setting("garbage_collection_threshold", num);
	cca_info_setting("expandable_segments", cca_info_bool(s->expandable_segments));
	g_snprintf(num, sizeof num, "%" G_GINT64_FORMAT, s->pinned_num_register_threads);
	cca_info_setting("pinned_num_register_threads", num);
	cca_info_setting("release_lock_on_cudamalloc",
			 cca_info_bool(s->release_lock_on_cudamalloc));
	cca_info_setting("pinned_use_cuda_host_register",
			 cca_info_bool(s->pinned_use_cuda_host_register));
	if (s->has_graph_capture_record_stream_reuse)
		cca_info_setting("graph_capture_record_stream_reuse",
				 cca_info_bool(s->graph_capture_record_stream_reuse));
	g_autoptr(GString) div = g_string_new(NULL);
	for (int i = 0; i < 16; i++)
		g_string_append_printf(div, "%s%u", i ? " " : "", s->roundup_power2_divisions[i]);
	g_string_append(div, "  (1 MiB .. 32 GiB buckets)");
	cca_info_setting("roundup_power2_divisions", div->str);
}

/* What the snapshot holds of releases after 2.11, when anything: a note
 * when its format proves such a release, then one line per kind of key
 * and what ccasim does with it. */
static void
cca_info_print_newer(const CcaSnapshot *snap)
{
	const CcaSnapshotNewer *n = &snap->newer;
	char hb[32];
	g_autofree char *note = cca_snapshot_newer_note(snap, cca_plan_detect_release(snap, NULL));
	if (cca_snapshot_format_release(snap, NULL) == 0 && n->rendered_metadata == 0 &&
	    n->n_unknown == 0)
		return;
	g_string_append_printf(info_out, "keys of PyTorch releases after 2.11:\n");
	if (note)
		g_string_append_printf(info_out, "  note: %s\n", note);
	if (n->pool_id_entries)
		g_string_append_printf(info_out,
				       "  pool_id in %" G_GUINT64_FORMAT
				       " trace entries: kept (convert writes them)\n",
				       n->pool_id_entries);
	if (n->annotate_entries)
		g_string_append_printf(
			info_out,
			"  %" G_GUINT64_FORMAT " 'annotate' entries: skipped (they label an "
			"allocation and change no allocator state; entry numbers leave them out)\n",
			n->annotate_entries);
	if (n->forward_frames)
		g_string_append_printf(info_out,
				       "  forward_frames in %" G_GUINT64_FORMAT
				       " entries, segments or blocks: "
				       "ignored\n",
				       n->forward_frames);
	if (n->host_segments >= 0 || n->host_traces >= 0)
		g_string_append_printf(
			info_out,
			"  pinned host memory: %" G_GINT64_FORMAT
			" host_segments (%s), %" G_GINT64_FORMAT
			" host_traces entries: shown, not simulated (ccasim models device memory)\n",
			MAX(n->host_segments, 0),
			cca_size_format((uint64_t)MAX(n->host_bytes, 0), hb),
			MAX(n->host_traces, 0));
	if (n->trace_alloc_overflowed >= 0)
		g_string_append_printf(info_out, "  trace_alloc_overflowed: %s\n",
				       n->trace_alloc_overflowed
					       ? "true (the ring of trace entries overflowed: "
						 "the trace starts mid-run)"
					       : "false");
	if (n->trace_alloc_max_entries >= 0)
		g_string_append_printf(info_out,
				       "  trace_alloc_max_entries: %" G_GINT64_FORMAT "\n",
				       n->trace_alloc_max_entries);
	if (n->rendered_metadata)
		g_string_append_printf(
			info_out,
			"  user_metadata or compile_context not a str in %" G_GUINT64_FORMAT
			" entries: kept as compact JSON\n",
			n->rendered_metadata);
	if (n->n_unknown) {
		g_string_append_printf(info_out, "  keys ccasim does not know, ignored:");
		for (uint32_t i = 0; i < n->n_unknown; i++) {
			g_autofree char *name = cca_text_display(n->unknown_name[i], -1, 80);
			g_string_append_printf(info_out, "%s %s (%" G_GUINT64_FORMAT ")",
					       i ? "," : "", name, n->unknown_count[i]);
		}
		if (n->unknown_more)
			g_string_append_printf(info_out, ", %" G_GUINT64_FORMAT " more",
					       n->unknown_more);
		g_string_append_printf(info_out, "\n");
	}
}

/* The calls ccasim-record saw on device D, one line each (the first
 * CCA_INFO_CALLS_SHOWN), then the memory outside the allocator. */
#define CCA_INFO_CALLS_SHOWN 40

static void
cca_info_print_calls(int d, const CcaCalls *calls)
{
	if (!calls || calls->calls->len == 0)
		return;
	g_string_append_printf(info_out, "calls recorded by ccasim-record, device %d: %u\n", d,
			       calls->calls->len);
	for (guint i = 0; i < calls->calls->len && i < CCA_INFO_CALLS_SHOWN; i++) {
		g_autofree char *line =
			cca_calls_describe(&g_array_index(calls->calls, CcaCall, i));
		g_autofree char *shown = cca_text_display(line, -1, 160);
		g_string_append_printf(info_out, "  %s\n", shown);
	}
	if (calls->calls->len > CCA_INFO_CALLS_SHOWN)
		g_string_append_printf(info_out, "  ... %u more (--json lists them all)\n",
				       calls->calls->len - CCA_INFO_CALLS_SHOWN);
	const CcaCall *peak = cca_calls_sample(calls, CCA_SAMPLE_PEAK);
	const CcaCall *s = peak ? peak : cca_calls_sample(calls, CCA_SAMPLE_DUMP);
	if (s) {
		char a[32], b[32];
		g_string_append_printf(
			info_out,
			"memory outside the caching allocator: %s at the %s sample (device total %s)\n",
			cca_size_format(cca_calls_outside_bytes(s), a), peak ? "peak" : "dump",
			cca_size_format(s->total, b));
	}
}

static void
cca_info_print_human(const CcaInfo *info)
{
	const CcaSnapshot *snap = info->snap;
	const char *origin = cca_trace_origin(snap);
	char size[32];

	g_autofree char *file = cca_text_path(info->file);
	g_string_append_printf(info_out, "%s\n", file);
	if (snap->format == CCA_FORMAT_MSGPACK)
		g_string_append_printf(info_out, "format: msgpack (%s version %d)",
				       CCA_TRACE_FORMAT, CCA_TRACE_VERSION);
	else if (snap->format == CCA_FORMAT_LAB)
		g_string_append_printf(info_out, "format: lab program (run through the model: %s)",
				       CCA_LAB_MAGIC);
	else
		g_string_append_printf(info_out, "format: pickle");
	if (snap->pickle_protocol > 0)
		g_string_append_printf(info_out, ", pickle protocol %d", snap->pickle_protocol);
	g_string_append_printf(info_out, "\n");
	if (snap->format == CCA_FORMAT_MSGPACK && origin)
		g_string_append_printf(info_out, "converted from: %s\n", origin);
	g_string_append_printf(info_out, "devices: %d\n", snap->n_devices);
	for (int d = 0; d < snap->n_devices; d++)
		cca_info_print_device(d, &info->devices[d]);
	g_autoptr(GError) history = NULL;
	if (!cca_snapshot_check_history(snap, &history))
		g_string_append_printf(
			info_out,
			"history: none (taken without torch.cuda.memory._record_memory_history() "
			"or ccasim-record): the final state only, nothing to replay\n");
	g_string_append_printf(
		info_out, "segments: %u, %" G_GUINT64_FORMAT " blocks, %s reserved\n",
		snap->segments->len, info->blocks, cca_size_format(info->reserved, size));
	g_string_append_printf(info_out, "frames: %u, stacks: %u, strings: %u, annotations: %u\n",
			       info->frames, info->stacks, info->strings, snap->annotations->len);
	cca_info_print_settings(&snap->settings);
	g_autofree char *why = NULL;
	uint32_t release = cca_plan_detect_release(snap, &why);
	const CcaRules *rules = cca_rules_for(release);
	g_string_append_printf(
		info_out, "rules: PyTorch %u.%u (%s); best fit's ties: %s%s\n", release / 100,
		release % 100, why, cca_rules_order_name(rules->order),
		rules->unvalidated ? "; unvalidated: modelled from source (doc/versions.md)" : "");
	cca_info_print_newer(snap);
	for (int d = 0; d < snap->n_devices; d++)
		cca_info_print_calls(d, info->calls[d]);
}

/* ------------------------------------------------------------------ */
/* Command                                                             */
/* ------------------------------------------------------------------ */

int
cca_cmd_info(const CcaCliCommand *cmd, int argc, char **argv)
{
	g_auto(CcaCliArgs) args = {0};
	int status = cca_cli_parse(
		cmd, NULL,
		"Summarises a PyTorch memory snapshot (pickle, plain/xz/gzip) or a ccasim\n"
		"msgpack trace: events per device and action, time span, final segments and\n"
		"blocks, frame/stack tables and the recorded allocator settings.",
		"Exit status: 0 success, 1 unreadable input, 2 usage error.", &args, &argc, &argv);
	if (status >= 0)
		return status;
	if (argc != 2)
		return cca_cli_usage(cmd, "%s (see 'ccasim info --help')",
				     argc < 2 ? "missing FILE" : "expected exactly one FILE");

	g_autoptr(GError) error = NULL;
	g_autoptr(CcaSnapshot) snap = cca_snapshot_load(argv[1], &error);
	CcaInfo info = {.file = argv[1], .snap = snap};
	status = 0;
	if (snap == NULL || !cca_info_gather(&info, &error)) {
		cca_cli_print_error("info", error);
		status = 1;
	} else if (args.json) {
		cca_info_print_json(&info);
	} else {
		/* fitted to COLUMNS (or the terminal), lines whole when piped */
		info_out = g_string_new(NULL);
		cca_info_print_human(&info);
		g_autoptr(GString) fitted = g_string_new(NULL);
		cca_text_fit(fitted, info_out->str, cca_text_fit_width(FALSE));
		fputs(fitted->str, stdout);
		g_string_free(info_out, TRUE);
		info_out = NULL;
	}
	for (int d = 0; snap && info.calls && d < snap->n_devices; d++)
		cca_calls_free(info.calls[d]);
	g_free(info.calls);
	for (int d = 0; snap && info.devices && d < snap->n_devices; d++)
		g_free(info.devices[d].plan_error);
	g_free(info.devices);
	return status;
}
