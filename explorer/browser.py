"""Driving a served explorer page from a browser: Debian's Chromium and its flags, a free port,
waiting for the server, and the page probes (JavaScript run in the page through Playwright)
that find the mesh figure, its cores and links, and time what the page shows.

The browser tests (``tests/ui``) and the page benchmarks (``benchmarks/page.py``,
``soak.py``) share them; nothing here is imported by the explorer itself, and Playwright is
the caller's (every function takes its ``page``).
"""

from __future__ import annotations

import contextlib
import os
import socket
import time
import urllib.error
import urllib.request

__all__ = [
    "CHROMIUM",
    "CHROMIUM_ARGS",
    "CORE_XY",
    "DEMO",
    "FIGURE_DRAWN",
    "FIND_TESTID",
    "HOT_LINK_XY",
    "MESH_PLOT",
    "SEEK_TESTID",
    "TABLE_ROWS",
    "WATCH_TEXT",
    "WEBSOCKET_OPEN",
    "drag_core",
    "free_port",
    "open_in",
    "served_view",
    "wait_for_http",
]

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",  # without these Chromium keeps calling the
    "--disable-component-update",  # (closed) network
    "--disable-sync",
]
WEBSOCKET_OPEN = "Websocket connection 0 is now open"  # what Panel logs when a session is live
DEMO = {"network": "sparse-mlp-1", "hardware": "loihi2"}

# JavaScript: the mesh figure's Bokeh view (the figure that draws the cores), as ``plot``;
# the snippets below say ``PLOT`` where it goes
MESH_PLOT = """const plot = [...Bokeh.index.all_views()].find(
    (v) => v.model.type === "Figure" && v.model.renderers.some((r) => r.name === "cores"));"""

# The mesh figure once Bokeh has finished drawing it, with its frame on the page; null before.
FIGURE_DRAWN = """() => {
  if (!window.Bokeh || !Bokeh.index) return null;
  PLOT
  if (!plot || !plot.has_finished()) return null;
  const rows = (name) =>
    plot.model.renderers.find((r) => r.name === name).data_source.get_length();
  const canvas = plot.canvas_view.el.getBoundingClientRect();
  const f = plot.frame.bbox;
  return {
    links: rows("links"),
    cores: rows("cores"),
    frame: {x: canvas.left + f.left, y: canvas.top + f.top, width: f.width, height: f.height},
  };
}""".replace("PLOT", MESH_PLOT)

# Page coordinates of physical cores (rows of the "cores" source), from the plot's scales.
CORE_XY = """(cores) => {
  PLOT
  const data = plot.model.renderers.find((r) => r.name === "cores").data_source.data;
  const canvas = plot.canvas_view.el.getBoundingClientRect();
  return cores.map((i) => [canvas.left + plot.frame.x_scale.compute(data.x[i]),
                           canvas.top + plot.frame.y_scale.compute(data.y[i])]);
}""".replace("PLOT", MESH_PLOT)

# Page coordinates of the middle of the most loaded link of the mesh figure.
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

# Rows of the page's (first) flow table, -1 while there is none.
TABLE_ROWS = """() => {
  const doc = Bokeh.documents[0];
  const table = [...doc.all_models].find((m) => m.type.endsWith("DataTabulator"));
  return table ? table.source.get_length() : -1;
}"""

# A JavaScript function find(testid): the element with that data-testid, looked for
# through every shadow root (Bokeh and Panel draw inside them), or null.
FIND_TESTID = """const find = (testid, root = document) => {
    const hit = root.querySelector(`[data-testid="${testid}"]`);
    if (hit) return hit;
    for (const el of root.querySelectorAll("*")) {
      if (el.shadowRoot) { const inner = find(testid, el.shadowRoot); if (inner) return inner; }
    }
    return null;
  };"""

# … and seek(testid): the same, remembered while it stays on the page. A watch that walks
# every shadow root on every frame slows the page it times (~70 ms of a drag on an
# eight-chip board); an element replaced by an update is no longer connected, so it is
# looked for again.
SEEK_TESTID = (
    FIND_TESTID
    + """
  const seen = {};
  const seek = (testid) => {
    let el = seen[testid];
    if (!el || !el.isConnected) el = seen[testid] = find(testid);
    return el;
  };"""
)

# Arm a watch: resolves to the ms from the next pointerup to the moment the element with
# this data-testid no longer shows `before`.
WATCH_TEXT = f"""([testid, before]) => {{
  {SEEK_TESTID}
  let up = null;
  window.addEventListener("pointerup", () => {{ up = performance.now(); }},
                          {{capture: true, once: true}});
  window.__textChanged = new Promise((resolve) => {{
    const tick = () => {{
      const el = seek(testid);
      if (up !== null && el && el.textContent !== before) resolve(performance.now() - up);
      else requestAnimationFrame(tick);
    }};
    tick();
  }});
}}"""


def open_in(page, url: str):
    """Go to ``url`` in ``page``; return once the session is live and the mesh is drawn."""
    with page.expect_console_message(lambda m: WEBSOCKET_OPEN in m.text, timeout=30_000):
        page.goto(url)
    page.wait_for_function(FIGURE_DRAWN)
    return page


def drag_core(page, core: int, onto: int, *, watch: str | None = None) -> float | None:
    """Drag core ``core`` onto the slot of core ``onto`` with the real mouse.

    With ``watch`` (a data-testid), return the ms from mouse-up until that element's
    text changed, measured in the page.
    """
    (x0, y0), (x1, y1) = page.evaluate(CORE_XY, [core, onto])
    if watch:
        before = page.get_by_test_id(watch).text_content()
        page.evaluate(WATCH_TEXT, [watch, before])
    page.mouse.move(x0, y0)
    page.mouse.down()
    page.mouse.move(x1, y1, steps=8)
    page.mouse.up()
    return page.evaluate("() => window.__textChanged") if watch else None


SCROLL_STILL = """() => new Promise((done) => {
  let last = window.scrollY, still = 0;
  const look = () => {
    still = window.scrollY === last ? still + 1 : 0;
    last = window.scrollY;
    if (still >= 10) done(last); else requestAnimationFrame(look);
  };
  requestAnimationFrame(look);
})"""


LAYOUT_STILL = """() => new Promise((done) => {
  const size = () => [document.documentElement.scrollWidth, document.documentElement.scrollHeight]
    .join("x");
  let last = size(), still = 0;
  const look = () => {
    const now = size();
    still = now === last ? still + 1 : 0;
    last = now;
    if (still >= 10) done(now); else requestAnimationFrame(look);
  };
  requestAnimationFrame(look);
})"""


def layout_settled(page) -> str:
    """Wait until the page's scrollable size has not changed for ten frames (what a layout
    pass after the first paint moves has moved); that size, ``WIDTHxHEIGHT``."""
    return page.evaluate(LAYOUT_STILL)


def scroll_settled(page) -> float:
    """Wait until the page has not scrolled for ten frames (a smooth scroll the page started
    has ended, as a person waits for it before aiming the mouse); the final scroll offset."""
    return page.evaluate(SCROLL_STILL)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_http(url: str, timeout_s: float = 120.0) -> None:
    """Poll ``url`` until it answers 200 (the server thread binds and starts asynchronously).

    A request, once the server listens, waits for its answer until the deadline: a session
    built cold on a loaded machine may take tens of seconds, and a request abandoned after a
    few would leave the server building a session nobody reads while the next one queues.
    The deadline bounds a server that never answers, not its speed."""
    deadline = time.monotonic() + timeout_s
    while True:
        with (
            # not up yet, or no answer before the deadline
            contextlib.suppress(urllib.error.URLError, ConnectionError, TimeoutError),
            urllib.request.urlopen(url, timeout=max(1.0, deadline - time.monotonic())) as r,
        ):
            if r.status == 200:
                return
        if time.monotonic() > deadline:
            raise TimeoutError(f"the explorer did not answer at {url} within {timeout_s} s")
        time.sleep(0.05)  # poll interval, not a wait for the page


@contextlib.contextmanager
def served_view(name: str, app, title: str):
    """``app`` (a function returning one view) served in-process at ``/name`` on a free
    port; yields its URL and stops the server after."""
    import panel as pn

    port = free_port()
    server = pn.serve(
        {name: app}, port=port, address="127.0.0.1", show=False, threaded=True,
        websocket_origin=[f"127.0.0.1:{port}"], title=title,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}/{name}"
    try:
        wait_for_http(url)
        yield url
    finally:
        server.stop()
        server.join(timeout=10)
