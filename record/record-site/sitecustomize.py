"""ccasim-record's injector: `ccasim-record` puts this file's directory first
on PYTHONPATH and its options, as JSON, in CCASIM_RECORD; Python's site
module imports it at start-up in every interpreter the command runs.

It does not import torch.  It puts an import hook on `torch` (a finder at the
head of sys.meta_path whose loader runs torch's own, then calls
ccasim_record.start_from_env()), so that recording starts right after the
program's own `import torch` completes; then it runs the sitecustomize module
this one hides, the next one on sys.path (Debian's, a virtualenv's), under
the name `sitecustomize`, and its errors are reported by site as they would
have been.  Python 3 standard library only.
"""

import importlib.machinery
import importlib.util
import json
import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))


def _say(msg):
    sys.stderr.write("ccasim-record: %s\n" % msg)


def _module_path():
    """ccasim_record.py: the path in $CCASIM_RECORD's "module", else beside
    this file (the installed layout)."""
    try:
        path = json.loads(os.environ.get("CCASIM_RECORD", "{}")).get("module")
    except (ValueError, AttributeError):
        path = None
    return path or os.path.join(_HERE, "ccasim_record.py")


def _load_recorder():
    mod = sys.modules.get("ccasim_record")
    if mod is not None:
        return mod
    path = _module_path()
    spec = importlib.util.spec_from_file_location("ccasim_record", path)
    if spec is None:
        raise ImportError("no module at %s" % path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["ccasim_record"] = mod  # the program may `import ccasim_record` and dump()
    try:
        spec.loader.exec_module(mod)
    except BaseException:
        del sys.modules["ccasim_record"]
        raise
    return mod


class _Loader:
    """torch's loader, then the recorder; every other attribute is torch's
    loader's."""

    def __init__(self, inner):
        self._inner = inner

    def __getattr__(self, name):
        return getattr(self._inner, name)

    def create_module(self, spec):
        return self._inner.create_module(spec)

    def exec_module(self, module):
        # the module's own loader back before torch's code runs (it may read it)
        spec = getattr(module, "__spec__", None)
        if spec is not None:
            spec.loader = self._inner
        module.__loader__ = self._inner
        self._inner.exec_module(module)
        try:
            _load_recorder().start_from_env()
        except Exception as e:  # never break the program's import
            _say("not recording: %s" % (e,))


class _TorchFinder:
    """Finds `torch` once, through the finders after it."""

    @classmethod
    def find_spec(cls, fullname, path=None, target=None):
        if fullname != "torch":
            return None
        try:
            sys.meta_path.remove(cls)
        except ValueError:
            pass
        spec = None
        for finder in sys.meta_path:
            find = getattr(finder, "find_spec", None)
            if find is None:
                continue
            spec = find(fullname, path, target)
            if spec is not None:
                break
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        spec.loader = _Loader(spec.loader)
        return spec


def _chain():
    """Runs the next sitecustomize on sys.path (the one this file hides)."""
    here = os.path.normcase(_HERE)
    rest = [p for p in sys.path if os.path.normcase(os.path.abspath(p or ".")) != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", rest)
    if spec is None or spec.loader is None:
        return
    if os.path.normcase(os.path.dirname(os.path.abspath(spec.origin or ""))) == here:
        return
    mod = importlib.util.module_from_spec(spec)
    sys.modules["sitecustomize"] = mod
    spec.loader.exec_module(mod)


def _wanted():
    """$CCASIM_RECORD is set and a JSON object (else one line: not
    recording)."""
    raw = os.environ.get("CCASIM_RECORD")
    if not raw:
        return False
    try:
        if isinstance(json.loads(raw), dict):
            return True
        why = "not a JSON object"
    except ValueError as e:
        why = str(e)
    _say("CCASIM_RECORD is not valid (%s): not recording" % why)
    return False


if _wanted() and "torch" not in sys.modules and _TorchFinder not in sys.meta_path:
    sys.meta_path.insert(0, _TorchFinder)
_chain()
