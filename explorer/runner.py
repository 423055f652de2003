"""Background searches for the explorer: a thread, a cancel token, throttled pushes.

``SearchRunner.start`` runs the engine's nested ES in a daemon thread. Events are
buffered and published to the ``ExplorerState`` at most every ``interval_s`` seconds
(and once at the end) through ``schedule``: in the app, a function that runs its
argument on the session's document thread (``_page.session_scheduler``: the server's event
loop, then ``doc.add_next_tick_callback``); in tests, a direct call. ``stop`` sets the
cancel token; the best so far stays in the state. No UI toolkit is imported here.

The runner listens to the engine's public search events (``engine.search.Event``): each
carries the ``Record`` of the evaluation, with the model's terms, so every published point
can be drawn on the roofline without evaluating it a second time.
"""

from __future__ import annotations

import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable

from engine.errors import MeshScopeError
from engine.pipeline import Mapped, evaluate
from engine.search import ESConfig, NestedES, SimulatorEvaluator, objectives
from explorer.state import ActionError

__all__ = ["ParetoRunner", "SearchRunner"]


class _Background(ABC):
    """What both runners share: a search in a daemon thread, a cancel token, and what it
    produced buffered and handed to the page at most every ``interval_s`` seconds through
    ``schedule``, then the end once."""

    def __init__(self, state, schedule: Callable[[Callable[[], None]], None] | None = None,
                 interval_s: float = 0.15):  # fmt: skip
        self.state = state
        self.schedule = schedule or (lambda fn: fn())
        self.interval_s = interval_s
        self._cancel = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._pending: list = []

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def stop(self) -> None:
        """Ask the search to stop after the work under way; it keeps what it found."""
        self._cancel.set()

    def join(self, timeout: float | None = None) -> None:
        if self._thread is not None:
            self._thread.join(timeout)

    def _simulator(self, simulated: bool):
        """The evaluator of a simulated objective, each step bounded by the session's limit
        (None: the model's, the search's default)."""
        state = self.state
        if not simulated:
            return None
        return SimulatorEvaluator(state.network, state.hardware, limit_cycles=state.access.cycles)

    def _launch(self, stream, end, name: str) -> None:
        """Run ``stream(cancel)`` — lists of what the page is to get — in a thread, then
        ``end()`` there; ``_finish(end's value, cancelled, error)`` on the page."""
        self._cancel = threading.Event()
        self._pending = []
        self._thread = threading.Thread(
            target=self._run, args=(stream, end), name=name, daemon=True
        )
        self._thread.start()

    def _run(self, stream, end) -> None:
        last, error, value = 0.0, "", None
        try:
            for items in stream(self._cancel):
                with self._lock:
                    self._pending.extend(items)
                now = time.monotonic()
                if now - last >= self.interval_s:
                    last = now
                    self.schedule(self._flush)
            value = end()
        except MeshScopeError as e:
            error = str(e)
        except Exception as e:  # noqa: BLE001 - a crash must still end the run cleanly
            error = f"search failed: {e!r}"
        cancelled = self._cancel.is_set()
        self.schedule(lambda: self._finish(value, cancelled, error))

    def _take(self) -> list:
        with self._lock:
            items, self._pending = self._pending, []
        return items

    @abstractmethod
    def _flush(self) -> None:
        """Hand the page what came since the last flush (``_take``), on its thread."""

    @abstractmethod
    def _finish(self, value, cancelled: bool, error: str) -> None:
        """The run ended: flush, and tell the page how (``value``: what ``end`` returned,
        None when the run failed first)."""


class SearchRunner(_Background):
    """The nested ES; its events published to the ``ExplorerState``."""

    def start(self, config: ESConfig, *, from_current: bool = False) -> None:
        """Start a search of the state's network and hardware (raises if one runs);
        ``from_current``: the current mapping is a starting point besides the heuristics."""
        state = self.state
        if self.running or state.search_running:
            raise ActionError("a search is already running")
        state.access.check_budget(config.budget)
        evaluator = self._simulator(objectives[config.objective].simulated)
        # NestedES validates the settings before the thread starts
        start = state.mapping if from_current else None
        search = NestedES(state.network, state.hardware, config, evaluator=evaluator, start=start)
        self._objective = config.objective
        state.param.update(
            search_running=True,
            search_trace=[],
            search_points=[],
            search_best=None,
            picked=None,
            picked_evaluation=None,
            search_best_evaluation=None,
            search_status=f"starting: budget {config.budget}, seed {config.seed}"
            + (", from the current mapping and the heuristics" if from_current else ""),
            search_error="",
            best_on_mesh=True,
        )
        self._launch(
            lambda cancel: ([event] for event in search.iter_run(cancel=cancel)),
            lambda: search, "meshscope-search",
        )  # fmt: skip

    # ------------------------------------------------------------ UI side
    def _flush(self) -> None:
        events = self._take()
        if not events:
            return
        state = self.state
        trace = state.search_trace + [(e.count, e.best.fitness) for e in events]
        points = state.search_points + [e.record for e in events if not e.record.failed]
        best = events[-1].best  # its own record while nothing has succeeded
        updates = {
            "search_trace": trace,
            "search_points": points,
            "search_status": f"{events[-1].count} / {events[-1].budget} evaluations, "
            + ("none succeeded yet" if best.failed else f"best {self._said(best)}"),
        }
        new_best = state.search_best is None or best.index != state.search_best.index
        if not best.failed and new_best:
            updates["search_best"] = best
            mapped = Mapped.of(state.network, state.hardware, best.mapping(state.network))
            updates["search_best_evaluation"] = evaluate(mapped)
        state.param.update(**updates)

    def _finish(self, search: NestedES | None, cancelled: bool, error: str) -> None:
        self._flush()
        state = self.state
        if error:  # (``search`` is None: it failed before it ended)
            status = error
        elif state.search_best is None:
            status = error = f"no evaluation succeeded: {search.history.failures()}"
        else:
            how = "stopped" if cancelled else "done"
            start = search.result().initial  # the best of the search's own starting points
            status = (
                f"{how} after {len(search.history)} evaluations: best "
                f"{self._said(state.search_best)}, from {self._said(start, short=True)} "
                f"({'your mapping' if start.note == 'start' else start.note})"
            )
        state.param.update(search_running=False, search_status=status, search_error=error)

    def _said(self, record, *, short: bool = False) -> str:
        """A record's figure as the search measured it: its objective's value (the
        simulated step of a simulated objective, the model's latency beside it), else
        the latency."""
        name = self._objective
        if objectives[name].simulated:
            text = f"{record.simulated_us:.3f} µs simulated"
            return text if short else f"{text} (the model's {record.latency_us:.3f} µs)"
        if name == "latency":
            return f"{record.latency_us:.3f} µs"
        return f"{objectives[name].label} {record.fitness:.4g}"


class ParetoRunner(_Background):
    """A multi-objective search (``engine.search.pareto``) in a daemon thread.

    Each generation's evaluations are handed to ``publish(evaluations)`` on the session's
    document thread, then ``done(result, error)`` once: the ``ParetoResult`` (None when
    nothing feasible came out) and why it failed ('' if it did not). ``stop`` ends the run
    after the generation under way; its front is kept.
    """

    def __init__(self, state, publish, done, schedule=None, interval_s: float = 0.15):
        super().__init__(state, schedule, interval_s)
        self.publish, self.done = publish, done

    def start(self, config) -> None:
        """Start a search of the state's network and hardware with ``config`` (a
        ``ParetoConfig``; raises if the settings or the server's limits refuse it)."""
        from engine.search.pareto import ParetoSearch

        state = self.state
        if self.running:
            raise ActionError("a search is already running")
        state.access.check_budget(config.budget)
        evaluator = self._simulator(any(objectives[n].simulated for n in config.objectives))
        search = ParetoSearch(state.network, state.hardware, config, evaluator=evaluator)
        self._launch(
            lambda cancel: search.iter_run(cancel=cancel),
            lambda: search.result(cancelled=self._cancel.is_set()), "meshscope-pareto",
        )  # fmt: skip

    def _flush(self) -> None:
        batch = self._take()
        if batch:
            self.publish(batch)

    def _finish(self, result, cancelled: bool, error: str) -> None:
        self._flush()
        self.done(result, error)
