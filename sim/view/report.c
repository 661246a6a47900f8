/* report.c - turning a CcaReplayResult into text and JSON.
 *
 * Fragmentation is reported two ways (doc/figures.md, "Two counts, two
 * moments"): GMLake's 1 - peak active / peak reserved, and the bytes
 * reserved but not allocated at the moment reserved memory peaked.
 */
#include "config.h"

#include "report.h"

#include "calls.h"
#include "capbound.h"
#include "figures.h"

#include "json.h"
#include "rules.h"
#include "size.h"
#include "text.h"

bool
cca_report_check_may_need_cap(const CcaReportContext *ctx)
{
	if (ctx->memory_fraction > 0.0 || ctx->device_memory_set)
		return false;
	/* a ccasim-record dump holds every fraction call the program made:
	 * none there means no cap */
	return !(ctx->snap && cca_calls_present(ctx->snap, ctx->device));
}

const char *
cca_report_cap_hint(void)
{
	return "no memory cap was given, and the snapshot cannot hold one: PyTorch does not "
	       "record torch.cuda.set_per_process_memory_fraction(); if the run had a cap, "
	       "pass it with --memory-fraction F or --device-memory BYTES";
}

const char *
cca_report_window_known(void)
{
	return "the trace is a window of the run (it starts mid-run): every *.current value is "
	       "exact; cumulative counts, peaks, retries and OOMs before the window are unknown "
	       "(null)";
}

const char *
cca_report_window_peaks(void)
{
	return "  note: the trace is a window of the run (it starts mid-run): the peaks below are "
	       "the window's, and the run before it may have reserved or allocated more";
}

const char *
cca_report_window_assumes(void)
{
	return "the what-if starts from the state the recording had when the window opened, "
	       "rebuilt under the recorded settings, as if the run had reached it under these";
}

json_t *
cca_report_window_json(const CcaReplayResult *res)
{
	if (!res->start_reconstructed)
		return json_null();
	json_t *window = json_object();
	json_object_set_new(window, "unknown_keys",
			    cca_json_uint(cca_stats_unknown_in_window(&res->stats)));
	json_object_set_new(window, "known", cca_json_string(cca_report_window_known()));
	if (res->whatif)
		json_object_set_new(window, "assumes",
				    cca_json_string(cca_report_window_assumes()));
	json_object_set_new(window, "start_reserved", cca_json_uint(res->start_reserved));
	json_object_set_new(window, "oom_before_window", cca_json_bool(res->oom_before_window));
	return window;
}

/* The notes on CTX's settings (cca_settings_add_notes()), as a new array. */
static GPtrArray *
report_notes(const CcaReportContext *ctx)
{
	GPtrArray *notes = g_ptr_array_new_with_free_func(g_free);
	cca_settings_add_notes(ctx->settings, notes);
	return notes;
}

/* Whether CTX's snapshot comes from a PyTorch newer than the rules RES
 * replayed: three keys of the replay's JSON. */
static void
report_newer_json(const CcaReportContext *ctx, const CcaReplayResult *res, json_t *o)
{
	g_autofree char *note =
		ctx->snap ? cca_snapshot_newer_note(ctx->snap, res->pytorch_version) : NULL;
	uint32_t release = ctx->snap ? cca_snapshot_format_release(ctx->snap, NULL) : 0;
	g_autofree char *shown =
		release ? g_strdup_printf("%u.%u", release / 100, release % 100) : NULL;
	json_object_set_new(o, "snapshot_newer_than_rules", cca_json_bool(note != NULL));
	json_object_set_new(o, "snapshot_newer_note", note ? cca_json_string(note) : json_null());
	json_object_set_new(o, "snapshot_format_release",
			    shown ? cca_json_string(shown) : json_null());
}

/* The rules RES applied and why (doc/versions.md): "rules" and
 * "unvalidated" in the replay's JSON. */
static void
report_rules_json(const CcaReportContext *ctx, const CcaReplayResult *res, json_t *o)
{
	const CcaRules *r = cca_rules_for(res->pytorch_version);
	g_autofree char *why = cca_replay_rules_reason(ctx->snap, res->pytorch_version);
	g_autofree char *release =
		g_strdup_printf("%u.%u", res->pytorch_version / 100, res->pytorch_version % 100);
	g_autofree char *trace = res->trace_release
					 ? g_strdup_printf("%u.%u", res->trace_release / 100,
							   res->trace_release % 100)
					 : NULL;
	json_t *rules = json_object();
	json_object_set_new(rules, "release", cca_json_string(release));
	json_object_set_new(rules, "why", cca_json_string(why));
	json_object_set_new(rules, "trace_release", trace ? cca_json_string(trace) : json_null());
	json_object_set_new(rules, "best_fit_order",
			    cca_json_string(cca_rules_order_name(r->order)));
	json_object_set_new(rules, "unvalidated", cca_json_bool(r->unvalidated));
	json_object_set_new(o, "rules", rules);
	json_object_set_new(o, "unvalidated", cca_json_bool(r->unvalidated));
	json_object_set_new(o, "counter_ties", cca_json_uint(res->counter_ties));
	json_object_set_new(o, "oom_rejections", cca_json_uint(res->oom_rejections));
}

/* The lines of text that say the rules RES applied, why, and what they
 * decided that 2.11's would have decided otherwise. */
static void
report_rules_text(const CcaReportContext *ctx, const CcaReplayResult *res, GString *out)
{
	const CcaRules *r = cca_rules_for(res->pytorch_version);
	g_autofree char *why = cca_replay_rules_reason(ctx->snap, res->pytorch_version);
	g_string_append_printf(out, "  rules: PyTorch %u.%u, %s; best fit's ties: %s\n",
			       res->pytorch_version / 100, res->pytorch_version % 100, why,
			       r->order == CCA_ORDER_ADDRESS ? "address"
			       : r->order == CCA_ORDER_BLOCK_COUNTER
				       ? "block counter, then address"
				       : "segment counter, then address");
	if (r->unvalidated)
		g_string_append_printf(out,
				       "  unvalidated: PyTorch %u.%u's rules are modelled from its "
				       "source; no recording of it has passed --check on hardware "
				       "(doc/versions.md)\n",
				       res->pytorch_version / 100, res->pytorch_version % 100);
	if (res->counter_ties > 0)
		g_string_append_printf(out,
				       "  %" G_GUINT64_FORMAT
				       " best-fit tie%s between free blocks of "
				       "one stream and size %s decided by the allocation counter; "
				       "PyTorch 2.11 decides %s by address\n",
				       res->counter_ties, res->counter_ties == 1 ? "" : "s",
				       res->counter_ties == 1 ? "was" : "were",
				       res->counter_ties == 1 ? "it" : "them");
	if (res->oom_rejections > 0)
		g_string_append_printf(
			out,
			"  %" G_GUINT64_FORMAT " request%s rejected at the memory "
			"fraction by throw_on_cudamalloc_oom, with no release and no "
			"retry\n",
			res->oom_rejections, res->oom_rejections == 1 ? "" : "s");
}

json_t *
cca_report_replay_to_json(const CcaReportContext *ctx, const CcaReplayResult *res)
{
	g_autofree char *conf = cca_settings_to_string(ctx->settings);
	g_autofree char *version =
		g_strdup_printf("%u.%u", res->pytorch_version / 100, res->pytorch_version % 100);
	json_t *o = json_object();

	json_object_set_new(o, "trace", cca_json_string(ctx->trace));
	json_object_set_new(o, "device", json_integer(ctx->device));
	json_object_set_new(o, "settings", cca_json_string(conf));
	g_autoptr(GPtrArray) notes = report_notes(ctx);
	json_object_set_new(o, "notes", cca_json_strings(notes));
	json_object_set_new(o, "pytorch_version", cca_json_string(version));
	report_newer_json(ctx, res, o);
	report_rules_json(ctx, res, o);
	json_object_set_new(o, "whatif", cca_json_bool(res->whatif));
	json_object_set_new(o, "memory_fraction", cca_json_real(ctx->memory_fraction));
	json_object_set_new(o, "allowed_memory_maximum", cca_json_uint(res->allowed_maximum));
	json_object_set_new(o, "events", cca_json_uint(res->events));
	json_object_set_new(o, "recording_not_reproduced",
			    cca_json_bool(res->diverged_from_recording));
	json_object_set_new(o, "replays", cca_json_uint(res->replays));
	json_object_set_new(o, "planning_passes", cca_json_uint(res->planning_passes));
	json_object_set_new(o, "address_ties",
			    res->address_ties_counted ? cca_json_uint(res->address_ties)
						      : json_null());
	json_object_set_new(o, "pool_releases", cca_json_uint(res->pool_releases));
	/* a window of a run (mid-run, a ring of max_entries) cannot tell what
	 * happened before it: those keys are null */
	json_object_set_new(o, "memory_stats",
			    res->start_reconstructed ? cca_stats_to_json_window(&res->stats)
						     : cca_stats_to_json(&res->stats));
	json_object_set_new(o, "window", cca_report_window_json(res));
	json_t *oom = json_null();
	if (res->unexpected_ooms != 0) {
		oom = json_object();
		json_object_set_new(oom, "event", cca_json_uint(res->oom_event));
		json_object_set_new(oom, "size", cca_json_uint(res->oom_size));
		json_object_set_new(oom, "stream", cca_json_uint(res->oom_stream));
		json_object_set_new(oom, "reserved", cca_json_uint(res->oom_reserved));
		json_object_set_new(oom, "allocated", cca_json_uint(res->oom_allocated));
		json_object_set_new(oom, "free", cca_json_uint(res->oom_free));
		json_object_set_new(oom, "largest_free_block",
				    cca_json_uint(res->oom_largest_free));
		json_object_set_new(oom, "count", cca_json_uint(res->unexpected_ooms));
		json_object_set_new(oom, "stopped", cca_json_bool(res->stopped_by_oom));
	}
	json_object_set_new(o, "oom", oom);
	json_object_set_new(o, "recorded_ooms", cca_json_uint(res->recorded_ooms));
	CcaCapBound cap;
	cca_replay_cap_proved(res, ctx->device_memory_set, &cap);
	json_object_set_new(o, "cap_proved", cca_capbound_to_json(&cap));
	json_object_set_new(o, "empty_cache_calls", cca_json_uint(res->empty_cache_calls));
	json_object_set_new(o, "recorded_calls_applied",
			    cca_json_uint(res->recorded_calls_applied));
	json_object_set_new(o, "unknown_frees", cca_json_uint(res->unknown_frees));
	/* frees deferred by record_stream: a what-if's figures then depend on
	 * when they complete (bounds: sim/study/timing.c) */
	json_object_set_new(o, "deferred_frees", cca_json_uint(res->deferred_frees));
	json_t *frag = json_object();
	json_object_set_new(frag, "peak_active_over_peak_reserved",
			    cca_json_fixed(cca_stats_fragmentation(&res->stats), 6));
	json_object_set_new(frag, "reserved_unallocated_at_peak",
			    cca_json_uint(cca_figures_unallocated_at_reserved_peak(&res->figures)));
	json_object_set_new(o, "fragmentation", frag);
	json_object_set_new(
		o, "figures",
		cca_figures_to_json_in(&res->figures, &res->stats, res->start_reconstructed));
	json_t *start = json_null();
	if (res->start_reconstructed) {
		start = json_object();
		json_object_set_new(start, "reconstructed", json_true());
		json_object_set_new(start, "segments", cca_json_uint(res->start_segments));
		json_object_set_new(start, "live_blocks", cca_json_uint(res->start_blocks));
		json_object_set_new(start, "live_bytes", cca_json_uint(res->start_live_bytes));
		json_object_set_new(start, "unplaced_blocks",
				    cca_json_uint(res->start_blocks_unplaced));
		json_object_set_new(start, "expandable_not_rebuilt",
				    cca_json_bool(res->start_expandable_missing));
	}
	json_object_set_new(o, "start", start);
	json_t *check = json_null();
	if (res->check_ran) {
		check = json_object();
		json_object_set_new(check, "passed", cca_json_bool(res->check_passed));
		json_object_set_new(check, "compared", cca_json_uint(res->check_compared));
		json_object_set_new(check, "message", cca_json_string(res->check_message));
		if (!res->check_passed && cca_report_check_may_need_cap(ctx))
			json_object_set_new(check, "hint", cca_json_string(cca_report_cap_hint()));
	}
	json_object_set_new(o, "check", check);
	return o;
}

static void
row_bytes(GString *out, const char *label, int64_t bytes)
{
	char buf[32];
	g_string_append_printf(out, "  %-32s %16" G_GINT64_FORMAT " B  (%s)\n", label, bytes,
			       cca_size_format((uint64_t)bytes, buf));
}

static void
row_count(GString *out, const char *label, int64_t n)
{
	g_string_append_printf(out, "  %-32s %16" G_GINT64_FORMAT "\n", label, n);
}

/* A figure a window of a run cannot know: "unknown before the window",
 * with what the window saw (bytes when BYTES). */
static void
row_window(GString *out, const char *label, int64_t value, bool bytes)
{
	char buf[32];
	if (bytes)
		g_string_append_printf(out, "  %-32s unknown before the window (%s within it)\n",
				       label, cca_size_format((uint64_t)value, buf));
	else
		g_string_append_printf(
			out, "  %-32s unknown before the window (%" G_GINT64_FORMAT " within it)\n",
			label, value);
}

/* An OOM before a window's first entry: its rebuilt start holds more than
 * the cap or the device (CcaReplayResult.oom_before_window). */
static void
append_oom_before_window(GString *out, const CcaReportContext *ctx, const CcaReplayResult *res)
{
	char a[32], b[32], c[32];
	g_string_append_printf(
		out,
		"\nOut of memory before the window: the state the recording had "
		"when the window opened reserves %s (%s of it allocated), more than ",
		cca_size_format(res->start_reserved, a), cca_size_format(res->oom_allocated, b));
	if (res->allowed_maximum && res->start_reserved > res->allowed_maximum)
		g_string_append_printf(out, "the %s the memory fraction allows",
				       cca_size_format(res->allowed_maximum, c));
	else
		g_string_append_printf(out, "the device's %s",
				       cca_size_format(ctx->device_memory, c));
	g_string_append(out, ": the program could not have reached the window under it, "
			     "so no figure of the window holds there and nothing was replayed.\n");
}

static void
append_oom(GString *out, const CcaReportContext *ctx, const CcaReplayResult *res)
{
	char a[32], b[32], c[32], d[32], e[32];
	if (res->oom_before_window) {
		append_oom_before_window(out, ctx, res);
		return;
	}
	g_string_append_printf(
		out,
		"\nOut of memory at event %" G_GUINT64_FORMAT
		" (the recorded run did not fail here):\n"
		"  CUDA out of memory. Tried to allocate %s. GPU %d has a total capacity of %s of "
		"which %s is free. Of the allocated memory %s is allocated by PyTorch, and %s "
		"is reserved by PyTorch but unallocated.\n",
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

/* The trace's own first OOM, as PyTorch's message put it: the figures
 * the model holds there and the device's free memory the oom entry
 * recorded; the GPU's total and the memory outside the allocator come from
 * ccasim-record when it sampled it.  PyTorch's message also gives the
 * memory each process holds on the GPU (from NVML), which no snapshot
 * shows: those sentences are left out. */
static void
append_recorded_oom(GString *out, const CcaReportContext *ctx, const CcaReplayResult *res)
{
	char a[32], b[32], c[32], d[32], e[32];
	g_autoptr(CcaCalls) calls = ctx->snap && cca_calls_present(ctx->snap, ctx->device)
					    ? cca_calls_parse(ctx->snap, ctx->device, NULL)
					    : NULL;
	const CcaCall *sample = cca_calls_sample(calls, CCA_SAMPLE_DUMP);
	if (!sample)
		sample = cca_calls_sample(calls, CCA_SAMPLE_PEAK);
	uint64_t total = sample ? sample->total : ctx->device_memory;
	g_string_append_printf(
		out,
		"\nThe recorded OOM at event %" G_GUINT64_FORMAT ", in PyTorch's words:\n"
		"  CUDA out of memory. Tried to allocate %s. GPU %d has a total "
		"capacity of %s of which %s is free.",
		res->recorded_oom_event, cca_size_format(res->recorded_oom_alloc_size, a),
		ctx->device, cca_size_format(total, b),
		cca_size_format(res->recorded_oom_device_free, c));
	if (res->recorded_oom_allowed)
		g_string_append_printf(out, " %s allowed;",
				       cca_size_format(res->recorded_oom_allowed, b));
	g_string_append_printf(
		out,
		" Of the allocated memory %s is allocated by PyTorch, and %s is reserved by "
		"PyTorch but unallocated.\n",
		cca_size_format(res->recorded_oom_allocated, d),
		cca_size_format(res->recorded_oom_reserved - res->recorded_oom_allocated, e));
	g_string_append_printf(
		out,
		"  (%s; the memory each process holds, which PyTorch's message adds "
		"from NVML, is in no snapshot)\n",
		sample ? "the GPU's total as ccasim-record sampled it"
		       : "the GPU's total assumed: record with ccasim-record for its own");
}

/* What the recorded OOM proves of a cap nobody passed (capbound.h). */
static void
append_cap_bound(GString *out, const CcaReportContext *ctx, const CcaReplayResult *res)
{
	CcaCapBound cap;
	cca_replay_cap_proved(res, ctx->device_memory_set, &cap);
	if (!cap.proved)
		return;
	char a[32], b[32], c[32], d[32], e[32];
	if (cap.replayed) {
		g_autofree char *text = g_strdup_printf(
			"  A cap was in force: the device had %s free at this OOM, room for the %s "
			"segment the request needed, so torch.cuda.set_per_process_memory_fraction() "
			"allowed this process between %s (the peak reserved) and %s (reserved then "
			"plus the segment, less 1 byte). PyTorch does not record the fraction, and "
			"garbage_collection_threshold acts only under one: the recording was replayed "
			"under both ends and reproduced every entry at each, so these figures (replayed "
			"under %s) are the recording's. A what-if still needs the cap: "
			"pass --recorded-memory-fraction F, F = allowed bytes / the device's total (%s "
			"here), or record with ccasim-record.",
			cca_size_format(cap.device_free, a), cca_size_format(cap.needed, b),
			cca_size_format(cap.lo, c), cca_size_format(cap.hi, d),
			cca_size_format(cap.hi, d), cca_size_format(ctx->device_memory, e));
		cca_text_wrap(out, text, G_MAXUINT, 2);
		return;
	}
	g_autofree char *text = g_strdup_printf(
		"  A cap was in force: the device had %s free at this OOM, room for the %s "
		"segment the request needed, so torch.cuda.set_per_process_memory_fraction() "
		"allowed this process between %s (the peak reserved) and %s (reserved then plus "
		"the segment, less 1 byte). PyTorch does not record the fraction; these figures "
		"are the run's own, but a what-if needs the cap: pass --recorded-memory-fraction "
		"F, F = allowed bytes / the device's total (%s here), or record with "
		"ccasim-record.",
		cca_size_format(cap.device_free, a), cca_size_format(cap.needed, b),
		cca_size_format(cap.lo, c), cca_size_format(cap.hi, d),
		cca_size_format(ctx->device_memory, e));
	cca_text_wrap(out, text, G_MAXUINT, 2);
}

void
cca_report_replay_text(const CcaReportContext *ctx, const CcaReplayResult *res, GString *out)
{
	const CcaStats *st = &res->stats;
	g_autofree char *conf = cca_settings_to_string(ctx->settings);
	char buf[32];
	g_autofree char *trace = cca_text_path(ctx->trace);
	g_string_append_printf(out,
			       "%s, device %d: %" G_GUINT64_FORMAT
			       " events, %s settings \"%s\", PyTorch %u.%u rules",
			       trace, ctx->device, res->events,
			       res->whatif ? "what-if" : "recorded", conf,
			       res->pytorch_version / 100, res->pytorch_version % 100);
	if (res->allowed_maximum)
		g_string_append_printf(out, ", cap %s", cca_size_format(res->allowed_maximum, buf));
	g_string_append(out, "\n");
	g_autofree char *newer =
		ctx->snap ? cca_snapshot_newer_note(ctx->snap, res->pytorch_version) : NULL;
	if (newer)
		g_string_append_printf(out, "  note: %s\n", newer);
	report_rules_text(ctx, res, out);
	g_autoptr(GPtrArray) notes = report_notes(ctx);
	for (guint i = 0; i < notes->len; i++)
		g_string_append_printf(out, "  note: %s\n",
				       (const char *)g_ptr_array_index(notes, i));
	if (res->diverged_from_recording)
		g_string_append_printf(
			out,
			"  the recorded settings under this cap or device do not make "
			"the recording's segments: %s\n",
			res->whatif ? "replayed as a what-if"
				    : "the replay stopped there (ask for a what-if: "
				      "--whatif)");
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
	if (res->start_reconstructed) {
		g_string_append_printf(out, "  %s\n", cca_report_window_known());
		if (res->whatif)
			g_string_append_printf(out, "  %s\n", cca_report_window_assumes());
		row_bytes(out, "reserved now", st->reserved_bytes[CCA_STAT_ALL].current);
		row_bytes(out, "allocated now", st->allocated_bytes[CCA_STAT_ALL].current);
		row_count(out, "segments now", st->segment[CCA_STAT_ALL].current);
		/* what the window itself saw, marked as such */
		row_window(out, "peak reserved", st->reserved_bytes[CCA_STAT_ALL].peak, true);
		row_window(out, "peak allocated", st->allocated_bytes[CCA_STAT_ALL].peak, true);
		row_window(out, "cudaMalloc (+maps)", st->num_device_alloc, false);
		row_window(out, "cudaFree (+unmaps)", st->num_device_free, false);
		row_window(out, "alloc retries", st->num_alloc_retries, false);
		row_window(out, "OOMs", st->num_ooms, false);
	} else {
		row_bytes(out, "peak reserved", st->reserved_bytes[CCA_STAT_ALL].peak);
		g_string_append_printf(out, "  %-32s %16" G_GUINT64_FORMAT "\n", "  after event",
				       res->figures.reserved_peak.index);
		row_bytes(out, "peak allocated", st->allocated_bytes[CCA_STAT_ALL].peak);
		g_string_append_printf(out, "  %-32s %16" G_GUINT64_FORMAT "\n", "  after event",
				       res->figures.allocated_peak.index);
		row_bytes(out, "peak active", st->active_bytes[CCA_STAT_ALL].peak);
		row_bytes(out, "peak requested", st->requested_bytes[CCA_STAT_ALL].peak);
		g_string_append_printf(out, "  %-32s %15.2f %%\n", "fragmentation (1-act/res)",
				       100.0 * cca_stats_fragmentation(st));
		uint64_t unallocated = cca_figures_unallocated_at_reserved_peak(&res->figures);
		g_string_append_printf(
			out, "  %-32s %16" G_GUINT64_FORMAT " B  (%s, %.2f %% of reserved then)\n",
			CCA_FIGURES_LABEL_UNALLOCATED, unallocated,
			cca_size_format(unallocated, buf),
			res->figures.reserved_peak.reserved
				? 100.0 * (double)unallocated /
					  (double)res->figures.reserved_peak.reserved
				: 0.0);
		row_count(out, "cudaMalloc (+maps)", st->num_device_alloc);
		row_count(out, "cudaFree (+unmaps)", st->num_device_free);
		row_count(out, CCA_FIGURES_LABEL_SEGMENTS_AT_PEAK,
			  (int64_t)res->figures.reserved_peak.segments);
		row_count(out, CCA_FIGURES_LABEL_PEAK_SEGMENT_COUNT,
			  (int64_t)cca_figures_peak_segment_count(st));
		row_count(out, "alloc retries", st->num_alloc_retries);
		row_count(out, "OOMs", st->num_ooms);
	}
	row_count(out, "empty_cache calls", (int64_t)res->empty_cache_calls);
	if (res->recorded_calls_applied)
		g_string_append_printf(out,
				       "  %-32s %16" G_GUINT64_FORMAT
				       "  (ccasim-record: %" G_GUINT64_FORMAT
				       " empty_cache, the rest settings, fraction, stats resets)\n",
				       "recorded calls applied", res->recorded_calls_applied,
				       res->recorded_empty_cache_calls);
	if (res->unknown_frees)
		row_count(out, "frees of unknown blocks", (int64_t)res->unknown_frees);
	if (res->unexpected_ooms)
		append_oom(out, ctx, res);
	if (res->recorded_oom_seen && !res->whatif) {
		append_recorded_oom(out, ctx, res);
		append_cap_bound(out, ctx, res);
	}
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

char *
cca_report_settings_label(const CcaSnapshot *snap, const CcaReplayOptions *opt)
{
	GString *s = g_string_new(NULL);
	if (opt->settings) {
		g_autofree char *conf = cca_settings_to_string(opt->settings);
		g_autofree char *shown = cca_text_display(conf, -1, CCA_TEXT_DISPLAY_MAX);
		g_string_append_printf(s, "what-if \"%s\"", shown);
	} else if (snap->settings.present && snap->settings.conf && *snap->settings.conf) {
		g_autofree char *shown =
			cca_text_display(snap->settings.conf, -1, CCA_TEXT_DISPLAY_MAX);
		g_string_append_printf(s, "recorded settings \"%s\"", shown);
	} else {
		g_string_append(s, "recorded settings (PyTorch's defaults)");
	}
	/* a cap is the recording's only when given as such
	 * (--recorded-memory-fraction): any other makes the run a what-if */
	char buf[32];
	if (opt->memory_fraction > 0.0)
		g_string_append_printf(s, ", %s memory fraction %.4g",
				       opt->memory_fraction == opt->recorded_memory_fraction
					       ? "recorded"
					       : "what-if",
				       opt->memory_fraction);
	if (opt->capacity_set)
		g_string_append_printf(s, ", %s device memory %s",
				       opt->recorded_capacity_set ? "recorded" : "what-if",
				       cca_size_format(opt->device_memory, buf));
	return g_string_free(s, FALSE);
}
