"""The mesh view: routers on their global grid, cores around them, every link by load.

``MeshView`` keeps one figure of ``explorer.views.mesh_figure`` in step with an
``ExplorerState``: a new evaluation refreshes the sources in place, new hardware or a new
network builds a new figure.

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
from bokeh.events import Tap
from bokeh.models import (
    BasicTicker,
    ColorBar,
    ColumnDataSource,
    HoverTool,
    LinearColorMapper,
    NumeralTickFormatter,
    Range1d,
)
from bokeh.plotting import figure

from engine.errors import MeshScopeError
from engine.evaluation.cost import Evaluation
from engine.hardware import Hardware
from explorer.inspection import Inspection
from explorer.state import ExplorerState
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
    BUSIER,
    COLOR_MODES,
    LOAD_PALETTE,
    SIMULATED_MODES,
    bottleneck_text,
    chip_columns,
    chip_loads,
    chip_view,
    drop_target,
    hit_test,
    link_loads_frame,
    load_colors,
    moved_cores,
    population_colors,
    unchanged_text,
)
from explorer.views.mesh_figure import bokeh_data, mesh_figure

__all__ = ["MeshView"]

OVERVIEW_PX = 120  # the chip overview's longer side at most, in px
CHIP_SCALE_PX = 44  # … and the room its colour scale takes beside it

_CAPTION_CSS = """
.mesh-unchanged { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
                  font-size: 13px; color: #1f2933; background: #fdf2f8;
                  border-left: 4px solid #ff1f8e; padding: 4px 10px; margin-top: 4px;
                  max-width: 900px; }
.mesh-unchanged-short { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
                        font-size: 13px; color: #1f2933; background: #fdf2f8;
                        border-left: 4px solid #ff1f8e; padding: 1px 8px;
                        white-space: nowrap; }
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


def _label(text: str, margin, title: str = "") -> pn.pane.HTML:
    """A label of the mesh's controls (``title``: its tooltip)."""
    tip = f' title="{escape(title)}"' if title else ""
    return pn.pane.HTML(
        f'<span class="mesh-label"{tip}>{text}</span>', stylesheets=[_CAPTION_CSS],
        margin=margin,
    )  # fmt: skip


_DRAG_HINT = (
    '<span class="mesh-label"><b>Drag a core</b> onto another core to swap them, onto an '
    "empty slot to move it; <b>click</b> a link or a core to see its flows.</span>"
)
_HINT = (
    "Each direction of a link has its own lane; arrows show the direction of travel. "
    "Hover over a core or a link for its numbers; click one to see the flows through it and "
    "their routes; the toolbar saves the plot as PNG (or SVG, ticked below)."
)


_FILTER_HINT = "Show only the load of the flows that leave these layers"


class MeshView(pn.viewable.Viewer):
    """The mesh of a state's hardware, kept in step with what the state shows.

    It shows ``state.shown_evaluation``: the current mapping, or a search's best from the
    search's start until it is adopted, while ``state.search.follow_best`` is on (then dragging
    is paused); a banner says which.
    """

    state = param.ClassSelector(class_=ExplorerState)
    color_by = param.Selector(
        default="utilization", objects=list(COLOR_MODES),
        doc="what the link colours show: by default the time a link costs (its busy share "
        "of the step, on its busier mesh), which is what bounds the step",
    )  # fmt: skip
    mesh = param.Parameter(
        default=BUSIER,
        doc="on parallel meshes (Loihi 2's two), the mesh whose copy of each link the colours "
        "show: an index, or 'busier' (each link's busier copy, which times it)",
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
        self._unchanged = ""  # after a change that left the step's time: what still bounds it
        # the line above the mesh: how to drag, or (after such a change) that line in short
        self._top_line = LiveHTML(css=_CAPTION_CSS, margin=(0, 0, 0, 10), div_params={
            "height": 20, "width": 1000})  # fmt: skip
        self._top_line.object = _DRAG_HINT
        self._writing = False  # re-entry guard: our own writes fire the source's on_change
        self._pane = pn.pane.Bokeh(margin=(0, 10), sizing_mode="fixed")  # its frame sets its size
        self._caption = LiveHTML(css=_CAPTION_CSS, margin=(4, 10, 0, 10))
        self._banner = LiveHTML(css=_CAPTION_CSS, margin=(0, 10), div_params={"width": 620})
        self._follow = pn.widgets.Checkbox.from_param(
            self.state.search.param.follow_best, label="show the search's best",
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
        # the chips' colours as a scale (issue 57: they had none): 0 → the heaviest link
        self._chip_mapper = LinearColorMapper(palette=list(LOAD_PALETTE), low=0, high=1)
        self._chips.selected.on_change("indices", self._on_chip_tap)
        self._overview = pn.pane.Bokeh(None, margin=(0, 10))
        self._whole = pn.widgets.Button(label="Whole board", width=110, margin=(6, 4))
        self._whole.on_click(lambda event: self.zoom_to_chip(None))
        self._overview_row = pn.Row(
            self._overview, self._whole,
            pn.pane.HTML('<span class="mesh-label">Click a chip to look at it; the mesh '
                         "pans and zooms as usual. A chip's colour: its heaviest link, in "
                         "messages / step (the scale beside it).</span>",
                         stylesheets=[_CAPTION_CSS],
                         margin=(10, 4), width=420),  # (wraps: the row stays on screen)
            visible=False,
        )  # fmt: skip
        self._switch = pn.widgets.RadioButtonGroup.from_param(
            self.param.color_by,
            options={
                "time (busy share)": "utilization", "messages / step": "messages",
                "simulated flits": "flits", "simulated busy": "busy",
                "buffer peak": "buffer",
            },
            label="", margin=(4, 10), variant="outline", color="primary", description=None,
            stylesheets=[":host .bk-btn { font-size: 12px; padding: 3px 10px; }"],
        )  # fmt: skip
        self._mesh_switch = pn.widgets.RadioButtonGroup(
            options={"busier mesh": BUSIER, "mesh 0": 0, "mesh 1": 1}, value=BUSIER,
            margin=(4, 10), variant="outline", color="primary", description=None,
            stylesheets=[":host .bk-btn { font-size: 12px; padding: 3px 10px; }"],
        )  # fmt: skip
        self._mesh_switch.param.watch(lambda e: setattr(self, "mesh", e.new), "value")
        self._mesh_row = pn.Row(
            _label("Show", (9, 0, 0, 10), "Loihi 2 has two parallel meshes; a message travels "
                   "on its source core's (slot parity), and a link's time is its busier mesh's"),
            self._mesh_switch, visible=False,
        )  # fmt: skip
        self._layer_choice = LayerFilter(width=200, height=30, margin=(4, 10), hint=_FILTER_HINT)
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
        self.state.watch(
            self._refresh, shown=["evaluation"],
            search=["best_evaluation", "running", "follow_best", "best_on_mesh",
                    "picked_evaluation"],
            simulation=["step", "running"],
        )  # fmt: skip
        self.param.watch(self._refresh, ["color_by", "mesh"])
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
        return self.state.inspection.layer_evaluation(self.layers)

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
        same_figure = s.hardware is self._hardware and s.network is self._network and self._sources
        if not same_figure or self.following_search:  # (a search's best is no edit of yours)
            self._unchanged = short = ""
        elif shown is not self._shown and self._shown is not None:
            self._unchanged = unchanged_text(s.hardware, self._shown, shown, s.network)
            short = unchanged_text(s.hardware, self._shown, shown, s.network, short=True)
        else:
            short = None  # as it is
        if short is not None:  # one line, always there: the mesh never moves under a drag
            self._top_line.object = (
                f'<span class="mesh-unchanged-short" data-testid="mesh-unchanged-short">'
                f"{escape(short)}</span>"
                if short
                else _DRAG_HINT
            )
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
            + (
                f'<div class="mesh-unchanged" data-testid="mesh-unchanged">'
                f"{escape(self._unchanged)}</div>"
                if self._unchanged
                else ""
            )
            + self._simulated_note(figures)
            + f'<div class="mesh-hint">{escape(only + _HINT)}</div>'
        )
        mesh = self.mesh if s.hardware.links.meshes > 1 else BUSIER
        if same_figure:
            if (
                shown is self._shown
                and self._sources.color_by == color_by
                and self._sources.mesh == mesh
                and self._sources.simulated is figures
            ):
                return
            coloured = self._coloured(shown)
            self._write(
                lambda: self._sources.update(
                    s.hardware, s.network, coloured, color_by=color_by, simulated=figures,
                    links_only=shown is self._shown, mesh=mesh,
                )
            )  # fmt: skip
            if s.hardware.n_chips > 1 and shown is not self._shown:
                self._chips.data.update(bokeh_data(self._chip_colours(s.hardware)))
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
                simulated=figures, mesh=mesh,
            )  # fmt: skip
            self._sources.cores.on_change("data", self._on_cores_change)
            fig.on_event(Tap, self._on_tap)
            fig.output_backend = "svg" if self._svg.value else "canvas"
            self._hardware, self._network = s.hardware, s.network
            self._pane.object = fig
            self._overview.object = self._overview_figure(s.hardware)
            self._overview_row.visible = s.hardware.n_chips > 1
            self._mesh_row.visible = s.hardware.links.meshes > 1
            self._mesh_switch.options = {
                "busier mesh": BUSIER,
                **{f"mesh {m}": m for m in range(s.hardware.links.meshes)},
            }
            self.inspection = None
        self._shown = shown

    # ------------------------------------------------------------ chips
    def _overview_figure(self, hardware: Hardware):
        """A small map of the chips coloured by their heaviest link (None for one chip)."""
        if hardware.n_chips < 2:
            return None
        columns = chip_columns(hardware)
        columns.update(self._chip_colours(hardware))
        self._chips.data = bokeh_data(columns)
        # small above the mesh: at most OVERVIEW_PX a side (but 4 px a router at least), so
        # that on a laptop's screen the board's mesh starts above the fold (230 px did not)
        px = max(4.0, min(14.0, OVERVIEW_PX / max(hardware.grid_width, hardware.grid_height)))
        p = figure(
            width=int(px * hardware.grid_width) + 10 + CHIP_SCALE_PX,
            height=int(px * hardware.grid_height) + 10,
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
        p.add_layout(ColorBar(
            color_mapper=self._chip_mapper, width=8, padding=4, bar_line_color=None,
            major_label_text_font_size="9px", ticker=BasicTicker(desired_num_ticks=3),
            formatter=NumeralTickFormatter(format="0.[0]a"), name="chip-scale",
        ), "right")  # fmt: skip
        return p

    def _chip_colours(self, hardware: Hardware) -> dict:
        loads = chip_loads(hardware, self.shown)
        top = max(float(loads.max()), 1e-12)
        self._chip_mapper.high = top
        return {"load": loads, "color": load_colors(loads, top)}

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
        figures = self._simulated_figures() if s.simulation.of is s.shown_evaluation else None
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
        step = self.state.simulation.step
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
            step = s.simulation.step
            stale = s.simulation.of is not s.shown_evaluation or s.simulation.running
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
        picked = s.search.picked_evaluation is not None
        offered = (s.search.best_on_mesh and s.search.best_evaluation is not None) or picked
        self._search_row.visible = bool(s.search.running or offered)
        self._adopt.visible = offered
        self._unpick.visible = picked
        self._follow.visible = not picked
        if not self._search_row.visible:
            return
        what = "Search running" if s.search.running else "Search over"
        found = s.search
        yours = f"yours: {s.evaluation.latency_us:,.3f} µs"
        if picked:
            text = (
                f"The cards and the mesh show <b>evaluation {found.picked.index + 1}</b> of the "
                f"search, picked on the Evolution tab ({found.picked_evaluation.latency_us:,.3f} "
                f"µs; {yours}). Adopt it to make it yours, or go back to yours."
            )
        elif self.following_search:
            text = (
                f"{what}: the cards and the mesh show <b>its best mapping</b>"
                + (" so far" if s.search.running else "")
                + f" ({self.shown.latency_us:,.3f} µs; {yours}, unchanged until you adopt "
                "the best). Untick to see and edit yours."
            )
        elif offered:
            text = (
                f"{what}: the cards and the mesh show <b>your mapping</b> ({yours}); tick to "
                f"see the search's best ({s.search.best_evaluation.latency_us:,.3f} µs)."
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
        moved = moved_cores(s.hardware, xs, ys)
        if moved is not None and moved.size == 0:
            # every core on its slot: our own write coming back (a notebook's comm sends the
            # browser's copy back); snapping back would write it again, and again
            return False
        target = drop_target(s.hardware, xs, ys)
        changed = False
        if target is not None and self.following_search:
            notify_error(
                (
                    "The mesh shows a mapping picked on the Evolution tab: go back to yours "
                    "to edit it, or adopt the picked one."
                    if self.state.search.picked_evaluation is not None
                    else "The mesh shows the search's best mapping: untick 'show the search's "
                    "best' to edit your own, or adopt the best to make it yours."
                ),
                self.notify,
            )
        elif target is not None:
            revision = s.shown.revision
            run_action(s.swap_cores, *target, notify=self.notify)
            changed = s.shown.revision != revision
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
            self.inspection = (
                s.inspection.link(target) if kind == "link" else s.inspection.core(target)
            )
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
            # not a wrapping FlexBox: it would wrap after the first paint and shift the mesh
            # under a drag already aimed
            pn.Row(
                _label("Colour links by", (9, 0, 0, 10)),
                self._switch,
                _label("from", (9, 0, 0, 4), _FILTER_HINT),
                self._layer_choice,
            ),  # fmt: skip
            self._mesh_row,
            self._top_line,
            self._search_row,
            self._overview_row,
            # a click's flows open beside the mesh, level with it: its routes stay in view
            pn.Row(self._pane, InspectView(mesh=self), margin=0, sizing_mode="stretch_width"),
            self._caption,
            pn.Row(self._download, self._svg, margin=(0, 0, 4, 0)),
            sizing_mode="stretch_width",
        )
