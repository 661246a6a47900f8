#!/bin/sh
# test-pip.sh - `pip install --no-build-isolation .` of the Python module
# into a fresh virtualenv, offline, from the files a release tarball ships
# (pyproject.toml, setup.py and the sources they name, copied out of the
# source tree; in `make distcheck` the source tree is the tarball): the
# module imports, replays a bundled trace, and ccasim-record is installed.
# SKIPs without Debian's python3-venv / python3-setuptools or python3-dev.
set -u

srcdir=${top_srcdir:-.}
. "$srcdir/tests/tap.sh"

if ! "$python" -c 'import venv, setuptools, sysconfig, os, sys; sys.exit(not os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")))' 2>/dev/null; then
	skip "pip install of the module" "needs python3-venv, python3-setuptools and python3-dev"
	tap_done
fi
tree=$scratch/src
mkdir -p "$tree/record"
cp -R "$srcdir/pyproject.toml" "$srcdir/setup.py" "$srcdir/configure.ac" "$srcdir/README.md" \
	"$srcdir/python" "$srcdir/sim" "$tree/"
cp -R "$srcdir/record/ccasim_record.py" "$srcdir/record/record-site" "$tree/record/"
rm -rf "$tree/python/__pycache__" "$tree/python/tests/__pycache__"
"$python" -m venv --system-site-packages "$scratch/venv" >"$scratch/venv.log" 2>&1 &&
	(cd "$tree" && "$scratch/venv/bin/pip" install --no-build-isolation --no-index . \
		>"$scratch/pip.log" 2>&1)
status=$?
[ $status -ne 0 ] && sed 's/^/# /' "$scratch/pip.log" | tail -20
report $status "pip install --no-build-isolation --no-index . builds the module offline"
(cd "$scratch" && "$scratch/venv/bin/python" -c '
import sys, ccasim, ccasim.fleet
t = ccasim.load(sys.argv[1])
r = t.replay(config="expandable_segments:True")
print(r.peak_reserved)
' "$srcdir/traces/pytorch-2.11/dyninfer.default.pickle.xz") >"$scratch/out" 2>&1
want=$("$ccasim" replay --json --config expandable_segments:True \
	"$srcdir/traces/pytorch-2.11/dyninfer.default.pickle.xz" |
	"$python" -c 'import json, sys; print(json.load(sys.stdin)["memory_stats"]["reserved_bytes.all.peak"])')
[ "$(cat "$scratch/out")" = "$want" ]
report $? "the installed module replays dyninfer under expandable segments to the CLI's peak ($want B)"
"$scratch/venv/bin/ccasim-record" --help >"$scratch/rec" 2>&1 && grep -q -- '-- COMMAND' "$scratch/rec"
report $? "ccasim-record is installed with it"
tap_done
