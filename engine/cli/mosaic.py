"""``meshscope mosaic check|rewire|requirements|demo``: Mosaic routing memory (seed 003).

    meshscope mosaic check --network SPEC [--hardware mosaic-8x8] [--partition P --placement Q
                           | --mapping FILE] [--unicast] [--tiles] [--json]
    meshscope mosaic rewire --network SPEC --target p0,p1,… --out FILE.npz [--hardware …]
                            [--seed S] [--json]
    meshscope mosaic requirements --target p0,p1,… [--hardware …] [--networks N] [--json]
    meshscope mosaic demo [--quick] [--figure FILE] [--json]

``check`` exits 0 when the network fits and 1 when a tile overflows (2 on bad input, as
every command), so a script can test it.
"""

from __future__ import annotations

from engine.cli.common import (
    FIGURE,
    MAX_NETWORKS,
    MappingSettings,
    check_outputs,
    hardware_option,
    inputs_of,
    json_option,
    mapping_option,
    network_argument,
    network_of,
    partition_option,
    placement_option,
    print_json,
    seed_option,
    whole,
)

__all__ = ["COMMANDS", "add_commands"]

DEFAULT_MOSAIC = "mosaic-8x8"
SHOWN = 15  # overflowing tiles the text report lists
COMMANDS = {"mosaic": "Mosaic routing memory: check a network fits, rewire it to a profile"}


def _placed(args):
    """(network, hardware, nt_of) the options name (``engine.mosaic.check.tiles_of``)."""
    from engine.hardware import load_hardware
    from engine.mosaic.check import tiles_of

    settings = MappingSettings.of(args)
    hardware = load_hardware(settings.hardware or DEFAULT_MOSAIC)
    network = network_of(settings, hardware)
    nt_of = tiles_of(
        network, hardware, mapping_file=settings.mapping, partition=settings.partition,
        placement=settings.placement, seed=settings.seed,
    )  # fmt: skip
    return network, hardware, nt_of


def _profile_line(profile: dict) -> str:
    """p_d of the distances that have pairs, up to the farthest with connections."""
    p, pairs = profile["p"], profile["pairs"]
    last = max((d for d, v in enumerate(p) if v), default=0)
    return "  ".join(f"p{d}={p[d]:.4g}" for d in range(last + 1) if pairs[d])


def cmd_check(args) -> int:
    from engine.mosaic.check import check

    network, hardware, nt_of = _placed(args)
    memory, report = check(network, hardware, nt_of, shared=not args.unicast)
    if args.tiles or args.json:
        report["tiles"] = memory.tiles()
    if args.json:
        print_json(report)
        return 0 if report["mappable"] else 1
    print(
        f"{network.name} on {hardware.name} ({report['neuron_tiles'][0]}x"
        f"{report['neuron_tiles'][1]} Neuron Tiles of {report['neurons_per_tile']}, "
        f"{report['routing']} routing): {'mappable' if report['mappable'] else 'NOT mappable'}"
    )
    print(
        f"routing entries {report['routing_entries']:,}  synapses {report['synapse_entries']:,}  "
        f"largest RT {report['max_rt_rows']}/{report['rt_inputs']} rows  "
        f"largest NT {report['max_nt_rows']}/{report['nt_inputs']} rows"
    )
    print(f"profile  {_profile_line(report['profile'])}")
    rows = report["tiles"] if args.tiles else report["overflowing_tiles"]
    if not args.tiles:  # the fullest first, a screenful
        rows = sorted(rows, key=lambda t: -t["rows"] / t["capacity"])
    shown = rows if args.tiles else rows[:SHOWN]
    if shown:
        print(f"{'tile':>9}  kind  {'rows':>5}/{'cap':<5} {'entries':>8}")
    for t in shown:
        where = f"({t['tile'][0]},{t['tile'][1]})"
        flag = "  overflows" if t["rows"] > t["capacity"] else ""
        print(
            f"{where:>9}  {t['kind']:<4}  {t['rows']:>5}/{t['capacity']:<5} {t['entries']:>8}{flag}"
        )
    if len(rows) > len(shown):
        print(f"   … and {len(rows) - len(shown)} more overflowing tiles (--tiles lists all)")
    cuts = report["removals"]
    if cuts:
        total = report["to_remove"]
        print(
            f"to fit: remove {total['connections']:,} (neuron, tile) connections "
            f"({total['synapses']:,} synapses) for "
            f"{len(cuts)} tiles, fewest synapses first (--json: remove_all), or rewire it "
            "(meshscope mosaic rewire)"
        )
        for item in cuts[:3]:
            names = ", ".join(str(r["neuron"]) for r in item["remove"][:8])
            more = "…" if len(item["remove"]) > 8 else ""
            print(f"  {item['kind']} {tuple(item['tile'])}: neurons {names}{more}")
    return 0 if report["mappable"] else 1


def cmd_rewire(args) -> int:
    from engine.io.network_file import save_network
    from engine.mosaic.profile import parse_target
    from engine.mosaic.rewire import rewire_checked

    target = parse_target(args.target)
    check_outputs(("network file", args.out, (".npz",)), inputs=inputs_of(args))
    network, hardware, nt_of = _placed(args)
    out, report = rewire_checked(network, hardware, nt_of, target, seed=args.seed)
    save_network(out, args.out)
    report["out"] = args.out
    if args.json:
        print_json(report)
        return 0
    r = report
    print(
        f"rewired {network.name}: {r['connections_before']:,} connections → "
        f"{r['connections_after']:,} ({r['pruned']:,} moved to meet the target)"
    )
    print(f"profile before  {_profile_line(r['profile_before'])}")
    print(f"profile after   {_profile_line(r['profile'])}")
    print(
        f"routing entries {r['routing_entries_before']:,} → {r['routing_entries_after']:,}; "
        f"mappable {r['mappable_before']} → {r['mappable_after']}; wrote {args.out}"
    )
    return 0


def cmd_requirements(args) -> int:
    from engine.hardware import load_hardware
    from engine.mosaic.profile import parse_target, requirements

    hardware = load_hardware(args.hardware or DEFAULT_MOSAIC)
    target = parse_target(args.target)
    out = requirements(hardware, target, seeds=range(args.seed, args.seed + args.networks))
    out["hardware"] = hardware.name
    if args.json:
        print_json(out)
        return 0
    print(f"{out['networks']} random networks of profile {args.target} on {hardware.name}:")
    for key, what in (("rt_size", "largest RT rows"), ("nt_size", "largest NT rows"),
                      ("routing_entries", "routing entries")):  # fmt: skip
        print(f"  {what:<16} {out[key]['mean']:10.1f} ± {out[key]['std']:.1f}")
    return 0


def cmd_demo(args) -> int:
    from engine.mosaic.demo import figure, run_demo

    check_outputs(("figure", args.figure, FIGURE))
    result = run_demo(quick=args.quick, seed=args.seed)
    if args.figure:
        figure(result, args.figure)
    if args.json:
        print_json(result)
        return 0
    print(f"{result['note']} ({result['hardware']}, {result['neurons']} neurons)")
    head = f"{'method':<14} {'setting':<22} {'accuracy':>8} {'connections':>11} {'entries':>8}"
    print(f"{head}  fits")
    for r in result["rows"]:
        print(
            f"{r['method']:<14} {str(r['setting']):<22} {r['accuracy']:8.3f} "
            f"{r['connections']:11,} {r['routing_entries']:8,}  {'yes' if r['mappable'] else 'no'}"
        )
    return 0


def add_commands(sub) -> None:
    """``mosaic`` and its subcommands."""
    mo = sub.add_parser("mosaic", help=COMMANDS["mosaic"])
    verbs = mo.add_subparsers(
        dest="verb", required=True, parser_class=type(mo),
        help="check: does it fit; rewire: to a hop profile; requirements: Fig. 2d; demo: training",
    )  # fmt: skip

    def placed(p, *, placement: bool = True):
        network_argument(p)
        hardware_option(p, help=f"a Mosaic preset (default {DEFAULT_MOSAIC}; NAME@RxC resizes "
                        "it to R x C Neuron Tiles)")  # fmt: skip
        seed_option(p, help="seed of random steps")
        json_option(p)
        if not placement:
            return
        partition_option(
            p, help="partition with this partitioner (default: neurons in order, a tile's worth "
            "each, row-major)",
        )  # fmt: skip
        placement_option(p, help="with --partition: the placer (default packed-row)")
        mapping_option(p, help="a mapping file instead")

    ck = verbs.add_parser("check", help="does the network fit the tiles' routing memory?")
    placed(ck)
    ck.add_argument(
        "--unicast", action="store_true",
        help="route every (neuron, tile) pair on its own (default: shared paths)",
    )  # fmt: skip
    ck.add_argument("--tiles", action="store_true", help="list every tile, not only overflows")
    ck.set_defaults(func=cmd_check)

    rw = verbs.add_parser(
        "rewire", help="prune and regrow connections to a hop profile (neurons in order on "
        "the tiles, as check places them by default: a partitioner would place the rewired "
        "network anew, and a mapping file belongs to the network before rewiring)",
    )  # fmt: skip
    placed(rw, placement=False)
    rw.add_argument(
        "--target", required=True, metavar="P0,P1,…",
        help="densities per hop distance 0, 1, 2, …; farther distances get 0",
    )  # fmt: skip
    rw.add_argument("--out", required=True, metavar="FILE.npz", help="the rewired network")
    rw.set_defaults(func=cmd_rewire)

    rq = verbs.add_parser("requirements", help="crossbar sizes random networks of a profile "
                          "need (Fig. 2d), mean and spread")  # fmt: skip
    hardware_option(rq, help=f"a Mosaic preset (default {DEFAULT_MOSAIC})")
    rq.add_argument(
        "--target", required=True, metavar="P0,P1,…",
        help="the hop profile: densities per hop distance 0, 1, 2, … (docs/glossary.md)",
    )  # fmt: skip
    rq.add_argument(
        "--networks", type=whole(2, MAX_NETWORKS), default=20, help="random networks (default 20)"
    )
    seed_option(rq, help="seed of the first network")
    json_option(rq)
    rq.set_defaults(func=cmd_requirements)

    dm = verbs.add_parser("demo", help="train a small recurrent SNN with and without routing "
                          "awareness (a synthetic task, not SHD)")  # fmt: skip
    dm.add_argument("--quick", action="store_true", help="a smaller sweep, seconds")
    seed_option(dm, help="seed of data and training")
    dm.add_argument("--figure", metavar="FILE", help="write accuracy vs routing entries (PNG/SVG)")
    json_option(dm)
    dm.set_defaults(func=cmd_demo)
