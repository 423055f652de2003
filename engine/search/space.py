"""How many mappings a search chooses among (Loihi 2 mapping ES §3.1's counts), and how far
apart the placements of one partitioning lie (its Fig. 3).

A partitioning gives layer i at least its minimum ``c_i^min`` cores, its neurons spread
uniformly in their natural order, and all the layers together at most the ``C_tot`` cores
there are: ``binom(C_tot − C_min + L, L)`` of them for L layers. A placement puts the
``C_used`` cores of a partitioning on distinct physical cores, the order of the unused ones
being of no matter: ``C_tot! / (C_tot − C_used)!``. Both are far beyond counting (the paper:
more than 10^13 partitionings of ten layers on a 152-core chip, 10^267 placements of all its
cores), so they are given as base-10 logarithms.

One partitioning's latency varies widely with its placement (``PlacementSpread``): so widely
that a partitioning cannot be judged by one placement, which is why the search nests a
placement search inside the partitioning one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from engine.errors import SpecError
from engine.evaluation.cost import Evaluator
from engine.mapping.assignment import Placement
from engine.search.genotype import Layout

__all__ = [
    "PlacementSpread", "log10_partitionings", "log10_placements", "placement_spread",
    "search_space",
]  # fmt: skip
MAX_SAMPLES = 1_000_000


def _log10_factorial(n: int) -> float:
    return math.lgamma(n + 1) / math.log(10)


def log10_partitionings(c_total: int, c_min: int, layers: int) -> float:
    """log10 of the admissible partitionings of ``layers`` layers needing ``c_min`` cores at
    least onto ``c_total`` cores (-inf: none fits). As the paper counts them, a layer's cores
    are bounded below only (not by its neurons)."""
    spare = c_total - c_min
    if spare < 0:
        return -math.inf
    return _log10_factorial(spare + layers) - _log10_factorial(spare) - _log10_factorial(layers)


def log10_placements(c_total: int, c_used: int) -> float:
    """log10 of the placements of ``c_used`` cores onto ``c_total`` (-inf: they do not fit)."""
    if not 0 <= c_used <= c_total:
        return -math.inf
    return _log10_factorial(c_total) - _log10_factorial(c_total - c_used)


def search_space(layout: Layout, cores_used: int) -> dict:
    """The sizes of a search's space (``evolve --json``'s ``search_space``): its cores and
    layers, the partitionings, the placements of a partitioning of ``cores_used`` cores and
    of one using every core."""
    c_total, layers, c_min = int(layout.cores.size), int(layout.free.size), int(layout.c_min.sum())
    return {
        "cores": c_total,
        "layers": layers,
        "min_cores": c_min,
        "log10_partitionings": log10_partitionings(c_total, c_min, layers),
        "cores_used": int(cores_used),
        "log10_placements": log10_placements(c_total, cores_used),
        "log10_placements_all_cores": log10_placements(c_total, c_total),
    }


@dataclass(frozen=True)
class PlacementSpread:
    """The model's latency of one partitioning under uniformly random placements."""

    network: str
    hardware: str
    cores_used: int
    seed: int
    latency_us: np.ndarray  # one per placement, in the order drawn

    def summary(self) -> dict:
        lat = self.latency_us
        mean = float(lat.mean())
        return {
            "network": self.network, "hardware": self.hardware, "cores_used": self.cores_used,
            "samples": int(lat.size), "seed": self.seed,
            "min_us": float(lat.min()), "median_us": float(np.median(lat)), "mean_us": mean,
            "max_us": float(lat.max()), "std_us": float(lat.std()),
            "cv": float(lat.std() / mean) if mean > 0 else 0.0,
            "max_over_min": float(lat.max() / lat.min()) if lat.min() > 0 else math.inf,
        }  # fmt: skip

    def histogram(self, bins: int = 10) -> tuple[np.ndarray, np.ndarray]:
        """(counts, edges) of the latencies in ``bins`` equal bins."""
        return np.histogram(self.latency_us, bins=bins)

    def write_figure(self, path, bins: int = 20) -> None:
        """The histogram as Fig. 3 draws it (PNG, SVG or PDF by the path's suffix)."""
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        from engine.io.outputs import atomic_open

        s = self.summary()
        fig, ax = plt.subplots(figsize=(6, 3.6), layout="constrained")
        ax.hist(self.latency_us, bins=bins, color="#2171b5", edgecolor="white")
        ax.axvline(s["median_us"], color="#d62728", lw=1, ls="--",
                   label=f"median {s['median_us']:.2f} µs")  # fmt: skip
        ax.set_xlabel("latency per step (µs, model)")
        ax.set_ylabel("placements")
        ax.set_title(f"{self.network} on {self.hardware}: one partitioning ({self.cores_used} "
                     f"cores), {s['samples']} random placements", fontsize=10)  # fmt: skip
        ax.legend(fontsize=8)
        with atomic_open(path, "wb", what="figure") as f:
            fig.savefig(f, format=str(path).rsplit(".", 1)[-1].lower(), dpi=110)
        plt.close(fig)


def placement_spread(mapped, samples: int = 50, seed: int = 0) -> PlacementSpread:
    """The model's latency of ``mapped``'s partitioning (an ``engine.pipeline.Mapped``) under
    ``samples`` placements drawn uniformly at random (distinct cores), seeded: Loihi 2
    mapping ES Fig. 3 draws 50."""
    if not 1 <= samples <= MAX_SAMPLES:
        raise SpecError(f"samples is a number from 1 to {MAX_SAMPLES:,}, not {samples}")
    hw = mapped.hardware
    ev = Evaluator(mapped.network, hw, mapped.mapping.partition, graph=mapped.graph)
    n, rng = ev.graph.n_parts, np.random.default_rng(seed)
    latency = np.empty(samples)
    for k in range(samples):  # one placement at a time: each is evaluated whole, vectorised
        latency[k] = ev.set_placement(Placement(rng.permutation(hw.n_cores)[:n]))[0]
    return PlacementSpread(mapped.network.name, hw.name, n, seed, latency)
