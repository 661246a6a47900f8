/* viewargs.h - the checks behind the shared options (cli.c declares and
 * parses them) and the loading that every replaying command shares. */
#ifndef CCA_VIEWARGS_H
#define CCA_VIEWARGS_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "cli.h"
#include "replay.h"
#include "settings.h"
#include "snapshot.h"

/* The value of an integer option that was not given (no option takes it:
 * every one is checked by cca_view_check_int() with a minimum above it). */
#define CCA_VIEW_UNSET G_MININT

/* Loads PATH for a command that replays, with the shared options ARGS
 * parsed and checked by cca_cli_parse(): fills OPT for device
 * ARGS->device (0 when it is -1, every device) with the limits, version,
 * what-if and --keep-going of ARGS, and parses every --config into
 * ARGS->settings with the trace's PyTorch rules.  Prints one line "ccasim
 * CMD: ..." to stderr and returns NULL on error, with *STATUS 2 for a
 * usage error and 1 for bad input. */
CcaSnapshot *cca_view_args_load(CcaCliArgs *args, const char *cmd, const char *path,
				CcaReplayOptions *opt, int *status);

/* Checks integer option OPTION (e.g. "--device") of command CMD: VALUE
 * must be in [MIN, MAX] (MAX G_MAXINT or more: no upper bound to name).  Prints one line
 * "ccasim CMD: OPTION: must be ..., got VALUE" and returns FALSE when it
 * is not.  Every integer option of every command is checked here. */
gboolean cca_view_check_int(const char *cmd, const char *option, gint64 value, gint64 min,
			    gint64 max);

/* Parses TEXT, the value of a fraction option OPTION of command CMD, into
 * *FRACTION: a finite number in (0, 1] ("nan", "inf", 0 and negative
 * numbers are refused).  TEXT NULL (option absent) sets *FRACTION to 0,
 * which means no cap.  Prints one line "ccasim CMD: OPTION: ..." and
 * returns FALSE on a usage error. */
gboolean cca_view_parse_fraction(const char *cmd, const char *option, const char *text,
				 double *fraction);

/* Checks and converts the limits every replaying command takes:
 * MEMORY_FRACTION (--memory-fraction text, NULL when absent: see
 * cca_view_parse_fraction(), stored in *FRACTION), DEVICE_MEMORY
 * (--device-memory text, NULL when absent: a size above 0, stored in
 * *BYTES with *CAPACITY_SET) and PYTORCH_VERSION (--pytorch-version text,
 * NULL when absent: stored in *VERSION).  Prints one line "ccasim CMD:
 * ..." and returns FALSE on a usage error. */
gboolean cca_view_parse_limits(const char *cmd, const char *memory_fraction, double *fraction,
			       const char *device_memory, const char *pytorch_version,
			       uint64_t *bytes, bool *capacity_set, uint32_t *version);

/* Checks that SNAP (loaded from PATH) has a trace for device DEVICE (>= 0)
 * to replay.  A snapshot without trace entries (segments only: recorded
 * without torch.cuda.memory._record_memory_history()) is bad input:
 * *STATUS 1; a device the trace lacks is a usage error: *STATUS 2.  Prints
 * one line "ccasim CMD: PATH: ..." and returns FALSE in either case. */
gboolean cca_view_check_device(const char *cmd, const CcaSnapshot *snap, const char *path,
			       int device, int *status);

/* The longest error message cca_view_print_error() shows, in bytes. */
#define CCA_VIEW_MESSAGE_MAX 1024

/* Prints ERROR as one line "ccasim CMD: MESSAGE" on stderr, MESSAGE made a
 * display string (cca_text_display(), at most CCA_VIEW_MESSAGE_MAX bytes):
 * messages quote trace strings and option values, which must neither
 * reach the terminal raw nor run for megabytes. */
void cca_view_print_error(const char *cmd, const GError *error);

/* A one-line description of the settings of a replay: "recorded settings
 * \"CONF\"" or "what-if \"CONF\"", plus the cap.  Free with g_free(). */
char *cca_view_settings_label(const CcaSnapshot *snap, const CcaReplayOptions *opt);

#endif
