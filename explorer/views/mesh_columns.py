"""The mesh view's data: plain numpy columns for Bokeh ``ColumnDataSource`` s.

Functions of the hardware, network and evaluation only (no Bokeh, no Panel), so they
are tested without a browser; ``explorer.views.mesh_figure`` draws them.

Geometry, in router pitches: router ``(gx, gy)`` sits at ``x = gx, y = gy`` with y
growing downwards (row 0 drawn at the top), on a light tile that groups it with its
K cores, which sit on a ring around it (slot 0 top-left, then clockwise). Each
router→router link is a segment on the right-hand lane of its direction of travel, so
the two directions between a pair of routers are two parallel segments; core→router
and router→core links are two short parallel segments between a core and its router.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from engine.evaluation.cost import TERM_LABELS, Evaluation
from engine.evaluation.flows import chip_note, core_label, link_label
from engine.hardware import CORE_TO_ROUTER, DIRECTIONS, LINK_KINDS, OFF_CHIP, ROUTER, Hardware
from engine.model.network import Network

__all__ = [
    "BOTTLENECK_COLOR",
    "COLOR_MODES",
    "MESH_PAD",
    "SIMULATED_MODES",
    "chip_loads",
    "chip_view",
    "link_loads_frame",
    "simulated_link_columns",
    "simulated_link_text",
    "EMPTY_COLOR",
    "IDLE_COLOR",
    "LINK_DIRECTIONS",
    "LOAD_PALETTE",
    "POPULATION_PALETTE",
    "bottleneck_columns",
    "bottleneck_core_columns",
    "bottleneck_text",
    "BUSIER",
    "link_name",
    "mesh_split_text",
    "mesh_values",
    "unchanged_text",
    "chip_columns",
    "color_scale",
    "core_columns",
    "interpolate_palette",
    "core_offsets",
    "core_positions",
    "core_size",
    "drop_target",
    "hit_test",
    "link_columns",
    "link_geometry",
    "load_colors",
    "node_address_parts",
    "population_colors",
    "router_columns",
    "srgb_to_lab",
]

# --------------------------------------------------------------------------- style
# Populations: a qualitative palette without reds, so that it never reads as link load.
# Tableau's first colours; its light twins of them (layer3 and layer9, layer4 and layer10
# looked alike: 10 and 4 ΔE*76 apart, issue 57) left to the farthest-point picking below
POPULATION_PALETTE = (
    "#4e79a7", "#59a14f", "#b07aa1", "#edc948", "#76b7b2", "#9c755f", "#a0cbe8",
)  # fmt: skip
EMPTY_COLOR = "#ececec"
IDLE_COLOR = "#d4d4d4"  # a link that carries no messages
BOTTLENECK_COLOR = "#ff1f8e"
_LOAD_ANCHORS = ("#fdd0a2", "#fd8d3c", "#e6550d", "#a63603", "#4a1202")  # light → dark = more load


def interpolate_palette(anchors, n: int) -> tuple[str, ...]:
    """``n`` colours evenly along the straight RGB segments between the ``anchors``."""
    rgb = np.array([[int(a[i : i + 2], 16) for i in (1, 3, 5)] for a in anchors], dtype=float)
    t = np.linspace(0, 1, n)
    at = np.linspace(0, 1, len(anchors))
    channels = [np.rint(np.interp(t, at, rgb[:, c])).astype(int) for c in range(3)]
    return tuple(f"#{r:02x}{g:02x}{b:02x}" for r, g, b in zip(*channels, strict=True))


LOAD_PALETTE = interpolate_palette(_LOAD_ANCHORS, 256)

# geometry, in router pitches
TILE_SIZE = 0.84  # side of the light tile that groups a router with its cores
ROUTER_SIZE = 0.12  # side of a router's square
CORE_RING = 0.25 * np.sqrt(2)  # distance from a router's centre to its cores' centres
CORE_SIZE = 0.17  # side of a core's square (K <= 4; smaller for more cores)
LANE = 0.062  # offset of a router link from the line between the two routers
CORE_LANE = 0.026  # offset of a core link from the line between core and router
GAP = 0.09  # router links start this far from a router's centre
MESH_PAD = 0.62  # router pitches of margin around the outermost routers of a mesh figure
DROP_RADIUS = 0.25  # a dragged core lands on the slot nearest its drop point within this distance

# What the link colours can show: column of ``link_columns``, colour-bar title, tick format.
COLOR_MODES = {
    "messages": ("messages / step", "0,0"),
    "utilization": ("time: busy share of the step", "0%"),
    "flits": ("simulated flits / step", "0,0"),
    "busy": ("simulated busy share of the step", "0%"),
    "buffer": ("fullest input buffer (flits)", "0,0"),
}
SIMULATED_MODES = ("flits", "busy", "buffer")  # read from StepResult.link_figures()
BUSIER = "busier"  # the mesh choice that shows each link's busier mesh (what times it)
# what ``link_geometry``'s ``direction_code`` names: a router link's, then a core link's
LINK_DIRECTIONS = (*DIRECTIONS, "into core", "out of core")


# ------------------------------------------------------------------ column builders
def core_offsets(cores_per_router: int) -> tuple[np.ndarray, np.ndarray]:
    """(dx, dy) of each slot's centre from its router: on a ring, slot 0 top-left, clockwise."""
    angle = -0.75 * np.pi + 2 * np.pi * np.arange(cores_per_router) / cores_per_router
    return CORE_RING * np.cos(angle), CORE_RING * np.sin(angle)


def core_size(cores_per_router: int) -> float:
    """Side of a core square: CORE_SIZE up to four cores, then what fits on the ring."""
    if cores_per_router <= 4:
        return CORE_SIZE
    return min(CORE_SIZE, 0.75 * 2 * np.pi * CORE_RING / cores_per_router / np.sqrt(2))


def core_positions(hardware: Hardware) -> tuple[np.ndarray, np.ndarray]:
    """(x, y) of every physical core's slot, indexed by global core id."""
    ct = hardware.core_table
    dx, dy = core_offsets(hardware.cores_per_router)
    return ct["gx"] + dx[ct["slot"]], ct["gy"] + dy[ct["slot"]]


def moved_cores(hardware: Hardware, xs, ys) -> np.ndarray | None:
    """The rows of the cores that ``xs, ys`` (positions, row = global core id) put off their
    slots: empty when every core sits on its slot (a write of ours coming back), None when
    the columns do not have one row per core."""
    x0, y0 = core_positions(hardware)
    xs, ys = np.asarray(xs, dtype=float), np.asarray(ys, dtype=float)
    if xs.shape != x0.shape or ys.shape != y0.shape:
        return None
    return np.flatnonzero((np.abs(xs - x0) > 1e-9) | (np.abs(ys - y0) > 1e-9))


def drop_target(
    hardware: Hardware, xs, ys, *, radius: float = DROP_RADIUS
) -> tuple[int, int] | None:
    """Which core was dragged onto which slot, from the cores' positions after a drop.

    ``xs, ys`` are the cores' positions (row = global core id) as the browser left them:
    one row moved away from its slot. Returns ``(dragged core, core of the nearest slot)``,
    or ``None`` when nothing moved, the drop landed on the core's own slot, or it landed
    farther than ``radius`` router pitches from every slot (the core snaps back).
    """
    x0, y0 = core_positions(hardware)
    xs, ys = np.asarray(xs, dtype=float), np.asarray(ys, dtype=float)
    moved = moved_cores(hardware, xs, ys)
    if moved is None or moved.size != 1:
        return None
    src = int(moved[0])
    distance = np.hypot(x0 - xs[src], y0 - ys[src])
    dst = int(np.argmin(distance))
    if dst == src or distance[dst] > radius:
        return None
    return src, dst


def hit_test(
    hardware: Hardware, links: dict, x: float, y: float, *, reach: float = 0.1
) -> tuple[str, int] | None:
    """What a click at ``(x, y)`` (router pitches) lands on: ``("core", core id)`` inside a
    core's square, else ``("link", link id)`` for the link segment of ``links``
    (``link_columns``) nearest within ``reach``, else None."""
    cx, cy = core_positions(hardware)
    half = core_size(hardware.cores_per_router) / 2
    inside = np.flatnonzero((np.abs(cx - x) <= half) & (np.abs(cy - y) <= half))
    if inside.size:
        return "core", int(inside[np.argmin(np.hypot(cx[inside] - x, cy[inside] - y))])
    x0, y0 = np.asarray(links["x0"], float), np.asarray(links["y0"], float)
    vx, vy = np.asarray(links["x1"], float) - x0, np.asarray(links["y1"], float) - y0
    length2 = np.maximum(vx * vx + vy * vy, 1e-12)
    t = np.clip(((x - x0) * vx + (y - y0) * vy) / length2, 0.0, 1.0)
    distance = np.hypot(x0 + t * vx - x, y0 + t * vy - y)
    if distance.size == 0:
        return None
    k = int(np.argmin(distance))
    return ("link", int(links["link"][k])) if distance[k] <= reach else None


def population_colors(n_populations: int) -> list[str]:
    """One colour per population, all different: ``POPULATION_PALETTE`` first, then more.

    A network with more layers than the palette (sparse-mlp-2) used to repeat its colours,
    so two layers looked like one. Past the palette come ``_extra_population_colors``, the
    same for every network, so ``population_colors(n)`` starts with ``population_colors(m)``
    for m < n. Distinct for up to ``len(POPULATION_PALETTE) + len(pool)`` (thousands);
    beyond that (no legend could show it) the colours repeat.
    """
    n = max(int(n_populations), 0)
    base = list(POPULATION_PALETTE[:n])
    if n <= len(POPULATION_PALETTE):
        return base
    extra = _extra_population_colors(n - len(POPULATION_PALETTE))
    colors = base + list(extra)
    return [colors[i % len(colors)] for i in range(n)]


# What the extra population colours may be: points of a grid in CIELAB, muted (chroma
# 20..60) like the palette, neither dark nor washed out (L* 35..85), and not red, orange
# or pink (hue 85°..335°), which the mesh uses for load and for the bottleneck.
_EXTRA_LIGHTNESS = (35.0, 85.0)
_EXTRA_CHROMA = (20.0, 60.0)
_EXTRA_HUE_DEG = (85.0, 335.0)
_EXTRA_GRID_STEP = 2.5


def _hex_rgb(colors) -> np.ndarray:
    """``#rrggbb`` strings as sRGB in [0, 1], one row each."""
    return np.array([[int(c[i : i + 2], 16) for i in (1, 3, 5)] for c in colors]) / 255.0


_SRGB_TO_XYZ = np.array(
    [[0.4124564, 0.3575761, 0.1804375],
     [0.2126729, 0.7151522, 0.0721750],
     [0.0193339, 0.1191920, 0.9503041]]
)  # fmt: skip
_WHITE_D65 = np.array([0.95047, 1.0, 1.08883])
_LAB_EPS = 6.0 / 29.0


def srgb_to_lab(rgb: np.ndarray) -> np.ndarray:
    """CIELAB (D65) of sRGB rows in [0, 1]: a Euclidean distance there (ΔE*76) is about
    how different two colours look, which a distance in RGB is not."""
    rgb = np.asarray(rgb, dtype=float)
    linear = np.where(rgb <= 0.04045, rgb / 12.92, ((rgb + 0.055) / 1.055) ** 2.4)
    xyz = linear @ _SRGB_TO_XYZ.T / _WHITE_D65
    f = np.where(xyz > _LAB_EPS**3, np.cbrt(xyz), xyz / (3 * _LAB_EPS**2) + 4 / 29)
    return np.stack([116 * f[:, 1] - 16, 500 * (f[:, 0] - f[:, 1]), 200 * (f[:, 1] - f[:, 2])], -1)


def _lab_to_srgb(lab: np.ndarray) -> np.ndarray:
    fy = (lab[:, 0] + 16) / 116
    f = np.stack([fy + lab[:, 1] / 500, fy, fy - lab[:, 2] / 200], -1)
    xyz = np.where(f > _LAB_EPS, f**3, 3 * _LAB_EPS**2 * (f - 4 / 29)) * _WHITE_D65
    linear = xyz @ np.linalg.inv(_SRGB_TO_XYZ).T
    return np.where(
        linear <= 0.0031308, 12.92 * linear, 1.055 * np.abs(linear) ** (1 / 2.4) - 0.055
    )


# shared by every session of the process: one pool of candidate colours, the same for all
# (a few thousand CIELAB triples, built once rather than per page)
@lru_cache(maxsize=1)
def _extra_color_pool() -> tuple[np.ndarray, np.ndarray]:
    """The candidates for extra population colours: ``(hex strings, their CIELAB)``."""
    lo_l, hi_l = _EXTRA_LIGHTNESS
    lo_c, hi_c = _EXTRA_CHROMA
    step = _EXTRA_GRID_STEP
    ls, ab = np.arange(lo_l, hi_l + step / 2, step), np.arange(-hi_c, hi_c + step / 2, step)
    lab = np.stack([g.ravel() for g in np.meshgrid(ls, ab, ab, indexing="ij")], -1)
    chroma = np.hypot(lab[:, 1], lab[:, 2])
    hue = np.degrees(np.arctan2(lab[:, 2], lab[:, 1])) % 360
    lo_h, hi_h = _EXTRA_HUE_DEG
    lab = lab[(chroma >= lo_c) & (chroma <= hi_c) & (hue >= lo_h) & (hue <= hi_h)]
    rgb = _lab_to_srgb(lab)
    rgb8 = np.unique(np.rint(rgb[np.all((rgb >= 0) & (rgb <= 1), axis=1)] * 255), axis=0)
    hexes = np.array([f"#{r:02x}{g:02x}{b:02x}" for r, g, b in rgb8.astype(int)])
    return hexes, srgb_to_lab(rgb8 / 255.0)


# shared by every session: the colours of networks of up to 16 different sizes (a tuple of
# strings each), which every page of such a network asks for again
@lru_cache(maxsize=16)
def _extra_population_colors(count: int) -> tuple[str, ...]:
    """``count`` colours after ``POPULATION_PALETTE``, chosen one at a time from
    ``_extra_color_pool``: each the candidate farthest (in CIELAB) from every colour
    already taken, the palette's and the ones that mean something else on the mesh
    (idle and empty, the load palette, the bottleneck) among them.

    Farthest-point picking keeps each new colour as different as the pool allows from
    all before it: up to 64 populations every colour is more than 15 ΔE*76 from every
    other (the palette's own closest pair is 4 apart), later ones less but never equal.
    The order does not depend on ``count`` (a longer list starts with a shorter one).
    """
    hexes, lab = _extra_color_pool()
    taken = (*POPULATION_PALETTE, IDLE_COLOR, EMPTY_COLOR, BOTTLENECK_COLOR, *_LOAD_ANCHORS)
    seen = srgb_to_lab(_hex_rgb(taken))
    nearest = np.min(np.linalg.norm(lab[:, None, :] - seen[None, :, :], axis=-1), axis=1)
    picked = []
    for _ in range(min(count, hexes.size)):  # one per population past the palette
        k = int(np.argmax(nearest))
        picked.append(str(hexes[k]))
        nearest = np.minimum(nearest, np.linalg.norm(lab - lab[k], axis=1))
    return tuple(picked)


def load_colors(
    messages: np.ndarray, vmax: float, palette=LOAD_PALETTE, idle=IDLE_COLOR
) -> np.ndarray:
    """Colour of each load, binned as BokehJS's ``LinearColorMapper(low=0, high=vmax)``
    bins it (the same floating-point steps, so the browser's colours are these).

    A load of zero gets ``idle``; any positive load a palette colour.
    """
    messages = np.asarray(messages, dtype=float)
    n = len(palette)
    if vmax > 0:
        with np.errstate(invalid="ignore"):
            index = np.floor(messages * (1.0 / vmax) / (1.0 / n))
        index = np.where(messages == vmax, n - 1, index)
    else:
        index = np.zeros(messages.shape)
    index = np.clip(np.nan_to_num(index), 0, n - 1).astype(np.int64)
    colors = np.asarray(palette, dtype=object)[index]
    return np.where(messages > 0, colors, idle)


def router_columns(hardware: Hardware) -> dict[str, np.ndarray]:
    """One row per router of the global grid."""
    rt = hardware.router_table
    return {
        "x": rt["gx"].astype(float), "y": rt["gy"].astype(float),
        "router": np.arange(hardware.n_routers), "chip": rt["chip"],
    }  # fmt: skip


# shared by every session: per hardware (a frozen value, hashed by its fields) four int32
# arrays of its nodes; eight boards at most, since every page of a board sends them again
@lru_cache(maxsize=8)
def node_address_parts(hardware: Hardware) -> tuple[np.ndarray, ...]:
    """``(chip, x, y, slot)`` of every node a link joins, x and y its router's global
    coordinates (the mesh's axes), routers first (node = router id, slot -1), then cores
    (node = ``n_routers`` + core id): a node's name is ``(x,y)`` for a router, ``(x,y):s``
    for a core (``engine.evaluation.flows.core_label``: one notation everywhere)."""
    rt, ct = hardware.router_table, hardware.core_table
    parts = (
        np.concatenate([rt["chip"], ct["chip"]]),
        np.concatenate([rt["gx"], ct["gx"]]),
        np.concatenate([rt["gy"], ct["gy"]]),
        np.concatenate([np.full(hardware.n_routers, -1), ct["slot"]]),
    )
    return tuple(np.asarray(a, dtype=np.int32) for a in parts)


# shared by every session, bounded as node_address_parts: the addresses as text
@lru_cache(maxsize=8)
def _node_addresses(hardware: Hardware) -> np.ndarray:
    """The name of every node (``node_address_parts``) as the tooltips write it."""
    return np.array([
        f"({x},{y})" + (f":{s}" if s >= 0 else "")
        for _, x, y, s in zip(*(a.tolist() for a in node_address_parts(hardware)), strict=True)
    ])  # fmt: skip


def _core_addresses(hardware: Hardware) -> np.ndarray:
    return _node_addresses(hardware)[hardware.n_routers :]


def core_columns(
    hardware: Hardware, network: Network, evaluation: Evaluation
) -> dict[str, np.ndarray]:
    """One row per physical core: position, colour and the load of the partition placed there.

    Empty cores have partition -1, population "empty" and zero loads.
    """
    n = hardware.n_cores
    x, y = core_positions(hardware)
    part = np.full(n, -1, dtype=np.int64)
    part[evaluation.cores] = np.arange(evaluation.cores.size)
    placed = part >= 0
    pop = np.full(n, -1, dtype=np.int64)
    pop[placed] = evaluation.population[part[placed]]
    names = np.array([*network.population_names, "empty"], dtype=object)
    colors = np.array([*population_colors(network.n_populations), EMPTY_COLOR], dtype=object)

    def per_core(values) -> np.ndarray:
        out = np.zeros(n, dtype=float)
        out[placed] = np.asarray(values, dtype=float)[part[placed]]
        return out

    terms = evaluation.core_terms_us
    return {
        "x": x,
        "y": y,
        "core": np.arange(n),
        "address": _core_addresses(hardware),
        "partition": part,
        "population_id": pop,
        "population": names[pop],  # pop -1 picks "empty"
        "color": colors[pop],
        "line_color": np.where(placed, "#ffffff", "#c8c8c8"),
        # the same as numbers, mapped to those colours in the browser (``mesh.core_color_mappers``):
        # a drag sends every core's row both ways, and numbers travel as binary, strings not
        "layer": np.where(placed, pop, np.nan),
        "placed": placed.astype(float),
        "neurons": per_core(evaluation.neurons),
        "dendops": per_core(evaluation.neurons),  # one DendOp per neuron per step
        "synops": per_core(evaluation.synops),
        "synmem_reads": per_core(evaluation.synmem_reads),
        "t_dendops_us": per_core(terms["dendops"]),
        "t_synops_us": per_core(terms["synops"]),
        "t_synmem_us": per_core(terms["synmem"]),
    }


def mesh_values(
    hardware: Hardware, evaluation: Evaluation, color_by: str, mesh: int | str | None = None
) -> np.ndarray:
    """Per link id, what the analytic colourings show of one parallel mesh (``mesh``: its
    index), of each link's busier one (``BUSIER``) or of all together (None): its messages
    per step (``"messages"``) or the share of the step it is busy (``"utilization"``). On
    one mesh, for None, or for ``BUSIER`` under ``"utilization"`` (a link's time is its
    busier mesh's), the evaluation's own figures."""
    per = evaluation.mesh_messages
    if per.shape[1] == 1 or mesh is None:
        return (
            evaluation.link_utilization if color_by == "utilization" else evaluation.link_messages
        )
    if mesh == BUSIER:
        if color_by == "utilization":
            return evaluation.link_utilization
        return per.max(axis=1)
    messages = per[:, int(mesh)]
    if color_by == "utilization":
        us = hardware.link_table["us_per_message"]
        return messages * us / evaluation.latency_us if evaluation.latency_us > 0 else 0 * us
    return messages


def color_scale(
    evaluation: Evaluation, color_by: str = "messages", simulated: dict | None = None,
    shown: np.ndarray | None = None,
) -> float:  # fmt: skip
    """The value at the top of the link colour scale: the heaviest link's messages (or
    simulated flits) per step, 1 (busy the whole step) for a busy share, so that 100 %
    always looks the same, and a port's buffers for the fullest buffer."""
    if color_by not in COLOR_MODES:
        raise ValueError(f"color_by must be one of {', '.join(COLOR_MODES)}, not {color_by!r}")
    if color_by in ("utilization", "busy"):
        return 1.0
    if color_by in SIMULATED_MODES:
        if simulated is None:
            raise ValueError(f"colouring by {color_by} needs a simulated step's link figures")
        if color_by == "buffer":
            return float(simulated["buffer_capacity"])
        return float(simulated["flits"].max(initial=0))
    if shown is not None:
        return float(np.max(shown, initial=0.0))
    return float(evaluation.max_link_messages)


def link_geometry(hardware: Hardware) -> dict[str, np.ndarray]:
    """One row per existing link (kind >= 0): its segment and what it joins, no load.

    Router links run on the right-hand lane of their direction of travel; a core's two
    links run along the ray from its router to it, one lane each way. ``on_mesh``: a
    router (or off-chip) link rather than a core's. Built once per hardware (every
    update of a mesh asks for it): a new dict of read-only arrays.
    """
    return dict(_link_geometry(hardware))


# shared by every session: per hardware, its links' geometry (a dozen arrays of its links;
# callers get a copy of the dict); eight boards at most, each page of a board reads it
@lru_cache(maxsize=8)
def _link_geometry(hardware: Hardware) -> dict[str, np.ndarray]:
    lt = hardware.link_table
    kind = lt["kind"].astype(np.int64)
    ids = np.flatnonzero(kind >= 0)
    kind = kind[ids]
    n_router_ids = 4 * hardware.n_routers
    gw = hardware.grid_width

    x0, y0, x1, y1 = (np.zeros(ids.size) for _ in range(4))
    # router → router (and off-chip): the right-hand lane of the direction of travel
    mesh = ids < n_router_ids
    r, d = ids[mesh] // 4, ids[mesh] % 4
    vx = np.array([1.0, -1.0, 0.0, 0.0])[d]
    vy = np.array([0.0, 0.0, 1.0, -1.0])[d]
    gx, gy = (r % gw).astype(float), (r // gw).astype(float)
    ox, oy = -vy * LANE, vx * LANE
    x0[mesh], y0[mesh] = gx + GAP * vx + ox, gy + GAP * vy + oy
    x1[mesh], y1[mesh] = gx + (1 - GAP) * vx + ox, gy + (1 - GAP) * vy + oy

    # core ↔ router: along the ray from the router to the core, one lane each way
    core_link = ~mesh
    core = lt["core"][ids[core_link]]
    ct = hardware.core_table
    dx, dy = core_offsets(hardware.cores_per_router)
    ux, uy = dx[ct["slot"][core]] / CORE_RING, dy[ct["slot"][core]] / CORE_RING
    rx, ry = ct["gx"][core].astype(float), ct["gy"][core].astype(float)
    half_diag = np.sqrt(2) / 2
    t_router = ROUTER_SIZE * half_diag + 0.01
    t_core = CORE_RING - core_size(hardware.cores_per_router) * half_diag - 0.01
    outward = kind[core_link] != CORE_TO_ROUTER  # router → core travels along +u
    sign = np.where(outward, 1.0, -1.0)
    t_start = np.where(outward, t_router, t_core)
    t_end = np.where(outward, t_core, t_router)
    ox, oy = -uy * sign * CORE_LANE, ux * sign * CORE_LANE
    x0[core_link], y0[core_link] = rx + t_start * ux + ox, ry + t_start * uy + oy
    x1[core_link], y1[core_link] = rx + t_end * ux + ox, ry + t_end * uy + oy

    # what the tooltips name, as numbers (``LINK_KINDS``, ``LINK_DIRECTIONS``, the nodes of
    # ``node_address_parts``: the page looks the names up), and as text
    direction_code = np.empty(ids.size, dtype=np.int8)
    direction_code[mesh] = d
    direction_code[core_link] = np.where(outward, len(DIRECTIONS), len(DIRECTIONS) + 1)
    src_node = lt["src_router"][ids].astype(np.int32)
    dst_node = np.maximum(lt["dst_router"][ids], 0).astype(np.int32)
    core_node = (hardware.n_routers + core).astype(np.int32)
    src_node[core_link] = np.where(outward, src_node[core_link], core_node)
    dst_node[core_link] = np.where(outward, core_node, dst_node[core_link])
    addresses = _node_addresses(hardware).astype(object)
    columns = {
        "x0": x0,
        "y0": y0,
        "x1": x1,
        "y1": y1,
        "xm": (x0 + x1) / 2,
        "ym": (y0 + y1) / 2,
        # screen angle of the travel direction (y grows downwards), minus 90° for "triangle"
        "angle": np.arctan2(-(y1 - y0), x1 - x0) - np.pi / 2,
        "link": ids,
        "kind": np.asarray(LINK_KINDS, dtype=object)[kind],
        "direction": np.asarray(LINK_DIRECTIONS, dtype=object)[direction_code],
        "src": addresses[src_node],
        "dst": addresses[dst_node],
        "kind_code": kind.astype(np.int8),
        "direction_code": direction_code,
        "src_node": src_node,
        "dst_node": dst_node,
        "dash": np.where(kind == OFF_CHIP, "dashed", "solid"),
        "on_mesh": (kind == ROUTER) | (kind == OFF_CHIP),
    }
    for column in columns.values():
        column.setflags(write=False)
    return columns


def link_columns(
    hardware: Hardware,
    evaluation: Evaluation,
    *,
    vmax: float | None = None,
    color_by: str = "messages",
    simulated: dict | None = None,
    mesh: int | str | None = None,
) -> dict[str, np.ndarray]:
    """One row per existing link (kind >= 0), as a segment with its load and colour.

    ``color_by`` picks what colour and width show (``COLOR_MODES``): the analytic model's
    ``"messages"`` per step or ``"utilization"`` (share of the step the link is busy), or
    a simulated step's ``"flits"``, ``"busy"`` share or fullest ``"buffer"``, read from
    ``simulated`` (``StepResult.link_figures()``); the ``value`` column holds it. The
    simulated figures are columns too when given (``sim_flits``, ``sim_busy``,
    ``sim_buffer``), for the tooltips. ``vmax``: the value at the top of the colour scale
    (default: ``color_scale``).

    On hardware with parallel meshes (Loihi 2's two) ``mesh`` picks what the analytic
    colourings show (``mesh_values``): one mesh's copy of each link, the busier copy
    (``BUSIER``, what times the link), or all meshes together (None); ``mesh_0``,
    ``mesh_1``, … hold each mesh's messages and ``busier`` the index of the busier one, for
    the tooltips and captions.
    """
    columns = link_geometry(hardware)
    ids, on_mesh = columns["link"], columns.pop("on_mesh")
    messages = evaluation.link_messages[ids]
    utilization = evaluation.link_utilization[ids]
    per = evaluation.mesh_messages[ids]
    mesh_columns = {}
    if per.shape[1] > 1:
        mesh_columns = {f"mesh_{m}": per[:, m] for m in range(per.shape[1])}
        mesh_columns["busier"] = np.argmax(per, axis=1).astype(np.int8)
    shown = None
    sim = simulated_link_columns(simulated, ids)
    if color_by in SIMULATED_MODES:
        if simulated is None:
            raise ValueError(f"colouring by {color_by} needs a simulated step's link figures")
        value = np.maximum(sim[f"sim_{color_by}"], 0.0)
        loaded = sim["sim_flits"] > 0
    else:
        full = mesh_values(hardware, evaluation, color_by, mesh)
        value = np.asarray(full)[ids]
        if color_by == "messages" and per.shape[1] > 1 and mesh is not None:
            shown = value
        loaded = messages > 0
    if vmax is None:
        vmax = color_scale(evaluation, color_by, simulated, shown)
    relative = np.minimum(value / vmax, 1.0) if vmax > 0 else np.zeros(ids.size)
    base = np.where(on_mesh, 1.0, 0.55)
    columns.update(
        messages=messages,
        utilization=utilization,
        value=value,
        color=load_colors(value, vmax),
        width=base * np.where(loaded, 1.0 + 1.2 * relative, 0.7),
        loaded=loaded,
        **mesh_columns,
        **sim,
    )
    return columns


def link_loads_frame(hardware: Hardware, evaluation: Evaluation, simulated: dict | None = None):
    """Every existing link as a table row (a ``pandas.DataFrame``) to export: its id, kind,
    direction and ends, the analytic messages per step and utilization, and with
    ``simulated`` (``StepResult.link_figures()``) the simulated flits, busy share and
    buffer peak (empty for a link into a core)."""
    import pandas as pd

    c = link_columns(hardware, evaluation, simulated=simulated)
    frame = pd.DataFrame({
        "link": c["link"], "kind": c["kind"], "direction": c["direction"],
        "from": c["src"], "to": c["dst"], "messages_per_step": c["messages"],
        "utilization": c["utilization"],
    })  # fmt: skip
    if simulated is not None:
        frame["simulated_flits"] = c["sim_flits"].astype(np.int64)
        frame["simulated_busy"] = c["sim_busy"]
        frame["buffer_peak_flits"] = pd.array(
            np.where(c["sim_buffer"] >= 0, c["sim_buffer"], np.nan), dtype="Int64"
        )
    return frame


def simulated_link_columns(simulated: dict | None, ids: np.ndarray) -> dict[str, np.ndarray]:
    """The simulated figures of the links ``ids`` (NaN without a simulation; a buffer of -1:
    the link feeds a core, not a router)."""
    if simulated is None:
        nan = np.full(ids.size, np.nan)
        return {"sim_flits": nan, "sim_busy": nan, "sim_buffer": nan}
    flits = simulated["flits"][ids].astype(float)
    busy = simulated["busy"][ids]
    buffer = simulated["buffer"][ids].astype(float) if "buffer" in simulated else np.full(
        ids.size, -1.0
    )  # fmt: skip
    return {"sim_flits": flits, "sim_busy": busy, "sim_buffer": buffer}


def simulated_link_text(simulated: dict | None, ids: np.ndarray) -> list[str]:
    """The line a link's tooltip shows for the simulated step: the page writes it in the
    browser from the ``sim_`` columns (``mesh._SIM_TEXT``), and this says the same in
    Python (for a notebook, and as what the browser's text is checked against)."""
    if simulated is None:
        return ["not simulated yet"] * ids.size
    c = simulated_link_columns(simulated, ids)
    top = simulated.get("buffer_capacity", 0)
    return [
        f"{f:,.0f} flits, busy {b:.0%}"
        + (f", buffer peak {q:.0f} of {top} flits" if q >= 0 else "")
        for f, b, q in zip(
            c["sim_flits"].tolist(), c["sim_busy"].tolist(), c["sim_buffer"].tolist(), strict=True
        )
    ]


def bottleneck_columns(links: dict[str, np.ndarray], evaluation: Evaluation) -> dict:
    """The row of ``links`` that is ``evaluation.bottleneck_link`` (no row if there is none)."""
    rows = np.flatnonzero(links["link"] == evaluation.bottleneck_link)
    return {k: v[rows] for k, v in links.items()}


def bottleneck_core_columns(hardware: Hardware, evaluation: Evaluation) -> dict:
    """Position of ``evaluation.bottleneck_core`` (no row unless a compute term bounds the step)."""
    core = evaluation.bottleneck_core
    rows = np.array([core] if core >= 0 else [], dtype=np.int64)
    x, y = core_positions(hardware)
    return {"x": x[rows], "y": y[rows], "core": rows}


def bottleneck_text(
    hardware: Hardware, evaluation: Evaluation, network: Network | None = None
) -> str:
    """A caption for under the mesh: what bounds the step, and the heaviest link."""
    e = evaluation
    step = f"{e.latency_us:,.3f} µs per step"
    link = _heaviest_link_text(hardware, e)
    if e.bottleneck == "link" and link:
        return f"{step}, bound by the pink link: {link}."
    if e.bottleneck_core >= 0:
        part = int(np.flatnonzero(e.cores == e.bottleneck_core)[0])
        who = f" ({network.population_names[int(e.population[part])]})" if network else ""
        bound = (
            f"{step}, bound by the {TERM_LABELS.get(e.bottleneck, e.bottleneck)} of the core "
            f"outlined in pink, {core_label(hardware, e.bottleneck_core)}{who}."
        )
    else:
        bound = f"{step}, bound by {TERM_LABELS.get(e.bottleneck, e.bottleneck)}."
    if not link:
        return f"{bound} No link carries any message: every partition talks only to itself."
    return f"{bound} Heaviest link: {link}."


def link_name(hardware: Hardware, link: int) -> str:
    """A link as every place on the page names it: its kind and ``link_label``
    (``W (4,0)->(3,0)``, ``(2,1):1->(2,1)``), and on a board of several chips its chip(s)."""
    kind = LINK_KINDS[int(hardware.link_table["kind"][link])]
    chips = chip_note(hardware, link)
    return f"{kind} link {link_label(hardware, link)}" + (f" ({chips})" if chips else "")


def mesh_split_text(hardware: Hardware, e: Evaluation, link: int) -> str:
    """A link's messages per step on each parallel mesh, busier first:
    ``20,753 on mesh 1 and 16,293 on mesh 0``; empty on one mesh."""
    per = e.mesh_messages[link]
    if per.size < 2:
        return ""
    order = np.argsort(-per, kind="stable")
    return " and ".join(f"{per[m]:,.0f} on mesh {m}" for m in order.tolist())


def _heaviest_link_text(hardware: Hardware, e: Evaluation) -> str:
    i = e.bottleneck_link
    if i < 0:
        return ""
    split = mesh_split_text(hardware, e, i)
    load = (
        f"{e.link_messages[i]:,.0f} messages / step ({split}; the busier mesh times it)"
        if split
        else f"{e.link_messages[i]:,.0f} messages / step"
    )
    return f"{link_name(hardware, i)}, {load}, busy {e.link_utilization[i]:.0%} of the step"


def unchanged_text(
    hardware: Hardware, before: Evaluation, after: Evaluation, network: Network | None = None,
    *, short: bool = False,
) -> str:  # fmt: skip
    """After a change of the mapping that moved link loads but not the step's time: a
    sentence naming what still bounds the step (empty when the time moved or no link did);
    ``short``: the same in one line, for above the mesh.

    On parallel meshes the usual answer is the other mesh: a drag that lightens one mesh's
    copy of the bottleneck link leaves the link's time, its busier copy's, as it was.
    """
    if after.latency_us != before.latency_us:
        return ""
    changed = np.flatnonzero(np.any(before.mesh_messages != after.mesh_messages, axis=1))
    if changed.size == 0:
        return ""
    t = f"{after.latency_us:,.3f} µs"
    if after.bottleneck != "link" or after.bottleneck_link < 0:
        what = TERM_LABELS.get(after.bottleneck, after.bottleneck)
        if after.bottleneck_core >= 0:
            part = int(np.flatnonzero(after.cores == after.bottleneck_core)[0])
            who = f" ({network.population_names[int(after.population[part])]})" if network else ""
            what = f"the {what} of core {core_label(hardware, after.bottleneck_core)}{who}"
        if short:
            return f"Latency unchanged at {t}: {what} bounds the step, not a link."
        return (
            f"The step stays at {t}: the change moved {changed.size:,} link loads, but "
            f"{what} bounds the step, not a link."
        )
    b = after.bottleneck_link
    per_after, per_before = after.mesh_messages[b], before.mesh_messages[b]
    busier = int(np.argmax(per_after))
    name, label = link_name(hardware, b), link_label(hardware, b)
    if per_after.size > 1 and np.any(per_after != per_before):
        was, now = before.link_messages[b], after.link_messages[b]
        lighter = [m for m in range(per_after.size) if per_after[m] < per_before[m]]
        moved = "lighter" if now < was else "heavier" if now > was else "changed"
        other = (
            "the other mesh's copy of this link"
            if lighter and busier not in lighter
            else f"its copy on mesh {busier}"
        )
        if short:
            return (
                f"Latency unchanged at {t}: {other.replace('this link', label)} (mesh "
                f"{busier}) still carries {per_after[busier]:,.0f} messages / step."
            )
        return (
            f"The step stays at {t}: the pink {name} got {moved} ({was:,.0f} → {now:,.0f} "
            f"messages / step over both meshes), but {other} (mesh {busier}) still carries "
            f"{per_after[busier]:,.0f}, and a link's time is its busier mesh's."
        )
    if b == before.bottleneck_link:
        on = f" on mesh {busier}" if per_after.size > 1 else ""
        if short:
            return (
                f"Latency unchanged at {t}: the pink link {label} still carries "
                f"{per_after[busier]:,.0f} messages / step{on}."
            )
        return (
            f"The step stays at {t}: the change moved {changed.size:,} link loads, but not "
            f"the pink {name}, which still carries {per_after[busier]:,.0f} messages / step"
            f"{on} and bounds the step."
        )
    if short:
        return f"Latency unchanged at {t}: the pink link {label} now bounds it, as busy."
    return (
        f"The step stays at {t}: the pink {name} now bounds it, as busy as the link that "
        "bounded it before."
    )


def chip_view(hardware: Hardware, chip: int | None = None) -> tuple[float, float, float, float]:
    """The x and y range ``(x0, x1, y0, y1)`` of a mesh figure showing chip ``chip`` whole
    in a frame shaped like the whole board's (so routers stay square), centred on the chip
    as far as the board allows (the view never leaves it); None: the whole board, as the
    figure first shows it. y0 is the bottom (rows grow downwards)."""
    pad = MESH_PAD
    if chip is None:
        return -pad, hardware.grid_width - 1 + pad, hardware.grid_height - 1 + pad, -pad
    if not 0 <= chip < hardware.n_chips:
        raise ValueError(f"chip {chip} of {hardware.n_chips}")
    w, h = hardware.width, hardware.height
    aspect = (hardware.grid_width - 1 + 2 * pad) / (hardware.grid_height - 1 + 2 * pad)
    span_y = max(h - 1 + 2 * pad, (w - 1 + 2 * pad) / aspect)
    span_x = span_y * aspect
    cx = (chip % hardware.chips_x) * w + (w - 1) / 2
    cy = (chip // hardware.chips_x) * h + (h - 1) / 2
    lo_x, hi_x = -pad, hardware.grid_width - 1 + pad
    lo_y, hi_y = -pad, hardware.grid_height - 1 + pad
    x0 = float(np.clip(cx - span_x / 2, lo_x, max(lo_x, hi_x - span_x)))
    y1 = float(np.clip(cy - span_y / 2, lo_y, max(lo_y, hi_y - span_y)))
    return x0, x0 + span_x, y1 + span_y, y1


def chip_loads(hardware: Hardware, evaluation: Evaluation) -> np.ndarray:
    """Per chip: the most messages per step on a link leaving one of its routers or cores."""
    lt = hardware.link_table
    exists = lt["kind"] >= 0
    chip = hardware.router_table["chip"][lt["src_router"][exists]]
    out = np.zeros(hardware.n_chips)
    np.maximum.at(out, chip, evaluation.link_messages[exists])
    return out


def chip_columns(hardware: Hardware) -> dict[str, np.ndarray]:
    """One rectangle per chip around its routers."""
    c = np.arange(hardware.n_chips)
    cx, cy = c % hardware.chips_x, c // hardware.chips_x
    w, h = hardware.width, hardware.height
    return {
        "x": cx * w + (w - 1) / 2,
        "y": cy * h + (h - 1) / 2,
        "width": np.full(c.size, float(w)),
        "height": np.full(c.size, float(h)),
        "label_x": cx * w - 0.45,
        "label_y": cy * h - 0.45,
        "label": np.array([f"chip {i}" for i in c]),
        "chip": c,
    }
