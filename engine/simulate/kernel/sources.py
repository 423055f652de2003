"""Packet generation: the synthetic sources (each terminal a Bernoulli process, drawn as
geometric gaps from a xoshiro256** stream, its destinations by the traffic pattern) and the
release of a mapping's packets by group and offset, into their terminals' queues."""

from __future__ import annotations

import math

import numba
import numpy as np
from numba.cpython.unsafe.numbers import trailing_zeros

from engine.hardware.routing import KERNEL_EITHER
from engine.heap import pop, update
from engine.simulate.kernel.base import _ix

# isort: off
from engine.simulate.records import (C_GCAL_N, C_GEN_P, C_GHEAP_N, C_NFREE, C_NPK, C_NSRC,
    C_OPEN_GROUP, C_REL_PTR, C_TRACK, C_TRACK_ID, C_TRACK_K, GCAL, G_DONE, G_LEFT, G_OPEN,
    ND_ACTIVE, ND_CREATED, ND_QHEAD, ND_QTAIL, NEVER, N_PK, PK_ATIME, PK_CTIME, PK_DONE, PK_GROUP,
    PK_HI, PK_HOPS, PK_ID, PK_ITIME, PK_LO, PK_MEAS, PK_NEXT, PK_PARENT, PK_ROUTE, PK_SIZE, PK_SRC,
)  # fmt: skip
# isort: on


# ------------------------------------------------------------------ random numbers
@numba.njit(cache=True, nogil=True, forceinline=True, error_model="numpy")
def _rotl(x, k):
    return (x << np.uint64(k)) | (x >> np.uint64(64 - k))


@numba.njit(cache=True, nogil=True, _nrt=False, error_model="numpy")
def _uniform(s):
    """xoshiro256** on a uint64[4] state: a float in [0, 1) with 53 random bits."""
    result = _rotl(s[1] * np.uint64(5), 7) * np.uint64(9)
    t = s[1] << np.uint64(17)
    s[2] ^= s[0]
    s[3] ^= s[1]
    s[1] ^= s[2]
    s[0] ^= s[3]
    s[2] ^= t
    s[3] = _rotl(s[3], 45)
    return (result >> np.uint64(11)) * (1.0 / 9007199254740992.0)


def rng_seed(seed: int) -> np.ndarray:
    """A xoshiro256** state from a seed (splitmix64, as its authors recommend)."""
    out = np.empty(4, dtype=np.uint64)
    x = int(seed) & 0xFFFFFFFFFFFFFFFF
    mask = 0xFFFFFFFFFFFFFFFF
    for i in range(4):
        x = (x + 0x9E3779B97F4A7C15) & mask
        z = x
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & mask
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask
        out[i] = z ^ (z >> 31)
    return out


@numba.njit(cache=True, nogil=True, _nrt=False, error_model="numpy")
def _gap(rng, p, log_q):
    """Cycles until the next success of a Bernoulli(p) process, counting this one (≥ 0);
    ``log_q`` is log(1 − p)."""
    if p >= 1.0:
        return 0
    u = _uniform(rng)
    return np.int64(math.floor(math.log(1.0 - u) / log_q))


# ------------------------------------------------------------------ terminals
@numba.njit(cache=True, nogil=True, forceinline=True, error_model="numpy")
def _enqueue(cfg, nd, pk, src_list, ctr, n, p):
    nb = n * cfg.nds
    pk[_ix(p * N_PK + PK_NEXT)] = -1
    if nd[_ix(nb + ND_QTAIL)] < 0:
        nd[_ix(nb + ND_QHEAD)] = p
    else:
        pk[_ix(nd[_ix(nb + ND_QTAIL)] * N_PK + PK_NEXT)] = p
    nd[_ix(nb + ND_QTAIL)] = p
    if nd[_ix(nb + ND_ACTIVE)] == 0:  # the terminal joins the list of those with a queue
        nd[_ix(nb + ND_ACTIVE)] = 1
        src_list[_ix(ctr[C_NSRC])] = n
        ctr[C_NSRC] += 1


@numba.njit(cache=True, nogil=True, _nrt=False, error_model="numpy")
def _pattern_dest(cfg, src, fraction, n):
    """The destination of a synthetic packet of terminal n (``patterns.Pattern``)."""
    perm, row_ptr, dest_tab, cum, rng = src.perm, src.row_ptr, src.dest_tab, src.cum, src.rng
    kind = cfg.pattern
    n_nodes = cfg.nodes
    if kind == 0:
        return np.int64(_uniform(rng) * n_nodes)
    if kind == 1:
        return perm[_ix(n)]
    if fraction < 1.0 and _uniform(rng) >= fraction:
        return np.int64(_uniform(rng) * n_nodes)
    row = 0 if cfg.shared else n
    lo, hi = row_ptr[_ix(row)], row_ptr[_ix(row + 1)]
    x = _uniform(rng)
    for k in range(lo, hi):
        if x < cum[_ix(k)]:
            return dest_tab[_ix(k)]
    return dest_tab[_ix(hi - 1)]


@numba.njit(cache=True, nogil=True, forceinline=True, error_model="numpy")
def _next_packet_at(gcal, gheap, gpri, gpos, ctr, t, n, when):
    """Terminal n's next packet comes at cycle ``when`` (≥ t)."""
    if when - t < GCAL:
        gcal[_ix(when & (GCAL - 1)), _ix(n >> 6)] |= np.int64(1) << (n & 63)
        ctr[C_GCAL_N] += 1
    else:
        ctr[C_GHEAP_N] = update(gheap, gpri, gpos, ctr[C_GHEAP_N], n, -float(when))


@numba.njit(cache=True, nogil=True, _nrt=False, error_model="numpy")
def _generate(cfg, sim, src, t, inject_p, size, fraction, measured):
    """New synthetic packets of cycle t (each terminal a Bernoulli(inject_p) process), the
    terminals in the order of their ids; each in a free record (``cfg.pool``) or the next one."""
    nd, pk, dest, pk_free, ctr = sim.nd, sim.pk, sim.dest, sim.free, sim.ctr
    gheap, gpri, gpos, gcal, rng = src.gheap, src.gpri, src.gpos, src.gcal, src.rng
    n_nodes = cfg.nodes
    log_q = math.log(1.0 - inject_p) if inject_p < 1.0 else 0.0
    if ctr[C_GEN_P] != np.int64(inject_p * 1e15):  # a new rate: draw every first arrival
        ctr[C_GEN_P] = np.int64(inject_p * 1e15)
        ctr[C_GHEAP_N] = 0
        for n in range(n_nodes):
            gpos[_ix(n)] = -1
        gcal[:] = 0
        ctr[C_GCAL_N] = 0
        if inject_p > 0.0:
            for n in range(n_nodes):
                _next_packet_at(gcal, gheap, gpri, gpos, ctr, t, n,
                                t + _gap(rng, inject_p, log_q))  # fmt: skip
    s = t & (GCAL - 1)
    while ctr[C_GHEAP_N] > 0 and -gpri[_ix(gheap[0])] <= t:  # due now, from the heap
        n = gheap[0]
        ctr[C_GHEAP_N] = pop(gheap, gpri, gpos, ctr[C_GHEAP_N])
        gcal[_ix(s), _ix(n >> 6)] |= np.int64(1) << (n & 63)
        ctr[C_GCAL_N] += 1
    for w in range(gcal.shape[1]):
        while gcal[_ix(s), _ix(w)] != 0:
            bits = gcal[_ix(s), _ix(w)]
            n = w * 64 + trailing_zeros(bits)
            gcal[_ix(s), _ix(w)] = bits & (bits - 1)
            ctr[C_GCAL_N] -= 1
            d = _pattern_dest(cfg, src, fraction, n)
            number = ctr[C_NPK]
            ctr[C_NPK] += 1
            p = number
            if cfg.pool:
                ctr[C_NFREE] -= 1
                p = pk_free[_ix(ctr[C_NFREE])]
                if number == ctr[C_TRACK_ID]:
                    ctr[C_TRACK] = p
                    ctr[C_TRACK_K] = p
            dest[_ix(p)] = d  # one destination: the range [p, p + 1)
            q = p * N_PK
            pk[_ix(q + PK_ID)] = number
            pk[_ix(q + PK_SRC)] = n
            pk[_ix(q + PK_LO)] = p
            pk[_ix(q + PK_HI)] = p + 1
            pk[_ix(q + PK_SIZE)] = size
            pk[_ix(q + PK_CTIME)] = t
            pk[_ix(q + PK_ITIME)] = -1
            pk[_ix(q + PK_ATIME)] = -1
            pk[_ix(q + PK_HOPS)] = 0
            pk[_ix(q + PK_MEAS)] = measured
            pk[_ix(q + PK_DONE)] = -1
            pk[_ix(q + PK_PARENT)] = p
            pk[_ix(q + PK_GROUP)] = -1
            # its order: the routing's, or either, equally likely (drawn after its destination)
            route = cfg.routing
            if route == KERNEL_EITHER:
                route = np.int64(_uniform(rng) < 0.5)
            pk[_ix(q + PK_ROUTE)] = route
            _enqueue(cfg, nd, pk, src.src_list, ctr, n, p)
            nd[_ix(n * cfg.nds + ND_CREATED)] += 1
            _next_packet_at(gcal, gheap, gpri, gpos, ctr, t, n,
                            t + 1 + _gap(rng, inject_p, log_q))  # fmt: skip


@numba.njit(cache=True, nogil=True, _nrt=False, error_model="numpy")
def _release(cfg, sim, src, t):
    """Put a mapping's packets whose time has come into their sources' queues; returns the
    cycle of the next release (NEVER: none known yet).

    Packets come in groups (layers), in ``rel_order``; group g opens at ``grp[G_OPEN, g]``
    (set beforehand, or, when it is -1, once group g − 1 is wholly processed) and each of its
    packets is released ``rel_off`` cycles after that.
    """
    nd, pk, grp, ctr = sim.nd, sim.pk, sim.grp, sim.ctr
    rel_order, rel_off, grp_ptr = src.rel_order, src.rel_off, src.grp_ptr
    n_groups = grp_ptr.size - 1
    g = ctr[C_OPEN_GROUP]
    while g < n_groups:
        if grp[G_OPEN, _ix(g)] < 0:
            if grp[G_LEFT, _ix(g - 1)] > 0:
                return NEVER
            prev = grp[G_DONE, _ix(g - 1)]
            grp[G_OPEN, _ix(g)] = (
                prev if prev > grp[G_OPEN, _ix(g - 1)] else grp[G_OPEN, _ix(g - 1)]
            )
        base = grp[G_OPEN, _ix(g)]
        while ctr[C_REL_PTR] < grp_ptr[_ix(g + 1)]:
            j = ctr[C_REL_PTR]
            when = base + rel_off[_ix(j)]
            if when > t:
                return when
            p = rel_order[_ix(j)]
            pk[_ix(p * N_PK + PK_CTIME)] = when
            _enqueue(cfg, nd, pk, src.src_list, ctr, pk[_ix(p * N_PK + PK_SRC)], p)
            ctr[C_REL_PTR] += 1
        g += 1
        ctr[C_OPEN_GROUP] = g
    return NEVER
