"""hMETIS hypergraph files (``.hgr``) and partition files, to and from other tools.

Export writes one line per neuron: the h-edge weight (the spike rate × ``RATE_SCALE``,
at least 1), then its pins — the source first, then its destinations — 1-based, as in
the hMETIS manual (header ``n_edges n_vertices 1``: weighted edges). Neurons with no
destination become single-pin h-edges so that every rate survives the round trip;
other tools ignore them. A comment line ``% meshscope rate_scale=…`` records the scale.

Import reads any hMETIS file (fmt 0, 1, 10 or 11; comment lines start with ``%``): the
first pin of a line is the h-edge's source, the others its destinations. Rates come
from the weights divided by the recorded scale (or by the largest weight when there is
none), capped at 1. Vertices that source no line spike with rate 0. The network has
one population. Text is produced and parsed by numba kernels, never a Python loop over
pins.

A partition file (what hMETIS, KaHyPar or Mt-KaHyPar write) has one block id per line,
vertex by vertex.
"""

from __future__ import annotations

from pathlib import Path

import numba
import numpy as np

from engine.arrays import distinct
from engine.errors import CapacityError, InputFileError
from engine.io.files import MAX_FILE_BYTES, ReadLimits, read_bytes
from engine.io.outputs import atomic_open
from engine.model.network import Network

__all__ = ["RATE_SCALE", "write_hgr", "read_hgr", "read_partition_file"]

RATE_SCALE = 1_000_000
PARTITION_LINE_BYTES = 32  # the most a line of a partition file may take (a block id: ≤ 19)


def write_hgr(network: Network, path) -> None:
    network = network.explicit(why="an .hgr file")  # one h-edge per neuron, listed
    n = network.n_neurons
    src = network.sources.astype(np.int64)
    dst = network.indices.astype(np.int64)
    keep = dst != src  # the source is the first pin already
    key = distinct(src[keep] * n + dst[keep])  # one pin per distinct destination
    src, dst = key // n, key % n
    counts = np.bincount(src, minlength=n)
    indptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    weights = np.maximum(1, np.rint(network.rate * RATE_SCALE)).astype(np.int64)
    body = _format(indptr, dst, weights)
    header = f"% meshscope rate_scale={RATE_SCALE} network={network.name}\n{n} {n} 1\n"
    with atomic_open(path, "wb", what="hMETIS file") as f:
        f.write(header.encode())
        f.write(body.tobytes())


@numba.njit(cache=True, nogil=True)
def _digits(v):
    d = 1
    while v >= 10:
        v //= 10
        d += 1
    return d


@numba.njit(cache=True, nogil=True)
def _put(buf, at, v):
    d = _digits(v)
    for i in range(d - 1, -1, -1):
        buf[at + i] = 48 + v % 10
        v //= 10
    return at + d


@numba.njit(cache=True, nogil=True)
def _format(indptr, dst, weights):
    n = indptr.size - 1
    size = 0
    for v in range(n):
        size += _digits(weights[v]) + 1 + _digits(v + 1) + 1
        for k in range(indptr[v], indptr[v + 1]):
            size += _digits(dst[k] + 1) + 1
    buf = np.empty(size, dtype=np.uint8)
    at = 0
    for v in range(n):
        at = _put(buf, at, weights[v])
        buf[at] = 32
        at = _put(buf, at + 1, v + 1)
        for k in range(indptr[v], indptr[v + 1]):
            buf[at] = 32
            at = _put(buf, at + 1, dst[k] + 1)
        buf[at] = 10
        at += 1
    return buf[:at]


MAX_DIGITS = 18  # of a number in a file: any int64 (larger ones would wrap around)


@numba.njit(cache=True, nogil=True)
def _scan(buf, values, line_tokens):
    """The integers of the non-comment lines of ``buf``, into ``values`` and, per line that
    has any, their count into ``line_tokens`` — or, given empty arrays, only counted. Returns
    (integers, lines, the offset of the first stray character or over-long number or -1)."""
    n = buf.size
    store = values.size > 0
    count = 0
    lines = 0
    i = 0
    while i < n:
        c = buf[i]
        if c == 37:  # '%': a comment line
            while i < n and buf[i] != 10:
                i += 1
            i += 1
            continue
        tokens = 0
        while i < n and buf[i] != 10:
            c = buf[i]
            if 48 <= c <= 57:
                start = i
                v = 0
                while i < n and 48 <= buf[i] <= 57:
                    if i - start >= MAX_DIGITS:
                        return count, lines, start
                    v = v * 10 + (buf[i] - 48)
                    i += 1
                if store:
                    values[count] = v
                count += 1
                tokens += 1
            elif c == 32 or c == 9 or c == 13:
                i += 1
            else:
                return count, lines, i  # a stray character
        i += 1
        if tokens > 0:
            if store:
                line_tokens[lines] = tokens
            lines += 1
    return count, lines, -1


def _read_ints(path, what: str, max_bytes: int) -> tuple[np.ndarray, np.ndarray, str]:
    """(every integer, integers per line, the comment lines) of a file of whole numbers, each
    array allocated once its size is counted."""
    path = Path(path)
    raw = read_bytes(path, what, max_bytes)
    buf = np.frombuffer(raw, dtype=np.uint8)
    none = np.zeros(0, dtype=np.int64)
    count, lines, bad = _scan(buf, none, none)
    if bad < 0:
        values, tokens = np.empty(count, dtype=np.int64), np.empty(lines, dtype=np.int64)
        count, lines, bad = _scan(buf, values, tokens)
    if bad >= 0:
        line = raw[: bad + 1].count(b"\n") + 1
        if 48 <= raw[bad] <= 57:
            held = f"a number of more than {MAX_DIGITS} digits"
        else:
            held = "something other than whole numbers"
        raise InputFileError(
            f"{path}: line {line} holds {held}; an hMETIS .hgr file holds only whole numbers "
            "(and comment lines starting with %)"
        )
    comments = [ln for ln in raw[:4096].decode("utf-8", "replace").splitlines() if ln[:1] == "%"]
    return values, tokens, " ".join(comments)


def read_hgr(path, *, limits: ReadLimits | None = None) -> Network:
    """The network of an hMETIS file (see the module's note). ``limits`` (the command line's
    generous ones by default) bound the file's bytes, and the vertices and pins its header
    and lines declare — checked before anything of their size is allocated."""
    path = Path(path)
    lim = limits or ReadLimits()
    values, tokens, comments = _read_ints(path, "hMETIS file", lim.bytes)
    if tokens.size == 0 or tokens[0] not in (2, 3):
        raise InputFileError(f"{path}: the first line must be 'n_edges n_vertices [fmt]'")
    n_edges, n_vertices = int(values[0]), int(values[1])
    if n_edges < 1 or n_vertices < 1:
        raise InputFileError(
            f"{path}: the header says {n_edges} h-edges and {n_vertices} vertices; a network "
            "needs at least one of each"
        )
    fmt = int(values[2]) if tokens[0] == 3 else 0
    if fmt not in (0, 1, 10, 11):
        raise InputFileError(f"{path}: unknown hMETIS fmt {fmt} (expected 0, 1, 10 or 11)")
    edge_w, vertex_w = fmt in (1, 11), fmt in (10, 11)
    lines = tokens[1:]
    if lines.size < n_edges + (n_vertices if vertex_w else 0):
        raise InputFileError(
            f"{path}: header promises {n_edges} h-edges"
            + (f" and {n_vertices} vertex weights" if vertex_w else "")
            + f" but the file has {lines.size} line{'' if lines.size == 1 else 's'} after "
            "its header: the header's first number counts the h-edge lines that follow"
        )
    if n_vertices > lim.neurons:
        raise CapacityError(
            f"{path}: the header declares {n_vertices:,} vertices; at most {lim.neurons:,} "
            "neurons are read here"
        )
    edge_tokens = lines[:n_edges]
    pins_total = int(edge_tokens.sum()) - n_edges * (1 + edge_w)  # destinations, at most
    if pins_total > lim.synapses:
        raise CapacityError(
            f"{path}: its h-edges list {pins_total:,} destinations; at most {lim.synapses:,} "
            "synapses are read here"
        )
    starts = int(tokens[0]) + np.concatenate([[0], np.cumsum(edge_tokens)])
    if np.any(edge_tokens < 1 + edge_w):
        bad = int(np.flatnonzero(edge_tokens < 1 + edge_w)[0])
        raise InputFileError(f"{path}: h-edge {bad + 1} has no pins")
    weight = values[starts[:-1]] if edge_w else np.ones(n_edges, dtype=np.int64)
    first_pin = starts[:-1] + edge_w
    source = values[first_pin] - 1
    pins_per_edge = edge_tokens - edge_w
    pins = values[np.repeat(first_pin, pins_per_edge) + _ranks(pins_per_edge)] - 1
    if pins.size and (pins.min() < 0 or pins.max() >= n_vertices):
        raise InputFileError(f"{path}: a pin lies outside 1..{n_vertices}")
    edge_of_pin = np.repeat(np.arange(n_edges), pins_per_edge)
    is_dest = np.ones(pins.size, dtype=bool)
    is_dest[np.concatenate([[0], np.cumsum(pins_per_edge)[:-1]])] = False
    src, dst = source[edge_of_pin[is_dest]], pins[is_dest]
    key = distinct(src * n_vertices + dst)  # several h-edges of one source merge
    src, dst = key // n_vertices, key % n_vertices
    indptr = np.concatenate([[0], np.cumsum(np.bincount(src, minlength=n_vertices))])
    scale = _scale(comments) or max(1, int(weight.max()))
    rate = np.zeros(n_vertices)
    np.maximum.at(rate, source, np.minimum(weight / scale, 1.0))
    return Network(
        name=path.name,
        indptr=indptr,
        indices=dst,
        population=np.zeros(n_vertices, dtype=np.int32),
        population_names=("hgr",),
        rate=rate,
        description=f"hMETIS hypergraph {path.name}: {n_vertices} vertices, {n_edges} h-edges",
    )


def _ranks(sizes: np.ndarray) -> np.ndarray:
    """0..size-1 for every group, concatenated."""
    starts = np.cumsum(sizes) - sizes  # (no groups: none)
    return np.arange(int(sizes.sum())) - np.repeat(starts, sizes)


def _scale(comments: str) -> int:
    for word in comments.split():
        if word.startswith("rate_scale="):
            try:
                return max(1, int(word.split("=", 1)[1]))
            except ValueError:
                return 0
    return 0


def read_partition_file(path, n_neurons: int) -> np.ndarray:
    """Block ids, one per vertex, renumbered 0..k-1 in order of first use. The file is read
    only if no larger than ``n_neurons`` lines of block ids could be (``PARTITION_LINE_BYTES``
    a line, and room for comments)."""
    most = min(MAX_FILE_BYTES, PARTITION_LINE_BYTES * n_neurons + 2**20)
    values, tokens, _ = _read_ints(path, f"partition file (of {n_neurons:,} neurons)", most)
    if values.size != n_neurons or np.any(tokens != 1):
        raise InputFileError(
            f"{path}: a partition file has one block id per line for each of the "
            f"{n_neurons} neurons; this one has {values.size} numbers on {tokens.size} lines"
        )
    _, first, inverse = np.unique(values, return_index=True, return_inverse=True)
    rank = np.empty(first.size, dtype=np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(first.size)
    return rank[inverse]
