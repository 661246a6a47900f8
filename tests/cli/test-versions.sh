#!/bin/sh
# test-versions.sh - the rules of each PyTorch release (doc/versions.md) (TAP).
#
# 1. Each lab of a rule that differs between releases (traces/lab/
#    tiebreak, tiebreak-merge, throwoom, reserve) gives, under each
#    release, the figures its comments work out by hand from the quoted
#    source: reserved memory at the peak and at the end, OOMs.
# 2. A snapshot carrying 2.12+ keys and a ccasim-record start record of
#    torch 2.13 (built here from traces/calls-2.11/calls.default by
#    tests/data/make-2.13-snapshot.py) is detected as 2.13, replayed under
#    2.13's rules, and says so; its events follow 2.11's rules (the run
#    was 2.11's), which --check --pytorch-version 2.11 confirms.
#    A ring that says it overflowed replays as a window.
# 3. A 2.11 recording replayed under 2.14 is a what-if labelled
#    unvalidated, and names the ties a counter decided that 2.11 decided
#    by address; under its own rules it has no such line.
# 4. A key is refused by the releases before the one that adds it, and
#    --pytorch-version takes 2.0 to 2.15.
# 5. sweep --pytorch-version all tabulates every release.
#
# Needs $CCASIM and $top_srcdir (set by make check).
set -u

srcdir=${top_srcdir:-.}
. "$srcdir/tests/tap.sh"
labs=$srcdir/traces/lab
calls=$srcdir/traces/calls-2.11/calls.default.pickle.xz

# figures JSON: "PEAK END OOMS" (MiB, MiB, count) of a replay's --json.
figures() {
	"$python" -c 'import json, sys
d = json.load(open(sys.argv[1]))
m = d["memory_stats"]
print("%g %g %d" % (m["reserved_bytes.all.peak"] / 2**20,
                    m["reserved_bytes.all.current"] / 2**20, m["num_ooms"]))' "$1"
}

# json_is FILE EXPR: the Python expression EXPR over the JSON object d read
# from FILE is true.
json_is() {
	"$python" -c 'import json, sys
d = json.load(open(sys.argv[1]))
sys.exit(0 if eval("(" + sys.argv[2] + ")") else 1)' "$1" "$2"
}

# --- 1. labs: lab, release, peak MiB, end MiB, OOMs, why (the lab's comments)
if [ "$python" = false ]; then
	skip "lab figures under each release" "no python3 to read --json"
else
	while read -r lab release peak end ooms why; do
		[ -n "$lab" ] || continue
		# replay exits 3 where the run runs out of memory
		st=0
		[ "$ooms" -eq 0 ] || st=3
		run $st "$ccasim" replay --json --pytorch-version "$release" "$labs/$lab" &&
			got=$(figures "$scratch/out") && [ "$got" = "$peak $end $ooms" ] || {
			echo "# got '${got:-}', expected '$peak $end $ooms'"
			false
		}
		report $? "$lab under $release: peak $peak MiB, $end MiB at the end, $ooms OOM: $why"
	done <<'EOF'
tiebreak.lab       2.11 100 100 0 the lower address, the newer 40 MiB segment, is taken
tiebreak.lab       2.12 100  60 0 the lower block counter, the older segment's tail
tiebreak.lab       2.13 100  60 0 the lower segment counter, the older segment's tail
tiebreak-merge.lab 2.11 100 100 0 the lower address, the newer segment
tiebreak-merge.lab 2.12 100 100 0 the merged tail kept the later block's counter
tiebreak-merge.lab 2.13 100  60 0 the merged tail has its segment's counter
tiebreak-merge.lab 2.15 100  60 0 as 2.13
throwoom.lab       2.11 120 120 0 release_cached_blocks then the retry's cudaMalloc fit
throwoom.lab       2.12 100 100 1 throw_on_cudamalloc_oom: OOM at once past the cap
throwoom.lab       2.15 100 100 1 as 2.12
reserve.lab        2.14 300 300 0 no reserve: one reservation of 9/8 of the device
reserve.lab        2.15 100 100 1 a 160 MiB reservation cannot hold 200 MiB
EOF
	run 3 "$ccasim" replay --json "$labs/throwoom.lab" &&
		json_is "$scratch/out" 'd["rules"]["release"] == "2.12" and
d["oom_rejections"] == 1 and d["whatif"] is False and d["unvalidated"] is True'
	report $? "throwoom.lab replays under its own 2.12 rules: one rejection, labelled unvalidated"
	run 0 "$ccasim" replay --json --pytorch-version 2.13 "$labs/tiebreak.lab" &&
		json_is "$scratch/out" 'd["counter_ties"] == 1 and d["whatif"] is True and
d["rules"]["trace_release"] == "2.11" and d["rules"]["best_fit_order"] == "segment counter"'
	report $? "tiebreak.lab under 2.13: a what-if of the 2.11 lab, one tie decided by the counter"
fi

# --- 2. a 2.13 snapshot
s213=$scratch/s213.pickle
if [ "$python" = false ]; then
	skip "a 2.13 snapshot is detected and replayed as 2.13" "no python3"
else
	"$python" "$srcdir/tests/data/make-2.13-snapshot.py" "$calls" "$s213" &&
		run 0 "$ccasim" info "$s213" &&
		grep -qF "rules: PyTorch 2.13 (ccasim-record's start record says torch 2.13.0+cu130)" \
			"$scratch/out" &&
		grep -q "pool_id in 2195 trace entries" "$scratch/out"
	report $? "info: a 2.13 snapshot's release comes from ccasim-record's start record"
	run 0 "$ccasim" replay "$s213" &&
		grep -qF "PyTorch 2.13 rules" "$scratch/out" &&
		grep -qF "  rules: PyTorch 2.13, detected: ccasim-record's start record says torch 2.13.0+cu130" \
			"$scratch/out" &&
		grep -qF "  unvalidated: PyTorch 2.13's rules are modelled from its source" \
			"$scratch/out" &&
		grep -q "best-fit ties between free blocks of one stream and size were decided by the allocation counter; PyTorch 2.11 decides them by address" \
			"$scratch/out"
	report $? "replay: 2.13's rules, why, unvalidated, and the ties the counter decided"
	run 0 "$ccasim" replay --json "$s213" &&
		json_is "$scratch/out" 'd["pytorch_version"] == "2.13" and d["unvalidated"] is True and
d["rules"]["trace_release"] == "2.13" and d["rules"]["why"].startswith("detected: ccasim-record")
and d["counter_ties"] > 0'
	report $? "replay --json: release, why and the unvalidated label"
	run 0 "$ccasim" replay --check --pytorch-version 2.11 "$s213" &&
		grep -q "check: passed (2195 entries" "$scratch/out" &&
		run 1 "$ccasim" replay --check "$s213" && grep -q "check: FAILED" "$scratch/out"
	report $? "the snapshot's events are 2.11's: --check passes under 2.11's rules, not 2.13's"
fi

# --- 2b. a ring that says it overflowed is a window, whatever its first entries
if [ "$python" = false ]; then
	skip "an overflowed ring is a window" "no python3"
else
	"$python" -c 'import pickle, sys
s = pickle.load(open(sys.argv[1], "rb"))
s["allocator_settings"]["trace_alloc_overflowed"] = True
pickle.dump(s, open(sys.argv[2], "wb"), protocol=4)' "$srcdir/tests/data/newer-2.14.pickle" \
		"$scratch/ovf.pickle" &&
		# (it holds a recorded OOM: replay exits 3)
		run 3 "$ccasim" replay --json "$srcdir/tests/data/newer-2.14.pickle" &&
		json_is "$scratch/out" 'd["window"] is None' &&
		run 3 "$ccasim" replay --json "$scratch/ovf.pickle" &&
		json_is "$scratch/out" 'd["window"] is not None and
d["memory_stats"]["allocation.all.allocated"] is None'
	report $? "the same entries from a ring that says it overflowed replay as a window"
fi

# --- 3. a 2.11 recording under 2.14
run 0 "$ccasim" replay --pytorch-version 2.14 "$calls" &&
	grep -qF "what-if settings" "$scratch/out" &&
	grep -qF "  rules: PyTorch 2.14, asked for (--pytorch-version); the trace is 2.11" \
		"$scratch/out" &&
	grep -q "unvalidated: PyTorch 2.14's rules" "$scratch/out" &&
	grep -q "decided by the allocation counter; PyTorch 2.11 decides them by address" \
		"$scratch/out"
report $? "a 2.11 recording under 2.14: a what-if, unvalidated, the counter's ties named"
run 0 "$ccasim" replay --check "$calls" && ! grep -q "unvalidated\|allocation counter" "$scratch/out" &&
	grep -q "check: passed" "$scratch/out"
report $? "the same recording under its own 2.11 rules: checked, no label"

# --- 4. keys and releases
run 2 "$ccasim" replay --config throw_on_cudamalloc_oom:True "$calls" && one_line &&
	grep -qF "Unrecognized key 'throw_on_cudamalloc_oom' in CUDA allocator config." "$scratch/err"
report $? "2.11 refuses throw_on_cudamalloc_oom"
run 0 "$ccasim" replay --pytorch-version 2.12 --config throw_on_cudamalloc_oom:True "$calls"
report $? "2.12 accepts it"
run 2 "$ccasim" replay --pytorch-version 2.14 --config expandable_segments_reserve:0.5 "$calls" &&
	one_line && grep -qF "Unrecognized key 'expandable_segments_reserve'" "$scratch/err" &&
	run 0 "$ccasim" replay --pytorch-version 2.15 --config \
		expandable_segments:True,expandable_segments_reserve:0.5 "$calls"
report $? "expandable_segments_reserve: refused by 2.14, accepted by 2.15"
run 2 "$ccasim" replay --pytorch-version 2.16 "$calls" && one_line &&
	grep -qF "unsupported PyTorch version '2.16' (2.0 to 2.15)" "$scratch/err"
report $? "--pytorch-version 2.16 is refused on one line"
run 2 "$ccasim" replay --pytorch-version all "$calls" && one_line
report $? "only sweep takes --pytorch-version all"

# --- 5. sweep across releases
run 0 "$ccasim" sweep --pytorch-version all "$labs/throwoom.lab" &&
	[ "$(grep -c ' recorded' "$scratch/out")" -eq 16 ] &&
	grep -q "^2.11 .* 120.00 MiB .* recorded$" "$scratch/out" &&
	grep -q "^2.12 .* 100.00 MiB .* yes  recorded, unvalidated$" "$scratch/out"
report $? "sweep --pytorch-version all: one row per release, 2.12+ unvalidated"

# every command labels figures under rules nobody checked on hardware
seed=$traces/seedfrag.default.pickle.xz
for cmd in "peak" "fit --set max_split_size_mb=default" "diff -c max_split_size_mb:128"; do
	# shellcheck disable=SC2086 # CMD is words
	run 0 "$ccasim" $cmd --json --pytorch-version 2.13 "$seed" &&
		grep -q '"unvalidated": *true' "$scratch/out" &&
		run 0 "$ccasim" $cmd --pytorch-version 2.13 "$seed" && grep -q 'unvalidated' "$scratch/out" &&
		run 0 "$ccasim" $cmd --json --pytorch-version 2.11 "$seed" &&
		! grep -q '"unvalidated": *true' "$scratch/out"
	report $? "${cmd%% *} labels figures under 2.13's rules unvalidated, text and --json, and not 2.11's"
done
run 0 "$ccasim" step --at 3 --pytorch-version 2.13 "$seed" &&
	grep -q "under PyTorch 2.13's rules, unvalidated" "$scratch/out" &&
	run 0 "$ccasim" step --at 3 "$seed" && ! grep -q unvalidated "$scratch/out"
report $? "step says it shows 2.13's rules unvalidated, and not 2.11's"
run 0 "$ccasim" view -o "$scratch/v13.html" --pytorch-version 2.13 "$seed" &&
	grep -q 'PyTorch 2.13 rules (unvalidated)' "$scratch/v13.html" &&
	run 0 "$ccasim" view -o "$scratch/v11.html" "$seed" &&
	! grep -q 'rules (unvalidated)' "$scratch/v11.html"
report $? "view labels a run under 2.13's rules unvalidated in the page, and not 2.11's"
mkdir -p "$scratch/fleet" && cp "$seed" "$scratch/fleet/"
run 0 "$ccasim" fleet run "$scratch/fleet" --pytorch-version 2.13 --set max_split_size_mb=default \
	--no-progress --out "$scratch/rows" && cat "$scratch"/rows/rows.*.jsonl | grep -q '"unvalidated":true'
report $? "fleet rows under 2.13's rules say unvalidated"

tap_done
