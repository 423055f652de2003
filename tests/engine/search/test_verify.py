"""A search's answer is the simulator's (``engine.search.verify``, issue 55).

* ``simulator_check`` simulates each candidate with the same spikes and picks the fastest
  simulated step, whatever the predictor said of them.
* ``evolve`` simulates its best few at the end: both figures for each, and its best — the
  summary, the mapping file it writes — is the simulator's pick; ``--verify 0`` leaves the
  predictor's best. The run names its predictor.
* ``pareto`` simulates its front: each point's simulated step, and the points that stay
  non-dominated when latency is the simulated step.
* On the command line: ``--predictor`` picks the predictor of ``evaluate``, ``evolve`` and
  ``pareto``, and their outputs name it.
"""

from __future__ import annotations

import json
from dataclasses import replace
from functools import cache

import numpy as np
import pytest

from engine.cli import main
from engine.hardware import load_hardware
from engine.pipeline import Mapped, build_mapping, resolve_network
from engine.search import ESConfig
from engine.search.history import read_history
from engine.search.pareto import ParetoConfig
from engine.search.record import Record
from engine.search.runs import EvaluatorOptions, run_evolution, run_pareto
from engine.search.verify import finalists, simulator_check
from engine.simulate import draw_spikes, simulate_step

NET, HW = "sparse-mlp-1", "loihi2"


@cache
def network_and_hardware():
    return resolve_network(NET), load_hardware(HW)


def simulated(mapping, seed=0) -> float:
    net, hw = network_and_hardware()
    spikes = draw_spikes(net.rate, "sample", seed=seed)
    return simulate_step(Mapped.of(net, hw, mapping), spikes=spikes, seed=seed).step_us


def fake_record(index: int, latency: float, mapping) -> Record:
    return Record(
        index=index, generation=0, level="init", latency_us=latency, energy_uj=1.0, power_w=1.0,
        cores_used=mapping.partition.n_parts, accepted=False, failed=False, fitness=latency,
        cores_per_population=(), placement=tuple(mapping.placement.cores.tolist()),
    )  # fmt: skip


def test_the_simulator_picks_the_fastest_simulated_candidate_whatever_was_predicted():
    net, hw = network_and_hardware()
    base = build_mapping(net, hw, partition="min+2", placement="packed-col")
    others = [build_mapping(net, hw, partition=base.mapping.partition, placement=p).mapping
              for p in ("spread-col", "packed-row")]  # fmt: skip
    mappings = [base.mapping, *others]
    steps = [simulated(m) for m in mappings]
    assert np.argmin(steps) != 0  # packed-col is the slowest of the three
    # the predictor says packed-col is best: the simulator overrules it
    predicted = (1.0, 2.0, 3.0)
    records = [fake_record(i, predicted[i], m) for i, m in enumerate(mappings)]
    check = simulator_check(net, hw, records, mappings, predictor="max-affine")
    assert [c["simulated_us"] for c in check.candidates] == pytest.approx(steps)
    assert check.chosen == int(np.argmin(steps)) and check.changed
    assert check.to_dict()["decided_by"] == "simulator"


def test_finalists_are_the_best_distinct_feasible_records():
    net, hw = network_and_hardware()
    m = build_mapping(net, hw, partition="min+2", placement="packed-row").mapping
    a, b, c = fake_record(0, 3.0, m), fake_record(1, 1.0, m), fake_record(2, 2.0, m)
    b2 = replace(b, index=3)  # the same mapping again
    other = replace(c, placement=tuple(reversed(c.placement)), index=4, fitness=1.5)
    assert [r.index for r in finalists([a, b, c, b2, other], 2)] == [1, 4]


@pytest.mark.parametrize("predictor", ["max-affine", "flow"])
def test_evolve_ends_on_the_simulators_word(predictor, tmp_path):
    net, hw = network_and_hardware()
    out = tmp_path / "best.json"
    run = run_evolution(
        net, hw, ESConfig(budget=16, seed=1), out=str(out),
        options=EvaluatorOptions(predictor=predictor, verify=4),
    )  # fmt: skip
    s = run.summary()
    check = s["simulator_check"]
    assert s["predictor"] == check["predictor"] == predictor
    assert len(check["candidates"]) == 4
    by_index = {c["index"]: c for c in check["candidates"]}
    for i, c in by_index.items():  # each candidate's figures: the predictor's and the step
        record = run.result.history[i]
        assert c["predicted_us"] == record.latency_us
        assert c["simulated_us"] == pytest.approx(simulated(record.mapping(net), seed=1))
    fastest = min(by_index.values(), key=lambda c: c["simulated_us"])
    assert check["chosen"] == fastest["index"] == run.result.best.index
    assert s["best"]["predictor"] == predictor
    written = json.loads(out.read_text())
    assert written["placement"] == json.loads(json.dumps(
        [list(hw.core_address(c)) for c in run.result.best.placement]))  # fmt: skip
    history = tmp_path / "history.jsonl"
    plain = run_evolution(net, hw, ESConfig(budget=16, seed=1), history=str(history),
                          options=EvaluatorOptions(predictor=predictor, verify=0))  # fmt: skip
    assert "simulator_check" not in plain.summary()
    # the history's first line names a predictor other than the default
    settings = read_history(history).run.settings
    assert settings.get("predictor") == (None if predictor == "max-affine" else predictor)


def test_pareto_simulates_its_front():
    net, hw = network_and_hardware()
    run = run_pareto(net, hw, ParetoConfig(budget=30, seed=2),
                     options=EvaluatorOptions(predictor="flow", verify=3))  # fmt: skip
    s = run.summary()
    check = s["simulator_check"]
    assert s["predictor"] == "flow" and check["front"]
    points = [p for p in s["front"] if "simulated_us" in p]
    assert len(points) == len(check["candidates"]) <= 12
    steps = {c["index"]: c["simulated_us"] for c in check["candidates"]}
    on = [i for i in steps if i in check["front"]]
    # a point left off is dominated by one kept, its latency read as the simulated step
    for i, e in ((e.index, e) for e in run.result.front if e.index in steps):
        if i in on:
            continue
        assert any(
            steps[j] <= steps[i]
            and run.result.evaluations[j].objectives["energy"] <= e.objectives["energy"]
            for j in on
        )


def test_the_command_line_names_and_picks_the_predictor(capsys):
    assert main(["evaluate", "--predictor", "flow", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["predictor"] == "flow" and out["predictor_terms_us"]["max-affine"] > 0
    assert main(["evaluate"]) == 0
    assert "predictor: max-affine)" in capsys.readouterr().out
    assert main(["evolve", "--budget", "8", "--predictor", "flow", "--verify", "2", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["predictor"] == "flow" and len(out["simulator_check"]["candidates"]) == 2
