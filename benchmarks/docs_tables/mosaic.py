"""The docs tables benchmarks/mosaic.py feeds with its results: each one's layout, from
the keys that script writes (``benchmarks/report.py`` renders them)."""

from __future__ import annotations

from docs_tables import Table, pct, whole


def mosaic_proxy(d: dict) -> Table:
    p = d["profiles"]
    cv = p["max_cv"]
    rows = [
        [label, pct(100 * cv[key])]
        for key, label in (
            ("routing_entries", "routing entries in all"),
            ("rt_size", "largest RT crossbar (rows)"),
            ("nt_size", "largest NT crossbar (rows)"),
        )
    ]
    return Table(
        [
            f"over {len(p['profiles'])} profiles × {p['networks_per_profile']} networks",
            "largest coefficient of variation",
        ],
        rows,
    )


def mosaic_placement(d: dict) -> Table:
    rows = [
        [
            name,
            whole(r["routing_entries"]),
            str(r["max_rt_rows"]),
            "yes" if r["mappable"] else "no",
            str(r["farthest_hops"]),
        ]
        for name, r in d["placement"].items()
    ]
    return Table(
        [
            "one network, placed",
            "routing entries",
            "fullest RT (rows)",
            "fits",
            "farthest hop distance",
        ],
        rows,
    )


FEEDS = {  # table (its markers in the docs) -> the results file it reads, and its layout
    "mosaic.proxy": ("mosaic", mosaic_proxy),
    "mosaic.placement": ("mosaic", mosaic_placement),
}
