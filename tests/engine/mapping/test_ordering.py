"""SNN hypergraphs node orderings: Alg. 2 (greedy) against a direct transcription; Kahn."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.mapping.ordering import greedy_order, kahn_order
from engine.model.hypergraph import transpose


def alg2_reference(indptr, indices, weights, n):
    """SNN hypergraphs Alg. 2 line by line (ties: lowest id), O(n²) — fine for small graphs."""
    inbound = np.bincount(indices, minlength=n)
    pq = np.zeros(n)
    pq[inbound == inbound.min()] = np.inf
    order, taken = [], np.zeros(n, bool)
    while len(order) < n:
        cand = np.flatnonzero(~taken & (pq > 0))
        if cand.size:
            best = cand[np.argmax(pq[cand])]  # argmax returns the first (lowest id) of ties
        else:
            rest = np.flatnonzero(~taken)
            best = rest[np.argmin(inbound[rest])]
        order.append(int(best))
        taken[best] = True
        if weights[best] > 0:
            for m in indices[indptr[best] : indptr[best + 1]]:
                if not taken[m]:
                    pq[m] += weights[best]
    return np.array(order)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 40))
def test_greedy_order_follows_alg2(seed, n):
    rng = np.random.default_rng(seed)
    counts = rng.integers(0, 5, n)
    indptr = np.concatenate([[0], np.cumsum(counts)])
    indices = rng.integers(0, n, int(indptr[-1]))
    weights = rng.choice([0.0, 0.25, 0.5, 1.0], n)  # repeated values exercise the ties
    got = greedy_order(indptr, indices, weights, n)
    assert sorted(got.tolist()) == list(range(n))
    np.testing.assert_array_equal(got, alg2_reference(indptr, indices, weights, n))


def test_greedy_order_walks_a_chain():
    n = 6  # 0 -> 1 -> 2 -> ... -> 5
    indptr = np.array([0, 1, 2, 3, 4, 5, 5])
    indices = np.array([1, 2, 3, 4, 5])
    assert greedy_order(indptr, indices, np.ones(n), n).tolist() == [0, 1, 2, 3, 4, 5]


def test_transpose_lists_sources_per_destination():
    indptr, indices = np.array([0, 2, 3, 3]), np.array([1, 2, 2])
    t_ptr, t_src = transpose(indptr, indices, 3)
    assert t_ptr.tolist() == [0, 0, 1, 3] and t_src.tolist() == [0, 0, 1]


def test_kahn_order_is_topological_and_prefers_heavy_edges():
    src = np.array([0, 0, 1, 2, 3])
    dst = np.array([1, 2, 3, 3, 4])
    w = np.array([1.0, 5.0, 1.0, 1.0, 1.0])
    order = kahn_order(src, dst, w, 5)
    assert order.tolist() == [0, 2, 1, 3, 4]  # 0's heavier edge frees 2 first
    pos = np.empty(5, int)
    pos[order] = np.arange(5)
    assert np.all(pos[src] < pos[dst])
    assert kahn_order(np.array([0, 1]), np.array([1, 0]), np.ones(2), 2) is None
    assert kahn_order(np.array([0]), np.array([0]), np.ones(1), 2).tolist() == [0, 1]
