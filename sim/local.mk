# sim/: the core library shared by the CLI, the tests, the fuzzers and gpu/,
# one folder per layer (doc/architecture.md): read -> plan and replay ->
# policy -> device; studies and views observe a replay; util serves all.
noinst_LIBRARIES += libccasim.a
libccasim_a_SOURCES =
# read/: bytes to events and a final state
libccasim_a_SOURCES += %D%/read/calls.h %D%/read/calls.c %D%/read/event_cursor.h %D%/read/event_cursor.c %D%/read/input.h %D%/read/input.c %D%/read/pickle.h %D%/read/pickle.c %D%/read/sniff.h %D%/read/sniff.c %D%/read/snapshot.h %D%/read/snapshot.c %D%/read/snapshot_load.h %D%/read/snapshot_load.c %D%/read/snapshot_pickle.c %D%/read/trace.h %D%/read/trace.c %D%/read/trace_codec.h %D%/read/trace_codec.c %D%/read/trace_events.h %D%/read/trace_events.c %D%/read/trace_write.h %D%/read/trace_write.c %D%/read/lab.h %D%/read/lab.c
# policy/: PyTorch's caching allocator, its constants and settings
libccasim_a_SOURCES += %D%/policy/event.h %D%/policy/event.c %D%/policy/allocator.h %D%/policy/allocator.c %D%/policy/block.h %D%/policy/tree.h %D%/policy/tree.c %D%/policy/stats.h %D%/policy/stats.c %D%/policy/settings.h %D%/policy/settings.c %D%/policy/rules.h %D%/policy/rules.c %D%/policy/device.h %D%/policy/pytorch.h
# device/: the simulated device and the driver address model
libccasim_a_SOURCES += %D%/device/simdevice.h %D%/device/simdevice.c %D%/device/driverva.h %D%/device/driverva.c \
	%D%/device/shadow.h %D%/device/shadow.c
# replay/: the plan and the one replay
libccasim_a_SOURCES += %D%/replay/plan.h %D%/replay/plan.c %D%/replay/replay.h %D%/replay/replay.c %D%/replay/rewind.h %D%/replay/rewind.c %D%/replay/addrmap.h %D%/replay/check.h %D%/replay/check.c %D%/replay/figures.h %D%/replay/figures.c %D%/replay/capbound.h %D%/replay/capbound.c
# study/: what-if studies and the cost model
libccasim_a_SOURCES += %D%/study/sweep.h %D%/study/sweep.c %D%/study/fit.h %D%/study/fit.c %D%/study/diff.h %D%/study/diff.c %D%/study/sensitivity.h %D%/study/sensitivity.c %D%/study/calibration.h %D%/study/calibration.c %D%/study/fleet.h %D%/study/fleet.c %D%/study/timing.h %D%/study/timing.c
# view/: observers of a replay; plot.c draws with cairo
libccasim_a_SOURCES += %D%/view/explain.h %D%/view/explain.c %D%/view/stepview.h %D%/view/stepview.c %D%/view/timeline.h %D%/view/timeline.c %D%/view/report.h %D%/view/report.c %D%/view/export.h %D%/view/export.c %D%/view/follow.h %D%/view/follow.c %D%/view/pickle_write.h %D%/view/pickle_write.c %D%/view/plot.h %D%/view/plot.c %D%/view/peak.h %D%/view/peak.c %D%/view/stack.h %D%/view/stack.c %D%/view/htmlview.h %D%/view/htmlview.c
# util/: shared helpers
libccasim_a_SOURCES += %D%/util/text.h %D%/util/text.c %D%/util/table.h %D%/util/table.c %D%/util/number.h %D%/util/number.c %D%/util/json.h %D%/util/json.c %D%/util/size.h %D%/util/size.c %D%/util/outfile.h %D%/util/outfile.c %D%/util/html.h %D%/util/html.c %D%/util/parallel.h %D%/util/parallel.c
# The page of `ccasim view` embeds its own script and style, kept as plain
# files and turned into C string literals at build time.
nodist_libccasim_a_SOURCES = htmlview-js.h htmlview-css.h
BUILT_SOURCES = htmlview-js.h htmlview-css.h
# (also for a build of one target, which BUILT_SOURCES does not cover:
# .ci/run's static GPU build makes `ccasim` alone)
%D%/view/htmlview.$(OBJEXT): htmlview-js.h htmlview-css.h
CLEANFILES += htmlview-js.h htmlview-css.h
EXTRA_DIST += %D%/view/htmlview.js %D%/view/htmlview.css
htmlview-js.h: $(srcdir)/%D%/view/htmlview.js
	$(AM_V_GEN)sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/"/' -e 's/$$/\\n"/' $< >$@.tmp && mv $@.tmp $@
htmlview-css.h: $(srcdir)/%D%/view/htmlview.css
	$(AM_V_GEN)sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/"/' -e 's/$$/\\n"/' $< >$@.tmp && mv $@.tmp $@
