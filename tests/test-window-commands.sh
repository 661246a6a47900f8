#!/bin/sh
# test-window-commands.sh - a window in every command (TAP): a ring
# recording that wrapped (patterns-2.11 ringwrap, which starts mid-run)
# is said to be a window by replay, sweep, fit and peak in --json (the key
# "window", as replay's) and in their text, and explain does not claim
# what the tensors "ever" needed; a trace from the start carries window
# null.  Needs $CCASIM and $top_srcdir (set by make check).
set -u

srcdir=${top_srcdir:-.}
. "$srcdir/tests/tap.sh"

ring=$srcdir/traces/patterns-2.11/ringwrap.default.pickle.xz
whole=$traces/seedfrag.default.pickle.xz

# window_is JSON PATH NULL: the "window" at PATH (keys through lists'
# first items) is null when NULL is 1, else an object.
window_is() {
	"$python" -c '
import json, sys
d = json.load(open(sys.argv[1]))
for k in sys.argv[2].split("/"):
    if k:
        d = d[int(k)] if isinstance(d, list) else d[k]
w = d["window"]
assert (w is None) == (sys.argv[3] == "1"), w
' "$@"
}

for cmd in "replay" "sweep" "fit --recorded" "peak"; do
	# shellcheck disable=SC2086 # CMD is words
	run 0 "$ccasim" $cmd --json "$ring" && window_is "$scratch/out" "" 0
	report $? "${cmd%% *} --json of a window carries window"
	# shellcheck disable=SC2086
	run 0 "$ccasim" $cmd --json "$whole" && window_is "$scratch/out" "" 1
	report $? "${cmd%% *} --json of a trace from the start: window null"
done
for cmd in "sweep" "fit --recorded"; do
	# shellcheck disable=SC2086
	run 0 "$ccasim" $cmd "$ring" && grep -q 'note: the trace is a window of the run' "$scratch/out"
	report $? "${cmd%% *} says in its text that the trace is a window"
done
run 0 "$ccasim" peak "$ring" && grep -q 'note: the trace is a window of the run (it starts mid-run): the peaks' "$scratch/out"
report $? "peak says its peaks are the window's"
run 0 "$ccasim" explain "$ring" && grep -q 'more than the tensors within the window needed' "$scratch/out" &&
	! grep -q 'tensors ever needed' "$scratch/out"
report $? "explain of a window says 'within the window', never 'ever'"
run 0 "$ccasim" explain "$whole" && grep -q 'more than the tensors ever needed' "$scratch/out"
report $? "explain of a trace from the start keeps 'ever'"

# diff: the side that is a window says so, and its run-wide counts are null
run 0 "$ccasim" diff --json "$ring" "$whole" && window_is "$scratch/out" a 0 &&
	window_is "$scratch/out" b 1 && "$python" -c '
import json, sys
a = json.load(open(sys.argv[1]))["a"]
assert a["num_device_alloc"] is None and a["reserved_bytes_peak"] is None, a
assert a["window"]["within"]["num_device_alloc"] >= 0, a["window"]
' "$scratch/out"
report $? "diff --json: the window side carries window, its run-wide counts null"
run 0 "$ccasim" diff "$ring" "$whole" && grep -q '^   a window of the run (the trace starts mid-run)' "$scratch/out" &&
	grep -q 'OOMs within the window$' "$scratch/out"
report $? "diff says in its text which side is a window"

# fleet: the window job's rows carry window, and the report says so
mkdir -p "$scratch/fleet"
cp "$ring" "$whole" "$scratch/fleet/"
run 0 "$ccasim" fleet run "$scratch/fleet" --set max_split_size_mb=default --no-progress \
	--out "$scratch/rows" &&
	cat "$scratch"/rows/rows.*.jsonl >"$scratch/all" && "$python" -c '
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
for r in rows:
    assert (r["window"] is not None) == r["path"].endswith("ringwrap.default.pickle.xz"), r
' "$scratch/all"
report $? "fleet run: the rows of the window carry window, the others null"
run 0 "$ccasim" fleet merge "$scratch/rows" && tr -s ' \n' '  ' <"$scratch/out" |
	grep -q '1 of the jobs is a window of its run'
report $? "fleet merge says which share of the jobs are windows"

tap_done
