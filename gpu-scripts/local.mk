# gpu-scripts/: what runs on the GPU machine, with PyTorch itself: the
# validation run (run-validation.sh, torch_replay.py), the captures of the
# bundled traces (capture-*.py, spread.py, check-uncertain.sh), the lab
# programs under PyTorch (lab-check.py), ccasim-record's checks and cost on
# the device (record-check.py, record-overhead.py) and the driver-address
# probes (probe-va.sh, which runs gpu/va_probe.c).
dist_noinst_SCRIPTS += %D%/run-validation.sh %D%/torch_replay.py %D%/capture-patterns.py \
	%D%/record-check.py %D%/record-overhead.py %D%/lab-check.py \
	%D%/capture-uncertain.py %D%/spread.py %D%/check-uncertain.sh
