"""The Mosaic tab in a real browser: the tile grid is drawn, a click on a Neuron Tile draws
its shared-path tree, unicast routing overflows tiles and lists what to remove, a bad
profile is a notification that leaves the drawing alone; the page fits 1366 px."""

from __future__ import annotations

import os
from pathlib import Path

import panel as pn
import pytest
from playwright.sync_api import expect

from explorer.browser import layout_settled, open_in, served_view
from explorer.views.mosaic import MosaicView

SCREENSHOT = Path(__file__).resolve().parents[2] / "assets" / "explorer-mosaic.png"

# The tile grid once Bokeh has drawn it: its rows and the frame's place on the page.
GRID_DRAWN = """() => {
  if (!window.Bokeh || !Bokeh.index) return null;
  const plot = [...Bokeh.index.all_views()].find(
    (v) => v.model.type === "Figure" && v.model.name === "mosaic-grid");
  if (!plot || !plot.has_finished()) return null;
  const tiles = plot.model.renderers.find((r) => r.name === "mosaic-nt").data_source;
  const canvas = plot.canvas_view.el.getBoundingClientRect();
  return {tiles: tiles.get_length(), canvas: canvas.width * canvas.height};
}"""

# Page coordinates of the centre of NT ``nt``'s tile.
NT_XY = """(nt) => {
  const plot = [...Bokeh.index.all_views()].find(
    (v) => v.model.type === "Figure" && v.model.name === "mosaic-grid");
  const data = plot.model.renderers.find((r) => r.name === "mosaic-nt").data_source.data;
  const i = [...data.nt].indexOf(nt);
  const canvas = plot.canvas_view.el.getBoundingClientRect();
  return [canvas.left + plot.frame.x_scale.compute(data.x[i]),
          canvas.top + plot.frame.y_scale.compute(data.y[i])];
}"""

LENGTH = """(name) => {
  const s = Bokeh.documents[0].get_model_by_name(name);
  return s ? s.get_length() : null;
}"""

WIDTH = "() => document.documentElement.scrollWidth"


@pytest.fixture(scope="module")
def mosaic_url():
    def app():
        pn.extension("tabulator", notifications=True)
        return MosaicView()

    MosaicView()  # load the engine's kernels before the first page
    with served_view("mosaic", app, "MeshScope Mosaic") as url:
        yield url


def _open(page, url: str):
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.set_viewport_size({"width": 1366, "height": 900})
    with page.expect_console_message(lambda m: "is now open" in m.text, timeout=30_000):
        page.goto(url)
    page.wait_for_function(GRID_DRAWN)
    return errors


@pytest.mark.ui
def test_the_grid_draws_and_a_click_on_an_nt_draws_its_tree(page, mosaic_url):
    errors = _open(page, mosaic_url)
    drawn = page.evaluate(GRID_DRAWN)
    assert drawn["tiles"] == 17 * 17 and drawn["canvas"] > 0
    summary = page.get_by_test_id("mosaic-summary")
    expect(summary).to_contain_text("fits")
    expect(summary).to_contain_text("routing entries 4,570")
    assert page.evaluate(WIDTH) <= 1366
    x, y = page.evaluate(NT_XY, 27)
    page.mouse.click(x, y)
    tree = page.get_by_test_id("mosaic-tree")
    expect(tree).to_contain_text("NT 27 at tile (7, 7)")
    assert page.evaluate(LENGTH, "mosaic-tree") > 0
    page.wait_for_timeout(400)  # two clicks closer than ~300 ms are a double tap
    page.mouse.click((x + page.evaluate(NT_XY, 28)[0]) / 2, y)  # the RT0 beside: cleared
    expect(tree).to_contain_text("Click a Neuron Tile")
    assert page.evaluate(LENGTH, "mosaic-tree") == 0
    assert errors == []


@pytest.mark.ui
def test_unicast_overflows_and_a_bad_profile_keeps_the_drawing(page, mosaic_url):
    errors = _open(page, mosaic_url)
    summary = page.get_by_test_id("mosaic-summary")
    page.get_by_role("button", name="unicast").click()
    expect(summary).to_contain_text("does not fit")
    expect(page.get_by_test_id("mosaic-overflowing")).to_have_text("2")
    expect(page.get_by_test_id("mosaic-removals")).to_contain_text("3 (neuron, tile) rows")
    expect(page.locator(".tabulator-row")).to_have_count(3)
    before = summary.text_content()
    target = page.get_by_label("target profile")
    target.fill("0.5,zz")
    target.press("Enter")
    expect(page.get_by_text("a target profile is densities").first).to_be_visible()
    expect(summary).to_have_text(before)
    assert page.evaluate(WIDTH) <= 1366
    assert errors == []


@pytest.mark.ui
def test_the_mosaic_tab_renders_in_the_app_within_1366_px(page, demo_url):
    page.set_viewport_size({"width": 1366, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    open_in(page, demo_url)
    page.locator(".bk-tab").filter(has_text="Mosaic").first.click()
    page.wait_for_function(GRID_DRAWN, timeout=30_000)
    expect(page.get_by_test_id("mosaic-summary")).to_contain_text("fits")
    layout_settled(page)
    assert page.evaluate(WIDTH) <= 1366
    assert errors == []
    if os.environ.get("MESHSCOPE_SCREENSHOTS") or os.environ.get("UPDATE_SCREENSHOTS") == "1":
        page.get_by_role("button", name="unicast").click()  # overflowing tiles in the picture
        expect(page.get_by_test_id("mosaic-overflowing")).to_have_text("2")
        expect(page.locator(".tabulator-row")).to_have_count(3)
        x, y = page.evaluate(NT_XY, 18)  # and a tree
        page.mouse.click(x, y)
        expect(page.get_by_test_id("mosaic-tree")).to_contain_text("NT 18")
        page.get_by_test_id("mosaic-summary").click()  # no focus ring on the plot
        page.mouse.move(1360, 5)  # nor a tooltip
        SCREENSHOT.parent.mkdir(exist_ok=True)
        page.screenshot(path=SCREENSHOT, full_page=True)
        assert SCREENSHOT.stat().st_size > 10_000
