"""Where every hardware constant came from, and presets written back with it.

A constant's source is text that starts with its kind:

* ``paper: …``: a published figure (a seed paper, a datasheet), with where it is stated;
* ``fitted: …``: fitted to measurements by ``meshscope calibrate`` (file, points, spread);
* ``illustrative: …``: a plausible value that nobody measured;
* ``spec: …``: set by a ``mesh:`` spec (its topology).

A number that depends on an illustrative constant is only as good as that guess; the CLI
(``meshscope list --hardware NAME --constants``) and the explorer say which ones.
"""

from __future__ import annotations

import json
import math
import numbers
from dataclasses import asdict

import numpy as np

from engine.hardware.system import Hardware
from engine.io.outputs import write_text

__all__ = [
    "KINDS",
    "LATENCY_CONSTANTS",
    "ENERGY_CONSTANTS",
    "constants",
    "illustrative_inputs",
    "preset_text",
    "source_detail",
    "source_kind",
    "write_preset",
]

KINDS = ("paper", "fitted", "illustrative", "spec", "unstated")

# The timing constants each headline number of the analytic model rests on. Format constants
# (message_bits, synmem_word_bits, sparse_index_bits) set the counts, and calibration fits the
# times per count against those very counts, so a calibrated preset's numbers do not rest on
# them; an uncalibrated preset's are flagged by its illustrative times anyway.
LATENCY_CONSTANTS = (
    "model.dendop_ns", "model.synop_ns", "model.synmem_read_ns", "model.barrier_us",
    "links.router_bits_per_us", "links.core_bits_per_us", "links.offchip_bits_per_us",
)  # fmt: skip


def source_kind(source: str) -> str:
    """The kind of a source text: paper, fitted, illustrative, spec, or unstated."""
    head = source.strip().lower()
    for kind in KINDS[:-1]:
        if head.startswith(kind):
            return kind
    return "unstated"


def source_detail(source: str) -> str:
    """A source without its kind (``"paper: X"`` → ``"X"``)."""
    kind = source_kind(source)
    head, colon, rest = source.partition(":")
    return rest.strip() if kind != "unstated" and colon and head.strip().lower() == kind else source


def _values(hardware: Hardware) -> dict[str, object]:
    """Every constant of ``hardware`` under its ``section.key`` name, as a preset writes it."""
    out: dict[str, object] = {
        "topology.chips": [hardware.chips_x, hardware.chips_y],
        "topology.routers": [hardware.width, hardware.height],
        "topology.cores_per_router": hardware.cores_per_router,
        "topology.input_port": list(hardware.input_port),
    }
    for section in ("limits", "links", "model", "energy", "noc"):
        for key, value in asdict(getattr(hardware, section)).items():
            out[f"{section}.{key}"] = value
    if hardware.tiles is not None:  # a Mosaic's crossbar sizes
        for key, value in asdict(hardware.tiles).items():
            out[f"mosaic.{key}"] = value
    for key, values in hardware.codesign:  # the ranges a co-design search may choose from
        out[f"codesign.{key}"] = list(values)
    return out


def constants(hardware: Hardware) -> list[dict]:
    """One row per constant: ``key`` (``section.name``), ``value``, ``source``, ``kind``."""
    rows = []
    for key, value in _values(hardware).items():
        source = hardware.source(key)
        rows.append({"key": key, "value": value, "source": source, "kind": source_kind(source)})
    return rows


def illustrative_inputs(hardware: Hardware, keys) -> list[str]:
    """Which of the constants ``keys`` are illustrative (or unstated) on ``hardware``."""
    return [k for k in keys if source_kind(hardware.source(k)) in ("illustrative", "unstated")]


ENERGY_CONSTANTS = LATENCY_CONSTANTS + (
    "energy.static_power_per_core_w", "energy.static_power_per_chip_w", "energy.dendop_pj",
    "energy.synop_pj", "energy.synmem_read_pj", "energy.route_pj", "energy.transmit_pj",
    "energy.offchip_pj",
)  # fmt: skip


def _toml(value) -> str:
    """A TOML literal for the values presets hold: text, whole numbers, numbers, pairs."""
    if isinstance(value, bool | np.bool_):
        return "true" if value else "false"
    if isinstance(value, str):  # a JSON string is a TOML basic string, but for DEL (U+007F)
        return json.dumps(value, ensure_ascii=False).replace("\x7f", "\\u007f")
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if isinstance(value, numbers.Real):
        if not math.isfinite(value):
            raise ValueError(f"a preset cannot hold {value}")
        return repr(float(value))
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    raise TypeError(f"a preset cannot hold {value!r}")


def preset_text(hardware: Hardware, *, header: str = "") -> str:
    """``hardware`` as a preset file, every constant with its source (``load_hardware`` reads
    it back to an equal ``Hardware`` with the same sources)."""
    lines = [
        "# " + "".join(c if c.isprintable() else " " for c in line)
        for line in header.splitlines()
        if line.strip()
    ]
    lines += [f"name = {_toml(hardware.name)}", f"description = {_toml(hardware.description)}"]
    section = None
    for key, value in _values(hardware).items():
        where, name = key.split(".")
        if where != section:
            lines += ["", f"[{where}]"]
            section = where
        source = hardware.source(key)
        said = "values" if where == "codesign" else "value"  # a range, not one value
        if source or where == "codesign":
            said = f"{said} = {_toml(value)}" + (f", source = {_toml(source)}" if source else "")
            item = f"{{ {said} }}"
        else:
            item = _toml(value)
        lines.append(f"{name} = {item}")
    return "\n".join(lines) + "\n"


def write_preset(path, hardware: Hardware, *, header: str = "") -> None:
    """Write ``hardware`` as a preset file (atomically)."""
    write_text(path, preset_text(hardware, header=header))
