"""The mesh figure: one builder for every tab that draws the mesh.

``mesh_canvas`` is the empty figure of a hardware's router grid that the Mesh tab, Compare
and the Traffic tab draw on; ``mesh_figure`` draws the columns of
``explorer.views.mesh_columns`` on it — routers, cores by population, every link by load,
the bottleneck, tooltips, legend and colour bar — and returns the sources that refresh it
in place (``MeshView``, ``CompareView``); the Traffic tab adds its own glyphs (links by
busy share, routers by buffer) to a ``mesh_canvas``.
"""

from __future__ import annotations

import numpy as np
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

from engine.evaluation.cost import Evaluation
from engine.hardware import LINK_KINDS, Hardware
from engine.model.network import Network
from explorer.views._page import keep_tools
from explorer.views.mesh_columns import (
    BOTTLENECK_COLOR,
    COLOR_MODES,
    EMPTY_COLOR,
    IDLE_COLOR,
    LINK_DIRECTIONS,
    LOAD_PALETTE,
    MESH_PAD,
    ROUTER_SIZE,
    TILE_SIZE,
    bottleneck_columns,
    bottleneck_core_columns,
    chip_columns,
    chip_view,
    color_scale,
    core_columns,
    core_positions,
    core_size,
    link_columns,
    mesh_values,
    node_address_parts,
    population_colors,
    router_columns,
)

__all__ = [
    "CLEAR",
    "DETAIL_PX",
    "HIGHLIGHT_COLOR",
    "bokeh_data",
    "core_color_mappers",
    "mesh_canvas",
    "mesh_figure",
    "share_view",
]

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
    "sim_flits", "sim_busy", "sim_buffer", "busier",
)  # fmt: skip
# What the tooltips show as text goes as numbers, written out in the browser
# (``_tooltip_formats``): a column of 3,000 strings took the page ~10 ms to send and read.
# The links' colours too: ``shade`` (the coloured value, NaN when idle) through the colour
# bar's mapper, which bins as ``load_colors`` does.
_LINK_TEXT = ("kind", "direction", "src", "dst", "color")
_SIM_COLUMNS = ("sim_flits", "sim_busy", "sim_buffer")  # NaN (not simulated) sent as -1


PORT_COLOR = "#0b7a3e"  # the input port's outline
_KEEP = object()  # ``_MeshSources.update``: the mesh shown stays as it is


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
        source.data.update(bokeh_data(whole))
    if patches:
        source.patch(patches)


def bokeh_data(columns: dict) -> dict:
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
        self, hardware, network, evaluation, *, link_px: float, color_by: str, simulated=None,
        mesh=None,
    ):  # fmt: skip
        self.link_px = link_px
        self.mesh = mesh  # the parallel mesh the links show (BUSIER: each link's busier; None
        # all together)
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
        mesh=_KEEP,
    ) -> None:
        """Refresh the sources from ``evaluation``; ``links_only``: the mapping is the same
        and only what the links show changed, so the cores are left alone (rewriting them
        would snap back a core the person is dragging at that moment)."""
        self.color_by = color_by or self.color_by
        self.mesh = self.mesh if mesh is _KEEP else mesh
        self.simulated = simulated
        links = link_columns(
            hardware, evaluation, color_by=self.color_by, simulated=simulated, mesh=self.mesh
        )
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
        dynamic = tuple(k for k in links if k in _LINK_DYNAMIC or k.startswith("mesh_"))
        links.update({k: np.nan_to_num(links[k], nan=-1.0) for k in _SIM_COLUMNS})
        parts = [(self.links, links, dynamic)]  # unchanged columns are not sent
        if not links_only:
            info = core_columns(hardware, network, evaluation)
            drawn = {k: info[k] for k in _CORE_DRAWN}
            shown = {k: info[k] for k in _CORE_INFO}  # the tooltip's, not the colours
            parts += [(self.cores, drawn, _CORE_DRAWN_DYNAMIC),
                      (self.core_info, shown, _CORE_INFO_DYNAMIC)]  # fmt: skip
        for source, columns, dynamic in parts:
            if not source.data:
                source.data = bokeh_data(columns)
            elif full:  # in place: a new dict inside the source's own callback would break
                source.data.update(bokeh_data(columns))  # Bokeh's loop over the old one
            else:
                _send_changes(source, {k: columns[k] for k in dynamic})
        if not links_only:
            if self.cores.selected.indices:
                self.cores.selected.indices = []
            self.bottleneck_core.data = bottleneck_core_columns(hardware, evaluation)
        self.bottleneck.data = bokeh_data(bottleneck_columns(links, evaluation))
        shown = None
        if (
            self.color_by == "messages"
            and evaluation.mesh_messages.shape[1] > 1
            and self.mesh is not None
        ):
            exists = hardware.link_table["kind"] >= 0
            shown = mesh_values(hardware, evaluation, "messages", self.mesh)[exists]
        vmax = color_scale(evaluation, self.color_by, simulated, shown)
        self.mapper.high = vmax if vmax > 0 else 1.0
        if self.color_bar is not None:
            title, fmt = COLOR_MODES[self.color_by]
            if self.color_bar.title != title:  # change properties, not models: cheaper
                self.color_bar.title = title
                self.color_bar.formatter.format = fmt


def mesh_canvas(
    hardware: Hardware, *, title, frame_width: int, frame_height: int, x_range, y_range,
    tools: str, axis_labels: bool = True, **figure_args,
):  # fmt: skip
    """The empty figure every mesh is drawn on — the Mesh tab's, Compare's two, the Traffic
    tab's — each view adding its glyphs: the routers' grid in router pitches (row 0 at the
    top, as ``y_range`` runs), a tick every sixteenth of the grid, no grid lines, axes
    without lines, the toolbar on the right without a logo. The frame's size decides the
    figure's; ``axis_labels``: "router x", "router y" under the ticks."""
    gw, gh = hardware.grid_width, hardware.grid_height
    p = figure(
        title=title, width=None, height=None, frame_width=frame_width,
        frame_height=frame_height, x_range=x_range, y_range=y_range, tools=tools,
        toolbar_location="right", background_fill_color="#fbfbfb", outline_line_color=None,
        **figure_args,
    )  # fmt: skip
    p.center = [r for r in p.center if not isinstance(r, Grid)]  # no grid: not even hidden
    if axis_labels:
        p.xaxis.axis_label, p.yaxis.axis_label = "router x", "router y"
    for axis, n in ((p.xaxis, gw), (p.yaxis, gh)):
        axis.ticker = FixedTicker(ticks=list(range(0, n, max(1, n // 16))))
        axis.axis_line_color = axis.major_tick_line_color = axis.minor_tick_line_color = None
        axis.major_label_text_color = "#777777"
        axis.axis_label_text_color = "#555555"
        axis.axis_label_text_font_style = "normal"
    p.toolbar.logo = None
    keep_tools(p)  # a click (to inspect a link) must not turn the wheel into a zoom
    if p.title is not None:
        p.title.text_font_size = "13px"
    return p


_UNSELECT = "if (cores.selected.indices.length) cores.selected.indices = []"


def mesh_figure(
    hardware: Hardware,
    network: Network,
    evaluation: Evaluation,
    *,
    color_by: str = "messages",
    title: str | None = None,
    simulated: dict | None = None,
    mesh: int | str | None = None,
    max_frame: tuple[int, int] = (560, 720),
):
    """A Bokeh figure of the mesh, and the sources to refresh it: ``(figure, sources)``.
    ``simulated``: a simulated step's ``link_figures()``, for its colour modes and tooltips;
    ``mesh``: the parallel mesh the links show (``link_columns``); ``max_frame``: the most
    the mesh's frame may take, (width, height) in px (Compare's meshes are smaller, to stand
    side by side)."""
    gw, gh = hardware.grid_width, hardware.grid_height
    ppr = _pixels_per_router(hardware, *max_frame)
    link_px = max(1.0, 0.045 * ppr)
    sources = _MeshSources(
        hardware, network, evaluation, link_px=link_px, color_by=color_by, simulated=simulated,
        mesh=mesh,
    )  # fmt: skip
    pad = MESH_PAD
    x0, x1, y0, y1 = chip_view(hardware)  # the whole board; row 0 at the top
    p = mesh_canvas(
        hardware, title=title,
        frame_width=int(round(ppr * (gw - 1 + 2 * pad))),
        frame_height=int(round(ppr * (gh - 1 + 2 * pad))),
        x_range=Range1d(x0, x1, bounds="auto"), y_range=Range1d(y0, y1, bounds="auto"),
        tools="pan,wheel_zoom,box_zoom,reset,save", border_fill_color="white",
        min_border_left=40,
    )  # fmt: skip
    if p.title is not None:
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
            renderers=[target], line_policy="interp", tooltips=_link_tooltips(hardware),
            formatters=link_formats, attachment=attachment,
        ))  # fmt: skip
    p.toolbar.active_drag = drag
    # the toolbar's own (``p.select_one`` would walk every model of the figure to find it)
    save = next(t for t in p.toolbar.tools if isinstance(t, SaveTool))
    save.filename = f"{network.name}-on-{hardware.name}"  # no prompt
    legend = _legend(p, network, link_px, hardware.links.meshes)
    # under the mesh, in columns: beside it at 1366 px the flows of a clicked link need
    # the room (issue 57: they opened a screen further down, the routes scrolled away)
    legend.ncols = 3
    p.add_layout(legend, "below")
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


def _link_tooltips(hardware: Hardware) -> list:
    """``_LINK_TOOLTIPS``, and on parallel meshes each mesh's messages and which is busier
    (what times the link)."""
    if hardware.links.meshes < 2:
        return _LINK_TOOLTIPS
    rows = list(_LINK_TOOLTIPS)
    rows[2] = ("messages / step", "@messages{0,0.0} over both meshes")
    each = " · ".join(f"mesh {m}: @mesh_{m}{{0,0.0}}" for m in range(hardware.links.meshes))
    rows.insert(3, ("per mesh", f"{each} (busier: mesh @busier, it times the link)"))
    return rows


# A node's name as ``mesh_columns`` writes it: "(x,y)" for a router (global coordinates),
# "(x,y):s" for a core; the value is a node ({node}) or a core id ({core}).
_ADDRESS = """
const i = format == "core" ? value + routers : value;
return `(${x[i]},${y[i]})` + (slot[i] >= 0 ? `:${slot[i]}` : "");
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
return `, buffer peak ${Math.round(value)} of ${capacity} flits`;
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


def _legend(p, network: Network, link_px: float, meshes: int = 1) -> Legend:
    """Population colours, empty cores, idle and heaviest links, bottleneck core, and the
    notation of routers and cores every caption, tooltip and table uses: stand-ins.

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
    notation = _draw(p, points, Scatter(x="x", y="y", marker="dot", size=1, line_color=None))
    items += [
        LegendItem(label="idle link", renderers=[idle]),
        # pink: what the caption calls "the pink link" / "the core outlined in pink"
        LegendItem(
            label="pink link: busiest in time" + (" (its busier mesh)" if meshes > 1 else ""),
            renderers=[hot],
        ),
        LegendItem(label="pink core: bounds the step", renderers=[hot_core]),
        LegendItem(label="(x,y) router · (x,y):s core in slot s", renderers=[notation]),
    ]
    return Legend(
        items=items, title="cores by population", location="top_left",
        label_text_font_size="12px", title_text_font_style="bold", border_line_color=None,
        glyph_width=18, glyph_height=16, label_height=16, spacing=2,
    )  # fmt: skip
