/* outfile.h - output files that appear whole or not at all. */
#ifndef CCA_OUTFILE_H
#define CCA_OUTFILE_H

#include <glib.h>
#include <stdio.h>

G_BEGIN_DECLS

/* Opens PATH.XXXXXX beside PATH for writing (mode 0666 less the umask, as
 * a plain fopen would give); *TMP receives its name.  Returns NULL with
 * ERROR ("PATH: ...") when it cannot be made. */
FILE *cca_outfile_open(const char *path, char **tmp, GError **error);

/* Closes F and, when OK, renames TMP over PATH; otherwise, or when that
 * fails (ERROR then set, unless OK was already FALSE), removes TMP so no
 * partial output is left.  Frees TMP.  Returns whether PATH was written. */
gboolean cca_outfile_close(FILE *f, char *tmp, const char *path, gboolean ok, GError **error);

G_END_DECLS

#endif
