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


def evaluate_beside(d: dict) -> Table:
    """The same two figures on the headline case and beside it, other hardware."""
    s = d["setup"]
    head = {**s, "chips": 1, "partitions": s["partitions_at_min"], **d}
    rows = []
    for r in [head, *d.get("beside", [])]:
        rows.append(
            [
                f"{r['network']} on {r['hardware']}",
                f"{r['meshes']}, {'trees' if r['multicast'] else 'unicast'}, {r['chips']}",
                whole(r["placement_per_s"]),
                whole(r["swap_per_s"]),
            ]
        )
    return Table(["case", "meshes, messages, chips", "placements/s", "swaps/s"], rows)


FEEDS = {  # table (its markers in the docs) -> the results file it reads, and its layout
    "performance.evaluate": ("evaluate", evaluate_speed),
    "performance.evaluate-beside": ("evaluate", evaluate_beside),
}
