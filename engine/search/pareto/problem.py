"""The mapping problem as pymoo sees it: one row of numbers per mapping.

A row is ``L + K + C`` genes: the extra cores of each of the ``L`` layers (the partitioning
genotype of the Loihi 2 mapping ES), the index of each co-design parameter's value
(``engine.hardware.codesign``; none without co-design), then ω, the placement genotype: a
permutation of the ``C`` cores the layers may use.

The algorithms that work on the mapping operators (``engine.search.pareto.operators``) keep
rows so; those that move rows in a continuous space (PSO, ISRES) make any numbers within
the bounds, which ``split`` decodes: the integer genes rounded, the placement genes read as
keys whose rank order picks the cores (random keys: a permutation of the cores is its own
key, so a row of the operators decodes to itself).
"""

from __future__ import annotations

import numpy as np
from pymoo.core.problem import Problem

from engine.search.genotype import Layout, PartitionGenotype

__all__ = ["MappingProblem", "row_key"]


class MappingProblem(Problem):
    """Mappings as rows (module docstring); ``rate(rows) -> (F, G)`` gives their objectives
    and constraints (``G[0]``: layers whose split breaks a core limit, ``G[1]``: cores asked
    beyond those available). ``constrained``: pymoo sees the constraints (else only the
    objectives, which a mapping that breaks one has at their worst: MOEA/D)."""

    def __init__(
        self, layout: Layout, n_obj: int, codesign=None, base=(), layout_of=None, cap_of=None,
        rate=None, *, constrained: bool = True,
    ):  # fmt: skip
        self.layout = layout
        self.rate = rate  # rows -> (F, G): how pymoo's evaluator gets objectives, constraints
        self.cap_of = cap_of or (lambda knobs: layout.c_tot)  # the cores a variant has
        self.codesign = codesign
        self.n_knobs = 0 if codesign is None else len(codesign.names)
        self.base = tuple(base)  # the knobs' indices nearest the preset's own values
        self.layout_of = layout_of or (lambda knobs: layout)  # the layout of a variant
        self._cores = np.sort(layout.cores)  # ω's values, in the order keys rank them
        n_layers, c_tot = layout.n_layers, layout.c_tot
        cap = np.minimum(layout.c_max - layout.c_min, layout.spare)
        knob_hi = [] if codesign is None else [len(v) - 1 for v in codesign.values]
        xl = np.zeros(n_layers + self.n_knobs + c_tot)
        xu = np.concatenate([cap, knob_hi, np.full(c_tot, max(c_tot - 1, 0))]).astype(float)
        super().__init__(
            n_var=xl.size, n_obj=n_obj, n_ieq_constr=2 if constrained else 0, xl=xl, xu=xu,
            vtype=int,
        )  # fmt: skip

    @property
    def n_int(self) -> int:
        """The integer genes (core counts, co-design choices) before the permutation ω."""
        return self.layout.n_layers + self.n_knobs

    @staticmethod
    def _ints(row, lo: int, hi: int) -> np.ndarray:
        """Genes ``lo:hi`` of a row as integers (rounded: a continuous algorithm keeps them
        within their bounds)."""
        return np.rint(np.asarray(row[lo:hi], dtype=float)).astype(np.int64)

    def split(self, row) -> tuple[PartitionGenotype, np.ndarray]:
        """(x, ω) of one row; x's unused count may be negative (too many cores: G[1] > 0)."""
        row = np.asarray(row)
        extra = self._ints(row, 0, self.layout.n_layers)
        keys = row[self.n_int :]
        omega = np.empty(keys.size, dtype=np.int64)
        omega[np.argsort(keys, kind="stable")] = self._cores
        return PartitionGenotype(extra, self.layout.spare - int(extra.sum())), omega

    def knobs(self, row) -> tuple[int, ...]:
        """The co-design choice of one row (value indices; () without co-design)."""
        return tuple(int(k) for k in self._ints(np.asarray(row), self.layout.n_layers, self.n_int))

    def join(self, x: PartitionGenotype, omega: np.ndarray, knobs=None) -> np.ndarray:
        knobs = self.base if knobs is None else knobs
        return np.concatenate([x.extra, np.asarray(knobs, dtype=np.int64), omega]).astype(np.int64)

    def violations(self, x: PartitionGenotype, knobs=()) -> tuple[float, float]:
        """(layers whose split breaks a core limit — of the hardware the knobs choose —, cores
        beyond those available)."""
        layout = self.layout_of(tuple(knobs))
        cores = x.cores_per_layer(self.layout)
        broken = sum(not layout.fits(i, int(c)) for i, c in enumerate(cores))
        cap = min(self.cap_of(tuple(knobs)), self.layout.c_tot)  # a variant's, or all
        beyond = max(0, int(cores.sum()) - cap)
        return float(broken), float(beyond)

    def _evaluate(self, x, out, *args, **kwargs):
        out["F"], G = self.rate(x)
        if self.n_ieq_constr:
            out["G"] = G


def row_key(row) -> bytes:
    """A row as a dictionary key (the sampling names its starting rows by it)."""
    return np.asarray(row, dtype=np.int64).tobytes()
