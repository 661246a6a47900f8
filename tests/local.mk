# tests/: four tiers (doc/architecture.md, "Tests"), each test registered
# here.  unit/: one GLib test program (TAP) per module; cli/: shell tests of
# the command line; fixtures/: end-to-end runs over the bundled real traces;
# lint/: checks of the source tree.  The Python module's tests are in
# python/local.mk, the fuzz targets in tests/fuzz/local.mk.  tap.sh, run-tap,
# record-env.sh and compare-snapshot.py are the shell tests' helpers.
EXTRA_DIST += tests/run-tap tests/tap.sh tests/record-env.sh tests/compare-snapshot.py

# ------------------------------------------------------------------ unit
UNIT_PROGS = \
	tests/unit/test-pickle \
	tests/unit/test-snapshot \
	tests/unit/test-trace \
	tests/unit/test-settings \
	tests/unit/test-allocator \
	tests/unit/test-replay \
	tests/unit/test-calls \
	tests/unit/test-rewind \
	tests/unit/test-driverva \
	tests/unit/test-simdevice \
	tests/unit/test-sweep \
	tests/unit/test-fit \
	tests/unit/test-diff \
	tests/unit/test-calibration \
	tests/unit/test-views \
	tests/unit/test-text \
	tests/unit/test-number \
	tests/unit/test-table \
	tests/unit/test-hostile-traces \
	tests/unit/test-fleet \
	tests/unit/test-html \
	tests/unit/test-tree
check_PROGRAMS += $(UNIT_PROGS)
TESTS += $(UNIT_PROGS)
# the safe unpickler (sim/read/pickle.c)
tests_unit_test_pickle_SOURCES = tests/unit/test-pickle.c tests/unit/testutil.h tests/unit/testutil.c
tests_unit_test_pickle_LDADD = libccasim.a $(CCASIM_LIBS)
# the snapshot model, its pickle schema reader and input decompression
tests_unit_test_snapshot_SOURCES = tests/unit/test-snapshot.c tests/unit/testutil.h tests/unit/testutil.c
tests_unit_test_snapshot_LDADD = libccasim.a $(CCASIM_LIBS)
# the msgpack trace format (sim/read/trace.c) and byte sizes
tests_unit_test_trace_SOURCES = tests/unit/test-trace.c tests/unit/testutil.h tests/unit/testutil.c
tests_unit_test_trace_LDADD = libccasim.a $(CCASIM_LIBS)
# the PYTORCH_CUDA_ALLOC_CONF parser and the knob table
tests_unit_test_settings_SOURCES = tests/unit/test-settings.c tests/unit/testutil.h tests/unit/testutil.c
tests_unit_test_settings_LDADD = libccasim.a $(CCASIM_LIBS)
# the policy, one behaviour per test
tests_unit_test_allocator_SOURCES = tests/unit/test-allocator.c tests/unit/testutil.h tests/unit/testutil.c
tests_unit_test_allocator_LDADD = libccasim.a $(CCASIM_LIBS)
# the model against PyTorch 2.11 itself, every bundled trace
tests_unit_test_replay_SOURCES = tests/unit/test-replay.c tests/unit/testutil.h tests/unit/testutil.c
tests_unit_test_replay_LDADD = libccasim.a $(CCASIM_LIBS)
# the program's calls ccasim-record saw, placed among the entries
tests_unit_test_calls_SOURCES = tests/unit/test-calls.c tests/unit/testutil.h tests/unit/testutil.c
tests_unit_test_calls_LDADD = libccasim.a $(CCASIM_LIBS)
# traces that start mid-run
tests_unit_test_rewind_SOURCES = tests/unit/test-rewind.c tests/unit/testutil.h tests/unit/testutil.c
tests_unit_test_rewind_LDADD = libccasim.a $(CCASIM_LIBS)
# the driver address model against the H200 probes
tests_unit_test_driverva_SOURCES = tests/unit/test-driverva.c tests/unit/testutil.h tests/unit/testutil.c
tests_unit_test_driverva_LDADD = libccasim.a $(CCASIM_LIBS)
# the simulated device's address models
tests_unit_test_simdevice_SOURCES = tests/unit/test-simdevice.c
tests_unit_test_simdevice_LDADD = libccasim.a $(CCASIM_LIBS)
# what-if sweeps against `replay --config` and PyTorch
tests_unit_test_sweep_SOURCES = tests/unit/test-sweep.c tests/unit/testutil.h tests/unit/testutil.c
tests_unit_test_sweep_LDADD = libccasim.a $(CCASIM_LIBS)
# the smallest device memory a trace runs in
tests_unit_test_fit_SOURCES = tests/unit/test-fit.c tests/unit/testutil.h tests/unit/testutil.c
tests_unit_test_fit_LDADD = libccasim.a $(CCASIM_LIBS)
# two replays side by side
tests_unit_test_diff_SOURCES = tests/unit/test-diff.c tests/unit/testutil.h tests/unit/testutil.c
tests_unit_test_diff_LDADD = libccasim.a $(CCASIM_LIBS)
# the cudaMalloc/cudaFree timing table and the cost model
tests_unit_test_calibration_SOURCES = tests/unit/test-calibration.c tests/unit/testutil.h tests/unit/testutil.c
tests_unit_test_calibration_LDADD = libccasim.a $(CCASIM_LIBS)
# the views of a replay: pickle writer, export, timeline, explain, step
tests_unit_test_views_SOURCES = tests/unit/test-views.c tests/unit/testutil.h tests/unit/testutil.c
tests_unit_test_views_LDADD = libccasim.a $(CCASIM_LIBS)
# the free-block treap's order, priorities and links (cca_tree_check)
tests_unit_test_tree_SOURCES = tests/unit/test-tree.c tests/unit/testutil.h tests/unit/testutil.c
tests_unit_test_tree_LDADD = libccasim.a $(CCASIM_LIBS)
# display forms of untrusted strings (sim/util/text.c)
tests_unit_test_text_SOURCES = tests/unit/test-text.c tests/unit/testutil.h tests/unit/testutil.c
tests_unit_test_text_LDADD = libccasim.a $(CCASIM_LIBS)
# decimal integers from text (sim/util/number.c)
tests_unit_test_number_SOURCES = tests/unit/test-number.c tests/unit/testutil.h tests/unit/testutil.c
tests_unit_test_number_LDADD = libccasim.a $(CCASIM_LIBS)
# aligned tables cut to a terminal's width (sim/util/table.c)
tests_unit_test_table_SOURCES = tests/unit/test-table.c tests/unit/testutil.h tests/unit/testutil.c
tests_unit_test_table_LDADD = libccasim.a $(CCASIM_LIBS)
# traces that would break the model's invariants are refused
tests_unit_test_hostile_traces_SOURCES = tests/unit/test-hostile-traces.c tests/unit/testutil.h tests/unit/testutil.c
tests_unit_test_hostile_traces_LDADD = libccasim.a $(CCASIM_LIBS)
# the fleet engine (sim/study/fleet.c)
tests_unit_test_fleet_SOURCES = tests/unit/test-fleet.c tests/unit/testutil.h tests/unit/testutil.c
tests_unit_test_fleet_LDADD = libccasim.a $(CCASIM_LIBS)
# what the pages embed (sim/util/html.c)
tests_unit_test_html_SOURCES = tests/unit/test-html.c
tests_unit_test_html_LDADD = libccasim.a $(CCASIM_LIBS)
# the GPU validation mode: engine hooks everywhere, the CUDA device and the
# GPU replay where a GPU is (SKIP otherwise)
check_PROGRAMS += tests/unit/test-gpu
TESTS += tests/unit/test-gpu
tests_unit_test_gpu_SOURCES = tests/unit/test-gpu.c tests/unit/testutil.h tests/unit/testutil.c
tests_unit_test_gpu_LDADD = $(CCA_GPU_LDADD) libccasim.a $(CCASIM_LIBS)

# ------------------------------------------------------------------ cli
# `ccasim convert` and `ccasim info`
CLI_TESTS = tests/cli/test-convert-info.sh
# `ccasim replay`: options and exit statuses
CLI_TESTS += tests/cli/test-replay.sh
# how many model replays and planning passes each command makes
CLI_TESTS += tests/cli/test-replay-count.sh
# `ccasim replay` on the hostile traces of tests/unit/test-hostile-traces
CLI_TESTS += tests/cli/test-replay-hostile.sh
# `ccasim sweep`, `fit` and `diff`
CLI_TESTS += tests/cli/test-whatif.sh
# sweep, fit and fleet merge tables on a terminal
CLI_TESTS += tests/cli/test-tables.sh
# `ccasim export`
CLI_TESTS += tests/cli/test-export.sh
# `ccasim plot`, `explain` and `step`
CLI_TESTS += tests/cli/test-plot.sh
# `ccasim view`
CLI_TESTS += tests/cli/test-view.sh
# `ccasim peak`
CLI_TESTS += tests/cli/test-peak.sh
# what explain, step and the lab programs teach
CLI_TESTS += tests/cli/test-teach.sh
# a lab's `free last` and `free all`, decimal sizes only
CLI_TESTS += tests/cli/test-lab-free.sh
# `ccasim gpu` (SKIPs the device parts without a GPU)
CLI_TESTS += tests/cli/test-gpu.sh
# the GPU validation's scripts without a GPU or torch: torch_replay.py, validation-table.py, run-validation.sh
CLI_TESTS += tests/cli/test-validation-scripts.sh
# settings PyTorch accepts but ccasim does not model: refused or noted
CLI_TESTS += tests/cli/test-settings.sh
# snapshots of PyTorch releases after 2.11
CLI_TESTS += tests/cli/test-newer.sh
# the rules of each PyTorch release (doc/versions.md): labs and a 2.13 snapshot
CLI_TESTS += tests/cli/test-versions.sh
# ccasim-record, the recorder, against a stand-in torch
CLI_TESTS += tests/cli/test-record.sh
# ccasim-record under hostile conditions
CLI_TESTS += tests/cli/test-record-hostile.sh
# `ccasim fleet run` and `fleet merge`
CLI_TESTS += tests/cli/test-fleet.sh
# fleet run and fleet merge on hostile folders and rows
CLI_TESTS += tests/cli/test-fleet-hostile.sh
# hostile inputs and outputs: -o kinds, signals, bombs
CLI_TESTS += tests/cli/test-io.sh
# every numeric option of every command is checked
CLI_TESTS += tests/cli/test-options.sh
# what messages show of a trace, and what they say to do
CLI_TESTS += tests/cli/test-messages.sh
# what pages embed: escaping, the Content-Security-Policy, hostile strings
CLI_TESTS += tests/cli/test-pages.sh
# reports not written whole are errors, never exit 0
CLI_TESTS += tests/cli/test-stdout.sh
# strings that are not UTF-8, refused as Python's pickle refuses them
CLI_TESTS += tests/cli/test-utf8.sh
# file names with escape sequences reach the terminal escaped
CLI_TESTS += tests/cli/test-names.sh
# pip install of the Python module into a virtualenv
CLI_TESTS += tests/cli/test-pip.sh
# `diff --fail-if`: conditions that hold, that do not, and bad ones
CLI_TESTS += tests/cli/test-diff-gate.sh
CLI_TESTS += tests/cli/test-bounds-commands.sh
# the exit status of a replay that runs out of memory, sizes with units
CLI_TESTS += tests/cli/test-exit-units.sh
# every command's text fits COLUMNS
CLI_TESTS += tests/cli/test-columns.sh
# `fleet merge` names the shards that are missing
CLI_TESTS += tests/cli/test-fleet-shards.sh
# ccasim-record from the build tree, before `make install`
CLI_TESTS += tests/cli/test-record-build.sh
TESTS += $(CLI_TESTS)
EXTRA_DIST += $(CLI_TESTS)

# ------------------------------------------------------------------ fixtures
# every real trace converts; info agrees on the pickle and its msgpack
FIXTURE_TESTS = tests/fixtures/test-convert-all.sh
# every number and figure of doc/tutorial.md, regenerated
FIXTURE_TESTS += tests/fixtures/test-tutorial.sh
# every command names the same peak figures
FIXTURE_TESTS += tests/fixtures/test-figures.sh
# a what-if whose replay took no decision by device address alone
FIXTURE_TESTS += tests/fixtures/test-address-ties.sh
# CUDA graphs, torch.compile and other patterns (traces/patterns-2.11)
FIXTURE_TESTS += tests/fixtures/test-patterns.sh
# runs recorded with ccasim-record (traces/calls-2.11)
FIXTURE_TESTS += tests/fixtures/test-calls-traces.sh
# MemPools used in turns (traces/uncertain-2.11)
FIXTURE_TESTS += tests/fixtures/test-mempools.sh
# a what-if's figures bounded over stream timing
FIXTURE_TESTS += tests/fixtures/test-stream-bounds.sh
# ... and over where the driver puts segments (traces/placement-2.11)
FIXTURE_TESTS += tests/fixtures/test-placement-bounds.sh
# sweep, fit and fleet judge "fits" by every stream timing (rs2)
FIXTURE_TESTS += tests/fixtures/test-timing-verdicts.sh
# snapshot marks and requests past any device, taken as recorded
FIXTURE_TESTS += tests/fixtures/test-recorded-entries.sh
# the ranks of one job, recorded under torchrun on one GPU (traces/ranks-2.11)
FIXTURE_TESTS += tests/fixtures/test-ranks.sh
# a cap nobody passed: what an OOM entry proves about it
FIXTURE_TESTS += tests/fixtures/test-cap-proof.sh
# the recording's cap given to every command
FIXTURE_TESTS += tests/fixtures/test-recorded-cap.sh
# a window (a trace that starts mid-run) said so by every command
FIXTURE_TESTS += tests/fixtures/test-window-commands.sh
# the lab programs against PyTorch on the H200 (traces/lab)
FIXTURE_TESTS += tests/fixtures/test-lab-device.sh
TESTS += $(FIXTURE_TESTS)
EXTRA_DIST += $(FIXTURE_TESTS)

# ------------------------------------------------------------------ lint
# names match places, PyTorch's constants are written once (sim/policy/pytorch.h),
# doc/architecture.md lists every source file, the include graph has no
# circle and no arrow from a lower layer to a higher one
LINT_TESTS = tests/lint/check-prefixes.sh tests/lint/check-architecture.sh \
	tests/lint/check-includes.sh
TESTS += $(LINT_TESTS)
dist_noinst_SCRIPTS += $(LINT_TESTS)

# ------------------------------------------------------------------ data
EXTRA_DIST += tests/data/msgpack-bad tests/data/bad tests/data/legacy-2.0.pickle \
	tests/data/two-devices.pickle tests/data/post-2.11.pickle tests/data/default-protocol2.pickle \
	tests/data/default-protocol5.pickle tests/data/default-torchscript.pickle \
	tests/data/default-cxx.pickle tests/data/two-devices-cxx.pickle tests/data/segments-only.pickle \
	tests/data/default.pickle.gz tests/data/default.pickle.xz tests/data/default-2members.pickle.gz \
	tests/data/default-2streams.pickle.xz tests/data/frame-huge.pickle tests/data/deep-lists.pickle \
	tests/data/snap_default_2.11.repr tests/data/snap_expandable_2.11.repr \
	tests/data/snap_state_2.11.repr tests/data/gen_fixtures.py \
	tests/data/faketorch/torch/__init__.py tests/data/validation-runs \
	tests/data/newer-2.14.pickle tests/data/newer-hostile.pickle tests/data/fake-torch-record \
	tests/data/make-2.13-snapshot.py

# ------------------------------------------------------------------ sanitizers
# `make check-sanitizers` (.ci/run's sanitizer stage, built with
# --enable-sanitizers --enable-debug): every test but these, which the
# plain build runs.  Each repeats, many times slower under ASan and the
# invariant walker, replays that tests/unit/test-replay and test-sweep
# already check entry by entry in that build, or runs Python, pip or
# Chromium rather than C: the fixtures tier (whole real traces end to end),
# the what-if and table sweeps, the recorder's and the GPU validation's
# Python scripts, the pip install, the page in Chromium, the fleet over
# MPI and Dask, the module-against-CLI sweep over every trace
# (test-cli-equal.py), the Python tests that measure memory or run a
# notebook, and test-io.sh: its hostile inputs (bombs, a lying gzip size,
# text pickles) are seeds of tests/fuzz/corpus-pickle, which replay-pickle
# runs in that build, and the rest of its time goes to 2 M-event traces
# and GiB streams (in the plain build alone it took 30 % of make check).
# test-interrupt.py times how soon a call stops after Ctrl-C (10 s): under
# ASan and the invariant walker one replay of its
# 300 k-event trace takes longer than that (measured: 60 s), so it says
# nothing there; the plain build runs it.  test-columns.sh lays out the
# text of whole replays of bert, the largest bundled trace: one `fit --gpu
# all` of it (a search of replays for each GPU) takes 7 s in a plain build
# and ran past 7 minutes under ASan and the invariant walker; the
# wrapping it checks is tests/unit/test-text's table, run here.
SANITIZER_SKIP_TESTS = $(FIXTURE_TESTS) \
	tests/cli/test-io.sh tests/cli/test-whatif.sh tests/cli/test-tables.sh \
	tests/cli/test-record.sh tests/cli/test-record-hostile.sh \
	tests/cli/test-validation-scripts.sh tests/cli/test-pip.sh tests/cli/test-view.sh \
	tests/cli/test-fleet.sh \
	python/tests/test-cli-equal.py python/tests/test-rss.py python/tests/test-notebook.py \
	python/tests/test-interrupt.py tests/cli/test-columns.sh
check-sanitizers:
	@tests=; for t in $(TESTS); do \
	  case " $(SANITIZER_SKIP_TESTS) " in *" $$t "*) ;; *) tests="$$tests $$t" ;; esac; \
	done; $(MAKE) $(AM_MAKEFLAGS) check TESTS="$$tests"
.PHONY: check-sanitizers
