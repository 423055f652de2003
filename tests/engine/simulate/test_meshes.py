"""Loihi 2's two parallel meshes in the simulator (``links.meshes``; Loihi 2 runtime model
Fig. 3): every mesh a copy of the router grid with links of its own, a core sending on its
mesh (``Hardware.core_table["mesh"]``: its slot's parity) and receiving from all of them.

* Two flows, from an even and an odd slot of one router to one core, share every router
  link on one mesh; on two they do not contend at all (each flow's packets arrive as when it
  is alone), finish in about half the cycles, each mesh's links carry one of them and the
  destination core receives from both meshes.
* A mapping's step carries, link for link, the same flits on two meshes as on one (the
  engine's link ids sum the meshes), a link-bound step is faster on two, and a core's one
  server takes the messages of both meshes one after another.
* Copies that carry nothing change nothing (one core per router: every core on mesh 0), a
  lone packet on either mesh takes the zero-load latency, and hardware with one mesh is
  simulated exactly as before the meshes came (figures recorded then).
* Traces, link figures, walks and the BookSim2/Noxim files see the one grid.
"""

from __future__ import annotations

from dataclasses import replace
from functools import cache

import numpy as np
import pytest

from engine.hardware import NocConstants, load_hardware
from engine.pipeline import build_mapping
from engine.simulate import (
    SyntheticRun,
    Topology,
    booksim_files,
    draw_spikes,
    noxim_table,
    run_packets,
    run_synthetic,
    simulate_step,
    zero_load_cycles,
)
from engine.simulate.walk import walk_step

# Loihi 2's router (the preset's [noc]) written out, so the recorded figures keep their meaning
NOC = NocConstants(routing_delay=0, ns_latency=3, offchip_latency=7, offchip_serialization=4)


def one_mesh(hw):
    return replace(hw, links=replace(hw.links, meshes=1))


@cache
def row():
    """4 × 1 routers, 2 cores each (core = 2 · x + slot): slot 0 on mesh 0, slot 1 on mesh 1."""
    return replace(load_hardware("mesh:4x1x2"), noc=NOC)


def flows(hw, packets=100, flits=4, sources=(0, 1)):
    """``packets`` packets from each of ``sources`` to core 6 (router 3), all ready at 0."""
    src = np.repeat(sources, packets)
    return run_packets(Topology.of_hardware(hw), hw.noc, src, np.full(src.size, 6), flits=flits)


# ------------------------------------------------------------------ two flows, two meshes
def test_an_even_and_an_odd_slot_do_not_contend_on_two_meshes():
    hw = row()
    assert hw.links.meshes == 2 and hw.core_table["mesh"][[0, 1, 6]].tolist() == [0, 1, 0]
    two, one = flows(hw), flows(one_mesh(hw))
    # one mesh: 800 flits through the links east of routers 0, 1 and 2, one a cycle
    assert one.cycles >= 800
    assert two.cycles < 0.6 * one.cycles
    # two meshes: each flow arrives as it does alone (no cycle lost to the other)
    for k, core in enumerate((0, 1)):
        alone = flows(hw, sources=(core,))
        np.testing.assert_array_equal(two.arrived[100 * k : 100 * (k + 1)], alone.arrived)
        assert alone.cycles < 0.6 * one.cycles
    # the same flits on every link, summed over the meshes
    np.testing.assert_array_equal(two.link_flits, one.link_flits)
    east = [4 * r for r in range(3)]
    assert two.link_flits[east].tolist() == [800, 800, 800]


def test_each_mesh_carries_its_slots_flow_and_the_core_receives_from_both():
    hw = row()
    res = flows(hw)
    topo = res.machine.topology
    per_mesh = topo.mesh_links(res.machine.link_flits)
    assert per_mesh.shape == (2, hw.n_link_ids)
    np.testing.assert_array_equal(per_mesh.sum(axis=0), res.link_flits)
    east = [4 * r for r in range(3)]
    assert per_mesh[:, east].tolist() == [[400] * 3, [400] * 3]  # each mesh one flow
    inject = 4 * hw.n_routers + np.array([0, 1])
    assert per_mesh[:, inject].tolist() == [[400, 0], [0, 400]]  # each core on its mesh
    eject = 4 * hw.n_routers + hw.n_cores + 6
    assert per_mesh[:, eject].tolist() == [400, 400]  # core 6 receives from both meshes
    assert np.all(res.arrived >= 0)
    # the simulated routers: a copy per mesh, mesh 1's injecting from core 1's router there
    assert topo.n_routers_all == 2 * hw.n_routers
    assert topo.inject_router[[0, 1]].tolist() == [0, hw.n_routers]


# ------------------------------------------------------------------ a mapping's step
@cache
def mlp(meshes: int = 2):
    """A 3-layer MLP on two 4×4 chips of 2 cores per router (both meshes in use)."""
    hw = replace(load_hardware("mesh:4x4x2@2x1"), noc=NOC)
    mapped = build_mapping("mlp:widths=256-512-256", hw, partition="min+6", placement="random")
    return mapped if meshes == 2 else replace(mapped, hardware=one_mesh(hw))


@cache
def mlp_step(meshes: int = 2, mode: str = "pipelined", window: int = 0):
    m = mlp(meshes)
    spikes = draw_spikes(m.network.rate, "sample", seed=5)
    return simulate_step(m, spikes=spikes, mode=mode, window=window)


@pytest.mark.parametrize("mode", ["pipelined", "fall-through"])
def test_a_step_carries_the_same_flits_per_link_on_two_meshes_as_on_one(mode):
    two, one = mlp_step(2, mode), mlp_step(1, mode)
    np.testing.assert_array_equal(two.link_flits, one.link_flits)
    assert two.noc_energy_uj == pytest.approx(one.noc_energy_uj)
    assert two.latency["packets"] == one.latency["packets"] == two.messages
    per_mesh = two.mesh_link_flits
    router = slice(0, 4 * two.machine.topology.n_routers)
    assert per_mesh[0, router].sum() > 0 and per_mesh[1, router].sum() > 0  # both in use
    assert np.any(per_mesh[0, router] < two.link_flits[router])


def test_a_link_bound_step_is_faster_on_two_meshes():
    """packed-col puts whole layers under few routers: link-bound on one mesh; two meshes
    halve about the load of its busiest links."""
    mapped = build_mapping("sparse-mlp-1", "loihi2", partition="min+2", placement="packed-col")
    spikes = draw_spikes(mapped.network.rate, "sample", seed=0)
    two = simulate_step(mapped, spikes=spikes)
    one = simulate_step(replace(mapped, hardware=one_mesh(mapped.hardware)), spikes=spikes)
    assert one.bound == "link"
    np.testing.assert_array_equal(two.link_flits, one.link_flits)
    assert two.mesh_link_flits.max() < one.link_flits.max()
    assert two.step_cycles < one.step_cycles


def test_a_core_serves_both_meshes_messages_one_after_another():
    res = mlp_step(2)
    hw, m = mlp(2).hardware, res.machine
    eject = 4 * hw.n_routers + hw.n_cores + np.arange(hw.n_cores)
    both = np.flatnonzero((res.mesh_link_flits[:, eject] > 0).all(axis=0))
    assert both.size > 0  # cores that receive from both meshes
    pk = m.packets()
    leaf = np.flatnonzero((pk["hi"] - pk["lo"] == 1) & (pk["done"] >= 0))
    core = m.dest[pk["lo"][leaf]]
    service = m.arrays["dsvc"][pk["lo"][leaf]]
    start, done = pk["done"][leaf] - service, pk["done"][leaf]
    assert np.all(start >= pk["atime"][leaf])  # processed once it has arrived
    for c in both.tolist():
        mine = np.flatnonzero(core == c)
        order = np.argsort(done[mine], kind="stable")
        s, d = start[mine][order], done[mine][order]
        assert np.all(s[1:] >= d[:-1]), f"core {c} served two messages at once"


def test_a_two_mesh_step_run_in_slices_is_the_step_run_at_once():
    """Routers of different meshes share their cores' servers: the step must not depend on
    where the run is cut (the cancel checks cut it every CANCEL_CHECK_CYCLES)."""

    class Never:
        def is_set(self):
            return False

    mapped = mlp(2)
    spikes = draw_spikes(mapped.network.rate, "sample", seed=5)
    whole = mlp_step(2)
    from engine.simulate import step as step_module

    cut = step_module.CANCEL_CHECK_CYCLES
    try:
        step_module.CANCEL_CHECK_CYCLES = 97  # many cuts
        sliced = simulate_step(mapped, spikes=spikes, cancel=Never())
    finally:
        step_module.CANCEL_CHECK_CYCLES = cut
    assert sliced.cycles == whole.cycles and sliced.step_cycles == whole.step_cycles
    assert sliced.latency == whole.latency
    np.testing.assert_array_equal(sliced.machine.packets()["done"], whole.machine.packets()["done"])


# ------------------------------------------------------------------ the same as before
def test_copies_that_carry_nothing_change_nothing():
    """One core per router: every core is on mesh 0, mesh 1 carries nothing, and the step is
    the one-mesh step to the cycle (though with two meshes a tail waits for its core's server
    in the kernel's ``sq`` until every mesh's router has simulated the cycle it left in)."""
    hw = replace(load_hardware("mesh:4x4@2x1"), noc=NOC)
    assert hw.links.meshes == 2 and not hw.core_table["mesh"].any()
    mapped = build_mapping("mlp:widths=256-512-256", hw, partition="min+6", placement="random")
    spikes = draw_spikes(mapped.network.rate, "sample", seed=2)
    for mode, multicast in (("pipelined", False), ("fall-through", True)):
        two = simulate_step(mapped, spikes=spikes, mode=mode, multicast=multicast, window=50)
        one = simulate_step(replace(mapped, hardware=one_mesh(hw)), spikes=spikes, mode=mode,
                            multicast=multicast, window=50)  # fmt: skip
        assert two.machine.topology.meshes == 2 and one.machine.topology.meshes == 1
        assert two.mesh_link_flits[1].sum() == 0
        assert (two.step_cycles, two.cycles, two.latency) == (one.step_cycles, one.cycles,
                                                              one.latency)  # fmt: skip
        np.testing.assert_array_equal(two.link_flits, one.link_flits)
        for k in one.stalls:
            np.testing.assert_array_equal(two.stalls[k], one.stalls[k])
        np.testing.assert_array_equal(two.trace.link_flits, one.trace.link_flits)
        np.testing.assert_array_equal(two.trace.occupancy, one.trace.occupancy)
        np.testing.assert_array_equal(two.link_figures()["busy"], one.link_figures()["busy"])


@pytest.mark.parametrize("flits", [3, 12])  # 12 > 8-flit buffers: the credit-bound latency
def test_a_lone_packet_takes_the_zero_load_latency_on_either_mesh(flits):
    hw = replace(load_hardware("mesh:4x4x2@2x1"), noc=NOC)
    topo = Topology.of_hardware(hw)
    src = np.array([1, 3, 40, 63, 0, 2])  # odd slots: mesh 1; even: mesh 0; both chips
    dst = np.array([62, 16, 5, 0, 63, 61])
    assert set(hw.core_table["mesh"][src].tolist()) == {0, 1}
    ready = np.arange(src.size) * 1000  # each alone
    res = run_packets(topo, hw.noc, src, dst, flits=flits, ready=ready)
    np.testing.assert_array_equal(res.latency, zero_load_cycles(topo, hw.noc, src, dst, flits))
    np.testing.assert_array_equal(res.hops, topo.hops(src, dst))


def test_one_mesh_is_simulated_as_before():
    """Figures recorded with the simulator of one mesh (before the meshes came): given
    packets on hardware whose [links] meshes = 1, and a synthetic run."""
    hw = replace(load_hardware("mesh:4x4x2@2x1"), noc=NOC)
    hw = one_mesh(hw)
    rng = np.random.default_rng(7)
    n = 600
    src, dst = rng.integers(0, hw.n_cores, n), rng.integers(0, hw.n_cores, n)
    flits, ready = rng.integers(1, 5, n), rng.integers(0, 300, n)
    topo = Topology.of_hardware(hw)
    assert topo.n_links == topo.n_link_ids == hw.n_link_ids and topo.n_routers_all == 32
    res = run_packets(topo, NOC, src, dst, flits=flits, ready=ready)
    lat = res.latency
    ids = np.arange(res.link_flits.size)
    assert (res.cycles, int(lat.sum()), int(lat.max()), int(lat @ np.arange(1, n + 1))) == (
        498, 30945, 270, 9227116,
    )  # fmt: skip
    assert (int(res.link_flits.sum()), int(res.link_flits @ ids)) == (8606, 931634)
    run = SyntheticRun("uniform", 4, 4, rate=0.3, packet_flits=2, warmup=300, cycles=1000)
    syn = run_synthetic(NOC, run, seed=4)
    assert (syn.cycles, syn.latency_avg, int(syn.link_flits.sum())) == (
        2300, 20.463798096814234, 48800,
    )  # fmt: skip


# ------------------------------------------------------------------ one grid for the readers
def test_a_two_mesh_trace_folds_onto_the_grid():
    res = mlp_step(2, window=64)
    trace, m = res.trace, res.machine
    topo = m.topology
    n = trace.n_windows
    raw_links, raw_ports = m.arrays["win_link"][:n], m.arrays["win_occ"][:n]
    assert raw_ports.shape[1] == 2 * topo.n_routers * topo.n_ports
    assert trace.meta["meshes"] == 2
    assert trace.occupancy.shape == (n, topo.n_routers * topo.n_ports)  # one W × H grid
    np.testing.assert_array_equal(trace.occupancy, raw_ports.reshape(n, 2, -1).max(axis=1))
    np.testing.assert_array_equal(trace.link_flits.sum(axis=0), res.link_flits)
    per_mesh = topo.mesh_links(raw_links)
    np.testing.assert_array_equal(trace.link_busiest, per_mesh.max(axis=0))
    assert np.any(trace.link_busiest < trace.link_flits)  # both meshes on some link at once
    k = int(np.argmax(trace.link_flits.sum(axis=1)))
    live = trace.link_capacity > 0
    share = trace.link_busiest[k][live] / (64 * trace.link_capacity[live])
    np.testing.assert_allclose(trace.utilization(k)[live], share)
    figures = res.link_figures()
    peak = raw_ports.reshape(n, 2, -1).max(axis=(0, 1))
    feeds = topo.link_input
    np.testing.assert_array_equal(figures["buffer"], np.where(feeds >= 0, peak[feeds], -1))
    assert len(res.stalls["vc_busy"]) == topo.n_routers


def test_a_walk_on_mesh_one_names_grid_routers():
    mapped = mlp(2)
    hw = mapped.hardware
    first = mlp_step(2)
    pk = first.machine.packets()
    leaf = np.flatnonzero((pk["hi"] - pk["lo"] == 1) & (pk["atime"] >= 0))
    odd = leaf[hw.core_table["mesh"][pk["src"][leaf]] == 1]
    j = odd[np.argmax(pk["hops"][odd])]  # the longest route on mesh 1
    src, dst = int(pk["src"][j]), int(first.machine.dest[pk["lo"][j]])
    spikes = draw_spikes(mapped.network.rate, "sample", seed=5)
    walk = walk_step(mapped, src, dst, first=first, spikes=spikes)
    ct = hw.core_table
    assert walk.hops[0].router == (ct["gx"][src], ct["gy"][src])
    assert walk.hops[-1].router == (ct["gx"][dst], ct["gy"][dst])
    assert len(walk.hops) == int(pk["hops"][j]) > 1
    assert walk.latency >= walk.zero_load


def test_exports_of_two_meshes_say_they_are_one(tmp_path):
    res, hw = mlp_step(2), mlp(2).hardware
    cfg = booksim_files(res, hw, tmp_path / "two")[1].read_text()
    assert "2 parallel meshes" in cfg and all(
        line.startswith("//") for line in cfg.splitlines() if "mesh" in line.lower()
    )
    assert "parallel meshes" in noxim_table(res, tmp_path / "two.txt").read_text()
    one = mlp_step(1)
    assert "parallel" not in booksim_files(one, one_mesh(hw), tmp_path / "one")[1].read_text()
    assert "parallel" not in noxim_table(one, tmp_path / "one.txt").read_text()
