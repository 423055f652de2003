"""Routings: the routes a packet may take over the router grid, one registry entry each.

Every routing here is minimal and goes one dimension, then the other: a packet's route is
X then Y (``XY``: along its source's row to its destination's column, then down or up that
column) or Y then X (``YX``: along its source's column, then along its destination's row).
An entry (``Routing``) names the *orders* its packets take, each equally likely, and
everything that routes reads it:

* the analytic model (``engine.evaluation.traffic``, ``engine.evaluation.cost``) gives each order
  its share of a flow's expected messages (``Routing.split``) and routes it there (``dor_loads``);
  O1TURN's loads are half X-then-Y and half Y-then-X;
* the simulator (``engine.simulate``) gives each packet one order — drawn per packet from
  the run's seed when there are several (``Routing.choose``; synthetic sources draw it in
  the kernel, whose routing id is ``Routing.kernel``) — and, with ``vc_classes``, keeps
  each order on its own class of virtual channels on the router links (``vc_masks``);
* flows (``engine.evaluation.flows``) list a flow once per order, each with its share of the
  messages; a route's links are ``dor_path``, the flows that cross a link ``dor_crosses``;
* the simulator's channel-load bound and zero-load latency follow every order;
* the command line (``--routing``), presets (``[noc] routing``), scenes and the explorer's
  menus list the registry.

The analytic loads of the same spikes and the same route choices (``choose`` with the
step's seed) are, link for link, the flits the simulator moves (``engine.pipeline.
spike_loads``; tests hold them to it for every routing).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.errors import InvalidHardwareError
from engine.registry import Registry

__all__ = [
    "ORDER_LABELS", "ORDER_NAMES", "XY", "YX", "Routing", "dor_crosses", "dor_loads", "dor_path",
    "routing_of", "routings",
]  # fmt: skip

XY, YX = 0, 1  # dimension orders: X first, then Y; Y first, then X
ORDER_NAMES = ("xy", "yx")
ORDER_LABELS = ("X then Y", "Y then X")
# the simulator kernel's routing ids (``simulate.records.Config.routing``): how a synthetic
# packet takes its order — every packet X first, every packet Y first, or either, drawn per packet
KERNEL_XY, KERNEL_YX, KERNEL_EITHER = 0, 1, 2
_CHOICE_STREAM = 0x0170  # the random stream of the route choices, apart from the spikes'


@dataclass(frozen=True)
class Routing:
    """One routing: the dimension orders its packets take and how the simulator runs it."""

    name: str
    label: str  # for menus ("X then Y")
    orders: tuple[int, ...]  # XY / YX, each taken by an equal share of the packets
    kernel: int  # the simulator kernel's routing id (KERNEL_*)
    vc_classes: bool = False  # each order on its own virtual channels on router links
    booksim: str | None = None  # BookSim2's routing_function of it on a mesh (None: none)

    def check(self, vcs: int) -> None:
        """Raise ``InvalidHardwareError`` when a router of ``vcs`` VCs cannot run it."""
        if self.vc_classes and (vcs < 2 or vcs % 2):
            raise InvalidHardwareError(
                f"noc routing {self.name} gives each dimension order half of the virtual "
                f"channels: vcs must be even (2, 4, …), not {vcs}"
            )

    def split(self, weight) -> list:
        """``weight`` (integers, or floats that hold integers: fixed-point loads) shared out
        over the orders, one array per order: ``floor(w·(k+1)/n) − floor(w·k/n)`` for the
        k-th of n, so the shares add up to ``weight`` exactly."""
        n = len(self.orders)
        if n == 1:
            return [weight]
        w = np.asarray(weight)
        return [(w * (k + 1)) // n - (w * k) // n for k in range(n)]

    def choose(self, n: int, seed: int = 0) -> np.ndarray:
        """The order (``XY``/``YX``) of each of ``n`` packets: the routing's only order, or
        one drawn per packet, equally likely, from ``seed`` (a stream of its own: the same
        seed's spikes are drawn apart)."""
        if len(self.orders) == 1:
            return np.full(n, self.orders[0], dtype=np.int64)
        rng = np.random.default_rng([_CHOICE_STREAM, int(seed)])
        return np.asarray(self.orders, dtype=np.int64)[rng.integers(0, len(self.orders), n)]

    def vc_masks(self, vcs: int) -> tuple[int, int]:
        """The virtual channels (bit v: VC v) an X-first and a Y-first packet may take on a
        router link. With ``vc_classes`` as BookSim2's ``xy_yx_mesh``: of ``vcs`` VCs the
        lower half carry X-then-Y packets, the upper half Y-then-X ones; into a core every VC
        serves every packet."""
        full = (1 << vcs) - 1
        if not self.vc_classes:
            return full, full
        half = vcs // 2
        return full >> half, full & ~((1 << half) - 1)

    def router_loads(self, width: int, height: int, sx, sy, dx, dy, weight, order=None):
        """Per-link loads (int64, four slots per router: E, W, S, N) of messages from routers
        (sx, sy) to (dx, dy) weighing ``weight``: each message over its ``order`` (per
        message, ``XY``/``YX``), or, when None, its weight shared over the routing's orders
        (``split``): the expected loads."""
        if order is not None:
            return dor_loads(width, height, sx, sy, dx, dy, weight, np.asarray(order) == YX)
        if len(self.orders) == 1:
            return dor_loads(width, height, sx, sy, dx, dy, weight, self.orders[0] == YX)
        n, size = len(self.orders), np.size(sx)
        sx, sy, dx, dy = (np.tile(np.asarray(a), n) for a in (sx, sy, dx, dy))
        w = np.concatenate([np.broadcast_to(p, (size,)) for p in self.split(weight)])
        yx = np.repeat(np.asarray(self.orders) == YX, size)
        return dor_loads(width, height, sx, sy, dx, dy, w, yx)


# ------------------------------------------------------------------ dimension-order routes
def dor_loads(width: int, height: int, sx, sy, dx, dy, weight, yx=False) -> np.ndarray:
    """Per-link loads (int64, four slots per router: E, W, S, N) of messages routed one
    dimension, then the other, as difference arrays: X first, or Y first where ``yx`` (per
    message, or one bool for all).

    A message from (sx, sy) to (dx, dy) loads the E (or W) links of one row between ``sx``
    and ``dx`` — its source's row X first, its destination's Y first — and the S (or N)
    links of one column between ``sy`` and ``dy`` — its destination's X first, its
    source's Y first. Each message adds +w and −w at the two ends of its two segments; one
    weighted bincount and cumulative sums along rows and columns give every link. A message
    with no horizontal (vertical) leg adds +w and −w at the same place.
    """
    gw, gh = width, height
    w = np.asarray(weight).astype(np.float64)  # integers below 2**53 stay exact in float64 sums
    if isinstance(yx, bool | np.bool_):
        row, col = (dy, sx) if yx else (sy, dx)
    else:
        row, col = np.where(yx, dy, sy), np.where(yx, sx, dx)
    n_h, n_v = gh * (gw + 1), (gh + 1) * gw  # E and W rows have gw+1 columns; S and N gh+1 rows
    east, south = dx > sx, dy > sy
    h_base = np.where(east, 0, n_h) + row * (gw + 1)
    v_base = np.where(south, 2 * n_h, 2 * n_h + n_v) + col
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


def dor_path(width: int, sx: int, sy: int, dx: int, dy: int, order: int = XY) -> np.ndarray:
    """The router-link slots (``router · 4 + direction``) of one route, in the order it
    crosses them."""
    step_x, step_y = (1 if dx > sx else -1), (1 if dy > sy else -1)
    xs, ys = np.arange(sx, dx, step_x), np.arange(sy, dy, step_y)
    row, col = (dy, sx) if order == YX else (sy, dx)
    horizontal = (row * width + xs) * 4 + (0 if step_x > 0 else 1)
    vertical = (ys * width + col) * 4 + (2 if step_y > 0 else 3)
    legs = (vertical, horizontal) if order == YX else (horizontal, vertical)
    return np.concatenate(legs).astype(np.int64)


def dor_crosses(order: int, direction: int, x: int, y: int, sx, sy, dx, dy) -> np.ndarray:
    """Whether each route (sx, sy) → (dx, dy) in ``order`` crosses the link that leaves
    router (x, y) in ``direction`` (0–3: E, W, S, N)."""
    row, col = (dy, sx) if order == YX else (sy, dx)
    if direction == 0:  # E: along its row, x in [sx, dx)
        return (row == y) & (sx <= x) & (x < dx)
    if direction == 1:  # W: x in (dx, sx]
        return (row == y) & (dx < x) & (x <= sx)
    if direction == 2:  # S: along its column, y in [sy, dy)
        return (col == x) & (sy <= y) & (y < dy)
    return (col == x) & (dy < y) & (y <= sy)  # N: y in (dy, sy]


# ------------------------------------------------------------------ the registry
routings: Registry[Routing] = Registry("routing")
routings.add(
    "xy", Routing("xy", ORDER_LABELS[XY], (XY,), KERNEL_XY, booksim="dor"),
    doc="dimension order, X then Y (as Loihi 2 routes; BookSim2's dor)",
)  # fmt: skip
routings.add(
    "yx", Routing("yx", ORDER_LABELS[YX], (YX,), KERNEL_YX),
    doc="dimension order, Y then X",
)  # fmt: skip
routings.add(
    "o1turn", Routing("o1turn", "O1TURN: X or Y first", (XY, YX), KERNEL_EITHER,
                      vc_classes=True, booksim="xy_yx"),
    doc="each packet X then Y or Y then X, equally likely, each order on half the virtual "
    "channels (BookSim2's xy_yx_mesh)",
)  # fmt: skip


def routing_of(hardware) -> Routing:
    """The routing of a ``Hardware``'s NoC (its ``[noc] routing``)."""
    return routings[hardware.noc.routing]
