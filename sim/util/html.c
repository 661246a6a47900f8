/* html.c - text, data and code written into ccasim's HTML pages, and the
 * pages' Content-Security-Policy (html.h).
 *
 * Three contexts, one routine each:
 * - HTML text and quoted attribute values: cca_html_escape() (&<>"').
 * - Data inside a <script> element: cca_html_script_json().  The HTML
 *   tokenizer ends a script element at the first "</script" and, after a
 *   "<!--" followed by "<script", keeps reading past the writer's own
 *   "</script>" (the "script data double escaped" states), so a trace
 *   string holding either would end the page's data early or swallow its
 *   code.  JSON holds '<' and '>' only inside strings, where \u003c and
 *   \u003e mean the same character: none survives raw, so no tag, comment
 *   opener or closer can appear.  U+2028/U+2029 are escaped too.
 * - Code: only ccasim's own constant script and style, checked once per
 *   page to hold no closing tag and no comment opener.
 * Invariant: no byte of input reaches a page except through the first two.
 */
#include "config.h"

#include "html.h"

#include <string.h>

/* TRUE when TEXT holds NEEDLE, ASCII case ignored. */
static gboolean
html_contains(const char *text, const char *needle)
{
	size_t n = strlen(needle);
	for (const char *p = text; *p; p++)
		if (g_ascii_strncasecmp(p, needle, n) == 0)
			return TRUE;
	return FALSE;
}

/* TRUE when CODE, the text of an inline block, cannot end its element or
 * open a comment inside it. */
static gboolean
html_code_ok(const char *code)
{
	return !html_contains(code, "</script") && !html_contains(code, "</style") &&
	       !html_contains(code, "<!--");
}

char *
cca_html_escape(const char *s)
{
	if (s == NULL)
		return g_strdup("");
	g_autofree char *valid = g_utf8_make_valid(s, -1);
	GString *out = g_string_sized_new(strlen(valid) + 16);
	for (const char *p = valid; *p; p++) {
		switch (*p) {
		case '&':
			g_string_append(out, "&amp;");
			break;
		case '<':
			g_string_append(out, "&lt;");
			break;
		case '>':
			g_string_append(out, "&gt;");
			break;
		case '"':
			g_string_append(out, "&quot;");
			break;
		case '\'':
			g_string_append(out, "&#39;");
			break;
		default:
			/* C0 controls other than tab and newlines are not XML
			 * (an SVG holding one does not parse) */
			if ((unsigned char)*p < 0x20 && *p != '\t' && *p != '\n' && *p != '\r')
				g_string_append(out, "\xef\xbf\xbd");
			else
				g_string_append_c(out, *p);
		}
	}
	return g_string_free(out, FALSE);
}

void
cca_html_put_text(FILE *f, const char *s)
{
	g_autofree char *e = cca_html_escape(s);
	fputs(e, f);
}

char *
cca_html_script_json(const char *json)
{
	if (json == NULL)
		return g_strdup("null");
	GString *out = g_string_sized_new(strlen(json) + 16);
	for (const char *p = json; *p; p++) {
		const unsigned char *u = (const unsigned char *)p;
		if (*p == '<')
			g_string_append(out, "\\u003c");
		else if (*p == '>')
			g_string_append(out, "\\u003e");
		else if (*p == '&')
			g_string_append(out, "\\u0026");
		else if (u[0] == 0xe2 && u[1] == 0x80 && (u[2] == 0xa8 || u[2] == 0xa9)) {
			/* U+2028 LINE SEPARATOR, U+2029 PARAGRAPH SEPARATOR */
			g_string_append(out, u[2] == 0xa8 ? "\\u2028" : "\\u2029");
			p += 2;
		} else
			g_string_append_c(out, *p);
	}
	return g_string_free(out, FALSE);
}

char *
cca_html_hash(const char *text)
{
	guint8 digest[32];
	gsize len = sizeof digest;
	GChecksum *sum = g_checksum_new(G_CHECKSUM_SHA256);
	g_checksum_update(sum, (const guchar *)text, (gssize)strlen(text));
	g_checksum_get_digest(sum, digest, &len);
	g_checksum_free(sum);
	g_autofree char *b64 = g_base64_encode(digest, len);
	return g_strdup_printf("'sha256-%s'", b64);
}

char *
cca_html_policy(const CcaHtmlPage *page)
{
	g_autofree char *script = cca_html_hash(page->script);
	g_autofree char *style = cca_html_hash(page->style);
	/* style-src-attr: the scripts build table cells and legends with
	 * style="color:..." (a style attribute runs no code, and every
	 * load a style could make, url() included, is refused by the other
	 * directives); style-src-elem is the one <style> */
	return g_strdup_printf("default-src 'none'; script-src %s; style-src %s; "
			       "style-src-elem %s; style-src-attr 'unsafe-inline'; "
			       "img-src data:; connect-src data:; base-uri 'none'; "
			       "form-action 'none'",
			       script, style, style);
}

void
cca_html_put_head(FILE *f, const CcaHtmlPage *page)
{
	g_assert(html_code_ok(page->style) && html_code_ok(page->script));
	g_autofree char *policy = cca_html_policy(page);
	/* the policy comes before any style or script it governs */
	fprintf(f,
		"<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
		"<meta http-equiv=\"Content-Security-Policy\" content=\"%s\">\n<title>",
		policy);
	cca_html_put_text(f, page->title ? page->title : "ccasim");
	fprintf(f, "</title>\n<style>%s</style>\n</head>\n<body>\n", page->style);
}

void
cca_html_put_data_start(FILE *f, const char *type, const char *id)
{
	fputs("<script type=\"", f);
	cca_html_put_text(f, type);
	fputs("\" id=\"", f);
	cca_html_put_text(f, id);
	fputs("\">", f);
}

void
cca_html_put_data_end(FILE *f)
{
	fputs("</script>\n", f);
}

void
cca_html_put_json(FILE *f, const char *id, const char *json)
{
	g_autofree char *safe = cca_html_script_json(json);
	cca_html_put_data_start(f, "application/json", id);
	fputs(safe, f);
	cca_html_put_data_end(f);
}

void
cca_html_put_script_and_end(FILE *f, const CcaHtmlPage *page)
{
	fprintf(f, "<script>%s</script>\n</body>\n</html>\n", page->script);
}
