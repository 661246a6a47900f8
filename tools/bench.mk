# tools/bench.mk: `make bench` runs every tools/bench-*.sh with $CCASIM set
# to the binary just built (not part of `make check` or CI: timings need a
# quiet machine).  BENCH_STRICT=1 makes a missed target fail the make.
EXTRA_DIST += tools/bench-convert.sh tools/bench-replay.sh tools/whatif-compare.py tools/cost-compare.py

bench: ccasim$(EXEEXT)
	@fail=0; for script in $(srcdir)/tools/bench-*.sh; do \
	  CCASIM='$(abs_top_builddir)/ccasim$(EXEEXT)' top_srcdir='$(abs_top_srcdir)' \
	    $(SHELL) "$$script" || fail=1; \
	done; exit $$fail
EXTRA_DIST += tools/bench-sweep.sh tools/bench-big.sh tools/bench-engine.sh
EXTRA_DIST += tools/bench-fleet.sh
EXTRA_DIST += tools/bench-python.sh tools/bench-live.sh
