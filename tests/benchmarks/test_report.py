"""Every figure table of the README and docs/ is rendered from benchmarks/results/ and agrees
with it: a table typed by hand, or left behind by a rerun, fails here."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def report():
    spec = importlib.util.spec_from_file_location("report", ROOT / "benchmarks" / "report.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["report"] = module
    spec.loader.exec_module(module)
    return module


def test_every_table_agrees_with_its_results(report):
    diffs = report.differences()
    assert not diffs, "run .venv/bin/python benchmarks/report.py:\n" + "\n".join(diffs)[:4000]


def test_every_table_is_shown_and_every_marker_names_one(report):
    used = [m.group(2) for p in report.documents() for m in report.MARKER.finditer(p.read_text())]
    assert sorted(set(used)) == sorted(report.TABLES), "a table no page shows, or a stray marker"
    assert len(used) == len(set(used)), "a table shown twice"


def test_a_changed_figure_changes_its_table(report, monkeypatch):
    """The check compares with the JSON, not with a copy: change one figure, the page differs."""
    data = report.load("heuristics")
    data["model_evaluations"]["packed-row"]["latency_us"] += 1.0
    real = report.load
    monkeypatch.setattr(report, "load", lambda name: data if name == "heuristics" else real(name))
    assert any("model.md" in d for d in report.differences())


def test_a_table_typed_by_hand_is_found(report, tmp_path, monkeypatch):
    page = tmp_path / "page.md"
    page.write_text("<!-- table: model.placements -->\n| a | b |\n|---|---|\n<!-- /table -->\n")
    monkeypatch.setattr(report, "documents", lambda: [page])
    monkeypatch.setattr(report, "ROOT", tmp_path)
    assert report.differences()


def test_every_results_file_says_when_where_and_how(report):
    for path in sorted((ROOT / "benchmarks" / "results").glob("*.json")):
        meta = json.loads(path.read_text())["meta"]
        assert meta["date"] and meta["machine"] and meta["command"].startswith(".venv/bin/python")
        assert meta["quick"] is False, f"{path.name} holds a quick run"


def test_a_source_line_says_when_runs_come_from_several_commands(report):
    """A results file whose runs a ``--resume`` kept from earlier commands says so, rather
    than naming only the last command; one command's runs need no such note."""
    meta = {"command": "bench --resume", "date": "2026-11-28", "machine": "M"}
    runs = [{"network": "a", "command": "bench --networks a"},
            {"network": "b", "recorded_in": {"commit": "abc", "command": "bench --networks b"}},
            {"network": "c", "command": "bench --resume"}]  # fmt: skip
    line = report.source({"meta": meta, "runs": runs})
    assert line.startswith("`bench --resume`, 2026-11-28, M; its runs come from 3 commands")
    one = report.source({"meta": meta, "runs": [{"command": "bench --resume"}]})
    assert one == "`bench --resume`, 2026-11-28, M"


def test_no_source_line_names_another_file_than_its_own():
    """A caption's command writes the figures where the caption says they are: a command run
    with ``--out`` elsewhere (a temporary file, then copied) names its own default instead."""
    import shlex

    results = ROOT / "benchmarks" / "results"
    for path in sorted(results.rglob("*.json")):
        argv = shlex.split(json.loads(path.read_text())["meta"]["command"])
        if "--out" in argv:
            out = (ROOT / argv[argv.index("--out") + 1]).resolve()
            assert out == path.resolve(), f"{path.name}'s command writes {out}"
