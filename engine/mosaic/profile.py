"""The hop-distance sparsity profile P(θ) and what it says about routing memory (routing paper
§III, Fig. 2d).

``p_d`` is the density of connections between neurons whose NTs are d hops apart: the
connections at distance d over the neuron pairs at distance d (every ordered pair, a neuron
with itself included, as the paper's S(θ) = |θ|₀ / N²). Distances run 0 … d_max; on a Mosaic
they are 0 and odd (``engine.mosaic.grid``), so even d ≥ 2 has no pairs and its p_d is 0.

``random_network`` draws a network with exactly a given profile (each class's count rounded
down from p_d × pairs, the connections uniform among its pairs); ``requirements`` routes many
such networks and reports the crossbar sizes they need, mean and standard deviation — the
paper's Fig. 2d, and its claim that the spread across networks of one profile is small.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.arrays import csr_from_pairs, distinct
from engine.errors import SpecError
from engine.model.network import Network
from engine.mosaic.grid import MosaicGrid
from engine.mosaic.memory import routing_memory

__all__ = [
    "Profile",
    "hop_matrix",
    "profile_of",
    "parse_target",
    "random_network",
    "requirements",
    "sequential_nt",
    "MAX_DENSE",
    "capacities",
]

MAX_DENSE = 8_192  # neurons for which an N × N matrix is built (512 MiB of int64 at most)


@dataclass(frozen=True)
class Profile:
    """P(θ): per hop distance d, the connections, the neuron pairs, and their ratio p_d."""

    connections: np.ndarray
    pairs: np.ndarray

    @property
    def p(self) -> np.ndarray:
        return np.divide(
            self.connections, self.pairs, out=np.zeros(self.pairs.size), where=self.pairs > 0
        )

    def to_dict(self) -> dict:
        return {
            "p": [round(float(v), 6) for v in self.p],
            "connections": self.connections.tolist(),
            "pairs": self.pairs.tolist(),
        }


def sequential_nt(n_neurons: int, hardware) -> np.ndarray:
    """Neurons in order, filling NTs in row-major order (``limits.neurons`` each)."""
    grid = MosaicGrid(hardware)
    per = hardware.limits.neurons
    if n_neurons > per * grid.n_nt:
        raise SpecError(
            f"{n_neurons} neurons do not fit {grid.n_nt} Neuron Tiles of {per}: take a larger "
            f"Mosaic (mosaic-8x8@RxC)"
        )
    return np.arange(n_neurons, dtype=np.int64) // per


def hop_matrix(hardware, nt_of: np.ndarray) -> np.ndarray:
    """N × N hop distance between the NTs of every pair of neurons (neurons with no NT, -1,
    get -1)."""
    nt_of = np.asarray(nt_of, dtype=np.int64)
    if nt_of.size > MAX_DENSE:
        raise SpecError(
            f"{nt_of.size} neurons: dense N x N matrices (rewiring, random networks of a "
            f"profile) are built up to {MAX_DENSE} neurons"
        )
    used, where = np.unique(np.maximum(nt_of, 0), return_inverse=True)
    hops = MosaicGrid(hardware).hop_distance(used[:, None], used[None, :])
    out = hops[where[:, None], where[None, :]]
    out[(nt_of < 0)[:, None] | (nt_of < 0)[None, :]] = -1
    return out


def _classes(grid: MosaicGrid, nt_of: np.ndarray) -> np.ndarray:
    """Neuron pairs per hop distance 0 … d_max, from the neurons per NT."""
    return grid.pairs_per_distance(np.bincount(nt_of[nt_of >= 0], minlength=grid.n_nt))


def profile_of(hardware, nt_of: np.ndarray, network: Network | None = None, *,
               weights: np.ndarray | None = None) -> Profile:  # fmt: skip
    """P(θ) of a network's synapses between neurons on NTs (``network``; a pair joined by
    several synapses is one connection) or of a dense N × N weight matrix, rows the
    presynaptic neurons (``weights``; nonzero = connected)."""
    grid = MosaicGrid(hardware)
    nt_of = np.asarray(nt_of, dtype=np.int64)
    if weights is not None:
        if np.shape(weights) != (nt_of.size, nt_of.size):
            raise SpecError(
                f"a weight matrix of shape {np.shape(weights)} for {nt_of.size} placed neurons: "
                f"it must be {nt_of.size} x {nt_of.size}"
            )
        s, d = np.nonzero(weights)
    else:
        if network.projections:
            network = network.explicit(why="the profile counts connections one by one")
        n = network.n_neurons
        pairs = distinct(network.sources.astype(np.int64) * n + network.indices)
        s, d = pairs // n, pairs % n
    on = (nt_of[s] >= 0) & (nt_of[d] >= 0)
    dist = grid.hop_distance(nt_of[s[on]], nt_of[d[on]])
    pairs = _classes(grid, nt_of)
    return Profile(np.bincount(dist, minlength=pairs.size).astype(np.int64), pairs)


def parse_target(text: str) -> tuple[float, ...]:
    """``"0.5,0.1,0.02"`` → (p̂₀, p̂₁, p̂₂); farther distances are 0."""
    try:
        target = tuple(float(v) for v in text.split(","))
    except ValueError:
        raise SpecError(
            f"a target profile is densities p0,p1,… like 0.5,0.1,0.02, not {text!r}"
        ) from None
    if not target or any(not 0 <= v <= 1 for v in target):
        raise SpecError(f"target densities must lie in [0, 1], not {text!r}")
    return target


def capacities(target, pairs: np.ndarray) -> np.ndarray:
    """Connections each distance class may hold under ``target``: ⌊p̂_d × pairs_d⌋."""
    p = np.zeros(pairs.size)
    p[: min(len(target), pairs.size)] = np.asarray(target, dtype=float)[: pairs.size]
    return np.floor(p * pairs + 1e-9).astype(np.int64)


def random_network(hardware, nt_of: np.ndarray, target, *, seed: int) -> Network:
    """A network on the NTs ``nt_of`` whose profile is ``target`` (each class ⌊p̂_d × pairs⌋
    connections, uniform among its pairs), one population; same seed, same network."""
    rng = np.random.default_rng(seed)
    hops = hop_matrix(hardware, nt_of).ravel()
    caps = capacities(target, _classes(MosaicGrid(hardware), np.asarray(nt_of)))
    order = np.argsort(hops, kind="stable")
    bounds = np.searchsorted(hops[order], np.arange(caps.size + 1))
    chosen = [
        order[lo + rng.choice(hi - lo, size=int(k), replace=False)]
        for lo, hi, k in zip(bounds[:-1], bounds[1:], caps, strict=True)
        if k
    ]
    flat = np.sort(np.concatenate(chosen)) if chosen else np.zeros(0, np.int64)
    n = len(nt_of)
    indptr, indices = csr_from_pairs(n, flat // n, flat % n)
    return Network(
        name=f"profile:{','.join(f'{v:g}' for v in target)},seed={seed}",
        indptr=indptr,
        indices=indices,
        population=np.zeros(n, np.int32),
        population_names=("neurons",),
        rate=np.full(n, 0.1),
    )


def requirements(hardware, target, *, seeds, nt_of: np.ndarray | None = None) -> dict:
    """Fig. 2d for one profile: the largest RT and NT crossbar (input rows) and the routing
    entries that random networks of profile ``target`` need, mean and standard deviation
    over ``seeds`` (shared-path routing; neurons in order on the NTs by default)."""
    grid = MosaicGrid(hardware)
    if nt_of is None:
        nt_of = sequential_nt(grid.n_nt * hardware.limits.neurons, hardware)
    runs = []
    for seed in seeds:  # one routed network each
        mem = routing_memory(random_network(hardware, nt_of, target, seed=seed), hardware, nt_of)
        s = mem.summary()
        runs.append((s["max_rt_rows"], s["max_nt_rows"], s["routing_entries"]))
    a = np.array(runs, dtype=float)
    keys = ("rt_size", "nt_size", "routing_entries")
    return {
        "target": list(target),
        "networks": len(runs),
        **{
            k: {
                "mean": float(a[:, i].mean()),
                "std": float(a[:, i].std(ddof=1) if len(a) > 1 else 0.0),
            }
            for i, k in enumerate(keys)
        },  # fmt: skip
    }
