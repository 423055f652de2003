"""Looking at processes through ``/proc``: alive or gone, and the pids a command recorded."""

from __future__ import annotations

import os
import time


def alive(pid: int) -> bool:
    """Whether ``pid`` is a live process (a zombie waiting to be reaped counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state not in ("Z", "X")


def gone(pids, wait_s: float = 2.0) -> bool:
    """Whether every one of ``pids`` is gone within ``wait_s`` seconds."""
    end = time.monotonic() + wait_s
    while time.monotonic() < end:
        if not any(alive(p) for p in pids):
            return True
        time.sleep(0.02)
    return False


def recorded(path, lines: int = 1, wait_s: float = 20.0) -> list[int]:
    """The pids the commands wrote to ``path``, once ``lines`` whole lines are there."""
    end = time.monotonic() + wait_s
    while time.monotonic() < end:
        text = path.read_text() if path.exists() else ""
        whole = [line for line in text.split("\n")[:-1] if line.strip()]
        if len(whole) >= lines:
            return [int(p) for line in whole for p in line.split()]
        time.sleep(0.02)
    raise AssertionError(f"{path} never had {lines} lines")


def cpu_seconds(pid: int) -> float:
    """User and system CPU time ``pid`` has used so far (0 once it is gone)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError):
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
