"""Routing memory of a network placed on a Mosaic, and whether it fits (routing paper Fig. 2c).

Every tile is a crossbar whose *input rows* are what runs out:

* a **Routing Tile** needs one row for every neuron whose spikes pass it. With shared-path
  routing (the default) a neuron's spike enters an RT once however many of its destinations
  lie beyond; unicast routing (``shared=False``) gives every (neuron, destination tile) route
  its own row. Its *entries* are the programmed cells: one per (row, output direction).
* a **Neuron Tile** needs one row for every neuron, its own or another tile's or a spike
  source's, with a synapse onto one of its neurons; its entries are those synapses.

A placement fits (is *mappable*) when no tile needs more rows than its crossbar has
(``[mosaic] nt_inputs`` / ``rt_inputs``). All counts are numpy over the network's synapses;
routes are built once per pair of NTs that talk (``MosaicGrid.routes``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from engine.arrays import distinct
from engine.errors import CapacityError
from engine.model.network import Network
from engine.mosaic.grid import NT, TILE_KINDS, MosaicGrid

__all__ = ["RoutingMemory", "nt_of_neurons", "removal_plan", "removals", "routing_memory"]


def nt_of_neurons(network: Network, hardware, mapping) -> np.ndarray:
    """Per neuron, the Neuron Tile a ``Mapping`` puts it on (-1 for a spike source)."""
    grid = MosaicGrid(hardware)
    part = mapping.partition.assignment
    nt = np.where(part >= 0, mapping.placement.cores[np.maximum(part, 0)], -1)
    over = np.bincount(nt[nt >= 0], minlength=grid.n_nt)
    if over.max(initial=0) > hardware.limits.neurons:
        t = int(over.argmax())
        raise CapacityError(
            f"Neuron Tile {t} holds {int(over[t])} neurons, more than its "
            f"{hardware.limits.neurons}: partition into more tiles"
        )
    return nt.astype(np.int64)


@dataclass(frozen=True, eq=False)
class RoutingMemory:
    """What every tile of a Mosaic needs for one placed network."""

    grid: MosaicGrid
    shared: bool
    rows: np.ndarray  # per tile (tile rows × tile cols): input rows needed
    entries: np.ndarray  # per tile: programmed cells (RT: row × output; NT: synapses)
    # every (source neuron, destination NT) pair with its connections (distinct synapses);
    # which pairs are routed
    # (source on another NT); and per RT a route passes, its pair and flat tile id
    pair_source: np.ndarray = field(repr=False)
    pair_nt: np.ndarray = field(repr=False)
    pair_synapses: np.ndarray = field(repr=False)
    routed: np.ndarray = field(repr=False)
    route_pair: np.ndarray = field(repr=False)
    route_tile: np.ndarray = field(repr=False)

    @property
    def capacity(self) -> np.ndarray:
        return self.grid.capacity

    @property
    def occupancy(self) -> np.ndarray:
        """Rows needed / rows there, per tile (above 1: it overflows)."""
        return self.rows / self.capacity

    @property
    def overflowing(self) -> np.ndarray:
        """Flat ids of the tiles that need more rows than they have."""
        return np.flatnonzero((self.rows > self.capacity).ravel())

    @property
    def mappable(self) -> bool:
        return self.overflowing.size == 0

    @property
    def routing_entries(self) -> int:
        """Cells programmed in all Routing Tiles: the routing memory (Fig. 3b's count)."""
        return int(self.entries[self.grid.kind != NT].sum())

    @property
    def synapse_entries(self) -> int:
        return int(self.entries[self.grid.kind == NT].sum())

    def tiles(self, ids: np.ndarray | None = None) -> list[dict]:
        """One row per tile (those of the flat ``ids``, else all): where, what, rows needed
        against rows there, entries."""
        ids = np.arange(self.grid.n_tiles) if ids is None else np.asarray(ids)
        width = self.grid.shape[1]
        kind, cap = self.grid.kind.ravel(), self.capacity.ravel()
        rows, entries = self.rows.ravel(), self.entries.ravel()
        return [
            {
                "tile": [int(i // width), int(i % width)],
                "kind": TILE_KINDS[kind[i]],
                "rows": int(rows[i]),
                "capacity": int(cap[i]),
                "entries": int(entries[i]),
            }
            for i in ids
        ]

    def overflowing_tiles(self) -> list[dict]:
        return self.tiles(self.overflowing)

    def summary(self) -> dict:
        kind = self.grid.kind
        rt, nt = kind != NT, kind == NT
        return {
            "mappable": self.mappable,
            "routing": "shared-path" if self.shared else "unicast",
            "routing_entries": self.routing_entries,
            "synapse_entries": self.synapse_entries,
            "max_rt_rows": int(self.rows[rt].max(initial=0)),
            "max_nt_rows": int(self.rows[nt].max(initial=0)),
            "rt_inputs": int(self.grid.hardware.tiles.rt_inputs),
            "nt_inputs": int(self.grid.hardware.tiles.nt_inputs),
            "overflowing_tiles": self.overflowing_tiles(),
        }


def _gather(ptr: np.ndarray, values: np.ndarray, which: np.ndarray):
    """CSR rows ``which`` concatenated, and the position in ``which`` of every value."""
    lengths = ptr[which + 1] - ptr[which]
    owner = np.repeat(np.arange(which.size), lengths)
    starts = np.repeat(ptr[which] - np.concatenate([[0], np.cumsum(lengths)[:-1]]), lengths)
    return values[np.arange(int(lengths.sum())) + starts], owner


def routing_memory(
    network: Network, hardware, nt_of: np.ndarray, *, shared: bool = True
) -> RoutingMemory:
    """Rows and entries every tile needs for ``network`` with neuron i on NT ``nt_of[i]``
    (-1: a spike source, whose spikes enter the NTs directly and pass no RT). Several synapses
    between the same two neurons are one connection (one crossbar cell)."""
    grid = MosaicGrid(hardware)
    nt_of = np.asarray(nt_of, dtype=np.int64)
    if nt_of.shape != (network.n_neurons,) or nt_of.max(initial=-1) >= grid.n_nt:
        raise CapacityError(
            f"a Mosaic placement needs one NT (0..{grid.n_nt - 1}, or -1 for a spike source) "
            f"for each of the network's {network.n_neurons} neurons"
        )
    if network.projections:
        network = network.explicit(why="routing memory counts synapses one by one")
    homeless = np.flatnonzero(network.on_cores & (nt_of < 0))
    if homeless.size:
        raise CapacityError(
            f"neuron {int(homeless[0])} runs on a core but has no Neuron Tile (-1 is for a "
            "spike source's neurons only): place every neuron of the network's layers"
        )
    # one connection per (source, destination) pair: a crossbar has one cell for it
    n = network.n_neurons
    connections = distinct(network.sources.astype(np.int64) * n + network.indices)
    src, dst = connections // n, connections % n
    dst_nt = nt_of[dst]
    if np.any(dst_nt < 0):
        raise CapacityError("a synapse ends on a neuron with no Neuron Tile")
    n_tiles = grid.n_tiles
    # distinct (source neuron, destination NT) pairs — an NT's input rows — and their synapses
    key, syn = np.unique(src * grid.n_nt + dst_nt, return_counts=True)
    ps, pb = key // grid.n_nt, key % grid.n_nt
    rows = np.bincount(grid.nt_tile_id[pb], minlength=n_tiles)
    entries = np.bincount(grid.nt_tile_id[pb], weights=syn, minlength=n_tiles).astype(np.int64)
    # routed pairs: a source on another NT
    pa = nt_of[ps]
    routed = np.flatnonzero((pa >= 0) & (pa != pb))
    nt_pairs, which = np.unique(pa[routed] * grid.n_nt + pb[routed], return_inverse=True)
    ptr, route_entries = grid.routes(nt_pairs)
    cells, owner = _gather(ptr, route_entries, which)
    tiles, source = cells // 4, ps[routed][owner]
    if shared:  # one row per (neuron, RT), one cell per (neuron, RT, output)
        n_cells = n_tiles * 4
        entries += np.bincount(distinct(source * n_cells + cells) % n_cells // 4,
                               minlength=n_tiles)  # fmt: skip
        rows += np.bincount(distinct(source * n_tiles + tiles) % n_tiles, minlength=n_tiles)
    else:  # every route its own row and cells
        entries += np.bincount(tiles, minlength=n_tiles)
        rows += np.bincount(tiles, minlength=n_tiles)
    return RoutingMemory(
        grid, shared, rows.reshape(grid.shape), entries.reshape(grid.shape),
        ps, pb, syn, routed, routed[owner], tiles,
    )  # fmt: skip


def removal_plan(memory: RoutingMemory) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The rows to free at every overflowing tile, fewest synapses first, as arrays: for
    each freed row its tile (flat id), and the (source neuron, destination NT) pairs — the
    connections — it carries (``pairs`` indexes ``memory.pair_*``; ``row`` numbers the rows).

    A row is a (neuron, NT) pair at an NT; at an RT a neuron (shared paths: all its routes
    through the tile) or one route (unicast). Removing connections only ever frees rows, so
    removing every pair listed makes the network mappable (tested)."""
    grid = memory.grid
    over = (memory.rows > memory.capacity).ravel()
    excess = (memory.rows - memory.capacity).ravel()
    nt_tile = grid.nt_tile_id[memory.pair_nt]
    at_nt = np.flatnonzero(over[nt_tile])
    at_rt = np.flatnonzero(over[memory.route_tile])
    tile = np.concatenate([nt_tile[at_nt], memory.route_tile[at_rt]])
    pair = np.concatenate([at_nt, memory.route_pair[at_rt]])
    # a row's id within its tile: the pair at an NT or on a unicast route, else the neuron
    shared_rt = np.concatenate([np.zeros(at_nt.size, bool), np.full(at_rt.size, memory.shared)])
    gid = np.where(
        shared_rt, memory.pair_source[pair], memory.pair_source.max(initial=0) + 1 + pair
    )
    span = int(gid.max(initial=0)) + 1
    keys, row = np.unique(tile * span + gid, return_inverse=True)
    row_tile = keys // span
    cost = np.bincount(row, weights=memory.pair_synapses[pair], minlength=keys.size)
    order = np.lexsort((keys, cost, row_tile))  # per tile, cheapest first
    starts = np.searchsorted(row_tile[order], row_tile[order], side="left")
    chosen = np.zeros(keys.size, bool)
    chosen[order] = np.arange(order.size) - starts < excess[row_tile[order]]
    pick = chosen[row]
    return tile[pick], pair[pick], row[pick]


def removals(memory: RoutingMemory, *, limit: int = 50, plan=None) -> list[dict]:
    """Per overflowing tile, what ``removal_plan`` frees there: ``excess`` rows, and up to
    ``limit`` of them as {neuron, to_nt, synapses} (``listed`` says how many; ``--json``
    readers take the rest from the plan, or rewire); ``plan``: ``removal_plan(memory)``
    when the caller has it."""
    grid = memory.grid
    tile, pair, row = removal_plan(memory) if plan is None else plan
    if tile.size == 0:
        return []
    order = np.lexsort((row, tile))
    tile, pair, row = tile[order], pair[order], row[order]
    out = []
    cut = np.flatnonzero(np.diff(tile)) + 1
    for t_pairs, t_rows, t in zip(np.split(pair, cut), np.split(row, cut), tile[np.r_[0, cut]],
                                  strict=True):  # fmt: skip
        starts = np.r_[0, np.flatnonzero(np.diff(t_rows)) + 1]
        ends = np.r_[starts[1:], t_rows.size]
        syn = np.add.reduceat(memory.pair_synapses[t_pairs], starts)
        listed = np.argsort(syn, kind="stable")[:limit]
        groups = {int(i): t_pairs[starts[i] : ends[i]] for i in listed}
        out.append({
            **_tile(grid, int(t)),
            "excess": int(memory.rows.flat[t] - memory.capacity.flat[t]),
            "listed": int(listed.size),
            "remove": [
                {"neuron": int(memory.pair_source[groups[i][0]]),
                 "to_nt": np.sort(memory.pair_nt[groups[i]]).tolist(),
                 "synapses": int(syn[i])}
                for i in listed
            ],
        })  # fmt: skip
    return out


def _tile(grid: MosaicGrid, t: int) -> dict:
    return {"tile": [int(t // grid.shape[1]), int(t % grid.shape[1])],
            "kind": TILE_KINDS[grid.kind.flat[t]]}  # fmt: skip
