# tap.sh - what the shell tests share (sourced, not run).  The caller
# sets $srcdir to the top of the source tree before sourcing.  Sets
# $ccasim (the binary under test), $traces (the bundled real traces),
# $python (python3, or `false` when there is none) and $scratch (a
# temporary directory removed on exit, with $scratch/out and $scratch/err
# for the last command's outputs), and counts the tests in $n and any
# failure in $failed.

ccasim=${CCASIM:-./ccasim}
traces=$srcdir/traces/pytorch-2.11
python=/usr/bin/python3
[ -x "$python" ] || python=$(command -v python3 || echo false)

scratch=$(mktemp -d "${TMPDIR:-/tmp}/$(basename "$0" .sh).XXXXXX")
trap 'rm -rf "$scratch"' EXIT INT TERM

n=0
failed=0

# report STATUS DESCRIPTION: one TAP line, ok when STATUS is 0; a failure
# shows the last command's stderr as comments.
report() {
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $n - $2"
	else
		echo "not ok $n - $2"
		failed=1
		if [ -s "$scratch/err" ]; then sed 's/^/# stderr: /' "$scratch/err"; fi
	fi
}

# skip DESCRIPTION REASON: one TAP line for a test that cannot run here.
skip() {
	n=$((n + 1))
	echo "ok $n - $1 # SKIP $2"
}

# todo STATUS DESCRIPTION REASON: a test of a known gap, as TAP's TODO:
# expected to fail (XFAIL) for REASON; when it passes, the harness reports
# XPASS and the gap is to be struck from the test's list.
todo() {
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $n - $2 # TODO $3"
	else
		echo "not ok $n - $2 # TODO $3"
	fi
}

# report_eval FILE [GAP]: a test for each case validate/patterns-eval.py
# measured into FILE (cases that are no truth are left out): a recording
# passes with "check passed; N keys equal, 0 differ", a what-if with
# "exact" or "exact (both stop at the OOM)".  GAP, a function given NAME
# and KIND (recorded, what-if), prints why the case is a known gap, making
# its test a TODO, or nothing.
report_eval() {
	while read -r name kind rest; do
		kind=${kind%:}
		case $name in summary:) continue ;; esac
		case $kind in recorded | what-if) ;; *) continue ;; esac
		case $rest in "not a truth"*) continue ;; esac
		case $kind in
		recorded) echo "$rest" | grep -Eq '^check passed; [0-9]+ keys equal, 0 differ' ;;
		what-if) case $rest in exact | "exact (both stop at the OOM)") true ;; *) false ;; esac ;;
		esac
		status=$?
		why=
		if [ -n "${2:-}" ]; then why=$("$2" "$name" "$kind"); fi
		if [ -n "$why" ]; then
			todo $status "$name $kind: $rest" "$why"
		else
			report $status "$name $kind: $rest"
		fi
	done <"$1"
}

# run EXPECTED-STATUS CMD...: runs CMD with stdout in $scratch/out and
# stderr in $scratch/err; succeeds when it exits EXPECTED-STATUS.
run() {
	want=$1
	shift
	"$@" >"$scratch/out" 2>"$scratch/err"
	got=$?
	[ "$got" -eq "$want" ] || {
		echo "# '$*' exited $got, expected $want"
		return 1
	}
}

# one_line: stderr holds exactly one non-empty line.
one_line() {
	[ -s "$scratch/err" ] && [ "$(wc -l <"$scratch/err")" -eq 1 ]
}

# tap_done: the plan line, then exit 1 when any test failed.
tap_done() {
	echo "1..$n"
	exit $failed
}

# report_timing_eval FILE: a test for each what-if validate/timing-eval.py
# measured into FILE, ok when every live figure lies inside its bounds;
# sets $cases to their number.
report_timing_eval() {
	cases=0
	while read -r what name arrow setting inside of total rest; do
		[ "$what" = what-if ] || continue
		cases=$((cases + 1))
		[ "$inside" = "$total" ]
		report $? "$name $arrow ${setting%:} $inside $of $total $rest"
	done <"$1"
}
