"""Baseline placements: fill orders, random (Loihi 2 mapping ES), pair patterns (runtime model)."""

from __future__ import annotations

import numpy as np
import pytest

from engine.errors import CapacityError, UnknownNameError
from engine.hardware import load_hardware
from engine.partition import make_partition
from engine.partition_graph import partition_graph
from engine.placement import make_placement, placers
from engine.specs import load_network_spec


@pytest.fixture(scope="module")
def mlp():
    net, hw = load_network_spec("sparse-mlp-1"), load_hardware("loihi2")
    return partition_graph(net, hw, make_partition(net, hw, "min+2")), hw


@pytest.mark.parametrize("name", [n for n in placers if not n.startswith("pairs")])
def test_every_placer_gives_distinct_cores_in_range(mlp, name):
    stats, hw = mlp
    cores = make_placement(stats, hw, name, seed=3).cores
    assert cores.shape == (stats.n_parts,)
    assert np.unique(cores).size == cores.size
    assert cores.min() >= 0 and cores.max() < hw.n_cores


def addresses(hw, cores):
    return [hw.core_address(int(c)) for c in cores]


def test_packed_row_saturates_each_router_then_moves_along_x(mlp):
    stats, hw = mlp
    first = addresses(hw, make_placement(stats, hw, "packed-row").cores[:6])
    assert first == [
        (0, 0, 0, 0),
        (0, 0, 0, 1),
        (0, 0, 0, 2),
        (0, 0, 0, 3),
        (0, 1, 0, 0),
        (0, 1, 0, 1),
    ]


def test_packed_col_moves_along_y(mlp):
    stats, hw = mlp
    assert addresses(hw, make_placement(stats, hw, "packed-col").cores[4:5]) == [(0, 0, 1, 0)]


def test_spread_uses_every_router_before_a_second_core(mlp):
    stats, hw = mlp
    for name, second in (("spread-row", (0, 1, 0, 0)), ("spread-col", (0, 0, 1, 0))):
        cores = make_placement(stats, hw, name).cores
        addr = addresses(hw, cores)
        assert addr[1] == second
        routers = hw.core_table["router"][cores[: hw.n_routers]]
        assert np.unique(routers).size == hw.n_routers
        assert all(a[3] == 0 for a in addr[: hw.n_routers])
        assert addr[hw.n_routers][3] == 1


def test_random_is_seeded(mlp):
    stats, hw = mlp
    a = make_placement(stats, hw, "random", seed=1).cores
    assert np.array_equal(a, make_placement(stats, hw, "random", seed=1).cores)
    assert not np.array_equal(a, make_placement(stats, hw, "random", seed=2).cores)


def test_packed_fills_chip_by_chip_on_multichip():
    net, hw = load_network_spec("sparse-mlp-2"), load_hardware("loihi2-x8")
    stats = partition_graph(net, hw, make_partition(net, hw, "min+4"))
    assert stats.n_parts > hw.cores_per_chip
    chips = hw.core_table["chip"][make_placement(stats, hw, "packed-row").cores]
    assert np.all(chips[: hw.cores_per_chip] == 0) and np.all(chips[hw.cores_per_chip :] == 1)


def test_pair_patterns_put_one_origin_and_one_destination_per_router():
    net = load_network_spec("linear-tiled-identity:M=8,N=16")
    hw = load_hardware("loihi2")
    stats = partition_graph(net, hw, make_partition(net, hw))
    for name in ("pairs-square", "pairs-x"):
        cores = make_placement(stats, hw, name).cores
        routers = hw.core_table["router"][cores]
        np.testing.assert_array_equal(routers[:8], routers[8:])
        assert np.unique(routers).size == 8
    x = addresses(hw, make_placement(stats, hw, "pairs-x").cores[:8])
    assert {(a[1], a[2]) for a in x} == {
        (0, 0),
        (1, 1),
        (2, 2),
        (3, 3),
        (3, 0),
        (2, 1),
        (1, 2),
        (0, 3),
    }


def test_pair_patterns_refuse_what_they_cannot_place():
    hw = load_hardware("loihi2")
    mlp = load_network_spec("sparse-mlp-1")
    stats = partition_graph(mlp, hw, make_partition(mlp, hw))
    with pytest.raises(CapacityError, match="two-population linear layer"):
        make_placement(stats, hw, "pairs-x")
    lin = load_network_spec("linear-tiled-identity:M=6,N=8")
    stats = partition_graph(lin, hw, make_partition(lin, hw))
    with pytest.raises(CapacityError, match="n even"):
        make_placement(stats, hw, "pairs-x")
    lin = load_network_spec("linear-tiled-identity:M=12,N=8")
    stats = partition_graph(lin, hw, make_partition(lin, hw))
    with pytest.raises(CapacityError, match="larger mesh"):
        make_placement(stats, hw, "pairs-x")
    with pytest.raises(UnknownNameError, match="known placers"):
        make_placement(stats, hw, "hilbert-ish")
