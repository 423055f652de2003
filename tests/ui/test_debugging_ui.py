"""Debugging a placement at 1366×768 (issue 57, items 2, 4, 5, 6 and 7): the page works with
the network blocked, a click on a link neither scrolls its routes away nor turns the wheel
into a zoom, a saved mapping is named for what it is, and what the page says is whole."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import expect

from explorer.browser import (
    HOT_LINK_XY,
    MESH_PLOT,
    TABLE_ROWS,
    layout_settled,
    open_in,
    scroll_settled,
    served_view,
)
from tests.support.pages import tab, visit_the_other_tabs

VIEWPORT = {"width": 1366, "height": 768}
LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1")
IN_PAGE = ("data", "blob", "about")  # schemes with no network behind them


@pytest.fixture
def browser_context_args(browser_context_args):
    return {**browser_context_args, "viewport": VIEWPORT, "accept_downloads": True}


@pytest.mark.ui
def test_every_tab_works_with_the_network_blocked_and_logs_no_warning(page, demo_url):
    """Item 5: an air-gapped lab. Every request but the server's is aborted; the page walks
    every tab, loads a scene that replaces the mapping ("layer as a square": the spinner's
    loading.css came from cdn.holoviz.org), shows a link's flows and a simulation, and asks
    nothing of the internet — no request, no stylesheet the browser refused — and logs no
    warning (Choices.js' allowHTML deprecation came with the Pareto tab's objectives)."""
    asked: list[str] = []  # every request and socket the page opened
    said: list[str] = []  # console errors and warnings

    def only_local(route):
        if urlsplit(route.request.url).hostname in LOCAL_HOSTS:
            route.continue_()
        else:
            route.abort()

    page.on("request", lambda request: asked.append(request.url))
    page.on("websocket", lambda socket: asked.append(socket.url))
    page.on("console", lambda m: said.append(m.text) if m.type in ("error", "warning") else None)
    page.route("**/*", only_local)
    open_in(page, demo_url)
    page.mouse.click(*page.evaluate(HOT_LINK_XY))  # its flow table
    expect(page.get_by_test_id("inspect-header")).to_contain_text("Link", timeout=15_000)
    page.wait_for_function(f"() => ({TABLE_ROWS})() > 0")
    tab(page, "Traffic").click()
    page.get_by_role("button", name="layer as a square").click()  # a scene with a mapping
    expect(page.get_by_test_id("scene-text")).to_contain_text("square", timeout=90_000)
    expect(page.get_by_test_id("traffic-counter")).to_contain_text("window 1 of", timeout=90_000)
    visit_the_other_tabs(page)  # Mosaic drawn, then every tab's first words
    page.wait_for_timeout(500)  # (late stylesheets of the last tab shown: a short grace)
    local = [u for u in asked if urlsplit(u).hostname in LOCAL_HOSTS]
    assert any(u.startswith("ws://") for u in local)  # the session's socket was seen
    outside = [u for u in asked if u not in local and urlsplit(u).scheme not in IN_PAGE]
    assert outside == []
    assert [u for u in asked if "cdn" in u] == []
    assert said == [], "\n".join(said)  # a refused stylesheet or font is an error here too


@pytest.mark.ui
def test_a_saved_mapping_is_named_for_what_it_is(page, demo_url):
    """Item 7: network, hardware, latency and date in the file's name, not one fixed name."""
    open_in(page, demo_url)
    latency = page.get_by_test_id("metric-latency-value").text_content().replace(",", "")
    with page.expect_download() as saved:
        page.get_by_role("button", name="Save mapping (JSON)").click()
    name = saved.value.suggested_filename
    pattern = rf"sparse-mlp-1_loihi2_{re.escape(latency)}us_\d{{4}}-\d\d-\d\d-\d{{4}}-mapping\.json"
    assert re.fullmatch(pattern, name), name


# The mesh figure's x range, whether any of its wheel tools is on, and its frame's right edge.
MESH_STATE = """() => {
  PLOT
  const r = plot.model.x_range;
  const wheel = plot.model.toolbar.tools.filter((t) => t.event_types.includes("scroll"));
  const canvas = plot.canvas_view.el.getBoundingClientRect();
  return {range: [r.start, r.end], wheel: wheel.length, on: wheel.some((t) => t.active),
          right: canvas.left + plot.frame.bbox.right};
}""".replace("PLOT", MESH_PLOT)


@pytest.mark.ui
def test_a_click_on_a_link_keeps_its_routes_in_view_and_the_wheel_a_scroll(page, demo_url):
    """Item 2: clicking the bottleneck link scrolled the page 844 px down to its flows (the
    routes left the view) and turned Bokeh's wheel zoom on, so wheeling back up over the
    mesh zoomed into blank space. Now the flows open beside the mesh, the page does not
    move, and the wheel over the mesh still scrolls the page, not the plot."""
    open_in(page, demo_url)
    before = page.evaluate(MESH_STATE)
    assert before["wheel"] >= 1 and not before["on"]
    x, y = page.evaluate(HOT_LINK_XY)
    page.mouse.click(x, y)
    header = page.get_by_test_id("inspect-header")
    expect(header).to_contain_text("Link", timeout=15_000)
    page.wait_for_function(f"() => ({TABLE_ROWS})() > 0")
    expect(page.locator(".tabulator-row").first).to_be_in_viewport()
    assert scroll_settled(page) == 0  # the page stayed where it was: the routes in view
    assert page.evaluate("() => [window.scrollX, document.documentElement.scrollWidth]") == [
        0, VIEWPORT["width"],
    ]  # fmt: skip
    box = header.bounding_box()
    after = page.evaluate(MESH_STATE)
    assert box["x"] >= after["right"] and box["y"] + box["height"] <= VIEWPORT["height"]
    assert not after["on"]  # the click changed no tool
    page.mouse.move(x, y + 40)
    page.mouse.wheel(0, -300)  # wheel up over the mesh: no zoom
    page.mouse.wheel(0, 300)
    scroll_settled(page)
    assert page.evaluate(MESH_STATE)["range"] == before["range"]


@pytest.mark.ui
def test_the_bound_by_card_says_every_term_whole_in_the_narrowest_card(page):
    """Item 4: the 'Bound by' card read "SynMem reac" (149 px needed, 109 px given). Every
    term of the model, in a card as narrow as seven on a 1366-px row make it, is whole, and
    the card is as tall whatever the term (a new term never moves the page)."""
    import panel as pn

    from engine.evaluation.cost import TERM_LABELS
    from explorer.views.metrics import CARD_CSS, card_html

    def app():
        cards = "".join(
            card_html("bottleneck", "Bound by", label, "1.00 µs term")
            for label in TERM_LABELS.values()
        )
        html = f'<div class="metric-row" style="width: 132px; flex-direction: column">{cards}</div>'
        return pn.pane.HTML(html, stylesheets=[CARD_CSS])

    with served_view("cards", app, "cards") as url:
        page.goto(url)
        values = page.locator(".metric-value")
        expect(values).to_have_count(len(TERM_LABELS))
        seen = values.evaluate_all(CUT)
    assert {v["text"] for v in seen} == set(TERM_LABELS.values())
    assert [v for v in seen if v["cut"]] == []
    assert len({v["height"] for v in seen}) == 1, seen


CUT = """(els) => els.map((e) => ({text: e.textContent, height: e.getBoundingClientRect().height,
  cut: e.scrollWidth > e.clientWidth + 1 || e.scrollHeight > e.clientHeight + 1}))"""


@pytest.mark.ui
def test_the_layer_filter_says_what_it_does_and_no_empty_bar_waits_under_start(page, demo_url):
    """Item 4: the layer filter ("from [all layers]") never showed its hint — its button's
    tooltip said only "all layers"; and an empty progress bar sat under Start before any
    search."""
    open_in(page, demo_url)
    toggle = page.locator(".lf-toggle")
    expect(toggle).to_have_attribute("title", re.compile(r"^Show only the load of the flows"))
    expect(toggle).to_have_attribute("title", re.compile(r"Now: all layers$"))
    tab(page, "Evolution").click()
    status = page.get_by_test_id("search-status")
    expect(status).to_contain_text("No search yet")
    expect(page.locator("progress")).to_be_hidden()
    page.get_by_label("budget (evaluations)").fill("12")
    page.get_by_role("button", name="Start").click()
    expect(status).to_contain_text("done after 12", timeout=60_000)
    expect(page.locator("progress")).to_be_visible()


# Every Bokeh figure shown: its title and where its canvas lies on the page.
FIGURE_BOXES = """() => [...Bokeh.index.all_views()].flatMap(function walk(v) {
  const mine = v.model.type === "Figure" && v.el.isConnected
    ? [{title: v.model.title ? v.model.title.text : "",
        box: (({left, top, right, bottom}) => ({left, top, right, bottom}))(
          v.canvas_view.el.getBoundingClientRect())}]
    : [];
  return mine.concat(...(v.child_views ?? []).map(walk));
}).filter((f) => f.box.right > f.box.left)"""


@pytest.mark.ui
def test_compare_shows_both_meshes_and_their_difference_side_by_side(page, demo_url):
    """Item 6: at 1366 px the reference mesh stacked below the current one, starting at
    y ≈ 1,250. The current mesh, the per-link difference and the reference now stand in one
    row, smaller, all of them starting on the first screen and none past its right edge."""
    open_in(page, demo_url)
    tab(page, "Compare").click()
    expect(page.get_by_test_id("compare-summary")).to_be_visible(timeout=30_000)
    page.wait_for_function(f"() => ({FIGURE_BOXES})().length >= 3")
    layout_settled(page)
    figures = page.evaluate(FIGURE_BOXES)
    row = [
        next(f["box"] for f in figures if f["title"].startswith(start))
        for start in ("Current mapping", "Δ", "Reference")
    ]
    assert max(b["top"] for b in row) - min(b["top"] for b in row) <= 2, row  # one row
    assert row[0]["right"] <= row[1]["left"] and row[1]["right"] <= row[2]["left"], row
    assert row[2]["right"] <= VIEWPORT["width"] and row[2]["top"] < VIEWPORT["height"], row
    assert page.evaluate("() => document.documentElement.scrollWidth") <= VIEWPORT["width"]


# The chip overview's colour bar: its range, and whether it is drawn inside the page.
CHIP_SCALE = """() => {
  const bar = Bokeh.documents[0].get_model_by_name("chip-scale");
  if (!bar) return null;
  const view = [...Bokeh.index.all_views()].find(
    (v) => v.model.type === "Figure" && v.model.right.includes(bar));
  const box = view ? view.el.getBoundingClientRect() : null;
  return {low: bar.color_mapper.low, high: bar.color_mapper.high,
          shown: !!box && box.width > 0 && box.right <= window.innerWidth};
}"""


@pytest.mark.ui
def test_the_chip_map_shows_its_colour_scale(page):
    """Item 4: the chip map's colours had no scale. A board of two chips shows one beside
    its chips, from 0 to the heaviest link of any chip (as its tooltip counts them)."""
    from explorer.app import build_app

    app = lambda: build_app("mlp:widths=64-128-32-10", "mesh:2x2x2@2x1")  # noqa: E731
    with served_view("chips", app, "MeshScope") as url:
        open_in(page, url)
        page.wait_for_function(f"() => ({CHIP_SCALE})() !== null")
        scale = page.evaluate(CHIP_SCALE)
        expect(page.get_by_text("the scale beside it")).to_be_visible()
    assert scale["shown"] and scale["low"] == 0 and scale["high"] > 0, scale
