"""The hardware file's schema: a preset's TOML, checked key by key, as a ``Hardware``.

Every constant is written ``key = { value = …, source = "…" }`` and its source says where it
came from: ``"paper: …"`` (a seed paper, a datasheet), ``"fitted: …"`` (``meshscope
calibrate``) or ``"illustrative: …"`` (a plausible value nobody measured). A bare
``key = value`` is accepted too; its source is then unstated. A wrong key, type or value is one
``InputFileError`` that names the file, the table and the key.
"""

from __future__ import annotations

import math
from dataclasses import MISSING, fields

from engine.errors import InputFileError, InvalidHardwareError, UnknownNameError
from engine.hardware import constants as c
from engine.hardware.codesign import CODESIGN_KNOBS
from engine.hardware.system import Hardware

__all__ = ["TOPOLOGY_KEYS", "hardware_from_dict"]

_KINDS = {  # a field's type in the dataclass -> the TOML values it takes, and how to say so
    "int": ((int,), "a whole number"),
    "float": ((int, float), "a number"),
    "str": ((str,), "text"),
    "bool": ((bool,), "true or false"),
}


def _check_value(name: str, kind: str, value, where: str) -> None:
    """A TOML value against its field's type: a whole number for ``int``, a finite number
    that is not negative for ``int`` and ``float`` (positivity, where it matters, is the
    dataclass's own check), text for ``str``."""
    if kind not in _KINDS:
        return
    ok, want = _KINDS[kind]
    if isinstance(value, bool) != (kind == "bool") or not isinstance(value, ok):
        raise InputFileError(f"{where}: {name} must be {want}, not {value!r}")
    if kind in ("int", "float") and not (math.isfinite(value) and value >= 0):
        raise InputFileError(f"{where}: {name} must be a finite number ≥ 0, not {value!r}")


def _unwrap(table, where: str, section: str, sources: dict) -> dict:
    """A section's values with every ``{ value = …, source = "…" }`` replaced by its value;
    the sources go to ``sources`` under ``"section.key"``."""
    if not isinstance(table, dict):
        raise InputFileError(f"{where}: must be a table of keys, not {table!r}")
    plain = {}
    for key, item in table.items():
        if isinstance(item, dict):
            if set(item) - {"value", "source"} or "value" not in item:
                raise InputFileError(
                    f'{where}: {key} must be a value or {{ value = …, source = "…" }}, not {item!r}'
                )
            source = item.get("source", "")
            if not isinstance(source, str):
                raise InputFileError(f"{where}: the source of {key} must be text")
            if source:
                sources[f"{section}.{key}"] = source
            item = item["value"]
        plain[key] = item
    return plain


def _section(cls, table: dict, where: str):
    for f in fields(cls):
        if f.name in table:
            _check_value(f.name, str(f.type), table[f.name], where)
    names = {f.name for f in fields(cls)}
    unknown = set(table) - names
    required = {f.name for f in fields(cls) if f.default is MISSING}
    missing = required - set(table)
    if unknown or missing:
        raise InputFileError(
            f"{where}: "
            + "; ".join(
                ([f"unknown keys {sorted(unknown)}"] if unknown else [])
                + ([f"missing keys {sorted(missing)}"] if missing else [])
            )
        )
    try:
        return cls(**table)
    except UnknownNameError as e:  # a name outside its list (a memory model): still a SpecError
        e.args = (f"{where}: {e}",)
        raise


_TOP_KEYS = {
    "name", "description", "topology", "limits", "links", "model", "energy", "noc", "codesign",
    "mosaic",
}  # fmt: skip
TOPOLOGY_KEYS = {"chips", "routers", "cores_per_router", "input_port"}


def hardware_from_dict(data: dict, where: str = "hardware") -> Hardware:
    sources: dict[str, str] = {}

    def section(name: str) -> dict:  # a missing section raises KeyError (but [noc] may be left out)
        table = data.get(name, {}) if name == "noc" else data[name]
        return _unwrap(table, f"{where} [{name}]", name, sources)

    try:
        topo = section("topology")
        for keys, known, at in (
            (data, _TOP_KEYS, where),
            (topo, TOPOLOGY_KEYS, f"{where} [topology]"),
        ):
            if set(keys) - known:
                raise InputFileError(f"{at}: unknown keys {sorted(set(keys) - known)}")
        for key in ("chips", "routers"):
            pair = topo[key]
            if not (isinstance(pair, list) and len(pair) == 2):
                raise InputFileError(f"{where} [topology]: {key} must be [x, y], not {pair!r}")
            for v in pair:
                _check_value(key, "int", v, f"{where} [topology]")
        _check_value("cores_per_router", "int", topo["cores_per_router"], f"{where} [topology]")
        port = topo.get("input_port", [0, 0, 0, 0])
        if not (isinstance(port, list) and len(port) == 4):
            raise InputFileError(
                f"{where} [topology]: input_port must be [chip, x, y, slot], not {port!r}"
            )
        for v in port:
            _check_value("input_port", "int", v, f"{where} [topology]")
        codesign = _codesign(data.get("codesign", {}), f"{where} [codesign]", sources)
        links = section("links")
        if "multicast" not in links:  # left out: unicast, said so
            sources.setdefault(
                "links.multicast",
                "illustrative: one message per destination core (no multicast), the NoC of a "
                "preset that names none",
            )
        model = section("model")
        if model.get("memory_model", "loihi") == "loihi":  # left out: the default, said so
            for key, source in c.MEMORY_MODEL_SOURCES.items():
                if key not in model:
                    sources.setdefault(f"model.{key}", source)
        return Hardware(
            name=str(data["name"]),
            description=str(data.get("description", "")),
            chips_x=int(topo["chips"][0]),
            chips_y=int(topo["chips"][1]),
            width=int(topo["routers"][0]),
            height=int(topo["routers"][1]),
            cores_per_router=int(topo["cores_per_router"]),
            input_port=tuple(int(v) for v in port),
            limits=_section(c.CoreLimits, section("limits"), f"{where} [limits]"),
            links=_section(c.LinkSpec, links, f"{where} [links]"),
            model=_section(c.ModelConstants, model, f"{where} [model]"),
            energy=_section(c.EnergyConstants, section("energy"), f"{where} [energy]"),
            noc=_section(c.NocConstants, section("noc"), f"{where} [noc]"),
            codesign=codesign,
            tiles=(
                _section(c.TileLimits, section("mosaic"), f"{where} [mosaic]")
                if "mosaic" in data
                else None
            ),
            sources=tuple(sorted(sources.items())),
        )
    except KeyError as e:
        raise InputFileError(f"{where}: missing {e.args[0]!r}") from None
    except (TypeError, ValueError, IndexError, InvalidHardwareError) as e:
        raise InputFileError(f"{where}: {e}") from None


def _codesign(table, where: str, sources: dict) -> tuple:
    """A [codesign] table: each parameter ``{ values = [v, …], source = "…" }``, positive
    numbers (``CODESIGN_KNOBS`` names the parameters)."""
    if not isinstance(table, dict):
        raise InputFileError(f"{where}: must be a table of parameters, not {table!r}")
    out = []
    for name, item in table.items():
        if name not in CODESIGN_KNOBS:
            known = ", ".join(CODESIGN_KNOBS)
            raise InputFileError(f"{where}: unknown parameter {name!r} (known: {known})")
        values = item.get("values") if isinstance(item, dict) else None
        if (
            not isinstance(values, list)
            or not values
            or set(item) - {"values", "source"}
            or not all(
                isinstance(v, int | float) and not isinstance(v, bool) and v > 0 for v in values
            )
        ):
            raise InputFileError(
                f'{where}: {name} must be {{ values = [positive numbers], source = "…" }}, '
                f"not {item!r}"
            )
        if item.get("source"):
            sources[f"codesign.{name}"] = str(item["source"])
        out.append((name, tuple(float(v) for v in values)))
    return tuple(out)
