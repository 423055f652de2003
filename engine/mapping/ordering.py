"""Node orderings of SNN hypergraphs: the greedy order of Alg. 2 and Kahn's topological order.

Both work on any weighted digraph given as CSR (row = a source, its entries = its
destinations): the neuron-level network, with one weight per source (its spike rate),
for the sequential partitioner; or the partition graph, with one weight per edge (the
messages of a pair), for the placers (``partition_order``).
"""

from __future__ import annotations

import numba
import numpy as np

from engine.heap import pop, push, sift_up

__all__ = ["greedy_order", "kahn_order", "partition_order"]

_NO_EDGE_WEIGHTS = np.ones(0, dtype=np.float64)


def greedy_order(indptr, indices, weights, n: int, *, edge_weights=None) -> np.ndarray:
    """SNN hypergraphs Alg. 2: repeatedly take the node most connected to those already taken.

    Taking node ``v`` adds the weight of each edge ``v → m`` to ``m``'s priority: the
    weight is ``weights[v]`` (one per source), times ``edge_weights[k]`` when given (one
    per edge); edges of weight ≤ 0 add nothing. Starts from the nodes with the fewest
    inbound edges; when the addressable priority queue empties, continues with the
    unvisited node of fewest inbound edges. Ties go to the lower node id. O(e·d·log n).
    """
    indices = np.asarray(indices, dtype=np.int64)
    in_count = np.bincount(indices, minlength=n)
    by_in = np.argsort(in_count, kind="stable").astype(np.int64)
    edge_w = (
        _NO_EDGE_WEIGHTS if edge_weights is None else np.asarray(edge_weights, dtype=np.float64)
    )
    return _greedy_order(
        np.asarray(indptr, dtype=np.int64),
        indices,
        np.asarray(weights, dtype=np.float64),
        edge_w,
        in_count.astype(np.int64),
        by_in,
    )


@numba.njit(cache=True, nogil=True)
def _greedy_order(indptr, indices, weights, edge_w, in_count, by_in):
    n = in_count.size
    heap = np.empty(n, dtype=np.int64)  # max-heap of nodes by (priority, -node)
    pri = np.zeros(n, dtype=np.float64)
    pos = np.full(n, -1, dtype=np.int64)
    visited = np.zeros(n, dtype=np.bool_)
    size = 0
    if n == 0:
        return np.empty(0, dtype=np.int64)
    per_edge = edge_w.size > 0
    least = in_count.min()
    for v in by_in:
        if in_count[v] != least:
            break
        pri[v] = np.inf
        size = push(heap, pri, pos, size, v)
    out = np.empty(n, dtype=np.int64)
    ptr = 0
    for t in range(n):
        if size > 0:
            v = heap[0]
            size = pop(heap, pri, pos, size)
        else:
            while visited[by_in[ptr]]:
                ptr += 1
            v = by_in[ptr]
        visited[v] = True
        out[t] = v
        w = weights[v]
        if w <= 0:
            continue
        for k in range(indptr[v], indptr[v + 1]):
            m = indices[k]
            if visited[m]:
                continue
            wk = w * edge_w[k] if per_edge else w
            if wk <= 0:
                continue
            pri[m] += wk
            if pos[m] < 0:
                size = push(heap, pri, pos, size, m)
            else:
                sift_up(heap, pri, pos, pos[m])
    return out


def kahn_order(src: np.ndarray, dst: np.ndarray, weight: np.ndarray, n: int) -> np.ndarray | None:
    """Topological order of a weighted digraph, or None if it has a cycle.

    The queue-based variant of SNN hypergraphs §IV-B1: roots first; each node's outgoing edges
    are processed in decreasing weight, and the nodes they free join the queue in that
    order. Self-loops are ignored. Runs over partitions (small), so plain Python.
    """
    keep = src != dst
    src, dst, weight = src[keep], dst[keep], weight[keep]
    order = np.lexsort((-weight, src))  # by source, heaviest first
    src, dst = src[order], dst[order]
    starts = np.searchsorted(src, np.arange(n + 1))
    indeg = np.bincount(dst, minlength=n)
    queue = [int(v) for v in np.flatnonzero(indeg == 0)]
    out = []
    head = 0
    while head < len(queue):
        v = queue[head]
        head += 1
        out.append(v)
        for d in dst[starts[v] : starts[v + 1]].tolist():
            indeg[d] -= 1
            if indeg[d] == 0:
                queue.append(d)
    return np.asarray(out, dtype=np.int64) if len(out) == n else None


def partition_order(graph) -> np.ndarray:
    """Kahn's topological order of the partition graph if acyclic, else Alg. 2's order."""
    n, src, dst, w = graph.n_parts, graph.pair_src, graph.pair_dst, graph.pair_messages
    order = kahn_order(src, dst, w, n)
    if order is not None:
        return order
    by_src = np.argsort(src, kind="stable")
    indptr = np.concatenate([[0], np.cumsum(np.bincount(src, minlength=n))])
    return greedy_order(indptr, dst[by_src], np.ones(n), n, edge_weights=w[by_src])
