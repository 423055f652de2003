"""Small random networks and mappings for property tests."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from engine.mapping.assignment import Partition, Placement
from engine.model.network import Network

# meshes of one and of several chips, square and not, one to four cores per router
hardware_specs = st.sampled_from(["mesh:3x2x1", "mesh:4x4x2", "mesh:2x3x4@2x2", "mesh:5x1x1@1x3"])


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


def random_mapping(rng, hw, n_neurons=60, fan_out=8):
    """A random network of three populations, partitioned onto some of ``hw``'s cores and
    placed at random: (network, partition, placement)."""
    network = random_network(rng, n_neurons, fan_out, n_pop=3)
    n_parts = int(rng.integers(1, min(n_neurons, hw.n_cores) + 1))
    assignment = np.concatenate([np.arange(n_parts), rng.integers(0, n_parts, n_neurons - n_parts)])
    partition = Partition(rng.permutation(assignment))
    placement = Placement(rng.permutation(hw.n_cores)[:n_parts])
    return network, partition, placement
