# bench/: the benchmarks.  `make bench` runs every bench/bench-*.sh with
# $CCASIM set to the binary just built (not part of `make check` or CI:
# timings need a quiet machine).  BENCH_STRICT=1 makes a missed target fail
# the make.  gen-trace writes the synthetic traces they (and a few tests)
# replay.
noinst_PROGRAMS += bench/gen-trace
bench_gen_trace_SOURCES = %D%/gen_trace.c
bench_gen_trace_LDADD = libccasim.a $(CCASIM_LIBS)

EXTRA_DIST += %D%/bench-convert.sh %D%/bench-replay.sh %D%/bench-sweep.sh %D%/bench-big.sh \
	%D%/bench-engine.sh %D%/bench-fleet.sh %D%/bench-python.sh %D%/bench-live.sh

bench: ccasim$(EXEEXT)
	@fail=0; for script in $(srcdir)/bench/bench-*.sh; do \
	  CCASIM='$(abs_top_builddir)/ccasim$(EXEEXT)' top_srcdir='$(abs_top_srcdir)' \
	    $(SHELL) "$$script" || fail=1; \
	done; exit $$fail
