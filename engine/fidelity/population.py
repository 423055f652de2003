"""Populations of mappings on which to judge a predictor against the simulated step.

A predictor steers the cards and the searches by which mapping it calls better, so it is
judged on the mappings a user and a search meet (issue 55): for one (network, hardware)
pair, the Loihi 2 mapping ES paper's four heuristics, random placements, random
partitionings (``min+K`` and the other partitioners, placed several ways), the mappings a
short run of the nested ES visited, and single swaps from a good mapping — what a
hand-tuner tries. ``population`` builds them, deterministically for a seed; ``simulated``
gives each its simulated step (pipelined, the same spikes for every mapping of the pair).

>>> pop = population(PairSpec("sparse-mlp-1", "loihi2", "min+2"), size="quick")  # doctest: +SKIP
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field

import numpy as np

from engine.errors import MeshScopeError
from engine.hardware import load_hardware
from engine.mapping.assignment import Mapping, Placement
from engine.pipeline import Mapped, build_mapping, resolve_network

__all__ = ["KINDS", "Member", "PairSpec", "population", "simulated"]

KINDS = ("heuristic", "random placement", "partitioning", "evolution", "swap")
HEURISTICS = ("packed-row", "packed-col", "spread-row", "spread-col")
SIZES = {  # how many of each kind: (random placements, placements per partitioning,
    #          ES budget, ES mappings kept, swaps)
    "quick": (3, 1, 12, 2, 2),
    "full": (24, 2, 120, 16, 16),
}


@dataclass(frozen=True)
class PairSpec:
    """A (network, hardware) pair and how to vary its mappings: the base partition (the
    heuristics, random placements and swaps use it), the other partitionings and the placers
    that place them."""

    network: str
    hardware: str
    partition: str
    partitions: tuple[str, ...] = ()
    placers: tuple[str, ...] = ("hilbert", "random")
    name: str = ""
    evolve: bool = True  # run the nested ES (layered networks)

    @property
    def label(self) -> str:
        return self.name or f"{self.network}/{self.hardware}"


@dataclass(frozen=True, eq=False)
class Member:
    """One mapping of a population: its kind (one of ``KINDS``), a label saying how it was
    made, and the mapping with its partition graph."""

    kind: str
    label: str
    mapped: Mapped = field(repr=False)


def population(spec: PairSpec, *, size: str = "full", seed: int = 0) -> list[Member]:
    """The mappings of ``spec`` to judge a predictor on (see the module); partitionings that
    do not fit the hardware are left out."""
    n_random, per_partition, budget, n_es, n_swaps = SIZES[size]
    net, hw = resolve_network(spec.network), load_hardware(spec.hardware)
    rng = np.random.default_rng(seed)
    base = build_mapping(net, hw, partition=spec.partition, placement=HEURISTICS[0], seed=seed)
    out = [Member("heuristic", HEURISTICS[0], base)]
    for name in HEURISTICS[1:]:
        out.append(Member("heuristic", name, _placed(base, name, seed)))
    for k in range(n_random):
        out.append(Member("random placement", f"random:{k}", _placed(base, "random", k)))
    for j, name in enumerate(spec.partitions):
        try:
            first = build_mapping(net, hw, partition=name, placement=spec.placers[0], seed=seed)
        except MeshScopeError:
            continue
        out.append(Member("partitioning", f"{name} {spec.placers[0]}", first))
        for i, placer in enumerate(spec.placers[1 : 1 + per_partition]):
            s = int(rng.integers(1 << 30)) if placer == "random" else seed + i + j
            out.append(Member("partitioning", f"{name} {placer}", _placed(first, placer, s)))
    best = base
    if spec.evolve:
        visited, best = _evolved(net, hw, budget, n_es, seed)
        out += visited
    cores = best.mapping.placement.cores
    for k in range(n_swaps):
        a = int(rng.integers(cores.size))
        b = int(rng.integers(hw.n_cores))
        while b == cores[a]:
            b = int(rng.integers(hw.n_cores))
        moved = cores.copy()
        other = np.flatnonzero(cores == b)
        moved[a] = b
        moved[other] = cores[a]
        mapping = Mapping(best.mapping.partition, Placement(moved))
        out.append(Member("swap", f"swap {k}", Mapped(net, hw, mapping, best.graph)))
    return out


def _placed(mapped: Mapped, placer: str, seed: int) -> Mapped:
    """``mapped``'s partition placed by ``placer`` (its partition graph reused)."""
    from engine.mapping.placement import make_placement

    place = make_placement(mapped.graph, mapped.hardware, placer, seed=seed)
    mapping = Mapping(mapped.mapping.partition, place)
    return Mapped(mapped.network, mapped.hardware, mapping, mapped.graph)


def _evolved(net, hw, budget: int, keep: int, seed: int) -> tuple[list[Member], Mapped]:
    """``keep`` of the mappings a nested ES run (the max-affine model its fitness, ``budget``
    evaluations) visited, evenly over the run, and its best."""
    from engine.search import ESConfig, NestedES

    es = NestedES(net, hw, ESConfig(budget=budget, seed=seed))
    result = es.run()
    feasible = [r for r in result.history if r.feasible and r.level != "init"]
    picks = np.unique(np.linspace(0, len(feasible) - 1, keep).round().astype(int))
    graphs: dict[tuple, Mapped] = {}

    def mapped_of(record) -> Mapped:
        mapping = record.mapping(net)
        key = record.cores_per_population
        if key not in graphs:
            graphs[key] = Mapped.of(net, hw, mapping)
        g = graphs[key]
        return Mapped(net, hw, mapping, g.graph)

    members = [
        Member("evolution", f"es #{feasible[i].index}", mapped_of(feasible[i]))
        for i in picks.tolist()
        if feasible
    ]
    return members, mapped_of(result.best)


def simulated(members: list[Member], *, seed: int = 0) -> np.ndarray:
    """Each member's simulated step (µs; NaN where the simulation failed): pipelined, every
    mapping of the pair with the same spikes (drawn from ``seed``)."""
    from engine.simulate import draw_spikes, simulate_step

    if not members:
        return np.zeros(0)
    spikes = draw_spikes(members[0].mapped.network.rate, "sample", seed=seed)
    out = np.full(len(members), np.nan)
    for i, m in enumerate(members):
        with contextlib.suppress(MeshScopeError):  # (a deadlock: NaN, counted by the caller)
            out[i] = simulate_step(m.mapped, spikes=spikes, seed=seed).step_us
    return out
