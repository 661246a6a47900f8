#!/bin/sh
# bench-live.sh - costs that grow with the live blocks: each command's CPU
# time against `replay`'s on the same trace.
#
# For LIVE in BENCH_LIVE (default "10000 100000 1000000"), writes a trace
# that holds LIVE blocks at once (bench/gen-trace -l LIVE: about 3.75 LIVE
# events, the reserved and allocated peaks rising all through its first
# half) and times, best of BENCH_RUNS (default 3) CPU times (user +
# system):
#   - replay --no-bounds (the reference: one replay of the model);
#   - replay --no-bounds --config expandable_segments:True (target at 1 M
#     live blocks: within 1.5 times replay's);
#   - peak --no-bounds (target within 4 times);
#   - view --no-bounds (target within 6 times), with its peak RSS;
#   - replay, peak and view with their bounds (gen-trace's traces record no
#     settings, so each is a what-if, and each command replays the address
#     models and completion timings of replay's bounds): peak and view
#     against replay, like against like.
# Prints the load average too: CPU times move less than wall times on a
# shared machine, but they still move.
#
# Usage: CCASIM=build/ccasim GEN_TRACE=build/bench/gen-trace bench/bench-live.sh
# BENCH_STRICT=1 exits 1 when a target at 1 M live blocks is missed.
set -eu
ccasim=${CCASIM:-ccasim}
gen=${GEN_TRACE:-$(dirname "$ccasim")/bench/gen-trace}
runs=${BENCH_RUNS:-3}
lives=${BENCH_LIVE:-10000 100000 1000000}
scratch=$(mktemp -d "${TMPDIR:-/tmp}/ccasim-bench-live.XXXXXX")
trap 'rm -rf "$scratch"' EXIT INT TERM
if [ ! -x /usr/bin/time ]; then
	echo "bench-live: skipped (needs /usr/bin/time for CPU times)"
	exit 0
fi

# cpu CMD...: best CPU seconds of RUNS runs; the peak RSS (KiB) of the
# best run in $scratch/rss
cpu() {
	b="" m=""
	for _ in $(seq "$runs"); do
		/usr/bin/time -f '%U %S %M' -o "$scratch/time" "$ccasim" "$@" >/dev/null 2>&1
		read -r u s k <"$scratch/time"
		t=$(awk -v u="$u" -v s="$s" 'BEGIN { printf "%.2f", u + s }')
		if [ -z "$b" ] || awk -v t="$t" -v b="$b" 'BEGIN { exit !(t < b) }'; then
			b=$t m=$k
		fi
	done
	echo "$m" >"$scratch/rss"
	echo "$b"
}

missed=0
echo "bench-live: CPU seconds (user + system), best of $runs; load average $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)"
for live in $lives; do
	trace=$scratch/live$live.msgpack
	"$gen" -l "$live" -o "$trace" >/dev/null
	base=$(cpu replay --no-bounds "$trace")
	exp=$(cpu replay --no-bounds "$trace" --config expandable_segments:True)
	peak=$(cpu peak --no-bounds "$trace")
	view=$(cpu view --no-bounds "$trace" -o "$scratch/view.html")
	rss=$(cat "$scratch/rss")
	bounded=$(cpu replay "$trace")
	bpeak=$(cpu peak "$trace")
	bview=$(cpu view "$trace" -o "$scratch/view.html")
	awk -v n="$live" -v b="$base" -v e="$exp" -v p="$peak" -v v="$view" -v rss="$rss" -v r="$bounded" -v bp="$bpeak" -v bv="$bview" 'BEGIN {
		if (b < 0.01) b = 0.01
		strict = (n >= 1000000)
		printf "  %8d live blocks  replay %7.2f s\n", n, b
		printf "      expandable %7.2f s  %5.2fx replay (target 1.5x%s)\n", e, e / b,
			strict ? (e / b <= 1.5 ? ": met" : ": MISSED") : " at 1M"
		printf "      peak       %7.2f s  %5.2fx replay (target 4x%s)\n", p, p / b,
			strict ? (p / b <= 4 ? ": met" : ": MISSED") : " at 1M"
		printf "      view       %7.2f s  %5.2fx replay (target 6x%s)  peak RSS %d MiB\n", v, v / b,
			strict ? (v / b <= 6 ? ": met" : ": MISSED") : " at 1M", rss / 1024
		if (r < 0.01) r = 0.01
		printf "      with bounds: replay %7.2f s, peak %7.2f s (%5.2fx), view %7.2f s (%5.2fx)\n", r, bp, bp / r, bv, bv / r
		exit (strict && (e / b > 1.5 || p / b > 4 || v / b > 6)) }' || missed=1
	rm -f "$trace"
done
echo "  (load average after: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown))"
if [ "${BENCH_STRICT:-0}" = 1 ] && [ "$missed" = 1 ]; then
	exit 1
fi
exit 0
