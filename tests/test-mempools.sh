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


# A pool whose segments are all large (24 and 30 MiB), released before the
# dump: its release frees no small segment, so a plain snapshot cannot tell
# it from an empty_cache(), but ccasim-record's use_mem_pool regions and
# mempool_release call name it.  The pool's second region asks 3 MiB, which
# PyTorch served from the pool's free 24 MiB segment (entry 10) while the
# default pool had a free 24 MiB segment of its own.
"$python" - "$scratch/rec.pickle" "$scratch/plain.pickle" <<'GEN'
import pickle, sys
MIB = 1 << 20
t = [0]
def e(action, addr, size):
    t[0] += 1
    return {"action": action, "addr": addr, "size": size, "stream": 0,
            "time_us": 1000 + t[0], "compile_context": "N/A", "user_metadata": ""}
D1, S1, S2 = 0x7f0000000000, 0x7f0002000000, 0x7f0004000000
tr = [e("segment_alloc", D1, 24 * MIB), e("alloc", D1, 24 * MIB),
      e("segment_alloc", S1, 24 * MIB), e("alloc", S1, 24 * MIB),
      e("segment_alloc", S2, 30 * MIB), e("alloc", S2, 30 * MIB),
      e("free_requested", D1, 24 * MIB), e("free_completed", D1, 24 * MIB),
      e("free_requested", S1, 24 * MIB), e("free_completed", S1, 24 * MIB),
      e("alloc", S1, 3 * MIB),
      e("free_requested", S1, 3 * MIB), e("free_completed", S1, 3 * MIB),
      e("free_requested", S2, 30 * MIB), e("free_completed", S2, 30 * MIB),
      e("segment_free", S1, 24 * MIB), e("segment_free", S2, 30 * MIB)]
seg = {"device": 0, "address": D1, "total_size": 24 * MIB, "allocated_size": 0,
       "active_size": 0, "requested_size": 0, "stream": 0, "segment_type": "large",
       "segment_pool_id": (0, 0), "is_expandable": False, "frames": [],
       "blocks": [{"address": D1, "size": 24 * MIB, "requested_size": 24 * MIB,
                   "state": "inactive", "frames": []}]}
def a(name, allocs, frees):
    return {"stage": "START", "device": 0, "time_us": 1000,
            "name": f"ccasim:{name.split()[0]} allocs={allocs} frees={frees} ooms=0"
                    + "".join(" " + w for w in name.split()[1:])}
ann = [a("start v=1 torch=2.11.0+cu130 conf= max_entries=10000000 stacks=none", 0, 0),
       a("mempool_create pool=0,1", 1, 0),
       a("use_mem_pool_enter pool=0,1", 1, 0), a("use_mem_pool_exit pool=0,1", 3, 0),
       a("use_mem_pool_enter pool=0,1", 3, 2), a("use_mem_pool_exit pool=0,1", 4, 2),
       a("mempool_release pool=0,1", 4, 4), a("dump reason=exit", 4, 4)]
snap = {"segments": [seg], "device_traces": [tr],
        "allocator_settings": {"PYTORCH_CUDA_ALLOC_CONF": "", "max_split_size": -1,
                              "garbage_collection_threshold": 0.0,
                              "expandable_segments": False,
                              "roundup_power2_divisions": {}}, "external_annotations": ann}
pickle.dump(snap, open(sys.argv[1], "wb"), protocol=4)
del snap["external_annotations"]
pickle.dump(snap, open(sys.argv[2], "wb"), protocol=4)
GEN
"$ccasim" replay --check "$scratch/rec.pickle" >"$scratch/rec.out" 2>&1
report $? "a pool of large segments alone, named by ccasim-record's records: replay --check passes"
"$ccasim" replay --check "$scratch/plain.pickle" >"$scratch/plain.out" 2>&1
[ $? -eq 1 ] && grep -q '^check: FAILED at event 10: .*trace: alloc size=3145728 addr=0x7f0002000000' "$scratch/plain.out"
report $? "the same run as a plain snapshot: the 3 MiB request of entry 10 goes to the default pool (a known limit, doc/private-pools.md)"
"$ccasim" replay --json --whatif "$scratch/rec.pickle" >"$scratch/rec.json" 2>&1
"$python" -c '
import json, sys
d = json.load(open(sys.argv[1]))
m = d["memory_stats"]
sys.exit(not (d["pool_releases"] == 1 and d["empty_cache_calls"] == 0
              and m["reserved_bytes.all.current"] == 24 << 20 and m["num_device_free"] == 2))
' "$scratch/rec.json"
report $? "its what-if releases the pool at the mempool_release call and keeps the default pool's cached 24 MiB segment"

# An OOM inside a use_mem_pool region is the pool's: traces/lab/mempool.lab
# (measured on the H200: one OOM, no retry inside the region) without its
# first request into the pool, so that the failing request is the region's
# first and no earlier request of the pool tells where it went.
grep -v '^alloc 1M$' "$srcdir/traces/lab/mempool.lab" >"$scratch/first.lab"
run 0 "$ccasim" replay --json "$scratch/first.lab" && "$python" -c '
import json, sys
m = json.load(open(sys.argv[1]))["memory_stats"]
assert m["num_ooms"] == 1 and m["num_alloc_retries"] == 1, (m["num_ooms"], m["num_alloc_retries"])
' "$scratch/out"
report $? "an oom entry inside a use_mem_pool region goes to the region's pool: no release, no retry"

tap_done
