"""The search space's sizes (Loihi 2 mapping ES §3.1): the paper's figures, and a count."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from engine.evaluation.cost import model_evaluation
from engine.mapping.assignment import Mapping, Placement
from engine.pipeline import build_mapping
from engine.search.space import log10_partitionings, log10_placements, placement_spread
from tests.support.cli import run, run_json


def test_the_papers_placement_counts():
    """152 cores a chip: every core used, more than 10^267 placements; half of them, 10^155."""
    assert 267 < log10_placements(152, 152) < 268
    assert 155 < log10_placements(152, 76) < 156


def test_ten_layers_on_152_cores_have_more_than_10_to_the_13_partitionings():
    # whatever their minimum cores, up to about 60 of the 152
    assert all(log10_partitionings(152, c_min, 10) > 13 for c_min in range(10, 61))


@pytest.mark.parametrize(("c_total", "c_min"), [(7, (1, 2, 1)), (9, (2, 2, 3, 1)), (4, (2, 2))])
def test_partitionings_are_the_layer_core_counts_that_fit(c_total, c_min):
    """Counted one by one: every (c_1 … c_L) with c_i ≥ c_i^min and a sum ≤ C_tot."""
    ranges = [range(m, c_total + 1) for m in c_min]
    count = sum(1 for cs in itertools.product(*ranges) if sum(cs) <= c_total)
    assert 10 ** log10_partitionings(c_total, sum(c_min), len(c_min)) == pytest.approx(count)


def test_placements_are_the_ordered_choices_of_cores():
    assert 10 ** log10_placements(6, 3) == pytest.approx(6 * 5 * 4)
    assert log10_placements(3, 4) == -math.inf and log10_partitionings(3, 4, 2) == -math.inf


def test_evolve_json_reports_the_search_space(capsys):
    d = run_json(capsys, "evolve", "--network", "sparse-mlp-1", "--hardware", "loihi2",
                 "--budget", "6", "--json")  # fmt: skip
    space = d["search_space"]
    assert space["cores"] == 128 and space["layers"] == 6
    assert space["cores_used"] == d["initial"]["cores_used"]
    assert space["log10_partitionings"] == log10_partitionings(128, space["min_cores"], 6)
    assert space["log10_placements"] == log10_placements(128, space["cores_used"])
    assert space["log10_placements_all_cores"] > space["log10_placements"]


# ------------------------------------------------------------------ Fig. 3: one partitioning
@pytest.fixture(scope="module")
def mapped():
    return build_mapping("sparse-mlp-1", "loihi2", partition="min+2")


def test_the_spread_is_each_random_placements_model_latency(mapped):
    spread = placement_spread(mapped, samples=12, seed=5)
    rng = np.random.default_rng(5)
    n = mapped.graph.n_parts
    for latency in spread.latency_us:  # the placements drawn in order, each evaluated whole
        cores = rng.permutation(mapped.hardware.n_cores)[:n]
        ev = model_evaluation(mapped.network, mapped.hardware,
                              Mapping(mapped.mapping.partition, Placement(cores)))  # fmt: skip
        assert latency == pytest.approx(ev.latency_us)
    assert np.array_equal(spread.latency_us, placement_spread(mapped, 12, seed=5).latency_us)
    assert not np.array_equal(spread.latency_us, placement_spread(mapped, 12, seed=6).latency_us)
    s = spread.summary()
    assert s["min_us"] <= s["median_us"] <= s["max_us"] and s["samples"] == 12
    assert s["cv"] == pytest.approx(spread.latency_us.std() / spread.latency_us.mean())


def test_spread_prints_the_spread_and_its_histogram_and_writes_the_figure(capsys, tmp_path):
    figure = tmp_path / "spread.png"
    code, out, err = run(capsys, "spread", "--network", "mlp:widths=64-128-64-10", "--hardware",
                         "mesh:4x4x4", "--samples", "30", "--figure", str(figure))  # fmt: skip
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].endswith("30 random placements (seed 0)") and "min+2" not in lines[0]
    bars = [line for line in lines if "–" in line and line.strip()[-1].isdigit()]
    assert len(bars) == 10 and sum(int(b.split()[-1]) for b in bars) == 30
    assert figure.read_bytes().startswith(b"\x89PNG")
    d = run_json(capsys, "spread", "--network", "mlp:widths=64-128-64-10", "--hardware",
                 "mesh:4x4x4", "--samples", "30", "--json")  # fmt: skip
    assert len(d["latency_us"]) == 30 and sum(d["histogram"]["counts"]) == 30
    assert d["min_us"] == min(d["latency_us"]) and d["max_us"] == max(d["latency_us"])


@pytest.mark.parametrize(
    ("args", "message"),
    [(["--samples", "0"], "--samples"), (["--figure", "x.txt"], ".png")],
)
def test_spread_refuses_what_cannot_be(capsys, args, message):
    code, out, err = run(capsys, "spread", "--network", "mlp:widths=64-128-64-10", "--hardware",
                         "mesh:4x4x4", *args)  # fmt: skip
    assert code == 2 and out == "" and err.count("\n") == 1 and message in err
