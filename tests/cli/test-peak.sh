#!/bin/sh
# test-peak.sh - `ccasim peak`: what made the peak (TAP).
#
# At every moment it keeps (reserved peak, allocated peak, OOMs) the live
# blocks grouped by call stack, by annotation and by user metadata sum to
# the bytes allocated then, exactly; on the training traces the largest
# group is the one the program's reader names; --folded writes lines that
# flamegraph.pl reads; --under replays a what-if and says what changes;
# explain carries the same section.  Needs $CCASIM and $top_srcdir.
set -u

srcdir=${top_srcdir:-.}
. "$srcdir/tests/tap.sh"

if [ "$python" = false ]; then
	echo "1..1"
	skip "peak" "no python3"
	exit 0
fi
echo "1..13"

# check TRACE PY [ARGS]: peak --json of TRACE (with ARGS) read as `d` by
# the Python expression PY, which must hold.
check() {
	t=$1 py=$2
	shift 2
	"$ccasim" peak --json "$traces/$t" "$@" >"$scratch/out" 2>"$scratch/err" &&
		"$python" -c "
import json, sys
d = json.load(open(sys.argv[1]))
def groups(kind, by):
    return [m for m in d['moments'] if m['kind'] == kind][0]['groups'][by]
def sums():
    return all(sum(g['bytes'] for g in gs) == m['allocated']
               for m in d['moments'] for gs in m['groups'].values())
r = $py
if r is not True:
    print(r, file=sys.stderr)
    sys.exit(1)
" "$scratch/out" 2>>"$scratch/err"
}

# The trace with Python stacks (ResNet-18, one training step): frames
# recorded, every grouping sums to the allocated bytes at each moment.
check stacks.default.pickle.xz \
	"sums() and len(d['moments']) == 2 and any(g['frames'] for g in groups('reserved_peak', 'stack'))"
report $? "stacks.default: the groups of each moment (by stack with frames, annotation, metadata) sum to its allocated bytes"

# At its reserved peak (the backward pass) the largest group is the
# autograd engine's allocations, made on its C++ thread with no Python
# frame; the largest with frames is the model's parameters, moved to the
# GPU by model.to(): Module._apply's convert, 48 blocks, 41.94 MiB of
# ResNet-18's 44.7 MiB of fp32 parameters (the rest is in smaller stacks).
check stacks.default.pickle.xz \
	"groups('reserved_peak', 'stack')[0]['key'] == '(no stack recorded)' and [g for g in groups('reserved_peak', 'stack') if g['frames']][0]['key'].startswith('wl_stacks (capture.py:129) via convert (module.py:') and [g for g in groups('reserved_peak', 'stack') if g['frames']][0]['bytes'] == 43974656"
report $? "stacks.default: at the reserved peak the largest stack with frames is the parameters' model.to() (convert, 43974656 B)"

# The other bundled traces have no frames: every block is in one group,
# and the groupings still sum.
for w in seedfrag resnet152 bert gpt2gen multistream dyninfer; do
	check $w.default.pickle.xz \
		"sums() and [g['key'] for g in groups('reserved_peak', 'stack')] == ['(no stack recorded)']"
	report $? "$w.default: the groups of each moment sum to its allocated bytes; no stack recorded"
done

# BERT-large with AdamW: the largest annotated group at the reserved peak
# is the optimizer's state (exp_avg and exp_avg_sq, made in the first
# Optimizer.step): 2 x 335.4 M fp32 parameters = 2683018240 B.
check bert.default.pickle.xz \
	"[(g['key'], g['bytes']) for g in groups('reserved_peak', 'annotation')] == [('(no annotation open)', 7878173696), ('Optimizer.step#AdamW.step', 2683018240)]"
report $? "bert.default: by annotation, the AdamW state made in Optimizer.step (2683018240 B) beside the rest"

# A what-if OOM: a capped replay keeps the OOM's state, and says for each
# segment with free bytes why they could not serve the request.
check seedfrag.default.pickle.xz \
	"sums() and [m for m in d['moments'] if m['kind'] == 'oom'][0]['request']['model_failed'] and all(f.get('reason') for m in d['moments'] if m['kind'] == 'oom' for f in m['free_segments'])" \
	--device-memory 600MiB
report $? "seedfrag.default capped at 600 MiB: the OOM's groups sum, and every segment's free bytes have a reason"

# --folded: "frame;frame;... BYTES" lines summing to the allocated bytes.
"$ccasim" peak "$traces/stacks.default.pickle.xz" --folded "$scratch/f.folded" >/dev/null 2>"$scratch/err" &&
	"$python" -c "
import re, sys
lines = open(sys.argv[1]).read().splitlines()
assert all(re.fullmatch(r'[^;]+(;[^;]+)* \d+', l) for l in lines), lines
assert sum(int(l.rsplit(' ', 1)[1]) for l in lines) == 292389376
assert any(l.startswith('<module> (capture.py:') for l in lines), lines[:3]
" "$scratch/f.folded" 2>>"$scratch/err"
report $? "--folded writes root-first folded stacks summing to the 292389376 B allocated at the reserved peak"

# --under: both runs and what changes.
check bert.default.pickle.xz \
	"d['a']['figures']['reserved_peak']['reserved'] == 12213813248 and d['b']['figures']['reserved_peak']['reserved'] == 12079595520 and d['changes']['figures']['b']['segments_at_reserved_peak'] == 2" \
	--under expandable_segments:True
report $? "--under expandable_segments:True: bert's reserved peak 12213813248 -> 12079595520 B, 2 segments at it"

# explain carries the same section.
"$ccasim" explain -n 1 "$traces/stacks.default.pickle.xz" >"$scratch/out" 2>"$scratch/err" &&
	grep -q "^What made the peak" "$scratch/out" &&
	grep -q "live blocks by call stack (11 groups, 278.84 MiB in all)" "$scratch/out"
report $? "explain shows what made the peak, as peak does"
exit $failed
