"""The docs tables benchmarks/partition.py feeds with its results: each one's layout, from
the keys that script writes (``benchmarks/report.py`` renders them)."""

from __future__ import annotations

from docs_tables import Table, failure, num, whole


def partitioners(d: dict) -> Table:
    rows = []
    for r in d["rows"]:
        if "error" in r:
            rows.append([r["partitioner"], r["network"], failure(r["error"]), "", "", "", ""])
            continue
        rows.append(
            [
                r["partitioner"],
                r["network"],
                whole(r["partitions"]),
                whole(r["connectivity"]),
                num(r.get("vs_sequential_ordered")),
                num(r["seconds"], 1),
                "yes" if r["limits_ok"] else "no",
            ]
        )
    header = [
        "partitioner",
        "network",
        "partitions",
        "connectivity (eq. 7)",
        "× sequential-ordered",
        "seconds",
        "every limit holds",
    ]
    return Table(header, rows)


FEEDS = {  # table (its markers in the docs) -> the results file it reads, and its layout
    "partitioning.partitioners": ("partition", partitioners),
}
