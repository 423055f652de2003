"""MeshScope's router against BookSim2's: latency and throughput against offered load.

For each traffic pattern, the same 8×8 mesh and reference router (2 VCs × 8 flits, every
delay one cycle, iSLIP, X-then-Y; 1-flit packets; 5000 warm-up and 10000 measured cycles,
BookSim2's ``sample_period = 5000; warmup_periods = 1; max_samples = 3``) is swept over the
same offered rates by both simulators. Prints one JSON object — under ``patterns``, per
pattern, both curves, each one's zero-load latency and saturation (the highest rate,
counting up, that is stable with a latency under 3× zero-load), and the largest relative
latency difference below saturation — and draws the curves (``--figure``).

BookSim2 runs when the environment variable ``BOOKSIM`` names its binary; without it, the
uniform pattern is compared with the BookSim2 figures recorded in ``REFERENCE_UNIFORM``
(one run of BookSim2 on this configuration) and the other patterns show MeshScope alone.

    BOOKSIM=/path/to/booksim .venv/bin/python benchmarks/booksim_compare.py   # every pattern
    .venv/bin/python benchmarks/booksim_compare.py --patterns uniform,transpose --rates 0.02:0.3:0.1
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


def booksim_point(binary: str, pattern: str, rate: float) -> dict:
    traffic = BOOKSIM_NAMES.get(pattern, pattern)
    cfg = (
        "topology = mesh; k = 8; n = 2; routing_function = dor;\n"
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
        "--figure", help="write the curves as a PNG (default assets/booksim-patterns.png)"
    )
    args = ap.parse_args()
    args.figure = args.figure or asset(args, "booksim-patterns.png")
    length = {}  # the reference's warm-up and measured cycles
    if args.quick:  # two rates of uniform traffic, short runs, against the recorded BookSim2
        args.patterns, args.rates = "uniform", "0.02,0.2"
        length = {"warmup": 300, "cycles": 1000}
        os.environ.pop("BOOKSIM", None)
    rates = parse_rates(args.rates)
    binary = os.environ.get("BOOKSIM")
    workers = args.workers or os.cpu_count() or 1
    out = {}
    for pattern in args.patterns.split(","):
        spec = "hotspot:nodes=0+63" if pattern == "hotspot" else pattern
        ours = sweep(NocConstants(), SyntheticRun(spec, 8, 8, **length), rates, workers=workers)
        row = {"meshscope": {**reading(list(ours.points)), "points": [
            {k: p[k] for k in ("rate", "latency_avg", "accepted_flit_rate", "stable")}
            for p in ours.points]}, "channel_bound": ours.channel_bound}  # fmt: skip
        theirs = None
        if binary:
            with ThreadPoolExecutor(workers) as pool:
                theirs = list(pool.map(lambda r, pt=pattern: booksim_point(binary, pt, r), rates))
        elif pattern == "uniform":
            theirs = [
                {"rate": r, "latency_avg": v[0], "accepted_flit_rate": v[1], "stable": v[2]}
                for r, v in sorted(REFERENCE_UNIFORM.items())
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
    finish(args, "booksim_compare", {"patterns": out})
    if args.figure:
        draw(out, args.figure)


def draw(out: dict, path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import NullFormatter, ScalarFormatter

    n = len(out)
    cols = min(n, 4)
    rows = -(-n // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(4 * cols, 3.3 * rows), squeeze=False,
                             layout="constrained")  # fmt: skip
    for ax, (pattern, row) in zip(axes.flat, out.items(), strict=False):
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
    fig.suptitle("8×8 mesh, reference router, 1-flit packets: stable points", fontsize=10)
    fig.savefig(path, dpi=110)
    plt.close(fig)


if __name__ == "__main__":
    main()
