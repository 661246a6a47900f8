/* commands.h - the ccasim subcommands.  Each takes the arguments after
 * its name (argv[0] is the subcommand name) and returns the process exit
 * status: 0 success, 1 a failed check or bad input, 2 a usage error. */
#ifndef CCA_COMMANDS_H
#define CCA_COMMANDS_H

int cca_cmd_convert(int argc, char **argv);
int cca_cmd_info(int argc, char **argv);
int cca_cmd_replay(int argc, char **argv);
int cca_cmd_plot(int argc, char **argv);
int cca_cmd_explain(int argc, char **argv);
int cca_cmd_step(int argc, char **argv);
int cca_cmd_export(int argc, char **argv);
int cca_cmd_sweep(int argc, char **argv);
int cca_cmd_fit(int argc, char **argv);
int cca_cmd_diff(int argc, char **argv);
int cca_cmd_gpu(int argc, char **argv);

#endif
