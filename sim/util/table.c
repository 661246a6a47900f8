/* table.c - aligned text tables cut to a terminal's width (see table.h). */
#include "table.h"

#include "text.h"

#include <string.h>

struct CcaTable {
	CcaTableColumn *columns; /* heads owned */
	guint n;
	GPtrArray *rows; /* char** of n cells, g_strfreev; or of 1, a line */
	GArray *is_line; /* gboolean a row: the row is a line of its own */
};

CcaTable *
cca_table_new(const CcaTableColumn *columns, guint n)
{
	CcaTable *t = g_new0(CcaTable, 1);
	t->columns = g_new(CcaTableColumn, n);
	t->n = n;
	for (guint c = 0; c < n; c++) {
		t->columns[c] = columns[c];
		t->columns[c].head = g_strdup(columns[c].head ? columns[c].head : "");
	}
	t->rows = g_ptr_array_new_with_free_func((GDestroyNotify)g_strfreev);
	t->is_line = g_array_new(FALSE, FALSE, sizeof(gboolean));
	return t;
}

void
cca_table_add(CcaTable *table, const char *const *cells)
{
	char **row = g_new0(char *, table->n + 1); /* NULL-terminated */
	for (guint c = 0; c < table->n; c++)
		row[c] = g_strdup(cells[c] ? cells[c] : "");
	g_ptr_array_add(table->rows, row);
	gboolean no = FALSE;
	g_array_append_val(table->is_line, no);
}

void
cca_table_add_line(CcaTable *table, const char *text)
{
	char **row = g_new0(char *, 2);
	row[0] = g_strdup(text);
	g_ptr_array_add(table->rows, row);
	gboolean yes = TRUE;
	g_array_append_val(table->is_line, yes);
}

/* CELL cut to WIDTH columns as COL says. */
static char *
cut_cell(const CcaTableColumn *col, const char *cell, guint width)
{
	if (col->shorten && cca_text_width(cell) > width)
		return col->shorten(cell, width);
	switch (col->cut) {
	case CCA_TABLE_CUT_START:
		return cca_text_ellipsize_start(cell, width);
	case CCA_TABLE_CUT_MIDDLE:
		return cca_text_ellipsize_middle(cell, width);
	default:
		return cca_text_ellipsize(cell, width);
	}
}

/* Appends one line: CELLS padded to WIDTHS, cut to them where CUT. */
static void
table_line(const CcaTable *t, char *const *cells, const guint *widths, const gboolean *cut,
	   GString *out)
{
	g_autoptr(GString) l = g_string_new(NULL);
	for (guint c = 0; c < t->n; c++) {
		const CcaTableColumn *col = &t->columns[c];
		g_autofree char *shown =
			cut[c] ? cut_cell(col, cells[c], widths[c]) : g_strdup(cells[c]);
		if (c)
			g_string_append(l, "  ");
		cca_text_pad(l, shown, widths[c], col->right);
	}
	g_strchomp(l->str);
	g_string_append_printf(out, "%s\n", l->str);
}

guint
cca_table_print(const CcaTable *table, GString *out, guint width)
{
	const CcaTable *t = table;
	g_autofree guint *widths = g_new0(guint, t->n);
	g_autofree guint *floor = g_new0(guint, t->n);
	g_autofree gboolean *cut = g_new0(gboolean, t->n);
	g_autofree char **heads = g_new0(char *, t->n + 1);
	guint total = t->n ? 2 * (t->n - 1) : 0;
	for (guint c = 0; c < t->n; c++) {
		heads[c] = (char *)t->columns[c].head;
		widths[c] = cca_text_width(heads[c]);
		floor[c] = MAX(widths[c], t->columns[c].min ? t->columns[c].min : 12);
		for (guint r = 0; r < t->rows->len; r++) {
			char **row = g_ptr_array_index(t->rows, r);
			if (!g_array_index(t->is_line, gboolean, r))
				widths[c] = MAX(widths[c], cca_text_width(row[c]));
		}
		total += widths[c];
	}
	while (total > width) {
		/* names (cut at the start) give way last: they tell the rows
		 * apart */
		guint widest = t->n;
		for (int names = 0; names < 2 && widest == t->n; names++)
			for (guint c = 0; c < t->n; c++)
				if (t->columns[c].elastic &&
				    (t->columns[c].cut == CCA_TABLE_CUT_START) == names &&
				    widths[c] > floor[c] &&
				    (widest == t->n || widths[c] > widths[widest]))
					widest = c;
		if (widest == t->n)
			break;
		widths[widest]--;
		cut[widest] = TRUE;
		total--;
	}
	table_line(t, heads, widths, cut, out);
	guint cut_columns = 0;
	for (guint r = 0; r < t->rows->len; r++) {
		char **row = g_ptr_array_index(t->rows, r);
		if (g_array_index(t->is_line, gboolean, r)) {
			cca_text_wrap(out, row[0], width, 2);
			continue;
		}
		table_line(t, row, widths, cut, out);
		for (guint c = 0; c < t->n && c < 32; c++)
			if (cut[c] && cca_text_width(row[c]) > widths[c])
				cut_columns |= 1u << c;
	}
	return cut_columns;
}

void
cca_table_free(CcaTable *table)
{
	if (!table)
		return;
	for (guint c = 0; c < table->n; c++)
		g_free((char *)table->columns[c].head);
	g_free(table->columns);
	g_ptr_array_unref(table->rows);
	g_array_unref(table->is_line);
	g_free(table);
}
