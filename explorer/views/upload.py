"""A file chooser whose browser refuses a file over the session's upload limit unsent.

Panel's ``FileInput`` reads any file the user picks and sends it, in base64, as one
websocket message; Bokeh closes a session whose message is larger than it takes (20 MB
by default), so a 15 MB file lost the page ("Server connection lost") before the server
could say it was too large. ``UploadInput`` looks at the file's size in the browser
first: a file over ``ClientLimits.upload_bytes`` is not read, only its name and size are
sent, and the page hears the same sentence the server says of one
(``ClientAccess.check_upload``). The server takes messages large enough for the largest
upload (``explorer.access.message_bytes``, set by ``explorer.app.serve``).

It offers what the views used of ``FileInput``: ``filename`` and ``value`` (the file's
bytes), watched; ``clear()`` empties the browser's chooser so the same file can be
chosen again.
"""

from __future__ import annotations

import base64
import binascii
import json

import panel as pn
import param
from panel.reactive import ReactiveHTML

from engine.errors import MeshScopeError
from explorer.access import ClientAccess
from explorer.views._page import FONT, notify_error

__all__ = ["UploadInput"]

_CSS = f":host .ms-upload {{ font: 13px {FONT}; max-width: 100%; }}"
_PREFIX = "b64:"  # before the file's base64: an empty file is a change too

# the browser's side: the file's size before any byte of it is read
_PICK = """
const file = input.files[0];
if (!file) return;
if (file.size > data.max_bytes) {
  input.value = "";
  data.refused = JSON.stringify({name: file.name, size: file.size});
  return;
}
const reader = new FileReader();
reader.onload = () => {
  const url = reader.result;
  data.picked = file.name;
  data.payload = "b64:" + url.slice(url.indexOf(",") + 1);
};
reader.readAsDataURL(file);
"""


class _FilePicker(ReactiveHTML):
    """The ``<input type=file>`` and its script (``UploadInput`` is what views use)."""

    accept = param.String(default="")
    max_bytes = param.Integer(default=0, doc="the largest file the browser sends")
    picked = param.String(default="", doc="the name of the file sent")
    payload = param.String(default="", doc="that file, base64 after 'b64:' ('' once taken)")
    refused = param.String(default="", doc="JSON name and size of a file not sent ('' once said)")
    clears = param.Integer(default=0, doc="incremented to empty the chooser")

    _template = (
        '<input type="file" id="input" accept="${accept}" class="ms-upload" '
        "onchange=\"${script('pick')}\"></input>"
    )
    _scripts = {"pick": _PICK, "clears": 'input.value = "";'}


class UploadInput(pn.viewable.Viewer):
    """A file chooser that sends no file over ``access``'s upload limit (see the module)."""

    filename = param.String(default=None, allow_None=True, doc="the chosen file's name")
    value = param.Parameter(
        default=None, doc="the chosen file's bytes (None: none; b'' an empty file)"
    )
    notify = param.Callable(default=None, doc="error reporter (default: a notification)")

    def __init__(self, *, access: ClientAccess | None = None, accept: str = "", **params):
        picker_params = {k: params.pop(k) for k in ("width", "margin") if k in params}
        super().__init__(**params)
        self.access = access or ClientAccess()
        self._picker = _FilePicker(
            accept=accept,
            max_bytes=int(min(self.access.limits.upload_bytes, 2**53)),  # a JS number
            stylesheets=[_CSS],
            **picker_params,
        )
        self._picker.param.watch(self._sent, "payload")
        self._picker.param.watch(self._refused, "refused")

    @property
    def max_bytes(self) -> int:
        """The largest file the browser sends."""
        return self._picker.max_bytes

    def clear(self) -> None:
        """Empty the browser's chooser (``value`` stays, as with Panel's ``FileInput``)."""
        self._picker.clears += 1

    def _sent(self, event) -> None:
        text = event.new
        if not text:
            return
        self._picker.payload = ""  # taken: the page and the server need not keep it
        name = self._picker.picked or "upload"
        try:
            data = base64.b64decode(text.removeprefix(_PREFIX), validate=True)
        except (binascii.Error, ValueError):
            notify_error(f"{name} did not arrive whole: choose it again", self.notify)
            return
        with param.discard_events(self):
            self.value = None  # the same file chosen again is a change again
        self.param.update(filename=name, value=data)

    def _refused(self, event) -> None:
        if not event.new:
            return
        self._picker.refused = ""
        try:
            said = json.loads(event.new)
            name, size = str(said["name"]), int(said["size"])
        except (ValueError, KeyError, TypeError):
            return  # not what the page's script sends: nothing to say
        try:
            self.access.check_upload(name, size)  # what the server says of such a file
        except MeshScopeError as e:
            notify_error(str(e), self.notify)

    def __panel__(self):
        return self._picker
