#!/bin/sh
# test-recorded-entries.sh - trace entries PyTorch records that a replay
# must take as they are (TAP): the `snapshot` marks that snapshot() leaves
# each time the program takes a snapshot, which change nothing (a trace
# that opens with them is complete, not a window), and an `oom` entry of
# a request larger than any device (PyTorch's test_out_of_memory asks for
# 800 PB), which PyTorch records like any other out-of-memory error.
# Built from bundled real traces and their memory_stats().
# Needs $CCASIM and $top_srcdir (set by make check).
set -u

srcdir=${top_srcdir:-.}
. "$srcdir/tests/tap.sh"

# edit SRC DST CODE: DST is the pickle of SRC's snapshot `s` after the
# Python statements CODE (t is device 0's trace, t0 its first time).
edit() {
	"$python" -c '
import lzma, pickle, sys
s = pickle.load(lzma.open(sys.argv[1]))
t = s["device_traces"][0]
t0 = t[0]["time_us"]
def mark(time_us):
    return {"action": "snapshot", "addr": 0, "size": 0, "stream": 0,
            "time_us": time_us, "frames": []}
exec(sys.argv[3])
pickle.dump(s, open(sys.argv[2], "wb"))
' "$1" "$2" "$3"
}

# keys_equal JSON STATS EXCEPT...: every memory_stats key of ccasim's
# JSON equals the recording's (a W.C.json), none null, but those named.
keys_equal() {
	"$python" -c '
import json, sys
got = json.load(open(sys.argv[1]))["memory_stats"]
want = json.load(open(sys.argv[2]))["memory_stats"]
skip = set(sys.argv[3:])
bad = [k for k in want if k not in skip and got.get(k) != want[k]]
assert len(got) == 122 and not bad, [(k, got.get(k), want[k]) for k in bad]
' "$@"
}

# --- snapshot marks --------------------------------------------------
marked=$scratch/marked.pickle
edit "$traces/bert.exp.pickle.xz" "$marked" 't[0:0] = [mark(t0 - 2), mark(t0 - 1)]'
run 0 "$ccasim" replay --check "$marked" && grep -q '^check: passed' "$scratch/out"
report $? "a trace that opens with snapshot marks passes --check"
run 0 "$ccasim" replay --json "$marked" &&
	keys_equal "$scratch/out" "$traces/bert.exp.json"
report $? "... and is complete, not a window: all 122 keys equal PyTorch's (bert.exp)"
run 0 "$ccasim" replay --json "$marked" && "$python" -c '
import json, sys
r = json.load(open(sys.argv[1]))
assert r["window"] is None or r["window"] is False or not r["window"], r["window"]
assert r["plan"]["mid_run"] is False' "$scratch/out"
report $? "... and its plan does not take it for a trace that starts mid-run"
midmark=$scratch/midmark.pickle
edit "$traces/dyninfer.default.pickle.xz" "$midmark" \
	'n = len(t) // 2; t[n:n] = [mark(t[n]["time_us"])]'
run 0 "$ccasim" replay --check --json "$midmark" &&
	keys_equal "$scratch/out" "$traces/dyninfer.default.json"
report $? "a snapshot mark mid-trace changes no key (dyninfer.default)"

# --- a request past any device ---------------------------------------
huge=$scratch/huge-oom.pickle
edit "$traces/seedfrag.default.pickle.xz" "$huge" \
	't.insert(0, {"action": "oom", "device_free": 140 << 30, "size": 800 * 2**50,
	  "stream": 0, "time_us": t0 - 1, "frames": []})'
run 0 "$ccasim" replay --check "$huge" && grep -q '^check: passed' "$scratch/out"
report $? "an oom entry asking for 800 PiB is taken as recorded and passes --check"
expect_msg='CUDA out of memory. Tried to allocate 838860800.00 GiB.'
grep -qF "$expect_msg" "$scratch/out"
report $? "... with PyTorch's message for it"
run 0 "$ccasim" replay --json "$huge" &&
	keys_equal "$scratch/out" "$traces/seedfrag.default.json" num_ooms \
		num_alloc_retries num_sync_all_streams && "$python" -c '
import json, sys
m = json.load(open(sys.argv[1]))["memory_stats"]
assert m["num_ooms"] == 1, m["num_ooms"]' "$scratch/out"
report $? "... one OOM more, the rest of the run as PyTorch's (seedfrag.default)"
alloc=$scratch/huge-alloc.pickle
edit "$traces/seedfrag.default.pickle.xz" "$alloc" \
	'i = next(i for i, e in enumerate(t) if e["action"] == "alloc"); t[i] = dict(t[i], size=800 * 2**50)'
run 1 "$ccasim" replay "$alloc" &&
	grep -q 'event [0-9]*: alloc of .* 256 TiB (2^48 bytes) or more, larger than any device' "$scratch/err"
report $? "an alloc of 800 PiB is still refused: no device served it"
tooth=$scratch/oom-2-62.pickle
edit "$traces/seedfrag.default.pickle.xz" "$tooth" \
	't.insert(0, {"action": "oom", "device_free": 0, "size": 2**62,
	  "stream": 0, "time_us": t0 - 1, "frames": []})'
run 1 "$ccasim" replay "$tooth" && grep -q 'event 0: oom of .* 4 EiB (2^62 bytes) or more' "$scratch/err"
report $? "an oom of 2^62 bytes is refused: past what any size rounds to"

# --- the same on real recordings of each kind (traces/uncertain-2.11) ---
# torchoom: PyTorch's test_out_of_memory pattern (an 800 PiB request caught,
# under expandable segments mapping the whole GPU first); snapfirst: three
# _snapshot() calls before the first allocation.  Each replays exactly on
# all 122 keys of its memory_stats().
unc=$srcdir/traces/uncertain-2.11
for f in "$unc"/torchoom.*.pickle.xz "$unc"/snapfirst*.pickle.xz; do
	b=${f%.pickle.xz}
	run 0 "$ccasim" replay --check --json "$f" && keys_equal "$scratch/out" "$b.json" &&
		"$python" -c '
import json, sys
assert json.load(open(sys.argv[1]))["check"]["passed"] is True' "$scratch/out"
	report $? "$(basename "$b"): --check passes, all 122 keys equal PyTorch's"
done

# --- a malloc's synchronisation completes frees in PyTorch's event-map
# order, which no entry records (doc/allocator-model.md): rs2 under
# garbage collection and a cap, whose cascades complete record_stream
# frees of two streams; ccasim-record's dumps carry their cap.  Every
# entry matches; r0 and r1 also match on all 122 keys, r2 and gccap290.r0
# count 1 and 5 retries (and synchronisations) more than PyTorch did, which
# leave no entry (traces/uncertain-2.11/README.md) ---
for f in "$unc"/rs2.gccap.r*.pickle.xz "$unc"/rs2.gccap290.r0.pickle.xz; do
	run 0 "$ccasim" replay --check "$f" && grep -q '^check: passed' "$scratch/out"
	report $? "$(basename "$f" .pickle.xz): --check passes, completions in the recording's order"
done
for r in r0 r1; do
	b=$unc/rs2.gccap.$r
	run 0 "$ccasim" replay --json "$b.pickle.xz" && keys_equal "$scratch/out" "$b.json"
	report $? "rs2.gccap.$r: all 122 keys equal PyTorch's"
done

tap_done
