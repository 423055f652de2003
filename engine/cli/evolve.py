"""``evolve``: the nested evolutionary search (Loihi 2 mapping ES), with progress,
checkpoints and hardware in the loop."""

from __future__ import annotations

import json

from engine.cli.common import (
    HARDWARE_HELP,
    RATES_HELP,
    bar,
    check_outputs,
    network_argument,
    network_of,
    seconds,
    whole,
    work,
)
from engine.defaults import DEFAULT_HARDWARE
from engine.errors import AllFailedError, SpecError
from engine.io.files import check_readable

__all__ = ["add_commands"]


def cmd_evolve(args) -> int:
    if args.resume:
        check_readable(args.resume, "checkpoint")
    check_outputs(
        ("mapping file", args.out),
        ("history file", args.history),
        ("checkpoint", args.checkpoint or args.resume),
    )
    with work(args):
        return _evolve(args)


def _run(search, args, progress):
    """The search's result; Ctrl-C keeps the best found so far."""
    try:
        return search.run(checkpoint=args.checkpoint or args.resume, callback=progress)
    except KeyboardInterrupt:
        return search.result(cancelled=True)


def _evolve(args) -> int:
    from engine.cost import evaluate
    from engine.pipeline import (
        Mapped,
        build_mapping,
        resolve_hardware,
        write_mapping_file,
    )
    from engine.search import (
        CommandEvaluator,
        ESConfig,
        HistoryLog,
        NestedES,
        default_evaluator,
        make_search,
        objectives,
    )
    from engine.search.genotype import check_init_k

    network = network_of(args)
    hardware = resolve_hardware(args.hardware or DEFAULT_HARDWARE)
    config = ESConfig(
        budget=args.budget,
        lambda_part=args.lambda_part,
        lambda_place=args.lambda_place,
        reorder=not args.no_reorder,
        elitist=not args.no_elitism,
        objective=args.objective,
        init_k=ESConfig.init_k if args.init_k is None else args.init_k,
        segments=args.segments or 0,
        seed=args.seed,
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
    if args.evaluator_cmd:
        if objectives[config.objective].simulated:
            raise SpecError(
                f"--objective {config.objective} is the simulator's; it cannot rate the "
                "results of --evaluator-cmd (use latency or energy)"
            )
        evaluator = CommandEvaluator(
            network, hardware, args.evaluator_cmd, timeout_s=args.eval_timeout, workers=args.workers
        )
    else:
        evaluator = default_evaluator(network, hardware, config.objective, workers=args.workers)
    pbar = log = None
    try:
        if args.resume:
            if args.strategy != "global":
                raise SpecError("--resume continues a global run; chipwise runs keep no checkpoint")
            search = NestedES.resume(
                args.resume, network, hardware, evaluator=evaluator, budget=args.budget
            )
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
            result = _run(search, args, progress)
        except AllFailedError as e:  # the history holds every failure's reason
            if log is None:
                raise
            log.end("failed")
            raise AllFailedError(f"{e}; every reason is in {args.history}") from None
        if log is not None:
            log.end("cancelled" if result.cancelled else "complete")
    finally:
        if pbar is not None:
            pbar.close()
        if log is not None:
            log.close()
        evaluator.close()
    best_mapping = result.mapping(network)
    best_eval = evaluate(network, hardware, best_mapping)
    if args.out:
        write_mapping_file(args.out, Mapped.of(network, hardware, best_mapping), best_eval)
    initial_eval = evaluate(network, hardware, result.initial.mapping(network))
    summary = {
        "network": network.name,
        "hardware": hardware.name,
        "strategy": args.strategy,
        "objective": config.objective,
        "best": best_eval.to_dict(hardware),
        "heuristics": {name: r.latency_us for name, r in result.heuristics.items()},
        "initial": initial_eval.to_dict(hardware),
        "evaluations": result.evaluations,
        "failed": result.failed,
        "improvement_pct": result.improvement_pct,
        "cancelled": result.cancelled,
        "cores_per_population": list(result.best.cores_per_population),
        "chips_used": best_eval.chips_used,
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
    heur = ", ".join(f"{n} {v:.2f}" for n, v in summary["heuristics"].items())
    print(f"{network.name} on {hardware.name}, {args.strategy}, objective {config.objective}")
    starts = "starting points" if args.start else "heuristics"
    print(f"  {starts} (latency us): {heur}")
    print(
        f"  best: latency {best_eval.latency_us:.3f} us, energy {best_eval.energy_uj:.3f} uJ, "
        f"power {best_eval.power_w:.3f} W, bound by {best_eval.bottleneck}, "
        f"{best_eval.cores_used} cores {list(result.best.cores_per_population)} on "
        f"{best_eval.chips_used} chip(s)"
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


COMMANDS = {"evolve": "search partition and placement (Loihi 2 mapping ES, nested (1+λ)-ES)"}


def add_commands(sub) -> None:
    """``evolve``."""
    from engine.search import ESConfig, objectives, strategies

    d = ESConfig()
    es = sub.add_parser("evolve", help=COMMANDS["evolve"])
    network_argument(es)
    es.add_argument("--rates", metavar="CSV", help=RATES_HELP)
    es.add_argument("--hardware", help=HARDWARE_HELP)
    es.add_argument("--budget", type=whole(1), default=d.budget, help=ESConfig.help("budget"))
    es.add_argument("--seed", type=whole(0), default=d.seed, help=ESConfig.help("seed"))
    es.add_argument(
        "--lambda-part", type=whole(1), default=d.lambda_part, help=ESConfig.help("lambda_part")
    )
    es.add_argument(
        "--lambda-place", type=whole(1), default=d.lambda_place, help=ESConfig.help("lambda_place")
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
        "--objective", choices=objectives.names(), default=d.objective,
        help=ESConfig.help("objective"),
    )  # fmt: skip
    es.add_argument(
        "--evaluator-cmd", metavar="CMD",
        help="rate mappings with this command (hardware in the loop): mapping JSON on its stdin, "
        '{"latency_us": …, "energy_uj": …} on its stdout',
    )  # fmt: skip
    es.add_argument(
        "--eval-timeout", type=seconds, default=60.0, metavar="SEC",
        help="seconds before an evaluator command counts as failed (default 60)",
    )  # fmt: skip
    es.add_argument(
        "--workers", type=whole(1), default=1, help="evaluations run in parallel (default 1)"
    )
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
