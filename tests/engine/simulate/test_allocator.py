"""The kernel's allocators against a plain statement of iSLIP and separable round robin.

``kernel.allocators._match`` takes sparse requests and keeps its pointers in the router's state; it
has a path for one input or one output, a bit-mask path for ids below 63 and a pass over
the requests otherwise. Every path must give the matching, and move the pointers, as the
rules say.
"""

import numpy as np
import pytest

from engine.simulate.kernel.allocators import _match


def nearest(candidates, base, size):
    """The candidate nearest at or after ``base`` in round robin over ``size``."""
    return min(candidates, key=lambda c: (c - base) % size)


def reference(requests, n_in, n_out, grant_ptr, accept_ptr, iters, alloc):
    """iSLIP (alloc 0) or separable input-first round robin (alloc 1), pointers updated
    in place; returns {input: output}."""
    match_in, match_out = {}, {}
    if alloc == 1:
        picks = {}
        for a in sorted({a for a, _ in requests}):
            picks[a] = nearest([b for x, b in requests if x == a], accept_ptr[a], n_out)
        for b in sorted(set(picks.values())):
            a = nearest([x for x, y in picks.items() if y == b], grant_ptr[b], n_in)
            match_in[a], match_out[b] = b, a
            grant_ptr[b], accept_ptr[a] = (a + 1) % n_in, (b + 1) % n_out
        return match_in
    for it in range(iters):
        grants = {}
        for b in sorted({b for _, b in requests} - set(match_out)):
            free = [a for a, y in requests if y == b and a not in match_in]
            if free:
                grants[b] = nearest(free, grant_ptr[b], n_in)
        for a in sorted(set(grants.values())):
            b = nearest([b for b, x in grants.items() if x == a], accept_ptr[a], n_out)
            match_in[a], match_out[b] = b, a
            if it == 0:
                grant_ptr[b], accept_ptr[a] = (a + 1) % n_in, (b + 1) % n_out
    return match_in


@pytest.mark.parametrize("alloc", [0, 1])
@pytest.mark.parametrize("iters", [1, 2, 3])
@pytest.mark.parametrize("n_in, n_out", [(10, 10), (62, 40), (5, 5), (80, 70), (128, 16)])
def test_match_follows_the_allocator_rules(alloc, iters, n_in, n_out):
    rng = np.random.default_rng(n_in * 1000 + n_out * 10 + iters + alloc)
    st = np.zeros(n_out + n_in, dtype=np.int64)  # grant pointers, then accept pointers
    grant_ptr, accept_ptr = [0] * n_out, [0] * n_in
    size = 4 * (n_in + n_out)
    req_in, req_out = np.zeros(size, np.int64), np.zeros(size, np.int64)
    m_in, m_out = np.full(n_in, -1, np.int64), np.full(n_out, -1, np.int64)
    cand = np.zeros(size, np.int64)
    for _ in range(60):  # the pointers carry over from round to round, as in a router
        k = int(rng.integers(1, min(n_in * n_out, 3 * min(n_in, n_out)) + 1))
        pairs = sorted({(int(rng.integers(n_in)), int(rng.integers(n_out))) for _ in range(k)})
        req_in[: len(pairs)] = [a for a, _ in pairs]
        req_out[: len(pairs)] = [b for _, b in pairs]
        _match(req_in, req_out, len(pairs), n_in, n_out, st, 0, 1, n_out, 1, iters, alloc,
           m_in, m_out, cand)  # fmt: skip
        want = reference(pairs, n_in, n_out, grant_ptr, accept_ptr, iters, alloc)
        got = {a: int(m_in[a]) for a in {a for a, _ in pairs} if m_in[a] >= 0}
        assert got == want
        assert {b: int(m_out[b]) for b in want.values()} == {b: a for a, b in want.items()}
        assert st[:n_out].tolist() == grant_ptr and st[n_out:].tolist() == accept_ptr
