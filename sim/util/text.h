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

G_END_DECLS

#endif
