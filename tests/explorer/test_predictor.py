"""The explorer names its predictor and lets the user pick it (issue 55).

* ``set_predictor`` evaluates the current, starting and reference mappings again with the
  chosen predictor; a drag after it is rated by it (equal to a full evaluation); an unknown
  name is one clear error and the state keeps what it had.
* The latency card says which predictor produced its number; the sidebar's selector and
  the state follow each other.
* A search started from the page is rated by the session's predictor.
"""

from __future__ import annotations

import pytest

from engine.errors import UnknownNameError
from engine.pipeline import Mapped, evaluate
from engine.predict import DEFAULT_PREDICTOR, predictors
from explorer.state import ExplorerState
from explorer.views.controls import ControlsView, predictor_choices
from explorer.views.metrics import MetricsView, metric_values

NET = "mlp:widths=256-512-256-10"


@pytest.fixture
def state():
    s = ExplorerState()
    s.load(NET, "loihi2", partition_spec="min+2")
    return s


def rated(s: ExplorerState, predictor: str) -> float:
    return evaluate(Mapped.of(s.network, s.hardware, s.mapping), predictor=predictor).latency_us


def test_picking_a_predictor_evaluates_the_mappings_again(state):
    assert state.inputs.predictor == DEFAULT_PREDICTOR == state.evaluation.predictor
    state.swap_cores(int(state.mapping.placement.cores[0]), int(state.mapping.placement.cores[3]))
    state.set_reference("start")
    before = state.shown.revision
    state.set_predictor("flow")
    assert state.shown.revision == before + 1
    assert state.evaluation.predictor == "flow"
    assert state.shown.start_evaluation.predictor == "flow"
    assert state.shown.reference_evaluation.predictor == "flow"
    assert state.evaluation.latency_us == rated(state, "flow")
    cores = state.mapping.placement.cores
    state.swap_cores(int(cores[1]), int(cores[5]))  # a drag, rated by the flow predictor
    assert state.evaluation.predictor == "flow"
    assert state.evaluation.latency_us == rated(state, "flow")
    state.undo()
    assert state.evaluation.latency_us == rated(state, "flow")


def test_an_unknown_predictor_changes_nothing(state):
    shown = state.evaluation
    with pytest.raises(UnknownNameError, match="flow"):
        state.set_predictor("oracle")
    assert state.inputs.predictor == DEFAULT_PREDICTOR and state.evaluation is shown


def test_the_cards_and_the_sidebar_name_the_predictor(state):
    cards = MetricsView(state=state)
    said = []
    controls = ControlsView(state=state, notify=said.append)
    assert "max-affine model" in metric_values(state.evaluation, state.hardware)["latency"][2]
    assert "max-affine model" in cards.html
    assert set(predictor_choices().values()) == set(predictors) >= {"max-affine", "flow"}
    controls.predictor_select.value = "flow"  # the user picks it
    assert state.inputs.predictor == "flow" and "flow model" in cards.html and not said
    state.set_predictor("max-affine")  # … and the selector follows the state
    assert controls.predictor_select.value == "max-affine"


def test_a_search_from_the_page_is_rated_by_the_sessions_predictor(state):
    from engine.search import ESConfig
    from explorer.runner import SearchRunner

    state.set_predictor("flow")
    runner = SearchRunner(state, interval_s=0.0)
    runner.start(ESConfig(budget=8))
    runner.join(60)
    assert not runner.running and state.search.best is not None
    best = state.search.best.mapping(state.network)
    expected = evaluate(Mapped.of(state.network, state.hardware, best), predictor="flow")
    assert state.search.best.latency_us == pytest.approx(expected.latency_us)
