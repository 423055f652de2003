"""The docs tables benchmarks/evolve.py feeds with its results: each one's layout, from
the keys that script writes (``benchmarks/report.py`` renders them)."""

from __future__ import annotations

from docs_tables import Table, num, span


def evolve_single(d: dict) -> Table:
    rows = []
    for budget, r in d["sparse_mlp_1_loihi2"].items():
        rows.append(
            [
                f"{int(budget):,} evaluations",
                span(r["best_latency_us"]),
                span(r["improvement_vs_packed_row_pct"], 1),
                span(r["improvement_pct"], 1),
                span(r["evaluations_per_s"], 0),
            ]
        )
    header = [
        "budget (5 seeds)",
        "best latency µs/step, mean (min–max)",
        "gain over packed-row, %",
        "gain over the best starting point, %",
        "evaluations per s",
    ]
    return Table(header, rows)


def evolve_heuristics(d: dict) -> Table:
    runs = next(iter(d["sparse_mlp_1_loihi2"].values()))["runs"]
    names = list(runs[0]["heuristics"])
    rows = []
    for name in names:
        values = [r["heuristics"][name] for r in runs]
        same = max(values) - min(values) < 1e-9
        rows.append([name, num(values[0]) if same else f"{num(min(values))}–{num(max(values))}"])
    return Table(["starting point (min+2)", "latency µs/step (over the seeds)"], rows)


def evolve_multichip(d: dict) -> Table:
    m = d["sparse_mlp_2_loihi2_x8"]
    rows = []
    for n, v in m["heuristics"].items():  # a list over the seeds: random differs by seed
        if max(v) - min(v) < 1e-9:
            rows.append([f"heuristic: {n}", num(v[0]), "—"])
        else:
            seeds = m["seeds"]
            rows.append([f"heuristic: {n}, seed {seeds[0]} (seeds {seeds[0]}–{seeds[-1]}: min–max)",
                         f"{num(v[0])} ({num(min(v))}–{num(max(v))})", "—"])  # fmt: skip
    labels = {
        "global": "global search",
        "chipwise": "chipwise search",
        "chipwise_per_chip": "chipwise, one segment per chip",
    }
    for key, label in labels.items():
        if key not in m:  # recorded before the per-chip row was
            continue
        chips = m[key]["chips_used"]
        rows.append(
            [
                f"{label} ({m['budget']:,} evaluations)",
                span(m[key]["best_latency_us"]),
                f"{min(chips)}–{max(chips)}",
            ]
        )
    return Table(["sparse-mlp-2 on loihi2-x8", "latency µs/step", "chips used"], rows)


FEEDS = {  # table (its markers in the docs) -> the results file it reads, and its layout
    "search.evolve": ("evolve", evolve_single),
    "search.evolve-start": ("evolve", evolve_heuristics),
    "search.multichip": ("evolve", evolve_multichip),
}
