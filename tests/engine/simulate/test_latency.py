"""Latency and throughput of the simulated router against arithmetic and against BookSim2.

* A lone packet takes exactly the closed-form zero-load latency (``zero_load_cycles``) for
  every source and destination of a 6×5 mesh, 1-, 2- and 5-flit packets, the reference
  router and routers with other delays, link latencies, allocators and routing; and
  ``zero_load_cycles`` itself equals the pipeline added up by hand.
* On BookSim2's reference configuration (8×8, 2 VCs × 8 flits, every delay 1, iSLIP, DOR,
  uniform 1-flit packets) the zero-load latency, the accepted rate past saturation and the
  saturation point of a sweep are within 10 % of the figures BookSim2 printed on that
  configuration (README, *Simulating the mesh*); routed O1TURN, as BookSim2's xy_yx_mesh,
  uniform and transpose traffic are within 3 % (zero-load) and 0.02 flits/node/cycle
  (saturation) of it. A lone packet routed either way takes its order's zero-load latency,
  and O1TURN keeps each order on its half of the virtual channels.
* No pattern's accepted throughput exceeds its channel-load bound once offered more, and a
  run offered more than the bound is never stable.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from engine.errors import SpecError
from engine.hardware import NocConstants, load_hardware
from engine.hardware.routing import XY, YX
from engine.simulate import (
    SyntheticRun,
    Topology,
    build_pattern,
    channel_load_bound,
    run_packets,
    run_synthetic,
    sweep,
    zero_load_cycles,
)

REFERENCE = NocConstants()  # BookSim2's reference configuration
SPACING = 500  # cycles between two lone packets: each is alone in the mesh


def lone_packets(topo: Topology, noc: NocConstants, src, dst, flits, order=None):
    """Every packet ``src[k] → dst[k]`` alone in the mesh (routed in ``order[k]``): released
    ``SPACING`` cycles after the one before, long after it and its credits are gone. Returns
    (latency, hops)."""
    src, dst = np.asarray(src), np.asarray(dst)
    ready = np.arange(src.size) * SPACING
    res = run_packets(topo, noc, src, dst, flits=flits, ready=ready, order=order)
    assert np.array_equal(res.ready, ready)
    assert res.cycles < (src.size + 1) * SPACING  # every packet was done before the next
    return res.latency, res.hops


def all_pairs(n: int) -> tuple[np.ndarray, np.ndarray]:
    return np.repeat(np.arange(n), n), np.tile(np.arange(n), n)


# ------------------------------------------------------------------ the closed form, by hand
def test_zero_load_cycles_by_hand_on_the_reference_router():
    """The kernel's pipeline: the flit reaches its router after the core link's latency and
    one cycle to be read; at each router crossed routing + VC allocation + switch
    allocation + switch traversal (1 + 1 + 1 + 1), then the latency of the link it leaves by
    (router links 1, the last one to the core 1); then one cycle per body flit."""
    noc = REFERENCE
    topo = Topology.mesh(6, 5, noc)
    # (0,0) → (5,4): 5 + 4 router links, 10 routers
    #   1 + 1 (into the first router) + 10 × 4 (routers) + 9 × 1 (router links) + 1 (to the core)
    assert zero_load_cycles(topo, noc, 0, 29, 1) == 1 + 1 + 10 * 4 + 9 * 1 + 1 == 52
    # … with 5 flits, four body flits one cycle apart
    assert zero_load_cycles(topo, noc, 0, 29, 5) == 52 + 4 == 56
    # to itself: one router, no router link
    assert zero_load_cycles(topo, noc, 7, 7, 1) == 1 + 1 + 4 + 0 + 1 == 7
    # (2,3) → (2,1): two hops north, three routers
    assert zero_load_cycles(topo, noc, 20, 8, 2) == 1 + 1 + 3 * 4 + 2 * 1 + 1 + 1 == 18


def test_zero_load_cycles_by_hand_on_a_deeper_router():
    """routing 2, VC allocation 2, switch allocation 1, traversal 1: 6 cycles a router;
    E-W links 1, N-S links 2, core links 3; credits (3 cycles) do not slow a lone packet
    that fits its buffers."""
    noc = NocConstants(routing_delay=2, vc_alloc_delay=2, credit_delay=3, ew_latency=1,
                       ns_latency=2, local_latency=3)  # fmt: skip
    topo = Topology.mesh(6, 5, noc)
    # (1,1) → (4,3): 3 E-W links, 2 N-S links, 6 routers, 5 flits
    #   3 + 1 (into the router) + 6 × 6 + (3 × 1 + 2 × 2) + 3 (to the core) + 4 (body)
    assert zero_load_cycles(topo, noc, 7, 22, 5) == 3 + 1 + 36 + 7 + 3 + 4 == 54
    # (5,0) → (0,0): 5 links west, 6 routers, 1 flit
    assert zero_load_cycles(topo, noc, 5, 0, 1) == 3 + 1 + 36 + 5 + 3 == 48
    lat, _ = lone_packets(topo, noc, [7, 5], [22, 0], [5, 1])
    assert lat.tolist() == [54, 48]


# ------------------------------------------------------------------ the closed form, simulated
NOCS = {
    "reference": REFERENCE,
    "routing-0": NocConstants(routing_delay=0),
    "routing-2": NocConstants(routing_delay=2, vc_alloc_delay=2, credit_delay=3, ns_latency=2),
    "slow-switch": NocConstants(sw_alloc_delay=2, st_delay=2, local_latency=2),
    "yx-round-robin": NocConstants(routing="yx", allocator="round-robin", ew_latency=3),
    "one-vc": NocConstants(vcs=1, ns_latency=2),
}


@pytest.mark.parametrize("flits", [1, 2, 5])
@pytest.mark.parametrize("name", list(NOCS))
def test_a_lone_packet_takes_the_zero_load_latency_for_every_pair(name, flits):
    noc = NOCS[name]
    topo = Topology.mesh(6, 5, noc)
    src, dst = all_pairs(topo.n_nodes)
    lat, hops = lone_packets(topo, noc, src, dst, flits)
    assert np.array_equal(hops, topo.hops(src, dst))
    assert set(hops.tolist()) == set(range(1, 6 + 5))  # every hop count, 1 to 10 routers
    assert np.array_equal(lat, zero_load_cycles(topo, noc, src, dst, flits))


@pytest.mark.parametrize("flits", [1, 2, 5])
def test_a_lone_o1turn_packet_takes_the_zero_load_latency_of_its_order(flits):
    """O1TURN, every pair in both orders (on the order's VCs), with slower N-S links than E-W
    ones: the closed form of each packet's own order; and without an order, the closed form
    is the mean of both orders'."""
    noc = NocConstants(routing="o1turn", ns_latency=3, routing_delay=2)
    topo = Topology.mesh(5, 4, noc)
    src, dst = all_pairs(topo.n_nodes)
    src, dst = np.tile(src, 2), np.tile(dst, 2)
    order = np.repeat([XY, YX], src.size // 2)
    lat, hops = lone_packets(topo, noc, src, dst, flits, order)
    assert np.array_equal(hops, topo.hops(src, dst))
    assert np.array_equal(lat, zero_load_cycles(topo, noc, src, dst, flits, order))
    half = src.size // 2
    np.testing.assert_array_equal(
        zero_load_cycles(topo, noc, src[:half], dst[:half], flits), (lat[:half] + lat[half:]) / 2
    )


def test_o1turn_keeps_each_order_on_its_half_of_the_vcs():
    """Router (1,0) of a 4×1 mesh: its own core's 16-flit packet B and packet A from (0,0),
    both bound for (3,0), want its east port at once. With 2 VCs, O1TURN gives X-then-Y
    packets VC 0 only: B, first, holds it until its tail has left, so B arrives at zero-load
    speed and every flit of A after B's tail. Give A the other order (VC 1; a route without
    a turn is the same either way), or route X then Y with both VCs open to every packet,
    and the two share the link flit by flit: B is slowed, A's tail comes sooner."""
    src, dst, flits = [0, 1], [3, 3], 16

    def run(routing, order):
        noc = NocConstants(routing=routing)
        topo = Topology.mesh(4, 1, noc)
        res = run_packets(topo, noc, src, dst, flits=flits, order=order)
        return res.arrived, res.latency[1] - zero_load_cycles(topo, noc, 1, 3, flits)

    arrived, b_waited = run("o1turn", [XY, XY])
    assert b_waited == 0 and arrived[0] >= arrived[1] + flits
    for routing, order in (("o1turn", [YX, XY]), ("xy", [XY, XY])):
        arrived, b_waited = run(routing, order)
        assert b_waited > 0 and arrived[0] < arrived[1] + flits, routing


@pytest.mark.parametrize("flits", [1, 5, 9])
def test_a_lone_o1turn_packet_across_serializing_off_chip_links(flits):
    """Two chips side by side and two stacked (off-chip links: latency 30, one flit every 4
    cycles; 9 flits outgrow the 8-flit buffers): where a route crosses the slow link, and how
    many routers follow it, depends on its order; the closed form follows each packet's."""
    hw = load_hardware("mesh:3x2@2x2")
    noc = replace(hw.noc, routing="o1turn", offchip_latency=30, offchip_serialization=4,
                  routing_delay=0)  # fmt: skip
    topo = Topology.of_hardware(replace(hw, noc=noc))
    src, dst = all_pairs(topo.n_nodes)
    order = np.random.default_rng(flits).integers(0, 2, src.size)
    lat, _ = lone_packets(topo, noc, src, dst, flits, order)
    assert np.array_equal(lat, zero_load_cycles(topo, noc, src, dst, flits, order))
    if flits > 1:  # (a head alone crosses the same links either way; a body is spaced out)
        xy = zero_load_cycles(topo, noc, src, dst, flits, XY)
        assert not np.array_equal(xy, zero_load_cycles(topo, noc, src, dst, flits, YX))


def test_a_lone_packet_with_several_cores_per_router():
    noc = NocConstants(ns_latency=2)
    topo = Topology.mesh(3, 2, noc, local=3)  # 18 cores, three on every router
    src, dst = all_pairs(topo.n_nodes)
    for flits in (1, 3):
        lat, _ = lone_packets(topo, noc, src, dst, flits)
        assert np.array_equal(lat, zero_load_cycles(topo, noc, src, dst, flits))


@pytest.mark.parametrize("routing", ["xy", "yx"])
def test_a_lone_packet_across_serializing_off_chip_links(routing):
    """Two 3×3 chips (off-chip links: latency 30, one flit every 4 cycles)."""
    hw = load_hardware("mesh:3x3@2x1")
    noc = replace(
        hw.noc, routing=routing, offchip_latency=30, offchip_serialization=4, ew_latency=1,
        local_latency=1, routing_delay=0,
    )  # fmt: skip
    topo = Topology.of_hardware(replace(hw, noc=noc))
    src, dst = all_pairs(topo.n_nodes)
    for flits in (1, 2, 5):
        lat, _ = lone_packets(topo, noc, src, dst, flits)
        assert np.array_equal(lat, zero_load_cycles(topo, noc, src, dst, flits))
    # by hand, core 0 at (0,0) of chip 0 → core 9 at (0,0) of chip 1 (global (3,0)), 3 links
    # east, the last one off-chip:
    #   1 + 1 + 4 routers × 3 (routing 0, VA 1, SA 1, ST 1) + (1 + 1 + 30) + 1 = 47 cycles
    # for one flit; the 4 body flits then leave the off-chip link 4 cycles apart, of which the
    # one router behind it closes the head's routing and VC allocation (0 + 1): 4·4 − 1
    assert zero_load_cycles(topo, noc, 0, 9, 1) == 1 + 1 + 4 * 3 + 32 + 1 == 47
    assert zero_load_cycles(topo, noc, 0, 9, 5) == 47 + 4 * 4 - 1 == 62


def _short_buffers():
    noc = NocConstants(buf=2, credit_delay=3)
    return Topology.mesh(4, 4, noc), noc, 5


def _two_loihi2_chips():
    hw = load_hardware("mesh:2x2@2x1")  # off-chip links: 49 cycles, one flit every 4
    return Topology.of_hardware(hw), hw.noc, 9


@pytest.mark.parametrize(
    "case", [_short_buffers, _two_loihi2_chips], ids=["2-flit-buffers", "9-flits-off-chip"]
)
def test_a_lone_packet_longer_than_its_buffers_takes_the_zero_load_latency(case):
    """A packet with more flits than a virtual channel holds, alone in the mesh: 5 flits
    through 2-flit buffers (credits back after 3 cycles), and 9 flits over Loihi 2's 30-cycle
    off-chip link into 8-flit buffers. Its body waits for credits; ``zero_load_cycles``
    follows the credit loop flit by flit and still gives the simulated latency exactly."""
    topo, noc, flits = case()
    src, dst = all_pairs(topo.n_nodes)
    lat, _ = lone_packets(topo, noc, src, dst, flits)
    assert np.array_equal(lat, zero_load_cycles(topo, noc, src, dst, flits))


def test_packets_of_one_source_leave_in_the_order_they_are_ready():
    """Three packets of core 0 for core 8 of a 3×3 mesh, given out of order: the one ready at
    0 leaves at 0, the 3-flit one ready at 5 at 5, and the 2-flit one ready at 5 waits for
    the three flits before it (cycles 5, 6, 7) and leaves at 8."""
    noc = NocConstants()
    topo = Topology.mesh(3, 3, noc)
    res = run_packets(topo, noc, [0, 0, 0], [8, 8, 8], flits=[3, 1, 2], ready=[5, 0, 5])
    assert res.injected.tolist() == [5, 0, 8]
    zero = zero_load_cycles(topo, noc, [0, 0, 0], [8, 8, 8], 1)  # 1 + 1 + 5 × 4 + 4 + 1
    assert zero.tolist() == [27, 27, 27]
    assert res.arrived.tolist() == [5 + 27 + 2, 0 + 27, 8 + 27 + 1]


@pytest.mark.parametrize(
    "kwargs",
    [
        {"src": [0, 1], "dst": [2]},
        {"src": [0], "dst": [9]},
        {"src": [-1], "dst": [0]},
        {"src": [0], "dst": [1], "flits": 0},
        {"src": [0], "dst": [1], "flits": 256},
        {"src": [0], "dst": [1], "ready": [-3]},
    ],
)
def test_run_packets_refuses_what_cannot_be_sent(kwargs):
    noc = NocConstants()
    with pytest.raises(SpecError):
        run_packets(Topology.mesh(3, 3, noc), noc, **kwargs)


# ------------------------------------------------------------------ BookSim2's figures
BOOKSIM_ZERO_LOAD = 33.21  # packet latency at 0.01 flits/node/cycle
BOOKSIM_ACCEPTED_AT_040 = 0.2929
BOOKSIM_SATURATION = 0.28
SHORT = {"warmup": 1000, "cycles": 3000}


def test_zero_load_latency_is_within_10_percent_of_booksim2():
    res = run_synthetic(REFERENCE, SyntheticRun("uniform", 8, 8, rate=0.01, **SHORT), seed=1)
    assert res.stable
    assert res.latency_avg == pytest.approx(BOOKSIM_ZERO_LOAD, rel=0.10)
    assert res.accepted_flit_rate == pytest.approx(0.01, rel=0.15)
    assert res.offered_flit_rate == pytest.approx(0.01, rel=0.15)
    # BookSim2's hops (routers crossed) at this rate: 6.23
    assert res.hops_avg == pytest.approx(6.23131, rel=0.02)
    assert res.network_latency_avg <= res.latency_avg
    # the closed form at uniform's average path: 2 + 6.25 routers × 4 + 5.25 links + 1
    assert res.zero_load_latency == pytest.approx(2 + 6.25 * 4 + 5.25 + 1, rel=0.03)
    assert res.queueing_avg >= 0


def test_accepted_rate_past_saturation_is_within_10_percent_of_booksim2():
    res = run_synthetic(REFERENCE, SyntheticRun("uniform", 8, 8, rate=0.40, **SHORT), seed=1)
    assert not res.stable
    assert res.accepted_flit_rate == pytest.approx(BOOKSIM_ACCEPTED_AT_040, rel=0.10)


def test_saturation_of_a_sweep_is_within_10_percent_of_booksim2():
    rates = [0.01, 0.1, 0.2, 0.24, 0.26, 0.28, 0.30, 0.32, 0.34, 0.40]
    curve = sweep(REFERENCE, SyntheticRun("uniform", 8, 8, **SHORT), rates, seed=1, workers=1)
    assert curve.zero_load_latency == pytest.approx(BOOKSIM_ZERO_LOAD, rel=0.10)
    assert curve.saturation_rate is not None
    assert curve.saturation_rate == pytest.approx(BOOKSIM_SATURATION, rel=0.10)
    assert curve.channel_bound == pytest.approx(0.5)  # 4/k
    by_rate = {p["rate"]: p for p in curve.points}
    assert not by_rate[0.40]["stable"]
    for r in rates:  # below saturation the network accepts what it is offered
        if r <= curve.saturation_rate:
            assert by_rate[r]["accepted_flit_rate"] == pytest.approx(r, rel=0.1)


# BookSim2's xy_yx_mesh (O1TURN) on the reference configuration, 5000 warm-up and 10000
# measured cycles (one run, benchmarks/results/booksim_o1turn.json): per pattern, the packet
# latency at 0.02 flits/node/cycle and the saturation rate, swept in steps of 0.02
BOOKSIM_O1TURN = {"uniform": (33.5273, 0.26), "transpose": (33.6798, 0.08)}


@pytest.mark.parametrize("pattern", list(BOOKSIM_O1TURN))
def test_o1turn_is_within_3_percent_and_a_rate_step_of_booksim2(pattern):
    """O1TURN on 8×8 against BookSim2's xy_yx_mesh: zero-load latency within 3 %, saturation
    within 0.02 flits/node/cycle (read as BookSim2's is, over its rate steps near it)."""
    zero, saturation = BOOKSIM_O1TURN[pattern]
    rates = [0.02] + [round(saturation + d, 2) for d in (-0.04, -0.02, 0.0, 0.02, 0.04)]
    curve = sweep(NocConstants(routing="o1turn"),
                  SyntheticRun(pattern, 8, 8, warmup=2000, cycles=5000), rates, seed=1,
                  workers=1)  # fmt: skip
    assert curve.zero_load_latency == pytest.approx(zero, rel=0.03)
    assert curve.saturation_rate is not None
    assert abs(curve.saturation_rate - saturation) <= 0.02 + 1e-9
    assert curve.saturation_rate < rates[-1]  # the rates past it read as past it
    bound = channel_load_bound(build_pattern(pattern, 8, 8, 64), 8, 8, "o1turn")
    assert curve.channel_bound == pytest.approx(bound)


# ------------------------------------------------------------------ the channel-load bound
def test_channel_load_bound_of_uniform_is_4_over_k():
    for k in (4, 8):
        pattern = build_pattern("uniform", k, k, k * k)
        assert channel_load_bound(pattern, k, k) == pytest.approx(4 / k)


def test_channel_load_bound_of_permutations_by_hand():
    """8×8, X then Y, one unit of rate per source:

    * tornado, (x, y) → ((x + 3) mod 8, (y + 3) mod 8): along a row, x = 0…4 go 3 east,
      x = 5…7 go 5 west; the east link 2→3 carries x = 0, 1, 2, the west link 5→4 carries
      x = 5, 6, 7, no link more than 3; the same in the columns: bound 1/3;
    * transpose, (x, y) → (y, x): in row 7 the east link 6→7 carries x = 0…6 (7 flows); no
      link more: bound 1/7;
    * bitcomp, (x, y) → (7 − x, 7 − y): the east link 3→4 carries x = 0…3: bound 1/4;
    * hotspot (every source to node 0): node 0's link to its core carries all 64: 1/64."""
    expected = {"tornado": 1 / 3, "transpose": 1 / 7, "bitcomp": 1 / 4, "hotspot": 1 / 64}
    for name, bound in expected.items():
        pattern = build_pattern(name, 8, 8, 64)
        assert channel_load_bound(pattern, 8, 8) == pytest.approx(bound), name
    # neighbor on 4×4: every link carries one flow, the terminals' links one: 1
    assert channel_load_bound(build_pattern("neighbor", 4, 4, 16), 4, 4) == pytest.approx(1.0)


def test_channel_load_bound_of_o1turn_by_hand():
    """8×8, half of every flow X then Y, half Y then X:

    * transpose: X first, row 7's east link 6→7 carries the flows of x = 0…6 of row 7, as
      above; Y first, those flows go up their own columns and never east along row 7, and
      the busiest Y-first link, south (7,6)→(7,7), carries no X-first flow: 7 halves, 2/7;
    * uniform and tornado are alike along X and along Y: either order loads the same links
      as much, 4/k and 1/3 as under X then Y."""
    expected = {"transpose": 2 / 7, "uniform": 4 / 8, "tornado": 1 / 3}
    for name, bound in expected.items():
        pattern = build_pattern(name, 8, 8, 64)
        assert channel_load_bound(pattern, 8, 8, "o1turn") == pytest.approx(bound), name
        assert channel_load_bound(pattern, 8, 8, "yx") == channel_load_bound(pattern, 8, 8)


BOUND_PATTERNS = ["uniform", "transpose", "bitcomp", "tornado", "hotspot"]


@pytest.mark.parametrize("pattern", BOUND_PATTERNS)
def test_accepted_throughput_never_exceeds_the_channel_load_bound(pattern):
    """Offered a quarter more than the bound. (Far past the bound the *average* accepted
    rate may exceed it, legitimately: flows that avoid the busiest channel keep their full
    rate — transpose offered twice its bound accepts 1.17 times it.)"""
    bound = channel_load_bound(build_pattern(pattern, 8, 8, 64), 8, 8)
    rate = min(1.0, 1.25 * bound)
    res = run_synthetic(REFERENCE, SyntheticRun(pattern, 8, 8, rate=rate, **SHORT), seed=2)
    assert res.accepted_flit_rate <= bound * 1.05
    # offered more than the busiest channel can carry, the run cannot be stable
    assert not res.stable


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


@pytest.mark.parametrize("name", list(NOCS))
def test_the_credit_recursion_and_the_closed_form_agree_where_both_apply(name):
    """For packets that fit their buffers the flit-by-flit recursion (used beyond them)
    gives the closed form's answer, pair for pair: two derivations of one pipeline."""
    from engine.simulate.zeroload import _credit_bound

    noc = replace(NOCS[name], offchip_serialization=3)
    topo = Topology.of_hardware(replace(load_hardware("mesh:3x2x2@2x2"), noc=noc))
    src, dst = all_pairs(topo.n_nodes)
    for flits in (1, 4, noc.buf):
        np.testing.assert_array_equal(
            _credit_bound(topo, noc, src, dst, flits), zero_load_cycles(topo, noc, src, dst, flits)
        )
