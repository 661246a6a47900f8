#!/bin/sh
# test-recorded-cap.sh - one question, one answer (TAP): a recording made
# under a cap and garbage_collection_threshold (bert.gc), given its cap
# with --recorded-memory-fraction, has PyTorch's peak reserved memory in
# replay, sweep's recorded row, peak and explain alike, each labelled
# recorded; the same cap given with --memory-fraction is a what-if and
# each command says so.  Needs $CCASIM and $top_srcdir (set by make check).
set -u

srcdir=${top_srcdir:-.}
. "$srcdir/tests/tap.sh"

trace=$traces/bert.gc.pickle.xz
meta=$traces/bert.gc.json
F=$("$python" -c '
import json, sys
d = json.load(open(sys.argv[1]))
print(repr(d["cap_bytes"] / d["total_memory"]))' "$meta")
pytorch_peak=$("$python" -c '
import json, sys
print(json.load(open(sys.argv[1]))["memory_stats"]["reserved_bytes.all.peak"])' "$meta")

run 0 "$ccasim" replay --json --recorded-memory-fraction "$F" "$trace" && "$python" -c '
import json, sys
r = json.load(open(sys.argv[1]))
assert r["whatif"] is False
assert r["memory_stats"]["reserved_bytes.all.peak"] == int(sys.argv[2])' "$scratch/out" "$pytorch_peak"
report $? "replay --recorded-memory-fraction: PyTorch's peak reserved ($pytorch_peak B), recorded"
run 0 "$ccasim" sweep --json --recorded-memory-fraction "$F" "$trace" && "$python" -c '
import json, sys
rows = [r for r in json.load(open(sys.argv[1]))["rows"] if r["recorded"]]
assert len(rows) == 1 and rows[0]["whatif"] is False, rows
assert rows[0]["peak_reserved"] == int(sys.argv[2]), rows[0]["peak_reserved"]' "$scratch/out" "$pytorch_peak"
report $? "sweep --recorded-memory-fraction: the recorded row is the same figure, not a what-if"
run 0 "$ccasim" peak --json --recorded-memory-fraction "$F" "$trace" && "$python" -c '
import json, sys
f = json.load(open(sys.argv[1]))["figures"]
assert f["reserved_peak"]["reserved"] == int(sys.argv[2]), f["reserved_peak"]' "$scratch/out" "$pytorch_peak"
report $? "peak --recorded-memory-fraction: the same figure"
run 0 "$ccasim" peak --recorded-memory-fraction "$F" "$trace" &&
	head -n 1 "$scratch/out" | grep -q 'recorded memory fraction 0.1147$'
report $? "... labelled as the recorded cap"
run 0 "$ccasim" explain --recorded-memory-fraction "$F" "$trace" &&
	grep -q '^Peak reserved 10.87 GiB' "$scratch/out"
report $? "explain --recorded-memory-fraction: the same peak (10.87 GiB)"
run 0 "$ccasim" fit --recorded --recorded-memory-fraction "$F" "$trace"
report $? "fit takes --recorded-memory-fraction"
run 0 "$ccasim" diff --json --recorded-memory-fraction "$F" "$trace" "$trace" && "$python" -c '
import json, sys
d = json.load(open(sys.argv[1]))
for side in "a", "b":
    assert d[side]["reserved_bytes_peak"] == d[side]["peak_reserved"] == int(sys.argv[2]), d[side]
' "$scratch/out" "$pytorch_peak"
report $? "diff --recorded-memory-fraction: the same figure on both sides"
run 0 "$ccasim" view --recorded-memory-fraction "$F" -o "$scratch/page.html" "$trace" &&
	grep -q "recorded .* peak reserved 10.87 GiB" "$scratch/out"
report $? "view --recorded-memory-fraction: the same peak, labelled recorded"
run 0 "$ccasim" peak --memory-fraction "$F" "$trace" &&
	head -n 1 "$scratch/out" | grep -q 'what-if memory fraction 0.1147$'
report $? "peak --memory-fraction (no recorded cap given) labels its figure a what-if"
run 0 "$ccasim" replay --json --memory-fraction "$F" "$trace" && "$python" -c '
import json, sys
assert json.load(open(sys.argv[1]))["whatif"] is True' "$scratch/out"
report $? "replay --memory-fraction alone is a what-if and says so"

tap_done
