"""The simulated router: exact zero-load latency, conservation, the watchdog, determinism,
and the reference figures of BookSim2 on an 8×8 mesh.

The BookSim2 figures (packet latency at 0.01 flits/node/cycle 33.21 cycles, saturation
0.28 on a 0.02 grid, accepted rate past saturation ≈ 0.293) are the ones its own run on
the reference configuration printed (2 VCs × 8 flits, every delay one cycle, iSLIP, DOR).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from engine.hardware import NocConstants, load_hardware
from engine.simulate import (
    Machine,
    SimulationError,
    SyntheticRun,
    Topology,
    build_pattern,
    channel_load_bound,
    run_packets,
    run_synthetic,
    sweep,
    zero_load_cycles,
)

REFERENCE = NocConstants()
BOOKSIM_ZERO_LOAD = 33.21  # packet latency at 0.01 flits/node/cycle
BOOKSIM_SATURATION = 0.28
BOOKSIM_ACCEPTED_PAST_SATURATION = 0.2929  # at an offered 0.40


# ------------------------------------------------------------------ zero load, exactly
def hand_zero_load(noc: NocConstants, hops_x: int, hops_y: int, flits: int) -> int:
    """The kernel's pipeline, added up by hand for a route on one chip: into the router
    (link latency + 1), then at every router crossed routing + VC allocation + switch
    allocation + traversal and the link it leaves by (plus one cycle to be read), then one
    switch allocation per body flit."""
    routers = hops_x + hops_y + 1
    links = hops_x * noc.ew_latency + hops_y * noc.ns_latency + noc.local_latency
    per_router = noc.routing_delay + noc.vc_alloc_delay + noc.sw_alloc_delay + noc.st_delay
    return (
        noc.local_latency
        + 1
        + routers * per_router
        + links
        + (flits - 1) * max(noc.sw_alloc_delay, 1)
    )


NOCS = {
    "reference": REFERENCE,
    "deeper": NocConstants(
        routing_delay=2, vc_alloc_delay=2, sw_alloc_delay=2, st_delay=2, credit_delay=3
    ),  # fmt: skip
    "lookahead": NocConstants(routing_delay=0, ns_latency=2, ew_latency=1, local_latency=2),
    "yx": NocConstants(routing="yx", ns_latency=3),
    "round-robin": NocConstants(allocator="round-robin", vcs=1),
}


@pytest.mark.parametrize("name", NOCS)
@pytest.mark.parametrize("flits", [1, 2, 5])
def test_a_lone_packet_takes_the_closed_form_latency_for_every_pair(name, flits):
    noc = NOCS[name]
    topo = Topology.mesh(6, 5, noc)
    n = topo.n_nodes
    src, dst = np.divmod(np.arange(n * n), n)
    expected = zero_load_cycles(topo, noc, src, dst, flits)
    # one packet at a time: each ready long after the one before has arrived
    spacing = int(expected.max()) + 10
    res = run_packets(topo, noc, src, dst, flits=flits, ready=np.arange(src.size) * spacing)
    np.testing.assert_array_equal(res.latency, expected)
    x, y = topo.node_xy
    hand = [hand_zero_load(noc, abs(x[s] - x[d]), abs(y[s] - y[d]), flits)
            for s, d in zip(src[::37], dst[::37], strict=True)]  # fmt: skip
    np.testing.assert_array_equal(expected[::37], hand)
    np.testing.assert_array_equal(res.hops, np.abs(x[src] - x[dst]) + np.abs(y[src] - y[dst]) + 1)


@pytest.mark.parametrize("routing", ["xy", "yx"])
@pytest.mark.parametrize("serialization", [2, 3, 5])
def test_the_closed_form_holds_across_slow_off_chip_links(routing, serialization):
    """Off-chip links add their latency and space the body flits; the routers behind them
    close the gaps by the head's routing and VC allocation."""
    noc = NocConstants(offchip_latency=4, offchip_serialization=serialization, routing=routing)
    hw = dataclasses.replace(load_hardware("mesh:3x2x2@2x2"), noc=noc)
    topo = Topology.of_hardware(hw)
    n = topo.n_nodes
    src, dst = np.divmod(np.arange(n * n), n)
    keep = (src % 3 == 0) | (dst % 5 == 0)
    src, dst = src[keep], dst[keep]
    for flits in (1, 3, 4):
        expected = zero_load_cycles(topo, noc, src, dst, flits)
        spacing = int(expected.max()) + 10
        res = run_packets(topo, noc, src, dst, flits=flits, ready=np.arange(src.size) * spacing)
        np.testing.assert_array_equal(res.latency, expected)


# ------------------------------------------------------------------ conservation
@pytest.mark.parametrize(
    ("pattern", "flits", "noc"),
    [
        ("uniform", 1, REFERENCE),
        ("transpose", 4, REFERENCE),
        ("hotspot:nodes=5+10,fraction=0.7", 2, NocConstants(allocator="round-robin")),
        ("uniform", 1, NocConstants(vcs=1, buf=2)),  # past saturation
        ("tornado", 3, NocConstants(routing="yx", vcs=3, buf=4)),
    ],
)
def test_every_injected_flit_is_ejected_once(pattern, flits, noc):
    run = SyntheticRun(pattern, 4, 4, rate=0.3, packet_flits=flits, warmup=500, cycles=2000,
                       drain_limit=50_000)  # fmt: skip
    res = run_synthetic(noc, run, seed=1)
    m = res.machine
    topo = m.topology
    pk = m.packets()
    roots = pk["parent"] == np.arange(pk["parent"].size)
    injected = m.link_flits[topo.inject_link].sum()  # the terminals' links into routers
    ejected = m.link_flits[4 * topo.n_routers + topo.n_nodes :].sum()  # … and out of them
    assert injected == ejected + m.in_flight  # nothing lost, nothing made up
    assert res.unfinished_packets == 0 or not res.stable  # a stable run delivered them all
    arrived = roots & (pk["atime"] >= 0)
    # each arrived packet crossed exactly the routers of its route
    x, y = topo.node_xy
    d = m.dest[np.arange(pk["src"].size)]
    manhattan = np.abs(x[pk["src"]] - x[d]) + np.abs(y[pk["src"]] - y[d])
    np.testing.assert_array_equal(pk["hops"][arrived], manhattan[arrived] + 1)
    assert m.link_flits[: 4 * topo.n_routers].sum() >= (pk["size"] * manhattan)[arrived].sum()


def test_a_drained_run_delivers_every_packet_it_injected():
    res = run_packets(
        Topology.mesh(5, 5, REFERENCE), REFERENCE,
        src=np.arange(25).repeat(20), dst=np.tile(np.arange(25), 20), flits=3,
        ready=np.tile(np.arange(20) * 2, 25),
    )  # fmt: skip
    topo = res.machine.topology
    assert np.all(res.arrived >= res.ready)
    assert res.link_flits[topo.inject_link].sum() == 500 * 3
    assert res.link_flits[4 * topo.n_routers + topo.n_nodes :].sum() == 500 * 3
    assert res.machine.in_flight == 0


# ------------------------------------------------------------------ the watchdog
def test_a_stuck_network_fails_naming_its_routers_instead_of_hanging():
    """A router that has lost every credit of one ejection port can never send there again:
    its flits stay put, and the run fails saying where they are rather than spinning."""
    from engine.simulate import kernel as K  # noqa: N812

    noc = REFERENCE
    topo = Topology.mesh(4, 4, noc)
    n = 30
    machine = Machine(topo, noc, dest=np.full(n, 10), packets=256)
    machine.load_packets(np.arange(n) % 8, np.arange(n), np.arange(n) + 1, 2)
    credits = machine.router_records(K.CF_OOV, topo.n_ports * noc.vcs, K.N_OV)
    port = topo.node_port[10]
    credits[10, port * noc.vcs : (port + 1) * noc.vcs, K.OV_CREDITS] = 0  # lost in a fault
    with pytest.raises(SimulationError, match=r"deadlocked at cycle \d+.*\(2,2\)"):
        machine.advance(10**7, stop_when_idle=True)
    assert machine.t < 10**5  # it gave up at once, it did not run to the limit


# ------------------------------------------------------------------ determinism
def test_the_same_seed_gives_the_same_run_and_another_seed_another():
    run = SyntheticRun("uniform", 4, 4, rate=0.25, packet_flits=2, warmup=300, cycles=1500)
    a, b, c = (run_synthetic(REFERENCE, run, seed=s) for s in (7, 7, 8))
    for key in ("src", "ctime", "itime", "atime", "hops"):
        np.testing.assert_array_equal(a.machine.packets()[key], b.machine.packets()[key])
    np.testing.assert_array_equal(a.link_flits, b.link_flits)
    assert a.to_dict() | {"wall_s": 0, "cycles_per_s": 0, "flits_per_s": 0} == b.to_dict() | {
        "wall_s": 0, "cycles_per_s": 0, "flits_per_s": 0,
    }  # fmt: skip
    assert not np.array_equal(a.link_flits, c.link_flits)


def test_progress_reports_change_nothing():
    run = SyntheticRun("transpose", 4, 4, rate=0.1, warmup=1000, cycles=5000)
    seen = []
    a = run_synthetic(REFERENCE, run, seed=2, progress=seen.append)
    b = run_synthetic(REFERENCE, run, seed=2)
    assert seen == sorted(seen) and seen[-1] == 6000
    np.testing.assert_array_equal(a.machine.packets()["atime"], b.machine.packets()["atime"])


# ------------------------------------------------------------------ BookSim2's figures
def test_zero_load_latency_is_within_10_percent_of_booksim2():
    res = run_synthetic(REFERENCE, SyntheticRun("uniform", 8, 8, rate=0.01), seed=0)
    assert res.stable
    assert res.latency_avg == pytest.approx(BOOKSIM_ZERO_LOAD, rel=0.10)
    assert res.latency_avg == pytest.approx(res.zero_load_latency, rel=0.02)
    assert res.accepted_flit_rate == pytest.approx(0.01, rel=0.1)


def test_saturation_is_within_10_percent_of_booksim2():
    rates = [0.04, 0.12, 0.20, 0.24, 0.28, 0.32, 0.36]
    base = SyntheticRun("uniform", 8, 8, warmup=3000, cycles=6000)
    curve = sweep(REFERENCE, base, rates, workers=2)
    assert curve.saturation_rate == pytest.approx(BOOKSIM_SATURATION, rel=0.10)
    past = run_synthetic(REFERENCE, SyntheticRun("uniform", 8, 8, rate=0.40), seed=0)
    assert not past.stable
    assert past.accepted_flit_rate == pytest.approx(BOOKSIM_ACCEPTED_PAST_SATURATION, rel=0.10)


# ------------------------------------------------------------------ the channel-load bound
def xy_links(width: int, src: int, dst: int) -> list[tuple[int, int]]:
    """The router-to-router links (router, direction E W S N) of an X-then-Y route."""
    x, y, tx, ty = src % width, src // width, dst % width, dst // width
    links = []
    while x != tx:
        links.append((y * width + x, 0 if tx > x else 1))
        x += 1 if tx > x else -1
    while y != ty:
        links.append((y * width + x, 2 if ty > y else 3))
        y += 1 if ty > y else -1
    return links


@pytest.mark.parametrize("pattern", ["uniform", "hotspot:nodes=0+63"])
def test_the_average_throughput_never_exceeds_the_bound(pattern):
    """Every terminal sends everywhere (or to the hot spots), its packets in order: past
    saturation the network accepts no more than the bound, on average."""
    bound = channel_load_bound(build_pattern(pattern, 8, 8, 64), 8, 8)
    res = run_synthetic(REFERENCE, SyntheticRun(pattern, 8, 8, rate=min(1.0, 2.5 * bound),
                                                warmup=1000, cycles=3000), seed=0)  # fmt: skip
    assert res.accepted_flit_rate <= bound * 1.03


@pytest.mark.parametrize("pattern", ["transpose", "bitcomp", "tornado", "shuffle", "neighbor"])
def test_the_flows_through_the_busiest_channel_share_it(pattern):
    """A permutation past saturation: the flows through its busiest channel together get
    at most that channel (so none can have the bound's rate more than its share), however
    much faster the others go."""
    pat = build_pattern(pattern, 8, 8, 64)
    bound = channel_load_bound(pat, 8, 8)
    res = run_synthetic(REFERENCE, SyntheticRun(pattern, 8, 8, rate=min(1.0, 2 * bound),
                                                warmup=1000, cycles=4000), seed=0)  # fmt: skip
    load: dict = {}
    for s, d in enumerate(pat.perm.tolist()):
        for link in xy_links(8, s, d):
            load.setdefault(link, []).append(d)
    busiest = max(load.values(), key=len)
    assert len(busiest) == pytest.approx(1 / bound)  # the bound is that channel's flows
    accepted = res.machine.accepted_flits / 4000  # per destination = per flow
    assert accepted[busiest].sum() <= 1.03  # one flit per cycle


def test_the_bound_of_a_few_patterns_by_hand():
    for k in (4, 6, 8):
        assert channel_load_bound(build_pattern("uniform", k, k, k * k), k, k) == pytest.approx(
            4 / k
        )
    # tornado on 8 × 8 moves 3 columns on: 3 flows share the busiest row channel
    assert channel_load_bound(build_pattern("tornado", 8, 8, 64), 8, 8) == pytest.approx(1 / 3)
    # transpose: row 7's sources x = 0..6 all pass its east channel into column 7
    assert channel_load_bound(build_pattern("transpose", 8, 8, 64), 8, 8) == pytest.approx(1 / 7)
    # two hot spots take half of every terminal's traffic through their ejection links
    hot = build_pattern("hotspot:nodes=0+63", 8, 8, 64)
    assert channel_load_bound(hot, 8, 8) == pytest.approx(1 / 32)
    assert channel_load_bound(build_pattern("neighbor", 8, 8, 64), 8, 8) == pytest.approx(1.0)


# ------------------------------------------------------------------ stalls
def test_stalls_gather_where_the_traffic_jams():
    hot = run_synthetic(REFERENCE, SyntheticRun("hotspot:nodes=27", 8, 8, rate=0.05,
                                                warmup=500, cycles=2000), seed=0)  # fmt: skip
    quiet = run_synthetic(REFERENCE, SyntheticRun("uniform", 8, 8, rate=0.005, warmup=500,
                                                  cycles=2000), seed=0)  # fmt: skip
    waits = sum(hot.stalls.values())
    assert sum(quiet.stalls.values()).sum() < 0.01 * waits.sum()
    # X then Y: every packet turns into the hot spot's column (x = 3) and queues along it
    busiest = np.argsort(waits)[-5:]
    assert set((busiest % 8).tolist()) == {3}, busiest
