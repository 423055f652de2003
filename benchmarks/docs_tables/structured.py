"""The docs tables benchmarks/structured.py feeds with its results: each one's layout, from
the keys that script writes (``benchmarks/report.py`` renders them)."""

from __future__ import annotations

from docs_tables import Table, num, whole


def structured(d: dict) -> Table:
    rows = []
    for split in ("tiles", "rows", "columns", "channels"):
        if isinstance(d.get(split), dict):  # (``channels`` is also the conv's channel count)
            r = d[split]
            rows.append(
                [
                    split,
                    whole(r["cores"]),
                    num(r["partition_s"]),
                    num(r["partition_graph_s"]),
                    num(r["latency_us"]),
                    num(r["synaptic_reuse"], 1),
                ]
            )
    header = [
        f"{d['channels']}-channel 3×3 conv on {d['side']}×{d['side']} "
        f"({d['synapses']:,} synapses), split",
        "cores",
        "partition s",
        "partition graph s",
        "latency µs/step",
        "synaptic reuse",
    ]
    return Table(header, rows)


FEEDS = {  # table (its markers in the docs) -> the results file it reads, and its layout
    "networks.structured": ("structured", structured),
}
