"""Click the hot link in a real browser: its flows fill a table, their routes light up, and
ticking a row narrows the highlight."""

from __future__ import annotations

import csv
import re

import numpy as np
import pytest
from playwright.sync_api import expect

from explorer.browser import CORE_XY, DEMO, HOT_LINK_XY, TABLE_ROWS, open_in

HIGHLIGHTED = """() => {
  const plot = [...Bokeh.index.all_views()].find(
    (v) => v.model.type === "Figure" && v.model.renderers.some((r) => r.name === "cores"));
  return plot.model.renderers.find((r) => r.name === "highlight").data_source.get_length();
}"""


@pytest.mark.ui
def test_clicking_the_hot_link_shows_its_flows_and_their_routes(page, demo_url):
    open_in(page, demo_url)
    assert page.evaluate(HIGHLIGHTED) == 0
    page.mouse.click(*page.evaluate(HOT_LINK_XY))
    header = page.get_by_test_id("inspect-header")
    expect(header).to_contain_text("Link E", timeout=15_000)
    flows = int(re.search(r"flows (\d+)", header.text_content()).group(1))
    page.wait_for_function(f"() => ({TABLE_ROWS})() === {flows}")  # a row per flow
    rows = page.locator(".tabulator-row")  # (the rows in view: the table scrolls)
    page.wait_for_function(f"() => ({HIGHLIGHTED})() > 0")
    everything = page.evaluate(HIGHLIGHTED)
    rows.first.locator("input[type=checkbox]").click()  # one flow: only its route
    page.wait_for_function(f"() => ({HIGHLIGHTED})() < {everything}")
    page.get_by_role("button", name="Clear").click()
    expect(header).to_be_hidden()
    page.wait_for_function(f"() => ({HIGHLIGHTED})() === 0")


LOAD_SUM = """() => {
  const plot = [...Bokeh.index.all_views()].find(
    (v) => v.model.type === "Figure" && v.model.renderers.some((r) => r.name === "cores"));
  const m = plot.model.renderers.find((r) => r.name === "links").data_source.data.messages;
  let s = 0; for (const v of m) s += v; return s;
}"""


@pytest.mark.ui
def test_the_layer_filter_narrows_the_heatmap(page, demo_url):
    open_in(page, demo_url)
    whole = page.evaluate(LOAD_SUM)
    page.locator(".lf-toggle").click()  # the filter's menu: a check box per layer
    page.locator(".lf-item").filter(has_text="layer5").click()
    page.wait_for_function(f"() => ({LOAD_SUM})() < {whole}")
    expect(page.get_by_text("Links show only the flows that leave layer5")).to_be_visible()
    # the links now carry layer5's load, as the engine computes it for the page's mapping
    from explorer.state import ExplorerState

    state = ExplorerState.from_specs(DEMO["network"], DEMO["hardware"])
    layer = state.network.population_names.index("layer5")
    assert page.evaluate(LOAD_SUM) == pytest.approx(
        state.inspection.layer_evaluation([layer]).link_messages.sum(), rel=1e-6
    )


@pytest.mark.ui
def test_the_flows_of_a_clicked_link_download_as_csv(page, demo_url):
    """The CSV holds every flow the engine finds through the clicked link, heaviest first."""
    from engine.evaluation.flows import core_label, flows_through, parse_link
    from engine.mapping.partition_graph import partition_graph
    from explorer.state import ExplorerState

    open_in(page, demo_url)
    page.mouse.click(*page.evaluate(HOT_LINK_XY))
    header = page.get_by_test_id("inspect-header")
    expect(header).to_contain_text("Link E", timeout=15_000)
    with page.expect_download() as got:
        page.get_by_role("button", name="Flows as CSV").click()
    download = got.value
    assert download.suggested_filename == "flows.csv"
    with open(download.path(), newline="") as f:  # noqa: PTH123
        header_row, *rows = list(csv.reader(f))
    assert header_row == ["from layer", "from core", "to layer", "to core", "messages / step",
                          "share", "hops", "flows"]  # fmt: skip
    # the same link and mapping in the engine alone: the page's demo, as it opens
    state = ExplorerState.from_specs(DEMO["network"], DEMO["hardware"])
    hw, mapping = state.hardware, state.mapping
    title = re.search(r"Link (\S+ \(\d+,\d+\)->\(\d+,\d+\))", header.text_content())[1]
    link = parse_link(hw, title)
    assert link == int(np.argmax(state.evaluation.link_messages))  # the hot link was clicked
    graph = partition_graph(state.network, hw, mapping.partition)
    flows = flows_through(hw, graph, mapping.placement.cores, link)
    names = state.network.population_names

    def core(c: int) -> str:
        return core_label(hw, c)

    columns = (flows.src_pop, flows.src_core, flows.dst_pop, flows.dst_core, flows.messages,
               flows.share, flows.hops)  # fmt: skip
    want = [
        [names[sp], core(sc), names[dp], core(dc), m, s, h]
        for sp, sc, dp, dc, m, s, h in zip(*(c.tolist() for c in columns), strict=True)
    ]
    assert len(want) > 1
    got_rows = [[a, b, c, d, float(m), float(s), int(h)] for a, b, c, d, m, s, h, _ in rows]
    assert got_rows == want  # (pandas writes floats exactly: they read back equal)
    assert {r[-1] for r in rows} == {"flows"}
    assert sum(float(r[5]) for r in rows) == pytest.approx(1.0)  # the link's whole load


@pytest.mark.ui
def test_clicking_a_core_shows_its_terms_memory_and_routes(page, demo_url):
    """The core the demo's mapping puts its first partition on: its header, its terms and
    memory against the preset's limits, its outbound and inbound flows and their routes."""
    from explorer.state import ExplorerState

    state = ExplorerState.from_specs(DEMO["network"], DEMO["hardware"])
    core = int(state.mapping.placement.cores[0])
    want = state.inspection.core(core)
    open_in(page, demo_url)
    page.mouse.click(*page.evaluate(CORE_XY, [core])[0])
    header = page.get_by_test_id("inspect-header")
    from engine.evaluation.flows import core_label

    label = core_label(state.hardware, core)  # (x,y):s, as every caption and table names it
    expect(header).to_contain_text(f"Core {label}", timeout=15_000)
    for label, value in want.facts.items():  # terms, memory "… of limit (share)"
        expect(header).to_contain_text(f"{label} {value}")
    expect(page.get_by_text(f"outbound flows: {len(want.tables[0][1]):,}")).to_be_visible()
    expect(page.get_by_text(f"inbound flows: {len(want.tables[1][1]):,}")).to_be_visible()
    page.wait_for_function(f"() => ({HIGHLIGHTED})() > 0")  # their routes on the mesh


@pytest.mark.ui
def test_a_clicked_links_flows_come_into_view_at_1366_by_768(page, demo_url):
    """Issue 40, item 5: the flow table opened ~1,160 px down the page with no cue. After a
    click on a link, its flows are in the window."""
    page.set_viewport_size({"width": 1366, "height": 768})
    open_in(page, demo_url)
    page.mouse.click(*page.evaluate(HOT_LINK_XY))
    header = page.get_by_test_id("inspect-header")
    expect(header).to_contain_text("Link E", timeout=15_000)
    expect(header).to_be_in_viewport(timeout=10_000)
