"""The searches: ``evolve``, the nested evolutionary strategy (Loihi 2 mapping ES), with
progress, checkpoints and hardware in the loop; ``pareto``, multi-objective search on pymoo
(SENMap). Both evaluate through one executor: local processes or a Dask cluster."""

from __future__ import annotations

import json
import math
from contextlib import contextmanager

from engine.cli.common import (
    HARDWARE_HELP,
    MAPPING_FILE,
    MAX_EVALUATIONS,
    MAX_GENERATION,
    MAX_WORKERS,
    RATES_HELP,
    Terminated,
    bar,
    check_outputs,
    inputs_of,
    network_argument,
    network_of,
    same_file,
    seconds,
    whole,
    work,
)
from engine.defaults import DEFAULT_HARDWARE
from engine.errors import AllFailedError, Cancelled, SpecError
from engine.io.files import check_readable

__all__ = ["add_commands"]

# the objectives a search can read from an --evaluator-cmd's answer (its latency and energy,
# and what the mapping itself says: its cores and the mesh they need)
COMMAND_REPORTS = ("latency", "energy", "cores", "area", "area-loose", "area-square")


HISTORY_FILE = (".csv", ".jsonl", ".ndjson", ".json")  # CSV, or JSON lines otherwise
CHECKPOINT_FILE = (".ckpt", ".jsonl", ".json")  # JSON lines


def cmd_evolve(args) -> int:
    if args.resume:
        check_readable(args.resume, "checkpoint")
    grows = args.resume and (not args.checkpoint or same_file(args.checkpoint, args.resume))
    check_outputs(
        ("mapping file", args.out, MAPPING_FILE),
        ("history file", args.history, HISTORY_FILE),
        # a resumed run's checkpoint grows in place, whatever it was called
        ("checkpoint", args.resume, None) if grows else
        ("checkpoint", args.checkpoint, CHECKPOINT_FILE),
        inputs=inputs_of(args, *(() if grows else [("checkpoint to resume", args.resume)])),
    )  # fmt: skip
    with work(args):
        return _evolve(args)


def _run(search, args, progress, stop):
    """The search's result; Ctrl-C (SIGTERM, SIGHUP) ends the evaluations running at once
    (``stop``) and keeps the best found so far."""
    try:
        return search.run(checkpoint=args.checkpoint or args.resume, callback=progress)
    except KeyboardInterrupt as e:
        stop()
        return _cancelled(search, e)


def _cancelled(search, signal: KeyboardInterrupt):
    """A cancelled search's result; ``Cancelled`` when it has none (no evaluation finished,
    or every one failed)."""
    try:
        return search.result(cancelled=True)
    except AllFailedError:
        how = f"cancelled ({signal})" if isinstance(signal, Terminated) else "cancelled"
        n = len(search.history) if hasattr(search, "history") else len(search.evaluations)
        if not n:
            raise Cancelled(f"{how} before any evaluation finished: no mapping to report") from None
        failures = search.history.failures() if hasattr(search, "history") else ""
        raise Cancelled(
            f"{how} after {n} evaluation{'s' if n > 1 else ''}, none of them a mapping to "
            f"report" + (f": {failures}" if failures else "")
        ) from None


# the settings a checkpoint holds, as options: ESConfig field -> (option, the options' value
# for it: None when the option was not given)
def _given_settings(args) -> dict:
    return {
        "seed": ("--seed", args.seed),
        "lambda_part": ("--lambda-part", args.lambda_part),
        "lambda_place": ("--lambda-place", args.lambda_place),
        "objective": ("--objective", args.objective),
        "init_k": ("--init-k", args.init_k),
        "segments": ("--segments", args.segments),
        "reorder": ("--no-reorder", False if args.no_reorder else None),
        "elitist": ("--no-elitism", False if args.no_elitism else None),
    }


def _check_resumed(args, config) -> None:
    """A resumed run continues with its checkpoint's settings: one given otherwise is an
    error (it would be silently ignored), naming what the checkpoint holds."""
    clash = [
        (_shown(flag, mine), _shown(flag, getattr(config, name)))
        for name, (flag, mine) in _given_settings(args).items()
        if mine is not None and mine != getattr(config, name)
    ]
    if clash:
        raise SpecError(
            f"{', '.join(m for m, _ in clash)}: the checkpoint {args.resume} is a run of "
            f"{', '.join(t for _, t in clash)}, and a resumed run keeps its settings; leave "
            f"{'that option' if len(clash) == 1 else 'those options'} out to continue it, or "
            "start a new run without --resume"
        )


def _shown(flag: str, value) -> str:
    """A setting as the options say it: ``--seed 3``; ``--no-reorder`` or ``reordering``."""
    if isinstance(value, bool):
        return {"--no-reorder": "reordering", "--no-elitism": "elitism"}[flag] if value else flag
    return f"{flag} {value}"


def _evolve(args) -> int:
    from engine.cost import model_evaluation
    from engine.pipeline import (
        Mapped,
        build_mapping,
        resolve_hardware,
        write_mapping_file,
    )
    from engine.search import ESConfig, HistoryLog, NestedES, make_search, objectives
    from engine.search.genotype import check_init_k

    network = network_of(args)
    hardware = resolve_hardware(args.hardware or DEFAULT_HARDWARE)
    d = ESConfig()
    config = ESConfig(
        budget=args.budget,
        lambda_part=d.lambda_part if args.lambda_part is None else args.lambda_part,
        lambda_place=d.lambda_place if args.lambda_place is None else args.lambda_place,
        reorder=not args.no_reorder,
        elitist=not args.no_elitism,
        objective=args.objective or d.objective,
        init_k=d.init_k if args.init_k is None else args.init_k,
        segments=args.segments or 0,
        seed=d.seed if args.seed is None else args.seed,
    )
    if args.segments and args.strategy != "chipwise":
        raise SpecError("--segments splits the layers of the chipwise strategy: add --strategy "
                        "chipwise")  # fmt: skip
    if args.init_k is not None and not args.resume:  # asked for: it must fit (the default
        check_init_k(network, hardware, args.init_k)  # is trimmed to what fits, quietly)
    start = None
    if args.start:
        if args.resume:
            raise SpecError("--start begins a new run and --resume continues one: give one")
        start = build_mapping(network, hardware, mapping_file=args.start).mapping
    if args.evaluator_cmd is not None and config.objective not in COMMAND_REPORTS:
        raise SpecError(
            f"--evaluator-cmd reports latency and energy; --objective {config.objective} cannot "
            f"be read from it: choose one of {', '.join(COMMAND_REPORTS)}"
        )
    pbar = log = None
    with _evaluator(args, network, hardware, config.objective) as (evaluator, stop):
        try:
            if args.resume:
                if args.strategy != "global":
                    raise SpecError(
                        "--resume continues a global run; chipwise runs keep no checkpoint"
                    )
                search = NestedES.resume(
                    args.resume, network, hardware, evaluator=evaluator, budget=args.budget
                )
                _check_resumed(args, search.config)
                config = search.config
            else:
                search = make_search(
                    network, hardware, config, strategy=args.strategy, evaluator=evaluator,
                    start=start,
                )  # fmt: skip
            if args.history:  # the records so far (of a resumed run), then each as it comes
                log = HistoryLog(args.history, search.history)
            pbar = bar(args, config.budget, initial=len(search.history), unit="eval")

            def progress(event):
                if log is not None:
                    log.add(event.record)
                if pbar is not None:
                    pbar.update(1)
                    pbar.set_postfix_str(f"best {event.best.fitness:.3f}", refresh=False)

            try:
                result = _run(search, args, progress, stop)
            except Cancelled as e:  # nothing to report: the history says how the run ended
                if log is None:
                    raise
                log.end("cancelled")
                raise Cancelled(f"{e}; the history {args.history} ends 'cancelled'") from None
            except AllFailedError as e:  # the history holds every failure's reason
                if log is None:
                    raise
                log.end("failed")
                raise AllFailedError(f"{e}; every reason is in {args.history}") from None
            if log is not None:
                log.end("cancelled" if result.cancelled else "complete")
        except KeyboardInterrupt:  # before or after the search ran: it is cancelled all the same
            stop()
            if log is not None and not log.ended:
                log.end("cancelled")
            raise
        finally:
            if pbar is not None:
                pbar.close()
            if log is not None:
                log.close()
    measured = args.evaluator_cmd is not None  # the command's figures are the result
    best_mapping = result.mapping(network)
    best_model = model_evaluation(network, hardware, best_mapping)
    if args.out:
        write_mapping_file(args.out, Mapped.of(network, hardware, best_mapping), best_model)
    initial_model = model_evaluation(network, hardware, result.initial.mapping(network))
    failures = {name: r.note for name, r in result.heuristics.items() if r.failed}
    summary = {
        "network": network.name,
        "hardware": hardware.name,
        "strategy": args.strategy,
        "objective": config.objective,
        "measured_by": "evaluator command" if measured else "model",
        "best": _figures(result.best, best_model, hardware, measured),
        # each starting point's latency (null when its evaluation failed: heuristic_failures)
        "heuristics": {
            name: None if r.failed else r.latency_us for name, r in result.heuristics.items()
        },
        "heuristic_failures": failures,
        # what the search minimised (the objective), for the best and each heuristic
        "objective_values": {
            "best": result.best.fitness,
            "heuristics": {
                name: None if r.failed else r.fitness for name, r in result.heuristics.items()
            },
        },
        "initial": _figures(result.initial, initial_model, hardware, measured),
        "evaluations": result.evaluations,
        "failed": result.failed,
        "improvement_pct": result.improvement_pct,
        "cancelled": result.cancelled,
        "cores_per_population": list(result.best.cores_per_population),
        "chips_used": best_model.chips_used,
        "segments": search.segment_summary() if hasattr(search, "segment_summary") else None,
    }
    if objectives[config.objective].simulated:
        summary["best_simulated_us"] = result.best.simulated_us
        summary["heuristics_simulated_us"] = {
            name: r.simulated_us for name, r in result.heuristics.items()
        }
    if args.json:
        print(json.dumps(summary, indent=2))
        return 0
    heur = ", ".join(
        f"{n} failed ({failures[n]})" if v is None else f"{n} {v:.2f}"
        for n, v in summary["heuristics"].items()
    )
    print(f"{network.name} on {hardware.name}, {args.strategy}, objective {config.objective}")
    starts = "starting points" if args.start else "heuristics"
    print(f"  {starts} (latency us{', measured' if measured else ''}): {heur}")
    best = summary["best"]
    print(
        f"  best{' (measured)' if measured else ''}: latency {best['latency_us']:.3f} us, "
        f"energy {best['energy_uj']:.3f} uJ, power {best['power_w']:.3f} W"
        + ("" if measured else f", bound by {best['bottleneck']}")
        + f", {best['cores_used']} cores {list(result.best.cores_per_population)} on "
        f"{best_model.chips_used} chip(s)"
    )
    if measured:
        print(
            f"  the model's prediction for it: latency {best_model.latency_us:.3f} us, energy "
            f"{best_model.energy_uj:.3f} uJ, bound by {best_model.bottleneck}"
        )
    if summary["segments"]:
        parts = [f"chip {g['chip']}: {', '.join(g['layers'])}" for g in summary["segments"]]
        print(f"  segments: {' | '.join(parts)}")
    if "best_simulated_us" in summary:
        print(f"  simulated step of the best: {summary['best_simulated_us']:.3f} us")
    print(
        f"  {result.improvement_pct:.1f}% better than the best of the {starts} after "
        f"{result.evaluations} evaluations ({result.failed} failed)"
        + (" — cancelled" if result.cancelled else "")
    )
    for what, path in (("best mapping", args.out), ("history", args.history)):
        if path:
            print(f"  {what} written to {path}")
    return 0


def _figures(record, model, hardware, measured: bool) -> dict:
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


@contextmanager
def _evaluator(args, network, hardware, objective: str):
    """(the evaluator a search's options ask for, on the executor they name — a Dask
    cluster, local processes —, and ``stop``: ends every evaluation running now); both
    closed at the end, without waiting for evaluations once ``stop`` was called."""
    from engine.executors import make_executor
    from engine.search import CommandEvaluator, default_evaluator

    command = args.evaluator_cmd
    # a command runs in threads (it is a process of its own) unless a cluster runs it
    executor = make_executor(1 if command is not None else args.workers, args.dask_scheduler)
    stopped = []

    def stop() -> None:
        stopped.append(True)
        evaluator.close(cancel=True)
        if executor is not None:
            executor.close(cancel=True)

    try:
        if command is not None:
            evaluator = CommandEvaluator(
                network, hardware, command, timeout_s=args.eval_timeout,
                workers=args.workers, executor=executor,
            )  # fmt: skip
        else:
            evaluator = default_evaluator(network, hardware, objective, executor=executor)
        try:
            yield evaluator, stop
        finally:
            evaluator.close(cancel=bool(stopped))
    finally:
        if executor is not None:
            executor.close(cancel=bool(stopped))


def cmd_pareto(args) -> int:
    if args.start:
        check_readable(args.start, "mapping file")
    if args.resume:
        check_readable(args.resume, "history file")
    grows = args.resume and (not args.history or same_file(args.history, args.resume))
    check_outputs(
        ("front file", args.out, (".json",)),
        # a resumed run's history grows in place, whatever it was called
        ("history file", args.resume, None) if grows else
        ("history file", args.history, (".csv",)),
        inputs=inputs_of(args, *(() if grows else [("history to resume", args.resume)])),
    )  # fmt: skip
    with work(args):
        return _pareto(args)


def _pareto(args) -> int:
    from engine.io.files import atomic_open
    from engine.mapping import mapping_to_dict
    from engine.pipeline import Mapped, build_mapping, evaluate, resolve_hardware
    from engine.search import objectives
    from engine.search.genotype import check_init_k
    from engine.search.pareto import HistoryWriter, ParetoConfig, ParetoSearch, read_history

    names = tuple(n.strip() for n in args.objectives.split(",") if n.strip())
    config = ParetoConfig(
        objectives=names, algorithm=args.algorithm, budget=args.budget,
        population=args.population or 0, offspring=args.offspring or 0,
        init_k=ParetoConfig.init_k if args.init_k is None else args.init_k, seed=args.seed,
    )  # fmt: skip
    simulated = [n for n in names if objectives[n].simulated]
    if args.evaluator_cmd and set(names) - set(COMMAND_REPORTS):
        raise SpecError(
            f"--evaluator-cmd reports latency and energy: choose objectives among "
            f"{', '.join(COMMAND_REPORTS)}"
        )
    network = network_of(args)
    hardware = resolve_hardware(args.hardware or DEFAULT_HARDWARE)
    if args.init_k is not None:
        check_init_k(network, hardware, args.init_k)
    start = None
    if args.start:
        start = build_mapping(network, hardware, mapping_file=args.start).mapping
    codesign = None
    if args.codesign:
        from engine.codesign import Codesign

        if args.evaluator_cmd or args.dask_scheduler or args.workers > 1:
            raise SpecError(
                "--codesign rates each hardware variant with the model (or the simulator) in "
                "this process: leave out --evaluator-cmd, --dask-scheduler and --workers"
            )
        codesign = Codesign.of(hardware, [n.strip() for n in args.codesign.split(",")])
    objective = simulated[0] if simulated else "latency"
    with _evaluator(args, network, hardware, objective) as (evaluator, stop):
        search = ParetoSearch(
            network, hardware, config, evaluator=evaluator, start=start, codesign=codesign
        )
        known, done = (None, 0)
        if args.resume:  # the settings must be the run's, or it would not be resumed
            known, done = read_history(args.resume, names, search.settings())
            search.known = known
        # the history grows generation by generation (a resumed run's: its file, unless
        # --history names another, which then gets every evaluation)
        path = args.history or args.resume
        log = (
            HistoryWriter(path, names, search.settings(), fresh=args.history is not None)
            if path else None
        )  # fmt: skip
        skip = 0 if args.history else done  # rows already in the resumed file
        pbar = bar(args, config.budget, unit="eval")

        def progress(batch):
            nonlocal skip
            if log is not None:
                log.add(batch[skip:])
                skip = max(0, skip - len(batch))
            if pbar is not None:
                pbar.update(len(batch))

        def end(how: str) -> None:
            if log is not None and not log.ended:
                log.end(how, len(search.evaluations))

        try:
            try:
                result = search.run(callback=progress)
            except KeyboardInterrupt as e:  # Ctrl-C keeps the front found so far
                stop()
                result = _cancelled(search, e)
        except Cancelled as e:
            end("cancelled")
            raise Cancelled(f"{e}; the history {path} ends 'cancelled'" if log else e) from None
        except AllFailedError:
            end("failed")
            raise
        except KeyboardInterrupt:
            stop()
            end("cancelled")
            raise
        else:
            end("cancelled" if result.cancelled else "complete")
        finally:
            if pbar is not None:
                pbar.close()
            if log is not None:
                log.close()
    measured = args.evaluator_cmd is not None  # the command's figures are the result

    def point(e) -> dict:
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

    front = [point(e) for e in result.front]
    failures = {n: e.error for n, e in result.heuristics.items() if e.error}
    summary = {
        "network": network.name,
        "hardware": hardware.name,
        "algorithm": config.algorithm,
        "objectives": list(names),
        "seed": config.seed,
        "evaluations": len(result.evaluations),
        "feasible": sum(e.feasible for e in result.evaluations),
        "cancelled": result.cancelled,
        "reused": search.reused,
        "measured_by": "evaluator command" if measured else "model",
        # each starting point's objectives (null when its evaluation failed: heuristic_failures)
        "heuristics": {
            n: None if n in failures else dict(e.objectives) for n, e in result.heuristics.items()
        },
        "heuristic_failures": failures,
        # the heuristics that break a limit (a Mosaic's crossbar rows: their G[1]) are not
        # on the front however good their values
        "heuristics_infeasible": [
            n for n, e in result.heuristics.items() if not e.feasible and n not in failures
        ],
        "front": front,
    }
    if args.out:
        with atomic_open(args.out, what="front file") as f:
            json.dump(summary, f, indent=1)
            f.write("\n")
    if args.json:
        print(json.dumps({k: v for k, v in summary.items() if k != "front"} | {
            "front": [{k: p[k] for k in ("objectives", "hardware", "cores_per_population",
                                         "note", "model") if k in p}
                      for p in front]}, indent=2))  # fmt: skip
        return 0
    print(
        f"{network.name} on {hardware.name}, {config.algorithm}, {len(result.evaluations)} "
        f"evaluations ({summary['feasible']} feasible), seed {config.seed}"
        + (" — cancelled" if result.cancelled else "")
    )
    widths = [max(len(n), 10) for n in names]
    cores = "" if "cores" in names else "  cores"
    print("  " + "  ".join(n.rjust(w) for n, w in zip(names, widths, strict=True)) + cores)
    for e in result.front:
        values = "  ".join(f"{e.objectives[n]:{w}.4g}" for n, w in zip(names, widths, strict=True))
        used = f"  {sum(e.cores_per_population):5d}" if cores else ""
        chosen = " ".join(f"{k}={v:g}" for k, v in e.hardware.items())
        print(f"  {values}{used}  {chosen}  {e.note}".rstrip())
    on_front = len(result.front)
    print(f"  {on_front} mapping{'' if on_front == 1 else 's'} on the front"
          + (" (objectives measured by the evaluator command)" if measured else "")
          + "; the heuristics:")  # fmt: skip
    for n, e in result.heuristics.items():
        if n in failures:
            print(f"    {n}: failed ({failures[n]})")
            continue
        print("    " + n + ": " + ", ".join(f"{k} {v:.4g}" for k, v in e.objectives.items())
              + ("" if e.feasible else _unfit(e)))  # fmt: skip
    for what, path in (("front", args.out), ("history", args.history)):
        if path:
            print(f"  {what} written to {path}")
    return 0


COMMANDS = {
    "evolve": "search partition and placement (Loihi 2 mapping ES, nested (1+λ)-ES)",
    "pareto": "multi-objective search on pymoo (SENMap): NSGA-II, NSGA-III, GA",
}


def _executor_options(p) -> None:
    p.add_argument(
        "--workers", type=whole(1, MAX_WORKERS), default=1,
        help="evaluations run in parallel (default 1)",
    )  # fmt: skip
    p.add_argument(
        "--dask-scheduler", metavar="ADDRESS",
        help="evaluate on this Dask cluster (e.g. tcp://HOST:8786) instead of local processes",
    )  # fmt: skip
    p.add_argument(
        "--evaluator-cmd", metavar="CMD",
        help="rate mappings with this command (hardware in the loop): mapping JSON on its stdin, "
        '{"latency_us": …, "energy_uj": …} on its stdout',
    )  # fmt: skip
    p.add_argument(
        "--eval-timeout", type=seconds, default=60.0, metavar="SEC",
        help="seconds before an evaluator command counts as failed (default 60)",
    )  # fmt: skip


def _unfit(e) -> str:
    """Why a named evaluation is off the front: the limit it breaks."""
    layers, beyond = e.violations
    rows = e.outcome.metrics.get("routing_overflow", 0.0) if e.outcome is not None else 0.0
    if rows:
        return f" — does not fit: its tiles lack {rows:.0f} crossbar rows"
    return f" — does not fit: {layers:.0f} layers over a core limit, {beyond:.0f} cores too many"


def add_commands(sub) -> None:
    """``evolve`` and ``pareto``."""
    from engine.search import ESConfig, objectives, strategies
    from engine.search.pareto import ALGORITHMS, ParetoConfig

    d = ESConfig()
    es = sub.add_parser("evolve", help=COMMANDS["evolve"])
    network_argument(es)
    es.add_argument("--rates", metavar="CSV", help=RATES_HELP)
    es.add_argument("--hardware", help=HARDWARE_HELP)
    # a setting's default is None here (ESConfig's applies): a resumed run must know which
    # were given, for its checkpoint's settings win and a different one is refused
    es.add_argument(
        "--budget", type=whole(1, MAX_EVALUATIONS), default=d.budget,
        help=ESConfig.help("budget"),
    )  # fmt: skip
    es.add_argument("--seed", type=whole(0), help=ESConfig.help("seed"))
    es.add_argument(
        "--lambda-part", type=whole(1, MAX_GENERATION), help=ESConfig.help("lambda_part")
    )
    es.add_argument(
        "--lambda-place", type=whole(1, MAX_GENERATION), help=ESConfig.help("lambda_place")
    )
    es.add_argument("--no-reorder", action="store_true", help="ablation: no reordering operator")
    es.add_argument("--no-elitism", action="store_true", help="ablation: (1,λ) partitioning")
    es.add_argument(
        "--init-k", type=whole(0), default=None,
        help=f"{ESConfig.help('init_k')} (default {d.init_k}; at most the cores beyond the "
        "minimum partition)",
    )  # fmt: skip
    es.add_argument(
        "--strategy", choices=strategies.names(), default="global",
        help="global: one search over every chip; chipwise: one search per chip (default global)",
    )  # fmt: skip
    es.add_argument(
        "--segments", type=whole(1), default=None, metavar="K",
        help="chipwise: split the layers into K contiguous segments, one chip each (default "
        "one per chip, as Loihi 2 mapping ES §5.3)",
    )  # fmt: skip
    es.add_argument(
        "--objective", choices=objectives.names(), help=ESConfig.help("objective"),
    )  # fmt: skip
    _executor_options(es)
    es.add_argument(
        "--start", metavar="FILE",
        help="a mapping file (a hand-tuned mapping) to start from besides the heuristics; its "
        "layers split uniformly into consecutive cores, as evolve and the layer partitioner "
        "write them",
    )  # fmt: skip
    es.add_argument("--out", metavar="FILE", help="write the best mapping as a mapping file")
    es.add_argument("--history", metavar="FILE", help="every evaluation, as .csv or JSON lines")
    es.add_argument("--checkpoint", metavar="FILE", help="write a checkpoint every generation")
    es.add_argument("--resume", metavar="FILE", help="continue the run of this checkpoint")
    es.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    es.set_defaults(func=cmd_evolve)

    pd = ParetoConfig()
    pa = sub.add_parser("pareto", help=COMMANDS["pareto"])
    network_argument(pa)
    pa.add_argument("--rates", metavar="CSV", help=RATES_HELP)
    pa.add_argument("--hardware", help=HARDWARE_HELP)
    pa.add_argument(
        "--objectives", default=",".join(pd.objectives), metavar="A,B[,C]",
        help=f"what to minimize, by name: {', '.join(objectives.names())} (default "
        f"{','.join(pd.objectives)})",
    )  # fmt: skip
    pa.add_argument(
        "--algorithm", choices=ALGORITHMS, default=pd.algorithm,
        help="nsga2, nsga3 (3+ objectives) or ga (one objective) (default nsga2)",
    )  # fmt: skip
    pa.add_argument(
        "--budget", type=whole(1, MAX_EVALUATIONS), default=pd.budget,
        help="evaluations (default 2000)",
    )  # fmt: skip
    pa.add_argument("--seed", type=whole(0), default=0, help="seed of every random choice")
    pa.add_argument(
        "--population", type=whole(2, MAX_GENERATION), default=None,
        help="population size (default SENMap Table II's: 40 NSGA-II/III, 30 GA)",
    )  # fmt: skip
    pa.add_argument(
        "--offspring", type=whole(1, MAX_GENERATION), default=None,
        help="offspring a generation (default 10 for NSGA-II/III, a population for the GA)",
    )  # fmt: skip
    pa.add_argument(
        "--init-k", type=whole(0), default=None,
        help=f"the heuristics start from min+K (default {pd.init_k})",
    )  # fmt: skip
    _executor_options(pa)
    pa.add_argument(
        "--codesign", metavar="P[,Q…]|all",
        help="hardware co-design (SENMap §IV-H): choose these parameters of the hardware too, "
        "over the values its preset's [codesign] table gives (memory_kib, npes, clock_scale, "
        "flit_scale, state_bits, output_bits; e.g. --hardware seneca --codesign all)",
    )  # fmt: skip
    pa.add_argument("--start", metavar="FILE", help="a mapping file to evaluate first")
    pa.add_argument(
        "--out", metavar="FILE",
        help="write the front as JSON: 'front' (objectives by name and the mapping of each "
        "point), 'evaluations' (their count), the heuristics' points",
    )  # fmt: skip
    pa.add_argument(
        "--history", metavar="FILE",
        help="every evaluation as CSV, written as the run goes (resume a run from it)",
    )  # fmt: skip
    pa.add_argument(
        "--resume", metavar="FILE",
        help="continue the run whose history this is (same settings, a larger --budget): its "
        "evaluations are taken, not repeated, and the file grows",
    )  # fmt: skip
    pa.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    pa.set_defaults(func=cmd_pareto)
