#!/bin/sh
# test-convert-info.sh - end-to-end tests of `ccasim convert` and `ccasim info`
# (TAP).  A pickle and its msgpack conversion must summarise identically;
# bad inputs exit 1 (2 for usage errors) with one line on stderr and leave
# no output file behind.  Needs $CCASIM and $top_srcdir (set by make check).
set -u

srcdir=${top_srcdir:-.}
. "$srcdir/tests/tap.sh"
bad=$srcdir/tests/data/msgpack-bad

# no_output DIR: DIR holds no file (no output, no temporary).
no_output() {
	[ -z "$(ls -A "$1")" ]
}

# normalized_info FILE OUT: `info --json` of FILE, without the keys that
# name the file ("file", "format", "source"), sorted, into OUT.  Without
# python the one-line object is cut with sed (those keys come first).
normalized_info() {
	"$ccasim" info --json "$1" >"$scratch/info.json" 2>"$scratch/err" || return 1
	if [ "$python" = false ]; then
		sed 's/^{"file": .*, "pickle_protocol": /{"pickle_protocol": /' \
			"$scratch/info.json" >"$2"
		return
	fi
	"$python" -c '
import json, sys
d = json.load(open(sys.argv[1]))
for k in ("file", "format", "source"):
    d.pop(k)
json.dump(d, open(sys.argv[2], "w"), sort_keys=True, indent=1)
' "$scratch/info.json" "$2"
}

# same_info PICKLE NAME: convert PICKLE, then compare info --json of both.
same_info() {
	run 0 "$ccasim" convert "$1" -o "$scratch/$2.msgpack" &&
		normalized_info "$1" "$scratch/$2.pickle.json" &&
		normalized_info "$scratch/$2.msgpack" "$scratch/$2.msgpack.json" &&
		cmp -s "$scratch/$2.pickle.json" "$scratch/$2.msgpack.json" || {
		diff "$scratch/$2.pickle.json" "$scratch/$2.msgpack.json" | head -20 | sed 's/^/# /'
		return 1
	}
}

sample=$traces/samples/snap_default_2.11.pickle
real=$traces/multistream.default.pickle.xz

# --help and usage errors
run 0 "$ccasim" convert --help && grep -q 'Usage:' "$scratch/out"
report $? "convert --help"
run 0 "$ccasim" info --help && grep -q -- '--json' "$scratch/out"
report $? "info --help"
run 2 "$ccasim" convert && one_line
report $? "convert without arguments is a usage error"
run 2 "$ccasim" convert "$sample" && one_line
report $? "convert without -o is a usage error"
run 2 "$ccasim" convert "$sample" "$sample" -o "$scratch/x.msgpack" && one_line &&
	[ ! -e "$scratch/x.msgpack" ]
report $? "convert with two inputs is a usage error"
run 2 "$ccasim" convert --bogus "$sample" -o "$scratch/x.msgpack" && one_line
report $? "convert with an unknown option is a usage error"
run 2 "$ccasim" info && one_line
report $? "info without FILE is a usage error"
run 2 "$ccasim" info --bogus "$sample" && one_line
report $? "info with an unknown option is a usage error"

# every command's --help lists the shared options it takes (declared once,
# tools/cli.c) and its own; a bad option is one usage line naming it
for cmd in "replay --device --memory-fraction --config --whatif --json --max-input-size --check" \
	"plot --config --keep-going --pytorch-version --segments" \
	"explain --device-memory --max-inflate-ratio --limit" \
	"step --config --at" "export --memory-fraction --format" \
	"sweep --jobs --no-progress --json --set" "fit --jobs --json --list-gpus" \
	"diff --address-model --json --top" "convert --max-input-size --output"; do
	set -- $cmd
	name=$1
	shift
	ok=0
	run 0 "$ccasim" $name --help || ok=1
	for opt in "$@"; do
		grep -q -- "$opt" "$scratch/out" || { echo "# $name --help lacks $opt"; ok=1; }
	done
	report $ok "$name --help lists its shared and its own options"
	run 2 "$ccasim" $name --no-such-option "$sample" && one_line &&
		grep -q "^ccasim $name: .*no-such-option" "$scratch/err"
	report $? "$name: an unknown option is one usage line"
done
run 2 "$ccasim" explain --config a --config b "$sample" && one_line &&
	grep -q -- '--config: give it once' "$scratch/err"
report $? "a command that takes one --config refuses two"

# conversion and equal summaries
same_info "$sample" sample
report $? "info --json: sample pickle and its msgpack agree"
same_info "$traces/samples/snap_expandable_2.11.pickle" expandable
report $? "info --json: expandable sample and its msgpack agree"
same_info "$real" multistream
report $? "info --json: multistream.default and its msgpack agree"
same_info "$traces/dyninfer.cap.pickle.xz" dyninfer
report $? "info --json: dyninfer.cap and its msgpack agree"

[ "$python" = false ] && echo '# no python3: checking with grep' &&
	grep -q '"segment_unmap": [0-9]' "$scratch/info.json" ||
"$python" -c '
import json, sys
d = json.load(open(sys.argv[1]))
acts = ["alloc", "free_requested", "free_completed", "segment_alloc", "segment_free",
        "segment_map", "segment_unmap", "oom", "snapshot"]
assert d["format"] == "msgpack", d["format"]
dev = d["devices"][0]
assert sorted(dev["actions"]) == sorted(acts), dev["actions"]
assert sum(dev["actions"].values()) == dev["events"] > 0
for k in ("segments", "blocks", "frames", "stacks"):
    assert isinstance(d[k], int), k
s = d["allocator_settings"]
assert s is None or "PYTORCH_CUDA_ALLOC_CONF" in s and len(s["roundup_power2_divisions"]) == 16
' "$scratch/info.json" 2>"$scratch/err"
report $? "info --json has every action key and the settings"

run 0 "$ccasim" info "$scratch/multistream.msgpack" &&
	grep -q '^format: msgpack' "$scratch/out" && grep -q 'free_requested' "$scratch/out" &&
	grep -q '^segments: ' "$scratch/out"
report $? "info prints a human summary of a trace"
run 0 "$ccasim" info "$real" && grep -q '^format: pickle, pickle protocol 4' "$scratch/out"
report $? "info prints a human summary of a pickle"

run 0 "$ccasim" convert "$scratch/multistream.msgpack" -o "$scratch/again.msgpack" &&
	cmp -s "$scratch/multistream.msgpack" "$scratch/again.msgpack"
report $? "re-converting a trace gives the same bytes"
run 0 "$ccasim" convert "$scratch/sample.msgpack" -o "$scratch/sample.msgpack" &&
	normalized_info "$scratch/sample.msgpack" "$scratch/self.json" &&
	cmp -s "$scratch/self.json" "$scratch/sample.pickle.json"
report $? "converting a trace onto itself keeps it intact"

# bad inputs: exit 1, one line, no output
mkdir "$scratch/outdir"
run 1 "$ccasim" convert "$bad/event-bad-action.msgpack" -o "$scratch/outdir/o.msgpack" &&
	one_line && grep -q 'event-bad-action.msgpack: offset [0-9]*: .*event 0 of device 0' \
	"$scratch/err" && no_output "$scratch/outdir"
report $? "convert of a corrupt trace: exit 1, one line, no output"
run 1 "$ccasim" convert "$bad/map32-huge-count.msgpack" -o "$scratch/outdir/o.msgpack" &&
	one_line && no_output "$scratch/outdir"
report $? "convert of a huge-count map: exit 1, no output"
run 1 "$ccasim" convert "$scratch/missing.pickle" -o "$scratch/outdir/o.msgpack" &&
	one_line && no_output "$scratch/outdir"
report $? "convert of a missing file: exit 1, no output"
head -c 3000 "$sample" >"$scratch/cut.pickle"
run 1 "$ccasim" convert "$scratch/cut.pickle" -o "$scratch/outdir/o.msgpack" &&
	one_line && no_output "$scratch/outdir"
report $? "convert of a truncated pickle: exit 1, no output"
head -c 2000 "$scratch/sample.msgpack" >"$scratch/cut.msgpack"
run 1 "$ccasim" convert "$scratch/cut.msgpack" -o "$scratch/outdir/o.msgpack" &&
	one_line && no_output "$scratch/outdir"
report $? "convert of a truncated trace: exit 1, no output"
run 1 "$ccasim" convert "$sample" -o /dev/null/o.msgpack && one_line
report $? "convert into an impossible path: exit 1"
echo old >"$scratch/outdir/keep.msgpack"
run 1 "$ccasim" convert "$bad/trailing-garbage.msgpack" -o "$scratch/outdir/keep.msgpack" &&
	[ "$(cat "$scratch/outdir/keep.msgpack")" = old ] &&
	[ "$(ls -A "$scratch/outdir")" = keep.msgpack ]
report $? "a failed convert keeps an existing output file as it was"
run 1 "$ccasim" info "$bad/event-truncated.msgpack" && one_line
report $? "info of a truncated trace: exit 1, one line"
run 1 "$ccasim" info --json "$bad/wrong-version.msgpack" && one_line &&
	grep -q 'version 2' "$scratch/err" && [ ! -s "$scratch/out" ]
report $? "info --json of a future version: exit 1, nothing on stdout"

tap_done
