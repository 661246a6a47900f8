# record-env.sh - what the recorder's shell tests share (sourced after
# tap.sh, not run): $fake (the stand-in torch package), $tools (the
# recorder's Python sources, as CCASIM_RECORD_PYDIR), $wrapper (the built
# ccasim-record), and an environment without the variables that the
# recorder or the stand-in torch read (ranks, job ids, settings, the
# stand-in's switches), so that each test sets only its own.
fake=$(cd "$srcdir/tests/data/fake-torch-record" && pwd)
tools=$(cd "$srcdir/record" && pwd)
wrapper=${top_builddir:-.}/ccasim-record
export CCASIM_RECORD_PYDIR="$tools"
unset CCASIM_RECORD RANK LOCAL_RANK SLURM_JOB_ID SLURM_PROCID TORCHELASTIC_RUN_ID \
	PYTORCH_CUDA_ALLOC_CONF FAKE_TORCH_DEVICES FAKE_TORCH_CUDA FAKE_TORCH_ANNOTATIONS \
	FAKE_TORCH_IMPORTED 2>/dev/null
