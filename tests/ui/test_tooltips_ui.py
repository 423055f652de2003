"""The mesh's tooltips in a real browser. Their names, addresses and the simulated line
travel as numbers and are written out in the page (``mesh._tooltip_formats``): every
link's and core's tooltip must read as ``mesh_columns`` writes the same thing."""

from __future__ import annotations

import numpy as np
import pytest
from playwright.sync_api import expect

from explorer.app import build_app
from explorer.browser import MESH_PLOT, open_in, served_view
from explorer.state import ExplorerState
from explorer.views.mesh_columns import core_columns, link_geometry, simulated_link_text

# two chips side by side (off-chip links), a spike source (the input port), 2 cores a router
NETWORK, HARDWARE = "mlp:widths=64-128-32-10", "mesh:2x2x2@2x1"

# Every row of a renderer's source through its hover tool's tooltips, as Bokeh writes them
# (``templating.replace_placeholders``, with the tool's formatters): {label: [text, ...]}.
# With ``stub`` (columns of a few rows), those rows instead of the renderer's source.
RENDER = """([name, stub]) => {
  PLOT
  const renderer = plot.model.renderers.find((r) => r.name === name);
  const hover = plot.model.toolbar.tools.find((t) => t.type === "HoverTool"
    && t.renderers.some((r) => r.data_source === renderer.data_source));  // (hover targets)
  const {replace_placeholders} = Bokeh.require("core/util/templating");
  const source = stub ? {get_column: (column) => stub[column] ?? null} : renderer.data_source;
  const rows = stub ? Object.values(stub)[0].length : source.get_length();
  const out = {};
  for (const [label, template] of hover.tooltips) {
    out[label] = [];
    for (let i = 0; i < rows; i++) {
      out[label].push(replace_placeholders(template, source, i, hover.formatters, {index: i}));
    }
  }
  return out;
}""".replace("PLOT", MESH_PLOT)

# The links' simulated figures as the page holds them, and the capacity it writes.
SIMULATED = """() => {
  PLOT
  const data = plot.model.renderers.find((r) => r.name === "links").data_source.data;
  const hover = plot.model.toolbar.tools.find(
    (t) => t.type === "HoverTool" && t.renderers.some((r) => r.name === "links_hover_ew"));
  const map = (m) => (m instanceof Map ? m : new Map(Object.entries(m)));
  return {link: Array.from(data.link), flits: Array.from(data.sim_flits),
          busy: Array.from(data.sim_busy), buffer: Array.from(data.sim_buffer),
          capacity: map(map(hover.formatters).get("@sim_flits").args).get("capacity")};
}""".replace("PLOT", MESH_PLOT)

# Page coordinates of the middle of row ``i`` of the links' source.
LINK_XY = """(i) => {
  PLOT
  const data = plot.model.renderers.find((r) => r.name === "links").data_source.data;
  const canvas = plot.canvas_view.el.getBoundingClientRect();
  return [canvas.left + plot.frame.x_scale.compute((data.x0[i] + data.x1[i]) / 2),
          canvas.top + plot.frame.y_scale.compute((data.y0[i] + data.y1[i]) / 2)];
}""".replace("PLOT", MESH_PLOT)


@pytest.fixture(scope="module")
def two_chip_url():
    with served_view("tooltips", lambda: build_app(NETWORK, HARDWARE), "MeshScope tooltips") as url:
        yield url


@pytest.fixture(scope="module")
def start():
    """The state the page starts from (the same specs: the same mapping)."""
    return ExplorerState.from_specs(NETWORK, HARDWARE)


@pytest.mark.ui
def test_every_link_and_core_tooltip_reads_as_the_columns_say(page, two_chip_url, start):
    open_in(page, two_chip_url)
    hw, net = start.hardware, start.network
    links = link_geometry(hw)
    shown = page.evaluate(RENDER, ["links", None])
    assert shown["link"] == [
        f"{k} {d} (id {i})"
        for k, d, i in zip(links["kind"], links["direction"], links["link"], strict=True)
    ]
    assert {"off-chip", "core-to-router", "router-to-core"} <= set(links["kind"])
    assert shown["from → to"] == [
        f"{s} → {d}" for s, d in zip(links["src"], links["dst"], strict=True)
    ]

    cores = core_columns(hw, net, start.evaluation)
    shown = page.evaluate(RENDER, ["core_info", None])
    assert shown["core"] == [
        f"{a} (id {c})" for a, c in zip(cores["address"], cores["core"], strict=True)
    ]
    assert shown["population"] == list(cores["population"])
    assert "empty" in shown["population"]  # slots without a partition say so


@pytest.mark.ui
def test_the_simulated_line_reads_as_simulated_link_text_does(page, two_chip_url):
    open_in(page, two_chip_url)
    expect(page.get_by_test_id("metric-simulated")).to_contain_text("vs start", timeout=120_000)
    # the card and the links' columns are separate messages: wait for the columns too
    page.wait_for_function(f"() => ({SIMULATED})().flits.some((f) => f > 0)", timeout=60_000)
    held = page.evaluate(SIMULATED)
    ids = np.asarray(held["link"])
    figures = {"flits": np.zeros(ids.max() + 1), "busy": np.zeros(ids.max() + 1),
               "buffer": np.zeros(ids.max() + 1), "buffer_capacity": held["capacity"]}  # fmt: skip
    for key in ("flits", "busy", "buffer"):
        figures[key][ids] = held[key]
    assert figures["flits"].max() > 0 and (figures["buffer"][ids] < 0).any()  # core links
    shown = page.evaluate(RENDER, ["links", None])["simulated"]
    assert shown == simulated_link_text(figures, ids)

    # before a step is simulated (-1 in every column), and busy shares at and near the
    # ties of whole per cents (rounded to even, as Python's format does)
    busy = [0.125, 0.135, 0.005, 0.015, 0.025, 0.5, 1.0, 0.994999, 0.995, 0.0049999, 0.0]
    n = len(busy)
    stub = {"sim_flits": [-1.0] + [1234.0] * n, "sim_busy": [-1.0, *busy],
            "sim_buffer": [-1.0] + [-1.0, 3.0] * (n // 2) + [0.0] * (n % 2)}  # fmt: skip
    shown = page.evaluate(RENDER, ["links", stub])["simulated"]
    flits, buffer = np.asarray(stub["sim_flits"][1:]), np.asarray(stub["sim_buffer"][1:])
    stub_ids = np.arange(n)
    expected = simulated_link_text(
        {"flits": flits, "busy": np.asarray(busy), "buffer": buffer,
         "buffer_capacity": held["capacity"]}, stub_ids,
    )  # fmt: skip
    assert shown == ["not simulated yet", *expected]


@pytest.mark.ui
def test_hovering_a_link_shows_its_tooltip(page, two_chip_url, start):
    open_in(page, two_chip_url)
    links = link_geometry(start.hardware)
    row = int(np.flatnonzero(links["kind"] == "off-chip")[0])
    x, y = page.evaluate(LINK_XY, row)
    page.mouse.move(x, y)
    tooltip = page.locator(".bk-tooltip-content").first
    expect(tooltip).to_contain_text(f"off-chip {links['direction'][row]} (id {links['link'][row]})")
    expect(tooltip).to_contain_text(f"{links['src'][row]} → {links['dst'][row]}")


# Page coordinates of both ends of row ``i`` of the links' source.
LINK_ENDS = """(i) => {
  PLOT
  const data = plot.model.renderers.find((r) => r.name === "links").data_source.data;
  const canvas = plot.canvas_view.el.getBoundingClientRect();
  const at = (x, y) => [canvas.left + plot.frame.x_scale.compute(x),
                        canvas.top + plot.frame.y_scale.compute(y)];
  return [at(data.x0[i], data.y0[i]), at(data.x1[i], data.y1[i])];
}""".replace("PLOT", MESH_PLOT)


@pytest.mark.ui
@pytest.mark.parametrize("direction", ["E", "W", "N", "S"])
def test_a_link_tooltip_opens_beside_the_link_not_over_it(page, two_chip_url, start, direction):
    """The audit's complaint: the tooltip covered the link being inspected. It now opens
    above or below an east-west link, left or right of a north-south one."""
    open_in(page, two_chip_url)
    links = link_geometry(start.hardware)
    row = int(np.flatnonzero((links["kind"] == "router") & (links["direction"] == direction))[0])
    (ax, ay), (bx, by) = page.evaluate(LINK_ENDS, row)
    page.mouse.move((ax + bx) / 2, (ay + by) / 2)
    tooltip = page.locator(".bk-tooltip-content").first
    expect(tooltip).to_contain_text(f"router {direction} (id {links['link'][row]})")
    box = tooltip.bounding_box()
    left, right, top, bottom = box["x"], box["x"] + box["width"], box["y"], box["y"] + box["height"]
    if direction in "EW":  # the box is wholly above or below the link's line
        assert abs(ay - by) < 1 and (bottom < ay or top > ay), (box, ay)
    else:  # … or wholly beside it
        assert abs(ax - bx) < 1 and (right < ax or left > ax), (box, ax)
