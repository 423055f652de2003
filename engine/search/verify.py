"""A search's last word is the simulator's (issue 55).

A search is steered by a predictor, fast and approximate; its final candidates — the best
few of a nested ES run, the front of a multi-objective run — are few enough to simulate
flit by flit. ``simulator_check`` simulates each (pipelined, every candidate with the
same spikes, drawn from ``seed``) and says which the simulator finds fastest; the run
reports both figures for each, and the simulator's choice is its answer.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from engine.errors import MeshScopeError
from engine.mapping.assignment import Mapping
from engine.model.network import Network

__all__ = ["SimulatorCheck", "finalists", "simulated_front", "simulator_check"]


@dataclass(frozen=True)
class SimulatorCheck:
    """Candidates with the predictor's and the simulator's step, and the simulator's pick."""

    predictor: str
    seed: int
    candidates: list  # per candidate: {"index", "predicted_us", "simulated_us"}
    chosen: int  # the history index of the candidate the simulator found fastest (-1: none)

    @property
    def changed(self) -> bool:
        """The simulator chose another mapping than the predictor's best (the first)."""
        return bool(self.candidates) and self.chosen != self.candidates[0]["index"]

    def to_dict(self) -> dict:
        return {
            "predictor": self.predictor,
            "seed": self.seed,
            "decided_by": "simulator",
            "chosen": self.chosen,
            "changed": self.changed,
            "candidates": self.candidates,
        }


def finalists(records, k: int) -> list:
    """The ``k`` best feasible records by fitness, one per mapping (the first of equals)."""
    seen, out = set(), []
    for r in sorted((r for r in records if r.feasible), key=lambda r: (r.fitness, r.index)):
        key = (r.cores_per_population, r.placement, tuple(sorted(r.hardware.items())))
        if key in seen:
            continue
        seen.add(key)
        out.append(r)
        if len(out) == k:
            break
    return out


def simulator_check(
    network: Network, hardware, records, mappings: list[Mapping], *, predictor: str,
    seed: int = 0, mode: str = "pipelined",
) -> SimulatorCheck:  # fmt: skip
    """Simulate each of ``records`` (their ``mappings``, in the same order) and pick the
    fastest simulated step (a step that cannot be simulated is never picked)."""
    from engine.pipeline import Mapped
    from engine.simulate import draw_spikes, simulate_step

    spikes = draw_spikes(network.rate, "sample", seed=seed)
    candidates = []
    for record, mapping in zip(records, mappings, strict=True):
        try:
            step = simulate_step(
                Mapped.of(network, hardware, mapping), mode=mode, spikes=spikes, seed=seed
            ).step_us
        except MeshScopeError:
            step = math.inf
        candidates.append(
            {"index": record.index, "predicted_us": record.latency_us,
             "simulated_us": step if math.isfinite(step) else None}
        )  # fmt: skip
    steps = np.array([c["simulated_us"] or math.inf for c in candidates])
    chosen = candidates[int(np.argmin(steps))]["index"] if np.isfinite(steps).any() else -1
    return SimulatorCheck(predictor, seed, candidates, chosen)


def simulated_front(records, check: SimulatorCheck, names) -> list[int]:
    """The history indices of ``records`` (a front, every one in ``check``) that stay
    non-dominated when their ``latency`` objective is the simulated step: the front the
    simulator decides."""
    from engine.search.pareto.search import non_dominated

    simulated = {c["index"]: c["simulated_us"] for c in check.candidates}
    rows, kept = [], []
    for r in records:
        step = simulated.get(r.index)
        if step is None:
            continue
        rows.append([step if n == "latency" else r.objectives[n] for n in names])
        kept.append(r.index)
    if not rows:
        return []
    return [kept[i] for i in non_dominated(np.asarray(rows, dtype=float)).tolist()]
