"""A QUBO solver network as in Loihi 2 runtime model §V.3 (after Pierro et al.).

``n`` neurons encode the binary variables; a symmetric random QUBO matrix of the
given density connects them recurrently (both directions of each nonzero Q_ij).
A temperature neuron drives every variable neuron and a loss neuron listens to all
of them. Variable neurons spike with probability ``rate`` per step (the measured
activity rate that Loihi 2 runtime model multiplies into the traffic).
"""

from __future__ import annotations

import numpy as np

from engine.arrays import csr_from_pairs, distinct
from engine.model.network import Network
from engine.workloads import ALL, estimates, register
from engine.workloads._build import require


@register("qubo")
def qubo(*, n: int = 1000, density: float = 0.1, rate: float = 0.1, seed: int = 0) -> Network:
    """Recurrent QUBO solver of Loihi 2 runtime model §V.3: n variables, Q density, rate."""
    require(n >= 2, "qubo: n must be at least 2")
    require(0 < density <= 1 and 0 <= rate <= 1, "qubo: density in (0, 1], rate in [0, 1]")
    require(n * n * density <= 60_000_000, f"qubo: n={n} at density {density} is too many synapses")
    rng = np.random.default_rng(seed)
    upper_i, upper_j = np.triu_indices(n, k=1) if n <= 6000 else _sample_upper(rng, n, density)
    if n <= 6000:
        keep = rng.random(upper_i.size) < density
        upper_i, upper_j = upper_i[keep], upper_j[keep]
    temp, loss = n, n + 1
    src = np.concatenate([upper_i, upper_j, np.full(n, temp), np.arange(n)])
    dst = np.concatenate([upper_j, upper_i, np.arange(n), np.full(n, loss)])
    indptr, indices = csr_from_pairs(n + 2, src, dst)
    return Network(
        name="qubo",
        indptr=indptr,
        indices=indices,
        population=np.concatenate([np.zeros(n, int), [1, 2]]),
        population_names=("variables", "temperature", "loss"),
        rate=np.concatenate([np.full(n, rate), [1.0, rate]]),
        description=f"QUBO solver: {n} variables, Q density {density:g}, activity {rate:g} "
        "(Loihi 2 runtime model §V.3)",
    )


def _sample_upper(rng, n, density):
    """Distinct (i < j) pairs, each present with probability ``density`` (large n)."""
    pairs = n * (n - 1) // 2
    k = int(rng.binomial(pairs, density))
    flat = distinct(rng.integers(0, pairs, size=int(k * 1.1) + 16))
    while flat.size < k:  # dense Q: draw again until there are k distinct pairs
        more = rng.integers(0, pairs, size=2 * (k - flat.size) + 16)
        flat = distinct(np.concatenate([flat, more]))
    flat = np.sort(rng.permutation(flat)[:k])  # a random k of them, not the k smallest
    # invert the row-major index of the strict upper triangle
    i = (n - 2 - np.floor(np.sqrt(-8 * flat + 4 * n * (n - 1) - 7) / 2 - 0.5)).astype(np.int64)
    j = flat + i + 1 - n * (n - 1) // 2 + (n - i) * ((n - i) - 1) // 2
    return i, j


@estimates("qubo", on_cores=ALL)
def _qubo_size(*, n: int, density: float, **_) -> tuple[int, int]:
    return n + 2, int(n * n * min(1.0, max(density, 0.0))) + 2 * n
