# tools/: the ccasim command line (the command table, cli.c's shared options
# and parser, one cmd_*.c per command body) and nothing else.
bin_PROGRAMS += ccasim
ccasim_SOURCES = \
	%D%/ccasim.c %D%/commands.h \
	%D%/cmd_convert.c %D%/cmd_info.c \
	%D%/cmd_replay.c %D%/cli.h %D%/cli.c
ccasim_LDADD = libccasim.a $(CCASIM_LIBS)

# What-if studies: sweep, fit, diff.
ccasim_SOURCES += %D%/cmd_sweep.c

# `ccasim gpu`: always built (it says when CUDA is missing); gpu/ is linked
# when CUDA was found.
ccasim_SOURCES += %D%/cmd_gpu.c
ccasim_LDADD += $(CCA_GPU_LDADD)
ccasim_SOURCES += %D%/cmd_fit.c %D%/cmd_diff.c
# Fleets of snapshots (doc/fleet.md).
ccasim_SOURCES += %D%/cmd_fleet.c

# Views of a replay: plot (cairo, sim/view/plot.c), explain, step, export.
ccasim_SOURCES += %D%/cmd_plot.c %D%/cmd_explain.c %D%/cmd_step.c %D%/cmd_export.c %D%/cmd_peak.c %D%/cmd_view.c
