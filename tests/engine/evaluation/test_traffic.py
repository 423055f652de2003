"""Traffic: the runtime model's exact heaviest-link formulas, conservation, routing oracle
(X then Y, Y then X, and O1TURN's half of each), incremental swaps under every routing."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.evaluation.cost import Evaluator
from engine.evaluation.traffic import message_loads, multicast_loads, port_cores, route_loads
from engine.hardware import CORE_TO_ROUTER, OFF_CHIP, ROUTER, ROUTER_TO_CORE, load_hardware
from engine.hardware.routing import XY, YX, routings
from engine.mapping.assignment import Partition, Placement
from engine.mapping.partition import make_partition
from engine.mapping.partition_graph import FIXED, partition_graph
from engine.mapping.placement import placers
from engine.specs import load_network_spec
from tests.support.networks import hardware_specs, random_mapping, random_network

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
def walk_xy(hw, src_core, dst_core, order=XY):
    """Link ids on the X-then-Y path (Y then X with ``order`` YX), by walking it one hop at a
    time."""
    ct = hw.core_table
    at = [int(ct["gx"][src_core]), int(ct["gy"][src_core])]
    to = int(ct["gx"][dst_core]), int(ct["gy"][dst_core])
    links = [4 * hw.n_routers + src_core]
    for axis in (1, 0) if order == YX else (0, 1):  # x (E 0, W 1), then y (S 2, N 3)
        while at[axis] != to[axis]:
            d = 2 * axis + (0 if to[axis] > at[axis] else 1)
            links.append((at[1] * hw.grid_width + at[0]) * 4 + d)
            at[axis] += 1 if to[axis] > at[axis] else -1
    links.append(4 * hw.n_routers + hw.n_cores + dst_core)
    return links


def routed(hw, routing: str):
    """``hw`` with its NoC routing ``routing``."""
    return replace(hw, noc=replace(hw.noc, routing=routing))


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
    # each message over its own order (as a simulated packet of O1TURN goes)
    order = rng.integers(0, 2, n_pairs)
    expected = np.zeros(hw.n_link_ids, dtype=np.int64)
    for s, d, f, o in zip(src, dst, fixed, order, strict=True):
        for link in walk_xy(hw, s, d, o):
            expected[link] += f
    np.testing.assert_array_equal(route_loads(routed(hw, "o1turn"), src, dst, fixed, order),
                                  expected)  # fmt: skip


@settings(max_examples=40, deadline=None)
@given(spec=hardware_specs, seed=st.integers(0, 2**32 - 1), n_msgs=st.integers(1, 30))
def test_multicast_loads_are_the_union_of_the_xy_walks(spec, seed, n_msgs):
    """A multicast message crosses each link of its destinations' X-then-Y routes once,
    leaves its core once and enters each destination core once."""
    hw = load_hardware(spec)
    rng = np.random.default_rng(seed)
    src = rng.integers(0, hw.n_cores, n_msgs)
    sets = [rng.choice(hw.n_cores, int(rng.integers(0, min(6, hw.n_cores) + 1)), replace=False)
            for _ in range(n_msgs)]  # fmt: skip
    fixed = rng.integers(1, 10 * FIXED, n_msgs)
    expected = np.zeros(hw.n_link_ids, dtype=np.int64)
    for s, dsts, f in zip(src, sets, fixed, strict=True):
        tree = {link for d in dsts for link in walk_xy(hw, s, d)}
        for link in tree:
            expected[link] += f
    ptr = np.concatenate([[0], np.cumsum([len(d) for d in sets])])
    dst = np.concatenate(sets).astype(np.int64) if ptr[-1] else np.zeros(0, dtype=np.int64)
    got = multicast_loads(hw, src, ptr, dst, fixed)
    np.testing.assert_array_equal(got, expected)
    # trees of either order, per message: the union of its destinations' routes in its order
    order = rng.integers(0, 2, n_msgs)
    expected = np.zeros(hw.n_link_ids, dtype=np.int64)
    for s, dsts, f, o in zip(src, sets, fixed, order, strict=True):
        for link in {link for d in dsts for link in walk_xy(hw, s, d, o)}:
            expected[link] += f
    got = multicast_loads(routed(hw, "o1turn"), src, ptr, dst, fixed, order)
    np.testing.assert_array_equal(got, expected)
    # Y then X as the hardware's routing: every tree Y first
    yx = np.zeros(hw.n_link_ids, dtype=np.int64)
    for s, dsts, f in zip(src, sets, fixed, strict=True):
        yx[list({link for d in dsts for link in walk_xy(hw, s, d, YX)})] += f
    np.testing.assert_array_equal(multicast_loads(routed(hw, "yx"), src, ptr, dst, fixed), yx)


@pytest.mark.parametrize("spec", ["mesh:4x3x2", "mesh:2x3x1@2x2"])
def test_o1turns_expected_loads_are_half_of_each_orders(spec):
    """Unicast and multicast: each order carries half of every message (odd fixed-point
    weights split into the floor and the ceiling of the half: nothing is lost)."""
    hw = load_hardware(spec)
    rng = np.random.default_rng(11)
    n = 80
    src, dst = rng.integers(0, hw.n_cores, n), rng.integers(0, hw.n_cores, n)
    fixed = 2 * rng.integers(1, FIXED, n)
    xy, yx, o1 = (routed(hw, r) for r in ("xy", "yx", "o1turn"))
    half = route_loads(xy, src, dst, fixed // 2) + route_loads(yx, src, dst, fixed // 2)
    np.testing.assert_array_equal(route_loads(o1, src, dst, fixed), half)
    odd = fixed + 1
    np.testing.assert_array_equal(
        route_loads(o1, src, dst, odd),
        route_loads(xy, src, dst, odd // 2) + route_loads(yx, src, dst, odd - odd // 2),
    )
    ptr = np.arange(0, n + 1, 4)  # trees of four destinations
    trees = [multicast_loads(h, src[ptr[:-1]], ptr, dst, fixed[: ptr.size - 1]) for h in (xy, yx)]
    got = multicast_loads(o1, src[ptr[:-1]], ptr, dst, 2 * fixed[: ptr.size - 1])
    np.testing.assert_array_equal(got, trees[0] + trees[1])


@pytest.mark.parametrize("routing", ["yx", "o1turn"])
def test_swaps_update_the_loads_exactly_under_every_routing(routing):
    """A thousand swaps on an Evaluator routed ``routing`` leave the loads a fresh evaluation
    of the final placement has, to the last fixed-point unit."""
    rng = np.random.default_rng(12)
    hw = routed(load_hardware("mesh:4x4x2"), routing)
    network, partition, placement = random_mapping(rng, hw, n_neurons=90)
    ev = Evaluator(network, hw, partition, placement, check=False)
    for _ in range(1000):
        a, b = rng.integers(0, hw.n_cores, 2)
        ev.swap_cores(int(a), int(b))
    fresh = Evaluator(network, hw, partition, ev.placement, check=False)
    np.testing.assert_array_equal(ev.loads, fresh.loads)
    xy = Evaluator(network, routed(hw, "xy"), partition, ev.placement, check=False)
    assert not np.array_equal(fresh.loads, xy.loads)  # the routing changed the loads


def test_message_loads_route_each_packet_as_the_seed_chooses():
    """Under O1TURN the loads of one step's messages are each message's route in the order
    ``Routing.choose`` gives it for the seed (the simulator's step draws the same)."""
    rng = np.random.default_rng(13)
    hw = routed(load_hardware("mesh:4x4x2"), "o1turn")
    network, partition, placement = random_mapping(rng, hw, n_neurons=80)
    graph = partition_graph(network, hw, partition)
    msgs = graph.messages(hw.model, rng.random(network.n_neurons) < 0.6)
    cores = placement.cores
    got = {seed: message_loads(hw, cores, msgs, seed=seed) for seed in (0, 1)}
    assert not np.array_equal(got[0], got[1])
    order = routings["o1turn"].choose(msgs.size, 1)
    expected = np.zeros(hw.n_link_ids, dtype=np.int64)
    ends = port_cores(hw, cores)  # (a spike source's messages leave from the input port)
    for s, d, o in zip(ends[msgs.src], ends[msgs.dst], order, strict=True):
        expected[walk_xy(hw, s, d, o)] += 1
    np.testing.assert_array_equal(got[1], expected)


def test_message_loads_of_one_destination_are_unicast_loads():
    """With one destination per spike, multicast and unicast routing agree to the message."""
    rng = np.random.default_rng(5)
    hw = load_hardware("mesh:4x3x2@2x1")
    network = random_network(rng, 80, 1, n_pop=2)  # at most one synapse: one destination
    partition = Partition(rng.integers(0, 12, network.n_neurons))
    partition = Partition(np.unique(partition.assignment, return_inverse=True)[1])
    graph = partition_graph(network, hw, partition)
    cores = rng.permutation(hw.n_cores)[: partition.n_parts]
    msgs = graph.messages(hw.model, rng.random(network.n_neurons) < 0.7)
    assert msgs.size > 10
    uni = message_loads(hw, cores, msgs)
    multi = message_loads(hw, cores, msgs, multicast=True)
    np.testing.assert_array_equal(uni, multi)
    assert uni[hw.link_table["kind"] == CORE_TO_ROUTER].sum() == msgs.size


def test_multicast_never_loads_a_link_more_than_unicast():
    rng = np.random.default_rng(6)
    hw = load_hardware("mesh:4x4x2")
    network = random_network(rng, 120, 12, n_pop=3)
    partition = Partition(rng.integers(0, 20, network.n_neurons))
    partition = Partition(np.unique(partition.assignment, return_inverse=True)[1])
    graph = partition_graph(network, hw, partition)
    cores = rng.permutation(hw.n_cores)[: partition.n_parts]
    msgs = graph.messages(hw.model, np.ones(network.n_neurons, dtype=bool))
    uni = message_loads(hw, cores, msgs)
    multi = message_loads(hw, cores, msgs, multicast=True)
    assert np.all(multi <= uni) and multi.sum() < uni.sum()
    kind = hw.link_table["kind"]
    # one packet leaves a core per spike that has a destination elsewhere …
    spiking = np.unique(msgs.neuron)
    assert multi[kind == CORE_TO_ROUTER].sum() == spiking.size
    # … and every destination core still receives its message
    assert multi[kind == ROUTER_TO_CORE].sum() == msgs.size


def test_the_multicast_evaluator_equals_the_multicast_loads_of_expected_rates():
    rng = np.random.default_rng(7)
    hw = load_hardware("mesh:3x3x2")
    network = random_network(rng, 90, 10, n_pop=3)
    partition = Partition(np.unique(rng.integers(0, 12, network.n_neurons), return_inverse=True)[1])
    placement = Placement(rng.permutation(hw.n_cores)[: partition.n_parts])
    ev = Evaluator(network, hw, partition, placement, check=False, multicast=True)
    graph = partition_graph(network, hw, partition)
    msgs = graph.messages(hw.model)
    starts = np.flatnonzero(np.diff(msgs.neuron, prepend=-1))
    ptr = np.append(starts, msgs.size)
    weights = np.rint(network.rate[msgs.neuron[starts]] * FIXED)
    cores = placement.cores
    expected = multicast_loads(hw, cores[msgs.src[starts]], ptr, cores[msgs.dst], weights)
    np.testing.assert_array_equal(ev.loads, expected)
    # a swap re-routes the trees: the same as a fresh evaluation of the swapped placement
    a, b = int(cores[0]), int(cores[1])
    ev.swap_cores(a, b)
    swapped = cores.copy()
    swapped[[0, 1]] = swapped[[1, 0]]
    fresh = Evaluator(network, hw, partition, Placement(swapped), check=False, multicast=True)
    np.testing.assert_array_equal(ev.loads, fresh.loads)


# ---------------------------------------------------------------- conservation
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
    from engine.model.network import Network

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
