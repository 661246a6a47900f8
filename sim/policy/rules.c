/* rules.c - the per-release rule table (doc/versions.md). */
#include "config.h"

#include "rules.h"

#include <glib.h>

/* One row per release, 2.0 to 2.15; doc/versions.md cites each change:
 * roundup_power2_divisions' one division stopped rounding in 2.4; 2.9's
 * AcceleratorAllocatorConfig made a fraction of 1.0 no limit and a '>'
 * entry fill after the last explicit one; 2.12 carries #178362 (its
 * release notes) and throw_on_cudamalloc_oom (#179473); 2.13 carries
 * #183489 (its release notes) and, by the reading doc/versions.md gives,
 * #183591; expandable_segments_reserve (#192269) is read as 2.15. */
#define OLD(r, one, frac)                                                          \
	{                                                                          \
		(r), CCA_ORDER_ADDRESS, false, false, (one), (frac), (frac), false \
	}
static const CcaRules rules_table[] = {
	OLD(200, true, true),
	OLD(201, true, true),
	OLD(202, true, true),
	OLD(203, true, true),
	OLD(204, false, true),
	OLD(205, false, true),
	OLD(206, false, true),
	OLD(207, false, true),
	OLD(208, false, true),
	OLD(209, false, false),
	OLD(210, false, false),
	{211, CCA_ORDER_ADDRESS, false, false, false, false, false, false},
	{212, CCA_ORDER_BLOCK_COUNTER, true, false, false, false, false, true},
	{213, CCA_ORDER_SEGMENT_COUNTER, true, false, false, false, false, true},
	{214, CCA_ORDER_SEGMENT_COUNTER, true, false, false, false, false, true},
	{215, CCA_ORDER_SEGMENT_COUNTER, true, true, false, false, false, true},
};
#undef OLD

const CcaRules *
cca_rules_for(uint32_t release)
{
	if (release == 0)
		release = CCA_PYTORCH_VERSION_VALIDATED;
	if (release < rules_table[0].release)
		return &rules_table[0];
	for (guint i = 0; i < G_N_ELEMENTS(rules_table); i++)
		if (rules_table[i].release == release)
			return &rules_table[i];
	return &rules_table[G_N_ELEMENTS(rules_table) - 1];
}

const char *
cca_rules_order_name(CcaBlockOrder order)
{
	switch (order) {
	case CCA_ORDER_BLOCK_COUNTER:
		return "block counter";
	case CCA_ORDER_SEGMENT_COUNTER:
		return "segment counter";
	case CCA_ORDER_ADDRESS:
	default:
		return "address";
	}
}

bool
cca_rules_same_decisions(uint32_t a, uint32_t b)
{
	const CcaRules *ra = cca_rules_for(a), *rb = cca_rules_for(b);
	return ra->order == rb->order &&
	       ra->throw_on_cudamalloc_oom == rb->throw_on_cudamalloc_oom &&
	       ra->expandable_reserve == rb->expandable_reserve;
}
