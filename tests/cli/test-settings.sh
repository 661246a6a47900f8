#!/bin/sh
# test-settings.sh - settings PyTorch accepts but ccasim does not model
# (TAP).  backend:cudaMallocAsync, in --config or in a trace's recorded
# settings, is refused by every command that replays: one exact line on
# stderr, a non-zero exit, nothing on stdout and no output file.  Keys
# that change no device memory are accepted with a note: a "note:" line in
# the text and a "notes" array in --json, and the same figures as without
# them.  Unknown keys keep PyTorch's error.  Needs $CCASIM and $top_srcdir
# (set by make check).
set -u

srcdir=${top_srcdir:-.}
. "$srcdir/tests/tap.sh"

trace=$traces/samples/snap_default_2.11.pickle
why="backend:cudaMallocAsync replaces the caching allocator with the CUDA driver's stream-ordered pool; ccasim models the native caching allocator only"
pinned="pinned_num_register_threads:8 changes pinned host memory only; it does not change the simulation"

# clean_err: stderr has no GLib CRITICAL or WARNING.
clean_err() {
	! grep -q 'CRITICAL\|WARNING' "$scratch/err"
}

# refused STATUS LINE CMD...: CMD exits STATUS with exactly LINE on stderr
# and nothing on stdout.
refused() {
	want=$1
	line=$2
	shift 2
	run "$want" "$@" && one_line && clean_err && [ ! -s "$scratch/out" ] &&
		[ "$(cat "$scratch/err")" = "$line" ] || {
		echo "# expected: $line"
		echo "# got: $(head -c 400 "$scratch/err")"
		return 1
	}
}

# --config backend:cudaMallocAsync, command by command: "command|extra
# arguments (- for none; -o NAME writes under $scratch)|the exact line".
while IFS='|' read -r cmd args line; do
	[ -z "$cmd" ] && continue
	[ "$args" = - ] && args=
	args=$(echo "$args" | sed "s|-o |-o $scratch/|")
	# shellcheck disable=SC2086 # ARGS are words
	refused 2 "$line" "$ccasim" $cmd $args --config backend:cudaMallocAsync "$trace"
	report $? "$cmd --config backend:cudaMallocAsync: exit 2, one line naming the key"
done <<EOF
replay|-|ccasim replay: --config 'backend:cudaMallocAsync': $why
replay|--json|ccasim replay: --config 'backend:cudaMallocAsync': $why
explain|-|ccasim explain: --config 'backend:cudaMallocAsync': $why
step|-|ccasim step: --config 'backend:cudaMallocAsync': $why
plot|-o c.svg|ccasim plot: --config 'backend:cudaMallocAsync': $why
export|-o c.pickle|ccasim export: --config 'backend:cudaMallocAsync': $why
sweep|-|ccasim sweep: --config backend:cudaMallocAsync: $why
sweep|--json|ccasim sweep: --config backend:cudaMallocAsync: $why
fit|-|ccasim fit: --config backend:cudaMallocAsync: $why
diff|-|ccasim diff: --config backend:cudaMallocAsync: $why
EOF
[ ! -e "$scratch/c.svg" ] && [ ! -e "$scratch/c.pickle" ]
report $? "a refused --config leaves no output file"

refused 2 "ccasim sweep: --set: \"backend:cudaMallocAsync\": $why" \
	"$ccasim" sweep --set backend=native,cudaMallocAsync "$trace"
report $? "sweep --set backend=native,cudaMallocAsync is refused the same way"
refused 2 "ccasim replay: --config 'backend:cudaMallocAsync,foo:1': Unrecognized key 'foo' in CUDA allocator config." \
	"$ccasim" replay --config backend:cudaMallocAsync,foo:1 "$trace"
report $? "PyTorch's own errors come first: an unknown key is still its error"
# (the sample ran out of memory once, as PyTorch's test made it: exit 3)
run 3 "$ccasim" replay --config backend:native "$trace" && ! grep -q 'note:' "$scratch/out"
report $? "backend:native is accepted without a note"

# A noted key: one note line, the same figures as without it.
run 3 "$ccasim" replay --config pinned_num_register_threads:8 "$trace" &&
	grep -qxF "  note: $pinned" "$scratch/out" && [ "$(grep -c 'note:' "$scratch/out")" -eq 1 ]
report $? "replay --config pinned_num_register_threads:8 prints one note"

if [ "$python" = false ]; then
	skip "notes in --json and recorded cudaMallocAsync" "no python3"
	tap_done
fi

noted=pinned_num_register_threads:8,pinned_use_cuda_host_register:True,pinned_use_background_threads:True,pinned_reserve_segment_size_mb:64,release_lock_on_cudamalloc:True,graph_capture_record_stream_reuse:True
"$ccasim" replay --json --oom-exit-status 0 --config "$noted" "$trace" >"$scratch/noted.json" &&
	"$ccasim" replay --json --oom-exit-status 0 --config "" "$trace" >"$scratch/plain.json" &&
	"$python" - "$scratch/noted.json" "$scratch/plain.json" "$pinned" <<'EOF'
import json, sys
noted, plain = (json.load(open(p)) for p in sys.argv[1:3])
assert plain["notes"] == [], plain["notes"]
assert len(noted["notes"]) == 6 and sys.argv[3] in noted["notes"], noted["notes"]
assert all(n.endswith("; it does not change the simulation") for n in noted["notes"])
assert noted["memory_stats"] == plain["memory_stats"]
EOF
report $? "replay --json: a notes array (six notes, [] without), the same memory_stats"

"$ccasim" sweep --json --no-progress --set pinned_num_register_threads=default,8 "$trace" \
	>"$scratch/sweep.json" &&
	"$python" - "$scratch/sweep.json" "$pinned" <<'EOF'
import json, sys
doc = json.load(open(sys.argv[1]))
assert doc["notes"] == [sys.argv[2]], doc["notes"]
rows = {r["settings"]: r for r in doc["rows"]}
assert rows["pinned_num_register_threads:8"]["notes"] == [sys.argv[2]]
assert rows[""]["notes"] == []
assert rows[""]["peak_reserved"] == rows["pinned_num_register_threads:8"]["peak_reserved"]
EOF
report $? "sweep --json: a notes array, and each row's own"
run 0 "$ccasim" sweep --wide --no-progress --config pinned_num_register_threads:8 "$trace" &&
	grep -qxF "note: $pinned" "$scratch/out"
report $? "sweep prints the note"
"$ccasim" fit --json --no-progress --config pinned_num_register_threads:8 "$trace" \
	>"$scratch/fit.json" &&
	"$python" -c 'import json,sys; assert json.load(open(sys.argv[1]))["notes"] == [sys.argv[2]]' \
		"$scratch/fit.json" "$pinned"
report $? "fit --json: a notes array"
# (a --config equal to the recorded settings plus a noted key replays the
# recording's own addresses, as the recorded settings do)
"$ccasim" diff --json --config "" --config pinned_num_register_threads:8 "$trace" >"$scratch/diff.json" &&
	"$python" - "$scratch/diff.json" "$pinned" <<'EOF'
import json, sys
doc = json.load(open(sys.argv[1]))
assert doc["notes"] == [sys.argv[2]], doc["notes"]
assert doc["differs"] is False
EOF
report $? "diff --json: a notes array; the recorded settings with a noted key replay as the recorded ones"

# A trace whose recorded settings say backend:cudaMallocAsync (PyTorch
# never writes one: that allocator cannot take a snapshot) or a noted key
# (in the string and in the dict, which wins where they disagree).
make_trace() {
	"$python" - "$trace" "$1" "$2" <<'EOF'
import pickle, sys
src, dst, conf = sys.argv[1:4]
snap = pickle.load(open(src, "rb"))
settings = snap["allocator_settings"]
settings["PYTORCH_CUDA_ALLOC_CONF"] = conf
key, value = conf.split(":")
if key in settings:  # the dict holds what the allocator used: it wins
    settings[key] = int(value)
pickle.dump(snap, open(dst, "wb"), protocol=4)
EOF
}
async=$scratch/async.pickle
pinned_trace=$scratch/pinned.pickle
make_trace "$async" backend:cudaMallocAsync && make_trace "$pinned_trace" pinned_num_register_threads:8
report $? "made traces recorded with backend:cudaMallocAsync and pinned_num_register_threads:8"

while IFS='|' read -r cmd args; do
	[ -z "$cmd" ] && continue
	[ "$args" = - ] && args=
	args=$(echo "$args" | sed "s|-o |-o $scratch/|")
	# shellcheck disable=SC2086 # ARGS are words
	refused 1 "ccasim ${cmd%% *}: $async: recorded allocator_settings: $why" \
		"$ccasim" $cmd $args "$async"
	report $? "${cmd%% *} $args of a trace recorded with backend:cudaMallocAsync: exit 1, naming the file"
done <<'EOF'
replay|-
replay|--json
replay|--config max_split_size_mb:128
explain|-
plot|-o r.svg
export|-o r.pickle
sweep|-
fit|--recorded
diff|--config max_split_size_mb:128
EOF
[ ! -e "$scratch/r.svg" ] && [ ! -e "$scratch/r.pickle" ]
report $? "a refused recording leaves no output file"
run 0 "$ccasim" info "$async" && grep -q 'cudaMallocAsync' "$scratch/out"
report $? "info still shows such a trace's recorded settings"

run 3 "$ccasim" replay "$pinned_trace" && grep -qxF "  note: $pinned" "$scratch/out" &&
	run 3 "$ccasim" replay --json "$pinned_trace" &&
	"$python" -c 'import json,sys; assert json.load(open(sys.argv[1]))["notes"] == [sys.argv[2]]' \
		"$scratch/out" "$pinned"
report $? "a recorded noted key is noted in the recorded replay, text and --json"

tap_done
