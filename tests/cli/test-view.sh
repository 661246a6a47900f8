#!/bin/sh
# test-view.sh - `ccasim view` end to end (TAP).  The page is one offline
# file (nothing loaded from the network); headless Chromium, where it is
# installed, opens it and the test reads back what the page computed: no
# JavaScript error, the page ready, the timeline's reserved peak equal to
# `replay`'s for the recording and for a what-if, the segment map at the
# peak with as many segments as stand there, the allocation bands at the
# allocated peak summing to replay's allocated peak, the flame graph at
# the reserved peak to the bytes allocated then, the segment map's free
# memory at an OOM equal to explain's and PyTorch's message's, a run that
# stopped at an OOM drawn only up to it, a page of four ranks with each
# rank's peak and the rank that peaks, and the search.  Needs $CCASIM and
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

# probe PAGE: appends the script on stdin, run once the page is ready, to
# PAGE (window.ccasimView drives the page; fig(NAME, VALUE) writes
# data-NAME on #figures) and opens it in Chromium
probe() {
	{
		printf '%s\n' "(function wait() { var a = document.getElementById('app');" \
			"if (a.getAttribute('data-status') !== 'ready') { setTimeout(wait, 50); return; }" \
			"var V = window.ccasimView, F = document.getElementById('figures');" \
			"function fig(k, v) { F.setAttribute('data-' + k, v); }" \
			"function num(k) { return +F.getAttribute('data-' + k); }" \
			"try {"
		cat
		printf '%s\n' "} catch (e) { document.getElementById('js-errors').textContent += 'probe: ' + e; }" \
			"})();"
	} | add_script "$1" && dom "$1"
}

# attr NAME: the value of data-NAME on the page's #figures
attr() {
	sed -n 's/.*<div id="figures"[^>]* data-'"$1"'="\([^"]*\)".*/\1/p' "$scratch/dom"
}

# replay_peak TRACE [--config S]: replay's reserved peak, in bytes
replay_peak() {
	replay_stat reserved_bytes.all.peak "$@"
}

# replay_stat KEY TRACE [OPTION...]: memory_stats()[KEY] after replay
replay_stat() {
	key=$1
	shift
	"$ccasim" replay --json --keep-going "$@" 2>/dev/null | "$python" -c \
		'import json, sys; print(json.load(sys.stdin)["memory_stats"][sys.argv[1]])' "$key"
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
		grep -q '<summary class="minor">164 segments with free memory</summary>' "$scratch/dom" &&
		grep -q '<summary>At the reserved peak (after event 46490)</summary>' "$scratch/dom" &&
		grep -q 'The reserved memory peaked at <b>11.38 GiB</b> after event 46490' "$scratch/dom" &&
		"$python" -c 'import sys; t = open(sys.argv[1]).read(); i = t.index("<section id=\"peak\">")
print(t[i:t.index("</section>", i)])' "$scratch/dom" >"$scratch/peak" &&
		! grep -q 'time_us\|reserved_peak\|free_segments' "$scratch/peak"
	report $? "bert's peak attribution in the page reads in words and units, fits a 1400-pixel window, long lists folded"
else
	skip "without --peak the page says how to add the attribution" "no chromium or python3"
	skip "with --peak the page shows the attribution's groups" "no chromium or python3"
	skip "bert's peak attribution in the page fits a 1400-pixel window" "no chromium or python3"
fi

# what the page draws, against replay and explain
if [ -n "$chromium" ] && [ "$python" != false ]; then
	# the bands of every allocation, zoomed in around the allocated peak,
	# sum there to replay's allocated peak (blocks, rounding included)
	for w in bert.default stacks.default seedfrag.default; do
		trace=$traces/$w.pickle.xz
		"$ccasim" view "$trace" -o "$scratch/b.html" >/dev/null 2>"$scratch/err"
		probe "$scratch/b.html" <<'EOF'
var p = num('peak-allocated-event-0');
V.zoom(p - 200, p + 200);
fig('bands-at-peak', V.bandsSumAt(p));
EOF
		got=$(attr bands-at-peak)
		exp=$(replay_stat allocated_bytes.all.peak "$trace")
		[ -n "$exp" ] && [ "$got" = "$exp" ] && grep -q '<pre id="js-errors"></pre>' "$scratch/dom"
		report $? "$w: the allocation bands at the allocated peak sum to replay's allocated peak ($got = $exp)"
	done

	# the flame graph at the reserved peak holds the bytes allocated then
	# (explain's figure), and the segment map there the same
	trace=$traces/stacks.default.pickle.xz
	"$ccasim" view "$trace" -o "$scratch/f.html" >/dev/null 2>"$scratch/err"
	probe "$scratch/f.html" <<'EOF'
fig('flame-peak', V.flame(num('peak-reserved-event-0')));
EOF
	exp=$("$ccasim" explain "$trace" | sed -n 's/^  reserved peak .* allocated \([0-9]*\) B then$/\1/p')
	[ -n "$exp" ] && [ "$(attr flame-peak)" = "$exp" ] && [ "$(attr segments-allocated)" = "$exp" ]
	report $? "the flame graph and segment map at the reserved peak hold explain's allocated bytes ($exp)"

	# the segment map's free memory at an OOM is reserved but unallocated
	# memory, as explain and PyTorch's message count it (once it counted
	# the rounding as free too)
	trace=$traces/dyninfer.cap.pickle.xz
	"$ccasim" view "$trace" -o "$scratch/o.html" >/dev/null 2>"$scratch/err"
	probe "$scratch/o.html" <<'EOF'
var L = V.log();
V.segments(L.cause[Array.prototype.indexOf.call(L.kind, 6)]);
EOF
	explained=$("$ccasim" explain "$trace" | sed -n 's/^ *In total the cache held \(.*\) free, .*/\1/p')
	pytorch=$("$ccasim" replay "$trace" | sed -n 's/.* and \(.*\) is reserved by PyTorch but unallocated.*/\1/p')
	got=$(attr segments-free-text)
	[ -n "$explained" ] && [ "$got" = "$explained" ] && [ "$got" = "$pytorch" ] &&
		[ "$(attr segments-at)" = 6838 ]
	report $? "the segment map's free memory at the OOM equals explain's and PyTorch's ($got, $explained, $pytorch)"

	# a what-if that runs out of memory: drawn and reported up to its OOM
	trace=$traces/bert.default.pickle.xz
	"$ccasim" view "$trace" --device-memory 8GiB -o "$scratch/s.html" >/dev/null 2>"$scratch/err"
	stop=$("$ccasim" replay --json --device-memory 8GiB "$trace" 2>/dev/null | "$python" -c \
		'import json, sys; print(json.load(sys.stdin)["oom"]["event"])')
	probe "$scratch/s.html" <<'EOF'
var M = JSON.parse(document.getElementById('meta').textContent);
fig('end', M.runs[0].end);
fig('stopped', M.runs[0].stopped_by_oom);
EOF
	[ -n "$stop" ] && [ "$(attr end)" = "$stop" ] && [ "$(attr stopped)" = true ] &&
		grep -q "stopped by an OOM after event $stop" "$scratch/dom"
	report $? "a run that stopped at an OOM ends there in the page (event $stop)"

	# four ranks in one page: a row each, each rank's peak replay's, the
	# rank that peaks named
	ranks=""
	for v in default exp gc ms128; do ranks="$ranks $traces/dyninfer.$v.pickle.xz"; done
	# shellcheck disable=SC2086
	run 0 "$ccasim" view $ranks -o "$scratch/r.html" && dom "$scratch/r.html" &&
		grep -q '<pre id="js-errors"></pre>' "$scratch/dom" && grep -q 'data-status="ready"' "$scratch/dom"
	report $? "a page of four ranks renders with no JavaScript error"
	ok=0 best=0 top=-1 k=0
	for t in $ranks; do
		exp=$(replay_peak "$t")
		[ "$(attr peak-reserved-$k)" = "$exp" ] || ok=1
		[ "$exp" -gt "$best" ] && best=$exp top=$k
		k=$((k + 1))
	done
	[ "$ok" = 0 ] && [ "$(attr peak-rank)" = "$top" ] && [ -n "$(attr rank-skew)" ]
	report $? "the rank page's peaks equal each rank's replay and it names the rank that peaks ($top)"
	# shellcheck disable=SC2086
	run 2 "$ccasim" view $ranks --config max_split_size_mb:128 -o "$scratch/r2.html"
	report $? "what-ifs take one trace, not a page of ranks"

	# search by size and by stack frame, against the trace's own entries
	"$ccasim" view "$traces/stacks.default.pickle.xz" -o "$scratch/q.html" >/dev/null 2>"$scratch/err"
	probe "$scratch/q.html" <<'EOF'
V.search('>=10MiB'); fig('big', num('search-hits'));
V.search('_conv_forward'); fig('conv', num('search-hits'));
EOF
	"$python" - "$traces/stacks.default.pickle.xz" "$(attr big)" "$(attr conv)" <<'EOF'
import lzma, pickle, sys
tr = pickle.load(lzma.open(sys.argv[1]))["device_traces"][0]
allocs = [e for e in tr if e["action"] == "alloc"]
big = sum(1 for e in allocs if e["size"] >= 10 << 20)
conv = sum(1 for e in allocs if any(f["name"] == "_conv_forward" for f in e.get("frames") or []))
assert (big, conv) == (int(sys.argv[2]), int(sys.argv[3])), (big, conv, sys.argv[2:])
EOF
	report $? "the search finds the allocations of a size and of a stack frame ($(attr big), $(attr conv))"

	# a trace that starts mid-run (stacks without its first 30 % of
	# entries): the state rebuilt at its start is in the page too, so the
	# segment map at the reserved peak holds replay's allocated bytes
	"$python" - "$traces/stacks.default.pickle.xz" "$scratch/cut.pickle" <<'EOF'
import lzma, pickle, sys
snap = pickle.load(lzma.open(sys.argv[1]))
trace = snap["device_traces"][0]
snap["device_traces"][0] = trace[len(trace) * 3 // 10:]
pickle.dump(snap, open(sys.argv[2], "wb"))
EOF
	"$ccasim" view "$scratch/cut.pickle" -o "$scratch/c.html" >/dev/null 2>"$scratch/err"
	probe "$scratch/c.html" </dev/null
	exp=$("$ccasim" replay --json "$scratch/cut.pickle" | "$python" -c \
		'import json, sys; d = json.load(sys.stdin); assert d["start"]["reconstructed"]
print(d["figures"]["reserved_peak"]["allocated"])')
	[ -n "$exp" ] && [ "$(attr segments-allocated)" = "$exp" ] && [ "$(attr flame-total)" = "$exp" ] &&
		grep -q '<pre id="js-errors"></pre>' "$scratch/dom"
	report $? "a trace that starts mid-run: the page's live blocks at the reserved peak are replay's ($exp)"
else
	for t in "bands at the allocated peak (bert)" "bands at the allocated peak (stacks)" \
		"bands at the allocated peak (seedfrag)" "flame graph at the reserved peak" \
		"free memory at an OOM" "a run stopped at an OOM" "a page of four ranks" \
		"the rank page's peaks" "what-ifs and ranks" "search" "a trace that starts mid-run"; do
		skip "$t" "no chromium or python3"
	done
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
