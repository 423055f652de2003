"""The server's admission seen from a page (issue 52, item 3), at 1366×768: a load that must
wait says its place in line on the Load button and loads when its turn comes; one the server
can never fit is refused with a notification and the page keeps what it showed."""

from __future__ import annotations

import re
import threading

import pytest
from playwright.sync_api import expect

from explorer.admission import Admission, ServerBudget
from explorer.app import serve
from explorer.browser import DEMO, free_port, open_in, wait_for_http

pytestmark = pytest.mark.ui

GB = 2**30


@pytest.fixture
def served():
    """Serves the demo with one place for loads and a budget of ``gb``; returns (url,
    admission). (The server runs in the test's process, whose resident memory the budget
    counts: the waiting test gives memory enough and holds the one place itself.)"""
    threads = []

    def start(gb: float):
        admission = Admission(ServerBudget(memory_bytes=int(gb * GB), jobs=1, wait_s=120))
        port = free_port()
        threads.append(serve(**DEMO, port=port, address="127.0.0.1", show=False,
                             threaded=True, admission=admission))  # fmt: skip
        url = f"http://127.0.0.1:{port}/"
        wait_for_http(url)
        return url, admission

    yield start
    for thread in threads:
        thread.stop()
        thread.join(timeout=10)


def _load(page, network: str) -> None:
    box = page.get_by_placeholder("e.g. qubo:n=2000")
    box.fill(network)
    box.press("Enter")
    page.get_by_role("button", name="Load", exact=True).first.click()


def test_a_load_that_waits_says_its_place_and_loads_in_its_turn(page, served):
    url, admission = served(gb=64)
    page.set_viewport_size({"width": 1366, "height": 768})
    open_in(page, url)
    started, finish = threading.Event(), threading.Event()

    def another_pages_work():
        with admission.turn(lane="work", what="another page's load", needs=2**20,
                            client="10.0.0.9", session="other"):  # fmt: skip
            started.set()
            finish.wait(60)

    threading.Thread(target=another_pages_work, daemon=True).start()
    assert started.wait(10)
    _load(page, "qubo:n=500")
    # (its place: 1st, or 2nd behind the page's own first simulated step if that waits too)
    button = page.locator(".bk-btn").filter(has_text=re.compile(r"Waiting: (1st|2nd) in line"))
    expect(button).to_be_visible(timeout=15_000)
    box = button.bounding_box()
    assert box["x"] + box["width"] <= 1366 and box["y"] + box["height"] <= 768  # on screen
    expect(page.get_by_test_id("subtitle")).to_contain_text("sparse-mlp-1")  # not yet
    finish.set()
    expect(page.get_by_test_id("subtitle")).to_contain_text("qubo", timeout=60_000)
    expect(page.get_by_role("button", name="Load", exact=True).first).to_be_enabled()


def test_a_load_the_server_can_never_fit_is_refused_and_the_page_keeps_its_network(page, served):
    url, _ = served(gb=1)
    page.set_viewport_size({"width": 1366, "height": 768})
    open_in(page, url)
    _load(page, "rand:n=200000,card=60")  # within a client's limits, over the 1 GB budget
    toast = page.locator(".notyf__toast--error").filter(has_text="this server shares 1.0 GB")
    expect(toast).to_be_visible(timeout=15_000)
    expect(page.get_by_test_id("subtitle")).to_contain_text("sparse-mlp-1")
    expect(page.get_by_role("button", name="Load", exact=True).first).to_be_enabled()
