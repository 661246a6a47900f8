/* outfile.h - output files that appear whole or not at all. */
#ifndef CCA_OUTFILE_H
#define CCA_OUTFILE_H

#include <glib.h>
#include <stdio.h>

G_BEGIN_DECLS

/* Opens PATH for writing.  A regular file or a new path (after following
 * symbolic links to their final target) is written as TARGET.XXXXXX beside
 * it, *TMP receiving that name, and renamed over it by
 * cca_outfile_close(); the file keeps an existing file's mode, or gets
 * 0666 less the umask.  A character device, a FIFO or "-" (standard
 * output) is written in place and *TMP is NULL.  Returns NULL with ERROR
 * ("PATH: ...") for an empty PATH, a directory or other kind of file, or
 * when it cannot be opened.  Until it is closed, the temporary file is
 * removed if SIGINT, SIGTERM or SIGHUP ends the process. */
FILE *cca_outfile_open(const char *path, char **tmp, GError **error);

/* Flushes and closes F and, when OK and TMP is not NULL, renames TMP over
 * the file it stands for; otherwise, or when a write, the close or the
 * rename fails (ERROR then set, "PATH: cannot write: ...", unless OK was
 * already FALSE), removes TMP so no partial output is left.  Frees TMP.
 * Returns whether PATH was written whole. */
gboolean cca_outfile_close(FILE *f, char *tmp, const char *path, gboolean ok, GError **error);

G_END_DECLS

#endif
