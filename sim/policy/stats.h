/* stats.h - PyTorch's DeviceStats, with torch.cuda.memory_stats() names.
 *
 * A Stat counts current/peak/allocated/freed exactly as c10's Stat does;
 * array stats have three entries (all, small_pool, large_pool) and every
 * update touches "all" plus the pool of the block.
 */
#ifndef CCA_STATS_H
#define CCA_STATS_H

#include <glib.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

G_BEGIN_DECLS

typedef struct {
	int64_t current;
	int64_t peak;
	int64_t allocated; /* sum of increases */
	int64_t freed;	   /* sum of decreases */
} CcaStat;

typedef enum {
	CCA_STAT_ALL = 0,
	CCA_STAT_SMALL_POOL = 1,
	CCA_STAT_LARGE_POOL = 2,
	CCA_STAT_TYPES = 3,
} CcaStatType;

/* The 122 keys of torch.cuda.memory_stats() in torch 2.11. */
typedef struct {
	CcaStat allocation[CCA_STAT_TYPES];	      /* live allocations (count) */
	CcaStat segment[CCA_STAT_TYPES];	      /* cudaMalloc segments (count) */
	CcaStat active[CCA_STAT_TYPES];		      /* allocated + pending-free blocks */
	CcaStat inactive_split[CCA_STAT_TYPES];	      /* free blocks of split segments */
	CcaStat allocated_bytes[CCA_STAT_TYPES];      /* block bytes */
	CcaStat reserved_bytes[CCA_STAT_TYPES];	      /* segment or mapped bytes */
	CcaStat active_bytes[CCA_STAT_TYPES];	      /* block bytes */
	CcaStat inactive_split_bytes[CCA_STAT_TYPES]; /* block bytes */
	CcaStat requested_bytes[CCA_STAT_TYPES];      /* unrounded request bytes */
	int64_t num_alloc_retries;
	int64_t num_ooms;
	int64_t num_sync_all_streams;
	int64_t num_device_alloc;
	int64_t num_device_free;
	CcaStat oversize_allocations;
	CcaStat oversize_segments;
	int64_t max_split_size; /* -1 when unlimited */
} CcaStats;

/* An increase by N >= 0, without the sign test: with N 0 it changes
 * nothing either (a peak is never below the current value). */
static inline void
cca_stat_add(CcaStat *stat, int64_t n)
{
	stat->current += n;
	if (stat->current > stat->peak)
		stat->peak = stat->current;
	if (G_UNLIKELY(__builtin_add_overflow(stat->allocated, n, &stat->allocated)))
		stat->allocated = INT64_MAX;
}

/* A change by AMOUNT <= 0 (no peak can come of it). */
static inline void
cca_stat_fall(CcaStat *stat, int64_t amount)
{
	stat->current += amount;
	if (G_UNLIKELY(__builtin_sub_overflow(stat->freed, amount, &stat->freed)))
		stat->freed = INT64_MAX;
}

/* Adds AMOUNT (may be negative) to STAT as c10's update_stat does.  The
 * engine bounds what is live (CCA_REPLAY_MAX_RESERVED), so current and peak
 * stay far from 2^63; the cumulative allocated and freed sums grow with
 * the trace's length and saturate at INT64_MAX rather than overflow. */
static inline void
cca_stat_update(CcaStat *stat, int64_t amount)
{
	if (amount > 0) /* only an increase can make a peak */
		cca_stat_add(stat, amount);
	else
		cca_stat_fall(stat, amount);
}

/* Updates ARRAY[all] and ARRAY[pool] by AMOUNT. */
static inline void
cca_stat_array_update(CcaStat array[CCA_STAT_TYPES], CcaStatType pool, int64_t amount)
{
	cca_stat_update(&array[CCA_STAT_ALL], amount);
	cca_stat_update(&array[pool], amount);
}

/* Adds N >= 0 to ARRAY[all] and ARRAY[pool]. */
static inline void
cca_stat_array_add(CcaStat array[CCA_STAT_TYPES], CcaStatType pool, int64_t n)
{
	cca_stat_add(&array[CCA_STAT_ALL], n);
	cca_stat_add(&array[pool], n);
}

/* Takes N >= 0 from ARRAY[all] and ARRAY[pool]. */
static inline void
cca_stat_array_sub(CcaStat array[CCA_STAT_TYPES], CcaStatType pool, int64_t n)
{
	cca_stat_fall(&array[CCA_STAT_ALL], -n);
	cca_stat_fall(&array[pool], -n);
}

/* resetPeakStats(): every peak (arrays, oversize counts) becomes the
 * current value. */
void cca_stats_reset_peak(CcaStats *stats);

/* resetAccumulatedStats(): the allocated and freed sums of every stat and
 * the retry, OOM, sync and device alloc/free counts restart from 0. */
void cca_stats_reset_accumulated(CcaStats *stats);

/* Calls FN(name, value, data) for every memory_stats() key in Python's
 * sorted key order ("active.all.allocated" ... "segment.small_pool.peak"). */
void cca_stats_foreach(const CcaStats *stats,
		       void (*fn)(const char *name, int64_t value, void *data), void *data);

/* Looks up one key by its memory_stats() name; returns FALSE if unknown. */
gboolean cca_stats_lookup(const CcaStats *stats, const char *name, int64_t *value);

/* GMLake's fragmentation, 1 - peak active / peak reserved bytes (0 when
 * nothing was reserved). */
double cca_stats_fragmentation(const CcaStats *stats);

/* The stats as a new JSON object, keys sorted as Python sorts them. */
json_t *cca_stats_to_json(const CcaStats *stats);

/* Whether memory_stats() key NAME is known from a window of a run (a
 * trace that starts mid-run, a ring of max_entries): the state at any
 * moment is (every *.current, and max_split_size, a setting), but not what
 * happened before the window (cumulative counts, peaks, retries, OOMs). */
gboolean cca_stats_known_in_window(const char *name);

/* cca_stats_to_json() for a window of a run: the keys the window cannot
 * determine (cca_stats_known_in_window()) are null. */
json_t *cca_stats_to_json_window(const CcaStats *stats);

/* How many memory_stats() keys a window of a run cannot determine. */
guint cca_stats_unknown_in_window(const CcaStats *stats);

G_END_DECLS

#endif
