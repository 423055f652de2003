"""Scenes: built-in and shared setups of the Traffic tab (explorer/scenes.py, TrafficView)."""

from __future__ import annotations

import dataclasses
import json
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.errors import SpecError
from engine.hardware.routing import routings
from engine.mapping.placement.fill import MEASURED_US
from engine.pipeline import build_mapping, evaluate
from explorer.scenes import (
    SCENES,
    Scene,
    decode_scene,
    encode_scene,
    parse_scene,
    scene_from_arg,
)
from explorer.state import ExplorerState
from explorer.traffic_runner import SOURCES, sweep_points
from explorer.views.mesh_columns import MESH_PAD
from explorer.views.traffic import TrafficView
from explorer.views.traffic_scenes import TrafficTab, compare_table


def settle(view: TrafficView, timeout_s: float = 120.0) -> None:
    """Wait for the view's simulation thread (without a document it publishes at once)."""
    deadline = time.monotonic() + timeout_s
    while view.running or view.curve.sweeping:
        assert time.monotonic() < deadline, "the scene's simulation did not finish"
        time.sleep(0.05)  # poll interval, not a wait for a result


# ------------------------------------------------------------------ the format
@pytest.mark.parametrize("name", list(SCENES))
def test_every_built_in_scene_survives_json_and_a_link(name):
    scene = SCENES[name]
    assert parse_scene(json.loads(json.dumps(scene.to_dict()))) == scene
    assert scene_from_arg(encode_scene(scene)) == scene
    assert scene_from_arg(name) is scene
    assert scene.text.count(". ") + scene.text.count("; ") + 1 >= 2  # a few sentences


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({"colour": "red"}, "no field 'colour'"),
        ({"rate": "fast"}, "'rate' has the wrong type"),
        ({"side": True}, "'side' has the wrong type"),
        ({"side": 500}, "'side' is 500"),
        ({"rows": 1}, "'rows' is 0 .as many as 'side'. or 2"),
        ({"rows": 40}, "'rows' is 40"),
        ({"rows": 2.5}, "'rows' has the wrong type"),
        ({"cycles": 0}, "'cycles' is 0"),
        ({"kind": "movie"}, "kind is synthetic or mapping"),
        ({"pattern": "matrix"}, "pattern is one of"),
        ({"routing": "west-first"}, "routing is one of xy, yx, o1turn"),
        ({"mode": "warp"}, "mode is"),
        ({"title": ""}, "needs a title"),
        ({"kind": "mapping"}, "names its network and its hardware"),
        ({"format": "meshscope-mapping"}, "not a scene"),
        ({"version": 9}, "scene version 9"),
        ({"compare": ["packed-row", 3]}, "'compare' lists"),
    ],
)
def test_a_bad_scene_says_which_field_is_wrong(change, words):
    data = {**SCENES["hotspot"].to_dict(), **change}
    with pytest.raises(SpecError, match=words):
        parse_scene(data)


@settings(max_examples=200, deadline=None)
@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
        lambda children: (
            st.lists(children, max_size=4)
            | st.dictionaries(
                st.sampled_from(
                    ["title", "text", "kind", "side", "rate", "pattern", "compare", "x"]
                ),
                children,
                max_size=6,
            )
        ),
        max_leaves=12,
    )
)
def test_any_json_is_a_scene_or_a_spec_error(data):
    try:
        scene = parse_scene(data)
    except SpecError:
        return
    assert isinstance(scene, Scene)


@pytest.mark.parametrize("value", ["%%%", "e30", "bm90IGpzb24", "x" * 9000, "squre"])
def test_an_unreadable_link_is_a_spec_error(value):
    with pytest.raises(SpecError) as raised:
        scene_from_arg(value)
    if value == "squre":
        assert "built-in ones are uniform-below" in str(raised.value)
    assert len(str(raised.value).splitlines()) == 1


def test_decode_reads_what_encode_writes_for_a_custom_scene():
    scene = Scene(title="Mine", text="Look here. Then there.", pattern="tornado", side=6,
                  rate=0.07, routing="yx", seed=4)  # fmt: skip
    assert decode_scene(encode_scene(scene)) == scene
    wide = dataclasses.replace(scene, side=8, rows=4)
    assert decode_scene(encode_scene(wide)) == wide and wide.to_dict()["rows"] == 4
    assert "rows" not in scene.to_dict()  # a square mesh's scene reads as before


def test_compare_table_ranks_each_column():
    rows = [("a", 3.0, 10.0), ("b", 1.0, 30.0), ("c", 2.0, 20.0)]
    html = compare_table(rows, {"a": 5.0, "b": 6.0, "c": 4.0})
    assert "<td>a</td><td>5.00 (2)</td><td>3.00 (3)</td><td>10.00 (1)</td>" in html
    assert "<td>b</td><td>6.00 (3)</td><td>1.00 (1)</td><td>30.00 (3)</td>" in html


# ------------------------------------------------------------------ loading in the view
@pytest.fixture
def scenes():
    return TrafficTab(ExplorerState.from_specs("sparse-mlp-1", "loihi2")).scenes


@pytest.fixture
def view(scenes):
    return scenes.traffic


def test_a_synthetic_scene_sets_up_and_runs(scenes, view):
    assert scenes.load_scene(SCENES["transpose-yx"])
    settle(view)
    assert view.source == SOURCES[1] and view.pattern == "transpose" and view.routing == "yx"
    assert view.run is not None and "Y then X" in view.run.title
    assert view.run.trace.cycles >= 3000
    assert "mirror image" in scenes._scene_text.object
    assert scenes.share_query() == "transpose-yx"  # nothing changed: the built-in's name
    view.rate = 0.05
    shared = scene_from_arg(scenes.share_query())
    assert shared.rate == 0.05 and shared.routing == "yx" and shared.pattern == "transpose"


def test_a_scene_on_a_mesh_wider_than_deep_sets_it_up_and_shares_it(scenes, view):
    scene = Scene(title="Wide", text="Eight by four.", pattern="uniform", side=8, rows=4,
                  rate=0.05, cycles=300)  # fmt: skip
    assert scenes.load_scene(scene)
    settle(view)
    assert (view.side, view.rows) == (8, 4)
    hw = view.run.hardware
    assert (hw.grid_width, hw.grid_height) == (8, 4)
    assert scene_from_arg(scenes.share_query()).rows == 4


def test_a_sweep_scene_sweeps_too(scenes, view):
    assert scenes.load_scene(SCENES["uniform-beyond"])
    settle(view, 300)
    points = view.curve._points
    assert points and not points[-1]["stable"]  # it swept until it saturated


def test_a_sweep_started_during_another_draws_only_its_own_points(view):
    """Loading a sweep scene while a sweep runs (or Sweep, twice): the first sweep stops
    and its points stay out of the new curve (they mixed in before, and the zero-load
    latency read the wrong point)."""
    view.source, view.pattern, view.side, view.routing = SOURCES[1], "uniform", 4, "yx"
    view.curve.start()
    view.routing = "xy"
    view.curve.start()  # at once: the first sweep is still on its first points
    settle(view, 300)
    points = view.curve._points
    rates = [p["rate"] for p in points]
    assert rates == sorted(set(rates)) and rates[0] == 0.02  # one sweep, in order
    # X then Y, as the second asked, measuring the tab's cycles
    alone = sweep_points("uniform", 4, rates=rates, cycles=view.cycles)
    assert [p["latency_avg"] for p in points] == [p["latency_avg"] for p in alone]
    assert not view.curve.sweeping and view.curve.button.label == "Sweep offered load"


def test_a_mapping_scene_loads_its_mapping_and_simulates_its_step(scenes, view):
    state = view.state
    assert scenes.load_scene(SCENES["square"])
    settle(view)
    assert state.network.name.startswith("linear-tiled-identity")
    assert state.hardware.grid_width == 36 and state.inputs.placer == "pairs-square"
    links = state.evaluation.max_link_messages / 32
    assert links == pytest.approx(36**1.5 / 4)  # the saturated square's M^1.5/4
    assert view.run is not None and view.source == SOURCES[0]
    fig = view._figure_pane.object  # opened on the square, with the mesh a zoom away
    assert fig.x_range.end - fig.x_range.start < 36 / 2
    assert fig.x_range.bounds == (-MESH_PAD, 35 + MESH_PAD)
    assert "where the run went" in fig.select_one({"name": "zoomed"}).text


def test_the_heuristics_scene_compares_the_four_fill_orders(scenes, view):
    assert scenes.load_scene(SCENES["heuristics"])
    deadline = time.monotonic() + 120
    while "scene-compare" not in scenes._compare.object:
        assert time.monotonic() < deadline
        time.sleep(0.05)  # poll interval
    settle(view)
    html = scenes._compare.object
    state = view.state
    for placer, measured in MEASURED_US.items():
        mapped = build_mapping(state.network, state.hardware, partition=state.mapping.partition,
                               placement=placer)  # fmt: skip
        assert f"<td>{placer}</td><td>{measured:.2f}" in html
        assert f"{evaluate(mapped).latency_us:,.2f}" in html


def test_a_scene_naming_a_path_is_refused_and_changes_nothing(scenes, view, tmp_path):
    state = view.state
    before = state.mapping
    path = tmp_path / "net.npz"
    path.write_bytes(b"")
    scene = Scene(title="Sneaky", text="Reads a file. On the server.", kind="mapping",
                  network=str(path), hardware="loihi2")  # fmt: skip
    assert not scenes.load_scene(scene)
    assert state.mapping is before and scenes.scene is None


def test_the_o1turn_scene_runs_o1turn(scenes, view):
    """Every routing of the registry is a scene's to name: the built-in O1TURN scene sets the
    menu to it and runs it."""
    assert scenes.load_scene(SCENES["transpose-o1turn"])
    settle(view)
    assert view.routing == "o1turn" and "O1TURN" in view.run.title
    assert scene_from_arg(scenes.share_query()) is SCENES["transpose-o1turn"]
    for name in routings:
        assert parse_scene({**SCENES["hotspot"].to_dict(), "routing": name}).routing == name


# ------------------------------------------------------------------ issue 59
def test_a_scene_clicked_during_a_run_waits_for_it_and_stops_the_sweep(scenes, view):
    """Item 4: a scene clicked while a run and a sweep are under way was refused. It now
    waits for the run (saying so where the scene's text goes), stops the sweep, and loads."""
    sweeping = Scene(title="Sweeps", text="A run and a sweep. Then another scene.",
                     pattern="uniform", side=4, rate=0.3, cycles=3000, sweep=True)  # fmt: skip
    assert scenes.load_scene(sweeping)
    assert view.running and view.curve.sweeping
    assert scenes.load_scene(SCENES["hotspot"])  # taken, not refused
    assert "Next: <b>A hotspot</b>" in scenes._scene_text.object
    settle(view)
    assert scenes.scene is SCENES["hotspot"] and view.pattern == "hotspot"
    assert "A hotspot." in scenes._scene_text.object
    assert not view.curve.sweeping and view.run is not None and "hotspot" in view.run.title


def test_new_settings_mark_the_scene_text_and_drop_a_sweep_of_other_settings(scenes, view):
    """Item 3: after the settings changed and Simulate, the scene's text and its sweep stayed
    beside the new run as if they spoke of it."""
    swept = Scene(title="Small sweep", text="Uniform on 4×4. Swept.", pattern="uniform",
                  side=4, rate=0.1, cycles=500, sweep=True)  # fmt: skip
    assert scenes.load_scene(swept)
    settle(view, 300)
    assert view.curve._points and "Small sweep." in scenes._scene_text.object
    view.side = 5
    view.start_run()
    settle(view)
    assert "The settings changed since the scene <b>Small sweep</b>" in scenes._scene_text.object
    assert scenes.scene is None
    assert view.curve._points == [] and "Sweep again" in view.curve.text.object
    assert list(view.curve.points.data["rate"]) == []


def test_the_lecturers_title_and_notes_go_in_the_link_and_come_back_escaped(scenes, view):
    """Item 3: a shared setup was "A shared setup. (no notes yet)" with no way to write any."""
    assert scenes.load_scene(SCENES["hotspot"])
    settle(view)
    assert scenes._title_box.value == SCENES["hotspot"].title  # the scene's, to edit
    scenes._title_box.value = "Week 3 <b>hot</b>"
    scenes._notes_box.value = "Which links fill first?"
    assert "Week 3 &lt;b&gt;hot&lt;/b&gt;." in scenes._scene_text.object  # escaped
    shared = scene_from_arg(scenes.share_query())
    assert (shared.title, shared.text) == ("Week 3 <b>hot</b>", "Which links fill first?")
    assert shared.pattern == "hotspot" and shared.name == ""
    other = TrafficTab(ExplorerState.from_specs("sparse-mlp-1", "loihi2")).scenes
    assert other.load_scene(shared)
    settle(other.traffic)
    assert other._notes_box.value == "Which links fill first?"
    assert "Which links fill first?" in other._scene_text.object
