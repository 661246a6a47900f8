/* viewargs.h - the replay options that replay, plot, explain, step and
 * export share (--config, --memory-fraction, --device-memory, --device,
 * --pytorch-version, --keep-going, and for replay --whatif and
 * --address-model), parsed and checked once for all of them. */
#ifndef CCA_VIEWARGS_H
#define CCA_VIEWARGS_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "engine.h"
#include "settings.h"
#include "snapshot.h"

/* The value of an integer option that was not given (no option takes it:
 * every one is checked by cca_view_check_int() with a minimum above it). */
#define CCA_VIEW_UNSET G_MININT

/* The shared options as parsed; settings[i] belongs to configs[i]. */
typedef struct {
	char **configs;	       /* --config (repeatable where allowed), NULL-terminated */
	char *memory_fraction; /* --memory-fraction text, NULL when absent */
	char *device_memory;
	int device; /* CCA_VIEW_UNSET when absent; see cca_view_args_load() */
	char *pytorch_version;
	gboolean keep_going;
	gboolean whatif;     /* CCA_VIEW_ARGS_WHATIF */
	char *address_model; /* CCA_VIEW_ARGS_WHATIF */
	guint flags;	     /* CcaViewArgsFlags given to cca_view_args_add() */
	/* filled by cca_view_args_load() */
	guint n_settings;
	CcaSettings *settings;
} CcaViewArgs;

/* What a command takes besides the common options. */
typedef enum {
	CCA_VIEW_ARGS_MANY_CONFIGS = 1 << 0, /* --config may repeat (plot overlays what-ifs) */
	CCA_VIEW_ARGS_ALL_DEVICES = 1 << 1,  /* without --device, every device */
	CCA_VIEW_ARGS_WHATIF = 1 << 2,	     /* --whatif and --address-model */
} CcaViewArgsFlags;

/* Adds the shared options to CTX's main group, writing into ARGS (which
 * must outlive CTX).  FLAGS: CcaViewArgsFlags; without MANY_CONFIGS one
 * --config is allowed. */
void cca_view_args_add(GOptionContext *ctx, CcaViewArgs *args, guint flags);

/* Checks the parsed options, loads PATH and fills OPT for device
 * ARGS->device (0 when unset; ARGS->device becomes -1 with ALL_DEVICES) with
 * the recorded settings; every --config is parsed into ARGS->settings with
 * the trace's PyTorch rules.  Prints
 * one line "ccasim CMD: ..." to stderr and returns NULL on error, with
 * *STATUS 2 for a usage error and 1 for bad input. */
CcaSnapshot *cca_view_args_load(CcaViewArgs *args, const char *cmd, const char *path,
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

/* Applies --whatif (WHATIF) and --address-model (ADDRESS_MODEL text, or
 * NULL) to OPT: either makes the replay a what-if.  Prints one line
 * "ccasim CMD: ..." and returns FALSE for an unknown model. */
gboolean cca_view_parse_whatif(const char *cmd, gboolean whatif, const char *address_model,
			       CcaReplayOptions *opt);

/* The longest error message cca_view_print_error() shows, in bytes. */
#define CCA_VIEW_MESSAGE_MAX 1024

/* Prints ERROR as one line "ccasim CMD: MESSAGE" on stderr, MESSAGE made a
 * display string (cca_text_display(), at most CCA_VIEW_MESSAGE_MAX bytes):
 * messages quote trace strings and option values, which must neither
 * reach the terminal raw nor run for megabytes. */
void cca_view_print_error(const char *cmd, const GError *error);

/* Frees what ARGS holds. */
void cca_view_args_clear(CcaViewArgs *args);

/* A one-line description of the settings of a replay: "recorded settings
 * \"CONF\"" or "what-if \"CONF\"", plus the cap.  Free with g_free(). */
char *cca_view_settings_label(const CcaSnapshot *snap, const CcaReplayOptions *opt);

#endif
