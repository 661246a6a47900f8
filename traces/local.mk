# traces/: small real fixtures recorded by torch 2.11 on an H200.
EXTRA_DIST += traces/pytorch-2.11 traces/driver-probe traces/patterns-2.11 traces/calls-2.11
# programs whose answers the snapshot does not decide, 3 repeats each (traces/uncertain-2.11/README.md)
EXTRA_DIST += traces/uncertain-2.11
# GPT-2 generate loops whose placement the driver decides (traces/placement-2.11/README.md)
EXTRA_DIST += traces/placement-2.11
# the ranks of one job under torchrun, on one GPU (traces/ranks-2.11/README.md)
EXTRA_DIST += traces/ranks-2.11
EXTRA_DIST += traces/h200-calibration.json
EXTRA_DIST += traces/bundled.manifest
# lab programs (doc/lab.md), each run by tests/cli/test-teach.sh
EXTRA_DIST += traces/lab
