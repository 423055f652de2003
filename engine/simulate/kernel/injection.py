"""Injection: each terminal with a packet queued sends one flit per cycle into its router,
taking a free VC round robin for each packet (as BookSim2's traffic manager does), while it
has a credit for it."""

from __future__ import annotations

import numba

from engine.simulate.kernel.base import _ix, _next, _schedule
from engine.simulate.kernel.links import _lq_push, _put

# isort: off
from engine.simulate.records import (CQ_T, CQ_V, C_INFLIGHT, C_NSRC, C_WINDOW, FLIT, ND_ACTIVE,
    ND_CQ_H, ND_CQ_N, ND_LAST, ND_QHEAD, ND_QTAIL, ND_SENT, ND_VC, NS_INJ_LAT, NS_PORT,
    NS_ROUTER, NV_CRED, NV_OWNER, N_CQ, N_NS, N_NV, N_PK, PK_CTIME, PK_ITIME, PK_LO, PK_NEXT,
    PK_SIZE,
)  # fmt: skip
# isort: on


@numba.njit(cache=True, nogil=True, _nrt=False, error_model="numpy")
def _inject(cfg, net, sim, trace, dw, src_list, t):
    """Every terminal with a queue sends one flit into its router, if it has a credit;
    returns the flits sent."""
    ns, st, nd, pk, dest, ctr = net.ns, sim.st, sim.nd, sim.pk, sim.dest, sim.ctr
    link_flits, win_link = trace.link_flits, trace.win_link
    V = cfg.v  # noqa: N806
    n_r = cfg.w * cfg.h  # one mesh's grid: a core's link into its router is 4·R + n
    qc = cfg.qc
    o_nv, o_ncq = cfg.onv, cfg.oncq
    win = ctr[C_WINDOW]
    moved = 0
    j = 0
    while j < ctr[C_NSRC]:
        n = src_list[_ix(j)]
        nb = n * cfg.nds
        while nd[_ix(nb + ND_CQ_N)] > 0:
            h = nd[_ix(nb + ND_CQ_H)]
            e = nb + o_ncq + h * N_CQ
            if nd[_ix(e + CQ_T)] > t:
                break
            nd[_ix(nb + o_nv + nd[_ix(e + CQ_V)] * N_NV + NV_CRED)] += 1
            h += 1
            nd[_ix(nb + ND_CQ_H)] = 0 if h == qc else h
            nd[_ix(nb + ND_CQ_N)] -= 1
        p = nd[_ix(nb + ND_QHEAD)]
        if p < 0:  # its queue is empty: it leaves the list
            nd[_ix(nb + ND_ACTIVE)] = 0
            ctr[C_NSRC] -= 1
            src_list[_ix(j)] = src_list[_ix(ctr[C_NSRC])]
            continue
        j += 1
        if pk[_ix(p * N_PK + PK_CTIME)] > t:
            continue
        k = nd[_ix(nb + ND_SENT)]
        if k == 0:  # a head: take a free VC, round robin after the last one used
            c = -1
            cc = nd[_ix(nb + ND_LAST)]
            for _ in range(V):
                cc = _next(cc, V)
                cb = nb + o_nv + cc * N_NV
                if nd[_ix(cb + NV_OWNER)] == 0 and nd[_ix(cb + NV_CRED)] > 0:
                    c = cc
                    break
            if c < 0:
                continue
            nd[_ix(nb + o_nv + c * N_NV + NV_OWNER)] = 1
            nd[_ix(nb + ND_LAST)] = c
            nd[_ix(nb + ND_VC)] = c
            pk[_ix(p * N_PK + PK_ITIME)] = t
        c = nd[_ix(nb + ND_VC)]
        cb = nb + o_nv + c * N_NV
        if nd[_ix(cb + NV_CRED)] <= 0:
            continue
        nd[_ix(cb + NV_CRED)] -= 1
        r = ns[_ix(n * N_NS + NS_ROUTER)]
        arrive = t + ns[_ix(n * N_NS + NS_INJ_LAT)] + 1
        if cfg.unicast:
            when = _put(cfg, ns, st, pk, dest, ctr, r, ns[_ix(n * N_NS + NS_PORT)], c,
                        p * FLIT + k,
                        dest[_ix(pk[_ix(p * N_PK + PK_LO)])], arrive)  # fmt: skip
        else:
            _lq_push(cfg, st, r, ns[_ix(n * N_NS + NS_PORT)], p * FLIT + k, c, arrive)
            when = arrive
        _schedule(dw, ctr, r, when)  # (NEVER: no-op)
        ctr[C_INFLIGHT] += 1
        lid = 4 * n_r + n
        link_flits[_ix(lid)] += 1
        if win >= 0:
            win_link[_ix(win), _ix(lid)] += 1
        moved += 1
        if k + 1 == pk[_ix(p * N_PK + PK_SIZE)]:
            nd[_ix(nb + ND_SENT)] = 0
            nd[_ix(cb + NV_OWNER)] = 0
            nd[_ix(nb + ND_QHEAD)] = pk[_ix(p * N_PK + PK_NEXT)]
            if nd[_ix(nb + ND_QHEAD)] < 0:
                nd[_ix(nb + ND_QTAIL)] = -1
        else:
            nd[_ix(nb + ND_SENT)] = k + 1
    return moved
