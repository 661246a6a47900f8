#!/bin/sh
# test-whatif.sh - end-to-end tests of `ccasim sweep`, `fit` and `diff`
# (TAP): a sweep row equals `ccasim replay --config` for the same setting,
# the machine formats hold what they promise, and bad input exits 1 (2 for
# usage errors) with one line on stderr.  Needs $CCASIM and $top_srcdir.
set -u

srcdir=${top_srcdir:-.}
. "$srcdir/tests/tap.sh"
seedfrag=$traces/seedfrag.default.pickle.xz
dyninfer=$traces/dyninfer.default.pickle.xz

# json_get FILE EXPR: a value from a JSON file (python3), e.g. "d['rows'][0]".
json_get() {
	"$python" -c 'import json, sys; d = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}

# --- usage and input errors -------------------------------------------------
run 2 "$ccasim" sweep && one_line
report $? "sweep without a trace exits 2 with one line"
run 2 "$ccasim" sweep "$seedfrag" --set max_split_size_mb && one_line
report $? "sweep --set without '=' exits 2 with one line"
run 2 "$ccasim" sweep "$seedfrag" --set no_such_key=1 && one_line &&
	grep -q "Unrecognized key 'no_such_key'" "$scratch/err"
report $? "sweep --set with an unknown key gives PyTorch's message"
run 2 "$ccasim" sweep "$seedfrag" --config max_split_size_mb:5 && one_line
report $? "sweep --config PyTorch rejects exits 2"
run 2 "$ccasim" sweep "$seedfrag" --json --csv && one_line
report $? "sweep --json --csv exits 2"
run 2 "$ccasim" sweep "$seedfrag" --goal fastest && one_line
report $? "sweep --goal with an unknown goal exits 2"
run 2 "$ccasim" sweep "$seedfrag" -d 4 && one_line
report $? "sweep of a device the trace lacks exits 2"
run 1 "$ccasim" sweep "$scratch/missing.pickle" && one_line
report $? "sweep of a missing file exits 1 with one line"
printf '{"rows": [' >"$scratch/bad.json"
run 1 "$ccasim" sweep "$seedfrag" --calibration "$scratch/bad.json" && one_line &&
	grep -q "bad.json: offset" "$scratch/err"
report $? "sweep with a bad calibration file exits 1 naming the offset"
run 2 "$ccasim" fit "$seedfrag" --gpu no-such-gpu && one_line
report $? "fit --gpu with an unknown name exits 2"
run 2 "$ccasim" diff "$seedfrag" && one_line
report $? "diff of one trace without --config exits 2"
run 2 "$ccasim" diff "$seedfrag" -c a -c b -c c && one_line
report $? "diff with three --config exits 2"

# --- output -----------------------------------------------------------------
run 0 "$ccasim" sweep "$seedfrag" --config max_split_size_mb:128 --csv -j 1 &&
	head -n 1 "$scratch/out" | grep -q '^rank,settings,origin,recorded,address_sensitive,peak_reserved,peak_reserved_min,peak_reserved_max,' &&
	[ "$(wc -l <"$scratch/out")" -eq 3 ]
report $? "sweep --csv: a header and one line per row"
run 0 "$ccasim" sweep "$seedfrag" --wide --recommend --memory-fraction 0.005 &&
	grep -q '^recommendation: ' "$scratch/out" && grep -q 'garbage_collection_threshold:0.6' "$scratch/out"
report $? "sweep --recommend under a cap: the grid has gc rows and a recommendation"
run 0 "$ccasim" fit --list-gpus && grep -q '^  H200 ' "$scratch/out" &&
	grep -q 'measured' "$scratch/out" && grep -q 'estimate' "$scratch/out"
report $? "fit --list-gpus lists the presets and the kind of each figure"
run 0 "$ccasim" diff "$seedfrag" --config "" --config "" && grep -q 'do not differ' "$scratch/out"
report $? "diff of identical settings reports no difference"
run 0 "$ccasim" diff "$dyninfer" --config "" --config max_split_size_mb:128 &&
	grep -q '^first difference: after event' "$scratch/out"
report $? "diff of two settings names the first difference"
run 0 "$ccasim" diff "$dyninfer" --config "" --config max_split_size_mb:128 &&
	! grep -q '^program: \|^warning: \|^annotations: ' "$scratch/out"
report $? "diff of one trace under two settings says nothing about programs"

# --- diff of two recordings ----------------------------------------------------
run 0 "$ccasim" diff "$traces/bert.default.pickle.xz" "$traces/bert.ms128.pickle.xz" &&
	grep -qx 'program: the same: 100.0 % of the allocation requests match by size and stream (A 18501, B 18501 requests)' \
		"$scratch/out" && ! grep -q '^warning: ' "$scratch/out"
report $? "diff of two settings of one workload (bert.default, bert.ms128): the same program"
run 0 "$ccasim" diff "$traces/bert.default.pickle.xz" "$traces/gpt2gen.default.pickle.xz" &&
	[ "$(grep -c '^warning: ' "$scratch/out")" -eq 1 ] &&
	grep -q '^warning: the traces look like different programs: only 6.3 % of the allocation requests' \
		"$scratch/out"
report $? "diff of two workloads (bert, gpt2gen): one warning line, exit 0"
run 0 "$ccasim" diff "$traces/bert.default.pickle.xz" "$traces/bert.ms128.pickle.xz" &&
	grep -qx 'annotations: 12 paired by name (A 12, B 12); reserved first differs at "Optimizer.step#AdamW.step" #1 (event 7289 in A, 7291 in B): A reserves 4.64 GiB, B 4.88 GiB' \
		"$scratch/out"
report $? "diff aligns two recordings by their record_function annotations (bert: Optimizer.step)"
if "$python" -c 'import json' 2>/dev/null; then
	run 0 "$ccasim" diff --json "$traces/bert.default.pickle.xz" "$traces/bert.ms128.pickle.xz" &&
		"$python" - "$scratch/out" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
p, m = d["program"], d["annotations"]
assert p["two_traces"] and p["same_program"] and p["similarity"] == 1.0, p
assert (m["marks_a"], m["marks_b"], m["paired"]) == (12, 12, 12), m
f = m["first_difference"]
assert (f["name"], f["occurrence"], f["event_a"], f["event_b"]) == ("Optimizer.step#AdamW.step", 1, 7289, 7291), f
assert f["reserved_a"] < f["reserved_b"], f
PY
	report $? "diff --json: program similarity and the annotation alignment"
else
	skip "diff --json: program similarity and the annotation alignment" "no python3"
fi
run 0 "$ccasim" diff "$srcdir/traces/calls-2.11/calls.default.pickle.xz" \
	"$srcdir/traces/calls-2.11/calls.ms128.pickle.xz" &&
	! grep -q '^annotations: ' "$scratch/out"
report $? "ccasim-record's ccasim: annotations are not steps"

# --- a sweep row is `replay --config` ---------------------------------------
if "$python" -c 'import json' 2>/dev/null; then
	ok=0
	run 0 "$ccasim" sweep "$dyninfer" --json -j 2 --memory-fraction 0.008 || ok=1
	cp "$scratch/out" "$scratch/sweep.json"
	rows=$(json_get "$scratch/sweep.json" "len(d['rows'])")
	i=0
	while [ "$ok" -eq 0 ] && [ "$i" -lt "$rows" ]; do
		conf=$(json_get "$scratch/sweep.json" "d['rows'][$i]['settings']")
		# replay exits 3 where the row ran out of memory
		st=0
		[ "$(json_get "$scratch/sweep.json" "d['rows'][$i]['num_ooms']")" = 0 ] || st=3
		run $st "$ccasim" replay "$dyninfer" --config "$conf" --memory-fraction 0.008 --json || ok=1
		for key in reserved_bytes.all.peak allocated_bytes.all.peak num_device_alloc num_device_free num_alloc_retries num_ooms; do
			case $key in
			reserved_bytes.all.peak) fig=peak_reserved ;;
			allocated_bytes.all.peak) fig=peak_allocated ;;
			num_device_alloc) fig=cuda_malloc ;;
			num_device_free) fig=cuda_free ;;
			num_alloc_retries) fig=alloc_retries ;;
			num_ooms) fig=num_ooms ;;
			esac
			a=$(json_get "$scratch/sweep.json" "d['rows'][$i]['$fig']")
			b=$(json_get "$scratch/out" "d['memory_stats']['$key']")
			if [ "$a" != "$b" ]; then
				echo "# row '$conf': $fig $a, replay $key $b"
				ok=1
			fi
		done
		i=$((i + 1))
	done
	[ "$rows" -ge 15 ] || ok=1
	report $ok "every sweep row ($rows) equals replay --config under the same cap"
else
	echo "ok $((n + 1)) # SKIP python3 needed to read JSON"
	n=$((n + 1))
fi

tap_done
