#!/bin/sh
# bench-engine.sh - what the plan saves (doc/architecture.md, "Glossary": plan): one replay per run.
#
# Best of BENCH_RUNS (default 3) wall times, with $CCASIM and, when
# BENCH_BASELINE names an older ccasim, with it too:
#   - replay of a what-if (--config max_split_size_mb:128, one thread) on
#     a 2 M-event trace: gpt2gen.default repeated by bench/gen-trace -r,
#     with an empty_cache() burst between repetitions (target 12 M
#     events/s, replay alone);
#   - fit over the default grid on 2 threads of bert.default (56 k events)
#     (target < 3 s) and of a 450 k-event trace (gpt2gen repeated; target
#     < 2 s);
#   - sweep of 21 settings over a 1 M-event trace (gpt2gen repeated), on
#     1 thread and on 2 (target < 0.6 s on 2 cores).
# Each binary's rows start with the load average: wall times drop when
# other work shares the cores.
#
# Usage: CCASIM=build/ccasim [BENCH_BASELINE=old/ccasim] bench/bench-engine.sh
set -eu
srcdir=$(cd "$(dirname "$0")/.." && pwd)
ccasim=${CCASIM:-ccasim}
gen=${GEN_TRACE:-$(dirname "$ccasim")/bench/gen-trace}
base=${BENCH_BASELINE:-}
runs=${BENCH_RUNS:-3}
scratch=$(mktemp -d "${TMPDIR:-/tmp}/ccasim-bench-engine.XXXXXX")
trap 'rm -rf "$scratch"' EXIT INT TERM

xz -dc "$srcdir/traces/pytorch-2.11/gpt2gen.default.pickle.xz" >"$scratch/gpt2gen.pickle"
"$ccasim" convert "$scratch/gpt2gen.pickle" -o "$scratch/gpt2gen.msgpack"
"$gen" -r "$scratch/gpt2gen.msgpack" -n 2000000 -o "$scratch/w2m.msgpack" >/dev/null
"$gen" -r "$scratch/gpt2gen.msgpack" -n 1000000 -o "$scratch/w1m.msgpack" >/dev/null
"$gen" -r "$scratch/gpt2gen.msgpack" -n 450000 -o "$scratch/w450k.msgpack" >/dev/null
xz -dc "$srcdir/traces/pytorch-2.11/bert.default.pickle.xz" >"$scratch/bert.pickle"
"$ccasim" convert "$scratch/bert.pickle" -o "$scratch/bert.msgpack"

# best BINARY CMD...: best wall seconds of RUNS runs (and of the replay
# alone, from CCASIM_TIMING, in $scratch/alone)
best() {
	bin=$1
	shift
	b= a=
	for _ in $(seq "$runs"); do
		t0=$(date +%s%N)
		CCASIM_TIMING=1 "$bin" "$@" >/dev/null 2>"$scratch/err"
		t1=$(date +%s%N)
		t=$((t1 - t0))
		if [ -z "$b" ] || [ "$t" -lt "$b" ]; then b=$t; fi
		x=$(sed -n 's/^timing: replay of device 0: \([0-9.]*\) s/\1/p' "$scratch/err")
		if [ -n "$x" ]; then a=$(awk -v a="$a" -v x="$x" 'BEGIN { print (a == "" || x < a) ? x : a }'); fi
	done
	echo "$a" >"$scratch/alone"
	awk -v ns="$b" 'BEGIN { printf "%.3f", ns / 1e9 }'
}

row() { # NAME BINARY CMD...
	name=$1
	shift
	t=$(best "$@")
	alone=$(cat "$scratch/alone")
	case $name in
	*no-bounds) printf "  %-22s %7.3f s (one replay per row)\n" "$name" "$t" ;;
	whatif*) awk -v n="$name" -v t="$t" -v a="$alone" 'BEGIN {
		printf "  %-22s %7.3f s  replay alone %.3f s = %5.2f M events/s (target 12: %s)\n",
			n, t, a, 2 / a, (2 / a >= 12 ? "met" : "MISSED") }' ;;
	fit\ 450k*) awk -v n="$name" -v t="$t" 'BEGIN {
		printf "  %-22s %7.3f s (target < 2 s: %s)\n", n, t, (t < 2 ? "met" : "MISSED") }' ;;
	fit*) awk -v n="$name" -v t="$t" 'BEGIN {
		printf "  %-22s %7.3f s (target < 3 s: %s)\n", n, t, (t < 3 ? "met" : "MISSED") }' ;;
	*-j2) awk -v n="$name" -v t="$t" 'BEGIN {
		printf "  %-22s %7.3f s (target < 0.6 s: %s)\n", n, t, (t < 0.6 ? "met" : "MISSED") }' ;;
	*) printf "  %-22s %7.3f s\n" "$name" "$t" ;;
	esac
}

grid="-s max_split_size_mb=default,32,64,128,256,512,1024 -s roundup_power2_divisions=default,4,8"
for bin in "$ccasim" $base; do
	echo "bench-engine: $bin (load average $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown))"
	row "whatif-2M" "$bin" replay "$scratch/w2m.msgpack" --config max_split_size_mb:128
	row "fit bert.default -j2" "$bin" fit -j 2 --no-progress "$scratch/bert.msgpack"
	row "fit 450k -j2" "$bin" fit -j 2 --no-progress "$scratch/w450k.msgpack"
	# shellcheck disable=SC2086
	row "sweep 1M x 21 -j1" "$bin" sweep -j 1 --no-progress $grid "$scratch/w1m.msgpack"
	# shellcheck disable=SC2086
	row "sweep 1M x 21 -j2" "$bin" sweep -j 2 --no-progress $grid "$scratch/w1m.msgpack"
	# one replay per row (the driver's placement alone), against the
	# default's replays of each row with address ties under every
	# address model (doc/driver-va.md, "The cost")
	row "fit 450k -j2 no-bounds" "$bin" fit -j 2 --no-progress --no-bounds "$scratch/w450k.msgpack"
	# shellcheck disable=SC2086
	row "sweep 1M x 21 no-bounds" "$bin" sweep -j 2 --no-progress --no-bounds $grid \
		"$scratch/w1m.msgpack"
done
