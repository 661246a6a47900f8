"""Ctrl-C during a long call: sweep() and fit() stop between replays, and
ccasim.fleet.run() between jobs, and
raise KeyboardInterrupt promptly, instead of running to their end; Python's
own SIGINT handler is back afterwards and the next call runs whole."""
import os
import signal
import subprocess
import sys
import time

import taputil
from taputil import ok

builddir = os.environ.get("top_builddir", ".")
gen = os.path.join(builddir, "bench", "gen-trace")
if not os.access(gen, os.X_OK):
    taputil.skip_all("no bench/gen-trace")

tmp = os.environ.get("TMPDIR", "/tmp")
trace = os.path.join(tmp, "test-interrupt-%d.msgpack" % os.getpid())
# (a sanitized gen-trace links its own runtime: not Python's preloaded one)
subprocess.run([gen, "-n", "300000", "-s", "1", "-o", trace], check=True,
               stdout=subprocess.DEVNULL, env=taputil.cli_env())

# The child: a call that runs for many seconds (40 rows, every address
# model), started after it says "go".  KeyboardInterrupt is caught so
# that the child can check what is left: the handler, and a short call.
CHILD = r"""
import signal, sys, time
import ccasim
import ccasim.fleet
t = ccasim.load(sys.argv[1])
grid = ["max_split_size_mb=" + ",".join(str(20 + i) for i in range(40))]
long_call = {
    "sweep": lambda: t.sweep(sets=grid, jobs=2, address_sensitivity=True,
                             all_address_models=True),
    "fit": lambda: t.fit(sets=grid, jobs=2),
    "fleet.run": lambda: ccasim.fleet.run([sys.argv[1]] * 200),
}[sys.argv[2]]
print("go", flush=True)
start = time.monotonic()
try:
    long_call()
    print("finished", flush=True)
except KeyboardInterrupt:
    print("interrupted %.2f" % (time.monotonic() - start), flush=True)
print("handler", signal.getsignal(signal.SIGINT) is signal.default_int_handler, flush=True)
print("rows", len(t.sweep(configs=["max_split_size_mb:128"], default_grid=False)), flush=True)
"""

for call in ("sweep", "fit", "fleet.run"):
    p = subprocess.Popen([sys.executable, "-c", CHILD, trace, call], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    first = p.stdout.readline().strip()
    time.sleep(0.5)
    sent = time.monotonic()
    p.send_signal(signal.SIGINT)
    try:
        out, err = p.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
    waited = time.monotonic() - sent
    lines = out.splitlines()
    ok(first == "go" and lines and lines[0].startswith("interrupted"),
       "%s(): SIGINT raises KeyboardInterrupt" % call, out + err)
    # (uninterrupted, each runs for 14 s or more in a plain build, minutes
    # under the sanitizers: 10 s tells them apart on a loaded host too)
    ok(waited < 10.0, "%s(): the call ends within 10 s of SIGINT (%.2f s)" % (call, waited),
       out + err)
    ok("handler True" in lines, "%s(): Python's SIGINT handler is back afterwards" % call,
       out + err)
    ok("rows 2" in lines and p.returncode == 0,
       "%s(): the next call runs whole" % call, out + err)

# Uninterrupted, a call returns its whole result and leaves the handler.
import ccasim  # noqa: E402

t = ccasim.load(trace)
rows = t.sweep(sets=["max_split_size_mb=128,256"], default_grid=False)
ok(len(rows) == 3 and signal.getsignal(signal.SIGINT) is signal.default_int_handler,
   "an uninterrupted sweep() returns every row and leaves the handler", rows)

os.unlink(trace)
taputil.done()
