"""pymoo operators over the mapping genotype, written over the engine's own operators.

pymoo has no variable type for integers plus a permutation, so these three make rows of
``MappingProblem`` that stay valid mappings:

* sampling: the heuristic mappings (packed/spread × row/column at min+K, as the nested ES
  starts; and a given start), then random ones (resource additions and redistributions
  from min+K, a random ω, random co-design choices);
* crossover: integer SBX on the core counts and co-design choices (SENMap Table II: η = 3),
  each child's ω its parent's carried to the new core counts by the reordering operator,
  so every layer keeps its cores;
* mutation: integer polynomial mutation of the same genes (η = 3), reordering, then a swap,
  inversion or scramble of ω.
"""

from __future__ import annotations

import numpy as np
from pymoo.core.crossover import Crossover
from pymoo.core.mutation import Mutation
from pymoo.core.problem import Problem
from pymoo.core.sampling import Sampling
from pymoo.operators.crossover.sbx import SBX
from pymoo.operators.mutation.pm import PM

from engine.hardware import Hardware
from engine.mapping.placement.fill import core_order
from engine.search.genotype import PartitionGenotype
from engine.search.operators import OperatorParams, mutate_partition, mutate_placement, reorder
from engine.search.pareto.problem import MappingProblem, row_key

__all__ = ["MappingCrossover", "MappingMutation", "MappingSampling"]


class MappingSampling(Sampling):
    """The heuristic mappings first (and a given start), then random feasible ones.

    ``config`` (a ``ParetoConfig``): the fill orders (and ``random``) to start from, at
    min+``init_k``, and the operators' settings; ``start``: the (x, ω) of a given mapping,
    evaluated first. ``labels`` names the rows it made by the starting points they are
    (pymoo drops a duplicate row of the first population: names go by row, not position).
    """

    def __init__(self, hardware: Hardware, config, start=None):
        super().__init__()
        self.hardware, self.config, self.start = hardware, config, start
        self.labels: dict[bytes, list[str]] = {}  # a starting row -> its names

    def _do(self, problem, n_samples, *args, random_state=None, **kwargs):
        layout, cfg = problem.layout, self.config
        x0 = PartitionGenotype.min_plus(layout, cfg.init_k)
        items = [] if self.start is None else [(*self.start, "start")]
        rank = np.full(self.hardware.n_cores, -1)
        for name in cfg.heuristics:
            if name == "random":
                omega = random_state.permutation(layout.cores)
            else:
                order = core_order(self.hardware, name)
                rank[order] = np.arange(order.size)
                omega = layout.cores[np.argsort(rank[layout.cores], kind="stable")]
            items.append((x0, omega, name))
        items = [(x, omega, None, name) for x, omega, name in items]  # the preset's values
        highs = problem.xu[layout.n_layers : problem.n_int].astype(np.int64)
        while len(items) < n_samples:
            x = x0
            for _ in range(int(random_state.integers(1, 4))):
                x = mutate_partition(x, layout, cfg.operators, random_state)
            knobs = tuple(int(random_state.integers(0, h + 1)) for h in highs)
            items.append((x, random_state.permutation(layout.cores), knobs, ""))
        items = items[:n_samples]
        rows = np.array(
            [problem.join(x, omega, knobs) for x, omega, knobs, _ in items], dtype=np.int64
        )
        for row, (_, _, _, name) in zip(rows, items, strict=True):
            if name:
                self.labels.setdefault(row_key(row), []).append(name)
        return rows


class MappingCrossover(Crossover):
    """Integer SBX on the core counts (and co-design choices); each child's ω is its
    parent's, reordered."""

    def __init__(self, eta: float, prob: float = 0.9):
        super().__init__(2, 2, prob=prob)
        self._sbx = SBX(prob=1.0, eta=eta, vtype=float)

    def _do(self, problem, X, *args, random_state=None, **kwargs):
        n = problem.n_int
        _, n_matings, _ = X.shape
        out = X.copy()
        if n:
            sub = Problem(n_var=n, xl=problem.xl[:n], xu=problem.xu[:n])
            ints = self._sbx._do(sub, X[:, :, :n].astype(float), random_state=random_state)
            ints = np.clip(np.rint(ints), sub.xl, sub.xu).astype(np.int64)
            for k in range(2):
                for m in range(n_matings):
                    out[k, m] = _carry(problem, X[k, m], ints[k, m])
        return out


class MappingMutation(Mutation):
    """Integer polynomial mutation of the core counts and co-design choices (then
    reordering), and a swap, inversion or scramble of ω (the Loihi 2 mapping ES's placement
    operators)."""

    def __init__(self, eta: float, params: OperatorParams):
        super().__init__(prob=1.0)
        self.params = params
        self._pm = PM(eta=eta, vtype=float)

    def _do(self, problem, X, *args, random_state=None, **kwargs):
        n = problem.n_int
        out = X.copy()
        if n:
            sub = Problem(n_var=n, xl=problem.xl[:n], xu=problem.xu[:n])
            ints = self._pm._do(sub, X[:, :n].astype(float), random_state=random_state)
            ints = np.clip(np.rint(ints), sub.xl, sub.xu).astype(np.int64)
        for i in range(X.shape[0]):
            row = _carry(problem, X[i], ints[i]) if n else X[i].copy()
            x, omega = problem.split(row)
            used = int(x.cores_per_layer(problem.layout).sum())
            if x.unused >= 0 and used > 0:
                omega = mutate_placement(omega, used, self.params, random_state)
            out[i] = problem.join(x, omega, problem.knobs(row))
        return out


def _carry(problem: MappingProblem, parent_row, ints) -> np.ndarray:
    """A child with the integer genes ``ints`` (core counts, then co-design choices) and its
    parent's ω carried over by reordering (kept as it is when the child asks for more cores
    than there are: it is infeasible)."""
    n_layers = problem.layout.n_layers
    x_old, omega = problem.split(parent_row)
    extra = np.asarray(ints[:n_layers], dtype=np.int64)
    x_new = PartitionGenotype(extra, problem.layout.spare - int(np.sum(extra)))
    if x_new.unused >= 0 and x_old.unused >= 0:
        omega = reorder(omega, problem.layout, x_old, x_new)
    return problem.join(x_new, omega, tuple(int(k) for k in ints[n_layers:]))
