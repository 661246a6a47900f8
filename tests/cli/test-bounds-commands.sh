#!/bin/sh
# test-bounds-commands.sh - every command that prints a what-if's figures
# prints replay's bounds of them (doc/whatif.md, "Bounds in every command";
# sim/study/timing.c's cca_timing_bound()): explain, peak, diff (and its
# --fail-if gate), plot and view, in text and --json, for a what-if bounded
# by stream timing (rs2, loader: record_stream frees), one bounded by
# address placement (bert.default under max_split_size_mb:128), and a
# replay of the recording, which shows none.  Each range is the one
# `replay --json` has.  Needs $CCASIM and $top_srcdir (set by make check).
set -u

srcdir=${top_srcdir:-.}
. "$srcdir/tests/tap.sh"

if [ "$python" = false ]; then
	skip "bounds in every command" "no python3 to read the JSON"
	tap_done
fi

u=$srcdir/traces/uncertain-2.11
rs2=$u/rs2.default.r0.pickle.xz
loader=$u/loader.default.r0.pickle.xz
bert=$traces/bert.default.pickle.xz
exp=expandable_segments:True
ms=max_split_size_mb:128

# replay --json of each what-if: the bounds every command must show
"$ccasim" replay --json -c "$exp" "$rs2" >"$scratch/rs2.json" &&
	"$ccasim" replay --json -c "$exp" "$loader" >"$scratch/loader.json" &&
	"$ccasim" replay --json -c "$ms" "$bert" >"$scratch/bert.json" &&
	"$python" - "$scratch/rs2.json" "$scratch/loader.json" "$scratch/bert.json" <<'PY'
import json, sys
for f in sys.argv[1:]:
    b = json.load(open(f))["bounds"]
    assert b and "reserved_bytes.all.peak" in b, (f, b)
PY
report $? "replay --json bounds the reserved peak of rs2, loader (stream timing) and bert (address placement)"

# the bounds' replays run on -j threads (one per core by default) and
# fold in one order: the same report on one thread as on three
for w in rs2 bert; do
	case $w in rs2) t=$rs2 c=$exp ;; *) t=$bert c=$ms ;; esac
	"$ccasim" replay -j 1 --json -c "$c" "$t" >"$scratch/$w.j1.json" &&
		"$ccasim" replay -j 3 --json -c "$c" "$t" >"$scratch/$w.j3.json" &&
		cmp -s "$scratch/$w.j1.json" "$scratch/$w.j3.json" &&
		cmp -s "$scratch/$w.j1.json" "$scratch/$w.json"
	report $? "$w: replay -j 1, -j 3 and the default give the same report, bounds and their sources"
done

# same FILE.json KEYPATH REPLAY.json CERTAINTY: the object at KEYPATH
# (dots; empty: the top) of FILE has CERTAINTY and replay's bounds and
# bounds_timings
same() {
	"$python" - "$@" <<'PY'
import json, sys
doc, path, rep, certainty = sys.argv[1:5]
o = json.load(open(doc))
for k in filter(None, path.split(".")):
    o = o[int(k)] if k.isdigit() else o[k]
r = json.load(open(rep))
assert o["certainty"] == certainty, o["certainty"]
assert o["bounds"] == r["bounds"], "bounds differ"
assert o["bounds_timings"] == r["bounds_timings"], "bounds_timings differ"
PY
}

# --- peak
run 0 "$ccasim" peak --json -c "$exp" "$rs2" && same "$scratch/out" "" "$scratch/rs2.json" bounded
report $? "peak --json, rs2 what-if: certainty bounded, replay's bounds and bounds_timings"
run 0 "$ccasim" peak --json -c "$ms" "$bert" && same "$scratch/out" "" "$scratch/bert.json" bounded
report $? "peak --json, bert under max_split_size_mb:128: replay's address-placement bounds"
run 0 "$ccasim" peak --json "$bert" && "$python" -c '
import json, sys
o = json.load(open(sys.argv[1]))
assert o["certainty"] == "recorded" and o["bounds"] is None and o["bounds_timings"] is None, o["certainty"]
' "$scratch/out"
report $? "peak --json, a replay of the recording: certainty recorded, bounds null"
run 0 "$ccasim" peak --json -c "$exp" --under max_split_size_mb:64 "$rs2" &&
	same "$scratch/out" a "$scratch/rs2.json" bounded
report $? "peak --json --under: run A carries its own bounds"

# the line of KEY in replay's text, which the other commands print as is
replay_line() {
	"$ccasim" replay --wide "$@" | grep "^  $key  *[0-9]"
}
key=reserved_bytes.all.peak
replay_line -c "$exp" "$rs2" >"$scratch/line" && [ -s "$scratch/line" ]
report $? "replay's text has a line for $key of rs2"
run 0 "$ccasim" peak --wide -c "$exp" "$rs2" &&
	head -n 1 "$scratch/out" | grep -q "bounded by stream timing" &&
	grep -qxF -f "$scratch/line" "$scratch/out" &&
	grep -q "^The bounds are of these figures, not of the blocks and segments shown" "$scratch/out"
report $? "peak's text: bounded by stream timing in its head, replay's own $key line, and that the blocks are not bounded"
run 0 "$ccasim" peak --wide "$bert" && ! grep -q "bounded\|^stream timing:\|^address placement:" "$scratch/out"
report $? "peak's text of a replay of the recording says nothing of bounds"

# --- explain
run 0 "$ccasim" explain --wide -c "$exp" "$rs2" &&
	sed -n 2p "$scratch/out" | grep -q "^bounded (stream timing): the figures below are the recorded timing's" &&
	grep -qxF -f "$scratch/line" "$scratch/out" &&
	grep -q "^The bounds are of these figures" "$scratch/out"
report $? "explain's text: a lead line, replay's $key line at the end, the state not bounded"
replay_line -c "$ms" "$bert" >"$scratch/bline"
run 0 "$ccasim" explain --wide -c "$ms" "$bert" &&
	grep -q "^bounded (address placement)" "$scratch/out" &&
	grep -qxF -f "$scratch/bline" "$scratch/out"
report $? "explain's text of bert under max_split_size_mb:128: address placement, replay's $key line"
run 0 "$ccasim" explain --wide "$bert" && ! grep -q "^bounded\|^stream timing:\|^address placement:" "$scratch/out"
report $? "explain's text of a replay of the recording says nothing of bounds"

# --- diff
run 0 "$ccasim" diff --json -c expandable_segments:False -c "$exp" "$rs2" &&
	same "$scratch/out" b "$scratch/rs2.json" bounded &&
	"$python" -c '
import json, sys
a = json.load(open(sys.argv[1]))["a"]
assert a["certainty"] == "recorded" and a["bounds"] is None, a["certainty"]
' "$scratch/out"
report $? "diff --json: the what-if side B has replay's bounds, the recorded side A none"
run 0 "$ccasim" diff --wide -c expandable_segments:False -c "$exp" "$rs2" &&
	grep -q "^   bounded by stream timing: reserved peak 384.00 MiB .. 9.83 GiB" "$scratch/out"
report $? "diff's text: B's bounded figures on a line of their own"

# gate CONDITION STATUS HOLDS DEPENDS: diff --fail-if of rs2 under the
# defaults (recorded) and expandable segments (bounded); the verdict and
# the change's range from replay's bounds
gate() {
	run "$2" "$ccasim" diff --json -c expandable_segments:False -c "$exp" --fail-if "$1" "$rs2" &&
		"$python" - "$scratch/out" "$scratch/rs2.json" "$3" "$4" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
lo, hi = json.load(open(sys.argv[2]))["bounds"]["reserved_bytes.all.peak"]
c = d["gate"]["conditions"][0]
assert c["holds"] is (sys.argv[3] == "1") and c["depends"] is (sys.argv[4] == "1"), c
assert c["bounded"] and c["b_bounds"] == [lo, hi], c
a = d["a"]["peak_reserved"]
assert c["a_bounds"] == [a, a], c
if c["compare"] == "change":
    assert c["change_bounds"] == [lo - a, hi - a], c
PY
}
# the recorded timing's B (2706 MiB) is under 2800M, but not every run's
gate 'peak_reserved<2800M' 0 0 1
report $? "--fail-if peak_reserved<2800M: holds under the recorded timing, not at every end: does not hold (depends), exit 0"
gate 'peak_reserved>100M' 1 1 0
report $? "--fail-if peak_reserved>100M: holds at every end of B's range: holds, exit 1"
gate 'peak_reserved>+1G' 0 0 1
report $? "--fail-if peak_reserved>+1G: the change's range is B's range minus A, it straddles: exit 0"
run 0 "$ccasim" diff --wide -c expandable_segments:False -c "$exp" --fail-if 'peak_reserved<2800M' "$rs2" &&
	grep -q "peak_reserved<2800M: does not hold at every end of the bounds: .*bounded: A 2.90 GiB .. 2.90 GiB, B 384.00 MiB .. 9.83 GiB" "$scratch/out"
report $? "diff's gate text names the ranges and why it does not hold"

# --- plot
run 0 "$ccasim" plot --json -c "$exp" -o "$scratch/p.svg" "$loader" &&
	same "$scratch/out" runs.1 "$scratch/loader.json" bounded &&
	"$python" - "$scratch/out" "$scratch/loader.json" <<'PY'
import json, sys
runs = json.load(open(sys.argv[1]))["runs"]
assert runs[0]["certainty"] == "recorded" and runs[0]["legend_figures"] is None, runs[0]
assert runs[1]["legend_figures"].startswith("peak reserved ") and "(bounded)" in runs[1]["legend_figures"], runs[1]
PY
report $? "plot --json of loader and a what-if: the what-if's replay bounds and legend figures, the recording none"
run 0 "$ccasim" plot -c "$exp" -o "$scratch/p.svg" "$rs2" &&
	grep -q "what-if expandable_segments:True peak reserved 2.64 GiB (0 OOMs), bounded by stream timing: reserved peak 384.00 MiB .. 9.83 GiB" "$scratch/out"
report $? "plot's line names the what-if's bounded figures"
run 0 "$ccasim" plot --json --segments -c "$ms" -o "$scratch/s.svg" "$bert" &&
	same "$scratch/out" "" "$scratch/bert.json" bounded
report $? "plot --segments --json of bert under max_split_size_mb:128: replay's bounds"
run 0 "$ccasim" plot --json -o "$scratch/r.svg" "$bert" && "$python" -c '
import json, sys
r = json.load(open(sys.argv[1]))["runs"][0]
assert r["certainty"] == "recorded" and r["bounds"] is None, r
' "$scratch/out"
report $? "plot --json of a replay of the recording: certainty recorded, bounds null"

# --- view: the run's label and its JSON data
run 0 "$ccasim" view -c "$exp" -o "$scratch/v.html" "$rs2" &&
	grep -q "what-if expandable_segments:True peak reserved 2.64 GiB, bounded by stream timing: reserved peak 384.00 MiB .. 9.83 GiB" "$scratch/out" &&
	grep -q '"label":"what-if expandable_segments:True, bounded by stream timing: reserved peak 384.00 MiB .. 9.83 GiB' "$scratch/v.html" &&
	grep -q '"certainty":"bounded","bounds":{' "$scratch/v.html" &&
	grep -q '"certainty":"recorded","bounds":null' "$scratch/v.html"
report $? "view: the what-if's label and data carry its bounds, the recording's none"

# --- --no-bounds: the what-if's figures alone, one replay's, unbounded
# (what-if), and the figures equal to replay --no-bounds'
"$ccasim" replay --json --no-bounds -c "$exp" "$rs2" >"$scratch/rs2-nb.json"
for cmd in peak explain; do
	run 0 "$ccasim" $cmd --no-bounds -c "$exp" "$rs2"
	! grep -q "bounded" "$scratch/out"
	report $? "$cmd --no-bounds, rs2 what-if: no bounds in its text"
done
run 0 "$ccasim" peak --json --no-bounds -c "$exp" "$rs2" && "$python" - "$scratch/out" "$scratch/rs2-nb.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1])); r = json.load(open(sys.argv[2]))
assert p["certainty"] == "what-if", p["certainty"]
assert not p.get("bounds"), p.get("bounds")
PY
report $? "peak --json --no-bounds, rs2 what-if: certainty what-if, no bounds"
run 0 "$ccasim" view --no-bounds -c "$exp" "$rs2" -o "$scratch/nb.html"
! grep -q '"certainty":"bounded"' "$scratch/nb.html"
report $? "view --no-bounds, rs2 what-if: no run of the page is bounded"
run 0 "$ccasim" plot --no-bounds -c "$exp" "$rs2" -o "$scratch/nb.svg"
! grep -q "bounded" "$scratch/out"
report $? "plot --no-bounds, rs2 what-if: its line gives one figure, not a range"

tap_done
