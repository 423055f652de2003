"""Traces: a run recorded window by window adds up to the run (its flits, and its VCs' waits
to the routers' stall counters), reads back from its file unchanged, refuses files that are
not traces, and splits every packet's latency into its zero-load transit and its queueing."""

from __future__ import annotations

import json
import math
import zipfile

import numpy as np
import pytest

from engine.errors import InputFileError
from engine.hardware import NocConstants
from engine.pipeline import build_mapping
from engine.simulate import (
    SyntheticRun,
    Topology,
    Trace,
    draw_spikes,
    load_trace,
    run_synthetic,
    simulate_step,
    zero_load_cycles,
)
from engine.simulate.trace import PACKET_COLUMNS, WAIT_REASONS

WINDOW = 64  # a multiple of the off-chip links' 4 cycles per flit


@pytest.fixture(scope="module")
def mapped():
    return build_mapping("mlp:widths=256-512-256", "mesh:4x4x2@2x1", partition="min+6",
                         placement="random")  # fmt: skip


@pytest.fixture(scope="module")
def synthetic():
    run = SyntheticRun("uniform", 4, 4, rate=0.3, packet_flits=2, warmup=300, cycles=1000,
                       window=50)  # fmt: skip
    return run_synthetic(NocConstants(), run, seed=4)


@pytest.fixture(scope="module", params=["pipelined", "fall-through", "multicast"])
def step(request, mapped):
    multicast = request.param == "multicast"
    mode = "pipelined" if multicast else request.param
    spikes = draw_spikes(mapped.network.rate, "sample", seed=3)
    return simulate_step(mapped, spikes=spikes, mode=mode, multicast=multicast, window=WINDOW)


def check_windows(trace: Trace, link_flits: np.ndarray, cycles: int, window: int):
    assert trace.window == window
    assert trace.cycles == cycles
    assert trace.n_windows == math.ceil(cycles / window)
    assert trace.link_flits.shape == (trace.n_windows, link_flits.size)
    assert np.array_equal(trace.link_flits.sum(axis=0), link_flits)  # windows add up


def test_a_synthetic_trace_adds_up_to_the_run(synthetic):
    trace = synthetic.trace
    assert trace is not None and trace.meta["kind"] == "synthetic"
    check_windows(trace, synthetic.link_flits, synthetic.cycles, 50)
    assert trace.meta["pattern"] == "uniform" and trace.meta["packet_flits"] == 2
    assert (trace.meta["width"], trace.meta["height"], trace.meta["ports"]) == (4, 4, 5)
    # every delivered packet is in the trace, once
    pk = synthetic.machine.packets()
    assert trace.packets["src"].size == np.count_nonzero(pk["atime"] >= 0)


def test_a_step_trace_adds_up_to_the_step(step, mapped):
    trace = step.trace
    assert trace is not None and trace.meta["kind"] == "step"
    check_windows(trace, step.link_flits, step.cycles, WINDOW)
    assert trace.meta["mode"] == step.mode and trace.meta["multicast"] == step.multicast
    assert trace.meta["step_cycles"] == step.step_cycles
    assert trace.packets["src"].size == step.latency["packets"]  # one row per delivery


def test_no_window_no_trace(mapped):
    assert simulate_step(mapped, seed=3).trace is None
    run = SyntheticRun("uniform", 4, 4, rate=0.1, warmup=100, cycles=200)
    assert run_synthetic(NocConstants(), run).trace is None


def test_windows_never_carry_more_than_the_links_can(step, mapped):
    trace = step.trace
    noc = mapped.hardware.noc
    # each of the hardware's two meshes has its own copy of a link: each copy carries at most
    # its capacity, the link's flits are both copies'
    meshes = mapped.hardware.links.meshes
    assert meshes == 2 and trace.link_busiest.shape == trace.link_flits.shape
    assert np.all(trace.link_busiest <= WINDOW * trace.link_capacity[None, :] + 1e-9)
    assert np.all(trace.link_busiest <= trace.link_flits)
    assert np.all(trace.link_flits <= meshes * trace.link_busiest)
    for k in range(trace.n_windows):
        u = trace.utilization(k)
        assert np.all((u >= 0) & (u <= 1 + 1e-9))
    # an input port's virtual channels hold at most vcs × buf flits
    assert trace.occupancy.max() <= noc.vcs * noc.buf
    assert trace.occupancy.max() > 0
    topo = step.machine.topology
    assert trace.occupancy.shape == (trace.n_windows, topo.n_routers * topo.n_ports)


def test_frames(step):
    trace = step.trace
    n_links = step.link_flits.size
    for k in (0, trace.n_windows // 2, trace.n_windows - 1):
        f = trace.frame(k)
        assert f["window"] == k
        assert (f["start_cycle"], f["end_cycle"]) == (k * WINDOW, (k + 1) * WINDOW)
        assert f["link_flits"].shape == f["utilization"].shape == (n_links,)
        assert f["occupancy"].shape == (trace.occupancy.shape[1],)
        p = trace.packets
        by_hand = np.count_nonzero((p["ctime"] < (k + 1) * WINDOW) & (p["atime"] >= k * WINDOW))
        assert f["in_flight"] == by_hand
    for k in (-1, trace.n_windows):
        with pytest.raises(IndexError):
            trace.frame(k)


def test_latency_is_transit_plus_queueing(step, synthetic, mapped):
    for trace, topo, noc, flits in (
        (step.trace, step.machine.topology, mapped.hardware.noc, step.packet_flits),
        (synthetic.trace, synthetic.machine.topology, NocConstants(), 2),
    ):
        lat = trace.latency()
        p = trace.packets
        assert np.array_equal(lat["latency"], p["atime"] - p["ctime"])
        assert np.array_equal(lat["latency"], lat["transit"] + lat["queueing"])
        assert np.all(lat["queueing"] >= 0)
        assert np.array_equal(lat["transit"], zero_load_cycles(topo, noc, p["src"], p["dst"],
                                                               flits))  # fmt: skip
        assert np.array_equal(p["hops"], topo.hops(p["src"], p["dst"]))


def waits_by_counter(stalls: dict) -> np.ndarray:
    """The stall counters per router, summed into the trace's reasons."""
    return np.stack(
        [stalls["vc_busy"] + stalls["vc_lost"], stalls["no_credit"], stalls["switch_lost"]],
        axis=1,
    )


def test_a_drained_step_waits_in_its_windows_what_its_routers_counted(step, mapped):
    waits = step.trace.waits
    routers = mapped.hardware.n_routers
    assert waits.shape == (step.trace.n_windows, routers, len(WAIT_REASONS))
    # the step drains: no VC still waits, and every wait counted is in some window
    assert np.array_equal(waits.sum(axis=0), waits_by_counter(step.stalls))
    assert waits[:, :, 1].sum() > 0  # the step's cores push back: credits are waited for


@pytest.mark.parametrize("window", [3, 50])
def test_waits_fall_in_the_windows_they_lasted(window):
    """Behind a saturated hotspot VCs wait for credits for tens of cycles, longer than a
    short window: each window holds only the cycles that fell in it (at most every VC of a
    router all the window long), and the waits still going on at the end count up to it."""
    run = SyntheticRun("hotspot", 4, 4, rate=0.3, packet_flits=2, warmup=0, cycles=600,
                       window=window)  # fmt: skip
    result = run_synthetic(NocConstants(), run, seed=4)
    trace, m = result.trace, result.machine
    per_router = m.topology.n_ports * m.noc.vcs * window
    assert trace.waits.sum(axis=2).max() <= per_router
    assert trace.waits.sum(axis=2).max() > window  # some router had VCs waiting long
    total = trace.waits.sum(axis=0)
    counted = waits_by_counter(trace.stalls)
    assert np.all(total >= counted)
    open_waits = total - counted  # the waits not over when the run stopped
    assert open_waits.sum() > 0
    assert np.all(open_waits[:, 2] == 0)  # a lost switch allocation is one cycle, counted


def test_a_port_that_holds_flits_shows_them_in_every_window():
    """Windows of one cycle behind a saturated hotspot: a port's most-held count falls by
    at most the one flit a port sends per cycle, even through cycles in which nothing
    reaches it."""
    run = SyntheticRun("hotspot", 4, 4, rate=0.3, packet_flits=2, warmup=0, cycles=400,
                       window=1)  # fmt: skip
    result = run_synthetic(NocConstants(), run, seed=4)
    occ = result.trace.occupancy.astype(np.int64)
    assert occ.max() == result.machine.noc.vcs * result.machine.noc.buf  # some port filled
    assert np.all(occ[1:] >= occ[:-1] - 1)


def test_a_trace_file_round_trips(step, tmp_path):
    trace = step.trace
    path = tmp_path / "step.npz"
    trace.save(path)
    back = load_trace(path)
    assert back.meta == trace.meta
    assert trace.link_busiest is not None  # (two meshes)
    for name in ("link_flits", "occupancy", "link_capacity", "link_busiest", "waits"):
        assert np.array_equal(getattr(back, name), getattr(trace, name)), name
    assert set(back.packets) == set(PACKET_COLUMNS)
    for c in PACKET_COLUMNS:
        assert np.array_equal(back.packets[c], trace.packets[c]), c
    assert back.stalls.keys() == trace.stalls.keys()
    for k in trace.stalls:
        assert np.array_equal(back.stalls[k], trace.stalls[k])
    assert back.frame(1)["in_flight"] == trace.frame(1)["in_flight"]


def write_npz(path, **arrays):
    with open(path, "wb") as f:
        np.savez(f, **arrays)


def good_arrays(trace: Trace) -> dict:
    arrays = {
        "meta": np.frombuffer(json.dumps(trace.meta).encode(), dtype=np.uint8),
        "link_flits": trace.link_flits,
        "occupancy": trace.occupancy,
        "link_capacity": trace.link_capacity,
    }
    arrays.update({f"packet_{c}": trace.packets[c] for c in PACKET_COLUMNS})
    return arrays


def bad_files(trace: Trace, tmp: "Path") -> dict:  # noqa: F821, UP037
    cases = {}
    cases["empty"] = tmp / "empty.npz"
    cases["empty"].write_bytes(b"")
    cases["garbage"] = tmp / "garbage.npz"
    cases["garbage"].write_bytes(bytes(range(256)) * 10)
    cases["text"] = tmp / "text.npz"
    cases["text"].write_text("link_flits,occupancy\n1,2\n")
    good = tmp / "good.npz"
    trace.save(good)
    cases["truncated"] = tmp / "truncated.npz"
    cases["truncated"].write_bytes(good.read_bytes()[: good.stat().st_size // 2])
    cases["other-npz"] = tmp / "other.npz"
    write_npz(cases["other-npz"], x=np.arange(3))
    a = good_arrays(trace)
    a["meta"] = np.frombuffer(b"{not json", dtype=np.uint8)
    write_npz(tmp / "meta.npz", **a)
    cases["meta-not-json"] = tmp / "meta.npz"
    for key, value in (("format", "something-else"), ("version", 99), ("window", 0)):
        a = good_arrays(trace)
        a["meta"] = np.frombuffer(json.dumps(trace.meta | {key: value}).encode(), np.uint8)
        write_npz(tmp / f"{key}.npz", **a)
        cases[f"wrong-{key}"] = tmp / f"{key}.npz"
    a = good_arrays(trace)
    a["link_capacity"] = a["link_capacity"][:-1]
    write_npz(tmp / "shapes.npz", **a)
    cases["mismatched-arrays"] = tmp / "shapes.npz"
    a = good_arrays(trace)
    a["link_busiest"] = a["link_flits"][:, :-1]  # (parallel meshes' busier copy, per link)
    write_npz(tmp / "busiest.npz", **a)
    cases["mismatched-busiest"] = tmp / "busiest.npz"
    a = good_arrays(trace)
    a["waits"] = trace.waits[:, :-1]  # one router short
    write_npz(tmp / "waits.npz", **a)
    cases["mismatched-waits"] = tmp / "waits.npz"
    a = good_arrays(trace)
    a["packet_src"] = a["packet_src"][:-1]
    write_npz(tmp / "packets.npz", **a)
    cases["ragged-packets"] = tmp / "packets.npz"
    cases["folder"] = tmp
    cases["missing"] = tmp / "nope.npz"
    cases["pickled"] = tmp / "pickled.npz"
    write_npz(cases["pickled"], **(good_arrays(trace) | {"meta": np.array([{"a": 1}])}))
    return cases


BAD_FILES = [
    "empty", "garbage", "text", "truncated", "other-npz", "meta-not-json", "wrong-format",
    "wrong-version", "wrong-window", "mismatched-arrays", "mismatched-busiest", "mismatched-waits",
    "ragged-packets",
    "folder", "missing", "pickled",
]  # fmt: skip


@pytest.mark.parametrize("case", BAD_FILES)
def test_files_that_are_not_traces_are_input_file_errors(synthetic, tmp_path, case):
    cases = bad_files(synthetic.trace, tmp_path)
    assert set(cases) == set(BAD_FILES)
    assert zipfile.is_zipfile(tmp_path / "good.npz")  # the good file is a real .npz
    with pytest.raises(InputFileError):
        load_trace(cases[case])


def test_a_fine_trace_of_a_short_step_needs_memory_for_its_windows_only(mapped):
    """A step of ~1200 cycles traced cycle by cycle (window 1) has ~1200 windows. The trace
    arrays should grow with the run, but ``Machine._grow`` sizes them for ``(t_end − 1) //
    window + 1`` windows and ``simulate_step`` advances to ``t_end = limit_cycles``
    (50,000,000): this asks numpy for 50 M windows × 256 links (47.7 GiB, ``MemoryError``),
    and a window of 16 already reserves 3.1 M windows (3.2 GB) where ~75 are used."""
    spikes = draw_spikes(mapped.network.rate, "sample", seed=3)
    res = simulate_step(mapped, spikes=spikes, window=1)
    assert res.trace.n_windows == res.cycles
    assert np.array_equal(res.trace.link_flits.sum(axis=0), res.link_flits)
    rows = res.machine.arrays["win_link"].shape[0]
    assert rows <= 2 * res.trace.n_windows + 2


def test_the_transit_of_a_lone_packet_is_its_latency():
    """A trace's transit is the zero-load latency: a run of one packet queues for nothing."""
    noc = NocConstants()
    run = SyntheticRun("uniform", 4, 4, rate=0.001, warmup=0, cycles=3000, window=100)
    res = run_synthetic(noc, run, seed=2)
    lat = res.trace.latency()
    assert lat["latency"].size > 10
    topo = Topology.mesh(4, 4, noc)
    p = res.trace.packets
    assert np.array_equal(lat["transit"], zero_load_cycles(topo, noc, p["src"], p["dst"], 1))
    assert np.median(lat["queueing"]) == 0
