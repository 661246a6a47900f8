#!/bin/sh
# test-fleet-shards.sh - `ccasim fleet merge` of a sharded run with a shard
# missing, and the report's words (TAP).  Shards 0 and 1 of 3 ran, shard 2
# did not: merge exits 1 with one line naming shard 2/3 and its rows file,
# and prints no report; --allow-missing prints it with a warning and a line
# naming the shard (--json: missing_shards).  A re-run under another count
# that has every shard covers the jobs: nothing is missing.  The report
# says PYTORCH_CUDA_ALLOC_CONF as sweep does, counts in the singular where
# there is one ("1 job"), never "0 of the 0", and the CSV names every row.
# Needs $CCASIM and $top_srcdir (set by make check).
set -u

srcdir=${top_srcdir:-.}
. "$srcdir/tests/tap.sh"

inputs="$traces/seedfrag.default.pickle.xz $traces/dyninfer.default.pickle.xz
	$traces/multistream.default.pickle.xz $traces/multistream.cap.pickle.xz
	$traces/gpt2gen.default.pickle.xz $traces/bert.default.pickle.xz"
fleet() {
	# shellcheck disable=SC2086 # $inputs are words
	"$ccasim" fleet run $inputs --no-progress --set max_split_size_mb=128,512 "$@"
}
for i in 0 1; do
	fleet --shard "$i/3" --out "$scratch/part" 2>"$scratch/err" ||
		echo "# shard $i/3 failed: $(cat "$scratch/err")"
done

run 1 "$ccasim" fleet merge "$scratch/part" && one_line && [ ! -s "$scratch/out" ] &&
	grep -qxF "ccasim fleet merge: error: missing shard 2/3: no rows.2-of-3.jsonl in the folders given; run them, or merge anyway with --allow-missing" "$scratch/err"
report $? "merge of shards 0 and 1 of 3: exit 1, one line naming shard 2/3 and its file, no report"
run 0 "$ccasim" fleet merge --allow-missing "$scratch/part" && one_line &&
	grep -q "^ccasim fleet merge: warning: missing shard 2/3: " "$scratch/err" &&
	tr '\n' ' ' <"$scratch/out" | grep -q "Missing: shard 2/3 left no rows file; its jobs are not in this report."
report $? "--allow-missing: the report, a warning, and a line in the report naming shard 2/3"
run 0 "$ccasim" fleet merge --json --allow-missing "$scratch/part" &&
	"$python" -c 'import json, sys
assert json.load(open(sys.argv[1]))["missing_shards"] == ["2/3"]' "$scratch/out"
report $? "--json: missing_shards [\"2/3\"]"

fleet --shard 2/3 --out "$scratch/rest" 2>/dev/null
run 0 "$ccasim" fleet merge "$scratch/part" "$scratch/rest" && [ ! -s "$scratch/err" ] &&
	! grep -q "Missing" "$scratch/out"
report $? "with shard 2/3 from another folder nothing is missing"
fleet --out "$scratch/part" 2>/dev/null # 0/1: every job, under another count
run 0 "$ccasim" fleet merge "$scratch/part" && [ ! -s "$scratch/err" ]
report $? "a re-run with one shard covers every job: 2/3 no longer counts as missing"
fleet --shard 1/2 --out "$scratch/half" 2>/dev/null
run 1 "$ccasim" fleet merge "$scratch/half" && grep -q "missing shard 0/2: no rows.0-of-2.jsonl" "$scratch/err"
report $? "shard 1 of 2 alone: shard 0/2 is missing"

# --- the words of the report
run 0 "$ccasim" fleet merge "$scratch/part" --wide
grep -q "PYTORCH_ALLOC_CONF" "$scratch/out"
[ $? -ne 0 ] && ! grep -Eq '(^|[^0-9])1 (jobs|snapshots|settings|lines)|0 of the 0|no snapshot could not' "$scratch/out"
report $? "the report says no PYTORCH_ALLOC_CONF, no '1 jobs', no '0 of the 0'"
# one job, fitting: "1 job", and no count of jobs out of memory out of none
"$ccasim" fleet run "$traces/seedfrag.default.pickle.xz" --no-progress --out "$scratch/one" \
	-c max_split_size_mb:128 2>/dev/null
run 0 "$ccasim" fleet merge "$scratch/one" --wide &&
	grep -qx "Fleet: 1 job replayed under 2 settings on its own device." "$scratch/out" &&
	grep -qx "Under the settings they ran with, no job runs out of memory on its own device." "$scratch/out" &&
	! grep -Eq "0 of the 0|1 jobs|saves 0 of" "$scratch/out"
report $? "one job that fits: '1 job', 'no job runs out of memory', no 'saves 0 of the 0'"
# dyninfer on a 1000 MiB cap runs out of memory; expandable segments save it
abs=$(cd "$traces" && pwd)
printf '%s cap=1000M\n%s\n' "$abs/dyninfer.default.pickle.xz" "$abs/seedfrag.default.pickle.xz" \
	>"$scratch/two.manifest"
"$ccasim" fleet run "$scratch/two.manifest" -c expandable_segments:True --no-progress \
	--out "$scratch/two" 2>/dev/null
run 0 "$ccasim" fleet merge "$scratch/two" --wide &&
	grep -q "^Answer: set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True on every job: it saves 1 of the 1 that ran out of memory and makes none that fit run out. Over the 1 job that fits both ways" "$scratch/out" &&
	grep -qx "Under the settings they ran with, 1 of the 2 jobs runs out of memory on its own device." "$scratch/out"
report $? "the answer names PYTORCH_CUDA_ALLOC_CONF, as sweep does, in the singular for one job"
run 0 "$ccasim" fleet merge --csv "$scratch/part" && "$python" -c 'import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert rows and all(r["name"] for r in rows), rows
assert [r["name"] for r in rows if r["setting"] == ""] == ["(PyTorch defaults)"], rows
assert all(r["name"] == r["setting"] for r in rows if r["setting"]), rows' "$scratch/out"
report $? "--csv: every row has a name, the defaults' is (PyTorch defaults)"

tap_done
