"""Spike sources: a network's input layer runs on no core and sends from the input port.

Loihi 2 mapping ES's workloads take 1024 inputs; the issue's reading is that the input layer
is a spike source, not a layer of cores. Its neurons get partition -1, its messages enter
the mesh through the link of the hardware's input core (``Hardware.input_core``) and follow
the X-then-Y route from there — in the model, stage by stage, the flows, and the simulator.
Expected figures are worked out here by hand or by brute force over the synapses.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from engine.errors import CapacityError, InputFileError, InvalidHardwareError, InvalidNetworkError
from engine.evaluation.cost import Evaluator, model_evaluation
from engine.evaluation.flows import flows_through, layer_link_messages
from engine.evaluation.stages import stage_loads
from engine.hardware import hardware_from_dict, load_hardware
from engine.hardware.provenance import preset_text
from engine.io.network_file import load_network, save_network
from engine.mapping.assignment import Mapping, Partition, Placement
from engine.mapping.partition import make_partition
from engine.mapping.partition.layer import min_cores
from engine.mapping.partition_graph import FIXED, partition_graph
from engine.model.network import Network
from engine.pipeline import Mapped, build_mapping
from engine.search.genotype import layout_for
from engine.simulate import draw_spikes, simulate_step
from engine.specs import load_network_spec


def fan_in(n_src=3, n_dst=2, rate=0.5, *, name="fan-in") -> Network:
    """``n_src`` source neurons, each with a synapse onto every one of ``n_dst`` neurons."""
    n = n_src + n_dst
    indices = np.tile(np.arange(n_src, n), n_src)
    indptr = np.concatenate([np.arange(n_src + 1) * n_dst, np.full(n_dst, n_src * n_dst)])
    return Network(
        name=name,
        indptr=indptr,
        indices=indices,
        population=[0] * n_src + [1] * n_dst,
        population_names=["input", "out"],
        rate=[rate] * n_src + [0.25] * n_dst,
        spike_source=(True, False),
    )


# ------------------------------------------------------------------ the network
def test_a_spike_source_cannot_receive_synapses_nor_be_everything():
    net = fan_in()
    with pytest.raises(InvalidNetworkError, match="'out' is a spike source and receives"):
        replace(net, spike_source=(False, True))
    with pytest.raises(InvalidNetworkError, match="every population is a spike source"):
        replace(net, spike_source=(True, True))
    with pytest.raises(InvalidNetworkError, match="0 for a spike source"):
        replace(net, natural_cores=(1, 1))
    assert replace(net, natural_cores=(0, 2)).natural_cores == (0, 2)


def test_the_inputs_are_counted_apart_from_the_neurons_on_cores():
    net = fan_in(n_src=3, n_dst=2)
    assert (net.n_neurons, net.n_core_neurons, net.n_input_neurons) == (5, 2, 3)
    assert net.neuron_count_text() == "2 neurons on cores and 3 inputs"
    flat = replace(net, spike_source=None)
    assert (flat.n_core_neurons, flat.n_input_neurons) == (5, 0)
    assert flat.neuron_count_text() == "5 neurons"


def test_the_sparse_mlps_input_is_a_spike_source_and_survives_a_file(tmp_path):
    net = load_network_spec("mlp:widths=64-128-32")
    assert net.spike_source == (True, False, False)
    summary = net.summary()
    assert [r["name"] for r in summary["populations"] if r["spike_source"]] == ["input"]
    assert (summary["neurons"], summary["input_neurons"]) == (128 + 32, 64)
    save_network(net, tmp_path / "n.npz")
    back = load_network(tmp_path / "n.npz")
    assert back.spike_source == net.spike_source and back.fingerprint == net.fingerprint
    # flags are part of what the network is
    assert replace(net, spike_source=None).fingerprint != net.fingerprint


# ------------------------------------------------------------------ partitions
def test_layer_partitions_give_a_source_no_core():
    net = load_network_spec("mlp:widths=64-128-32")
    hw = load_hardware("loihi2")
    assert min_cores(net, hw)[0] == 0
    full = Partition.layered(net, [0, 3, 2])
    short = Partition.layered(net, [3, 2])  # the populations on cores only
    assert np.array_equal(full.assignment, short.assignment)
    assert full.cores_per_population == short.cores_per_population == (0, 3, 2)
    assert np.all(full.assignment[net.population == 0] == -1)
    assert full.n_parts == 5 and full.sizes.tolist() == [43, 43, 42, 16, 16]
    with pytest.raises(CapacityError, match="spike source and runs on no core; give it 0"):
        Partition.layered(net, [1, 3, 2])
    with pytest.raises(CapacityError, match="'layer1' has 128 neurons and cannot be split"):
        Partition.layered(net, [0, 0, 2])


@pytest.mark.parametrize("spec", ["min", "min+2", "hierarchical", "overlap", "sequential"])
def test_every_partitioner_takes_the_sources_off_the_cores(spec):
    net = load_network_spec("mlp:widths=64-128-32")
    hw = load_hardware("hypergraph-small")
    part = make_partition(net, hw, spec, seed=1)
    a = part.assignment
    assert np.all((a < 0) == (net.population == 0))
    assert np.array_equal(np.unique(a[a >= 0]), np.arange(part.n_parts))  # none left empty
    partition_graph(net, hw, part)  # and it is a partition the graph accepts


def test_the_graph_refuses_a_source_on_a_core_and_a_neuron_off_one():
    net, hw = fan_in(), load_hardware("mesh:4x1")
    with pytest.raises(CapacityError, match="neuron 0 .* is a spike source"):
        partition_graph(net, hw, Partition(np.array([0, -1, -1, 1, 1])))
    with pytest.raises(CapacityError, match="neuron 3 .* needs a partition id"):
        partition_graph(net, hw, Partition(np.array([-1, -1, -1, -1, 0])))


def test_the_input_pairs_by_brute_force():
    """Per (source population, partition): Σ rate of the source neurons with a synapse there;
    the sources' axons count on their destination cores, their neurons on none."""
    net = load_network_spec("mlp:widths=64-128-32")
    hw = load_hardware("loihi2")
    part = Partition.layered(net, [0, 3, 2])
    g = partition_graph(net, hw, part)
    a = part.assignment
    expect = {}
    axons = np.zeros(g.n_parts)
    for s in np.flatnonzero(net.population == 0):
        parts = set(a[net.indices[net.indptr[s] : net.indptr[s + 1]]].tolist())
        for p in parts:
            expect[p] = expect.get(p, 0.0) + net.rate[s]
            axons[p] += 1
    got = dict(zip(g.input_dst.tolist(), g.input_messages.tolist(), strict=True))
    assert got.keys() == expect.keys() and got == pytest.approx(expect)
    assert np.all(g.input_population == 0)
    assert np.all(g.axons[:3] >= axons[:3]) and g.neurons.sum() == 128 + 32
    assert not np.any(np.isin(g.pair_src, g.input_dst) & (g.population[g.pair_src] == 0))


# ------------------------------------------------------------------ the model
def test_the_ports_messages_take_its_link_and_the_route_from_there():
    """Three sources at rate 0.5 onto one core at the far end of a 4×1 mesh whose input port
    is core 0: 1.5 messages a step leave core 0's link, cross E links 0→1→2→3 and reach
    core 3's link; nothing else carries anything."""
    net, hw = fan_in(), load_hardware("mesh:4x1")
    part = Partition(np.array([-1, -1, -1, 0, 0]))
    ev = model_evaluation(net, hw, Mapping(part, Placement(np.array([3]))))
    n_r4 = 4 * hw.n_routers
    expect = np.zeros(hw.n_link_ids)
    expect[[0 * 4, 1 * 4, 2 * 4]] = 1.5  # E out of routers 0, 1, 2
    expect[n_r4 + hw.input_core] = 1.5  # into the mesh through the port's link
    expect[n_r4 + hw.n_cores + 3] = 1.5  # out to core 3
    np.testing.assert_allclose(ev.link_messages, expect)
    # a port elsewhere moves the route: at router 2, one E hop
    moved = replace(hw, input_port=(0, 2, 0, 0))
    ev = model_evaluation(net, moved, Mapping(part, Placement(np.array([3]))))
    assert ev.link_messages[2 * 4] == 1.5 and ev.link_messages[0] == ev.link_messages[4] == 0


@pytest.mark.parametrize("spec", ["mesh:4x4x2", "loihi2"])  # one mesh (incremental), two
def test_swaps_around_the_port_equal_a_full_evaluation(spec):
    """Swaps that move partitions on and off the input core keep the port's load on its link."""
    net = load_network_spec("mlp:widths=64-128-32")
    hw = load_hardware(spec)
    part = Partition.layered(net, [0, 4, 3])
    rng = np.random.default_rng(3)
    ev = Evaluator(net, hw, part, Placement(rng.permutation(hw.n_cores)[: part.n_parts]))
    port = hw.input_core
    for _ in range(60):
        a = port if rng.random() < 0.5 else int(rng.integers(hw.n_cores))
        ev.swap_cores(a, int(rng.integers(hw.n_cores)))
    fresh = Evaluator(net, hw, part, ev.placement)
    np.testing.assert_array_equal(ev.loads, fresh.loads)
    assert (ev.latency_us, ev.energy_uj) == (fresh.latency_us, fresh.energy_uj)
    g = fresh.graph
    assert ev.loads[4 * hw.n_routers + port] >= g.input_fixed.sum()


def test_stages_and_layer_filters_count_the_port():
    mapped = build_mapping("mlp:widths=64-128-32", "loihi2", partition="min+2")
    hw, g = mapped.hardware, mapped.graph
    ev = model_evaluation(mapped.network, hw, mapped.mapping)
    total = sum(stage_loads(mapped, k) for k in range(3))
    np.testing.assert_allclose(total / FIXED, ev.link_messages)
    # the input's own stage is layer 1's: the port's messages into layer 1's cores
    into_first = stage_loads(mapped, 1)[4 * hw.n_routers + hw.input_core]
    assert into_first >= g.input_fixed.sum() > 0
    cores = mapped.mapping.placement.cores
    by_layer = sum(layer_link_messages(hw, g, cores, [k]) for k in range(3))
    np.testing.assert_allclose(by_layer, ev.link_messages)
    assert layer_link_messages(hw, g, cores, [0]).sum() > 0


def test_the_flows_through_the_port_link_name_the_input():
    mapped = build_mapping("mlp:widths=64-128-32", "loihi2", partition="min+2")
    hw, g = mapped.hardware, mapped.graph
    ev = model_evaluation(mapped.network, hw, mapped.mapping)
    link = 4 * hw.n_routers + hw.input_core
    table = flows_through(hw, g, mapped.mapping.placement.cores, link)
    rows = table.rows(hw, g)
    ports = [r for r in rows if r["src_partition"] is None]
    assert ports and all(r["src_layer"] == "input" for r in ports)
    assert sum(r["messages"] for r in rows) == pytest.approx(ev.link_messages[link])
    assert table.share.sum() == pytest.approx(1.0)


# ------------------------------------------------------------------ the simulator
def test_the_simulator_sends_the_ports_messages_from_its_core():
    mapped = build_mapping("mlp:widths=64-128-32", "mesh:4x4x2", partition="min+2")
    hw = replace(mapped.hardware, noc=replace(mapped.hardware.noc, flit_bits=32))
    mapped = Mapped.of(mapped.network, hw, mapped.mapping)
    spikes = draw_spikes(mapped.network.rate, "expected")
    res = simulate_step(mapped, spikes=spikes)
    msgs = mapped.graph.messages(hw.model, spikes)
    from_port = int(np.count_nonzero(msgs.src < 0))
    assert from_port > 0
    sent = np.append(mapped.mapping.placement.cores, hw.input_core)[msgs.src]
    inject = res.link_flits[4 * hw.n_routers : 4 * hw.n_routers + hw.n_cores]
    assert np.array_equal(inject, np.bincount(sent, minlength=hw.n_cores))
    assert inject[hw.input_core] >= from_port


# ------------------------------------------------------------------ search and hardware
def test_the_search_layout_leaves_the_sources_out():
    net = load_network_spec("mlp:widths=64-128-32")
    layout = layout_for(net, load_hardware("loihi2"))
    assert layout.free.tolist() == [1, 2]
    with pytest.raises(Exception, match="cannot give cores to a spike source"):
        layout_for(net, load_hardware("loihi2"), free=[0, 1])


def test_the_input_port_is_a_checked_preset_constant():
    hw = load_hardware("loihi2")
    assert hw.input_port == (0, 0, 0, 0) and hw.input_core == 0
    assert hw.source("topology.input_port").startswith("illustrative:")
    assert "input_port = { value = [0, 0, 0, 0]" in preset_text(hw)
    with pytest.raises(InvalidHardwareError, match="x 0..3"):
        replace(hw, input_port=(0, 9, 0, 0))
    import tomllib

    data = tomllib.loads(preset_text(hw))
    data["topology"]["input_port"] = [0, 1]
    with pytest.raises(InputFileError, match=r"input_port must be \[chip, x, y, slot\]"):
        hardware_from_dict(data, "x.toml")
    data["topology"]["input_port"] = {"value": [0, 1, 2, 3], "source": "spec: here"}
    moved = hardware_from_dict(data, "x.toml")
    assert moved.input_core == moved.core_id(0, 1, 2, 3) and moved.fingerprint != hw.fingerprint


def test_the_input_port_uses_no_chip():
    """A mapping wholly on chip 1 of a two-chip board uses one chip, though its spike
    sources send from the port on chip 0."""
    net = load_network_spec("mlp:widths=64-128-32")
    hw = load_hardware("mesh:2x2x2@2x1")
    part = Partition.layered(net, [0, 2, 1])
    on_chip_1 = [hw.core_id(1, x, 0, 0) for x in range(2)] + [hw.core_id(1, 0, 1, 0)]
    ev = model_evaluation(net, hw, Mapping(part, Placement(np.array(on_chip_1))))
    assert hw.core_table["chip"][hw.input_core] == 0
    assert ev.chips_used == 1
    assert ev.energy_terms_uj["static"] == pytest.approx(
        (hw.energy.static_power_per_core_w * 3 + hw.energy.static_power_per_chip_w) * ev.latency_us
    )
