"""``meshscope serve`` answering plain HTTP: no request may hold the server's event loop.

A GET needs no websocket (so no origin is checked) and the page it asks for is built on
the event loop that answers every other page; a ``?scene=`` link used to partition a
network there, and to read a ``file:`` partition — a FIFO never written froze the server.
The server is served in-process (``serve(threaded=True)``) and asked with ``urllib``.
"""

from __future__ import annotations

import threading
import time
import urllib.request

import pytest

import explorer.state
from explorer.app import serve
from explorer.scenes import Scene, encode_scene
from tests.explorer.conftest import SMALL_NETWORK
from tests.support.files import FifoWatch
from tests.ui.conftest import free_port, wait_for_http

HARDWARE = "mesh:4x4x2"  # a small page: what a GET costs is the scene's work, not the mesh's
# "does not hang": a scene's page comes within this of one refused at once. A held loop
# would not answer before the test lets it go (30 s and more), so the margin can cover a busy
# machine (1 s did not, on two test workers beside other jobs)
EXTRA_S = 8.0
PARTITION = "min+2"  # the scene's (the server starts with the network's default)


@pytest.fixture
def served(tmp_path):
    """Start a server (``allow_files``: folders opened to clients); yields its URL."""
    threads = []

    def start(allow_files=()) -> str:
        port = free_port()
        thread = serve(SMALL_NETWORK, HARDWARE, port=port, show=False, threaded=True,
                       allow_files=tuple(allow_files))  # fmt: skip
        threads.append(thread)
        url = f"http://127.0.0.1:{port}/"
        wait_for_http(url)
        return url

    yield start
    for thread in threads:
        thread.stop()
        thread.join(timeout=10)


def get(url: str, timeout_s: float = 30.0) -> float:
    """GET ``url``; the seconds it took (a time-out past ``timeout_s`` fails the test)."""
    start = time.monotonic()
    with urllib.request.urlopen(url, timeout=timeout_s) as answer:
        assert answer.status == 200
        answer.read()
    return time.monotonic() - start


def in_time(*urls: str) -> float:
    """The most a GET may take: what the pages ``urls`` take on this machine now (building
    one costs about half a second of a busy machine's processor), and ``EXTRA_S``."""
    return max(get(url) for url in urls for _ in range(2)) + EXTRA_S


def scene_link(url: str, **fields) -> str:
    names = {"network": SMALL_NETWORK, "hardware": HARDWARE, **fields}
    scene = Scene(title="A link", text="Opens a page. With a scene.", kind="mapping", **names)
    return f"{url}?scene={encode_scene(scene)}"


@pytest.mark.parametrize("allowed", [False, True], ids=["refused", "allowed-folder"])
def test_a_scene_link_naming_a_fifo_is_answered_at_once(served, tmp_path, allowed):
    """Refused as a path (or, in an allowed folder, as not a regular file): the GET and
    the server's other pages are answered, and nobody opens the FIFO."""
    fifo = FifoWatch(tmp_path / "fifo")
    try:
        url = served([tmp_path] if allowed else [])
        bound = in_time(url, scene_link(url, network="no-such-network"))  # the same page
        get(scene_link(url, partition=f"file:{fifo.path}"), bound)
        get(url, bound)
    finally:
        fifo.close()
    assert not fifo.opened


def test_a_scene_links_partitioning_runs_off_the_event_loop(served, monkeypatch):
    """While a scene's network is being partitioned and placed (held here until the test
    lets it go), its GET has been answered and other pages are answered too."""
    url = served()
    entered, gate = threading.Event(), threading.Event()
    build = explorer.state.build_mapping

    def held(*args, **kwargs):
        if kwargs.get("partition") == PARTITION:  # the scene's, not the page's own start
            entered.set()
            assert gate.wait(60), "the test never let the load go"
        return build(*args, **kwargs)

    explorer.state._resolve_cached.cache_clear()  # (an earlier test's load of the scene's)
    bound = in_time(url, scene_link(url, network="no-such-network"))  # (caches the start)
    monkeypatch.setattr(explorer.state, "build_mapping", held)
    try:
        get(scene_link(url, partition=PARTITION, placer="spread-col"), bound)
        assert entered.wait(30), "the scene's mapping was never built"
        get(url, bound)  # the scene's load still held
        assert not gate.is_set()
    finally:
        gate.set()
