"""Run an external command with bounds: its own process group, a deadline, capped output,
and nothing it started left behind.

``run_bounded`` is how MeshScope runs a program it does not control (an evaluator command,
hardware in the loop). The command starts in a new session, so it and every process it
starts share one process group, and with a mark in its environment (``MARK``), which every
process it starts inherits. Whatever way the run ends — exit, time-out, too much output,
``kill_all`` from another thread, an exception in the caller — the group is killed, and so
is every process that descends from the command or carries its mark: a child that calls
``setsid`` leaves the group, not the mark nor (while its parent lives) the family. Output
beyond the caps is not read into memory: the run fails with that reason.

What can be guaranteed, on Linux:

* a run that ends (and ``ProcessGroups.kill_all``) leaves no process that descends from the
  command or carries its mark; a process that both left the session and cleared its
  environment, after its parent exited, is out of reach unless this process is a child
  subreaper (``become_subreaper``: the command line is), which adopts it;
* ``end_descendants`` ends every process descending from this one (the command line calls
  it as it exits, after SIGTERM and SIGHUP too, which it turns into a cancel);
* SIGKILL of this process cannot be caught: the kernel then kills the command itself
  (``PR_SET_PDEATHSIG``), but the processes the command started live on unless they exit
  when their parent or their pipes go. Nothing in user space can do more. MeshScope's own
  worker processes (``engine.executors.local_pool``) ask for the same (``die_with_parent``).

Elsewhere (no ``/proc``, no ``prctl``) only the process group is killed.
"""

from __future__ import annotations

import contextlib
import ctypes
import itertools
import os
import selectors
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = [
    "MARK",
    "Bounded",
    "ProcessGroups",
    "become_subreaper",
    "descendants",
    "die_with_parent",
    "end_descendants",
    "run_bounded",
]

STDOUT_CAP = 1 << 20  # bytes of an answer, at most
STDERR_CAP = 64 << 10
CHUNK = 1 << 16
MARK = "MESHSCOPE_RUN"  # the environment variable that marks a command's processes
SWEEPS = 20  # rounds of looking for marked processes after a kill (each may have forked)
PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36

_runs = itertools.count()


def _prctl_function():
    """libc's ``prctl`` on Linux, else None."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):  # pragma: no cover - a libc without prctl
        return None
    prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
    prctl.restype = ctypes.c_int
    return prctl


_PRCTL = _prctl_function()  # resolved here: never between fork and exec


def become_subreaper() -> bool:
    """Make this process adopt its orphaned descendants (``PR_SET_CHILD_SUBREAPER``), so a
    process that leaves its session still descends from it; False where Linux cannot."""
    return _PRCTL is not None and _PRCTL(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0


def die_with_parent(parent: int) -> bool:
    """In a worker process: be killed (SIGKILL) by the kernel when its parent ``parent``
    dies, however it dies — SIGKILL included, which leaves the parent no time to end its
    workers (``PR_SET_PDEATHSIG``); exit at once if it died already, between the fork and
    this call. The parent is the *thread* that started the worker: a pool started from a
    thread must end before that thread does. False where Linux cannot (the worker then
    outlives a killed parent)."""
    if _PRCTL is None or _PRCTL(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0:
        return False
    if os.getppid() != parent:  # orphaned before the request: no signal will come
        os._exit(1)
    return True


@dataclass(frozen=True)
class Bounded:
    """How a bounded run ended. ``failure`` is empty when the command exited by itself within
    its bounds (whatever its exit code), else the reason it was stopped."""

    returncode: int | None
    stdout: str
    stderr: str
    failure: str = ""


class ProcessGroups:
    """The commands running now, so another thread can end them all, and every process they
    started (their marks share this object's prefix)."""

    def __init__(self):
        self._lock = threading.Lock()
        self._live: dict[int, int] = {}  # process group -> its leader's start time
        self._closed = False
        self.prefix = f"{os.getpid()}.{next(_runs)}."

    def add(self, pgid: int, start: int = 0) -> bool:
        with self._lock:
            if self._closed:
                return False
            self._live[pgid] = start
            return True

    def discard(self, pgid: int) -> None:
        with self._lock:
            self._live.pop(pgid, None)

    @property
    def cancelled(self) -> bool:
        return self._closed

    def kill_all(self) -> None:
        """Kill every running command with every process it started, and every command
        started from now on."""
        with self._lock:
            self._closed = True
            live = dict(self._live)
        _end(live, self.prefix)


def run_bounded(
    argv: list[str],
    stdin: str,
    *,
    timeout_s: float,
    stdout_cap: int = STDOUT_CAP,
    stderr_cap: int = STDERR_CAP,
    groups: ProcessGroups | None = None,
) -> Bounded:
    """Run ``argv`` with ``stdin`` as its input; raises ``OSError`` when it cannot start."""
    prefix = groups.prefix if groups is not None else f"{os.getpid()}.{next(_runs)}."
    mark = f"{prefix}{next(_runs)}"
    proc = subprocess.Popen(
        argv,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,  # its own process group: killed as one
        env={**os.environ, MARK: mark},
        preexec_fn=_die_with(os.getpid()) if _PRCTL is not None else None,  # noqa: PLW1509
    )
    pgid = proc.pid
    born = _stat(pgid)  # the command's start: what it starts is younger
    leader = {pgid: born.start if born is not None else 0}
    if groups is not None and not groups.add(pgid, leader[pgid]):
        _end(leader, mark)
        proc.wait()
        _close(proc)
        return Bounded(None, "", "", "cancelled")
    writer = threading.Thread(target=_feed, args=(proc.stdin, stdin.encode()), daemon=True)
    writer.start()
    out, err = bytearray(), bytearray()
    failure = ""
    deadline = time.monotonic() + timeout_s
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ, (out, stdout_cap, "stdout"))
    sel.register(proc.stderr, selectors.EVENT_READ, (err, stderr_cap, "stderr"))
    try:
        while sel.get_map() and not failure:
            left = deadline - time.monotonic()
            if left <= 0:
                failure = f"timed out after {timeout_s:g} s"
                break
            if proc.poll() is not None and not _ready(sel):
                break  # exited; a child it left may hold the pipes open: not waited for
            for key, _ in sel.select(timeout=min(left, 0.05)):
                buf, cap, name = key.data
                chunk = os.read(key.fd, CHUNK)
                if not chunk:
                    sel.unregister(key.fileobj)
                    continue
                buf += chunk
                if len(buf) > cap:
                    failure = f"wrote more than {_size(cap)} to {name}"
                    break
        if not failure:
            left = max(0.0, deadline - time.monotonic())
            try:
                proc.wait(timeout=left)
            except subprocess.TimeoutExpired:
                failure = f"timed out after {timeout_s:g} s"
    finally:
        sel.close()
        _end(leader, mark)  # the command's children too, however it ended
        proc.wait()
        if groups is not None:
            groups.discard(pgid)
        writer.join(timeout=1.0)
        _close(proc)
    if groups is not None and groups.cancelled and not failure and proc.returncode < 0:
        failure = "cancelled"
    return Bounded(
        proc.returncode,
        out.decode("utf-8", errors="replace"),
        err.decode("utf-8", errors="replace"),
        failure,
    )


def _die_with(parent: int):
    """A child's last step before ``exec``: die by SIGKILL when its parent does (the one
    guarantee left when this process is SIGKILLed), or now if the parent is already gone."""

    def preexec() -> None:
        _PRCTL(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != parent:
            os._exit(255)

    return preexec


# ------------------------------------------------------------------ ending processes
@dataclass(frozen=True)
class _Proc:
    ppid: int
    start: int  # clock ticks after boot: with the pid, names the process
    zombie: bool


def _table() -> dict[int, _Proc]:
    """Every process /proc shows: pid → its parent, start time and whether it is a zombie
    (empty without /proc)."""
    table = {}
    try:
        names = os.listdir("/proc")
    except OSError:
        return table
    for name in names:
        if not name.isdigit():
            continue
        proc = _stat(int(name))
        if proc is not None:
            table[int(name)] = proc
    return table


def _stat(pid: int) -> _Proc | None:
    try:
        fd = os.open(f"/proc/{pid}/stat", os.O_RDONLY)
    except OSError:
        return None
    try:
        fields = os.read(fd, 4096).rsplit(b")", 1)[1].split()
        return _Proc(int(fields[1]), int(fields[19]), fields[0] in (b"Z", b"X"))
    except (OSError, IndexError, ValueError):
        return None
    finally:
        os.close(fd)


def descendants(roots: Iterable[int], table: dict[int, _Proc] | None = None) -> set[int]:
    """The pids of every live process descending from ``roots`` (the roots not included)."""
    table = _table() if table is None else table
    children: dict[int, list[int]] = {}
    for pid, proc in table.items():
        children.setdefault(proc.ppid, []).append(pid)
    found, todo = set(), list(roots)
    while todo:
        for child in children.get(todo.pop(), ()):
            if child not in found:
                found.add(child)
                todo.append(child)
    return {pid for pid in found if not table[pid].zombie}


def _marked(prefix: str, table: dict[int, _Proc], since: int = 0) -> set[int]:
    """The live processes started at ``since`` (clock ticks after boot) or later whose
    environment holds ``MARK`` with a value starting ``prefix``."""
    needle = f"{MARK}={prefix}".encode()
    me = os.getpid()
    found = set()
    for pid, proc in table.items():
        if proc.zombie or pid == me or proc.start < since:
            continue
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                env = f.read()
        except OSError:  # gone, or another user's
            continue
        if any(entry.startswith(needle) for entry in env.split(b"\0")):
            found.add(pid)
    return found


def _end(groups: dict[int, int], prefix: str) -> None:
    """Kill the process groups ``groups`` (leader → its start time) and every process that
    descends from their leaders or carries a mark starting ``prefix``; reap those this
    process adopted. What a command started is younger than it: only processes started
    since the oldest leader are looked at for marks."""
    table = _table()
    since = min(groups.values(), default=0)
    roots = [g for g, start in groups.items() if g in table and table[g].start == start]
    victims = descendants(roots, table) | _marked(prefix, table, since)  # before the kill
    for pgid in groups:
        with contextlib.suppress(ProcessLookupError, PermissionError):  # already gone
            os.killpg(pgid, signal.SIGKILL)
    for _ in range(SWEEPS):
        victims -= set(groups)  # the leaders are their callers' to wait for
        if not victims:
            return
        _kill(victims, table)
        table = _table()
        victims = descendants(victims, table) | _marked(prefix, table, since)


def end_descendants() -> None:
    """Kill every process that descends from this one, or was started marked by it (the
    command line's last step: nothing it started outlives it)."""
    me = os.getpid()
    for _ in range(SWEEPS):
        table = _table()
        victims = descendants([me], table) | _marked(f"{me}.", table)
        if not victims:
            return
        _kill(victims, table)


def _kill(pids: set[int], table: dict[int, _Proc]) -> None:
    """SIGKILL each of ``pids`` that is still the process ``table`` saw (a pid reused in
    between is left alone), then reap those that are this process's children."""
    me = os.getpid()
    for pid in pids:
        seen = table.get(pid)
        if seen is None:
            continue
        _signal(pid, seen.start)
    for pid in pids:
        seen = table.get(pid)
        if seen is not None and seen.ppid == me:
            _reap(pid)


def _signal(pid: int, start: int) -> None:
    try:
        fd = os.pidfd_open(pid)
    except (AttributeError, OSError):  # gone, or no pidfd: check and kill by pid
        now = _stat(pid)
        if now is not None and now.start == start:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        return
    try:
        now = _stat(pid)
        if now is not None and now.start == start:  # the fd holds this very process
            signal.pidfd_send_signal(fd, signal.SIGKILL)
    except OSError:
        pass
    finally:
        os.close(fd)


def _reap(pid: int, wait_s: float = 1.0) -> None:
    """Collect the exit status of an adopted child that was just killed."""
    end = time.monotonic() + wait_s
    while True:
        try:
            done, _ = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            return
        if done or time.monotonic() > end:
            return
        time.sleep(0.005)


def _ready(sel: selectors.BaseSelector) -> bool:
    return bool(sel.select(timeout=0))


def _feed(pipe, data: bytes) -> None:
    """Write the input; a command that exits without reading it all is not an error here."""
    with contextlib.suppress(OSError, ValueError):  # a broken pipe included
        pipe.write(data)
        pipe.close()


def _close(proc: subprocess.Popen) -> None:
    for pipe in (proc.stdin, proc.stdout, proc.stderr):
        with contextlib.suppress(OSError, ValueError):
            pipe.close()


def _size(n: int) -> str:
    return f"{n >> 20} MB" if n >= 1 << 20 else f"{n >> 10} KB"
