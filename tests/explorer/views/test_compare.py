"""The compare view without a browser: summaries, the link-load difference, choosing a reference."""

from __future__ import annotations

import json

import numpy as np
import pytest
from bokeh.models import ColorBar, PointDrawTool

from engine.mapping.assignment import mapping_to_dict
from engine.search import ESConfig
from explorer.runner import SearchRunner
from explorer.state import ExplorerState
from explorer.views.compare import (
    DIFF_PALETTE,
    SAME_COLOR,
    SHARED_SCALE_TITLE,
    CompareView,
    color_limit,
    diverging_colors,
    link_difference_columns,
    shared_load_scale,
    summary_html,
    summary_rows,
)
from explorer.views.mesh_columns import LOAD_PALETTE, link_columns, load_colors

NET = "mlp:widths=256-512-256-10"


@pytest.fixture
def state():
    return ExplorerState.from_specs(NET, "loihi2")


@pytest.fixture
def errors(monkeypatch):
    seen: list[str] = []
    monkeypatch.setattr("explorer.views.compare.notify_error", seen.append)
    return seen


def _swap_two_cores(state: ExplorerState) -> None:
    cores = state.mapping.placement.cores
    state.swap_cores(int(cores[0]), int(cores[-1]))


# ------------------------------------------------------------------ data
def test_difference_is_zero_for_the_same_mapping(state):
    hw, ev = state.hardware, state.evaluation
    cols = link_difference_columns(hw, ev, ev)
    assert cols["link"].tolist() == link_columns(hw, ev)["link"].tolist()
    assert not np.any(cols["delta"])
    assert set(cols["color"].tolist()) == {SAME_COLOR}


def test_difference_is_current_minus_reference_per_link(state):
    start = state.evaluation
    _swap_two_cores(state)
    hw, ev = state.hardware, state.evaluation
    cols = link_difference_columns(hw, ev, start)
    ids = cols["link"]
    assert np.array_equal(cols["delta"], ev.link_messages[ids] - start.link_messages[ids])
    assert np.any(cols["delta"] > 0) and np.any(cols["delta"] < 0)
    # traffic moves, it is not created: every message leaves a core and enters one
    out = cols["kind"] == "core-to-router"
    assert cols["delta"][out].sum() == pytest.approx(0.0, abs=1e-6)
    # the colours are centred on 0: the biggest increase is the reddest, the biggest drop bluest
    assert cols["color"][np.argmax(cols["delta"])] == DIFF_PALETTE[-1]
    assert cols["color"][np.argmin(cols["delta"])] in DIFF_PALETTE[:2]
    assert np.all(cols["color"][cols["delta"] == 0] == SAME_COLOR)


def test_diverging_colors_bin_like_the_colour_bar():
    colors = diverging_colors(np.array([-4.0, -1e-9, 0.0, 1e-9, 4.0]), 4.0)
    n = len(DIFF_PALETTE)
    assert colors[0] == DIFF_PALETTE[0] and colors[-1] == DIFF_PALETTE[-1]
    assert colors[1] == DIFF_PALETTE[n // 2 - 1] or colors[1] == DIFF_PALETTE[n // 2]
    assert colors[2] == SAME_COLOR
    assert colors[3] == DIFF_PALETTE[n // 2]
    assert DIFF_PALETTE[n // 2] == "#f4f4f4"  # the middle of the palette is the neutral colour
    assert set(diverging_colors(np.zeros(3), 0.0)) == {SAME_COLOR}


def test_colours_saturate_at_a_quantile_of_the_changes():
    delta = np.array([0.0, 1.0, -2.0, 3.0, -100.0])
    assert color_limit(delta, 1.0) == 100.0
    assert color_limit(delta, 0.5) == pytest.approx(2.5)
    assert color_limit(np.zeros(4)) == 0.0
    colors = diverging_colors(delta, color_limit(delta, 0.5))
    assert colors[4] == DIFF_PALETTE[0] and colors[3] == DIFF_PALETTE[-1]  # saturated
    assert colors[1] not in (DIFF_PALETTE[0], DIFF_PALETTE[-1])


def test_summary_rows_and_html(state):
    start = state.evaluation
    other = ExplorerState.from_specs(NET, "loihi2", placer="spread-row").evaluation
    rows = {r["key"]: r for r in summary_rows(other, start)}
    assert list(rows) == ["latency", "energy", "power", "bound", "cores"]
    lat = rows["latency"]
    pct = 100 * (other.latency_us - start.latency_us) / start.latency_us
    assert lat["change_pct"] == pytest.approx(pct)
    energy = rows["energy"]  # the spread placement sends messages further: more energy
    assert other.energy_uj > start.energy_uj and energy["better"] is False
    assert energy["change"].startswith("+")
    same = {r["key"]: r for r in summary_rows(start, start)}
    assert all(r["change"] in ("no change", "same") for r in same.values())
    assert same["cores"]["current"] == str(start.cores_used)
    html = summary_html(summary_rows(other, start), "starting mapping")
    assert 'data-testid="compare-summary"' in html and "reference: starting mapping" in html


# ------------------------------------------------------------------ the view
def test_view_shows_zero_difference_then_the_swap(state):
    view = CompareView(state=state)
    view.__panel__()
    assert view.reference_label == "starting mapping"
    assert not np.any(view.difference.data["delta"])
    _swap_two_cores(state)
    delta = np.asarray(view.difference.data["delta"])
    assert np.any(delta != 0)
    ids = view.difference.data["link"]
    current, start = state.evaluation.link_messages, state.shown.start_evaluation.link_messages
    assert np.allclose(delta, current[ids] - start[ids])
    assert "compare-latency" in view._summary.object
    state.undo()
    assert not np.any(view.difference.data["delta"])


def test_meshes_are_side_by_side_share_one_zoom_and_cannot_be_dragged(state):
    view = CompareView(state=state)
    current, reference, diff = view._current, view._reference, view._diff.figure
    assert reference.x_range is current.x_range and diff.y_range is current.y_range
    for fig in (current, reference):
        assert not any(isinstance(t, PointDrawTool) for t in fig.tools)
    assert len(view._row) == 3
    assert reference.title.text == "Reference: starting mapping"
    # both meshes' level of detail follows the shared zoom (the reference's callback moved
    # with its range; the review found it left on a range nothing used)
    for event in ("change:start", "change:end"):
        callbacks = current.x_range.js_property_callbacks[event]
        drawn = [set(map(id, c.args["detail"])) for c in callbacks]
        for fig in (current, reference):
            mine = {id(r) for r in fig.renderers}
            assert sum(bool(d & mine) for d in drawn) == 1, (event, fig.title.text)


# A network whose default mapping loads its heaviest link four times as much as the
# spread-row mapping does (1024 against 256 messages per step), and shares one link load.
UNEVEN = "linear-dense:M=4,N=64"


def _uneven_view(reference_is_lighter: bool = True):
    heavy = ExplorerState.from_specs(UNEVEN, "loihi2")
    light = ExplorerState.from_specs(UNEVEN, "loihi2", placer="spread-row")
    state, other = (heavy, light) if reference_is_lighter else (light, heavy)
    view = CompareView(state=state)
    assert view.load_file("other.json", other.mapping_json().encode())
    return state, view


@pytest.mark.parametrize("reference_is_lighter", [True, False])
def test_both_meshes_share_one_colour_scale(reference_is_lighter):
    state, view = _uneven_view(reference_is_lighter)
    current, reference = state.evaluation, state.shown.reference_evaluation
    assert current.max_link_messages != reference.max_link_messages
    top = max(current.max_link_messages, reference.max_link_messages)
    assert shared_load_scale(current, reference) == top

    sides = [view._current_sources, view._reference_sources]
    # one scale, one bar: under the current mesh (issue 57: the meshes stand side by side)
    assert not [m for m in view._reference.right + view._reference.below if isinstance(m, ColorBar)]
    bar_models = [obj for obj in view._current.below if isinstance(obj, ColorBar)]
    assert len(bar_models) == 1 and bar_models[0].color_mapper is view._load_mapper
    assert bar_models[0].color_mapper.high == top and bar_models[0].color_mapper.low == 0
    assert all(bar.title == SHARED_SCALE_TITLE for bar in bar_models)
    for sources, evaluation in zip(sides, (current, reference), strict=True):
        data = sources.links.data
        messages = np.asarray(data["messages"])
        assert np.array_equal(messages, evaluation.link_messages[np.asarray(data["link"])])
        assert list(data["color"]) == load_colors(messages, top).tolist()
        # only the heavier mesh reaches the darkest colour
        darkest = LOAD_PALETTE[-1] in data["color"]
        assert darkest == (evaluation.max_link_messages == top)


def test_the_same_load_is_the_same_colour_in_both_meshes():
    _, view = _uneven_view()
    cur, ref = view._current_sources.links.data, view._reference_sources.links.data
    assert list(cur["link"]) == list(ref["link"])
    cur_load, ref_load = np.asarray(cur["messages"]), np.asarray(ref["messages"])
    same = (cur_load == ref_load) & (cur_load > 0)
    assert same.any()  # the 256-message link both mappings have
    assert np.array_equal(np.asarray(cur["color"])[same], np.asarray(ref["color"])[same])
    assert np.array_equal(np.asarray(cur["width"])[same], np.asarray(ref["width"])[same])
    # and a lighter link is a lighter colour, across the two meshes
    order = {color: i for i, color in enumerate(LOAD_PALETTE)}
    hot = np.asarray(cur["color"], dtype=object)[np.argmax(cur_load)]
    ref_hot = np.asarray(ref["color"], dtype=object)[np.argmax(ref_load)]
    assert order[ref_hot] < order[hot] == len(LOAD_PALETTE) - 1


def test_the_shared_scale_follows_the_mappings():
    state, view = _uneven_view()
    mapper = view._load_mapper
    assert mapper.high == 1024
    view.choose("start")  # the same mapping on both sides: its own heaviest link
    assert mapper.high == state.evaluation.max_link_messages
    assert list(view._current_sources.links.data["color"]) == list(
        view._reference_sources.links.data["color"]
    )
    light = ExplorerState.from_specs(UNEVEN, "loihi2", placer="spread-row")
    assert view.load_file("light.json", light.mapping_json().encode())
    ref = state.shown.reference_evaluation
    assert mapper.high == max(state.evaluation.max_link_messages, ref.max_link_messages)


def test_the_difference_is_on_a_scale_centred_on_zero():
    _, view = _uneven_view()
    mapper, delta = view._diff.mapper, np.asarray(view.difference.data["delta"])
    assert np.any(delta > 0) and np.any(delta < 0)
    assert mapper.low == -mapper.high and mapper.high == color_limit(delta) > 0
    palette = list(mapper.palette)
    assert len(palette) % 2 == 1 and palette[len(palette) // 2] == "#f4f4f4"  # 0 is neutral
    colors = np.asarray(view.difference.data["color"], dtype=object)
    assert np.array_equal(colors, diverging_colors(delta, mapper.high))


def test_choose_best_and_file(state, errors):
    view = CompareView(state=state)
    assert not view.choose("best")  # no search yet
    assert errors and "no search result" in errors[0]
    assert state.shown.reference is None and view._choice.value == "start"

    runner = SearchRunner(state, interval_s=0.0)
    runner.start(ESConfig(budget=20, seed=2))
    runner.join(60)
    assert view.choose("best")
    assert view.reference_label == "best of the search"
    assert view._reference.title.text == "Reference: best of the search"
    best = state.search.best_evaluation
    assert view.difference.data["reference"] == pytest.approx(
        best.link_messages[view.difference.data["link"]]
    )

    other = ExplorerState.from_specs(NET, "loihi2", placer="spread-row")
    assert view.load_file("spread.json", other.mapping_json().encode())
    assert view.reference_label == "spread.json" and view._choice.value == "file"
    assert view.difference.data["reference"] == pytest.approx(
        other.evaluation.link_messages[view.difference.data["link"]]
    )


@pytest.mark.parametrize(
    "data",
    [b"not json", b'{"format": "something else"}', "WRONG-NETWORK"],
)
def test_a_bad_file_is_a_notification_and_changes_nothing(state, errors, data):
    if data == "WRONG-NETWORK":
        other = ExplorerState.from_specs("mlp:widths=64-128-32-10", "loihi2")
        data = json.dumps(mapping_to_dict(other.network, other.hardware, other.mapping)).encode()
    view = CompareView(state=state)
    view.choose("start")
    before = (state.shown.reference, state.shown.reference_evaluation, state.shown.reference_label)
    delta_before = list(view.difference.data["delta"])
    assert not view.load_file("bad.json", data)
    assert len(errors) == 1
    assert (
        state.shown.reference,
        state.shown.reference_evaluation,
        state.shown.reference_label,
    ) == before
    assert view._choice.value == "start"
    assert list(view.difference.data["delta"]) == delta_before


def test_a_new_network_rebuilds_the_panels(state):
    view = CompareView(state=state)
    old = view._current
    state.load("linear-dense:M=4,N=64", "mesh:3x3x2")
    assert view._current is not old
    assert view.reference_label == "starting mapping"
    assert not np.any(view.difference.data["delta"])
    hw = state.hardware
    assert len(view.difference.data["link"]) == np.count_nonzero(hw.link_table["kind"] >= 0)


def test_a_bad_upload_through_the_widget_is_cleared(state, errors):
    view = CompareView(state=state)
    view._file.param.update(filename="bad.json", value=b"not json")
    assert len(errors) == 1 and state.shown.reference is None
    assert not view._file.value
    assert not view.choose("file")  # nothing to compare with until a file is chosen
    assert len(errors) == 1 and state.shown.reference is None


def test_a_click_turns_no_wheel_zoom_on_in_any_panel():
    """Issue 57, item 2: Bokeh turns a plot's wheel zoom on when it is clicked ('auto');
    the difference panel has no toolbar to turn it off again. No panel leaves it to Bokeh."""
    _, view = _uneven_view(True)
    for fig in (view._current, view._reference, view._diff.figure):
        assert fig.toolbar.active_scroll is None
