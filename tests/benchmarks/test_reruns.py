"""Each reproduction row's "rerun with" command gives the figure it recorded.

A row keeps, beside the command it shows, the commands whose JSON gives its figures
(``reruns``: argv, where in the JSON, the recorded value); the cheap ones run here, in this
process, at most ``PER_ROW`` a row. The rows a script derives from figures it records
(SENMap's sweep, Mosaic's training runs; SNN hypergraphs' runs in test_snn_hypergraphs.py) are
derived again from the recorded figures and must come out as recorded."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

from engine.cli import main

ROOT = Path(__file__).resolve().parents[2]
PAPERS = ROOT / "benchmarks" / "results" / "papers"
PER_ROW = 2  # the first and the last of a row's commands (its other ones differ by a seed)


def _reruns() -> list[tuple[str, dict]]:
    out = []
    for path in sorted(PAPERS.glob("*.json")):
        for row in json.loads(path.read_text()).get("rows", []):
            cmds = row.get("reruns", [])
            picked = cmds if len(cmds) <= PER_ROW else [cmds[0], cmds[-1]]
            out += [(f"{path.stem}: {row['claim']} #{i}", r) for i, r in enumerate(picked)]
    return out


RERUNS = _reruns()


def figure(out: dict, rerun: dict) -> float:
    """The recorded figure's place in a command's JSON: a dotted key, or a list of rows
    filtered (``where``), one ``field`` reduced (``reduce``) and scaled (``divide``)."""
    value = out
    for part in rerun["key"].split("."):
        value = value[part]
    if "field" in rerun:
        picked = [r[rerun["field"]] for r in value
                  if all(r.get(k) == v for k, v in rerun.get("where", {}).items())]  # fmt: skip
        value = {"max": max, "min": min, "sum": sum}[rerun["reduce"]](picked)
    return float(value) / rerun.get("divide", 1)


def test_rows_name_their_commands():
    assert len(RERUNS) >= 30


@pytest.mark.parametrize("name,rerun", RERUNS, ids=[n for n, _ in RERUNS])
def test_the_command_gives_the_recorded_figure(capsys, name, rerun):
    assert main(rerun["argv"]) == 0, capsys.readouterr().err
    out = json.loads(capsys.readouterr().out)
    assert figure(out, rerun) == pytest.approx(rerun["value"], rel=1e-9, abs=1e-12)


def _script(name: str):
    sys.path[:0] = [str(ROOT / "benchmarks"), str(ROOT / "benchmarks" / "papers")]
    try:
        spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / "papers" /
                                                      f"{name}.py")  # fmt: skip
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        del sys.path[:2]
    return module


def _same(a, b) -> bool:
    return json.loads(json.dumps(a)) == json.loads(json.dumps(b))


def test_senmap_rows_follow_from_the_recorded_sweep():
    d = json.loads((PAPERS / "senmap.json").read_text())
    assert _same(_script("senmap").rows_of(d["energy"]), d["rows"])


def test_mosaic_rows_follow_from_the_recorded_training():
    d = json.loads((PAPERS / "mosaic.json").read_text())
    assert _same(_script("mosaic").rows_of(d), d["rows"])
