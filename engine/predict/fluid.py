"""The flow predictor's kernels: routed units, and a fluid schedule of the step.

A *unit* is what a source sends along one route per step: a unicast pair's messages (a
source partition to a destination partition), or, on a multicast NoC, the spikes of one
source whose destination partitions are the same (one tree). ``unit_links`` lists the
constraints each unit loads — the links of its route or tree on its source's mesh, its
source core's link into its router, each destination core's link from its router — and
its zero-load latency to its farthest destination.

``fluid_step`` schedules the step as a fluid: every source sends its messages in one
stream that interleaves its units in proportion (a core sends its spikes neuron after
neuron, each to all its destinations), so a source goes as fast as the most constrained of
its units lets it — a blocked head blocks what is behind it. At every moment the sources'
rates are max-min fair (progressive filling) over the constraints: links, each at the
bandwidth its flow control leaves it, and destination cores' servers, each at the rate its
synaptic work per message allows and closed while it serves its own spikes' work. The
rates change when a source has sent everything or a server opens.
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["fluid_step", "unit_links"]

_EPS = 1e-12


@numba.njit(cache=True, nogil=True)
def _route(out, n, sx, sy, dx, dy, gw, yx, base, hop_cycles):
    """Append the router links of one dimension-order route (constraint ids ``base`` +
    link id) to ``out`` from position ``n``; returns (n, zero-load cycles of its hops)."""
    row = dy if yx else sy
    col = sx if yx else dx
    cycles = 0.0
    for leg in range(2):
        if (leg == 0) != yx:  # along x
            x = sx
            while x != dx:
                d = 0 if dx > x else 1
                link = (row * gw + x) * 4 + d
                out[n] = base + link
                n += 1
                cycles += hop_cycles[link]
                x += 1 if d == 0 else -1
        else:
            y = sy
            while y != dy:
                d = 2 if dy > y else 3
                link = (y * gw + col) * 4 + d
                out[n] = base + link
                n += 1
                cycles += hop_cycles[link]
                y += 1 if d == 2 else -1
    return n, cycles


@numba.njit(cache=True, nogil=True)
def unit_links(
    u_src_core, u_ptr, u_dst_core, u_dst_server, u_yx, gx, gy, mesh, gw, gh, n_routers,
    n_cores, n_link_ids, n_meshes, hop_cycles, edge_cycles,
):  # fmt: skip
    """Per unit (source core ``u_src_core[u]``, destination cores ``u_dst_core[u_ptr[u]:
    u_ptr[u + 1]]`` and their servers' constraint ids ``u_dst_server``, dimension order
    ``u_yx[u]``): the constraint ids it loads (CSR ``ptr``/``ids``, each once: a tree
    crosses each of its links once; link ids offset by ``n_link_ids`` per mesh) and the
    zero-load cycles to its farthest destination (``edge_cycles`` for getting on and off
    the mesh)."""
    n_u = u_src_core.size
    size = 16
    for u in range(n_u):
        size += 1 + (u_ptr[u + 1] - u_ptr[u]) * (gw + gh + 2)
    ids = np.empty(size, dtype=np.int64)
    ptr = np.zeros(n_u + 1, dtype=np.int64)
    far = np.zeros(n_u, dtype=np.float64)
    mark = np.full(n_link_ids * n_meshes, -1, dtype=np.int64)
    n = 0
    for u in range(n_u):
        cs = u_src_core[u]
        base = mesh[cs] * n_link_ids
        ids[n] = base + 4 * n_routers + cs
        n += 1
        sx, sy = gx[cs], gy[cs]
        for j in range(u_ptr[u], u_ptr[u + 1]):
            cd = u_dst_core[j]
            m0 = n
            n, cycles = _route(ids, n, sx, sy, gx[cd], gy[cd], gw, u_yx[u], base, hop_cycles)
            w = m0  # a tree crosses a link once: drop those an earlier branch took
            for i in range(m0, n):
                if mark[ids[i]] != u:
                    mark[ids[i]] = u
                    ids[w] = ids[i]
                    w += 1
            n = w
            ids[n] = base + 4 * n_routers + n_cores + cd
            ids[n + 1] = u_dst_server[j]
            n += 2
            if cycles + edge_cycles > far[u]:
                far[u] = cycles + edge_cycles
        ptr[u + 1] = n
    return ptr, ids[:n].copy(), far


@numba.njit(cache=True, nogil=True)
def fluid_step(n_src, u_src, u_weight, ptr, ids, cap_all, opens_all):
    """The fluid schedule of one step (see the module). Sources ``0..n_src-1``; unit ``u``
    of source ``u_src[u]`` carries ``u_weight[u]`` messages over constraints
    ``ids[ptr[u]:ptr[u+1]]`` of capacity ``cap_all`` (messages per µs), each closed until
    ``opens_all`` (µs). Returns each source's finish time (µs; 0 for one that sends
    nothing, ∞ for one that cannot finish)."""
    # the constraints some unit loads, numbered compactly
    compact = np.full(cap_all.size, -1, dtype=np.int64)
    n_constraints = 0
    for i in range(ids.size):
        if compact[ids[i]] < 0:
            compact[ids[i]] = n_constraints
            n_constraints += 1
    cap = np.empty(n_constraints)
    opens = np.empty(n_constraints)
    for k in range(cap_all.size):
        if compact[k] >= 0:
            cap[compact[k]] = cap_all[k]
            opens[compact[k]] = opens_all[k]
    # per source: its constraints and their shares (messages over the source's total)
    total = np.zeros(n_src)
    for u in range(u_src.size):
        total[u_src[u]] += u_weight[u]
    acc = np.zeros(n_constraints)
    seen = np.full(n_constraints, -1, dtype=np.int64)  # the last source that touched k
    touched = np.empty(n_constraints, dtype=np.int64)
    # units grouped by source
    order = np.argsort(u_src, kind="mergesort")
    col_ptr = np.zeros(n_src + 1, dtype=np.int64)
    col_k = np.empty(ids.size, dtype=np.int64)
    col_w = np.empty(ids.size)
    m = 0
    j = 0
    for s in range(n_src):
        nt = 0
        while j < order.size and u_src[order[j]] == s:
            u = order[j]
            for i in range(ptr[u], ptr[u + 1]):
                k = compact[ids[i]]
                if seen[k] != s:
                    seen[k] = s
                    touched[nt] = k
                    nt += 1
                acc[k] += u_weight[u]
            j += 1
        for t in range(nt):
            k = touched[t]
            if total[s] > 0.0 and acc[k] > 0.0:  # (a unit of no messages loads nothing)
                col_k[m] = k
                col_w[m] = acc[k] / total[s]
                m += 1
            acc[k] = 0.0
        col_ptr[s + 1] = m
    col_k = col_k[:m]
    col_w = col_w[:m]
    # constraints → sources (CSR)
    row_cnt = np.zeros(n_constraints + 1, dtype=np.int64)
    for i in range(m):
        row_cnt[col_k[i] + 1] += 1
    row_ptr = np.cumsum(row_cnt)
    row_s = np.empty(m, dtype=np.int64)
    fill = row_ptr[:-1].copy()
    for s in range(n_src):
        for i in range(col_ptr[s], col_ptr[s + 1]):
            k = col_k[i]
            row_s[fill[k]] = s
            fill[k] += 1
    remaining = total.copy()
    active = total > 0
    finish = np.zeros(n_src)
    load = np.zeros(n_constraints)
    fixed = np.zeros(n_constraints)  # capacity taken by the sources frozen so far
    frozen = np.zeros(n_src, dtype=np.bool_)
    rate = np.zeros(n_src)
    live = np.empty(n_constraints, dtype=np.int64)  # constraints some free source loads
    t = 0.0
    n_active = 0
    for s in range(n_src):
        n_active += active[s]
    while n_active > 0:
        for k in range(n_constraints):
            load[k] = 0.0
            fixed[k] = 0.0
        for s in range(n_src):
            frozen[s] = not active[s]
            rate[s] = 0.0
        for k in range(n_constraints):  # a closed server holds every source that sends to it
            if opens[k] > t + _EPS:
                for i in range(row_ptr[k], row_ptr[k + 1]):
                    frozen[row_s[i]] = True
        n_free = 0
        for s in range(n_src):
            if not frozen[s]:
                n_free += 1
                for i in range(col_ptr[s], col_ptr[s + 1]):
                    load[col_k[i]] += col_w[i]
        n_live = 0
        for k in range(n_constraints):
            if load[k] > _EPS:
                live[n_live] = k
                n_live += 1
        level = 0.0  # every free source's rate so far (progressive filling)
        while n_free > 0 and n_live > 0:
            best = np.inf
            for j in range(n_live):
                k = live[j]
                x = (cap[k] - fixed[k]) / load[k]
                if x < best:
                    best = x
            level = max(level, best)
            for j in range(n_live):  # freeze the sources of every constraint now full
                k = live[j]
                if load[k] > _EPS and cap[k] - fixed[k] - level * load[k] <= 1e-9 * cap[k]:
                    for i in range(row_ptr[k], row_ptr[k + 1]):
                        s = row_s[i]
                        if not frozen[s]:
                            frozen[s] = True
                            rate[s] = level
                            n_free -= 1
                            for q in range(col_ptr[s], col_ptr[s + 1]):
                                load[col_k[q]] -= col_w[q]
                                fixed[col_k[q]] += col_w[q] * level
            w = 0
            for j in range(n_live):
                if load[live[j]] > _EPS:
                    live[w] = live[j]
                    w += 1
            n_live = w
        # the next event: a source done, or a server open
        dt = np.inf
        for s in range(n_src):
            if active[s] and rate[s] > 0.0:
                x = remaining[s] / rate[s]
                if x < dt:
                    dt = x
        for k in range(n_constraints):
            if opens[k] > t + _EPS and opens[k] - t < dt:
                dt = opens[k] - t
        if dt == np.inf:  # nothing can move (a constraint of no capacity): give up
            for s in range(n_src):
                if active[s]:
                    finish[s] = np.inf
            break
        t += dt
        for s in range(n_src):
            if active[s] and rate[s] > 0.0:
                remaining[s] -= rate[s] * dt
                if remaining[s] <= 1e-6 * total[s]:  # (sources ending together: one event)
                    active[s] = False
                    finish[s] = t
                    n_active -= 1
    return finish


@numba.njit(cache=True, nogil=True)
def last_arrivals(finish, u_src, u_ptr, u_dst, far_us, n_parts):
    """Per destination partition, when its last message arrives: its senders' finish plus
    the unit's latency to its farthest destination."""
    out = np.zeros(n_parts)
    for u in range(u_src.size):
        t = finish[u_src[u]] + far_us[u]
        for j in range(u_ptr[u], u_ptr[u + 1]):
            d = u_dst[j]
            if t > out[d]:
                out[d] = t
    return out
