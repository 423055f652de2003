"""The server meets strangers, in Chromium at 1366×768 (issue 52, items 2, 4 and 5): a page
of another site re-pointed at this machine (DNS rebinding) gets nothing, a session id the
client chose gets nothing, and a demo's name inside an uploaded mapping is the shipped demo."""

from __future__ import annotations

import json

import pytest
from playwright.sync_api import expect

from engine.io.network_file import save_network
from engine.mapping.assignment import mapping_to_dict
from engine.pipeline import build_mapping
from engine.specs import demo_path, load_network_spec
from explorer.browser import CHROMIUM, CHROMIUM_ARGS, WEBSOCKET_OPEN, open_in

pytestmark = pytest.mark.ui

VIEWPORT = {"width": 1366, "height": 768}


@pytest.fixture
def browser_context_args(browser_context_args):
    return {**browser_context_args, "viewport": VIEWPORT}


def test_a_page_served_under_a_rebound_name_gets_403_and_no_session(browser_type, demo_url):
    """Chromium resolves rebind.example to 127.0.0.1, as an attacker's DNS would once the
    page is loaded; the page must not go live (nor could it then load a file)."""
    port = demo_url.rstrip("/").rsplit(":", 1)[1]
    browser = browser_type.launch(
        executable_path=CHROMIUM,
        args=[*CHROMIUM_ARGS, "--host-resolver-rules=MAP rebind.example 127.0.0.1"],
    )
    try:
        page = browser.new_page(viewport=VIEWPORT)
        said = []
        page.on("console", lambda m: said.append(m.text))
        answer = page.goto(f"http://rebind.example:{port}/")
        assert answer.status == 403
        expect(page.get_by_text("does not answer that host name")).to_be_visible()
        page.wait_for_timeout(1000)
        assert not any(WEBSOCKET_OPEN in text for text in said)
        live = page.goto(demo_url)  # the same browser, by the server's own name: served
        assert live.status == 200
    finally:
        browser.close()


def test_a_session_id_the_client_chose_gets_no_page(page, demo_url):
    answer = page.goto(f"{demo_url}?bokeh-session-id=chosen-by-the-client")
    assert answer.status == 403
    open_in(page, demo_url)  # a page of its own: live


@pytest.fixture
def decoy(tmp_path, monkeypatch):
    """A network named as a demo in the server's working folder (the server runs in this
    process), and a mapping file of the shipped demo naming it by that name."""
    save_network(load_network_spec("linear-dense:M=2,N=8"), tmp_path / "qubo-1000.npz")
    shipped = build_mapping(demo_path("qubo-1000.npz"), "loihi2")
    doc = mapping_to_dict(shipped.network, shipped.hardware, shipped.mapping)
    doc["network"]["name"] = "qubo-1000.npz"
    monkeypatch.chdir(tmp_path)
    return json.dumps(doc).encode(), shipped.network.name


def test_a_demo_named_in_an_uploaded_mapping_is_the_shipped_one(page, demo_url, decoy):
    data, shipped_name = decoy
    open_in(page, demo_url)
    page.locator("input[type=file]").first.set_input_files(
        files=[{"name": "m.json", "mimeType": "application/json", "buffer": data}]
    )
    expect(page.get_by_test_id("subtitle")).to_contain_text(shipped_name, timeout=60_000)
    expect(page.get_by_test_id("subtitle")).not_to_contain_text("linear-dense")
