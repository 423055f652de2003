"""The docs tables benchmarks/simulate.py feeds with its results: each one's layout, from
the keys that script writes (``benchmarks/report.py`` renders them)."""

from __future__ import annotations

from docs_tables import Table, num, si, whole


def simulate_speed(d: dict) -> Table:
    rows = []
    for r in d["synthetic"]:
        m, b = r["meshscope"], r.get("booksim2")
        rows.append(
            [
                f"{r['mesh'].replace('x', '×')} at {r['rate']}",
                whole(m["cycles_per_s"]),
                si(m["hop_flits_per_s"]),
                whole(b["cycles_per_s"]) if b else "—",
                f"{num(r['speedup_median'], 1)}×" if b else "—",
                (f"{num(r['speedup_paired']['min'], 1)}–{num(r['speedup_paired']['max'], 1)}×")
                if b
                else "—",
            ]
        )
    header = [
        "uniform traffic",
        "MeshScope cycles/s (median)",
        "router-to-router flits/s",
        "BookSim2 cycles/s (median)",
        "ratio of medians",
        "paired runs, range",
    ]
    return Table(header, rows)


def simulate_processes(d: dict) -> Table:
    rows = []
    for r in d.get("processes", []):
        m, b = r["meshscope"], r.get("booksim2")
        rows.append(
            [
                f"{r['mesh'].replace('x', '×')} at {r['rate']}",
                whole(r["measured_cycles"]),
                num(m["process_wall_s"], 1),
                whole(m["process_cycles_per_s"]),
                whole(m["warm_cycles_per_s"]),
                num(b["wall_s"], 1) if b else "—",
                whole(b["cycles_per_s"]) if b else "—",
                f"{num(r['process_speedup'], 1)}×" if b else "—",
                f"{num(r['warm_speedup'], 1)}×" if b else "—",
                f"{whole(m['peak_rss_mb'])} / {whole(b['peak_rss_mb'])} MB" if b else "—",
            ]
        )
    header = [
        "uniform traffic",
        "measured cycles",
        "MeshScope process s",
        "its cycles/s",
        "warm cycles/s",
        "BookSim2 process s",
        "its cycles/s",
        "whole process ×",
        "warm ×",
        "peak memory (MeshScope / BookSim2)",
    ]
    return Table(header, rows)


def simulate_features(d: dict) -> Table:
    rows = [[r["feature"], "unicast" if r["unicast_kernel"] else "full",
             whole(r["cycles_per_s"]), f"{num(r['of_unicast'], 2)}×"]
            for r in d["features"]["synthetic"]]  # fmt: skip
    r = d["features"]["synthetic"][0]
    what = f"{r['mesh'].replace('x', '×')} at {r['rate']}, {whole(r['cycles'])} cycles: asked of it"
    return Table([what, "router", "cycles/s (warm)", "of the unicast kernel's"], rows)


def simulate_features_step(d: dict) -> Table:
    s = d["features"]["step"]
    rows = [[r["run"], "unicast" if r["unicast_kernel"] else "full", whole(r["cycles"]),
             num(r["wall_s"], 3), whole(r["cycles_per_s"]), f"{num(r['of_unicast_wall'], 2)}×"]
            for r in s["rows"]]  # fmt: skip
    what = f"{s['network']} on {s['hardware']}, a {s['mode']} step, cores busy: as"
    header = [what, "router", "step cycles", "seconds (warm)", "cycles/s", "time of the first's"]
    return Table(header, rows)


def simulate_startup(d: dict) -> Table:
    s = d["startup"]
    rows = [["a whole `meshscope simulate` process, 8×8 at 0.2, 1,000 cycles",
             num(s["process_wall_s"], 2)],
            ["an empty Python process (`python -c pass`)", num(s["python_s"], 2)]]  # fmt: skip
    rows += [[f"in a process: {name}", num(v, 2)] for name, v in s["stages_s"].items()]
    return Table(["where the time goes", "seconds (median)"], rows)


def simulate_memory(d: dict) -> Table:
    rows = [
        [
            f"{m['mesh'].replace('x', '×')} at {m['rate']}",
            whole(m["measured_cycles"]),
            whole(m["cycles"]),
            f"{whole(m['peak_rss_mb'])} MB",
            num(m["process_wall_s"], 1),
            whole(m["cycles_per_s"]),
            num(m["load_avg_1min"], 1),
        ]
        for m in d.get("memory", [])
    ]
    header = [
        "uniform traffic",
        "measured cycles",
        "cycles simulated",
        "peak memory (whole process)",
        "process s",
        "run's cycles/s (kernels' loading included)",
        "load average",
    ]
    return Table(header, rows)


def simulate_steps(d: dict) -> Table:
    rows = [
        [
            f"{s['network']} on {s['hardware']}",
            s["mode"],
            whole(s["messages"]),
            whole(s["step_cycles"]),
            num(s["wall_s"]),
        ]
        for s in d["steps"]
    ]
    return Table(
        [
            "one time step (min+2, spread-col)",
            "mode",
            "messages",
            "cycles",
            "seconds (median, warm)",
        ],
        rows,
    )


FEEDS = {  # table (its markers in the docs) -> the results file it reads, and its layout
    "performance.simulate": ("simulate", simulate_speed),
    "performance.steps": ("simulate", simulate_steps),
    "performance.memory": ("simulate", simulate_memory),
    "performance.processes": ("simulate", simulate_processes),
    "performance.startup": ("simulate", simulate_startup),
    "performance.features": ("simulate", simulate_features),
    "performance.features-step": ("simulate", simulate_features_step),
}
