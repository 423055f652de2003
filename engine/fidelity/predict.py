"""What the model and the simulator predict for measured runs, and the counts behind it.

The max-affine model (Loihi 2 runtime model eq. 1) is ``T = max_k x_k · θ_k`` over five
terms: the busiest core's DendOps, SynOps and SynMem reads, the bits over the heaviest
link (at the mesh link's bandwidth: a link of another kind counts its bits scaled by the
bandwidth ratio) and the barrier (count 1). ``counts`` gives the ``x`` of a mapping,
``constants_vector`` the ``θ`` of a hardware, ``max_affine`` the model from both, equal to
``engine.pipeline.evaluate``'s latency. ``calibrate`` fits ``θ`` from ``x`` and measured
step times.

The simulator predicts a run by simulating one pipelined step flit by flit with every
neuron spiking at its expected rate (``spikes="expected"``, no sampling noise).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from engine.errors import InputFileError, MeshScopeError, SpecError
from engine.evaluation.cost import TERMS
from engine.hardware import Hardware, load_hardware
from engine.pipeline import Mapped, build_mapping, evaluate

__all__ = [
    "Prediction",
    "constants_vector",
    "counts",
    "max_affine",
    "predict",
    "with_constants",
]


def counts(mapped: Mapped) -> np.ndarray:
    """The five counts ``x`` of eq. 1 for a mapping, in the order of
    ``engine.evaluation.cost.TERMS``: DendOps, SynOps and SynMem reads of the busiest core,
    heaviest-link bits (at the mesh link's bandwidth), 1 for the barrier."""
    g, hw = mapped.graph, mapped.hardware
    ev = evaluate(mapped)
    bits = ev.terms_us["link"] * hw.links.router_bits_per_us  # µs × bits/µs
    top = [float(a.max()) if a.size else 0.0 for a in (g.neurons, g.synops, g.synmem_reads)]
    return np.array([*top, bits, 1.0])


def constants_vector(hardware: Hardware) -> np.ndarray:
    """The five constants ``θ`` of eq. 1 in µs per count: T_DO, T_SO, T_SMR, 1/B, T_BS."""
    m = hardware.model
    return np.array(
        [
            m.dendop_ns * 1e-3,
            m.synop_ns * 1e-3,
            m.synmem_read_ns * 1e-3,
            1.0 / hardware.links.router_bits_per_us,
            m.barrier_us,
        ]
    )


def max_affine(x: np.ndarray, theta: np.ndarray) -> np.ndarray:
    """Eq. 1 for rows of counts ``x`` (n × 5) and constants ``θ``: the step time in µs."""
    return (np.atleast_2d(x) * theta).max(axis=1)


def with_constants(base: Hardware, constants: Hardware) -> Hardware:
    """``base``'s topology and limits with every constant of ``constants`` (a calibrated
    preset applied to runs mapped on the preset it came from)."""
    same = (
        (base.chips_x, base.chips_y, base.width, base.height, base.cores_per_router, base.limits)
        == (constants.chips_x, constants.chips_y, constants.width, constants.height,
            constants.cores_per_router, constants.limits)
    )  # fmt: skip
    if not same:
        raise SpecError(
            f"{constants.name} has another topology or other core limits than {base.name}, "
            f"which the run was mapped on: its constants cannot stand in for {base.name}'s "
            f"(give --hardware {base.name}, or a preset made from it)"
        )
    return replace(
        base, name=constants.name, description=constants.description, links=constants.links,
        model=constants.model, energy=constants.energy, noc=constants.noc,
        sources=constants.sources,
    )  # fmt: skip


@dataclass(frozen=True, eq=False)
class Prediction:
    """One run as the model and (optionally) the simulator see it."""

    counts: np.ndarray  # x of eq. 1 (TERMS order)
    model_us: float
    bound: str  # the model's bounding term
    simulator_us: float | None = None
    simulator_bound: str | None = None
    mapped: Mapped | None = field(default=None, repr=False)

    def to_dict(self) -> dict:
        return {
            "counts": dict(zip(TERMS, self.counts.tolist(), strict=True)),
            "model_us": self.model_us,
            "bound": self.bound,
            "simulator_us": self.simulator_us,
            "simulator_bound": self.simulator_bound,
        }


def _build(run, hardware: Hardware | None) -> Mapped:
    if getattr(run, "mapping", ""):
        mapped = build_mapping(mapping_file=run.mapping)
    else:
        mapped = build_mapping(
            run.network, run.hardware, partition=run.partition, placement=run.placement,
            seed=run.seed,
        )  # fmt: skip
    if hardware is None:
        return mapped
    hw = with_constants(mapped.hardware, hardware)
    return Mapped.of(mapped.network, hw, mapped.mapping)


def predict(
    runs: Sequence,
    *,
    hardware: Hardware | str | None = None,
    simulator: bool = True,
    progress: Callable[[int], None] | None = None,
) -> list[Prediction]:
    """The model's (and the simulator's) prediction for every run (``Measurement`` or
    ``SuiteRun``); runs that name the same mapping are built once. ``hardware``: constants
    to use instead of those of the hardware each run names (same topology and limits).
    ``progress`` is called with the number of runs done."""
    if isinstance(hardware, str):
        hardware = load_hardware(hardware)
    built: dict = {}
    out = []
    for i, run in enumerate(runs):
        key = run.key
        if key not in built:
            try:
                mapped = _build(run, hardware)
            except MeshScopeError as e:  # name the row of the measurements file
                where = getattr(run, "where", "") or f"run {run.name!r}"
                raise InputFileError(f"{where}: {' '.join(str(e).split())}") from None
            x = counts(mapped)
            theta = constants_vector(mapped.hardware)
            terms = x * theta
            model_us = float(terms.max())
            bound = TERMS[int(np.argmax(terms))]
            sim_us = sim_bound = None
            if simulator:
                from engine.simulate import simulate_step

                step = simulate_step(mapped, mode="pipelined", spikes="expected")
                sim_us, sim_bound = step.step_us, step.bound
            built[key] = Prediction(x, model_us, bound, sim_us, sim_bound, mapped)
        out.append(built[key])
        if progress is not None:
            progress(i + 1)
    return out
