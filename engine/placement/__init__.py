"""Placers, registered by name: ``placers[name](stats, hardware, *, rng, **params)``.

``stats`` is the partition graph (``engine.traffic.PartitionStats``: partitions, their
populations and the messages between them); a placer returns a ``Placement`` with one
distinct physical core per partition.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from engine.errors import UnknownNameError
from engine.hardware import Hardware
from engine.mapping import Placement
from engine.traffic import PartitionStats

__all__ = ["placers", "register", "make_placement"]

placers: dict[str, Callable[..., Placement]] = {}


def register(name: str):
    def deco(fn):
        placers[name] = fn
        return fn

    return deco


def make_placement(
    stats: PartitionStats, hardware: Hardware, name: str, *, seed: int = 0, **params
):
    if name not in placers:
        raise UnknownNameError("placer", name, placers)
    return placers[name](stats, hardware, rng=np.random.default_rng(seed), **params)


from engine.placement import fill, linear  # noqa: E402,F401  (register the placers)
