/* report.c - turning a CcaReplayResult into text and JSON.
 *
 * Fragmentation is reported two ways (spec-and-peers §5): GMLake's
 * 1 - peak active / peak reserved, and the bytes reserved but not
 * allocated at the moment reserved memory peaked.
 */
#include "config.h"

#include "report.h"

#include "json.h"
#include "sizes.h"

bool
cca_report_check_may_need_cap(const CcaReportContext *ctx)
{
	return ctx->memory_fraction <= 0.0 && !ctx->device_memory_set;
}

const char *
cca_report_cap_hint(void)
{
	return "no memory cap was given, and the snapshot cannot hold one: PyTorch does not "
	       "record torch.cuda.set_per_process_memory_fraction(); if the run had a cap, "
	       "pass it with --memory-fraction F or --device-memory BYTES";
}

void
cca_report_replay_json(const CcaReportContext *ctx, const CcaReplayResult *res, GString *out)
{
	g_autofree char *conf = cca_settings_to_string(ctx->settings);
	g_string_append(out, "{\"trace\": ");
	cca_json_append_string(out, ctx->trace);
	g_string_append_printf(out, ", \"device\": %d, \"settings\": ", ctx->device);
	cca_json_append_string(out, conf);
	g_string_append_printf(out,
			       ", \"pytorch_version\": \"%u.%u\", \"whatif\": %s"
			       ", \"memory_fraction\": %.17g",
			       res->pytorch_version / 100, res->pytorch_version % 100,
			       res->whatif ? "true" : "false", ctx->memory_fraction);
	g_string_append_printf(out, ", \"allowed_memory_maximum\": %" G_GUINT64_FORMAT,
			       res->allowed_maximum);
	g_string_append_printf(out, ", \"events\": %" G_GUINT64_FORMAT, res->events);
	g_string_append_printf(out, ", \"recording_not_reproduced\": %s",
			       res->diverged_from_recording ? "true" : "false");
	g_string_append(out, ", \"memory_stats\": ");
	cca_stats_append_json(&res->stats, out);
	g_string_append(out, ", \"oom\": ");
	if (res->unexpected_ooms == 0) {
		g_string_append(out, "null");
	} else {
		g_string_append_printf(
			out,
			"{\"event\": %" G_GUINT64_FORMAT ", \"size\": %" G_GUINT64_FORMAT
			", \"stream\": %" G_GUINT64_FORMAT ", \"reserved\": %" G_GUINT64_FORMAT
			", \"allocated\": %" G_GUINT64_FORMAT ", \"free\": %" G_GUINT64_FORMAT
			", \"largest_free_block\": %" G_GUINT64_FORMAT
			", \"count\": %" G_GUINT64_FORMAT ", \"stopped\": %s}",
			res->oom_event, res->oom_size, res->oom_stream, res->oom_reserved,
			res->oom_allocated, res->oom_free, res->oom_largest_free,
			res->unexpected_ooms, res->stopped_by_oom ? "true" : "false");
	}
	g_string_append_printf(out,
			       ", \"recorded_ooms\": %" G_GUINT64_FORMAT
			       ", \"empty_cache_calls\": %" G_GUINT64_FORMAT
			       ", \"unknown_frees\": %" G_GUINT64_FORMAT,
			       res->recorded_ooms, res->empty_cache_calls, res->unknown_frees);
	g_string_append_printf(out,
			       ", \"fragmentation\": {\"peak_active_over_peak_reserved\": %.6f"
			       ", \"reserved_unallocated_at_peak\": %" G_GUINT64_FORMAT "}",
			       cca_stats_fragmentation(&res->stats),
			       res->reserved_at_peak - res->allocated_at_peak);
	g_string_append(out, ", \"start\": ");
	if (!res->start_reconstructed)
		g_string_append(out, "null");
	else
		g_string_append_printf(out,
				       "{\"reconstructed\": true, \"segments\": %" G_GUINT64_FORMAT
				       ", \"live_blocks\": %" G_GUINT64_FORMAT
				       ", \"live_bytes\": %" G_GUINT64_FORMAT
				       ", \"unplaced_blocks\": %" G_GUINT64_FORMAT
				       ", \"expandable_not_rebuilt\": %s}",
				       res->start_segments, res->start_blocks,
				       res->start_live_bytes, res->start_blocks_unplaced,
				       res->start_expandable_missing ? "true" : "false");
	g_string_append(out, ", \"check\": ");
	if (!res->check_ran) {
		g_string_append(out, "null");
	} else {
		g_string_append_printf(
			out, "{\"passed\": %s, \"compared\": %" G_GUINT64_FORMAT ", \"message\": ",
			res->check_passed ? "true" : "false", res->check_compared);
		cca_json_append_string(out, res->check_message);
		if (!res->check_passed && cca_report_check_may_need_cap(ctx)) {
			g_string_append(out, ", \"hint\": ");
			cca_json_append_string(out, cca_report_cap_hint());
		}
		g_string_append_c(out, '}');
	}
	g_string_append(out, "}");
}

static void
row_bytes(GString *out, const char *label, int64_t bytes)
{
	char buf[32];
	g_string_append_printf(out, "  %-28s %16" G_GINT64_FORMAT " B  (%s)\n", label, bytes,
			       cca_size_format((uint64_t)bytes, buf));
}

static void
row_count(GString *out, const char *label, int64_t n)
{
	g_string_append_printf(out, "  %-28s %16" G_GINT64_FORMAT "\n", label, n);
}

static void
append_oom(GString *out, const CcaReportContext *ctx, const CcaReplayResult *res)
{
	char a[32], b[32], c[32], d[32], e[32];
	g_string_append_printf(
		out,
		"\nOut of memory at event %" G_GUINT64_FORMAT
		" (the recorded run did not fail here):\n"
		"  CUDA out of memory. Tried to allocate %s. GPU %d has a total capacity of %s of\n"
		"  which %s is free. Of the allocated memory %s is allocated by PyTorch, and %s\n"
		"  is reserved by PyTorch but unallocated.\n",
		res->oom_event, cca_size_format(res->oom_alloc_size, a), ctx->device,
		cca_size_format(ctx->device_memory, b), cca_size_format(res->oom_free, c),
		cca_size_format(res->oom_allocated, d),
		cca_size_format(res->oom_reserved - res->oom_allocated, e));
	if (res->allowed_maximum)
		g_string_append_printf(out, "  The memory fraction allows this process %s.\n",
				       cca_size_format(res->allowed_maximum, a));
	g_string_append_printf(
		out, "  Largest free cached block: %s.%s\n",
		cca_size_format(res->oom_largest_free, a),
		res->stopped_by_oom ? " The replay stopped here (--keep-going goes on)." : "");
}

void
cca_report_replay_text(const CcaReportContext *ctx, const CcaReplayResult *res, GString *out)
{
	const CcaStats *st = &res->stats;
	g_autofree char *conf = cca_settings_to_string(ctx->settings);
	char buf[32];
	g_string_append_printf(out,
			       "%s, device %d: %" G_GUINT64_FORMAT
			       " events, %s settings \"%s\", PyTorch %u.%u rules",
			       ctx->trace, ctx->device, res->events,
			       res->whatif ? "what-if" : "recorded", conf,
			       res->pytorch_version / 100, res->pytorch_version % 100);
	if (res->allowed_maximum)
		g_string_append_printf(out, ", cap %s", cca_size_format(res->allowed_maximum, buf));
	g_string_append(out, "\n");
	if (res->diverged_from_recording)
		g_string_append(out,
				"  the recorded settings under this cap or device do not make the "
				"recording's segments: replayed as a what-if\n");
	if (res->start_reconstructed)
		g_string_append_printf(
			out,
			"  the trace starts mid-run: its start was rebuilt from the final "
			"state (%" G_GUINT64_FORMAT " segments, %" G_GUINT64_FORMAT
			" live blocks, %s)\n",
			res->start_segments, res->start_blocks,
			cca_size_format(res->start_live_bytes, buf));
	if (res->start_expandable_missing)
		g_string_append(out,
				"  warning: expandable segments were in use when the trace began; "
				"they are not rebuilt, so this replay is approximate\n");
	if (res->start_blocks_unplaced)
		g_string_append_printf(
			out,
			"  warning: %" G_GUINT64_FORMAT
			" live blocks of the start fit no segment and were left out\n",
			res->start_blocks_unplaced);
	row_bytes(out, "peak reserved", st->reserved_bytes[CCA_STAT_ALL].peak);
	row_bytes(out, "peak allocated", st->allocated_bytes[CCA_STAT_ALL].peak);
	row_bytes(out, "peak active", st->active_bytes[CCA_STAT_ALL].peak);
	row_bytes(out, "peak requested", st->requested_bytes[CCA_STAT_ALL].peak);
	g_string_append_printf(out, "  %-28s %15.2f %%\n", "fragmentation (1-act/res)",
			       100.0 * cca_stats_fragmentation(st));
	row_bytes(out, "unallocated at reserved peak",
		  (int64_t)(res->reserved_at_peak - res->allocated_at_peak));
	row_count(out, "cudaMalloc (+maps)", st->num_device_alloc);
	row_count(out, "cudaFree (+unmaps)", st->num_device_free);
	row_count(out, "segments at peak", st->segment[CCA_STAT_ALL].peak);
	row_count(out, "alloc retries", st->num_alloc_retries);
	row_count(out, "OOMs", st->num_ooms);
	row_count(out, "empty_cache calls", (int64_t)res->empty_cache_calls);
	if (res->unknown_frees)
		row_count(out, "frees of unknown blocks", (int64_t)res->unknown_frees);
	if (res->unexpected_ooms)
		append_oom(out, ctx, res);
	if (res->check_ran) {
		if (res->check_passed)
			g_string_append_printf(out,
					       "check: passed (%" G_GUINT64_FORMAT
					       " entries and the final state match the trace)\n",
					       res->check_compared);
		else
			g_string_append_printf(out, "check: FAILED at %s\n", res->check_message);
		if (!res->check_passed && cca_report_check_may_need_cap(ctx))
			g_string_append_printf(out, "  %s\n", cca_report_cap_hint());
	}
}
