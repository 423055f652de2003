"""Hardware-aware rewiring: DeepR with a hop-distance profile (routing paper Alg. 2).

``Rewiring`` holds a connectivity mask beside a dense weight matrix θ (N × N, rows the
presynaptic neurons) and keeps it within a target profile P̂ = (p̂₀, p̂₁, …) — at most
⌊p̂_d × pairs_d⌋ connections between neurons d hops apart, none beyond the target's last
distance — while the total number of connections stays what it was (DeepR's fixed budget):

* ``enforce``  (Alg. 2 lines 4–5 once): prune the weakest connections of every class above its
  cap, regrow as many at random in classes with room (a target too small for the connection
  count is an error saying how many it holds);
* ``step``     (lines 3–6): one SGD step on L + λ‖θ‖₁ over the active connections with a gradient
  from any training loop, prune those whose weight changed sign (DeepR's rule), regrow as many.

Regrown connections start at ±``regrow_scale`` with a random sign. ``rewire`` does
``enforce`` and, given a gradient callback, ``steps`` more DeepR steps.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

from engine.arrays import csr_from_pairs, distinct
from engine.errors import CapacityError, SpecError
from engine.model.network import Network
from engine.mosaic.check import check
from engine.mosaic.profile import MAX_DENSE, capacities, hop_matrix

__all__ = ["Rewiring", "RewireResult", "rewire", "rewire_checked", "rewire_network"]


@dataclass
class Rewiring:
    """DeepR under a hop profile for one N × N weight matrix (see the module's docstring)."""

    hops: np.ndarray  # N × N hop distance of every pair (-1: a pair that may not connect)
    target: tuple[float, ...]
    l1: float = 0.0
    regrow_scale: float = 1e-3
    seed: int = 0

    def __post_init__(self):
        h = np.asarray(self.hops)
        if h.ndim != 2 or h.shape[0] != h.shape[1]:
            raise SpecError(f"hops must be an N x N matrix, not of shape {h.shape}")
        self.hops = h
        self.rng = np.random.default_rng(self.seed)
        n_classes = int(h.max(initial=0)) + 1
        self.pairs = np.bincount(h[h >= 0].ravel(), minlength=n_classes).astype(np.int64)
        self.caps = capacities(self.target, self.pairs)
        self._class = np.where(h >= 0, h, n_classes).ravel()  # class per flat pair; n: none

    @property
    def capacity(self) -> int:
        """Connections the target holds in all."""
        return int(self.caps.sum())

    def counts(self, mask: np.ndarray) -> np.ndarray:
        """Connections per hop distance."""
        return np.bincount(self._class[mask.ravel()], minlength=self.caps.size + 1)[:-1]

    def initial(self, scale: float = 0.1) -> tuple[np.ndarray, np.ndarray]:
        """Alg. 2 line 1: weights and mask with every class at its cap (P(θ) = P̂), weights
        Gaussian of standard deviation ``scale``."""
        mask = np.zeros(self.hops.shape, bool)
        self._regrow(mask, self.caps.copy())
        w = np.where(mask, self.rng.normal(0.0, scale, mask.shape), 0.0)
        return w, mask

    def enforce(self, weights: np.ndarray, mask: np.ndarray | None = None):
        """Prune every class to its cap (weakest first) and regrow the pruned count where
        there is room: P(θ) ≤ P̂, connections kept. Returns (weights, mask, pruned)."""
        w = np.array(weights, dtype=float)
        mask = (w != 0) if mask is None else np.array(mask, bool)
        if np.any(mask & (self.hops < 0)):
            raise SpecError("a connection joins a neuron that has no Neuron Tile")
        total = int(mask.sum())
        if total > self.capacity:
            raise CapacityError(
                f"the target profile {','.join(f'{v:g}' for v in self.target)} holds "
                f"{self.capacity:,} connections on this placement, the network has {total:,}: "
                f"raise the densities (or prune the network first)"
            )
        pruned = self._prune(w, mask)
        grown = self._regrow(mask, self._spread(pruned, self.caps - self.counts(mask)))
        w[grown] = self._fresh(grown[0].size)
        return w, mask, pruned

    def _prune(self, w: np.ndarray, mask: np.ndarray) -> int:
        """Drop the weakest connections of every class above its cap (ties at random), in
        place; returns how many went."""
        counts = self.counts(mask)
        flat_w, flat_m = np.abs(w).ravel(), mask.ravel()
        drop = []
        for d in np.flatnonzero(counts > self.caps):  # one pass per hop distance
            members = np.flatnonzero(flat_m & (self._class == d))
            weakest = np.lexsort((self.rng.random(members.size), flat_w[members]))  # ties: random
            drop.append(members[weakest[: counts[d] - self.caps[d]]])
        idx = np.unravel_index(np.concatenate(drop) if drop else np.zeros(0, int), mask.shape)
        mask[idx] = False
        w[idx] = 0.0
        return int(idx[0].size)

    def step(self, weights: np.ndarray, mask: np.ndarray, grad: np.ndarray, lr: float):
        """One DeepR step (Alg. 2 lines 3–6) with ``grad`` = ∂L/∂θ from the caller's loop:
        SGD + L1 on the active connections, prune those whose sign flipped and any class
        above its cap, regrow as many where there is room. Returns (weights, mask, rewired)."""
        w = np.asarray(weights, dtype=float)
        mask = np.array(mask, dtype=bool, order="C")
        new = np.where(mask, w - lr * (grad + self.l1 * np.sign(w)), 0.0)
        flipped = mask & (np.sign(new) != np.sign(w))
        mask &= ~flipped
        new[~mask] = 0.0
        n = int(flipped.sum()) + self._prune(new, mask)
        grown = self._regrow(mask, self._spread(n, self.caps - self.counts(mask)))
        new[grown] = self._fresh(grown[0].size)
        return new, mask, n

    def _fresh(self, n: int) -> np.ndarray:
        return self.regrow_scale * self.rng.choice((-1.0, 1.0), size=n)

    def _spread(self, n: int, room: np.ndarray) -> np.ndarray:
        """``n`` new connections over the classes with ``room``, at random in proportion to
        it (multivariate hypergeometric: never more than a class's room)."""
        room = np.maximum(room, 0)
        if n == 0 or room.sum() == 0:
            return np.zeros_like(room)
        return self.rng.multivariate_hypergeometric(room, min(n, int(room.sum())))

    def _regrow(self, mask: np.ndarray, per_class: np.ndarray):
        """Switch on ``per_class[d]`` random unconnected pairs of each class d (in place);
        returns their indices."""
        flat = mask.ravel()  # a copy for a mask not in C order: written back below
        grown = []
        for d in np.flatnonzero(per_class):  # one draw per hop distance
            free = np.flatnonzero(~flat & (self._class == d))
            grown.append(self.rng.choice(free, size=int(per_class[d]), replace=False))
        idx = np.unravel_index(np.concatenate(grown) if grown else np.zeros(0, int), mask.shape)
        mask[idx] = True
        return idx


@dataclass(frozen=True)
class RewireResult:
    weights: np.ndarray
    mask: np.ndarray
    connections_before: int
    connections_after: int
    pruned: int  # by enforcing the target (then regrown elsewhere)
    rewired: int  # by the DeepR steps after it


def rewire(
    weights: np.ndarray,
    hops: np.ndarray,
    target,
    *,
    seed: int = 0,
    gradient: Callable[[np.ndarray], np.ndarray] | None = None,
    steps: int = 0,
    lr: float = 0.01,
    l1: float = 0.0,
) -> RewireResult:
    """Rewire ``weights`` (N × N) to the hop profile ``target`` keeping its connections:
    ``Rewiring.enforce``, then ``steps`` DeepR steps with ``gradient(weights)`` if given."""
    if gradient is not None and steps < 1:
        raise SpecError("a gradient callback needs steps of 1 or more to be called")
    rw = Rewiring(hops, tuple(target), l1=l1, seed=seed)
    before = int(np.count_nonzero(weights))
    w, mask, pruned = rw.enforce(weights)
    rewired = 0
    if gradient is not None:
        for _ in range(steps):  # the caller's training steps
            w, mask, n = rw.step(w, mask, gradient(w), lr)
            rewired += n
    return RewireResult(w, mask, before, int(mask.sum()), pruned, rewired)


def rewire_network(network: Network, hardware, nt_of: np.ndarray, target, *, seed: int = 0):
    """``rewire`` on a network's synapses between neurons on NTs (a spike source's synapses
    stay as they are); weights of 1 where the network has none. Returns the rewired network
    (same neurons and populations) and the ``RewireResult``."""
    if network.projections:
        network = network.explicit(why="rewiring moves synapses one by one")
    nt_of = np.asarray(nt_of, dtype=np.int64)
    on = np.flatnonzero(nt_of >= 0)
    if on.size > MAX_DENSE:
        raise SpecError(f"rewiring works on a dense matrix of at most {MAX_DENSE} neurons")
    pos = np.full(network.n_neurons, -1, np.int64)
    pos[on] = np.arange(on.size)
    src, dst = network.sources.astype(np.int64), network.indices.astype(np.int64)
    w_syn = np.ones(src.size) if network.weights is None else network.weights.astype(float)
    repeated = src.size - distinct(src * network.n_neurons + dst).size
    if repeated:  # a connection matrix holds one weight a pair
        raise SpecError(
            f"{network.name}: {repeated} synapses repeat a (source, "
            "destination) pair; rewiring works on a connection matrix, one weight a pair: "
            "merge them first"
        )
    inner = (pos[src] >= 0) & (pos[dst] >= 0)
    dense = np.zeros((on.size, on.size))
    dense[pos[src[inner]], pos[dst[inner]]] = w_syn[inner]
    result = rewire(dense, hop_matrix(hardware, nt_of[on]), target, seed=seed)
    s_new, d_new = np.nonzero(result.weights)
    src_all = np.concatenate([src[~inner], on[s_new]])
    dst_all = np.concatenate([dst[~inner], on[d_new]])
    w_all = np.concatenate([w_syn[~inner], result.weights[s_new, d_new]])
    indptr, indices = csr_from_pairs(network.n_neurons, src_all, dst_all)
    rewired = replace(
        network,
        name=f"{network.name} rewired to {','.join(f'{v:g}' for v in target)}",
        indptr=indptr,
        indices=indices,
        weights=w_all[np.lexsort((dst_all, src_all))].astype(np.float32),
    )
    return rewired, result


def rewire_checked(network: Network, hardware, nt_of: np.ndarray, target, *, seed: int = 0):
    """``rewire_network``, and what it changed: the rewired network and a report of its
    connections, hop profile, routing entries and mappability before and after
    (``engine.mosaic.check``)."""
    out, result = rewire_network(network, hardware, nt_of, target, seed=seed)
    _, before = check(network, hardware, nt_of, plan=False)
    _, after = check(out, hardware, nt_of, plan=False)
    return out, {
        "network": network.name,
        "hardware": hardware.name,
        "target": list(target),
        "connections_before": result.connections_before,
        "connections_after": result.connections_after,
        "pruned": result.pruned,
        "profile_before": before["profile"],
        "profile": after["profile"],
        "routing_entries_before": before["routing_entries"],
        "routing_entries_after": after["routing_entries"],
        "mappable_before": before["mappable"],
        "mappable_after": after["mappable"],
    }
