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


# ------------------------------------------------------------------ a resumed run checks its file
NET = "mlp:widths=64-128-32"


def _rows(path) -> list[str]:
    return path.read_text().splitlines()


def _edit_record(line: str, **changes) -> str:
    import json

    d = json.loads(line)
    d.update({k: v for k, v in changes.items() if k != "objectives"})
    d["objectives"] = {**d["objectives"], **changes.get("objectives", {})}
    return json.dumps(d)


@pytest.fixture(scope="module")
def histories(tmp_path_factory):
    """A pareto run's history (60 evaluations) as JSON lines and as CSV, and an evolve run's
    checkpoint (30)."""
    from engine.cli import main

    folder = tmp_path_factory.mktemp("resume")
    for name in ("h.jsonl", "h.csv"):
        assert main(["pareto", "--network", NET, "--budget", "60", "--history",
                     str(folder / name)]) == 0  # fmt: skip
    assert main(["evolve", "--network", NET, "--budget", "30", "--checkpoint",
                 str(folder / "run.ckpt")]) == 0  # fmt: skip
    return folder


def _damaged(folder, tmp_path, name: str, how: str):
    """A copy of the run's file ``name``, damaged ``how``."""
    import json

    lines = _rows(folder / name)
    if name == "run.ckpt":  # {"record": …} lines: forge the fitness of record 3
        out = []
        for line in lines:
            d = json.loads(line)
            if d.get("record", {}).get("index") == 3:
                d["record"] |= {"fitness": 0.001, "latency_us": 0.001,
                                "objectives": {"latency": 0.001}}  # fmt: skip
            out.append(json.dumps(d))
        lines = out
    elif how == "duplicate":
        lines = [*lines[:12], lines[11], *lines[12:]]
    elif how == "nan" and name.endswith(".csv"):
        head = lines[1].split(",")
        cells = lines[8].split(",")
        cells[head.index("latency")] = "nan"
        lines[8] = ",".join(cells)
    elif how == "nan":
        lines[8] = _edit_record(lines[8], objectives={"latency": float("nan")})
    elif how == "forged":  # a record the resumed run takes, its latency made 0.001
        lines[5] = _edit_record(lines[5], latency_us=0.001, objectives={"latency": 0.001})
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n")
    return path


RESUMES = [
    ("h.jsonl", "duplicate", "(a row written twice?)"),
    ("h.csv", "duplicate", "(a row written twice?)"),
    ("h.jsonl", "nan", "says latency is NaN"),
    ("h.csv", "nan", "says latency is NaN"),
    ("h.jsonl", "forged", "says latency 0.001, but the model gives"),
    ("run.ckpt", "forged", "record 3 says latency 0.001, but the model gives"),
]


@pytest.mark.parametrize(("name", "how", "words"), RESUMES, ids=[f"{n} {h}" for n, h, _ in RESUMES])
def test_a_resumed_run_refuses_a_file_whose_records_no_run_wrote(capsys, histories, tmp_path,
                                                                  name, how, words):  # fmt: skip
    """pareto --resume kept a duplicated row (601 evaluations of 600), took a NaN objective
    and showed a forged latency of 0.001 on its front."""
    from tests.support.cli import run

    path = _damaged(histories, tmp_path, name, how)
    before = path.read_text()
    command = "evolve" if name == "run.ckpt" else "pareto"
    code, out, err = run(capsys, command, "--network", NET, "--budget", "80", "--resume",
                         str(path))  # fmt: skip
    assert code == 2 and out == "" and err.count("\n") == 1, err
    assert f"meshscope: error: {path}" in err and words in err
    assert path.read_text() == before  # refused before anything was written


@pytest.mark.parametrize("name", ["h.jsonl", "h.csv", "run.ckpt"])
def test_a_run_resumes_from_its_own_file_checked(capsys, histories, tmp_path, name):
    import shutil

    from tests.support.cli import run

    shutil.copy(histories / name, tmp_path / name)
    command = "evolve" if name == "run.ckpt" else "pareto"
    code, _, err = run(capsys, command, "--network", NET, "--budget", "80", "--resume",
                       str(tmp_path / name))  # fmt: skip
    assert code == 0 and err == "", err


def test_a_resumed_measured_run_says_its_figures_cannot_be_checked(capsys, tmp_path):
    """An evaluator command's figures: only it could say whether they are right."""
    import sys

    from tests.support.cli import run

    script = tmp_path / "board.py"
    script.write_text("import json, sys\nm = json.load(sys.stdin)\n"
                      "print(json.dumps({'latency_us': 1.0 + len(m['placement']), "
                      "'energy_uj': 2.0}))\n")  # fmt: skip
    command = ["--evaluator-cmd", f"{sys.executable} {script}", "--network", NET]
    history = tmp_path / "h.jsonl"
    assert run(capsys, "pareto", *command, "--budget", "12", "--history", str(history))[0] == 0
    code, _, err = run(capsys, "pareto", *command, "--budget", "16", "--resume", str(history))
    assert code == 0, err
    assert err == (
        f"meshscope: warning: the latency, energy figures of {history} were measured by the "
        "evaluator command: MeshScope cannot check them and takes them as they are\n"
    )
