# tests/fuzz/: libFuzzer targets, one per reader, and the corpus replay that
# `make check` always runs.  fuzz-<reader>.c links either with libFuzzer
# (--enable-fuzzing: tests/fuzz/fuzz-<reader>) or with the plain driver
# replay-corpus.c (tests/fuzz/replay-<reader>, a TAP test over
# tests/fuzz/corpus-<reader>/).
FUZZ_TARGETS = pickle msgpack settings replay calibration
FUZZ_REPLAYS = \
	%D%/replay-pickle \
	%D%/replay-msgpack \
	%D%/replay-settings \
	%D%/replay-replay \
	%D%/replay-calibration
check_PROGRAMS += $(FUZZ_REPLAYS)
TESTS += $(FUZZ_REPLAYS)

FUZZ_REPLAY_CPPFLAGS = $(AM_CPPFLAGS) -DCCA_FUZZ_TOP_SRCDIR='"$(abs_top_srcdir)"'
FUZZ_LOAD_SOURCES = %D%/fuzz.h %D%/fuzz-load.c

%C%_replay_pickle_SOURCES = %D%/replay-corpus.c %D%/fuzz-pickle.c $(FUZZ_LOAD_SOURCES)
%C%_replay_pickle_CPPFLAGS = $(FUZZ_REPLAY_CPPFLAGS)
%C%_replay_pickle_LDADD = libccasim.a $(CCASIM_LIBS)
%C%_replay_msgpack_SOURCES = %D%/replay-corpus.c %D%/fuzz-msgpack.c $(FUZZ_LOAD_SOURCES)
%C%_replay_msgpack_CPPFLAGS = $(FUZZ_REPLAY_CPPFLAGS)
%C%_replay_msgpack_LDADD = libccasim.a $(CCASIM_LIBS)
%C%_replay_settings_SOURCES = %D%/replay-corpus.c %D%/fuzz-settings.c %D%/fuzz.h
%C%_replay_settings_CPPFLAGS = $(FUZZ_REPLAY_CPPFLAGS)
%C%_replay_settings_LDADD = libccasim.a $(CCASIM_LIBS)
%C%_replay_replay_SOURCES = %D%/replay-corpus.c %D%/fuzz-replay.c $(FUZZ_LOAD_SOURCES)
%C%_replay_replay_CPPFLAGS = $(FUZZ_REPLAY_CPPFLAGS)
%C%_replay_replay_LDADD = libccasim.a $(CCASIM_LIBS)
%C%_replay_calibration_SOURCES = %D%/replay-corpus.c %D%/fuzz-calibration.c %D%/fuzz.h
%C%_replay_calibration_CPPFLAGS = $(FUZZ_REPLAY_CPPFLAGS)
%C%_replay_calibration_LDADD = libccasim.a $(CCASIM_LIBS)

if ENABLE_FUZZING
# Run one with e.g.
#   tests/fuzz/fuzz-pickle -max_total_time=600 -malloc_limit_mb=512 -rss_limit_mb=2048 \
#     /tmp/corpus $(srcdir)/tests/fuzz/corpus-pickle
# (new inputs go to the first directory; `make fuzz-smoke` runs each briefly).
noinst_PROGRAMS += %D%/fuzz-pickle %D%/fuzz-msgpack %D%/fuzz-settings %D%/fuzz-replay \
	%D%/fuzz-calibration
%C%_fuzz_pickle_SOURCES = %D%/fuzz-pickle.c $(FUZZ_LOAD_SOURCES)
%C%_fuzz_pickle_LDFLAGS = $(FUZZ_LDFLAGS)
%C%_fuzz_pickle_LDADD = libccasim.a $(CCASIM_LIBS)
%C%_fuzz_msgpack_SOURCES = %D%/fuzz-msgpack.c $(FUZZ_LOAD_SOURCES)
%C%_fuzz_msgpack_LDFLAGS = $(FUZZ_LDFLAGS)
%C%_fuzz_msgpack_LDADD = libccasim.a $(CCASIM_LIBS)
%C%_fuzz_settings_SOURCES = %D%/fuzz-settings.c %D%/fuzz.h
%C%_fuzz_settings_LDFLAGS = $(FUZZ_LDFLAGS)
%C%_fuzz_settings_LDADD = libccasim.a $(CCASIM_LIBS)
%C%_fuzz_replay_SOURCES = %D%/fuzz-replay.c $(FUZZ_LOAD_SOURCES)
%C%_fuzz_replay_LDFLAGS = $(FUZZ_LDFLAGS)
%C%_fuzz_replay_LDADD = libccasim.a $(CCASIM_LIBS)
%C%_fuzz_calibration_SOURCES = %D%/fuzz-calibration.c %D%/fuzz.h
%C%_fuzz_calibration_LDFLAGS = $(FUZZ_LDFLAGS)
%C%_fuzz_calibration_LDADD = libccasim.a $(CCASIM_LIBS)

# Fuzzes each target for FUZZ_SECONDS (default 30) from its committed corpus,
# writing new inputs to a scratch directory; crashes land in the build dir.
# -malloc_limit_mb makes one allocation of FUZZ_MALLOC_MB or more a finding:
# no input of a few kilobytes may make ccasim ask for that much at once.
FUZZ_SECONDS = 30
FUZZ_MALLOC_MB = 512
fuzz-smoke: %D%/fuzz-pickle %D%/fuzz-msgpack %D%/fuzz-settings %D%/fuzz-replay \
		%D%/fuzz-calibration
	@set -e; for t in $(FUZZ_TARGETS); do \
	  scratch=$$(mktemp -d); \
	  echo "fuzzing $$t for $(FUZZ_SECONDS)s"; \
	  $(builddir)/%D%/fuzz-$$t -max_total_time=$(FUZZ_SECONDS) -timeout=10 \
	    -rss_limit_mb=2048 -malloc_limit_mb=$(FUZZ_MALLOC_MB) $$scratch $(srcdir)/%D%/corpus-$$t; \
	  rm -rf $$scratch; \
	done
else
fuzz-smoke:
	@echo "configure with --enable-fuzzing (clang) to build the libFuzzer targets" >&2; exit 1
endif

# Regenerates the msgpack seeds from the sample pickles with the built ccasim.
fuzz-corpus: ccasim$(EXEEXT)
	CCASIM=$(abs_top_builddir)/ccasim$(EXEEXT) $(SHELL) $(srcdir)/tests/fuzz/make-fuzz-corpus.sh

EXTRA_DIST += %D%/corpus-pickle %D%/corpus-msgpack %D%/corpus-settings %D%/corpus-replay \
	%D%/corpus-calibration \
	%D%/README.md tests/fuzz/make-fuzz-corpus.sh
.PHONY: fuzz-smoke fuzz-corpus
# the HTML pages (plot's and view's) under hostile trace strings
%C%_replay_html_SOURCES = %D%/replay-corpus.c %D%/fuzz-html.c %D%/fuzz.h
%C%_replay_html_CPPFLAGS = $(FUZZ_REPLAY_CPPFLAGS)
%C%_replay_html_LDADD = libccasim.a $(CCASIM_LIBS)
check_PROGRAMS += %D%/replay-html
TESTS += %D%/replay-html
EXTRA_DIST += %D%/corpus-html
FUZZ_TARGETS += html
if ENABLE_FUZZING
noinst_PROGRAMS += %D%/fuzz-html
fuzz-smoke: %D%/fuzz-html
%C%_fuzz_html_SOURCES = %D%/fuzz-html.c %D%/fuzz.h
%C%_fuzz_html_LDFLAGS = $(FUZZ_LDFLAGS)
%C%_fuzz_html_LDADD = libccasim.a $(CCASIM_LIBS)
endif

# The lab parser (sim/read/lab.c): fuzz-lab with --enable-fuzzing, and
# replay-lab over tests/fuzz/corpus-lab/ (the bundled labs and hostile
# ones) in `make check`.  Run it with
#   tests/fuzz/fuzz-lab -max_total_time=600 -timeout=10 -rss_limit_mb=2048 \
#     -malloc_limit_mb=512 /tmp/corpus $(srcdir)/tests/fuzz/corpus-lab
check_PROGRAMS += %D%/replay-lab
TESTS += %D%/replay-lab
%C%_replay_lab_SOURCES = %D%/replay-corpus.c %D%/fuzz-lab.c %D%/fuzz.h
%C%_replay_lab_CPPFLAGS = $(FUZZ_REPLAY_CPPFLAGS)
%C%_replay_lab_LDADD = libccasim.a $(CCASIM_LIBS)
EXTRA_DIST += %D%/corpus-lab
FUZZ_TARGETS += lab
if ENABLE_FUZZING
noinst_PROGRAMS += %D%/fuzz-lab
fuzz-smoke: %D%/fuzz-lab
%C%_fuzz_lab_SOURCES = %D%/fuzz-lab.c %D%/fuzz.h
%C%_fuzz_lab_LDFLAGS = $(FUZZ_LDFLAGS)
%C%_fuzz_lab_LDADD = libccasim.a $(CCASIM_LIBS)
endif

# The fleet readers: a rows file given to fleet merge's reader
# (fuzz-fleet-rows) and a fleet run manifest (fuzz-fleet-manifest), each
# replayed over its corpus by `make check`.
FUZZ_TARGETS += fleet-rows fleet-manifest
check_PROGRAMS += %D%/replay-fleet-rows %D%/replay-fleet-manifest
TESTS += %D%/replay-fleet-rows %D%/replay-fleet-manifest
%C%_replay_fleet_rows_SOURCES = %D%/replay-corpus.c %D%/fuzz-fleet-rows.c %D%/fuzz.h
%C%_replay_fleet_rows_CPPFLAGS = $(FUZZ_REPLAY_CPPFLAGS)
%C%_replay_fleet_rows_LDADD = libccasim.a $(CCASIM_LIBS)
%C%_replay_fleet_manifest_SOURCES = %D%/replay-corpus.c %D%/fuzz-fleet-manifest.c %D%/fuzz.h
%C%_replay_fleet_manifest_CPPFLAGS = $(FUZZ_REPLAY_CPPFLAGS)
%C%_replay_fleet_manifest_LDADD = libccasim.a $(CCASIM_LIBS)
if ENABLE_FUZZING
noinst_PROGRAMS += %D%/fuzz-fleet-rows %D%/fuzz-fleet-manifest
%C%_fuzz_fleet_rows_SOURCES = %D%/fuzz-fleet-rows.c %D%/fuzz.h
%C%_fuzz_fleet_rows_LDFLAGS = $(FUZZ_LDFLAGS)
%C%_fuzz_fleet_rows_LDADD = libccasim.a $(CCASIM_LIBS)
%C%_fuzz_fleet_manifest_SOURCES = %D%/fuzz-fleet-manifest.c %D%/fuzz.h
%C%_fuzz_fleet_manifest_LDFLAGS = $(FUZZ_LDFLAGS)
%C%_fuzz_fleet_manifest_LDADD = libccasim.a $(CCASIM_LIBS)
fuzz-smoke: %D%/fuzz-fleet-rows %D%/fuzz-fleet-manifest
endif
EXTRA_DIST += %D%/corpus-fleet-rows %D%/corpus-fleet-manifest
