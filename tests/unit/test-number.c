/* test-number.c - decimal integers from text (sim/util/number.c): a table
 * of inputs, what each scanner makes of them and where it stops. */
#include "config.h"

#include <glib.h>

#include "number.h"
#include "testutil.h"

typedef struct {
	const char *name;
	const char *in;
	gboolean u_ok; /* cca_number_scan_u64 */
	uint64_t u;
	gboolean i_ok; /* cca_number_scan_i64 */
	int64_t i;
	int stop; /* characters scanned when ok */
} NumberCase;

static const NumberCase number_cases[] = {
	{"zero", "0", TRUE, 0, TRUE, 0, 1},
	{"digits-then-text", "42,7", TRUE, 42, TRUE, 42, 2},
	{"u64-max", "18446744073709551615", TRUE, UINT64_MAX, FALSE, 0, 20},
	{"past-u64-max", "18446744073709551616", FALSE, 0, FALSE, 0, 0},
	{"i64-max", "9223372036854775807", TRUE, INT64_MAX, TRUE, INT64_MAX, 19},
	{"i64-min", "-9223372036854775808", FALSE, 0, TRUE, INT64_MIN, 20},
	{"past-i64-min", "-9223372036854775809", FALSE, 0, FALSE, 0, 0},
	{"minus-alone", "-", FALSE, 0, FALSE, 0, 0},
	{"empty", "", FALSE, 0, FALSE, 0, 0},
	{"plus-sign", "+1", FALSE, 0, FALSE, 0, 0},
	{"space-first", " 1", FALSE, 0, FALSE, 0, 0},
	{"leading-zeros", "007", TRUE, 7, TRUE, 7, 3},
};

static void
test_number_case(gconstpointer data)
{
	const NumberCase *c = data;
	const char *p = c->in;
	uint64_t u = 99;
	g_assert_cmpint(cca_number_scan_u64(&p, &u), ==, c->u_ok);
	g_assert_cmpint(p - c->in, ==, c->u_ok ? c->stop : 0);
	if (c->u_ok)
		g_assert_cmpuint(u, ==, c->u);
	p = c->in;
	int64_t i = 99;
	g_assert_cmpint(cca_number_scan_i64(&p, &i), ==, c->i_ok);
	g_assert_cmpint(p - c->in, ==, c->i_ok ? c->stop : 0);
	if (c->i_ok)
		g_assert_cmpint(i, ==, c->i);
}

/* parse: the whole text, digits only, within MAX */
static void
test_number_parse(void)
{
	uint64_t v = 0;
	g_assert_true(cca_number_parse_u64("65536", 65536, &v));
	g_assert_cmpuint(v, ==, 65536);
	g_assert_false(cca_number_parse_u64("65537", 65536, &v));
	g_assert_false(cca_number_parse_u64("12 ", UINT64_MAX, &v));
	g_assert_false(cca_number_parse_u64("1e3", UINT64_MAX, &v));
	g_assert_false(cca_number_parse_u64(NULL, UINT64_MAX, &v));
	g_assert_cmpuint(v, ==, 65536);
}

/* Sixteen threads parse at once in a fresh process: none fails, whatever
 * errno the C library's first use of a locale leaves (number.h). */
static gpointer
parse_in_thread(gpointer data)
{
	(void)data;
	uint64_t v;
	return GINT_TO_POINTER(cca_number_parse_u64("0", 1, &v) && v == 0);
}

static void
test_number_threads(void)
{
	GThread *t[16];
	for (guint k = 0; k < G_N_ELEMENTS(t); k++)
		t[k] = g_thread_new("parse", parse_in_thread, NULL);
	for (guint k = 0; k < G_N_ELEMENTS(t); k++)
		g_assert_true(GPOINTER_TO_INT(g_thread_join(t[k])));
}

int
main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	CCA_TEST_ADD_ROWS("/number", number_cases, name, test_number_case);
	g_test_add_func("/number/parse", test_number_parse);
	g_test_add_func("/number/threads", test_number_threads);
	return g_test_run();
}
