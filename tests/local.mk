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
tests_test_replay_LDADD = libccasim.a $(CCASIM_LIBS)
EXTRA_DIST += tests/run-tap
TESTS += tests/test-cli.sh
EXTRA_DIST += tests/test-cli.sh tests/data/msgpack-bad
check_PROGRAMS += tests/test-rewind
TESTS += tests/test-rewind
tests_test_rewind_SOURCES = tests/test-rewind.c tests/testutil.h tests/testutil.c
tests_test_rewind_LDADD = libccasim.a $(CCASIM_LIBS)
