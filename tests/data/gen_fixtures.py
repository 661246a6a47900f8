#!/usr/bin/env python3
"""gen_fixtures.py - regenerates the hand-made pickle fixtures of tests/data/.

Python 3 standard library only.  Run from anywhere:

    python3 tests/data/gen_fixtures.py

Writes tests/data/*.pickle (good inputs: legacy torch 2.0 schema, protocol 2
with TorchScript type tags, protocol 5, two devices, ...) and
tests/data/bad/* (inputs every reader must refuse cleanly; they double as
the pickle fuzz seeds).  The files are deterministic: rerunning changes
nothing.  The expected values the C tests check are printed at the end
(computed here with pickle.loads, i.e. by CPython itself).
"""

import gzip
import io
import lzma
import os
import pickle
import struct
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DATA = os.path.join(ROOT, "tests", "data")
BAD = os.path.join(DATA, "bad")
SAMPLES = os.path.join(ROOT, "traces", "pytorch-2.11", "samples")


def write(path, data):
    with open(path, "wb") as f:
        f.write(data)


def frame(name, filename, line):
    return {"name": name, "filename": filename, "line": line}


# ---------------------------------------------------------------- good inputs

def legacy_2_0():
    """torch <= 2.0: blocks carry history, no address/requested_size; entries
    have no time_us; cpp_frames; a block in the documented awaiting state."""
    stack = [frame("forward", "/m.py", 10), frame("<module>", "/m.py", 99)]
    other = [frame("step", "/t.py", 5)]
    base = 139637976727552
    segments = [
        {"device": 0, "address": base, "total_size": 2097152,
         "allocated_size": 1536, "active_size": 2048, "stream": 0,
         "segment_type": "small",
         "blocks": [
             {"size": 512, "state": "active_allocated",
              "history": [{"addr": base, "real_size": 500, "frames": stack,
                           "cpp_frames": ["c10::alloc"]}]},
             {"size": 1024, "state": "active_allocated",
              "history": [{"addr": base + 512, "real_size": 1000, "frames": other}]},
             {"size": 512, "state": "active_awaiting_free"},
             {"size": 2097152 - 2048, "state": "inactive"},
         ]},
    ]
    traces = [[
        {"action": "segment_alloc", "addr": base, "size": 2097152, "stream": 0,
         "frames": stack, "cpp_frames": []},
        {"action": "alloc", "addr": base, "size": 500, "stream": 0, "frames": stack},
        {"action": "alloc", "addr": base + 512, "size": 1000, "stream": 0, "frames": other},
        {"action": "alloc", "addr": base + 1536, "size": 512, "stream": 0, "frames": []},
        {"action": "free_requested", "addr": base + 1536, "size": 512, "stream": 0,
         "frames": []},
        {"action": "oom", "device_free": 1024, "size": 4194304, "stream": 0, "frames": []},
        {"action": "snapshot", "addr": 0, "size": 2048, "stream": 0, "frames": []},
    ]]
    return {"segments": segments, "device_traces": traces}


def two_devices():
    seg = lambda dev, addr: {  # noqa: E731
        "device": dev, "address": addr, "total_size": 2097152, "allocated_size": 512,
        "active_size": 512, "requested_size": 100, "stream": 0, "segment_type": "small",
        "segment_pool_id": (0, 0), "is_expandable": False, "frames": [],
        "blocks": [
            {"address": addr, "size": 512, "requested_size": 100,
             "state": "active_allocated", "frames": []},
            {"address": addr + 512, "size": 2097152 - 512, "requested_size": 0,
             "state": "inactive", "frames": []}]}
    ev = lambda action, addr, size, t, stream=0: {  # noqa: E731
        "action": action, "addr": addr, "size": size, "stream": stream, "time_us": t,
        "compile_context": "N/A", "user_metadata": ""}
    a0, a1 = 140000000000000, 140100000000000
    return {
        # deliberately not sorted by address: the reader sorts
        "segments": [seg(1, a1), seg(0, a0)],
        "device_traces": [
            [ev("segment_alloc", a0, 2097152, 10), ev("alloc", a0, 100, 11)],
            [ev("segment_alloc", a1, 2097152, 20), ev("alloc", a1, 100, 21),
             ev("alloc", a1 + 512, 7, 22, stream=-1),
             ev("free_requested", a1 + 512, 7, 23, stream=-1),
             ev("free_completed", a1 + 512, 7, 24, stream=-1)],
        ],
    }


def post_2_11():
    """Newer main: pool_id per entry, an XPU-style address >= 2^63, a
    negative stream, unknown extra keys (forward_frames, fx_* frame keys)."""
    big = 18446720620317114368  # 9-byte LONG1 (doc/trace-format.md, "Integers")
    seg = {"device": 0, "address": big, "total_size": 1048576, "allocated_size": 1048576,
           "active_size": 1048576, "requested_size": 1000000, "stream": -1,
           "segment_type": "large", "segment_pool_id": (1, 7), "is_expandable": True,
           "frames": [], "blocks": [
               {"address": big, "size": 1048576, "requested_size": 1000000,
                "state": "active_pending_free",
                "frames": [dict(frame("f", "/g.py", 3), fx_node_op="call")]}]}
    traces = [[
        {"action": "segment_map", "addr": big, "size": 1048576, "stream": -1,
         "time_us": 1796003718032017, "compile_context": "N/A", "user_metadata": "m",
         "frames": [], "pool_id": (1, 7)},
        {"action": "alloc", "addr": big, "size": 1000000, "stream": -1,
         "time_us": 1796003718032018, "compile_context": "N/A", "user_metadata": "m",
         "frames": [], "pool_id": (1, 7), "forward_frames": ["a", "b"]},
    ]]
    settings = {"PYTORCH_CUDA_ALLOC_CONF": "roundup_power2_divisions:[256:1,512:2,>:8]",
                "max_split_size": 536870912, "garbage_collection_threshold": 0.6,
                "expandable_segments": True, "pinned_num_register_threads": 8,
                "release_lock_on_cudamalloc": True, "pinned_use_cuda_host_register": False,
                "roundup_power2_divisions": {str(1 << i): (i % 3) for i in range(16)}}
    annotations = [{"stage": "START", "name": "fwd", "device": 0, "time_us": 5},
                   {"stage": "END", "name": "fwd", "device": 0, "time_us": 9}]
    return {"segments": [seg], "device_traces": traces, "allocator_settings": settings,
            "external_annotations": annotations, "host_segments": [], "host_traces": []}


def newer_2_14(default):
    """The default 2.11 sample as a release after 2.11 would write it
    (doc/trace-format.md section 11): pool_id on every trace entry (the
    MemPool's (0, 1) inside its segment, else the default pool), two
    `annotate` entries, user_metadata given as a dict, forward_frames,
    trace_alloc_overflowed/trace_alloc_max_entries, pinned host memory
    (host_segments, host_traces), and keys no release ccasim knows
    (internal_metadata).  Replayed, it must check exactly as the sample."""
    import copy
    snap = copy.deepcopy(default)

    def pool_of(addr):
        for seg in snap["segments"]:
            if seg["address"] <= addr < seg["address"] + seg["total_size"]:
                return seg["segment_pool_id"]
        return (0, 0)

    entries = []
    for i, e in enumerate(snap["device_traces"][0]):
        e = dict(e)
        e["pool_id"] = (0, 0) if e["action"] == "oom" else pool_of(e["addr"])
        if i == 5:
            e["user_metadata"] = {"step": 3, "phase": "warmup", "tags": ["a", "b"]}
        if i == 6:
            e["user_metadata"] = {}
        if i == 9:
            e["forward_frames"] = ["  File \"/m.py\", line 3, in forward\n"]
            e["internal_metadata"] = {"x": 1}
        entries.append(e)
        if e["action"] == "alloc" and i in (2, 34):
            entries.append({"action": "annotate", "addr": e["addr"], "size": 0,
                            "stream": e["stream"], "time_us": e["time_us"],
                            "compile_context": "N/A", "user_metadata": "weight",
                            "frames": [], "pool_id": e["pool_id"]})
    snap["device_traces"][0] = entries
    snap["segments"][0]["internal_metadata"] = "seg"
    snap["allocator_settings"]["trace_alloc_overflowed"] = False
    snap["allocator_settings"]["trace_alloc_max_entries"] = sys.maxsize
    snap["host_segments"] = [{"address": 0x7f0000000000, "total_size": 2097152,
                              "blocks": [{"size": 2097152, "state": "inactive"}]}]
    snap["host_traces"] = [[{"action": "segment_alloc", "addr": 0x7f0000000000,
                             "size": 2097152, "stream": 0, "time_us": 1},
                            {"action": "alloc", "addr": 0x7f0000000000, "size": 4096,
                             "stream": 0, "time_us": 2}]]
    return snap


class TorchScriptPickler:
    """A protocol-2 writer shaped like torch::jit::Pickler with tag_aggregates:
    BINPUT/LONG_BINPUT with explicit indices, strings deduplicated by content
    and always BINUNICODE, out-of-int32 ints as 8-byte LONG1, dicts and
    lists in one MARK batch, each wrapped in restore_type_tag + REDUCE."""

    def __init__(self, first_index=0, tags=True):
        self.out = io.BytesIO()
        self.next = first_index
        self.strings = {}
        self.tag_index = None
        self.tags = tags  # False: tag_aggregates=false, as the snapshot code

    def put(self):
        i = self.next
        self.next += 1
        if i < 256:
            self.out.write(b"q" + bytes([i]))
        else:
            self.out.write(b"r" + struct.pack("<I", i))
        return i

    def get(self, i):
        if i < 256:
            self.out.write(b"h" + bytes([i]))
        else:
            self.out.write(b"j" + struct.pack("<I", i))

    def tag(self):
        if self.tag_index is None:
            self.out.write(b"ctorch.jit._pickle\nrestore_type_tag\n")
            self.tag_index = self.put()
        else:
            self.get(self.tag_index)

    def value(self, v):
        w = self.out.write
        if v is None:
            w(b"N")
        elif v is True:
            w(b"\x88")
        elif v is False:
            w(b"\x89")
        elif isinstance(v, int):
            if 0 <= v < 256:
                w(b"K" + bytes([v]))
            elif 0 <= v < 65536:
                w(b"M" + struct.pack("<H", v))
            elif -2**31 <= v < 2**31:
                w(b"J" + struct.pack("<i", v))
            else:
                w(b"\x8a\x08" + struct.pack("<q", v))
        elif isinstance(v, float):
            w(b"G" + struct.pack(">d", v))
        elif isinstance(v, str):
            if v in self.strings:
                self.get(self.strings[v])
            else:
                b = v.encode()
                w(b"X" + struct.pack("<I", len(b)) + b)
                self.strings[v] = self.put()
        elif isinstance(v, tuple):
            for x in v:
                self.value(x)
            w({0: b")", 1: b"\x85", 2: b"\x86", 3: b"\x87"}.get(len(v), b"t"))
            self.put()
        elif isinstance(v, dict):
            if self.tags:
                self.tag()
            w(b"}")
            self.put()
            w(b"(")
            for k, x in v.items():
                self.value(k)
                self.value(x)
            w(b"u")
            if self.tags:
                self.value("Dict[str, Any]")
                w(b"\x86R")
        elif isinstance(v, list):
            if self.tags:
                self.tag()
            w(b"]")
            self.put()
            w(b"(")
            for x in v:
                self.value(x)
            w(b"e")
            if self.tags:
                self.value("List[Any]")
                w(b"\x86R")
        else:
            raise TypeError(type(v))

    def dumps(self, v):
        self.out.write(b"\x80\x02")
        self.value(v)
        self.out.write(b".")
        return self.out.getvalue()


def sample(name):
    with open(os.path.join(SAMPLES, name), "rb") as f:
        return f.read()


# ---------------------------------------------------------------- bad inputs

def newer_entry(settings=None, **entry):
    """A one-entry snapshot whose entry (and allocator_settings) get the
    keys given: hostile values of the keys releases after 2.11 add."""
    ev = {"action": "alloc", "addr": 1 << 32, "size": 512, "stream": 0, "time_us": 1,
          "compile_context": "N/A", "user_metadata": "", "frames": []}
    ev.update(entry)
    snap = {"segments": [], "device_traces": [[ev]]}
    if settings is not None:
        snap["allocator_settings"] = settings
    return pickle.dumps(snap, protocol=4)


def newer_hostile():
    """Keys of releases after 2.11 given values no PyTorch writes, where
    ccasim only counts them (they must load): host_* and forward_frames of
    the wrong type, user_metadata that is cyclic, deep, wide or keyed by
    non-str keys, unknown keys with control bytes, more distinct unknown
    keys than ccasim names, and an annotate entry whose other keys are
    garbage."""
    cyclic = []
    cyclic.append(cyclic)
    deep = {}
    d = deep
    for _ in range(40):
        d["k"] = {}
        d = d["k"]
    wide = {("k%04d" % i): i for i in range(1000)}
    odd_keys = {1: "one", None: "none", (1, 2): "pair", 2.5: "x", True: "t",
                "q\"\\\n\x01": float("inf"), "nan": float("nan"), "big": 1 << 63,
                "neg": -(1 << 63), "half": 0.5, "e": 1e-07}
    entry = {"action": "alloc", "addr": 1 << 32, "size": 512, "stream": 0, "time_us": 1,
             "compile_context": ["not", "a", "str"], "user_metadata": "", "frames": [],
             "forward_frames": 7, "pool_id": (0, 0)}
    entries = []
    for i, md in enumerate([cyclic, deep, wide, odd_keys, cyclic]):
        e = dict(entry, user_metadata=md, addr=(1 << 32) + 512 * i)
        e["unknown\x1b[31m%d" % i] = i
        entries.append(e)
    for i in range(20):
        entries[0]["extra_%02d" % i] = i
    entries.append({"action": "annotate", "addr": "nowhere", "size": "big",
                    "user_metadata": cyclic, "pool_id": "bad"})
    return {"segments": [], "device_traces": [entries], "host_segments": 5,
            "host_traces": {"a": 1}, "\x00odd top": 1}


def bad_inputs():
    snap_head = b"\x80\x04"
    bad = {
        # code execution: must be refused before anything runs
        "global-os-system.pickle":
            b"\x80\x02cos\nsystem\nq\x00X\x1d\x00\x00\x00touch /tmp/ccasim-pickle-pwned"
            b"\x85q\x01Rq\x02.",
        "stack-global-os-system.pickle":
            snap_head + b"\x8c\x02os\x94\x8c\x06system\x94\x93\x94\x8c\x1dtouch "
            b"/tmp/ccasim-pickle-pwned\x94\x85\x94R\x94.",
        "build.pickle": snap_head + b"}\x94}\x94b.",
        "newobj.pickle": snap_head + b")\x94)\x94\x81.",
        "newobj-ex.pickle": snap_head + b"))}\x92.",
        "reduce-list.pickle": snap_head + b"]\x94)\x94R.",
        "inst.pickle": b"\x80\x02(iposix\nsystem\n.",
        "obj.pickle": b"\x80\x02(]o.",
        "persid.pickle": b"\x80\x02P0\n.",
        "binpersid.pickle": b"\x80\x02K\x01Q.",
        "ext1.pickle": b"\x80\x02\x82\x01.",
        "bytearray8.pickle": b"\x80\x05\x96\x00\x00\x00\x00\x00\x00\x00\x00.",
        "next-buffer.pickle": b"\x80\x05\x97.",
        # unsupported or unknown opcodes
        "binbytes.pickle": b"\x80\x03C\x01x.",
        "unknown-opcode.pickle": b"\x80\x04\xff.",
        "protocol-1.pickle": b"\x80\x01N.",
        "protocol-6.pickle": b"\x80\x06N.",
        "no-proto.pickle": b"N.",
        # truncation and structure
        "empty": b"",
        "missing-stop.pickle": b"\x80\x04}\x94",
        "stop-not-empty.pickle": b"\x80\x04K\x01K\x02.",
        "stop-open-mark.pickle": b"\x80\x04(K\x01.",
        "stack-underflow.pickle": b"\x80\x04a.",
        "appends-no-mark.pickle": b"\x80\x04]K\x01e.",
        "setitems-odd.pickle": b"\x80\x04}(K\x01u.",
        "append-to-dict.pickle": b"\x80\x04}K\x01a.",
        "mark-crossed.pickle": b"\x80\x04](K\x01a.",
        "memo-empty.pickle": b"\x80\x04h\x05.",
        "memo-huge-index.pickle": b"\x80\x04Nr\xff\xff\xff\xff.",
        "global-no-newline.pickle": b"\x80\x02ctorch.jit._pickle",
        "reduce-bad-args.pickle":
            b"\x80\x02ctorch.jit._pickle\nrestore_type_tag\nK\x01R.",
        # absurd counts
        "binunicode-4g.pickle": b"\x80\x04X\xff\xff\xff\xffabc.",
        "binunicode8-huge.pickle": b"\x80\x04\x8d" + b"\xff" * 8 + b"abc.",
        "long4-huge.pickle": b"\x80\x04\x8b\xff\xff\xff\xff\x00.",
        "long1-too-big.pickle": b"\x80\x04\x8a\x09" + b"\x00" * 8 + b"\x01.",
        "long4-too-big.pickle": b"\x80\x04\x8b\x0a\x00\x00\x00" + b"\x00" * 8 + b"\x01\x00.",
        "deep-marks.pickle": b"\x80\x04" + b"(" * 20000 + b".",
        # well-formed pickles that are not snapshots
        "not-snapshot-int.pickle": pickle.dumps(42, protocol=4),
        "not-snapshot-list.pickle": pickle.dumps([1, 2, 3], protocol=4),
        "not-snapshot-dict.pickle": pickle.dumps({"a": 1}, protocol=4),
        "not-pickle.txt": b"hello, world\n",
        # snapshots with schema errors
        "unknown-action.pickle": pickle.dumps(
            {"segments": [], "device_traces": [[
                {"action": "alloc", "addr": 1, "size": 2, "stream": 0},
                {"action": "teleport", "addr": 1, "size": 2, "stream": 0}]]}, protocol=4),
        "wrong-type.pickle": pickle.dumps(
            {"segments": [], "device_traces": [[
                {"action": "alloc", "addr": 1, "size": 2, "stream": 0},
                {"action": "alloc", "addr": 1, "size": 2, "stream": 0},
                {"action": "alloc", "addr": 1, "size": "big", "stream": 0}]]}, protocol=4),
        "segment-missing-key.pickle": pickle.dumps(
            {"segments": [{"device": 0, "total_size": 512, "segment_type": "small",
                           "blocks": []}]}, protocol=4),
        "blocks-short.pickle": pickle.dumps(
            {"segments": [{"device": 0, "address": 4096, "total_size": 2048,
                           "segment_type": "small",
                           "blocks": [{"size": 512, "state": "inactive"}]}]}, protocol=4),
        # keys of releases after 2.11 with the wrong type, where ccasim uses them
        "newer-pool-id-str.pickle": newer_entry(pool_id="(0, 1)"),
        "newer-pool-id-triple.pickle": newer_entry(pool_id=(0, 1, 2)),
        "newer-pool-id-huge.pickle": newer_entry(pool_id=(0, 1 << 63)),
        "newer-pool-id-str-item.pickle": newer_entry(pool_id=(0, "1")),
        "newer-overflowed-str.pickle": newer_entry(settings={"trace_alloc_overflowed": "no"}),
        "newer-max-entries-negative.pickle":
            newer_entry(settings={"trace_alloc_max_entries": -5}),
        # a trace entry referenced again after its batch was converted
        "trace-entry-shared.pickle":
            snap_head + b"}\x94(\x8c\x08segments\x94]\x94\x8c\rdevice_traces\x94]\x94]\x94("
            b"}\x94(\x8c\x06action\x94\x8c\x05alloc\x94\x8c\x04addr\x94K\x01\x8c\x04size\x94"
            b"K\x02ueh\x06aau.",
    }
    truncated = sample("snap_default_2.11.pickle")
    bad["truncated-half.pickle"] = truncated[:len(truncated) // 2]
    bad["truncated.pickle.xz"] = lzma.compress(truncated)[:-40]
    bad["truncated.pickle.gz"] = gzip.compress(truncated, mtime=0)[:-30]
    bad["corrupt.pickle.gz"] = bytearray(gzip.compress(truncated, mtime=0))
    bad["corrupt.pickle.gz"][40] ^= 0xff
    bad["corrupt.pickle.gz"] = bytes(bad["corrupt.pickle.gz"])
    bad["gzip-trailing-garbage.pickle.gz"] = gzip.compress(truncated, mtime=0) + b"junk"
    rng = 12345  # a small LCG, so the bytes never depend on Python's random
    noise = bytearray()
    for _ in range(4096):
        rng = (rng * 1103515245 + 12345) & 0x7fffffff
        noise.append(rng >> 16 & 0xff)
    bad["random-bytes"] = bytes(noise)
    bad["random-after-header.pickle"] = b"\x80\x04" + bytes(noise[:1024])
    return bad


def main():
    os.makedirs(BAD, exist_ok=True)
    default = sample("snap_default_2.11.pickle")
    obj = pickle.loads(default)

    good = {
        "legacy-2.0.pickle": pickle.dumps(legacy_2_0(), protocol=4),
        "two-devices.pickle": pickle.dumps(two_devices(), protocol=4),
        "post-2.11.pickle": pickle.dumps(post_2_11(), protocol=4),
        "newer-2.14.pickle": pickle.dumps(newer_2_14(obj), protocol=4),
        "newer-hostile.pickle": pickle.dumps(newer_hostile(), protocol=4),
        "default-protocol2.pickle": pickle.dumps(obj, protocol=2),
        "default-protocol5.pickle": pickle.dumps(obj, protocol=5),
        "default-torchscript.pickle": TorchScriptPickler(first_index=200).dumps(obj),
        # what torch::cuda::_memory_snapshot_pickled() writes (no type tags)
        "default-cxx.pickle": TorchScriptPickler(tags=False).dumps(obj),
        "two-devices-cxx.pickle": TorchScriptPickler(tags=False).dumps(two_devices()),
        "segments-only.pickle": pickle.dumps(obj["segments"], protocol=4),
        "default.pickle.gz": gzip.compress(default, mtime=0),
        "default.pickle.xz": lzma.compress(default),
        # two gzip members and two xz streams, as `cat a.gz b.gz` makes
        "default-2members.pickle.gz":
            gzip.compress(default[:1000], mtime=0) + gzip.compress(default[1000:], mtime=0),
        "default-2streams.pickle.xz":
            lzma.compress(default[:1000]) + lzma.compress(default[1000:]),
        # FRAME claiming 2^64-1 bytes: the length is only a hint
        "frame-huge.pickle": b"\x80\x04\x95" + b"\xff" * 8 + default[11:],
        # 20000 nested lists built without MARKs: deep graph, flat stack
        "deep-lists.pickle": b"\x80\x04" + b"]" * 20000 + b"a" * 19999 + b".",
    }
    for name, data in good.items():
        write(os.path.join(DATA, name), data)
    # Python's own repr() of each sample, which test-pickle compares with
    # cca_pickle_repr() of the C reader's graph.
    for name in sorted(os.listdir(SAMPLES)):
        if name.endswith(".pickle"):
            text = repr(pickle.loads(sample(name))) + "\n"
            write(os.path.join(DATA, name[:-len(".pickle")] + ".repr"), text.encode())
    for name, data in bad_inputs().items():
        write(os.path.join(BAD, name), data)

    # Cross-checks, printed for the C tests' comments.  The TorchScript
    # fixture needs torch.jit._pickle.restore_type_tag: a stand-in that
    # returns its first argument, which is all the real one does.
    import types
    for mod in ("torch", "torch.jit", "torch.jit._pickle"):
        sys.modules.setdefault(mod, types.ModuleType(mod))
    sys.modules["torch.jit._pickle"].restore_type_tag = lambda value, type_str: value
    for name in ("default-protocol2.pickle", "default-protocol5.pickle",
                 "default-torchscript.pickle", "default-cxx.pickle"):
        with open(os.path.join(DATA, name), "rb") as f:
            assert pickle.loads(f.read()) == obj, name
    leg = pickle.loads(good["legacy-2.0.pickle"])
    print("legacy-2.0: events", len(leg["device_traces"][0]),
          "blocks", len(leg["segments"][0]["blocks"]))
    print("torchscript bytes", len(good["default-torchscript.pickle"]),
          "has LONG_BINPUT", b"r" in good["default-torchscript.pickle"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
