"""The multi-objective search's algorithms side by side: every entry of the registry
(``engine.search.pareto.algorithms``) at the same budget on the same case.

sparse-mlp-1 on loihi2, ``--budget`` evaluations, seeds ``0 … --seeds-1``, each algorithm
with its own default population and offspring. An algorithm of one objective (or of any
number) minimizes the latency: the best latency found, against the best heuristic's
(packed/spread × row/column and random, at min+2, which start every run). An algorithm of
several objectives (or of any number) minimizes latency and energy: the hypervolume of its
front, both objectives divided by a reference point of 1.1 × the worst value of the
heuristics' points over every seed (so it lies in [0, 1]), against the heuristics' own. Each
figure is the median over the seeds; evaluations per second are the run's wall time (on a
shared machine, bounded by what other jobs leave: ``load_average_1min``).

Prints one JSON object and writes it to ``benchmarks/results/algorithms.json``.

    .venv/bin/python benchmarks/algorithms.py          # about 5 minutes on 2 cores
    .venv/bin/python benchmarks/algorithms.py --quick  # a small case, one seed (the suite's)
"""

from __future__ import annotations

import os
import statistics
import time

import numpy as np
from common import finish, parser
from pymoo.indicators.hv import HV

from engine.hardware import load_hardware
from engine.search.pareto import ParetoConfig, ParetoSearch, algorithms
from engine.specs import load_network_spec

CASE = ("sparse-mlp-1", "loihi2")
QUICK_CASE = ("mlp:widths=256-512-256-10", "mesh:2x2x4")
ONE, TWO = ("latency",), ("latency", "energy")
REF_FACTOR = 1.1


def median(values):
    return statistics.median(values)


def points(records, names) -> np.ndarray:
    return np.array([[e.objectives[n] for n in names] for e in records if e.feasible])


def run(net, hw, name: str, names, budget: int, seed: int, size: dict):
    cfg = ParetoConfig(objectives=names, algorithm=name, budget=budget, seed=seed, **size)
    start = time.perf_counter()
    result = ParetoSearch(net, hw, cfg).run()
    return result, time.perf_counter() - start


def one_objective(net, hw, name, budget, seeds, size) -> dict:
    rows = []
    for seed in seeds:
        r, wall = run(net, hw, name, ONE, budget, seed, size)
        best = min(e.objectives["latency"] for e in r.front)
        heur = min(e.objectives["latency"] for e in r.heuristics.values() if e.feasible)
        rows.append({"seed": seed, "best_latency_us": best, "best_heuristic_latency_us": heur,
                     "latency_gain_pct": 100 * (1 - best / heur),
                     "evaluations_per_s": len(r.evaluations) / wall})  # fmt: skip
    return {key: median([row[key] for row in rows]) for key in rows[0] if key != "seed"} | {
        "runs": rows
    }


def two_objectives(net, hw, name, budget, seeds, size) -> dict:
    runs = [(seed, *run(net, hw, name, TWO, budget, seed, size)) for seed in seeds]
    return {"runs": [
        {"seed": seed, "front": points(r.front, TWO).tolist(),
         "heuristics": points(r.heuristics.values(), TWO).tolist(),
         "evaluations_per_s": len(r.evaluations) / wall}
        for seed, r, wall in runs
    ]}  # fmt: skip


def hypervolumes(cases: dict) -> None:
    """Each two-objective case's hypervolumes, against one reference point for them all."""
    heur = np.vstack([np.array(run["heuristics"]) for c in cases.values() for run in c["runs"]])
    ref = REF_FACTOR * heur.max(axis=0)
    indicator = HV(ref_point=np.ones(ref.size))
    for c in cases.values():
        hv = [float(indicator(np.array(run["front"]) / ref)) for run in c["runs"]]
        hv_h = [float(indicator(np.array(run["heuristics"]) / ref)) for run in c["runs"]]
        c.update(
            hv_front=median(hv), hv_heuristics=median(hv_h),
            front_size=median([len(run["front"]) for run in c["runs"]]),
            evaluations_per_s=median([run["evaluations_per_s"] for run in c["runs"]]),
            reference_point=dict(zip(TWO, ref.tolist(), strict=True)),
        )  # fmt: skip


def main() -> None:
    ap = parser(__doc__)
    ap.add_argument("--budget", type=int, default=600, help="evaluations a run (default 600)")
    ap.add_argument("--seeds", type=int, default=3, help="seeds a case (default 3)")
    args = ap.parse_args()
    network, hardware = QUICK_CASE if args.quick else CASE
    budget, seeds = (40, range(1)) if args.quick else (args.budget, range(args.seeds))
    size = {"population": 8} if args.quick else {}  # quick: several generations in 40
    net, hw = load_network_spec(network), load_hardware(hardware)
    run(net, hw, "ga", ONE, 1, 0, {})  # numba's kernels loaded before any run is timed
    start, load = time.perf_counter(), os.getloadavg()[0]
    single, several = {}, {}
    for name, algorithm in algorithms.items():
        own = dict(size, offspring=16) if args.quick and name == "isres" else size
        if algorithm.objectives in ("one", "any"):
            single[name] = one_objective(net, hw, name, budget, seeds, own)
        if algorithm.objectives in ("several", "any"):
            several[name] = two_objectives(net, hw, name, budget, seeds, own)
    hypervolumes(several)
    finish(args, "algorithms", {
        "network": network, "hardware": hardware, "budget": budget, "seeds": len(seeds),
        "one_objective": single, "two_objectives": several,
        "wall_s": time.perf_counter() - start,
        # evaluations per second depend on what else runs: the machine's load around it
        "load_average_1min": {"start": load, "end": os.getloadavg()[0]},
    })  # fmt: skip


if __name__ == "__main__":
    main()
