"""A mapping's time step, simulated flit by flit, against the analytic model and against
what no schedule can beat.

* The flits on every link equal the analytic model's message counts for the same spikes
  (``engine.pipeline.spike_loads``) times the flits per message, integer for integer: for
  sparse-mlp-1 on Loihi 2 under three placements (4 flits a message, as the preset has it),
  on two chips with off-chip links, with 1- and 4-flit messages, pipelined and
  fall-through, unicast and multicast; and under O1TURN, whose packets take either order as
  the step's seed draws it, the analytic loads of the same spikes and the same seed.
* The step is never shorter than its heaviest link's flits × that link's cycles per flit,
  than the zero-load path of any packet it delivered (counted from the packet's release),
  than any core's own synaptic work and neuron updates, or than the barrier.
* Fall-through runs layer after layer: no packet of a layer leaves before every message of
  the layers before it is processed, and the step is never shorter than the pipelined one.
"""

from __future__ import annotations

import math
from dataclasses import replace
from functools import cache

import numpy as np
import pytest

from engine.errors import SpecError
from engine.hardware import OFF_CHIP, load_hardware
from engine.pipeline import build_mapping, evaluate, spike_loads
from engine.simulate import Topology, draw_spikes, simulate_step, zero_load_cycles

PLACEMENTS = ["packed-row", "spread-col", "random"]
MODES = ["pipelined", "fall-through"]
SEED = 1


# ------------------------------------------------------------------ mappings, built once
@cache
def mlp1(placement: str):
    """sparse-mlp-1 on one Loihi 2 chip, min+2 (one partition shared by every placement)."""
    if placement == "packed-row":
        return build_mapping("sparse-mlp-1", "loihi2", partition="min+2", placement=placement)
    partition = mlp1("packed-row").mapping.partition
    return build_mapping("sparse-mlp-1", "loihi2", partition=partition, placement=placement)


@cache
def two_chips(placement: str, flits: int = 1):
    """A 3-layer MLP on two 4×4 chips (2 cores per router, off-chip links between them);
    with ``flits`` = 4 the router's flits are 8 bits, so a 32-bit message is 4 flits."""
    hw = load_hardware("mesh:4x4x2@2x1")
    hw = replace(hw, noc=replace(hw.noc, flit_bits=hw.links.message_bits // flits))
    # min+10: 22 cores (the input is a spike source), so spread-col reaches the second chip
    return build_mapping("mlp:widths=256-512-256", hw, partition="min+10", placement=placement)


def mapped_of(case: str, placement: str):
    if case == "sparse-mlp-1":
        return mlp1(placement)
    return two_chips(placement, 4 if case == "two-chips-4-flits" else 1)


@cache
def spikes_of(case: str, placement: str, seed: int = SEED):
    return draw_spikes(mapped_of(case, placement).network.rate, "sample", seed=seed)


@cache
def step(case: str, placement: str, mode: str, multicast: bool = False):
    return simulate_step(
        mapped_of(case, placement), spikes=spikes_of(case, placement), mode=mode,
        multicast=multicast,
    )  # fmt: skip


CASES = ["sparse-mlp-1", "two-chips", "two-chips-4-flits"]


# ------------------------------------------------------------------ the analytic model's loads
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("placement", PLACEMENTS)
@pytest.mark.parametrize("case", CASES)
def test_link_flits_equal_the_analytic_loads_of_the_same_spikes(case, placement, mode):
    mapped = mapped_of(case, placement)
    res = step(case, placement, mode)
    loads = spike_loads(mapped, spikes_of(case, placement))
    assert res.packet_flits == {"sparse-mlp-1": 4, "two-chips": 1, "two-chips-4-flits": 4}[case]
    assert loads.sum() > 0
    assert res.link_flits.shape == loads.shape
    assert np.array_equal(res.link_flits, np.asarray(loads) * res.packet_flits)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("placement", PLACEMENTS)
@pytest.mark.parametrize("case", CASES)
def test_multicast_link_flits_equal_the_analytic_multicast_loads(case, placement, mode):
    mapped = mapped_of(case, placement)
    res = step(case, placement, mode, multicast=True)
    loads = spike_loads(mapped, spikes_of(case, placement), multicast=True)
    assert np.array_equal(res.link_flits, np.asarray(loads) * res.packet_flits)
    # a spike's tree never uses more link crossings than its messages sent one by one
    unicast = step(case, placement, mode)
    assert np.all(res.link_flits <= unicast.link_flits)
    assert res.latency["packets"] == unicast.latency["packets"]


@pytest.mark.parametrize(
    "stage", ["routing_delay", "vc_alloc_delay", "sw_alloc_delay", "st_delay", "credit_delay"]
)
def test_multicast_finishes_with_slower_router_stages(stage):
    """A multicast head asks for output VCs only once every port it needs has a free one: with
    two-cycle VC allocation, heads that asked while a port was wholly held kept winning VCs
    they then gave back, and the step livelocked (the watchdog called it a deadlock)."""
    base = mlp1("packed-row")
    noc = replace(base.hardware.noc, **{stage: 2})
    mapped = replace(base, hardware=replace(base.hardware, noc=noc))
    spikes = spikes_of("sparse-mlp-1", "packed-row")
    res = simulate_step(mapped, spikes=spikes, multicast=True)
    loads = spike_loads(mapped, spikes, multicast=True)
    assert np.array_equal(res.link_flits, np.asarray(loads) * res.packet_flits)


@pytest.mark.parametrize("multicast", [False, True])
@pytest.mark.parametrize("case", ["sparse-mlp-1", "two-chips-4-flits"])
def test_o1turn_link_flits_equal_the_analytic_loads_of_the_same_spikes_and_seed(case, multicast):
    """Each packet (each spike's tree, multicast) goes X then Y or Y then X as the step's seed
    draws it, on its order's VCs; the analytic loads of the same spikes drawn with the same
    seed route every message the same way: the flits equal them, link for link."""
    base = mapped_of(case, "spread-col")
    noc = replace(base.hardware.noc, routing="o1turn")
    mapped = replace(base, hardware=replace(base.hardware, noc=noc))
    spikes = spikes_of(case, "spread-col")
    res = simulate_step(mapped, spikes=spikes, multicast=multicast, seed=7)
    loads = spike_loads(mapped, spikes, multicast=multicast, seed=7)
    assert np.array_equal(res.link_flits, np.asarray(loads) * res.packet_flits)
    pk = res.machine.packets("route", "parent")
    roots = pk["parent"] == np.arange(pk["parent"].size)
    assert 0.3 < pk["route"][roots].mean() < 0.7  # both orders taken
    # another seed draws other orders: other links (so the seed is what made them agree)
    assert not np.array_equal(loads, spike_loads(mapped, spikes, multicast=multicast, seed=8))
    assert res.latency["queueing_avg_cycles"] >= 0  # (each packet's transit: its own route)


def test_the_two_chip_cases_cross_off_chip_links():
    """The two-chip mappings would test nothing about off-chip links if none carried flits."""
    hw = two_chips("random").hardware
    off = hw.link_table["kind"] == OFF_CHIP
    assert off.any()
    for placement in ("spread-col", "random"):
        assert step("two-chips", placement, "pipelined").link_flits[off].sum() > 0
        assert step("two-chips-4-flits", placement, "pipelined").link_flits[off].sum() > 0


# ------------------------------------------------------------------ bounds
def serialization_per_link(hw) -> np.ndarray:
    """Cycles per flit of every link id: off-chip links serialize, the others take one."""
    kind = hw.link_table["kind"]
    return np.where(kind == OFF_CHIP, hw.noc.offchip_serialization, 1)


def service_cycles(mapped, spikes) -> tuple[np.ndarray, np.ndarray]:
    """Per core: the cycles of its synaptic work, ``max(synapses · T_SO, words · T_SMR)`` of
    every message it receives and of its own spikes' synapses in it, rounded up once."""
    hw = mapped.hardware
    msgs = mapped.graph.messages(hw.model, spikes, local=True)
    ns = np.maximum(msgs.synapses * hw.model.synop_ns, msgs.words * hw.model.synmem_read_ns)
    per_part = np.bincount(msgs.dst, weights=ns, minlength=mapped.graph.n_parts)
    cycles = np.ceil(per_part / hw.noc.cycle_ns - 1e-9).astype(np.int64)
    return mapped.mapping.placement.cores, cycles


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("placement", PLACEMENTS)
@pytest.mark.parametrize("case", ["sparse-mlp-1", "two-chips-4-flits"])
def test_the_step_is_never_shorter_than_its_bounds(case, placement, mode):
    mapped = mapped_of(case, placement)
    hw, noc = mapped.hardware, mapped.hardware.noc
    res = step(case, placement, mode)
    t = res.step_cycles
    assert res.step_us == pytest.approx(t * noc.cycle_ns / 1000)
    # (a) the heaviest link: its flits, one every `serialization` cycles — on each of the
    # parallel meshes (each has its own copy of the link)
    assert res.mesh_link_flits.shape == (hw.links.meshes, hw.n_link_ids)
    assert np.array_equal(res.mesh_link_flits.sum(axis=0), res.link_flits)
    busiest = res.mesh_link_flits.max(axis=0) * serialization_per_link(hw)
    assert t >= busiest.max() > 0
    # (b) the zero-load path of every delivered packet, from its release
    pk = res.machine.packets()
    leaf = (pk["hi"] - pk["lo"] == 1) & (pk["atime"] >= 0)
    assert leaf.sum() == res.latency["packets"]
    topo = Topology.of_hardware(hw)
    zero = zero_load_cycles(topo, noc, pk["src"][leaf], res.machine.dest[pk["lo"][leaf]],
                            res.packet_flits)  # fmt: skip
    latency = pk["atime"][leaf] - pk["ctime"][leaf]
    assert np.all(latency >= zero)  # no packet beats its lone-packet latency
    assert t >= zero.max()
    assert t >= (pk["ctime"][leaf] + zero).max()
    assert res.latency["max_cycles"] == latency.max()
    assert res.latency["queueing_avg_cycles"] >= 0
    # (c) the barrier
    barrier = math.ceil(hw.model.barrier_us * 1000 / noc.cycle_ns - 1e-9)
    assert t >= barrier
    # (d) every core's own work: its messages one after another, then its neurons' updates
    dst_core, svc = service_cycles(mapped, spikes_of(case, placement))
    work = np.bincount(dst_core, weights=svc, minlength=hw.n_cores)
    cores = mapped.mapping.placement.cores
    dendop = np.ceil(mapped.graph.neurons * hw.model.dendop_ns / noc.cycle_ns - 1e-9)
    assert t >= (work[cores] + dendop).max()
    if mode == "pipelined":
        assert np.all(pk["ctime"][: res.messages] == 0)  # every layer sends at once


def test_a_barrier_bound_step_is_the_barrier():
    """With a barrier longer than everything else the step takes exactly the barrier."""
    m = two_chips("packed-row")
    hw = replace(m.hardware, model=replace(m.hardware.model, barrier_us=100.0))
    slow = build_mapping(m.network, hw, partition=m.mapping.partition, placement="packed-row")
    res = simulate_step(slow, spikes=spikes_of("two-chips", "packed-row"))
    assert res.bound == "barrier" and res.bound_core == -1
    assert res.step_cycles == math.ceil(100.0 * 1000 / hw.noc.cycle_ns - 1e-9)


# ------------------------------------------------------------------ fall-through
@pytest.mark.parametrize("placement", PLACEMENTS)
@pytest.mark.parametrize("case", ["sparse-mlp-1", "two-chips"])
def test_fall_through_runs_layer_after_layer(case, placement):
    mapped = mapped_of(case, placement)
    res = step(case, placement, "fall-through")
    names = list(mapped.network.population_names)
    assert [p["layer"] for p in res.phases] == names
    assert res.phases[0]["start_cycles"] == 0
    for before, after in zip(res.phases, res.phases[1:], strict=False):
        assert after["start_cycles"] >= before["end_cycles"] >= before["start_cycles"]
    # from the packet table: no packet of layer l is released before every message of the
    # layers before it is processed
    pk = res.machine.packets()
    leaf = pk["hi"] - pk["lo"] == 1
    group = pk["group"]
    done_by = -1
    for g in range(len(names)):
        roots = np.flatnonzero(group[: res.messages] == g)
        if roots.size:
            assert pk["ctime"][roots].min() >= done_by
            assert pk["ctime"][roots].min() >= res.phases[g]["start_cycles"]
            done = pk["done"][leaf & (group == g)]
            assert res.phases[g]["end_cycles"] == done.max()
            done_by = max(done_by, int(done.max()))
    assert res.step_cycles >= done_by


@pytest.mark.parametrize("placement", PLACEMENTS)
@pytest.mark.parametrize("case", ["sparse-mlp-1", "two-chips"])
def test_fall_through_is_never_shorter_than_pipelined(case, placement):
    pipelined = step(case, placement, "pipelined")
    fall = step(case, placement, "fall-through")
    assert fall.step_cycles >= pipelined.step_cycles
    assert np.array_equal(fall.link_flits, pipelined.link_flits)  # the same traffic
    assert pipelined.phases == []


# ------------------------------------------------------------------ the rest of the result
def test_noc_energy_is_flits_times_the_per_hop_energy():
    """Loihi 2's [noc] energies: 3.0 pJ per E-W hop of a spike, 4.2 pJ per N-S hop, 1.7 pJ
    per core link, each over the message's four flits (engine/presets/loihi2.toml)."""
    res = step("sparse-mlp-1", "spread-col", "pipelined")
    hw = mlp1("spread-col").hardware
    f = res.link_flits
    router = f[: 4 * hw.n_routers].reshape(hw.n_routers, 4)
    assert res.packet_flits == 4
    per_flit = np.array([3.0, 4.2, 1.7]) / 4
    pj = per_flit @ [router[:, :2].sum(), router[:, 2:].sum(), f[4 * hw.n_routers :].sum()]
    assert res.noc_energy_uj == pytest.approx(pj * 1e-6, rel=1e-9)


def test_links_and_to_dict_report_the_same_flits():
    hw = mlp1("random").hardware
    res = step("sparse-mlp-1", "random", "pipelined")
    rows = res.links(hw)
    assert len(rows) == np.count_nonzero(res.link_flits)
    assert sum(r["flits"] for r in rows) == res.link_flits.sum()
    d = res.to_dict(hw)
    assert d["step_cycles"] == res.step_cycles and d["messages"] == res.messages
    assert d["stalls"] == {k: int(v.sum()) for k, v in res.stalls.items()}
    assert len(d["links"]) == len(rows)


@pytest.mark.parametrize("multicast", [False, True], ids=["unicast", "multicast"])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("who", ["nobody", "the-output-layer"])
def test_a_step_whose_spikes_send_nothing(who, mode, multicast):
    """No neuron spikes, or only the output layer's (whose axons lead nowhere): no message,
    no flit, and the step is the barrier or the slowest core's neuron updates. Multicast
    crashes here: ``simulate_step`` makes one packet per run of messages of a spike, starting
    from ``first = [True, …]`` — one packet even when there are no messages — and indexes
    the empty message arrays with it (``IndexError`` at ``src_core[order][pk_lo]``)."""
    mapped = two_chips("packed-row")
    net, hw = mapped.network, mapped.hardware
    spikes = np.zeros(net.n_neurons, dtype=bool)
    if who == "the-output-layer":
        spikes[net.population == net.n_populations - 1] = True
    res = simulate_step(mapped, spikes=spikes, mode=mode, multicast=multicast)
    assert res.spikes == int(spikes.sum())
    assert res.messages == res.flits == res.latency["packets"] == 0
    assert not res.link_flits.any()
    barrier = math.ceil(hw.model.barrier_us * 1000 / hw.noc.cycle_ns - 1e-9)
    dendop = np.ceil(mapped.graph.neurons * hw.model.dendop_ns / hw.noc.cycle_ns - 1e-9)
    assert res.step_cycles == max(barrier, int(dendop.max()))


def test_bad_requests_are_spec_errors():
    mapped = two_chips("packed-row")
    with pytest.raises(SpecError, match="mode"):
        simulate_step(mapped, mode="sideways")
    with pytest.raises(SpecError, match="spikes"):
        simulate_step(mapped, spikes="some")
    with pytest.raises(SpecError, match="did not finish"):
        simulate_step(mapped, spikes=spikes_of("two-chips", "packed-row"), limit_cycles=50)


def test_a_busy_core_pushes_back_into_the_mesh():
    """Cores are servers: with slower synaptic reads the same traffic takes longer, and the
    packets wait longer in the mesh, not only at their destination."""
    import dataclasses

    mapped = build_mapping("sparse-mlp-1", "loihi2", partition="min+2", placement="spread-col")
    spikes = draw_spikes(mapped.network.rate, "sample", seed=0)
    fast = simulate_step(mapped, spikes=spikes)
    model = mapped.hardware.model
    model = dataclasses.replace(model, synmem_read_ns=4 * model.synmem_read_ns)
    slow_hw = dataclasses.replace(mapped.hardware, model=model)
    slow = simulate_step(dataclasses.replace(mapped, hardware=slow_hw), spikes=spikes)
    assert slow.step_cycles > 1.5 * fast.step_cycles
    assert sum(slow.stalls["no_credit"]) > sum(fast.stalls["no_credit"])
    np.testing.assert_array_equal(slow.link_flits, fast.link_flits)


def test_without_back_pressure_cores_never_hold_the_mesh():
    """The ablation: the same flits, fewer credit stalls, and a core still takes its time."""
    mapped = build_mapping("sparse-mlp-1", "loihi2", partition="min+2", placement="spread-col")
    spikes = draw_spikes(mapped.network.rate, "sample", seed=0)
    held = simulate_step(mapped, spikes=spikes)
    free = simulate_step(mapped, spikes=spikes, backpressure=False)
    np.testing.assert_array_equal(free.link_flits, held.link_flits)
    assert sum(free.stalls["no_credit"]) < sum(held.stalls["no_credit"])
    g, model = mapped.graph, mapped.hardware.model
    work_ns = np.maximum(g.synops * model.synop_ns, g.synmem_reads * model.synmem_read_ns)
    assert free.step_us * 1000 >= work_ns.max()  # the busiest core's synaptic work


def test_the_simulated_and_analytic_numbers_agree_on_what_bounds_a_link_bound_mapping():
    """packed-col puts whole layers under few routers: both models find it link-bound and
    slower than spread-col."""
    by = {}
    for placement in ("packed-col", "spread-col"):
        m = build_mapping("sparse-mlp-1", "loihi2", partition="min+2", placement=placement)
        by[placement] = (evaluate(m), simulate_step(m, seed=0))
    assert by["packed-col"][0].bottleneck == "link" and by["packed-col"][1].bound == "link"
    assert by["packed-col"][1].step_us > by["spread-col"][1].step_us
    assert by["packed-col"][0].latency_us > by["spread-col"][0].latency_us


# ------------------------------------------------------------------ cancelling
class _CancelAfter:
    """A cancel token that is set from its ``n``-th look on."""

    def __init__(self, n: int):
        self.n, self.looks = n, 0

    def is_set(self) -> bool:
        self.looks += 1
        return self.looks > self.n


def test_a_step_run_in_slices_is_the_step_run_at_once():
    mapped = mlp1("packed-row")
    whole = simulate_step(mapped, seed=SEED)
    sliced = simulate_step(mapped, seed=SEED, cancel=_CancelAfter(10**9))
    assert sliced.step_cycles == whole.step_cycles and sliced.cycles == whole.cycles
    assert sliced.latency == whole.latency and sliced.bound == whole.bound
    np.testing.assert_array_equal(sliced.link_flits, whole.link_flits)


def test_a_cancelled_step_stops_within_a_slice():
    from engine.errors import Cancelled
    from engine.simulate.step import CANCEL_CHECK_CYCLES

    mapped = mlp1("packed-row")
    whole = simulate_step(mapped, seed=SEED)
    assert whole.cycles > 2 * CANCEL_CHECK_CYCLES  # long enough to be cut
    token = _CancelAfter(2)
    with pytest.raises(Cancelled):
        simulate_step(mapped, seed=SEED, cancel=token)
    assert token.looks == 3  # two slices ran, the third look stopped it


# ------------------------------------------------------------------ per-link figures
@pytest.mark.parametrize("case", ["mlp1", "two_chips"])
def test_link_figures_of_a_traced_step(case):
    from engine.simulate.topology import Topology

    mapped = mlp1("packed-row") if case == "mlp1" else two_chips("packed-row")
    whole = simulate_step(mapped, seed=SEED)
    traced = simulate_step(mapped, seed=SEED, window=10**9)  # one window: the whole step
    assert traced.trace.n_windows == 1
    figures = traced.link_figures()
    np.testing.assert_array_equal(figures["flits"], whole.link_flits)
    topo = Topology.of_hardware(mapped.hardware)
    cpf = np.divide(1.0, topo.link_capacity, out=np.zeros(topo.n_link_ids),
                    where=topo.link_capacity > 0)  # fmt: skip
    busiest = whole.mesh_link_flits.max(axis=0)  # (Loihi 2's two meshes: the busier one's)
    np.testing.assert_allclose(figures["busy"], busiest * cpf / whole.step_cycles)
    assert figures["busy"].max() <= 1.0 + 1e-12
    into_core = np.zeros(topo.n_link_ids, bool)
    into_core[4 * topo.n_routers + topo.n_nodes :] = True
    buffer = figures["buffer"]
    assert np.all(buffer[into_core] == -1)
    carried = (whole.link_flits > 0) & ~into_core
    assert np.all(buffer[carried] >= 1)  # every flit waited in the buffer it entered
    assert (
        buffer.max()
        <= figures["buffer_capacity"]
        == mapped.hardware.noc.vcs * mapped.hardware.noc.buf
    )
    assert "buffer" not in whole.link_figures()  # untraced: no buffer figures


def test_link_input_is_the_port_a_link_feeds():
    from engine.simulate.topology import Topology

    hw = load_hardware("mesh:4x4x2@2x1")
    topo = Topology.of_hardware(hw)
    feeds = topo.link_input
    P = topo.n_ports  # noqa: N806
    for r, o in [(0, 0), (5, 1), (5, 2), (9, 3)]:
        link = topo.link_id[r, o]
        if link >= 0:
            assert feeds[link] == topo.nbr[r, o] * P + (o ^ 1)
    core = 7
    assert feeds[topo.inject_link[core]] == topo.node_router[core] * P + topo.node_port[core]
