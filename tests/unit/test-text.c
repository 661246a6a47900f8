/* test-text.c - display forms of untrusted strings (sim/util/text.c).
 *
 * A table of inputs and the exact text a terminal would receive. */
#include "config.h"

#include <glib.h>
#include <string.h>

#include "testutil.h"
#include "text.h"

typedef struct {
	const char *name;
	const char *in;
	gssize len;
	gsize max;
	const char *out;
} TextCase;

static const TextCase text_cases[] = {
	{"plain", "max_split_size_mb:128", -1, 200, "max_split_size_mb:128"},
	{"empty", "", -1, 200, ""},
	{"escape-sequence", "a\x1b[2Jb", -1, 200, "a\\x1b[2Jb"},
	{"newline-tab-cr", "a\nb\tc\rd", -1, 200, "a\\nb\\tc\\rd"},
	{"backslash", "a\\b", -1, 200, "a\\\\b"},
	{"del", "a\x7f", -1, 200, "a\\x7f"},
	{"utf8-kept",
	 "gr\xc3\xb6\xc3\x9f"
	 "e",
	 -1, 200,
	 "gr\xc3\xb6\xc3\x9f"
	 "e"},
	{"invalid-utf8", "a\xff\xc3", -1, 200, "a\\xff\\xc3"},
	{"c1-control",
	 "a\xc2\x9b"
	 "31m",
	 -1, 200, "a\\xc2\\x9b31m"},
	{"embedded-nul", "a\0b", 3, 200, "a\\x00b"},
	{"fits-exactly", "0123456789012345678901234567890123456789", -1, 40,
	 "0123456789012345678901234567890123456789"},
	{"cut", "0123456789012345678901234567890123456789x", -1, 40, "012345678901... (41 bytes)"},
};

/* One row of text_cases. */
static void
test_text_case(gconstpointer data)
{
	const TextCase *c = data;
	g_autofree char *got = cca_text_display(c->in, c->len, c->max);
	g_assert_cmpstr(got, ==, c->out);
	g_assert_cmpuint(strlen(got), <=, MAX(c->max, 32));
}

/* A 16 MiB string of escapes comes back short, in linear time. */
static void
test_text_huge(void)
{
	gsize n = 16u << 20;
	char *s = g_malloc(n + 1);
	memset(s, '\x1b', n);
	s[n] = '\0';
	g_autofree char *got = cca_text_display(s, -1, CCA_TEXT_DISPLAY_MAX);
	g_assert_cmpuint(strlen(got), <=, CCA_TEXT_DISPLAY_MAX);
	g_assert_true(g_str_has_suffix(got, "... (16777216 bytes)"));
	g_free(s);
}

/* NULL shows as the empty string. */
static void
test_text_null(void)
{
	g_autofree char *got = cca_text_display(NULL, -1, 200);
	g_assert_cmpstr(got, ==, "");
}

/* Paragraphs wrapped at a width: TEXT at WIDTH with INDENT gives OUT. */
typedef struct {
	const char *name;
	const char *text;
	guint width, indent;
	const char *out;
} WrapCase;

static const WrapCase wrap_cases[] = {
	{"fits", "one two", 20, 0, "one two\n"},
	{"breaks-at-spaces", "one two three", 8, 2, "one two\n  three\n"},
	{"keeps-leading-spaces", "  one two", 7, 4, "  one\n    two\n"},
	{"long-word-alone", "a 0123456789 b", 5, 0, "a\n0123456789\nb\n"},
	/* a number keeps its unit: "2.00 MiB" moves whole */
	{"number-and-unit", "it saves 2.00 MiB", 12, 0, "it saves\n2.00 MiB\n"},
	{"unit-then-comma", "x 12 bytes, y", 8, 0, "x\n12 bytes,\ny\n"},
	{"percent", "frag 5.2 % now", 9, 0, "frag\n5.2 % now\n"},
	/* a word that is no unit breaks as any other */
	{"number-then-word", "at 12 events", 8, 0, "at 12\nevents\n"},
	{"no-wrap", "one two three", G_MAXUINT, 0, "one two three\n"},
};

static void
test_wrap_case(gconstpointer data)
{
	const WrapCase *c = data;
	g_autoptr(GString) out = g_string_new(NULL);
	cca_text_wrap(out, c->text, c->width, c->indent);
	g_assert_cmpstr(out->str, ==, c->out);
}

int
main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	CCA_TEST_ADD_ROWS("/text", text_cases, name, test_text_case);
	CCA_TEST_ADD_ROWS("/text/wrap", wrap_cases, name, test_wrap_case);
	g_test_add_func("/text/huge", test_text_huge);
	g_test_add_func("/text/null", test_text_null);
	return g_test_run();
}
