/* text.h - strings taken from a trace or the command line, made safe to
 * show: one line, printable, and of bounded length. */
#ifndef CCA_TEXT_H
#define CCA_TEXT_H

#include <glib.h>

G_BEGIN_DECLS

/* The longest display string cca_text_display() makes by default, in
 * bytes: enough for any real PYTORCH_CUDA_ALLOC_CONF or frame name. */
#define CCA_TEXT_DISPLAY_MAX 200

/* Returns a new string (g_free) that shows the LEN bytes at S (LEN < 0:
 * up to the first NUL; S NULL: "") on one terminal line: backslash,
 * control bytes (escape sequences included), DEL and bytes that are not
 * valid UTF-8 are written as \\, \n, \t, \r or \xNN; valid UTF-8 is kept.
 * When the result would be longer than MAX bytes (MAX >= 32) it is cut at
 * a character boundary and ends with "... (N bytes)", N being LEN.  Runs
 * in time linear in min(LEN, MAX). */
char *cca_text_display(const char *s, gssize len, gsize max);

/* Is [S, S + LEN) UTF-8 as Python's pickle reads a str (the "utf-8"
 * codec with "surrogatepass")?  Refuses what pickle.loads() refuses: a
 * byte that starts no sequence, a truncated sequence, an overlong form, a
 * code point past U+10FFFF.  Accepts NUL and the UTF-8 forms of
 * surrogates (U+D800..U+DFFF), which pickle.dumps() writes for a str that
 * holds them.  Every reader checks each string with it (doc/hardening.md),
 * so a string ccasim writes to a pickle always loads. */
gboolean cca_text_is_pickle_utf8(const char *s, gsize len);

/* The longest file name cca_text_path() shows whole, in bytes. */
#define CCA_TEXT_PATH_MAX 4096

/* Returns a new string (g_free): file name PATH as cca_text_display()
 * shows it, cut only past CCA_TEXT_PATH_MAX bytes.  Every file name that
 * reaches the terminal (report headers, errors) goes through it. */
char *cca_text_path(const char *path);

/* The width tables and prose are laid out for when COLUMNS is not set. */
#define CCA_TEXT_DEFAULT_COLUMNS 100

/* The narrowest and widest layout COLUMNS may ask for. */
#define CCA_TEXT_MIN_COLUMNS 40
#define CCA_TEXT_MAX_COLUMNS 10000

/* The width every table and paragraph is laid out for (explain, step,
 * sweep, fit, fleet merge...): the environment's COLUMNS, as terminals and
 * shells set it, held to [CCA_TEXT_MIN_COLUMNS, CCA_TEXT_MAX_COLUMNS];
 * CCA_TEXT_DEFAULT_COLUMNS when it is unset or no number (doc/ccasim.1,
 * ENVIRONMENT).  --wide lays out without a limit instead. */
guint cca_text_columns(void);

/* The width of the layout, as a call: CCA_TEXT_COLUMNS is read where a
 * table or paragraph is laid out. */
#define CCA_TEXT_COLUMNS (cca_text_columns())

/* Columns S takes on a terminal: its UTF-8 characters. */
guint cca_text_width(const char *s);

/* Returns a new string: S when it takes at most WIDTH columns (WIDTH >= 3),
 * else its first WIDTH - 3 characters and "...". */
char *cca_text_ellipsize(const char *s, guint width);

/* Returns a new string: S when it takes at most WIDTH columns (WIDTH >=
 * 3), else "..." and its last WIDTH - 3 characters (names, whose ends
 * tell them apart). */
char *cca_text_ellipsize_start(const char *s, guint width);

/* Returns a new string: S when it takes at most WIDTH columns, else its
 * first (WIDTH - 3) / 2 characters, "..." and its last ones, WIDTH in
 * all, so that settings differing at either end stay apart (WIDTH < 5:
 * cca_text_ellipsize()). */
char *cca_text_ellipsize_middle(const char *s, guint width);

/* Appends S to OUT padded with spaces to WIDTH columns, on the left when
 * RIGHT_ALIGN (numbers), else on the right; S wider than WIDTH is appended
 * whole. */
void cca_text_pad(GString *out, const char *s, guint width, gboolean right_align);

/* Appends TEXT (one paragraph: no newline inside) to OUT as lines of at
 * most WIDTH columns, broken at spaces, each ended by a newline; the
 * first line keeps TEXT's leading spaces, the others start with INDENT
 * spaces.  A number and its unit ("2.00 MiB", "12 bytes") count as one
 * word.  A word longer than a line stays whole on a line of its own (the
 * only way a line exceeds WIDTH). */
void cca_text_wrap(GString *out, const char *text, guint width, guint indent);

/* The width the text of explain, step, peak and diff is fitted to
 * (cca_text_fit()): G_MAXUINT (whole lines) with WIDE (--wide); else
 * cca_text_columns() when COLUMNS is set, else the terminal's width when
 * standard output is one, else G_MAXUINT: a report piped to a file or
 * another program keeps its lines whole unless COLUMNS asks otherwise. */
guint cca_text_fit_width(gboolean wide);

/* Appends TEXT (lines, each ended by a newline but maybe the last) to OUT
 * with every line wider than WIDTH columns wrapped by cca_text_wrap(), its
 * continuation lines indented two spaces past the line's own indent; lines
 * that fit are kept as they are (aligned columns too).  WIDTH G_MAXUINT
 * (--wide) appends TEXT unchanged.  The output of explain, step and peak
 * goes through it, so that they fit COLUMNS (cca_text_columns()). */
void cca_text_fit(GString *out, const char *text, guint width);

G_END_DECLS

#endif
