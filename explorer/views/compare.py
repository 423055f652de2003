"""The compare view: the current mapping beside a reference, and where their link loads differ.

The reference is the starting mapping, the search's best, or an uploaded mapping file
(``ExplorerState.set_reference``). Three panels share one zoom: the current mesh and
the reference mesh (``explorer.views.mesh_figure.mesh_figure``), both coloured on one link-load
scale (``shared_load_scale``: a colour is the same load in both), and the per-link
difference of messages per step, current − reference, on a diverging colour map centred
on 0 (red: the current mapping sends more over that link; blue: fewer). Above them, the
two mappings' metrics and the change.

``summary_rows`` and ``link_difference_columns`` are plain numpy, tested without a
browser; a bad file is a notification and changes nothing.
"""

from __future__ import annotations

import math
from html import escape

import numpy as np
import panel as pn
import param
from bokeh.models import (
    BasicTicker,
    ColorBar,
    ColumnDataSource,
    HoverTool,
    Legend,
    LegendItem,
    LinearColorMapper,
    NumeralTickFormatter,
    PointDrawTool,
)
from bokeh.plotting import figure

from engine.errors import MeshScopeError
from engine.evaluation.cost import TERM_LABELS, Evaluation
from engine.hardware import Hardware
from engine.model.network import Network
from explorer.state import ExplorerState
from explorer.views._page import FONT, keep_tools, notify_error, off_page, on_page
from explorer.views.mesh_columns import (
    LOAD_PALETTE,
    TILE_SIZE,
    core_columns,
    core_size,
    interpolate_palette,
    link_columns,
    router_columns,
)
from explorer.views.mesh_figure import mesh_figure, share_view
from explorer.views.upload import UploadInput

__all__ = [
    "DIFF_PALETTE",
    "SAME_COLOR",
    "SHARED_SCALE_TITLE",
    "CompareView",
    "color_limit",
    "diverging_colors",
    "link_difference_columns",
    "shared_load_scale",
    "summary_html",
    "summary_rows",
]

_DIFF_ANCHORS = ("#2166ac", "#67a9cf", "#d1e5f0", "#f4f4f4", "#fddbc7", "#ef8a62", "#b2182b")
SAME_COLOR = "#d4d4d4"  # a link whose load did not change
CHANGED_CORE_COLOR = "#374151"
SHARED_SCALE_TITLE = "messages / step, both meshes"
# the most a Compare mesh's frame takes (width, height), px: the current mesh, the
# difference and the reference side by side beside the sidebar at 1366 px (issue 57)
MESH_FRAME = (190, 400)


DIFF_PALETTE = interpolate_palette(_DIFF_ANCHORS, 255)  # odd: the middle colour is exactly 0


# ------------------------------------------------------------------ data
def diverging_colors(delta: np.ndarray, vmax: float, palette=DIFF_PALETTE) -> np.ndarray:
    """Colour of each difference, binned like ``LinearColorMapper(low=-vmax, high=vmax)``;
    an unchanged link gets ``SAME_COLOR``."""
    delta = np.asarray(delta, dtype=float)
    n = len(palette)
    if vmax <= 0:
        return np.full(delta.size, SAME_COLOR, dtype=object)
    index = np.clip(np.floor((delta + vmax) / (2 * vmax) * n).astype(np.int64), 0, n - 1)
    colors = np.asarray(palette, dtype=object)[index]
    return np.where(delta != 0, colors, SAME_COLOR)


def shared_load_scale(*evaluations: Evaluation) -> float:
    """The top of the one link-load colour scale of several meshes: their heaviest link.

    Each mesh on its own scale would draw its heaviest link in the darkest colour
    however light it is, so the better mapping could look the hotter one.
    """
    return max((float(e.max_link_messages) for e in evaluations), default=0.0)


def color_limit(delta: np.ndarray, quantile: float = 0.95) -> float:
    """Where the diverging colours saturate: the ``quantile`` of the nonzero |Δ|.

    One link whose load collapsed would otherwise wash every other change out to near
    white; beyond the limit colours saturate (the line width still grows with |Δ|).
    """
    changed = np.abs(delta[delta != 0])
    return float(np.quantile(changed, quantile)) if changed.size else 0.0


def link_difference_columns(
    hardware: Hardware, current: Evaluation, reference: Evaluation
) -> dict[str, np.ndarray]:
    """One row per existing link: its segment (as the mesh view draws it) and the load of
    both mappings, ``delta = current − reference`` messages per step, colour and width.

    Colours run from −limit to +limit (``color_limit``), the width with |Δ| / max |Δ|.
    """
    cols = link_columns(hardware, current)
    ids = cols["link"]
    ref = reference.link_messages[ids]
    delta = cols["messages"] - ref
    vmax = float(np.abs(delta).max(initial=0.0))
    relative = np.abs(delta) / vmax if vmax > 0 else np.zeros(ids.size)
    on_mesh = (cols["kind"] == "router") | (cols["kind"] == "off-chip")
    keep = ("x0", "y0", "x1", "y1", "link", "kind", "direction", "src", "dst")
    return {
        **{k: cols[k] for k in keep},
        "current": cols["messages"],
        "reference": ref,
        "delta": delta,
        "color": diverging_colors(delta, color_limit(delta)),
        "width": np.where(on_mesh, 1.0, 0.55) * np.where(delta != 0, 1.0 + 1.6 * relative, 0.6),
    }


_SUMMARY = (  # key, label, unit, attribute
    ("latency", "latency", "µs / step", "latency_us"),
    ("energy", "energy", "µJ / step", "energy_uj"),
    ("power", "power", "W", "power_w"),
    ("bound", "bounding term", "", "bottleneck"),
    ("cores", "cores used", "", "cores_used"),
)


def _number(x: float) -> str:
    if not math.isfinite(x):
        return str(x)
    if abs(x) >= 1000:
        return f"{x:,.0f}"
    return f"{x:,.4g}" if abs(x) >= 1 else f"{x:.4g}"


def summary_rows(current: Evaluation, reference: Evaluation) -> list[dict]:
    """The metrics of both mappings and the change, as display-ready rows.

    Each row: key, label, unit, current, reference (text), change (text) and
    ``change_pct`` (float; None for the bounding term). Lower is better for every
    number here, so ``better`` is True when the current mapping is lower.
    """
    rows = []
    for key, label, unit, attr in _SUMMARY:
        a, b = getattr(current, attr), getattr(reference, attr)
        if key == "bound":
            rows.append(
                {"key": key, "label": label, "unit": unit, "current": TERM_LABELS[a],
                 "reference": TERM_LABELS[b], "change": "same" if a == b else "changed",
                 "change_pct": None, "better": None}
            )  # fmt: skip
            continue
        diff = float(a) - float(b)
        pct = 100.0 * diff / float(b) if b else (0.0 if diff == 0 else math.inf)
        text = str(int(diff)) if key == "cores" else _number(diff)
        rows.append(
            {"key": key, "label": label, "unit": unit,
             "current": str(a) if key == "cores" else _number(float(a)),
             "reference": str(b) if key == "cores" else _number(float(b)),
             "change": "no change" if diff == 0
                else ("+" if diff > 0 else "") + text + (f" ({pct:+.1f} %)" if b else ""),
             "change_pct": pct, "better": None if diff == 0 else diff < 0}
        )  # fmt: skip
    return rows


_CSS = f"""
.cmp {{ font-family: {FONT}; font-size: 13px; color: #1f2933; border-collapse: collapse; }}
.cmp th {{ text-align: right; font-weight: 600; color: #4b5563; font-size: 12px;
          padding: 4px 14px;
          border-bottom: 2px solid #e3e6ea; }}
.cmp th:first-child, .cmp td:first-child {{ text-align: left; }}
.cmp td {{ padding: 4px 14px; border-bottom: 1px solid #eef0f3; text-align: right;
          font-variant-numeric: tabular-nums; white-space: nowrap; }}
.cmp td .unit {{ color: #9ca3af; font-size: 11.5px; margin-left: 4px; }}
.cmp td.better {{ color: #1a7f37; font-weight: 600; }}
.cmp td.worse {{ color: #c2410c; font-weight: 600; }}
.cmp-ref {{ font-family: {FONT}; font-size: 13px; color: #374151; padding-top: 6px; }}
.cmp-ref b {{ color: #1f2933; }}
.cmp-note {{ font-family: {FONT}; font-size: 12px; color: #6b7280; max-width: 560px; }}
"""


def summary_html(rows: list[dict], reference_label: str) -> str:
    """``summary_rows`` as a table (``data-testid="compare-summary"``)."""
    head = (
        "<tr><th></th><th>current</th>"
        f"<th>reference: {escape(reference_label)}</th><th>change</th></tr>"
    )
    body = []
    for r in rows:
        unit = f"<span class='unit'>{escape(r['unit'])}</span>" if r["unit"] else ""
        cls = (
            "" if r["better"] is None else (" class='better'" if r["better"] else " class='worse'")
        )
        body.append(
            f"<tr data-testid='compare-{r['key']}'><td>{escape(r['label'])}</td>"
            f"<td>{escape(r['current'])}{unit}</td><td>{escape(r['reference'])}{unit}</td>"
            f"<td{cls}>{escape(r['change'])}</td></tr>"
        )
    return f'<table class="cmp" data-testid="compare-summary">{head}{"".join(body)}</table>'


# ------------------------------------------------------------------ drawing
_LINK_COLUMNS = ("x0", "y0", "x1", "y1", "link", "kind", "direction", "src", "dst", "current",
                 "reference", "delta", "color", "width", "width_px")  # fmt: skip
_CORE_COLUMNS = ("x", "y", "address", "population", "reference_population", "color",
                 "line_color", "line_width")  # fmt: skip


class _DifferencePlot:
    """The mesh once more, links coloured by current − reference messages per step."""

    def __init__(self, hardware: Hardware, network: Network, like):
        # every column the glyphs and tooltips name, empty until the first ``update``
        self.links = ColumnDataSource({k: [] for k in _LINK_COLUMNS})
        self.cores = ColumnDataSource({k: [] for k in _CORE_COLUMNS})
        self.mapper = LinearColorMapper(palette=list(DIFF_PALETTE), low=-1, high=1)
        ppr = like.frame_width / (like.x_range.end - like.x_range.start)
        self.link_px = max(1.0, 0.045 * ppr)
        p = figure(
            title="Δ load: current − reference",
            width=None, height=None, frame_width=like.frame_width,
            frame_height=like.frame_height, x_range=like.x_range, y_range=like.y_range,
            tools="pan,wheel_zoom,box_zoom,reset,save", toolbar_location=None,
            background_fill_color="#fbfbfb", border_fill_color="white",
            outline_line_color=None,
        )  # fmt: skip
        p.toolbar.logo = None
        keep_tools(p)  # no toolbar here: a click must not turn its wheel zoom on for good
        p.title.text_font_size = "14px"
        p.title.text_color = "#374151"
        p.axis.visible = False
        p.grid.visible = False
        routers = ColumnDataSource(router_columns(hardware))
        p.rect("x", "y", width=TILE_SIZE, height=TILE_SIZE, source=routers,
               fill_color="#eef1f5", line_color="#dde2e8")  # fmt: skip
        p.scatter("x", "y", source=routers, marker="square", size=max(3.0, 0.12 * ppr),
                  fill_color="#3d3d3d", line_color=None)  # fmt: skip
        links = p.segment("x0", "y0", "x1", "y1", source=self.links, line_color="color",
                          line_width="width_px", name="diff-links")  # fmt: skip
        cores = p.scatter(
            "x", "y", source=self.cores, marker="square", name="diff-cores",
            size=core_size(hardware.cores_per_router) * ppr, fill_color="color",
            fill_alpha=0.35, line_color="line_color", line_width="line_width",
        )  # fmt: skip
        changed = p.scatter(x=[np.nan], y=[np.nan], marker="square", size=12, fill_color="white",
                            line_color=CHANGED_CORE_COLOR, line_width=1.8)  # fmt: skip
        same = p.segment(x0=[np.nan], y0=[np.nan], x1=[np.nan], y1=[np.nan],
                         line_color=SAME_COLOR, line_width=self.link_px)  # fmt: skip
        p.add_layout(
            Legend(items=[LegendItem(label="core holds something else", renderers=[changed]),
                          LegendItem(label="same load", renderers=[same])],
                   location="top_left", border_line_color=None, label_text_font_size="12px",
                   background_fill_alpha=0.9),
            "below",
        )  # fmt: skip
        p.add_tools(
            HoverTool(renderers=[links], line_policy="interp", tooltips=[
                ("link", "@kind @direction (id @link)"), ("from → to", "@src → @dst"),
                ("current", "@current{0,0.0} messages / step"),
                ("reference", "@reference{0,0.0} messages / step"),
                ("Δ", "@delta{+0,0.0} messages / step")]),
            HoverTool(renderers=[cores], tooltips=[
                ("core", "@address"), ("current", "@population"),
                ("reference", "@reference_population")]),
        )  # fmt: skip
        p.add_layout(
            ColorBar(
                color_mapper=self.mapper, title="Δ messages / step", title_text_font_size="12px",
                title_text_font_style="bold", height=12, major_label_text_font_size="11px",
                padding=10, title_standoff=6, bar_line_color=None, orientation="horizontal",
                ticker=BasicTicker(desired_num_ticks=5),
                formatter=NumeralTickFormatter(format="+0,0.[00]"),
            ),
            "below",
        )  # fmt: skip
        self.figure = p

    def update(self, hardware, network, current: Evaluation, reference: Evaluation) -> None:
        cols = link_difference_columns(hardware, current, reference)
        cols["width_px"] = cols["width"] * self.link_px
        self.links.data = {k: (v.tolist() if v.dtype == object else v) for k, v in cols.items()}
        limit = color_limit(cols["delta"])
        self.mapper.update(low=-limit if limit > 0 else -1.0, high=limit if limit > 0 else 1.0)
        cur = core_columns(hardware, network, current)
        ref = core_columns(hardware, network, reference)
        changed = (cur["population_id"] != ref["population_id"]) | (
            cur["partition"] != ref["partition"]
        )
        self.cores.data = {
            "x": cur["x"],
            "y": cur["y"],
            "address": cur["address"].tolist(),
            "population": cur["population"].tolist(),
            "reference_population": ref["population"].tolist(),
            "color": cur["color"].tolist(),
            "line_color": np.where(changed, CHANGED_CORE_COLOR, cur["line_color"]).tolist(),
            "line_width": np.where(changed, 1.8, 1.0),
        }
        same = limit == 0
        self.figure.title.text = "Δ load: none changed" if same else "Δ load: current − reference"


def _view_only(fig) -> None:
    """No dragging of cores here: this view shows mappings, the mesh view edits them."""
    fig.tools = [t for t in fig.tools if not isinstance(t, PointDrawTool)]
    fig.toolbar.active_drag = "auto"


def _without_legend(fig) -> None:
    for side in ("left", "right", "above", "below", "center"):
        setattr(fig, side, [obj for obj in getattr(fig, side) if not isinstance(obj, Legend)])


class CompareView(pn.viewable.Viewer):
    """The current mapping beside a reference: metrics, both meshes, the link-load difference."""

    state = param.ClassSelector(class_=ExplorerState)

    CHOICES = {"starting mapping": "start", "best of the search": "best", "mapping file": "file"}

    def __init__(self, **params):
        super().__init__(**params)
        self._choice = pn.widgets.RadioButtonGroup(
            options=self.CHOICES, value="start", variant="outline", margin=(6, 10)
        )
        self._file = UploadInput(access=self.state.access, accept=".json", margin=(8, 10))
        self._summary = pn.pane.HTML("", stylesheets=[_CSS])
        self._reference_text = pn.pane.HTML("", stylesheets=[_CSS])
        self._row = pn.FlexBox(flex_wrap="wrap", sizing_mode="stretch_width")
        self._hardware = None
        self._current = self._reference = self._diff = None
        self._reverting = False
        doc = pn.state.curdoc
        self._doc = doc if doc is not None and doc.session_context is not None else None
        self._choice.param.watch(self._on_choice, "value")
        self._file.param.watch(self._on_file, "value")
        s = self.state
        s.watch(
            self._refresh,
            shown=["evaluation", "reference_evaluation", "start_evaluation"],
            inputs=["hardware"],
        )
        self._refresh()

    # ------------------------------------------------------------ actions
    def choose(self, which: str) -> bool:
        """Compare with ``"start"`` or ``"best"`` (``"file"`` needs ``load_file``)."""
        if which == "file":
            if self._file.value is not None:
                return self.load_file(self._file.filename, self._file.value)
            self._reference_text.object = self._reference_html("choose a mapping file (.json)")
            return False
        try:
            self.state.set_reference(which)
        except MeshScopeError as e:
            notify_error(str(e))
            self._revert_choice()
            return False
        return True

    def load_file(self, filename: str, data: bytes) -> bool:
        """Compare with a mapping file, read and evaluated in a worker thread on a page
        (``off_page``); a bad one is a notification, changes nothing, and the chooser
        forgets it. Returns whether it loaded (on a page: whether it started)."""
        s, name = self.state, filename or "upload.json"
        loaded: list[bool] = []

        def show(reference) -> None:
            try:
                s.adopt_reference(reference)
            except MeshScopeError as e:
                failed(str(e))
                return
            self._set_choice("file")
            loaded.append(True)

        def failed(message: str) -> None:
            notify_error(message)
            self._revert_choice()
            self._file.clear()  # in the browser, and here: "mapping file" must not offer it
            self._file.param.update(value=None, filename=None)
            loaded.append(False)

        off_page(
            self._doc, lambda: s.prepare_reference("file", filename=name, data=data), show,
            failed, what=f"reading {name}", name="meshscope-reference",
        )  # fmt: skip
        return loaded[0] if loaded else True

    def _on_choice(self, event) -> None:
        if not self._reverting:
            self.choose(event.new)

    def _on_file(self, event) -> None:
        if event.new is not None:
            self.load_file(self._file.filename, event.new)

    def _set_choice(self, value: str) -> None:
        self._reverting = True
        try:
            self._choice.value = value
        finally:
            self._reverting = False

    def _revert_choice(self) -> None:
        label = self.state.shown.reference_label
        value = {"starting mapping": "start", "best of the search": "best", "": "start"}
        self._set_choice(value.get(label, "file"))

    # ------------------------------------------------------------ reactions
    @property
    def reference_evaluation(self) -> Evaluation | None:
        s = self.state
        return (
            s.shown.reference_evaluation
            if s.shown.reference is not None
            else s.shown.start_evaluation
        )

    @property
    def reference_label(self) -> str:
        return (
            self.state.shown.reference_label
            if self.state.shown.reference is not None
            else "starting mapping"
        )

    @property
    def difference(self) -> ColumnDataSource:
        """The difference panel's link source (its ``delta`` column: current − reference)."""
        return self._diff.links

    def _reference_html(self, extra: str = "") -> str:
        more = f" — {escape(extra)}" if extra else ""
        return (
            f'<div class="cmp-ref" data-testid="compare-reference">Reference: '
            f"<b>{escape(self.reference_label)}</b>{more}</div>"
        )

    @on_page
    def _refresh(self, *events) -> None:
        s = self.state
        if s.evaluation is None:
            return
        ref = self.reference_evaluation
        if s.shown.reference is None:
            self._set_choice("start")
        if s.hardware is not self._hardware:
            self._build(s.hardware, s.network, ref)
        else:
            self._current_sources.update(s.hardware, s.network, s.evaluation)
            self._reference_sources.update(s.hardware, s.network, ref)
        self._share_load_scale(s.hardware, s.evaluation, ref)
        self._reference.title.text = f"Reference: {self.reference_label}"
        self._diff.update(s.hardware, s.network, s.evaluation, ref)
        self._summary.object = summary_html(summary_rows(s.evaluation, ref), self.reference_label)
        self._reference_text.object = self._reference_html()

    def _build(self, hardware, network, reference: Evaluation) -> None:
        s = self.state
        self._hardware = hardware
        self._current, self._current_sources = mesh_figure(
            hardware, network, s.evaluation, title="Current mapping", max_frame=MESH_FRAME
        )
        self._reference, self._reference_sources = mesh_figure(
            hardware, network, reference, title="Reference", max_frame=MESH_FRAME
        )
        share_view(self._reference, self._current)  # one zoom for all three panels
        for fig in (self._current, self._reference):
            _without_legend(fig)  # the Mesh tab's legend: the same colours, room here
        for fig in (self._current, self._reference):
            _view_only(fig)
        # Both colour bars show one mapper, which this view owns: the sources would set it
        # to their own mesh's heaviest link and the bars' titles back to the plain one.
        self._load_mapper = LinearColorMapper(palette=list(LOAD_PALETTE), low=0, high=1)
        for sources in (self._current_sources, self._reference_sources):
            sources.color_bar.update(color_mapper=self._load_mapper, title=SHARED_SCALE_TITLE)
            sources.color_bar = None
        # one colour bar for the one scale, under the current mesh, as wide as its frame (the
        # reference's would repeat it; beside the small mesh its title did not fit)
        self._reference.right = [m for m in self._reference.right if not isinstance(m, ColorBar)]
        bar = next(m for m in self._current.right if isinstance(m, ColorBar))
        self._current.right = [m for m in self._current.right if m is not bar]
        bar.update(orientation="horizontal", height=12, width=self._current.frame_width - 20,
                   location="top_left", padding=6, title_standoff=4)  # fmt: skip
        self._current.add_layout(bar, "below")
        self._diff = _DifferencePlot(hardware, network, self._current)
        # side by side at 1366 px, the difference between the two meshes it compares
        self._row[:] = [
            pn.pane.Bokeh(self._current, margin=(0, 4)),
            pn.pane.Bokeh(self._diff.figure, margin=(0, 4)),
            pn.pane.Bokeh(self._reference, margin=(0, 4)),
        ]

    def _share_load_scale(self, hardware, current: Evaluation, reference: Evaluation) -> None:
        """Recolour both meshes' links on one scale, up to the heavier mesh's heaviest link.

        The sources have just drawn each mesh on its own scale; colour and width are
        redone with ``link_columns(vmax=...)``. The arrows (drawn on loaded router links
        only, in proportion to the link's width) keep their proportion to the new width.
        """
        vmax = shared_load_scale(current, reference)
        for sources, evaluation in (
            (self._current_sources, current),
            (self._reference_sources, reference),
        ):
            links = link_columns(hardware, evaluation, vmax=vmax)
            width_px = links["width"] * sources.link_px
            old = sources.links.data
            arrow_px = np.asarray(old["arrow_px"]) * width_px / np.asarray(old["width_px"])
            sources.links.data.update(
                color=links["color"].tolist(),
                width=links["width"],
                width_px=width_px,
                arrow_px=arrow_px,
            )
        self._load_mapper.high = vmax if vmax > 0 else 1.0

    def __panel__(self):
        chooser = pn.FlexBox(
            pn.pane.HTML('<div class="cmp-ref">Compare with</div>', stylesheets=[_CSS]),
            self._choice,
            self._file,
            self._reference_text,
        )
        note = pn.pane.HTML(
            '<div class="cmp-note">The three panels zoom and pan together. In the middle, a '
            "red link carries more messages per step in the current mapping than in the "
            "reference, a blue one fewer (colours saturate at the 95th percentile of the "
            "changes; the width keeps growing); a dark outline marks a core whose contents "
            "differ. Both meshes colour their links on one scale, up to the heaviest link of "
            "either, so a colour is the same load in both; cores are coloured by layer as on the "
            "Mesh tab (its legend names them)."
            "</div>",
            stylesheets=[_CSS],
        )
        return pn.Column(
            chooser,
            pn.FlexBox(self._summary, note, flex_wrap="wrap", sizing_mode="stretch_width"),
            self._row,
            name="Compare",
            sizing_mode="stretch_width",
        )  # fmt: skip
