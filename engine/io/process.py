"""Run an external command with bounds: its own process group, a deadline, capped output.

``run_bounded`` is how MeshScope runs a program it does not control (an evaluator command,
hardware in the loop). The command starts in a new session, so it and every process it
starts share one process group; whatever way the run ends — exit, time-out, too much
output, ``kill_all`` from another thread — the whole group is killed, so no child is left
behind. Output beyond the caps is not read into memory: the run fails with that reason.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import signal
import subprocess
import threading
import time
from dataclasses import dataclass

__all__ = ["Bounded", "ProcessGroups", "run_bounded"]

STDOUT_CAP = 1 << 20  # bytes of an answer, at most
STDERR_CAP = 64 << 10
CHUNK = 1 << 16


@dataclass(frozen=True)
class Bounded:
    """How a bounded run ended. ``failure`` is empty when the command exited by itself within
    its bounds (whatever its exit code), else the reason it was stopped."""

    returncode: int | None
    stdout: str
    stderr: str
    failure: str = ""


class ProcessGroups:
    """The process groups of the commands running now, so another thread can end them all."""

    def __init__(self):
        self._lock = threading.Lock()
        self._live: set[int] = set()
        self._closed = False

    def add(self, pgid: int) -> bool:
        with self._lock:
            if self._closed:
                return False
            self._live.add(pgid)
            return True

    def discard(self, pgid: int) -> None:
        with self._lock:
            self._live.discard(pgid)

    @property
    def cancelled(self) -> bool:
        return self._closed

    def kill_all(self) -> None:
        """Kill every running group, and every group started from now on."""
        with self._lock:
            self._closed = True
            live = list(self._live)
        for pgid in live:
            _kill_group(pgid)


def _kill_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):  # already gone
        os.killpg(pgid, signal.SIGKILL)


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
    proc = subprocess.Popen(
        argv,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,  # its own process group: killed as one
    )
    pgid = proc.pid
    if groups is not None and not groups.add(pgid):
        _kill_group(pgid)
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
        _kill_group(pgid)  # the command's children too, however it ended
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
