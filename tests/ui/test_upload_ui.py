"""Uploads in a real browser (explorer/views/upload.py): a file over the upload limit is
refused by the page before a byte of it is sent, one under it reaches the server whatever
Bokeh's default message bound, and the session lives on after either."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from explorer.access import UPLOAD_BYTES
from explorer.browser import open_in

pytestmark = pytest.mark.ui

BOKEH_DEFAULT_MESSAGE_BYTES = 20 * 2**20  # what closed the page of a 15 MB upload


def _choose(page, path) -> None:
    page.locator("input[type=file]").set_input_files(str(path))


def _toast(page, text: str):
    return page.locator(".notyf__toast--error").filter(has_text=text)


def _still_live(page) -> None:
    """The session answers: a broken mapping chosen now is the server's notification."""
    page.locator("input[type=file]").set_input_files(
        files=[{"name": "broken.json", "mimeType": "application/json", "buffer": b"{not json"}]
    )
    expect(_toast(page, "broken.json is not a JSON mapping file")).to_be_visible()


def test_a_file_over_the_limit_is_refused_by_the_page_and_the_session_lives(
    page, demo_url, tmp_path
):
    big = tmp_path / "big.json"
    big.write_bytes(b" " * (40 * 2**20))
    sent = []
    page.on("websocket", lambda ws: ws.on("framesent", lambda frame: sent.append(len(frame))))
    open_in(page, demo_url)
    _choose(page, big)
    said = "big.json: 40.0 MB; this server takes uploads of at most 32 MB"
    expect(_toast(page, said)).to_be_visible()
    assert max(sent) < 2**20  # only the file's name and size left the page
    _still_live(page)


def test_a_file_under_the_limit_but_over_bokehs_default_reaches_the_server(
    page, demo_url, tmp_path
):
    near = tmp_path / "near.json"
    size = BOKEH_DEFAULT_MESSAGE_BYTES + 5 * 2**20  # 25 MB: 33 MB in base64
    assert size < UPLOAD_BYTES
    near.write_bytes(b" " * size)
    open_in(page, demo_url)
    _choose(page, near)
    # the server read it: its JSON is empty, which only the server can say
    expect(_toast(page, "near.json is not a JSON mapping file")).to_be_visible(timeout=60_000)
    _still_live(page)


def test_a_broken_network_upload_names_the_users_file_not_the_servers_copy(page, demo_url):
    open_in(page, demo_url)
    page.locator("input[type=file]").set_input_files(
        files=[{"name": "bomb.npz", "mimeType": "application/octet-stream", "buffer": b"PK"}]
    )
    toast = page.locator(".notyf__toast--error").filter(has_text="bomb.npz")
    expect(toast).to_be_visible()
    text = toast.text_content()
    assert text.lstrip().startswith("bomb.npz") and "/tmp" not in text
