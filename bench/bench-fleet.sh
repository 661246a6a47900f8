#!/bin/sh
# bench-fleet.sh - `ccasim fleet run` throughput in (snapshot, setting)
# pairs per second, on one core and on two.
#
# Builds a fleet from the bundled traces: every snapshot of
# traces/bundled.manifest with its cap, the same files again under caps of
# 0.6x to 1.4x their default run's peak allocated (links, so each is its
# own job), cuts of each pytorch-2.11 and patterns-2.11 default trace at
# 1/4, 1/2 and 3/4 of its events (gen-trace -r TRACE -n K), and gen-trace
# synthetic traces of 2 000 to 20 000 events; then runs it under sweep's
# default grid with -j 1 and -j 2 into fresh folders, checks the two merged
# reports are equal, and prints pairs, seconds and pairs per second.
#
# Usage: CCASIM=build/ccasim GEN_TRACE=build/bench/gen-trace bench/bench-fleet.sh
# Environment: CCASIM (default ccasim), GEN_TRACE (default: next to
# $CCASIM in bench/), BENCH_SYNTH (synthetic traces, default 250).
set -eu
srcdir=$(cd "$(dirname "$0")/.." && pwd)
ccasim=${CCASIM:-ccasim}
gen=${GEN_TRACE:-$(dirname "$(command -v "$ccasim")")/bench/gen-trace}
synth=${BENCH_SYNTH:-250}
scratch=$(mktemp -d "${TMPDIR:-/tmp}/ccasim-bench-fleet.XXXXXX")
trap 'rm -rf "$scratch"' EXIT INT TERM
t=$srcdir/traces
m=$scratch/fleet.manifest
mkdir -p "$scratch/caps" "$scratch/cuts" "$scratch/synth"

sed "s|^\([a-z]\)|$t/\1|" "$t/bundled.manifest" >"$m"
for json in "$t"/pytorch-2.11/*.default.json "$t"/patterns-2.11/*.default.json; do
	base=${json%.json}
	[ -f "$base.pickle.xz" ] || continue
	name=$(basename "$base")
	peak=$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["memory_stats"]["allocated_bytes.all.peak"])' "$json")
	for pct in 60 70 80 90 100 110 120 140; do
		ln -s "$base.pickle.xz" "$scratch/caps/$name.cap$pct.pickle.xz"
		echo "$scratch/caps/$name.cap$pct.pickle.xz cap=$((peak * pct / 100))" >>"$m"
	done
	events=$("$ccasim" info --json "$base.pickle.xz" | /usr/bin/python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["devices"][0]["events"])' 2>/dev/null || echo 0)
	for q in 1 2 3; do
		k=$((events * q / 4))
		[ "$k" -gt 0 ] || continue
		"$gen" -r "$base.pickle.xz" -n "$k" -o "$scratch/cuts/$name.cut$q.msgpack" >/dev/null
	done
done
i=1
while [ $i -le "$synth" ]; do
	"$gen" -n $((2000 + (i * 7919) % 18000)) -s $i -o "$scratch/synth/gen$i.msgpack" >/dev/null
	i=$((i + 1))
done

echo "fleet: load average before the runs: $(cut -d" " -f1-3 /proc/loadavg) on $(getconf _NPROCESSORS_ONLN) cores (others busy the cores: figures drop)"
for j in 1 2; do
	t0=$(date +%s%N)
	"$ccasim" fleet run "$m" "$scratch/cuts" "$scratch/synth" --out "$scratch/run$j" -j $j --no-progress 2>"$scratch/err$j"
	t1=$(date +%s%N)
	pairs=$(cat "$scratch"/run$j/rows.*.jsonl | wc -l)
	snaps=$(cut -d, -f1 "$scratch"/run$j/rows.*.jsonl | sort -u | wc -l)
	ms=$(((t1 - t0) / 1000000))
	echo "fleet -j $j: $snaps snapshots, $pairs (snapshot, setting) pairs in $ms ms: $((pairs * 1000 / (ms > 0 ? ms : 1))) pairs/s"
done
"$ccasim" fleet merge "$scratch/run1" >"$scratch/r1"
"$ccasim" fleet merge "$scratch/run2" >"$scratch/r2"
if cmp -s "$scratch/r1" "$scratch/r2"; then echo "fleet: -j 1 and -j 2 give the same report"; else
	echo "fleet: -j 1 and -j 2 reports differ" >&2
	exit 1
fi
