"""A simulated step in BookSim2's and Noxim's files: the anynet topology is the hardware's
mesh with its link latencies, the configuration its router, the packet trace the step's
messages (flits adding up to the step's), and the Noxim table one line per pair of routers
that exchange packets, its rates within [0, 1]."""

from __future__ import annotations

from collections import Counter
from functools import cache

import numpy as np
import pytest

from engine.errors import OutputFileError
from engine.hardware import OFF_CHIP
from engine.pipeline import build_mapping
from engine.simulate import booksim_files, draw_spikes, noxim_table, simulate_step


@cache
def mapped():
    return build_mapping("mlp:widths=256-512-256", "mesh:4x4x2@2x1", partition="min+6",
                         placement="random")  # fmt: skip


@cache
def result(mode: str = "pipelined", multicast: bool = False):
    m = mapped()
    spikes = draw_spikes(m.network.rate, "sample", seed=6)
    return simulate_step(m, spikes=spikes, mode=mode, multicast=multicast)


def messages():
    """(source core, destination core) of every message of the step's spikes."""
    m = mapped()
    msgs = m.graph.messages(m.hardware.model, draw_spikes(m.network.rate, "sample", seed=6))
    cores = np.append(m.mapping.placement.cores, m.hardware.input_core)  # src -1: the input port
    return cores[msgs.src], cores[msgs.dst]


def read_trace(path) -> np.ndarray:
    rows = [line.split() for line in path.read_text().splitlines() if line.strip()]
    assert all(len(r) == 4 for r in rows)
    return np.array(rows, dtype=np.int64).reshape(-1, 4)  # cycle, src, dst, flits


@pytest.mark.parametrize("mode", ["pipelined", "fall-through"])
def test_booksim_files_hold_the_steps_packets(tmp_path, mode):
    res, hw = result(mode), mapped().hardware
    paths = booksim_files(res, hw, tmp_path / "x")
    assert [p.name for p in paths] == ["x.anynet", "x.cfg", "x.trace"]
    assert all(p.exists() for p in paths)
    trace = read_trace(paths[2])
    assert trace[:, 3].sum() == res.flits == res.messages * res.packet_flits
    assert len(trace) == res.messages
    src, dst = messages()
    assert Counter(zip(trace[:, 1].tolist(), trace[:, 2].tolist(), strict=True)) == Counter(
        zip(src.tolist(), dst.tolist(), strict=True)
    )
    assert np.all(np.diff(trace[:, 0]) >= 0)  # in the order of their cycles
    if mode == "pipelined":
        assert np.all(trace[:, 0] == 0)  # every layer sends at cycle 0
    else:
        assert trace[:, 0].max() > 0 and trace[:, 0].max() < res.step_cycles


def test_a_multicast_steps_trace_has_one_line_per_destination(tmp_path):
    res, hw = result("pipelined", True), mapped().hardware
    trace = read_trace(booksim_files(res, hw, tmp_path / "m")[2])
    assert len(trace) == res.latency["packets"] == messages()[0].size
    assert trace[:, 3].sum() == res.latency["packets"] * res.packet_flits


def test_the_anynet_file_is_the_hardwares_mesh(tmp_path):
    res, hw = result(), mapped().hardware
    noc = hw.noc
    path = booksim_files(res, hw, tmp_path / "x")[0]
    lines = path.read_text().splitlines()
    assert len(lines) == hw.n_routers
    gw, gh = hw.grid_width, hw.grid_height
    kind = hw.link_table["kind"]
    seen_nodes = []
    for r, line in enumerate(lines):
        words = line.split()
        assert words[:2] == ["router", str(r)]
        neighbours, nodes, k = {}, [], 2
        while k < len(words):
            if words[k] == "router":
                neighbours[int(words[k + 1])] = int(words[k + 2])
                k += 3
            else:
                assert words[k] == "node"
                nodes.append(int(words[k + 1]))
                k += 2
        x, y = r % gw, r // gw
        expected = {}
        for d, (dx, dy) in enumerate([(1, 0), (-1, 0), (0, 1), (0, -1)]):
            if 0 <= x + dx < gw and 0 <= y + dy < gh:
                latency = noc.ew_latency if d < 2 else noc.ns_latency
                if kind[4 * r + d] == OFF_CHIP:
                    latency = noc.offchip_latency
                expected[(y + dy) * gw + x + dx] = latency
        assert neighbours == expected, r
        assert nodes == np.flatnonzero(hw.core_table["router"] == r).tolist()
        seen_nodes += nodes
    assert sorted(seen_nodes) == list(range(hw.n_cores))
    # a link where the two chips meet
    assert f"router 3 router 4 {hw.noc.offchip_latency}" in path.read_text()


def test_the_booksim_configuration_is_the_router(tmp_path):
    res, hw = result(), mapped().hardware
    noc = hw.noc
    cfg = booksim_files(res, hw, tmp_path / "x")[1].read_text()
    values = {}
    for line in cfg.splitlines():
        if "=" in line and not line.startswith("//"):
            key, _, value = line.partition("=")
            values[key.strip()] = value.strip().rstrip(";").strip()
    assert values["topology"] == "anynet" and values["network_file"] == "x.anynet"
    expected = {
        "num_vcs": noc.vcs, "vc_buf_size": noc.buf, "alloc_iters": noc.alloc_iters,
        "routing_delay": noc.routing_delay, "vc_alloc_delay": noc.vc_alloc_delay,
        "sw_alloc_delay": noc.sw_alloc_delay, "st_final_delay": noc.st_delay,
        "credit_delay": noc.credit_delay, "packet_size": res.packet_flits,
    }  # fmt: skip
    for key, value in expected.items():
        assert int(values[key]) == value, key
    assert values["vc_allocator"] == values["sw_allocator"] == "islip"
    rate = res.flits / res.step_cycles / hw.n_cores
    assert float(values["injection_rate"]) == pytest.approx(rate, abs=1e-6)


def test_the_noxim_table_has_one_line_per_pair_of_routers(tmp_path):
    res, hw = result(), mapped().hardware
    path = noxim_table(res, tmp_path / "t.txt")
    lines = [ln for ln in path.read_text().splitlines() if ln and not ln.startswith("%")]
    router = hw.core_table["router"]
    src, dst = messages()
    pairs = Counter(
        (int(a), int(b)) for a, b in zip(router[src], router[dst], strict=True) if a != b
    )
    table = {}
    for line in lines:
        s, d, pir, por, t_on, t_off, period = line.split()
        assert (int(s), int(d)) not in table  # one line per pair
        table[(int(s), int(d))] = (float(pir), float(por), int(t_on), int(t_off), int(period))
    assert set(table) == set(pairs)
    for pair, (pir, por, t_on, t_off, period) in table.items():
        assert 0 <= pir <= 1 and por == pir
        assert 0 <= t_on < t_off < period
        # pipelined: every pair starts at cycle 0; its rate is its packets over the step
        assert pir == pytest.approx(pairs[pair] / res.step_cycles, abs=1e-6)


def test_unwritable_outputs_are_output_file_errors(tmp_path):
    res, hw = result(), mapped().hardware
    with pytest.raises(OutputFileError):
        booksim_files(res, hw, tmp_path / "no-such-folder" / "x")
    with pytest.raises(OutputFileError):
        noxim_table(res, tmp_path / "no-such-folder" / "t.txt")


def test_replaying_the_exported_trace_reproduces_the_step(tmp_path):
    """The trace keeps the order the step injected its packets in: replayed through the same
    mesh in the file's order (what a trace-driven simulator does: each source sends its
    packets in the order of their lines), it takes the step's cycles within 2 %. Sorted by
    destination instead, as it once was, each source sent one destination after another and a
    replay took 21 % longer here (and a BookSim2 replay of sparse-mlp-1's step 1.5×)."""
    from engine.simulate.packets import run_packets

    m = mapped()
    res = simulate_step(m, seed=0, mode="pipelined", backpressure=False)
    trace = read_trace(booksim_files(res, m.hardware, tmp_path / "step")[2])
    replay = run_packets(res.machine.topology, m.hardware.noc, trace[:, 1], trace[:, 2],
                         flits=trace[:, 3], ready=trace[:, 0])  # fmt: skip
    assert replay.cycles == pytest.approx(res.step_cycles, rel=0.02)
    assert replay.cycles == res.machine.packets()["atime"].max() + 1  # the same last arrival
