"""SENMap eq. (1) as the second per-core memory model, and the SENECA-like preset."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from engine.errors import InputFileError, SpecError
from engine.hardware import (
    MEMORY_MODELS,
    PRESET_DIR,
    ModelConstants,
    load_hardware,
    preset_names,
)
from engine.hardware.provenance import constants, write_preset
from engine.mapping.partition import make_partition
from engine.mapping.partition_graph import partition_graph
from engine.mapping.resources import (
    capacity,
    fewest_cores,
    memory_bytes,
    presets_that_fit,
    senmap_memory_bytes,
)
from engine.pipeline import build_mapping, evaluate
from engine.specs import load_network_spec

LOIHI2_TOML = (PRESET_DIR / "loihi2.toml").read_text()


def senmap_model(**changes) -> ModelConstants:
    """Eq. (1) with BW_states 16, BW_outputs 8, an SNN, one threshold and one bias a neuron."""
    base = replace(
        load_hardware("loihi2").model,
        memory_model="senmap",
        state_bits=16,
        output_bits=8,
        snn=True,
        thresholds_per_neuron=1,
        biases_per_neuron=1,
    )
    return replace(base, **changes)


# ------------------------------------------------------------------ eq. (1)
def test_eq1_against_a_hand_computation():
    """M_pc = 2 (N_npc + N_tpc F_snn)(BW_states + BW_outputs) + (N_wpc + N_bpc) BW_weights.

    Core A: 10 neurons, 100 inbound synapses, 8-bit weights:
        N_npc = 10, N_tpc = 10, N_wpc = 100, N_bpc = 10
        2 × (10 + 10 × 1) × (16 + 8) = 2 × 20 × 24 = 960 bits
        (100 + 10) × 8                             = 880 bits
        960 + 880 = 1840 bits = 230 bytes
    Core B: 3 neurons, 7 synapses, 4-bit weights:
        2 × (3 + 3) × 24 = 288 bits;  (7 + 3) × 4 = 40 bits;  328 bits = 41 bytes
    """
    model = senmap_model()
    got = memory_bytes(
        np.array([10, 3]), np.array([100, 7]), np.array([5, 2]), np.array([8, 4]), False, model
    )
    np.testing.assert_array_equal(got, [230.0, 41.0])
    assert got.dtype == float


def test_eq1_ignores_axons_and_the_encoding():
    """Eq. (1) counts weights, one per synapse: a dense encoding takes no rows, axons no room."""
    model = senmap_model()
    sparse = memory_bytes(10, 100, 5, 8, False, model)
    assert memory_bytes(10, 100, 99, 8, True, model) == sparse == 230.0
    assert senmap_memory_bytes(10, 100, 8, model) == sparse


def test_snn_flag_off_drops_the_thresholds_term():
    """F_snn = 0 (an ANN): 2 × (10 + 10 × 0) × 24 = 480 bits; + 880 bits = 1360 bits = 170 bytes."""
    ann = senmap_model(snn=False)
    assert memory_bytes(10, 100, 5, 8, False, ann) == 170.0
    snn = senmap_model()
    dropped = 2 * 10 * 1 * (16 + 8) / 8  # the thresholds' state and output, double-buffered
    assert memory_bytes(10, 100, 5, 8, False, snn) - memory_bytes(10, 100, 5, 8, False, ann) == (
        dropped
    )


def test_thresholds_and_biases_per_neuron_scale_their_terms():
    """Two thresholds and no bias a neuron: 2 × (10 + 20) × 24 = 1440; 100 × 8 = 800;
    2240 bits = 280 bytes."""
    model = senmap_model(thresholds_per_neuron=2, biases_per_neuron=0)
    assert memory_bytes(10, 100, 5, 8, False, model) == 280.0


# ------------------------------------------------------------------ Loihi unchanged
# (neurons, synapses, axons, weight bits, dense) of four cores, worked out by hand below
CORES = (
    (100, 1000, 40, 8, False),
    (100, 1000, 40, 8, True),
    (3, 7, 5, 4, False),
    (9, 0, 2, 8, True),
)


@pytest.mark.parametrize(
    ("name", "want"),
    [
        ("loihi2", [3200.0, 5360.0, 46.5, 140.0]),
        ("loihi2-x8", [3200.0, 5360.0, 46.5, 140.0]),
        ("hypergraph-small", [2000.0, 4160.0, 10.5, 32.0]),
        ("hypergraph-large", [2000.0, 4160.0, 10.5, 32.0]),
    ],
)
def test_loihi_presets_keep_their_memory_model_bit_for_bit(name, want):
    """Loihi's count, by hand, with every preset's 64-bit words and 8-bit sparse indices; a
    neuron's state and spike buffer take 64 + 32 = 96 bits (12 bytes) on loihi2 and loihi2-x8,
    none on the hypergraph presets:
      sparse, 1000 synapses of 8 bits: 1000 × (8 + 8) / 8 = 2000 bytes, + 100 × 12 = 1200;
      dense, 40 axons, 100 neurons of 8 bits: a row is ceil(800 / 64) = 13 words of 8 bytes,
        40 × 13 × 8 = 4160 bytes, + 1200;
      sparse, 7 synapses of 4 bits: 7 × (4 + 8) / 8 = 10.5 bytes (bits, not whole bytes),
        + 3 × 12 = 36;
      dense, 2 axons, 9 neurons of 8 bits: ceil(72 / 64) = 2 words, 2 × 2 × 8 = 32 bytes,
        + 9 × 12 = 108."""
    model = load_hardware(name).model
    assert model.memory_model == "loihi"
    n, s, a, bits, dense = (np.array(column) for column in zip(*CORES, strict=True))
    got = memory_bytes(n, s, a, bits, dense, model)
    np.testing.assert_array_equal(got, want)
    assert got.dtype == float


def test_a_preset_that_names_the_loihi_model_is_the_same_hardware(tmp_path):
    path = tmp_path / "named.toml"
    path.write_text(LOIHI2_TOML.replace("[model]", '[model]\nmemory_model = "loihi"', 1))
    named, loihi2 = load_hardware(str(path)), load_hardware("loihi2")
    assert named.model == loihi2.model and named.fingerprint == loihi2.fingerprint
    senmap = tmp_path / "senmap.toml"
    senmap.write_text(LOIHI2_TOML.replace("[model]", '[model]\nmemory_model = "senmap"', 1))
    assert load_hardware(str(senmap)).fingerprint != loihi2.fingerprint


# ------------------------------------------------------------------ validation
def test_an_unknown_memory_model_is_refused_when_the_preset_is_read(tmp_path):
    path = tmp_path / "custom.toml"
    path.write_text(LOIHI2_TOML.replace("[model]", '[model]\nmemory_model = "truenorth"', 1))
    with pytest.raises(SpecError) as info:
        load_hardware(str(path))
    text = str(info.value)
    assert "truenorth" in text and str(path) in text
    for known in MEMORY_MODELS:
        assert known in text
    with pytest.raises(SpecError, match="senmap"):
        replace(load_hardware("loihi2").model, memory_model="truenorth")


def test_the_snn_flag_must_be_true_or_false(tmp_path):
    text = (PRESET_DIR / "seneca.toml").read_text()
    line = next(x for x in text.splitlines() if x.startswith("snn = "))
    path = tmp_path / "custom.toml"
    path.write_text(text.replace(line, "snn = 1"))
    with pytest.raises(InputFileError, match="snn must be true or false"):
        load_hardware(str(path))


# ------------------------------------------------------------------ the seneca preset
def test_the_seneca_preset_is_64_cores_on_an_8x8_grid_with_eq1():
    hw = load_hardware("seneca")
    assert hw.n_cores == 64 and hw.n_chips == 1
    assert (hw.grid_width, hw.grid_height, hw.cores_per_router) == (8, 8, 1)
    assert hw.n_routers == 64
    assert hw.model.memory_model == "senmap"
    assert hw.limits.synaptic_memory_bytes == 2**20  # SENMap §IV-C's 1 MB node
    assert "SENMap" in hw.source("model.memory_model")
    assert "multicast" in hw.description


def test_the_seneca_preset_says_where_every_constant_comes_from_and_reads_back(tmp_path):
    hw = load_hardware("seneca")
    rows = constants(hw)
    assert all(row["kind"] in ("paper", "illustrative") for row in rows), rows
    for key in ("limits.synaptic_memory_bytes", "model.memory_model", "topology.routers"):
        assert hw.source(key).startswith("paper: SENMap §"), key
    path = tmp_path / "again.toml"
    write_preset(path, hw)
    again = load_hardware(str(path))
    assert again == hw and again.sources == hw.sources and again.fingerprint == hw.fingerprint


def test_a_small_network_maps_on_seneca_end_to_end_with_eq1():
    """linear-dense:M=2,N=64 (1-bit weights, dense all-ones) on seneca's constants (BW_states
    16, BW_outputs 8, one threshold and one bias a neuron):
      origin core: 64 neurons, no synapses: 2 × (64 + 64) × 24 = 6144 bits, + (0 + 64) × 1 =
        6208 bits = 776 bytes;
      destination core: 64 neurons, 2 × 64 × 64 = 8192 synapses: 6144 + (8192 + 64) × 1 =
        14400 bits = 1800 bytes."""
    hw = load_hardware("seneca")
    assert (hw.model.state_bits, hw.model.output_bits) == (16, 8)
    assert (hw.model.thresholds_per_neuron, hw.model.biases_per_neuron, hw.model.snn) == (1, 1, 1)
    mapped = build_mapping("linear-dense:M=2,N=64,bits=1", "seneca", placement="packed-row")
    g = mapped.graph
    np.testing.assert_array_equal(g.synapses, [0, 0, 8192, 8192])
    np.testing.assert_array_equal(g.memory_bytes, [776.0, 776.0, 1800.0, 1800.0])
    assert evaluate(mapped).latency_us > 0


def test_min_partition_on_seneca_uses_eq1_for_every_core():
    """Every core's memory is eq. (1)'s count of it (the count itself is pinned by the
    hand-worked cases above), and it is not Loihi's."""
    net = load_network_spec("sparse-mlp-1")
    mapped = build_mapping(net, "seneca", partition="min", placement="hilbert")
    g, model = mapped.graph, mapped.hardware.model
    wbits = np.asarray(net.weight_bits)[g.population]
    n = g.neurons
    np.testing.assert_array_equal(g.memory_bytes, senmap_memory_bytes(n, g.synapses, wbits, model))
    assert g.memory_bytes.max() <= 2**20
    assert g.limit_violations(mapped.hardware) == []
    loihi = replace(model, memory_model="loihi")  # Loihi's count of the same cores differs
    assert not np.array_equal(
        g.memory_bytes, memory_bytes(n, g.synapses, g.axons, wbits, False, loihi)
    )


@pytest.mark.parametrize(
    "network",
    ["sparse-mlp-1", "sparse-mlp-2", "conv-snn", "qubo:n=500", "rand:n=20000,card=100"],
)
def test_fewest_cores_on_seneca_never_exceeds_the_min_partition(network):
    net, hw = load_network_spec(network), load_hardware("seneca")
    need, why = fewest_cores(net, hw)
    part = make_partition(net, hw, "min")
    assert 1 <= need <= part.n_parts, why
    # eq. (1) adds up over cores: the bound's memory is the partition's total memory
    graph = partition_graph(net, hw, part)
    assert need >= np.ceil(graph.memory_bytes.sum() / hw.limits.synaptic_memory_bytes) - 1e-9


def test_fewest_cores_is_set_by_eq1_when_memory_binds():
    """rand:n=12000,card=200: 12,000 neurons × 13 bytes (2 × 2 × 24 + 8 bits) + its ~2.4 M
    synapses at one byte each, more than 2 MiB: three 1 MiB cores at least (its neurons alone
    would fit two), and min needs three."""
    net, hw = load_network_spec("rand:n=12000,card=200"), load_hardware("seneca")
    fan_in, _ = net.synapses_per_population()
    total = 12000 * 13 + int(fan_in.sum())
    assert 2 * 2**20 < total <= 3 * 2**20
    need, why = fewest_cores(net, hw)
    assert need == 3 and "MiB" in why
    assert make_partition(net, hw, "min").n_parts == 3


def test_neuron_level_partitioners_count_eq1_and_fit():
    """A neuron takes ceil(104 / 8) = 13 one-byte weight entries of memory."""
    net, hw = load_network_spec("rand:n=20000,card=100"), load_hardware("seneca")
    cap = capacity(net, hw)
    assert cap.per_neuron == 13 and cap.synapses == 2**20
    part = make_partition(net, hw, "sequential")
    assert partition_graph(net, hw, part).limit_violations(hw) == []


# ------------------------------------------------------------------ SENECA's multicast NoC
def test_seneca_multicasts_by_default_in_the_model_and_the_simulator():
    from engine.pipeline import build_mapping, evaluate
    from engine.simulate import simulate_step

    mapped = build_mapping("sparse-mlp-1", "seneca", partition="min+2", placement="spread-col")
    assert mapped.hardware.links.multicast
    default, tree, unicast = (evaluate(mapped, multicast=m) for m in (None, True, False))
    assert np.array_equal(default.link_messages, tree.link_messages)
    assert default.link_messages.sum() < unicast.link_messages.sum()  # a tree shares hops
    step = simulate_step(mapped, seed=1)
    assert (
        step.multicast and step.messages == simulate_step(mapped, multicast=True, seed=1).messages
    )
    loihi = build_mapping("sparse-mlp-1", "loihi2", partition="min+2", placement="spread-col")
    assert not loihi.hardware.links.multicast
    assert np.array_equal(
        evaluate(loihi).link_messages, evaluate(loihi, multicast=False).link_messages
    )


def test_unicast_readings_ask_for_unicast_on_a_multicast_noc(capsys):
    from engine.cli import main

    common = ["evaluate", "--network", "sparse-mlp-1", "--hardware", "seneca", "--flows", "max"]
    assert main(common) == 2
    assert "add --unicast" in capsys.readouterr().err
    assert main([*common, "--unicast"]) == 0


@pytest.mark.parametrize("spec", ["sparse-mlp-2", "pilotnet"])
def test_presets_that_fit_are_those_the_totals_allow_fewest_cores_first(spec):
    """What a "needs at least N cores" error suggests: every preset whose cores the network's
    totals do not outnumber, and none other."""
    net = load_network_spec(spec)
    fit = presets_that_fit(net)
    for name in preset_names():
        hw = load_hardware(name)
        assert (name in fit) == (fewest_cores(net, hw)[0] <= hw.n_cores), name
    cores = [load_hardware(name).n_cores for name in fit]
    assert cores == sorted(cores) and len(fit) < len(preset_names())
