"""The docs tables benchmarks/checkpoint.py feeds with its results: each one's layout, from
the keys that script writes (``benchmarks/report.py`` renders them)."""

from __future__ import annotations

from docs_tables import Table, num, pct


def checkpoint(d: dict) -> Table:
    rows = [["plain", num(d["plain_s"]), "—"]]
    for key, label in (
        ("checkpoint", "--checkpoint"),
        ("checkpoint_and_history", "--checkpoint and --history"),
    ):
        rows.append([label, num(d[f"{key}_s"]), pct(d[f"{key}_overhead_pct"])])
    return Table([f"evolve, {d['budget']:,} evaluations", "seconds (median)", "overhead"], rows)


FEEDS = {  # table (its markers in the docs) -> the results file it reads, and its layout
    "search.checkpoint": ("checkpoint", checkpoint),
}
