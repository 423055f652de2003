"""The Mosaic view without a browser: what it draws is what engine.mosaic computes — the
grid's occupancy, a clicked NT's shared-path tree, P(θ), the removals — and bad input is
a notification that leaves the drawing as it was."""

from __future__ import annotations

import numpy as np
import pytest

from engine.hardware import load_hardware
from engine.mapping.placement import placers
from engine.mosaic import MosaicGrid, nt_of_neurons, profile_of, removals, routing_memory
from engine.mosaic.profile import parse_target, random_network, sequential_nt
from engine.pipeline import build_mapping
from engine.specs import load_network_spec
from explorer.state import ExplorerState
from explorer.views.mosaic import (
    DEFAULT_SPEC,
    DEFAULT_TARGET,
    SOURCES,
    MosaicView,
    mosaic_presets,
    occupancy_colors,
    outbound,
)

STEP = {"E": (0, 1), "W": (0, -1), "S": (1, 0), "N": (-1, 0)}


def engine_memory(target=DEFAULT_TARGET, spec=None, hardware="mosaic-8x8", placer="packed-row",
                  shared=True, seed=0):  # fmt: skip
    """The engine's own answer, computed here the way the brief of the tab says."""
    hw = load_hardware(hardware)
    grid = MosaicGrid(hw)
    if spec is None:
        nt = sequential_nt(grid.n_nt * hw.limits.neurons, hw)
        network = random_network(hw, nt, parse_target(target), seed=seed)
    else:
        network = load_network_spec(spec)
    mapped = build_mapping(network, hw, partition="sequential", placement=placer, seed=seed)
    nt_of = nt_of_neurons(mapped.network, hw, mapped.mapping)
    return mapped.network, nt_of, routing_memory(mapped.network, hw, nt_of, shared=shared)


def segments(data: dict, part: str) -> set:
    """The tree's arrows of one part as ((row, col) from, (row, col) to)."""
    rows = zip(data["x0"], data["y0"], data["x1"], data["y1"], data["part"], strict=True)
    return {((y0, x0), (y1, x1)) for x0, y0, x1, y1, p in rows if p == part}


@pytest.fixture
def view():
    return MosaicView()


@pytest.fixture
def shown(monkeypatch):
    """Notifications the view raises."""
    said: list[str] = []
    monkeypatch.setattr("explorer.views.mosaic.notify_error", said.append)
    return said


def test_the_default_view_draws_the_engines_occupancy(view):
    network, nt_of, memory = engine_memory()
    tiles = view.tiles.data
    assert len(tiles["x"]) == 17 * 17 == memory.grid.n_tiles
    assert np.allclose(tiles["occupancy"], memory.occupancy.ravel())
    assert list(tiles["rows"]) == memory.rows.ravel().tolist()
    assert list(tiles["entries"]) == memory.entries.ravel().tolist()
    r, c = np.indices(memory.grid.shape)
    assert list(tiles["x"]) == c.ravel().tolist() and list(tiles["y"]) == r.ravel().tolist()
    assert np.array_equal(view.result.nt_of, nt_of)
    # the demo: it fits, with a few Routing Tiles near full
    rt = memory.grid.kind.ravel() != 0
    hot = np.asarray(tiles["occupancy"])[rt] > 0.8
    assert memory.mappable and 1 <= hot.sum() <= 10
    assert "fits" in view.summary.object and f"{memory.routing_entries:,}" in view.summary.object
    assert not view.removals.objects and view.error == ""


def test_tiles_are_drawn_by_kind_and_overflowing_ones_outlined(view):
    view.routing = "unicast"
    tiles, memory = view.tiles.data, view.result.memory
    kinds = np.array(tiles["kind"])
    assert {k: int((kinds == k).sum()) for k in ("NT", "RT0", "RT1")} == {
        "NT": 64, "RT0": 144, "RT1": 81
    }  # fmt: skip
    over = np.flatnonzero(np.array(tiles["line_color"]) == "#d7191c")
    assert over.tolist() == memory.overflowing.tolist() and over.size == 2
    nt_index = np.flatnonzero(kinds == "NT")
    assert np.array_equal(np.asarray(tiles["nt"])[nt_index], np.arange(64))
    sizes = np.asarray(tiles["size"])
    assert sizes[kinds == "NT"].min() > sizes[kinds != "NT"].max()  # NTs stand out
    assert set(np.asarray(tiles["angle"])[kinds == "RT1"]) == {np.pi / 4}  # RT1: diamonds


def test_the_colour_scale_runs_to_the_fullest_tile_blue_up_to_one(view):
    assert view._mapper.high == 1.0 and view._mapper.palette == occupancy_colors(1.0)
    view.placer = "random"
    high = float(view.result.memory.occupancy.max())
    assert high > 1 and view._mapper.high == pytest.approx(high)
    palette = occupancy_colors(high)
    fit = int(len(palette) / high) + 1
    assert palette[fit - 1] == "#08306b" and palette[fit] == "#fdae6b"  # orange past 1


def test_a_clicked_nt_draws_the_union_tree_of_its_neurons(view):
    network, nt_of, memory = engine_memory()
    grid, nt = memory.grid, 27
    own = np.flatnonzero(nt_of == nt)
    dests = {
        int(nt_of[d])
        for n in own
        for d in network.indices[network.indptr[n] : network.indptr[n + 1]]
    }
    dests.discard(nt)
    tree = grid.tree(nt, dests)
    view.select_nt(nt)
    out, entry = segments(view.tree.data, "out"), segments(view.tree.data, "from NT")
    expected = {
        ((r, c), (r + STEP[d][0], c + STEP[d][1])) for (r, c), ds in tree.items() for d in ds
    }
    assert out == expected and len(out) == sum(len(d) for d in tree.values())
    r0, c0 = (int(v) for v in grid.nt_tile(nt))
    assert entry and all(a == (r0, c0) and b in tree and abs(b[0] - r0) + abs(b[1] - c0) == 1
                         for a, b in entry)  # fmt: skip
    assert view.outbound.destinations == tuple(sorted(dests))
    ends = list(zip(view.ends.data["y"], view.ends.data["x"], strict=True))
    assert ends[0] == (r0, c0) and len(ends) == 1 + len(dests)
    text = view.tree_text.object
    assert f"NT {nt}</b> at tile ({r0}, {c0})" in text
    assert f"<b>{len(dests)}</b> other NTs through <b>{len(tree)}</b> RTs" in text
    view.select_nt(None)  # a click elsewhere
    assert view.tree.data["x0"] == [] and "Click a Neuron Tile" in view.tree_text.object


def test_a_tap_on_the_nt_glyphs_selects_that_nt(view):
    tile = int(MosaicGrid(view.result.hardware).nt_tile_id[9])
    view._on_tap("indices", [], [tile])
    assert view.selected_nt == 9 and view.outbound.nt == 9
    view._on_tap("indices", [tile], [])
    assert view.selected_nt is None and view.outbound is None


@pytest.mark.parametrize("shared", [True, False])
def test_every_nts_entries_add_up_to_the_routing_memory(view, shared):
    view.routing = "shared-path" if shared else "unicast"
    result = view.result
    per_nt = [outbound(result, nt) for nt in range(result.grid.n_nt)]
    assert sum(o.entries for o in per_nt) == result.memory.routing_entries
    assert sum(o.other_entries for o in per_nt) == result.other_entries


def test_shared_and_unicast_routing_count_as_the_engine_does(view):
    _, _, shared = engine_memory(shared=True)
    _, _, unicast = engine_memory(shared=False)
    assert view.result.memory.routing_entries == shared.routing_entries
    assert view.result.other_entries == unicast.routing_entries
    assert f"(unicast: {unicast.routing_entries:,})" in view.summary.object
    view.routing = "unicast"
    assert view.result.memory.routing_entries == unicast.routing_entries
    assert np.allclose(view.tiles.data["occupancy"], unicast.occupancy.ravel())
    assert unicast.routing_entries > shared.routing_entries
    assert not view.result.memory.mappable and "does not fit" in view.summary.object


def test_a_network_that_does_not_fit_lists_the_engines_removals(view):
    view.routing = "unicast"
    memory = view.result.memory
    expected = [
        (f"({t['tile'][0]}, {t['tile'][1]})", t["excess"], r["neuron"],
         ", ".join(map(str, r["to_nt"])), r["synapses"])
        for t in removals(memory) for r in t["remove"]
    ]  # fmt: skip
    table = view.table.value
    got = list(zip(table["tile"], table["excess"], table["neuron"], table["to NTs"],
                   table["synapses"], strict=True))  # fmt: skip
    assert view.removals.objects == [view.table] and got == expected and len(got) == 3
    assert "3 (neuron, tile) rows" in view.removals_note.object
    view.routing = "shared-path"  # fits again: no table
    assert not view.removals.objects and view.removals_note.object == ""


def test_the_profile_chart_is_profile_of(view):
    result = view.result
    prof = profile_of(result.hardware, result.nt_of, result.network)
    data = view.profile_source.data
    hops = np.asarray(data["hop"])
    assert hops.tolist() == [0, 1, 3, 5, 7]  # 0 and odd; up to one past the last used
    assert np.allclose(data["p"], prof.p[hops])
    assert list(data["connections"]) == prof.connections[hops].tolist()
    assert list(data["pairs"]) == prof.pairs[hops].tolist()
    assert not prof.connections[hops[-1] :].any() and (prof.pairs[2::2] == 0).all()
    target = view.target_source.data
    assert np.allclose(target["target"], [0.5, 0.01, 0.022, 0.002, 0.0])
    assert view._target_legend.visible
    assert np.allclose(data["p"][:4], [0.5, 0.01, 0.022, 0.002], rtol=0.02)  # drawn for it


def test_a_target_for_an_even_distance_is_said_to_be_impossible(view):
    view.target = "0.3,0.01,0.05"
    assert view.error == ""
    assert "p̂2 = 0.05</b>: no two NTs are that far apart" in view.profile_note.object


@pytest.mark.parametrize(
    ("change", "says"),
    [
        ({"target": "0.5,zz"}, "a target profile is densities"),
        ({"target": "0.5,1.5"}, "must lie in [0, 1]"),
        ({"target": "0.5,0.1,0,0.02"}, "needs 110 cores; mosaic-8x8 has 64"),
        ({"source": SOURCES[1], "spec": "no-such-net"}, "unknown network 'no-such-net'"),
        ({"source": SOURCES[1], "spec": "/etc/hosts"}, "opens no files its users name"),
        ({"source": SOURCES[1], "spec": "rand:n=4096"}, "needs at least 257 cores"),
        ({"target": "0.5,0.01,0,0.022,0,0.004"}, "needs 65 cores"),  # an NT's inputs overflow
    ],
)
def test_bad_input_is_a_notification_and_the_drawing_stays(view, shown, change, says):
    before = {k: list(v) for k, v in view.tiles.data.items()}
    summary, result = view.summary.object, view.result
    view.param.update(**change)
    assert shown and says in shown[-1] and view.error == shown[-1]
    assert view.result is result and view.summary.object == summary
    assert {k: list(v) for k, v in view.tiles.data.items()} == before
    view.param.update(source=SOURCES[0], target=DEFAULT_TARGET, spec=DEFAULT_SPEC, seed=0)
    assert view.error == "" and view.result is result  # back to what is drawn
    view.seed = 2  # another network: drawn
    assert view.error == "" and view.result is not result


def test_a_network_spec_with_spike_sources_is_placed_and_routed(view):
    view.param.update(source=SOURCES[1], spec=DEFAULT_SPEC)
    network, nt_of, memory = engine_memory(spec=DEFAULT_SPEC)
    assert view.error == "" and (view.result.nt_of < 0).any()  # the input layer: no NT
    assert np.array_equal(view.result.nt_of, nt_of)
    assert np.allclose(view.tiles.data["occupancy"], memory.occupancy.ravel())
    assert view.target_source.data["d"] == [] and not view._target_legend.visible


def test_a_resized_mosaic_and_another_placer(view):
    view.select_nt(5)
    view.param.update(rows=4, columns=6)
    assert view.tiles.data["x"].size == 9 * 13 and view.selected_nt is None
    assert view.grid_figure.x_range.end == pytest.approx(12.6)
    assert view.result.hardware.name == "mosaic-8x8@4x6"
    view.placer = "hilbert"
    _, nt_of, memory = engine_memory(hardware="mosaic-8x8@4x6", placer="hilbert")
    assert np.array_equal(view.result.nt_of, nt_of)
    assert np.allclose(view.tiles.data["occupancy"], memory.occupancy.ravel())
    view.preset = "mosaic-8x8"  # back to the preset's own size … already it; set again:
    view.param.update(rows=8, columns=8)
    assert view.result.hardware.name == "mosaic-8x8"


def test_the_choices_are_the_mosaic_presets_and_general_placers(view):
    assert view.param.preset.objects == list(mosaic_presets())
    assert "mosaic-8x8" in mosaic_presets() and "loihi2" not in mosaic_presets()
    assert {"packed-row", "random", "hilbert", "spectral"} <= set(view.param.placer.objects)
    assert not set(placers.names("pattern")) & set(view.param.placer.objects)


def test_the_session_decides_what_a_client_may_name(demo_state):
    view = MosaicView(state=demo_state)
    view.param.update(source=SOURCES[1], spec="demo_networks/../../etc/hosts")
    assert "opens no files" in view.error
    view.spec = "qubo-1000.npz"  # a demo file: allowed (and too big for 64 NTs)
    assert "opens no files" not in view.error and "cores" in view.error


def test_the_app_offers_the_tab_and_builds_it_when_first_shown():
    from explorer.app import tabs

    state = ExplorerState.from_specs("mlp:widths=64-128-32-10", "loihi2")
    titles = dict(tabs(state))
    assert list(titles)[-1] == "Mosaic"
    view = titles["Mosaic"]()  # what the lazy tab builds on its first show
    assert isinstance(view, MosaicView) and view.state is state and view.result is not None
