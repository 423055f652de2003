"""Every benchmark still runs: each script of ``benchmarks/`` with ``--quick`` (tiny sizes, the
same code path), printing the keys its recorded results have, and writing nothing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BENCHMARKS = ROOT / "benchmarks"
RESULTS = BENCHMARKS / "results"
NOT_BENCHMARKS = {"common.py", "report.py", "verdicts.py"}  # shared; the renderer; the rules
SCRIPTS = sorted(p for p in BENCHMARKS.glob("*.py") if p.name not in NOT_BENCHMARKS) + sorted(
    (BENCHMARKS / "papers").glob("*.py")
)  # the papers' experiments write results/papers/NAME.json


def key_paths(value, prefix: str = "") -> set[str]:
    """Every key path of a JSON value: list items merged (``[]``), keys that are numbers (a
    size, a budget) written ``#``, so a quick run's smaller cases compare with a full run's."""
    paths = set()
    if isinstance(value, dict):
        for key, item in value.items():
            name = "#" if _number(key) else key
            here = f"{prefix}/{name}"
            paths.add(here)
            if name != "evidence":  # a paper row's evidence holds what its claim could compare
                paths |= key_paths(item, here)
    elif isinstance(value, list):
        for item in value:
            paths |= key_paths(item, f"{prefix}[]")
    return paths


def _number(key: str) -> bool:
    try:
        float(key)
    except ValueError:
        return False
    return True


def _written() -> dict[Path, int]:
    """The files a benchmark could overwrite, with their modification times."""
    return {p: p.stat().st_mtime_ns for d in (RESULTS, ROOT / "assets") for p in d.rglob("*")}


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.stem)
def test_benchmark_runs_quick(script: Path, tmp_path):
    recorded = RESULTS / script.parent.relative_to(BENCHMARKS) / f"{script.stem}.json"
    assert recorded.exists(), f"{script.name} has no recorded results: run it once in full"
    before = _written()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, str(script), "--quick"],
        cwd=tmp_path, capture_output=True, text=True, timeout=300, env=env,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout)  # stdout is the one JSON object, nothing else
    assert out["meta"]["quick"] is True
    full = json.loads(recorded.read_text())
    assert not full["meta"]["quick"], f"{recorded.name} holds a quick run's figures"
    assert set(out) == set(full), f"top-level keys differ from {recorded.name}"
    missing = key_paths(out) - key_paths(full)
    assert not missing, f"keys {sorted(missing)} are not in {recorded.name}: record it again"
    assert _written() == before, "a quick run wrote into benchmarks/results/ or assets/"
