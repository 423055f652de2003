"""``microbench``, ``calibrate`` and ``validate``: the model and the simulator against
measured step times (Loihi 2 runtime model §III–V).

    meshscope microbench --hardware loihi2 --out runs.csv [--suite NAME] [--mappings DIR]
    # … run every row on the hardware, fill in measured_us …
    meshscope calibrate --measurements runs.csv --hardware loihi2 --out my-loihi2.toml
    meshscope validate --measurements runs.csv --hardware my-loihi2.toml --figure fit.png
"""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path

from engine.cli.common import (
    FIGURE,
    HARDWARE_HELP,
    bar,
    check_outputs,
    hardware_option,
    inputs_of,
    json_option,
    print_json,
    work,
)
from engine.defaults import DEFAULT_HARDWARE
from engine.errors import SpecError

__all__ = ["add_commands"]


@contextlib.contextmanager
def _over_runs(args, total: int):
    """Around work over ``total`` runs (``work``): on a terminal a bar, and the callback to
    give the engine's ``progress`` (the runs done so far); None elsewhere."""
    b = bar(args, total, unit="run")
    try:
        with work(args):
            yield None if b is None else (lambda done: b.update(done - b.n))
    finally:
        if b is not None:
            b.close()


def _stats_line(label: str, s: dict | None) -> str:
    from engine.fidelity.validate import fmt as f

    if s is None:
        return f"  {label:<10} not run (--no-simulator)"

    line = (
        f"  {label:<10} Pearson r {f(s['pearson_r']):>6}   Kendall τ {f(s['kendall_tau']):>6}   "
        f"MAPE {s['mape']:6.1f} %   lower bound on {100 * s['lower_bound_share']:.0f} % of runs"
    )
    return line + (f"  ({s['why']})" if s.get("why") else "")


def _measured(args, what: str, path: str | None, suffixes: tuple[str, ...]):
    """The runs of ``--measurements`` and how many it skipped, once the output ``what`` at
    ``path`` is known to be writable, named for its format and none of the files the
    command or the runs read (their mapping, network, hardware and partition files)."""
    from engine.fidelity.measurements import read_measurements

    check_outputs((what, path, suffixes), inputs=inputs_of(args))
    runs, skipped = read_measurements(args.measurements)
    read = [
        (f"{key} of {run.where}", getattr(run, key))
        for run in runs
        for key in ("mapping", "network", "hardware", "partition")
    ]
    check_outputs((what, path), inputs=read)
    return runs, skipped


# ------------------------------------------------------------------ microbench
def cmd_microbench(args) -> int:
    from engine.fidelity.suites import measurement_template, suite_runs

    check_outputs(("CSV file", args.out, (".csv",)), inputs=inputs_of(args))
    if args.mappings and not args.out:
        raise SpecError("--mappings writes the files the CSV's mapping column names: add --out")
    runs = suite_runs(args.suite, args.hardware)
    with _over_runs(args, len(runs)) as tick:
        rows = measurement_template(
            runs, simulator=not args.no_simulator, progress=tick, out=args.out,
            mappings=args.mappings,
        )  # fmt: skip
    if args.json:
        print_json({"suite": args.suite, "hardware": args.hardware, "runs": rows})
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
    from engine.fidelity.validate import validate

    runs, skipped = _measured(args, "figure", args.figure, FIGURE)
    with _over_runs(args, len(runs)) as tick:
        result = validate(
            runs, hardware=args.hardware, simulator=not args.no_simulator, skipped=skipped,
            progress=tick,
        )  # fmt: skip
    if args.figure:
        result.write_figure(args.figure)
    if args.json:
        print_json(result.to_dict())
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
    from engine.fidelity.calibrate import calibrate_runs
    from engine.hardware import load_hardware
    from engine.hardware.provenance import write_preset

    runs, skipped = _measured(args, "hardware file", args.out, (".toml",))
    base = load_hardware(args.hardware)
    with _over_runs(args, len(runs)) as tick:
        cal = calibrate_runs(
            runs, base, what=Path(args.measurements).name, name=Path(args.out).stem,
            simulator=not args.no_simulator, progress=tick,
        )  # fmt: skip
    write_preset(
        args.out, cal.hardware,
        header=f"calibrated by meshscope calibrate from {args.measurements} "
        f"({len(runs)} runs) on {base.name}",
    )  # fmt: skip
    stats = cal.agreement
    for w in cal.warnings:  # on stderr, so --json stays one object on stdout
        sys.stderr.write(f"meshscope: warning: {w}\n")
    if args.json:
        out = {
            "out": args.out,
            "runs": len(runs),
            "skipped": skipped,
            "constants": {f.constant: f.to_dict() for f in cal.fits},
            "model": stats["model"],
            "simulator": stats["simulator"],
            "before": {"model": stats["before"]},
            "warnings": cal.warnings,
            "outliers": [{"row": runs[i].row, "name": runs[i].name} for i in cal.outliers],
        }
        print_json(out)
        return 0
    print(f"calibrated {base.name} from {len(runs)} runs of {args.measurements}"
          + (f" ({skipped} not yet measured, skipped)" if skipped else ""))  # fmt: skip
    for f in cal.fits:
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
    hardware_option(mb, default=DEFAULT_HARDWARE)
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
            hardware_option(
                p, metavar="SPEC",
                help="predict with this hardware's constants (e.g. a calibrated preset) instead "
                "of those of the hardware each run names",
            )  # fmt: skip
            p.add_argument(
                "--figure",
                metavar="FILE",
                help="write measured vs predicted and the roofline (.png/.svg/.pdf)",
            )
        else:
            hardware_option(
                p, default=DEFAULT_HARDWARE,
                help="the preset to calibrate: its constants are the starting point, and those "
                f"no run can fit are kept ({HARDWARE_HELP})",
            )  # fmt: skip
            p.add_argument(
                "--out",
                required=True,
                metavar="FILE.toml",
                help="write the calibrated preset, every constant with its source",
            )
