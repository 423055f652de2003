"""Spectral placement (SNN hypergraphs §IV-B2).

The partition-level h-graph (``graph.hedge_sets`` with weights ``graph.hedge_weights``)
is clique-expanded, W = Hᵀ diag(w) H without its diagonal, and normalized as in eq. 8:
L = I − D^{-1/2} W D^{-1/2} with D = diag(wdeg), wdeg(p) = Σ of the weights of the
h-edges that contain p. The two eigenvectors after the trivial one (the smallest
eigenvalues of L, i.e. the largest of D^{-1/2} W D^{-1/2}, found by ``eigsh`` from a
seeded start vector; dense ``eigh`` for small graphs) are the 2D coordinates of the
partitions. They are normalized to the unit square (min-max per axis;
``normalize="rank"`` spreads them by rank instead) and scaled to a compact
near-square block of routers just large enough for every partition
(``cores_per_router`` slots per router), centred in the grid, or in the middle chip
when the partitions fit on one chip of a multi-chip board. Partitions, in descending
total spike frequency of their h-edges, take the nearest free slot (a KD-tree; taken
slots are skipped). Partitions without h-edges to others carry no spectral
information and take the slots left over, nearest the block's centre first.

Eq. 8's wdeg counts each h-edge once per member while the clique expansion gives it
|e|−1 links, so L is not positive semidefinite; its lowest eigenvector is the Perron
vector of D^{-1/2} W D^{-1/2} (all one sign), which plays the part of the trivial
eigenvector. ``degree="clique"`` uses the row sums of W instead (the ordinary
normalized Laplacian, eigenvalue 0 for the trivial vector). A disconnected graph gets
a rank-one link of relative weight ``teleport`` between all connected partitions, so
that its components separate along the first coordinates instead of giving an
arbitrary basis of a degenerate eigenspace.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components
from scipy.sparse.linalg import ArpackNoConvergence, LinearOperator, eigsh
from scipy.spatial import cKDTree

from engine.errors import UnknownNameError
from engine.hardware import Hardware
from engine.mapping.assignment import Placement
from engine.mapping.partition_graph import PartitionGraph
from engine.mapping.placement import register
from engine.mapping.placement.grid import compact_block, home_block, router_cores
from engine.mapping.resources import require_cores

__all__ = ["spectral", "spectral_coordinates", "snap_to_slots"]

DENSE_BELOW = 400  # partitions: below this, dense eigh is fast and exact


def _clique_expansion(graph: PartitionGraph) -> tuple[sp.csr_matrix, np.ndarray]:
    """(W without diagonal, eq. 8 wdeg) of the partition h-graph."""
    h = graph.hedge_sets.astype(np.float64)
    w = np.asarray(graph.hedge_weights, dtype=np.float64)
    wdeg = np.asarray(h.T @ w).ravel()
    big = np.diff(h.indptr) > 1  # singleton h-edges add nothing off the diagonal
    hb = h[big]
    adj = (hb.T @ sp.diags(w[big]) @ hb).tocsr()
    adj.setdiag(0)
    adj.eliminate_zeros()
    return adj, wdeg


def spectral_coordinates(
    graph: PartitionGraph,
    *,
    rng: np.random.Generator | None = None,
    degree: str = "eq8",
    teleport: float = 1e-3,
    normalize: str = "minmax",
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(coordinates (n, 2) in [0, 1]², connected mask, visit score) of the partitions.

    Rows of unconnected partitions (no h-edge shared with another) are 0.5.
    """
    if degree not in ("eq8", "clique"):
        raise UnknownNameError("spectral degree", degree, ["eq8", "clique"])
    if normalize not in ("minmax", "rank"):
        raise UnknownNameError("spectral normalization", normalize, ["minmax", "rank"])
    rng = rng if rng is not None else np.random.default_rng(0)
    adj, wdeg = _clique_expansion(graph)
    n = graph.n_parts
    coords = np.full((n, 2), 0.5)
    linked = np.diff(adj.indptr) > 0
    idx = np.flatnonzero(linked)
    if idx.size >= 2:
        sub = adj[idx][:, idx]
        deg = wdeg[idx] if degree == "eq8" else np.asarray(sub.sum(axis=1)).ravel()
        vecs = _top_eigenvectors(sub, deg, teleport, rng)
        coords[idx] = _unit_square(vecs) if normalize == "minmax" else _ranks(vecs)
    return coords, linked, wdeg


def _top_eigenvectors(adj: sp.csr_matrix, deg: np.ndarray, teleport: float, rng) -> np.ndarray:
    """The 2nd and 3rd eigenvectors of A = D^{-1/2} W D^{-1/2} (largest eigenvalues first)."""
    n = adj.shape[0]
    inv = 1.0 / np.sqrt(deg)
    a = (sp.diags(inv) @ adj @ sp.diags(inv)).tocsr()
    n_comp, _ = connected_components(adj, directed=False)
    # rank-one link between all partitions: A += t · s sᵀ with s = √deg / ‖√deg‖
    s = np.sqrt(deg) / np.linalg.norm(np.sqrt(deg))
    t = teleport if n_comp > 1 else 0.0
    if n < DENSE_BELOW:
        return _dense_top(a.toarray() + t * np.outer(s, s))
    op = LinearOperator((n, n), matvec=lambda x: a @ x + t * s * (s @ x), dtype=np.float64)
    v0 = s + 0.1 * rng.standard_normal(n) / np.sqrt(n)
    try:
        vals, vecs = eigsh(op, k=3, which="LA", v0=v0, ncv=min(n, 40), tol=1e-8, maxiter=20 * n)
    except ArpackNoConvergence as e:  # keep what converged; fall back to dense otherwise
        if e.eigenvalues.size < 3:
            return _dense_top(a.toarray() + t * np.outer(s, s))
        vals, vecs = e.eigenvalues, e.eigenvectors
    order = np.argsort(-vals)
    return vecs[:, order[1:3]]


def _dense_top(a: np.ndarray) -> np.ndarray:
    """2nd and 3rd eigenvectors of a small symmetric matrix (a zero column if n = 2)."""
    vecs = np.linalg.eigh(a)[1][:, ::-1][:, 1:3]
    return np.hstack([vecs, np.zeros((a.shape[0], 2 - vecs.shape[1]))])


def _unit_square(vecs: np.ndarray) -> np.ndarray:
    """Each coordinate min-max normalized to [0, 1] (a constant one becomes 0.5)."""
    lo, hi = vecs.min(axis=0), vecs.max(axis=0)
    span = np.where(hi > lo, hi - lo, 1.0)
    out = (vecs - lo) / span
    out[:, hi <= lo] = 0.5
    return out


def _ranks(vecs: np.ndarray) -> np.ndarray:
    """Each coordinate replaced by its rank, scaled to [0, 1] (ties: lower id first)."""
    ranks = np.argsort(np.argsort(vecs, axis=0, kind="stable"), axis=0, kind="stable")
    return ranks / max(len(vecs) - 1, 1)


def snap_to_slots(points: np.ndarray, slots: np.ndarray, order: np.ndarray) -> np.ndarray:
    """Slot index for each point, points taken in ``order``, each the nearest free slot.

    ``slots`` may repeat a point (several cores on one router). One KD-tree query
    gives each point its 16 nearest slots; a point whose candidates are all taken
    queries again with twice as many.
    """
    tree = cKDTree(slots)
    k = min(16, len(slots))
    _, cand = tree.query(points, k=k)
    cand = cand.reshape(len(points), -1)
    taken = np.zeros(len(slots), dtype=bool)
    out = np.empty(len(points), dtype=np.int64)
    for i in order.tolist():
        row = cand[i]
        free = row[~taken[row]]
        kk = k
        while free.size == 0:
            kk = min(2 * kk, len(slots))
            _, row = tree.query(points[i], k=kk)
            row = np.atleast_1d(row)
            free = row[~taken[row]]
        out[i] = free[0]
        taken[free[0]] = True
    return out


@register("spectral")
def spectral(
    graph: PartitionGraph,
    hardware: Hardware,
    *,
    rng=None,
    degree: str = "eq8",
    teleport: float = 1e-3,
    normalize: str = "minmax",
) -> Placement:
    """SNN hypergraphs §IV-B2: eq. 8 Laplacian eigenvectors in a compact block, KD-snapped."""
    require_cores(graph.n_parts, hardware, "the spectral placement")
    coords, linked, score = spectral_coordinates(
        graph, rng=rng, degree=degree, teleport=teleport, normalize=normalize
    )
    k = hardware.cores_per_router
    hx, hy, hw, hh = home_block(hardware, graph.n_parts)
    x0, y0, w, h = compact_block(-(-graph.n_parts // k), hw, hh)
    x0, y0 = x0 + hx, y0 + hy
    if w < h:  # the first eigenvector, the broadest variation, along the longer side
        coords = coords[:, ::-1]
    points = np.stack([x0 + coords[:, 0] * (w - 1), y0 + coords[:, 1] * (h - 1)], axis=1)
    gx, gy = np.meshgrid(np.arange(x0, x0 + w), np.arange(y0, y0 + h))
    routers = (gy * hardware.grid_width + gx).ravel()
    slots = np.repeat(np.stack([gx.ravel(), gy.ravel()], axis=1), k, axis=0)
    slot_core = router_cores(hardware)[routers].ravel()
    # connected partitions by descending score, then the others (stable: lower id first)
    order = np.lexsort((-score, ~linked))
    return Placement(slot_core[snap_to_slots(points, slots.astype(float), order)])
