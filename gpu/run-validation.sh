#!/bin/bash
# run-validation.sh - the GPU validation of doc/validation.md, in one go.
#
#   OUT=DIR gpu/run-validation.sh [CCASIM [TRACES_DIR]]
#
# On a CUDA GPU, for every workload W of TRACES_DIR (default
# traces/pytorch-2.11) and every setting S (default, max_split_size_mb:128,
# roundup_power2_divisions:4, expandable_segments:True, and the cap of
# W.cap.json), replays W.default:
#   - with `CCASIM gpu replay --touch --json` (the policy on the GPU against
#     the simulation; CCASIM defaults to ./ccasim, e.g. the static build),
#     one after another, alone on the GPU since it reads the driver's
#     used memory;
#   - with tools/torch_replay.py (PyTorch's own allocator, a fresh python3
#     process each), JOBS at a time (default 4);
# then `CCASIM gpu calibrate`, and compute-sanitizer's memcheck on one small
# replay.  Writes into $OUT: results.tsv (one row per workload, setting and
# source), table.md (the Markdown table of doc/validation.md),
# calibration.json, sanitizer.txt, summary.txt (this script's log) and
# logs.tar.gz (every JSON and stderr).  With TEST_GPU=path/to/tests/test-gpu
# it also runs that test program (its TAP goes into summary.txt).  Needs python3 with torch for the
# PyTorch column; everything else needs only the driver.  About 3-6 minutes
# on an H200.
set -u
export LC_ALL=C

here=$(cd "$(dirname "$0")/.." && pwd)
ccasim=${1:-./ccasim}
traces=${2:-$here/traces/pytorch-2.11}
jobs=${JOBS:-4}
python=${PYTHON:-python3}
workloads=${WORKLOADS:-"seedfrag resnet152 bert gpt2gen multistream dyninfer stacks"}
settings=${SETTINGS:-"default ms128 rp4 exp cap"}
sanitizer=${SANITIZER:-/usr/local/cuda/bin/compute-sanitizer}

if [ -z "${OUT:-}" ]; then
	echo "run-validation.sh: set OUT to the output directory" >&2
	exit 2
fi
case $ccasim in */*) ;; *) ccasim=./$ccasim ;; esac
ccasim=$(cd "$(dirname "$ccasim")" && pwd)/$(basename "$ccasim")
mkdir -p "$OUT/runs" || exit 2
runs=$OUT/runs
log=$OUT/summary.txt
start=$(date +%s)
: >"$log"

say() {
	printf '[%4ss] %s\n' $(($(date +%s) - start)) "$*" | tee -a "$log"
}

conf_of() {
	case $1 in
	default | cap) echo "" ;;
	ms128) echo "max_split_size_mb:128" ;;
	rp4) echo "roundup_power2_divisions:4" ;;
	exp) echo "expandable_segments:True" ;;
	*) echo "unknown setting $1" >&2; return 1 ;;
	esac
}

# cap_of W: the cap in bytes of W's capped run (W.cap.json), or 1.10 x the
# peak allocated bytes of W.default.json where there is no capped run.
cap_of() {
	"$python" - "$traces" "$1" <<'EOF'
import json, os, sys
d, w = sys.argv[1], sys.argv[2]
p = os.path.join(d, w + ".cap.json")
if os.path.exists(p):
    print(json.load(open(p))["cap_bytes"])
else:
    s = json.load(open(os.path.join(d, w + ".default.json")))["memory_stats"]
    print(int(1.10 * s["allocated_bytes.all.peak"]))
EOF
}

say "ccasim: $ccasim"
say "traces: $traces"
if ! "$ccasim" gpu info --json >"$OUT/gpu.json" 2>>"$log"; then
	say "no usable GPU: stopping"
	exit 2
fi
cat "$OUT/gpu.json" | tee -a "$log"
total=$("$python" -c 'import json,sys; print(json.load(open(sys.argv[1]))["total_memory"])' \
	"$OUT/gpu.json")
nvidia-smi --query-gpu=name,driver_version,memory.used,memory.total --format=csv \
	>>"$log" 2>&1 || true

# ------------------------------------------------ ccasim gpu replay, alone
failures=0
for w in $workloads; do
	trace=$traces/$w.default.pickle.xz
	[ -f "$trace" ] || { say "skip $w: no $trace"; continue; }
	for s in $settings; do
		args=(gpu replay --touch --json --calls -o "$runs/$w.$s.gpu.json")
		conf=$(conf_of "$s") || exit 2
		[ -n "$conf" ] && args+=(--config "$conf")
		if [ "$s" = cap ]; then
			cap=$(cap_of "$w")
			fraction=$("$python" -c 'import sys; print(repr(min(1.0, int(sys.argv[1]) / int(sys.argv[2]))))' "$cap" "$total")
			# another cap than the recording's: a what-if for the
			# prediction too (the GPU run is one anyway)
			args+=(--whatif --memory-fraction "$fraction")
			echo "$cap" >"$runs/$w.cap.bytes"
		fi
		t0=$(date +%s.%N)
		timeout 300 "$ccasim" "${args[@]}" "$trace" 2>"$runs/$w.$s.gpu.err"
		rc=$?
		took=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
		verdict=pass
		[ $rc -eq 1 ] && verdict=FAIL
		[ $rc -gt 1 ] && verdict="error $rc: $(head -c 300 "$runs/$w.$s.gpu.err")"
		[ $rc -ne 0 ] && failures=$((failures + 1))
		say "$(printf 'gpu   %-12s %-8s %s (%ss)' "$w" "$s" "$verdict" "$took")"
	done
done

# ------------------------------------------------ calibration, sanitizer
say "calibrate"
"$ccasim" gpu calibrate -o "$OUT/calibration.json" 2>>"$log" || say "calibrate failed"

if [ -x "$sanitizer" ] || command -v "$sanitizer" >/dev/null 2>&1; then
	say "compute-sanitizer memcheck on multistream"
	# the sanitizer's own allocations move the driver's figures: a loose
	# tolerance keeps the verdict about memory errors alone
	timeout 300 "$sanitizer" --tool memcheck --error-exitcode 99 \
		"$ccasim" gpu replay --touch --tolerance 64GiB \
		"$traces/multistream.default.pickle.xz" >"$OUT/sanitizer.txt" 2>&1
	rc=$?
	say "compute-sanitizer exit $rc ($(grep -h 'ERROR SUMMARY' "$OUT/sanitizer.txt" | head -n 1))"
else
	echo "compute-sanitizer not found at $sanitizer" >"$OUT/sanitizer.txt"
	say "no compute-sanitizer"
fi

# ------------------------------------------------ the GPU test program
if [ -n "${TEST_GPU:-}" ]; then
	say "$TEST_GPU"
	top_srcdir=$here "$TEST_GPU" --tap >>"$log" 2>&1
	say "test-gpu exit $?"
fi

# ------------------------------------------------ PyTorch, JOBS at a time
if "$python" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' \
	>>"$log" 2>&1; then
	say "torch $("$python" -c 'import torch; print(torch.__version__)'), $jobs at a time"
	torch_one() {
		w=$1 s=$2
		args=("$traces/$w.default.pickle.xz" -o "$runs/$w.$s.torch.json")
		conf=$(conf_of "$s")
		[ -n "$conf" ] && args+=(--config "$conf")
		[ "$s" = cap ] && args+=(--cap "$(cat "$runs/$w.cap.bytes" 2>/dev/null || cap_of "$w")")
		timeout 300 "$python" "$here/tools/torch_replay.py" "${args[@]}" \
			2>"$runs/$w.$s.torch.err"
		rc=$?
		say "$(printf 'torch %-12s %-8s exit %d' "$w" "$s" $rc)"
	}
	for w in $workloads; do
		[ -f "$traces/$w.default.pickle.xz" ] || continue
		for s in $settings; do
			while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n; done
			torch_one "$w" "$s" &
		done
	done
	wait
else
	say "python3 has no torch with CUDA: no PyTorch column"
fi

# ------------------------------------------------ tables
"$python" "$here/tools/validation-table.py" --collect "$runs" -o "$OUT/results.tsv" 2>>"$log"
"$python" "$here/tools/validation-table.py" "$OUT/results.tsv" \
	--calibration "$OUT/calibration.json" -o "$OUT/table.md" 2>>"$log"
cat "$OUT/table.md" >>"$log" 2>/dev/null
tar -C "$OUT" -czf "$OUT/logs.tar.gz" runs gpu.json && rm -rf "$runs" "$OUT/gpu.json"
say "done: $failures ccasim gpu replays did not pass; results in $OUT"
[ $failures -eq 0 ]
