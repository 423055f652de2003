"""Loihi 2 runtime model §VI placement patterns for a two-population linear layer.

Each populated router holds one origin core (slot 0) and one destination core
(slot 1); pair ``k`` is the k-th origin and the k-th destination partition. The
patterns, as router sets P_ij on the global grid (i = row y, j = column x):

* ``pairs-square``: a saturated n×m rectangle (near-square by default);
* ``pairs-x``: the X shape P_ij = δ_ij + δ_{i,n−j+1} on an n×n block, n = M/2 even;
* ``pairs-diagonal``: the identity P_ij = δ_ij on an M×M block.
"""

from __future__ import annotations

import numpy as np

from engine.errors import CapacityError
from engine.hardware import Hardware
from engine.mapping import Placement
from engine.partition_graph import PartitionGraph
from engine.placement import register


def _pairs(graph: PartitionGraph, hardware: Hardware, xy: list[tuple[int, int]], pattern: str):
    pop = graph.population
    origins, dests = np.flatnonzero(pop == 0), np.flatnonzero(pop == 1)
    m = origins.size
    if hardware.cores_per_router < 2:
        raise CapacityError(f"{pattern} needs at least 2 cores per router")
    if len(xy) != m:
        raise CapacityError(f"{pattern}: pattern has {len(xy)} routers for M={m}")
    gw, gh = hardware.grid_width, hardware.grid_height
    xs, ys = np.array([p[0] for p in xy]), np.array([p[1] for p in xy])
    if xs.max() >= gw or ys.max() >= gh:
        raise CapacityError(
            f"{pattern} for M={m} spans {xs.max() + 1}x{ys.max() + 1} routers; "
            f"{hardware.name} has {gw}x{gh}: use a larger mesh (e.g. mesh:{max(gw, xs.max() + 1)}x"
            f"{max(gh, ys.max() + 1)}x2)"
        )
    ct = hardware.core_table
    router_core = np.full(hardware.n_routers, -1)
    first = ct["slot"] == 0
    router_core[ct["router"][first]] = np.flatnonzero(first)
    base = router_core[ys * gw + xs]
    cores = np.empty(graph.n_parts, dtype=np.int64)
    cores[origins], cores[dests] = base, base + 1
    return Placement(cores)


def _m(graph: PartitionGraph, pattern: str) -> int:
    """M, after checking the partition is M origin + M destination cores."""
    pop = graph.population
    m = int(np.count_nonzero(pop == 0))
    if m == 0 or np.count_nonzero(pop == 1) != m or pop.max() > 1:
        raise CapacityError(
            f"{pattern} places a two-population linear layer (M origin and M destination "
            "cores); this partition is not one"
        )
    return m


@register("pairs-square", tags=("pattern",))
def pairs_square(graph: PartitionGraph, hardware: Hardware, *, rng=None, rows: int = 0):
    """Loihi 2 runtime model §VI saturated rectangle of origin/destination pairs, near-square."""
    m = _m(graph, "pairs-square")
    if not rows:  # the most square saturated rectangle; a prime M leaves its last row short
        divisors = [r for r in range(1, int(np.sqrt(m)) + 1) if m % r == 0]
        rows = divisors[-1] if divisors[-1] > 1 or m < 4 else int(np.sqrt(m))
    cols = -(-m // rows)
    xy = [(k % cols, k // cols) for k in range(m)]
    return _pairs(graph, hardware, xy, "pairs-square")


@register("pairs-x", tags=("pattern",))
def pairs_x(graph: PartitionGraph, hardware: Hardware, *, rng=None):
    """Loihi 2 runtime model §VI X shape: both diagonals of an n×n block, M = 2n, n even."""
    m = _m(graph, "pairs-x")
    n = m // 2
    if m % 2 or n % 2:
        raise CapacityError(f"pairs-x needs M = 2n with n even; M = {m}")
    xy = [(i, i) for i in range(n)] + [(n - 1 - i, i) for i in range(n)]
    return _pairs(graph, hardware, xy, "pairs-x")


@register("pairs-diagonal", tags=("pattern",))
def pairs_diagonal(graph: PartitionGraph, hardware: Hardware, *, rng=None):
    """Loihi 2 runtime model §VI identity placement: pairs on the diagonal of an M×M block."""
    m = _m(graph, "pairs-diagonal")
    return _pairs(graph, hardware, [(i, i) for i in range(m)], "pairs-diagonal")
