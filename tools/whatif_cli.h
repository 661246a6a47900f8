/* whatif_cli.h - what `ccasim sweep`, `fit` and `diff` share: the grid and the progress bar. */
#ifndef CCA_WHATIF_CLI_H
#define CCA_WHATIF_CLI_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "cli.h"
#include "snapshot.h"
#include "sweep.h"

/* Builds the sweep of device DEVICE of SNAP for command CMD, under the
 * --pytorch-version and cap of ARGS (checked by cca_cli_parse()): the recorded row, then the
 * rows of CONFIGS (NULL-terminated, may be NULL), the product of SETS, and
 * the default grid when DEFAULT_GRID.  Returns the exit status: 0 with
 * *OUT set, 2 after printing a usage error (a bad device, --config or
 * --set), 1 after printing an input error (a snapshot with no trace
 * entries among them). */
int cca_whatif_build_grid(const char *cmd, const CcaCliArgs *args, const CcaSnapshot *snap,
			  int device, const char *const *configs, const char *const *sets,
			  gboolean default_grid, CcaSweep **out);

/* A progress bar on stderr (for a terminal). */
typedef struct {
	const char *command;
	bool shown;
} CcaWhatifProgress;

/* CcaSweepProgress that redraws the bar: DATA is a CcaWhatifProgress. */
void cca_whatif_progress(void *data, guint done, guint total);

/* Erases the bar if it was drawn. */
void cca_whatif_progress_end(CcaWhatifProgress *progress);

#endif
