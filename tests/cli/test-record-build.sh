#!/bin/sh
# test-record-build.sh - ccasim-record runs from the build tree, as ccasim
# does (TAP): build/ccasim-record, with no CCASIM_RECORD_PYDIR and before
# `make install`, takes ccasim_record.py and its sitecustomize from the
# source tree it was built from, and records a program (the stand-in torch
# of tests/data/fake-torch-record); a copy of it elsewhere does not (it
# looks where `make install` puts them).  Needs $top_srcdir and
# $top_builddir (set by make check).
set -u

srcdir=${top_srcdir:-.}
export PYTHONDONTWRITEBYTECODE=1
. "$srcdir/tests/tap.sh"
. "$srcdir/tests/record-env.sh"
unset CCASIM_RECORD_PYDIR

if [ "$python" = false ]; then
	skip "ccasim-record from the build tree" "no python3"
	tap_done
fi

run 0 "$wrapper" --help && grep -q -- '-- COMMAND' "$scratch/out"
report $? "build/ccasim-record --help runs without CCASIM_RECORD_PYDIR"

run 0 env PYTHONPATH="$fake" "$wrapper" --out "$scratch/rec" --quiet -- /usr/bin/python3 -c \
	'import torch, ccasim_record
print(ccasim_record.is_recording(), ccasim_record.__file__)
a = torch.cuda._fake_alloc(1 << 20)' &&
	grep -q "^True $(cd "$srcdir" && pwd)/.*ccasim_record.py$" "$scratch/out" &&
	ls "$scratch/rec" | grep -q -- '-exit\.pickle$'
report $? "build/ccasim-record records a program with the source tree's recorder, and dumps at exit"

f=$(ls "$scratch"/rec/*-exit.pickle 2>/dev/null | head -n 1)
run 0 "$ccasim" info "${f:-missing}" && grep -q "annotations: " "$scratch/out"
report $? "ccasim info reads what it wrote"

mkdir -p "$scratch/bin"
cp "$wrapper" "$scratch/bin/ccasim-record"
pydir=$(sed -n 's/^pydir = pydir or "\(.*\)"$/\1/p' "$wrapper")
if [ -f "$pydir/ccasim_record.py" ]; then
	skip "a copy outside the build tree looks where make install puts the recorder" \
		"installed in $pydir"
else
	run 2 "$scratch/bin/ccasim-record" --help && one_line &&
		grep -q "no ccasim_record.py there (not installed" "$scratch/err"
	report $? "a copy outside the build tree looks where make install puts the recorder"
fi

tap_done
