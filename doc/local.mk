# doc/: man page and Markdown documentation.
dist_man_MANS += doc/ccasim.1
EXTRA_DIST += doc/trace-format.md
EXTRA_DIST += doc/driver-va.md
EXTRA_DIST += doc/allocator-model.md
