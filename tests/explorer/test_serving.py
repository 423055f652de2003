"""The guards in front of ``meshscope serve`` (``explorer.serving``): the hosts it answers,
the Content-Security-Policy of its pages, and signed session ids.

A server is served in-process and asked with raw HTTP and websocket clients, as a page of
another site (DNS rebinding) or a client forging a session would.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import http.client
import json
import os
import re

import pytest
from bokeh.util.token import generate_jwt_token, generate_session_id
from tornado.httpclient import HTTPClientError, HTTPRequest
from tornado.websocket import websocket_connect

from engine.errors import InputFileError
from explorer.app import serve
from explorer.browser import free_port, wait_for_http
from explorer.serving import SECRET_BYTES, allowed_hosts, host_of, read_secret

NETWORK, HARDWARE = "sparse-mlp-1", "mesh:4x4x2"


@pytest.fixture(scope="module")
def port():
    port = free_port()
    thread = serve(NETWORK, HARDWARE, port=port, address="127.0.0.1", show=False, threaded=True,
                   allow_origins=("lab-pc.example:8080",))  # fmt: skip
    wait_for_http(f"http://127.0.0.1:{port}/")
    yield port
    thread.stop()
    thread.join(timeout=10)


def get(port: int, path: str = "/", host: str | None = None) -> http.client.HTTPResponse:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    connection.request("GET", path, headers={"Host": host or f"127.0.0.1:{port}"})
    answer = connection.getresponse()
    answer.body = answer.read()
    return answer


def page_token(port: int) -> str:
    """The session token a genuine page of the server carries."""
    body = get(port).body.decode()
    return re.search(r'"token":\s*"([^"]+)"', body)[1]


def first_frame(port: int, token: str, host: str | None = None) -> str | None:
    """The first websocket frame the server sends a client presenting ``token`` (Bokeh's ACK
    header to a client it accepts), or None when it closes the connection instead."""

    async def talk():
        request = HTTPRequest(
            f"ws://127.0.0.1:{port}/ws",
            headers={"Host": host or f"127.0.0.1:{port}", "Origin": f"http://127.0.0.1:{port}"},
        )
        ws = await websocket_connect(request, subprotocols=["bokeh", token])
        try:
            return await asyncio.wait_for(ws.read_message(), 20)
        finally:
            ws.close()

    # (on a thread of its own: a browser test earlier in the same worker leaves Playwright's
    # event loop running on this one, and asyncio.run refuses to nest)
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, talk()).result()


# ------------------------------------------------------------------ hosts
def test_host_of_reads_host_headers_and_refuses_what_is_not_one():
    assert host_of("LocalHost:5006") == ("localhost", 5006)
    assert host_of("[::1]:5006") == ("::1", 5006)
    assert host_of("lab-pc.example") == ("lab-pc.example", 80)
    for bad in ("", "a b:5006", "::1", "[::1", "host:port", "host:0", "host:70000", ":5006"):
        assert host_of(bad) is None, bad


def test_allowed_hosts_are_the_local_names_the_address_and_the_allowed_origins():
    assert allowed_hosts("127.0.0.1", 5006) == {("127.0.0.1", 5006), ("localhost", 5006)}
    every = allowed_hosts("0.0.0.0", 5006, ("lab-pc:5006",))
    assert ("lab-pc", 5006) in every and ("0.0.0.0", 5006) not in every
    assert ("10.0.0.7", 80) in allowed_hosts("10.0.0.7", 80)
    assert ("localhost", 5007) not in allowed_hosts("127.0.0.1", 5006)  # the port counts


def test_a_page_asked_for_by_another_host_name_is_refused_before_any_handler(port):
    """DNS rebinding: a page of rebind.example, its name re-pointed at 127.0.0.1, asks with
    its own name as Host."""
    for path in ("/", "/?scene=hotspot", "/static/js/bokeh.min.js", "/autoload.js", "/ws"):
        answer = get(port, path, host=f"rebind.example:{port}")
        assert answer.status == 403, path
        assert b"does not answer that host name" in answer.body
    assert get(port, host=f"127.0.0.1:{port + 1}").status == 403  # another port's name
    assert get(port, host=f"[::1]:{port}").status == 403  # not listened on


def test_the_names_it_was_started_for_are_answered(port):
    for host in (f"127.0.0.1:{port}", f"localhost:{port}", "lab-pc.example:8080"):
        assert get(port, host=host).status == 200, host


def test_a_websocket_of_another_host_name_is_refused_before_it_opens(port):
    token = page_token(port)
    assert "ACK" in first_frame(port, token)  # the same token, by the right name
    with pytest.raises(HTTPClientError) as refused:
        first_frame(port, token, host=f"rebind.example:{port}")
    assert refused.value.code == 403


# ------------------------------------------------------------------ script
def test_a_page_allows_only_its_own_scripts(port):
    answer = get(port)
    policy = answer.getheader("Content-Security-Policy")
    nonce = re.search(r"'nonce-([^']+)'", policy)[1]
    assert "'unsafe-inline'" not in policy.split("script-src")[1].split(";")[0]
    assert "object-src 'none'" in policy and "base-uri 'none'" in policy
    scripts = re.findall(rb"<script[^>]*>", answer.body, re.IGNORECASE)
    assert scripts and all(f'nonce="{nonce}"'.encode() in tag for tag in scripts)
    assert get(port).getheader("Content-Security-Policy") != policy  # a nonce per answer
    assert answer.getheader("Referrer-Policy") == "no-referrer"
    assert answer.getheader("X-Content-Type-Options") == "nosniff"


# ------------------------------------------------------------------ sessions
def test_a_session_id_a_client_chose_is_refused(port):
    assert get(port, "/?bokeh-session-id=chosen-by-the-client").status == 403
    unsigned = generate_session_id(secret_key=None, signed=False)
    assert get(port, f"/?bokeh-session-id={unsigned}").status == 403


def test_a_forged_token_gets_no_session(port):
    """A token for a session id the client chose, unsigned (or signed with another key),
    is closed without an ACK; the page's own token is acknowledged."""
    assert "ACK" in first_frame(port, page_token(port))
    for secret, signed in ((None, False), (os.urandom(32), True)):
        session_id = generate_session_id(secret_key=secret, signed=signed)
        forged = generate_jwt_token(session_id, secret_key=secret, signed=signed)
        assert first_frame(port, forged) is None


def test_two_servers_sign_with_different_secrets():
    """A token of one server start means nothing to the next (a secret per start)."""
    tokens = []
    for _ in range(2):
        p = free_port()
        thread = serve(NETWORK, HARDWARE, port=p, address="127.0.0.1", show=False,
                       threaded=True)  # fmt: skip
        try:
            wait_for_http(f"http://127.0.0.1:{p}/")
            tokens.append(page_token(p))
            if len(tokens) == 2:
                assert first_frame(p, tokens[0]) is None
                assert "ACK" in first_frame(p, tokens[1])
        finally:
            thread.stop()
            thread.join(timeout=10)


def test_a_shared_secret_file_signs_for_every_worker(tmp_path):
    """Two servers given one --secret-file accept each other's tokens (several workers
    behind one proxy)."""
    secret = tmp_path / "secret"
    secret.write_bytes(os.urandom(48))
    secret.chmod(0o600)
    ports, threads = [free_port(), free_port()], []
    try:
        for p in ports:
            threads.append(serve(NETWORK, HARDWARE, port=p, address="127.0.0.1", show=False,
                                 threaded=True, secret=read_secret(str(secret))))  # fmt: skip
            wait_for_http(f"http://127.0.0.1:{p}/")
        frame = first_frame(ports[1], page_token(ports[0]))
        assert frame is not None and json.loads(frame)["msgtype"] == "ACK"
    finally:
        for thread in threads:
            thread.stop()
            thread.join(timeout=10)


def test_a_secret_file_must_be_long_private_and_regular(tmp_path):
    short = tmp_path / "short"
    short.write_bytes(b"x" * (SECRET_BYTES - 1))
    short.chmod(0o600)
    with pytest.raises(InputFileError, match="at least 32"):
        read_secret(str(short))
    shared = tmp_path / "shared"
    shared.write_bytes(os.urandom(SECRET_BYTES))
    shared.chmod(0o644)
    with pytest.raises(InputFileError, match="chmod 600"):
        read_secret(str(shared))
    with pytest.raises(InputFileError, match="not a regular file"):
        read_secret(str(tmp_path))
    with pytest.raises(InputFileError, match="No such file"):
        read_secret(str(tmp_path / "missing"))
    assert len(read_secret(None)) == SECRET_BYTES and read_secret(None) != read_secret(None)
