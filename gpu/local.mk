# gpu/: the cudart device backend, built only when CUDA is found.
if HAVE_CUDA
noinst_LIBRARIES += libccagpu.a
libccagpu_a_SOURCES = \
	%D%/cudaerror.h %D%/cudautil.h %D%/cudautil.c \
	%D%/cudadevice.h %D%/cudadevice.c \
	%D%/calibrate.h %D%/calibrate.c \
	%D%/gpureplay.h %D%/gpureplay.c
libccagpu_a_CPPFLAGS = $(AM_CPPFLAGS) $(CUDA_CFLAGS)
# What a program using gpu/ links, in static-link order (libccasim.a and
# the libraries again after libccagpu.a, which needs them).
CCA_GPU_LDADD = libccagpu.a libccasim.a $(CCASIM_LIBS) $(CUDA_LIBS)
else
CCA_GPU_LDADD =
endif
# The H200 validation run, and its write-up.
dist_noinst_SCRIPTS += %D%/run-validation.sh
EXTRA_DIST += doc/validation.md
dist_noinst_SCRIPTS += tools/torch_replay.py tools/validation-table.py tools/patterns-eval.py gpu/capture-patterns.py
# ccasim-record on the device (issue 14): its checks and its cost.
dist_noinst_SCRIPTS += gpu/record-check.py gpu/record-overhead.py
# the lab programs run with PyTorch itself (issue 16)
dist_noinst_SCRIPTS += gpu/lab-check.py
# programs whose answers the snapshot does not decide (traces/uncertain-2.11)
dist_noinst_SCRIPTS += gpu/capture-uncertain.py gpu/spread.py gpu/check-uncertain.sh
