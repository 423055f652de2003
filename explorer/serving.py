"""How ``meshscope serve`` meets strangers, before any of the explorer's code runs.

Three guards sit in front of every page, request and websocket:

* **Host.** The server answers only the host names it was started for: 127.0.0.1 and
  localhost on its port, the address it listens on, and each ``--allow-origin``
  HOST:PORT. A page of another site that re-points its own name at this machine (DNS
  rebinding) sends its own name as ``Host`` and gets 403 before any handler runs,
  websockets included — as Jupyter Server does for a server bound to localhost.
* **Script.** Every HTML answer carries a Content-Security-Policy whose ``script-src``
  allows the server's own files and the inline scripts the server itself wrote into that
  answer (each gets a fresh nonce), and nothing else: markup that reaches the page later
  (a name sent by a client, however it was escaped) cannot run script through an inline
  handler or a ``<script>`` of its own. Bokeh evaluates code it builds itself, so
  ``'unsafe-eval'`` stays; inline handlers and foreign scripts do not.
* **Sessions.** Session ids are signed with a secret made at each start (or read from
  ``--secret-file`` so that several workers share it): a client cannot choose or forge a
  session id, and a token expires (Bokeh's 300 s) if it is not used to connect.

``start_server`` builds Panel's server with them; ``serve`` in ``explorer.app`` calls it.
"""

from __future__ import annotations

import asyncio
import ipaddress
import re
import secrets
import stat
from collections.abc import Callable, Iterable
from pathlib import Path

from tornado.ioloop import IOLoop
from tornado.routing import Matcher, Rule
from tornado.web import OutputTransform, RequestHandler

from engine.errors import InputFileError

__all__ = [
    "CONTENT_SECURITY",
    "LOCAL_HOSTS",
    "allowed_hosts",
    "guard_hosts",
    "host_of",
    "read_secret",
    "start_server",
]

LOCAL_HOSTS = ("127.0.0.1", "localhost")  # (Panel 1.9 cannot answer an [::1] Host)
SECRET_BYTES = 32  # of a generated secret; a --secret-file must hold at least this many

# script-src: the server's own files, the inline scripts of this answer (its nonce), and the
# code BokehJS builds from the document it is sent ('unsafe-eval'); nothing inline else.
CONTENT_SECURITY = (
    "default-src 'self'; script-src 'self' 'nonce-{nonce}' 'unsafe-eval'; "
    "style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; font-src 'self' data:; "
    "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; "
    "frame-ancestors 'self'"
)
_SCRIPT_TAG = re.compile(rb"<script(?=[\s>])", re.IGNORECASE)


# ------------------------------------------------------------------ hosts
def host_of(value: str, default_port: int = 80) -> tuple[str, int] | None:
    """``(host, port)`` of a ``Host`` header or a ``HOST:PORT`` (lower case, IPv6 without
    brackets), or None if it is not one."""
    value = value.strip().lower()
    if not value or any(c.isspace() for c in value):
        return None
    if value.startswith("["):  # [::1]:5006
        end = value.find("]")
        if end < 0:
            return None
        host, rest = value[1:end], value[end + 1 :]
        if rest and not rest.startswith(":"):
            return None
        port_text = rest[1:] if rest else ""
    else:
        host, _, port_text = value.partition(":")
        if ":" in port_text:  # a bare IPv6 address is no Host header
            return None
    if not host:
        return None
    if port_text:
        if not port_text.isdigit() or not 0 < int(port_text) < 65536:
            return None
        return host, int(port_text)
    return host, default_port


def allowed_hosts(address: str, port: int, allow: Iterable[str] = ()) -> frozenset[tuple[str, int]]:
    """The ``(host, port)`` pairs a request's ``Host`` may name: the local names on ``port``,
    the listening ``address`` (unless it is every interface) and each ``allow`` HOST:PORT."""
    pairs = {(name, port) for name in LOCAL_HOSTS}
    if address not in ("", "0.0.0.0", "::"):
        pairs.add((_bare(address), port))
    for origin in allow:
        pair = host_of(origin)
        if pair is not None:
            pairs.add(pair)
    return frozenset(pairs)


def _bare(address: str) -> str:
    address = address.strip().lower().strip("[]")
    try:
        return str(ipaddress.ip_address(address))
    except ValueError:
        return address


class _UnknownHost(Matcher):
    """Matches a request whose ``Host`` is not one of ``allowed``."""

    def __init__(self, allowed: frozenset[tuple[str, int]]):
        self.allowed = allowed

    def match(self, request) -> dict | None:
        pair = host_of(request.headers.get("Host", ""))
        return None if pair is not None and pair in self.allowed else {}


class _RefuseHost(RequestHandler):
    """403 for every method (a websocket's upgrade request too), before anything is read."""

    def prepare(self) -> None:
        self.set_status(403)
        self.set_header("Content-Type", "text/plain; charset=utf-8")
        self.finish(
            "403: this MeshScope server does not answer that host name. Open it by the "
            "address it was started for (whoever runs it can add one with --allow-origin).\n"
        )


def guard_hosts(application, allowed: frozenset[tuple[str, int]]) -> None:
    """Make a Tornado ``application`` refuse (403) any request whose ``Host`` is not in
    ``allowed``: a rule ahead of all of its own."""
    router = application.default_router
    router.rules.insert(0, router.process_rule(Rule(_UnknownHost(allowed), _RefuseHost)))


# ------------------------------------------------------------------ script
class ContentSecurity(OutputTransform):
    """Puts ``CONTENT_SECURITY`` on every HTML answer, with a nonce on each ``<script`` the
    server wrote into it; other answers get ``nosniff`` and no-referrer only."""

    def __init__(self, request):
        super().__init__(request)
        self._nonce: bytes | None = None

    def transform_first_chunk(self, status_code, headers, chunk, finishing):
        headers["X-Content-Type-Options"] = "nosniff"
        headers["Referrer-Policy"] = "no-referrer"  # the page's ?session= stays on the page
        if headers.get("Content-Type", "").startswith("text/html"):
            nonce = secrets.token_urlsafe(18)
            self._nonce = nonce.encode()
            headers["Content-Security-Policy"] = CONTENT_SECURITY.format(nonce=nonce)
            chunk = self._stamp(chunk)
            if "Content-Length" in headers:
                headers["Content-Length"] = str(len(chunk))
        return status_code, headers, chunk

    def transform_chunk(self, chunk, finishing):
        return self._stamp(chunk)

    def _stamp(self, chunk: bytes) -> bytes:
        if self._nonce is None or not chunk:
            return chunk
        return _SCRIPT_TAG.sub(b'<script nonce="' + self._nonce + b'"', chunk)


# ------------------------------------------------------------------ sessions
def read_secret(path: str | None) -> bytes:
    """The key that signs session ids: read from ``path`` (a regular file of at least
    ``SECRET_BYTES`` bytes, readable by its owner only), else a new random one."""
    if path is None:
        return secrets.token_bytes(SECRET_BYTES)
    file = Path(path).expanduser()
    try:
        st = file.stat()
        if not stat.S_ISREG(st.st_mode):
            raise InputFileError(f"--secret-file {path}: not a regular file")
        if st.st_mode & 0o077:
            raise InputFileError(
                f"--secret-file {path}: others may read it; make it the owner's alone "
                f"(chmod 600 {path})"
            )
        secret = file.read_bytes().strip()
    except OSError as e:
        raise InputFileError(f"--secret-file {path}: {e.strerror or e}") from None
    if len(secret) < SECRET_BYTES:
        raise InputFileError(
            f"--secret-file {path}: {len(secret)} bytes; a secret needs at least {SECRET_BYTES} "
            "(make one with: python -c 'import secrets; print(secrets.token_urlsafe(48))' "
            f"> {path})"
        )
    return secret


# ------------------------------------------------------------------ the server
def start_server(
    app: Callable,
    *,
    port: int,
    address: str,
    websocket_origins: list[str],
    allow_origins: Iterable[str] = (),
    secret: bytes | None = None,
    show: bool = True,
    threaded: bool = False,
    on_server: Callable | None = None,
    **options,
):
    """Serve ``app`` (a function making a session's page) with the guards above; blocks
    unless ``threaded``, which returns Panel's server thread (stop it with ``.stop()``).
    ``on_server(server)``: called with Bokeh's server once it is built, before it answers
    anyone. ``options``: the rest of ``panel.io.server.get_server``'s."""
    from panel.io.server import get_server
    from panel.io.state import state
    from panel.io.threads import StoppableThread

    allow_origins = tuple(allow_origins)
    options = dict(
        options,
        port=port,
        address=address,
        websocket_origin=websocket_origins,
        sign_sessions=True,
        secret_key=secret if secret is not None else read_secret(None),
        transforms=[ContentSecurity],
    )

    def build(loop: IOLoop | None, server_id: str | None = None):
        server = get_server(
            app, loop=loop, start=False, show=show, verbose=not threaded,
            **({"server_id": server_id} if server_id else {}), **options,
        )  # fmt: skip
        guard_hosts(server._tornado, allowed_hosts(address, server.port, allow_origins))
        if on_server is not None:
            on_server(server)
        return server

    if not threaded:
        server = build(None)
        server.start()
        server.io_loop.start()
        return server

    loop = IOLoop(make_current=False)
    server_id = secrets.token_hex(16)

    def run():
        asyncio.set_event_loop(loop.asyncio_loop)
        server = build(loop, server_id)
        server.start()
        loop.start()
        return server

    thread = StoppableThread(target=run, io_loop=loop, owns_loop=True, daemon=True,
                             kwargs={})  # fmt: skip
    thread.server_id = server_id
    state._threads[server_id] = thread
    thread.start()
    return thread
