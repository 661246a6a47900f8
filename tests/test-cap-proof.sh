#!/bin/sh
# test-cap-proof.sh - a cap nobody passed (TAP): replayed without its cap,
# a bundled recording that died of an OOM while the device had room says a
# cap was in force and bounds it (replay --json's cap_proved), and the
# bounds hold the cap the run really had (its W.C.json's cap_bytes); runs
# without an OOM, and runs whose cap ccasim-record recorded, prove nothing.
# Needs $CCASIM and $top_srcdir (set by make check).
set -u

srcdir=${top_srcdir:-.}
. "$srcdir/tests/tap.sh"

# proof TRACE [STATUS]: replay --json of TRACE (no cap given) into
# $scratch/out, exiting STATUS (default 3: the run ran out of memory).
proof() {
	run "${2:-3}" "$ccasim" replay --json "$1"
}

for w in dyninfer.cap dyninfer.capms multistream.cap multistream.capms; do
	proof "$traces/$w.pickle.xz" && "$python" -c '
import json, sys
meta = json.load(open(sys.argv[2]))
allowed = int(meta["cap_bytes"] / meta["total_memory"] * meta["total_memory"])
p = json.load(open(sys.argv[1]))["cap_proved"]
assert meta["status"].startswith("oom"), meta["status"]
assert p and p["lo"] <= allowed <= p["hi"], (p, allowed)
' "$scratch/out" "$traces/$w.json"
	report $? "$w without its cap: the OOM proves one, and the bounds hold PyTorch's"
done
for w in graphs.cap rscap.cap rsdet.cap compile.cap; do
	proof "$srcdir/traces/patterns-2.11/$w.pickle.xz" && "$python" -c '
import json, sys
meta = json.load(open(sys.argv[2]))
allowed = int(meta["cap_bytes"] / meta["total_memory"] * meta["total_memory"])
p = json.load(open(sys.argv[1]))["cap_proved"]
assert p and p["lo"] <= allowed <= p["hi"], (p, allowed)
' "$scratch/out" "$srcdir/traces/patterns-2.11/$w.json"
	report $? "patterns $w without its cap: bounds that hold PyTorch's"
done
run 3 "$ccasim" replay "$traces/dyninfer.cap.pickle.xz" &&
	grep -q '^  A cap was in force: the device had 130.96 GiB free at this OOM' "$scratch/out"
report $? "the text says a cap was in force and why"
run 0 "$ccasim" sweep --json "$traces/dyninfer.cap.pickle.xz" && "$python" -c '
import json, sys
meta = json.load(open(sys.argv[2]))
allowed = int(meta["cap_bytes"] / meta["total_memory"] * meta["total_memory"])
p = json.load(open(sys.argv[1]))["cap_proved"]
assert p and p["lo"] <= allowed <= p["hi"], (p, allowed)' "$scratch/out" "$traces/dyninfer.cap.json"
report $? "sweep --json carries the recorded row's cap_proved"
run 0 "$ccasim" sweep --recommend "$traces/dyninfer.cap.pickle.xz" &&
	tr '\n' ' ' <"$scratch/out" | grep -q 'gets furthest (to event 6838 of the trace).*a cap was in force'
report $? "sweep --recommend puts the OOM at the recorded event and says a cap was in force"
run 3 "$ccasim" replay --json --recorded-memory-fraction 0.006181486 "$traces/dyninfer.cap.pickle.xz" &&
	"$python" -c '
import json, sys
assert json.load(open(sys.argv[1]))["cap_proved"] is None' "$scratch/out"
report $? "a cap given proves nothing more"
run 3 "$ccasim" replay --json "$srcdir/traces/calls-2.11/oom2/rank00.oom.pickle.xz" && "$python" -c '
import json, sys
assert json.load(open(sys.argv[1]))["cap_proved"] is None' "$scratch/out"
report $? "a cap ccasim-record recorded is known, not inferred"
for w in bert.cap seedfrag.default; do
	proof "$traces/$w.pickle.xz" 0 && "$python" -c '
import json, sys
assert json.load(open(sys.argv[1]))["cap_proved"] is None' "$scratch/out"
	report $? "$w (no OOM) proves no cap"
done

# fleet: a job without a cap whose OOM proves one is a job that runs out of
# memory under its own settings (it counted as fitting), replayed under the
# largest cap the recording allows; a job whose manifest gives its cap
# replays its recording under it (its own peak is PyTorch's).
mkdir -p "$scratch/fleet-in"
cp "$traces/dyninfer.cap.pickle.xz" "$traces/seedfrag.default.pickle.xz" "$scratch/fleet-in/"
run 0 "$ccasim" fleet run -j 1 --no-progress "$scratch/fleet-in" --out "$scratch/fleet" &&
	run 0 "$ccasim" fleet merge --json "$scratch/fleet" && "$python" -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["own_settings_oom"] == 1, d["own_settings_oom"]' "$scratch/out"
report $? "fleet: the OOM dump without its cap runs out of memory under its own settings"
"$python" -c '
import glob, json, sys
meta = json.load(open(sys.argv[2]))
allowed = int(meta["cap_bytes"] / meta["total_memory"] * meta["total_memory"])
rows = [json.loads(l) for f in glob.glob(sys.argv[1] + "/rows.*") for l in open(f)]
own = [r for r in rows if r.get("path", "").endswith("dyninfer.cap.pickle.xz") and r.get("recorded")]
assert own, "no row"
p = own[0]["own_device"]["cap_proved"]
assert p["lo"] <= allowed <= p["hi"] and own[0]["own_device"]["cap"] == p["hi"], (p, allowed)
assert not own[0]["fits"] and own[0]["oom_event"] == 6838, own[0]
' "$scratch/fleet" "$traces/dyninfer.cap.json"
report $? "... its row carries cap_proved (holding PyTorch's cap), takes the largest, OOMs at the recorded event"
run 0 "$ccasim" fleet merge "$scratch/fleet" &&
	grep -q 'cap inferred 850.00 MiB..1.02 GiB (the largest taken)' "$scratch/out"
report $? "... and the text says the cap was inferred"
printf 'dyninfer.cap.pickle.xz cap=927911987\n' >"$scratch/fleet-in/capped.manifest"
run 0 "$ccasim" fleet run -j 1 --no-progress "$scratch/fleet-in/capped.manifest" --out "$scratch/fleet2" &&
	"$python" -c '
import glob, json, sys
meta = json.load(open(sys.argv[2]))
rows = [json.loads(l) for f in glob.glob(sys.argv[1] + "/rows.*") for l in open(f)]
own = [r for r in rows if r.get("recorded") and r.get("origin") == "recorded"]
assert own and own[0]["own_device"]["cap_proved"] is None, own[:1]
want = meta["memory_stats"]["reserved_bytes.all.peak"]
assert own[0]["peak_reserved"] == want, (own[0]["peak_reserved"], want)
' "$scratch/fleet2" "$traces/dyninfer.cap.json"
report $? "fleet: a job whose manifest gives its cap replays the recording under it (PyTorch's peak)"

tap_done
