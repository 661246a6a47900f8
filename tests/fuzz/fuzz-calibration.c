/* fuzz-calibration.c - libFuzzer target for the calibration file reader.
 *
 * The bytes go through cca_calibration_parse() as the contents of a file
 * named "fuzz.json".  A failure must come with one line of error naming
 * the file; a table that parses must answer the cost model's questions at
 * sizes below, between and above its points.
 */
#include "config.h"

#include <glib.h>
#include <stdlib.h>
#include <string.h>

#include "calibration.h"
#include "fuzz.h"

const char cca_fuzz_target[] = "calibration";

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint64_t sizes[] = {1,
					 512,
					 UINT64_C(2) << 20,
					 UINT64_C(3) << 20,
					 UINT64_C(20) << 20,
					 UINT64_C(1) << 40};
	g_autoptr(GError) error = NULL;
	g_autoptr(CcaCalibrationTable) cal =
		cca_calibration_parse((const char *)data, size, "fuzz.json", &error);

	if (cal == NULL) {
		if (error == NULL || !g_str_has_prefix(error->message, "fuzz.json: ") ||
		    strchr(error->message, '\n') != NULL)
			abort(); /* one line naming the file, always */
		return 0;
	}
	if (cal->n_points == 0)
		abort();
	for (size_t i = 0; i < G_N_ELEMENTS(sizes); i++) {
		CcaEvent ev = {.action = CCA_ACTION_SEGMENT_MAP, .size = sizes[i]};
		CcaCost cost = {0};
		(void)cca_calibration_malloc_us(cal, sizes[i]);
		(void)cca_calibration_free_us(cal, sizes[i]);
		cca_calibration_cost_add_event(&cost, cal, &ev, UINT64_C(20) << 20);
		ev.action = CCA_ACTION_SEGMENT_UNMAP;
		cca_calibration_cost_add_event(&cost, cal, &ev, UINT64_C(20) << 20);
		cca_calibration_cost_add_syncs(&cost, cal, 3);
		(void)cca_calibration_cost_total_us(&cost);
	}
	return 0;
}
