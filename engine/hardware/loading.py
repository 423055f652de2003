"""Hardware by name: a preset, a preset file, a generic ``mesh:`` spec, or any of them resized.

Presets are TOML files in ``engine/presets`` (``engine.hardware.schema`` reads them);
``load_hardware`` is the one function that turns what a user types into a ``Hardware``.
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

from engine.errors import InvalidHardwareError, UnknownNameError
from engine.hardware.schema import TOPOLOGY_KEYS, hardware_from_dict
from engine.hardware.system import Hardware
from engine.io.files import parse_toml, read_text

__all__ = [
    "HARDWARE_FILE_BYTES",
    "PRESET_DIR",
    "PREVIOUS_NAMES",
    "load_hardware",
    "preset_names",
    "resized",
    "spec_cores",
]

PRESET_DIR = Path(__file__).parents[1] / "presets"
PREVIOUS_NAMES = {  # preset names of earlier versions (mapping files may name them)
    "seed004-small": "hypergraph-small",
    "seed004-large": "hypergraph-large",
}
_MESH_SPEC = re.compile(r"^mesh:(\d+)x(\d+)(?:x(\d+))?(?:@(\d+)x(\d+))?$")
_PRESET_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]*$")


def spec_cores(spec: str) -> int | None:
    """The cores a ``mesh:`` spec names, without building it (None for other specs)."""
    m = _MESH_SPEC.match(PREVIOUS_NAMES.get(spec.strip(), spec.strip()))
    if not m:
        return None
    w, h, k, cx, cy = (int(v) if v else 1 for v in m.groups())
    return w * h * k * cx * cy


def preset_names() -> list[str]:
    return sorted(p.stem for p in PRESET_DIR.glob("*.toml"))


HARDWARE_FILE_BYTES = 16 * 2**20  # the most a hardware file may hold (presets: ~10 KB)


def _read_toml(path: Path) -> dict:
    return parse_toml(read_text(path, "hardware file", HARDWARE_FILE_BYTES), str(path))


def resized(hardware: Hardware, rows: int, columns: int) -> Hardware:
    """``hardware``'s cores, limits and constants on one chip of ``rows`` × ``columns``
    routers (a mesh sized for a mapping: SENMap §IV-B's compression); the spec
    ``NAME@RxC`` names it."""
    if rows < 1 or columns < 1:
        raise InvalidHardwareError(f"a mesh of {rows}x{columns} routers has none")
    name = f"{hardware.name.split('@')[0]}@{rows}x{columns}"
    out = replace(
        hardware, name=name, chips_x=1, chips_y=1, width=columns, height=rows,
        input_port=(0, 0, 0, 0),
        description=f"{hardware.description} — resized to one chip of {rows} x {columns} routers",
    )  # fmt: skip
    return out.with_sources(
        {f"topology.{k}": f"spec: {name}" for k in ("chips", "routers", "input_port")}
    )


_RESIZED = re.compile(r"^(.+)@(\d+)x(\d+)$")


def load_hardware(spec: str) -> Hardware:
    """A preset name, a path to a preset TOML file, ``mesh:WxH[xK][@CXxCY]``, or any of
    these ``@RxC``: resized to one chip of R rows × C columns of routers (``resized``).

    The generic mesh takes Loihi 2's limits and constants for its W×H routers per chip,
    K cores per router (default 1) and a CX×CY grid of chips (default 1×1).
    """
    spec = PREVIOUS_NAMES.get(spec.strip(), spec.strip())
    m = _RESIZED.match(spec)
    if m and not _MESH_SPEC.match(spec):
        rows, columns = int(m.group(2)), int(m.group(3))
        return resized(load_hardware(m.group(1)), rows, columns)
    m = _MESH_SPEC.match(spec)
    if m:
        w, h, k, cx, cy = (int(v) if v else None for v in m.groups())
        base = load_hardware("loihi2")
        hw = replace(
            base,
            name=spec,
            description=f"generic {w}x{h} mesh, {k or 1} cores per router, "
            f"{cx or 1}x{cy or 1} chips; Loihi 2 limits and constants (illustrative)",
            width=w,
            height=h,
            cores_per_router=1 if k is None else k,
            chips_x=1 if cx is None else cx,
            chips_y=1 if cy is None else cy,
        )
        return hw.with_sources({f"topology.{k}": f"spec: {spec}" for k in TOPOLOGY_KEYS})
    if spec.startswith("mesh:"):
        raise InvalidHardwareError(
            f"malformed mesh spec {spec!r}; write mesh:WxH, mesh:WxHxK or mesh:WxHxK@CXxCY "
            "(e.g. mesh:8x8x4@2x1)"
        )
    path = Path(spec)
    if path.suffix == ".toml":  # (a missing file, a name too long …: read_text says so)
        return hardware_from_dict(_read_toml(path), str(path))
    preset = PRESET_DIR / f"{spec}.toml"
    if not _PRESET_NAME.match(spec) or not preset.exists():  # a name, never a path
        raise UnknownNameError("hardware", spec, preset_names() + ["mesh:WxH[xK][@CXxCY]"])
    return hardware_from_dict(_read_toml(preset), str(preset))
