"""Buffers, queues and credits: a flit on its way into a router's input (the multicast
router's link queue, ``_lq_push``; the unicast router's buffer, ``_put``), a credit on its
way back (``_cq_push``: the multicast router's credit queue, the unicast router's output VC
ring, read by ``_credits``; a terminal's credit queue, ``_ncq_push``), and the credit return
of a freed buffer slot (``_free_slot``)."""

from __future__ import annotations

import numba
import numpy as np

from engine.simulate.kernel.base import _ix, _schedule
from engine.simulate.kernel.routing import _route_unicast
from engine.simulate.kernel.stats import _track_arrive

# isort: off
from engine.simulate.records import (CQ_T, CQ_V, C_INFLIGHT, C_TRACK, FLIT, LQ_F, LQ_T, LQ_V,
    M_BUSY, M_CQ, M_CWAIT, M_LQ, M_VCS, ND_CQ_H, ND_CQ_N, NEVER, NS_INJ_LAT, N_CQ, N_LQ, N_NS,
    N_OV, N_PT, N_T, N_VC, OV_CREDITS, OV_CR_H, OV_CR_N, PT_CQ_H, PT_CQ_N, PT_LQ_H, PT_LQ_N, T_LAT,
    T_NBR, T_OUT_NODE, VC_HEAD, VC_N, VC_STATE, V_ACTIVE,
)  # fmt: skip
# isort: on


# ------------------------------------------------------------------ queues
@numba.njit(cache=True, nogil=True, forceinline=True, error_model="numpy")
def _lq_push(cfg, st, r, i, f, v, t):
    """A flit for input port i of router r, arriving at cycle t."""
    ql = cfg.ql
    rb = r * cfg.rs
    pb = rb + cfg.opt + i * N_PT
    k = st[_ix(pb + PT_LQ_H)] + st[_ix(pb + PT_LQ_N)]
    if k >= ql:
        k -= ql
    e = rb + cfg.olq + (i * ql + k) * N_LQ
    st[_ix(e + LQ_F)] = f
    st[_ix(e + LQ_V)] = v
    st[_ix(e + LQ_T)] = t
    st[_ix(pb + PT_LQ_N)] += 1
    st[_ix(rb + cfg.omisc + M_LQ)] |= 1 << i


@numba.njit(cache=True, nogil=True, forceinline=True, error_model="numpy")
def _cq_push(cfg, st, r, o, v, t):
    """A credit for output VC (o, v) of router r, arriving at cycle t."""
    qc = cfg.qc
    rb = r * cfg.rs
    if cfg.unicast:  # into the output VC's ring (in order: they come from one place)
        D = cfg.d  # noqa: N806
        ov = o * cfg.v + v
        ob = rb + cfg.oov + ov * N_OV
        k = st[_ix(ob + OV_CR_H)] + st[_ix(ob + OV_CR_N)]
        st[_ix(rb + cfg.ocr + ov * D + (k - D if k >= D else k))] = t
        st[_ix(ob + OV_CR_N)] += 1
        return
    pb = rb + cfg.opt + o * N_PT
    k = st[_ix(pb + PT_CQ_H)] + st[_ix(pb + PT_CQ_N)]
    if k >= qc:
        k -= qc
    e = rb + cfg.ocq + (o * qc + k) * N_CQ
    st[_ix(e + CQ_V)] = v
    st[_ix(e + CQ_T)] = t
    st[_ix(pb + PT_CQ_N)] += 1
    st[_ix(rb + cfg.omisc + M_CQ)] |= 1 << o


@numba.njit(cache=True, nogil=True, forceinline=True, error_model="numpy")
def _ncq_push(cfg, nd, n, v, t):
    """A credit for VC v of terminal n, arriving at cycle t."""
    qc = cfg.qc
    nb = n * cfg.nds
    k = nd[_ix(nb + ND_CQ_H)] + nd[_ix(nb + ND_CQ_N)]
    if k >= qc:
        k -= qc
    e = nb + cfg.oncq + k * N_CQ
    nd[_ix(e + CQ_V)] = v
    nd[_ix(e + CQ_T)] = t
    nd[_ix(nb + ND_CQ_N)] += 1


@numba.njit(cache=True, nogil=True, forceinline=True, error_model="numpy")
def _next_credit(cfg, st, rb, o, v):
    """The cycle the next credit for output VC (o, v) of the router at ``rb`` comes back
    (``NEVER``: none is on its way)."""
    qc = cfg.qc
    pb = rb + cfg.opt + o * N_PT
    h = st[_ix(pb + PT_CQ_H)]
    for _ in range(st[_ix(pb + PT_CQ_N)]):
        e = rb + cfg.ocq + (o * qc + h) * N_CQ
        if st[_ix(e + CQ_V)] == v:
            return st[_ix(e + CQ_T)]
        h = 0 if h + 1 == qc else h + 1
    return NEVER


@numba.njit(cache=True, nogil=True, _nrt=False, forceinline=True, error_model="numpy")
def _put(cfg, ns, st, pk, dest, ctr, r, i, v, f, d, arrive):
    """The unicast kernel: flit f (bound for terminal d), sent to input VC (i, v) of router
    r, arrives at cycle ``arrive``. It goes straight into the VC's buffer with that cycle
    (nothing could read it earlier), and a head that reaches an idle VC is routed now, as
    the router would on its arrival. Returns the first cycle in which the flit may make r
    act (``NEVER``: it waits behind the flits of its VC, acted on once they have left)."""
    V, D = cfg.v, cfg.d  # noqa: N806
    rb = r * cfg.rs
    iv = i * V + v
    vb = rb + cfg.ovc + iv * N_VC
    n = st[_ix(vb + VC_N)]
    k = st[_ix(vb + VC_HEAD)] + n
    if k >= D:
        k -= D
    st[_ix(rb + cfg.obuf + iv * D + k)] = f
    st[_ix(rb + cfg.obat + iv * D + k)] = arrive
    st[_ix(vb + VC_N)] = n + 1
    if f == ctr[C_TRACK] * FLIT and f >= 0:  # the tracked packet's head: a hop
        _track_arrive(ctr, r, i, arrive)
    vcs = rb + cfg.omisc + M_VCS
    if (st[_ix(vcs)] >> iv) & 1:  # the VC is busy: the flit its packet sends next, or one
        if n == 0 and st[_ix(vb + VC_STATE)] == V_ACTIVE:  # behind others
            return arrive
        return NEVER
    st[_ix(vcs)] |= np.int64(1) << iv
    _route_unicast(cfg, ns, st, pk, dest, rb, iv, arrive, d)
    return arrive + cfg.rd


@numba.njit(cache=True, nogil=True, forceinline=True, error_model="numpy")
def _credits(st, o_ov, o_cr, ov, D, t):  # noqa: N803
    """The unicast kernel: output VC ``ov``'s credits at cycle t (at least: those back by
    then are taken from its ring when it has none left)."""
    ob = o_ov + ov * N_OV
    n = st[_ix(ob + OV_CR_N)]
    if n > 0 and st[_ix(ob + OV_CREDITS)] <= 0:  # (only whether there is one matters)
        h = st[_ix(ob + OV_CR_H)]
        while n > 0 and st[_ix(o_cr + ov * D + h)] <= t:
            st[_ix(ob + OV_CREDITS)] += 1
            h = 0 if h + 1 == D else h + 1
            n -= 1
        st[_ix(ob + OV_CR_H)] = h
        st[_ix(ob + OV_CR_N)] = n
    return st[_ix(ob + OV_CREDITS)]


@numba.njit(cache=True, nogil=True, forceinline=True, error_model="numpy")
def _credit_wakes(cfg, st, r, o, v):
    """Whether a credit for output VC (o, v) of router r makes it due when the credit comes:
    in the unicast router, when a VC waits for it (``M_CWAIT``: its output VC's bit); in the
    multicast router, when the router is busy (an idle one takes it at its next visit)."""
    misc = r * cfg.rs + cfg.omisc
    if cfg.unicast:
        return (st[_ix(misc + M_CWAIT)] >> (o * cfg.v + v)) & 1 == 1
    return st[_ix(misc + M_BUSY)] > 0


@numba.njit(cache=True, nogil=True, forceinline=True, error_model="numpy")
def _free_slot(cfg, net, sim, dw, vb, r, i, v, t):
    """The front flit of the VC at ``vb`` (input i, VC v of router r) has left on every
    branch: its buffer slot is free, and a credit goes back to the neighbour in direction i
    (for its output i ^ 1) or to the terminal of local port i (credit return)."""
    st, ctr, tp = sim.st, sim.ctr, net.tp
    P, D = cfg.p, cfg.d  # noqa: N806
    h = st[_ix(vb + VC_HEAD)] + 1
    st[_ix(vb + VC_HEAD)] = 0 if h == D else h
    st[_ix(vb + VC_N)] -= 1
    ctr[C_INFLIGHT] -= 1
    if i < 4:
        up = tp[_ix((r * P + i) * N_T + T_NBR)]
        when = t + tp[_ix((up * P + (i ^ 1)) * N_T + T_LAT)] + 1 + cfg.cd
        _cq_push(cfg, st, up, i ^ 1, v, when)
        if _credit_wakes(cfg, st, up, i ^ 1, v):
            _schedule(dw, ctr, up, when)
    else:
        n = tp[_ix((r * P + i) * N_T + T_OUT_NODE)]
        _ncq_push(cfg, sim.nd, n, v, t + net.ns[_ix(n * N_NS + NS_INJ_LAT)] + 1)
