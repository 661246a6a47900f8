#!/bin/sh
# check-architecture.sh - doc/architecture.md lists every file of the code
# (TAP).  Each source file under sim/, tools/, gpu/, python/, record/,
# bench/, validate/ and gpu-scripts/ (C, headers, Python, shell, the
# recorder's command template, the view's page assets) must appear there by
# its path from the top of the tree, so that the page's "Every file and its
# room" stays true as files come and go.  Tests and their data are listed
# by tier, not file by file.  Needs $top_srcdir (set by make check); runs
# from the source tree too.
set -u

srcdir=${top_srcdir:-.}
doc=$srcdir/doc/architecture.md
cd "$srcdir" || exit 99
if [ ! -f "$doc" ]; then
	echo "1..0 # SKIP no doc/architecture.md"
	exit 0
fi

n=0
failed=0
for dir in sim tools gpu python record bench validate gpu-scripts; do
	[ -d "$dir" ] || continue
	missing=$(find "$dir" -type f \( -name '*.c' -o -name '*.h' -o -name '*.py' -o -name '*.pyi' \
		-o -name '*.sh' -o -name '*.in' -o -name '*.js' -o -name '*.css' \) \
		! -path 'python/tests/*' ! -path '*/__pycache__/*' | LC_ALL=C sort |
		while read -r f; do
			grep -q -F -e "\`$f\`" "$doc" || echo "$f"
		done)
	n=$((n + 1))
	if [ -z "$missing" ]; then
		echo "ok $n - doc/architecture.md lists every source file of $dir/"
	else
		echo "not ok $n - doc/architecture.md lists every source file of $dir/"
		printf '%s\n' "$missing" | sed 's|^|# not listed: |'
		failed=1
	fi
done
echo "1..$n"
exit "$failed"
