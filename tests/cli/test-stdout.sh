#!/bin/sh
# test-stdout.sh - a report that could not be written is an error (TAP).
# Every command's standard output is flushed and checked once, in main():
# to a full disk (/dev/full) the command exits 1 with one line
# "ccasim: standard output: No space left on device"; to a pipe whose
# reader is gone it never exits 0 (killed by SIGPIPE, or exit 1 with one
# line when SIGPIPE is ignored).  Needs $CCASIM and $top_srcdir (set by
# make check).
set -u

srcdir=${top_srcdir:-.}
. "$srcdir/tests/tap.sh"
sample=$traces/samples/snap_default_2.11.pickle

# A fleet run folder for `fleet merge`.
"$ccasim" fleet run "$sample" --out "$scratch/fleet" >/dev/null 2>&1

# full CMD...: CMD with stdout on /dev/full exits 1 with one line naming
# standard output and the error.
full() {
	"$@" >/dev/full 2>"$scratch/err"
	got=$?
	[ "$got" -eq 1 ] || {
		echo "# '$*' >/dev/full exited $got, expected 1"
		return 1
	}
	one_line && grep -q '^ccasim: standard output: No space left on device$' "$scratch/err"
}

# The commands the finding names, and the shortest outputs there are
# (--version, --help) that are written only at exit.
while IFS='|' read -r line; do
	[ -z "$line" ] && continue
	args=$(echo "$line" | sed "s|SAMPLE|$sample|; s|FLEET|$scratch/fleet|")
	# shellcheck disable=SC2086 # ARGS are words
	full "$ccasim" $args
	report $? "ccasim $line >/dev/full exits 1"
done <<'EOF'
replay --json SAMPLE
replay SAMPLE
sweep --json SAMPLE
info SAMPLE
info --json SAMPLE
explain SAMPLE
peak SAMPLE
fleet merge FLEET
--version
--help
replay --help
EOF

# A reader that exits at once: with SIGPIPE ignored (as a Python parent
# or some shells leave it) the write fails with EPIPE, which is an error;
# with SIGPIPE at its default the process dies by it.  Neither is exit 0.
"$python" - "$ccasim" "$sample" >"$scratch/pipe" 2>&1 <<'EOF'
import os, signal, subprocess, sys
ccasim, sample = sys.argv[1:]
for name, restore in (("ignored", False), ("default", True)):
    # the reader is gone before the child starts: closed after the start,
    # a quick child could write its report into the pipe first (a race)
    r, w = os.pipe()
    os.close(r)
    # restore_signals=False keeps Python's SIG_IGN of SIGPIPE in the child
    p = subprocess.Popen([ccasim, "replay", "--json", sample], stdout=w,
                         stderr=subprocess.PIPE, restore_signals=restore)
    os.close(w)
    err = p.stderr.read().decode()
    rc = p.wait()
    if name == "ignored":
        assert rc == 1, (name, rc, err)
        assert err == "ccasim: standard output: Broken pipe\n", (name, err)
    else:
        assert rc == -signal.SIGPIPE, (name, rc, err)
print("ok")
EOF
grep -qx ok "$scratch/pipe"
report $? "a closed pipe: exit 1 and one line with SIGPIPE ignored, death by SIGPIPE otherwise"
sed 's/^/# /' "$scratch/pipe" | grep -v '^# ok$'

# A command that writes nothing to stdout succeeds with stdout closed, and
# a good write still exits 0.
run 0 "$ccasim" convert "$sample" -o "$scratch/t.msgpack" && [ ! -s "$scratch/out" ]
report $? "convert -o FILE writes nothing to stdout and exits 0"
"$ccasim" convert "$sample" -o "$scratch/t2.msgpack" >&- 2>"$scratch/err"
report $? "convert -o FILE exits 0 with stdout closed"
# (the sample's recorded OOM would make it 3: --oom-exit-status 0)
run 0 "$ccasim" replay --json --oom-exit-status 0 "$sample" && [ -s "$scratch/out" ]
report $? "replay --json to a file exits 0"

tap_done
