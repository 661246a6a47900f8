/* test-html.c - sim/util/html.c: what ccasim's pages embed, row by row.
 *
 * /html/script-json: JSON text made safe inside a <script> (no '<', '>',
 * '&', U+2028 or U+2029 left raw) and still the same JSON value;
 * /html/escape: text and attribute values; /html/hash: the CSP hash of a
 * block (SHA-256, base64); /html/head: the policy comes before the style
 * and names both blocks' hashes.
 */
#include "config.h"

#include <glib.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "html.h"

static const struct {
	const char *json;
	const char *safe;
} script_json_rows[] = {
	{"{\"a\": \"</script><script>x</script>\"}",
	 "{\"a\": \"\\u003c/script\\u003e\\u003cscript\\u003ex\\u003c/script\\u003e\"}"},
	{"[\"<!--<script>\"]", "[\"\\u003c!--\\u003cscript\\u003e\"]"},
	{"[\"-->\"]", "[\"--\\u003e\"]"},
	{"[\"a & b\"]", "[\"a \\u0026 b\"]"},
	{"[\"\xe2\x80\xa8\xe2\x80\xa9\"]", "[\"\\u2028\\u2029\"]"},
	{"[\"\xe2\x80\xa7\xc3\xa9\"]", "[\"\xe2\x80\xa7\xc3\xa9\"]"}, /* neighbours kept */
	{"{\"k\": [1, 2.5, null, true]}", "{\"k\": [1, 2.5, null, true]}"},
	{"[\"\\\"\\\\\"]", "[\"\\\"\\\\\"]"},
};

static void
test_script_json(void)
{
	for (gsize r = 0; r < G_N_ELEMENTS(script_json_rows); r++) {
		g_autofree char *safe = cca_html_script_json(script_json_rows[r].json);
		g_assert_cmpstr(safe, ==, script_json_rows[r].safe);
		/* the same value */
		json_error_t e1, e2;
		json_t *a = json_loads(script_json_rows[r].json, 0, &e1);
		json_t *b = json_loads(safe, 0, &e2);
		g_assert_nonnull(a);
		g_assert_nonnull(b);
		g_assert_true(json_equal(a, b));
		json_decref(a);
		json_decref(b);
	}
	g_autofree char *null = cca_html_script_json(NULL);
	g_assert_cmpstr(null, ==, "null");
}

static const struct {
	const char *text;
	const char *escaped;
} escape_rows[] = {
	{"<b>&\"'</b>", "&lt;b&gt;&amp;&quot;&#39;&lt;/b&gt;"},
	{"<!--<script>", "&lt;!--&lt;script&gt;"},
	{"plain \xc3\xa9", "plain \xc3\xa9"},
	{"bad \xff byte", "bad \xef\xbf\xbd byte"},
	{"bell\x07 tab\t", "bell\xef\xbf\xbd tab\t"},
	{"", ""},
};

static void
test_escape(void)
{
	for (gsize r = 0; r < G_N_ELEMENTS(escape_rows); r++) {
		g_autofree char *e = cca_html_escape(escape_rows[r].text);
		g_assert_cmpstr(e, ==, escape_rows[r].escaped);
	}
	g_autofree char *null = cca_html_escape(NULL);
	g_assert_cmpstr(null, ==, "");
}

static void
test_hash(void)
{
	/* SHA-256 of "" and of "abc" (FIPS 180-2), base64 */
	g_autofree char *empty = cca_html_hash("");
	g_assert_cmpstr(empty, ==, "'sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU='");
	g_autofree char *abc = cca_html_hash("abc");
	g_assert_cmpstr(abc, ==, "'sha256-ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0='");
}

static void
test_head(void)
{
	const CcaHtmlPage page = {.title = "a <title>", .style = "b{}", .script = "1;"};
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	g_assert_nonnull(f);
	cca_html_put_head(f, &page);
	cca_html_put_json(f, "d", "[\"</script>\"]");
	cca_html_put_script_and_end(f, &page);
	g_assert_cmpint(fclose(f), ==, 0);
	g_autofree char *script = cca_html_hash("1;");
	g_autofree char *style = cca_html_hash("b{}");
	const char *csp = strstr(text, "<meta http-equiv=\"Content-Security-Policy\" content=\"");
	g_assert_nonnull(csp);
	g_assert_true(csp < strstr(text, "<style>"));
	g_assert_nonnull(strstr(csp, "default-src 'none';"));
	g_assert_nonnull(strstr(csp, script));
	g_assert_nonnull(strstr(csp, style));
	g_assert_nonnull(strstr(text, "<title>a &lt;title&gt;</title>"));
	g_assert_nonnull(strstr(text, "<style>b{}</style>"));
	g_assert_nonnull(strstr(text,
				"<script type=\"application/json\" id=\"d\">[\"\\u003c/script"
				"\\u003e\"]</script>\n<script>1;</script>\n</body>\n</html>\n"));
	free(text);
}

int
main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/html/script-json", test_script_json);
	g_test_add_func("/html/escape", test_escape);
	g_test_add_func("/html/hash", test_hash);
	g_test_add_func("/html/head", test_head);
	return g_test_run();
}
