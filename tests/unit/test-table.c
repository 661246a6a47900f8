/* test-table.c - aligned tables cut to a terminal's width
 * (sim/util/table.c).
 *
 * A table of layouts: the same two rows printed at several widths, and
 * the exact lines a terminal would receive. */
#include "config.h"

#include <glib.h>

#include "table.h"
#include "testutil.h"

static const CcaTableColumn columns[] = {
	{"job", .elastic = TRUE, .cut = CCA_TABLE_CUT_START},
	{"setting", .elastic = TRUE, .cut = CCA_TABLE_CUT_MIDDLE, .min = 8},
	{"peak", .right = TRUE},
};

static const char *const rows[][3] = {
	{"/data/runs/rank00.pickle", "expandable_segments:True", "11.38 GiB"},
	{"b.pickle", "", "884.00 MiB"},
};

typedef struct {
	const char *name;
	guint width;
	const char *out;
} TableCase;

static const TableCase table_cases[] = {
	/* wide enough: padded to the widest cell, no trailing spaces */
	{"fits", G_MAXUINT,
	 "job                       setting                         peak\n"
	 "/data/runs/rank00.pickle  expandable_segments:True   11.38 GiB\n"
	 "b.pickle                                            884.00 MiB\n"},
	/* the setting gives way first, cut in its middle: 24 + 2 + 12 + 2 + 10 */
	{"setting-cut", 50,
	 "job                       setting             peak\n"
	 "/data/runs/rank00.pickle  expa...:True   11.38 GiB\n"
	 "b.pickle                                884.00 MiB\n"},
	/* the setting at its min (8), then the name, cut at its front */
	{"name-cut-last", 36,
	 "job             setting         peak\n"
	 "...nk00.pickle  ex...rue   11.38 GiB\n"
	 "b.pickle                  884.00 MiB\n"},
	/* no column gives way below its min (the name's: 12): wider than asked */
	{"floor", 10,
	 "job           setting         peak\n"
	 "...00.pickle  ex...rue   11.38 GiB\n"
	 "b.pickle                884.00 MiB\n"},
};

static void
test_table_case(gconstpointer data)
{
	const TableCase *c = data;
	g_autoptr(CcaTable) t = cca_table_new(columns, G_N_ELEMENTS(columns));
	for (guint r = 0; r < G_N_ELEMENTS(rows); r++)
		cca_table_add(t, rows[r]);
	g_autoptr(GString) out = g_string_new(NULL);
	cca_table_print(t, out, c->width);
	g_assert_cmpstr(out->str, ==, c->out);
}

/* A column cut at its end (the default) keeps its first characters. */
static void
test_table_cut_end(void)
{
	static const CcaTableColumn one[] = {{"setting", .elastic = TRUE}};
	g_autoptr(CcaTable) t = cca_table_new(one, 1);
	cca_table_add(t, (const char *[]){"max_split_size_mb:128,expandable_segments:True"});
	g_autoptr(GString) out = g_string_new(NULL);
	cca_table_print(t, out, 20);
	g_assert_cmpstr(out->str, ==, "setting\nmax_split_size_mb...\n");
}

/* A column's shorten makes its cells fit instead of a cut, and the print
 * says which columns were cut. */
static char *
first_letters(const char *cell, guint width)
{
	return g_strndup(cell, width);
}

static void
test_table_shorten(void)
{
	static const CcaTableColumn two[] = {
		{"name"},
		{"setting", .elastic = TRUE, .min = 6, .shorten = first_letters},
	};
	g_autoptr(CcaTable) t = cca_table_new(two, 2);
	cca_table_add(t, (const char *[]){"a", "abcdefghij"});
	cca_table_add(t, (const char *[]){"b", "xyz"});
	g_autoptr(GString) out = g_string_new(NULL);
	g_assert_cmpuint(cca_table_print(t, out, 12), ==, 1u << 1);
	g_assert_cmpstr(out->str, ==, "name  setting\na     abcdefg\nb     xyz\n");
	g_string_truncate(out, 0);
	g_assert_cmpuint(cca_table_print(t, out, G_MAXUINT), ==, 0);
}

/* A NULL cell prints as an empty one; a table without rows prints its
 * heads. */
static void
test_table_null_and_empty(void)
{
	g_autoptr(CcaTable) t = cca_table_new(columns, G_N_ELEMENTS(columns));
	g_autoptr(GString) out = g_string_new(NULL);
	cca_table_print(t, out, 100);
	g_assert_cmpstr(out->str, ==, "job  setting  peak\n");
	cca_table_add(t, (const char *[]){"a", NULL, "1"});
	g_string_truncate(out, 0);
	cca_table_print(t, out, 100);
	g_assert_cmpstr(out->str, ==, "job  setting  peak\na                1\n");
}

int
main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	CCA_TEST_ADD_ROWS("/table", table_cases, name, test_table_case);
	g_test_add_func("/table/cut-end", test_table_cut_end);
	g_test_add_func("/table/shorten", test_table_shorten);
	g_test_add_func("/table/null-and-empty", test_table_null_and_empty);
	return g_test_run();
}
