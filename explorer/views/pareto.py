"""The Pareto view: a multi-objective search (SENMap, on pymoo) run from the page, live.

``ParetoView`` holds the settings (two or three objectives by name, the algorithm — one of
``engine.search.pareto.algorithms`` —, budget, seed), Start / Stop / Adopt, one scatter of
every evaluated mapping (first objective across, second up, the third — or the cores used —
as colour) with the front so far drawn over it, and a table of the front. A click on a point
shows that mapping on the Mesh tab (``ExplorerState.pick``) and Adopt makes it the current
one; a box drawn on the plot (the brush) narrows the table to the points inside it.

Threading as in the Evolution view: ``explorer.runner.SearchRunner`` runs the search in
its own thread and hands its events to this view (its listener) on the session's document
thread; the scatter's source is streamed (``RowStreamer``), the front replaced.
The front is kept incrementally: a point dominated once stays dominated, so the new front
is the non-dominated set of the old front and the new points.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace

import numpy as np
import panel as pn
import param
from bokeh.models import (
    BoxSelectTool,
    ColumnDataSource,
    HoverTool,
    LinearColorMapper,
    TapTool,
)

from engine.errors import MeshScopeError
from engine.search import Record, objectives
from engine.search.evaluators import model_outcome
from engine.search.pareto import ParetoConfig, algorithms, non_dominated
from explorer.admission import place_text
from explorer.state import ExplorerState
from explorer.views import search_plots as plots
from explorer.views._page import in_document, legend_and_colour_bar, notify_error, on_page
from explorer.views.search_tab import SearchTab, search_css

__all__ = ["ParetoView", "current_point", "evaluation_columns"]

HEURISTIC_COLOR = "#e6550d"
DEFAULT_OBJECTIVES = ("latency", "energy", "cores")
_D = ParetoConfig()


CORES = "cores used"  # an axis that is no objective of the run


def current_point(state: ExplorerState, axes: Sequence[str]) -> dict:
    """The scatter's one row for the page's current mapping on the plot's ``axes`` (across,
    up: objectives by name, or ``CORES``): where a hand-tuned mapping sits against the
    front. Empty when an axis cannot rate it yet (simulated latency before its step is
    simulated) or at all."""
    e = state.evaluation
    if e is None or state.mapping is None:
        return {"x": [], "y": []}
    routing = any(n in objectives.names("mosaic") for n in axes[:2])  # costly: when asked
    outcome = model_outcome(e, state.network, state.hardware, state.mapping, routing=routing)
    if state.simulation.step is not None and state.simulation.of is e:
        outcome = replace(outcome, simulated_us=state.simulation.step.step_us)
    point = []
    for name in axes[:2]:
        v = outcome.metrics["cores_used"] if name == CORES else objectives[name].value(outcome)
        if not math.isfinite(v):
            return {"x": [], "y": []}
        point.append(v)
    return {"x": [point[0]], "y": [point[1]]}


def default_axes(names: Sequence[str]) -> tuple[str, str, str]:
    """(across, up, colour) for a run's objectives: in order, then the cores used."""
    names = [*names, CORES, CORES]
    return names[0], names[1], names[2]


def evaluation_columns(rows: Sequence[Record], axes: Sequence[str]) -> dict:
    """The scatter's columns: x, y, colour — each an objective of the run by name, or
    ``CORES`` — and the evaluation's index."""
    axes = list(default_axes(axes)) if len(axes) < 3 else list(axes)

    def column(name: str):
        if name == CORES:
            return np.array([sum(e.cores_per_population) for e in rows], dtype=float)
        return np.array([e.objectives[name] for e in rows], dtype=float)

    return {"x": column(axes[0]), "y": column(axes[1]), "c": column(axes[2]),
            "index": np.array([e.index for e in rows], dtype=np.int64)}  # fmt: skip


class ParetoView(SearchTab):
    """Search the trade-off between two or three objectives and pick a mapping off the front."""

    prefix, status_id = "pareto", "pareto-status"
    adopt_help = "make the picked mapping the current one (undoable)"
    css = search_css("pareto", plots.BEST_COLOR, "#fff0f7")

    # the page searches mappings of the session's hardware: no co-design objectives, and the
    # Mosaic's only on a Mosaic (``_offer`` sets each page's list from its hardware)
    chosen = param.ListSelector(
        default=list(DEFAULT_OBJECTIVES),
        objects=[n for n in objectives.names() if n not in objectives.names("codesign")],
    )
    algorithm = param.Selector(default=_D.algorithm, objects=algorithms.names())
    budget = param.Integer(default=400, bounds=(1, None), doc="evaluations")
    seed = param.Integer(default=0, bounds=(0, None))
    running = param.Boolean(default=False)
    status = param.String(default="")

    def __init__(self, **params):
        super().__init__(**params)
        self.evaluations: list[Record] = []  # the feasible ones, as they came
        self.front: list[Record] = []
        self._seen = 0  # evaluations received, feasible or not
        self._selected: list[Record] = []  # the brushed points
        self._table_rows: list[Record] = []  # what the table lists
        self.names: tuple[str, ...] = tuple(self.chosen)
        self.axes: tuple[str, str, str] = default_axes(self.names)  # across, up, colour
        self.points_source = ColumnDataSource(name="pareto-points")
        self.front_source = ColumnDataSource(name="pareto-front")
        self.heuristic_source = ColumnDataSource(name="pareto-heuristics")
        self.current_source = ColumnDataSource({"x": [], "y": []}, name="pareto-current")
        self._points = plots.RowStreamer(self.points_source, self._columns)
        self.front_source.data = self._columns([])
        self.heuristic_source.data = {**self._columns([]), "name": []}
        self._mapper = LinearColorMapper(palette=list(plots.SCALE_PALETTE), low=0, high=1)
        self.figure = self._figure()
        self._ranges = plots.FittedRanges(self.figure)  # fitted to the points drawn
        self.table = pn.widgets.Tabulator(
            self._table([]), disabled=True, show_index=False,
            selectable=1, height=210, width=640, layout="fit_data_stretch",
        )  # fmt: skip
        self.table.on_click(self._on_row)
        self._build_widgets()
        self.points_source.selected.on_change("indices", self._on_select)
        self.param.watch(self._on_status, ["status", "running"])
        self.param.watch(self._sync, ["running"])
        self.state.inputs.param.watch(self._offer, ["hardware"])
        self.state.watch(lambda *e: self._draw_current(), shown=["evaluation"], simulation=["step"])
        self._offer()
        self._draw_current()
        self._on_status()
        self._sync()

    def _offer(self, *events) -> None:
        """The objectives this page's hardware can rate: the Mosaic's only on a Mosaic."""
        mosaic = self.state.hardware is not None and self.state.hardware.tiles is not None
        offered = [
            n for n in objectives.names()
            if n not in objectives.names("codesign")
            and (mosaic or n not in objectives.names("mosaic"))
        ]  # fmt: skip
        kept = [n for n in self.chosen if n in offered]
        self.param.chosen.objects = offered
        if kept != list(self.chosen):
            self.chosen = kept if len(kept) >= 2 else list(DEFAULT_OBJECTIVES)

    # ------------------------------------------------------------ data
    def _columns(self, rows):
        return evaluation_columns(rows, self.axes)

    def _table(self, rows: Sequence[Record]):
        """The front's table (typed columns: the widget formats by the first frame's types)."""
        import pandas as pd

        data = {"#": pd.Series([e.index + 1 for e in rows], dtype="int64")}
        for n in self.names:
            data[n] = pd.Series([round(e.objectives[n], 4) for e in rows], dtype="float64")
        data["cores"] = pd.Series([int(sum(e.cores_per_population)) for e in rows], dtype="int64")
        data["start"] = pd.Series([e.note for e in rows], dtype="object")
        return pd.DataFrame(data)

    # ------------------------------------------------------------ widgets
    def _build_widgets(self) -> None:
        w = 128
        # a native list (Ctrl/Shift-click picks several): Bokeh's MultiChoice is Choices.js,
        # which logs a deprecation warning on every page that Bokeh gives no way to silence
        self._objectives = pn.widgets.MultiSelect.from_param(
            self.param.chosen, name="objectives (2 or 3: across, up, colour; Ctrl-click)",
            size=5, width=2 * w + 10,
        )  # fmt: skip
        self._algorithm = pn.widgets.Select.from_param(self.param.algorithm, width=w)
        self._budget = pn.widgets.IntInput.from_param(
            self.param.budget, name="budget (evaluations)", start=1, step=50, width=w
        )
        self._seed = pn.widgets.IntInput.from_param(self.param.seed, start=0, width=w)
        self._axis_widgets = [
            pn.widgets.Select(label=what, options=[*self.names, CORES], value=value, width=84)
            for what, value in zip(("across", "up", "colour"), self.axes, strict=True)
        ]  # fmt: skip
        for widget in self._axis_widgets:
            widget.param.watch(lambda event: self._draw_axes(), "value")

    # ------------------------------------------------------------ actions
    @on_page
    def start(self) -> None:
        """Start a search with the settings (a notification says why it cannot)."""
        if self.running:
            return
        try:
            if len(self.chosen) > 3:
                raise MeshScopeError(
                    f"{len(self.chosen)} objectives chosen: a front shows two or three "
                    "(across, up, colour); Ctrl-click to unchoose the others"
                )
            if len(self.chosen) < 2 and algorithms[self.algorithm].objectives != "one":
                single = [a.label for _, a in algorithms.items() if a.objectives == "one"]
                raise MeshScopeError(
                    "choose two or three objectives for a front (one only with "
                    f"{' or '.join(single)})"
                )
            config = ParetoConfig(objectives=tuple(self.chosen), algorithm=self.algorithm,
                                  budget=self.budget, seed=self.seed)  # fmt: skip
            runner = self.new_runner(listener=self)
            self._reset(config.objectives)
            runner.start(config)
        except MeshScopeError as e:
            notify_error(str(e))
            return
        self.runner = runner
        self.param.update(running=True, status=f"starting: {config.algorithm}, budget "
                          f"{config.budget}, seed {config.seed}")  # fmt: skip

    def stop(self) -> None:
        if self.runner is not None and self.running:
            self.runner.stop()
            self.status = "stopping after the generation under way …"

    def adopt(self) -> None:
        try:
            self.state.adopt_best()
        except MeshScopeError as e:
            notify_error(str(e))
            return
        self.status = "adopted the picked mapping: it is now the current one (undo brings " \
            "the previous back)"  # fmt: skip

    def _reset(self, names) -> None:
        self.names = tuple(names)
        self.evaluations, self.front, self._seen, self._selected = [], [], 0, []
        self._table_rows = []
        options = [*self.names, CORES]
        for widget, value in zip(self._axis_widgets, default_axes(self.names), strict=True):
            widget.param.update(options=options, value=value)
        self._draw_axes()
        self.state.pick(None)

    def set_axes(self, across: str, up: str, colour: str) -> None:
        """Show the run's objectives (or the cores used) across, up and as colour: another 2-D
        view of a front of three (what the three selectors do)."""
        for widget, value in zip(self._axis_widgets, (across, up, colour), strict=True):
            widget.value = value

    def _draw_axes(self) -> None:
        self.axes = tuple(w.value for w in self._axis_widgets)
        self._points.replace(self.evaluations)
        self._ranges.reset()
        self._extend(self.points_source.data)
        self.front_source.data = self._columns(self.front)
        heur = [e for e in self.evaluations if e.note and e.generation == 0]
        self.heuristic_source.data = {**self._columns(heur), "name": [e.note for e in heur]}
        self.table.value = self._table(self._table_rows or self.front)

        def label(name):
            return CORES if name == CORES else objectives[name].label

        self.figure.xaxis.axis_label = label(self.axes[0])
        self.figure.yaxis.axis_label = label(self.axes[1])
        self._bar.title = label(self.axes[2])
        self._front_line.visible = len(self.names) == 2 and set(self.axes[:2]) == set(self.names)
        self._recolour()
        self._draw_current()

    def _draw_current(self) -> None:
        self.current_source.data = current_point(self.state, self.axes)
        self._fit()

    def _extend(self, columns: dict) -> None:
        self._ranges.add(columns["x"], columns["y"])

    def _fit(self) -> None:
        current = self.current_source.data
        self._ranges.fit(current["x"], current["y"])

    def _recolour(self) -> None:
        cs = self.points_source.data["c"]
        if len(cs):
            self._mapper.update(low=float(np.min(cs)) - 0.5, high=float(np.max(cs)) + 0.5)

    # ------------------------------------------------------------ from the runner
    def on_start(self, config, from_current: bool) -> None:
        """The runner starts ``config`` (the view set itself up in ``start``)."""

    def on_wait(self, place: int) -> None:
        """The search waits for the server (``place`` in line; 0: it starts)."""
        if self.running:
            self.status = f"waiting for the server: {place_text(place)}" if place else "starting"

    def on_events(self, events) -> None:
        """The search's latest events (on the document's thread)."""
        batch = [e.record for e in events]
        self._seen += len(batch)
        new = [e for e in batch if e.feasible]
        if new:
            self.evaluations = self.evaluations + new
            sent = self._points.update(self.evaluations)
            if self._points.replaced:
                self._ranges.reset()
            self._extend(self._columns(sent))
            self._fit()
            self._update_front(new)
            heur = [e for e in self.evaluations if e.note and e.generation == 0]
            self.heuristic_source.data = {**self._columns(heur), "name": [e.note for e in heur]}
            self._recolour()
        self.status = f"{self._seen} / {self.budget} evaluations, {_on_front(self.front)}"

    def _update_front(self, new) -> None:
        pool = self.front + new
        pts = np.array([[e.objectives[n] for n in self.names] for e in pool])
        front = [pool[i] for i in non_dominated(pts)]
        front.sort(key=lambda e: tuple(e.objectives[n] for n in self.names))
        self.front = front
        self.front_source.data = self._columns(front)
        self._filter_table()

    def on_end(self, search, cancelled: bool, error: str) -> None:
        """The search ended (stopped when ``cancelled``; ``error``: why it failed)."""
        if not error and not self.front:  # nothing feasible: the search says why
            try:
                search.result(cancelled=cancelled)
            except MeshScopeError as e:
                error = str(e)
        if error:
            self.param.update(running=False, status=error)
            notify_error(f"The search failed: {error}")
            return
        how = "stopped" if cancelled else "done"
        self.param.update(running=False, status=(
            f"{how} after {_evaluations(len(search.history))}: {_on_front(self.front)}; "
            "click one to see it on the Mesh tab"))  # fmt: skip

    # ------------------------------------------------------------ picking and brushing
    def _on_select(self, attr, old, new) -> None:
        in_document(self.points_source, self.select, new)

    def select(self, indices) -> None:
        """One point: show its mapping on the mesh; several (the brush): filter the table."""
        self._selected = [self.evaluations[i] for i in indices if i < len(self.evaluations)]
        if len(self._selected) == 1:
            self.pick(self._selected[0])
        self._filter_table()

    def _filter_table(self) -> None:
        rows = self.front
        if len(self._selected) > 1:
            keep = {e.index for e in self._selected}
            rows = [e for e in self.front if e.index in keep]
        self.table.value = self._table(rows)
        self._table_rows = rows

    def _on_row(self, event) -> None:
        if 0 <= event.row < len(self._table_rows):
            self.pick(self._table_rows[event.row])

    def pick(self, e: Record) -> None:
        try:
            self.state.pick(e)
        except MeshScopeError as err:
            notify_error(str(err))
            return
        values = ", ".join(f"{n} {v:,.4g}" for n, v in e.objectives.items())
        self.status = (
            f"evaluation {e.index + 1} ({values}) is on the Mesh tab: Adopt makes it yours"
        )
        self._adopt_button.disabled = False

    # ------------------------------------------------------------ view
    def _on_status(self, *events) -> None:
        text = self.status or "No search yet: choose objectives and press Start."
        self.show_status(text, "" if self.running else "idle")

    def _sync(self, *events) -> None:
        self._start_button.disabled = self.running
        self._stop_button.disabled = not self.running
        self._adopt_button.disabled = self.state.search.picked is None
        for widget in (self._objectives, self._algorithm, self._budget, self._seed):
            widget.disabled = self.running

    def _figure(self):
        p = plots.search_figure(
            "Every evaluated mapping, and the front so far", objectives[self.names[0]].label,
            objectives[self.names[1]].label, width=640, height=440,
            tools="pan,wheel_zoom,box_select,tap,reset,save",
        )  # fmt: skip
        points = p.scatter(
            "x", "y", source=self.points_source, size=7, name="points",
            fill_color={"field": "c", "transform": self._mapper}, fill_alpha=0.6,
            line_color="white", line_width=0.5, legend_label="evaluated mapping",
            selection_line_color="#111827", selection_line_width=2, selection_fill_alpha=1.0,
            nonselection_fill_alpha=0.25,
        )  # fmt: skip
        self._front_line = p.step(
            "x", "y", source=self.front_source, mode="after", line_color=plots.BEST_COLOR,
            line_width=2, line_alpha=0.8,
        )  # fmt: skip
        p.scatter("x", "y", source=self.front_source, size=11, fill_color=None,
                  line_color=plots.BEST_COLOR, line_width=2.5, name="front",
                  legend_label="front")  # fmt: skip
        p.scatter("x", "y", source=self.heuristic_source, marker="triangle", size=12,
                  fill_color=HEURISTIC_COLOR, line_color="white",
                  legend_label="heuristics (packed/spread × row/col, random)")  # fmt: skip
        p.scatter("x", "y", source=self.current_source, marker="diamond", size=16,
                  fill_color=plots.CURRENT_COLOR, line_color="white", name="current",
                  legend_label="current mapping")  # as on the Evolution tab  # fmt: skip
        p.select_one(TapTool).renderers = [points]
        p.select_one(BoxSelectTool).renderers = [points]
        p.add_tools(HoverTool(renderers=[points], tooltips=[
            ("evaluation", "@index"), ("across", "@x{0,0.000}"), ("up", "@y{0,0.000}"),
            ("colour", "@c{0,0.000}")]))  # fmt: skip
        third = self.axes[2]
        self._bar = legend_and_colour_bar(
            p, "top_right", self._mapper, CORES if third == CORES else objectives[third].label
        )
        return p

    def __panel__(self):
        note = (
            f"{_names()} (SENMap, on pymoo) over the cores per layer and the placement. Click a "
            "point to see its mapping; drag a box to list the front's points inside it."
        )
        settings = [
            self._objectives,
            pn.Row(self._algorithm, self._budget),
            pn.Row(self._seed),
            pn.Row(self._start_button, self._stop_button, self._adopt_button),
            self.label("show on the plot", margin=(8, 10, 0, 10)),
            pn.Row(*self._axis_widgets),
        ]
        plots = [pn.Column(pn.pane.Bokeh(self.figure), self.table)]
        return self.layout("Multi-objective search", note, settings, plots, "Pareto")


def _evaluations(n: int) -> str:
    return f"{n} evaluation{'' if n == 1 else 's'}"


def _on_front(front: Sequence) -> str:
    """How many mappings the front holds, in words ("1 mapping on the front")."""
    n = len(front)
    return f"{n} mapping{'' if n == 1 else 's'} on the front"


def _names() -> str:
    """The algorithms the page offers, as the papers name them."""
    labels = [a.label.removeprefix("the ") for _, a in algorithms.items()]
    return ", ".join(labels[:-1]) + f" or {labels[-1]}"
