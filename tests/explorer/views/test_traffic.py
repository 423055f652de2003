"""The Traffic tab's parts without a browser: runs, frames, limits (explorer/traffic_runner.py,
explorer/views/traffic.py, traffic_frames.py, load_curve.py)."""

from __future__ import annotations

import dataclasses
import threading

import numpy as np
import pytest

from engine.errors import SpecError
from engine.hardware import NocConstants
from engine.hardware.routing import routings
from engine.pipeline import Mapped
from engine.simulate import SyntheticRun, frame_window, run_synthetic, simulate_step
from engine.simulate.trace import WAIT_REASONS
from explorer.state import ExplorerState
from explorer.traffic_runner import (
    MAX_ROUTER_CYCLES,
    RUN_WARMUP,
    SOURCES,
    simulate_traffic,
    sweep_points,
    synthetic_spec,
    verdict,
)
from explorer.views.load_curve import curve_sentences
from explorer.views.mesh_columns import IDLE_COLOR, link_geometry
from explorer.views.traffic import TrafficView
from explorer.views.traffic_frames import (
    FULL_COLOR,
    WAIT_COLORS,
    latency_counts,
    latency_edges,
    link_frame,
    router_frame,
    traffic_box,
)


@pytest.fixture(scope="module")
def state():
    return ExplorerState.from_specs("mlp:widths=256-512-256-10", "mesh:4x4x2", None)


@pytest.fixture(scope="module")
def step_run(state):
    return simulate_traffic(state, SOURCES[0], frames=40, seed=3)


def test_frame_window_cuts_a_run_into_at_most_the_frames_asked():
    for cycles in (1, 7, 150, 151, 22_126, 10**6):
        w = frame_window(cycles, 150)
        assert w >= 1 and -(-cycles // w) <= 150
        assert w == 1 or -(-cycles // (w - 1)) > 150  # and no finer window would do


def test_a_traced_step_is_the_same_run_as_the_untraced_one(state, step_run):
    mapped = Mapped.of(state.network, state.hardware, state.mapping)
    plain = simulate_step(mapped, seed=3)
    trace = step_run.trace
    assert trace.n_windows <= 40 and trace.window == frame_window(plain.cycles, 40)
    assert np.array_equal(trace.link_flits.sum(axis=0), plain.link_flits)  # every flit, once
    assert trace.packets["atime"].size == plain.latency["packets"]


def test_link_frames_show_each_window_and_add_up_to_the_run(step_run):
    trace, hw = step_run.trace, step_run.hardware
    links = link_geometry(hw)["link"]
    total = np.zeros(links.size, dtype=np.int64)
    for k in range(trace.n_windows):
        frame = link_frame(trace, links, k)
        assert np.array_equal(frame["flits"], trace.link_flits[k][links])
        assert np.all((frame["busy"] >= 0) & (frame["busy"] <= 1))
        assert np.all((frame["color"] == IDLE_COLOR) == (frame["flits"] == 0))
        total += frame["flits"]
    assert np.array_equal(total, trace.link_flits.sum(axis=0)[links])


def test_router_frames_take_the_fullest_port_and_mark_the_full_ones(step_run):
    trace = step_run.trace
    ports = int(trace.meta["ports"])
    capacity = step_run.hardware.noc.vcs * step_run.hardware.noc.buf
    seen_full = False
    for k in range(trace.n_windows):
        frame = router_frame(trace, k, capacity, step_run.hardware.noc.vcs)
        fullest = trace.occupancy[k].reshape(-1, ports).max(axis=1)
        assert np.array_equal(frame["held"], fullest)
        assert np.array_equal(frame["line_color"] == FULL_COLOR, fullest >= capacity)
        seen_full |= bool(np.any(fullest >= capacity))
    assert seen_full  # a pipelined step queues every packet at once: some port fills


def test_router_frames_mark_the_routers_whose_packets_stalled(step_run):
    trace = step_run.trace
    capacity = step_run.hardware.noc.vcs * step_run.hardware.noc.buf
    marked = set()
    for k in range(trace.n_windows):
        frame = router_frame(trace, k, capacity, step_run.hardware.noc.vcs)
        mean = trace.waits[k] / trace.window  # VCs waiting, on average over the window
        assert np.allclose(frame["stalled"], mean.sum(axis=1))
        assert np.allclose(frame["stalled_credit"], mean[:, 1])
        stalled = mean.sum(axis=1) > 0
        assert np.array_equal(frame["stall_size"] > 0, stalled)  # a cross where VCs waited
        assert np.all(frame["stall_size"] <= 1)
        why = np.asarray(WAIT_REASONS, dtype=object)[mean.argmax(axis=1)]
        assert np.array_equal(frame["why"][stalled], why[stalled])
        assert np.array_equal(
            frame["stall_color"][stalled] == WAIT_COLORS[1], why[stalled] == "credit"
        )
        marked |= set(frame["why"][stalled])
    assert "credit" in marked  # the step's cores push back


def test_a_trace_saved_without_waits_draws_no_crosses(step_run):
    trace = dataclasses.replace(step_run.trace, waits=None)
    frame = router_frame(trace, 0, 16, 2)
    assert not np.any(frame["stall_size"]) and set(frame["why"]) == {"—"}


def test_the_latency_histogram_fills_as_packets_arrive(step_run):
    trace = step_run.trace
    edges = latency_edges(trace)
    arrived = [latency_counts(trace, edges, k) for k in range(trace.n_windows)]
    counts = np.array([c for c, _ in arrived])
    assert np.all(np.diff(counts, axis=0) >= 0)  # bins only grow
    assert [n for _, n in arrived] == counts.sum(axis=1).tolist()
    assert arrived[-1][1] == trace.packets["atime"].size  # by the end, every packet


@pytest.mark.parametrize(
    ("rate", "said"),
    [
        (0.1, "below saturation"),
        (0.3, "below saturation"),  # BookSim2's table: stable at 0.30, saturated from 0.32
        (0.32, "the mesh accepts less than is offered"),
        (0.36, "the mesh accepts less than is offered"),
        (0.45, "latency keeps growing"),
    ],
)
def test_a_short_run_past_saturation_is_not_called_stable(rate, said):
    """2,000 cycles, as the tab runs them: too short for BookSim2's latency test below 0.45,
    yet from 0.32 the 8×8 mesh accepts less than is offered."""
    run = SyntheticRun("uniform", 8, 8, rate=rate, warmup=0, cycles=2000, drain_limit=8000)
    result = run_synthetic(NocConstants(), run)
    assert said in verdict(result)
    below = verdict(result) == "below saturation (stable)"
    assert below == (said == "below saturation")


@pytest.mark.parametrize(
    ("pattern", "side", "rate", "flits", "cycles"),
    [("uniform", 2, 0.02, 1, 100), ("uniform", 8, 0.05, 16, 200), ("transpose", 4, 0.05, 4, 100)],
)
def test_a_light_short_run_is_not_called_saturated(pattern, side, rate, flits, cycles):
    """Few packets, or packets of many flits: one packet still under way at the end is
    most of the shortfall, which is noise, not saturation (the review's cases, which
    said 'past saturation' on 2 to 4 seeds in 10 before)."""
    for seed in range(4):
        run = SyntheticRun(pattern, side, side, rate=rate, packet_flits=flits, warmup=0,
                           cycles=cycles, drain_limit=4 * cycles)  # fmt: skip
        assert verdict(run_synthetic(NocConstants(), run, seed=seed)) == (
            "below saturation (stable)"
        )


def test_a_synthetic_run_on_a_mesh(state):
    run = simulate_traffic(
        state, SOURCES[1], pattern="transpose", side=4, rate=0.2, cycles=300, frames=30
    )
    assert run.hardware.grid_width == run.hardware.grid_height == 4
    assert run.trace.window == frame_window(RUN_WARMUP + 300, 30)  # the warm-up is drawn too
    assert "transpose" in run.title and "Packet latency" in run.summary


def test_a_run_opens_on_the_routers_it_used_when_they_are_a_corner_of_the_mesh(state):
    uniform = simulate_traffic(
        state, SOURCES[1], pattern="uniform", side=8, rate=0.1, cycles=200, frames=10
    )
    hw = uniform.hardware
    geometry = link_geometry(hw)
    assert traffic_box(hw, geometry, uniform.trace) == (0, 7, 0, 7)  # it used them all
    # the same run with every flit outside the top-left 3×2 routers taken away
    trace = uniform.trace
    kept = ((geometry["x0"] < 2.5) & (geometry["x1"] < 2.5)
            & (geometry["y0"] < 1.5) & (geometry["y1"] < 1.5))  # fmt: skip
    flits = np.zeros_like(trace.link_flits)
    flits[:, geometry["link"][kept]] = trace.link_flits[:, geometry["link"][kept]]
    corner = dataclasses.replace(trace, link_flits=flits)
    # one router more each side (4 × 3), then as tall as wide: the mesh is square
    assert traffic_box(hw, geometry, corner) == (0, 3, 0, 3)
    # a run along one row: not a strip 8 routers wide and 3 high, which no zoom could widen
    row = (geometry["y0"] < 0.5) & (geometry["y1"] < 0.5)
    flits[:] = 0
    flits[:, geometry["link"][row]] = trace.link_flits[:, geometry["link"][row]]
    assert traffic_box(hw, geometry, dataclasses.replace(trace, link_flits=flits)) == (0, 7, 0, 7)
    flits[:] = 0
    assert traffic_box(hw, geometry, dataclasses.replace(trace, link_flits=flits)) == (0, 7, 0, 7)


def test_the_routing_menu_lists_every_routing_and_each_one_runs(state, monkeypatch):
    """The menu is the registry's (labels for names); an O1TURN run says so in its title, and
    its curve sweeps O1TURN against O1TURN's channel-load bound."""
    view = TrafficView(state=state)
    view.source = SOURCES[1]
    menu = next(w for w in view._options.objects if getattr(w, "name", "") == "routing")
    assert list(menu.options.values()) == routings.names()
    assert list(menu.options) == [routings[n].label for n in routings]
    run = simulate_traffic(state, SOURCES[1], pattern="transpose", side=4, rate=0.1,
                           cycles=300, frames=10, routing="o1turn")  # fmt: skip
    assert routings["o1turn"].label in run.title and run.trace.packets["src"].size > 10
    swept = threading.Event()
    asked = []

    def sweep(*args, **options):
        asked.append((args, options))
        swept.set()
        return []

    monkeypatch.setattr("explorer.views.load_curve.sweep_points", sweep)
    view.pattern, view.side, view.routing = "transpose", 8, "o1turn"
    view.curve.start()
    assert swept.wait(10) and asked[0][0][:2] == ("transpose", 8)
    assert asked[0][1]["routing"] == "o1turn"
    assert view.curve._bound == pytest.approx(2 / 7)


@pytest.mark.parametrize(
    "options, words",
    [
        ({"routing": "west-first"}, "routing is one of xy, yx, o1turn"),
        ({"side": 40}, "2 to 32 routers each way, not 40×40"),
        ({"side": 8, "rows": 1}, "not 8×1"),
        ({"side": 8, "rows": 33}, "not 8×33"),
        ({"side": 32, "cycles": MAX_ROUTER_CYCLES}, "at most"),
        ({"side": 32, "rows": 16, "cycles": MAX_ROUTER_CYCLES // 256}, "on 32×16 routers"),
        ({"pattern": "bitrev", "side": 3}, "power-of-two"),
        ({"pattern": "transpose", "side": 8, "rows": 4}, "even power of two"),
    ],
)
def test_what_a_page_may_not_ask_is_a_clear_error(state, options, words):
    with pytest.raises(SpecError, match=words):
        simulate_traffic(state, SOURCES[1], **options)


def test_a_synthetic_run_on_a_mesh_wider_than_deep(state):
    """8 routers wide and 4 deep: the run is on that mesh, the hotspot at its centre."""
    run = simulate_traffic(state, SOURCES[1], pattern="hotspot", side=8, rows=4, rate=0.05,
                           cycles=300)  # fmt: skip
    hw = run.hardware
    assert (hw.grid_width, hw.grid_height) == (8, 4)
    assert "on a 8×4 mesh" in run.title
    dst = run.trace.packets["dst"]
    assert dst.size > 0 and np.all(dst == 2 * 8 + 4)  # the node at (4, 2)
    assert synthetic_spec("hotspot", 8, 4) == "hotspot:nodes=20"
    assert synthetic_spec("hotspot", 8) == "hotspot:nodes=36"  # square: (4, 4) as before
    points = sweep_points("uniform", 8, rows=4, rates=(0.05,))
    assert points[0]["mesh"] == "8x4"


def test_the_view_draws_a_run_and_steps_through_it(state, step_run):
    view = TrafficView(state=state)
    view.__panel__()
    view.show(step_run)
    assert view.player.end == step_run.trace.n_windows - 1
    assert "window 1 of" in view.counter.object
    colors = list(view._links.data["color"])
    view.player.value = step_run.trace.n_windows // 2
    assert f"window {step_run.trace.n_windows // 2 + 1} of" in view.counter.object
    assert list(view._links.data["color"]) != colors


def test_a_sweep_stops_after_two_rates_past_saturation_and_reads_the_curve():
    heard = []
    points = sweep_points("uniform", 4, rates=(0.05, 0.3, 0.7, 0.8, 0.9, 1.0),
                          on_point=heard.append)  # fmt: skip
    # heard as they came (the refinement's after the rates asked for), kept by rate
    assert sorted(heard, key=lambda p: p["rate"]) == points
    assert [p["rate"] for p in points] == sorted(p["rate"] for p in points)
    assert [p["stable"] for p in points][-2:] == [False, False]  # then it stopped
    assert 1.0 not in [p["rate"] for p in points]
    first, second = curve_sentences(points, 0.5)
    assert f"{points[0]['latency_avg']:,.1f} cycles" in first
    assert "Saturation at" in second and "0.50" in second


def test_a_cancelled_sweep_stops_before_the_next_rate():
    cancel = threading.Event()
    points = sweep_points("transpose", 4, rates=(0.05, 0.1, 0.2), cancel=cancel,
                          on_point=lambda point: cancel.set())  # fmt: skip
    assert len(points) == 1


def test_a_curve_still_stable_says_so():
    points = sweep_points("uniform", 4, rates=(0.02, 0.04))
    first, second = curve_sentences(points, 0.5)
    assert "Zero-load latency" in first and second.startswith("Below saturation up to 0.04")


def test_the_curve_reads_its_points_in_the_order_of_their_rates(state):
    """The page's callbacks may deliver a sweep's points out of order: the curve sorts
    them, so the zero-load latency is the lowest rate's and the line runs left to right."""
    view = TrafficView(state=state)
    points = sweep_points("uniform", 4, rates=(0.02, 0.04, 0.06))
    for k in (1, 0, 2):
        view.curve.add(points[k])
    assert view.curve.points.data["rate"] == [p["offered_flit_rate"] for p in points]
    assert view.curve.zero_line.location == points[0]["latency_avg"]
    assert f"{points[0]['latency_avg']:.1f} cycles" in view.curve.text.object


def test_the_curve_survives_a_late_or_a_lost_publication(state):
    """Each publication carries the points so far: one that arrives after a longer one is
    dropped, and the sweep's end brings back any that never arrived."""
    view = TrafficView(state=state)
    points = sweep_points("uniform", 4, rates=(0.02, 0.04, 0.06))
    curve = view.curve
    curve.show(points[:2])
    curve.show(points[:1])  # late: the curve keeps two points
    assert curve.points.data["rate"] == [p["offered_flit_rate"] for p in points[:2]]
    curve.sweeping = True
    curve._done(None, points)  # the third point's publication was lost
    assert curve.points.data["rate"] == [p["offered_flit_rate"] for p in points]
    assert not curve.sweeping and curve.button.label == "Sweep offered load"


def test_a_step_simulated_while_the_session_loads_another_mapping_keeps_to_its_own():
    """The run reads the session when Simulate is pressed: a load (a scene, an undo) before
    the worker runs must not pair the old mapping's trace with the new hardware (it did:
    a 36×36 trace drawn over a 4×4 mesh's routers)."""
    state = ExplorerState.from_specs("mlp:widths=64-128-32", "mesh:4x4x2", None)
    view = TrafficView(state=state)
    jobs = []
    view._runner.start = lambda job, done, failed: jobs.append((job, done))  # run it later
    view.start_run()
    state.load("mlp:widths=64-128-32", "mesh:6x6x2")
    job, done = jobs.pop()
    run = job(threading.Event())
    assert run.hardware.name == "mesh:4x4x2"
    assert run.trace.occupancy.shape[1] == 16 * int(run.trace.meta["ports"])  # 4×4 routers
    done(run)  # and it draws
    assert len(view._routers.data["x"]) == len(view._routers.data["color"]) == 16
