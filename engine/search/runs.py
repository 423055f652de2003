"""A search run as the command line asks for one: ``run_evolution`` and ``run_pareto``.

Each checks the settings it is given against each other (what the search objects cannot
see alone: a resumed run's options against its checkpoint, an evaluator command against the
objectives), makes the evaluator on the executor the options name (local processes, a Dask
cluster, an external command), runs the search — every ``Event`` to ``progress``, every
record to the history file — and writes the outputs. It returns a result object holding
everything there is to print (``summary()``: the command's JSON).

A ``KeyboardInterrupt`` (Ctrl-C; the command line turns SIGTERM and SIGHUP into one) is a
clean cancel: the evaluations running are ended at once, the run keeps what it found and
its history ends ``cancelled``; with nothing found, ``Cancelled`` says so.
"""

from __future__ import annotations

import dataclasses
import json
import math
import warnings
from contextlib import contextmanager
from dataclasses import dataclass, field

from engine.errors import AllFailedError, Cancelled, MeshScopeWarning, SpecError
from engine.evaluation.cost import Evaluation
from engine.hardware import Hardware
from engine.hardware.codesign import Codesign
from engine.io.outputs import atomic_open
from engine.mapping.assignment import Mapping, mapping_to_dict
from engine.model.network import Network
from engine.pipeline import Mapped, build_mapping, evaluate, write_mapping_file
from engine.search.config import ESConfig, default_evaluator, objectives, require_command_reports
from engine.search.evaluators import CommandEvaluator
from engine.search.evolution import ESResult, NestedES, check_strategy, evolve
from engine.search.genotype import check_init_k, layout_for
from engine.search.history import HistoryLog, Run, read_history
from engine.search.pareto import ParetoConfig, ParetoResult, ParetoSearch
from engine.search.pareto.history import known_from, run_of
from engine.search.space import search_space
from engine.search.verify import SimulatorCheck, finalists, simulated_front, simulator_check

__all__ = [
    "EvaluatorOptions", "EvolutionRun", "ParetoRun", "evaluator_for", "run_evolution",
    "run_pareto",
]  # fmt: skip


@dataclass(frozen=True)
class EvaluatorOptions:
    """Where and by what a run's mappings are rated (``--workers``, ``--dask-scheduler``,
    ``--evaluator-cmd``, ``--eval-timeout``)."""

    workers: int = 1
    dask_scheduler: str | None = None
    command: str | None = None  # an external command rates them (hardware in the loop)
    timeout_s: float = 60.0
    predictor: str | None = None  # which predictor rates them (None: the default)
    verify: int = 5  # the best this many (a front: up to so many) simulated at the end

    @property
    def measured(self) -> bool:
        """An evaluator command rates the mappings: its figures are the run's result."""
        return self.command is not None


@contextmanager
def evaluator_for(network, hardware, objective: str, options: EvaluatorOptions):
    """(the evaluator ``options`` ask for, on the executor they name — a Dask cluster, local
    processes —, and ``stop``: ends every evaluation running now); both closed at the end,
    without waiting for evaluations once ``stop`` was called."""
    from engine.executors import make_executor

    command = options.command
    # a command runs in threads (it is a process of its own) unless a cluster runs it
    executor = make_executor(1 if command is not None else options.workers, options.dask_scheduler)
    stopped = []

    def stop() -> None:
        stopped.append(True)
        evaluator.close(cancel=True)
        if executor is not None:
            executor.close(cancel=True)

    try:
        if command is not None:
            evaluator = CommandEvaluator(
                network, hardware, command, timeout_s=options.timeout_s,
                workers=options.workers, executor=executor,
            )  # fmt: skip
        else:
            evaluator = default_evaluator(
                network, hardware, objective, executor=executor, predictor=options.predictor
            )
        try:
            yield evaluator, stop
        finally:
            evaluator.close(cancel=bool(stopped))
    finally:
        if executor is not None:
            executor.close(cancel=bool(stopped))


def _start(network, hardware, start) -> Mapping | None:
    """The mapping a run starts from: given, or read from a mapping file."""
    if start is None or isinstance(start, Mapping):
        return start
    return build_mapping(network, hardware, mapping_file=start).mapping


def _run_logged(search, log: HistoryLog | None, stop, progress, **run):
    """``search.run(**run)``, each event to ``progress`` and its record to ``log``, which
    ends saying how the run did; Ctrl-C ends the evaluations running (``stop``) and keeps
    what was found."""
    path = None if log is None else log.path

    def listen(event) -> None:
        if log is not None:
            log.add(event.record)
        if progress is not None:
            progress(event)

    try:
        try:
            result = search.run(callback=listen, **run)
        except KeyboardInterrupt as e:
            stop()
            result = _cancelled(search, e)
    except Cancelled as e:  # nothing to report: the history says how the run ended
        if log is None:
            raise
        log.end("cancelled")
        raise Cancelled(f"{e}; the history {path} ends 'cancelled'") from None
    except AllFailedError as e:  # the history holds every failure's reason
        if log is None:
            raise
        log.end("failed")
        raise AllFailedError(f"{e}; every reason is in {path}") from None
    if log is not None:
        log.end("cancelled" if result.cancelled else "complete")
    return result


def _cancelled(search, signal: KeyboardInterrupt):
    """A cancelled search's result; ``Cancelled`` when it has none (no evaluation finished,
    or none gave a mapping)."""
    try:
        return search.result(cancelled=True)
    except AllFailedError:
        how = f"cancelled ({signal})" if str(signal) else "cancelled"
        n = len(search.history)
        if not n:
            raise Cancelled(f"{how} before any evaluation finished: no mapping to report") from None
        failures = search.history.failures()
        raise Cancelled(
            f"{how} after {n} evaluation{'s' if n > 1 else ''}, none of them a mapping to "
            f"report" + (f": {failures}" if failures else "")
        ) from None


@contextmanager
def _stopping(stop):
    """A KeyboardInterrupt (before, while or after the search runs) ends the evaluations
    running at once."""
    try:
        yield
    except KeyboardInterrupt:
        stop()
        raise


@contextmanager
def _logged(path, run: Run, records=(), existing=None):
    """The history log of ``path`` (None: none), closed at the end; a KeyboardInterrupt
    before the run ended marks it cancelled."""
    log = None if path is None else HistoryLog(path, run, records, existing=existing)
    try:
        yield log
    except KeyboardInterrupt:
        if log is not None and not log.ended:
            log.end("cancelled")
        raise
    finally:
        if log is not None:
            log.close()


def _unchecked(path, names: list[str], measured: bool) -> None:
    """Say which figures of a resumed history were taken without being checked."""
    if not names:
        return
    if measured:
        why = (
            "were measured by the evaluator command: MeshScope cannot check them and takes "
            "them as they are"
        )
    else:
        why = "were simulated: they are taken as they are, not simulated again"
    warnings.warn(f"the {', '.join(names)} figures of {path} {why}", MeshScopeWarning, 2)


def _figures(record, model: Evaluation, hardware, measured: bool) -> dict:
    """What a run reports of one evaluated mapping: the model's evaluation when the model
    rated it; else the evaluator's figures (``record``), with the model's prediction beside
    them under ``model``."""
    if not measured:
        return model.to_dict(hardware)
    figures = {k: getattr(record, k) for k in ("latency_us", "energy_uj", "power_w")}
    return {
        **{k: v if math.isfinite(v) else None for k, v in figures.items()},  # failed: null
        "cores_used": record.cores_used,
        "model": model.to_dict(hardware),
    }


# ------------------------------------------------------------------ evolve
@dataclass(frozen=True)
class EvolutionRun:
    """An ``evolve`` run: its result, and the model's evaluation of its best and of where it
    started (the best starting point)."""

    network: Network
    hardware: Hardware
    strategy: str
    config: ESConfig  # the run's (a resumed run's: its checkpoint's)
    result: ESResult
    measured: bool  # an evaluator command rated the mappings
    best_model: Evaluation
    initial_model: Evaluation
    from_start: bool  # a given mapping was among the starting points
    written: dict = field(default_factory=dict)  # what -> the file it was written to
    predictor: str = "max-affine"  # what rated the mappings (``engine.predict``)
    # the best few simulated at the end, and the simulator's pick: the run's answer
    simulator_check: SimulatorCheck | None = None

    @property
    def heuristic_failures(self) -> dict:
        return {name: r.note for name, r in self.result.heuristics.items() if r.failed}

    def summary(self) -> dict:
        """The run as one JSON object (``evolve --json``)."""
        result, hardware, measured = self.result, self.hardware, self.measured
        out = {
            "network": self.network.name,
            "hardware": hardware.name,
            "strategy": self.strategy,
            "objective": self.config.objective,
            "measured_by": "evaluator command" if measured else "model",
            "predictor": None if measured else self.predictor,
            "best": _figures(result.best, self.best_model, hardware, measured),
            # each starting point's latency (null when its evaluation failed: heuristic_failures)
            "heuristics": {
                name: None if r.failed else r.latency_us for name, r in result.heuristics.items()
            },
            "heuristic_failures": self.heuristic_failures,
            # what the search minimised (the objective), for the best and each heuristic
            "objective_values": {
                "best": result.best.fitness,
                "heuristics": {
                    name: None if r.failed else r.fitness for name, r in result.heuristics.items()
                },
            },
            "initial": _figures(result.initial, self.initial_model, hardware, measured),
            "evaluations": result.evaluations,
            "failed": result.failed,
            "improvement_pct": result.improvement_pct,
            "cancelled": result.cancelled,
            "cores_per_population": list(result.best.cores_per_population),
            "chips_used": self.best_model.chips_used,
            "segments": result.segments,
            "search_space": search_space(
                layout_for(self.network, hardware), result.initial.cores_used
            ),
        }
        if self.simulator_check is not None:  # the best: the simulator's pick of them
            out["simulator_check"] = self.simulator_check.to_dict()
        if objectives[self.config.objective].simulated:
            out["best_simulated_us"] = result.best.simulated_us
            out["heuristics_simulated_us"] = {
                name: r.simulated_us for name, r in result.heuristics.items()
            }
        return out


_SAID = {"reorder": ("--no-reorder", "reordering"), "elitist": ("--no-elitism", "elitism")}


def _shown(name: str, value) -> str:
    """A setting as the options say it: ``--seed 3``; ``--no-reorder`` or ``reordering``."""
    if isinstance(value, bool):
        flag, said = _SAID[name]
        return said if value else flag
    return f"--{name.replace('_', '-')} {value}"


def _check_resumed(path, given: dict, config: ESConfig) -> None:
    """A resumed run continues with its checkpoint's settings: one given otherwise is an
    error (it would be silently ignored), naming what the checkpoint holds."""
    clash = [
        (_shown(name, mine), _shown(name, getattr(config, name)))
        for name, mine in given.items()
        if name != "budget" and mine != getattr(config, name)
    ]
    if clash:
        raise SpecError(
            f"{', '.join(m for m, _ in clash)}: the checkpoint {path} is a run of "
            f"{', '.join(t for _, t in clash)}, and a resumed run keeps its settings; leave "
            f"{'that option' if len(clash) == 1 else 'those options'} out to continue it, or "
            "start a new run without --resume"
        )


def run_evolution(
    network: Network,
    hardware: Hardware,
    config: ESConfig,
    *,
    strategy: str = "global",
    start: Mapping | str | None = None,
    resume=None,
    given: dict | None = None,
    checkpoint=None,
    history=None,
    out=None,
    options: EvaluatorOptions | None = None,
    progress=None,
) -> EvolutionRun:
    """Run the nested ES (``evolve``). ``start``: a mapping (or mapping file) to start from
    besides the heuristics; ``resume``: a checkpoint to continue (its settings win, but for
    the budget: a setting in ``given`` — the settings asked for, by ``ESConfig`` field —
    that differs is refused); ``checkpoint``: where to keep one (a resumed run: its own);
    ``history``: the history file; ``out``: the best mapping's file; ``options``: where and
    by what the mappings are rated; ``progress(event)``: each evaluation as it ends."""
    given, options = dict(given or {}), options or EvaluatorOptions()
    check_strategy(config, strategy, start=start is not None)
    if resume is not None and strategy != "global":
        raise SpecError("--resume continues a global run; chipwise runs keep no checkpoint")
    if "init_k" in given and resume is None:  # asked for: it must fit (the default is
        check_init_k(network, hardware, config.init_k)  # trimmed to what fits, quietly)
    if start is not None and resume is not None:
        raise SpecError("--start begins a new run and --resume continues one: give one")
    start = _start(network, hardware, start)
    if options.measured:
        require_command_reports([config.objective], "--objective")
    rating = evaluator_for(network, hardware, config.objective, options)
    with rating as (evaluator, stop), _stopping(stop):
        if resume is not None:
            search = NestedES.resume(
                resume, network, hardware, evaluator=evaluator, budget=config.budget
            )
            _check_resumed(resume, given, search.config)
            _unchecked(resume, search.check_history(resume), options.measured)
            config = search.config
        else:
            search = evolve(
                network, hardware, config, strategy=strategy, evaluator=evaluator, start=start
            )
        run = Run("evolve", config.objectives, search.settings())
        # the records so far (of a resumed run), then each as it comes
        with _logged(history, run, search.history) as log:
            result = _run_logged(search, log, stop, progress, checkpoint=checkpoint or resume)
    check = None
    if (
        options.verify > 0
        and not options.measured
        and config.objective == "latency"
        and (strategy == "global")
    ):  # the simulator decides among the best few
        best_few = finalists(result.history, options.verify)
        check = simulator_check(
            network, hardware, best_few, [r.mapping(network) for r in best_few],
            predictor=evaluator_name(options), seed=config.seed,
        )  # fmt: skip
        if check.chosen >= 0:
            result = dataclasses.replace(result, best=result.history[check.chosen])
    best_mapping = result.mapping(network)
    best_model = evaluate(Mapped.of(network, hardware, best_mapping), predictor=options.predictor)
    written = {}
    if out:
        write_mapping_file(out, Mapped.of(network, hardware, best_mapping), best_model)
        written["best mapping"] = out
    if history:
        written["history"] = history
    initial_model = evaluate(
        Mapped.of(network, hardware, result.initial.mapping(network)), predictor=options.predictor
    )
    return EvolutionRun(
        network, hardware, strategy, config, result, options.measured, best_model,
        initial_model, start is not None, written, evaluator_name(options), check,
    )  # fmt: skip


def evaluator_name(options: EvaluatorOptions) -> str:
    """The predictor that rates a run's mappings (``engine.predict.predictors``)."""
    from engine.predict import DEFAULT_PREDICTOR

    return options.predictor or DEFAULT_PREDICTOR


# ------------------------------------------------------------------ pareto
@dataclass(frozen=True)
class ParetoRun:
    """A ``pareto`` run: its result and each front point as the command reports it."""

    network: Network
    hardware: Hardware
    config: ParetoConfig
    result: ParetoResult
    reused: int  # evaluations taken from the resumed history
    measured: bool  # an evaluator command rated the mappings
    front: list  # each front point: objectives, hardware, cores, note, mapping (and model)
    written: dict = field(default_factory=dict)
    predictor: str = "max-affine"  # what rated the mappings (``engine.predict``)
    # the front simulated at the end (its fastest points first), and the front the
    # simulator's step decides (``simulator_check["front"]``: history indices)
    simulator_check: dict | None = None

    @property
    def heuristic_failures(self) -> dict:
        return {n: e.note for n, e in self.result.heuristics.items() if e.failed}

    def summary(self) -> dict:
        """The run as one JSON object (the front file; ``pareto --json`` leaves out each
        point's mapping)."""
        result, failures = self.result, self.heuristic_failures
        return {
            "network": self.network.name,
            "hardware": self.hardware.name,
            "algorithm": self.config.algorithm,
            "objectives": list(self.config.objectives),
            "seed": self.config.seed,
            "evaluations": len(result.evaluations),
            "feasible": sum(e.feasible for e in result.evaluations),
            "cancelled": result.cancelled,
            "reused": self.reused,
            "measured_by": "evaluator command" if self.measured else "model",
            "predictor": None if self.measured else self.predictor,
            # each starting point's objectives (null when its evaluation failed)
            "heuristics": {
                n: None if n in failures else dict(e.objectives)
                for n, e in result.heuristics.items()
            },
            "heuristic_failures": failures,
            # the heuristics that break a limit (a Mosaic's crossbar rows: their G[1]) are
            # not on the front however good their values
            "heuristics_infeasible": [
                n for n, e in result.heuristics.items() if not e.feasible and n not in failures
            ],
            "front": self.front,
            **({"simulator_check": self.simulator_check} if self.simulator_check else {}),
        }


def _point(network, hardware, e, measured: bool) -> dict:
    out = {
        "objectives": dict(e.objectives),
        "hardware": dict(e.hardware),
        "cores_per_population": list(e.cores_per_population),
        "note": e.note,
        "mapping": mapping_to_dict(network, hardware, e.mapping(network)),
    }
    if measured:  # the model's prediction of what the command measured, labelled so
        model = evaluate(Mapped.of(network, hardware, e.mapping(network))).to_dict()
        keep = ("latency_us", "energy_uj", "power_w", "bottleneck")
        out["model"] = {k: model[k] for k in keep}
    return out


def run_pareto(
    network: Network,
    hardware: Hardware,
    config: ParetoConfig,
    *,
    start: Mapping | str | None = None,
    codesign=None,
    resume=None,
    given: dict | None = None,
    history=None,
    out=None,
    options: EvaluatorOptions | None = None,
    progress=None,
) -> ParetoRun:
    """Run a multi-objective search (``pareto``, a ``ParetoConfig``). ``codesign``: the
    hardware parameters to choose too, by name; ``resume``: the history of the run to
    continue (its evaluations are taken, not repeated, and it grows unless ``history``
    names another file, which then gets every evaluation); ``given``: the settings asked
    for, by ``ParetoConfig`` field (an ``init_k`` asked for must fit); ``out``: the front
    file; ``options`` and ``progress`` as ``run_evolution``'s."""
    names, options = config.objectives, options or EvaluatorOptions()
    if options.measured:
        require_command_reports(names)
    if "init_k" in (given or {}):
        check_init_k(network, hardware, config.init_k)
    start = _start(network, hardware, start)
    if codesign:
        if options.measured or options.dask_scheduler or options.workers > 1:
            raise SpecError(
                "--codesign rates each hardware variant with the model (or the simulator) in "
                "this process: leave out --evaluator-cmd, --dask-scheduler and --workers"
            )
        codesign = Codesign.of(hardware, list(codesign))
    simulated = [n for n in names if objectives[n].simulated]
    objective = simulated[0] if simulated else "latency"
    rating = evaluator_for(network, hardware, objective, options)
    with rating as (evaluator, stop), _stopping(stop):
        search = ParetoSearch(
            network, hardware, config, evaluator=evaluator, start=start,
            codesign=codesign or None,
        )  # fmt: skip
        existing = None
        if resume is not None:  # the settings must be the run's, or it would not resume
            existing = read_history(resume)
            search.known = known_from(existing, resume, names, search.settings())
            _unchecked(resume, search.check_known(resume), options.measured)
        # the history grows as the run goes: a resumed run's in its file, unless another
        # is named, which then gets every evaluation
        path = history or resume
        in_place = existing if history is None else None
        with _logged(path, run_of(search), existing=in_place) as log:
            result = _run_logged(search, log, stop, progress)
    front = [_point(network, hardware, e, options.measured) for e in result.front]
    check = None
    if options.verify > 0 and not options.measured and "latency" in names and not codesign:
        # the front's fastest (by the predictor) simulated; the simulator decides the front
        points = sorted(result.front, key=lambda e: e.objectives["latency"])
        points = points[: 4 * options.verify]
        found = simulator_check(
            network, hardware, points, [e.mapping(network) for e in points],
            predictor=evaluator_name(options), seed=config.seed,
        )  # fmt: skip
        check = {**found.to_dict(), "front": simulated_front(points, found, names)}
        by_index = {c["index"]: c["simulated_us"] for c in found.candidates}
        for point, e in zip(front, result.front, strict=True):
            if e.index in by_index:
                point["simulated_us"] = by_index[e.index]
                point["on_simulated_front"] = e.index in check["front"]
    run = ParetoRun(
        network, hardware, config, result, search.reused, options.measured, front,
        predictor=evaluator_name(options), simulator_check=check,
    )  # fmt: skip
    if out:
        with atomic_open(out, what="front file") as f:
            json.dump(run.summary(), f, indent=1)
            f.write("\n")
        run.written["front"] = out
    if history:
        run.written["history"] = history
    return run
