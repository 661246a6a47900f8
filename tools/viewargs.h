/* viewargs.h - the replay options that plot, explain, step and export
 * share (--config, --memory-fraction, --device-memory, --device,
 * --pytorch-version, --keep-going), parsed once for all four. */
#ifndef CCA_VIEWARGS_H
#define CCA_VIEWARGS_H

#include <glib.h>

#include "engine.h"
#include "settings.h"
#include "snapshot.h"

/* The shared options as parsed; settings[i] belongs to configs[i]. */
typedef struct {
	char **configs; /* --config (repeatable where allowed), NULL-terminated */
	double memory_fraction;
	char *device_memory;
	int device;
	char *pytorch_version;
	gboolean keep_going;
	/* filled by cca_view_args_load() */
	guint n_settings;
	CcaSettings *settings;
} CcaViewArgs;

/* Adds the shared options to CTX's main group, writing into ARGS (which
 * must outlive CTX).  MANY_CONFIGS: --config may repeat (plot overlays
 * what-ifs); otherwise one is allowed. */
void cca_view_args_add(GOptionContext *ctx, CcaViewArgs *args, gboolean many_configs);

/* Checks the parsed options, loads PATH and fills OPT for device
 * ARGS->device (0 when unset) with the recorded settings; every --config
 * is parsed into ARGS->settings with the trace's PyTorch rules.  Prints
 * one line "ccasim CMD: ..." to stderr and returns NULL on error, with
 * *STATUS 2 for a usage error and 1 for bad input. */
CcaSnapshot *cca_view_args_load(CcaViewArgs *args, const char *cmd, const char *path,
				CcaReplayOptions *opt, int *status);

/* Frees what ARGS holds. */
void cca_view_args_clear(CcaViewArgs *args);

/* A one-line description of the settings of a replay: "recorded settings
 * \"CONF\"" or "what-if \"CONF\"", plus the cap.  Free with g_free(). */
char *cca_view_settings_label(const CcaSnapshot *snap, const CcaReplayOptions *opt);

#endif
