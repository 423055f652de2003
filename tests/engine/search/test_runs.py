"""Both searches report one event shape (``make_search``), and a run as the command line asks
for one (``engine.search.runs``) checks its options in the engine, before any evaluator or
executor is made, and returns everything the command prints."""

from __future__ import annotations

import math

import pytest

from engine.errors import SpecError
from engine.hardware import load_hardware
from engine.search import ESConfig, Event, Record, make_search
from engine.search.pareto import ParetoConfig
from engine.search.runs import EvaluatorOptions, run_evolution, run_pareto
from engine.specs import load_network_spec

MLP = "mlp:widths=256-512-256-10"
DEEP = "mlp:widths=256-512-512-512-256-10"
NOWHERE = EvaluatorOptions(dask_scheduler="tcp://127.0.0.1:9")  # no cluster listens there


@pytest.fixture(scope="module")
def mlp():
    return load_network_spec(MLP), load_hardware("mesh:2x2x4")


@pytest.mark.parametrize(
    "config",
    [ESConfig(budget=23, seed=1), ParetoConfig(objectives=("energy", "latency"), budget=23),
     ParetoConfig(objectives=("latency",), algorithm="pso", budget=23, seed=2)],
    ids=["evolve", "pareto", "pso"],
)  # fmt: skip
def test_both_searches_yield_an_event_per_evaluation_with_the_best_so_far(mlp, config):
    net, hw = mlp
    events = list(make_search(net, hw, config).iter_run())
    assert all(type(e) is Event and type(e.record) is Record for e in events)
    assert [e.count for e in events] == list(range(1, 24)) and {e.budget for e in events} == {23}
    assert [e.record.index for e in events] == list(range(23))
    first = config.objectives[0]
    for k, e in enumerate(events):
        assert e.record.objectives[first] == e.record.fitness or not e.record.feasible
        seen = [x.record for x in events[: k + 1] if x.record.feasible]
        assert e.best.fitness == min(r.fitness for r in seen)  # the best so far, by the first
        assert e.best is next(r for r in seen if r.fitness == e.best.fitness)  # the first of equals
    assert math.isclose(events[-1].progress, 1.0)


@pytest.mark.parametrize(
    ("kw", "words"),
    [
        ({"config": ESConfig(segments=2)}, "--segments splits the layers of the chipwise"),
        ({"strategy": "chipwise", "resume": "run.ckpt"}, "chipwise runs keep no checkpoint"),
        ({"start": "m.json", "resume": "run.ckpt"}, "--start begins a new run"),
        ({"strategy": "chipwise", "start": "m.json"}, "only the global strategy starts"),
        ({"config": ESConfig(objective="connectivity"),
          "options": EvaluatorOptions(command="true", dask_scheduler="tcp://127.0.0.1:9")},
         "--objective connectivity cannot be read from it"),
        ({"given": {"init_k": 99}, "config": ESConfig(init_k=99)}, "--init-k 99 asks for 99"),
    ],
    ids=["segments", "resume-chipwise", "start-resume", "start-chipwise", "command", "init-k"],
)  # fmt: skip
def test_evolution_checks_its_options_before_any_evaluator_or_executor(mlp, kw, words):
    """With a Dask scheduler no cluster listens on, a check made after the executor would
    say it cannot reach the cluster."""
    net, hw = mlp
    kw = {"config": ESConfig(), "options": NOWHERE, **kw}
    with pytest.raises(SpecError, match=words):
        run_evolution(net, hw, kw.pop("config"), **kw)


@pytest.mark.parametrize(
    ("kw", "words"),
    [
        ({"options": EvaluatorOptions(command="true", dask_scheduler="tcp://127.0.0.1:9"),
          "config": ParetoConfig(objectives=("latency", "connectivity"))},
         "choose objectives among latency, energy, cores"),
        ({"codesign": ["npes"]}, "--codesign rates each hardware variant"),
        ({"given": {"init_k": 99}, "config": ParetoConfig(init_k=99)}, "--init-k 99 asks for 99"),
    ],
    ids=["command", "codesign", "init-k"],
)  # fmt: skip
def test_pareto_checks_its_options_before_any_evaluator_or_executor(mlp, kw, words):
    net, hw = mlp
    kw = {"config": ParetoConfig(), "options": NOWHERE, **kw}
    with pytest.raises(SpecError, match=words):
        run_pareto(net, hw, kw.pop("config"), **kw)


def test_a_run_says_its_segments_when_it_has_them(tmp_path):
    """The chipwise strategy's result holds its segments; a global run's holds none."""
    net, hw = load_network_spec(DEEP), load_hardware("mesh:2x2x4@2x1")
    chipwise = run_evolution(net, hw, ESConfig(budget=12, seed=1), strategy="chipwise")
    segments = chipwise.summary()["segments"]
    assert [g["chip"] for g in segments] == [0, 1]
    assert sum(len(g["layers"]) for g in segments) == len(net.core_populations)
    single = run_evolution(net, hw, ESConfig(budget=6, seed=1), out=tmp_path / "best.json")
    assert single.summary()["segments"] is None
    assert single.written == {"best mapping": tmp_path / "best.json"}
    assert single.summary()["best"]["latency_us"] == single.best_model.latency_us
