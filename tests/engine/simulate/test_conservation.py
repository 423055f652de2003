"""The cycle-level simulator loses nothing, duplicates nothing, routes by dimension order and
never hangs: every flit injected is ejected exactly once (synthetic runs drained to the
last flit, and a mapping's step), every router link carries exactly the flits of the
X-then-Y (or Y-then-X) routes of the packets that were sent, a network that cannot drain
fails with ``SimulationError`` naming its routers, and a run is a function of its seed.

The expected counts are derived here from the packet tables (source, destination, size)
by walking each route by hand, not from the simulator's own counters.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from engine.errors import EvaluatorError, MeshScopeError
from engine.hardware import CORE_TO_ROUTER, ROUTER_TO_CORE, NocConstants, load_hardware
from engine.pipeline import build_mapping
from engine.simulate import (
    Machine,
    SimulationError,
    SyntheticRun,
    Topology,
    draw_spikes,
    run_synthetic,
    simulate_step,
)
from engine.simulate import records as F  # noqa: N812 - the kernel's fields and layout

# ------------------------------------------------------------------ routes by hand


def dor_router_loads(width, height, src, dst, weight, *, yx=False) -> np.ndarray:
    """Per router-link slot ``4 · router + direction`` (E, W, S, N) the summed ``weight`` of
    the dimension-order routes from router ``src[k]`` to router ``dst[k]`` (routers
    numbered ``y · width + x``): X then Y, or Y then X with ``yx``."""
    loads = np.zeros(4 * width * height)
    src, dst = np.asarray(src, dtype=np.int64), np.asarray(dst, dtype=np.int64)
    weight = np.broadcast_to(np.asarray(weight, dtype=float), src.shape)
    sx, sy, dx, dy = src % width, src // width, dst % width, dst // width

    def leg_x(x0, x1, row):
        step = np.sign(x1 - x0)
        port = np.where(step > 0, 0, 1)  # E, W
        for k in range(width - 1):
            on = k < np.abs(x1 - x0)
            at = 4 * (row * width + x0 + k * step) + port
            np.add.at(loads, at[on], weight[on])

    def leg_y(y0, y1, col):
        step = np.sign(y1 - y0)
        port = np.where(step > 0, 2, 3)  # S, N
        for k in range(height - 1):
            on = k < np.abs(y1 - y0)
            at = 4 * ((y0 + k * step) * width + col) + port
            np.add.at(loads, at[on], weight[on])

    if yx:
        leg_y(sy, dy, sx)
        leg_x(sx, dx, dy)
    else:
        leg_x(sx, dx, sy)
        leg_y(sy, dy, dx)
    return loads


def test_the_route_walker_by_hand():
    """The oracle itself: on a 3×2 mesh, router 0 (0,0) → router 5 (2,1) crosses E at 0 and
    1, then S at 2 (XY); Y first it crosses S at 0, then E at 3 and 4."""
    xy = dor_router_loads(3, 2, [0], [5], [1])
    assert np.flatnonzero(xy).tolist() == [4 * 0 + 0, 4 * 1 + 0, 4 * 2 + 2]
    yx = dor_router_loads(3, 2, [0], [5], [1], yx=True)
    assert np.flatnonzero(yx).tolist() == [4 * 0 + 2, 4 * 3 + 0, 4 * 4 + 0]
    back = dor_router_loads(3, 2, [5], [0], [2])
    assert {int(i): back[i] for i in np.flatnonzero(back)} == {
        4 * 5 + 1: 2,
        4 * 4 + 1: 2,
        4 * 3 + 3: 2,
    }


def eject_links(topo: Topology) -> np.ndarray:
    """Engine link ids of every terminal's link out of its router (topology.py's layout)."""
    return 4 * topo.n_routers + topo.n_nodes + np.arange(topo.n_nodes)


def drained(noc: NocConstants, run: SyntheticRun, seed: int = 0):
    """A synthetic run, then its sources switched off and the network run until idle."""
    res = run_synthetic(noc, run, seed=seed, keep_packets=True)
    m = res.machine
    status = m.advance(m.t + 200_000, inject_p=0.0, packet_flits=run.packet_flits,
                       stop_when_idle=True)  # fmt: skip
    return res, m, status


# ------------------------------------------------------------------ synthetic conservation
PATTERNS = ["uniform", "transpose", "tornado", "hotspot:nodes=5+10,fraction=0.5"]


@pytest.mark.parametrize("pattern", PATTERNS)
@pytest.mark.parametrize("flits", [1, 4])
@pytest.mark.parametrize("allocator", ["islip", "round-robin"])
@pytest.mark.parametrize("routing", ["xy", "yx"])
def test_every_injected_flit_is_ejected_exactly_once(pattern, flits, allocator, routing):
    noc = NocConstants(allocator=allocator, routing=routing)
    run = SyntheticRun(pattern, 4, 4, rate=0.3, packet_flits=flits, warmup=200, cycles=800)
    res, m, status = drained(noc, run, seed=3)
    assert status == F.IDLE_END
    assert m.in_flight == 0
    topo = m.topology
    pk = m.packets()
    n = m.n_packets
    assert n > 500  # enough traffic to mean something
    ids = np.arange(n)
    assert np.array_equal(pk["parent"], ids)  # unicast: no packet was split
    assert np.all(pk["size"] == flits)
    assert np.all(pk["atime"] >= 0), "a packet was never delivered"
    assert np.all(pk["itime"] >= pk["ctime"]) and np.all(pk["atime"] > pk["itime"])
    src, dst = pk["src"], m.dest[:n]
    # per terminal: what it injected and what it received, from the packet table
    inject = m.link_flits[topo.inject_link]
    eject = m.link_flits[eject_links(topo)]
    assert np.array_equal(inject, np.bincount(src, minlength=topo.n_nodes) * flits)
    assert np.array_equal(eject, np.bincount(dst, minlength=topo.n_nodes) * flits)
    assert inject.sum() == eject.sum() == n * flits
    # every router link: exactly the flits of the dimension-order routes
    walked = dor_router_loads(4, 4, topo.node_router[src], topo.node_router[dst], flits,
                              yx=routing == "yx")  # fmt: skip
    assert np.array_equal(m.link_flits[: 4 * topo.n_routers], walked.astype(np.int64))
    # each packet crossed Manhattan distance + 1 routers
    assert np.array_equal(pk["hops"], topo.hops(src, dst))


OTHER_ROUTERS = {
    "one-vc": NocConstants(vcs=1),
    "four-small-vcs": NocConstants(vcs=4, buf=2),
    "three-islip-iterations": NocConstants(alloc_iters=3),
    "slow-pipeline": NocConstants(
        routing_delay=0,
        vc_alloc_delay=2,
        sw_alloc_delay=2,
        st_delay=2,
        credit_delay=4,
        ns_latency=3,
    ),  # fmt: skip
}


@pytest.mark.parametrize("name", list(OTHER_ROUTERS))
def test_other_routers_conserve_flits_too(name):
    noc = OTHER_ROUTERS[name]
    run = SyntheticRun("uniform", 4, 4, rate=0.4, packet_flits=3, warmup=200, cycles=600)
    res, m, status = drained(noc, run, seed=2)
    assert status == F.IDLE_END and m.in_flight == 0
    topo, pk, n = m.topology, m.packets(), m.n_packets
    assert np.all(pk["atime"] >= 0)
    src, dst = pk["src"], m.dest[:n]
    assert np.array_equal(m.link_flits[eject_links(topo)], np.bincount(dst, minlength=16) * 3)
    walked = dor_router_loads(4, 4, src, dst, 3)
    assert np.array_equal(m.link_flits[: 4 * topo.n_routers], walked.astype(np.int64))


def test_the_simulators_link_ids_are_the_hardwares():
    """A step's per-link counts are read against the analytic model's loads by link id: the
    router links, each core's link into its router and its router's link to it."""
    hw = load_hardware("mesh:4x4x2@2x1")
    topo = Topology.of_hardware(hw)
    lt = hw.link_table
    assert topo.n_link_ids == hw.n_link_ids
    assert np.all(lt["kind"][topo.inject_link] == CORE_TO_ROUTER)
    assert np.array_equal(lt["core"][topo.inject_link], np.arange(hw.n_cores))
    eject = eject_links(topo)
    assert np.all(lt["kind"][eject] == ROUTER_TO_CORE)
    assert np.array_equal(lt["core"][eject], np.arange(hw.n_cores))
    ports = topo.link_id[:, :4] >= 0
    # (its two meshes: every copy's router links are copies of the engine's, by link_engine)
    assert topo.meshes == hw.links.meshes == 2 and ports.shape[0] == 2 * hw.n_routers
    ids = topo.link_engine[topo.link_id[:, :4][ports]]
    assert np.all(lt["kind"][ids] >= 0)
    assert np.array_equal(lt["dst_router"][ids], topo.nbr[:, :4][ports] % hw.n_routers)
    assert np.array_equal(lt["src_router"][ids], np.nonzero(ports)[0] % hw.n_routers)
    assert np.array_equal(topo.link_id[: hw.n_routers, :4][ports[: hw.n_routers]],
                          ids[: ids.size // 2])  # mesh 0 carries the engine's ids  # fmt: skip
    used = np.concatenate([topo.link_id[topo.link_id >= 0], topo.inject_link])
    assert np.unique(used).size == used.size and used.max() < topo.n_links  # one id a link


def test_the_drain_leaves_no_measured_packet_behind():
    """run_synthetic itself drains until every measured packet has arrived (a stable run)."""
    run = SyntheticRun("uniform", 4, 4, rate=0.2, packet_flits=2, warmup=300, cycles=1000)
    res = run_synthetic(NocConstants(), run, seed=1, keep_packets=True)
    assert res.stable and res.unfinished_packets == 0
    pk = res.machine.packets()
    measured = pk["meas"] == 1
    assert measured.sum() == res.measured_packets > 0
    assert np.all(pk["atime"][measured] >= 0)
    assert res.latency_histogram[0].sum() == res.measured_packets


# ------------------------------------------------------------------ a mapping's step
NET = "mlp:widths=256-512-256"
HW = "mesh:4x4x2@2x1"


@pytest.fixture(scope="module")
def small_mapped():
    base = load_hardware(HW)
    hw = replace(base, noc=replace(base.noc, flit_bits=32))  # one flit per 32-bit message
    one = build_mapping(NET, hw, partition="min+6", placement="random")
    # the same mapping on a router whose flits are 8 bits: 4 flits per 32-bit message
    narrow = replace(hw, noc=replace(hw.noc, flit_bits=8))
    four = build_mapping(NET, narrow, partition=one.mapping.partition, placement="random")
    return {1: one, 4: four}


@pytest.mark.parametrize("flits", [1, 4])
@pytest.mark.parametrize("mode", ["pipelined", "fall-through"])
@pytest.mark.parametrize("multicast", [False, True], ids=["unicast", "multicast"])
def test_every_message_of_a_step_is_delivered_once(small_mapped, flits, mode, multicast):
    mapped = small_mapped[flits]
    hw = mapped.hardware
    spikes = draw_spikes(mapped.network.rate, "sample", seed=5)
    msgs = mapped.graph.messages(hw.model, spikes)
    assert np.any(msgs.src < 0)  # the input layer is a spike source: it sends from the port
    cores = np.append(mapped.mapping.placement.cores, hw.input_core)  # source -1: the port
    res = simulate_step(mapped, spikes=spikes, mode=mode, multicast=multicast)
    assert res.packet_flits == flits
    assert res.machine.in_flight == 0
    # one delivery per message, to every destination core of every spike
    assert res.latency["packets"] == msgs.size > 0
    topo = res.machine.topology
    eject = res.link_flits[eject_links(topo)]
    assert np.array_equal(eject, np.bincount(cores[msgs.dst], minlength=hw.n_cores) * flits)
    # what the cores injected: one packet per message, or one per spike that sends
    inject = res.link_flits[topo.inject_link]
    if multicast:
        first = np.unique(msgs.neuron, return_index=True)[1]
        sent_by = cores[msgs.src[first]]
        assert res.messages == first.size
    else:
        sent_by = cores[msgs.src]
        assert res.messages == msgs.size
    assert np.array_equal(inject, np.bincount(sent_by, minlength=hw.n_cores) * flits)
    assert inject.sum() == res.flits == res.messages * flits
    # nothing left undelivered or unprocessed
    pk = res.machine.packets()
    leaf = pk["hi"] - pk["lo"] == 1
    assert np.all(pk["atime"][leaf] >= 0) and np.all(pk["done"][leaf] >= pk["atime"][leaf])
    assert res.spikes == int(spikes.sum())


# ------------------------------------------------------------------ the watchdog
def test_a_network_that_cannot_drain_fails_naming_its_stuck_routers():
    """Eight cores send to the core of the middle router of a 3×3 mesh, whose server takes
    10^12 cycles per message (sink mode 1, the step's core servers): its buffers never
    free, the senders' flits stop where they are, and the run must stop with an error
    that names the routers holding flits after ``watchdog`` idle cycles, not spin on."""
    noc = NocConstants()
    topo = Topology.mesh(3, 3, noc)
    src = np.repeat([0, 1, 2, 3, 5, 6, 7, 8], 40)
    dst = np.full(src.size, 4)
    m = Machine(topo, noc, sink_mode=1, dest=dst, watchdog=500)
    idx = np.arange(src.size)
    m.load_packets(src, idx, idx + 1, 4, service=np.full(src.size, 10**12))
    with pytest.raises(SimulationError) as err:
        m.advance(10**7, stop_when_idle=True)
    assert isinstance(err.value, EvaluatorError) and isinstance(err.value, MeshScopeError)
    text = str(err.value)
    assert "deadlock" in text and "500 cycles" in text
    assert "(1,1)" in text  # the router of the core that never drains
    assert m.t < 5000  # it stopped soon after the watchdog's 500 cycles, not at 10^7
    # the routers it names are the ones that hold flits
    held = m.router_records("ovc", topo.n_ports * noc.vcs, F.N_VC)[:, :, F.VC_N].sum(axis=1)
    for r in np.flatnonzero(held > 0).tolist():
        assert f"({r % 3},{r // 3})" in text


# ------------------------------------------------------------------ determinism
def test_a_synthetic_run_is_a_function_of_its_seed():
    run = SyntheticRun("uniform", 4, 4, rate=0.25, packet_flits=2, warmup=200, cycles=600)
    a = run_synthetic(NocConstants(), run, seed=7, keep_packets=True)
    b = run_synthetic(NocConstants(), run, seed=7, keep_packets=True)
    c = run_synthetic(NocConstants(), run, seed=8, keep_packets=True)
    pa, pb, pc = a.machine.packets(), b.machine.packets(), c.machine.packets()
    assert pa.keys() == pb.keys()
    for key in pa:
        assert np.array_equal(pa[key], pb[key]), key
    assert np.array_equal(a.link_flits, b.link_flits)
    assert a.to_dict() | {"wall_s": 0, "cycles_per_s": 0, "flits_per_s": 0} == b.to_dict() | {
        "wall_s": 0, "cycles_per_s": 0, "flits_per_s": 0,
    }  # fmt: skip
    n = min(pa["ctime"].size, pc["ctime"].size)
    assert not np.array_equal(a.link_flits, c.link_flits)
    assert not (
        np.array_equal(pa["ctime"][:n], pc["ctime"][:n])
        and np.array_equal(a.machine.dest[:n], c.machine.dest[:n])
    )


def test_a_step_is_a_function_of_its_seed(small_mapped):
    mapped = small_mapped[1]
    a = simulate_step(mapped, spikes="sample", seed=11)
    b = simulate_step(mapped, spikes="sample", seed=11)
    c = simulate_step(mapped, spikes="sample", seed=12)
    for key, value in a.machine.packets().items():
        assert np.array_equal(value, b.machine.packets()[key]), key
    assert np.array_equal(a.link_flits, b.link_flits)
    assert a.step_cycles == b.step_cycles and a.latency == b.latency
    assert not np.array_equal(a.link_flits, c.link_flits)  # other spikes, other traffic
    # given the spikes, the seed changes nothing: a step has no other randomness
    spikes = draw_spikes(mapped.network.rate, "sample", seed=11)
    d = simulate_step(mapped, spikes=spikes, seed=99)
    assert np.array_equal(a.link_flits, d.link_flits) and a.step_cycles == d.step_cycles


def test_draw_spikes_sample_and_expected():
    rate = np.random.default_rng(0).random(5000) * 0.5
    a = draw_spikes(rate, "sample", seed=3)
    assert np.array_equal(a, draw_spikes(rate, "sample", seed=3))
    assert not np.array_equal(a, draw_spikes(rate, "sample", seed=4))
    assert abs(a.sum() - rate.sum()) < 4 * np.sqrt(rate.sum())
    e = draw_spikes(rate, "expected")
    # systematic sampling: every prefix holds the floor of its expected spikes
    assert np.array_equal(np.cumsum(e), np.floor(np.cumsum(rate) + 1e-9).astype(int))


def test_a_lost_credit_fails_naming_the_router_at_once():
    """A router that has lost every credit of one ejection port can never send there again:
    its flits stay put, and the run fails saying where they are rather than spinning."""
    noc = NocConstants()
    topo = Topology.mesh(4, 4, noc)
    n = 30
    machine = Machine(topo, noc, dest=np.full(n, 10), packets=256)
    machine.load_packets(np.arange(n) % 8, np.arange(n), np.arange(n) + 1, 2)
    credits = machine.router_records("oov", topo.n_ports * noc.vcs, F.N_OV)
    port = topo.node_port[10]
    credits[10, port * noc.vcs : (port + 1) * noc.vcs, F.OV_CREDITS] = 0  # lost in a fault
    with pytest.raises(SimulationError, match=r"deadlocked at cycle \d+.*\(2,2\)"):
        machine.advance(10**7, stop_when_idle=True)
    assert machine.t < 10**5  # it gave up at once, it did not run to the limit


def test_the_first_release_group_must_open_at_a_cycle():
    noc = NocConstants()
    machine = Machine(Topology.mesh(2, 2, noc), noc, dest=np.arange(2), packets=64)
    with pytest.raises(ValueError, match="group 0"):
        machine.load_packets(np.arange(2), np.arange(2), np.arange(2) + 1, 1,
                             group=np.array([0, 1]), opened=np.array([-1, -1]))  # fmt: skip


def test_progress_reports_change_nothing():
    run = SyntheticRun("transpose", 4, 4, rate=0.1, warmup=1000, cycles=5000)
    seen = []
    a = run_synthetic(NocConstants(), run, seed=2, progress=seen.append, keep_packets=True)
    b = run_synthetic(NocConstants(), run, seed=2, keep_packets=True)
    assert seen == sorted(seen) and seen[-1] == 6000
    np.testing.assert_array_equal(a.machine.packets()["atime"], b.machine.packets()["atime"])
