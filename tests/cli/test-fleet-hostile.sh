#!/bin/sh
# test-fleet-hostile.sh - `ccasim fleet run` and `fleet merge` on hostile
# folders and files (TAP): a merge with no rows or only failed jobs reports
# instead of crashing; inputs that are no regular file (/dev/zero, a FIFO)
# are refused at once; folder links are not followed; every side file
# (manifest, rows, fleet.json, calibration) has a size limit; a bad row is
# skipped with a warning; rows out of range (peaks near 2^63) are refused;
# paths, errors and settings of rows reach the terminal escaped.  Every
# command that could hang runs under `timeout`.  Needs $CCASIM and
# $top_srcdir.
set -u

srcdir=${top_srcdir:-.}
. "$srcdir/tests/tap.sh"
t=$srcdir/traces

grid="--set expandable_segments=True,False"
fleet() { timeout 60 "$ccasim" fleet run $grid --no-progress "$@"; }
merge() { timeout 60 "$ccasim" fleet merge "$@"; }
# njobs DIR: the distinct snapshot paths of DIR's rows
njobs() { cat "$1"/rows.*.jsonl | "$python" -c 'import json,sys; print(len({json.loads(l)["path"] for l in sys.stdin}))'; }

mkdir -p "$scratch/in/sub"
cp "$t/pytorch-2.11/seedfrag.cap.pickle.xz" "$scratch/in/"
cp "$t/patterns-2.11/compile.default.pickle.xz" "$scratch/in/sub/"
run 0 fleet "$scratch/in" --out "$scratch/good" && [ "$(njobs "$scratch/good")" -eq 2 ] &&
	run 0 merge "$scratch/good" && cp "$scratch/out" "$scratch/good.txt" &&
	run 0 merge --json "$scratch/good" && cp "$scratch/out" "$scratch/good.json"
report $? "a plain fleet of two snapshots runs and merges (the reference)"

# --- a merge with nothing to compare ---------------------------------------------
mkdir "$scratch/bare" && cp "$scratch/good/fleet.json" "$scratch/bare/"
run 1 merge "$scratch/bare" && one_line && grep -q 'bare: no fleet rows yet' "$scratch/err"
report $? "merge of a folder holding only fleet.json exits 1 with one line, no crash"
: >"$scratch/bare/rows.0-of-1.jsonl"
run 1 merge "$scratch/bare" --json && one_line && [ ! -s "$scratch/out" ]
report $? "merge of a folder whose rows file is empty: the same, and no output"
printf 'not a pickle' >"$scratch/bad.pickle"
printf 'bad.pickle\nmissing.pickle\n' >"$scratch/failing.manifest"
run 0 fleet "$scratch/failing.manifest" --out "$scratch/failed" &&
	run 0 merge "$scratch/failed" && grep -q 'no job was replayed' "$scratch/out" &&
	grep -q 'bad.pickle: offset 0' "$scratch/out" && grep -q 'missing.pickle: No such file' "$scratch/out"
report $? "merge where every input failed prints a report listing each error"
run 0 merge --json "$scratch/failed" &&
	"$python" -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["snapshots_failed"]==2 and d["jobs_replayed"]==0 and len(d["errors"])==2' "$scratch/out" &&
	run 0 merge --csv "$scratch/failed" && [ "$(wc -l <"$scratch/out")" -eq 1 ]
report $? "the same in --json (two errors) and --csv (the header alone)"

# --- inputs that are no regular file --------------------------------------------------
mkfifo "$scratch/stuck.pickle"
run 0 fleet /dev/zero "$scratch/stuck.pickle" --out "$scratch/dev" &&
	grep -q '"error":"/dev/zero: not a regular file (a character device)"' "$scratch/dev/rows.0-of-1.jsonl" &&
	grep -q 'stuck.pickle: not a regular file (a FIFO)"' "$scratch/dev/rows.0-of-1.jsonl"
report $? "/dev/zero and a FIFO as inputs: refused at once, an error row each naming it"
mkfifo "$scratch/jobs.manifest"
run 1 fleet "$scratch/jobs.manifest" --out "$scratch/x" && one_line &&
	grep -q 'jobs.manifest: not a regular file (a FIFO)' "$scratch/err"
report $? "a manifest that is a FIFO: exits 1 at once naming it"
mkdir "$scratch/fifo-run" && cp "$scratch/good/fleet.json" "$scratch/fifo-run/" &&
	mkfifo "$scratch/fifo-run/rows.0-of-1.jsonl"
run 1 merge "$scratch/fifo-run" && one_line && grep -q 'rows.0-of-1.jsonl: not a regular file' "$scratch/err" &&
	run 1 fleet "$scratch/in" --out "$scratch/fifo-run" && one_line
report $? "a rows file that is a FIFO: merge and run exit 1 at once naming it"

# --- folder links -------------------------------------------------------------------
mkdir -p "$scratch/loop/sub"
cp "$t/pytorch-2.11/seedfrag.cap.pickle.xz" "$scratch/loop/"
ln -s . "$scratch/loop/self"
run 0 fleet "$scratch/loop" --out "$scratch/loop1" && [ "$(njobs "$scratch/loop1")" -eq 1 ]
report $? "a folder with a 'self -> .' link: one job, not one per path through the link"
ln -s .. "$scratch/loop/sub/up"
ln -s "$scratch/loop" "$scratch/loop/sub/abs"
run 0 fleet "$scratch/loop" --out "$scratch/loop2" && [ "$(njobs "$scratch/loop2")" -eq 1 ]
report $? "three links back up the tree: finishes at once, one job"
ln -s "$scratch/in/seedfrag.cap.pickle.xz" "$scratch/loop/sub/linked.pickle.xz"
run 0 fleet "$scratch/loop" "$scratch/loop/sub" --out "$scratch/loop3" && [ "$(njobs "$scratch/loop3")" -eq 2 ]
report $? "a link to a snapshot file is followed; a folder given inside another is searched once"

# --- size limits --------------------------------------------------------------------
# sparse files: the limits are checked before a byte is read
mkdir "$scratch/big-rows" && cp "$scratch/good/fleet.json" "$scratch/big-rows/" &&
	truncate -s 5G "$scratch/big-rows/rows.0-of-1.jsonl"
run 1 merge "$scratch/big-rows" && one_line &&
	grep -q 'rows.0-of-1.jsonl: the file is larger than 4.00 GiB (the limit of a fleet rows file)' "$scratch/err"
report $? "a rows file over 4 GiB: merge exits 1 with the limit"
run 1 fleet "$scratch/in" --out "$scratch/big-rows" && one_line && grep -q 'larger than 4.00 GiB' "$scratch/err"
report $? "the same file stops a run into that folder"
truncate -s 65M "$scratch/big.manifest"
run 1 fleet "$scratch/big.manifest" --out "$scratch/x" && one_line &&
	grep -q 'big.manifest: the file is larger than 64.00 MiB (the limit of a fleet manifest)' "$scratch/err"
report $? "a manifest over 64 MiB: exits 1 with the limit"
truncate -s 17M "$scratch/big-cal.json"
run 1 fleet "$scratch/in" --calibration "$scratch/big-cal.json" --out "$scratch/x" && one_line &&
	grep -q 'big-cal.json: the file is larger than 16.00 MiB (the limit of a calibration file)' "$scratch/err"
report $? "a calibration file over 16 MiB: exits 1 with the limit"
mkdir "$scratch/big-opts" && truncate -s 2M "$scratch/big-opts/fleet.json"
run 1 merge "$scratch/big-opts" && one_line && grep -q 'fleet.json: the file is larger than 1024.00 KiB (the limit of fleet.json)' "$scratch/err"
report $? "a fleet.json over 1 MiB: merge exits 1 with the limit"
truncate -s 3M "$scratch/in/sub/huge.pickle"
run 0 fleet "$scratch/in" --out "$scratch/big-in" --max-input-size 2MiB &&
	grep -q '^{"path":"[^"]*huge.pickle","size":null,"sha256":null,.*huge.pickle: the file is larger than 2.00 MiB (raise it with --max-input-size)"}$' \
		"$scratch/big-in/rows.0-of-1.jsonl"
report $? "a snapshot over --max-input-size is not hashed (no size or sha256): an error row with the limit"
rm -f "$scratch/in/sub/huge.pickle"

# --- bad and hostile rows ---------------------------------------------------------------
cp -r "$scratch/good" "$scratch/badline"
sed -i '2s/.*/{"path": "torn/' "$scratch/badline/rows.0-of-1.jsonl"
printf '[1,2]\n' >"$scratch/badline/rows.extra.jsonl"
run 0 merge "$scratch/badline" && [ "$(wc -l <"$scratch/err")" -eq 2 ] &&
	grep -q 'warning: .*badline/rows.0-of-1.jsonl:2: column .*; line skipped$' "$scratch/err" &&
	grep -q 'warning: .*badline/rows.extra.jsonl:1: not a fleet row: .*; line skipped$' "$scratch/err" &&
	grep -q '^2 lines of the rows files are no fleet rows' "$scratch/out" &&
	run 0 merge --json "$scratch/badline" && grep -q '"rows_skipped": 2' "$scratch/out"
report $? "bad lines: skipped with one warning each naming file and line, the rest merged, counted in the report"
cp -r "$scratch/good" "$scratch/badrun"
printf 'garbage\n' >>"$scratch/badrun/rows.0-of-1.jsonl"
run 0 fleet "$scratch/in" --out "$scratch/badrun" && grep -q 'rows.0-of-1.jsonl:5: column [0-9]*: not JSON.*; line skipped$' "$scratch/err" &&
	grep -q ' 0 rows written' "$scratch/err"
report $? "a bad line in a run folder: the re-run warns and goes on (its jobs are complete)"

# rows near 2^63: two made-up jobs whose own peak is 2^63-1 and whose other
# setting reserves nothing would save 2^64 bytes in all (a wrapped sum); their
# own rows are refused, which leaves them incomplete (tests/unit/test-fleet's
# /fleet/saved-saturates sums 2^48 over 33000 jobs)
"$python" - "$scratch/good" "$scratch/huge" <<'EOF'
import glob, json, os, shutil, sys
src, dst = sys.argv[1:]
shutil.copytree(src, dst)
rows = [json.loads(l) for l in open(glob.glob(src + "/rows.*.jsonl")[0])]
with open(dst + "/rows.huge.jsonl", "w") as f:
    for job in ("a", "b"):
        for r in rows[:2]:
            r = dict(r, path="/made/up/%s.pickle" % job, sha256=job * 64, fits=True, oom_event=None,
                     peak_reserved=(1 << 63) - 1 if r["recorded"] else 0)
            f.write(json.dumps(r, separators=(",", ":")) + "\n")
EOF
run 0 merge --json "$scratch/huge" && grep -q '"rows_skipped": 2' "$scratch/out" &&
	"$python" -c 'import json,sys; a=json.load(open(sys.argv[1])); b=json.load(open(sys.argv[2])); a.pop("rows_skipped"); b.pop("rows_skipped"); assert a==b' "$scratch/out" "$scratch/good.json" &&
	grep -q 'peak_reserved: must be an integer from 0 to 2^48' "$scratch/err"
report $? "rows with peaks near 2^63 are refused (2 skipped), and the report is the fleet's without them"

# escapes: a path, an error, a setting and a GPU holding ESC and other control bytes
"$python" - "$scratch/good" "$scratch/esc" <<'EOF'
import glob, json, os, shutil, sys
src, dst = sys.argv[1:]
shutil.copytree(src, dst)
f = glob.glob(dst + "/rows.*.jsonl")[0]
rows = [json.loads(l) for l in open(f)]
with open(f, "w") as out:
    for r in rows:
        r["path"] = r["path"].replace("seedfrag", "seed\x1b[31mfrag")
        if not r["recorded"]:
            r["setting"] = "\x1b]0;owned\x07" + r["setting"]
        r["own_device"]["gpu"] = "H\x1b[2J200"
        out.write(json.dumps(r, separators=(",", ":")) + "\n")
    out.write(json.dumps({"path": "/x/\x1b[5mbad.pickle", "size": None, "sha256": None, "rows": 1,
                          "device": None, "error": "/x/\x1b[5mbad.pickle: \x9b6n\r\n"}) + "\n")
EOF
ok=0
for flag in "" --wide --csv; do
	run 0 merge $flag "$scratch/esc" && ! grep -q "$(printf '\033')" "$scratch/out" &&
		! grep -q "$(printf '\r')" "$scratch/out" && ! grep -q "$(printf '\302\233')" "$scratch/out" || ok=1
done
[ $ok -eq 0 ] && run 0 merge --wide "$scratch/esc" && grep -q 'seed\\x1b\[31mfrag' "$scratch/out" &&
	grep -q 'x1b]0;owned\\x07' "$scratch/out" && grep -q 'H\\x1b\[2J200' "$scratch/out" &&
	grep -q '/x/\\x1b\[5mbad.pickle: \\xc2\\x9b6n\\r\\n' "$scratch/out"
report $? "paths, errors, settings and GPU names of rows are printed escaped (text, --wide, --csv)"

# A NUL byte between a row's tokens (jansson reads past it; the merge kept
# the line as a C string, cut there, and crashed on the half row): the
# line is skipped with a warning (found by fuzz-fleet-rows).
cp -r "$scratch/good" "$scratch/nul"
"$python" -c '
import sys
p = sys.argv[1]
lines = open(p, "rb").read().split(b"\n")
lines[0] = lines[0].replace(b",\"events\"", b"\x00,\"events\"", 1)
open(p, "wb").write(b"\n".join(lines))' "$scratch/nul/rows.0-of-1.jsonl"
run 0 merge "$scratch/nul" && grep -q 'warning: .*nul/rows.0-of-1.jsonl:1: not a fleet row: it holds a NUL byte; line skipped$' "$scratch/err"
report $? "a row with a NUL byte between its tokens is skipped with a warning, not a crash"

tap_done
