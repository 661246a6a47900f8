#!/bin/sh
# test-replay-count.sh - one plan, one replay (doc/architecture.md): how many model replays
# and planning passes each command makes, from `replay --json` ("replays",
# "planning_passes", "plan") and from CCASIM_STATS=1 ("stats: N replays,
# M planning passes" on standard error).  A what-if costs one replay and
# at most one planning pass per trace, and a what-if whose figures have
# bounds the replays of its bounds, as many in every command as in
# `replay` (sim/study/timing.c); nothing replays again behind the user's
# back.
set -u

srcdir=${top_srcdir:-.}
. "$srcdir/tests/tap.sh"

samples=$srcdir/traces/pytorch-2.11/samples

# json_is DESCRIPTION PYTHON-CONDITION: the condition holds for r, the JSON
# replay report in $scratch/out.
json_is() {
	"$python" -c '
import json, sys
r = json.load(open(sys.argv[1]))
sys.exit(0 if eval(sys.argv[2]) else 1)
' "$scratch/out" "$2"
	report $? "$1"
}

# stats_are DESCRIPTION REPLAYS PLANNING CMD...: CMD (exit 0) prints the
# stats line with REPLAYS model replays and at most PLANNING planning passes.
stats_are() {
	desc=$1 replays=$2 planning=$3
	shift 3
	run 0 env CCASIM_STATS=1 "$@" &&
		line=$(grep '^stats: ' "$scratch/err") &&
		[ "$(echo "$line" | awk '{ print $2 }')" -eq "$replays" ] &&
		[ "$(echo "$line" | awk '{ print $4 }')" -le "$planning" ]
	report $? "$desc (${line:-no stats line})"
}

run 0 "$ccasim" replay --json "$traces/seedfrag.default.pickle.xz"
json_is "a recorded replay is one replay and no planning pass" \
	'r["replays"] == 1 and r["planning_passes"] == 0 and not r["whatif"]'
run 0 "$ccasim" replay --whatif --json "$traces/seedfrag.default.pickle.xz"
json_is "a what-if under the recorded settings is one replay" \
	'r["replays"] == 1 and r["whatif"]'
run 0 "$ccasim" replay --config max_split_size_mb:128 --json "$traces/bert.gc.pickle.xz"
json_is "a what-if of an uncapped trace with releases: one read, one replay, its 8 empty_cache() found as it is read" \
	'r["replays"] == 1 and r["planning_passes"] == 0 and not r["plan"]["entries_read"] and r["empty_cache_calls"] == 8'
run 0 "$ccasim" replay --config max_split_size_mb:128 --json "$traces/multistream.capms.pickle.xz"
json_is "a what-if whose burst of releases precedes an oom: the plan reads the entries and one planning pass tells the 1 empty_cache() (the replay given up at that burst is counted)" \
	'r["replays"] == 2 and r["planning_passes"] == 1 and r["plan"]["has_releases"] and r["plan"]["empty_cache_positions"] == 1 and r["empty_cache_calls"] == 1'
run 0 "$ccasim" replay --json "$samples/snap_state_2.11.pickle"
json_is "a mid-run trace is one replay from its rebuilt start" \
	'r["replays"] == 1 and r["plan"]["mid_run"] and r["plan"]["start_blocks"] > 0'
run 0 "$ccasim" replay --whatif --json "$samples/snap_state_2.11.pickle"
json_is "a what-if of a mid-run trace is one replay" 'r["replays"] == 1 and r["plan"]["mid_run"]'

stats_are "step --at replays once, up to the event" 1 0 \
	"$ccasim" step --at 100 "$traces/seedfrag.default.pickle.xz"
stats_are "plot replays once (a recording: no bounds)" 1 0 \
	"$ccasim" plot "$traces/seedfrag.default.pickle.xz" -o "$scratch/t.svg"
stats_are "plot --segments --at replays once, up to the event" 1 0 \
	"$ccasim" plot --segments --at 100 "$traces/seedfrag.default.pickle.xz" -o "$scratch/s.svg"
stats_are "step --at in a what-if replays once, up to the event" 1 1 \
	"$ccasim" step --at 1745 --config max_split_size_mb:128 "$traces/seedfrag.gc.pickle.xz"
# explain and diff replay twice: the first replay finds the peak moments,
# the second stops after the last and takes the state there once, instead
# of copying the whole state at every rise (doc/figures.md)
# bounds_of ARGS...: the replays of the bounds of `replay ARGS` (its
# replays but its own one)
bounds_of() {
	CCASIM_STATS=1 "$ccasim" replay "$@" 2>&1 >/dev/null | awk '/^stats: / { print $2 - 1 }'
}
gc=$traces/bert.gc.pickle.xz
# bert.gc's recording is replayed as a what-if (replay --json's whatif),
# bounded by address placement, as is its max_split_size_mb:128; the other
# commands count the decisions by address in their own replay, as replay
# --address-ties does (plain replay of the recorded settings counts them
# in one more)
b_rec=$(bounds_of --address-ties "$gc")
b_128=$(bounds_of --config max_split_size_mb:128 "$gc")
[ "$b_rec" -gt 0 ] && [ "$b_128" -gt 0 ]
report $? "replay bounds bert.gc recorded ($b_rec replays) and under max_split_size_mb:128 ($b_128)"
stats_are "explain replays twice (the peak found, then its state taken once)" 2 0 \
	"$ccasim" explain "$traces/seedfrag.default.pickle.xz"
stats_are "explain of a what-if replays twice, then its bounds as replay does, one planning pass at most" $((2 + b_128)) 1 \
	"$ccasim" explain --config max_split_size_mb:128 "$traces/bert.gc.pickle.xz"
stats_are "explain of a mid-run trace replays once" 1 0 \
	"$ccasim" explain "$samples/snap_state_2.11.pickle"
stats_are "export replays once" 1 0 \
	"$ccasim" export -o "$scratch/e.pickle" "$traces/seedfrag.default.pickle.xz"
stats_are "export of a what-if replays once, one planning pass at most" 1 1 \
	"$ccasim" export --config max_split_size_mb:128 -o "$scratch/w.pickle" \
	"$traces/bert.gc.pickle.xz"
stats_are "export of a mid-run trace replays once" 1 0 \
	"$ccasim" export -o "$scratch/m.pickle" "$samples/snap_state_2.11.pickle"
stats_are "export of two devices replays once per device" 2 0 \
	"$ccasim" export -o "$scratch/d.pickle" "$srcdir/tests/data/two-devices.pickle"
stats_are "export --format chrome replays once per device" 2 0 \
	"$ccasim" export -f chrome -o "$scratch/d.json" "$srcdir/tests/data/two-devices.pickle"
stats_are "diff replays twice per side, then each side's bounds as replay does" $((4 + b_rec + b_128)) 1 \
	"$ccasim" diff -c max_split_size_mb:128 "$traces/bert.gc.pickle.xz"
stats_are "a plot of the recording and a what-if: one replay each, then their bounds as replay does, one planning pass at most" $((2 + b_rec + b_128)) 1 \
	"$ccasim" plot --config max_split_size_mb:128 "$traces/bert.gc.pickle.xz" -o "$scratch/w.svg"

stats_are "sweep --no-bounds replays once per setting (3 rows: the recorded one, 128, 256)" 3 0 \
	"$ccasim" sweep --no-progress --no-bounds -s max_split_size_mb=default,128,256 \
	"$traces/bert.default.pickle.xz"
# 19 address models (cca_simdevice_bound_models(): driver, ascending,
# descending, moved:1..16), as replay's bounds hold; CCASIM_ADDRESS_MODELS
# keeps fewer in slow builds
models=${CCASIM_ADDRESS_MODELS:-19}
stats_are "sweep replays each what-if row under every address model (1 + 2 x $models)" \
	$((1 + 2 * models)) 0 \
	"$ccasim" sweep --no-progress -s max_split_size_mb=default,128,256 "$traces/bert.default.pickle.xz"
stats_are "sweep --address-sensitivity --all-address-models: the same (1 + 2 x $models)" \
	$((1 + 2 * models)) 0 \
	"$ccasim" sweep --no-progress --address-sensitivity --all-address-models -s max_split_size_mb=default,128,256 \
	"$traces/bert.default.pickle.xz"

tap_done
