"""The bottleneck view: which term of the max-affine model bounds the step, and where.

Three parts, each a function of the evaluation (plain numpy, tested without a browser)
drawn by ``BottleneckView``:

* ``core_term_columns``: the DendOps, SynOps and SynMem time of every used core, the
  cores sorted by their largest term, drawn as grouped bars with the link term and
  the barrier as horizontal reference lines;
* ``heaviest_links``: the top links by time per step (``np.argpartition``, never a
  Python loop over all links), drawn as a table;
* the roofline of the Loihi 2 runtime model paper's Fig. 5b: the current mapping, the
  starting one and every mapping a search evaluated, placed by ``engine.evaluation.roofline``.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

import numpy as np
import panel as pn
import param
from bokeh.models import (
    BoxAnnotation,
    ColumnDataSource,
    FactorRange,
    FixedTicker,
    HoverTool,
    Label,
    Legend,
    LegendItem,
    NumeralTickFormatter,
    Range1d,
    Span,
)
from bokeh.plotting import figure
from bokeh.transform import dodge, factor_cmap

from engine.evaluation.cost import TERM_LABELS, TERMS, Evaluation
from engine.evaluation.flows import core_label, router_label
from engine.evaluation.roofline import ridge, roof, roofline_constants, roofline_point, roofline_xy
from engine.hardware import CORE_TO_ROUTER, DIRECTIONS, LINK_KINDS, OFF_CHIP, ROUTER, Hardware
from engine.model.network import Network
from engine.search import Record
from explorer.state import ExplorerState
from explorer.views._page import FONT, on_page, style_figure
from explorer.views.search_plots import BEST_COLOR, RowStreamer

__all__ = [
    "BottleneckView",
    "CORE_TERMS",
    "TERM_COLORS",
    "TERM_LABELS",
    "bound_sentence",
    "core_term_columns",
    "heaviest_links",
    "links_table_html",
    "log_ticks",
    "search_roofline_columns",
]

CORE_TERMS = ("dendops", "synops", "synmem")
TERM_COLORS = {
    "dendops": "#76b7b2",
    "synops": "#4e79a7",
    "synmem": "#b07aa1",
    "link": "#e6550d",
    "barrier": "#9ca3af",
}
MAX_BAR_CORES = 400  # beyond this the bars are hairs; the axis label says how many are shown
TOP_LINKS = 15


# ------------------------------------------------------------------ (a) terms per core
def _core_labels(hardware: Hardware, cores: np.ndarray) -> list[str]:
    """Cores as every view names them: ``(x,y):s`` (``engine.evaluation.flows.core_label``)."""
    return [core_label(hardware, c) for c in np.asarray(cores).tolist()]


def core_term_columns(
    hardware: Hardware, network: Network, evaluation: Evaluation, *, limit: int | None = None
) -> dict[str, np.ndarray]:
    """One row per used core, the busiest first: its DendOps, SynOps and SynMem time (µs).

    Rows are sorted by the core's largest term, then by core id; ``limit`` keeps the
    first rows only.
    """
    terms = np.column_stack([evaluation.core_terms_us[t] for t in CORE_TERMS]).reshape(-1, 3)
    largest = terms.max(axis=1, initial=0.0)
    order = np.lexsort((evaluation.cores, -largest))[:limit]
    cores = evaluation.cores[order]
    names = np.asarray(network.population_names, dtype=object)
    return {
        "core": _core_labels(hardware, cores),
        "core_id": cores,
        "population": names[evaluation.population[order]],
        "neurons": evaluation.neurons[order],
        **{f"{t}_us": terms[order, i] for i, t in enumerate(CORE_TERMS)},
        "largest_us": largest[order],
        "largest": np.asarray(CORE_TERMS, dtype=object)[terms[order].argmax(axis=1)],
    }


def bound_sentence(hardware: Hardware, evaluation: Evaluation) -> str:
    """Which term of eq. 1 bounds the step, and on which core or link."""
    term = evaluation.bottleneck
    t = evaluation.latency_us
    where = ""
    if evaluation.bottleneck_core >= 0 and term in CORE_TERMS:
        where = f" on core {_core_labels(hardware, np.array([evaluation.bottleneck_core]))[0]}"
    elif term == "link" and evaluation.bottleneck_link >= 0:
        row = _link_rows(hardware, evaluation, np.array([evaluation.bottleneck_link]))
        where = f" on the {row['kind'][0]} link {row['from'][0]} → {row['to'][0]}"
    return f"T = {t:,.3f} µs / step, bounded by {TERM_LABELS[term]}{where}"


# ------------------------------------------------------------------ (b) heaviest links
def _link_rows(hardware: Hardware, evaluation: Evaluation, ids: np.ndarray) -> dict:
    """Kind, direction and end points of a few links (a loop over ``ids`` only)."""
    lt = hardware.link_table
    kinds, directions, src, dst = [], [], [], []
    for i in ids.tolist():
        k = int(lt["kind"][i])
        a = router_label(hardware, int(lt["src_router"][i]))
        b = router_label(hardware, int(max(lt["dst_router"][i], 0)))
        if k == CORE_TO_ROUTER:
            a = core_label(hardware, int(lt["core"][i]))
        elif k not in (ROUTER, OFF_CHIP):
            b = core_label(hardware, int(lt["core"][i]))
        kinds.append(LINK_KINDS[k])
        directions.append(DIRECTIONS[i % 4] if k in (ROUTER, OFF_CHIP) else "")
        src.append(a)
        dst.append(b)
    return {"kind": kinds, "direction": directions, "from": src, "to": dst}


def heaviest_links(
    hardware: Hardware, evaluation: Evaluation, k: int = TOP_LINKS
) -> dict[str, np.ndarray | list]:
    """The ``k`` links that are busiest (in time per step), heaviest first.

    Only links that carry messages count; ties are broken by link id, so the result
    equals a full sort by ``(-link_us, id)``. Vectorized: ``np.argpartition`` finds the
    k-th largest time, and only the links at or above it are sorted.
    """
    us = evaluation.link_us
    ids = np.flatnonzero((hardware.link_table["kind"] >= 0) & (evaluation.link_messages > 0))
    if ids.size > k > 0:
        values = us[ids]
        kth = values[np.argpartition(values, ids.size - k)[ids.size - k]]
        ids = ids[values >= kth]  # ties at the cut stay candidates
    ids = ids[np.lexsort((ids, -us[ids]))][: max(k, 0)]
    return {
        "link": ids,
        **_link_rows(hardware, evaluation, ids),
        "messages": evaluation.link_messages[ids],
        "utilization": evaluation.link_utilization[ids],
        "us": us[ids],
    }


_TABLE_CSS = f"""
.links {{ font-family: {FONT}; font-size: 12.5px; color: #1f2933; border-collapse: collapse;
         width: 100%; }}
.links th {{ text-align: left; font-weight: 600; color: #4b5563; font-size: 12px;
            padding: 5px 8px;
            border-bottom: 2px solid #e3e6ea; white-space: nowrap; }}
.links td {{ padding: 4px 8px; border-bottom: 1px solid #eef0f3; white-space: nowrap; }}
.links td.num {{ text-align: right; font-variant-numeric: tabular-nums; }}
.links tr.bound td {{ background: #fff0f7; }}
.links .bar {{ display: inline-block; height: 8px; background: #e6550d; border-radius: 2px;
              vertical-align: middle; margin-right: 6px; }}
.links .kind {{ color: #6b7280; }}
.links-title {{ font-family: {FONT}; font-size: 14px; font-weight: 600; color: #374151;
               margin-bottom: 4px; }}
.links-empty {{ font-family: {FONT}; font-size: 13px; color: #6b7280; }}
"""


def links_table_html(table: dict, bottleneck_link: int = -1) -> str:
    """``heaviest_links`` as an HTML table (``data-testid="heaviest-links"``)."""
    n = len(table["link"])
    title = f'<div class="links-title">The {n} heaviest links</div>'
    if n == 0:
        return title + '<div class="links-empty" data-testid="heaviest-links">No link carries ' \
            "a message: every partition talks only to itself.</div>"  # fmt: skip
    head = (
        "<tr><th>#</th><th>kind</th><th>from</th><th>to</th><th>messages / step</th>"
        "<th>utilization</th><th>time (µs)</th></tr>"
    )
    rows = []
    for r in range(n):
        kind = table["kind"][r] + (f" {table['direction'][r]}" if table["direction"][r] else "")
        util = float(table["utilization"][r])
        bound = ' class="bound"' if int(table["link"][r]) == bottleneck_link else ""
        rows.append(
            f"<tr{bound}><td>{r + 1}</td><td class='kind'>{escape(kind)}</td>"
            f"<td>{escape(table['from'][r])}</td><td>{escape(table['to'][r])}</td>"
            f"<td class='num'>{table['messages'][r]:,.1f}</td>"
            f"<td><span class='bar' style='width:{max(1.0, 70 * min(util, 1.0)):.0f}px'></span>"
            f"{util:.0%}</td><td class='num'>{table['us'][r]:,.3f}</td></tr>"
        )
    return f'{title}<table class="links" data-testid="heaviest-links">{head}{"".join(rows)}</table>'


# ------------------------------------------------------------------ (c) roofline


def log_ticks(start: float, end: float) -> list[float]:
    """The 1-2-5 values between ``start`` and ``end`` (Bokeh's log ticker falls back to
    linear ticks over a decade or two, which leaves the left of a log axis unlabelled)."""
    k = np.arange(np.floor(np.log10(start)), np.ceil(np.log10(end)) + 1)
    values = (np.array([1.0, 2.0, 5.0])[None, :] * 10.0 ** k[:, None]).ravel()
    return [float(v) for v in values if start <= v <= end]


def search_roofline_columns(hardware: Hardware, records: Sequence[Record]) -> dict[str, np.ndarray]:
    """``state.search.points`` (the search's Records, with the model's terms) as roofline
    columns x, y, bound, latency."""
    synops = np.array([r.terms_us.get("synops", np.nan) for r in records], dtype=float)
    link = np.array([r.terms_us.get("link", np.nan) for r in records], dtype=float)
    latency = np.array([r.latency_us for r in records], dtype=float)
    x, y = roofline_xy(hardware, synops, link, latency)
    return {
        "x": x,
        "y": y,
        "bound": np.array([r.bottleneck for r in records], dtype=object),
        "latency_us": latency,
    }


# ------------------------------------------------------------------ drawing
_CORE_COLUMNS = ("core", "core_id", "population", "neurons",
                 *(f"{t}_us" for t in CORE_TERMS), "largest_us", "largest")  # fmt: skip


class _TermsPlot:
    """Grouped bars of the three compute terms per core, link and barrier as lines."""

    def __init__(self):
        # every column the bars and the tooltip name, empty: Bokeh warns of a missing one;
        # the toolbar below, as the title (which names the bound) grows under it above
        self.source = ColumnDataSource(data={k: [] for k in _CORE_COLUMNS})
        p = figure(
            x_range=FactorRange(factors=[]), y_range=Range1d(0, 1), height=340,
            sizing_mode="stretch_width",  # as wide as the tab: every core's bars, no scroll
            tools="xpan,xwheel_zoom,reset,save", toolbar_location="below",
            title="Max-affine terms per core (Loihi 2 runtime model eq. 1)",
            border_fill_color="white",
        )  # fmt: skip
        style_figure(p, "core (x, y, slot), busiest first", "time per step (µs)")
        p.xaxis.major_label_orientation = 1.0
        p.xaxis.major_label_text_font_size = "10px"
        p.xgrid.grid_line_color = None
        items = []
        for offset, term in zip((-0.27, 0.0, 0.27), CORE_TERMS, strict=True):
            r = p.vbar(
                x=dodge("core", offset, range=p.x_range), top=f"{term}_us", width=0.26,
                source=self.source, fill_color=TERM_COLORS[term], line_color=None,
                name=f"bars-{term}",
            )  # fmt: skip
            items.append(LegendItem(label=TERM_LABELS[term], renderers=[r]))
        self.lines = {}
        for term, dash in (("link", "dashed"), ("barrier", "dotted")):
            source = ColumnDataSource(data={"y": []})
            r = p.hspan(y="y", source=source, line_color=TERM_COLORS[term], line_width=2,
                        line_dash=dash)  # fmt: skip
            item = LegendItem(label=TERM_LABELS[term], renderers=[r])
            items.append(item)
            self.lines[term] = (source, item)
        p.add_layout(
            Legend(items=items, orientation="horizontal", border_line_color=None,
                   label_text_font_size="12px", spacing=14, margin=0, padding=4),
            "above",
        )  # fmt: skip
        p.add_tools(
            HoverTool(
                tooltips=[
                    ("core", "@core (@population)"),
                    ("neurons", "@neurons{0,0}"),
                    ("DendOps", "@dendops_us{0,0.000} µs"),
                    ("SynOps", "@synops_us{0,0.000} µs"),
                    ("SynMem reads", "@synmem_us{0,0.000} µs"),
                ]
            )
        )
        self.figure = p

    def update(self, hardware: Hardware, network: Network, evaluation: Evaluation) -> int:
        cols = core_term_columns(hardware, network, evaluation, limit=MAX_BAR_CORES)
        self.source.data = cols
        p = self.figure
        p.x_range.factors = list(cols["core"])
        address = "(x,y):slot"
        shown = len(cols["core"])
        p.xaxis.axis_label = (
            f"core {address}, busiest first"
            if shown == evaluation.cores_used
            else f"core {address}: the {shown} busiest of {evaluation.cores_used}"
        )
        terms = evaluation.terms_us
        top = max(float(cols["largest_us"].max(initial=0.0)), terms["link"], terms["barrier"])
        p.y_range.update(start=0, end=1.12 * top if top > 0 else 1.0)
        for term, (source, item) in self.lines.items():
            source.data = {"y": [terms[term]]}
            what = "heaviest link" if term == "link" else "barrier sync"
            item.label = {"value": f"{what} {terms[term]:,.3f} µs"}
        p.title.text = "Max-affine terms per core — " + bound_sentence(hardware, evaluation)
        return shown


_MARKS = {  # key: (label, marker, size, colour); drawn in this order, the current one on top
    "start": ("starting mapping", "diamond", 17, "#6b7280"),
    "reference": ("reference", "square", 13, "#2b8cbe"),
    "best": ("best of the search", "star", 22, BEST_COLOR),
    "current": ("current mapping", "circle", 20, None),  # a ring: what it covers shows
}
_RING = {"line_color": "#1f2933", "line_width": 2.5}


class _RooflinePlot:
    """Loihi 2 runtime model Fig. 5b: the roof from the hardware, the mappings under it."""

    def __init__(self):
        self.roof = ColumnDataSource(data={"x": [], "y": []})
        self.search = ColumnDataSource(
            name="roofline-search", data={k: [] for k in ("x", "y", "bound", "latency_us")}
        )
        self.marks = {k: ColumnDataSource(data=self._mark_columns([])) for k in _MARKS}
        p = figure(
            x_axis_type="log", y_axis_type="log", width=700, height=560,
            x_range=Range1d(1e-3, 1), y_range=Range1d(1, 1e4),
            tools="pan,wheel_zoom,box_zoom,reset,save", toolbar_location="below",
            title="Roofline (Loihi 2 runtime model Fig. 5b)", border_fill_color="white",
        )  # fmt: skip
        style_figure(
            p,
            "operational intensity N_SO / N_LL (SynOps / bit)",
            "achieved performance N_SO / T (SynOps / µs)",
        )
        p.xaxis.ticker = FixedTicker(ticks=[])  # 1-2-5 ticks, set with the ranges
        p.yaxis.ticker = FixedTicker(ticks=[])
        p.xaxis.formatter = NumeralTickFormatter(format="0.[0000]")
        p.yaxis.formatter = NumeralTickFormatter(format="0,0.[00]")
        self.slope_box = BoxAnnotation(fill_color=TERM_COLORS["link"], fill_alpha=0.05,
                                       line_color=None)  # fmt: skip
        self.flat_box = BoxAnnotation(fill_color=TERM_COLORS["synops"], fill_alpha=0.05,
                                      line_color=None)  # fmt: skip
        p.add_layout(self.slope_box)
        p.add_layout(self.flat_box)
        self.ridge = Span(dimension="height", line_color="#9ca3af", line_dash="dotted",
                          line_width=1.5, location=1)  # fmt: skip
        p.add_layout(self.ridge)
        self.labels = {
            "slope": Label(x=0, y=0, text="", text_font_size="12px", text_align="right",
                           text_color="#1f2933", x_offset=-12, y_offset=4),
            "flat": Label(x=0, y=0, text="", text_font_size="12px",
                          text_color="#1f2933", x_offset=8, y_offset=6),
            "left": Label(x=10, y=10, x_units="screen", y_units="screen",
                          text="under the slope: link-bound", text_font_size="11.5px",
                          text_color=TERM_COLORS["link"], text_font_style="italic"),
            "right": Label(x=0, y=10, y_units="screen", text="under the flat roof: SynOp-bound",
                           text_font_size="11.5px", text_color=TERM_COLORS["synops"],
                           text_font_style="italic", x_offset=8),
        }  # fmt: skip
        for label in self.labels.values():
            p.add_layout(label)
        p.line("x", "y", source=self.roof, line_color="#1f2933", line_width=2.5, name="roof")
        search = p.scatter(
            "x", "y", source=self.search, size=6, fill_alpha=0.45, line_color=None,
            fill_color=factor_cmap("bound", [TERM_COLORS[t] for t in TERMS], list(TERMS)),
            name="search-points",
        )  # fmt: skip
        # the legend draws stand-ins (one point at NaN, drawn nowhere): Bokeh draws no legend
        # glyph for an empty source, and a mark is empty until there is such a mapping
        nan = [np.nan]
        items = [
            LegendItem(label="searched mapping", renderers=[
                p.scatter(x=nan, y=nan, size=8, fill_color="#9ca3af", line_color=None)])
        ]  # fmt: skip
        for key, (label, marker, size, color) in _MARKS.items():
            line = {"line_color": "white", "line_width": 1.2} if color else _RING
            p.scatter(
                "x", "y", source=self.marks[key], marker=marker, size=size, fill_color=color,
                name=f"mark-{key}", **line,
            )  # fmt: skip
            stand_in = p.scatter(x=nan, y=nan, marker=marker, size=size, fill_color=color,
                                 **line)  # fmt: skip
            items.append(LegendItem(label=label, renderers=[stand_in]))
        for term in TERMS:
            stand_in = p.scatter(x=nan, y=nan, size=8, fill_color=TERM_COLORS[term],
                                 line_color=None)  # fmt: skip
            items.append(LegendItem(label=f"bound: {TERM_LABELS[term]}", renderers=[stand_in]))
        hover = [("N_SO / N_LL", "@x{0.0000} SynOps/bit"), ("N_SO / T", "@y{0,0.0} SynOps/µs")]
        p.add_tools(
            HoverTool(renderers=[search], tooltips=[*hover, ("bound", "@bound"),
                                                    ("latency", "@latency_us{0,0.000} µs")]),
            HoverTool(renderers=[r for r in p.renderers if (r.name or "").startswith("mark-")],
                      tooltips=[("", "@label"), *hover, ("bound", "@bound"),
                                ("latency", "@t_us{0,0.000} µs")]),
        )  # fmt: skip
        p.add_layout(
            Legend(items=items, border_line_color=None, label_text_font_size="12px",
                   glyph_height=24, glyph_width=24, label_height=20, spacing=0, ncols=3,
                   title="marker: which mapping · colour: what bounds it",
                   title_text_font_size="11.5px", title_text_font_style="normal",
                   title_text_color="#6b7280"),
            "below",
        )  # fmt: skip
        self.figure = p
        self._hardware = None
        self._search_x = (np.inf, -np.inf)
        self._search_y = np.inf
        self._streamer: RowStreamer | None = None

    @staticmethod
    def _mark_columns(points: list[dict]) -> dict:
        keys = ("x", "y", "t_us", "bound", "label")
        return {k: [p[k] for p in points] for k in keys}

    def set_hardware(self, hardware: Hardware) -> None:
        if hardware is self._hardware:
            return
        self._hardware = hardware
        self._streamer = RowStreamer(
            self.search, lambda rows: search_roofline_columns(hardware, rows)
        )
        t_so, b = roofline_constants(hardware)
        knee = ridge(hardware)
        xs = np.geomspace(knee * 1e-6, knee * 1e6, 3)
        xs = np.unique(np.concatenate([xs, [knee]]))
        self.roof.data = {"x": xs, "y": roof(hardware, xs)}
        self.ridge.location = knee
        self.slope_box.right = knee
        self.flat_box.left = knee
        self.labels["slope"].update(x=knee, y=1.0 / t_so, text=f"slope B = {b:,.0f} bits / µs")
        self.labels["flat"].update(
            x=knee, y=1.0 / t_so, text=f"1 / T_SO = {1 / t_so:,.0f} SynOps / µs"
        )
        self.labels["right"].x = knee

    def update_marks(self, hardware: Hardware, evaluations: dict[str, Evaluation | None]) -> None:
        self.set_hardware(hardware)
        for key, (label, *_rest) in _MARKS.items():
            ev = evaluations.get(key)
            point = roofline_point(hardware, ev) if ev is not None else None
            rows = [{**point, "label": label}] if point and np.isfinite(point["x"]) else []
            self.marks[key].data = self._mark_columns(rows)
        self._fit()

    def update_search(self, hardware: Hardware, rows: Sequence[tuple]) -> None:
        self.set_hardware(hardware)
        new = self._streamer.update(rows)
        if self._streamer.replaced:
            self._search_x, self._search_y = (np.inf, -np.inf), np.inf
        if len(new):
            cols = search_roofline_columns(hardware, new)
            x, y = cols["x"][np.isfinite(cols["x"])], cols["y"][np.isfinite(cols["y"])]
            if x.size:
                self._search_x = (min(self._search_x[0], x.min()), max(self._search_x[1], x.max()))
                self._search_y = min(self._search_y, y.min())
        self._fit()

    def _fit(self) -> None:
        """Ranges that show the knee, every point and a margin (log axes do not auto-fit well)."""
        if self._hardware is None:
            return
        t_so, _ = roofline_constants(self._hardware)
        knee = ridge(self._hardware)
        xs = [knee, *self._search_x] if np.isfinite(self._search_x[0]) else [knee]
        ys = [self._search_y] if np.isfinite(self._search_y) else []
        for src in self.marks.values():
            xs += list(src.data["x"])
            ys += list(src.data["y"])
        lo, hi = min(xs), max(*xs, 4 * knee)  # the flat roof always shows
        pad = max(hi / lo, 10.0) ** 0.08
        self.figure.x_range.update(start=lo / pad, end=hi * pad)
        self.figure.xaxis.ticker.ticks = log_ticks(lo / pad, hi * pad)
        y_lo = min([*ys, 1.0 / t_so / 10])
        self.figure.y_range.update(start=y_lo / 2.5, end=2.2 / t_so)
        self.figure.yaxis.ticker.ticks = log_ticks(y_lo / 2.5, 2.2 / t_so)
        self.labels["right"].x = knee


_CAPTION_CSS = f"""
.bn-caption {{ font-family: {FONT}; font-size: 12.5px; color: #4b5563; line-height: 1.45;
              max-width: 620px; }}
.bn-caption b {{ color: #1f2933; }}
"""


class BottleneckView(pn.viewable.Viewer):
    """What bounds the step: the terms per core, the heaviest links, and the roofline."""

    state = param.ClassSelector(class_=ExplorerState)

    def __init__(self, **params):
        super().__init__(**params)
        self.terms_plot = _TermsPlot()
        self.roofline = _RooflinePlot()
        self._links = pn.pane.HTML("", stylesheets=[_TABLE_CSS], width=640)
        self._caption = pn.pane.HTML("", stylesheets=[_CAPTION_CSS], width=640)
        self.link_table: dict = {}
        s = self.state
        s.watch(self._on_evaluation, shown=["evaluation"], inputs=["hardware"])
        s.watch(
            self._on_marks,
            shown=["start_evaluation", "reference_evaluation"],
            search=["best_evaluation"],
        )
        s.search.param.watch(self._on_search, ["points"])
        self._on_evaluation()
        self._on_search()

    @on_page
    def _on_evaluation(self, *events) -> None:
        s = self.state
        if s.evaluation is None:
            return
        self.terms_plot.update(s.hardware, s.network, s.evaluation)
        self.link_table = heaviest_links(s.hardware, s.evaluation)
        self._links.object = links_table_html(self.link_table, s.evaluation.bottleneck_link)
        self._on_marks()

    @on_page
    def _on_marks(self, *events) -> None:
        s = self.state
        if s.evaluation is None:
            return
        self.roofline.update_marks(
            s.hardware,
            {
                "current": s.evaluation,
                "start": s.shown.start_evaluation,
                "reference": s.shown.reference_evaluation,
                "best": s.search.best_evaluation,
            },
        )
        self._caption.object = self._caption_html()

    @on_page
    def _on_search(self, *events) -> None:
        s = self.state
        if s.hardware is not None:
            self.roofline.update_search(s.hardware, s.search.points)

    def _caption_html(self) -> str:
        s = self.state
        point = roofline_point(s.hardware, s.evaluation)
        t_so, b = roofline_constants(s.hardware)
        if not np.isfinite(point["x"]):
            where = (
                "The current mapping is not on the roofline: it has no SynOps or no link traffic."
            )
        else:
            cap = float(roof(s.hardware, point["x"]))
            side = "sloped (link-bound)" if point["x"] < ridge(s.hardware) else "flat (SynOp-bound)"
            where = (
                f"The current mapping does N<sub>SO</sub> = {point['n_so']:,.0f} SynOps on its "
                f"busiest core and N<sub>LL</sub> = {point['n_ll_bits']:,.0f} bits over its "
                f"heaviest link: x = {point['x']:.3g} SynOps/bit, under the {side} part of the "
                f"roof, at {point['y']:,.0f} SynOps/µs: {point['y'] / cap:.0%} of the "
                f"{cap:,.0f} the roof allows at that intensity."
            )
        return (
            f'<div class="bn-caption"><b>How to read the roofline.</b> A point on the slope '
            f"is bound by its heaviest link (B = {b:,.0f} bits/µs), on the flat part by "
            f"SynOps (T<sub>SO</sub> = {t_so * 1e3:g} ns); a point below both is bound by "
            f"DendOps, SynMem reads or the barrier. {where}</div>"
        )

    def __panel__(self):
        return pn.Column(
            pn.pane.Bokeh(self.terms_plot.figure, sizing_mode="stretch_width"),
            # one under the other: a wrapping FlexBox laid the roofline out while its tab
            # was hidden, at 0 × 0, and never again (its legend then lay over the sidebar)
            self._links,
            self._caption,
            pn.pane.Bokeh(self.roofline.figure),
            name="Bottlenecks",
            sizing_mode="stretch_width",
        )
