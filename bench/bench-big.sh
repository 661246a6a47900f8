#!/bin/sh
# bench-big.sh - a 1 GB msgpack trace and a 1 GB pickle still replay, and
# how long and how much memory they take, against a baseline binary.
#
# Writes, in a scratch directory (about 2 GB of disk), a msgpack trace of
# about 1 GB (bench/gen-trace, 36 M events) and a pickle of about 1 GB (the
# simulated run of a 14.2 M-event generated trace, `ccasim export`), then
# replays each BENCH_RUNS times (default 3) with $CCASIM and, when
# BENCH_BASELINE names another ccasim (an older build), with it too,
# alternating so that both see the same machine.  Prints the best CPU time
# (and that run's wall time) and the peak RSS (VmHWM, mapped trace pages included) and the heap
# (RssAnon) of each, and the change against the baseline (the target: no
# regression beyond 5 %).
#
# Slow (a minute or more) and disk-hungry, so `make bench` runs it only
# with BENCH_BIG=1.  BENCH_DIR keeps the traces there between runs.
#
# Usage: CCASIM=build/ccasim [BENCH_BASELINE=old/ccasim] bench/bench-big.sh
set -eu
ccasim=${CCASIM:-ccasim}
gen=${GEN_TRACE:-$(dirname "$ccasim")/bench/gen-trace}
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

# one BINARY TRACE: prints "WALL_MS CPU_MS VMHWM_KB RSSANON_KB" of one
# replay.  CPU time (user + system, from /usr/bin/time where installed)
# is what the comparison uses: it moves less than the wall time when other
# work shares the machine.
one() {
	t0=$(date +%s%N)
	if [ -x /usr/bin/time ]; then
		CCASIM_MEMORY_REPORT=1 /usr/bin/time -f 'cpu: %U %S' -o "$dir/cpu" \
			"$1" replay "$2" >/dev/null 2>"$dir/mem"
		cpu=$(awk '/^cpu:/ { printf "%d", ($2 + $3) * 1000 }' "$dir/cpu")
	else
		CCASIM_MEMORY_REPORT=1 "$1" replay "$2" >/dev/null 2>"$dir/mem"
		cpu=
	fi
	t1=$(date +%s%N)
	hwm=$(sed -n 's/^memory: VmHWM:[[:space:]]*\([0-9]*\).*/\1/p' "$dir/mem")
	anon=$(sed -n 's/^memory: RssAnon:[[:space:]]*\([0-9]*\).*/\1/p' "$dir/mem")
	wall=$(((t1 - t0) / 1000000))
	echo "$wall ${cpu:-$wall} ${hwm:-0} ${anon:-0}"
}

# bench NAME TRACE: best of RUNS for each binary, alternating.
bench() {
	name=$1 trace=$2 wn= cn= wb= cb= mn=0 mb=0 an=0 ab=0
	for _ in $(seq "$runs"); do
		read -r w c m a <<-EOT
		$(one "$ccasim" "$trace")
		EOT
		if [ -z "$cn" ] || [ "$c" -lt "$cn" ]; then cn=$c wn=$w; fi
		mn=$m an=$a
		if [ -n "$base" ]; then
			read -r w c m a <<-EOT
			$(one "$base" "$trace")
			EOT
			if [ -z "$cb" ] || [ "$c" -lt "$cb" ]; then cb=$c wb=$w; fi
			mb=$m ab=$a
		fi
	done
	size=$(($(wc -c <"$trace") / 1048576))
	awk -v name="$name" -v size="$size" -v w="$wn" -v c="$cn" -v m="$mn" -v a="$an" 'BEGIN {
		printf "%-8s %5d MiB  now:  %6.2f s cpu %6.2f s wall  peak RSS %5d MiB  heap %4d MiB\n",
			name, size, c / 1000, w / 1000, m / 1024, a / 1024 }'
	[ -n "$base" ] || return 0
	awk -v w="$wb" -v c="$cb" -v m="$mb" -v a="$ab" -v cn="$cn" -v mn="$mn" 'BEGIN {
		printf "                base: %6.2f s cpu %6.2f s wall  peak RSS %5d MiB  heap %4d MiB  (cpu %+.1f %%, peak RSS %+.1f %%)\n",
			c / 1000, w / 1000, m / 1024, a / 1024, (cn - c) * 100 / c, (mn - m) * 100 / m }'
}

bench msgpack "$dir/big.msgpack"
bench pickle "$dir/big.pickle"
