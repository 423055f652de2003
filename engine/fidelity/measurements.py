"""Measured step times: the CSV a user brings back from the hardware.

One row per run. Either ``mapping`` (a MeshScope mapping file, relative to the CSV's
folder) or ``network`` with ``hardware``, ``partition`` and ``placement`` (and optionally
``seed``, for random placers); then ``measured_us``, the mean time per step in µs, and
optionally ``steps`` (how many steps the mean is over), ``name``, ``note`` and
``saturates`` (the model term the run was built to saturate, as the microbenchmarks are;
``meshscope calibrate`` starts from it). Other
columns (those ``meshscope microbench`` writes beside: counts, predictions) are ignored.
A row whose ``measured_us`` is empty is a run not yet measured: it is skipped and counted.
"""

from __future__ import annotations

import csv
import io
import math
import os
from dataclasses import dataclass
from pathlib import Path

from engine.errors import InputFileError
from engine.evaluation.cost import TERMS
from engine.io.files import csv_header, csv_rows, cut, read_text, shown
from engine.io.outputs import write_text

__all__ = ["COLUMNS", "TEMPLATE_COLUMNS", "Measurement", "read_measurements", "write_template"]

COLUMNS = (
    "name", "mapping", "network", "hardware", "partition", "placement", "seed", "measured_us",
    "steps", "note", "saturates",
)  # fmt: skip
# what ``meshscope microbench`` writes: the columns above and, beside them, each run's counts
# and predictions (ignored when the file is read back)
TEMPLATE_COLUMNS = (
    "name", "mapping", "network", "hardware", "partition", "placement", "seed", "saturates",
    "measured_us", "steps", "note", "dendops", "synops", "synmem_reads", "link_bits",
    "model_us", "simulator_us",
)  # fmt: skip
_SPEC = ("network", "hardware", "partition", "placement")
TABLE_BYTES = 64 * 2**20  # the most a measurements file may hold (a row per measured run)


@dataclass(frozen=True)
class Measurement:
    """One measured run: what ran (a mapping file, or specs) and its mean step time."""

    row: int  # line in the CSV (the header is line 1)
    where: str  # "FILE:LINE", for messages about this run
    name: str
    measured_us: float
    mapping: str = ""  # a mapping file's path (resolved), or ""
    network: str = ""
    hardware: str = ""
    partition: str = ""
    placement: str = ""
    seed: int = 0
    steps: int = 0  # 0: not given
    note: str = ""
    saturates: str = ""  # a term of engine.evaluation.cost.TERMS, or ""

    @property
    def key(self) -> tuple:
        """What identifies the mapping (runs with equal keys share one build)."""
        if self.mapping:
            return ("mapping", self.mapping)
        return (self.network, self.hardware, self.partition, self.placement, self.seed)


def _number(text: str, what: str, where: str, *, whole: bool = False) -> float:
    try:
        value = int(text) if whole else float(text)
    except ValueError:
        kind = "a whole number" if whole else "a number"
        raise InputFileError(f"{where}: {what} must be {kind}, not {shown(text)}") from None
    if not math.isfinite(value) or value <= 0:
        raise InputFileError(f"{where}: {what} must be positive, not {shown(text)}")
    return value


def read_measurements(path) -> tuple[list[Measurement], int]:
    """The measured runs of a CSV file, and how many rows were skipped as not yet measured.

    Raises ``InputFileError`` naming the file, the line and what to fix.
    """
    path = Path(path)
    text = read_text(path, "measurements file", TABLE_BYTES).removeprefix("\ufeff")  # (a BOM)
    rows = csv.DictReader(io.StringIO(text))
    header = [h.strip() for h in csv_header(rows, str(path)) or []]
    if "measured_us" not in header:
        raise InputFileError(
            f"{path}: no measured_us column; the header must name measured_us and either "
            f"mapping or {', '.join(_SPEC)} (found: {cut(', '.join(header)) or 'nothing'})"
        )
    if "mapping" not in header and not set(_SPEC) <= set(header):
        missing = sorted(set(_SPEC) - set(header))
        raise InputFileError(
            f"{path}: each run needs a mapping column, or the columns {', '.join(_SPEC)} "
            f"(missing {', '.join(missing)})"
        )
    out, skipped = [], 0
    for line, raw in enumerate(csv_rows(rows, str(path)), start=2):
        if None in raw:  # more cells than the header names
            raise InputFileError(f"{path}:{line}: more cells than the header has columns")
        cell = {(k or "").strip(): (v or "").strip() for k, v in raw.items()}
        if not any(cell.values()):
            continue  # a blank line
        where = f"{path}:{line}"
        if not cell.get("measured_us"):
            skipped += 1
            continue
        measured = _number(cell["measured_us"], "measured_us", where)
        mapping = cell.get("mapping", "")
        if mapping:
            file = Path(mapping)
            file = file if file.is_absolute() else path.parent / file
            if not os.path.isfile(file):  # (os.path's: a name too long is no file)
                raise InputFileError(
                    f"{where}: mapping file {cut(str(file))} "
                    + ("is a folder" if os.path.isdir(file) else "does not exist")
                )
            spec = {"mapping": str(file)}
        else:
            empty = [k for k in _SPEC if not cell.get(k)]
            if empty:
                raise InputFileError(
                    f"{where}: no mapping file, and {', '.join(empty)} "
                    f"{'is' if len(empty) == 1 else 'are'} empty: name the mapping file or "
                    f"all of {', '.join(_SPEC)}"
                )
            spec = {k: cell[k] for k in _SPEC}
            hardware = Path(spec["hardware"])  # a preset file, beside the CSV like mappings
            if hardware.suffix == ".toml" and not hardware.is_absolute():
                beside = path.parent / hardware
                spec["hardware"] = str(beside) if os.path.exists(beside) else spec["hardware"]
            if cell.get("seed"):
                seed = cell["seed"]
                if not (seed.isascii() and seed.isdigit()):
                    raise InputFileError(
                        f"{where}: seed must be a whole number ≥ 0, not {shown(seed)}"
                    )
                spec["seed"] = int(seed)
        saturates = cell.get("saturates", "")
        if saturates and saturates not in TERMS:
            raise InputFileError(
                f"{where}: saturates must be one of {', '.join(TERMS)} or empty, not "
                f"{shown(saturates)}"
            )
        steps = int(_number(cell["steps"], "steps", where, whole=True)) if cell.get("steps") else 0
        name = cell.get("name") or mapping or f"{cell.get('network')} {cell.get('placement')}"
        out.append(
            Measurement(
                line,
                where,
                name,
                measured,
                steps=steps,
                note=cell.get("note", ""),
                saturates=saturates,
                **spec,
            )  # fmt: skip
        )
    if not out:
        raise InputFileError(
            f"{path}: no measured runs"
            + (f" ({skipped} rows have an empty measured_us: fill them in)" if skipped else "")
        )
    return out, skipped


def write_template(path, rows: list[dict]) -> None:
    """Write ``rows`` (dicts with the ``TEMPLATE_COLUMNS``; others ignored, None empty) as a
    measurements CSV to fill in, whole or not at all."""
    out = io.StringIO()
    writer = csv.DictWriter(out, TEMPLATE_COLUMNS, extrasaction="ignore", lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: ("" if v is None else v) for k, v in row.items()})
    write_text(path, out.getvalue(), what="CSV file")
