#!/bin/sh
# test-view.sh - `ccasim view` end to end (TAP).  The page is one offline
# file (nothing loaded from the network); headless Chromium, where it is
# installed, opens it and the test reads back what the page computed: no
# JavaScript error, the page ready, the timeline's reserved peak equal to
# `replay`'s for the recording and for a what-if, the segment map at the
# peak with as many segments as stand there.  Needs $CCASIM and
# $top_srcdir (set by make check).
set -u

srcdir=${top_srcdir:-.}
. "$srcdir/tests/tap.sh"

chromium=$(command -v chromium || command -v chromium-browser || echo)

# dom PAGE [OPTION...]: the DOM after the page's script ran, in
# $scratch/dom; OPTIONs go to Chromium (--window-size=W,H)
dom() {
	dom_page=$1
	shift
	timeout 120 "$chromium" --headless --disable-gpu --no-sandbox --no-first-run \
		--user-data-dir="$scratch/chromium" --virtual-time-budget=30000 "$@" \
		--dump-dom "file://$dom_page" >"$scratch/dom" 2>"$scratch/err"
}

# add_script PAGE: appends the script on stdin to PAGE as an inline
# <script> and allows it in the page's Content-Security-Policy by its
# hash, as the page allows its own
add_script() {
	"$python" -c '
import base64, hashlib, sys
page, code = sys.argv[1], sys.stdin.read()
h = base64.b64encode(hashlib.sha256(code.encode()).digest()).decode()
text = open(page, encoding="utf-8").read()
assert "script-src " in text
text = text.replace("script-src ", "script-src \x27sha256-%s\x27 " % h, 1)
open(page, "w", encoding="utf-8").write(text + "<script>" + code + "</script>\n")
' "$1"
}

# attr NAME: the value of data-NAME on the page's #figures
attr() {
	sed -n 's/.*<div id="figures"[^>]* data-'"$1"'="\([^"]*\)".*/\1/p' "$scratch/dom"
}

# peak TRACE [--config S]: replay's reserved peak, in bytes
replay_peak() {
	"$ccasim" replay --json --keep-going "$@" 2>/dev/null | "$python" -c \
		'import json, sys; print(json.load(sys.stdin)["memory_stats"]["reserved_bytes.all.peak"])'
}

# (trace, what-if): one with annotations, one with stacks, one expandable
for case in bert.default:max_split_size_mb:128 stacks.default:expandable_segments:True \
	multistream.exp:garbage_collection_threshold:0.6; do
	w=${case%%:*}
	conf=${case#*:}
	trace=$traces/$w.pickle.xz
	page=$scratch/$w.html
	run 0 "$ccasim" view "$trace" --config "$conf" -o "$page" &&
		! grep -Eqi '(src|href)=["'"'"']?(https?:)?//' "$page" && grep -q '<title>' "$page"
	report $? "view $w writes one page that loads nothing from the network"
	if [ -z "$chromium" ] || [ "$python" = false ]; then
		skip "Chromium renders the $w page with no JavaScript error" "no chromium (apt-get install chromium) or python3"
		skip "the $w page's peaks equal replay's" "no chromium or python3"
		continue
	fi
	dom "$page" && grep -q 'id="app" data-status="ready"' "$scratch/dom" &&
		grep -q '<pre id="js-errors"></pre>' "$scratch/dom"
	report $? "Chromium renders the $w page with no JavaScript error"
	want0=$(replay_peak "$trace")
	want1=$(replay_peak "$trace" --config "$conf")
	got0=$(attr peak-reserved-0)
	got1=$(attr peak-reserved-1)
	[ -n "$want0" ] && [ "$got0" = "$want0" ] && [ "$got1" = "$want1" ] &&
		[ "$(attr segments-reserved)" = "$want0" ]
	report $? "the $w page's peaks equal replay's ($got0 = $want0, what-if $got1 = $want1)"
done

# the peak section: absent, it says how to get one; given, it is shown
if [ -n "$chromium" ] && [ "$python" != false ]; then
	grep -q 'No peak attribution in this page' "$scratch/dom"
	report $? "without --peak the page says how to add the attribution"
	printf '{"at": "reserved peak", "groups": [{"stack": ["f (a.py:1)"], "bytes": 4096}]}' \
		>"$scratch/peak.json"
	run 0 "$ccasim" view "$traces/seedfrag.default.pickle.xz" --peak "$scratch/peak.json" \
		-o "$scratch/p.html" && dom "$scratch/p.html" &&
		grep -q '<pre id="js-errors"></pre>' "$scratch/dom" &&
		grep -q 'f (a.py:1)' "$scratch/dom" && grep -q '4.00 KiB' "$scratch/dom"
	report $? "with --peak the page shows the attribution's groups"
	# ccasim peak's own attribution of bert (moments with their groups and
	# 164 free segments): laid out in sections, long lists folded, and no
	# wider than a 1400-pixel window (its moments once made a table 3425
	# pixels wide of JSON text)
	"$ccasim" peak --json "$traces/bert.default.pickle.xz" >"$scratch/bert-peak.json" &&
		run 0 "$ccasim" view "$traces/bert.default.pickle.xz" --peak "$scratch/bert-peak.json" \
			-o "$scratch/bp.html" &&
		add_script "$scratch/bp.html" <<'EOF'
window.addEventListener('load', function () { setTimeout(function () {
  var w = document.documentElement.scrollWidth, v = window.innerWidth;
  document.getElementById('app').setAttribute('data-probe', w <= v ? 'fits' : 'overflows ' + w + ' > ' + v);
}, 1000); });
EOF
	dom "$scratch/bp.html" --window-size=1400,1000 &&
		grep -q 'data-probe="fits"' "$scratch/dom" && grep -q '<pre id="js-errors"></pre>' "$scratch/dom" &&
		grep -q '<summary>free_segments (164)</summary>' "$scratch/dom" &&
		grep -q '<h4>reserved_peak, event 46490</h4>' "$scratch/dom"
	report $? "bert's peak attribution in the page fits a 1400-pixel window, moments in sections, long lists folded"
else
	skip "without --peak the page says how to add the attribution" "no chromium or python3"
	skip "with --peak the page shows the attribution's groups" "no chromium or python3"
	skip "bert's peak attribution in the page fits a 1400-pixel window" "no chromium or python3"
fi

# errors: usage 2, bad input 1, nothing left behind
run 2 "$ccasim" view "$traces/seedfrag.default.pickle.xz"
report $? "view without -o is a usage error"
printf '[1, 2' >"$scratch/bad.json"
run 1 "$ccasim" view "$traces/seedfrag.default.pickle.xz" --peak "$scratch/bad.json" \
	-o "$scratch/bad.html" && [ ! -e "$scratch/bad.html" ] && grep -q 'peak' "$scratch/err"
report $? "a --peak file that is no JSON object fails and writes nothing"
run 1 "$ccasim" view "$scratch/missing.pickle" -o "$scratch/m.html" && [ ! -e "$scratch/m.html" ]
report $? "view of a missing file fails and writes nothing"

tap_done
