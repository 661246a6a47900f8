# record/: ccasim-record, the recorder of what a snapshot leaves out.  The
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
