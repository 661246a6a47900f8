#!/bin/sh
# test-io.sh - hostile inputs and outputs end to end (TAP), issue 11.
# Outputs: -o follows a symbolic link, writes a device or FIFO in place,
# refuses a directory or an empty name, reports every write error, and
# leaves no temporary file behind when a signal ends the run.  Inputs:
# decompression bombs, lying size fields, endless devices and pipes and
# text pickles fail fast, with one line and exit 1.  Every fixture is built
# here, small.  Needs $CCASIM and $top_srcdir (set by make check).
set -u

srcdir=${top_srcdir:-.}
. "$srcdir/tests/tap.sh"
gen=${top_builddir:-.}/tools/gen-trace
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

tap_done
