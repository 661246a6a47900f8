#!/bin/sh
# test-lab-free.sh - a lab's `free last [N]` and `free all`, and how it
# reads sizes (TAP; doc/lab.md).  Each row is a lab that frees by `last`
# or `all` and the same program written with explicit tensor numbers: the
# two export the same snapshot, but for the lab line each entry names (free last N frees the N
# highest live numbers, highest first; free all every live one, lowest
# first).  Sizes are decimal: hex and exponents are refused with one line
# naming the file and line.  Needs $CCASIM and $top_srcdir (set by make
# check).
set -u

srcdir=${top_srcdir:-.}
. "$srcdir/tests/tap.sh"

# lab FILE BODY: writes a lab whose lines are BODY's ';'-separated parts.
lab() {
	{
		echo '# ccasim lab'
		echo "$2" | tr ';' '\n'
	} >"$1"
}

# same A B: the two snapshots are equal but for each entry's user_metadata
# (the lab line that made it, which differs between the two writings).
same() {
	"$python" - "$1" "$2" <<'PY'
import pickle, sys
def strip(x):
    if isinstance(x, dict):
        return {k: strip(v) for k, v in x.items() if k != "user_metadata"}
    if isinstance(x, list):
        return [strip(v) for v in x]
    return x
a, b = (strip(pickle.load(open(f, "rb"))) for f in sys.argv[1:3])
sys.exit(a != b)
PY
}

while IFS='|' read -r by_rule by_number; do
	[ -z "$by_rule" ] && continue
	lab "$scratch/a.lab" "$by_rule"
	lab "$scratch/b.lab" "$by_number"
	run 0 "$ccasim" export "$scratch/a.lab" -o "$scratch/a.pickle" &&
		run 0 "$ccasim" export "$scratch/b.lab" -o "$scratch/b.pickle" &&
		same "$scratch/a.pickle" "$scratch/b.pickle"
	report $? "'$by_rule' is '$by_number'"
done <<'EOF'
alloc 1M x3;free last|alloc 1M x3;free 3
alloc 1M x5;free last 2|alloc 1M x5;free 5;free 4
alloc 1M x5;free 5;free last|alloc 1M x5;free 5;free 4
alloc 1M x6;free 2,4;free last 3|alloc 1M x6;free 2,4;free 6;free 5;free 3
alloc 1M x4;free last 9|alloc 1M x4;free 4;free 3;free 2;free 1
alloc 1M x4;free all;free last|alloc 1M x4;free 1-4
alloc 1M;free last;alloc 2M;free last;alloc 3M;free last|alloc 1M;free 1;alloc 2M;free 2;alloc 3M;free 3
alloc 30M x4;free 1,3;free all;alloc 30M x2;free last|alloc 30M x4;free 1,3;free 2,4;alloc 30M x2;free 6
alloc 1M x3;free 3;alloc 2M;free last 2|alloc 1M x3;free 3;alloc 2M;free 4;free 2
alloc 1M x3;free last;free all;free last;free all|alloc 1M x3;free 3;free 1,2
stream 1;alloc 1M x2;stream 0;alloc 1M x2;free last 3|stream 1;alloc 1M x2;stream 0;alloc 1M x2;free 4;free 3;free 2
EOF

# Decimal sizes, with the units of doc/lab.md, are read as before.
lab "$scratch/sizes.lab" 'alloc 1.5M;alloc 1048576B;alloc 2KB;alloc 0.5K;alloc 16MiB'
run 0 "$ccasim" replay --json "$scratch/sizes.lab" &&
	grep -q '"requested_bytes.all.allocated": 19401168,' "$scratch/out"
report $? "decimal sizes and their units (1.5M, 1048576B, 2KB, 0.5K, 16MiB)"

# Hex and exponents are refused, one line naming the file and line.
status=0
for size in 0x100000 0X10M 1e6 1E3K 2.5e+3 1e-1G; do
	lab "$scratch/bad.lab" "alloc 1M;alloc $size"
	run 1 "$ccasim" replay "$scratch/bad.lab" && one_line &&
		grep -q "bad.lab: line 3: size '$size': write it in decimal digits" "$scratch/err" || {
		status=1
		echo "# $size: $(cat "$scratch/err")"
	}
done
report $status "hex and exponent sizes (0x100000, 0X10M, 1e6, 1E3K, 2.5e+3, 1e-1G) are refused"

tap_done
