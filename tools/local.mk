# tools/: the ccasim CLI (the command table, cli.c's shared options and
# parser, one cmd_*.c per command body) and user helpers.
bin_PROGRAMS += ccasim
ccasim_SOURCES = \
	%D%/ccasim.c %D%/commands.h \
	%D%/cmd_convert.c %D%/cmd_info.c \
	%D%/cmd_replay.c %D%/cli.h %D%/cli.c
ccasim_LDADD = libccasim.a $(CCASIM_LIBS)

# A synthetic-trace generator for benchmarks (not installed).
noinst_PROGRAMS += tools/gen-trace
tools_gen_trace_SOURCES = %D%/gen_trace.c
tools_gen_trace_LDADD = libccasim.a $(CCASIM_LIBS)
# What-if studies: sweep, fit, diff.
ccasim_SOURCES += %D%/cmd_sweep.c

# `ccasim gpu`: always built (it says when CUDA is missing); gpu/ is linked
# when CUDA was found.
ccasim_SOURCES += %D%/cmd_gpu.c
ccasim_LDADD += $(CCA_GPU_LDADD)
ccasim_SOURCES += %D%/cmd_fit.c %D%/cmd_diff.c
# Fleets of snapshots (issue 18).
ccasim_SOURCES += %D%/cmd_fleet.c

# Views of a replay (issue #8): plot (cairo, sim/view/plot.c), explain, step, export.
ccasim_SOURCES += %D%/cmd_plot.c %D%/cmd_explain.c %D%/cmd_step.c %D%/cmd_export.c %D%/cmd_peak.c %D%/cmd_view.c
# Names match places and PyTorch's constants are written once (issue 12).
TESTS += tools/check-prefixes.sh
dist_noinst_SCRIPTS += tools/check-prefixes.sh
# The include graph: no circle, no arrow from a lower layer to a higher
# one, no source file over 1500 lines without a reason (doc/architecture.md).
TESTS += tools/check-includes.sh
dist_noinst_SCRIPTS += tools/check-includes.sh

# ccasim-record (issue 14): the recorder of what a snapshot leaves out.  The
# command is generated with the interpreter configure found and the
# install directory of its Python files; tests run it from the build tree
# with CCASIM_RECORD_PYDIR pointing at the source tree.
bin_SCRIPTS = ccasim-record
recorddir = $(pkgdatadir)/python
dist_record_DATA = %D%/ccasim_record.py %D%/record-site/sitecustomize.py
EXTRA_DIST += %D%/ccasim-record.in
CLEANFILES += ccasim-record
ccasim-record: $(srcdir)/%D%/ccasim-record.in Makefile
	$(AM_V_GEN)sed -e 's|@PYTHON3[@]|$(PYTHON3)|g' -e 's|@pkgdatadir[@]|$(pkgdatadir)|g' \
		$(srcdir)/%D%/ccasim-record.in >$@.tmp && chmod +x $@.tmp && mv $@.tmp $@
