"""The settings of one multi-objective run, and their defaults (SENMap Table II)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from engine.errors import SpecError
from engine.search.config import heuristics, objectives
from engine.search.operators import OperatorParams
from engine.search.pareto.algorithms import algorithms

__all__ = ["ParetoConfig"]


@dataclass(frozen=True)
class ParetoConfig:
    """Settings of one multi-objective run (defaults: SENMap Table II; the algorithm's own
    population and offspring: ``engine.search.pareto.algorithms``)."""

    kind: ClassVar[str] = "pareto"  # the search these settings are for (``make_search``)

    objectives: tuple[str, ...] = ("latency", "energy")
    algorithm: str = "nsga2"
    budget: int = field(default=2000, metadata={"help": "evaluations"})
    population: int = field(default=0, metadata={"help": "population size (0: the algorithm's)"})
    offspring: int = field(
        default=0, metadata={"help": "offspring a generation (0: the algorithm's)"}
    )
    eta_crossover: float = 3.0  # integer SBX
    eta_mutation: float = 3.0  # integer polynomial mutation
    init_k: int = 2  # the heuristics start from min+K
    heuristics: tuple[str, ...] = field(default_factory=heuristics)
    operators: OperatorParams = field(default_factory=OperatorParams)
    seed: int = 0

    def __post_init__(self):
        object.__setattr__(self, "objectives", tuple(self.objectives))
        if not self.objectives:
            raise SpecError("give at least one objective (e.g. latency,energy)")
        for name in self.objectives:
            objectives[name]  # an unknown one raises, listing the known ones
        if len(set(self.objectives)) != len(self.objectives):
            raise SpecError(f"an objective is named twice in {','.join(self.objectives)}")
        if self.budget < 1 or self.population < 0 or self.offspring < 0 or self.init_k < 0:
            raise SpecError("budget must be at least 1; population, offspring and init-k ≥ 0")
        if not (self.eta_crossover > 0 and self.eta_mutation > 0):
            raise SpecError("the distribution indices η must be positive")
        self.spec.check(self.algorithm, len(self.objectives), self.pop_size, self.offspring)

    @property
    def spec(self):
        """The registered algorithm (an unknown name raises, listing the known ones)."""
        return algorithms[self.algorithm]

    @property
    def pop_size(self) -> int:
        return self.population or self.spec.population

    @property
    def n_offspring(self) -> int | None:
        return self.offspring or self.spec.offspring(self.pop_size)
