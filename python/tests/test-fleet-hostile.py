"""test-fleet-hostile - ccasim.fleet on hostile folders raises or warns, never crashes or hangs.

merge() of a folder with no rows raises ccasim.Error (it crashed the
interpreter); of a folder whose jobs all failed it returns the report of
their errors; a line that is no fleet row is skipped with a RuntimeWarning
naming file and line.  jobs() does not follow a folder's link to itself, and
run() refuses /dev/zero and a FIFO at once with an error row each.  Calls
that crashed or hung run in a child interpreter under a timeout.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import warnings

import taputil
from taputil import ok

import ccasim
import ccasim.fleet as fleet

t = os.path.join(taputil.srcdir(), "traces")
tmp = tempfile.mkdtemp(prefix="test-fleet-hostile-py.")
grid = {"sets": ["expandable_segments=True,False"]}


def child(code, *args):
    """Runs CODE in a child interpreter (ARGS in sys.argv[1:]): (status, stdout, stderr);
    status -9 when it ran past 60 s."""
    try:
        p = subprocess.run([sys.executable, "-c", "import ccasim, ccasim.fleet as fleet, sys\n" + code] +
                           list(args), capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        return -9, "", "timed out"
    return p.returncode, p.stdout, p.stderr


# a folder with only fleet.json, as a run leaves it before its first row
bare = os.path.join(tmp, "bare")
fleet.write(bare, [], **grid)
for f in os.listdir(bare):
    if f.endswith(".jsonl"):
        os.unlink(os.path.join(bare, f))
rc, out, err = child("""
try:
    fleet.merge([sys.argv[1]])
except ccasim.Error as e:
    print("Error:", e)
""", bare)
ok(rc == 0 and out.startswith("Error: ") and "no fleet rows yet" in out and bare in out,
   "merge() of a folder holding only fleet.json raises ccasim.Error naming it, no crash",
   "status %d: %s%s" % (rc, out, err))

# every job failed: the report lists the errors
bad = os.path.join(tmp, "bad.pickle")
with open(bad, "w") as f:
    f.write("not a pickle")
failed = os.path.join(tmp, "failed")
rc, out, err = child("""
rows = fleet.run([(p, None, 0, 0.0) for p in sys.argv[2:]], sets=["expandable_segments=True,False"])
fleet.write(sys.argv[1], rows, sets=["expandable_segments=True,False"])
print(fleet.merge([sys.argv[1]]))
print(fleet.merge([sys.argv[1]], format="json"))
""", failed, bad, os.path.join(tmp, "missing.pickle"))
ok(rc == 0 and "no job was replayed" in out and "bad.pickle: offset 0" in out and
   "missing.pickle: No such file" in out and '"snapshots_failed": 2' in out,
   "merge() where every job failed returns the report of their errors (text and json)",
   "status %d: %s%s" % (rc, out, err))

# a bad line among good rows: skipped with a warning, the rest merged
good = os.path.join(tmp, "good")
fleet.write(good, fleet.run([os.path.join(t, "pytorch-2.11", "seedfrag.cap.pickle.xz")], **grid), **grid)
report = fleet.merge([good])
with open(os.path.join(good, "rows.extra.jsonl"), "w") as f:
    f.write('{"path": "x"}\n')
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    skipped = fleet.merge([good])
    doc = json.loads(fleet.merge([good], format="json"))
said = [str(w.message) for w in caught if w.category is RuntimeWarning]
ok(len(said) == 2 and all("rows.extra.jsonl:1: not a fleet row" in s and s.endswith("line skipped") for s in said) and
   doc["rows_skipped"] == 1 and skipped.replace(
       "1 line of the rows files is no fleet row and was left out (the warnings name the first).\n", "") == report,
   "merge() skips a line that is no row with a RuntimeWarning naming file and line, and counts it",
   "%r\n%s" % (said, skipped))
with warnings.catch_warnings():
    warnings.simplefilter("error")
    try:
        fleet.merge([good])
        raised = None
    except RuntimeWarning as e:
        raised = str(e)
ok(raised is not None and "rows.extra.jsonl:1" in raised, "warnings as errors: merge() raises the RuntimeWarning", raised)

# a folder with a link to itself: one job
loop = os.path.join(tmp, "loop")
os.makedirs(os.path.join(loop, "sub"))
shutil.copy(os.path.join(t, "pytorch-2.11", "seedfrag.cap.pickle.xz"), loop)
os.symlink(".", os.path.join(loop, "self"))
os.symlink("..", os.path.join(loop, "sub", "up"))
rc, out, err = child("print(len(fleet.jobs([sys.argv[1]])))", loop)
ok(rc == 0 and out.strip() == "1", "jobs() of a folder with links to itself: one job, at once",
   "status %d: %s%s" % (rc, out, err))

# /dev/zero and a FIFO: refused at once
fifo = os.path.join(tmp, "stuck.pickle")
os.mkfifo(fifo)
rc, out, err = child("""
for r in fleet.run(["/dev/zero", sys.argv[1]], sets=["expandable_segments=True,False"]):
    print(r)
""", fifo)
ok(rc == 0 and '"error":"/dev/zero: not a regular file (a character device)"' in out and
   'stuck.pickle: not a regular file (a FIFO)"' in out,
   "run() of /dev/zero and a FIFO: an error row each, at once", "status %d: %s%s" % (rc, out, err))

shutil.rmtree(tmp)
taputil.done()
