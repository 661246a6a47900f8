#!/bin/sh
# test-messages.sh - what ccasim shows of a trace is safe and bounded, and
# its failures say what to do (TAP).  Trace strings (frame names,
# filenames, the recorded PYTORCH_CUDA_ALLOC_CONF) reach no terminal raw;
# a megabyte of recorded settings or of --title plots in linear time; a
# failed --check without a cap says the snapshot cannot hold one and how
# to pass it.  Needs $CCASIM and $top_srcdir (set by make check).
set -u

srcdir=${top_srcdir:-.}
. "$srcdir/tests/tap.sh"

# clean_err: stderr has no GLib CRITICAL or WARNING.
clean_err() {
	! grep -q 'CRITICAL\|WARNING' "$scratch/err"
}

# no_escape FILE: FILE holds no ESC (0x1b) or BEL (0x07) byte.
no_escape() {
	! LC_ALL=C grep -q "$(printf '[\033\007]')" "$1"
}

# make_trace PATH CONF: a one-segment snapshot whose frames carry terminal
# escape sequences and whose recorded PYTORCH_CUDA_ALLOC_CONF is CONF
# ("dup:N": max_split_size_mb:256 N times; "bad:N": an invalid option of N
# bytes behind an escape sequence).
make_trace() {
	"$python" - "$1" "$2" <<'EOF'
import pickle, sys
path, conf = sys.argv[1], sys.argv[2]
kind, n = conf.split(":")
n = int(n)
if kind == "dup":
    conf = ",".join(["max_split_size_mb:256"] * n)
else:
    conf = "max_split_size_mb:\x1b[2J" + "x" * n
addr, size = 1 << 32, 2 << 20
frames = [{"name": "f\x1b[31mRED", "filename": "/x\x1b]0;title\x07.py", "line": 1}]
def ev(action, n):
    return {"action": action, "addr": addr, "size": n, "stream": 0, "time_us": 1,
            "frames": frames}
seg = {"device": 0, "address": addr, "total_size": size, "allocated_size": 0,
       "active_size": 0, "requested_size": 0, "stream": 0, "segment_type": "large",
       "segment_pool_id": (0, 0), "is_expandable": False, "frames": [],
       "blocks": [{"address": addr, "size": size, "requested_size": 0,
                   "state": "inactive", "frames": []}]}
trace = [ev("segment_alloc", size), ev("alloc", 512), ev("free_requested", 512),
         ev("free_completed", 512)]
snap = {"segments": [seg], "device_traces": [trace],
        "allocator_settings": {"PYTORCH_CUDA_ALLOC_CONF": conf}}
pickle.dump(snap, open(path, "wb"), protocol=4)
EOF
}

if [ "$python" = false ]; then
	skip "trace strings and huge settings" "no python3"
else
	esc=$scratch/esc.pickle
	huge=$scratch/huge.pickle
	bad=$scratch/bad.pickle
	make_trace "$esc" dup:1 && make_trace "$huge" dup:48000 && make_trace "$bad" bad:1048576
	report $? "made traces with escape sequences and a 1 MB recorded config"

	# Plotting is linear in the recorded config and in --title: a
	# quadratic fit took 28 s for 32 KB and hours for 1 MB.
	run 0 timeout 10 "$ccasim" plot "$huge" -o "$scratch/huge.svg" &&
		[ "$(wc -c <"$scratch/out")" -lt 2000 ]
	report $? "plot of a 1 MB recorded config finishes in seconds, one short line out"
	title=$(head -c 100000 /dev/zero | tr '\0' T)
	run 0 timeout 10 "$ccasim" plot "$esc" --title "$title" -o "$scratch/title.html" &&
		[ "$(grep -c "<title>" "$scratch/title.html")" -eq 1 ] &&
		[ "$(grep '<title>' "$scratch/title.html" | wc -c)" -lt 2000 ]
	report $? "plot --title of 100 KB finishes in seconds, the HTML title bounded"
	run 0 timeout 10 "$ccasim" plot "$huge" --segments --title "$title" -o "$scratch/s.png"
	report $? "segment map with a 1 MB config and a 100 KB title finishes in seconds"
	run 0 "$ccasim" plot "$esc" -o "$scratch/esc.svg" && no_escape "$scratch/esc.svg" &&
		no_escape "$scratch/out"
	report $? "plot shows no raw escape sequence"

	# explain, step and info escape trace strings.
	run 0 "$ccasim" explain "$esc" && no_escape "$scratch/out" &&
		grep -q 'f\\x1b\[31mRED (x\\x1b\]0;title\\x07.py:1)' "$scratch/out"
	report $? "explain escapes frame names and filenames"
	run 0 "$ccasim" step --at 1 "$esc" && no_escape "$scratch/out" &&
		grep -q 'from f\\x1b\[31mRED' "$scratch/out"
	report $? "step escapes frame names and filenames"
	run 0 "$ccasim" info "$bad" && no_escape "$scratch/out" &&
		[ "$(wc -c <"$scratch/out")" -lt 4000 ] &&
		grep -q 'max_split_size_mb:\\x1b\[2Jxxx.*(1048598 bytes)' "$scratch/out"
	report $? "info shows the recorded config escaped and bounded"
	run 0 "$ccasim" explain "$huge" && [ "$(wc -c <"$scratch/out")" -lt 4000 ]
	report $? "explain's header bounds a 1 MB recorded config"

	# An error quoting the recorded config is one bounded line.
	run 1 "$ccasim" replay "$bad" && one_line && clean_err && no_escape "$scratch/err" &&
		[ "$(wc -c <"$scratch/err")" -lt 1100 ]
	report $? "an invalid 1 MB recorded config fails in one bounded line"
fi

# --check of a trace recorded under set_per_process_memory_fraction (not
# in the snapshot) fails without the cap and says how to pass it; with the
# fraction from its .json it passes.
gc=$traces/seedfrag.gc.pickle.xz
hint='snapshot cannot hold one: PyTorch does not record torch.cuda.set_per_process_memory_fraction(); if the run had a cap, pass it with --memory-fraction F or --device-memory BYTES'
run 1 "$ccasim" replay --check "$gc" && one_line && clean_err &&
	grep -qF -- "--check failed on device 0; no memory cap was given, and the $hint" "$scratch/err" &&
	grep -qF -- "$hint" "$scratch/out"
report $? "a failed --check without a cap names the missing cap (stderr and report)"
run 1 "$ccasim" replay --check --json "$gc" &&
	grep -qF -- "\"hint\": \"no memory cap was given, and the $hint\"" "$scratch/out"
report $? "a failed --check --json carries the hint"
# A ccasim-record dump holds every fraction call the program made: a
# failed --check of one (an alloc's address changed) names no missing cap.
recorded=$scratch/recorded-moved.pickle
"$python" -c '
import lzma, pickle, sys
s = pickle.load(lzma.open(sys.argv[1]))
t = s["device_traces"][0]
i = max(i for i, e in enumerate(t) if e["action"] == "alloc")
t[i] = dict(t[i], addr=t[i]["addr"] + 512)
pickle.dump(s, open(sys.argv[2], "wb"))' "$srcdir/traces/calls-2.11/calls.default.pickle.xz" "$recorded"
run 1 "$ccasim" replay --check "$recorded" && grep -q 'check: FAILED' "$scratch/out" &&
	! grep -qF -- "$hint" "$scratch/err" && ! grep -qF -- "$hint" "$scratch/out"
report $? "a failed --check of a ccasim-record dump names no missing cap"
run 0 "$ccasim" replay --check --memory-fraction 0.006317880728292356 "$gc" &&
	grep -q '^check: passed' "$scratch/out" && ! grep -qF -- "$hint" "$scratch/out"
report $? "with the recorded fraction (cap_bytes / total_memory) --check passes"
run 1 "$ccasim" replay --check --memory-fraction 0.9 "$gc" && ! grep -qF -- "$hint" "$scratch/err"
report $? "a failed --check under a given cap does not blame a missing cap"

tap_done
