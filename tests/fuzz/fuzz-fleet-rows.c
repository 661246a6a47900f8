/* fuzz-fleet-rows.c - libFuzzer target for the rows reader of `fleet merge`.
 *
 * The bytes are a rows file (rows.*.jsonl) handed to
 * cca_fleet_merge_add_text(), as cca_fleet_merge_add_dir() hands it each
 * file it reads; then the three reports are printed.  A line that is no
 * fleet row must be skipped with one line of warning naming the file, and
 * whatever the rows hold (control bytes in paths, settings, errors and GPU
 * names; numbers at the ends of their ranges) the text and CSV reports must
 * reach the terminal with no control byte but '\n', the JSON report must
 * parse, and adding the same text twice must give the same settings table.
 */
#include "config.h"

#include <glib.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "fleet.h"
#include "fuzz.h"
#include "text.h"

const char cca_fuzz_target[] = "fleet-rows";

#define NAME "fuzz/rows.0-of-1.jsonl"

/* Aborts when TEXT holds a control byte other than '\n' (or DEL). */
static void
check_terminal_safe(const GString *text)
{
	for (gsize i = 0; i < text->len; i++) {
		unsigned char c = (unsigned char)text->str[i];
		if ((c < 0x20 && c != '\n') || c == 0x7f)
			abort();
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	g_autoptr(CcaFleetMerge) once = cca_fleet_merge_new();
	g_autoptr(CcaFleetMerge) twice = cca_fleet_merge_new();
	cca_fleet_merge_add_text(once, (const char *)data, size, NAME);
	cca_fleet_merge_add_text(twice, (const char *)data, size, NAME);
	cca_fleet_merge_add_text(twice, (const char *)data, size, NAME);

	const CcaFleetSkipped *skipped = cca_fleet_merge_skipped(once);
	guint shown = skipped->shown ? skipped->shown->len : 0;
	if (shown > CCA_FLEET_SKIPPED_SHOWN || shown > skipped->count ||
	    (skipped->count > 0 && shown == 0))
		abort();
	for (guint i = 0; i < shown; i++) {
		const char *w = g_ptr_array_index(skipped->shown, i);
		if (!g_str_has_prefix(w, NAME ":") || strchr(w, '\n'))
			abort(); /* one line naming the file */
	}
	if (cca_fleet_merge_skipped(twice)->count != 2 * skipped->count)
		abort();

	g_autoptr(GError) error = NULL;
	gboolean has_rows = cca_fleet_merge_check(once, &error);
	if (!has_rows && (error == NULL || strchr(error->message, '\n')))
		abort();

	g_autoptr(GString) text = g_string_new(NULL);
	g_autoptr(GString) wide = g_string_new(NULL);
	g_autoptr(GString) json = g_string_new(NULL);
	g_autoptr(GString) csv = g_string_new(NULL);
	g_autoptr(GString) csv2 = g_string_new(NULL);
	cca_fleet_merge_print_text(once, text, CCA_TEXT_COLUMNS);
	cca_fleet_merge_print_text(once, wide, G_MAXUINT);
	cca_fleet_merge_print_json(once, json);
	cca_fleet_merge_print_csv(once, csv);
	cca_fleet_merge_print_csv(twice, csv2);
	check_terminal_safe(text);
	check_terminal_safe(wide);
	check_terminal_safe(csv);
	if (strcmp(csv->str, csv2->str) != 0)
		abort(); /* the report depends on the set of rows alone */
	json_error_t je;
	json_t *doc = json_loads(json->str, 0, &je);
	if (!json_is_object(doc))
		abort();
	json_decref(doc);
	return 0;
}
