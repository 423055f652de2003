"""MeshScope from Python: the small, stable facade that ``import engine`` offers.

Everything here is a thin layer over the engine's own modules — ``engine.model.network`` and
``engine.model.projection`` hold a network, ``engine.specs`` and ``engine.hardware`` resolve the
names users type, ``engine.pipeline`` partitions, places and evaluates, ``engine.simulate``
runs the cycle-level simulator, ``engine.evaluation.flows`` explains a hot link, ``engine.search``
runs the nested evolutionary strategy — so a mapping built here is the mapping the command line
and the explorer build. Options are keyword-only; every error is one of ``engine.errors``
(catch ``MeshScopeError``), its message saying what is wrong and what to do::

    import numpy as np, engine
    net = engine.network_from_arrays(
        [engine.Population("in", 64, rate=0.3, spike_source=True), engine.Population("out", 32)],
        [("in", "out", (np.arange(64), np.arange(64) % 32))],
    )
    mapped = engine.build_mapping(net, "mesh:4x4", partition="min", placement="spread-col")
    print(engine.evaluate(mapped).latency_us)

Heavy modules (numba, scipy, the simulator) are imported when a function first needs them,
so ``import engine`` stays fast. docs/api.md has an example of every public name.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from engine._api_names import API_NAMES
from engine.errors import Cancelled, InvalidHardwareError, InvalidNetworkError, SpecError

if TYPE_CHECKING:  # the real imports are deferred to the functions that use them
    from engine.evaluation.cost import Evaluation
    from engine.hardware import Hardware
    from engine.model.network import Network
    from engine.pipeline import Mapped
    from engine.search.record import Event
    from engine.simulate import StepResult, SweepResult, SyntheticResult

__all__ = list(API_NAMES)  # engine/_api_names.py: engine/__init__.py lists them too


# ------------------------------------------------------------------ networks from arrays
@dataclass(frozen=True)
class Population:
    """A population (a layer) of ``size`` neurons for ``network_from_arrays``.

    ``rate``: each neuron's probability of spiking per time step, in [0, 1] — one number
    for all, or an array of ``size``. ``spike_source``: an input population, whose spikes
    enter the mesh at the hardware's input port (it runs on no core and receives no
    synapses). ``shape``: the neurons' shape, e.g. a feature map's ``(C, H, W)`` (default
    ``(size,)``; a convolution's populations take theirs from it when not given).
    """

    name: str
    size: int
    rate: float | Sequence[float] | np.ndarray = 0.1
    spike_source: bool = False
    shape: tuple[int, ...] | None = None


@dataclass(frozen=True)
class Convolution:
    """A 2-d convolution between two populations as kernel and geometry (never expanded
    synapse by synapse): ``weight`` is ``(C_out, C_in / groups, KH, KW)`` and ``in_shape``
    the input's ``(C, H, W)``; the output shape follows from stride, padding and dilation.
    A synapse exists per nonzero weight and output position whose input lies inside the
    input (``engine.model.projection.ConvProjection``)."""

    weight: np.ndarray
    in_shape: tuple[int, int, int]
    stride: tuple[int, int] | int = 1
    padding: tuple[int, int] | int = 0
    dilation: tuple[int, int] | int = 1
    groups: int = 1

    @property
    def out_shape(self) -> tuple[int, int, int]:
        """``(C_out, H_out, W_out)``, as PyTorch's ``Conv2d`` computes it."""
        w = np.asarray(self.weight)
        if w.ndim != 4 or len(self.in_shape) != 3:
            raise InvalidNetworkError(
                f"a convolution's weight must be (C_out, C_in/groups, KH, KW) and its in_shape "
                f"(C, H, W); got {w.shape} and {tuple(self.in_shape)}"
            )
        s, p, d = (_pair(v) for v in (self.stride, self.padding, self.dilation))
        h, wd = self.in_shape[1], self.in_shape[2]
        out = [
            (n + 2 * p[i] - d[i] * (w.shape[2 + i] - 1) - 1) // s[i] + 1
            for i, n in enumerate((h, wd))
        ]
        return int(w.shape[0]), int(out[0]), int(out[1])


def _pair(v) -> tuple[int, int]:
    return (int(v), int(v)) if np.isscalar(v) else (int(v[0]), int(v[1]))


_Connection = tuple  # (pre name, post name, (pre, post[, weights]) | matrix | Convolution)


def network_from_arrays(
    populations: Sequence[Population],
    connections: Sequence[_Connection] = (),
    *,
    name: str = "network",
    weight_bits: int = 8,
    description: str = "",
) -> Network:
    """A ``Network`` built from arrays in memory (no file is read or written).

    ``populations``: the ``Population`` s in order (neuron ids follow it). ``connections``:
    ``(pre, post, synapses)`` triples naming two populations, ``synapses`` being one of

    - ``(pre_index, post_index)`` or ``(pre_index, post_index, weights)``: arrays of the
      same length, indices local to each population (a pair given twice is one synapse);
    - a matrix of shape ``(pre size, post size)`` — a scipy sparse matrix or a dense
      numpy array — whose nonzero entries are the synapses and their weights;
    - a ``Convolution`` (kept structured: kernel and geometry).

    One entry per population pair. ``weight_bits``: the synaptic weight precision of every
    population. Raises ``InvalidNetworkError`` (a ``MeshScopeError``) naming what is wrong.
    """
    from engine.model.network import Network
    from engine.model.projection import ConvProjection

    pops = list(populations)
    if not pops or not all(isinstance(p, Population) for p in pops):
        raise InvalidNetworkError("give the populations as a non-empty list of Population")
    index = {}
    for k, p in enumerate(pops):
        if p.name in index:
            raise InvalidNetworkError(f"population {p.name!r} is given twice; names are unique")
        if int(p.size) < 1:
            raise InvalidNetworkError(f"population {p.name!r} has {p.size} neurons; at least 1")
        index[p.name] = k
    sizes = np.array([int(p.size) for p in pops], dtype=np.int64)
    starts = np.concatenate([[0], np.cumsum(sizes)])
    shapes: list[tuple[int, ...] | None] = [
        None if p.shape is None else tuple(int(v) for v in p.shape) for p in pops
    ]
    src, dst, wts, convs, seen = [], [], [], [], set()
    any_weights = False
    for c in connections:
        if not isinstance(c, tuple) or len(c) != 3:
            raise InvalidNetworkError(
                "each connection is a (pre, post, synapses) triple; got " + repr(type(c).__name__)
            )
        pre, post, syn = c
        for end in (pre, post):
            if end not in index:
                raise InvalidNetworkError(
                    f"connection {pre!r} -> {post!r}: no population {end!r}; "
                    f"the populations are {', '.join(index)}"
                )
        a, b = index[pre], index[post]
        if (a, b) in seen:
            raise InvalidNetworkError(f"connection {pre!r} -> {post!r} is given twice")
        seen.add((a, b))
        where = f"connection {pre!r} -> {post!r}"
        if isinstance(syn, Convolution):
            out = syn.out_shape
            for k, want in ((a, tuple(syn.in_shape)), (b, out)):
                if shapes[k] is None:
                    shapes[k] = want
            convs.append(
                ConvProjection(
                    a, b, tuple(syn.in_shape), out, syn.weight, _pair(syn.stride),
                    _pair(syn.padding), _pair(syn.dilation), int(syn.groups),
                )
            )  # fmt: skip
            continue
        i, j, w = _synapses(syn, int(sizes[a]), int(sizes[b]), where)
        any_weights |= w is not None
        src.append(i + starts[a])
        dst.append(j + starts[b])
        wts.append(w)
    n = int(starts[-1])
    src_all = np.concatenate(src) if src else np.zeros(0, dtype=np.int64)
    dst_all = np.concatenate(dst) if dst else np.zeros(0, dtype=np.int64)
    weights = None
    if any_weights:
        weights = np.concatenate(
            [np.ones(s.size, np.float32) if w is None else w for s, w in zip(src, wts, strict=True)]
        )
    order = np.lexsort((dst_all, src_all))
    indptr = np.concatenate([[0], np.cumsum(np.bincount(src_all, minlength=n))])
    rate = np.concatenate([_rates(p) for p in pops])
    if any(s is not None for s in shapes):
        shapes = [s or (int(p.size),) for s, p in zip(shapes, pops, strict=True)]
    else:
        shapes = None
    return Network(
        name=name,
        indptr=indptr,
        indices=dst_all[order],
        population=np.repeat(np.arange(len(pops)), sizes),
        population_names=tuple(p.name for p in pops),
        rate=rate,
        weights=None if weights is None else weights[order],
        weight_bits=(int(weight_bits),) * len(pops),
        spike_source=tuple(bool(p.spike_source) for p in pops),
        shapes=None if shapes is None else tuple(shapes),
        projections=tuple(convs),
        description=description or f"built from arrays: {len(pops)} populations",
    )


def _rates(p: Population) -> np.ndarray:
    r = np.asarray(p.rate, dtype=np.float64)
    if r.ndim == 0:
        return np.full(int(p.size), float(r))
    if r.shape != (int(p.size),):
        raise InvalidNetworkError(
            f"population {p.name!r}: {r.size} rates for {p.size} neurons; give one number or "
            "one rate per neuron"
        )
    return r


def _synapses(syn, n_pre: int, n_post: int, where: str):
    """(pre, post, weights or None) of one connection's synapses, checked and deduplicated."""
    if isinstance(syn, tuple) and len(syn) in (2, 3):
        i, j = (np.asarray(v) for v in syn[:2])
        w = None if len(syn) == 2 else np.asarray(syn[2], dtype=np.float32)
        if i.ndim != 1 or i.shape != j.shape or (w is not None and w.shape != i.shape):
            raise InvalidNetworkError(
                f"{where}: pre, post (and weights) must be 1-d arrays of one length"
            )
        for what, v in (("pre", i), ("post", j)):
            if v.size and not np.issubdtype(v.dtype, np.integer):
                raise InvalidNetworkError(f"{where}: {what} indices must be integers")
        i, j = i.astype(np.int64), j.astype(np.int64)
    else:
        import scipy.sparse as sp

        if not (sp.issparse(syn) or isinstance(syn, np.ndarray)):
            raise InvalidNetworkError(
                f"{where}: synapses must be (pre, post) index arrays, a matrix (scipy sparse "
                f"or numpy) or a Convolution, not {type(syn).__name__}"
            )
        m = sp.coo_matrix(syn)
        if m.shape != (n_pre, n_post):
            raise InvalidNetworkError(
                f"{where}: the matrix is {m.shape[0]}x{m.shape[1]}; it must be "
                f"{n_pre}x{n_post} (pre size x post size)"
            )
        m.sum_duplicates()
        m.eliminate_zeros()
        i, j, w = m.row.astype(np.int64), m.col.astype(np.int64), m.data.astype(np.float32)
        if np.all(w == 1):
            w = None
    for what, v, n in (("pre", i, n_pre), ("post", j, n_post)):
        if v.size and (v.min() < 0 or v.max() >= n):
            raise InvalidNetworkError(f"{where}: a {what} index lies outside 0..{n - 1}")
    key = i * n_post + j
    _, first = np.unique(key, return_index=True)
    if first.size != key.size:  # a pair given twice is one synapse (its first weight)
        first.sort()
        i, j = i[first], j[first]
        w = None if w is None else w[first]
    return i, j, w


# ------------------------------------------------------------------ files and names
def load_network(source: str | os.PathLike, *, max_neurons: int | None = None) -> Network:
    """A network from a spec string (``"sparse-mlp-1"``, ``"rand:n=4096,card=32"``) or a
    file: MeshScope's ``.npz``, hMETIS ``.hgr`` or a NIR graph ``.nir`` (snnTorch, Norse,
    Sinabs, Rockpool … exports). ``max_neurons``: refuse anything larger, before building it.
    Raises ``InputFileError`` for an unreadable file, ``SpecError`` for an unknown spec."""
    from engine.io.files import ReadLimits
    from engine.specs import load_network_spec

    limits = None
    if max_neurons is not None:
        limits = dataclasses.replace(ReadLimits(), neurons=int(max_neurons))
    return load_network_spec(os.fspath(source), limits=limits)


def save_network(network: Network, path: str | os.PathLike) -> None:
    """Write ``network`` as a MeshScope ``.npz`` file, whole or not at all (``load_network``
    reads it back equal, fingerprint and all)."""
    from engine.io.network_file import save_network as save

    save(network, path)


def make_hardware(
    base: str | Hardware = "loihi2",
    *,
    width: int | None = None,
    height: int | None = None,
    cores_per_router: int | None = None,
    chips: tuple[int, int] | None = None,
    neurons_per_core: int | None = None,
    synaptic_memory_bytes: int | None = None,
    inbound_axons: int | None = None,
    name: str | None = None,
) -> Hardware:
    """Hardware from keyword arguments: ``base`` (a preset, a TOML file, a ``mesh:`` spec or
    a ``Hardware``) with its mesh (``width`` × ``height`` routers per chip, ``cores_per_router``,
    ``chips`` = (columns, rows) of chips) and per-core limits changed; every other constant
    stays the base's. Raises ``InvalidHardwareError`` for an impossible combination."""
    from engine.hardware import Hardware, load_hardware

    hw = base if isinstance(base, Hardware) else load_hardware(os.fspath(base))
    topo = {
        "width": width,
        "height": height,
        "cores_per_router": cores_per_router,
        "chips_x": None if chips is None else chips[0],
        "chips_y": None if chips is None else chips[1],
    }
    limits = {
        "neurons": neurons_per_core,
        "synaptic_memory_bytes": synaptic_memory_bytes,
        "inbound_axons": inbound_axons,
    }
    topo = {k: int(v) for k, v in topo.items() if v is not None}
    limits = {k: int(v) for k, v in limits.items() if v is not None}
    if not topo and not limits and name is None:
        return hw
    changes: dict[str, Any] = dict(topo)
    if limits:
        changes["limits"] = dataclasses.replace(hw.limits, **limits)
    changed = ", ".join(f"{k}={v}" for k, v in {**topo, **limits}.items())
    label = name or f"{hw.name} ({changed})"
    changes.update(name=label, description=f"{hw.description} — changed from Python")
    try:
        out = dataclasses.replace(hw, **changes)
    except InvalidHardwareError as e:
        if "input_port" not in str(e):
            raise
        out = dataclasses.replace(hw, **changes, input_port=(0, 0, 0, 0))
    keys = [f"topology.{k}" for k in topo] + [f"limits.{k}" for k in limits]
    return out.with_sources({k: "python: make_hardware" for k in keys})


def names(kind: str) -> list[str]:
    """The names MeshScope knows of one ``kind``: ``"networks"`` (workload specs),
    ``"hardware"`` (presets), ``"partitioners"``, ``"placers"``, ``"predictors"``,
    ``"objectives"``, ``"patterns"`` (synthetic traffic) or ``"routings"``. Names with
    parameters are given in their grammar (``min[+K]``)."""
    if kind == "hardware":
        from engine.hardware import preset_names

        return preset_names()
    registries = {
        "networks": ("engine.workloads", "workloads"),
        "partitioners": ("engine.mapping.partition", "partitioners"),
        "placers": ("engine.mapping.placement", "placers"),
        "predictors": ("engine.predict", "predictors"),
        "objectives": ("engine.search.config", "objectives"),
        "patterns": ("engine.simulate.patterns", "patterns"),
        "routings": ("engine.hardware.routing", "routings"),
    }
    if kind not in registries:
        raise SpecError(
            f"unknown kind of name {kind!r}; known kinds: hardware, {', '.join(registries)}"
        )
    from importlib import import_module

    module, attr = registries[kind]
    return list(getattr(import_module(module), attr).grammars())


def read_mapping_file(
    path: str | os.PathLike,
    *,
    network: str | Network | None = None,
    hardware: str | Hardware | None = None,
) -> Mapped:
    """A mapping file (``write_mapping_file``, ``meshscope … --save``) as a ``Mapped``, on the
    network and hardware it names or the ones given (objects or specs). The file's
    fingerprints are checked: a mapping of another network or hardware is refused."""
    from engine.pipeline import build_mapping

    return build_mapping(network, hardware, mapping_file=os.fspath(path))


def swap_cores(mapped: Mapped, core_a: int, core_b: int) -> Mapped:
    """A new ``Mapped`` with the partitions on global cores ``core_a`` and ``core_b``
    exchanged — a move when one of them is empty (what a drag does in the explorer).
    ``mapped`` itself is not changed."""
    from engine.mapping.assignment import Mapping, Placement
    from engine.pipeline import Mapped

    n = mapped.hardware.n_cores
    a, b = int(core_a), int(core_b)
    if not (0 <= a < n and 0 <= b < n):
        raise SpecError(f"cores must lie in 0..{n - 1}, not {a} and {b}")
    cores = np.array(mapped.mapping.placement.cores, copy=True)
    at_a, at_b = cores == a, cores == b
    if not (at_a.any() or at_b.any()):
        raise SpecError(f"neither core {a} nor core {b} holds a partition: nothing to move")
    cores[at_a], cores[at_b] = b, a
    mapping = Mapping(mapped.mapping.partition, Placement(cores))
    return Mapped(mapped.network, mapped.hardware, mapping, mapped.graph, {})


# ------------------------------------------------------------------ simulator and flows
def simulate_step(
    mapped: Mapped,
    *,
    mode: str = "pipelined",
    spikes: str | np.ndarray = "sample",
    seed: int = 0,
    window: int = 0,
    cancel=None,
) -> StepResult:
    """One time step of the mapping, simulated flit by flit (the cycle-level simulator).

    ``mode``: ``"pipelined"`` or ``"fall-through"``; ``spikes``: ``"sample"`` (drawn from
    the rates with ``seed``), ``"expected"``, or a boolean array of the neurons that spike;
    ``window``: cycles per trace window (0: no trace); ``cancel``: anything with
    ``is_set()`` — once set, ``engine.errors.Cancelled`` is raised. The result's
    ``step_us`` sits beside ``evaluate(mapped).latency_us``."""
    from engine.simulate import simulate_step

    return simulate_step(mapped, mode=mode, spikes=spikes, seed=seed, window=window, cancel=cancel)


def simulate_pattern(
    pattern: str = "uniform",
    *,
    width: int = 8,
    height: int = 8,
    rate: float = 0.1,
    packet_flits: int = 1,
    cycles: int = 10_000,
    warmup: int = 5_000,
    routing: str | None = None,
    seed: int = 0,
) -> SyntheticResult:
    """A synthetic traffic ``pattern`` (``names("patterns")``) on a ``width`` × ``height`` mesh
    at ``rate`` flits per node and cycle, as BookSim2 runs one: latencies and accepted rate
    in the result. ``routing``: ``names("routings")`` (default X then Y)."""
    from engine.simulate import SyntheticRun, run_synthetic

    run = SyntheticRun(
        pattern, width, height, rate=rate, packet_flits=packet_flits, cycles=cycles,
        warmup=warmup,
    )  # fmt: skip
    return run_synthetic(_noc(routing), run, seed=seed)


def sweep_pattern(
    pattern: str = "uniform",
    rates: Sequence[float] = (0.02, 0.1, 0.2, 0.3, 0.4),
    *,
    width: int = 8,
    height: int = 8,
    packet_flits: int = 1,
    cycles: int = 10_000,
    warmup: int = 5_000,
    routing: str | None = None,
    seed: int = 0,
    workers: int = 1,
    progress: Callable[[dict], None] | None = None,
    cancel=None,
) -> SweepResult:
    """Latency against offered load: ``simulate_pattern`` at every rate, lowest first, with
    the zero-load latency and the saturation rate read off the curve. ``progress(point)``
    hears each point; ``cancel.is_set()`` ends the sweep with the points so far."""
    from engine.simulate import SyntheticRun, sweep

    base = SyntheticRun(
        pattern, width, height, packet_flits=packet_flits, cycles=cycles, warmup=warmup
    )
    return sweep(
        _noc(routing), base, list(rates), seed=seed, workers=workers, progress=progress,
        cancel=cancel,
    )  # fmt: skip


def _noc(routing: str | None):
    from engine.hardware import NocConstants

    return NocConstants() if routing is None else NocConstants(routing=routing)


def link_flows(mapped: Mapped, link: str | int = "max") -> list[dict]:
    """Every flow whose route crosses ``link``, heaviest first — why a link is hot.

    ``link``: ``"max"`` (the link that bounds the link term), a label as the command line
    prints it (``"E (1,0)->(2,0)"``, ``"(1,0):2->(1,0)"`` out of a core, ``"(1,0)->(1,0):2"``
    into it) or a link id. Each row: source and destination layer, partition, core
    ``"(x,y):s"`` (global router coordinates and slot) and chip, ``messages`` per step,
    ``share`` of the link's load, ``hops`` and ``route``."""
    from engine.evaluation.flows import flows_through, parse_link
    from engine.pipeline import evaluate

    loads = evaluate(mapped).link_us if link == "max" else None
    lid = parse_link(mapped.hardware, str(link), loads)
    table = flows_through(mapped.hardware, mapped.graph, mapped.mapping.placement.cores, lid)
    return table.rows(mapped.hardware, mapped.graph)


# ------------------------------------------------------------------ search
@dataclass(frozen=True, eq=False)
class SearchResult:
    """What ``search`` found: the ``best`` mapping (a ``Mapped``), its ``evaluation`` by the
    model, the ``start`` mapping's, how many ``evaluations`` ran and whether the run was
    ``cancelled`` before its budget was spent."""

    best: Mapped
    evaluation: Evaluation
    start_evaluation: Evaluation
    evaluations: int
    cancelled: bool
    history: list = field(repr=False, default_factory=list)

    @property
    def improvement_pct(self) -> float:
        """How much lower the best latency is than the starting mapping's, in percent."""
        before = self.start_evaluation.latency_us
        return 100.0 * (before - self.evaluation.latency_us) / before


def evolve(
    mapped: Mapped,
    *,
    budget: int = 125,
    objective: str = "latency",
    seed: int = 0,
    predictor: str | None = None,
    progress: Callable[[Event], None] | None = None,
    cancel=None,
) -> SearchResult:
    """The nested evolutionary strategy (Loihi 2 mapping ES) from ``mapped``'s mapping and the
    placement heuristics, over ``budget`` evaluations of ``objective`` (``names("objectives")``).

    ``progress(event)`` hears every evaluation (``event.count``, ``event.budget``,
    ``event.progress`` in [0, 1], ``event.best.fitness``); ``cancel``: anything with
    ``is_set()`` (a ``threading.Event``) — once set, the run stops after the evaluation under
    way and returns the best so far (``cancelled=True``). Same seed, same result."""
    from engine.pipeline import Mapped, evaluate
    from engine.search import ESConfig
    from engine.search.config import default_evaluator
    from engine.search.evolution import evolve

    network, hardware = mapped.network, mapped.hardware
    config = ESConfig(budget=int(budget), objective=objective, seed=int(seed))
    evaluator = default_evaluator(network, hardware, objective, predictor=predictor)
    try:
        run = evolve(network, hardware, config, evaluator=evaluator, start=mapped.mapping)
        result = run.run(cancel=cancel, callback=progress)
    finally:
        evaluator.close()
    if result.best is None:  # (run.result raises AllFailedError before this)
        raise Cancelled("the search stopped before any mapping was evaluated")
    best = Mapped.of(network, hardware, result.mapping(network))
    return SearchResult(
        best=best,
        evaluation=evaluate(best, predictor=predictor),
        start_evaluation=evaluate(mapped, predictor=predictor),
        evaluations=result.evaluations,
        cancelled=result.cancelled,
        history=list(result.history),
    )
