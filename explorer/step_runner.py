"""The shown mapping's time step, simulated in the background after every change.

A person hand-tuning a mapping sees the analytic latency at once; ``StepRunner`` then
simulates the step flit by flit (``engine.simulate.simulate_step``, pipelined, spikes
sampled with seed 0, so the same mapping always gives the same number) in a daemon
thread and publishes the result to the session's simulation part (``state.simulation``:
it is its one writer) through ``schedule``, like ``SearchRunner``. The next change cancels
a simulation still running (``simulate_step(cancel=)`` stops within a few thousand cycles)
and starts its own; a
result that arrives for a mapping no longer shown is dropped. The starting mapping is
simulated once too, for the change against the start. A change is answered on the
session's next tick, so the page's reply to it (cards, mesh) leaves first, and a
simulation waits ``delay`` seconds before it starts: the page's redraw after a drag goes
first (on a machine of two cores the simulation's set-up would slow it), and a core
dragged again at once costs nothing. While a search runs nothing is simulated (the
search has the processor). No UI toolkit is imported here.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from engine.errors import Cancelled, MeshScopeError, failure_text
from engine.mapping.partition_graph import partition_graph
from engine.pipeline import Mapped
from engine.simulate import simulate_step
from explorer.admission import STEP_BYTES

__all__ = ["StepRunner"]

PROGRESS_S = 1.0  # how often a long step's simulation tells the page how far it has got

# what decides the shown mapping, part by part (``ExplorerState.shown_evaluation``)
WATCHED = {
    "shown": ("evaluation",),
    "search": ("best_evaluation", "follow_best", "best_on_mesh", "picked_evaluation", "running"),
}


class StepRunner:
    """Keeps ``state.simulation`` the simulated step of ``state.shown_evaluation``'s mapping."""

    def __init__(
        self,
        state,
        schedule: Callable[[Callable[[], None]], None] | None = None,
        *,
        mode: str = "pipelined",
        seed: int = 0,
        delay: float = 0.0,
    ):
        self.state = state
        self.schedule = schedule or (lambda fn: fn())
        self.mode, self.seed, self.delay = mode, seed, delay
        self._cancel = threading.Event()
        self._thread: threading.Thread | None = None
        self._for = None  # the evaluation the running thread simulates
        # a change is answered on the next tick: the page's reply to it (cards, mesh) is
        # sent first, and quick changes in one tick ask once
        self._watchers = state.watch(lambda *_: self.schedule(self.request), **WATCHED)

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def request(self) -> None:
        """Simulate what the state shows now, unless it is simulated already (call on the
        session's thread)."""
        s = self.state
        shown = s.shown_evaluation
        if shown is None or s.simulation.of is shown or (self.running and self._for is shown):
            return
        self._cancel.set()  # whatever runs is for a mapping no longer shown
        self._for = None
        if s.search.running:
            s.simulation.idle()
            return
        cancel = self._cancel = threading.Event()
        # (evaluation, mapping, its partition graph if the session has it: not built twice)
        jobs = []
        if s.simulation.start_us is None and s.start_mapping is not None:
            jobs.append((s.shown.start_evaluation, s.start_mapping))
        if shown is not s.shown.start_evaluation or not jobs:
            jobs.append((shown, s.shown_mapping()))
        jobs = [(ev, mapping, s.known_graph(mapping)) for ev, mapping in jobs]
        self._for = shown
        s.simulation.begin()
        args = (s.network, s.hardware, jobs, s.access.cycles, cancel)
        self._thread = threading.Thread(
            target=self._run, args=args, name="meshscope-step", daemon=True
        )
        self._thread.start()

    def join(self, timeout: float | None = None) -> None:
        if self._thread is not None:
            self._thread.join(timeout)

    def close(self) -> None:
        """Stop simulating and stop watching the state (the session is gone)."""
        self._cancel.set()
        self.state.unwatch(self._watchers)

    # ------------------------------------------------------------ thread side
    def _run(self, network, hardware, jobs, limit_cycles: int, cancel: threading.Event) -> None:
        if self.delay > 0 and cancel.wait(self.delay):
            return  # a newer change came first
        try:
            with self.state.gate.turn(
                "work", "the simulated step", STEP_BYTES, cancel=cancel, counted=False,
                on_wait=lambda place: self.schedule(lambda: self._place(place, cancel)),
            ):  # fmt: skip
                self._simulate(network, hardware, jobs, limit_cycles, cancel)
        except Cancelled:
            return
        except MeshScopeError as e:  # refused by the server's admission
            message = str(e)
            self.schedule(lambda: self._failed(jobs[-1][0], message, cancel))

    def _place(self, place: int, cancel: threading.Event) -> None:
        if not cancel.is_set():
            self.state.simulation.waiting(place)

    def _simulate(self, network, hardware, jobs, limit_cycles, cancel) -> None:
        for evaluation, mapping, graph in jobs:
            try:
                if graph is None:
                    graph = partition_graph(network, hardware, mapping.partition)
                shown = evaluation is jobs[-1][0]  # (the start's step reports nothing)
                result = simulate_step(
                    Mapped(network, hardware, mapping, graph), mode=self.mode, seed=self.seed,
                    limit_cycles=limit_cycles, cancel=cancel,
                    window=limit_cycles,  # one window: each buffer's peak over the step
                    progress=self._reporter(evaluation, cancel) if shown else None,
                )  # fmt: skip
            except Cancelled:
                return
            except Exception as e:  # noqa: BLE001 - a page must hear of any failure
                message = failure_text(e, "the simulation")
                self.schedule(lambda ev=evaluation, m=message: self._failed(ev, m, cancel))
                return
            self.schedule(lambda ev=evaluation, r=result: self._publish(ev, r, cancel))

    def _reporter(self, evaluation, cancel: threading.Event):
        """A ``simulate_step`` progress callback that tells the page how far a long step has
        got, at most once every ``PROGRESS_S`` seconds (a short step says nothing)."""
        last = [time.perf_counter()]

        def report(cycles: int) -> None:
            now = time.perf_counter()
            if now - last[0] >= PROGRESS_S:
                last[0] = now
                self.schedule(lambda: self._progress(evaluation, cycles, cancel))

        return report

    # ------------------------------------------------------------ session side
    def _progress(self, evaluation, cycles: int, cancel: threading.Event) -> None:
        s = self.state
        if evaluation is s.shown_evaluation and s.simulation.running and not cancel.is_set():
            s.simulation.progress(cycles)

    def _publish(self, evaluation, result, cancel: threading.Event) -> None:
        s = self.state
        s.simulation.publish(
            evaluation, result, start=evaluation is s.shown.start_evaluation,
            shown=evaluation is s.shown_evaluation and not cancel.is_set(),
        )  # fmt: skip

    def _failed(self, evaluation, message: str, cancel: threading.Event) -> None:
        s = self.state
        if evaluation is s.shown_evaluation and not cancel.is_set():
            s.simulation.failed(evaluation, message)
