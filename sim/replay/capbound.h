/* capbound.h - what a recording proves about a memory cap nobody passed.
 *
 * PyTorch does not record torch.cuda.set_per_process_memory_fraction():
 * a plain snapshot of a capped run looks uncapped.  Its entries can still
 * prove that a cap was in force, and bound it: an `oom` entry whose
 * device_free had room for the segment the request needed failed at the
 * cap, not at the device (PyTorch's alloc_block refuses a cudaMalloc when
 * reserved + size would pass allowed_memory_maximum), and every segment
 * the run did get fitted under it.  doc/whatif.md ("A cap nobody passed").
 */
#ifndef CCA_CAPBOUND_H
#define CCA_CAPBOUND_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "replay.h"

G_BEGIN_DECLS

/* The caps (allowed_memory_maximum, bytes) a recording is consistent with. */
typedef struct {
	bool proved;	      /* an oom entry proves a cap was in force */
	uint64_t lo;	      /* the cap is at least this: the peak reserved */
	uint64_t hi;	      /* and at most this: reserved then + the segment - 1 */
	uint64_t event;	      /* the oom entry that proves it */
	uint64_t device_free; /* what that entry recorded as free on the device */
	uint64_t needed;      /* the segment its request needed */
} CcaCapBound;

/* Fills OUT from RES, a replay of a recording under its own settings
 * (not a what-if) that ran under no cap: no memory fraction given,
 * recorded, or set by a call ccasim-record saw (RES's allowed_maximum and
 * the oom's allowed bytes are 0), and no device capacity
 * (CAPACITY_GIVEN false).  Proved when the trace's first oom entry
 * recorded at least the bytes of the segment the request needed as free
 * on the device.  Then LO is the peak of reserved memory over the replay
 * and HI the bytes reserved at that entry plus the segment, less one.
 * Otherwise OUT is zeroed: nothing was proved (a cap was known, no oom,
 * or the device was full, which its capacity explains). */
void cca_capbound_from_replay(const CcaReplayResult *res, bool capacity_given, CcaCapBound *out);

/* CAP for --json: {lo, hi, event, device_free, segment} when proved,
 * else null (the key "cap_proved" of replay's and sweep's JSON). */
json_t *cca_capbound_to_json(const CcaCapBound *cap);

G_END_DECLS

#endif
