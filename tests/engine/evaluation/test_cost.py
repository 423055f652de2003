"""Cost: the max-affine model, the energy model, and incremental == full evaluation."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.errors import CapacityError
from engine.evaluation.cost import TERMS, Evaluator, model_evaluation
from engine.hardware import load_hardware
from engine.mapping.assignment import Mapping, Partition, Placement
from engine.mapping.partition import make_partition
from engine.mapping.partition_graph import partition_graph
from engine.mapping.placement import make_placement
from engine.model.network import Network
from engine.specs import load_network_spec
from tests.support.evaluations import assert_same_evaluation
from tests.support.networks import hardware_specs, random_mapping


@settings(max_examples=30, deadline=None)
@given(spec=hardware_specs, seed=st.integers(0, 2**32 - 1), n_swaps=st.integers(1, 40))
def test_incremental_swaps_equal_full_evaluation(spec, seed, n_swaps):
    """Any sequence of swaps and moves gives bit-for-bit what evaluating from scratch gives."""
    rng = np.random.default_rng(seed)
    hw = load_hardware(spec)
    network, partition, placement = random_mapping(rng, hw)
    ev = Evaluator(network, hw, partition, placement, check=False)
    for a, b in rng.integers(0, hw.n_cores, size=(n_swaps, 2)):
        latency, energy = ev.swap_cores(int(a), int(b))
    fresh = Evaluator(network, hw, partition, ev.placement, check=False)
    assert (latency, energy) == (fresh.latency_us, fresh.energy_uj)
    assert_same_evaluation(ev.evaluation(), fresh.evaluation())


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_swap_then_swap_back_restores_loads(seed):
    rng = np.random.default_rng(seed)
    hw = load_hardware("mesh:4x4x2@2x1")
    network, partition, placement = random_mapping(rng, hw)
    ev = Evaluator(network, hw, partition, placement, check=False)
    before = ev.loads.copy(), ev.latency_us, ev.energy_uj
    a, b = (int(v) for v in rng.choice(hw.n_cores, 2, replace=False))
    ev.swap_cores(a, b)
    ev.swap_cores(a, b)
    np.testing.assert_array_equal(ev.loads, before[0])
    assert (ev.latency_us, ev.energy_uj) == before[1:]


def test_swap_moves_partition_and_updates_occupancy():
    net = load_network_spec("linear-tiled-identity:M=2,N=4")
    hw = load_hardware("mesh:3x3x1")
    part = make_partition(net, hw)
    ev = Evaluator(net, hw, part, Placement([0, 1, 2, 3]))
    ev.swap_cores(0, 8)  # move partition 0 to the empty far corner
    assert ev.placement.cores.tolist() == [8, 1, 2, 3]
    assert ev.part_of_core[0] == -1 and ev.part_of_core[8] == 0
    ev.swap_cores(1, 2)
    assert ev.placement.cores.tolist() == [8, 2, 1, 3]


# ---------------------------------------------------------------- max-affine model
@pytest.fixture(scope="module")
def mlp_eval():
    net = load_network_spec("sparse-mlp-1")
    hw = load_hardware("loihi2")
    part = make_partition(net, hw, "min+2")
    place = make_placement(partition_graph(net, hw, part), hw, "packed-row")
    return net, hw, Mapping(part, place), model_evaluation(net, hw, Mapping(part, place))


def test_latency_is_the_max_of_the_five_terms(mlp_eval):
    _, hw, _, ev = mlp_eval
    assert set(ev.terms_us) == set(TERMS)
    assert ev.latency_us == max(ev.terms_us.values())
    assert ev.terms_us[ev.bottleneck] == ev.latency_us
    assert ev.terms_us["barrier"] == hw.model.barrier_us


def busiest_mesh_link_messages(net, hw, mapping) -> float:
    """The heaviest link's messages on the busier of Loihi 2's two meshes, routed here by
    hand: a message takes the mesh of its source core's slot parity (the preset's rule)."""
    from engine.evaluation.traffic import router_loads
    from engine.mapping.partition_graph import FIXED

    g = partition_graph(net, hw, mapping.partition)
    cores = mapping.placement.cores
    mesh = hw.core_table["slot"][cores[g.pair_src]] % 2
    router = max(
        router_loads(hw, cores[g.pair_src[mesh == m]], cores[g.pair_dst[mesh == m]],
                     g.pair_fixed[mesh == m]).max()
        for m in (0, 1)
    )  # fmt: skip
    into = max(  # a router's link into a core: one per mesh, as its router links
        np.bincount(g.pair_dst[mesh == m], weights=g.pair_fixed[mesh == m]).max()
        for m in (0, 1)
    )  # fmt: skip
    return max(router, g.out_fixed.max(), into) / FIXED


def test_terms_come_from_the_busiest_core_and_link(mlp_eval):
    net, hw, mapping, ev = mlp_eval
    m = hw.model
    assert ev.terms_us["dendops"] == pytest.approx(ev.neurons.max() * m.dendop_ns * 1e-3)
    assert ev.terms_us["synops"] == pytest.approx(ev.synops.max() * m.synop_ns * 1e-3)
    assert ev.terms_us["synmem"] == pytest.approx(ev.synmem_reads.max() * m.synmem_read_ns * 1e-3)
    bits_per_us = hw.links.router_bits_per_us
    assert hw.links.meshes == 2
    busiest = busiest_mesh_link_messages(net, hw, mapping)
    assert ev.terms_us["link"] == pytest.approx(busiest * 32 / bits_per_us)
    assert ev.max_link_messages / 2 <= busiest < ev.max_link_messages  # both meshes carry some
    assert ev.link_us[ev.bottleneck_link] == pytest.approx(ev.terms_us["link"])
    assert np.all(ev.link_utilization <= 1 + 1e-12)


def test_energy_is_static_plus_compute_plus_routing(mlp_eval):
    net, hw, _, ev = mlp_eval
    e = hw.energy
    static_w = e.static_power_per_core_w * ev.cores_used + e.static_power_per_chip_w
    assert ev.energy_terms_uj["static"] == pytest.approx(static_w * ev.latency_us)
    compute = 1e-6 * (
        e.dendop_pj * ev.neurons.sum() + e.synop_pj * ev.synops.sum()
        + e.synmem_read_pj * ev.synmem_reads.sum()
    )  # fmt: skip
    assert ev.energy_terms_uj["compute"] == pytest.approx(compute)
    assert ev.energy_terms_uj["routing"] == pytest.approx(ev.metrics["routing_energy_pj"] * 1e-6)
    assert ev.energy_uj == pytest.approx(sum(ev.energy_terms_uj.values()))
    assert ev.power_w == pytest.approx(ev.energy_uj / ev.latency_us)


def two_core_network(rate=0.5, encoding="sparse", weight_bits=8):
    """One source neuron on core 0 feeding 3 neurons on core 1."""
    return Network(
        name="two-core",
        indptr=[0, 3, 3, 3, 3],
        indices=[1, 2, 3],
        population=[0, 1, 1, 1],
        population_names=["src", "dst"],
        rate=[rate, 1, 1, 1],
        encoding=["sparse", encoding],
        weight_bits=[8, weight_bits],
    )


def test_hand_computed_two_core_case():
    """3 hops between the two cores: every number of the evaluation by hand."""
    hw = load_hardware("mesh:4x1x1")
    net = two_core_network(rate=0.5)
    part = Partition.layered(net, [1, 1])
    ev = model_evaluation(net, hw, Mapping(part, Placement([0, 3])))
    m, e = hw.model, hw.energy
    assert ev.synops.tolist() == [0, 1.5]
    entry = 8 + m.sparse_index_bits  # one sparse entry per synapse
    assert ev.synmem_reads.tolist() == [0, 0.5 * np.ceil(3 * entry / m.synmem_word_bits)]
    assert ev.metrics["connectivity"] == 0.5
    assert ev.metrics["hops_per_message"] == 3
    routing_pj = 0.5 * (3 * (e.route_pj + e.transmit_pj) + e.route_pj)  # SNN hypergraphs Table I
    assert ev.metrics["routing_energy_pj"] == pytest.approx(routing_pj)
    latency_ns = 3 * (e.route_ns + e.transmit_ns) + e.route_ns
    assert ev.metrics["average_latency_ns"] == pytest.approx(latency_ns)
    assert ev.metrics["congestion"] == pytest.approx(0.5 * 4)  # routers visited
    assert ev.metrics["synaptic_reuse"] == 3.0  # 3 synapses share one axon
    assert ev.metrics["connection_locality"] == 4.0  # the 4 lattice points of the segment
    assert ev.max_link_messages == 0.5
    assert ev.cores_used == 2 and ev.bottleneck == "barrier"


def test_dense_encoding_reads_whole_rows():
    hw = load_hardware("mesh:2x1x1")
    net = two_core_network(rate=1.0, encoding="dense", weight_bits=8)
    ev = model_evaluation(net, hw, Mapping(Partition.layered(net, [1, 1]), Placement([0, 1])))
    row_words = np.ceil(3 * 8 / hw.model.synmem_word_bits)
    assert ev.synmem_reads.tolist() == [0, row_words]


def test_activity_scales_compute_and_traffic_linearly():
    hw = load_hardware("loihi2")
    full = load_network_spec("qubo:n=300,density=0.2,rate=0.4")
    half = dataclasses.replace(full, rate=full.rate / 2)
    part = make_partition(full, hw, "cores:4,1,1")
    place = Placement(np.arange(part.n_parts) * 5)
    a, b = (model_evaluation(n, hw, Mapping(part, place)) for n in (full, half))
    np.testing.assert_allclose(b.synops, a.synops / 2)
    np.testing.assert_allclose(b.link_messages, a.link_messages / 2, atol=1e-6)
    assert b.terms_us["link"] == pytest.approx(a.terms_us["link"] / 2, rel=1e-6)


def test_connection_locality_of_a_known_hull():
    """A triangle (0,0),(3,0),(0,3) on the lattice holds 10 points."""
    net = Network(
        name="tri",
        indptr=[0, 2, 2, 2],
        indices=[1, 2],
        population=[0, 1, 2],
        population_names=["a", "b", "c"],
        rate=[1, 1, 1],
    )
    hw = load_hardware("mesh:4x4x1")
    part = Partition.layered(net, [1, 1, 1])
    ev = model_evaluation(net, hw, Mapping(part, Placement([0, 3, 12])))
    assert ev.metrics["connection_locality"] == 10.0


def test_evaluate_refuses_an_infeasible_mapping():
    hw = load_hardware("loihi2")
    net = load_network_spec("sparse-mlp-1")
    part = Partition.layered(net, [1, 1, 1, 1, 1, 1])  # far over synaptic memory
    with pytest.raises(CapacityError, match="core memory"):
        model_evaluation(net, hw, Mapping(part, Placement(np.arange(6))))
    part = make_partition(net, hw, "min")
    with pytest.raises(CapacityError, match="share core"):
        model_evaluation(net, hw, Mapping(part, Placement(np.zeros(part.n_parts, int))))


# ---------------------------------------------------------------- parallel meshes
def _with_meshes(hw, meshes: int):
    return dataclasses.replace(hw, links=dataclasses.replace(hw.links, meshes=meshes))


def test_two_meshes_halve_the_link_microbenchmarks_shared_link():
    """mb-link's 12 pairs fill slots 0-3 of their routers: six send on each mesh, so the
    shared link of each mesh carries half the messages and takes half the time."""
    from engine.pipeline import build_mapping, evaluate

    hw = load_hardware("loihi2")
    by = {}
    for meshes in (1, 2):
        m = build_mapping("mb-link:M=12,N=512", _with_meshes(hw, meshes), partition="natural",
                          placement="pairs-column")  # fmt: skip
        by[meshes] = evaluate(m)
    assert by[1].terms_us["link"] == pytest.approx(12 * 512 * 32 / hw.links.router_bits_per_us)
    assert by[2].terms_us["link"] == pytest.approx(by[1].terms_us["link"] / 2)
    np.testing.assert_array_equal(by[1].link_messages, by[2].link_messages)  # loads: both


@pytest.mark.parametrize("multicast", [False, True], ids=["unicast", "multicast"])
def test_swaps_on_two_meshes_equal_a_full_evaluation(multicast):
    net = load_network_spec("sparse-mlp-1")
    hw = load_hardware("loihi2")
    assert hw.links.meshes == 2
    part = make_partition(net, hw, "min+2")
    place = make_placement(partition_graph(net, hw, part), hw, "random")
    ev = Evaluator(net, hw, part, place, multicast=multicast)
    rng = np.random.default_rng(3)
    for _ in range(25):
        a = int(rng.choice(ev.core_of_part))
        ev.swap_cores(a, int(rng.integers(0, hw.n_cores)))
    full = Evaluator(net, hw, part, ev.placement, multicast=multicast).evaluation()
    got = ev.evaluation()
    assert got.latency_us == full.latency_us and got.energy_uj == pytest.approx(full.energy_uj)
    np.testing.assert_array_equal(got.link_us, full.link_us)
    np.testing.assert_array_equal(got.link_mesh_messages, full.link_mesh_messages)
    one = Evaluator(net, _with_meshes(hw, 1), part, ev.placement, multicast=multicast)
    assert got.terms_us["link"] <= one.evaluation().terms_us["link"]  # never slower


@pytest.mark.parametrize("multicast", [False, True], ids=["unicast", "multicast"])
def test_per_mesh_loads_are_each_meshs_own_routes(multicast):
    """``link_mesh_messages``: per link and mesh, the messages of the pairs whose source core
    sits on that mesh (slot parity), routed by hand here; the meshes add up to
    ``link_messages`` and the busier one times the link (``link_us``)."""
    from engine.evaluation.traffic import multicast_loads, port_cores, route_loads
    from engine.mapping.partition_graph import FIXED

    net = load_network_spec("sparse-mlp-1")
    hw = load_hardware("loihi2")
    part = make_partition(net, hw, "min+2")
    g = partition_graph(net, hw, part)
    place = make_placement(g, hw, "random", seed=5)
    ev = Evaluator(net, hw, part, place, multicast=multicast).evaluation()
    per = ev.link_mesh_messages
    assert per.shape == (hw.n_link_ids, 2) and ev.mesh_messages is per
    cores = port_cores(hw, place.cores)
    mesh_of = hw.core_table["slot"] % 2
    for m in (0, 1):
        if multicast:
            msgs = g.messages(hw.model)
            starts = np.flatnonzero(np.diff(msgs.neuron, prepend=-1))
            ptr = np.append(starts, msgs.size)
            on = mesh_of[cores[msgs.src[starts]]] == m
            sizes = np.diff(ptr)[on]
            dst = cores[msgs.dst[np.repeat(on, np.diff(ptr))]]
            want = multicast_loads(
                hw, cores[msgs.src[starts][on]], np.concatenate([[0], np.cumsum(sizes)]), dst,
                np.rint(net.rate[msgs.neuron[starts][on]] * FIXED),
            )  # fmt: skip
        else:
            src, dst, fixed = g.routed_pairs
            on = mesh_of[cores[src]] == m
            want = route_loads(hw, cores[src[on]], cores[dst[on]], fixed[on])
        np.testing.assert_array_equal(per[:, m], want / FIXED)
    assert per[:, 0].any() and per[:, 1].any()  # both meshes carry some
    np.testing.assert_allclose(per.sum(axis=1), ev.link_messages, rtol=1e-12)
    np.testing.assert_allclose(
        per.max(axis=1) * hw.link_table["us_per_message"], ev.link_us, rtol=1e-12
    )
    for row in ev.links(hw):  # and in the rows the CLI's --links --json prints
        assert row["mesh_messages"] == per[row["id"]].tolist()


def test_one_mesh_has_one_column_of_per_mesh_loads(mlp_eval):
    net, hw, mapping, _ = mlp_eval
    ev = model_evaluation(net, _with_meshes(hw, 1), mapping)
    assert ev.link_mesh_messages is None
    np.testing.assert_array_equal(ev.mesh_messages[:, 0], ev.link_messages)
