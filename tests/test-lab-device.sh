#!/bin/sh
# test-lab-device.sh - the lab programs of traces/lab against PyTorch itself:
# gpu-scripts/lab-check.py ran each one with torch 2.11 on an H200 under its own
# settings and its `# check:` settings (traces/lab/torch-2.11-h200.jsonl,
# PyTorch's memory_stats() after the program); `ccasim replay --json` of
# the lab under the same settings must give every key the same.
set -u

srcdir=${top_srcdir:-.}
. "$srcdir/tests/tap.sh"

runs=$srcdir/traces/lab/torch-2.11-h200.jsonl
"$python" - "$ccasim" "$srcdir" "$runs" >"$scratch/out" 2>&1 <<'PY'
import json, subprocess, sys
ccasim, srcdir, runs = sys.argv[1:4]
for line in open(runs):
    run = json.loads(line)
    lab = srcdir + "/" + run["lab"]
    # the settings PyTorch ran under ("" is the defaults, not the lab's own)
    args = [ccasim, "replay", "--json", lab, "--config", run["config"]]
    p = subprocess.run(args, capture_output=True, text=True)
    if p.returncode != 0:
        print("not-ok %s %r: exit %d %s" % (run["lab"], run["config"], p.returncode, p.stderr.strip()))
        continue
    model = json.loads(p.stdout)["memory_stats"]
    differ = [k for k, v in run["memory_stats"].items() if model.get(k) != v]
    peak = run["memory_stats"]["reserved_bytes.all.peak"] >> 20
    print("%s %s %r: %d keys, peak reserved %d MiB%s" % (
        "ok" if not differ else "not-ok", run["lab"], run["config"], len(run["memory_stats"]),
        peak, "" if not differ else "; differ: " + ", ".join(differ[:4])))
PY
while read -r status rest; do
	[ "$status" = ok ]
	report $? "$rest"
done <"$scratch/out"
[ "$n" -ge 9 ]
report $? "every lab run measured ($n)"
tap_done
