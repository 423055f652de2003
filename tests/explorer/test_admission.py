"""The server-wide admission of heavy work (``explorer.admission``): a memory budget, a
bounded first-come-first-served queue in two lanes, a cap per client, memory handed back."""

from __future__ import annotations

import subprocess
import sys
import threading
import time

import pytest

from engine.errors import Cancelled, CapacityError
from explorer.access import ClientAccess, ClientLimits
from explorer.admission import (
    Admission,
    ServerBudget,
    load_bytes,
    network_needs,
    parse_size,
    place_text,
)
from explorer.state import ExplorerState
from tests.explorer.conftest import SMALL_NETWORK

MB = 2**20


class Resident:
    """A resident memory the test sets (the server's, as the admission sees it)."""

    def __init__(self, value: int = 0):
        self.value = value

    def __call__(self) -> int:
        return self.value


def budget(**kw) -> ServerBudget:
    return ServerBudget(**{"memory_bytes": 1000 * MB, "jobs": 1, "wait_s": 30.0, **kw})


class Job:
    """A piece of work in a thread: waits its turn, records its start, holds its place
    until ``finish``."""

    def __init__(self, admission, name, *, lane="work", needs=MB, client="a", cancel=None,
                 counted=True):  # fmt: skip
        self.name, self.places, self.error = name, [], None
        self.started, self._finish = threading.Event(), threading.Event()

        def run():
            try:
                with admission.turn(
                    lane=lane,
                    what=name,
                    needs=needs,
                    client=client,
                    session=name,
                    on_wait=self.places.append,
                    cancel=cancel,
                    counted=counted,
                ):
                    self.started.set()
                    self._finish.wait(30)
            except (CapacityError, Cancelled) as e:
                self.error = e
                self.started.set()

        self.thread = threading.Thread(target=run, daemon=True)
        self.thread.start()

    def finish(self) -> None:
        self._finish.set()
        self.thread.join(10)


def waiting(admission, lane="work") -> list[str]:
    return admission.snapshot()[lane]["waiting"]


def until(condition, timeout=10.0) -> None:
    end = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < end, "timed out"
        time.sleep(0.01)


# ------------------------------------------------------------------ the queue
def test_work_starts_first_come_first_served_and_each_hears_its_place():
    admission = Admission(budget(jobs=1), Resident())
    first = Job(admission, "first")
    assert first.started.wait(5)
    second = Job(admission, "second")
    until(lambda: waiting(admission) == ["second"])
    third = Job(admission, "third")
    until(lambda: waiting(admission) == ["second", "third"])
    until(lambda: third.places == [2])
    first.finish()
    assert second.started.wait(5) and not third.started.is_set()
    until(lambda: third.places == [2, 1])
    second.finish()
    assert third.started.wait(5)
    third.finish()
    assert second.places == [1, 0] and third.places == [2, 1, 0] and first.places == []


def test_a_search_does_not_keep_a_load_waiting():
    admission = Admission(budget(jobs=1, searches=1), Resident())
    search = Job(admission, "search", lane="search")
    assert search.started.wait(5)
    load = Job(admission, "load")
    assert load.started.wait(5)  # its own lane
    second_search = Job(admission, "another search", lane="search")
    until(lambda: waiting(admission, "search") == ["another search"])
    for job in (search, load, second_search):
        job.finish()


def test_work_waits_for_memory_and_starts_once_it_is_handed_back():
    resident = Resident(900 * MB)
    admission = Admission(budget(jobs=2), resident)
    job = Job(admission, "load", needs=200 * MB)
    until(lambda: job.places == [1])
    assert not job.started.is_set()  # 900 + 200 MB would pass the 1000 MB budget
    resident.value = 700 * MB
    admission.freed()  # (a session closed)
    assert job.started.wait(5)
    job.finish()


def test_what_runs_counts_against_the_budget_until_it_ends():
    admission = Admission(budget(jobs=2), Resident(100 * MB))
    big = Job(admission, "big", needs=600 * MB)
    assert big.started.wait(5)
    other = Job(admission, "other", needs=400 * MB)  # 100 + 600 + 400 > 1000
    until(lambda: other.places == [1])
    big.finish()
    assert other.started.wait(5)
    other.finish()


def test_work_larger_than_the_budget_is_refused_at_once():
    admission = Admission(budget(), Resident())
    turn = admission.turn(lane="work", what="loading x", needs=1536 * MB, client="a", session="s")
    with pytest.raises(CapacityError, match=r"needs about 1\.5 GB.*--max-memory"), turn:
        pass
    assert waiting(admission) == []


def test_one_client_has_at_most_its_share_of_places():
    admission = Admission(budget(jobs=1, client_jobs=2), Resident())
    one = Job(admission, "one")
    assert one.started.wait(5)
    jobs = [one, Job(admission, "two")]
    until(lambda: len(waiting(admission)) == 1)
    third = Job(admission, "three")
    assert third.started.wait(5) and isinstance(third.error, CapacityError)
    assert "2 requests waiting or running" in str(third.error)
    stranger = Job(admission, "stranger's", client="b")  # another computer still may
    until(lambda: waiting(admission) == ["two", "stranger's"])
    step = Job(admission, "a page's own step", counted=False)  # not the person's request
    until(lambda: waiting(admission) == ["two", "stranger's", "a page's own step"])
    for job in (*jobs, stranger, step):
        job.finish()


def test_the_queue_is_bounded():
    admission = Admission(budget(jobs=1, queue=2, client_jobs=10), Resident())
    jobs = [Job(admission, "job 0")]
    assert jobs[0].started.wait(5)
    jobs += [Job(admission, f"job {k}") for k in (1, 2)]
    until(lambda: len(waiting(admission)) == 2)
    late = Job(admission, "late")
    assert late.started.wait(5) and "the server is busy (2 requests are waiting)" in str(late.error)
    for job in jobs:
        job.finish()


def test_work_that_waited_too_long_is_refused_with_the_reason():
    admission = Admission(budget(wait_s=0.6), Resident(990 * MB))
    job = Job(admission, "loading big", needs=100 * MB)
    assert job.started.wait(5)
    assert isinstance(job.error, CapacityError)
    assert "loading big waited 1 s" in str(job.error) and "990 MB of the 1000 MB" in str(job.error)
    assert waiting(admission) == []


def test_work_cancelled_while_it_waits_leaves_the_line():
    admission = Admission(budget(jobs=1), Resident())
    first = Job(admission, "first")
    assert first.started.wait(5)
    cancel = threading.Event()
    second = Job(admission, "second", cancel=cancel)
    until(lambda: waiting(admission) == ["second"])
    cancel.set()
    assert second.started.wait(5) and isinstance(second.error, Cancelled)
    assert waiting(admission) == []
    first.finish()


# ------------------------------------------------------------------ sizes and words
def test_a_load_needs_more_the_larger_its_network_and_never_more_than_the_limits_allow():
    limits = ClientLimits()
    small = network_needs("sparse-mlp-1", "loihi2", limits)
    large = network_needs("rand:n=100000,card=64", "loihi2-x8", limits)
    assert small < large < network_needs("a-file.npz", None, limits)
    assert network_needs("rand:n=100000,card=64", "loihi2-x8", limits) == load_bytes(
        100_000, 6_400_000, 1024
    )
    huge = network_needs("rand:n=10000000,card=64", None, limits)  # refused by the limits
    assert huge == network_needs("a-file.npz", None, limits)
    assert network_needs("no-such-network", "no-such-hardware", limits) > 0  # never raises


def test_sizes_and_places_in_words():
    assert parse_size("8G") == 8 * 2**30 and parse_size("512M") == 512 * MB
    assert parse_size("1.5GiB") == int(1.5 * 2**30) and parse_size("2000") == 2000
    for bad in ("", "-1G", "0", "lots"):
        with pytest.raises(ValueError):
            parse_size(bad)
    assert [place_text(k) for k in (1, 2, 3, 4, 11, 12, 13, 21, 22, 101)] == [
        "1st in line", "2nd in line", "3rd in line", "4th in line", "11th in line",
        "12th in line", "13th in line", "21st in line", "22nd in line", "101st in line",
    ]  # fmt: skip
    default = ServerBudget.default()
    assert default.memory_bytes > 0 and default.jobs >= 1 and default.searches >= 1


# ------------------------------------------------------------------ a session
def test_a_session_asking_for_more_than_the_server_shares_keeps_what_it_had():
    admission = Admission(budget(memory_bytes=300 * MB), Resident(100 * MB))
    state = ExplorerState.from_specs(SMALL_NETWORK, "loihi2", access=ClientAccess())
    state.gate = admission.gate("s", "a")
    before = (state.network.name, state.shown.revision)
    with pytest.raises(CapacityError, match="this server shares 300 MB"):
        state.prepare("rand:n=100000,card=64", "loihi2-x8")
    assert (state.network.name, state.shown.revision) == before


def test_a_sessions_load_waits_its_turn_and_is_told_its_place():
    admission = Admission(budget(jobs=1), Resident())
    state = ExplorerState.from_specs(SMALL_NETWORK, "loihi2", access=ClientAccess())
    state.gate = admission.gate("s", "a")
    held = Job(admission, "another page's load", client="b")
    assert held.started.wait(5)
    places, prepared = [], []
    loader = threading.Thread(
        target=lambda: prepared.append(
            state.prepare("sparse-mlp-1", "loihi2", on_wait=places.append)
        ),  # fmt: skip
        daemon=True,
    )
    loader.start()
    until(lambda: places == [1])
    assert not prepared
    held.finish()
    loader.join(60)
    assert prepared and places == [1, 0]


# ------------------------------------------------------------------ memory handed back
RELEASE = """
import gc, sys
import psutil
from explorer.admission import release_memory
rss = lambda: psutil.Process().memory_info().rss
junk = [bytes(1000) for _ in range(300_000)]  # malloc's heap (not pymalloc's, not mmap)
keep = [bytes(1000) for _ in range(10)]  # (something after it, as a live session would)
del junk
gc.collect()
before = rss()
if sys.argv[1] == "release":
    release_memory()
print(before - rss())
"""


def test_release_memory_hands_a_closed_sessions_heap_back():
    """Without the trim, ~300 MB of freed objects stay in the process's heap (its resident
    memory unchanged); with it, they go back to the system."""

    def returned(how: str) -> int:
        out = subprocess.run([sys.executable, "-c", RELEASE, how], capture_output=True,
                             text=True, check=True)  # fmt: skip
        return int(out.stdout)

    assert returned("keep") < 50 * MB
    assert returned("release") > 250 * MB
