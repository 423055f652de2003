"""Flows: which core-to-core message flows make a link hot, and the routes of a core.

A *flow* is one pair of partitions that exchange messages (``PartitionGraph.routed_pairs``):
its messages go from the source's core to the destination's core over the core→router
link, the router links of its route and the router→core link. Routes are the hardware's
routing's (``engine.hardware.routing``): X then Y by default; where packets take either dimension
order (O1TURN) a flow is listed once per order (``FlowTable.route``), each row with its
share of the messages — the analytic model's split (``engine.evaluation.traffic``). A spike source's
flows leave from the hardware's input port (source partition ``n_parts``, on
``Hardware.input_core``). ``flows_through`` finds every flow that
crosses one link — the answer to "why is this link hot" — and ``core_flows`` the flows
that leave or reach one core. Both are vectorized over all flows; ``route_links`` lists
one flow's links in order, for drawing it.

One notation names routers, cores and links everywhere — the command line, its JSON, the
explorer's captions, tooltips and tables (``router_label``, ``core_label``, ``link_label``;
``parse_link`` reads a link back): a router is ``(x,y)``, its global router coordinates
(the mesh's axes; x grows to the E, y to the S, across every chip of a board), a core
``(x,y):s`` (its router's and its slot), a router link ``E (x,y)->(x+1,y)`` by its direction
and both ends, a core's links ``(x,y):s->(x,y)`` (core→router) and ``(x,y)->(x,y):s``
(router→core). On a board of several chips ``chip_note`` adds the chip where it helps
("chip 1", or "chip 1 -> chip 0" for an off-chip link). ``parse_link`` also reads ``core C
out``/``core C in`` (C a global core id), a link id, and ``max``, the most loaded link.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from engine.errors import SpecError
from engine.evaluation.traffic import port_cores, route_loads
from engine.hardware import DIRECTIONS, Hardware
from engine.hardware.routing import ORDER_NAMES, XY, dor_crosses, dor_path, routing_of
from engine.mapping.partition_graph import FIXED

__all__ = [
    "FlowTable", "chip_note", "core_flows", "core_label", "flows_through",
    "layer_link_messages", "layer_mesh_messages", "link_label", "parse_link", "route_links",
    "router_label",
]  # fmt: skip

_STEP = {0: (1, 0), 1: (-1, 0), 2: (0, 1), 3: (0, -1)}  # E W S N (y grows downwards)


# ------------------------------------------------------------------ naming links
def router_label(hardware: Hardware, router: int) -> str:
    """A router by its global coordinates: ``(x,y)``."""
    rt = hardware.router_table
    return f"({int(rt['gx'][router])},{int(rt['gy'][router])})"


def core_label(hardware: Hardware, core: int) -> str:
    """A core by its router's global coordinates and its slot: ``(x,y):s``."""
    ct = hardware.core_table
    return f"({int(ct['gx'][core])},{int(ct['gy'][core])}):{int(ct['slot'][core])}"


def link_label(hardware: Hardware, link: int) -> str:
    """The name of a link id, as ``parse_link`` reads it back."""
    link = int(link)
    n_r4 = 4 * hardware.n_routers
    if link >= n_r4:
        core = (link - n_r4) % hardware.n_cores
        c, r = (
            core_label(hardware, core),
            router_label(hardware, hardware.core_table["router"][core]),
        )
        return f"{c}->{r}" if link - n_r4 < hardware.n_cores else f"{r}->{c}"
    router, d = divmod(link, 4)
    x, y = router % hardware.grid_width, router // hardware.grid_width
    sx, sy = _STEP[d]
    return f"{DIRECTIONS[d]} ({x},{y})->({x + sx},{y + sy})"


def chip_note(hardware: Hardware, link: int) -> str:
    """The chip of a link of a board of several chips, ``chip 1`` (``chip 1 -> chip 0`` for
    an off-chip link); empty on one chip."""
    if hardware.n_chips < 2:
        return ""
    lt, chip = hardware.link_table, hardware.router_table["chip"]
    a = int(chip[lt["src_router"][link]])
    b = int(chip[max(int(lt["dst_router"][link]), 0)])
    return f"chip {a}" if a == b else f"chip {a} -> chip {b}"


_ROUTER_LINK = re.compile(
    r"^\s*([EWSN])\s*\(\s*(\d+)\s*,\s*(\d+)\s*\)\s*(?:->\s*\(\s*(\d+)\s*,\s*(\d+)\s*\))?\s*$"
)
_CORE_LINK = re.compile(r"^\s*core\s+(\d+)\s+(in|out)\s*$")
_XY = r"\(\s*(\d+)\s*,\s*(\d+)\s*\)"
_CORE_OUT = re.compile(rf"^\s*{_XY}\s*:\s*(\d+)\s*->\s*{_XY}\s*$")  # (x,y):s->(x,y)
_CORE_IN = re.compile(rf"^\s*{_XY}\s*->\s*{_XY}\s*:\s*(\d+)\s*$")  # (x,y)->(x,y):s


def _core_at(hardware: Hardware, text: str, gx: int, gy: int, slot: int) -> int:
    """The core id of global router (gx, gy)'s slot ``slot``."""
    gw, gh, k = hardware.grid_width, hardware.grid_height, hardware.cores_per_router
    if not (gx < gw and gy < gh and slot < k):
        raise SpecError(f"{text!r}: routers lie at x 0..{gw - 1}, y 0..{gh - 1}, slots 0..{k - 1}")
    w, h = hardware.width, hardware.height
    chip = (gy // h) * hardware.chips_x + gx // w
    return hardware.core_id(chip, gx % w, gy % h, slot)


def parse_link(hardware: Hardware, text: str, loads: np.ndarray | None = None) -> int:
    """The link id ``text`` names: ``E (x,y)->(x+1,y)`` (the target optional), ``core C
    out``/``core C in``, a link id, or ``max`` (the most loaded of ``loads``: give the links'
    times, ``Evaluation.link_us``, for the link that bounds the step)."""
    text = str(text).strip()
    n_links = hardware.n_link_ids
    kind = hardware.link_table["kind"]
    how = (
        'write a router link as "E (x,y)->(x+1,y)" (E, W, S or N; global router x and y), '
        'a core\'s links as "(x,y):s->(x,y)" (out of core) or "(x,y)->(x,y):s" (into it), '
        'a link id, or "max"'
    )
    if text == "max":
        if loads is None or not np.any(np.asarray(loads) > 0):
            raise SpecError("--flows max: no link carries any message")
        return int(np.argmax(loads))
    if text.isdigit():
        link = int(text)
        if link >= n_links or kind[link] < 0:
            raise SpecError(f"link {link} does not exist on {hardware.name}; {how}")
        return link
    m = _CORE_LINK.match(text)
    if m:
        core = int(m.group(1))
        if core >= hardware.n_cores:
            raise SpecError(f"{text!r}: {hardware.name} has cores 0..{hardware.n_cores - 1}")
        return 4 * hardware.n_routers + (hardware.n_cores if m.group(2) == "in" else 0) + core
    for pattern, into in ((_CORE_OUT, False), (_CORE_IN, True)):
        m = pattern.match(text)
        if m:
            g = [int(v) for v in m.groups()]
            (rx, ry), (x, y, slot) = (g[:2], g[2:]) if into else (g[3:], g[:3])
            if (rx, ry) != (x, y):
                raise SpecError(f"{text!r}: core ({x},{y}):{slot} links to router ({x},{y})")
            core = _core_at(hardware, text, x, y, slot)
            return 4 * hardware.n_routers + (hardware.n_cores if into else 0) + core
    m = _ROUTER_LINK.match(text)
    if not m:
        raise SpecError(f"{text!r} is not a link; {how}")
    d = DIRECTIONS.index(m.group(1))
    x, y = int(m.group(2)), int(m.group(3))
    gw, gh = hardware.grid_width, hardware.grid_height
    if not (x < gw and y < gh):
        raise SpecError(f"{text!r}: routers lie at x 0..{gw - 1}, y 0..{gh - 1}")
    link = (y * gw + x) * 4 + d
    to = (x + _STEP[d][0], y + _STEP[d][1])
    if m.group(4) is not None and (int(m.group(4)), int(m.group(5))) != to:
        raise SpecError(
            f"{text!r}: {m.group(1)} from ({x},{y}) leads to ({to[0]},{to[1]}) (routers are "
            "(x,y), x growing to the E, y to the S)"
        )
    if kind[link] < 0:
        raise SpecError(f"{text!r}: router ({x},{y}) has no neighbour to the {m.group(1)}")
    return link


# ------------------------------------------------------------------ flows
@dataclass(frozen=True)
class FlowTable:
    """Flows (one row each, heaviest first): partitions, layers, cores, messages, hops and
    route (its dimension order: a flow of a routing with two has a row for each)."""

    pair: np.ndarray  # index into the partition graph's routed_pairs
    src_part: np.ndarray  # (n_parts: the input port)
    dst_part: np.ndarray
    src_pop: np.ndarray  # population of the source (a spike source's for the input port)
    dst_pop: np.ndarray
    src_core: np.ndarray
    dst_core: np.ndarray
    messages: np.ndarray  # expected messages per step
    hops: np.ndarray  # router-to-router links on the route
    share: np.ndarray  # of the link's load (flows_through), else of the core's traffic
    route: np.ndarray  # its dimension order: engine.hardware.routing.XY or YX

    def __len__(self) -> int:
        return int(self.pair.size)

    def rows(self, hardware: Hardware, graph) -> list[dict]:
        """The table as dicts, with layer names, cores as ``core_label`` names them and
        their chips."""
        names = graph.network.population_names
        return [
            {
                "src_layer": names[sl],
                "src_partition": int(s) if s < graph.n_parts else None,
                "src_core": core_label(hardware, int(cs)),
                "src_chip": int(hardware.core_table["chip"][cs]),
                "dst_layer": names[dl],
                "dst_partition": int(d),
                "dst_core": core_label(hardware, int(cd)),
                "dst_chip": int(hardware.core_table["chip"][cd]),
                "messages": float(m),
                "share": float(f),
                "hops": int(h),
                "route": ORDER_NAMES[o],
            }
            for s, d, sl, dl, cs, cd, m, f, h, o in zip(
                self.src_part.tolist(),
                self.dst_part.tolist(),
                self.src_pop.tolist(),
                self.dst_pop.tolist(),
                self.src_core.tolist(),
                self.dst_core.tolist(),
                self.messages.tolist(),
                self.share.tolist(),
                self.hops.tolist(),
                self.route.tolist(),
                strict=True,
            )  # fmt: skip
        ]


def _endpoints(hardware: Hardware, graph, cores: np.ndarray):
    cores = port_cores(hardware, cores)
    pair_src, pair_dst, _ = graph.routed_pairs
    src, dst = cores[pair_src], cores[pair_dst]
    ct = hardware.core_table
    return src, dst, ct["gx"][src], ct["gy"][src], ct["gx"][dst], ct["gy"][dst]


def _table(hardware: Hardware, graph, hits, src, dst, sx, sy, dx, dy) -> FlowTable:
    """The flows ``hits`` marks — one mask per dimension order of the hardware's routing, a
    row per flow and order, each order an equal share of the flow's messages — heaviest
    first, with their shares of the rows' messages."""
    orders = routing_of(hardware).orders
    idx = np.concatenate([np.flatnonzero(h) for h in hits])
    route = np.concatenate(
        [np.full(np.count_nonzero(h), o) for h, o in zip(hits, orders, strict=True)]
    ).astype(np.int64)
    messages = graph.routed_messages[idx] / len(orders)
    order = np.argsort(-messages, kind="stable")
    at, m = idx[order], messages[order]
    total = float(m.sum())
    hops = np.abs(dx[at] - sx[at]) + np.abs(dy[at] - sy[at])
    pair_src, pair_dst, _ = graph.routed_pairs
    src_pop, dst_pop = graph.routed_populations
    return FlowTable(
        pair=at,
        src_part=pair_src[at],
        dst_part=pair_dst[at],
        src_pop=src_pop[at],
        dst_pop=dst_pop[at],
        src_core=src[at],
        dst_core=dst[at],
        messages=m,
        hops=hops,
        share=m / total if total > 0 else np.zeros_like(m),
        route=route[order],
    )


def flows_through(hardware: Hardware, graph, cores, link: int) -> FlowTable:
    """Every flow whose route crosses ``link`` (a row per route of it that does), heaviest
    first, with its share of the link's load (the shares sum to 1 over a loaded link: the
    model's load is exactly these flows)."""
    link = int(link)
    src, dst, sx, sy, dx, dy = _endpoints(hardware, graph, cores)
    n_r4 = 4 * hardware.n_routers
    orders = routing_of(hardware).orders
    if link >= n_r4:
        core = (link - n_r4) % hardware.n_cores
        on = (src == core) if link - n_r4 < hardware.n_cores else (dst == core)
        hits = [on] * len(orders)
    else:
        router, d = divmod(link, 4)
        x, y = router % hardware.grid_width, router // hardware.grid_width
        hits = [dor_crosses(o, d, x, y, sx, sy, dx, dy) for o in orders]
    return _table(hardware, graph, hits, src, dst, sx, sy, dx, dy)


def core_flows(hardware: Hardware, graph, cores, core: int) -> tuple[FlowTable, FlowTable]:
    """(outbound, inbound) flows of the partition on physical ``core`` (empty tables for an
    empty core); shares are of the core's outbound (inbound) messages. The input port's
    flows are no core's outbound flows, even where they enter through its link."""
    src, dst, sx, sy, dx, dy = _endpoints(hardware, graph, cores)
    pair_src = graph.routed_pairs[0]
    out_hits, in_hits = (src == int(core)) & (pair_src < graph.n_parts), dst == int(core)
    k = len(routing_of(hardware).orders)
    return tuple(
        _table(hardware, graph, [hits] * k, src, dst, sx, sy, dx, dy)
        for hits in (out_hits, in_hits)
    )


def route_links(hardware: Hardware, src_core: int, dst_core: int, order: int = XY) -> np.ndarray:
    """The link ids one message crosses from ``src_core`` to ``dst_core``, in order: the
    core→router link, the router links of its route in dimension ``order``
    (``engine.hardware.routing.XY``: X then Y; ``YX``), the router→core link."""
    ct, gw = hardware.core_table, hardware.grid_width
    sx, sy = int(ct["gx"][src_core]), int(ct["gy"][src_core])
    dx, dy = int(ct["gx"][dst_core]), int(ct["gy"][dst_core])
    n_r4 = 4 * hardware.n_routers
    return np.concatenate(
        [[n_r4 + src_core], dor_path(gw, sx, sy, dx, dy, order),
         [n_r4 + hardware.n_cores + dst_core]]
    ).astype(np.int64)  # fmt: skip


def layer_mesh_messages(hardware: Hardware, graph, cores, layers) -> np.ndarray:
    """``layer_link_messages`` per parallel mesh: per link id (rows) and mesh (columns), the
    messages of the flows from ``layers`` whose source core sends on that mesh."""
    cores = port_cores(hardware, cores)
    pair_src, pair_dst, fixed = graph.routed_pairs
    keep = np.isin(graph.routed_populations[0], np.asarray(list(layers), dtype=np.int64))
    src, dst, fixed = cores[pair_src[keep]], cores[pair_dst[keep]], fixed[keep]
    mesh = hardware.core_table["mesh"][src]
    return np.stack(
        [route_loads(hardware, src[mesh == m], dst[mesh == m], fixed[mesh == m]) / FIXED
         for m in range(hardware.links.meshes)], axis=1,
    )  # fmt: skip


def layer_link_messages(hardware: Hardware, graph, cores, layers) -> np.ndarray:
    """Messages per step on every link (one per link id) of the flows that leave the
    populations ``layers`` (a spike source's from the input port) — the load one layer's
    output puts on the mesh (over all populations, the model's whole load)."""
    cores = port_cores(hardware, cores)
    pair_src, pair_dst, fixed = graph.routed_pairs
    keep = np.isin(graph.routed_populations[0], np.asarray(list(layers), dtype=np.int64))
    src, dst = cores[pair_src[keep]], cores[pair_dst[keep]]
    return route_loads(hardware, src, dst, fixed[keep]) / FIXED
