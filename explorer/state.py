"""ExplorerState: the one source of truth of an explorer session.

It holds the network, the hardware, the current mapping and its evaluation, and the
actions that change them: swap or move cores, undo and redo, reset to a heuristic,
change a layer's core count, load and save mapping files, compare with a reference,
and follow a background search. It imports no UI toolkit (only ``param`` and the
engine), so every action is testable without a browser; views watch its parameters.

Actions raise ``engine.errors.MeshScopeError`` on bad input and leave the state as it
was: a session never holds a mapping without its evaluation.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import tempfile
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import param

from engine.errors import (
    CapacityError,
    InputFileError,
    MeshScopeError,
    MeshScopeWarning,
    SpecError,
)
from engine.evaluate.cost import Evaluation, Evaluator
from engine.evaluate.flows import (
    FlowTable,
    core_flows,
    flows_through,
    layer_link_messages,
    link_label,
    route_links,
)
from engine.hardware import Hardware, load_hardware
from engine.mapping.assignment import Mapping, mapping_to_dict, parse_mapping_dict
from engine.mapping.partition_graph import partition_graph
from engine.mapping.resources import limits
from engine.memo import SharedCache
from engine.model.network import Network
from engine.pipeline import (
    Mapped,
    build_mapping,
    evaluate,
    evaluator,
    resolve_network,
)
from engine.predict import DEFAULT_PREDICTOR, predictors
from engine.search import Record, resize_population
from engine.specs import DEFAULT_HARDWARE, DEFAULT_NETWORK, DEFAULT_PLACER, demo_path
from explorer.access import ClientAccess
from explorer.admission import OPEN, STEP_BYTES, Gate, network_needs

__all__ = [
    "DEFAULT_NETWORK",
    "DEFAULT_HARDWARE",
    "DEFAULT_PLACER",
    "ActionError",
    "ExplorerState",
    "Inspection",
    "Prepared",
    "Reference",
    "resolve",
    "upload_json",
]

HISTORY_LIMIT = 200  # undo steps kept per session
LOADS_KEPT = 3  # networks and hardware loaded before the current one that Undo can go back to


class ActionError(MeshScopeError):
    """An action the session cannot take now (a search runs, nothing to adopt …)."""


@dataclass(frozen=True)
class Inspection:
    """What a click on a link or a core of the shown mapping explains.

    ``tables``: (caption, flows) pairs, heaviest flows first; ``routes`` the link ids of
    each table's flows, row by row (``route_links``), to highlight on the mesh; ``facts``
    label → value lines (the link's load, the core's terms and memory against its limits).
    """

    kind: str  # "link" or "core"
    target: int  # link id or core id
    title: str
    facts: dict
    tables: list
    routes: list  # per table, per row: np.ndarray of link ids
    layer_names: tuple = ()  # the network's population names (FlowTable.src_pop/dst_pop)

    def route_ids(self, table: int | None = None, rows=None) -> np.ndarray:
        """The links of the chosen rows (default every row) of one table (default all)."""
        chosen = []
        for t, per_row in enumerate(self.routes):
            if table is not None and t != table:
                continue
            picked = per_row if rows is None else [per_row[r] for r in rows if r < len(per_row)]
            chosen.extend(picked)
        return np.unique(np.concatenate(chosen)) if chosen else np.zeros(0, dtype=np.int64)


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


def _read_network(path: Path, access: ClientAccess) -> Network:
    """The network of an uploaded file, read within the client's limits: the sizes its
    header declares are checked before anything that large is allocated, and a NIR graph is
    expanded only as far as the client may go."""
    limits = access.limits.reading()
    if path.suffix.lower() == ".nir":
        from engine.io.nir_graph import read_nir

        return read_nir(path, max_synapses=access.limits.synapses, limits=limits)
    return resolve_network(str(path), limits=limits)


MAPPING_FILE = "a JSON mapping file (as Save mapping or meshscope map --out writes it)"
NETWORK_FILE = (
    "a network file (.npz as meshscope convert writes it, hMETIS .hgr, NIR .nir exported by "
    "your SNN library)"
)


@contextlib.contextmanager
def _reading(name: str, what: str, temp: Path | None = None):
    """Whatever goes wrong reading an uploaded file is an error naming it as the user
    knows it, ``name``: a reader's own ``MeshScopeError`` with the server's temporary copy
    ``temp`` renamed so; any other failure an ``InputFileError`` saying it is not ``what``
    (never a library's own words, which speak of Python, not of the file)."""
    try:
        yield
    except MeshScopeError as e:
        if temp is not None:
            e.args = (_as_uploaded(str(e), temp, name),)
        raise
    except (RecursionError, MemoryError):
        raise InputFileError(
            f"{name} could not be read: it nests too deep, or declares sizes too large, to be "
            f"{what}"
        ) from None
    except Exception:  # noqa: BLE001 - any library's failure on a client's bytes
        raise InputFileError(f"{name} could not be read: it is damaged, or not {what}") from None


def _as_uploaded(text: str, temp: Path, name: str) -> str:
    """``text`` with the server's temporary copy of an upload called ``name``, and no
    other mention of the temporary folder."""
    for form in dict.fromkeys([str(temp), os.path.realpath(temp)]):
        text = text.replace(form, name)
    for folder in dict.fromkeys([str(temp.parent), os.path.realpath(temp.parent)]):
        text = text.replace(folder + os.sep, "").replace(folder, "the upload")
    return text


def upload_json(name: str, data: bytes, what: str = MAPPING_FILE):
    """The JSON document of an uploaded file called ``name``; an ``InputFileError``
    saying, in the user's words, why it is not ``what``."""
    try:
        return json.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise InputFileError(
            f"{name} is not {what}: it is not text (not UTF-8); choose the .json file"
        ) from None
    except json.JSONDecodeError as e:
        raise InputFileError(
            f"{name} is not {what}: its JSON breaks at line {e.lineno}, column {e.colno} "
            f"({e.msg.lower()})"
        ) from None
    except RecursionError:
        raise InputFileError(f"{name} is not {what}: its JSON nests far too deep") from None


class ExplorerState(param.Parameterized):
    """One session's network, hardware, mapping, evaluation, history and search."""

    access = param.ClassSelector(
        class_=ClientAccess, default=ClientAccess(), instantiate=False, constant=True,
        doc="what this session may name and ask for (a server's client by default)",
    )  # fmt: skip
    gate = param.ClassSelector(
        class_=Gate, default=OPEN, instantiate=False,
        doc="this session's door to its server's admission of heavy work (OPEN: no server)",
    )  # fmt: skip
    network_spec = param.String(default=DEFAULT_NETWORK, doc="what the user typed for the network")
    hardware_spec = param.String(default=DEFAULT_HARDWARE, doc="… and for the hardware")
    partition_spec = param.String(default=None, allow_None=True, doc="None: the network's default")
    mapping_path = param.String(default=None, allow_None=True, doc="mapping file, if any")
    placer = param.String(default=DEFAULT_PLACER, doc="placer used when no mapping file is given")
    predictor = param.Selector(
        objects=list(predictors), default=DEFAULT_PREDICTOR,
        doc="what times the step on the cards and in the searches (engine.predict; set it "
        "with set_predictor)",
    )  # fmt: skip

    network = param.ClassSelector(class_=Network, default=None, allow_None=True)
    hardware = param.ClassSelector(class_=Hardware, default=None, allow_None=True)
    mapping = param.ClassSelector(class_=Mapping, default=None, allow_None=True)
    evaluation = param.ClassSelector(class_=Evaluation, default=None, allow_None=True)

    start_evaluation = param.ClassSelector(
        class_=Evaluation, default=None, allow_None=True, doc="the mapping the session started from"
    )
    reference = param.ClassSelector(class_=Mapping, default=None, allow_None=True)
    reference_evaluation = param.ClassSelector(class_=Evaluation, default=None, allow_None=True)
    reference_label = param.String(default="")

    can_undo = param.Boolean(default=False)
    can_redo = param.Boolean(default=False)
    revision = param.Integer(default=0, doc="counts every change of the current mapping")

    # search (written by explorer.runner; read by the views)
    search_running = param.Boolean(default=False)
    search_status = param.String(default="")
    search_error = param.String(default="", doc="why the last search failed ('' if it did not)")
    search_trace = param.List(default=[], doc="(evaluations, best fitness) after each evaluation")
    search_points = param.List(
        default=[], item_type=Record, doc="the engine's Record of every successful evaluation"
    )
    search_best = param.ClassSelector(
        class_=Record, default=None, allow_None=True, doc="best Record so far"
    )
    search_best_evaluation = param.ClassSelector(class_=Evaluation, default=None, allow_None=True)
    follow_best = param.Boolean(
        default=True, doc="show the search's best on the mesh (while it runs and after)"
    )
    # the simulated step of what the mesh shows (written by explorer.step_runner)
    simulated = param.Parameter(
        default=None, doc="engine.simulate.StepResult of simulated_of's mapping, or None"
    )
    simulated_of = param.ClassSelector(
        class_=Evaluation, default=None, allow_None=True,
        doc="the evaluation whose mapping `simulated` is (stale when not the shown one)",
    )  # fmt: skip
    simulating = param.Boolean(default=False, doc="a simulation of the shown mapping is running")
    simulating_cycles = param.Integer(
        default=0, doc="cycles the running simulation has reached (for a long step's card)"
    )
    simulated_error = param.String(default="", doc="why the shown mapping was not simulated")
    simulating_place = param.Integer(
        default=0, doc="the simulation's place in the server's line (0: not waiting)"
    )
    start_simulated_us = param.Number(
        default=None, allow_None=True, doc="the starting mapping's simulated step (µs)"
    )
    picked = param.ClassSelector(
        class_=Record, default=None, allow_None=True,
        doc="an evaluated mapping picked on the Evolution tab's plot, shown on the mesh",
    )  # fmt: skip
    picked_evaluation = param.ClassSelector(class_=Evaluation, default=None, allow_None=True)
    best_on_mesh = param.Boolean(
        default=False,
        doc="a search's best is on offer: shown (with follow_best) from its start until it is "
        "adopted or another network or hardware is loaded",
    )

    def __init__(self, **params):
        super().__init__(**params)
        # the history: an edit of the current network's mapping is its Mapping, a load is
        # _Loaded (what it replaced)
        self._undo: list[Mapping | _Loaded] = []
        self._redo: list[Mapping | _Loaded] = []
        self._start: Mapping | None = None
        self._evaluator: Evaluator | None = None

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
        return self.evaluation is not None

    def load(
        self,
        network_spec: str | None = None,
        hardware_spec: str | None = None,
        mapping_path: str | None = None,
        *,
        partition_spec: str | None = None,
        placer: str | None = None,
    ) -> None:
        """Resolve and evaluate a network, hardware and mapping, then switch to them at once
        (``prepare``, then ``adopt``)."""
        self.adopt(
            self.prepare(
                network_spec, hardware_spec, mapping_path,
                partition_spec=partition_spec, placer=placer,
            )
        )  # fmt: skip

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
        self._require_idle()
        access = self.access
        placer = access.placer(placer or self.placer)
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
        self._require_idle()
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
        self._switch(m.network, m.hardware, m.mapping, evaluator=prepared.evaluator,
                     evaluation=prepared.evaluation, **prepared.specs)  # fmt: skip
        self._undo = _kept(history)
        self.param.update(can_undo=bool(self._undo))

    def _here(self) -> _Loaded:
        """The current network, hardware, mappings and specs, as one undo step."""
        return _Loaded(
            self.network, self.hardware, self.mapping, self._evaluator, self._start,
            self.start_evaluation, self.start_simulated_us,
            {k: getattr(self, k) for k in ("network_spec", "hardware_spec", "mapping_path",
                                           "partition_spec", "placer")},
        )  # fmt: skip

    def _go_back(self, loaded: _Loaded, undo: list, redo: list) -> None:
        """Make ``loaded`` current again, with ``undo`` and ``redo`` as the history."""
        self._require_idle()
        loaded.evaluator.set_placement(loaded.mapping.placement)
        self._switch(
            loaded.network, loaded.hardware, loaded.mapping, evaluator=loaded.evaluator,
            start=loaded.start, start_evaluation=loaded.start_evaluation, **loaded.specs,
        )  # fmt: skip
        self._undo, self._redo = _kept(undo), _kept(redo)
        self.param.update(can_undo=bool(self._undo), can_redo=bool(self._redo),
                          start_simulated_us=loaded.start_simulated_us)  # fmt: skip

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
        self.param.update(
            network=network,
            hardware=hardware,
            mapping=mapping,
            evaluation=evaluation,
            start_evaluation=start_evaluation or evaluation,
            reference=None,
            reference_evaluation=None,
            reference_label="",
            can_undo=False,
            can_redo=False,
            revision=self.revision + 1,
            search_trace=[],
            search_points=[],
            search_best=None,
            search_best_evaluation=None,
            search_status="",
            search_error="",
            best_on_mesh=False,
            picked=None,
            picked_evaluation=None,
            simulated=None,
            simulated_of=None,
            simulated_error="",
            start_simulated_us=None,
            **specs,
        )

    def _make_evaluator(self, network, hardware, mapping, graph=None) -> Evaluator:
        """An evaluator of ``mapping`` by the session's predictor; ``graph``: its partition's
        graph, if already built."""
        if graph is None:
            return evaluator(Mapped.of(network, hardware, mapping), predictor=self.predictor)
        return evaluator(Mapped(network, hardware, mapping, graph), predictor=self.predictor)

    def set_predictor(self, name: str) -> None:
        """Time the step with predictor ``name`` (``engine.predict.predictors``): the current,
        starting and reference mappings are evaluated again (a search's results keep the
        predictor that found them, which their evaluations name)."""
        predictors[name]  # (an unknown name raises, listing the known ones)
        if name == self.predictor:
            return
        if not self.loaded:
            self.predictor = name
            return
        old = self.predictor
        self.predictor = name
        try:
            ev = self._make_evaluator(self.network, self.hardware, self.mapping)
            start = self._make_evaluator(self.network, self.hardware, self._start).evaluation()
            ref = None
            if self.reference is not None:
                ref = self._make_evaluator(self.network, self.hardware, self.reference)
                ref = ref.evaluation()
        except Exception:
            self.predictor = old  # the previous state stays
            raise
        self._evaluator = ev
        self.param.update(evaluation=ev.evaluation(), start_evaluation=start,
                          reference_evaluation=ref, revision=self.revision + 1)  # fmt: skip

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
        thread, like ``prepare``): a mapping of the current network and hardware is an
        edit of the current mapping; a mapping for another network or hardware switches
        to them when the file names ones this session may load (``access``); a network
        file keeps the current hardware. Whatever is wrong with the file is an error
        naming it as the user does. Building waits its turn as ``prepare``'s does."""
        self._require_idle()
        name = Path(filename or "upload").name
        suffix = Path(name).suffix.lower()
        access = self.access
        access.check_upload(name, len(data))
        network, hardware = self.network, self.hardware
        if suffix == ".json":
            with _reading(name, MAPPING_FILE):
                mf = parse_mapping_dict(upload_json(name, data), name)
            same = (
                network is not None
                and mf.network_fingerprint == network.fingerprint
                and mf.hardware_fingerprint == hardware.fingerprint
            )
            if same:
                with (
                    self.gate.turn("work", f"reading {name}", STEP_BYTES, on_wait),
                    _reading(name, MAPPING_FILE),
                ):
                    mapped = build_mapping(network, hardware, mapping_file=mf)
                named = (mf.network_name, mf.hardware_name)
                notes = () if named == (network.name, hardware.name) else (
                    f"{name} names {mf.network_name} on {mf.hardware_name}, but it is a mapping "
                    f"of {network.name} on {hardware.name} (the file's fingerprints say so): "
                    "applied to them",
                )  # fmt: skip
                return self._prepared(mapped, "mapping", edit=True, notes=notes)
            access.network(mf.network_name)  # the names inside the file are a client's too
            access.hardware(mf.hardware_name)
            needs = network_needs(mf.network_name, mf.hardware_name, access.limits)
            with (
                self.gate.turn("work", f"reading {name}", needs, on_wait),
                _reading(name, MAPPING_FILE),  # a demo's name: the shipped file (demo_path)
            ):
                mapped = build_mapping(demo_path(mf.network_name), mapping_file=mf)
            access.check_network(mapped.network)
            access.check_hardware(mapped.hardware)
            note = (
                f"{name} is a mapping of {mf.network_name} on {mf.hardware_name}: they are "
                f"loaded with it, in place of {network.name} on {hardware.name}"
                if network is not None
                else ""
            )
            return self._prepared(
                mapped, "mapping", network_spec=mf.network_name,
                hardware_spec=mf.hardware_name, mapping_path=name, notes=(note,) if note else (),
            )  # fmt: skip
        if suffix in (".npz", ".hgr", ".nir"):  # its sizes: known once read (the limits')
            needs = network_needs(None, hardware.name if hardware else None, access.limits)
            with self.gate.turn("work", f"reading {name}", needs, on_wait):
                return self._prepare_network_file(name, data, hardware)
        raise InputFileError(
            f"{name}: MeshScope reads mapping files (.json) and networks (.npz, hMETIS .hgr, "
            "NIR .nir)"
        )

    def _prepare_network_file(self, name: str, data: bytes, hardware) -> Prepared:
        """``prepare_upload`` of a network file: read, checked, placed on ``hardware``."""
        access = self.access
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / name  # (its name: a network's name defaults to it)
            with (
                _reading(name, NETWORK_FILE, temp=path),
                warnings.catch_warnings(record=True) as said,
            ):
                warnings.simplefilter("always", MeshScopeWarning)
                path.write_bytes(data)
                network = _read_network(path, access)
            notes = tuple(  # a reader's warnings (nir's own type check failed …)
                _as_uploaded(" ".join(str(w.message).split()), path, name)
                for w in said
                if issubclass(w.category, MeshScopeWarning)
            )
        access.check_network(network)
        hardware = hardware or load_hardware(DEFAULT_HARDWARE)
        mapped = build_mapping(network, hardware, placement=access.placer(self.placer))
        return self._prepared(
            mapped, "network", network_spec=network.name, hardware_spec=hardware.name,
            mapping_path=None, notes=notes,
        )  # fmt: skip

    def _prepared(
        self, mapped: Mapped, kind: str, *, edit: bool = False, notes=(), **specs
    ) -> Prepared:
        """``mapped`` (its mapping made read-only) with its evaluator, for ``adopt``."""
        network, hardware, mapping = mapped.network, mapped.hardware, _frozen(mapped.mapping)
        evaluator = self._make_evaluator(network, hardware, mapping, mapped.graph)
        return Prepared(mapped, evaluator, specs, kind, edit, tuple(notes), evaluator.evaluation())

    def mapping_json(self) -> str:
        """The current mapping as a MeshScope mapping file."""
        self._require_loaded()
        return json.dumps(
            mapping_to_dict(self.network, self.hardware, self.mapping, self.evaluation), indent=1
        )

    # ------------------------------------------------------------ editing
    def set_mapping(self, mapping: Mapping, *, record: bool = True) -> None:
        """Evaluate ``mapping`` on the current network and hardware and make it current."""
        self._require_loaded()
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
        self.param.update(
            mapping=mapping,
            evaluation=evaluation or evaluator.evaluation(),
            can_undo=bool(self._undo),
            can_redo=bool(self._redo),
            revision=self.revision + 1,
        )

    def swap_cores(self, core_a: int, core_b: int) -> None:
        """Exchange two physical cores: a swap if both hold partitions, a move if one is empty."""
        self._require_loaded()
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
        self.set_mapping(target, record=False)
        self._undo, self._redo = (rest, other) if back else (other, rest)
        self.param.update(can_undo=bool(self._undo), can_redo=bool(self._redo))

    def reset(self, placer: str) -> None:
        """Back to the starting partition, placed by ``placer`` (an undoable step)."""
        self._require_loaded()
        mapped = build_mapping(
            self.network, self.hardware, partition=self._start.partition,
            placement=self.access.placer(placer),
        )  # fmt: skip
        self.set_mapping(_frozen(mapped.mapping))

    def change_layer_cores(self, population: int, delta: int) -> None:
        """Give a population ``delta`` more (or fewer) cores; the Loihi 2 mapping ES paper's
        reordering keeps every layer's physical cores, new cores come from the unused ones."""
        self._require_loaded()
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
        self._require_loaded()
        network, hardware = self.network, self.hardware
        if which == "start":
            mapping, label = self._start, "starting mapping"
        elif which == "best":
            if self.search_best is None:
                raise ActionError("no search result yet: run the evolution first")
            mapping, label = self.best_mapping(), "best of the search"
        elif which == "file":
            name = Path(filename or "upload").name
            self.access.check_upload(name, len(data))
            with _reading(name, MAPPING_FILE):
                mf = parse_mapping_dict(upload_json(name, data), name)
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
        self.param.update(reference=reference.mapping, reference_label=reference.label,
                          reference_evaluation=reference.evaluation)  # fmt: skip

    def change_pct(self, evaluation: Evaluation | None = None) -> float:
        """Latency change of the current mapping (or of ``evaluation``, e.g. the search's
        best) against the starting one, in percent."""
        start = self.start_evaluation.latency_us
        latency = (evaluation or self.evaluation).latency_us
        return 100.0 * (latency - start) / start

    # ------------------------------------------------------------ search results
    def best_mapping(self) -> Mapping:
        return self.search_best.mapping(self.network)

    def adopt_best(self) -> None:
        """Make the mapping the search offers — the one picked on its plot, else its best —
        the current one (an undoable step)."""
        if self.search_best is None and self.picked is None:
            raise ActionError("no search result to adopt yet")
        record = self.picked if self.picked is not None else self.search_best
        with param.parameterized.batch_call_watchers(self):
            self.set_mapping(_frozen(record.mapping(self.network)))
            self.param.update(best_on_mesh=False, picked=None, picked_evaluation=None)

    def pick(self, record: Record | None) -> None:
        """Show an evaluated mapping of the search on the mesh (None: stop showing it)."""
        if record is None:
            self.param.update(picked=None, picked_evaluation=None)
            return
        if record.failed:
            raise ActionError("that evaluation failed: it has no mapping to show")
        mapped = self.mapped(record.mapping(self.network))
        self.param.update(picked=record, picked_evaluation=evaluate(mapped))

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
        if self.picked_evaluation is not None:
            return self.picked_evaluation
        if self.best_on_mesh and self.follow_best and self.search_best_evaluation is not None:
            return self.search_best_evaluation
        return self.evaluation

    # ------------------------------------------------------------ inspecting
    def shown_mapping(self) -> Mapping:
        """The mapping behind ``shown_evaluation``."""
        shown = self.shown_evaluation
        if shown is self.evaluation:
            return self.mapping
        if shown is self.picked_evaluation:
            return self.picked.mapping(self.network)
        return self.best_mapping()

    def _shown_graph(self, mapping: Mapping):
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
        return Mapped(self.network, self.hardware, mapping, self._shown_graph(mapping))

    def layer_evaluation(self, layers) -> Evaluation:
        """The shown evaluation with its link loads narrowed to the flows that leave the
        populations ``layers`` (everything else — latency, terms, the bottleneck — as is)."""
        self._require_loaded()
        ev, hw = self.shown_evaluation, self.hardware
        mapping = self.shown_mapping()
        graph = self._shown_graph(mapping)
        messages = layer_link_messages(hw, graph, mapping.placement.cores, layers)
        existing = hw.link_table["kind"] >= 0
        return dataclasses.replace(
            ev,
            link_messages=messages,
            link_us=messages * hw.link_table["us_per_message"],
            max_link_messages=float(messages[existing].max()) if existing.any() else 0.0,
        )

    def _routes(self, table: FlowTable) -> list:
        return [
            route_links(self.hardware, int(s), int(d), int(o))
            for s, d, o in zip(
                table.src_core.tolist(), table.dst_core.tolist(), table.route.tolist(), strict=True
            )  # fmt: skip
        ]

    def inspect_link(self, link: int) -> Inspection:
        """Why a link of the shown mapping is loaded: every flow that crosses it."""
        self._require_loaded()
        hw, ev = self.hardware, self.shown_evaluation
        if not (0 <= link < hw.n_link_ids) or hw.link_table["kind"][link] < 0:
            raise SpecError(f"link {link} does not exist on {hw.name}")
        mapping = self.shown_mapping()
        graph = self._shown_graph(mapping)
        table = flows_through(hw, graph, mapping.placement.cores, link)
        label = link_label(hw, link)
        facts = {
            "messages / step": f"{ev.link_messages[link]:,.1f}",
            "busy": f"{ev.link_utilization[link]:.1%} of the step",
            "flows": f"{len(table):,}",
        }
        return Inspection("link", int(link), f"Link {label}", facts, [("flows", table)],
                          [self._routes(table)], self.network.population_names)  # fmt: skip

    def inspect_core(self, core: int) -> Inspection:
        """A core of the shown mapping: its partition's terms, memory against the limits, and
        the flows that leave and reach it."""
        self._require_loaded()
        hw, ev, net = self.hardware, self.shown_evaluation, self.network
        if not 0 <= core < hw.n_cores:
            raise SpecError(f"cores lie in 0..{hw.n_cores - 1}")
        mapping = self.shown_mapping()
        graph = self._shown_graph(mapping)
        cores = mapping.placement.cores
        held = np.flatnonzero(cores == core)
        address = "(chip {}, x {}, y {}, slot {})".format(*hw.core_address(core))
        if held.size == 0:
            return Inspection("core", int(core), f"Core {core} {address}: empty", {}, [], [])
        part = int(held[0])
        facts = {
            "partition": f"{part} of {net.population_names[graph.population[part]]}",
            **{f"{k} term": f"{ev.core_terms_us[k][part]:.3f} µs" for k in ev.core_terms_us},
        }
        use = graph.core_use
        for limit in limits(hw):
            value = getattr(use, limit.field)[part]
            facts[limit.what] = f"{value:,.0f} of {limit.bound:,} ({value / limit.bound:.0%})"
        out, inbound = core_flows(hw, graph, cores, core)
        tables = [("outbound flows", out), ("inbound flows", inbound)]
        routes = [self._routes(t) for _, t in tables]
        return Inspection("core", int(core), f"Core {core} {address}", facts, tables, routes,
                          net.population_names)  # fmt: skip

    # ------------------------------------------------------------ snapshots
    def snapshot(self) -> dict:
        """What a page reload needs to come back to this mapping (and its starting one)."""
        self._require_loaded()
        return {
            "network_spec": self.network_spec,
            "hardware_spec": self.hardware_spec,
            "partition_spec": self.partition_spec,
            "placer": self.placer,
            "mapping_path": self.mapping_path,
            "mapping": mapping_to_dict(self.network, self.hardware, self.mapping),
            "start": mapping_to_dict(self.network, self.hardware, self._start),
        }

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
        access.placer(specs.get("placer") or self.placer)
        self._switch(
            network, hardware, _frozen(start),
            network_spec=snap["network_spec"], hardware_spec=snap["hardware_spec"], **specs,
        )  # fmt: skip
        if start is not mapping:
            self.set_mapping(_frozen(mapping), record=False)

    def _require_loaded(self) -> None:
        if self.network is None or self.hardware is None or self.mapping is None:
            raise RuntimeError("ExplorerState has nothing loaded yet: call load() first")

    def _require_idle(self) -> None:
        if self.search_running:
            raise ActionError("a search is running: stop it before loading something else")
