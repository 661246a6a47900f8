#!/bin/sh
# test-columns.sh - replay, explain, step, peak, diff, sweep, fit and info fit
# COLUMNS (TAP).  Set, every line is at most that wide (below 40: 40;
# not a number: 100); unset, sweep and fit fit 100 columns and the others,
# piped, keep their lines whole, as --wide does.  The text is bert's, the
# widest of the bundled real traces.
# Needs $CCASIM and $top_srcdir (set by make check).
set -u

srcdir=${top_srcdir:-.}
. "$srcdir/tests/tap.sh"

if [ "$python" = false ]; then
	skip "COLUMNS" "no python3 to measure the lines"
	tap_done
fi

# the widest line of each command's text
widest() {
	"$python" -c 'import sys
print(max((len(l.rstrip("\n")) for l in open(sys.argv[1], encoding="utf-8")), default=0))' "$scratch/out"
}
bert=$traces/bert.default.pickle.xz
while IFS='|' read -r cmd unset; do
	[ -n "$cmd" ] || continue
	for cols in 80 120; do
		# shellcheck disable=SC2086 # CMD is words
		COLUMNS=$cols run 0 "$ccasim" $cmd "$bert" && w=$(widest) && [ "$w" -le "$cols" ]
		report $? "COLUMNS=$cols ccasim $cmd: the widest line is ${w:-?} columns"
	done
	# shellcheck disable=SC2086 # CMD is words
	env -u COLUMNS "$ccasim" $cmd "$bert" >"$scratch/plain" 2>/dev/null
	if [ "$unset" = whole ]; then
		# shellcheck disable=SC2086 # CMD is words
		run 0 "$ccasim" $cmd --wide "$bert" && cmp -s "$scratch/plain" "$scratch/out"
		report $? "no COLUMNS, piped: ccasim $cmd keeps its lines whole, as --wide"
	else
		cp "$scratch/plain" "$scratch/out" && w=$(widest) && [ "$w" -le 100 ]
		report $? "no COLUMNS: ccasim $cmd fits 100 columns (${w:-?})"
	fi
done <<'CASES'
replay|whole
replay --config expandable_segments:True|whole
replay --device-memory 2G --oom-exit-status 0|whole
explain|whole
explain --event 46490|whole
step --at 100|whole
step --at 46490 --max-segments 0|whole
peak|whole
diff -c expandable_segments:True|whole
explain -c max_split_size_mb:128|whole
peak -c max_split_size_mb:128|whole
diff -c max_split_size_mb:128 --fail-if peak_reserved>+50%|whole
sweep --set max_split_size_mb=128,512|100
fit --gpu all|100
CASES
# a sweep of a run that ran out of memory shows every column but the wide
# ones: the settings column gives way below its usual 12 characters
COLUMNS=80 run 0 "$ccasim" sweep "$traces/dyninfer.cap.pickle.xz" && w=$(widest) && [ "$w" -le 80 ]
report $? "COLUMNS=80 ccasim sweep of dyninfer.cap (an OOM column): ${w:-?} columns"
for cols in 80 120; do
	COLUMNS=$cols run 0 "$ccasim" info "$bert" && w=$(widest) && [ "$w" -le "$cols" ]
	report $? "COLUMNS=$cols ccasim info: the widest line is ${w:-?} columns"
done
env -u COLUMNS "$ccasim" info "$bert" >"$scratch/plain" 2>/dev/null &&
	cp "$scratch/plain" "$scratch/out" && w=$(widest) && [ "$w" -gt 120 ]
report $? "no COLUMNS, piped: ccasim info keeps its lines whole (${w:-?} columns)"
COLUMNS=80 run 0 "$ccasim" explain --wide "$bert" && w=$(widest) && [ "$w" -gt 100 ]
report $? "explain --wide does not wrap (${w:-?} columns)"
COLUMNS=lots run 0 "$ccasim" explain "$bert" && w=$(widest) && [ "$w" -le 100 ] && [ "$w" -gt 80 ]
report $? "COLUMNS that is no number: 100 columns (${w:-?})"
COLUMNS=40 "$ccasim" explain "$bert" >"$scratch/forty" 2>/dev/null
COLUMNS=10 run 0 "$ccasim" explain "$bert" && cmp -s "$scratch/forty" "$scratch/out"
report $? "COLUMNS=10 is held to 40 columns: the text of COLUMNS=40"

tap_done
