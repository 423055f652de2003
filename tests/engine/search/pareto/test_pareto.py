"""SENMap's multi-objective search on pymoo: operators, fronts, constraints, executors, CLI."""

from __future__ import annotations

import csv
import io
import json
import math
import os
import threading
from pathlib import Path

import numpy as np
import pytest

from engine.cli import main
from engine.errors import SpecError
from engine.executors import DaskExecutor, ProcessExecutor, Setup
from engine.hardware import load_hardware
from engine.mapping.assignment import parse_mapping_dict
from engine.mesh_shape import mesh_slots
from engine.pipeline import build_mapping, evaluate
from engine.search import ESConfig, ModelEvaluator, NestedES, objectives
from engine.search.evaluators import Candidate, Outcome
from engine.search.genotype import PartitionGenotype
from engine.search.pareto import (
    MappingCrossover,
    MappingMutation,
    MappingSampling,
    ParetoConfig,
    ParetoSearch,
    non_dominated,
    read_history,
    write_history,
)
from engine.specs import load_network_spec

MLP = "mlp:widths=256-512-256-10"


@pytest.fixture(scope="module")
def mlp():
    """The MLP on 16 cores: core counts and placements change every objective."""
    return load_network_spec(MLP), load_hardware("mesh:2x2x4")


def points(result, names):
    return np.array([[e.objectives[n] for n in names] for e in result.front])


def dominates(a, b) -> bool:
    return bool(np.all(a <= b) and np.any(a < b))


@pytest.fixture(scope="module")
def run3(mlp):
    net, hw = mlp
    cfg = ParetoConfig(objectives=("latency", "energy", "cores"), budget=150, seed=1)
    return ParetoSearch(net, hw, cfg).run()


# ------------------------------------------------------------------ fronts
def test_front_is_non_dominated_over_every_feasible_evaluation(run3):
    names = run3.config.objectives
    front = points(run3, names)
    every = np.array([[e.objectives[n] for n in names] for e in run3.evaluations if e.feasible])
    assert len(run3.evaluations) == 150 and front.shape[0] >= 2
    for p in front:
        assert not any(dominates(q, p) for q in every)
    # and every feasible evaluation off the front is dominated by (or equal to) a front point
    for q in every:
        assert any(dominates(p, q) or np.array_equal(p, q) for p in front)


def test_front_holds_or_dominates_every_heuristic(run3):
    names = run3.config.objectives
    front = points(run3, names)
    assert set(run3.heuristics) == set(ParetoConfig().heuristics)
    for e in run3.heuristics.values():
        h = np.array([e.objectives[n] for n in names])
        assert any(np.array_equal(p, h) or dominates(p, h) for p in front)


def test_the_search_improves_on_the_heuristics(mlp):
    net, hw = mlp
    res = ParetoSearch(net, hw, ParetoConfig(objectives=("latency",), algorithm="ga",
                                             budget=150, seed=0)).run()  # fmt: skip
    best = min(e.objectives["latency"] for e in res.evaluations if e.feasible)
    assert [e.objectives["latency"] for e in res.front] == [best]
    assert best < min(e.objectives["latency"] for e in res.heuristics.values())


def test_nsga3_runs_three_objectives(mlp):
    net, hw = mlp
    cfg = ParetoConfig(objectives=("latency", "cores", "connectivity"), algorithm="nsga3",
                       budget=80, seed=2)  # fmt: skip
    res = ParetoSearch(net, hw, cfg).run()
    front = points(res, cfg.objectives)
    assert len(res.evaluations) == 80
    assert all(not dominates(a, b) for a in front for b in front)


def test_non_dominated_keeps_the_first_of_equal_points():
    pts = np.array([[1.0, 2.0], [2.0, 1.0], [1.0, 2.0], [2.0, 2.0], [0.5, 3.0]])
    assert non_dominated(pts).tolist() == [0, 1, 4]


# ------------------------------------------------------------------ reproducibility
def test_same_seed_same_run_other_seed_other_run(mlp):
    net, hw = mlp

    def genotypes(seed):
        cfg = ParetoConfig(budget=60, seed=seed)
        res = ParetoSearch(net, hw, cfg).run()
        return [(e.cores_per_population, e.placement, e.objectives["latency"])
                for e in res.evaluations]  # fmt: skip

    assert genotypes(3) == genotypes(3)
    assert genotypes(3) != genotypes(4)


def test_local_processes_give_the_same_run(mlp):
    net, hw = mlp
    cfg = ParetoConfig(budget=50, seed=5)
    serial = ParetoSearch(net, hw, cfg).run()
    executor = ProcessExecutor(2)
    try:
        ev = ModelEvaluator(net, hw, executor=executor)
        parallel = ParetoSearch(net, hw, cfg, evaluator=ev).run()
    finally:
        executor.close()
    assert [e.objectives for e in serial.evaluations] == [
        e.objectives for e in parallel.evaluations
    ]


# ------------------------------------------------------------------ operators
def _valid(problem, row) -> bool:
    x, omega = problem.split(row)
    layout = problem.layout
    return (
        np.array_equal(np.sort(omega), np.sort(layout.cores))
        and np.all(x.extra >= 0)
        and np.all(x.extra <= problem.xu[: layout.n_layers])
    )


def test_operators_keep_core_counts_in_bounds_and_placements_permutations(mlp):
    net, hw = mlp
    search = ParetoSearch(net, hw, ParetoConfig(budget=10, seed=0))
    problem, rng = search.problem, np.random.default_rng(0)
    rows = MappingSampling(hw, search.config)._do(problem, 24, random_state=rng)
    assert all(_valid(problem, r) for r in rows)
    assert all(not any(problem.violations(problem.split(r)[0])) for r in rows)
    parents = np.stack([rows[:12], rows[12:]])
    kids = MappingCrossover(3.0)._do(problem, parents, random_state=rng)
    assert all(_valid(problem, r) for r in kids.reshape(-1, problem.n_var))
    mutated = MappingMutation(3.0, search.config.operators)._do(problem, rows, random_state=rng)
    assert all(_valid(problem, r) for r in mutated)
    assert not np.array_equal(mutated, rows)


def test_a_child_keeps_its_layers_cores_when_the_counts_do_not_change(mlp):
    net, hw = mlp
    search = ParetoSearch(net, hw, ParetoConfig(budget=10, seed=0))
    problem = search.problem
    row = MappingSampling(hw, search.config)._do(problem, 1, random_state=np.random.default_rng(1))[
        0
    ]
    same = np.stack([row[None], row[None]])
    kids = MappingCrossover(3.0)._do(problem, same, random_state=np.random.default_rng(2))
    # SBX of two equal parents changes nothing: both children are the parent
    assert np.array_equal(kids[0, 0], row) and np.array_equal(kids[1, 0], row)


# ------------------------------------------------------------------ constraints
class Counting(ModelEvaluator):
    def __init__(self, *a, **k):
        super().__init__(*a, **k)
        self.calls = 0

    def evaluate(self, candidate):
        self.calls += 1
        return super().evaluate(candidate)


def test_too_many_cores_is_a_violation_and_is_not_evaluated(mlp):
    net, hw = mlp
    ev = Counting(net, hw)
    search = ParetoSearch(net, hw, ParetoConfig(budget=10, seed=0), evaluator=ev)
    layout = search.layout
    extra = np.zeros(layout.n_layers, dtype=np.int64)
    extra[0] = layout.spare + 1  # one core more than the hardware has
    row = np.concatenate([extra, layout.cores])
    x, _ = search.problem.split(row)
    assert search.problem.violations(x) == (0.0, 1.0)
    f, g = search._evaluate(row[None])
    assert ev.calls == 0 and g.tolist() == [[0.0, 1.0]]
    assert not search.evaluations[-1].feasible
    ok = np.concatenate([np.zeros(layout.n_layers, dtype=np.int64), layout.cores])
    f, g = search._evaluate(ok[None])
    assert ev.calls == 1 and g.tolist() == [[0.0, 0.0]] and np.all(f < 1e30)


def test_a_split_that_breaks_a_core_limit_is_counted(mlp):
    net, hw = mlp
    search = ParetoSearch(net, hw, ParetoConfig(budget=10, seed=0))
    layout = search.layout
    fits = layout.fits
    # pretend the first layer's minimum split breaks a limit
    layout._fits[(0, int(layout.c_min[0]))] = False
    try:
        x = PartitionGenotype(np.zeros(layout.n_layers, dtype=np.int64), layout.spare)
        assert search.problem.violations(x) == (1.0, 0.0)
    finally:
        layout._fits.pop((0, int(layout.c_min[0])))
    assert fits(0, int(layout.c_min[0]))


def test_bad_settings_are_refused():
    with pytest.raises(SpecError, match="GA minimizes one objective"):
        ParetoConfig(objectives=("latency", "energy"), algorithm="ga")
    with pytest.raises(SpecError, match="unknown objective"):
        ParetoConfig(objectives=("latency", "speed"))
    with pytest.raises(SpecError, match="named twice"):
        ParetoConfig(objectives=("latency", "latency"))
    with pytest.raises(SpecError, match="unknown algorithm 'sms'"):
        ParetoConfig(algorithm="sms")


def test_cancel_keeps_the_front(mlp):
    net, hw = mlp
    cancel = threading.Event()
    search = ParetoSearch(net, hw, ParetoConfig(budget=500, seed=0))
    seen = 0
    for _event in search.iter_run(cancel):  # cancelled: the generation under way ends
        seen += 1
        cancel.set()
    res = search.result(cancelled=search.remaining > 0)
    assert res.cancelled and seen == len(res.evaluations) == ParetoConfig().pop_size
    assert res.front


# ------------------------------------------------------------------ objectives
def test_objectives_read_outcomes_and_metrics():
    o = Outcome(10.0, 2.0, 0.2, metrics={"cores_used": 31.0, "connectivity": 7.0})
    assert objectives["latency"].value(o) == 10.0
    assert objectives["cores"].value(o) == 31.0
    assert objectives["connectivity"].value(o) == 7.0
    assert objectives["area"].value(o) == 31 == mesh_slots(31, "strict-area")
    assert objectives["area-loose"].value(o) == 32
    assert objectives["area-square"].value(o) == 36
    assert objectives["max-link-utilization"].value(o) == math.inf  # not reported
    assert objectives["latency"].value(Outcome.failure("boom")) == math.inf


def test_model_outcomes_carry_the_metrics(mlp):
    net, hw = mlp
    search = ParetoSearch(net, hw, ParetoConfig(budget=10, seed=0))
    res = search.run()
    o = res.evaluations[0].outcome
    assert o.metrics["cores_used"] == sum(res.evaluations[0].cores_per_population)
    assert 0 < o.metrics["max_link_utilization"] <= 1
    assert o.metrics["connectivity"] > 0


# ------------------------------------------------------------------ Dask
@pytest.fixture(scope="module")
def cluster():
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=":0") as lc, Client(lc) as client:  # fmt: skip
        yield client


def test_dask_gives_the_same_pareto_run_and_nested_es(mlp, cluster):
    net, hw = mlp
    executor = DaskExecutor(cluster)
    cfg = ParetoConfig(budget=50, seed=7)
    serial = ParetoSearch(net, hw, cfg).run()
    on_dask = ParetoSearch(net, hw, cfg, evaluator=ModelEvaluator(net, hw, executor=executor)).run()
    assert [e.objectives for e in serial.evaluations] == [e.objectives for e in on_dask.evaluations]
    es = ESConfig(budget=30, seed=2)
    local = NestedES(net, hw, es).run()
    remote = NestedES(net, hw, es, evaluator=ModelEvaluator(net, hw, executor=executor)).run()
    assert [r.latency_us for r in local.history] == [r.latency_us for r in remote.history]
    assert len(cluster.scheduler_info()["workers"]) == 2


class _DiesTwice:
    """Kills its worker process on an evaluation, twice in all (files count the deaths):
    both workers of the cluster die, one after the other or together."""

    def __init__(self, folder):
        self.folder = folder

    def evaluate(self, item):
        for k in range(2):
            try:
                os.close(os.open(os.path.join(self.folder, f"died-{k}"), os.O_CREAT | os.O_EXCL))
            except FileExistsError:
                continue
            os._exit(1)
        return item * 2


def test_killed_workers_cost_a_retry_not_the_run(cluster, tmp_path):
    executor = DaskExecutor(cluster)
    setup = Setup(_DiesTwice, (str(tmp_path),))
    assert executor.map(setup, list(range(8))) == [2 * i for i in range(8)]
    assert (tmp_path / "died-0").exists() and (tmp_path / "died-1").exists()
    executor.close()


def test_an_unreachable_or_malformed_scheduler_is_a_clear_error():
    with pytest.raises(SpecError, match="cannot reach the Dask scheduler"):
        DaskExecutor("tcp://127.0.0.1:9", timeout_s=1)
    for bad in ("tcp://", "bogus://x:1", "127.0.0.1:notaport"):
        with pytest.raises(SpecError, match="give it as tcp://HOST:PORT"):
            DaskExecutor(bad)


# ------------------------------------------------------------------ the command
def test_pareto_command_writes_front_and_history(tmp_path, capsys):
    out, hist = tmp_path / "front.json", tmp_path / "h.csv"
    code = main([
        "pareto", "--network", MLP, "--hardware", "mesh:2x2x4", "--objectives",
        "latency,energy,cores", "--budget", "60", "--seed", "0", "--out", str(out),
        "--history", str(hist),
    ])  # fmt: skip
    assert code == 0
    text = capsys.readouterr().out
    assert "mappings on the front" in text and "packed-row" in text
    data = json.loads(out.read_text())
    assert data["evaluations"] == 60 and data["objectives"] == ["latency", "energy", "cores"]
    assert data["front"] and set(data["front"][0]["objectives"]) == {"latency", "energy", "cores"}
    with open(hist) as f:
        rows = list(csv.DictReader(line for line in f if not line.startswith("#")))
    assert len(rows) == 60 and {"latency", "cv_limits", "cv_cores", "placement"} <= set(rows[0])
    # a front point's mapping evaluates to its objectives
    point = data["front"][0]
    mapped = build_mapping(MLP, "mesh:2x2x4", mapping_file=parse_mapping_dict(point["mapping"]))
    ev = evaluate(mapped)
    assert ev.latency_us == pytest.approx(point["objectives"]["latency"])
    assert ev.cores_used == point["objectives"]["cores"]


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--objectives", "latency,energy", "--algorithm", "ga"], "GA minimizes one"),
        (["--objectives", "latency,warp"], "unknown objective"),
        (["--dask-scheduler", "tcp://nowhere"], "bad Dask scheduler address"),
    ],
)
def test_pareto_command_refuses_bad_input(argv, message, capsys):
    code = main(["pareto", "--network", MLP, "--hardware", "mesh:2x2x4", "--budget", "5", *argv])
    err = capsys.readouterr().err
    assert code == 2 and message in err and err.count("\n") == 1


def test_candidate_outcomes_come_back_in_order(mlp):
    net, hw = mlp
    executor = ProcessExecutor(2)
    try:
        ev = ModelEvaluator(net, hw, executor=executor)
        search = ParetoSearch(net, hw, ParetoConfig(budget=12, seed=0))
        from engine.search.genotype import decode

        x0 = PartitionGenotype.min_plus(search.layout, 0)
        cands = [Candidate(*decode(search.layout, x0, np.roll(search.layout.cores, k)))
                 for k in range(6)]  # fmt: skip
        assert [o.latency_us for o in ev.evaluate_batch(cands)] == [
            ModelEvaluator(net, hw).evaluate(c).latency_us for c in cands
        ]
    finally:
        executor.close()


# ------------------------------------------------------------------ resuming
def test_a_resumed_run_is_the_uninterrupted_one_and_evaluates_only_the_rest(mlp, tmp_path):
    net, hw = mlp
    cfg = ParetoConfig(budget=70, seed=9)
    whole = ParetoSearch(net, hw, cfg).run()
    path = tmp_path / "h.csv"
    write_history(path, whole)
    lines = path.read_text().splitlines(keepends=True)
    # the settings, the header, 35 whole rows, and row 36 cut by a kill
    path.write_text("".join(lines[:37]) + lines[37][:25])
    known, rows = read_history(path, cfg.objectives, whole.settings)
    assert rows == 35 and 0 < len(known) <= 35
    ev = Counting(net, hw)
    search = ParetoSearch(net, hw, cfg, evaluator=ev, known=known)
    resumed = search.run()
    assert [e.objectives for e in resumed.evaluations] == [e.objectives for e in whole.evaluations]
    # every mapping of the 35 rows is taken from the file; only the others are evaluated
    assert search.reused >= len(known)
    assert ev.calls == sum(e.feasible for e in whole.evaluations) - search.reused < 70 - 20


def test_a_history_of_a_placement_longer_than_the_csv_module_reads_resumes(mlp, tmp_path):
    """A placement lists a core per partition: a run of tens of thousands of cores writes a
    field longer than the csv module's 131,072 characters, and must still resume."""
    net, hw = mlp
    cfg = ParetoConfig(budget=20, seed=3)
    path = tmp_path / "h.csv"
    write_history(path, ParetoSearch(net, hw, cfg).run())
    lines = path.read_text().splitlines(keepends=True)
    long = " ".join(["1"] * 70_000)  # 139,999 characters
    feasible = next(csv.reader(lines[1:2])).index("feasible")
    row = next(r for r in csv.reader(lines[2:]) if r[feasible] == "1")
    row[-1] = long
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerow(row)
    path.write_text("".join(lines[:2]) + buffer.getvalue())
    limit = csv.field_size_limit()
    known, rows = read_history(path, cfg.objectives)
    assert rows == 1 and [k[1] for k in known] == [(1,) * 70_000]
    assert csv.field_size_limit() == limit  # put back


def test_pareto_command_resumes_from_its_history(tmp_path, capsys):
    hist = tmp_path / "h.csv"
    common = ["pareto", "--network", MLP, "--hardware", "mesh:2x2x4", "--seed", "1", "--json"]
    assert main([*common, "--budget", "40", "--history", str(hist)]) == 0
    first = json.loads(capsys.readouterr().out)
    assert main([*common, "--budget", "70", "--resume", str(hist)]) == 0
    resumed = json.loads(capsys.readouterr().out)
    assert resumed["evaluations"] == 70 and resumed["reused"] == first["feasible"]
    with open(hist) as f:
        assert [
            int(r["index"]) for r in csv.DictReader(line for line in f if not line.startswith("#"))
        ] == list(range(70))
    assert main([*common, "--budget", "70", "--history", str(tmp_path / "b.csv")]) == 0
    straight = json.loads(capsys.readouterr().out)
    assert straight["front"] == resumed["front"]


def test_a_history_of_other_objectives_is_refused(tmp_path, capsys):
    hist = tmp_path / "h.csv"
    common = ["pareto", "--network", MLP, "--hardware", "mesh:2x2x4", "--budget", "20"]
    assert main([*common, "--history", str(hist)]) == 0
    capsys.readouterr()
    assert main([*common, "--objectives", "latency,cores", "--resume", str(hist)]) == 2
    err = capsys.readouterr().err
    assert "resume with --objectives latency,energy" in err and err.count("\n") == 1


def test_heuristics_keep_their_names_when_a_start_duplicates_one(mlp):
    """pymoo drops a duplicate row of the first population: names follow rows, not places."""
    net, hw = mlp
    packed = build_mapping(MLP, "mesh:2x2x4", partition="min+2", placement="packed-row")
    cfg = ParetoConfig(budget=45, seed=0)
    search = ParetoSearch(net, hw, cfg, start=packed.mapping)
    res = search.run()
    first = [e for e in res.evaluations if e.generation == 0]
    assert len(first) == cfg.pop_size - 1  # the start and packed-row are one row
    for name in ("packed-row", "packed-col", "spread-row", "spread-col"):
        mapped = build_mapping(MLP, "mesh:2x2x4", partition="min+2", placement=name)
        assert res.heuristics[name].objectives["latency"] == pytest.approx(
            evaluate(mapped).latency_us
        ), name
    assert res.heuristics["start"].placement == res.heuristics["packed-row"].placement


def test_a_history_of_other_settings_or_a_damaged_one_is_refused(tmp_path, capsys):
    hist = tmp_path / "h.csv"
    common = ["pareto", "--network", MLP, "--hardware", "mesh:2x2x4", "--budget", "20"]
    assert main([*common, "--seed", "1", "--history", str(hist)]) == 0
    capsys.readouterr()
    before = hist.read_text()
    assert main([*common, "--seed", "2", "--budget", "30", "--resume", str(hist)]) == 2
    err = capsys.readouterr().err
    assert "other settings (seed 1)" in err and err.count("\n") == 1
    assert hist.read_text() == before  # nothing appended to a history it would not resume
    lines = before.splitlines(keepends=True)
    hist.write_text("".join(lines[:5]) + "3,0,not-a-number\n" + "".join(lines[5:]))
    assert main([*common, "--seed", "1", "--budget", "30", "--resume", str(hist)]) == 2
    assert "line 6: not a history row" in capsys.readouterr().err


def test_nsga3_needs_two_objectives():
    with pytest.raises(SpecError, match="two or more objectives"):
        ParetoConfig(objectives=("latency",), algorithm="nsga3")


def test_a_command_cannot_be_asked_for_what_it_does_not_report(capsys):
    code = main(["evolve", "--network", MLP, "--hardware", "mesh:2x2x4", "--budget", "4",
                 "--objective", "connectivity", "--evaluator-cmd", "true"])  # fmt: skip
    assert code == 2 and "cannot be read from it" in capsys.readouterr().err


def test_a_measured_front_holds_the_evaluators_figures_and_labels_the_models(capsys, tmp_path):
    """Hardware in the loop: the front's objectives are what the command measured, the
    model's prediction of each point rides beside it under ``model``; a heuristic whose
    evaluation failed prints ``failed (reason)`` and is null in the JSON."""
    import sys

    script = tmp_path / "rate.py"
    script.write_text(
        "import json, sys\n"
        "m = json.load(sys.stdin)\n"
        "xs = [((c * 2 + y) * 2 + x) * 4 + k for c, x, y, k in m['placement']]\n"
        "if xs == list(range(len(xs))):\n"  # packed-row: every core in the order of its id
        "    sys.exit('board busy')\n"
        "print(json.dumps({'latency_us': 7.0 + len(xs), 'energy_uj': 1.0 + sum(xs) / 1e3}))\n"
    )
    argv = ["pareto", "--network", MLP, "--hardware", "mesh:2x2x4", "--budget", "16",
            "--population", "8", "--offspring", "4",
            "--evaluator-cmd", f"{sys.executable} {script}"]  # fmt: skip
    assert main([*argv, "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["measured_by"] == "evaluator command"
    for p in d["front"]:
        assert p["objectives"]["latency"] == 7.0 + sum(p["cores_per_population"])
        assert p["model"]["latency_us"] != p["objectives"]["latency"]
    assert d["heuristics"]["packed-row"] is None
    assert "board busy" in d["heuristic_failures"]["packed-row"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "packed-row: failed (" in out and "(objectives measured by the evaluator command)" in out


class _CountsBuilds:
    """An evaluator whose construction leaves a file behind (one per build)."""

    def __init__(self, folder):
        Path(folder, f"built-{os.getpid()}-{id(self)}").touch()

    def evaluate(self, item):
        return item + 1


def test_local_workers_build_their_evaluator_once_each(tmp_path):
    executor = ProcessExecutor(2)
    try:
        setup = Setup(_CountsBuilds, (str(tmp_path),))
        for _ in range(3):
            assert executor.map(setup, list(range(10))) == list(range(1, 11))
    finally:
        executor.close()
    assert len(list(tmp_path.iterdir())) <= 2  # one a worker process, not one a task
