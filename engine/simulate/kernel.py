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

Every packet carries a *range* of its destination terminals in ``dest``, sorted in the
order of the routing (X, Y, port for XY). A router splits the range into branches, one per
output port; a packet with one destination has one branch (unicast), a multicast packet
branches where its destinations' routes part, and the router forwards each flit on every
branch before it frees the flit's buffer slot. A branch that carries only part of the range
travels on as a new packet record (``PK_PARENT`` is the packet the source sent).

Terminals create packets by a Bernoulli process (drawn as geometric gaps) or receive a
mapping's packets by release time, and inject one flit per cycle, taking a free VC round
robin for each packet (as BookSim2's traffic manager does). At the sink a flit is
*processed*: at once (sink mode 0) or by the core's server, one packet after another, the
packet for destination ``dest[k]`` taking ``dsvc[k]`` cycles; its buffer slots' credits go
back only then, so a busy core pushes back into the mesh.

The loop is event-driven but cycle-exact: a router is visited only in the cycles in which
something is due there (a flit or a credit arrives, or a VC may take its next stage), found
in an addressable heap of next-due times; a cycle in which nothing is due anywhere is
skipped. A VC that waits for a free output VC or a credit is not visited, and the cycles it
waits are added to its router's stall counters when it moves again.

State lives in a few flat arrays, one field per row (``VC_*``, ``BR_*``, ``PK_*`` … index
them); a kernel function never receives a tuple of arrays (numba would touch every array's
reference count on each call). ``run`` advances a whole span of cycles per call and returns
a status, so Python only steps in to grow arrays, change phase or stop.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from engine.heap import pop, push, update

__all__ = ["DEADLOCK", "DONE", "FULL", "IDLE_END", "rng_seed", "run"]

RUNNING, DONE, FULL, DEADLOCK, IDLE_END = 0, 1, 2, 3, 4  # run() status
FLIT = 256  # flit code = packet id * FLIT + index in the packet (packets of up to 255 flits)
V_IDLE, V_VCALLOC, V_ACTIVE = 0, 1, 2
NEVER = 1 << 62

# cfg: scalars
(CF_W, CF_H, CF_P, CF_V, CF_D, CF_B, CF_RD, CF_VD, CF_SD, CF_ST, CF_CD, CF_ALLOC, CF_ITERS,
 CF_YX, CF_SINK, CF_WATCHDOG, CF_PATTERN, CF_SHARED, CF_NODES) = range(19)  # fmt: skip
N_CF = 19
# topo[f, r, p]: per router output port
T_NBR, T_OUT_NODE, T_LINK, T_LAT, T_SER = range(5)
# nodes_s[f, n]: per terminal, static
NS_ROUTER, NS_PORT, NS_X, NS_Y, NS_INJ_LAT = range(5)
# vc[f, r, p, v]: per input VC; VC_OWNER and VC_CREDITS are per output VC
(VC_STATE, VC_FROM, VC_HEAD, VC_N, VC_PK, VC_POPPED, VC_BRN, VC_VA_T, VC_SA_T, VC_SA_GR,
 VC_OWNER, VC_CREDITS, VC_BLOCKED, VC_BLOCK_WHY) = range(14)  # fmt: skip
N_VC = 14
# br[f, r, p, v, b]: per branch of an input VC's packet
BR_PORT, BR_OVC, BR_SENT, BR_LO, BR_HI, BR_PK, BR_VAGR = range(7)
N_BR = 7
# port[f, r, p]
PT_OUT_FREE, PT_LQ_H, PT_LQ_N, PT_CQ_H, PT_CQ_N, PT_SW_RR, PT_SW_G, PT_SW_A = range(8)
N_PT = 8
# lq[f, r, p, k] link queues (flits on their way to an input); cq[f, r, p, k] credits
LQ_F, LQ_V, LQ_T = range(3)
CQ_V, CQ_T = range(2)
# node[f, n]: per terminal, changing
(ND_QHEAD, ND_QTAIL, ND_SENT, ND_LAST, ND_VC, ND_CQ_H, ND_CQ_N, ND_FREE, ND_ACC,
 ND_CREATED, ND_ACTIVE, ND_NEXT_GEN) = range(12)  # fmt: skip
N_ND = 12
# nodev[f, n, v]
NV_CRED, NV_OWNER = range(2)
# pk[f, k]: per packet record
(PK_NEXT, PK_SRC, PK_LO, PK_HI, PK_SIZE, PK_CTIME, PK_ITIME, PK_ATIME, PK_HOPS, PK_MEAS,
 PK_DONE, PK_PARENT, PK_GROUP) = range(13)  # fmt: skip
N_PK = 13
# grp[f, g]
G_OPEN, G_LEFT, G_DONE = range(3)
# ctr
(C_T, C_NPK, C_INFLIGHT, C_PROGRESS, C_MEASURE_FROM, C_MEASURE_TO, C_DELIVERED, C_LAST_DONE,
 C_OPEN_GROUP, C_REL_PTR, C_WINDOW, C_RHEAP_N, C_GHEAP_N, C_NSRC, C_GEN_P) = range(15)  # fmt: skip
N_CTR = 15
# stall[r, k]: cycles VCs waited, by cause
S_VC_BUSY, S_VC_LOST, S_NO_CREDIT, S_SW_LOST = range(4)


# ------------------------------------------------------------------ random numbers
@numba.njit(cache=True, inline="always", error_model="numpy")
def _rotl(x, k):
    return (x << np.uint64(k)) | (x >> np.uint64(64 - k))


@numba.njit(cache=True, _nrt=False, error_model="numpy")
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


@numba.njit(cache=True, _nrt=False, error_model="numpy")
def _gap(rng, p):
    """Cycles until the next success of a Bernoulli(p) process, counting this one (≥ 0)."""
    if p >= 1.0:
        return 0
    u = _uniform(rng)
    return np.int64(math.floor(math.log(1.0 - u) / math.log(1.0 - p)))


# ------------------------------------------------------------------ scheduling
@numba.njit(cache=True, _nrt=False, error_model="numpy")
def _schedule(rheap, rpri, rpos, ctr, r, when):
    """Router r has something due at cycle ``when`` (keeps the earliest of its due times)."""
    key = -float(when)
    if rpos[r] < 0:
        rpri[r] = key
        ctr[C_RHEAP_N] = push(rheap, rpri, rpos, ctr[C_RHEAP_N], r)
    elif key > rpri[r]:
        ctr[C_RHEAP_N] = update(rheap, rpri, rpos, ctr[C_RHEAP_N], r, key)


# ------------------------------------------------------------------ allocation
@numba.njit(cache=True, _nrt=False, error_model="numpy")
def _rr_first(cands, n, base, size):
    """The entry of ``cands[:n]`` closest at or after ``base`` in round robin over ``size``."""
    best, best_d = -1, size
    for k in range(n):
        c = cands[k]
        d = c - base
        if d < 0:
            d += size
        if d < best_d:
            best, best_d = c, d
    return best


@numba.njit(cache=True, _nrt=False, error_model="numpy")
def _match(req_in, req_out, n_req, n_in, n_out, ptr, g, a_, row, iters, alloc, in_match,
           out_match, cand):  # fmt: skip
    """Match requesting inputs to outputs over the sparse requests ``(req_in[k], req_out[k])``.

    iSLIP (``alloc`` 0): each free output grants the requesting free input nearest its grant
    pointer ``ptr[g, row, out]``, each input accepts the granting output nearest its accept
    pointer ``ptr[a_, row, in]``; pointers move only on an accept in the first iteration
    (BookSim2's ``iSLIP_Sparse``). Separable input-first round robin (``alloc`` 1): each
    input picks one request, each output one of the inputs that picked it. ``in_match`` and
    ``out_match`` (of size ``n_in`` / ``n_out``, -1 = unmatched) hold the result.
    """
    for k in range(n_req):
        in_match[req_in[k]] = -1
        out_match[req_out[k]] = -1
    if alloc == 1:
        for k in range(n_req):  # each input's pick: its request nearest its accept pointer
            a = req_in[k]
            if in_match[a] >= 0:
                continue
            n = 0
            for k2 in range(n_req):
                if req_in[k2] == a:
                    cand[n] = req_out[k2]
                    n += 1
            in_match[a] = _rr_first(cand, n, ptr[a_, row, a], n_out)
        for k in range(n_req):
            b = req_out[k]
            if out_match[b] >= 0 or in_match[req_in[k]] != b:
                continue
            n = 0
            for k2 in range(n_req):
                if req_out[k2] == b and in_match[req_in[k2]] == b:
                    cand[n] = req_in[k2]
                    n += 1
            a = _rr_first(cand, n, ptr[g, row, b], n_in)
            out_match[b] = a
            ptr[g, row, b] = (a + 1) % n_in
            ptr[a_, row, a] = (b + 1) % n_out
        for k in range(n_req):
            a = req_in[k]
            b = in_match[a]
            if b >= 0 and out_match[b] != a:
                in_match[a] = -1
        return
    for it in range(iters):
        # grant: every unmatched output picks among the unmatched inputs requesting it
        for k in range(n_req):
            b = req_out[k]
            if out_match[b] != -1:
                continue
            n = 0
            for k2 in range(n_req):
                a = req_in[k2]
                if req_out[k2] == b and in_match[a] < 0:
                    cand[n] = a
                    n += 1
            if n > 0:
                out_match[b] = -2 - _rr_first(cand, n, ptr[g, row, b], n_in)  # a grant
        # accept: every unmatched input picks among the outputs that granted it
        for k in range(n_req):
            a = req_in[k]
            if in_match[a] != -1:
                continue
            n = 0
            for k2 in range(n_req):
                b = req_out[k2]
                if req_in[k2] == a and out_match[b] == -2 - a:
                    cand[n] = b
                    n += 1
            if n > 0:
                b = _rr_first(cand, n, ptr[a_, row, a], n_out)
                in_match[a] = b
                out_match[b] = a
                if it == 0:
                    ptr[g, row, b] = (a + 1) % n_in
                    ptr[a_, row, a] = (b + 1) % n_out
        for k in range(n_req):  # grants not accepted are released for the next iteration
            b = req_out[k]
            if out_match[b] < -1:
                out_match[b] = -1


# ------------------------------------------------------------------ routing
@numba.njit(cache=True, _nrt=False, error_model="numpy")
def _start_packet(cfg, nodes_s, vc, br, buf, pk, dest, r, i, v, t_from):
    """The front flit of (r, i, v) is a head: split its destinations into branches (route);
    VC allocation may start at ``t_from + routing_delay``."""
    width = cfg[CF_W]
    f = buf[r, i, v, vc[VC_HEAD, r, i, v]]
    p = f // FLIT
    vc[VC_PK, r, i, v] = p
    vc[VC_POPPED, r, i, v] = 0
    x, y = r % width, r // width
    yx = cfg[CF_YX]
    nb = 0
    for k in range(pk[PK_LO, p], pk[PK_HI, p]):
        d = dest[k]
        dx, dy = nodes_s[NS_X, d], nodes_s[NS_Y, d]
        if yx == 0:
            if dx < x:
                port = 1
            elif dx > x:
                port = 0
            elif dy < y:
                port = 3
            elif dy > y:
                port = 2
            else:
                port = nodes_s[NS_PORT, d]
        else:
            if dy < y:
                port = 3
            elif dy > y:
                port = 2
            elif dx < x:
                port = 1
            elif dx > x:
                port = 0
            else:
                port = nodes_s[NS_PORT, d]
        # a branch is a run of consecutive destinations that leave by the same port
        if nb > 0 and br[BR_PORT, r, i, v, nb - 1] == port:
            br[BR_HI, r, i, v, nb - 1] = k + 1
        else:
            br[BR_PORT, r, i, v, nb] = port
            br[BR_OVC, r, i, v, nb] = -1
            br[BR_SENT, r, i, v, nb] = 0
            br[BR_LO, r, i, v, nb] = k
            br[BR_HI, r, i, v, nb] = k + 1
            br[BR_PK, r, i, v, nb] = -1
            br[BR_VAGR, r, i, v, nb] = -1
            nb += 1
    vc[VC_BRN, r, i, v] = nb
    vc[VC_STATE, r, i, v] = V_VCALLOC
    vc[VC_FROM, r, i, v] = t_from + cfg[CF_RD]
    vc[VC_VA_T, r, i, v] = -1
    vc[VC_SA_T, r, i, v] = -1


# ------------------------------------------------------------------ queues
@numba.njit(cache=True, inline="always", error_model="numpy")
def _lq_push(lq, port, r, i, f, v, t):
    q = lq.shape[3]
    k = port[PT_LQ_H, r, i] + port[PT_LQ_N, r, i]
    if k >= q:
        k -= q
    lq[LQ_F, r, i, k] = f
    lq[LQ_V, r, i, k] = v
    lq[LQ_T, r, i, k] = t
    port[PT_LQ_N, r, i] += 1


@numba.njit(cache=True, inline="always", error_model="numpy")
def _cq_push(cq, port, r, o, v, t):
    q = cq.shape[3]
    k = port[PT_CQ_H, r, o] + port[PT_CQ_N, r, o]
    if k >= q:
        k -= q
    cq[CQ_V, r, o, k] = v
    cq[CQ_T, r, o, k] = t
    port[PT_CQ_N, r, o] += 1


@numba.njit(cache=True, inline="always", error_model="numpy")
def _ncq_push(ncq, node, n, v, t):
    q = ncq.shape[2]
    k = node[ND_CQ_H, n] + node[ND_CQ_N, n]
    if k >= q:
        k -= q
    ncq[CQ_V, n, k] = v
    ncq[CQ_T, n, k] = t
    node[ND_CQ_N, n] += 1


@numba.njit(cache=True, inline="always", error_model="numpy")
def _block(vc, stall, r, i, v, t, why):
    """VC (r, i, v) waits from cycle t for a reason (a stall counter) it cannot act on."""
    if vc[VC_BLOCKED, r, i, v] < 0:
        vc[VC_BLOCKED, r, i, v] = t
        vc[VC_BLOCK_WHY, r, i, v] = why


@numba.njit(cache=True, inline="always", error_model="numpy")
def _unblock(vc, stall, r, i, v, t):
    """VC (r, i, v) is evaluated again at t: the cycles it waited count as stalls."""
    b = vc[VC_BLOCKED, r, i, v]
    if b >= 0:
        if t > b:
            stall[r, vc[VC_BLOCK_WHY, r, i, v]] += t - b
        vc[VC_BLOCKED, r, i, v] = -1


# ------------------------------------------------------------------ a router's cycle
@numba.njit(cache=True, _nrt=False, error_model="numpy")
def _router(cfg, topo, nodes_s, vc, br, buf, port, lq, cq, va_ptr, rbusy, act, node, ncq, pk,
            dest, dsvc, grp, link_flits, win_link, win_occ, stall, ctr, rheap, rpri, rpos,
            src_list, r, t, req_in, req_out, m_in, m_out, cand, sw_vc, sw_br, cur):  # fmt: skip
    """Everything router r does in cycle t (it has something due); returns the flits it moved
    and schedules its next due cycle."""
    P, V, B, D = cfg[CF_P], cfg[CF_V], cfg[CF_B], cfg[CF_D]  # noqa: N806
    vd, sd, st_delay = cfg[CF_VD], cfg[CF_SD], cfg[CF_ST]
    moved = 0
    win = ctr[C_WINDOW]
    # ---------------------------------------------------------- read inputs
    q = lq.shape[3]
    for i in range(P):
        while port[PT_LQ_N, r, i] > 0:
            h = port[PT_LQ_H, r, i]
            if lq[LQ_T, r, i, h] > t:
                break
            f, v = lq[LQ_F, r, i, h], lq[LQ_V, r, i, h]
            h += 1
            port[PT_LQ_H, r, i] = 0 if h == q else h
            port[PT_LQ_N, r, i] -= 1
            n = vc[VC_N, r, i, v]
            k = vc[VC_HEAD, r, i, v] + n
            buf[r, i, v, k - D if k >= D else k] = f
            vc[VC_N, r, i, v] = n + 1
            if win >= 0:
                occ = 0
                for vv in range(V):
                    occ += vc[VC_N, r, i, vv]
                if occ > win_occ[win, r * P + i]:
                    win_occ[win, r * P + i] = occ
            if vc[VC_STATE, r, i, v] == V_IDLE:  # the VC joins the router's busy list
                act[0, r, rbusy[r]] = i * V + v
                act[1, r, i * V + v] = rbusy[r]
                rbusy[r] += 1
                _start_packet(cfg, nodes_s, vc, br, buf, pk, dest, r, i, v, t)
    qc = cq.shape[3]
    for o in range(P):
        while port[PT_CQ_N, r, o] > 0:
            h = port[PT_CQ_H, r, o]
            if cq[CQ_T, r, o, h] > t:
                break
            vc[VC_CREDITS, r, o, cq[CQ_V, r, o, h]] += 1
            h += 1
            port[PT_CQ_H, r, o] = 0 if h == qc else h
            port[PT_CQ_N, r, o] -= 1
    na = rbusy[r]
    if na > 0:
        for k in range(na):  # the busy VCs (a copy: sending may take some off the list)
            cur[k] = act[0, r, k]
        # ------------------------------------------------------ VC allocation
        n_vi, n_vo = P * V * B, P * V
        n_req = 0
        for kv in range(na):
            i = cur[kv] // V
            v = cur[kv] - i * V
            if True:
                if vc[VC_STATE, r, i, v] != V_VCALLOC or vc[VC_VA_T, r, i, v] >= 0:
                    continue
                if vc[VC_FROM, r, i, v] > t:
                    continue
                asked = False
                for b in range(vc[VC_BRN, r, i, v]):
                    if br[BR_OVC, r, i, v, b] >= 0:
                        continue
                    o = br[BR_PORT, r, i, v, b]
                    for ov in range(V):
                        if vc[VC_OWNER, r, o, ov] < 0:
                            req_in[n_req] = (i * V + v) * B + b
                            req_out[n_req] = o * V + ov
                            n_req += 1
                            asked = True
                if not asked:
                    _block(vc, stall, r, i, v, t, S_VC_BUSY)  # every VC it needs is held
                    continue
                _unblock(vc, stall, r, i, v, t)
                vc[VC_VA_T, r, i, v] = t + vd - 1
        if n_req > 0:
            _match(req_in, req_out, n_req, n_vi, n_vo, va_ptr, 0, 1, r, cfg[CF_ITERS],
                   cfg[CF_ALLOC], m_in, m_out, cand)  # fmt: skip
            for k in range(n_req):
                a = req_in[k]
                iv = a // B
                b = a - iv * B
                i, v = iv // V, iv % V
                if m_in[a] >= 0:
                    br[BR_VAGR, r, i, v, b] = m_in[a] % V
        # VC allocation ends (this cycle's, and earlier ones with longer delays)
        for kv in range(na):
            i = cur[kv] // V
            v = cur[kv] - i * V
            if True:
                if vc[VC_STATE, r, i, v] != V_VCALLOC or vc[VC_VA_T, r, i, v] != t:
                    continue
                done = True
                lost = False
                for b in range(vc[VC_BRN, r, i, v]):
                    if br[BR_OVC, r, i, v, b] >= 0:
                        continue
                    ov = br[BR_VAGR, r, i, v, b]
                    o = br[BR_PORT, r, i, v, b]
                    if ov >= 0 and vc[VC_OWNER, r, o, ov] < 0:
                        vc[VC_OWNER, r, o, ov] = (i * V + v) * B + b
                        br[BR_OVC, r, i, v, b] = ov
                    else:
                        done = False
                        lost = True
                    br[BR_VAGR, r, i, v, b] = -1
                if lost:
                    stall[r, S_VC_LOST] += 1
                vc[VC_VA_T, r, i, v] = -1
                vc[VC_FROM, r, i, v] = t + 1
                if done:
                    vc[VC_STATE, r, i, v] = V_ACTIVE
        # ------------------------------------------------------ switch allocation
        n_req = 0
        for kv in range(na):
            i = cur[kv] // V
            v = cur[kv] - i * V
            if True:
                if vc[VC_STATE, r, i, v] != V_ACTIVE or vc[VC_SA_T, r, i, v] >= 0:
                    continue
                if vc[VC_FROM, r, i, v] > t or vc[VC_N, r, i, v] == 0:
                    continue
                p = vc[VC_PK, r, i, v]
                avail = vc[VC_POPPED, r, i, v] + vc[VC_N, r, i, v]  # flits of p received
                size = pk[PK_SIZE, p]
                if avail > size:
                    avail = size
                asked = False
                waiting = False
                for b in range(vc[VC_BRN, r, i, v]):
                    if br[BR_SENT, r, i, v, b] >= avail:
                        continue  # this branch waits for the next flit
                    o, ov = br[BR_PORT, r, i, v, b], br[BR_OVC, r, i, v, b]
                    if vc[VC_CREDITS, r, o, ov] <= 0:
                        waiting = True  # the downstream buffer is full
                        continue
                    if port[PT_OUT_FREE, r, o] > t + sd - 1 + st_delay:
                        continue  # the link still serializes an earlier flit
                    # one VC per (input, output), round robin from sw_rr (BookSim2's Supersedes)
                    held = sw_vc[i * P + o]
                    rr = port[PT_SW_RR, r, i]
                    if held < 0:
                        req_in[n_req] = i
                        req_out[n_req] = o
                        n_req += 1
                        sw_vc[i * P + o] = v
                        sw_br[i * P + o] = b
                    else:
                        dv, dc = v - rr, held - rr
                        if dv < 0:
                            dv += V
                        if dc < 0:
                            dc += V
                        if dv < dc:
                            sw_vc[i * P + o] = v
                            sw_br[i * P + o] = b
                    asked = True
                if asked:
                    _unblock(vc, stall, r, i, v, t)
                    vc[VC_SA_T, r, i, v] = t + sd - 1
                    vc[VC_SA_GR, r, i, v] = -1
                elif waiting:
                    _block(vc, stall, r, i, v, t, S_NO_CREDIT)
        if n_req > 0:
            _match(req_in, req_out, n_req, P, P, port, PT_SW_G, PT_SW_A, r, cfg[CF_ITERS],
                   cfg[CF_ALLOC], m_in, m_out, cand)  # fmt: skip
            for k in range(n_req):
                i, o = req_in[k], req_out[k]
                v = sw_vc[i * P + o]
                if m_in[i] == o:
                    vc[VC_SA_GR, r, i, v] = sw_br[i * P + o]
                    port[PT_SW_RR, r, i] = (v + 1) % V
            for k in range(n_req):
                sw_vc[req_in[k] * P + req_out[k]] = -1
            for kv in range(na):
                i = cur[kv] // V
                v = cur[kv] - i * V
                if vc[VC_SA_T, r, i, v] == t + sd - 1 and vc[VC_SA_GR, r, i, v] == -1:
                    vc[VC_SA_GR, r, i, v] = -2
                    stall[r, S_SW_LOST] += 1  # lost the switch (or its port's turn)
        # switch allocation ends: the grants whose delay has passed send their flits
        for kv in range(na):
            i = cur[kv] // V
            v = cur[kv] - i * V
            if True:
                if vc[VC_STATE, r, i, v] != V_ACTIVE or vc[VC_SA_T, r, i, v] != t:
                    continue
                b = vc[VC_SA_GR, r, i, v]
                vc[VC_SA_T, r, i, v] = -1
                vc[VC_FROM, r, i, v] = t + 1
                if b >= 0:
                    moved += _send(cfg, topo, nodes_s, vc, br, buf, port, lq, cq, rbusy, act,
                                   node, ncq, pk, dest, dsvc, grp, link_flits, win_link, ctr,
                                   rheap, rpri, rpos, src_list, r, i, v, b, t)  # fmt: skip
    # ---------------------------------------------------------- when is it due next?
    nxt = NEVER
    for i in range(P):
        if port[PT_LQ_N, r, i] > 0:
            tt = lq[LQ_T, r, i, port[PT_LQ_H, r, i]]
            if tt < nxt:
                nxt = tt
        if port[PT_CQ_N, r, i] > 0:
            tt = cq[CQ_T, r, i, port[PT_CQ_H, r, i]]
            if tt < nxt:
                nxt = tt
    if rbusy[r] > 0 and nxt > t + 1:
        for kv in range(rbusy[r]):
            i = act[0, r, kv] // V
            v = act[0, r, kv] - i * V
            if True:
                s = vc[VC_STATE, r, i, v]
                if s == V_IDLE:
                    continue
                when = NEVER
                if vc[VC_VA_T, r, i, v] >= 0:
                    when = vc[VC_VA_T, r, i, v]
                elif vc[VC_SA_T, r, i, v] >= 0:
                    when = vc[VC_SA_T, r, i, v]
                elif s == V_VCALLOC:
                    for b in range(vc[VC_BRN, r, i, v]):
                        if br[BR_OVC, r, i, v, b] >= 0:
                            continue
                        o = br[BR_PORT, r, i, v, b]
                        for ov in range(V):
                            if vc[VC_OWNER, r, o, ov] < 0:
                                when = vc[VC_FROM, r, i, v]
                                break
                    if when == NEVER:
                        _block(vc, stall, r, i, v, t + 1, S_VC_BUSY)
                elif vc[VC_N, r, i, v] > 0:  # active, with a flit: is some branch able to go?
                    p = vc[VC_PK, r, i, v]
                    avail = vc[VC_POPPED, r, i, v] + vc[VC_N, r, i, v]
                    if avail > pk[PK_SIZE, p]:
                        avail = pk[PK_SIZE, p]
                    for b in range(vc[VC_BRN, r, i, v]):
                        if br[BR_SENT, r, i, v, b] >= avail:
                            continue
                        o, ov = br[BR_PORT, r, i, v, b], br[BR_OVC, r, i, v, b]
                        if vc[VC_CREDITS, r, o, ov] <= 0:
                            _block(vc, stall, r, i, v, t + 1, S_NO_CREDIT)
                            continue
                        w = port[PT_OUT_FREE, r, o] - (sd - 1 + st_delay)
                        if w < vc[VC_FROM, r, i, v]:
                            w = vc[VC_FROM, r, i, v]
                        if w < when:
                            when = w
                if when < t + 1:
                    when = t + 1
                if when < nxt:
                    nxt = when
    if nxt < NEVER:
        _schedule(rheap, rpri, rpos, ctr, r, nxt)
    return moved


@numba.njit(cache=True, _nrt=False, error_model="numpy")
def _send(cfg, topo, nodes_s, vc, br, buf, port, lq, cq, rbusy, act, node, ncq, pk, dest, dsvc,
          grp, link_flits, win_link, ctr, rheap, rpri, rpos, src_list, r, i, v, b, t):  # fmt: skip
    """Branch b of input VC (r, i, v) sends its next flit (its switch allocation ends at t)."""
    D = cfg[CF_D]  # noqa: N806
    p = vc[VC_PK, r, i, v]
    k = br[BR_SENT, r, i, v, b]
    o, ov = br[BR_PORT, r, i, v, b], br[BR_OVC, r, i, v, b]
    size = pk[PK_SIZE, p]
    if k == 0:  # the head: the branch carries p itself, or a new record for its sub-range
        lo, hi = br[BR_LO, r, i, v, b], br[BR_HI, r, i, v, b]
        if lo == pk[PK_LO, p] and hi == pk[PK_HI, p]:
            child = p
        else:
            child = ctr[C_NPK]
            ctr[C_NPK] += 1
            for f in range(N_PK):
                pk[f, child] = pk[f, p]
            pk[PK_LO, child] = lo
            pk[PK_HI, child] = hi
            pk[PK_ATIME, child] = -1
            pk[PK_DONE, child] = -1
        br[BR_PK, r, i, v, b] = child
        pk[PK_HOPS, child] += 1
    child = br[BR_PK, r, i, v, b]
    f = child * FLIT + k
    vc[VC_CREDITS, r, o, ov] -= 1
    t_send = t + cfg[CF_ST]
    port[PT_OUT_FREE, r, o] = t_send + topo[T_SER, r, o]
    arrive = t_send + topo[T_LAT, r, o] + 1
    lid = topo[T_LINK, r, o]
    link_flits[lid] += 1
    win = ctr[C_WINDOW]
    if win >= 0:
        win_link[win, lid] += 1
    if o < 4:
        nb = topo[T_NBR, r, o]
        _lq_push(lq, port, nb, o ^ 1, f, ov, arrive)
        _schedule(rheap, rpri, rpos, ctr, nb, arrive)
        ctr[C_INFLIGHT] += 1
    else:  # it leaves the network, reaching the terminal at ``arrive``
        _sink(cfg, topo, cq, port, node, pk, dsvc, grp, ctr, rheap, rpri, rpos, r, o, ov, f,
              arrive)  # fmt: skip
    br[BR_SENT, r, i, v, b] = k + 1
    if k + 1 == size:
        vc[VC_OWNER, r, o, ov] = -1  # the tail has left: the output VC is free again
    # free the buffer slots every branch has sent
    least = size
    for bb in range(vc[VC_BRN, r, i, v]):
        if br[BR_SENT, r, i, v, bb] < least:
            least = br[BR_SENT, r, i, v, bb]
    while vc[VC_POPPED, r, i, v] < least:
        h = vc[VC_HEAD, r, i, v] + 1
        vc[VC_HEAD, r, i, v] = 0 if h == D else h
        vc[VC_N, r, i, v] -= 1
        vc[VC_POPPED, r, i, v] += 1
        ctr[C_INFLIGHT] -= 1
        if i < 4:  # a credit to the neighbour in direction i, for its output i ^ 1
            up = topo[T_NBR, r, i]
            when = t + topo[T_LAT, up, i ^ 1] + 1 + cfg[CF_CD]
            _cq_push(cq, port, up, i ^ 1, v, when)
            _schedule(rheap, rpri, rpos, ctr, up, when)
        else:  # … or to the terminal of this local port
            n = topo[T_OUT_NODE, r, i]
            _ncq_push(ncq, node, n, v, t + nodes_s[NS_INJ_LAT, n] + 1)
    if least == size:  # every branch sent the tail: the next packet, or idle
        if vc[VC_N, r, i, v] > 0:
            _start_packet(cfg, nodes_s, vc, br, buf, pk, dest, r, i, v, t + 1)
        else:  # idle: off the router's busy list
            vc[VC_STATE, r, i, v] = V_IDLE
            V = cfg[CF_V]  # noqa: N806
            me = i * V + v
            at = act[1, r, me]
            last = act[0, r, rbusy[r] - 1]
            act[0, r, at] = last
            act[1, r, last] = at
            rbusy[r] -= 1
    return 1


@numba.njit(cache=True, _nrt=False, error_model="numpy")
def _sink(cfg, topo, cq, port, node, pk, dsvc, grp, ctr, rheap, rpri, rpos, r, o, ov, f, arrive):
    """A flit reaches terminal ``T_OUT_NODE[r, o]`` at cycle ``arrive``; its credit returns
    once the terminal has processed it."""
    n = topo[T_OUT_NODE, r, o]
    p = f // FLIT
    k = f - p * FLIT
    size = pk[PK_SIZE, p]
    if ctr[C_MEASURE_FROM] <= arrive < ctr[C_MEASURE_TO]:
        node[ND_ACC, n] += 1
    back = topo[T_LAT, r, o] + 1 + cfg[CF_CD]
    if k < size - 1:
        if cfg[CF_SINK] == 0:
            _cq_push(cq, port, r, o, ov, arrive + back)
            _schedule(rheap, rpri, rpos, ctr, r, arrive + back)
        return
    # the tail: the packet is whole at the terminal
    pk[PK_ATIME, p] = arrive
    if cfg[CF_SINK] == 1:  # a core's server: packets one after another
        start = arrive if arrive > node[ND_FREE, n] else node[ND_FREE, n]
        done = start + dsvc[pk[PK_LO, p]]
        node[ND_FREE, n] = done
        for _ in range(size):  # the packet's slots are freed once it is processed
            _cq_push(cq, port, r, o, ov, done + back)
    else:
        done = arrive
        _cq_push(cq, port, r, o, ov, done + back)
    _schedule(rheap, rpri, rpos, ctr, r, done + back)
    pk[PK_DONE, p] = done
    ctr[C_DELIVERED] += 1
    if done > ctr[C_LAST_DONE]:
        ctr[C_LAST_DONE] = done
    g = pk[PK_GROUP, p]
    if g >= 0:
        grp[G_LEFT, g] -= 1
        if done > grp[G_DONE, g]:
            grp[G_DONE, g] = done


# ------------------------------------------------------------------ terminals
@numba.njit(cache=True, inline="always", error_model="numpy")
def _enqueue(node, pk, src_list, ctr, n, p):
    pk[PK_NEXT, p] = -1
    if node[ND_QTAIL, n] < 0:
        node[ND_QHEAD, n] = p
    else:
        pk[PK_NEXT, node[ND_QTAIL, n]] = p
    node[ND_QTAIL, n] = p
    if node[ND_ACTIVE, n] == 0:  # the terminal joins the list of those with a queue
        node[ND_ACTIVE, n] = 1
        src_list[ctr[C_NSRC]] = n
        ctr[C_NSRC] += 1


@numba.njit(cache=True, _nrt=False, error_model="numpy")
def _pattern_dest(cfg, perm, row_ptr, dest_tab, cum, fraction, rng, src):
    kind = cfg[CF_PATTERN]
    n_nodes = cfg[CF_NODES]
    if kind == 0:
        return np.int64(_uniform(rng) * n_nodes)
    if kind == 1:
        return perm[src]
    if fraction < 1.0 and _uniform(rng) >= fraction:
        return np.int64(_uniform(rng) * n_nodes)
    row = 0 if cfg[CF_SHARED] else src
    lo, hi = row_ptr[row], row_ptr[row + 1]
    x = _uniform(rng)
    for k in range(lo, hi):
        if x < cum[k]:
            return dest_tab[k]
    return dest_tab[hi - 1]


@numba.njit(cache=True, _nrt=False, error_model="numpy")
def _generate(cfg, node, pk, dest, src_list, gheap, gpri, gpos, ctr, perm, row_ptr, dest_tab,
              cum, fraction, rng, t, inject_p, size, measured):  # fmt: skip
    """New synthetic packets of cycle t (each terminal a Bernoulli(inject_p) process)."""
    n_nodes = cfg[CF_NODES]
    if ctr[C_GEN_P] != np.int64(inject_p * 1e15):  # a new rate: draw every first arrival
        ctr[C_GEN_P] = np.int64(inject_p * 1e15)
        ctr[C_GHEAP_N] = 0
        for n in range(n_nodes):
            gpos[n] = -1
        if inject_p > 0.0:
            for n in range(n_nodes):
                gpri[n] = -float(t + _gap(rng, inject_p))
                ctr[C_GHEAP_N] = push(gheap, gpri, gpos, ctr[C_GHEAP_N], n)
    while ctr[C_GHEAP_N] > 0 and -gpri[gheap[0]] <= t:
        n = gheap[0]
        d = _pattern_dest(cfg, perm, row_ptr, dest_tab, cum, fraction, rng, n)
        p = ctr[C_NPK]
        ctr[C_NPK] += 1
        dest[p] = d  # one destination: the range [p, p + 1)
        pk[PK_SRC, p] = n
        pk[PK_LO, p] = p
        pk[PK_HI, p] = p + 1
        pk[PK_SIZE, p] = size
        pk[PK_CTIME, p] = t
        pk[PK_ITIME, p] = -1
        pk[PK_ATIME, p] = -1
        pk[PK_HOPS, p] = 0
        pk[PK_MEAS, p] = measured
        pk[PK_DONE, p] = -1
        pk[PK_PARENT, p] = p
        pk[PK_GROUP, p] = -1
        _enqueue(node, pk, src_list, ctr, n, p)
        node[ND_CREATED, n] += 1
        ctr[C_GHEAP_N] = update(gheap, gpri, gpos, ctr[C_GHEAP_N], n,
                                -float(t + 1 + _gap(rng, inject_p)))  # fmt: skip


@numba.njit(cache=True, _nrt=False, error_model="numpy")
def _inject(cfg, nodes_s, node, nodev, ncq, lq, port, pk, link_flits, win_link, ctr, rheap,
            rpri, rpos, src_list, t):  # fmt: skip
    """Every terminal with a queue sends one flit into its router, if it has a credit."""
    V = cfg[CF_V]  # noqa: N806
    n_r = cfg[CF_W] * cfg[CF_H]
    q = ncq.shape[2]
    win = ctr[C_WINDOW]
    moved = 0
    j = 0
    while j < ctr[C_NSRC]:
        n = src_list[j]
        while node[ND_CQ_N, n] > 0:
            h = node[ND_CQ_H, n]
            if ncq[CQ_T, n, h] > t:
                break
            nodev[NV_CRED, n, ncq[CQ_V, n, h]] += 1
            h += 1
            node[ND_CQ_H, n] = 0 if h == q else h
            node[ND_CQ_N, n] -= 1
        p = node[ND_QHEAD, n]
        if p < 0:  # its queue is empty: it leaves the list
            node[ND_ACTIVE, n] = 0
            ctr[C_NSRC] -= 1
            src_list[j] = src_list[ctr[C_NSRC]]
            continue
        j += 1
        if pk[PK_CTIME, p] > t:
            continue
        k = node[ND_SENT, n]
        if k == 0:  # a head: take a free VC, round robin after the last one used
            c = -1
            for jj in range(1, V + 1):
                cc = (node[ND_LAST, n] + jj) % V
                if nodev[NV_OWNER, n, cc] == 0 and nodev[NV_CRED, n, cc] > 0:
                    c = cc
                    break
            if c < 0:
                continue
            nodev[NV_OWNER, n, c] = 1
            node[ND_LAST, n] = c
            node[ND_VC, n] = c
            pk[PK_ITIME, p] = t
        c = node[ND_VC, n]
        if nodev[NV_CRED, n, c] <= 0:
            continue
        nodev[NV_CRED, n, c] -= 1
        r = nodes_s[NS_ROUTER, n]
        arrive = t + nodes_s[NS_INJ_LAT, n] + 1
        _lq_push(lq, port, r, nodes_s[NS_PORT, n], p * FLIT + k, c, arrive)
        _schedule(rheap, rpri, rpos, ctr, r, arrive)
        ctr[C_INFLIGHT] += 1
        lid = 4 * n_r + n
        link_flits[lid] += 1
        if win >= 0:
            win_link[win, lid] += 1
        moved += 1
        if k + 1 == pk[PK_SIZE, p]:
            node[ND_SENT, n] = 0
            nodev[NV_OWNER, n, c] = 0
            node[ND_QHEAD, n] = pk[PK_NEXT, p]
            if node[ND_QHEAD, n] < 0:
                node[ND_QTAIL, n] = -1
        else:
            node[ND_SENT, n] = k + 1
    return moved


@numba.njit(cache=True, _nrt=False, error_model="numpy")
def _release(node, pk, src_list, rel_order, rel_off, grp_ptr, grp, ctr, t):
    """Put a mapping's packets whose time has come into their sources' queues; returns the
    cycle of the next release (NEVER: none known yet).

    Packets come in groups (layers), in ``rel_order``; group g opens at ``grp[G_OPEN, g]``
    (set beforehand, or, when it is -1, once group g − 1 is wholly processed) and each of its
    packets is released ``rel_off`` cycles after that.
    """
    n_groups = grp_ptr.size - 1
    g = ctr[C_OPEN_GROUP]
    while g < n_groups:
        if grp[G_OPEN, g] < 0:
            if grp[G_LEFT, g - 1] > 0:
                return NEVER
            prev = grp[G_DONE, g - 1]
            grp[G_OPEN, g] = prev if prev > grp[G_OPEN, g - 1] else grp[G_OPEN, g - 1]
        base = grp[G_OPEN, g]
        while ctr[C_REL_PTR] < grp_ptr[g + 1]:
            j = ctr[C_REL_PTR]
            when = base + rel_off[j]
            if when > t:
                return when
            p = rel_order[j]
            pk[PK_CTIME, p] = when
            _enqueue(node, pk, src_list, ctr, pk[PK_SRC, p], p)
            ctr[C_REL_PTR] += 1
        g += 1
        ctr[C_OPEN_GROUP] = g
    return NEVER


# ------------------------------------------------------------------ the loop
@numba.njit(cache=True, _nrt=False, error_model="numpy")
def run(cfg, topo, nodes_s, vc, br, buf, port, lq, cq, va_ptr, rbusy, act, node, nodev, ncq, pk,
        dest, dsvc, rel_order, rel_off, grp_ptr, grp, link_flits, win_link, win_occ, stall, ctr,
        rng, rheap, rpri, rpos, gheap, gpri, gpos, src_list, perm, row_ptr, dest_tab, cum,
        fraction, req_in, req_out, m_in, m_out, cand, sw_vc, sw_br, cur, t_end, inject_p, size,
        measured, window, stop_when_idle):  # fmt: skip
    """Advance from ``ctr[C_T]`` to ``t_end`` (exclusive). Returns a status.

    ``inject_p``: packets per terminal and cycle of the synthetic sources; ``measured``: the
    flag of the packets created now; ``window``: cycles per trace window (0: no trace);
    ``stop_when_idle``: stop (``IDLE_END``) once nothing is queued, in flight or to release.
    ``req_in`` … ``cur`` are scratch arrays (see ``workspace``).
    """
    n_r = cfg[CF_W] * cfg[CF_H]
    P, B = cfg[CF_P], cfg[CF_B]  # noqa: N806
    n_released = rel_order.size
    cap = pk.shape[1]
    watchdog = cfg[CF_WATCHDOG]
    t = ctr[C_T]
    next_release = t
    while t < t_end:
        if window > 0:
            w = t // window
            if w >= win_link.shape[0]:
                ctr[C_T] = t
                return FULL
            ctr[C_WINDOW] = w
        if ctr[C_NPK] + 2 * cfg[CF_NODES] + n_r * P * B >= cap:
            ctr[C_T] = t
            return FULL  # out of packet records: the caller grows the arrays
        if ctr[C_REL_PTR] < n_released and (t >= next_release or next_release == NEVER):
            next_release = _release(node, pk, src_list, rel_order, rel_off, grp_ptr, grp, ctr, t)
        if inject_p > 0.0 or ctr[C_GEN_P] != 0:
            _generate(cfg, node, pk, dest, src_list, gheap, gpri, gpos, ctr, perm, row_ptr,
                      dest_tab, cum, fraction, rng, t, inject_p, size, measured)  # fmt: skip
        moved = 0
        if ctr[C_NSRC] > 0:
            moved += _inject(cfg, nodes_s, node, nodev, ncq, lq, port, pk, link_flits, win_link,
                             ctr, rheap, rpri, rpos, src_list, t)  # fmt: skip
        while ctr[C_RHEAP_N] > 0 and -rpri[rheap[0]] <= t:
            r = rheap[0]
            ctr[C_RHEAP_N] = pop(rheap, rpri, rpos, ctr[C_RHEAP_N])
            moved += _router(cfg, topo, nodes_s, vc, br, buf, port, lq, cq, va_ptr, rbusy, act,
                             node, ncq, pk, dest, dsvc, grp, link_flits, win_link, win_occ, stall,
                             ctr, rheap, rpri, rpos, src_list, r, t, req_in, req_out, m_in, m_out,
                             cand, sw_vc, sw_br, cur)  # fmt: skip
        if moved > 0:
            ctr[C_PROGRESS] = t
        elif ctr[C_INFLIGHT] > 0 and t - ctr[C_PROGRESS] > watchdog:
            ctr[C_T] = t
            return DEADLOCK
        idle_sources = ctr[C_NSRC] == 0
        if stop_when_idle and idle_sources and ctr[C_INFLIGHT] == 0:
            if ctr[C_REL_PTR] >= n_released and t >= ctr[C_LAST_DONE]:
                ctr[C_T] = t + 1
                return IDLE_END
        # the next cycle in which anything is due
        nxt = t + 1
        if idle_sources:
            nxt = t_end
            if ctr[C_RHEAP_N] > 0:
                due = np.int64(-rpri[rheap[0]])
                if due < nxt:
                    nxt = due
            if ctr[C_GHEAP_N] > 0:
                due = np.int64(-gpri[gheap[0]])
                if due < nxt:
                    nxt = due
            if ctr[C_REL_PTR] < n_released:
                if next_release == NEVER:  # a group may have just been wholly processed
                    next_release = _release(node, pk, src_list, rel_order, rel_off, grp_ptr, grp,
                                            ctr, t)  # fmt: skip
                if next_release < nxt:
                    nxt = next_release
            if stop_when_idle and ctr[C_INFLIGHT] == 0 and ctr[C_LAST_DONE] > t:
                if ctr[C_LAST_DONE] < nxt:
                    nxt = ctr[C_LAST_DONE]
            if nxt <= t:
                nxt = t + 1
            if ctr[C_INFLIGHT] > 0 and ctr[C_RHEAP_N] == 0:
                ctr[C_T] = t
                return DEADLOCK  # flits in the network and nothing will ever move them
        t = nxt
    ctr[C_T] = t
    return DONE


def workspace(P: int, V: int, B: int) -> dict:  # noqa: N803
    """The scratch arrays ``run`` needs for routers of P ports, V VCs, B branches."""
    n_req = P * V * B * V + P * P + 8
    return {
        "req_in": np.zeros(n_req, dtype=np.int64),
        "req_out": np.zeros(n_req, dtype=np.int64),
        "m_in": np.full(P * V * B + P, -1, dtype=np.int64),
        "m_out": np.full(P * V + P, -1, dtype=np.int64),
        "cand": np.zeros(n_req, dtype=np.int64),
        "sw_vc": np.full(P * P, -1, dtype=np.int64),
        "sw_br": np.zeros(P * P, dtype=np.int64),
        "cur": np.zeros(P * V, dtype=np.int64),
    }
