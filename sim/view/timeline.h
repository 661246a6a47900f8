/* timeline.h - reserved, allocated and active memory over a replay, in
 * bounded memory.
 *
 * A timeline splits the trace's entries into at most max_buckets runs of
 * consecutive entries and keeps, per run, the first, last, smallest and
 * largest value of each series, so that a plot decimated to any width
 * below the bucket count still shows every peak.  OOMs are kept one by
 * one (up to a limit).
 */
#ifndef CCA_TIMELINE_H
#define CCA_TIMELINE_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "replay.h"
#include "snapshot.h"

G_BEGIN_DECLS

typedef enum {
	CCA_SERIES_RESERVED = 0,
	CCA_SERIES_ALLOCATED,
	CCA_SERIES_ACTIVE,
	CCA_SERIES_COUNT
} CcaSeries;

/* The entries of one bucket that the engine handed to the observer. */
typedef struct {
	int64_t first[CCA_SERIES_COUNT]; /* bytes after its first entry */
	int64_t last[CCA_SERIES_COUNT];	 /* bytes after its last entry */
	int64_t min[CCA_SERIES_COUNT];
	int64_t max[CCA_SERIES_COUNT];
	uint64_t i_first, i_last; /* entry indices */
	int64_t t_first, t_last;  /* time_us, CCA_TIME_NONE if absent */
	uint32_t n;		  /* entries seen; 0: an empty bucket */
} CcaTimelineBucket;

/* One request that ran out of memory in the model. */
typedef struct {
	uint64_t index;	   /* its trace entry */
	int64_t time_us;   /* CCA_TIME_NONE if absent */
	uint64_t reserved; /* bytes reserved after it */
	uint64_t size;	   /* the request (bytes) */
	bool recorded;	   /* the trace recorded this oom too */
} CcaTimelineOom;

#define CCA_TIMELINE_MAX_OOMS 10000

/* A replay's memory over its trace entries. */
typedef struct {
	uint64_t n_events; /* entries of the device's trace: the x range */
	uint32_t n_buckets;
	CcaTimelineBucket *buckets; /* bucket of entry i: i * n_buckets / n_events */
	GArray *ooms;		    /* CcaTimelineOom, at most CCA_TIMELINE_MAX_OOMS */
	uint64_t n_ooms;	    /* all of them */
	bool has_time;		    /* entries carry time_us */
	int64_t t_min, t_max;	    /* time range of the handled entries */
	uint64_t allowed_maximum;   /* memory-fraction cap, 0 if none */
	uint64_t device_memory;	    /* --device-memory, where cudaMalloc fails; 0 if none */
	uint64_t peak_reserved;	    /* bytes: figures.reserved_peak.reserved */
	uint64_t peak_index;	    /* the first entry after which reserved peaked */
	CcaFigures figures;	    /* the peak moments (figures.h) */
	CcaReplayResult result;	    /* the replay's own result */
} CcaTimeline;

/* Replays device OPTIONS->device of SNAP (OPTIONS's hooks must be unset)
 * and fills TL with at most MAX_BUCKETS buckets (at least 1).  Costs
 * O(buckets) memory whatever the trace's length.  Returns FALSE with
 * ERROR as cca_replay_run() does.  Clear TL with cca_timeline_clear(). */
gboolean cca_timeline_collect(const CcaSnapshot *snap, const CcaReplayOptions *options,
			      uint32_t max_buckets, CcaTimeline *tl, GError **error);

void cca_timeline_clear(CcaTimeline *tl);

G_END_DECLS

#endif
