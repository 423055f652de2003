"""``microbench``, ``calibrate`` and ``validate``: the model and the simulator against
measured step times (Loihi 2 runtime model §III–V).

    meshscope microbench --hardware loihi2 --out runs.csv [--suite NAME] [--mappings DIR]
    # … run every row on the hardware, fill in measured_us …
    meshscope calibrate --measurements runs.csv --hardware loihi2 --out my-loihi2.toml
    meshscope validate --measurements runs.csv --hardware my-loihi2.toml --figure fit.png
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
import sys
from pathlib import Path

from engine.cli.common import (
    FIGURE,
    HARDWARE_HELP,
    bar,
    check_outputs,
    inputs_of,
    json_option,
    work,
)
from engine.defaults import DEFAULT_HARDWARE
from engine.errors import SpecError

__all__ = ["add_commands"]

STAT_KEYS = ("pearson_r", "kendall_tau", "mape")
TEMPLATE_COLUMNS = (
    "name", "mapping", "network", "hardware", "partition", "placement", "seed", "saturates",
    "measured_us", "steps", "note", "dendops", "synops", "synmem_reads", "link_bits",
    "model_us", "simulator_us",
)  # fmt: skip


def _progress(args, total: int):
    b = bar(args, total, unit="run")
    if b is None:
        return None, lambda: None

    def tick(done: int) -> None:
        b.update(done - b.n)

    return tick, b.close


def _stats_line(label: str, s: dict | None) -> str:
    from engine.fidelity.validate import fmt as f

    if s is None:
        return f"  {label:<10} not run (--no-simulator)"

    line = (
        f"  {label:<10} Pearson r {f(s['pearson_r']):>6}   Kendall τ {f(s['kendall_tau']):>6}   "
        f"MAPE {s['mape']:6.1f} %   lower bound on {100 * s['lower_bound_share']:.0f} % of runs"
    )
    return line + (f"  ({s['why']})" if s.get("why") else "")


def _run_files(runs) -> list[tuple[str, str]]:
    """What the measured runs read: their mapping, network, hardware and partition files."""
    return [
        (f"{key} of {run.where}", getattr(run, key))
        for run in runs
        for key in ("mapping", "network", "hardware", "partition")
    ]


# ------------------------------------------------------------------ microbench
def cmd_microbench(args) -> int:
    from engine.fidelity.predict import predict
    from engine.fidelity.suites import suite_runs

    check_outputs(("CSV file", args.out, (".csv",)), inputs=inputs_of(args))
    if args.mappings and not args.out:
        raise SpecError("--mappings writes the files the CSV's mapping column names: add --out")
    if args.mappings and not Path(args.mappings).is_dir():
        raise SpecError(f"--mappings {args.mappings}: no such folder (create it first)")
    runs = suite_runs(args.suite, args.hardware)
    tick, done = _progress(args, len(runs))
    with work(args):
        try:
            preds = predict(runs, simulator=not args.no_simulator, progress=tick)
        finally:
            done()
    rows = []
    for run, p in zip(runs, preds, strict=True):
        n_do, n_so, n_smr, bits, _ = p.counts.tolist()
        rows.append(
            {
                **run.to_dict(), "mapping": "", "measured_us": "", "steps": "", "note": "",
                "dendops": n_do, "synops": n_so, "synmem_reads": n_smr, "link_bits": bits,
                "model_us": p.model_us, "simulator_us": p.simulator_us,
                "bound": p.bound,
            }
        )  # fmt: skip
    if args.mappings:
        from engine.pipeline import write_mapping_file

        base = Path(args.out).resolve().parent
        for i, (row, p) in enumerate(zip(rows, preds, strict=True)):
            slug = re.sub(r"[^A-Za-z0-9]+", "-", row["name"]).strip("-").lower()
            path = Path(args.mappings).resolve() / f"{i:03d}-{slug}.json"
            write_mapping_file(path, p.mapped)
            row["mapping"] = os.path.relpath(path, base)
    hw_path = Path(args.hardware)
    if args.out and hw_path.suffix == ".toml" and hw_path.exists():  # as the CSV will read it
        written = os.path.relpath(hw_path.resolve(), Path(args.out).resolve().parent)
        for row in rows:
            row["hardware"] = written
    if args.out:
        from engine.io.files import write_text

        out = io.StringIO()
        writer = csv.DictWriter(out, TEMPLATE_COLUMNS, extrasaction="ignore", lineterminator="\n")
        writer.writeheader()
        for row in rows:
            writer.writerow({k: ("" if v is None else v) for k, v in row.items()})
        write_text(args.out, out.getvalue(), what="CSV file")
    if args.json:
        print(json.dumps({"suite": args.suite, "hardware": args.hardware, "runs": rows}, indent=2))
        return 0
    width = max(len(r["name"]) for r in rows)
    print(f"{len(rows)} runs of {args.suite} on {args.hardware} (predicted step times):")
    for r in rows:
        sim = "" if r["simulator_us"] is None else f"  simulator {r['simulator_us']:9.2f} us"
        tag = f"  saturates {r['saturates']}" if r["saturates"] else ""
        print(f"  {r['name']:<{width}}  model {r['model_us']:9.2f} us ({r['bound']}){sim}{tag}")
    if args.out:
        print(f"wrote {args.out}: run each row on the hardware, fill in measured_us (mean µs per "
              "step), then meshscope calibrate / validate --measurements it")  # fmt: skip
    return 0


# ------------------------------------------------------------------ validate
def cmd_validate(args) -> int:
    from engine.fidelity.measurements import read_measurements
    from engine.fidelity.validate import validate

    check_outputs(("figure", args.figure, FIGURE), inputs=inputs_of(args))
    runs, skipped = read_measurements(args.measurements)
    check_outputs(("figure", args.figure), inputs=_run_files(runs))
    tick, done = _progress(args, len(runs))
    with work(args):
        try:
            result = validate(
                runs, hardware=args.hardware, simulator=not args.no_simulator, skipped=skipped,
                progress=tick,
            )  # fmt: skip
        finally:
            done()
    if args.figure:
        from engine.pipeline import resolve_hardware

        result.write_figure(args.figure, resolve_hardware(args.hardware) if args.hardware else None)
    if args.json:
        print(json.dumps(result.to_dict(), indent=2))
        return 0
    print(
        f"{len(runs)} measured runs from {args.measurements}"
        + (f" ({skipped} not yet measured, skipped)" if skipped else "")
        + (f", with the constants of {args.hardware}" if args.hardware else "")
    )
    width = max(len(r.name) for r in runs)
    for r, p in zip(runs, result.predictions, strict=True):
        sim = "" if p.simulator_us is None else f"  simulator {p.simulator_us:9.2f}"
        print(f"  {r.name:<{width}}  measured {r.measured_us:9.2f}  model {p.model_us:9.2f} "
              f"({p.bound}){sim}  us")  # fmt: skip
    print(_stats_line("model", result.model))
    print(_stats_line("simulator", result.simulator))
    if args.figure:
        print(f"wrote {args.figure}")
    return 0


# ------------------------------------------------------------------ calibrate
def cmd_calibrate(args) -> int:
    import numpy as np

    from engine.fidelity.calibrate import calibrate, fit_clock
    from engine.fidelity.measurements import read_measurements
    from engine.fidelity.predict import predict
    from engine.fidelity.stats import agreement
    from engine.pipeline import resolve_hardware
    from engine.provenance import write_preset

    check_outputs(("hardware file", args.out, (".toml",)), inputs=inputs_of(args))
    base = resolve_hardware(args.hardware)
    runs, skipped = read_measurements(args.measurements)
    check_outputs(("hardware file", args.out), inputs=_run_files(runs))
    what = Path(args.measurements).name
    tick, done = _progress(args, len(runs))
    with work(args):
        try:
            before = predict(runs, hardware=base, simulator=False, progress=tick)
        finally:
            done()
        x = np.array([p.counts for p in before])
        t = np.array([r.measured_us for r in runs])
        name = Path(args.out).stem
        where = [f"{r.where} ({r.name})" for r in runs]
        cal = calibrate(x, t, base, what=what, labels=[r.saturates for r in runs], name=name,
                        runs=where)  # fmt: skip
        hw, clock = cal.hardware, None
        if not args.no_simulator:
            hw, clock = fit_clock(
                [p.mapped for p in before], t, hw, what=what,
                previous_bandwidth=base.links.router_bits_per_us, runs=where,
            )  # fmt: skip
        after = predict(runs, hardware=hw, simulator=not args.no_simulator)
    write_preset(
        args.out, hw,
        header=f"calibrated by meshscope calibrate from {args.measurements} "
        f"({len(runs)} runs) on {base.name}",
    )  # fmt: skip
    fits = cal.terms + ([clock] if clock else [])
    stats = {
        "model": agreement(t, [p.model_us for p in after]),
        "simulator": None if args.no_simulator else agreement(t, [p.simulator_us for p in after]),
    }
    out = {
        "out": args.out,
        "runs": len(runs),
        "skipped": skipped,
        "constants": {f.constant: f.to_dict() for f in fits},
        **stats,
        "before": {"model": agreement(t, [p.model_us for p in before])},
        "warnings": cal.warnings,
        "outliers": [{"row": runs[i].row, "name": runs[i].name} for i in cal.outliers],
    }
    for w in cal.warnings:  # on stderr, so --json stays one object on stdout
        names = ", ".join(runs[i].name for i in cal.outliers[:5])
        extra = f" ({names}{', …' if len(cal.outliers) > 5 else ''})" if "off after" in w else ""
        sys.stderr.write(f"meshscope: warning: {w}{extra}\n")
    if args.json:
        print(json.dumps(out, indent=2))
        return 0
    print(f"calibrated {base.name} from {len(runs)} runs of {args.measurements}"
          + (f" ({skipped} not yet measured, skipped)" if skipped else ""))  # fmt: skip
    for f in fits:
        if f.points:
            bound = "link-bound runs (simulated)" if f.term == "clock" else f"{f.term}-bound run"
            spread = f", ±{f.spread_pct:.1f} %" if f.spread_pct is not None else ""
            plural = "s" if f.points > 1 and f.term != "clock" else ""
            print(f"  {f.constant:<26} {f.previous:>10.4g} -> {f.value:<10.4g} "
                  f"from {f.points} {bound}{plural}{spread}")  # fmt: skip
        elif f.value != f.previous:
            how = (
                "scaled with the fitted bandwidth (no run is link-bound in the simulator)"
                if f.term == "clock"
                else "moved by the fit, though it bounds none of the runs"
            )
            print(f"  {f.constant:<26} {f.previous:>10.4g} -> {f.value:<10.4g} {how}")
        else:
            why = "the simulator finds no run link-bound" if f.term == "clock" else (
                f"no run is bound by {f.term}")  # fmt: skip
            print(f"  {f.constant:<26} {f.previous:>10.4g}    kept: {why}")
    print(_stats_line("model", stats["model"]))
    print(_stats_line("simulator", stats["simulator"]))
    print(f"wrote {args.out}: meshscope list --hardware {args.out} --constants shows its sources")
    return 0


COMMANDS = {  # name -> one line of help (the top-level help needs nothing more)
    "microbench": "the runs to measure on hardware: the runtime model's microbenchmarks and "
    "validation sets, with their counts and predicted step times",
    "validate": "measured step times against the model and the simulator: Pearson r, Kendall "
    "τ, MAPE",
    "calibrate": "fit a preset's constants (T_DO, T_SO, T_SMR, B, T_BS, the simulator's clock) "
    "to measured step times",
}


def add_commands(sub) -> None:
    """``microbench``, ``calibrate`` and ``validate``."""
    from engine.fidelity.suites import SUITES

    mb = sub.add_parser("microbench", help=COMMANDS["microbench"])
    mb.add_argument("--hardware", default=DEFAULT_HARDWARE, help=HARDWARE_HELP)
    mb.add_argument(
        "--suite", choices=[*SUITES, "all"], default="microbench",
        help="microbench: Fig. 2 a-e, scaled (calibrates every term); linear-grid: §V-A's "
        "dense layers; tiled-identity: §V-B's placements (default microbench)",
    )  # fmt: skip
    mb.add_argument("--out", metavar="FILE.csv", help="write the runs as a measurements template")
    mb.add_argument("--mappings", metavar="DIR", help="also write each run's mapping file into DIR")
    mb.add_argument("--no-simulator", action="store_true", help="predict with the model only")
    json_option(mb)
    mb.set_defaults(func=cmd_microbench)

    for name, func in (("validate", cmd_validate), ("calibrate", cmd_calibrate)):
        p = sub.add_parser(name, help=COMMANDS[name])
        p.add_argument(
            "--measurements", required=True, metavar="FILE.csv",
            help="one row per run: mapping (a mapping file) or network, hardware, partition, "
            "placement; then measured_us (mean µs per step), optionally steps, note",
        )  # fmt: skip
        p.add_argument("--no-simulator", action="store_true", help="the model only")
        json_option(p)
        p.set_defaults(func=func)
        if name == "validate":
            p.add_argument(
                "--hardware", metavar="SPEC",
                help="predict with this hardware's constants (e.g. a calibrated preset) instead "
                "of those of the hardware each run names",
            )  # fmt: skip
            p.add_argument(
                "--figure",
                metavar="FILE",
                help="write measured vs predicted and the roofline (.png/.svg/.pdf)",
            )
        else:
            p.add_argument(
                "--hardware", default=DEFAULT_HARDWARE,
                help="the preset to calibrate: its constants are the starting point, and those "
                f"no run can fit are kept ({HARDWARE_HELP})",
            )  # fmt: skip
            p.add_argument(
                "--out",
                required=True,
                metavar="FILE.toml",
                help="write the calibrated preset, every constant with its source",
            )
