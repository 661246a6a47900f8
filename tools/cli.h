/* cli.h - the command table's types and the one option parser of ccasim.
 *
 * Every command is declared once in the table of tools/ccasim.c: its
 * name, one-line summary, parameters and the shared option groups it
 * takes.  Each shared option is declared once, in cli.c, in a GLib
 * GOptionGroup; cca_cli_parse() builds a command's option context from
 * its own entries and its groups, parses, checks the shared values, and
 * is the one place a usage error is printed from (one line, exit 2).
 * What the command bodies share besides is here too: the checks behind
 * the options, loading a trace to replay, the what-if grid and the
 * progress bar.  Everything else a command does lives in sim/.
 */
#ifndef CCA_CLI_H
#define CCA_CLI_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "replay.h"
#include "simdevice.h"
#include "settings.h"
#include "size.h"
#include "snapshot.h"
#include "sweep.h"

G_BEGIN_DECLS

/* The shared option groups a command takes. */
typedef enum {
	CCA_CLI_INPUT = 1 << 0,		/* --max-input-size, --max-inflate-ratio */
	CCA_CLI_DEVICE = 1 << 1,	/* --device N: which device of the trace */
	CCA_CLI_LIMITS = 1 << 2,	/* --memory-fraction F, --recorded-memory-fraction F,
					   --device-memory BYTES */
	CCA_CLI_CONFIG = 1 << 3,	/* --config STRING, once */
	CCA_CLI_CONFIGS = 1 << 4,	/* --config STRING, repeatable */
	CCA_CLI_WHATIF = 1 << 5,	/* --whatif, --address-model MODEL */
	CCA_CLI_VERSION = 1 << 6,	/* --pytorch-version X.Y */
	CCA_CLI_JSON = 1 << 7,		/* --json */
	CCA_CLI_KEEP_GOING = 1 << 8,	/* --keep-going */
	CCA_CLI_JOBS = 1 << 9,		/* -j N, --no-progress */
	CCA_CLI_ALL_DEVICES = 1 << 10,	/* with DEVICE: no --device means every device */
	CCA_CLI_RECORDED_CAP = 1 << 11, /* --recorded-memory-fraction F alone (LIMITS has it) */
} CcaCliGroups;

/* The shared options as parsed, and what cca_cli_parse() derives. */
typedef struct {
	char **configs;		      /* --config, NULL-terminated, or NULL */
	char *memory_fraction_text;   /* --memory-fraction, or NULL */
	char *recorded_fraction_text; /* --recorded-memory-fraction, or NULL */
	char *device_memory_text;     /* --device-memory, or NULL */
	char *pytorch_version_text;   /* --pytorch-version, or NULL */
	char *address_model_text;     /* --address-model, or NULL */
	char *device_text;	      /* --device, or NULL */
	int device; /* --device; after parsing 0 when absent (-1 with ALL_DEVICES) */
	int jobs;   /* -j; 0: one thread per core */
	gboolean whatif, json, keep_going, no_progress;
	/* set by the command before cca_cli_load(): a ccasim trace's events
	 * are checked as they are replayed (cca_snapshot_load_streaming());
	 * the command calls cca_event_cursor_check() before it prints */
	gboolean streaming;
	/* --no-bounds of the commands that bound a what-if's figures (peak,
	 * view, explain, plot): CcaReplayOptions.no_bounds */
	gboolean no_bounds;
	/* derived */
	guint n_configs;
	double memory_fraction;		 /* 0: no cap */
	double recorded_memory_fraction; /* the recording's cap; 0: none given */
	uint64_t device_memory;		 /* 0: not given */
	bool capacity_set;		 /* --device-memory given */
	uint32_t pytorch_version;	 /* 0: guess from the trace */
	bool all_releases;		 /* --pytorch-version all (sweep only) */
	CcaAddressModel address_model;	 /* CCA_ADDRESS_DRIVER unless given */
	/* filled by cca_cli_load(): settings[i] is configs[i] parsed */
	CcaSettings *settings;
	guint n_settings;
} CcaCliArgs;

typedef struct CcaCliCommand CcaCliCommand;

/* One entry of a command table. */
struct CcaCliCommand {
	const char *name; /* as typed after "ccasim" ("replay", "gpu replay") */
	int (*run)(const CcaCliCommand *cmd, int argc, char **argv); /* argv[0]: the name */
	const char *summary;	 /* one line for `ccasim --help` */
	const char *params;	 /* the positional parameters for --help, e.g. "TRACE" */
	guint groups;		 /* CcaCliGroups */
	const char *config_help; /* --config's description when not the default, or NULL */
};

/* Runs the command of TABLE (N entries) named ARGV[0] with ARGC/ARGV;
 * PREFIX ("ccasim" or "ccasim gpu") names the caller in messages.  An
 * unknown name is a usage error.  Returns the exit status. */
int cca_cli_dispatch(const CcaCliCommand *table, gsize n, const char *prefix, int argc,
		     char **argv);

/* Parses ARGC and ARGV (in place) for CMD: its own ENTRIES (NULL-terminated; NULL for
 * none), the shared groups CMD->groups into ARGS (zeroed by the caller),
 * SUMMARY and DESCRIPTION (either NULL) for --help, which lists every
 * option.  Then checks the shared values (--device, the limits,
 * --pytorch-version, --address-model, one --config where only one is
 * taken, -j) into ARGS's derived fields.  Returns -1 to go on, 0 after
 * printing --help, or 2 after printing one line "ccasim CMD: ..." on
 * stderr. */
int cca_cli_parse(const CcaCliCommand *cmd, const GOptionEntry *entries, const char *summary,
		  const char *description, CcaCliArgs *args, int *argc, char ***argv);

/* Prints the usage error "ccasim CMD: MESSAGE" (one line) on stderr and
 * returns 2, the exit status of a usage error. */
int cca_cli_usage(const CcaCliCommand *cmd, const char *format, ...) G_GNUC_PRINTF(2, 3);

/* Frees what ARGS holds (NULL fields allowed) and zeroes it. */
void cca_cli_args_clear(CcaCliArgs *args);

/* Loads PATH for a command that replays, with the shared options ARGS
 * parsed and checked by cca_cli_parse(): fills OPT for device
 * ARGS->device (0 when it is -1, every device) with the limits, version,
 * what-if and --keep-going of ARGS, and parses every --config into
 * ARGS->settings with the trace's PyTorch rules.  Prints one line "ccasim
 * CMD: ..." to stderr and returns NULL on error, with *STATUS 2 for a
 * usage error and 1 for bad input. */
CcaSnapshot *cca_cli_load(CcaCliArgs *args, const char *cmd, const char *path,
			  CcaReplayOptions *opt, int *status);

/* Parses TEXT, the value of integer option OPTION (e.g. "--event") of
 * command CMD, into *VALUE: an optional '-' and decimal digits, within
 * [MIN, MAX] (as cca_cli_check_int() words it).  An option whose absence
 * means something is read as a string and parsed here, so that no value
 * a user can type stands for "not given".  TEXT NULL: TRUE, *VALUE left
 * as it is.  Prints one line and returns FALSE otherwise. */
gboolean cca_cli_parse_int(const char *cmd, const char *option, const char *text, gint64 min,
			   gint64 max, gint64 *value);

/* Parses TEXT, the value of --context of command CMD (the memory a GPU
 * holds outside the caching allocator), into *CONTEXT: a size as
 * cca_size_parse() reads it, under CCA_CLI_MAX_CONTEXT.  Prints one line
 * and returns FALSE otherwise. */
gboolean cca_cli_parse_context(const char *cmd, const char *text, uint64_t *context);

/* The largest --context: past every GPU's memory (doc/ccasim.1). */
#define CCA_CLI_MAX_CONTEXT CCA_TIB

/* Checks integer option OPTION (e.g. "--device") of command CMD: VALUE
 * must be in [MIN, MAX] (MAX G_MAXINT or more: no upper bound to name).  Prints one line
 * "ccasim CMD: OPTION: must be ..., got VALUE" and returns FALSE when it
 * is not.  Every integer option of every command is checked here. */
gboolean cca_cli_check_int(const char *cmd, const char *option, gint64 value, gint64 min,
			   gint64 max);

/* Parses TEXT, the value of a fraction option OPTION of command CMD, into
 * *FRACTION: a finite number in (0, 1] ("nan", "inf", 0 and negative
 * numbers are refused).  TEXT NULL (option absent) sets *FRACTION to 0,
 * which means no cap.  Prints one line "ccasim CMD: OPTION: ..." and
 * returns FALSE on a usage error. */
gboolean cca_cli_parse_fraction(const char *cmd, const char *option, const char *text,
				double *fraction);

/* Checks and converts the limits every replaying command takes:
 * MEMORY_FRACTION (--memory-fraction text, NULL when absent: see
 * cca_cli_parse_fraction(), stored in *FRACTION), DEVICE_MEMORY
 * (--device-memory text, NULL when absent: a size above 0, stored in
 * *BYTES with *CAPACITY_SET) and PYTORCH_VERSION (--pytorch-version text,
 * NULL when absent: stored in *VERSION).  Prints one line "ccasim CMD:
 * ..." and returns FALSE on a usage error. */
gboolean cca_cli_parse_limits(const char *cmd, const char *memory_fraction, double *fraction,
			      const char *device_memory, const char *pytorch_version,
			      uint64_t *bytes, bool *capacity_set, uint32_t *version);

/* Checks that SNAP (loaded from PATH) has a trace for device DEVICE (>= 0)
 * to replay.  A snapshot without trace entries (segments only: recorded
 * without torch.cuda.memory._record_memory_history()) is bad input:
 * *STATUS 1; a device the trace lacks is a usage error: *STATUS 2.  Prints
 * one line "ccasim CMD: PATH: ..." and returns FALSE in either case. */
gboolean cca_cli_check_device(const char *cmd, const CcaSnapshot *snap, const char *path,
			      int device, int *status);

/* The exit status of `ccasim replay` when the replayed run runs out of
 * memory (--oom-exit-status N asks for another, 0 for success; doc/ccasim.1,
 * EXIT STATUS): apart from 1 (bad input) and 2 (usage). */
#define CCA_CLI_OOM_STATUS 3

/* The longest error message cca_cli_print_error() shows, in bytes. */
#define CCA_CLI_MESSAGE_MAX 1024

/* Prints ERROR as one line "ccasim CMD: MESSAGE" on stderr, MESSAGE made a
 * display string (cca_text_display(), at most CCA_CLI_MESSAGE_MAX bytes):
 * messages quote trace strings and option values, which must neither
 * reach the terminal raw nor run for megabytes. */
void cca_cli_print_error(const char *cmd, const GError *error);

/* Builds the sweep of device DEVICE of SNAP for command CMD, under the
 * --pytorch-version and cap of ARGS (checked by cca_cli_parse()): the recorded row, then the
 * rows of CONFIGS (NULL-terminated, may be NULL), the product of SETS, and
 * the default grid when DEFAULT_GRID.  Returns the exit status: 0 with
 * *OUT set, 2 after printing a usage error (a bad device, --config or
 * --set), 1 after printing an input error (a snapshot with no trace
 * entries among them). */
int cca_cli_build_grid(const char *cmd, const CcaCliArgs *args, const CcaSnapshot *snap, int device,
		       const char *const *configs, const char *const *sets, gboolean default_grid,
		       CcaSweep **out);

/* A progress bar on stderr (for a terminal). */
typedef struct {
	const char *command;
	bool shown;
} CcaCliProgress;

/* CcaSweepProgress that redraws the bar: DATA is a CcaCliProgress. */
void cca_cli_progress(void *data, guint done, guint total);

/* Erases the bar if it was drawn. */
void cca_cli_progress_end(CcaCliProgress *progress);

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(CcaCliArgs, cca_cli_args_clear)

G_END_DECLS

#endif
