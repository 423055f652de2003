"""Training with routing awareness (the Mosaic paper's Fig. 3b, in miniature), over seeds.

``meshscope mosaic demo`` trains a small recurrent LIF network on a built-in task, once per
target hop profile with DeepR (routing-aware) and once per L1 strength, and counts each
network's routing memory on a Mosaic. One seed says little: the differences between targets
are of the size a second seed changes. This runs the demo for ``--seeds`` seeds and keeps,
per setting, every seed's accuracy, connections and routing entries and their mean. Prints
one JSON object (``benchmarks/results/mosaic_demo.json``) and draws
``assets/mosaic-training.png`` from the first seed.

    .venv/bin/python benchmarks/mosaic_demo.py [--seeds 3]      # about a minute a seed

``--quick``: a tiny case through the same code, printed and not written
(tests/benchmarks/test_quick.py runs it).
"""

from __future__ import annotations

import statistics

from common import asset, finish, parser

from engine.mosaic.demo import figure, run_demo


def main() -> None:
    ap = parser(__doc__)
    ap.add_argument("--seeds", type=int, default=3)
    args = ap.parse_args()
    seeds = range(1 if args.quick else args.seeds)
    runs = [run_demo(quick=args.quick, seed=seed) for seed in seeds]
    figure(runs[0], asset(args, "mosaic-training.png"))
    settings = []
    for k, row in enumerate([*runs[0]["rows"], runs[0]["feedforward"]]):
        per_seed = [(r["rows"] + [r["feedforward"]])[k] for r in runs]
        settings.append(
            {
                "method": row["method"],
                "setting": row["setting"],
                "accuracy": [r["accuracy"] for r in per_seed],
                "connections": [r["connections"] for r in per_seed],
                "routing_entries": [r["routing_entries"] for r in per_seed],
                "mappable": [r["mappable"] for r in per_seed],
                "accuracy_mean": statistics.fmean(r["accuracy"] for r in per_seed),
                "routing_entries_mean": statistics.fmean(r["routing_entries"] for r in per_seed),
            }
        )
    first = runs[0]
    out = {key: first[key] for key in ("task", "note", "hardware", "neurons", "epochs", "chance")}
    finish(args, "mosaic_demo", {**out, "seeds": list(seeds), "settings": settings})


if __name__ == "__main__":
    main()
