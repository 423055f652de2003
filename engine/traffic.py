"""Traffic: messages between cores, X-then-Y routing, per-link loads.

Traffic model (seed 004 §II-B, DESIGN.md): every step a neuron spikes with
probability ``rate``; a spike becomes one message per *distinct destination core*
other than its own (cores replicate spikes to their neurons locally). Messages follow
dimension-order routing — along X first, then along Y — over the global router grid
(seed 001 §II). Each message also uses its source core's core→router link and its
destination core's router→core link.

Loads are kept as integers in units of ``1 / FIXED`` messages so that every sum is
exact: a load built from scratch and one updated by a thousand swaps are equal to
the last bit.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numba
import numpy as np
import scipy.sparse as sp

from engine.errors import InfeasibleMappingError
from engine.hardware import Hardware
from engine.network import Network

__all__ = [
    "FIXED",
    "PartitionStats",
    "core_memory_bytes",
    "partition_stats",
    "route_loads",
    "router_loads",
    "swap_cores_inplace",
]

FIXED = 1 << 20  # fixed-point units per message


@dataclass(frozen=True, eq=False)
class PartitionStats:
    """Everything about a partition that does not depend on where its cores are placed."""

    n_parts: int
    population: np.ndarray  # majority population of each partition
    neurons: np.ndarray  # neurons per partition = DendOps per step
    synapses: np.ndarray  # stored inbound synapses
    axons: np.ndarray  # distinct inbound h-edges (axons)
    memory_bytes: np.ndarray  # synaptic memory needed
    synops: np.ndarray  # expected SynOps per step
    synmem_reads: np.ndarray  # expected SynMem word reads per step
    pair_src: np.ndarray  # partition pairs that exchange messages (src != dst)
    pair_dst: np.ndarray
    pair_messages: np.ndarray  # expected messages per step
    remote_edge_weight: float  # Σ rate of neurons whose h-edge leaves their core
    network: Network = field(repr=False)
    assignment: np.ndarray = field(repr=False)

    @cached_property
    def _hedges(self) -> tuple[sp.csr_matrix, np.ndarray, np.ndarray]:
        return _unique_hedges(self.network, self.assignment, self.n_parts)

    @property
    def hedge_sets(self) -> sp.csr_matrix:
        """Unique partition-level h-edges {ρ(s)} ∪ ρ(D), one per row (computed on demand)."""
        return self._hedges[0]

    @property
    def hedge_counts(self) -> np.ndarray:
        """How many neurons share each unique partition-level h-edge."""
        return self._hedges[1]

    @property
    def hedge_weights(self) -> np.ndarray:
        """Σ spike rate of the neurons sharing each unique partition-level h-edge (w_P)."""
        return self._hedges[2]

    @property
    def dendops(self) -> np.ndarray:
        return self.neurons

    @cached_property
    def pair_fixed(self) -> np.ndarray:
        return np.rint(self.pair_messages * FIXED).astype(np.int64)

    @cached_property
    def out_fixed(self) -> np.ndarray:
        return np.bincount(self.pair_src, weights=self.pair_fixed, minlength=self.n_parts).astype(
            np.int64
        )

    @cached_property
    def in_fixed(self) -> np.ndarray:
        return np.bincount(self.pair_dst, weights=self.pair_fixed, minlength=self.n_parts).astype(
            np.int64
        )

    @property
    def connectivity(self) -> float:
        """Seed 004 eq. 7, the weighted (λ−1) connectivity: expected inter-core messages/step."""
        return float(self.pair_messages.sum())

    @cached_property
    def synaptic_reuse(self) -> float:
        """Seed 004 eq. 14: mean over partitions of inbound synapses per distinct axon."""
        has = self.axons > 0
        return float((self.synapses[has] / self.axons[has]).mean()) if has.any() else 0.0

    @cached_property
    def pairs_of_part(self) -> tuple[np.ndarray, np.ndarray]:
        """CSR (indptr, pair ids) of the pairs each partition takes part in."""
        ends = np.concatenate([self.pair_src, self.pair_dst])
        ids = np.concatenate([np.arange(self.pair_src.size)] * 2)
        order = np.argsort(ends, kind="stable")
        indptr = np.concatenate([[0], np.cumsum(np.bincount(ends, minlength=self.n_parts))])
        return indptr.astype(np.int64), ids[order].astype(np.int64)

    def limit_violations(self, network: Network, hardware: Hardware) -> list[str]:
        lim = hardware.limits
        checks = [
            ("neurons", self.neurons, lim.neurons),
            ("bytes of synaptic memory", self.memory_bytes, lim.synaptic_memory_bytes),
            ("distinct inbound axons", self.axons, lim.inbound_axons),
        ]
        if lim.synapses:
            checks.append(("synapses", self.synapses, lim.synapses))
        problems = []
        for what, values, bound in checks:
            over = values > bound
            for k in np.unique(self.population[over]):
                parts = np.flatnonzero(over & (self.population == k))
                name = network.population_names[k]
                which = (
                    f"partition {parts[0]} ({name}) needs"
                    if parts.size == 1
                    else f"{parts.size} partitions of {name} ({_ranges(parts)}) need up to"
                )
                problems.append(
                    f"{which} {values[parts].max():.0f} {what}, the core limit is {bound}: "
                    f"give {name} more cores or use hardware with larger cores"
                )
        return problems


def _ranges(ids: np.ndarray) -> str:
    """``0-3, 7, 9-10`` for sorted ids."""
    breaks = np.flatnonzero(np.diff(ids) != 1)
    starts = np.concatenate([[ids[0]], ids[breaks + 1]])
    ends = np.concatenate([ids[breaks], [ids[-1]]])
    return ", ".join(f"{a}" if a == b else f"{a}-{b}" for a, b in zip(starts, ends, strict=True))


def _majority(values: np.ndarray, groups: np.ndarray, n_groups: int, n_values: int) -> np.ndarray:
    counts = sp.coo_matrix(
        (np.ones(values.size), (groups, values)), shape=(n_groups, n_values)
    ).toarray()
    return counts.argmax(axis=1).astype(np.int32)


def core_memory_bytes(neurons, synapses, axons, weight_bits, dense, model) -> np.ndarray:
    """Synaptic memory of cores: a full weight row per axon (dense) or one entry per synapse."""
    word = model.synmem_word_bits
    row_words = -(-np.asarray(neurons) * weight_bits // word)
    sparse_bytes = np.asarray(synapses) * (weight_bits + model.sparse_index_bits) / 8.0
    return np.where(dense, np.asarray(axons) * row_words * (word // 8), sparse_bytes).astype(float)


def partition_stats(network: Network, hardware: Hardware, partition) -> PartitionStats:
    """Per-partition loads and the partition-to-partition message matrix (vectorized)."""
    part = partition.assignment
    n, n_parts = network.n_neurons, partition.n_parts
    if part.shape[0] != n:
        raise InfeasibleMappingError(
            f"the partition covers {part.shape[0]} neurons; network {network.name!r} has {n}"
        )
    rate = network.rate
    indptr, indices = network.indptr, network.indices
    # (source neuron, destination partition) -> synapse count, via one CSR build
    a = sp.csr_matrix(
        (np.ones(indices.size, dtype=np.int64), part[indices], indptr), shape=(n, n_parts)
    )
    a.sum_duplicates()
    rows = np.repeat(np.arange(n, dtype=np.int64), np.diff(a.indptr))
    dst, count = a.indices.astype(np.int64), a.data
    src_part = part[rows]
    row_rate = rate[rows]

    neurons = np.bincount(part, minlength=n_parts)
    population = _majority(network.population, part, n_parts, network.n_populations)
    synapses = np.bincount(dst, weights=count, minlength=n_parts).astype(np.int64)
    axons = np.bincount(dst, minlength=n_parts)
    synops = np.bincount(dst, weights=count * row_rate, minlength=n_parts)

    model = hardware.model
    wbits = np.asarray(network.weight_bits)[population]
    dense = np.asarray([e == "dense" for e in network.encoding])[population]
    word = model.synmem_word_bits
    entry_bits = wbits + model.sparse_index_bits
    row_words = -(-neurons * wbits // word)  # dense: a whole row of the core's weights
    reads_per_entry = np.where(dense[dst], row_words[dst], -(-count * entry_bits[dst] // word))
    synmem_reads = np.bincount(dst, weights=reads_per_entry * row_rate, minlength=n_parts)
    memory_bytes = core_memory_bytes(neurons, synapses, axons, wbits, dense, model)

    remote = dst != src_part
    pairs = sp.coo_matrix(
        (row_rate[remote], (src_part[remote], dst[remote])), shape=(n_parts, n_parts)
    ).tocsr()
    pairs.sum_duplicates()
    pair_src = np.repeat(np.arange(n_parts, dtype=np.int64), np.diff(pairs.indptr))
    has_remote = np.bincount(rows[remote], minlength=n) > 0

    return PartitionStats(
        n_parts=n_parts,
        population=population,
        neurons=neurons,
        synapses=synapses,
        axons=axons,
        memory_bytes=memory_bytes,
        synops=synops,
        synmem_reads=synmem_reads,
        pair_src=pair_src,
        pair_dst=pairs.indices.astype(np.int64),
        pair_messages=pairs.data.astype(np.float64),
        remote_edge_weight=float(rate[has_remote].sum()),
        network=network,
        assignment=part,
    )


def _unique_hedges(network: Network, part: np.ndarray, n_parts: int):
    """Unique partition-level h-edges {ρ(s)} ∪ ρ(D) of the neurons that have synapses."""
    n = network.n_neurons
    a = sp.csr_matrix(
        (np.ones(network.n_synapses, dtype=np.int8), part[network.indices], network.indptr),
        shape=(n, n_parts),
    )
    with_out = np.flatnonzero(np.diff(a.indptr) > 0)
    own = sp.csr_matrix((np.ones(with_out.size), (with_out, part[with_out])), shape=(n, n_parts))
    b = (a.astype(bool).astype(np.int8) + own.astype(np.int8))[with_out]
    b.sum_duplicates()
    b.sort_indices()
    # hash each row's set of partitions: sums of random 64-bit keys, exact modulo 2**64
    keys = np.random.default_rng(0).integers(-(2**63), 2**63 - 1, size=(2, n_parts), dtype=np.int64)
    starts = b.indptr[:-1]  # every row holds at least its own partition
    h = np.stack(
        [np.add.reduceat(k[b.indices], starts) for k in keys] + [np.diff(b.indptr)], axis=1
    )
    _, first, inverse, counts = np.unique(
        h, axis=0, return_index=True, return_inverse=True, return_counts=True
    )
    sets = b[first]
    sets.data[:] = 1
    weights = np.bincount(inverse.ravel(), weights=network.rate[with_out], minlength=first.size)
    return sets.tocsr(), counts.astype(np.int64), weights


# ------------------------------------------------------------------ routing
def router_loads(hardware: Hardware, src_core, dst_core, fixed) -> np.ndarray:
    """Loads (int64 fixed point) of the 4 router-link slots of every router.

    X-then-Y routing as difference arrays: a message from router (sx, sy) to (dx, dy)
    loads the E (or W) links of row ``sy`` between ``sx`` and ``dx``, then the S (or N)
    links of column ``dx`` between ``sy`` and ``dy``. Each message adds +w and -w at the
    two ends of its two segments; one weighted bincount and cumulative sums along rows
    and columns give every link. A message with no horizontal (vertical) leg adds +w and
    -w at the same place.
    """
    ct = hardware.core_table
    gw, gh = hardware.grid_width, hardware.grid_height
    sx, sy = ct["gx"][src_core], ct["gy"][src_core]
    dx, dy = ct["gx"][dst_core], ct["gy"][dst_core]
    w = fixed.astype(np.float64)  # integers below 2**53 stay exact in float64 sums
    n_h, n_v = gh * (gw + 1), (gh + 1) * gw  # E and W rows have gw+1 columns; S and N gh+1 rows
    east, south = dx > sx, dy > sy
    h_base = np.where(east, 0, n_h) + sy * (gw + 1)
    v_base = np.where(south, 2 * n_h, 2 * n_h + n_v) + dx
    idx = np.concatenate(
        [
            h_base + np.where(east, sx, dx + 1),
            h_base + np.where(east, dx, sx + 1),
            v_base + np.where(south, sy, dy + 1) * gw,
            v_base + np.where(south, dy, sy + 1) * gw,
        ]
    )
    diff = np.bincount(idx, weights=np.concatenate([w, -w, w, -w]), minlength=2 * (n_h + n_v))
    h = np.cumsum(diff[: 2 * n_h].reshape(2, gh, gw + 1), axis=2)[:, :, :gw]
    v = np.cumsum(diff[2 * n_h :].reshape(2, gh + 1, gw), axis=1)[:, :gh]
    return np.rint(np.stack([h[0], h[1], v[0], v[1]], axis=-1).ravel()).astype(np.int64)


def route_loads(hardware: Hardware, src_core, dst_core, fixed) -> np.ndarray:
    """Per-link loads (int64 fixed point, one per link id) of core-to-core traffic."""
    n_c = hardware.n_cores
    w = fixed.astype(np.float64)
    c2r = np.rint(np.bincount(src_core, weights=w, minlength=n_c)).astype(np.int64)
    r2c = np.rint(np.bincount(dst_core, weights=w, minlength=n_c)).astype(np.int64)
    return np.concatenate([router_loads(hardware, src_core, dst_core, fixed), c2r, r2c])


# --------------------------------------------------------- incremental swap
@numba.njit(cache=True, nogil=True)
def _walk(loads, sx, sy, dx, dy, gw, m):
    """Add ``m`` to every router link on the X-then-Y path (sx, sy) -> (dx, dy)."""
    x = sx
    while x < dx:
        loads[(sy * gw + x) * 4 + 0] += m
        x += 1
    while x > dx:
        loads[(sy * gw + x) * 4 + 1] += m
        x -= 1
    y = sy
    while y < dy:
        loads[(y * gw + dx) * 4 + 2] += m
        y += 1
    while y > dy:
        loads[(y * gw + dx) * 4 + 3] += m
        y -= 1


@numba.njit(cache=True, nogil=True)
def swap_cores_inplace(
    loads, core_of_part, part_of_core, core_a, core_b,
    pp_indptr, pp_ids, pair_src, pair_dst, pair_fixed,
    core_gx, core_gy, gw, n_router_slots, n_cores,
):  # fmt: skip
    """Exchange the contents of two physical cores (either may be empty) and update loads."""
    pa = part_of_core[core_a]
    pb = part_of_core[core_b]
    for sign in (-1, 1):
        if sign == 1:  # move the partitions, then add their new routes
            if pa >= 0:
                core_of_part[pa] = core_b
            if pb >= 0:
                core_of_part[pb] = core_a
            part_of_core[core_a] = pb
            part_of_core[core_b] = pa
        for which in range(2):
            p = pa if which == 0 else pb
            if p < 0:
                continue
            for k in range(pp_indptr[p], pp_indptr[p + 1]):
                i = pp_ids[k]
                s = pair_src[i]
                d = pair_dst[i]
                if which == 1 and (s == pa or d == pa):
                    continue  # a pair between pa and pb was handled with pa
                cs = core_of_part[s]
                cd = core_of_part[d]
                _walk(
                    loads,
                    core_gx[cs],
                    core_gy[cs],
                    core_gx[cd],
                    core_gy[cd],
                    gw,
                    sign * pair_fixed[i],
                )
    # core links travel with their partitions
    for base in (n_router_slots, n_router_slots + n_cores):
        t = loads[base + core_a]
        loads[base + core_a] = loads[base + core_b]
        loads[base + core_b] = t


@numba.njit(cache=True, nogil=True)
def link_summary(loads, us_per_fixed, energy_per_fixed):
    """(max link time in µs, Σ load × energy factor) over all links."""
    worst = 0.0
    energy = 0.0
    for i in range(loads.size):
        v = loads[i]
        if v != 0:
            t = v * us_per_fixed[i]
            if t > worst:
                worst = t
            energy += v * energy_per_fixed[i]
    return worst, energy
