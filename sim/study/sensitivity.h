/* sensitivity.h - does the device's address choice change the answer?
 *
 * Ties between equal-size free blocks, and the order of releases, go by
 * device address (doc/driver-va.md).  A what-if replayed under several
 * address models tells whether its figures depend on that choice, and by how much.
 */
#ifndef CCA_SENSITIVITY_H
#define CCA_SENSITIVITY_H

#include "replay.h"
#include "simdevice.h"

G_BEGIN_DECLS

/* The figures compared across address models. */
typedef enum {
	CCA_FIGURE_PEAK_RESERVED = 0,
	CCA_FIGURE_PEAK_ALLOCATED,
	CCA_FIGURE_PEAK_SEGMENTS,
	CCA_FIGURE_DEVICE_ALLOCS,
	CCA_FIGURE_DEVICE_FREES,
	CCA_FIGURE_RETRIES,
	CCA_FIGURE_OOMS,
	CCA_FIGURE_COUNT
} CcaFigure;

/* The memory_stats() key of each CcaFigure, in its order, then NULL: the
 * headline figures the commands show and bound (timing.h). */
extern const char *const cca_sensitivity_figure_keys[CCA_FIGURE_COUNT + 1];

#define CCA_MAX_ADDRESS_MODELS CCA_ADDRESS_BOUND_MODELS

typedef struct {
	int n_models;
	CcaAddressModel models[CCA_MAX_ADDRESS_MODELS];
	int64_t values[CCA_MAX_ADDRESS_MODELS][CCA_FIGURE_COUNT];
	int64_t min[CCA_FIGURE_COUNT], max[CCA_FIGURE_COUNT];
	bool varies; /* some figure differs between models */
} CcaSensitivity;

/* memory_stats() key of FIGURE ("reserved_bytes.all.peak", ...). */
const char *cca_sensitivity_figure_name(CcaFigure figure);

/* The value of FIGURE in STATS. */
int64_t cca_sensitivity_figure_value(const CcaStats *stats, CcaFigure figure);

/* Replays SNAP as a what-if under OPTIONS once per address model in MODELS
 * (cca_simdevice_bound_models() when MODELS is NULL) and fills OUT; when
 * the first replay took no decision by address alone
 * (CcaReplayResult.address_ties is 0), the other models share its
 * figures without a replay.
 * Returns FALSE with ERROR on bad input only. */
gboolean cca_sensitivity_run(const CcaSnapshot *snap, const CcaReplayOptions *options,
			     const CcaAddressModel *models, int n_models, CcaSensitivity *out,
			     GError **error);

G_END_DECLS

#endif
