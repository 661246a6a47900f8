/* cli.h - the command table's types and the one option parser of ccasim.
 *
 * Every command is declared once in the table of tools/ccasim.c: its
 * name, one-line summary, parameters and the shared option groups it
 * takes.  Each shared option is declared once, in cli.c, in a GLib
 * GOptionGroup; cca_cli_parse() builds a command's option context from
 * its own entries and its groups, parses, checks the shared values, and
 * is the one place a usage error is printed from (one line, exit 2).
 */
#ifndef CCA_CLI_H
#define CCA_CLI_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "replay.h"
#include "settings.h"

G_BEGIN_DECLS

/* The shared option groups a command takes. */
typedef enum {
	CCA_CLI_INPUT = 1 << 0,	       /* --max-input-size, --max-inflate-ratio (inputargs.c) */
	CCA_CLI_DEVICE = 1 << 1,       /* --device N: which device of the trace */
	CCA_CLI_LIMITS = 1 << 2,       /* --memory-fraction F, --device-memory BYTES */
	CCA_CLI_CONFIG = 1 << 3,       /* --config STRING, once */
	CCA_CLI_CONFIGS = 1 << 4,      /* --config STRING, repeatable */
	CCA_CLI_WHATIF = 1 << 5,       /* --whatif, --address-model MODEL */
	CCA_CLI_VERSION = 1 << 6,      /* --pytorch-version X.Y */
	CCA_CLI_JSON = 1 << 7,	       /* --json */
	CCA_CLI_KEEP_GOING = 1 << 8,   /* --keep-going */
	CCA_CLI_JOBS = 1 << 9,	       /* -j N, --no-progress */
	CCA_CLI_ALL_DEVICES = 1 << 10, /* with DEVICE: no --device means every device */
} CcaCliGroups;

/* The shared options as parsed, and what cca_cli_parse() derives. */
typedef struct {
	char **configs;		    /* --config, NULL-terminated, or NULL */
	char *memory_fraction_text; /* --memory-fraction, or NULL */
	char *device_memory_text;   /* --device-memory, or NULL */
	char *pytorch_version_text; /* --pytorch-version, or NULL */
	char *address_model_text;   /* --address-model, or NULL */
	int device; /* --device; after parsing 0 when absent (-1 with ALL_DEVICES) */
	int jobs;   /* -j; 0: one thread per core */
	gboolean whatif, json, keep_going, no_progress;
	/* derived */
	guint n_configs;
	double memory_fraction;	       /* 0: no cap */
	uint64_t device_memory;	       /* 0: not given */
	bool capacity_set;	       /* --device-memory given */
	uint32_t pytorch_version;      /* 0: guess from the trace */
	CcaAddressModel address_model; /* CCA_ADDRESS_DRIVER unless given */
	/* filled by cca_view_args_load(): settings[i] is configs[i] parsed */
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

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(CcaCliArgs, cca_cli_args_clear)

G_END_DECLS

#endif
