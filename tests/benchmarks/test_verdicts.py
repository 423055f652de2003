"""The verdict rules (benchmarks/verdicts.py), and every recorded reproduction row held to
them: a row whose verdict does not follow from its figures, that quotes nothing, or that
shows a stochastic figure without its spread fails here."""

from __future__ import annotations

import copy
import importlib.util
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAPERS = ROOT / "benchmarks" / "results" / "papers"


@pytest.fixture(scope="module")
def rules():
    spec = importlib.util.spec_from_file_location("verdicts", ROOT / "benchmarks" / "verdicts.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["verdicts"] = module
    spec.loader.exec_module(module)
    return module


def recorded_rows() -> list[tuple[str, dict]]:
    out = []
    for path in sorted(PAPERS.glob("*.json")):
        for row in json.loads(path.read_text()).get("rows", []):
            if "verdict" in row:
                out.append((f"{path.stem}: {row['claim']}", row))
    return out


ROWS = recorded_rows()


# ------------------------------------------------------------------ the rules
def test_a_value_within_tolerance_with_its_orders_is_reproduced(rules):
    ev = {"values": [rules.value("t", "time", 30.14, 31.0)],
          "orders": [rules.order("a < b", 1.0, 2.0)]}  # fmt: skip
    assert rules.judge(ev) == "reproduced"
    ev["values"][0]["ours"] = 35.0  # 16 % off: outside ±5 %
    assert rules.judge(ev) == "same shape"
    ev["orders"][0] = rules.order("a < b", 2.0, 1.0)
    assert rules.judge(ev) == "differs"


def test_a_value_alone_that_misses_differs_and_an_order_alone_is_at_most_same_shape(rules):
    assert rules.judge({"values": [rules.value("t", "time", 30.14, 21.27)]}) == "differs"
    assert rules.judge({"orders": [rules.order("a < b", 1.0, 2.0)]}) == "same shape"


def test_tolerances_per_kind(rules):
    assert rules.within("time", 100.0, 104.9) and not rules.within("time", 100.0, 105.1)
    assert rules.within("percent", 35.8, 29.0) and not rules.within("percent", 35.8, 27.3)
    assert rules.within("ratio", 0.47, 0.43) and not rules.within("ratio", 0.47, 0.39)
    assert rules.within("exponent", 13, 13.5) and not rules.within("exponent", 13, 14.2)
    assert not rules.within("exponent", 13, 12.9)
    assert rules.within("magnitude", 10, 30) and not rules.within("magnitude", 10, 48)
    assert rules.within("exact", 16, 16.0) and not rules.within("exact", 16, 16.5)


def test_a_stochastic_order_needs_twice_its_standard_error(rules):
    # means 10 and 11, std 1 over 4 seeds each: se of the difference 0.71, gap 1 < 1.41
    a, b = [9.0, 10.0, 11.0, 10.0], [10.0, 11.0, 12.0, 11.0]
    assert rules.order("a < b", a, b)["state"] == "unresolved"
    assert rules.order("a < b", a, [x + 2 for x in b])["state"] == "holds"
    assert rules.order("a < b", [x + 3 for x in b], a)["state"] == "reversed"


def test_a_deterministic_tie_does_not_hold_a_strict_order(rules):
    assert rules.order("a < b", 2.0, 2.0)["state"] == "tied"
    assert rules.order("a ≤ b", 2.0, 2.0, "<=")["state"] == "holds"


def test_a_ratio_claim_is_same_shape_only_on_every_networks_side(rules):
    nets = rules.ratio_side({"x": 0.5, "y": 0.8}, "below")
    ev = {"values": [rules.value("mean", "ratio", 0.95, 0.63)], "networks": nets}
    assert rules.judge(ev) == "same shape"
    ev["networks"] = rules.ratio_side({"x": 0.5, "y": 1.2}, "below")
    assert rules.judge(ev) == "differs"
    assert "1 above" in rules.side_summary(ev["networks"])
    ev["values"][0]["ours"] = 0.93  # the mean is the paper's: reproduced, the split shown
    assert rules.judge(ev) == "reproduced"
    ev["missing"] = ["z: not run"]  # something uncompared: at most same shape
    assert rules.judge(ev) == "differs"


def test_cannot_run(rules):
    assert rules.judge({"cannot": "a board"}) == "cannot run"


def test_spread_is_n_mean_std_min_max(rules):
    s = rules.spread([1.0, 2.0, 3.0])
    assert (s["n"], s["mean"], s["std"], s["min"], s["max"]) == (3, 2.0, 1.0, 1.0, 3.0)
    assert rules.seeds_text(s, 1) == "2.0 ± 1.0 (n = 3, 1.0–3.0)"


# ------------------------------------------------------------------ every recorded row
def test_every_paper_has_rows():
    assert {p.stem for p in PAPERS.glob("*.json")} >= {
        "loihi2_mapping_es",
        "loihi2_runtime_model",
        "senmap",
        "mosaic",
        "snn_hypergraphs",
    }
    assert len(ROWS) >= 40


@pytest.mark.parametrize("name,row", ROWS, ids=[n for n, _ in ROWS])
def test_the_row_follows_the_rules(rules, name, row):
    assert row["quote"] and len(row["quote"]) <= 400, "quote the paper's sentence (a short one)"
    assert row["section"].startswith("§"), "say which section the quote is from"
    assert row["verdict"] in rules.VERDICTS
    assert row["verdict"] == rules.judge(row["evidence"]), "the verdict its figures earn"
    if row["verdict"] != "reproduced":
        assert row["reason"], "a row that is not reproduced says why, measured"
    for v in row["evidence"].get("values", []):
        assert v["kind"] in rules.TOLERANCES
    for s in _spreads(row["evidence"]):
        assert s["n"] >= 2 and {"mean", "std", "min", "max"} <= set(s), "a spread over seeds"
        assert f"n = {s['n']}" in row["meshscope"], "a stochastic figure shows its spread"
    for v in row["evidence"].get("values", []):
        if "seeds" in v:
            assert v["ours"] == pytest.approx(v["seeds"]["mean"])


def _spreads(evidence: dict):
    for v in evidence.get("values", []):
        if "seeds" in v:
            yield v["seeds"]
    for o in evidence.get("orders", []):
        for key in ("a_seeds", "b_seeds"):
            if key in o:
                yield o[key]


def test_a_row_whose_figure_moves_gets_another_verdict(rules):
    """The check reads the figures: move one out of its tolerance and the recorded verdict
    no longer follows."""
    reproduced = [r for _, r in ROWS if r["verdict"] == "reproduced" and r["evidence"]["values"]]
    assert reproduced
    row = copy.deepcopy(reproduced[0])
    v = row["evidence"]["values"][0]
    v["ours"] = v["paper"] * 3 + 100
    assert rules.judge(row["evidence"]) != row["verdict"]
