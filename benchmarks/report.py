"""Render every figure table of the README and ``docs/`` from ``benchmarks/results/*.json``.

A table lives in a Markdown file between two markers::

    <!-- table: NAME -->
    … rendered here, never typed by hand …
    <!-- /table -->

``NAME`` is one of ``TABLES`` below: which results file it reads and how it lays the figures
out. Under each table a line says where its figures come from: the results file, the command
that measured them, the date and the machine. Prose cites figures only through these tables.

    .venv/bin/python benchmarks/report.py           # rewrite the tables in place
    .venv/bin/python benchmarks/report.py --check   # exit 1 if any table differs from its JSON

The test suite runs ``--check`` (``tests/benchmarks/test_report.py``), as it runs every other
benchmark script with ``--quick``: a table cannot drift from the figures it shows.
"""

from __future__ import annotations

import argparse
import difflib
import json
import re
import statistics
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
DOCUMENTS = ("README.md", "docs/*.md")
MARKER = re.compile(r"(<!-- table: ([\w.-]+) -->\n)(.*?)(<!-- /table -->)", re.S)


@dataclass(frozen=True)
class Table:
    header: list[str]
    rows: list[list[str]]

    def markdown(self) -> str:
        lines = ["| " + " | ".join(self.header) + " |", "|" + "---|" * len(self.header)]
        lines += ["| " + " | ".join(row) + " |" for row in self.rows]
        return "\n".join(lines)


# ------------------------------------------------------------------ formatting
def num(value, digits: int = 2) -> str:
    """A figure with ``digits`` decimals and thousands separators; '—' for none."""
    if value is None:
        return "—"
    return f"{value:,.{digits}f}"


def whole(value) -> str:
    return "—" if value is None else f"{round(value):,}"


def pct(value, digits: int = 1) -> str:
    return "—" if value is None else f"{value:.{digits}f} %"


def signed(value) -> str:
    return "n/a" if value is None else f"{value:+.2f}"


def span(s: dict, digits: int = 2, key: str = "mean") -> str:
    """'15.47 (14.75–15.70)': a summary's centre and range."""
    return f"{num(s[key], digits)} ({num(s['min'], digits)}–{num(s['max'], digits)})"


def si(value, digits: int = 3) -> str:
    """'9.4 M', '561.9 k': a rate with an SI prefix."""
    for factor, prefix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= factor:
            return f"{value / factor:.{digits - 2}f} {prefix}"
    return f"{value:.{digits - 2}f}"


def short(value) -> str:
    """'14k', '6.9M': a count as a paper prints it."""
    for factor, prefix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= factor:
            return f"{value / factor:g}{prefix}"
    return f"{value:g}"


# ------------------------------------------------------------------ the tables
PLACEMENTS = ("packed-row", "spread-row", "packed-col", "spread-col")


def model_placements(d: dict) -> Table:
    rows = []
    for name, e in d["model_evaluations"].items():
        label = "random (seed 0)" if name == "random" else name
        rows.append(
            [
                label,
                num(e["latency_us"]),
                e["bottleneck"],
                num(e["energy_uj"]),
                num(e["power_w"], 3),
                whole(e["max_link_messages"]),
            ]
        )
    header = [
        "placement",
        "latency µs/step",
        "bound by",
        "energy µJ/step",
        "power W",
        "heaviest link msgs/step",
    ]
    return Table(header, rows)


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


def heuristics_predictors(d: dict) -> Table:
    names = [p for p in PLACEMENTS if p in d["us"]["hardware"]]
    rows = []
    for col, values in d["us"].items():
        bound = d["bound"].get(col, {})
        cells = []
        for p in names:
            b = bound.get(p)
            note = f" ({b})" if b and b != "link" else ""
            cells.append(num(values[p]) + note)
        s = d["against_hardware"].get(col)
        stats = (
            ["1", "1", "—"]
            if col == "hardware"
            else [
                signed(s["pearson_r"]),
                signed(s["kendall_tau"]),
                "n/a" if s.get("mape") is None else f"{s['mape']:.0f} %",
            ]
        )
        label = col
        if col == "hardware":
            label = "hardware (Loihi 2 mapping ES §5.2)"
        elif not col.startswith(("model", "simulator", "what-if")):
            label = f"simulator, {col}"  # a mechanism of the simulator switched off
        rows.append([label, *cells, *stats])
    hops = d["hops_per_message"]
    s = d["against_hardware"]["hops per message (order only)"]
    rows.append(
        [
            "hops per message (order only)",
            *[num(hops[p]) for p in names],
            signed(s["pearson_r"]),
            signed(s["kendall_tau"]),
            "—",
        ]
    )
    return Table(["predictor", *names, "Pearson r", "Kendall τ", "MAPE"], rows)


def validation(d: dict) -> Table:
    rows = []
    for col in ("model", "simulator"):
        s = d["against_hardware"][col]
        rows.append(
            [
                col,
                str(s["n"]),
                signed(s["pearson_r"]),
                signed(s["kendall_tau"]),
                f"{s['mape']:.0f} %",
            ]
        )
    return Table(["predictor", "runs", "Pearson r", "Kendall τ", "MAPE"], rows)


def fidelity_simulated(d: dict) -> Table:
    """Per pair and predictor: how it ranks and scales the simulated step (issue 55); the
    fitted predictor as a fit that never saw the pair judges it (held out), and how far each
    is from the issue's bar (τ ≥ 0.85, MAPE ≤ 10 %)."""
    rows = []
    for p in d["pairs"]:
        self_tau = (p.get("simulator_self") or {}).get("kendall_tau")
        for k, (name, f) in enumerate(p["predictors"].items()):
            rows.append(
                [
                    f"{p['pair']} ({p['mappings']})" if k == 0 else "",
                    signed(self_tau) if k == 0 else "",
                    name + (" (held out)" if f.get("held_out") else ""),
                    signed(f["kendall_tau"]),
                    signed(f["spearman"]),
                    f"{f['mape']:.0f} %",
                    f"{round(5 * f['top5_overlap'])}/5",
                    ("yes" if f["best_within_2pct"] else "no") + f" ({f['best_gap_pct']:.1f} %)",
                    _bar(f),
                ]
            )
    return Table(
        ["pair (mappings)", "simulator vs itself τ", "predictor", "Kendall τ", "Spearman",
         "MAPE", "top-5 overlap", "its best within 2 % (gap)", "to the bar"],
        rows,
    )  # fmt: skip


def _bar(f: dict) -> str:
    """How far a predictor's figures are from τ ≥ 0.85 and MAPE ≤ 10 % ("met" when both)."""
    tau, mape = f["kendall_tau"], f["mape"]
    short = []
    if tau is None or tau < 0.85:
        short.append("τ n/a" if tau is None else f"τ {tau - 0.85:+.2f}")
    if mape > 10:
        short.append(f"MAPE +{mape - 10:.0f} pts")
    return ", ".join(short) or "met"


def fidelity_fit(d: dict) -> Table:
    """The fitted predictor's coefficients: each pair's held-out fit (every other pair's
    mappings) and the fit of every pair's, which the predictor ships."""
    feats = d["fitted"]["features"]

    def row(label, fit):
        return [label, f"{fit['intercept']:+.3f}", *(f"{fit['weights'][n]:+.3f}" for n in feats)]

    rows = [row(f"all but {p['pair']}", p["predictors"]["fitted"]["fit"]) for p in d["pairs"]]
    rows.append(row("every pair (shipped)", d["fitted"]["fit"]))
    return Table(["fitted on", "c", *(f"exponent of {n}" for n in feats)], rows)


def fidelity_issue(d: dict) -> Table:
    """The issue's table, 4 heuristics + 24 random placements against seed 0's step."""
    rows = []
    for r in d["issue_table"]:
        for k, (name, f) in enumerate(r["predictors"].items()):
            rows.append(
                [
                    f"{r['network']} on {r['hardware']}, {r['partition']}" if k == 0 else "",
                    name,
                    signed(f["kendall_tau"]),
                    signed(f["spearman"]),
                    f"{f['mape']:.0f} %",
                ]
            )
    return Table(["network on hardware", "predictor", "Kendall τ", "Spearman", "MAPE"], rows)


def fidelity_speed(d: dict) -> Table:
    rows = [
        [name, whole(v["placements_per_s"]), whole(v["swaps_per_s"]),
         whole(v["placements_per_wall_s"]), whole(v["swaps_per_wall_s"])]
        for name, v in d["speed"].items()
        if isinstance(v, dict)
    ]  # fmt: skip
    return Table(
        ["predictor (sparse-mlp-1, loihi2)", "placements / CPU s", "swaps / CPU s",
         f"placements / s (load {d['speed']['load_average']:.1f})", "swaps / s"],
        rows,
    )  # fmt: skip


def fidelity_heuristics(d: dict) -> Table:
    h = d["heuristics_000"]
    names = list(h["measured_us"])
    rows = [["measured (Loihi 2 mapping ES §5.2)", *(num(h["measured_us"][n]) for n in names),
             " < ".join(h["measured_order"]), "—"]]  # fmt: skip
    for name, p in h["predictors"].items():
        rows.append(
            [name, *(num(p["us"][n]) for n in names), " < ".join(p["order"]),
             signed(p["kendall_tau"])]
        )  # fmt: skip
    return Table(["µs/step", *names, "order", "Kendall τ vs measured"], rows)


def calibration(d: dict) -> Table:
    r = d["calibration_recovery"]
    return Table(
        [
            "microbenchmark runs",
            "fits (noise seeds × with/without labels)",
            "worst constant's error, median",
            "worst constant's error, max",
        ],
        [
            [
                str(r["runs"]),
                str(r["fits"]),
                pct(100 * r["median_worst_error"]),
                pct(100 * r["max_worst_error"]),
            ]
        ],
    )


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


def evolve_single(d: dict) -> Table:
    rows = []
    for budget, r in d["sparse_mlp_1_loihi2"].items():
        rows.append(
            [
                f"{int(budget):,} evaluations",
                span(r["best_latency_us"]),
                span(r["improvement_vs_packed_row_pct"], 1),
                span(r["improvement_pct"], 1),
                span(r["evaluations_per_s"], 0),
            ]
        )
    header = [
        "budget (5 seeds)",
        "best latency µs/step, mean (min–max)",
        "gain over packed-row, %",
        "gain over the best starting point, %",
        "evaluations per s",
    ]
    return Table(header, rows)


def evolve_heuristics(d: dict) -> Table:
    runs = next(iter(d["sparse_mlp_1_loihi2"].values()))["runs"]
    names = list(runs[0]["heuristics"])
    rows = []
    for name in names:
        values = [r["heuristics"][name] for r in runs]
        same = max(values) - min(values) < 1e-9
        rows.append([name, num(values[0]) if same else f"{num(min(values))}–{num(max(values))}"])
    return Table(["starting point (min+2)", "latency µs/step (over the seeds)"], rows)


def evolve_multichip(d: dict) -> Table:
    m = d["sparse_mlp_2_loihi2_x8"]
    rows = []
    for n, v in m["heuristics"].items():  # a list over the seeds: random differs by seed
        if max(v) - min(v) < 1e-9:
            rows.append([f"heuristic: {n}", num(v[0]), "—"])
        else:
            seeds = m["seeds"]
            rows.append([f"heuristic: {n}, seed {seeds[0]} (seeds {seeds[0]}–{seeds[-1]}: min–max)",
                         f"{num(v[0])} ({num(min(v))}–{num(max(v))})", "—"])  # fmt: skip
    labels = {
        "global": "global search",
        "chipwise": "chipwise search",
        "chipwise_per_chip": "chipwise, one segment per chip",
    }
    for key, label in labels.items():
        if key not in m:  # recorded before the per-chip row was
            continue
        chips = m[key]["chips_used"]
        rows.append(
            [
                f"{label} ({m['budget']:,} evaluations)",
                span(m[key]["best_latency_us"]),
                f"{min(chips)}–{max(chips)}",
            ]
        )
    return Table(["sparse-mlp-2 on loihi2-x8", "latency µs/step", "chips used"], rows)


def ablation(d: dict) -> Table:
    rows = []
    for name, label in (
        ("baseline", "nested ES"),
        ("no_reorder", "without reordering"),
        ("no_elitism", "without elitism (partitioning)"),
    ):
        r = d[name]
        rows.append(
            [label, span(r["best_latency_us"]), pct(100 * r["partition_generations_stalled"], 0)]
        )
    header = [
        f"sparse-mlp-1, {d['budget']} evaluations, {d['seeds']} seeds",
        "best latency µs/step",
        "partition generations without improvement",
    ]
    return Table(header, rows)


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


def search_algorithms(d: dict) -> Table:
    """Every registered algorithm of the multi-objective search at one budget."""
    rows = []
    for name, c in d["one_objective"].items():
        best = f"{num(c['best_latency_us'])} ({num(c['best_heuristic_latency_us'])})"
        rows.append([f"{name}, latency", best, pct(c["latency_gain_pct"]), "—", "—",
                     num(c["evaluations_per_s"], 0)])  # fmt: skip
    for name, c in d["two_objectives"].items():
        rows.append([
            f"{name}, latency and energy", "—", "—",
            f"{num(c['hv_front'], 3)} ({num(c['hv_heuristics'], 3)})", whole(c["front_size"]),
            num(c["evaluations_per_s"], 0),
        ])  # fmt: skip
    header = [
        f"{d['network']} on {d['hardware']}, {d['budget']} evaluations, median of {d['seeds']} "
        "seeds",
        "best latency µs (best heuristic)",
        "latency gain",
        "hypervolume (the heuristics')",
        "front size",
        "evaluations / s",
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


def checkpoint(d: dict) -> Table:
    rows = [["plain", num(d["plain_s"]), "—"]]
    for key, label in (
        ("checkpoint", "--checkpoint"),
        ("checkpoint_and_history", "--checkpoint and --history"),
    ):
        rows.append([label, num(d[f"{key}_s"]), pct(d[f"{key}_overhead_pct"])])
    return Table([f"evolve, {d['budget']:,} evaluations", "seconds (median)", "overhead"], rows)


def failure(error: str) -> str:
    """A run's error, short enough for a table cell."""
    need = re.search(r"needs (\d+) cores; (\S+) has (\d+)", error)
    if need:
        return f"does not fit: needs {int(need[1]):,} cores, {need[2]} has {int(need[3]):,}"
    text = error.split(": ", 1)[-1]
    return text if len(text) <= 60 else text[:57] + "…"


def partitioners(d: dict) -> Table:
    rows = []
    for r in d["rows"]:
        if "error" in r:
            rows.append([r["partitioner"], r["network"], failure(r["error"]), "", "", "", ""])
            continue
        rows.append(
            [
                r["partitioner"],
                r["network"],
                whole(r["partitions"]),
                whole(r["connectivity"]),
                num(r.get("vs_sequential_ordered")),
                num(r["seconds"], 1),
                "yes" if r["limits_ok"] else "no",
            ]
        )
    header = [
        "partitioner",
        "network",
        "partitions",
        "connectivity (eq. 7)",
        "× sequential-ordered",
        "seconds",
        "every limit holds",
    ]
    return Table(header, rows)


def scale(d: dict) -> Table:
    sizes = sorted({int(n) for runs in d["runs"].values() for n in runs})
    rows = []
    for name, runs in d["runs"].items():
        cells = []
        for n in sizes:
            r = runs.get(str(n), runs.get(n))
            if r is None:
                cells.append("—")
            elif "error" in r:
                cells.append(failure(r["error"]))
            else:
                broken = "" if r.get("limits_ok", True) else " (breaks a core limit)"
                cells.append(
                    f"{whole(r['partitions'])} / {si(r['connectivity'])} / "
                    f"{num(r['seconds'], 1)} s / {whole(r['peak_mb'])} MB{broken}"
                )
        b = d["exponent"].get(name)
        rows.append([name, *cells, "—" if b is None else num(b)])
    header = ["partitioner", *[f"n = {n:,}" for n in sizes], "time ∝ n^b"]
    return Table(header, rows)


def placers(d: dict) -> Table:
    rows = [
        [
            name,
            f"{r['elp']:.3g}",
            num(r["average_latency_ns"], 1),
            f"{r['congestion']:.4g}",
            num(r["connection_locality"], 1),
            num(r["elp_vs_hilbert"]),
            num(r["place_s"]),
        ]
        for name, r in d["placers"].items()
    ]
    header = [
        f"placer ({d['partitions']} partitions)",
        "ELP",
        "average latency ns",
        "congestion",
        "connection locality",
        "ELP × Hilbert's",
        "seconds",
    ]
    return Table(header, rows)


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


def structured(d: dict) -> Table:
    rows = []
    for split in ("tiles", "rows", "columns", "channels"):
        if isinstance(d.get(split), dict):  # (``channels`` is also the conv's channel count)
            r = d[split]
            rows.append(
                [
                    split,
                    whole(r["cores"]),
                    num(r["partition_s"]),
                    num(r["partition_graph_s"]),
                    num(r["latency_us"]),
                    num(r["synaptic_reuse"], 1),
                ]
            )
    header = [
        f"{d['channels']}-channel 3×3 conv on {d['side']}×{d['side']} "
        f"({d['synapses']:,} synapses), split",
        "cores",
        "partition s",
        "partition graph s",
        "latency µs/step",
        "synaptic reuse",
    ]
    return Table(header, rows)


def beside(value, paper, ratio) -> str:
    """'13,846 (14k, ×0.989)': a count, and a paper's beside it when there is one."""
    return whole(value) if paper is None else f"{whole(value)} ({short(paper)}, ×{ratio:.3f})"


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


def evaluate_speed(d: dict) -> Table:
    return Table(
        ["sparse-mlp-1 on loihi2", "per second"],
        [
            [
                "a new partition (statistics of every synapse, a first placement)",
                whole(d["partition_per_s"]),
            ],
            ["a new placement of a partition (every route)", whole(d["placement_per_s"])],
            ["a swap of two cores (incremental)", whole(d["swap_per_s"])],
        ],
    )


def page_speed(d: dict) -> Table:
    rows = []
    for case, c in d["cases"].items():
        rows.append(
            [
                case,
                f"{num(c['load_ms']['median'] / 1000)} s",
                f"{whole(c['drag_ms']['median'])} ms",
                f"{whole(c['simulated_card_ms']['median'])} ms",
                f"{whole(c['simulate_first_frame_ms']['median'])} ms",
            ]
        )
    header = [
        f"median of {d['repeats']} visits",
        "page load to the drawn heatmap",
        "drag → latency card",
        "drag → simulated step card",
        "Simulate → first frame",
    ]
    return Table(header, rows)


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


def soak(d: dict) -> Table:
    rows = [[str(s["sessions"]), num(s["rss_mb"], 1)] for s in d["samples"]]
    return Table(["sessions so far", "server memory MB"], rows)


def soak_strangers(d: dict) -> Table:
    """The many-strangers case of soak.py: pages loading a large network at once."""
    r = d["strangers"]
    rows = [
        ["pages loading at once", f"{r['strangers']} × {r['network']} on {r['hardware']}"],
        ["server memory budget (--max-memory)", f"{num(r['max_memory_mb'], 0)} MB"],
        ["loaded / refused / unfinished",
         f"{r['loaded']} / {r['refused']} / {r['unfinished']} in {num(r['wall_s'], 0)} s"],
        ["server memory: at start, peak, after every page closed",
         f"{num(r['rss_mb_at_start'], 0)} / {num(r['rss_mb_peak'], 0)} / "
         f"{num(r['rss_mb_after_close'], 0)} MB"],
        ["another page's drag → latency card, before the loads",
         f"{num(r['drag_ms_quiet_median'], 0)} ms"],
        ["… during them: median, most, lost (no change in 60 s)",
         f"{num(r['drag_ms_median'], 0)} ms, {num(r['drag_ms_max'], 0)} ms, "
         f"{r['drags_lost']} of {r['drags'] + r['drags_lost']}"],
    ]  # fmt: skip
    return Table(["many strangers", ""], rows)


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


def paper_rows(d: dict) -> Table:
    """A paper's experiments: each claim, the paper's figure and MeshScope's, the verdict (with
    the reason when it differs) and the command that reruns it."""
    rows = []
    for r in d["rows"]:
        verdict = f"**{r['verdict']}**" + (f": {r['reason']}" if r["reason"] else "")
        said = f"{r['section']}: “{r['quote']}”" if r.get("quote") else "—"
        cells = [r["claim"], said, r["paper"], r["meshscope"], verdict, f"`{r['command']}`"]
        rows.append([c.replace("|", "\\|") for c in cells])  # a pipe would end the cell
    return Table(["claim", "the paper says", "paper", "MeshScope", "verdict", "rerun with"], rows)


def hypergraph_runs(d: dict) -> Table:
    """The SNN-hypergraphs comparison run by run: each network and partitioner, its partitions,
    connectivity, best ELP (and the placement that gave it), time and peak memory."""
    rows = []
    for r in d["runs"]:
        name = [f"`{r['network']}`", r["partitioner"]]
        if "error" in r:
            rows.append([*name, "—", "—", "—", "—", "—", "—", r["error"]])
            continue
        placed = r["placements"].items()
        placer, best = min(placed, key=lambda kv: kv[1]["elp"]) if placed else ("", None)
        broken = r.get("limits_broken")
        rows.append([
            *name, whole(r["partitions"]), whole(r["connectivity"]),
            f"{best['elp']:.3g} ({placer})" if best else "— (not placed)",
            " / ".join(f"{r['fill'][k]:.0%}" for k in ("neurons", "axons", "synapses"))
            if "fill" in r else "—",
            num(r["seconds"], 1), whole(r["peak_mb"]),
            ("cores over the limit of " + ", ".join(f"{k} {v}" for k, v in broken.items()))
            if broken else r.get("not_placed", ""),
        ])  # fmt: skip
    header = ["network", "partitioner", "partitions", "connectivity", "best ELP (placement)",
              "cores' fill: neurons / axons / synapses", "partition s", "peak MB",
              "note"]  # fmt: skip
    return Table(header, rows)


def hypergraph_seeds(d: dict) -> Table:
    """Hierarchical, the one partitioner with a seed, over seeds 0… where they ran: its
    partitions, connectivity and best ELP, mean ± std (min–max)."""
    seeds: dict[str, list[dict]] = {}
    for r in d["runs"]:
        if r["partitioner"] == "hierarchical" and "error" not in r:
            seeds.setdefault(r["network"], []).append(r)  # seed 0
    for r in d.get("seed_runs", []):
        if "error" not in r and r["network"] in seeds:
            seeds[r["network"]].append(r)

    def spread(values, digits=0, fmt=None) -> str:
        m = statistics.fmean(values)
        sd = statistics.stdev(values) if len(values) > 1 else 0.0
        f = fmt or (lambda v: f"{v:,.{digits}f}")
        return f"{f(m)} ± {f(sd)} ({f(min(values))}–{f(max(values))})"

    rows = []
    for net, runs in seeds.items():
        if len(runs) < 2:
            continue
        elps = [min(p["elp"] for p in r["placements"].values()) for r in runs]
        rows.append([
            f"`{net}`", str(len(runs)),
            f"{min(r['partitions'] for r in runs)}–{max(r['partitions'] for r in runs)}",
            spread([r["connectivity"] for r in runs]),
            spread(elps, fmt=lambda v: f"{v:.3g}"),
        ])  # fmt: skip
    header = ["network", "seeds", "partitions", "connectivity, mean ± std (min–max)",
              "best ELP, mean ± std (min–max)"]  # fmt: skip
    return Table(header, rows)


def hierarchical_pairs(d: dict) -> Table:
    """Hierarchical's coarsening per network: its rounds, the first a core limit refused a
    pair in, the coarsest nodes and how they end, against overlap's connectivity."""
    rows = []
    for r in d["runs"]:
        rounds = r["rounds"]
        first = next((i for i, x in enumerate(rounds) if any(x["refused"].values())), None)
        refusing = "none" if first is None else (
            f"{first + 1} of {len(rounds)} ("
            + ", ".join(k for k, v in rounds[first]["refused"].items() if v) + ")"
        )  # fmt: skip
        c, h, o = r["coarsest"], r["hierarchical"], r["overlap"]
        rows.append([
            f"`{r['network']}`", r["hardware"], refusing,
            f"{whole(c['nodes'])} ({num(c['synapse_share_median'])})",
            " / ".join(f"{x:.0%}" for x in (rounds[-1]["mixed_after"], h["mixed"], o["mixed"])),
            f"{whole(c['packed'])} → {whole(h['partitions'])} / {whole(o['partitions'])}",
            f"{whole(r['before_refinement'])} → {whole(h['connectivity'])} / "
            f"{whole(o['connectivity'])}",
            f"{h['connectivity'] / o['connectivity']:.2f}×",
        ])  # fmt: skip
    header = ["network", "hardware", "first refusal: round (limits)",
              "coarsest nodes (synapses over the limit, median)",
              "mixing layers: coarsest nodes / hierarchical / overlap",
              "partitions: packed → hierarchical / overlap",
              "connectivity: packed → hierarchical / overlap",
              "hierarchical / overlap"]  # fmt: skip
    return Table(header, rows)


def hierarchical_layers(d: dict) -> Table:
    """Per network and layer: the pixel spread of hierarchical's coarsest nodes, of its final
    partitions and of overlap's (pixels covered over the fewest that hold the neurons), and the
    connectivity each partition owes to the layer's spikes."""
    rows = []
    for r in d["runs"]:
        h, o = r["hierarchical"], r["overlap"]
        coarsest = r["rounds"][-1]["spread_after"]
        for layer, ch in h["by_layer"].items():
            oc = o["by_layer"][layer]
            if layer not in coarsest and not ch and not oc:
                continue  # no pixels, no messages
            spread = (
                " / ".join(num(x[layer]) for x in (coarsest, h["spread"], o["spread"]))
                if layer in coarsest else "—"
            )  # fmt: skip
            rows.append([f"`{r['network']}`", layer, spread, whole(ch), whole(oc),
                         f"{ch - oc:+,.0f}"])  # fmt: skip
    header = ["network", "layer", "pixel spread: coarsest nodes / hierarchical / overlap",
              "connectivity from it: hierarchical", "overlap", "difference"]  # fmt: skip
    return Table(header, rows)


def hierarchical_neighbourhood(d: dict) -> Table:
    """Per network, how placeable hierarchical's and overlap's partitions are: the streams
    of a partition (partners it sends to or hears from, each direction counted) and the
    share of messages in each partition's four heaviest streams."""
    rows = [
        [f"`{r['network']}`", name, whole(r[name]["partitions"]),
         num(r[name]["neighbourhood"]["partners_median"], 1),
         f"{r[name]['neighbourhood']['near_share']:.0%}"]
        for r in d["runs"] for name in ("hierarchical", "overlap")
    ]  # fmt: skip
    header = ["network", "partitioner", "partitions", "streams a partition (median)",
              "messages in its 4 heaviest streams"]  # fmt: skip
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


TABLES: dict[str, tuple[str, Callable[[dict], Table]]] = {
    "reproduction.loihi2-mapping-es": ("papers/loihi2_mapping_es", paper_rows),
    "reproduction.loihi2-runtime-model": ("papers/loihi2_runtime_model", paper_rows),
    "reproduction.senmap": ("papers/senmap", paper_rows),
    "reproduction.mosaic": ("papers/mosaic", paper_rows),
    "reproduction.snn-hypergraphs": ("papers/snn_hypergraphs", paper_rows),
    "reproduction.snn-hypergraphs-runs": ("papers/snn_hypergraphs", hypergraph_runs),
    "reproduction.snn-hypergraphs-seeds": ("papers/snn_hypergraphs", hypergraph_seeds),
    "reproduction.hierarchical-pairs": ("papers/hierarchical_pairs", hierarchical_pairs),
    "reproduction.hierarchical-layers": ("papers/hierarchical_pairs", hierarchical_layers),
    "reproduction.hierarchical-neighbourhood": (
        "papers/hierarchical_pairs",
        hierarchical_neighbourhood,
    ),
    "model.placements": ("heuristics", model_placements),
    "model.linear-patterns": ("linear_patterns", linear_patterns),
    "simulator.booksim": ("booksim_compare", booksim_patterns),
    "simulator.booksim-o1turn": ("booksim_o1turn", booksim_patterns),
    "simulator.heuristics": ("heuristics", heuristics_predictors),
    "fidelity.validation": ("heuristics", validation),
    "fidelity.simulated": ("fidelity_sim", fidelity_simulated),
    "fidelity.fit": ("fidelity_sim", fidelity_fit),
    "fidelity.issue": ("fidelity_sim", fidelity_issue),
    "fidelity.speed": ("fidelity_sim", fidelity_speed),
    "fidelity.heuristics000": ("fidelity_sim", fidelity_heuristics),
    "fidelity.calibration": ("microbench", calibration),
    "search.evolve": ("evolve", evolve_single),
    "search.evolve-start": ("evolve", evolve_heuristics),
    "search.multichip": ("evolve", evolve_multichip),
    "search.ablation": ("ablation", ablation),
    "search.pareto": ("pareto", pareto_hypervolume),
    "search.dask": ("pareto", pareto_dask),
    "search.algorithms": ("algorithms", search_algorithms),
    "search.checkpoint": ("checkpoint", checkpoint),
    "partitioning.partitioners": ("partition", partitioners),
    "partitioning.scale": ("scale", scale),
    "partitioning.placers": ("placers", placers),
    "mosaic.proxy": ("mosaic", mosaic_proxy),
    "mosaic.placement": ("mosaic", mosaic_placement),
    "mosaic.training": ("mosaic_demo", mosaic_training),
    "networks.structured": ("structured", structured),
    "networks.table3": ("networks", table_iii),
    "networks.maps": ("networks", network_maps),
    "performance.simulate": ("simulate", simulate_speed),
    "performance.steps": ("simulate", simulate_steps),
    "performance.memory": ("simulate", simulate_memory),
    "performance.processes": ("simulate", simulate_processes),
    "performance.startup": ("simulate", simulate_startup),
    "performance.features": ("simulate", simulate_features),
    "performance.features-step": ("simulate", simulate_features_step),
    "performance.evaluate": ("evaluate", evaluate_speed),
    "performance.page": ("page", page_speed),
    "performance.gc": ("gc_pause", gc_pause),
    "performance.soak": ("soak", soak),
    "performance.soak-strangers": ("soak", soak_strangers),
    "readme.speed": ("simulate", readme_speed),
}


# ------------------------------------------------------------------ rendering
def load(name: str) -> dict:
    return json.loads((RESULTS / f"{name}.json").read_text())


def _sections(kept: dict) -> list[str]:
    """What a kept earlier run measured: its ``sections`` (simulate.py, evolve.py,
    networks.py) or its ``case`` (soak.py)."""
    return kept.get("sections") or [kept["case"]]


def source(d: dict, section: str | None = None) -> str:
    """Where a results file's figures come from: its command, date and machine (``section``:
    only where that section's figures come from, when a partial run kept them)."""
    m = d["meta"]
    for k in m.get("kept", ()) if section else ():
        if section in _sections(k):
            return f"`{k['command']}`, {k['date']}, {m['machine']}"
    if section:
        return f"`{m['command']}`, {m['date']}, {m['machine']}"
    kept = "".join(  # sections a partial run (simulate.py --only) kept from earlier ones
        f"; {', '.join(_sections(k))}: `{k['command']}`, {k['date']}" for k in m.get("kept", ())
    )
    runs = d.get("runs") if isinstance(d.get("runs"), list) else []
    commands = {r.get("command") or (r.get("recorded_in") or {}).get("command") for r in runs}
    if len(commands - {None}) > 1:  # runs a --resume kept from earlier commands
        kept += (
            f"; its runs come from {len(commands - {None})} commands, each run's in the "
            "JSON (`command`, or `recorded_in` for the runs recorded before they kept theirs)"
        )
    return f"`{m['command']}`, {m['date']}, {m['machine']}{kept}"


def render(name: str) -> str:
    """The Markdown between a table's markers: the table and the line saying its source."""
    if name not in TABLES:
        raise KeyError(f"no table {name!r} (known: {', '.join(TABLES)})")
    results, build = TABLES[name]
    data = load(results)
    note = (
        ""
        if name == "readme.speed"
        else f"\n\n<sub>benchmarks/results/{results}.json: {source(data)}</sub>"
    )
    return build(data).markdown() + note + "\n"


def documents() -> list[Path]:
    return sorted(p for pattern in DOCUMENTS for p in ROOT.glob(pattern))


def rendered(text: str) -> str:
    """``text`` with every table between markers rendered anew."""
    return MARKER.sub(lambda m: m.group(1) + render(m.group(2)) + m.group(4), text)


def differences() -> list[str]:
    """A unified diff per document whose tables differ from their results ('' lines none)."""
    out = []
    for path in documents():
        text = path.read_text()
        new = rendered(text)
        if new != text:
            rel = str(path.relative_to(ROOT))
            out.append(
                "".join(
                    difflib.unified_diff(
                        text.splitlines(True), new.splitlines(True), rel, rel + " (rendered)"
                    )
                )
            )
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="exit 1 if a table differs")
    args = ap.parse_args()
    if args.check:
        diffs = differences()
        sys.stdout.write("\n".join(diffs))
        return 1 if diffs else 0
    for path in documents():
        text = path.read_text()
        new = rendered(text)
        if new != text:
            path.write_text(new)
            print(f"rendered {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
