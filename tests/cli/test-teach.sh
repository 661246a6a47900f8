#!/bin/sh
# test-teach.sh - what ccasim teaches is right (TAP).
#
# 1. Each release path of a malloc is named by the stage that made it, in
#    `explain --event N` and in `step --at N`, on real events of bundled
#    traces replayed under their recording's cap: garbage collection
#    (seedfrag.gc 1745), the oversize release (bert.capms 46509, 46520),
#    release all after a synchronisation (seedfrag.cap 1792; rscap.cap
#    1474, which completes a pending free and still runs out).
# 2. Every lab program of traces/lab runs, reproduces itself (replay
#    --check) and gives the reserved memory the rules give by hand, under
#    its settings and the what-ifs its comments name.
# 3. A bad lab fails with one line naming the file and line, exit 1.
#
# Needs $CCASIM and $top_srcdir (set by make check).
set -u

srcdir=${top_srcdir:-.}
. "$srcdir/tests/tap.sh"
patterns=$srcdir/traces/patterns-2.11
labs=$srcdir/traces/lab

# cap JSON: the recording's memory fraction, min(1, cap_bytes / total).
cap() {
	"$python" -c 'import json, sys
d = json.load(open(sys.argv[1]))
print(min(1, d["cap_bytes"] / d.get("total_memory", 150109880320)))' "$1"
}

# has TEXT: the last command's stdout holds the line fragment TEXT.
has() {
	grep -qF -- "$1" "$scratch/out" || {
		echo "# missing: $1"
		return 1
	}
}

# lacks TEXT: it does not.
lacks() {
	! grep -qF -- "$1" "$scratch/out" || {
		echo "# unexpected: $1"
		return 1
	}
}

if [ "$python" = false ]; then
	skip "release paths on real events" "no python3 to read the recorded caps"
else
	# --- 1. release paths: trace, event, what must be said, what must not
	gc=$(cap "$traces/seedfrag.gc.json")
	run 0 "$ccasim" explain --wide "$traces/seedfrag.gc.pickle.xz" --recorded-memory-fraction "$gc" \
		--event 1745 &&
		has "2. garbage_collect_cached_blocks: reserved 584.00 MiB is past the threshold (542.67 MiB), so it released 2 unsplit large-pool blocks (68.00 MiB)" &&
		has "3. alloc_block: cudaMalloc of 300.00 MiB succeeded" &&
		lacks "max_split_size or more" && lacks "release_cached_blocks" && lacks "tried again"
	report $? "seedfrag.gc 1745: garbage collection released two unsplit 34 MiB blocks, no retry"
	run 0 "$ccasim" step --wide "$traces/seedfrag.gc.pickle.xz" --recorded-memory-fraction "$gc" \
		--at 1745 --max-segments 1 &&
		has "Garbage collection (garbage_collect_cached_blocks) first released 2 unsplit large-pool blocks (68.00 MiB)" &&
		has "Model entries: segment_free 34.00 MiB; segment_free 34.00 MiB; segment_alloc 300.00 MiB" &&
		lacks "max_split_size or more"
	report $? "step at seedfrag.gc 1745 says the same"
	run 0 "$ccasim" explain --wide "$traces/seedfrag.gc.pickle.xz" --recorded-memory-fraction "$gc" \
		--limit 0 &&
		[ "$(grep -c 'Garbage collection (garbage_collect_cached_blocks)' "$scratch/out")" -eq 1 ] &&
		lacks "max_split_size or more"
	report $? "seedfrag.gc: one malloc released by garbage collection, none by the oversize release"
	for t in bert.gc:8 resnet152.gc:33; do
		run 0 "$ccasim" explain --wide "$traces/${t%:*}.pickle.xz" \
			--recorded-memory-fraction "$(cap "$traces/${t%:*}.json")" --limit 0 &&
			[ "$(grep -c 'Garbage collection (garbage_collect_cached_blocks)' "$scratch/out")" -eq "${t#*:}" ] &&
			lacks "release_available_cached_blocks released"
		report $? "${t%:*}: ${t#*:} mallocs released by garbage collection"
	done

	ms=$(cap "$traces/bert.capms.json")
	run 0 "$ccasim" explain --wide "$traces/bert.capms.pickle.xz" --recorded-memory-fraction "$ms" \
		--event 46520 &&
		has "3. alloc_block: cudaMalloc of 240.00 MiB refused: it would pass the memory-fraction cap." &&
		has "4. release_available_cached_blocks: the smallest cached block of the stream at least as large as the request and at least max_split_size (max_split_size 256.00 MiB): released 1 (478.00 MiB)." &&
		has "5. alloc_block again: succeeded." &&
		lacks "release_cached_blocks:" && lacks "garbage_collect_cached_blocks: reserved"
	report $? "bert.capms 46520: the oversize release frees one 478 MiB block, the second cudaMalloc succeeds"
	run 0 "$ccasim" explain --wide "$traces/bert.capms.pickle.xz" --recorded-memory-fraction "$ms" \
		--event 46509 &&
		has "no single cached block of max_split_size or more was as large as the request, so the largest ones, largest first, until the request's size was freed (max_split_size 256.00 MiB): released 2 (716.00 MiB)." &&
		has "The first cudaMalloc would pass the memory-fraction cap, so release_available_cached_blocks released 2 cached blocks of max_split_size or more (716.00 MiB) and tried again."
	report $? "bert.capms 46509: no block as large as the request, so the two largest go"

	sc=$(cap "$traces/seedfrag.cap.json")
	run 0 "$ccasim" explain --wide "$traces/seedfrag.cap.pickle.xz" --recorded-memory-fraction "$sc" \
		--event 1792 &&
		has "4. release_available_cached_blocks: skipped (it runs only with max_split_size_mb)." &&
		has "5. release_cached_blocks: synchronize_and_free_events completed 0 pending frees (num_sync_all_streams + 1), then every wholly free cached segment of the default pools (every stream) and of the freeable private pools was released: 49 (258.00 MiB)." &&
		has "6. alloc_block(isRetry): succeeded (num_alloc_retries + 1)." &&
		has "-> cudaMalloc 300.00 MiB after 1 retry" && lacks "garbage_collect_cached_blocks: reserved"
	report $? "seedfrag.cap 1792: release all after a synchronisation, then the retry succeeds"
	run 0 "$ccasim" step --wide "$traces/seedfrag.cap.pickle.xz" --recorded-memory-fraction "$sc" \
		--at 1792 --max-segments 1 &&
		has "so release_cached_blocks synchronized the streams and released every wholly free cached segment of the default pools and the freeable private pools (49, 258.00 MiB), then tried once more (num_alloc_retries)."
	report $? "step at seedfrag.cap 1792 says the same"

	rs=$(cap "$patterns/rscap.cap.json")
	run 0 "$ccasim" explain --wide "$patterns/rscap.cap.pickle.xz" --recorded-memory-fraction "$rs" \
		--event 1474 &&
		has "5. release_cached_blocks: synchronize_and_free_events completed 1 pending free (num_sync_all_streams + 1), then every wholly free cached segment of the default pools (every stream) and of the freeable private pools was released: 1 (2.00 MiB)." &&
		has "6. alloc_block(isRetry): refused again (num_alloc_retries + 1): it would pass the memory-fraction cap." &&
		has "7. out of memory: an oom entry, num_ooms + 1, OutOfMemoryError."
	report $? "rscap.cap 1474: the synchronisation completes a pending free, the retry fails, OOM"

	run 0 "$ccasim" step --wide "$traces/seedfrag.gc.pickle.xz" --memory-fraction "$gc" --at 1745 \
		--max-segments 1 &&
		has "(that address is the recorded run's; in this what-if the model's block is at 0x7eff94000000)"
	report $? "a what-if's step names the model's own address beside the recorded one"
fi
run 2 "$ccasim" explain "$traces/seedfrag.gc.pickle.xz" --event 99999 && one_line
report $? "explain --event past the trace's end is a usage error"
run 0 "$ccasim" explain --wide "$labs/bestfit.lab" --event 15 &&
	has "Event 15 is no request (alloc or oom entry): \`ccasim step --at 15\` shows what it did."
report $? "explain --event on a free says it is no request"
run 0 "$ccasim" step --wide "$labs/bestfit.lab" --at 16 &&
	has "3 free blocks there could hold it; 2 of them have that size, and the one at the lowest address wins" &&
	has "Segments (* touched by this entry, listed first; then address order;"
report $? "step names best fit's candidates, the address tie-break and its own order"

# --- 2. lab programs: file, settings ('-' recorded), peak reserved MiB,
# reserved MiB at the end, and why (the rules, by hand)
while read -r lab conf peak final why; do
	[ -n "$lab" ] || continue
	set -- "$ccasim" replay --json "$labs/$lab"
	[ "$conf" = - ] || set -- "$@" --config "$conf"
	# replay exits 3 where the lab runs out of memory (mempool.lab), else 0
	"$@" >"$scratch/out" 2>"$scratch/err"
	"$python" - "$scratch/out" "$peak" "$final" $? <<'EOF'
import json, sys
s = json.load(open(sys.argv[1]))["memory_stats"]
got = (s["reserved_bytes.all.peak"] >> 20, s["reserved_bytes.all.current"] >> 20)
want = (int(sys.argv[2]), int(sys.argv[3]))
if got != want:
    print("# got peak/final", got, "MiB, want", want)
    sys.exit(1)
status = 3 if s["num_ooms"] else 0
if int(sys.argv[4]) != status:
    print("# exit status", sys.argv[4], "with", s["num_ooms"], "OOMs, want", status)
    sys.exit(1)
EOF
	report $? "lab $lab ($conf): peak $peak MiB, $final MiB at the end: $why"
done <<'EOF'
stranded.lab   -                          20  20 three 6 MiB tensors share a 20 MiB segment that one keeps
batch.lab      -                         496 496 8x30 MiB segments, then 8x32 MiB (31 MiB in 2 MiB steps)
batch.lab      expandable_segments:True  260 260 8x31 MiB = 248 MiB in 13 pages of 20 MiB
maxsplit.lab   -                         400 400 the 200 MiB block split by 3x50 MiB, so a new 200 MiB
maxsplit.lab   max_split_size_mb:128     350 350 3x50 MiB segments of their own, the 200 MiB block reused
bestfit.lab    -                         112 112 12+30+30+40 MiB segments; 25 MiB reuses a 30 MiB one
expandable.lab -                          60  40 60 MiB in 3 pages, unmapped by empty_cache; 30 MiB maps 2 again
streams.lab    -                          32  32 a 16 MiB block cached on stream 0 does not serve stream 1
tails.lab      -                          12  12 an 11.5 MiB request takes the 12 MiB block whole
settings.lab   -                          12  12 the same block, then split once the setting is on
rounding.lab   -                         100 100 60 MiB refused for 40 MiB (exactly 20 MiB larger): 60+40
rounding.lab   max_split_size_mb:20,max_non_split_rounding_mb:21 102 102 60 MiB serves 40 MiB; 40.5 MiB needs 42
gc.lab         -                         260 260 6x40 MiB; GC frees 2x40 for 100 MiB: 160+100
pools.lab      -                          82  52 MemPool 30 + graph 20 + generator 2 stay; default 30 released
mempool.lab    -                          72  70 60 released by the retry; 70 MiB; the pool's 2 MiB released
graph.lab      -                          42  42 stream 2's 20 MiB segment, the graph's 20 MiB, generator 2 MiB
recstream.lab  -                          16  16 the pending free completes before the second 16 MiB request
EOF
if [ "$python" = false ]; then :; fi
for f in "$labs"/*.lab; do
	run 0 "$ccasim" replay --check "$f" && grep -q "^check: passed" "$scratch/out"
	report $? "lab $(basename "$f") reproduces itself entry by entry (replay --check)"
done
run 0 "$ccasim" info --json "$labs/batch.lab" && grep -q '"format": "lab"' "$scratch/out"
report $? "info says a lab is a lab"
xz -c "$labs/stranded.lab" >"$scratch/stranded.lab.xz" 2>/dev/null &&
	run 0 "$ccasim" replay --check "$scratch/stranded.lab.xz"
report $? "a compressed lab reads like a plain one"

# --- 2b. what the course says, each pinned on a lab event (doc/allocator-model.md,
# doc/tutorial.md): the split rule follows the setting; the max_non_split_rounding
# bound is strict; garbage collection overshoots; release_cached_blocks keeps
# the private pools in use; a use_mem_pool region skips the release step;
# only the captured stream's requests go to the graph's pool; allocated
# minus requested is more than the rounding
stat() { # stat KEY: KEY of the last `replay --json`
	"$python" -c 'import json, sys; print(json.load(open(sys.argv[1]))["memory_stats"][sys.argv[2]])' \
		"$scratch/out" "$1"
}
run 0 "$ccasim" step "$labs/settings.lab" --line 11 &&
	has "It is handed out whole (512.00 KiB more than needed)"
report $? "settings.lab line 11: without the setting, a 12 MiB block serves 11.5 MiB whole"
run 0 "$ccasim" step "$labs/settings.lab" --line 14 &&
	has "made by lab line 14: alloc 11.5M" &&
	has "It is split: the request takes its first 11.50 MiB, the other 512.00 KiB stays free." &&
	has "allocated 11.50 MiB, active 11.50 MiB, requested 11.50 MiB"
report $? "settings.lab line 14: with expandable_segments on, the same ordinary block is split at 512 KiB"
run 0 "$ccasim" explain "$labs/rounding.lab" --line 11 &&
	has "A free block of 60.00 MiB would hold it, but it is larger than the request by max_non_split_rounding (20.00 MiB) or more"
report $? "rounding.lab line 11: a block exactly max_non_split_rounding larger is refused"
run 0 "$ccasim" step "$labs/rounding.lab" --line 12 &&
	has "It is handed out whole (19.50 MiB more than needed)"
report $? "rounding.lab line 12: a block 19.5 MiB larger is handed out whole"
run 0 "$ccasim" explain "$labs/gc.lab" --line 15 &&
	has "so it released 2 unsplit large-pool blocks (80.00 MiB): in each pass every one whose age" &&
	has "without stopping at the 39.58 MiB excess"
report $? "gc.lab line 15: garbage collection frees 80 MiB for a 39.58 MiB excess"
run 0 "$ccasim" step "$labs/pools.lab" --line 15 &&
	has "The program released cached memory here (empty_cache()" &&
	has "After it: reserved 52.00 MiB in 3 segments"
report $? "pools.lab line 15: empty_cache keeps the MemPool's and the graph's segments (pools in use)"
run 3 "$ccasim" replay --json "$labs/mempool.lab" && [ "$(stat num_ooms)" = 1 ] &&
	[ "$(stat num_alloc_retries)" = 1 ]
report $? "mempool.lab: the pool's request fails without a retry, the default one retries"
run 0 "$ccasim" explain "$labs/mempool.lab" --line 14 &&
	has "It went to private pool (0, 1), one the program made (torch.cuda.MemPool()" &&
	has "5. release_cached_blocks: skipped (a capture or a use_mem_pool region was underway)." &&
	lacks "a defragmented cache would have served it"
report $? "mempool.lab line 14: the request inside use_mem_pool names its pool and skips the release"
run 0 "$ccasim" explain "$labs/graph.lab" --line 13 &&
	has "It went to private pool (1, 0), the one a CUDA graph capture made for itself"
report $? "graph.lab line 13: the captured stream's request goes to the graph's pool"
run 0 "$ccasim" step "$labs/graph.lab" --line 15 &&
	has "Served from the cache" && has "It went to the default pools"
report $? "graph.lab line 15: another stream's request during the capture goes to the default pool"
run 0 "$ccasim" step "$labs/tails.lab" --line 9 &&
	has "allocated 12.00 MiB, active 12.00 MiB, requested 11.50 MiB"
report $? "tails.lab line 9: allocated exceeds requested by an unsplit tail, not by rounding"

# --- 2c. the lab's other verbs and what step and explain print for them
run 0 "$ccasim" step "$labs/recstream.lab" --at 3 &&
	has "Event 3 of 5: free_completed" && has "made by lab line 9: alloc 16M"
report $? "recstream.lab: the record_stream free is completed by the next malloc's process_events"
printf '# ccasim lab\nsettings expandable_segments:True\nalloc 30M x2\nfree 1\nalloc 45M\nalloc 1048577\n' \
	>"$scratch/pages.lab"
run 0 "$ccasim" explain "$scratch/pages.lab" --line 6 &&
	has "It rounds up to 1.00 MiB, 1049088 B (blocks are multiples of 512 B)."
report $? "explain prints the rounded size in bytes (1 MiB + 1 B: 1049088 B)"
run 0 "$ccasim" explain "$scratch/pages.lab" &&
	has "free, releasable (segments, whole pages)        20.00 MiB"
report $? "explain counts the whole free pages of an expandable segment as releasable"
run 0 "$ccasim" step "$scratch/pages.lab" --line 4 --width 30 &&
	has "|..........|....#####|#########| 2 blocks, 30.00 MiB used, 30.00 MiB free; 3 mapped pages of 20.00 MiB"
report $? "step draws the page boundaries of an expandable segment"
run 0 "$ccasim" step "$labs/expandable.lab" --line 12 &&
	has "The program released cached memory here (empty_cache()" && has "After it: reserved 0 bytes"
report $? "step on an empty_cache unmap shows the state after it"
run 0 "$ccasim" step "$labs/stranded.lab" --at 7 --config expandable_segments:True &&
	lacks "segment was released" && has "reserved 20.00 MiB"
report $? "a what-if's free whose address differs says no segment was released"
run 2 "$ccasim" step "$labs/graph.lab" --line 14 && one_line &&
	grep -qF "line 14 made no trace entry" "$scratch/err" &&
	grep -qF "the next entry is event 10, of line 15" "$scratch/err"
report $? "step --line of a line that made no entry says so"
run 2 "$ccasim" step "$traces/seedfrag.gc.pickle.xz" --line 3 && one_line &&
	grep -qF "not a lab" "$scratch/err"
report $? "step --line on a recorded trace says it is no lab"

# --- 3. bad labs: program (\n for newlines), the line named, the message
while IFS='|' read -r prog line msg; do
	[ -n "$prog" ] || continue
	printf "# ccasim lab\n$prog\n" >"$scratch/bad.lab"
	run 1 "$ccasim" replay "$scratch/bad.lab" && one_line &&
		grep -qF "bad.lab: line $line: $msg" "$scratch/err" &&
		! grep -q 'CRITICAL\|WARNING' "$scratch/err"
	report $? "bad lab, line $line: $msg"
done <<'EOF'
alloc 16Q|2|size '16Q': unknown unit
alloc|2|expected 'alloc SIZE'
alloc 1M x|2|count '' is no number
alloc 1M\nfree 2|3|no tensor 2
alloc 1M\nfree 1\nfree 1|4|tensor 1 is already free
alloc 1M\nfree 3-1|3|range 3-1 runs backwards
alloc 1M\nsettings max_split_size_mb:banana|3|settings:
capture 0|2|stream 0 (the default stream) cannot capture
end|2|no capture or mempool region to end
mempool 1\nalloc 1M|4|a capture or mempool region has no 'end'
mempool 1\nempty_cache|3|empty_cache inside a capture or mempool region
alloc 1M\nrecord_stream 2 1|3|tensor 2 is not live
fraction 2|2|fraction '2': expected a number, 0 < F <= 1
release_mempool 1|2|no live pool 1
mempool 1\nend\nrelease_mempool 1\nmempool 1|5|pool 1 was released
capture 1\ncapture 2|3|a capture is underway already
settings max_split_size_mb:banana|2|settings:
malloc 1M|2|unknown command
alloc 0|2|size '0': must be 1 byte to 1 TiB
alloc 2T|2|size '2T': must be 1 byte to 1 TiB
alloc 2P|2|size '2P': unknown unit
alloc 100G x2|2|tensor 2 (100G) does not fit: out of memory on the simulated H200
alloc 1.3|2|size '1.3' is not a whole number of bytes
EOF

tap_done
