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


# (the file a user picks, its bytes, what the notification must say to fix it)
BROKEN_UPLOADS = (
    ("binary.json", b"\x8e\x00\xff\xfe", "choose the .json file"),
    ("garbage.npz", b"not a zip at all", "not a MeshScope network file"),
    ("garbage.hgr", b"hello world\n", "an hMETIS .hgr file holds only whole numbers"),
    ("short.hgr", b"3 2\n1 2\n", "the header's first number counts the h-edge lines"),
    ("garbage.nir", b"plain text, not HDF5", "write one with nir.write"),
    ("settings.toml", b"[x]\ny = 1\n", "MeshScope reads mapping files (.json)"),
)
RAW_PYTHON = ("/tmp", "tmp", "codec", "Traceback", "Error:", "b'", "\\x", "errno")


def test_every_broken_upload_names_the_users_file_and_how_to_fix_it(page, demo_url):
    """Issue 40, item 9: a notification spoke of the server's temporary copy
    (/tmp/tmpXXXXXXXX/garbage.nir) and in Python's words ('utf-8' codec can't decode …).
    Each broken file chosen on the page is named as the user named it, with what to do."""
    open_in(page, demo_url)
    for name, data, fix in BROKEN_UPLOADS:
        page.locator("input[type=file]").first.set_input_files(
            files=[{"name": name, "mimeType": "application/octet-stream", "buffer": data}]
        )
        toast = _toast(page, name).first
        expect(toast).to_be_visible(timeout=30_000)
        text = toast.text_content().strip()
        assert text.startswith(name) and fix in text, text
        assert not [w for w in RAW_PYTHON if w in text], text
    expect(page.get_by_test_id("metric-latency-value")).to_be_visible()  # the page lives on


# Every file chooser shown: its width and the width its own text needs in its own font
# (Chromium's "Choose File" button, its padding and border, a gap, "No file chosen").
FILE_BOXES = """() => {
  const out = [], ctx = document.createElement("canvas").getContext("2d");
  const walk = (root) => {
    for (const el of root.querySelectorAll("input[type=file]")) {
      const r = el.getBoundingClientRect();
      if (r.width === 0) continue;
      ctx.font = getComputedStyle(el).font;
      const need = ctx.measureText("Choose File").width + 2 * 8 + 4 + ctx.measureText(
        "No file chosen").width;
      out.push({width: r.width, need, right: r.right});
    }
    for (const el of root.querySelectorAll("*")) if (el.shadowRoot) walk(el.shadowRoot);
  };
  walk(document);
  return out;
}"""


def test_every_file_box_shows_its_whole_text_at_1366_by_768(page, demo_url):
    """Issue 40, item 11: the sidebar's file box read "No fi…osen". Every file chooser (the
    sidebar's, the Compare tab's reference, the Traffic tab's scene file) is wide enough
    for its text and stays on the screen."""
    page.set_viewport_size({"width": 1366, "height": 768})
    open_in(page, demo_url)
    seen = 0
    for name, boxes in (("Mesh", 1), ("Compare", 2), ("Traffic", 2)):
        page.locator(".bk-tab").filter(has_text=name).first.click()
        page.wait_for_function(f"() => ({FILE_BOXES})().length >= {boxes}", timeout=30_000)
        for box in page.evaluate(FILE_BOXES):
            seen += 1
            assert box["need"] <= box["width"] and box["right"] <= 1366, (name, box)
    assert seen == 5  # the sidebar's on each tab, and one on Compare and on Traffic
