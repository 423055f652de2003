"""The evolution view: run the Loihi 2 mapping ES paper's nested ES from the page and watch it live.

``EvolutionView`` holds the search settings (budget, λs, seed, objective), Start /
Stop / Adopt buttons and two Bokeh plots fed from the state: the best fitness against
evaluations, and every evaluated mapping as latency against energy (Loihi 2 mapping ES Fig. 6),
coloured by the cores it uses, the best marked.

Threading: Start makes an ``explorer.runner.SearchRunner`` whose ``schedule`` puts each
publication on this session's document (``doc.add_next_tick_callback``), so the state
changes, and the Bokeh sources with them, on the document's thread while the search
runs in its own. The runner publishes at most every ~150 ms; a ``RowStreamer`` sends
the browser only the rows it has not seen (``ColumnDataSource.stream``), so a long run
stays cheap. Closing the page stops the search. The reactions that change Bokeh models
run through ``on_page``, which also makes them safe where Panel calls a button's handler
without the document lock.

The data preparation (``trace_columns``, ``point_columns``, ``RowStreamer``) is plain
numpy and Bokeh-model code, tested without a browser. It is Bokeh rather than HoloViews
(``Buffer``/``DynamicMap``): ``RowStreamer`` is what a ``Buffer`` would wrap, and HoloViews
made a page slower (measured: the README's explorer section).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import panel as pn
import param
from bokeh.models import (
    ColumnDataSource,
    HoverTool,
    Label,
    LinearColorMapper,
    NumeralTickFormatter,
    TapTool,
)

from engine.errors import MeshScopeError
from engine.search import ESConfig, Record, objectives
from explorer.runner import StateListener
from explorer.views import search_plots as plots
from explorer.views._page import in_document, legend_and_colour_bar, notify_error, on_page
from explorer.views.search_tab import SearchTab, search_css

__all__ = [
    "EvolutionView",
    "objective_label",
    "point_columns",
    "trace_columns",
]

TRACE_COLOR = "#e6550d"
_DEFAULTS = ESConfig()  # the search settings' defaults: the engine's, as on the command line


# ------------------------------------------------------------------ data
def trace_columns(rows: Sequence[tuple]) -> dict[str, np.ndarray]:
    """``state.search.trace`` rows ``(evaluations, best fitness)`` as columns.

    A fitness that is not finite (every evaluation so far failed) becomes NaN, which
    Bokeh leaves as a gap.
    """
    a = np.asarray(rows, dtype=float).reshape(-1, 2)
    best = a[:, 1]
    return {
        "evaluations": a[:, 0].astype(np.int64),
        "best": np.where(np.isfinite(best), best, np.nan),
    }


def point_columns(records: Sequence[Record]) -> dict[str, np.ndarray]:
    """``state.search.points`` (the search's Records) as the scatter's columns: latency,
    energy, cores used."""
    return {
        "latency_us": np.array([r.latency_us for r in records], dtype=float),
        "energy_uj": np.array([r.energy_uj for r in records], dtype=float),
        "cores": np.array([r.cores_used for r in records], dtype=np.int64),
    }


def objective_label(objective: str) -> str:
    """The axis label of an objective, from the engine's registry."""
    return objectives[objective].label


# ------------------------------------------------------------------ drawing
def _trace_figure(trace: ColumnDataSource, budget: int):
    # across: the run's budget, not the data (no data before a search: Bokeh could not set
    # its initial ranges); ``start`` sets it to the run's own
    p = plots.search_figure(
        "Best so far against evaluations", "evaluations", objective_label("latency"),
        width=540, height=420, tools="pan,wheel_zoom,box_zoom,reset,save", x_end=budget,
    )  # fmt: skip
    line = p.step(
        "evaluations", "best", source=trace, mode="after", line_color=TRACE_COLOR,
        line_width=2.5, name="trace",
    )  # fmt: skip
    p.add_tools(
        HoverTool(
            renderers=[line], mode="vline",
            tooltips=[("evaluations", "@evaluations"), ("best", "@best{0,0.000}")],
        )
    )  # fmt: skip
    p.yaxis.formatter = NumeralTickFormatter(format="0,0.[00]")
    return p


def _points_figure(points, best, current, mapper):
    p = plots.search_figure(
        "Every evaluated mapping (Loihi 2 mapping ES Fig. 6)", "latency (µs / step)",
        "energy (µJ / step)", width=580, height=420,
        tools="pan,wheel_zoom,box_zoom,tap,reset,save",
    )  # fmt: skip
    scatter = p.scatter(
        "latency_us", "energy_uj", source=points, size=7, name="points",
        fill_color={"field": "cores", "transform": mapper}, fill_alpha=0.75,
        line_color="white", line_width=0.5, legend_label="evaluated mapping",
        selection_line_color="#111827", selection_line_width=2.5, selection_fill_alpha=1.0,
        nonselection_fill_alpha=0.5,
    )  # fmt: skip
    p.select_one(TapTool).renderers = [scatter]
    p.scatter(
        "latency_us", "energy_uj", source=current, marker="diamond", size=16,
        fill_color=plots.CURRENT_COLOR, line_color="white", legend_label="current mapping",
    )  # fmt: skip
    p.scatter(
        "latency_us", "energy_uj", source=best, marker="star", size=22, name="best",
        fill_color=plots.BEST_COLOR, line_color="white", line_width=1, legend_label="best so far",
    )  # fmt: skip
    p.add_tools(
        HoverTool(
            renderers=[scatter],
            tooltips=[
                ("latency", "@latency_us{0,0.000} µs"),
                ("energy", "@energy_uj{0,0.000} µJ"),
                ("cores used", "@cores"),
            ],
        )
    )
    legend_and_colour_bar(p, "top_left", mapper, "cores used")
    p.legend.spacing = 0
    p.legend.glyph_height = p.legend.glyph_width = 22
    return p


class EvolutionView(SearchTab):
    """Run the nested evolutionary search on the state's network and watch it converge."""

    prefix, status_id, status_max_width = "evo", "search-status", 1110
    adopt_help = "make the best mapping found the current one (undoable)"
    css = search_css("evo", TRACE_COLOR, "#fff7f0")

    budget = param.Integer(default=_DEFAULTS.budget, bounds=(1, None), doc="fitness evaluations")
    lambda_part = param.Integer(default=_DEFAULTS.lambda_part, bounds=(1, 256), label="λ partition")
    lambda_place = param.Integer(
        default=_DEFAULTS.lambda_place, bounds=(1, 256), label="λ placement"
    )
    seed = param.Integer(default=_DEFAULTS.seed, bounds=(0, None))
    objective = param.Selector(default=_DEFAULTS.objective, objects=objectives.names("cost"))

    def __init__(self, **params):
        super().__init__(**params)
        # what writes this tab's searches, and the user's steps with them, into the
        # session's search part (its one writer)
        self.listener = StateListener(self.state)
        self._run_objective = self.objective
        self.trace_source = ColumnDataSource(name="evolution-trace")
        self.points_source = ColumnDataSource(name="evolution-points")
        self.best_source = ColumnDataSource(data={"latency_us": [], "energy_uj": []})
        self.current_source = ColumnDataSource(data={"latency_us": [], "energy_uj": []})
        self._trace = plots.RowStreamer(self.trace_source, trace_columns)
        self._points = plots.RowStreamer(self.points_source, point_columns)
        self._mapper = LinearColorMapper(palette=list(plots.SCALE_PALETTE), low=0, high=1)
        self._cores_range: tuple[int, int] | None = None
        # what the plots hold, for their ranges: trace (best), points (latency, energy)
        self.trace_figure = _trace_figure(self.trace_source, self.budget)
        self.points_figure = _points_figure(
            self.points_source, self.best_source, self.current_source, self._mapper
        )
        self._trace_fit = plots.FittedRanges(self.trace_figure, padding=0.12, across=False)
        self._points_fit = plots.FittedRanges(self.points_figure)
        self._current_line = ColumnDataSource(data={"value": []})
        self.trace_figure.hspan(
            y="value", source=self._current_line, line_color=plots.CURRENT_COLOR,
            line_dash="dashed", line_width=1.5, line_alpha=0.7,
        )  # fmt: skip
        self._current_label = Label(
            x=6, y=0, x_units="screen", text="", text_font_size="11px",
            text_color=plots.CURRENT_COLOR, y_offset=4, visible=False,
        )  # fmt: skip
        self.trace_figure.add_layout(self._current_label)
        self._build_widgets()

        s = self.state
        found = s.search.param
        found.watch(self._on_trace, ["trace"])
        found.watch(self._on_points, ["points"])
        found.watch(self._on_best, ["best"])
        found.watch(self._on_status, ["status", "running"])
        found.watch(self._on_error, ["error"])
        found.watch(self._sync_buttons, ["running", "best"])
        s.shown.param.watch(self._on_current, ["evaluation"])
        self.points_source.selected.on_change("indices", self._on_tap)
        self._on_trace()
        self._on_points()
        self._on_best()
        self._on_current()
        self._on_status()
        self._sync_buttons()

    # ------------------------------------------------------------ widgets
    def _build_widgets(self) -> None:
        w = 128
        self._settings = [
            pn.widgets.IntInput.from_param(self.param.budget, name="budget (evaluations)",
                                           start=1, step=25, width=w),
            pn.widgets.IntInput.from_param(self.param.seed, name="seed", start=0, width=w),
            pn.widgets.IntInput.from_param(self.param.lambda_part, start=1, width=w),
            pn.widgets.IntInput.from_param(self.param.lambda_place, start=1, width=w),
        ]  # fmt: skip
        self._objective = pn.widgets.RadioButtonGroup.from_param(
            self.param.objective, name="objective", variant="outline", width=2 * w + 10
        )
        self._follow = pn.widgets.Checkbox.from_param(
            self.state.search.param.follow_best, name="the Mesh tab shows the search's best"
        )
        # ticked while the mapping is edited, until the person sets it themselves
        self._from_current = pn.widgets.Checkbox(
            label="start from the current mapping", value=self.state.edited,
        )  # fmt: skip
        self._from_current_set = False  # the person ticked or unticked it
        self._following_edits = False  # … or we did, following the edits
        self._from_current.param.watch(self._on_from_current, "value")
        self.state.shown.param.watch(self._follow_edits, ["revision"])
        self._progress = pn.indicators.Progress(
            value=0, max=self.budget, bar_color="warning", width=2 * w + 10, height=10,
            margin=(8, 10, 2, 10), visible=False,  # before a search: no empty bar (issue 57)
        )  # fmt: skip

    # ------------------------------------------------------------ actions
    @on_page
    def start(self) -> None:
        """Start a search with the current settings (a notification says why it cannot)."""
        try:
            config = ESConfig(
                budget=self.budget, lambda_part=self.lambda_part,
                lambda_place=self.lambda_place, seed=self.seed, objective=self.objective,
            )  # fmt: skip
            runner = self.new_runner(listener=self.listener)
            runner.start(config, from_current=self._from_current.value)
        except MeshScopeError as e:
            hint = (
                "; untick 'start from the current mapping' to start from the heuristics only"
                if self._from_current.value and "uniformly" in str(e)
                else ""
            )
            notify_error(f"{e}{hint}")
            return
        self.runner = runner
        self._progress.param.update(max=config.budget, visible=True)
        self.trace_figure.x_range.update(start=0, end=config.budget, reset_end=config.budget)
        self._set_objective(config.objective)

    def stop(self) -> None:
        """Ask the running search to stop; it keeps its best."""
        if self.runner is not None:
            self.runner.stop()
            self.listener.stopping()

    def adopt(self) -> None:
        """Make the search's best mapping the current one (an undoable step)."""
        s = self.state
        picked = s.search.picked
        try:
            s.adopt_best()
        except MeshScopeError as e:
            notify_error(str(e))
            return
        record, what = (picked, "the picked mapping") if picked else (s.search.best, "the best")
        self.listener.adopted(record, what)

    def _on_from_current(self, event) -> None:
        if not self._following_edits:
            self._from_current_set = True

    def _follow_edits(self, *events) -> None:
        if self._from_current_set:
            return
        self._following_edits = True
        try:
            self._from_current.value = self.state.edited
        finally:
            self._following_edits = False

    def _on_tap(self, attr, old, new) -> None:
        in_document(self.points_source, self.pick, new)

    def pick(self, indices) -> None:
        """Show the evaluated mapping of the clicked point on the mesh (none: stop)."""
        points = self.state.search.points
        record = points[indices[0]] if indices and indices[0] < len(points) else None
        try:
            self.state.pick(record)
        except MeshScopeError as e:
            notify_error(str(e))
            return
        if record is not None:
            self.listener.picked(record)

    # ------------------------------------------------------------ reactions
    def _set_objective(self, objective: str) -> None:
        self._run_objective = objective
        self.trace_figure.yaxis.axis_label = "best " + objective_label(objective)
        self._on_current()

    @on_page
    def _on_trace(self, *events) -> None:
        rows = self.state.search.trace
        sent = self._trace.update(rows)
        if self._trace.replaced:
            self._trace_fit.reset()
        self._trace_fit.add(ys=trace_columns(sent)["best"])
        self._fit_trace()
        self._progress.value = min(len(rows), self._progress.max)
        self._progress.visible = self._progress.visible or bool(rows)

    def _fit_trace(self) -> None:
        self._trace_fit.fit(ys=self._current_line.data["value"])

    def _fit_points(self) -> None:
        marks = (self.best_source.data, self.current_source.data)
        self._points_fit.fit(
            [v for m in marks for v in m["latency_us"]], [v for m in marks for v in m["energy_uj"]]
        )

    @on_page
    def _on_points(self, *events) -> None:
        new = self._points.update(self.state.search.points)
        if self._points.replaced:
            self._cores_range = None
            self._points_fit.reset()
            if self.points_source.selected.indices:
                self.points_source.selected.indices = []
        cols = point_columns(new)
        self._points_fit.add(cols["latency_us"], cols["energy_uj"])
        self._fit_points()
        if not new:
            return
        cores = [r.cores_used for r in new]
        lo, hi = min(cores), max(cores)
        if self._cores_range is not None:
            lo, hi = min(lo, self._cores_range[0]), max(hi, self._cores_range[1])
        if (lo, hi) != self._cores_range:
            self._cores_range = (lo, hi)
            self._mapper.update(low=lo - 0.5, high=hi + 0.5)

    @on_page
    def _on_best(self, *events) -> None:
        best = self.state.search.best
        if best is None:
            self.best_source.data = {"latency_us": [], "energy_uj": []}
        else:
            self.best_source.data = {"latency_us": [best.latency_us], "energy_uj": [best.energy_uj]}
        self._fit_points()

    @on_page
    def _on_current(self, *events) -> None:
        self._show_current()
        self._fit_points()
        self._fit_trace()

    def _show_current(self) -> None:
        ev = self.state.evaluation
        if ev is None:
            self.current_source.data = {"latency_us": [], "energy_uj": []}
            self._current_line.data = {"value": []}
            self._current_label.visible = False
            return
        self.current_source.data = {"latency_us": [ev.latency_us], "energy_uj": [ev.energy_uj]}
        field = objectives[self._run_objective].field
        value = getattr(ev, field, None)  # the model's number (none for a simulated objective)
        if value is None:
            self._current_line.data = {"value": []}
            self._current_label.visible = False
            return
        unit = "µJ" if field == "energy_uj" else "µs"
        self._current_line.data = {"value": [value]}
        self._current_label.update(y=value, text=f"current mapping {value:,.3f} {unit}")
        self._current_label.visible = True

    @on_page  # after the trace and points the same flush changed: a status saying "stopped
    # after N evaluations" never reaches the page before the N-th row of the trace
    def _on_status(self, *events) -> None:
        s = self.state
        text = s.search.status or "No search yet: set a budget and press Start."
        kind = "error" if s.search.error else ("" if s.search.running else "idle")
        self.show_status(text, kind)

    def _on_error(self, *events) -> None:
        if self.state.search.error:
            notify_error(f"The search failed: {self.state.search.error}")

    def _sync_buttons(self, *events) -> None:
        running = self.state.search.running
        self._start_button.disabled = running
        self._stop_button.disabled = not running
        self._adopt_button.disabled = self.state.search.best is None
        for widget in (*self._settings, self._objective, self._from_current):
            widget.disabled = running

    # ------------------------------------------------------------ layout
    def __panel__(self):
        note = (
            "The nested (1+λ) strategy of Loihi 2 mapping ES: each generation mutates the cores "
            "per layer λ<sub>partition</sub> times, then the placement λ<sub>placement</sub> "
            "times, keeping the best."
        )
        settings = [
            pn.GridBox(*self._settings, ncols=2),
            self.label("objective"),
            self._objective,
            self._from_current,
            pn.Row(self._start_button, self._stop_button, self._adopt_button),
            self._follow,
            self._progress,
        ]
        plots = [pn.pane.Bokeh(self.trace_figure), pn.pane.Bokeh(self.points_figure)]
        return self.layout("Evolutionary search", note, settings, plots, "Evolution")
