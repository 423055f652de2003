"""Caches bounded by the memory they hold (``engine.memo``) and the bounded on-disk cache of
generated networks (``engine.specs.prune_network_cache``)."""

from __future__ import annotations

import gc
import os
from dataclasses import dataclass

import numpy as np

from engine.memo import SharedCache, nbytes
from engine.specs import prune_network_cache

MB = 2**20


@dataclass(frozen=True, eq=False)
class Blob:
    data: np.ndarray


def blob(mb: int) -> Blob:
    return Blob(np.zeros(mb * MB, dtype=np.uint8))


def test_nbytes_counts_the_arrays_a_value_holds_once():
    a = np.zeros(1000, dtype=np.int64)
    assert nbytes(Blob(a)) == 8000
    assert nbytes({"x": Blob(a), "y": [a, a[:10]]}) == 8000  # the same array, a view of it
    assert nbytes("text") == 0 and nbytes(None) == 0


def test_the_recent_values_are_kept_within_the_byte_budget():
    cache = SharedCache(max_bytes=10 * MB)
    made = []

    def make(key, mb):
        return cache.get(key, lambda: made.append(key) or blob(mb))

    for key in "abc":
        make(key, 4)  # three of 4 MB: the first is let go
    assert cache.held_bytes == 8 * MB
    gc.collect()
    make("a", 4)  # nobody held it: made again
    make("c", 4)  # still among the recent: not
    assert made == ["a", "b", "c", "a"]


def test_a_value_in_use_is_shared_whatever_it_weighs():
    cache = SharedCache(max_bytes=MB)
    first = cache.get("big", lambda: blob(4))  # over the budget: the cache never holds it
    assert cache.held_bytes == 0
    assert cache.get("big", lambda: blob(4)) is first  # but a page using it shares it
    del first
    gc.collect()
    again = []
    cache.get("big", lambda: again.append(1) or blob(4))
    assert again == [1]  # once nobody holds it, it is gone


def test_the_disk_cache_keeps_the_most_recently_used_networks_within_its_size(tmp_path):
    for k in range(5):
        path = tmp_path / f"{k}.npz"
        path.write_bytes(b"x" * 1000)
        os.utime(path, ns=(k * 10**9, k * 10**9))
    os.utime(tmp_path / "0.npz", ns=(10 * 10**9, 10 * 10**9))  # used again lately
    assert prune_network_cache(tmp_path, max_bytes=2500) == 3
    assert sorted(p.name for p in tmp_path.glob("*.npz")) == ["0.npz", "4.npz"]
