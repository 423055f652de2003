"""The docs tables benchmarks/algorithms.py feeds with its results: each one's layout, from
the keys that script writes (``benchmarks/report.py`` renders them)."""

from __future__ import annotations

from docs_tables import Table, num, pct, whole


def search_algorithms(d: dict) -> Table:
    """Every registered algorithm of the multi-objective search at one budget."""
    rows = []
    for name, c in d["one_objective"].items():
        best = f"{num(c['best_latency_us'])} ({num(c['best_heuristic_latency_us'])})"
        rows.append([f"{name}, latency", best, pct(c["latency_gain_pct"]), "—", "—",
                     num(c["evaluations_per_s"], 0)])  # fmt: skip
    for name, c in d["two_objectives"].items():
        rows.append([
            f"{name}, latency and energy", "—", "—",
            f"{num(c['hv_front'], 3)} ({num(c['hv_heuristics'], 3)})", whole(c["front_size"]),
            num(c["evaluations_per_s"], 0),
        ])  # fmt: skip
    header = [
        f"{d['network']} on {d['hardware']}, {d['budget']} evaluations, median of {d['seeds']} "
        "seeds",
        "best latency µs (best heuristic)",
        "latency gain",
        "hypervolume (the heuristics')",
        "front size",
        "evaluations / s",
    ]
    return Table(header, rows)


FEEDS = {  # table (its markers in the docs) -> the results file it reads, and its layout
    "search.algorithms": ("algorithms", search_algorithms),
}
