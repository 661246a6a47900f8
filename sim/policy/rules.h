/* rules.h - what changes between PyTorch releases, in one table.
 *
 * Each release from 2.0 to 2.15 has one CcaRules row: how best fit breaks
 * a tie between free blocks of one size, whether the allocator reads
 * throw_on_cudamalloc_oom and expandable_segments_reserve, and the older
 * differences the policy and the settings parser already knew (roundup
 * rounding before 2.4, a memory fraction of 1 before 2.9, where a '>'
 * entry of roundup_power2_divisions starts).  doc/versions.md is the same
 * table with its citations; what the stored sources could not settle is
 * said there.  The constants themselves stay in pytorch.h.
 */
#ifndef CCA_RULES_H
#define CCA_RULES_H

#include <stdbool.h>
#include <stdint.h>

/* The newest release ccasim has rules for (major*100+minor). */
#define CCA_PYTORCH_VERSION_NEWEST 215u
/* The newest release whose rules were checked on hardware: recordings of
 * it pass --check.  Figures under a later release are labelled. */
#define CCA_PYTORCH_VERSION_VALIDATED 211u

/* How BlockComparatorSize orders free blocks of one stream and size. */
typedef enum {
	/* (stream, size, address): the segment's address decides, so a
	 * what-if depends on where the driver places segments */
	CCA_ORDER_ADDRESS = 0,
	/* (stream, size, counter, address), the counter drawn by every new
	 * Block: a split's allocated part draws a new one, the free rest
	 * keeps the old (PR #178362, 2.12) */
	CCA_ORDER_BLOCK_COUNTER,
	/* (stream, size, counter, address), the counter drawn at cudaMalloc
	 * and at each new expandable segment and inherited by every block cut
	 * from it (PRs #183489, #183591) */
	CCA_ORDER_SEGMENT_COUNTER,
} CcaBlockOrder;

typedef struct {
	uint32_t release;		  /* 212 = 2.12 */
	CcaBlockOrder order;		  /* best fit's tie-break */
	bool throw_on_cudamalloc_oom;	  /* the key exists (PR #179473) */
	bool expandable_reserve;	  /* expandable_segments_reserve (PR #192269) */
	bool roundup_one_division_rounds; /* 1 division already rounds (< 2.4) */
	bool fraction_one_is_a_limit;	  /* a fraction of 1.0 sets a limit (< 2.9) */
	bool roundup_fill_from_last;	  /* '>' fills from the last entry (< 2.9) */
	/* modelled from PyTorch's source alone, newer than the release
	 * checked on hardware (2.11): its figures are labelled unvalidated */
	bool unvalidated;
} CcaRules;

/* The rules of RELEASE (major*100+minor, 200..CCA_PYTORCH_VERSION_NEWEST;
 * 0 means the default, 2.11).  A release outside the table gets the
 * nearest row. */
const CcaRules *cca_rules_for(uint32_t release);

/* The name of ORDER, for text and JSON ("address", "block counter",
 * "segment counter"). */
const char *cca_rules_order_name(CcaBlockOrder order);

/* TRUE when A and B order free blocks, and decide every allocation, the
 * same way: a recording of release A replays exactly under B. */
bool cca_rules_same_decisions(uint32_t a, uint32_t b);

#endif
