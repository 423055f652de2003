"""Click the hot link in a real browser: its flows fill a table, their routes light up, and
ticking a row narrows the highlight."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from .conftest import open_in

HOT_LINK_XY = """() => {
  const plot = [...Bokeh.index.all_views()].find(
    (v) => v.model.type === "Figure" && v.model.renderers.some((r) => r.name === "cores"));
  const d = plot.model.renderers.find((r) => r.name === "links").data_source.data;
  let k = 0;
  for (let i = 0; i < d.messages.length; i++) if (d.messages[i] > d.messages[k]) k = i;
  const c = plot.canvas_view.el.getBoundingClientRect();
  return [c.left + plot.frame.x_scale.compute(d.xm[k]),
          c.top + plot.frame.y_scale.compute(d.ym[k])];
}"""

TABLE_ROWS = """() => {
  const doc = Bokeh.documents[0];
  const table = [...doc.all_models].find((m) => m.type.endsWith("DataTabulator"));
  return table ? table.source.get_length() : -1;
}"""

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
    box = page.get_by_placeholder("all layers")
    box.click()
    box.press_sequentially("layer5")  # typed: the list narrows to it
    page.keyboard.press("Enter")
    page.wait_for_function(f"() => ({LOAD_SUM})() < {whole}")
    expect(page.get_by_text("Links show only the flows that leave layer5")).to_be_visible()
