"""Partition graphs of layered partitions, rebuilt from what a new core split changes.

A search over cores per population (Loihi 2 mapping ES's partitioning genotype) asks for
the partition graph of many core vectors that differ from each other in a layer or two. In
a layered partition a core holds neurons of one population, so everything splits into
*blocks*, one per population pair j → k with synapses:

* what the cores of ``k`` receive from ``j`` — per (source neuron, core of k) its synapses,
  and from those the cores' synapses, distinct axons, SynOps and SynMem reads — depends
  only on ``k``'s core count;
* the messages between the cores of ``j`` and those of ``k`` depend on both counts.

``LayeredGraphs.graph(cores)`` assembles the ``PartitionGraph`` from blocks kept (least
recently used first out) by those counts, computing only the blocks a changed count
touches. It gives what ``partition_graph(network, hardware, Partition.layered(network,
cores))`` gives — the same integers, and sums of rates equal up to their order of addition.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from engine.hardware import Hardware
from engine.mapping.assignment import Partition, population_splits, split_rank
from engine.mapping.partition_graph import PartitionGraph, count_matrix
from engine.mapping.resources import memory_bytes, synmem_words
from engine.model.hypergraph import distinct_row_counts
from engine.model.network import Network

__all__ = ["LayeredGraphs"]


@dataclass(frozen=True)
class _Inbound:
    """Block j → k at k's core count: per (source neuron of j, core of k) the synapses, and
    the per-core sums they make."""

    src: np.ndarray  # local index in j
    core: np.ndarray  # local core of k
    count: np.ndarray
    synapses: np.ndarray  # per core of k
    axons: np.ndarray
    synops: np.ndarray
    synmem_reads: np.ndarray
    messages: np.ndarray  # per core of k: Σ rate of the j neurons that reach it (the port's)


class LayeredGraphs:
    """Partition graphs of layered partitions of one network on one hardware (see module)."""

    def __init__(self, network: Network, hardware: Hardware, *, split=None, cache: int = 256):
        self.network, self.hardware = network, hardware
        self.split = population_splits(network, split)
        n_pop = network.n_populations
        self.sizes = network.population_sizes.astype(np.int64)
        self.rank = [split_rank(network, k, self.split[k]) for k in range(n_pop)]
        self.rates = [network.rate[m] for m in network.members]
        local = np.empty(network.n_neurons, dtype=np.int64)
        for m in network.members:
            local[m] = np.arange(m.size)
        src_pop = network.population[network.sources]
        dst_pop = network.population[network.indices]
        key = src_pop.astype(np.int64) * n_pop + dst_pop
        order = np.argsort(key, kind="stable")  # by pair, then source, as the CSR lists them
        bounds = np.searchsorted(key[order], np.arange(n_pop * n_pop + 1))
        self.explicit: dict[tuple[int, int], tuple[np.ndarray, np.ndarray]] = {}
        for pair in np.flatnonzero(np.diff(bounds)):
            j, k = divmod(int(pair), n_pop)
            sel = order[bounds[pair] : bounds[pair + 1]]
            s = local[network.sources[sel]]
            indptr = np.concatenate([[0], np.cumsum(np.bincount(s, minlength=self.sizes[j]))])
            self.explicit[(j, k)] = (indptr.astype(np.int64), local[network.indices[sel]])
        self.convolutions = {(p.source, p.target): p for p in network.projections}
        self.pairs = sorted(set(self.explicit) | set(self.convolutions))
        # neurons with synapses into another population: their h-edge leaves their core
        self.leaves = [np.zeros(n, dtype=bool) for n in self.sizes.tolist()]
        for j, k in self.pairs:
            if j != k or network.spike_source[j]:
                self.leaves[j] |= self._reaches_any(j, k)
        self._blocks: OrderedDict[tuple, object] = OrderedDict()
        self._cache = cache

    def _reaches_any(self, j: int, k: int) -> np.ndarray:
        if (j, k) in self.convolutions:
            s, _, _ = self.convolutions[(j, k)].counts(np.zeros(self.sizes[k], dtype=np.int64))
            out = np.zeros(self.sizes[j], dtype=bool)
            out[s] = True
            return out
        return np.diff(self.explicit[(j, k)][0]) > 0

    # ------------------------------------------------------------ cached blocks
    def _cached(self, key, make):
        block = self._blocks.get(key)
        if block is None:
            block = make()
            self._blocks[key] = block
            if len(self._blocks) > self._cache:
                self._blocks.popitem(last=False)
        else:
            self._blocks.move_to_end(key)
        return block

    def _neurons(self, k: int, c: int) -> np.ndarray:
        return np.bincount(np.arange(self.sizes[k]) * c // self.sizes[k], minlength=c)

    def _inbound(self, j: int, k: int, c: int) -> _Inbound:
        return self._cached(("in", j, k, c), lambda: self._make_inbound(j, k, c))

    def _make_inbound(self, j: int, k: int, c: int) -> _Inbound:
        core_of = self.rank[k] * c // self.sizes[k]
        if (j, k) in self.convolutions:
            s, b, n = self.convolutions[(j, k)].counts(core_of)
        else:
            indptr, dst = self.explicit[(j, k)]
            ptr, b, n = distinct_row_counts(indptr, core_of[dst])
            s = np.repeat(np.arange(ptr.size - 1), np.diff(ptr))
        s, b, n = s.astype(np.int64), b.astype(np.int64), n.astype(np.int64)
        net, model = self.network, self.hardware.model
        rate = self.rates[j][s]
        words = synmem_words(n, self._neurons(k, c)[b], net.weight_bits[k],
                             net.encoding[k] == "dense", model)  # fmt: skip
        return _Inbound(
            s, b, n,
            np.bincount(b, weights=n, minlength=c).astype(np.int64),
            np.bincount(b, minlength=c),
            np.bincount(b, weights=n * rate, minlength=c),
            np.bincount(b, weights=words * rate, minlength=c),
            np.bincount(b, weights=rate, minlength=c),
        )  # fmt: skip

    def _pairs(self, j: int, k: int, cj: int, ck: int) -> tuple[np.ndarray, ...]:
        """(core of j, core of k, messages) of block j → k: one message per spiking neuron
        of a j core per distinct k core it reaches (a core's own neurons excluded)."""

        def make():
            block = self._inbound(j, k, ck)
            a = self.rank[j][block.src] * cj // self.sizes[j]
            remote = (a != block.core) if j == k else np.ones(a.size, dtype=bool)
            m = np.bincount(
                (a * ck + block.core)[remote], weights=self.rates[j][block.src][remote],
                minlength=cj * ck,
            )  # fmt: skip
            nz = np.flatnonzero(m)
            own = np.zeros(self.sizes[j], dtype=bool)
            own[block.src[remote]] = True  # (recurrent blocks: neurons whose edge leaves)
            return nz // ck, nz % ck, m[nz], own

        return self._cached(("pairs", j, k, cj, ck), make)

    # ------------------------------------------------------------ the graph
    def graph(self, cores_per_population) -> PartitionGraph:
        return self.partition_and_graph(cores_per_population)[1]

    def partition_and_graph(self, cores_per_population) -> tuple[Partition, PartitionGraph]:
        """The layered ``Partition`` of these core counts and its ``PartitionGraph``."""
        net, hw = self.network, self.hardware
        partition = Partition.layered(net, cores_per_population, self.split)
        cores = np.asarray(partition.cores_per_population, dtype=np.int64)
        offset = np.concatenate([[0], np.cumsum(cores)[:-1]])
        n_parts = int(cores.sum())
        population = np.repeat(np.arange(net.n_populations), cores).astype(np.int32)
        neurons = np.concatenate(
            [self._neurons(k, c) for k, c in enumerate(cores.tolist()) if c] or [np.zeros(0)]
        ).astype(np.int64)
        synapses = np.zeros(n_parts, dtype=np.int64)
        axons = np.zeros(n_parts, dtype=np.int64)
        synops = np.zeros(n_parts)
        synmem = np.zeros(n_parts)
        pair_src, pair_dst, pair_msg = [], [], []
        in_pop, in_dst, in_msg = [], [], []
        leaves = [m.copy() for m in self.leaves]
        for j, k in self.pairs:
            cj, ck = int(cores[j]), int(cores[k])
            block = self._inbound(j, k, ck)
            span = slice(offset[k], offset[k] + ck)
            synapses[span] += block.synapses
            axons[span] += block.axons
            synops[span] += block.synops
            synmem[span] += block.synmem_reads
            if net.spike_source[j]:
                nz = np.flatnonzero(block.messages)
                in_pop.append(np.full(nz.size, j, dtype=np.int64))
                in_dst.append(offset[k] + nz)
                in_msg.append(block.messages[nz])
                continue
            a, b, m, own = self._pairs(j, k, cj, ck)
            pair_src.append(offset[j] + a)
            pair_dst.append(offset[k] + b)
            pair_msg.append(m)
            if j == k:
                leaves[j] |= own
        src, dst, msg = (_joined(v) for v in (pair_src, pair_dst, pair_msg))
        order = np.lexsort((dst, src))  # as partition_graph lists them: by source, then dest.
        src, dst, msg = src[order].astype(np.int64), dst[order].astype(np.int64), msg[order]
        ip, idst, imsg = (_joined(v) for v in (in_pop, in_dst, in_msg))
        order = np.lexsort((idst, ip))
        wbits = np.asarray(net.weight_bits)[population]
        dense = np.asarray([e == "dense" for e in net.encoding])[population]
        remote = sum(float(self.rates[j][leaves[j]].sum()) for j in range(net.n_populations))
        return partition, PartitionGraph(
            n_parts=n_parts,
            population=population,
            neurons=neurons,
            synapses=synapses,
            axons=axons,
            memory_bytes=memory_bytes(neurons, synapses, axons, wbits, dense, hw.model),
            synops=synops,
            synmem_reads=synmem,
            pair_src=src,
            pair_dst=dst,
            pair_messages=msg.astype(np.float64),
            remote_edge_weight=remote,
            input_population=ip[order].astype(np.int64),
            input_dst=idst[order].astype(np.int64),
            input_messages=imsg[order].astype(np.float64),
            network=net,
            assignment=partition.assignment,
            structured=self._structured(cores, offset, n_parts),
        )

    def _structured(self, cores, offset, n_parts) -> sp.csr_matrix | None:
        """The convolutions' (neuron × partition) synapses, as ``partition_graph`` keeps them
        for the graph's messages and h-edges."""
        if not self.convolutions:
            return None
        blocks = [(j, k, self._inbound(j, k, int(cores[k]))) for j, k in self.convolutions]
        triples = [(self.network.members[j][b.src], offset[k] + b.core, b.count)
                   for j, k, b in blocks]  # fmt: skip
        return count_matrix(triples, self.network.n_neurons, n_parts)


def _joined(parts: list) -> np.ndarray:
    return np.concatenate(parts) if parts else np.zeros(0)
