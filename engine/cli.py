"""The ``meshscope`` command (the explorer adds ``serve``; see ``explorer.cli``).

    meshscope list [networks|hardware|partitioners|placers|objectives|strategies] [--json]
    meshscope evaluate [--network SPEC] [--hardware SPEC] [--partition SPEC]
                       [--placement NAME | --mapping FILE] [--links] [--json] [--save FILE]
    meshscope map [--network SPEC] [--hardware SPEC] [--partition SPEC] [--placement NAME]
                  [--json] [--save FILE]
    meshscope convert --network SPEC --out FILE.hgr|FILE.npz
    meshscope evolve [--network SPEC] [--hardware SPEC] [--budget N] [--seed S] [options]

Every command builds its mapping through ``engine.pipeline``. On bad input: one line on
stderr and exit code 2; output files are checked before any work starts and written
whole or not at all. On a terminal, long work shows a progress bar (quiet when piped).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import shutil
import sys
from collections.abc import Callable, Iterable

from engine.errors import MeshScopeError, SpecError
from engine.io.files import check_readable, check_writable
from engine.specs import DEFAULT_HARDWARE, DEFAULT_NETWORK, DEFAULT_PLACEMENT

__all__ = ["build_parser", "main"]

LIST_KINDS = ("networks", "hardware", "partitioners", "placers", "objectives", "strategies")
NETWORK_HELP = (
    f"workload spec (see 'meshscope list networks') or network file (default {DEFAULT_NETWORK})"
)
HARDWARE_HELP = (
    f"hardware preset, preset TOML file or mesh:WxH[xK][@CXxCY] (default {DEFAULT_HARDWARE})"
)
PARTITION_HELP = (
    "min, min+K, natural, cores:C1,C2,…, file:PATH or a partitioner "
    "(see 'meshscope list partitioners'; without it, the network's natural split, else min)"
)
PLACEMENT_HELP = "placer, or PLACER+force to refine it (see 'meshscope list placers')"


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, exit 2
        sys.stderr.write(f"meshscope: error: {message} (see meshscope --help)\n")
        sys.exit(2)


# ------------------------------------------------------------------ terminal
def _on_terminal(args) -> bool:
    """Progress is shown on a terminal, never when stderr is piped or with --json."""
    return sys.stderr.isatty() and not getattr(args, "json", False)


def _bar(args, total: int, **kwargs):
    """A tqdm bar on stderr when on a terminal, else None."""
    if not _on_terminal(args):
        return None
    from tqdm import tqdm

    ncols = shutil.get_terminal_size((100, 24)).columns or 100  # a 0-wide pty: 100 columns
    return tqdm(total=total, file=sys.stderr, ncols=min(ncols, 120), leave=False, **kwargs)


@contextlib.contextmanager
def _work(args):
    """Around a command's work: on a terminal, say when numba compiles its kernels."""
    if not _on_terminal(args):
        yield
        return
    from engine.kernels import compiling_notice

    with compiling_notice(lambda text: sys.stderr.write(f"meshscope: {text}\n")):
        yield


class _Steps:
    """On a terminal, a bar over a command's steps (partition, place, evaluate …)."""

    def __init__(self, args, names: Iterable[str]):
        self.names = list(names)
        self.bar = _bar(args, len(self.names), bar_format="{desc:<24} {bar} {n}/{total}")
        self.done = -1

    def __call__(self, name: str) -> None:
        """Step ``name`` starts (the steps before it are done)."""
        if self.bar is not None:
            done = self.names.index(name)
            self.bar.update(done - max(self.done, 0))
            self.bar.set_description_str(f"{name}…")
            self.done = done

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def _check_outputs(*paths) -> None:
    """Fail before any work when an output path cannot be written."""
    for what, path in paths:
        if path:
            check_writable(path, what)


# ------------------------------------------------------------------ list
def _listing(what: str) -> dict:
    from engine.hardware import load_hardware, preset_names
    from engine.partition import partitioners
    from engine.placement import placers
    from engine.search import objectives, strategies
    from engine.specs import demo_files
    from engine.workloads import workload_info

    if what == "networks":
        return {"generators": workload_info(), "files": [str(p) for p in demo_files()]}
    if what == "hardware":
        return {
            "presets": [load_hardware(n).summary() for n in preset_names()],
            "generic": "mesh:WxH[xK][@CXxCY]",
        }
    registry = {
        "partitioners": partitioners,
        "placers": placers,
        "objectives": objectives,
        "strategies": strategies,
    }[what]
    return registry.describe()


def cmd_list(args) -> int:
    kinds = [args.what] if args.what else list(LIST_KINDS)
    data = {k: _listing(k) for k in kinds}
    if args.json:
        print(json.dumps(data if len(kinds) > 1 else data[kinds[0]], indent=2))
        return 0
    for kind, items in data.items():
        print(f"{kind}:")
        if kind == "networks":
            for g in items["generators"]:
                params = ",".join(f"{k}={v}" for k, v in g["params"].items())
                print(f"  {g['name']}{':' + params if params else ''}\n      {g['description']}")
            for f in items["files"]:
                print(f"  {f}")
        elif kind == "hardware":
            for h in items["presets"]:
                print(f"  {h['name']:<15} {h['cores']:>5} cores  {h['description']}")
            print(f"  {items['generic']}")
        else:
            for name, doc in items.items():
                print(f"  {name:<16} {doc}")
    return 0


# ------------------------------------------------------------------ evaluate / map
def _build(args, steps: _Steps | None = None):
    """The ``Mapped`` the mapping options name (``engine.pipeline.build_mapping``)."""
    from engine.pipeline import build_mapping

    if getattr(args, "mapping", None):
        if args.partition or args.placement:
            raise SpecError("give either --mapping or --partition/--placement, not both")
        return build_mapping(args.network, args.hardware, mapping_file=args.mapping)
    return build_mapping(
        args.network,
        args.hardware,
        partition=args.partition or args.default_partition,
        placement=args.placement or args.default_placement,
        seed=args.seed,
        progress=steps,
    )


def _metrics_line(m: dict) -> str:
    return (
        f"  SNN hypergraphs metrics: connectivity {m['connectivity']:.1f}, average latency "
        f"{m['average_latency_ns']:.1f} ns, congestion {m['congestion']:.1f}, synaptic reuse "
        f"{m['synaptic_reuse']:.2f}, connection locality {m['connection_locality']:.2f}"
    )


def cmd_evaluate(args) -> int:
    from engine.pipeline import evaluate, write_mapping_file

    _check_outputs(("mapping file", args.save))
    with _work(args):
        mapped = _build(args)
        ev = evaluate(mapped)
    network, hardware = mapped.network, mapped.hardware
    if args.save:
        write_mapping_file(args.save, mapped, ev)
    if args.json:
        out = {"network": network.name, "hardware": hardware.name}
        out.update(ev.to_dict(hardware, links=args.links))
        print(json.dumps(out, indent=2))
        return 0
    print(f"{network.name} on {hardware.name}: {ev.cores_used} cores on {ev.chips_used} chip(s)")
    print(f"  latency  {ev.latency_us:10.3f} us/step   bound by {ev.bottleneck}")
    print(f"  energy   {ev.energy_uj:10.3f} uJ/step   power {ev.power_w:.3f} W")
    terms = "  ".join(f"{k} {v:.3f}" for k, v in ev.terms_us.items())
    print(f"  terms    {terms}  (us)")
    print(f"  heaviest link {ev.max_link_messages:.1f} messages/step")
    print(_metrics_line(ev.metrics))
    if args.links:
        print("  links (kind src -> dst: messages, utilization):")
        for link in sorted(ev.links(hardware), key=lambda d: -d["messages"]):
            print(
                f"    {link['kind']:<15} {link['src']} -> {link['dst']}: "
                f"{link['messages']:.1f}, {link['utilization']:.1%}"
            )
    if args.save:
        print(f"  saved mapping to {args.save}")
    return 0


def cmd_map(args) -> int:
    import time

    from engine.pipeline import PHASES, evaluate, write_mapping_file

    _check_outputs(("mapping file", args.save))
    steps = _Steps(args, [*PHASES, "evaluate"])
    try:
        with _work(args):
            mapped = _build(args, steps)
            steps("evaluate")
            t0 = time.perf_counter()
            ev = evaluate(mapped)
            seconds = {**mapped.seconds, "evaluate": time.perf_counter() - t0}
    finally:
        steps.close()
    if args.save:
        write_mapping_file(args.save, mapped, ev)
    network, hardware = mapped.network, mapped.hardware
    partition = args.partition or args.default_partition
    placement = args.placement or args.default_placement
    out = {
        "network": network.name,
        "hardware": hardware.name,
        "partitioner": partition,
        "placer": placement,
        "partitions": mapped.mapping.partition.n_parts,
        "connectivity": ev.metrics["connectivity"],
        "metrics": ev.metrics,
        "latency_us": ev.latency_us,
        "energy_uj": ev.energy_uj,
        "bottleneck": ev.bottleneck,
        "seconds": seconds,
    }
    if args.json:
        print(json.dumps(out, indent=2))
        return 0
    m = ev.metrics
    print(f"{network.name} on {hardware.name}: {partition} + {placement}")
    print(f"  partitions     {out['partitions']}")
    print(f"  connectivity   {m['connectivity']:.1f} messages/step (SNN hypergraphs eq. 7, λ−1)")
    print(
        f"  hypergraphs    energy {m['routing_energy_pj']:.4g} pJ, average latency "
        f"{m['average_latency_ns']:.2f} ns, congestion {m['congestion']:.4g}, ELP {m['elp']:.4g}"
    )
    print(
        f"                 synaptic reuse {m['synaptic_reuse']:.2f}, connection locality "
        f"{m['connection_locality']:.2f}"
    )
    print(f"  max-affine     {ev.latency_us:.3f} us/step bound by {ev.bottleneck}")
    print(
        f"  time           partition {seconds['partition']:.2f} s, partition graph "
        f"{seconds['partition_graph']:.2f} s, place {seconds['place']:.2f} s, "
        f"evaluate {seconds['evaluate']:.2f} s"
    )
    if args.save:
        print(f"  saved mapping to {args.save}")
    return 0


# ------------------------------------------------------------------ convert
def cmd_convert(args) -> int:
    from pathlib import Path

    from engine.io.hgr import write_hgr
    from engine.io.network_file import save_network
    from engine.pipeline import resolve_network

    writers = {".hgr": write_hgr, ".npz": save_network}
    suffix = Path(args.out).suffix
    if suffix not in writers:
        raise SpecError(f"--out must end in .hgr (hMETIS) or .npz (MeshScope), not {suffix!r}")
    _check_outputs(("output file", args.out))
    steps = _Steps(args, ["read network", "write"])
    try:
        with _work(args):
            steps("read network")
            network = resolve_network(args.network)
            steps("write")
            writers[suffix](network, args.out)
    finally:
        steps.close()
    print(
        f"wrote {network.name} ({network.n_neurons} neurons, {network.n_synapses} synapses) "
        f"to {args.out}"
    )
    return 0


# ------------------------------------------------------------------ evolve
def cmd_evolve(args) -> int:
    if args.resume:
        check_readable(args.resume, "checkpoint")
    _check_outputs(
        ("mapping file", args.out),
        ("history file", args.history),
        ("checkpoint", args.checkpoint or args.resume),
    )
    with _work(args):
        return _evolve(args)


def _evolve(args) -> int:
    import threading

    from engine.cost import evaluate
    from engine.pipeline import Mapped, resolve_hardware, resolve_network, write_mapping_file
    from engine.search import CommandEvaluator, ESConfig, ModelEvaluator, NestedES, make_search

    network = resolve_network(args.network or DEFAULT_NETWORK)
    hardware = resolve_hardware(args.hardware or DEFAULT_HARDWARE)
    config = ESConfig(
        budget=args.budget,
        lambda_part=args.lambda_part,
        lambda_place=args.lambda_place,
        reorder=not args.no_reorder,
        elitist=not args.no_elitism,
        objective=args.objective,
        init_k=args.init_k,
        seed=args.seed,
    )
    if args.evaluator_cmd:
        evaluator = CommandEvaluator(
            network, hardware, args.evaluator_cmd, timeout_s=args.eval_timeout, workers=args.workers
        )
    else:
        evaluator = ModelEvaluator(network, hardware, workers=args.workers)
    bar = None
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
                network, hardware, config, strategy=args.strategy, evaluator=evaluator
            )
        bar = _bar(args, config.budget, initial=len(search.history), unit="eval")

        def progress(event):
            if bar is not None:
                bar.update(1)
                bar.set_postfix_str(f"best {event.best.fitness:.3f}", refresh=False)

        cancel = threading.Event()
        try:
            result = search.run(
                cancel=cancel, checkpoint=args.checkpoint or args.resume, callback=progress
            )
        except KeyboardInterrupt:  # keep the best found so far
            result = search.result(cancelled=True)
    finally:
        if bar is not None:
            bar.close()
        evaluator.close()
    best_mapping = result.mapping(network)
    best_eval = evaluate(network, hardware, best_mapping)
    if args.out:
        write_mapping_file(args.out, Mapped.of(network, hardware, best_mapping), best_eval)
    if args.history:
        result.history.write(args.history)
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
    }
    if args.json:
        print(json.dumps(summary, indent=2))
        return 0
    heur = ", ".join(f"{n} {v:.2f}" for n, v in summary["heuristics"].items())
    print(f"{network.name} on {hardware.name}, {args.strategy}, objective {config.objective}")
    print(f"  heuristics (latency us): {heur}")
    print(
        f"  best: latency {best_eval.latency_us:.3f} us, energy {best_eval.energy_uj:.3f} uJ, "
        f"power {best_eval.power_w:.3f} W, bound by {best_eval.bottleneck}, "
        f"{best_eval.cores_used} cores {list(result.best.cores_per_population)}"
    )
    print(
        f"  {result.improvement_pct:.1f}% better than the best heuristic after "
        f"{result.evaluations} evaluations ({result.failed} failed)"
        + (" — cancelled" if result.cancelled else "")
    )
    for what, path in (("best mapping", args.out), ("history", args.history)):
        if path:
            print(f"  {what} written to {path}")
    return 0


# ------------------------------------------------------------------ parser
def _mapping_options(p, *, partition: str | None, placement: str):
    """The options that name a mapping; ``--partitioner``/``--placer`` are aliases."""
    p.add_argument("--network", help=NETWORK_HELP)
    p.add_argument("--hardware", help=HARDWARE_HELP)
    p.add_argument(
        "--partition", "--partitioner", dest="partition",
        help=PARTITION_HELP + (f" (default {partition})" if partition else ""),
    )  # fmt: skip
    p.add_argument(
        "--placement", "--placer", dest="placement", help=f"{PLACEMENT_HELP} (default {placement})"
    )
    p.add_argument("--seed", type=int, default=0, help="seed of random partitioners and placers")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    p.add_argument("--save", metavar="FILE", help="write the mapping as a MeshScope mapping file")
    p.set_defaults(default_partition=partition, default_placement=placement)


def build_parser(
    extra_commands: Iterable[Callable[[argparse._SubParsersAction], None]] = (),
) -> argparse.ArgumentParser:
    """The ``meshscope`` parser; each of ``extra_commands`` adds a subcommand (``serve``)."""
    from engine.search import ESConfig, objectives, strategies

    p = _Parser(
        prog="meshscope",
        description="Map spiking neural networks onto mesh accelerators: evaluate, map, "
        "convert and evolve mappings, or serve the explorer.",
    )
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)

    ls = sub.add_parser("list", help="list networks, hardware, partitioners, placers …")
    ls.add_argument("what", nargs="?", choices=LIST_KINDS, help="one kind only (default: all)")
    ls.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    ls.set_defaults(func=cmd_list)

    ev = sub.add_parser("evaluate", help="latency, energy and link loads of one mapping")
    _mapping_options(ev, partition=None, placement=DEFAULT_PLACEMENT)
    ev.add_argument(
        "--mapping", metavar="FILE", help="a mapping file instead of --partition/--placement"
    )
    ev.add_argument("--links", action="store_true", help="also report every loaded link")
    ev.set_defaults(func=cmd_evaluate)

    mp = sub.add_parser(
        "map", help="partition and place with the SNN hypergraphs algorithms, timed"
    )
    _mapping_options(mp, partition="overlap", placement="spectral+force")
    mp.set_defaults(func=cmd_map)

    cv = sub.add_parser("convert", help="write a network as hMETIS .hgr or MeshScope .npz")
    cv.add_argument("--network", required=True, help=NETWORK_HELP.split(" (default")[0])
    cv.add_argument("--out", required=True, metavar="FILE", help="FILE.hgr (hMETIS) or FILE.npz")
    cv.set_defaults(func=cmd_convert)

    d = ESConfig()
    es = sub.add_parser(
        "evolve", help="search partition and placement (Loihi 2 mapping ES, nested (1+λ)-ES)"
    )
    es.add_argument("--network", help=NETWORK_HELP)
    es.add_argument("--hardware", help=HARDWARE_HELP)
    es.add_argument("--budget", type=int, default=d.budget, help=ESConfig.help("budget"))
    es.add_argument("--seed", type=int, default=d.seed, help=ESConfig.help("seed"))
    es.add_argument(
        "--lambda-part", type=int, default=d.lambda_part, help=ESConfig.help("lambda_part")
    )
    es.add_argument(
        "--lambda-place", type=int, default=d.lambda_place, help=ESConfig.help("lambda_place")
    )
    es.add_argument("--no-reorder", action="store_true", help="ablation: no reordering operator")
    es.add_argument("--no-elitism", action="store_true", help="ablation: (1,λ) partitioning")
    es.add_argument("--init-k", type=int, default=d.init_k, help=ESConfig.help("init_k"))
    es.add_argument(
        "--strategy", choices=strategies.names(), default="global",
        help="global: one search over every chip; chipwise: one search per chip (default global)",
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
        "--eval-timeout", type=float, default=60.0, metavar="SEC",
        help="seconds before an evaluator command counts as failed (default 60)",
    )  # fmt: skip
    es.add_argument(
        "--workers", type=int, default=1, help="evaluations run in parallel (default 1)"
    )
    es.add_argument("--out", metavar="FILE", help="write the best mapping as a mapping file")
    es.add_argument("--history", metavar="FILE", help="every evaluation, as .csv or JSON lines")
    es.add_argument("--checkpoint", metavar="FILE", help="write a checkpoint every generation")
    es.add_argument("--resume", metavar="FILE", help="continue the run of this checkpoint")
    es.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    es.set_defaults(func=cmd_evolve)

    for add in extra_commands:
        add(sub)
    return p


def main(argv=None, extra_commands=()) -> int:
    """Run ``meshscope argv``; returns the exit code (2 on bad input, one line on stderr)."""
    args = build_parser(extra_commands).parse_args(argv)
    try:
        return args.func(args)
    except MeshScopeError as e:
        sys.stderr.write(f"meshscope: error: {' '.join(str(e).split())}\n")
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
