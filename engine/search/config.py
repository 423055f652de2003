"""What a search can be asked for: its settings, objectives and strategies — one place each.

``ESConfig`` holds the nested evolutionary strategy's settings and their defaults; the
command line's flags and the explorer's fields take their defaults from it. The
registries ``objectives`` and ``strategies`` list what a run can minimize and how it
covers several chips; the initial heuristics are the placers tagged ``heuristic``.
``default_evaluator`` is the evaluator an objective needs (the model, or the simulator);
the objectives tagged ``command`` are those an evaluator command's answer gives.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import ClassVar

from engine.errors import SpecError
from engine.io.files import check_fields
from engine.mapping.placement import placers
from engine.registry import Registry
from engine.search.evaluators import ModelEvaluator, Outcome, SimulatorEvaluator
from engine.search.operators import OperatorParams

__all__ = [
    "ESConfig", "Objective", "default_evaluator", "heuristics", "objectives", "predictor_setting",
    "require_command_reports", "require_hardware_for", "searches", "strategies",
]  # fmt: skip


@dataclass(frozen=True)
class Objective:
    """A quantity a search minimizes: the ``Outcome`` field (or ``Outcome.metrics`` entry) it
    reads, or a function of the outcome, and its axis label."""

    name: str
    field: str
    label: str
    simulated: bool = False  # needs the cycle-level simulator (``SimulatorEvaluator``)
    compute: Callable[[Outcome], float] | None = None

    def value(self, outcome: Outcome) -> float:
        """The objective's value for ``outcome`` (∞ for a failed evaluation, or when the
        evaluator does not report it: an external command reports latency and energy only)."""
        if outcome.failed:
            return math.inf
        if self.compute is not None:
            return float(self.compute(outcome))
        v = getattr(outcome, self.field, None)
        if v is None:
            v = outcome.metrics.get(self.field)
        return math.inf if v is None or math.isnan(v) else float(v)


def _area(scheme: str) -> Callable[[Outcome], float]:
    def area(outcome: Outcome) -> float:
        from engine.mesh_shape import mesh_slots

        used = outcome.metrics.get("cores_used")
        return math.inf if used is None else float(mesh_slots(int(used), scheme))

    return area


objectives: Registry[Objective] = Registry("objective")
# tagged ``cost``: a mapping's time and energy per step (what the nested ES of the Loihi 2
# mapping paper minimizes); the others rate its size and traffic (SENMap, SNN hypergraphs).
# Tagged ``command``: what a search can read from an evaluator command's answer (its latency
# and energy, and what the mapping itself says: its cores and the mesh they need)
objectives.add(
    "latency",
    Objective("latency", "latency_us", "latency (µs / step)"),
    tags=("cost", "command"),
    doc="time per step (max-affine model, or the evaluator command)",
)
objectives.add(
    "energy",
    Objective("energy", "energy_uj", "energy (µJ / step)"),
    tags=("cost", "command"),
    doc="energy per step (static + operations + routing)",
)
objectives.add(
    "simulated-latency",
    Objective("simulated-latency", "simulated_us", "simulated latency (µs / step)", simulated=True),
    tags=("cost",),
    doc="time per step simulated flit by flit (pipelined; same spikes for every mapping)",
)
objectives.add(
    "cores",
    Objective("cores", "cores_used", "cores used"),
    tags=("command",),
    doc="cores the mapping uses",
)
for _scheme, _doc in (
    ("strict-area", "the factor pair with the smallest sum"),
    ("loose-area", "a prime count gets one more core"),
    ("square", "a near-square mesh"),
):
    _name = "area" if _scheme == "strict-area" else f"area-{_scheme.split('-')[0]}"
    objectives.add(
        _name,
        Objective(_name, "cores_used", f"mesh slots ({_scheme})", compute=_area(_scheme)),
        tags=("command",),
        doc=f"cores of the mesh sized for the cores used, SENMap §IV-B {_scheme}: {_doc}",
    )
for _name, _key, _label, _doc in (
    ("memory", "memory_kib_used", "memory of the cores used (KiB)",
     "the memory of the cores the mapping uses (a co-design search's silicon)"),
    ("npes", "npes_used", "NPEs of the cores used",
     "the neural processing elements of the cores the mapping uses (co-design)"),
    ("clock", "clock_scale", "clock (× the preset's)", "the clock a co-design search chose"),
    ("chip-cores", "cores_available", "cores of the chip",
     "the cores of the chip (a co-design search's cores parameter, else the hardware's)"),
    ("link-width", "flit_scale", "link width (× the preset's)",
     "the link width a co-design search chose"),
):  # fmt: skip
    # tagged ``codesign``: constant unless a co-design search chooses the hardware
    objectives.add(_name, Objective(_name, _key, _label), tags=("codesign",), doc=_doc)
objectives.add(
    "max-link-utilization",
    Objective("max-link-utilization", "max_link_utilization", "busiest link's share of the step"),
    doc="the busiest link's busy time over the step time (model)",
)
for _key, _label, _doc in (
    ("connectivity", "connectivity (λ − 1)", "the SNN hypergraphs paper's λ − 1 over h-edges"),
    ("routing_energy_pj", "routing energy (pJ)", "SNN hypergraphs Table I: routing energy"),
    ("average_latency_ns", "average latency (ns)", "SNN hypergraphs Table I: mean spike latency"),
    ("congestion", "congestion (messages × hops)", "SNN hypergraphs Table I: link traversals"),
    ("elp", "ELP (pJ · ns)", "SNN hypergraphs Table I: energy-latency product"),
):
    _name = _key.replace("_", "-")
    objectives.add(_name, Objective(_name, _key, _label), doc=f"{_doc} (model)")
for _key, _label, _doc in (
    ("routing_entries", "routing entries (Mosaic)",
     "the Mosaic routing paper's routing memory: cells programmed in all Routing Tiles"),
    ("routing_overflow", "crossbar rows beyond the tiles' (Mosaic)",
     "input rows the Mosaic's tiles lack for the mapping: 0 when it is mappable"),
):  # fmt: skip
    # tagged ``mosaic``: read on a Mosaic (a preset with a [mosaic] table) only
    objectives.add(_key.replace("_", "-"), Objective(_key.replace("_", "-"), _key, _label),
                   tags=("mosaic",), doc=_doc)  # fmt: skip


def require_hardware_for(names, hardware) -> None:
    """Refuse objectives that ``hardware`` cannot rate: the Mosaic's on a router mesh."""
    wrong = [n for n in names if n in objectives.names("mosaic") and hardware.tiles is None]
    if wrong:
        raise SpecError(
            f"objective {', '.join(wrong)} needs a Mosaic (a preset with a [mosaic] table, "
            f"e.g. mosaic-8x8); {hardware.name} is a router mesh: choose a Mosaic or other "
            "objectives"
        )


def require_command_reports(names, option: str = "--objectives") -> None:
    """Refuse objectives an evaluator command does not report (it answers latency and energy;
    the cores and the mesh come from the mapping itself); ``option``: the one that named them."""
    known = objectives.names("command")
    if all(n in known for n in names):
        return
    if option == "--objective":
        raise SpecError(
            f"--evaluator-cmd reports latency and energy; --objective {names[0]} cannot be "
            f"read from it: choose one of {', '.join(known)}"
        )
    raise SpecError(
        f"--evaluator-cmd reports latency and energy: choose objectives among {', '.join(known)}"
    )


def default_evaluator(network, hardware, objective: str, **kwargs):
    """The evaluator an objective needs: the simulator for a simulated objective, else the
    model (``kwargs``: the evaluator's options, e.g. ``workers``, ``predictor``)."""
    if objectives[objective].simulated:
        return SimulatorEvaluator(network, hardware, **kwargs)
    return ModelEvaluator(network, hardware, **kwargs)


def predictor_setting(evaluator) -> dict:
    """``{"predictor": name}`` when ``evaluator`` rates mappings with a predictor other than
    the default (``engine.predict``), else nothing: a run's settings (its history's first
    line, its checkpoint) name the predictor, and those of runs by the default read as
    before."""
    from engine.predict import DEFAULT_PREDICTOR

    name = getattr(evaluator, "predictor", None)
    return {} if name in (None, DEFAULT_PREDICTOR) else {"predictor": name}


strategies: Registry[type] = Registry("strategy")  # filled by evolution.py and multichip.py
# the searches by the ``kind`` of their settings: ``evolve`` (ESConfig, evolution.py) and
# ``pareto`` (ParetoConfig, engine.search.pareto); each entry makes a run (``make_search``)
searches: Registry[Callable] = Registry("search")


def heuristics() -> tuple[str, ...]:
    """The fill orders and the random placement a run starts from (Loihi 2 mapping ES §4.3.1)."""
    return tuple(placers.names("heuristic"))


@dataclass(frozen=True)
class ESConfig:
    """Settings of one run of the nested evolutionary strategy (Loihi 2 mapping ES §4.3)."""

    kind: ClassVar[str] = "evolve"  # the search these settings are for (``make_search``)

    budget: int = field(default=125, metadata={"help": "fitness evaluations"})
    lambda_part: int = field(default=4, metadata={"help": "partitioning offspring per generation"})
    lambda_place: int = field(default=4, metadata={"help": "placement offspring per generation"})
    reorder: bool = field(default=True, metadata={"help": "carry placements with reordering"})
    elitist: bool = field(default=True, metadata={"help": "(1+λ) partitioning; False: (1,λ)"})
    objective: str = field(default="latency", metadata={"help": "what to minimize"})
    init_k: int = field(default=2, metadata={"help": "start from min+K (§5.2 uses min+2)"})
    segments: int = field(
        default=0,
        metadata={
            "help": "chipwise: segments of layers, one chip each (0: as few as hold the layers, "
            "at least 2)"
        },
    )
    heuristics: tuple[str, ...] = field(default_factory=heuristics)
    operators: OperatorParams = field(default_factory=OperatorParams)
    seed: int = field(default=0, metadata={"help": "seed of every random choice"})

    def __post_init__(self):
        objectives[self.objective]  # an unknown objective raises, listing the known ones
        if self.budget < 1 or self.lambda_part < 1 or self.lambda_place < 1:
            raise SpecError("budget, lambda-part and lambda-place must be at least 1")
        if self.init_k < 0:
            raise SpecError(f"init-k must not be negative, not {self.init_k}")
        if self.segments < 0:
            raise SpecError(f"segments must not be negative, not {self.segments}")
        known = heuristics()
        if not self.heuristics or set(self.heuristics) - set(known):
            raise SpecError(f"initial heuristics must come from {', '.join(known)}")

    @property
    def objectives(self) -> tuple[str, ...]:
        """What the run minimizes, as a multi-objective run names it: the one objective."""
        return (self.objective,)

    def to_dict(self) -> dict:
        d = dataclasses.asdict(self)
        d["heuristics"] = list(self.heuristics)
        return d

    @classmethod
    def from_dict(cls, d: dict) -> ESConfig:
        check_fields(cls, d, "its configuration")
        check_fields(OperatorParams, d["operators"], "its configuration's operators")
        d = dict(d)
        d["operators"] = OperatorParams(**d["operators"])
        d["heuristics"] = tuple(d["heuristics"])
        return cls(**d)

    @classmethod
    def help(cls, name: str) -> str:
        """The help text of a setting, with its default."""
        f = next(f for f in dataclasses.fields(cls) if f.name == name)
        return f"{f.metadata.get('help', name)} (default {f.default})"
