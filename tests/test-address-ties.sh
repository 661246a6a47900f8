#!/bin/sh
# test-address-ties.sh - a what-if whose replay took no decision by device
# address alone (no two free blocks of one stream and size in different
# segments to choose between, one expandable segment per stream) is the
# same run under every address model, so sweep shares its figures across
# the models instead of replaying them (cca_allocator_address_ties()).
# Checked on real traces: the report with the shortcut equals the one with
# every model replayed (--all-address-models), and costs fewer replays.
set -u

srcdir=${top_srcdir:-.}
. "$srcdir/tests/tap.sh"

# same_report DESCRIPTION TRACE SWEEP-ARGS...: the JSON reports with and
# without --all-address-models are byte for byte the same, and the
# shortcut made fewer replays.
same_report() {
	desc=$1 trace=$2
	shift 2
	CCASIM_STATS=1 "$ccasim" sweep --json --no-progress -j 2 --address-sensitivity "$@" "$trace" \
		>"$scratch/short.json" 2>"$scratch/short.err" &&
		CCASIM_STATS=1 "$ccasim" sweep --json --no-progress -j 2 --address-sensitivity --all-address-models "$@" \
			"$trace" >"$scratch/all.json" 2>"$scratch/all.err" &&
		cmp -s "$scratch/short.json" "$scratch/all.json" &&
		short=$(awk '/^stats:/ { print $2 }' "$scratch/short.err") &&
		all=$(awk '/^stats:/ { print $2 }' "$scratch/all.err") &&
		[ "$short" -lt "$all" ]
	report $? "$desc (${short:-?} replays, ${all:-?} with every model)"
}

same_report "multistream, default grid: the figures of every model, fewer replays" \
	"$traces/multistream.default.pickle.xz" --default-grid
same_report "multistream, default grid under a cap" \
	"$traces/multistream.default.pickle.xz" --default-grid --memory-fraction 0.3
same_report "bert, expandable segments and max_split_size_mb" \
	"$traces/bert.default.pickle.xz" -s expandable_segments=True -s max_split_size_mb=default,128
same_report "resnet152 (expandable recording), default grid" \
	"$traces/resnet152.exp.pickle.xz" --default-grid

tap_done
