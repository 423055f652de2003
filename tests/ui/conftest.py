"""Browser tests: Debian's Chromium through pytest-playwright, the explorer served in-process.

Playwright cannot download its own browser on these machines, so the fixtures point it
at ``/usr/bin/chromium`` (``$CHROMIUM`` overrides). A missing browser fails the tests:
a skipped browser test would hide that nothing was checked. What the tests and the page
benchmarks share to drive a page lives in ``explorer/browser.py``.
"""

from __future__ import annotations

import os

import pytest
from playwright.sync_api import expect

from explorer.app import serve
from explorer.browser import CHROMIUM, CHROMIUM_ARGS, DEMO, WEBSOCKET_OPEN, free_port, wait_for_http

# How long an expect() waits for its condition. Playwright's 5 s holds on an idle machine but
# not on two cores shared with other runs (at a load average of 11-15 three tests timed out
# waiting for a page that came a little later). The tests wait on conditions, so a passing
# one returns as soon as its condition holds: the bound only limits how long a failure takes.
expect.set_options(timeout=20_000)


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args):
    if not (os.path.isfile(CHROMIUM) and os.access(CHROMIUM, os.X_OK)):
        pytest.fail(
            f"Chromium is missing at {CHROMIUM}: run 'apt-get install -y chromium' "
            "(or set CHROMIUM to its path); the browser tests cannot run without it",
            pytrace=False,
        )
    return {**browser_type_launch_args, "executable_path": CHROMIUM, "args": CHROMIUM_ARGS}


@pytest.fixture(scope="session")
def demo_url():
    """The default demo served in-process through ``explorer.app.serve`` on a free port."""
    port = free_port()
    thread = serve(**DEMO, port=port, address="127.0.0.1", show=False, threaded=True)
    url = f"http://127.0.0.1:{port}/"
    try:
        wait_for_http(url)
        yield url
    finally:
        thread.stop()
        thread.join(timeout=10)


@pytest.fixture
def open_page(page):
    """Go to a URL and return once the session's websocket is open."""

    def go(url: str):
        with page.expect_console_message(lambda m: WEBSOCKET_OPEN in m.text, timeout=30_000):
            page.goto(url)
        return page

    return go
