"""Random cortex-like hypergraphs after SNN hypergraphs §V-A (``x_rand``).

Nodes sit uniformly in the unit square. Each node's h-edge cardinality is drawn from
a Poisson distribution of mean ``card``; its destinations are drawn with a
probability that decays exponentially with Euclidean distance, ``exp(-d / decay)``:
an offset of radius ~ Gamma(2, decay) (the radial law of that density on the
plane) and uniform angle is snapped to the nearest node (a KD-tree query), the point
reflected back into the square when it falls outside. Duplicates and self-loops are
dropped, drawing a few extra candidates so that rows keep their cardinality.
Spike rates are log-normal with median 0.23 and coefficient of variation 1.58,
clipped to 1 (rates are probabilities per step).

The snapping and the deduplication are two numba kernels over the draws (a uniform grid of
about two nodes a cell, searched ring by ring until no nearer node can remain; a stamp per
destination, row by row), so 2^18 nodes of cardinality 128 — 44 M draws — take seconds and
no draw's coordinates are ever stored: the same network the KD-tree query and a sort gave.

``decay=0`` (default) picks ``decay = sqrt(card / (pi * n))``: the radius within which
a node has ``card`` neighbours on average.
"""

from __future__ import annotations

import numba
import numpy as np

from engine.model.network import Network
from engine.workloads import ALL, estimates, register
from engine.workloads._build import require

RATE_MEDIAN = 0.23
RATE_CV = 1.58


def lognormal_rates(rng, size, median=RATE_MEDIAN, cv=RATE_CV):
    sigma = np.sqrt(np.log1p(cv**2))
    return np.minimum(rng.lognormal(np.log(median), sigma, size), 1.0)


@register("rand")
def rand(*, n: int = 4096, card: int = 64, decay: float = 0.0, seed: int = 0) -> Network:
    """Random cyclic h-graph of SNN hypergraphs §V-A: n nodes, Poisson(card) h-edges, decay."""
    require(n >= 2 and card >= 1, "rand: n must be at least 2 and card at least 1")
    require(n * card <= 200_000_000, f"rand: n*card = {n * card} synapses is too many")
    require(np.isfinite(decay) and decay >= 0, "rand: decay must be 0 (automatic) or positive")
    rng = np.random.default_rng(seed)
    xy = rng.random((n, 2))
    decay = decay or float(np.sqrt(card / (np.pi * n)))
    k = np.minimum(rng.poisson(card, n), n - 1)
    draws = np.ceil(k * 1.3 + 2).astype(np.int64)
    total = int(draws.sum())
    r = rng.gamma(2.0, decay, total)
    theta = rng.random(total) * 2 * np.pi
    side = max(1, int(np.sqrt(n / 2)))  # about two nodes a cell
    cell = _cells(xy, side)
    order = np.argsort(cell, kind="stable").astype(np.int64)
    starts = np.concatenate([[0], np.cumsum(np.bincount(cell, minlength=side * side))])
    dst = _snap(xy, draws, r, theta, side, order, starts.astype(np.int64),
                np.ascontiguousarray(xy[order, 0]), np.ascontiguousarray(xy[order, 1]))  # fmt: skip
    del r, theta
    indptr, indices = _first_k(draws, dst, k.astype(np.int64), n)
    return Network(
        name="rand",
        indptr=indptr,
        indices=indices,  # grouped by source already; destinations in draw order
        population=np.zeros(n, dtype=np.int32),
        population_names=("cortex",),
        rate=lognormal_rates(rng, n),
        description=f"random cortex-like h-graph: {n} nodes, mean cardinality {card}, "
        f"distance decay {decay:.3g} (SNN hypergraphs §V-A)",
    )


def _cells(xy: np.ndarray, side: int) -> np.ndarray:
    c = np.minimum((xy * side).astype(np.int64), side - 1)
    return c[:, 1] * side + c[:, 0]


@numba.njit(cache=True, nogil=True)
def _snap(xy, draws, r, theta, side, order, starts, cx_sorted, cy_sorted):
    """The nearest node of every draw's point (its source's position plus the offset
    (r, θ), reflected into the unit square and clipped), as a KD-tree query would give.
    ``cx_sorted``/``cy_sorted``: the nodes' coordinates in cell order (``order``), so a
    cell's nodes are read from consecutive memory."""
    n = draws.size
    out = np.empty(r.size, dtype=np.int32)
    h = 1.0 / side
    first = np.zeros(n + 1, dtype=np.int64)
    for s in range(n):
        first[s + 1] = first[s] + draws[s]
    for i in range(n):  # sources in cell order: neighbouring sources read the same cells
        s = order[i]
        for t in range(first[s], first[s + 1]):
            px = abs(xy[s, 0] + r[t] * np.cos(theta[t]))
            py = abs(xy[s, 1] + r[t] * np.sin(theta[t]))
            px = 2.0 - px if px > 1.0 else px
            py = 2.0 - py if py > 1.0 else py
            px = min(max(px, 0.0), 1.0)
            py = min(max(py, 0.0), 1.0)
            cx = min(int(px * side), side - 1)
            cy = min(int(py * side), side - 1)
            best, best_d = -1, np.inf
            ring = 0
            while True:
                for gy in range(max(cy - ring, 0), min(cy + ring, side - 1) + 1):
                    edge = gy == cy - ring or gy == cy + ring
                    step = 1 if edge else 2 * ring
                    gx = cx - ring
                    while gx <= cx + ring:
                        if 0 <= gx < side:
                            c = gy * side + gx
                            for j in range(starts[c], starts[c + 1]):
                                dx, dy = cx_sorted[j] - px, cy_sorted[j] - py
                                d = dx * dx + dy * dy
                                if d < best_d or (d == best_d and order[j] < best):
                                    best, best_d = order[j], d
                        gx += step if step > 0 else 1
                # every node beyond this ring lies at least ring * h away
                if best >= 0 and best_d <= (ring * h) ** 2:
                    break
                if ring > side:
                    break
                ring += 1
            out[t] = best
    return out


@numba.njit(cache=True, nogil=True)
def _first_k(draws, dst, k, n):
    """Per source, its first ``k`` distinct destinations other than itself, in draw order."""
    stamp = np.full(n, -1, dtype=np.int64)
    indptr = np.zeros(n + 1, dtype=np.int64)
    indices = np.empty(dst.size, dtype=np.int32)
    t = 0
    m = 0
    for s in range(n):
        kept = 0
        for _ in range(draws[s]):
            d = dst[t]
            t += 1
            if d == s or stamp[d] == s or kept >= k[s]:
                continue
            stamp[d] = s
            indices[m] = d
            m += 1
            kept += 1
        indptr[s + 1] = m
    return indptr, indices[:m].copy()


@estimates("rand", on_cores=ALL)
def _rand_size(*, n: int, card: int, **_) -> tuple[int, int]:
    return n, n * card
