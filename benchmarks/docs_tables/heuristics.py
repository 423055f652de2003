"""The docs tables benchmarks/heuristics.py feeds with its results: each one's layout, from
the keys that script writes (``benchmarks/report.py`` renders them)."""

from __future__ import annotations

from docs_tables import PLACEMENTS, Table, num, signed, whole


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


FEEDS = {  # table (its markers in the docs) -> the results file it reads, and its layout
    "model.placements": ("heuristics", model_placements),
    "simulator.heuristics": ("heuristics", heuristics_predictors),
    "fidelity.validation": ("heuristics", validation),
}
