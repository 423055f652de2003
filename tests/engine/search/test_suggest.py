"""Suggest: its best move is the best single move there is (exhaustive search, each move
evaluated from scratch), applying it lowers the latency, and the command reads a mapping
file and refuses bad input with one line."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from engine.api import swap_cores
from engine.errors import SpecError
from engine.evaluation.cost import Evaluator
from engine.hardware import load_hardware
from engine.mapping.assignment import Placement
from engine.pipeline import build_mapping, evaluate, write_mapping_file
from engine.search.suggest import suggest
from tests.support.cli import run, run_json


@pytest.fixture(scope="module")
def demo():
    return build_mapping("sparse-mlp-1", "loihi2")  # the built-in demo, as the explorer opens


def exhaustive_best(mapped) -> tuple[float, float]:
    """(latency, energy) of the best single swap or move, every one evaluated from scratch
    (``set_placement`` of the swapped placement, no incremental update)."""
    hw, part = mapped.hardware, mapped.mapping.partition
    cores = np.asarray(mapped.mapping.placement.cores)
    ev = Evaluator(mapped.network, hw, part, Placement(cores), graph=mapped.graph, check=False)
    part_of = np.full(hw.n_cores, -1)
    part_of[cores] = np.arange(cores.size)
    best = (np.inf, np.inf)
    for a in np.flatnonzero(part_of >= 0).tolist():
        for b in range(hw.n_cores):
            if b == a or (part_of[b] >= 0 and b < a):
                continue
            swapped = cores.copy()
            swapped[part_of[a]] = b
            if part_of[b] >= 0:
                swapped[part_of[b]] = a
            best = min(best, ev.set_placement(Placement(swapped)))
    return best


def test_the_best_suggestion_is_the_best_single_move(demo):
    found = suggest(demo, top=3, budget_s=60)
    assert found.complete  # the demo's 128 cores: every move fits the budget
    best = exhaustive_best(demo)
    assert best[0] < found.latency_us  # (some move helps the demo)
    top = found.moves[0]
    assert (top.latency_us, top.energy_uj) == best
    assert top.gain_us == found.latency_us - best[0]
    after = evaluate(swap_cores(demo, top.core_a, top.core_b))
    assert (after.latency_us, after.energy_uj) == (top.latency_us, top.energy_uj)
    assert [m.latency_us for m in found.moves] == sorted(m.latency_us for m in found.moves)


def test_five_suggestions_in_a_row_each_lower_the_latency(demo):
    mapped, latency = demo, evaluate(demo).latency_us
    for _ in range(5):
        found = suggest(mapped, top=1, budget_s=60)
        if not found.moves:
            assert found.verdict.startswith("no move helps")
            break
        move = found.moves[0]
        mapped = swap_cores(mapped, move.core_a, move.core_b)
        now = evaluate(mapped).latency_us
        assert now < latency and now == move.latency_us
        latency = now


def test_a_compute_bound_mapping_says_no_move_helps():
    """Links a thousand times faster: one core's work bounds the step, and moving cores
    does not change a core's work."""
    hw = load_hardware("loihi2")
    fast = {k: getattr(hw.links, k) * 1000 for k in
            ("router_bits_per_us", "core_bits_per_us", "offchip_bits_per_us")}  # fmt: skip
    hw = dataclasses.replace(hw, links=dataclasses.replace(hw.links, **fast))
    mapped = build_mapping("sparse-mlp-1", hw)
    assert evaluate(mapped).bottleneck in ("synops", "synmem", "dendops", "barrier")
    found = suggest(mapped, top=3, budget_s=60)
    assert found.complete and not found.moves
    assert found.verdict.startswith("no move helps") and "core" in found.focus


def test_the_scan_starts_around_the_bottleneck_and_keeps_to_its_budget(demo):
    found = suggest(demo, top=2, budget_s=1e-6)  # no time beyond the first stage
    assert 0 < found.focus_moves == found.scanned < found.candidates
    assert "busiest link" in found.focus
    with pytest.raises(SpecError, match="top"):
        suggest(demo, top=0)


def test_the_command_lists_the_best_moves_of_a_mapping_file(demo, tmp_path, capsys):
    path = tmp_path / "demo.json"
    write_mapping_file(str(path), demo, evaluate(demo))
    out = run_json(capsys, "suggest", "--mapping", str(path), "--top", "2", "--json")
    assert out["network"] == "sparse-mlp-1" and len(out["moves"]) == 2
    assert out["moves"][0]["gain_us"] > 0 and out["complete"]
    assert out["moves"][0]["latency_us"] == exhaustive_best(demo)[0]
    code, text, _ = run(capsys, "suggest", "--mapping", str(path), "--top", "1")
    assert code == 0 and "1. " in text and "best move saves" in text
    for bad, word in ((["--top", "0"], "--top"), (["--top", "x"], "--top"),
                      (["--budget", "-1"], "--budget")):  # fmt: skip
        code, _, err = run(capsys, "suggest", "--mapping", str(path), *bad)
        assert code == 2 and err.count("\n") == 1 and word in err
    code, _, err = run(capsys, "suggest", "--mapping", str(tmp_path / "none.json"))
    assert code == 2 and "none.json" in err
