#!/bin/sh
# test-replay.sh - end-to-end tests of `ccasim replay` (TAP): its
# options, its exit statuses (0 ok, 1 bad input or failed --check, 2 usage
# errors, 3 a run that ran out of memory), one-line errors, the JSON it
# prints, and the mid-run notice.
# Needs $CCASIM and $top_srcdir (set by make check).
set -u

srcdir=${top_srcdir:-.}
. "$srcdir/tests/tap.sh"

# check DESCRIPTION EXPECTED-STATUS CMD...: runs CMD (see run) and reports
# whether it exited EXPECTED-STATUS.
check() {
	desc=$1
	shift
	run "$@"
	report $? "$desc"
}

# expect DESCRIPTION COMMAND...: a shell condition on the last outputs.
expect() {
	desc=$1
	shift
	"$@"
	report $? "$desc"
}

check "replay --help" 0 "$ccasim" replay --help
expect "--help lists --address-sensitivity" grep -q -- --address-sensitivity "$scratch/out"
check "recorded replay with --check passes" 0 "$ccasim" replay --check "$traces/seedfrag.default.pickle.xz"
expect "the check line says passed" grep -q "^check: passed" "$scratch/out"
check "--json prints one JSON object" 0 "$ccasim" replay --json "$traces/dyninfer.default.pickle.xz"
expect "the JSON parses and has the 122 memory_stats keys" "$python" -c '
import json, sys
r = json.load(open(sys.argv[1]))
assert len(r["memory_stats"]) == 122, len(r["memory_stats"])
assert r["oom"] is None and r["check"] is None
' "$scratch/out"
check "an unknown settings key is a usage error" 2 "$ccasim" replay --config foo_bar:1 "$traces/seedfrag.default.pickle.xz"
expect "... with PyTorch's message on one line" grep -q "Unrecognized key 'foo_bar' in CUDA allocator config." "$scratch/err"
expect "... and only one line" one_line
check "max_split_size_mb below 20 is a usage error" 2 "$ccasim" replay --config max_split_size_mb:10 "$traces/seedfrag.default.pickle.xz"
check "a missing trace is bad input" 1 "$ccasim" replay "$scratch/no-such.pickle"
expect "... named in a one-line error" one_line
printf 'not a pickle' >"$scratch/junk"
check "a file that is no snapshot is bad input" 1 "$ccasim" replay "$scratch/junk"
expect "... with a one-line error" one_line
check "a device the trace lacks is a usage error" 2 "$ccasim" replay --device 3 "$traces/seedfrag.default.pickle.xz"
check "a memory fraction above 1 is a usage error" 2 "$ccasim" replay --memory-fraction 1.5 "$traces/seedfrag.default.pickle.xz"
check "a bad size suffix is a usage error" 2 "$ccasim" replay --device-memory 12XB "$traces/seedfrag.default.pickle.xz"
check "an unsupported PyTorch version is a usage error" 2 "$ccasim" replay --pytorch-version 3.0 "$traces/seedfrag.default.pickle.xz"
check "an unknown address model is a usage error" 2 "$ccasim" replay --address-model sideways "$traces/seedfrag.default.pickle.xz"
check "--check with --addresses-from is a usage error" 2 "$ccasim" replay --check --addresses-from "$traces/seedfrag.ms128.pickle.xz" "$traces/seedfrag.default.pickle.xz"
check "a what-if on a small device stops at its OOM (exit 3)" 3 "$ccasim" replay --json --device-memory 256MiB "$traces/seedfrag.default.pickle.xz"
expect "... and the JSON names the event and sizes" "$python" -c '
import json, sys
r = json.load(open(sys.argv[1]))
assert r["oom"]["stopped"] is True and r["oom"]["size"] > 0, r["oom"]
assert r["events"] < 1870
' "$scratch/out"
check "--keep-going replays every event (exit 3: it ran out of memory)" 3 "$ccasim" replay --json --keep-going --device-memory 256MiB "$traces/seedfrag.default.pickle.xz"
expect "... all 1870 of them" "$python" -c '
import json, sys
assert json.load(open(sys.argv[1]))["events"] == 1870' "$scratch/out"
check "the capped run replays with its recorded OOM" 0 "$ccasim" replay --check --memory-fraction 0.006181551707468579 "$traces/dyninfer.cap.pickle.xz"
check "--address-sensitivity compares three models" 0 "$ccasim" replay --address-sensitivity --config max_split_size_mb:128 "$traces/bert.default.pickle.xz"
expect "... naming them" grep -q "driver.*ascending.*descending" "$scratch/out"
check "--addresses-from another run" 0 "$ccasim" replay --json --config max_split_size_mb:128 --addresses-from "$traces/whatif/replay.seedfrag.ms128.pickle.xz" "$traces/seedfrag.default.pickle.xz"
expect "... gives the real run's peak reserved" "$python" -c '
import json, sys
r = json.load(open(sys.argv[1]))["memory_stats"]
t = json.load(open(sys.argv[2]))["memory_stats"]
assert r["reserved_bytes.all.peak"] == t["reserved_bytes.all.peak"]' "$scratch/out" "$traces/whatif/replay.seedfrag.ms128.json"
"$ccasim" convert "$traces/multistream.default.pickle.xz" -o "$scratch/ms.msgpack" 2>"$scratch/err"
check "a msgpack trace replays like its pickle" 0 "$ccasim" replay --check "$scratch/ms.msgpack"
check "older rules on request" 0 "$ccasim" replay --check --pytorch-version 2.5 "$traces/resnet152.ms512.pickle.xz"
expect "... and said so" grep -q "PyTorch 2.5 rules" "$scratch/out"

# --- record_stream traces on small devices ------------------------------------
# A what-if on a small device synchronises in its failure cascades, so the
# trace's later free_completed entries find blocks the model completed
# already: they must pass without a GLib message (make check runs with
# G_DEBUG=fatal-warnings, which aborts on one) and the exit status must
# be 0 (an OOM is a result, not an error).
patterns=$srcdir/traces/patterns-2.11

# stats_are FILE KEY=VALUE...: the replay JSON in FILE has these figures.
stats_are() {
	file=$1
	shift
	"$python" -c '
import json, sys
r = json.load(open(sys.argv[1]))
for kv in sys.argv[2:]:
    k, v = kv.split("=")
    assert str(r["memory_stats"][k]) == v, (k, r["memory_stats"][k], v)
' "$file" "$@"
}

check "multistream on a 150 MiB device" 0 "$ccasim" replay --json --device-memory 150MiB "$traces/multistream.default.pickle.xz"
expect "... fits: peak reserved 56 MiB, no OOM, nothing on stderr" eval '[ ! -s "$scratch/err" ] && stats_are "$scratch/out" num_ooms=0 reserved_bytes.all.peak=58720256'
check "multistream on a 40 MiB device" 3 "$ccasim" replay --device-memory 40MiB "$traces/multistream.default.pickle.xz"
expect "... stops at its OOM and says so once, nothing on stderr" eval '[ ! -s "$scratch/err" ] && [ "$(grep -c "^Out of memory at event 29 " "$scratch/out")" -eq 1 ]'
check "multistream.ms512 on a 60 MiB device (syncs before later completions)" 3 "$ccasim" replay --json --device-memory 60MiB "$traces/multistream.ms512.pickle.xz"
expect "... stops at its OOM, nothing on stderr" eval '[ ! -s "$scratch/err" ] && stats_are "$scratch/out" num_ooms=1'
check "rscap.cap on a 150 MiB device" 0 "$ccasim" replay --json --device-memory 150MiB "$patterns/rscap.cap.pickle.xz"
expect "... its recorded OOM request fits: no OOM, nothing on stderr" eval '[ ! -s "$scratch/err" ] && stats_are "$scratch/out" num_ooms=0'
check "rscap.cap under its recorded cap with --check" 0 "$ccasim" replay --check --memory-fraction 0.0003688698430906856 "$patterns/rscap.cap.pickle.xz"
expect "... passes, nothing on stderr" eval '[ ! -s "$scratch/err" ] && grep -q "^check: passed" "$scratch/out"'
for t in "$traces/multistream.default.pickle.xz" "$patterns/rscap.cap.pickle.xz"; do
	check "fit of $(basename "$t" .pickle.xz)" 0 "$ccasim" fit --no-progress "$t"
	expect "... prints nothing on stderr" test ! -s "$scratch/err"
done

tap_done
