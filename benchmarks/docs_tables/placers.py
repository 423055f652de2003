"""The docs tables benchmarks/placers.py feeds with its results: each one's layout, from
the keys that script writes (``benchmarks/report.py`` renders them)."""

from __future__ import annotations

from docs_tables import Table, num


def placers(d: dict) -> Table:
    rows = [
        [
            name,
            f"{r['elp']:.3g}",
            num(r["average_latency_ns"], 1),
            f"{r['congestion']:.4g}",
            num(r["connection_locality"], 1),
            num(r["elp_vs_hilbert"]),
            num(r["place_s"]),
        ]
        for name, r in d["placers"].items()
    ]
    header = [
        f"placer ({d['partitions']} partitions)",
        "ELP",
        "average latency ns",
        "congestion",
        "connection locality",
        "ELP × Hilbert's",
        "seconds",
    ]
    return Table(header, rows)


FEEDS = {  # table (its markers in the docs) -> the results file it reads, and its layout
    "partitioning.placers": ("placers", placers),
}
