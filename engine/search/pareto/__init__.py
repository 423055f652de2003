"""Multi-objective mapping search on pymoo (SENMap §IV-D), along pymoo's own lines.

The search space is the Loihi 2 mapping ES's (``engine.search.genotype``): a mapping is one
integer vector, the partitioning genotype's extra cores per layer ``x_1 … x_L`` followed by
the placement genotype ω, a permutation of the hardware's cores.

* ``problem``: ``MappingProblem``, mappings as pymoo rows (and how a continuous
  algorithm's row decodes to one);
* ``operators``: sampling, crossover and mutation written over the engine's operators;
* ``algorithms``: the registry of pymoo algorithms (NSGA-II, NSGA-III, GA, PSO, ISRES,
  MOEA/D) — the command line and the explorer list it;
* ``config``: ``ParetoConfig``, a run's settings; ``search``: ``ParetoSearch``, the
  ask → evaluate → tell loop, yielding the searches' one ``Event`` per evaluation;
* ``history``: a run's history (the searches' one format) read back to resume it.
"""

from engine.search.pareto.algorithms import algorithms
from engine.search.pareto.config import ParetoConfig
from engine.search.pareto.history import read_history, write_history
from engine.search.pareto.operators import MappingCrossover, MappingMutation, MappingSampling
from engine.search.pareto.problem import MappingProblem
from engine.search.pareto.search import ParetoResult, ParetoSearch, non_dominated

__all__ = [
    "MappingCrossover",
    "MappingMutation",
    "MappingProblem",
    "MappingSampling",
    "ParetoConfig",
    "ParetoResult",
    "ParetoSearch",
    "algorithms",
    "non_dominated",
    "read_history",
    "write_history",
]
