#!/bin/sh
# test-diff-gate.sh - `ccasim diff --fail-if` as a CI gate (TAP): a
# condition that holds exits 1 and is named on stderr and in the report;
# one that does not hold exits 0; a bad condition is one usage line, exit
# 2, before any replay; --json carries each condition's verdict.  The
# figures a condition compares are replay --json's for the same runs.
# Needs $CCASIM and $top_srcdir (set by make check).
set -u

srcdir=${top_srcdir:-.}
. "$srcdir/tests/tap.sh"

if [ "$python" = false ]; then
	skip "diff --fail-if" "no python3 to read the JSON"
	tap_done
fi

bert=$traces/bert.default.pickle.xz
bert128=$traces/bert.ms128.pickle.xz
dyn=$traces/dyninfer.default.pickle.xz
dynexp=$traces/dyninfer.exp.pickle.xz

# stat FILE KEY: memory_stats[KEY] of `replay --json` of FILE.
stat() {
	"$ccasim" replay --json "$1" | "$python" -c 'import json, sys
print(json.load(sys.stdin)["memory_stats"][sys.argv[1]])' "$2"
}

# --- 1. holds and does not hold: A B CONDITION STATUS (1: holds, 0: not)
# bert.ms128 reserves 18.6 % more than bert.default at the peak and makes
# 64 more cudaMallocs; dyninfer.exp 47 % less than dyninfer.default.
while read -r a b cond status; do
	[ -n "$a" ] || continue
	run "$status" "$ccasim" diff "$traces/$a.pickle.xz" "$traces/$b.pickle.xz" \
		--fail-if "$cond" &&
		if [ "$status" -eq 1 ]; then
			grep -qxF "ccasim diff: --fail-if: $cond holds" "$scratch/err" &&
				[ "$(wc -l <"$scratch/err")" -eq 1 ] &&
				grep -qF "   $cond: HOLDS: " "$scratch/out"
		else
			[ ! -s "$scratch/err" ] && grep -qF "   $cond: does not hold: " "$scratch/out"
		fi
	report $? "diff $a $b --fail-if '$cond' exits $status"
done <<'CASES'
bert.default bert.ms128 peak_reserved>+5% 1
bert.default bert.ms128 peak_reserved>+20% 0
bert.default bert.ms128 peak_reserved>=+1G 1
bert.default bert.ms128 peak_reserved>20G 0
bert.default bert.ms128 peak_reserved>12G 1
bert.default bert.ms128 num_device_alloc>+10 1
bert.default bert.ms128 num_device_alloc>+100 0
bert.default bert.ms128 peak_reserved<-5% 0
dyninfer.default dyninfer.exp peak_reserved<-5% 1
dyninfer.default dyninfer.exp peak_reserved>+5% 0
dyninfer.default dyninfer.exp num_device_alloc<=28 1
bert.default bert.default peak_reserved>+0% 0
bert.default bert.default oom 0
CASES

# --- 2. several conditions: any one that holds fails the gate, each named
run 1 "$ccasim" diff "$bert" "$bert128" --fail-if 'peak_reserved>+5%, oom' \
	--fail-if 'num_device_alloc>+10' &&
	[ "$(wc -l <"$scratch/err")" -eq 2 ] &&
	grep -qxF 'ccasim diff: --fail-if: peak_reserved>+5% holds' "$scratch/err" &&
	grep -qxF 'ccasim diff: --fail-if: num_device_alloc>+10 holds' "$scratch/err" &&
	grep -qF '   oom: does not hold: A fits, B fits' "$scratch/out"
report $? "three conditions, two hold: exit 1, both named, the third reported as not holding"

# --- 3. oom: B runs out of memory where A fits (a 1000 MiB device: dyninfer
# under expandable segments peaks at 924 MiB, under the defaults past it)
run 1 "$ccasim" diff "$dynexp" "$dyn" --device-memory 1000M --whatif --fail-if oom &&
	grep -qF '   oom: HOLDS: A fits, B ran out of memory' "$scratch/out"
report $? "--fail-if oom holds when B runs out of memory on the device and A fits"
run 0 "$ccasim" diff "$dyn" "$dynexp" --device-memory 1000M --whatif --fail-if oom
report $? "... and not the other way round (B fits)"

# --- 4. --json: the conditions, their figures and verdicts; the figures
# are replay --json's
run 1 "$ccasim" diff --json "$bert" "$bert128" --fail-if 'peak_reserved>+5%,num_device_alloc>+100'
"$python" - "$scratch/out" "$(stat "$bert" reserved_bytes.all.peak)" \
	"$(stat "$bert128" reserved_bytes.all.peak)" "$(stat "$bert" num_device_alloc)" \
	"$(stat "$bert128" num_device_alloc)" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
ra, rb, na, nb = map(int, sys.argv[2:6])
g = d["gate"]
assert g["failed"] is True, g
c0, c1 = g["conditions"]
# two recordings: no bounds, the figures are the trace's
exact = {"bounded": False, "depends": False, "unbounded": False, "a_bounds": None,
         "b_bounds": None, "change_bounds": None}
assert c0 == {"condition": "peak_reserved>+5%", "metric": "peak_reserved", "compare": "percent",
              "a": ra, "b": rb, "change": c0["change"], "holds": True, **exact}, c0
assert abs(c0["change"] - 100.0 * (rb - ra) / ra) < 1e-9, c0
assert c1 == {"condition": "num_device_alloc>+100", "metric": "num_device_alloc",
              "compare": "change", "a": na, "b": nb, "change": nb - na, "holds": False,
              **exact}, c1
assert d["a"]["peak_reserved"] == ra and d["b"]["peak_reserved"] == rb
PY
report $? "--json: gate.failed and each condition's metric, A, B, change and verdict (replay's figures)"
run 0 "$ccasim" diff --json "$bert" "$bert128" &&
	"$python" -c 'import json, sys; assert json.load(open(sys.argv[1]))["gate"] is None' "$scratch/out"
report $? "--json without --fail-if: gate is null, exit 0"

# --- 5. bad conditions: exit 2, one line naming the condition, no report
while IFS='|' read -r cond why; do
	[ -n "$cond" ] || continue
	run 2 "$ccasim" diff "$bert" "$bert128" --fail-if "$cond" && one_line &&
		grep -qF "ccasim diff: --fail-if '$cond': $why" "$scratch/err" &&
		grep -qF 'metrics: oom, peak_reserved' "$scratch/err" && [ ! -s "$scratch/out" ]
	report $? "--fail-if '$cond' is a usage error: $why"
done <<'CASES'
peak_reservd>+5%|unknown metric
peak_reserved|no comparison
peak_reserved>|no value after the comparison
>+5%|no metric before the comparison
num_device_alloc>+1.5|a count is a whole number
num_device_alloc>+10G|a count is a whole number
peak_reserved>+x%|a percentage is a number and %
peak_reserved>12XB|size '12XB': unknown unit
peak_reserved>+5%,|an empty condition
CASES

tap_done
