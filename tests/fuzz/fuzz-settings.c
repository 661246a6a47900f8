/* fuzz-settings.c - libFuzzer target for the PYTORCH_CUDA_ALLOC_CONF parser.
 *
 * The bytes become a NUL-terminated string (cut at the first NUL, as a
 * real environment variable would be) and go through cca_settings_parse().
 * A string that parses must survive a round trip through
 * cca_settings_to_string() and parse again.
 */
#include "config.h"

#include <glib.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "settings.h"

const char cca_fuzz_target[] = "settings";

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	g_autofree char *conf = g_strndup((const char *)data, size);
	g_autoptr(GError) error = NULL;
	CcaSettings settings;

	cca_settings_init(&settings);
	if (cca_settings_parse(&settings, conf, &error)) {
		g_autofree char *canon = cca_settings_to_string(&settings);
		g_autoptr(GError) error2 = NULL;
		CcaSettings again;

		cca_settings_init(&again);
		if (!cca_settings_parse(&again, canon, &error2))
			abort(); /* the canonical string of valid settings must parse */
		cca_settings_clear(&again);
	} else if (error == NULL) {
		abort(); /* FALSE without an error breaks the parser's contract */
	}
	cca_settings_clear(&settings);
	return 0;
}
