"""The pymoo algorithms a multi-objective mapping search runs, registered by name.

SENMap (§IV-D) searches on pymoo with a GA, PSO, ISRES, NSGA-II, NSGA-III and MOEA/D; all
six are here. Each entry says how many objectives the algorithm takes, its population and
offspring by default, and builds the pymoo algorithm from the search's parts
(``Parts``: the mapping operators, sizes, number of objectives):

* ``nsga2``, ``nsga3``, ``ga`` and ``moead`` breed mappings with the mapping operators
  (``engine.search.pareto.operators``): every row they make is a valid mapping;
* ``pso`` and ``isres`` move rows in a continuous space (velocities; Gaussian steps and
  differential variation) and the problem decodes each row (``MappingProblem.split``);
  their first population is the same sampling, heuristics first.

pymoo handles the constraints (the core limits, the cores available) of every algorithm but
MOEA/D, whose pymoo implementation refuses constraints: a mapping that breaks one gets the
worst value of every objective instead, so it never replaces a neighbour. MOEA/D is pymoo's
generational variant (``ParallelMOEAD``): a generation's offspring are evaluated in one
batch — on the executor's workers — rather than one at a time.

Adding an algorithm is one ``algorithms.add`` here (and a test).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from pymoo.algorithms.moo.moead import ParallelMOEAD
from pymoo.algorithms.moo.nsga2 import NSGA2
from pymoo.algorithms.moo.nsga3 import NSGA3
from pymoo.algorithms.soo.nonconvex.ga import GA
from pymoo.algorithms.soo.nonconvex.isres import ISRES
from pymoo.algorithms.soo.nonconvex.pso import PSO
from pymoo.util.ref_dirs import get_reference_directions

from engine.errors import SpecError
from engine.registry import Registry

__all__ = ["Algorithm", "Parts", "algorithms", "reference_directions"]


@dataclass(frozen=True)
class Parts:
    """What a search gives an algorithm to build it with."""

    sampling: object
    crossover: object
    mutation: object
    pop_size: int
    n_offsprings: int | None  # None: the algorithm's own
    n_obj: int


@dataclass(frozen=True)
class Algorithm:
    """One registered algorithm: its name as the papers write it, how many objectives it
    takes (``one``, ``several`` or ``any``), its default population and offspring a
    generation (of a population: None is the algorithm's own), and ``build(parts)``."""

    label: str
    build: Callable[[Parts], object]
    objectives: str
    population: int
    offspring: Callable[[int], int | None]
    constrained: bool = True  # pymoo sees the constraints (else: the worst objectives)
    several_why: str = ""  # what an algorithm of several objectives needs them for

    def check(self, name: str, n_objectives: int, population: int, offspring: int) -> None:
        """Refuse settings the algorithm cannot run (``offspring``: asked for, 0 if not)."""
        if self.objectives == "one" and n_objectives != 1:
            raise SpecError(
                f"{self.label} minimizes one objective; give one (--objectives latency) or use "
                f"{' or '.join(n for n, a in algorithms.items() if a.objectives != 'one')}"
            )
        if self.objectives == "several" and n_objectives < 2:
            raise SpecError(
                f"{self.label} {self.several_why}: give two or more objectives, or use the GA "
                "for one"
            )
        if name == "pso" and offspring:
            raise SpecError("PSO moves its whole swarm every generation: leave out --offspring")
        if name == "isres" and offspring and offspring < 2 * population:
            raise SpecError(
                f"ISRES keeps the best of its offspring: give --offspring at least twice the "
                f"population ({2 * population}), or leave it out ({7 * population})"
            )
        if name == "moead" and offspring > population:
            raise SpecError(
                "MOEA/D breeds at most one offspring a subproblem a generation: give "
                f"--offspring {population} (the population) or less"
            )


def reference_directions(n_obj: int, population: int):
    """Das–Dennis reference directions: the most partitions whose directions the population
    covers (at least one)."""
    partitions = 1
    while partitions < population and _ref_count(n_obj, partitions + 1) <= population:
        partitions += 1
    return get_reference_directions("das-dennis", n_obj, n_partitions=partitions)


def _ref_count(n_obj: int, partitions: int) -> int:
    """How many Das–Dennis reference directions ``n_obj`` objectives get at ``partitions``."""
    return math.comb(n_obj + partitions - 1, partitions)


def _breeding(p: Parts) -> dict:
    """The settings of an algorithm that breeds mappings with the mapping operators."""
    out = dict(pop_size=p.pop_size, sampling=p.sampling, crossover=p.crossover,
               mutation=p.mutation, eliminate_duplicates=True)  # fmt: skip
    if p.n_offsprings:
        out["n_offsprings"] = p.n_offsprings
    return out


def _moead(p: Parts) -> ParallelMOEAD:
    """MOEA/D with a subproblem per reference direction (its population: as many as fit in
    ``p.pop_size``), at most one offspring each a generation."""
    directions = reference_directions(p.n_obj, p.pop_size)
    n = len(directions)
    return ParallelMOEAD(
        directions, sampling=p.sampling, crossover=p.crossover, mutation=p.mutation,
        n_offsprings=min(p.n_offsprings or n, n),
    )  # fmt: skip


algorithms: Registry[Algorithm] = Registry("algorithm")
# SENMap Table II: population 30 (GA) and 40 (NSGA-II), 10 offspring for NSGA-II (the GA's
# offspring are not given: a whole population, pymoo's default); NSGA-III as NSGA-II
algorithms.add(
    "nsga2",
    Algorithm("NSGA-II", lambda p: NSGA2(**_breeding(p)), "any", 40, lambda pop: 10),
    doc="NSGA-II: non-dominated sorting and crowding (SENMap Table II: 40, 10 offspring)",
)
algorithms.add(
    "nsga3",
    Algorithm(
        "NSGA-III",
        lambda p: NSGA3(reference_directions(p.n_obj, p.pop_size), **_breeding(p)),
        "several",
        40,
        lambda pop: 10,
        several_why="spreads a front over reference directions",
    ),  # fmt: skip
    doc="NSGA-III: non-dominated sorting around Das–Dennis reference directions (3+ objectives)",
)
algorithms.add(
    "ga",
    Algorithm("the GA", lambda p: GA(**_breeding(p)), "one", 30, lambda pop: None),
    doc="a genetic algorithm on one objective (SENMap Table II: population 30)",
)
algorithms.add(
    "pso",
    Algorithm(
        "PSO",
        lambda p: PSO(pop_size=p.pop_size, sampling=p.sampling),
        "one",
        25,
        lambda pop: None,
    ),  # fmt: skip
    doc="particle swarm optimization on one objective (pymoo's adaptive PSO, 25 particles); "
    "placements as random keys",
)
algorithms.add(
    "isres",
    Algorithm(
        "ISRES",
        lambda p: ISRES(pop_size=p.pop_size, n_offsprings=p.n_offsprings, sampling=p.sampling),
        "one",
        30,
        lambda pop: 7 * pop,
    ),  # fmt: skip
    doc="improved stochastic ranking evolution strategy on one objective (keeps 30 of 210 "
    "offspring, the ES's 1/7); placements as random keys",
)
algorithms.add(
    "moead",
    Algorithm(
        "MOEA/D",
        _moead,
        "several",
        40,
        lambda pop: None,
        constrained=False,
        several_why="decomposes a front into one subproblem per reference direction",
    ),  # fmt: skip
    doc="MOEA/D: one subproblem per reference direction, mated with its neighbours "
    "(population 40: as many directions as fit)",
)
