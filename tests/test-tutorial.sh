#!/bin/sh
# test-tutorial.sh - every number and figure of doc/tutorial.md, regenerated
# (TAP).
#
# Each ```console block of the tutorial starts with a command line "$ ..."
# (continued on the next lines while they end in a backslash) and goes on
# with that command's output.  The test runs every command in a scratch
# directory that sees the source tree's traces/ (with `ccasim` the binary
# under test) and compares its output with the block; the figures the
# commands write to doc/tutorial-figures/ must equal the committed ones
# byte for byte.
#
#   tests/test-tutorial.sh --regenerate
#
# rewrites the outputs in doc/tutorial.md and the committed figures from a
# fresh run instead (for after a deliberate change).  Needs $CCASIM and
# $top_srcdir (set by make check).
set -u

srcdir=${top_srcdir:-.}
. "$srcdir/tests/tap.sh"
doc=$srcdir/doc/tutorial.md
figures=$srcdir/doc/tutorial-figures
regenerate=no
[ "${1:-}" = --regenerate ] && regenerate=yes

case $ccasim in /*) ;; *) ccasim=$(pwd)/$ccasim ;; esac
mkdir -p "$scratch/bin" "$scratch/work/doc/tutorial-figures" "$scratch/blocks"
ln -s "$ccasim" "$scratch/bin/ccasim"
ln -s "$(cd "$srcdir" && pwd)/traces" "$scratch/work/traces"

# Split the console blocks into blocks/N.cmd and blocks/N.expected.
${AWK:-awk} -v dir="$scratch/blocks" '
/^```console[ \t]*$/ { inside = 1; n++; cmd = 1; next }
inside && /^```[ \t]*$/ { inside = 0; close(dir "/" n ".cmd"); close(dir "/" n ".expected"); next }
inside && cmd {
	line = $0
	if (!sub(/^\$ /, "", line) && cont == 0) { print "block " n ": no command" > "/dev/stderr"; exit 1 }
	print line > (dir "/" n ".cmd")
	cont = ($0 ~ /\\$/)
	if (!cont) { cmd = 0; printf "" > (dir "/" n ".expected") }
	next
}
inside { print > (dir "/" n ".expected") }
END { print n + 0 > (dir "/count") }
' "$doc" || exit 1
count=$(cat "$scratch/blocks/count")


i=1
while [ "$i" -le "$count" ]; do
	title=$(head -n 1 "$scratch/blocks/$i.cmd" | cut -c1-90)
	(cd "$scratch/work" && PATH="$scratch/bin:$PATH" LC_ALL=C sh "$scratch/blocks/$i.cmd") \
		>"$scratch/blocks/$i.got" 2>&1
	if cmp -s "$scratch/blocks/$i.expected" "$scratch/blocks/$i.got"; then
		report 0 "tutorial block $i: $title"
	else
		report 1 "tutorial block $i: $title"
		diff -u "$scratch/blocks/$i.expected" "$scratch/blocks/$i.got" | head -n 40 |
			sed 's/^/# /'
	fi
	i=$((i + 1))
done

for f in "$scratch/work/doc/tutorial-figures"/*; do
	[ -e "$f" ] || continue
	name=$(basename "$f")
	cmp -s "$f" "$figures/$name"
	report $? "figure doc/tutorial-figures/$name is what its command draws"
done
for f in "$figures"/*; do
	[ -e "$f" ] || continue
	[ -e "$scratch/work/doc/tutorial-figures/$(basename "$f")" ]
	report $? "committed figure $(basename "$f") is drawn by a command of the tutorial"
done

if [ $regenerate = yes ]; then
	${AWK:-awk} -v dir="$scratch/blocks" '
	/^```console[ \t]*$/ { print; inside = 1; n++; cmd = 1; next }
	inside && /^```[ \t]*$/ {
		f = dir "/" n ".got"
		while ((getline line < f) > 0) print line
		close(f)
		print; inside = 0; next
	}
	inside && cmd { print; if ($0 !~ /\\$/) cmd = 0; next }
	inside { next }
	{ print }
	' "$doc" >"$scratch/tutorial.md" && cp "$scratch/tutorial.md" "$doc" &&
		mkdir -p "$figures" && cp "$scratch/work/doc/tutorial-figures"/* "$figures"/ &&
		echo "# regenerated $doc and $figures"
fi

tap_done
