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

import io
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from engine.errors import InputFileError, SpecError
from engine.hardware.routing import YX, routings
from engine.io.files import MAX_FILE_BYTES, read_text
from engine.registry import Registry

__all__ = ["Pattern", "build_pattern", "channel_load_bound", "patterns"]

UNIFORM, PERMUTATION, TABLE = 0, 1, 2
MATRIX_CELL_BYTES = 32  # the most one weight of a traffic matrix file may take (with its comma)


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
        # each row's cumulative probabilities lie in (0, 1]: shifted by the row number they
        # form one increasing array, searched once for every packet
        row_of = np.repeat(np.arange(self.row_ptr.size - 1), np.diff(self.row_ptr))
        at = np.searchsorted(self.cum + row_of, rows + u, side="right")
        out = self.dest[np.minimum(at, self.row_ptr[rows + 1] - 1)]
        mix = rng.random(sources.size) >= self.fraction
        out[mix] = rng.integers(0, n_nodes, size=int(mix.sum()))
        return out

    def entries(self, n_nodes: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
        """The pattern as ``P(d | s) = p[k]`` at ``(s[k], d[k])`` plus ``u / n_nodes``
        everywhere: ``(s, d, p, u)``."""
        if self.kind == UNIFORM:
            empty = np.zeros(0, dtype=np.int64)
            return empty, empty, np.zeros(0), 1.0
        if self.kind == PERMUTATION:
            return np.arange(n_nodes), self.perm.astype(np.int64), np.ones(n_nodes), 0.0
        p_row = np.diff(np.concatenate([[0.0], self.cum]))
        starts = np.zeros(self.cum.size, dtype=bool)
        starts[self.row_ptr[:-1][self.row_ptr[:-1] < self.cum.size]] = True
        p_row = np.where(starts, self.cum, p_row) * self.fraction
        if self.shared_row:
            s = np.repeat(np.arange(n_nodes), self.dest.size)
            d = np.tile(self.dest, n_nodes)
            return s, d.astype(np.int64), np.tile(p_row, n_nodes), 1.0 - self.fraction
        s = np.repeat(np.arange(self.row_ptr.size - 1), np.diff(self.row_ptr))
        return s, self.dest.astype(np.int64), p_row, 1.0 - self.fraction


def channel_load_bound(pattern: Pattern, width: int, height: int, routing: str = "xy") -> float:
    """The highest injection rate (flits per terminal and cycle) the pattern's routes allow
    on a ``width × height`` mesh with one terminal per router: one over the load of its
    busiest channel (mesh links, and the terminals' own links) per unit rate. The routes are
    ``routing``'s (``engine.hardware.routing``): X then Y by default; where packets take either
    order, each carries its share of every flow. For uniform traffic on a k × k mesh (k even) that
    is 4/k. It bounds the rate every terminal can inject at once; past it, the flows that
    avoid the busiest channel may still be served faster (the average accepted rate of a
    permutation can exceed it), the ones through it cannot: together they get at most the
    channel."""
    n = width * height
    s, d, p, u = pattern.entries(n)
    orders = routings[routing].orders
    mesh = None  # per channel E, W, S, N: the load of every order, added up
    for order in orders:
        if order == YX:  # X then Y on the transposed mesh: its E, W, S, N are our S, N, E, W
            ts, td = (s % width) * height + s // width, (d % width) * height + d // width
            e, w, so, no, _ = _xy_channels(ts, td, p, u, height, width)
            loads = [so, no, e, w]
        else:
            loads = list(_xy_channels(s, d, p, u, width, height)[:4])
        mesh = loads if mesh is None else [a + b for a, b in zip(mesh, loads, strict=True)]
    eject = _xy_channels(s, d, p, u, width, height)[4]  # (every order's the same)
    per_unit = [np.ones(1), eject, *(m / len(orders) for m in mesh)]  # each terminal injects 1
    heaviest = max(float(np.max(x)) if x.size else 0.0 for x in per_unit)
    return 1.0 / heaviest


def _xy_channels(s, d, p, u, width: int, height: int) -> tuple:
    """The X-then-Y loads per unit rate of ``P(d | s) = p`` at ``(s, d)`` plus ``u / n``
    everywhere (``Pattern.entries``): the E, W links (``[row, i]``: leaving x = i east, x =
    width − 1 − i west), the S, N links (``[column, i]``, alike) and each terminal's
    ejection link."""
    n = width * height
    # to_col[y, sx, dx]: the rate source (sx, y) sends into column dx
    to_col = np.full((height, width, width), u * height / n)
    np.add.at(to_col, (s // width, s % width, d % width), p)
    # from_row[sy, dy, dx]: the rate all sources of row sy send to terminal (dx, dy)
    from_row = np.full((height, height, width), u * width / n)
    np.add.at(from_row, (s // width, d // width, d % width), p)

    def crossing(m):
        """m[a, b, c] summed over b ≤ i and c ≥ i + 1, for each a and i (one leg's links)."""
        upto = np.cumsum(m, axis=1)  # over b ≤ i
        beyond = np.cumsum(upto[:, :, ::-1], axis=2)[:, :, ::-1]  # over c ≥ i
        k = m.shape[1]
        return beyond[:, np.arange(k - 1), np.arange(1, k)]

    by_col = np.moveaxis(from_row, 2, 0)  # [dx, sy, dy]
    return (
        crossing(to_col),  # eastward X links
        crossing(to_col[:, ::-1, ::-1]),  # westward
        crossing(by_col),  # southward Y links
        crossing(by_col[:, ::-1, ::-1]),  # northward
        from_row.sum(axis=0),  # each terminal's ejection link
    )


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
    if not file:
        raise SpecError("the matrix pattern needs its file: matrix:file=PATH.csv")
    most = min(MAX_FILE_BYTES, MATRIX_CELL_BYTES * n_nodes * n_nodes + 2**20)
    text = read_text(file, f"traffic matrix (of {n_nodes} × {n_nodes})", most)
    try:
        with warnings.catch_warnings():  # an empty file is reported below, not warned about
            warnings.simplefilter("ignore")
            weights = np.loadtxt(io.StringIO(text), delimiter=",", ndmin=2)
    except ValueError as e:
        raise InputFileError(f"traffic matrix {file} is not a CSV of numbers ({e})") from None
    if weights.size == 0:
        raise InputFileError(f"traffic matrix {file} is empty; write one row of weights per node")
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
        if params["seed"] < 0:
            raise SpecError(f"randperm seed {params['seed']} must be a whole number ≥ 0")
    try:
        return fn(width, height, n_nodes, **params)
    except TypeError:
        raise SpecError(f"pattern {name} takes {patterns.grammar(name)}") from None
