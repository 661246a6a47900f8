#!/bin/sh
# test-timing-verdicts.sh - sweep, fit and fleet judge "fits" by every
# stream timing, not the recorded one alone (doc/whatif.md, "Stream
# timing"; sim/study/sweep.c, fit.c, fleet.c).  rs2 (traces/uncertain-2.11)
# frees across streams with record_stream: five of its six live runs under
# a 290 MiB cap ran out of memory, all three under 420 MiB ran to the end
# with 420 MiB reserved.  Replayed from its default run under those caps,
# a sweep must say "may run out" at 290 MiB and "fits" at 420 MiB, and fit
# must put the memory every timing needs between the two.  Needs $CCASIM
# and $top_srcdir (set by make check).
set -u

srcdir=${top_srcdir:-.}
. "$srcdir/tests/tap.sh"

dir=$srcdir/traces/uncertain-2.11
base=$dir/rs2.default.r0.pickle.xz
total=150109880320 # the H200's totalGlobalMem, as the live runs reported it
f290=$("$python" -c "print(304087040 / $total)")
f420=$("$python" -c "print(440401920 / $total)")

# 290 MiB: the replay of the recorded completions fits, another timing does not
run 0 "$ccasim" sweep --json --set max_split_size_mb=default --memory-fraction "$f290" "$base" &&
	"$python" -c '
import json, sys
d = json.load(open(sys.argv[1]))
(row,) = d["rows"]
assert row["oom"] is False and row["may_oom"] is True, row
assert row["timing"] > 1 and row["bounds"]["num_ooms"][1] > 0, row["bounds"]
' "$scratch/out"
report $? "290 MiB cap (5 of 6 live runs ran out): the recorded timing fits, the row may run out"

run 0 "$ccasim" sweep --recommend --set max_split_size_mb=default --memory-fraction "$f290" "$base" &&
	grep -q "No setting in this grid is sure to run" "$scratch/out" &&
	grep -Eq '^1 .* depends ' "$scratch/out" &&
	grep -q "OOM under some timings" "$scratch/out"
report $? "its text says depends, names the timing and recommends nothing"

# 420 MiB: every timing fits, and the live runs' peaks lie in the bounds
run 0 "$ccasim" sweep --json --set max_split_size_mb=default --memory-fraction "$f420" "$base" &&
	"$python" -c '
import json, sys
d = json.load(open(sys.argv[1]))
(row,) = d["rows"]
assert row["oom"] is False and row["may_oom"] is False, row
lo, hi = row["peak_reserved_bounds"] or [row["peak_reserved"]] * 2
for r in range(3):
    live = json.load(open("%s/rs2.cap.r%d.json" % (sys.argv[2], r)))["memory_stats"]
    assert live["num_ooms"] == 0
    assert lo <= live["reserved_bytes.all.peak"] <= hi, (lo, live["reserved_bytes.all.peak"], hi)
' "$scratch/out" "$dir"
report $? "420 MiB cap (3 of 3 live runs fit): the row fits and holds the live reserved peaks"

# fit: the memory every timing needs lies between the two caps
run 0 "$ccasim" fit --json --set max_split_size_mb=default "$base" &&
	"$python" -c '
import json, sys
d = json.load(open(sys.argv[1]))
(row,) = [r for r in d["rows"] if r["recorded"]]
t = row["timing"]
mib = 1 << 20
assert row["device_memory"] <= t["device_memory"], (row["device_memory"], t)
assert 290 * mib < t["device_memory"] <= 420 * mib, t
print(t["device_memory"] - 2 * mib, t["runs_out_below"])
' "$scratch/out" >"$scratch/below"
report $? "fit: the recorded settings need more than 290 and at most 420 MiB under every timing"

read -r below timing <"$scratch/below"
run 0 "$ccasim" replay --json --device-memory "$below" --completions "$timing" "$base" &&
	"$python" -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["memory_stats"]["num_ooms"] > 0, d["memory_stats"]["num_ooms"]
' "$scratch/out"
report $? "fit: 2 MiB below that answer, the timing it names runs out ($timing)"

run 0 "$ccasim" fit --set max_split_size_mb=default "$base" &&
	tr -s ' \n' '  ' <"$scratch/out" |
	grep -Eq "fits in [0-9]+ MiB with the recorded completions .* needs [0-9]+ MiB under every timing"
report $? "fit's text gives both answers"

# no deferred frees: no timing, "may run out" is the plain OOM
run 0 "$ccasim" sweep --json --set max_split_size_mb=128,default "$dir/gen.default.r0.pickle.xz" &&
	"$python" -c '
import json, sys
d = json.load(open(sys.argv[1]))
for row in d["rows"]:
    assert row["timing"] is None and row["bounds"] is None, row
    assert row["may_oom"] == row["oom"], row
' "$scratch/out"
report $? "gen (no record_stream): no timing, may_oom is the replay's OOM"

tap_done
