"""Synthetic traffic patterns, defined exactly as BookSim2's ``traffic.cpp`` defines them.

A pattern says where a packet of source terminal ``s`` goes; when packets are created is
the injection process's business (Bernoulli, in ``engine.simulate.synthetic``). Terminals
are numbered as BookSim2 numbers a mesh's nodes: ``x + width · y``. A pattern is given by
a spec string, ``name`` or ``name:key=value,…`` (``hotspot:nodes=0+63,fraction=0.5``).

For the simulator's kernel every pattern is one of three kinds: ``uniform`` (any terminal,
itself included, equally likely), a fixed ``permutation`` table, or a ``table`` of
destinations with cumulative probabilities — one row shared by every source, or one row
per source — mixed with uniform traffic with probability ``1 − fraction``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from engine.errors import InputFileError, SpecError
from engine.registry import Registry

__all__ = ["Pattern", "build_pattern", "patterns"]

UNIFORM, PERMUTATION, TABLE = 0, 1, 2


@dataclass(frozen=True, eq=False)
class Pattern:
    """A destination rule in the form the kernel reads."""

    name: str
    kind: int
    perm: np.ndarray = field(default_factory=lambda: np.zeros(1, dtype=np.int64))
    row_ptr: np.ndarray = field(default_factory=lambda: np.zeros(2, dtype=np.int64))
    dest: np.ndarray = field(default_factory=lambda: np.zeros(1, dtype=np.int64))
    cum: np.ndarray = field(default_factory=lambda: np.ones(1))
    shared_row: bool = True  # one table row for every source
    fraction: float = 1.0  # probability of the table (else uniform)

    def destinations(self, sources: np.ndarray, n_nodes: int, rng) -> np.ndarray:
        """Destinations of packets of ``sources`` (numpy; the kernel does the same)."""
        sources = np.asarray(sources, dtype=np.int64)
        if self.kind == UNIFORM:
            return rng.integers(0, n_nodes, size=sources.size)
        if self.kind == PERMUTATION:
            return self.perm[sources]
        rows = np.zeros_like(sources) if self.shared_row else sources
        u = rng.random(sources.size)
        out = np.empty(sources.size, dtype=np.int64)
        for k, (row, x) in enumerate(zip(rows.tolist(), u.tolist(), strict=True)):
            lo, hi = self.row_ptr[row], self.row_ptr[row + 1]
            out[k] = self.dest[lo + np.searchsorted(self.cum[lo:hi], x, side="right")]
        mix = rng.random(sources.size) >= self.fraction
        out[mix] = rng.integers(0, n_nodes, size=int(mix.sum()))
        return out


patterns: Registry = Registry("traffic pattern")


def _power_of_two(n: int, name: str) -> int:
    if n & (n - 1):
        raise SpecError(f"{name} needs a power-of-two number of terminals, not {n}")
    return n.bit_length() - 1


def _permutation(name: str, dest) -> Pattern:
    return Pattern(name, PERMUTATION, perm=np.asarray(dest, dtype=np.int64))


@patterns.register("uniform")
def uniform(width: int, height: int, n_nodes: int) -> Pattern:
    """Every terminal equally likely, the source itself included (BookSim2 uniform)."""
    return Pattern("uniform", UNIFORM)


@patterns.register("transpose")
def transpose(width: int, height: int, n_nodes: int) -> Pattern:
    """Swap the high and low halves of the terminal number (an even power of two)."""
    bits = _power_of_two(n_nodes, "transpose")
    if bits % 2:
        raise SpecError(f"transpose needs an even power of two terminals, not {n_nodes}")
    half = bits // 2
    s = np.arange(n_nodes)
    lo = (1 << half) - 1
    return _permutation("transpose", ((s >> half) & lo) | ((s << half) & (lo << half)))


@patterns.register("bitcomp")
def bitcomp(width: int, height: int, n_nodes: int) -> Pattern:
    """The bitwise complement of the terminal number."""
    _power_of_two(n_nodes, "bitcomp")
    return _permutation("bitcomp", ~np.arange(n_nodes) & (n_nodes - 1))


@patterns.register("bitrev")
def bitrev(width: int, height: int, n_nodes: int) -> Pattern:
    """The terminal number's bits in reverse order."""
    bits = _power_of_two(n_nodes, "bitrev")
    s = np.arange(n_nodes)
    out = np.zeros(n_nodes, dtype=np.int64)
    for b in range(bits):
        out = (out << 1) | ((s >> b) & 1)
    return _permutation("bitrev", out)


@patterns.register("shuffle")
def shuffle(width: int, height: int, n_nodes: int) -> Pattern:
    """Rotate the terminal number's bits left by one."""
    _power_of_two(n_nodes, "shuffle")
    shifted = np.arange(n_nodes) << 1
    return _permutation("shuffle", (shifted & (n_nodes - 1)) | ((shifted & n_nodes) > 0))


def _digits(name: str, width: int, height: int, n_nodes: int, offset) -> Pattern:
    if n_nodes != width * height:
        raise SpecError(f"{name} needs one terminal per router")
    s = np.arange(n_nodes)
    x, y = s % width, s // width
    return _permutation(name, offset(x, width) + width * offset(y, height))


@patterns.register("tornado")
def tornado(width: int, height: int, n_nodes: int) -> Pattern:
    """Each coordinate moves ⌈k/2⌉ − 1 places on (BookSim2's tornado on a k-ary mesh)."""
    return _digits("tornado", width, height, n_nodes, lambda c, k: (c + (k + 1) // 2 - 1) % k)


@patterns.register("neighbor")
def neighbor(width: int, height: int, n_nodes: int) -> Pattern:
    """Each coordinate moves one place on, wrapping at the edge."""
    return _digits("neighbor", width, height, n_nodes, lambda c, k: (c + 1) % k)


@patterns.register("randperm", grammar="randperm:seed=S")
def randperm(width: int, height: int, n_nodes: int, seed: int = 0) -> Pattern:
    """A random permutation of the terminals, drawn from ``seed``."""
    return _permutation("randperm", np.random.default_rng(seed).permutation(n_nodes))


@patterns.register("hotspot", grammar="hotspot:nodes=A+B…,rates=…,fraction=F")
def hotspot(
    width: int, height: int, n_nodes: int, nodes: str = "0", rates: str = "", fraction: float = 1.0
) -> Pattern:
    """To the hotspot ``nodes`` in proportion to ``rates``; with ``fraction`` < 1, the other
    packets go uniformly (fraction 1 is BookSim2's hotspot)."""
    spots = _ints(nodes, "hotspot nodes")
    weights = _ints(rates, "hotspot rates") if rates else [1] * len(spots)
    weights = (weights + [weights[-1]] * len(spots))[: len(spots)]
    if min(spots) < 0 or max(spots) >= n_nodes:
        raise SpecError(f"hotspot nodes must lie in 0..{n_nodes - 1}")
    if min(weights) < 1 or not 0 <= fraction <= 1:
        raise SpecError("hotspot rates must be positive and fraction within [0, 1]")
    cum = np.cumsum(weights) / np.sum(weights)
    return Pattern(
        "hotspot", TABLE, row_ptr=np.array([0, len(spots)]), dest=np.asarray(spots),
        cum=cum, shared_row=True, fraction=float(fraction),
    )  # fmt: skip


@patterns.register("matrix", grammar="matrix:file=PATH")
def matrix(width: int, height: int, n_nodes: int, file: str = "") -> Pattern:
    """A traffic matrix: row s of a CSV of n × n non-negative weights is where s sends to."""
    try:
        weights = np.loadtxt(file, delimiter=",", ndmin=2)
    except OSError as e:
        raise InputFileError(f"cannot read traffic matrix {file}: {e.strerror or e}") from None
    except ValueError as e:
        raise InputFileError(f"traffic matrix {file} is not a CSV of numbers ({e})") from None
    return matrix_pattern(weights, n_nodes, str(Path(file).name))


def matrix_pattern(weights, n_nodes: int, where: str = "traffic matrix") -> Pattern:
    """The ``table`` pattern of an ``n × n`` weight matrix (rows: sources)."""
    w = np.asarray(weights, dtype=float)
    if w.shape != (n_nodes, n_nodes):
        raise InputFileError(f"{where} is {w.shape[0]} × {w.shape[1]}; the mesh has {n_nodes}")
    if not np.all(np.isfinite(w)) or w.min() < 0:
        raise InputFileError(f"{where}: weights must be finite and non-negative")
    rows = w.sum(axis=1)
    w = np.where(rows[:, None] > 0, w, np.eye(n_nodes))  # a silent row sends to itself
    src, dst = np.nonzero(w)
    row_ptr = np.concatenate([[0], np.cumsum(np.bincount(src, minlength=n_nodes))])
    p = w[src, dst] / w.sum(axis=1)[src]
    cum = np.concatenate(
        [np.cumsum(p[a:b]) for a, b in zip(row_ptr[:-1], row_ptr[1:], strict=True)]
    )
    return Pattern("matrix", TABLE, row_ptr=row_ptr, dest=dst, cum=cum, shared_row=False)


def _ints(text: str, what: str) -> list[int]:
    try:
        return [int(v) for v in str(text).replace("+", " ").split()]
    except ValueError:
        raise SpecError(f"{what}: write whole numbers joined by +, e.g. 0+27+63") from None


def build_pattern(spec: str, width: int, height: int, n_nodes: int) -> Pattern:
    """The ``Pattern`` a spec string names, on a ``width × height`` mesh of ``n_nodes``."""
    name, _, rest = spec.strip().partition(":")
    fn = patterns[name]
    params = {}
    for item in filter(None, rest.split(",")):
        key, eq, value = item.partition("=")
        if not eq:
            raise SpecError(f"malformed pattern parameter {item!r}; write {patterns.grammar(name)}")
        params[key.strip()] = value.strip()
    if "fraction" in params:
        try:
            params["fraction"] = float(params["fraction"])
        except ValueError:
            raise SpecError(f"hotspot fraction {params['fraction']!r} is not a number") from None
    if "seed" in params:
        try:
            params["seed"] = int(params["seed"])
        except ValueError:
            raise SpecError(f"randperm seed {params['seed']!r} is not a whole number") from None
    try:
        return fn(width, height, n_nodes, **params)
    except TypeError:
        raise SpecError(f"pattern {name} takes {patterns.grammar(name)}") from None
