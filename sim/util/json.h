/* json.h - ccasim's JSON, through jansson: the helpers that build values
 * the way every report wants them, and the one writer.
 *
 * No module formats JSON by hand: reports build a json_t tree with these
 * helpers and jansson's json_object_set_new()/json_array_append_new(),
 * then write it with cca_json_append().
 */
#ifndef CCA_JSON_H
#define CCA_JSON_H

#include <glib.h>
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>

G_BEGIN_DECLS

/* A new JSON string holding S; invalid UTF-8 bytes become U+FFFD (trace
 * strings come from user files and are not validated on load), so the
 * output is always valid JSON.  NULL gives a JSON null. */
json_t *cca_json_string(const char *s);

/* A new JSON array of the strings of STRINGS (char *; NULL gives []),
 * each as cca_json_string() makes it. */
json_t *cca_json_strings(const GPtrArray *strings);

/* A new JSON integer holding V.  JSON integers here are int64: a V above
 * INT64_MAX (none of ccasim's counters or sizes can reach it) is clamped
 * to INT64_MAX rather than wrapped to a negative number. */
json_t *cca_json_uint(uint64_t v);

/* A new JSON real holding D (written with 17 significant digits, so it
 * reads back as D); NaN or an infinity gives a JSON null. */
json_t *cca_json_real(double d);

/* A new JSON real holding D rounded to DECIMALS digits after the point
 * (the value "%.Nf" prints, read back), for figures reported at a fixed
 * precision; NaN or an infinity gives a JSON null. */
json_t *cca_json_fixed(double d, int decimals);

/* A new JSON true or false. */
json_t *cca_json_bool(gboolean b);

/* Appends VALUE to OUT on one line ("key": value, ...), keys in insertion
 * order, and releases VALUE (the caller's reference is stolen). */
void cca_json_append(GString *out, json_t *value);

/* Appends VALUE to OUT as cca_json_append() does, but one key or item a
 * line, indented by INDENT spaces a level, and releases VALUE. */
void cca_json_append_indented(GString *out, json_t *value, int indent);

/* Writes VALUE to FP as cca_json_append() does and releases VALUE; a
 * write error is left in FP's error flag for the caller's close. */
void cca_json_print(FILE *fp, json_t *value);

/* Appends S to OUT as a quoted JSON string, as cca_json_string() makes it
 * (NULL appends `null`); for JSON embedded in other text (plot hovers). */
void cca_json_append_string(GString *out, const char *s);

G_END_DECLS

#endif
