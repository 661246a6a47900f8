#!/bin/sh
# check-prefixes.sh - two layout rules, checked on every `make check` (TAP).
#
# 1. Names match places: each DIR/NAME.c of sim/, gpu/, tools/ and bench/ exports
#    only symbols named cca_NAME or cca_NAME_* (CCA_NAME, CCA_NAME_* for
#    data), as read by nm from its object file in the build tree.  A
#    source whose object was not built here (gpu/ without CUDA) is
#    skipped.  The allow-list below holds the justified exceptions.
# 2. PyTorch's constants live in sim/policy/pytorch.h alone: the code (not
#    comments or strings) of every other .c and .h file of sim/, gpu/, tools/,
#    bench/ may not write kMinBlockSize (512, 511), kSmallSize
#    (1 MiB), kSmallBuffer and kRoundLarge (2 MiB), kMinLargeAlloc
#    (10 MiB) or kLargeBuffer (20 MiB) as numbers: 1048576, 2 << 20,
#    20 * CCA_MIB, 1024 * 1024 and the like.  Units (CCA_MIB, sim/util/
#    size.h) are not PyTorch's; other 2 MiB figures (huge pages, the
#    device's granule) are allowed by name below, each with its reason.
#
# Needs $top_srcdir and $top_builddir (set by make check); runs from the
# source tree too: `top_builddir=build tests/lint/check-prefixes.sh`.
set -u

srcdir=${top_srcdir:-.}
builddir=${top_builddir:-.}
nm=${NM:-nm}

# Symbols a file may export besides its prefix: "FILE SYMBOL # reason".
symbol_allow='
tools/ccasim.c main # the ccasim program
bench/gen_trace.c main # the gen-trace program (bench/local.mk)
gpu/va_probe.c main # a program of its own (gpu-scripts/probe-va.sh runs it)
'

# Numbers that look like PyTorch constants but are not:
# "FILE ERE # reason", ERE matched against the code of one line.
literal_allow='
sim/read/input.h define CCA_INPUT_HUGE_PAGE # a transparent huge page of the host, not a PyTorch size
sim/device/driverva.h define CCA_H200_GRANULARITY # cuMemGetAllocationGranularity of the H200, a CUDA figure
sim/study/fit.h define CCA_FIT_STEP # the resolution of the capacity search, not a PyTorch rule
sim/study/calibration.c ^[[:space:]]*\{ *(2|20) \* CCA_MIB, # sizes the H200 timings were measured at (traces/pytorch-2.11/h200-cudamalloc-timing.json)
'

n=0
failed=0
ok() {
	n=$((n + 1))
	echo "ok $n - $1"
}
not_ok() {
	n=$((n + 1))
	echo "not ok $n - $1"
	failed=1
}

if ! command -v "$nm" >/dev/null 2>&1; then
	echo "1..0 # SKIP no $nm"
	exit 0
fi

cd "$srcdir" || exit 99
sources=$(find sim gpu tools bench -name '*.c' | LC_ALL=C sort)

# ---------------------------------------------------------- 1. prefixes
for src in $sources; do
	dir=${src%/*}
	name=${src##*/}
	name=${name%.c}
	# the object: DIR/NAME.o, or DIR/TARGET-NAME.o for per-target flags
	obj=
	for o in "$builddir/$dir/$name.o" "$builddir/$dir/"*"-$name.o"; do
		if [ -f "$o" ] && { [ -z "$obj" ] || [ "$o" -nt "$obj" ]; }; then obj=$o; fi
	done
	if [ -z "$obj" ]; then
		n=$((n + 1))
		echo "ok $n - $src exports cca_${name}_* only # SKIP not built here"
		continue
	fi
	# compiler-made symbols (__asan_*, __odr_asan_gen_*, .L*) are not ours
	bad=$("$nm" -gP --defined-only "$obj" | awk '{print $1}' |
		grep -v -e '^__' -e '^\.' |
		grep -v -E "^(cca|CCA)_${name}(_|\$)" |
		while read -r sym; do
			if printf '%s\n' "$symbol_allow" |
				grep -q -E "^$src $sym( |\$)"; then continue; fi
			echo "$sym"
		done)
	if [ -z "$bad" ]; then
		ok "$src exports cca_${name}_* only"
	else
		not_ok "$src exports cca_${name}_* only"
		printf '%s\n' "$bad" | sed "s|^|# $src exports |"
	fi
done

# ---------------------------------------------------------- 2. constants
# code_of FILE: FILE with comments and the insides of string and
# character literals blanked, lines kept.
code_of() {
	awk '
	BEGIN { state = 0 } # 0 code, 1 block comment, 2 string, 3 char
	{
		out = ""
		len = length($0)
		for (i = 1; i <= len; i++) {
			c = substr($0, i, 1)
			d = substr($0, i, 2)
			if (state == 1) {
				if (d == "*/") { state = 0; i++; out = out "  " } else out = out " "
			} else if (state == 2 || state == 3) {
				q = state == 2 ? "\"" : "\047"
				if (c == "\\") { out = out "  "; i++ }
				else if (c == q) { state = 0; out = out c }
				else out = out " "
			} else if (d == "/*") { state = 1; i++; out = out "  " }
			else if (d == "//") { break }
			else if (c == "\"") { state = 2; out = out c }
			else if (c == "\047") { state = 3; out = out c }
			else out = out c
		}
		if (state >= 2) state = 0 # an unterminated literal ends with its line
		print out
	}' "$1"
}

# the constants, each "WHAT@ERE" over code; a number is not part of a
# word or of a fraction (0.512), so that size_512 and 1.5 do not match
b='(^|[^0-9A-Za-z_.])'
e='([^0-9A-Za-z_]|[uUlL.]|$)'
shift20='[uUlL]*\)?[[:space:]]*<<[[:space:]]*20([^0-9]|$)'
mib='[uUlL]*\)?[[:space:]]*\*[[:space:]]*CCA_MIB([^0-9A-Za-z_]|$)'
times_mib='CCA_MIB[[:space:]]*\*[[:space:]]*\(?'
checks="kMinBlockSize (512 bytes)@$b(511|512)$e
kSmallSize (1 MiB)@${b}1048576$e|${b}1$shift20|1024[[:space:]]*\*[[:space:]]*1024
kSmallBuffer and kRoundLarge (2 MiB)@${b}2097152$e|${b}2$shift20|${b}2$mib|${times_mib}2$e|<<[[:space:]]*21([^0-9]|$)
kMinLargeAlloc (10 MiB)@${b}10485760$e|${b}10$shift20|${b}10$mib|${times_mib}10$e
kLargeBuffer (20 MiB)@${b}20971520$e|${b}20$shift20|${b}20$mib|${times_mib}20$e"

files=$(find sim gpu tools bench -name '*.[ch]' ! -path sim/policy/pytorch.h | LC_ALL=C sort)
scratch=$(mktemp -d "${TMPDIR:-/tmp}/check-prefixes.XXXXXX") || exit 99
trap 'rm -rf "$scratch"' EXIT INT TERM
for f in $files; do
	mkdir -p "$scratch/${f%/*}"
	code_of "$f" >"$scratch/$f"
done

# allowed FILE CODE: whether literal_allow lets FILE write CODE
allowed() {
	printf '%s\n' "$literal_allow" | while read -r af are; do
		[ "$af" = "$1" ] || continue
		if printf '%s\n' "$2" | grep -q -E -e "${are%% \# *}"; then
			echo yes
			break
		fi
	done
}

while IFS='@' read -r what ere; do
	hits=$(for f in $files; do
		grep -n -E -e "$ere" "$scratch/$f" | while IFS= read -r line; do
			code=${line#*:}
			[ -n "$(allowed "$f" "$code")" ] || echo "# $f:${line%%:*}:$code"
		done
	done)
	if [ -z "$hits" ]; then
		ok "$what is written only in sim/policy/pytorch.h"
	else
		not_ok "$what is written only in sim/policy/pytorch.h"
		printf '%s\n' "$hits"
	fi
done <<EOF_CHECKS
$checks
EOF_CHECKS

echo "1..$n"
exit "$failed"
