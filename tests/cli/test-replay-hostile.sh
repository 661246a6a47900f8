#!/bin/sh
# test-replay-hostile.sh - `ccasim replay` on traces that would break the
# model's invariants (doc/hardening.md): each hostile trace tests/unit/test-hostile-traces
# builds (sentinel addresses, a second free, absurd sizes, wrapping or
# overlapping segments, bad recorded settings, a 10 MB recorded conf) must
# exit 1 with one short line on stderr naming the trace entry, the final
# segment or the settings key, no GLib warning or critical, and the same
# under --invariants (no abort).  Needs $CCASIM, $top_srcdir and
# $top_builddir (set by make check).
set -u

srcdir=${top_srcdir:-.}
. "$srcdir/tests/tap.sh"
builddir=${top_builddir:-.}

# names: what the error must name
names() {
	grep -Eq 'event [0-9]+: |final segment [0-9]+ |garbage_collection_threshold|roundup_power2_divisions|max_split_size |\(10485760 bytes\)' "$scratch/err"
}

# clean: no GLib message, and the line is short
clean() {
	! grep -Eq 'CRITICAL|WARNING|Bail out' "$scratch/err" && [ "$(wc -c <"$scratch/err")" -lt 1000 ]
}

mkdir -p "$scratch/corpus"
"$builddir/tests/unit/test-hostile-traces" --write-corpus "$scratch/corpus" >/dev/null
for trace in "$scratch"/corpus/hostile-model-*.msgpack; do
	name=$(basename "$trace" .msgpack)
	run 1 "$ccasim" replay "$trace"
	report $? "$name: replay exits 1"
	one_line
	report $? "$name: ... with one line on stderr"
	names
	report $? "$name: ... naming the entry, segment or key"
	clean
	report $? "$name: ... short, with no GLib warning or critical"
	run 1 "$ccasim" replay --invariants "$trace"
	report $? "$name: replay --invariants exits 1 (no abort)"
	clean
	report $? "$name: ... with no GLib warning or critical"
done

# a header whose counts.pool_id_entries lies (doc/trace-format.md §2.2):
# the replay reads the events once and finds it at their end, before it
# prints anything
xz -dc "$srcdir/traces/pytorch-2.11/bert.default.pickle.xz" >"$scratch/bert.pickle"
"$ccasim" convert "$scratch/bert.pickle" -o "$scratch/lie.msgpack"
at=$(grep -abo pool_id_entries "$scratch/lie.msgpack" | head -1 | cut -d: -f1)
printf '\005' | dd of="$scratch/lie.msgpack" bs=1 seek=$((at + 15)) conv=notrunc 2>/dev/null
"$ccasim" replay --json "$scratch/lie.msgpack" >"$scratch/out" 2>"$scratch/err"
[ $? -eq 1 ]
report $? "a lying counts.pool_id_entries: replay exits 1"
one_line && grep -Eq 'lie\.msgpack: offset [0-9]+: the events hold 0 pool_id entries, the header.s counts\.pool_id_entries says 5' "$scratch/err"
report $? "... with one line naming the offset and the key"
[ ! -s "$scratch/out" ] && clean
report $? "... printing nothing, with no GLib warning or critical"
tap_done
