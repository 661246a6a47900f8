# doc/: man page and Markdown documentation.
dist_man_MANS += doc/ccasim.1
EXTRA_DIST += doc/trace-format.md doc/hardening.md doc/architecture.md
EXTRA_DIST += doc/driver-va.md
EXTRA_DIST += doc/allocator-model.md
EXTRA_DIST += doc/private-pools.md
EXTRA_DIST += doc/whatif.md doc/cost-model.md
# The allocator tutorial; tests/fixtures/test-tutorial.sh regenerates its
# numbers and figures.
EXTRA_DIST += doc/tutorial.md doc/tutorial-figures/seedfrag-timeline.svg doc/tutorial-figures/stranded.svg \
	doc/tutorial-figures/seedfrag-segments.svg doc/tutorial-figures/dyninfer-cap.svg \
	doc/tutorial-figures/dyninfer-expandable.svg
EXTRA_DIST += doc/recording.md doc/figures.md
EXTRA_DIST += doc/fleet.md
# the page of `ccasim view`
EXTRA_DIST += doc/view.md
# the lab format
EXTRA_DIST += doc/lab.md
EXTRA_DIST += doc/ccasim.ipynb doc/python.md
# the rules of each PyTorch release (doc/versions.md)
EXTRA_DIST += doc/versions.md
