"""The docs tables benchmarks/networks.py feeds with its results: each one's layout, from
the keys that script writes (``benchmarks/report.py`` renders them)."""

from __future__ import annotations

from docs_tables import Table, beside, num, pct, whole


def table_iii(d: dict) -> Table:
    """The ANN-derived workloads against SNN hypergraphs Table III."""
    rows = []
    for r in d["rows"]:
        p = r.get("paper")

        rows.append(
            [
                f"`{r['network']}`",
                r["input"],
                whole(r["populations"]),
                beside(r["nodes"], p and p["nodes"], r.get("nodes_ratio")),
                beside(r["connections"], p and p["connections"], r.get("connections_ratio")),
                num(r["cardinality"], 1) + ("" if p is None else f" ({num(p['cardinality'], 1)})"),
                pct(100 * r["structured"] / r["connections"], 0),
                num(r["build_s"], 1),
            ]
        )
    tol = d["tolerance"]
    header = [
        "network",
        "input",
        "populations",
        f"nodes (Table III, ratio; ±{tol['nodes']:.0%})",
        f"connections (Table III, ratio; ±{tol['connections']:.0%})",
        "mean h-edge cardinality, pins (Table III)",
        "structured",
        "build s",
    ]
    return Table(header, rows)


def network_maps(d: dict) -> Table:
    """The real networks mapped end to end: phases, peak memory, against the targets."""
    t = d["targets"]
    rows = []
    for r in d["maps"]:
        if "error" in r:
            rows.append(
                [f"`{r['network']}`", r["partitioner"], r["placer"], r["error"], "", "", ""]
            )
            continue
        s = r["seconds"]
        rows.append([
            f"`{r['network']}`", r["partitioner"], r["placer"], whole(r["partitions"]),
            f"{num(r['wall_s'], 0)} (partition {num(s['partition'], 0)}, graph "
            f"{num(s['partition_graph'], 0)}, place {num(s['place'], 1)}, evaluate "
            f"{num(s['evaluate'], 0)})",
            num(r["peak_gib"], 1),
            "met" if r["wall_s"] <= t["seconds"] and r["peak_gib"] <= t["peak_gib"] else "missed",
        ])  # fmt: skip
    target = f"≤ {t['seconds'] // 60} min, ≤ {t['peak_gib']} GiB"
    header = ["network", "partitioner", "placer", "partitions", "seconds (phases)", "peak GiB"]
    return Table([*header, target], rows)


FEEDS = {  # table (its markers in the docs) -> the results file it reads, and its layout
    "networks.table3": ("networks", table_iii),
    "networks.maps": ("networks", network_maps),
}
