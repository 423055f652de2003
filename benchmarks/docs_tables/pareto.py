"""The docs tables benchmarks/pareto.py feeds with its results: each one's layout, from
the keys that script writes (``benchmarks/report.py`` renders them)."""

from __future__ import annotations

from docs_tables import Table, num, pct


def pareto_hypervolume(d: dict) -> Table:
    rows = []
    for name, c in d["hypervolume"].items():
        gain = c["latency_gain_pct"]
        rows.append(
            [
                f"{name} on {c['hardware']}",
                num(c["hv_heuristics"]["median"], 3),
                num(c["hv_front"]["median"], 3),
                f"{num(c['hv_ratio']['median'], 1)}×",
                f"{num(c['best_latency_us']['median'])} "
                f"({num(c['best_heuristic_latency_us']['median'])})",
                pct(gain["median"]),
            ]
        )
    header = [
        "case",
        "hypervolume of the heuristics",
        "of the front",
        "ratio",
        "best latency µs (best heuristic)",
        "latency gain",
    ]
    return Table(header, rows)


def pareto_dask(d: dict) -> Table:
    dk = d["dask"]
    rows = []
    for kind in ("model", "simulated"):
        k = dk[kind]
        speedups = [v for key, v in k.items() if key.startswith("speedup_") and "vs_serial" in key]
        rows.append(
            [
                f"{kind} ({', '.join(k['objectives'])}), {k['budget']} evaluations",
                num(k["serial_ms_per_evaluation"], 1),
                f"{num(k['dask_1_wall_vs_serial'], 2)}×",
                f"{num(max(speedups), 2)}×" if speedups else "—",
                "yes" if k["identical"] else "NO",
            ]
        )
    header = [
        "objective",
        "ms per evaluation in-process",
        "one Dask worker, wall against in-process",
        f"{dk['workers']} workers, speed-up against in-process",
        "identical results",
    ]
    return Table(header, rows)


FEEDS = {  # table (its markers in the docs) -> the results file it reads, and its layout
    "search.pareto": ("pareto", pareto_hypervolume),
    "search.dask": ("pareto", pareto_dask),
}
