"""Does a predictor rank mappings as the cycle-level simulator does? (issue 55)

For each (network, hardware) pair, a population of mappings (``engine.fidelity.population``:
the four heuristics, random placements, random partitionings placed several ways, the
mappings a short nested ES run visited, single swaps from its best) is simulated
(pipelined, spikes sampled with seeds 0 … ``--seeds`` − 1, every mapping with the same
spikes; the truth is their mean step) and predicted by every predictor of
``engine.predict.predictors``. Per pair and predictor: Kendall τ and Spearman ρ
(scipy.stats) against the simulated step, MAPE, the overlap of the five best, and whether
the predictor's best mapping simulates within 2 % of the simulator's best. Beside them the
simulator against itself: τ of seed 0's steps against the others' mean, the most any
prediction of the mean could expect of one sample.

The fitted predictor (``engine.predict.fitted``) is judged held out: each pair's mappings
by a fit of every other pair's (leave-one-pair-out). Every member's row is recorded
(kind, label, simulated steps per seed, each predictor's step, the fitted features), and
so is the fit of every pair's, the coefficients the predictor ships.

Also: the issue's own table (4 heuristics + 24 random placements, seed 0's step: the
figures the issue quoted, before and after); each predictor's speed on sparse-mlp-1 (full
evaluations of new placements, and single swaps, per second); and each predictor's order
of the four Loihi 2 heuristics of Loihi 2 mapping ES §5.2 against the latencies measured
on the chip (to which no constant is fitted).

    .venv/bin/python benchmarks/fidelity_sim.py [--seeds 3] [--jobs 2]

``--jobs N``: N pairs at once, each in a process of its own. ``--quick``: two small pairs
and few mappings, the same code and keys, nothing written.
"""

from __future__ import annotations

import contextlib
import multiprocessing as mp
import os
import time
from concurrent.futures import ProcessPoolExecutor

import numpy as np
from common import finish, parser
from scipy import stats

from engine.errors import MeshScopeError
from engine.fidelity.population import KINDS, PairSpec, population
from engine.mapping.assignment import Placement
from engine.mapping.placement.fill import MEASURED_US
from engine.pipeline import build_mapping, evaluator
from engine.predict import predictors
from engine.predict.fitted import FEATURES, FittedEvaluator, fit_log_linear, predict_log_linear
from engine.simulate import draw_spikes, simulate_step

PLACERS = ("hilbert", "random", "spectral")
PAIRS = (
    PairSpec("sparse-mlp-1", "loihi2", "min+2",
             ("min", "min+1", "min+3", "greedy", "hierarchical", "sequential", "overlap"),
             PLACERS, name="sparse-mlp-1/loihi2"),
    PairSpec("sparse-mlp-2", "loihi2-x8", "min+2",
             ("min", "min+1", "min+3", "greedy", "sequential", "overlap"), PLACERS,
             name="sparse-mlp-2/loihi2-x8"),
    PairSpec("lenet", "hypergraph-small", "min+1",
             ("min", "min+3", "greedy", "hierarchical", "overlap", "sequential", "edgemap"),
             PLACERS, name="lenet/hypergraph-small"),
    PairSpec("rand:n=4096,card=32", "hypergraph-small", "overlap",
             ("hierarchical", "sequential", "edgemap", "min+1", "min+3", "sequential-ordered"),
             PLACERS, name="rand/hypergraph-small"),
    PairSpec("pilotnet", "seneca", "min", ("min+1", "sequential-ordered", "overlap", "layer"),
             PLACERS, name="pilotnet/seneca (multicast)"),
    PairSpec("rand:n=4096,card=32", "loihi2", "overlap",
             ("hierarchical", "sequential", "min+1", "min+3", "edgemap"), PLACERS,
             name="rand/loihi2"),
)  # fmt: skip
QUICK_PAIRS = (
    PairSpec("mlp:widths=128-256-128", "mesh:4x4x2", "min+1", ("min", "greedy"), PLACERS,
             name="mlp/mesh:4x4x2"),
    PairSpec("rand:n=1024,card=16", "seneca", "overlap", ("sequential",), PLACERS,
             name="rand/seneca (multicast)", evolve=False),
)  # fmt: skip
# about how long each pair takes (s, 3 seeds, one core): --jobs starts the longest first
COST = {
    "sparse-mlp-2/loihi2-x8": 380,
    "pilotnet/seneca (multicast)": 270,
    "lenet/hypergraph-small": 180,
    "sparse-mlp-1/loihi2": 105,
    "rand/hypergraph-small": 55,
}
# the issue's table: 4 heuristics + 24 random placements, simulated with seed 0
ISSUE = (
    ("sparse-mlp-1", "loihi2", "min+2"),
    ("sparse-mlp-2", "loihi2-x8", "min+2"),
    ("rand:n=4096,card=32", "loihi2", "overlap"),
)
HEURISTICS = ("packed-row", "packed-col", "spread-row", "spread-col")


def judge(predicted, simulated) -> dict:
    """How ``predicted`` ranks and scales the ``simulated`` steps (µs)."""
    p, s = np.asarray(predicted, float), np.asarray(simulated, float)
    k = min(5, p.size)
    top_p, top_s = set(np.argsort(p, kind="stable")[:k]), set(np.argsort(s, kind="stable")[:k])
    chosen = float(s[int(np.argmin(p))])
    return {
        "kendall_tau": _stat(stats.kendalltau, p, s),
        "spearman": _stat(stats.spearmanr, p, s),
        "mape": float(100 * np.mean(np.abs(p - s) / s)),
        "top5_overlap": len(top_p & top_s) / k,
        "best_gap_pct": float(100 * (chosen / s.min() - 1)),
        "best_within_2pct": bool(chosen <= 1.02 * s.min()),
    }


def _stat(fn, p, s):
    if np.ptp(p) == 0 or np.ptp(s) == 0:
        return None
    return float(fn(p, s).statistic)


def predict(members, name: str, fit: dict | None = None) -> np.ndarray:
    """Every member's step by predictor ``name`` (one evaluator per partition); for
    ``fitted``, also every member's features (rows × ``FEATURES``), and with ``fit`` its
    coefficients rather than the shipped ones."""
    evaluators: dict[int, object] = {}
    out, feats = [], []
    for m in members:
        ev = evaluators.get(id(m.mapped.graph))
        if ev is None:
            ev = evaluators[id(m.mapped.graph)] = _evaluator(m.mapped, name, fit)
        else:
            ev.set_placement(m.mapped.mapping.placement)
        out.append(ev.latency_us)
        if name == "fitted":
            feats.append(ev.features())
    return (np.array(out), np.array(feats)) if name == "fitted" else np.array(out)


def _evaluator(mapped, name: str, fit: dict | None = None):
    if name == "fitted" and fit is not None:
        return FittedEvaluator(mapped.network, mapped.hardware, mapped.mapping.partition,
                               mapped.mapping.placement, graph=mapped.graph, fit=fit)  # fmt: skip
    return evaluator(mapped, predictor=name)


def simulate(members, seeds) -> np.ndarray:
    """(seeds, members) simulated steps (µs; NaN where the simulation failed)."""
    net = members[0].mapped.network
    out = np.full((len(seeds), len(members)), np.nan)
    for i, seed in enumerate(seeds):
        spikes = draw_spikes(net.rate, "sample", seed=seed)
        for j, m in enumerate(members):
            with contextlib.suppress(MeshScopeError):  # a deadlocked step: counted, left out
                out[i, j] = simulate_step(m.mapped, spikes=spikes, seed=seed).step_us
    return out


def pair_figures(spec: PairSpec, size: str, seeds) -> dict:
    """One pair's population, simulated and predicted: the figures of every predictor but
    ``fitted`` (judged held-out once every pair is done: ``held_out``), and every member's
    row (kind, label, simulated steps per seed, predictions, the fitted features)."""
    t0 = time.perf_counter()
    members = population(spec, size=size)
    steps = simulate(members, seeds)
    ok = np.all(np.isfinite(steps), axis=0)
    truth = steps[:, ok].mean(axis=0)
    kept = [m for m, good in zip(members, ok, strict=True) if good]
    kinds = np.array([m.kind for m in kept])
    out = {
        "pair": spec.label, "network": spec.network, "hardware": spec.hardware,
        "mappings": int(ok.sum()), "failed_simulations": int((~ok).sum()),
        "by_kind": {k: int((kinds == k).sum()) for k in KINDS},
        "simulated_us": {"min": float(truth.min()), "median": float(np.median(truth)),
                         "max": float(truth.max())},
        "predictors": {},
    }  # fmt: skip
    if len(seeds) > 1:  # the simulator against itself: one sample against the others' mean
        rest = steps[1:, ok].mean(axis=0)
        out["simulator_self"] = {
            "kendall_tau": _stat(stats.kendalltau, steps[0, ok], rest),
            "mape": float(100 * np.mean(np.abs(steps[0, ok] - rest) / rest)),
        }
    rows = {"kind": kinds.tolist(), "label": [m.label for m in kept],
            "simulated_us": steps[:, ok].T.tolist(), "predicted_us": {}}  # fmt: skip
    for name in predictors:
        if name == "fitted":
            p, feats = predict(kept, name)
            rows["features"] = feats.tolist()
        else:
            p = predict(kept, name)
            out["predictors"][name] = judge(p, truth)
        rows["predicted_us"][name] = p.tolist()
    out["members"] = rows
    out["seconds"] = time.perf_counter() - t0
    return out


def held_out(pairs: list[dict]) -> dict:
    """The fitted predictor judged leave-one-pair-out: each pair's mappings predicted by a
    fit of every other pair's (``fit_log_linear``), and the fit of every pair's — the
    coefficients ``engine.predict.fitted.FIT`` ships."""
    feats = [np.array(p["members"]["features"]) for p in pairs]
    truth = [np.mean(p["members"]["simulated_us"], axis=1) for p in pairs]
    for i, pair in enumerate(pairs):
        others = [j for j in range(len(pairs)) if j != i]
        fit = fit_log_linear(np.vstack([feats[j] for j in others]),
                             np.concatenate([truth[j] for j in others]))  # fmt: skip
        judged = judge(predict_log_linear(feats[i], fit), truth[i])
        pair["predictors"]["fitted"] = {**judged, "held_out": True, "fit": fit}
    return fit_log_linear(np.vstack(feats), np.concatenate(truth))


def _run_pair(args) -> dict:
    spec, size, seeds = args
    return pair_figures(spec, size, seeds)


def issue_table(quick: bool, fit: dict) -> list[dict]:
    """The issue's rows: 4 heuristics + 24 random placements, seed 0's step."""
    rows = []
    cases = ISSUE[:1] if quick else ISSUE
    n_random = 3 if quick else 24
    for net, hw, part in cases:
        base = build_mapping(net, hw, partition=part, placement=HEURISTICS[0])
        spikes = draw_spikes(base.network.rate, "sample", seed=0)
        mapped = [base] + [
            build_mapping(base.network, base.hardware, partition=base.mapping.partition,
                          placement=p, seed=0)
            for p in HEURISTICS[1:]
        ] + [
            build_mapping(base.network, base.hardware, partition=base.mapping.partition,
                          placement="random", seed=k)
            for k in range(n_random)
        ]  # fmt: skip
        sim = np.array([simulate_step(m, spikes=spikes, seed=0).step_us for m in mapped])
        row = {"network": net, "hardware": hw, "partition": part, "mappings": len(mapped),
               "predictors": {}}  # fmt: skip
        for name in predictors:
            ev = _evaluator(base, name, fit)
            p = []
            for m in mapped:
                ev.set_placement(m.mapping.placement)
                p.append(ev.latency_us)
            row["predictors"][name] = judge(p, sim)
        rows.append(row)
    return rows


def speed(quick: bool) -> dict:
    """Evaluations per second on sparse-mlp-1 (min+2, loihi2): a new placement each time,
    and a swap of two cores each time — per second of this process's CPU time (one thread:
    what the machine's other work does not change), and per wall-clock second."""
    m = build_mapping("sparse-mlp-1", "loihi2", partition="min+2", placement="random")
    rng = np.random.default_rng(0)
    n = 20 if quick else 400
    placements = [rng.permutation(m.hardware.n_cores)[: m.graph.n_parts] for _ in range(n)]
    swaps = rng.integers(0, m.hardware.n_cores, size=(n, 2))
    out = {}
    for name in predictors:
        ev = evaluator(m, predictor=name)
        ev.set_placement(Placement(placements[0]))  # (compiled, warm)
        t0, c0 = time.perf_counter(), time.process_time()
        for cores in placements:
            ev.set_placement(Placement(cores))
        t1, c1 = time.perf_counter(), time.process_time()
        for a, b in swaps:
            ev.swap_cores(int(a), int(b))
        t2, c2 = time.perf_counter(), time.process_time()
        out[name] = {
            "placements_per_s": n / (c1 - c0), "swaps_per_s": n / (c2 - c1),
            "placements_per_wall_s": n / (t1 - t0), "swaps_per_wall_s": n / (t2 - t1),
        }  # fmt: skip
    out["load_average"] = os.getloadavg()[0]  # the machine's other work meanwhile
    return out


def heuristics_000(fit: dict) -> dict:
    """Each predictor's order of Loihi 2 mapping ES §5.2's four heuristics (sparse-mlp-1,
    min+2, one chip) against the hardware's measured latencies: a held-out check."""
    names = list(MEASURED_US)
    measured = [MEASURED_US[p] for p in names]
    out = {"measured_us": dict(MEASURED_US), "predictors": {}}
    base = build_mapping("sparse-mlp-1", "loihi2", partition="min+2", placement=names[0])
    for name in predictors:
        ev = _evaluator(base, name, fit)
        us = {}
        for p in names:
            placed = build_mapping(base.network, base.hardware,
                                   partition=base.mapping.partition, placement=p)  # fmt: skip
            ev.set_placement(placed.mapping.placement)
            us[p] = ev.latency_us
        order = sorted(names, key=us.get)
        out["predictors"][name] = {
            "us": us, "order": order,
            "kendall_tau": _stat(stats.kendalltau, [us[p] for p in names], measured),
        }  # fmt: skip
    out["measured_order"] = sorted(names, key=MEASURED_US.get)
    return out


def main() -> None:
    ap = parser(__doc__)
    ap.add_argument("--seeds", type=int, default=3, help="spike samples per simulated step")
    ap.add_argument("--jobs", type=int, default=1, help="pairs simulated side by side")
    args = ap.parse_args()
    seeds = list(range(2 if args.quick else args.seeds))
    size = "quick" if args.quick else "full"
    specs = QUICK_PAIRS if args.quick else PAIRS
    jobs = [(spec, size, seeds) for spec in specs]
    if args.jobs > 1:  # pairs side by side, each in a process of its own, longest first
        order = sorted(range(len(jobs)), key=lambda i: -COST.get(specs[i].label, 0))
        with ProcessPoolExecutor(args.jobs, mp_context=mp.get_context("fork")) as pool:
            done = dict(zip(order, pool.map(_run_pair, [jobs[i] for i in order]), strict=True))
        pairs = [done[i] for i in range(len(jobs))]
    else:
        pairs = [_run_pair(job) for job in jobs]
    fit = held_out(pairs)
    out = {
        "seeds": seeds,
        "pairs": pairs,
        "fitted": {"features": list(FEATURES), "fit": fit},
        "issue_table": issue_table(args.quick, fit),
        "speed": speed(args.quick),
        "heuristics_000": heuristics_000(fit),
    }
    finish(args, "fidelity_sim", out)


if __name__ == "__main__":
    main()
