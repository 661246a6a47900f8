/* table.h - aligned text tables that fit a terminal line: columns padded
 * to their widest cell, two spaces apart, and columns marked elastic cut
 * with "..." when the table is wider than the line. */
#ifndef CCA_TABLE_H
#define CCA_TABLE_H

#include <glib.h>

G_BEGIN_DECLS

/* Where an elastic column's cells lose their characters. */
typedef enum {
	CCA_TABLE_CUT_END,    /* "max_split_size_mb:1..." */
	CCA_TABLE_CUT_START,  /* "...rank03.pickle.xz": names, which give way last */
	CCA_TABLE_CUT_MIDDLE, /* "max_split_size_mb:256,...:0.6": both ends kept */
} CcaTableCut;

/* How a column is laid out. */
typedef struct {
	const char *head; /* the heading, on the table's first line */
	gboolean right;	  /* right-aligned (numbers) */
	gboolean elastic; /* gives way when the table is too wide */
	CcaTableCut cut;  /* where an elastic cut takes the characters */
	guint min;	  /* an elastic cut leaves at least this many (0: 12) */
	/* when set, makes a cell too wide for the column fit instead of CUT:
	 * returns a new string of at most WIDTH columns */
	char *(*shorten)(const char *cell, guint width);
} CcaTableColumn;

typedef struct CcaTable CcaTable;

/* Returns a new table (cca_table_free) of the N columns COLUMNS (copied;
 * the heads are copied too). */
CcaTable *cca_table_new(const CcaTableColumn *columns, guint n);

/* Adds a row: CELLS holds one string a column (NULL shows as empty); they
 * are copied. */
void cca_table_add(CcaTable *table, const char *const *cells);

/* Adds a line of its own between the rows (a heading for those below
 * it), wrapped to the table's width and not aligned to the columns. */
void cca_table_add_line(CcaTable *table, const char *text);

/* Appends the table to OUT, a line each for the heads and every row, each
 * line without trailing spaces.  When the table would be wider than WIDTH
 * columns, the widest elastic column is narrowed one column at a time
 * (never below its head, nor below its min), CCA_TABLE_CUT_START columns
 * only once the others are at their least, until it fits or none can
 * give way; its cut cells show "..." where their characters went (or are
 * what its shorten makes of them).  WIDTH G_MAXUINT never cuts (--wide).
 * Returns the columns whose cells were cut, bit C for column C (C < 32). */
guint cca_table_print(const CcaTable *table, GString *out, guint width);

/* Frees TABLE (NULL is ignored). */
void cca_table_free(CcaTable *table);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(CcaTable, cca_table_free)

G_END_DECLS

#endif
