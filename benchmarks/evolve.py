"""Loihi 2 mapping ES §5 with the built-in model: single chip, multi-chip, latency-power landscape.

Prints one JSON object and writes ``assets/latency-power.png`` (Loihi 2 mapping ES Fig. 6: every
mapping evaluated by one run, latency against power and energy).

    .venv/bin/python benchmarks/evolve.py            # about 3 minutes on one core
    .venv/bin/python benchmarks/evolve.py --only multichip   # one section; the others kept

``--quick``: a tiny case through the same code, printed and not written
(tests/benchmarks/test_quick.py runs it).
"""

from __future__ import annotations

import json
import statistics
import time

from common import RESULTS, asset, finish, parser

from engine.evaluation.cost import model_evaluation
from engine.hardware import load_hardware
from engine.search import ESConfig, NestedES, make_search
from engine.specs import load_network_spec

SEEDS = range(5)


def summary(values):
    return {"mean": statistics.fmean(values), "min": min(values), "max": max(values)}


def single_chip(net, hw, budget, seeds=SEEDS):
    runs, rates = [], []
    for seed in seeds:
        start = time.perf_counter()
        result = NestedES(net, hw, ESConfig(budget=budget, seed=seed)).run()
        rates.append(budget / (time.perf_counter() - start))
        before = model_evaluation(net, hw, result.initial.mapping(net))
        after = model_evaluation(net, hw, result.mapping(net))
        runs.append(
            {
                "seed": seed,
                "best_latency_us": result.best.latency_us,
                "improvement_pct": result.improvement_pct,
                "initial": {"latency_us": before.latency_us, "bottleneck": before.bottleneck},
                "best": {
                    "latency_us": after.latency_us,
                    "bottleneck": after.bottleneck,
                    "terms_us": after.terms_us,
                    "cores_per_population": list(result.best.cores_per_population),
                },
                "heuristics": {n: r.latency_us for n, r in result.heuristics.items()},
                # the paper's baseline: packed-row (improvement_pct is over the best starting
                # point, which a lucky random placement can be)
                "improvement_vs_packed_row_pct": 100.0
                * (1.0 - result.best.latency_us / result.heuristics["packed-row"].latency_us),
            }
        )
    return {
        "budget": budget,
        "improvement_pct": summary([r["improvement_pct"] for r in runs]),
        "improvement_vs_packed_row_pct": summary(
            [r["improvement_vs_packed_row_pct"] for r in runs]
        ),
        "best_latency_us": summary([r["best_latency_us"] for r in runs]),
        "evaluations_per_s": summary(rates),
        "runs": runs,
    }


def multi_chip(budget, seeds=SEEDS):
    net, hw = load_network_spec("sparse-mlp-2"), load_hardware("loihi2-x8")
    out, starts = {}, []
    # the chip-wise default (as few segments as hold the layers), and one segment per chip
    runs = {"global": ("global", 0), "chipwise": ("chipwise", 0),
            "chipwise_per_chip": ("chipwise", hw.n_chips)}  # fmt: skip
    for key, (strategy, segments) in runs.items():
        bests, chips = [], []
        for seed in seeds:
            cfg = ESConfig(budget=budget, seed=seed, segments=segments)
            search = make_search(net, hw, cfg, strategy=strategy)
            result = search.run()
            bests.append(result.best.latency_us)
            chips.append(model_evaluation(net, hw, result.mapping(net)).chips_used)
            if key == "global":  # the starting points a user's `evolve --seed S` prints
                starts.append({n: r.latency_us for n, r in result.heuristics.items()})
        out[key] = {"best_latency_us": summary(bests), "chips_used": chips}
        if strategy == "chipwise":
            out[key]["segments"] = [s.tolist() for s in search.segments]
    # the global search's starting points, seed by seed (random differs from seed to seed)
    out["heuristics"] = {n: [h[n] for h in starts] for n in starts[0]}
    out["seeds"] = list(seeds)
    out["budget"] = budget
    return out


def landscape_png(net, hw, path, budget=125):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    result = NestedES(net, hw, ESConfig(budget=budget, seed=0)).run()
    ok = [r for r in result.history if not r.failed]
    lat = [r.latency_us for r in ok]
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.6), dpi=120)
    for ax, key, label in (
        (axes[0], "power_w", "power (W)"),
        (axes[1], "energy_uj", "energy per step (µJ)"),
    ):
        sc = ax.scatter(lat, [getattr(r, key) for r in ok], c=[r.cores_used for r in ok], s=14,
                        cmap="viridis")  # fmt: skip
        best = result.best
        ax.scatter([best.latency_us], [getattr(best, key)], marker="*", s=160, c="crimson",
                   label="best")  # fmt: skip
        ax.set_xlabel("latency per step (µs)")
        ax.set_ylabel(label)
        ax.legend(fontsize=8)
    fig.colorbar(sc, ax=axes, label="cores used")
    fig.suptitle(f"Every mapping of one run (sparse-mlp-1, loihi2, {budget} evaluations, seed 0)")
    fig.savefig(path, bbox_inches="tight")
    return {
        "evaluated": len(ok),
        "power_w_range": [min(r.power_w for r in ok), max(r.power_w for r in ok)],
    }


SECTIONS = {"single": "sparse_mlp_1_loihi2", "multichip": "sparse_mlp_2_loihi2_x8",
            "landscape": "landscape"}  # fmt: skip


def main():
    ap = parser(__doc__)
    ap.add_argument(
        "--only", metavar="S[,S…]",
        help=f"measure these sections ({', '.join(SECTIONS)}) and keep the others as recorded "
        "(meta.kept names the run that measured them)",
    )  # fmt: skip
    args = ap.parse_args()
    q = args.quick
    seeds = range(1) if q else SEEDS
    short, long, multi = (15, 30, 20) if q else (125, 2000, 500)
    net, hw = load_network_spec("sparse-mlp-1"), load_hardware("loihi2")
    measure = {
        "single": lambda: {
            str(short): single_chip(net, hw, short, seeds),
            str(long): single_chip(net, hw, long, seeds),
        },
        "multichip": lambda: multi_chip(multi, seeds),
        "landscape": lambda: landscape_png(net, hw, asset(args, "latency-power.png"), short),
    }
    only = set(args.only.split(",")) if args.only else set(SECTIONS)
    if only - set(SECTIONS):
        ap.error(f"--only: sections are {', '.join(SECTIONS)}")
    out, meta = {}, None
    if only != set(SECTIONS) and not q:  # the other sections as they were recorded
        before = json.loads((RESULTS / "evolve.json").read_text())
        kept = [k for k in before["meta"].get("kept", []) if set(k["sections"]) - only]
        theirs = {n for k in kept for n in k["sections"]}
        mine = [n for n in SECTIONS if n not in only and n not in theirs]
        if mine:
            kept.append({"sections": mine, "command": before["meta"]["command"],
                         "date": before["meta"]["date"]})  # fmt: skip
        meta = {"kept": [{**k, "sections": [n for n in k["sections"] if n not in only]}
                         for k in kept]}  # fmt: skip
        out = {SECTIONS[n]: before[SECTIONS[n]] for n in SECTIONS if n not in only}
    for name in SECTIONS:
        if name in only or q:
            out[SECTIONS[name]] = measure[name]()
    finish(args, "evolve", {SECTIONS[n]: out[SECTIONS[n]] for n in SECTIONS}, meta=meta)


if __name__ == "__main__":
    main()
