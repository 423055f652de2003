"""The mesh view's column builders (numpy only) and its figure, without a browser."""

from __future__ import annotations

import numpy as np
import pytest
from bokeh.models import ColorBar, HoverTool, LinearColorMapper

from engine.hardware import CORE_TO_ROUTER, OFF_CHIP, ROUTER, ROUTER_TO_CORE
from engine.mapping import Mapping
from engine.placement import make_placement
from engine.traffic import partition_stats
from explorer.views.mesh import MeshView, mesh_figure
from explorer.views.mesh_columns import (
    EMPTY_COLOR,
    IDLE_COLOR,
    LOAD_PALETTE,
    bottleneck_columns,
    bottleneck_text,
    chip_columns,
    core_columns,
    link_columns,
    load_colors,
    population_colors,
    router_columns,
)


def _mesh_link_count(w: int, h: int) -> int:
    """Directed router→router links of a w×h grid: two per pair of neighbours."""
    return 2 * ((w - 1) * h + w * (h - 1))


# ------------------------------------------------------------------ counts
def test_one_row_per_existing_link(demo_state):
    hw, ev = demo_state.hardware, demo_state.evaluation
    links = link_columns(hw, ev)
    n_mesh = _mesh_link_count(hw.grid_width, hw.grid_height)  # 4×8 grid: 104
    assert n_mesh == 104
    assert links["link"].size == n_mesh + 2 * hw.n_cores  # plus core→router, router→core
    assert links["link"].size == np.count_nonzero(hw.link_table["kind"] >= 0)
    assert len(set(links["link"].tolist())) == links["link"].size
    for column in links.values():
        assert len(column) == links["link"].size
    kinds = links["kind"].tolist()
    assert kinds.count("router") == n_mesh
    assert kinds.count("core-to-router") == kinds.count("router-to-core") == hw.n_cores


def test_one_row_per_core_and_router(demo_state):
    hw, net, ev = demo_state.hardware, demo_state.network, demo_state.evaluation
    cores = core_columns(hw, net, ev)
    assert cores["core"].size == hw.n_cores == 128
    assert np.count_nonzero(cores["partition"] >= 0) == ev.cores_used == ev.cores.size
    assert router_columns(hw)["router"].size == hw.n_routers == 32


# ------------------------------------------------------------------ cores
def test_cores_are_coloured_by_the_population_placed_there(demo_state):
    hw, net, ev = demo_state.hardware, demo_state.network, demo_state.evaluation
    cores = core_columns(hw, net, ev)
    palette = population_colors(net.n_populations)
    for part, core in enumerate(ev.cores):
        pop = int(ev.population[part])
        assert cores["partition"][core] == part
        assert cores["population"][core] == net.population_names[pop]
        assert cores["color"][core] == palette[pop]
        assert cores["neurons"][core] == ev.neurons[part]
        assert cores["synops"][core] == pytest.approx(ev.synops[part])
        assert cores["t_synmem_us"][core] == pytest.approx(ev.core_terms_us["synmem"][part])
    empty = cores["partition"] < 0
    assert set(cores["color"][empty]) == {EMPTY_COLOR}
    assert set(cores["population"][empty]) == {"empty"}
    assert np.all(cores["neurons"][empty] == 0)
    assert len(set(palette)) == net.n_populations  # seven layers, seven colours


def test_cores_sit_around_their_router(demo_state):
    hw = demo_state.hardware
    cores = core_columns(hw, demo_state.network, demo_state.evaluation)
    ct = hw.core_table
    dx, dy = cores["x"] - ct["gx"], cores["y"] - ct["gy"]
    assert np.all(np.abs(dx) < 0.5) and np.all(np.abs(dy) < 0.5)  # inside the router's cell
    first = ct["router"] == 0
    assert len({(round(a, 6), round(b, 6)) for a, b in zip(dx[first], dy[first], strict=True)}) == 4
    assert dx[first][0] < 0 and dy[first][0] < 0  # slot 0 top-left (y grows downwards)


# ------------------------------------------------------------------ links
def test_load_colors_bin_like_the_colour_bar():
    vmax = 100.0
    loads = np.array([0.0, 1e-9, 25.0, 50.0, 99.9, 100.0, 250.0])
    colors = load_colors(loads, vmax)
    n = len(LOAD_PALETTE)
    assert colors[0] == IDLE_COLOR  # no load: grey, not the palette's lightest colour
    assert colors[1] == LOAD_PALETTE[0]
    assert colors[2] == LOAD_PALETTE[n // 4]
    assert colors[3] == LOAD_PALETTE[n // 2]
    assert colors[4] == colors[5] == colors[6] == LOAD_PALETTE[-1]  # clipped at the top
    index = [LOAD_PALETTE.index(c) for c in colors[1:]]
    assert index == sorted(index)
    assert set(load_colors(loads, 0.0)[1:]) == {LOAD_PALETTE[0]}  # nothing loaded: no crash


def test_link_colours_follow_their_loads(demo_state):
    hw, ev = demo_state.hardware, demo_state.evaluation
    links = link_columns(hw, ev)
    np.testing.assert_array_equal(links["messages"], ev.link_messages[links["link"]])
    vmax = links["messages"].max()
    assert vmax == pytest.approx(ev.max_link_messages)
    assert list(links["color"]) == list(load_colors(links["messages"], vmax))
    idle = links["messages"] == 0
    assert idle.any() and (~idle).any()
    assert set(links["color"][idle]) == {IDLE_COLOR}
    heaviest = int(np.argmax(links["messages"]))
    assert links["color"][heaviest] == LOAD_PALETTE[-1]
    np.testing.assert_allclose(links["utilization"], ev.link_utilization[links["link"]])


def test_two_directions_are_parallel_distinct_segments(demo_state):
    hw, ev = demo_state.hardware, demo_state.evaluation
    links = link_columns(hw, ev)
    lt = hw.link_table
    mesh = np.isin(lt["kind"][links["link"]], (ROUTER, OFF_CHIP))
    src = lt["src_router"][links["link"]][mesh]
    dst = lt["dst_router"][links["link"]][mesh]
    seg = {(int(s), int(d)): i for i, (s, d) in enumerate(zip(src, dst, strict=True))}
    x0, y0 = links["x0"][mesh], links["y0"][mesh]
    x1, y1 = links["x1"][mesh], links["y1"][mesh]
    for (s, d), i in seg.items():
        j = seg[(d, s)]  # the opposite direction exists
        sx, sy, dxr, dyr = (
            s % hw.grid_width,
            s // hw.grid_width,
            d % hw.grid_width,
            d // hw.grid_width,
        )
        # the segment runs from near its source router towards its destination router
        assert np.hypot(x0[i] - sx, y0[i] - sy) < np.hypot(x1[i] - sx, y1[i] - sy)
        assert np.hypot(x1[i] - dxr, y1[i] - dyr) < 0.2
        # … parallel to and apart from the opposite direction's segment
        vi = np.array([x1[i] - x0[i], y1[i] - y0[i]])
        vj = np.array([x1[j] - x0[j], y1[j] - y0[j]])
        assert vi[0] * vj[1] - vi[1] * vj[0] == pytest.approx(0, abs=1e-12)
        assert np.hypot(x0[i] - x1[j], y0[i] - y1[j]) > 0.05


def test_core_links_join_a_core_to_its_router(demo_state):
    hw, ev = demo_state.hardware, demo_state.evaluation
    links = link_columns(hw, ev)
    lt, ct = hw.link_table, hw.core_table
    kind = lt["kind"][links["link"]]
    for k in (CORE_TO_ROUTER, ROUTER_TO_CORE):
        rows = kind == k
        core = lt["core"][links["link"][rows]]
        mx, my = links["xm"][rows], links["ym"][rows]
        assert np.all(np.hypot(mx - ct["gx"][core], my - ct["gy"][core]) < 0.4)
        length = np.hypot(
            links["x1"][rows] - links["x0"][rows], links["y1"][rows] - links["y0"][rows]
        )
        assert np.all(length > 0.1)  # long enough to see


def test_bottleneck_is_the_heaviest_link(demo_state):
    hw, ev = demo_state.hardware, demo_state.evaluation
    links = link_columns(hw, ev)
    b = bottleneck_columns(links, ev)
    assert b["link"].tolist() == [ev.bottleneck_link]
    assert ev.link_us[ev.bottleneck_link] == ev.link_us.max()
    # on loihi2 every link has the same bandwidth, so it is also the most messages
    assert b["messages"][0] == links["messages"].max()
    if ev.bottleneck == "link":  # the heaviest link is what bounds the step
        assert b["utilization"][0] == pytest.approx(1.0)
    text = bottleneck_text(hw, ev)
    assert f"{links['messages'].max():,.0f} messages / step" in text


# ------------------------------------------------------------------ chips
def test_off_chip_links_and_chip_outlines(two_chip_state):
    hw, ev = two_chip_state.hardware, two_chip_state.evaluation
    links = link_columns(hw, ev)
    off = links["kind"] == "off-chip"
    assert np.count_nonzero(off) == 2 * hw.height  # both directions across the one seam
    assert set(links["dash"][off]) == {"dashed"}
    assert links["messages"][off].sum() > 0  # the placement sends traffic across chips
    chips = chip_columns(hw)
    assert chips["chip"].tolist() == [0, 1]
    np.testing.assert_allclose(chips["x"] - chips["width"] / 2, [-0.5, 1.5])
    fig, _ = mesh_figure(hw, two_chip_state.network, ev)
    assert _chip_outlines(fig) == 2


def test_one_chip_has_no_outline(demo_state):
    fig, _ = mesh_figure(demo_state.hardware, demo_state.network, demo_state.evaluation)
    assert _chip_outlines(fig) == 0


def _chip_outlines(fig) -> int:
    for r in fig.renderers:
        data = r.data_source.data
        if "chip" in data and "width" in data:
            return len(data["chip"])
    return 0


# ------------------------------------------------------------------ figure and view
def test_figure_draws_row_zero_on_top_with_colour_bar_and_tooltips(demo_state):
    fig, sources = mesh_figure(demo_state.hardware, demo_state.network, demo_state.evaluation)
    assert fig.y_range.start > fig.y_range.end  # y grows downwards
    bars = [m for m in fig.below + fig.right if isinstance(m, ColorBar)]
    assert len(bars) == 1 and bars[0].title == "messages / step"
    mapper = bars[0].color_mapper
    assert isinstance(mapper, LinearColorMapper)
    assert mapper.high == pytest.approx(demo_state.evaluation.max_link_messages)
    tips = [dict(t.tooltips) for t in fig.tools if isinstance(t, HoverTool)]
    core_tips, link_tips = tips
    for label in (
        "population",
        "neurons",
        "DendOps / step",
        "SynOps / step",
        "SynMem reads / step",
    ):
        assert label in core_tips
    assert any(label.endswith("term") for label in core_tips)
    for label in ("link", "messages / step", "utilization"):
        assert label in link_tips
    assert len(sources.cores.data["core"]) == demo_state.hardware.n_cores


def test_view_follows_a_new_mapping(demo_state):
    state = demo_state.__class__.from_specs("sparse-mlp-1", "loihi2")
    view = MeshView(state=state)
    sources = view._sources
    before = list(sources.links.data["messages"])
    stats = partition_stats(state.network, state.hardware, state.mapping.partition)
    spread = make_placement(stats, state.hardware, "spread-row")
    state.set_mapping(Mapping(state.mapping.partition, spread))
    assert view._sources is sources  # same figure, refreshed sources
    assert list(sources.links.data["messages"]) != before
    placed = np.flatnonzero(np.asarray(sources.cores.data["partition"]) >= 0)
    np.testing.assert_array_equal(np.sort(placed), np.sort(spread.cores))
    assert sources.bottleneck.data["link"].tolist() == [state.evaluation.bottleneck_link]
