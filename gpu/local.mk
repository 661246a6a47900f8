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
EXTRA_DIST += doc/validation.md
