"""A router's cycle, stage by stage (BookSim2's ``iq_router``): read inputs, route, VC
allocation, switch allocation, switch traversal, credit return; then when it is due next.

``_router`` decides once whether the run's router is the unicast one (``cfg.unicast``) and
runs that router's pipeline (``_cycle_unicast`` or ``_cycle_multicast``); no stage asks
again. The two pipelines share the allocators (``kernel.allocators``: a switch request,
the switch allocation), the counters (``kernel.stats``) and the traversal (``_traverse``),
and differ where their bookkeeping does: the unicast router keeps its busy VCs, routed heads
and held output VCs as bit masks and its flits are put straight into their buffers
(``links._put``); the multicast router reads link and credit queues and keeps a list of its
busy VCs, each VC's packet split into branches (``routing._start_packet``).

Every stage is a small function inlined by LLVM (``forceinline``) into ``_router``, which is
inlined into ``loop.run`` at its two calls (``unicast`` a constant at each).
"""

from __future__ import annotations

import numba
import numpy as np
from numba.cpython.unsafe.numbers import trailing_zeros

from engine.simulate.kernel.allocators import _next, _rr_bit, _sw_alloc, _sw_request, _va_match
from engine.simulate.kernel.base import _ix, _schedule
from engine.simulate.kernel.links import (
    _credits,
    _free_slot,
    _lq_push,
    _next_credit,
    _put,
)
from engine.simulate.kernel.routing import _can_ask, _route_unicast, _start_packet, _vc_mask
from engine.simulate.kernel.sinks import _sink
from engine.simulate.kernel.stats import (
    _block,
    _carry_occupancy,
    _hop,
    _lost,
    _seen,
    _track_arrive,
    _track_count,
    _track_go,
    _unblock,
)

# isort: off
from engine.simulate.records import (BR_HI, BR_LO, BR_OVC, BR_PK, BR_PORT, BR_SENT, BR_VAGR, CQ_T,
    CQ_V, C_INFLIGHT, C_NPK, C_PROGRESS, C_TRACK, C_TRACK_K, C_WINDOW, FLIT, H_HEAD, H_OUT, H_TAIL,
    H_VA, LQ_F, LQ_T, LQ_V, M_BUSY, M_CQ, M_CWAIT, M_HELD, M_LQ, M_STALL, M_VAS, M_VCS, M_WIN,
    NEVER, N_BR, N_CQ, N_LQ, N_MISC, N_OV, N_PK, N_PT, N_T, N_VC, OV_CREDITS, OV_CR_H, OV_CR_N,
    OV_OWNER, PK_ATIME, PK_DONE, PK_HI, PK_HOPS, PK_LO, PK_ROUTE, PK_SIZE, PT_CQ_H, PT_CQ_N,
    PT_LQ_H, PT_LQ_N, PT_OUT_FREE, PT_SEEN, PT_SW_RR, S_NO_CREDIT, S_SW_LOST, S_VC_BUSY, S_VC_LOST,
    T_LAT, T_LINK, T_NBR, T_SER, VC_BRN, VC_DEST, VC_FROM, VC_HEAD, VC_N, VC_OUT, VC_OVC, VC_PK,
    VC_POPPED, VC_SA_GR, VC_SA_T, VC_SENT, VC_STATE, VC_VA_T, V_ACTIVE, V_IDLE, V_VCALLOC,
)  # fmt: skip
# isort: on


_INLINE = {"cache": True, "nogil": True, "_nrt": False, "forceinline": True,
           "error_model": "numpy"}  # fmt: skip


# ------------------------------------------------------------------ the choice
@numba.njit(**_INLINE)
def _router(unicast, cfg, net, sim, trace, dw, ws, window, r, t):
    """Everything router r does in cycle t (it has something due); returns the next cycle in
    which it has something due (``NEVER``: none until a flit or credit arrives).

    ``unicast`` (a constant at each call in ``run``, ``cfg.unicast``) picks the pipeline:
    packets of one destination and allocations of one cycle run the unicast router, the
    same cycle bit for bit (tests/engine/simulate/test_unicast.py) on leaner bookkeeping."""
    if unicast:
        return _cycle_unicast(cfg, net, sim, trace, dw, ws, window, r, t)
    return _cycle_multicast(cfg, net, sim, trace, dw, ws, window, r, t)


@numba.njit(**_INLINE)
def _progress(ctr, moved, t):
    if moved > 0 and ctr[C_PROGRESS] < t:
        ctr[C_PROGRESS] = t


# ------------------------------------------------------------------ the unicast pipeline
@numba.njit(**_INLINE)
def _cycle_unicast(cfg, net, sim, trace, dw, ws, window, r, t):
    """The unicast router: flits are in their buffers already (``_put``) and credits in their
    output VCs' rings (``_credits``); the VCs ready now are found without a branch per VC (a
    mispredicted branch costs more than the rest of a VC's check); a VC's switch grant is acted
    on as the allocator returns it (allocations of one cycle)."""
    st = sim.st
    rb = r * cfg.rs
    misc = rb + cfg.omisc
    ready = _u_ready(cfg, st, rb, t)
    vas = st[_ix(misc + M_VAS)]
    va_ports, acted = _u_vc_requests(cfg, sim, trace, ws, window, r, t, ready & vas)
    n_sa, clash, asked = _u_sw_requests(cfg, sim, trace, ws, window, r, t, ready & ~vas)
    acted |= asked
    _u_vc_alloc(cfg, sim, trace, ws, r, t, va_ports)
    _sw_alloc(cfg, st, ws, rb, n_sa, clash)
    moved, asked = _u_traverse(cfg, net, sim, trace, dw, ws, window, r, t, n_sa, asked)
    _u_sw_lost(cfg, sim, trace, r, t, asked)
    _progress(sim.ctr, moved, t)
    return _u_next_due(cfg, st, rb, t, acted)


@numba.njit(**_INLINE)
def _u_ready(cfg, st, rb, t):
    """The busy VCs whose next stage may run at t, as a bit mask."""
    o_vc = rb + cfg.ovc
    ready = np.int64(0)
    m = st[_ix(rb + cfg.omisc + M_VCS)]
    while m != 0:
        iv = trailing_zeros(m)
        m &= m - 1
        ready |= np.int64(st[_ix(o_vc + iv * N_VC + VC_FROM)] <= t) << iv
    return ready


@numba.njit(**_INLINE)
def _u_vc_requests(cfg, sim, trace, ws, window, r, t, heads):
    """VC allocation requests of the routed heads ``heads`` (a mask): each asks for every free
    VC of its route's port it may take (``ws.va_vcs[o]``: the VCs asking at port o); returns
    the ports asked for and the VCs that asked."""
    st, ctr = sim.st, sim.ctr
    V = cfg.v  # noqa: N806
    rb = r * cfg.rs
    o_vc, misc = rb + cfg.ovc, rb + cfg.omisc
    o_vm = misc + N_MISC + 2 * cfg.p * V
    held = st[_ix(misc + M_HELD)]
    va_ports = 0
    acted = np.int64(0)
    m = heads
    while m != 0:
        iv = trailing_zeros(m)
        m &= m - 1
        vb = o_vc + iv * N_VC
        o = st[_ix(vb + VC_OUT)]
        if ~(held >> (o * V)) & st[_ix(o_vm + iv)] == 0:
            _block(st, vb, t, S_VC_BUSY)  # every VC of its port it may take is held
            continue
        va_ports |= 1 << o
        ws.va_vcs[_ix(o)] |= np.int64(1) << iv
        acted |= np.int64(1) << iv
        if ctr[C_TRACK] >= 0 and st[_ix(vb + VC_PK)] == ctr[C_TRACK]:
            _track_go(ctr, st, vb, r, t)
        _unblock(st, vb, misc + M_STALL, t, trace.win_wait, window, r)
    return va_ports, acted


@numba.njit(**_INLINE)
def _u_sw_requests(cfg, sim, trace, ws, window, r, t, holding):
    """Switch requests of the VCs ``holding`` an output VC (a mask) whose next flit has
    arrived, has a credit and finds its link free; returns the requests' count, whether two
    share an input or an output, and the VCs that asked."""
    st, ctr = sim.st, sim.ctr
    P, V, D = cfg.p, cfg.v, cfg.d  # noqa: N806
    rb = r * cfg.rs
    o_vc, o_ov, o_pt, misc = rb + cfg.ovc, rb + cfg.oov, rb + cfg.opt, rb + cfg.omisc
    o_cr, o_bat = rb + cfg.ocr, rb + cfg.obat
    o_iv = misc + N_MISC
    n_sa = sa_in = sa_out = 0
    clash = False
    asked = np.int64(0)
    m = holding
    while m != 0:
        iv = trailing_zeros(m)
        m &= m - 1
        vb = o_vc + iv * N_VC
        o = st[_ix(vb + VC_OUT)]
        if st[_ix(vb + VC_N)] == 0 or st[_ix(o_bat + iv * D + st[_ix(vb + VC_HEAD)])] > t:
            continue  # its next flit has not arrived
        ov = o * V + st[_ix(vb + VC_OVC)]
        if _credits(st, o_ov, o_cr, ov, D, t) <= 0:
            _block(st, vb, t, S_NO_CREDIT)  # the downstream buffer is full
            st[_ix(misc + M_CWAIT)] |= np.int64(1) << ov
            continue
        if st[_ix(o_pt + o * N_PT + PT_OUT_FREE)] > t + cfg.st_delay:
            continue  # the link still serializes an earlier flit
        i, v = st[_ix(o_iv + iv)], st[_ix(o_iv + P * V + iv)]
        n_sa, sa_in, sa_out, clash = _sw_request(cfg, st, ws, o_pt, i, o, v, 0, n_sa, sa_in,
                                                 sa_out, clash)  # fmt: skip
        if ctr[C_TRACK] >= 0 and st[_ix(vb + VC_PK)] == ctr[C_TRACK]:
            _track_go(ctr, st, vb, r, t)
        _unblock(st, vb, misc + M_STALL, t, trace.win_wait, window, r)
        st[_ix(misc + M_CWAIT)] &= ~(np.int64(1) << ov)
        asked |= np.int64(1) << iv
    return n_sa, clash, asked


@numba.njit(**_INLINE)
def _u_vc_alloc(cfg, sim, trace, ws, r, t, va_ports):
    """VC allocation, port by port: a VC asks only for the VCs of its route's port, so the
    ports' requests are apart and the allocator matches each on its own as it would all at
    once. A winner holds its output VC and competes for the switch from the next cycle."""
    st, ctr = sim.st, sim.ctr
    P, V = cfg.p, cfg.v  # noqa: N806
    rb = r * cfg.rs
    o_vc, o_ov, o_va, misc = rb + cfg.ovc, rb + cfg.oov, rb + cfg.ova, rb + cfg.omisc
    o_vm = misc + N_MISC + 2 * P * V
    vfull = (np.int64(1) << V) - 1
    held = st[_ix(misc + M_HELD)]
    vas = st[_ix(misc + M_VAS)]
    m_in = ws.m_in
    while va_ports != 0:
        o = trailing_zeros(va_ports)
        va_ports &= va_ports - 1
        vm = ws.va_vcs[_ix(o)]
        ws.va_vcs[_ix(o)] = 0
        free = (~(held >> (o * V)) & vfull) << (o * V)  # as output VC ids
        if vm & (vm - 1) == 0:  # one VC asks: it takes the free VC nearest its pointer
            a = trailing_zeros(vm)
            g = _rr_bit(free & (st[_ix(o_vm + a)] << (o * V)), st[_ix(o_va + P * V + a)])
            m_in[_ix(a)] = g
            st[_ix(o_va + g)] = _next(a, P * V)
            st[_ix(o_va + P * V + a)] = _next(g, P * V)
        else:
            n_va = 0
            mm = vm
            while mm != 0:
                a = trailing_zeros(mm)
                mm &= mm - 1
                ff = free & (st[_ix(o_vm + a)] << (o * V))
                while ff != 0:
                    ws.req_in[_ix(n_va)] = a
                    ws.req_out[_ix(n_va)] = trailing_zeros(ff)
                    n_va += 1
                    ff &= ff - 1
            _va_match(cfg, st, ws, rb, n_va, P * V)
        while vm != 0:
            a = trailing_zeros(vm)
            vm &= vm - 1
            vb = o_vc + a * N_VC
            g = m_in[_ix(a)]
            if g >= 0:
                st[_ix(o_ov + g * N_OV + OV_OWNER)] = a
                held |= np.int64(1) << g
                st[_ix(vb + VC_OVC)] = g - o * V
                st[_ix(vb + VC_STATE)] = V_ACTIVE
                vas &= ~(np.int64(1) << a)
                _track_count(ctr, st, vb, r, H_VA, t)
            else:
                _lost(st, misc + M_STALL, ctr, trace.win_wait, vb, r, S_VC_LOST)
            st[_ix(vb + VC_FROM)] = t + 1
    st[_ix(misc + M_HELD)] = held
    st[_ix(misc + M_VAS)] = vas


@numba.njit(**_INLINE)
def _u_traverse(cfg, net, sim, trace, dw, ws, window, r, t, n_sa, asked):
    """The switch grants: each VC granted the switch sends its flit now (an allocation of
    one cycle); returns the flits sent and the VCs that asked and lost."""
    st = sim.st
    P, V = cfg.p, cfg.v  # noqa: N806
    rb = r * cfg.rs
    o_vc, o_pt = rb + cfg.ovc, rb + cfg.opt
    moved = 0
    for k in range(n_sa):
        i, o = ws.sreq_in[_ix(k)], ws.sreq_out[_ix(k)]
        v = ws.sw_vc[_ix(i * P + o)]
        ws.sw_vc[_ix(i * P + o)] = -1
        if ws.m_in[_ix(i)] == o:
            st[_ix(o_pt + i * N_PT + PT_SW_RR)] = _next(v, V)
            iv = i * V + v
            asked &= ~(np.int64(1) << iv)
            st[_ix(o_vc + iv * N_VC + VC_FROM)] = t + 1
            moved += _send_unicast(cfg, net, sim, trace, dw, window, r, iv, t)
    return moved, asked


@numba.njit(**_INLINE)
def _u_sw_lost(cfg, sim, trace, r, t, asked):
    """The VCs that asked for the switch and lost (or lost their port's turn)."""
    st = sim.st
    rb = r * cfg.rs
    o_vc = rb + cfg.ovc
    while asked != 0:
        iv = trailing_zeros(asked)
        asked &= asked - 1
        vb = o_vc + iv * N_VC
        _lost(st, rb + cfg.omisc + M_STALL, sim.ctr, trace.win_wait, vb, r, S_SW_LOST)
        st[_ix(vb + VC_FROM)] = t + 1


@numba.njit(**_INLINE)
def _u_next_due(cfg, st, rb, t, acted):
    """When the unicast router is due next: at t + 1 if a VC that acted now may go on then
    (what the others wait for is seen then: a wait starts when it is first seen, and is seen
    the same in the cycle it starts or at any visit after it), else the earliest cycle a VC
    may act; a VC that waits for an output VC or a credit is blocked from when it is ready."""
    m = st[_ix(rb + cfg.omisc + M_VCS)]
    if m == 0:
        return NEVER  # credits matter only to a busy VC: an idle router takes them later
    o_vc = rb + cfg.ovc
    again = m & acted
    while again != 0:
        iv = trailing_zeros(again)
        again &= again - 1
        if st[_ix(o_vc + iv * N_VC + VC_FROM)] == t + 1:
            return t + 1
    misc = rb + cfg.omisc
    vas = st[_ix(misc + M_VAS)]
    nxt = _u_heads_due(cfg, st, rb, t, m & vas)
    when = _u_holders_due(cfg, st, rb, t, m & ~vas)
    return when if when < nxt else nxt


@numba.njit(**_INLINE)
def _u_heads_due(cfg, st, rb, t, heads):
    V = cfg.v  # noqa: N806
    o_vc, misc = rb + cfg.ovc, rb + cfg.omisc
    o_vm = misc + N_MISC + 2 * cfg.p * V
    held = st[_ix(misc + M_HELD)]
    nxt = NEVER
    while heads != 0:
        iv = trailing_zeros(heads)
        heads &= heads - 1
        vb = o_vc + iv * N_VC
        fr = st[_ix(vb + VC_FROM)]
        if ~(held >> (st[_ix(vb + VC_OUT)] * V)) & st[_ix(o_vm + iv)]:
            when = fr if fr > t + 1 else t + 1
            if when < nxt:
                nxt = when
        else:  # it waits from when it is ready
            _block(st, vb, max(t + 1, fr), S_VC_BUSY)
    return nxt


@numba.njit(**_INLINE)
def _u_holders_due(cfg, st, rb, t, m):
    V, D = cfg.v, cfg.d  # noqa: N806
    o_vc, o_ov, o_pt, misc = rb + cfg.ovc, rb + cfg.oov, rb + cfg.opt, rb + cfg.omisc
    o_cr, o_bat = rb + cfg.ocr, rb + cfg.obat
    nxt = NEVER
    while m != 0:
        iv = trailing_zeros(m)
        m &= m - 1
        vb = o_vc + iv * N_VC
        fr = st[_ix(vb + VC_FROM)]
        o = st[_ix(vb + VC_OUT)]
        when = NEVER
        if st[_ix(vb + VC_N)] > 0:
            a = st[_ix(o_bat + iv * D + st[_ix(vb + VC_HEAD)])]
            if a > t:
                when = a if a > fr else fr
            elif _credits(st, o_ov, o_cr, o * V + st[_ix(vb + VC_OVC)], D, t) <= 0:
                ov = o * V + st[_ix(vb + VC_OVC)]
                ob = o_ov + ov * N_OV
                when = NEVER  # until the next credit is back
                if st[_ix(ob + OV_CR_N)] > 0:
                    when = st[_ix(o_cr + ov * D + st[_ix(ob + OV_CR_H)])]
                if when > max(t + 1, fr):  # it waits from when it is ready
                    _block(st, vb, max(t + 1, fr), S_NO_CREDIT)
                    st[_ix(misc + M_CWAIT)] |= np.int64(1) << ov
                elif when < fr:
                    when = fr
            else:
                when = st[_ix(o_pt + o * N_PT + PT_OUT_FREE)] - cfg.st_delay
                if when < fr:
                    when = fr
        if when < t + 1:
            when = t + 1
        if when < nxt:
            nxt = when
    return nxt


# ------------------------------------------------------------------ the multicast pipeline
@numba.njit(**_INLINE)
def _cycle_multicast(cfg, net, sim, trace, dw, ws, window, r, t):
    """The multicast router (also a unicast run's with allocations of several cycles, a trace
    or a tracked packet): reads its link and credit queues, routes a head into one branch per
    output port its destinations leave by, and forwards each flit on every branch before its
    buffer slot is free; allocations may take several cycles."""
    st, ctr = sim.st, sim.ctr
    rb = r * cfg.rs
    misc = rb + cfg.omisc
    win = ctr[C_WINDOW]
    if win > st[_ix(misc + M_WIN)]:  # traced, and windows opened since its last cycle
        _carry_occupancy(cfg, st, trace.win_occ, r, st[_ix(misc + M_WIN)] + 1, win)
        st[_ix(misc + M_WIN)] = win
    _m_read_links(cfg, net, sim, trace, r, t)
    _m_read_credits(cfg, st, rb, t)
    # a copy of the busy VCs (sending may take some off the list)
    na = st[_ix(misc + M_BUSY)]
    for k in range(na):
        ws.cur[_ix(k)] = st[_ix(rb + cfg.oact + k)]
    n_va = n_sa = sa_in = sa_out = 0
    clash = va_open = sa_open = False
    for kv in range(na):
        iv = ws.cur[_ix(kv)]
        state = st[_ix(rb + cfg.ovc + iv * N_VC + VC_STATE)]
        if state == V_VCALLOC:
            n_va, opened = _m_vc_request(cfg, sim, trace, ws, window, r, t, iv, n_va)
            va_open = va_open or opened
        elif state == V_ACTIVE:
            n_sa, sa_in, sa_out, clash, opened = _m_sw_request(
                cfg, sim, trace, ws, window, r, t, iv, n_sa, sa_in, sa_out, clash
            )
            sa_open = sa_open or opened
    if n_va > 0:  # every branch of every head at once
        _va_match(cfg, st, ws, rb, n_va, cfg.p * cfg.v * cfg.b)
        _m_vc_grants(cfg, st, ws, rb, n_va)
    if va_open:  # VC allocation ends (this cycle's, and earlier ones with longer delays)
        _m_vc_alloc_end(cfg, sim, trace, ws, r, t, na)
    _sw_alloc(cfg, st, ws, rb, n_sa, clash)
    _m_sw_grants(cfg, st, ws, rb, n_sa)
    moved = 0
    if sa_open:  # requests that lost; then the grants whose delay has passed send
        moved = _m_traverse(cfg, net, sim, trace, dw, ws, window, r, t, na)
    _progress(ctr, moved, t)
    return _m_next_due(cfg, sim, rb, t)


@numba.njit(**_INLINE)
def _m_read_links(cfg, net, sim, trace, r, t):
    """Flits that have arrived on the input links go into their VCs' buffers; a head that
    reaches an idle VC is routed (the VC joins the router's busy list)."""
    st, ctr = sim.st, sim.ctr
    P, V, D, ql = cfg.p, cfg.v, cfg.d, cfg.ql  # noqa: N806
    rb = r * cfg.rs
    o_vc, o_pt, misc, o_act = rb + cfg.ovc, rb + cfg.opt, rb + cfg.omisc, rb + cfg.oact
    win = ctr[C_WINDOW]
    mask = st[_ix(misc + M_LQ)]
    for i in range(P):
        if (mask >> i) & 1 == 0:
            continue
        pb = o_pt + i * N_PT
        while st[_ix(pb + PT_LQ_N)] > 0:
            h = st[_ix(pb + PT_LQ_H)]
            e = rb + cfg.olq + (i * ql + h) * N_LQ
            if st[_ix(e + LQ_T)] > t:
                break
            f, v = st[_ix(e + LQ_F)], st[_ix(e + LQ_V)]
            if f == ctr[C_TRACK] * FLIT and f >= 0:
                _track_arrive(ctr, r, i, st[_ix(e + LQ_T)])
            h += 1
            st[_ix(pb + PT_LQ_H)] = 0 if h == ql else h
            st[_ix(pb + PT_LQ_N)] -= 1
            if st[_ix(pb + PT_LQ_N)] == 0:
                st[_ix(misc + M_LQ)] &= ~(1 << i)
            iv = i * V + v
            vb = o_vc + iv * N_VC
            n = st[_ix(vb + VC_N)]
            k = st[_ix(vb + VC_HEAD)] + n
            st[_ix(rb + cfg.obuf + iv * D + (k - D if k >= D else k))] = f
            st[_ix(vb + VC_N)] = n + 1
            if win >= 0:
                occ = 0
                for vv in range(V):
                    occ += st[_ix(o_vc + (i * V + vv) * N_VC + VC_N)]
                if occ > trace.win_occ[_ix(win), _ix(r * P + i)]:
                    trace.win_occ[_ix(win), _ix(r * P + i)] = occ
            if st[_ix(vb + VC_STATE)] == V_IDLE:  # the VC joins the router's busy list
                nbusy = st[_ix(misc + M_BUSY)]
                st[_ix(o_act + nbusy)] = iv
                st[_ix(o_act + P * V + iv)] = nbusy
                st[_ix(misc + M_BUSY)] = nbusy + 1
                _start_packet(cfg, net.ns, st, sim.pk, sim.dest, rb, r, iv, t)


@numba.njit(**_INLINE)
def _m_read_credits(cfg, st, rb, t):
    """Credits that have come back to the output VCs (credit return)."""
    V, qc = cfg.v, cfg.qc  # noqa: N806
    o_pt, misc = rb + cfg.opt, rb + cfg.omisc
    mask = st[_ix(misc + M_CQ)]
    for o in range(cfg.p):
        if (mask >> o) & 1 == 0:
            continue
        pb = o_pt + o * N_PT
        while st[_ix(pb + PT_CQ_N)] > 0:
            h = st[_ix(pb + PT_CQ_H)]
            e = rb + cfg.ocq + (o * qc + h) * N_CQ
            if st[_ix(e + CQ_T)] > t:
                break
            st[_ix(rb + cfg.oov + (o * V + st[_ix(e + CQ_V)]) * N_OV + OV_CREDITS)] += 1
            h += 1
            st[_ix(pb + PT_CQ_H)] = 0 if h == qc else h
            st[_ix(pb + PT_CQ_N)] -= 1
            if st[_ix(pb + PT_CQ_N)] == 0:
                st[_ix(misc + M_CQ)] &= ~(1 << o)


@numba.njit(**_INLINE)
def _m_vc_request(cfg, sim, trace, ws, window, r, t, iv, n_va):
    """A routed head (input VC ``iv``) asks for the free VCs of its order at every port a
    branch of it still needs; returns the requests' count and whether a VC allocation is
    under way at this VC."""
    st, ctr = sim.st, sim.ctr
    V, B = cfg.v, cfg.b  # noqa: N806
    rb = r * cfg.rs
    o_ov = rb + cfg.oov
    vb = rb + cfg.ovc + iv * N_VC
    if st[_ix(vb + VC_VA_T)] >= 0:
        return n_va, True
    if st[_ix(vb + VC_FROM)] > t:
        return n_va, False
    bb = rb + cfg.obr + iv * B * N_BR
    yx = sim.pk[_ix(st[_ix(vb + VC_PK)] * N_PK + PK_ROUTE)]
    if not _can_ask(cfg, st, o_ov, bb, st[_ix(vb + VC_BRN)], V, yx):
        _block(st, vb, t, S_VC_BUSY)  # every VC of a port it needs is held
        return n_va, False
    for b in range(st[_ix(vb + VC_BRN)]):
        e = bb + b * N_BR
        if st[_ix(e + BR_OVC)] >= 0:
            continue
        o = st[_ix(e + BR_PORT)]
        vm = _vc_mask(cfg, yx, o)  # its order's VCs
        for ov in range(V):
            if (vm >> ov) & 1 and st[_ix(o_ov + (o * V + ov) * N_OV + OV_OWNER)] < 0:
                ws.req_in[_ix(n_va)] = iv * B + b
                ws.req_out[_ix(n_va)] = o * V + ov
                n_va += 1
    if ctr[C_TRACK] >= 0 and st[_ix(vb + VC_PK)] == ctr[C_TRACK]:
        _track_go(ctr, st, vb, r, t)
    _unblock(st, vb, rb + cfg.omisc + M_STALL, t, trace.win_wait, window, r)
    st[_ix(vb + VC_VA_T)] = t + cfg.vd - 1
    return n_va, True


@numba.njit(**_INLINE)
def _m_sw_request(cfg, sim, trace, ws, window, r, t, iv, n_sa, sa_in, sa_out, clash):
    """An active VC (input VC ``iv``) asks for the switch on every branch whose next flit
    has arrived, has a credit and finds its link free; returns the switch requests (as
    ``_sw_request``) and whether a switch allocation is under way at this VC."""
    st, ctr = sim.st, sim.ctr
    P, V, B = cfg.p, cfg.v, cfg.b  # noqa: N806
    rb = r * cfg.rs
    o_ov, o_pt, misc = rb + cfg.oov, rb + cfg.opt, rb + cfg.omisc
    vb = rb + cfg.ovc + iv * N_VC
    if st[_ix(vb + VC_SA_T)] >= 0:
        return n_sa, sa_in, sa_out, clash, True
    if st[_ix(vb + VC_FROM)] > t or st[_ix(vb + VC_N)] == 0:
        return n_sa, sa_in, sa_out, clash, False
    i, v = st[_ix(misc + N_MISC + iv)], st[_ix(misc + N_MISC + P * V + iv)]
    avail = st[_ix(vb + VC_POPPED)] + st[_ix(vb + VC_N)]  # flits received
    size = sim.pk[_ix(st[_ix(vb + VC_PK)] * N_PK + PK_SIZE)]
    if avail > size:
        avail = size
    asks = False
    waiting = False
    bb = rb + cfg.obr + iv * B * N_BR
    for b in range(st[_ix(vb + VC_BRN)]):
        e = bb + b * N_BR
        if st[_ix(e + BR_SENT)] >= avail:
            continue  # this branch waits for the next flit
        o = st[_ix(e + BR_PORT)]
        if st[_ix(o_ov + (o * V + st[_ix(e + BR_OVC)]) * N_OV + OV_CREDITS)] <= 0:
            waiting = True  # the downstream buffer is full
            continue
        if st[_ix(o_pt + o * N_PT + PT_OUT_FREE)] > t + cfg.sd - 1 + cfg.st_delay:
            continue  # the link still serializes an earlier flit
        n_sa, sa_in, sa_out, clash = _sw_request(cfg, st, ws, o_pt, i, o, v, b, n_sa, sa_in,
                                                 sa_out, clash)  # fmt: skip
        asks = True
    if asks:
        if ctr[C_TRACK] >= 0 and st[_ix(vb + VC_PK)] == ctr[C_TRACK]:
            _track_go(ctr, st, vb, r, t)
        _unblock(st, vb, misc + M_STALL, t, trace.win_wait, window, r)
        st[_ix(vb + VC_SA_T)] = t + cfg.sd - 1
        st[_ix(vb + VC_SA_GR)] = -1
        return n_sa, sa_in, sa_out, clash, True
    if waiting:
        _block(st, vb, t, S_NO_CREDIT)
    return n_sa, sa_in, sa_out, clash, False


@numba.njit(**_INLINE)
def _m_vc_grants(cfg, st, ws, rb, n_va):
    """Each branch's VC allocation grant (``BR_VAGR``: a VC of its port), taken when the
    allocation's delay has passed (``_m_vc_alloc_end``)."""
    for k in range(n_va):
        a = ws.req_in[_ix(k)]
        if ws.m_in[_ix(a)] >= 0:
            e = rb + cfg.obr + a * N_BR
            st[_ix(e + BR_VAGR)] = ws.m_in[_ix(a)] - st[_ix(e + BR_PORT)] * cfg.v


@numba.njit(**_INLINE)
def _m_vc_alloc_end(cfg, sim, trace, ws, r, t, na):
    """The VC allocations that end at t: a multicast head takes its branches' output VCs in
    port order (E, W, S, N, then the local ports): a grant is kept only when every branch on
    a lower port holds its VC, so heads never wait on each other in a cycle."""
    st, ctr = sim.st, sim.ctr
    P, V, B = cfg.p, cfg.v, cfg.b  # noqa: N806
    rb = r * cfg.rs
    o_vc, o_ov = rb + cfg.ovc, rb + cfg.oov
    for kv in range(na):
        iv = ws.cur[_ix(kv)]
        vb = o_vc + iv * N_VC
        if st[_ix(vb + VC_STATE)] != V_VCALLOC or st[_ix(vb + VC_VA_T)] != t:
            continue
        done = True
        lost = False
        bb = rb + cfg.obr + iv * B * N_BR
        nbr = st[_ix(vb + VC_BRN)]
        missing = P
        if nbr > 1:
            for b in range(nbr):
                e = bb + b * N_BR
                if st[_ix(e + BR_OVC)] >= 0:
                    continue
                ov = st[_ix(e + BR_VAGR)]
                ob = o_ov + (st[_ix(e + BR_PORT)] * V + ov) * N_OV
                if (ov < 0 or st[_ix(ob + OV_OWNER)] >= 0) and st[_ix(e + BR_PORT)] < missing:
                    missing = st[_ix(e + BR_PORT)]
        for b in range(nbr):
            e = bb + b * N_BR
            if st[_ix(e + BR_OVC)] >= 0:
                continue
            ov = st[_ix(e + BR_VAGR)]
            ob = o_ov + (st[_ix(e + BR_PORT)] * V + ov) * N_OV
            if ov >= 0 and st[_ix(ob + OV_OWNER)] < 0 and st[_ix(e + BR_PORT)] < missing:
                st[_ix(ob + OV_OWNER)] = iv * B + b
                st[_ix(e + BR_OVC)] = ov
            else:
                done = False
                lost = True
            st[_ix(e + BR_VAGR)] = -1
        if lost:
            _lost(st, rb + cfg.omisc + M_STALL, ctr, trace.win_wait, vb, r, S_VC_LOST)
        st[_ix(vb + VC_VA_T)] = -1
        st[_ix(vb + VC_FROM)] = t + 1
        if done:
            st[_ix(vb + VC_STATE)] = V_ACTIVE
            _track_count(ctr, st, vb, r, H_VA, t)


@numba.njit(**_INLINE)
def _m_sw_grants(cfg, st, ws, rb, n_sa):
    """Each switch grant: the input port's round robin moves past its VC, which sends on
    the granted branch once the allocation's delay has passed (``_m_traverse``)."""
    P, V = cfg.p, cfg.v  # noqa: N806
    o_pt = rb + cfg.opt
    for k in range(n_sa):
        i, o = ws.sreq_in[_ix(k)], ws.sreq_out[_ix(k)]
        v = ws.sw_vc[_ix(i * P + o)]
        ws.sw_vc[_ix(i * P + o)] = -1
        if ws.m_in[_ix(i)] == o:
            st[_ix(o_pt + i * N_PT + PT_SW_RR)] = _next(v, V)
            st[_ix(rb + cfg.ovc + (i * V + v) * N_VC + VC_SA_GR)] = ws.sw_br[_ix(i * P + o)]


@numba.njit(**_INLINE)
def _m_traverse(cfg, net, sim, trace, dw, ws, window, r, t, na):
    """The switch allocations that end at t: a request that lost counts as a stall, a grant
    sends its branch's next flit (switch traversal); returns the flits sent."""
    st, ctr = sim.st, sim.ctr
    rb = r * cfg.rs
    o_vc = rb + cfg.ovc
    moved = 0
    for kv in range(na):
        iv = ws.cur[_ix(kv)]
        vb = o_vc + iv * N_VC
        if st[_ix(vb + VC_SA_T)] == t + cfg.sd - 1 and st[_ix(vb + VC_SA_GR)] == -1:
            st[_ix(vb + VC_SA_GR)] = -2  # lost the switch (or its port's turn)
            _lost(st, rb + cfg.omisc + M_STALL, ctr, trace.win_wait, vb, r, S_SW_LOST)
        if st[_ix(vb + VC_STATE)] != V_ACTIVE or st[_ix(vb + VC_SA_T)] != t:
            continue
        b = st[_ix(vb + VC_SA_GR)]
        st[_ix(vb + VC_SA_T)] = -1
        st[_ix(vb + VC_FROM)] = t + 1
        if b >= 0:
            moved += _send_multicast(cfg, net, sim, trace, dw, r, iv, b, t)
    return moved


@numba.njit(**_INLINE)
def _m_next_due(cfg, sim, rb, t):
    """When the multicast router is due next: a flit or credit due on its queues, or a VC
    able to act (one that waits for an output VC or a credit is blocked from when it is
    ready)."""
    st = sim.st
    misc = rb + cfg.omisc
    nxt = NEVER
    lq_mask, cq_mask = st[_ix(misc + M_LQ)], st[_ix(misc + M_CQ)]
    if st[_ix(misc + M_BUSY)] == 0:
        cq_mask = 0  # credits matter only to a busy VC: an idle router takes them later
    if lq_mask | cq_mask:
        for i in range(cfg.p):
            pb = rb + cfg.opt + i * N_PT
            if (lq_mask >> i) & 1:
                tt = st[_ix(rb + cfg.olq + (i * cfg.ql + st[_ix(pb + PT_LQ_H)]) * N_LQ + LQ_T)]
                if tt < nxt:
                    nxt = tt
            if (cq_mask >> i) & 1:
                tt = st[_ix(rb + cfg.ocq + (i * cfg.qc + st[_ix(pb + PT_CQ_H)]) * N_CQ + CQ_T)]
                if tt < nxt:
                    nxt = tt
    if nxt > t + 1:
        for kv in range(st[_ix(misc + M_BUSY)]):
            when = _m_vc_due(cfg, sim, rb, t, st[_ix(rb + cfg.oact + kv)])
            if when < nxt:
                nxt = when
    return nxt


@numba.njit(**_INLINE)
def _m_vc_due(cfg, sim, rb, t, iv):
    """The next cycle (> t) in which busy input VC ``iv`` may act."""
    st = sim.st
    V, B = cfg.v, cfg.b  # noqa: N806
    o_ov, o_pt = rb + cfg.oov, rb + cfg.opt
    vb = rb + cfg.ovc + iv * N_VC
    s = st[_ix(vb + VC_STATE)]
    when = NEVER
    bb = rb + cfg.obr + iv * B * N_BR
    if st[_ix(vb + VC_VA_T)] >= 0:
        when = st[_ix(vb + VC_VA_T)]
    elif st[_ix(vb + VC_SA_T)] >= 0:
        when = st[_ix(vb + VC_SA_T)]
    elif s == V_VCALLOC:
        yx = sim.pk[_ix(st[_ix(vb + VC_PK)] * N_PK + PK_ROUTE)]
        if _can_ask(cfg, st, o_ov, bb, st[_ix(vb + VC_BRN)], V, yx):
            when = st[_ix(vb + VC_FROM)]
        else:  # it waits from when it is ready
            _block(st, vb, max(t + 1, st[_ix(vb + VC_FROM)]), S_VC_BUSY)
    elif st[_ix(vb + VC_N)] > 0:  # active, with a flit: is some branch able to go?
        avail = st[_ix(vb + VC_POPPED)] + st[_ix(vb + VC_N)]
        size = sim.pk[_ix(st[_ix(vb + VC_PK)] * N_PK + PK_SIZE)]
        if avail > size:
            avail = size
        for b in range(st[_ix(vb + VC_BRN)]):
            e = bb + b * N_BR
            if st[_ix(e + BR_SENT)] >= avail:
                continue
            o = st[_ix(e + BR_PORT)]
            if st[_ix(o_ov + (o * V + st[_ix(e + BR_OVC)]) * N_OV + OV_CREDITS)] <= 0:
                # it waits from when it is ready, unless a credit is back by then
                b0 = max(t + 1, st[_ix(vb + VC_FROM)])
                if _next_credit(cfg, st, rb, o, st[_ix(e + BR_OVC)]) > b0:
                    _block(st, vb, b0, S_NO_CREDIT)
                continue
            w = st[_ix(o_pt + o * N_PT + PT_OUT_FREE)] - (cfg.sd - 1 + cfg.st_delay)
            if w < st[_ix(vb + VC_FROM)]:
                w = st[_ix(vb + VC_FROM)]
            if w < when:
                when = w
    return when if when > t + 1 else t + 1


# ------------------------------------------------------------------ switch traversal
@numba.njit(**_INLINE)
def _traverse(cfg, net, sim, trace, r, o, ov, child, k, size, t):
    """Flit k of packet record ``child`` crosses the switch of router r at t to output VC
    (o, ov) and its link (a credit spent, the link busy for its serialization, the flit
    counted on the link); returns the cycle it arrives at the other end."""
    st, ctr, tp = sim.st, sim.ctr, net.tp
    rb = r * cfg.rs
    if child == ctr[C_TRACK]:
        at = _hop(ctr, r)
        if at >= 0:
            if k == 0:
                ctr[_ix(at + H_HEAD)] = t
                ctr[_ix(at + H_OUT)] = o
            if k + 1 == size:
                ctr[_ix(at + H_TAIL)] = t
    st[_ix(rb + cfg.oov + (o * cfg.v + ov) * N_OV + OV_CREDITS)] -= 1
    t_send = t + cfg.st_delay
    tb = (r * cfg.p + o) * N_T
    st[_ix(rb + cfg.opt + o * N_PT + PT_OUT_FREE)] = t_send + tp[_ix(tb + T_SER)]
    lid = tp[_ix(tb + T_LINK)]
    trace.link_flits[_ix(lid)] += 1
    win = ctr[C_WINDOW]
    if win >= 0:
        trace.win_link[_ix(win), _ix(lid)] += 1
    return t_send + tp[_ix(tb + T_LAT)] + 1


@numba.njit(**_INLINE)
def _send_unicast(cfg, net, sim, trace, dw, window, r, iv, t):
    """Input VC ``iv`` of router r sends its next flit (its switch allocation ends at t):
    straight into the next router's buffer (``_put``: its router is due when it may act) or
    to its terminal; its buffer slot is free at once. Traced, it sees what the flit's input
    port held up to t before the flit leaves it (between two departures a port only fills,
    so each window's most is seen before one, or at the window's end: ``_seen``). Returns 1."""
    st, pk, ctr = sim.st, sim.pk, sim.ctr
    P, V = cfg.p, cfg.v  # noqa: N806
    rb = r * cfg.rs
    vb = rb + cfg.ovc + iv * N_VC
    misc = rb + cfg.omisc
    i, v = st[_ix(misc + N_MISC + iv)], st[_ix(misc + N_MISC + P * V + iv)]
    p = st[_ix(vb + VC_PK)]
    size = pk[_ix(p * N_PK + PK_SIZE)]
    if window > 0:  # the flit leaves its input port: what the port held until now
        seen = rb + cfg.opt + i * N_PT + PT_SEEN
        _seen(cfg, st, trace.win_occ, window, r, i, st[_ix(seen)], t, ctr[C_WINDOW])
        st[_ix(seen)] = t + 1
    k = st[_ix(vb + VC_SENT)]
    o, ov = st[_ix(vb + VC_OUT)], st[_ix(vb + VC_OVC)]
    if k == 0:
        pk[_ix(p * N_PK + PK_HOPS)] += 1
    arrive = _traverse(cfg, net, sim, trace, r, o, ov, p, k, size, t)
    if o < 4:
        nb = net.tp[_ix((r * P + o) * N_T + T_NBR)]
        when = _put(cfg, net.ns, st, pk, sim.dest, ctr, nb, o ^ 1, ov, p * FLIT + k,
                    st[_ix(vb + VC_DEST)], arrive)  # fmt: skip
        _schedule(dw, ctr, nb, when)  # (NEVER: no-op)
        ctr[C_INFLIGHT] += 1
    else:  # it leaves the network, reaching the terminal at ``arrive``
        _sink(cfg, net, sim, r, o, ov, p * FLIT + k, arrive)
    _free_slot(cfg, net, sim, dw, vb, r, i, v, t)
    if k + 1 < size:
        st[_ix(vb + VC_SENT)] = k + 1
        return 1
    # the tail has left: the output VC is free again; the VC's next packet, or idle
    st[_ix(rb + cfg.oov + (o * V + ov) * N_OV + OV_OWNER)] = -1
    st[_ix(misc + M_HELD)] &= ~(np.int64(1) << (o * V + ov))
    if st[_ix(vb + VC_N)] > 0:
        a = st[_ix(rb + cfg.obat + iv * cfg.d + st[_ix(vb + VC_HEAD)])]
        _route_unicast(cfg, net.ns, st, pk, sim.dest, rb, iv, a if a > t + 1 else t + 1, -1)
    else:
        st[_ix(vb + VC_STATE)] = V_IDLE
        st[_ix(misc + M_VCS)] &= ~(np.int64(1) << iv)
    return 1


@numba.njit(**_INLINE)
def _branch_packet(sim, st, e, p):
    """The packet record branch ``e`` carries from its head on: p itself, or a new record
    for its sub-range of p's destinations."""
    pk, ctr = sim.pk, sim.ctr
    lo, hi = st[_ix(e + BR_LO)], st[_ix(e + BR_HI)]
    if lo == pk[_ix(p * N_PK + PK_LO)] and hi == pk[_ix(p * N_PK + PK_HI)]:
        child = p
    else:
        child = ctr[C_NPK]
        ctr[C_NPK] += 1
        for f in range(N_PK):
            pk[_ix(child * N_PK + f)] = pk[_ix(p * N_PK + f)]
        pk[_ix(child * N_PK + PK_LO)] = lo
        pk[_ix(child * N_PK + PK_HI)] = hi
        pk[_ix(child * N_PK + PK_ATIME)] = -1
        pk[_ix(child * N_PK + PK_DONE)] = -1
    st[_ix(e + BR_PK)] = child
    pk[_ix(child * N_PK + PK_HOPS)] += 1
    if ctr[C_TRACK] == p and child != p and lo <= ctr[C_TRACK_K] < hi:
        ctr[C_TRACK] = child  # the branch towards the tracked destination
    return child


@numba.njit(**_INLINE)
def _send_multicast(cfg, net, sim, trace, dw, r, iv, b, t):
    """Branch b of input VC ``iv`` of router r sends its next flit (its switch allocation
    ends at t) into the next router's link queue, read on arrival, or to its terminal; the
    buffer slots every branch has sent are free. Returns 1."""
    st, pk, ctr = sim.st, sim.pk, sim.ctr
    P, V, B = cfg.p, cfg.v, cfg.b  # noqa: N806
    rb = r * cfg.rs
    vb = rb + cfg.ovc + iv * N_VC
    bb = rb + cfg.obr + iv * B * N_BR
    e = bb + b * N_BR
    misc = rb + cfg.omisc
    p = st[_ix(vb + VC_PK)]
    size = pk[_ix(p * N_PK + PK_SIZE)]
    k = st[_ix(e + BR_SENT)]
    o, ov = st[_ix(e + BR_PORT)], st[_ix(e + BR_OVC)]
    child = _branch_packet(sim, st, e, p) if k == 0 else st[_ix(e + BR_PK)]
    arrive = _traverse(cfg, net, sim, trace, r, o, ov, child, k, size, t)
    if o < 4:
        nb = net.tp[_ix((r * P + o) * N_T + T_NBR)]
        _lq_push(cfg, st, nb, o ^ 1, child * FLIT + k, ov, arrive)
        _schedule(dw, ctr, nb, arrive)
        ctr[C_INFLIGHT] += 1
    else:  # it leaves the network, reaching the terminal at ``arrive``
        _sink(cfg, net, sim, r, o, ov, child * FLIT + k, arrive)
    i, v = st[_ix(misc + N_MISC + iv)], st[_ix(misc + N_MISC + P * V + iv)]
    st[_ix(e + BR_SENT)] = k + 1
    if k + 1 == size:  # the tail has left: the output VC is free again
        st[_ix(rb + cfg.oov + (o * V + ov) * N_OV + OV_OWNER)] = -1
    # free the buffer slots every branch has sent
    least = size
    for j in range(st[_ix(vb + VC_BRN)]):
        if st[_ix(bb + j * N_BR + BR_SENT)] < least:
            least = st[_ix(bb + j * N_BR + BR_SENT)]
    while st[_ix(vb + VC_POPPED)] < least:
        st[_ix(vb + VC_POPPED)] += 1
        _free_slot(cfg, net, sim, dw, vb, r, i, v, t)
    if least == size:  # every branch sent the tail: the next packet, or idle
        if st[_ix(vb + VC_N)] > 0:
            _start_packet(cfg, net.ns, st, pk, sim.dest, rb, r, iv, t + 1)
        else:  # idle: off the router's busy list
            st[_ix(vb + VC_STATE)] = V_IDLE
            o_act = rb + cfg.oact
            busy = misc + M_BUSY
            at = st[_ix(o_act + P * V + iv)]
            last = st[_ix(o_act + st[_ix(busy)] - 1)]
            st[_ix(o_act + at)] = last
            st[_ix(o_act + P * V + last)] = at
            st[_ix(busy)] -= 1
    return 1
