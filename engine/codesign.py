"""Hardware co-design (SENMap §IV-H): hardware parameters a search chooses beside the mapping.

A preset's ``[codesign]`` table gives each parameter the values a search may pick, e.g.
``memory_kib = { values = [256, 512, 1024], source = "…" }``; ``variant`` applies a choice to
the preset. The parameters are the hardware's own (``engine.hardware.CODESIGN_KNOBS``: how
each changes a ``Hardware``, and what the preset reader accepts); this module is the
search's side of them. Every parameter keeps the mesh (the cores and their places), so one
placement genotype serves every variant. What each does to the models:

* ``memory_kib``: each core's memory (``limits.synaptic_memory_bytes``): less memory, more
  cores for the same layer;
* ``npes``: neural processing elements per core (SENECA's NPEs, SENMap §II), taking a core's
  synaptic and dendritic operations in parallel: their times divided by the count
  (illustrative: perfect parallelism; the preset's times are one NPE's);
* ``clock_scale``: the clock against the preset's: every time of the runtime model, the
  barrier and the simulator's cycle shrink by it, every link's bandwidth grows by it (the
  energy per operation and per hop stays);
* ``flit_scale``: link width against the preset's: every link's bandwidth (and the
  simulator's flit) grows by it;
* ``state_bits``, ``output_bits``: SENMap eq. (1)'s bit widths (memory);
* ``cores``: the most cores the chip has (at most the preset's): a mapping that uses more
  breaks a constraint, and the ``chip-cores`` objective counts them — the mesh stays the
  preset's, the chip built is its first ``cores`` cores' worth (``mesh_shape`` sizes it).

What a variant costs is counted, not modelled: ``hardware_metrics`` reports the memory and
NPEs of the cores a mapping uses, the clock and the link width, which the ``memory``,
``npes``, ``clock`` and ``link-width`` objectives minimize — so a front trades latency against
silicon the preset's own numbers can price.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from engine.errors import SpecError
from engine.hardware import CODESIGN_KNOBS, Hardware

__all__ = ["Codesign", "core_cap", "hardware_metrics", "variant"]


def core_cap(hardware: Hardware, choice: dict) -> int:
    """The most cores a mapping may use on the variant ``choice`` names."""
    return int(choice.get("cores", hardware.n_cores))


def variant(hardware: Hardware, choice: dict) -> Hardware:
    """``hardware`` with the co-design parameters of ``choice`` (name → value) applied."""
    out = hardware
    for name, value in sorted(choice.items()):
        if name not in CODESIGN_KNOBS:
            known = ", ".join(CODESIGN_KNOBS)
            raise SpecError(f"unknown co-design parameter {name!r}: choose from {known}")
        if not value > 0:
            raise SpecError(f"co-design parameter {name} must be positive, not {value!r}")
        out = CODESIGN_KNOBS[name][0](out, float(value))
    if choice:
        said = ",".join(f"{k}={v:g}" for k, v in sorted(choice.items()))
        out = replace(out, name=f"{hardware.name}[{said}]")
    return out


def hardware_metrics(hardware: Hardware, choice: dict, cores_used: int) -> dict:
    """What a mapping's variant costs: the memory (KiB) and NPEs of the cores it uses, the
    clock and the link width against the preset's."""
    return {
        "cores_available": float(core_cap(hardware, choice)),
        "memory_kib_used": cores_used * hardware.limits.synaptic_memory_bytes / 1024,
        "npes_used": cores_used * float(choice.get("npes", 1.0)),
        "clock_scale": float(choice.get("clock_scale", 1.0)),
        "flit_scale": float(choice.get("flit_scale", 1.0)),
    }


@dataclass(frozen=True)
class Codesign:
    """The parameters a search chooses, each with its values (from the preset's table)."""

    names: tuple[str, ...]
    values: tuple[tuple[float, ...], ...]

    @classmethod
    def of(cls, hardware: Hardware, names) -> Codesign:
        """The preset's ranges of ``names`` (``["all"]``: every parameter it gives)."""
        table = dict(hardware.codesign)
        names = list(table) if list(names) == ["all"] else list(names)
        if not table:
            raise SpecError(
                f"{hardware.name} gives no co-design ranges: add a [codesign] table to its "
                f"preset (e.g. memory_kib = {{ values = [256, 512, 1024] }}), as seneca has"
            )
        missing = [n for n in names if n not in table]
        if missing:
            raise SpecError(
                f"{hardware.name} gives no range for {', '.join(missing)}: its [codesign] "
                f"table has {', '.join(table)}"
            )
        if "cores" in names and max(table["cores"]) > hardware.n_cores:
            raise SpecError(
                f"{hardware.name} has {hardware.n_cores} cores: its co-design range of cores "
                "cannot go beyond them"
            )
        return cls(tuple(names), tuple(tuple(table[n]) for n in names))

    def choice(self, indices) -> dict:
        return {n: v[int(i)] for n, v, i in zip(self.names, self.values, indices, strict=True)}

    def base(self, hardware: Hardware) -> tuple[int, ...]:
        """The indices of the values nearest the preset's own."""
        out = []
        for name, values in zip(self.names, self.values, strict=True):
            own = CODESIGN_KNOBS[name][1](hardware)
            out.append(min(range(len(values)), key=lambda i: (abs(values[i] - own), i)))
        return tuple(out)
