"""Shared builders for engine tests: small random networks."""

from __future__ import annotations

import numpy as np

from engine.network import Network


def random_network(rng: np.random.Generator, n: int, fan_out: int, n_pop: int = 2) -> Network:
    """A random directed hypergraph with ``n_pop`` populations and random rates."""
    counts = rng.integers(0, fan_out + 1, size=n)
    indptr = np.concatenate([[0], np.cumsum(counts)])
    indices = rng.integers(0, n, size=int(indptr[-1]))
    population = np.sort(rng.integers(0, n_pop, size=n))
    population[:n_pop] = np.arange(n_pop)  # every population non-empty
    population.sort()
    return Network(
        name="random-test",
        indptr=indptr,
        indices=indices,
        population=population,
        population_names=[f"p{k}" for k in range(n_pop)],
        rate=rng.random(n),
        encoding=[("sparse", "dense")[k % 2] for k in range(n_pop)],
    )
