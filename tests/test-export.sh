#!/bin/sh
# test-export.sh - `ccasim export` end to end (TAP).  An export of a
# replay under the recorded settings must read back through ccasim and
# pass `replay --check`, and Python's pickle.load must read it into the
# same structure as PyTorch's own snapshot (tests/compare-snapshot.py:
# keys, types, key order, block states; with --same-run the very values).
# A what-if export replays as it ran; --format chrome writes a JSON trace
# with counters; an empty_cache()'s releases carry the time and frames of
# its call.  Needs $CCASIM and $top_srcdir (set by make check).
set -u

srcdir=${top_srcdir:-.}
. "$srcdir/tests/tap.sh"
compare=$srcdir/tests/compare-snapshot.py

checked() {
	run 0 "$ccasim" replay --check "$1" && grep -q '^check: passed' "$scratch/out"
}

for w in seedfrag multistream stacks; do
	orig=$traces/$w.default.pickle.xz
	out=$scratch/$w.pickle
	run 0 "$ccasim" export "$orig" -o "$out" &&
		grep -q "entry for entry" "$scratch/out"
	report $? "export $w.default under its recorded settings"
	checked "$out"
	report $? "replay --check of the $w export passes"
	if [ "$python" = false ]; then
		skip "pickle.load reads the $w export as PyTorch's snapshot" "no python3"
	else
		run 0 "$python" "$compare" "$orig" "$out" --same-run
		report $? "pickle.load reads the $w export as PyTorch's snapshot (same values)"
	fi
done

# a what-if: other settings and a cap, written into the file's settings
out=$scratch/whatif.pickle
run 0 "$ccasim" export "$traces/bert.default.pickle.xz" --config max_split_size_mb:128 \
	--memory-fraction 0.08 --keep-going -o "$out"
report $? "export a capped what-if of bert.default"
checked "$out"
report $? "replay --check of the what-if export passes (cap recorded in its settings)"
if [ "$python" = false ]; then
	skip "the what-if export has PyTorch's structure" "no python3"
else
	run 0 "$python" "$compare" "$traces/bert.default.pickle.xz" "$out" &&
		run 0 "$python" -c '
import pickle, sys
d = pickle.load(open(sys.argv[1], "rb"))
s = d["allocator_settings"]
assert s["max_split_size"] == 128 << 20, s
assert "per_process_memory_fraction:0.08" in s["PYTORCH_CUDA_ALLOC_CONF"], s
' "$out"
	report $? "the what-if export has PyTorch's structure and its settings"
fi

# expandable segments: maps and unmaps, one segment per mapped run
out=$scratch/exp.pickle
run 0 "$ccasim" export "$traces/multistream.exp.pickle.xz" -o "$out" &&
	checked "$out"
report $? "export and --check of multistream.exp (expandable segments)"

# Chrome/Perfetto trace
out=$scratch/seedfrag.json
run 0 "$ccasim" export "$traces/seedfrag.default.pickle.xz" --format chrome -o "$out"
report $? "export --format chrome"
if [ "$python" = false ]; then
	skip "the Chrome trace is JSON with counters and cudaMalloc events" "no python3"
else
	run 0 "$python" -c '
import json, sys
d = json.load(open(sys.argv[1]))
ev = d["traceEvents"]
c = [e for e in ev if e["ph"] == "C" and e["name"] == "memory"]
i = [e for e in ev if e["ph"] == "i" and e["name"] == "cudaMalloc"]
assert len(i) == 67, len(i)
assert max(e["args"]["reserved"] for e in c) == 926941184
assert all(set(e["args"]) == {"reserved", "allocated", "active"} for e in c)
ts = [e["ts"] for e in c]
assert ts == sorted(ts) and ts[0] >= 0
' "$out"
	report $? "the Chrome trace is JSON with counters and 67 cudaMalloc events"
fi

# an empty_cache() the program called: the segments it releases carry the
# time (and, in a snapshot, the frames) of the recorded release that shows
# the call, entry 43 of the sample, in a what-if as in the recorded run
sample=$traces/samples/snap_default_2.11.pickle
out=$scratch/emptied.pickle
run 0 "$ccasim" export "$sample" --config max_split_size_mb:128 -o "$out" &&
	run 0 "$ccasim" export "$sample" --format chrome -o "$scratch/emptied.json"
report $? "export a what-if and a Chrome trace of a run that called empty_cache()"
if [ "$python" = false ]; then
	skip "empty_cache()'s releases carry the time and frames of its call" "no python3"
else
	run 0 "$python" -c '
import json, pickle, sys
trace = pickle.load(open(sys.argv[1], "rb"))["device_traces"][0]
call = trace[43]
assert call["action"] == "segment_free" and call["frames"][0]["name"] == "empty_cache", call
out = pickle.load(open(sys.argv[2], "rb"))["device_traces"][0]
freed = [e for e in out if e["action"] == "segment_free" and e["time_us"] == call["time_us"]]
assert freed and all(e["frames"] == call["frames"] for e in freed), out[-3:]
ev = json.load(open(sys.argv[3]))["traceEvents"]
free = [e for e in ev if e["name"] == "cudaFree" and e["args"]["event"] == 43]
assert free and all(e["ts"] == call["time_us"] - trace[0]["time_us"] for e in free), free
' "$sample" "$out" "$scratch/emptied.json"
	report $? "empty_cache()'s releases carry the time and frames of its call"
fi

# errors: usage 2, bad input or unwritable output 1, nothing left behind
run 2 "$ccasim" export "$traces/seedfrag.default.pickle.xz"
report $? "export without -o is a usage error"
run 2 "$ccasim" export "$traces/seedfrag.default.pickle.xz" --format svg -o "$scratch/x"
report $? "export --format svg is a usage error"
mkdir "$scratch/ro" && chmod 555 "$scratch/ro"
if [ -w "$scratch/ro" ]; then
	skip "export to an unwritable directory fails cleanly" "running as a user who can write anywhere"
else
	run 1 "$ccasim" export "$traces/seedfrag.default.pickle.xz" -o "$scratch/ro/x.pickle" &&
		[ -z "$(ls -A "$scratch/ro")" ]
	report $? "export to an unwritable directory fails cleanly"
fi
run 1 "$ccasim" export "$scratch/missing.pickle" -o "$scratch/y.pickle" &&
	[ ! -e "$scratch/y.pickle" ]
report $? "export of a missing file fails and writes nothing"

tap_done
