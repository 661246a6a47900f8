#!/bin/sh
# test-newer.sh - snapshots of PyTorch releases after 2.11 (TAP).  They load,
# `info` and `replay` (text and --json) say when the format shows a PyTorch
# newer than the rules applied, `replay --check` still checks, `convert`
# keeps every entry's pool_id and what the header can say of the rest,
# user_metadata given as a dict reads as Python's json.dumps(v,
# separators=(",", ":"), sort_keys=True) writes it, and the wrong types of
# these keys give one line naming the file and the offset.  A snapshot is
# replayed under the rules of the release its format proves
# (doc/versions.md), and says so.  The fixtures
# are tests/data/gen_fixtures.py's newer_2_14() (the 2.11 default sample as a
# later release writes it) and newer_hostile().  Needs $CCASIM and
# $top_srcdir (set by make check).
set -u

srcdir=${top_srcdir:-.}
. "$srcdir/tests/tap.sh"

newer=$srcdir/tests/data/newer-2.14.pickle
hostile=$srcdir/tests/data/newer-hostile.pickle
sample=$traces/samples/snap_default_2.11.pickle
note='the snapshot comes from PyTorch 2.14 or later (it has top-level host_segments), newer than the PyTorch 2.11 rules applied'
rules='rules: PyTorch 2.14 (its format has top-level host_segments: 2.14 or later)'

# json_is FILE EXPR: the Python expression EXPR over the JSON object d read
# from FILE is true.
json_is() {
	"$python" -c 'import json, sys
d = json.load(open(sys.argv[1]))
sys.exit(0 if eval("(" + sys.argv[2] + ")") else 1)' "$1" "$2"
}

# --- info
run 0 "$ccasim" info "$newer" && grep -qF "$rules" "$scratch/out" &&
	! grep -qF "note: $note" "$scratch/out" &&
	grep -q "pool_id in 44 trace entries: kept" "$scratch/out" &&
	grep -q "2 'annotate' entries: skipped" "$scratch/out" &&
	grep -q "1 host_segments (2.00 MiB), 2 host_traces entries: shown, not simulated" \
		"$scratch/out" &&
	grep -q "entry.internal_metadata (1), segment.internal_metadata (1)" "$scratch/out" &&
	grep -q "device 0: 44 events" "$scratch/out"
report $? "info says a 2.14 snapshot's rules are 2.14's, and what it kept, showed or ignored"
run 0 "$ccasim" info "$sample" && ! grep -q "after 2.11" "$scratch/out"
report $? "info of a 2.11 snapshot says nothing of later releases"

# --- view shows the host memory as info does, in the page's data and, where
# Chromium is, on the page
run 0 "$ccasim" view -o "$scratch/host.html" "$newer" &&
	grep -qF '"host":{"segments":1,"bytes":2097152,"traces":2}' "$scratch/host.html" &&
	run 0 "$ccasim" view -o "$scratch/nohost.html" "$sample" &&
	grep -qF '"host":null' "$scratch/nohost.html"
report $? "view carries a 2.14 snapshot's host segments in its page (null for a 2.11 one)"
chromium=$(command -v chromium || command -v chromium-browser || echo)
if [ -n "$chromium" ]; then
	timeout 120 "$chromium" --headless --disable-gpu --no-sandbox --no-first-run \
		--user-data-dir="$scratch/chromium" --virtual-time-budget=30000 \
		--dump-dom "file://$scratch/host.html" >"$scratch/dom" 2>/dev/null
	grep -qF 'pinned host memory: 1 host segments (2.00 MiB), 2 host trace entries: shown, not simulated' \
		"$scratch/dom"
	report $? "the page says the host segments, shown and not simulated"
else
	skip "the page says the host segments, shown and not simulated" "no chromium (apt-get install chromium)"
fi

if [ "$python" = false ]; then
	skip "info --json and replay --json of a newer snapshot" "no python3"
else
	"$ccasim" info --json "$newer" >"$scratch/info.json" 2>"$scratch/err" &&
		json_is "$scratch/info.json" 'd["snapshot_newer_than_rules"] is False and
d["snapshot_format_release"] == "2.14" and d["snapshot_newer_note"] is None and
d["rules"]["release"] == "2.14" and d["unvalidated"] is True and d["newer_keys"] == {
"pool_id_entries": 44, "annotate_entries": 2, "forward_frames": 1, "host_segments": 1,
"host_bytes": 2097152, "host_traces": 2, "trace_alloc_overflowed": False,
"trace_alloc_max_entries": 9223372036854775807, "rendered_metadata": 2,
"unknown_keys": {"entry.internal_metadata": 1, "segment.internal_metadata": 1},
"unknown_more": 0}'
	report $? "info --json: the rules of the release the format proves, every key counted"
	"$ccasim" info --json "$sample" >"$scratch/old.json" 2>"$scratch/err" &&
		json_is "$scratch/old.json" 'd["snapshot_newer_than_rules"] is False and
d["snapshot_newer_note"] is None and d["snapshot_format_release"] is None and
d["newer_keys"]["host_segments"] is None and d["newer_keys"]["pool_id_entries"] == 0'
	report $? "info --json of a 2.11 snapshot: not newer"

	# --- replay
	run 0 "$ccasim" replay --check --json "$newer" &&
		json_is "$scratch/out" 'd["snapshot_newer_than_rules"] is False and
d["snapshot_format_release"] == "2.14" and d["pytorch_version"] == "2.14" and
d["unvalidated"] is True and d["rules"]["best_fit_order"] == "segment counter" and
d["check"]["passed"] is True' &&
		"$ccasim" replay --check --json "$sample" >"$scratch/old.json" &&
		json_is "$scratch/old.json" 'd["snapshot_newer_than_rules"] is False and
d["snapshot_newer_note"] is None' &&
		"$python" -c 'import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
sys.exit(0 if a["memory_stats"] == b["memory_stats"] else 1)' "$scratch/out" "$scratch/old.json"
	report $? "replay --check --json: 2.14's rules, unvalidated, checked, the 2.11 sample's stats"
fi
run 0 "$ccasim" replay --check "$newer" &&
	grep -qF "  rules: PyTorch 2.14, detected: its format has top-level host_segments" \
		"$scratch/out" &&
	grep -q "  unvalidated: PyTorch 2.14's rules are modelled from its source" "$scratch/out" &&
	grep -q "check: passed (44 entries" "$scratch/out"
report $? "replay --check applies 2.14's rules, says why and that they are unvalidated, passes"
# (the newer snapshot and the sample hold a recorded OOM: replay exits 3)
run 3 "$ccasim" replay --pytorch-version 2.11 "$newer" && grep -qF "  note: $note" "$scratch/out"
report $? "replay under 2.11's rules says the snapshot is newer"
run 3 "$ccasim" replay --pytorch-version 2.8 "$newer" &&
	grep -q "newer than the PyTorch 2.8 rules applied" "$scratch/out"
report $? "replay under older rules names them"
run 3 "$ccasim" replay "$sample" && ! grep -q "note: the snapshot comes from" "$scratch/out"
report $? "replay of a 2.11 snapshot has no such note"

# --- convert
trace=$scratch/newer.msgpack
run 0 "$ccasim" convert "$newer" -o "$trace" && run 0 "$ccasim" info "$trace" &&
	grep -qF "$rules" "$scratch/out" &&
	grep -q "pool_id in 44 trace entries" "$scratch/out" &&
	run 0 "$ccasim" replay --check "$trace" && grep -q "rules: PyTorch 2.14" "$scratch/out" &&
	grep -q "check: passed" "$scratch/out"
report $? "convert keeps what shows the release; the trace replays and checks"
if [ "$python" = false ] || ! "$python" -c 'import msgpack' 2>/dev/null; then
	skip "convert writes every entry's pool_id" "no python3-msgpack"
	skip "user_metadata dicts read as json.dumps writes them" "no python3-msgpack"
else
	"$python" - "$newer" "$trace" <<'EOF'
import pickle, sys, msgpack
snap = pickle.load(open(sys.argv[1], "rb"))
want = [tuple(e["pool_id"]) for e in snap["device_traces"][0] if e["action"] != "annotate"]
u = msgpack.Unpacker(open(sys.argv[2], "rb"), raw=False, strict_map_key=False)
objs = list(u)
got = [tuple(ev[8]) for ev in objs[6]]
assert all(len(ev) == 9 for ev in objs[6])
assert got == want, (got, want)
assert (0, 1) in got
EOF
	report $? "convert writes every entry's pool_id, the MemPool's (0, 1) included"

	md=$scratch/md.pickle
	"$python" - "$md" >"$scratch/md.want" <<'EOF'
import json, pickle, sys
values = [
    {"step": 3, "phase": "warmup"},
    {"b": [1, 2.5, -3, None, True, False], "a": {"z": "q\"uo\\te\n", "y": 0.1}},
    {"unicode": "na\u00efve \u2603", "ctl": "\x01\x1f\t", "e": 1e-07, "f": 123456.789},
    ["list", {"k": -2.25}],
    {"": 0, "Z": 1, "a": 2, "\u00e9": 3},
    {},
]
addr, size = 1 << 32, 2 << 20
seg = {"device": 0, "address": addr, "total_size": size, "allocated_size": 0,
       "active_size": 0, "requested_size": 0, "stream": 0, "segment_type": "large",
       "segment_pool_id": (0, 0), "is_expandable": False, "frames": [],
       "blocks": [{"address": addr, "size": size, "requested_size": 0,
                   "state": "inactive", "frames": []}]}
trace = [{"action": "segment_alloc", "addr": addr, "size": size, "stream": 0,
          "time_us": 1, "user_metadata": "", "pool_id": (0, 0)}]
for i, v in enumerate(values):
    trace.append({"action": "alloc", "addr": addr, "size": 512, "stream": 0,
                  "time_us": 2 + 2 * i, "user_metadata": v, "pool_id": (0, 0)})
    trace.append({"action": "free_requested", "addr": addr, "size": 512, "stream": 0,
                  "time_us": 3 + 2 * i, "user_metadata": v, "pool_id": (0, 0)})
    trace.append({"action": "free_completed", "addr": addr, "size": 512, "stream": 0,
                  "time_us": 3 + 2 * i, "user_metadata": v, "pool_id": (0, 0)})
pickle.dump({"segments": [seg], "device_traces": [trace]}, open(sys.argv[1], "wb"),
            protocol=4)
for v in values:
    print(json.dumps(v, separators=(",", ":"), sort_keys=True, ensure_ascii=False)
          if v else "")
EOF
	run 0 "$ccasim" convert "$md" -o "$scratch/md.msgpack" &&
		"$python" - "$scratch/md.msgpack" >"$scratch/md.got" <<'EOF' &&
import sys, msgpack
objs = list(msgpack.Unpacker(open(sys.argv[1], "rb"), raw=False, strict_map_key=False))
strings = objs[1]
for ev in objs[6][1::3]:
    print(strings[ev[7]])
EOF
		cmp "$scratch/md.want" "$scratch/md.got" &&
		run 0 "$ccasim" replay --check "$md" && grep -q "check: passed" "$scratch/out" &&
		grep -q "rules: PyTorch 2.12, detected: its format has pool_id in trace entries: 2.12 or later" "$scratch/out"
	report $? "user_metadata dicts read as json.dumps writes them; pool_id alone proves 2.12"
fi

# --- hostile values
run 0 "$ccasim" info "$hostile" && ! LC_ALL=C grep -q "$(printf '\033')" "$scratch/out" &&
	grep -q 'entry.unknown\\x1b\[31m0 (1)' "$scratch/out" && grep -q ", 10 more" "$scratch/out"
report $? "hostile values of ignored keys load; unknown names shown escaped, 16 at most"
run 0 "$ccasim" info --json "$hostile"
report $? "info --json of hostile values"
for f in newer-pool-id-str newer-pool-id-triple newer-pool-id-huge newer-pool-id-str-item \
	newer-overflowed-str newer-max-entries-negative; do
	path=$srcdir/tests/data/bad/$f.pickle
	run 1 "$ccasim" replay "$path" && one_line && grep -qF "$path: offset " "$scratch/err"
	report $? "$f: one line naming the file and the offset"
done
for f in newer-not-map newer-count-not-int newer-overflowed-not-bool newer-unknown-not-map; do
	path=$srcdir/tests/data/msgpack-bad/$f.msgpack
	run 1 "$ccasim" info "$path" && one_line && grep -qF "$path: offset 0: " "$scratch/err" &&
		grep -q "(key newer_keys)" "$scratch/err"
	report $? "$f: one line naming the file, the offset and the key"
done

tap_done
