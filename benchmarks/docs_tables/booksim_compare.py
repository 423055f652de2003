"""The docs tables benchmarks/booksim_compare.py feeds with its results: each one's layout, from
the keys that script writes (``benchmarks/report.py`` renders them)."""

from __future__ import annotations

from docs_tables import Table, num, pct


def booksim_patterns(d: dict) -> Table:
    rows = []
    for pattern, row in d["patterns"].items():
        if "booksim2" not in row:
            continue
        m, b = row["meshscope"], row["booksim2"]
        diff = row.get("max_latency_difference_below_saturation")
        rows.append(
            [
                pattern,
                num(m["zero_load_latency"]),
                num(b["zero_load_latency"]),
                num(m["saturation_rate"]),
                num(b["saturation_rate"]),
                "—" if diff is None else pct(100 * diff),
                num(row["channel_bound"], 3),
            ]
        )
    header = [
        "pattern",
        "zero-load latency, MeshScope",
        "BookSim2",
        "saturation, MeshScope",
        "BookSim2",
        "largest latency difference below saturation",
        "channel-load bound",
    ]
    return Table(header, rows)


FEEDS = {  # table (its markers in the docs) -> the results file it reads, and its layout
    "simulator.booksim": ("booksim_compare", booksim_patterns),
    "simulator.booksim-o1turn": ("booksim_o1turn", booksim_patterns),
}
