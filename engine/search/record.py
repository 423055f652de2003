"""What every search reports: a ``Record`` per evaluated mapping, an ``Event`` per evaluation.

Both searches — the nested ES (``engine.search.evolution``) and the multi-objective one
(``engine.search.pareto``) — make the same records and yield the same events: the command
line's progress bar, its history file and the explorer's live plots listen to one shape.

A record holds what the evaluator said of the mapping (the model's latency, energy, terms
and metrics, or an evaluator command's figures, or the simulated step), the value of each
objective the search minimizes by name (``objectives``; ``fitness`` is the first's) and
what is needed to rebuild the mapping (cores per population, placement, co-design choice).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field

from engine.io.files import check_fields
from engine.mapping.assignment import Mapping
from engine.search.evaluators import Outcome
from engine.search.genotype import to_mapping

__all__ = ["LEVELS", "Event", "Record", "better"]

# where a record comes from: a starting point (``init``), a partitioning or placement
# offspring of the nested ES, or an offspring of a multi-objective run's algorithm
LEVELS = ("init", "partition", "placement", "offspring")


@dataclass(frozen=True)
class Record:
    """One evaluated individual and what is needed to rebuild its mapping."""

    index: int
    generation: int
    level: str  # one of LEVELS
    latency_us: float
    energy_uj: float
    power_w: float
    cores_used: int
    accepted: bool  # became (or stayed) the nested ES's parent
    failed: bool  # the evaluator failed (``note`` says why)
    fitness: float  # the first objective's value (∞ when failed or not evaluated)
    cores_per_population: tuple[int, ...]
    placement: tuple[int, ...] = field(repr=False)  # global core id of every partition
    bottleneck: str = ""
    note: str = ""  # the starting point's name (a heuristic, or start), or the failure message
    terms_us: dict = field(default_factory=dict)  # the model's terms (empty from a command)
    simulated_us: float = math.nan  # the simulated step (the simulator evaluator only)
    objectives: dict = field(default_factory=dict)  # each objective minimized -> its value
    # the constraints a multi-objective run counts: layers whose split breaks a core limit,
    # cores beyond those available (on a Mosaic, plus the crossbar rows its tiles lack);
    # a mapping that breaks one is not evaluated
    violations: tuple[float, float] = (0.0, 0.0)
    hardware: dict = field(default_factory=dict)  # a co-design choice: parameter -> value
    knobs: tuple[int, ...] = ()  # … as the indices of those values
    metrics: dict = field(default_factory=dict, repr=False)  # ``Outcome.metrics``

    @classmethod
    def of(cls, outcome: Outcome | None, *, objectives: dict, cores_per_population,
           placement, **fields) -> Record:  # fmt: skip
        """The record of an evaluation (``outcome``; None: the mapping breaks a constraint
        and was not evaluated), with the values of the search's ``objectives`` by name."""
        values = dict(objectives)
        first = next(iter(values.values()), math.inf)
        o = outcome if outcome is not None else Outcome(math.inf, math.inf, math.nan)
        if o.failed:  # its note says why
            fields = {**fields, "note": o.error}
        return cls(
            latency_us=o.latency_us, energy_uj=o.energy_uj, power_w=o.power_w,
            cores_used=int(sum(cores_per_population)), failed=o.failed,
            fitness=math.inf if o.failed else first,
            cores_per_population=tuple(int(c) for c in cores_per_population),
            placement=tuple(int(c) for c in placement), bottleneck=o.bottleneck,
            terms_us=dict(o.terms_us), simulated_us=o.simulated_us, objectives=values,
            metrics=dict(o.metrics), **fields,
        )  # fmt: skip

    @property
    def feasible(self) -> bool:
        """Evaluated, within every constraint, and every objective finite: a mapping a search
        may keep."""
        return (
            not self.failed
            and not any(self.violations)
            and math.isfinite(self.fitness)
            and all(math.isfinite(v) for v in self.objectives.values())
        )

    @property
    def outcome(self) -> Outcome:
        """What the evaluator said of the mapping, as it said it."""
        return Outcome(
            self.latency_us, self.energy_uj, self.power_w, self.bottleneck,
            self.note if self.failed else "", dict(self.terms_us), self.simulated_us,
            dict(self.metrics),
        )  # fmt: skip

    def mapping(self, network) -> Mapping:
        """The mapping this record describes, on ``network``."""
        return to_mapping(network, self.cores_per_population, self.placement)

    def to_dict(self) -> dict:
        """As JSON takes it: tuples as lists, ∞ and NaN as null."""
        d = asdict(self)
        for k in ("cores_per_population", "placement", "violations", "knobs"):
            d[k] = list(d[k])
        for k in ("latency_us", "energy_uj", "power_w", "fitness", "simulated_us"):
            if not math.isfinite(d[k]):
                d[k] = None
        d["objectives"] = {k: v if math.isfinite(v) else None for k, v in self.objectives.items()}
        return d

    @classmethod
    def from_dict(cls, d: dict) -> Record:
        """A record from ``to_dict`` (or from a file written before records said their
        objectives, violations, co-design choice and metrics)."""
        check_fields(cls, d, "a record")
        d = dict(d)
        for k in ("latency_us", "energy_uj", "power_w", "fitness"):
            if d[k] is None:
                d[k] = math.nan if k == "power_w" else math.inf
        if d.get("simulated_us") is None:
            d["simulated_us"] = math.nan
        d["cores_per_population"] = tuple(d["cores_per_population"])
        d["placement"] = tuple(d["placement"])
        d["terms_us"] = dict(d.get("terms_us") or {})
        d["objectives"] = {
            k: math.inf if v is None else float(v) for k, v in (d.get("objectives") or {}).items()
        }
        d["violations"] = tuple(float(v) for v in d.get("violations") or (0.0, 0.0))
        d["hardware"] = dict(d.get("hardware") or {})
        d["knobs"] = tuple(int(k) for k in d.get("knobs") or ())
        d["metrics"] = dict(d.get("metrics") or {})
        return cls(**d)


def better(best: Record | None, record: Record) -> Record | None:
    """The best of ``best`` and ``record`` by fitness (the first objective), the first of
    equals; a record that is not feasible never is."""
    if record.feasible and (best is None or record.fitness < best.fitness):
        return record
    return best


@dataclass(frozen=True)
class Event:
    """One evaluation of a running search: how far it is, what was evaluated, the best yet
    (by the first objective: a multi-objective run's front is in its records)."""

    count: int  # evaluations so far
    budget: int
    best: Record  # best individual so far (the record itself while nothing is feasible)
    record: Record  # the individual just evaluated

    @property
    def progress(self) -> float:
        """Share of the budget spent, in [0, 1]."""
        return min(1.0, self.count / self.budget)
