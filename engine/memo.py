"""Caches bounded by the memory they hold, not by how many entries they have.

A generated network, or a network mapped onto hardware, is immutable and costly to make, so
a process keeps what it made: two pages of a server asking for the same spec share one
copy, and a command asked twice answers at once. An entry count is no bound when one entry
is a few kilobytes and another half a gigabyte (sixteen large mapped networks kept 3.4 GB
of a server after every page had closed), so ``SharedCache``:

* finds a value again while anyone still holds it (a weak reference: it holds nothing);
* keeps the most recently used values besides, as long as they weigh ``max_bytes`` together
  (``nbytes``: the numpy arrays they hold); older ones are let go.
"""

from __future__ import annotations

import dataclasses
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Hashable

import numpy as np

__all__ = ["SharedCache", "nbytes"]


def nbytes(value, depth: int = 4) -> int:
    """The bytes of the numpy arrays ``value`` holds, through its dataclass fields,
    attributes, mappings and sequences, ``depth`` levels down (each array counted once)."""
    seen: set[int] = set()

    def walk(v, d: int) -> int:
        if id(v) in seen or d < 0:
            return 0
        seen.add(id(v))
        if isinstance(v, np.ndarray):
            base = v.base if isinstance(v.base, np.ndarray) else None
            return 0 if base is not None and id(base) in seen else v.nbytes
        if isinstance(v, (str, bytes, int, float, bool)) or v is None:
            return 0
        if isinstance(v, dict):
            return sum(walk(x, d - 1) for x in v.values())
        if isinstance(v, (list, tuple, set, frozenset)):
            return sum(walk(x, d - 1) for x in v)
        if dataclasses.is_dataclass(v):
            items = [getattr(v, f.name, None) for f in dataclasses.fields(v)]
            extra = getattr(v, "__dict__", {})
            return sum(walk(x, d - 1) for x in items) + sum(
                walk(x, d - 1) for k, x in extra.items() if k not in {f.name for f in
                                                                      dataclasses.fields(v)}
            )  # fmt: skip
        if hasattr(v, "__dict__"):
            return sum(walk(x, d - 1) for x in vars(v).values())
        for name in ("data", "indices", "indptr"):  # a scipy sparse matrix
            if isinstance(getattr(v, name, None), np.ndarray):
                return sum(walk(getattr(v, n), d - 1) for n in ("data", "indices", "indptr"))
        return 0

    return walk(value, depth)


class SharedCache:
    """``get(key, make)``: the value of ``key``, made once while anyone holds it or it is
    among the recent ones that fit ``max_bytes`` (see the module's text). Thread-safe;
    ``make`` runs outside the lock (two threads may make one key; the first kept wins)."""

    def __init__(self, max_bytes: int, size_of: Callable[[object], int] = nbytes):
        self.max_bytes = max_bytes
        self._size_of = size_of
        self._lock = threading.Lock()
        self._live: weakref.WeakValueDictionary = weakref.WeakValueDictionary()
        self._recent: OrderedDict[Hashable, tuple[object, int]] = OrderedDict()
        self._held = 0

    def get(self, key: Hashable, make: Callable[[], object]):
        with self._lock:
            value = self._live.get(key)
            if value is not None:
                self._touch(key, value)
                return value
        value = make()
        with self._lock:
            kept = self._live.get(key)
            if kept is not None:  # another thread made it first
                return kept
            self._live[key] = value
            self._touch(key, value)
        return value

    def _touch(self, key: Hashable, value) -> None:
        if key in self._recent:
            self._recent.move_to_end(key)
            return
        size = self._size_of(value)
        if size > self.max_bytes:
            return  # found again while in use, never held by the cache
        self._recent[key] = (value, size)
        self._held += size
        while self._held > self.max_bytes:
            _, (_, dropped) = self._recent.popitem(last=False)
            self._held -= dropped

    def cache_clear(self) -> None:
        with self._lock:
            self._live.clear()
            self._recent.clear()
            self._held = 0

    @property
    def held_bytes(self) -> int:
        """What the recent entries weigh (values in use elsewhere are not the cache's)."""
        return self._held

    def __len__(self) -> int:
        return len(self._live)
