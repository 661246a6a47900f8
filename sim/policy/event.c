/* event.c - the names PyTorch gives the parts of a trace entry: its
 * action ("alloc", "segment_free", ...) and the block states of a final
 * segment list, both ways.
 */
#include "config.h"

#include "event.h"

#include <glib.h>
#include <string.h>

static const char *const event_action_names[CCA_ACTION_COUNT] = {
	[CCA_ACTION_ALLOC] = "alloc",
	[CCA_ACTION_FREE_REQUESTED] = "free_requested",
	[CCA_ACTION_FREE_COMPLETED] = "free_completed",
	[CCA_ACTION_SEGMENT_ALLOC] = "segment_alloc",
	[CCA_ACTION_SEGMENT_FREE] = "segment_free",
	[CCA_ACTION_SEGMENT_MAP] = "segment_map",
	[CCA_ACTION_SEGMENT_UNMAP] = "segment_unmap",
	[CCA_ACTION_OOM] = "oom",
	[CCA_ACTION_SNAPSHOT] = "snapshot",
};

const char *
cca_event_action_name(CcaAction action)
{
	if ((unsigned)action >= CCA_ACTION_COUNT)
		return "unknown";
	return event_action_names[action];
}

int
cca_event_action_from_name(const char *name, size_t len)
{
	/* Called once per trace entry: compare lengths before bytes. */
	static const uint8_t lens[CCA_ACTION_COUNT] = {5, 14, 14, 13, 12, 11, 13, 3, 8};
	for (int a = 0; a < CCA_ACTION_COUNT; a++)
		if (lens[a] == len && memcmp(event_action_names[a], name, len) == 0)
			return a;
	return -1;
}

const char *
cca_event_block_state_name(CcaBlockState state)
{
	switch (state) {
	case CCA_BLOCK_INACTIVE:
		return "inactive";
	case CCA_BLOCK_ACTIVE_ALLOCATED:
		return "active_allocated";
	case CCA_BLOCK_ACTIVE_PENDING_FREE:
		return "active_pending_free";
	}
	return "unknown";
}

int
cca_event_block_state_from_name(const char *name, size_t len)
{
	static const struct {
		const char *name;
		CcaBlockState state;
	} states[] = {
		{"inactive", CCA_BLOCK_INACTIVE},
		{"active_allocated", CCA_BLOCK_ACTIVE_ALLOCATED},
		{"active_pending_free", CCA_BLOCK_ACTIVE_PENDING_FREE},
		{"active_awaiting_free", CCA_BLOCK_ACTIVE_PENDING_FREE},
	};
	for (size_t i = 0; i < G_N_ELEMENTS(states); i++)
		if (strlen(states[i].name) == len && memcmp(states[i].name, name, len) == 0)
			return states[i].state;
	return -1;
}
