"""The multi-objective run: pymoo's ask → evaluate → tell, with the engine's evaluators.

``ParetoSearch`` builds the problem (``problem``), the operators (``operators``) and the
algorithm its settings name (``algorithms``), then asks the algorithm for a generation,
evaluates it through its evaluator (the model, the simulator or an external command, on
local processes or a Dask cluster) and tells it what came back. Every evaluation is a
``Record`` (``engine.search.record``), yielded as an ``Event`` like the nested ES's; the
front is the non-dominated set of every feasible evaluation, so it holds each heuristic's
point or points that dominate it.

Objectives come by name from ``engine.search.config.objectives``. The per-core limits and
the cores available are pymoo constraints: ``G[0]`` counts the layers whose split breaks a
core limit, ``G[1]`` the cores asked beyond those available (on a Mosaic, plus the crossbar
rows its tiles lack: ``engine.mosaic``); a mapping that breaks one is not evaluated.
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
from collections.abc import Iterator
from dataclasses import dataclass, field, replace

import numpy as np
from pymoo.core.evaluator import Evaluator
from pymoo.util.nds.non_dominated_sorting import NonDominatedSorting

from engine.errors import AllFailedError, InputFileError, SpecError
from engine.hardware import Hardware
from engine.hardware.codesign import Codesign, core_cap, hardware_metrics, variant
from engine.mapping.assignment import Mapping
from engine.mapping.resources import memory_key
from engine.model.network import Network
from engine.search.config import (
    default_evaluator,
    objectives,
    predictor_setting,
    require_hardware_for,
    searches,
)
from engine.search.evaluators import Candidate, ModelEvaluator
from engine.search.genotype import decode, encode, layout_for
from engine.search.history import History
from engine.search.pareto.algorithms import Parts
from engine.search.pareto.config import ParetoConfig
from engine.search.pareto.operators import MappingCrossover, MappingMutation, MappingSampling
from engine.search.pareto.problem import MappingProblem, row_key
from engine.search.record import Event, Record, better

__all__ = ["ParetoResult", "ParetoSearch", "non_dominated"]

INFEASIBLE = 1e30  # the objective values pymoo sees for a mapping that breaks a constraint


@dataclass
class ParetoResult:
    config: ParetoConfig
    evaluations: list[Record]
    front: list[Record]
    heuristics: dict  # starting point's name -> its Record
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


class ParetoSearch:
    """One multi-objective run: ``iter_run`` yields an ``Event`` per evaluation, ``run``
    returns the ``ParetoResult``. ``evaluator``: a ``ModelEvaluator`` (default),
    ``SimulatorEvaluator`` or ``CommandEvaluator``, whose ``evaluate_batch`` runs where its
    executor says (local processes, a Dask cluster). ``start``: a mapping evaluated first.
    ``known``: (cores per population, placement, co-design choice) → the ``Record`` of an
    earlier run of the same settings (``read_history``), taken instead of evaluated.
    ``codesign``: hardware parameters the run chooses too (SENMap §IV-H)."""

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
        # known mappings are taken instead of evaluated, so the run resumes where an earlier
        # one stopped (same seed, same values: pymoo asks for the same mappings)
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
            self._evaluate, constrained=cfg.spec.constrained,
        )  # fmt: skip
        self._variants[base] = (hardware, self.layout, self.evaluator)
        start_pair = None if start is None else encode(self.layout, network, start)
        self._start_key = (  # which mapping the run started from (its settings say)
            None if start_pair is None
            else hashlib.sha1(row_key(self.problem.join(*start_pair))).hexdigest()[:16]
        )  # fmt: skip
        self._sampling = MappingSampling(hardware, cfg, start_pair)
        self.algorithm = cfg.spec.build(
            Parts(
                self._sampling, MappingCrossover(cfg.eta_crossover),
                MappingMutation(cfg.eta_mutation, cfg.operators), cfg.pop_size,
                cfg.n_offspring, len(cfg.objectives),
            )
        )  # fmt: skip
        self.algorithm.setup(self.problem, termination=("n_eval", cfg.budget), seed=cfg.seed)
        self.history = History()  # every evaluation, in order
        self.named: dict[str, Record] = {}  # each starting point's evaluation
        self.generation = 0
        self._best: Record | None = None

    @property
    def evaluations(self) -> History:
        """Every evaluation so far (the run's ``history``)."""
        return self.history

    @property
    def remaining(self) -> int:
        return self.config.budget - len(self.history)

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

    def check_known(self, where) -> list[str]:
        """Rate every ``known`` mapping again with the model and refuse (``InputFileError``
        naming ``where`` and the record) one whose figures differ from what its record says:
        a history changed by hand, or written by another version of the model, would put
        figures on the front that no evaluation gave. Returns the objectives it could not
        check: a simulated one (simulating every record again would cost the run again),
        or every one when an evaluator command rated the mappings (only it could say)."""
        names = list(self.config.objectives)
        if not isinstance(self.evaluator, ModelEvaluator):
            return names
        checked = [n for n in names if not objectives[n].simulated]
        by_variant: dict[tuple, list[Record]] = {}
        for r in self.known.values():
            by_variant.setdefault(r.knobs, []).append(r)
        for knobs, records in by_variant.items():
            hw = self._variant(knobs)[0]
            model = (
                self.evaluator if type(self.evaluator) is ModelEvaluator and knobs ==
                self.problem.base else ModelEvaluator(self.network, hw)
            )  # fmt: skip
            outcomes = model.evaluate_batch(
                [Candidate(r.cores_per_population, r.placement) for r in records]
            )
            choice = {} if self.codesign is None else self.codesign.choice(knobs)
            for r, o in zip(records, outcomes, strict=True):
                used = int(sum(r.cores_per_population))
                o = replace(o, metrics={**o.metrics, **hardware_metrics(hw, choice, used)})
                for n in checked:
                    again = objectives[n].value(o)
                    if not math.isclose(again, r.objectives[n], rel_tol=1e-9, abs_tol=1e-12):
                        raise InputFileError(
                            f"{where}: record {r.index} says {n} {r.objectives[n]:.6g}, but "
                            f"the model gives {again:.6g} for its mapping: the history was "
                            "changed since the run wrote it (or a MeshScope of another model "
                            "wrote it); it does not resume this run"
                        )
        return [n for n in names if n not in checked]

    def _evaluate(self, X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Objectives and constraints of the rows of X; appends their records."""
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
        constrained = self.problem.n_ieq_constr > 0  # (else a broken limit: the worst F)
        for i, (x, omega) in enumerate(pairs):
            o = reused[i].outcome if i in reused else outcomes.get(i)
            if i in decoded:
                cores, placement = decoded[i]
                values = (
                    {n: reused[i].objectives[n] for n in names} if i in reused
                    else {n: objectives[n].value(o) for n in names}
                )  # fmt: skip
                if all(math.isfinite(v) for v in values.values()) and (
                    constrained or not G[i].any()
                ):
                    F[i] = [values[n] for n in names]
            else:  # infeasible: not evaluated
                cores = x.cores_per_layer(self.layout)
                placement = omega[: max(0, min(int(np.sum(cores)), omega.size))]
                values = dict.fromkeys(names, math.inf)
            labels = self._sampling.labels if self.generation == 0 else {}
            names_here = labels.get(row_key(X[i]), [])
            record = Record.of(
                o, objectives=values, cores_per_population=cores, placement=placement,
                index=len(self.history), generation=self.generation,
                level="init" if self.generation == 0 else "offspring", accepted=False,
                note=", ".join(names_here), violations=(float(G[i, 0]), float(G[i, 1])),
                hardware={} if self.codesign is None else self.codesign.choice(knobs[i]),
                knobs=knobs[i],
            )  # fmt: skip
            self.history.append(record)
            for name in names_here:
                self.named[name] = record
        return F, G

    def iter_run(self, cancel=None) -> Iterator[Event]:
        """Run until the budget is spent or ``cancel.is_set()`` (checked between
        generations); yield an ``Event`` per evaluation."""
        while self.remaining > 0 and not (cancel is not None and cancel.is_set()):
            if not self.algorithm.has_next():
                break
            pop = self.algorithm.ask()
            if pop is None or len(pop) == 0:
                break
            asked = len(pop)
            pop = pop[: self.remaining]
            start = len(self.history)
            Evaluator().eval(self.problem, pop)  # through MappingProblem.rate: _evaluate
            if len(pop) == asked:  # (the budget's last, cut generation ends the run untold)
                self.algorithm.tell(infills=pop)
            self.generation += 1
            for r in self.history[start:]:
                self._best = better(self._best, r)
                yield Event(r.index + 1, self.config.budget, self._best or r, r)

    def run(self, cancel=None, checkpoint=None, callback=None) -> ParetoResult:
        """``iter_run`` to its end, each event to ``callback``; the result. A pareto run
        keeps no checkpoint (``checkpoint`` must be None): it resumes from its history."""
        if checkpoint is not None:
            raise SpecError("a pareto run keeps no checkpoint: it resumes from its --history")
        for event in self.iter_run(cancel):
            if callback is not None:
                callback(event)
        return self.result(cancelled=self.remaining > 0)

    def result(self, cancelled: bool = False) -> ParetoResult:
        ok = [e for e in self.history if e.feasible]
        if not ok:
            first = self.history[0].note if self.history and self.history[0].failed else ""
            raise AllFailedError(
                f"none of {len(self.history)} evaluations gave a feasible mapping"
                + (f"; the first failure: {first or 'infeasible'}" if self.history else "")
            )
        names = self.config.objectives
        points = np.array([[e.objectives[n] for n in names] for e in ok])
        front = [ok[i] for i in non_dominated(points)]
        front.sort(key=lambda e: tuple(e.objectives[n] for n in names))
        return ParetoResult(
            self.config, list(self.history), front, dict(self.named), cancelled, self.settings()
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
            **predictor_setting(self.evaluator),
        }


searches.add(
    "pareto",
    ParetoSearch,
    doc="SENMap's multi-objective search on pymoo (engine.search.pareto.algorithms)",
)
