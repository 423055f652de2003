"""The mesh view: routers on their global grid, cores around them, every link by load.

``mesh_figure`` draws the columns of ``explorer.views.mesh_columns`` with Bokeh;
``MeshView`` keeps one figure in step with an ``ExplorerState``: a new evaluation
refreshes the sources in place, new hardware or a new network builds a new figure.

Dragging a core (Bokeh ``PointDrawTool``) onto another slot calls
``state.swap_cores``: onto a core swaps the two, onto an empty slot moves it. The
browser moves the point in the cores' source; the source's ``on_change`` finds the
nearest slot (``mesh_columns.drop_target``), the state swaps, and the refresh writes
every point back onto its slot, so a drop that goes nowhere snaps back.

Threads: the view's watchers change Bokeh models, so the state must be changed on the
session's document thread: by a widget or a Bokeh callback, or by
``explorer.runner.SearchRunner`` given ``schedule=doc.add_next_tick_callback``.
"""

from __future__ import annotations

import io
from html import escape

import numpy as np
import panel as pn
import param
from bokeh.core.properties import field
from bokeh.events import Tap
from bokeh.models import (
    BasicTicker,
    CDSView,
    ColorBar,
    ColumnDataSource,
    CustomJS,
    CustomJSHover,
    FixedTicker,
    Grid,
    HoverTool,
    IndexFilter,
    LabelSet,
    Legend,
    LegendItem,
    LinearColorMapper,
    NumeralTickFormatter,
    PointDrawTool,
    Range1d,
    Rect,
    SaveTool,
    Scatter,
    Segment,
)
from bokeh.plotting import figure
from bokeh.transform import transform

from engine.errors import MeshScopeError
from engine.evaluate.cost import Evaluation
from engine.hardware import LINK_KINDS, Hardware
from engine.model.network import Network
from explorer.state import ExplorerState, Inspection
from explorer.views._page import (
    ICONS,
    LiveHTML,
    fill_when_shown,
    in_document,
    notify_error,
    run_action,
)
from explorer.views.inspect import InspectView
from explorer.views.layer_filter import LayerFilter
from explorer.views.mesh_columns import (
    BOTTLENECK_COLOR,
    COLOR_MODES,
    EMPTY_COLOR,
    IDLE_COLOR,
    LINK_DIRECTIONS,
    LOAD_PALETTE,
    MESH_PAD,
    ROUTER_SIZE,
    SIMULATED_MODES,
    TILE_SIZE,
    bottleneck_columns,
    bottleneck_core_columns,
    bottleneck_text,
    chip_columns,
    chip_loads,
    chip_view,
    color_scale,
    core_columns,
    core_positions,
    core_size,
    drop_target,
    hit_test,
    link_columns,
    link_loads_frame,
    load_colors,
    node_address_parts,
    population_colors,
    router_columns,
)

__all__ = ["HIGHLIGHT_COLOR", "MeshView", "mesh_figure"]

HIGHLIGHT_COLOR = "#1d4ed8"  # the routes of the flows being inspected (blue: not a load)

# The draggable cores carry only what they draw, so that a drop sends the server little;
# their numbers for the tooltip sit in a second source, under an invisible twin glyph.
_CORE_DRAWN = ("x", "y", "core", "layer", "placed")  # numbers: coloured in the browser
# columns that change with the mapping; the others (geometry, names) are sent once
_CORE_DRAWN_DYNAMIC = ("x", "y", "layer", "placed")
_CORE_INFO_DYNAMIC = (
    "partition", "population_id", "neurons", "dendops", "synops", "synmem_reads",
    "t_dendops_us", "t_synops_us", "t_synmem_us",
)  # fmt: skip
_CORE_INFO = ("x", "y", "core", *_CORE_INFO_DYNAMIC)
_LINK_DYNAMIC = (
    "messages", "utilization", "value", "shade", "width", "width_px", "arrow_px", "loaded",
    "sim_flits", "sim_busy", "sim_buffer",
)  # fmt: skip
# What the tooltips show as text goes as numbers, written out in the browser
# (``_tooltip_formats``): a column of 3,000 strings took the page ~10 ms to send and read.
# The links' colours too: ``shade`` (the coloured value, NaN when idle) through the colour
# bar's mapper, which bins as ``load_colors`` does.
_LINK_TEXT = ("kind", "direction", "src", "dst", "color")
_SIM_COLUMNS = ("sim_flits", "sim_busy", "sim_buffer")  # NaN (not simulated) sent as -1


PORT_COLOR = "#0b7a3e"  # the input port's outline


OVERVIEW_PX = 120  # the chip overview's longer side at most, in px
PATCH_ROWS = 64  # a column with at most this many changed rows is patched, not re-sent


def _send_changes(source: ColumnDataSource, columns: dict) -> None:
    """Bring ``source`` to ``columns``, sending only what changed: a column with a few
    changed rows as a patch of those rows (a drag changes two cores of 1,024: their 9
    tooltip columns went as 9 whole arrays, ~75 KB on an eight-chip board), one with many
    as the whole column, an unchanged one not at all."""
    whole, patches = {}, {}
    for key, new in columns.items():
        old = np.asarray(source.data.get(key, ()))
        new = np.asarray(new)
        if old.shape != new.shape or new.dtype == object or old.dtype == object:
            whole[key] = new
            continue
        same = old == new
        if new.dtype.kind == "f":
            same |= np.isnan(old) & np.isnan(new)
        rows = np.flatnonzero(~same)
        if rows.size > PATCH_ROWS:
            whole[key] = new
        elif rows.size:
            patches[key] = list(zip(rows.tolist(), new[rows].tolist(), strict=True))
    if whole:
        source.data.update(_data(whole))
    if patches:
        source.patch(patches)


def _data(columns: dict) -> dict:
    """Columns as lists or arrays Bokeh serializes (object arrays become lists)."""
    return {k: (v.tolist() if v.dtype == object else v) for k, v in columns.items()}


# ------------------------------------------------------------------ drawing
def core_color_mappers(network: Network) -> tuple[LinearColorMapper, LinearColorMapper]:
    """The mappers that colour ``core_columns``' ``layer`` (its population's colour, empty
    slots ``EMPTY_COLOR``) and ``placed`` (the outline) as ``color`` and ``line_color`` do."""
    n = network.n_populations
    fill = LinearColorMapper(
        palette=list(population_colors(n)), low=-0.5, high=n - 0.5, nan_color=EMPTY_COLOR
    )
    line = LinearColorMapper(palette=["#c8c8c8", "#ffffff"], low=-0.5, high=1.5)
    return fill, line


def _draw(p, source: ColumnDataSource, glyph, **renderer):
    """``glyph`` of ``source`` on ``p``, one renderer: without the non-selection and muted
    copies of the glyph that ``p.scatter`` and the like add (two more models a renderer,
    built and sent per session). Nothing on the mesh is muted, and no source drawn this way
    is ever selected (the dragged cores' renderer has no selection look either)."""
    return p.add_glyph(source, glyph, **renderer)


def _pixels_per_router(hardware: Hardware, max_width=560, max_height=720) -> float:
    """Router pitch in pixels: the mesh's frame at most ``max_width`` wide (with the axis,
    legend and colour bar beside it, a 16-router-wide board then fits a 1366-px screen
    next to the sidebar) and ``max_height`` tall."""
    ppr = min(max_width / hardware.grid_width, max_height / hardware.grid_height)
    return float(np.clip(ppr, 8, 110))


class _MeshSources:
    """The ColumnDataSources of one figure, refreshed in place when the evaluation changes.

    The first ``update`` sends every column; later ones only the columns that depend on
    the mapping (``full=True`` sends all again, e.g. after the browser deleted a point).
    """

    def __init__(
        self, hardware, network, evaluation, *, link_px: float, color_by: str, simulated=None
    ):
        self.link_px = link_px
        self.cores = ColumnDataSource()  # what is drawn and dragged
        self.core_info = ColumnDataSource()  # what the tooltip shows
        self.links = ColumnDataSource()
        self.bottleneck = ColumnDataSource()
        self.bottleneck_core = ColumnDataSource()
        self.highlight = ColumnDataSource(data={k: [] for k in ("x0", "y0", "x1", "y1")})
        self.link_glyph = None  # set by mesh_figure: dimmed while routes are highlighted
        self.mapper = LinearColorMapper(palette=list(LOAD_PALETTE), low=0, nan_color=IDLE_COLOR)
        self.color_bar: ColorBar | None = None  # set by mesh_figure
        self.color_by = color_by
        self.simulated = simulated
        # the links' tooltip line of the simulated step, from the sim_ columns
        self.sim_format = CustomJSHover(args={"capacity": ""}, code=_SIM_TEXT)
        self.update(hardware, network, evaluation, full=True, simulated=simulated)

    def update(
        self,
        hardware: Hardware,
        network: Network,
        evaluation: Evaluation,
        *,
        color_by: str | None = None,
        full: bool = False,
        simulated: dict | None = None,
        links_only: bool = False,
    ) -> None:
        """Refresh the sources from ``evaluation``; ``links_only``: the mapping is the same
        and only what the links show changed, so the cores are left alone (rewriting them
        would snap back a core the person is dragging at that moment)."""
        self.color_by = color_by or self.color_by
        self.simulated = simulated
        links = link_columns(hardware, evaluation, color_by=self.color_by, simulated=simulated)
        links["width_px"] = links["width"] * self.link_px
        on_mesh = (links["kind"] == "router") | (links["kind"] == "off-chip")
        links["arrow_px"] = np.where(
            on_mesh & links["loaded"], links["width"] * self.link_px * 2.2, 0
        )
        if simulated is not None:  # the capacity the tooltips write
            capacity = f"{simulated.get('buffer_capacity', 0)}"
            if self.sim_format.args.get("capacity") != capacity:
                self.sim_format.args = {"capacity": capacity}
        links["shade"] = np.where(links["value"] > 0, links["value"], np.nan)
        links = {k: v for k, v in links.items() if k not in _LINK_TEXT}
        links.update({k: np.nan_to_num(links[k], nan=-1.0) for k in _SIM_COLUMNS})
        parts = [(self.links, links, _LINK_DYNAMIC)]  # unchanged columns are not sent
        if not links_only:
            info = core_columns(hardware, network, evaluation)
            drawn = {k: info[k] for k in _CORE_DRAWN}
            shown = {k: info[k] for k in _CORE_INFO}  # the tooltip's, not the colours
            parts += [(self.cores, drawn, _CORE_DRAWN_DYNAMIC),
                      (self.core_info, shown, _CORE_INFO_DYNAMIC)]  # fmt: skip
        for source, columns, dynamic in parts:
            if not source.data:
                source.data = _data(columns)
            elif full:  # in place: a new dict inside the source's own callback would break
                source.data.update(_data(columns))  # Bokeh's loop over the old one
            else:
                _send_changes(source, {k: columns[k] for k in dynamic})
        if not links_only:
            if self.cores.selected.indices:
                self.cores.selected.indices = []
            self.bottleneck_core.data = bottleneck_core_columns(hardware, evaluation)
        self.bottleneck.data = _data(bottleneck_columns(links, evaluation))
        vmax = color_scale(evaluation, self.color_by, simulated)
        self.mapper.high = vmax if vmax > 0 else 1.0
        if self.color_bar is not None:
            title, fmt = COLOR_MODES[self.color_by]
            if self.color_bar.title != title:  # change properties, not models: cheaper
                self.color_bar.title = title
                self.color_bar.formatter.format = fmt


_UNSELECT = "if (cores.selected.indices.length) cores.selected.indices = []"


def mesh_figure(
    hardware: Hardware,
    network: Network,
    evaluation: Evaluation,
    *,
    color_by: str = "messages",
    title: str | None = None,
    simulated: dict | None = None,
):
    """A Bokeh figure of the mesh, and the sources to refresh it: ``(figure, sources)``.
    ``simulated``: a simulated step's ``link_figures()``, for its colour modes and tooltips."""
    gw, gh = hardware.grid_width, hardware.grid_height
    ppr = _pixels_per_router(hardware)
    link_px = max(1.0, 0.045 * ppr)
    sources = _MeshSources(
        hardware, network, evaluation, link_px=link_px, color_by=color_by, simulated=simulated
    )
    pad = MESH_PAD
    x0, x1, y0, y1 = chip_view(hardware)  # the whole board; row 0 at the top
    p = figure(
        title=title,
        width=None,  # the frame size decides
        height=None,
        frame_width=int(round(ppr * (gw - 1 + 2 * pad))),
        frame_height=int(round(ppr * (gh - 1 + 2 * pad))),
        x_range=Range1d(x0, x1, bounds="auto"),
        y_range=Range1d(y0, y1, bounds="auto"),
        tools="pan,wheel_zoom,box_zoom,reset,save",
        toolbar_location="right",
        background_fill_color="#fbfbfb",
        border_fill_color="white",
        outline_line_color=None,
        min_border_left=40,
    )
    _style_axes(p, gw, gh)
    p.toolbar.logo = None
    if p.title is not None:
        p.title.text_font_size = "13px"
        p.title.text_color = "#4b5563"

    routers = ColumnDataSource(router_columns(hardware))
    tiles = _draw(p, routers, Rect(
        x="x", y="y", width=TILE_SIZE, height=TILE_SIZE, fill_color="#eef1f5",
        line_color="#dde2e8", border_radius=max(2, int(0.08 * ppr)),
    ))  # fmt: skip
    if hardware.n_chips > 1:
        _draw_chips(p, hardware)
    dots = _draw(p, routers, Scatter(
        x="x", y="y", marker="square", size=max(3.0, ROUTER_SIZE * ppr),
        fill_color="#3d3d3d", line_color=None,
    ))  # fmt: skip
    _draw(p, sources.bottleneck, Segment(
        x0="x0", y0="y0", x1="x1", y1="y1", line_color=BOTTLENECK_COLOR,
        line_width=link_px * 4.5, line_alpha=0.45, line_cap="round",
    ), name="bottleneck")  # fmt: skip
    links = _draw(p, sources.links, Segment(
        x0="x0", y0="y0", x1="x1", y1="y1", line_color=transform("shade", sources.mapper),
        line_width="width_px", line_dash="dash",
    ), name="links")  # fmt: skip
    sources.link_glyph = links.glyph
    _draw(p, sources.highlight, Segment(
        x0="x0", y0="y0", x1="x1", y1="y1", line_color=HIGHLIGHT_COLOR,
        line_width=link_px * 3.2, line_alpha=0.85, line_cap="round",
    ), name="highlight")  # fmt: skip
    arrows = _draw(p, sources.links, Scatter(
        x="xm", y="ym", marker="triangle", angle="angle", size="arrow_px",
        fill_color=transform("shade", sources.mapper), line_color=None,
    ))  # fmt: skip
    side = core_size(hardware.cores_per_router) * ppr
    _draw(p, sources.bottleneck_core, Scatter(
        x="x", y="y", marker="square", size=side + max(6.0, 0.08 * ppr), fill_color=None,
        line_color=BOTTLENECK_COLOR, line_width=max(2.5, 0.035 * ppr),
    ), name="bottleneck_core")  # fmt: skip
    fill, line = core_color_mappers(network)
    cores = _draw(p, sources.cores, Scatter(
        x="x", y="y", marker="square", size=side, fill_color=transform("layer", fill),
        line_color=transform("placed", line), line_width=1,
    ), name="cores")  # fmt: skip
    if network.has_spike_sources:  # where the spike sources' messages enter the mesh
        px, py = core_positions(hardware)
        c = hardware.input_core
        port = ColumnDataSource({"x": [float(px[c])], "y": [float(py[c])]})
        _draw(p, port, Scatter(
            x="x", y="y", marker="diamond", size=side * 1.7, fill_color=None,
            line_color=PORT_COLOR, line_width=2.5,
        ), name="input_port")  # fmt: skip
    cores.selection_glyph = None  # a dragged core keeps its look;
    cores.nonselection_glyph = None  # the others are not dimmed
    info = _draw(p, sources.core_info, Scatter(
        x="x", y="y", marker="square", size=side, fill_alpha=0, line_alpha=0,
    ), name="core_info")  # fmt: skip
    drag = PointDrawTool(
        renderers=[cores], add=False, drag=True,
        description="Drag a core onto another slot (swap or move)",
    )  # fmt: skip
    # a click (on a core, to inspect it) selects that core in the browser, and the drag
    # tool moves every selected core: the next drag of another core took the clicked one
    # along, and the drop of two cores was refused. A click leaves nothing selected.
    p.js_on_event(Tap, CustomJS(args={"cores": sources.cores}, code=_UNSELECT))
    core_formats, link_formats = _tooltip_formats(hardware, network, sources)
    p.add_tools(
        drag, HoverTool(renderers=[info], tooltips=_CORE_TOOLTIPS, formatters=core_formats),
    )  # fmt: skip
    # a link's tooltip opens beside it, never over it (nor over the route of a link being
    # inspected): above or below an east-west link, left or right of the others; each
    # kind hovers on an invisible copy of its links (one tool has one attachment)
    y0, y1 = np.asarray(sources.links.data["y0"]), np.asarray(sources.links.data["y1"])
    for name, rows, attachment in (
        ("links_hover_ew", np.flatnonzero(y0 == y1), "vertical"),
        ("links_hover_ns", np.flatnonzero(y0 != y1), "horizontal"),
    ):
        target = _draw(p, sources.links, Segment(
            x0="x0", y0="y0", x1="x1", y1="y1", line_width="width_px", line_alpha=0,
        ), view=CDSView(filter=IndexFilter(rows.tolist())), name=name)  # fmt: skip
        p.add_tools(HoverTool(
            renderers=[target], line_policy="interp", tooltips=_LINK_TOOLTIPS,
            formatters=link_formats, attachment=attachment,
        ))  # fmt: skip
    p.toolbar.active_drag = drag
    # the toolbar's own (``p.select_one`` would walk every model of the figure to find it)
    save = next(t for t in p.toolbar.tools if isinstance(t, SaveTool))
    save.filename = f"{network.name}-on-{hardware.name}"  # no prompt
    legend = _legend(p, network, link_px)
    p.add_layout(legend, "right")
    title_text, fmt = COLOR_MODES[color_by]
    sources.color_bar = ColorBar(
        color_mapper=sources.mapper, title=title_text, title_text_font_size="12px",
        title_text_font_style="bold", width=14, height=max(160, int(0.45 * ppr * gh)),
        major_label_text_font_size="11px", padding=12, title_standoff=8, bar_line_color=None,
        orientation="vertical", major_tick_line_color="#555555", location="top_left",
        ticker=BasicTicker(desired_num_ticks=6), formatter=NumeralTickFormatter(format=fmt),
    )  # fmt: skip
    p.add_layout(sources.color_bar, "right")
    _level_of_detail(p, ppr, [tiles, dots, arrows], sources.mapper, fill, line, legend)
    return p, sources


DETAIL_PX = 14.0  # pixels per router pitch below which the mesh drops its fine detail
CLEAR = "rgba(0, 0, 0, 0)"
_DETAIL_JS = """
const show = px / (cb_obj.end - cb_obj.start) >= min_px;
if (detail[0].visible === show) return;
for (const r of detail) r.visible = show;
links.nan_color = show ? idle : clear;
fill.nan_color = show ? empty : clear;
line.palette = [show ? unplaced : clear, line.palette[1]];
legend.title = show ? title : title + coarse;
"""
COARSE_TITLE = " · zoom in for detail"  # (no wider than the longest label, or the mesh shrinks)


def _level_of_detail(p, ppr: float, detail: list, links, fill, line, legend) -> None:
    """Below ``DETAIL_PX`` pixels per router (a board of many chips, zoomed out) the mesh
    shows what carries load and where the cores are: the router tiles and dots, the arrow
    heads, the idle links and the empty slots go, and come back as one zooms in; the
    legend's title says so meanwhile. Decided in the browser as the range changes
    (``ppr``: pixels per router pitch at the start)."""
    show = ppr >= DETAIL_PX
    unplaced, title = line.palette[0], legend.title
    if not show:
        for r in detail:
            r.visible = False
        links.nan_color = fill.nan_color = CLEAR
        line.palette = [CLEAR, line.palette[1]]
        legend.title = title + COARSE_TITLE
    callback = CustomJS(
        args={
            "px": ppr * (p.x_range.end - p.x_range.start),
            "min_px": DETAIL_PX, "detail": detail, "links": links, "fill": fill, "line": line,
            "idle": IDLE_COLOR, "empty": EMPTY_COLOR, "unplaced": unplaced, "clear": CLEAR,
            "legend": legend, "title": title, "coarse": COARSE_TITLE,
        },
        code=_DETAIL_JS,
    )  # fmt: skip
    p.x_range.js_on_change("start", callback)
    p.x_range.js_on_change("end", callback)


def share_view(fig, like) -> None:
    """``fig`` pans and zooms with ``like``: it takes ``like``'s ranges, and its level of
    detail follows the shared x range (its callback was on its own range)."""
    own = fig.x_range
    fig.x_range, fig.y_range = like.x_range, like.y_range
    for event in ("start", "end"):
        for callback in own.js_property_callbacks.get(f"change:{event}", []):
            like.x_range.js_on_change(event, callback)


_CORE_TOOLTIPS = [
    ("core", "@core{core} (id @core)"),
    ("population", "@population_id{name}"),
    ("partition", "@partition"),
    ("neurons", "@neurons{0,0}"),
    ("DendOps / step", "@dendops{0,0}"),
    ("SynOps / step", "@synops{0,0.0}"),
    ("SynMem reads / step", "@synmem_reads{0,0.0}"),
    ("DendOps term", "@t_dendops_us{0.000} µs"),
    ("SynOps term", "@t_synops_us{0.000} µs"),
    ("SynMem term", "@t_synmem_us{0.000} µs"),
]
_LINK_TOOLTIPS = [
    ("link", "@kind_code{name} @direction_code{name} (id @link)"),
    ("from → to", "@src_node{node} → @dst_node{node}"),
    ("messages / step", "@messages{0,0.0}"),
    ("utilization", "@utilization{0.0%}"),
    ("simulated", "@sim_flits{flits}@sim_busy{busy}@sim_buffer{buffer}"),
]

# A node's address as ``mesh_columns`` writes it: "(chip, x, y)" for a router, "(chip, x,
# y, slot)" for a core; the value is a node ({node}) or a core id ({core}).
_ADDRESS = """
const i = format == "core" ? value + routers : value;
const parts = [chip[i], x[i], y[i]];
if (slot[i] >= 0) parts.push(slot[i]);
return `(${parts.join(", ")})`;
"""
# ``mesh_columns.simulated_link_text``, from the sim_ columns (-1: none)
_SIM_TEXT = """
if (format == "flits") {
  return value < 0 ? "not simulated yet" : `${Math.round(value).toLocaleString("en-US")} flits`;
}
if (value < 0) return "";
if (format == "busy") {  // a whole per cent, a tie to the even one as Python's format does
  const p = value * 100;
  let r = Math.round(p);
  if (r - p == 0.5 && r % 2 != 0) r -= 1;
  return `, busy ${r}%`;
}
return `, buffer peak ${Math.round(value)} of ${capacity}`;
"""


def _tooltip_formats(hardware: Hardware, network: Network, sources: _MeshSources):
    """The formatters of ``_CORE_TOOLTIPS`` and ``_LINK_TOOLTIPS``: names and addresses
    looked up in the browser from the numbers the sources carry."""
    chip, x, y, slot = node_address_parts(hardware)
    address = CustomJSHover(
        args={"chip": chip, "x": x, "y": y, "slot": slot, "routers": hardware.n_routers},
        code=_ADDRESS,
    )  # fmt: skip

    def names(values) -> CustomJSHover:  # value k: the k-th name (-1: the last)
        return CustomJSHover(args={"names": list(values)}, code="return names.at(value)")

    core_formats = {
        "@core": address,
        "@population_id": names([*network.population_names, "empty"]),
    }
    link_formats = {
        "@kind_code": names(LINK_KINDS),
        "@direction_code": names(LINK_DIRECTIONS),
        "@src_node": address,
        "@dst_node": address,
        **{f"@{k}": sources.sim_format for k in _SIM_COLUMNS},
    }
    return core_formats, link_formats


def _draw_chips(p, hardware: Hardware) -> None:
    chips = ColumnDataSource(chip_columns(hardware))
    _draw(p, chips, Rect(
        x="x", y="y", width="width", height="height", fill_color=None, line_color="#5b6b7c",
        line_width=2, line_dash="dashed",
    ))  # fmt: skip
    p.add_layout(
        LabelSet(
            x="label_x", y="label_y", text="label", source=chips, text_font_size="11px",
            text_color="#3b4754", text_baseline="top", background_fill_color="white",
            background_fill_alpha=0.85, x_offset=2, y_offset=-2,
        )
    )  # fmt: skip


def _style_axes(p, gw: int, gh: int) -> None:
    p.center = [r for r in p.center if not isinstance(r, Grid)]  # no grid: not even hidden
    p.xaxis.axis_label, p.yaxis.axis_label = "router x", "router y"
    for axis, n in ((p.xaxis, gw), (p.yaxis, gh)):
        axis.ticker = FixedTicker(ticks=list(range(0, n, max(1, n // 16))))
        axis.axis_line_color = axis.major_tick_line_color = axis.minor_tick_line_color = None
        axis.major_label_text_color = "#777777"
        axis.axis_label_text_color = "#555555"
        axis.axis_label_text_font_style = "normal"


def _legend(p, network: Network, link_px: float) -> Legend:
    """Population colours, empty cores, idle and heaviest links, bottleneck core: stand-ins.

    Each stand-in holds one point at NaN (drawn nowhere), so the legend never depends on
    which cores hold which population and a new placement cannot leave it stale.
    """
    nan = [float("nan")]
    items = []
    colors = [*population_colors(network.n_populations), EMPTY_COLOR]
    labels = [
        f"{name} (spike source: from the input port)" if source else name
        for name, source in zip(network.population_names, network.spike_source, strict=True)
    ] + ["empty core"]
    # one stand-in renderer for every population, a row each, and one source for every
    # stand-in: a renderer is several Bokeh models, built per session (12 layers cost 0.2 s
    # apiece), and a source three more
    points = ColumnDataSource({
        "x": nan * len(colors), "y": nan * len(colors), "fill": colors,
        "line": ["#c8c8c8" if c == EMPTY_COLOR else c for c in colors], "label": labels,
    })  # fmt: skip
    stand_ins = _draw(p, points, Rect(
        x="x", y="y", width=1, height=1, fill_color="fill", line_color="line",
    ))  # fmt: skip
    if len(set(labels)) == len(labels):  # one item: an entry per label, drawn as its row
        items.append(LegendItem(label=field("label"), renderers=[stand_ins]))
    else:  # an entry per row (one item each: the same labels would make one entry)
        items += [
            LegendItem(label=label, renderers=[stand_ins], index=i)
            for i, label in enumerate(labels)
        ]
    ends = {"x0": "x", "y0": "y", "x1": "x", "y1": "y"}
    idle = _draw(p, points, Segment(**ends, line_color=IDLE_COLOR, line_width=link_px))
    hot = _draw(p, points, Segment(
        **ends, line_color=BOTTLENECK_COLOR, line_alpha=0.45, line_width=link_px * 3,
        line_cap="round",
    ))  # fmt: skip
    hot_core = _draw(p, points, Scatter(
        x="x", y="y", marker="square", size=12, fill_color=None, line_color=BOTTLENECK_COLOR,
        line_width=2.5,
    ))  # fmt: skip
    if network.has_spike_sources:
        port = _draw(p, points, Scatter(
            x="x", y="y", marker="diamond", size=14, fill_color=None, line_color=PORT_COLOR,
            line_width=2.5,
        ))  # fmt: skip
        items.append(LegendItem(label="input port (spike sources enter)", renderers=[port]))
    items += [
        LegendItem(label="idle link", renderers=[idle]),
        LegendItem(label="heaviest link", renderers=[hot]),
        LegendItem(label="bottleneck core", renderers=[hot_core]),
    ]
    return Legend(
        items=items, title="cores by population", location="top_left",
        label_text_font_size="12px", title_text_font_style="bold", border_line_color=None,
        glyph_width=18, glyph_height=16, label_height=16, spacing=2,
    )  # fmt: skip


_CAPTION_CSS = """
.mesh-caption { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
                font-size: 13px; color: #374151; border-left: 4px solid #ff1f8e;
                padding: 2px 10px; max-width: 900px; }
.mesh-hint { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
             font-size: 12px; color: #6b7280; padding: 4px 14px 0; max-width: 900px; }
.mesh-label { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
              font-size: 13px; color: #4b5563; }
.mesh-label b { color: #1f2933; font-weight: 600; }
.mesh-banner { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
               font-size: 13px; color: #7c2d12; background: #fff7ed;
               border: 1px solid #fed7aa; border-radius: 6px; padding: 6px 10px; }
"""

_HINT = (
    "Each direction of a link has its own lane; arrows show the direction of travel. "
    "Hover over a core or a link for its numbers; click one to see the flows through it and "
    "their routes; the toolbar saves the plot as PNG (or SVG, ticked below)."
)


class MeshView(pn.viewable.Viewer):
    """The mesh of a state's hardware, kept in step with what the state shows.

    It shows ``state.shown_evaluation``: the current mapping, or a search's best from the
    search's start until it is adopted, while ``state.follow_best`` is on (then dragging
    is paused); a banner says which.
    """

    state = param.ClassSelector(class_=ExplorerState)
    color_by = param.Selector(
        default="messages", objects=list(COLOR_MODES), doc="what the link colours show"
    )
    notify = param.Callable(default=None, doc="error reporter (default: a notification)")
    layers = param.List(
        default=[], item_type=int,
        doc="populations whose outbound flows the link colours show (empty: every one)",
    )  # fmt: skip
    clicks = param.Integer(
        default=0, doc="inspections a click asked for (the flows then scroll into view)"
    )
    inspection = param.ClassSelector(
        class_=Inspection, default=None, allow_None=True,
        doc="the link or core last clicked, explained (None: nothing inspected)",
    )  # fmt: skip

    def __init__(self, **params):
        super().__init__(**params)
        self._hardware = None
        self._network = None
        self._shown = None
        self._sources = None
        self._figures_of = self._figures = None  # the simulated step and its link figures
        self._writing = False  # re-entry guard: our own writes fire the source's on_change
        self._pane = pn.pane.Bokeh(margin=(0, 10))
        self._caption = LiveHTML(css=_CAPTION_CSS, margin=(4, 10, 0, 10))
        self._banner = LiveHTML(css=_CAPTION_CSS, margin=(0, 10), div_params={"width": 620})
        self._follow = pn.widgets.Checkbox.from_param(
            self.state.param.follow_best, label="show the search's best",
            margin=(8, 10),
        )  # fmt: skip
        self._adopt = pn.widgets.Button(
            label="Adopt", color="success", icon=ICONS["check"], width=84, margin=(6, 4),
            description="make the search's best your current mapping (undoable)",
        )  # fmt: skip
        self._adopt.on_click(lambda event: run_action(self.state.adopt_best, notify=self.notify))
        self._unpick = pn.widgets.Button(
            label="Back to mine", width=110, margin=(6, 4), variant="outline",
            description="stop showing the mapping picked on the Evolution tab",
        )  # fmt: skip
        self._unpick.on_click(lambda event: run_action(self.state.pick, None, notify=self.notify))
        self._search_row = pn.Row(visible=False)  # the search's: filled when first shown
        fill_when_shown(self._search_row, [self._follow, self._adopt, self._unpick, self._banner])
        # boards of several chips: an overview to jump to one chip, and back to the board
        self._chips = ColumnDataSource()
        self._chips.selected.on_change("indices", self._on_chip_tap)
        self._overview = pn.pane.Bokeh(None, margin=(0, 10))
        self._whole = pn.widgets.Button(label="Whole board", width=110, margin=(6, 4))
        self._whole.on_click(lambda event: self.zoom_to_chip(None))
        self._overview_row = pn.Row(
            self._overview, self._whole,
            pn.pane.HTML('<span class="mesh-label">Click a chip to look at it; the mesh '
                         "pans and zooms as usual.</span>", stylesheets=[_CAPTION_CSS],
                         margin=(10, 4)),
            visible=False,
        )  # fmt: skip
        self._switch = pn.widgets.RadioButtonGroup.from_param(
            self.param.color_by,
            options={
                "messages / step": "messages", "utilization": "utilization",
                "simulated flits": "flits", "simulated busy": "busy",
                "buffer peak": "buffer",
            },
            label="", margin=(4, 10), variant="outline", color="primary", description=None,
            stylesheets=[":host .bk-btn { font-size: 12px; padding: 3px 10px; }"],
        )  # fmt: skip
        self._layer_choice = LayerFilter(width=200, height=30, margin=(4, 10))
        self._layer_choice.param.watch(lambda e: setattr(self, "layers", list(e.new)), "value")
        self._download = pn.widgets.FileDownload(
            callback=self.link_loads_csv, filename="link-loads.csv", label="Link loads as CSV",
            embed=False, width=170, margin=(4, 10), variant="outline",
        )  # fmt: skip
        self._svg = pn.widgets.Checkbox(
            label="vector: the toolbar saves SVG (slower to draw)", margin=(10, 10)
        )
        self._svg.param.watch(self._on_svg, "value")
        self._refresh()
        self.state.param.watch(
            self._refresh,
            ["evaluation", "search_best_evaluation", "search_running", "follow_best",
             "best_on_mesh", "simulated", "simulating", "picked_evaluation"],
        )  # fmt: skip
        self.param.watch(self._refresh, ["color_by"])
        self.param.watch(self._layers_changed, ["layers"])

    # ------------------------------------------------------------ state → figure
    @property
    def shown(self) -> Evaluation | None:
        return self.state.shown_evaluation

    @property
    def following_search(self) -> bool:
        return self.state.evaluation is not None and self.shown is not self.state.evaluation

    def _coloured(self, shown: Evaluation) -> Evaluation:
        """What the links show: the shown evaluation, or its layers' share (``layers``)."""
        if not self.layers or shown is not self.state.shown_evaluation:
            return shown
        return self.state.layer_evaluation(self.layers)

    def _layers_changed(self, *events) -> None:
        if self._layer_choice.value != self.layers:
            self._layer_choice.value = list(self.layers)
        self._shown = None  # the same evaluation, coloured anew
        self._refresh()

    def _refresh(self, *events) -> None:
        s = self.state
        shown = self.shown
        self._update_banner()
        if shown is None:
            self._pane.object = None
            self._caption.object = ""
            return
        names = s.network.population_names
        figures = self._simulated_figures()
        color_by = self.color_by
        simulated_mode = color_by in SIMULATED_MODES
        if simulated_mode and figures is None:
            color_by = "messages"  # until the first simulation arrives
        only = (
            "Links show only the flows that leave "
            + ", ".join(names[k] for k in self.layers if k < len(names))
            + ". "
            if self.layers and not simulated_mode
            else ""
        )
        self._caption.object = (
            f'<div class="mesh-caption" data-testid="mesh-caption">'
            f"{escape(bottleneck_text(s.hardware, shown, s.network))}</div>"
            + self._simulated_note(figures)
            + f'<div class="mesh-hint">{escape(only + _HINT)}</div>'
        )
        same_figure = s.hardware is self._hardware and s.network is self._network and self._sources
        if same_figure:
            if (
                shown is self._shown
                and self._sources.color_by == color_by
                and self._sources.simulated is figures
            ):
                return
            coloured = self._coloured(shown)
            self._write(
                lambda: self._sources.update(
                    s.hardware, s.network, coloured, color_by=color_by, simulated=figures,
                    links_only=shown is self._shown,
                )
            )  # fmt: skip
            if s.hardware.n_chips > 1 and shown is not self._shown:
                self._chips.data.update(_data(self._chip_colours(s.hardware)))
            if self.inspection is not None and shown is not self._shown:
                self._shown = shown
                self.inspect(self.inspection.kind, self.inspection.target)  # what it is now
        else:
            if s.network is not self._network:  # another network: other layers
                self._layer_choice.set_layers(
                    s.network.population_names, population_colors(s.network.n_populations)
                )
                self.layers = []
            fig, self._sources = mesh_figure(
                s.hardware, s.network, self._coloured(shown), color_by=color_by,
                simulated=figures,
            )  # fmt: skip
            self._sources.cores.on_change("data", self._on_cores_change)
            fig.on_event(Tap, self._on_tap)
            fig.output_backend = "svg" if self._svg.value else "canvas"
            self._hardware, self._network = s.hardware, s.network
            self._pane.object = fig
            self._overview.object = self._overview_figure(s.hardware)
            self._overview_row.visible = s.hardware.n_chips > 1
            self.inspection = None
        self._shown = shown

    # ------------------------------------------------------------ chips
    def _overview_figure(self, hardware: Hardware):
        """A small map of the chips coloured by their heaviest link (None for one chip)."""
        if hardware.n_chips < 2:
            return None
        columns = chip_columns(hardware)
        columns.update(self._chip_colours(hardware))
        self._chips.data = _data(columns)
        # small above the mesh: at most OVERVIEW_PX a side (but 4 px a router at least), so
        # that on a laptop's screen the board's mesh starts above the fold (230 px did not)
        px = max(4.0, min(14.0, OVERVIEW_PX / max(hardware.grid_width, hardware.grid_height)))
        p = figure(
            width=int(px * hardware.grid_width) + 10, height=int(px * hardware.grid_height) + 10,
            x_range=Range1d(-0.6, hardware.grid_width - 0.4),
            y_range=Range1d(hardware.grid_height - 0.4, -0.6), tools="tap",
            toolbar_location=None, min_border=0, outline_line_color=None,
            x_axis_type=None, y_axis_type=None,  # no axes nor grids: not even hidden ones
        )  # fmt: skip
        rects = p.rect(
            "x", "y", "width", "height", source=self._chips, fill_color="color",
            line_color="#5b6b7c", name="chips", selection_line_width=3,
            nonselection_fill_alpha=0.6,
        )  # fmt: skip
        p.text("x", "y", text="chip", source=self._chips, text_align="center",
               text_baseline="middle", text_font_size="10px", text_color="#111827")  # fmt: skip
        p.add_tools(HoverTool(renderers=[rects], tooltips=[
            ("chip", "@chip"), ("heaviest link", "@load{0,0} messages / step"),
        ]))  # fmt: skip
        return p

    def _chip_colours(self, hardware: Hardware) -> dict:
        loads = chip_loads(hardware, self.shown)
        return {"load": loads, "color": load_colors(loads, max(float(loads.max()), 1e-12))}

    def _on_chip_tap(self, attr, old, new) -> None:
        in_document(self._chips, self.zoom_to_chip, new[0] if new else None)

    def zoom_to_chip(self, chip: int | None) -> None:
        """Show chip ``chip`` whole on the mesh (None: the whole board)."""
        fig = self._pane.object
        if fig is None:
            return
        x0, x1, y0, y1 = chip_view(self.state.hardware, None if chip is None else int(chip))
        fig.x_range.update(start=x0, end=x1)
        fig.y_range.update(start=y0, end=y1)

    def link_loads_csv(self) -> io.StringIO:
        """The shown mapping's links as CSV (``link_loads_frame``): the analytic loads, and
        the simulated step's figures when the step simulated is the one shown."""
        s = self.state
        figures = self._simulated_figures() if s.simulated_of is s.shown_evaluation else None
        out = io.StringIO()
        link_loads_frame(s.hardware, s.shown_evaluation, figures).to_csv(out, index=False)
        out.seek(0)
        return out

    def _on_svg(self, event) -> None:
        # the browser picks a figure's canvas when it draws it first: a new figure
        self._hardware = None
        self._refresh()

    def _simulated_figures(self) -> dict | None:
        """The link figures of the state's simulated step (computed once per step), or None
        before one arrives (a load clears it, so it is always of the shown hardware)."""
        step = self.state.simulated
        if step is None:
            return None
        if self._figures_of is not step:
            self._figures_of, self._figures = step, step.link_figures()
        return self._figures

    def _simulated_note(self, figures) -> str:
        """A line under the caption when the links show a simulated step."""
        s = self.state
        if self.color_by not in SIMULATED_MODES:
            return ""
        if figures is None:
            text = "Simulating the step; the links show the analytic load until it arrives."
        else:
            step = s.simulated
            stale = s.simulated_of is not s.shown_evaluation or s.simulating
            text = (
                f"Links: the simulated step ({step.step_cycles:,} cycles, "
                f"{step.step_us:,.2f} µs, pipelined, seed 0)"
                + (" of the mapping before the last change; the new one is being simulated"
                   if stale else "")
                + "."
                + (" The layer filter applies to the analytic load." if self.layers else "")
            )  # fmt: skip
        return f'<div class="mesh-hint" data-testid="mesh-simulated-note">{escape(text)}</div>'

    def _update_banner(self) -> None:
        s = self.state
        picked = s.picked_evaluation is not None
        offered = (s.best_on_mesh and s.search_best_evaluation is not None) or picked
        self._search_row.visible = bool(s.search_running or offered)
        self._adopt.visible = offered
        self._unpick.visible = picked
        self._follow.visible = not picked
        if not self._search_row.visible:
            return
        what = "Search running" if s.search_running else "Search over"
        yours = f"yours: {s.evaluation.latency_us:,.3f} µs"
        if picked:
            text = (
                f"The cards and the mesh show <b>evaluation {s.picked.index + 1}</b> of the "
                f"search, picked on the Evolution tab ({s.picked_evaluation.latency_us:,.3f} "
                f"µs; {yours}). Adopt it to make it yours, or go back to yours."
            )
        elif self.following_search:
            text = (
                f"{what}: the cards and the mesh show <b>its best mapping</b>"
                + (" so far" if s.search_running else "")
                + f" ({self.shown.latency_us:,.3f} µs; {yours}, unchanged until you adopt "
                "the best). Untick to see and edit yours."
            )
        elif offered:
            text = (
                f"{what}: the cards and the mesh show <b>your mapping</b> ({yours}); tick to "
                f"see the search's best ({s.search_best_evaluation.latency_us:,.3f} µs)."
            )
        else:
            text = f"{what}: the cards and the mesh show <b>your mapping</b>."
        self._banner.object = f'<div class="mesh-banner" data-testid="mesh-banner">{text}</div>'

    def _write(self, fn) -> None:
        self._writing = True
        try:
            fn()
        finally:
            self._writing = False

    def _snap_back(self) -> None:
        """Every core back on its slot, every column from the state."""
        s = self.state
        coloured = self._coloured(self.shown)
        self._write(lambda: self._sources.update(s.hardware, s.network, coloured, full=True))

    # ------------------------------------------------------------ figure → state
    def _on_cores_change(self, attr, old, new) -> None:
        if self._writing:
            return
        in_document(self._sources.cores, self.drop, new.get("x", ()), new.get("y", ()))

    def drop(self, xs, ys) -> bool:
        """The browser left the cores at ``xs, ys``: swap or move the dragged core onto the
        nearest slot, then redraw from the state. Returns whether the mapping changed."""
        s = self.state
        target = drop_target(s.hardware, xs, ys)
        changed = False
        if target is not None and self.following_search:
            notify_error(
                (
                    "The mesh shows a mapping picked on the Evolution tab: go back to yours "
                    "to edit it, or adopt the picked one."
                    if self.state.picked_evaluation is not None
                    else "The mesh shows the search's best mapping: untick 'show the search's "
                    "best' to edit your own, or adopt the best to make it yours."
                ),
                self.notify,
            )
        elif target is not None:
            revision = s.revision
            run_action(s.swap_cores, *target, notify=self.notify)
            changed = s.revision != revision
        if not changed:
            self._snap_back()  # the refresh did not run: put the dragged point back
        return changed

    # ------------------------------------------------------------ inspecting
    def _on_tap(self, event) -> None:
        in_document(self._sources.cores, self.tap, event.x, event.y)

    def tap(self, x: float, y: float) -> bool:
        """A click at ``(x, y)`` (router pitches): explain the core or link there; a click on
        nothing ends the inspection. Returns whether something is inspected."""
        hit = hit_test(self.state.hardware, self._sources.links.data, x, y)
        if hit is None:
            self.clear_inspection()
            return False
        shown = self.inspect(*hit)
        if shown:
            self.clicks += 1  # (a drag's re-inspection is no click: the page stays put)
        return shown

    def inspect(self, kind: str, target: int) -> bool:
        """Explain link or core ``target`` of the shown mapping and highlight its routes."""
        s = self.state
        try:
            self.inspection = s.inspect_link(target) if kind == "link" else s.inspect_core(target)
        except MeshScopeError as e:
            notify_error(str(e), self.notify)
            return False
        self.highlight(self.inspection.route_ids())
        return True

    def clear_inspection(self) -> None:
        self.inspection = None
        self.highlight(())

    def highlight(self, link_ids) -> None:
        """Draw the links ``link_ids`` on top and dim the others (none: all as they are)."""
        links = self._sources.links.data
        rows = np.flatnonzero(np.isin(np.asarray(links["link"]), np.asarray(link_ids, int)))
        self._sources.highlight.data = {
            k: np.asarray(links[k], float)[rows] for k in ("x0", "y0", "x1", "y1")
        }
        self._sources.link_glyph.line_alpha = 0.3 if rows.size else 1.0

    def __panel__(self):
        return pn.Column(
            pn.Row(  # not a wrapping FlexBox: it would wrap after the first paint and shift
                pn.pane.HTML(  # the mesh under a drag already aimed
                    '<span class="mesh-label">Colour links by</span>',
                    stylesheets=[_CAPTION_CSS],
                    margin=(9, 0, 0, 10),
                ),
                self._switch,
                pn.pane.HTML(
                    '<span class="mesh-label" title="Show only the load of the flows that leave '
                    'these layers">from</span>',
                    stylesheets=[_CAPTION_CSS],
                    margin=(9, 0, 0, 4),
                ),
                self._layer_choice,
            ),
            pn.pane.HTML(
                '<span class="mesh-label"><b>Drag a core</b> onto another core to swap '
                "them, onto an empty slot to move it; <b>click</b> a link or a core to see "
                "its flows.</span>",
                stylesheets=[_CAPTION_CSS],
                margin=(0, 0, 0, 10),
            ),  # fmt: skip
            self._search_row,
            self._overview_row,
            self._pane,
            self._caption,
            pn.Row(self._download, self._svg, margin=(0, 0, 4, 0)),
            InspectView(mesh=self),
            sizing_mode="stretch_width",
        )
