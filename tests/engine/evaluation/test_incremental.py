"""Incremental swaps equal a full evaluation to the last bit: on every hardware preset, one
mesh or two, unicast pairs or multicast trees, every routing, chips joined by off-chip
links, the input port's core swapped too."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.evaluation.cost import Evaluator
from engine.evaluation.incremental import mesh_summary
from engine.hardware import OFF_CHIP, load_hardware
from engine.hardware.loading import preset_names
from engine.mapping.partition import make_partition
from engine.mapping.partition_graph import partition_graph
from engine.mapping.placement import make_placement
from engine.specs import load_network_spec
from tests.support.evaluations import assert_same_evaluation
from tests.support.networks import random_mapping

PRESETS = preset_names()


def variant(hw, meshes: int | None = None, routing: str | None = None):
    """``hw`` with ``meshes`` parallel meshes and NoC ``routing`` (None: its own)."""
    links = hw.links if meshes is None else dataclasses.replace(hw.links, meshes=meshes)
    noc = hw.noc if routing is None else dataclasses.replace(hw.noc, routing=routing)
    return dataclasses.replace(hw, links=links, noc=noc)


def assert_equal_to_fresh(ev: Evaluator, latency: float, energy: float) -> None:
    fresh = Evaluator(ev.network, ev.hardware, ev.partition, ev.placement, check=False,
                      multicast=ev.multicast)  # fmt: skip
    np.testing.assert_array_equal(ev._per_mesh, fresh._per_mesh)  # every mesh's loads
    assert (latency, energy) == (fresh.latency_us, fresh.energy_uj)  # bit for bit
    assert_same_evaluation(ev.evaluation(), fresh.evaluation())


def random_swaps(rng, ev: Evaluator, n: int) -> tuple[float, float]:
    """``n`` swaps and moves, a third of them of the input port's core or between the two
    cores of one partition pair (the cases with their own books)."""
    hw = ev.hardware
    out = ev.latency_us, ev.energy_uj
    for _ in range(n):
        a, b = (int(v) for v in rng.integers(0, hw.n_cores, 2))
        kind = rng.integers(0, 3)
        if kind == 1:
            a = hw.input_core
        elif kind == 2 and ev.graph.n_parts > 1:
            a, b = (int(ev.core_of_part[p]) for p in rng.choice(ev.graph.n_parts, 2, False))
        out = ev.swap_cores(a, b)
    return out


@settings(max_examples=60, deadline=None)
@given(
    preset=st.sampled_from(PRESETS),
    meshes=st.sampled_from([None, 1, 2, 3]),
    routing=st.sampled_from([None, "xy", "yx", "o1turn"]),
    multicast=st.booleans(),
    seed=st.integers(0, 2**32 - 1),
    n_swaps=st.integers(1, 40),
)
def test_swaps_equal_a_full_evaluation_on_every_preset(
    preset, meshes, routing, multicast, seed, n_swaps
):
    rng = np.random.default_rng(seed)
    hw = variant(load_hardware(preset), meshes, routing)
    network, partition, placement = random_mapping(rng, hw, n_neurons=80)
    ev = Evaluator(network, hw, partition, placement, check=False, multicast=multicast)
    latency, energy = random_swaps(rng, ev, n_swaps)
    assert_equal_to_fresh(ev, latency, energy)


@pytest.mark.parametrize("preset", PRESETS)
@pytest.mark.parametrize("multicast", [False, True], ids=["unicast", "multicast"])
def test_each_preset_as_shipped(preset, multicast):
    """Each preset as it ships (Loihi 2: two meshes; mosaic: multicast), a random network
    over many cores, and one full check after every swap."""
    rng = np.random.default_rng(PRESETS.index(preset))
    hw = load_hardware(preset)
    network, partition, placement = random_mapping(rng, hw, n_neurons=300, fan_out=20)
    ev = Evaluator(network, hw, partition, placement, check=False, multicast=multicast)
    for _ in range(15):
        assert_equal_to_fresh(ev, *random_swaps(rng, ev, 1))


def test_swaps_across_chips_load_the_off_chip_links_exactly():
    """On eight Loihi 2 chips, moving a layer's cores to other chips loads off-chip links:
    the incremental loads of those links equal a full evaluation's, and are not zero."""
    net = load_network_spec("sparse-mlp-1")
    hw = load_hardware("loihi2-x8")
    part = make_partition(net, hw, "min+2")
    place = make_placement(partition_graph(net, hw, part), hw, "packed-row")
    for multicast in (False, True):
        ev = Evaluator(net, hw, part, place, multicast=multicast)
        rng = np.random.default_rng(5)
        for p in range(0, part.n_parts, 3):  # a third of the cores to random free slots
            free = np.flatnonzero(ev.part_of_core < 0)
            latency, energy = ev.swap_cores(int(ev.core_of_part[p]), int(rng.choice(free)))
        off = hw.link_table["kind"] == OFF_CHIP
        assert ev.loads[off].sum() > 0
        assert_equal_to_fresh(ev, latency, energy)


@pytest.mark.parametrize("multicast", [False, True], ids=["unicast", "multicast"])
def test_loihi2s_two_meshes_on_the_demo(multicast):
    """sparse-mlp-1 on Loihi 2 (two meshes): 200 random swaps, checked at the end and the
    loads of each mesh taken apart as the hardware's rule (the source core's slot) says."""
    net = load_network_spec("sparse-mlp-1")
    hw = load_hardware("loihi2")
    part = make_partition(net, hw, "min+2")
    place = make_placement(partition_graph(net, hw, part), hw, "random")
    ev = Evaluator(net, hw, part, place, multicast=multicast)
    rng = np.random.default_rng(9)
    latency, energy = random_swaps(rng, ev, 200)
    assert_equal_to_fresh(ev, latency, energy)
    for mesh in range(2):
        np.testing.assert_array_equal(ev._per_mesh[mesh], ev._mesh_loads(ev._core_ext, mesh))
    assert (ev._per_mesh > 0).sum(axis=1).min() > 0  # both meshes carry messages


@pytest.mark.parametrize("preset", ["loihi2", "loihi2-x8", "hypergraph-small"])
@pytest.mark.parametrize("meshes", [1, 2])
def test_the_summary_times_the_busiest_mesh_and_counts_every_message(preset, meshes):
    """``mesh_summary`` of random loads on every link of every mesh: the link term is the
    largest load of one mesh on one link times that link's µs per message, the routing
    energy every mesh's messages on every link times that link's energy (link by link, in
    numpy)."""
    rng = np.random.default_rng(meshes)
    hw = variant(load_hardware(preset), meshes)
    network, partition, placement = random_mapping(rng, hw)
    ev = Evaluator(network, hw, partition, placement, check=False)
    for _ in range(5):
        per_mesh = rng.integers(0, 2**40, size=(meshes, hw.n_link_ids))
        per_mesh[:, hw.link_table["kind"] < 0] = 0  # (edge slots lead nowhere)
        link_us, routing_uj = mesh_summary(per_mesh, ev._slot_kind, *ev._kind_factors)
        assert link_us == (per_mesh.max(axis=0) * ev._us_per_fixed).max()
        assert routing_uj == pytest.approx(
            (per_mesh.sum(axis=0) * ev._energy_per_fixed).sum(), rel=1e-12
        )
        busiest = np.unravel_index(np.argmax(per_mesh * ev._us_per_fixed), per_mesh.shape)
        per_mesh[busiest] = 0  # the next busiest now bounds it
        assert mesh_summary(per_mesh, ev._slot_kind, *ev._kind_factors)[0] < link_us
    # a spike of load on any one link, the first and last of each kind among them, bounds it
    kind = hw.link_table["kind"]
    ends = [np.flatnonzero(kind == k)[[0, -1]] for k in np.unique(kind[kind >= 0])]
    for link in [*np.concatenate(ends), *rng.choice(np.flatnonzero(kind >= 0), 20)]:
        per_mesh = rng.integers(0, 2**20, size=(meshes, hw.n_link_ids))
        per_mesh[:, kind < 0] = 0
        per_mesh[rng.integers(meshes), link] = 2**50
        link_us, _ = mesh_summary(per_mesh, ev._slot_kind, *ev._kind_factors)
        assert link_us == 2**50 * ev._us_per_fixed[link]
