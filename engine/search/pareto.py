"""Multi-objective mapping search on pymoo (SENMap §IV-D): NSGA-II, NSGA-III and a GA.

The search space is the Loihi 2 mapping ES's (``engine.search.genotype``): a mapping is one
integer vector, the partitioning genotype's extra cores per layer ``x_1 … x_L`` followed by
the placement genotype ω, a permutation of the hardware's cores. pymoo has no variable type
for integers plus a permutation, so ``MappingSampling``, ``MappingCrossover`` and
``MappingMutation`` are pymoo operators written over the engine's own:

* sampling: the heuristic mappings (packed/spread × row/column at min+K, as the nested ES
  starts), then random ones (resource additions and redistributions from min+K, a random ω);
* crossover: integer SBX on x (SENMap Table II: η = 3), each child's ω its parent's carried
  to the new core counts by the reordering operator, so every layer keeps its cores;
* mutation: integer polynomial mutation on x (η = 3), reordering, then a swap, inversion or
  scramble of ω.

Objectives come by name from ``engine.search.config.objectives`` (latency, energy, cores,
area, max-link-utilization, the SNN hypergraphs metrics, the simulated latency). The per-core
limits and the cores available are pymoo constraints: ``G[0]`` counts the layers whose
split breaks a core limit, ``G[1]`` the cores asked beyond those available (on a Mosaic,
plus the crossbar rows its tiles lack: ``engine.mosaic``). Every evaluation is kept
(``ParetoResult.evaluations``; CSV via ``write_history``); the front is the non-dominated set
of every feasible evaluation, so it holds the heuristics' points or points that dominate them.
"""

from __future__ import annotations

import csv
import dataclasses
import hashlib
import io
import json
import math
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field, replace

import numpy as np
from pymoo.algorithms.moo.nsga2 import NSGA2
from pymoo.algorithms.moo.nsga3 import NSGA3
from pymoo.algorithms.soo.nonconvex.ga import GA
from pymoo.core.crossover import Crossover
from pymoo.core.evaluator import Evaluator
from pymoo.core.mutation import Mutation
from pymoo.core.problem import Problem
from pymoo.core.sampling import Sampling
from pymoo.operators.crossover.sbx import SBX
from pymoo.operators.mutation.pm import PM
from pymoo.util.nds.non_dominated_sorting import NonDominatedSorting
from pymoo.util.ref_dirs import get_reference_directions

from engine.codesign import Codesign, core_cap, hardware_metrics, variant
from engine.errors import AllFailedError, InputFileError, OutputFileError, SpecError
from engine.hardware import Hardware
from engine.io.files import (
    appender,
    atomic_open,
    csv_field_limit,
    csv_rows,
    cut,
    parse_json,
    read_bytes,
    read_text,
    reason,
)
from engine.mapping import Mapping
from engine.network import Network
from engine.placement.fill import core_order
from engine.resources import memory_key
from engine.search.config import heuristics, objectives, require_hardware_for
from engine.search.evaluators import Candidate, ModelEvaluator, Outcome, default_evaluator
from engine.search.genotype import Layout, PartitionGenotype, decode, encode, layout_for
from engine.search.genotype import to_mapping as genotype_mapping
from engine.search.history import ENDS
from engine.search.operators import OperatorParams, mutate_partition, mutate_placement, reorder

__all__ = [
    "ALGORITHMS",
    "HistoryWriter",
    "MappingCrossover",
    "MappingMutation",
    "MappingProblem",
    "MappingSampling",
    "ParetoConfig",
    "ParetoEvaluation",
    "ParetoResult",
    "ParetoSearch",
    "non_dominated",
    "read_history",
    "write_history",
]

ALGORITHMS = ("nsga2", "nsga3", "ga")
# SENMap Table II: population 30 (GA) and 40 (NSGA-II), 10 offspring for NSGA-II (the GA's
# offspring are not given: a whole population, pymoo's default); NSGA-III as NSGA-II
POPULATION = {"ga": 30, "nsga2": 40, "nsga3": 40}
OFFSPRING = {"ga": None, "nsga2": 10, "nsga3": 10}
INFEASIBLE = 1e30  # the objective values pymoo sees for a mapping that breaks a constraint


@dataclass(frozen=True)
class ParetoConfig:
    """Settings of one multi-objective run (defaults: SENMap Table II)."""

    objectives: tuple[str, ...] = ("latency", "energy")
    algorithm: str = "nsga2"
    budget: int = field(default=2000, metadata={"help": "evaluations"})
    population: int = field(default=0, metadata={"help": "population size (0: Table II's)"})
    offspring: int = field(default=0, metadata={"help": "offspring a generation (0: Table II's)"})
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
        if self.algorithm not in ALGORITHMS:
            raise SpecError(
                f"unknown algorithm {self.algorithm!r}: choose one of {', '.join(ALGORITHMS)}"
            )
        if self.algorithm == "ga" and len(self.objectives) != 1:
            raise SpecError(
                "the GA minimizes one objective; give one (--objectives latency) or use nsga2"
            )
        if self.algorithm == "nsga3" and len(self.objectives) < 2:
            raise SpecError(
                "NSGA-III spreads a front over reference directions: give two or more "
                "objectives, or use the GA for one"
            )
        if self.budget < 1 or self.population < 0 or self.offspring < 0 or self.init_k < 0:
            raise SpecError("budget must be at least 1; population, offspring and init-k ≥ 0")
        if not (self.eta_crossover > 0 and self.eta_mutation > 0):
            raise SpecError("the distribution indices η must be positive")

    @property
    def pop_size(self) -> int:
        return self.population or POPULATION[self.algorithm]

    @property
    def n_offspring(self) -> int | None:
        return self.offspring or OFFSPRING[self.algorithm]


@dataclass(frozen=True)
class ParetoEvaluation:
    """One evaluated mapping: its objectives by name, its constraints, its genotype."""

    index: int
    generation: int
    objectives: dict  # name -> value (∞ when infeasible or failed)
    # (layers over a core limit, cores beyond the hardware's + on a Mosaic the rows its tiles lack)
    violations: tuple[float, float]
    cores_per_population: tuple[int, ...]
    placement: tuple[int, ...] = field(repr=False)  # global core of every partition
    outcome: Outcome | None = field(default=None, repr=False)
    note: str = ""  # the starting point's name (a heuristic, or start), else ''
    error: str = ""  # why the evaluation failed ('' if it did not)
    hardware: dict = field(default_factory=dict)  # the co-design choice: parameter -> value
    knobs: tuple[int, ...] = ()  # … as the indices of those values

    @property
    def feasible(self) -> bool:
        return not any(self.violations) and all(math.isfinite(v) for v in self.objectives.values())

    def mapping(self, network: Network) -> Mapping:
        return genotype_mapping(network, self.cores_per_population, self.placement)


@dataclass
class ParetoResult:
    config: ParetoConfig
    evaluations: list[ParetoEvaluation]
    front: list[ParetoEvaluation]
    heuristics: dict  # heuristic name -> its ParetoEvaluation
    cancelled: bool = False
    settings: dict = field(default_factory=dict)  # what a resumed run must share (``settings``)


def non_dominated(points: np.ndarray) -> np.ndarray:
    """Indices of the rows of ``points`` (minimized) no other row dominates; of equal rows,
    the first."""
    if points.shape[0] == 0:
        return np.zeros(0, dtype=np.int64)
    front = NonDominatedSorting().do(points, only_non_dominated_front=True)
    front = np.sort(np.asarray(front, dtype=np.int64))
    _, first = np.unique(points[front], axis=0, return_index=True)
    return front[np.sort(first)]


# ------------------------------------------------------------------ the problem
class MappingProblem(Problem):
    """A mapping as ``L + K + C`` integers: extra cores per layer, the index of each co-design
    parameter's value (``engine.codesign``; none without co-design), then ω (``decode``)."""

    def __init__(
        self, layout: Layout, n_obj: int, codesign=None, base=(), layout_of=None, cap_of=None,
        rate=None,
    ):  # fmt: skip
        self.layout = layout
        self.rate = rate  # rows -> (F, G): how pymoo's evaluator gets objectives, constraints
        self.cap_of = cap_of or (lambda knobs: layout.c_tot)  # the cores a variant has
        self.codesign = codesign
        self.n_knobs = 0 if codesign is None else len(codesign.names)
        self.base = tuple(base)  # the knobs' indices nearest the preset's own values
        self.layout_of = layout_of or (lambda knobs: layout)  # the layout of a variant
        n_layers, c_tot = layout.n_layers, layout.c_tot
        cap = np.minimum(layout.c_max - layout.c_min, layout.spare)
        knob_hi = [] if codesign is None else [len(v) - 1 for v in codesign.values]
        xl = np.zeros(n_layers + self.n_knobs + c_tot)
        xu = np.concatenate([cap, knob_hi, np.full(c_tot, max(c_tot - 1, 0))]).astype(float)
        super().__init__(n_var=xl.size, n_obj=n_obj, n_ieq_constr=2, xl=xl, xu=xu, vtype=int)

    @property
    def n_int(self) -> int:
        """The integer genes (core counts, co-design choices) before the permutation ω."""
        return self.layout.n_layers + self.n_knobs

    def split(self, row) -> tuple[PartitionGenotype, np.ndarray]:
        """(x, ω) of one row; x's unused count may be negative (too many cores: G[1] > 0)."""
        row = np.asarray(row, dtype=np.int64)
        extra = row[: self.layout.n_layers]
        return PartitionGenotype(extra, self.layout.spare - int(extra.sum())), row[self.n_int :]

    def knobs(self, row) -> tuple[int, ...]:
        """The co-design choice of one row (value indices; () without co-design)."""
        return tuple(int(k) for k in np.asarray(row)[self.layout.n_layers : self.n_int])

    def join(self, x: PartitionGenotype, omega: np.ndarray, knobs=None) -> np.ndarray:
        knobs = self.base if knobs is None else knobs
        return np.concatenate([x.extra, np.asarray(knobs, dtype=np.int64), omega]).astype(np.int64)

    def violations(self, x: PartitionGenotype, knobs=()) -> tuple[float, float]:
        """(layers whose split breaks a core limit — of the hardware the knobs choose —, cores
        beyond those available)."""
        layout = self.layout_of(tuple(knobs))
        cores = x.cores_per_layer(self.layout)
        broken = sum(not layout.fits(i, int(c)) for i, c in enumerate(cores))
        cap = min(self.cap_of(tuple(knobs)), self.layout.c_tot)  # a variant's, or all
        beyond = max(0, int(cores.sum()) - cap)
        return float(broken), float(beyond)

    def _evaluate(self, x, out, *args, **kwargs):
        out["F"], out["G"] = self.rate(x)


def _key(row) -> bytes:
    return np.asarray(row, dtype=np.int64).tobytes()


def _rows(problem: MappingProblem, items) -> np.ndarray:
    return np.array([problem.join(*item) for item in items], dtype=np.int64)


class MappingSampling(Sampling):
    """The heuristic mappings first (and a given start), then random feasible ones."""

    def __init__(self, hardware: Hardware, config: ParetoConfig, start=None):
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
        rows = _rows(problem, [(x, omega, knobs) for x, omega, knobs, _ in items])
        # pymoo drops duplicate rows from the first population: names go by row, not position
        for row, (_, _, _, name) in zip(rows, items, strict=True):
            if name:
                self.labels.setdefault(_key(row), []).append(name)
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


# ------------------------------------------------------------------ the run
class ParetoSearch:
    """One multi-objective run: ``iter_run`` yields the evaluations of each generation,
    ``run`` returns the ``ParetoResult``. ``evaluator``: a ``ModelEvaluator`` (default),
    ``SimulatorEvaluator`` or ``CommandEvaluator``, whose ``evaluate_batch`` runs where its
    executor says (local processes, a Dask cluster). ``start``: a mapping evaluated first."""

    def __init__(
        self,
        network: Network,
        hardware: Hardware,
        config: ParetoConfig | None = None,
        *,
        evaluator=None,
        start: Mapping | None = None,
        known: dict | None = None,
        codesign: Codesign | None = None,
    ):
        self.network, self.hardware = network, hardware
        self.config = cfg = config or ParetoConfig()
        require_hardware_for(cfg.objectives, hardware)
        # hardware co-design (SENMap §IV-H): each row also chooses a value of every parameter
        # of ``codesign``; a variant of the hardware gets its own layout and evaluator (built
        # here, in this process: the model's or the simulator's, as the objectives need)
        self.codesign = codesign
        self._variants: dict[tuple, tuple] = {}
        self._splits: dict = {}  # memory_key -> population -> PopulationSplit
        # (cores per population, placement, co-design) -> objectives of an earlier run of the
        # settings (``read_history``): taken instead of evaluated, so the run resumes where
        # that one stopped (same seed, same values: pymoo asks for the same mappings)
        self.known = dict(known or {})
        self.reused = 0
        self.layout = layout_for(network, hardware)
        simulated = any(objectives[n].simulated for n in cfg.objectives)
        self.evaluator = evaluator or default_evaluator(
            network, hardware, "simulated-latency" if simulated else "latency"
        )
        if codesign is not None and not isinstance(self.evaluator, ModelEvaluator):
            raise SpecError(
                "co-design rates hardware variants with the model or the simulator, not with "
                "an evaluator command (which knows only the preset's hardware)"
            )
        self._simulated = simulated
        base = () if codesign is None else codesign.base(hardware)
        self.problem = MappingProblem(
            self.layout, len(cfg.objectives), codesign, base,
            lambda knobs: self._variant(knobs)[1],
            lambda knobs: (self.layout.c_tot if codesign is None
                           else core_cap(hardware, codesign.choice(knobs))),
            self._evaluate,
        )  # fmt: skip
        self._variants[base] = (hardware, self.layout, self.evaluator)
        start_pair = None if start is None else encode(self.layout, network, start)
        self._start_key = (  # which mapping the run started from (its settings say)
            None if start_pair is None
            else hashlib.sha1(_key(self.problem.join(*start_pair))).hexdigest()[:16]
        )  # fmt: skip
        self._sampling = MappingSampling(hardware, cfg, start_pair)
        self.algorithm = self._algorithm()
        self.algorithm.setup(self.problem, termination=("n_eval", cfg.budget), seed=cfg.seed)
        self.evaluations: list[ParetoEvaluation] = []
        self.named: dict[str, ParetoEvaluation] = {}  # each starting point's evaluation
        self.generation = 0

    def _algorithm(self):
        cfg = self.config
        common = dict(
            pop_size=cfg.pop_size,
            sampling=self._sampling,
            crossover=MappingCrossover(cfg.eta_crossover),
            mutation=MappingMutation(cfg.eta_mutation, cfg.operators),
            eliminate_duplicates=True,
        )
        if cfg.n_offspring:
            common["n_offsprings"] = cfg.n_offspring
        if cfg.algorithm == "ga":
            return GA(**common)
        if cfg.algorithm == "nsga2":
            return NSGA2(**common)
        n_obj = len(cfg.objectives)
        partitions = 1  # the most Das–Dennis partitions whose directions the population covers
        while partitions < cfg.pop_size and _ref_count(n_obj, partitions + 1) <= cfg.pop_size:
            partitions += 1
        ref_dirs = get_reference_directions("das-dennis", n_obj, n_partitions=partitions)
        return NSGA3(ref_dirs, **common)

    @property
    def remaining(self) -> int:
        return self.config.budget - len(self.evaluations)

    def _variant(self, knobs: tuple) -> tuple:
        """(hardware, layout, evaluator) of the co-design choice ``knobs``."""
        got = self._variants.get(knobs)
        if got is None:
            hw = variant(self.hardware, self.codesign.choice(knobs))
            objective = "simulated-latency" if self._simulated else "latency"
            splits = self._splits.setdefault(memory_key(hw), {})  # counted alike: shared
            layout = layout_for(self.network, hw, splits=splits)
            got = (hw, layout, default_evaluator(self.network, hw, objective))
            self._variants[knobs] = got
        return got

    def _evaluate(self, X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Objectives and constraints of the rows of X; appends their evaluations."""
        names = self.config.objectives
        F = np.full((X.shape[0], len(names)), INFEASIBLE)
        G = np.zeros((X.shape[0], 2))
        pairs = [self.problem.split(row) for row in X]
        knobs = [self.problem.knobs(row) for row in X]
        todo: dict[tuple, list[int]] = {}  # variant -> rows to evaluate on it
        decoded, reused = {}, {}
        for i, (x, omega) in enumerate(pairs):
            G[i] = self.problem.violations(x, knobs[i])
            if not G[i].any():
                cores, placement = decode(self.layout, x, omega)
                decoded[i] = (cores, placement)
                hit = self.known.get((tuple(cores), tuple(placement.tolist()), knobs[i]))
                if hit is not None:
                    reused[i] = hit
                else:
                    todo.setdefault(knobs[i], []).append(i)
        outcomes = {}
        for k, rows in todo.items():
            hw, _, evaluator = self._variant(k)
            batch = evaluator.evaluate_batch([Candidate(*decoded[i]) for i in rows])
            for i, o in zip(rows, batch, strict=True):
                choice = {} if self.codesign is None else self.codesign.choice(k)
                used = int(np.sum(decoded[i][0]))
                outcomes[i] = replace(
                    o, metrics={**o.metrics, **hardware_metrics(hw, choice, used)}
                )
                # on a Mosaic, crossbar rows its tiles lack break the fit like missing cores
                G[i, 1] += outcomes[i].metrics.get("routing_overflow", 0.0)
        self.reused += len(reused)
        for i, (x, omega) in enumerate(pairs):
            o = outcomes.get(i)
            if i in decoded:
                cores, placement = decoded[i]
                values = reused[i] if i in reused else {n: objectives[n].value(o) for n in names}
                if all(math.isfinite(v) for v in values.values()):
                    F[i] = [values[n] for n in names]
            else:  # infeasible: not evaluated
                cores = tuple(x.cores_per_layer(self.layout).tolist())
                used = int(np.sum(cores))
                placement = omega[: max(0, min(used, omega.size))]
                values = dict.fromkeys(names, math.inf)
            index = len(self.evaluations)
            names_here = self._sampling.labels.get(_key(X[i]), []) if self.generation == 0 else []
            self.evaluations.append(
                ParetoEvaluation(
                    index=index,
                    generation=self.generation,
                    objectives=values,
                    violations=(float(G[i, 0]), float(G[i, 1])),
                    cores_per_population=tuple(int(c) for c in cores),
                    placement=tuple(int(c) for c in placement),
                    outcome=o,
                    note=", ".join(names_here),
                    error=o.error if o is not None else "",
                    hardware={} if self.codesign is None else self.codesign.choice(knobs[i]),
                    knobs=knobs[i],
                )
            )
            for name in names_here:
                self.named[name] = self.evaluations[-1]
        return F, G

    def iter_run(self, cancel=None) -> Iterator[list[ParetoEvaluation]]:
        """Run until the budget is spent or ``cancel.is_set()``; yield each generation's
        evaluations."""
        while self.remaining > 0 and not (cancel is not None and cancel.is_set()):
            if not self.algorithm.has_next():
                break
            pop = self.algorithm.ask()
            if pop is None or len(pop) == 0:
                break
            pop = pop[: self.remaining]
            start = len(self.evaluations)
            Evaluator().eval(self.problem, pop)  # through MappingProblem.rate: _evaluate
            self.algorithm.tell(infills=pop)
            self.generation += 1
            yield self.evaluations[start:]

    def run(self, cancel=None, callback=None) -> ParetoResult:
        for batch in self.iter_run(cancel):
            if callback is not None:
                callback(batch)
        return self.result(cancelled=self.remaining > 0)

    def result(self, cancelled: bool = False) -> ParetoResult:
        ok = [e for e in self.evaluations if e.feasible]
        if not ok:
            raise AllFailedError(
                f"none of {len(self.evaluations)} evaluations gave a feasible mapping"
                + (
                    f"; the first failure: {self.evaluations[0].error or 'infeasible'}"
                    if self.evaluations
                    else ""
                )  # fmt: skip
            )
        names = self.config.objectives
        points = np.array([[e.objectives[n] for n in names] for e in ok])
        front = [ok[i] for i in non_dominated(points)]
        front.sort(key=lambda e: tuple(e.objectives[n] for n in names))
        heur = dict(self.named)
        return ParetoResult(
            self.config, list(self.evaluations), front, heur, cancelled, self.settings()
        )

    def settings(self) -> dict:
        """What decides which mappings the run asks for, beside its objectives: a history
        resumes only a run with the same (``read_history``)."""
        cfg = self.config
        return {
            "network": self.network.fingerprint,
            "hardware": self.hardware.fingerprint,
            "algorithm": cfg.algorithm,
            "seed": cfg.seed,
            "population": cfg.pop_size,
            "offspring": cfg.n_offspring,
            "eta": [cfg.eta_crossover, cfg.eta_mutation],
            "init_k": cfg.init_k,
            "heuristics": list(cfg.heuristics),
            "operators": dataclasses.asdict(cfg.operators),
            "start": self._start_key,
            "codesign": None
            if self.codesign is None
            else dict(zip(self.codesign.names, map(list, self.codesign.values), strict=True)),
        }


def _ref_count(n_obj: int, partitions: int) -> int:
    """How many Das–Dennis reference directions ``n_obj`` objectives get at ``partitions``."""
    return math.comb(n_obj + partitions - 1, partitions)


# ------------------------------------------------------------------ history
def _header(names) -> list[str]:
    return ["index", "generation", *names, "cv_limits", "cv_cores", "feasible", "note",
            "codesign", "cores_per_population", "placement"]  # fmt: skip


def _row(e: ParetoEvaluation, names) -> list:
    return [e.index, e.generation, *(repr(e.objectives[n]) for n in names), *e.violations,
            int(e.feasible), f"{e.note}: {e.error}" if e.error else e.note,
            " ".join(map(str, e.knobs)), " ".join(map(str, e.cores_per_population)),
            " ".join(map(str, e.placement))]  # fmt: skip


class HistoryWriter:
    """Every evaluation of a run as a CSV row, appended and flushed generation by generation
    (so a killed run leaves what it evaluated; ``read_history`` takes it back): index,
    generation, each objective, the two constraint values, feasible, note, cores per
    population and placement (space-separated global core ids)."""

    def __init__(self, path, names, settings: dict, *, fresh: bool = True):
        self.names = tuple(names)
        self.ended: str | None = None  # how the run ended, once that line is written
        if not fresh:
            _drop_cut_line(path)
        self._file = appender(path, what="history file", fresh=fresh)
        self._csv = csv.writer(self._file, lineterminator="\n")
        if fresh:
            self._file.write(_settings_line(settings))
            self._csv.writerow(_header(self.names))
            self._file.flush()

    def add(self, evaluations) -> None:
        for e in evaluations:
            self._csv.writerow(_row(e, self.names))
        self._file.flush()

    def end(self, how: str, evaluations: int) -> None:
        """The run ended (``complete``, ``cancelled`` or ``failed``) after ``evaluations``:
        the last line, a comment (a resumed run removes it and writes its own)."""
        if how not in ENDS:
            raise ValueError(f"a run ends {' or '.join(ENDS)}, not {how!r}")
        self._file.write(f"{END}{how}, {evaluations} evaluations\n")
        self._file.flush()
        self.ended = how

    def close(self) -> None:
        self._file.close()


SETTINGS = "# pareto run "  # the first line of a history: the run's settings as JSON
END = "# end: "  # its last line, once the run ended: how, and after how many evaluations


def _settings_line(settings: dict) -> str:
    return SETTINGS + json.dumps(settings, sort_keys=True) + "\n"


def _drop_cut_line(path) -> None:
    """Cut a history file back to its last whole line (a kill may leave half a row), and
    its end line off (the run goes on)."""
    data = read_bytes(path, "history file")
    lines = data.splitlines(keepends=True)
    if lines and not lines[-1].endswith(b"\n"):
        lines.pop()
    while lines and lines[-1].startswith(END.encode()):
        lines.pop()
    keep = sum(map(len, lines))
    try:
        if keep < len(data):
            os.truncate(path, keep)
    except OSError as e:
        raise OutputFileError(f"cannot write the history file {path}: {reason(e)}") from None


def write_history(path, result: ParetoResult) -> None:
    """Every evaluation of ``result`` as the CSV ``HistoryWriter`` writes, in one go."""
    names = result.config.objectives
    with atomic_open(path, "w", what="history file") as f:
        f.write(_settings_line(result.settings))
        w = csv.writer(f, lineterminator="\n")
        w.writerow(_header(names))
        for e in result.evaluations:
            w.writerow(_row(e, names))


def read_history(path, names, settings: dict | None = None) -> tuple[dict, int]:
    """(the feasible evaluations of a history file, (cores per population, placement,
    co-design choice) → objectives by name, for ``ParetoSearch(known=…)``; how many whole
    rows it has). A last line cut short by a kill is left out. ``InputFileError`` for a
    history of other objectives or (given ``settings``, ``ParetoSearch.settings``) of a run
    with other settings — it would not resume that run — and for a malformed row."""
    names = tuple(names)
    known, rows = {}, 0
    text = read_text(path, "history file")
    if not text.endswith("\n"):  # a kill cut the last row short: it does not count
        text = text[: text.rfind("\n") + 1]
    first, _, text = text.partition("\n")
    text = re.sub(r"(?m)^#.*$", "", text)  # an end line (a resumed run's, or the last)
    if not first.startswith(SETTINGS):
        raise InputFileError(f"{path}: not the history of a meshscope pareto run")
    try:
        theirs = parse_json(first[len(SETTINGS) :], str(path), line=1)
    except InputFileError:
        raise InputFileError(f"{path}: its first line (the run's settings) is damaged") from None
    if not isinstance(theirs, dict):
        raise InputFileError(f"{path}: its first line (the run's settings) is damaged")
    if settings is not None:
        mine = json.loads(json.dumps(settings))
        differ = sorted(k for k in set(mine) | set(theirs) if mine.get(k) != theirs.get(k))
        if differ:
            said = ", ".join(f"{k} {theirs.get(k)!r}" for k in differ)
            raise InputFileError(
                f"{path} is the history of a run with other settings ({said}); resume it "
                "with the settings it was run with"
            )
    with csv_field_limit(len(text)):  # a placement lists every core: its field may be long
        table = list(csv_rows(csv.reader(io.StringIO(text)), str(path)))
    header = table[0] if table else None
    if header != _header(names):
        hint = ""
        if header and "cv_limits" in header:
            have = ",".join(header[2 : header.index("cv_limits")])
            hint = f" (its objectives are {have}: resume with --objectives {have})"
        raise InputFileError(
            f"{path}: not the history of a run of objectives {','.join(names)}{hint}"
        )
    width = len(header)
    for line, row in enumerate(table[1:], start=3):
        if not row:  # where an end line was
            continue
        try:
            if len(row) != width:
                raise ValueError(f"{len(row)} fields, not {width}")
            values = dict(zip(names, map(float, row[2 : 2 + len(names)]), strict=True))
            feasible = row[header.index("feasible")] == "1"
            knobs = tuple(int(c) for c in row[-3].split())
            cores = tuple(int(c) for c in row[-2].split())
            placement = tuple(int(c) for c in row[-1].split())
        except ValueError as e:
            raise InputFileError(
                f"{path}, line {line}: not a history row ({cut(str(e))})"
            ) from None
        rows += 1
        if feasible:
            known[(cores, placement, knobs)] = values
    return known, rows
