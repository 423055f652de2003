"""The docs tables benchmarks/mosaic_demo.py feeds with its results: each one's layout, from
the keys that script writes (``benchmarks/report.py`` renders them)."""

from __future__ import annotations

import statistics

from docs_tables import Table, num, whole


def mosaic_training(d: dict) -> Table:
    rows = []
    for s in d["settings"]:
        acc = s["accuracy"]
        rows.append(
            [
                s["method"],
                str(s["setting"]),
                num(s["accuracy_mean"], 3),
                f"{num(min(acc), 3)}–{num(max(acc), 3)}",
                whole(statistics.fmean(s["connections"])),
                whole(s["routing_entries_mean"]),
                "yes" if all(s["mappable"]) else ("no" if not any(s["mappable"]) else "some"),
            ]
        )
    header = [
        "method",
        "setting",
        f"accuracy, mean of {len(d['seeds'])} seeds",
        "range",
        "connections",
        "routing entries",
        "fits",
    ]
    return Table(header, rows)


FEEDS = {  # table (its markers in the docs) -> the results file it reads, and its layout
    "mosaic.training": ("mosaic_demo", mosaic_training),
}
