"""The parts of an explorer session: small ``param.Parameterized`` objects, each with one
owner that writes it, which the views watch.

``ExplorerState`` (``explorer.state``) is composed of them:

=============  ==============================================  ===============================
part           what it holds                                   written by
=============  ==============================================  ===============================
``inputs``     the network and hardware, the specs that named  ``ExplorerState``'s actions
               them, the predictor, whether Undo/Redo can go   (load, adopt, undo, restore …)
``shown``      the current mapping, its evaluation, the        ``ExplorerState``'s actions
               starting one's, the reference, ``revision``     (edit, undo, compare …)
``search``     a search's trace, points, best and status; a    its methods: a run's by
               point picked off its plot; what the mesh shows  ``explorer.runner``'s
                                                               ``StateListener``; a pick, an
                                                               adopt, a load by the session
``simulation`` the shown mapping's simulated step               ``explorer.step_runner``
                                                               through the part's methods
=============  ==============================================  ===============================

The search and simulation parts change only through their own methods (``begin``,
``publish``, ``finish`` …), which say what each step of their owner sets; a load empties
them (``clear``). No part imports a UI toolkit, so everything here is testable without a
browser.
"""

from __future__ import annotations

import param

from engine.evaluation.cost import Evaluation
from engine.hardware import Hardware
from engine.mapping.assignment import Mapping
from engine.model.network import Network
from engine.predict import DEFAULT_PREDICTOR, predictors
from engine.search import Record
from engine.specs import DEFAULT_HARDWARE, DEFAULT_NETWORK, DEFAULT_PLACER

__all__ = ["SPECS", "Inputs", "Search", "Shown", "Simulation"]

SPECS = ("network_spec", "hardware_spec", "mapping_path", "partition_spec", "placer")


class Inputs(param.Parameterized):
    """The session's network and hardware, what named them, and its history's ends."""

    network_spec = param.String(default=DEFAULT_NETWORK, doc="what the user typed for the network")
    hardware_spec = param.String(default=DEFAULT_HARDWARE, doc="… and for the hardware")
    partition_spec = param.String(default=None, allow_None=True, doc="None: the network's default")
    mapping_path = param.String(default=None, allow_None=True, doc="mapping file, if any")
    placer = param.String(default=DEFAULT_PLACER, doc="placer used when no mapping file is given")
    predictor = param.Selector(
        objects=list(predictors), default=DEFAULT_PREDICTOR,
        doc="what times the step on the cards and in the searches (engine.predict; set it "
        "with ExplorerState.set_predictor)",
    )  # fmt: skip
    network = param.ClassSelector(class_=Network, default=None, allow_None=True)
    hardware = param.ClassSelector(class_=Hardware, default=None, allow_None=True)
    can_undo = param.Boolean(default=False)
    can_redo = param.Boolean(default=False)

    def specs(self) -> dict:
        """The specs that name what is loaded (``SPECS``), for a later load or undo."""
        return {k: getattr(self, k) for k in SPECS}


class Shown(param.Parameterized):
    """The current mapping and its evaluation, the starting mapping's, and a reference."""

    mapping = param.ClassSelector(class_=Mapping, default=None, allow_None=True)
    evaluation = param.ClassSelector(class_=Evaluation, default=None, allow_None=True)
    start_evaluation = param.ClassSelector(
        class_=Evaluation, default=None, allow_None=True, doc="the mapping the session started from"
    )
    reference = param.ClassSelector(class_=Mapping, default=None, allow_None=True)
    reference_evaluation = param.ClassSelector(class_=Evaluation, default=None, allow_None=True)
    reference_label = param.String(default="")
    revision = param.Integer(default=0, doc="counts every change of the current mapping")


class Search(param.Parameterized):
    """A search of the session's network and hardware: what it found so far, and whether the
    mesh shows its best (or a point picked off its plot) rather than the current mapping."""

    running = param.Boolean(default=False)
    status = param.String(default="")
    error = param.String(default="", doc="why the last search failed ('' if it did not)")
    trace = param.List(default=[], doc="(evaluations, best fitness) after each evaluation")
    points = param.List(
        default=[], item_type=Record, doc="the engine's Record of every successful evaluation"
    )
    best = param.ClassSelector(class_=Record, default=None, allow_None=True, doc="best so far")
    best_evaluation = param.ClassSelector(class_=Evaluation, default=None, allow_None=True)
    picked = param.ClassSelector(
        class_=Record, default=None, allow_None=True,
        doc="an evaluated mapping picked on a search tab's plot, shown on the mesh",
    )  # fmt: skip
    picked_evaluation = param.ClassSelector(class_=Evaluation, default=None, allow_None=True)
    follow_best = param.Boolean(
        default=True, doc="show the search's best on the mesh (while it runs and after)"
    )
    best_on_mesh = param.Boolean(
        default=False,
        doc="a search's best is on offer: shown (with follow_best) from its start until it is "
        "adopted or another network or hardware is loaded",
    )

    def begin(self, status: str) -> None:
        """A search starts: nothing found yet, its best on offer for the mesh."""
        self.param.update(
            running=True, trace=[], points=[], best=None, best_evaluation=None, picked=None,
            picked_evaluation=None, status=status, error="", best_on_mesh=True,
        )  # fmt: skip

    def publish(self, trace: list, points: list, status: str, best=None, evaluation=None) -> None:
        """What the search found since the last call: its whole trace and points so far
        (lists that grow by concatenation), and a new ``best`` with its ``evaluation``."""
        updates = {"trace": trace, "points": points, "status": status}
        if best is not None:
            updates.update(best=best, best_evaluation=evaluation)
        self.param.update(**updates)

    def finish(self, status: str, error: str = "") -> None:
        """The search ended (``error``: why it failed)."""
        self.param.update(running=False, status=status, error=error)

    def say(self, status: str) -> None:
        """A new status line (waiting, stopping, a point picked, the best adopted)."""
        self.status = status

    def pick(self, record: Record | None, evaluation: Evaluation | None) -> None:
        """Show ``record`` (evaluated: ``evaluation``) on the mesh; None: stop showing it."""
        self.param.update(picked=record, picked_evaluation=evaluation)

    def adopted(self) -> None:
        """What the mesh showed became the current mapping: nothing is on offer any more."""
        self.param.update(best_on_mesh=False, picked=None, picked_evaluation=None)

    def clear(self) -> None:
        """Another network or hardware is loaded: the search's results are of the old one."""
        self.param.update(
            trace=[], points=[], best=None, best_evaluation=None, status="", error="",
            best_on_mesh=False, picked=None, picked_evaluation=None,
        )  # fmt: skip


class Simulation(param.Parameterized):
    """The simulated step of what the mesh shows, kept by ``explorer.step_runner``."""

    running = param.Boolean(default=False, doc="a simulation of the shown mapping is running")
    cycles = param.Integer(
        default=0, doc="cycles the running simulation has reached (for a long step's card)"
    )
    error = param.String(default="", doc="why the shown mapping was not simulated")
    place = param.Integer(
        default=0, doc="the simulation's place in the server's line (0: not waiting)"
    )
    start_us = param.Number(
        default=None, allow_None=True, doc="the starting mapping's simulated step (µs)"
    )
    step = param.Parameter(
        default=None, doc="engine.simulate.StepResult of `of`'s mapping, or None"
    )
    of = param.ClassSelector(
        class_=Evaluation, default=None, allow_None=True,
        doc="the evaluation whose mapping `step` is (stale when not the shown one)",
    )  # fmt: skip

    def begin(self) -> None:
        """A simulation of the shown mapping starts."""
        self.param.update(running=True, error="", cycles=0, place=0)

    def idle(self) -> None:
        """Nothing is simulated now (a search has the processor)."""
        self.running = False

    def waiting(self, place: int) -> None:
        """The simulation's ``place`` in the server's line."""
        self.place = place

    def progress(self, cycles: int) -> None:
        self.cycles = cycles

    def publish(self, evaluation: Evaluation, step, *, shown: bool, start: bool) -> None:
        """``step`` is the simulated step of ``evaluation``'s mapping: the one ``shown``
        now, the ``start``ing one, or both (neither: it came too late, and is dropped)."""
        updates = {"start_us": step.step_us} if start else {}
        if shown:
            updates.update(step=step, of=evaluation, running=False)
        if updates:
            self.param.update(**updates)

    def failed(self, evaluation: Evaluation, message: str) -> None:
        """``evaluation``'s mapping, the one shown, could not be simulated: ``message``."""
        self.param.update(step=None, of=evaluation, running=False, error=message)

    def started_at(self, step_us: float | None) -> None:
        """The starting mapping's simulated step (None: not simulated yet)."""
        self.start_us = step_us

    def clear(self) -> None:
        """Another network, hardware or start is loaded: nothing of it is simulated yet."""
        self.param.update(step=None, of=None, error="", start_us=None)
