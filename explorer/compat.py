"""Every use of a framework's private parts, in one place.

The explorer uses two private details of Bokeh and Panel, because neither offers them
publicly:

* **TCP_NODELAY on a session's websockets.** Bokeh sends one change as several small
  frames (header, metadata, content, buffers); with Nagle's algorithm each waits for the
  browser's delayed ACK of the previous one, which cost 40–80 ms of a ~150 ms drag →
  metric update. The connections of a session are ``ServerSession._subscribed_connections``
  and each one's websocket handler is ``ServerConnection._socket`` (a Tornado
  ``WebSocketHandler``, whose ``set_nodelay`` is public).

* **The notification area of a closed session.** Panel 1.9.4 registers a session's
  notification area in its process-wide view registry (``state._views``: model id →
  viewable, model, document, comm) but does not find it again when the session is
  destroyed (its ``state._notifications`` no longer holds the document by then), so every
  closed page left its document, models and notification area in memory — about 1.4 MB a
  session (``benchmarks/soak.py``). ``release_notifications`` does, once the session is
  gone, what Panel means to do: the area's own ``_server_destroy``, and the registry entry
  dropped.

``private_api_problems`` says what of this the installed Bokeh no longer has;
``tests/explorer/test_compat.py`` fails on any, naming it, so a Bokeh upgrade that
changes them is noticed at once. ``TESTED`` are the versions this was written against
(pinned in ``pyproject.toml``).
"""

from __future__ import annotations

import contextlib
import inspect
import logging

__all__ = ["TESTED", "private_api_problems", "release_notifications", "send_without_delay"]

TESTED = {"bokeh": "3.9.2", "panel": "1.9.4"}

log = logging.getLogger(__name__)


def private_api_problems() -> list[str]:
    """What the installed Bokeh lacks of the private parts used here ([] when all is there)."""
    from bokeh.server.connection import ServerConnection
    from bokeh.server.session import ServerSession
    from tornado.websocket import WebSocketHandler

    problems = []
    if "self._subscribed_connections" not in inspect.getsource(ServerSession):
        problems.append("bokeh ServerSession no longer keeps _subscribed_connections")
    if "self._socket" not in inspect.getsource(ServerConnection.__init__):
        problems.append("bokeh ServerConnection no longer keeps its websocket as _socket")
    if not callable(getattr(WebSocketHandler, "set_nodelay", None)):
        problems.append("tornado WebSocketHandler has no set_nodelay")
    from panel.io.notifications import NotificationArea
    from panel.io.state import state

    if not isinstance(getattr(state, "_views", None), dict):
        problems.append("panel state no longer keeps its views in _views")
    if not callable(getattr(NotificationArea, "_server_destroy", None)):
        problems.append("panel NotificationArea has no _server_destroy")
    return problems


def send_without_delay(doc) -> int:
    """Set TCP_NODELAY on the websockets of ``doc``'s session; returns how many were set.

    Best effort: a session without connections (yet) sets none, and a changed Bokeh
    is logged, never raised — the page works, only slower.
    """
    session = getattr(getattr(doc, "session_context", None), "session", None)
    connections = getattr(session, "_subscribed_connections", None)
    if connections is None:
        log.warning("cannot set TCP_NODELAY: %s", private_api_problems() or "no session")
        return 0
    count = 0
    for connection in connections:
        with contextlib.suppress(AttributeError, OSError):
            connection._socket.set_nodelay(True)
            count += 1
    return count


def release_notifications(session_context) -> int:
    """Forget the notification areas of a destroyed session (a ``on_session_destroyed``
    callback); returns how many were still registered. Harmless when Panel did it already."""
    from panel.io.notifications import NotificationAreaBase
    from panel.io.state import state

    doc = session_context._document
    views = getattr(state, "_views", {})
    stale = [
        (ref, view[0])
        for ref, view in list(views.items())
        if view[2] is doc and isinstance(view[0], NotificationAreaBase)
    ]
    for ref, area in stale:
        try:  # Panel's own cleanup of the area's model
            area._server_destroy(session_context)
        except Exception as e:  # noqa: BLE001 - a changed Panel: still drop the entry
            log.warning("cannot destroy a closed session's notification area: %s", e)
        views.pop(ref, None)
    return len(stale)
