"""The docs tables benchmarks/ablation.py feeds with its results: each one's layout, from
the keys that script writes (``benchmarks/report.py`` renders them)."""

from __future__ import annotations

from docs_tables import Table, pct, span


def ablation(d: dict) -> Table:
    rows = []
    for name, label in (
        ("baseline", "nested ES"),
        ("no_reorder", "without reordering"),
        ("no_elitism", "without elitism (partitioning)"),
    ):
        r = d[name]
        rows.append(
            [label, span(r["best_latency_us"]), pct(100 * r["partition_generations_stalled"], 0)]
        )
    header = [
        f"sparse-mlp-1, {d['budget']} evaluations, {d['seeds']} seeds",
        "best latency µs/step",
        "partition generations without improvement",
    ]
    return Table(header, rows)


FEEDS = {  # table (its markers in the docs) -> the results file it reads, and its layout
    "search.ablation": ("ablation", ablation),
}
