"""The shown mapping's step, simulated in the background after each change (StepRunner)."""

from __future__ import annotations

import html

import pytest

from engine.pipeline import Mapped
from engine.search import ESConfig
from engine.simulate import simulate_step
from explorer.access import ClientAccess, ClientLimits
from explorer.runner import SearchRunner
from explorer.state import ExplorerState
from explorer.step_runner import StepRunner


class Later:
    """A ``schedule`` that keeps the calls until ``run()``, as a document's next tick does."""

    def __init__(self):
        self.calls = []

    def __call__(self, fn):
        self.calls.append(fn)

    def run(self):
        calls, self.calls = self.calls, []
        for fn in calls:
            fn()


@pytest.fixture
def state():
    return ExplorerState.from_specs("sparse-mlp-1", "loihi2")


def simulated_us(state, mapping) -> float:
    return simulate_step(Mapped.of(state.network, state.hardware, mapping), seed=0).step_us


def settle(runner, later):
    runner.join(60)
    later.run()


def test_the_start_and_every_edit_are_simulated_once(state):
    later = Later()
    runner = StepRunner(state, later)
    runner.request()  # a page asks once it is up
    assert state.simulation.running
    settle(runner, later)
    start_us = simulated_us(state, state.mapping)
    assert not state.simulation.running and state.simulation.of is state.evaluation
    assert state.simulation.step.step_us == pytest.approx(start_us)
    assert state.simulation.start_us == pytest.approx(start_us)
    runner.request()  # the same mapping: nothing to do
    assert not runner.running and not later.calls

    cores = state.mapping.placement.cores
    state.swap_cores(int(cores[0]), int(cores[8]))  # the watcher asks by itself …
    assert not state.simulation.running and not runner.running  # … on the next tick
    later.run()
    assert state.simulation.running and state.simulation.of is not state.evaluation
    settle(runner, later)
    assert state.simulation.of is state.evaluation
    assert state.simulation.step.step_us == pytest.approx(simulated_us(state, state.mapping))
    assert state.simulation.start_us == pytest.approx(start_us)  # the start stays


def test_a_delayed_simulation_skips_the_drags_made_before_it_starts(state, monkeypatch):
    """With a delay (the page's: its redraw goes first), a change cancels the one before
    while it still waits: only the last of quick drags is simulated at all."""
    import explorer.step_runner as step_runner

    simulated = []

    def counting(mapped, **options):
        simulated.append(mapped.mapping)
        return simulate_step(mapped, **options)

    monkeypatch.setattr(step_runner, "simulate_step", counting)
    state.simulation.param.update(start_us=1.0)  # the start counts as simulated already
    later = Later()
    runner = StepRunner(state, later, delay=0.5)
    cores = state.mapping.placement.cores
    state.swap_cores(int(cores[0]), int(cores[8]))
    later.run()  # the session's next tick
    first = runner._thread
    state.swap_cores(int(cores[1]), int(cores[9]))
    later.run()
    first.join(60)
    settle(runner, later)
    assert simulated == [state.mapping]  # the first never started
    assert state.simulation.of is state.evaluation


def test_the_next_drag_cancels_the_simulation_under_way(state):
    later = Later()
    runner = StepRunner(state, later)
    cores = state.mapping.placement.cores
    state.swap_cores(int(cores[0]), int(cores[8]))
    later.run()  # the session's next tick
    first = runner._thread
    state.swap_cores(int(cores[1]), int(cores[9]))
    later.run()
    second = runner._thread
    assert first is not second
    first.join(60)
    settle(runner, later)
    assert state.simulation.of is state.evaluation  # only the last drag's step is shown
    assert state.simulation.step.step_us == pytest.approx(simulated_us(state, state.mapping))


def test_nothing_is_simulated_while_a_search_runs_and_the_best_after(state):
    later = Later()
    runner = StepRunner(state, later)
    settle(runner, later)
    search = SearchRunner(state, interval_s=0.0)
    search.start(ESConfig(budget=10, seed=1))
    search.join(60)
    later.run()
    assert state.search.best_on_mesh and not state.search.running
    settle(runner, later)  # the search's end asked for the best's step
    assert state.simulation.of is state.search.best_evaluation
    best = state.best_mapping()
    assert state.simulation.step.step_us == pytest.approx(simulated_us(state, best))


def test_a_step_longer_than_the_clients_limit_is_said_not_simulated():
    access = ClientAccess(ClientLimits(cycles=1_000))
    state = ExplorerState.from_specs("sparse-mlp-1", "loihi2", access=access)
    later = Later()
    runner = StepRunner(state, later)
    runner.request()
    settle(runner, later)
    assert state.simulation.step is None and state.simulation.of is state.evaluation
    assert "1000 cycles" in state.simulation.error and not state.simulation.running


def test_the_card_shows_the_step_when_it_arrives_and_greys_it_while_a_newer_runs(state):
    from explorer.views.metrics import MetricsView, format_change, format_quantity

    later = Later()
    runner = StepRunner(state, later)
    cards = MetricsView(state=state, simulated=True)
    runner.request()
    assert 'data-testid="metric-simulated"' in cards.html and ">…<" in cards.html
    settle(runner, later)
    assert f">{format_quantity(state.simulation.step.step_us)}<" in cards.html
    assert "pending" not in cards.html
    cores = state.mapping.placement.cores
    state.swap_cores(int(cores[0]), int(cores[8]))
    later.run()  # the session's next tick starts the newer one
    assert "metric-card sim pending" in cards.html and "simulating the change" in cards.html
    settle(runner, later)
    pct = 100 * (state.simulation.step.step_us / state.simulation.start_us - 1)
    assert f"{format_change(pct)} vs start" in cards.html and "pending" not in cards.html
    assert 'data-testid="metric-simulated"' not in MetricsView(state=state).html  # opt-in


def test_a_long_step_tells_the_card_how_far_it_has_got(state, monkeypatch):
    import explorer.step_runner as step_runner
    from explorer.views.metrics import simulated_card

    monkeypatch.setattr(step_runner, "PROGRESS_S", 0.0)  # every slice reports
    later = Later()
    runner = StepRunner(state, later)
    runner.request()
    runner.join(60)
    shown = state.shown_evaluation
    reports = list(later.calls)  # progress reports, then the result
    assert len(reports) >= 2
    reports[0]()  # the first report: the card says how far the simulation has got
    assert state.simulation.running and state.simulation.cycles > 0
    model_cycles = shown.latency_us * 1000 / state.hardware.noc.cycle_ns
    pct = round(100 * state.simulation.cycles / model_cycles)
    assert f"simulating: {pct} % of the model's step" in html.unescape(simulated_card(state))
    later.run()  # the remaining reports and the result
    assert not state.simulation.running and state.simulation.of is shown
    assert "of the model's step" not in simulated_card(state)


def test_progress_leaves_the_step_as_it_is(state):
    mapped = Mapped.of(state.network, state.hardware, state.mapping)
    seen = []
    plain = simulate_step(mapped, seed=0)
    reported = simulate_step(mapped, seed=0, progress=seen.append)
    assert reported.step_cycles == plain.step_cycles and reported.step_us == plain.step_us
    assert (reported.link_flits == plain.link_flits).all()
    assert seen == sorted(seen) and len(seen) >= plain.cycles // 5_000
    assert seen[-1] == plain.cycles  # the last report: where the step ended
