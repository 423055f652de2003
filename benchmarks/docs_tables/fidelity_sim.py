"""The docs tables benchmarks/fidelity_sim.py feeds with its results: each one's layout, from
the keys that script writes (``benchmarks/report.py`` renders them)."""

from __future__ import annotations

from docs_tables import Table, num, signed, whole


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


FEEDS = {  # table (its markers in the docs) -> the results file it reads, and its layout
    "fidelity.simulated": ("fidelity_sim", fidelity_simulated),
    "fidelity.fit": ("fidelity_sim", fidelity_fit),
    "fidelity.issue": ("fidelity_sim", fidelity_issue),
    "fidelity.speed": ("fidelity_sim", fidelity_speed),
    "fidelity.heuristics000": ("fidelity_sim", fidelity_heuristics),
}
