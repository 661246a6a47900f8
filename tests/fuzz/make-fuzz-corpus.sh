#!/bin/sh
# make-fuzz-corpus.sh - regenerates the msgpack fuzz seeds from the sample
# pickles with a built ccasim, into tests/fuzz/corpus-msgpack/:
#   sample-NAME.msgpack            `ccasim convert` of traces/pytorch-2.11/samples/NAME.pickle
#   sample-NAME-truncated.msgpack  its first two thirds
#   hostile-*.msgpack              the default sample with one lie each (counts
#                                  past the data, ids past the tables, bad
#                                  actions, wrong arity...), made with
#                                  python3-msgpack so that they pass the
#                                  format sniffing and reach the decoder
# Run it again after a change to doc/trace-format.md.
#
# Usage: CCASIM=path/to/ccasim tests/fuzz/make-fuzz-corpus.sh   (or `make fuzz-corpus`)
set -eu

srcdir=$(cd "$(dirname "$0")/../.." && pwd)
ccasim=${CCASIM:-ccasim}
case $ccasim in
*/*) ccasim=$(cd "$(dirname "$ccasim")" && pwd)/$(basename "$ccasim") ;;
esac
samples=$srcdir/traces/pytorch-2.11/samples
out=$srcdir/tests/fuzz/corpus-msgpack

if ! "$ccasim" --version >/dev/null 2>&1; then
	echo "make-fuzz-corpus: no working ccasim at '$ccasim' (set CCASIM)" >&2
	exit 1
fi

for pickle in "$samples"/*.pickle; do
	name=$(basename "$pickle" .pickle)
	target=$out/sample-$name.msgpack
	# Convert from inside samples/ so that the header's `source` is the
	# bare file name, not this machine's path.
	if ! (cd "$samples" && "$ccasim" convert "$name.pickle" -o "$target.tmp"); then
		rm -f "$target.tmp"
		echo "make-fuzz-corpus: ccasim convert failed on $pickle" >&2
		exit 1
	fi
	mv "$target.tmp" "$target"
	size=$(wc -c <"$target")
	head -c $((size * 2 / 3)) "$target" >"$out/sample-$name-truncated.msgpack"
	echo "  $target ($size bytes)"
done

# A snapshot of a release after 2.11 (pool ids, the header's newer_keys).
newer=$srcdir/tests/data/newer-2.14.pickle
(cd "$(dirname "$newer")" && "$ccasim" convert newer-2.14.pickle -o "$out/newer-2.14.msgpack")
echo "  $out/newer-2.14.msgpack ($(wc -c <"$out/newer-2.14.msgpack") bytes)"

python=/usr/bin/python3
[ -x "$python" ] || python=python3
if ! "$python" -c 'import msgpack' 2>/dev/null; then
	echo "make-fuzz-corpus: no python3-msgpack: hostile-*.msgpack left as they are" >&2
	exit 0
fi
rm -f "$out"/hostile-*.msgpack
"$python" - "$out/sample-snap_default_2.11.msgpack" "$out" <<'PY'
import copy, os, sys
import msgpack

src, out = sys.argv[1], sys.argv[2]
with open(src, "rb") as f:
    objs = list(msgpack.Unpacker(f, raw=False, strict_map_key=False))
HEADER, STRINGS, FRAMES, STACKS, SEGMENTS, ANNOTATIONS, DEV0 = range(7)


def write(name, parts, tail=b""):
    data = b"".join(p if isinstance(p, bytes) else msgpack.packb(p) for p in parts) + tail
    path = os.path.join(out, "hostile-%s.msgpack" % name)
    with open(path, "wb") as f:
        f.write(data)
    print("  %s (%d bytes)" % (path, len(data)))


def variant(name, edit, tail=b""):
    o = copy.deepcopy(objs)
    edit(o)
    write(name, o, tail)


def set_count(key, value):
    def edit(o):
        o[HEADER]["counts"][key] = value
    return edit


def set_event(pos, value, index=1):
    def edit(o):
        o[DEV0][index][pos] = value
    return edit


variant("events-count-huge", set_count("events", [0xFFFFFFFF]))
variant("events-count-short", set_count("events", [1]))
variant("strings-count-huge", set_count("strings", 0xFFFFFFFF))
variant("blocks-count-huge", set_count("blocks", 0xFFFFFFFF))
variant("stack-frames-count-zero", set_count("stack_frames", 0))
variant("devices-huge", lambda o: o[HEADER].__setitem__("devices", 65536))
variant("devices-more-than-arrays", lambda o: o[HEADER].__setitem__("devices", 2))
variant("version-zero", lambda o: o[HEADER].__setitem__("version", 0))
variant("event-action-out-of-range", set_event(0, 200))
variant("event-stack-out-of-range", set_event(5, 0xFFFFFFF0))
variant("event-string-out-of-range", set_event(6, 1 << 40))
variant("event-negative-stream", set_event(3, -1))
variant("event-time-nil", set_event(4, None))
variant("event-size-string", set_event(2, "big"))
variant("event-short", lambda o: o[DEV0].__setitem__(1, o[DEV0][1][:7]))
variant("event-long", lambda o: o[DEV0].__setitem__(1, o[DEV0][1] + [[0, 0], 5]))
variant("event-pool-id-bad", lambda o: o[DEV0].__setitem__(1, o[DEV0][1] + [[1]]))
variant("stack-frame-out-of-range", lambda o: o[STACKS].__setitem__(1, [0xFFFFFFFF]))
variant("frame-name-out-of-range", lambda o: o[FRAMES].__setitem__(1, [0xFFFFFFFF, 1, 2]))
variant("segment-block-state-bad", lambda o: o[SEGMENTS][0][11][0].__setitem__(4, 9))
variant("segment-blocks-not-array", lambda o: o[SEGMENTS][0].__setitem__(11, 7))
variant("settings-roundup-short",
        lambda o: o[HEADER]["allocator_settings"].__setitem__("roundup_power2_divisions", [1]))
variant("settings-conf-bad",
        lambda o: o[HEADER]["allocator_settings"].__setitem__("PYTORCH_CUDA_ALLOC_CONF", "foo:1"))
variant("trailing-garbage", lambda o: None, tail=b"\xc0\xc0")
# the newer_keys map of releases after 2.11
newer_keys = {"annotate_entries": 2, "forward_frames": 1, "host_segments": 1,
              "host_traces": None, "trace_alloc_overflowed": True,
              "trace_alloc_max_entries": 1 << 62, "rendered_metadata": 3,
              "unknown_keys": {"entry.x": 1}, "unknown_more": 0}
variant("newer-keys", lambda o: o[HEADER].__setitem__("newer_keys", newer_keys))
variant("newer-keys-bad-count",
        lambda o: o[HEADER].__setitem__("newer_keys", dict(newer_keys, host_segments="x")))
variant("newer-keys-unknown-many", lambda o: o[HEADER].__setitem__(
    "newer_keys", dict(newer_keys, unknown_keys={"k%d\x1b" % i: i + 1 for i in range(300)})))
variant("event-pool-id-every",
        lambda o: o.__setitem__(DEV0, [ev[:8] + [[i, -i]] for i, ev in enumerate(o[DEV0])]))
# Raw encodings that a Python packer would never produce: a string table
# whose array32 header claims 2^32-1 entries, and a map32 claiming 2^32-1
# pairs in the header's place (msgpack-c 4 tries to allocate 256 GiB).
write("strings-array32-huge", [objs[HEADER], b"\xdd\xff\xff\xff\xff"] + objs[FRAMES:])
write("header-map32-huge", [b"\xdf\xff\xff\xff\xff\xa6format\xacccasim-trace\x0a"])
PY
