/* cmd_info.c - `ccasim info FILE [--json]`: what a snapshot or trace holds.
 *
 * Reads every event once (through the cursors, so a msgpack trace is
 * streamed) and summarises: input format and origin, per-device event
 * counts by action and time span, the final segments and blocks, the
 * interned frame/stack/string tables and the recorded allocator settings.
 * Counts exclude the tables' reserved entries 0, so a pickle and its
 * conversion report the same numbers.  --json prints one JSON object.
 */
#include "config.h"

#include <glib.h>
#include <math.h>
#include <stdio.h>

#include "commands.h"
#include "json.h"
#include "size.h"
#include "snapshot.h"
#include "text.h"
#include "trace.h"

/* What one device's events hold. */
typedef struct {
	uint64_t events;
	uint64_t actions[CCA_ACTION_COUNT];
	int64_t first_time_us; /* smallest time_us, CCA_TIME_NONE if none */
	int64_t last_time_us;  /* largest time_us */
} CcaInfoDevice;

/* The whole summary. */
typedef struct {
	const char *file;
	const CcaSnapshot *snap;
	CcaInfoDevice *devices;		  /* [snap->n_devices] */
	uint64_t blocks;		  /* blocks of the final segments */
	uint64_t reserved;		  /* bytes of the final segments */
	uint32_t strings, frames, stacks; /* table sizes without entry 0 */
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

static gboolean
cca_info_gather(CcaInfo *info, GError **error)
{
	const CcaSnapshot *snap = info->snap;
	uint32_t n_stacks = cca_snapshot_n_stacks(snap);

	info->devices = g_new0(CcaInfoDevice, snap->n_devices ? snap->n_devices : 1);
	for (int d = 0; d < snap->n_devices; d++)
		if (!cca_info_scan_device(snap, d, &info->devices[d], error))
			return FALSE;
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
	return o;
}

static void
cca_info_print_json(const CcaInfo *info)
{
	const CcaSnapshot *snap = info->snap;
	g_autoptr(GString) out = g_string_new(NULL);
	json_t *o = json_object(), *devices = json_array();

	json_object_set_new(o, "file", cca_json_string(info->file));
	json_object_set_new(
		o, "format",
		cca_json_string(snap->format == CCA_FORMAT_MSGPACK ? "msgpack" : "pickle"));
	json_object_set_new(o, "source", cca_json_string(cca_trace_origin(snap)));
	json_object_set_new(o, "pickle_protocol", json_integer(snap->pickle_protocol));
	for (int d = 0; d < snap->n_devices; d++)
		json_array_append_new(devices, cca_info_json_device(d, &info->devices[d]));
	json_object_set_new(o, "devices", devices);
	json_object_set_new(o, "segments", json_integer(snap->segments->len));
	json_object_set_new(o, "blocks", cca_json_uint(info->blocks));
	json_object_set_new(o, "reserved_bytes", cca_json_uint(info->reserved));
	json_object_set_new(o, "frames", json_integer(info->frames));
	json_object_set_new(o, "stacks", json_integer(info->stacks));
	json_object_set_new(o, "strings", json_integer(info->strings));
	json_object_set_new(o, "annotations", json_integer(snap->annotations->len));
	json_object_set_new(o, "allocator_settings", cca_info_json_settings(&snap->settings));
	cca_json_append(out, o);
	g_string_append_c(out, '\n');
	fputs(out->str, stdout);
}

/* ------------------------------------------------------------------ */
/* Human summary                                                       */
/* ------------------------------------------------------------------ */

static void
cca_info_print_device(int d, const CcaInfoDevice *dev)
{
	printf("  device %d: %" G_GUINT64_FORMAT " events", d, dev->events);
	if (dev->first_time_us != CCA_TIME_NONE) {
		char span[G_ASCII_DTOSTR_BUF_SIZE];
		g_ascii_formatd(span, sizeof span, "%.3f",
				(double)(dev->last_time_us - dev->first_time_us) / 1e6);
		printf(", spanning %s s (time_us %" G_GINT64_FORMAT " .. %" G_GINT64_FORMAT ")",
		       span, dev->first_time_us, dev->last_time_us);
	}
	printf("\n");
	for (int a = 0; a < CCA_ACTION_COUNT; a++)
		if (dev->actions[a])
			printf("    %-15s %" G_GUINT64_FORMAT "\n", cca_event_action_name(a),
			       dev->actions[a]);
}

/* Prints one "  KEY  VALUE" line of the settings table. */
static void
cca_info_setting(const char *key, const char *value)
{
	printf("  %-34s %s\n", key, value);
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
		printf("allocator settings: not recorded (torch < 2.3)\n");
		return;
	}
	printf("allocator settings:\n");
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

static void
cca_info_print_human(const CcaInfo *info)
{
	const CcaSnapshot *snap = info->snap;
	const char *origin = cca_trace_origin(snap);
	char size[32];

	printf("%s\n", info->file);
	if (snap->format == CCA_FORMAT_MSGPACK)
		printf("format: msgpack (%s version %d)", CCA_TRACE_FORMAT, CCA_TRACE_VERSION);
	else
		printf("format: pickle");
	if (snap->pickle_protocol > 0)
		printf(", pickle protocol %d", snap->pickle_protocol);
	printf("\n");
	if (snap->format == CCA_FORMAT_MSGPACK && origin)
		printf("converted from: %s\n", origin);
	printf("devices: %d\n", snap->n_devices);
	for (int d = 0; d < snap->n_devices; d++)
		cca_info_print_device(d, &info->devices[d]);
	printf("segments: %u, %" G_GUINT64_FORMAT " blocks, %s reserved\n", snap->segments->len,
	       info->blocks, cca_size_format(info->reserved, size));
	printf("frames: %u, stacks: %u, strings: %u, annotations: %u\n", info->frames, info->stacks,
	       info->strings, snap->annotations->len);
	cca_info_print_settings(&snap->settings);
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
		cca_info_print_human(&info);
	}
	g_free(info.devices);
	return status;
}
