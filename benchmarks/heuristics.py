"""Loihi 2 mapping ES §5.2 end to end: the four placement heuristics, hardware vs predictors.

sparse-mlp-1 at min+2 on one Loihi 2 chip, placed packed/spread × row/column-major, its
input layer a spike source that sends from the input port. For each: the latency the paper
measured on hardware; the max-affine model's (unicast, multicast, read stage by stage as the
paper's §5.6 does, and with one mesh instead of Loihi 2's two); the simulated pipelined
step (as the hardware runs it); and the simulator with one mechanism switched off at a
time — per-direction hop latency (N–S hops as fast as E–W), Loihi 2's second mesh, core
back-pressure (cores never hold the mesh), pipelining (layer after layer) — or multicast
switched on; and, as a what-if, model and simulator with the input layer on cores (min+2
of them) as this tool read the workload before. Each predictor's Pearson r, Kendall τ and
MAPE against the hardware's four numbers (which no constant of the preset is fitted to).
Simulated figures are the mean over ``--seeds`` spike samples.
Beside the predictors of time, one of order only: the mean route length of a message (hops
per message, the SNN hypergraphs paper's congestion over the message count), whose r and τ
say whether the hardware's step tracks the total traffic rather than its heaviest link.
Prints one JSON object; ``--figure`` draws it.

    .venv/bin/python benchmarks/heuristics.py [--seeds 3] [--figure FILE]

``--quick``: a tiny case through the same code, printed and not written
(tests/benchmarks/test_quick.py runs it).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from common import asset, finish, parser

from engine.evaluation.stages import stage_breakdown
from engine.fidelity.stats import agreement
from engine.mapping.placement.fill import MEASURED_US
from engine.pipeline import Mapped, build_mapping, evaluate
from engine.simulate import simulate_step
from engine.specs import load_network_spec

HARDWARE_US = MEASURED_US  # Loihi 2 mapping ES §5.2, measured on a Kapoho Point
# simulator variants: name -> (options of simulate_step, a change to the hardware or None)
VARIANTS = {
    "simulator": ({}, None),
    "no per-direction latency": ({}, "flat"),
    "one mesh": ({}, "one mesh"),
    "no core back-pressure": ({"backpressure": False}, None),
    "no pipelining (fall-through)": ({"mode": "fall-through"}, None),
    "multicast": ({"multicast": True}, None),
}


def changed(mapped: Mapped, change: str | None) -> Mapped:
    """The same mapping on the hardware with one mechanism switched off: ``flat`` (N-S links
    as fast as E-W ones) or ``one mesh`` (one mesh instead of Loihi 2's two)."""
    hw = mapped.hardware
    if change == "flat":
        hw = replace(hw, noc=replace(hw.noc, ns_latency=hw.noc.ew_latency))
    elif change == "one mesh":
        hw = replace(hw, links=replace(hw.links, meshes=1))
    return mapped if change is None else Mapped.of(mapped.network, hw, mapped.mapping)


def input_on_cores(placement: str) -> Mapped:
    """What-if: the input layer a layer of cores (min+2 of them, placed first) instead of a
    spike source at the input port — how the model read the workload before."""
    on_cores = replace(load_network_spec("sparse-mlp-1"), spike_source=None)
    return build_mapping(on_cores, "loihi2", partition="min+2", placement=placement)


def main() -> None:
    ap = parser(__doc__)
    ap.add_argument("--seeds", type=int, default=3, help="spike samples per simulated figure")
    ap.add_argument(
        "--figure", help="write the comparison as a PNG (default assets/heuristics-simulated.png)"
    )
    args = ap.parse_args()
    args.figure = args.figure or asset(args, "heuristics-simulated.png")
    if args.quick:
        args.seeds = 1
    names = list(HARDWARE_US)[: 2 if args.quick else None]  # quick: two placements
    columns: dict[str, dict] = {"hardware": {p: HARDWARE_US[p] for p in names}}
    bounds: dict[str, dict] = {}
    hops: dict[str, float] = {}
    for p in names:
        mapped = build_mapping("sparse-mlp-1", "loihi2", partition="min+2", placement=p)
        for col, multicast in (("model", False), ("model, multicast", True)):
            ev = evaluate(mapped, multicast=multicast)
            if not multicast:
                hops[p] = ev.metrics["hops_per_message"]
            columns.setdefault(col, {})[p] = ev.latency_us
            bounds.setdefault(col, {})[p] = ev.bottleneck
        stages = stage_breakdown(mapped)
        columns.setdefault("model, stage by stage", {})[p] = stages.latency_us
        slowest = next((r for r in stages.rows if r["layer"] == stages.slowest), None)
        bounds.setdefault("model, stage by stage", {})[p] = (
            f"{slowest['bound']} of {slowest['layer']}" if slowest else "barrier"
        )
        for col, (options, change) in VARIANTS.items():
            m = changed(mapped, change)
            steps = [simulate_step(m, seed=s, **options) for s in range(args.seeds)]
            columns.setdefault(col, {})[p] = float(np.mean([s.step_us for s in steps]))
            found = [s.bound for s in steps]
            bounds.setdefault(col, {})[p] = max(set(found), key=found.count)
        columns.setdefault("model, one mesh", {})[p] = evaluate(
            changed(mapped, "one mesh")
        ).latency_us
        # what-if: the input layer on cores, as before it was a spike source
        before = input_on_cores(p)
        columns.setdefault("what-if: model, input on cores", {})[p] = evaluate(before).latency_us
        steps = [simulate_step(before, seed=s) for s in range(args.seeds)]
        columns.setdefault("what-if: simulator, input on cores", {})[p] = float(
            np.mean([s.step_us for s in steps])
        )
    hw = [HARDWARE_US[p] for p in names]
    stats = {
        col: {k: v for k, v in agreement(hw, [vals[p] for p in names]).items() if k != "why"}
        for col, vals in columns.items()
        if col != "hardware"
    }
    order = agreement(hw, [hops[p] for p in names])
    stats["hops per message (order only)"] = {
        k: order[k] for k in ("n", "pearson_r", "kendall_tau")
    }
    out = {"us": columns, "bound": bounds, "hops_per_message": hops, "against_hardware": stats}
    out["model_evaluations"] = model_evaluations([*names, "random"])
    finish(args, "heuristics", out)
    if args.figure:
        draw(names, columns, stats, hops, args.figure)


def model_evaluations(placements) -> dict:
    """The model's figures of each placement (``meshscope evaluate --partition min+2
    --placement NAME``; random with seed 0)."""
    keep = ("latency_us", "bottleneck", "energy_uj", "power_w", "max_link_messages")
    out = {}
    for p in placements:
        ev = evaluate(build_mapping("sparse-mlp-1", "loihi2", partition="min+2", placement=p))
        out[p] = {k: v for k, v in ev.to_dict().items() if k in keep}
    return out


def _stats(s: dict) -> str:
    def f(v):
        return "n/a" if v is None else f"{v:+.2f}"

    return f"τ = {f(s['kendall_tau'])}, r = {f(s['pearson_r'])}"


def draw(names, columns, stats, hops, path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    colors = ["#444444", "#1f77b4", "#aec7e8", "#17becf", "#ff7f0e", "#2ca02c", "#d62728",
              "#9467bd", "#c5b0d5", "#8c564b", "#e377c2", "#bcbd22", "#7f7f7f",
              "#98df8a"]  # fmt: skip
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 6.2), layout="constrained")
    x = np.arange(len(names))
    width = 0.8 / len(columns)
    for k, (col, vals) in enumerate(columns.items()):
        v = np.array([vals[p] for p in names])
        s = stats.get(col)
        label = col if s is None else f"{col} ({_stats(s)})"
        offset = (k - (len(columns) - 1) / 2) * width
        left.bar(x + offset, v, width, label=label, color=colors[k % len(colors)])
        right.plot(x, v / v.mean(), "o-", color=colors[k % len(colors)], lw=2.5 if k == 0 else 1)
    h = np.array([hops[p] for p in names])
    s = stats["hops per message (order only)"]
    right.plot(x, h / h.mean(), "s:", color="black", label=f"hops per message ({_stats(s)})")
    right.legend(fontsize=7)
    left.set_xticks(x, names)
    left.set_ylabel("latency per step (µs)")
    left.set_title("sparse-mlp-1, min+2, one Loihi 2 chip: the four heuristics")
    left.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.08), ncol=2)
    right.set_xticks(x, names)
    right.set_ylabel("latency / the predictor's mean over the four")
    right.set_title("the shapes: hardware thick (rising = the hardware's order)")
    fig.savefig(path, dpi=110)
    plt.close(fig)


if __name__ == "__main__":
    main()
