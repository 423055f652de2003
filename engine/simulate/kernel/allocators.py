"""The allocators: iSLIP (BookSim2's ``islip``, ``alloc_iters`` iterations) and separable
input-first round robin (``separable_input_first``) over sparse requests, and the two
allocations a router makes with them — VC allocation (input VCs, or their packets' branches,
to output VCs) and switch allocation (input ports to output ports, one VC per input and
output asking, chosen round robin as BookSim2's ``Supersedes``)."""

from __future__ import annotations

import numba
import numpy as np
from numba.cpython.unsafe.numbers import trailing_zeros

from engine.simulate.kernel.base import _ix, _next

# isort: off
from engine.simulate.records import (N_PT, PT_SW_A, PT_SW_G, PT_SW_RR,
)  # fmt: skip
# isort: on


@numba.njit(cache=True, nogil=True, _nrt=False, error_model="numpy")
def _rr_first(cands, n, base, size):
    """The entry of ``cands[:n]`` closest at or after ``base`` in round robin over ``size``."""
    best, best_d = -1, size
    for k in range(n):
        c = cands[_ix(k)]
        d = c - base
        if d < 0:
            d += size
        if d < best_d:
            best, best_d = c, d
    return best


@numba.njit(cache=True, nogil=True, _nrt=False, error_model="numpy")
def _match(req_in, req_out, n_req, n_in, n_out, st, g_at, g_step, a_at, a_step, iters, alloc,
           in_match, out_match, cand):  # fmt: skip
    """Match requesting inputs to outputs over the sparse requests ``(req_in[k], req_out[k])``.

    Output b's grant pointer is ``st[g_at + b · g_step]``, input a's accept pointer
    ``st[a_at + a · a_step]``. iSLIP (``alloc`` 0): each free output grants the requesting
    free input nearest its grant pointer, each input accepts the granting output nearest its
    accept pointer; pointers move only on an accept in the first iteration (BookSim2's
    ``iSLIP_Sparse``). Separable input-first round robin (``alloc`` 1): each input picks one
    request, each output one of the inputs that picked it. ``in_match`` and ``out_match``
    (of size ``n_in`` / ``n_out``, -1 = unmatched) hold the result.
    """
    for k in range(n_req):
        in_match[_ix(req_in[_ix(k)])] = -1
        out_match[_ix(req_out[_ix(k)])] = -1
    # one input, or one output: either allocator matches the pair nearest the one side's
    # pointer and moves both pointers past it (the common case below saturation)
    one_in = one_out = True
    for k in range(1, n_req):
        one_in = one_in and req_in[_ix(k)] == req_in[0]
        one_out = one_out and req_out[_ix(k)] == req_out[0]
    if one_in or one_out:
        if one_in:
            a = req_in[0]
            b = _rr_first(req_out, n_req, st[_ix(a_at + a * a_step)], n_out)
        else:
            b = req_out[0]
            a = _rr_first(req_in, n_req, st[_ix(g_at + b * g_step)], n_in)
        in_match[_ix(a)] = b
        out_match[_ix(b)] = a
        st[_ix(g_at + b * g_step)] = _next(a, n_in)
        st[_ix(a_at + a * a_step)] = _next(b, n_out)
        return
    if alloc == 1:
        for k in range(n_req):  # each input's pick: its request nearest its accept pointer
            a = req_in[_ix(k)]
            if in_match[_ix(a)] >= 0:
                continue
            n = 0
            for k2 in range(n_req):
                if req_in[_ix(k2)] == a:
                    cand[_ix(n)] = req_out[_ix(k2)]
                    n += 1
            in_match[_ix(a)] = _rr_first(cand, n, st[_ix(a_at + a * a_step)], n_out)
        for k in range(n_req):
            b = req_out[_ix(k)]
            if out_match[_ix(b)] >= 0 or in_match[_ix(req_in[_ix(k)])] != b:
                continue
            n = 0
            for k2 in range(n_req):
                if req_out[_ix(k2)] == b and in_match[_ix(req_in[_ix(k2)])] == b:
                    cand[_ix(n)] = req_in[_ix(k2)]
                    n += 1
            a = _rr_first(cand, n, st[_ix(g_at + b * g_step)], n_in)
            out_match[_ix(b)] = a
            st[_ix(g_at + b * g_step)] = _next(a, n_in)
            st[_ix(a_at + a * a_step)] = _next(b, n_out)
        for k in range(n_req):
            a = req_in[_ix(k)]
            b = in_match[_ix(a)]
            if b >= 0 and out_match[_ix(b)] != a:
                in_match[_ix(a)] = -1
        return
    if n_in < 63 and n_out < 63:
        _islip_masks(req_in, req_out, n_req, n_out, st, g_at, g_step, a_at, a_step, iters, n_in,
                     in_match, out_match, cand)  # fmt: skip
        return
    for it in range(iters):
        # grant: every unmatched output picks among the unmatched inputs requesting it
        for k in range(n_req):
            b = req_out[_ix(k)]
            if out_match[_ix(b)] != -1:
                continue
            n = 0
            for k2 in range(n_req):
                a = req_in[_ix(k2)]
                if req_out[_ix(k2)] == b and in_match[_ix(a)] < 0:
                    cand[_ix(n)] = a
                    n += 1
            if n > 0:
                out_match[_ix(b)] = -2 - _rr_first(
                    cand, n, st[_ix(g_at + b * g_step)], n_in
                )  # a grant
        # accept: every unmatched input picks among the outputs that granted it
        for k in range(n_req):
            a = req_in[_ix(k)]
            if in_match[_ix(a)] != -1:
                continue
            n = 0
            for k2 in range(n_req):
                b = req_out[_ix(k2)]
                if req_in[_ix(k2)] == a and out_match[_ix(b)] == -2 - a:
                    cand[_ix(n)] = b
                    n += 1
            if n > 0:
                b = _rr_first(cand, n, st[_ix(a_at + a * a_step)], n_out)
                in_match[_ix(a)] = b
                out_match[_ix(b)] = a
                if it == 0:
                    st[_ix(g_at + b * g_step)] = _next(a, n_in)
                    st[_ix(a_at + a * a_step)] = _next(b, n_out)
        for k in range(n_req):  # grants not accepted are released for the next iteration
            b = req_out[_ix(k)]
            if out_match[_ix(b)] < -1:
                out_match[_ix(b)] = -1


@numba.njit(cache=True, nogil=True, forceinline=True, error_model="numpy")
def _rr_bit(mask, base):
    """The set bit of ``mask`` (≠ 0) nearest at or after ``base`` in round robin."""
    at = mask & ~((np.int64(1) << base) - 1)
    return trailing_zeros(at if at != 0 else mask)


@numba.njit(cache=True, nogil=True, _nrt=False, error_model="numpy")
def _islip_masks(req_in, req_out, n_req, n_out, st, g_at, g_step, a_at, a_step, iters, n_in,
                 in_match, out_match, cand):  # fmt: skip
    """``_match``'s iSLIP when every input and output id is below 63: the same grants and
    accepts, with the inputs requesting output b (``cand[b]``) and the outputs granting input
    a (``cand[n_out + a]``) as bit masks, so that each pick is a bit scan instead of a pass
    over the requests."""
    for k in range(n_req):
        cand[_ix(req_out[_ix(k)])] = 0
        cand[_ix(n_out + req_in[_ix(k)])] = 0
    for k in range(n_req):
        cand[_ix(req_out[_ix(k)])] |= np.int64(1) << req_in[_ix(k)]
    matched = np.int64(0)  # the inputs matched so far
    for it in range(iters):
        for k in range(n_req):  # grant
            b = req_out[_ix(k)]
            if out_match[_ix(b)] != -1:
                continue
            free = cand[_ix(b)] & ~matched
            if free != 0:
                a = _rr_bit(free, st[_ix(g_at + b * g_step)])
                out_match[_ix(b)] = -2 - a
                cand[_ix(n_out + a)] |= np.int64(1) << b
        for k in range(n_req):  # accept
            a = req_in[_ix(k)]
            if in_match[_ix(a)] != -1 or cand[_ix(n_out + a)] == 0:
                continue
            b = _rr_bit(cand[_ix(n_out + a)], st[_ix(a_at + a * a_step)])
            cand[_ix(n_out + a)] = 0
            in_match[_ix(a)] = b
            out_match[_ix(b)] = a
            matched |= np.int64(1) << a
            if it == 0:
                st[_ix(g_at + b * g_step)] = _next(a, n_in)
                st[_ix(a_at + a * a_step)] = _next(b, n_out)
        # grants not accepted are released for the next iteration (every granted input
        # accepted one of them, which emptied its mask)
        for k in range(n_req):
            b = req_out[_ix(k)]
            if out_match[_ix(b)] < -1:
                out_match[_ix(b)] = -1


@numba.njit(cache=True, nogil=True, forceinline=True, error_model="numpy")
def _supersedes(st, o_pt, i, v, held, V):  # noqa: N803
    """Whether VC v of input port i goes before VC ``held`` of the same port to the switch:
    one VC per (input, output) asks, the first at or after the port's round-robin pointer
    (BookSim2's ``Supersedes``)."""
    rr = st[_ix(o_pt + i * N_PT + PT_SW_RR)]
    dv, dc = v - rr, held - rr
    if dv < 0:
        dv += V
    if dc < 0:
        dc += V
    return dv < dc


@numba.njit(cache=True, nogil=True, forceinline=True, error_model="numpy")
def _va_match(cfg, st, ws, rb, n_va, n_in):
    """VC allocation of the router at ``rb`` over its ``n_va`` requests (``ws.req_in``:
    input VCs, or branches, of ``n_in``; ``ws.req_out``: output VCs); grants in ``ws.m_in``.
    Its grant pointers and then its accept pointers are at ``cfg.ova``."""
    PV = cfg.p * cfg.v  # noqa: N806
    o_va = rb + cfg.ova
    _match(ws.req_in, ws.req_out, n_va, n_in, PV, st, o_va, 1, o_va + PV, 1, cfg.iters,
           cfg.alloc, ws.m_in, ws.m_out, ws.cand)  # fmt: skip


@numba.njit(cache=True, nogil=True, forceinline=True, error_model="numpy")
def _sw_request(cfg, st, ws, o_pt, i, o, v, b, n_sa, sa_in, sa_out, clash):
    """VC v of input port i asks for output o of the switch (for its branch b): one VC per
    (input, output) asks, the first at or after the port's round-robin pointer. Returns the
    requests' count, the inputs and outputs asked for (bit masks) and whether two requests
    share an input or an output."""
    at = i * cfg.p + o
    held_v = ws.sw_vc[_ix(at)]
    if held_v < 0:
        ws.sreq_in[_ix(n_sa)] = i
        ws.sreq_out[_ix(n_sa)] = o
        n_sa += 1
        ws.sw_vc[_ix(at)] = v
        ws.sw_br[_ix(at)] = b
        clash = clash or (sa_in >> i) & 1 == 1 or (sa_out >> o) & 1 == 1
        sa_in |= np.int64(1) << i
        sa_out |= np.int64(1) << o
    elif _supersedes(st, o_pt, i, v, held_v, cfg.v):
        ws.sw_vc[_ix(at)] = v
        ws.sw_br[_ix(at)] = b
    return n_sa, sa_in, sa_out, clash


@numba.njit(cache=True, nogil=True, forceinline=True, error_model="numpy")
def _sw_alloc(cfg, st, ws, rb, n_sa, clash):
    """Switch allocation of the router at ``rb`` over its ``n_sa`` requests (``ws.sreq_in``,
    ``ws.sreq_out``); grants in ``ws.m_in``. When no two requests share an input or an
    output each is granted, as either allocator does."""
    if n_sa == 0:
        return
    P = cfg.p  # noqa: N806
    o_pt = rb + cfg.opt
    if not clash:
        for k in range(n_sa):
            i, o = ws.sreq_in[_ix(k)], ws.sreq_out[_ix(k)]
            ws.m_in[_ix(i)] = o
            st[_ix(o_pt + o * N_PT + PT_SW_G)] = _next(i, P)
            st[_ix(o_pt + i * N_PT + PT_SW_A)] = _next(o, P)
        return
    _match(ws.sreq_in, ws.sreq_out, n_sa, P, P, st, o_pt + PT_SW_G, N_PT, o_pt + PT_SW_A, N_PT,
           cfg.iters, cfg.alloc, ws.m_in, ws.m_out, ws.cand)  # fmt: skip
