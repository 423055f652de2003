"""Files that test how a reader behaves: a FIFO nobody writes."""

from __future__ import annotations

import errno
import os
import threading


class FifoWatch:
    """A FIFO on the server's disk that nobody writes, and whether anyone opened it to
    read: a reader would block until a writer comes, so the watch plays the writer once a
    reader shows (an open for writing that does not block succeeds only then), records
    it, and lets the reader go on to an empty file."""

    def __init__(self, path):
        self.path = path
        os.mkfifo(path)
        self.opened = False
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._thread.start()

    def _watch(self) -> None:
        while not self._stop.wait(0.02):  # poll interval of the watch, not a wait for a result
            try:
                fd = os.open(self.path, os.O_WRONLY | os.O_NONBLOCK)
            except OSError as e:  # ENXIO: no reader
                assert e.errno == errno.ENXIO
                continue
            self.opened = True
            os.close(fd)

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
