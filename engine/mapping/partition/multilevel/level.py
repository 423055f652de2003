"""One level of the multilevel hierarchy, and the limit test every phase shares.

A level is a hypergraph whose nodes are groups of neurons: its h-edges as a pins CSR
(the source node first, then the other destination nodes), whether the source is also a
destination, the spike-rate weight ``w`` of each h-edge and how many original axons
``m`` it stands for, the node → h-edge incidence, and per node its neurons, inbound
synapses and *distinct* inbound axons — so the core limits stay exact at every level.
"""

from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np

from engine.mapping.resources import Capacity
from engine.model.hypergraph import transpose

__all__ = ["Level", "caps_of", "fits", "make_level"]


@dataclass
class Level:
    """One level's hypergraph: pins CSR (source node first, then the other destination
    nodes), ``src_dest`` (the source node is also a destination), weights, sizes, the
    node → h-edge incidence, and per node: neurons, synapses, distinct inbound axons."""

    ptr: np.ndarray
    pins: np.ndarray  # int32: half the memory of every level's pins
    src_dest: np.ndarray
    w: np.ndarray
    m: np.ndarray
    neurons: np.ndarray
    synapses: np.ndarray
    axons: np.ndarray

    @property
    def n(self) -> int:
        return self.neurons.size

    def hedges(self):
        """The h-edges with the node → h-edge incidence, built here (O(pins)) rather than
        kept for every level: only the level being worked on holds one."""
        inc_ptr, inc = transpose(self.ptr, self.pins, self.n, dtype=np.int32)
        return self.ptr, self.pins, self.src_dest, self.w, self.m, inc_ptr, inc

    def loads(self):
        return self.neurons, self.synapses, self.axons


def make_level(ptr, pins, src_dest, w, m, neurons, synapses, axons) -> Level:
    return Level(ptr, pins.astype(np.int32, copy=False), src_dest, w, m, neurons, synapses, axons)


def caps_of(cap: Capacity) -> tuple[int, int, int]:
    return cap.neurons, cap.synapses, cap.axons


@numba.njit(cache=True, nogil=True)
def fits(p, u, pn, ps, pa, nn, ns, na, shared, caps):
    """Node u fits partition p that already receives ``shared`` of u's inbound axons."""
    return (
        pn[p] + nn[u] <= caps[0] and ps[p] + ns[u] <= caps[1] and pa[p] + na[u] - shared <= caps[2]
    )
