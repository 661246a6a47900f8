#!/bin/sh
# test-validation-scripts.sh - the GPU validation's helpers without a GPU or torch
# (TAP): gpu-scripts/torch_replay.py's options and plan_pools() (imported by a
# python3 without torch), its replay loop against tests/data/faketorch (a
# stand-in for torch that logs what it is asked), the plan's
# empty_cache_at list in `ccasim replay --json`, validate/validation-table.py's
# labels on the hand-made results of tests/data/validation-runs, and
# gpu-scripts/run-validation.sh end to end with `ccasim gpu` faked by the
# simulation.  Needs $CCASIM and $top_srcdir (set by make check).
set -u

srcdir=${top_srcdir:-.}
# the stand-in torch and the tools are imported from the source tree: no
# bytecode written there
export PYTHONDONTWRITEBYTECODE=1
. "$srcdir/tests/tap.sh"

patterns=$srcdir/traces/patterns-2.11
tr=$srcdir/gpu-scripts/torch_replay.py
vt=$srcdir/validate/validation-table.py
faketorch=$srcdir/tests/data/faketorch
fixtures=$srcdir/tests/data/validation-runs

if [ "$python" = false ]; then
	skip "validation helpers" "no python3"
	tap_done
fi

# py CODE...: runs python code with torch_replay.py imported as `tr`
py() {
	"$python" - "$tr" "$srcdir" "$@" <<EOF
import importlib.util, sys
spec = importlib.util.spec_from_file_location("torch_replay", sys.argv[1])
tr = importlib.util.module_from_spec(spec)
spec.loader.exec_module(tr)
srcdir = sys.argv[2]
$(cat)
EOF
}

# ------------------------------------------------ torch_replay.py, no torch
printf 'assert "torch" not in sys.modules, "imported torch"\n' | py >"$scratch/out" 2>"$scratch/err"
report $? "torch_replay.py imports without importing torch"

cat >"$scratch/args.py" <<'EOF'
rows = [  # (argv, expected positions, expected snapshot suffix)
    (["t.pickle"], [], None),
    (["t.pickle", "--empty-cache-at", "270"], [270], None),
    (["t.pickle", "--empty-cache-at", "9,3,3, 5"], [3, 5, 9], None),
    (["t.pickle", "--empty-cache-at", ""], [], None),
    (["t.pickle", "--snapshot", "out.pickle"], [], "/out.pickle"),
]
for argv, at, snap in rows:
    a = tr.parse_args(argv)
    assert a.empty_cache_at == at, (argv, a.empty_cache_at)
    assert (a.snapshot is None) == (snap is None), argv
    if snap:
        assert a.snapshot.startswith("/") and a.snapshot.endswith(snap), a.snapshot
a = tr.parse_args(["t.pickle", "--cap", "1000", "--empty-cache-at", "4,2",
                   "--snapshot", "s.pickle", "--no-pools"])
cmd = tr.child_command(a)
i = cmd.index("--empty-cache-at")
assert cmd[i + 1] == "2,4", cmd
assert cmd[cmd.index("--snapshot") + 1] == a.snapshot, cmd
assert "--no-pools" in cmd and "--child" in cmd and cmd[cmd.index("--cap") + 1] == "1000"
assert "--empty-cache-at" not in tr.child_command(tr.parse_args(["t.pickle"]))
EOF
py <"$scratch/args.py" >"$scratch/out" 2>"$scratch/err"
report $? "torch_replay.py: --empty-cache-at and --snapshot parsed and passed to the child"

ok=0
for bad in "x" "3,-1" "1.5" "2;3"; do
	run 2 "$python" "$tr" t.pickle --empty-cache-at "$bad" &&
		grep -q 'empty-cache-at' "$scratch/err" || ok=1
done
report $ok "torch_replay.py: a position that is no number is a usage error (exit 2)"

# plan_pools on hand-made traces: one row per rule
cat >"$scratch/pools.py" <<'EOF'
M = 1 << 20
def e(action, addr, size=M):
    return {"action": action, "addr": addr, "size": size, "stream": 0}
A, B, C = 0x1000000000, 0x2000000000, 0x3000000000
seg = lambda addr, size, pid: {"address": addr, "total_size": size,
                               "segment_pool_id": pid, "blocks": []}

# 1. a private segment of the final state serves the requests after the
#    segment_alloc that made it, not the default-pool ones before it
trace = [e("segment_alloc", A, 16 * M), e("alloc", A), e("free_completed", A),
         e("segment_free", A, 16 * M), e("segment_alloc", A, 32 * M), e("alloc", A + M),
         e("alloc", B)]
route, rel, pools = tr.plan_pools(trace, [seg(A, 32 * M, (1, 0)), seg(B, 2 * M, (0, 0))])
assert route == {5: ("pool", 1, 0)}, route
assert rel == {} and pools == [("pool", 1, 0)], (rel, pools)
# ... all of them when the trace never made it; one pool per id
trace = [e("alloc", A), e("alloc", B), e("alloc", C)]
route, rel, pools = tr.plan_pools(trace, [seg(A, 2 * M, (0, 1)), seg(B, 2 * M, (0, 1)),
                                          seg(C, 2 * M, (0, 2))])
assert route == {0: ("pool", 0, 1), 1: ("pool", 0, 1), 2: ("pool", 0, 2)}, route
assert pools == [("pool", 0, 1), ("pool", 0, 2)], pools
# ... and of the device asked for only
route, _, _ = tr.plan_pools(trace, [dict(seg(A, 2 * M, (0, 1)), device=1)], 0)
assert route == {}, route

# 2. a burst freeing a small segment before a large one: a MemPool
#    deleted there; its segments' requests between their making and it
trace = [e("segment_alloc", A, 2 * M), e("alloc", A, 512), e("segment_alloc", B, 20 * M),
         e("alloc", B), e("alloc", C), e("free_completed", A), e("free_completed", B),
         e("segment_free", A, 2 * M), e("free_completed", C), e("segment_free", B, 20 * M),
         e("segment_alloc", B, 20 * M), e("alloc", B)]
route, rel, pools = tr.plan_pools(trace, [])
assert route == {1: ("released", 7), 3: ("released", 7)}, route
assert rel == {7: [("released", 7)]}, rel
# ... large before small is an empty_cache(): no pool
trace2 = [dict(x) for x in trace]
trace2[7], trace2[9] = e("segment_free", B, 20 * M), e("segment_free", A, 2 * M)
assert tr.plan_pools(trace2, []) == ({}, {}, []), tr.plan_pools(trace2, [])
# ... small alone too, and a burst with unmaps (expandable) is not told apart
assert tr.plan_pools(trace[:8], [])[1] == {}
trace3 = trace[:9] + [e("segment_unmap", B, 20 * M)] + trace[9:]
assert tr.plan_pools(trace3, [])[1] == {}

# the real traces: ccasim's plan finds the same pools
load = lambda w: tr.load_snapshot("%s/traces/%s.pickle.xz" % (srcdir, w))
s = load("patterns-2.11/graphs.default")
route, rel, pools = tr.plan_pools(s["device_traces"][0], s["segments"])
assert len(route) == 38 and rel == {} and pools == [("pool", 1, 0)], (len(route), rel, pools)
assert min(route) > 270, min(route)  # the warm-up before the capture stays default
s = load("patterns-2.11/mempool.default")
route, rel, pools = tr.plan_pools(s["device_traces"][0], s["segments"])
assert rel == {137: [("released", 137)]} and len(route) == 38, (rel, len(route))
s = load("patterns-2.11/compile.default")
route, rel, pools = tr.plan_pools(s["device_traces"][0], s["segments"])
assert pools == [("pool", 0, 1)] and rel == {}, (pools, rel)
for w in ("patterns-2.11/rscap.default", "pytorch-2.11/multistream.default"):
    s = load(w)
    assert tr.plan_pools(s["device_traces"][0], s["segments"]) == ({}, {}, []), w
EOF
py <"$scratch/pools.py" >"$scratch/out" 2>"$scratch/err"
report $? "plan_pools: private segments after their making, MemPools released in a burst"

# ------------------------------------------------ the replay loop, fake torch
# tr_fake ARGS...: torch_replay.py with the stand-in torch, its log in
# $scratch/ft.log
tr_fake() {
	rm -f "$scratch/ft.log"
	PYTHONPATH=$faketorch FAKETORCH_LOG=$scratch/ft.log "$python" "$tr" "$@"
}
field() { # field JSON EXPR: prints EXPR of the document d
	"$python" -c 'import json, sys; d = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}

run 0 tr_fake "$patterns/mempool.default.pickle.xz" --empty-cache-at 5,100 \
	--snapshot "$scratch/mp.pickle" -o "$scratch/mp.json" &&
	[ "$(field "$scratch/mp.json" 'd["empty_cache_calls"], d["empty_cache_at"]')" = "(2, [5, 100])" ] &&
	[ "$(field "$scratch/mp.json" 'sorted(d["private_pools"].items())')" = "[('created', 1), ('pools', ['released at 137']), ('released', 1), ('requests', 38), ('routed', True)]" ] &&
	[ "$(field "$scratch/mp.json" 'd["status"], d["snapshot"] == sys.argv[1].replace("json", "pickle")')" = "('ok', True)" ] &&
	[ "$(grep -c '^alloc ' "$scratch/ft.log")" -eq 54 ] &&
	[ "$(grep -c '^alloc .* 0,1$' "$scratch/ft.log")" -eq 38 ] &&
	# the MemPool is deleted after its last request, before the
	# requests of the eager work after it
	[ "$(grep -n 'mempool_del' "$scratch/ft.log" | cut -d: -f1)" -gt \
		"$(grep -n '^alloc .* 0,1$' "$scratch/ft.log" | tail -n 1 | cut -d: -f1)" ] &&
	[ "$(sed -n '/mempool_del/,$p' "$scratch/ft.log" | grep -c '^alloc ')" -eq 8 ]
report $? "mempool: empty_cache() at the positions, 38 requests in a MemPool deleted at 137"

run 0 "$ccasim" replay --json --addresses-from "$scratch/mp.pickle" \
	"$patterns/mempool.default.pickle.xz"
report $? "ccasim replay --addresses-from takes the replay's own snapshot"

run 0 tr_fake "$patterns/graphs.default.pickle.xz" --empty-cache-at 270 -o "$scratch/g.json" &&
	[ "$(field "$scratch/g.json" 'd["private_pools"]["requests"], d["private_pools"]["released"], d["snapshot"]')" = "(38, 0, None)" ] &&
	[ "$(sed -n '/empty_cache/,$p' "$scratch/ft.log" | grep -c '^alloc .* 0,1$')" -eq 38 ]
report $? "graphs: the capture's 38 requests in one pool, after the empty_cache() at 270"

run 0 tr_fake "$patterns/graphs.default.pickle.xz" --no-pools -o "$scratch/n.json" &&
	[ "$(field "$scratch/n.json" 'd["private_pools"]["requests"], d["empty_cache_calls"]')" = "(0, 0)" ] &&
	! grep -q mempool "$scratch/ft.log"
report $? "--no-pools sends every request to the default pools"

run 0 tr_fake "$patterns/graphs.default.pickle.xz" --cap 50000000 -o "$scratch/o.json" &&
	field "$scratch/o.json" 'd["status"]' | grep -q '^oom at op [0-9]*: CUDA out of memory'
report $? "an OOM under the cap is a result (exit 0, status oom at op N)"

FAKETORCH_CUDA=0 run 2 tr_fake "$patterns/graphs.default.pickle.xz" && one_line &&
	grep -q 'no CUDA device' "$scratch/err"
report $? "no CUDA device: one line, exit 2"
run 1 tr_fake "$scratch/none.pickle" && one_line
report $? "a missing trace: one line, exit 1"

# ------------------------------------------------ the plan's empty_cache_at
run 0 "$ccasim" replay --json --whatif "$patterns/graphs.default.pickle.xz" &&
	[ "$(field "$scratch/out" 'd["plan"]["empty_cache_at"], d["plan"]["empty_cache_positions"]')" = "([270], 1)" ]
report $? "plan.empty_cache_at of graphs.default: [270], the count kept"
run 0 "$ccasim" replay --json --whatif "$patterns/mempool.default.pickle.xz" &&
	[ "$(field "$scratch/out" 'd["plan"]["empty_cache_at"], d["pool_releases"]')" = "([], 1)" ]
report $? "plan.empty_cache_at of mempool.default: none (the burst is a MemPool's)"
run 0 "$ccasim" replay --json "$traces/seedfrag.default.pickle.xz" &&
	[ "$(field "$scratch/out" 'd["plan"]["empty_cache_at"]')" = "None" ]
report $? "plan.empty_cache_at is null while not known"
bert=$traces/bert.gc.pickle.xz
run 0 "$ccasim" replay --json --whatif --addresses-from "$bert" "$bert" &&
	[ "$(field "$scratch/out" 'd["plan"]["empty_cache_at"]')" = "[29204, 45158, 45285, 45509, 45517, 46611, 46669, 46674]" ] &&
	[ "$(field "$scratch/out" 'd["plan"]["empty_cache_positions"], d["empty_cache_calls"]')" = "(8, 8)" ] &&
	py "$bert" <<'EOF'
t = tr.load_snapshot(sys.argv[3])["device_traces"][0]
for p in (29204, 45158, 45285, 45509, 45517, 46611, 46669, 46674):
    assert t[p]["action"] == "segment_free" and t[p - 1]["action"] != "segment_free", p
EOF
report $? "bert.gc what-if: 8 positions, each the first segment_free of a burst"

# ------------------------------------------------ validation-table.py labels
run 0 "$python" "$vt" --collect "$fixtures" -o "$scratch/results.tsv" &&
	grep -q 'validation-table: 19 rows' "$scratch/err" &&
	[ "$(grep -c '	addresses	' "$scratch/results.tsv")" -eq 4 ]
report $? "--collect reads W.S.addresses.json as a row of its own"
run 0 "$python" "$vt" "$scratch/results.tsv" -o "$scratch/table.md"
report $? "validation-table.py makes the table with labels"
label() { grep "^| $1 | $2 " "$scratch/table.md" | awk -F' [|] ' '{ print $(NF) }' | sed 's/ |$//'; }
ok=0
while read -r w s want; do
	got=$(label "$w" "$s")
	[ "$got" = "$want" ] || { echo "# $w $s: '$got', expected '$want'"; ok=1; }
done <<'EOF'
seedfrag default -
resnet152 cap driver placed segments differently
graphs default policy difference
mempool exp not classified: no addresses-from replay
stacks rp4 not classified: only the final layout differs
EOF
report $ok "each row's label: agreeing, driver placement, policy, not classified"
grep -q '^4 of them differ: 1 driver placed segments differently, 1 policy difference, 1 not classified: no addresses-from replay, 1 not classified: only the final layout differs\.$' "$scratch/table.md" &&
	grep -q '^- resnet152 cap: \*\*driver placed segments differently\*\*: num_device_alloc 684 / 684 / 682 (on PyTorch.s addresses: 682); num_device_free 486 / 486 / 481 (on PyTorch.s addresses: 481); layout ' "$scratch/table.md"
report $? "the counts of each label, and what differs, under the table"
grep -v '	addresses	' "$scratch/results.tsv" | grep -v '^mempool' >"$scratch/three.tsv"
run 0 "$python" "$vt" "$scratch/three.tsv" &&
	[ "$(grep -c '^| .* | not classified: no addresses-from replay |$' "$scratch/out")" -eq 3 ]
report $? "results without addresses rows (an older run) are not classified"

# ------------------------------------------------ run-validation.sh end to end
if "$ccasim" gpu info >/dev/null 2>&1; then
	skip "run-validation.sh without a GPU stops with exit 2" "a GPU is here"
else
	run 2 env OUT="$scratch/nogpu" "$srcdir/gpu-scripts/run-validation.sh" "$ccasim" &&
		grep -q 'no usable GPU' "$scratch/out"
	report $? "run-validation.sh without a GPU stops with exit 2"
fi

# `ccasim gpu` faked: the simulation stands in for the GPU run
cat >"$scratch/fakeccasim" <<EOF
#!$python
import json, subprocess, sys
real, argv = "$ccasim", sys.argv[1:]
if argv[:1] != ["gpu"]:
    sys.exit(subprocess.call([real] + argv))
cmd, rest = argv[1], argv[2:]
if cmd == "info":
    print(json.dumps({"total_memory": 150109880320, "name": "Fake GPU"}))
elif cmd == "calibrate":
    json.dump({"device": "Fake GPU", "reps": 1, "rows": []}, open(rest[rest.index("-o") + 1], "w"))
elif cmd == "replay":
    out = rest[rest.index("-o") + 1]
    keep = [a for i, a in enumerate(rest) if a not in ("--touch", "--calls", "--json", "-o")
            and rest[i - 1] != "-o"]
    # (a replay that runs out of memory exits 3)
    p = subprocess.run([real, "replay", "--json"] + keep, stdout=subprocess.PIPE)
    if p.returncode not in (0, 3):
        sys.exit(p.returncode)
    d = json.loads(p.stdout)
    ms = d["memory_stats"]
    json.dump({"passed": True, "failures": [], "predicted": {"memory_stats": ms, "oom": d["oom"]},
               "gpu_run": {"memory_stats": ms},
               "figures": {"measured": {"peak_reserved": ms["reserved_bytes.all.peak"],
                                        "final_reserved": ms["reserved_bytes.all.current"],
                                        "segments_peak": ms["segment.all.peak"],
                                        "cudaMalloc": ms["num_device_alloc"], "map": 0,
                                        "cudaFree": ms["num_device_free"], "unmap": 0}},
               "layout": {"predicted_end": {"canonical": "x"}, "gpu_end": {"canonical": "x"}}},
              open(out, "w"))
EOF
chmod +x "$scratch/fakeccasim"
run 0 env OUT="$scratch/val" PYTHON="$python" PYTHONPATH="$faketorch" \
	TRACES_DIR="$patterns" WORKLOADS="graphs mempool" SETTINGS="default cap gc" \
	CALIBRATE=no SANITIZER=none JOBS=2 "$srcdir/gpu-scripts/run-validation.sh" "$scratch/fakeccasim"
report $? "run-validation.sh with a faked GPU and torch runs through"
(cd "$scratch/val" && tar -xzf logs.tar.gz) &&
	(for w in graphs mempool; do
		for s in default cap gc; do
			for k in gpu.json torch.json torch.pickle addresses.json plan.json; do
				[ -s "$scratch/val/runs/$w.$s.$k" ] || { echo "# no $w.$s.$k"; exit 1; }
			done
		done
	done) &&
	grep -q 'torch graphs *default *exit 0, empty_cache at 270, addresses-from exit 0' "$scratch/val/summary.txt" &&
	[ "$(field "$scratch/val/runs/graphs.gc.torch.json" 'd["conf"], d["cap_bytes"], d["empty_cache_calls"]')" = "('garbage_collection_threshold:0.6,max_split_size_mb:256', 517572096, 1)" ] &&
	[ "$(field "$scratch/val/runs/mempool.cap.torch.json" 'd["cap_bytes"], d["private_pools"]["released"]')" = "(605909145, 1)" ] &&
	[ "$(field "$scratch/val/runs/mempool.gc.addresses.json" 'sorted(d["settings"].split(",")), d["memory_fraction"] > 0')" = "(['garbage_collection_threshold:0.6', 'max_split_size_mb:256'], True)" ]
report $? "run-validation.sh keeps plans, PyTorch's snapshots and the addresses-from replays"
[ "$(grep -c '^| \(graphs\|mempool\) | \(default\|cap\|gc\)' "$scratch/val/table.md")" -eq 6 ] &&
	grep -q '^| graphs | gc .*| [a-z -]* |$' "$scratch/val/table.md" &&
	grep -q '^6 runs; ' "$scratch/val/table.md" &&
	[ "$(grep -c '	addresses	' "$scratch/val/results.tsv")" -eq 6 ]
report $? "run-validation.sh's table has the six rows with labels"

tap_done
