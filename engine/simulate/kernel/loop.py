"""The cycle loop: per cycle the servers' due tails, the release and generation of packets,
injection, then every router due (``router._router``, from the wheel of due routers), and
the next cycle in which anything is due."""

from __future__ import annotations

import numba
import numpy as np

from engine.heap import pop
from engine.simulate.kernel.base import _ix, _schedule
from engine.simulate.kernel.injection import _inject
from engine.simulate.kernel.router import _router
from engine.simulate.kernel.sinks import _serve_due
from engine.simulate.kernel.sources import _generate, _release

# isort: off
from engine.simulate.records import (C_FHEAP_N, C_GCAL_N, C_GEN_P, C_GHEAP_N, C_INFLIGHT,
    C_LAST_DONE, C_LOG_N, C_NFREE, C_NPK, C_NSRC, C_PROGRESS, C_REL_PTR, C_SQN, C_T, C_VISITS,
    C_WINDOW, DEADLOCK, DONE, FULL, GCAL, IDLE_END, NEVER, N_LOG, N_PK, Scratch, WHEEL,
)  # fmt: skip
# isort: on


# ------------------------------------------------------------------ the loop
@numba.njit(cache=True, _nrt=False, nogil=True, error_model="numpy")
def run(cfg, net, sim, trace, src, dw, ws, span):
    """Advance from ``ctr[C_T]`` to ``span.t_end`` (exclusive). Returns a status.

    ``cfg``: the run's scalars (``records.Config``); ``net``, ``sim``, ``trace``, ``src``: the
    mesh, the state, the counts and the packets' sources (``records.Net``, ``State``,
    ``Trace``, ``Sources``); ``dw``: when each router is due (``records.Wheel``); ``ws``:
    scratch arrays (``records.Scratch``, ``workspace``); ``span``: this call's bounds and the
    synthetic sources' rate (``records.Span``).
    """
    ctr, pk, pk_log, sq = sim.ctr, sim.pk, sim.log, sim.sq
    t_end, inject_p, size, window = span.t_end, span.inject_p, span.size, span.window
    stop_when_idle = span.stop_when_idle
    win_link, gheap, gpri, gcal = trace.win_link, src.gheap, src.gpri, src.gcal
    due, wheel, wn, fheap, fpri, fpos, _ = dw
    n_r = cfg.nr  # every mesh's routers
    P, B = cfg.p, cfg.b  # noqa: N806
    ahead = cfg.ahead
    unicast = cfg.unicast == 1
    n_released = src.rel_order.size
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
            _serve_due(cfg, net, sim, dw, t)
        if ctr[C_REL_PTR] < n_released and (t >= next_release or next_release == NEVER):
            next_release = _release(cfg, sim, src, t)
        if inject_p > 0.0 or ctr[C_GEN_P] != 0:
            _generate(cfg, sim, src, t, inject_p, size, span.fraction, span.measured)
        moved = 0
        if ctr[C_NSRC] > 0:
            moved += _inject(cfg, net, sim, trace, dw, src.src_list, t)
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
                    u = _router(True, cfg, net, sim, trace, dw, ws, window, r, u)
                else:
                    u = _router(False, cfg, net, sim, trace, dw, ws, window, r, u)
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
                    next_release = _release(cfg, sim, src, t)
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
        va_vcs=np.zeros(P, dtype=np.int64),
    )
