/* sensitivity.c - one what-if under several address models.
 *
 * The driver model (driverva.c) is the best guess of where a fresh
 * process's segments land; ascending and descending are the two extremes
 * of a naive allocator; the moved ones stand for a driver whose placement
 * other users of the address space shift (cca_simdevice_bound_models()).  A figure
 * that is the same under all of them does not depend on address ties; one
 * that differs gets its range.
 */
#include "config.h"

#include "sensitivity.h"

#include <string.h>

const char *const cca_sensitivity_figure_keys[CCA_FIGURE_COUNT + 1] = {
	[CCA_FIGURE_PEAK_RESERVED] = "reserved_bytes.all.peak",
	[CCA_FIGURE_PEAK_ALLOCATED] = "allocated_bytes.all.peak",
	[CCA_FIGURE_PEAK_SEGMENTS] = "segment.all.peak",
	[CCA_FIGURE_DEVICE_ALLOCS] = "num_device_alloc",
	[CCA_FIGURE_DEVICE_FREES] = "num_device_free",
	[CCA_FIGURE_RETRIES] = "num_alloc_retries",
	[CCA_FIGURE_OOMS] = "num_ooms",
	[CCA_FIGURE_COUNT] = NULL,
};

const char *
cca_sensitivity_figure_name(CcaFigure figure)
{
	return (unsigned)figure < CCA_FIGURE_COUNT ? cca_sensitivity_figure_keys[figure] : "?";
}

int64_t
cca_sensitivity_figure_value(const CcaStats *st, CcaFigure figure)
{
	switch (figure) {
	case CCA_FIGURE_PEAK_RESERVED:
		return st->reserved_bytes[CCA_STAT_ALL].peak;
	case CCA_FIGURE_PEAK_ALLOCATED:
		return st->allocated_bytes[CCA_STAT_ALL].peak;
	case CCA_FIGURE_PEAK_SEGMENTS:
		return st->segment[CCA_STAT_ALL].peak;
	case CCA_FIGURE_DEVICE_ALLOCS:
		return st->num_device_alloc;
	case CCA_FIGURE_DEVICE_FREES:
		return st->num_device_free;
	case CCA_FIGURE_RETRIES:
		return st->num_alloc_retries;
	case CCA_FIGURE_OOMS:
		return st->num_ooms;
	case CCA_FIGURE_COUNT:
		break;
	}
	return 0;
}

gboolean
cca_sensitivity_run(const CcaSnapshot *snap, const CcaReplayOptions *options,
		    const CcaAddressModel *models, int n_models, CcaSensitivity *out,
		    GError **error)
{
	if (!models) {
		guint n;
		models = cca_simdevice_bound_models(&n);
		n_models = (int)n;
	}
	g_return_val_if_fail(n_models > 0 && n_models <= CCA_MAX_ADDRESS_MODELS, FALSE);
	memset(out, 0, sizeof *out);
	out->n_models = n_models;
	uint64_t ties = 0;
	for (int m = 0; m < n_models; m++) {
		out->models[m] = models[m];
		if (m > 0 && ties == 0) {
			/* the first replay took no decision by address: every
			 * model gives its run */
			memcpy(out->values[m], out->values[0], sizeof out->values[0]);
			continue;
		}
		CcaReplayOptions opt = *options;
		opt.force_whatif = true;
		opt.addresses_from = NULL;
		opt.check = false;
		opt.address_model = models[m];
		opt.count_address_ties = true;
		CcaReplayResult res;
		if (!cca_replay_run(snap, &opt, &res, error))
			return FALSE;
		if (m == 0)
			ties = res.address_ties;
		for (int f = 0; f < CCA_FIGURE_COUNT; f++) {
			int64_t v = cca_sensitivity_figure_value(&res.stats, (CcaFigure)f);
			out->values[m][f] = v;
			if (m == 0 || v < out->min[f])
				out->min[f] = v;
			if (m == 0 || v > out->max[f])
				out->max[f] = v;
			out->varies = out->varies || out->min[f] != out->max[f];
		}
		cca_replay_result_clear(&res);
	}
	return TRUE;
}
