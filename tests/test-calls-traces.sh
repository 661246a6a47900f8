#!/bin/sh
# test-calls-traces.sh - ccasim against PyTorch 2.11 on runs recorded with
# ccasim-record (traces/calls-2.11, issue 14): programs that call
# empty_cache() (also with nothing cached), _set_allocator_settings(),
# set_per_process_memory_fraction() and the stats resets mid-run, sequences
# modelled on PyTorch's allocator tests, and CUDA-graph and
# torch.compile runs whose capture-time empty_cache() calls plain snapshots
# cannot show.  Every recording replays with --check on all memory_stats
# keys; every what-if from W.default whose live run made the same requests
# equals it on the reserved-side keys; each rank of a two-process OOM
# replays to PyTorch's own OOM message.
set -u

srcdir=${top_srcdir:-.}
. "$srcdir/tests/tap.sh"

dir=$srcdir/traces/calls-2.11

if ! "$python" -c 'import lzma, pickle' 2>/dev/null; then
	skip "calls traces" "no python3 with lzma"
	tap_done
fi
"$python" "$srcdir/validate/patterns-eval.py" "$ccasim" "$dir" >"$scratch/eval" 2>"$scratch/err"

report_eval "$scratch/eval"
# whole runs: every recording compares all 122 keys, none unknown
! grep -E ' recorded: ' "$scratch/eval" | grep -qv 'check passed; 122 keys equal, 0 differ, 0 unknown'
report $? "every recording compares all 122 memory_stats keys"
[ "$n" -ge 37 ]
report $? "every case measured ($n)"

# the settings a recording began with are the recorder's start conf, not
# the dump's (calls.exp ended under roundup_power2_divisions:4 set mid-run):
# sweep's recorded row is the recording itself
"$ccasim" sweep --json --config "" "$dir/calls.exp.pickle.xz" >"$scratch/sweep.json" 2>&1
"$python" -c '
import json, sys
rows = json.load(open(sys.argv[1]))["rows"]
rec = [r for r in rows if r["origin"] == "recorded"][0]
torch = json.load(open(sys.argv[2]))["memory_stats"]["reserved_bytes.all.peak"]
sys.exit(not (rec["settings"] == "expandable_segments:True" and rec["peak_reserved"] == torch))
' "$scratch/sweep.json" "$dir/calls.exp.json"
report $? "sweep of calls.exp: the recorded row is expandable_segments:True (the start conf) at PyTorch's 1168 MiB"

# PyTorch's OOM message, less the sentences on each process's memory
# (NVML's, in no snapshot) and its advice, equals what replay says
for rank in rank00 rank01; do
	want=$(sed -e 's/ Process [0-9]* has [^.]*\.[0-9]* [KMG]iB memory in use\.//g' \
		-e 's/ Including non-PyTorch memory, this process has [^.]*\.[0-9]* [KMG]iB memory in use\.//' \
		-e 's/ If reserved but unallocated.*//' "$dir/oom2/$rank.message.txt")
	"$ccasim" replay "$dir/oom2/$rank.oom.pickle.xz" >"$scratch/$rank" 2>&1
	got=$(grep '^  CUDA out of memory' "$scratch/$rank" | sed 's/^  //')
	[ "$got" = "$want" ]
	report $? "$rank's OOM dump replays to PyTorch's message: $want"
done

tap_done
