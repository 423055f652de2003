"""ExplorerState: one explorer session, composed of parts.

A session is a few small ``param.Parameterized`` parts (``explorer.parts``), each written by
one owner, which the views watch: ``inputs`` (the network and hardware, the specs that named
them, the predictor, whether Undo and Redo can go), ``shown`` (the current mapping, its
evaluation, the starting one's, the reference), ``search`` (a search's results, written by
``explorer.runner``) and ``simulation`` (the shown mapping's simulated step, written by
``explorer.step_runner``); ``inspection`` explains a click on the mesh
(``explorer.inspection``). ``ExplorerState`` holds them and the actions that change the
first two: swap or move cores, undo and redo, reset to a heuristic, change a layer's core
count, load and save mapping files, compare with a reference. It imports no UI toolkit
(only ``param`` and the engine), so every action is testable without a browser.

Actions raise ``engine.errors.MeshScopeError`` on bad input and leave the state as it
was: a session never holds a mapping without its evaluation.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import param

from engine.errors import CapacityError, MeshScopeError, SpecError
from engine.evaluation.cost import Evaluation, Evaluator
from engine.hardware import Hardware, load_hardware
from engine.mapping.assignment import Mapping, mapping_to_dict, parse_mapping_dict
from engine.mapping.partition_graph import partition_graph
from engine.memo import SharedCache
from engine.model.network import Network
from engine.pipeline import (
    Mapped,
    build_mapping,
    evaluate,
    evaluator,
    resolve_network,
)
from engine.predict import predictors
from engine.search import Record, resize_population
from engine.specs import DEFAULT_HARDWARE, DEFAULT_NETWORK, DEFAULT_PLACER, demo_path
from explorer import uploads
from explorer.access import ClientAccess
from explorer.admission import OPEN, Gate, network_needs
from explorer.inspection import Inspector
from explorer.parts import SPECS, Inputs, Search, Shown, Simulation

__all__ = [
    "DEFAULT_NETWORK",
    "DEFAULT_HARDWARE",
    "DEFAULT_PLACER",
    "ActionError",
    "ExplorerState",
    "Prepared",
    "Reference",
    "resolve",
]

HISTORY_LIMIT = 200  # undo steps kept per session
LOADS_KEPT = 3  # networks and hardware loaded before the current one that Undo can go back to


class ActionError(MeshScopeError):
    """An action the session cannot take now (a search runs, nothing to adopt …)."""


def resolve(
    network_spec: str | None,
    hardware_spec: str | None,
    mapping_path: str | None = None,
    *,
    placer: str = DEFAULT_PLACER,
    partition_spec: str | None = None,
) -> tuple[Network, Hardware, Mapping]:
    """The network, hardware and mapping that the ``serve`` arguments name.

    With a mapping file, a missing network or hardware spec is taken from the file;
    without one, the network's partition (``partition_spec`` or its default) is placed
    by ``placer`` (``engine.pipeline.build_mapping``).

    Results are cached per process (a mapping file by its path, size and modification
    time), so a new browser session does not partition the network again. They are
    shared between sessions, so their arrays are made read-only: an action makes a new
    ``Mapping``, it never edits one in place.
    """
    mapped = _resolve_mapped(
        network_spec, hardware_spec, mapping_path, placer=placer, partition_spec=partition_spec
    )
    return mapped.network, mapped.hardware, mapped.mapping


def _resolve_mapped(network_spec, hardware_spec, mapping_path, *, placer, partition_spec) -> Mapped:
    """``resolve``'s ``Mapped``: with the partition graph of its mapping, shared like the
    mapping (a ``PartitionGraph`` is frozen), so a new session need not build it again."""
    file_key = None
    if mapping_path:
        try:
            st = os.stat(mapping_path)
            file_key = (st.st_size, st.st_mtime_ns)
        except OSError:
            file_key = None  # reading the file will say what is wrong
    return _resolve_cached(
        network_spec, hardware_spec, mapping_path, placer, partition_spec, file_key
    )


# Mapped networks resolved for any session of this process: found again while a session
# holds them (two pages of one spec share one copy), the recent ones kept up to 256 MB
# together (engine.memo; sixteen entries of any size held 3.4 GB of a server after twenty
# large pages had closed)
_RESOLVED = SharedCache(256 * 2**20)


def _resolve_cached(network_spec, hardware_spec, mapping_path, placer, partition_spec, _key):
    key = (network_spec, hardware_spec, mapping_path, placer, partition_spec, _key)
    return _RESOLVED.get(
        key,
        lambda: _resolve_now(
            network_spec, hardware_spec, mapping_path, placer, partition_spec
        ),  # fmt: skip
    )


_resolve_cached.cache_clear = _RESOLVED.cache_clear


def _resolve_now(network_spec, hardware_spec, mapping_path, placer, partition_spec) -> Mapped:
    if mapping_path:
        mapped = build_mapping(network_spec, hardware_spec, mapping_file=mapping_path)
    else:
        mapped = build_mapping(
            network_spec, hardware_spec, partition=partition_spec, placement=placer
        )
    _frozen(mapped.mapping)
    return mapped


def _frozen(mapping: Mapping) -> Mapping:
    mapping.partition.assignment.flags.writeable = False
    mapping.placement.cores.flags.writeable = False
    return mapping


@dataclass(frozen=True, eq=False)
class Prepared:
    """A network, hardware and mapping resolved for a session, with the mapping's
    evaluator, ready to become current (``ExplorerState.prepare``, ``adopt``)."""

    mapped: Mapped
    evaluator: Evaluator
    specs: dict  # network_spec, hardware_spec, mapping_path, partition_spec, placer
    kind: str = "load"  # an upload's: "mapping" or "network"
    edit: bool = False  # a mapping of the session's network and hardware: an undoable step
    notes: tuple[str, ...] = ()  # what the user should be told beside it (not errors)
    # its evaluation, worked out with the rest in the worker thread: on a large network the
    # mapping-quality metrics take seconds, which ``adopt`` (on the page's thread, where every
    # page of the server is answered) must not spend
    evaluation: Evaluation | None = None


@dataclass(frozen=True, eq=False)
class _Loaded:
    """What was current before another network, hardware or scene's mapping was loaded: one
    undo step that brings all of it back (the user's edits below it in the history again)."""

    network: Network
    hardware: Hardware
    mapping: Mapping
    evaluator: Evaluator
    start: Mapping
    start_evaluation: Evaluation
    start_simulated_us: float | None
    specs: dict  # network_spec, hardware_spec, mapping_path, partition_spec, placer


def _kept(history: list) -> list:
    """``history`` (oldest first) cut to HISTORY_LIMIT steps and LOADS_KEPT earlier loads:
    below the oldest load kept lie the edits of a network no longer held, and they go too."""
    history = history[-HISTORY_LIMIT:]
    loads = [i for i, step in enumerate(history) if isinstance(step, _Loaded)]
    return history[loads[-LOADS_KEPT] :] if len(loads) > LOADS_KEPT else history


@dataclass(frozen=True, eq=False)
class Reference:
    """A mapping to compare with, evaluated on the network and hardware it was made for
    (``ExplorerState.prepare_reference``, ``adopt_reference``)."""

    network: Network
    hardware: Hardware
    mapping: Mapping
    evaluation: Evaluation
    label: str


class ExplorerState(param.Parameterized):
    """One session: its parts (``inputs``, ``shown``, ``search``, ``simulation``; the
    ``inspection``), and the actions that load, edit, undo and compare."""

    access = param.ClassSelector(
        class_=ClientAccess, default=ClientAccess(), instantiate=False, constant=True,
        doc="what this session may name and ask for (a server's client by default)",
    )  # fmt: skip
    gate = param.ClassSelector(
        class_=Gate, default=OPEN, instantiate=False,
        doc="this session's door to its server's admission of heavy work (OPEN: no server)",
    )  # fmt: skip
    inputs = param.ClassSelector(
        class_=Inputs, constant=True, doc="the network and hardware, their specs, the history"
    )
    shown = param.ClassSelector(
        class_=Shown, constant=True, doc="the current mapping, its evaluation, the reference"
    )
    search = param.ClassSelector(
        class_=Search, constant=True, doc="a search's results (written by explorer.runner)"
    )
    simulation = param.ClassSelector(
        class_=Simulation, constant=True,
        doc="the shown mapping's simulated step (written by explorer.step_runner)",
    )  # fmt: skip

    def __init__(self, **params):
        # the specs and the predictor a session starts with are its inputs'
        given = {k: params.pop(k) for k in (*SPECS, "predictor") if k in params}
        super().__init__(
            inputs=Inputs(**given), shown=Shown(), search=Search(), simulation=Simulation(),
            **params,
        )  # fmt: skip
        self.inspection = Inspector(self)
        # the history: an edit of the current network's mapping is its Mapping, a load is
        # _Loaded (what it replaced)
        self._undo: list[Mapping | _Loaded] = []
        self._redo: list[Mapping | _Loaded] = []
        self._start: Mapping | None = None
        self._evaluator: Evaluator | None = None

    # ------------------------------------------------------------ reading the parts
    # what nearly every view reads, as shortcuts (to watch them, watch their part)
    network = property(lambda self: self.inputs.network, doc="the network (inputs')")
    hardware = property(lambda self: self.inputs.hardware, doc="the hardware (inputs')")
    mapping = property(lambda self: self.shown.mapping, doc="the current mapping (shown's)")
    evaluation = property(lambda self: self.shown.evaluation, doc="its evaluation (shown's)")

    def watch(self, fn, **parts) -> list:
        """Call ``fn(*events)`` when a named parameter of a named part changes, e.g.
        ``watch(fn, shown=["evaluation"], search=["best_evaluation"])``; returns the
        (part, watcher) pairs that ``unwatch`` takes."""
        return [
            (getattr(self, part), getattr(self, part).param.watch(fn, list(names)))
            for part, names in parts.items()
        ]

    @staticmethod
    def unwatch(watchers: list) -> None:
        for part, watcher in watchers:
            part.param.unwatch(watcher)

    @contextlib.contextmanager
    def _together(self):
        """Change several parts at once: their watchers hear of it when every part is
        changed (a view of the new network never reads the old mapping, nor a search's
        best on the old hardware)."""
        with contextlib.ExitStack() as stack:
            for part in (self.inputs, self.shown, self.search, self.simulation):
                stack.enter_context(param.parameterized.batch_call_watchers(part))
            yield

    # ------------------------------------------------------------ loading
    @classmethod
    def from_specs(
        cls,
        network_spec: str | None = None,
        hardware_spec: str | None = None,
        mapping_path: str | None = None,
        **params,
    ) -> ExplorerState:
        """A loaded state (raises ``MeshScopeError`` if the specs do not resolve)."""
        state = cls(**params)
        state.load(network_spec, hardware_spec, mapping_path)
        return state

    @property
    def loaded(self) -> bool:
        return self.shown.evaluation is not None

    def load(self, *specs: str | None, **options) -> None:
        """Resolve and evaluate a network, hardware and mapping, then switch to them at once:
        ``prepare`` with these arguments (network, hardware and mapping file specs;
        ``partition_spec``, ``placer``), then ``adopt``."""
        self.adopt(self.prepare(*specs, **options))

    def prepare(
        self,
        network_spec: str | None = None,
        hardware_spec: str | None = None,
        mapping_path: str | None = None,
        *,
        partition_spec: str | None = None,
        placer: str | None = None,
        on_wait: Callable[[int], None] | None = None,
    ) -> Prepared:
        """What ``load`` switches to — every spec through the session's ``access`` first,
        then resolved, partitioned, placed and evaluated — without changing the state: the
        long part of a load, safe in a worker thread (``adopt`` it on the session's). The
        long part waits its turn at the server's admission (``gate``; ``on_wait(place)``
        hears its place in line)."""
        self.require_idle()
        access = self.access
        placer = access.placer(placer or self.inputs.placer)
        network_spec = network_spec and access.network(network_spec)
        hardware_spec = hardware_spec and access.hardware(hardware_spec)
        mapping_path = mapping_path and access.mapping_file(mapping_path)
        partition_spec = access.partition(partition_spec)
        needs = network_needs(network_spec, hardware_spec, access.limits)
        with self.gate.turn("work", f"loading {network_spec or mapping_path}", needs, on_wait):
            mapped = _resolve_mapped(
                network_spec and demo_path(network_spec), hardware_spec, mapping_path,
                placer=placer, partition_spec=partition_spec,
            )  # fmt: skip
            network, hardware, mapping = mapped.network, mapped.hardware, mapped.mapping
            access.check_network(network, network_spec)
            access.check_hardware(hardware, hardware_spec)
            evaluator = self._make_evaluator(network, hardware, mapping, mapped.graph)
            return Prepared(
                mapped,
                evaluator,
                {
                    "network_spec": network_spec or network.name,
                    "hardware_spec": hardware_spec or hardware.name,
                    "mapping_path": mapping_path,
                    "partition_spec": partition_spec,
                    "placer": placer,
                },
                evaluation=evaluator.evaluation(),
            )

    def adopt(self, prepared: Prepared) -> None:
        """Make what ``prepare`` (or ``prepare_upload``) made current: the new starting
        point, or, for an edit of the current mapping, an undoable step. Either way Undo
        comes back to what was current (a new network's, the network, hardware and mapping
        the user had, edits and all)."""
        self.require_idle()
        m = prepared.mapped
        if prepared.edit:
            if m.network is not self.network or m.hardware is not self.hardware:
                raise ActionError(
                    "another network or hardware was loaded while the file was read: "
                    "choose the file again"
                )
            self._commit(m.mapping, prepared.evaluator, record=True, evaluation=prepared.evaluation)
            return
        history = self._undo + [self._here()] if self.loaded else []
        with self._together():
            self._switch(m.network, m.hardware, m.mapping, evaluator=prepared.evaluator,
                         evaluation=prepared.evaluation, **prepared.specs)  # fmt: skip
            self._undo = _kept(history)
            self.inputs.can_undo = bool(self._undo)

    def _here(self) -> _Loaded:
        """The current network, hardware, mappings and specs, as one undo step."""
        return _Loaded(
            self.network, self.hardware, self.mapping, self._evaluator, self._start,
            self.shown.start_evaluation, self.simulation.start_us, self.inputs.specs(),
        )  # fmt: skip

    def _go_back(self, loaded: _Loaded, undo: list, redo: list) -> None:
        """Make ``loaded`` current again, with ``undo`` and ``redo`` as the history."""
        self.require_idle()
        loaded.evaluator.set_placement(loaded.mapping.placement)
        with self._together():
            self._switch(
                loaded.network, loaded.hardware, loaded.mapping, evaluator=loaded.evaluator,
                start=loaded.start, start_evaluation=loaded.start_evaluation, **loaded.specs,
            )  # fmt: skip
            self._undo, self._redo = _kept(undo), _kept(redo)
            self.inputs.param.update(can_undo=bool(self._undo), can_redo=bool(self._redo))
            self.simulation.started_at(loaded.start_simulated_us)

    def _switch(
        self, network, hardware, mapping, *, graph=None, evaluator=None, start=None,
        start_evaluation=None, evaluation=None, **specs,
    ) -> None:  # fmt: skip
        """Make (network, hardware, mapping) current and, unless ``start`` says another, the
        new starting point; the history starts empty. ``graph``: the mapping's partition
        graph, if there is one already (else it is built); ``evaluator``: its evaluator, if
        there is one already; ``start_evaluation``: ``start``'s evaluation; ``evaluation``:
        the mapping's, if it is known already."""
        evaluator = evaluator or self._make_evaluator(network, hardware, mapping, graph)
        evaluation = evaluation or evaluator.evaluation()
        self._evaluator = evaluator
        self._undo, self._redo, self._start = [], [], start or mapping
        with self._together():
            self.search.clear()
            self.simulation.clear()
            self.inputs.param.update(
                network=network, hardware=hardware, can_undo=False, can_redo=False, **specs
            )
            self.shown.param.update(
                mapping=mapping, evaluation=evaluation,
                start_evaluation=start_evaluation or evaluation, reference=None,
                reference_evaluation=None, reference_label="", revision=self.shown.revision + 1,
            )  # fmt: skip

    def _make_evaluator(self, network, hardware, mapping, graph=None) -> Evaluator:
        """An evaluator of ``mapping`` by the session's predictor; ``graph``: its partition's
        graph, if already built."""
        predictor = self.inputs.predictor
        if graph is None:
            return evaluator(Mapped.of(network, hardware, mapping), predictor=predictor)
        return evaluator(Mapped(network, hardware, mapping, graph), predictor=predictor)

    def set_predictor(self, name: str) -> None:
        """Time the step with predictor ``name`` (``engine.predict.predictors``): the current,
        starting and reference mappings are evaluated again (a search's results keep the
        predictor that found them, which their evaluations name)."""
        predictors[name]  # (an unknown name raises, listing the known ones)
        inputs = self.inputs
        if name == inputs.predictor:
            return
        if not self.loaded:
            inputs.predictor = name
            return
        old = inputs.predictor
        inputs.predictor = name
        try:
            ev = self._make_evaluator(self.network, self.hardware, self.mapping)
            start = self._make_evaluator(self.network, self.hardware, self._start).evaluation()
            ref = None
            if self.shown.reference is not None:
                ref = self._make_evaluator(self.network, self.hardware, self.shown.reference)
                ref = ref.evaluation()
        except Exception:
            inputs.predictor = old  # the previous state stays
            raise
        self._evaluator = ev
        self.shown.param.update(
            evaluation=ev.evaluation(), start_evaluation=start, reference_evaluation=ref,
            revision=self.shown.revision + 1,
        )  # fmt: skip

    def upload(self, filename: str, data: bytes) -> str:
        """Load an uploaded file: a mapping (.json) or a network (.npz, .hgr, NIR .nir)
        (``prepare_upload``, then ``adopt``). Returns what it was."""
        prepared = self.prepare_upload(filename, data)
        self.adopt(prepared)
        return prepared.kind

    def prepare_upload(
        self, filename: str, data: bytes, on_wait: Callable[[int], None] | None = None
    ) -> Prepared:
        """What an uploaded file switches to, without changing the state (safe in a worker
        thread, like ``prepare``; ``explorer.uploads.prepare_upload``): a mapping of the
        current network and hardware is an edit of the current mapping; a mapping for
        another network or hardware switches to them when the file names ones this session
        may load (``access``); a network file keeps the current hardware."""
        return uploads.prepare_upload(self, filename, data, on_wait)

    def prepared_from(
        self, mapped: Mapped, kind: str, *, edit: bool = False, notes=(), **specs
    ) -> Prepared:
        """``mapped`` (its mapping made read-only) with its evaluator, for ``adopt``."""
        network, hardware, mapping = mapped.network, mapped.hardware, _frozen(mapped.mapping)
        evaluator = self._make_evaluator(network, hardware, mapping, mapped.graph)
        return Prepared(mapped, evaluator, specs, kind, edit, tuple(notes), evaluator.evaluation())

    def mapping_json(self) -> str:
        """The current mapping as a MeshScope mapping file."""
        self.require_loaded()
        return json.dumps(
            mapping_to_dict(self.network, self.hardware, self.mapping, self.evaluation), indent=1
        )

    # ------------------------------------------------------------ editing
    def set_mapping(self, mapping: Mapping, *, record: bool = True) -> None:
        """Evaluate ``mapping`` on the current network and hardware and make it current."""
        self.require_loaded()
        same_partition = mapping.partition is self._evaluator.partition
        if same_partition:
            problems = mapping.placement.check(self.hardware, mapping.partition.n_parts)
            if problems:
                raise CapacityError("; ".join(problems))
            evaluator = self._evaluator
            evaluator.set_placement(mapping.placement)
        else:
            evaluator = self._make_evaluator(self.network, self.hardware, mapping)
        self._commit(mapping, evaluator, record)

    def _commit(
        self, mapping: Mapping, evaluator: Evaluator, record: bool, evaluation=None
    ) -> None:
        if record:
            self._undo = _kept(self._undo + [self.mapping])
            self._redo = []
        self._evaluator = evaluator
        evaluation = evaluation or evaluator.evaluation()
        with self._together():
            self.inputs.param.update(can_undo=bool(self._undo), can_redo=bool(self._redo))
            self.shown.param.update(
                mapping=mapping, evaluation=evaluation, revision=self.shown.revision + 1
            )

    def swap_cores(self, core_a: int, core_b: int) -> None:
        """Exchange two physical cores: a swap if both hold partitions, a move if one is empty."""
        self.require_loaded()
        n = self.hardware.n_cores
        if not (0 <= core_a < n and 0 <= core_b < n):
            raise SpecError(f"cores must lie in 0..{n - 1}")
        cores = self.mapping.placement.cores
        held = np.isin([core_a, core_b], cores)
        if not held.any():
            raise ActionError("neither core holds a partition: nothing to move")
        if core_a == core_b:
            return
        ev = self._evaluator
        ev.set_placement(self.mapping.placement)  # in step even if a view moved it
        ev.swap_cores(int(core_a), int(core_b))
        self._commit(Mapping(self.mapping.partition, ev.placement), ev, record=True)

    def undo(self) -> None:
        """Back one step: an edit of the mapping, or a load (what it replaced comes back)."""
        if self._undo:
            self._step(self._undo, self._redo, back=True)

    def redo(self) -> None:
        if self._redo:
            self._step(self._redo, self._undo, back=False)

    def _step(self, source: list, other: list, *, back: bool) -> None:
        """Take the last step of ``source`` (undo's or redo's history), leaving what is
        current on ``other``."""
        target, rest = source[-1], source[:-1]
        if isinstance(target, _Loaded):
            other = other + [self._here()]
            undo, redo = (rest, other) if back else (other, rest)
            self._go_back(target, undo, redo)
            return
        other = other + [self.mapping]
        with self._together():
            self.set_mapping(target, record=False)
            self._undo, self._redo = (rest, other) if back else (other, rest)
            self.inputs.param.update(can_undo=bool(self._undo), can_redo=bool(self._redo))

    def reset(self, placer: str) -> None:
        """Back to the starting partition, placed by ``placer`` (an undoable step)."""
        self.require_loaded()
        mapped = build_mapping(
            self.network, self.hardware, partition=self._start.partition,
            placement=self.access.placer(placer),
        )  # fmt: skip
        self.set_mapping(_frozen(mapped.mapping))

    def change_layer_cores(self, population: int, delta: int) -> None:
        """Give a population ``delta`` more (or fewer) cores; the Loihi 2 mapping ES paper's
        reordering keeps every layer's physical cores, new cores come from the unused ones."""
        self.require_loaded()
        mapping = resize_population(self.network, self.hardware, self.mapping, population, delta)
        self.set_mapping(_frozen(mapping))

    # ------------------------------------------------------------ comparing
    def set_reference(self, which: str = "start", *, filename: str = "", data: bytes = b"") -> None:
        """Compare with the starting mapping, the search's best, or an uploaded mapping
        (``prepare_reference``, then ``adopt_reference``)."""
        self.adopt_reference(self.prepare_reference(which, filename=filename, data=data))

    def prepare_reference(
        self, which: str = "start", *, filename: str = "", data: bytes = b""
    ) -> Reference:
        """The reference ``set_reference`` shows, evaluated, without changing the state
        (safe in a worker thread, like ``prepare``)."""
        self.require_loaded()
        network, hardware = self.network, self.hardware
        if which == "start":
            mapping, label = self._start, "starting mapping"
        elif which == "best":
            if self.search.best is None:
                raise ActionError("no search result yet: run the evolution first")
            mapping, label = self.best_mapping(), "best of the search"
        elif which == "file":
            name = Path(filename or "upload").name
            self.access.check_upload(name, len(data))
            with uploads.reading(name, uploads.MAPPING_FILE):
                mf = parse_mapping_dict(uploads.upload_json(name, data), name)
                mapping, label = mf.build(network, hardware), name
        else:
            raise SpecError(f"unknown reference {which!r}: start, best or file")
        evaluation = self._make_evaluator(network, hardware, mapping).evaluation()
        return Reference(network, hardware, mapping, evaluation, label)

    def adopt_reference(self, reference: Reference) -> None:
        """Show ``reference`` (``prepare_reference``) beside the current mapping."""
        if reference.network is not self.network or reference.hardware is not self.hardware:
            raise ActionError(
                "another network or hardware was loaded meanwhile: choose the reference again"
            )
        self.shown.param.update(reference=reference.mapping, reference_label=reference.label,
                                reference_evaluation=reference.evaluation)  # fmt: skip

    def change_pct(self, evaluation: Evaluation | None = None) -> float:
        """Latency change of the current mapping (or of ``evaluation``, e.g. the search's
        best) against the starting one, in percent."""
        start = self.shown.start_evaluation.latency_us
        latency = (evaluation or self.evaluation).latency_us
        return 100.0 * (latency - start) / start

    # ------------------------------------------------------------ search results
    def best_mapping(self) -> Mapping:
        return self.search.best.mapping(self.network)

    def adopt_best(self) -> None:
        """Make the mapping the search offers — the one picked on its plot, else its best —
        the current one (an undoable step)."""
        search = self.search
        if search.best is None and search.picked is None:
            raise ActionError("no search result to adopt yet")
        record = search.picked if search.picked is not None else search.best
        with self._together():
            self.set_mapping(_frozen(record.mapping(self.network)))
            search.adopted()

    def pick(self, record: Record | None) -> None:
        """Show an evaluated mapping of the search on the mesh (None: stop showing it)."""
        if record is None:
            self.search.pick(None, None)
            return
        if record.failed:
            raise ActionError("that evaluation failed: it has no mapping to show")
        mapped = self.mapped(record.mapping(self.network))
        self.search.pick(record, evaluate(mapped))

    @property
    def start_mapping(self) -> Mapping | None:
        """The mapping the session started from (loaded, or reset to)."""
        return self._start

    @property
    def edited(self) -> bool:
        """Whether the current mapping differs from the one the session started from."""
        a, b = self.mapping, self._start
        if a is None or b is None or a is b:
            return False
        return not (
            np.array_equal(a.partition.assignment, b.partition.assignment)
            and np.array_equal(a.placement.cores, b.placement.cores)
        )

    @property
    def shown_evaluation(self) -> Evaluation:
        """What the mesh shows: the search's best, from the start of a search until it is
        adopted (``best_on_mesh``), while ``follow_best``; else the current mapping."""
        search = self.search
        if search.picked_evaluation is not None:
            return search.picked_evaluation
        if search.best_on_mesh and search.follow_best and search.best_evaluation is not None:
            return search.best_evaluation
        return self.evaluation

    def shown_mapping(self) -> Mapping:
        """The mapping behind ``shown_evaluation``."""
        shown = self.shown_evaluation
        if shown is self.evaluation:
            return self.mapping
        if shown is self.search.picked_evaluation:
            return self.search.picked.mapping(self.network)
        return self.best_mapping()

    def graph_of(self, mapping: Mapping):
        """The partition graph of ``mapping``'s partition: the session's, else built."""
        return self.known_graph(mapping) or partition_graph(
            self.network, self.hardware, mapping.partition
        )

    def known_graph(self, mapping: Mapping):
        """The partition graph of ``mapping``'s partition if the session holds it already
        (it does for the current partition, whatever the placement), else None."""
        ev = self._evaluator
        return ev.graph if ev is not None and mapping.partition is ev.partition else None

    def mapped(self, mapping: Mapping | None = None) -> Mapped:
        """``mapping`` (default: the current one) as an ``engine.pipeline.Mapped``, with
        the session's partition graph when it has it (no second build of it)."""
        mapping = self.mapping if mapping is None else mapping
        return Mapped(self.network, self.hardware, mapping, self.graph_of(mapping))

    # ------------------------------------------------------------ snapshots
    def snapshot(self) -> dict:
        """What a page reload needs to come back to this mapping (and its starting one)."""
        self.require_loaded()
        return {
            **{k: getattr(self.inputs, k) for k in ("network_spec", "hardware_spec",
                                                    "partition_spec", "placer", "mapping_path")},
            "mapping": mapping_to_dict(self.network, self.hardware, self.mapping),
            "start": mapping_to_dict(self.network, self.hardware, self._start),
        }  # fmt: skip

    def restore(self, snap: dict) -> None:
        """Come back to a ``snapshot``: its mapping is current, its starting mapping the start
        (so the change in % survives); the undo history starts empty. Its specs go through
        ``access`` as a client's do (an uploaded network's name is the client's)."""
        access = self.access
        network_spec = access.network(snap["network_spec"])
        hardware_spec = access.hardware(snap["hardware_spec"])
        network = resolve_network(demo_path(network_spec))
        hardware = load_hardware(hardware_spec)
        access.check_network(network, network_spec)
        access.check_hardware(hardware, hardware_spec)
        mapping = parse_mapping_dict(snap["mapping"], "saved session").build(network, hardware)
        start = mapping
        if snap.get("start"):
            start = parse_mapping_dict(snap["start"], "saved session").build(network, hardware)
        specs = {k: snap[k] for k in ("partition_spec", "placer", "mapping_path") if k in snap}
        access.partition(specs.get("partition_spec"))  # shown, and offered to load again
        access.placer(specs.get("placer") or self.inputs.placer)
        with self._together():
            self._switch(
                network, hardware, _frozen(start),
                network_spec=snap["network_spec"], hardware_spec=snap["hardware_spec"], **specs,
            )  # fmt: skip
            if start is not mapping:
                self.set_mapping(_frozen(mapping), record=False)

    def require_loaded(self) -> None:
        if self.network is None or self.hardware is None or self.mapping is None:
            raise RuntimeError("ExplorerState has nothing loaded yet: call load() first")

    def require_idle(self) -> None:
        if self.search.running:
            raise ActionError("a search is running: stop it before loading something else")
