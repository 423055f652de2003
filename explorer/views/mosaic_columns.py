"""The Mosaic tab's data: what ``MosaicView`` draws, as numpy columns and tables.

``compute_mosaic`` runs the engine (``engine.mosaic``) on the tab's inputs — a Mosaic
preset resized to R × C Neuron Tiles, a random network of a target sparsity profile or a
network spec, a placer, shared-path or unicast routing — and the column builders
(``tile_columns``, ``tree_segments``, ``profile_columns``, ``removal_rows``) turn its
``MosaicResult`` into what the tab's plots and table show, tested without a browser.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache

import numpy as np
import pandas as pd

from engine.errors import SpecError
from engine.hardware import Hardware, load_hardware, preset_names
from engine.mapping.placement import placers
from engine.model.network import Network
from engine.mosaic import (
    MosaicGrid,
    Profile,
    RoutingMemory,
    nt_of_neurons,
    profile_of,
    removals,
    routing_memory,
)
from engine.mosaic.grid import NT, RT0, RT1, TILE_KINDS
from engine.mosaic.profile import parse_target, random_network, sequential_nt
from engine.pipeline import build_mapping
from engine.specs import demo_path, load_network_spec
from explorer.access import ClientAccess
from explorer.views.mesh_columns import interpolate_palette

__all__ = [
    "DEFAULT_SPEC",
    "DEFAULT_TARGET",
    "SOURCES",
    "MosaicResult",
    "Outbound",
    "compute_mosaic",
    "mosaic_presets",
    "occupancy_colors",
    "outbound",
    "profile_columns",
    "removal_rows",
    "tile_columns",
    "tree_segments",
]

DEFAULT_PRESET = "mosaic-8x8"
# maps on 8 × 8 NTs (packed-row, any seed 0–9) with a few Routing Tiles above 80 %; unicast
# routing makes some overflow (two with seed 0). Sparser to neighbours than to diagonals:
# with 64-input NT crossbars, denser neighbours fill the NTs' inputs before any RT's
DEFAULT_TARGET = "0.5,0.01,0,0.022,0,0.002"
DEFAULT_SPEC = "mlp:widths=256-256-10,density=0.05"
DEFAULT_PLACER = "packed-row"
SOURCES = ("random of a profile", "network spec")
ROUTINGS = ("shared-path", "unicast")
MAX_SIDE = 12  # NTs a side: a 12 × 12 random network takes about a second
MAX_REMOVALS = 500  # rows of the removals table sent to the page
_STEP = {"E": (0, 1), "W": (0, -1), "S": (1, 0), "N": (-1, 0)}  # (d row, d col)

# occupancy: light to dark blue while a tile fits, orange to brown beyond its rows
FIT_ANCHORS = ("#f5f7fa", "#c6dbef", "#6baed6", "#2171b5", "#08306b")
OVER_ANCHORS = ("#fdae6b", "#f16913", "#d94801", "#a63603", "#7f2704")
PALETTE_SIZE = 256
OVER_LINE = "#d7191c"  # the outline of a tile that needs more rows than it has
TREE_COLOR = "#059669"  # the clicked NT's tree and its destinations
NT_LINE = "#4b5563"
RT_LINE = "#b8c0cc"
TARGET_COLOR = "#e6550d"
NETWORK_COLOR = "#2171b5"

# tile glyphs, in tile pitches: NTs large and rounded, RT0 squares, RT1 diamonds
NT_SIZE, RT0_SIZE, RT1_SIZE = 0.94, 0.6, 0.5


# one entry (no arguments), shared by every session: the presets do not change while the
# server runs, and reading them all for each page would load every preset file
@cache
def mosaic_presets() -> tuple[str, ...]:
    """The hardware presets that are Mosaics (their ``tiles`` are set)."""
    return tuple(n for n in preset_names() if load_hardware(n).tiles is not None)


def placer_names() -> list[str]:
    """Placers for any network: the registry's, without the linear-layer patterns."""
    return [n for n in placers if not placers.has_tag(n, "pattern")]


# ------------------------------------------------------------------ computing
@dataclass(frozen=True, eq=False)
class MosaicResult:
    """One network placed on one Mosaic, and its routing memory under one routing."""

    hardware: Hardware
    network: Network  # synapses explicit
    nt_of: np.ndarray  # per neuron its NT (-1: a spike source)
    placer: str
    memory: RoutingMemory
    other_entries: int  # routing entries under the other routing
    profile: Profile
    target: tuple[float, ...] | None  # the profile a random network was drawn for

    @property
    def grid(self) -> MosaicGrid:
        return self.memory.grid

    @property
    def routing(self) -> str:
        return ROUTINGS[0] if self.memory.shared else ROUTINGS[1]


def mosaic_hardware(preset: str, rows: int, columns: int) -> Hardware:
    """Mosaic preset ``preset`` with ``rows`` × ``columns`` Neuron Tiles."""
    if preset not in mosaic_presets():
        raise SpecError(
            f"{preset!r} is not a Mosaic preset; the Mosaics are {', '.join(mosaic_presets())}"
        )
    if not (1 <= rows <= MAX_SIDE and 1 <= columns <= MAX_SIDE):
        raise SpecError(
            f"the Mosaic tab draws 1 to {MAX_SIDE} Neuron Tiles a side, not {rows}x{columns}"
        )
    hardware = load_hardware(preset)
    if (hardware.height, hardware.width) == (rows, columns):
        return hardware
    return load_hardware(f"{preset}@{rows}x{columns}")


def compute_mosaic(
    *,
    preset: str = DEFAULT_PRESET,
    rows: int = 8,
    columns: int = 8,
    source: str = SOURCES[0],
    target: str = DEFAULT_TARGET,
    seed: int = 0,
    spec: str = DEFAULT_SPEC,
    placer: str = DEFAULT_PLACER,
    routing: str = ROUTINGS[0],
    access: ClientAccess | None = None,
) -> MosaicResult:
    """Build the network, partition it ``sequential`` (one partition an NT), place it with
    ``placer`` and count every tile's routing memory. ``source``: a random network of the
    profile ``target`` over all the NTs' neurons (seed ``seed``), or the network ``spec``
    as far as ``access`` lets a client name it. ``seed`` seeds a random placer too. Raises
    ``MeshScopeError`` with a message for the user."""
    access = access or ClientAccess()
    if routing not in ROUTINGS:
        raise SpecError(f"routing is {' or '.join(ROUTINGS)}, not {routing!r}")
    placer = access.placer(placer)
    hardware = mosaic_hardware(access.hardware(preset), rows, columns)
    grid = MosaicGrid(hardware)
    wanted = None
    if source == SOURCES[0]:
        wanted = parse_target(target)
        nt = sequential_nt(grid.n_nt * hardware.limits.neurons, hardware)
        network = random_network(hardware, nt, wanted, seed=seed)
    elif source == SOURCES[1]:
        name = access.network(spec)
        network = load_network_spec(demo_path(name))  # a demo's name: the shipped file
        access.check_network(network, name)
    else:
        raise SpecError(f"the network is {' or '.join(SOURCES)}, not {source!r}")
    if network.projections:
        network = network.explicit(why="routing memory counts synapses one by one")
    mapped = build_mapping(network, hardware, partition="sequential", placement=placer, seed=seed)
    nt_of = nt_of_neurons(mapped.network, hardware, mapped.mapping)
    shared = routing == ROUTINGS[0]
    memory = routing_memory(mapped.network, hardware, nt_of, shared=shared)
    other = routing_memory(mapped.network, hardware, nt_of, shared=not shared)
    return MosaicResult(
        hardware, mapped.network, nt_of, placer, memory, other.routing_entries,
        profile_of(hardware, nt_of, mapped.network), wanted,
    )  # fmt: skip


@dataclass(frozen=True)
class Outbound:
    """What the neurons of one NT send: their destination NTs, the union of their
    shared-path trees (RT → outputs) and the routing entries they program."""

    nt: int
    neurons: int
    destinations: tuple[int, ...]
    tree: dict
    entries: int  # under the result's routing
    other_entries: int  # … and under the other one


def outbound(result: MosaicResult, nt: int) -> Outbound:
    """The outbound routing of NT ``nt``: the union tree over the destinations of its
    neurons, and the entries each neuron's own tree (shared) or routes (unicast) take."""
    grid, net, nt_of = result.grid, result.network, result.nt_of
    own = np.flatnonzero(nt_of == nt)
    dest_sets = []
    for n in own:
        d = nt_of[net.indices[net.indptr[n] : net.indptr[n + 1]]]
        dest_sets.append(sorted(set(d[(d >= 0) & (d != nt)].tolist())))
    everywhere = sorted(set().union(*dest_sets)) if dest_sets else []
    shared = sum(sum(len(o) for o in grid.tree(nt, d).values()) for d in dest_sets)
    unicast = sum(len(grid.route(nt, b)) for d in dest_sets for b in d)
    entries, other = (shared, unicast) if result.memory.shared else (unicast, shared)
    return Outbound(
        int(nt), int(own.size), tuple(everywhere), grid.tree(nt, everywhere), entries, other
    )


# ------------------------------------------------------------------ columns
def occupancy_colors(high: float) -> list[str]:
    """The occupancy palette for a scale 0 … ``high`` (≥ 1): blues up to 1, oranges beyond."""
    n_fit = min(PALETTE_SIZE, int(PALETTE_SIZE / high) + 1)
    fit = interpolate_palette(FIT_ANCHORS, n_fit)
    over = interpolate_palette(OVER_ANCHORS, PALETTE_SIZE - n_fit) if n_fit < PALETTE_SIZE else ()
    return [*fit, *over]


def _dark(color: str) -> bool:
    r, g, b = (int(color[i : i + 2], 16) for i in (1, 3, 5))
    return 0.299 * r + 0.587 * g + 0.114 * b < 140


def tile_columns(result: MosaicResult) -> tuple[dict, float, list[str]]:
    """One row per tile, row-major (a row's index is the engine's flat tile id): where,
    what, rows needed against rows there, entries, occupancy and how to draw it; and the
    colour scale's top and palette."""
    memory, grid = result.memory, result.grid
    r, c = (a.ravel() for a in np.indices(grid.shape))
    kind = grid.kind.ravel()
    occupancy = memory.occupancy.ravel().astype(float)
    over = memory.rows.ravel() > memory.capacity.ravel()
    high = max(1.0, float(occupancy.max(initial=0.0)))
    palette = occupancy_colors(high)
    index = np.clip((occupancy / high * len(palette)).astype(int), 0, len(palette) - 1)
    fill = [palette[i] for i in index]
    nt = np.full(kind.size, -1, dtype=np.int64)
    nt[grid.nt_tile_id] = np.arange(grid.n_nt)
    columns = {
        "x": c, "y": r, "row": r, "col": c,
        "tile": [f"({a}, {b})" for a, b in zip(r.tolist(), c.tolist(), strict=True)],
        "kind": [TILE_KINDS[k] for k in kind], "nt": nt,
        "label": [str(n) if n >= 0 else "" for n in nt.tolist()],
        "rows": memory.rows.ravel(), "capacity": memory.capacity.ravel(),
        "entries": memory.entries.ravel(), "occupancy": occupancy, "fill": fill,
        "text_color": ["#ffffff" if _dark(f) else "#1f2933" for f in fill],
        "line_color": np.where(over, OVER_LINE, np.where(kind == NT, NT_LINE, RT_LINE)).tolist(),
        "line_width": np.where(over, 3.0, np.where(kind == NT, 1.2, 0.8)),
        "size": np.select([kind == NT, kind == RT0], [NT_SIZE, RT0_SIZE], RT1_SIZE),
        "angle": np.where(kind == RT1, math.pi / 4, 0.0),
    }  # fmt: skip
    return columns, high, palette


def tree_segments(grid: MosaicGrid, nt: int, tree: dict) -> dict:
    """Arrows between tile centres for a tree of NT ``nt``: from the NT into each RT
    beside it ("from NT"), then one per RT output ("out") to the next tile."""
    r0, c0 = (int(v) for v in grid.nt_tile(nt))
    cols = {"x0": [], "y0": [], "x1": [], "y1": [], "part": []}

    def add(r, c, r1, c1, part):
        for key, v in zip(("y0", "x0", "y1", "x1", "part"), (r, c, r1, c1, part), strict=True):
            cols[key].append(v)

    for (r, c), outputs in tree.items():
        if abs(r - r0) + abs(c - c0) == 1:  # routes leave the NT through the RT0s beside it
            add(r0, c0, r, c, "from NT")
        for d in outputs:
            dr, dc = _STEP[d]
            add(r, c, r + dr, c + dc, "out")
    return cols


def profile_columns(result: MosaicResult) -> tuple[dict, dict]:
    """P(θ) by hop distance, the distances that have neuron pairs only (0 and odd), up to
    the first one past the last with a connection or a target: the network's p_d,
    connections and pairs; and the target's p̂_d (empty without one)."""
    prof = result.profile
    wanted = np.zeros(prof.pairs.size)
    if result.target is not None:
        t = np.asarray(result.target, dtype=float)[: prof.pairs.size]
        wanted[: t.size] = t
    hops = np.flatnonzero(prof.pairs > 0)
    used = np.flatnonzero((prof.p[hops] > 0) | (wanted[hops] > 0))
    hops = hops[: (used[-1] + 2 if used.size else 1)]
    p = prof.p[hops]
    floor = _log_floor(p, result.target)
    network = {
        "d": [str(h) for h in hops], "hop": hops, "p": p,
        "top": np.where(p > 0, p, floor), "bottom": np.full(hops.size, floor),
        "connections": prof.connections[hops], "pairs": prof.pairs[hops],
    }  # fmt: skip
    if result.target is None:
        return network, {"d": [], "target": [], "top": [], "bottom": []}
    w = wanted[hops]
    target = {
        "d": network["d"], "target": w, "top": np.where(w > 0, w, floor),
        "bottom": np.full(hops.size, floor),
    }  # fmt: skip
    return network, target


def _log_floor(p: np.ndarray, target) -> float:
    """The bottom of the log axis: a decade below the smallest density shown."""
    values = [float(v) for v in p if v > 0] + [float(v) for v in (target or ()) if v > 0]
    low = min(values, default=0.01)
    return 10.0 ** (math.floor(math.log10(low)) - 1)


def removal_rows(result: MosaicResult, limit: int = MAX_REMOVALS) -> tuple[pd.DataFrame, int]:
    """The engine's removals, one row per neuron whose connections to remove (at most
    ``limit``), and how many there are in all."""
    rows = [
        {"tile": f"({t['tile'][0]}, {t['tile'][1]})", "kind": subscript(t["kind"]),
         "excess": t["excess"],
         "neuron": r["neuron"], "to NTs": ", ".join(str(b) for b in r["to_nt"]),
         "synapses": r["synapses"]}
        for t in removals(result.memory) for r in t["remove"]
    ]  # fmt: skip
    columns = ["tile", "kind", "excess", "neuron", "to NTs", "synapses"]
    return pd.DataFrame(rows[:limit], columns=columns), len(rows)


def subscript(text: str) -> str:
    return text.replace("RT0", "RT₀").replace("RT1", "RT₁")


# ------------------------------------------------------------------ the view
def tree_segments_empty() -> dict:
    return {"x0": [], "y0": [], "x1": [], "y1": [], "part": []}


def removal_rows_empty() -> pd.DataFrame:
    return pd.DataFrame(
        {"tile": pd.Series([], dtype="object"), "kind": pd.Series([], dtype="object"),
         "excess": pd.Series([], dtype="int64"), "neuron": pd.Series([], dtype="int64"),
         "to NTs": pd.Series([], dtype="object"), "synapses": pd.Series([], dtype="int64")}
    )  # fmt: skip
