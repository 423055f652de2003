"""Multi-objective mapping search (NSGA-II on pymoo): hypervolume against the heuristics, and
the speed-up from 1 to N Dask workers.

``hypervolume``: per case — sparse-mlp-1 on loihi2, and the Sinabs NMNIST CNN of the NIR
paper (``tests/data/nir/paper_02_cnn_cnn_sinabs.nir``, 5 layers, 21 cores at least)
on loihi2 — NSGA-II minimizes latency, energy and cores (``--budget`` evaluations, seeds
``0 … --seeds-1``). The reference point of a case is 1.1 × the worst value of each objective
over every feasible heuristic point (packed/spread × row/column and random, at min+2) of every
seed of that case: one point for every seed and for both sets. Objectives are divided by it,
so a hypervolume lies in [0, 1] (points beyond the reference count for nothing). Per case:
the hypervolume of the heuristics' points alone and of the run's front (median, min, max over
seeds), their ratio, the front sizes, evaluations per second, and the best latency found
against the best heuristic's.

``dask``: the same NSGA-II run (sparse-mlp-1 on loihi2, latency/energy/cores,
``--dask-budget`` evaluations, seed 0) evaluated in this process (serial), then on a
``distributed.LocalCluster`` of 1 worker and of ``--workers`` (one thread each, processes);
then the same for the simulated latency (the cycle-level simulator, ``SimulatorEvaluator``;
simulated-latency/energy, ``--sim-budget`` evaluations). NSGA-II evaluates its population of
40 in one batch, then 10 offspring a generation: a batch is 10 evaluations. Every worker is
warmed first (imports and numba's cached kernels loaded, ``warm_s``); the timed run includes
scattering the evaluator's setup and building it on each worker. Every run must give the
same evaluations (objectives, in order): ``identical``. The speed-up cannot exceed ``cpus``;
on a shared machine it is bounded by what other jobs leave: ``cpu_share`` is the CPU seconds
the evaluating processes got over wall seconds × processes, and ``load_average_1min`` the
machine's load around the whole benchmark.

Prints one JSON object and writes it to ``benchmarks/results/pareto.json``.

    .venv/bin/python benchmarks/pareto.py          # about 4 minutes on 2 cores
    .venv/bin/python benchmarks/pareto.py --budget 1000 --seeds 5 --workers 4 --sim-budget 80

``--quick``: a tiny case through the same code, printed and not written
(tests/benchmarks/test_quick.py runs it).
"""

from __future__ import annotations

import contextlib
import logging
import os
import statistics
import time

import numpy as np
from common import NIR_CNN, finish, parser
from pymoo.indicators.hv import HV

from engine.executors import DaskExecutor
from engine.hardware import load_hardware
from engine.search.evaluators import ModelEvaluator, SimulatorEvaluator
from engine.search.pareto import ParetoConfig, ParetoSearch
from engine.specs import load_network_spec

CASES = [("sparse-mlp-1", "sparse-mlp-1", "loihi2"), ("nir-cnn-sinabs", str(NIR_CNN), "loihi2")]
OBJECTIVES = ("latency", "energy", "cores")
SIM_OBJECTIVES = ("simulated-latency", "energy")
REF_FACTOR = 1.1
SIZE: dict = {}  # population and offspring: SENMap Table II's, or a quick run's smaller ones


def summary(values):
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


def points(evaluations, names) -> np.ndarray:
    return np.array([[e.objectives[n] for n in names] for e in evaluations if e.feasible])


def hypervolume(pts: np.ndarray, ref: np.ndarray) -> float:
    return float(HV(ref_point=np.ones(ref.size))(pts / ref)) if len(pts) else 0.0


# ------------------------------------------------------------------ hypervolume
def hypervolume_case(name, spec, hardware, budget, seeds) -> dict:
    net, hw = load_network_spec(spec), load_hardware(hardware)
    runs = []
    for seed in seeds:
        cfg = ParetoConfig(objectives=OBJECTIVES, budget=budget, seed=seed, **SIZE)
        start = time.perf_counter()
        result = ParetoSearch(net, hw, cfg).run()
        wall = time.perf_counter() - start
        runs.append((seed, wall, result))
    heur_all = np.vstack([points(r.heuristics.values(), OBJECTIVES) for _, _, r in runs])
    ref = REF_FACTOR * heur_all.max(axis=0)
    rows = []
    for seed, wall, r in runs:
        heur = points(r.heuristics.values(), OBJECTIVES)
        front = points(r.front, OBJECTIVES)
        hv_h, hv_f = hypervolume(heur, ref), hypervolume(front, ref)
        best = min(e.objectives["latency"] for e in r.front)
        best_heur = min(e.objectives["latency"] for e in r.heuristics.values() if e.feasible)
        rows.append(
            {
                "seed": seed,
                "hv_heuristics": hv_h,
                "hv_front": hv_f,
                "hv_ratio": hv_f / hv_h if hv_h else None,
                "front_size": len(r.front),
                "front_within_reference": int(np.all(front < ref, axis=1).sum()),
                "evaluations": len(r.evaluations),
                "feasible": sum(e.feasible for e in r.evaluations),
                "wall_s": wall,
                "evaluations_per_s": len(r.evaluations) / wall,
                "best_latency_us": best,
                "best_heuristic_latency_us": best_heur,
                "best_heuristic": min(
                    (e for e in r.heuristics.values() if e.feasible),
                    key=lambda e: e.objectives["latency"],
                ).note,
                "latency_gain_pct": 100 * (1 - best / best_heur),
                "front": [[e.objectives[n] for n in OBJECTIVES] for e in r.front],
                "heuristics": {k: [e.objectives[n] for n in OBJECTIVES] for k, e in
                               r.heuristics.items()},
            }
        )  # fmt: skip

    def col(key):
        return summary([row[key] for row in rows])

    return {
        "network": name if spec == name else spec,
        "hardware": hardware,
        "populations": len(runs[0][2].evaluations[0].cores_per_population),  # the input too
        "reference_point": dict(zip(OBJECTIVES, ref.tolist(), strict=True)),
        "hv_heuristics": col("hv_heuristics"),
        "hv_front": col("hv_front"),
        "hv_ratio": col("hv_ratio"),
        "front_size": [row["front_size"] for row in rows],
        "evaluations_per_s": col("evaluations_per_s"),
        "best_latency_us": col("best_latency_us"),
        "best_heuristic_latency_us": col("best_heuristic_latency_us"),
        "latency_gain_pct": col("latency_gain_pct"),
        "runs": rows,
    }


# ------------------------------------------------------------------ Dask
def warm(spec: str, hardware: str, names: tuple) -> float:
    """Import the engine and load numba's kernels (in this process, or on a worker): one
    evaluation of the first heuristic."""
    start = time.perf_counter()
    net, hw = load_network_spec(spec), load_hardware(hardware)
    ParetoSearch(net, hw, ParetoConfig(objectives=names, budget=1, **SIZE)).run()
    return time.perf_counter() - start


def cpu_seconds(client) -> dict:
    """CPU seconds used so far by this process, and by every worker of ``client``."""
    out = {"here": time.process_time()}
    if client is not None:
        out.update(client.run(time.process_time))
    return out


def timed_run(net, hw, names, budget, client, seed=0) -> dict:
    """One NSGA-II run, evaluated here (``client`` None) or on ``client``'s workers."""
    from distributed import get_task_stream

    executor = None if client is None else DaskExecutor(client)
    cls = SimulatorEvaluator if any(n.startswith("simulated") for n in names) else ModelEvaluator
    evaluator = cls(net, hw, executor=executor)
    search = ParetoSearch(
        net,
        hw,
        ParetoConfig(objectives=names, budget=budget, seed=seed, **SIZE),
        evaluator=evaluator,
    )
    batches, tasks, generation = [], [], 0
    cpu0 = cpu_seconds(client)
    start = last = time.perf_counter()
    with contextlib.ExitStack() as stack:
        stream = None if client is None else stack.enter_context(get_task_stream(client))
        for event in search.iter_run():  # a generation's events come once it is evaluated
            if not batches or event.record.generation != generation:
                now = time.perf_counter()
                batches.append([0, now - last])
                last, generation = now, event.record.generation
            batches[-1][0] += 1
    wall = time.perf_counter() - start
    cpu1 = cpu_seconds(client)
    per_worker = {}
    if stream is not None:
        tasks = [
            sum(s["stop"] - s["start"] for s in t["startstops"] if s["action"] == "compute")
            for t in stream.data
        ]
        for t in stream.data:
            per_worker[t["worker"]] = per_worker.get(t["worker"], 0) + 1
    evaluator.close()
    if executor is not None:
        executor.close()
    cpu = {k: cpu1[k] - cpu0[k] for k in cpu0}
    workers = [v for k, v in cpu.items() if k != "here"]
    first_n, first_s = batches[0]
    rest_n, rest_s = sum(n for n, _ in batches[1:]), sum(s for _, s in batches[1:])
    return {
        "wall_s": wall,
        "evaluations": len(search.evaluations),
        "evaluations_per_s": len(search.evaluations) / wall,
        "batches": [n for n, _ in batches],
        "first_batch_s": first_s,  # the population: setup scattered and built, then 40 evaluations
        "first_batch_evaluations_per_s": first_n / first_s,
        "later_batches_evaluations_per_s": rest_n / rest_s if rest_s else None,
        # CPU seconds of this process and of each worker during the run; their share of the
        # wall time shows what the other jobs on the machine left to the run
        "cpu_s_here": cpu["here"],
        "cpu_s_workers": workers,
        "cpu_share": (sum(workers) / (wall * len(workers))) if workers else cpu["here"] / wall,
        "tasks": len(tasks),
        "task_compute_s": {"sum": sum(tasks), "mean": statistics.fmean(tasks)} if tasks else None,
        "tasks_per_worker": sorted(per_worker.values()),
        "_objectives": [tuple(e.objectives[n] for n in names) for e in search.evaluations],
    }


def compare(runs: dict) -> dict:
    """Whether every run gave the serial run's evaluations, and the speed-ups."""
    base = runs["serial"]["_objectives"]
    out = {"identical": all(r["_objectives"] == base for r in runs.values())}
    for key, r in runs.items():
        if r["_objectives"] != base:
            pairs = enumerate(zip(base, r["_objectives"], strict=False))
            out[f"first_difference_{key}"] = next((i for i, (a, b) in pairs if a != b), None)
    for r in runs.values():
        del r["_objectives"]
    one = runs["dask_1"]["wall_s"]
    for key in runs:
        if key.startswith("dask_") and key != "dask_1":
            out[f"speedup_{key}_vs_dask_1"] = one / runs[key]["wall_s"]
            out[f"speedup_{key}_vs_serial"] = runs["serial"]["wall_s"] / runs[key]["wall_s"]
    out["dask_1_wall_vs_serial"] = one / runs["serial"]["wall_s"]
    n = runs["serial"]["evaluations"]
    out["serial_ms_per_evaluation"] = 1000 * runs["serial"]["wall_s"] / n
    out["dask_1_extra_ms_per_evaluation"] = 1000 * (one - runs["serial"]["wall_s"]) / n
    return out


def dask_speedup(workers: int, budget: int, sim_budget: int) -> dict:
    from distributed import Client, LocalCluster

    spec, hardware = "sparse-mlp-1", "loihi2"
    net, hw = load_network_spec(spec), load_hardware(hardware)
    plans = [("model", OBJECTIVES, budget), ("simulated", SIM_OBJECTIVES, sim_budget)]
    runs = {kind: {} for kind, _, _ in plans}
    warm_s = {"serial": sum(warm(spec, hardware, names) for _, names, _ in plans)}
    for kind, names, b in plans:
        runs[kind]["serial"] = timed_run(net, hw, names, b, None)
    for n in sorted({1, workers}):
        start = time.perf_counter()
        with (
            LocalCluster(
                n_workers=n, threads_per_worker=1, processes=True, dashboard_address=None,
                silence_logs=logging.ERROR,
            ) as cluster,
            Client(cluster) as client,
        ):  # fmt: skip
            started = time.perf_counter() - start
            w = client.run(lambda: sum(warm(spec, hardware, names) for _, names, _ in plans))
            warm_s[f"dask_{n}"] = {"cluster_start_s": started, "workers": list(w.values())}
            for kind, names, b in plans:
                runs[kind][f"dask_{n}"] = timed_run(net, hw, names, b, client)
    out = {
        "network": spec,
        "hardware": hardware,
        "cpus": os.cpu_count(),
        "workers": workers,
        "warm_s": warm_s,
        "note": f"the speed-up cannot exceed the machine's {os.cpu_count()} cores; "
        "NSGA-II's batches: 40 (population), then 10 offspring a generation",
    }
    for kind, names, b in plans:
        out[kind] = {"objectives": list(names), "budget": b, **compare(runs[kind]), **runs[kind]}
    return out


def main() -> None:
    ap = parser(__doc__)
    ap.add_argument("--budget", type=int, default=600, help="evaluations a hypervolume run")
    ap.add_argument("--seeds", type=int, default=3, help="seeds a hypervolume case")
    ap.add_argument("--workers", type=int, default=os.cpu_count(), help="Dask workers (N)")
    ap.add_argument("--dask-budget", type=int, default=400, help="evaluations a model run")
    ap.add_argument("--sim-budget", type=int, default=50, help="evaluations a simulator run")
    args = ap.parse_args()
    if args.quick:  # a population of 4 and a generation or two of 2; a cluster of one worker
        args.budget, args.seeds, args.workers, args.dask_budget, args.sim_budget = 8, 1, 1, 8, 4
        SIZE.update(population=4, offspring=2)
    start = time.perf_counter()
    load = os.getloadavg()[0]
    out = {
        "objectives": list(OBJECTIVES),
        "budget": args.budget,
        "seeds": list(range(args.seeds)),
        "reference": f"{REF_FACTOR} x the worst value of each objective over every feasible "
        "heuristic point of the case (all seeds); objectives divided by it",
        "hypervolume": {
            name: hypervolume_case(name, spec, hw, args.budget, range(args.seeds))
            for name, spec, hw in CASES
        },
        "dask": dask_speedup(args.workers, args.dask_budget, args.sim_budget),
        "cpus": os.cpu_count(),
        "load_average_1min": {"start": load, "end": os.getloadavg()[0]},
        "wall_s": time.perf_counter() - start,
    }
    finish(args, "pareto", out)


if __name__ == "__main__":
    main()
