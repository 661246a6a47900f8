/* capbound.h - what a recording proves about a memory cap nobody passed.
 *
 * PyTorch does not record torch.cuda.set_per_process_memory_fraction():
 * a plain snapshot of a capped run looks uncapped.  Its entries can still
 * prove that a cap was in force, and bound it: an `oom` entry whose
 * device_free had room for the segment the request needed failed at the
 * cap, not at the device (PyTorch's alloc_block refuses a cudaMalloc when
 * reserved + size would pass allowed_memory_maximum), and every segment
 * the run did get fitted under it.  doc/whatif.md ("A cap nobody passed").
 * The replay applies the rule to its result (cca_replay_cap_proved(),
 * replay.h).
 */
#ifndef CCA_CAPBOUND_H
#define CCA_CAPBOUND_H

#include <glib.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

G_BEGIN_DECLS

/* The caps (allowed_memory_maximum, bytes) a recording is consistent with. */
typedef struct {
	bool proved;	      /* an oom entry proves a cap was in force */
	uint64_t lo;	      /* the cap is at least this: the peak reserved */
	uint64_t hi;	      /* and at most this: reserved then + the segment - 1 */
	uint64_t event;	      /* the oom entry that proves it */
	uint64_t device_free; /* what that entry recorded as free on the device */
	uint64_t needed;      /* the segment its request needed */
	/* the recording was replayed under the cap, at both ends of the
	 * interval, and reproduced there (a recording under
	 * garbage_collection_threshold, which acts only under a cap) */
	bool replayed;
} CcaCapBound;

/* The rule, for a run under no known cap whose first oom entry (trace
 * entry EVENT) recorded DEVICE_FREE bytes free on the device while the
 * request needed a segment of NEEDED bytes with RESERVED bytes reserved,
 * and whose reserved memory peaked at PEAK: proved when DEVICE_FREE >=
 * NEEDED (the device had room: the cap refused) and PEAK <= RESERVED +
 * NEEDED - 1 (one cap explains every segment the run got); then the cap
 * lies in [PEAK, RESERVED + NEEDED - 1].  Otherwise OUT is zeroed. */
void cca_capbound_prove(uint64_t peak, uint64_t event, uint64_t reserved, uint64_t needed,
			uint64_t device_free, CcaCapBound *out);

/* CAP for --json: {lo, hi, event, device_free, segment} when proved, else
 * null (the key "cap_proved" of replay's and sweep's JSON). */
json_t *cca_capbound_to_json(const CcaCapBound *cap);

G_END_DECLS

#endif
