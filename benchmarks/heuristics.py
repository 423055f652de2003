"""The Loihi 2 mapping ES's four placement heuristics: hardware, analytic model, simulator.

sparse-mlp-1 at min+2 on one Loihi 2 chip, placed packed/spread × row/column-major. For
each: the latency Loihi 2 mapping ES §5.2 measured on hardware, the max-affine model's
(unicast and multicast), and the simulated step (pipelined and fall-through, unicast and
multicast; mean and range over ``--seeds`` spike samples). Kendall's τ of each model's
order against the hardware's (1: the same order, −1: reversed). Prints one JSON object
and, with ``--figure``, draws the comparison.

    .venv/bin/python benchmarks/heuristics.py [--seeds 5] [--figure assets/heuristics.png]
"""

from __future__ import annotations

import argparse
import json

import numpy as np
from scipy.stats import kendalltau

from engine.pipeline import build_mapping, evaluate
from engine.placement.fill import MEASURED_US
from engine.simulate import simulate_step

HARDWARE_US = MEASURED_US  # Loihi 2 mapping ES §5.2, measured on a Kapoho Point
VARIANTS = [  # (name, mode, multicast)
    ("pipelined", "pipelined", False),
    ("pipelined-multicast", "pipelined", True),
    ("fall-through", "fall-through", False),
    ("fall-through-multicast", "fall-through", True),
]


def tau(values: dict) -> float | None:
    """Kendall's τ against the hardware's order; None when the model ties every placement."""
    names = list(HARDWARE_US)
    t = float(kendalltau([HARDWARE_US[n] for n in names], [values[n] for n in names])[0])
    return None if np.isnan(t) else t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=5, help="spike samples per simulated figure")
    ap.add_argument("--figure", help="write the comparison as a PNG")
    args = ap.parse_args()
    rows = {}
    for placement in HARDWARE_US:
        mapped = build_mapping("sparse-mlp-1", "loihi2", partition="min+2", placement=placement)
        row = {
            "hardware_us": HARDWARE_US[placement],
            "analytic_us": evaluate(mapped).latency_us,
            "analytic_bound": evaluate(mapped).bottleneck,
            "analytic_multicast_us": evaluate(mapped, multicast=True).latency_us,
        }
        for name, mode, multicast in VARIANTS:
            steps = [
                simulate_step(mapped, mode=mode, multicast=multicast, seed=s)
                for s in range(args.seeds)
            ]
            us = np.array([s.step_us for s in steps])
            bounds = [s.bound for s in steps]
            row[name] = {
                "mean_us": float(us.mean()),
                "min_us": float(us.min()),
                "max_us": float(us.max()),
                "bound": max(set(bounds), key=bounds.count),
            }
        rows[placement] = row
    taus = {
        "analytic": tau({p: r["analytic_us"] for p, r in rows.items()}),
        "analytic-multicast": tau({p: r["analytic_multicast_us"] for p, r in rows.items()}),
    }
    for name, _, _ in VARIANTS:
        taus[name] = tau({p: r[name]["mean_us"] for p, r in rows.items()})
    print(json.dumps({"placements": rows, "kendall_tau_vs_hardware": taus}, indent=2))
    if args.figure:
        draw(rows, taus, args.figure)


def fmt(t: float | None) -> str:
    return "n/a (ties)" if t is None else f"{t:+.2f}"


def draw(rows: dict, taus: dict, path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(rows)
    series = [("hardware (Loihi 2 mapping ES §5.2)", [rows[n]["hardware_us"] for n in names],
               None, "#444444"),
              (f"analytic model (τ = {fmt(taus['analytic'])})",
               [rows[n]["analytic_us"] for n in names], None, "#1f77b4")]  # fmt: skip
    colors = {"pipelined": "#ff7f0e", "pipelined-multicast": "#ffbb78",
              "fall-through": "#2ca02c", "fall-through-multicast": "#98df8a"}  # fmt: skip
    for name, _, _ in VARIANTS:
        mean = [rows[n][name]["mean_us"] for n in names]
        err = [[m - rows[n][name]["min_us"] for n, m in zip(names, mean, strict=True)],
               [rows[n][name]["max_us"] - m for n, m in zip(names, mean, strict=True)]]  # fmt: skip
        series.append((f"simulated, {name} (τ = {fmt(taus[name])})", mean, err, colors[name]))
    fig, ax = plt.subplots(figsize=(10, 4.2), layout="constrained")
    width = 0.8 / len(series)
    x = np.arange(len(names))
    for k, (label, values, err, color) in enumerate(series):
        ax.bar(x + (k - (len(series) - 1) / 2) * width, values, width, yerr=err, label=label,
               color=color, capsize=2)  # fmt: skip
    ax.set_xticks(x, names)
    ax.set_ylabel("latency per step (µs)")
    ax.set_title("sparse-mlp-1, min+2, one Loihi 2 chip: the four placement heuristics")
    ax.legend(fontsize=7, ncols=2)
    fig.savefig(path, dpi=110)
    plt.close(fig)


if __name__ == "__main__":
    main()
