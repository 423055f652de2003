"""The partition graph: what each core holds and which cores talk.

Partitioning turns the neuron-level hypergraph into a small graph of partitions (virtual
cores). ``partition_graph`` computes, in a few passes over all synapses, everything
about a partition that does not depend on where its cores are placed: per partition its
neurons (DendOps), inbound synapses, distinct inbound axons, synaptic memory, expected
SynOps and SynMem reads per step; and the message pairs — partition ``a`` sends
``pair_messages`` expected messages per step to partition ``b``, one per spiking neuron
of ``a`` with a synapse in ``b`` (the SNN hypergraphs paper's λ−1 traffic: cores replicate spikes
locally). Placers place this graph; the cost model evaluates its placements.

A network's spike sources run on no core (their neurons' partition is -1): their messages
enter the mesh at the hardware's input port: the input pairs (``input_population``,
``input_dst``, ``input_messages``) say how many per step each source population sends to
partition ``b``, one per spiking source neuron with a synapse in ``b``. They load ``b``'s
inbound axons, SynOps and SynMem reads like any other message.

Everything starts from one sparse matrix: the synapses of every (source neuron, partition).
The network's CSR gives it for explicit synapses (``_partition_counts``: one pass, a slot
per partition, no sorting); a structured convolution gives its rows from its kernel and
geometry (``ConvProjection.counts``), never listing its synapses. Two more numba passes
over its entries sum the per-partition loads (``_partition_loads``) and the message pairs
(``_remote_pairs``); on 262,144 neurons of 256 synapses each, the three take 2.9 s where
scipy's sorts and numpy's passes took 13.4 s.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numba
import numpy as np
import scipy.sparse as sp

from engine.errors import CapacityError
from engine.hardware import Hardware
from engine.mapping.resources import (
    CoreUse,
    memory_bytes,
    row_words,
    synmem_words,
    violations_by_population,
)
from engine.model.hypergraph import unique_partition_hedges
from engine.model.network import Network

__all__ = [
    "FIXED", "Messages", "PartitionGraph", "count_matrix", "partition_graph", "structured_counts",
]  # fmt: skip

FIXED = (
    1 << 20
)  # fixed-point units a message (``engine.evaluation.traffic`` keeps its loads in them)


@dataclass(frozen=True, eq=False)
class Messages:
    """The messages of a set of spikes: one per (spiking neuron, distinct destination
    partition other than its own), as the default traffic mode sends them."""

    neuron: np.ndarray  # the spiking neuron of each message
    src: np.ndarray  # its partition (-1: a spike source's, sent from the input port)
    dst: np.ndarray  # the destination partition
    synapses: np.ndarray  # the neuron's synapses in the destination partition (SynOps)
    words: np.ndarray  # the synaptic-memory words their reading takes (SynMem reads)

    @property
    def size(self) -> int:
        return int(self.neuron.size)

    def where(self, mask: np.ndarray) -> Messages:
        """The messages ``mask`` marks."""
        return Messages(self.neuron[mask], self.src[mask], self.dst[mask], self.synapses[mask],
                        self.words[mask])  # fmt: skip


@dataclass(frozen=True, eq=False)
class PartitionGraph:
    """Everything about a partition that does not depend on where its cores are placed."""

    n_parts: int
    population: np.ndarray  # majority population of each partition
    neurons: np.ndarray  # neurons per partition = DendOps per step
    synapses: np.ndarray  # stored inbound synapses
    axons: np.ndarray  # distinct inbound h-edges (axons)
    memory_bytes: np.ndarray  # core memory needed (synapses, neuron state, spike buffers)
    synops: np.ndarray  # expected SynOps per step
    synmem_reads: np.ndarray  # expected SynMem word reads per step
    pair_src: np.ndarray  # partition pairs that exchange messages (src != dst)
    pair_dst: np.ndarray
    pair_messages: np.ndarray  # expected messages per step
    remote_edge_weight: float  # Σ rate of neurons whose h-edge leaves their core
    # the input port's pairs: (spike source population, destination partition), messages/step
    input_population: np.ndarray
    input_dst: np.ndarray
    input_messages: np.ndarray
    network: Network = field(repr=False)
    assignment: np.ndarray = field(repr=False)
    # (neuron × partition) synapse counts of the structured projections (None: there are none)
    structured: sp.csr_matrix | None = field(default=None, repr=False)

    # ------------------------------------------------------------ resources
    @property
    def core_use(self) -> CoreUse:
        return CoreUse(self.neurons, self.synapses, self.axons, self.memory_bytes)

    def limit_violations(self, hardware: Hardware) -> list[str]:
        """Every per-core limit some partition breaks on ``hardware``, grouped per population."""
        return violations_by_population(
            self.core_use, hardware, self.population, self.network.population_names
        )

    # ------------------------------------------------------------ h-edges
    @cached_property
    def _hedges(self) -> tuple[sp.csr_matrix, np.ndarray, np.ndarray]:
        return unique_partition_hedges(
            self.network, self.assignment, self.n_parts, structured=self.structured
        )

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

    # ------------------------------------------------------------ messages
    @cached_property
    def pair_fixed(self) -> np.ndarray:
        """``pair_messages`` in the fixed-point units of ``engine.evaluation.traffic``."""
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

    @cached_property
    def input_fixed(self) -> np.ndarray:
        """``input_messages`` in the fixed-point units of ``engine.evaluation.traffic``."""
        return np.rint(self.input_messages * FIXED).astype(np.int64)

    @cached_property
    def routed_pairs(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(src, dst, fixed) of every pair whose messages the mesh carries: the pairs between
        partitions, then the input port's, whose source is id ``n_parts`` (on the hardware's
        input core: ``engine.evaluation.traffic.port_cores``)."""
        n_in = self.input_dst.size
        return (
            np.concatenate([self.pair_src, np.full(n_in, self.n_parts, dtype=np.int64)]),
            np.concatenate([self.pair_dst, self.input_dst]),
            np.concatenate([self.pair_fixed, self.input_fixed]),
        )

    @cached_property
    def routed_messages(self) -> np.ndarray:
        """Expected messages per step of each of ``routed_pairs``."""
        return np.concatenate([self.pair_messages, self.input_messages])

    @cached_property
    def routed_populations(self) -> tuple[np.ndarray, np.ndarray]:
        """(source, destination) population of each of ``routed_pairs`` (a spike source's
        for the input port's)."""
        return (
            np.concatenate([self.population[self.pair_src], self.input_population]),
            self.population[np.concatenate([self.pair_dst, self.input_dst])],
        )

    @property
    def connectivity(self) -> float:
        """SNN hypergraphs eq. 7, weighted (λ−1) connectivity: expected inter-core messages/step."""
        return float(self.pair_messages.sum())

    @cached_property
    def synaptic_reuse(self) -> float:
        """SNN hypergraphs eq. 14: mean over partitions of inbound synapses per distinct axon."""
        has = self.axons > 0
        return float((self.synapses[has] / self.axons[has]).mean()) if has.any() else 0.0

    @cached_property
    def pairs_of_part(self) -> tuple[np.ndarray, np.ndarray]:
        """CSR (indptr, ids into ``routed_pairs``) of the pairs each partition takes part in,
        with one more row for the input port (id ``n_parts``)."""
        src, dst, _ = self.routed_pairs
        ends = np.concatenate([src, dst])
        order = np.argsort(ends, kind="stable")
        counts = np.bincount(ends, minlength=self.n_parts + 1)
        indptr = np.concatenate([[0], np.cumsum(counts)])
        return indptr.astype(np.int64), np.tile(np.arange(src.size, dtype=np.int64), 2)[order]

    def messages(self, model, spikes: np.ndarray | None = None, *, local: bool = False) -> Messages:
        """The messages of the neurons ``spikes`` marks (every neuron when None).

        ``model``: the hardware's ``ModelConstants`` (the SynMem words per message).
        ``local``: keep each spike's work in its own partition too (``src == dst``): it
        crosses no link, but that core still does its SynOps and SynMem reads (the model's
        per-core counts include them; the simulated step serves them).
        """
        net, part = self.network, self.assignment
        rows = np.arange(net.n_neurons) if spikes is None else np.flatnonzero(spikes)
        counts = np.diff(net.indptr)[rows]
        starts = net.indptr[rows]
        flat = np.repeat(starts - np.concatenate([[0], np.cumsum(counts)[:-1]]), counts)
        syn = net.indices[flat + np.arange(flat.size)] if flat.size else flat
        indptr = np.concatenate([[0], np.cumsum(counts)])
        a = sp.csr_matrix(
            (np.ones(syn.size, dtype=np.int64), part[syn], indptr),
            shape=(rows.size, self.n_parts),
        )
        if self.structured is not None:
            a = (a + self.structured[rows]).tocsr()
        a.sum_duplicates()
        k = np.repeat(np.arange(rows.size), np.diff(a.indptr))
        dst = a.indices.astype(np.int64)
        neuron = rows[k]
        src = part[neuron].astype(np.int64)
        keep = np.ones(dst.size, dtype=bool) if local else dst != src
        neuron, src, dst, count = neuron[keep], src[keep], dst[keep], a.data[keep]
        wbits = np.asarray(net.weight_bits)[self.population[dst]]
        dense = np.asarray([e == "dense" for e in net.encoding])[self.population[dst]]
        words = synmem_words(count, self.neurons[dst], wbits, dense, model)
        return Messages(neuron, src, dst, count.astype(np.int64), np.asarray(words, np.int64))

    @cached_property
    def adjacency(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """CSR (indptr, other end, messages) of every pair seen from both of its ends."""
        n = self.n_parts
        ends = np.concatenate([self.pair_src, self.pair_dst])
        others = np.concatenate([self.pair_dst, self.pair_src])
        w = np.concatenate([self.pair_messages, self.pair_messages])
        order = np.argsort(ends, kind="stable")
        indptr = np.concatenate([[0], np.cumsum(np.bincount(ends, minlength=n))])
        return indptr.astype(np.int64), others[order].astype(np.int64), w[order].astype(np.float64)


def _majority(values: np.ndarray, groups: np.ndarray, n_groups: int, n_values: int) -> np.ndarray:
    counts = sp.coo_matrix(
        (np.ones(values.size), (groups, values)), shape=(n_groups, n_values)
    ).toarray()
    return counts.argmax(axis=1).astype(np.int32)


def structured_counts(network: Network, part: np.ndarray, n_parts: int) -> sp.csr_matrix | None:
    """(neuron × partition) synapse counts of ``network``'s structured projections under the
    neuron → partition map ``part`` (None if the network has none)."""
    if not network.projections:
        return None
    triples = []
    for p in network.projections:
        s, b, c = p.counts(part[network.members[p.target]])
        triples.append((network.members[p.source][s], b, c))
    return count_matrix(triples, network.n_neurons, n_parts)


def count_matrix(triples, n_neurons: int, n_parts: int) -> sp.csr_matrix:
    """The (neuron × partition) CSR of (neurons, partitions, synapses) triples."""
    rows, cols, data = (np.concatenate(v) for v in zip(*triples, strict=True))
    m = sp.csr_matrix((data, (rows, cols)), shape=(n_neurons, n_parts))
    m.sum_duplicates()
    return m


def partition_graph(network: Network, hardware: Hardware, partition) -> PartitionGraph:
    """The partition graph of ``partition`` (a ``Partition``) on ``hardware``, vectorized."""
    part = partition.assignment
    n, n_parts = network.n_neurons, partition.n_parts
    if part.shape[0] != n:
        raise CapacityError(
            f"the partition covers {part.shape[0]} neurons; network {network.name!r} has {n}"
        )
    if part.size and part.max() >= n_parts:  # the kernels index by partition unchecked
        raise CapacityError(
            f"the partition names partition {int(part.max())} of only {n_parts} (ids 0…P−1)"
        )
    on = network.on_cores
    if np.any((part >= 0) != on):
        k = int(np.flatnonzero((part >= 0) != on)[0])
        name = network.population_names[network.population[k]]
        raise CapacityError(
            f"neuron {k} (population {name!r}) "
            + ("is a spike source and runs on no core; its partition must be -1"
               if not on[k] else "runs on a core and needs a partition id, not -1")
        )  # fmt: skip
    rate = network.rate
    indptr, indices = network.indptr, network.indices
    # (source neuron, destination partition) -> synapse count, as CSR rows
    structured = structured_counts(network, part, n_parts)
    if structured is not None:
        a = sp.csr_matrix(
            (np.ones(indices.size, dtype=np.int64), part[indices], indptr), shape=(n, n_parts)
        )
        a = (a + structured).tocsr()
        a.sum_duplicates()
        a_ptr, dst = a.indptr.astype(np.int64), a.indices.astype(np.int32)
        count = a.data.astype(np.int32)
    else:
        a_ptr, dst, count = _partition_counts(indptr, indices, part, n_parts)

    placed = part >= 0
    neurons = np.bincount(part[placed], minlength=n_parts)
    population = _majority(network.population[placed], part[placed], n_parts, network.n_populations)
    model = hardware.model
    wbits = np.asarray(network.weight_bits)[population]
    dense = np.asarray([e == "dense" for e in network.encoding])[population]
    # what an axon reads in each partition: a dense one's whole row (row_words), a sparse
    # one's entries of entry_bits each (synmem_words, whose formulas the pass repeats)
    entry_bits = (wbits + model.sparse_index_bits).astype(np.int64)
    synapses, axons, synops, synmem_reads, has_remote = _partition_loads(
        part, a_ptr, dst, count, rate, n_parts, row_words(neurons, wbits, model).astype(np.int64),
        entry_bits, dense, model.synmem_word_bits,
    )  # fmt: skip

    # per (source population, destination partition): the spike sources' rows only
    sources = np.flatnonzero(part < 0)
    lengths = a_ptr[sources + 1] - a_ptr[sources]
    run_start = np.cumsum(lengths) - lengths  # where each source's entries start in the run
    at = np.repeat(a_ptr[sources] - run_start, lengths) + np.arange(lengths.sum())
    port = sp.coo_matrix(
        (np.repeat(rate[sources], lengths),
         (np.repeat(network.population[sources], lengths), dst[at])),
        shape=(network.n_populations, n_parts),
    ).tocsr()  # fmt: skip
    port.sum_duplicates()
    port.eliminate_zeros()
    input_population = np.repeat(np.arange(network.n_populations), np.diff(port.indptr))
    members = np.argsort(part, kind="stable")[sources.size :]  # neurons grouped by partition
    first = np.concatenate([[0], np.cumsum(neurons)])  # where each partition's group starts
    pair_ptr, pair_dst, pair_messages = _remote_pairs(members, first, a_ptr, dst, rate, n_parts)
    pair_src = np.repeat(np.arange(n_parts, dtype=np.int64), np.diff(pair_ptr))

    return PartitionGraph(
        n_parts=n_parts,
        population=population,
        neurons=neurons,
        synapses=synapses,
        axons=axons,
        memory_bytes=memory_bytes(neurons, synapses, axons, wbits, dense, model),
        synops=synops,
        synmem_reads=synmem_reads,
        pair_src=pair_src,
        pair_dst=pair_dst,
        pair_messages=pair_messages,
        remote_edge_weight=float(rate[has_remote].sum()),
        input_population=input_population.astype(np.int64),
        input_dst=port.indices.astype(np.int64),
        input_messages=port.data.astype(np.float64),
        network=network,
        assignment=part,
        structured=structured,
    )


@numba.njit(cache=True, nogil=True)
def _partition_counts(indptr, indices, part, n_parts):
    """Per neuron (a CSR row of ``indptr``/``indices``), the partitions its synapses go
    to and how many go to each: CSR rows, partitions in the order first met. One pass
    with a slot per partition, O(synapses) — scipy's CSR build sorted every row to sum
    its duplicates (3.6 s of 14 on 262,144 neurons of 256 synapses)."""
    n = indptr.size - 1
    ptr = np.zeros(n + 1, dtype=np.int64)
    out_part = np.empty(indices.size, dtype=np.int32)
    out_count = np.empty(indices.size, dtype=np.int32)
    slot = np.full(n_parts, -1, dtype=np.int64)  # where p sits in the rows written so far
    size = 0
    for i in range(n):
        start = size
        for k in range(indptr[i], indptr[i + 1]):
            p = part[indices[k]]  # ≥ 0: a Network refuses synapses into spike sources
            j = slot[p]
            if j >= start:  # p is in this row already
                out_count[j] += 1
            else:
                slot[p] = size
                out_part[size] = p
                out_count[size] = 1
                size += 1
        ptr[i + 1] = size
    return ptr, out_part[:size].copy(), out_count[:size].copy()


@numba.njit(cache=True, nogil=True)
def _partition_loads(
    part, ptr, dst, count, rate, n_parts, row_words, entry_bits, dense, word
):  # fmt: skip
    """From the (neuron, partition) synapse counts (CSR rows ``ptr``/``dst``/``count``), per
    partition: inbound synapses, distinct inbound axons, expected SynOps and SynMem reads
    per step (an axon reads ``row_words`` of a dense partition, else its entries of
    ``entry_bits`` rounded up to ``word``-bit words); per neuron, whether it has a synapse
    outside its own partition (a spike source's are all outside). One pass, in the order
    of the entries (the sums as numpy's bincount over them makes)."""
    n = part.size
    synapses = np.zeros(n_parts, dtype=np.int64)
    axons = np.zeros(n_parts, dtype=np.int64)
    synops = np.zeros(n_parts, dtype=np.float64)
    reads = np.zeros(n_parts, dtype=np.float64)
    has_remote = np.zeros(n, dtype=np.bool_)
    for i in range(n):
        r = rate[i]
        for k in range(ptr[i], ptr[i + 1]):
            d = dst[k]
            c = np.int64(count[k])
            synapses[d] += c
            axons[d] += 1
            synops[d] += c * r
            if dense[d]:
                words = row_words[d]
            else:
                words = (c * entry_bits[d] + word - 1) // word
            reads[d] += words * r
            if d != part[i]:
                has_remote[i] = True
    return synapses, axons, synops, reads, has_remote


@numba.njit(cache=True, nogil=True)
def _remote_pairs(members, first, indptr, indices, rate, n_parts):
    """The message pairs as CSR over source partitions: per partition p, the partitions
    other than p that p's neurons have synapses in (ascending) and the summed rate of
    those neurons, each counted once per destination (``indptr``/``indices``: the
    (neuron × partition) synapse matrix, a row's partitions distinct; p's neurons are
    ``members[first[p]:first[p + 1]]``). Each group's destinations are summed in a dense
    row, O(entries + partitions²) at most and O(partitions) memory beside the result —
    scipy's COO → CSR sorts every row, which took 7 s of 17 on 262,144 neurons in 4006
    partitions."""
    acc = np.zeros(n_parts, dtype=np.float64)
    seen = np.full(n_parts, -1, dtype=np.int64)  # the last partition that summed into d
    touched = np.empty(n_parts, dtype=np.int64)
    ptr = np.zeros(n_parts + 1, dtype=np.int64)
    out_dst = np.empty(max(16, n_parts), dtype=np.int64)
    out_sum = np.empty(out_dst.size, dtype=np.float64)
    size = 0
    for p in range(n_parts):
        n_touched = 0
        for j in range(first[p], first[p + 1]):
            i = members[j]
            for k in range(indptr[i], indptr[i + 1]):
                d = indices[k]
                if d == p:
                    continue
                if seen[d] != p:
                    seen[d] = p
                    acc[d] = 0.0
                    touched[n_touched] = d
                    n_touched += 1
                acc[d] += rate[i]
        if size + n_touched > out_dst.size:
            grown = max(2 * out_dst.size, size + n_touched)
            out_dst = _grown(out_dst, size, grown)
            out_sum = _grown(out_sum, size, grown)
        if n_touched * 16 < n_parts:  # few: sort them
            row = np.sort(touched[:n_touched])
        else:  # many: read them off in order
            row = np.empty(n_touched, dtype=np.int64)
            t = 0
            for d in range(n_parts):
                if seen[d] == p:
                    row[t] = d
                    t += 1
        for t in range(n_touched):
            out_dst[size + t] = row[t]
            out_sum[size + t] = acc[row[t]]
        size += n_touched
        ptr[p + 1] = size
    return ptr, out_dst[:size].copy(), out_sum[:size].copy()


@numba.njit(cache=True, nogil=True)
def _grown(a, used, size):
    out = np.empty(size, dtype=a.dtype)
    out[:used] = a[:used]
    return out
