"""ccasim_record - records what a PyTorch memory snapshot leaves out (doc/recording.md).

A snapshot (torch.cuda.memory._snapshot()) holds the allocator's events, not
the program's calls into the allocator: an empty_cache() that freed nothing,
_set_allocator_settings(), set_per_process_memory_fraction(), the stats
resets, MemPool and use_mem_pool, CUDA graph capture and the memory held
outside the caching allocator leave no trace.  This module records them, with
the allocator's cumulative counts at each call, and writes them into the
snapshot's `external_annotations` when it dumps (doc/recording.md has the
format, which ccasim parses).

    import ccasim_record
    ccasim_record.start(out_dir="dumps")      # after `import torch`
    ...
    ccasim_record.dump()                      # reason "manual"
    ccasim_record.stop()

or, for a whole program, `ccasim-record --out dumps -- python3 train.py`,
which injects this module through PYTHONPATH (record/record-site/
sitecustomize.py) and the CCASIM_RECORD environment variable.

Invariants: no Python work per allocation (the recorded calls are rare);
the injected code never imports torch itself; a patched function calls the
original with the same arguments and lets its exceptions through; no torch
call is made while the recorder's own lock is held; a dump is written to a
temporary file of its own (mkstemp: created, never opened through a link)
and linked to a name no other file has, so a dump file is whole or absent
and never replaces another; a signal handler only writes one byte to a
pipe: the dump is the dumper thread's (doc/recording.md says why there).
Python 3 standard library only (plus torch, imported when recording
starts).
"""

import atexit
import functools
import gzip
import json
import lzma
import os
import pickle
import re
import signal
import sys
import tempfile
import threading
import time
import weakref

__all__ = ["start", "dump", "stop", "is_recording", "enc", "main"]

PROG = "ccasim-record"
FORMAT_VERSION = 1
REASONS = ("oom", "exit", "manual", "signal")
PICKLE_PROTOCOL = 4  # what torch's _dump_snapshot writes on Python 3.8-3.13
MAX_RANK = 999999    # the largest RANK, SLURM_PROCID or LOCAL_RANK taken
DUMP_DIR_MODE = 0o700  # a dump folder the recorder creates

# --------------------------------------------------------------- options
# One table drives the command line, start()'s keywords, the JSON of
# CCASIM_RECORD and --help: (keyword, option, metavar, default, help).
# The metavar None marks a flag (no value; it sets the keyword to the
# value in `default`'s opposite).


def _int_at_least(low, what):
    def check(v):
        if isinstance(v, str) and v.strip().lstrip("+").isdigit():
            v = int(v.strip())
        if isinstance(v, bool) or not isinstance(v, int) or v < low:
            raise ValueError("expected %s, got %r" % (what, v))
        return v
    return check


_positive_int = _int_at_least(1, "a positive integer")
_count = _int_at_least(0, "a count >= 0")


def _seconds(v):
    try:
        if isinstance(v, bool):
            raise ValueError
        x = float(v)
    except (TypeError, ValueError):
        raise ValueError("expected seconds >= 0, got %r" % (v,)) from None
    if not 0 <= x < float("inf"):
        raise ValueError("expected seconds >= 0, got %r" % (v,))
    return x


def _choice(*allowed):
    def check(v):
        if v not in allowed:
            raise ValueError("expected one of %s, got %r" % ("|".join(allowed), v))
        return v
    return check


def _signal_name(v):
    if v is None or v == "":
        return None
    s = str(v).strip().upper()
    try:
        sig = signal.Signals(int(s)) if s.isdigit() else signal.Signals[
            s if s.startswith("SIG") else "SIG" + s]
    except (KeyError, ValueError):
        raise ValueError("not a signal: %r" % (v,))
    if sig in (signal.SIGKILL, signal.SIGSTOP):
        raise ValueError("%s cannot be caught" % sig.name)
    return sig.name


def _text(v):
    if not isinstance(v, str):
        raise ValueError("expected a string, got %r" % (v,))
    return v


def _name_part(v):
    v = _text(v)
    if "/" in v or "\0" in v:
        raise ValueError("must not contain '/': %r" % (v,))
    return v


def _dir(v):
    v = _text(v)
    if v == "":
        raise ValueError("empty directory name")
    return v


def _flag(v):
    if not isinstance(v, bool):
        raise ValueError("expected True or False, got %r" % (v,))
    return v


def _file_mode(v):
    """An octal mode ("0644", "640", "0o600", or an int) for the dump
    files: read and write bits only, the owner's read and write included."""
    m = None
    if isinstance(v, int) and not isinstance(v, bool):
        m = v
    elif isinstance(v, str) and re.fullmatch(r"(0o?)?[0-7]{1,4}", v.strip()):
        m = int(v.strip().replace("o", ""), 8)
    if m is None or m & ~0o666 or m & 0o600 != 0o600:
        raise ValueError("expected an octal mode of read/write bits with the owner's read and "
                         "write (0600, 0640, 0644, ...), got %r" % (v,))
    return m


OPTIONS = [
    ("out_dir", "--out", "DIR", ".", _dir,
     "directory of the dumps (created when missing; default: the current one)"),
    ("prefix", "--prefix", "TEXT", "ccasim-", _name_part,
     "start of every dump's file name (default: ccasim-)"),
    ("job", "--job", "NAME", None, _name_part,
     "job part of the names (default: SLURM_JOB_ID, TORCHELASTIC_RUN_ID, else the UTC start time)"),
    ("stacks", "--stacks", "python|all|none", "python", _choice("python", "all", "none"),
     "stack traces in the snapshot: Python frames, also C++ frames, or none (default: python)"),
    ("max_entries", "--max-entries", "N", 1000000, _positive_int,
     "size of the allocator's trace ring (default: 1000000)"),
    ("sample_interval", "--sample-interval", "SECONDS", 1.0, _seconds,
     "period of the device-memory sampler thread; 0: no thread (default: 1.0)"),
    ("compress", "--compress", "xz|gz|none", "none", _choice("xz", "gz", "none"),
     "compression of the dumps (default: none)"),
    ("dump_on_signal", "--dump-on-signal", "SIGNAL", None, _signal_name,
     "also dump when the process receives SIGNAL (e.g. USR1)"),
    ("oom_dumps", "--oom-dumps", "N", 1, _count,
     "dumps taken at the first N out-of-memory errors; 0: none (default: 1)"),
    ("dump_at_exit", "--no-dump-at-exit", None, True, _flag,
     "do not dump when the process exits"),
    ("quiet", "--quiet", None, False, _flag,
     "do not print a line for each dump written"),
    ("dump_mode", "--dump-mode", "MODE", 0o600, _file_mode,
     "permissions of the dump files, octal (default: 0600; e.g. 0640, 0644)"),
]
_BY_KEY = {row[0]: row for row in OPTIONS}
_BY_OPT = {row[1]: row for row in OPTIONS}


def check_options(values, spelling="keyword"):
    """Returns the full option dict: the defaults updated with `values`, each
    checked.  Raises ValueError naming the option (as a keyword or, with
    spelling="option", as its command-line form) for an unknown or bad one."""
    out = {row[0]: row[3] for row in OPTIONS}
    for key, v in values.items():
        row = _BY_KEY.get(key)
        if row is None:
            raise ValueError("unknown option %r" % (key,))
        name = row[1] if spelling == "option" else key
        if v is None and row[3] is None:
            out[key] = None
            continue
        try:
            out[key] = row[4](v)
        except (TypeError, ValueError) as e:
            raise ValueError("%s: %s" % (name, e)) from None
    return out


# --------------------------------------------------------------- the format

_SAFE = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._:,/+-")


def enc(v):
    """A record field's value as text: str(v) (v itself for a string) with
    every byte of its UTF-8 form outside A-Za-z0-9._:,/+- written %XX
    (uppercase hex), so that spaces, '=' and '%' never appear raw."""
    s = v if isinstance(v, str) else str(v)
    try:
        b = s.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        b = s.encode("utf-8", "backslashreplace")
    return "".join(chr(c) if c in _SAFE else "%%%02X" % c for c in b)


def record_name(kind, fields):
    """"ccasim:KIND k=v k=v ..." for the (key, value) pairs of `fields`."""
    return "ccasim:" + kind + "".join(" %s=%s" % (k, enc(v)) for k, v in fields)


def _pool_text(pool):
    """A pool id (a tuple of two ints, a MemPool, a graph pool handle) as
    "a,b"."""
    pid = getattr(pool, "id", pool)
    if callable(pid):
        pid = pid()
    ids = tuple(int(x) for x in tuple(pid))
    if len(ids) != 2:
        raise ValueError("pool id %r is not two integers" % (pid,))
    return "%d,%d" % ids


# --------------------------------------------------------------- naming


def _utc_stamp(t):
    return time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(t))


def _clean(s):
    return "".join(c if c.isalnum() or c in "._+-" else "_" for c in s)


def job_name(opts, env=None, started=None):
    """The job part of the dump names: --job, else SLURM_JOB_ID, else
    TORCHELASTIC_RUN_ID (unless torchrun's default "none"), else the UTC
    time the recording started (the wrapper's, shared by all its
    processes)."""
    env = os.environ if env is None else env
    for v in (opts.get("job"), env.get("SLURM_JOB_ID"), env.get("TORCHELASTIC_RUN_ID")):
        if v and v != "none":
            return _clean(v)
    return _utc_stamp(time.time() if started is None else started)


class EnvError(ValueError):
    """An environment variable the recorder reads holds what it cannot
    take (a rank that is not a number)."""


def _env_rank(env, key):
    """int(env[key]) where it is a decimal integer 0..MAX_RANK; None where
    key is unset; raises EnvError naming key and value otherwise."""
    v = env.get(key)
    if v is None:
        return None
    if re.fullmatch(r"[0-9]{1,7}", v, re.ASCII) and int(v) <= MAX_RANK:
        return int(v)
    shown = repr(v if len(v) <= 64 else v[:64] + "...")
    raise EnvError("%s=%s is not a rank (a decimal integer from 0 to %d)" % (key, shown, MAX_RANK))


def rank_of(env=None):
    """The process's rank: RANK, else SLURM_PROCID, else 0.  Raises
    EnvError (naming the variable and its value) where RANK, SLURM_PROCID or
    LOCAL_RANK is set to anything but a decimal integer 0..MAX_RANK: such a
    value is never taken as rank 0, nor put into a file name."""
    env = os.environ if env is None else env
    ranks = [_env_rank(env, k) for k in ("RANK", "SLURM_PROCID", "LOCAL_RANK")]
    for r in ranks[:2]:
        if r is not None:
            return r
    return 0


def dump_file_name(prefix, job, rank, pid, device, seq, reason, compress):
    """{prefix}{job}-r{rank:05d}-p{pid:07d}-d{device:02d}-{seq:03d}-{reason}.pickle[.xz|.gz]:
    sorted by name, a fleet of dumps is in job, rank, process, device,
    sequence order; the process id keeps apart processes of one job that
    share a rank (none given)."""
    ext = {"none": "", "xz": ".xz", "gz": ".gz"}[compress]
    return "%s%s-r%05d-p%07d-d%02d-%03d-%s.pickle%s" % (prefix, job, rank, pid, device, seq,
                                                        reason, ext)


def _numbered(path, n):
    """path with "-n" before its ".pickle" (n > 0): the name of a dump whose
    own name was taken."""
    head, dot, tail = path.rpartition(".pickle")
    return "%s-%d%s%s" % (head, n, dot, tail) if dot else "%s-%d" % (path, n)


def _link_new(tmp, path):
    """Gives the file `tmp` a name no file had: `path`, else path-1, path-2
    ... (_numbered), through link(), which never replaces nor follows what
    is there; where the filesystem cannot link, a rename to a name found
    free.  Returns the name; `tmp` is gone."""
    for n in range(1000):
        cand = path if n == 0 else _numbered(path, n)
        try:
            os.link(tmp, cand)
        except FileExistsError:
            continue
        except OSError:  # no hard links here (EPERM, ENOTSUP, EXDEV, EMLINK)
            if os.path.lexists(cand):
                continue
            os.replace(tmp, cand)
            return cand
        os.unlink(tmp)
        return cand
    raise FileExistsError(17, "1000 names taken", path)


def write_atomic(path, obj, compress, mode=0o600):
    """Pickles `obj` into a new file named `path` (or, where a file of that
    name exists, _numbered(path, n)), with permissions `mode`: through a
    temporary file of the same directory made by mkstemp (O_EXCL: a link
    planted there is never followed), flushed, fsynced and linked to its
    name.  Returns the name written.  Raises OSError (the temporary file
    removed)."""
    d, base = os.path.split(path)
    fd, tmp = tempfile.mkstemp(dir=d or ".", prefix="." + base + ".", suffix=".tmp")
    try:
        os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as f:
            fd = None
            if compress == "xz":
                with lzma.LZMAFile(f, "wb", preset=1) as z:
                    pickle.dump(obj, z, protocol=PICKLE_PROTOCOL)
            elif compress == "gz":
                with gzip.GzipFile(fileobj=f, mode="wb", mtime=0) as z:
                    pickle.dump(obj, z, protocol=PICKLE_PROTOCOL)
            else:
                pickle.dump(obj, f, protocol=PICKLE_PROTOCOL)
            f.flush()
            os.fsync(f.fileno())
        path = _link_new(tmp, path)
    except BaseException:
        if fd is not None:
            os.close(fd)
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    try:  # the rename itself durable (best effort: not every filesystem can)
        fd = os.open(d or ".", os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    except OSError:
        pass
    return path


def make_dump_dir(path):
    """Creates the dump folder `path` (mode DUMP_DIR_MODE; the folders
    above it as the umask says) unless it exists.  Raises OSError."""
    os.makedirs(path, mode=DUMP_DIR_MODE, exist_ok=True)


def _say(msg):
    try:
        sys.stderr.write("%s: %s\n" % (PROG, msg))
        sys.stderr.flush()
    except Exception:
        pass


# --------------------------------------------------------------- the recorder

_tls = threading.local()  # .depth: > 0 inside a recorded call (nested ones are not recorded)
_ACTIVE = None            # the Recorder that records, or None
_OBSERVER_ATTACHED = False


class Recorder:
    """One recording: the records, per-device offsets and samples, the
    patches.  Use the module's start(), dump() and stop()."""

    def __init__(self, torch, opts, started=None, rank=0):
        self.torch = torch
        self.opts = opts
        self.started = time.time() if started is None else started
        self.job = job_name(opts, started=self.started)
        self.rank = rank
        self.records = []     # the record dicts, in the order they were taken
        self.inflight = set()  # id() of the records whose call has not returned yet
        self.offsets = {}     # device -> [allocs, frees, ooms] zeroed by earlier resets
        self.peak = {}        # device -> (reserved, total, free, time_us, counts)
        self.seen = set()     # devices whose `device_memory when=start` is taken
        self.active_devs = set()  # devices the allocator has reserved memory on
        self.capturing = 0    # CUDA graph captures underway (no cudaMemGetInfo then)
        self.capture_begins = {}  # id(graph) -> (device, time_us, counts) of its capture_begin
        self.seq = 0
        self.oom_left = opts["oom_dumps"]
        self.patches = []     # (owner, attr, original, had_own_attr, wrapper)
        self.active = False
        # Reentrant, so that no path that re-enters the recorder on one
        # thread (an OOM observer, a finalizer) can deadlock on them.
        self.lock = threading.RLock()       # guards the Python state only
        self.cuda_lock = threading.RLock()  # sampler vs capture begin
        self.dump_lock = threading.RLock()  # one dump at a time
        self.stop_evt = threading.Event()
        self.thread = None
        self.old_handler = None
        self.wake = None      # (read fd, write fd) of the dumper's pipe
        self.dumper = None    # the thread that takes the signal dumps
        self.pid = os.getpid()

    # -- counts and samples (torch calls: never under self.lock)

    def _devices(self):
        cuda = self.torch.cuda
        if not cuda.is_initialized():
            return []
        return list(range(cuda.device_count()))

    def _counts(self, dev):
        st = self.torch.cuda.memory_stats(dev)
        raw = (int(st.get("allocation.all.allocated", 0)), int(st.get("allocation.all.freed", 0)),
               int(st.get("num_ooms", 0)))
        with self.lock:
            off = self.offsets.get(dev, (0, 0, 0))
        if dev not in self.active_devs and (
                st.get("segment.all.allocated", 0) or st.get("reserved_bytes.all.current", 0)
                or st.get("reserved_bytes.all.peak", 0)):
            self.active_devs.add(dev)
        return tuple(r + o for r, o in zip(raw, off)), raw

    def _sample(self, dev):
        """(total, free, reserved) of a device the allocator uses, or None
        (unused device: no context to ask; a capture underway)."""
        if dev not in self.active_devs:
            return None
        with self.cuda_lock:
            if self.capturing:
                return None
            free, total = self.torch.cuda.mem_get_info(dev)
        reserved = self.torch.cuda.memory_reserved(dev)
        return int(total), int(free), int(reserved)

    def _make(self, kind, dev, t, counts, fields):
        allocs, frees, ooms = counts
        name = record_name(kind, [("allocs", allocs), ("frees", frees), ("ooms", ooms)]
                           + list(fields))
        return {"stage": "START", "name": name, "device": dev, "time_us": t}

    def _note_sample(self, dev, t, counts, sample):
        """Keeps the peak; takes `device_memory when=start` at a device's
        first sample."""
        if sample is None:
            return
        total, free, reserved = sample
        with self.lock:
            if dev not in self.seen:
                self.seen.add(dev)
                self.records.append(self._make("device_memory", dev, t, counts, [
                    ("when", "start"), ("total", total), ("free", free),
                    ("reserved", reserved)]))
            p = self.peak.get(dev)
            if p is None or reserved > p[0]:
                self.peak[dev] = (reserved, total, free, t, counts)

    def take(self, kind, devs, fields=(), t=None, sample=True):
        """Builds one record per device (counts read now) and samples each
        device (a device's first sample is appended at once as
        `device_memory when=start`); returns the records, not yet
        appended."""
        t = int(time.time() * 1e6) if t is None else t
        out = []
        for dev in devs:
            counts, _ = self._counts(dev)
            out.append(self._make(kind, dev, t, counts, fields))
            if sample:
                self._note_sample(dev, t, counts, self._sample(dev))
        return out

    def append(self, recs, inflight=False):
        """Appends the records; `inflight`: their call has not run yet, so a
        dump taken meanwhile (by the dumper thread) leaves them out until
        settle()."""
        with self.lock:
            self.records.extend(recs)
            if inflight:
                self.inflight.update(id(r) for r in recs)

    def settle(self, recs):
        """The call of records appended in flight returned (or raised)."""
        with self.lock:
            self.inflight.difference_update(id(r) for r in recs)

    def withdraw(self, recs):
        """The call raised: its records did not happen."""
        with self.lock:
            self.inflight.difference_update(id(r) for r in recs)
            for r in recs:
                for i in range(len(self.records) - 1, -1, -1):
                    if self.records[i] is r:
                        del self.records[i]
                        break

    def sample_all(self):
        t = int(time.time() * 1e6)
        for dev in self._devices():
            counts, _ = self._counts(dev)
            self._note_sample(dev, t, counts, self._sample(dev))

    def _sampler(self, interval):
        while not self.stop_evt.wait(interval):
            if not self.active or os.getpid() != self.pid:
                return
            try:
                self.sample_all()
            except Exception:
                pass  # a sample missed is a sample missed

    # -- dumps

    SNAPSHOT_TRIES = 5

    def _consistent_snapshot(self):
        """(_snapshot(), {device: counts}, records, peak, time_us): the
        records and peaks as they were before the snapshot (those whose call
        returned; a record taken while the snapshot is under way belongs to
        the next dump), the counts read just before and again just after
        it.  When another thread allocated in between (the dumper thread
        runs beside the program), the snapshot is taken again,
        SNAPSHOT_TRIES times at most; the counts are then those after the
        last one (with one line on stderr), so that a `dump` record's
        counts are the trace's end's."""
        for i in range(self.SNAPSHOT_TRIES):
            t = int(time.time() * 1e6)
            before = {dev: self._counts(dev)[0] for dev in self._devices()}
            with self.lock:
                records = [r for r in self.records if id(r) not in self.inflight]
                peak = dict(self.peak)
            snap = self.torch.cuda.memory._snapshot()
            after = {dev: self._counts(dev)[0] for dev in self._devices()}
            if after == before:
                break
        else:
            _say("the allocator's counts moved during each of %d snapshots: the calls of this "
                 "dump may be placed a few entries late" % self.SNAPSHOT_TRIES)
        return snap, after, records, peak, t

    def dump(self, reason):
        """Takes _snapshot() (with the counts of every initialised device
        that match it, _consistent_snapshot), device_memory when=dump and
        `dump` on every initialised device, and writes one file per device
        with allocator state.  Returns the paths written; a file that cannot
        be written gets one line on stderr.  Safe from any thread: PyTorch
        never waits for the GIL while it holds the allocator's mutex (it
        releases the mutex before calling the OOM observers)."""
        if reason not in REASONS:
            raise ValueError("reason: expected one of %s, got %r" % ("|".join(REASONS), reason))
        with self.dump_lock:
            seq = self.seq
            self.seq += 1
            snap, all_counts, records, peak, t = self._consistent_snapshot()
            final = {}
            for dev, counts in sorted(all_counts.items()):
                s = self._sample(dev)
                self._note_sample(dev, t, counts, s)
                if s is not None and (dev not in peak or s[2] > peak[dev][0]):
                    peak[dev] = (s[2], s[0], s[1], t, counts)
                recs = []
                if s is not None:
                    recs.append(self._make("device_memory", dev, t, counts, [
                        ("when", "dump"), ("total", s[0]), ("free", s[1]), ("reserved", s[2])]))
                recs.append(self._make("dump", dev, t, counts, [("reason", reason)]))
                final[dev] = recs
            return self._write(snap, records, peak, final, seq, reason)

    def _write(self, snap, records, peak, final, seq, reason):
        traces = snap.get("device_traces") or []
        segments = snap.get("segments") or []
        theirs = snap.get("external_annotations") or []
        devs = set(i for i, tr in enumerate(traces) if tr)
        devs |= set(s.get("device", 0) for s in segments)
        written = []
        out_dir = self.opts["out_dir"]
        for dev in sorted(devs):
            mine = [r for r in records if r["device"] == dev]
            p = peak.get(dev)
            if p is not None:
                reserved, total, free, pt, counts = p
                pr = self._make("device_memory", dev, pt, counts, [
                    ("when", "peak"), ("total", total), ("free", free), ("reserved", reserved)])
                i = len(mine)
                while i > 0 and mine[i - 1]["time_us"] > pt:
                    i -= 1
                mine.insert(i, pr)
            mine.extend(final.get(dev, []))
            one = dict(snap)
            one["segments"] = [s for s in segments if s.get("device", 0) == dev]
            one["device_traces"] = [tr if i == dev else [] for i, tr in enumerate(traces)]
            one["external_annotations"] = [a for a in theirs
                                           if not isinstance(a, dict)
                                           or a.get("device", dev) == dev] + mine
            name = dump_file_name(self.opts["prefix"], self.job, self.rank, self.pid, dev, seq,
                                  reason, self.opts["compress"])
            path = os.path.join(out_dir, name)
            try:
                make_dump_dir(out_dir)
                path = write_atomic(path, one, self.opts["compress"], self.opts["dump_mode"])
            except OSError as e:
                _say("cannot write %s: %s" % (path, e.strerror or e))
                continue
            written.append(path)
            if not self.opts["quiet"]:
                _say("wrote %s" % path)
        return written

    def on_oom(self, device, alloc, device_allocated, device_free):
        if self.oom_left <= 0 or os.getpid() != self.pid:
            return
        self.oom_left -= 1
        self.dump("oom")

    def at_exit(self):
        """Registered with atexit for the exit dump or the dumper thread: a
        signal dump asked for before the exit (or under way) is finished
        first (a daemon thread stopped at exit would leave its temporary
        file), then the exit dump unless --no-dump-at-exit."""
        if not self.active or os.getpid() != self.pid:
            return
        self.stop_dumper()
        if not self.opts["dump_at_exit"]:
            return
        try:
            self.dump("exit")
        except Exception as e:
            _say("exit dump failed: %s" % (e,))

    # -- signal dumps
    #
    # The handler runs on the main thread between any two bytecodes of the
    # program, of torch or of the recorder itself, with whatever locks they
    # hold, and again inside itself when signals come in a burst: it takes
    # no lock and makes no call but one os.write() of one byte to a pipe
    # (non-blocking; a full pipe means a dump is asked for already).  The
    # dumper thread reads the pipe and takes one dump for all the bytes it
    # read at once, so a burst of signals coalesces.

    def start_dumper(self):
        r, w = os.pipe()
        os.set_blocking(w, False)
        self.wake = (r, w)
        self.dumper = threading.Thread(target=self._dumper, args=(r,),
                                       name="ccasim-record-dumper", daemon=True)
        self.dumper.start()

    def _dumper(self, r):
        while True:
            try:
                data = os.read(r, 65536)
            except OSError:
                return
            if b"s" in data and self.active and os.getpid() == self.pid:
                try:
                    self.dump("signal")
                except Exception as e:
                    _say("signal dump failed: %s" % (e,))
            if not data or b"q" in data:
                return

    def stop_dumper(self, close=True):
        """Ends the dumper thread once it took the signal dump asked for
        before (when still recording); closes its pipe unless `close` is
        false (the handler may still be installed)."""
        wake, dumper = self.wake, self.dumper
        if wake is None:
            return
        self.wake = None  # the handler writes no more
        try:
            os.set_blocking(wake[1], True)
            os.write(wake[1], b"q")
        except OSError:
            pass
        if dumper is not None and dumper is not threading.current_thread():
            dumper.join()
        self.dumper = None
        if close:
            for fd in wake:
                try:
                    os.close(fd)
                except OSError:
                    pass

    def on_signal(self, signum, frame):
        wake = self.wake
        if wake is not None and self.active and os.getpid() == self.pid:
            try:
                os.write(wake[1], b"s")
            except OSError:  # full: a dump is asked for already
                pass
        old = self.old_handler
        if callable(old):
            old(signum, frame)


# --------------------------------------------------------------- patches


def _arg(args, kwargs, i, name, default=None):
    if len(args) > i:
        return args[i]
    return kwargs.get(name, default)


def _device_index(torch, device):
    """A call's device argument as an index: None (or a device without an
    index) is the current device, as PyTorch's _get_device_index does."""
    if device is None:
        return torch.cuda.current_device()
    if isinstance(device, int) and not isinstance(device, bool):
        return device
    if isinstance(device, str):
        _, _, idx = device.partition(":")
        return int(idx) if idx else torch.cuda.current_device()
    idx = getattr(device, "index", None)
    return torch.cuda.current_device() if idx is None else int(idx)


def _original(f):
    return getattr(f, "__ccasim_original__", f)


def _install(rec, owner, attr, make, cache):
    """Replaces owner.attr by make(original); one wrapper per original
    function whatever the number of names it has."""
    if owner is None:
        return
    had = attr in getattr(owner, "__dict__", {})
    cur = getattr(owner, attr, None)
    if cur is None:
        return
    orig = _original(cur)
    w = cache.get(id(orig))
    if w is None:
        w = make(orig)
        w.__ccasim_original__ = orig
        cache[id(orig)] = w
    setattr(owner, attr, w)
    rec.patches.append((owner, attr, cur, had, w))


def _recorded_call(rec, orig, kind, devices, fields):
    """A wrapper that records KIND on devices(args, kwargs) just before the
    call (fields(args, kwargs) -> [(key, value)]), and withdraws the records
    when the call raises."""
    @functools.wraps(orig)
    def wrapper(*args, **kwargs):
        if not rec.active or getattr(_tls, "depth", 0):
            return orig(*args, **kwargs)
        _tls.depth = 1
        try:
            try:
                recs = rec.take(kind, devices(args, kwargs), fields(args, kwargs))
            except Exception:
                recs = []  # arguments the real call will refuse
            rec.append(recs, inflight=True)
            try:
                result = orig(*args, **kwargs)
            except BaseException:
                rec.withdraw(recs)
                raise
            rec.settle(recs)
            return result
        finally:
            _tls.depth = 0
    return wrapper


def _reset_accumulated(rec, orig):
    torch = rec.torch

    @functools.wraps(orig)
    def wrapper(*args, **kwargs):
        if not rec.active or getattr(_tls, "depth", 0):
            return orig(*args, **kwargs)
        _tls.depth = 1
        try:
            try:
                dev = _device_index(torch, _arg(args, kwargs, 0, "device"))
                t = int(time.time() * 1e6)
                counts, raw = rec._counts(dev)
                recs = [rec._make("reset_accumulated", dev, t, counts, ())]
                rec._note_sample(dev, t, counts, rec._sample(dev))
            except Exception:
                dev, recs = None, []
            rec.append(recs, inflight=True)
            try:
                result = orig(*args, **kwargs)
            except BaseException:
                rec.withdraw(recs)
                raise
            if recs:
                with rec.lock:
                    off = rec.offsets.get(dev, (0, 0, 0))
                    rec.offsets[dev] = tuple(o + r for o, r in zip(off, raw))
            rec.settle(recs)
            return result
        finally:
            _tls.depth = 0
    return wrapper


class _PoolContext:
    """use_mem_pool's context manager, recorded: enter just before the real
    enter, exit just after the real exit."""

    def __init__(self, rec, cm, pool, device):
        self.rec, self.cm, self.pool, self.device = rec, cm, pool, device

    def _record(self, kind):
        try:
            dev = _device_index(self.rec.torch, self.device)
            recs = self.rec.take(kind, [dev], [("pool", _pool_text(self.pool))])
        except Exception:
            recs = []
        self.rec.append(recs, inflight=kind == "use_mem_pool_enter")
        return recs

    def __enter__(self):
        recs = self._record("use_mem_pool_enter") if self.rec.active else []
        try:
            result = self.cm.__enter__()
        except BaseException:
            self.rec.withdraw(recs)
            raise
        self.rec.settle(recs)
        return result

    def __exit__(self, *exc):
        try:
            return self.cm.__exit__(*exc)
        finally:
            if self.rec.active:
                self._record("use_mem_pool_exit")


def _use_mem_pool(rec, orig):
    @functools.wraps(orig)
    def wrapper(*args, **kwargs):
        cm = orig(*args, **kwargs)
        if not rec.active:
            return cm
        return _PoolContext(rec, cm, _arg(args, kwargs, 0, "pool"),
                            _arg(args, kwargs, 1, "device"))
    return wrapper


def _released(pool_text, dev):
    rec = _ACTIVE
    if rec is None or not rec.active or os.getpid() != rec.pid:
        return
    try:
        rec.append(rec.take("mempool_release", [dev], [("pool", pool_text)]))
    except Exception:
        pass  # a finalizer must not raise


def _mempool_init(rec, orig):
    torch = rec.torch

    @functools.wraps(orig)
    def __init__(self, *args, **kwargs):
        orig(self, *args, **kwargs)
        if not rec.active:
            return
        try:
            dev = torch.cuda.current_device()
            text = _pool_text(self.id)
            rec.append(rec.take("mempool_create", [dev], [("pool", text)]))
            f = weakref.finalize(self, _released, text, dev)
            f.atexit = False  # a pool alive at exit is not released before the exit dump
        except Exception:
            pass
    return __init__


def _capture_begin(rec, orig):
    """The begin's counts and time are taken before the call; the record
    is written at capture_end (its pool: the graph's pool() only answers
    after a capture), ahead of the end's own record."""
    torch = rec.torch

    @functools.wraps(orig)
    def capture_begin(self, *args, **kwargs):
        if not rec.active:
            return orig(self, *args, **kwargs)
        begin = None
        try:
            dev = torch.cuda.current_device()
            t = int(time.time() * 1e6)
            counts, _ = rec._counts(dev)
            rec._note_sample(dev, t, counts, rec._sample(dev))
            begin = (dev, t, counts)
        except Exception as e:
            _say("capture_begin not recorded: %s: %s" % (type(e).__name__, e))
        with rec.cuda_lock:
            rec.capturing += 1
        try:
            result = orig(self, *args, **kwargs)
        except BaseException:
            with rec.cuda_lock:
                rec.capturing -= 1
            raise
        rec.capture_begins[id(self)] = begin
        return result
    return capture_begin


def _capture_end(rec, orig):
    torch = rec.torch

    @functools.wraps(orig)
    def capture_end(self, *args, **kwargs):
        if not rec.active:
            return orig(self, *args, **kwargs)
        try:
            return orig(self, *args, **kwargs)
        finally:
            with rec.cuda_lock:
                rec.capturing = max(0, rec.capturing - 1)
            begin = rec.capture_begins.pop(id(self), None)
            try:
                text = _pool_text(self.pool())
                if begin is not None:
                    dev, t, counts = begin
                    rec.append([rec._make("capture_begin", dev, t, counts, [("pool", text)])])
                rec.append(rec.take("capture_end", [torch.cuda.current_device()],
                                    [("pool", text)]))
            except Exception as e:
                _say("capture_end not recorded: %s: %s" % (type(e).__name__, e))
    return capture_end


def _patch_all(rec):
    torch = rec.torch
    cuda = torch.cuda
    mem = getattr(cuda, "memory", None) or sys.modules.get("torch.cuda.memory")
    cache = {}

    def cur(args, kwargs):
        return [_device_index(torch, _arg(args, kwargs, 0, "device"))]

    def every(args, kwargs):
        return rec._devices()

    def none(args, kwargs):
        return ()

    def fraction(args, kwargs):
        f = _arg(args, kwargs, 0, "fraction")
        return [("fraction", repr(f) if isinstance(f, float) else repr(float(f)))]

    def fraction_dev(args, kwargs):
        return [_device_index(torch, _arg(args, kwargs, 1, "device"))]

    def settings(args, kwargs):
        return [("settings", str(_arg(args, kwargs, 0, "env")))]

    calls = [
        ("empty_cache", lambda o: _recorded_call(rec, o, "empty_cache", every, none)),
        ("_set_allocator_settings",
         lambda o: _recorded_call(rec, o, "set_allocator_settings", every, settings)),
        ("set_per_process_memory_fraction",
         lambda o: _recorded_call(rec, o, "memory_fraction", fraction_dev, fraction)),
        ("reset_peak_memory_stats", lambda o: _recorded_call(rec, o, "reset_peak", cur, none)),
        ("reset_max_memory_allocated", lambda o: _recorded_call(rec, o, "reset_peak", cur, none)),
        ("reset_max_memory_cached", lambda o: _recorded_call(rec, o, "reset_peak", cur, none)),
        ("reset_accumulated_memory_stats", lambda o: _reset_accumulated(rec, o)),
        ("use_mem_pool", lambda o: _use_mem_pool(rec, o)),
    ]
    for attr, make in calls:
        for owner in (cuda, mem):
            _install(rec, owner, attr, make, cache)
    pool_cls = getattr(cuda, "MemPool", None) or getattr(mem, "MemPool", None)
    if isinstance(pool_cls, type):
        _install(rec, pool_cls, "__init__", lambda o: _mempool_init(rec, o), cache)
    graph_cls = getattr(cuda, "CUDAGraph", None)
    if isinstance(graph_cls, type):
        _install(rec, graph_cls, "capture_begin", lambda o: _capture_begin(rec, o), cache)
        _install(rec, graph_cls, "capture_end", lambda o: _capture_end(rec, o), cache)


def _unpatch_all(rec):
    for owner, attr, cur, had, w in reversed(rec.patches):
        if owner.__dict__.get(attr) is not w:
            continue  # patched again on top of ours: ours stays, inactive (a pass-through)
        if had:
            setattr(owner, attr, cur)
        else:
            delattr(owner, attr)
    rec.patches = []


# --------------------------------------------------------------- the API


def _oom_observer(device, alloc, device_allocated, device_free):
    """Attached once per process; must never raise into the allocator."""
    rec = _ACTIVE
    if rec is None or not rec.active:
        return
    try:
        rec.on_oom(device, alloc, device_allocated, device_free)
    except BaseException as e:  # noqa: B036 - the allocator must not see it
        _say("OOM dump failed: %s" % (e,))


def _after_fork_in_child():
    rec = _ACTIVE
    if rec is not None:
        rec.active = False  # a forked child neither records nor dumps


def is_recording():
    return _ACTIVE is not None and _ACTIVE.active


def start(out_dir=".", **options):
    """Starts recording in this process: the allocator's history
    (_record_memory_history with the chosen stacks and max_entries), the
    patches, the `start` records, the sampler thread, the OOM observer, the
    exit and signal dumps.  Keywords: see OPTIONS (out_dir, prefix, job,
    stacks, max_entries, sample_interval, compress, dump_on_signal,
    oom_dumps, dump_at_exit, quiet).  Imports torch.  Raises ValueError for
    a bad option, RuntimeError when CUDA is not available.  Returns the
    Recorder; a second start() while recording returns the first one."""
    global _ACTIVE, _OBSERVER_ATTACHED
    started = options.pop("_started", None)
    opts = check_options(dict(options, out_dir=out_dir))
    if _ACTIVE is not None and _ACTIVE.active:
        return _ACTIVE
    rank = rank_of()
    import torch
    if not torch.cuda.is_available():
        raise RuntimeError("CUDA is not available: nothing to record")
    rec = Recorder(torch, opts, started, rank)
    stacks = opts["stacks"]
    torch.cuda.memory._record_memory_history(
        enabled="all", context=None if stacks == "none" else "all",
        stacks="python" if stacks == "none" else stacks, max_entries=opts["max_entries"])
    rec.active = True
    _ACTIVE = rec
    # the string the CUDA allocator parses: PYTORCH_CUDA_ALLOC_CONF, else
    # PYTORCH_ALLOC_CONF (CUDAAllocatorConfig::instance(), doc/versions.md)
    conf = os.environ.get("PYTORCH_CUDA_ALLOC_CONF",
                          os.environ.get("PYTORCH_ALLOC_CONF", ""))
    t = int(time.time() * 1e6)
    devs = list(range(torch.cuda.device_count()))
    rec.append(rec.take("start", devs, [
        ("v", FORMAT_VERSION), ("torch", str(torch.__version__)), ("conf", conf),
        ("max_entries", opts["max_entries"]), ("stacks", stacks)], t=t, sample=False))
    rec.sample_all()  # device_memory when=start of the devices already in use
    _patch_all(rec)
    if not _OBSERVER_ATTACHED:
        torch._C._cuda_attach_out_of_memory_observer(_oom_observer)
        _OBSERVER_ATTACHED = True
        if hasattr(os, "register_at_fork"):
            os.register_at_fork(after_in_child=_after_fork_in_child)
    if opts["dump_at_exit"] or opts["dump_on_signal"]:
        atexit.register(rec.at_exit)
    if opts["dump_on_signal"]:
        sig = signal.Signals[opts["dump_on_signal"]]
        rec.start_dumper()
        try:
            rec.old_handler = signal.signal(sig, rec.on_signal)
        except ValueError as e:  # not the main thread
            _say("--dump-on-signal %s: not installed (%s)" % (sig.name, e))
            rec.old_handler = None
            opts["dump_on_signal"] = None
            rec.stop_dumper()
    if opts["sample_interval"] > 0:
        rec.thread = threading.Thread(target=rec._sampler, args=(opts["sample_interval"],),
                                      name="ccasim-record-sampler", daemon=True)
        rec.thread.start()
    return rec


def dump(reason="manual"):
    """Dumps now (see Recorder.dump); returns the paths written."""
    rec = _ACTIVE
    if rec is None or not rec.active:
        raise RuntimeError("not recording: call ccasim_record.start() first")
    return rec.dump(reason)


def stop():
    """Stops recording: the originals back, the allocator's history off,
    the sampler, exit dump and signal handler gone.  Does not dump (call
    dump() first to keep the records)."""
    global _ACTIVE
    rec = _ACTIVE
    if rec is None:
        return
    rec.active = False
    _ACTIVE = None
    _unpatch_all(rec)
    rec.stop_evt.set()
    if rec.thread is not None and rec.thread is not threading.current_thread():
        rec.thread.join(timeout=5)
    atexit.unregister(rec.at_exit)
    if rec.opts["dump_on_signal"]:
        try:
            signal.signal(signal.Signals[rec.opts["dump_on_signal"]],
                          rec.old_handler if rec.old_handler is not None else signal.SIG_DFL)
            restored = True
        except ValueError:  # not the main thread: our handler stays (inactive)
            restored = False
        rec.stop_dumper(close=restored)
    try:
        rec.torch.cuda.memory._record_memory_history(enabled=None)
    except Exception:
        pass


# --------------------------------------------------------------- injection

ENV = "CCASIM_RECORD"
LAUNCHER_MODULES = ("torch.distributed.run", "torch.distributed.launch")


def is_launcher(argv=None, orig_argv=None, env=None, torch_dir=None):
    """True in a launcher process (torchrun, python -m
    torch.distributed.run/launch, which run the elastic agent; their
    workers have LOCAL_RANK set) or in one of torch's own helper processes
    (run as `python -m torch.X` or as a script of the torch package
    directory `torch_dir`, e.g. inductor's compile workers).  `-m` is read
    from sys.orig_argv (Python 3.10 and later)."""
    env = os.environ if env is None else env
    argv = sys.argv if argv is None else argv
    orig = list(getattr(sys, "orig_argv", []) if orig_argv is None else orig_argv)
    mods = [orig[i + 1] for i, a in enumerate(orig[:-1]) if a == "-m"]
    a0 = os.path.basename(argv[0]) if argv and argv[0] else ""
    if "LOCAL_RANK" not in env:
        if a0 in ("torchrun", "torchrun.exe") or any(m in LAUNCHER_MODULES for m in mods):
            return True
        if argv and argv[0].replace("\\", "/").endswith(
                ("torch/distributed/run.py", "torch/distributed/launch.py")):
            return True
    if torch_dir and argv and argv[0] not in ("", "-c", "-m") and os.path.abspath(
            argv[0]).startswith(os.path.join(os.path.abspath(torch_dir), "")):
        return True
    return any(m.startswith("torch.") and m not in LAUNCHER_MODULES for m in mods)


def start_from_env():
    """Called by the injected sitecustomize once the program's `import
    torch` completed: starts with the options of $CCASIM_RECORD unless this
    process is a launcher.  Never raises: a failure is one line on
    stderr."""
    raw = os.environ.get(ENV)
    torch = sys.modules.get("torch")
    if not raw or is_launcher(torch_dir=os.path.dirname(getattr(torch, "__file__", "") or "")):
        return None
    try:
        values = json.loads(raw)
        if not isinstance(values, dict):
            raise ValueError("not a JSON object")
    except ValueError as e:
        _say("%s is not valid (%s): not recording" % (ENV, e))
        return None
    values.pop("module", None)
    try:
        import torch
        if not torch.cuda.is_available():
            return None  # a CPU-only process (a helper, a data worker): nothing to record
        return start(**values)
    except EnvError as e:
        _say("%s: not recording" % (e,))
        return None
    except Exception as e:
        _say("not recording: %s" % (e,))
        return None


# --------------------------------------------------------------- the wrapper

USAGE = "usage: ccasim-record [OPTIONS] -- COMMAND [ARGS...]"


def _help():
    lines = [USAGE, "",
             "Runs COMMAND with PyTorch's allocator history recorded in every Python",
             "process that imports torch (a launcher such as torchrun excepted), plus the",
             "calls a snapshot leaves out; dumps at exit, at an OOM, on a signal or on",
             "ccasim_record.dump().  Read the dumps with ccasim (doc/recording.md).", ""]
    for key, opt, meta, default, check, text in OPTIONS:
        lines.append("  %-28s %s" % (opt + (" " + meta if meta else ""), text))
    lines.append("  %-28s %s" % ("--help", "this text"))
    return "\n".join(lines) + "\n"


def parse_args(argv):
    """Returns (values, command) for argv (options, then `--` or the first
    word that is not an option, then the command).  Raises ValueError with
    a message naming the option."""
    values = {}
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "--":
            i += 1
            break
        if not a.startswith("-") or a == "-":
            break
        opt, eq, val = a.partition("=")
        if opt in ("-h", "--help"):
            return None, None
        row = _BY_OPT.get(opt)
        if row is None:
            raise ValueError("%s: unknown option (see --help)" % opt)
        key, meta, default = row[0], row[2], row[3]
        if meta is None:
            if eq:
                raise ValueError("%s: takes no value" % opt)
            values[key] = not default
        else:
            if not eq:
                i += 1
                if i >= len(argv):
                    raise ValueError("%s: missing %s" % (opt, meta))
                val = argv[i]
            values[key] = val
        i += 1
    command = argv[i:]
    if not command:
        raise ValueError("no command to run (%s)" % USAGE[7:])
    return values, command


def main(argv, pydir=None, sitedir=None):
    """The ccasim-record command: checks the options (a bad one: one line,
    status 2, the command not run), sets PYTHONPATH and CCASIM_RECORD, and
    executes the command in place of this process."""
    try:
        values, command = parse_args(argv)
        if command is None:
            sys.stdout.write(_help())
            return 0
        opts = check_options(values, spelling="option")
    except ValueError as e:
        _say(str(e))
        return 2
    pydir = os.path.abspath(pydir or os.path.dirname(os.path.abspath(__file__)))
    if sitedir is None:
        sitedir = os.path.join(pydir, "record-site")
        if not os.path.isfile(os.path.join(sitedir, "sitecustomize.py")):
            sitedir = pydir
    sitedir = os.path.abspath(sitedir)
    try:
        make_dump_dir(opts["out_dir"])
    except OSError as e:
        _say("--out %s: cannot create the directory: %s" % (opts["out_dir"], e.strerror or e))
        return 2
    values = {k: opts[k] for k in opts if opts[k] != _BY_KEY[k][3]}
    values["out_dir"] = os.path.abspath(opts["out_dir"])
    values["_started"] = time.time()
    values["module"] = os.path.join(pydir, "ccasim_record.py")
    env = dict(os.environ)
    env[ENV] = json.dumps(values, sort_keys=True)
    old = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p and p != sitedir]
    env["PYTHONPATH"] = os.pathsep.join([sitedir] + old)
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        os.execvpe(command[0], command, env)
    except OSError as e:
        _say("%s: %s" % (command[0], e.strerror or e))
        return 127 if isinstance(e, FileNotFoundError) else 126
