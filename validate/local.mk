# validate/: scripts that measure ccasim against what PyTorch did, on the
# bundled real traces and on the runs the GPU validation leaves (doc/validation.md).
dist_noinst_SCRIPTS += %D%/patterns-eval.py %D%/timing-eval.py %D%/validation-table.py \
	%D%/whatif-compare.py %D%/cost-compare.py
