"""Fitness evaluators: the built-in model, the cycle-level simulator, or an external command
(hardware in the loop).

An evaluator maps a *candidate* — cores per population and the physical cores of
its partitions — to an ``Outcome``. ``evaluate_batch`` evaluates the offspring of one
generation, in parallel when ``workers > 1``; results come back in order, so a run
does not depend on the number of workers.

External command protocol: the mapping JSON (``engine.mapping.assignment.mapping_to_dict``) on the
command's stdin; one JSON object ``{"latency_us": …, "energy_uj": …}`` (optionally
``"power_w"``) on its stdout. A non-zero exit, a time-out or anything unparsable is a
failed evaluation: recorded, never selected, and the run goes on.
"""

from __future__ import annotations

import json
import math
import shlex
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace

import numpy as np

from engine.errors import EvaluatorError, MeshScopeError, SpecError
from engine.evaluation.cost import Evaluator
from engine.executors import ProcessExecutor, Setup
from engine.hardware import Hardware
from engine.io.process import ProcessGroups, run_bounded
from engine.mapping.assignment import Mapping, Partition, Placement, mapping_to_dict
from engine.mapping.layered_graph import LayeredGraphs
from engine.model.network import Network

__all__ = [
    "Candidate", "Outcome", "ModelEvaluator", "SimulatorEvaluator", "CommandEvaluator",
    "model_outcome",
]  # fmt: skip


@dataclass(frozen=True)
class Candidate:
    cores_per_population: tuple[int, ...]
    placement: np.ndarray  # global core id of every partition


@dataclass(frozen=True)
class Outcome:
    latency_us: float
    energy_uj: float
    power_w: float
    bottleneck: str = ""
    error: str = ""
    terms_us: dict = field(default_factory=dict)  # the max-affine terms, when the model rated it
    simulated_us: float = math.nan  # the simulated step, when the simulator rated it
    # what else is known of the mapping, by name: ``cores_used`` always (from the candidate);
    # from the model also ``chips_used``, ``max_link_utilization`` (the busiest link's share
    # of the step) and the SNN hypergraphs paper's metrics
    # (``engine.evaluation.cost.Evaluation.metrics``)
    metrics: dict = field(default_factory=dict)

    @property
    def failed(self) -> bool:
        return bool(self.error)

    @classmethod
    def failure(cls, error: str) -> Outcome:
        return cls(math.inf, math.inf, math.nan, "", error)


def model_outcome(
    full, network: Network, hardware: Hardware, mapping: Mapping, *, routing: bool = True
) -> Outcome:
    """The ``Outcome`` of ``mapping`` from the model's evaluation of it (``full``), with its
    metrics: the model's, ``cores_used``, ``chips_used``, ``max_link_utilization`` and, on a
    Mosaic, the routing memory (unless ``routing`` is False). What a search's objectives
    read of a mapping it did not make (the explorer's current one) comes from here too."""
    metrics = {k: float(v) for k, v in full.metrics.items() if v is not None}
    metrics["cores_used"] = float(full.cores_used)
    metrics["chips_used"] = float(full.chips_used)
    metrics["max_link_utilization"] = float(full.terms_us["link"] / full.latency_us)
    if routing and hardware.tiles is not None:
        metrics.update(mosaic_metrics(network, hardware, mapping))
    return Outcome(
        full.latency_us, full.energy_uj, full.power_w, full.bottleneck, "",
        dict(full.terms_us), metrics=metrics,
    )  # fmt: skip


def mosaic_metrics(network: Network, hardware: Hardware, mapping: Mapping) -> dict:
    """``routing_entries`` and ``routing_overflow`` (rows the tiles lack) of a mapping on a
    Mosaic (``engine.mosaic``): what its objectives and the Pareto search's constraint read."""
    from engine.mosaic.memory import nt_of_neurons, routing_memory

    memory = routing_memory(network, hardware, nt_of_neurons(network, hardware, mapping))
    lack = np.maximum(memory.rows - memory.capacity, 0)
    return {"routing_entries": float(memory.routing_entries), "routing_overflow": float(lack.sum())}


class ModelEvaluator:
    """The engine's model — the max-affine model, or another predictor of
    ``engine.predict.predictors`` (``predictor``) —; partition statistics cached per core
    split, and built from the per-layer-pair blocks a new split changes
    (``engine.mapping.layered_graph``)."""

    name = "model"

    def __init__(
        self, network: Network, hardware: Hardware, *, workers: int = 1, executor=None,
        cache: int = 32, predictor: str | None = None,
    ):  # fmt: skip
        from engine.predict import DEFAULT_PREDICTOR, evaluator_class

        self.predictor = predictor or DEFAULT_PREDICTOR
        self._evaluator_class = evaluator_class(self.predictor)  # (an unknown name: raises)
        self.network, self.hardware, self.workers = network, hardware, workers
        self._cache: OrderedDict[tuple, Evaluator] = OrderedDict()
        self._cache_size = cache
        self._graphs: LayeredGraphs | None = None  # built on first use (not in the parent
        # of worker processes)
        self.executor, self._own_executor = _executor(workers, executor)
        self._setup: Setup | None = None

    def _evaluator(self, cores: tuple[int, ...], placement) -> Evaluator:
        ev = self._cache.get(cores)
        if ev is None:
            if self._graphs is None:
                self._graphs = LayeredGraphs(self.network, self.hardware)
            partition, graph = self._graphs.partition_and_graph(cores)
            ev = self._evaluator_class(
                self.network, self.hardware, partition, placement, graph=graph
            )
            self._cache[cores] = ev
            if len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)
        else:
            self._cache.move_to_end(cores)
            ev.set_placement(placement)
        return ev

    def evaluate(self, candidate: Candidate) -> Outcome:
        try:
            ev = self._evaluator(candidate.cores_per_population, Placement(candidate.placement))
            full = ev.evaluation(locality=False)
        except MeshScopeError as e:
            return Outcome.failure(str(e))
        return model_outcome(full, ev.network, ev.hardware, Mapping(ev.partition, ev.placement))

    def evaluate_batch(self, candidates: list[Candidate]) -> list[Outcome]:
        """The outcomes of ``candidates``, in order: here, or on the executor's workers."""
        if self.executor is None or len(candidates) <= 1:
            return [self.evaluate(c) for c in candidates]
        if self._setup is None:
            self._setup = Setup(_build, (type(self), self.network, self.hardware, self._settings()))
        return self.executor.map(self._setup, candidates)

    def _settings(self) -> dict:
        """What a worker's copy of this evaluator is built with, beside network and hardware."""
        return {"predictor": self.predictor}

    def close(self, *, cancel: bool = False):
        """Close the executor this evaluator made; with ``cancel``, without waiting for the
        evaluations running on it."""
        if self._own_executor:
            self.executor.close(cancel=cancel)


class SimulatorEvaluator(ModelEvaluator):
    """The max-affine model's figures plus one time step simulated flit by flit.

    Every candidate is simulated with the same spikes (drawn once from ``seed``: common
    random numbers, so two mappings differ only by where their cores are), in ``mode``
    (``pipelined`` or ``fall-through``) and optionally with multicast packets. Outcomes are
    cached by mapping (core split and placement), so a search that revisits a mapping does
    not simulate it again.
    """

    name = "simulator"

    def __init__(
        self,
        network: Network,
        hardware: Hardware,
        *,
        mode: str = "pipelined",
        multicast: bool | None = None,
        seed: int = 0,
        workers: int = 1,
        executor=None,
        cache: int = 32,
        outcomes: int = 4096,
        limit_cycles: int = 50_000_000,
        predictor: str | None = None,
    ):
        from engine.simulate import MODES, draw_spikes

        if mode not in MODES:
            raise SpecError(f"the simulated step's mode is {' or '.join(MODES)}, not {mode!r}")
        super().__init__(
            network, hardware, workers=workers, executor=executor, cache=cache,
            predictor=predictor,
        )  # fmt: skip
        self.mode, self.multicast, self.seed = mode, multicast, seed
        self.limit_cycles = limit_cycles  # a step that takes longer is a failed evaluation
        self.spikes = draw_spikes(network.rate, "sample", seed=seed)
        self._outcomes: OrderedDict[tuple, Outcome] = OrderedDict()
        self._outcomes_size = outcomes

    def evaluate(self, candidate: Candidate) -> Outcome:
        from engine.pipeline import Mapped
        from engine.simulate import simulate_step

        key = (candidate.cores_per_population, np.asarray(candidate.placement).tobytes())
        hit = self._outcomes.get(key)
        if hit is not None:
            self._outcomes.move_to_end(key)
            return hit
        try:
            placement = Placement(candidate.placement)
            ev = self._evaluator(candidate.cores_per_population, placement)
            full = ev.evaluation(locality=False)
            mapped = Mapped(self.network, self.hardware, Mapping(ev.partition, placement), ev.graph)
            step = simulate_step(
                mapped, mode=self.mode, multicast=self.multicast, spikes=self.spikes,
                limit_cycles=self.limit_cycles,
            )  # fmt: skip
        except MeshScopeError as e:
            return Outcome.failure(str(e))
        out = replace(
            model_outcome(full, self.network, self.hardware, mapped.mapping),
            simulated_us=step.step_us,
        )
        self._outcomes[key] = out
        if len(self._outcomes) > self._outcomes_size:
            self._outcomes.popitem(last=False)
        return out

    def _settings(self) -> dict:
        return {
            "mode": self.mode, "multicast": self.multicast, "seed": self.seed,
            "limit_cycles": self.limit_cycles, "predictor": self.predictor,
        }  # fmt: skip


def _executor(workers: int, executor):
    """(the executor an evaluator uses, whether it owns it): the one given, else local
    processes when ``workers`` > 1, else none (evaluate in this process)."""
    if executor is not None:
        return executor, False
    if workers < 1:
        raise SpecError(f"workers must be at least 1, not {workers}")
    return (ProcessExecutor(workers), True) if workers > 1 else (None, False)


def _build(cls, network: Network, hardware: Hardware, settings: dict):
    """A worker's copy of an evaluator (``engine.executors.Setup``)."""
    return cls(network, hardware, **settings)


class CommandEvaluator:
    """Hardware in the loop: an external command rates each mapping."""

    name = "command"

    def __init__(
        self,
        network: Network,
        hardware: Hardware,
        command: str,
        *,
        timeout_s: float = 60.0,
        workers: int = 1,
        executor=None,
    ):
        self.network, self.hardware, self.command = network, hardware, command
        self.executor = executor  # a Dask cluster runs the command on its workers
        self._setup: Setup | None = None
        try:
            self.argv = shlex.split(command)
        except ValueError as e:  # an unclosed quotation, a trailing escape
            raise SpecError(f"cannot read the evaluator command {command!r}: {e}") from None
        if not self.argv:
            raise EvaluatorError("the evaluator command is empty: give --evaluator-cmd a command")
        if not (math.isfinite(timeout_s) and timeout_s > 0):
            raise SpecError(
                f"the evaluator's time-out must be a positive number of seconds, not {timeout_s}"
            )
        if workers < 1:
            raise SpecError(f"workers must be at least 1, not {workers}")
        self.timeout_s, self.workers = timeout_s, workers
        self._groups = ProcessGroups()

    def evaluate(self, candidate: Candidate) -> Outcome:
        mapping = Mapping(
            Partition.layered(self.network, candidate.cores_per_population),
            Placement(candidate.placement),
        )
        payload = json.dumps(mapping_to_dict(self.network, self.hardware, mapping))
        try:
            done = run_bounded(self.argv, payload, timeout_s=self.timeout_s, groups=self._groups)
        except OSError as e:
            return Outcome.failure(f"could not run {self.argv[0]!r}: {e.strerror or e}")
        if done.failure:
            return Outcome.failure(done.failure)
        if done.returncode != 0:
            tail = done.stderr.strip().splitlines()[-1:] or [""]
            return Outcome.failure(f"exit code {done.returncode}: {tail[0][:200]}")
        out = parse_command_output(done.stdout)
        if not out.failed:
            out = replace(out, metrics={"cores_used": float(sum(candidate.cores_per_population))})
        return out

    def evaluate_batch(self, candidates: list[Candidate]) -> list[Outcome]:
        if self.executor is not None and len(candidates) > 1:
            if self._setup is None:
                settings = {"command": self.command, "timeout_s": self.timeout_s}
                self._setup = Setup(_build, (type(self), self.network, self.hardware, settings))
            return self.executor.map(self._setup, candidates)
        if self.workers <= 1 or len(candidates) <= 1:
            return [self.evaluate(c) for c in candidates]
        pool = ThreadPoolExecutor(self.workers)  # subprocesses: threads suffice
        try:
            futures = [pool.submit(self.evaluate, c) for c in candidates]
            return [f.result() for f in futures]
        except BaseException:  # Ctrl-C, SIGTERM: the run ends, its evaluations now with it
            self._groups.kill_all()
            raise
        finally:
            pool.shutdown(wait=False, cancel_futures=True)

    def close(self, *, cancel: bool = False):
        """End every evaluation still running, with all the processes it started."""
        self._groups.kill_all()


class NotANumber(ValueError):  # noqa: N818 - what was found, not a fault of ours
    """A value read as a number that is none (a string, a boolean, null, a list …)."""


def real_number(data: dict, key: str, default=None) -> float:
    """``data[key]`` as a float, if it is a JSON number: ``true`` is no 1.0 and ``"1e3"`` no
    1000 (``NotANumber`` says what it is); ``default`` when the key is missing (None: it
    must be there, ``KeyError``)."""
    if key not in data and default is not None:
        return default
    value = data[key]
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise NotANumber(f"{key} is {json.dumps(value)[:40]}, not a number")
    return float(value)  # (an int too large for a float: OverflowError)


def parse_command_output(stdout: str) -> Outcome:
    """What an evaluator command printed: its last line, a JSON object whose
    ``latency_us`` and ``energy_uj`` (and ``power_w``, if given) are numbers, finite, the
    latency positive — else a failure saying why."""
    lines = [line for line in stdout.strip().splitlines() if line.strip()]
    if not lines:
        return Outcome.failure('printed nothing; expected {"latency_us": …, "energy_uj": …}')
    try:
        data = json.loads(lines[-1])
        if not isinstance(data, dict):
            raise TypeError("not an object")
        latency, energy = real_number(data, "latency_us"), real_number(data, "energy_uj")
        power = real_number(data, "power_w", energy / latency if latency else math.nan)
    except NotANumber as e:
        return Outcome.failure(f"{e} in its output {lines[-1][:120]!r}")
    except (KeyError, TypeError, ValueError, AttributeError, RecursionError, OverflowError):
        return Outcome.failure(f"unparsable output {lines[-1][:120]!r}")
    values = (latency, energy, power)
    if not all(math.isfinite(v) for v in values) or latency <= 0 or energy < 0 or power < 0:
        return Outcome.failure(f"implausible values latency_us={latency}, energy_uj={energy}")
    return Outcome(latency, energy, power)
