"""Traffic: the runtime model's exact heaviest-link formulas, conservation, routing oracle."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.cost import Evaluator
from engine.hardware import CORE_TO_ROUTER, OFF_CHIP, ROUTER, ROUTER_TO_CORE, load_hardware
from engine.mapping import Partition, Placement
from engine.partition import make_partition
from engine.partition_graph import partition_graph
from engine.placement import placers
from engine.specs import load_network_spec
from engine.traffic import FIXED, route_loads
from tests.engine.conftest import random_network

N = 16  # neurons per core in the linear-layer cases


def linear_loads(m: int, hardware: str, placer: str, **params):
    """Link loads (in units of N messages) of a tiled-identity layer placed by ``placer``."""
    network = load_network_spec(f"linear-tiled-identity:M={m},N={N}")
    hw = load_hardware(hardware)
    partition = make_partition(network, hw)  # natural: M origin + M destination cores
    stats = partition_graph(network, hw, partition)
    placement = placers[placer](stats, hw, **params)
    ev = Evaluator(network, hw, partition, placement).evaluation()
    kind = hw.link_table["kind"]
    direction = np.arange(kind.size) % 4
    load = ev.link_messages / N
    router = kind == ROUTER
    core_links = load[(kind == CORE_TO_ROUTER) | (kind == ROUTER_TO_CORE)]
    return {
        "horizontal": load[router & (direction < 2)].max(),
        "vertical": load[router & (direction >= 2)].max(),
        "router": load[router].max(),
        "core_links_used": core_links[core_links > 0],
        "n_core_links_used": int(np.count_nonzero(core_links)),
    }


@pytest.mark.parametrize("rows,cols", [(2, 4), (4, 4), (2, 6), (4, 8), (6, 6), (3, 6)])
def test_saturated_rectangle_heaviest_link(rows, cols):
    """Loihi 2 runtime model eq. 2 for P = 1 on an n×m rectangle: n·m²/4 leftward, m·n²/4 upward."""
    m = rows * cols
    loads = linear_loads(m, f"mesh:{cols}x{rows}x2", "pairs-square", rows=rows)
    assert loads["horizontal"] == rows * (cols * cols // 4)
    assert loads["vertical"] == cols * (rows * rows // 4)
    if cols >= rows and cols % 2 == 0:
        assert loads["router"] == rows * cols**2 / 4


@pytest.mark.parametrize("n", [4, 6, 8, 10])
def test_x_shape_heaviest_link_is_m_minus_2(n):
    m = 2 * n
    loads = linear_loads(m, f"mesh:{n}x{n}x2", "pairs-x")
    assert loads["router"] == m - 2


@pytest.mark.parametrize("m", [3, 5, 8, 11])
def test_diagonal_heaviest_link_is_m_minus_1(m):
    loads = linear_loads(m, f"mesh:{m}x{m}x2", "pairs-diagonal")
    assert loads["router"] == m - 1


@pytest.mark.parametrize(
    "m,hardware,placer",
    [
        (8, "mesh:4x2x2", "pairs-square"),
        (8, "mesh:4x4x2", "pairs-x"),
        (5, "mesh:5x5x2", "pairs-diagonal"),
    ],
)
def test_every_core_link_carries_m(m, hardware, placer):
    """Each origin sends N to each of M destinations; each destination receives N from M."""
    loads = linear_loads(m, hardware, placer)
    assert loads["n_core_links_used"] == 2 * m
    assert np.all(loads["core_links_used"] == m)


def test_x_shape_on_loihi2_matches_paper_figure_3c():
    """Loihi 2 runtime model §V.2: 8 + 8 cores of 1024 neurons in an X on one chip."""
    network = load_network_spec("linear-tiled-identity:M=8,N=1024")
    hw = load_hardware("loihi2")
    partition = make_partition(network, hw)
    stats = partition_graph(network, hw, partition)
    ev = Evaluator(network, hw, partition, placers["pairs-x"](stats, hw)).evaluation()
    kind = hw.link_table["kind"]
    assert ev.link_messages[kind == ROUTER].max() == 6 * 1024
    assert ev.max_link_messages == 8 * 1024  # the core links set the floor
    assert ev.bottleneck == "link"


# ---------------------------------------------------------------- routing oracle
def walk_xy(hw, src_core, dst_core):
    """Link ids on the X-then-Y path, by walking it one hop at a time."""
    ct = hw.core_table
    x, y = int(ct["gx"][src_core]), int(ct["gy"][src_core])
    tx, ty = int(ct["gx"][dst_core]), int(ct["gy"][dst_core])
    links = [4 * hw.n_routers + src_core]
    while x != tx:
        d = 0 if tx > x else 1
        links.append((y * hw.grid_width + x) * 4 + d)
        x += 1 if tx > x else -1
    while y != ty:
        d = 2 if ty > y else 3
        links.append((y * hw.grid_width + x) * 4 + d)
        y += 1 if ty > y else -1
    links.append(4 * hw.n_routers + hw.n_cores + dst_core)
    return links


hardware_specs = st.sampled_from(["mesh:3x2x1", "mesh:4x4x2", "mesh:2x3x4@2x2", "mesh:5x1x1@1x3"])


@settings(max_examples=40, deadline=None)
@given(spec=hardware_specs, seed=st.integers(0, 2**32 - 1), n_pairs=st.integers(1, 60))
def test_route_loads_match_hop_by_hop_walk(spec, seed, n_pairs):
    hw = load_hardware(spec)
    rng = np.random.default_rng(seed)
    src = rng.integers(0, hw.n_cores, n_pairs)
    dst = rng.integers(0, hw.n_cores, n_pairs)
    fixed = rng.integers(1, 10 * FIXED, n_pairs)
    expected = np.zeros(hw.n_link_ids, dtype=np.int64)
    for s, d, f in zip(src, dst, fixed, strict=True):
        for link in walk_xy(hw, s, d):
            expected[link] += f
    got = route_loads(hw, src, dst, fixed)
    np.testing.assert_array_equal(got, expected)
    assert np.all(got[hw.link_table["kind"] < 0] == 0), "traffic on a link that does not exist"


# ---------------------------------------------------------------- conservation
def random_mapping(rng, hw, n_neurons=60, fan_out=8):
    network = random_network(rng, n_neurons, fan_out, n_pop=3)
    n_parts = int(rng.integers(1, min(n_neurons, hw.n_cores) + 1))
    assignment = np.concatenate([np.arange(n_parts), rng.integers(0, n_parts, n_neurons - n_parts)])
    partition = Partition(rng.permutation(assignment))
    placement = Placement(rng.permutation(hw.n_cores)[:n_parts])
    return network, partition, placement


@settings(max_examples=40, deadline=None)
@given(spec=hardware_specs, seed=st.integers(0, 2**32 - 1))
def test_router_messages_equal_pair_messages_times_hops(spec, seed):
    rng = np.random.default_rng(seed)
    hw = load_hardware(spec)
    network, partition, placement = random_mapping(rng, hw)
    stats = partition_graph(network, hw, partition)
    loads = Evaluator(network, hw, partition, placement, check=False).loads
    ct = hw.core_table
    cs, cd = placement.cores[stats.pair_src], placement.cores[stats.pair_dst]
    hops = np.abs(ct["gx"][cs] - ct["gx"][cd]) + np.abs(ct["gy"][cs] - ct["gy"][cd])
    kind = hw.link_table["kind"]
    mesh = (kind == ROUTER) | (kind == OFF_CHIP)
    assert loads[mesh].sum() == (stats.pair_fixed * hops).sum()
    # every message leaves one core and enters one core
    assert loads[kind == CORE_TO_ROUTER].sum() == stats.pair_fixed.sum()
    assert loads[kind == ROUTER_TO_CORE].sum() == stats.pair_fixed.sum()


def test_messages_count_distinct_destination_cores_once():
    """A spike reaching 3 neurons on one other core is one message, not three."""
    from engine.network import Network

    network = Network(
        name="fan",
        indptr=[0, 3, 3, 3, 3],
        indices=[1, 2, 3],
        population=[0, 1, 1, 1],
        population_names=["src", "dst"],
        rate=[0.5, 1, 1, 1],
    )
    hw = load_hardware("mesh:2x1x1")
    stats = partition_graph(network, hw, Partition.layered(network, [1, 1]))
    assert stats.pair_messages.tolist() == [0.5]
    assert stats.synops.tolist() == [0.0, 1.5]  # 3 synapses × rate 0.5
    assert stats.axons.tolist() == [0, 1]
