#!/bin/sh
# test-fleet.sh - `ccasim fleet run` and `fleet merge` end to end (TAP): one
# row per (snapshot, setting) with the snapshot's identity, error rows for
# bad snapshots, shards from the engines' environments (Slurm arrays,
# Kubernetes Indexed Jobs, Open MPI, PMI) covering every snapshot once, a
# merged report byte-identical whatever the sharding, a run killed midway
# and resumed giving the same report, real `mpirun -np 4` (Debian's
# openmpi-bin; SKIP without it) and a Dask LocalCluster through the Python
# module (the build tree's, from configure --enable-python; SKIP without it
# or python3-distributed).  Needs $CCASIM and $top_srcdir ($top_builddir for
# the module).
set -u

srcdir=${top_srcdir:-.}
. "$srcdir/tests/tap.sh"
t=$srcdir/traces

# The fleet: a folder of snapshots (searched recursively) plus a manifest
# with caps (from the traces' W.C.json) and a GPU, a corrupt and a hostile
# snapshot.  A small grid keeps it quick: 4 settings + each job's own.
mkdir -p "$scratch/in/sub"
cp "$t"/patterns-2.11/rscap.*.pickle.xz "$scratch/in/"
cp "$t"/patterns-2.11/compile.default.pickle.xz "$t"/calls-2.11/oom2/rank00.oom.pickle.xz "$scratch/in/sub/"
printf 'not a pickle at all' >"$scratch/in/sub/corrupt.pickle"
printf '\337\377\377\377\377\377\012' >"$scratch/in/sub/hostile.msgpack" # a map claiming 2^32-1 pairs
cat >"$scratch/jobs.manifest" <<EOF
# path [gpu=NAME] [cap=BYTES]
$t/pytorch-2.11/multistream.cap.pickle.xz cap=36914380
$t/pytorch-2.11/seedfrag.cap.pickle.xz cap=695475968
$t/pytorch-2.11/dyninfer.cap.pickle.xz cap=927911987
$t/pytorch-2.11/seedfrag.default.pickle.xz gpu=T4
EOF
grid="--set max_split_size_mb=default,128 --set expandable_segments=True,False"
n_snaps=14
fleet() { "$ccasim" fleet run "$scratch/in" "$scratch/jobs.manifest" $grid --no-progress "$@"; }
merge() { "$ccasim" fleet merge "$@"; }

# --- usage and input errors -------------------------------------------------
run 2 "$ccasim" fleet run "$scratch/in" && one_line && grep -q -- '--out' "$scratch/err"
report $? "fleet run without --out exits 2 with one line"
for bad in 4/4 1 a/2 -1/3 0/0; do
	run 2 "$ccasim" fleet run "$scratch/in" --out "$scratch/x" --shard "$bad" && one_line || break
done
report $? "--shard refuses 4/4, 1, a/2, -1/3 and 0/0 with one line"
run 2 env JOB_COMPLETION_INDEX=1 "$ccasim" fleet run "$scratch/in" --out "$scratch/x" &&
	one_line && grep -q -- '--shards N' "$scratch/err"
report $? "JOB_COMPLETION_INDEX without --shards exits 2 asking for the count"
run 2 env SLURM_ARRAY_TASK_ID=7 SLURM_ARRAY_TASK_COUNT=3 SLURM_ARRAY_TASK_MIN=0 \
	"$ccasim" fleet run "$scratch/in" --out "$scratch/x" && one_line
report $? "a Slurm task id outside its array exits 2"
printf '%s gpu=NoSuchCard\n' "$t/pytorch-2.11/seedfrag.default.pickle.xz" >"$scratch/bad.manifest"
run 1 "$ccasim" fleet run "$scratch/bad.manifest" --out "$scratch/x" && one_line &&
	grep -q "bad.manifest:1: unknown GPU 'NoSuchCard'" "$scratch/err"
report $? "a manifest line with an unknown GPU exits 1 naming file and line"
run 1 "$ccasim" fleet merge "$scratch/in" && one_line && grep -q 'not a fleet run folder' "$scratch/err"
report $? "fleet merge of a folder that is no run exits 1"

# --- one process alone --------------------------------------------------------
run 0 fleet --out "$scratch/one" -j 2
report $? "fleet run of the fleet in one process exits 0 despite two bad snapshots"
"$python" - "$scratch/one" "$n_snaps" "$scratch/in/sub/compile.default.pickle.xz" >"$scratch/check" 2>&1 <<'EOF'
import glob, hashlib, json, os, sys
rows = [json.loads(l) for f in glob.glob(sys.argv[1] + "/*.jsonl") for l in open(f)]
paths = {r["path"] for r in rows}
assert len(paths) == int(sys.argv[2]), len(paths)
errors = [r for r in rows if "error" in r]
assert sorted(os.path.basename(r["path"]) for r in errors) == ["corrupt.pickle", "hostile.msgpack"], errors
ok = [r for r in rows if "error" not in r]
# every job: its own settings plus the 4 of the grid, minus the one equal to its own
for p in paths - {r["path"] for r in errors}:
    mine = [r for r in ok if r["path"] == p]
    assert len(mine) == mine[0]["rows"] and len(mine) in (4, 5), (p, len(mine))
    assert sum(r["recorded"] for r in mine) == 1
c = [r for r in ok if r["path"] == sys.argv[3]][0]
data = open(sys.argv[3], "rb").read()
assert c["size"] == len(data) and c["sha256"] == hashlib.sha256(data).hexdigest(), c
for k in ("peak_reserved", "peak_allocated", "fragmentation", "cuda_malloc", "num_ooms", "time_us", "fits", "own_device"):
    assert k in c, k
print("ok")
EOF
grep -qx ok "$scratch/check"
report $? "one row per (snapshot, setting) with path, size, SHA-256 and sweep's figures; an error row per bad snapshot"
cat "$scratch/check" | sed 's/^/# /' | grep -v '^# ok$'
grep -h '"error"' "$scratch"/one/*.jsonl | grep -q 'hostile.msgpack' &&
	grep -h '"error"' "$scratch"/one/*.jsonl | grep -q 'corrupt.pickle: '
report $? "the error rows name the file"
run 0 merge "$scratch/one" && cp "$scratch/out" "$scratch/report.one" &&
	grep -q '^Answer: ' "$scratch/report.one"
report $? "fleet merge prints a report with an answer"

# real numbers: the capped multistream run dies of OOM on its own 35.2 MiB,
# as it did on the GPU; its own row, the seedfrag on a T4 fits
"$python" - "$scratch/one" "$t" >"$scratch/check" 2>&1 <<'EOF'
import glob, json, sys
rows = [json.loads(l) for f in glob.glob(sys.argv[1] + "/*.jsonl") for l in open(f)]
def own(name):
    return [r for r in rows if r["path"].endswith(name) and r.get("recorded")][0]
m = own("multistream.cap.pickle.xz")
assert m["fits"] is False and m["own_device"]["cap"] == 36914380 and m["own_device"]["limit"] == 36914380, m
s = own("seedfrag.default.pickle.xz")
assert s["fits"] is True and s["own_device"]["gpu"] == "T4" and s["own_device"]["source"] == "manifest", s
r = own("rank00.oom.pickle.xz")
assert r["own_device"]["source"] == "recorded by ccasim-record" and r["fits"] is False, r
print("ok")
EOF
grep -qx ok "$scratch/check"
report $? "own devices: a manifest cap (multistream.cap OOMs at 35.2 MiB), a manifest GPU, ccasim-record's records (rank00 OOMs)"
sed 's/^/# /' "$scratch/check" | grep -v '^# ok$'

run 0 fleet --out "$scratch/one" -j 2 && grep -q ' 0 rows written' "$scratch/err"
report $? "a re-run of a complete folder writes no row"
run 1 "$ccasim" fleet run "$scratch/in" --set max_split_size_mb=256 --out "$scratch/one" && one_line &&
	grep -q 'holds a run with other options' "$scratch/err"
report $? "a re-run with another grid into the same folder exits 1"

# --- shards from each engine's environment ------------------------------------
same_report() { # DIR...: the merged report equals the one-process one
	merge "$@" >"$scratch/report.x" 2>"$scratch/err" && cmp -s "$scratch/report.one" "$scratch/report.x"
}
ok=0
for i in 1 2 3; do
	env SLURM_ARRAY_TASK_ID=$i SLURM_ARRAY_TASK_COUNT=3 SLURM_ARRAY_TASK_MIN=1 \
		"$ccasim" fleet run "$scratch/in" "$scratch/jobs.manifest" $grid --no-progress \
		--out "$scratch/slurm" -j 1 2>>"$scratch/slurm.err" || ok=1
done
[ $ok -eq 0 ] && [ "$(grep -c 'SLURM_ARRAY_TASK_ID' "$scratch/slurm.err")" -eq 3 ] && same_report "$scratch/slurm"
report $? "three Slurm array tasks (1-3) give the one-process report"
"$python" - "$scratch/slurm" "$n_snaps" >"$scratch/check" 2>&1 <<'EOF'
import glob, json, sys
seen = {}
for f in sorted(glob.glob(sys.argv[1] + "/rows.*.jsonl")):
    for l in open(f):
        p = json.loads(l)["path"]
        assert seen.setdefault(p, f) == f, (p, f, seen[p])
assert len(seen) == int(sys.argv[2]), len(seen)
assert len(set(seen.values())) > 1, "one shard did everything"
print("ok")
EOF
grep -qx ok "$scratch/check"
report $? "each snapshot lands on exactly one shard"
for i in 0 1; do
	env JOB_COMPLETION_INDEX=$i "$ccasim" fleet run "$scratch/in" "$scratch/jobs.manifest" $grid --no-progress --out "$scratch/k8s" --shards 2 -j 1 2>/dev/null || ok=1
done
[ $ok -eq 0 ] && same_report "$scratch/k8s"
report $? "a Kubernetes Indexed Job of 2 gives the one-process report"
for i in 0 1 2 3; do
	mkdir -p "$scratch/ompi$i"
	env OMPI_COMM_WORLD_RANK=$i OMPI_COMM_WORLD_SIZE=4 "$ccasim" fleet run "$scratch/in" "$scratch/jobs.manifest" $grid --no-progress --out "$scratch/ompi$i" -j 1 2>/dev/null || ok=1
done
[ $ok -eq 0 ] && same_report "$scratch/ompi0" "$scratch/ompi1" "$scratch/ompi2" "$scratch/ompi3"
report $? "four Open MPI ranks into four folders, merged, give the one-process report"
for i in 0 1; do
	env PMI_RANK=$i PMI_SIZE=2 "$ccasim" fleet run "$scratch/in" "$scratch/jobs.manifest" $grid --no-progress --out "$scratch/pmi" -j 1 2>/dev/null || ok=1
done
[ $ok -eq 0 ] && same_report "$scratch/pmi" "$scratch/pmi"
report $? "two PMI ranks give the one-process report (a folder given twice counts once)"
merge --csv "$scratch/pmi" >"$scratch/a.csv" && merge --csv "$scratch/one" >"$scratch/b.csv" &&
	cmp -s "$scratch/a.csv" "$scratch/b.csv" && head -1 "$scratch/a.csv" | grep -q '^rank,setting,jobs' &&
	merge --json "$scratch/pmi" >"$scratch/a.json" && merge --json "$scratch/one" >"$scratch/b.json" &&
	cmp -s "$scratch/a.json" "$scratch/b.json" && "$python" -c 'import json,sys; json.load(open(sys.argv[1]))' "$scratch/a.json"
report $? "--csv and --json are the same whatever the sharding"
run 1 merge "$scratch/one" "$scratch/x" && one_line
report $? "merging a folder that is no run with one that is exits 1"

# --- killed midway, resumed -----------------------------------------------------
# the shard's rows file grows job by job; the run is killed once some rows
# are in, its last line torn as a dying write leaves it, and run again.
# Killed at a set point, not by a race (the whole run takes about 0.1 s):
# one more input is a large snapshot file (a sparse GiB of zeros, which the
# run hashes for seconds before its loader refuses it), in $scratch/in/sub
# between compile.default and hostile: jobs come before and after it
# wherever the checkout and $TMPDIR are.  Jobs run sorted by path with -j 1,
# so once the rows file holds the rows of every job that sorts before it
# (counted in the one-process run), the run is hashing it, and is killed.
# (A FIFO served before: fleet run now refuses one at once.)
slow=$scratch/in/sub/d-slow.pickle
truncate -s 1G "$slow"
upto=$("$python" - "$scratch/one" "$slow" <<'EOF'
import glob, json, sys
print(sum(json.loads(l)["path"].encode() < sys.argv[2].encode()
          for f in glob.glob(sys.argv[1] + "/*.jsonl") for l in open(f)))
EOF
)
"$ccasim" fleet run "$scratch/in" "$scratch/jobs.manifest" --no-progress --out "$scratch/kill" -j 1 \
	$grid 2>/dev/null &
pid=$!
timeout 60 sh -c 'until [ -e "$1" ] && [ "$(wc -l <"$1")" -ge "$2" ]; do sleep 0.01; done &&
	kill -9 "$3"' sh "$scratch/kill/rows.0-of-1.jsonl" "$upto" "$pid"
killed=$?
wait $pid 2>/dev/null
rm -f "$slow"
before=$(wc -l <"$scratch/kill/rows.0-of-1.jsonl")
printf '{"path":"torn' >>"$scratch/kill/rows.0-of-1.jsonl"
[ $killed -eq 0 ] && [ "$before" -eq "$upto" ] && [ "$before" -gt 0 ] &&
	[ "$before" -lt "$(cat "$scratch"/one/*.jsonl | wc -l)" ]
report $? "the run killed at its job of a large snapshot left part of the rows ($before lines)"
run 0 fleet --out "$scratch/kill" -j 2 && same_report "$scratch/kill" &&
	[ "$(wc -l <"$scratch/kill/rows.0-of-1.jsonl")" -eq "$(cat "$scratch"/one/*.jsonl | wc -l)" ] &&
	! grep -q torn "$scratch/kill/rows.0-of-1.jsonl"
report $? "resumed after the kill: the torn line cut, each row once, the one-process report"

# --- real engines -----------------------------------------------------------------
if command -v mpirun >/dev/null 2>&1; then
	root=
	[ "$(id -u)" -eq 0 ] && root=--allow-run-as-root
	run 0 mpirun $root --oversubscribe -np 4 "$ccasim" fleet run "$scratch/in" "$scratch/jobs.manifest" \
		$grid --no-progress --out "$scratch/mpi" -j 1 &&
		[ "$(grep -c 'OMPI_COMM_WORLD_RANK' "$scratch/err")" -eq 4 ] &&
		[ "$(ls "$scratch"/mpi/rows.*-of-4.jsonl | wc -l)" -eq 4 ] && same_report "$scratch/mpi"
	report $? "mpirun -np 4 (Open MPI): four shards give the one-process report"
else
	skip "mpirun -np 4 gives the one-process report" "no mpirun (apt-get install openmpi-bin)"
fi
PYTHONPATH="${top_builddir:-.}/python${PYTHONPATH:+:$PYTHONPATH}"
export PYTHONPATH
if "$python" -c 'import ccasim.fleet, distributed' 2>/dev/null; then
	# a file, not stdin, with the __main__ guard: Dask starts its workers with
	# multiprocessing's spawn, which re-imports the main module in each
	cat >"$scratch/fleet_dask.py" <<'EOF'
import sys
import ccasim.fleet
from distributed import Client, LocalCluster

def main():
    out, *inputs = sys.argv[1:]
    grid = {"sets": ["max_split_size_mb=default,128", "expandable_segments=True,False"]}
    jobs = ccasim.fleet.jobs(inputs)  # folders and manifests, as fleet run reads them
    with LocalCluster(n_workers=4, threads_per_worker=1, processes=True) as cluster, Client(cluster) as client:
        futures = client.map(lambda job: ccasim.fleet.run([job], **grid), jobs)
        parts = client.gather(futures)
        workers = set(client.run(lambda: __import__("os").getpid()).values())
        ran_on = {w for ws in client.who_has(futures).values() for w in ws}
    assert len(workers) == 4 and len(ran_on) > 1, (workers, ran_on)
    ccasim.fleet.write(out, [row for part in parts for row in part], **grid)

if __name__ == "__main__":
    main()
EOF
	# bounded: a worker that cannot start makes Dask's nanny retry forever
	timeout 300 "$python" "$scratch/fleet_dask.py" "$scratch/dask" "$scratch/in" "$scratch/jobs.manifest" >"$scratch/err" 2>&1
	[ $? -eq 0 ] && same_report "$scratch/dask"
	report $? "a Dask LocalCluster of 4 worker processes through the Python module gives the one-process report"
else
	skip "a Dask LocalCluster through the Python module gives the one-process report" \
		"import ccasim.fleet or distributed fails (configure --enable-python; apt-get install python3-distributed)"
fi

tap_done
