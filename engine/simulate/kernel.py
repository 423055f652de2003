"""The cycle loop: input-queued virtual-channel routers, flit by flit, in numba kernels.

Each router follows BookSim2's ``iq_router`` stage by stage. A head flit that reaches an
idle input VC is routed (``routing_delay``), then competes for an output VC of the port(s)
its route names (VC allocation, ``vc_alloc_delay``), then each flit competes for the switch
(``sw_alloc_delay``) once the downstream buffer has a credit for it, crosses the switch
(``st_delay``) and the link (its latency), and is read by the next router one cycle later.
A flit leaving an input buffer sends a credit upstream (link latency + 1, then
``credit_delay``). Allocators are iSLIP (BookSim2's ``islip``, ``alloc_iters`` iterations)
or separable input-first round robin; an input port competes for the switch with one VC per
output, chosen round robin as BookSim2 does. An output VC is free again once the tail has
left. Off-chip outputs send one flit every ``serialization`` cycles.

Every packet carries a dimension order (``PK_ROUTE``: X then Y, or Y then X; the routing's,
or for O1TURN drawn per packet, ``engine.hardware.routing``) and a *range* of its destination
terminals in ``dest``, sorted in that order (X, Y, port for X then Y). Where the routing
gives each order its own virtual channels (``cfg.vmask_x``, ``cfg.vmask_y``, as BookSim2's
``xy_yx_mesh``), a head asks only for its order's VCs of a router link. A router splits the
range into branches, one per output port; a packet with one destination has one branch
(unicast), a multicast packet branches where its destinations' routes part, and the router
forwards each flit on every branch before it frees the flit's buffer slot. A branch that
carries only part of the range travels on as a new packet record (``PK_PARENT`` is the
packet the source sent).

Terminals create packets by a Bernoulli process (drawn as geometric gaps) or receive a
mapping's packets by release time, and inject one flit per cycle, taking a free VC round
robin for each packet (as BookSim2's traffic manager does). At the sink a flit is
*processed*: at once (sink mode 0) or by the core's server, one packet after another, the
packet for destination ``dest[k]`` taking ``dsvc[k]`` cycles; its buffer slots' credits go
back only then, so a busy core pushes back into the mesh.

The loop is event-driven but cycle-exact: a router is visited only in the cycles in which
something is due there (a flit or a credit arrives, or a VC may take its next stage). Due
routers wait on a timing wheel of ``WHEEL`` cycles (later ones in a heap); a cycle in which
nothing is due anywhere is skipped. A VC that waits for a free output VC or a credit is not
visited, and the cycles it waits are added to its router's stall counters when it moves
again. The order in which a cycle's routers are visited does not matter: everything one
router sends another arrives in a later cycle. A router visited in cycle t goes on with its
next cycles at once while they are within ``cfg.ahead`` of t (``machine.run_ahead``: no
flit or credit still to be sent can reach it before then), never past the span's end.

Parallel meshes (``Topology.meshes``) are copies of the router grid side by side in the
same arrays: a router's ``M_X``/``M_Y`` are its position within its copy and a terminal's
``NS_X``/``NS_Y`` its grid position, so routing keeps a packet on the copy its source
injected into, and every copy's local output port delivers to the core. The copies share
only the cores: a core's server (sink mode 1) takes every copy's packets in the order they
arrive, and since one copy's router may have run ahead of another's, a tail waits in ``sq``
until the cycle after it left its router, when every router has simulated that cycle, and
is served then, in (arrival, router, port) order (``_sq_push``, ``_serve_due``).

Runs whose packets have one destination each and whose allocations take one cycle go through
the unicast kernel instead (``machine.Machine`` chooses; ``cfg.unicast``): the same router
source (``_router``, ``_send``), compiled a second time with its ``unicast`` flag a constant,
and the same results, bit for bit, with less bookkeeping. A sender writes a flit straight
into the buffer it arrives in, with its cycle (``_put``), and routes a head that reaches an
idle VC, so there is no link queue to read and the router is due only when the flit can act;
the busy VCs and the held output VCs are bit masks; each output VC's returning credits wait
in its own ring, counted when asked for (``_credits``), and wake the router only when a VC
waits for them; a pass over the VCs picks them by masks, not by a branch per VC. It is over
twice as fast on uniform traffic (docs/performance.md). A trace reads a port's occupancy as a
flit leaves it and at a window's end (``_seen``: the flits in its buffers that have arrived),
and a tracked packet's hop starts as its head is put into the next buffer.

State is flat: every router's, terminal's and packet's record is a block of an int64 array,
laid out by ``engine.simulate.records``. ``run`` advances a whole span of cycles per call
and returns a status, so Python only steps in to grow arrays, change phase or stop.

The small helpers and the router are inlined by LLVM (``forceinline``), not by numba's own
IR inliner (``inline="always"``): the machine code is the same or better, and numba does not
re-type the router's body at every call site, which made compiling ``run`` take over three
minutes of the install's warm-up.
"""

from __future__ import annotations

import math

import numba
import numpy as np
from numba.cpython.unsafe.numbers import trailing_zeros

from engine.hardware.routing import KERNEL_EITHER
from engine.heap import pop, update

# isort: off
from engine.simulate.records import (BR_HI, BR_LO, BR_OVC, BR_PK, BR_PORT, BR_SENT, BR_VAGR, CQ_T,
    CQ_V, C_DELIVERED, C_FHEAP_N, C_GCAL_N, C_GEN_P, C_GHEAP_N, C_INFLIGHT, C_LAST_DONE, C_LOG_N,
    C_MEASURE_FROM, C_MEASURE_TO, C_NFREE, C_NPK, C_NSRC, C_OPEN_GROUP, C_PROGRESS, C_REL_PTR,
    C_SQN, C_STAMP, C_T, C_TRACK, C_TRACK_ID, C_TRACK_K, C_TRACK_N, C_VISITS, C_WINDOW, DEADLOCK,
    DONE, FLIT, FULL, GCAL, G_DONE, G_LEFT, G_OPEN, H_ARRIVE, H_HEAD, H_IN, H_OUT, H_READY,
    H_ROUTER, H_SW_LOST, H_TAIL, H_VA, H_VC_BUSY, H_VC_LOST, IDLE_END, LQ_F, LQ_T, LQ_V, L_ATIME,
    L_CTIME, L_DST, L_HOPS, L_ID, L_ITIME, L_MEAS, L_ROUTE, L_SIZE, L_SRC, M_BUSY, M_CQ, M_CWAIT,
    M_HELD, M_LQ, M_STALL, M_VAS, M_VCS, M_WIN, M_X, M_Y, ND_ACC, ND_ACTIVE, ND_CQ_H, ND_CQ_N,
    ND_CREATED, ND_FREE, ND_LAST, ND_QHEAD, ND_QTAIL, ND_SENT, ND_VC, NEVER, NS_INJ_LAT, NS_PORT,
    NS_ROUTER, NS_X, NS_Y, NV_CRED, NV_OWNER, N_BR, N_CQ, N_CTR, N_HOP, N_LOG, N_LQ, N_MISC, N_NS,
    N_NV, N_OV, N_PK, N_PT, N_SQ, N_T, N_VC, N_WAIT, OV_CREDITS, OV_CR_H, OV_CR_N, OV_OWNER,
    PK_ATIME, PK_CTIME, PK_DONE, PK_GROUP, PK_HI, PK_HOPS, PK_ID, PK_ITIME, PK_LO, PK_MEAS, PK_NEXT,
    PK_PARENT, PK_ROUTE, PK_SIZE, PK_SRC, PT_CQ_H, PT_CQ_N, PT_LQ_H, PT_LQ_N, PT_OUT_FREE, PT_SEEN,
    PT_SW_A, PT_SW_G, PT_SW_RR, SQ_ARR, SQ_O, SQ_OV, SQ_P, SQ_R, S_NO_CREDIT, S_SW_LOST, S_VC_BUSY,
    S_VC_LOST, T_LAT, T_LINK, T_NBR, T_OUT_NODE, T_SER, VC_BLOCKED, VC_BLOCK_WHY, VC_BRN, VC_DEST,
    VC_FROM, VC_HEAD, VC_N, VC_OUT, VC_OVC, VC_PK, VC_POPPED, VC_SA_GR, VC_SA_T, VC_SENT, VC_STATE,
    VC_VA_T, V_ACTIVE, V_IDLE, V_VCALLOC, WHEEL, W_OF_STALL, W_SWITCH, W_VC, Scratch,
)  # fmt: skip
# isort: on

__all__ = [
    "close_windows", "columns", "latency_load", "measured_pending", "rng_seed", "run",
    "workspace",
]  # fmt: skip


# ------------------------------------------------------------------ indices
@numba.njit(cache=True, nogil=True, forceinline=True, error_model="numpy")
def _ix(i):
    """An index into the kernel's arrays, as unsigned: numba then skips the wrap-around of
    negative indices (a compare, a select and the array's length kept live at every access;
    the kernel never indexes from the end), which makes the loop about 1.25× faster."""
    return np.uint64(i)


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


# ------------------------------------------------------------------ scheduling
@numba.njit(cache=True, nogil=True, _nrt=False, forceinline=True, error_model="numpy")
def _schedule(dw, ctr, r, when):
    """Router r has something due at cycle ``when`` (≥ now); keeps the earliest due time.

    A router due within ``WHEEL`` cycles goes on the wheel's slot for that cycle, a later
    one into the heap; an entry whose cycle is no longer the router's due time is stale and
    skipped (a router moved earlier leaves its old entry behind).
    """
    due, wheel, wn, fheap, fpri, fpos, mark = dw
    if when >= due[_ix(r)]:
        return
    due[_ix(r)] = when
    if when - ctr[C_T] < WHEEL:
        s = when & (WHEEL - 1)
        cap = wheel.shape[1]
        k = wn[_ix(s)]
        if k == cap:  # full of stale entries: keep each router due at ``when`` once
            ctr[C_STAMP] += 1
            stamp = ctr[C_STAMP]
            k = 0
            for j in range(cap):
                e = wheel[_ix(s), _ix(j)]
                if due[_ix(e)] == when and mark[_ix(e)] != stamp:
                    mark[_ix(e)] = stamp
                    wheel[_ix(s), _ix(k)] = e
                    k += 1
        wheel[_ix(s), _ix(k)] = r
        wn[_ix(s)] = k + 1
    else:
        ctr[C_FHEAP_N] = update(fheap, fpri, fpos, ctr[C_FHEAP_N], r, -float(when))


# ------------------------------------------------------------------ allocation
@numba.njit(cache=True, nogil=True, forceinline=True, error_model="numpy")
def _next(k, size):
    """``(k + 1) % size`` for 0 ≤ k < size, without a division (the loops avoid them)."""
    return 0 if k + 1 == size else k + 1


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


# ------------------------------------------------------------------ routing
@numba.njit(cache=True, nogil=True, forceinline=True, error_model="numpy")
def _dor_port(ns, d, x, y, yx):
    """The output port by which a router at (x, y) sends towards terminal d, in dimension
    order (X then Y, or Y then X when ``yx`` is 1)."""
    dx, dy = ns[_ix(d * N_NS + NS_X)], ns[_ix(d * N_NS + NS_Y)]
    # as arithmetic, not branches: where a packet turns is data a branch cannot predict, and
    # so is its order where packets take either (O1TURN)
    mx, my = np.int64(dx != x), np.int64(dy != y)
    px, py = np.int64(dx < x), 2 + np.int64(dy < y)  # W (1) or E (0); N (3) or S (2)
    local = ns[_ix(d * N_NS + NS_PORT)]
    x_first = mx * px + (1 - mx) * (my * py + (1 - my) * local)
    y_first = my * py + (1 - my) * (mx * px + (1 - mx) * local)
    return x_first + yx * (y_first - x_first)


@numba.njit(cache=True, nogil=True, forceinline=True, error_model="numpy")
def _vc_mask(cfg, yx, o):
    """The output VCs (bit v: VC v) of port o a packet of order ``yx`` may take: its order's
    class on a router link (``cfg.vmask_x``, ``cfg.vmask_y``), every VC into a core."""
    full = (np.int64(1) << cfg.v) - 1
    mask = cfg.vmask_x + np.int64(yx) * (cfg.vmask_y - cfg.vmask_x)  # (no branch: see _dor_port)
    return full + np.int64(o < 4) * (mask - full)


@numba.njit(cache=True, nogil=True, _nrt=False, forceinline=True, error_model="numpy")
def _start_packet(cfg, ns, st, pk, dest, rb, r, iv, t_from):
    """The front flit of input VC ``iv`` of router r (block ``rb``) is a head: split its
    destinations into branches (route); VC allocation may start at ``t_from + routing_delay``."""
    B, D = cfg.b, cfg.d  # noqa: N806
    vb = rb + cfg.ovc + iv * N_VC
    bb = rb + cfg.obr + iv * B * N_BR
    p = st[_ix(rb + cfg.obuf + iv * D + st[_ix(vb + VC_HEAD)])] // FLIT
    st[_ix(vb + VC_PK)] = p
    st[_ix(vb + VC_POPPED)] = 0
    x, y = st[_ix(rb + cfg.omisc + M_X)], st[_ix(rb + cfg.omisc + M_Y)]
    yx = pk[_ix(p * N_PK + PK_ROUTE)]
    nb = 0
    for k in range(pk[_ix(p * N_PK + PK_LO)], pk[_ix(p * N_PK + PK_HI)]):
        port = _dor_port(ns, dest[_ix(k)], x, y, yx)
        # a branch is a run of consecutive destinations that leave by the same port
        if nb > 0 and st[_ix(bb + (nb - 1) * N_BR + BR_PORT)] == port:
            st[_ix(bb + (nb - 1) * N_BR + BR_HI)] = k + 1
        else:
            e = bb + nb * N_BR
            st[_ix(e + BR_PORT)] = port
            st[_ix(e + BR_OVC)] = -1
            st[_ix(e + BR_SENT)] = 0
            st[_ix(e + BR_LO)] = k
            st[_ix(e + BR_HI)] = k + 1
            st[_ix(e + BR_PK)] = -1
            st[_ix(e + BR_VAGR)] = -1
            nb += 1
    st[_ix(vb + VC_BRN)] = nb
    st[_ix(vb + VC_STATE)] = V_VCALLOC
    st[_ix(vb + VC_FROM)] = t_from + cfg.rd
    st[_ix(vb + VC_VA_T)] = -1
    st[_ix(vb + VC_SA_T)] = -1


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
def _block(st, vb, t, why):
    """The VC at ``vb`` waits from cycle t for a reason (a stall counter) it cannot act on."""
    if st[_ix(vb + VC_BLOCKED)] < 0:
        st[_ix(vb + VC_BLOCKED)] = t
        st[_ix(vb + VC_BLOCK_WHY)] = why


@numba.njit(cache=True, nogil=True, forceinline=True, error_model="numpy")
def _unblock(st, vb, sb, t, win_wait, window, r):
    """The VC at ``vb`` is evaluated again at t: the cycles it waited count as stalls (``sb``:
    its router's stall counters) and, in a traced run (``window`` > 0), in the windows they
    fell in."""
    b = st[_ix(vb + VC_BLOCKED)]
    if b >= 0:
        if t > b:
            why = st[_ix(vb + VC_BLOCK_WHY)]
            st[_ix(sb + why)] += t - b
            if window > 0:
                _wait_windows(win_wait, window, r, W_OF_STALL[why], b, t)
        st[_ix(vb + VC_BLOCKED)] = -1


@numba.njit(cache=True, nogil=True, forceinline=True, error_model="numpy")
def _wait_windows(win_wait, window, r, group, b, t):
    """A VC of router r waited (for ``group``'s reason) from cycle b to t − 1: each trace
    window gets the cycles of the wait that fell in it."""
    w = b // window
    while b < t:
        end = (w + 1) * window
        if end > t:
            end = t
        win_wait[_ix(w), _ix(r * N_WAIT + group)] += end - b
        b = end
        w += 1


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
def _can_ask(cfg, st, o_ov, bb, nbr, V, yx):  # noqa: N803
    """Whether a routed head (branches at ``bb``, its packet's order ``yx``) may ask for
    output VCs: every port it still needs has a free one it may take. A multicast head that
    asked while one of its ports was wholly held would win VCs on its other ports only to
    give them back (it takes them in port order), and heads that can go would lose those
    allocations to it, round after round."""
    for b in range(nbr):
        e = bb + b * N_BR
        if st[_ix(e + BR_OVC)] >= 0:
            continue
        o = st[_ix(e + BR_PORT)]
        vm = _vc_mask(cfg, yx, o)
        free = False
        for ov in range(V):
            if (vm >> ov) & 1 and st[_ix(o_ov + (o * V + ov) * N_OV + OV_OWNER)] < 0:
                free = True
                break
        if not free:
            return False
    return True


# ------------------------------------------------------------------ the tracked packet
@numba.njit(cache=True, nogil=True, forceinline=True, error_model="numpy")
def _hop(ctr, r):
    """The offset in ``ctr`` of the tracked packet's hop at router r (-1: none logged)."""
    for h in range(ctr[C_TRACK_N] - 1, -1, -1):
        at = N_CTR + h * N_HOP
        if ctr[_ix(at + H_ROUTER)] == r:
            return at
    return -1


@numba.njit(cache=True, nogil=True, _nrt=False, error_model="numpy")
def _track_arrive(ctr, r, i, t):
    """The tracked packet's head reaches input port i of router r at cycle t: a new hop."""
    at = N_CTR + ctr[C_TRACK_N] * N_HOP
    if at + N_HOP > ctr.size:
        return
    for f in range(N_HOP):
        ctr[_ix(at + f)] = -1 if f < H_VC_BUSY else 0
    ctr[_ix(at + H_ROUTER)] = r
    ctr[_ix(at + H_IN)] = i
    ctr[_ix(at + H_ARRIVE)] = t
    ctr[C_TRACK_N] += 1


@numba.njit(cache=True, nogil=True, _nrt=False, error_model="numpy")
def _track_go(ctr, st, vb, r, t):
    """The tracked packet's VC at ``vb`` asks for an allocation at t: its route was ready at
    ``VC_FROM`` (the first time), and the cycles it was blocked count as its head's waits
    (its body's, once the head has left, are the tail's lag)."""
    at = _hop(ctr, r)
    if at < 0:
        return
    if ctr[_ix(at + H_READY)] < 0:
        ctr[_ix(at + H_READY)] = st[_ix(vb + VC_FROM)]
    b = st[_ix(vb + VC_BLOCKED)]
    if b >= 0 and t > b and ctr[_ix(at + H_HEAD)] < 0:
        ctr[_ix(at + H_VC_BUSY + st[_ix(vb + VC_BLOCK_WHY)])] += t - b


@numba.njit(cache=True, nogil=True, forceinline=True, error_model="numpy")
def _track_count(ctr, st, vb, r, field, value):
    """``ctr``'s ``field`` of the tracked packet's hop at r becomes (or, for a wait of its
    head, grows by) ``value``, when the VC at ``vb`` holds the tracked packet."""
    if ctr[C_TRACK] >= 0 and st[_ix(vb + VC_PK)] == ctr[C_TRACK]:
        at = _hop(ctr, r)
        if at >= 0:
            if field >= H_VC_BUSY:
                if ctr[_ix(at + H_HEAD)] < 0:
                    ctr[_ix(at + field)] += value
            else:
                ctr[_ix(at + field)] = value


@numba.njit(cache=True, nogil=True, _nrt=False, error_model="numpy")
def _carry_occupancy(cfg, st, win_occ, r, w0, w1):
    """Trace windows ``w0`` … ``w1`` opened while router r had nothing to do: each one
    opened with the flits its input ports hold now (nothing moved since), its most held."""
    if st[_ix(r * cfg.rs + cfg.omisc + M_BUSY)] == 0:
        return  # an idle router's buffers are empty
    P, V = cfg.p, cfg.v  # noqa: N806
    o_vc = r * cfg.rs + cfg.ovc
    for i in range(P):
        occ = 0
        for v in range(V):
            occ += st[_ix(o_vc + (i * V + v) * N_VC + VC_N)]
        for w in range(w0, w1 + 1):
            if occ > win_occ[_ix(w), _ix(r * P + i)]:
                win_occ[_ix(w), _ix(r * P + i)] = occ


@numba.njit(cache=True, nogil=True, _nrt=False, error_model="numpy")
def _seen(cfg, st, win_occ, window, r, i, c0, c1, w1):
    """The unicast kernel's trace of input port i of router r over cycles ``c0`` … ``c1``:
    no flit has left it since c0 (``PT_SEEN``: the cycle after one last did), so it holds
    the flits of its buffers that had arrived (a flit is in its buffer from when it was
    sent, with the cycle it arrives: ``_put``), and they only grew. Each window from c0's to
    ``w1`` gets what it held at its last cycle up to c1, the most in that window since, as
    the general router's reads and ``_carry_occupancy`` give it."""
    V, D = cfg.v, cfg.d  # noqa: N806
    port = (st[_ix(r * cfg.rs + cfg.omisc + M_VCS)] >> (i * V)) & ((np.int64(1) << V) - 1)
    if port == 0:
        return  # its buffers are empty
    o_vc, o_bat = r * cfg.rs + cfg.ovc, r * cfg.rs + cfg.obat
    at = r * cfg.p + i
    for w in range(c0 // window, w1 + 1):
        c = (w + 1) * window - 1
        if c > c1:
            c = c1
        occ = 0
        m = port
        while m != 0:
            iv = i * V + trailing_zeros(m)
            m &= m - 1
            vb = o_vc + iv * N_VC
            n, h = st[_ix(vb + VC_N)], st[_ix(vb + VC_HEAD)]
            while n > 0:  # its flits arrive in order: those from the back not yet there
                k = h + n - 1
                if st[_ix(o_bat + iv * D + (k - D if k >= D else k))] <= c:
                    break
                n -= 1
            occ += n
        if occ > win_occ[_ix(w), _ix(at)]:
            win_occ[_ix(w), _ix(at)] = occ


@numba.njit(cache=True, nogil=True, _nrt=False, error_model="numpy")
def close_windows(cfg, st, win_occ, win_wait, window, t):
    """A traced run stopped at cycle ``t``: into copies of its trace arrays (as many windows
    as it has), what the routers hold now goes into every window opened after a router's
    last cycle (``_carry_occupancy``), and the waits still going on count up to ``t``
    (``_wait_windows``), as the routers would have done had they run on."""
    last = win_occ.shape[0] - 1
    P, V = cfg.p, cfg.v  # noqa: N806
    for r in range(cfg.nr):
        misc = r * cfg.rs + cfg.omisc
        if cfg.unicast:  # (the state is left as it is: the run may go on)
            for i in range(P):
                c0 = st[_ix(r * cfg.rs + cfg.opt + i * N_PT + PT_SEEN)]
                _seen(cfg, st, win_occ, window, r, i, c0, t - 1, last)
        elif st[_ix(misc + M_WIN)] < last:
            _carry_occupancy(cfg, st, win_occ, r, st[_ix(misc + M_WIN)] + 1, last)
        o_vc = r * cfg.rs + cfg.ovc
        for iv in range(P * V):
            vb = o_vc + iv * N_VC
            b = st[_ix(vb + VC_BLOCKED)]
            if 0 <= b < t:
                why = st[_ix(vb + VC_BLOCK_WHY)]
                _wait_windows(win_wait, window, r, W_OF_STALL[why], b, t)


# ------------------------------------------------------------------ a router's cycle
@numba.njit(cache=True, nogil=True, _nrt=False, forceinline=True, error_model="numpy")
def _router(unicast, cfg, tp, ns, st, nd, pk, dest, dsvc, grp, sq, pk_free, pk_log, link_flits,
            win_link, win_occ, win_wait, window, ctr, dw, r, t, ws):  # fmt: skip
    """Everything router r does in cycle t (it has something due); returns the next cycle in
    which it has something due (``NEVER``: none until a flit or credit arrives).

    One source for both kernels: ``unicast`` is a constant at each of the two calls in
    ``run``, and the router is inlined there, so each call is compiled with the other
    kernel's code removed. The unicast kernel (``cfg.unicast``: packets of one
    destination, allocations of one cycle) runs the same cycle, bit for bit
    (tests/engine/simulate/test_unicast.py), on leaner bookkeeping: the router keeps its busy
    VCs, its routed heads and its held output VCs as bit masks (``M_VCS``, ``M_VAS``,
    ``M_HELD``); the VCs ready now are found without a branch per VC (a mispredicted branch
    costs more than the rest of a VC's check), routed heads and VCs holding an output VC are
    taken in loops of their own; flits are already in their buffers (``_put``) and credits in
    their output VCs' rings (``_credits``), and a VC's switch grant is acted on as the
    allocator returns it."""
    req_in, req_out, sreq_in, sreq_out, m_in, m_out, cand, sw_vc, sw_br, cur = ws
    P, V, B, D = cfg.p, cfg.v, cfg.b, cfg.d  # noqa: N806
    vd, sd, st_delay = cfg.vd, cfg.sd, cfg.st_delay
    ql, qc = cfg.ql, cfg.qc
    rb = r * cfg.rs
    o_vc, o_ov, o_br, o_pt = rb + cfg.ovc, rb + cfg.oov, rb + cfg.obr, rb + cfg.opt
    o_lq, o_cq, o_cr = rb + cfg.olq, rb + cfg.ocq, rb + cfg.ocr
    o_buf, o_bat, o_va = rb + cfg.obuf, rb + cfg.obat, rb + cfg.ova
    o_act = rb + cfg.oact
    iters, alloc = cfg.iters, cfg.alloc
    misc = rb + cfg.omisc
    busy, stalls = misc + M_BUSY, misc + M_STALL
    o_misc_iv = misc + N_MISC
    o_vm = o_misc_iv + 2 * P * V  # (unicast) per input VC: the output VCs its packet may take
    vfull = (np.int64(1) << V) - 1
    moved = 0
    n_va = 0
    n_sa = 0
    na = 0  # the busy VCs (in ``cur``)
    va_open = False  # some VC is in VC allocation
    sa_open = False  # … or in switch allocation
    sa_in = sa_out = 0  # (unicast) the inputs and outputs of the switch requests
    sa_clash = False  # … some of which share an input or an output
    asked = np.int64(0)  # (unicast) the VCs that asked for the switch
    acted = np.int64(0)  # … or for an output VC
    win = ctr[C_WINDOW]  # (the unicast kernel traces its buffers as a flit leaves: ``_send``)
    if not unicast and win > st[_ix(misc + M_WIN)]:  # traced, and windows opened since its
        # last cycle
        _carry_occupancy(cfg, st, win_occ, r, st[_ix(misc + M_WIN)] + 1, win)
        st[_ix(misc + M_WIN)] = win
    # ---------------------------------------------------------- read inputs
    # (the unicast kernel: flits are in their buffers and credits in their rings already)
    mask = 0 if unicast else st[_ix(misc + M_LQ)]
    for i in range(P):
        if (mask >> i) & 1 == 0:
            continue
        pb = o_pt + i * N_PT
        while st[_ix(pb + PT_LQ_N)] > 0:
            h = st[_ix(pb + PT_LQ_H)]
            e = o_lq + (i * ql + h) * N_LQ
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
            st[_ix(o_buf + iv * D + (k - D if k >= D else k))] = f
            st[_ix(vb + VC_N)] = n + 1
            if win >= 0:
                occ = 0
                for vv in range(V):
                    occ += st[_ix(o_vc + (i * V + vv) * N_VC + VC_N)]
                if occ > win_occ[_ix(win), _ix(r * P + i)]:
                    win_occ[_ix(win), _ix(r * P + i)] = occ
            if st[_ix(vb + VC_STATE)] == V_IDLE:  # the VC joins the router's busy list
                nbusy = st[_ix(busy)]
                st[_ix(o_act + nbusy)] = iv
                st[_ix(o_act + P * V + iv)] = nbusy
                st[_ix(busy)] = nbusy + 1
                _start_packet(cfg, ns, st, pk, dest, rb, r, iv, t)
    mask = 0 if unicast else st[_ix(misc + M_CQ)]
    for o in range(P):
        if (mask >> o) & 1 == 0:
            continue
        pb = o_pt + o * N_PT
        while st[_ix(pb + PT_CQ_N)] > 0:
            h = st[_ix(pb + PT_CQ_H)]
            e = o_cq + (o * qc + h) * N_CQ
            if st[_ix(e + CQ_T)] > t:
                break
            st[_ix(o_ov + (o * V + st[_ix(e + CQ_V)]) * N_OV + OV_CREDITS)] += 1
            h += 1
            st[_ix(pb + PT_CQ_H)] = 0 if h == qc else h
            st[_ix(pb + PT_CQ_N)] -= 1
            if st[_ix(pb + PT_CQ_N)] == 0:
                st[_ix(misc + M_CQ)] &= ~(1 << o)
    # ---------------------------------------------------------- requests
    # VC allocation by the routed heads, switch allocation by the VCs that hold an output VC
    # (a VC that wins its output VC this cycle competes for the switch from the next)
    held = st[_ix(misc + M_HELD)] if unicast else 0  # (unicast) the output VCs held
    vas = st[_ix(misc + M_VAS)] if unicast else 0  # (unicast) the routed heads
    va_ports = 0  # (unicast) the output ports asked for in VC allocation (their VCs: va_vcs[o])
    va_vcs = sw_br  # (unicast scratch: zero between calls)
    if unicast:
        ready = np.int64(0)  # the busy VCs whose next stage may run now (no branch per VC)
        m = st[_ix(misc + M_VCS)]
        while m != 0:
            iv = trailing_zeros(m)
            m &= m - 1
            ready |= np.int64(st[_ix(o_vc + iv * N_VC + VC_FROM)] <= t) << iv
        m = ready & vas  # routed heads: VC allocation
        while m != 0:
            iv = trailing_zeros(m)
            m &= m - 1
            vb = o_vc + iv * N_VC
            o = st[_ix(vb + VC_OUT)]
            if ~(held >> (o * V)) & st[_ix(o_vm + iv)] == 0:
                _block(st, vb, t, S_VC_BUSY)  # every VC of its port it may take is held
                continue
            va_ports |= 1 << o
            va_vcs[_ix(o)] |= np.int64(1) << iv  # it asks for every free VC of o it may take
            acted |= np.int64(1) << iv
            if ctr[C_TRACK] >= 0 and st[_ix(vb + VC_PK)] == ctr[C_TRACK]:
                _track_go(ctr, st, vb, r, t)
            _unblock(st, vb, stalls, t, win_wait, window, r)
        m = ready & ~vas  # VCs holding an output VC: switch allocation
        while m != 0:
            iv = trailing_zeros(m)
            m &= m - 1
            vb = o_vc + iv * N_VC
            o = st[_ix(vb + VC_OUT)]
            if st[_ix(vb + VC_N)] == 0 or st[_ix(o_bat + iv * D + st[_ix(vb + VC_HEAD)])] > t:
                continue  # its next flit has not arrived
            if _credits(st, o_ov, o_cr, o * V + st[_ix(vb + VC_OVC)], D, t) <= 0:
                _block(st, vb, t, S_NO_CREDIT)  # the downstream buffer is full
                st[_ix(misc + M_CWAIT)] |= np.int64(1) << (o * V + st[_ix(vb + VC_OVC)])
                continue
            if st[_ix(o_pt + o * N_PT + PT_OUT_FREE)] > t + st_delay:
                continue  # the link still serializes an earlier flit
            i, v = st[_ix(o_misc_iv + iv)], st[_ix(o_misc_iv + P * V + iv)]
            held_v = sw_vc[_ix(i * P + o)]
            if held_v < 0:
                sreq_in[_ix(n_sa)] = i
                sreq_out[_ix(n_sa)] = o
                n_sa += 1
                sw_vc[_ix(i * P + o)] = v
                sa_clash = sa_clash or (sa_in >> i) & 1 == 1 or (sa_out >> o) & 1 == 1
                sa_in |= 1 << i
                sa_out |= 1 << o
            elif _supersedes(st, o_pt, i, v, held_v, V):  # one VC per (input, output)
                sw_vc[_ix(i * P + o)] = v
            if ctr[C_TRACK] >= 0 and st[_ix(vb + VC_PK)] == ctr[C_TRACK]:
                _track_go(ctr, st, vb, r, t)
            _unblock(st, vb, stalls, t, win_wait, window, r)
            st[_ix(misc + M_CWAIT)] &= ~(np.int64(1) << (o * V + st[_ix(vb + VC_OVC)]))
            asked |= np.int64(1) << iv
            acted |= np.int64(1) << iv
    else:  # one pass over the busy VCs (a copy: sending may take some off the list)
        na = st[_ix(busy)]
        for k in range(na):
            cur[_ix(k)] = st[_ix(o_act + k)]
        for kv in range(na):
            iv = cur[_ix(kv)]
            vb = o_vc + iv * N_VC
            state = st[_ix(vb + VC_STATE)]
            if state == V_VCALLOC:
                if st[_ix(vb + VC_VA_T)] >= 0:
                    va_open = True
                    continue
                if st[_ix(vb + VC_FROM)] > t:
                    continue
                bb = o_br + iv * B * N_BR
                yx = pk[_ix(st[_ix(vb + VC_PK)] * N_PK + PK_ROUTE)]
                if not _can_ask(cfg, st, o_ov, bb, st[_ix(vb + VC_BRN)], V, yx):
                    _block(st, vb, t, S_VC_BUSY)  # every VC of a port it needs is held
                    continue
                for b in range(st[_ix(vb + VC_BRN)]):
                    e = bb + b * N_BR
                    if st[_ix(e + BR_OVC)] >= 0:
                        continue
                    o = st[_ix(e + BR_PORT)]
                    vm = _vc_mask(cfg, yx, o)  # its order's VCs
                    for ov in range(V):
                        if (vm >> ov) & 1 and st[_ix(o_ov + (o * V + ov) * N_OV + OV_OWNER)] < 0:
                            req_in[_ix(n_va)] = iv * B + b
                            req_out[_ix(n_va)] = o * V + ov
                            n_va += 1
                if ctr[C_TRACK] >= 0 and st[_ix(vb + VC_PK)] == ctr[C_TRACK]:
                    _track_go(ctr, st, vb, r, t)
                _unblock(st, vb, stalls, t, win_wait, window, r)
                st[_ix(vb + VC_VA_T)] = t + vd - 1
                va_open = True
            elif state == V_ACTIVE:
                if st[_ix(vb + VC_SA_T)] >= 0:
                    sa_open = True
                    continue
                if st[_ix(vb + VC_FROM)] > t or st[_ix(vb + VC_N)] == 0:
                    continue
                i, v = st[_ix(o_misc_iv + iv)], st[_ix(o_misc_iv + P * V + iv)]
                avail = st[_ix(vb + VC_POPPED)] + st[_ix(vb + VC_N)]  # flits received
                size = pk[_ix(st[_ix(vb + VC_PK)] * N_PK + PK_SIZE)]
                if avail > size:
                    avail = size
                asks = False
                waiting = False
                bb = o_br + iv * B * N_BR
                for b in range(st[_ix(vb + VC_BRN)]):
                    e = bb + b * N_BR
                    if st[_ix(e + BR_SENT)] >= avail:
                        continue  # this branch waits for the next flit
                    o = st[_ix(e + BR_PORT)]
                    if st[_ix(o_ov + (o * V + st[_ix(e + BR_OVC)]) * N_OV + OV_CREDITS)] <= 0:
                        waiting = True  # the downstream buffer is full
                        continue
                    if st[_ix(o_pt + o * N_PT + PT_OUT_FREE)] > t + sd - 1 + st_delay:
                        continue  # the link still serializes an earlier flit
                    # one VC per (input, output), round robin from sw_rr (BookSim2's Supersedes)
                    held_v = sw_vc[_ix(i * P + o)]
                    if held_v < 0:
                        sreq_in[_ix(n_sa)] = i
                        sreq_out[_ix(n_sa)] = o
                        n_sa += 1
                        sw_vc[_ix(i * P + o)] = v
                        sw_br[_ix(i * P + o)] = b
                    elif _supersedes(st, o_pt, i, v, held_v, V):
                        sw_vc[_ix(i * P + o)] = v
                        sw_br[_ix(i * P + o)] = b
                    asks = True
                if asks:
                    if ctr[C_TRACK] >= 0 and st[_ix(vb + VC_PK)] == ctr[C_TRACK]:
                        _track_go(ctr, st, vb, r, t)
                    _unblock(st, vb, stalls, t, win_wait, window, r)
                    st[_ix(vb + VC_SA_T)] = t + sd - 1
                    st[_ix(vb + VC_SA_GR)] = -1
                    sa_open = True
                elif waiting:
                    _block(st, vb, t, S_NO_CREDIT)
    # ---------------------------------------------------------- VC allocation
    # the unicast kernel port by port: a VC asks only for the VCs of its route's port, so the
    # ports' requests are apart and the allocator matches each on its own as it would all at
    # once
    while va_ports != 0:
        o = trailing_zeros(va_ports)
        va_ports &= va_ports - 1
        vm = va_vcs[_ix(o)]
        va_vcs[_ix(o)] = 0
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
                    req_in[_ix(n_va)] = a
                    req_out[_ix(n_va)] = trailing_zeros(ff)
                    n_va += 1
                    ff &= ff - 1
            _match(req_in, req_out, n_va, P * V, P * V, st, o_va, 1, o_va + P * V, 1, iters,
                   alloc, m_in, m_out, cand)  # fmt: skip
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
                st[_ix(stalls + S_VC_LOST)] += 1
                if win >= 0:
                    win_wait[_ix(win), _ix(r * N_WAIT + W_VC)] += 1
                _track_count(ctr, st, vb, r, H_VC_LOST, 1)
            st[_ix(vb + VC_FROM)] = t + 1
        st[_ix(misc + M_HELD)] = held
        st[_ix(misc + M_VAS)] = vas
    if n_va > 0 and not unicast:  # every branch of every head at once
        _match(req_in, req_out, n_va, P * V * B, P * V, st, o_va, 1, o_va + P * V, 1, iters,
               alloc, m_in, m_out, cand)  # fmt: skip
        for k in range(n_va):
            a = req_in[_ix(k)]
            if m_in[_ix(a)] >= 0:
                st[_ix(o_br + a * N_BR + BR_VAGR)] = (
                    m_in[_ix(a)] - st[_ix(o_br + a * N_BR + BR_PORT)] * V
                )
    if va_open:  # VC allocation ends (this cycle's, and earlier ones with longer delays)
        for kv in range(na):
            iv = cur[_ix(kv)]
            vb = o_vc + iv * N_VC
            if st[_ix(vb + VC_STATE)] != V_VCALLOC or st[_ix(vb + VC_VA_T)] != t:
                continue
            done = True
            lost = False
            bb = o_br + iv * B * N_BR
            nbr = st[_ix(vb + VC_BRN)]
            # a multicast head takes its branches' output VCs in port order (E, W, S, N,
            # then the local ports): a grant is kept only when every branch on a lower
            # port holds its VC, so heads never wait on each other in a cycle
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
                st[_ix(stalls + S_VC_LOST)] += 1
                if win >= 0:
                    win_wait[_ix(win), _ix(r * N_WAIT + W_VC)] += 1
                _track_count(ctr, st, vb, r, H_VC_LOST, 1)
            st[_ix(vb + VC_VA_T)] = -1
            st[_ix(vb + VC_FROM)] = t + 1
            if done:
                st[_ix(vb + VC_STATE)] = V_ACTIVE
                _track_count(ctr, st, vb, r, H_VA, t)
    # ---------------------------------------------------------- switch allocation
    if n_sa > 0:
        if unicast and not sa_clash:  # no two requests share an input or an output: each
            for k in range(n_sa):  # is granted (as either allocator does)
                i, o = sreq_in[_ix(k)], sreq_out[_ix(k)]
                m_in[_ix(i)] = o
                st[_ix(o_pt + o * N_PT + PT_SW_G)] = _next(i, P)
                st[_ix(o_pt + i * N_PT + PT_SW_A)] = _next(o, P)
        else:
            _match(sreq_in, sreq_out, n_sa, P, P, st, o_pt + PT_SW_G, N_PT, o_pt + PT_SW_A,
                   N_PT, iters, alloc, m_in, m_out, cand)  # fmt: skip
        for k in range(n_sa):
            i, o = sreq_in[_ix(k)], sreq_out[_ix(k)]
            v = sw_vc[_ix(i * P + o)]
            sw_vc[_ix(i * P + o)] = -1
            if m_in[_ix(i)] == o:
                st[_ix(o_pt + i * N_PT + PT_SW_RR)] = _next(v, V)
                iv = i * V + v
                if unicast:  # it sends now (an allocation of one cycle, one branch)
                    asked &= ~(np.int64(1) << iv)
                    st[_ix(o_vc + iv * N_VC + VC_FROM)] = t + 1
                    moved += _send(unicast, cfg, tp, ns, st, nd, pk, dest, dsvc, grp, sq,
                                   pk_free, pk_log, link_flits, win_link, win_occ, window, ctr,
                                   dw, rb, r, iv, 0, t)  # fmt: skip
                else:  # … or once the allocation's delay has passed (below), its branch
                    st[_ix(o_vc + iv * N_VC + VC_SA_GR)] = sw_br[_ix(i * P + o)]
    while asked != 0:  # (unicast) lost the switch (or its port's turn)
        iv = trailing_zeros(asked)
        asked &= asked - 1
        st[_ix(stalls + S_SW_LOST)] += 1
        if win >= 0:
            win_wait[_ix(win), _ix(r * N_WAIT + W_SWITCH)] += 1
        _track_count(ctr, st, o_vc + iv * N_VC, r, H_SW_LOST, 1)
        st[_ix(o_vc + iv * N_VC + VC_FROM)] = t + 1
    if sa_open:  # requests that lost; then the grants whose delay has passed send
        for kv in range(na):
            iv = cur[_ix(kv)]
            vb = o_vc + iv * N_VC
            if st[_ix(vb + VC_SA_T)] == t + sd - 1 and st[_ix(vb + VC_SA_GR)] == -1:
                st[_ix(vb + VC_SA_GR)] = -2
                st[_ix(stalls + S_SW_LOST)] += 1  # lost the switch (or its port's turn)
                if win >= 0:
                    win_wait[_ix(win), _ix(r * N_WAIT + W_SWITCH)] += 1
                _track_count(ctr, st, vb, r, H_SW_LOST, 1)
            if st[_ix(vb + VC_STATE)] != V_ACTIVE or st[_ix(vb + VC_SA_T)] != t:
                continue
            b = st[_ix(vb + VC_SA_GR)]
            st[_ix(vb + VC_SA_T)] = -1
            st[_ix(vb + VC_FROM)] = t + 1
            if b >= 0:
                moved += _send(unicast, cfg, tp, ns, st, nd, pk, dest, dsvc, grp, sq, pk_free,
                               pk_log, link_flits, win_link, win_occ, window, ctr, dw, rb, r, iv, b,
                               t)  # fmt: skip
    if moved > 0 and ctr[C_PROGRESS] < t:
        ctr[C_PROGRESS] = t
    # ---------------------------------------------------------- when is it due next?
    if unicast:
        m = st[_ix(misc + M_VCS)]
        if m == 0:
            return NEVER  # credits matter only to a busy VC: an idle router takes them later
        # a VC that asked for an allocation now may go on at t + 1: then the router is due at
        # t + 1, and what the others wait for is seen then (a wait starts when it is first
        # seen, and seen the same in the cycle it starts or at any visit after it)
        again = m & acted
        while again != 0:
            iv = trailing_zeros(again)
            again &= again - 1
            if st[_ix(o_vc + iv * N_VC + VC_FROM)] == t + 1:
                return t + 1
        nxt = NEVER
        held = st[_ix(misc + M_HELD)]
        vas = st[_ix(misc + M_VAS)]
        mm = m & vas  # routed heads
        while mm != 0:
            iv = trailing_zeros(mm)
            mm &= mm - 1
            vb = o_vc + iv * N_VC
            fr = st[_ix(vb + VC_FROM)]
            if ~(held >> (st[_ix(vb + VC_OUT)] * V)) & st[_ix(o_vm + iv)]:
                when = fr if fr > t + 1 else t + 1
                if when < nxt:
                    nxt = when
            else:  # it waits from when it is ready
                _block(st, vb, max(t + 1, fr), S_VC_BUSY)
        m &= ~vas  # VCs holding an output VC
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
                    when = st[_ix(o_pt + o * N_PT + PT_OUT_FREE)] - st_delay
                    if when < fr:
                        when = fr
            if when < t + 1:
                when = t + 1
            if when < nxt:
                nxt = when
        return nxt
    nxt = NEVER
    lq_mask, cq_mask = st[_ix(misc + M_LQ)], st[_ix(misc + M_CQ)]
    if st[_ix(busy)] == 0:
        cq_mask = 0  # credits matter only to a busy VC: an idle router takes them later
    if lq_mask | cq_mask:
        for i in range(P):
            pb = o_pt + i * N_PT
            if (lq_mask >> i) & 1:
                tt = st[_ix(o_lq + (i * ql + st[_ix(pb + PT_LQ_H)]) * N_LQ + LQ_T)]
                if tt < nxt:
                    nxt = tt
            if (cq_mask >> i) & 1:
                tt = st[_ix(o_cq + (i * qc + st[_ix(pb + PT_CQ_H)]) * N_CQ + CQ_T)]
                if tt < nxt:
                    nxt = tt
    if nxt > t + 1:
        for kv in range(st[_ix(busy)]):
            iv = st[_ix(o_act + kv)]
            vb = o_vc + iv * N_VC
            s = st[_ix(vb + VC_STATE)]
            when = NEVER
            bb = o_br + iv * B * N_BR
            if st[_ix(vb + VC_VA_T)] >= 0:
                when = st[_ix(vb + VC_VA_T)]
            elif st[_ix(vb + VC_SA_T)] >= 0:
                when = st[_ix(vb + VC_SA_T)]
            elif s == V_VCALLOC:
                yx = pk[_ix(st[_ix(vb + VC_PK)] * N_PK + PK_ROUTE)]
                if _can_ask(cfg, st, o_ov, bb, st[_ix(vb + VC_BRN)], V, yx):
                    when = st[_ix(vb + VC_FROM)]
                else:  # it waits from when it is ready
                    _block(st, vb, max(t + 1, st[_ix(vb + VC_FROM)]), S_VC_BUSY)
            elif st[_ix(vb + VC_N)] > 0:  # active, with a flit: is some branch able to go?
                avail = st[_ix(vb + VC_POPPED)] + st[_ix(vb + VC_N)]
                size = pk[_ix(st[_ix(vb + VC_PK)] * N_PK + PK_SIZE)]
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
                    w = st[_ix(o_pt + o * N_PT + PT_OUT_FREE)] - (sd - 1 + st_delay)
                    if w < st[_ix(vb + VC_FROM)]:
                        w = st[_ix(vb + VC_FROM)]
                    if w < when:
                        when = w
            if when < t + 1:
                when = t + 1
            if when < nxt:
                nxt = when
    return nxt


@numba.njit(cache=True, nogil=True, _nrt=False, forceinline=True, error_model="numpy")
def _send(unicast, cfg, tp, ns, st, nd, pk, dest, dsvc, grp, sq, pk_free, pk_log, link_flits,
          win_link, win_occ, window, ctr, dw, rb, r, iv, b, t):  # fmt: skip
    """Branch b of input VC ``iv`` of router r sends its next flit (its switch allocation
    ends at t); returns 1. ``unicast``: ``_router``'s kernel, whose VCs have one branch (b 0)
    kept in the VC itself; traced, it sees what the flit's input port held up to t before
    the flit leaves it (between two departures a port only fills, so each window's most is
    seen before one, or at the window's end: ``_seen``)."""
    P, V, B = cfg.p, cfg.v, cfg.b  # noqa: N806
    vb = rb + cfg.ovc + iv * N_VC
    bb = rb + cfg.obr + iv * B * N_BR
    e = bb + b * N_BR
    misc = rb + cfg.omisc
    p = st[_ix(vb + VC_PK)]
    size = pk[_ix(p * N_PK + PK_SIZE)]
    if unicast:
        if window > 0:  # the flit leaves its input port: what the port held until now
            i = st[_ix(misc + N_MISC + iv)]
            seen = rb + cfg.opt + i * N_PT + PT_SEEN
            _seen(cfg, st, win_occ, window, r, i, st[_ix(seen)], t, ctr[C_WINDOW])
            st[_ix(seen)] = t + 1
        k = st[_ix(vb + VC_SENT)]
        o, ov = st[_ix(vb + VC_OUT)], st[_ix(vb + VC_OVC)]
        if k == 0:
            pk[_ix(p * N_PK + PK_HOPS)] += 1
        child = p
    else:
        k = st[_ix(e + BR_SENT)]
        o, ov = st[_ix(e + BR_PORT)], st[_ix(e + BR_OVC)]
        if k == 0:  # the head: the branch carries p itself, or a new record for its sub-range
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
        child = st[_ix(e + BR_PK)]
    if child == ctr[C_TRACK]:
        at = _hop(ctr, r)
        if at >= 0:
            if k == 0:
                ctr[_ix(at + H_HEAD)] = t
                ctr[_ix(at + H_OUT)] = o
            if k + 1 == size:
                ctr[_ix(at + H_TAIL)] = t
    f = child * FLIT + k
    ob = rb + cfg.oov + (o * V + ov) * N_OV
    st[_ix(ob + OV_CREDITS)] -= 1
    t_send = t + cfg.st_delay
    tb = (r * P + o) * N_T
    st[_ix(rb + cfg.opt + o * N_PT + PT_OUT_FREE)] = t_send + tp[_ix(tb + T_SER)]
    arrive = t_send + tp[_ix(tb + T_LAT)] + 1
    lid = tp[_ix(tb + T_LINK)]
    link_flits[_ix(lid)] += 1
    win = ctr[C_WINDOW]
    if win >= 0:
        win_link[_ix(win), _ix(lid)] += 1
    if o < 4:
        nb = tp[_ix(tb + T_NBR)]
        if unicast:  # straight into its buffer, and its router is due when it may act
            when = _put(cfg, ns, st, pk, dest, ctr, nb, o ^ 1, ov, f, st[_ix(vb + VC_DEST)],
                        arrive)  # fmt: skip
        else:  # into the link's queue, read on arrival
            _lq_push(cfg, st, nb, o ^ 1, f, ov, arrive)
            when = arrive
        _schedule(dw, ctr, nb, when)  # (NEVER: no-op)
        ctr[C_INFLIGHT] += 1
    else:  # it leaves the network, reaching the terminal at ``arrive``
        _sink(cfg, tp, st, nd, pk, dest, dsvc, grp, sq, pk_free, pk_log, ctr, r, o, ov, f, arrive)
    i, v = st[_ix(misc + N_MISC + iv)], st[_ix(misc + N_MISC + P * V + iv)]
    if unicast:  # its buffer slot is free
        _free_slot(unicast, cfg, tp, ns, st, nd, ctr, dw, vb, r, i, v, t)
        if k + 1 < size:
            st[_ix(vb + VC_SENT)] = k + 1
            return 1
        # the tail has left: the output VC is free again; the VC's next packet, or idle
        st[_ix(ob + OV_OWNER)] = -1
        st[_ix(misc + M_HELD)] &= ~(np.int64(1) << (o * V + ov))
        if st[_ix(vb + VC_N)] > 0:
            a = st[_ix(rb + cfg.obat + iv * cfg.d + st[_ix(vb + VC_HEAD)])]
            _route_unicast(cfg, ns, st, pk, dest, rb, iv, a if a > t + 1 else t + 1, -1)
        else:
            st[_ix(vb + VC_STATE)] = V_IDLE
            st[_ix(misc + M_VCS)] &= ~(np.int64(1) << iv)
        return 1
    st[_ix(e + BR_SENT)] = k + 1
    if k + 1 == size:
        st[_ix(ob + OV_OWNER)] = -1  # the tail has left: the output VC is free again
    # free the buffer slots every branch has sent
    least = size
    for j in range(st[_ix(vb + VC_BRN)]):
        if st[_ix(bb + j * N_BR + BR_SENT)] < least:
            least = st[_ix(bb + j * N_BR + BR_SENT)]
    while st[_ix(vb + VC_POPPED)] < least:
        st[_ix(vb + VC_POPPED)] += 1
        _free_slot(unicast, cfg, tp, ns, st, nd, ctr, dw, vb, r, i, v, t)
    if least == size:  # every branch sent the tail: the next packet, or idle
        if st[_ix(vb + VC_N)] > 0:
            _start_packet(cfg, ns, st, pk, dest, rb, r, iv, t + 1)
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


@numba.njit(cache=True, nogil=True, forceinline=True, error_model="numpy")
def _free_slot(unicast, cfg, tp, ns, st, nd, ctr, dw, vb, r, i, v, t):
    """The front flit of the VC at ``vb`` (input i, VC v of router r) has left on every
    branch: its buffer slot is free, and a credit goes back to the neighbour in direction i
    (for its output i ^ 1) or to the terminal of local port i."""
    P, D = cfg.p, cfg.d  # noqa: N806
    h = st[_ix(vb + VC_HEAD)] + 1
    st[_ix(vb + VC_HEAD)] = 0 if h == D else h
    st[_ix(vb + VC_N)] -= 1
    ctr[C_INFLIGHT] -= 1
    if i < 4:
        up = tp[_ix((r * P + i) * N_T + T_NBR)]
        when = t + tp[_ix((up * P + (i ^ 1)) * N_T + T_LAT)] + 1 + cfg.cd
        _cq_push(cfg, st, up, i ^ 1, v, when)
        u_misc = up * cfg.rs + cfg.omisc
        if unicast:  # a VC that waits for this credit (M_CWAIT: its output VC's bit) is due
            wake = (st[_ix(u_misc + M_CWAIT)] >> ((i ^ 1) * cfg.v + v)) & 1 == 1
        else:  # a busy router is due when it comes; an idle one takes it at its next visit
            wake = st[_ix(u_misc + M_BUSY)] > 0
        if wake:
            _schedule(dw, ctr, up, when)
    else:
        n = tp[_ix((r * P + i) * N_T + T_OUT_NODE)]
        _ncq_push(cfg, nd, n, v, t + ns[_ix(n * N_NS + NS_INJ_LAT)] + 1)


@numba.njit(cache=True, nogil=True, _nrt=False, error_model="numpy")
def _retire(pk, dest, pk_free, pk_log, ctr, p):
    """Packet record p, whole at its terminal (sink mode 0, one mesh), goes to the log and
    back to the free records: nothing refers to it any more (its flits have left every
    buffer and queue). A free record is no packet: no root (``PK_PARENT`` -1), not created,
    not arrived, not measured, so the scans over every record (``latency_load``,
    ``measured_pending``) skip it."""
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
def _sink(cfg, tp, st, nd, pk, dest, dsvc, grp, sq, pk_free, pk_log, ctr, r, o, ov, f, arrive):
    """A flit reaches the terminal of output o of router r at cycle ``arrive``; its credit
    returns once the terminal has processed it."""
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
        _sq_push(cfg, tp, sq, ctr, p, r, o, ov, arrive)
    else:
        _serve(cfg, tp, st, nd, pk, dsvc, grp, ctr, p, r, o, ov, arrive)
        if cfg.pool:
            _retire(pk, dest, pk_free, pk_log, ctr, p)


@numba.njit(cache=True, nogil=True, _nrt=False, forceinline=True, error_model="numpy")
def _serve(cfg, tp, st, nd, pk, dsvc, grp, ctr, p, r, o, ov, arrive):
    """The terminal of output o of router r takes packet p, whole since ``arrive``: processes
    it (sink mode 1: after the packets before it, for ``dsvc`` cycles) and sends its slots'
    credits back; returns when they reach the router."""
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
def _sq_push(cfg, tp, sq, ctr, p, r, o, ov, arrive):
    """Parallel meshes: the tail of packet p reached its core at ``arrive`` from output o of
    router r. Routers of different meshes deliver to one core's server, and a router may have
    run ahead of the others, so the server takes the packet only once every packet that can
    reach the core before (or with) it has: in the cycle after the one its tail left the
    router (every router has simulated that cycle by then), in the order of (arrival, router,
    port) within that cycle's slot, whatever order the routers were visited in."""
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
def _serve_due(cfg, tp, st, nd, pk, dsvc, grp, sq, ctr, dw, t):
    """The tails of cycle t's slot go to their cores' servers (see ``_sq_push``); a router
    with a busy VC is due when the credits come back."""
    n_slots, cap = cfg.sqs, cfg.sqc
    slot = t % n_slots
    at = n_slots + slot * cap * N_SQ
    for j in range(sq[_ix(slot)]):
        e = at + j * N_SQ
        r = sq[_ix(e + SQ_R)]
        o, ov = sq[_ix(e + SQ_O)], sq[_ix(e + SQ_OV)]
        when = _serve(cfg, tp, st, nd, pk, dsvc, grp, ctr, sq[_ix(e + SQ_P)], r, o, ov,
                      sq[_ix(e + SQ_ARR)])  # fmt: skip
        misc = r * cfg.rs + cfg.omisc
        if cfg.unicast:  # a VC waits for these credits (as ``_free_slot``)
            wake = (st[_ix(misc + M_CWAIT)] >> (o * cfg.v + ov)) & 1 == 1
        else:  # a busy router; an idle one takes them on its next visit
            wake = st[_ix(misc + M_BUSY)] > 0
        if wake:
            _schedule(dw, ctr, r, when)
    ctr[C_SQN] -= sq[_ix(slot)]
    sq[_ix(slot)] = 0


# ------------------------------------------------------------------ the unicast kernel
@numba.njit(cache=True, nogil=True, forceinline=True, error_model="numpy")
def _route_unicast(cfg, ns, st, pk, dest, rb, iv, t_from, d):
    """The unicast kernel's ``_start_packet``: the head at the front of input VC ``iv`` (of
    the router at ``rb``), bound for terminal d (-1: its packet's), is routed; VC allocation
    may start at ``t_from + routing_delay``."""
    vb = rb + cfg.ovc + iv * N_VC
    p = st[_ix(rb + cfg.obuf + iv * cfg.d + st[_ix(vb + VC_HEAD)])] // FLIT
    if d < 0:
        d = dest[_ix(pk[_ix(p * N_PK + PK_LO)])]
    misc = rb + cfg.omisc
    x, y = st[_ix(misc + M_X)], st[_ix(misc + M_Y)]
    yx = pk[_ix(p * N_PK + PK_ROUTE)]
    o = _dor_port(ns, d, x, y, yx)
    st[_ix(vb + VC_PK)] = p
    st[_ix(vb + VC_DEST)] = d
    st[_ix(vb + VC_OUT)] = o
    st[_ix(misc + N_MISC + 2 * cfg.p * cfg.v + iv)] = _vc_mask(cfg, yx, o)
    st[_ix(vb + VC_SENT)] = 0
    st[_ix(vb + VC_STATE)] = V_VCALLOC
    st[_ix(vb + VC_FROM)] = t_from + cfg.rd
    st[_ix(misc + M_VAS)] |= np.int64(1) << iv


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
def _pattern_dest(cfg, perm, row_ptr, dest_tab, cum, fraction, rng, src):
    kind = cfg.pattern
    n_nodes = cfg.nodes
    if kind == 0:
        return np.int64(_uniform(rng) * n_nodes)
    if kind == 1:
        return perm[_ix(src)]
    if fraction < 1.0 and _uniform(rng) >= fraction:
        return np.int64(_uniform(rng) * n_nodes)
    row = 0 if cfg.shared else src
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
def _generate(cfg, nd, pk, dest, pk_free, src_list, gheap, gpri, gpos, gcal, ctr, perm, row_ptr,
              dest_tab, cum, fraction, rng, t, inject_p, size, measured):  # fmt: skip
    """New synthetic packets of cycle t (each terminal a Bernoulli(inject_p) process), the
    terminals in the order of their ids; each in a free record (``cfg.pool``) or the next one."""
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
            d = _pattern_dest(cfg, perm, row_ptr, dest_tab, cum, fraction, rng, n)
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
            _enqueue(cfg, nd, pk, src_list, ctr, n, p)
            nd[_ix(n * cfg.nds + ND_CREATED)] += 1
            _next_packet_at(gcal, gheap, gpri, gpos, ctr, t, n,
                            t + 1 + _gap(rng, inject_p, log_q))  # fmt: skip


@numba.njit(cache=True, nogil=True, _nrt=False, error_model="numpy")
def _inject(cfg, ns, st, nd, pk, dest, link_flits, win_link, ctr, dw, src_list, t):  # fmt: skip
    """Every terminal with a queue sends one flit into its router, if it has a credit."""
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


@numba.njit(cache=True, nogil=True, _nrt=False, error_model="numpy")
def _release(cfg, nd, pk, src_list, rel_order, rel_off, grp_ptr, grp, ctr, t):
    """Put a mapping's packets whose time has come into their sources' queues; returns the
    cycle of the next release (NEVER: none known yet).

    Packets come in groups (layers), in ``rel_order``; group g opens at ``grp[G_OPEN, g]``
    (set beforehand, or, when it is -1, once group g − 1 is wholly processed) and each of its
    packets is released ``rel_off`` cycles after that.
    """
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
            _enqueue(cfg, nd, pk, src_list, ctr, pk[_ix(p * N_PK + PK_SRC)], p)
            ctr[C_REL_PTR] += 1
        g += 1
        ctr[C_OPEN_GROUP] = g
    return NEVER


# ------------------------------------------------------------------ the loop
@numba.njit(cache=True, _nrt=False, nogil=True, error_model="numpy")
def run(cfg, tp, ns, st, nd, pk, dest, dsvc, rel_order, rel_off, grp_ptr, grp, sq, pk_free, pk_log,
        link_flits, win_link, win_occ, win_wait, ctr, rng, dw, gheap, gpri, gpos, gcal, src_list,
        perm, row_ptr, dest_tab, cum, fraction, ws, t_end, inject_p, size, measured, window,
        stop_when_idle):  # fmt: skip
    """Advance from ``ctr[C_T]`` to ``t_end`` (exclusive). Returns a status.

    ``inject_p``: packets per terminal and cycle of the synthetic sources; ``measured``: the
    flag of the packets created now; ``window``: cycles per trace window (0: no trace);
    ``stop_when_idle``: stop (``IDLE_END``) once nothing is queued, in flight or to release.
    ``pk_free``, ``pk_log``: the free packet records and the log of retired packets, when
    records are recycled (``cfg.pool``). ``dw``: when each router is due (``records.Wheel``);
    ``ws``: scratch arrays (``records.Scratch``, ``workspace``).
    """
    due, wheel, wn, fheap, fpri, fpos, _ = dw
    n_r = cfg.nr  # every mesh's routers
    P, B = cfg.p, cfg.b  # noqa: N806
    ahead = cfg.ahead
    unicast = cfg.unicast == 1
    n_released = rel_order.size
    cap = pk.size // N_PK
    pool = cfg.pool == 1
    log_cap = pk_log.size // N_LOG
    watchdog = cfg.watchdog
    t = ctr[C_T]
    next_release = t
    while t < t_end:
        ctr[C_T] = t
        if window > 0:
            if (t + ahead) // window >= win_link.shape[0]:
                return FULL
            ctr[C_WINDOW] = t // window
        if pool:  # a cycle creates a packet per terminal at most, and retires at most a
            # tail per router port and cycle it runs
            if (ctr[C_NFREE] <= cfg.nodes
                    or ctr[C_LOG_N] + n_r * P * (ahead + 1) >= log_cap):  # fmt: skip
                return FULL  # out of records, or the log is full: the caller reads it
        elif ctr[C_NPK] + 2 * cfg.nodes + n_r * P * B * (ahead + 1) >= cap:
            return FULL  # out of packet records: the caller grows the arrays
        if ctr[C_SQN] > 0:  # tails sent in cycle t − 1 (parallel meshes): to their servers
            _serve_due(cfg, tp, st, nd, pk, dsvc, grp, sq, ctr, dw, t)  # fmt: skip
        if ctr[C_REL_PTR] < n_released and (t >= next_release or next_release == NEVER):
            next_release = _release(cfg, nd, pk, src_list, rel_order, rel_off, grp_ptr, grp,
                                    ctr, t)  # fmt: skip
        if inject_p > 0.0 or ctr[C_GEN_P] != 0:
            _generate(cfg, nd, pk, dest, pk_free, src_list, gheap, gpri, gpos, gcal, ctr, perm,
                      row_ptr, dest_tab, cum, fraction, rng, t, inject_p, size,
                      measured)  # fmt: skip
        moved = 0
        if ctr[C_NSRC] > 0:
            moved += _inject(cfg, ns, st, nd, pk, dest, link_flits, win_link, ctr, dw, src_list,
                             t)  # fmt: skip
        # the routers due now: on the wheel's slot (the heap's are moved there first)
        s = t & (WHEEL - 1)
        while ctr[C_FHEAP_N] > 0 and -fpri[_ix(fheap[0])] <= t:
            r = fheap[0]
            ctr[C_FHEAP_N] = pop(fheap, fpri, fpos, ctr[C_FHEAP_N])
            if due[_ix(r)] == t:
                due[_ix(r)] = NEVER  # on the wheel now, due at t
                _schedule(dw, ctr, r, t)
        k = 0
        while k < wn[_ix(s)]:
            r = wheel[_ix(s), _ix(k)]
            k += 1
            if due[_ix(r)] != t:
                continue  # a stale entry
            due[_ix(r)] = NEVER
            ctr[C_VISITS] += 1
            # run ahead: the router's cycles up to t + ahead depend on nothing that is not
            # already in its queues, so it goes on while it is due (and its state is in cache)
            last = t + ahead if t + ahead < t_end else t_end - 1
            u = t
            while True:
                if window > 0:
                    ctr[C_WINDOW] = u // window
                if unicast:  # (a constant at each call: see ``_router``)
                    u = _router(True, cfg, tp, ns, st, nd, pk, dest, dsvc, grp, sq, pk_free, pk_log,
                                link_flits, win_link, win_occ, win_wait, window, ctr, dw, r, u,
                                ws)  # fmt: skip
                else:
                    u = _router(False, cfg, tp, ns, st, nd, pk, dest, dsvc, grp, sq, pk_free,
                                pk_log, link_flits, win_link, win_occ, win_wait, window, ctr, dw, r,
                                u, ws)  # fmt: skip
                if u > last:
                    break
            if u < NEVER:
                _schedule(dw, ctr, r, u)
        wn[_ix(s)] = 0
        if moved > 0 and ctr[C_PROGRESS] < t:
            ctr[C_PROGRESS] = t
        if ctr[C_INFLIGHT] > 0 and t - ctr[C_PROGRESS] > watchdog:
            return DEADLOCK
        idle_sources = ctr[C_NSRC] == 0
        if (stop_when_idle and idle_sources and ctr[C_INFLIGHT] == 0 and ctr[C_SQN] == 0
                and ctr[C_REL_PTR] >= n_released and t >= ctr[C_LAST_DONE]):  # fmt: skip
            ctr[C_T] = t + 1
            return IDLE_END
        # the next cycle in which anything is due
        nxt = t + 1
        if idle_sources:
            nxt = t_end
            routers_due = False
            for d in range(1, WHEEL):
                if wn[_ix((t + d) & (WHEEL - 1))] > 0:
                    routers_due = True
                    if t + d < nxt:
                        nxt = t + d
                    break
            if ctr[C_FHEAP_N] > 0:
                routers_due = True
                when = np.int64(-fpri[_ix(fheap[0])])
                if when < nxt:
                    nxt = when
            if ctr[C_GHEAP_N] > 0:
                when = np.int64(-gpri[_ix(gheap[0])])
                if when < nxt:
                    nxt = when
            if ctr[C_GCAL_N] > 0:
                for d in range(1, GCAL):
                    c = (t + d) & (GCAL - 1)
                    if t + d >= nxt:
                        break
                    for w in range(gcal.shape[1]):
                        if gcal[_ix(c), _ix(w)] != 0:
                            nxt = t + d
                            break
            if ctr[C_SQN] > 0:  # tails waiting for their servers (they return credits)
                routers_due = True
                for d in range(1, cfg.sqs + 1):
                    if sq[_ix((t + d) % cfg.sqs)] > 0:
                        if t + d < nxt:
                            nxt = t + d
                        break
            if ctr[C_REL_PTR] < n_released:
                if next_release == NEVER:  # a group may have just been wholly processed
                    next_release = _release(cfg, nd, pk, src_list, rel_order, rel_off, grp_ptr,
                                            grp, ctr, t)  # fmt: skip
                if next_release < nxt:
                    nxt = next_release
            if stop_when_idle and ctr[C_INFLIGHT] == 0 and t < ctr[C_LAST_DONE] < nxt:
                nxt = ctr[C_LAST_DONE]
            if nxt <= t:
                nxt = t + 1
            if ctr[C_INFLIGHT] > 0 and not routers_due:
                return DEADLOCK  # flits in the network and nothing will ever move them
        t = nxt
    ctr[C_T] = t
    return DONE


@numba.njit(cache=True, nogil=True, _nrt=False, error_model="numpy")
def latency_load(pk, n, now, measured_only):
    """BookSim2's running latency figure at cycle ``now`` over the first ``n`` packet records:
    the cycles the packets delivered before ``now`` took (only the measured ones when
    ``measured_only``) plus the age of every flit created before ``now`` and not yet
    delivered; returns (that sum, the number of packets and flits it counts). Branch records
    of multicast packets (``PK_PARENT`` another packet) are not counted."""
    total = 0
    count = 0
    for p in range(n):
        q = p * N_PK
        if pk[_ix(q + PK_PARENT)] != p:
            continue
        ctime, atime = pk[_ix(q + PK_CTIME)], pk[_ix(q + PK_ATIME)]
        if 0 <= atime < now:
            if not measured_only or pk[_ix(q + PK_MEAS)] == 1:
                total += atime - ctime
                count += 1
        elif 0 <= ctime < now:
            total += (now - ctime) * pk[_ix(q + PK_SIZE)]
            count += pk[_ix(q + PK_SIZE)]
    return total, count


@numba.njit(cache=True, nogil=True, error_model="numpy")
def columns(pk, n, fields):
    """Fields ``fields`` (``PK_*``) of the first ``n`` packet records, one row each."""
    out = np.empty((fields.size, n), dtype=np.int64)
    for p in range(n):
        for j in range(fields.size):
            out[_ix(j), _ix(p)] = pk[_ix(p * N_PK + fields[_ix(j)])]
    return out


@numba.njit(cache=True, nogil=True, _nrt=False, error_model="numpy")
def measured_pending(pk, n):
    """Whether some measured packet among the first ``n`` records has not arrived yet."""
    for p in range(n):  # noqa: SIM110 - a loop that stops early, compiled
        if pk[_ix(p * N_PK + PK_MEAS)] == 1 and pk[_ix(p * N_PK + PK_ATIME)] < 0:
            return True
    return False


def workspace(P: int, V: int, B: int) -> Scratch:  # noqa: N803
    """The scratch arrays ``run`` needs for routers of P ports, V VCs, B branches."""
    n_req = P * V * B * V + P * P + 8
    return Scratch(
        req_in=np.zeros(n_req, dtype=np.int64),
        req_out=np.zeros(n_req, dtype=np.int64),
        sreq_in=np.zeros(P * P, dtype=np.int64),
        sreq_out=np.zeros(P * P, dtype=np.int64),
        m_in=np.full(P * V * B + P, -1, dtype=np.int64),
        m_out=np.full(P * V + P, -1, dtype=np.int64),
        # the candidates of a round robin, or iSLIP's bit masks (one per output, then one
        # per input: VC allocation's P·V·B inputs and P·V outputs are the most)
        cand=np.zeros(max(n_req, P * V * B + P * V), dtype=np.int64),
        sw_vc=np.full(P * P, -1, dtype=np.int64),
        sw_br=np.zeros(P * P, dtype=np.int64),
        cur=np.zeros(P * V, dtype=np.int64),
    )
