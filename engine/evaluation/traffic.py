"""Traffic: routing of messages between cores, and the load of every link.

Traffic model (SNN hypergraphs §II-B): every step a neuron spikes with probability ``rate``;
a spike becomes one message per *distinct destination core* other than its own (cores
replicate spikes to their neurons locally) — the message pairs of
``engine.mapping.partition_graph``. Here those messages are routed over the global router grid as
the hardware's NoC routes them (``[noc] routing``, ``engine.hardware.routing``): dimension order,
along X first, then along Y by default (Loihi 2 runtime model §II); a routing whose packets
take either order (O1TURN) sends each order its share of the expected messages. Each
message also uses its source core's core→router link and its destination core's
router→core link.

Loads are kept as integers in units of ``1 / FIXED`` messages so that every sum is
exact: a load built from scratch and one updated by a thousand swaps are equal to
the last bit.
"""

from __future__ import annotations

import numba
import numpy as np

from engine.hardware import Hardware
from engine.hardware.routing import YX, dor_loads, routing_of

__all__ = [
    "mesh_route_loads",
    "message_loads",
    "multicast_loads",
    "port_cores",
    "route_loads",
    "router_loads",
]


# ------------------------------------------------------------------ routing
def port_cores(hardware: Hardware, cores) -> np.ndarray:
    """The placement (partition id → global core id) with the input port's core appended:
    index ``n_parts`` — or -1, as ``PartitionGraph.messages`` names a spike source's
    messages' source — is where a network's spike sources send from."""
    return np.append(np.asarray(cores, dtype=np.int64), hardware.input_core)


def router_loads(hardware: Hardware, src_core, dst_core, fixed, order=None) -> np.ndarray:
    """Loads (int64 fixed point) of the 4 router-link slots of every router, for messages
    from cores ``src_core`` to cores ``dst_core`` weighing ``fixed`` each: over the
    hardware's routing (``order`` None: each dimension order its share, as
    ``Routing.split``), or each message over its own ``order`` (``XY``/``YX``)."""
    ct = hardware.core_table
    return routing_of(hardware).router_loads(
        hardware.grid_width, hardware.grid_height, ct["gx"][src_core], ct["gy"][src_core],
        ct["gx"][dst_core], ct["gy"][dst_core], fixed, order,
    )  # fmt: skip


def multicast_loads(
    hardware: Hardware, src_core, dst_ptr, dst_core, fixed, order=None
) -> np.ndarray:
    """Per-link loads (int64, one per link id) of multicast messages routed as trees.

    Message ``m`` goes from core ``src_core[m]`` to the cores
    ``dst_core[dst_ptr[m]:dst_ptr[m + 1]]`` (distinct) and weighs ``fixed[m]``. It crosses
    each link of the union of its destinations' routes once. X then Y: along its source's
    row to the westmost and the eastmost destination column, then along each destination
    column to that column's northmost and southmost destination (Y then X: the same with x
    and y exchanged); it leaves its source core once and reaches each destination core once.
    ``order``: per message its dimension order (``XY``/``YX``); None: the hardware's
    routing, each order its share of every message (``Routing.split``).
    """
    dst_ptr = np.asarray(dst_ptr, dtype=np.int64)
    dst_core = np.asarray(dst_core, dtype=np.int64)
    src_core = np.asarray(src_core, dtype=np.int64)
    routing = routing_of(hardware)
    if order is None and len(routing.orders) > 1:  # every tree once per order, its share
        k = len(routing.orders)
        sizes = np.diff(dst_ptr)
        n_m = sizes.size
        parts = [np.broadcast_to(p, (n_m,)) for p in routing.split(np.asarray(fixed))]
        return _tree_loads(
            hardware, np.tile(src_core, k), np.concatenate([[0], np.cumsum(np.tile(sizes, k))]),
            np.tile(dst_core, k), np.concatenate(parts), np.repeat(routing.orders, n_m) == YX,
        )  # fmt: skip
    n_m = dst_ptr.size - 1
    yx = np.full(n_m, routing.orders[0] == YX) if order is None else np.asarray(order) == YX
    return _tree_loads(hardware, src_core, dst_ptr, dst_core, fixed, yx)


def _tree_loads(hardware: Hardware, src_core, dst_ptr, dst_core, fixed, yx) -> np.ndarray:
    """``multicast_loads`` of messages each routed first along dimension a (x, or y where
    ``yx``), then along b: the trees in (a, b) coordinates, their legs back in (x, y)."""
    ct = hardware.core_table
    w = np.asarray(fixed, dtype=np.float64)
    n_m = dst_ptr.size - 1
    msg = np.repeat(np.arange(n_m), np.diff(dst_ptr))
    yx = np.asarray(yx, dtype=bool)
    gx, gy = ct["gx"], ct["gy"]
    sa = np.where(yx, gy[src_core], gx[src_core])
    sb = np.where(yx, gx[src_core], gy[src_core])
    da = np.where(yx[msg], gy[dst_core], gx[dst_core])
    db = np.where(yx[msg], gx[dst_core], gy[dst_core])
    has = np.diff(dst_ptr) > 0
    a_min = np.full(n_m, np.iinfo(np.int64).max)
    a_max = np.full(n_m, -1)
    np.minimum.at(a_min, msg, da)
    np.maximum.at(a_max, msg, da)
    # first legs: along the source's line to the least and the greatest destination a
    low = has & (a_min < sa)
    high = has & (a_max > sa)
    first = np.concatenate([np.flatnonzero(low), np.flatnonzero(high)])
    f_a1 = np.concatenate([a_min[low], a_max[high]])
    # second legs: per (message, destination a), to its least and greatest b
    key = msg * max(hardware.grid_width, hardware.grid_height) + da
    lines, at, inverse = np.unique(key, return_index=True, return_inverse=True)
    b_min = np.full(lines.size, np.iinfo(np.int64).max)
    b_max = np.full(lines.size, -1)
    np.minimum.at(b_min, inverse, db)
    np.maximum.at(b_max, inverse, db)
    cm = msg[at]
    lo = b_min < sb[cm]
    hi = b_max > sb[cm]
    second = np.concatenate([cm[lo], cm[hi]])
    s_a = np.concatenate([da[at][lo], da[at][hi]])
    s_b1 = np.concatenate([b_min[lo], b_max[hi]])
    # every leg as (a0, b0) → (a1, b1) of its message, then in (x, y)
    m = np.concatenate([first, second])
    a0 = np.concatenate([sa[first], s_a])
    b0 = sb[m]
    a1 = np.concatenate([f_a1, s_a])
    b1 = np.concatenate([sb[first], s_b1])
    t = yx[m]
    router = dor_loads(
        hardware.grid_width, hardware.grid_height, np.where(t, b0, a0), np.where(t, a0, b0),
        np.where(t, b1, a1), np.where(t, a1, b1), w[m],
    )  # fmt: skip
    n_c = hardware.n_cores
    c2r = np.rint(np.bincount(src_core, weights=w * has, minlength=n_c)).astype(np.int64)
    r2c = np.rint(np.bincount(dst_core, weights=w[msg], minlength=n_c)).astype(np.int64)
    return np.concatenate([router, c2r, r2c])


def route_loads(hardware: Hardware, src_core, dst_core, fixed, order=None) -> np.ndarray:
    """Per-link loads (int64 fixed point, one per link id) of core-to-core traffic, routed as
    ``router_loads`` routes it."""
    n_c = hardware.n_cores
    w = np.asarray(fixed).astype(np.float64)
    c2r = np.rint(np.bincount(src_core, weights=w, minlength=n_c)).astype(np.int64)
    r2c = np.rint(np.bincount(dst_core, weights=w, minlength=n_c)).astype(np.int64)
    router = router_loads(hardware, src_core, dst_core, fixed, order)
    return np.concatenate([router, c2r, r2c])


def message_loads(
    hardware: Hardware, cores, messages, *, multicast: bool = False, seed: int = 0
) -> np.ndarray:
    """Per-link message counts (int64, one per link id) of one set of messages.

    ``cores``: the placement (partition id → global core id); ``messages``: the messages of
    the spikes of one step (``PartitionGraph.messages``: per message its spiking
    ``neuron``, source partition ``src`` — -1 for a spike source's, sent from the input
    port — and destination partition ``dst``, grouped by neuron). By default every message
    is routed on its own; with ``multicast`` the messages of one spike are one tree
    (``multicast_loads``). Each packet takes the order the hardware's routing gives it
    (``Routing.choose`` with ``seed``: one per message, or per spike with ``multicast``),
    as the simulator's step with that seed does. These are the counts the cycle-level
    simulator must reproduce from the same spikes, message for message.
    """
    routing = routing_of(hardware)
    cores = port_cores(hardware, cores)  # a spike source's messages (src -1) from the port
    src, dst = cores[np.asarray(messages.src)], cores[np.asarray(messages.dst)]
    if not multicast:
        order = routing.choose(src.size, seed)
        return route_loads(hardware, src, dst, np.ones(src.size, dtype=np.int64), order)
    neuron = np.asarray(messages.neuron)
    starts = np.flatnonzero(np.diff(neuron, prepend=-1)) if neuron.size else neuron
    ptr = np.append(starts, neuron.size).astype(np.int64)
    order = routing.choose(starts.size, seed)
    return multicast_loads(hardware, src[starts], ptr, dst, np.ones(starts.size), order)


# ------------------------------------------------- walking routes one by one
@numba.njit(cache=True, nogil=True)
def _walk(loads, sx, sy, dx, dy, gw, m, yx):
    """Add ``m`` to every router link on the path (sx, sy) -> (dx, dy): X then Y, or Y then X
    where ``yx``."""
    row, col = (dy, sx) if yx else (sy, dx)
    x = sx
    while x < dx:
        loads[(row * gw + x) * 4 + 0] += m
        x += 1
    while x > dx:
        loads[(row * gw + x) * 4 + 1] += m
        x -= 1
    y = sy
    while y < dy:
        loads[(y * gw + col) * 4 + 2] += m
        y += 1
    while y > dy:
        loads[(y * gw + col) * 4 + 3] += m
        y -= 1


@numba.njit(cache=True, nogil=True)
def mesh_route_loads(
    src_core, dst_core, fixed, core_mesh, core_gx, core_gy, gw, n_router_slots, n_cores,
    n_link_ids, meshes, orders,
):  # fmt: skip
    """Per mesh (rows), per link id, the loads (int64 fixed point) of core-to-core messages,
    each pair on the mesh of its source core and its weight shared over the routing's
    ``orders`` as ``Routing.split`` shares it: what ``route_loads`` gives each mesh's pairs,
    walked route by route (exact integers either way)."""
    out = np.zeros((meshes, n_link_ids), dtype=np.int64)
    n_orders = orders.size
    for i in range(src_core.size):
        cs, cd, f = src_core[i], dst_core[i], fixed[i]
        m = core_mesh[cs]
        out[m, n_router_slots + cs] += f
        out[m, n_router_slots + n_cores + cd] += f
        sx, sy, dx, dy = core_gx[cs], core_gy[cs], core_gx[cd], core_gy[cd]
        for k in range(n_orders):  # (walked here: an array handed to a helper costs more)
            part = (f * (k + 1)) // n_orders - (f * k) // n_orders
            line, col = (dy, sx) if orders[k] == YX else (sy, dx)
            x = sx
            while x < dx:
                out[m, (line * gw + x) * 4] += part
                x += 1
            while x > dx:
                out[m, (line * gw + x) * 4 + 1] += part
                x -= 1
            y = sy
            while y < dy:
                out[m, (y * gw + col) * 4 + 2] += part
                y += 1
            while y > dy:
                out[m, (y * gw + col) * 4 + 3] += part
                y -= 1
    return out
