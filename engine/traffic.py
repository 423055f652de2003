"""Traffic: X-then-Y routing of messages between cores, and the load of every link.

Traffic model (SNN hypergraphs §II-B): every step a neuron spikes with probability ``rate``;
a spike becomes one message per *distinct destination core* other than its own (cores
replicate spikes to their neurons locally) — the message pairs of
``engine.partition_graph``. Here those messages are routed. They follow
dimension-order routing — along X first, then along Y — over the global router grid
(Loihi 2 runtime model §II). Each message also uses its source core's core→router link and its
destination core's router→core link.

Loads are kept as integers in units of ``1 / FIXED`` messages so that every sum is
exact: a load built from scratch and one updated by a thousand swaps are equal to
the last bit.
"""

from __future__ import annotations

import numba
import numpy as np

from engine.hardware import Hardware

__all__ = [
    "FIXED",
    "link_summary",
    "message_loads",
    "multicast_loads",
    "port_cores",
    "route_loads",
    "router_loads",
    "swap_cores_inplace",
]

FIXED = 1 << 20  # fixed-point units per message


# ------------------------------------------------------------------ routing
def port_cores(hardware: Hardware, cores) -> np.ndarray:
    """The placement (partition id → global core id) with the input port's core appended:
    index ``n_parts`` — or -1, as ``PartitionGraph.messages`` names a spike source's
    messages' source — is where a network's spike sources send from."""
    return np.append(np.asarray(cores, dtype=np.int64), hardware.input_core)


def router_loads(hardware: Hardware, src_core, dst_core, fixed) -> np.ndarray:
    """Loads (int64 fixed point) of the 4 router-link slots of every router, for messages
    from cores ``src_core`` to cores ``dst_core`` weighing ``fixed`` each."""
    ct = hardware.core_table
    return _xy_loads(
        hardware, ct["gx"][src_core], ct["gy"][src_core], ct["gx"][dst_core], ct["gy"][dst_core],
        fixed,
    )  # fmt: skip


def _xy_loads(hardware: Hardware, sx, sy, dx, dy, fixed) -> np.ndarray:
    """X-then-Y routing of router-to-router messages as difference arrays.

    A message from router (sx, sy) to (dx, dy) loads the E (or W) links of row ``sy``
    between ``sx`` and ``dx``, then the S (or N) links of column ``dx`` between ``sy`` and
    ``dy``. Each message adds +w and -w at the two ends of its two segments; one weighted
    bincount and cumulative sums along rows and columns give every link. A message with no
    horizontal (vertical) leg adds +w and -w at the same place.
    """
    gw, gh = hardware.grid_width, hardware.grid_height
    w = np.asarray(fixed).astype(np.float64)  # integers below 2**53 stay exact in float64 sums
    n_h, n_v = gh * (gw + 1), (gh + 1) * gw  # E and W rows have gw+1 columns; S and N gh+1 rows
    east, south = dx > sx, dy > sy
    h_base = np.where(east, 0, n_h) + sy * (gw + 1)
    v_base = np.where(south, 2 * n_h, 2 * n_h + n_v) + dx
    idx = np.concatenate(
        [
            h_base + np.where(east, sx, dx + 1),
            h_base + np.where(east, dx, sx + 1),
            v_base + np.where(south, sy, dy + 1) * gw,
            v_base + np.where(south, dy, sy + 1) * gw,
        ]
    )
    diff = np.bincount(idx, weights=np.concatenate([w, -w, w, -w]), minlength=2 * (n_h + n_v))
    h = np.cumsum(diff[: 2 * n_h].reshape(2, gh, gw + 1), axis=2)[:, :, :gw]
    v = np.cumsum(diff[2 * n_h :].reshape(2, gh + 1, gw), axis=1)[:, :gh]
    return np.rint(np.stack([h[0], h[1], v[0], v[1]], axis=-1).ravel()).astype(np.int64)


def multicast_loads(hardware: Hardware, src_core, dst_ptr, dst_core, fixed) -> np.ndarray:
    """Per-link loads (int64, one per link id) of multicast messages routed as X-then-Y trees.

    Message ``m`` goes from core ``src_core[m]`` to the cores
    ``dst_core[dst_ptr[m]:dst_ptr[m + 1]]`` (distinct) and weighs ``fixed[m]``. It crosses
    each link of the union of its destinations' X-then-Y routes once: along its source's
    row to the westmost and the eastmost destination column, then along each destination
    column to that column's northmost and southmost destination; it leaves its source
    core once and reaches each destination core once.
    """
    ct = hardware.core_table
    dst_ptr = np.asarray(dst_ptr, dtype=np.int64)
    dst_core = np.asarray(dst_core, dtype=np.int64)
    w = np.asarray(fixed, dtype=np.float64)
    n_m = dst_ptr.size - 1
    msg = np.repeat(np.arange(n_m), np.diff(dst_ptr))
    sx, sy = ct["gx"][src_core], ct["gy"][src_core]
    dx, dy = ct["gx"][dst_core], ct["gy"][dst_core]
    has = np.diff(dst_ptr) > 0
    x_min = np.full(n_m, np.iinfo(np.int64).max)
    x_max = np.full(n_m, -1)
    np.minimum.at(x_min, msg, dx)
    np.maximum.at(x_max, msg, dx)
    # horizontal legs: to the westmost and the eastmost destination column
    west = has & (x_min < sx)
    east = has & (x_max > sx)
    hx0 = np.concatenate([sx[west], sx[east]])
    hy = np.concatenate([sy[west], sy[east]])
    hx1 = np.concatenate([x_min[west], x_max[east]])
    hw = np.concatenate([w[west], w[east]])
    # vertical legs: per (message, destination column), to its northmost and southmost row
    key = msg * hardware.grid_width + dx
    cols, first, inverse = np.unique(key, return_index=True, return_inverse=True)
    y_min = np.full(cols.size, np.iinfo(np.int64).max)
    y_max = np.full(cols.size, -1)
    np.minimum.at(y_min, inverse, dy)
    np.maximum.at(y_max, inverse, dy)
    cm = msg[first]
    cx = dx[first]
    north = y_min < sy[cm]
    south = y_max > sy[cm]
    vx = np.concatenate([cx[north], cx[south]])
    vy0 = np.concatenate([sy[cm][north], sy[cm][south]])
    vy1 = np.concatenate([y_min[north], y_max[south]])
    vw = np.concatenate([w[cm][north], w[cm][south]])
    router = _xy_loads(
        hardware, np.concatenate([hx0, vx]), np.concatenate([hy, vy0]),
        np.concatenate([hx1, vx]), np.concatenate([hy, vy1]), np.concatenate([hw, vw]),
    )  # fmt: skip
    n_c = hardware.n_cores
    c2r = np.rint(np.bincount(src_core, weights=w * has, minlength=n_c)).astype(np.int64)
    r2c = np.rint(np.bincount(dst_core, weights=w[msg], minlength=n_c)).astype(np.int64)
    return np.concatenate([router, c2r, r2c])


def route_loads(hardware: Hardware, src_core, dst_core, fixed) -> np.ndarray:
    """Per-link loads (int64 fixed point, one per link id) of core-to-core traffic."""
    n_c = hardware.n_cores
    w = fixed.astype(np.float64)
    c2r = np.rint(np.bincount(src_core, weights=w, minlength=n_c)).astype(np.int64)
    r2c = np.rint(np.bincount(dst_core, weights=w, minlength=n_c)).astype(np.int64)
    return np.concatenate([router_loads(hardware, src_core, dst_core, fixed), c2r, r2c])


def message_loads(hardware: Hardware, cores, messages, *, multicast: bool = False) -> np.ndarray:
    """Per-link message counts (int64, one per link id) of one set of messages.

    ``cores``: the placement (partition id → global core id); ``messages``: the messages of
    the spikes of one step (``PartitionGraph.messages``: per message its spiking
    ``neuron``, source partition ``src`` — -1 for a spike source's, sent from the input
    port — and destination partition ``dst``, grouped by neuron). By default every message
    is routed on its own; with ``multicast`` the messages of one spike are one tree
    (``multicast_loads``). These are the counts the cycle-level simulator must reproduce
    from the same spikes, message for message.
    """
    cores = port_cores(hardware, cores)  # a spike source's messages (src -1) from the port
    src, dst = cores[np.asarray(messages.src)], cores[np.asarray(messages.dst)]
    if not multicast:
        return route_loads(hardware, src, dst, np.ones(src.size, dtype=np.int64))
    neuron = np.asarray(messages.neuron)
    starts = np.flatnonzero(np.diff(neuron, prepend=-1)) if neuron.size else neuron
    ptr = np.append(starts, neuron.size).astype(np.int64)
    return multicast_loads(hardware, src[starts], ptr, dst, np.ones(starts.size))


# --------------------------------------------------------- incremental swap
@numba.njit(cache=True, nogil=True)
def _walk(loads, sx, sy, dx, dy, gw, m):
    """Add ``m`` to every router link on the X-then-Y path (sx, sy) -> (dx, dy)."""
    x = sx
    while x < dx:
        loads[(sy * gw + x) * 4 + 0] += m
        x += 1
    while x > dx:
        loads[(sy * gw + x) * 4 + 1] += m
        x -= 1
    y = sy
    while y < dy:
        loads[(y * gw + dx) * 4 + 2] += m
        y += 1
    while y > dy:
        loads[(y * gw + dx) * 4 + 3] += m
        y -= 1


@numba.njit(cache=True, nogil=True)
def swap_cores_inplace(
    loads, core_of_part, part_of_core, core_a, core_b,
    pp_indptr, pp_ids, pair_src, pair_dst, pair_fixed,
    core_gx, core_gy, gw, n_router_slots, n_cores,
):  # fmt: skip
    """Exchange the contents of two physical cores (either may be empty) and update loads."""
    pa = part_of_core[core_a]
    pb = part_of_core[core_b]
    for sign in (-1, 1):
        if sign == 1:  # move the partitions, then add their new routes
            if pa >= 0:
                core_of_part[pa] = core_b
            if pb >= 0:
                core_of_part[pb] = core_a
            part_of_core[core_a] = pb
            part_of_core[core_b] = pa
        for which in range(2):
            p = pa if which == 0 else pb
            if p < 0:
                continue
            for k in range(pp_indptr[p], pp_indptr[p + 1]):
                i = pp_ids[k]
                s = pair_src[i]
                d = pair_dst[i]
                if which == 1 and (s == pa or d == pa):
                    continue  # a pair between pa and pb was handled with pa
                cs = core_of_part[s]
                cd = core_of_part[d]
                _walk(
                    loads,
                    core_gx[cs],
                    core_gy[cs],
                    core_gx[cd],
                    core_gy[cd],
                    gw,
                    sign * pair_fixed[i],
                )
    # core links travel with their partitions
    for base in (n_router_slots, n_router_slots + n_cores):
        t = loads[base + core_a]
        loads[base + core_a] = loads[base + core_b]
        loads[base + core_b] = t


@numba.njit(cache=True, nogil=True)
def link_summary(loads, us_per_fixed, energy_per_fixed):
    """(max link time in µs, Σ load × energy factor) over all links."""
    worst = 0.0
    energy = 0.0
    for i in range(loads.size):
        v = loads[i]
        if v != 0:
            t = v * us_per_fixed[i]
            if t > worst:
                worst = t
            energy += v * energy_per_fixed[i]
    return worst, energy
