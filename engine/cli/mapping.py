"""``list``, ``evaluate``, ``suggest``, ``map`` and ``convert``: one mapping at a time;
``mesh-shape``: the mesh for a number of cores (SENMap §IV-B)."""

from __future__ import annotations

from engine.cli.common import (
    MAPPING_FILE,
    NETWORK_HELP,
    MappingSettings,
    Steps,
    build,
    check_outputs,
    hardware_option,
    inputs_of,
    json_option,
    link_name,
    mapping_option,
    mapping_options,
    multicast_of,
    network_argument,
    network_of,
    predictor_option,
    print_json,
    rates_option,
    step_options,
    work,
)
from engine.defaults import DEFAULT_PLACER
from engine.errors import SpecError
from engine.mesh_shape import SCHEMES, mesh_shape

__all__ = ["LIST_KINDS", "add_commands"]

LIST_KINDS = (
    "networks", "hardware", "partitioners", "placers", "objectives", "strategies", "algorithms",
)  # fmt: skip


def _listing(what: str) -> dict:
    from engine.hardware import load_hardware, preset_names
    from engine.mapping.partition import partitioners
    from engine.mapping.placement import placers
    from engine.search import objectives, strategies
    from engine.search.pareto import algorithms
    from engine.specs import demo_files, workload_info

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
        "algorithms": algorithms,
    }[what]
    return registry.describe()


def _hardware_listing(args) -> int:
    """``list --hardware NAME [--constants]``: one hardware, and where its constants came from."""
    from engine.hardware import load_hardware
    from engine.hardware.provenance import constants, source_detail

    hw = load_hardware(args.hardware)
    data = hw.summary()
    if args.constants:
        data["constants"] = constants(hw)
    if args.json:
        print_json(data)
        return 0
    print(f"{hw.name}: {hw.n_cores} cores, {hw.description}")
    if not args.constants:
        return 0
    rows = data["constants"]
    width = max(len(r["key"]) for r in rows)
    for r in rows:
        value = "x".join(map(str, r["value"])) if isinstance(r["value"], list) else r["value"]
        print(f"  {r['key']:<{width}}  {value!s:>10}  {r['kind']:<12} {source_detail(r['source'])}")
    kinds = {k: sum(r["kind"] == k for r in rows) for k in dict.fromkeys(r["kind"] for r in rows)}
    print("  " + ", ".join(f"{n} {k}" for k, n in kinds.items()))
    return 0


def cmd_list(args) -> int:
    if args.constants and not args.hardware:
        raise SpecError("--constants lists one hardware's constants: add --hardware NAME")
    if args.hardware:
        if args.what not in (None, "hardware"):
            raise SpecError(f"--hardware lists one hardware; drop {args.what!r}")
        return _hardware_listing(args)
    kinds = [args.what] if args.what else list(LIST_KINDS)
    data = {k: _listing(k) for k in kinds}
    if args.json:
        print_json(data if len(kinds) > 1 else data[kinds[0]])
        return 0
    for kind, items in data.items():
        print(f"{kind}:")
        if kind == "networks":
            for g in items["generators"]:
                params = ",".join(f"{k}={v}" for k, v in g["params"].items())
                print(f"  {g['name']}{':' + params if params else ''}")
                print(f"      {g['description']}")
            for f in items["files"]:
                print(f"  {f}")
        elif kind == "hardware":
            for h in items["presets"]:
                print(f"  {h['name']:<15} {h['cores']:>5} cores  {h['description']}")
            print(f"  {items['generic']}")
        else:
            width = max(map(len, items), default=0)
            for name, doc in items.items():
                print(f"  {name:<{width}}  {doc}")
    return 0


def metrics_line(m: dict) -> str:
    """SNN hypergraphs Table I's metrics (terms: docs/glossary.md)."""
    return (
        f"  SNN hypergraphs metrics: connectivity (λ−1) {m['connectivity']:.1f} messages/step, "
        f"average latency {m['average_latency_ns']:.1f} ns a message, congestion "
        f"{m['congestion']:.1f}, ELP {m['elp']:.4g} pJ·ns, synaptic reuse "
        f"{m['synaptic_reuse']:.2f}, connection locality {m['connection_locality']:.2f}"
    )


def cmd_evaluate(args) -> int:
    from engine.pipeline import evaluate, write_mapping_file

    check_outputs(("mapping file", args.save, MAPPING_FILE), inputs=inputs_of(args))
    if args.flows and args.multicast:
        raise SpecError("--flows explains the unicast model's link loads; drop --multicast")
    if args.stages and args.multicast:
        raise SpecError("--stages reads the unicast model stage by stage; drop --multicast")
    step = None
    multicast = multicast_of(args)
    with work(args):
        mapped = build(MappingSettings.of(args))
        if mapped.hardware.links.multicast and multicast is None and (args.flows or args.stages):
            raise SpecError(
                f"{mapped.hardware.name}'s NoC multicasts, and --flows and --stages read the "
                "unicast model: add --unicast"
            )
        ev = evaluate(mapped, multicast=multicast, predictor=args.predictor)
        flows = _flows(mapped, ev, args.flows) if args.flows else None
        stages = None
        if args.stages:
            from engine.evaluation.stages import stage_breakdown

            stages = stage_breakdown(mapped)
        if args.simulate:
            from engine.simulate import simulate_step

            step = simulate_step(mapped, mode=args.mode, multicast=multicast, seed=args.seed)
    network, hardware = mapped.network, mapped.hardware
    if args.save:
        write_mapping_file(args.save, mapped, ev)
    if args.json:
        out = {"network": network.name, "hardware": hardware.name}
        out.update(ev.to_dict(hardware, links=args.links))
        if args.multicast or (mapped.hardware.links.multicast and multicast is None):
            out["multicast"] = True
        if flows is not None:
            out["flows"] = flows
        if stages is not None:
            out["stages"] = stages.to_dict()
        if step is not None:
            out["simulated"] = step.to_dict(hardware, links=args.links)
        print_json(out)
        return 0
    print(f"{network.name} on {hardware.name}: {ev.cores_used} cores on {ev.chips_used} chip(s)")
    print(f"  latency  {ev.latency_us:10.3f} us/step   bound by {ev.bottleneck}  (time a step "
          f"takes, predictor: {ev.predictor})")  # fmt: skip
    if step is not None:
        from engine.cli.simulate import step_lines

        for line in step_lines(step, hardware):
            print(line)
    print(f"  energy   {ev.energy_uj:10.3f} uJ/step   power {ev.power_w:.3f} W")
    terms = "  ".join(f"{k} {v:.3f}" for k, v in ev.terms_us.items())
    print(f"  terms    {terms}  (us, max-affine)")
    if ev.predictor_terms_us:
        own = "  ".join(f"{k} {v:.3f}" for k, v in ev.predictor_terms_us.items())
        print(f"  {ev.predictor:<8} {own}  (us)")
    both = " (all meshes together; the link term times a link by its busiest mesh)" * (
        hardware.links.meshes > 1
    )
    print(f"  heaviest link {ev.max_link_messages:.1f} messages/step{both}")
    if stages is not None:
        print(f"  stage by stage (Loihi 2 mapping ES §5.6): {stages.latency_us:.3f} us/step, "
              f"slowest {stages.slowest}")  # fmt: skip
        for r in stages.rows:
            t = r["terms_us"]
            print(f"    {r['layer']:<14} {r['cores']:>4} cores  {r['time_us']:9.3f} us  "
                  f"({r['bound']}; link {t['link']:.3f}, synmem {t['synmem']:.3f}, synops "
                  f"{t['synops']:.3f}, dendops {t['dendops']:.3f})")  # fmt: skip
    print(metrics_line(ev.metrics))
    if args.links:
        print("  links (kind name: messages, utilization):")
        for link in sorted(ev.links(hardware), key=lambda d: -d["messages"]):
            print(
                f"    {link['kind']:<15} {link_name(link)}: "
                f"{link['messages']:.1f}, {link['utilization']:.1%}"
            )
    if flows is not None:
        for line in flow_lines(flows).split("\n"):
            print(line)
    if args.save:
        print(f"  saved mapping to {args.save}")
    return 0


def _flows(mapped, ev, text: str) -> dict:
    """``--flows``: the link ``text`` names and every flow that crosses it."""
    from engine.evaluation.flows import chip_note, flows_through, link_label, parse_link

    hardware = mapped.hardware
    link = parse_link(hardware, text, ev.link_us)  # max: the link that bounds the link term
    table = flows_through(hardware, mapped.graph, mapped.mapping.placement.cores, link)
    return {
        "link": link_label(hardware, link),
        "id": link,
        **({"chips": chip_note(hardware, link)} if hardware.n_chips > 1 else {}),
        "messages": float(ev.link_messages[link]),
        **(
            {"mesh_messages": ev.link_mesh_messages[link].tolist()}
            if ev.link_mesh_messages is not None
            else {}
        ),
        "utilization": float(ev.link_utilization[link]),
        "routing": hardware.noc.routing,
        "flows": table.rows(hardware, mapped.graph),
    }


def flow_lines(flows: dict) -> str:
    """The ``--flows`` answer as a table."""
    from engine.hardware.routing import ORDER_LABELS, ORDER_NAMES, routings

    rows = flows["flows"]
    head = (
        f"  flows through {flows['link']} (link {flows['id']}"
        + (f", {flows['chips']}" if flows.get("chips") else "")
        + f"): {flows['messages']:.1f} "
        f"messages/step, {flows['utilization']:.1%} of the step, {len(rows)} flows"
    )
    if len(flows.get("mesh_messages", ())) > 1:  # the busier mesh times the link
        each = ", ".join(f"{m:.1f} on mesh {k}" for k, m in enumerate(flows["mesh_messages"]))
        head += f"\n    per mesh: {each} (the busier mesh times the link)"
    if not rows:
        return head + "\n    (no flow crosses this link)"
    # a routing whose packets take either dimension order lists a flow once per route
    routes = len(routings[flows.get("routing", "xy")].orders) > 1
    lines = [head, f"    {'from (layer partition core)':<40} {'to':<40} {'msgs/step':>10} "
             f"{'share':>6} {'hops':>4}" + ("  route" if routes else "")]  # fmt: skip
    for r in rows:
        part = "port" if r["src_partition"] is None else f"p{r['src_partition']}"
        src = f"{r['src_layer']} {part} {r['src_core']}"
        dst = f"{r['dst_layer']} p{r['dst_partition']} {r['dst_core']}"
        route = f"  {ORDER_LABELS[ORDER_NAMES.index(r['route'])]}" if routes else ""
        lines.append(
            f"    {src:<40} {dst:<40} {r['messages']:>10.1f} {r['share']:>6.1%} {r['hops']:>4}"
            + route
        )
    return "\n".join(lines)


def cmd_map(args) -> int:
    import time

    from engine.pipeline import PHASES, evaluate, write_mapping_file

    check_outputs(("mapping file", args.save, MAPPING_FILE), inputs=inputs_of(args))
    steps = Steps(args, [*PHASES, "evaluate"])
    try:
        with work(args):
            mapped = build(MappingSettings.of(args), steps)
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
        print_json(out)
        return 0
    m = ev.metrics
    print(f"{network.name} on {hardware.name}: {partition} + {placement}")
    print(f"  partitions     {out['partitions']}")
    print(f"  connectivity   {m['connectivity']:.1f} messages/step (SNN hypergraphs eq. 7, λ−1)")
    print(
        f"  hypergraphs    energy {m['routing_energy_pj']:.4g} pJ, average latency "
        f"{m['average_latency_ns']:.2f} ns a message, congestion {m['congestion']:.4g}, ELP "
        f"{m['elp']:.4g} pJ·ns"
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


def cmd_suggest(args) -> int:
    """``suggest``: the single moves of a mapping that lower its latency most."""
    from engine.search.suggest import suggest

    try:
        top = int(args.top)
    except ValueError:
        top = 0
    if top < 1:
        raise SpecError(f"--top must be a whole number, 1 or more, not {args.top!r}: how many "
                        "moves to list")  # fmt: skip
    try:
        budget = float(args.budget)
    except ValueError:
        budget = 0.0
    if not budget > 0:
        raise SpecError(f"--budget must be seconds above 0, not {args.budget!r}")
    with work(args):
        mapped = build(MappingSettings.of(args))
        found = suggest(mapped, top=top, budget_s=budget, seed=args.seed,
                        predictor=args.predictor)  # fmt: skip
    hardware = mapped.hardware
    if args.json:
        print_json({"network": mapped.network.name, "hardware": hardware.name,
                    **found.to_dict(hardware)})  # fmt: skip
        return 0
    print(f"{mapped.network.name} on {hardware.name}: {found.latency_us:.3f} us/step, bound by "
          f"{found.bottleneck}")  # fmt: skip
    for k, m in enumerate(found.moves, 1):
        d = m.to_dict(hardware)
        print(f"  {k}. {m.kind} core {d['from']} -> {d['to']}: {m.latency_us:.3f} us/step "
              f"(-{m.gain_us:.4g} us), energy {m.energy_uj:.3f} uJ")  # fmt: skip
    print(f"  {found.verdict}")
    return 0


# ------------------------------------------------------------------ convert
def cmd_convert(args) -> int:
    from pathlib import Path

    from engine.io.hgr import write_hgr
    from engine.io.network_file import save_network
    from engine.pipeline import resolve_network

    writers = {".hgr": write_hgr, ".npz": save_network}  # hMETIS, MeshScope
    check_outputs(("output file", args.out, tuple(writers)), inputs=inputs_of(args))
    suffix = Path(args.out).suffix.lower()
    steps = Steps(args, ["read network", "write"])
    try:
        with work(args):
            steps("read network")
            network = resolve_network(args.network)
            steps("write")
            writers[suffix](network, args.out)
    finally:
        steps.close()
    print(
        f"wrote {network.name} ({network.neuron_count_text()}, {network.n_synapses:,} synapses) "
        f"to {args.out}"
    )
    return 0


def cmd_info(args) -> int:
    network = network_of(MappingSettings.of(args))
    info = network.summary()
    if args.json:
        print_json(info)
        return 0
    print(f"{info['network']}: {network.neuron_count_text()}, {info['synapses']:,} synapses")
    if info["description"]:
        print(f"  {info['description']}")
    print(f"  {'population':<20} {'type':<13} {'shape':<14} {'neurons':>9} {'synapses in':>12} "
          f"{'synapses out':>13} {'rate':>6}")  # fmt: skip
    for r in info["populations"]:
        shape = "x".join(map(str, r["shape"]))
        print(
            f"  {r['name']:<20} {r['type']:<13} {shape:<14} {r['neurons']:>9,} "
            f"{r['synapses_in']:>12,} {r['synapses_out']:>13,} {r['mean_rate']:>6.3f}"
        )
    return 0


# ------------------------------------------------------------------ mesh-shape
def cmd_mesh_shape(args) -> int:
    """``mesh-shape``: the mesh a compression scheme gives a number of cores."""
    try:
        cores = int(args.cores)
    except ValueError:
        raise SpecError(
            f"--cores must be a positive whole number (1 or more), not {args.cores!r}: "
            "give how many cores the mesh must hold"
        ) from None
    rows, columns = mesh_shape(cores, args.scheme)
    if args.json:
        out = {"cores": cores, "scheme": args.scheme, "rows": rows, "columns": columns}
        print_json({**out, "slots": rows * columns})
        return 0
    print(f"{rows}x{columns}")
    return 0


COMMANDS = {  # name -> one line of help (the top-level help needs nothing more)
    "list": "list networks, hardware, partitioners, placers …",
    "info": "a network's neurons, synapses and populations (any spec, NIR included)",
    "evaluate": "latency, energy and link loads of one mapping",
    "suggest": "the swaps and moves of single cores that lower a mapping's latency most",
    "map": "partition and place with the SNN hypergraphs algorithms, timed",
    "convert": "write a network as hMETIS .hgr or MeshScope .npz",
    "mesh-shape": "the mesh (rows x columns) for a number of cores (SENMap §IV-B)",
}


def add_commands(sub) -> None:
    """``list``, ``info``, ``evaluate``, ``map``, ``convert`` and ``mesh-shape``."""
    ls = sub.add_parser("list", help=COMMANDS["list"])
    ls.add_argument("what", nargs="?", choices=LIST_KINDS, help="one kind only (default: all)")
    json_option(ls)
    hardware_option(ls, metavar="SPEC", help="one hardware (preset, TOML file or mesh:…)")
    ls.add_argument(
        "--constants", action="store_true",
        help="with --hardware: every constant, its value and where it came from (paper, fitted, "
        "illustrative)",
    )  # fmt: skip
    ls.set_defaults(func=cmd_list)
    nf = sub.add_parser("info", help=COMMANDS["info"])
    network_argument(nf)
    rates_option(nf)
    json_option(nf)
    nf.set_defaults(func=cmd_info)

    ev = sub.add_parser("evaluate", help=COMMANDS["evaluate"])
    mapping_options(ev, partition=None, placement=DEFAULT_PLACER)
    mapping_option(ev)
    ev.add_argument("--links", action="store_true", help="also report every loaded link")
    ev.add_argument(
        "--stages", action="store_true",
        help="also read the model stage by stage (Loihi 2 mapping ES §5.6): each layer's "
        "incoming messages alone on the mesh, the step the slowest stage",
    )  # fmt: skip
    ev.add_argument(
        "--flows", metavar="LINK",
        help='the flows that cross one link, heaviest first: "E (x,y)->(x+1,y)" (E, W, S or N '
        'between global routers), "(x,y):s->(x,y)" / "(x,y)->(x,y):s" (out of / into the core '
        'in slot s of router (x,y)), a link id, or "max"; routers and cores are printed the '
        'same way',
    )  # fmt: skip
    ev.add_argument(
        "--simulate", action="store_true",
        help="also simulate one time step flit by flit and report it beside the model "
        "(spikes sampled with --seed)",
    )  # fmt: skip
    step_options(ev)
    predictor_option(ev)
    ev.set_defaults(func=cmd_evaluate)

    sg = sub.add_parser("suggest", help=COMMANDS["suggest"])
    mapping_options(sg, partition=None, placement=DEFAULT_PLACER)
    mapping_option(sg)
    sg.add_argument("--top", default="5", metavar="K", help="how many moves to list (default 5)")
    sg.add_argument(
        "--budget", default="2", metavar="SECONDS",
        help="time for moves beyond those around the bottleneck (always all scanned; default 2)",
    )  # fmt: skip
    predictor_option(sg)
    sg.set_defaults(func=cmd_suggest)

    mp = sub.add_parser("map", help=COMMANDS["map"])
    mapping_options(mp, partition="overlap", placement="spectral+force")
    mp.set_defaults(func=cmd_map)

    cv = sub.add_parser("convert", help=COMMANDS["convert"])
    network_argument(cv, required=True, help=NETWORK_HELP.split(" (default")[0])
    cv.add_argument("--out", required=True, metavar="FILE", help="FILE.hgr (hMETIS) or FILE.npz")
    cv.set_defaults(func=cmd_convert)

    ms = sub.add_parser("mesh-shape", help=COMMANDS["mesh-shape"])
    ms.add_argument("--cores", required=True, metavar="N", help="how many cores (1 or more)")
    ms.add_argument(
        "--scheme", default="strict-area", metavar="SCHEME",
        help=f"{', '.join(SCHEMES)} (default strict-area): the factor pair with the smallest "
        "sum; a prime one core more when that shortens the perimeter; a near-square mesh",
    )  # fmt: skip
    json_option(ms)
    ms.set_defaults(func=cmd_mesh_shape)
