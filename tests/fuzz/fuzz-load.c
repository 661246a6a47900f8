/* fuzz-load.c - runs fuzz bytes through the snapshot loader from a file.
 *
 * cca_snapshot_load() takes a path (it maps or decompresses the file
 * itself), so the bytes go into a memfd and the loader opens
 * /proc/self/fd/N: the real code path, without touching the disk.  Where
 * memfd_create() is missing the bytes go to a temporary file instead.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1 /* memfd_create() */
#endif
#include "config.h"

#include <errno.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "replay.h"
#include "fuzz.h"
#include "settings.h"
#include "snapshot.h"
#include "event_cursor.h"
#include "snapshot_load.h"

static gboolean
fuzz_write_all(int fd, const uint8_t *data, size_t size)
{
	while (size > 0) {
		ssize_t n = write(fd, data, size);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return FALSE;
		data += n;
		size -= (size_t)n;
	}
	return TRUE;
}

/* Writes DATA to a fresh file and returns an open descriptor on it with
 * its path in *PATH (free with g_free()), or -1. */
static int
fuzz_file_new(const uint8_t *data, size_t size, char **path)
{
	int fd = -1;

#ifdef MFD_CLOEXEC
	fd = memfd_create("ccasim-fuzz", MFD_CLOEXEC);
	if (fd >= 0)
		*path = g_strdup_printf("/proc/self/fd/%d", fd);
#endif
	if (fd < 0) {
		fd = g_file_open_tmp("ccasim-fuzz-XXXXXX", path, NULL);
		if (fd < 0)
			return -1;
	}
	if (!fuzz_write_all(fd, data, size)) {
		close(fd);
		g_free(*path);
		*path = NULL;
		return -1;
	}
	return fd;
}

static void
fuzz_walk(const CcaSnapshot *snap)
{
	for (int device = 0; device < snap->n_devices; device++) {
		g_autoptr(CcaEventCursor) cursor = cca_event_cursor_new(snap, device);
		g_autoptr(GError) error = NULL;
		CcaEvent event;
		uint64_t n = 0;

		if (cursor == NULL)
			continue;
		while (cca_event_cursor_next(cursor, &event, &error)) {
			/* Touch what a replay reads, so that a reader handing out
			 * garbage ids shows up under the sanitizers. */
			(void)cca_snapshot_string(snap, event.compile_context);
			(void)cca_snapshot_string(snap, event.user_metadata);
			if (event.action >= CCA_ACTION_COUNT)
				abort();
			n++;
		}
		if (error == NULL && n != snap->n_events[device])
			abort(); /* the cursor and the count disagree */
	}

	/* What `info` and `replay` say of keys of later releases: every
	 * unknown name a string, the note consistent with the release. */
	const CcaSnapshotNewer *newer = &snap->newer;
	if (newer->n_unknown > CCA_NEWER_MAX_NAMES)
		abort();
	for (uint32_t i = 0; i < newer->n_unknown; i++)
		if (newer->unknown_name[i] == NULL || strlen(newer->unknown_name[i]) > 64)
			abort();
	g_autofree char *note = cca_snapshot_newer_note(snap, 211);
	if ((note != NULL) != (cca_snapshot_format_release(snap, NULL) > 211))
		abort();

	CcaSettings settings;
	g_autoptr(GError) error = NULL;
	cca_settings_init(&settings);
	(void)cca_settings_from_recorded(&settings, &snap->settings, &error);
	cca_settings_clear(&settings);
}

/* Loads SIZE bytes at DATA from an in-memory file and hands the snapshot
 * to USE; a load that fails must say why. */
static void
fuzz_with_snapshot(const uint8_t *data, size_t size, void (*use)(const CcaSnapshot *snap))
{
	g_autofree char *path = NULL;
	int fd = fuzz_file_new(data, size, &path);
	if (fd < 0)
		return;

	g_autoptr(GError) error = NULL;
	CcaSnapshot *snap = cca_snapshot_load(path, &error);
	if (snap != NULL) {
		use(snap);
		cca_snapshot_free(snap);
	} else if (error == NULL) {
		abort(); /* NULL without an error breaks the loader's contract */
	}

	if (!g_str_has_prefix(path, "/proc/self/fd/"))
		g_unlink(path);
	close(fd);
}

void
cca_fuzz_load_snapshot(const uint8_t *data, size_t size)
{
	fuzz_with_snapshot(data, size, fuzz_walk);
}

/* Replays every device of SNAP three ways (see fuzz.h). */
static void
fuzz_replay(const CcaSnapshot *snap)
{
	for (int device = 0; device < snap->n_devices; device++) {
		for (int mode = 0; mode < 3; mode++) {
			CcaReplayOptions options;
			CcaReplayResult result = {0};
			g_autoptr(GError) error = NULL;

			cca_replay_options_init(&options);
			options.device = device;
			options.keep_going = true;
			if (mode == 0) {
				options.check = true;
				options.check_invariants = true;
			} else {
				options.force_whatif = true;
			}
			if (mode == 2) {
				options.device_memory = (uint64_t)1 << 30;
				options.capacity_set = true;
			}
			if (!cca_replay_run(snap, &options, &result, &error) && error == NULL)
				abort(); /* FALSE without an error */
			cca_replay_result_clear(&result);
		}
	}
}

/* Prints a GLib message and, for a warning or worse, aborts: GLib's own
 * fatal path ends in a breakpoint trap, which libFuzzer does not catch,
 * so the input would not be saved. */
static GLogWriterOutput
fuzz_log_writer(GLogLevelFlags level, const GLogField *fields, gsize n_fields, gpointer data)
{
	(void)data;
	g_log_writer_standard_streams(level, fields, n_fields, NULL);
	if (level & (G_LOG_LEVEL_ERROR | G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_WARNING))
		abort();
	return G_LOG_WRITER_HANDLED;
}

void
cca_fuzz_replay_snapshot(const uint8_t *data, size_t size)
{
	/* Anything the model would warn about is reachable from input. */
	static gsize writer_set;
	if (g_once_init_enter(&writer_set)) {
		g_log_set_writer_func(fuzz_log_writer, NULL, NULL);
		g_once_init_leave(&writer_set, 1);
	}
	fuzz_with_snapshot(data, size, fuzz_replay);
}
