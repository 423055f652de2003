"""The network as a hypergraph: pins, incidence and h-edge hashing.

A network is a directed hypergraph with one h-edge per neuron, its axon, whose pins are
the neuron itself and its destinations (SNN hypergraphs §II-B). This module holds the views of
that hypergraph that several partitioners and the partition graph share, all in O(pins):

* ``distinct_rows`` drops repeated pins of a row; ``transpose`` turns the out-lists
  (row s = destinations of s) into in-lists (row d = the sources that reach d);
* ``Incidence`` / ``incidence`` bundle both for a network, with each neuron's inbound
  synapse count;
* ``unique_partition_hedges`` collapses the h-edges of a partitioned network into its
  distinct partition-level h-edges {ρ(s)} ∪ ρ(D) by hashing each one's partition set.
"""

from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np
import scipy.sparse as sp

from engine.model.network import Network

__all__ = [
    "Incidence", "distinct_row_counts", "distinct_rows", "incidence", "transpose",
    "unique_partition_hedges",
]  # fmt: skip


def distinct_rows(indptr: np.ndarray, indices: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """CSR with repeated entries of a row dropped (first occurrence kept), in O(nnz)."""
    ptr, idx, _ = _distinct_rows(_ints(indptr), _ints(indices), False)
    return ptr, idx


def distinct_row_counts(indptr: np.ndarray, indices: np.ndarray):
    """``distinct_rows`` and how often each kept entry occurs in its row: (ptr, idx, count)."""
    return _distinct_rows(_ints(indptr), _ints(indices), True)


def _ints(a) -> np.ndarray:
    """An index array as int32 or int64, as it comes (a Network's CSR targets are int32:
    widening MobileNet's 577M would take 4.6 GB more), other integer types as int64."""
    a = np.asarray(a)
    return a if a.dtype in (np.int32, np.int64) else a.astype(np.int64)


def transpose(
    indptr: np.ndarray, indices: np.ndarray, n: int, dtype=np.int64
) -> tuple[np.ndarray, np.ndarray]:
    """CSR of the columns: row d = the rows holding an entry d, ascending (counting sort).
    ``dtype`` is the integer type of the indices, both ways (int32 halves the memory of
    a large hypergraph; the row pointers stay int64)."""
    return _transpose(np.asarray(indptr, dtype=np.int64), np.asarray(indices, dtype=dtype), n)


@dataclass(frozen=True, eq=False)
class Incidence:
    """Both directions of a network's hypergraph, each pin listed once.

    ``out_ptr/out_idx``: the distinct destinations of every neuron (its h-edge);
    ``in_ptr/in_idx``: the distinct sources of every neuron (its inbound axons),
    ascending; ``synapses``: inbound synapses of every neuron, repeats counted.
    """

    out_ptr: np.ndarray
    out_idx: np.ndarray
    in_ptr: np.ndarray
    in_idx: np.ndarray
    synapses: np.ndarray

    @property
    def axons(self) -> np.ndarray:
        """Distinct inbound axons of every neuron."""
        return np.diff(self.in_ptr)


def incidence(network: Network) -> Incidence:
    """The ``Incidence`` of a network, in O(synapses) (structured convolutions expanded)."""
    network = network.explicit(why="a neuron-level partitioner")
    out_ptr, out_idx = distinct_rows(network.indptr, network.indices)
    in_ptr, in_idx = transpose(out_ptr, out_idx, network.n_neurons, dtype=out_idx.dtype)
    synapses = np.bincount(network.indices, minlength=network.n_neurons).astype(np.int64)
    return Incidence(out_ptr, out_idx, in_ptr, in_idx, synapses)


def unique_partition_hedges(
    network: Network, assignment: np.ndarray, n_parts: int, structured: sp.csr_matrix | None = None
):
    """Distinct partition-level h-edges {ρ(s)} ∪ ρ(D) of the neurons that have synapses.

    Returns ``(sets, counts, weights)``: one row of ``sets`` (CSR, values 1) per distinct
    partition set, how many neurons share it, and the sum of their spike rates (w_P).
    A spike source's set is its destinations' partitions alone. A set is hashed by two sums
    of random 64-bit keys (exact modulo 2**64) and its size. ``structured``: the
    (neuron × partition) synapse counts of the network's structured projections.
    """
    n = network.n_neurons
    a = sp.csr_matrix(
        (np.ones(network.n_explicit, dtype=bool), assignment[network.indices], network.indptr),
        shape=(n, n_parts),
    )  # boolean throughout: summing repeated pins as small integers could wrap to 0
    if structured is not None:
        a = (a + structured.astype(bool)).tocsr()
    with_out = np.flatnonzero(np.diff(a.indptr) > 0)
    placed = with_out[assignment[with_out] >= 0]  # a spike source's h-edge has no own core
    own = sp.csr_matrix(
        (np.ones(placed.size, dtype=bool), (placed, assignment[placed])), shape=(n, n_parts)
    )
    b = (a + own)[with_out]
    b.sum_duplicates()
    b.sort_indices()
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


@numba.njit(cache=True, nogil=True)
def _distinct_rows(indptr, indices, counted):
    n_rows = indptr.size - 1
    n_cols = indices.max() + 1 if indices.size else 0
    stamp = np.full(n_cols, -1, dtype=np.int64)
    slot = np.empty(n_cols if counted else 0, dtype=np.int64)  # where column c's entry is
    out_ptr = np.zeros(n_rows + 1, dtype=np.int64)
    out_idx = np.empty(indices.size, dtype=indices.dtype)  # int32 for a Network's CSR
    count = np.zeros(indices.size if counted else 0, dtype=np.int64)
    t = 0
    for r in range(n_rows):
        for k in range(indptr[r], indptr[r + 1]):
            c = indices[k]
            if stamp[c] != r:
                stamp[c] = r
                out_idx[t] = c
                if counted:
                    slot[c] = t
                    count[t] = 1
                t += 1
            elif counted:
                count[slot[c]] += 1
        out_ptr[r + 1] = t
    if t < out_idx.size:  # repeated pins dropped; else no copy (a conv net has none)
        out_idx = out_idx[:t].copy()
    return out_ptr, out_idx, count[:t].copy()


@numba.njit(cache=True, nogil=True)
def _transpose(indptr, indices, n):
    t_ptr = np.zeros(n + 1, dtype=np.int64)
    for k in range(indices.size):
        t_ptr[indices[k] + 1] += 1
    for c in range(n):
        t_ptr[c + 1] += t_ptr[c]
    fill = t_ptr[:-1].copy()
    t_idx = np.empty(indices.size, dtype=indices.dtype)
    for r in range(indptr.size - 1):
        for k in range(indptr[r], indptr[r + 1]):
            c = indices[k]
            t_idx[fill[c]] = r
            fill[c] += 1
    return t_ptr, t_idx
