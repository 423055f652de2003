"""``simulate`` and ``sweep``: the cycle-level mesh simulator on the command line.

``simulate`` runs either one time step of a mapping (the mapping options, as ``evaluate``
takes them) or a synthetic traffic pattern on a bare mesh (``--pattern``), as NoC papers
measure routers; ``sweep`` runs a pattern at a range of offered rates, in parallel
processes, and reads the latency–load curve. Synthetic runs default to the BookSim2
reference router (2 VCs × 8 flits, every delay one cycle, iSLIP, X-then-Y); a mapping's
step uses the router of its hardware preset's ``[noc]`` section. Either way the router
options below override single constants.
"""

from __future__ import annotations

import dataclasses
import re
from typing import TYPE_CHECKING

from engine.cli.common import (
    FIGURE,
    MAPPING_FILE,
    MAX_CYCLES,
    MAX_PACKETS,
    MAX_TRACE_CELLS,
    MAX_WORKERS,
    TEXT_FILE,
    MappingSettings,
    Steps,
    bar,
    build,
    check_outputs,
    inputs_of,
    json_option,
    link_name,
    mapping_option,
    mapping_options,
    multicast_of,
    print_json,
    seed_option,
    step_options,
    whole,
    work,
)
from engine.defaults import DEFAULT_PLACER
from engine.errors import SpecError

if TYPE_CHECKING:
    from engine.hardware import NocConstants

__all__ = ["ROUTER_OPTIONS", "add_commands", "noc_constants", "parse_mesh"]

# the router options: NocConstants field → (flag, help); one flag per constant
ROUTER_OPTIONS = {
    "vcs": ("--vcs", "virtual channels per input port"),
    "buf": ("--buf", "flits per virtual channel"),
    "routing_delay": ("--routing-delay", "cycles of route computation"),
    "vc_alloc_delay": ("--vc-alloc-delay", "cycles of VC allocation"),
    "sw_alloc_delay": ("--sw-alloc-delay", "cycles of switch allocation"),
    "st_delay": ("--st-delay", "cycles of switch traversal"),
    "credit_delay": ("--credit-delay", "cycles a returning credit takes to be processed"),
    "alloc_iters": ("--alloc-iters", "iSLIP iterations per allocation"),
    "allocator": ("--allocator", "VC and switch allocators"),
    "routing": ("--routing", "routing"),
}
_MESH = re.compile(r"^\s*(\d{1,6})\s*[xX×]\s*(\d{1,6})\s*$")
SYNTHETIC_ONLY = ("pattern", "mesh", "rate", "packet", "warmup", "cycles", "keep_going")
MAPPING_ONLY = ("network", "hardware", "partition", "placement", "mapping", "save",
                "export_booksim", "export_noxim")  # fmt: skip


def parse_mesh(text: str) -> tuple[int, int]:
    """``WxH`` (``8x8``) as (width, height)."""
    m = _MESH.match(text or "")
    if not m:
        raise SpecError(f"--mesh is WIDTHxHEIGHT in routers, e.g. 8x8, not {text!r}")
    return int(m.group(1)), int(m.group(2))


def noc_constants(args, base: NocConstants | None = None) -> NocConstants:
    """``base`` (default: BookSim2's reference router) with the router options given."""
    from engine.hardware import NocConstants

    base = base or NocConstants()
    changes = {k: getattr(args, k) for k in ROUTER_OPTIONS if getattr(args, k, None) is not None}
    try:
        return dataclasses.replace(base, **changes)
    except (TypeError, ValueError) as e:  # InvalidHardwareError is a SpecError already
        raise SpecError(f"invalid router option: {e}") from None


def _router_options(p) -> None:
    from engine.hardware import NOC_ALLOCATORS, NocConstants
    from engine.hardware.routing import routings

    g = p.add_argument_group("router (default: the hardware's [noc], or BookSim2's reference)")
    for name, (flag, text) in ROUTER_OPTIONS.items():
        if name == "allocator":
            text = f"{text}: {', '.join(NOC_ALLOCATORS)}"
        if name == "routing":  # (a mapping's analytic figures follow it too)
            text = f"{text}: " + "; ".join(f"{k}: {v}" for k, v in routings.describe().items())
        kind = type(getattr(NocConstants(), name))
        choices = {"allocator": NOC_ALLOCATORS, "routing": routings.names()}.get(name)
        g.add_argument(flag, dest=name, type=kind, choices=choices, metavar=None if choices
                       else "N", help=text)  # fmt: skip


def _synthetic_run(args, **extra):
    from engine.simulate import SyntheticRun

    width, height = parse_mesh(args.mesh)
    return SyntheticRun(
        args.pattern, width, height, rate=getattr(args, "rate", 0.0), packet_flits=args.packet,
        warmup=args.warmup, cycles=args.cycles, **extra,
    )  # fmt: skip


def check_size(run, rate: float, *, keep_packets: bool = False) -> None:
    """Refuse, before it starts, a synthetic run that keeps its packets (a trace or a walk
    shows them; any other run holds only those in flight) and would create more than a run
    may hold, or record a trace of more windows than it may."""
    nodes = run.width * run.height
    packets = nodes * rate / run.packet_flits * (run.warmup + run.cycles)
    if (keep_packets or run.window) and packets > MAX_PACKETS:
        raise SpecError(
            f"{nodes:,} terminals at {rate:g} flits/node/cycle for {run.warmup + run.cycles:,} "
            f"cycles (--warmup + --cycles) create ~{packets:,.0f} packets, more than the "
            f"{MAX_PACKETS:,} a run may keep for a trace or a walk: give fewer cycles, a lower "
            "rate or a smaller mesh, or drop --save-trace and --walk"
        )
    if run.window:
        span = run.warmup + run.cycles + run.drain_limit  # the drain at most
        windows = -(-span // run.window)
        if windows * nodes > MAX_TRACE_CELLS:
            least = -(-span * nodes // MAX_TRACE_CELLS)
            raise SpecError(
                f"--window {run.window} records up to {windows:,} windows of {nodes:,} routers, "
                f"more than a trace may hold ({MAX_TRACE_CELLS:,} window-routers): give "
                f"--window {least} or more, or fewer cycles"
            )


# ------------------------------------------------------------------ simulate
def stable_line(res) -> str:
    """What ``stable`` means, said exactly: BookSim2's test, which an average latency far over
    zero-load's can pass (``sweep`` calls a rate saturated past 3× zero-load)."""
    from engine.simulate.sweep import SATURATION_FACTOR

    test = (f"BookSim2's test: every measured packet delivered, average latency under "
            f"{res.run.latency_threshold:g} cycles")  # fmt: skip
    if not res.stable:
        return (f"UNSTABLE by {test} ({res.unfinished_packets} measured packets not delivered, "
                "or the latency over the threshold): past saturation")  # fmt: skip
    ratio = res.latency_avg / res.zero_load_latency if res.zero_load_latency > 0 else 0.0
    past = res.saturated
    return (f"stable by {test}; average latency {ratio:.1f}x zero-load, "
            + (f"past the {SATURATION_FACTOR:g}x 'sweep' calls saturation" if past
               else f"under the {SATURATION_FACTOR:g}x 'sweep' calls saturation"))  # fmt: skip


def cmd_simulate(args) -> int:
    given = {k for k in (*SYNTHETIC_ONLY, *MAPPING_ONLY) if getattr(args, k, None) is not None}
    if args.pattern:
        mixed = sorted(given & set(MAPPING_ONLY))
        if mixed:
            raise SpecError(
                f"--pattern simulates a bare mesh; --{mixed[0].replace('_', '-')} names a "
                "mapping (run one or the other)"
            )
        return _simulate_pattern(args)
    stray = sorted(given & set(SYNTHETIC_ONLY))
    if stray:
        raise SpecError(
            f"--{stray[0]} describes synthetic traffic: give --pattern NAME too (or drop it "
            "to simulate a mapping's step)"
        )
    return _simulate_step(args)


def _simulate_pattern(args) -> int:
    from engine.simulate import run_synthetic

    args.mesh = args.mesh or "8x8"
    args.rate = 0.1 if args.rate is None else args.rate
    args.packet = args.packet or 1
    args.warmup = 5000 if args.warmup is None else args.warmup
    args.cycles = 10000 if args.cycles is None else args.cycles
    check_outputs(("trace file", args.save_trace, (".npz",)), inputs=inputs_of(args))
    noc = noc_constants(args)
    run = _synthetic_run(args, window=args.window if args.save_trace else 0,
                         keep_going=bool(args.keep_going))  # fmt: skip
    check_size(run, run.rate, keep_packets=bool(args.walk))
    mesh = None  # the bare mesh as hardware, which names a walk's ends
    if args.walk is not None:
        from engine.hardware import load_hardware

        mesh = load_hardware(f"mesh:{run.width}x{run.height}")
    walk_ends = _walk_ends(args, mesh)
    progress = bar(args, run.warmup + run.cycles, unit="cycle", unit_scale=True)
    try:
        with work(args):
            res = run_synthetic(
                noc, run, seed=args.seed, keep_packets=bool(args.walk),  # a walk reads them
                progress=None if progress is None else lambda t: progress.update(t - progress.n),
            )  # fmt: skip
    finally:
        if progress is not None:
            progress.close()
    if args.save_trace:
        res.trace.save(args.save_trace)
    out = res.to_dict()
    counts, edges = res.latency_histogram
    out["latency_histogram"] = {"counts": counts.tolist(), "edges": edges.tolist()}
    out["stalls"] = {k: int(v.sum()) for k, v in res.stalls.items()}
    walk = None
    if args.walk:
        from engine.simulate.walk import slowest_pair, walk_synthetic

        src, dst = walk_ends or slowest_pair(res.machine)
        walk = walk_synthetic(noc, run, src, dst, which=args.walk_which, seed=args.seed, first=res)
        out["walk"] = walk.to_dict()
    if args.json:
        print_json(out)
        return 0
    r = res.run
    print(
        f"{r.pattern} traffic on a {r.width}x{r.height} mesh, {r.packet_flits}-flit packets, "
        f"offered {r.rate:g} flits/node/cycle ({noc.vcs} VCs x {noc.buf} flits, "
        f"{noc.allocator}, {noc.routing.upper()})"
    )
    print(
        f"  packet latency   avg {res.latency_avg:.2f}  min {res.latency_min:.0f}  "
        f"max {res.latency_max:.0f} cycles (zero-load {res.zero_load_latency:.2f}, "
        f"queueing {res.queueing_avg:.2f})"
    )
    print(f"  network latency  avg {res.network_latency_avg:.2f} cycles")
    print(
        f"  throughput       offered {res.offered_flit_rate:.4f}, accepted "
        f"{res.accepted_flit_rate:.4f} flits/node/cycle, hops {res.hops_avg:.2f}"
    )
    verdict = stable_line(res)
    print(f"  {verdict}")
    if res.stopped is not None:
        print("  " + stop_line(res.stopped))
    print("  stalls           " + ", ".join(f"{k} {v}" for k, v in out["stalls"].items()))
    print(
        f"  simulated {res.cycles} cycles in {res.wall_s:.2f} s ({res.cycles_per_s:,.0f} cycles/s)"
    )
    if args.save_trace:
        print(f"  trace written to {args.save_trace}")
    if walk is not None:
        _print_walk(walk, mesh)
    return 0


def stop_line(stopped: dict) -> str:
    """What the run did when it found itself past saturation (``SyntheticResult.stopped``)."""
    cycle, latency = stopped["cycle"], stopped["latency_avg"]
    found = (
        f"at cycle {cycle:,} the average latency was {latency:,.0f} cycles, over the "
        f"threshold of {stopped['threshold']:g} (past saturation)"
    )
    if stopped["kept_going"]:
        return f"{found}; ran on to the end (--keep-going)"
    return f"STOPPED {found}, as BookSim2 stops; --keep-going runs on to the end"


def _walk_ends(args, hardware):
    """``--walk``'s source and destination terminals (None: the slowest packet's), read
    before the run so a typo costs nothing."""
    if args.walk is None:
        if args.walk_which is not None:
            raise SpecError("--walk-which picks among the packets --walk follows: give --walk too")
        return None
    args.walk_which = args.walk_which or "slowest"
    from engine.simulate.walk import parse_walk

    return parse_walk(hardware, args.walk)


def _print_walk(walk, hardware) -> None:
    from engine.simulate.walk import endpoint_text

    ends = f"({endpoint_text(hardware, walk.src)}) to ({endpoint_text(hardware, walk.dst)})"
    print(f"  walk: the {walk.choice} of {walk.candidates} packets from {ends}")
    for sentence in walk.sentences():
        print(f"    {sentence}")
    print(
        f"    {'router':>8} {'from':>6} {'to':>6} {'arrived':>8} {'ready':>8} {'VC won':>8} "
        f"{'head out':>8} {'waited':>7}  why"
    )
    for h in walk.hops:
        router = f"({h.router[0]},{h.router[1]})"
        print(
            f"    {router:>8} {h.came_from:>6} {h.out:>6} {h.arrive:>8} {h.ready:>8} "
            f"{h.vc_won:>8} {h.head_out:>8} {h.waited:>7}  {'; '.join(h.reasons()) or '-'}"
        )


def _simulate_step(args) -> int:
    from engine.pipeline import PHASES, evaluate
    from engine.simulate import booksim_files, noxim_table, simulate_step

    check_outputs(
        ("trace file", args.save_trace, (".npz",)), ("mapping file", args.save, MAPPING_FILE),
        ("Noxim traffic table", args.export_noxim, TEXT_FILE),
        *((("BookSim2 file", f"{args.export_booksim}{s}") for s in (".anynet", ".cfg", ".trace"))
          if args.export_booksim else ()),
        inputs=inputs_of(args),
    )  # fmt: skip
    steps = Steps(args, [*PHASES, "evaluate", "simulate"])
    try:
        with work(args):
            mapped = build(MappingSettings.of(args), steps)
            steps("evaluate")  # (with the router options: --routing routes the model too)
            hw = dataclasses.replace(mapped.hardware, noc=noc_constants(args, mapped.hardware.noc))
            mapped = dataclasses.replace(mapped, hardware=hw)
            ev = evaluate(mapped, multicast=multicast_of(args))
            walk_ends = _walk_ends(args, hw)
            steps("simulate")
            options = {"mode": args.mode, "multicast": multicast_of(args), "spikes": args.spikes,
                       "seed": args.seed}  # fmt: skip
            step = simulate_step(mapped, **options, window=args.window if args.save_trace else 0)
            walk = None
            if args.walk:
                from engine.simulate.walk import slowest_pair, walk_step

                src, dst = walk_ends or slowest_pair(step.machine)
                walk = walk_step(mapped, src, dst, which=args.walk_which, first=step, **options)
    finally:
        steps.close()
    if args.save:
        from engine.pipeline import write_mapping_file

        write_mapping_file(args.save, mapped, ev)
    if args.save_trace:
        step.trace.save(args.save_trace)
    exported = []
    if args.export_booksim:
        exported += [str(p) for p in booksim_files(step, hw, args.export_booksim)]
    if args.export_noxim:
        exported.append(str(noxim_table(step, args.export_noxim)))
    if args.json:
        out = {"network": mapped.network.name, "hardware": hw.name}
        out.update(step.to_dict(hw))
        out["analytic"] = {"latency_us": ev.latency_us, "bottleneck": ev.bottleneck}
        if walk is not None:
            out["walk"] = walk.to_dict()
        print_json(out)
        return 0
    _print_step(mapped, ev, step, args)
    if walk is not None:
        _print_walk(walk, hw)
    for path in exported:
        print(f"  wrote {path}")
    if args.save_trace:
        print(f"  trace written to {args.save_trace}")
    if args.save:
        print(f"  saved mapping to {args.save}")
    return 0


def step_lines(step, hardware) -> list[str]:
    """The simulated step as text lines (``simulate`` and ``evaluate --simulate``)."""
    from engine.evaluation.flows import core_label

    where = ""
    if step.bound_core >= 0:
        where = f" at core {core_label(hardware, step.bound_core)}"
    lat = step.latency
    lines = [
        f"  simulated {step.step_us:10.3f} us/step   {step.step_cycles} cycles, {step.mode}"
        f"{', multicast' if step.multicast else ''}; bound by {step.bound}{where}",
        f"  traffic  {step.spikes} spikes -> {step.messages} packets of {step.packet_flits} "
        f"flit(s); NoC energy {step.noc_energy_uj:.3f} uJ",
        f"  packets  latency avg {lat['avg_cycles']:.1f} cycles (transit "
        f"{lat['transit_avg_cycles']:.1f} + queueing {lat['queueing_avg_cycles']:.1f}), max "
        f"{lat['max_cycles']}",
        "  stalls   " + ", ".join(f"{k} {int(v.sum())}" for k, v in step.stalls.items()),
    ]
    for ph in step.phases:
        lines.append(f"    layer {ph['layer']:<16} {ph['start_us']:9.3f} -> {ph['end_us']:9.3f} us")
    return lines


def _print_step(mapped, ev, step, args) -> None:
    hw = mapped.hardware
    print(f"{mapped.network.name} on {hw.name}: {ev.cores_used} cores on {ev.chips_used} chip(s)")
    print(f"  analytic  {ev.latency_us:10.3f} us/step   bound by {ev.bottleneck}")
    for line in step_lines(step, hw):
        print(line)
    links = sorted(step.links(hw), key=lambda d: -d["flits"])
    shown = links if args.links else links[:8]
    print(f"  {'every' if args.links else 'busiest'} links (kind name: flits):")
    for link in shown:
        print(f"    {link['kind']:<15} {link_name(link)}: {link['flits']}")
    print(
        f"  simulated {step.cycles} cycles in {step.wall_s:.2f} s ({step.cycles_per_s:,.0f} "
        "cycles/s)"
    )


# ------------------------------------------------------------------ sweep
def cmd_sweep(args) -> int:
    from engine.simulate import parse_rates, sweep

    rates = parse_rates(args.rates)
    check_outputs(
        ("CSV file", args.csv, (".csv",)), ("figure", args.figure, FIGURE), inputs=inputs_of(args)
    )
    noc = noc_constants(args)
    base = _synthetic_run(args)
    check_size(base, max(rates))
    progress = bar(args, len(rates), unit="rate")

    def advance(point):
        if progress is not None:
            progress.update(1)
            progress.set_postfix_str(f"{point['rate']:g}: {point['latency_avg']:.1f} cycles")

    try:
        with work(args):
            result = sweep(noc, base, rates, seed=args.seed, workers=args.workers, progress=advance,
                           refine=args.refine)  # fmt: skip
    finally:
        if progress is not None:
            progress.close()
    if args.csv:
        result.write_csv(args.csv)
    if args.figure:
        result.write_figure(args.figure)
    if args.json:
        print_json(result.to_dict())
        return 0
    b = result.base
    print(
        f"{b.pattern} traffic on a {b.width}x{b.height} mesh, {b.packet_flits}-flit packets "
        f"({noc.vcs} VCs x {noc.buf} flits, {noc.allocator}, {noc.routing.upper()})"
    )
    print("   offered  accepted  latency avg  network  hops  stable  saturated")
    for p in result.points:
        print(
            f"  {p['rate']:8.4f}  {p['accepted_flit_rate']:8.4f}  {p['latency_avg']:11.2f}  "
            f"{p['network_latency_avg']:7.2f}  {p['hops_avg']:4.2f}  "
            f"{'yes' if p['stable'] else 'no':>6}  {'yes' if p['saturated'] else 'no':>9}"
        )
    sat = "none (the lowest rate is already past it)" if result.saturation_rate is None else (
        f"{result.saturation_rate:g} flits/node/cycle"
    )  # fmt: skip
    print(f"  zero-load latency {result.zero_load_latency:.2f} cycles; saturation {sat}")
    print(f"  channel-load bound {result.channel_bound:.4f} flits/node/cycle")
    for what, path in (("CSV", args.csv), ("figure", args.figure)):
        if path:
            print(f"  {what} written to {path}")
    return 0


# ------------------------------------------------------------------ parsers
def _rate_step(text: str) -> float:
    """``--refine``: a rate step in (0, 1)."""
    import argparse

    try:
        step = float(text)
    except ValueError:
        step = float("nan")
    if not 0 < step < 1:
        raise argparse.ArgumentTypeError(f"a rate step in (0, 1), e.g. 0.01, not {text!r}")
    return step


def _traffic_options(p, *, sweep: bool) -> None:
    from engine.simulate import patterns

    g = p.add_argument_group("synthetic traffic")
    g.add_argument(
        "--pattern", default="uniform" if sweep else None,
        help="traffic pattern, as BookSim2 defines it: " + ", ".join(patterns.names())
        + " (e.g. hotspot:nodes=0+63,fraction=0.5, matrix:file=M.csv)"
        + ("; default uniform" if sweep else ""),
    )  # fmt: skip
    g.add_argument(
        "--mesh", default="8x8" if sweep else None, metavar="WxH",
        help="routers of the mesh, one terminal each (default 8x8)",
    )  # fmt: skip
    if not sweep:
        g.add_argument(
            "--rate", type=float, help="offered load, flits per node and cycle (default 0.1)"
        )
    g.add_argument(
        "--packet", type=whole(1, 255), default=1 if sweep else None, metavar="FLITS",
        help="flits per packet (default 1)",
    )  # fmt: skip
    g.add_argument(
        "--warmup", type=whole(0, MAX_CYCLES), default=5000 if sweep else None, metavar="W",
        help="warm-up cycles before measuring (default 5000)",
    )  # fmt: skip
    g.add_argument(
        "--cycles", type=whole(1, MAX_CYCLES), default=10000 if sweep else None, metavar="C",
        help="measured cycles (default 10000); a drain follows until every measured packet "
        "has arrived",
    )  # fmt: skip
    if not sweep:
        g.add_argument(
            "--keep-going", action="store_true", default=None,  # (None: not given)
            help="run on past saturation: by default a run whose average latency goes over "
            "500 cycles at a check (every 5000 cycles) stops there, as BookSim2's does; "
            "going on, the packets queued at the sources (and the memory) grow with the run",
        )  # fmt: skip


COMMANDS = {  # name -> one line of help (the top-level help needs nothing more)
    "simulate": "simulate a mapping's time step, or synthetic traffic, flit by flit",
    "sweep": "latency and throughput against offered load (synthetic traffic)",
}


def add_commands(sub) -> None:
    """``simulate`` and ``sweep``."""
    from engine.simulate import SPIKES
    from engine.simulate.walk import CHOICES

    sm = sub.add_parser(
        "simulate",
        help=COMMANDS["simulate"],
        description="Simulate one time step of a mapping flit by flit (the mapping options), "
        "or synthetic traffic on a bare mesh (--pattern).",
    )
    mapping_options(sm, partition=None, placement=DEFAULT_PLACER)
    g = sm.add_argument_group("a mapping's time step")
    mapping_option(g)
    step_options(g)
    g.add_argument(
        "--spikes", choices=SPIKES, default="sample",
        help="sample: each neuron spikes with its rate (seeded by --seed); expected: the "
        "expected counts, rounded (default sample)",
    )  # fmt: skip
    g.add_argument("--links", action="store_true", help="list every link that carried flits")
    g.add_argument(
        "--export-booksim", metavar="PREFIX",
        help="write the step as BookSim2 files: PREFIX.anynet, PREFIX.cfg, PREFIX.trace",
    )  # fmt: skip
    g.add_argument("--export-noxim", metavar="FILE", help="write the step as a Noxim traffic table")
    _traffic_options(sm, sweep=False)
    _router_options(sm)
    o = sm.add_argument_group("output")
    o.add_argument(
        "--save-trace", metavar="FILE.npz",
        help="record link loads and buffer occupancy per window and every packet, for replay",
    )  # fmt: skip
    o.add_argument(
        "--window", type=whole(1, MAX_CYCLES), default=100, metavar="CYCLES",
        help="cycles per trace window (default 100)",
    )  # fmt: skip
    o.add_argument(
        "--walk", metavar="SRC->DST",
        help="follow one packet hop by hop and say why it waited: 'slowest' (the run's "
        "slowest packet) or its ends as routers (x,y) or cores (x,y):s, e.g. '(0,0)->(3,2):1'",
    )  # fmt: skip
    o.add_argument(
        "--walk-which", choices=CHOICES, default=None,
        help="which of the packets between the two ends to follow (default slowest)",
    )  # fmt: skip
    sm.set_defaults(func=cmd_simulate)

    sw = sub.add_parser(
        "sweep",
        help=COMMANDS["sweep"],
        description="Simulate a traffic pattern at every offered rate (in parallel processes) "
        "and read the curve: zero-load latency, saturation, channel-load bound.",
    )
    sw.add_argument(
        "--rates", required=True, metavar="START:STOP:STEP",
        help="offered rates in flits/node/cycle: START:STOP:STEP (stop included) or R1,R2,…",
    )  # fmt: skip
    _traffic_options(sw, sweep=True)
    _router_options(sw)
    seed_option(sw, help="seed of the traffic (default 0)")
    sw.add_argument(
        "--workers", type=whole(1, MAX_WORKERS), default=None,
        help="processes running rates in parallel (default: every core)",
    )  # fmt: skip
    sw.add_argument(
        "--refine", type=_rate_step, default=None, metavar="STEP",
        help="once the rates bracket saturation, bisect between the last rate below it and the "
        "first past it on a grid of STEP (e.g. 0.01) until saturation is located within STEP",
    )  # fmt: skip
    sw.add_argument("--csv", metavar="FILE", help="write every point as CSV")
    sw.add_argument(
        "--figure", metavar="FILE", help="write latency and throughput vs load (.png/.svg/.pdf)"
    )
    json_option(sw)
    sw.set_defaults(func=cmd_sweep)
