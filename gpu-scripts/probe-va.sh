#!/bin/sh
# probe-va.sh - runs every driver-address probe script in a fresh process.
#
#   gpu-scripts/probe-va.sh VA_PROBE SCRIPTS_DIR OUT_DIR
#
# VA_PROBE is the built gpu/va_probe; each SCRIPTS_DIR/NAME.txt is fed to
# a new process and its output written to OUT_DIR/NAME.out.  The results
# of the H200 run are kept in traces/driver-probe/results/.
set -eu
probe=$1
scripts=$2
out=$3
mkdir -p "$out"
n=0
for script in "$scripts"/*.txt; do
	name=$(basename "$script" .txt)
	"$probe" <"$script" >"$out/$name.out" 2>&1 || echo "probe $name failed" >&2
	n=$((n + 1))
done
echo "probe-va: $n scripts run"
