"""Loihi 2 mapping ES §4.2 mutation and reordering operators. Each keeps its offspring feasible.

The parameters (defaults in ``OperatorParams``) are ours: the paper names them but
does not give values.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.errors import CapacityError
from engine.hardware import Hardware
from engine.mapping.assignment import Mapping, Partition, Placement
from engine.model.network import Network
from engine.search.genotype import Layout, PartitionGenotype

__all__ = [
    "OperatorParams",
    "mutate_partition",
    "mutate_placement",
    "reorder",
    "resize_population",
]


@dataclass(frozen=True)
class OperatorParams:
    p_mut: float = 0.3  # per-gene mutation probability of the partitioning genotype
    p_add: float = 0.5  # resource addition (else redistribution)
    delta_max: int = 3  # cores moved by one gene mutation: uniform in 1..delta_max
    p_swap: float = 0.5  # active-global swap
    p_inverse: float = 0.25  # inversion (else scramble)
    alpha: float = 0.1  # mutation magnitude k uniform in 1..floor(alpha * C_used)


def mutate_partition(
    x: PartitionGenotype, layout: Layout, params: OperatorParams, rng: np.random.Generator
) -> PartitionGenotype:
    """Resource addition / redistribution on each gene with probability p_mut.

    Genes are visited in random order. Addition takes δ ∈ {1..δ_max} cores from the
    unused pool; redistribution moves δ of the layer's extra cores to another layer or
    to the pool. δ is capped so that every layer keeps a core count that fits its limits
    (``layout.fits``) between c_min and c_max and the pool stays non-negative. When no
    gene changed, one possible move is forced, so an offspring always differs from its
    parent unless the genotype has no move at all.
    """
    extra, unused = x.extra.copy(), x.unused
    n = layout.n_layers
    for i in rng.permutation(n):
        if rng.random() >= params.p_mut:
            continue
        delta = int(rng.integers(1, params.delta_max + 1))
        if rng.random() < params.p_add:
            unused -= _move(layout, extra, None, i, min(delta, unused))
        else:
            target = int(rng.integers(0, n))  # == i stands for the unused pool
            unused += _move(layout, extra, i, None if target == i else target, delta)
    if np.array_equal(extra, x.extra):
        moves = _possible_moves(layout, extra, unused, params)
        if moves:
            src, dst = moves[int(rng.integers(0, len(moves)))]
            delta = int(rng.integers(1, params.delta_max + 1))
            if src is None:
                unused -= _move(layout, extra, None, dst, min(delta, unused))
            else:
                unused += _move(layout, extra, src, dst, delta)
    return PartitionGenotype(extra, unused)


def _move(layout: Layout, extra: np.ndarray, src, dst, delta: int) -> int:
    """Move up to ``delta`` cores from layer src (None: the pool) to dst (None: the pool).

    Takes the largest amount ≤ delta that keeps both layers within their bounds and
    limits; edits ``extra`` in place and returns how many cores moved (to or from the
    pool, the caller settles the pool).
    """
    c = layout.c_min + extra
    for d in range(delta, 0, -1):
        if src is not None and (d > extra[src] or not layout.fits(src, int(c[src]) - d)):
            continue
        if dst is not None and (
            c[dst] + d > layout.c_max[dst] or not layout.fits(dst, int(c[dst]) + d)
        ):
            continue
        if src is not None:
            extra[src] -= d
        if dst is not None:
            extra[dst] += d
        return d if (src is None) != (dst is None) else 0
    return 0


def _possible_moves(layout: Layout, extra: np.ndarray, unused: int, params) -> list:
    """(src, dst) pairs (None = the pool) along which one core can move, by allowed operators."""
    c = layout.c_min + extra
    n = range(layout.n_layers)
    grow = [i for i in n if c[i] < layout.c_max[i] and layout.fits(i, int(c[i]) + 1)]
    shrink = [i for i in n if extra[i] > 0 and layout.fits(i, int(c[i]) - 1)]
    moves = [(None, i) for i in grow if unused > 0] if params.p_add > 0 else []
    if params.p_add < 1:
        moves += [(i, None) for i in shrink]
        moves += [(i, j) for i in shrink for j in grow if i != j]
    return moves


def mutate_placement(
    omega: np.ndarray, c_used: int, params: OperatorParams, rng: np.random.Generator
) -> np.ndarray:
    """Active-global swap, inversion or scramble of the placement permutation ω.

    The magnitude k is uniform in {1..⌊α·C_used⌋}; every operator starts inside the
    active prefix ω[:C_used] and may reach into the unused tail. A draw that leaves ω
    as it was (a scramble that restores the order, swaps that cancel) is drawn again.
    """
    c_tot = omega.size
    if c_tot < 2:
        return omega.copy()
    while True:
        out = omega.copy()
        k = int(rng.integers(1, max(1, int(params.alpha * c_used)) + 1))
        u = rng.random()
        if u < params.p_swap:
            for _ in range(max(1, k // 2)):
                i = int(rng.integers(0, c_used))
                j = int(rng.integers(0, c_tot - 1))
                j += j >= i  # uniform over all positions but i
                out[i], out[j] = out[j], out[i]
        else:
            k = max(k, 2)  # a segment of one is no change
            i = int(rng.integers(0, min(c_used, c_tot - 1)))
            seg = slice(i, min(i + k, c_tot))
            if u < params.p_swap + params.p_inverse:
                out[seg] = out[seg][::-1].copy()
            else:
                out[seg] = rng.permutation(out[seg])
        if not np.array_equal(out, omega):
            return out


def reorder(
    omega: np.ndarray, layout: Layout, old: PartitionGenotype, new: PartitionGenotype
) -> np.ndarray:
    """Carry a placement to a new partitioning, keeping each layer's physical cores.

    A layer that loses cores keeps its first c'_i and releases the rest; a layer that
    gains keeps all of its cores and draws the deficit from the pool: the unused cores
    in ω's order, then the released ones.
    """
    c_old, c_new = old.cores_per_layer(layout), new.cores_per_layer(layout)
    starts = np.concatenate([[0], np.cumsum(c_old)])
    segments, released = [], []
    for i in range(layout.n_layers):
        seg = omega[starts[i] : starts[i + 1]]
        segments.append(seg[: c_new[i]])
        released.append(seg[c_new[i] :])
    pool = np.concatenate([omega[starts[-1] :], *released])
    out, taken = [], 0
    for i, seg in enumerate(segments):
        need = int(c_new[i]) - seg.size
        out.append(seg)
        if need > 0:
            out.append(pool[taken : taken + need])
            taken += need
    out.append(pool[taken:])
    return np.concatenate(out)


def resize_population(
    network: Network, hardware: Hardware, mapping: Mapping, population: int, delta: int
) -> Mapping:
    """``mapping`` with ``delta`` more (or fewer) cores for one population.

    The reordering operator carries the placement over: every other population keeps
    its physical cores, a population that grows takes unused cores, one that shrinks
    releases its last ones. The partition must be a per-population split (min, min+K,
    cores:…); raises ``CapacityError`` when the new count is impossible.
    """
    part = mapping.partition
    if part.cores_per_population is None:
        raise CapacityError(
            "this partition is not a per-layer split; change cores per layer with a "
            "min, min+K or cores: partition"
        )
    if network.spike_source[population]:
        raise CapacityError(
            f"{network.population_names[population]} is a spike source: it runs on no core "
            "and sends from the hardware's input port"
        )
    old = np.asarray(part.cores_per_population)
    new = old.copy()
    new[population] += delta
    size = int(network.population_sizes[population])
    if not 1 <= new[population] <= size:
        raise CapacityError(
            f"{network.population_names[population]} has {size} neurons: it takes between 1 "
            f"and {size} cores"
        )
    n_cores = hardware.n_cores
    if new.sum() > n_cores:
        raise CapacityError(f"all {n_cores} cores are in use")
    layout = Layout(
        free=np.arange(network.n_populations),
        c_min=np.zeros(network.n_populations),
        c_max=network.population_sizes,
        cores=np.arange(n_cores),
    )
    used = mapping.placement.cores
    omega = np.concatenate([used, np.setdiff1d(np.arange(n_cores), used)])
    omega = reorder(
        omega,
        layout,
        PartitionGenotype(old, n_cores - int(old.sum())),
        PartitionGenotype(new, n_cores - int(new.sum())),
    )
    return Mapping(Partition.layered(network, new), Placement(omega[: new.sum()]))
