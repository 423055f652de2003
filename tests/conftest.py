"""What every test shares: generated networks cached in a folder of the run's own, never in
the user's cache; the special files (FIFOs, devices, folders, files of /proc) no reader may
wait on."""

from __future__ import annotations

import contextlib
import os
import threading
from pathlib import Path

import pytest


@pytest.fixture(autouse=True, scope="session")
def _network_cache(tmp_path_factory):
    old = os.environ.get("MESHSCOPE_CACHE_DIR")
    os.environ["MESHSCOPE_CACHE_DIR"] = str(tmp_path_factory.mktemp("network-cache"))
    yield
    if old is None:
        os.environ.pop("MESHSCOPE_CACHE_DIR", None)
    else:
        os.environ["MESHSCOPE_CACHE_DIR"] = old


SPECIAL = ("fifo", "device", "folder", "proc")  # kinds of path that are no regular file
WATCHDOG_S = 10.0  # a reader still waiting on a FIFO after this long is blocked


class Specials:
    """Makes special files (``make``); a FIFO a reader still waits on after ``WATCHDOG_S`` is
    written to and closed, and one a writer still waits on is opened to read and drained
    (``blocked`` is then set), so a reader or a writer that blocks fails its test instead of
    hanging the run."""

    def __init__(self):
        self.fifos: list[Path] = []
        self.blocked = False
        self._drained: list[int] = []
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
            with contextlib.suppress(OSError):  # a writer waiting on its open goes on …
                reader = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
                self._drained.append(reader)
                threading.Thread(target=self._drain, args=(reader,), daemon=True).start()

    def _drain(self, reader: int) -> None:
        """Read what a writer released by ``_release`` writes (it blocked: ``blocked``)."""
        import select

        while select.select([reader], [], [], 30)[0]:
            try:
                data = os.read(reader, 65536)
            except OSError:
                return
            if not data:  # the writer closed it
                return
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
