"""The Pareto view without a browser: a search fills the scatter and the front, a click picks
a mapping for the mesh, the brush narrows the table, Adopt makes the pick current."""

from __future__ import annotations

import numpy as np
import pytest

from engine.search.pareto import non_dominated
from explorer.state import ExplorerState
from explorer.views.pareto import ParetoView, evaluation_columns

NET = "mlp:widths=256-512-256-10"


@pytest.fixture
def view():
    v = ParetoView(state=ExplorerState.from_specs(NET, "mesh:2x2x4"), budget=60)
    yield v
    v.stop()
    if v.runner is not None:
        v.runner.join(30)


def run(view: ParetoView) -> None:
    view.start()
    view.runner.join(120)
    assert not view.running, view.status


def test_a_search_fills_the_scatter_front_and_table(view):
    run(view)
    names = view.names
    assert names == ("latency", "energy", "cores")
    n = len(view.evaluations)
    assert 0 < n <= 60 and len(view.points_source.data["x"]) == n
    pts = np.array([[e.objectives[k] for k in names] for e in view.evaluations])
    front = {view.evaluations[i].index for i in non_dominated(pts)}
    assert {e.index for e in view.front} == front  # the incremental front is the true one
    assert len(view.front_source.data["x"]) == len(view.front) == len(view.table.value)
    assert set(view.heuristic_source.data["name"]) >= {"packed-row", "spread-col"}
    assert "done after 60 evaluations" in view.status


def test_a_click_shows_the_mapping_and_adopt_makes_it_current(view):
    run(view)
    state = view.state
    before = state.evaluation.latency_us
    target = max(view.evaluations, key=lambda e: abs(e.objectives["latency"] - before))
    view.select([view.evaluations.index(target)])
    assert state.search.picked is not None and state.search.picked.index == target.index
    assert state.shown_evaluation.latency_us == pytest.approx(target.objectives["latency"])
    view.adopt()
    assert state.evaluation.latency_us == pytest.approx(target.objectives["latency"])
    assert "adopted" in view.status


def test_the_brush_narrows_the_table_to_the_front_points_inside_it(view):
    run(view)
    inside = [i for i, e in enumerate(view.evaluations) if e in view.front][:2]
    others = [i for i, e in enumerate(view.evaluations) if e not in view.front][:3]
    view.select(inside + others)
    assert len(view.table.value) == len(inside)
    view.select([])
    assert len(view.table.value) == len(view.front)


def test_one_objective_is_refused_for_a_front_and_the_state_is_kept(view, monkeypatch):
    shown = []
    monkeypatch.setattr("explorer.views.pareto.notify_error", shown.append)
    view.chosen = ["latency"]
    view.start()
    assert shown and "two or three objectives" in shown[0]
    assert view.runner is None and not view.running


def test_four_objectives_are_refused_with_a_way_out(view, monkeypatch):
    """The native list the page offers (no Choices.js: issue 57) has no cap of three."""
    shown = []
    monkeypatch.setattr("explorer.views.pareto.notify_error", shown.append)
    view.chosen = ["latency", "energy", "cores", "area"]
    view.start()
    assert shown and "4 objectives chosen" in shown[0] and "Ctrl-click" in shown[0]
    assert view.runner is None and not view.running


def test_columns_take_cores_as_colour_without_a_third_objective(view):
    run(view)
    cols = evaluation_columns(view.evaluations, ("latency", "energy"))
    assert cols["c"].tolist() == [sum(e.cores_per_population) for e in view.evaluations]


def test_the_axes_show_any_two_objectives_and_colour_a_third(view):
    run(view)
    view.set_axes("cores", "latency", "energy")
    cols = view.points_source.data
    assert list(cols["x"]) == [e.objectives["cores"] for e in view.evaluations]
    assert list(cols["y"]) == [e.objectives["latency"] for e in view.evaluations]
    assert list(cols["c"]) == [e.objectives["energy"] for e in view.evaluations]
    assert list(view.front_source.data["x"]) == [e.objectives["cores"] for e in view.front]
    assert view.figure.xaxis.axis_label == "cores used"  # the cores objective's label
    assert not view._front_line.visible  # a front of three has no line in a projection
    assert len(view.table.value) == len(view.front)  # the table does not change with the view


def test_the_current_mapping_is_marked_on_the_plot_before_and_after_a_search(view):
    """Where a hand-tuned mapping sits against the front, on whatever axes are shown."""
    state = view.state
    point = view.current_source.data
    assert list(point["x"]) == [state.evaluation.latency_us]  # before any search
    assert list(point["y"]) == [state.evaluation.energy_uj]
    before = (point["x"][0], point["y"][0])
    state.change_layer_cores(1, +1)  # an edit on the page moves it
    point = view.current_source.data
    assert (point["x"][0], point["y"][0]) == (state.evaluation.latency_us,
                                              state.evaluation.energy_uj) != before  # fmt: skip
    run(view)
    view.set_axes("cores", "latency", "energy")
    assert list(view.current_source.data["x"]) == [float(state.evaluation.cores_used)]
    simulated = ParetoView(state=state, chosen=["latency", "simulated-latency"])
    assert list(simulated.current_source.data["x"]) == []  # its step not simulated yet


def test_the_page_offers_no_objective_only_a_codesign_search_moves(view):
    offered = view.param.chosen.objects
    assert {"latency", "energy", "cores", "area", "connectivity"} <= set(offered)
    assert not {"clock", "link-width", "chip-cores", "npes", "memory"} & set(offered)
    assert not {"routing-entries", "routing-overflow"} & set(offered)  # not a Mosaic


def test_on_a_mosaic_the_page_offers_routing_memory_and_drops_it_after():
    state = ExplorerState.from_specs("mlp:widths=64-128-128-10,density=0.03", "mosaic-8x8")
    v = ParetoView(state=state, budget=30)
    assert {"routing-entries", "routing-overflow"} <= set(v.param.chosen.objects)
    v.chosen = ["latency", "routing-entries"]
    v.start()
    v.runner.join(120)
    assert not v.running, v.status
    assert v.front and all(e.outcome.metrics["routing_overflow"] == 0 for e in v.front)
    other = ParetoView(state=ExplorerState.from_specs(NET, "mesh:2x2x4"))
    assert "routing-entries" not in other.param.chosen.objects  # per page, not per class
    state.load("mlp:widths=64-128-128-10,density=0.03", "mesh:4x4")  # no longer a Mosaic
    assert "routing-entries" not in v.param.chosen.objects
    assert list(v.chosen) == ["latency", "energy", "cores"]  # one left: the defaults again
