#!/bin/sh
# bench-sweep.sh - `ccasim sweep` of the default grid, one thread and all cores.
#
# Sweeps traces/pytorch-2.11/gpt2gen.default (256k events; decompressed to
# a scratch pickle first, so xz is not timed) under the default grid, best
# of BENCH_RUNS (default 3) wall times each for -j 1, -j 2 and -j N (all
# cores), and prints the speed-ups and the target: under one second on two
# cores.  Also checks that every thread count prints the same table.
#
# Usage: CCASIM=build/ccasim bench/bench-sweep.sh [TRACE]
# Environment: CCASIM (default: ccasim on PATH), BENCH_RUNS (default 3),
# BENCH_STRICT=1 to exit 1 when the target is missed.
set -eu
srcdir=$(cd "$(dirname "$0")/.." && pwd)
ccasim=${CCASIM:-ccasim}
runs=${BENCH_RUNS:-3}
trace=${1:-$srcdir/traces/pytorch-2.11/gpt2gen.default.pickle.xz}
cores=$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 1)
scratch=$(mktemp -d "${TMPDIR:-/tmp}/ccasim-bench.XXXXXX")
trap 'rm -rf "$scratch"' EXIT INT TERM

case $trace in
*.xz) xz -dc "$trace" >"$scratch/trace.pickle" ;;
*.gz) gzip -dc "$trace" >"$scratch/trace.pickle" ;;
*) cp "$trace" "$scratch/trace.pickle" ;;
esac

now_ns() { date +%s%N; }

# best JOBS: best wall time (ns) of $runs sweeps on JOBS threads.
best() {
	b=
	for i in $(seq "$runs"); do
		t0=$(now_ns)
		"$ccasim" sweep "$scratch/trace.pickle" -j "$1" --no-progress >"$scratch/out.$1"
		t1=$(now_ns)
		t=$((t1 - t0))
		if [ -z "$b" ] || [ "$t" -lt "$b" ]; then b=$t; fi
	done
	echo "$b"
}

rows=$("$ccasim" sweep "$scratch/trace.pickle" --csv -j "$cores" --no-progress | tail -n +2 | wc -l)
t1=$(best 1)
t2=$(best 2)
tn=$(best "$cores")
same=yes
cmp -s "$scratch/out.1" "$scratch/out.2" || same=NO
cmp -s "$scratch/out.1" "$scratch/out.$cores" || same=NO
echo "bench-sweep: $(basename "$trace"), default grid ($rows settings), best of $runs, $cores cores"
echo "  (wall times of whole runs: loading the pickle is included; the load average was $(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo unknown))"
awk -v t1="$t1" -v t2="$t2" -v tn="$tn" -v n="$cores" -v same="$same" 'BEGIN {
	printf "  -j 1:  %8.3f s\n", t1 / 1e9
	printf "  -j 2:  %8.3f s  speed-up %.2fx  (target < 1 s on two cores: %s)\n",
		t2 / 1e9, t1 / t2, (t2 < 1e9 ? "met" : "MISSED")
	if (n > 2)
		printf "  -j %d: %8.3f s  speed-up %.2fx\n", n, tn / 1e9, t1 / tn
	printf "  same table on 1, 2 and %d threads: %s\n", n, same
}'
if [ "${BENCH_STRICT:-0}" = 1 ] && { [ "$t2" -ge 1000000000 ] || [ "$same" != yes ]; }; then
	exit 1
fi
exit 0
