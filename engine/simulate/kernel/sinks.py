"""The sinks: a flit reaching its terminal, a packet whole there served (at once, or by its
core's server packet after packet) and its record retired to the log (``cfg.pool``)."""

from __future__ import annotations

import numba

from engine.simulate.kernel.base import _ix, _schedule
from engine.simulate.kernel.links import _cq_push, _credit_wakes

# isort: off
from engine.simulate.records import (C_DELIVERED, C_LAST_DONE, C_LOG_N, C_MEASURE_FROM,
    C_MEASURE_TO, C_NFREE, C_SQN, C_TRACK, FLIT, G_DONE, G_LEFT, L_ATIME, L_CTIME, L_DST, L_HOPS,
    L_ID, L_ITIME, L_MEAS, L_ROUTE, L_SIZE, L_SRC, ND_ACC, ND_FREE, N_LOG, N_PK, N_SQ, N_T,
    PK_ATIME, PK_CTIME, PK_DONE, PK_GROUP, PK_HOPS, PK_ID, PK_ITIME, PK_LO, PK_MEAS, PK_PARENT,
    PK_ROUTE, PK_SIZE, PK_SRC, SQ_ARR, SQ_O, SQ_OV, SQ_P, SQ_R, T_LAT, T_OUT_NODE,
)  # fmt: skip
# isort: on


@numba.njit(cache=True, nogil=True, _nrt=False, error_model="numpy")
def _retire(sim, p):
    """Packet record p, whole at its terminal (sink mode 0, one mesh), goes to the log and
    back to the free records: nothing refers to it any more (its flits have left every
    buffer and queue). A free record is no packet: no root (``PK_PARENT`` -1), not created,
    not arrived, not measured, so the scans over every record (``latency_load``,
    ``measured_pending``) skip it."""
    pk, dest, pk_free, pk_log, ctr = sim.pk, sim.dest, sim.free, sim.log, sim.ctr
    q = p * N_PK
    e = ctr[C_LOG_N]
    cap = pk_log.size // N_LOG
    pk_log[_ix(L_ID * cap + e)] = pk[_ix(q + PK_ID)]
    pk_log[_ix(L_SRC * cap + e)] = pk[_ix(q + PK_SRC)]
    pk_log[_ix(L_DST * cap + e)] = dest[_ix(pk[_ix(q + PK_LO)])]
    pk_log[_ix(L_CTIME * cap + e)] = pk[_ix(q + PK_CTIME)]
    pk_log[_ix(L_ITIME * cap + e)] = pk[_ix(q + PK_ITIME)]
    pk_log[_ix(L_ATIME * cap + e)] = pk[_ix(q + PK_ATIME)]
    pk_log[_ix(L_HOPS * cap + e)] = pk[_ix(q + PK_HOPS)]
    pk_log[_ix(L_MEAS * cap + e)] = pk[_ix(q + PK_MEAS)]
    pk_log[_ix(L_SIZE * cap + e)] = pk[_ix(q + PK_SIZE)]
    pk_log[_ix(L_ROUTE * cap + e)] = pk[_ix(q + PK_ROUTE)]
    ctr[C_LOG_N] += 1
    pk[_ix(q + PK_PARENT)] = -1
    pk[_ix(q + PK_CTIME)] = -1
    pk[_ix(q + PK_ATIME)] = -1
    pk[_ix(q + PK_MEAS)] = 0
    pk_free[_ix(ctr[C_NFREE])] = p
    ctr[C_NFREE] += 1
    if ctr[C_TRACK] == p:  # the tracked packet has arrived: its record's next packet is not
        ctr[C_TRACK] = -1


@numba.njit(cache=True, nogil=True, _nrt=False, forceinline=True, error_model="numpy")
def _sink(cfg, net, sim, r, o, ov, f, arrive):
    """A flit reaches the terminal of output o of router r at cycle ``arrive``; its credit
    returns once the terminal has processed it."""
    st, nd, pk, ctr, tp = sim.st, sim.nd, sim.pk, sim.ctr, net.tp
    tb = (r * cfg.p + o) * N_T
    n = tp[_ix(tb + T_OUT_NODE)]
    nb = n * cfg.nds
    p = f // FLIT
    k = f - p * FLIT
    size = pk[_ix(p * N_PK + PK_SIZE)]
    if ctr[C_MEASURE_FROM] <= arrive < ctr[C_MEASURE_TO]:
        nd[_ix(nb + ND_ACC)] += 1
    if k < size - 1:
        if cfg.sink == 0:
            _cq_push(cfg, st, r, o, ov, arrive + tp[_ix(tb + T_LAT)] + 1 + cfg.cd)
        return
    # the tail: the packet is whole at the terminal
    pk[_ix(p * N_PK + PK_ATIME)] = arrive
    if cfg.sqs > 0:  # its server takes it with its other meshes' packets (_serve_due)
        _sq_push(cfg, net, sim, p, r, o, ov, arrive)
    else:
        _serve(cfg, net, sim, p, r, o, ov, arrive)
        if cfg.pool:
            _retire(sim, p)


@numba.njit(cache=True, nogil=True, _nrt=False, forceinline=True, error_model="numpy")
def _serve(cfg, net, sim, p, r, o, ov, arrive):
    """The terminal of output o of router r takes packet p, whole since ``arrive``: processes
    it (sink mode 1: after the packets before it, for ``dsvc`` cycles) and sends its slots'
    credits back; returns when they reach the router."""
    st, nd, pk, dsvc, grp, ctr, tp = sim.st, sim.nd, sim.pk, sim.dsvc, sim.grp, sim.ctr, net.tp
    tb = (r * cfg.p + o) * N_T
    nb = tp[_ix(tb + T_OUT_NODE)] * cfg.nds
    size = pk[_ix(p * N_PK + PK_SIZE)]
    back = tp[_ix(tb + T_LAT)] + 1 + cfg.cd
    if cfg.sink == 1:  # a core's server: packets one after another
        start = arrive if arrive > nd[_ix(nb + ND_FREE)] else nd[_ix(nb + ND_FREE)]
        done = start + dsvc[_ix(pk[_ix(p * N_PK + PK_LO)])]
        nd[_ix(nb + ND_FREE)] = done
        for _ in range(size):  # the packet's slots are freed once it is processed
            _cq_push(cfg, st, r, o, ov, done + back)
    else:
        done = arrive
        _cq_push(cfg, st, r, o, ov, done + back)
    pk[_ix(p * N_PK + PK_DONE)] = done
    ctr[C_DELIVERED] += 1
    if done > ctr[C_LAST_DONE]:
        ctr[C_LAST_DONE] = done
    g = pk[_ix(p * N_PK + PK_GROUP)]
    if g >= 0:
        grp[G_LEFT, _ix(g)] -= 1
        if done > grp[G_DONE, _ix(g)]:
            grp[G_DONE, _ix(g)] = done
    return done + back


@numba.njit(cache=True, nogil=True, _nrt=False, error_model="numpy")
def _sq_push(cfg, net, sim, p, r, o, ov, arrive):
    """Parallel meshes: the tail of packet p reached its core at ``arrive`` from output o of
    router r. Routers of different meshes deliver to one core's server, and a router may have
    run ahead of the others, so the server takes the packet only once every packet that can
    reach the core before (or with) it has: in the cycle after the one its tail left the
    router (every router has simulated that cycle by then), in the order of (arrival, router,
    port) within that cycle's slot, whatever order the routers were visited in."""
    sq, ctr, tp = sim.sq, sim.ctr, net.tp
    n_slots, cap = cfg.sqs, cfg.sqc
    serve = arrive - tp[_ix((r * cfg.p + o) * N_T + T_LAT)] - cfg.st_delay  # sent at serve - 1
    slot = serve % n_slots
    at = n_slots + slot * cap * N_SQ
    key = r * cfg.p + o
    j = sq[_ix(slot)]
    while j > 0:  # insertion: keep the slot sorted by (arrival, router, port)
        e = at + (j - 1) * N_SQ
        if sq[_ix(e + SQ_ARR)] < arrive or (
            sq[_ix(e + SQ_ARR)] == arrive and sq[_ix(e + SQ_R)] * cfg.p + sq[_ix(e + SQ_O)] < key
        ):
            break
        for f in range(N_SQ):
            sq[_ix(e + N_SQ + f)] = sq[_ix(e + f)]
        j -= 1
    e = at + j * N_SQ
    sq[_ix(e + SQ_ARR)] = arrive
    sq[_ix(e + SQ_P)] = p
    sq[_ix(e + SQ_R)] = r
    sq[_ix(e + SQ_O)] = o
    sq[_ix(e + SQ_OV)] = ov
    sq[_ix(slot)] += 1
    ctr[C_SQN] += 1


@numba.njit(cache=True, nogil=True, _nrt=False, error_model="numpy")
def _serve_due(cfg, net, sim, dw, t):
    """The tails of cycle t's slot go to their cores' servers (see ``_sq_push``); a router
    with a busy VC is due when the credits come back."""
    st, sq, ctr = sim.st, sim.sq, sim.ctr
    n_slots, cap = cfg.sqs, cfg.sqc
    slot = t % n_slots
    at = n_slots + slot * cap * N_SQ
    for j in range(sq[_ix(slot)]):
        e = at + j * N_SQ
        r = sq[_ix(e + SQ_R)]
        o, ov = sq[_ix(e + SQ_O)], sq[_ix(e + SQ_OV)]
        when = _serve(cfg, net, sim, sq[_ix(e + SQ_P)], r, o, ov, sq[_ix(e + SQ_ARR)])
        if _credit_wakes(cfg, st, r, o, ov):  # (as ``_free_slot``)
            _schedule(dw, ctr, r, when)
    ctr[C_SQN] -= sq[_ix(slot)]
    sq[_ix(slot)] = 0
