"""Click a link or a core: the flows through it, their routes highlighted, rows that narrow it."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest

from engine.evaluation.flows import route_links
from explorer.state import ExplorerState
from explorer.views.inspect import InspectView
from explorer.views.mesh import MeshView
from explorer.views.mesh_columns import core_positions, hit_test, link_columns


@pytest.fixture
def view():
    state = ExplorerState.from_specs("sparse-mlp-1", "loihi2")
    errors: list[str] = []
    return MeshView(state=state, notify=errors.append), errors


def _middle(view, link: int) -> tuple[float, float]:
    data = view._sources.links.data
    row = int(np.flatnonzero(np.asarray(data["link"]) == link)[0])
    return float(data["xm"][row]), float(data["ym"][row])


def test_a_click_finds_the_core_or_the_link_under_it(demo_state):
    hw, ev = demo_state.hardware, demo_state.evaluation
    links = link_columns(hw, ev)
    x, y = core_positions(hw)
    assert hit_test(hw, links, x[17], y[17]) == ("core", 17)
    for row in (0, 5, len(links["link"]) - 1):
        xm, ym = links["xm"][row], links["ym"][row]
        assert hit_test(hw, links, xm, ym) == ("link", int(links["link"][row]))
    assert hit_test(hw, links, -0.5, -0.5) is None  # the margin: nothing


def test_clicking_the_hot_link_lists_its_flows_and_highlights_their_routes(view):
    mesh, errors = view
    s = mesh.state
    hot = int(s.evaluation.bottleneck_link)
    assert mesh.tap(*_middle(mesh, hot))
    ins = mesh.inspection
    assert (ins.kind, ins.target) == ("link", hot)
    ((caption, flows),) = ins.tables
    assert flows.messages.sum() == pytest.approx(s.evaluation.link_messages[hot], rel=1e-6)
    cores = s.mapping.placement.cores
    expected = np.unique(np.concatenate([
        route_links(s.hardware, int(cores[a]), int(cores[b]))
        for a, b in zip(flows.src_part, flows.dst_part, strict=True)
    ]))  # fmt: skip
    drawn = mesh._sources.highlight.data
    assert len(drawn["x0"]) == expected.size and hot in expected
    assert mesh._sources.link_glyph.line_alpha < 1  # the others are dimmed
    assert not errors


def test_ticked_rows_narrow_the_highlight_and_the_csv_has_every_row(view):
    mesh, _ = view
    panel = InspectView(mesh=mesh)
    mesh.inspect("link", int(mesh.state.evaluation.bottleneck_link))
    ins = mesh.inspection
    table = panel.tables[0]
    assert len(table.value) == len(ins.tables[0][1])
    everything = len(mesh._sources.highlight.data["x0"])
    panel.select(0, [0])
    one = ins.route_ids(0, [0])
    assert len(mesh._sources.highlight.data["x0"]) == one.size < everything
    panel.select(0, [])
    assert len(mesh._sources.highlight.data["x0"]) == everything
    csv = pd.read_csv(io.StringIO(panel._csv().getvalue()))
    assert len(csv) == len(ins.tables[0][1])
    assert csv["messages / step"].sum() == pytest.approx(ins.tables[0][1].messages.sum())


def test_clicking_a_core_shows_its_terms_memory_and_flows(view):
    mesh, _ = view
    s = mesh.state
    core = int(s.mapping.placement.cores[5])
    x, y = core_positions(s.hardware)
    assert mesh.tap(x[core], y[core])
    ins = mesh.inspection
    assert ins.kind == "core" and ins.target == core
    assert "synmem term" in ins.facts and "bytes of core memory" in ins.facts
    assert "of 131,072" in ins.facts["bytes of core memory"]
    assert [caption for caption, _ in ins.tables] == ["outbound flows", "inbound flows"]
    assert sum(len(t) for _, t in ins.tables) > 0


def test_an_empty_core_and_empty_space(view):
    mesh, _ = view
    s = mesh.state
    empty = int(np.setdiff1d(np.arange(s.hardware.n_cores), s.mapping.placement.cores)[0])
    mesh.inspect("core", empty)
    assert mesh.inspection.title.endswith("empty") and not mesh.inspection.tables
    assert not mesh.tap(-0.5, -0.5)  # a click on nothing ends the inspection
    assert mesh.inspection is None and len(mesh._sources.highlight.data["x0"]) == 0
    assert mesh._sources.link_glyph.line_alpha == 1


def test_the_inspection_follows_a_drag(view):
    """After a swap the same link is explained again, with the flows it carries now."""
    mesh, _ = view
    s = mesh.state
    hot = int(s.evaluation.bottleneck_link)
    mesh.inspect("link", hot)
    before = mesh.inspection.facts["messages / step"]
    cores = s.mapping.placement.cores
    s.swap_cores(int(cores[3]), int(cores[-1]))
    assert mesh.inspection.target == hot
    assert mesh.inspection.facts["messages / step"] != before


def test_the_layer_filter_shows_one_layers_load(view):
    """Links coloured by the flows that leave one layer; all layers again when cleared."""
    mesh, _ = view
    s = mesh.state
    whole = np.asarray(mesh._sources.links.data["messages"]).copy()
    mesh.layers = [2]
    narrowed = np.asarray(mesh._sources.links.data["messages"])
    assert narrowed.sum() < whole.sum() and np.all(narrowed <= whole + 1e-6)
    ids = np.asarray(mesh._sources.links.data["link"])
    g = s._evaluator.graph
    expected = s.inspection.layer_evaluation([2]).link_messages[ids]
    np.testing.assert_allclose(narrowed, expected)
    assert g.pair_messages[g.population[g.pair_src] == 2].sum() > 0
    assert "only the flows that leave layer2" in mesh._caption.object
    mesh.layers = list(range(s.network.n_populations))  # every layer: the whole load
    np.testing.assert_allclose(mesh._sources.links.data["messages"], whole, rtol=1e-9)
    mesh.layers = []
    np.testing.assert_allclose(mesh._sources.links.data["messages"], whole)
