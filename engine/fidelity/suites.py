"""The runs a user takes to the hardware: microbenchmarks and the paper's validation sets.

* ``microbench``: the Loihi 2 runtime model's Fig. 2 a–e, each scaled as in its Fig. 4
  (the step time approaches the stressed term as N grows), sized to what fits ``hardware``.
  Every run names the term it saturates: ``meshscope calibrate`` fits that term from it.
* ``linear-grid``: §V-A's dense linear layer over 1, 4, 8, 16, 32, 60 origin (and
  destination) cores × 1, 16, 32, 64, 128, 256 neurons per core × 1…8-bit weights,
  origins in the bottom half, destinations in the top; only the configurations that fit.
* ``tiled-identity``: §V-B's traffic-bound layer (8 + 8 cores of 1024 neurons, every
  origin core sending to every destination core) under several placements.

A run is specs only (network, partition, placement, seed); ``predict`` builds them.
``measurement_template`` lists a suite's runs with their predictions as the CSV a user
fills in (``engine.fidelity.measurements``), and writes it with each run's mapping file.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import numpy as np

from engine.errors import CapacityError, OutputFileError, UnknownNameError
from engine.hardware import Hardware
from engine.mapping.resources import CoreUse, memory_bytes, overruns

__all__ = ["SUITES", "SuiteRun", "measurement_template", "suite_runs"]


@dataclass(frozen=True)
class SuiteRun:
    """One workload to run on the hardware, by name."""

    name: str  # a short label: "synop N=512"
    network: str  # a workload spec
    partition: str
    placement: str
    seed: int = 0
    saturates: str = ""  # the model term the run is built to saturate ("" for validation runs)
    hardware: str = ""  # the hardware spec the suite was made for

    def to_dict(self) -> dict:
        return asdict(self)

    @property
    def key(self) -> tuple:
        return (self.network, self.hardware, self.partition, self.placement, self.seed)


def _fits(hw: Hardware, neurons: int, axons: int, synapses: int, bits: int, dense: bool) -> bool:
    """Whether one destination core of the given contents is within ``hw``'s limits."""
    memory = memory_bytes(neurons, synapses, axons, bits, dense, hw.model)
    use = CoreUse(*(np.atleast_1d(v) for v in (neurons, synapses, axons, memory)))
    return not overruns(use, hw)


def _halves(hw: Hardware, m: int) -> bool:
    """Whether ``pairs-halves`` can place M origin and M destination cores on ``hw``."""
    return 1 <= m <= hw.grid_height // 2 * hw.grid_width * hw.cores_per_router


def _microbench(hw: Hardware) -> list[SuiteRun]:
    if hw.n_cores < 2:
        return []
    k = hw.cores_per_router
    pairs = "pairs-halves" if _halves(hw, 1) else "packed-row"  # one origin, one destination
    runs = [SuiteRun("barrier", "mb-barrier", "natural", pairs, saturates="barrier")]
    for n in (512, 1024, 2048, 4095):
        if n <= hw.limits.neurons:
            runs.append(
                SuiteRun(f"dendop N={n}", f"mb-dendop:N={n}", "natural", "packed-row",
                         saturates="dendops")
            )  # fmt: skip
    for n in (128, 256, 512, 1024, 2048, 4095):
        if _fits(hw, n, n, n * n, 1, dense=True):
            runs.append(
                SuiteRun(f"synop N={n}", f"mb-synop:N={n}", "natural", pairs,
                         saturates="synops")
            )  # fmt: skip
    for n in (64, 128, 256, 512, 1024, 2048, 4095):
        if _fits(hw, n, n, n, 8, dense=True):
            runs.append(
                SuiteRun(f"synmem N={n}", f"mb-synmem:N={n}", "natural", pairs,
                         saturates="synmem")
            )  # fmt: skip
    m = min(12, hw.height // 2 * k)  # the paper's 12 pairs, or as many as a chip's column holds
    for n in (512, 1024, 2048, 4095):
        if m and n <= hw.limits.neurons and _fits(hw, n, n, n, 8, dense=False):
            runs.append(
                SuiteRun(f"link M={m} N={n}", f"mb-link:M={m},N={n}", "natural", "pairs-column",
                         saturates="link")
            )  # fmt: skip
    return runs


LINEAR_CORES = (1, 4, 8, 16, 32, 60)
LINEAR_NEURONS = (1, 16, 32, 64, 128, 256)


def _linear_grid(hw: Hardware) -> list[SuiteRun]:
    runs = []
    for m in LINEAR_CORES:
        for n in LINEAR_NEURONS:
            for bits in range(1, 9):
                total = m * n
                if not _halves(hw, m) or total * total > 50_000_000:
                    continue
                if not _fits(hw, n, total, total * n, bits, dense=True):
                    continue
                runs.append(
                    SuiteRun(f"dense M={m} N={n} {bits}b", f"linear-dense:M={m},N={n},bits={bits}",
                             "natural", "pairs-halves")
                )  # fmt: skip
    return runs


def _tiled_identity(hw: Hardware) -> list[SuiteRun]:
    net = "linear-tiled-identity:M=8,N=1024"
    runs = [
        SuiteRun(f"tiled-identity {p}", net, "natural", p)
        for p in ("pairs-square", "pairs-x", "pairs-halves", "packed-row", "spread-col")
    ]
    runs += [SuiteRun(f"tiled-identity random seed {s}", net, "natural", "random", seed=s)
             for s in range(4)]  # fmt: skip
    if hw.n_cores < 16:
        return []
    gw, gh, k = hw.grid_width, hw.grid_height, hw.cores_per_router
    fits = {  # pairs-* put a pair on one router; M = 8: a 4 × 2 rectangle, an X on 4 × 4
        "pairs-square": k >= 2 and gw >= 4 and gh >= 2,
        "pairs-x": k >= 2 and gw >= 4 and gh >= 4,
        "pairs-halves": _halves(hw, 8),
    }
    return [r for r in runs if fits.get(r.placement, True)]


SUITES = {
    "microbench": _microbench,
    "linear-grid": _linear_grid,
    "tiled-identity": _tiled_identity,
}


def suite_runs(name: str, hardware: str) -> list[SuiteRun]:
    """The runs of suite ``name`` (or ``all``) that fit ``hardware`` (a hardware spec)."""
    from engine.hardware import load_hardware

    if name != "all" and name not in SUITES:
        raise UnknownNameError("suite", name, [*SUITES, "all"])
    hw = load_hardware(hardware)
    makers = SUITES.values() if name == "all" else [SUITES[name]]
    runs = [replace(r, hardware=hardware) for make in makers for r in make(hw)]
    if not runs:
        raise CapacityError(
            f"no run of the {name} suite fits {hw.name} ({hw.n_cores} cores, "
            f"{hw.grid_width}x{hw.grid_height} routers of {hw.cores_per_router}): choose larger "
            "hardware, e.g. mesh:4x8x4"
        )
    return runs


def measurement_template(
    runs: list[SuiteRun], *, simulator: bool = True,
    progress: Callable[[int], None] | None = None, out=None, mappings=None,
) -> list[dict]:  # fmt: skip
    """A suite's runs (``suite_runs``) as rows of a measurements template
    (``TEMPLATE_COLUMNS``, ``measured_us`` empty), each with its counts, what the model (and,
    with ``simulator``, the simulator) predicts and the model's bounding term (``bound``).

    With ``out``, the template is written there (a run's hardware preset file is then named
    relative to its folder, as the CSV is read back); with ``mappings`` (an existing folder),
    every run's mapping file too, which its ``mapping`` column names relative to ``out``'s
    folder. ``progress`` is called with the number of runs predicted."""
    from engine.fidelity.measurements import write_template
    from engine.fidelity.predict import predict
    from engine.pipeline import write_mapping_file

    if mappings and not os.path.isdir(mappings):
        raise OutputFileError(f"--mappings {mappings}: no such folder (create it first)")
    predictions = predict(runs, simulator=simulator, progress=progress)
    rows = []
    for run, p in zip(runs, predictions, strict=True):
        n_do, n_so, n_smr, bits, _ = p.counts.tolist()
        rows.append(
            {
                **run.to_dict(), "mapping": "", "measured_us": "", "steps": "", "note": "",
                "dendops": n_do, "synops": n_so, "synmem_reads": n_smr, "link_bits": bits,
                "model_us": p.model_us, "simulator_us": p.simulator_us, "bound": p.bound,
            }
        )  # fmt: skip
    base = Path(out).resolve().parent if out else Path.cwd()
    if mappings:
        for i, (row, p) in enumerate(zip(rows, predictions, strict=True)):
            slug = re.sub(r"[^A-Za-z0-9]+", "-", row["name"]).strip("-").lower()
            path = Path(mappings).resolve() / f"{i:03d}-{slug}.json"
            write_mapping_file(path, p.mapped)
            row["mapping"] = os.path.relpath(path, base)
    if out:
        for row in rows:
            preset = Path(row["hardware"])
            if preset.suffix == ".toml" and preset.exists():  # as the CSV will read it
                row["hardware"] = os.path.relpath(preset.resolve(), base)
        write_template(out, rows)
    return rows
