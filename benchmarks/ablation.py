"""Loihi 2 mapping ES §5.5 ablations with the built-in model: reordering, elitism, λ_part × λ_place.

Five seeds per configuration, sparse-mlp-1 on loihi2, a fixed budget of evaluations.
Prints JSON (final best latency per configuration; partitioning generations without
improvement) and writes ``assets/ablation.png`` laid out like Loihi 2 mapping ES Fig. 7.

    .venv/bin/python benchmarks/ablation.py [--budget 250]      # about 4 minutes
    .venv/bin/python benchmarks/ablation.py --quick             # one seed, budget 20 (the suite's)
"""

from __future__ import annotations

import numpy as np
from common import asset, es_curves, final_stats, finish, parser

from engine.hardware import load_hardware
from engine.specs import load_network_spec


def main():
    ap = parser(__doc__)
    ap.add_argument("--budget", type=int, default=250)
    args = ap.parse_args()
    budget = 20 if args.quick else args.budget
    seeds = range(1 if args.quick else 5)
    lambdas = (1, 2) if args.quick else (1, 2, 4, 8)
    net, hw = load_network_spec("sparse-mlp-1"), load_hardware("loihi2")
    runs = {
        "baseline": es_curves(net, hw, seeds, budget=budget),
        "no_reorder": es_curves(net, hw, seeds, budget=budget, reorder=False),
        "no_elitism": es_curves(net, hw, seeds, budget=budget, elitist=False),
    }
    grid = np.zeros((len(lambdas), len(lambdas)))
    out = {"budget": budget, "seeds": len(seeds)}
    for name, (rows, stalled) in runs.items():
        out[name] = {
            "best_latency_us": final_stats(rows),
            "partition_generations_stalled": stalled["share"],  # found no improvement
            "partition_generations_stalled_first_third": stalled["first_third"],
        }
    out["lambda_grid"] = {}
    for i, lp in enumerate(lambdas):
        for j, lq in enumerate(lambdas):
            rows, _ = es_curves(net, hw, seeds, budget=budget, lambda_part=lp, lambda_place=lq)
            grid[i, j] = rows[:, -1].mean()
            out["lambda_grid"][f"part={lp},place={lq}"] = final_stats(rows)
    finish(args, "ablation", out)

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(13, 3.8), dpi=120)
    for ax, pair, title in (
        (axes[0], ("baseline", "no_reorder"), "(a) reordering operator"),
        (axes[1], ("baseline", "no_elitism"), "(b) elitism in partitioning"),
    ):
        for name, color in zip(pair, ("C0", "C3"), strict=True):
            rows = runs[name][0][:, 5:]  # after the five initial heuristics
            x = np.arange(6, rows.shape[1] + 6)
            ax.plot(x, rows.mean(0), color=color, label=name.replace("_", " "))
            ax.fill_between(x, rows.min(0), rows.max(0), color=color, alpha=0.2)
        ax.set_xlabel("fitness evaluations")
        ax.set_ylabel("best latency (µs/step)")
        ax.set_title(title)
        ax.legend()
    im = axes[2].imshow(grid, cmap="viridis_r")
    axes[2].set_xticks(range(len(lambdas)), lambdas)
    axes[2].set_yticks(range(len(lambdas)), lambdas)
    axes[2].set_xlabel("λ_place")
    axes[2].set_ylabel("λ_part")
    axes[2].set_title(f"(c) mean best latency, budget {budget}")
    mid = (grid.min() + grid.max()) / 2
    for (i, j), v in np.ndenumerate(grid):
        color = "black" if v < mid else "white"  # viridis_r: light cells are the low values
        axes[2].text(j, i, f"{v:.2f}", ha="center", va="center", color=color, fontsize=8)
    fig.colorbar(im, ax=axes[2], label="µs/step")
    fig.tight_layout()
    fig.savefig(asset(args, "ablation.png"))


if __name__ == "__main__":
    main()
