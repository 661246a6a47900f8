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

# proof TRACE: replay --json of TRACE (no cap given) into $scratch/out.
proof() {
	run 0 "$ccasim" replay --json "$1"
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
run 0 "$ccasim" replay "$traces/dyninfer.cap.pickle.xz" &&
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
run 0 "$ccasim" replay --json --recorded-memory-fraction 0.006181486 "$traces/dyninfer.cap.pickle.xz" &&
	"$python" -c '
import json, sys
assert json.load(open(sys.argv[1]))["cap_proved"] is None' "$scratch/out"
report $? "a cap given proves nothing more"
run 0 "$ccasim" replay --json "$srcdir/traces/calls-2.11/oom2/rank00.oom.pickle.xz" && "$python" -c '
import json, sys
assert json.load(open(sys.argv[1]))["cap_proved"] is None' "$scratch/out"
report $? "a cap ccasim-record recorded is known, not inferred"
for w in bert.cap seedfrag.default; do
	proof "$traces/$w.pickle.xz" && "$python" -c '
import json, sys
assert json.load(open(sys.argv[1]))["cap_proved"] is None' "$scratch/out"
	report $? "$w (no OOM) proves no cap"
done

tap_done
