#!/bin/sh
# ccasim replay --check on every trace of a folder of gpu-scripts/capture-uncertain.py
# (traces/uncertain-2.11): one line a trace, tab-separated: name, exit status,
# the cap option given (plain snapshots of a capped run: --memory-fraction from
# the json's cap_bytes / total_memory; ccasim-record's dumps carry their own),
# the first line ccasim wrote on stderr and the `check: FAILED ...` line of stdout.
#   gpu-scripts/check-uncertain.sh CCASIM DIR [JOBS]
ccasim=$1 dir=$2 jobs=${3:-2}
one() {
	b=${1%.pickle.xz}
	args=$(python3 -c "import json, sys; m = json.load(open(sys.argv[1]))
if m['recorder'].startswith('plain') and m['cap_bytes']:
    print('--memory-fraction=%r' % (m['cap_bytes'] / m['total_memory']))" "$b.json")
	out=$(mktemp)
	err=$("$ccasim" replay --check $args "$1" 2>&1 >"$out")
	rc=$?
	printf '%s\t%s\t%s\t%s\t%s\n' "$(basename "$b")" "$rc" "$args" \
		"$(printf '%s\n' "$err" | head -n 1)" "$(grep -m 1 '^check: FAILED' "$out")"
	rm -f "$out"
}
if [ "$1" = --one ]; then
	ccasim=$2
	one "$3"
	exit 0
fi
ls "$dir"/*.pickle.xz | xargs -P "$jobs" -n 1 sh "$0" --one "$ccasim" | sort
