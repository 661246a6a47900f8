#!/bin/sh
# test-io.sh - hostile inputs and outputs end to end (TAP; doc/hardening.md).
# Outputs: -o follows a symbolic link, writes a device or FIFO in place,
# refuses a directory or an empty name, reports every write error, and
# leaves no temporary file behind when a signal ends the run.  Inputs:
# decompression bombs, lying size fields, endless devices and pipes and
# text pickles fail fast, with one line and exit 1.  Every fixture is built
# here, small.  Needs $CCASIM and $top_srcdir (set by make check).
set -u

srcdir=${top_srcdir:-.}
. "$srcdir/tests/tap.sh"
gen=${top_builddir:-.}/bench/gen-trace
sample=$traces/samples/snap_default_2.11.pickle

# no_temp DIR: no temporary output (NAME.XXXXXX) is left in DIR.
no_temp() {
	! ls "$1" | grep -q '\.[A-Za-z0-9]\{6\}$'
}

# ---------------------------------------------------------------- outputs

# A symbolic link is followed: its target is written, the link stays.
ref=$scratch/ref.msgpack
run 0 "$ccasim" convert "$sample" -o "$ref"
report $? "convert writes a regular file"
: >"$scratch/target.msgpack"
ln -s target.msgpack "$scratch/link.msgpack"
run 0 "$ccasim" convert "$sample" -o "$scratch/link.msgpack" &&
	[ -L "$scratch/link.msgpack" ] && cmp -s "$ref" "$scratch/target.msgpack" &&
	no_temp "$scratch"
report $? "-o through a symbolic link writes its target and keeps the link"

# A character device is written in place, never replaced (through a link,
# so that an old binary cannot replace the device itself).
ln -s /dev/null "$scratch/null.msgpack"
run 0 "$ccasim" convert "$sample" -o "$scratch/null.msgpack" && [ -L "$scratch/null.msgpack" ] &&
	[ -c /dev/null ]
report $? "-o a link to /dev/null writes the device in place"

ln -s /dev/full "$scratch/full.msgpack"
run 1 "$ccasim" convert "$sample" -o "$scratch/full.msgpack" && one_line &&
	grep -q 'No space left on device' "$scratch/err" && [ -L "$scratch/full.msgpack" ]
report $? "convert -o /dev/full fails: No space left on device"

ln -s /dev/full "$scratch/full.json"
run 1 "$ccasim" export --format chrome "$sample" -o "$scratch/full.json" && one_line &&
	grep -q 'No space left on device' "$scratch/err"
report $? "export -o /dev/full fails: No space left on device"

ln -s /dev/full "$scratch/full.svg"
run 1 "$ccasim" plot "$sample" -o "$scratch/full.svg" && one_line &&
	grep -q 'No space left on device' "$scratch/err"
report $? "plot -o /dev/full fails: No space left on device"

# A FIFO is streamed into, not replaced.
if mkfifo "$scratch/fifo" 2>/dev/null; then
	timeout 20 cat "$scratch/fifo" >"$scratch/from-fifo" &
	reader=$!
	run 0 timeout 20 "$ccasim" convert "$sample" -o "$scratch/fifo"
	st=$?
	wait $reader && [ $st -eq 0 ] && [ -p "$scratch/fifo" ] && cmp -s "$ref" "$scratch/from-fifo"
	report $? "-o a FIFO streams into it"
else
	skip "-o a FIFO streams into it" "no mkfifo"
fi

run 0 "$ccasim" convert "$sample" -o - && cmp -s "$ref" "$scratch/out"
report $? "-o - writes standard output"

mkdir "$scratch/dir"
run 1 "$ccasim" convert "$sample" -o "$scratch/dir" && one_line &&
	grep -q 'is a directory' "$scratch/err" && [ -d "$scratch/dir" ] && no_temp "$scratch"
report $? "-o a directory is refused"

run 1 "$ccasim" export "$sample" -o "" && one_line && grep -q 'empty output file name' "$scratch/err"
report $? "export -o '' says the name is empty"

# Signals: the temporary output goes with the process.  The writer is
# stopped as soon as its temporary file shows, then signalled.
big=$scratch/big.msgpack
if [ -x "$gen" ] && "$gen" -n 2000000 -o "$big" >/dev/null 2>&1; then
	dflt=
	env --default-signal=INT true 2>/dev/null && dflt="env --default-signal=INT"
	for sig in TERM INT HUP; do
		if [ $sig = INT ] && [ -z "$dflt" ]; then
			skip "SIGINT during export removes the temporary file" "no env --default-signal"
			continue
		fi
		mkdir "$scratch/sig$sig"
		# a background job starts with SIGINT ignored: undo that
		$dflt "$ccasim" export --format chrome "$big" -o "$scratch/sig$sig/out.json" \
			>/dev/null 2>&1 &
		pid=$!
		i=0
		while [ $i -lt 2000 ] && ! ls "$scratch/sig$sig" | grep -q 'out\.json\.'; do
			i=$((i + 1))
			sleep 0.005
		done
		kill -STOP $pid 2>/dev/null
		seen=0
		ls "$scratch/sig$sig" | grep -q 'out\.json\.' && seen=1
		kill -$sig $pid 2>/dev/null
		kill -CONT $pid 2>/dev/null
		wait $pid 2>/dev/null
		st=$?
		if [ $seen -eq 0 ]; then
			skip "SIG$sig during export removes the temporary file" "missed the temporary file"
		else
			[ $st -gt 128 ] && [ -z "$(ls "$scratch/sig$sig")" ]
			report $? "SIG$sig during export removes the temporary file (exit $st)"
		fi
	done
else
	for sig in TERM INT HUP; do
		skip "SIG$sig during export removes the temporary file" "no gen-trace"
	done
fi

# ----------------------------------------------------------------- inputs

# fixture NAME: writes $scratch/NAME with Python (see the cases below).
fixture() {
	"$python" - "$scratch" "$1" <<'PY'
import gzip, lzma, pickle, struct, sys, zlib
d, name = sys.argv[1], sys.argv[2]
mib = bytes(1 << 20)
def gz(b):
    c = zlib.compressobj(9, zlib.DEFLATED, 31)
    return c.compress(b) + c.flush()
if name == "zeros.xz":  # 1 GiB of zeros in 1024 small xz streams
    out = lzma.compress(mib) * 1024
elif name == "zeros.gz":  # 1 GiB of zeros in 1024 gzip members
    out = gz(mib) * 1024
elif name == "bomb.gz":  # a pickle's first bytes, then 1 GiB of zeros
    out = gz(b"\x80\x04\x95" + mib) + gz(mib) * 1023
elif name == "isize.gz":  # a tiny pickle whose size trailer says 4 GiB - 1
    out = gz(pickle.dumps({}, protocol=4))[:-4] + struct.pack("<I", 0xFFFFFFFF)
elif name == "text0.pickle":
    out = pickle.dumps({"segments": [], "device_traces": []}, protocol=0)
elif name == "text1.pickle.xz":
    out = lzma.compress(pickle.dumps({"segments": [], "device_traces": []}, protocol=1))
elif name == "notsnap.gz":
    out = gz(b"hello, world\n" * 1000)
open(d + "/" + name, "wb").write(out)
PY
}

# bounded CMD...: CMD under 20 s and 400 MiB of address space (no
# address-space limit for a sanitizer build, which reserves terabytes).
vlimit=409600
grep -qa __asan_init "$ccasim" 2>/dev/null && vlimit=unlimited
bounded() {
	(ulimit -v $vlimit && exec timeout 20 "$@")
}

if [ "$python" = false ]; then
	for t in zeros.xz zeros.gz bomb.gz isize.gz text0.pickle text1.pickle.xz notsnap.gz; do
		skip "hostile input $t" "no python3"
	done
else
	for z in zeros.xz zeros.gz; do
		fixture $z
		run 1 bounded "$ccasim" info "$scratch/$z" && one_line &&
			grep -q "$z: offset 0: not a pickle or ccasim trace (first byte 0x00)" "$scratch/err"
		report $? "a compressed GiB of zeros ($z) stops at its first bytes"
	done
	fixture bomb.gz
	run 1 bounded "$ccasim" info "$scratch/bomb.gz" && one_line &&
		grep -q 'decompression bomb' "$scratch/err"
	report $? "a bomb that starts like a pickle stops at the ratio cap"
	run 1 bounded "$ccasim" info --max-inflate-ratio 1000000 --max-input-size 100MiB \
		"$scratch/bomb.gz" && one_line && grep -q 'exceeds 100.00 MiB' "$scratch/err"
	report $? "--max-input-size caps what a bomb may inflate to"
	fixture isize.gz
	if command -v strace >/dev/null && strace -o /dev/null true 2>/dev/null; then
		# A sanitizer build maps terabytes of shadow memory at start-up:
		# count the big mappings beyond those of a run that reads nothing.
		bigmaps='/mmap\(/ && $2 + 0 >= 1073741824 { n++ } END { print n + 0 }'
		strace -f -e trace=mmap -o "$scratch/trace0" "$ccasim" --version >/dev/null 2>&1
		run 1 strace -f -e trace=mmap,brk -o "$scratch/trace" "$ccasim" info \
			"$scratch/isize.gz" &&
			[ "$(awk -F', ' "$bigmaps" "$scratch/trace")" -le \
				"$(awk -F', ' "$bigmaps" "$scratch/trace0")" ]
		report $? "a gzip size trailer of 4 GiB reserves no memory"
	else
		skip "a gzip size trailer of 4 GiB reserves no memory" "no strace"
	fi
	fixture text0.pickle
	run 1 "$ccasim" info "$scratch/text0.pickle" && one_line &&
		grep -q 'text0.pickle: offset 0: pickle protocol 0/1 (text) is not supported' \
			"$scratch/err"
	report $? "a protocol 0 pickle is named as such"
	fixture text1.pickle.xz
	run 1 "$ccasim" info "$scratch/text1.pickle.xz" && one_line &&
		grep -q 'pickle protocol 0/1 (text) is not supported' "$scratch/err"
	report $? "an xz'd protocol 1 pickle is named as such"
	fixture notsnap.gz
	run 1 "$ccasim" info "$scratch/notsnap.gz" && one_line &&
		grep -q 'notsnap.gz: offset 0: not a pickle or ccasim trace' "$scratch/err"
	report $? "gzip of text is not a snapshot"
fi

# Endless and piped inputs are streamed, within the same budget.
run 1 bounded "$ccasim" info /dev/zero && one_line &&
	grep -q '/dev/zero: offset 0: not a pickle or ccasim trace' "$scratch/err"
report $? "info /dev/zero stops at the first byte"

run 1 bounded sh -c "head -c 1000000000 /dev/zero | \"$ccasim\" info /dev/stdin" && one_line &&
	grep -q 'not a pickle or ccasim trace' "$scratch/err"
report $? "a pipe of zeros stops at the first byte"

run 1 bounded sh -c "{ printf '\\200\\004'; head -c 300000000 /dev/zero; } | \"$ccasim\" info --max-input-size 64MiB /dev/stdin" &&
	one_line && grep -q 'exceeds 64.00 MiB' "$scratch/err"
report $? "a pipe longer than --max-input-size is refused"

run 0 "$ccasim" info "$sample" && sed 1d "$scratch/out" >"$scratch/info-file" &&
	run 0 sh -c "xz -c <\"$sample\" | \"$ccasim\" info /dev/stdin" &&
	sed 1d "$scratch/out" | cmp -s - "$scratch/info-file" &&
	run 0 sh -c "cat \"$sample\" | \"$ccasim\" info /dev/stdin" &&
	sed 1d "$scratch/out" | cmp -s - "$scratch/info-file"
report $? "a pickle through a pipe (plain or xz) still loads"

run 1 "$ccasim" info "$scratch" && one_line && grep -q 'is a directory' "$scratch/err"
report $? "a directory as input is refused"

# A compressed msgpack trace replays in bounded memory, as the plain one
# does: its decompressed bytes are never held whole.  The peak RSS of the
# gzip'd replay may pass the plain one's by less than half the 56 MB the
# 2 M-event trace inflates to (a sanitizer build's own overhead cancels).
hwm_of() {
	sed -n 's/^memory: VmHWM:[[:space:]]*\([0-9]*\).*/\1/p' "$scratch/err"
}
if [ -f "$big" ] && command -v gzip >/dev/null; then
	gzip -1 -c "$big" >"$big.gz"
	run 0 env CCASIM_MEMORY_REPORT=1 "$ccasim" replay "$big" && plain=$(hwm_of) &&
		run 0 env CCASIM_MEMORY_REPORT=1 "$ccasim" replay "$big.gz" && hwm=$(hwm_of) &&
		size=$(($(wc -c <"$big") / 1024)) &&
		[ -n "$plain" ] && [ -n "$hwm" ] && [ $((hwm - plain)) -lt $((size / 2)) ]
	report $? "a gzip'd 2 M-event msgpack trace replays in the memory of the plain one (${hwm:-?} KiB against ${plain:-?} KiB; the trace is ${size:-?} KiB)"
else
	skip "a gzip'd msgpack trace replays in bounded memory" "no gen-trace or gzip"
fi

tap_done
