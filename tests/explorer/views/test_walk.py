"""Walking one packet in the Traffic tab without a browser: naming its ends, the report, the
route on the mesh and the player moved to its longest wait (explorer/views/walk.py)."""

from __future__ import annotations

import numpy as np
import pytest

from engine.errors import SpecError
from engine.hardware import load_hardware
from engine.simulate.walk import endpoint_text, terminals_at
from explorer.state import ExplorerState
from explorer.traffic_runner import SOURCES, simulate_traffic
from explorer.views.traffic import TrafficView
from explorer.views.walk import hop_table


@pytest.fixture(scope="module")
def state():
    return ExplorerState.from_specs("mlp:widths=256-512-256-10", "mesh:4x4x2", None)


def test_a_router_names_its_cores_and_a_core_itself():
    hw = load_hardware("mesh:4x4x2")  # two cores per router
    assert terminals_at(hw, "1,2").tolist() == [18, 19]
    assert terminals_at(hw, " (1, 2, 1) ").tolist() == [19]  # the older form, still read
    assert terminals_at(hw, "(1,2):1").tolist() == [19]  # the page's notation
    assert terminals_at(hw, "(1,2)").tolist() == [18, 19]
    assert endpoint_text(hw, 19) == "(1,2):1"
    assert endpoint_text(load_hardware("mesh:4x4"), 9) == "(1,2)"
    board = load_hardware("loihi2-x8")  # several chips: the whole board's coordinates
    for core in (0, board.n_cores // 2 + 5, board.n_cores - 1):
        assert core in terminals_at(board, endpoint_text(board, core)).tolist()


@pytest.mark.parametrize(
    "text, words",
    [
        ("", r"\(x,y\) or"),
        ("3;1", r"\(x,y\) or"),
        ("(1,1,0):1", r"\(x,y\):slot"),
        ("4,0", "off the 4×4 mesh"),
        ("1,1,2", "cores 0–1"),
        ("(1,1):2", "cores 0–1"),
    ],  # fmt: skip
)
def test_a_badly_named_end_says_what_to_write(text, words):
    with pytest.raises(SpecError, match=words):
        terminals_at(load_hardware("mesh:4x4x2"), text)


@pytest.mark.parametrize("source", SOURCES)
def test_walk_the_slowest_packet_of_a_run(state, source):
    view = TrafficView(state=state)
    view.__panel__()
    options = {"pattern": "transpose", "side": 4, "rate": 0.3, "cycles": 400}
    run = simulate_traffic(state, source, frames=40, seed=2, **options)
    view.show(run)
    walk = view.walker
    assert walk.source.value and walk.destination.value and not walk.button.disabled
    walk._on_walk()  # no page: walks at once
    w = walk.walk
    packets = run.trace.packets
    assert w.latency == int((packets["atime"] - packets["ctime"]).max())
    report = walk.report.object
    assert "walk-hops" in report and f"{w.latency:,} cycles" in report
    assert report.count("<tr>") == len(w.hops) + 1
    assert view._route.data["x"] == [h.router[0] for h in w.hops]
    assert len(view._stops.data["why"]) == len(w.hops)
    if any(h.waited for h in w.hops):
        worst = max(w.hops, key=lambda h: h.waited)
        assert view.player.value == min(worst.arrive // run.trace.window, run.trace.n_windows - 1)
    # a new run clears the route
    view.show(run)
    assert view._route.data["x"] == [] and walk.walk is None


def test_a_pair_that_sent_nothing_is_a_notification_not_a_crash(state, monkeypatch):
    errors = []
    monkeypatch.setattr("explorer.views.walk.notify_error", errors.append)
    view = TrafficView(state=state)
    view.__panel__()
    run = simulate_traffic(state, SOURCES[1], pattern="transpose", side=4, rate=0.1, cycles=200)
    view.show(run)
    view.walker.source.value, view.walker.destination.value = "1,0", "2,0"  # transpose: 1 → 4
    view.walker._on_walk()
    assert "no packet went from router (1,0) to router (2,0)" in errors[-1]
    assert view.walker.walk is None and not view.walker.button.disabled
    view.walker.source.value = "9,9"
    view.walker._on_walk()
    assert "off the 4×4 mesh" in errors[-1]


def test_the_hop_table_lists_every_stage(state):
    run = simulate_traffic(state, SOURCES[1], pattern="uniform", side=4, rate=0.4, cycles=300)
    packets = run.trace.packets
    j = int(np.argmax(packets["atime"] - packets["ctime"]))
    w = run.walker(packets["src"][j : j + 1], packets["dst"][j : j + 1], "slowest")
    html = hop_table(w)
    for word in ("route ready", "VC won", "head left", "tail left", "waited", "why"):
        assert word in html
    assert html.count("<tr>") == len(w.hops) + 1
