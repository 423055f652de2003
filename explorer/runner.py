"""Background searches for the explorer: one runner for every search, a listener per view.

``SearchRunner.start(config)`` runs the search its settings are for (the nested ES of an
``ESConfig``, the multi-objective search of a ``ParetoConfig``: ``engine.search.make_search``)
in a daemon thread. The search's events (``engine.search.Event``, one per evaluation, each
with its ``Record``) are buffered and handed to the runner's listener at most every
``interval_s`` seconds (and once at the end) through ``schedule``: in the app, a function
that runs its argument on the session's document thread (``_page.session_scheduler``); in
tests, a direct call. ``stop`` sets the cancel token; what was found stays.

A listener has three methods, all called on the page's thread: ``on_start(config,
from_current)`` (it may refuse the run), ``on_events(events)``, ``on_end(search, cancelled,
error)``; and may have a fourth, ``on_wait(place)``, told the search's place in the
server's line while it waits its turn (``explorer.admission``; 0 when it starts).
``StateListener``, the default, publishes into the session's search part
(``state.search``, whose one writer it is; the Evolution tab and the mesh draw from there);
the Pareto view listens itself. No UI toolkit is imported here.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from engine.errors import Cancelled, MeshScopeError
from engine.pipeline import Mapped, evaluate
from engine.predict import DEFAULT_PREDICTOR
from engine.search import ModelEvaluator, SimulatorEvaluator, make_search, objectives
from explorer.admission import STEP_BYTES, place_text
from explorer.state import ActionError

__all__ = ["SearchRunner", "StateListener"]


class SearchRunner:
    """A search in a daemon thread, a cancel token, and its events handed to ``listener``
    (default: a ``StateListener`` of ``state``) at most every ``interval_s`` seconds."""

    def __init__(
        self, state, schedule: Callable[[Callable[[], None]], None] | None = None,
        interval_s: float = 0.15, listener=None,
    ):  # fmt: skip
        self.state = state
        self.schedule = schedule or (lambda fn: fn())
        self.interval_s = interval_s
        self.listener = listener if listener is not None else StateListener(state)
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

    def start(self, config, *, from_current: bool = False) -> None:
        """Start a search of the state's network and hardware with ``config`` (raises if one
        runs, or the settings or the server's limits refuse it); ``from_current``: the
        current mapping is a starting point besides the heuristics."""
        state = self.state
        if self.running:
            raise ActionError("a search is already running")
        state.access.check_budget(config.budget)
        # the session's predictor rates the mappings (the simulator, for a simulated objective)
        evaluator = None  # the default predictor's: the search's own default
        if state.inputs.predictor != DEFAULT_PREDICTOR:
            evaluator = ModelEvaluator(
                state.network, state.hardware, predictor=state.inputs.predictor
            )
        if any(objectives[n].simulated for n in config.objectives):  # each step bounded
            evaluator = SimulatorEvaluator(
                state.network, state.hardware, limit_cycles=state.access.cycles,
                predictor=state.inputs.predictor,
            )  # fmt: skip
        start = state.mapping if from_current else None
        # the search checks its settings before the thread starts
        search = make_search(state.network, state.hardware, config, evaluator=evaluator,
                             start=start)  # fmt: skip
        self.listener.on_start(config, from_current)
        self._cancel = threading.Event()
        self._pending = []
        self._thread = threading.Thread(
            target=self._run, args=(search,), name=f"meshscope-{config.kind}", daemon=True
        )
        self._thread.start()

    def _run(self, search) -> None:
        # the time of the last flush; None: nothing flushed yet, so the first event goes out
        # at once (``time.monotonic`` counts from an arbitrary origin, on Linux the boot: a
        # start of 0.0 would hold the first event back on a machine up less than interval_s)
        last, error = None, ""
        waiting = getattr(self.listener, "on_wait", None)
        try:
            with self.state.gate.turn(
                "search", "the search", STEP_BYTES, cancel=self._cancel,
                on_wait=None if waiting is None else (lambda k: self.schedule(lambda: waiting(k))),
            ):  # fmt: skip
                for event in search.iter_run(cancel=self._cancel):
                    with self._lock:
                        self._pending.append(event)
                    now = time.monotonic()
                    if last is None or now - last >= self.interval_s:
                        last = now
                        self.schedule(self._flush)
        except Cancelled:  # stopped while it waited for its turn: nothing was evaluated
            pass
        except MeshScopeError as e:
            error = str(e)
        except Exception as e:  # noqa: BLE001 - a crash must still end the run cleanly
            error = f"search failed: {e!r}"
        cancelled = self._cancel.is_set()
        self.schedule(lambda: self._finish(search, cancelled, error))

    def _flush(self) -> None:
        """Hand the listener what came since the last flush, on the page's thread."""
        with self._lock:
            events, self._pending = self._pending, []
        if events:
            self.listener.on_events(events)

    def _finish(self, search, cancelled: bool, error: str) -> None:
        self._flush()
        self.listener.on_end(search, cancelled, error)


class StateListener:
    """Publishes a search into the session's search part (``state.search``): its trace of
    the best, its points, its best (evaluated, for the mesh) and a status line."""

    def __init__(self, state):
        self.state = state
        self._objective = "latency"

    def on_start(self, config, from_current: bool) -> None:
        state = self.state
        if state.search.running:
            raise ActionError("a search is already running")
        self._objective = config.objectives[0]
        state.search.begin(
            f"starting: budget {config.budget}, seed {config.seed}"
            + (", from the current mapping and the heuristics" if from_current else "")
        )

    def on_wait(self, place: int) -> None:
        """The search waits for the server (``place`` in line; 0: it starts)."""
        if self.state.search.running:
            self.state.search.say(
                f"waiting for the server: {place_text(place)}" if place else "starting"
            )

    def on_events(self, events) -> None:
        state = self.state
        trace = state.search.trace + [(e.count, e.best.fitness) for e in events]
        points = state.search.points + [e.record for e in events if not e.record.failed]
        best = events[-1].best  # its own record while nothing has succeeded
        status = f"{events[-1].count} / {events[-1].budget} evaluations, " + (
            "none succeeded yet" if best.failed else f"best {self._said(best)}"
        )
        new_best = state.search.best is None or best.index != state.search.best.index
        if not best.failed and new_best:
            mapped = Mapped.of(state.network, state.hardware, best.mapping(state.network))
            state.search.publish(trace, points, status, best, evaluate(mapped))
        else:
            state.search.publish(trace, points, status)

    def on_end(self, search, cancelled: bool, error: str) -> None:
        state = self.state
        if error:
            status = error
        elif state.search.best is None:
            status = error = f"no evaluation succeeded: {search.history.failures()}"
        else:
            how = "stopped" if cancelled else "done"
            # the best of the search's own starting points (the first of equals)
            name, start = min(search.result().heuristics.items(), key=lambda h: h[1].fitness)
            status = (
                f"{how} after {len(search.history)} evaluation"
                f"{'' if len(search.history) == 1 else 's'}: best "
                f"{self._said(state.search.best)}, from {self._said(start, short=True)} "
                f"({'your mapping' if name == 'start' else name})"
            )
        state.search.finish(status, error)

    # ------------------------------------------------------------ the user's steps
    def stopping(self) -> None:
        """The user asked the running search to stop."""
        if self.state.search.running:
            self.state.search.say("stopping after the evaluation under way …")

    def picked(self, record) -> None:
        """The user picked ``record`` off the plot: it is on the mesh now."""
        self.state.search.say(
            f"evaluation {record.index + 1} ({record.latency_us:,.3f} µs, "
            f"{record.energy_uj:,.3f} µJ, {record.cores_used} cores) is on the Mesh tab: "
            "Adopt makes it yours"
        )

    def adopted(self, record, what: str) -> None:
        """The user adopted ``record`` (``what``: "the best", "the picked mapping")."""
        self.state.search.say(
            f"adopted {what}: {record.latency_us:,.3f} µs, {record.energy_uj:,.3f} µJ per step, "
            f"{record.cores_used} cores is now the current mapping (undo brings the previous "
            "back)"
        )

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
