"""``engine.progress``: reports reach the listener of the block they run in, and no other."""

from __future__ import annotations

import threading

from engine.progress import report, reporting


def test_reports_reach_the_listener_as_fractions_within_its_block_only():
    heard = []
    report(1, 2)  # nobody listens: nothing happens
    with reporting(heard.append):
        report(1, 4)
        report(7, 4)  # past the end: at most 1
        report(1, 0)  # no total: nothing to say
        with reporting(None):  # an inner block that does not listen
            report(1, 2)
        report(3, 4)
    report(4, 4)
    assert heard == [0.25, 1.0, 0.75]


def test_another_thread_does_not_hear_this_one():
    heard, other = [], []

    def work():
        with reporting(other.append):
            report(1, 2)

    with reporting(heard.append):
        t = threading.Thread(target=work)
        t.start()
        t.join()
        report(1, 4)
    assert heard == [0.25] and other == [0.5]
