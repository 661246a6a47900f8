#!/bin/sh
# test-record-hostile.sh - ccasim-record under hostile conditions, without
# torch or a GPU (TAP), against tests/data/fake-torch-record: a storm of
# --dump-on-signal signals during recorded calls (no hang, no lost or
# partial dump, no temporary file left), two processes of one wrapper with
# no rank (each keeps its dumps), RANK values that are not ranks (refused,
# never rank 0 or a path), planted symbolic links at the temporary and
# final names (never followed), and the dumps' and the dump folder's modes
# (0600 and 0700 unless --dump-mode).  Needs $CCASIM, $top_srcdir and
# $top_builddir (set by make check).
set -u

srcdir=${top_srcdir:-.}
export PYTHONDONTWRITEBYTECODE=1
. "$srcdir/tests/tap.sh"

. "$srcdir/tests/record-env.sh"

if [ "$python" = false ]; then
	skip "ccasim-record under hostile conditions" "no python3"
	tap_done
fi

# loads FILE...: each file unpickles (a plain, .gz or .xz dump), ends with
# its `dump` record, whose counts are those of its trace (the programs here
# allocate only while recorded), and `ccasim info` reads it.
loads() {
	for f in "$@"; do
		"$python" -c 'import gzip, lzma, pickle, sys
p = sys.argv[1]
op = gzip.open if p.endswith(".gz") else lzma.open if p.endswith(".xz") else open
with op(p, "rb") as f:
    s = pickle.load(f)
last = s["external_annotations"][-1]["name"].split(" ")
tr = [e["action"] for e in s["device_traces"][0]]
want = ["allocs=%d" % tr.count("alloc"), "frees=%d" % tr.count("free_requested"),
        "ooms=%d" % tr.count("oom")]
if last[0] != "ccasim:dump" or last[1:4] != want:
    sys.exit("%s: %s, trace %s" % (p, last, want))' "$f" ||
			return 1
		"$ccasim" info "$f" >/dev/null 2>&1 || return 1
	done
}

# ------------------------------------------------------------ a storm of signals
# The program loops over recorded calls (allocations, empty_cache(),
# reset_peak_memory_stats(), a settings change) while a second process sends
# it 1,000 SIGUSR1 at random moments (0-2 ms apart); then it exits (the exit
# dump).  `timeout` turns a hang into status 124.
cat >"$scratch/storm.py" <<'EOF'
import os, random, subprocess, sys, time
import torch
import ccasim_record
assert ccasim_record.is_recording()
sender = subprocess.Popen([sys.executable, "-c", """
import os, random, signal, sys, time
pid, n = int(sys.argv[1]), int(sys.argv[2])
rng = random.Random(int(sys.argv[3]))
for i in range(n):
    os.kill(pid, signal.SIGUSR1)
    time.sleep(rng.random() * 0.002)
""", str(os.getpid()), os.environ.get("STORM_SIGNALS", "1000"), os.environ["STORM_SEED"]])
calls = 0
live = []
while sender.poll() is None:
    live.append(torch.cuda._fake_alloc(random.choice([1000, 3 << 20, 5 << 20])))
    if len(live) > 4:
        torch.cuda._fake_free(live.pop(0))
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()
    torch.cuda.memory._set_allocator_settings("max_split_size_mb:%d" % (64 + calls % 3))
    calls += 1
print("calls=%d sender=%d" % (calls, sender.returncode))
EOF
seed=$(date +%s)
echo "# storm seed $seed"
start=$(date +%s)
env PYTHONPATH="$fake" STORM_SEED="$seed" timeout 60 "$wrapper" --out "$scratch/storm" \
	--quiet --dump-on-signal USR1 --sample-interval 0.001 -- \
	"$python" "$scratch/storm.py" >"$scratch/out" 2>"$scratch/err"
st=$?
echo "# storm: status $st in $(($(date +%s) - start)) s; $(cat "$scratch/out")"
[ "$st" -eq 0 ]
report $? "1,000 SIGUSR1 during recorded calls (--dump-on-signal USR1): no hang, status 0"
[ ! -s "$scratch/err" ]
report $? "the storm: nothing on stderr (no recursion error, no failed dump)"
tmps=$(ls -A "$scratch/storm" 2>/dev/null | grep -c '\.tmp$')
[ "$tmps" -eq 0 ]
report $? "the storm: no temporary file left ($tmps)"
nsig=$(ls "$scratch/storm" 2>/dev/null | grep -c -- '-signal\.pickle$')
nexit=$(ls "$scratch/storm" 2>/dev/null | grep -c -- '-exit\.pickle$')
echo "# storm: $nsig signal dumps, $nexit exit dump"
[ "$nsig" -ge 1 ] && [ "$nsig" -lt 1000 ] && [ "$nexit" -eq 1 ]
report $? "the storm: signals coalesce (1 to 999 signal dumps) and the exit dump is there"
# shellcheck disable=SC2046 # the file names have no spaces
loads $(ls -d "$scratch/storm"/* 2>/dev/null)
report $? "the storm: every dump is whole (unpickles, its dump record's counts are its trace's, ccasim info reads it)"

# ------------------------------------------------------------ one wrapper, two processes, no rank
cat >"$scratch/twice.py" <<'EOF'
import torch
torch.cuda._fake_alloc(1 << 20)
torch.cuda.empty_cache()
EOF
run 0 env PYTHONPATH="$fake" "$wrapper" --out "$scratch/two" -- /bin/sh -c \
	"\"$python\" \"$scratch/twice.py\" & \"$python\" \"$scratch/twice.py\"; wait" &&
	[ "$(ls "$scratch/two" | grep -c -- '-exit\.pickle$')" -eq 2 ] &&
	[ "$(grep -c '^ccasim-record: wrote ' "$scratch/err")" -eq 2 ] &&
	[ "$(sed -n 's/^ccasim-record: wrote //p' "$scratch/err" | sort -u | wc -l)" -eq 2 ]
report $? "two processes of one ccasim-record without RANK: two exit dumps, two names"
# shellcheck disable=SC2046
loads $(ls -d "$scratch/two"/* 2>/dev/null)
report $? "both dumps of the two processes are whole"
ls "$scratch/two" | grep -qE '^ccasim-[0-9]{8}T[0-9]{6}Z-r00000-p[0-9]{7}-d00-000-exit\.pickle$'
report $? "dump names: {prefix}{job}-r{RANK:05d}-p{PID:07d}-d{DEV:02d}-{SEQ:03d}-{reason}.pickle"

# ------------------------------------------------------------ RANK values that are not ranks
cat >"$scratch/rankprog.py" <<'EOF'
import torch, ccasim_record
torch.cuda._fake_alloc(1 << 20)
print("recording=%s" % ccasim_record.is_recording())
EOF
mkdir -p "$scratch/victim-etc"
while IFS='|' read -r var value; do
	dir=$scratch/rank-$(echo "$var$value" | tr -c 'A-Za-z0-9\n' '_')
	mkdir -p "$dir/a/b"
	run 0 env PYTHONPATH="$fake" "$var=$value" "$wrapper" --out "$dir/a/b" -- \
		"$python" "$scratch/rankprog.py" &&
		grep -qx "recording=False" "$scratch/out" && one_line &&
		grep -qF "ccasim-record: $var='$value' is not a rank" "$scratch/err" &&
		[ -z "$(find "$dir" -type f)" ] && [ -z "$(ls -A "$scratch/victim-etc")" ]
	report $? "$var=$value: one line naming it, not recording, nothing written (never rank 0, never a path)"
done <<EOF
RANK|../../etc
RANK|../../victim-etc
RANK|-5
RANK|1e3
RANK|0x10
RANK| 3
RANK|
RANK|99999999999999999999
SLURM_PROCID|../x
SLURM_PROCID|-1
LOCAL_RANK|1.5
EOF
run 0 env PYTHONPATH="$fake" RANK=7 LOCAL_RANK=0 "$wrapper" --out "$scratch/rank7" --quiet -- \
	"$python" "$scratch/rankprog.py" && grep -qx "recording=True" "$scratch/out" &&
	ls "$scratch/rank7" | grep -q -- '-r00007-p[0-9]*-d00-000-exit\.pickle$'
report $? "RANK=7 LOCAL_RANK=0: recorded, named r00007"

# ------------------------------------------------------------ planted links, modes
mkdir -p "$scratch/links"
cat >"$scratch/links.py" <<EOF
import os, stat, sys, tempfile
sys.path[:0] = ["$fake", "$tools"]
import torch
import ccasim_record as cr

def check(desc, cond, why=""):
    print(("ok - %s" if cond else "not ok - %s") % desc + ("" if cond or not why else " # %s" % (why,)))

victim = os.path.join("$scratch", "victim")
with open(victim, "w") as f:
    f.write("precious\n")
os.chmod(victim, 0o644)
d = os.path.join("$scratch", "links", "shared")
os.makedirs(d)
os.chmod(d, 0o1777)  # a shared dump folder: others may plant names in it
rec = cr.start(out_dir=d, job="j", sample_interval=0, quiet=True)
torch.cuda._fake_alloc(1 << 20)
final0 = cr.dump_file_name("ccasim-", "j", 0, os.getpid(), 0, 0, "manual", "none")
final1 = cr.dump_file_name("ccasim-", "j", 0, os.getpid(), 0, 1, "manual", "none")
# the temporary names earlier versions used (".NAME.PID.tmp"), and the final
# names, planted as links to the victim
planted = []
for final in (final0, final1):
    for name in (".%s.%d.tmp" % (final, os.getpid()), final):
        os.symlink(victim, os.path.join(d, name))
        planted.append(name)
# every name tempfile draws next is planted too (as if guessed): mkstemp must
# skip them, never open through them
real_names = tempfile._get_candidate_names
class Guessed:
    def __init__(self):
        self.inner, self.n = real_names(), 0
    def __iter__(self):
        return self
    def __next__(self):
        name = next(self.inner)
        self.n += 1
        if self.n % 2:  # every other name the attacker guessed right
            for pre in (".ccasim-", "." + final0 + ".", "." + final1 + "."):
                p = os.path.join(d, pre + name + ".tmp")
                if not os.path.lexists(p):
                    os.symlink(victim, p)
        return name
guessed = Guessed()
tempfile._get_candidate_names = lambda: guessed
p0 = cr.dump()
p1 = cr.dump()
tempfile._get_candidate_names = real_names
with open(victim) as f:
    body = f.read()
check("planted links at the temporary and final names: the victim is unchanged",
      body == "precious\n" and stat.S_IMODE(os.stat(victim).st_mode) == 0o644, body[:40])
check("the planted links are left as they were",
      all(os.path.islink(os.path.join(d, n)) and os.readlink(os.path.join(d, n)) == victim
          for n in planted))
check("each dump is a new regular file beside the planted final name",
      len(p0) == 1 and len(p1) == 1 and p0 != p1
      and all(not os.path.islink(p[0]) and os.path.isfile(p[0]) for p in (p0, p1))
      and os.path.basename(p0[0]) not in planted and os.path.basename(p1[0]) not in planted,
      (p0, p1))
check("mkstemp met a planted name and skipped it", guessed.n >= 2, guessed.n)
check("a dump is 0600 by default", all(stat.S_IMODE(os.stat(p[0]).st_mode) == 0o600
                                       for p in (p0, p1)),
      [oct(os.stat(p[0]).st_mode) for p in (p0, p1)])
left = [n for n in os.listdir(d) if n.endswith(".tmp") and not os.path.islink(os.path.join(d, n))]
check("no temporary file of ours left", left == [], left)
cr.stop()
new = os.path.join("$scratch", "links", "made", "here")
cr.start(out_dir=new, sample_interval=0, quiet=True, dump_mode="0644")
torch.cuda._fake_alloc(1 << 20)
p = cr.dump()
check("a dump folder the recorder creates is 0700",
      stat.S_IMODE(os.stat(new).st_mode) == 0o700, oct(os.stat(new).st_mode))
check("dump_mode='0644': the dump is 0644", stat.S_IMODE(os.stat(p[0]).st_mode) == 0o644,
      oct(os.stat(p[0]).st_mode))
cr.stop()
EOF
"$python" "$scratch/links.py" >"$scratch/rows" 2>"$scratch/err"
st=$?
while IFS= read -r line; do
	case $line in
	"ok - "*) report 0 "${line#ok - }" ;;
	"not ok - "*) report 1 "${line#not ok - }" ;;
	esac
done <"$scratch/rows"
[ "$st" -eq 0 ]
report $? "the link and mode checks ran to their end (status $st)"

run 0 env PYTHONPATH="$fake" "$wrapper" --out "$scratch/modes/w" -- "$python" "$scratch/twice.py" &&
	[ "$(stat -c %a "$scratch/modes/w")" = 700 ] &&
	[ "$(stat -c %a "$scratch/modes/w"/*-exit.pickle)" = 600 ]
report $? "ccasim-record --out NEW: the folder 0700, the dump 0600"
run 0 env PYTHONPATH="$fake" "$wrapper" --out "$scratch/modes/r" --dump-mode 0644 -- \
	"$python" "$scratch/twice.py" && [ "$(stat -c %a "$scratch/modes/r"/*-exit.pickle)" = 644 ]
report $? "ccasim-record --dump-mode 0644: the dump 0644"
for bad in 0755 8 rw 01600 0400 -1; do
	run 2 "$wrapper" --dump-mode "$bad" -- /bin/true && one_line &&
		grep -q -- "^ccasim-record: --dump-mode" "$scratch/err"
	report $? "ccasim-record --dump-mode $bad: status 2, one line naming --dump-mode"
done

tap_done
