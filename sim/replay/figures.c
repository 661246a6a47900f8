/* figures.c - the peak moments and counts every command reports.
 *
 * A replay's figures are sampled after each trace entry the engine
 * hands its observer, never in the middle of one: reserved memory only
 * grows inside a malloc, which the engine handles as one entry, so the
 * reserved peak is the same figure as PyTorch's reserved_bytes.all.peak
 * (unless the program reset the peaks); the first entry reaching a
 * maximum wins, later entries that only equal it do not move it.
 */
#include "config.h"

#include "figures.h"

#include "json.h"
#include "size.h"

static void
moment_take(CcaMoment *m, uint64_t index, const CcaEvent *event, const CcaStats *st)
{
	m->seen = true;
	m->index = index;
	m->time_us = event ? event->time_us : CCA_TIME_NONE;
	m->reserved = (uint64_t)st->reserved_bytes[CCA_STAT_ALL].current;
	m->allocated = (uint64_t)st->allocated_bytes[CCA_STAT_ALL].current;
	m->active = (uint64_t)st->active_bytes[CCA_STAT_ALL].current;
}

/* The segments standing now, counted again only after a device call. */
static uint64_t
segments_now(CcaFigures *f, const CcaAllocator *alloc, const CcaStats *st)
{
	/* (a stats reset can bring the calls back to an earlier sum: the
	 * reserved bytes tell those moments apart) */
	uint64_t calls = (uint64_t)(st->num_device_alloc + st->num_device_free);
	uint64_t reserved = (uint64_t)st->reserved_bytes[CCA_STAT_ALL].current;
	if (!f->counted || calls != f->count_device_calls || reserved != f->count_reserved) {
		f->count = cca_allocator_segment_count(alloc);
		f->count_device_calls = calls;
		f->count_reserved = reserved;
		f->counted = true;
	}
	return f->count;
}

unsigned
cca_figures_take(CcaFigures *f, uint64_t index, const CcaEvent *event, const CcaAllocator *alloc)
{
	const CcaStats *st = cca_allocator_stats(alloc);
	uint64_t reserved = (uint64_t)st->reserved_bytes[CCA_STAT_ALL].current;
	uint64_t allocated = (uint64_t)st->allocated_bytes[CCA_STAT_ALL].current;
	unsigned set = 0;
	if (!f->reserved_peak.seen || reserved > f->reserved_peak.reserved) {
		moment_take(&f->reserved_peak, index, event, st);
		f->reserved_peak.segments = segments_now(f, alloc, st);
		set |= CCA_FIGURES_RESERVED_PEAK;
	}
	if (!f->allocated_peak.seen || allocated > f->allocated_peak.allocated) {
		moment_take(&f->allocated_peak, index, event, st);
		f->allocated_peak.segments = segments_now(f, alloc, st);
		set |= CCA_FIGURES_ALLOCATED_PEAK;
	}
	return set;
}

uint64_t
cca_figures_unallocated_at_reserved_peak(const CcaFigures *f)
{
	const CcaMoment *m = &f->reserved_peak;
	return m->seen ? m->reserved - m->allocated : 0;
}

uint64_t
cca_figures_peak_segment_count(const CcaStats *stats)
{
	return (uint64_t)stats->segment[CCA_STAT_ALL].peak;
}

static json_t *
moment_json(const CcaMoment *m)
{
	if (!m->seen)
		return json_null();
	json_t *o = json_object();
	json_object_set_new(o, "event", cca_json_uint(m->index));
	json_object_set_new(o, "time_us",
			    m->time_us == CCA_TIME_NONE ? json_null() : json_integer(m->time_us));
	json_object_set_new(o, "reserved", cca_json_uint(m->reserved));
	json_object_set_new(o, "allocated", cca_json_uint(m->allocated));
	json_object_set_new(o, "active", cca_json_uint(m->active));
	json_object_set_new(o, "segments", cca_json_uint(m->segments));
	return o;
}

json_t *
cca_figures_to_json(const CcaFigures *f, const CcaStats *stats)
{
	json_t *o = json_object();
	json_object_set_new(o, "reserved_peak", moment_json(&f->reserved_peak));
	json_object_set_new(o, "allocated_peak", moment_json(&f->allocated_peak));
	json_object_set_new(o, "unallocated_at_reserved_peak",
			    cca_json_uint(cca_figures_unallocated_at_reserved_peak(f)));
	json_object_set_new(o, "segments_at_reserved_peak",
			    cca_json_uint(f->reserved_peak.segments));
	if (stats)
		json_object_set_new(o, "peak_segment_count",
				    cca_json_uint(cca_figures_peak_segment_count(stats)));
	return o;
}

json_t *
cca_figures_to_json_in(const CcaFigures *figures, const CcaStats *stats, bool window)
{
	json_t *o = cca_figures_to_json(figures, stats);
	if (window && stats)
		json_object_set_new(o, "peak_segment_count", json_null());
	return o;
}

void
cca_figures_append_text(GString *out, const CcaFigures *f, const CcaStats *stats,
			const char *indent)
{
	char a[32], b[32];
	const CcaMoment *r = &f->reserved_peak, *al = &f->allocated_peak;
	if (!r->seen) {
		g_string_append_printf(out, "%sno entry replayed: no peak\n", indent);
		return;
	}
	g_string_append_printf(out,
			       "%s%-33s %" G_GUINT64_FORMAT " B (%s) after event %" G_GUINT64_FORMAT
			       ", allocated %" G_GUINT64_FORMAT " B then\n",
			       indent, CCA_FIGURES_LABEL_RESERVED_PEAK, r->reserved,
			       cca_size_format(r->reserved, a), r->index, r->allocated);
	g_string_append_printf(out,
			       "%s%-33s %" G_GUINT64_FORMAT " B (%s) after event %" G_GUINT64_FORMAT
			       ", reserved %" G_GUINT64_FORMAT " B then\n",
			       indent, CCA_FIGURES_LABEL_ALLOCATED_PEAK, al->allocated,
			       cca_size_format(al->allocated, b), al->index, al->reserved);
	uint64_t un = cca_figures_unallocated_at_reserved_peak(f);
	g_string_append_printf(out, "%s%-33s %" G_GUINT64_FORMAT " B (%s, %.2f %% of reserved)\n",
			       indent, CCA_FIGURES_LABEL_UNALLOCATED, un, cca_size_format(un, a),
			       r->reserved ? 100.0 * (double)un / (double)r->reserved : 0.0);
	g_string_append_printf(out, "%s%-33s %" G_GUINT64_FORMAT "\n", indent,
			       CCA_FIGURES_LABEL_SEGMENTS_AT_PEAK, r->segments);
	if (stats)
		g_string_append_printf(
			out, "%s%-33s %" G_GUINT64_FORMAT "  (PyTorch's segment.all.peak)\n",
			indent, CCA_FIGURES_LABEL_PEAK_SEGMENT_COUNT,
			cca_figures_peak_segment_count(stats));
}
