"""The docs tables benchmarks/evaluate.py feeds with its results: each one's layout, from
the keys that script writes (``benchmarks/report.py`` renders them)."""

from __future__ import annotations

from docs_tables import Table, whole


def evaluate_speed(d: dict) -> Table:
    return Table(
        ["sparse-mlp-1 on loihi2", "per second"],
        [
            [
                "a new partition (statistics of every synapse, a first placement)",
                whole(d["partition_per_s"]),
            ],
            ["a new placement of a partition (every route)", whole(d["placement_per_s"])],
            ["a swap of two cores (incremental)", whole(d["swap_per_s"])],
        ],
    )


FEEDS = {  # table (its markers in the docs) -> the results file it reads, and its layout
    "performance.evaluate": ("evaluate", evaluate_speed),
}
