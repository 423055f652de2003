"""The Traffic tab's headless runner: one job in a thread, its cancel token, its result or
its failure handed to the page (explorer/traffic_runner.py)."""

from __future__ import annotations

import threading

from engine.errors import SpecError
from explorer.traffic_runner import TrafficRunner


def test_a_job_hands_its_result_to_done():
    heard = []
    runner = TrafficRunner()
    runner.start(lambda cancel: 42, heard.append, lambda message: heard.append(("failed",)))
    runner.join(10)
    assert heard == [42] and not runner.running


def test_a_failure_reaches_the_page_in_words():
    heard = []

    def job(cancel):
        raise SpecError("a synthetic mesh here is 2 to 32 routers each way, not 40×40")

    runner = TrafficRunner(what="the simulation")
    runner.start(job, lambda result: heard.append(result), heard.append)
    runner.join(10)
    assert heard == ["a synthetic mesh here is 2 to 32 routers each way, not 40×40"]


def test_a_new_job_cancels_the_one_under_way_and_stop_cancels_it_too():
    started, release = threading.Event(), threading.Event()
    tokens = []

    def first(cancel):
        tokens.append(cancel)
        started.set()
        release.wait(10)
        return "first"

    runner = TrafficRunner()
    runner.start(first, lambda r: None, lambda m: None)
    assert started.wait(10)
    second = runner.start(lambda cancel: "second", lambda r: None, lambda m: None)
    assert tokens[0].is_set() and not second.is_set()
    runner.stop()
    assert second.is_set()
    release.set()
    runner.join(10)
