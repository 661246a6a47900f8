/* json.c - ccasim's JSON values and writer on top of jansson.
 *
 * Every report is written with the same flags: one line, ", " and ": "
 * separators, keys in insertion order, reals with 17 significant digits
 * (enough to read back the same double).
 */
#include "config.h"

#include "json.h"

#include <math.h>
#include <string.h>

#define CCA_JSON_FLAGS (JSON_ENCODE_ANY | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17))

json_t *
cca_json_string(const char *s)
{
	if (s == NULL)
		return json_null();
	if (g_utf8_validate(s, -1, NULL))
		return json_string(s);
	g_autofree char *valid = g_utf8_make_valid(s, -1);
	return json_string(valid);
}

json_t *
cca_json_strings(const GPtrArray *strings)
{
	json_t *list = json_array();
	for (guint i = 0; strings && i < strings->len; i++)
		json_array_append_new(list, cca_json_string(g_ptr_array_index(strings, i)));
	return list;
}

json_t *
cca_json_uint(uint64_t v)
{
	return json_integer(v > (uint64_t)INT64_MAX ? INT64_MAX : (json_int_t)v);
}

json_t *
cca_json_real(double d)
{
	return isfinite(d) ? json_real(d) : json_null();
}

json_t *
cca_json_fixed(double d, int decimals)
{
	char fmt[16], buf[G_ASCII_DTOSTR_BUF_SIZE];

	if (!isfinite(d))
		return json_null();
	g_snprintf(fmt, sizeof fmt, "%%.%df", decimals);
	return json_real(g_ascii_strtod(g_ascii_formatd(buf, sizeof buf, fmt, d), NULL));
}

json_t *
cca_json_bool(gboolean b)
{
	return json_boolean(b);
}

/* jansson's dump callback: appends to the GString in DATA. */
static int
cca_json_append_chunk(const char *buffer, size_t size, void *data)
{
	g_string_append_len(data, buffer, (gssize)size);
	return 0;
}

/* Dumps VALUE to OUT with FLAGS and releases it. */
static void
cca_json_dump(GString *out, json_t *value, size_t flags)
{
	if (value == NULL) {
		g_string_append(out, "null");
		return;
	}
	json_dump_callback(value, cca_json_append_chunk, out, flags);
	json_decref(value);
}

void
cca_json_append(GString *out, json_t *value)
{
	cca_json_dump(out, value, CCA_JSON_FLAGS);
}

void
cca_json_append_indented(GString *out, json_t *value, int indent)
{
	cca_json_dump(out, value, CCA_JSON_FLAGS | JSON_INDENT(CLAMP(indent, 0, 31)));
}

void
cca_json_print(FILE *fp, json_t *value)
{
	if (value == NULL) {
		fputs("null", fp);
		return;
	}
	json_dumpf(value, fp, CCA_JSON_FLAGS);
	json_decref(value);
}

void
cca_json_append_string(GString *out, const char *s)
{
	cca_json_append(out, cca_json_string(s));
}
