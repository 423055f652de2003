"""How many mappings a search chooses among: Loihi 2 mapping ES §3.1's counts.

A partitioning gives layer i at least its minimum ``c_i^min`` cores, its neurons spread
uniformly in their natural order, and all the layers together at most the ``C_tot`` cores
there are: ``binom(C_tot − C_min + L, L)`` of them for L layers. A placement puts the
``C_used`` cores of a partitioning on distinct physical cores, the order of the unused ones
being of no matter: ``C_tot! / (C_tot − C_used)!``. Both are far beyond counting (the paper:
more than 10^13 partitionings of ten layers on a 152-core chip, 10^267 placements of all its
cores), so they are given as base-10 logarithms.
"""

from __future__ import annotations

import math

from engine.search.genotype import Layout

__all__ = ["log10_partitionings", "log10_placements", "search_space"]


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
