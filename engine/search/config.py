"""What a search can be asked for: its settings, objectives and strategies — one place each.

``ESConfig`` holds the nested evolutionary strategy's settings and their defaults; the
command line's flags and the explorer's fields take their defaults from it. The
registries ``objectives`` and ``strategies`` list what a run can minimize and how it
covers several chips; the initial heuristics are the placers tagged ``heuristic``.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from engine.errors import SpecError
from engine.placement import placers
from engine.registry import Registry
from engine.search.operators import OperatorParams

__all__ = ["ESConfig", "Objective", "heuristics", "objectives", "strategies"]


@dataclass(frozen=True)
class Objective:
    """A quantity a search minimizes: the ``Outcome`` field it reads, and its axis label."""

    name: str
    field: str
    label: str
    simulated: bool = False  # needs the cycle-level simulator (``SimulatorEvaluator``)


objectives: Registry[Objective] = Registry("objective")
objectives.add(
    "latency",
    Objective("latency", "latency_us", "latency (µs / step)"),
    doc="time per step (max-affine model, or the evaluator command)",
)
objectives.add(
    "energy",
    Objective("energy", "energy_uj", "energy (µJ / step)"),
    doc="energy per step (static + operations + routing)",
)
objectives.add(
    "simulated-latency",
    Objective("simulated-latency", "simulated_us", "simulated latency (µs / step)", simulated=True),
    doc="time per step simulated flit by flit (pipelined; same spikes for every mapping)",
)

strategies: Registry[type] = Registry("strategy")  # filled by evolution.py and multichip.py


def heuristics() -> tuple[str, ...]:
    """The fill orders and the random placement a run starts from (Loihi 2 mapping ES §4.3.1)."""
    return tuple(placers.names("heuristic"))


@dataclass(frozen=True)
class ESConfig:
    """Settings of one run of the nested evolutionary strategy (Loihi 2 mapping ES §4.3)."""

    budget: int = field(default=125, metadata={"help": "fitness evaluations"})
    lambda_part: int = field(default=4, metadata={"help": "partitioning offspring per generation"})
    lambda_place: int = field(default=4, metadata={"help": "placement offspring per generation"})
    reorder: bool = field(default=True, metadata={"help": "carry placements with reordering"})
    elitist: bool = field(default=True, metadata={"help": "(1+λ) partitioning; False: (1,λ)"})
    objective: str = field(default="latency", metadata={"help": "what to minimize"})
    init_k: int = field(default=2, metadata={"help": "start from min+K (§5.2 uses min+2)"})
    segments: int = field(
        default=0,
        metadata={"help": "chipwise: segments of layers, one chip each (0: one per chip)"},
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

    def to_dict(self) -> dict:
        d = dataclasses.asdict(self)
        d["heuristics"] = list(self.heuristics)
        return d

    @classmethod
    def from_dict(cls, d: dict) -> ESConfig:
        d = dict(d)
        d["operators"] = OperatorParams(**d["operators"])
        d["heuristics"] = tuple(d["heuristics"])
        return cls(**d)

    @classmethod
    def help(cls, name: str) -> str:
        """The help text of a setting, with its default."""
        f = next(f for f in dataclasses.fields(cls) if f.name == name)
        return f"{f.metadata.get('help', name)} (default {f.default})"
