/* outfile.c - opening an output path the way its kind of file wants.
 *
 * A regular file (or a path that does not exist yet) is written under a
 * temporary name beside it and renamed into place, so that a failed run
 * leaves no partial file behind and an existing file is replaced whole.  A
 * symbolic link is followed: its final target is what is written, by the
 * same rules.  A character device (/dev/null, a terminal), a FIFO or "-"
 * (standard output) is written in place: it cannot be replaced, and must
 * not be.  Anything else (a directory, a socket, a block device) is
 * refused.
 *
 * The temporary files are registered here; SIGINT, SIGTERM and SIGHUP
 * remove them (the handler only calls unlink, sigaction and raise, all
 * async-signal-safe) before the signal takes its default course.
 */
#include "config.h"

#include "outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Temporary files the signal handler removes: at most this many at once
 * (one per output being written; more are written, just not cleaned up
 * on a signal). */
#define OUTFILE_SLOTS 16
#define OUTFILE_MAX_LINKS 40

static char *outfile_slot_name[OUTFILE_SLOTS];
static volatile sig_atomic_t outfile_slot_used[OUTFILE_SLOTS];
static gboolean outfile_handlers_installed;
static const int outfile_signals[] = {SIGINT, SIGTERM, SIGHUP};

static void
outfile_on_signal(int sig)
{
	for (int i = 0; i < OUTFILE_SLOTS; i++)
		if (outfile_slot_used[i])
			unlink(outfile_slot_name[i]);
	struct sigaction dfl;
	memset(&dfl, 0, sizeof dfl);
	dfl.sa_handler = SIG_DFL;
	sigemptyset(&dfl.sa_mask);
	sigaction(sig, &dfl, NULL);
	raise(sig); /* blocked until the handler returns, then fatal */
}

/* Installs the handler for each signal that is not ignored (under nohup,
 * SIGHUP stays ignored). */
static void
outfile_install_handlers(void)
{
	if (outfile_handlers_installed)
		return;
	outfile_handlers_installed = TRUE;
	for (size_t i = 0; i < G_N_ELEMENTS(outfile_signals); i++) {
		struct sigaction old, sa;
		if (sigaction(outfile_signals[i], NULL, &old) != 0 || old.sa_handler == SIG_IGN)
			continue;
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = outfile_on_signal;
		sigemptyset(&sa.sa_mask);
		for (size_t j = 0; j < G_N_ELEMENTS(outfile_signals); j++)
			sigaddset(&sa.sa_mask, outfile_signals[j]);
		sigaction(outfile_signals[i], &sa, NULL);
	}
}

/* Remembers TMP for the signal handler. */
static void
outfile_register(const char *tmp)
{
	outfile_install_handlers();
	for (int i = 0; i < OUTFILE_SLOTS; i++)
		if (!outfile_slot_used[i]) {
			g_free(outfile_slot_name[i]);
			outfile_slot_name[i] = g_strdup(tmp);
			outfile_slot_used[i] = 1;
			return;
		}
}

/* Forgets TMP (after it was renamed or removed). */
static void
outfile_unregister(const char *tmp)
{
	for (int i = 0; i < OUTFILE_SLOTS; i++)
		if (outfile_slot_used[i] && strcmp(outfile_slot_name[i], tmp) == 0) {
			outfile_slot_used[i] = 0;
			return;
		}
}

static gboolean
outfile_errno(GError **error, int e, const char *path, const char *what)
{
	g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(e), "%s: %s%s%s", path,
		    what ? what : "", what ? ": " : "", g_strerror(e));
	return FALSE;
}

/* Follows PATH's symbolic links to the path that is really written;
 * NULL with ERROR for a loop or an unreadable link. */
static char *
outfile_resolve(const char *path, GError **error)
{
	char *p = g_strdup(path);
	for (int hops = 0;; hops++) {
		GStatBuf st;
		if (g_lstat(p, &st) != 0 || !S_ISLNK(st.st_mode))
			return p;
		if (hops == OUTFILE_MAX_LINKS) {
			outfile_errno(error, ELOOP, path, NULL);
			g_free(p);
			return NULL;
		}
		GError *local = NULL;
		char *target = g_file_read_link(p, &local);
		if (target == NULL) {
			g_set_error(error, G_FILE_ERROR, local->code, "%s: %s", path,
				    local->message);
			g_error_free(local);
			g_free(p);
			return NULL;
		}
		if (!g_path_is_absolute(target)) {
			char *dir = g_path_get_dirname(p);
			char *joined = g_build_filename(dir, target, NULL);
			g_free(dir);
			g_free(target);
			target = joined;
		}
		g_free(p);
		p = target;
	}
}

/* Opens the existing non-regular file PATH (a device or FIFO) in place. */
static FILE *
outfile_open_in_place(const char *path, GError **error)
{
	int fd = g_open(path, O_WRONLY | O_NOCTTY | O_CLOEXEC, 0);
	if (fd < 0) {
		outfile_errno(error, errno, path, NULL);
		return NULL;
	}
	FILE *f = fdopen(fd, "wb");
	if (f == NULL) {
		outfile_errno(error, errno, path, NULL);
		close(fd);
	}
	return f;
}

FILE *
cca_outfile_open(const char *path, char **tmp, GError **error)
{
	*tmp = NULL;
	if (path == NULL || *path == '\0') {
		g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_INVAL,
			    "empty output file name (use - for standard output)");
		return NULL;
	}
	if (strcmp(path, "-") == 0) {
		int fd = dup(STDOUT_FILENO);
		FILE *f = fd >= 0 ? fdopen(fd, "wb") : NULL;
		if (f == NULL) {
			outfile_errno(error, errno, "(standard output)", NULL);
			if (fd >= 0)
				close(fd);
		}
		return f;
	}
	char *real = outfile_resolve(path, error);
	if (real == NULL)
		return NULL;
	GStatBuf st;
	gboolean exists = g_stat(real, &st) == 0;
	if (exists && (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode))) {
		FILE *f = outfile_open_in_place(real, error);
		g_free(real);
		return f;
	}
	if (exists && !S_ISREG(st.st_mode)) {
		g_set_error(error, G_FILE_ERROR,
			    S_ISDIR(st.st_mode) ? G_FILE_ERROR_ISDIR : G_FILE_ERROR_INVAL,
			    "%s: %s, not a file that output can be written to", path,
			    S_ISDIR(st.st_mode) ? "is a directory" : "is a socket or block device");
		g_free(real);
		return NULL;
	}
	*tmp = g_strdup_printf("%s.XXXXXX", real);
	g_free(real);
	/* the signals wait while the file exists unregistered: one that came
	 * between its creation and its registration would leave it behind */
	outfile_install_handlers();
	sigset_t block, old;
	sigemptyset(&block);
	for (size_t i = 0; i < G_N_ELEMENTS(outfile_signals); i++)
		sigaddset(&block, outfile_signals[i]);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	int fd = g_mkstemp_full(*tmp, O_WRONLY | O_CLOEXEC, 0600);
	int create_errno = errno;
	if (fd >= 0)
		outfile_register(*tmp);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (fd < 0) {
		outfile_errno(error, create_errno, path,
			      "cannot create a temporary file beside it");
		g_clear_pointer(tmp, g_free);
		return NULL;
	}
	mode_t mode;
	if (exists) {
		mode = st.st_mode & 07777; /* a replaced file keeps its mode */
	} else {
		mode_t mask = umask(0);
		umask(mask);
		mode = 0666 & ~mask; /* what a plain fopen would give */
	}
	fchmod(fd, mode);
	FILE *f = fdopen(fd, "wb");
	if (!f) {
		int e = errno;
		close(fd);
		g_unlink(*tmp);
		outfile_unregister(*tmp);
		outfile_errno(error, e, path, NULL);
		g_clear_pointer(tmp, g_free);
	}
	return f;
}

gboolean
cca_outfile_close(FILE *f, char *tmp, const char *path, gboolean ok, GError **error)
{
	const char *name = path && strcmp(path, "-") == 0 ? "(standard output)" : path;
	if (fflush(f) != 0 && ok)
		ok = outfile_errno(error, errno, name, "cannot write");
	if (ferror(f) && ok) {
		/* stdio forgets why a write failed: one more byte, to a file
		 * that is abandoned anyway, finds out */
		clearerr(f);
		errno = 0;
		int e = fputc(0, f) == EOF || fflush(f) != 0 ? errno : 0;
		ok = outfile_errno(error, e ? e : EIO, name, "cannot write");
	}
	if (fclose(f) != 0 && ok)
		ok = outfile_errno(error, errno, name, "cannot write");
	if (tmp == NULL)
		return ok;
	/* rename() replaces the link's target: tmp lies beside it */
	char *real = g_strndup(tmp, strlen(tmp) - strlen(".XXXXXX"));
	if (ok && g_rename(tmp, real) != 0)
		ok = outfile_errno(error, errno, path, "cannot rename the temporary file");
	if (!ok)
		g_unlink(tmp);
	outfile_unregister(tmp);
	g_free(real);
	g_free(tmp);
	return ok;
}
