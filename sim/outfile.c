/* outfile.c - writing an output file under a temporary name and renaming
 * it into place, so that a failed run leaves no partial file behind. */
#include "config.h"

#include "outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <sys/stat.h>
#include <unistd.h>

FILE *
cca_outfile_open(const char *path, char **tmp, GError **error)
{
	*tmp = g_strdup_printf("%s.XXXXXX", path);
	int fd = g_mkstemp(*tmp);
	if (fd < 0) {
		int e = errno;
		g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(e), "%s: %s", path,
			    g_strerror(e));
		g_free(*tmp);
		*tmp = NULL;
		return NULL;
	}
	mode_t mask = umask(0);
	umask(mask);
	fchmod(fd, 0666 & ~mask); /* mkstemp's 0600 would stick to the result */
	FILE *f = fdopen(fd, "wb");
	if (!f) {
		int e = errno;
		close(fd);
		g_unlink(*tmp);
		g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(e), "%s: %s", path,
			    g_strerror(e));
		g_free(*tmp);
		*tmp = NULL;
	}
	return f;
}

gboolean
cca_outfile_close(FILE *f, char *tmp, const char *path, gboolean ok, GError **error)
{
	if (fclose(f) != 0 && ok) {
		int e = errno;
		g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(e), "%s: %s", path,
			    g_strerror(e));
		ok = FALSE;
	}
	if (ok && g_rename(tmp, path) != 0) {
		int e = errno;
		g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(e), "%s: %s", path,
			    g_strerror(e));
		ok = FALSE;
	}
	if (!ok)
		g_unlink(tmp);
	g_free(tmp);
	return ok;
}
