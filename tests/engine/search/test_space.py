"""The search space's sizes (Loihi 2 mapping ES §3.1): the paper's figures, and a count."""

from __future__ import annotations

import itertools
import math

import pytest

from engine.search.space import log10_partitionings, log10_placements
from tests.support.cli import run_json


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
