"""The Traffic tab in a real browser: simulate, then play, step and scrub the run."""

from __future__ import annotations

import json
import re
from itertools import pairwise

import pytest
from playwright.sync_api import expect

from explorer.browser import DEMO, drag_core, open_in
from explorer.traffic_runner import RUN_WARMUP
from explorer.views.traffic_frames import WAIT_COLORS

LINK_COLORS = """() => {
  const r = Bokeh.documents[0].get_model_by_name("traffic-links");
  return r ? Array.from(r.data_source.data.color) : null;
}"""


TITLED = """(text) => [...Bokeh.documents[0].all_models].some(
  m => m.type === "Title" && m.text === text)"""  # a plot titled so is in the page


ROWS = """(name) => {
  const r = Bokeh.documents[0].get_model_by_name(name);
  return r ? r.data_source.get_length() : -1;
}"""  # the rows a named renderer draws (-1: no such renderer yet)


# The latency-load plot's vertical mark (the saturation rate), where it is drawn: its
# location, whether it is visible and has a view in the plot, its x on the canvas and the
# plot frame's left and right; null without the plot or the mark.
SATURATION_MARK = """() => {
  const plot = [...Bokeh.index.all_views()].find(
    (v) => v.model.type === "Figure" && v.model.renderers.some((r) => r.name === "curve"));
  if (!plot) return null;
  const span = plot.model.center.find((m) => m.type === "Span" && m.dimension === "height");
  if (!span) return null;
  const f = plot.frame.bbox;
  return {location: span.location, visible: span.visible,
          drawn: plot.renderer_views.get(span) != null,
          x: span.location == null ? null : plot.frame.x_scale.compute(span.location),
          left: f.left, right: f.right};
}"""


def synthetic_settings(page) -> None:
    """On the Traffic tab: open its settings (a card closed under the Simulate button) and
    choose the synthetic pattern."""
    page.get_by_test_id("traffic-settings").click()
    page.get_by_role("button", name="a synthetic pattern").click()


def simulate_a_pattern(page, url: str, rate: str, cycles: str) -> None:
    """Open the Traffic tab and simulate its synthetic pattern at ``rate`` for ``cycles``."""
    open_in(page, url)
    page.locator(".bk-tab").filter(has_text="Traffic").first.click()
    synthetic_settings(page)
    page.get_by_label("offered flits/node/cycle").fill(rate)
    page.get_by_label("cycles", exact=True).fill(cycles)
    page.get_by_role("button", name="Simulate").click()


def window_shown(page) -> int:
    text = page.get_by_test_id("traffic-counter").text_content()
    return int(re.search(r"window (\d+) of", text).group(1))


def demo_step():
    """The step the Traffic tab simulates for the demo (pipelined, seed 0), by the engine."""
    from engine.simulate import simulate_step
    from explorer.state import ExplorerState

    mapped = ExplorerState.from_specs(DEMO["network"], DEMO["hardware"]).mapped()
    return simulate_step(mapped, mode="pipelined", seed=0)


@pytest.mark.ui
def test_simulate_then_step_and_scrub_the_run(page, demo_url):
    want = demo_step()
    open_in(page, demo_url)
    page.locator(".bk-tab").filter(has_text="Traffic").first.click()
    page.get_by_role("button", name="Simulate").click()
    counter = page.get_by_test_id("traffic-counter")
    expect(counter).to_contain_text("window 1 of 150", timeout=60_000)
    expect(page.get_by_test_id("traffic-summary")).to_contain_text("The step took")
    first = page.evaluate(LINK_COLORS)
    assert first and len(set(first)) > 1  # some links busier than others
    page.locator("button.next").click()  # step one window
    expect(counter).to_contain_text("window 2 of 150")
    assert re.search(rf"cycles [\d,]+–[\d,]+ of {want.cycles:,}", counter.text_content())
    page.wait_for_function(f"(before) => JSON.stringify(({LINK_COLORS})()) !== before",
                           arg=json.dumps(first).replace(" ", ""))  # fmt: skip
    second = page.evaluate(LINK_COLORS)
    assert second != first  # the colours follow the window
    page.locator("input[type=range]").last.fill("120")  # scrub
    expect(counter).to_contain_text("window 121 of 150")
    page.locator("button.last").click()
    expect(counter).to_contain_text("window 150 of 150")
    delivered = int(re.search(r"([\d,]+) delivered", counter.text_content())[1].replace(",", ""))
    assert delivered == want.latency["packets"] > 0  # every packet has arrived by the end


# Record, in the page, every window number the cycle counter shows from now on (the
# counter's model, read on each animation frame): ``window.__windows``, in order.
WATCH_WINDOWS = """() => {
  const counter = [...Bokeh.documents[0].all_models].find(
    (m) => typeof m.text === "string" && m.text.includes("traffic-counter"));
  const shown = () => Number((/window (\\d+) of/.exec(counter.text) || [0, 0])[1]);
  window.__windows = [shown()];
  const tick = () => {
    const k = shown();
    if (k !== window.__windows[window.__windows.length - 1]) window.__windows.push(k);
    requestAnimationFrame(tick);
  };
  tick();
}"""

PLAYER = """() => {
  const p = [...Bokeh.documents[0].all_models].find((m) => String(m.type).endsWith("Player"));
  return {value: p.value, direction: p.direction};
}"""  # the Player's value (window - 1) and direction (0 paused, 1 playing) in the page


@pytest.mark.ui
def test_play_runs_through_the_windows_on_its_own_and_pause_stops_it(page, demo_url):
    open_in(page, demo_url)
    page.locator(".bk-tab").filter(has_text="Traffic").first.click()
    page.get_by_role("button", name="Simulate").click()
    counter = page.get_by_test_id("traffic-counter")
    expect(counter).to_contain_text("window 1 of 150", timeout=60_000)
    first = page.evaluate(LINK_COLORS)
    page.evaluate(WATCH_WINDOWS)
    page.locator("button.play").click()
    # with no more input the counter goes 1, 2, 3, … (a window every 180 ms)
    page.wait_for_function("() => window.__windows.length >= 5", timeout=15_000)
    page.wait_for_function(f"(before) => JSON.stringify(({LINK_COLORS})()) !== before",
                           arg=json.dumps(first).replace(" ", ""))  # fmt: skip
    page.locator("button.pause").click()
    # the last window Play asked for is drawn: the counter has caught up with the player
    page.wait_for_function(f"() => ({PLAYER})().direction === 0")
    at = page.evaluate(PLAYER)["value"] + 1
    expect(counter).to_contain_text(f"window {at} of 150")
    seen = page.evaluate("() => window.__windows")
    # window after window (a busy machine may draw a few between two animation frames)
    assert seen[0] == 1 and seen[-1] == at < 150, seen
    assert len(seen) >= 5 and all(0 < b - a <= 4 for a, b in pairwise(seen)), seen
    page.wait_for_timeout(1_000)  # five intervals of the player: nothing may move
    assert page.evaluate(PLAYER) == {"value": at - 1, "direction": 0}
    assert page.evaluate("() => window.__windows") == seen
    assert window_shown(page) == at
    # the colours are the paused window's, as the view's own columns give them
    from explorer.state import ExplorerState
    from explorer.traffic_runner import SOURCES, simulate_traffic
    from explorer.views.mesh_columns import link_geometry
    from explorer.views.traffic_frames import link_frame

    state = ExplorerState.from_specs(DEMO["network"], DEMO["hardware"])
    trace = simulate_traffic(state, SOURCES[0]).trace
    want = link_frame(trace, link_geometry(state.hardware)["link"], at - 1)["color"]
    shown = page.evaluate(LINK_COLORS)
    assert shown == list(want) != first


STALLED = """() => {
  const r = Bokeh.documents[0].get_model_by_name("stalls");
  if (!r) return null;
  const d = r.data_source.data;
  return Array.from(d.stall_px).map((size, k) => [size, d.stall_color[k], d.why[k]]);
}"""  # the stall crosses the page draws: per router, size, colour and reason (null: none)


@pytest.mark.ui
def test_a_synthetic_pattern_past_saturation_says_so(page, demo_url):
    simulate_a_pattern(page, demo_url, "0.45", "1500")
    summary = page.get_by_test_id("traffic-summary")
    expect(summary).to_contain_text("past saturation", timeout=60_000)
    counter = page.get_by_test_id("traffic-counter")
    expect(counter).not_to_contain_text("full input")  # the first window: buffers still empty
    expect(counter).not_to_contain_text("held back")
    page.locator("button.last").click()  # the last: queues have backed up into the mesh
    expect(counter).to_contain_text("routers with a full input")
    # … and packets stall: a cross on the routers whose VCs waited, most for credits
    expect(counter).to_contain_text("held back by full buffers downstream")
    crosses = [c for c in page.evaluate(STALLED) if c[0] > 0]
    assert len(crosses) >= 8, crosses
    assert any(why == "credit" and colour == WAIT_COLORS[1] for _, colour, why in crosses)


@pytest.mark.ui
def test_the_latency_load_curve_grows_point_by_point_and_marks_saturation(page, demo_url):
    open_in(page, demo_url)
    page.locator(".bk-tab").filter(has_text="Traffic").first.click()
    synthetic_settings(page)
    page.get_by_label("mesh side").fill("4")
    page.get_by_role("button", name="Sweep offered load").click()
    page.wait_for_function(f"() => ({ROWS})('curve') >= 2", timeout=60_000)  # it grows …
    expect(page.get_by_text("Zero-load latency")).to_be_visible()
    expect(page.get_by_text("Saturation at")).to_be_visible(timeout=120_000)  # … to the end
    assert page.evaluate(ROWS, "curve") >= 4
    expect(page.get_by_role("button", name="Sweep offered load")).to_be_visible()
    # the saturation mark is drawn on the curve's plot, at the rate the sentence gives
    said = page.get_by_text("Saturation at").text_content()
    rate = float(re.search(r"Saturation at ([\d.]+) flits", said)[1])
    mark = page.evaluate(SATURATION_MARK)
    assert mark is not None, "the curve's plot has no vertical mark"
    assert mark["location"] == pytest.approx(rate, abs=0.005), (mark, rate)
    assert mark["visible"] and mark["drawn"], mark
    assert mark["left"] <= mark["x"] <= mark["right"], mark  # inside the plot's frame


@pytest.mark.ui
def test_a_scene_loads_from_a_link_and_another_from_its_button(page, demo_url):
    from explorer.scenes import Scene, encode_scene

    mine = Scene(title="Tornado on six", text="A teacher's exercise. Where does it queue?",
                 pattern="tornado", side=6, rate=0.05, cycles=600, routing="yx")  # fmt: skip
    with page.expect_console_message(lambda m: "Websocket connection 0 is now open" in m.text,
                                     timeout=30_000):  # fmt: skip
        page.goto(f"{demo_url}?scene={encode_scene(mine)}")
    expect(page.get_by_test_id("scene-text")).to_contain_text("Tornado on six")
    summary = page.get_by_test_id("traffic-summary")
    expect(summary).to_contain_text("accepted", timeout=60_000)
    page.wait_for_function(TITLED, arg="tornado traffic on a 6×6 mesh at 0.05 flits/node/cycle, "
                           "Y then X")  # fmt: skip
    page.get_by_role("button", name="transpose, XY").click()
    expect(page.get_by_test_id("scene-text")).to_contain_text("Transpose, X then Y")
    page.wait_for_function(TITLED, arg="transpose traffic on a 8×8 mesh at 0.12 flits/node/cycle",
                           timeout=60_000)  # fmt: skip
    page.get_by_text("Share this setup, or open one").click()  # its card opens
    page.get_by_role("button", name="Share as link").click()
    page.wait_for_function(
        """() => [...Bokeh.documents[0].all_models].some(
             m => String(m.type).endsWith("TextInput")
                  && (m.value || "").endsWith("/?scene=transpose-xy"))"""
    )


@pytest.mark.ui
def test_a_broken_scene_link_is_a_notification_and_the_page_works(page, demo_url):
    page.goto(f"{demo_url}?scene=no-such-scene")
    toast = page.locator(".notyf__toast--error")
    expect(toast).to_contain_text("no scene 'no-such-scene'", timeout=30_000)
    expect(page.get_by_test_id("metric-latency-value")).to_be_visible()


@pytest.mark.ui
def test_a_mapping_scene_link_loads_its_mapping_after_the_page(open_page, demo_url):
    """The scene's network is partitioned and placed off the event loop: the page comes
    first, saying so, then the scene's mapping, text and simulated step."""
    from explorer.scenes import SCENES

    page = open_page(f"{demo_url}?scene=square")
    expect(page.get_by_test_id("scene-text")).to_contain_text(SCENES["square"].title,
                                                              timeout=60_000)  # fmt: skip
    expect(page.get_by_test_id("subtitle")).to_contain_text("linear-tiled-identity")
    expect(page.get_by_test_id("traffic-summary")).to_contain_text("The step took", timeout=60_000)


@pytest.mark.ui
def test_a_scene_link_naming_a_server_file_is_refused_on_the_page(open_page, demo_url, tmp_path):
    """The partition of a link's scene goes through the access rule: the page says so
    (the notification waits for the page to be up) and shows the demo as it was."""
    from explorer.scenes import Scene, encode_scene

    secret = tmp_path / "secret"
    secret.write_text("0\n")
    sneaky = Scene(title="Sneaky", text="Reads a file. On the server.", kind="mapping",
                   network=DEMO["network"], hardware=DEMO["hardware"],
                   partition=f"file:{secret}")  # fmt: skip
    page = open_page(f"{demo_url}?scene={encode_scene(sneaky)}")
    toast = page.locator(".notyf__toast--error")
    expect(toast).to_contain_text(f"The scene 'Sneaky' cannot load: partition 'file:{secret}'")
    expect(toast).to_contain_text("opens no files")
    expect(page.get_by_test_id("subtitle")).to_contain_text(DEMO["network"])


@pytest.mark.ui
def test_walk_the_slowest_packet_hop_by_hop(page, demo_url):
    simulate_a_pattern(page, demo_url, "0.3", "1000")
    expect(page.get_by_test_id("traffic-summary")).to_contain_text("Packet latency",
                                                                   timeout=60_000)  # fmt: skip
    source = page.get_by_label("from", exact=True)
    expect(source).to_have_value(re.compile(r"^\(\d+,\d+\)$"))  # the run's slowest packet
    page.get_by_role("button", name="Walk", exact=True).click()
    report = page.get_by_test_id("walk-report")
    expect(report).to_contain_text("The slowest of", timeout=60_000)
    expect(report).to_contain_text("cycles across")
    hops = page.get_by_test_id("walk-hops").locator("tr")
    n = hops.count() - 1  # the header row
    assert n >= 2
    assert page.evaluate(ROWS, "walk-route") == n  # the route drawn through every router
    source.fill("8,8")  # off the mesh: a notification, the walk stays
    page.get_by_role("button", name="Walk", exact=True).click()
    expect(page.locator(".notyf__message")).to_contain_text("off the 8×8 mesh")
    expect(report).to_contain_text("The slowest of")


# the page's box (top, bottom, and whether the page scrolls sideways) of the plot titled so
PLOT_BOX = """(title) => {
  const plot = [...Bokeh.index.all_views()].find(
    (v) => v.model.type === "Figure" && v.model.title && v.model.title.text === title);
  if (!plot) return null;
  const r = plot.el.getBoundingClientRect();
  return {top: r.top, bottom: r.bottom, height: r.height,
          sideways: document.documentElement.scrollWidth > window.innerWidth};
}"""

# Every <abbr title> on the page (open shadow roots included): its word and its title.
TERMS_SHOWN = """() => {
  const out = [];
  const walk = (root) => {
    for (const el of root.querySelectorAll("*")) {
      if (el.tagName === "ABBR" && el.title && el.getBoundingClientRect().width > 0)
        out.push({word: el.textContent.toLowerCase(), title: el.title});
      if (el.shadowRoot) walk(el.shadowRoot);
    }
  };
  walk(document);
  return out;
}"""

# The hover help (``description``) of the input widget titled ``title`` (null: none).
DESCRIPTION = """(title) => {
  const m = [...Bokeh.documents[0].all_models].find(m => m.title === title && "description" in m);
  if (!m || m.description == null) return null;
  const c = typeof m.description === "string" ? m.description : m.description.content;
  if (typeof c === "string") return c;
  const div = document.createElement("div");  // a Tooltip, its content a dom.HTML
  div.innerHTML = [].concat(c.html).join("");
  return div.textContent.trim();
}"""


@pytest.mark.ui
def test_a_scene_opens_on_its_mesh_and_player_with_the_sidebar_set_aside(page, demo_url):
    """Issue 40, item 4: after a scene link the mesh, player and histogram started ~1,100 px
    down, under a long form, while the sidebar kept describing sparse-mlp-1. At 1366×768 the
    run is in the first screen (the settings one line above it), and the sidebar says it
    plays no part in a synthetic run, on the Traffic tab only."""
    page.set_viewport_size({"width": 1366, "height": 768})
    with page.expect_console_message(lambda m: "Websocket connection 0 is now open" in m.text,
                                     timeout=30_000):  # fmt: skip
        page.goto(f"{demo_url}?scene=transpose-xy")
    expect(page.get_by_test_id("traffic-summary")).to_contain_text("accepted", timeout=60_000)
    title = "transpose traffic on a 8×8 mesh at 0.12 flits/node/cycle"
    page.wait_for_function(f"() => ({PLOT_BOX})({title!r}) !== null")
    mesh = page.evaluate(PLOT_BOX, title)
    # the mesh in the first screen: at least 200 px of it above the fold
    assert 0 <= mesh["top"] < 768 - 200 and mesh["height"] > 200, mesh
    assert not mesh["sideways"], mesh
    expect(page.get_by_test_id("traffic-counter")).to_be_in_viewport()  # beside the player
    expect(page.get_by_test_id("traffic-settings")).to_contain_text("transpose on 8×8 at 0.12")
    aside = page.get_by_test_id("sidebar-aside")
    expect(aside).to_contain_text("synthetic pattern")
    page.locator(".bk-tab").filter(has_text="Mesh").first.click()
    expect(aside).to_be_hidden()


@pytest.mark.ui
def test_a_number_out_of_bounds_is_refused_aloud_and_the_box_shows_the_one_in_use(page, demo_url):
    """Issue 40, item 8: mesh side 1000 with Enter left the box at 1000 while the run used
    8×8, then silently reverted. It is a notification naming the bounds, and the box shows
    the side in use; a run then says 8×8."""
    open_in(page, demo_url)
    page.locator(".bk-tab").filter(has_text="Traffic").first.click()
    synthetic_settings(page)
    side = page.get_by_label("mesh side")
    side.fill("1000")
    side.press("Enter")
    expect(page.locator(".notyf__toast--error")).to_contain_text(
        "mesh side must be from 2 to", timeout=15_000
    )
    expect(side).to_have_value("8")
    rate = page.get_by_label("offered flits/node/cycle")
    rate.fill("5")
    rate.press("Enter")
    expect(page.locator(".notyf__toast--error").filter(has_text="offered")).to_contain_text(
        "from 0 to 1, not 5: it stays 0.1"
    )
    expect(rate).to_have_value("0.1")
    expect(page.get_by_test_id("traffic-settings")).to_contain_text("8×8 at 0.1 flits")


@pytest.mark.ui
def test_a_mapping_scene_asks_before_replacing_an_edited_mapping_and_undo_brings_it_back(
    page, demo_url
):
    """Issue 40, item 2: after hand-tuning, "layer as a square" replaced network, hardware
    and mapping without a word, and Undo was disabled. The scene asks first; kept, nothing
    changes; loaded, Undo brings the tuned mapping back (its change against its start too)."""
    page.set_viewport_size({"width": 1366, "height": 768})
    open_in(page, demo_url)
    change = page.get_by_test_id("metric-change-value")
    drag_core(page, 0, 8)
    expect(change).not_to_have_text("0 %")
    tuned = change.text_content()
    subtitle = page.get_by_test_id("subtitle")
    page.locator(".bk-tab").filter(has_text="Traffic").first.click()
    square = page.get_by_role("button", name="layer as a square")
    square.click()
    ask = page.get_by_test_id("scene-ask")
    expect(ask).to_contain_text("in place of your edited mapping of sparse-mlp-1")
    page.get_by_role("button", name="Keep my mapping").click()
    expect(ask).to_be_hidden()
    expect(subtitle).to_contain_text(DEMO["network"])
    square.click()
    page.get_by_role("button", name="Load the scene").click()
    expect(subtitle).to_contain_text("linear-tiled-identity", timeout=60_000)
    page.get_by_role("button", name="Undo").click()
    expect(subtitle).to_contain_text(DEMO["network"], timeout=30_000)
    page.locator(".bk-tab").filter(has_text="Mesh").first.click()
    expect(change).to_have_text(tuned)


@pytest.mark.ui
def test_the_transpose_scene_teaches_its_terms_and_its_numbers_agree(page, demo_url):
    """Issue 40, item 10: the transpose-XY scene says why 0.12 is past saturation under a
    bound of 1/7; the cycles box and the counter agree; the terms a student meets (flit,
    virtual channel, credit, saturation, back-pressure) have hover help; the player's
    buttons have names."""
    from explorer.views.glossary import GLOSSARY, PLAYER_LABELS

    page.set_viewport_size({"width": 1366, "height": 768})
    open_in(page, demo_url)
    page.locator(".bk-tab").filter(has_text="Traffic").first.click()
    page.get_by_role("button", name="transpose, XY").click()
    text = page.get_by_test_id("scene-text")
    expect(text).to_contain_text("past saturation")
    expect(text).to_contain_text("saturates well below")  # … and why, before it says so
    counter = page.get_by_test_id("traffic-counter")
    expect(counter).to_contain_text("window 1 of", timeout=60_000)
    page.get_by_test_id("traffic-settings").click()  # the settings card opens
    box = int(page.get_by_label("cycles", exact=True).input_value())
    assert box == 10000
    said = counter.text_content()
    total = int(re.search(r"of ([\d,]+)", said).group(1).replace(",", ""))
    asked = RUN_WARMUP + box  # the warm-up is drawn too
    # the counter says how its cycles stand to the box's: the drain after them, a stop past
    # saturation before their end (as BookSim2 stops), or exactly them
    if total > asked:
        assert f"warm-up and {box:,} measured cycles, then the packets" in said
    elif total < asked:
        assert f"warm-up and {box:,} measured cycles: its latency passed" in said
    else:
        assert "(" not in said.split("·")[0], said
    shown = page.evaluate(TERMS_SHOWN)
    for term, sentence in GLOSSARY.items():
        assert any(t["title"] == sentence for t in shown), (term, shown)
    assert page.evaluate(DESCRIPTION, "offered flits/node/cycle") == GLOSSARY["flit"]
    assert "the counter below may count more" in page.evaluate(DESCRIPTION, "cycles")
    for name in ("first", "previous", "pause", "play", "next", "last"):
        button = page.locator(f"button.{name}")
        expect(button).to_have_attribute("aria-label", PLAYER_LABELS[name])
        expect(button).to_have_attribute("title", PLAYER_LABELS[name])
    page.get_by_role("button", name=PLAYER_LABELS["next"]).click()  # named as a person asks
    expect(counter).to_contain_text("window 2 of")
