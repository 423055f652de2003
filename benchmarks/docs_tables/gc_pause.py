"""The docs tables benchmarks/gc_pause.py feeds with its results: each one's layout, from
the keys that script writes (``benchmarks/report.py`` renders them)."""

from __future__ import annotations

from docs_tables import Table, num, whole


def gc_pause(d: dict) -> Table:
    return Table(
        [f"{d['network']} on {d['hardware']}", "objects tracked", "full collection, median"],
        [
            [
                "before serve's heap freeze",
                whole(d["before"]["tracked_objects"]),
                f"{num(d['before']['collect_ms_median'], 1)} ms",
            ],
            [
                "after it",
                whole(d["after_settle_heap"]["tracked_objects"]),
                f"{num(d['after_settle_heap']['collect_ms_median'], 1)} ms",
            ],
        ],
    )


FEEDS = {  # table (its markers in the docs) -> the results file it reads, and its layout
    "performance.gc": ("gc_pause", gc_pause),
}
