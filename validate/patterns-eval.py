#!/usr/bin/python3
"""Measure ccasim on recorded pattern traces (traces/patterns-2.11/README.md): for each W.C, the
replay under its recorded settings with --check against every
memory_stats() key, and the what-if from W.default to C against W.C's live
run on the reserved-side keys, where both runs made the same requests.

  validate/patterns-eval.py CCASIM DIR [PREFIX...]
Cases are W.C or W.C.rN (repeats: the what-if's base is W.default.rN); with
PREFIXes, only the cases whose name starts with one of them.
Prints one line per case and a summary; exit 0 always (a measurement)."""
import json, os, subprocess, sys, lzma, pickle

RESERVED = ("reserved_bytes.", "segment.", "num_device_alloc", "num_device_free",
            "num_alloc_retries", "num_ooms")


def requests(path):
    with lzma.open(path) as f:
        snap = pickle.load(f)
    tr = snap["device_traces"][0]
    streams = {}  # stream handles differ between processes: number them in order
    # the program's requests: alloc and free_requested (and oom, a request
    # that failed); free_completed entries are not requests (a stream's
    # events finishing, or the allocator's own synchronisation under a cap)
    return [(e["action"], e["size"], streams.setdefault(e["stream"], len(streams)))
            for e in tr if e["action"] in ("alloc", "free_requested", "oom")]


def same_until_oom(base, live):
    """Whether the live run made the base run's requests up to its first
    oom entry, which came where the base made a request of that size: a
    run stopped by the OOM (what it freed while unwinding changes no
    reserved-side key) is then the truth of a what-if that stops there."""
    acts = [r[0] for r in live]
    if "oom" not in acts:
        return False
    k = acts.index("oom")
    plain = lambda rs: [r for r in rs if r[0] != "oom"]
    return (plain(live[:k]) == plain(base)[:len(plain(live[:k]))]
            and len(plain(base)) > len(plain(live[:k])))


def replay(ccasim, trace, meta, conf=None, check=False):
    args = [ccasim, "replay", "--json", trace]
    if meta["cap_bytes"]:
        args += ["--memory-fraction", repr(min(1.0, meta["cap_bytes"] / meta["total_memory"]))]
    if conf is not None:
        args += ["--config", conf] if conf else ["--whatif"]
    if check:
        args.append("--check")
    p = subprocess.run(args, capture_output=True, text=True)
    try:
        return json.loads(p.stdout), p.stderr.strip()
    except ValueError:
        return None, (p.stderr.strip() or "no output")[:300]


def diff(model, truth, prefixes=None):
    out = []
    for k, v in sorted(truth.items()):
        if prefixes and not k.startswith(prefixes):
            continue
        m = model.get(k)
        if m is not None and m != v:
            out.append(f"{k}: torch {v} model {m}")
    return out


def main():
    ccasim, d = sys.argv[1], sys.argv[2]
    prefixes = tuple(a for a in sys.argv[3:] if not a.startswith("--"))
    names = sorted(f[:-5] for f in os.listdir(d) if f.endswith(".json")
                   and (not prefixes or f.startswith(prefixes))
                   and os.path.exists(os.path.join(d, f[:-5] + ".pickle.xz")))
    exact = total = wexact = wtotal = 0
    for n in names:
        meta = json.load(open(os.path.join(d, n + ".json")))
        trace = os.path.join(d, n + ".pickle.xz")
        r, err = replay(ccasim, trace, meta, check=True)
        total += 1
        if r is None:
            print(f"{n:16} recorded: ERROR {err}")
            continue
        ms = r.get("memory_stats") or {}
        nulls = [k for k, v in ms.items() if v is None]
        dd = diff(ms, meta["memory_stats"])
        chk = (r.get("check") or {}).get("passed")
        ok = chk and not dd
        exact += ok
        print(f"{n:16} recorded: check {'passed' if chk else 'FAILED'}; "
              f"{len(meta['memory_stats']) - len(dd) - len(nulls)} keys equal, {len(dd)} differ, "
              f"{len(nulls)} unknown" + ("" if not dd else " (" + "; ".join(dd[:4]) + ")")
              + ("" if chk else " [" + str((r.get('check') or {}).get('message'))[:200] + "]"))
    for n in names:
        w, c, *rest = n.split(".")
        if c == "default":
            continue
        base = os.path.join(d, ".".join([w, "default"] + rest) + ".pickle.xz")
        meta = json.load(open(os.path.join(d, n + ".json")))
        breq, lreq = requests(base), requests(os.path.join(d, n + ".pickle.xz"))
        # a run the OOM ended (not one that caught it and went on)
        until_oom = (breq != lreq and meta.get("status", "").startswith("oom")
                     and same_until_oom(breq, lreq))
        if breq != lreq and not until_oom:
            print(f"{n:16} what-if: not a truth (the live run made other requests)")
            continue
        probe, _ = replay(ccasim, base, {"cap_bytes": 0})
        if probe and probe.get("window"):
            print(f"{n:16} what-if: not a truth (a window of the run: its start state was "
                  "made under the recorded settings)")
            continue
        wtotal += 1
        r, err = replay(ccasim, base, meta, conf=meta["PYTORCH_CUDA_ALLOC_CONF"])
        if r is None:
            print(f"{n:16} what-if: ERROR {err}")
            continue
        dd = diff(r["memory_stats"], meta["memory_stats"], RESERVED)
        if until_oom and not r.get("oom"):
            dd.append("the what-if ran to the end; the live run ran out of memory")
        wexact += not dd
        tag = " (both stop at the OOM)" if until_oom else ""
        print(f"{n:16} what-if: {'exact' + tag if not dd else 'DIFFERS: ' + '; '.join(dd[:4])}")
    print(f"summary: recorded exact {exact}/{total}; what-ifs exact {wexact}/{wtotal}")


if __name__ == "__main__":
    main()
