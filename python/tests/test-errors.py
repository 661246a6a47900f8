"""test-errors - what ccasim.load() raises: the file system's own OSErrors
(FileNotFoundError, PermissionError, IsADirectoryError, with errno and
filename) for a file it cannot open, TraceError for content it cannot read;
and one name per argument: fit(gpu=) as sweep(gpu=), gpus= a deprecated alias.
"""
import errno
import os
import stat
import subprocess
import sys
import tempfile
import warnings

import taputil
from taputil import ok

import ccasim
import ccasim.fleet

tmp = tempfile.mkdtemp()
missing = os.path.join(tmp, "no-such.pickle")
try:
    ccasim.load(missing)
    ok(False, "a missing file raises FileNotFoundError")
except FileNotFoundError as e:
    ok(e.errno == errno.ENOENT and e.filename == missing and not isinstance(e, ccasim.Error),
       "a missing file raises FileNotFoundError (errno, filename; no TraceError)", repr(e))

try:
    ccasim.load(tmp)
    ok(False, "a folder raises IsADirectoryError")
except IsADirectoryError as e:
    ok(e.filename == tmp, "a folder raises IsADirectoryError", repr(e))

locked = os.path.join(tmp, "locked.pickle")
with open(locked, "wb") as f:
    f.write(b"x")
os.chmod(locked, 0)
if os.access(locked, os.R_OK):  # root reads anything: ask as nobody
    os.chmod(tmp, 0o755)
    p = subprocess.run(
        [sys.executable, "-c", "import sys, ccasim\n"
         "try:\n    ccasim.load(sys.argv[1])\n"
         "except PermissionError as e:\n    print('PermissionError', e.errno, e.filename)\n",
         locked], capture_output=True, text=True, user=65534, group=65534)
    ok(p.stdout.split()[:1] == ["PermissionError"] and p.stdout.split()[2:] == [locked],
       "an unreadable file raises PermissionError (as nobody)", p.stdout + p.stderr)
else:
    try:
        ccasim.load(locked)
        ok(False, "an unreadable file raises PermissionError")
    except PermissionError as e:
        ok(e.errno in (errno.EACCES, errno.EPERM) and e.filename == locked,
           "an unreadable file raises PermissionError", repr(e))
os.chmod(locked, stat.S_IRUSR | stat.S_IWUSR)

junk = os.path.join(tmp, "junk.pickle")
with open(junk, "wb") as f:
    f.write(b"not a pickle")
try:
    ccasim.load(junk)
    ok(False, "content that is no snapshot raises TraceError")
except ccasim.TraceError as e:
    ok(not isinstance(e, OSError) and e.file == junk,
       "content that is no snapshot raises TraceError (.file)", repr(e))

t = ccasim.load(os.path.join(taputil.srcdir(), "traces", "pytorch-2.11",
                             "dyninfer.default.pickle.xz"))
new = t.fit(recorded=True, gpu="T4")
ok(new == t.fit(recorded=True, gpu=["T4"]), "fit(gpu=) takes one name or a list")
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    old = t.fit(recorded=True, gpus=["T4"])
ok(old == new and any(issubclass(w.category, DeprecationWarning) and "gpu=" in str(w.message)
                      for w in caught),
   "fit(gpus=) is the same call, with a DeprecationWarning naming gpu=")
try:
    t.fit(recorded=True, gpu="T4", gpus="T4")
    ok(False, "gpu= and gpus= together raise ConfigError")
except ccasim.ConfigError as e:
    ok(e.key == "gpus", "gpu= and gpus= together raise ConfigError", repr(e))
try:
    t.fit(recorded=True, gpu="NoSuchGPU")
    ok(False, "an unknown GPU raises ConfigError naming gpu")
except ccasim.ConfigError as e:
    ok(e.key == "gpu", "an unknown GPU raises ConfigError naming gpu", repr(e))
try:
    t.replay(device_memory=12)
    ok(False, "device_memory=12 (bytes) raises ConfigError")
except ccasim.ConfigError as e:
    ok(e.key == "device_memory" and "12G" in str(e),
       "device_memory=12 is no device: ConfigError suggesting '12G'", repr(e))
ok(t.replay(device_memory="12G").report == t.replay(device_memory=12 << 30).report,
   "device_memory='12G' is 12 GiB")

# fleet.merge() of a run whose shard 1/2 never ran: ccasim.Error naming it, as
# `ccasim fleet merge` exits 1; allow_missing=True reports with a line on it
run = os.path.join(tmp, "run")
inputs = [os.path.join(taputil.srcdir(), "traces", "pytorch-2.11", w + ".default.pickle.xz")
          for w in ("multistream", "seedfrag", "dyninfer", "gpt2gen")]
p = subprocess.run([taputil.ccasim_cli(), "fleet", "run"] + inputs +
                   ["--shard", "0/2", "--no-progress", "--out", run,
                    "-c", "expandable_segments:True"],
                   capture_output=True, text=True, env=taputil.cli_env())
ok(p.returncode == 0, "fleet run --shard 0/2", p.stderr)
try:
    ccasim.fleet.merge(run)
    ok(False, "fleet.merge() with shard 1/2 missing raises ccasim.Error")
except ccasim.Error as e:
    ok("missing shard 1/2" in str(e), "fleet.merge() with shard 1/2 missing raises ccasim.Error "
       "naming it", repr(e))
text = ccasim.fleet.merge(run, allow_missing=True)
ok("Missing: shard 1/2 left no rows file" in text, "allow_missing=True: the report says so",
   text[:400])

taputil.done()
