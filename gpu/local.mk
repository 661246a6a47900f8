# gpu/: the cudart device backend, built only when CUDA is found.
if HAVE_CUDA
endif
