"""The mesh for a number of cores: SENMap §IV-B's compression schemes.

- ``strict-area``: the factor pair of the core count with the smallest sum (30 → 5x6); a
  prime count gets a 1xN row.
- ``loose-area``: a prime count gets one more core when that shortens the mesh's perimeter
  (31 → 32 → 4x8; 2 and 3 stay 1x2 and 1x3), then strict-area; any other count is strict-area.
- ``square``: a near-square mesh for any count, columns ⌈√n⌉ and rows ⌈n / columns⌉ (26 → 5x6,
  30 slots); its sides differ by at most one.

Shapes are (rows, columns) with rows ≤ columns; one core is a 1x1 mesh under every scheme.
Integer arithmetic only, at most √n candidates.
"""

from __future__ import annotations

import math
import operator

from engine.errors import SpecError

__all__ = ["MAX_CORES", "SCHEMES", "mesh_shape", "mesh_slots"]

SCHEMES = ("strict-area", "loose-area", "square")
MAX_CORES = 1 << 40  # strict- and loose-area beyond it: their √n factor search takes seconds


def _count(cores) -> int:
    """``cores`` as a positive int, or a SpecError saying what to give instead."""
    try:
        n = None if isinstance(cores, bool) else operator.index(cores)
    except TypeError:
        n = None
    if n is None or n < 1:
        raise SpecError(
            f"cores must be a positive whole number (1 or more), not {cores!r}: "
            "give how many cores the mesh must hold"
        )
    return n


def _strict(n: int) -> tuple[int, int]:
    """The factor pair of ``n`` with the smallest sum: its largest divisor ≤ √n."""
    rows = next(d for d in range(math.isqrt(n), 0, -1) if n % d == 0)
    return rows, n // rows


def mesh_shape(cores: int, scheme: str = "strict-area") -> tuple[int, int]:
    """(rows, columns) of the mesh ``scheme`` gives ``cores`` cores, rows ≤ columns."""
    n = _count(cores)
    if scheme not in SCHEMES:
        raise SpecError(f"unknown mesh scheme {scheme!r}; choose one of {', '.join(SCHEMES)}")
    if scheme == "square":
        columns = math.isqrt(n - 1) + 1  # ⌈√n⌉
        return -(-n // columns), columns
    if n > MAX_CORES:  # the factor search takes up to √n steps
        raise SpecError(
            f"{n:,} cores is more than {scheme} sizes (at most {MAX_CORES:,}): give fewer, or "
            "use the square scheme"
        )
    rows, columns = _strict(n)
    if scheme == "loose-area" and rows == 1 and n > 1:  # a prime
        grown = _strict(n + 1)
        if sum(grown) < rows + columns:
            return grown
    return rows, columns


def mesh_slots(cores: int, scheme: str = "strict-area") -> int:
    """How many core slots that mesh has (rows × columns; ≥ ``cores``)."""
    rows, columns = mesh_shape(cores, scheme)
    return rows * columns
