"""Placers, registered by name: ``placers[name](graph, hardware, *, rng, **params)``.

``graph`` is the partition graph (``engine.mapping.partition_graph.PartitionGraph``: partitions,
their populations and the messages between them); a placer returns a ``Placement`` with
one distinct physical core per partition. Tags group them: ``heuristic`` (the fill
orders and the random placement the Loihi 2 mapping ES starts from), ``pattern``
(placements of one linear layer, from the Loihi 2 runtime model paper) and ``refiner``
(placers that improve a given ``initial`` placement; ``A+R`` runs placer A, then R).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable

import numpy as np

from engine.errors import SpecError, UnknownNameError
from engine.hardware import Hardware
from engine.mapping.assignment import Placement
from engine.mapping.partition_graph import PartitionGraph
from engine.registry import Registry

__all__ = ["placers", "register", "make_placement", "placement_choices"]

placers: Registry[Callable[..., Placement]] = Registry("placer")
register = placers.register


def make_placement(
    graph: PartitionGraph, hardware: Hardware, name: str, *, seed: int = 0, **params
) -> Placement:
    """The placement a placer name gives; ``A+R`` runs placer A, then refiner R on its result.

    In a composition each stage receives the ``params`` its function accepts.
    """
    stages = [s.strip() for s in name.split("+")]
    for stage in stages:
        placers[stage]  # an unknown name raises, listing the known ones
    for stage in stages[1:]:
        if not placers.has_tag(stage, "refiner"):
            raise UnknownNameError("refiner", stage, placers.names("refiner"))
    rng = np.random.default_rng(seed)
    if len(stages) == 1:
        return placers[stages[0]](graph, hardware, rng=rng, **params)
    accepted = [set(inspect.signature(placers[s]).parameters) for s in stages]
    unknown = set(params) - set().union(*accepted)
    if unknown:
        raise SpecError(f"{name}: unknown parameters {sorted(unknown)}")
    placement = None
    for stage, keys in zip(stages, accepted, strict=True):
        kw = {k: v for k, v in params.items() if k in keys}
        if placement is not None:
            kw["initial"] = placement
        placement = placers[stage](graph, hardware, rng=rng, **kw)
    return placement


def placement_choices() -> list[str]:
    """Every placer, then every general placer followed by each refiner (``spectral+force``)."""
    refiners = placers.names("refiner")
    bases = [n for n in placers if n not in refiners and not placers.has_tag(n, "pattern")]
    return list(placers) + [f"{b}+{r}" for b in bases for r in refiners]


from engine.mapping.placement import (  # noqa: E402,F401  (register the placers)
    fill,
    force,
    hilbert,
    linear,
    mindist,
    spectral,
)
