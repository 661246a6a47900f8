#!/usr/bin/python3
"""Writes the bad ccasim-trace fixtures of this directory (doc/trace-format.md).

Each NAME.msgpack is a minimal valid trace with one defect, or raw bytes that
are not a trace at all; tests/unit/test-trace.c (/trace/corrupt-files) checks that
every one fails to load with a one-line error naming the file.  Needs
python3-msgpack.  Run from anywhere: ./make-fixtures.py
"""
import os

import msgpack

HERE = os.path.dirname(os.path.abspath(__file__))


def header(**over):
    counts = {"strings": 2, "frames": 2, "stacks": 2, "stack_frames": 1,
              "segments": 1, "blocks": 1, "annotations": 1, "events": [1]}
    counts.update(over.pop("counts", {}))
    h = {"format": "ccasim-trace", "version": 1, "source": "fixture.pickle",
         "pickle_protocol": 4, "devices": 1, "counts": counts}
    h.update(over)
    return h


def event(**over):
    ev = {"action": 0, "addr": 4096, "size": 100, "stream": 0, "time_us": 5,
          "stack": 1, "compile_context": 1, "user_metadata": 0}
    ev.update(over)
    return list(ev.values())


def trace(hdr=None, strings=None, frames=None, stacks=None, segments=None,
          annotations=None, devices=None):
    objs = [
        hdr if hdr is not None else header(),
        strings if strings is not None else ["", "x"],
        frames if frames is not None else [[0, 0, 0], [1, 1, 7]],
        stacks if stacks is not None else [[], [1]],
        segments if segments is not None else
        [[0, 4096, 512, 512, 512, 100, 0, True, False, [0, 0], 1,
          [[4096, 512, 100, 1, 1]]]],
        annotations if annotations is not None else [[1, 1, 0, None]],
    ]
    for evs in devices if devices is not None else [[event()]]:
        objs.append(evs)
    return b"".join(msgpack.packb(o) for o in objs)


HEAD = b"\x81\xa6format\xacccasim-trace"  # a 1-key map: sniffs as a trace

FIXTURES = {
    # not traces at all
    "empty": b"",
    "map32-huge-count": bytes.fromhex("df ff ff ff ff ff 0a"),
    # the header
    "header-only": HEAD,
    "header-map32-huge-value": b"\x82\xa6format\xacccasim-trace\xa1x"
                               + bytes.fromhex("df ff ff ff ff ff 0a"),
    "header-str32-huge": b"\x82\xa6format\xacccasim-trace\xa1x\xdb\xff\xff\xff\xff",
    "header-ext-truncated": b"\x82\xa6format\xacccasim-trace\xa1x\xc9\x00\x01\x00\x00\x01",
    "header-bad-byte": b"\x82\xa6format\xacccasim-trace\xa1x\xc1",
    "wrong-version": trace(hdr=header(version=2)),
    "version-not-int": trace(hdr=header(version="1")),
    "no-devices": trace(hdr={k: v for k, v in header().items() if k != "devices"}),
    "devices-huge": trace(hdr=header(devices=1 << 40)),
    "counts-events-length": trace(hdr=header(counts={"events": [1, 2]})),
    "settings-missing-keys": trace(hdr=header(allocator_settings={"present": True})),
    # the newer_keys map (keys of PyTorch releases after 2.11)
    "newer-not-map": trace(hdr=header(newer_keys=[1, 2])),
    "newer-count-not-int": trace(hdr=header(newer_keys={"host_segments": "many"})),
    "newer-count-negative": trace(hdr=header(newer_keys={"trace_alloc_max_entries": -2})),
    "newer-overflowed-not-bool": trace(hdr=header(newer_keys={"trace_alloc_overflowed": 1})),
    "newer-unknown-not-map": trace(hdr=header(newer_keys={"unknown_keys": ["a"]})),
    "newer-unknown-zero": trace(hdr=header(newer_keys={"unknown_keys": {"entry.x": 0}})),
    "newer-unknown-key-not-str": trace(hdr=header(newer_keys={"unknown_keys": {1: 1}})),
    # the tables
    "string-table-array32-huge": msgpack.packb(header()) + b"\xdd\xff\xff\xff\xff",
    "strings-count-beyond-bytes": trace(hdr=header(counts={"strings": 1000}),
                                        strings=[""] * 1000)[:-900],
    "strings-count-mismatch": trace(hdr=header(counts={"strings": 3})),
    "string0-not-empty": trace(strings=["a", "x"]),
    "string-not-str": trace(strings=["", 5]),
    "frame-bad-string-id": trace(frames=[[0, 0, 0], [2, 1, 7]]),
    "frame-wrong-shape": trace(frames=[[0, 0, 0], [1, 1]]),
    "stack-bad-frame-id": trace(stacks=[[], [2]]),
    "stack0-not-empty": trace(stacks=[[1], [1]]),
    "stack-frames-mismatch": trace(hdr=header(counts={"stack_frames": 2})),
    # segments, blocks, annotations
    "segment-wrong-shape": trace(segments=[[0, 4096]]),
    "segment-bad-stack-id": trace(segments=[[0, 4096, 512, 512, 512, 100, 0, True, False,
                                             [0, 0], 7, [[4096, 512, 100, 1, 1]]]]),
    "segment-device-range": trace(segments=[[1 << 40, 4096, 512, 512, 512, 100, 0, True,
                                             False, [0, 0], 1, [[4096, 512, 100, 1, 1]]]]),
    "segment-is-small-not-bool": trace(segments=[[0, 4096, 512, 512, 512, 100, 0, 1, False,
                                                  [0, 0], 1, [[4096, 512, 100, 1, 1]]]]),
    "block-bad-state": trace(segments=[[0, 4096, 512, 512, 512, 100, 0, True, False,
                                        [0, 0], 1, [[4096, 512, 100, 1, 3]]]]),
    "blocks-count-mismatch": trace(hdr=header(counts={"blocks": 2})),
    "annotation-bad-string-id": trace(annotations=[[1, 9, 0, None]]),
    # events
    "event-bad-action": trace(devices=[[event(action=9)]]),
    "event-bad-stack-id": trace(devices=[[event(stack=2)]]),
    "event-bad-string-id": trace(devices=[[event(user_metadata=2)]]),
    "event-negative-addr": trace(devices=[[event(addr=-1)]]),
    "event-time-not-int": trace(devices=[[event(time_us="soon")]]),
    "event-wrong-shape": trace(devices=[[event()[:7]]]),
    "event-pool-not-pair": trace(devices=[[event() + [[0]]]]),
    "events-count-mismatch": trace(hdr=header(counts={"events": [2]})),
    "event-truncated": trace()[:-3],
    "missing-device-array": trace(hdr=header(devices=2, counts={"events": [1, 0]})),
    "trailing-garbage": trace() + b"\xc0",
}


def main():
    for name, data in sorted(FIXTURES.items()):
        with open(os.path.join(HERE, name + ".msgpack"), "wb") as f:
            f.write(data)
    print("wrote %d fixtures to %s" % (len(FIXTURES), HERE))


if __name__ == "__main__":
    main()
