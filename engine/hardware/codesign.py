"""Hardware co-design (SENMap §IV-H): hardware parameters a search chooses beside the mapping.

A preset's ``[codesign]`` table gives each parameter the values a search may pick, e.g.
``memory_kib = { values = [256, 512, 1024], source = "…" }``; ``variant`` applies a choice to
the preset. ``CODESIGN_KNOBS`` says how each parameter changes a ``Hardware`` (and which ones
the preset reader accepts); the rest of this module is the search's side of them. Every
parameter keeps the mesh (the cores and their places), so one placement genotype serves
every variant. What each does to the models:

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

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from engine.errors import SpecError

if TYPE_CHECKING:
    from engine.hardware.system import Hardware

__all__ = ["CODESIGN_KNOBS", "Codesign", "core_cap", "hardware_metrics", "variant"]


# ------------------------------------------------------------------ co-design parameters
# what a hardware could be: each parameter a co-design search may vary, as a change to it
def _vary_memory(hw: Hardware, v: float) -> Hardware:
    return replace(hw, limits=replace(hw.limits, synaptic_memory_bytes=int(v * 1024)))


def _vary_npes(hw: Hardware, v: float) -> Hardware:
    m = hw.model
    return replace(hw, model=replace(m, synop_ns=m.synop_ns / v, dendop_ns=m.dendop_ns / v))


def _vary_clock(hw: Hardware, v: float) -> Hardware:
    m, out = hw.model, _scaled_links(hw, v)
    model = replace(
        m, synop_ns=m.synop_ns / v, dendop_ns=m.dendop_ns / v,
        synmem_read_ns=m.synmem_read_ns / v, barrier_us=m.barrier_us / v,
    )  # fmt: skip
    return replace(out, model=model, noc=replace(hw.noc, cycle_ns=hw.noc.cycle_ns / v))


def _scaled_links(hw: Hardware, v: float) -> Hardware:
    links = hw.links
    return replace(
        hw,
        links=replace(
            links, router_bits_per_us=links.router_bits_per_us * v,
            core_bits_per_us=links.core_bits_per_us * v,
            offchip_bits_per_us=links.offchip_bits_per_us * v,
        ),
    )  # fmt: skip


def _vary_flit(hw: Hardware, v: float) -> Hardware:
    out = _scaled_links(hw, v)
    return replace(out, noc=replace(out.noc, flit_bits=max(1, round(hw.noc.flit_bits * v))))


def _vary_bits(name: str) -> Callable[[Hardware, float], Hardware]:
    def apply(hw: Hardware, v: float) -> Hardware:
        return replace(hw, model=replace(hw.model, **{name: int(v)}))

    return apply


# the parameters a preset's [codesign] table may give values for (SENMap §IV-H; what each does:
# below, the search's side): name -> (the hardware with a value applied,
# the value the hardware itself has)
CODESIGN_KNOBS: dict[
    str, tuple[Callable[[Hardware, float], Hardware], Callable[[Hardware], float]]
] = {
    "memory_kib": (_vary_memory, lambda hw: hw.limits.synaptic_memory_bytes / 1024),
    "npes": (_vary_npes, lambda hw: 1.0),
    "clock_scale": (_vary_clock, lambda hw: 1.0),
    "flit_scale": (_vary_flit, lambda hw: 1.0),
    "state_bits": (_vary_bits("state_bits"), lambda hw: hw.model.state_bits),
    "output_bits": (_vary_bits("output_bits"), lambda hw: hw.model.output_bits),
    "cores": (lambda hw, v: hw, lambda hw: float(hw.n_cores)),  # a cap (``core_cap``)
}


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
