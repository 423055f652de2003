"""Shared builders for engine tests: small random networks and mappings, and the special
files (FIFOs, devices, folders, files of /proc) no reader may wait on."""

from __future__ import annotations

import contextlib
import os
import threading
from pathlib import Path

import numpy as np
import pytest

from engine.network import Network

SPECIAL = ("fifo", "device", "folder", "proc")  # kinds of path that are no regular file
WATCHDOG_S = 10.0  # a reader still waiting on a FIFO after this long is blocked


class Specials:
    """Makes special files (``make``); a FIFO a reader still waits on after ``WATCHDOG_S`` is
    written to and closed (``blocked`` is then set), so a reader that blocks fails its test
    instead of hanging the run."""

    def __init__(self):
        self.fifos: list[Path] = []
        self.blocked = False
        self._timer = threading.Timer(WATCHDOG_S, self._release)
        self._timer.daemon = True
        self._timer.start()

    def make(self, path: Path, kind: str) -> Path:
        """``path`` made a special file of ``kind``: a FIFO, a link to /dev/zero or to
        /proc/self/status (so that it keeps its name and suffix), or a folder."""
        if kind == "fifo":
            os.mkfifo(path)
            self.fifos.append(path)
        elif kind == "device":
            path.symlink_to("/dev/zero")
        elif kind == "proc":
            path.symlink_to("/proc/self/status")
        elif kind == "folder":
            path.mkdir()
        else:
            raise ValueError(kind)
        return path

    def _release(self):
        for path in self.fifos:
            with contextlib.suppress(OSError):  # ENXIO: nobody is reading it
                os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))
                self.blocked = True

    def close(self):
        self._timer.cancel()


@pytest.fixture
def specials():
    """A ``Specials``; the test fails if a reader blocked on one of its FIFOs."""
    made = Specials()
    yield made
    made.close()
    assert not made.blocked, "a reader waited on a FIFO instead of refusing it"


def random_network(rng: np.random.Generator, n: int, fan_out: int, n_pop: int = 2) -> Network:
    """A random directed hypergraph with ``n_pop`` populations and random rates."""
    counts = rng.integers(0, fan_out + 1, size=n)
    indptr = np.concatenate([[0], np.cumsum(counts)])
    indices = rng.integers(0, n, size=int(indptr[-1]))
    population = np.sort(rng.integers(0, n_pop, size=n))
    population[:n_pop] = np.arange(n_pop)  # every population non-empty
    population.sort()
    return Network(
        name="random-test",
        indptr=indptr,
        indices=indices,
        population=population,
        population_names=[f"p{k}" for k in range(n_pop)],
        rate=rng.random(n),
        encoding=[("sparse", "dense")[k % 2] for k in range(n_pop)],
    )
