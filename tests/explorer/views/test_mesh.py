"""The mesh view's column builders (numpy only) and its figure, without a browser."""

from __future__ import annotations

import re

import numpy as np
import pytest
from bokeh.models import ColorBar, HoverTool, Legend, LinearColorMapper

from engine.evaluation.cost import model_evaluation
from engine.evaluation.flows import core_label
from engine.hardware import CORE_TO_ROUTER, LINK_KINDS, OFF_CHIP, ROUTER, ROUTER_TO_CORE
from engine.mapping.assignment import Mapping, Placement
from engine.mapping.partition_graph import partition_graph
from engine.mapping.placement import make_placement
from explorer.state import ExplorerState
from explorer.views.mesh import MeshView
from explorer.views.mesh_columns import (
    BOTTLENECK_COLOR,
    COLOR_MODES,
    EMPTY_COLOR,
    IDLE_COLOR,
    LINK_DIRECTIONS,
    LOAD_PALETTE,
    POPULATION_PALETTE,
    bottleneck_columns,
    bottleneck_text,
    chip_columns,
    color_scale,
    core_columns,
    core_positions,
    drop_target,
    link_columns,
    load_colors,
    mesh_split_text,
    node_address_parts,
    population_colors,
    router_columns,
    simulated_link_text,
    srgb_to_lab,
    unchanged_text,
)
from explorer.views.mesh_figure import DETAIL_PX, core_color_mappers, mesh_figure


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
def mapped_colors(mapper, values) -> list[str]:
    """What BokehJS's LinearColorMapper shows for ``values`` (NaN: its nan_color), in the
    floating-point steps of its ``value_to_index``."""
    n = len(mapper.palette)
    out = []
    for v in values:
        if np.isnan(v):
            out.append(mapper.nan_color)
            continue
        if v == mapper.high:
            k = n - 1
        else:
            k = int(np.floor((v - mapper.low) * (1 / (mapper.high - mapper.low)) / (1 / n)))
        out.append(mapper.palette[min(max(k, 0), n - 1)])
    return out


def test_the_browser_colours_the_cores_as_the_columns_say(demo_state):
    """The drawn cores carry numbers (a drag sends every row both ways); the figure's mappers
    turn them into the population colours and outlines ``core_columns`` names."""
    hw, net, ev = demo_state.hardware, demo_state.network, demo_state.evaluation
    cores = core_columns(hw, net, ev)
    fill, line = core_color_mappers(net)
    assert mapped_colors(fill, cores["layer"]) == list(cores["color"])
    assert mapped_colors(line, cores["placed"]) == list(cores["line_color"])
    assert EMPTY_COLOR in cores["color"]  # the demo leaves slots empty: NaN is exercised


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


def test_population_colours_stay_distinct_past_the_palette():
    assert population_colors(0) == []
    for n in range(1, 65):
        colors = population_colors(n)
        assert len(colors) == n and len(set(colors)) == n, n
        assert all(re.fullmatch(r"#[0-9a-f]{6}", c) for c in colors)
    many = population_colors(64)
    for n in range(1, 65):  # a bigger network keeps the smaller one's colours
        assert population_colors(n) == many[:n]
    assert len(set(population_colors(300))) == 300


def test_the_palette_comes_first_unchanged():
    assert population_colors(7) == list(POPULATION_PALETTE[:7])  # screenshots stay valid
    assert population_colors(len(POPULATION_PALETTE)) == list(POPULATION_PALETTE)
    assert population_colors(64)[: len(POPULATION_PALETTE)] == list(POPULATION_PALETTE)


def test_thirteen_layers_have_thirteen_distinct_colours():
    """Issue 57: on sparse-mlp-2 (13 populations) layer3/layer9 and layer4/layer10 looked
    alike (10 and 4 ΔE*76 apart). Every pair is now clearly apart."""
    colors = population_colors(13)
    rgb = np.array([[int(c[i : i + 2], 16) for i in (1, 3, 5)] for c in colors]) / 255
    lab = srgb_to_lab(rgb)
    gap = np.linalg.norm(lab[:, None] - lab[None], axis=-1)
    np.fill_diagonal(gap, np.inf)
    assert gap.min() > 15, gap.min()


def test_extra_population_colours_are_far_from_each_other_and_from_other_meanings():
    def lab(colors):
        rgb = np.array([[int(c[i : i + 2], 16) for i in (1, 3, 5)] for c in colors]) / 255
        return srgb_to_lab(rgb)

    colors = population_colors(64)
    reserved = [IDLE_COLOR, EMPTY_COLOR, BOTTLENECK_COLOR, LOAD_PALETTE[0], LOAD_PALETTE[-1]]
    assert not set(colors) & set(reserved)
    extra = lab(colors[len(POPULATION_PALETTE) :])
    gap = np.linalg.norm(extra[:, None] - lab(colors)[None], axis=-1)  # ΔE*76
    gap[np.arange(len(extra)), np.arange(len(POPULATION_PALETTE), 64)] = np.inf  # itself
    assert gap.min() > 15  # no near-duplicates (the palette's own closest pair is ~4)
    assert np.linalg.norm(extra[:, None] - lab(reserved)[None], axis=-1).min() > 15
    chroma = np.hypot(extra[:, 1], extra[:, 2])
    assert chroma.min() >= 19  # not grey, which reads as an idle link or an empty core
    hue = np.degrees(np.arctan2(extra[:, 2], extra[:, 1])) % 360
    assert np.all((hue > 80) & (hue < 340))  # not red or orange, which read as load


def test_srgb_to_lab_matches_known_values():
    white, black, red = srgb_to_lab(np.array([[1.0, 1.0, 1.0], [0, 0, 0], [1, 0, 0]]))
    assert white == pytest.approx([100, 0, 0], abs=0.01)
    assert black == pytest.approx([0, 0, 0], abs=0.01)
    assert red == pytest.approx([53.24, 80.09, 67.20], abs=0.05)


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


@pytest.mark.parametrize("color_by", ["messages", "utilization"])
def test_the_browser_colours_the_links_as_the_columns_say(demo_state, color_by):
    """The links travel without colour strings: their ``shade`` through the colour bar's
    mapper gives what ``link_columns`` names, idle links grey."""
    hw, net, ev = demo_state.hardware, demo_state.network, demo_state.evaluation
    _, sources = mesh_figure(hw, net, ev, color_by=color_by)
    data = sources.links.data
    assert "color" not in data
    want = link_columns(hw, ev, color_by=color_by)["color"]
    got = mapped_colors(sources.mapper, np.asarray(data["shade"], float))
    assert got == list(want)
    assert IDLE_COLOR in got and LOAD_PALETTE[-1] in got


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
def test_the_tooltip_numbers_name_what_the_text_columns_say(two_chip_state):
    """The page writes a link's kind, direction and ends, and a core's address, from these
    numbers (``mesh._tooltip_formats``); they must say what the text columns say."""
    hw, net, ev = two_chip_state.hardware, two_chip_state.network, two_chip_state.evaluation
    links = link_columns(hw, ev)
    assert list(links["kind"]) == [LINK_KINDS[k] for k in links["kind_code"]]
    assert list(links["direction"]) == [LINK_DIRECTIONS[d] for d in links["direction_code"]]
    chip, x, y, slot = node_address_parts(hw)

    def address(node: int) -> str:  # as the page's formatter writes it: (x,y) or (x,y):s
        return f"({x[node]},{y[node]})" + (f":{slot[node]}" if slot[node] >= 0 else "")

    ct = hw.core_table  # the board's global router coordinates, as engine.evaluation.flows
    assert address(hw.n_routers + 9) == core_label(hw, 9)
    assert (x[hw.n_routers :] == ct["gx"]).all() and (ct["chip"] > 0).any()

    assert list(links["src"]) == [address(n) for n in links["src_node"]]
    assert list(links["dst"]) == [address(n) for n in links["dst_node"]]
    cores = core_columns(hw, net, ev)
    assert list(cores["address"]) == [address(hw.n_routers + c) for c in cores["core"]]
    names = [*net.population_names, "empty"]
    assert list(cores["population"]) == [names[p] for p in cores["population_id"]]


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
    core_tips, link_tips, other_link_tips = tips  # links: east-west, the others
    assert link_tips == other_link_tips
    attachments = [t.attachment for t in fig.tools if isinstance(t, HoverTool)][1:]
    assert attachments == ["vertical", "horizontal"]  # beside the link, not over it
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
    stats = partition_graph(state.network, state.hardware, state.mapping.partition)
    spread = make_placement(stats, state.hardware, "spread-row")
    state.set_mapping(Mapping(state.mapping.partition, spread))
    assert view._sources is sources  # same figure, refreshed sources
    assert list(sources.links.data["messages"]) != before
    placed = np.flatnonzero(np.asarray(sources.core_info.data["partition"]) >= 0)
    np.testing.assert_array_equal(np.sort(placed), np.sort(spread.cores))
    assert sources.bottleneck.data["link"].tolist() == [state.evaluation.bottleneck_link]


# ------------------------------------------------------------------ dragging
def _view(network="sparse-mlp-1", hardware="loihi2"):
    state = ExplorerState.from_specs(network, hardware)
    errors: list[str] = []
    return state, MeshView(state=state, notify=errors.append), errors


def _dropped(hw, core: int, at: int, *, dx: float = 0.04):
    """The cores' positions after the browser dragged ``core`` to near slot ``at``."""
    x, y = core_positions(hw)
    xs, ys = x.copy(), y.copy()
    xs[core], ys[core] = x[at] + dx, y[at] - dx
    return xs, ys


def test_a_drop_sends_the_cores_changed_rows_only(monkeypatch):
    """The browser moved one point; the reply patches the rows that changed (the dragged
    point back on its slot, the two swapped cores' figures), not 1,024-row columns."""
    from bokeh.models import ColumnDataSource

    patched = []
    patch = ColumnDataSource.patch

    def recording(self, patches, setter=None):
        patched.append((self, patches))
        return patch(self, patches, setter)

    monkeypatch.setattr(ColumnDataSource, "patch", recording)
    state, view, errors = _view("sparse-mlp-2", "loihi2-x8")
    sources = view._sources
    before = {k: sources.core_info.data[k] for k in sources.core_info.data}
    cores = state.mapping.placement.cores
    a, b = int(cores[0]), int(cores[len(cores) // 2])
    xs, ys = _dropped(state.hardware, a, b)
    sources.cores.data.update(x=xs, y=ys)  # what the browser's change does: a drop
    assert not errors and state.inputs.can_undo
    rows = {i for src, p in patched if src is sources.core_info for c in p.values() for i, _ in c}
    assert rows == {a, b}  # the swapped cores' tooltip figures, as a patch
    moved = {i for src, p in patched if src is sources.cores for c in p.values() for i, _ in c}
    assert moved == {a, b}  # the dragged point back on a slot; the two cores' layers
    info = core_columns(state.hardware, state.network, state.evaluation)
    for key, value in sources.core_info.data.items():
        assert value is before[key], f"{key}: sent whole"
        np.testing.assert_array_equal(np.asarray(value), info[key], err_msg=key)
    x, y = core_positions(state.hardware)
    np.testing.assert_array_equal(sources.cores.data["x"], x)
    np.testing.assert_array_equal(sources.cores.data["y"], y)


def test_drop_target_finds_the_nearest_slot(demo_state):
    hw = demo_state.hardware
    x, y = core_positions(hw)
    assert drop_target(hw, x, y) is None  # nothing moved
    assert drop_target(hw, *_dropped(hw, 3, 77)) == (3, 77)
    assert drop_target(hw, *_dropped(hw, 3, 3)) is None  # back on its own slot
    far = x.copy()
    far[3] = hw.grid_width + 5  # off the mesh
    assert drop_target(hw, far, y) is None
    bx, by = x.copy(), y.copy()
    bx[3], by[3] = 0.5, 0.5  # in the gap between four routers' tiles
    assert drop_target(hw, bx, by) is None
    assert drop_target(hw, x[:-1], y[:-1]) is None  # a point was deleted (Backspace)
    two = x.copy()
    two[[1, 2]] += 0.3
    assert drop_target(hw, two, y) is None


def test_drop_on_an_occupied_core_swaps_and_everything_follows():
    state, view, errors = _view()
    cores = state.mapping.placement.cores
    a, b = int(cores[0]), int(cores[8])  # a layer1 core and a layer4 core
    expected = cores.copy()
    expected[[0, 8]] = b, a
    want = model_evaluation(
        state.network, state.hardware, Mapping(state.mapping.partition, Placement(expected))
    )

    assert view.drop(*_dropped(state.hardware, a, b))
    np.testing.assert_array_equal(state.mapping.placement.cores, expected)
    assert state.evaluation.latency_us == want.latency_us
    assert state.inputs.can_undo and not errors
    data = view._sources.cores.data
    x, y = core_positions(state.hardware)
    np.testing.assert_array_equal(data["x"], x)  # every point back on its slot
    np.testing.assert_array_equal(data["y"], y)
    palette = population_colors(state.network.n_populations)
    pop = state.evaluation.population
    fill = view._pane.object.select_one({"name": "cores"}).glyph.fill_color.transform
    assert fill.palette[int(data["layer"][b])] == palette[pop[0]]
    assert fill.palette[int(data["layer"][a])] == palette[pop[8]]
    info = view._sources.core_info.data
    assert info["partition"][b] == 0 and info["partition"][a] == 8
    assert state.network.population_names[info["population_id"][b]] == "layer1"
    np.testing.assert_array_equal(
        view._sources.links.data["messages"],
        link_columns(state.hardware, state.evaluation)["messages"],
    )


def test_drop_on_an_empty_slot_moves_the_core():
    state, view, errors = _view()
    cores = state.mapping.placement.cores
    empty = int(np.setdiff1d(np.arange(state.hardware.n_cores), cores)[-1])
    assert view.drop(*_dropped(state.hardware, int(cores[5]), empty))
    assert state.mapping.placement.cores[5] == empty
    assert view._sources.core_info.data["partition"][empty] == 5
    assert view._sources.core_info.data["partition"][int(cores[5])] == -1
    assert np.isnan(view._sources.cores.data["layer"][int(cores[5])])  # drawn EMPTY_COLOR
    assert not errors


def test_a_drop_that_goes_nowhere_snaps_back_and_changes_nothing():
    state, view, errors = _view()
    before = (state.mapping, state.shown.revision)
    x, y = core_positions(state.hardware)
    xs = x.copy()
    xs[0] = -3.0  # dropped off the mesh
    view._sources.cores.data.update(x=xs)  # what the browser did
    assert not view.drop(xs, y)
    assert (state.mapping, state.shown.revision) == before and not errors
    np.testing.assert_array_equal(view._sources.cores.data["x"], x)


def test_the_browser_echoing_our_own_write_back_writes_nothing():
    # a notebook's comm sends the browser's copy of a source back after every write of ours;
    # answering it with a snap-back (five sources rewritten) started an endless echo
    state, view, errors = _view()
    before = (state.mapping, state.shown.revision)
    writes = []
    for source in (view._sources.cores, view._sources.links):
        source.on_change("data", lambda attr, old, new: writes.append(attr))
    x, y = core_positions(state.hardware)
    assert not view.drop(x.tolist(), y.tolist())
    assert (state.mapping, state.shown.revision) == before and not errors
    assert writes == []


def test_dragging_an_empty_core_onto_an_empty_slot_says_why_and_snaps_back():
    state, view, errors = _view()
    empty = np.setdiff1d(np.arange(state.hardware.n_cores), state.mapping.placement.cores)
    before = state.mapping
    assert not view.drop(*_dropped(state.hardware, int(empty[0]), int(empty[1])))
    assert state.mapping is before
    assert errors == ["neither core holds a partition: nothing to move"]
    x, _ = core_positions(state.hardware)
    np.testing.assert_array_equal(view._sources.cores.data["x"], x)


def test_the_source_callback_swaps_once_and_ignores_its_own_writes():
    state, view, _ = _view()
    cores = state.mapping.placement.cores
    xs, ys = _dropped(state.hardware, int(cores[1]), int(cores[20]))
    revision = state.shown.revision
    view._sources.cores.data.update(x=xs, y=ys)  # fires on_change, like a drop in the page
    assert state.shown.revision == revision + 1
    state.undo()  # the view rewrites its source: that must not count as a drop
    assert state.shown.revision == revision + 2 and not state.inputs.can_undo


def test_a_search_followed_on_the_mesh_pauses_dragging():
    state, view, errors = _view()
    assert not view._search_row.visible and view._adopt not in view._search_row  # until shown
    stats = partition_graph(state.network, state.hardware, state.mapping.partition)
    other = Mapping(state.mapping.partition, make_placement(stats, state.hardware, "spread-col"))
    best = model_evaluation(state.network, state.hardware, other)
    state.search.param.update(running=True, best_on_mesh=True, best_evaluation=best)
    placed = np.flatnonzero(np.asarray(view._sources.core_info.data["partition"]) >= 0)
    np.testing.assert_array_equal(np.sort(placed), np.sort(other.placement.cores))
    assert view._search_row.visible and "best mapping</b> so far" in view._banner.object
    assert view._search_row.objects[:3] == [view._follow, view._adopt, view._unpick]
    cores = state.mapping.placement.cores
    before = state.mapping
    assert not view.drop(*_dropped(state.hardware, int(cores[0]), int(cores[8])))
    assert state.mapping is before and "search's best" in errors[0]
    state.search.follow_best = False  # back to the user's own mapping
    placed = np.flatnonzero(np.asarray(view._sources.core_info.data["partition"]) >= 0)
    np.testing.assert_array_equal(np.sort(placed), np.sort(cores))
    state.search.running = False  # over: the best stays on offer, and says so
    assert view._search_row.visible and view._adopt.visible
    assert "Search over" in view._banner.object and "your mapping" in view._banner.object
    state.search.follow_best = True
    assert "its best mapping" in view._banner.object and " so far" not in view._banner.object
    view._adopt.clicks += 1  # wired to the state's adopt (which needs a search's Record)
    assert "no search result to adopt" in errors[-1]
    state.search.best_on_mesh = False  # as adopting does: the banner goes
    assert not view._search_row.visible


# ------------------------------------------------------------------ colour modes, bottleneck core
def test_utilization_mode_colours_links_by_their_busy_share(demo_state):
    hw, ev = demo_state.hardware, demo_state.evaluation
    links = link_columns(hw, ev, color_by="utilization")
    np.testing.assert_array_equal(links["value"], ev.link_utilization[links["link"]])
    assert color_scale(ev, "utilization") == 1.0
    assert list(links["color"]) == list(load_colors(links["utilization"], 1.0))
    assert links["color"][np.argmax(links["utilization"])] == LOAD_PALETTE[-1]  # 100 % busy
    by_messages = link_columns(hw, ev)
    np.testing.assert_array_equal(by_messages["value"], by_messages["messages"])
    with pytest.raises(ValueError, match="color_by"):
        color_scale(ev, "bananas")


def test_the_switch_changes_colours_and_the_colour_bar():
    state, view, _ = _view()
    sources = view._sources
    view.color_by = "utilization"
    assert view._sources is sources  # same figure
    assert sources.color_bar.title == COLOR_MODES["utilization"][0]
    assert sources.color_bar.formatter.format == "0%"
    assert sources.mapper.high == 1.0
    util = link_columns(state.hardware, state.evaluation, color_by="utilization")
    shade = np.asarray(sources.links.data["shade"], float)
    assert mapped_colors(sources.mapper, shade) == list(util["color"])
    view.color_by = "messages"
    assert sources.color_bar.title == "messages / step"
    # Loihi 2's two meshes: by default each link's busier copy, the one that times it
    ev, existing = state.evaluation, state.hardware.link_table["kind"] >= 0
    busier = ev.link_mesh_messages.max(axis=1)
    assert sources.mapper.high == pytest.approx(busier[existing].max())
    assert busier[existing].max() < ev.max_link_messages  # not both meshes together
    ids = np.asarray(sources.links.data["link"])
    np.testing.assert_array_equal(sources.links.data["value"], busier[ids])
    view.mesh = 1  # one mesh's copy of every link
    np.testing.assert_array_equal(sources.links.data["value"], ev.link_mesh_messages[ids, 1])
    view.color_by = "utilization"
    want = ev.link_mesh_messages[ids, 1] * state.hardware.link_table["us_per_message"][ids]
    np.testing.assert_allclose(sources.links.data["value"], want / ev.latency_us)


def _simulate_shown(state):
    """A StepRunner that has simulated what the state shows and published it (its calls to
    the session kept until the thread is done, as a document's next tick does)."""
    from explorer.step_runner import StepRunner

    calls = []
    runner = StepRunner(state, calls.append)
    runner.request()
    runner.join(60)
    for fn in calls:
        fn()
    return runner


def test_simulated_modes_colour_the_links_by_the_simulated_step():
    state, view, _ = _view()
    sources = view._sources
    view.color_by = "flits"  # nothing simulated yet: the analytic load, and a note saying so
    assert sources.color_by == "messages"
    assert "until it arrives" in view._caption.object
    runner = _simulate_shown(state)
    figures = state.simulation.step.link_figures()
    ids = np.asarray(sources.links.data["link"])
    assert sources.color_by == "flits"
    np.testing.assert_array_equal(sources.links.data["value"], figures["flits"][ids])
    assert sources.mapper.high == figures["flits"].max()
    assert sources.color_bar.title == COLOR_MODES["flits"][0]
    assert f"{state.simulation.step.step_cycles:,} cycles" in view._caption.object
    view.color_by = "busy"
    np.testing.assert_allclose(sources.links.data["value"], figures["busy"][ids])
    assert sources.mapper.high == 1.0
    view.color_by = "buffer"
    assert sources.mapper.high == state.hardware.noc.vcs * state.hardware.noc.buf
    value = np.asarray(sources.links.data["value"])
    assert value.max() >= 1 and np.all(value <= sources.mapper.high)
    hottest = int(np.argmax(figures["flits"][ids]))
    text = simulated_link_text(figures, ids)[hottest]
    assert f"{figures['flits'][ids][hottest]:,} flits" in text and "buffer peak" in text
    # the tooltip writes that line in the browser from the sim_ columns (and the capacity)
    assert "sim_text" not in sources.links.data
    assert sources.links.data["sim_flits"][hottest] == figures["flits"][ids][hottest]
    assert sources.sim_format.args["capacity"] == f"{figures['buffer_capacity']}"
    cores = state.mapping.placement.cores
    state.swap_cores(int(cores[0]), int(cores[8]))  # stale until the new step arrives
    assert "before the last change" in view._caption.object
    runner.close()


def test_a_simulated_step_arriving_rewrites_the_links_but_never_the_cores():
    """A person may be dragging a core just then: rewriting the cores would snap it back."""
    state, view, _ = _view()
    changed = []
    view._sources.cores.on_change("data", lambda attr, old, new: changed.append("cores"))
    view._sources.links.on_change("data", lambda attr, old, new: changed.append("links"))
    runner = _simulate_shown(state)
    assert state.simulation.step is not None
    assert "links" in changed and "cores" not in changed
    changed.clear()
    view.color_by = "busy"  # another colouring: links only too
    assert "links" in changed and "cores" not in changed
    runner.close()


def test_link_loads_export_has_every_link_and_the_simulated_step_when_current():
    import pandas as pd

    state, view, _ = _view()
    frame = pd.read_csv(view.link_loads_csv())
    existing = np.flatnonzero(state.hardware.link_table["kind"] >= 0)
    assert sorted(frame["link"]) == existing.tolist()
    ev = state.evaluation
    np.testing.assert_allclose(frame["messages_per_step"], ev.link_messages[frame["link"]])
    np.testing.assert_allclose(frame["utilization"], ev.link_utilization[frame["link"]])
    assert "simulated_flits" not in frame
    runner = _simulate_shown(state)
    frame = pd.read_csv(view.link_loads_csv())
    flits = state.simulation.step.link_flits
    np.testing.assert_array_equal(frame["simulated_flits"], flits[frame["link"]])
    into_core = frame["kind"] == "router-to-core"
    assert frame.loc[into_core, "buffer_peak_flits"].isna().all()
    assert frame.loc[~into_core & (frame["simulated_flits"] > 0), "buffer_peak_flits"].min() >= 1
    hottest = frame.loc[frame["messages_per_step"].idxmax()]
    assert hottest["kind"] == "router" and hottest["from"].startswith("(")
    runner.close()


def test_the_svg_box_switches_the_figure_to_vector_output():
    state, view, _ = _view()
    fig = view._pane.object
    assert fig.output_backend == "canvas"
    view._svg.value = True  # a new figure, drawn with an SVG canvas from the start
    assert view._pane.object is not fig and view._pane.object.output_backend == "svg"
    fig = view._pane.object
    state.load("linear-dense:M=4,N=64", "loihi2")  # a new figure keeps the choice
    assert view._pane.object is not fig and view._pane.object.output_backend == "svg"


def test_a_compute_bound_mapping_outlines_its_bottleneck_core():
    state, view, _ = _view("mlp:widths=256-512-256-10", "loihi2")
    ev = state.evaluation
    assert ev.bottleneck in ("dendops", "synops", "synmem") and ev.bottleneck_core >= 0
    ring = view._sources.bottleneck_core.data
    x, y = core_positions(state.hardware)
    assert list(ring["core"]) == [ev.bottleneck_core]
    assert ring["x"][0] == x[ev.bottleneck_core] and ring["y"][0] == y[ev.bottleneck_core]
    text = view._caption.object
    assert f"{core_label(state.hardware, ev.bottleneck_core)} (" in text
    assert "outlined in pink" in text
    demo, demo_view, _ = _view()  # link-bound: no core outlined, the link is
    assert len(demo_view._sources.bottleneck_core.data["core"]) == 0
    assert "bound by the pink link" in demo_view._caption.object


def test_core_link_addresses_are_not_cut_short(demo_state):
    links = link_columns(demo_state.hardware, demo_state.evaluation)
    out = links["kind"] == "core-to-router"
    hw = demo_state.hardware
    cores = hw.link_table["core"][links["link"][out]]
    assert list(links["src"][out]) == [core_label(hw, c) for c in cores]
    assert all(re.fullmatch(r"\(\d+,\d+\):\d", s) for s in links["src"][out])


def test_a_board_of_chips_has_an_overview_that_jumps_to_a_chip():
    from explorer.views.mesh_columns import chip_loads, chip_view

    state, view, _ = _view("sparse-mlp-2", "loihi2-x8")
    hw = state.hardware
    assert view._overview_row.visible and view._overview.object is not None
    chips = view._chips.data
    assert list(chips["chip"]) == list(range(hw.n_chips))
    loads = chip_loads(hw, state.evaluation)
    assert loads.max() == pytest.approx(state.evaluation.max_link_messages)
    np.testing.assert_allclose(chips["load"], loads)
    fig = view._pane.object
    view._chips.selected.indices = [5]  # a click on chip 5
    x0, x1, y0, y1 = chip_view(hw, 5)
    assert (fig.x_range.start, fig.x_range.end) == (x0, x1)
    assert (fig.y_range.start, fig.y_range.end) == (y0, y1)
    cx, cy = (5 % hw.chips_x) * hw.width, (5 // hw.chips_x) * hw.height
    assert x0 <= cx and cx + hw.width - 1 <= x1 and y1 <= cy and cy + hw.height - 1 <= y0
    aspect = (hw.grid_width - 1 + 1.24) / (hw.grid_height - 1 + 1.24)
    assert (x1 - x0) / (y0 - y1) == pytest.approx(aspect)  # routers stay square
    view._whole.clicks += 1
    assert fig.x_range.start == -0.62 and fig.x_range.end == hw.grid_width - 1 + 0.62
    one_chip, single, _ = _view()
    assert not single._overview_row.visible  # one chip: nothing to jump between


@pytest.mark.parametrize(("hardware", "detailed"), [("loihi2", True), ("mesh:48x48", False)])
def test_a_mesh_too_fine_to_read_starts_without_its_fine_detail(hardware, detailed):
    """Level of detail: under DETAIL_PX pixels per router the router tiles and dots, arrow
    heads, idle links and empty slots are not drawn; the browser brings them back on zoom."""
    state = ExplorerState.from_specs("mlp:widths=64-128-32-10", hardware)
    fig, sources = mesh_figure(state.hardware, state.network, state.evaluation)
    ppr = fig.frame_width / (fig.x_range.end - fig.x_range.start)
    assert (ppr >= DETAIL_PX) == detailed
    callbacks = fig.x_range.js_property_callbacks
    assert set(callbacks) == {"change:start", "change:end"}
    detail = callbacks["change:start"][0].args["detail"]
    assert len(detail) == 3 and all(r.visible == detailed for r in detail)
    cores = next(r for r in fig.renderers if r.name == "cores")
    fill, line = cores.glyph.fill_color.transform, cores.glyph.line_color.transform
    assert (sources.mapper.nan_color == IDLE_COLOR) == detailed  # idle links
    assert (fill.nan_color == EMPTY_COLOR) == detailed  # empty slots
    assert (line.palette[0] != "rgba(0, 0, 0, 0)") == detailed
    assert [r.visible for r in fig.renderers if r.name in ("links", "cores")] == [True, True]
    legend = next(m for m in fig.below if isinstance(m, Legend))
    assert ("zoom in for" in legend.title) != detailed  # the legend says what is left out


# ------------------------------------------------------------------ Loihi 2's two meshes
def test_a_drag_that_lightens_one_mesh_says_the_other_still_bounds_the_step():
    """Issue 57's drag: the lower-left layer2 core of router (1,0) onto the empty top-left
    slot of router (1,3). The pink link gets lighter over both meshes, but the step's time
    is its busier mesh's, which the drag left alone: the page says so."""
    state, view, errors = _view()
    hw = state.hardware
    before = state.evaluation
    b = before.bottleneck_link
    assert before.bottleneck == "link" and hw.links.meshes == 2
    assert "mesh-unchanged" not in view._caption.object
    dragged, slot = hw.core_id(0, 1, 0, 3), hw.core_id(0, 1, 3, 0)
    assert view.drop(*_dropped(hw, dragged, slot)) and not errors
    after = state.evaluation
    assert after.latency_us == before.latency_us and after.bottleneck_link == b
    assert after.link_messages[b] < before.link_messages[b]  # lighter over both meshes …
    busier = int(np.argmax(after.link_mesh_messages[b]))
    kept = after.link_mesh_messages[b, busier]
    assert kept == before.link_mesh_messages[b, busier]  # … but not on its busier mesh
    text = view._caption.object
    assert 'data-testid="mesh-unchanged"' in text
    assert f"got lighter ({before.link_messages[b]:,.0f} → {after.link_messages[b]:,.0f}" in text
    assert (
        f"the other mesh&#x27;s copy of this link (mesh {busier}) still carries {kept:,.0f}" in text
    )
    # the caption and the inspector give both meshes' figures
    split = mesh_split_text(hw, after, b)
    assert f"{kept:,.0f} on mesh {busier}" in split and split in text
    view.inspect("link", b)
    facts = view.inspection.facts
    assert (
        facts[f"mesh {busier}"].startswith(f"{kept:,.1f}") and "busier" in facts[f"mesh {busier}"]
    )
    assert facts[f"mesh {1 - busier}"] == f"{after.link_mesh_messages[b, 1 - busier]:,.1f}"
    # a change that moves the time says nothing of the kind
    assert unchanged_text(hw, before, state.evaluation) != ""
    cores = state.mapping.placement.cores
    state.swap_cores(int(cores[0]), int(cores[-1]))
    if state.evaluation.latency_us != after.latency_us:
        assert "mesh-unchanged" not in view._caption.object


def test_no_sentence_when_nothing_on_the_links_changed(demo_state):
    ev = demo_state.evaluation
    assert unchanged_text(demo_state.hardware, ev, ev) == ""


def test_a_change_under_a_compute_bound_step_names_the_core_that_bounds_it():
    state, view, _ = _view("mlp:widths=256-512-256-10", "loihi2")
    hw, before = state.hardware, state.evaluation
    assert before.bottleneck in ("dendops", "synops", "synmem")
    cores = state.mapping.placement.cores
    empty = int(np.setdiff1d(np.arange(hw.n_cores), cores)[-1])
    moved = next(int(c) for c in cores if c != before.bottleneck_core)
    state.swap_cores(moved, empty)  # links change, the busiest core does not
    after = state.evaluation
    assert after.latency_us == before.latency_us
    assert np.any(after.link_messages != before.link_messages)
    where = core_label(hw, after.bottleneck_core)
    text = unchanged_text(hw, before, after, state.network)
    assert "the change moved" in text and f"of core {where} (" in text
    assert text.endswith("bounds the step, not a link.")
    assert f"of core {where} (" in view._top_line.object  # the short line says it too
    assert "not a link" in view._top_line.object


def test_the_chip_overview_has_a_colour_scale_up_to_its_heaviest_chip(two_chip_state):
    """Issue 57, item 4: the chip map's colours had no scale. Its colour bar runs from 0 to
    the heaviest chip's heaviest link, the top of the colours the chips get."""
    from bokeh.models import ColorBar

    from explorer.views.mesh import MeshView

    view = MeshView(state=two_chip_state)
    fig = view._overview.object
    (bar,) = [m for m in fig.right if isinstance(m, ColorBar)]
    loads = np.asarray(view._chips.data["load"], float)
    assert loads.max() > 0 and bar.color_mapper.high == loads.max() and bar.color_mapper.low == 0
    heaviest = int(np.argmax(loads))
    assert view._chips.data["color"][heaviest] == bar.color_mapper.palette[-1]
