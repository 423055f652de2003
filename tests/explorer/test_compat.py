"""The framework's private parts the explorer relies on are still there (explorer/compat.py)."""

from __future__ import annotations

from importlib.metadata import version

from explorer.compat import TESTED, private_api_problems, send_without_delay


def test_the_private_parts_of_bokeh_used_by_the_explorer_exist():
    problems = private_api_problems()
    assert problems == [], (
        f"Bokeh {version('bokeh')} changed what explorer/compat.py relies on: {problems}; "
        f"it was written against {TESTED}"
    )


def test_the_installed_versions_are_the_tested_ones():
    installed = {name: version(name) for name in TESTED}
    assert installed == TESTED, "pyproject.toml pins these; update compat.py when you move them"


def test_send_without_delay_sets_each_connection():
    class Socket:
        nodelay = None

        def set_nodelay(self, value):
            self.nodelay = value

    class Connection:
        def __init__(self):
            self._socket = Socket()

    class Session:
        _subscribed_connections = {Connection(), Connection()}

    class Context:
        session = Session()

    class Doc:
        session_context = Context()

    assert send_without_delay(Doc()) == 2
    assert all(c._socket.nodelay is True for c in Session._subscribed_connections)
    assert send_without_delay(object()) == 0  # no session: nothing set, nothing raised
