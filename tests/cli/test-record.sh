#!/bin/sh
# test-record.sh - ccasim-record, the recorder of what a snapshot leaves out
# (doc/recording.md), without torch or a GPU (TAP).  record/ccasim_record.py runs
# against tests/data/fake-torch-record (a stand-in for torch with an
# in-memory allocator, a trace and _snapshot()): each recorded call's
# record and counts, the percent-encoding, the reset_accumulated offset,
# the records in external_annotations, atomic writes, the file names, the
# OOM observer, stop(); then the ccasim-record command end to end (the
# injected sitecustomize, its chaining, the launcher skip, bad options) and
# `ccasim info` on what it wrote.  Needs $CCASIM, $top_srcdir and
# $top_builddir (set by make check).
set -u

srcdir=${top_srcdir:-.}
# the stand-in torch and the recorder are imported from the source tree: no
# bytecode written there
export PYTHONDONTWRITEBYTECODE=1
. "$srcdir/tests/tap.sh"

. "$srcdir/tests/record-env.sh"

if [ "$python" = false ]; then
	skip "ccasim-record" "no python3"
	tap_done
fi

# What every Python check starts with: the stand-in and the recorder on the
# path, check(DESC, COND, WHY) printing one "ok - DESC" or "not ok - DESC"
# line, and helpers over the records.
cat >"$scratch/prelude.py" <<EOF
import glob, gzip, inspect, io, json, lzma, os, pickle, re, subprocess, sys, time
sys.path[:0] = ["$fake", "$tools"]
SCRATCH = "$scratch"
import torch
import ccasim_record as cr

def check(desc, cond, why=""):
    print(("ok - %s" if cond else "not ok - %s") % desc + ("" if cond or not why else " # %s" % (why,)))

def parse(name):
    """A record's name -> (kind, [(key, value)])."""
    head, *fields = name.split(" ")
    assert head.startswith("ccasim:"), name
    return head[7:], [tuple(f.split("=", 1)) for f in fields]

def recs(kind=None, dev=None):
    out = []
    for r in list(cr._ACTIVE.records):
        k, f = parse(r["name"])
        if (kind is None or k == kind) and (dev is None or r["device"] == dev):
            out.append((k, dict(f), r))
    return out

def counts(d):
    return int(d["allocs"]), int(d["frees"]), int(d["ooms"])

def load(path):
    op = {".xz": lzma.open, ".gz": gzip.open}.get(os.path.splitext(path)[1], open)
    with op(path, "rb") as f:
        return pickle.load(f)

def out_dir(name):
    d = os.path.join(SCRATCH, name)
    os.makedirs(d, exist_ok=True)
    return d
EOF

# pyrows [ENV=V...] <<EOF: runs the Python code after the prelude; each
# "ok - D"/"not ok - D" line it prints becomes one test; a crash is one
# failed test with its stderr.
pyrows() {
	{
		cat "$scratch/prelude.py"
		cat
	} >"$scratch/rows.py"
	env "$@" "$python" "$scratch/rows.py" >"$scratch/rows" 2>"$scratch/err"
	st=$?
	while IFS= read -r line; do
		case $line in
		"ok - "*) report 0 "${line#ok - }" ;;
		"not ok - "*)
			echo "# ${line#not ok - }"
			report 1 "${line#not ok - }"
			;;
		esac
	done <"$scratch/rows"
	if [ "$st" -ne 0 ]; then
		report 1 "python checks ran to their end (status $st)"
	fi
}

# ------------------------------------------------------------ the format
pyrows <<'EOF'
rows = [  # (value, encoded)
    ("plain-text_1.5:a,b/c+d", "plain-text_1.5:a,b/c+d"),
    ("a b", "a%20b"),
    ("k=v", "k%3Dv"),
    ("100%", "100%25"),
    ("expandable_segments:True,max_split_size_mb:128", "expandable_segments:True,max_split_size_mb:128"),
    ("roundup_power2_divisions:[256:1,>:8]", "roundup_power2_divisions:%5B256:1,%3E:8%5D"),
    ("é", "%C3%A9"),
    ("tab\there", "tab%09here"),
    ("", ""),
    (123, "123"),
    (-4, "-4"),
    (0.1, "0.1"),
]
for value, want in rows:
    got = cr.enc(value)
    check("enc(%r) is %r" % (value, want), got == want, got)
name = cr.record_name("set_allocator_settings", [("allocs", 3), ("frees", 2), ("ooms", 0),
                                                 ("settings", "a b=c%")])
check("record_name: 'ccasim:' KIND, then ' key=enc(value)' per field",
      name == "ccasim:set_allocator_settings allocs=3 frees=2 ooms=0 settings=a%20b%3Dc%25", name)
EOF

# ------------------------------------------------------------ one record per call kind
pyrows <<'EOF'
d = out_dir("kinds")
cr.start(out_dir=d, sample_interval=0, quiet=True)
n0 = len(cr._ACTIVE.records)
start = recs("start")
check("start: one record per device with v, torch, conf, max_entries, stacks",
      len(start) == 1 and list(start[0][1]) == ["allocs", "frees", "ooms", "v", "torch", "conf",
                                               "max_entries", "stacks"]
      and start[0][1]["v"] == "1" and start[0][1]["torch"] == "2.11.0+fake"
      and start[0][1]["conf"] == "" and start[0][1]["max_entries"] == "1000000"
      and start[0][1]["stacks"] == "python", start)
h = torch.cuda.memory.STATE.history
check("start: _record_memory_history with the stacks and max_entries",
      h == {"context": "all", "stacks": "python", "max_entries": 1000000}, h)
a = torch.cuda._fake_alloc(3 << 20)
b = torch.cuda._fake_alloc(1000)
torch.cuda._fake_free(b)

def one(call, kind, fields, after=None):
    """call() makes exactly one new record of `kind` with `fields`, with the
    counts of device 0 just before (or, `after`, just after) the call."""
    st = torch.cuda.memory_stats(0)
    before = (st["allocation.all.allocated"], st["allocation.all.freed"], st["num_ooms"])
    n = len(cr._ACTIVE.records)
    call()
    new = [(k, f) for k, f, r in recs()[n:] if k != "device_memory"]
    ok = len(new) == 1 and new[0][0] == kind
    if ok:
        f = dict(new[0][1])
        ok = counts(f) == before and all(f.get(k) == v for k, v in fields.items())
    return ok, new

table = [  # (description, call, kind, fields)
    ("torch.cuda.empty_cache()", lambda: torch.cuda.empty_cache(), "empty_cache", {}),
    ("torch.cuda.memory.empty_cache()", lambda: torch.cuda.memory.empty_cache(), "empty_cache", {}),
    ("_set_allocator_settings('max_split_size_mb:64')",
     lambda: torch.cuda.memory._set_allocator_settings("max_split_size_mb:64"),
     "set_allocator_settings", {"settings": "max_split_size_mb:64"}),
    ("set_per_process_memory_fraction(0.25)",
     lambda: torch.cuda.set_per_process_memory_fraction(0.25), "memory_fraction",
     {"fraction": "0.25"}),
    ("memory.set_per_process_memory_fraction(1/3, 0)",
     lambda: torch.cuda.memory.set_per_process_memory_fraction(1 / 3, 0), "memory_fraction",
     {"fraction": repr(1 / 3)}),
    ("reset_peak_memory_stats()", lambda: torch.cuda.reset_peak_memory_stats(), "reset_peak", {}),
    ("reset_max_memory_allocated() (it calls reset_peak_memory_stats: one record)",
     lambda: torch.cuda.reset_max_memory_allocated(), "reset_peak", {}),
    ("reset_max_memory_cached('cuda:0')",
     lambda: torch.cuda.memory.reset_max_memory_cached("cuda:0"), "reset_peak", {}),
    ("reset_accumulated_memory_stats()",
     lambda: torch.cuda.reset_accumulated_memory_stats(), "reset_accumulated", {}),
]
for desc, call, kind, fields in table:
    ok, new = one(call, kind, fields)
    check("%s gives one %s record with the counts before it" % (desc, kind), ok, new)

pool = torch.cuda.MemPool()
pid = "%d,%d" % pool.id
check("MemPool() gives mempool_create pool=a,b", [f["pool"] for k, f, r in recs("mempool_create")] == [pid])
with torch.cuda.use_mem_pool(pool):
    c = torch.cuda._fake_alloc(5000)
    check("use_mem_pool entry gives use_mem_pool_enter pool=a,b (before the allocations in it)",
          [(f["pool"], counts(f)[0]) for k, f, r in recs("use_mem_pool_enter")] == [(pid, 2)])
check("use_mem_pool exit gives use_mem_pool_exit pool=a,b (after the allocations in it)",
      [(f["pool"], counts(f)[0]) for k, f, r in recs("use_mem_pool_exit")] == [(pid, 3)])
torch.cuda._fake_free(c)
del pool
check("a MemPool that dies gives mempool_release pool=a,b",
      [f["pool"] for k, f, r in recs("mempool_release")] == [pid], recs("mempool_release"))
n = len(recs("empty_cache"))
g = torch.cuda.CUDAGraph()
with torch.cuda.graph(g):
    pass
check("torch.cuda.graph's own empty_cache() is recorded", len(recs("empty_cache")) == n + 1)
gp = "%d,%d" % g.pool()
check("capture_begin without a pool: pool=self.pool() after begin",
      [f["pool"] for k, f, r in recs("capture_begin")] == [gp])
check("capture_end: pool=self.pool()", [f["pool"] for k, f, r in recs("capture_end")] == [gp])
g2 = torch.cuda.CUDAGraph()
g2.capture_begin(pool=g.pool())
g2.capture_end()
check("capture_begin(pool=P) records P", [f["pool"] for k, f, r in recs("capture_begin")][-1] == gp)

calls = torch.cuda.memory.CALLS
def first_call(name, after_us):
    return min(t for c, t in calls if c == name and t >= after_us)
order_ok = []
for kind, call, when in [("set_allocator_settings", "_set_allocator_settings", "before"),
                         ("reset_accumulated", "reset_accumulated_memory_stats", "before"),
                         ("use_mem_pool_enter", "use_mem_pool.enter", "before"),
                         ("capture_begin", "capture_begin", "before"),
                         ("use_mem_pool_exit", "use_mem_pool.exit", "after"),
                         ("capture_end", "capture_end", "after"),
                         ("mempool_release", "MemPool.release", "after")]:
    t = recs(kind)[0][2]["time_us"]
    ts = [c_t for c, c_t in calls if c == call]
    ok = any(t <= x for x in ts) if when == "before" else any(t >= x for x in ts)
    order_ok.append((kind, when, ok))
check("records are taken before the real call (after it for capture_end, use_mem_pool exit, "
      "the MemPool release)", all(ok for k, w, ok in order_ok), order_ok)

try:
    torch.cuda.set_per_process_memory_fraction(1)
    raised = False
except TypeError:
    raised = True
check("a call that raises: its exception goes through and its record is withdrawn",
      raised and all(f["fraction"] != "1" for k, f, r in recs("memory_fraction")))

cr.dump("manual")
snap = load(glob.glob(os.path.join(d, "*-manual.pickle"))[0])
ann = [a for a in snap["external_annotations"] if a["name"].startswith("ccasim:")]
kinds = set(parse(a["name"])[0] for a in ann)
want = {"start", "empty_cache", "set_allocator_settings", "memory_fraction", "reset_peak",
        "reset_accumulated", "mempool_create", "mempool_release", "use_mem_pool_enter",
        "use_mem_pool_exit", "capture_begin", "capture_end", "device_memory", "dump"}
check("the dump holds every record kind", kinds == want, want ^ kinds)
whens = [dict(parse(a["name"])[1])["when"] for a in ann if parse(a["name"])[0] == "device_memory"]
check("device_memory when=start, when=peak and when=dump, once each",
      sorted(whens) == ["dump", "peak", "start"], whens)
dm = [dict(parse(a["name"])[1]) for a in ann if parse(a["name"])[0] == "device_memory"]
peak = [x for x in dm if x["when"] == "peak"][0]
check("device_memory: total, free and reserved from mem_get_info and memory_reserved; the peak "
      "has the highest reserved", int(peak["total"]) == 80 << 30
      and int(peak["reserved"]) == max(int(x["reserved"]) for x in dm)
      and int(peak["total"]) - int(peak["free"]) - int(peak["reserved"]) == 500 << 20, dm)
last = parse(ann[-1]["name"])
tr = snap["device_traces"][0]
n_by = lambda act: sum(1 for e in tr if e["action"] == act)
check("the last record is dump reason=manual, its counts those of the trace (offset included)",
      last[0] == "dump" and dict(last[1])["reason"] == "manual"
      and counts(dict(last[1])) == (n_by("alloc"), n_by("free_requested"), n_by("oom")),
      (last, n_by("alloc"), n_by("free_requested")))
check("each annotation is {stage: START, name, device, time_us: int}",
      all(set(a) == {"stage", "name", "device", "time_us"} and a["stage"] == "START"
          and isinstance(a["time_us"], int) and a["device"] == 0 for a in ann))
check("no record left out of the dump",
      len(ann) == len(cr._ACTIVE.records) + 2 + 1)  # + dump, device_memory dump, peak
EOF

# ------------------------------------------------------------ reset_accumulated offset
pyrows <<'EOF'
cr.start(out_dir=out_dir("offset"), sample_interval=0, quiet=True)
for i in range(3):
    torch.cuda._fake_free(torch.cuda._fake_alloc(100))
torch.cuda.reset_accumulated_memory_stats()
torch.cuda._fake_free(torch.cuda._fake_alloc(100))
torch.cuda.reset_accumulated_memory_stats(0)
torch.cuda._fake_free(torch.cuda._fake_alloc(100))
torch.cuda.empty_cache()
r = [counts(f) for k, f, x in recs() if k in ("reset_accumulated", "empty_cache")]
check("reset_accumulated: the record carries the counts before the reset",
      r[0] == (3, 3, 0) and r[1] == (4, 4, 0), r)
check("later counts add what the resets zeroed: cumulative since the process started",
      r[2] == (5, 5, 0) and torch.cuda.memory_stats(0)["allocation.all.allocated"] == 1, r)
EOF

# ------------------------------------------------------------ devices
pyrows FAKE_TORCH_DEVICES=2 FAKE_TORCH_ANNOTATIONS=1 <<'EOF'
d = out_dir("devices")
cr.start(out_dir=d, sample_interval=0, quiet=True)
check("start: one record per device", [r["device"] for k, f, r in recs("start")] == [0, 1])
torch.cuda._fake_alloc(100, device=1)
torch.cuda.empty_cache()
check("empty_cache: one record per initialised device",
      [r["device"] for k, f, r in recs("empty_cache")] == [0, 1])
torch.cuda.reset_peak_memory_stats(1)
torch.cuda.set_per_process_memory_fraction(0.5, device="cuda:1")
check("reset_peak_memory_stats(1), set_per_process_memory_fraction(f, 'cuda:1'): on device 1",
      [r["device"] for k, f, r in recs() if k in ("reset_peak", "memory_fraction")] == [1, 1])
torch.cuda.set_device(1)
torch.cuda.reset_peak_memory_stats()
check("reset_peak_memory_stats(): the current device", recs("reset_peak")[-1][2]["device"] == 1)
torch.cuda._fake_alloc(100, device=0)
paths = cr.dump()
check("one file per device with allocator state, named d00 and d01",
      len(paths) == 2 and paths[0].endswith("-r00000-p%07d-d00-000-manual.pickle" % os.getpid())
      and paths[1].endswith("-r00000-p%07d-d01-000-manual.pickle" % os.getpid()),
      paths)
s1 = load(paths[1])
check("a device's file: its own segments, traces and annotations",
      all(s["device"] == 1 for s in s1["segments"]) and s1["device_traces"][0] == []
      and len(s1["device_traces"][1]) > 0
      and all(a["device"] == 1 for a in s1["external_annotations"]))
s0 = load(paths[0])
theirs = [a for a in s0["external_annotations"] if not a["name"].startswith("ccasim:")]
check("external_annotations already in the snapshot are kept, the records after them",
      theirs == [{"stage": "START", "name": "fwd", "device": 0, "time_us": 5},
                 {"stage": "END", "name": "fwd", "device": 0, "time_us": 9}]
      and s0["external_annotations"][:2] == theirs)
EOF

# ------------------------------------------------------------ writing
pyrows <<'EOF'
torch.cuda._fake_alloc(100)
d = out_dir("write")
cr.start(out_dir=d, sample_interval=0, quiet=True)
torch.cuda._fake_alloc(100)
p = cr.dump()
check("dump: the file is there, no temporary file left",
      len(p) == 1 and os.listdir(d) == [os.path.basename(p[0])], os.listdir(d))
s = load(p[0])
check("the file is an ordinary snapshot: pickle, segments, device_traces, allocator_settings",
      {"segments", "device_traces", "allocator_settings", "external_annotations"} <= set(s))
with open(p[0], "rb") as f:
    head = f.read(2)
check("pickle protocol 4 (as torch's _dump_snapshot on Python 3.8-3.13)", head == b"\x80\x04", head)
blocker = os.path.join(SCRATCH, "a-file")
open(blocker, "w").close()
cr._ACTIVE.opts["out_dir"] = os.path.join(blocker, "sub")
import contextlib
err = io.StringIO()
with contextlib.redirect_stderr(err):
    q = cr.dump()
lines = err.getvalue().splitlines()
check("a dump that cannot be written: one line naming the file, nothing written",
      q == [] and len(lines) == 1 and os.path.join(blocker, "sub", "ccasim-") in lines[0]
      and "-001-manual.pickle" in lines[0], lines)
cr._ACTIVE.opts["out_dir"] = d
real = os.fsync
def broken(fd):
    raise OSError(5, "Input/output error")
os.fsync = broken
err = io.StringIO()
with contextlib.redirect_stderr(err):
    q = cr.dump()
os.fsync = real
check("a write that fails half-way leaves neither the file nor its temporary file",
      q == [] and os.listdir(d) == [os.path.basename(p[0])] and len(err.getvalue().splitlines()) == 1,
      (os.listdir(d), err.getvalue()))
for comp, mod in (("xz", lzma), ("gz", gzip)):
    cr._ACTIVE.opts["compress"] = comp
    q = cr.dump()
    ok = len(q) == 1 and q[0].endswith(".pickle." + comp)
    if ok:
        with mod.open(q[0], "rb") as f:
            ok = "device_traces" in pickle.load(f)
    check("--compress %s: NAME.pickle.%s, a compressed pickle" % (comp, comp), ok, q)
with open(os.path.join(SCRATCH, "written"), "w") as f:
    f.write("\n".join(sorted(glob.glob(os.path.join(d, "*")))) + "\n")
try:
    cr.dump("other")
    bad = False
except ValueError:
    bad = True
check("dump(reason) refuses a reason other than oom, exit, manual, signal", bad)
EOF
if [ -s "$scratch/written" ]; then
	ok=0
	while IFS= read -r f; do
		"$ccasim" info "$f" >"$scratch/out" 2>"$scratch/err" || ok=1
		grep -q "annotations: " "$scratch/out" || ok=1
	done <"$scratch/written"
	report $ok "ccasim info reads the dumps written (plain, xz, gz) and counts their annotations"
else
	report 1 "ccasim info reads the dumps written"
fi

# ------------------------------------------------------------ names
pyrows <<'EOF'
rows = [  # (environment, options, expected job, expected rank)
    ({}, {"job": "myjob"}, "myjob", 0),
    ({"SLURM_JOB_ID": "4242", "SLURM_PROCID": "7"}, {}, "4242", 7),
    ({"SLURM_JOB_ID": "4242", "RANK": "3", "SLURM_PROCID": "7"}, {}, "4242", 3),
    ({"TORCHELASTIC_RUN_ID": "run-1", "RANK": "12", "LOCAL_RANK": "4"}, {}, "run-1", 12),
    ({"TORCHELASTIC_RUN_ID": "none", "RANK": "1"}, {}, "20261201T101500Z", 1),
    ({"SLURM_JOB_ID": "1", "TORCHELASTIC_RUN_ID": "x"}, {"job": "a b"}, "a_b", 0),
    ({"RANK": "007"}, {}, "20261201T101500Z", 7),
]
started = 1796120100.0  # 2026-12-01 10:15:00 UTC
for env, opts, job, rank in rows:
    got = (cr.job_name(opts, env=env, started=started), cr.rank_of(env=env))
    check("job and rank of %s %s: %s, %d" % (env, opts, job, rank), got == (job, rank), got)
for env in ({"RANK": "junk"}, {"RANK": "-5"}, {"RANK": "1e3"}, {"RANK": "../../etc"},
            {"RANK": "1000000"}, {"SLURM_PROCID": "x"}, {"RANK": "1", "LOCAL_RANK": "a"}):
    try:
        got = cr.rank_of(env=env)
    except cr.EnvError as e:
        got = str(e)
    k = [k for k in env if not env[k].isdigit()] or list(env)
    check("rank of %s: refused, naming %s and its value" % (env, k[0]),
          got == "%s=%r is not a rank (a decimal integer from 0 to 999999)" % (k[0], env[k[0]]),
          got)
n = cr.dump_file_name("ccasim-", "4242", 3, 812, 1, 7, "oom", "xz")
check("file name: {prefix}{job}-r{rank:05d}-p{pid:07d}-d{dev:02d}-{seq:03d}-{reason}.pickle.xz",
      n == "ccasim-4242-r00003-p0000812-d01-007-oom.pickle.xz", n)
names = [cr.dump_file_name("p-", job, r, pid, dev, seq, why, "none")
         for job, r, pid, dev, seq, why in [
             ("4243", 0, 9, 0, 0, "exit"), ("4242", 10, 9, 0, 0, "exit"),
             ("4242", 2, 100, 0, 0, "exit"), ("4242", 2, 9, 1, 0, "oom"),
             ("4242", 2, 9, 0, 1, "exit"), ("4242", 2, 9, 0, 0, "oom")]]
want = [names[i] for i in (5, 4, 3, 2, 1, 0)]
check("names sort by job, rank, process, device, then dump sequence", sorted(names) == want,
      sorted(names))
EOF

# ------------------------------------------------------------ OOM
pyrows <<'EOF'
import contextlib
d = out_dir("oom")
cr.start(out_dir=d, sample_interval=0, oom_dumps=2, quiet=True)
torch.cuda._fake_alloc(100)
for i in range(3):
    try:
        torch.cuda._fake_oom(1 << 40)
    except torch.cuda.OutOfMemoryError:
        pass
files = sorted(os.listdir(d))
check("the OOM observer dumps: reason oom, at most --oom-dumps times",
      [f[-18:] for f in files] == ["d00-000-oom.pickle", "d00-001-oom.pickle"], files)
s = load(os.path.join(d, files[0]))
tr = s["device_traces"][0]
last = dict(parse(s["external_annotations"][-1]["name"])[1])
check("the OOM dump's trace already holds the oom entry, and its dump record ooms=1",
      tr[-1]["action"] == "oom" and last["reason"] == "oom" and last["ooms"] == "1", (tr[-1], last))
cr._ACTIVE.oom_left = 1
cr._ACTIVE.torch.cuda.memory._snapshot = None  # the dump will fail
err = io.StringIO()
with contextlib.redirect_stderr(err):
    try:
        torch.cuda._fake_oom(1 << 40)
        what = "no exception"
    except torch.cuda.OutOfMemoryError:
        what = "oom"
    except Exception as e:
        what = repr(e)
check("a failing OOM dump does not raise into the allocator: one line on stderr",
      what == "oom" and len(err.getvalue().splitlines()) == 1
      and "OOM dump failed" in err.getvalue(), (what, err.getvalue()))
EOF

# ------------------------------------------------------------ stop
pyrows <<'EOF'
before = {
    "cuda.empty_cache": torch.cuda.empty_cache, "memory.empty_cache": torch.cuda.memory.empty_cache,
    "memory._set_allocator_settings": torch.cuda.memory._set_allocator_settings,
    "cuda.set_per_process_memory_fraction": torch.cuda.set_per_process_memory_fraction,
    "cuda.reset_accumulated_memory_stats": torch.cuda.reset_accumulated_memory_stats,
    "cuda.use_mem_pool": torch.cuda.use_mem_pool,
    "MemPool.__init__": torch.cuda.MemPool.__dict__["__init__"],
    "CUDAGraph.capture_begin": torch.cuda.CUDAGraph.__dict__["capture_begin"],
}
sigs = {k: inspect.signature(v) for k, v in before.items()}
r1 = cr.start(out_dir=out_dir("stop"), sample_interval=0.01, quiet=True)
patched = torch.cuda.empty_cache
check("while recording the functions are wrapped, same name and signature",
      patched is not before["cuda.empty_cache"] and patched is torch.cuda.memory.empty_cache
      and patched.__name__ == "empty_cache"
      and inspect.signature(torch.cuda.set_per_process_memory_fraction)
      == sigs["cuda.set_per_process_memory_fraction"])
r2 = cr.start(out_dir=out_dir("stop"))
check("start() again while recording: the same recorder, nothing wrapped twice",
      r2 is r1 and torch.cuda.empty_cache is patched
      and torch.cuda.empty_cache.__wrapped__ is before["cuda.empty_cache"])
time.sleep(0.05)
cr.stop()
after = {
    "cuda.empty_cache": torch.cuda.empty_cache, "memory.empty_cache": torch.cuda.memory.empty_cache,
    "memory._set_allocator_settings": torch.cuda.memory._set_allocator_settings,
    "cuda.set_per_process_memory_fraction": torch.cuda.set_per_process_memory_fraction,
    "cuda.reset_accumulated_memory_stats": torch.cuda.reset_accumulated_memory_stats,
    "cuda.use_mem_pool": torch.cuda.use_mem_pool,
    "MemPool.__init__": torch.cuda.MemPool.__dict__["__init__"],
    "CUDAGraph.capture_begin": torch.cuda.CUDAGraph.__dict__["capture_begin"],
}
check("stop() puts every original back", all(after[k] is before[k] for k in before),
      [k for k in before if after[k] is not before[k]])
check("stop(): the history off, the sampler thread gone, not recording",
      torch.cuda.memory.STATE.history is None and not r1.thread.is_alive() and not cr.is_recording())
try:
    cr.dump()
    raised = False
except RuntimeError:
    raised = True
cr.stop()
check("dump() without a recording raises RuntimeError; stop() twice is harmless", raised)
EOF

# ------------------------------------------------------------ launchers
pyrows <<'EOF'
td = "/venv/lib/python3.11/site-packages/torch"
rows = [  # (argv, orig_argv, env, launcher?)
    (["/venv/bin/torchrun", "--nproc-per-node", "2", "t.py"], [], {}, True),
    (["-m"], ["python3", "-m", "torch.distributed.run", "t.py"], {}, True),
    ([td + "/distributed/run.py", "t.py"], ["python3", "-m", "torch.distributed.run"], {}, True),
    (["-m"], ["python3", "-m", "torch.distributed.launch", "t.py"], {}, True),
    (["t.py"], ["python3", "t.py"], {"LOCAL_RANK": "0"}, False),
    (["-m"], ["python3", "-m", "torch.distributed.run", "t.py"], {"LOCAL_RANK": "1"}, False),
    (["t.py"], ["python3", "t.py"], {}, False),
    (["-m"], ["python3", "-m", "torch._inductor.compile_worker"], {"LOCAL_RANK": "0"}, True),
    ([td + "/_inductor/compile_worker/__main__.py"], [], {}, True),
]
for argv, orig, env, want in rows:
    got = cr.is_launcher(argv=argv, orig_argv=orig, env=env, torch_dir=td)
    check("is_launcher(%s, LOCAL_RANK %s) is %s" % (" ".join(orig or argv),
          env.get("LOCAL_RANK", "unset"), want), got == want, got)
EOF

# ------------------------------------------------------------ the command
mkdir -p "$scratch/prog"
cat >"$scratch/prog/prog.py" <<'EOF'
import os, sys
assert "torch" not in sys.modules, "torch imported before the program's import"
assert not os.path.exists(os.environ["FAKE_TORCH_IMPORTED"]), "torch imported at start-up"
import torch
import ccasim_record
print("recording=%s" % ccasim_record.is_recording())
a = torch.cuda._fake_alloc(1 << 20)
torch.cuda.empty_cache()
if os.environ.get("PROG_SIGNAL"):
    import signal
    os.kill(os.getpid(), signal.SIGUSR1)
sys.exit(int(os.environ.get("PROG_STATUS", "0")))
EOF
out=$scratch/e2e
run 0 env PYTHONPATH="$fake" FAKE_TORCH_IMPORTED="$scratch/imported" \
	"$wrapper" --out "$out" --quiet -- /usr/bin/python3 "$scratch/prog/prog.py" &&
	grep -qx "recording=True" "$scratch/out" && [ ! -s "$scratch/err" ] &&
	ls "$out" | grep -qE '^ccasim-[0-9]{8}T[0-9]{6}Z-r00000-p[0-9]{7}-d00-000-exit\.pickle$'
report $? "ccasim-record --out D -- python3 prog.py: torch not imported at start-up, recording after its import, the exit dump in D"
f=$(ls "$out"/*-exit.pickle 2>/dev/null | head -n 1)
run 0 "$ccasim" info "${f:-missing}" && grep -q "annotations: " "$scratch/out"
report $? "ccasim info reads the exit dump of the command"
if [ -n "$f" ]; then
	"$python" -c 'import pickle, sys
s = pickle.load(open(sys.argv[1], "rb"))
n = [a["name"].split(" ")[0] for a in s["external_annotations"]]
sys.exit(0 if n[0] == "ccasim:start" and "ccasim:empty_cache" in n and n[-1] == "ccasim:dump"
         and s["external_annotations"][-1]["name"].endswith(" reason=exit") else 1)' "$f"
	report $? "the exit dump holds start, the program's empty_cache and, last, dump reason=exit"
else
	report 1 "the exit dump holds start, empty_cache and dump reason=exit"
fi
rm -f "$scratch/imported"

run 3 env PYTHONPATH="$fake" FAKE_TORCH_IMPORTED="$scratch/imported" PROG_STATUS=3 \
	"$wrapper" --out "$scratch/st" --quiet --no-dump-at-exit -- /usr/bin/python3 "$scratch/prog/prog.py" &&
	[ -z "$(ls -A "$scratch/st")" ]
report $? "the command's exit status is ccasim-record's; --no-dump-at-exit writes nothing"
rm -f "$scratch/imported"

run 0 env PYTHONPATH="$fake" FAKE_TORCH_IMPORTED="$scratch/imported" PROG_SIGNAL=1 RANK=5 \
	SLURM_JOB_ID=77 "$wrapper" --out "$scratch/sig" --quiet --dump-on-signal USR1 --compress gz \
	-- /usr/bin/python3 "$scratch/prog/prog.py" &&
	ls "$scratch/sig" | sed 's/-p[0-9]\{7\}-/-pPID-/' | tr '\n' ' ' >"$scratch/names" &&
	[ "$(cat "$scratch/names")" = "ccasim-77-r00005-pPID-d00-000-signal.pickle.gz ccasim-77-r00005-pPID-d00-001-exit.pickle.gz " ]
report $? "--dump-on-signal USR1: a signal dump, then the exit dump, named by SLURM_JOB_ID and RANK"
rm -f "$scratch/imported"

# sitecustomize chaining: a sitecustomize further on the path still runs
mkdir -p "$scratch/other-site"
printf 'import os\nopen(os.environ["CHAIN_MARK"], "w").write(__name__)\n' >"$scratch/other-site/sitecustomize.py"
run 0 env PYTHONPATH="$scratch/other-site:$fake" CHAIN_MARK="$scratch/chained" \
	"$wrapper" --out "$scratch/chain" --quiet -- /usr/bin/python3 -c \
	'import sys, torch, ccasim_record; print(ccasim_record.is_recording(), sys.modules["sitecustomize"].__file__)' &&
	[ "$(cat "$scratch/chained" 2>/dev/null)" = sitecustomize ] &&
	grep -q "^True $scratch/other-site/sitecustomize.py" "$scratch/out"
report $? "the injected sitecustomize runs the one it hides (as sitecustomize) and still records"
run 0 env PYTHONPATH="$fake" "$wrapper" --out "$scratch/deb" --quiet -- /usr/bin/python3 -c \
	'import sys, torch, ccasim_record; sys.exit(0 if ccasim_record.is_recording() else 1)'
report $? "with Debian's own sitecustomize (or none) after it, /usr/bin/python3 records"

# the launcher skip, end to end
run 0 env PYTHONPATH="$fake" "$wrapper" --out "$scratch/launch" --quiet -- \
	/usr/bin/python3 -m torch.distributed.run /usr/bin/python3 -c \
	'import torch, ccasim_record; print("worker recording=%s" % ccasim_record.is_recording())' &&
	grep -qx "launcher recording=False" "$scratch/out" &&
	grep -qx "worker recording=True" "$scratch/out" &&
	[ "$(ls "$scratch/launch" | wc -l)" -eq 0 ]
report $? "python -m torch.distributed.run: the launcher does not record, its worker (LOCAL_RANK) does"

# not recording when CUDA is unavailable; a bad CCASIM_RECORD is one line
run 0 env PYTHONPATH="$fake" FAKE_TORCH_CUDA=0 "$wrapper" --out "$scratch/nocuda" -- \
	/usr/bin/python3 -c 'import torch, ccasim_record; assert not ccasim_record.is_recording()' &&
	[ ! -s "$scratch/err" ]
report $? "no CUDA: the program runs, unrecorded, silently"
run 0 env PYTHONPATH="$tools/record-site:$fake" CCASIM_RECORD='{not json' /usr/bin/python3 -c \
	'import torch; print("ran")' && grep -qx ran "$scratch/out" && one_line &&
	grep -q "CCASIM_RECORD is not valid" "$scratch/err"
report $? "a bad CCASIM_RECORD: one line, the program runs unrecorded"

# ------------------------------------------------------------ bad options
while IFS='|' read -r bad_args bad_name; do
	rm -f "$scratch/ran"
	# shellcheck disable=SC2086 # the row's words
	run 2 "$wrapper" $bad_args -- /usr/bin/touch "$scratch/ran" && one_line &&
		grep -q -- "^ccasim-record: $bad_name" "$scratch/err" && [ ! -e "$scratch/ran" ]
	report $? "ccasim-record $bad_args: status 2, one line naming $bad_name, the command not run"
done <<EOF
--stacks cpp|--stacks
--max-entries 0|--max-entries
--max-entries many|--max-entries
--sample-interval -1|--sample-interval
--compress bz2|--compress
--dump-on-signal NOPE|--dump-on-signal
--dump-on-signal KILL|--dump-on-signal
--oom-dumps -1|--oom-dumps
--prefix a/b|--prefix
--frobnicate|--frobnicate
--no-dump-at-exit=yes|--no-dump-at-exit
--out $scratch/a-file/sub|--out
EOF
run 2 "$wrapper" --out "$scratch/x" && one_line && grep -q "no command" "$scratch/err"
report $? "ccasim-record without a command: status 2, one line"
run 2 "$wrapper" --max-entries && one_line && grep -q -- "--max-entries: missing" "$scratch/err"
report $? "an option missing its value: status 2, one line"
run 0 "$wrapper" --help && grep -q -- "--dump-on-signal SIGNAL" "$scratch/out" &&
	grep -q -- "--sample-interval SECONDS" "$scratch/out"
report $? "--help lists the options"
run 127 "$wrapper" --out "$scratch/nf" -- "$scratch/no-such-command" && one_line
report $? "a command that does not exist: status 127, one line"

tap_done
