/* capbound.c - the cap a recording proves (capbound.h).
 *
 * The bound holds for a cap that stayed the same through the run: a
 * program that changed its fraction mid-run is one whose calls
 * ccasim-record saw, and then the cap is known, not inferred.
 */
#include "config.h"

#include "capbound.h"

#include <string.h>

#include "json.h"

void
cca_capbound_prove(uint64_t peak, uint64_t event, uint64_t reserved, uint64_t needed,
		   uint64_t device_free, CcaCapBound *out)
{
	memset(out, 0, sizeof *out);
	if (device_free < needed)
		return; /* the device was full: no cap needed to explain it */
	uint64_t hi = reserved + needed - 1;
	if (peak > hi)
		return; /* no one cap explains the run */
	out->proved = true;
	out->lo = peak;
	out->hi = hi;
	out->event = event;
	out->device_free = device_free;
	out->needed = needed;
}

json_t *
cca_capbound_to_json(const CcaCapBound *cap)
{
	if (!cap->proved)
		return json_null();
	json_t *o = json_object();
	json_object_set_new(o, "lo", cca_json_uint(cap->lo));
	json_object_set_new(o, "hi", cca_json_uint(cap->hi));
	json_object_set_new(o, "event", cca_json_uint(cap->event));
	json_object_set_new(o, "device_free", cca_json_uint(cap->device_free));
	json_object_set_new(o, "segment", cca_json_uint(cap->needed));
	return o;
}
