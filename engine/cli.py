"""The ``meshscope`` command.

    meshscope list [networks|hardware|partitioners|placers] [--json]
    meshscope evaluate --network SPEC --hardware SPEC [--partition SPEC]
                       [--placement NAME | --mapping FILE] [--links] [--json] [--save FILE]
    meshscope map --network SPEC --hardware SPEC --partitioner NAME --placer NAME [--json]
    meshscope convert --network SPEC --out FILE.hgr|FILE.npz
    meshscope evolve --network SPEC --hardware SPEC --budget N --seed S [options]
    meshscope serve [--network SPEC] [--hardware SPEC] [--mapping FILE] [--port P] [--no-browser]

On bad input: one line on stderr and exit code 2.
"""

from __future__ import annotations

import argparse
import json
import sys

from engine.errors import MeshScopeError
from engine.specs import DEFAULT_HARDWARE, DEFAULT_NETWORK, DEFAULT_PLACEMENT


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, exit 2
        sys.stderr.write(f"meshscope: error: {message} (see meshscope --help)\n")
        sys.exit(2)


def _listing(what: str) -> dict:
    from engine.hardware import load_hardware, preset_names
    from engine.partition import partitioners
    from engine.placement import placers
    from engine.specs import demo_files
    from engine.workloads import workload_info

    def doc(fn):
        return (fn.__doc__ or "").strip().split("\n")[0]

    if what == "networks":
        return {
            "generators": workload_info(),
            "files": [str(p) for p in demo_files()],
        }
    if what == "hardware":
        return {
            "presets": [load_hardware(n).summary() for n in preset_names()],
            "generic": "mesh:WxH[xK][@CXxCY]",
        }
    if what == "partitioners":
        return {p.grammar: doc(p) for p in partitioners.values()}
    return {name: doc(fn) for name, fn in placers.items()}


def cmd_list(args) -> int:
    kinds = [args.what] if args.what else ["networks", "hardware", "partitioners", "placers"]
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


def resolve_mapping(args):
    """(network, hardware, mapping) from --network/--hardware/--partition/--placement/--mapping."""
    from engine.mapping import Mapping, read_mapping_file
    from engine.partition import make_partition
    from engine.partition_graph import partition_graph
    from engine.placement import make_placement
    from engine.specs import load_hardware_spec, load_network_spec

    if args.mapping:
        if args.partition or args.placement:
            raise MeshScopeError("give either --mapping or --partition/--placement, not both")
        mf = read_mapping_file(args.mapping)
        network = load_network_spec(args.network or mf.network_name)
        hardware = load_hardware_spec(args.hardware or mf.hardware_name)
        return network, hardware, mf.build(network, hardware)
    network = load_network_spec(args.network or DEFAULT_NETWORK)
    hardware = load_hardware_spec(args.hardware or DEFAULT_HARDWARE)
    partition = make_partition(network, hardware, args.partition, seed=args.seed)
    stats = partition_graph(network, hardware, partition)
    placement = make_placement(stats, hardware, args.placement or DEFAULT_PLACEMENT, seed=args.seed)
    return network, hardware, Mapping(partition, placement)


def cmd_evaluate(args) -> int:
    from engine.cost import evaluate
    from engine.mapping import mapping_to_dict

    network, hardware, mapping = resolve_mapping(args)
    ev = evaluate(network, hardware, mapping)
    if args.save:
        with open(args.save, "w") as f:
            json.dump(mapping_to_dict(network, hardware, mapping, ev), f, indent=1)
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
    m = ev.metrics
    print(
        f"  seed 004: connectivity {m['connectivity']:.1f}, avg latency "
        f"{m['average_latency_ns']:.1f} ns, congestion {m['congestion']:.1f}, synaptic reuse "
        f"{m['synaptic_reuse']:.2f}, connection locality {m['connection_locality']:.2f}"
    )
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

    from engine.cost import evaluate
    from engine.mapping import Mapping, mapping_to_dict
    from engine.partition import make_partition
    from engine.partition_graph import partition_graph
    from engine.placement import make_placement
    from engine.specs import load_hardware_spec, load_network_spec

    network = load_network_spec(args.network or DEFAULT_NETWORK)
    hardware = load_hardware_spec(args.hardware or DEFAULT_HARDWARE)
    t0 = time.perf_counter()
    partition = make_partition(network, hardware, args.partitioner, seed=args.seed)
    t1 = time.perf_counter()
    stats = partition_graph(network, hardware, partition)
    tg = time.perf_counter()
    placement = make_placement(stats, hardware, args.placer, seed=args.seed)
    t2 = time.perf_counter()
    mapping = Mapping(partition, placement)
    ev = evaluate(network, hardware, mapping)
    t3 = time.perf_counter()
    if args.save:
        with open(args.save, "w") as f:
            json.dump(mapping_to_dict(network, hardware, mapping, ev), f, indent=1)
    out = {
        "network": network.name,
        "hardware": hardware.name,
        "partitioner": args.partitioner,
        "placer": args.placer,
        "partitions": partition.n_parts,
        "connectivity": ev.metrics["connectivity"],
        "metrics": ev.metrics,
        "latency_us": ev.latency_us,
        "energy_uj": ev.energy_uj,
        "bottleneck": ev.bottleneck,
        "seconds": {
            "partition": t1 - t0,
            "partition_graph": tg - t1,
            "place": t2 - tg,
            "evaluate": t3 - t2,
        },
    }
    if args.json:
        print(json.dumps(out, indent=2))
        return 0
    m = ev.metrics
    print(f"{network.name} on {hardware.name}: {args.partitioner} + {args.placer}")
    print(f"  partitions     {partition.n_parts}")
    print(f"  connectivity   {m['connectivity']:.1f} messages/step (seed 004 eq. 7, λ−1)")
    print(
        f"  seed 004       energy {m['routing_energy_pj']:.4g} pJ, average latency "
        f"{m['average_latency_ns']:.2f} ns, congestion {m['congestion']:.4g}, ELP {m['elp']:.4g}"
    )
    print(
        f"                 synaptic reuse {m['synaptic_reuse']:.2f}, connection locality "
        f"{m['connection_locality']:.2f}"
    )
    print(f"  max-affine     {ev.latency_us:.3f} us/step bound by {ev.bottleneck}")
    secs = out["seconds"]
    print(
        f"  time           partition {secs['partition']:.2f} s, partition graph "
        f"{secs['partition_graph']:.2f} s, place {secs['place']:.2f} s, "
        f"evaluate {secs['evaluate']:.2f} s"
    )
    if args.save:
        print(f"  saved mapping to {args.save}")
    return 0


def cmd_convert(args) -> int:
    from pathlib import Path

    from engine.io.hgr import write_hgr
    from engine.io.network_file import save_network
    from engine.specs import load_network_spec

    network = load_network_spec(args.network)
    suffix = Path(args.out).suffix
    if suffix == ".hgr":
        write_hgr(network, args.out)
    elif suffix == ".npz":
        save_network(network, args.out)
    else:
        raise MeshScopeError(f"--out must end in .hgr (hMETIS) or .npz (MeshScope), not {suffix!r}")
    print(f"wrote {network.name} ({network.n_neurons} neurons, {network.n_synapses} synapses) "
          f"to {args.out}")  # fmt: skip
    return 0


def cmd_evolve(args) -> int:
    import dataclasses
    import threading

    from engine.cost import evaluate
    from engine.mapping import mapping_to_dict
    from engine.search import CommandEvaluator, ESConfig, ModelEvaluator, NestedES
    from engine.search.multichip import make_search
    from engine.specs import load_hardware_spec, load_network_spec

    network = load_network_spec(args.network or DEFAULT_NETWORK)
    hardware = load_hardware_spec(args.hardware or DEFAULT_HARDWARE)
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
    if args.resume:
        if args.strategy != "global":
            raise MeshScopeError(
                "--resume continues a global run; chipwise runs keep no checkpoint"
            )
        search = NestedES.resume(
            args.resume, network, hardware, evaluator=evaluator, budget=args.budget
        )
        config = search.config
    else:
        search = make_search(network, hardware, config, strategy=args.strategy, evaluator=evaluator)
    checkpoint = args.checkpoint or args.resume
    bar = None
    if sys.stderr.isatty() and not args.json:
        from tqdm import tqdm

        bar = tqdm(total=config.budget, initial=len(search.history), unit="eval", file=sys.stderr)

    def progress(event):
        if bar is not None:
            bar.update(1)
            bar.set_postfix_str(f"best {event.best.fitness:.3f}", refresh=False)

    cancel = threading.Event()
    try:
        result = search.run(cancel=cancel, checkpoint=checkpoint, callback=progress)
    except KeyboardInterrupt:  # keep the best found so far
        result = search.result(cancelled=True)
    finally:
        if bar is not None:
            bar.close()
        evaluator.close()
    best_mapping = result.mapping(network)
    best_eval = evaluate(network, hardware, best_mapping)
    if args.out:
        with open(args.out, "w") as f:
            json.dump(mapping_to_dict(network, hardware, best_mapping, best_eval), f, indent=1)
    if args.history:
        result.history.write(args.history)
    initial_eval = evaluate(
        network, hardware, dataclasses.replace(result, best=result.initial).mapping(network)
    )
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


def cmd_serve(args) -> int:
    from explorer.app import serve

    serve(  # with --mapping, the network and hardware default to the file's
        network=args.network or (None if args.mapping else DEFAULT_NETWORK),
        hardware=args.hardware or (None if args.mapping else DEFAULT_HARDWARE),
        mapping=args.mapping,
        port=args.port,
        address=args.address,
        show=not args.no_browser,
    )
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="meshscope", description="Map spiking neural networks onto mesh accelerators.")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)

    ls = sub.add_parser("list", help="list networks, hardware, partitioners or placers")
    ls.add_argument("what", nargs="?", choices=["networks", "hardware", "partitioners", "placers"])
    ls.add_argument("--json", action="store_true")
    ls.set_defaults(func=cmd_list)

    ev = sub.add_parser("evaluate", help="latency, energy and link loads of one mapping")
    ev.add_argument("--network", help=f"workload spec or network file (default {DEFAULT_NETWORK})")
    ev.add_argument(
        "--hardware", help=f"preset, TOML file or mesh:WxH… (default {DEFAULT_HARDWARE})"
    )
    ev.add_argument("--partition", help="min, min+K, natural, cores:C1,C2,… or a partitioner")
    ev.add_argument("--placement", help=f"placer name (default {DEFAULT_PLACEMENT})")
    ev.add_argument("--mapping", help="a mapping JSON file instead of --partition/--placement")
    ev.add_argument("--seed", type=int, default=0, help="seed of random partitioners/placers")
    ev.add_argument("--links", action="store_true", help="also report every loaded link")
    ev.add_argument("--json", action="store_true", help="machine-readable output")
    ev.add_argument("--save", metavar="FILE", help="write the mapping as JSON")
    ev.set_defaults(func=cmd_evaluate)

    mp = sub.add_parser("map", help="partition and place with seed 004's algorithms")
    mp.add_argument("--network", help=f"workload spec or network file (default {DEFAULT_NETWORK})")
    mp.add_argument(
        "--hardware", help=f"preset, TOML file or mesh:WxH… (default {DEFAULT_HARDWARE})"
    )
    mp.add_argument("--partitioner", default="overlap", help="partitioner or partition spec")
    mp.add_argument("--placer", default="spectral+force", help="placer, or PLACER+force")
    mp.add_argument("--seed", type=int, default=0)
    mp.add_argument("--json", action="store_true")
    mp.add_argument("--save", metavar="FILE", help="write the mapping as JSON")
    mp.set_defaults(func=cmd_map)

    cv = sub.add_parser("convert", help="write a network as hMETIS .hgr or MeshScope .npz")
    cv.add_argument("--network", required=True)
    cv.add_argument("--out", required=True, metavar="FILE")
    cv.set_defaults(func=cmd_convert)

    es = sub.add_parser("evolve", help="search partition and placement (seed 000's nested ES)")
    es.add_argument("--network", help=f"workload spec or network file (default {DEFAULT_NETWORK})")
    es.add_argument(
        "--hardware", help=f"preset, TOML file or mesh:WxH… (default {DEFAULT_HARDWARE})"
    )
    es.add_argument("--budget", type=int, default=125, help="fitness evaluations (default 125)")
    es.add_argument("--seed", type=int, default=0)
    es.add_argument("--lambda-part", type=int, default=4, help="partitioning offspring (4)")
    es.add_argument("--lambda-place", type=int, default=4, help="placement offspring (4)")
    es.add_argument("--no-reorder", action="store_true", help="ablation: no reordering operator")
    es.add_argument("--no-elitism", action="store_true", help="ablation: (1,λ) partitioning")
    es.add_argument("--init-k", type=int, default=2, help="start from min+K (default 2)")
    es.add_argument("--strategy", choices=["global", "chipwise"], default="global")
    es.add_argument("--objective", choices=["latency", "energy"], default="latency")
    es.add_argument(
        "--evaluator-cmd", metavar="CMD", help="external evaluator (hardware in the loop)"
    )
    es.add_argument("--eval-timeout", type=float, default=60.0, metavar="SEC")
    es.add_argument("--workers", type=int, default=1, help="parallel evaluations per generation")
    es.add_argument("--out", metavar="FILE", help="write the best mapping as JSON")
    es.add_argument("--history", metavar="FILE", help="every evaluation, as .csv or JSON lines")
    es.add_argument("--checkpoint", metavar="FILE", help="write a checkpoint every generation")
    es.add_argument("--resume", metavar="FILE", help="continue the run of this checkpoint")
    es.add_argument("--json", action="store_true")
    es.set_defaults(func=cmd_evolve)

    sv = sub.add_parser("serve", help="open the explorer in a browser")
    sv.add_argument("--network")
    sv.add_argument("--hardware")
    sv.add_argument("--mapping")
    sv.add_argument("--port", type=int, default=5006)
    sv.add_argument("--address", default="127.0.0.1")
    sv.add_argument("--no-browser", action="store_true")
    sv.set_defaults(func=cmd_serve)
    return p


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except MeshScopeError as e:
        sys.stderr.write(f"meshscope: error: {' '.join(str(e).split())}\n")
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
