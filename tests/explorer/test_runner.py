"""The explorer's one search runner (``explorer.runner``): either search, in a thread, its
events handed to a listener in order and its end once; the state's listener publishes a
multi-objective run as it does an evolution."""

from __future__ import annotations

import pytest

from engine.search import ESConfig, Event
from engine.search.pareto import ParetoConfig
from explorer.runner import SearchRunner
from explorer.state import ActionError, ExplorerState

NET = "mlp:widths=256-512-256-10"


@pytest.fixture
def state():
    return ExplorerState.from_specs(NET, "mesh:2x2x4")


class Recorder:
    """A listener that keeps what it was told."""

    def __init__(self, refuse: bool = False):
        self.refuse, self.calls, self.events = refuse, [], []

    def on_start(self, config, from_current):
        if self.refuse:
            raise ActionError("not now")
        self.calls.append(("start", config.kind))

    def on_events(self, events):
        self.calls.append(("events", len(events)))
        self.events += events

    def on_end(self, search, cancelled, error):
        self.calls.append(("end", cancelled, error))


@pytest.mark.parametrize(
    "config",
    [ESConfig(budget=17, seed=1), ParetoConfig(objectives=("latency", "cores"), budget=17),
     ParetoConfig(objectives=("latency",), algorithm="isres", population=5, budget=17)],
    ids=["evolve", "nsga2", "isres"],
)  # fmt: skip
def test_one_runner_hands_any_search_s_events_to_its_listener_in_order(state, config):
    listener = Recorder()
    runner = SearchRunner(state, interval_s=3600.0, listener=listener)  # throttled: the first
    runner.start(config)  # event at once, the others with the end
    runner.join(120)
    assert not runner.running
    assert listener.calls == [("start", config.kind), ("events", 1), ("events", 16),
                              ("end", False, "")]  # fmt: skip
    assert all(isinstance(e, Event) for e in listener.events)
    assert [e.count for e in listener.events] == list(range(1, 18))  # every one, once
    assert not state.search.running  # a listener of its own: the state is left alone


class _Events:
    """A stand-in search: ``n`` events, handed out as the runner iterates."""

    def __init__(self, n: int):
        self.n = n

    def iter_run(self, cancel):
        yield from range(1, self.n + 1)


class _Clock:
    """``time.monotonic`` from a chosen origin, moving ``step_s`` at each reading."""

    def __init__(self, origin_s: float, step_s: float):
        self.now, self.step_s = origin_s, step_s

    def monotonic(self) -> float:
        self.now += self.step_s
        return self.now - self.step_s


# the clock's origin is arbitrary (on Linux: the boot), so a fresh machine reads a few
# seconds, one up for months reads millions: the first event goes out at once on either
@pytest.mark.parametrize("origin_s", [0.0, 1.5, 1e7], ids=["boot", "up-1.5-s", "months"])
@pytest.mark.parametrize(
    ("step_s", "flushes"),
    [(0.0, [("events", 1), ("events", 4)]),  # a still clock: the first, the rest at the end
     (2.0, [("events", 1), ("events", 2), ("events", 2)]),  # an interval every two events
     (3.0, [("events", 1)] * 5)],  # an interval between every two events
    ids=["still", "every-two", "every-one"],
)  # fmt: skip
def test_the_first_event_goes_out_at_once_whatever_the_clock_reads(
    state, monkeypatch, origin_s, step_s, flushes
):
    monkeypatch.setattr("explorer.runner.time", _Clock(origin_s, step_s))
    listener = Recorder()
    runner = SearchRunner(state, interval_s=3.0, listener=listener)
    runner._run(_Events(5))  # (on this thread: the runner's loop alone)
    assert listener.calls == [*flushes, ("end", False, "")]
    assert listener.events == [1, 2, 3, 4, 5]


def test_a_listener_that_refuses_the_run_keeps_it_from_starting(state):
    runner = SearchRunner(state, listener=Recorder(refuse=True))
    with pytest.raises(ActionError, match="not now"):
        runner.start(ParetoConfig(budget=10))
    assert not runner.running and runner._thread is None


def test_the_state_listener_publishes_a_multi_objective_run_like_an_evolution(state):
    runner = SearchRunner(state, interval_s=0.0)  # the default listener: the state
    runner.start(ParetoConfig(objectives=("latency", "energy"), budget=30, seed=2))
    runner.join(120)
    assert not state.search.running and state.search.status.startswith("done after 30")
    assert [t[0] for t in state.search.trace] == list(range(1, 31))
    best = min((r for r in state.search.points if r.feasible), key=lambda r: r.fitness)
    assert state.search.best.index == best.index  # the best by the first objective
    assert state.search.best_evaluation.latency_us == pytest.approx(best.latency_us)
