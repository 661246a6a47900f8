"""taputil - the TAP output of the Python module's tests (tap-driver.sh reads it)."""
import os
import sys

_n = 0
_failed = 0


def ok(cond, name, detail=None):
    """One TAP result; DETAIL (str) is printed as a diagnostic when COND fails."""
    global _n, _failed
    _n += 1
    if not cond:
        _failed += 1
        if detail:
            for line in str(detail).splitlines()[:40]:
                print("# " + line)
    print("%s %d - %s" % ("ok" if cond else "not ok", _n, name))
    sys.stdout.flush()


def skip_all(why):
    print("1..0 # SKIP %s" % why)
    sys.exit(0)


def done():
    print("1..%d" % _n)
    sys.exit(1 if _failed else 0)


def srcdir():
    return os.environ.get("top_srcdir") or os.path.join(os.path.dirname(__file__), "..", "..")


def ccasim_cli():
    return os.environ.get("CCASIM") or os.path.join(os.environ.get("top_builddir", "."), "ccasim")


def bundled_traces():
    """Every trace under traces/ (pickles and ccasim traces), sorted."""
    out = []
    root = os.path.join(srcdir(), "traces")
    for d, _, files in os.walk(root):
        for f in files:
            if ".pickle" in f or ".msgpack" in f:
                out.append(os.path.join(d, f))
    return sorted(out)


def cli_env():
    """The environment for running the ccasim CLI: without the sanitizer
    runtime preloaded for Python (a sanitized CLI links its own)."""
    env = dict(os.environ)
    env.pop("LD_PRELOAD", None)
    return env


def first_diff(a, b, path="$"):
    """Where two JSON values differ first, or None."""
    if type(a) is not type(b) and not (isinstance(a, (int, float)) and isinstance(b, (int, float))
                                       and type(a) is type(b)):
        return "%s: %r (%s) vs %r (%s)" % (path, a, type(a).__name__, b, type(b).__name__)
    if isinstance(a, dict):
        if list(a) != list(b):
            return "%s: keys %s vs %s" % (path, sorted(set(a) ^ set(b)), "")
        for k in a:
            d = first_diff(a[k], b[k], "%s.%s" % (path, k))
            if d:
                return d
        return None
    if isinstance(a, list):
        if len(a) != len(b):
            return "%s: %d items vs %d" % (path, len(a), len(b))
        for i, (x, y) in enumerate(zip(a, b)):
            d = first_diff(x, y, "%s[%d]" % (path, i))
            if d:
                return d
        return None
    return None if a == b else "%s: %r vs %r" % (path, a, b)
