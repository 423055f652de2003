"""Soak: many browser sessions against one real ``meshscope serve``, one after another and all
at once.

Each session opens the page in a fresh browser context (Debian's Chromium through
Playwright), drags a core onto another, runs a short search on the Evolution tab until it
is done, and closes. The server's resident memory (``/proc/PID/status`` VmRSS) is read
after sessions 20, 50, 100, 150 and 200, each time once the server has dropped the closed
ones (Bokeh discards a session 15 s after its page is gone and looks every 17 s).
Target: after 200 sessions, memory within 10 % of where it was after the first 20.

**Many strangers** (``strangers``): twenty pages, each loading a large network a client may
load (``rand:n=100000,card=64,seed=K`` on ``loihi2-x8``) at once, against a server given a
memory budget (``--max-memory``); all of them come from this machine, so the server is told
to let one computer have that many requests (``--client-jobs``). The server's resident
memory is sampled every 0.2 s (its peak must stay within the budget), another page — the
demo, opened first — drags a core again and again meanwhile (mouse-up to latency card), and
the server's memory is read once every page has closed.

Prints one JSON object and writes it to ``benchmarks/results/soak.json``.

    .venv/bin/python benchmarks/soak.py [--sessions 200] [--budget 30]
    .venv/bin/python benchmarks/soak.py --only strangers [--strangers 20] [--max-memory 6G]

``--only`` measures the case it names and keeps the other from the results file (whose
``meta.kept`` says which command and date measured it).

``--quick``: a tiny case through the same code, printed and not written
(tests/benchmarks/test_quick.py runs it).
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

from common import RESULTS, ROOT, finish, parser
from playwright.sync_api import expect, sync_playwright

from explorer.admission import parse_size
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


# ------------------------------------------------------------------ many strangers
class Peak(threading.Thread):
    """The most resident memory a process reaches while it is watched (sampled)."""

    def __init__(self, pid: int, every_s: float = 0.2):
        super().__init__(daemon=True)
        self.pid, self.every_s, self.mb, self._done = pid, every_s, 0.0, threading.Event()

    def run(self) -> None:
        while not self._done.is_set():
            self.mb = max(self.mb, rss_mb(self.pid))
            self._done.wait(self.every_s)

    def stop(self) -> float:
        self._done.set()
        self.join(5)
        return self.mb


def _load(page, network: str, hardware: str) -> None:
    page.get_by_placeholder("e.g. qubo:n=2000").fill(network)
    page.get_by_placeholder("e.g. mesh:8x8x2").fill(hardware)
    button = page.get_by_role("button", name="Load", exact=True).first
    button.click()
    # the server took it: the button waits or loads, or (a small network) it has loaded already
    deadline, mark = time.monotonic() + 30, network.split(",")[-1]
    while page.locator(".bk-btn-primary").first.is_enabled() and _outcome(page, mark) != "loaded":
        if time.monotonic() > deadline:
            raise TimeoutError(f"the page did not take {network!r} within 30 s")
        time.sleep(0.05)


def _outcome(page, network: str) -> str | None:
    """'loaded', 'refused' (the Load button free again, the network not shown: a
    notification said why) or None while it waits or loads."""
    if network in (page.get_by_test_id("subtitle").text_content() or ""):
        return "loaded"
    if page.locator(".bk-btn-primary").first.is_enabled():
        return "refused"
    return None


def strangers(count: int, network: str, hardware: str, max_memory: str, settle_s: float,
              drag_every_s: float = 1.0, timeout_s: float = 900.0) -> dict:  # fmt: skip
    port = free_port()
    url = f"http://127.0.0.1:{port}/"
    server = subprocess.Popen(
        [sys.executable, "-m", "explorer.cli", "serve", "--no-browser", "--port", str(port),
         "--max-memory", max_memory, "--client-jobs", str(count + 1)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT,
    )  # fmt: skip
    try:
        wait_for_http(url, timeout_s=120)
        start_mb = rss_mb(server.pid)
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            watcher = browser.new_context(viewport={"width": 1366, "height": 768}).new_page()
            open_in(watcher, url)
            # the input core onto a layer3 core and back: each drag changes the latency card
            quiet = [drag_core(watcher, 0, 8, watch="metric-latency-value") for _ in range(6)]
            pages = []
            for _ in range(count):
                page = browser.new_context(viewport={"width": 1366, "height": 768}).new_page()
                open_in(page, url)
                pages.append(page)
            peak = Peak(server.pid)
            peak.start()
            t0 = time.monotonic()
            for k, page in enumerate(pages):  # one after another, as fast as one can click
                _load(page, f"{network},seed={k + 1}", hardware)
            drags, outcomes, lost = [], {}, 0
            while len(outcomes) < count and time.monotonic() - t0 < timeout_s:
                try:
                    drags.append(drag_core(watcher, 0, 8, watch="metric-latency-value"))
                except TimeoutError:  # the card did not move within 60 s: counted, not timed
                    lost += 1
                for i, page in enumerate(pages):
                    if i not in outcomes and (done := _outcome(page, f"seed={i + 1}")):
                        outcomes[i] = done
                time.sleep(drag_every_s)
            wall = time.monotonic() - t0
            peak_mb = peak.stop()
            for page in pages:
                page.context.close()
            time.sleep(settle_s)  # Bokeh drops the closed sessions; their memory goes back
            after_mb = rss_mb(server.pid)
            watcher.context.close()
            browser.close()
    finally:
        server.terminate()
        server.wait(30)
    said = list(outcomes.values())
    budget_mb = parse_size(max_memory) / 2**20
    return {
        "strangers": count,
        "network": f"{network},seed=K",
        "hardware": hardware,
        "max_memory_mb": round(budget_mb, 1),
        "loaded": said.count("loaded"),
        "refused": said.count("refused"),
        "unfinished": count - len(said),
        "wall_s": round(wall, 1),
        "rss_mb_at_start": round(start_mb, 1),
        "rss_mb_peak": round(peak_mb, 1),
        "peak_within_budget": peak_mb <= budget_mb,
        "rss_mb_after_close": round(after_mb, 1),
        "drag_ms_quiet_median": round(statistics.median(quiet), 1),
        "drag_ms_median": round(statistics.median(drags), 1) if drags else None,
        "drag_ms_max": round(max(drags), 1) if drags else None,
        "drags": len(drags),
        "drags_lost": lost,
    }


CASES = ("sessions", "strangers")


if __name__ == "__main__":
    ap = parser(__doc__)
    ap.add_argument("--sessions", type=int, default=200)
    ap.add_argument("--budget", type=int, default=30, help="evaluations of each search")
    ap.add_argument("--settle", type=float, default=40.0, help="seconds before each reading")
    ap.add_argument("--strangers", type=int, default=20, help="pages loading at once")
    ap.add_argument("--network", default="rand:n=100000,card=64", help="what each stranger loads")
    ap.add_argument("--hardware", default="loihi2-x8")
    ap.add_argument("--max-memory", default="6G", help="the server's budget (serve --max-memory)")
    ap.add_argument("--only", choices=CASES, help="measure this case, keep the other's figures")
    args = ap.parse_args()
    if args.quick:
        args.sessions, args.budget, args.settle = 1, 6, 1.0
        args.strangers, args.network, args.hardware = 2, "rand:n=2000,card=8", "loihi2"
    figures, meta = {}, {}
    if args.only and not args.quick:
        before = json.loads((RESULTS / "soak.json").read_text())
        kept = {k: v for k, v in before.items() if k not in ("meta", "strangers")}
        figures = kept if args.only == "strangers" else {"strangers": before["strangers"]}
        earlier = {k["case"]: k for k in before["meta"].get("kept", [])}  # kept before too
        was = {"command": before["meta"]["command"], "date": before["meta"]["date"]}
        meta = {"kept": [earlier.get(c, {**was, "case": c}) for c in CASES if c != args.only]}
    if args.only in (None, "sessions"):
        figures.update(main(args.sessions, args.budget, args.settle))
    if args.only in (None, "strangers"):
        figures["strangers"] = strangers(
            args.strangers, args.network, args.hardware, args.max_memory, args.settle
        )
    finish(args, "soak", figures, meta=meta)
