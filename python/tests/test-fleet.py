"""test-fleet - ccasim.fleet gives the rows and reports of `ccasim fleet run` and `fleet merge`.

A small fleet (a folder of snapshots, a manifest with a cap, a fraction and a
GPU, a corrupt file) under a grid: fleet.run() returns the CLI's rows byte for
byte, fleet.write() makes a folder the CLI merges into the same report, and
fleet.merge() prints what `ccasim fleet merge` prints in each format.  Bad
options, jobs and rows raise ConfigError naming the argument.
"""
import glob
import os
import pickle
import shutil
import subprocess
import sys
import tempfile

import taputil
from taputil import ok

import ccasim
import ccasim.fleet as fleet

cli = taputil.ccasim_cli()
t = os.path.join(taputil.srcdir(), "traces")
tmp = tempfile.mkdtemp(prefix="test-fleet-py.")


def run_cli(args):
    p = subprocess.run([cli, "fleet"] + args, capture_output=True, text=True, env=taputil.cli_env())
    return p.returncode, p.stdout, p.stderr


def folder_rows(d):
    return sorted(l.rstrip("\n") for f in glob.glob(os.path.join(d, "*.jsonl")) for l in open(f))


os.makedirs(os.path.join(tmp, "in"))
for f in glob.glob(os.path.join(t, "patterns-2.11", "rscap.*.pickle.xz"))[:3]:
    shutil.copy(f, os.path.join(tmp, "in"))
with open(os.path.join(tmp, "in", "corrupt.pickle"), "w") as f:
    f.write("not a pickle at all")
manifest = os.path.join(tmp, "jobs.manifest")
with open(manifest, "w") as f:
    f.write("%s/pytorch-2.11/multistream.cap.pickle.xz cap=36914380\n" % t)
    f.write("%s/pytorch-2.11/seedfrag.default.pickle.xz gpu=T4\n" % t)
    f.write("%s/pytorch-2.11/dyninfer.default.pickle.xz fraction=0.01\n" % t)
inputs = [os.path.join(tmp, "in"), manifest]

ok(sys.modules.get("ccasim.fleet") is ccasim.fleet,
   "import ccasim.fleet is the attribute ccasim.fleet")

jobs = fleet.jobs(inputs)
ok(len(jobs) == 7 and all(type(j) is tuple and len(j) == 4 for j in jobs) and
   pickle.loads(pickle.dumps(jobs)) == jobs,
   "jobs(): 7 plain picklable tuples (path, gpu, cap, fraction)", jobs)
by_name = {os.path.basename(j[0]): j for j in jobs}
ok(by_name["multistream.cap.pickle.xz"][1:] == (None, 36914380, 0.0) and
   by_name["seedfrag.default.pickle.xz"][1:] == ("T4", 0, 0.0) and
   by_name["dyninfer.default.pickle.xz"][1:] == (None, 0, 0.01),
   "jobs(): the manifest's cap=, gpu= and fraction=", by_name)

# (label, keywords, the same as CLI options)
GRIDS = [
    ("sets", {"sets": ["max_split_size_mb=default,128", "expandable_segments=True,False"]},
     ["--set", "max_split_size_mb=default,128", "--set", "expandable_segments=True,False"]),
    ("configs, gpu A100-40GB, pytorch 2.11",
     {"configs": ["expandable_segments:True"], "gpu": "A100-40GB", "pytorch_version": "2.11"},
     ["--config", "expandable_segments:True", "--gpu", "A100-40GB", "--pytorch-version", "2.11"]),
    ("configs plus the default grid, fraction 0.5",
     {"configs": ["garbage_collection_threshold:0.6"], "default_grid": True, "memory_fraction": 0.5},
     ["--config", "garbage_collection_threshold:0.6", "--default-grid", "--memory-fraction", "0.5"]),
]
for i, (label, kw, args) in enumerate(GRIDS):
    out = os.path.join(tmp, "cli%d" % i)
    rc, _, err = run_cli(["run"] + inputs + args + ["--out", out, "--no-progress", "-j", "2"])
    theirs = folder_rows(out) if rc == 0 else None
    mine = fleet.run(jobs, **kw)
    ok(rc == 0 and sorted(mine) == theirs,
       "%s: run(jobs()) rows equal fleet run's, byte for byte (%d rows)" % (label, len(mine)),
       err if rc else "%d vs %d rows" % (len(mine), len(theirs)))
    if i == 0:
        ok(sorted(fleet.run(inputs, **kw)) == theirs, "%s: run(paths) expands them as fleet run does" % label)
        ok(sum('"error"' in r for r in mine) == 1 and all("\n" not in r for r in mine),
           "%s: one error row (the corrupt file), no newline in any row" % label)
    # write() into a folder of its own: the CLI's fleet.json, the CLI's report
    own = os.path.join(tmp, "py%d" % i)
    half = len(mine) // 2
    fleet.write(own, mine[:half], **kw)
    fleet.write(own, mine[half:], name="second", **kw)
    ok(open(os.path.join(own, "fleet.json")).read() == open(os.path.join(out, "fleet.json")).read() and
       sorted(os.listdir(own)) == ["fleet.json", "rows.py-%d.jsonl" % os.getpid(), "rows.second.jsonl"],
       "%s: write() makes fleet.json as fleet run does, rows.py-PID.jsonl and rows.NAME.jsonl" % label,
       sorted(os.listdir(own)))
    for fmt, flag, wide in (("text", [], False), ("text", ["--wide"], True),
                            ("json", ["--json"], False), ("csv", ["--csv"], False)):
        rc1, cli_own, e1 = run_cli(["merge"] + flag + [own])
        rc2, cli_out, e2 = run_cli(["merge"] + flag + [out])
        mine_report = fleet.merge([own], format=fmt, wide=wide)
        ok(rc1 == rc2 == 0 and mine_report == cli_own == cli_out and
           fleet.merge(out, format=fmt, wide=wide) == cli_out,
           "%s: merge(format=%r) equals ccasim fleet merge %s, of write()'s folder and fleet run's"
           % (label, fmt, " ".join(flag)), e1 + e2)

# one folder, two runs: write() appends to what fleet run wrote; merge keeps each row once
both = os.path.join(tmp, "cli0")
fleet.write(both, fleet.run(jobs[:2], **GRIDS[0][1]), **GRIDS[0][1])
ok(fleet.merge(both) == run_cli(["merge", os.path.join(tmp, "py0")])[1],
   "rows written twice into one folder count once")


def config_error(call):
    try:
        call()
    except ccasim.ConfigError as e:
        return e.key, str(e)
    except Exception as e:  # noqa: BLE001 - the test reports what it got
        return type(e).__name__, str(e)
    return None, "no error"


BAD = [
    ("an unknown gpu", lambda: fleet.run(jobs, gpu="NoSuchCard"), "gpu"),
    ("gpu with device_memory", lambda: fleet.run(jobs, gpu="T4", device_memory="8GiB"), "gpu"),
    ("a bad set", lambda: fleet.run(jobs, sets=["no_such_key=1,2"]), "sets"),
    ("a bad config", lambda: fleet.run(jobs, configs=["max_split_size_mb:1"]), "max_split_size_mb"),
    ("memory_fraction 2", lambda: fleet.run(jobs, memory_fraction=2), "memory_fraction"),
    ("a job with an unknown gpu", lambda: fleet.run([(jobs[0][0], "NoSuchCard", 0, 0.0)]), "jobs"),
    ("a job with cap and fraction", lambda: fleet.run([(jobs[0][0], None, 1 << 30, 0.5)]), "jobs"),
    ("a job of 3 items", lambda: fleet.run([(jobs[0][0], None, 0)]), "jobs"),
    ("a row that is no fleet row", lambda: fleet.write(os.path.join(tmp, "bad"), ['{"a": 1}']), "rows"),
    ("a row with a newline", lambda: fleet.write(os.path.join(tmp, "bad"), [mine[0] + "\n" + mine[1]]), "rows"),
    ("a bad rows name", lambda: fleet.write(os.path.join(tmp, "bad"), mine[:1], name="../x"), "name"),
    ("merge format xml", lambda: fleet.merge(os.path.join(tmp, "py0"), format="xml"), "format"),
]
for label, call, key in BAD:
    got, msg = config_error(call)
    ok(got == key and "\n" not in msg, "%s: ConfigError(key=%r)" % (label, key), "%r: %s" % (got, msg))
ok(not os.path.exists(os.path.join(tmp, "bad", "rows.py-%d.jsonl" % os.getpid())),
   "bad rows: nothing written")

got, msg = config_error(lambda: fleet.write(os.path.join(tmp, "py0"), mine[:1], sets=["max_split_size_mb=64"]))
ok(got == "Error" and "other options" in msg, "write() into a folder of other options: ccasim.Error", msg)
got, msg = config_error(lambda: fleet.jobs([os.path.join(tmp, "missing")]))
ok(got == "FileNotFoundError" and "missing" in msg, "jobs() of a missing input: FileNotFoundError naming it", msg)
got, msg = config_error(lambda: fleet.merge([os.path.join(tmp, "in")]))
ok(got == "FileNotFoundError" and "not a fleet run folder" in msg,
   "merge() of a folder that is no run: FileNotFoundError (no fleet.json)", msg)

shutil.rmtree(tmp)
taputil.done()
