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

#include "inputargs.h"
#include "commands.h"
#include "viewargs.h"
#include "json.h"
#include "sizes.h"
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

/* Appends D as a JSON number (shortest form that reads back exactly;
 * null for NaN and infinities, which JSON cannot spell). */
static void
cca_info_json_double(GString *out, double d)
{
	char buf[G_ASCII_DTOSTR_BUF_SIZE];
	if (!isfinite(d)) {
		g_string_append(out, "null");
		return;
	}
	g_ascii_formatd(buf, sizeof buf, "%.15g", d);
	if (g_ascii_strtod(buf, NULL) != d)
		g_ascii_formatd(buf, sizeof buf, "%.17g", d);
	g_string_append(out, buf);
}

static void
cca_info_json_bool(GString *out, const char *key, bool b)
{
	g_string_append_printf(out, ", \"%s\": %s", key, b ? "true" : "false");
}

/* The recorded settings with PyTorch's key names, or null. */
static void
cca_info_json_settings(GString *out, const CcaRecordedSettings *s)
{
	if (!s->present) {
		g_string_append(out, "null");
		return;
	}
	g_string_append(out, "{\"PYTORCH_CUDA_ALLOC_CONF\": ");
	cca_json_append_string(out, s->conf ? s->conf : "");
	g_string_append_printf(out, ", \"max_split_size\": %" G_GINT64_FORMAT, s->max_split_size);
	g_string_append(out, ", \"garbage_collection_threshold\": ");
	cca_info_json_double(out, s->garbage_collection_threshold);
	cca_info_json_bool(out, "expandable_segments", s->expandable_segments);
	g_string_append_printf(out, ", \"pinned_num_register_threads\": %" G_GINT64_FORMAT,
			       s->pinned_num_register_threads);
	cca_info_json_bool(out, "release_lock_on_cudamalloc", s->release_lock_on_cudamalloc);
	cca_info_json_bool(out, "pinned_use_cuda_host_register", s->pinned_use_cuda_host_register);
	if (s->has_graph_capture_record_stream_reuse)
		cca_info_json_bool(out, "graph_capture_record_stream_reuse",
				   s->graph_capture_record_stream_reuse);
	g_string_append(out, ", \"roundup_power2_divisions\": {");
	for (int i = 0; i < 16; i++)
		g_string_append_printf(out, "%s\"%u\": %u", i ? ", " : "", 1u << i,
				       s->roundup_power2_divisions[i]);
	g_string_append(out, "}}");
}

static void
cca_info_json_device(GString *out, int d, const CcaInfoDevice *dev)
{
	g_string_append_printf(out, "{\"device\": %d, \"events\": %" G_GUINT64_FORMAT, d,
			       dev->events);
	g_string_append(out, ", \"actions\": {");
	for (int a = 0; a < CCA_ACTION_COUNT; a++)
		g_string_append_printf(out, "%s\"%s\": %" G_GUINT64_FORMAT, a ? ", " : "",
				       cca_action_name(a), dev->actions[a]);
	g_string_append(out, "}, \"time_us\": ");
	if (dev->first_time_us == CCA_TIME_NONE)
		g_string_append(out, "null");
	else
		g_string_append_printf(
			out, "{\"first\": %" G_GINT64_FORMAT ", \"last\": %" G_GINT64_FORMAT "}",
			dev->first_time_us, dev->last_time_us);
	g_string_append(out, "}");
}

static void
cca_info_print_json(const CcaInfo *info)
{
	const CcaSnapshot *snap = info->snap;
	g_autoptr(GString) out = g_string_new("{\"file\": ");

	cca_json_append_string(out, info->file);
	g_string_append_printf(out, ", \"format\": \"%s\", \"source\": ",
			       snap->format == CCA_FORMAT_MSGPACK ? "msgpack" : "pickle");
	cca_json_append_string(out, cca_trace_origin(snap));
	g_string_append_printf(out, ", \"pickle_protocol\": %d, \"devices\": [",
			       snap->pickle_protocol);
	for (int d = 0; d < snap->n_devices; d++) {
		if (d)
			g_string_append(out, ", ");
		cca_info_json_device(out, d, &info->devices[d]);
	}
	g_string_append_printf(out,
			       "], \"segments\": %u, \"blocks\": %" G_GUINT64_FORMAT
			       ", \"reserved_bytes\": %" G_GUINT64_FORMAT
			       ", \"frames\": %u, \"stacks\": %u, \"strings\": %u"
			       ", \"annotations\": %u, \"allocator_settings\": ",
			       snap->segments->len, info->blocks, info->reserved, info->frames,
			       info->stacks, info->strings, snap->annotations->len);
	cca_info_json_settings(out, &snap->settings);
	g_string_append(out, "}\n");
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
			printf("    %-15s %" G_GUINT64_FORMAT "\n", cca_action_name(a),
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

static int
cca_info_usage(const char *what)
{
	fprintf(stderr, "ccasim info: %s (see 'ccasim info --help')\n", what);
	return 2;
}

int
cca_cmd_info(int argc, char **argv)
{
	gboolean json = FALSE;
	const GOptionEntry entries[] = {
		{"json", 0, 0, G_OPTION_ARG_NONE, &json, "print one JSON object", NULL},
		G_OPTION_ENTRY_NULL,
	};
	g_autoptr(GOptionContext) ctx = g_option_context_new("FILE");
	g_autoptr(GError) error = NULL;

	g_set_prgname("ccasim info");
	g_option_context_set_summary(
		ctx, "Summarises a PyTorch memory snapshot (pickle, plain/xz/gzip) or a ccasim\n"
		     "msgpack trace: events per device and action, time span, final segments and\n"
		     "blocks, frame/stack tables and the recorded allocator settings.");
	g_option_context_set_description(
		ctx, "Exit status: 0 success, 1 unreadable input, 2 usage error.");
	g_option_context_add_main_entries(ctx, entries, NULL);
	g_option_context_add_group(ctx, cca_inputargs_group());
	if (!g_option_context_parse(ctx, &argc, &argv, &error))
		return cca_info_usage(error->message);
	if (argc != 2)
		return cca_info_usage(argc < 2 ? "missing FILE" : "expected exactly one FILE");

	g_autoptr(CcaSnapshot) snap = cca_snapshot_load(argv[1], &error);
	CcaInfo info = {.file = argv[1], .snap = snap};
	int status = 0;
	if (snap == NULL || !cca_info_gather(&info, &error)) {
		cca_view_print_error("info", error);
		status = 1;
	} else if (json) {
		cca_info_print_json(&info);
	} else {
		cca_info_print_human(&info);
	}
	g_free(info.devices);
	return status;
}
