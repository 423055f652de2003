"""MeshScope's router against BookSim2's: latency and throughput against offered load.

For each traffic pattern, the same 8×8 mesh and reference router (2 VCs × 8 flits, every
delay one cycle, iSLIP; 1-flit packets; 5000 warm-up and 10000 measured cycles, BookSim2's
``sample_period = 5000; warmup_periods = 1; max_samples = 3``) is swept over the same
offered rates by both simulators, routed by ``--routing`` (``engine.hardware.routing``: xy, X then
Y, is BookSim2's ``dor``; o1turn its ``xy_yx_mesh``, each packet either order on half the VCs).
Prints one JSON object — under ``patterns``, per pattern, both curves, each one's zero-load
latency and saturation (the highest rate, counting up, that is stable with a latency under 3×
zero-load), and the largest relative latency difference below saturation — and, with
``--figure``, draws the curves. The results go to ``booksim_compare.json`` for xy, to
``booksim_ROUTING.json`` for another routing.

BookSim2 runs when the environment variable ``BOOKSIM`` names its binary; without it, the
patterns BookSim2 was recorded on (``RECORDED``: one run of BookSim2 on this configuration
each — uniform for xy) are compared with those figures and the other patterns show
MeshScope alone.

    BOOKSIM=/path/to/booksim .venv/bin/python benchmarks/booksim_compare.py   # every pattern
    BOOKSIM=/path/to/booksim .venv/bin/python benchmarks/booksim_compare.py --routing o1turn \\
        --patterns uniform,transpose
    .venv/bin/python benchmarks/booksim_compare.py --patterns uniform,transpose --rates 0.02:0.3:0.1
    .venv/bin/python benchmarks/booksim_compare.py --quick   # two rates, short runs (the suite's)
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from common import asset, finish, parser

from engine.hardware import NocConstants
from engine.hardware.routing import routings
from engine.simulate import SyntheticRun, parse_rates, sweep
from engine.simulate.sweep import SATURATION_FACTOR

# BookSim2 on this configuration, uniform traffic: rate → (packet latency, accepted, stable)
REFERENCE_UNIFORM = {
    0.01: (33.21, 0.0099, True), 0.02: (33.28, 0.0200, True), 0.04: (33.39, 0.0400, True),
    0.06: (33.71, 0.0601, True), 0.08: (33.93, 0.0801, True), 0.10: (34.27, 0.1000, True),
    0.12: (34.58, 0.1199, True), 0.14: (35.04, 0.1400, True), 0.16: (35.43, 0.1596, True),
    0.18: (36.16, 0.1795, True), 0.20: (36.99, 0.1997, True), 0.22: (38.20, 0.2198, True),
    0.24: (39.85, 0.2398, True), 0.26: (42.81, 0.2597, True), 0.28: (49.36, 0.2798, True),
    0.30: (215.72, 0.2949, True), 0.32: (535.35, 0.2953, False), 0.34: (837.82, 0.2954, False),
    0.36: (1096.73, 0.2941, False), 0.38: (1298.93, 0.2942, False),
    0.40: (524.52, 0.2929, False), 0.44: (659.92, 0.2903, False), 0.48: (783.52, 0.2878, False),
}  # fmt: skip
# BookSim2's xy_yx_mesh (O1TURN) on this configuration: rate → (latency, accepted, stable)
REFERENCE_O1TURN = {
    "uniform": {
        0.02: (33.53, 0.0200, True), 0.04: (33.86, 0.0400, True), 0.06: (34.07, 0.0601, True),
        0.08: (34.41, 0.0801, True), 0.10: (34.87, 0.1000, True), 0.12: (35.38, 0.1198, True),
        0.14: (36.12, 0.1399, True), 0.16: (37.04, 0.1596, True), 0.18: (38.14, 0.1795, True),
        0.20: (39.86, 0.1997, True), 0.22: (42.19, 0.2198, True), 0.24: (45.78, 0.2397, True),
        0.26: (55.21, 0.2598, True), 0.28: (324.36, 0.2731, True),
        0.30: (665.25, 0.2729, False), 0.32: (998.46, 0.2734, False),
        0.34: (1325.01, 0.2705, False), 0.36: (552.55, 0.2681, False),
        0.38: (641.17, 0.2674, False), 0.40: (722.33, 0.2674, False),
        0.42: (792.61, 0.2672, False), 0.44: (882.43, 0.2663, False),
        0.46: (941.75, 0.2663, False), 0.48: (1009.70, 0.2675, False),
        0.50: (1079.97, 0.2652, False),
    },
    "transpose": {
        0.02: (33.68, 0.0200, True), 0.04: (33.80, 0.0400, True), 0.06: (34.33, 0.0601, True),
        0.08: (36.16, 0.0801, True), 0.10: (238.06, 0.0988, True),
        0.12: (260.30, 0.1121, False), 0.14: (414.73, 0.1219, False),
        0.16: (444.69, 0.1294, False), 0.18: (490.09, 0.1373, False),
        0.20: (642.62, 0.1432, False), 0.22: (722.06, 0.1478, False),
        0.24: (743.31, 0.1529, False), 0.26: (845.87, 0.1582, False),
        0.28: (994.59, 0.1613, False), 0.30: (1103.40, 0.1651, False),
        0.32: (1179.44, 0.1685, False), 0.34: (440.30, 0.1720, False),
        0.36: (461.04, 0.1744, False), 0.38: (488.49, 0.1785, False),
        0.40: (525.13, 0.1806, False), 0.42: (589.34, 0.1829, False),
        0.44: (626.51, 0.1851, False), 0.46: (692.90, 0.1871, False),
        0.48: (704.65, 0.1907, False), 0.50: (738.37, 0.1934, False),
    },
}  # fmt: skip
# per routing, the patterns BookSim2 was recorded on
RECORDED = {"xy": {"uniform": REFERENCE_UNIFORM}, "o1turn": REFERENCE_O1TURN}
PATTERNS = (
    "uniform",
    "transpose",
    "bitcomp",
    "bitrev",
    "shuffle",
    "tornado",
    "neighbor",
    "hotspot",
)
# MeshScope's hotspot:nodes=0+63 (BookSim2 takes a pattern's parameters as one braced list)
BOOKSIM_NAMES = {"hotspot": "hotspot({{0,63}})"}


def booksim_point(binary: str, pattern: str, rate: float, routing: str = "xy") -> dict:
    traffic = BOOKSIM_NAMES.get(pattern, pattern)
    cfg = (
        f"topology = mesh; k = 8; n = 2; routing_function = {routings[routing].booksim};\n"
        "num_vcs = 2; vc_buf_size = 8; vc_allocator = islip; sw_allocator = islip; "
        "alloc_iters = 1;\n"
        "credit_delay = 1; routing_delay = 1; vc_alloc_delay = 1; sw_alloc_delay = 1;\n"
        f"traffic = {traffic}; packet_size = 1; sim_type = latency; injection_rate = {rate};\n"
        "injection_rate_uses_flits = 1; sample_period = 5000; warmup_periods = 1; "
        "max_samples = 3;\n"
    )
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "run.cfg"
        path.write_text(cfg)
        out = subprocess.run([binary, str(path)], capture_output=True, text=True,
                             timeout=1800).stdout  # fmt: skip

    def last(pattern_re):
        found = re.findall(pattern_re, out)
        return float(found[-1]) if found else float("nan")

    unstable = "unstable" in out or "Aborting" in out or "Too many sample" in out
    return {
        "rate": rate,
        "latency_avg": last(r"Packet latency average = ([\d.e+-]+)"),
        "accepted_flit_rate": last(r"Accepted flit rate average= ([\d.e+-]+)"),
        "stable": not unstable,
    }


def reading(points: list[dict]) -> dict:
    """Zero-load latency and saturation of a curve, as ``engine.simulate.sweep`` reads it."""
    zero = points[0]["latency_avg"]
    saturation = None
    for p in points:
        if not p["stable"] or not p["latency_avg"] < SATURATION_FACTOR * zero:
            break
        saturation = p["rate"]
    return {"zero_load_latency": zero, "saturation_rate": saturation}


def main() -> None:
    ap = parser(__doc__)
    ap.add_argument("--patterns", default=",".join(PATTERNS), help="comma-separated pattern names")
    ap.add_argument("--rates", default="0.02:0.5:0.02", help="START:STOP:STEP or a list")
    ap.add_argument("--workers", type=int, default=None, help="parallel runs (default: cores)")
    ap.add_argument(
        "--routing", default="xy", choices=[n for n, r in routings.items() if r.booksim],
        help="the routing both simulators use (default xy)",
    )  # fmt: skip
    ap.add_argument(
        "--figure", help="write the curves as a PNG (default assets/booksim-patterns.png)"
    )
    args = ap.parse_args()
    name = "booksim_compare" if args.routing == "xy" else f"booksim_{args.routing}"
    figure = "booksim-patterns.png" if args.routing == "xy" else f"booksim-{args.routing}.png"
    args.figure = args.figure or asset(args, figure)
    length = {}  # the reference's warm-up and measured cycles
    if args.quick:  # two rates of a recorded pattern, short runs, against the recorded BookSim2
        args.patterns, args.rates = next(iter(RECORDED[args.routing])), "0.02,0.2"
        length = {"warmup": 300, "cycles": 1000}
        os.environ.pop("BOOKSIM", None)
    rates = parse_rates(args.rates)
    binary = os.environ.get("BOOKSIM")
    workers = args.workers or os.cpu_count() or 1
    out = {}
    noc = NocConstants(routing=args.routing)
    recorded = RECORDED[args.routing]
    for pattern in args.patterns.split(","):
        spec = "hotspot:nodes=0+63" if pattern == "hotspot" else pattern
        ours = sweep(noc, SyntheticRun(spec, 8, 8, **length), rates, workers=workers)
        row = {"meshscope": {**reading(list(ours.points)), "points": [
            {k: p[k] for k in ("rate", "latency_avg", "accepted_flit_rate", "stable")}
            for p in ours.points]}, "channel_bound": ours.channel_bound}  # fmt: skip
        theirs = None
        if binary:
            with ThreadPoolExecutor(workers) as pool:
                theirs = list(pool.map(
                    lambda r, pt=pattern: booksim_point(binary, pt, r, args.routing), rates
                ))  # fmt: skip
        elif pattern in recorded:
            theirs = [
                {"rate": r, "latency_avg": v[0], "accepted_flit_rate": v[1], "stable": v[2]}
                for r, v in sorted(recorded[pattern].items())
            ]
        if theirs:
            row["booksim2"] = {**reading(theirs), "points": theirs,
                               "source": "live run" if binary else "recorded run"}  # fmt: skip
            mine = {round(p["rate"], 6): p for p in row["meshscope"]["points"]}
            sat = min(row["meshscope"]["saturation_rate"] or 0, row["booksim2"]["saturation_rate"]
                      or 0)  # fmt: skip
            diffs = [abs(mine[round(p["rate"], 6)]["latency_avg"] / p["latency_avg"] - 1)
                     for p in theirs
                     if round(p["rate"], 6) in mine and p["rate"] <= sat]  # fmt: skip
            row["max_latency_difference_below_saturation"] = max(diffs) if diffs else None
        out[pattern] = row
    finish(args, name, {"routing": args.routing, "patterns": out})
    if args.figure:
        draw(out, args.routing, args.figure)


def draw(rows: dict, routing: str, path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import NullFormatter, ScalarFormatter

    n = len(rows)
    cols = min(n, 4)
    rows_n = -(-n // cols)
    fig, axes = plt.subplots(rows_n, cols, figsize=(4 * cols, 3.3 * rows_n), squeeze=False,
                             layout="constrained")  # fmt: skip
    for ax, (pattern, row) in zip(axes.flat, rows.items(), strict=False):
        for who, color, marker in (("meshscope", "#1f77b4", "o"), ("booksim2", "#d62728", "x")):
            if who not in row:
                continue
            pts = [p for p in row[who]["points"] if p["stable"]]
            label = "MeshScope" if who == "meshscope" else f"BookSim2 ({row[who]['source']})"
            ax.plot([p["rate"] for p in pts], [p["latency_avg"] for p in pts], marker=marker,
                    color=color, ms=4, lw=1, label=label)  # fmt: skip
        ax.axvline(row["channel_bound"], color="gray", ls=":", lw=0.8)
        ax.set_yscale("log")
        ax.yaxis.set_major_formatter(ScalarFormatter())
        ax.yaxis.set_minor_formatter(NullFormatter())
        ax.set_title(f"{pattern} (channel bound {row['channel_bound']:.3g})", fontsize=9)
        ax.set_xlabel("offered load (flits/node/cycle)", fontsize=8)
        ax.set_ylabel("packet latency (cycles)", fontsize=8)
        ax.legend(fontsize=7)
    for ax in list(axes.flat)[n:]:
        ax.axis("off")
    title = f"8×8 mesh, reference router, {routings[routing].label}, 1-flit packets"
    fig.suptitle(f"{title}: stable points", fontsize=10)
    fig.savefig(path, dpi=110)
    plt.close(fig)


if __name__ == "__main__":
    main()
