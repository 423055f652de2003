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

``decay=0`` (default) picks ``decay = sqrt(card / (pi * n))``: the radius within which
a node has ``card`` neighbours on average.
"""

from __future__ import annotations

import numpy as np
from scipy.spatial import cKDTree

from engine.network import Network
from engine.workloads import estimates, register
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
    src = np.repeat(np.arange(n), draws)
    r = rng.gamma(2.0, decay, src.size)
    theta = rng.random(src.size) * 2 * np.pi
    pts = xy[src] + np.stack([r * np.cos(theta), r * np.sin(theta)], axis=1)
    pts = np.abs(pts)  # reflect at 0 …
    pts = np.where(pts > 1, 2 - pts, pts)  # … and at 1
    _, dst = cKDTree(xy).query(np.clip(pts, 0, 1), k=1)
    keep = dst != src
    src, dst = src[keep], dst[keep]
    # first occurrence of each (src, dst), in draw order, then the first k[src] per row
    _, first = np.unique(src * n + dst, return_index=True)
    first.sort()
    src, dst = src[first], dst[first]
    starts = np.concatenate([[0], np.cumsum(np.bincount(src, minlength=n))])[:-1]
    rank = np.arange(src.size) - starts[src]
    keep = rank < k[src]
    src, dst = src[keep], dst[keep]
    indptr = np.concatenate([[0], np.cumsum(np.bincount(src, minlength=n))])
    return Network(
        name="rand",
        indptr=indptr,
        indices=dst,  # grouped by source already; destinations in draw order
        population=np.zeros(n, dtype=np.int32),
        population_names=("cortex",),
        rate=lognormal_rates(rng, n),
        description=f"random cortex-like h-graph: {n} nodes, mean cardinality {card}, "
        f"distance decay {decay:.3g} (SNN hypergraphs §V-A)",
    )


@estimates("rand")
def _rand_size(*, n: int, card: int, **_) -> tuple[int, int]:
    return n, n * card
