# tests/: GLib test programs (TAP), plus shell end-to-end tests.
TEST_PROGS = \
	tests/test-pickle \
	tests/test-snapshot \
	tests/test-trace \
	tests/test-settings \
	tests/test-allocator \
	tests/test-replay
check_PROGRAMS += $(TEST_PROGS)
TESTS += $(TEST_PROGS)
tests_test_pickle_SOURCES = tests/test-pickle.c tests/testutil.h tests/testutil.c
tests_test_pickle_LDADD = libccasim.a $(CCASIM_LIBS)
tests_test_snapshot_SOURCES = tests/test-snapshot.c tests/testutil.h tests/testutil.c
tests_test_snapshot_LDADD = libccasim.a $(CCASIM_LIBS)
tests_test_trace_SOURCES = tests/test-trace.c tests/testutil.h tests/testutil.c
tests_test_trace_LDADD = libccasim.a $(CCASIM_LIBS)
tests_test_settings_SOURCES = tests/test-settings.c tests/testutil.h tests/testutil.c
tests_test_settings_LDADD = libccasim.a $(CCASIM_LIBS)
tests_test_allocator_SOURCES = tests/test-allocator.c tests/testutil.h tests/testutil.c
tests_test_allocator_LDADD = libccasim.a $(CCASIM_LIBS)
tests_test_replay_SOURCES = tests/test-replay.c tests/testutil.h tests/testutil.c
check_PROGRAMS += tests/test-calls
TESTS += tests/test-calls
tests_test_calls_SOURCES = tests/test-calls.c tests/testutil.h tests/testutil.c
tests_test_calls_LDADD = libccasim.a $(CCASIM_LIBS)
tests_test_replay_LDADD = libccasim.a $(CCASIM_LIBS)
EXTRA_DIST += tests/run-tap
TESTS += tests/test-cli.sh
EXTRA_DIST += tests/tap.sh tests/test-cli.sh tests/data/msgpack-bad
check_PROGRAMS += tests/test-rewind
TESTS += tests/test-rewind
tests_test_rewind_SOURCES = tests/test-rewind.c tests/testutil.h tests/testutil.c
tests_test_rewind_LDADD = libccasim.a $(CCASIM_LIBS)
check_PROGRAMS += tests/test-driverva
TESTS += tests/test-driverva
tests_test_driverva_SOURCES = tests/test-driverva.c tests/testutil.h tests/testutil.c
tests_test_driverva_LDADD = libccasim.a $(CCASIM_LIBS)
EXTRA_DIST += tests/data/bad tests/data/legacy-2.0.pickle tests/data/two-devices.pickle tests/data/post-2.11.pickle tests/data/default-protocol2.pickle tests/data/default-protocol5.pickle tests/data/default-torchscript.pickle tests/data/default-cxx.pickle tests/data/two-devices-cxx.pickle tests/data/segments-only.pickle tests/data/default.pickle.gz tests/data/default.pickle.xz tests/data/default-2members.pickle.gz tests/data/default-2streams.pickle.xz tests/data/frame-huge.pickle tests/data/deep-lists.pickle tests/data/snap_default_2.11.repr tests/data/snap_expandable_2.11.repr tests/data/snap_state_2.11.repr tools/gen_fixtures.py
# The GPU validation mode: engine hooks everywhere, the CUDA device and the
# GPU replay where a GPU is (SKIP otherwise).
check_PROGRAMS += tests/test-gpu
TESTS += tests/test-gpu tests/test-gpu-cli.sh
tests_test_gpu_SOURCES = tests/test-gpu.c tests/testutil.h tests/testutil.c
tests_test_gpu_LDADD = $(CCA_GPU_LDADD) libccasim.a $(CCASIM_LIBS)
EXTRA_DIST += tests/test-gpu-cli.sh
TESTS += tests/test-replay-cli.sh
EXTRA_DIST += tests/test-replay-cli.sh
TESTS += tests/test-convert-all.sh
EXTRA_DIST += tests/test-convert-all.sh
# What-if studies: sweep, fit, diff and the cost model.
check_PROGRAMS += tests/test-sweep tests/test-fit tests/test-diff tests/test-calibration
TESTS += tests/test-sweep tests/test-fit tests/test-diff tests/test-calibration
tests_test_sweep_SOURCES = tests/test-sweep.c tests/testutil.h tests/testutil.c
tests_test_sweep_LDADD = libccasim.a $(CCASIM_LIBS)
tests_test_fit_SOURCES = tests/test-fit.c tests/testutil.h tests/testutil.c
tests_test_fit_LDADD = libccasim.a $(CCASIM_LIBS)
tests_test_diff_SOURCES = tests/test-diff.c tests/testutil.h tests/testutil.c
tests_test_diff_LDADD = libccasim.a $(CCASIM_LIBS)
tests_test_calibration_SOURCES = tests/test-calibration.c tests/testutil.h tests/testutil.c
tests_test_calibration_LDADD = libccasim.a $(CCASIM_LIBS)
TESTS += tests/test-whatif-cli.sh tests/test-tables.sh
EXTRA_DIST += tests/test-whatif-cli.sh tests/test-tables.sh
# Views of a replay (issue #8): pickle writer, export, timeline, explain, step.
check_PROGRAMS += tests/test-views
TESTS += tests/test-views
tests_test_views_SOURCES = tests/test-views.c tests/testutil.h tests/testutil.c
tests_test_views_LDADD = libccasim.a $(CCASIM_LIBS)
TESTS += tests/test-export.sh tests/test-plot.sh tests/test-view.sh
EXTRA_DIST += tests/test-export.sh tests/test-plot.sh tests/test-view.sh tests/compare-snapshot.py
TESTS += tests/test-tutorial.sh
EXTRA_DIST += tests/test-tutorial.sh
# what explain and step teach, and the lab programs (issue 16)
TESTS += tests/test-teach.sh
EXTRA_DIST += tests/test-teach.sh
check_PROGRAMS += tests/test-text
TESTS += tests/test-text
tests_test_text_SOURCES = tests/test-text.c tests/testutil.h tests/testutil.c
tests_test_text_LDADD = libccasim.a $(CCASIM_LIBS)
check_PROGRAMS += tests/test-number
TESTS += tests/test-number
tests_test_number_SOURCES = tests/test-number.c tests/testutil.h tests/testutil.c
tests_test_number_LDADD = libccasim.a $(CCASIM_LIBS)
check_PROGRAMS += tests/test-table
TESTS += tests/test-table
tests_test_table_SOURCES = tests/test-table.c tests/testutil.h tests/testutil.c
tests_test_table_LDADD = libccasim.a $(CCASIM_LIBS)
# Hostile inputs and outputs (issue 11): -o kinds, signals, bombs.
TESTS += tests/test-io.sh
EXTRA_DIST += tests/test-io.sh
# Option checks and what messages show (issue #11).
TESTS += tests/test-options.sh tests/test-messages.sh
EXTRA_DIST += tests/test-options.sh tests/test-messages.sh
# Traces that would break the model's invariants (issue 11).
check_PROGRAMS += tests/test-validate
TESTS += tests/test-validate
tests_test_validate_SOURCES = tests/test-validate.c tests/testutil.h tests/testutil.c
tests_test_validate_LDADD = libccasim.a $(CCASIM_LIBS)
TESTS += tests/test-validate-cli.sh
# One plan, one replay (issue 12): replays and planning passes per command.
TESTS += tests/test-replays.sh
TESTS += tests/test-address-ties.sh
TESTS += tests/test-patterns.sh
EXTRA_DIST += tests/test-patterns.sh
EXTRA_DIST += tests/test-address-ties.sh
EXTRA_DIST += tests/test-replays.sh
EXTRA_DIST += tests/test-validate-cli.sh
# Settings with no simulated meaning (issue 13): refused or noted.
TESTS += tests/test-settings-cli.sh
EXTRA_DIST += tests/test-settings-cli.sh
# The GPU validation's helpers without a GPU or torch (issue 13): torch_replay.py,
# validation-table.py's labels, run-validation.sh with a faked GPU and torch.
TESTS += tests/test-validation.sh
EXTRA_DIST += tests/test-validation.sh tests/data/faketorch/torch/__init__.py tests/data/validation-runs
# Snapshots of PyTorch releases after 2.11 (issue 13): read, counted, said.
TESTS += tests/test-calls-traces.sh
EXTRA_DIST += tests/test-calls-traces.sh
TESTS += tests/test-newer.sh
TESTS += tests/test-versions.sh
EXTRA_DIST += tests/test-versions.sh tests/make-2.13-snapshot.py
EXTRA_DIST += tests/test-newer.sh tests/data/newer-2.14.pickle tests/data/newer-hostile.pickle
# ccasim-record, the recorder (issue 14), against a stand-in torch.
TESTS += tests/test-record.sh
EXTRA_DIST += tests/test-record.sh tests/record-env.sh tests/data/fake-torch-record
# What made the peak, and one definition of each figure (issue 15).
TESTS += tests/test-peak.sh tests/test-figures.sh
EXTRA_DIST += tests/test-peak.sh tests/test-figures.sh
# Fleets of snapshots x settings, sharded (issue 18).  The shell test is
# test-fleet-cli.sh: named test-fleet.sh its log collided with the program
# test-fleet's (both tests/test-fleet.log), so it never ran.
TESTS += tests/test-fleet-cli.sh
EXTRA_DIST += tests/test-fleet-cli.sh
check_PROGRAMS += tests/test-fleet
TESTS += tests/test-fleet
tests_test_fleet_SOURCES = tests/test-fleet.c tests/testutil.h tests/testutil.c
tests_test_fleet_LDADD = libccasim.a $(CCASIM_LIBS)
# the lab programs against PyTorch on the H200 (issue 16)
TESTS += tests/test-lab-device.sh
EXTRA_DIST += tests/test-lab-device.sh
# pip install of the Python module into a virtualenv (issue 17)
TESTS += tests/test-pip.sh
EXTRA_DIST += tests/test-pip.sh
# Trace entries taken as PyTorch recorded them: snapshot marks, requests past any device.
TESTS += tests/test-recorded-entries.sh
EXTRA_DIST += tests/test-recorded-entries.sh
# A cap nobody passed: what an OOM entry proves about it.
TESTS += tests/test-cap-proof.sh
EXTRA_DIST += tests/test-cap-proof.sh
# One question, one answer: the recording's cap given to every command.
TESTS += tests/test-recorded-cap.sh
EXTRA_DIST += tests/test-recorded-cap.sh
# A window (a trace that starts mid-run) said so by every command.
TESTS += tests/test-window-commands.sh
EXTRA_DIST += tests/test-window-commands.sh
# ccasim-record under hostile conditions: a storm of dump signals, two
# processes without a rank, RANK values that are not ranks, planted links,
# the dumps' modes.
TESTS += tests/test-record-hostile.sh
EXTRA_DIST += tests/test-record-hostile.sh
# What pages embed: escaping, the Content-Security-Policy, hostile trace strings in plot and view pages
check_PROGRAMS += tests/test-html
TESTS += tests/test-html tests/test-pages.sh
tests_test_html_SOURCES = tests/test-html.c
tests_test_html_LDADD = libccasim.a $(CCASIM_LIBS)
EXTRA_DIST += tests/test-pages.sh
# Reports not written whole (a full disk, a closed pipe) are errors, never exit 0.
TESTS += tests/test-stdout.sh
EXTRA_DIST += tests/test-stdout.sh
# Labs: free last/free all against explicit numbers; decimal sizes only.
TESTS += tests/test-lab-free.sh
EXTRA_DIST += tests/test-lab-free.sh
# Strings that are not UTF-8: refused by every reader as Python's pickle refuses them.
TESTS += tests/test-utf8.sh
EXTRA_DIST += tests/test-utf8.sh
# File names with escape sequences reach the terminal escaped.
TESTS += tests/test-names.sh
EXTRA_DIST += tests/test-names.sh
# fleet run and fleet merge on hostile folders: no rows, FIFOs and devices,
# folder links, side files over their limits, bad and out-of-range rows,
# control bytes in rows
TESTS += tests/test-fleet-hostile.sh
EXTRA_DIST += tests/test-fleet-hostile.sh
# MemPools in plain snapshots and ccasim-record dumps: each request to its recorded segment's pool.
TESTS += tests/test-mempools.sh
EXTRA_DIST += tests/test-mempools.sh
# A what-if's figures bounded over stream timing (record_stream completions: doc/whatif.md).
TESTS += tests/test-stream-bounds.sh
EXTRA_DIST += tests/test-stream-bounds.sh
# the ranks of one job, recorded under torchrun on one GPU (traces/ranks-2.11)
TESTS += tests/test-ranks.sh
EXTRA_DIST += tests/test-ranks.sh
TESTS += tests/test-timing-verdicts.sh
EXTRA_DIST += tests/test-timing-verdicts.sh
