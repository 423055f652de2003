"""Incremental loads: what a swap of two cores changes, walked again, on every mesh.

The traffic of a placement is a set of *units*: a unicast pair of partitions (one
destination) or a multicast tree (one source, several destinations), each weighing an
integer number of fixed-point messages (``engine.evaluation.traffic``). A unit loads its
source core's link into its router, the links of its route (a pair) or of the union of its
destinations' routes (a tree: along the source's line to the farthest destinations, then
along each destination line), and each destination core's link out of its router — all on
the mesh of its source core (``Hardware.core_table["mesh"]``). A routing of several
dimension orders (O1TURN) sends each order its share of the weight (``Routing.split``).

Loads are kept per mesh (rows × link ids). A swap of two cores takes away the units of the
two partitions on them, moves the partitions, and adds the same units back: every other
unit keeps its route, its mesh and its core links, so the integers equal a full evaluation
of the new placement to the last unit (``tests/engine/evaluation/test_incremental.py``).
The full evaluation is ``engine.evaluation.traffic``'s own code; this module only walks.
"""

from __future__ import annotations

import numba
import numpy as np

from engine.evaluation.traffic import _walk
from engine.hardware import CORE_TO_ROUTER, OFF_CHIP, ROUTER, ROUTER_TO_CORE
from engine.hardware.routing import YX

__all__ = ["mesh_summary", "scratch_for", "swap_units", "units_of_parts"]

_NONE = np.iinfo(np.int64).max


def units_of_parts(unit_src, unit_ptr, unit_dst, n_parts: int) -> tuple[np.ndarray, np.ndarray]:
    """CSR (indptr, unit ids) of the units each partition ``0 .. n_parts - 1`` takes part in,
    as source or destination, each unit once per partition (a source id ``n_parts``, the
    input port, never moves and has no row)."""
    sizes = np.diff(unit_ptr)
    unit = np.concatenate([np.arange(sizes.size), np.repeat(np.arange(sizes.size), sizes)])
    part = np.concatenate([unit_src, unit_dst]).astype(np.int64)
    keep = part < n_parts
    key = np.unique(part[keep] * max(sizes.size, 1) + unit[keep])  # sorted by part, then unit
    part, unit = key // max(sizes.size, 1), key % max(sizes.size, 1)
    indptr = np.concatenate([[0], np.cumsum(np.bincount(part, minlength=n_parts))])
    return indptr.astype(np.int64), unit.astype(np.int64)


def scratch_for(width: int, height: int) -> np.ndarray:
    """The work array of ``swap_units`` for a ``width × height`` router grid."""
    g = max(width, height)
    out = np.zeros(3 * g, dtype=np.int64)
    out[: 2 * g] = _NONE
    return out


@numba.njit(cache=True, nogil=True)
def _tree(loads, cores, dst, lo, hi, cs, gx, gy, gw, m, yx, scratch):
    """Add ``m`` to the router links of the tree from core ``cs`` to the cores of
    ``dst[lo:hi]`` routed first along a (x; y where ``yx``), then along b. ``scratch``:
    ``scratch_for`` the grid (left as it was found)."""
    if hi - lo == 1:  # one destination: its route
        cd = cores[dst[lo]]
        _walk(loads, gx[cs], gy[cs], gx[cd], gy[cd], gw, m, yx)
        return
    g = scratch.size // 3  # per line a: least b, greatest b; then the lines met
    sa, sb = (gy[cs], gx[cs]) if yx else (gx[cs], gy[cs])
    a_min, a_max, n_lines = _NONE, -1, 0
    for j in range(lo, hi):
        cd = cores[dst[j]]
        da, db = (gy[cd], gx[cd]) if yx else (gx[cd], gy[cd])
        a_min, a_max = min(a_min, da), max(a_max, da)
        if scratch[da] == _NONE:  # a new destination line
            scratch[2 * g + n_lines] = da
            n_lines += 1
            scratch[da] = db
            scratch[g + da] = db
        else:
            scratch[da] = min(scratch[da], db)
            scratch[g + da] = max(scratch[g + da], db)
    # (a, b) -> (x, y): a straight leg walks the same links in either order
    if a_min < sa:  # first legs: along the source's line to the outermost lines
        _leg(loads, sa, sb, a_min, sb, gw, m, yx)
    if a_max > sa:
        _leg(loads, sa, sb, a_max, sb, gw, m, yx)
    for i in range(n_lines):  # second legs: along each destination line to its ends
        da = scratch[2 * g + i]
        if scratch[da] < sb:
            _leg(loads, da, sb, da, scratch[da], gw, m, yx)
        if scratch[g + da] > sb:
            _leg(loads, da, sb, da, scratch[g + da], gw, m, yx)
        scratch[da] = _NONE
        scratch[g + da] = _NONE


@numba.njit(cache=True, nogil=True)
def _leg(loads, a0, b0, a1, b1, gw, m, yx):
    if yx:
        _walk(loads, b0, a0, b1, a1, gw, m, False)
    else:
        _walk(loads, a0, b0, a1, b1, gw, m, False)


@numba.njit(cache=True, nogil=True)
def swap_units(
    core_a, core_b, per_mesh, cores, part_of_core, chip, chip_count, part_ptr, part_units,
    touched, unit_src, unit_ptr, unit_dst, unit_fixed, gx, gy, mesh, gw, n_router_slots,
    n_cores, orders, scratch, link_kind, us_of_kind, energy_of_kind,
):  # fmt: skip
    """Exchange the contents of cores ``core_a`` and ``core_b`` (either may be empty) and
    update ``per_mesh`` (meshes × link ids) in place: the units of their partitions
    (``part_ptr``/``part_units``, ``units_of_parts``) taken away, the partitions moved
    (``cores``: partition id → core, the input port's last; ``part_of_core``; ``chip_count``:
    partitions per chip, ``chip`` the chip of each core), the units added back. ``touched``:
    a zeroed work array, one per unit. Returns ``mesh_summary`` of the new loads (its
    ``link_kind``, ``us_of_kind``, ``energy_of_kind``) and the chips in use.

    One flat loop: numba counts references to every array handed to a helper, which cost
    more than the walk itself; only trees (and routings of two orders) call one."""
    pa, pb = part_of_core[core_a], part_of_core[core_b]
    n_orders = orders.size
    yx = orders[0] == YX
    into = n_router_slots + n_cores  # first router→core link
    if core_a != core_b and (pa >= 0 or pb >= 0):
        for phase in range(2):  # take the units away, move, add them back
            sign = -1 if phase == 0 else 1
            if phase == 1:
                if pa >= 0:
                    cores[pa] = core_b
                    chip_count[chip[core_a]] -= 1
                    chip_count[chip[core_b]] += 1
                if pb >= 0:
                    cores[pb] = core_a
                    chip_count[chip[core_b]] -= 1
                    chip_count[chip[core_a]] += 1
                part_of_core[core_a], part_of_core[core_b] = pb, pa
            for which in range(2):
                p = pa if which == 0 else pb
                if p < 0:
                    continue
                for k in range(part_ptr[p], part_ptr[p + 1]):
                    u = part_units[k]
                    if touched[u] != phase:  # (a unit of both partitions, once)
                        continue
                    touched[u] = 1 - phase
                    lo, hi = unit_ptr[u], unit_ptr[u + 1]
                    if hi == lo:
                        continue
                    cs = cores[unit_src[u]]
                    m = mesh[cs]
                    f = sign * unit_fixed[u]
                    per_mesh[m, n_router_slots + cs] += f
                    for j in range(lo, hi):
                        per_mesh[m, into + cores[unit_dst[j]]] += f
                    if hi - lo == 1 and n_orders == 1:  # a pair: its one route, here
                        cd = cores[unit_dst[lo]]
                        sx, sy, dx, dy = gx[cs], gy[cs], gx[cd], gy[cd]
                        line, col = (dy, sx) if yx else (sy, dx)
                        x = sx
                        while x < dx:
                            per_mesh[m, (line * gw + x) * 4] += f
                            x += 1
                        while x > dx:
                            per_mesh[m, (line * gw + x) * 4 + 1] += f
                            x -= 1
                        y = sy
                        while y < dy:
                            per_mesh[m, (y * gw + col) * 4 + 2] += f
                            y += 1
                        while y > dy:
                            per_mesh[m, (y * gw + col) * 4 + 3] += f
                            y -= 1
                        continue
                    w = unit_fixed[u]
                    for o in range(n_orders):
                        share = (w * (o + 1)) // n_orders - (w * o) // n_orders
                        _tree(per_mesh[m], cores, unit_dst, lo, hi, cs, gx, gy, gw, sign * share,
                              orders[o] == YX, scratch)  # fmt: skip
    link_us, energy = mesh_summary(per_mesh, link_kind, us_of_kind, energy_of_kind)
    return link_us, energy, np.count_nonzero(chip_count)


@numba.njit(cache=True, nogil=True)
def mesh_summary(per_mesh, link_kind, us_of_kind, energy_of_kind):
    """(time of the busiest link of any mesh in µs, routing energy in µJ) of loads kept per
    mesh: a link's time is its busiest mesh's load times its kind's µs per fixed-point
    message, its energy every mesh's load times its kind's µJ. ``link_kind``: per router
    link slot, ``ROUTER`` or ``OFF_CHIP`` (an edge slot, never loaded, either); then come
    every core's link to its router and every router's link to its core (``n_cores`` each).
    The sums are integers per kind, so the answer depends only on the loads."""
    meshes, n_links = per_mesh.shape
    n_slots = link_kind.size
    n_cores = (n_links - n_slots) // 2
    most = np.zeros(4, dtype=np.int64)  # per kind: the largest load of one mesh
    total = np.zeros(4, dtype=np.int64)  # per kind: all loads
    offchip = np.any(link_kind == OFF_CHIP)
    for m in range(meshes):
        row = per_mesh[m]
        for k, lo, hi in ((CORE_TO_ROUTER, n_slots, n_slots + n_cores),
                          (ROUTER_TO_CORE, n_slots + n_cores, n_links)):  # fmt: skip
            big, sum_ = 0, 0
            for i in range(lo, hi):
                big = max(big, row[i])
                sum_ += row[i]
            most[k] = max(most[k], big)
            total[k] += sum_
        if offchip:
            for i in range(n_slots):
                k = link_kind[i]
                most[k] = max(most[k], row[i])
                total[k] += row[i]
        else:
            big, sum_ = 0, 0
            for i in range(n_slots):
                big = max(big, row[i])
                sum_ += row[i]
            most[ROUTER] = max(most[ROUTER], big)
            total[ROUTER] += sum_
    worst = 0.0
    energy = 0.0
    for k in range(4):
        worst = max(worst, most[k] * us_of_kind[k])
        energy += total[k] * energy_of_kind[k]
    return worst, energy
