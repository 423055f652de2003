"""The sidebar in a real browser (explorer/views/controls.py): Load partitions and places
off the server's event loop, so other pages are answered meanwhile."""

from __future__ import annotations

import re
import threading
import urllib.request

import pytest
from playwright.sync_api import expect

import explorer.state
from explorer.browser import open_in

PARTITION = "min+2"  # not the demo's: this load is the test's own


@pytest.mark.ui
def test_load_runs_off_the_event_loop(page, demo_url, monkeypatch):
    entered, gate = threading.Event(), threading.Event()
    build = explorer.state.build_mapping

    def held(*args, **kwargs):
        if kwargs.get("partition") == PARTITION:
            entered.set()
            assert gate.wait(60), "the test never let the load go"
        return build(*args, **kwargs)

    explorer.state._resolve_cached.cache_clear()  # (an earlier test's load of the same)
    open_in(page, demo_url)
    monkeypatch.setattr(explorer.state, "build_mapping", held)
    try:
        page.get_by_label("Partition").select_option(PARTITION)
        page.get_by_role("button", name="Load", exact=True).click()
        assert entered.wait(30), "the load never started"
        # one at a time ("Loading…" when it waited for the page's own first simulated step)
        expect(page.get_by_role("button", name=re.compile(r"^(Load|Loading…)$"))).to_be_disabled()
        with urllib.request.urlopen(demo_url, timeout=30) as answer:  # another page, now
            assert answer.status == 200
        assert not gate.is_set()
    finally:
        gate.set()
    expect(page.get_by_test_id("subtitle")).to_contain_text(f"{PARTITION} partition")
    expect(page.get_by_role("button", name="Load", exact=True)).to_be_enabled()


@pytest.mark.ui
def test_the_load_button_shows_the_partitioners_progress(page, demo_url, monkeypatch):
    """A partitioner's report (``engine.progress``) reaches the page while the load works:
    the button reads "Partitioning 25%", then "Load" again once the mapping is shown."""
    from engine.progress import report

    gate = threading.Event()
    build = explorer.state.build_mapping

    def partway(*args, **kwargs):
        if kwargs.get("partition") == "min+1":
            report(1, 4)  # as a partitioner does between its chunks
            assert gate.wait(60), "the test never let the load go"
        return build(*args, **kwargs)

    explorer.state._resolve_cached.cache_clear()
    open_in(page, demo_url)
    monkeypatch.setattr(explorer.state, "build_mapping", partway)
    try:
        page.get_by_label("Partition").select_option("min+1")
        page.get_by_role("button", name="Load", exact=True).click()
        expect(page.get_by_role("button", name="Partitioning 25%")).to_be_disabled()
    finally:
        gate.set()
    expect(page.get_by_test_id("subtitle")).to_contain_text("min+1 partition")
    expect(page.get_by_role("button", name="Load", exact=True)).to_be_enabled()
