/* json.c - JSON string escaping for ccasim's machine-readable output.
 *
 * The output is always valid UTF-8 JSON whatever bytes the input holds:
 * trace strings come from user files and are not validated on load.
 */
#include "config.h"

#include "json.h"

/* Appends the escape for the ASCII byte C, or C itself. */
static void
cca_json_append_ascii(GString *out, unsigned char c)
{
	switch (c) {
	case '"':
		g_string_append(out, "\\\"");
		return;
	case '\\':
		g_string_append(out, "\\\\");
		return;
	case '\n':
		g_string_append(out, "\\n");
		return;
	case '\r':
		g_string_append(out, "\\r");
		return;
	case '\t':
		g_string_append(out, "\\t");
		return;
	case '\b':
		g_string_append(out, "\\b");
		return;
	case '\f':
		g_string_append(out, "\\f");
		return;
	default:
		if (c < 0x20 || c == 0x7f)
			g_string_append_printf(out, "\\u%04x", c);
		else
			g_string_append_c(out, (char)c);
	}
}

void
cca_json_append_string(GString *out, const char *s)
{
	if (s == NULL) {
		g_string_append(out, "null");
		return;
	}
	g_string_append_c(out, '"');
	const char *p = s;
	while (*p) {
		unsigned char c = (unsigned char)*p;
		if (c < 0x80) {
			cca_json_append_ascii(out, c);
			p++;
			continue;
		}
		gunichar u = g_utf8_get_char_validated(p, -1);
		if (u == (gunichar)-1 || u == (gunichar)-2) {
			g_string_append(out, "\\ufffd");
			p++;
			continue;
		}
		const char *next = g_utf8_next_char(p);
		g_string_append_len(out, p, next - p);
		p = next;
	}
	g_string_append_c(out, '"');
}
