"""The mesh view: routers on their global grid, cores around them, every link by load.

``mesh_figure`` draws the columns of ``explorer.views.mesh_columns`` with Bokeh;
``MeshView`` keeps one figure in step with an ``ExplorerState``: a new evaluation
refreshes the sources in place, new hardware builds a new figure.
"""

from __future__ import annotations

from html import escape

import numpy as np
import panel as pn
import param
from bokeh.models import (
    BasicTicker,
    ColorBar,
    ColumnDataSource,
    FixedTicker,
    HoverTool,
    LabelSet,
    Legend,
    LegendItem,
    LinearColorMapper,
    NumeralTickFormatter,
    Range1d,
)
from bokeh.plotting import figure

from engine.cost import Evaluation
from engine.hardware import Hardware
from engine.network import Network
from explorer.state import ExplorerState
from explorer.views.mesh_columns import (
    BOTTLENECK_COLOR,
    EMPTY_COLOR,
    IDLE_COLOR,
    LOAD_PALETTE,
    ROUTER_SIZE,
    TILE_SIZE,
    bottleneck_columns,
    bottleneck_text,
    chip_columns,
    core_columns,
    core_size,
    link_columns,
    population_colors,
    router_columns,
)

__all__ = ["MeshView", "mesh_figure"]


def _data(columns: dict) -> dict:
    """Columns as lists or arrays Bokeh serializes (object arrays become lists)."""
    return {k: (v.tolist() if v.dtype == object else v) for k, v in columns.items()}


# ------------------------------------------------------------------ drawing
def _pixels_per_router(hardware: Hardware, max_width=900, max_height=620) -> float:
    ppr = min(max_width / hardware.grid_width, max_height / hardware.grid_height)
    return float(np.clip(ppr, 8, 100))


class _MeshSources:
    """The ColumnDataSources of one figure, refreshed in place when the evaluation changes."""

    def __init__(self, hardware, network, evaluation, *, link_px: float):
        self.link_px = link_px
        self.cores = ColumnDataSource()
        self.links = ColumnDataSource()
        self.bottleneck = ColumnDataSource()
        self.mapper = LinearColorMapper(palette=list(LOAD_PALETTE), low=0)
        self.update(hardware, network, evaluation)

    def update(self, hardware: Hardware, network: Network, evaluation: Evaluation) -> None:
        links = link_columns(hardware, evaluation)
        links["width_px"] = links["width"] * self.link_px
        on_mesh = (links["kind"] == "router") | (links["kind"] == "off-chip")
        links["arrow_px"] = np.where(
            on_mesh & links["loaded"], links["width"] * self.link_px * 2.2, 0
        )
        self.cores.data = _data(core_columns(hardware, network, evaluation))
        self.links.data = _data(links)
        self.bottleneck.data = _data(bottleneck_columns(links, evaluation))
        vmax = float(links["messages"].max()) if links["messages"].size else 0.0
        self.mapper.high = vmax if vmax > 0 else 1.0


def mesh_figure(
    hardware: Hardware,
    network: Network,
    evaluation: Evaluation,
    *,
    title: str = "Mesh: cores by population, links by load",
):
    """A Bokeh figure of the mesh, and the sources to refresh it: ``(figure, sources)``."""
    gw, gh = hardware.grid_width, hardware.grid_height
    ppr = _pixels_per_router(hardware)
    link_px = max(1.0, 0.045 * ppr)
    sources = _MeshSources(hardware, network, evaluation, link_px=link_px)
    pad = 0.62
    p = figure(
        title=title,
        width=None,  # the frame size decides
        height=None,
        frame_width=int(round(ppr * (gw - 1 + 2 * pad))),
        frame_height=int(round(ppr * (gh - 1 + 2 * pad))),
        x_range=Range1d(-pad, gw - 1 + pad, bounds="auto"),
        y_range=Range1d(gh - 1 + pad, -pad, bounds="auto"),  # row 0 at the top
        tools="pan,wheel_zoom,box_zoom,reset,save",
        toolbar_location="above",
        background_fill_color="#fbfbfb",
        border_fill_color="white",
        outline_line_color=None,
    )
    _style_axes(p, gw, gh)
    p.toolbar.logo = None
    p.title.text_font_size = "14px"
    p.title.text_color = "#374151"

    routers = ColumnDataSource(router_columns(hardware))
    p.rect(
        "x", "y", width=TILE_SIZE, height=TILE_SIZE, source=routers, fill_color="#eef1f5",
        line_color="#dde2e8", border_radius=max(2, int(0.08 * ppr)),
    )  # fmt: skip
    if hardware.n_chips > 1:
        _draw_chips(p, hardware)
    p.scatter(
        "x", "y", source=routers, marker="square",
        size=max(3.0, ROUTER_SIZE * ppr), fill_color="#3d3d3d", line_color=None,
    )  # fmt: skip
    halo = p.segment(
        "x0", "y0", "x1", "y1", source=sources.bottleneck, name="bottleneck",
        line_color=BOTTLENECK_COLOR,
        line_width=link_px * 4.5, line_alpha=0.45, line_cap="round",
    )  # fmt: skip
    links = p.segment(
        "x0", "y0", "x1", "y1", source=sources.links, name="links", line_color="color",
        line_width="width_px", line_dash="dash",
    )  # fmt: skip
    p.scatter(
        "xm", "ym", source=sources.links, marker="triangle", angle="angle", size="arrow_px",
        fill_color="color", line_color=None,
    )  # fmt: skip
    cores = p.scatter(
        "x", "y", source=sources.cores, name="cores", marker="square",
        size=core_size(hardware.cores_per_router) * ppr, fill_color="color",
        line_color="line_color", line_width=1,
    )  # fmt: skip
    p.add_tools(
        HoverTool(renderers=[cores], tooltips=_CORE_TOOLTIPS),
        HoverTool(renderers=[links, halo], line_policy="interp", tooltips=_LINK_TOOLTIPS),
    )
    p.add_layout(_legend(p, network, link_px), "right")
    p.add_layout(
        ColorBar(
            color_mapper=sources.mapper, title="messages / step", title_text_font_size="12px",
            title_text_font_style="bold", height=12, major_label_text_font_size="11px",
            padding=10, title_standoff=6, bar_line_color=None, orientation="horizontal",
            major_tick_line_color="#555555", ticker=BasicTicker(desired_num_ticks=6),
            formatter=NumeralTickFormatter(format="0,0"),
        ),
        "below",
    )  # fmt: skip
    return p, sources


_CORE_TOOLTIPS = [
    ("core", "@address (id @core)"),
    ("population", "@population"),
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
    ("link", "@kind @direction (id @link)"),
    ("from → to", "@src → @dst"),
    ("messages / step", "@messages{0,0.0}"),
    ("utilization", "@utilization{0.0%}"),
]


def _draw_chips(p, hardware: Hardware) -> None:
    chips = ColumnDataSource(chip_columns(hardware))
    p.rect(
        "x", "y", "width", "height", source=chips, fill_color=None, line_color="#5b6b7c",
        line_width=2, line_dash="dashed",
    )  # fmt: skip
    p.add_layout(
        LabelSet(
            x="label_x", y="label_y", text="label", source=chips, text_font_size="11px",
            text_color="#3b4754", text_baseline="top", background_fill_color="white",
            background_fill_alpha=0.85, x_offset=2, y_offset=-2,
        )
    )  # fmt: skip


def _style_axes(p, gw: int, gh: int) -> None:
    p.xgrid.visible = p.ygrid.visible = False
    p.xaxis.axis_label, p.yaxis.axis_label = "router x", "router y"
    for axis, n in ((p.xaxis, gw), (p.yaxis, gh)):
        axis.ticker = FixedTicker(ticks=list(range(0, n, max(1, n // 16))))
        axis.axis_line_color = axis.major_tick_line_color = axis.minor_tick_line_color = None
        axis.major_label_text_color = "#777777"
        axis.axis_label_text_color = "#555555"
        axis.axis_label_text_font_style = "normal"


def _legend(p, network: Network, link_px: float) -> Legend:
    """Population colours, empty cores, idle and bottleneck links, from stand-in renderers.

    Each stand-in holds one point at NaN (drawn nowhere), so the legend never depends on
    which cores hold which population and a new placement cannot leave it stale.
    """
    nan = [float("nan")]
    items = []
    colors = [*population_colors(network.n_populations), EMPTY_COLOR]
    labels = [*network.population_names, "empty core"]
    for label, color in zip(labels, colors, strict=True):
        stand_in = p.rect(
            x=nan, y=nan, width=1, height=1, fill_color=color,
            line_color="#c8c8c8" if color == EMPTY_COLOR else color,
        )  # fmt: skip
        items.append(LegendItem(label=label, renderers=[stand_in]))
    idle = p.segment(x0=nan, y0=nan, x1=nan, y1=nan, line_color=IDLE_COLOR, line_width=link_px)
    hot = p.segment(
        x0=nan, y0=nan, x1=nan, y1=nan, line_color=BOTTLENECK_COLOR, line_alpha=0.45,
        line_width=link_px * 3, line_cap="round",
    )  # fmt: skip
    items += [
        LegendItem(label="idle link", renderers=[idle]),
        LegendItem(label="bottleneck link", renderers=[hot]),
    ]
    return Legend(
        items=items, title="cores by population", location="top_left",
        label_text_font_size="12px", title_text_font_style="bold", border_line_color=None,
        glyph_width=18, glyph_height=16, label_height=16, spacing=2,
    )  # fmt: skip


_CAPTION_CSS = """
.mesh-caption { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
                font-size: 13px; color: #4b5563; border-left: 4px solid #ff1f8e;
                padding: 2px 10px; }
.mesh-hint { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
             font-size: 12px; color: #6b7280; padding: 4px 14px 0; }
"""


class MeshView(pn.viewable.Viewer):
    """The mesh of a state's hardware, kept in step with its evaluation."""

    state = param.ClassSelector(class_=ExplorerState)

    def __init__(self, **params):
        super().__init__(**params)
        self._hardware = None
        self._sources = None
        self._pane = pn.pane.Bokeh(margin=(0, 10))
        self._caption = pn.pane.HTML("", stylesheets=[_CAPTION_CSS], margin=(0, 10))
        self._refresh()
        self.state.param.watch(self._refresh, ["evaluation"])

    def _refresh(self, *events) -> None:
        s = self.state
        if s.evaluation is None:
            self._pane.object = None
            self._caption.object = ""
            return
        self._caption.object = (
            f'<div class="mesh-caption" data-testid="mesh-caption">'
            f"{escape(bottleneck_text(s.hardware, s.evaluation))}</div>"
            '<div class="mesh-hint">Each direction of a link has its own lane; arrows show '
            "the direction of travel. Hover over a core or a link for its numbers.</div>"
        )
        if s.hardware is self._hardware and self._sources is not None:
            self._sources.update(s.hardware, s.network, s.evaluation)
            return
        fig, self._sources = mesh_figure(s.hardware, s.network, s.evaluation)
        self._hardware = s.hardware
        self._pane.object = fig

    def __panel__(self):
        return pn.Column(self._pane, self._caption)
