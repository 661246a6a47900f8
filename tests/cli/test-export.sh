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

# a what-if on a smaller device: the cap is recorded (as the fraction of
# the default device that caps at the same bytes), so the export replays
# as it ran, statistics for statistics
out=$scratch/small.pickle
run 0 "$ccasim" export "$traces/bert.default.pickle.xz" --device-memory 6GiB --keep-going \
	-o "$out" &&
	run 3 "$ccasim" replay --json "$traces/bert.default.pickle.xz" --device-memory 6GiB \
		--keep-going && cp "$scratch/out" "$scratch/small-whatif.json" &&
	run 3 "$ccasim" replay --json "$out" && cp "$scratch/out" "$scratch/small-export.json"
report $? "export and replay a what-if on a 6 GiB device"
checked "$out"
report $? "replay --check of the 6 GiB export passes"
if [ "$python" = false ]; then
	skip "the 6 GiB export replays with the what-if's statistics" "no python3"
else
	run 0 "$python" -c '
import json, sys
w, e = (json.load(open(p)) for p in sys.argv[1:3])
assert e["allowed_memory_maximum"] == 6 << 30, e["allowed_memory_maximum"]
m, n = w["memory_stats"], e["memory_stats"]
assert m == n, [k for k in m if m[k] != n.get(k)]
assert e["fragmentation"] == w["fragmentation"]
assert e["empty_cache_calls"] == 0 and e["recorded_ooms"] == w["oom"]["count"] == 2153
' "$scratch/small-whatif.json" "$scratch/small-export.json"
	report $? "the 6 GiB export replays with the what-if's statistics (2153 OOMs)"
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
c = [e for e in ev if e["ph"] == "C"]
i = [e for e in ev if e["ph"] == "i" and e["name"] == "cudaMalloc"]
assert len(i) == 67, len(i)
# one counter per series, so that viewers do not stack them
assert {e["name"] for e in c} == {"reserved", "allocated", "active"}, {e["name"] for e in c}
assert all(set(e["args"]) == {"bytes"} for e in c)
assert max(e["args"]["bytes"] for e in c if e["name"] == "reserved") == 926941184
for name in ("reserved", "allocated", "active"):
    ts = [e["ts"] for e in c if e["name"] == name]
    assert ts == sorted(ts) and ts[0] >= 0, name
' "$out"
	report $? "the Chrome trace has one counter per series and 67 cudaMalloc events"
fi

# allocations as async b/e pairs with ids, annotations as slices
out=$scratch/stacks.json
run 0 "$ccasim" export "$traces/stacks.default.pickle.xz" --format chrome -o "$out"
report $? "export --format chrome of stacks.default"
if [ "$python" = false ]; then
	skip "allocations are b/e pairs, annotations slices" "no python3"
else
	run 0 "$python" -c '
import json, lzma, pickle, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
snap = pickle.load(lzma.open(sys.argv[2]))
trace = snap["device_traces"][0]
b = {e["id"]: e for e in ev if e["ph"] == "b"}
e = {x["id"]: x for x in ev if x["ph"] == "e"}
allocs = [t for t in trace if t["action"] == "alloc"]
assert len(b) == len(allocs), (len(b), len(allocs))
assert set(e) <= set(b) and all(e[i]["ts"] >= b[i]["ts"] for i in e)
assert all(x["name"] == "allocation" and x["cat"] == "allocation" for x in b.values())
first = min(b.values(), key=lambda x: x["id"])
assert first["args"]["size"] == allocs[0]["size"], first
assert first["args"]["frame"].startswith(allocs[0]["frames"][0]["name"] + " ("), first
# what is freed in the trace ends; what is live at its end does not
live = len([s for s in snap["segments"] for k in s["blocks"] if k["state"] == "active_allocated"])
assert len(b) - len(e) == live, (len(b), len(e), live)
a = snap["external_annotations"]
x = [s for s in ev if s["ph"] == "X" and s["cat"] == "annotation"]
assert len(x) == len([s for s in a if s["stage"] == "START"]) == 1, x
t0 = trace[0]["time_us"]
assert x[0]["name"] == a[0]["name"] and x[0]["ts"] == a[0]["time_us"] - t0, x
assert x[0]["dur"] == a[1]["time_us"] - a[0]["time_us"], x
' "$out" "$traces/stacks.default.pickle.xz"
	report $? "allocations are b/e pairs with ids and frames, annotations X slices"
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
