"""The algorithms registry of the multi-objective search (``engine.search.pareto.algorithms``):
every registered algorithm runs a valid, reproducible, resumable search through the
registry; the continuous ones (PSO, ISRES) decode their rows to mappings; MOEA/D, which
pymoo runs without constraints, never keeps a mapping that breaks one."""

from __future__ import annotations

import json

import numpy as np
import pytest

from engine.cli import main
from engine.errors import SpecError
from engine.hardware import load_hardware
from engine.mapping.assignment import mapping_to_dict, parse_mapping_dict
from engine.pipeline import build_mapping, evaluate
from engine.search.pareto import ParetoConfig, ParetoSearch, algorithms, read_history
from engine.search.pareto.history import write_history
from engine.specs import load_network_spec

MLP = "mlp:widths=256-512-256-10"
BUDGET = 95  # every algorithm's last generation is cut short


def objectives_for(name: str) -> tuple[str, ...]:
    return ("latency",) if algorithms[name].objectives == "one" else ("latency", "energy")


def settings(name: str, **kw) -> ParetoConfig:
    """A small run of the algorithm (populations of about ten, so a few generations fit)."""
    base = {"objectives": objectives_for(name), "algorithm": name, "budget": BUDGET,
            "population": 10, "offspring": 24 if name == "isres" else 0}  # fmt: skip
    return ParetoConfig(**{**base, **kw})


@pytest.fixture(scope="module")
def mlp():
    return load_network_spec(MLP), load_hardware("mesh:2x2x4")


@pytest.fixture(scope="module")
def runs(mlp):
    """A run of every registered algorithm, by name."""
    net, hw = mlp
    return {name: ParetoSearch(net, hw, settings(name, seed=3)).run() for name in algorithms}


def dominated(a, b) -> bool:
    return bool(np.all(b <= a) and np.any(b < a))


def test_the_senmap_algorithms_that_pymoo_has_are_registered():
    assert {"ga", "pso", "isres", "nsga2", "nsga3", "moead"} <= set(algorithms)
    assert all(algorithms[n].objectives == "one" for n in ("ga", "pso", "isres"))
    assert all(algorithms[n].objectives == "several" for n in ("nsga3", "moead"))


@pytest.mark.parametrize("name", list(algorithms))
def test_every_algorithm_spends_its_budget_on_valid_mappings(mlp, runs, name):
    net, hw = mlp
    res = runs[name]
    assert len(res.evaluations) == BUDGET
    assert [e.index for e in res.evaluations] == list(range(BUDGET))
    layout_cores = set(range(hw.n_cores))
    for e in res.evaluations:
        if any(e.violations):  # asks more cores than there are: not evaluated
            assert not e.feasible and e.objectives["latency"] == float("inf")
            continue
        used = sum(e.cores_per_population)
        assert len(e.placement) == used and len(set(e.placement)) == used  # distinct cores
        assert set(e.placement) <= layout_cores
        # what it rated is the mapping it says
        mapped = build_mapping(MLP, "mesh:2x2x4", mapping_file=parse_mapping_dict(
            mapping_to_dict(net, hw, e.mapping(net))))  # fmt: skip
        assert evaluate(mapped).latency_us == pytest.approx(e.objectives["latency"])
    assert set(res.heuristics) >= {"packed-row", "spread-col"}  # the heuristics start it
    assert sum(e.generation > 0 for e in res.evaluations) > 0  # it bred or moved beyond them


@pytest.mark.parametrize("name", list(algorithms))
def test_every_front_is_the_non_dominated_set_and_holds_or_beats_the_heuristics(runs, name):
    res = runs[name]
    names = res.config.objectives
    front = np.array([[e.objectives[n] for n in names] for e in res.front])
    every = np.array([[e.objectives[n] for n in names] for e in res.evaluations if e.feasible])
    assert not any(dominated(p, q) for p in front for q in every)
    for e in res.heuristics.values():
        h = np.array([e.objectives[n] for n in names])
        assert any(np.array_equal(p, h) or dominated(h, p) for p in front)


@pytest.mark.parametrize("name", ["pso", "isres", "moead"])
def test_same_seed_same_run_other_seed_other_run(mlp, name):
    net, hw = mlp

    def values(seed):
        res = ParetoSearch(net, hw, settings(name, seed=seed)).run()
        return [(e.cores_per_population, e.placement) for e in res.evaluations]

    assert values(1) == values(1)
    assert values(1) != values(2)


@pytest.mark.parametrize("name", ["pso", "isres", "moead"])
def test_a_resumed_run_is_the_uninterrupted_one(mlp, runs, name, tmp_path):
    """Cut after 50 evaluations, resumed to the budget from its history: value for value."""
    net, hw = mlp
    cfg = settings(name, seed=3)
    short = ParetoSearch(net, hw, settings(name, seed=3, budget=50)).run()
    path = tmp_path / "h.jsonl"
    write_history(path, short)
    known, rows = read_history(path, cfg.objectives, ParetoSearch(net, hw, cfg).settings())
    assert rows == 50
    search = ParetoSearch(net, hw, cfg, known=known)
    resumed = search.run()
    assert search.reused >= sum(e.feasible for e in short.evaluations)  # (and revisits)
    whole = runs[name]
    assert [(e.placement, e.objectives) for e in resumed.evaluations] == [
        (e.placement, e.objectives) for e in whole.evaluations
    ]


def test_the_continuous_algorithms_decode_any_row_to_a_mapping(mlp):
    """PSO and ISRES move rows in a continuous space: a row of reals decodes to integer core
    counts and a permutation (the placement genes' rank order), and a row of the mapping
    operators decodes to itself."""
    net, hw = mlp
    search = ParetoSearch(net, hw, settings("pso"))
    problem, rng = search.problem, np.random.default_rng(0)
    for _ in range(20):
        row = rng.uniform(problem.xl, problem.xu)
        x, omega = problem.split(row)
        assert x.extra.dtype == np.int64 and np.array_equal(x.extra, np.rint(row[: x.extra.size]))
        assert sorted(omega.tolist()) == list(range(problem.layout.c_tot))
        keys = row[problem.n_int :]
        assert np.all(np.diff(keys[np.argsort(omega)]) >= 0)  # lower key, lower core
        again = problem.join(x, omega, problem.knobs(row))
        x2, omega2 = problem.split(again)
        assert np.array_equal(x2.extra, x.extra) and np.array_equal(omega2, omega)


def test_moead_keeps_no_mapping_that_breaks_a_constraint(mlp):
    """pymoo's MOEA/D takes no constraints: a mapping over the cores sees the worst values,
    and the front never holds one."""
    net, hw = mlp
    search = ParetoSearch(net, hw, settings("moead", budget=20, seed=0))
    assert search.problem.n_ieq_constr == 0
    layout = search.layout
    extra = np.zeros(layout.n_layers, dtype=np.int64)
    extra[0] = layout.spare + 1  # one core more than the hardware has
    f, _ = search._evaluate(np.concatenate([extra, layout.cores])[None])
    assert np.all(f >= 1e30) and not search.history[-1].feasible
    res = search.run()
    assert all(e.feasible for e in res.front)


def test_moead_on_a_mosaic_sees_a_mapping_its_tiles_cannot_route_at_its_worst():
    """The crossbar rows a Mosaic's tiles lack are known only once the mapping is rated:
    MOEA/D, blind to constraints, must see such a mapping's objectives at their worst."""
    from engine.search.genotype import encode

    net = load_network_spec("mlp:widths=64-128-128-10,density=0.03")
    cfg = settings("moead", objectives=("latency", "routing-entries"), budget=40, seed=0)
    search = ParetoSearch(net, load_hardware("mosaic-8x8"), cfg)
    res = search.run()
    lacking = [e for e in res.evaluations if e.metrics.get("routing_overflow", 0) > 0]
    assert lacking and all(not e.feasible for e in lacking)
    assert all(e.metrics["routing_overflow"] == 0 for e in res.front)
    row = search.problem.join(*encode(search.layout, net, lacking[0].mapping(net)))
    f, g = search._evaluate(row[None])
    assert g[0, 1] >= lacking[0].metrics["routing_overflow"] and np.all(f >= 1e30)


@pytest.mark.parametrize(
    ("kw", "message"),
    [
        ({"algorithm": "pso", "objectives": ("latency", "energy")}, "PSO minimizes one"),
        ({"algorithm": "isres", "objectives": ("latency", "cores")}, "ISRES minimizes one"),
        ({"algorithm": "moead", "objectives": ("latency",)}, "MOEA/D decomposes a front"),
        ({"algorithm": "pso", "objectives": ("latency",), "offspring": 5}, "whole swarm"),
        ({"algorithm": "isres", "objectives": ("latency",), "population": 10, "offspring": 15},
         "at least twice the population (20)"),
        ({"algorithm": "moead", "population": 10, "offspring": 11}, "--offspring 10"),
    ],
)  # fmt: skip
def test_settings_an_algorithm_cannot_run_are_refused(kw, message):
    with pytest.raises(SpecError, match=message.replace("(", r"\(").replace(")", r"\)")):
        ParetoConfig(**kw)


def test_the_command_line_runs_a_registered_algorithm_and_lists_them(capsys, tmp_path):
    hist = tmp_path / "h.jsonl"
    argv = ["pareto", "--network", MLP, "--hardware", "mesh:2x2x4", "--objectives", "latency",
            "--algorithm", "pso", "--seed", "2", "--json"]  # fmt: skip
    assert main([*argv, "--budget", "40", "--history", str(hist)]) == 0
    first = json.loads(capsys.readouterr().out)
    assert first["algorithm"] == "pso" and first["evaluations"] == 40
    assert main([*argv, "--budget", "60", "--resume", str(hist)]) == 0
    resumed = json.loads(capsys.readouterr().out)
    assert resumed["evaluations"] == 60 and resumed["reused"] >= first["feasible"]
    assert main([*argv, "--budget", "60", "--history", str(tmp_path / "b.jsonl")]) == 0
    assert json.loads(capsys.readouterr().out)["front"] == resumed["front"]
    assert main(["list", "algorithms"]) == 0
    listed = capsys.readouterr().out
    assert all(f"  {name}" in listed for name in algorithms)
    with pytest.raises(SystemExit) as exit_:  # the choices are the registry's
        main(["pareto", "--network", MLP, "--algorithm", "annealing"])
    assert exit_.value.code == 2
    choices = ", ".join(repr(name) for name in algorithms)
    assert f"'annealing' (choose from {choices})" in capsys.readouterr().err
