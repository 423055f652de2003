"""The microbenchmarks of the Loihi 2 runtime model (Fig. 2) as its Fig. 4 draws them.

For every run of ``meshscope microbench`` on a preset: the step time the model and the
simulator predict, and the constant each run implies — step time over the count of the term
it stresses (µs per DendOp, SynOp, SynMem read; bits per µs of the link; µs of the barrier) —
which approaches the preset's constant as the workload grows, as the paper's measurements
approach the hardware's. On hardware the same runs give the measured constants
(``meshscope calibrate``). Also how well calibration recovers known constants from these
runs: measurements made with the preset's constants scaled (×1.3, ×0.7, ×1.2, B ×1.4, ×0.8)
and 2 % noise, over ten noise seeds, with and without the runs' ``saturates`` labels: the
worst constant's relative error. Prints one JSON object; ``--figure`` draws the four panels.

    .venv/bin/python benchmarks/microbench.py [--hardware loihi2] [--figure FILE]

``--quick``: a tiny case through the same code, printed and not written
(tests/benchmarks/test_quick.py runs it).
"""

from __future__ import annotations

import re

import numpy as np
from common import asset, finish, parser

from engine.evaluation.cost import TERMS
from engine.fidelity.calibrate import calibrate
from engine.fidelity.predict import constants_vector, max_affine, predict
from engine.fidelity.suites import suite_runs
from engine.hardware import load_hardware

LABELS = {
    "dendops": ("DendOp (Fig. 2b)", "N neurons", "ns per DendOp", 1e3),
    "synops": ("SynOp (Fig. 2c)", "N (N² SynOps)", "ns per SynOp", 1e3),
    "synmem": ("SynMem read (Fig. 2d)", "N (dense identity, 8-bit)", "ns per SynMem read", 1e3),
    "link": ("link bandwidth (Fig. 2e)", "N neurons per pair (M pairs)", "bits per µs", None),
}


def main() -> None:
    ap = parser(__doc__)
    ap.add_argument("--hardware", default="loihi2")
    ap.add_argument("--figure", help="write the panels as a PNG (default assets/microbench.png)")
    args = ap.parse_args()
    args.figure = args.figure or asset(args, "microbench.png")
    hw = load_hardware(args.hardware)
    runs = suite_runs("microbench", args.hardware)
    preds = predict(runs)
    theta = constants_vector(hw)
    rows = []
    for r, p in zip(runs, preds, strict=True):
        k = TERMS.index(r.saturates)
        count = p.counts[k]
        row = {"name": r.name, "term": r.saturates, "n": int(re.findall(r"N=(\d+)", r.network)[0])
               if "N=" in r.network else 0, "count": float(count), "model_us": p.model_us,
               "simulator_us": p.simulator_us, "model_bound": p.bound,
               "simulator_bound": p.simulator_bound}  # fmt: skip
        for who in ("model", "simulator"):
            t = row[f"{who}_us"]
            implied = count / t if r.saturates == "link" else t / count
            row[f"{who}_implied"] = implied if count else None
        rows.append(row)
    preset = {t: (1 / theta[k] if t == "link" else theta[k]) for k, t in enumerate(TERMS)}
    x = np.array([p.counts for p in preds])
    recovery = calibration_recovery(hw, runs, x, seeds=2 if args.quick else 10)
    out = {"hardware": hw.name, "preset": preset, "runs": rows, "calibration_recovery": recovery}
    finish(args, "microbench", out)
    if args.figure:
        draw(rows, preset, hw.name, args.figure)


def calibration_recovery(hw, runs, x, seeds: int = 10) -> dict:
    """The worst constant's relative error when calibrating from synthetic measurements."""
    true = constants_vector(hw) * np.array([1.3, 0.7, 1.2, 1 / 1.4, 0.8])
    errors = []
    for seed in range(seeds):
        noise = 1 + 0.02 * np.random.default_rng(seed).standard_normal(len(x))
        t = max_affine(x, true) * noise
        for labels in ([r.saturates for r in runs], None):
            got = constants_vector(calibrate(x, t, hw, what="synthetic", labels=labels).hardware)
            errors.append(float(np.abs(got / true - 1).max()))
    return {"runs": len(runs), "fits": len(errors), "median_worst_error": float(np.median(errors)),
            "max_worst_error": max(errors)}  # fmt: skip


def draw(rows, preset, name, path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 4, figsize=(14, 3.6), layout="constrained")
    for ax, (term, (title, xlabel, ylabel, scale)) in zip(axes, LABELS.items(), strict=True):
        rs = [r for r in rows if r["term"] == term]
        n = np.array([r["n"] for r in rs])
        unit = scale or 1.0
        for who, style in (("model", "o-"), ("simulator", "x--")):
            v = np.array([r[f"{who}_implied"] for r in rs], dtype=float) * unit
            ax.plot(n, v, style, label=who)
        ax.axhline(preset[term] * unit, color="gray", lw=0.8, ls=":", label=f"{name}'s constant")
        ax.set(xscale="log", title=title, xlabel=xlabel, ylabel=ylabel)
        ax.minorticks_off()
        ax.set_xticks(n, [str(v) for v in n])
        ax.legend(fontsize=7)
    fig.suptitle(
        "what each microbenchmark implies (step time / count): it reaches the constant once "
        "its term bounds the step (Loihi 2 runtime model Fig. 4)", fontsize=10,
    )  # fmt: skip
    fig.savefig(path, dpi=110)
    plt.close(fig)


if __name__ == "__main__":
    main()
