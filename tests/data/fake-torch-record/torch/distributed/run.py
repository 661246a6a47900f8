"""python -m torch.distributed.run CMD...: prints "launcher recording=B",
then runs CMD with LOCAL_RANK=0 (as torchrun's agent starts its workers)
and exits with its status."""

import os
import subprocess
import sys

import torch  # noqa: F401

if __name__ == "__main__":
    rec = sys.modules.get("ccasim_record")
    print("launcher recording=%s" % bool(rec and rec.is_recording()), flush=True)
    env = dict(os.environ, LOCAL_RANK="0", RANK=os.environ.get("RANK", "0"))
    sys.exit(subprocess.call(sys.argv[1:], env=env))
