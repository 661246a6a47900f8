#!/bin/sh
# test-mempools.sh - two MemPools used in turns, the first deleted before
# the dump, in real PyTorch 2.11 runs (traces/uncertain-2.11 mempool-plain.*,
# plain snapshots, and mempool.*, ccasim-record's dumps; six settings x 3
# repeats).  A request goes to the pool of the recorded segment its address
# lies in; the deleted pool's segments are told by the burst that releases
# them (doc/private-pools.md).  For every trace: replay --check passes (a
# plain snapshot of a capped run with its --memory-fraction), and its
# memory_stats equal the live run's (a plain snapshot: all but
# num_sync_all_streams, below); every what-if from W.default.rN to another
# setting equals that setting's live run on the reserved-side keys.
set -u

srcdir=${top_srcdir:-.}
. "$srcdir/tests/tap.sh"

dir=$srcdir/traces/uncertain-2.11

if ! "$python" -c 'import lzma, pickle' 2>/dev/null; then
	skip "mempools" "no python3 with lzma"
	tap_done
fi

# gpu/check-uncertain.sh, the brief's own check, on each trace
for f in "$dir"/mempool-plain.*.pickle.xz "$dir"/mempool.*.pickle.xz; do
	line=$(sh "$srcdir/gpu/check-uncertain.sh" --one "$ccasim" "$f")
	name=$(printf '%s\n' "$line" | cut -f1)
	rc=$(printf '%s\n' "$line" | cut -f2)
	[ "$rc" = 0 ]
	report $? "$name: replay --check passes ($(printf '%s\n' "$line" | cut -f5 | cut -c1-160))"
done

"$python" "$srcdir/tools/patterns-eval.py" "$ccasim" "$dir" mempool >"$scratch/eval" 2>"$scratch/err"

# A plain snapshot does not show the empty_cache() the program called right
# after `del p1`: the default pool had nothing cached, so it freed nothing
# and left no entry, and num_sync_all_streams is 1 where PyTorch counted 2
# (~MemPool's emptyCache(id) and that call).  ccasim-record records the
# call (mempool.*: all 122 keys).  Any other key that differs fails.
while read -r name kind rest; do
	case "$name $kind" in
	mempool-plain.*" recorded:")
		[ "$rest" = "check passed; 121 keys equal, 1 differ, 0 unknown (num_sync_all_streams: torch 2 model 1)" ]
		report $? "$name recorded: all keys equal but num_sync_all_streams (an empty_cache() that freed nothing has no entry): $rest" ;;
	mempool.*" recorded:")
		[ "$rest" = "check passed; 122 keys equal, 0 differ, 0 unknown" ]
		report $? "$name recorded: $rest" ;;
	*" what-if:")
		[ "$rest" = exact ]
		report $? "$name what-if from the default run: $rest" ;;
	esac
done <"$scratch/eval"
grep -q '^summary: .*what-ifs exact 30/30' "$scratch/eval"
report $? "every what-if measured: $(grep '^summary' "$scratch/eval")"

# a replay nobody watches reads the trace once, meets the pool's release
# burst, and replays again with the entries read: the recording, not a
# what-if
"$ccasim" replay --json "$dir/mempool-plain.default.r0.pickle.xz" >"$scratch/plain.json" 2>&1
"$python" -c '
import json, sys
d = json.load(open(sys.argv[1]))
sys.exit(not (d["whatif"] is False and d["replays"] == 2 and d["pool_releases"] == 1
              and not d["recording_not_reproduced"]
              and d["memory_stats"]["reserved_bytes.all.peak"] == 1325400064))
' "$scratch/plain.json"
report $? "replay of mempool-plain.default.r0 without --check: the recording (2 reads, 1 pool release), PyTorch's reserved peak"

tap_done
