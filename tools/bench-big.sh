#!/bin/sh
# bench-big.sh - a 1 GB msgpack trace and a 1 GB pickle still replay, and
# how long and how much memory they take, against a baseline binary.
#
# Writes, in a scratch directory (about 2 GB of disk), a msgpack trace of
# about 1 GB (tools/gen-trace, 36 M events) and a pickle of about 1 GB (the
# simulated run of a 14.2 M-event generated trace, `ccasim export`), then
# replays each BENCH_RUNS times (default 3) with $CCASIM and, when
# BENCH_BASELINE names another ccasim (an older build), with it too,
# alternating so that both see the same machine.  Prints the best wall time
# and the peak RSS (VmHWM, mapped trace pages included) and the heap
# (RssAnon) of each, and the change against the baseline (the target: no
# regression beyond 5 %).
#
# Slow (a minute or more) and disk-hungry, so `make bench` runs it only
# with BENCH_BIG=1.  BENCH_DIR keeps the traces there between runs.
#
# Usage: CCASIM=build/ccasim [BENCH_BASELINE=old/ccasim] tools/bench-big.sh
set -eu
ccasim=${CCASIM:-ccasim}
gen=${GEN_TRACE:-$(dirname "$ccasim")/tools/gen-trace}
base=${BENCH_BASELINE:-}
runs=${BENCH_RUNS:-3}
if [ -z "${BENCH_BIG:-}" ] && [ -z "${BENCH_DIR:-}" ]; then
	echo "bench-big: skipped (set BENCH_BIG=1: writes 2 GB of traces)"
	exit 0
fi
if [ -n "${BENCH_DIR:-}" ]; then
	dir=$BENCH_DIR
	mkdir -p "$dir"
else
	dir=$(mktemp -d "${TMPDIR:-/tmp}/ccasim-bench-big.XXXXXX")
	trap 'rm -rf "$dir"' EXIT INT TERM
fi

[ -f "$dir/big.msgpack" ] || "$gen" -n 36000000 -s 7 -o "$dir/big.msgpack" >/dev/null
if [ ! -f "$dir/big.pickle" ]; then
	"$gen" -n 14200000 -s 7 -o "$dir/mid.msgpack" >/dev/null
	"$ccasim" export "$dir/mid.msgpack" -o "$dir/big.pickle" >/dev/null
	rm -f "$dir/mid.msgpack"
fi

# one BINARY TRACE: prints "SECONDS VMHWM_KB RSSANON_KB" of one replay.
one() {
	t0=$(date +%s%N)
	CCASIM_MEMORY_REPORT=1 "$1" replay "$2" >/dev/null 2>"$dir/mem"
	t1=$(date +%s%N)
	hwm=$(sed -n 's/^memory: VmHWM:[[:space:]]*\([0-9]*\).*/\1/p' "$dir/mem")
	anon=$(sed -n 's/^memory: RssAnon:[[:space:]]*\([0-9]*\).*/\1/p' "$dir/mem")
	echo "$(((t1 - t0) / 1000000)) ${hwm:-0} ${anon:-0}"
}

# bench NAME TRACE: best of RUNS for each binary, alternating.
bench() {
	name=$1 trace=$2 bn= bb= mn=0 mb=0 an=0 ab=0
	for _ in $(seq "$runs"); do
		read -r t m a <<-EOT
		$(one "$ccasim" "$trace")
		EOT
		if [ -z "$bn" ] || [ "$t" -lt "$bn" ]; then bn=$t; fi
		mn=$m an=$a
		if [ -n "$base" ]; then
			read -r t m a <<-EOT
			$(one "$base" "$trace")
			EOT
			if [ -z "$bb" ] || [ "$t" -lt "$bb" ]; then bb=$t; fi
			mb=$m ab=$a
		fi
	done
	size=$(($(wc -c <"$trace") / 1048576))
	awk -v name="$name" -v size="$size" -v t="$bn" -v m="$mn" -v a="$an" 'BEGIN {
		printf "%-8s %5d MiB  now:  %6.2f s  peak RSS %5d MiB  heap %4d MiB\n",
			name, size, t / 1000, m / 1024, a / 1024 }'
	[ -n "$base" ] || return 0
	awk -v t="$bb" -v m="$mb" -v a="$ab" -v tn="$bn" -v mn="$mn" 'BEGIN {
		printf "                base: %6.2f s  peak RSS %5d MiB  heap %4d MiB  (time %+.1f %%, peak RSS %+.1f %%)\n",
			t / 1000, m / 1024, a / 1024, (tn - t) * 100 / t, (mn - m) * 100 / m }'
}

bench msgpack "$dir/big.msgpack"
bench pickle "$dir/big.pickle"
