"""Walking one packet: the tracked packet's hops follow its route (X then Y, or, routed O1TURN,
the order it drew), every cycle of its latency is either the pipeline's, a link's or a wait
with a stage, tracking leaves the run as it was, and a packet alone in the network never
waits."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest

from engine.errors import SpecError
from engine.hardware import NocConstants
from engine.pipeline import build_mapping
from engine.simulate import SyntheticRun, run_synthetic, simulate_step
from engine.simulate.walk import choose_packet, slowest_pair, walk_step, walk_synthetic

NOC = NocConstants()
BUSY = SyntheticRun("uniform", 8, 8, rate=0.3, warmup=0, cycles=1500)


@pytest.fixture(scope="module")
def busy():
    return run_synthetic(NOC, BUSY, seed=3, keep_packets=True)


def check_route(walk, width: int) -> None:
    """Hop by hop from the source's router to the destination's, X first, then Y (Y first
    for a packet routed Y then X)."""
    at = list(divmod(walk.src, width)[::-1])
    to = divmod(walk.dst, width)[::-1]
    route = [tuple(at)]
    for axis in (1, 0) if walk.route == "yx" else (0, 1):
        while at[axis] != to[axis]:
            at[axis] += 1 if to[axis] > at[axis] else -1
            route.append(tuple(at))
    assert [h.router for h in walk.hops] == route
    assert walk.hops[0].came_from == "core" and walk.hops[-1].out == "core"


def check_accounted(walk, noc: NocConstants = NOC) -> None:
    """Every cycle of the packet's latency has a reason. On a mesh of one-cycle links: a
    router holds a head for the pipeline's cycles plus its waits, and each wait is what the
    kernel saw — output VCs held or allocations lost (``vc_alloc_delay`` cycles each), no
    credit or switch allocations lost (``sw_alloc_delay`` cycles each); links take their
    traversal and latency; so the latency beyond the zero-load one is the source queue's
    wait, the routers' waits and the tail's lag behind the head."""
    link = noc.st_delay + 1 + 1  # traversal, a link of one cycle, the read
    for h, nxt in zip(walk.hops, walk.hops[1:] + (None,), strict=True):
        assert min(h.behind, h.vc_alloc, h.switch, h.vc_busy, h.no_credit, h.body) >= 0, h
        assert h.vc_alloc == h.vc_busy + noc.vc_alloc_delay * h.vc_lost, h
        assert (
            h.switch
            == h.no_credit + noc.sw_alloc_delay * h.switch_lost
            == (h.no_credit + h.lost_cycles)
        ), h
        assert h.ready - h.arrive == noc.routing_delay + h.behind
        assert h.head_out - h.arrive == walk.pipeline + h.waited
        assert h.link == link
        if nxt is not None:
            assert nxt.arrive == h.head_out + h.link
    assert walk.hops[0].arrive - walk.injected == 1 + 1  # the core's link, then the read
    assert walk.arrived == walk.hops[-1].tail_out + walk.hops[-1].link
    assert walk.latency - walk.zero_load == (
        walk.at_source + sum(h.waited for h in walk.hops) + walk.tail_lag
    )


def test_the_slowest_packet_of_a_busy_mesh_is_walked_hop_by_hop(busy):
    src, dst = slowest_pair(busy.machine)
    walk = walk_synthetic(NOC, BUSY, src, dst, seed=3, first=busy)
    check_route(walk, 8)
    check_accounted(walk)
    pk = busy.machine.packets()
    assert walk.latency == int(pk["atime"][walk.record] - pk["ctime"][walk.record])
    slowest = (pk["atime"] - pk["ctime"])[pk["atime"] >= 0].max()
    assert walk.latency == slowest
    assert sum(h.waited for h in walk.hops) + walk.at_source > 0
    reasons = [r for h in walk.hops for r in h.reasons()]
    assert reasons and all(isinstance(r, str) for r in reasons)
    json.dumps(walk.to_dict())  # a script's JSON


def test_o1turn_packets_are_walked_along_the_order_they_drew():
    """Routed O1TURN, the walked packets of a busy mesh follow their own orders (both occur),
    their waits still add up, and tracking one leaves the run as it was."""
    noc = replace(NOC, routing="o1turn")
    first = run_synthetic(noc, BUSY, seed=4, keep_packets=True)
    pk = first.machine.packets()
    turn = np.flatnonzero(
        (pk["atime"] >= 0)
        & (pk["src"] % 8 != first.machine.dest[: pk["src"].size] % 8)
        & (pk["src"] // 8 != first.machine.dest[: pk["src"].size] // 8)
    )
    routes = set()
    for j in turn[:40:5].tolist():
        src, dst = int(pk["src"][j]), int(first.machine.dest[j])
        walk = walk_synthetic(noc, BUSY, src, dst, which="first", seed=4, first=first)
        check_route(walk, 8)
        check_accounted(walk, noc)
        routes.add(walk.route)
    assert routes == {"xy", "yx"}
    assert any("Y then X" in s for s in walk.sentences()) == (walk.route == "yx")
    tracked = run_synthetic(noc, BUSY, seed=4, track=walk.record)
    np.testing.assert_array_equal(tracked.link_flits, first.link_flits)


def test_tracking_leaves_the_run_as_it_was(busy):
    src, dst = slowest_pair(busy.machine)
    root, _, _ = choose_packet(busy.machine, src, dst)
    tracked = run_synthetic(NOC, BUSY, seed=3, track=root)
    assert tracked.machine.hops().shape[0] > 0
    np.testing.assert_array_equal(tracked.link_flits, busy.link_flits)
    assert tracked.latency_avg == busy.latency_avg
    for cause, counts in busy.stalls.items():
        np.testing.assert_array_equal(tracked.stalls[cause], counts)


def test_a_packet_alone_never_waits():
    run = SyntheticRun("uniform", 6, 6, rate=0.002, warmup=0, cycles=3000)
    first = run_synthetic(NOC, run, seed=1, keep_packets=True)
    pk = first.machine.packets()
    far = np.flatnonzero(pk["atime"] >= 0)
    pair = max(
        ((int(pk["src"][j]), int(first.machine.dest[j])) for j in far),
        key=lambda p: abs(p[0] % 6 - p[1] % 6) + abs(p[0] // 6 - p[1] // 6),
    )
    walk = walk_synthetic(NOC, run, *pair, which="fastest", seed=1, first=first)
    check_route(walk, 6)
    check_accounted(walk)
    assert walk.latency == walk.zero_load
    assert all(h.waited == 0 and not h.reasons() for h in walk.hops)
    assert any("never waited" in s for s in walk.sentences())


def test_a_long_packet_streams_behind_its_head():
    run = SyntheticRun("transpose", 4, 4, rate=0.2, packet_flits=4, warmup=0, cycles=800)
    first = run_synthetic(NOC, run, seed=2, keep_packets=True)
    src, dst = slowest_pair(first.machine)
    walk = walk_synthetic(NOC, run, src, dst, seed=2, first=first)
    check_route(walk, 4)
    check_accounted(walk)
    assert walk.flits == 4
    assert all(h.tail_out - h.head_out >= 3 for h in walk.hops)
    assert walk.arrived >= walk.hops[-1].tail_out + walk.hops[-1].link


@pytest.mark.parametrize("flits", [1, 4])
def test_every_cycle_is_accounted_for_with_slower_routers(flits):
    """Two cycles for each pipeline stage and the credit: the waits still add up."""
    noc = replace(NOC, routing_delay=2, vc_alloc_delay=2, sw_alloc_delay=2, st_delay=2,
                  credit_delay=2)  # fmt: skip
    run = SyntheticRun("uniform", 6, 6, rate=0.3, packet_flits=flits, warmup=0, cycles=600)
    first = run_synthetic(noc, run, seed=2, keep_packets=True)
    for which in ("slowest", "median"):
        src, dst = slowest_pair(first.machine)
        walk = walk_synthetic(noc, run, src, dst, which=which, seed=2, first=first)
        check_route(walk, 6)
        check_accounted(walk, noc)
    assert walk.pipeline == 2 + 2 + 2 - 1


@pytest.mark.parametrize("multicast", [False, True])
def test_a_step_packet_is_walked_to_its_core(multicast):
    mapped = build_mapping("sparse-mlp-1", "loihi2", partition="min+2", placement="packed-row")
    first = simulate_step(mapped, multicast=multicast)
    pk = first.machine.packets()
    leaf = np.flatnonzero((pk["hi"] - pk["lo"] == 1) & (pk["atime"] >= 0))
    j = leaf[np.argmax((pk["atime"] - pk["ctime"])[leaf])]
    src, dst = int(pk["src"][j]), int(first.machine.dest[pk["lo"][j]])
    walk = walk_step(mapped, src, dst, first=first, multicast=multicast)
    assert (walk.src, walk.dst) == (src, dst)
    assert walk.latency == int(pk["atime"][j] - pk["ctime"][j])
    topo = first.machine.topology
    routers = [h.router for h in walk.hops]
    r_src, r_dst = int(topo.node_router[src]), int(topo.node_router[dst])
    assert routers[0] == (r_src % topo.width, r_src // topo.width)
    assert routers[-1] == (r_dst % topo.width, r_dst // topo.width)
    assert walk.hops[-1].out == "core"
    assert walk.at_source > 0 and walk.ahead > 0  # every layer's packets are ready at cycle 0
    assert walk.done - walk.arrived >= walk.service > 0  # cores are servers
    text = " ".join(walk.sentences())
    assert "source core" in text and "process it" in text


def test_a_pair_without_traffic_is_refused_with_a_reason(busy):
    run = SyntheticRun("transpose", 4, 4, rate=0.1, warmup=0, cycles=200)
    # (x, y) sends to (y, x) only
    machine = run_synthetic(NOC, run, seed=0, keep_packets=True).machine
    assert choose_packet(machine, 1, 4)[2] > 0
    with pytest.raises(SpecError, match=r"no packet went from router \(1,0\) to router \(2,0\) in"):
        choose_packet(machine, 1, 2)
    with pytest.raises(SpecError, match="slowest"):
        choose_packet(busy.machine, 0, 1, which="worst")
