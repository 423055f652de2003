"""Hilbert-curve placement (SNN hypergraphs §IV-B1).

Partitions are put in a locality-preserving 1D order — Kahn's topological order when
the partition graph (its message pairs) is acyclic, else Alg. 2's greedy order on the
partition graph with one weight per pair (the messages per step from one partition to
the other, i.e. Σ w_P of the h-edges joining them) — and laid along a discrete Hilbert
curve over the global router grid. A grid that is not a 2^k square takes the curve of
the enclosing 2^k square and skips the points outside it. A router's cores are filled
consecutively (slot 0, 1, …) before the curve moves to the next router.
"""

from __future__ import annotations

import numpy as np

from engine.hardware import Hardware
from engine.mapping.assignment import Placement
from engine.mapping.ordering import partition_order
from engine.mapping.partition_graph import PartitionGraph
from engine.mapping.placement import register
from engine.mapping.placement.grid import router_cores
from engine.mapping.resources import require_cores

__all__ = ["hilbert", "hilbert_d2xy", "hilbert_routers"]


def hilbert_d2xy(order: int, d: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Points ``d`` of the Hilbert curve on the 2^order square, vectorized.

    The curve starts at (0, 0), ends at (2^order − 1, 0) and every step is a unit step.

    >>> hilbert_d2xy(1, np.arange(4))
    (array([0, 0, 1, 1]), array([0, 1, 1, 0]))
    """
    t = np.asarray(d, dtype=np.int64).copy()
    x = np.zeros_like(t)
    y = np.zeros_like(t)
    s = 1
    while s < (1 << order):
        rx = (t // 2) & 1
        ry = (t ^ rx) & 1
        flip = (ry == 0) & (rx == 1)
        x = np.where(flip, s - 1 - x, x)
        y = np.where(flip, s - 1 - y, y)
        swap = ry == 0
        x, y = np.where(swap, y, x), np.where(swap, x, y)
        x += s * rx
        y += s * ry
        t //= 4
        s *= 2
    return x, y


def hilbert_routers(width: int, height: int) -> np.ndarray:
    """Router indices ``y * width + x`` of a width×height grid in Hilbert-curve order."""
    order = max(int(np.ceil(np.log2(max(width, height, 1)))), 0)
    x, y = hilbert_d2xy(order, np.arange(1 << (2 * order)))
    inside = (x < width) & (y < height)
    return y[inside] * width + x[inside]


@register("hilbert")
def hilbert(graph: PartitionGraph, hardware: Hardware, *, rng=None) -> Placement:
    """SNN hypergraphs §IV-B1: Kahn/Alg. 2 order laid along a Hilbert curve of routers."""
    require_cores(graph.n_parts, hardware, "the hilbert placement")
    curve = hilbert_routers(hardware.grid_width, hardware.grid_height)
    cores = router_cores(hardware)[curve].ravel()  # a router's slots consecutively
    placement = np.empty(graph.n_parts, dtype=np.int64)
    placement[partition_order(graph)] = cores[: graph.n_parts]
    return Placement(placement)
