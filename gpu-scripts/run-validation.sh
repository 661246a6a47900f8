#!/bin/bash
# run-validation.sh - the GPU validation of doc/validation.md, in one go.
#
#   OUT=DIR gpu-scripts/run-validation.sh [CCASIM [TRACES_DIR]]
#
# On a CUDA GPU, for every workload W of TRACES_DIR (default
# traces/pytorch-2.11, or $TRACES_DIR; workloads: $WORKLOADS, default every
# W with a W.default.pickle.xz there) and every setting S of $SETTINGS
# (default: default, ms128 = max_split_size_mb:128, rp4 =
# roundup_power2_divisions:4, exp = expandable_segments:True, cap = the cap
# of W.cap.json, gc = garbage_collection_threshold:0.6,max_split_size_mb:256
# under the cap of W.gc.json), replays W.default:
#   - with `CCASIM gpu replay --touch --json` (the policy on the GPU against
#     the simulation; CCASIM defaults to ./ccasim, e.g. the static build),
#     one after another, alone on the GPU since it reads the driver's
#     used memory;
#   - with gpu-scripts/torch_replay.py (PyTorch's own allocator, a fresh python3
#     process each), JOBS at a time (default 4), replaying the program's
#     empty_cache() calls where ccasim's plan found them (`CCASIM replay
#     --json --whatif`: plan.empty_cache_at) and its private pools, and
#     recording PyTorch's own snapshot;
#   - with `CCASIM replay --json --addresses-from` that snapshot: ccasim's
#     simulation given PyTorch's segment addresses, which tells a driver
#     that placed segments differently from a policy difference
#     (validate/validation-table.py labels each row that differs);
# then `CCASIM gpu calibrate` (CALIBRATE=no skips it), and
# compute-sanitizer's memcheck on one small replay (SANITIZER=none skips
# it).  Writes into $OUT: results.tsv (one row per workload, setting and
# source), table.md (the Markdown table of doc/validation.md, with the
# labels), calibration.json, sanitizer.txt, summary.txt (this script's log)
# and logs.tar.gz (every JSON, snapshot and stderr).  With
# TEST_GPU=path/to/tests/unit/test-gpu it also runs that test program (its TAP
# goes into summary.txt).  Needs python3 with torch for the PyTorch column
# (PYTHON names another interpreter); everything else needs only the
# driver.  TIMEOUT (default 300) bounds each command in seconds.  On an
# H200 with JOBS=8: 79 s for traces/pytorch-2.11, 39 s for
# traces/patterns-2.11 (CALIBRATE=no SANITIZER=none).
set -u
export LC_ALL=C

here=$(cd "$(dirname "$0")/.." && pwd)
ccasim=${1:-./ccasim}
traces=${2:-${TRACES_DIR:-$here/traces/pytorch-2.11}}
jobs=${JOBS:-4}
python=${PYTHON:-python3}
settings=${SETTINGS:-"default ms128 rp4 exp cap gc"}
sanitizer=${SANITIZER:-/usr/local/cuda/bin/compute-sanitizer}
limit=${TIMEOUT:-300}
# the device memory `ccasim replay` assumes (CCA_H200_TOTAL_MEMORY)
h200_total=150109880320

if [ -z "${OUT:-}" ]; then
	echo "run-validation.sh: set OUT to the output directory" >&2
	exit 2
fi
if [ ! -d "$traces" ]; then
	echo "run-validation.sh: $traces: no such directory" >&2
	exit 2
fi
traces=$(cd "$traces" && pwd)
if [ -z "${WORKLOADS:-}" ]; then
	WORKLOADS=
	for f in "$traces"/*.default.pickle.xz; do
		[ -f "$f" ] && WORKLOADS="$WORKLOADS $(basename "$f" .default.pickle.xz)"
	done
fi
workloads=$WORKLOADS
case $ccasim in */*) ;; *) ccasim=./$ccasim ;; esac
ccasim=$(cd "$(dirname "$ccasim")" && pwd)/$(basename "$ccasim")
mkdir -p "$OUT/runs" || exit 2
OUT=$(cd "$OUT" && pwd)
runs=$OUT/runs
log=$OUT/summary.txt
start=$(date +%s)
: >"$log"

say() {
	printf '[%4ss] %s\n' $(($(date +%s) - start)) "$*" | tee -a "$log"
}

# conf_of S: the PYTORCH_CUDA_ALLOC_CONF of setting S
conf_of() {
	case $1 in
	default | cap) echo "" ;;
	ms128) echo "max_split_size_mb:128" ;;
	rp4) echo "roundup_power2_divisions:4" ;;
	exp) echo "expandable_segments:True" ;;
	gc) echo "garbage_collection_threshold:0.6,max_split_size_mb:256" ;;
	*) echo "unknown setting $1" >&2; return 1 ;;
	esac
}

# cap_of W S: the cap in bytes of setting S for workload W, empty for a
# setting without one: cap_bytes of W.S.json (S = cap or gc), or where
# there is no such run the rule the recordings followed (cap: 1.10 x, gc:
# 1.5 x the peak allocated bytes of W.default.json).
cap_of() {
	case $2 in cap | gc) ;; *) return 0 ;; esac
	"$python" - "$traces" "$1" "$2" <<'EOF'
import json, os, sys
d, w, s = sys.argv[1], sys.argv[2], sys.argv[3]
p = os.path.join(d, "%s.%s.json" % (w, s))
if os.path.exists(p) and json.load(open(p)).get("cap_bytes"):
    print(json.load(open(p))["cap_bytes"])
else:
    st = json.load(open(os.path.join(d, w + ".default.json")))["memory_stats"]
    print(int((1.10 if s == "cap" else 1.5) * st["allocated_bytes.all.peak"]))
EOF
}

# fraction_of CAP: min(1, CAP / total memory), as PyTorch's replay sets it
fraction_of() {
	"$python" -c 'import sys; print(repr(min(1.0, int(sys.argv[1]) / int(sys.argv[2]))))' \
		"$1" "$total"
}

# sim_args W S: the options of `ccasim replay` for setting S of workload W
# (one a line)
sim_args() {
	local conf cap
	conf=$(conf_of "$2") || return 1
	[ -n "$conf" ] && printf '%s\n' --config "$conf"
	cap=$(cat "$runs/$1.$2.cap" 2>/dev/null)
	[ -n "$cap" ] && printf '%s\n' --memory-fraction "$(fraction_of "$cap")"
	return 0
}

# empty_cache_at W S: where the program called empty_cache(), from
# ccasim's plan (`replay --json --whatif`, with the cap of S): the
# positions, comma-separated.  A what-if of a trace recorded without a cap
# finds them as it replays and leaves the plan's list null; then the
# planning pass is forced with the trace's own addresses, which makes the
# replay read the entries first (the positions are the recorded run's,
# whatever the replay).  Writes W.S.plan.json; prints nothing for none.
empty_cache_at() {
	local trace=$traces/$1.default.pickle.xz extra=() cap
	cap=$(cat "$runs/$1.$2.cap" 2>/dev/null)
	[ -n "$cap" ] && extra=(--memory-fraction "$(fraction_of "$cap")")
	timeout "$limit" "$ccasim" replay --json --whatif "${extra[@]}" "$trace" \
		>"$runs/$1.$2.plan.json" 2>"$runs/$1.$2.plan.err"
	"$python" - "$runs/$1.$2.plan.json" <<'EOF'
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except (OSError, ValueError):
    sys.exit(3)
at = d.get("plan", {}).get("empty_cache_at")
if at is None and d.get("empty_cache_calls"):
    sys.exit(4)
print(",".join(str(p) for p in at or []))
EOF
	case $? in
	0) return 0 ;;
	4)
		timeout "$limit" "$ccasim" replay --json --whatif "${extra[@]}" \
			--addresses-from "$trace" "$trace" \
			>"$runs/$1.$2.plan.json" 2>>"$runs/$1.$2.plan.err"
		"$python" -c 'import json, sys
at = json.load(open(sys.argv[1]))["plan"]["empty_cache_at"]
print(",".join(str(p) for p in at or []))' "$runs/$1.$2.plan.json" 2>>"$runs/$1.$2.plan.err"
		;;
	*) return 1 ;;
	esac
}

say "ccasim: $ccasim"
say "traces: $traces"
say "workloads: $(echo $workloads); settings: $settings"
if ! "$ccasim" gpu info --json >"$OUT/gpu.json" 2>>"$log"; then
	say "no usable GPU: stopping"
	exit 2
fi
cat "$OUT/gpu.json" | tee -a "$log"
total=$("$python" -c 'import json,sys; print(json.load(open(sys.argv[1]))["total_memory"])' \
	"$OUT/gpu.json")
[ "$total" = "$h200_total" ] ||
	say "warning: total memory $total is not the $h200_total that ccasim replay assumes: the capped addresses-from replays allow another maximum"
nvidia-smi --query-gpu=name,driver_version,memory.used,memory.total --format=csv \
	>>"$log" 2>&1 || true

# the caps, once
for w in $workloads; do
	[ -f "$traces/$w.default.pickle.xz" ] || continue
	for s in $settings; do
		conf_of "$s" >/dev/null || exit 2
		cap=$(cap_of "$w" "$s") || exit 2
		[ -n "$cap" ] && echo "$cap" >"$runs/$w.$s.cap"
	done
done

# ------------------------------------------------ ccasim gpu replay, alone
failures=0
for w in $workloads; do
	trace=$traces/$w.default.pickle.xz
	[ -f "$trace" ] || { say "skip $w: no $trace"; continue; }
	for s in $settings; do
		args=(gpu replay --touch --json --calls -o "$runs/$w.$s.gpu.json")
		conf=$(conf_of "$s")
		[ -n "$conf" ] && args+=(--config "$conf")
		if [ -f "$runs/$w.$s.cap" ]; then
			# another cap than the recording's: a what-if for the
			# prediction too (the GPU run is one anyway)
			args+=(--whatif --memory-fraction "$(fraction_of "$(cat "$runs/$w.$s.cap")")")
		fi
		t0=$(date +%s.%N)
		timeout "$limit" "$ccasim" "${args[@]}" "$trace" 2>"$runs/$w.$s.gpu.err"
		rc=$?
		took=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
		verdict=pass
		[ $rc -eq 1 ] && verdict="FAIL: $(head -c 200 "$runs/$w.$s.gpu.err" | tr '\n' ' ')"
		[ $rc -gt 1 ] && verdict="error $rc: $(head -c 300 "$runs/$w.$s.gpu.err" | tr '\n' ' ')"
		[ $rc -ne 0 ] && failures=$((failures + 1))
		say "$(printf 'gpu   %-12s %-8s %s (%ss)' "$w" "$s" "$verdict" "$took")"
	done
done

# ------------------------------------------------ calibration, sanitizer
if [ "${CALIBRATE:-yes}" != no ]; then
	say "calibrate"
	timeout "$limit" "$ccasim" gpu calibrate -o "$OUT/calibration.json" 2>>"$log" ||
		say "calibrate failed"
fi

first=$(set -- $workloads; echo "${1:-}")
small=multistream
[ -f "$traces/$small.default.pickle.xz" ] || small=$first
if [ -n "$small" ] && { [ -x "$sanitizer" ] || command -v "$sanitizer" >/dev/null 2>&1; }; then
	say "compute-sanitizer memcheck on $small"
	# the sanitizer's own allocations move the driver's figures: a loose
	# tolerance keeps the verdict about memory errors alone
	timeout "$limit" "$sanitizer" --tool memcheck --error-exitcode 99 \
		"$ccasim" gpu replay --touch --tolerance 64GiB \
		"$traces/$small.default.pickle.xz" >"$OUT/sanitizer.txt" 2>&1
	rc=$?
	say "compute-sanitizer exit $rc ($(grep -h 'ERROR SUMMARY' "$OUT/sanitizer.txt" | head -n 1))"
else
	echo "compute-sanitizer not found at $sanitizer" >"$OUT/sanitizer.txt"
	say "no compute-sanitizer"
fi

# ------------------------------------------------ the GPU test program
if [ -n "${TEST_GPU:-}" ]; then
	say "$TEST_GPU"
	top_srcdir=$here timeout "$limit" "$TEST_GPU" --tap >>"$log" 2>&1
	say "test-gpu exit $?"
fi

# ------------------------------------------------ PyTorch, JOBS at a time
# torch_one W S: ccasim's plan (where empty_cache() was called), PyTorch's
# replay with its own snapshot, then ccasim given that snapshot's addresses
torch_one() {
	local w=$1 s=$2 trace=$traces/$1.default.pickle.xz at conf cap rc extra sargs
	at=$(empty_cache_at "$w" "$s") || {
		say "$(printf 'plan  %-12s %-8s failed: %s' "$w" "$s" "$(head -c 200 "$runs/$w.$s.plan.err" | tr '\n' ' ')")"
		at=""
	}
	local args=("$trace" -o "$runs/$w.$s.torch.json" --snapshot "$runs/$w.$s.torch.pickle")
	[ -n "$at" ] && args+=(--empty-cache-at "$at")
	# the program's calls ccasim-record saw, where ccasim places them
	if "$ccasim" info --json "$trace" >"$runs/$w.$s.info.json" 2>/dev/null &&
		grep -q '"kind"' "$runs/$w.$s.info.json"; then
		args+=(--calls-from "$runs/$w.$s.info.json")
	fi
	conf=$(conf_of "$s")
	[ -n "$conf" ] && args+=(--config "$conf")
	cap=$(cat "$runs/$w.$s.cap" 2>/dev/null)
	[ -n "$cap" ] && args+=(--cap "$cap")
	timeout "$limit" "$python" "$here/gpu-scripts/torch_replay.py" "${args[@]}" \
		2>"$runs/$w.$s.torch.err"
	rc=$?
	extra=""
	if [ -s "$runs/$w.$s.torch.pickle" ]; then
		mapfile -t sargs < <(sim_args "$w" "$s")
		timeout "$limit" "$ccasim" replay --json --addresses-from "$runs/$w.$s.torch.pickle" \
			"${sargs[@]}" "$trace" >"$runs/$w.$s.addresses.json" 2>"$runs/$w.$s.addresses.err"
		extra=", addresses-from exit $?"
		[ -s "$runs/$w.$s.addresses.json" ] || rm -f "$runs/$w.$s.addresses.json"
	fi
	say "$(printf 'torch %-12s %-8s exit %d%s%s' "$w" "$s" $rc "${at:+, empty_cache at $at}" "$extra")"
}

if "$python" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' \
	>>"$log" 2>&1; then
	say "torch $("$python" -c 'import torch; print(torch.__version__)'), $jobs at a time"
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
"$python" "$here/validate/validation-table.py" --collect "$runs" -o "$OUT/results.tsv" 2>>"$log"
cal=()
[ -s "$OUT/calibration.json" ] && cal=(--calibration "$OUT/calibration.json")
"$python" "$here/validate/validation-table.py" "$OUT/results.tsv" "${cal[@]}" \
	-o "$OUT/table.md" 2>>"$log"
cat "$OUT/table.md" >>"$log" 2>/dev/null
tar -C "$OUT" -czf "$OUT/logs.tar.gz" runs gpu.json && rm -rf "$runs" "$OUT/gpu.json"
say "done: $failures ccasim gpu replays did not pass; results in $OUT"
[ $failures -eq 0 ]
