/* fuzz-lab.c - libFuzzer target for the lab parser (sim/read/lab.c,
 * doc/lab.md).
 *
 * The bytes are a lab program, given to cca_lab_load() as the snapshot
 * reader gives it a file whose first line is "# ccasim lab".  A lab that
 * loads must be the snapshot the reader promises: one device whose entry
 * count matches its events, and recorded settings; one that does not must
 * say why in a GError.
 */
#include "config.h"

#include <glib.h>
#include <stdlib.h>

#include "fuzz.h"
#include "input.h"
#include "lab.h"
#include "snapshot.h"

const char cca_fuzz_target[] = "lab";

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	g_autoptr(GError) error = NULL;
	CcaSnapshot *snap = cca_lab_load(data, size, "fuzz.lab", &error);
	if (snap == NULL) {
		if (error == NULL)
			abort(); /* NULL without an error breaks the reader's contract */
		return 0;
	}
	if (error != NULL || snap->n_devices != 1 || snap->events == NULL ||
	    snap->events[0] == NULL || snap->events[0]->len != snap->n_events[0] ||
	    !snap->settings.present)
		abort();
	cca_snapshot_free(snap);
	return 0;
}
