#!/bin/sh
# bench-convert.sh - times `ccasim convert` against Python doing the same job.
#
# Decompresses traces/pytorch-2.11/gpt2gen.default.pickle.xz (about 18 MB of
# pickle) to a scratch directory, then, best of 3 runs each after one
# untimed warm-up run each, times
#   ccasim convert TRACE -o OUT.msgpack
#   /usr/bin/python3: msgpack.packb(pickle.load(TRACE))   (python3-msgpack)
# and prints both wall times, the speed-up, ccasim's peak RSS and the pickle
# size against the targets: at least 8x faster than Python, peak RSS under
# twice the pickle's size.  Wall times are whole processes (start-up
# included) for both; Python's in-process load+pack time is shown too.
#
# Usage: CCASIM=build/ccasim bench/bench-convert.sh [TRACE.pickle[.xz]]
# Environment: CCASIM (default: ccasim on PATH), BENCH_RUNS (default 3),
# BENCH_WARMUP (untimed runs before them, default 1), BENCH_STRICT=1 to
# exit 1 when a target is missed.  The warm-up run reads the program, its
# libraries and the pickle back into the page cache when the machine has
# evicted them while idle, and leaves the output file in place, so that
# every timed run of either side replaces its previous output.
# Peak RSS comes from /usr/bin/time -f %M when installed (Debian: time),
# else from wait4()'s rusage through python3, else it is not reported.
set -eu

srcdir=$(cd "$(dirname "$0")/.." && pwd)
ccasim=${CCASIM:-ccasim}
runs=${BENCH_RUNS:-3}
warmup=${BENCH_WARMUP:-1}
trace=${1:-$srcdir/traces/pytorch-2.11/gpt2gen.default.pickle.xz}
python=/usr/bin/python3
[ -x "$python" ] || python=$(command -v python3 || true)

if ! "$ccasim" --version >/dev/null 2>&1; then
	echo "bench-convert: no working ccasim at '$ccasim' (set CCASIM)" >&2
	exit 1
fi

scratch=$(mktemp -d "${TMPDIR:-/tmp}/ccasim-bench.XXXXXX")
trap 'rm -rf "$scratch"' EXIT INT TERM

pickle=$scratch/trace.pickle
case $trace in
*.xz) xz -dc "$trace" >"$pickle" ;;
*.gz) gzip -dc "$trace" >"$pickle" ;;
*) cp "$trace" "$pickle" ;;
esac
pickle_bytes=$(wc -c <"$pickle")

now_ns() {
	date +%s%N
}

# measure CMD...: runs CMD once with output discarded; prints
# "WALL_SECONDS PEAK_RSS_KIB" (RSS "-" when unknown).  Fails when CMD does.
measure() {
	if [ -x /usr/bin/time ]; then
		t0=$(now_ns)
		/usr/bin/time -f %M -o "$scratch/rss" "$@" >/dev/null 2>"$scratch/err" || {
			cat "$scratch/err" >&2
			return 1
		}
		t1=$(now_ns)
		rss=$(tail -n 1 "$scratch/rss")
	elif [ -n "$python" ]; then
		t0=$(now_ns)
		rss=$("$python" -c '
import os, sys
pid = os.fork()
if pid == 0:
    fd = os.open(os.devnull, os.O_WRONLY)
    os.dup2(fd, 1)
    try:
        os.execvp(sys.argv[1], sys.argv[1:])
    finally:
        os._exit(127)
_, status, usage = os.wait4(pid, 0)
print(usage.ru_maxrss)
sys.exit(0 if os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0 else 1)
' "$@" 2>"$scratch/err") || {
			cat "$scratch/err" >&2
			return 1
		}
		t1=$(now_ns)
	else
		t0=$(now_ns)
		"$@" >/dev/null 2>"$scratch/err" || {
			cat "$scratch/err" >&2
			return 1
		}
		t1=$(now_ns)
		rss=-
	fi
	echo "$(((t1 - t0) / 1000)) $rss" | awk '{ printf "%.6f %s\n", $1 / 1e6, $2 }'
}

# best CMD...: best (lowest) wall time of $runs runs after $warmup untimed
# ones, with the highest peak RSS seen; prints "WALL RSS".
best() {
	i=0
	while [ "$i" -lt "$warmup" ]; do
		"$@" >/dev/null 2>"$scratch/err" || {
			cat "$scratch/err" >&2
			return 1
		}
		i=$((i + 1))
	done
	i=0
	: >"$scratch/runs"
	while [ "$i" -lt "$runs" ]; do
		measure "$@" >>"$scratch/runs" || return 1
		i=$((i + 1))
	done
	awk 'NR == 1 || $1 < w { w = $1 }
	     $2 != "-" && $2 > r { r = $2 }
	     END { printf "%s %s\n", w, (r == "" ? "-" : r) }' "$scratch/runs"
}

echo "bench-convert: $(basename "$trace"), $pickle_bytes bytes of pickle, best of $runs (after $warmup warm-up)"

if ! result=$(best "$ccasim" convert "$pickle" -o "$scratch/out.msgpack"); then
	echo "bench-convert: ccasim convert failed" >&2
	exit 1
fi
# shellcheck disable=SC2086 # split "WALL RSS" on purpose
set -- $result
cc_wall=$1 cc_rss=$2
msgpack_bytes=$(wc -c <"$scratch/out.msgpack")
printf '  ccasim convert:          %8.3f s  peak RSS %s KiB  (%s bytes of msgpack)\n' \
	"$cc_wall" "$cc_rss" "$msgpack_bytes"

py_wall=-
if [ -n "$python" ] && "$python" -c 'import msgpack' 2>/dev/null; then
	cat >"$scratch/convert.py" <<'PY'
import pickle, sys, time
import msgpack
t = time.perf_counter()
with open(sys.argv[1], "rb") as f:
    data = pickle.load(f)
out = msgpack.packb(data)
with open(sys.argv[2], "wb") as f:
    f.write(out)
print("%.6f" % (time.perf_counter() - t), file=sys.stderr)
PY
	if ! result=$(best "$python" "$scratch/convert.py" "$pickle" "$scratch/py.msgpack"); then
		echo "bench-convert: the python baseline failed" >&2
		exit 1
	fi
	# shellcheck disable=SC2086 # split "WALL RSS" on purpose
	set -- $result
	py_wall=$1
	py_inproc=$("$python" "$scratch/convert.py" "$pickle" "$scratch/py.msgpack" 2>&1 >/dev/null)
	printf '  python pickle+msgpack:   %8.3f s  peak RSS %s KiB  (load+packb alone %.3f s)\n' \
		"$py_wall" "$2" "$py_inproc"
else
	echo "  python pickle+msgpack:   skipped (needs $python with msgpack: apt-get install python3-msgpack)"
fi

missed=0
if [ "$py_wall" != - ]; then
	ratio=$(awk -v p="$py_wall" -v c="$cc_wall" 'BEGIN { printf "%.1f", (c > 0 ? p / c : 0) }')
	if awk -v r="$ratio" 'BEGIN { exit !(r >= 8) }'; then verdict=met; else verdict="NOT met"; missed=1; fi
	echo "  speed-up:                ${ratio}x (target >= 8x: $verdict)"
fi
if [ "$cc_rss" != - ]; then
	rss_ratio=$(awk -v r="$cc_rss" -v p="$pickle_bytes" 'BEGIN { printf "%.2f", r * 1024 / p }')
	if awk -v r="$rss_ratio" 'BEGIN { exit !(r < 2) }'; then verdict=met; else verdict="NOT met"; missed=1; fi
	echo "  peak RSS / pickle size:  ${rss_ratio} (target < 2: $verdict)"
else
	echo "  peak RSS:                unknown (install time or python3)"
fi

if [ "$missed" -ne 0 ] && [ "${BENCH_STRICT:-0}" = 1 ]; then
	exit 1
fi
exit 0
