"""Placers, registered by name: ``placers[name](graph, hardware, *, rng, **params)``.

``graph`` is the partition graph (``engine.partition_graph.PartitionGraph``: partitions, their
populations and the messages between them); a placer returns a ``Placement`` with one
distinct physical core per partition.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable

import numpy as np

from engine.errors import UnknownNameError
from engine.hardware import Hardware
from engine.mapping import Placement
from engine.partition_graph import PartitionGraph

__all__ = ["placers", "register", "make_placement", "placement_choices"]

placers: dict[str, Callable[..., Placement]] = {}


def register(name: str):
    def deco(fn):
        placers[name] = fn
        return fn

    return deco


def make_placement(
    graph: PartitionGraph, hardware: Hardware, name: str, *, seed: int = 0, **params
):
    """The placement a placer name gives; ``A+R`` runs placer A, then refiner R on its result.

    A refiner is a placer that takes ``initial=Placement`` (``force``). In a composition
    each stage receives the ``params`` its function accepts.
    """
    stages = [s.strip() for s in name.split("+")]
    for stage in stages:
        if stage not in placers:
            raise UnknownNameError("placer", stage, placers)
    for stage in stages[1:]:
        if "initial" not in inspect.signature(placers[stage]).parameters:
            raise UnknownNameError("refiner", stage, _refiners())
    rng = np.random.default_rng(seed)
    if len(stages) == 1:
        return placers[stages[0]](graph, hardware, rng=rng, **params)
    accepted = [set(inspect.signature(placers[s]).parameters) for s in stages]
    unknown = set(params) - set().union(*accepted)
    if unknown:
        raise TypeError(f"{name}: unknown parameters {sorted(unknown)}")
    placement = None
    for stage, keys in zip(stages, accepted, strict=True):
        kw = {k: v for k, v in params.items() if k in keys}
        if placement is not None:
            kw["initial"] = placement
        placement = placers[stage](graph, hardware, rng=rng, **kw)
    return placement


def _refiners() -> list[str]:
    return [n for n, fn in placers.items() if "initial" in inspect.signature(fn).parameters]


def placement_choices() -> list[str]:
    """Every placer, then every general placer followed by each refiner (``spectral+force``)."""
    refiners = _refiners()
    bases = [n for n in placers if n not in refiners and not n.startswith("pairs-")]
    return list(placers) + [f"{b}+{r}" for b in bases for r in refiners]


from engine.placement import (  # noqa: E402,F401  (register the placers)
    fill,
    force,
    hilbert,
    linear,
    mindist,
    spectral,
)
