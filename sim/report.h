/* report.h - replay results for people (tables) and machines (JSON). */
#ifndef CCA_REPORT_H
#define CCA_REPORT_H

#include <glib.h>

#include "engine.h"
#include "settings.h"

G_BEGIN_DECLS

/* What a report says about the run besides the result. */
typedef struct {
	const char *trace; /* path */
	int device;
	const CcaSettings *settings; /* the settings replayed */
	double memory_fraction;	     /* 0: none */
	uint64_t device_memory;	     /* totalGlobalMem used */
} CcaReportContext;

/* Appends RESULT as one JSON object: {"trace", "device", "settings",
 * "whatif", "memory_stats" (all 122 keys), "oom" (null or the first
 * unexpected OOM), "events", "check" (null unless --check), ...}. */
void cca_report_replay_json(const CcaReportContext *ctx, const CcaReplayResult *result,
			    GString *out);

/* Appends RESULT as a human summary: peaks, fragmentation, device calls,
 * retries, OOMs (with a PyTorch-like OOM message) and the check. */
void cca_report_replay_text(const CcaReportContext *ctx, const CcaReplayResult *result,
			    GString *out);

G_END_DECLS

#endif
