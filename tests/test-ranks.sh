#!/bin/sh
# test-ranks.sh - the ranks of one distributed job (traces/ranks-2.11: two
# ranks under torchrun and ccasim-record, gloo, both on ONE H200; see its
# README for what that cannot show).  Every rank's snapshot passes
# --check; cut where the rank read memory_stats() (its tensors were freed
# after that, before ccasim-record's exit dump), all 122 keys equal
# PyTorch's; fleet's own rows and view's page give each rank's peaks as
# its memory_stats(), the rank that peaks and its skew; fit counts the
# memory outside the allocator ccasim-record measured, and says the ranks
# fit the H200 under every stream timing; the what-ifs from the default
# run match the live runs under the other settings (exact, or inside the
# printed bounds), and at rank 1's cap the what-if runs out where rank 1
# did.  Needs $CCASIM and $top_srcdir (set by make check).
set -u

srcdir=${top_srcdir:-.}
. "$srcdir/tests/tap.sh"

dir=$srcdir/traces/ranks-2.11

# cut SNAPSHOT STATS OUT: SNAPSHOT as ccasim-record would have dumped it
# when the rank read STATS' memory_stats(): its trace up to the free that
# count reached (only frees followed), and the records taken later (the
# exit dump's) moved to that point
cut() {
	"$python" - "$@" <<'EOF'
import json, lzma, pickle, re, sys
s = pickle.load(lzma.open(sys.argv[1]))
st = json.load(open(sys.argv[2]))["memory_stats"]
A, F, O = st["allocation.all.allocated"], st["allocation.all.freed"], st["num_ooms"]
t = s["device_traces"][0]
na = nf = 0
end = len(t)
for i, e in enumerate(t):
    if e["action"] == "alloc":
        na += 1
    elif e["action"] == "free_requested":
        if nf == F:
            end = i
            break
        nf += 1
assert (na, nf) == (A, F) and all(e["action"] != "alloc" for e in t[end:]), (na, A, nf, F)
s["device_traces"][0] = t[:end]
def moved(a):
    m = isinstance(a, dict) and re.match(r"ccasim:\w+ allocs=\d+ frees=(\d+)", a.get("name", ""))
    if m and int(m.group(1)) > F:
        a = dict(a, name=re.sub(r"allocs=\d+ frees=\d+ ooms=\d+",
                                "allocs=%d frees=%d ooms=%d" % (A, F, O), a["name"]))
    return a
s["external_annotations"] = [moved(a) for a in s["external_annotations"]]
pickle.dump(s, open(sys.argv[3], "wb"))
EOF
}

# within JSON STATS: every key of STATS' memory_stats equals the replay's
# (ccasim's JSON) or lies inside its printed bounds
within() {
	"$python" -c '
import json, sys
g = json.load(open(sys.argv[1]))
w = json.load(open(sys.argv[2]))["memory_stats"]
b = g.get("bounds") or {}
out = [(k, g["memory_stats"].get(k), w[k], b.get(k)) for k in w
       if g["memory_stats"].get(k) != w[k] and not (k in b and b[k][0] <= w[k] <= b[k][1])]
assert len(g["memory_stats"]) == 122 and not out, out[:4]
' "$@"
}

stat() { # stat JSON KEY
	"$python" -c 'import json, sys; print(json.load(open(sys.argv[1]))["memory_stats"][sys.argv[2]])' "$@"
}

# --- every rank's snapshot replays exactly ----------------------------
for f in "$dir"/*.pickle.xz; do
	run 0 "$ccasim" replay --check "$f" && grep -q '^check: passed' "$scratch/out"
	report $? "$(basename "$f" .pickle.xz): --check passes"
done
for j in "$dir"/*.rank?.json; do
	b=${j%.json}
	cut "$b.pickle.xz" "$j" "$scratch/cut.pickle" &&
		run 0 "$ccasim" replay --json "$scratch/cut.pickle" && "$python" -c '
import json, sys
got = json.load(open(sys.argv[1]))["memory_stats"]
want = json.load(open(sys.argv[2]))["memory_stats"]
bad = [k for k in want if got.get(k) != want[k]]
assert len(got) == 122 and not bad, [(k, got.get(k), want[k]) for k in bad]
' "$scratch/out" "$j"
	report $? "$(basename "$b"): at its memory_stats() call, all 122 keys equal PyTorch's"
done

# --- the job's ranks side by side --------------------------------------
r0=$dir/ddp.default.r0.rank0
r1=$dir/ddp.default.r0.rank1
mkdir "$scratch/job"
cp "$r0.pickle.xz" "$r1.pickle.xz" "$scratch/job/"
run 0 "$ccasim" fleet run --no-progress -j 2 "$scratch/job" --out "$scratch/fleet" &&
	"$python" - "$scratch/fleet" "$r0.json" "$r1.json" <<'EOF'
import glob, json, os, sys
rows = [json.loads(l) for f in glob.glob(sys.argv[1] + "/*.jsonl") for l in open(f)]
for k, js in enumerate(sys.argv[2:]):
    st = json.load(open(js))["memory_stats"]
    (own,) = [r for r in rows if r["recorded"] and r["path"].endswith("rank%d.pickle.xz" % k)]
    assert own["peak_reserved"] == st["reserved_bytes.all.peak"], (k, own["peak_reserved"])
    assert own["peak_allocated"] == st["allocated_bytes.all.peak"], (k, own["peak_allocated"])
    assert own["own_device"]["source"] == "recorded by ccasim-record", own["own_device"]
EOF
report $? "fleet run: each rank's own row has its memory_stats() peaks (reserved and allocated)"
run 0 "$ccasim" fleet merge --json "$scratch/fleet" && "$python" - "$scratch/out" "$r0.json" "$r1.json" <<'EOF'
import json, sys
m = json.load(open(sys.argv[1]))
text = json.dumps(m)
for js in sys.argv[2:]:
    st = json.load(open(js))["memory_stats"]
    assert str(st["reserved_bytes.all.peak"]) in text, st["reserved_bytes.all.peak"]
EOF
report $? "fleet merge: the report carries each rank's reserved peak"

if run 0 "$ccasim" view "$r0.pickle.xz" "$r1.pickle.xz" -o "$scratch/ranks.html"; then
	"$python" - "$scratch/ranks.html" "$r0.json" "$r1.json" <<'EOF'
import json, re, sys
page = open(sys.argv[1]).read()
meta = json.loads(re.search(r'<script[^>]*id="meta"[^>]*>(.*?)</script>', page, re.S).group(1))
runs = meta["runs"]
assert len(runs) == 2, len(runs)
for run, js in zip(runs, sys.argv[2:]):
    st = json.load(open(js))["memory_stats"]
    assert run["peak_reserved"] == st["reserved_bytes.all.peak"], run
    assert run["peak_allocated"] == st["allocated_bytes.all.peak"], run
EOF
	report $? "view of both ranks: each rank's peaks are its memory_stats()"
	chromium=$(command -v chromium || command -v chromium-browser || true)
	if [ -n "$chromium" ]; then
		timeout 120 "$chromium" --headless --disable-gpu --no-sandbox --no-first-run \
			--user-data-dir="$scratch/chromium" --virtual-time-budget=30000 \
			--dump-dom "file://$scratch/ranks.html" >"$scratch/dom" 2>"$scratch/err"
		"$python" - "$scratch/dom" "$r0.json" "$r1.json" <<'EOF'
import json, re, sys
dom = open(sys.argv[1]).read()
fig = dict(re.findall(r'data-([a-z0-9-]+)="([^"]*)"', re.search(r'<[^>]*id="figures"[^>]*>', dom).group(0)))
peaks = [json.load(open(js))["memory_stats"]["reserved_bytes.all.peak"] for js in sys.argv[2:]]
top = max(range(len(peaks)), key=peaks.__getitem__)
skew = 100.0 * (max(peaks) - min(peaks)) / min(peaks)
assert [int(fig["peak-reserved-%d" % k]) for k in range(2)] == peaks, fig
assert int(fig["peak-rank"]) == top and abs(float(fig["rank-skew"]) - skew) < 0.01, (fig, skew)
assert '<pre id="js-errors"></pre>' in dom
EOF
		report $? "the page names the rank that peaks (rank 1) and its skew over rank 0 (55.48 %)"
	else
		skip "the page names the rank that peaks and its skew" "no chromium"
	fi
else
	skip "view of both ranks" "this ccasim's view takes one trace"
	skip "the page names the rank that peaks and its skew" "this ccasim's view takes one trace"
fi

# --- fit: the whole device -------------------------------------------------
for k in 0 1; do
	eval b=\$r$k
	run 0 "$ccasim" fit --recorded --no-progress --gpu H200 --json "$b.pickle.xz" &&
		"$python" - "$scratch/out" "$b.pickle.xz" <<'EOF'
import json, lzma, pickle, re, sys
d = json.load(open(sys.argv[1]))
s = pickle.load(lzma.open(sys.argv[2]))
(peak,) = [a["name"] for a in s["external_annotations"] if "when=peak" in a["name"]]
f = {k: int(v) for k, v in re.findall(r"(total|free|reserved)=(\d+)", peak)}
assert d["context"] == f["total"] - f["free"] - f["reserved"], (d["context"], f)
assert "ccasim-record" in d["context_source"], d["context_source"]
(row,) = d["rows"]
assert row["gpus"]["H200"] is True and row["timing"]["gpus"]["H200"] is True, row
EOF
	report $? "fit rank $k: the memory outside the allocator is ccasim-record's, and it fits the H200 under every timing"
done

# --- what-ifs from the default run -----------------------------------------
for k in 0 1; do
	cut "$dir/ddp.default.r0.rank$k.pickle.xz" "$dir/ddp.default.r0.rank$k.json" "$scratch/d$k.pickle"
	for live in "$dir"/ddp.exp.r?.rank$k.json "$dir"/ddp.ms128.r?.rank$k.json; do
		case $live in *exp*) conf=expandable_segments:True ;; *) conf=max_split_size_mb:128 ;; esac
		name=$(basename "$live" .json)
		run 0 "$ccasim" replay --json --whatif --config "$conf" "$scratch/d$k.pickle" &&
			within "$scratch/out" "$live"
		status=$?
		case $name in
		ddp.ms128.r0.rank1)
			todo $status "default -> $conf: $name exact or inside the bounds" \
				"12 keys (allocated and active bytes) outside: the live addresses placed no model does (with them, exact)" ;;
		*) report $status "default -> $conf: $name exact or inside the bounds" ;;
		esac
	done
done
# the cap of the cap runs (1.15 x the rank's peak allocated): rank 1 ran out
# of memory at a 128 MiB request with 1560281088 bytes reserved; rank 0
# did not in the 761 allocations it made before it waited on rank 1's
# all-reduce for ever (the what-if runs out later, at the end of step 6)
for k in 0 1; do
	frac=$("$python" -c '
import lzma, pickle, re, sys
s = pickle.load(lzma.open(sys.argv[1]))
print([re.search(r"fraction=(\S+)", a["name"]).group(1) for a in s["external_annotations"]
       if a["name"].startswith("ccasim:memory_fraction")][0])' "$dir/ddp.cap.r0.rank$k.pickle.xz")
	run 0 "$ccasim" replay --json --whatif --memory-fraction "$frac" \
		"$dir/ddp.default.r0.rank$k.pickle.xz" && "$python" - "$scratch/out" \
		"$dir/ddp.cap.r0.rank$k.pickle.xz" "$dir/ddp.default.r0.rank$k.pickle.xz" <<'EOF'
import json, lzma, pickle, sys
g = json.load(open(sys.argv[1]))
live = pickle.load(lzma.open(sys.argv[2]))["device_traces"][0]
base = pickle.load(lzma.open(sys.argv[3]))["device_traces"][0]
ooms = [i for i, e in enumerate(live) if e["action"] == "oom"]
if not ooms:  # rank 0 stopped early (waiting on rank 1), no OOM: none before that point
    n = sum(e["action"] == "alloc" for e in live)
    assert g["oom"] is None or sum(e["action"] == "alloc" for e in base[:g["oom"]["event"]]) > n, (
        g["oom"], n)
else:
    nth = sum(e["action"] == "alloc" for e in live[:ooms[0]])
    (i,) = [i for i, e in enumerate(base) if e["action"] == "alloc"][nth:nth + 1]
    o = g["oom"]
    assert o["event"] == i and o["size"] == live[ooms[0]]["size"] == base[i]["size"], (o, i)
    assert o["reserved"] == 1560281088, o
EOF
	report $? "default -> rank $k's cap (fraction $frac): the what-if runs out where rank $k did, and not before"
done

tap_done
