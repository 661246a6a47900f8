"""test-notebook - doc/ccasim.ipynb runs, and says what its stored outputs say.

Executes a copy of the notebook with nbclient (Debian's python3-nbclient,
python3-ipykernel, python3-matplotlib, python3-pandas; SKIP where one is
missing) in doc/, the module imported from the build tree, then checks that
every cell ran and that the text outputs equal the ones committed.
"""
import os
import sys

import taputil
from taputil import ok

try:
    import nbclient
    import nbformat
    import matplotlib  # noqa: F401
    import pandas  # noqa: F401
    import ipykernel  # noqa: F401
except ImportError as e:
    taputil.skip_all("notebook needs nbclient, nbformat, ipykernel, matplotlib, pandas: %s" % e)

doc = os.path.join(taputil.srcdir(), "doc")
path = os.path.join(doc, "ccasim.ipynb")
stored = nbformat.read(path, as_version=4)
nb = nbformat.read(path, as_version=4)

os.environ["MPLCONFIGDIR"] = os.environ.get("TMPDIR", "/tmp")
client = nbclient.NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": doc}})
try:
    client.execute()
    ok(True, "doc/ccasim.ipynb runs to the end")
except Exception as e:
    ok(False, "doc/ccasim.ipynb runs to the end", "%s: %s" % (type(e).__name__, e))
    taputil.done()


def texts(cell):
    out = []
    for o in cell.get("outputs", []):
        if o.get("output_type") == "stream":
            out.append(o.get("text", ""))
        elif "data" in o and "text/plain" in o["data"] and "image/png" not in o["data"]:
            out.append(o["data"]["text/plain"])
    return out


for i, (a, b) in enumerate(zip(stored.cells, nb.cells)):
    if a.cell_type != "code":
        continue
    ta, tb = texts(a), texts(b)
    ok(ta == tb, "cell %d: the stored text output is what it prints now" % i, "stored: %r\nnow: %r" % (ta, tb))
pngs = sum(1 for c in nb.cells for o in c.get("outputs", []) if "image/png" in o.get("data", {}))
ok(pngs >= 1, "the timeline is plotted (%d figure)" % pngs)
taputil.done()
