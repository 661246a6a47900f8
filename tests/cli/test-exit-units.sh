#!/bin/sh
# test-exit-units.sh - the exit status of a run out of memory, sizes in one
# set of units everywhere (TAP).
# 1. replay exits 3 when the replayed run runs out of memory (stopped by it
#    or past it with --keep-going), 0 when it fits; --oom-exit-status N asks
#    for N (0: success); --check exits by its check alone; the commands
#    that describe an OOM (explain, peak) exit 0.
# 2. Sizes: 12G and 12GiB are 12 x 2^30 bytes, 12GB 12 x 10^9, 1.5G a whole
#    number of bytes, in --device-memory as in a lab; a bare number below
#    1 MiB is refused as a device size, one line, exit 2.
# COLUMNS: tests/cli/test-columns.sh.
# Needs $CCASIM and $top_srcdir (set by make check).
set -u

srcdir=${top_srcdir:-.}
. "$srcdir/tests/tap.sh"

if [ "$python" = false ]; then
	skip "exit status, units" "no python3 to read the JSON"
	tap_done
fi
fits=$traces/seedfrag.default.pickle.xz
# multistream.cap ran out of memory under its cap; its snapshot keeps the
# OOM, which the replay reproduces
oom=$traces/multistream.cap.pickle.xz
dyncap=$traces/dyninfer.cap.pickle.xz
dynfraction=$("$python" -c 'import json, sys
d = json.load(open(sys.argv[1]))
print(min(1, d["cap_bytes"] / d.get("total_memory", 150109880320)))' "$traces/dyninfer.cap.json")

# --- 1. exit status: STATUS ARGS... (ARGS end with the trace)
while IFS='|' read -r status args; do
	[ -n "$status" ] || continue
	args=$(echo "$args" | sed "s|FITS|$fits|; s|OOM|$oom|; s|DYNCAP|$dyncap|; s|F_DYN|$dynfraction|")
	# shellcheck disable=SC2086 # ARGS are words
	run "$status" "$ccasim" $args && [ ! -s "$scratch/err" ]
	report $? "exit $status: ccasim $(echo "$args" | sed "s|$srcdir/||g")"
done <<'CASES'
0|replay FITS
3|replay OOM
3|replay --json OOM
0|replay --oom-exit-status 0 OOM
7|replay --oom-exit-status 7 OOM
0|replay --oom-exit-status 7 FITS
3|replay --device-memory 256M FITS
3|replay --device-memory 256M --keep-going FITS
0|replay --device-memory 256M --oom-exit-status 0 FITS
3|replay --memory-fraction F_DYN DYNCAP
0|replay --check --memory-fraction F_DYN DYNCAP
0|explain OOM
0|peak OOM
CASES
run 3 "$ccasim" replay "$oom" && grep -q '^The recorded OOM at event 29' "$scratch/out"
report $? "the report of a run out of memory says where it ran out"
run 3 "$ccasim" replay --json "$oom" &&
	"$python" -c 'import json, sys
d = json.load(open(sys.argv[1]))
assert d["recorded_ooms"] == 1 and d["memory_stats"]["num_ooms"] == 1, d["memory_stats"]["num_ooms"]' "$scratch/out"
report $? "... and --json counts it: num_ooms 1"
run 3 "$ccasim" replay --device-memory 40MiB "$traces/multistream.default.pickle.xz" &&
	grep -q '^Out of memory at event 29 ' "$scratch/out"
report $? "a what-if that stops at its OOM exits 3 too"
for bad in -1 126 x 3.5; do
	run 2 "$ccasim" replay --oom-exit-status "$bad" "$oom" && one_line &&
		grep -q -- '--oom-exit-status' "$scratch/err"
	report $? "--oom-exit-status $bad is a usage error"
done

# --- 2. sizes: the cap is --memory-fraction 0.5 of --device-memory, read
# back from allowed_memory_maximum
while read -r size bytes; do
	[ -n "$size" ] || continue
	run 0 "$ccasim" replay --json --oom-exit-status 0 --memory-fraction 0.5 \
		--device-memory "$size" "$fits" &&
		"$python" -c 'import json, sys
d = json.load(open(sys.argv[1]))
assert d["allowed_memory_maximum"] == int(eval(sys.argv[2])) // 2, (d["allowed_memory_maximum"], sys.argv[2])' \
			"$scratch/out" "$bytes"
	report $? "--device-memory $size is $bytes bytes"
done <<'CASES'
12G 12*2**30
12g 12*2**30
12GiB 12*2**30
12884901888 12*2**30
12GB 12*10**9
1.5G 3*2**29
1.5GiB 3*2**29
16384M 16*2**30
1T 2**40
1048576 2**20
CASES
while IFS='|' read -r cmd size why; do
	[ -n "$cmd" ] || continue
	run 2 "$ccasim" $cmd --device-memory "$size" "$fits" && one_line &&
		grep -qF -- "--device-memory: $why" "$scratch/err"
	report $? "$cmd --device-memory $size is refused: $why"
done <<'CASES'
replay|12|'12' is 12 bytes, no device's memory: give a unit, e.g. 12G (GiB), 12GiB or 12GB
sweep|80|'80' is 80 bytes, no device's memory
diff -c expandable_segments:True|1048575|'1048575' is 1048575 bytes
replay|0|must be more than 0
replay|1.5|size '1.5' is not a whole number of bytes
replay|0x100000|size '0x100000': write it in decimal digits
replay|12XB|size '12XB': unknown unit
CASES
run 3 "$ccasim" replay --device-memory 512K "$fits"
report $? "a size with its unit below 1 MiB is taken (512K: the run runs out of memory)"

# the lab reads sizes as the command line does: 16M, 16MiB, 16777216
for size in 16M 16MiB 16777216 0.015625G; do
	printf '# ccasim lab\nalloc %s\n' "$size" >"$scratch/a.lab"
	run 0 "$ccasim" replay --json "$scratch/a.lab" &&
		"$python" -c 'import json, sys
assert json.load(open(sys.argv[1]))["memory_stats"]["requested_bytes.all.peak"] == 16 << 20' "$scratch/out"
	report $? "lab: alloc $size is 16 MiB"
done

tap_done
