/* stats.c - naming and serialising DeviceStats as memory_stats() does.
 *
 * memory_stats() flattens the nested dict with '.' and sorts the keys; the
 * table below lists the keys in that sorted order so that output needs no
 * sorting at run time.
 */
#include "config.h"

#include "stats.h"

#include <string.h>

typedef enum {
	FIELD_CURRENT,
	FIELD_PEAK,
	FIELD_ALLOCATED,
	FIELD_FREED
} StatField;

static const char *const field_names[] = {"current", "peak", "allocated", "freed"};
static const char *const type_names[] = {"all", "small_pool", "large_pool"};

static int64_t
stat_field(const CcaStat *stat, StatField field)
{
	switch (field) {
	case FIELD_CURRENT:
		return stat->current;
	case FIELD_PEAK:
		return stat->peak;
	case FIELD_ALLOCATED:
		return stat->allocated;
	case FIELD_FREED:
		return stat->freed;
	}
	return 0;
}

typedef struct {
	const char *name;
	size_t offset; /* of a CcaStat[3], a CcaStat or an int64_t */
	enum {
		KIND_ARRAY,
		KIND_STAT,
		KIND_INT
	} kind;
} StatDesc;

#define ARRAY_STAT(n)                                 \
	{                                             \
#n, offsetof(CcaStats, n), KIND_ARRAY \
	}
#define SINGLE_STAT(n)                               \
	{                                            \
#n, offsetof(CcaStats, n), KIND_STAT \
	}
#define INT_STAT(n)                                 \
	{                                           \
#n, offsetof(CcaStats, n), KIND_INT \
	}

/* Sorted by name; sub-keys are expanded in sorted order below. */
static const StatDesc stat_descs[] = {
	ARRAY_STAT(active),
	ARRAY_STAT(active_bytes),
	ARRAY_STAT(allocated_bytes),
	ARRAY_STAT(allocation),
	ARRAY_STAT(inactive_split),
	ARRAY_STAT(inactive_split_bytes),
	INT_STAT(max_split_size),
	INT_STAT(num_alloc_retries),
	INT_STAT(num_device_alloc),
	INT_STAT(num_device_free),
	INT_STAT(num_ooms),
	INT_STAT(num_sync_all_streams),
	SINGLE_STAT(oversize_allocations),
	SINGLE_STAT(oversize_segments),
	ARRAY_STAT(requested_bytes),
	ARRAY_STAT(reserved_bytes),
	ARRAY_STAT(segment),
};

/* "all" < "large_pool" < "small_pool"; allocated < current < freed < peak */
static const CcaStatType sorted_types[] = {CCA_STAT_ALL, CCA_STAT_LARGE_POOL, CCA_STAT_SMALL_POOL};
static const StatField sorted_fields[] = {FIELD_ALLOCATED, FIELD_CURRENT, FIELD_FREED, FIELD_PEAK};

void
cca_stats_foreach(const CcaStats *stats, void (*fn)(const char *name, int64_t value, void *data),
		  void *data)
{
	char name[96];
	for (size_t d = 0; d < G_N_ELEMENTS(stat_descs); d++) {
		const StatDesc *desc = &stat_descs[d];
		const char *base = (const char *)stats + desc->offset;
		if (desc->kind == KIND_INT) {
			fn(desc->name, *(const int64_t *)base, data);
			continue;
		}
		if (desc->kind == KIND_STAT) {
			for (size_t f = 0; f < 4; f++) {
				g_snprintf(name, sizeof name, "%s.%s", desc->name,
					   field_names[sorted_fields[f]]);
				fn(name, stat_field((const CcaStat *)base, sorted_fields[f]), data);
			}
			continue;
		}
		for (size_t t = 0; t < 3; t++) {
			const CcaStat *stat = (const CcaStat *)base + sorted_types[t];
			for (size_t f = 0; f < 4; f++) {
				g_snprintf(name, sizeof name, "%s.%s.%s", desc->name,
					   type_names[sorted_types[t]],
					   field_names[sorted_fields[f]]);
				fn(name, stat_field(stat, sorted_fields[f]), data);
			}
		}
	}
}

typedef struct {
	const char *wanted;
	int64_t value;
	gboolean found;
} LookupState;

static void
lookup_one(const char *name, int64_t value, void *data)
{
	LookupState *state = data;
	if (!state->found && strcmp(name, state->wanted) == 0) {
		state->value = value;
		state->found = TRUE;
	}
}

gboolean
cca_stats_lookup(const CcaStats *stats, const char *name, int64_t *value)
{
	LookupState state = {name, 0, FALSE};
	cca_stats_foreach(stats, lookup_one, &state);
	if (state.found)
		*value = state.value;
	return state.found;
}

double
cca_stats_fragmentation(const CcaStats *stats)
{
	int64_t reserved = stats->reserved_bytes[CCA_STAT_ALL].peak;
	if (reserved <= 0)
		return 0.0;
	return 1.0 - (double)stats->active_bytes[CCA_STAT_ALL].peak / (double)reserved;
}

static void
set_one(const char *name, int64_t value, void *data)
{
	json_object_set_new(data, name, json_integer(value));
}

json_t *
cca_stats_to_json(const CcaStats *stats)
{
	json_t *o = json_object();
	cca_stats_foreach(stats, set_one, o);
	return o;
}

gboolean
cca_stats_known_in_window(const char *name)
{
	return g_str_has_suffix(name, ".current") || strcmp(name, "max_split_size") == 0;
}

static void
set_known(const char *name, int64_t value, void *data)
{
	json_object_set_new(data, name,
			    cca_stats_known_in_window(name) ? json_integer(value) : json_null());
}

json_t *
cca_stats_to_json_window(const CcaStats *stats)
{
	json_t *o = json_object();
	cca_stats_foreach(stats, set_known, o);
	return o;
}

static void
count_unknown(const char *name, int64_t value, void *data)
{
	(void)value;
	*(guint *)data += !cca_stats_known_in_window(name);
}

guint
cca_stats_unknown_in_window(const CcaStats *stats)
{
	guint n = 0;
	cca_stats_foreach(stats, count_unknown, &n);
	return n;
}

/* Every CcaStat of STATS, for the resets. */
static void
stats_each(CcaStats *st, void (*fn)(CcaStat *))
{
	CcaStat *arrays[] = {
		st->allocation,	     st->segment,	 st->active,	   st->inactive_split,
		st->allocated_bytes, st->reserved_bytes, st->active_bytes, st->inactive_split_bytes,
		st->requested_bytes};
	for (guint i = 0; i < G_N_ELEMENTS(arrays); i++)
		for (int t = 0; t < CCA_STAT_TYPES; t++)
			fn(&arrays[i][t]);
	fn(&st->oversize_allocations);
	fn(&st->oversize_segments);
}

static void
stat_reset_peak(CcaStat *s)
{
	s->peak = s->current;
}

static void
stat_reset_accumulated(CcaStat *s)
{
	s->allocated = 0;
	s->freed = 0;
}

void
cca_stats_reset_peak(CcaStats *stats)
{
	stats_each(stats, stat_reset_peak);
}

void
cca_stats_reset_accumulated(CcaStats *stats)
{
	stats_each(stats, stat_reset_accumulated);
	stats->num_alloc_retries = 0;
	stats->num_ooms = 0;
	stats->num_sync_all_streams = 0;
	stats->num_device_alloc = 0;
	stats->num_device_free = 0;
}
