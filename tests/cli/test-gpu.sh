#!/bin/sh
# test-gpu.sh - `ccasim gpu` from the command line, and the helper scripts
# of the GPU validation (TAP).  Without CUDA at build time every `ccasim
# gpu` command says so and exits 2; with CUDA but no GPU, one line "no CUDA
# device: ..." and exit 2; with a GPU, a replay that agrees with the
# simulation exits 0 with valid JSON.  validate/validation-table.py turns a
# results.tsv into the Markdown table of doc/validation.md everywhere.
# Needs $CCASIM and $top_srcdir (set by make check).
set -u

srcdir=${top_srcdir:-.}
. "$srcdir/tests/tap.sh"

valid_json() {
	[ "$python" = false ] || "$python" -c 'import json,sys; json.load(open(sys.argv[1]))' "$1"
}

run 2 "$ccasim" gpu
report $? "ccasim gpu without a command is a usage error"

# what this build and this machine have
if "$ccasim" gpu --help >/dev/null 2>&1; then
	cuda=yes
	if "$ccasim" gpu info >"$scratch/info" 2>"$scratch/info.err"; then
		gpu=yes
	else
		gpu=no
	fi
else
	cuda=no
	gpu=no
fi
echo "# CUDA built: $cuda, GPU: $gpu"

if [ $cuda = no ]; then
	for sub in replay calibrate info; do
		run 2 "$ccasim" gpu $sub "$traces/multistream.default.pickle.xz" &&
			one_line && grep -q 'ccasim was built without CUDA' "$scratch/err"
		report $? "gpu $sub without CUDA says so and exits 2"
	done
else
	run 2 "$ccasim" gpu bogus && one_line
	report $? "unknown gpu command is a usage error"
	run 2 "$ccasim" gpu replay --memory-fraction 2 "$traces/multistream.default.pickle.xz"
	report $? "gpu replay checks --memory-fraction"
	run 2 "$ccasim" gpu calibrate --sizes 2,x
	report $? "gpu calibrate checks --sizes"
	run 2 "$ccasim" gpu replay
	report $? "gpu replay wants a trace"
fi

if [ $cuda = yes ] && [ $gpu = no ]; then
	for sub in "replay $traces/multistream.default.pickle.xz" calibrate info; do
		run 2 "$ccasim" gpu $sub && one_line && grep -q ': no CUDA device: ' "$scratch/err"
		report $? "gpu ${sub%% *} without a GPU: one line, exit 2"
	done
fi

if [ $gpu = yes ]; then
	run 0 "$ccasim" gpu replay --touch --json --calls -o "$scratch/r.json" \
		"$traces/multistream.default.pickle.xz" && valid_json "$scratch/r.json" &&
		grep -q '"passed": true' "$scratch/r.json"
	report $? "gpu replay of multistream agrees with the simulation"
	run 0 "$ccasim" gpu replay --config expandable_segments:True \
		"$traces/seedfrag.default.pickle.xz" && grep -q '^result: PASS' "$scratch/out"
	report $? "gpu replay with expandable segments agrees with the simulation"
	run 0 "$ccasim" gpu calibrate --sizes 2,20 --reps 2 -o "$scratch/cal.json" &&
		valid_json "$scratch/cal.json" && grep -q '"malloc_us_median"' "$scratch/cal.json"
	report $? "gpu calibrate writes the calibration JSON"
else
	for what in "gpu replay agrees with the simulation" "gpu calibrate writes JSON"; do
		skip "$what" "no GPU"
	done
fi

# the validation helpers need no GPU
if [ "$python" != false ]; then
	run 0 "$python" "$srcdir/gpu-scripts/torch_replay.py" --help
	report $? "torch_replay.py --help works without torch"
	printf 'workload\tsetting\tsource\tstatus\tpeak_reserved\tfinal_reserved\tsegments_peak\tnum_device_alloc\tnum_device_free\tnum_ooms\tnum_alloc_retries\tpeak_allocated\tlayout\tnote\n' >"$scratch/results.tsv"
	printf 'seedfrag\tdefault\tsimulated\tok\t104857600\t41943040\t5\t7\t2\t0\t0\t90000000\tabc\t\n' >>"$scratch/results.tsv"
	printf 'seedfrag\tdefault\tgpu\tpass\t104857600\t41943040\t5\t7\t2\t0\t0\t90000000\tabc\t\n' >>"$scratch/results.tsv"
	printf 'seedfrag\tdefault\ttorch\tok\t104857600\t41943040\t5\t7\t2\t0\t0\t90000000\tabc\t\n' >>"$scratch/results.tsv"
	run 0 "$python" "$srcdir/validate/validation-table.py" "$scratch/results.tsv" &&
		grep -q '^| seedfrag | default |' "$scratch/out" && grep -q '100.00 MiB' "$scratch/out"
	report $? "validation-table.py makes the Markdown table"
	run 1 "$python" "$srcdir/validate/validation-table.py" "$scratch/nothing.tsv" && one_line
	report $? "validation-table.py: a missing file is one line, exit 1"
else
	skip "validation helpers" "no python3"
fi

tap_done
