#!/bin/sh
# test-utf8.sh - strings that are not UTF-8 (TAP; doc/hardening.md).  Every
# reader takes a str exactly when Python's pickle.loads() would: invalid
# UTF-8 (a stray byte, an overlong form, a truncated sequence, a code point
# past U+10FFFF) is refused with one line naming the file and offset; the
# UTF-8 form of a lone surrogate, which pickle writes and reads
# ("surrogatepass"), is taken.  So `export` never writes a pickle Python
# cannot load.  Needs $CCASIM and $top_srcdir (set by make check).
set -u

srcdir=${top_srcdir:-.}
. "$srcdir/tests/tap.sh"
sample=$traces/samples/snap_default_2.11.pickle

if [ "$python" = false ]; then
	skip "strings that are not UTF-8" "no python3"
	tap_done
fi

# base.pickle: the sample with one frame's filename long (BINUNICODE) and
# another's short (SHORT_BINUNICODE), each ending in the marker XYZ that
# the cases below overwrite in place; sur.pickle: a lone surrogate.
"$python" - "$sample" "$scratch" <<'EOF'
import pickle, sys
snap = pickle.load(open(sys.argv[1], "rb"))
frames = [f for t in snap["device_traces"] for e in t for f in e.get("frames", [])]
frames[0]["filename"] = "/long/" + "a" * 300 + "XYZ.py"
frames[-1]["name"] = "fXYZ"
pickle.dump(snap, open(sys.argv[2] + "/base.pickle", "wb"), protocol=4)
frames[0]["filename"] = "/sur/\ud800.py"
pickle.dump(snap, open(sys.argv[2] + "/sur.pickle", "wb"), protocol=4)
EOF

# patch IN OUT OCCURRENCE HEX: OUT is IN with occurrence OCCURRENCE (0 or
# 1) of XYZ overwritten by the 3 bytes HEX.
patch() {
	"$python" - "$@" <<'EOF'
import sys
src, dst, which, new = sys.argv[1], sys.argv[2], int(sys.argv[3]), bytes.fromhex(sys.argv[4])
d = open(src, "rb").read()
at = d.find(b"XYZ")
if which:
    at = d.find(b"XYZ", at + 1)
assert at >= 0 and len(new) == 3
open(dst, "wb").write(d[:at] + new + d[at + 3:])
EOF
}

# python_loads FILE: Python's pickle loads FILE.
python_loads() {
	"$python" -c 'import pickle, sys; pickle.load(open(sys.argv[1], "rb"))' "$1" 2>/dev/null
}

run 0 "$ccasim" convert "$scratch/base.pickle" -o "$scratch/base.msgpack"
report $? "the base snapshot reads and converts"

# Each case: three bytes in place of XYZ, and whether Python's pickle
# takes them.  The reader must agree, in the long and the short string,
# in the pickle and in the msgpack trace converted from the base.
while read -r hex verdict what; do
	[ -z "$hex" ] && continue
	for which in 0 1; do
		patch "$scratch/base.pickle" "$scratch/p.pickle" $which "$hex"
		if python_loads "$scratch/p.pickle"; then py=takes; else py=refuses; fi
		[ "$py" = "$verdict" ] || echo "# Python $py $what, expected $verdict"
		if [ "$verdict" = takes ]; then
			run 0 "$ccasim" info "$scratch/p.pickle"
		else
			run 1 "$ccasim" info "$scratch/p.pickle" && one_line &&
				grep -q 'p.pickle: offset [0-9]*: .*not UTF-8' "$scratch/err"
		fi
		report $? "pickle, $([ $which = 0 ] && echo long || echo short) string: $what ($hex): ccasim $verdict it as Python does"
		patch "$scratch/base.msgpack" "$scratch/m.msgpack" $which "$hex"
		if [ "$verdict" = takes ]; then
			run 0 "$ccasim" info "$scratch/m.msgpack"
		else
			run 1 "$ccasim" info "$scratch/m.msgpack" && one_line &&
				grep -q 'm.msgpack: offset [0-9]*.*not UTF-8' "$scratch/err"
		fi
		report $? "msgpack, $([ $which = 0 ] && echo long || echo short) string: $what ($hex): $verdict"
	done
done <<'EOF'
585959 takes ASCII
c3a959 takes a two-byte character
ff5959 refuses a byte that starts nothing
80595a refuses a stray continuation byte
c08059 refuses an overlong NUL
e08080 refuses an overlong three-byte form
c35959 refuses a truncated sequence
f49080 refuses a code point past U+10FFFF
eda080 takes a lone surrogate (surrogatepass)
EOF

# A lone surrogate: read, converted, exported; the export loads in Python.
run 0 "$ccasim" convert "$scratch/sur.pickle" -o "$scratch/sur.msgpack" &&
	run 0 "$ccasim" export "$scratch/sur.msgpack" -o "$scratch/sur-export.pickle" &&
	"$python" -c '
import pickle, sys
s = pickle.load(open(sys.argv[1], "rb"))
names = {f["filename"] for t in s["device_traces"] for e in t for f in e.get("frames", [])}
assert "/sur/\ud800.py" in names, names' "$scratch/sur-export.pickle"
report $? "a lone surrogate survives convert and export, and the export loads in Python"

# export's output of the base and of a lab loads in Python.
run 0 "$ccasim" export "$scratch/base.msgpack" -o "$scratch/e.pickle" && python_loads "$scratch/e.pickle"
report $? "export of a msgpack trace loads in Python's pickle"
run 0 "$ccasim" export "$srcdir/traces/lab/batch.lab" -o "$scratch/lab.pickle" &&
	python_loads "$scratch/lab.pickle"
report $? "export of a lab loads in Python's pickle"

tap_done
