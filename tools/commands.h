/* commands.h - the ccasim subcommands.  Each takes its table entry (see
 * cli.h) and the arguments after its name (argv[0] is the subcommand
 * name) and returns the process exit status: 0 success, 1 a failed check
 * or bad input, 2 a usage error. */
#ifndef CCA_COMMANDS_H
#define CCA_COMMANDS_H

#include "cli.h"

int cca_cmd_convert(const CcaCliCommand *cmd, int argc, char **argv);
int cca_cmd_info(const CcaCliCommand *cmd, int argc, char **argv);
int cca_cmd_replay(const CcaCliCommand *cmd, int argc, char **argv);
int cca_cmd_plot(const CcaCliCommand *cmd, int argc, char **argv);
int cca_cmd_explain(const CcaCliCommand *cmd, int argc, char **argv);
int cca_cmd_step(const CcaCliCommand *cmd, int argc, char **argv);
int cca_cmd_view(const CcaCliCommand *cmd, int argc, char **argv);
int cca_cmd_export(const CcaCliCommand *cmd, int argc, char **argv);
int cca_cmd_sweep(const CcaCliCommand *cmd, int argc, char **argv);
int cca_cmd_fit(const CcaCliCommand *cmd, int argc, char **argv);
int cca_cmd_peak(const CcaCliCommand *cmd, int argc, char **argv);
int cca_cmd_diff(const CcaCliCommand *cmd, int argc, char **argv);
int cca_cmd_fleet(const CcaCliCommand *cmd, int argc, char **argv);
int cca_cmd_gpu(const CcaCliCommand *cmd, int argc, char **argv);

#endif
