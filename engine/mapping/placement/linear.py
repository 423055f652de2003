"""Loihi 2 runtime model §VI placement patterns for a two-population linear layer.

Each populated router holds one origin core (slot 0) and one destination core
(slot 1); pair ``k`` is the k-th origin and the k-th destination partition. The
patterns, as router sets P_ij on the global grid (i = row y, j = column x):

* ``pairs-square``: a saturated n×m rectangle (near-square by default);
* ``pairs-x``: the X shape P_ij = δ_ij + δ_{i,n−j+1} on an n×n block, n = M/2 even;
* ``pairs-diagonal``: the identity P_ij = δ_ij on an M×M block.

Two more follow the paper's microbenchmarks and validation runs, with origin and
destination cores apart rather than paired on a router:

* ``pairs-column`` (Fig. 3a, the link microbenchmark): origins fill router column 0 from
  the bottom, destinations from the top, so every pair's messages share its middle link;
* ``pairs-halves`` (§V-A, the dense linear layer): origins fill the bottom half of the
  mesh row by row, destinations the top half.
"""

from __future__ import annotations

import numpy as np

from engine.errors import CapacityError
from engine.hardware import Hardware
from engine.mapping.assignment import Placement
from engine.mapping.partition_graph import PartitionGraph
from engine.mapping.placement import register


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
    base = _router_cores(hardware, ys * gw + xs, xs.size, slots=1)  # each router's first core
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


def _router_cores(hardware: Hardware, routers, count: int, *, slots: int = 0) -> np.ndarray:
    """The first ``count`` cores of ``routers`` (global router indices) in order, the first
    ``slots`` of each router (all by default) before the next router's."""
    k = slots or hardware.cores_per_router
    ct = hardware.core_table
    first = np.full(hardware.n_routers, -1)
    slot0 = ct["slot"] == 0
    first[ct["router"][slot0]] = np.flatnonzero(slot0)
    cores = (first[np.asarray(routers)][:, None] + np.arange(k)[None, :]).ravel()
    return cores[:count]


def _apart(graph: PartitionGraph, hardware: Hardware, origin_cores, dest_cores) -> Placement:
    pop = graph.population
    cores = np.empty(graph.n_parts, dtype=np.int64)
    cores[np.flatnonzero(pop == 0)] = origin_cores
    cores[np.flatnonzero(pop == 1)] = dest_cores
    return Placement(cores)


@register("pairs-column", tags=("pattern",))
def pairs_column(graph: PartitionGraph, hardware: Hardware, *, rng=None, column: int = 0):
    """Loihi 2 runtime model Fig. 3a: pairs apart in one router column, sharing its middle link.

    Origins fill the column up from its bottom router, destinations down from its top, on
    chip 0 (so the shared link is an on-chip one on a board of several chips)."""
    m = _m(graph, "pairs-column")
    k, gw, gh = hardware.cores_per_router, hardware.grid_width, hardware.height
    rows = -(-m // k)
    if 2 * rows > gh or not 0 <= column < hardware.width:
        raise CapacityError(
            f"pairs-column puts M={m} pairs in {2 * rows} routers of one column of chip 0 "
            f"({k} cores each); {hardware.name} has columns of {gh} routers a chip and columns "
            f"0..{hardware.width - 1}: use a smaller M (at most {gh // 2 * k}) or a taller mesh"
        )
    ys = np.arange(rows)  # chip 0's rows: global rows 0 .. height - 1
    origins = _router_cores(hardware, (gh - 1 - ys) * gw + column, m)
    dests = _router_cores(hardware, ys * gw + column, m)
    return _apart(graph, hardware, origins, dests)


@register("pairs-halves", tags=("pattern",))
def pairs_halves(graph: PartitionGraph, hardware: Hardware, *, rng=None):
    """Loihi 2 runtime model §V-A: origins in the bottom half of the mesh, destinations the top.

    Origins fill from the last row up, destinations from the first row down, row by row."""
    m = _m(graph, "pairs-halves")
    k, gw, gh = hardware.cores_per_router, hardware.grid_width, hardware.grid_height
    half = gh // 2 * gw * k
    if m > half:
        raise CapacityError(
            f"pairs-halves puts M={m} origin cores in half of {hardware.name}, which holds "
            f"{half}: use a smaller M or larger hardware"
        )
    r = np.arange(-(-m // k))
    origins = _router_cores(hardware, (gh - 1 - r // gw) * gw + r % gw, m)
    dests = _router_cores(hardware, (r // gw) * gw + r % gw, m)
    return _apart(graph, hardware, origins, dests)
