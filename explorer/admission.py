"""Admission: what bounds the sum of every page's work, not only each page's own.

``ClientLimits`` keep one request within reason; nothing else kept twenty of them, each
within its limits, from taking a machine's memory (twenty pages loading a 100,000-neuron
network on the eight-chip board took a 24 GB machine to 17.8 GB, and one page's drag then
took seconds). So every piece of heavy work a page asks for — loading or uploading a
network, a search, a simulation — passes through one ``Admission`` per server:

* **A memory budget** (``--max-memory``; by default half the machine's memory). A piece of
  work says how much memory it needs at most (``load_bytes`` and friends: an estimate from
  the sizes, measured by ``benchmarks/soak.py``) and starts only while the server's
  resident memory, what the work already running may still add, and its own need fit the
  budget. What sessions hold once loaded is in the resident memory; a closed session's
  memory is collected and handed back to the system (``release_memory``), and the waiting
  work looks again.
* **A bounded queue, first come first served, in two lanes**: searches (long) and the rest
  (loads and simulations, short), each with its number of places (``jobs``,
  ``searches``), so a search never keeps a load waiting. At most ``queue`` pieces wait; a
  waiting page is told its place in the line, and a piece that waited ``wait_s`` seconds
  is refused with the reason.
* **A cap per client** (the browser's address): at most ``client_jobs`` pieces waiting or
  running at once.

A piece that can never fit (more than the budget), or that the queue or its client's cap
refuses, is refused at once with a ``CapacityError`` saying why; the page keeps what it
had. ``Gate`` is one session's door: the views and runners call ``gate.turn(...)`` in the
worker thread that will do the work. ``OPEN`` lets everything through at once (the Python
API, tests).
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import functools
import gc
import itertools
import os
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import psutil

from engine.errors import Cancelled, CapacityError

__all__ = [
    "OPEN",
    "Admission",
    "Gate",
    "ServerBudget",
    "load_bytes",
    "network_needs",
    "parse_size",
    "place_text",
    "release_memory",
    "resident_bytes",
]

LANES = ("work", "search")
POLL_S = 0.5  # a waiting piece looks again this often (memory is freed without telling)


def resident_bytes() -> int:
    """The server process's resident memory now."""
    return psutil.Process().memory_info().rss


def load_bytes(neurons: int, synapses: int, cores: int = 0) -> int:
    """The most memory loading a network of this size may add to a server: the network,
    its partition, placement, partition graph and evaluator, the page's figures, and the
    first simulated step. Measured (``benchmarks/soak.py``, strangers): about 60 bytes a
    synapse and 1.5 kB a neuron for rand:n=100000,card=64 on loihi2-x8; these constants
    lie above it."""
    return int(96 * synapses + 4096 * neurons + 32_768 * cores + 48 * 2**20)


def network_needs(network_spec: str | None, hardware_spec: str | None, limits) -> int:
    """``load_bytes`` of what a client asked to load, from its sizes before anything is
    built: a registered workload's sizes (``workload_size``), a preset's or a ``mesh:``
    spec's cores; a file's sizes are unknown until it is read, so the most the client's
    ``limits`` let it load. Never raises (what is wrong with a spec, its load says)."""
    from engine.hardware import load_hardware, spec_cores
    from engine.specs import demo_files, workload_size
    from explorer.access import looks_like_path

    neurons, synapses = limits.neurons, limits.synapses
    if network_spec and network_spec.strip() in {p.name for p in demo_files()}:
        neurons, synapses = 20_000, 2_000_000  # the shipped demos are smaller than this
    elif network_spec and not looks_like_path(network_spec):
        with contextlib.suppress(Exception):
            neurons, synapses = workload_size(network_spec)
    cores = limits.cores
    if hardware_spec:
        with contextlib.suppress(Exception):
            cores = spec_cores(hardware_spec) or load_hardware(hardware_spec).n_cores
    return load_bytes(min(neurons, limits.neurons), min(synapses, limits.synapses),
                      min(cores, limits.cores))  # fmt: skip


STEP_BYTES = 96 * 2**20  # a simulation or a search beside what its session holds


def place_text(place: int) -> str:
    """A place in the line in words: "2nd in line"."""
    suffix = "th" if 10 <= place % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(place % 10, "th")
    return f"{place}{suffix} in line"


def parse_size(text: str) -> int:
    """Bytes of a size such as ``8G``, ``512M``, ``1.5GiB`` or ``2000000`` (raises
    ``ValueError``)."""
    t = text.strip().upper().removesuffix("IB").removesuffix("B")
    scale = {"K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}.get(t[-1:], 1)
    number = float(t[:-1] if t[-1:] in "KMGT" else t)
    if not number > 0:
        raise ValueError(f"not a positive size: {text!r}")
    return int(number * scale)


@dataclass(frozen=True)
class ServerBudget:
    """The server-wide bounds (see the module's text)."""

    memory_bytes: int
    jobs: int = 1  # loads and simulations at once
    searches: int = 1  # searches at once
    queue: int = 32  # pieces waiting, both lanes together
    client_jobs: int = 4  # one client's pieces waiting or running
    wait_s: float = 300.0  # the longest a piece waits before it is refused

    @classmethod
    def default(cls) -> ServerBudget:
        """Half of the machine's memory; on a machine of n cores, n - 1 loads or
        simulations at once (the last core answers the pages) and one search per two cores."""
        cores = os.cpu_count() or 1
        return cls(
            memory_bytes=psutil.virtual_memory().total // 2,
            jobs=max(1, cores - 1),
            searches=max(1, cores // 2),
        )


@dataclass(eq=False)
class _Piece:
    lane: str
    what: str
    needs: int
    client: str
    session: str
    on_wait: Callable[[int], None] | None
    order: int
    cancel: threading.Event | None = None
    counted: bool = True  # against its client's cap (a page's own background steps are not)
    place: int = 0  # its place in its lane's line, last told


@dataclass
class _Lane:
    places: int
    waiting: list[_Piece] = field(default_factory=list)
    running: list[_Piece] = field(default_factory=list)


class Admission:
    """One server's budget, queue and per-client cap (see the module's text)."""

    def __init__(self, budget: ServerBudget, resident: Callable[[], int] = resident_bytes):
        self.budget = budget
        self._resident = resident
        self._cond = threading.Condition()
        self._lanes = {"work": _Lane(budget.jobs), "search": _Lane(budget.searches)}
        self._order = itertools.count()

    def gate(self, session: str, client: str) -> Gate:
        return Gate(self, session, client)

    # ------------------------------------------------------------ figures
    def snapshot(self) -> dict:
        """Who waits and who runs, per lane, and the memory figures (for tests and logs)."""
        with self._cond:
            return {
                "resident_bytes": self._resident(),
                "budget_bytes": self.budget.memory_bytes,
                **{
                    lane: {"waiting": [p.what for p in q.waiting],
                           "running": [p.what for p in q.running]}
                    for lane, q in self._lanes.items()
                },
            }  # fmt: skip

    def freed(self) -> None:
        """Memory may have been handed back (a session closed): the waiting look again."""
        with self._cond:
            self._cond.notify_all()

    # ------------------------------------------------------------ the queue
    @contextlib.contextmanager
    def turn(
        self, *, lane: str, what: str, needs: int, client: str, session: str,
        on_wait: Callable[[int], None] | None = None, cancel: threading.Event | None = None,
        counted: bool = True,
    ) -> Iterator[None]:  # fmt: skip
        """Wait for a place for ``what`` (needing at most ``needs`` bytes) in ``lane``, then
        run the ``with`` block holding it. Raises ``CapacityError`` if it is refused (at
        once, or after ``wait_s``) and ``Cancelled`` if ``cancel`` is set while it waits.
        ``on_wait(place)`` is called (in this thread) whenever its place in line changes,
        and with 0 when it starts after having waited. ``counted``: whether it counts against
        its client's cap (a request the person made; not the step a page simulates by
        itself after each change, which waits its turn all the same)."""
        piece = self._enqueue(lane, what, needs, client, session, on_wait, cancel, counted)
        try:
            self._wait(piece)
            yield
        finally:
            with self._cond:
                queue = self._lanes[lane]
                for line in (queue.waiting, queue.running):
                    if piece in line:
                        line.remove(piece)
                self._cond.notify_all()

    def _enqueue(self, lane, what, needs, client, session, on_wait, cancel, counted) -> _Piece:
        b = self.budget
        if needs > b.memory_bytes:
            raise CapacityError(
                f"{what} needs about {_gb(needs)} of memory; this server shares "
                f"{_gb(b.memory_bytes)} among all its pages (--max-memory): run meshscope on "
                "your own machine for larger ones"
            )
        with self._cond:
            mine = sum(
                p.client == client and p.counted
                for q in self._lanes.values()
                for p in (*q.waiting, *q.running)
            )
            if counted and mine >= b.client_jobs:
                raise CapacityError(
                    f"{what}: your computer already has {mine} requests waiting or running on "
                    "this server; wait for one of them to finish"
                )
            waiting = sum(len(q.waiting) for q in self._lanes.values())
            if waiting >= b.queue:
                raise CapacityError(
                    f"{what}: the server is busy ({waiting} requests are waiting); try again in a "
                    "few minutes"
                )
            piece = _Piece(
                lane, what, needs, client, session, on_wait, next(self._order), cancel, counted
            )
            self._lanes[lane].waiting.append(piece)
            return piece

    def _wait(self, piece: _Piece) -> None:
        queue = self._lanes[piece.lane]
        deadline = time.monotonic() + self.budget.wait_s
        waited = False
        while True:
            with self._cond:
                if self._may_start(piece, queue):
                    queue.waiting.remove(piece)
                    queue.running.append(piece)
                    break
                place = queue.waiting.index(piece) + 1
                left = deadline - time.monotonic()
                if left <= 0:
                    raise CapacityError(self._why_waited(piece))
                if piece.cancel is not None and piece.cancel.is_set():
                    raise Cancelled(f"{piece.what} was cancelled while it waited")
                self._cond.wait(min(POLL_S, left))
            waited = True
            if place != piece.place:
                piece.place = place
                if piece.on_wait is not None:
                    piece.on_wait(place)
        if waited and piece.on_wait is not None:
            piece.on_wait(0)

    def _may_start(self, piece: _Piece, queue: _Lane) -> bool:
        """First in its lane's line, a place free in the lane, and the memory for it."""
        if queue.waiting[0] is not piece or len(queue.running) >= queue.places:
            return False
        running = sum(p.needs for q in self._lanes.values() for p in q.running)
        return self._resident() + running + piece.needs <= self.budget.memory_bytes

    def _why_waited(self, piece: _Piece) -> str:
        return (
            f"{piece.what} waited {self.budget.wait_s:.0f} s for the server: its pages hold "
            f"{_gb(self._resident())} of the {_gb(self.budget.memory_bytes)} it may use, and this "
            f"needs about {_gb(piece.needs)} more; try again when others have closed their pages"
        )


@dataclass(frozen=True)
class Gate:
    """One session's door to its server's ``Admission`` (``OPEN``: no server, no waiting)."""

    admission: Admission | None
    session: str = ""
    client: str = ""

    def turn(
        self, lane: str, what: str, needs: int, on_wait: Callable[[int], None] | None = None,
        cancel: threading.Event | None = None, *, counted: bool = True,
    ):  # fmt: skip
        """A context manager holding a place for ``what`` (``Admission.turn``)."""
        if self.admission is None:
            return contextlib.nullcontext()
        if lane not in LANES:
            raise ValueError(f"no lane {lane!r}")
        return self.admission.turn(
            lane=lane, what=what, needs=needs, client=self.client, session=self.session,
            on_wait=on_wait, cancel=cancel, counted=counted,
        )  # fmt: skip

    def closed(self) -> None:
        """The session has gone: collect what it held, hand it back, let the waiting look."""
        if self.admission is not None:
            release_memory()
            self.admission.freed()


OPEN = Gate(None)


def release_memory() -> None:
    """Collect unreachable objects and hand the heap's free pages back to the system
    (glibc's ``malloc_trim``; elsewhere only the collection). Without the trim a server's
    resident memory stayed at 1.7 GB after twenty large pages had closed."""
    gc.collect()
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


@functools.cache
def _malloc_trim():
    """glibc's ``malloc_trim`` (None where the C library has none)."""
    name = ctypes.util.find_library("c")
    try:
        trim = ctypes.CDLL(name).malloc_trim if name else None
    except (OSError, AttributeError):
        return None
    if trim is not None:
        trim.argtypes, trim.restype = [ctypes.c_size_t], ctypes.c_int
    return trim


def _gb(n: int) -> str:
    return f"{n / 2**30:.1f} GB" if n >= 2**30 else f"{n / 2**20:.0f} MB"
