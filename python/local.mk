# python/: the `ccasim` Python module (doc/python.md), built with --enable-python.
# The module links a second, position-independent build of libccasim
# (the CLI keeps its non-PIC one); symbols stay hidden, so the module
# exports PyInit_ccasim alone.  Tests import it from the build tree
# (PYTHONPATH=$(abs_top_builddir)/python).
if ENABLE_PYTHON
noinst_LIBRARIES += libccasim_pic.a
libccasim_pic_a_SOURCES = $(libccasim_a_SOURCES)
libccasim_pic_a_CFLAGS = $(AM_CFLAGS) -fPIC -fvisibility=hidden -fno-semantic-interposition
pyexec_PROGRAMS = python/ccasim.so
python_ccasim_so_SOURCES = %D%/ccasim.c
python_ccasim_so_CPPFLAGS = $(AM_CPPFLAGS) $(PYTHON_CFLAGS)
python_ccasim_so_CFLAGS = $(AM_CFLAGS) -fPIC -fvisibility=hidden
python_ccasim_so_LDFLAGS = -shared
python_ccasim_so_LDADD = libccasim_pic.a $(CCASIM_LIBS)
# the generated headers, also when only the module is built
sim/view/libccasim_pic_a-htmlview.$(OBJEXT): htmlview-js.h htmlview-css.h
pyexec_DATA = %D%/ccasim.pyi
endif
EXTRA_DIST += %D%/ccasim.pyi %D%/ccasim.c

# The module's tests (TAP from Python), run by the interpreter configure
# found, the module imported from the build tree.
PY_TESTS = %D%/tests/test-cli-equal.py %D%/tests/test-dict.py %D%/tests/test-rss.py \
	%D%/tests/test-notebook.py %D%/tests/test-peak.py %D%/tests/unit/test-fleet.py
EXTRA_DIST += $(PY_TESTS) %D%/tests/taputil.py
if ENABLE_PYTHON
TESTS += $(PY_TESTS)
endif
PY_LOG_DRIVER = $(LOG_DRIVER)
PY_LOG_COMPILER = env $(PY_SAN_ENV) PYTHONPATH='$(abs_top_builddir)/python:$(abs_top_srcdir)/python/tests' \
	PYTHONDONTWRITEBYTECODE=1 $(PYTHON)

# pip install --no-build-isolation . (from a checkout or the tarball)
EXTRA_DIST += pyproject.toml setup.py %D%/ccasim_record_main.py
# Ctrl-C stops a long sweep() or fit() between replays.
PY_TESTS += %D%/tests/test-interrupt.py
# ccasim.fleet on hostile folders: no rows, failed jobs, bad rows, links, FIFOs
EXTRA_DIST += %D%/tests/test-fleet-hostile.py
if ENABLE_PYTHON
TESTS += %D%/tests/test-fleet-hostile.py
endif
# One question, one answer: recorded_memory_fraction in every call.
PY_TESTS += %D%/tests/test-recorded-cap.py
# Issue 26: the timeline as pandas takes it; OSError for the file system,
# TraceError for content; fit(gpu=); fleet.merge() and missing shards.
PY_TESTS += %D%/tests/test-pandas.py %D%/tests/test-errors.py
