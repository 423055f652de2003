"""How fast the explorer answers a person: page load, first heatmap, drag, simulation.

Starts a real ``meshscope serve`` for each case and drives Debian's Chromium through
Playwright, a fresh browser context per repeat. Every time is measured in the page
(``performance.now()``), so it is what the person waits for:

* ``load_ms``: from navigation start to the mesh drawn with its link colours (the first
  heatmap is the mesh: the page has nothing to show before it); on the way,
  ``first_byte_ms`` (the server's answer: it builds the session's document first) and
  ``scripts_loaded_ms`` (the page's scripts loaded and run, DOMContentLoaded);
* ``drag_ms``: from mouse-up on a dragged core to the latency card showing the new value;
* ``simulated_card_ms``: from that mouse-up to the simulated step's card updated;
* ``simulate_first_frame_ms``: from a click on the Traffic tab's Simulate to the first
  window of the run drawn (the counter showing ``window 1 of``).

Before each measured visit the server has been idle (under 5 % of a core) for a second: a
visit's background work — its step simulation, the Traffic tab's run, its session's
teardown — would otherwise land in the next visit's page load, which a person opening the
page does not wait for. Cases: the demo (sparse-mlp-1 on one Loihi 2 chip, 128 cores) and
an eight-chip board (sparse-mlp-2 on loihi2-x8, 1,024 cores). Prints one JSON object (min,
median and max of ``--repeats`` runs) and writes it to ``benchmarks/results/page.json``.

    .venv/bin/python benchmarks/page.py [--repeats 3]

``--quick``: a tiny case through the same code, printed and not written
(tests/benchmarks/test_quick.py runs it).
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from common import ROOT, finish, parser
from playwright.sync_api import expect, sync_playwright

from engine.pipeline import build_mapping
from explorer.browser import (
    CHROMIUM,
    CHROMIUM_ARGS,
    CORE_XY,
    FIGURE_DRAWN,
    SEEK_TESTID,
    WATCH_TEXT,
    free_port,
    wait_for_http,
)

CASES = {
    "loihi2 (128 cores)": ("sparse-mlp-1", "loihi2"),
    "loihi2-x8 (1,024 cores)": ("sparse-mlp-2", "loihi2-x8"),
}

# ms from navigation start until the mesh is drawn (FIGURE_DRAWN not null), in the page
LOADED_AT = f"""async () => {{
  const drawn = {FIGURE_DRAWN};
  while (!drawn()) await new Promise((r) => requestAnimationFrame(r));
  return performance.now();
}}"""

# ms from the next mouse-up (a click on Simulate) until the counter says window 1
FIRST_FRAME = f"""() => {{
  {SEEK_TESTID}
  let clicked = null;
  window.addEventListener("pointerup", () => {{ clicked = performance.now(); }},
                          {{capture: true, once: true}});
  window.__firstFrame = new Promise((resolve) => {{
    const tick = () => {{
      const el = seek("traffic-counter");
      if (clicked !== null && el && /window 1 of/.test(el.textContent)) {{
        resolve(performance.now() - clicked);
      }} else requestAnimationFrame(tick);
    }};
    tick();
  }});
}}"""


# ms from the next mouse-up until the element with this data-testid has been greyed (a
# newer simulation runs) and then shows a settled value again
AFTER_UP = f"""(testid) => {{
  {SEEK_TESTID}
  let up = null, pending = false;
  window.addEventListener("pointerup", () => {{ up = performance.now(); }},
                          {{capture: true, once: true}});
  window.__settled = new Promise((resolve) => {{
    setTimeout(() => resolve(null), 120000);  // never settled: reported as null
    const tick = () => {{
      const el = seek(testid);
      if (up !== null && el) {{
        if (el.classList.contains("pending")) pending = true;
        else if (pending) {{ resolve(performance.now() - up); return; }}
      }}
      requestAnimationFrame(tick);
    }};
    tick();
  }});
}}"""


def one_run(browser, url: str, cores: list[int]) -> dict:
    """One visit; ``cores``: the placed cores of the page's starting mapping."""
    context = browser.new_context(viewport={"width": 1600, "height": 1000})
    page = context.new_page()
    page.goto(url)
    load_ms = page.evaluate(LOADED_AT)
    # where the load went: the server's answer (it builds the session's document first),
    # then the scripts, then the document over the websocket and drawn in the browser
    first_byte_ms, scripts_ms = page.evaluate(
        "() => { const n = performance.getEntriesByType('navigation')[0];"
        " return [n.responseStart, n.domContentLoadedEventEnd]; }"
    )
    simulated = page.get_by_test_id("metric-simulated")
    expect(simulated).to_contain_text("vs start", timeout=120_000)  # the start's step is in
    a, b = cores[0], cores[len(cores) // 2]
    (x0, y0), (x1, y1) = page.evaluate(CORE_XY, [a, b])
    page.evaluate(
        WATCH_TEXT,
        ["metric-latency-value", page.get_by_test_id("metric-latency-value").text_content()],
    )
    page.evaluate(AFTER_UP, "metric-simulated")  # fmt: skip
    page.mouse.move(x0, y0)
    page.mouse.down()
    page.mouse.move(x1, y1, steps=8)
    page.mouse.up()
    drag_ms = page.evaluate("() => window.__textChanged")
    card_ms = page.evaluate("() => window.__settled")
    page.locator(".bk-tab").filter(has_text="Traffic").first.click()
    button = page.get_by_role("button", name="Simulate")
    expect(button).to_be_visible(timeout=30_000)
    page.evaluate(FIRST_FRAME)
    button.click()
    first_frame_ms = page.evaluate("() => window.__firstFrame")
    context.close()
    return {
        "load_ms": load_ms,
        "first_byte_ms": first_byte_ms,
        "scripts_loaded_ms": scripts_ms,
        "drag_ms": drag_ms,
        "simulated_card_ms": card_ms,
        "simulate_first_frame_ms": first_frame_ms,
    }


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` so far, every thread (Linux ``/proc``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def wait_until_idle(pid: int, quiet_s: float = 1.0, timeout_s: float = 120.0) -> None:
    """Wait until the server has used under 5 % of a core for ``quiet_s``: what the last
    visit left running (its background step simulation, the Traffic tab's run, the closed
    session's teardown) must not land in the next visit's page load."""
    deadline = time.monotonic() + timeout_s
    before, since = cpu_seconds(pid), time.monotonic()
    while time.monotonic() < deadline:
        time.sleep(quiet_s)
        used, now = cpu_seconds(pid), time.monotonic()
        if used - before < 0.05 * (now - since):
            return
        before, since = used, now


def summary(values: list[float]) -> dict:
    return {
        "min": round(min(values), 1),
        "median": round(statistics.median(values), 1),
        "max": round(max(values), 1),
    }


def main() -> None:
    ap = parser(__doc__)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--case", choices=list(CASES), action="append",
                    help="only these cases (default: all)")  # fmt: skip
    args = ap.parse_args()
    cases = args.case or list(CASES)
    if args.quick:
        args.repeats, cases = 1, cases[:1]
    out = {"repeats": args.repeats, "cases": {}}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        for label, (network, hardware) in CASES.items():
            if label not in cases:
                continue
            port = free_port()
            server = subprocess.Popen(
                [sys.executable, "-m", "explorer.cli", "serve", "--network", network,
                 "--hardware", hardware, "--port", str(port), "--no-browser"],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT,
            )  # fmt: skip
            cores = build_mapping(network, hardware).mapping.placement.cores.tolist()
            try:
                url = f"http://127.0.0.1:{port}/"
                wait_for_http(url, timeout_s=180)
                if not args.quick:  # (quick: the same code path, timings of a cold server)
                    one_run(browser, url, cores)  # a first visit: caches and kernels warm
                runs = []
                for _ in range(args.repeats):
                    wait_until_idle(server.pid)
                    runs.append(one_run(browser, url, cores))
            finally:
                server.terminate()
                server.wait(timeout=30)
            out["cases"][label] = {key: summary([r[key] for r in runs]) for key in runs[0]}
            time.sleep(1)
        browser.close()
    finish(args, "page", out, save=not args.case)  # the results file holds whole runs only


if __name__ == "__main__":
    main()
