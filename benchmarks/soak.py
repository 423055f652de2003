"""Soak: many browser sessions one after another against one real ``meshscope serve``.

Each session opens the page in a fresh browser context (Debian's Chromium through
Playwright), drags a core onto another, runs a short search on the Evolution tab until it
is done, and closes. The server's resident memory (``/proc/PID/status`` VmRSS) is read
after sessions 20, 50, 100, 150 and 200, each time once the server has dropped the closed
ones (Bokeh discards a session 15 s after its page is gone and looks every 17 s).
Target: after 200 sessions, memory within 10 % of where it was after the first 20.

Prints one JSON object and writes it to ``benchmarks/results/soak.json``.

    .venv/bin/python benchmarks/soak.py [--sessions 200] [--budget 30]

``--quick``: a tiny case through the same code, printed and not written
(tests/benchmarks/test_quick.py runs it).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from common import ROOT, finish, parser
from playwright.sync_api import expect, sync_playwright

from explorer.browser import (
    CHROMIUM,
    CHROMIUM_ARGS,
    drag_core,
    free_port,
    open_in,
    wait_for_http,
)

READINGS = (1, 20, 50, 100, 150, 200)


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for pid {pid}")


def one_session(browser, url: str, budget: int) -> None:
    context = browser.new_context(viewport={"width": 1500, "height": 1000})
    page = context.new_page()
    open_in(page, url)
    drag_core(page, 0, 5)
    page.locator(".bk-tab").filter(has_text="Evolution").first.click()
    status = page.get_by_test_id("search-status")
    page.get_by_label("budget (evaluations)").fill(str(budget))
    page.get_by_role("button", name="Start").click()
    expect(status).to_contain_text("done after", timeout=60_000)
    context.close()


def main(sessions: int, budget: int, settle_s: float) -> dict:
    port = free_port()
    url = f"http://127.0.0.1:{port}/"
    server = subprocess.Popen(
        [sys.executable, "-m", "explorer.cli", "serve", "--no-browser", "--port", str(port)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT,
    )  # fmt: skip
    samples = []
    try:
        wait_for_http(url, timeout_s=120)
        start_mb = rss_mb(server.pid)
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            t0 = time.monotonic()
            for k in range(1, sessions + 1):
                one_session(browser, url, budget)
                if k in READINGS or k == sessions:
                    time.sleep(settle_s)  # the closed sessions are dropped
                    samples.append({"sessions": k, "rss_mb": round(rss_mb(server.pid), 1)})
                    print(json.dumps(samples[-1]), file=sys.stderr)
            wall = time.monotonic() - t0
            browser.close()
    finally:
        server.terminate()
        server.wait(30)
    at = {s["sessions"]: s["rss_mb"] for s in samples}
    base = at.get(20, samples[0]["rss_mb"])
    end = samples[-1]["rss_mb"]
    out = {
        "sessions": sessions,
        "search_budget": budget,
        "wall_s": round(wall, 1),
        "rss_mb_at_start": round(start_mb, 1),
        "rss_mb_after_20": base,
        "rss_mb_at_end": end,
        "growth_after_20_pct": round(100.0 * (end - base) / base, 2),
        "target_pct": 10.0,
        "samples": samples,
    }
    return out


if __name__ == "__main__":
    ap = parser(__doc__)
    ap.add_argument("--sessions", type=int, default=200)
    ap.add_argument("--budget", type=int, default=30, help="evaluations of each search")
    ap.add_argument("--settle", type=float, default=40.0, help="seconds before each reading")
    args = ap.parse_args()
    if args.quick:
        args.sessions, args.budget, args.settle = 1, 6, 1.0
    finish(args, "soak", main(args.sessions, args.budget, args.settle))
