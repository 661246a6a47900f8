# sim/: the core library shared by the CLI, the tests, the fuzzers and gpu/.
noinst_LIBRARIES += libccasim.a
libccasim_a_SOURCES = \
	%D%/event.h %D%/snapshot.h %D%/snapshot.c \
	%D%/input.h %D%/input.c \
	%D%/pickle.h %D%/pickle.c \
	%D%/snapshot_pickle.c \
	%D%/trace.h %D%/trace.c \
	%D%/pytorch.h %D%/settings.h %D%/settings.c \
	%D%/stats.h %D%/stats.c \
	%D%/device.h %D%/simdevice.c %D%/driverva.h %D%/driverva.c \
	%D%/allocator.h %D%/allocator.c %D%/block.h %D%/pool.h %D%/pool.c \
	%D%/engine.h %D%/engine.c %D%/addrmap.h %D%/plan.h %D%/plan.c %D%/rewind.h %D%/rewind.c %D%/sensitivity.h %D%/sensitivity.c \
	%D%/report.h %D%/report.c \
	%D%/sizes.h %D%/sizes.c %D%/outfile.h %D%/outfile.c \
	%D%/text.h %D%/text.c
libccasim_a_SOURCES += %D%/json.h %D%/json.c
# What-if studies (sweep, fit, diff) and the allocator-time cost model.
libccasim_a_SOURCES += %D%/calibration.h %D%/calibration.c %D%/sweep.h %D%/sweep.c
# views of a replay: explain, step, timelines, export (issue #8)
libccasim_a_SOURCES += %D%/follow.h %D%/follow.c %D%/explain.h %D%/explain.c \
	%D%/stepview.h %D%/stepview.c %D%/timeline.h %D%/timeline.c \
	%D%/pickle_write.h %D%/pickle_write.c %D%/export.h %D%/export.c
libccasim_a_SOURCES += %D%/fit.h %D%/fit.c %D%/diff.h %D%/diff.c
