#!/bin/sh
# test-convert-all.sh - every real trace converts, and `info --json` gives
# the same counts for the pickle and its msgpack conversion (TAP).
# Needs $CCASIM and $top_srcdir (set by make check).
set -u
srcdir=${top_srcdir:-.}
. "$srcdir/tests/tap.sh"

# counts FILE: the info JSON without the fields that name the format or
# the file (file, format, source, pickle_protocol, origin).
counts() {
	"$ccasim" info --json "$1" | sed -e 's/"format": *"[a-z]*",* *//' -e 's/"file": *"[^"]*",* *//' \
		-e 's/"source": *"[^"]*",* *//' -e 's/"origin": *"[^"]*",* *//' \
		-e 's/"pickle_protocol": *[0-9]*,* *//'
}

for pickle in "$traces"/*.pickle.xz "$traces"/whatif/*.pickle.xz "$traces"/samples/*.pickle; do
	name=$(basename "$pickle")
	n=$((n + 1))
	if ! "$ccasim" convert "$pickle" -o "$scratch/t.msgpack" 2>"$scratch/err"; then
		echo "not ok $n - $name converts"
		sed 's/^/# /' "$scratch/err"
		failed=1
		continue
	fi
	counts "$pickle" >"$scratch/a"
	counts "$scratch/t.msgpack" >"$scratch/b"
	if cmp -s "$scratch/a" "$scratch/b"; then
		echo "ok $n - $name converts; info gives the same counts"
	else
		echo "not ok $n - $name: info differs between pickle and msgpack"
		diff "$scratch/a" "$scratch/b" | head -5 | sed 's/^/# /'
		failed=1
	fi
done
tap_done
