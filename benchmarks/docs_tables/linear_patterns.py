"""The docs tables benchmarks/linear_patterns.py feeds with its results: each one's layout, from
the keys that script writes (``benchmarks/report.py`` renders them)."""

from __future__ import annotations

from docs_tables import Table, num


def linear_patterns(d: dict) -> Table:
    rows = [
        [
            str(r["M"]),
            num(r["square"], 1),
            num(r["square_formula"], 1),
            "—" if r["x"] is None else num(r["x"], 0),
            num(r["x_formula"], 0),
            num(r["diagonal"], 0),
            num(r["diagonal_formula"], 0),
        ]
        for r in d["rows"]
    ]
    header = [
        "M pairs",
        "square, measured",
        "M^1.5/4",
        "X, measured",
        "M − 2",
        "diagonal, measured",
        "M − 1",
    ]
    return Table(header, rows)


FEEDS = {  # table (its markers in the docs) -> the results file it reads, and its layout
    "model.linear-patterns": ("linear_patterns", linear_patterns),
}
