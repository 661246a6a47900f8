#!/bin/sh
# test-tables.sh - `sweep`, `fit` and `fleet merge` tables on a terminal
# (TAP): every line of their default output fits in 100 columns on the
# bundled traces, with and without --gpu all and --address-sensitivity;
# --wide keeps every column, whole settings and whole paths; a GPU name is
# a preset's or is refused in one line that lists the candidates (exit 2).
# Needs $CCASIM and $top_srcdir.
set -u

srcdir=${top_srcdir:-.}
. "$srcdir/tests/tap.sh"

# widest FILE: the widest line of FILE, in characters
widest() {
	LC_ALL=C.UTF-8 awk '{ if (length($0) > w) w = length($0) } END { print w + 0 }' "$1"
}

# --- 100 columns by default ---------------------------------------------------
for t in "$traces/seedfrag.default" "$traces/dyninfer.default" "$traces/multistream.cap" \
	"$srcdir/traces/calls-2.11/calls.ms64rp2"; do
	name=$(basename "$t")
	for args in "sweep" "sweep --address-sensitivity" "sweep --gpu H200" \
		"sweep --recommend --memory-fraction 0.5" "fit" "fit --gpu all" \
		"fit --gpu H200 --gpu T4"; do
		# shellcheck disable=SC2086 # ARGS are words
		run 0 "$ccasim" $args --no-progress "$t.pickle.xz" &&
			w=$(widest "$scratch/out") && [ "$w" -le 100 ] ||
			echo "# $name $args: a line of ${w:-?} columns"
		report $? "$args $name: every line fits in 100 columns"
	done
done

# --- the narrow view says what it leaves out ------------------------------------
bert=$traces/bert.default.pickle.xz
run 0 "$ccasim" sweep --no-progress --address-sensitivity "$bert" &&
	grep -q '^ 2  roundup_power2_divisions:16 ' "$scratch/out" &&
	grep -qx '    address choice varies: reserved 11620.0..11720.0, allocated 10956.6..10957.1, frag % 5.71..6.51,' \
		"$scratch/out" &&
	grep -q '^12  max_split:512,expandable:True  ' "$scratch/out" &&
	grep -q '^13  max_split:239 (p99 request)  ' "$scratch/out" &&
	grep -q '^settings too long for their column use brief names: max_split=max_split_size_mb,' "$scratch/out"
report $? "sweep --address-sensitivity: ranges on a line under the row, long settings with brief key names, said below"

# --- --wide keeps every column ---------------------------------------------------
run 0 "$ccasim" sweep --wide --no-progress --address-sensitivity "$bert" &&
	grep -q '^ #  settings  *reserved  *allocated  *frag  *unalloc  *cuda  *cuda  *alloc  *OOM  *alloc  *address$' \
		"$scratch/out" &&
	grep -q '^12  max_split_size_mb:512,expandable_segments:True  ' "$scratch/out" &&
	grep -q '^ 2  roundup_power2_divisions:16  *11620.0\.\.11720.0  ' "$scratch/out" &&
	! grep -q 'address choice varies' "$scratch/out"
report $? "sweep --wide: every column, whole settings, ranges in the cells"
run 0 "$ccasim" fit --wide --no-progress --gpu all "$traces/seedfrag.default.pickle.xz" &&
	grep -q '^ #  settings .* fits in MiB  peak reserved MiB  2 MiB less  *address choice  H200  H100-80GB  A100-80GB  A100-40GB  L40S  A10G  *L4  RTX-4090  RTX-3090  V100-32GB  V100-16GB  *T4$' \
		"$scratch/out" &&
	grep -q '^  H200 .*measured: ' "$scratch/out"
report $? "fit --wide --gpu all: every column, a column per GPU, the GPUs' sources"
run 0 "$ccasim" fit --no-progress --gpu all "$traces/seedfrag.default.pickle.xz" &&
	grep -q '^  GPU  *usable  *1  *2 ' "$scratch/out" &&
	grep -q '^  A100-40GB  *38.83 GiB  *y ' "$scratch/out"
report $? "fit --gpu all: the GPU answers as a matrix under the table"

# --- GPU names: exact, or refused with the candidates --------------------------------
# NAME|WHAT stderr says (a fixed string)
while IFS='|' read -r gpu says; do
	for cmd in fit sweep; do
		run 2 "$ccasim" "$cmd" --no-progress --gpu "$gpu" "$traces/seedfrag.default.pickle.xz" &&
			one_line && grep -qF "ccasim $cmd: --gpu: $says" "$scratch/err" &&
			[ ! -s "$scratch/out" ]
		report $? "$cmd --gpu '$gpu' is refused: $says"
	done
done <<'EOF'
A100|ambiguous GPU 'A100': it could be A100-80GB, A100-40GB (give one of them)
V100|ambiguous GPU 'V100': it could be V100-32GB, V100-16GB (give one of them)
RTX|ambiguous GPU 'RTX': it could be RTX-4090, RTX-3090 (give one of them)
L40|unknown GPU 'L40': did you mean L40S?
H300|unknown GPU 'H300': the presets are H200, H100-80GB, A100-80GB, A100-40GB, L40S,
EOF
for gpu in A100-40GB "a100 80gb" h100 4090 L4; do
	run 0 "$ccasim" fit --no-progress --gpu "$gpu" "$traces/seedfrag.default.pickle.xz"
	report $? "fit --gpu '$gpu' names one preset"
done

# --- fleet merge --------------------------------------------------------------------
# a fleet with deep paths and long settings: every line fits, names keep
# their ends and lose the folder all jobs share; --wide keeps them whole
mkdir -p "$scratch/fleet/a/deep/folder/of/snapshots/from/a/cluster"
cp "$traces"/seedfrag.*.pickle.xz "$scratch/fleet/a/deep/folder/of/snapshots/from/a/cluster/"
cp "$traces/multistream.cap.pickle.xz" "$scratch/fleet/a/"
printf '%s cap=36914380\n' "$scratch/fleet/a/multistream.cap.pickle.xz" >"$scratch/fleet/jobs.manifest"
"$ccasim" fleet run "$scratch/fleet/a" "$scratch/fleet/jobs.manifest" --no-progress -j 2 \
	--set max_split_size_mb=default,128 --set expandable_segments=True,False \
	--set garbage_collection_threshold=default,0.6 --out "$scratch/fleet/run" 2>"$scratch/err"
run 0 "$ccasim" fleet merge "$scratch/fleet/run" && w=$(widest "$scratch/out") && [ "$w" -le 100 ] &&
	grep -q "^Jobs are named below by their path under $scratch/fleet/a/, less the extension" "$scratch/out" &&
	grep -A1 '^on H200 (assumed), cap 35.20 MiB:$' "$scratch/out" | grep -q '^multistream.cap  *OOM at ' &&
	grep -q '^\.\.\..*/cluster/seedfrag.default  *fits ' "$scratch/out" &&
	grep -q '^multistream.cap  *H200\*, cap 35.20 MiB  *T4 ' "$scratch/out" &&
	grep -q '^\*: assumed (no GPU in the manifest' "$scratch/out" || echo "# widest line: ${w:-?}"
report $? "fleet merge: every line fits in 100 columns, jobs named under their shared folder less the extension, cut at the front, grouped by own device"
run 0 "$ccasim" fleet merge --wide "$scratch/fleet/run" &&
	grep -q '^deep/folder/of/snapshots/from/a/cluster/seedfrag.default  ' "$scratch/out" &&
	[ "$(widest "$scratch/out")" -gt 100 ]
report $? "fleet merge --wide: whole names"
# the same snapshot as x.pickle and x.pickle.xz: without extensions both
# would read "x", so the names keep them
mkdir -p "$scratch/twins"
cp "$traces/seedfrag.default.pickle.xz" "$scratch/twins/x.pickle.xz"
xz -dc "$traces/seedfrag.default.pickle.xz" >"$scratch/twins/x.pickle"
"$ccasim" fleet run "$scratch/twins" --no-progress --set max_split_size_mb=default,128 \
	--out "$scratch/twins-run" 2>"$scratch/err"
run 0 "$ccasim" fleet merge "$scratch/twins-run" &&
	grep -q '^x\.pickle  *fits ' "$scratch/out" && grep -q '^x\.pickle\.xz  *fits ' "$scratch/out" &&
	! grep -q 'less the extension' "$scratch/out"
report $? "fleet merge: names that would read the same without extensions keep them"

tap_done
