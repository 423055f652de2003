"""The searches: ``evolve``, the nested evolutionary strategy (Loihi 2 mapping ES), with
progress, checkpoints and hardware in the loop; ``pareto``, multi-objective search on pymoo
(SENMap). Each command parses its options, runs one engine function
(``engine.search.runs.run_evolution`` / ``run_pareto``: checks, evaluator and executor,
history, Ctrl-C) and prints the result it returns."""

from __future__ import annotations

import json
import sys

from engine.cli.common import (
    FIGURE,
    MAPPING_FILE,
    MAX_EVALUATIONS,
    MAX_GENERATION,
    PARTITION_HELP,
    SPLIT_HELP,
    MappingSettings,
    bar,
    build,
    check_outputs,
    executor_options,
    inputs_of,
    json_option,
    network_of,
    partition_option,
    predictor_option,
    print_json,
    same_file,
    seed_option,
    whole,
    work,
    workload_options,
)
from engine.defaults import DEFAULT_HARDWARE
from engine.io.files import check_readable

__all__ = ["add_commands"]

HISTORY_FILE = (".csv", ".jsonl", ".ndjson", ".json")  # CSV, or JSON lines otherwise
CHECKPOINT_FILE = (".ckpt", ".jsonl", ".json")  # JSON lines


def _check_run_files(args, outputs: list, grown: tuple[str, str | None, tuple, str]) -> None:
    """Before a search starts: what it resumes readable, every file it writes writable.
    ``grown``: (what, the option's file, its suffixes, what the resumed one is called) of the
    file a resumed run grows in place, whatever the option named it (evolve's checkpoint,
    pareto's history)."""
    what, given, suffixes, resumed = grown
    if args.resume:
        check_readable(args.resume, what)
    grows = args.resume and (not given or same_file(given, args.resume))
    check_outputs(
        *outputs,
        (what, args.resume, None) if grows else (what, given, suffixes),
        inputs=inputs_of(args, *(() if grows else [(resumed, args.resume)])),
    )


def cmd_evolve(args) -> int:
    _check_run_files(
        args,
        [("mapping file", args.out, MAPPING_FILE), ("history file", args.history, HISTORY_FILE)],
        ("checkpoint", args.checkpoint, CHECKPOINT_FILE, "checkpoint to resume"),
    )
    with work(args):
        return _evolve(args)


def _options(args):
    """What the executor options ask for (``engine.search.runs.EvaluatorOptions``)."""
    from engine.search.runs import EvaluatorOptions

    return EvaluatorOptions(
        workers=args.workers, dask_scheduler=args.dask_scheduler, command=args.evaluator_cmd,
        timeout_s=args.eval_timeout, predictor=args.predictor, verify=args.verify,
    )  # fmt: skip


class _Progress:
    """On a terminal, a bar over a run's ``budget`` evaluations, following its events (a
    resumed run's first says how many were done before); ``postfix(event)``: its text."""

    def __init__(self, args, budget: int, postfix=None):
        self.bar = bar(args, budget, unit="eval")
        self.postfix = postfix

    def __call__(self, event) -> None:
        if self.bar is not None:
            self.bar.update(event.count - self.bar.n)
            if self.postfix is not None:
                self.bar.set_postfix_str(self.postfix(event), refresh=False)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


# the settings a checkpoint holds, as options: ESConfig field -> the options' value for it
# (None when the option was not given: a resumed run refuses one given otherwise)
def _given_settings(args) -> dict:
    given = {
        "seed": args.seed,
        "lambda_part": args.lambda_part,
        "lambda_place": args.lambda_place,
        "objective": args.objective,
        "init_k": args.init_k,
        "segments": args.segments,
        "reorder": False if args.no_reorder else None,
        "elitist": False if args.no_elitism else None,
    }
    return {k: v for k, v in given.items() if v is not None}


def _evolve(args) -> int:
    from engine.hardware import load_hardware
    from engine.search import ESConfig
    from engine.search.runs import run_evolution

    hardware = load_hardware(args.hardware or DEFAULT_HARDWARE)
    network = network_of(MappingSettings.of(args), hardware)
    given = _given_settings(args)
    config = ESConfig(**{**given, "budget": args.budget, "segments": args.segments or 0})
    progress = _Progress(args, config.budget, lambda event: f"best {event.best.fitness:.3f}")
    try:
        run = run_evolution(
            network, hardware, config, strategy=args.strategy, start=args.start,
            resume=args.resume, given=given, checkpoint=args.checkpoint, history=args.history,
            out=args.out, options=_options(args), progress=progress,
        )  # fmt: skip
    finally:
        progress.close()
    summary = run.summary()
    if args.json:
        print_json(summary)
    else:
        _print_evolution(run, summary)
    return _ended(run.result, config.budget)


def _ended(result, budget: int) -> int:
    """The exit code of a search that ran: 0, or, cancelled (Ctrl-C), 130 and a line saying
    that what it printed is the best of the evaluations done, not the run's result (SIGTERM
    and SIGHUP: ``main`` makes it 128 + the signal's number)."""
    if not result.cancelled:
        return 0
    done = result.evaluations if isinstance(result.evaluations, int) else len(result.evaluations)
    sys.stderr.write(
        f"meshscope: cancelled after {done} of {budget} evaluations: what is shown is the best "
        "of those, not the run's result\n"
    )
    return 130


def _print_evolution(run, summary: dict) -> None:
    result, measured, model = run.result, run.measured, run.best_model
    failures = run.heuristic_failures
    heur = ", ".join(
        f"{n} failed ({failures[n]})" if v is None else f"{n} {v:.2f}"
        for n, v in summary["heuristics"].items()
    )
    rated = "" if measured else f", predictor {run.predictor}"
    print(f"{run.network.name} on {run.hardware.name}, {run.strategy}, objective "
          f"{run.config.objective}{rated}")  # fmt: skip
    starts = "starting points" if run.from_start else "heuristics"
    print(f"  {starts} (latency us{', measured' if measured else ''}): {heur}")
    best = summary["best"]
    print(
        f"  best{' (measured)' if measured else ''}: latency {best['latency_us']:.3f} us, "
        f"energy {best['energy_uj']:.3f} uJ, power {best['power_w']:.3f} W"
        + ("" if measured else f", bound by {best['bottleneck']}")
        + f", {best['cores_used']} cores {list(result.best.cores_per_population)} on "
        f"{model.chips_used} chip(s)"
    )
    if measured:
        print(
            f"  the model's prediction for it: latency {model.latency_us:.3f} us, energy "
            f"{model.energy_uj:.3f} uJ, bound by {model.bottleneck}"
        )
    if summary["segments"]:
        parts = [f"chip {g['chip']}: {', '.join(g['layers'])}" for g in summary["segments"]]
        print(f"  segments: {' | '.join(parts)}")
    if "best_simulated_us" in summary:
        print(f"  simulated step of the best: {summary['best_simulated_us']:.3f} us")
    check = summary.get("simulator_check")
    if check:
        print(f"  the best {len(check['candidates'])} simulated, the simulator deciding "
              f"(predicted -> simulated us):")  # fmt: skip
        for c in check["candidates"]:
            step = "failed" if c["simulated_us"] is None else f"{c['simulated_us']:.3f}"
            mark = "  <- chosen" if c["index"] == check["chosen"] else ""
            print(f"    #{c['index']}: {c['predicted_us']:.3f} -> {step}{mark}")
    print(
        f"  {result.improvement_pct:.1f}% better than the best of the {starts} after "
        f"{result.evaluations} evaluations ({result.failed} failed)"
        + (" — cancelled" if result.cancelled else "")
    )
    for what, path in run.written.items():
        print(f"  {what} written to {path}")


def cmd_pareto(args) -> int:
    if args.start:
        check_readable(args.start, "mapping file")
    _check_run_files(
        args,
        [("front file", args.out, (".json",))],
        ("history file", args.history, HISTORY_FILE, "history to resume"),
    )
    with work(args):
        return _pareto(args)


def _pareto(args) -> int:
    from engine.hardware import load_hardware
    from engine.search.pareto import ParetoConfig
    from engine.search.runs import run_pareto

    names = tuple(n.strip() for n in args.objectives.split(",") if n.strip())
    config = ParetoConfig(
        objectives=names, algorithm=args.algorithm, budget=args.budget,
        population=args.population or 0, offspring=args.offspring or 0,
        init_k=ParetoConfig.init_k if args.init_k is None else args.init_k, seed=args.seed,
    )  # fmt: skip
    hardware = load_hardware(args.hardware or DEFAULT_HARDWARE)
    network = network_of(MappingSettings.of(args), hardware)
    codesign = [n.strip() for n in args.codesign.split(",")] if args.codesign else None
    progress = _Progress(args, config.budget)
    try:
        run = run_pareto(
            network, hardware, config, start=args.start, codesign=codesign, resume=args.resume,
            given={} if args.init_k is None else {"init_k": args.init_k}, history=args.history,
            out=args.out,
            options=_options(args), progress=progress,
        )  # fmt: skip
    finally:
        progress.close()
    summary = run.summary()
    if args.json:
        shown = ("objectives", "hardware", "cores_per_population", "note", "model")
        front = [{k: p[k] for k in shown if k in p} for p in summary["front"]]
        print_json({**summary, "front": front})
    else:
        _print_pareto(run, summary)
    return _ended(run.result, config.budget)


def _print_pareto(run, summary: dict) -> None:
    result, config, measured = run.result, run.config, run.measured
    names, failures = config.objectives, run.heuristic_failures
    print(
        f"{run.network.name} on {run.hardware.name}, {config.algorithm}, "
        f"{len(result.evaluations)} evaluations ({summary['feasible']} feasible), seed "
        f"{config.seed}" + (" — cancelled" if result.cancelled else "")
    )
    widths = [max(len(n), 10) for n in names]
    cores = "" if "cores" in names else "  cores"
    print("  " + "  ".join(n.rjust(w) for n, w in zip(names, widths, strict=True)) + cores)
    for e in result.front:
        values = "  ".join(f"{e.objectives[n]:{w}.4g}" for n, w in zip(names, widths, strict=True))
        used = f"  {sum(e.cores_per_population):5d}" if cores else ""
        chosen = " ".join(f"{k}={v:g}" for k, v in e.hardware.items())
        print(f"  {values}{used}  {chosen}  {e.note}".rstrip())
    check = summary.get("simulator_check")
    if check:
        simulated = ", ".join(
            f"#{c['index']} {c['predicted_us']:.3f} -> "
            + ("failed" if c["simulated_us"] is None else f"{c['simulated_us']:.3f}")
            for c in check["candidates"]
        )
        print(f"  simulated (predicted by {check['predictor']} -> simulated latency us): "
              f"{simulated}; on the simulator's front: "
              f"{', '.join(f'#{i}' for i in check['front'])}")  # fmt: skip
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
    for what, path in run.written.items():
        print(f"  {what} written to {path}")


def cmd_spread(args) -> int:
    from engine.search.space import placement_spread

    check_outputs(("figure", args.figure, FIGURE), inputs=inputs_of(args))
    with work(args):
        spread = placement_spread(
            build(MappingSettings.of(args)), samples=args.samples, seed=args.seed
        )
    if args.figure:
        spread.write_figure(args.figure)
    s = spread.summary()
    if args.json:
        counts, edges = spread.histogram()
        print(json.dumps({**s, "histogram": {"counts": counts.tolist(), "edges_us": edges.tolist()},
                          "latency_us": spread.latency_us.tolist()}))  # fmt: skip
        return 0
    print(f"{s['network']} on {s['hardware']}: one partitioning ({s['cores_used']} cores), "
          f"{s['samples']} random placements (seed {s['seed']})")  # fmt: skip
    print(f"  latency us/step  min {s['min_us']:.2f}  median {s['median_us']:.2f}  mean "
          f"{s['mean_us']:.2f}  max {s['max_us']:.2f}")  # fmt: skip
    print(f"  spread           std {s['std_us']:.2f} us (cv {s['cv']:.2f}), max/min "
          f"{s['max_over_min']:.2f}")  # fmt: skip
    counts, edges = spread.histogram()
    width = 40 / max(int(counts.max()), 1)
    for n, lo, hi in zip(counts, edges[:-1], edges[1:], strict=True):
        print(f"  {lo:8.2f}–{hi:<8.2f} {'#' * round(n * width):<40} {n}")
    if args.figure:
        print(f"  figure written to {args.figure}")
    return 0


COMMANDS = {
    "evolve": "search partition and placement (Loihi 2 mapping ES, nested (1+λ)-ES)",
    "spread": "one partitioning's latency across random placements (Loihi 2 mapping ES Fig. 3)",
    "pareto": "multi-objective search on pymoo (SENMap): NSGA-II, NSGA-III, GA, PSO, ISRES, MOEA/D",
}


def _unfit(e) -> str:
    """Why a named evaluation is off the front: the limit it breaks."""
    layers, beyond = e.violations
    rows = e.metrics.get("routing_overflow", 0.0)
    if rows:
        return f" — does not fit: its tiles lack {rows:.0f} crossbar rows"
    return f" — does not fit: {layers:.0f} layers over a core limit, {beyond:.0f} cores too many"


def _search_options(
    p, *, budget: int, budget_help: str, seed: int | None, seed_help: str, init_k_help: str,
    start_help: str, out_help: str, history_help: str, resume_help: str,
) -> None:  # fmt: skip
    """What ``evolve`` and ``pareto`` both take: the workload, the budget and seed, the
    heuristics' start, where evaluations run and what rates them, the files a run reads and
    writes (each command says what its own mean)."""
    workload_options(p)
    p.add_argument(
        "--budget", type=whole(1, MAX_EVALUATIONS), default=budget, help=budget_help
    )  # fmt: skip
    p.add_argument("--seed", type=whole(0), default=seed, help=seed_help)
    p.add_argument("--init-k", type=whole(0), default=None, help=init_k_help)
    executor_options(p)
    predictor_option(p, search=True)
    for option, text in (
        ("--start", start_help), ("--out", out_help), ("--history", history_help),
        ("--resume", resume_help),
    ):  # fmt: skip
        p.add_argument(option, metavar="FILE", help=text)
    json_option(p)


def add_commands(sub) -> None:
    """``evolve``, ``spread`` and ``pareto``."""
    from engine.search import ESConfig, objectives, strategies
    from engine.search.pareto import ParetoConfig, algorithms
    from engine.search.space import MAX_SAMPLES

    d = ESConfig()
    es = sub.add_parser("evolve", help=COMMANDS["evolve"])
    # a setting's default is None here (ESConfig's applies): a resumed run must know which
    # were given, for its checkpoint's settings win and a different one is refused
    _search_options(
        es, budget=d.budget, budget_help=ESConfig.help("budget"), seed=None,
        seed_help=ESConfig.help("seed"),
        init_k_help=f"{ESConfig.help('init_k')} (default {d.init_k}; at most the cores beyond "
        "the minimum partition)",
        start_help="a mapping file (a hand-tuned mapping) to start from besides the heuristics; "
        "its layers split uniformly into consecutive cores, as evolve and the layer partitioner "
        "write them",
        out_help="write the best mapping as a mapping file",
        history_help="every evaluation, as .csv or JSON lines",
        resume_help="continue the run of this checkpoint",
    )  # fmt: skip
    es.add_argument(
        "--lambda-part", type=whole(1, MAX_GENERATION), help=ESConfig.help("lambda_part")
    )
    es.add_argument(
        "--lambda-place", type=whole(1, MAX_GENERATION), help=ESConfig.help("lambda_place")
    )
    es.add_argument("--no-reorder", action="store_true", help="ablation: no reordering operator")
    es.add_argument("--no-elitism", action="store_true", help="ablation: (1,λ) partitioning")
    es.add_argument(
        "--strategy", choices=strategies.names(), default="global",
        help="global: one search over every chip; chipwise: one search per chip (default global)",
    )  # fmt: skip
    es.add_argument(
        "--segments", type=whole(1), default=None, metavar="K",
        help="chipwise: split the layers into K contiguous segments, one chip each (default as "
        "few as hold the layers, at least 2: each more adds traffic between chips)",
    )  # fmt: skip
    es.add_argument(
        "--objective", choices=objectives.names(), help=ESConfig.help("objective"),
    )  # fmt: skip
    es.add_argument("--checkpoint", metavar="FILE", help="write a checkpoint every generation")
    es.set_defaults(func=cmd_evolve)

    sp = sub.add_parser("spread", help=COMMANDS["spread"])
    workload_options(sp)
    partition_option(sp, help=PARTITION_HELP + " (default min+2, as the paper's searches start)")
    sp.add_argument("--split", metavar="SPLIT", help=SPLIT_HELP)
    sp.add_argument(
        "--samples", type=whole(1, MAX_SAMPLES), default=50,
        help="random placements to evaluate (default 50, as Fig. 3)",
    )  # fmt: skip
    seed_option(sp, help="seed of the placements drawn and of a random partitioner (default 0)")
    sp.add_argument("--figure", metavar="FILE", help="write the histogram (.png/.svg/.pdf)")
    json_option(sp)
    sp.set_defaults(func=cmd_spread, placement=None, default_partition="min+2",
                    default_placement="packed-row")  # fmt: skip

    pd = ParetoConfig()
    pa = sub.add_parser("pareto", help=COMMANDS["pareto"])
    _search_options(
        pa, budget=pd.budget, budget_help="evaluations (default 2000)", seed=0,
        seed_help="seed of every random choice",
        init_k_help=f"the heuristics start from min+K (default {pd.init_k})",
        start_help="a mapping file to evaluate first",
        out_help="write the front as JSON: 'front' (objectives by name and the mapping of each "
        "point), 'evaluations' (their count), the heuristics' points",
        history_help="every evaluation, as .csv or JSON lines, written as the run goes (resume "
        "a run from it)",
        resume_help="continue the run whose history this is (same settings, a larger "
        "--budget): its evaluations are taken, not repeated, and the file grows",
    )  # fmt: skip
    pa.add_argument(
        "--objectives", default=",".join(pd.objectives), metavar="A,B[,C]",
        help=f"what to minimize, by name: {', '.join(objectives.names())} (default "
        f"{','.join(pd.objectives)})",
    )  # fmt: skip
    pa.add_argument(
        "--algorithm", choices=algorithms.names(), default=pd.algorithm,
        help="the pymoo algorithm (see 'meshscope list algorithms'): "
        + ", ".join(f"{n} ({a.objectives} objective{'' if a.objectives == 'one' else 's'})"
                    for n, a in algorithms.items())
        + f" (default {pd.algorithm})",
    )  # fmt: skip
    pa.add_argument(
        "--population", type=whole(2, MAX_GENERATION), default=None,
        help="population size (default the algorithm's: SENMap Table II's 40 for NSGA-II/III, "
        "30 for the GA; 25 PSO, 30 ISRES, 40 MOEA/D)",
    )  # fmt: skip
    pa.add_argument(
        "--offspring", type=whole(1, MAX_GENERATION), default=None,
        help="offspring a generation (default 10 for NSGA-II/III, a population for the GA and "
        "MOEA/D, 7 × the population for ISRES; PSO moves its whole swarm)",
    )  # fmt: skip
    pa.add_argument(
        "--codesign", metavar="P[,Q…]|all",
        help="hardware co-design (SENMap §IV-H): choose these parameters of the hardware too, "
        "over the values its preset's [codesign] table gives (memory_kib, npes, clock_scale, "
        "flit_scale, state_bits, output_bits; e.g. --hardware seneca --codesign all)",
    )  # fmt: skip
    pa.set_defaults(func=cmd_pareto)
