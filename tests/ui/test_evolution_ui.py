"""The evolution view in a real browser: Start grows the convergence plot live, Stop halts it.

A page with one ``ExplorerState`` and its ``EvolutionView`` is served in-process. The
test reads the convergence plot's data source in the page through BokehJS, so it checks
what the browser received, not what the server meant to send. It prints the rows per
second the page received, how often it was updated, the longest gap between two
animation frames while the search ran (the page's responsiveness) and how long Stop
took to show.
"""

from __future__ import annotations

import re
import time

import pytest
from playwright.sync_api import expect

from explorer.browser import served_view
from explorer.state import ExplorerState
from explorer.views.evolution import EvolutionView

NET = "mlp:widths=256-512-256-10"
BUDGET = 20_000  # the most a client may ask for: long enough to be stopped

# The convergence plot's source, found by name in the page's Bokeh document.
SOURCE = """(() => {
  if (!window.Bokeh || !Bokeh.documents || !Bokeh.documents.length) return null;
  return Bokeh.documents[0].get_model_by_name("evolution-trace");
})()"""
ROWS = f"() => {{ const s = {SOURCE}; return s ? s.get_length() : null; }}"

# Record, on every animation frame, the source's length when it changed and the frame gap.
SAMPLER = f"""() => {{
  const source = {SOURCE};
  const m = {{samples: [], maxGap: 0, last: performance.now(), n: source.get_length()}};
  window.__evolution = m;
  const tick = (t) => {{
    m.maxGap = Math.max(m.maxGap, t - m.last);
    m.last = t;
    const n = source.get_length();
    if (n !== m.n) {{ m.samples.push([t, n]); m.n = n; }}
    if (!m.stop) requestAnimationFrame(tick);
  }};
  requestAnimationFrame(tick);
}}"""


@pytest.fixture(scope="module")
def evolution_url():
    """A page with the evolution view of one session's state, served in-process."""

    def app():
        return EvolutionView(state=ExplorerState.from_specs(NET, "loihi2"))

    ExplorerState.from_specs(NET, "loihi2")  # warm the caches before the first visitor
    with served_view("evolution", app, "MeshScope evolution") as url:
        yield url


def _status_count(text: str) -> int:
    match = re.search(r"after (\d+) evaluations", text)
    assert match, f"no evaluation count in the status {text!r}"
    return int(match.group(1))


@pytest.mark.ui
def test_start_grows_the_convergence_plot_and_stop_halts_it(open_page, evolution_url):
    page = open_page(evolution_url)
    status = page.get_by_test_id("search-status")
    start = page.get_by_role("button", name="Start")
    stop = page.get_by_role("button", name="Stop")
    adopt = page.get_by_role("button", name="Adopt")
    expect(status).to_contain_text("No search yet")
    assert page.wait_for_function(f"() => ({ROWS})() === 0").json_value()
    expect(stop).to_be_disabled()
    expect(adopt).to_be_disabled()

    page.evaluate(SAMPLER)
    # type the budget and click Start at once, as a person does: the input's change and
    # the click arrive together, and Panel then runs the click without the document lock
    # (explorer.views.evolution.on_page; without it no search starts on this path)
    page.get_by_label("budget (evaluations)").fill(str(BUDGET))
    start.click()
    expect(status).to_contain_text(f"/ {BUDGET} evaluations")  # the run took the budget typed
    expect(start).to_be_disabled()
    expect(stop).to_be_enabled()

    # the plot grows while the search runs: wait for a couple of seconds' worth of rows
    page.wait_for_function(f"() => ({ROWS})() >= 1500", timeout=60_000)
    grown = page.evaluate(ROWS)
    assert grown >= 1500

    t_stop = time.monotonic()
    stop.click()
    expect(status).to_contain_text("stopped after", timeout=30_000)
    stop_ms = 1000 * (time.monotonic() - t_stop)
    final = page.evaluate(ROWS)
    assert final >= grown
    assert final == _status_count(status.text_content())  # every evaluation reached the page
    expect(start).to_be_enabled()
    expect(stop).to_be_disabled()

    # a full round trip to the server after the stop: nothing more arrives
    adopt.click()
    expect(status).to_contain_text("adopted the best")
    assert page.evaluate(ROWS) == final

    m = page.evaluate("() => { window.__evolution.stop = true; return window.__evolution; }")
    samples = m["samples"]
    assert len(samples) >= 2, "the plot did not grow in steps: was it streamed at all?"
    (t0, n0), (t1, n1) = samples[0], samples[-1]
    seconds = (t1 - t0) / 1000
    rows_per_s = (n1 - n0) / seconds if seconds > 0 else float("nan")
    updates_per_s = (len(samples) - 1) / seconds if seconds > 0 else float("nan")
    print(
        f"\nevolution page: {final} rows; received {rows_per_s:,.0f} rows/s in "
        f"{updates_per_s:.1f} updates/s; longest frame gap while running "
        f"{m['maxGap']:.0f} ms; Stop → 'stopped' shown in {stop_ms:.0f} ms"
    )
