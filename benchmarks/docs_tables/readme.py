"""The README's speed table: a row each from the results of benchmarks/simulate.py, page.py
and evaluate.py (``benchmarks/report.py`` renders it)."""

from __future__ import annotations

from docs_tables import Table, load, num, source, whole


def readme_speed(_: dict) -> Table:
    """One table of what a user waits for, each row from its own results file."""
    sim, page, ev = (load(n) for n in ("simulate", "page", "evaluate"))
    rows = []
    for r in sim["synthetic"]:
        if r["mesh"] == "8x8" and r["rate"] == 0.2:
            b = f" ({num(r['speedup_median'], 1)}× BookSim2)" if r.get("booksim2") else ""
            rows.append(
                [
                    "simulated cycles per second, 8×8 mesh at 0.2 flits/node/cycle",
                    whole(r["meshscope"]["cycles_per_s"]) + b,
                    source(sim, "synthetic"),
                ]
            )
    for r in sim.get("processes", []):
        if r["mesh"] == "8x8" and r["rate"] == 0.2:
            b = (
                f" ({num(r['process_speedup'], 1)}× faster than BookSim2's)"
                if "booksim2" in r
                else ""
            )
            rows.append(
                [
                    "a whole `meshscope simulate` process, 8×8 at 0.2, "
                    f"{whole(r['measured_cycles'])} cycles",
                    f"{num(r['meshscope']['process_wall_s'], 1)} s{b}",
                    source(sim, "processes"),
                ]
            )
    step = sim["steps"][0]
    rows.append(
        [
            f"one simulated time step of {step['network']} on {step['hardware']}",
            f"{num(step['wall_s'])} s",
            source(sim, "steps"),
        ]
    )
    rows.append(
        [
            "model evaluations of new placements per second (sparse-mlp-1)",
            whole(ev["placement_per_s"]),
            source(ev),
        ]
    )
    case, c = next(iter(page["cases"].items()))
    rows.append(
        [
            f"explorer: page load to the drawn heatmap, {case}",
            f"{num(c['load_ms']['median'] / 1000)} s",
            source(page),
        ]
    )
    rows.append(
        [
            f"explorer: drag of a core → latency card, {case}",
            f"{whole(c['drag_ms']['median'])} ms",
            source(page),
        ]
    )
    return Table(["what", "how fast", "measured by"], rows)


FEEDS = {  # table (its markers in the docs) -> the results file it reads, and its layout
    "readme.speed": ("simulate", readme_speed),
}
