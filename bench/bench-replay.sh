#!/bin/sh
# bench-replay.sh - replay speed in trace events per second, one thread.
#
# Replays (best of BENCH_RUNS, default 3) with `ccasim replay`:
#   - gpt2gen.default (256k events), converted to msgpack first;
#   - a synthetic trace of 10 million events written by bench/gen-trace.
# Prints wall time, events per second against the target (10 million per
# second), and the memory figures ccasim reports with CCASIM_MEMORY_REPORT:
# RssAnon (the heap: live blocks and buffers) must not grow with the trace,
# while VmHWM also counts the pages of the mapped trace file.
#
# Usage: CCASIM=build/ccasim GEN_TRACE=build/bench/gen-trace bench/bench-replay.sh
set -eu
srcdir=$(cd "$(dirname "$0")/.." && pwd)
ccasim=${CCASIM:-ccasim}
gen=${GEN_TRACE:-$(dirname "$ccasim")/bench/gen-trace}
runs=${BENCH_RUNS:-3}
scratch=$(mktemp -d "${TMPDIR:-/tmp}/ccasim-bench.XXXXXX")
trap 'rm -rf "$scratch"' EXIT INT TERM

now_ns() { date +%s%N; }

# bench NAME TRACE EVENTS
bench() {
	best=
	: >"$scratch/times"
	for i in $(seq "$runs"); do
		t0=$(now_ns)
		CCASIM_MEMORY_REPORT=1 CCASIM_TIMING=1 "$ccasim" replay "$2" >/dev/null 2>"$scratch/mem"
		t1=$(now_ns)
		t=$((t1 - t0))
		grep '^timing:' "$scratch/mem" >>"$scratch/times"
		if [ -z "$best" ] || [ "$t" -lt "$best" ]; then best=$t; fi
	done
	awk -v name="$1" -v ns="$best" -v n="$3" 'BEGIN {
		rate = n / (ns / 1e9);
		printf "%-18s %10d events  %8.3f s  %6.2f M events/s whole process\n",
			name, n, ns / 1e9, rate / 1e6 }'
	# the replay alone (no process start, no loading), best of the runs
	awk -v n="$3" '/^timing: replay/ { if (best == "" || $6 < best) best = $6 }
		END { if (best != "") printf "    replay alone: %.3f s  %.2f M events/s  (target 10: %s)\n",
			best, n / best / 1e6, (n / best >= 1e7 ? "met" : "MISSED") }' "$scratch/times"
	sed -n 's/^memory:/    memory:/p' "$scratch/mem"
}

xz -dc "$srcdir/traces/pytorch-2.11/gpt2gen.default.pickle.xz" >"$scratch/gpt2gen.pickle"
"$ccasim" convert "$scratch/gpt2gen.pickle" -o "$scratch/gpt2gen.msgpack"
bench gpt2gen.default "$scratch/gpt2gen.msgpack" 256016
"$gen" -n 10000000 -o "$scratch/synthetic.msgpack" >/dev/null
n=$("$ccasim" info --json "$scratch/synthetic.msgpack" | sed -n 's/.*"events": *\([0-9]*\).*/\1/p' | head -1)
bench synthetic-10M "$scratch/synthetic.msgpack" "$n"
"$gen" -n 1000000 -o "$scratch/synthetic1m.msgpack" >/dev/null
n1=$("$ccasim" info --json "$scratch/synthetic1m.msgpack" | sed -n 's/.*"events": *\([0-9]*\).*/\1/p' | head -1)
bench synthetic-1M "$scratch/synthetic1m.msgpack" "$n1"
