# record/: ccasim-record, the recorder of what a snapshot leaves out.  The
# command is generated with the interpreter configure found and the
# install directory of its Python files, and where they are in the source
# tree, which it reads when run from the build tree (before `make install`,
# as build/ccasim runs).
bin_SCRIPTS = ccasim-record
recorddir = $(pkgdatadir)/python
dist_record_DATA = %D%/ccasim_record.py %D%/record-site/sitecustomize.py
EXTRA_DIST += %D%/ccasim-record.in
CLEANFILES += ccasim-record
ccasim-record: $(srcdir)/%D%/ccasim-record.in Makefile
	$(AM_V_GEN)sed -e 's|@PYTHON3[@]|$(PYTHON3)|g' -e 's|@pkgdatadir[@]|$(pkgdatadir)|g' \
		-e 's|@abs_builddir[@]|$(abs_builddir)|g' \
		-e 's|@srcrecorddir[@]|$(abs_srcdir)/%D%|g' \
		-e 's|@srcsitedir[@]|$(abs_srcdir)/%D%/record-site|g' \
		$(srcdir)/%D%/ccasim-record.in >$@.tmp && chmod +x $@.tmp && mv $@.tmp $@
