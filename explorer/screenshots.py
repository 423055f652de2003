"""The README's screenshots of every tab, taken as a person sees them at 1366×768.

``python -m explorer.screenshots`` (``make screenshots``) serves the demo in this process,
opens it in Debian's Chromium, does on each tab what its screenshot shows — a core
dragged on the Mesh tab, a short search on Evolution and Pareto, the "uniform, beyond"
scene played a while on Traffic — and saves the first screen of each to
``assets/tab-<tab>.png``. The figures in them come from the run, as everything else does.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from explorer.browser import CHROMIUM, CHROMIUM_ARGS, DEMO, drag_core, free_port, open_in
from explorer.tabs import titles

__all__ = ["TABS", "take"]

ROOT = Path(__file__).resolve().parents[1]
VIEWPORT = {"width": 1366, "height": 768}
TABS = tuple(titles())  # every tab of the page (explorer.tabs), in its order


def _tab(page, name: str):
    return page.locator(".bk-tab").filter(has_text=name).first


def _visible(page, role: str, name: str):
    """The one element of ``role`` and ``name`` on the tab shown (hidden tabs hold others)."""
    return page.get_by_role(role, name=name).locator("visible=true").first


def _mesh(page, expect) -> None:
    drag_core(page, 0, 8)
    expect(page.get_by_test_id("metric-change-value")).not_to_have_text("0 %", timeout=30_000)
    expect(page.get_by_test_id("metric-simulated")).to_contain_text("vs start", timeout=120_000)


def _search(page, expect, status: str) -> None:
    budget = page.get_by_label("budget (evaluations)").locator("visible=true").first
    budget.fill("60")
    _visible(page, "button", "Start").click()
    expect(page.get_by_test_id(status)).to_contain_text("done after", timeout=300_000)


def _traffic(page, expect) -> None:
    page.get_by_role("button", name="uniform, beyond").click()
    expect(page.get_by_test_id("traffic-summary")).to_contain_text("accepted", timeout=120_000)
    # the run a third of the way through (the player's model, as its slider would set it)
    page.evaluate("""() => { const p = [...Bokeh.documents[0].all_models].find(
        (m) => String(m.type).endsWith("Player"));
      p.value = Math.round(p.end / 3); }""")
    expect(page.get_by_test_id("traffic-counter")).not_to_contain_text("window 1 of")


ACTIONS = {
    "Mesh": _mesh,
    "Evolution": lambda page, expect: _search(page, expect, "search-status"),
    "Traffic": _traffic,
    "Pareto": lambda page, expect: _search(page, expect, "pareto-status"),
}


def take(out: Path, tabs=TABS) -> list[Path]:
    """Serve the demo, visit ``tabs`` in order at 1366×768, save each one's first screen to
    ``out/tab-<name>.png``; returns the files written."""
    from playwright.sync_api import expect, sync_playwright

    from explorer.app import serve

    port = free_port()
    server = serve(**DEMO, port=port, address="127.0.0.1", show=False, threaded=True)
    written = []
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            page = browser.new_page(viewport=VIEWPORT)
            open_in(page, f"http://127.0.0.1:{port}/")
            for name in tabs:
                _tab(page, name).click()
                page.wait_for_timeout(1500)  # the tab's first drawing
                action = ACTIONS.get(name)
                if action is not None:
                    action(page, expect)
                page.mouse.move(2, 2)  # no tooltip left over from the action
                page.evaluate("() => window.scrollTo(0, 0)")
                page.wait_for_timeout(300)
                path = out / f"tab-{name.lower()}.png"
                page.screenshot(path=str(path))
                written.append(path)
            browser.close()
    finally:
        server.stop()
    return written


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "assets", help="folder (assets/)")
    parser.add_argument("--tabs", default=",".join(TABS), help="tabs to take, comma-separated")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    for path in take(args.out, [t.strip() for t in args.tabs.split(",") if t.strip()]):
        print(path)


if __name__ == "__main__":
    main()
