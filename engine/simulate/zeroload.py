"""Zero-load latency: how long a packet takes when it is alone in the network.

``zero_load_cycles`` answers in closed form while a packet fits its buffers (``flits`` ≤
``buf``: it never waits for a credit): the pipeline of every router crossed, the latency of
every link, and the body behind the head. A packet longer than its buffers streams only as
fast as credits come back; its latency then follows a short recursion over its flits and
hops (``_credit_bound_cycles``, numba) that states the same rules as the kernel: a flit
leaves a router one switch allocation after the one before, when the link behind it has
finished serializing, and once the buffer ahead has returned the credit of the flit ``buf``
places before it. The simulator's tests hold both to a lone simulated packet, for every
pair of routers.

A packet's route depends on its dimension order (``engine.hardware.routing``): X then Y or Y then X,
given per packet (a simulated packet's ``route``), or the routing's — for a routing whose
packets take either order (O1TURN), the mean of both orders' latencies.

The split of a simulated packet's latency into *transit* (this) and *queueing* (the rest)
rests on it. Parallel meshes are copies of one grid with the same links, so a packet's
zero-load latency is the same on any of them: these read mesh copy 0.
"""

from __future__ import annotations

import numba
import numpy as np

from engine.hardware import NocConstants
from engine.hardware.routing import YX, routings
from engine.simulate.topology import Topology

__all__ = ["zero_load_cycles"]


def zero_load_cycles(topology: Topology, noc: NocConstants, src, dst, flits: int = 1,
                     order=None):  # fmt: skip
    """Cycles from creation to the tail's arrival of a lone packet (see the module), routed in
    ``order`` (per packet, ``engine.hardware.routing.XY``/``YX``; None: the routing's, and for a
    routing whose packets take either, the mean of its orders' latencies, as floats).

    ``inject latency + 1`` to reach the first router, then per router crossed
    ``routing + VC alloc + switch alloc + traversal`` plus the latency of the link it leaves
    by, then the body: ``flits − 1`` switch allocations, or, behind a serializing off-chip
    link, ``flits − 1`` serializations less the head's routing and VC allocation at each
    router after it (the body skips those), whichever is longer. Arrays broadcast; sums along
    a route are prefix sums along rows (the X leg) and columns (the Y leg). A packet longer
    than its buffers goes through ``_credit_bound_cycles`` instead. More packets than twice
    the pairs of terminals are looked up in a table of every pair and order.
    """
    if order is None:
        orders = routings[noc.routing].orders
        if len(orders) > 1:  # either order, equally likely: the mean of both
            each = [zero_load_cycles(topology, noc, src, dst, flits, o) for o in orders]
            return np.mean(each, axis=0)
        order = orders[0]
    src, dst, order = np.broadcast_arrays(
        np.asarray(src, dtype=np.int64), np.asarray(dst, np.int64), np.asarray(order, np.int64)
    )
    yx = order == YX
    n = topology.n_nodes
    if src.size > 2 * n * n:  # many packets, few terminals: a table of every pair, then look up
        every = np.arange(2 * n * n, dtype=np.int64)
        pair = every % (n * n)
        table = zero_load_cycles(topology, noc, pair // n, pair % n, flits, every // (n * n))
        return table[yx * (n * n) + src * n + dst]
    if int(flits) > noc.buf:
        return _credit_bound(topology, noc, src, dst, int(flits), yx)
    x, y = topology.node_xy
    sx, sy, dx, dy = x[src], y[src], x[dst], y[dst]
    row, col = np.where(yx, dy, sy), np.where(yx, sx, dx)  # of the X leg, of the Y leg
    w, h = topology.width, topology.height
    lat = topology.latency[: w * h, :4].reshape(h, w, 4)  # (every mesh copy is alike)

    def legs(per_link):
        """Per packet: the sum of ``per_link`` (h, w, 4) over its route's router links."""
        zero_x = np.zeros((h, 1), dtype=per_link.dtype)
        zero_y = np.zeros((1, w), dtype=per_link.dtype)
        east = np.hstack([zero_x, np.cumsum(per_link[:, :, 0], axis=1)])  # east[y, x]: x' < x
        west = np.hstack([zero_x, np.cumsum(per_link[:, :, 1], axis=1)])
        south = np.vstack([zero_y, np.cumsum(per_link[:, :, 2], axis=0)])  # south[y, x]: y' < y
        north = np.vstack([zero_y, np.cumsum(per_link[:, :, 3], axis=0)])
        go_e, go_s = dx > sx, dy > sy
        leg_x = np.where(go_e, east[row, dx] - east[row, sx], west[row, sx + 1] - west[row, dx + 1])
        leg_y = np.where(
            go_s, south[dy, col] - south[sy, col], north[sy + 1, col] - north[dy + 1, col]
        )
        return np.where(dx == sx, 0, leg_x) + np.where(dy == sy, 0, leg_y)

    routers = np.abs(dx - sx) + np.abs(dy - sy) + 1
    eject = topology.latency[topology.node_router[dst], topology.node_port[dst]]
    total = topology.inject_latency[src] + 1 + routers * noc.hop_cycles + legs(lat) + eject
    # the body: a router passes a body flit one switch allocation after the one before; a
    # serializing (off-chip) link spaces them ``serialization`` apart, and every router
    # behind it closes the gaps by what the head spends there on routing and VC allocation
    gap = max(noc.sw_alloc_delay, 1)
    after = np.where(
        yx,
        _routers_after_last_slow_link(topology, sx, sy, dx, dy, True) if yx.any() else 0,
        _routers_after_last_slow_link(topology, sx, sy, dx, dy) if not yx.all() else 0,
    )
    k = int(flits) - 1
    spread = k * max(int(topology.serialization.max()), gap)
    spread = spread - after * (noc.routing_delay + noc.vc_alloc_delay)
    tail = np.where(after > 0, np.maximum(k * gap, spread), k * gap)
    return (total + tail).astype(np.int64)


def _routers_after_last_slow_link(topology: Topology, sx, sy, dx, dy, yx=False) -> np.ndarray:
    """Per route: the routers it visits after its last serializing link (0: none). X then Y;
    with ``yx``, Y then X (the same walk on the transposed grid)."""
    w, h = topology.width, topology.height
    slow = (topology.serialization[: w * h, :4] > 1).reshape(h, w, 4)
    if yx:  # transpose: x ↔ y, and E, W, S, N become S, N, E, W
        slow = slow.transpose(1, 0, 2)[:, :, [2, 3, 0, 1]]
        w, h, sx, sy, dx, dy = h, w, sy, sx, dy, dx
    big = np.iinfo(np.int64).max // 4
    ix, iy = np.arange(w)[None, :], np.arange(h)[:, None]
    # east (x → x+1) and south (y → y+1): the last slow link at or before an index
    last_e = np.maximum.accumulate(np.where(slow[:, :, 0], ix, -1), axis=1)
    last_s = np.maximum.accumulate(np.where(slow[:, :, 2], iy, -1), axis=0)
    # west (x → x−1) and north (y → y−1): the first slow link at or after an index
    first_w = np.minimum.accumulate(np.where(slow[:, :, 1], ix, big)[:, ::-1], axis=1)[:, ::-1]
    first_n = np.minimum.accumulate(np.where(slow[:, :, 3], iy, big)[::-1], axis=0)[::-1]
    y_len = np.abs(dy - sy)
    le = last_e[sy, np.maximum(dx - 1, 0)]
    fw = first_w[sy, np.minimum(dx + 1, w - 1)]
    x_after = np.where((dx > sx) & (le >= sx), dx - le + y_len, 0)
    x_after = np.where((dx < sx) & (fw <= sx), fw - dx + y_len, x_after)
    ls = last_s[np.maximum(dy - 1, 0), dx]
    fn = first_n[np.minimum(dy + 1, h - 1), dx]
    y_after = np.where((dy > sy) & (ls >= sy), dy - ls, 0)
    y_after = np.where((dy < sy) & (fn <= sy), fn - dy, y_after)
    return np.where(y_after > 0, y_after, x_after)


def _credit_bound(topology: Topology, noc: NocConstants, src, dst, flits: int,
                  yx=None) -> np.ndarray:  # fmt: skip
    """``zero_load_cycles`` of packets longer than their buffers (routed Y first where
    ``yx``; default: as the routing's first order), pair and order by distinct pair."""
    if yx is None:
        yx = np.full(np.shape(src), routings[noc.routing].orders[0] == YX)
    keys = np.stack([np.ravel(src), np.ravel(dst), np.ravel(yx).astype(np.int64)])
    pairs, inverse = np.unique(keys, axis=1, return_inverse=True)
    out = np.zeros(pairs.shape[1], dtype=np.int64)
    grid = topology.n_routers  # mesh copy 0 (routers and links of the grid's numbering)
    _credit_bound_cycles(
        topology.node_router[pairs[0]], topology.node_router[pairs[1]],
        topology.inject_latency[pairs[0]],
        topology.latency[topology.node_router[pairs[1]], topology.node_port[pairs[1]]],
        topology.nbr[:grid], topology.latency[:grid], topology.serialization[:grid],
        topology.width,
        pairs[2] == 1, flits, noc.buf, noc.routing_delay, noc.vc_alloc_delay,
        noc.sw_alloc_delay, noc.st_delay, noc.credit_delay, out,
    )  # fmt: skip
    return out[inverse.ravel()].reshape(src.shape)


@numba.njit(cache=True, nogil=True)
def _credit_bound_cycles(src_r, dst_r, inj_lat, ej_lat, nbr, lat, ser, width, yx, flits, buf,
                         rd, vd, sd, st, cd, out):  # fmt: skip
    """Per pair: the tail's arrival of a lone ``flits``-flit packet created at cycle 0, routed
    Y first where ``yx[q]``.

    ``send[k, j]``: the cycle flit k leaves the j-th router of the route (its switch
    allocation ends). The head is routed and allocated a VC on arrival; every flit then asks
    for the switch no earlier than it arrived, one cycle after the flit before left, when
    the link has finished serializing that flit, and once its credit is back: the flit
    ``buf`` places ahead has left the next router (or, at the last router, has reached the
    core and been taken), plus the link back and ``credit_delay``. A core injects one flit
    per cycle, each once the first router has passed on the flit ``buf`` places ahead.
    """
    n_max = 2 * (nbr.shape[0] + 2)
    for q in range(src_r.size):
        # the route: routers and the output port each leaves by
        routers = np.empty(n_max, dtype=np.int64)
        ports = np.empty(n_max, dtype=np.int64)
        r, h = src_r[q], 0
        tx, ty = dst_r[q] % width, dst_r[q] // width
        while r != dst_r[q]:
            x, y = r % width, r // width
            if (not yx[q] and x != tx) or (yx[q] and y == ty):
                o = 0 if tx > x else 1
            else:
                o = 2 if ty > y else 3
            routers[h], ports[h] = r, o
            h += 1
            r = nbr[r, o]
        routers[h], ports[h] = r, -1  # ejection at the last router
        h += 1
        send = np.zeros((flits, h), dtype=np.int64)
        inj = np.zeros(flits, dtype=np.int64)
        for k in range(flits):
            # into the first router
            t_in = 0 if k == 0 else inj[k - 1] + 1
            if k >= buf:
                t_in = max(t_in, send[k - buf, 0] + inj_lat[q] + 1)
            inj[k] = t_in
            arrive = t_in + inj_lat[q] + 1
            for j in range(h):
                if j > 0:
                    arrive = send[k, j - 1] + st + lat[routers[j - 1], ports[j - 1]] + 1
                link_lat = ej_lat[q] if j == h - 1 else lat[routers[j], ports[j]]
                link_ser = 1 if j == h - 1 else ser[routers[j], ports[j]]
                if k == 0:
                    ask = arrive + rd + vd
                else:
                    ask = max(arrive, send[k - 1, j] + 1, send[k - 1, j] + link_ser - sd + 1)
                    if k >= buf:  # the credit of flit k − buf, back from the next hop
                        if j == h - 1:
                            freed = send[k - buf, j] + st + link_lat + 1
                        else:
                            freed = send[k - buf, j + 1]
                        ask = max(ask, freed + link_lat + 1 + cd)
                send[k, j] = ask + sd - 1
        out[q] = send[flits - 1, h - 1] + st + ej_lat[q] + 1
