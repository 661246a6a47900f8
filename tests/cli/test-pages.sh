#!/bin/sh
# test-pages.sh - what a trace holds cannot run in, or stop, a page that
# ccasim writes (TAP).  `plot -o page.html` and `view` get snapshots and
# labs whose recorded PYTORCH_CUDA_ALLOC_CONF, frame names, annotations,
# metadata and file name carry `</script><script>...` (a script that sets
# the page's title) and `<!--<script>` (which once kept view's page at
# "Loading"); headless Chromium, where installed, opens each page: its own
# script runs to the end (data-status="ready"), the payload's never does,
# and the page's Content-Security-Policy refuses nothing of its own.
# Without Chromium the pages' text is still checked: no comment opener and
# no closing script tag but the writer's own.  A --config with text after a
# number is refused, naming the key.  Needs $CCASIM and $top_srcdir.
set -u

srcdir=${top_srcdir:-.}
. "$srcdir/tests/tap.sh"

chromium=$(command -v chromium || command -v chromium-browser || echo)

# payloads: the first runs a script where a page ends its <script> early,
# the second swallows the page's own </script> after it
pwn="</script><script>document.title='PWNED'</script>"
comment='<!--<script>'

# dom PAGE: the DOM after the page's script ran in $scratch/dom, the
# page's console (with any Content-Security-Policy refusal) in $scratch/err
dom() {
	timeout 120 "$chromium" --headless --disable-gpu --no-sandbox --no-first-run \
		--user-data-dir="$scratch/chromium" --virtual-time-budget=30000 \
		--enable-logging=stderr --v=0 --dump-dom "file://$1" >"$scratch/dom" \
		2>"$scratch/chromium.log"
	st=$?
	grep 'CONSOLE\|Content Security Policy' "$scratch/chromium.log" >"$scratch/err"
	return $st
}

# ran_clean ID: the page's own script marked #ID ready, the payload set no
# title, no JavaScript error (view's #js-errors, which also lists what the
# policy refused) and Chromium logged no policy refusal
ran_clean() {
	grep -q "id=\"$1\"[^>]*data-status=\"ready\"" "$scratch/dom" &&
		! grep -q '<title>PWNED</title>' "$scratch/dom" &&
		{ ! grep -q 'id="js-errors"' "$scratch/dom" ||
			grep -q '<pre id="js-errors"></pre>' "$scratch/dom"; } &&
		! grep -q 'Content Security Policy' "$scratch/err"
}

# text_safe PAGE N: PAGE has its policy meta before any style or script,
# N script elements (its own), N closing script tags, no comment opener
# and no raw U+2028/U+2029
text_safe() {
	"$python" - "$1" "$2" <<'EOF'
import re, sys
page, n = open(sys.argv[1], encoding="utf-8").read(), int(sys.argv[2])
low = page.lower()
csp = low.find('<meta http-equiv="content-security-policy"')
assert 0 <= csp < low.find("<style"), "no policy before the style"
assert "script-src 'sha256-" in page, "no script hash in the policy"
assert low.count("<script") == n, low.count("<script")
assert low.count("</script") == n, low.count("</script")
assert "<!--" not in page and "-->" not in page, "a comment"
assert "\u2028" not in page and "\u2029" not in page, "raw U+2028/9"
EOF
}

# make_trace PATH CONF STRING: a one-segment snapshot whose recorded
# PYTORCH_CUDA_ALLOC_CONF is CONF and whose frame name, filename,
# user_metadata and annotation are STRING
make_trace() {
	"$python" - "$@" <<'EOF'
import pickle, sys
path, conf, s = sys.argv[1:4]
addr, size = 1 << 32, 2 << 20
frames = [{"name": s, "filename": "/" + s + ".py", "line": 1}]
def ev(action, n, t):
    return {"action": action, "addr": addr, "size": n, "stream": 0, "time_us": t,
            "frames": frames, "user_metadata": s}
seg = {"device": 0, "address": addr, "total_size": size, "allocated_size": 0,
       "active_size": 0, "requested_size": 0, "stream": 0, "segment_type": "large",
       "segment_pool_id": (0, 0), "is_expandable": False, "frames": [],
       "blocks": [{"address": addr, "size": size, "requested_size": 0,
                   "state": "inactive", "frames": []}]}
trace = [ev("segment_alloc", size, 1), ev("alloc", 512, 2), ev("free_requested", 512, 3),
         ev("free_completed", 512, 4)]
snap = {"segments": [seg], "device_traces": [trace],
        "allocator_settings": {"PYTORCH_CUDA_ALLOC_CONF": conf, "max_split_size": 1024 << 20},
        "external_annotations": [
            {"device": 0, "name": s, "stage": "START", "time_us": 1},
            {"device": 0, "name": s, "stage": "END", "time_us": 3}]}
pickle.dump(snap, open(path, "wb"), protocol=4)
EOF
}

if [ "$python" = false ]; then
	skip "hostile strings in pages" "no python3"
	tap_done
fi

# check_pages NAME INPUT [all]: plot (timeline and segment map) and view
# pages of INPUT are safe as text and, in Chromium, run their own script
# alone (the segment map, whose only trace strings are in its title, with
# "all")
check_pages() {
	for kind in plot segments view; do
		page=$scratch/$1-$kind.html
		case $kind in
		plot) run 0 "$ccasim" plot "$2" -o "$page" ;;
		segments) run 0 "$ccasim" plot "$2" --segments -o "$page" ;;
		view) run 0 "$ccasim" view "$2" -o "$page" ;;
		esac
		scripts=2 id=plot
		[ $kind = view ] && scripts=3 id=app
		text_safe "$page" $scripts
		report $? "$1: the $kind page holds its own scripts alone, no comment, a policy"
		[ $kind = segments ] && [ "${3:-}" != all ] && continue
		if [ -z "$chromium" ]; then
			skip "$1: the $kind page runs its script, not the trace's" "no chromium"
			continue
		fi
		dom "$page" && ran_clean $id
		report $? "$1: the $kind page runs its script, not the trace's"
	done
}

# 1. the recorded settings end the script and start another
make_trace "$scratch/pwn.pickle" "max_split_size_mb:1024$pwn" f
check_pages settings-script "$scratch/pwn.pickle"

# 2. a comment opener in the recorded settings and in every trace string
make_trace "$scratch/comment.pickle" "max_split_size_mb:1024$comment" "$comment$pwn"
check_pages trace-strings "$scratch/comment.pickle"

# 3. the file's name (the page's title and trace) holds a comment opener
# (a name holds no '/')
named="$scratch/x$comment.pickle"
cp "$scratch/comment.pickle" "$named"
check_pages file-name "$named"

# 4. a lab's settings line: read as PyTorch reads it, or refused; never run
i=0
for payload in "$pwn" "$comment"; do
	i=$((i + 1))
	printf '# ccasim lab\nsettings max_split_size_mb:1024%s\nalloc 30M x2\nfree 1\n' \
		"$payload" >"$scratch/hostile.lab"
	"$ccasim" info "$scratch/hostile.lab" >"$scratch/out" 2>"$scratch/err"
	case $? in
	0) check_pages "lab-settings-$i" "$scratch/hostile.lab" ;;
	1) grep -q 'settings' "$scratch/err"
	   report $? "a lab whose settings line holds '$payload' is refused, naming the settings" ;;
	*) report 1 "a lab whose settings line holds '$payload' is read or refused" ;;
	esac
done

# 5. a real trace's pages under the policy: every part of them still works
bert=$traces/bert.default.pickle.xz
check_pages bert "$bert" all

# 6. a --config with text after its number is refused, naming the key,
# and writes nothing
for cmd in plot view; do
	run 2 "$ccasim" $cmd "$scratch/comment.pickle" --config "max_split_size_mb:1024$pwn" \
		-o "$scratch/c-$cmd.html" && [ ! -e "$scratch/c-$cmd.html" ] && one_line &&
		grep -q "max_split_size_mb: '1024</script>" "$scratch/err"
	report $? "$cmd --config with text after a number is refused, naming the key"
done

tap_done
