"""UploadInput (explorer/views/upload.py): what its browser side sends, taken on the server.

The browser's own check (a file over the limit is not read) runs in Chromium in
tests/ui/test_upload_ui.py; here the server's side of each message.
"""

from __future__ import annotations

import base64
import json

import pytest

from explorer.access import UPLOAD_BYTES, ClientAccess, ClientLimits, message_bytes
from explorer.views.upload import UploadInput


@pytest.fixture
def upload():
    said: list[str] = []
    widget = UploadInput(access=ClientAccess(ClientLimits(upload_bytes=1000)), notify=said.append)
    return widget, said


def send(widget: UploadInput, name: str, data: bytes) -> None:
    """What the page's script sends for a file it read: its name, then its base64."""
    widget._picker.param.update(picked=name)
    widget._picker.param.update(payload="b64:" + base64.b64encode(data).decode())


def test_a_file_sent_becomes_the_value_and_is_not_kept_twice(upload):
    widget, said = upload
    seen = []
    widget.param.watch(lambda e: seen.append(e.new), "value")
    send(widget, "m.json", b'{"a": 1}')
    assert (widget.filename, widget.value) == ("m.json", b'{"a": 1}') and not said
    assert widget._picker.payload == ""  # taken: the model no longer holds the file
    send(widget, "m.json", b'{"a": 1}')  # the same file chosen again is a change again
    send(widget, "empty.json", b"")  # … and so is an empty one
    assert seen == [b'{"a": 1}', b'{"a": 1}', b""] and widget.filename == "empty.json"


def test_a_file_the_page_did_not_send_is_said_as_the_server_would(upload):
    widget, said = upload
    widget._picker.refused = json.dumps({"name": "big.json", "size": 40 * 2**20})
    assert said == ["big.json: 40.0 MB; this server takes uploads of at most 0 MB (run "
                    "meshscope on your own machine for larger files)"]  # fmt: skip
    assert widget.value is None and widget._picker.refused == ""
    widget._picker.refused = "not what the script sends"
    assert len(said) == 1


def test_a_file_that_did_not_arrive_whole_is_a_notification(upload):
    widget, said = upload
    widget._picker.param.update(picked="m.json", payload="b64:%%%not base64")
    assert said == ["m.json did not arrive whole: choose it again"] and widget.value is None


def test_the_pages_limit_and_the_servers_message_bound_are_the_sessions_limit():
    """One constant: the browser sends no file over the session's upload limit, and the
    server takes a message with the largest file it lets through, in base64."""
    access = ClientAccess()
    assert access.limits.upload_bytes == UPLOAD_BYTES
    assert UploadInput(access=access).max_bytes == UPLOAD_BYTES
    largest = len(base64.b64encode(b"\0" * UPLOAD_BYTES))
    assert largest < message_bytes(UPLOAD_BYTES) <= largest + 2**21
