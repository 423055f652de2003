"""The statistics, in one place: a router's stall counters (``M_STALL`` on, one per cause in
``records.STALLS``) and, in a traced run, the waits and buffer occupancy per window; the
tracked packet's hops (``ctr`` after ``N_CTR``, ``H_*``); and the scans over the packet
records a run's figures are read from.

A stage that sees a VC wait calls ``_block`` (the wait starts) and, when the VC acts again,
``_unblock`` (the cycles count); a stage that sees a VC lose an allocation calls ``_lost``.
A new stall cause is a new name in ``records.STALLS`` and a call in the stage that sees it."""

from __future__ import annotations

import numba
import numpy as np
from numba.cpython.unsafe.numbers import trailing_zeros

from engine.simulate.kernel.base import _ix

# isort: off
from engine.simulate.records import (C_TRACK, C_TRACK_N, C_WINDOW, H_ARRIVE, H_HEAD, H_IN, H_READY,
    H_ROUTER, H_VC_BUSY, M_BUSY, M_VCS, M_WIN, N_CTR, N_HOP, N_PK, N_PT, N_VC, N_WAIT, PK_ATIME,
    PK_CTIME, PK_MEAS, PK_PARENT, PK_SIZE, PT_SEEN, VC_BLOCKED,
    VC_BLOCK_WHY, VC_FROM, VC_HEAD, VC_N, VC_PK, W_OF_STALL,
)  # fmt: skip
# isort: on


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


@numba.njit(cache=True, nogil=True, forceinline=True, error_model="numpy")
def _lost(st, sb, ctr, win_wait, vb, r, why):
    """The VC at ``vb`` of router r lost an allocation (``why``: ``S_VC_LOST`` or
    ``S_SW_LOST``) this cycle: one cycle of that stall (``sb``: its router's stall
    counters), in the trace's window and, for the tracked packet's head, its hop's."""
    st[_ix(sb + why)] += 1
    win = ctr[C_WINDOW]
    if win >= 0:
        win_wait[_ix(win), _ix(r * N_WAIT + W_OF_STALL[why])] += 1
    _track_count(ctr, st, vb, r, H_VC_BUSY + why, 1)
