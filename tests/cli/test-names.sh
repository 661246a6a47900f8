#!/bin/sh
# test-names.sh - file names reach the terminal escaped (TAP;
# doc/hardening.md).  A trace, and a file that is no trace, named with an
# escape sequence: no command writes the raw ESC byte to stdout or stderr
# (report headers, errors, notes), each shows it as \x1b.  Needs $CCASIM
# and $top_srcdir (set by make check).
set -u

srcdir=${top_srcdir:-.}
. "$srcdir/tests/tap.sh"
esc=$(printf '\033')
good="$scratch/t${esc}[31mred.pickle"
bad="$scratch/b${esc}[31mbad.pickle"
cp "$traces/samples/snap_default_2.11.pickle" "$good"
printf 'garbage' >"$bad"

# Each row: a command's arguments before the file; OUT stands for an
# output named with the escape too.
while IFS='|' read -r args; do
	[ -z "$args" ] && continue
	for f in "$good" "$bad"; do
		a=$(echo "$args" | sed "s|OUT|$scratch/o${esc}[31m|")
		# shellcheck disable=SC2086 # ARGS are words
		"$ccasim" $a "$f" >"$scratch/out" 2>"$scratch/err"
		# step names no file when all goes well
		quiet=false
		case $args in step*) [ "$f" = "$good" ] && quiet=true ;; esac
		! grep -q "$esc" "$scratch/out" "$scratch/err" &&
			{ $quiet || grep -q 'x1b\[31m' "$scratch/out" "$scratch/err"; }
		report $? "ccasim $args $([ "$f" = "$good" ] && echo TRACE || echo NOT-A-TRACE): the name is escaped"
	done
done <<'EOF2'
info
replay
replay --address-sensitivity
replay --device 5
explain
peak
step --at 3
sweep
fit
diff -c max_split_size_mb:128
export -o OUT.pickle
convert -v -o OUT.msgpack
plot --x time -o OUT.svg
plot --segments -o OUT.svg
view -o OUT.html
EOF2

tap_done
