#!/bin/sh
# test-stream-bounds.sh - a what-if's figures bounded over stream timing
# (doc/whatif.md, "Stream timing"; sim/study/timing.c).  On the real runs of
# traces/uncertain-2.11: every what-if from rs2.default.rN and
# loader.default.rN (record_stream frees, whose completions are a race) and
# gen.default.rN (a growing cache whose ties go by device address) to
# each other setting whose live runs made the same requests holds every
# live run's reserved-side keys inside its printed bounds (or equal to the
# single figure where none is printed); a what-if of a trace without
# deferred frees (gen) prints no bounds; a replay of the recording prints
# none and stays exact.  Needs $CCASIM and $top_srcdir (set by make check).
set -u

srcdir=${top_srcdir:-.}
. "$srcdir/tests/tap.sh"

dir=$srcdir/traces/uncertain-2.11

if ! "$python" -c 'import lzma, pickle' 2>/dev/null; then
	skip "stream bounds" "no python3 with lzma"
	tap_done
fi
"$python" "$srcdir/tools/timing-eval.py" "$ccasim" "$dir" rs2 loader gen >"$scratch/eval" 2>"$scratch/err"
cases=0
while read -r what name arrow setting inside of total rest; do
	[ "$what" = what-if ] || continue
	cases=$((cases + 1))
	[ "$inside" = "$total" ]
	report $? "$name -> ${setting%:} $inside $of $total $rest"
done <"$scratch/eval"
[ "$cases" -eq 45 ]
report $? "every what-if measured: rs2, loader and gen, 3 base runs x 5 settings ($cases)"

# rs2 to expandable segments: the reserved peak is bounded, the bounds
# hold the recorded timing's figure, and the text says why
run 0 "$ccasim" replay --json --config expandable_segments:True "$dir/rs2.default.r0.pickle.xz" &&
	"$python" -c '
import json, sys
r = json.load(open(sys.argv[1]))
lo, hi = r["bounds"]["reserved_bytes.all.peak"]
assert r["whatif"] and r["deferred_frees"] > 0
assert lo <= r["memory_stats"]["reserved_bytes.all.peak"] <= hi and lo < hi, (lo, hi)
assert r["bounds_timings"]["reserved_bytes.all.peak"] == ["earliest", "never"], r["bounds_timings"]
' "$scratch/out"
report $? "rs2.default.r0 under expandable_segments:True: reserved peak bounded from the earliest completions to none"
run 0 "$ccasim" replay --config expandable_segments:True "$dir/rs2.default.r0.pickle.xz" &&
	grep -q "completions of frees deferred by record_stream are a race" "$scratch/out" &&
	grep -Eq '^  reserved_bytes.all.peak +[0-9]+ \.\. [0-9]+ ' "$scratch/out"
report $? "its text names the uncertain figures and why"

# no deferred frees: no bounds, and the text says nothing of timing
run 0 "$ccasim" replay --json --config expandable_segments:True "$dir/gen.default.r0.pickle.xz" &&
	"$python" -c '
import json, sys
r = json.load(open(sys.argv[1]))
assert r["whatif"] and r["deferred_frees"] == 0 and r["bounds"] is None, r["bounds"]
' "$scratch/out"
report $? "gen.default.r0 (no record_stream) under expandable_segments:True: bounds null"

# ties by address: the bounds come from the address models, and hold the
# live runs' 274 and 276 MiB (gen.rp4.r0..r2)
run 0 "$ccasim" replay --json --config roundup_power2_divisions:4 "$dir/gen.default.r0.pickle.xz" &&
	"$python" -c '
import json, sys
r = json.load(open(sys.argv[1]))
lo, hi = r["bounds"]["reserved_bytes.all.peak"]
assert r["deferred_frees"] == 0 and r["address_ties"] > 0
assert all(s.startswith("address:") for s in r["bounds_timings"]["reserved_bytes.all.peak"])
for n in range(3):
    live = json.load(open("%s/gen.rp4.r%d.json" % (sys.argv[2], n)))["memory_stats"]
    assert lo <= live["reserved_bytes.all.peak"] <= hi, (lo, live["reserved_bytes.all.peak"], hi)
' "$scratch/out" "$dir"
report $? "gen.default.r0 under roundup_power2_divisions:4: address models bound the reserved peak, live runs inside"
run 0 "$ccasim" replay --config roundup_power2_divisions:4 "$dir/gen.default.r0.pickle.xz" &&
	grep -q "^address placement: the what-if decided [0-9]* times by device" "$scratch/out"
report $? "its text says the figures depend on address placement, and why"
run 0 "$ccasim" replay --config expandable_segments:True "$dir/gen.default.r0.pickle.xz" &&
	! grep -q "stream timing" "$scratch/out"
report $? "its text says nothing of stream timing"

# a replay of the recording is the trace's own: exact, no bounds
run 0 "$ccasim" replay --json --check "$dir/rs2.default.r0.pickle.xz" &&
	"$python" -c '
import json, sys
r = json.load(open(sys.argv[1]))
live = json.load(open(sys.argv[2]))["memory_stats"]
assert not r["whatif"] and r["check"]["passed"] and r["bounds"] is None
assert all(r["memory_stats"][k] == v for k, v in live.items())
' "$scratch/out" "$dir/rs2.default.r0.json"
report $? "rs2.default.r0 replayed as recorded: --check passes, all keys equal PyTorch's, no bounds"

run 2 "$ccasim" replay --completions sometime "$dir/rs2.default.r0.pickle.xz" &&
	grep -q -- "--completions" "$scratch/err"
report $? "--completions sometime: a usage error naming the option (exit 2)"

tap_done
