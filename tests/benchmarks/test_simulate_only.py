"""benchmarks/simulate.py --only: a partial run measures its sections and keeps the others, from
the results file it writes (``--out``) when that exists, each kept section with the command,
date, BookSim2 and cores that measured it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_only_keeps_the_other_sections_of_its_own_results_file(tmp_path):
    recorded = json.loads((ROOT / "benchmarks" / "results" / "simulate.json").read_text())
    mine = {**recorded, "booksim2": "/elsewhere/booksim", "cpus": 64}
    mine["meta"] = {"command": "an earlier run of mine", "date": "2026-01-01",
                    "machine": "M", "quick": False}  # fmt: skip
    mine["memory"] = [{"marker": "mine"}]
    out = tmp_path / "simulate.json"
    out.write_text(json.dumps(mine))
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "simulate.py"), "--quick", "--only",
         "startup", "--out", str(out)],
        capture_output=True, text=True, timeout=300, env={**os.environ, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    written = json.loads(out.read_text())
    assert written["memory"] == [{"marker": "mine"}]  # kept from --out, not from results/
    assert written["startup"] != mine["startup"]  # measured now
    (kept,) = written["meta"]["kept"]
    assert kept["command"] == "an earlier run of mine" and kept["date"] == "2026-01-01"
    assert (kept["booksim2"], kept["cpus"]) == ("/elsewhere/booksim", 64)
    assert "startup" not in kept["sections"] and "memory" in kept["sections"]
