#!/bin/sh
# bench-python.sh - a replay through the Python module against the CLI's.
#
# gpt2gen.default (256k events, converted to msgpack first), best of
# BENCH_RUNS (default 15) each way (the best run: timings on a busy host vary):
#   - the CLI: `ccasim replay --json`, its replay alone (CCASIM_TIMING:
#     planning and the replay, no process start, no load);
#   - Python: trace.replay() of a loaded trace (planning, the replay, the
#     report and its conversion to dicts), timed in the interpreter.
# Target: Python within 5 % of the CLI.  Also prints both whole processes
# (start, load, replay, output).  Skipped without the module (configure
# --enable-python).
#
# Usage: CCASIM=build/ccasim bench/bench-python.sh
set -eu
srcdir=$(cd "$(dirname "$0")/.." && pwd)
ccasim=${CCASIM:-ccasim}
pydir=${CCASIM_PYDIR:-$(dirname "$ccasim")/python}
python=${PYTHON:-/usr/bin/python3}
runs=${BENCH_RUNS:-15}
if [ ! -f "$pydir/ccasim.so" ]; then
	echo "bench-python: no $pydir/ccasim.so (configure --enable-python): skipped"
	exit 0
fi
scratch=$(mktemp -d "${TMPDIR:-/tmp}/ccasim-bench.XXXXXX")
trap 'rm -rf "$scratch"' EXIT INT TERM
xz -dc "$srcdir/traces/pytorch-2.11/gpt2gen.default.pickle.xz" >"$scratch/gpt2gen.pickle"
"$ccasim" convert "$scratch/gpt2gen.pickle" -o "$scratch/gpt2gen.msgpack"
trace=$scratch/gpt2gen.msgpack

cli_best=
for i in $(seq "$runs"); do
	CCASIM_TIMING=1 "$ccasim" replay --json "$trace" >/dev/null 2>"$scratch/t"
	t=$(sed -n 's/^timing: replay of device 0: \([0-9.]*\) s$/\1/p' "$scratch/t")
	cli_best=$(awk -v a="$cli_best" -v b="$t" 'BEGIN { print (a == "" || b < a) ? b : a }')
done
py_best=$(PYTHONPATH=$pydir "$python" - "$trace" "$runs" <<'PY'
import sys, time
import ccasim
t = ccasim.load(sys.argv[1])
best = None
for _ in range(int(sys.argv[2])):
    t0 = time.perf_counter()
    t.replay()
    d = time.perf_counter() - t0
    best = d if best is None or d < best else best
print("%.6f" % best)
PY
)
awk -v c="$cli_best" -v p="$py_best" 'BEGIN {
	printf "python-replay      gpt2gen.default  CLI %.4f s  Python %.4f s  %+.1f %%  (target within 5 %%: %s)\n",
		c, p, 100 * (p / c - 1), (p <= 1.05 * c ? "met" : "MISSED") }'

now_ns() { date +%s%N; }
cli_proc= py_proc=
for i in $(seq "$runs"); do
	t0=$(now_ns); "$ccasim" replay --json "$trace" >/dev/null; t1=$(now_ns)
	PYTHONPATH=$pydir "$python" -c 'import sys, ccasim; ccasim.load(sys.argv[1]).replay()' "$trace"
	t2=$(now_ns)
	a=$((t1 - t0)) b=$((t2 - t1))
	if [ -z "$cli_proc" ] || [ "$a" -lt "$cli_proc" ]; then cli_proc=$a; fi
	if [ -z "$py_proc" ] || [ "$b" -lt "$py_proc" ]; then py_proc=$b; fi
done
awk -v c="$cli_proc" -v p="$py_proc" 'BEGIN {
	printf "    whole process: ccasim replay --json %.3f s, python3 -c \"ccasim.load(...).replay()\" %.3f s\n",
		c / 1e9, p / 1e9 }'
