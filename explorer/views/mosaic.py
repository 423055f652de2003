"""The Mosaic tab: does a network fit a Mosaic's routing memory, and where not (the Mosaic
routing paper, seed 003: Figs. 1–2).

Choose a Mosaic (a preset with a ``[mosaic]`` table, resized to R × C Neuron Tiles if
wished), a network — a random one of a target sparsity profile P̂, or any network spec the
session may load — a placer (neurons partitioned ``sequential``, one partition an NT) and
shared-path or unicast routing. ``compute_mosaic`` runs the engine (``engine.mosaic``);
``MosaicView`` draws:

* the tile grid (Fig. 2c): every tile at its (column, row), row 0 on top, coloured by its
  occupancy — input rows needed over rows there — on one scale, blue while it fits and
  orange beyond, overflowing tiles outlined in red. Neuron Tiles are the large rounded
  squares, RT₀ the small squares, RT₁ (the turning tiles) diamonds;
* a click on an NT: the union of its neurons' shared-path trees (``MosaicGrid.tree``) as
  arrows between tile centres, its destinations outlined, and what it costs;
* P(θ), the network's connection density per hop distance beside the target's;
* whether it fits, the largest crossbars it needs, and when it does not, what to remove
  (``engine.mosaic.memory.removals``).

Bad input (an unparsable profile, a network that does not fit, an unknown spec) is a
notification with the engine's message, and the drawing stays as it was. An 8 × 8 Mosaic
of 1,024 neurons computes in about 0.15 s (12 × 12, the largest offered: about 1 s), so the
view computes on the document's thread.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache
from html import escape

import numpy as np
import pandas as pd
import panel as pn
import param
from bokeh.core.properties import value
from bokeh.models import (
    Arrow,
    BasicTicker,
    CDSView,
    ColumnDataSource,
    FactorRange,
    HoverTool,
    IndexFilter,
    Legend,
    LegendItem,
    LinearColorMapper,
    NumeralTickFormatter,
    Range1d,
    TapTool,
    VeeHead,
)
from bokeh.plotting import figure
from bokeh.transform import dodge

from engine.errors import MeshScopeError, SpecError
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
from explorer.state import ExplorerState
from explorer.views._page import FONT, LiveHTML, in_document, notify_error, on_page, style_figure
from explorer.views.mesh_columns import interpolate_palette

__all__ = [
    "MosaicResult",
    "MosaicView",
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
        {"tile": f"({t['tile'][0]}, {t['tile'][1]})", "kind": _subscript(t["kind"]),
         "excess": t["excess"],
         "neuron": r["neuron"], "to NTs": ", ".join(str(b) for b in r["to_nt"]),
         "synapses": r["synapses"]}
        for t in removals(result.memory) for r in t["remove"]
    ]  # fmt: skip
    columns = ["tile", "kind", "excess", "neuron", "to NTs", "synapses"]
    return pd.DataFrame(rows[:limit], columns=columns), len(rows)


def _subscript(text: str) -> str:
    return text.replace("RT0", "RT₀").replace("RT1", "RT₁")


# ------------------------------------------------------------------ the view
class MosaicView(pn.viewable.Viewer):
    """Check whether a network fits a Mosaic's routing memory; see why, tile by tile."""

    state = param.ClassSelector(class_=ExplorerState, default=None, allow_None=True,
                                doc="the session (what its client may name)")  # fmt: skip
    preset = param.Selector(default=DEFAULT_PRESET, objects=[DEFAULT_PRESET])
    rows = param.Integer(default=8, bounds=(1, MAX_SIDE), doc="Neuron Tiles down")
    columns = param.Integer(default=8, bounds=(1, MAX_SIDE), doc="Neuron Tiles across")
    source = param.Selector(default=SOURCES[0], objects=list(SOURCES))
    target = param.String(default=DEFAULT_TARGET, doc="p̂0,p̂1,… by hop distance")
    seed = param.Integer(default=0, bounds=(0, None))
    spec = param.String(default=DEFAULT_SPEC)
    placer = param.Selector(default=DEFAULT_PLACER, objects=[DEFAULT_PLACER])
    routing = param.Selector(default=ROUTINGS[0], objects=list(ROUTINGS))
    selected_nt = param.Integer(default=None, allow_None=True, doc="the clicked NT")
    error = param.String(default="", doc="why the last input was refused ('' if it was not)")

    _INPUTS = ("preset", "rows", "columns", "source", "target", "seed", "spec", "placer",
               "routing")  # fmt: skip

    def __init__(self, **params):
        super().__init__(**params)
        self.param.preset.objects = list(mosaic_presets())
        self.param.placer.objects = placer_names()
        self.result: MosaicResult | None = None
        self.outbound: Outbound | None = None
        self._drawn: tuple | None = None  # the inputs of the result drawn
        self._shape: tuple[int, int] | None = None
        self.tiles = ColumnDataSource(name="mosaic-tiles")
        self.tree = ColumnDataSource(name="mosaic-tree", data=tree_segments_empty())
        self.ends = ColumnDataSource(name="mosaic-ends", data={"x": [], "y": [], "width": []})
        self.profile_source = ColumnDataSource(name="mosaic-profile")
        self.target_source = ColumnDataSource(name="mosaic-target")
        self._mapper = LinearColorMapper(palette=occupancy_colors(1.0), low=0, high=1)
        self.summary = LiveHTML("", css=_CSS, div_params={"width": 900}, margin=(4, 10))
        self.tree_text = LiveHTML("", css=_CSS, div_params={"width": 400}, margin=(4, 10))
        self.profile_note = LiveHTML("", css=_CSS, div_params={"width": 400}, margin=(0, 10))
        self.removals_note = LiveHTML(
            "", css=_CSS, div_params={"width": 900}, margin=(8, 10, 0, 10)
        )
        self.table = pn.widgets.Tabulator(
            removal_rows_empty(), disabled=True, show_index=False, height=260, width=640,
            layout="fit_data_stretch", pagination=None,
        )  # fmt: skip
        # the table joins the page when there is something to remove (a Tabulator made
        # visible inside a tab shown later draws no rows)
        self.removals = pn.Column(margin=(0, 10))
        self.grid_figure = self._grid_figure()
        self.profile_figure = self._profile_figure()
        self._build_widgets()
        self.tiles.selected.on_change("indices", self._on_tap)
        self.param.watch(self._on_preset, ["preset"])
        self.param.watch(self._on_inputs, list(self._INPUTS), precedence=1)  # after the preset's
        self.param.watch(self._show_source, ["source"])
        self._show_source()
        self.update()

    # ------------------------------------------------------------ inputs
    def _inputs(self) -> tuple:
        return tuple(getattr(self, name) for name in self._INPUTS)

    def _on_preset(self, event) -> None:
        hardware = load_hardware(event.new)
        self.param.update(rows=hardware.height, columns=hardware.width)

    @on_page
    def _on_inputs(self, *events) -> None:
        self.update()

    def update(self) -> None:
        """Compute and draw what the inputs say; a ``MeshScopeError`` is a notification and
        the drawing stays as it was."""
        inputs = self._inputs()
        if inputs == self._drawn:  # back to what is drawn
            self.error = ""
            return
        access = self.state.access if self.state is not None else ClientAccess()
        try:
            result = compute_mosaic(**dict(zip(self._INPUTS, inputs, strict=True)), access=access)
        except MeshScopeError as e:
            self.error = " ".join(str(e).split())
            notify_error(self.error)
            return
        self.error = ""
        self._drawn = inputs
        with pn.io.hold():
            self.show(result)

    def show(self, result: MosaicResult) -> None:
        """Draw ``result``: the grid, P(θ), the summary and the removals; the clicked NT's
        tree again if that NT is still there."""
        self.result = result
        columns, high, palette = tile_columns(result)
        if self._shape != result.grid.shape:
            self.tiles.selected.indices = []
            self.selected_nt = None
            self._resize(result.grid.shape)
            self._views(columns["kind"])
        self.tiles.data = columns
        self._mapper.update(palette=palette, low=0.0, high=high)
        network, target = profile_columns(result)
        self.profile_source.data = network
        self.target_source.data = target
        self.profile_figure.x_range.factors = network["d"]
        self.profile_figure.y_range.start = float(network["bottom"][0])
        self._target_legend.visible = result.target is not None
        self.profile_note.object = _profile_note(result)
        self.summary.object = _summary(result)
        self._show_removals(result)
        self.select_nt(self.selected_nt)

    def _show_removals(self, result: MosaicResult) -> None:
        if result.memory.mappable:
            self.removals.objects = []
            self.table.value = removal_rows_empty()
            self.removals_note.object = ""
            return
        frame, total = removal_rows(result)
        self.table.param.update(value=frame, height=min(260, 36 + 30 * len(frame)))
        if not self.removals.objects:
            self.removals.objects = [self.table]
        shown = f" (the first {len(frame):,} listed)" if total > len(frame) else ""
        self.removals_note.object = (
            f"<div class='mosaic-note' data-testid='mosaic-removals'><b>To make it fit</b>, "
            f"remove the connections of {total:,} (neuron, tile) rows{shown}: per overflowing "
            "tile, its excess rows, the neurons whose connections free them with the fewest "
            "synapses, the NTs to drop them towards, and the synapses that costs.</div>"
        )

    # ------------------------------------------------------------ clicking an NT
    def _on_tap(self, attr, old, new) -> None:
        nts = self.tiles.data.get("nt", [])
        picked = [int(nts[i]) for i in new if 0 <= i < len(nts) and nts[i] >= 0]
        nt = picked[-1] if picked else None
        if nt != self.selected_nt:
            in_document(self.tiles, self.select_nt, nt)

    def select_nt(self, nt: int | None) -> None:
        """Draw the outbound shared-path tree of NT ``nt`` (None: none)."""
        result = self.result
        if result is None or nt is None or not 0 <= nt < result.grid.n_nt:
            self.selected_nt, self.outbound = None, None
            self.tree.data = tree_segments_empty()
            self.ends.data = {"x": [], "y": [], "width": []}
            self.tree_text.object = _TREE_HINT
            return
        self.selected_nt = int(nt)
        out = outbound(result, nt)
        self.outbound = out
        grid = result.grid
        self.tree.data = tree_segments(grid, nt, out.tree)
        ends = [nt, *out.destinations]
        r, c = grid.nt_tile(np.array(ends, dtype=np.int64))
        self.ends.data = {"x": c, "y": r, "width": [4.0] + [2.5] * len(out.destinations)}
        self.tree_text.object = _tree_text(result, out)

    # ------------------------------------------------------------ drawing
    def _resize(self, shape: tuple[int, int]) -> None:
        self._shape = shape
        rows, cols = shape
        px = float(np.clip(470 / max(rows, cols), 14, 44))
        p = self.grid_figure
        p.x_range.update(start=-0.6, end=cols - 0.4)
        p.y_range.update(start=rows - 0.4, end=-0.6)
        p.frame_width, p.frame_height = int(round(px * cols)), int(round(px * rows))
        self._labels.glyph.text_font_size = f"{max(7, int(px * 0.36))}px"

    def _views(self, kinds) -> None:
        kind = np.asarray([TILE_KINDS.index(k) for k in kinds])
        for renderer, which in self._kind_renderers:
            renderer.view = CDSView(filter=IndexFilter(np.flatnonzero(kind == which).tolist()))
        self._labels.view = CDSView(filter=IndexFilter(np.flatnonzero(kind == NT).tolist()))

    def _grid_figure(self):
        # the toolbar below: above, the title ran under it and its tools folded into "⋮"
        p = figure(
            title="Routing memory per tile: input rows needed / rows there", width=None,
            height=None, frame_width=470, frame_height=470, x_range=Range1d(-0.6, 16.6),
            y_range=Range1d(16.6, -0.6), tools="tap,save", toolbar_location="below",
            background_fill_color="#ffffff", border_fill_color="white", name="mosaic-grid",
        )  # fmt: skip
        style_figure(p, "", "")
        p.xaxis.visible = p.yaxis.visible = False
        p.xgrid.visible = p.ygrid.visible = False
        common = {
            "source": self.tiles, "width": "size", "height": "size", "angle": "angle",
            "fill_color": "fill", "line_color": "line_color", "line_width": "line_width",
            "nonselection_fill_alpha": 1.0, "nonselection_line_alpha": 1.0,
            "selection_fill_alpha": 1.0, "selection_line_alpha": 1.0,
        }  # fmt: skip
        rt1 = p.rect("x", "y", name="mosaic-rt1", **common)
        rt0 = p.rect("x", "y", name="mosaic-rt0", **common)
        nts = p.rect("x", "y", name="mosaic-nt", border_radius=6, **common)
        self._kind_renderers = [(nts, NT), (rt0, RT0), (rt1, RT1)]
        self._labels = p.text(
            "x", "y", text="label", source=self.tiles, text_align="center",
            text_baseline="middle", text_color="text_color", text_font_size="10px",
            text_font=value(FONT), nonselection_text_alpha=1.0,
        )  # fmt: skip
        p.rect("x", "y", width=NT_SIZE + 0.08, height=NT_SIZE + 0.08, source=self.ends,
               fill_color=None, line_color=TREE_COLOR, line_width="width",
               border_radius=7, name="mosaic-ends")  # fmt: skip
        p.add_layout(Arrow(
            end=VeeHead(size=7, fill_color=TREE_COLOR, line_color=TREE_COLOR),
            x_start="x0", y_start="y0", x_end="x1", y_end="y1", source=self.tree,
            line_color=TREE_COLOR, line_width=2.5, name="mosaic-tree-arrows",
        ))  # fmt: skip
        p.select_one(TapTool).renderers = [nts]
        tips = [("tile (row, col)", "@tile"), ("kind", "@kind"), ("NT", "@label"),
                ("input rows", "@rows / @capacity"), ("occupancy", "@occupancy{0%}"),
                ("entries", "@entries")]  # fmt: skip
        p.add_tools(HoverTool(renderers=[nts, rt0, rt1], tooltips=tips))
        p.add_layout(_occupancy_bar(self._mapper), "right")
        p.add_layout(self._kind_legend(p), "below")
        return p

    def _kind_legend(self, p) -> Legend:
        """What the shapes and outlines mean (glyphs on a point far outside the ranges: drawn
        in the legend only; markers, as a legend draws a rect without its angle)."""

        def blank():
            return ColumnDataSource({"x": [-100], "y": [-100]})

        def shape(marker, size, line_color=RT_LINE, width=0.8):
            return p.scatter(
                "x", "y", source=blank(), marker=marker, size=size, fill_color="#c6dbef",
                line_color=line_color, line_width=width,
            )  # fmt: skip

        nt = p.rect("x", "y", source=blank(), width=1, height=1, border_radius=3,
                    fill_color="#c6dbef", line_color=NT_LINE, line_width=1.2)  # fmt: skip
        tree = p.segment("x", "y", "x", "y", source=blank(), line_color=TREE_COLOR,
                         line_width=2.5)  # fmt: skip
        items = [
            LegendItem(label="Neuron Tile (NT)", renderers=[nt]),
            LegendItem(label="RT₀: passes straight", renderers=[shape("square", 10)]),
            LegendItem(label="RT₁: may turn", renderers=[shape("diamond", 13)]),
            LegendItem(label="over capacity", renderers=[shape("square", 13, OVER_LINE, 3)]),
            LegendItem(label="clicked NT's tree", renderers=[tree]),
        ]  # fmt: skip
        return Legend(
            items=items, orientation="horizontal", nrows=2, label_text_font_size="12px",
            label_text_font=FONT, border_line_color=None, glyph_width=20, glyph_height=20,
            spacing=6, margin=4, padding=4,
        )  # fmt: skip

    def _profile_figure(self):
        p = figure(
            title="P(θ): connection density by hop distance", width=400, height=270,
            x_range=FactorRange(factors=["0"]), y_range=Range1d(0.001, 1.2), y_axis_type="log",
            tools="save", toolbar_location=None, name="mosaic-profile-figure",
        )  # fmt: skip
        style_figure(p, "hop distance H (RTs passed)", "density p_d")
        p.xgrid.visible = False
        bars = p.vbar(
            x=dodge("d", -0.17, range=p.x_range), top="top", bottom="bottom", width=0.32,
            source=self.profile_source, fill_color=NETWORK_COLOR, line_color=None,
            legend_label="this network", name="mosaic-profile",
        )  # fmt: skip
        target = p.vbar(
            x=dodge("d", 0.17, range=p.x_range), top="top", bottom="bottom", width=0.32,
            source=self.target_source, fill_color=None, line_color=TARGET_COLOR,
            line_width=2, line_dash="dashed", name="mosaic-target",
        )  # fmt: skip
        self._target_legend = LegendItem(label="target P̂", renderers=[target])
        p.legend.items.append(self._target_legend)
        p.legend.location = "top_right"
        p.legend.label_text_font_size = "12px"
        p.legend.background_fill_alpha = 0.85
        p.legend.border_line_color = None
        p.add_tools(HoverTool(renderers=[bars], tooltips=[
            ("hop distance", "@d"), ("density", "@p{0.0000}"),
            ("connections / pairs", "@connections / @pairs")]))  # fmt: skip
        p.add_tools(HoverTool(renderers=[target], tooltips=[
            ("hop distance", "@d"), ("target", "@target{0.0000}")]))  # fmt: skip
        return p

    # ------------------------------------------------------------ widgets
    def _build_widgets(self) -> None:
        m = (5, 5)
        self._preset = pn.widgets.Select.from_param(self.param.preset, name="Mosaic", width=120,
                                                    margin=m)  # fmt: skip
        self._rows = pn.widgets.IntInput.from_param(self.param.rows, name="NT rows", width=65,
                                                    margin=m)  # fmt: skip
        self._columns = pn.widgets.IntInput.from_param(
            self.param.columns, name="NT columns", width=80, margin=m
        )
        self._source = pn.widgets.RadioButtonGroup.from_param(
            self.param.source, name="network", color="default", variant="outline",
            orientation="vertical", width=160, margin=m,
        )  # fmt: skip
        self._target = pn.widgets.TextInput.from_param(
            self.param.target, name="target profile p̂₀,p̂₁,p̂₂,…", width=200, margin=m
        )
        self._spec = pn.widgets.TextInput.from_param(
            self.param.spec, name="network spec", width=250, margin=m,
            placeholder="e.g. mlp:widths=256-256-10,density=0.05",
        )  # fmt: skip
        self._seed = pn.widgets.IntInput.from_param(self.param.seed, name="seed", width=65,
                                                    margin=m)  # fmt: skip
        self._placer = pn.widgets.Select.from_param(self.param.placer, name="placement",
                                                    width=120, margin=m)  # fmt: skip
        self._routing = pn.widgets.RadioButtonGroup.from_param(
            self.param.routing, name="routing", color="default", variant="outline",
            orientation="vertical", width=110, margin=m,
        )  # fmt: skip

    def _show_source(self, *events) -> None:
        random = self.source == SOURCES[0]
        self._target.visible = random
        self._spec.visible = not random

    def _controls(self):
        return pn.FlexBox(
            self._preset, self._rows, self._columns, self._source, self._target, self._spec,
            self._seed, self._placer, self._routing, flex_wrap="wrap", align_items="flex-start",
            sizing_mode="stretch_width", margin=(0, 0, 4, 0),
        )  # fmt: skip

    def __panel__(self):
        explain = pn.pane.HTML(_EXPLANATION, stylesheets=[_CSS], width=400, margin=(4, 10))
        return pn.Column(
            self._controls(),
            self.summary,
            pn.FlexBox(
                pn.pane.Bokeh(self.grid_figure, margin=(0, 10)),
                pn.Column(self.tree_text, pn.pane.Bokeh(self.profile_figure, margin=(0, 10)),
                          self.profile_note, explain, margin=0),
                flex_wrap="wrap", sizing_mode="stretch_width",
            ),
            self.removals_note,
            self.removals,
            margin=0, sizing_mode="stretch_width", name="Mosaic",
        )  # fmt: skip


def tree_segments_empty() -> dict:
    return {"x0": [], "y0": [], "x1": [], "y1": [], "part": []}


def removal_rows_empty() -> pd.DataFrame:
    return pd.DataFrame(
        {"tile": pd.Series([], dtype="object"), "kind": pd.Series([], dtype="object"),
         "excess": pd.Series([], dtype="int64"), "neuron": pd.Series([], dtype="int64"),
         "to NTs": pd.Series([], dtype="object"), "synapses": pd.Series([], dtype="int64")}
    )  # fmt: skip


def _occupancy_bar(mapper):
    """The occupancy colour bar (as a share of the tile's rows)."""
    from bokeh.models import ColorBar

    return ColorBar(
        color_mapper=mapper, title="occupancy", title_text_font_size="12px",
        title_text_font_style="normal", width=12, major_label_text_font_size="11px",
        bar_line_color=None, padding=8, formatter=NumeralTickFormatter(format="0%"),
        ticker=BasicTicker(desired_num_ticks=6),
    )  # fmt: skip


# ------------------------------------------------------------------ texts
def _summary(result: MosaicResult) -> str:
    s = result.memory.summary()
    hw, grid = result.hardware, result.grid
    fits = s["mappable"]
    verdict = (
        "<span class='yes'>✓ fits</span>" if fits else "<span class='no'>✗ does not fit</span>"
    )
    other = ROUTINGS[1] if result.memory.shared else ROUTINGS[0]
    over = s["overflowing_tiles"]
    listed = ", ".join(
        f"{_subscript(t['kind'])} ({t['tile'][0]}, {t['tile'][1]}) {t['rows']}/{t['capacity']}"
        for t in over[:8]
    ) + (f" and {len(over) - 8} more" if len(over) > 8 else "")
    n_placed = int(np.count_nonzero(result.nt_of >= 0))
    return (
        f"<div class='mosaic-summary' data-testid='mosaic-summary'>{verdict} "
        f"<b>{escape(result.network.name)}</b> ({n_placed:,} neurons on NTs) on "
        f"<b>{escape(hw.name)}</b> ({grid.rows}×{grid.columns} NTs), {escape(result.placer)} "
        f"placement, {s['routing']} routing · routing entries <b>{s['routing_entries']:,}</b> "
        f"<span class='muted'>({other}: {result.other_entries:,})</span> · largest RT "
        f"<b>{s['max_rt_rows']}</b> / {s['rt_inputs']} rows · largest NT "
        f"<b>{s['max_nt_rows']}</b> / {s['nt_inputs']} rows · overflowing tiles "
        f"<b data-testid='mosaic-overflowing'>{len(over)}</b>"
        + (f"<div class='over'>{escape(listed)}</div>" if over else "")
        + "</div>"
    )


_TREE_HINT = (
    "<div class='mosaic-note' data-testid='mosaic-tree'>Click a Neuron Tile to draw where "
    "its neurons' spikes go: the union of their shared-path trees.</div>"
)


def _tree_text(result: MosaicResult, out: Outbound) -> str:
    r, c = (int(v) for v in result.grid.nt_tile(out.nt))
    cells = sum(len(v) for v in out.tree.values())
    other = ROUTINGS[1] if result.memory.shared else ROUTINGS[0]
    if not out.destinations:
        where = "its neurons send to no other NT: no Routing Tile is used."
    else:
        where = (
            f"its {out.neurons} neurons reach <b>{len(out.destinations)}</b> other NTs through "
            f"<b>{len(out.tree)}</b> RTs ({cells} outputs in all); they program "
            f"<b>{out.entries:,}</b> routing entries ({result.routing}; {other}: "
            f"{out.other_entries:,})."
        )
    return (
        f"<div class='mosaic-note' data-testid='mosaic-tree'><b style='color:{TREE_COLOR}'>"
        f"NT {out.nt}</b> at tile ({r}, {c}): {where}</div>"
    )


def _profile_note(result: MosaicResult) -> str:
    pairs = result.profile.pairs
    if result.target is None:
        text = "P(θ) of the network as placed: connections over neuron pairs at each distance."
    else:
        ignored = [
            f"p̂{d} = {v:g}" for d, v in enumerate(result.target)
            if v > 0 and (d >= pairs.size or pairs[d] == 0)
        ]  # fmt: skip
        text = (
            "Solid: the network as placed; dashed: the profile it was drawn for (its neurons in "
            "order on the NTs — another placement moves them)."
        )
        if ignored:
            text += (
                f" <b>{escape(', '.join(ignored))}</b>: no two NTs are that far apart here "
                "(hop distances are 0 and odd), so no connection can have it."
            )
    return f"<div class='mosaic-note' data-testid='mosaic-profile-note'>{text}</div>"


_EXPLANATION = """<div class='mosaic-explain'><b>How a Mosaic routes.</b> Each
<b>Neuron Tile</b> (NT) holds a small crossbar of neurons; channels of <b>Routing Tiles</b>
run between the NTs. An <b>RT₀</b> sits beside an NT: it takes the NT's spikes in or hands
spikes to it, and passes others straight on. An <b>RT₁</b>, where two channels cross, is the
only tile that may turn. A spike goes along X first, then along Y, turning once, in an RT₁
(<i>1-turn routing</i>). Its <i>hop distance</i> is the number of RTs it passes: 0 inside
its NT, 1 to a neighbour (the RT₀ between them), 3 to a diagonal one, then 5, 7, … Past the
first RT₀ a route alternates RT₁, RT₀, so a hop distance of 2 never occurs. Every RT a spike
passes needs an input row for its neuron, so routing memory grows with hop distance. With
<i>shared-path routing</i> a neuron's routes form one tree and its spike enters each RT once,
however many NTs lie beyond; with unicast every route takes its own rows.</div>"""

_CSS = f"""
.mosaic-summary {{ font-family: {FONT}; font-size: 13px; color: #374151; line-height: 1.5;
  border-left: 4px solid #2171b5; background: #f5f8fc; padding: 5px 10px; border-radius: 4px; }}
.mosaic-summary .yes {{ color: #2b8a3e; font-weight: 700; }}
.mosaic-summary .no {{ color: {OVER_LINE}; font-weight: 700; }}
.mosaic-summary .muted {{ color: #6b7280; }}
.mosaic-summary .over {{ color: {OVER_LINE}; font-size: 12px; }}
.mosaic-note {{ font-family: {FONT}; font-size: 12.5px; color: #374151; line-height: 1.45; }}
.mosaic-explain {{ font-family: {FONT}; font-size: 12.5px; color: #4b5563; line-height: 1.5;
  border-top: 1px solid #e5e7eb; padding-top: 6px; }}
"""
