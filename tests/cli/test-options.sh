#!/bin/sh
# test-options.sh - every numeric option of every command is checked (TAP).
# A bad value is a usage error: exit 2 with one line on stderr that names
# the option, and no GLib CRITICAL or WARNING.  A snapshot with segments
# but no trace entries is bad input (exit 1, said in one line), not a
# usage error; `info` still reads it.  Needs $CCASIM and $top_srcdir (set
# by make check).
set -u

srcdir=${top_srcdir:-.}
. "$srcdir/tests/tap.sh"

trace=$traces/samples/snap_default_2.11.pickle
segments_only=$srcdir/tests/data/segments-only.pickle
out=$scratch/plot.svg

# clean_err: stderr has no GLib CRITICAL or WARNING.
clean_err() {
	! grep -q 'CRITICAL\|WARNING' "$scratch/err"
}

# refused STATUS FRAGMENT CMD...: CMD exits STATUS with one clean line on
# stderr containing FRAGMENT.
refused() {
	want=$1
	fragment=$2
	shift 2
	run "$want" "$@" && one_line && clean_err && grep -q -e "$fragment" "$scratch/err" || {
		echo "# expected '$fragment' in: $(head -c 300 "$scratch/err")"
		return 1
	}
}

# The table: command (with its fixed arguments), option, value, expected
# exit status, expected fragment of the message.  "-" stands for no fixed
# arguments; "-o NAME" writes under $scratch.  Every row runs as `ccasim COMMAND ARGS OPTION VALUE TRACE`.
while IFS='|' read -r cmd args option value want fragment; do
	[ -z "$cmd" ] && continue
	case $cmd in '#'*) continue ;; esac
	[ "$args" = - ] && args=
	args=$(echo "$args" | sed "s|-o |-o $scratch/|")
	# shellcheck disable=SC2086 # ARGS are words
	refused "$want" "$fragment" "$ccasim" $cmd $args "$option" "$value" "$trace"
	report $? "$cmd $option $value: exit $want naming $option"
done <<'EOF'
replay|-|--memory-fraction|nan|2|--memory-fraction: .*(0, 1]
replay|-|--memory-fraction|inf|2|--memory-fraction: .*(0, 1]
replay|-|--memory-fraction|-inf|2|--memory-fraction: .*(0, 1]
replay|-|--memory-fraction|0|2|--memory-fraction: .*(0, 1]
replay|-|--memory-fraction|-0.5|2|--memory-fraction: .*(0, 1]
replay|-|--memory-fraction|1.5|2|--memory-fraction: .*(0, 1]
replay|-|--memory-fraction|0.5x|2|--memory-fraction: .*'0.5x'
replay|-|--memory-fraction||2|--memory-fraction: .*''
replay|-|--device|-2|2|--device: must be 0 or more, got -2
replay|-|--device|-1|2|--device: must be 0 or more, got -1
replay|-|--device|1|2|no device 1
replay|-|--device|x|2|--device
replay|-|--device-memory|0|2|--device-memory: must be more than 0
replay|-|--device-memory|-5|2|--device-memory
replay|-|--device-memory|lots|2|--device-memory
replay|-|--pytorch-version|banana|2|--pytorch-version
replay|-|--pytorch-version|1.13|2|--pytorch-version
explain|-|--memory-fraction|nan|2|--memory-fraction
explain|-|--device|-2|2|--device: must be 0 or more
explain|-|--limit|-1|2|--limit: must be 0 or more, got -1
explain|-|--top|0|2|--top: must be 1 or more, got 0
step|-|--memory-fraction|0|2|--memory-fraction
step|-|--device|-2|2|--device: must be 0 or more
step|-|--at|-1|2|--at: must be 0 or more, got -1
step|-|--at|99999999|2|--at 99999999 is past the trace's end
step|-|--max-segments|-1|2|--max-segments: must be 0 or more
step|-|--width|7|2|--width: must be 8 to 10000, got 7
plot|-o plot.svg|--memory-fraction|inf|2|--memory-fraction
plot|-o plot.svg|--device|-2|2|--device: must be 0 or more
plot|-o plot.svg|--width|100|2|--width: must be 480 to 20000, got 100
plot|-o plot.svg|--height|100000|2|--height: must be 320 to 20000
plot|-o plot.svg|--max-rows|-1|2|--max-rows: must be 0 or more
plot|-o plot.svg --segments|--at|-1|2|--at: must be 0 or more, got -1
plot|-o plot.svg|--at|3|2|--at needs --segments
export|-o e.pickle|--memory-fraction|nan|2|--memory-fraction
export|-o e.pickle|--device|-2|2|--device: must be 0 or more
sweep|-|--memory-fraction|nan|2|--memory-fraction: .*(0, 1]
sweep|-|--memory-fraction|0|2|--memory-fraction: .*(0, 1]
sweep|-|--device|-1|2|--device: must be 0 or more, got -1
sweep|-|--jobs|-1|2|--jobs: must be 0 or more, got -1
sweep|-|--device-memory|0|2|--device-memory: must be more than 0
fit|-|--device|-1|2|--device: must be 0 or more, got -1
fit|-|--jobs|-2|2|--jobs: must be 0 or more, got -2
fit|-|--pytorch-version|x|2|--pytorch-version
diff|--config max_split_size_mb:128|--memory-fraction|nan|2|--memory-fraction: .*(0, 1]
diff|--config max_split_size_mb:128|--device|-1|2|--device: must be 0 or more
diff|--config max_split_size_mb:128|--top|-1|2|--top: must be 0 or more
gpu replay|-|--memory-fraction|nan|2|--memory-fraction: .*(0, 1]
gpu replay|-|--device|-1|2|--device: must be 0 or more
gpu replay|-|--gpu|-1|2|--gpu: must be 0 or more
# no value stands for "not given", and none overflows into range
explain|-|--event|-1|2|--event: must be 0 or more, got -1
explain|-|--event|-9223372036854775808|2|--event: must be 0 or more
explain|-|--event|9223372036854775808|2|--event: expected a whole number
explain|-|--event|99999999999999999999|2|--event: expected a whole number
explain|-|--event|3x|2|--event: expected a whole number, got '3x'
explain|-|--event||2|--event: expected a whole number
explain|-|--limit|99999999999|2|--limit
explain|-|--top|-2147483648|2|--top: must be 1 or more
step|-|--at|-9223372036854775808|2|--at: must be 0 or more
step|-|--at|18446744073709551615|2|--at: expected a whole number
plot|-o plot.svg --segments|--at|-9223372036854775808|2|--at: must be 0 or more
plot|-o plot.svg --segments|--at|1e3|2|--at: expected a whole number
replay|-|--device|-2147483648|2|--device: must be 0 or more, got -2147483648
replay|-|--device|2147483648|2|--device: must be 0 to 2147483647
replay|-|--device|99999999999999999999|2|--device: expected a whole number
sweep|-|--jobs|-2147483648|2|--jobs: must be 0 or more
sweep|--gpu H200|--context|1TiB|2|--context: must be under 1 TiB
sweep|--gpu H200|--context|-1|2|--context
fit|-|--context|18446744073709551615|2|--context: must be under 1 TiB
fit|-|--context|18446744073709551616|2|--context: .*too large
fit|-|--context|16EiB|2|--context
fit|-|--context|-1|2|--context
diff|--config max_split_size_mb:128|--top|99999999999|2|--top
EOF

# The plot and export rows wrote nothing: they failed before any output.
[ ! -e "$out" ] && [ ! -e "$scratch/e.pickle" ]
report $? "refused options leave no output file"

# A fraction in (0, 1] is taken, 1 included, and caps the replay.  The
# sample holds a recorded OOM (a 10 TiB request): replay exits 3 on it.
run 3 "$ccasim" replay --memory-fraction 1 "$trace" && grep -q 'recorded settings' "$scratch/out"
report $? "replay --memory-fraction 1 is accepted"
run 3 "$ccasim" replay --memory-fraction 1e-6 --keep-going "$trace" &&
	grep -q 'cap ' "$scratch/out"
report $? "replay --memory-fraction 1e-6 caps the replay"
run 3 "$ccasim" replay --device 0 "$trace"
report $? "replay --device 0 is accepted"

# A snapshot with segments but no trace entries: info reads it and says
# there is no history; the commands that replay say there is nothing to
# replay and how to record one, as bad input.  The old schema (a list of
# segments) has no device_traces; a snapshot PyTorch took without
# _record_memory_history() has an empty list per device.
no_history=$scratch/no-history.pickle
"$python" -c '
import lzma, pickle, sys
s = pickle.load(lzma.open(sys.argv[1]))
s["device_traces"] = [[] for t in s["device_traces"]]
pickle.dump(s, open(sys.argv[2], "wb"))
' "$traces/seedfrag.default.pickle.xz" "$no_history"
for snap in "$segments_only" "$no_history"; do
	name=$(basename "$snap")
	run 0 "$ccasim" info "$snap" && grep -q '^segments: ' "$scratch/out" &&
		grep -q '^history: none (taken without torch.cuda.memory._record_memory_history() or ccasim-record)' "$scratch/out"
	report $? "info reads $name and says it has no history"
	for cmd in replay explain step "plot -o $out" "export -o $scratch/e.pickle" sweep fit \
		"diff --config max_split_size_mb:128"; do
		# shellcheck disable=SC2086 # CMD is words
		refused 1 'no trace entries (device_traces [a-z ]*): it was taken without torch.cuda.memory._record_memory_history(), so there is nothing to replay; record the program with ccasim-record' \
			"$ccasim" $cmd "$snap"
		report $? "${cmd%% *} of $name exits 1 saying it has no history and how to record one"
	done
done
run 0 "$ccasim" info --json "$no_history" && "$python" -c '
import json, sys
assert json.load(open(sys.argv[1]))["history"] is False' "$scratch/out"
report $? "info --json of a snapshot without history says history: false"

tap_done
