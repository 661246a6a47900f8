/* whatif_cli.h - option handling shared by `ccasim sweep`, `fit` and `diff`. */
#ifndef CCA_WHATIF_CLI_H
#define CCA_WHATIF_CLI_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "snapshot.h"
#include "sweep.h"

/* The options the what-if commands share, as parsed, and what
 * cca_whatif_common_check() derives from them. */
typedef struct {
	const char *command;		  /* "sweep", "fit", "diff": prefixes messages */
	const char *memory_fraction_text; /* --memory-fraction text, or NULL */
	const char *device_memory;	  /* --device-memory text, or NULL */
	const char *pytorch_version;	  /* --pytorch-version text, or NULL */
	int device;			  /* --device */
	int jobs;			  /* -j */
	/* derived */
	double memory_fraction;	      /* 0: no cap */
	uint64_t device_memory_bytes; /* 0: the H200's */
	bool capacity_set;	      /* --device-memory given */
	uint32_t version;	      /* 0: guess from the trace */
} CcaWhatifCommon;

/* Checks and converts COMMON's options; on a usage error prints one line
 * "ccasim COMMAND: ..." on stderr and returns FALSE (exit status 2). */
gboolean cca_whatif_common_check(CcaWhatifCommon *common);

/* Builds the sweep of device DEVICE of SNAP: the recorded row, then the
 * rows of CONFIGS (NULL-terminated, may be NULL), the product of SETS, and
 * the default grid when DEFAULT_GRID.  Returns the exit status: 0 with
 * *OUT set, 2 after printing a usage error (a bad device, --config or
 * --set), 1 after printing an input error (a snapshot with no trace
 * entries among them). */
int cca_whatif_build_grid(const CcaWhatifCommon *common, const CcaSnapshot *snap, int device,
			  const char *const *configs, const char *const *sets,
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
