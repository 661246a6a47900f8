#!/bin/sh
# test-plot.sh - `ccasim plot`, `explain` and `step` end to end (TAP).
# Every output type of both plot kinds is written and recognised (PNG and
# PDF signatures, SVG that parses as XML with the titles in it, HTML that
# embeds its SVG and script and loads nothing from the network); a long
# synthetic trace plots to an image no larger than a short one (the
# decimation); explain and step print their accounts.  Needs $CCASIM,
# $top_srcdir and $top_builddir (set by make check).
set -u

srcdir=${top_srcdir:-.}
. "$srcdir/tests/tap.sh"
builddir=${top_builddir:-.}

# starts_with FILE HEX: the file's first bytes, in hex.
starts_with() {
	[ "$(od -An -tx1 -N$((${#2} / 2)) "$1" | tr -d ' \n')" = "$2" ]
}

# svg_ok FILE TEXT: well-formed XML whose root is <svg>.
svg_ok() {
	[ "$python" = false ] && { grep -q '<svg' "$1"; return; }
	"$python" -c '
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
assert root.tag.endswith("svg"), root.tag
assert float(root.get("width").rstrip("ptx")) >= 480
' "$1"
}

html_ok() {
	grep -q '<svg' "$1" && grep -q '<script>' "$1" &&
		grep -q '<script type="application/json" id="hover">{"kind"' "$1" &&
		! grep -Eq '(src|href)="https?:' "$1" && grep -q "<title>$2" "$1"
}

seed=$traces/seedfrag.default.pickle.xz
for kind in timeline segments; do
	flags=
	[ $kind = segments ] && flags=--segments
	for ext in svg png pdf html; do
		out=$scratch/$kind.$ext
		run 0 "$ccasim" plot "$seed" $flags --config max_split_size_mb:128 -o "$out" &&
		case $ext in
		png) starts_with "$out" 89504e470d0a1a0a ;;
		pdf) starts_with "$out" 255044462d ;;
		svg) svg_ok "$out" ;;
		html) html_ok "$out" "seedfrag.default.pickle.xz: " ;;
		esac
		report $? "plot $kind of seedfrag.default as .$ext"
	done
done

run 0 "$ccasim" plot "$traces/bert.default.pickle.xz" --x time --config expandable_segments:True \
	--config max_split_size_mb:128 -o "$scratch/bert.png" &&
	grep -q 'what-if max_split_size_mb:128 peak reserved 13.40 GiB' "$scratch/out"
report $? "plot bert.default against time with two what-ifs"
run 0 "$ccasim" plot "$traces/gpt2gen.default.pickle.xz" --memory-fraction 0.0112 --keep-going \
	-o "$scratch/gpt.html" && grep -q 'OOMs)' "$scratch/out" && ! grep -q '(0 OOMs)' "$scratch/out"
report $? "plot a capped gpt2gen.default: the OOMs are counted"
run 0 "$ccasim" plot "$traces/multistream.default.pickle.xz" --segments --at 348 \
	-o "$scratch/ms.svg" && grep -q 'segment map after event 348' "$scratch/out"
report $? "plot --segments --at an event of multistream"

# decimation: 100 times the events, about the same image
gen=$builddir/bench/gen-trace
if [ -x "$gen" ]; then
	run 0 "$gen" -n 2000 -o "$scratch/short.msgpack" &&
		run 0 "$gen" -n 200000 -o "$scratch/long.msgpack" &&
		run 0 "$ccasim" plot "$scratch/short.msgpack" -o "$scratch/short.svg" &&
		run 0 "$ccasim" plot "$scratch/long.msgpack" -o "$scratch/long.svg" &&
		[ "$(wc -c <"$scratch/long.svg")" -lt 1000000 ]
	report $? "a 200000-event trace plots to an SVG under 1 MB"
else
	n=$((n + 1))
	echo "ok $n - decimation # SKIP no bench/gen-trace"
fi

# usage errors
run 2 "$ccasim" plot "$seed" -o "$scratch/x.gif"
report $? "plot to .gif is a usage error"
run 2 "$ccasim" plot "$seed" --at 5 -o "$scratch/x.svg"
report $? "plot --at without --segments is a usage error"
run 2 "$ccasim" plot "$seed" --segments --config a:1 -o "$scratch/x.svg"
report $? "plot with a bad --config is a usage error"
run 2 "$ccasim" plot "$seed" --segments --config max_split_size_mb:64 \
	--config max_split_size_mb:128 -o "$scratch/x.svg"
report $? "plot --segments with two --config is a usage error"
[ ! -e "$scratch/x.svg" ] && [ ! -e "$scratch/x.gif" ]
report $? "failed plots leave no file"

# explain and step
run 0 "$ccasim" explain "$seed" --limit 3 &&
	grep -q '67 of them reserved new memory' "$scratch/out" &&
	grep -q 'every free block on the stream was too small' "$scratch/out" &&
	grep -q 'At the reserved peak (after event 1743)' "$scratch/out"
report $? "explain seedfrag.default"
run 0 "$ccasim" explain "$traces/stacks.default.pickle.xz" &&
	grep -q 'Call sites that strand the most free memory' "$scratch/out"
report $? "explain names call sites when the trace has frames"
run 0 "$ccasim" step "$seed" --at 1743 &&
	grep -q '^Event 1743 of 1870: alloc' "$scratch/out" &&
	grep -q 'cudaMalloc 300.00 MiB' "$scratch/out" && grep -q '^Segments' "$scratch/out"
report $? "step --at prints one view"
run 0 "$ccasim" step "$seed" </dev/null && grep -q '^Event 0 of 1870' "$scratch/out"
report $? "step without a terminal prints the first event and exits"
run 2 "$ccasim" step "$seed" --at 1870
report $? "step --at past the end is a usage error"

# SVG text is text (searchable <text> elements, not glyph outlines); a
# colour per run; a panel per run when one run dwarfs the others (the
# max_split_size_mb:20 what-if of multistream reserves 28 times more);
# every peak label in its axis's unit
svgtext() {
	"$python" -c '
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
for t in root.iter("{http://www.w3.org/2000/svg}text"):
    print(t.text)
' "$1"
}
ms=$traces/multistream.default.pickle.xz
bert=$traces/bert.default.pickle.xz
if [ "$python" = false ]; then
	for t in "SVG text is <text>" "a panel per run" "one panel" "peak labels in the axis unit" \
		"a colour per run" "device memory line, labels apart" "segment map words and order agree"; do
		skip "$t" "no python3"
	done
else
	run 0 "$ccasim" plot "$bert" --config max_split_size_mb:128 -o "$scratch/t.svg" &&
		svgtext "$scratch/t.svg" >"$scratch/texts" &&
		grep -qx 'bert.default.pickle.xz: reserved, allocated and active memory (device 0)' \
			"$scratch/texts" && grep -qx 'what-if max_split_size_mb:128' "$scratch/texts"
	report $? "SVG text is <text>: the title and the legend are searchable"
	run 0 "$ccasim" plot "$ms" --config max_split_size_mb:20 --config expandable_segments:True \
		-o "$scratch/p.svg" && svgtext "$scratch/p.svg" >"$scratch/ptexts" &&
		[ "$(grep -c '^memory (' "$scratch/ptexts")" -eq 3 ]
	report $? "a panel per run when one dwarfs the others (three y axes)"
	[ "$(grep -c '^memory (' "$scratch/texts")" -eq 1 ]
	report $? "one panel when no run dwarfs another"
	# each panel's peak label in the unit of the axis drawn just before it
	awk '/^memory \(/ { u = substr($2, 2, 3) } /^peak [0-9.]+ [KMG]iB$/ { n++; if ($3 != u) bad = 1 }
		END { exit bad || n != 3 }' "$scratch/ptexts" &&
		awk '/^memory \(/ { u = substr($2, 2, 3) } /^peak [0-9.]+ [KMG]iB$/ { n++; if ($3 != u) bad = 1 }
		END { exit bad || n != 2 }' "$scratch/texts" && grep -qx 'peak 1596.00 MiB' "$scratch/ptexts"
	report $? "peak labels in their axis's unit (1596.00 MiB on a MiB axis, not 1.56 GiB)"
	run 0 "$ccasim" plot "$bert" --config max_split_size_mb:128 --width 1200 --height 640 \
		-o "$scratch/t.png" && "$python" -c '
import sys
try:
    import cairo
except ImportError:
    sys.exit(77)
s = cairo.ImageSurface.create_from_png(sys.argv[1])
assert (s.get_width(), s.get_height()) == (1200, 640)
data, stride = s.get_data(), s.get_stride()
seen = set()
for y in range(0, s.get_height()):
    row = data[y * stride:(y + 1) * stride]
    for x in range(0, s.get_width()):
        b, g, r = row[4 * x], row[4 * x + 1], row[4 * x + 2]
        seen.add((r, g, b))
# the recording blue and the first what-if orange, both drawn
assert (0x1f, 0x77, 0xb4) in seen and (0xff, 0x7f, 0x0e) in seen, "run colours missing"
' "$scratch/t.png"
	st=$?
	if [ $st -eq 77 ]; then skip "a colour per run in the PNG" "no python3-cairo"; else report $st "a colour per run in the PNG (blue recording, orange what-if)"; fi
	# --device-memory draws where cudaMalloc fails, and no two labels of
	# the plot (four runs whose peaks lie within 2 GiB, the limit) overlap
	run 0 "$ccasim" plot "$bert" --device-memory 13GiB --config max_split_size_mb:128 \
		--config expandable_segments:True --config garbage_collection_threshold:0.6 \
		-o "$scratch/d.svg" && "$python" - "$scratch/d.svg" <<'EOF'
import re, sys
svg = open(sys.argv[1]).read()
labels = [(float(x), float(y), t) for x, y, t in re.findall(
    r'<text x="([0-9.]+)" y="([0-9.]+)"[^>]*>((?:peak|device memory|cap) [0-9.]+ [KMG]iB)</text>', svg)]
assert any(t == "device memory 13.00 GiB" for _, _, t in labels), labels
assert sum(1 for _, _, t in labels if t.startswith("peak")) == 4, labels
width = lambda t: 6.6 * len(t)  # DejaVu Sans at 11 px: under 6.6 px a character
for i, (x, y, t) in enumerate(labels):
    for (u, v, s) in labels[:i]:
        assert not (x < u + width(s) and u < x + width(t) and abs(y - v) < 11), (t, s, x, y, u, v)
EOF
	report $? "plot --device-memory draws the device's memory; peak labels do not overlap"
	run 0 "$ccasim" plot "$bert" --segments --max-rows 5 -o "$scratch/s.svg" &&
		svgtext "$scratch/s.svg" >"$scratch/stexts" &&
		grep -q 'showing the 5 of the 454 segments with the most free space beside live blocks, in address order' \
			"$scratch/stexts" &&
		grep '^0x' "$scratch/stexts" | "$python" -c '
import sys
a = [int(l.split()[0], 16) for l in sys.stdin]
assert len(a) == 5 and a == sorted(a), a'
	report $? "segment map words and order agree (5 rows, in address order)"
fi

tap_done
