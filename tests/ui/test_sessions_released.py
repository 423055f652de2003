"""A closed page lets go of its session: the server keeps nothing of it (a lecture room
opens hundreds of pages; benchmarks/soak.py measures the memory of 200)."""

from __future__ import annotations

import gc
import time
import weakref

import pytest
from panel.io.state import state

from explorer.app import serve
from explorer.browser import DEMO, free_port, open_in, wait_for_http


@pytest.fixture
def quick_url():
    """The demo on a server that drops a closed page's session after 0.3 s (not 15 s)."""
    gc.unfreeze()  # what an earlier server of this process froze: this one freezes again
    port = free_port()
    thread = serve(
        **DEMO, port=port, address="127.0.0.1", show=False, threaded=True,
        session_lifetime_ms=300,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}/"
    try:
        wait_for_http(url)
        yield url
    finally:
        thread.stop()
        thread.join(timeout=10)


def _documents() -> dict[int, object]:
    return {id(view[2]): view[2] for view in list(state._views.values())}


@pytest.mark.ui
def test_closed_pages_leave_no_document_behind(browser, quick_url):
    before = set(_documents())
    contexts = [browser.new_context(viewport={"width": 1500, "height": 1000}) for _ in range(3)]
    for context in contexts:
        open_in(context.new_page(), quick_url)
    ours = [doc for key, doc in _documents().items() if key not in before]
    assert len(ours) == 3  # each open page's session registered its views
    for context in contexts:
        context.close()
    refs = [weakref.ref(doc) for doc in ours]
    del ours
    deadline = time.monotonic() + 30
    while any(ref() is not None and ref().session_context is not None for ref in refs):
        assert time.monotonic() < deadline, "the closed pages' sessions were never destroyed"
        time.sleep(0.1)  # Bokeh looks for unused sessions every 0.15 s here
    while True:  # the destroy callbacks run on the server's thread, after the session goes
        left = [key for key, view in list(state._views.items()) if view[2] in [r() for r in refs]]
        if not left or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert left == [], f"Panel still registers views of closed pages: {left}"


@pytest.mark.ui
def test_the_warm_up_is_out_of_the_collectors_sight(quick_url):
    """The modules and warmed objects a server holds for its whole life are frozen, so the
    full collection Panel runs after each closed page does not walk them every time."""
    frozen, tracked = gc.get_freeze_count(), len(gc.get_objects())
    assert frozen > 10 * tracked, (frozen, tracked)
