"""Fill-order placements of Loihi 2 mapping ES §4.3.1 (Fig. 4) and a random placement.

Partitions take physical cores in partition-id order (for a layered partition:
layer by layer). *Packed* fills all cores of a router before the next router;
*spread* uses one core of every router before it uses a second. *Row* visits routers
x-fastest (row-major), *col* y-fastest (column-major). On several chips, packed
orders fill chip by chip; spread orders visit every router of every chip first.
"""

from __future__ import annotations

import numpy as np

from engine.hardware import Hardware
from engine.mapping.assignment import Placement
from engine.mapping.partition_graph import PartitionGraph
from engine.mapping.placement import register
from engine.mapping.resources import require_cores

# sort keys, most significant first, from the core table's columns
ORDERS = {
    "packed-row": ("chip", "y", "x", "slot"),
    "packed-col": ("chip", "x", "y", "slot"),
    "spread-row": ("slot", "chip", "y", "x"),
    "spread-col": ("slot", "chip", "x", "y"),
}

# What the four orders gave on hardware: sparse-mlp-1 at min+2 on one Loihi 2 chip, µs per
# step, Loihi 2 mapping ES §5.2, measured on a Kapoho Point (N3D1 Loihi 2)
MEASURED_US = {
    "packed-row": 30.14,
    "spread-row": 32.58,
    "packed-col": 34.86,
    "spread-col": 40.76,
}


def core_order(hardware: Hardware, name: str) -> np.ndarray:
    ct = hardware.core_table
    keys = [ct[k] for k in reversed(ORDERS[name])]  # np.lexsort: last key is primary
    return np.lexsort(keys)


def _take(order: np.ndarray, n_parts: int, hardware: Hardware, name: str) -> Placement:
    require_cores(n_parts, hardware, f"the {name} placement")
    return Placement(order[:n_parts])


def _fill_placer(name):
    def placer(graph: PartitionGraph, hardware: Hardware, *, rng=None) -> Placement:
        return _take(core_order(hardware, name), graph.n_parts, hardware, name)

    placer.__name__ = name.replace("-", "_")
    placer.__doc__ = (
        f"Loihi 2 mapping ES §4.3.1 heuristic: {name.replace('-', ', ')}-major fill order."
    )
    return register(name, tags=("heuristic",))(placer)


for _name in ORDERS:
    _fill_placer(_name)


@register("random", tags=("heuristic",))
def random_placement(graph: PartitionGraph, hardware: Hardware, *, rng=None) -> Placement:
    """Uniformly random distinct cores (Loihi 2 mapping ES §5.2's fifth initial placement)."""
    rng = rng if rng is not None else np.random.default_rng(0)
    return _take(rng.permutation(hardware.n_cores), graph.n_parts, hardware, "random")
