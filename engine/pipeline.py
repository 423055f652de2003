"""The one path from what a user names to a result: specs → partition → placement → cost.

::

    mapped = build_mapping("sparse-mlp-1", "loihi2", partition="min+2", placement="spread-col")
    evaluation = evaluate(mapped)
    write_mapping_file("best.json", mapped, evaluation)

``build_mapping`` resolves the network and hardware (spec strings or objects), then
either reads a mapping file or partitions and places the network, timing each phase;
``evaluate`` checks the mapping against every limit and costs it; ``write_mapping_file``
writes it atomically. The command line, the explorer and the benchmarks all use these
functions, so a mapping is built the same way wherever it is asked for.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass, field

import numpy as np

from engine.errors import SpecError
from engine.evaluation.cost import Evaluation, Evaluator, checked_evaluator
from engine.evaluation.traffic import message_loads
from engine.hardware import Hardware, load_hardware
from engine.io.outputs import write_text
from engine.mapping.assignment import (
    Mapping,
    MappingFile,
    Partition,
    mapping_to_dict,
    parse_split,
    read_mapping_file,
)
from engine.mapping.partition import make_partition
from engine.mapping.partition_graph import PartitionGraph, partition_graph
from engine.mapping.placement import make_placement
from engine.model.network import Network
from engine.predict import evaluator_class
from engine.progress import reporting
from engine.specs import DEFAULT_HARDWARE, DEFAULT_NETWORK, DEFAULT_PLACER, check_fits
from engine.specs import load_network_spec as resolve_network

__all__ = [
    "PHASES",
    "Mapped",
    "build_mapping",
    "evaluate",
    "evaluator",
    "resolve_network",
    "spike_loads",
    "write_mapping_file",
]


PHASES = ("partition", "partition graph", "place")  # what build_mapping reports, in order


@dataclass(frozen=True, eq=False)
class Mapped:
    """A network mapped onto hardware, with its partition graph and the time each phase took."""

    network: Network
    hardware: Hardware
    mapping: Mapping
    graph: PartitionGraph = field(repr=False)
    seconds: dict = field(default_factory=dict)  # partition, partition_graph, place
    # how it was made: {"partition": spec or None (the default), "placement": placer} or
    # {"mapping_file": path}; empty for a mapping given as such (``Mapped.of``)
    recipe: dict = field(default_factory=dict)

    @classmethod
    def of(cls, network: Network, hardware: Hardware, mapping: Mapping) -> Mapped:
        """An existing mapping with its partition graph."""
        t0 = time.perf_counter()
        graph = partition_graph(network, hardware, mapping.partition)
        return cls(network, hardware, mapping, graph, {"partition_graph": time.perf_counter() - t0})


def _network(network: str | Network | None, default: str | None = DEFAULT_NETWORK) -> Network:
    return network if isinstance(network, Network) else resolve_network(network or default)


def _hardware(hardware: str | Hardware | None, default: str | None = DEFAULT_HARDWARE):
    return hardware if isinstance(hardware, Hardware) else load_hardware(hardware or default)


def build_mapping(
    network: str | Network | None = None,
    hardware: str | Hardware | None = None,
    *,
    partition: str | Partition | None = None,
    placement: str | None = None,
    placement_params: dict | None = None,
    mapping_file: str | MappingFile | None = None,
    seed: int = 0,
    split=None,
    progress: Callable[..., None] | None = None,
    mesh_scheme: str | None = None,
) -> Mapped:
    """Resolve, partition and place — or read a mapping file — and return the ``Mapped``.

    ``network``/``hardware``: a spec string, an object, or None (the demo's; with a
    mapping file, the ones the file names). ``partition``: a ``--partition`` spec, a
    ``Partition``, or None (the network's default). ``placement``: a placer name
    (``A+force`` compositions too; default packed-row) and ``placement_params`` its keyword
    parameters (``{"rows": 4}`` for pairs-square). ``mapping_file``: a path or a
    parsed file, instead of ``partition``/``placement``. ``split``: how layer partitions
    split each population (a ``--split`` spec or its parse,
    ``engine.mapping.assignment.parse_split``; None: ``auto``). ``progress`` is called with the name
    of each of ``PHASES`` as it starts, and with the name and the fraction done as a partitioner
    reports how far it got (``engine.progress``; without ``progress`` the reports reach the caller's
    ``reporting`` block, if any). ``mesh_scheme``: after partitioning, size the mesh for the cores
    used by SENMap §IV-B's scheme (``engine.mesh_shape``) and place on that mesh
    (``hardware@RxC``): the hardware names the core and the most cores it may take.
    Raises ``MeshScopeError``.
    """
    say = progress or (lambda phase, fraction=None: None)
    mf = None
    if mapping_file is not None:
        if partition is not None or placement is not None:
            raise SpecError("give either a mapping file or a partition/placement, not both")
        mf = (
            mapping_file
            if isinstance(mapping_file, MappingFile)
            else read_mapping_file(mapping_file)
        )
    hw = _hardware(hardware, mf.hardware_name if mf else DEFAULT_HARDWARE)
    spec, parts, source = (
        (network or DEFAULT_NETWORK, None, "")
        if mf is None
        else (network or mf.network_name, len(mf.placement), mf.source)
    )
    check_fits(spec, hw, parts=parts, source=source)  # before it is generated
    net = _network(spec)
    if mf is not None:
        mapping = mf.build(net, hw)
        t0 = time.perf_counter()
        graph = partition_graph(net, hw, mapping.partition)
        seconds = {"partition_graph": time.perf_counter() - t0}
        path = mapping_file if isinstance(mapping_file, str | os.PathLike) else mf.source
        return Mapped(net, hw, mapping, graph, seconds, {"mapping_file": str(path)})
    say(PHASES[0])
    t0 = time.perf_counter()
    recipe = {
        "partition": partition if isinstance(partition, str | None) else "given",
        "placement": placement or DEFAULT_PLACER,
    }
    if not isinstance(partition, Partition):
        if isinstance(split, str):
            split = parse_split(split)
        heard = nullcontext() if progress is None else reporting(lambda f: say(PHASES[0], f))
        with heard:  # (without ``progress``: to the caller's ``reporting`` block, if any)
            partition = make_partition(net, hw, partition, seed=seed, split=split)
    if mesh_scheme is not None:
        hw = compressed(hw, partition.n_parts, mesh_scheme)
    say(PHASES[1])
    t1 = time.perf_counter()
    graph = partition_graph(net, hw, partition)
    say(PHASES[2])
    t2 = time.perf_counter()
    place = make_placement(
        graph, hw, placement or DEFAULT_PLACER, seed=seed, **(placement_params or {})
    )
    t3 = time.perf_counter()
    seconds = {"partition": t1 - t0, "partition_graph": t2 - t1, "place": t3 - t2}
    return Mapped(net, hw, Mapping(partition, place), graph, seconds, recipe)


def compressed(hardware: Hardware, cores: int, scheme: str) -> Hardware:
    """``hardware`` resized to the mesh ``scheme`` gives ``cores`` cores (SENMap §IV-B), in
    routers of the hardware's cores per router."""
    from engine.hardware import resized
    from engine.mesh_shape import mesh_shape

    routers = -(-max(cores, 1) // hardware.cores_per_router)
    rows, columns = mesh_shape(routers, scheme)
    return resized(hardware, rows, columns)


def evaluator(
    mapped: Mapped, *, multicast: bool | None = None, predictor: str | None = None
) -> Evaluator:
    """An ``Evaluator`` of the mapping (fast swaps and re-placements), after checking that it
    fits: every reason it cannot run is named in one ``CapacityError``. With ``multicast``,
    a spike is one message to all its destination cores, replicated where routes part (None:
    as the hardware's NoC does, ``links.multicast``). ``predictor``: which one times the
    step (``engine.predict.predictors``; None: ``DEFAULT_PREDICTOR``)."""
    return checked_evaluator(
        mapped.network, mapped.hardware, mapped.mapping, graph=mapped.graph,
        multicast=multicast, evaluator=evaluator_class(predictor),
    )  # fmt: skip


def evaluate(
    mapped: Mapped, *, multicast: bool | None = None, predictor: str | None = None
) -> Evaluation:
    """The full cost of the mapping (checks feasibility first) by ``predictor`` (None: the
    default, the max-affine model; the ``Evaluation`` names it): the one ``evaluate``
    (``engine.evaluation.cost.model_evaluation`` takes the network, hardware and mapping apart)."""
    return evaluator(mapped, multicast=multicast, predictor=predictor).evaluation()


def spike_loads(mapped: Mapped, spikes, *, multicast: bool | None = None, seed: int = 0):
    """The analytic model's per-link message counts for one step's actual spikes (a boolean
    array over neurons) rather than their expected rates, each packet routed as the
    simulator's step with ``seed`` routes it (where the routing lets packets take either
    dimension order, their draws): the integers the cycle-level simulator's per-link flit
    counts must equal (times the flits per message)."""
    messages = mapped.graph.messages(mapped.hardware.model, np.asarray(spikes, dtype=bool))
    if multicast is None:
        multicast = mapped.hardware.links.multicast
    return message_loads(
        mapped.hardware, mapped.mapping.placement.cores, messages, multicast=multicast,
        seed=seed,
    )  # fmt: skip


def write_mapping_file(path, mapped: Mapped, evaluation: Evaluation | None = None) -> None:
    """Write the mapping as a MeshScope mapping file (JSON), whole or not at all."""
    doc = mapping_to_dict(mapped.network, mapped.hardware, mapped.mapping, evaluation)
    write_text(path, json.dumps(doc, indent=1), what="mapping file")
