"""The Mosaic's tile grid, hop distances and routes (Mosaic routing paper §II, §III, Figs. 1–2).

The paper draws Neuron Tiles (NT) alternated with Routing Tiles, RT₀ next to the NTs and RT₁
that "interface with RT₀s" and alone may turn, but prints no coordinates. MeshScope reads
Fig. 1a as this grid, for R × C Neuron Tiles (a preset's ``routers = [C, R]``)::

    tile (row, col) in a (2R + 1) × (2C + 1) grid
    NT   both odd        NT (y, x) sits at tile (2y + 1, 2x + 1); NT index y * C + x
    RT₁  both even       the crossings of the routing channels: may turn
    RT₀  one odd, one even   between two NTs across a channel, and between two RT₁s along it

So even tile rows and columns are routing channels (RT₁, RT₀, RT₁, …) and every NT has an
RT₀ on each of its four sides. An RT₀ passes a spike straight on along its channel, or
straight across it from one NT to the other; taking a spike in from its NT or handing one
out to it is its local port, not a turn. The hop distance H(NTᵢ, NTⱼ) is the number of RTs
a spike passes (§III: "the number of RTs that the information traverses"). For NTs
Δx, Δy apart (absolute values)::

    H = 0                     same tile
    H = 1                     (Δx, Δy) = (1, 0) or (0, 1): the RT₀ between them
    H = 2Δx + 2Δy − 1         Δx ≥ 1 and Δy ≥ 1
    H = 2Δ + 1                Δ ≥ 2 along one axis: out into a channel and back

so distances are 0, 1, 3, 5, …, never 2: the paper's Fig. 3a sweeps (p₁, p₃), the classes of
neighbours and diagonal neighbours. From the centre of a 3 × 3 Mosaic (Fig. 1b)::

    3 1 3
    1 0 1
    3 1 3

**1-turn routing** (Fig. 2a): X first, then Y, turning once, in an RT₁. A spike leaves its NT
into the channel on the side of its destination (south when it stays in its row), runs along
it to the RT₁ before the destination's column, turns, runs along that column channel and is
handed to the destination by the RT₀ beside it. A destination one row away is handed over
from the first channel without a turn; one column away, from the RT₀ between the two; straight
above or below, the route takes the column channel east of the source. Every route of one
source starts the same way towards the same side, so the union of a neuron's routes is a tree
(**shared-path routing**, Fig. 2b): each RT receives the spike once, and a branch costs one
more output there, not another route.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from engine.errors import InvalidHardwareError
from engine.hardware import DIRECTIONS, Hardware

__all__ = ["MosaicGrid", "NT", "RT0", "RT1", "TILE_KINDS"]

NT, RT0, RT1 = 0, 1, 2
TILE_KINDS = ("NT", "RT0", "RT1")
_STEP = {0: (0, 1), 1: (0, -1), 2: (1, 0), 3: (-1, 0)}  # direction index -> (drow, dcol)
E, W, S, N = range(4)


@dataclass(frozen=True)
class MosaicGrid:
    """The tiles of a Mosaic ``Hardware`` (a preset with a ``[mosaic]`` table)."""

    hardware: Hardware

    def __post_init__(self):
        if self.hardware.tiles is None:
            raise InvalidHardwareError(
                f"hardware {self.hardware.name!r} is a router mesh, not a Mosaic (its preset has "
                "no [mosaic] table): use mosaic-8x8, or mosaic-8x8@RxC for another grid"
            )

    @property
    def rows(self) -> int:
        """Neuron Tiles down (the preset's routers y)."""
        return self.hardware.height

    @property
    def columns(self) -> int:
        return self.hardware.width

    @property
    def n_nt(self) -> int:
        return self.rows * self.columns

    @property
    def shape(self) -> tuple[int, int]:
        """Tile rows × tile columns: (2R + 1) × (2C + 1)."""
        return 2 * self.rows + 1, 2 * self.columns + 1

    @property
    def n_tiles(self) -> int:
        return self.shape[0] * self.shape[1]

    @cached_property
    def kind(self) -> np.ndarray:
        """Per tile (row, col): NT, RT0 or RT1."""
        r, c = np.indices(self.shape)
        odd = (r % 2) + (c % 2)
        return np.select([odd == 2, odd == 0], [NT, RT1], RT0).astype(np.int8)

    @cached_property
    def capacity(self) -> np.ndarray:
        """Per tile: its crossbar's input rows (nt_inputs or rt_inputs)."""
        t = self.hardware.tiles
        return np.where(self.kind == NT, t.nt_inputs, t.rt_inputs).astype(np.int64)

    def nt_tile(self, nt) -> tuple[np.ndarray, np.ndarray]:
        """Tile (row, col) of Neuron Tile ``nt`` (an index or an array)."""
        nt = np.asarray(nt)
        return 2 * (nt // self.columns) + 1, 2 * (nt % self.columns) + 1

    @cached_property
    def nt_tile_id(self) -> np.ndarray:
        """Flat tile id (row * tile columns + col) of every NT."""
        r, c = self.nt_tile(np.arange(self.n_nt))
        return (r * self.shape[1] + c).astype(np.int64)

    # ------------------------------------------------------------ distances
    def hop_distance(self, a, b) -> np.ndarray:
        """H(NT_a, NT_b): Routing Tiles a spike passes from NT ``a`` to NT ``b`` (arrays
        broadcast)."""
        a, b = np.asarray(a), np.asarray(b)
        dx = np.abs(a % self.columns - b % self.columns)
        dy = np.abs(a // self.columns - b // self.columns)
        straight = 2 * (dx + dy) + 1  # along one axis, two or more apart
        return np.select(
            [dx + dy == 0, dx + dy == 1, (dx > 0) & (dy > 0)],
            [0, 1, 2 * (dx + dy) - 1],
            straight,
        ).astype(np.int64)

    @cached_property
    def hops(self) -> np.ndarray:
        """The NT × NT hop-distance table."""
        nt = np.arange(self.n_nt)
        return self.hop_distance(nt[:, None], nt[None, :])

    @cached_property
    def max_hops(self) -> int:
        """The farthest two NTs are apart: from a corner to the others (no NT × NT table)."""
        corners = [self.columns - 1, (self.rows - 1) * self.columns, self.n_nt - 1]
        return int(self.hop_distance(0, np.array(corners)).max())

    def pairs_per_distance(self, per_nt: np.ndarray) -> np.ndarray:
        """Σ n_a n_b over NT pairs (a, b) at each hop distance 0 … max_hops, for ``per_nt``
        neurons on each NT: the 2-D autocorrelation of the occupancy grid (by FFT, no
        NT × NT table), binned by the distance of each offset (Δx, Δy)."""
        from scipy.signal import fftconvolve

        grid = np.asarray(per_nt, dtype=float).reshape(self.rows, self.columns)
        corr = np.rint(fftconvolve(grid, grid[::-1, ::-1], mode="full")).astype(np.int64)
        dy, dx = np.indices(corr.shape)
        dy, dx = np.abs(dy - (self.rows - 1)), np.abs(dx - (self.columns - 1))
        d = self.hop_distance(0, dy * self.columns + dx)  # NT 0 to the NT at (Δx, Δy)
        return np.bincount(d.ravel(), weights=corr.ravel(), minlength=self.max_hops + 1).astype(
            np.int64
        )

    # ------------------------------------------------------------ routes
    def route(self, a: int, b: int) -> list[tuple[int, int, str]]:
        """The 1-turn route from NT ``a`` to NT ``b``: each RT it passes as (tile row,
        tile col, output direction), in order; the last one's output is the destination."""
        return [
            (int(t // self.shape[1]), int(t % self.shape[1]), DIRECTIONS[d])
            for t, d in self._route(int(a), int(b))
        ]

    def _route(self, a: int, b: int) -> list[tuple[int, int]]:
        """(flat tile id, output direction index) of every RT from NT ``a`` to NT ``b``."""
        if not (0 <= a < self.n_nt and 0 <= b < self.n_nt):
            raise IndexError(f"NT {a} or {b} is not on a {self.rows}x{self.columns} Mosaic")
        (r0, c0), (r1, c1) = (tuple(int(v) for v in self.nt_tile(n)) for n in (a, b))
        sx, sy = int(np.sign(c1 - c0)), int(np.sign(r1 - r0))
        dx, dy = abs(c1 - c0) // 2, abs(r1 - r0) // 2
        east_west = E if sx > 0 else W
        south_north = S if sy > 0 else N
        out: list[tuple[int, int]] = []
        if dx + dy == 0:
            return out
        if dx + dy == 1:  # the RT0 between the two NTs, straight across its channel
            out.append(((r0 + sy, c0 + sx), east_west if dx else south_north))
        elif dx == 0:  # straight above or below: the column channel east of the source
            h, v = r0 + sy, c0 + 1
            out += [((h, c0), E), ((h, v), south_north)]
            out += [((r, v), south_north) for r in range(h + sy, r1, sy)]
            out.append(((r1, v), W))
        else:
            h = r0 + (sy if sy else 1)  # the row channel on the destination's side (south if level)
            if dy <= 1:  # the destination borders this channel: no turn
                out += [((h, c), east_west) for c in range(c0, c1, sx)]
                out.append(((h, c1), S if r1 > h else N))
            else:  # turn in the RT1 before the destination's column
                v = c1 - sx
                out += [((h, c), east_west) for c in range(c0, v, sx)]
                out.append(((h, v), south_north))
                out += [((r, v), south_north) for r in range(h + sy, r1, sy)]
                out.append(((r1, v), east_west))
        width = self.shape[1]
        return [(r * width + c, d) for (r, c), d in out]

    def routes(self, pairs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Routes of the NT pairs ``pairs`` (flat ``a * n_nt + b`` keys) as CSR: ``ptr``
        (len(pairs) + 1) into ``entries`` (flat tile id * 4 + output direction), the same
        routes as ``route`` computed for all pairs at once: every route is a run along its
        source's channel (``H`` tiles, the last one turning) and a run down a column channel,
        or a run with no turn, or the one RT0 between neighbours."""
        pairs = np.asarray(pairs, dtype=np.int64)
        a, b = pairs // self.n_nt, pairs % self.n_nt
        (r0, c0), (r1, c1) = self.nt_tile(a), self.nt_tile(b)
        sx, sy = np.sign(c1 - c0), np.sign(r1 - r0)
        dx, dy = np.abs(c1 - c0) // 2, np.abs(r1 - r0) // 2
        length = self.hop_distance(a, b)
        ptr = np.concatenate([[0], np.cumsum(length)])
        owner = np.repeat(np.arange(pairs.size), length)
        k = np.arange(int(ptr[-1])) - ptr[owner]  # position along the route
        r0, c0, r1, c1, sx, sy, dx, dy, last = (
            v[owner] for v in (r0, c0, r1, c1, sx, sy, dx, dy, length - 1)
        )
        ew = np.where(sx > 0, E, W)
        sn = np.where(sy > 0, S, N)
        h = r0 + np.where(sy != 0, sy, 1)  # the row channel the spike leaves into
        # a straight run along row h (Δy ≤ 1), handed over at its end
        row, col = h, c0 + sx * k
        out = np.where(k < last, ew, np.where(r1 > h, S, N))
        # a turn: along row h for H tiles (the H-th turns), then down column v
        turning = dy >= 2
        vertical_only = turning & (dx == 0)  # straight above/below: via the column east of it
        hs = np.where(vertical_only, 1, sx)
        span = np.where(vertical_only, 2, 2 * dx)
        v = np.where(vertical_only, c0 + 1, c1 - sx)
        first = k < span
        t_row = np.where(first, h, h + sy * (k - span + 1))
        t_col = np.where(first, c0 + hs * k, v)
        t_out = np.where(
            first,
            np.where(k < span - 1, np.where(hs > 0, E, W), sn),
            np.where(k < last, sn, np.where(c1 > v, E, W)),
        )
        row, col, out = (np.where(turning, t, u) for t, u in ((t_row, row), (t_col, col),
                                                              (t_out, out)))  # fmt: skip
        # neighbours: the RT0 between them
        near = (dx + dy) == 1
        row = np.where(near, r0 + sy, row)
        col = np.where(near, c0 + sx, col)
        out = np.where(near, np.where(dx > 0, ew, sn), out)
        return ptr, (row * self.shape[1] + col) * 4 + out

    def tree(self, a: int, destinations) -> dict[tuple[int, int], list[str]]:
        """The shared-path tree of a spike from NT ``a`` to NTs ``destinations``: each RT
        it passes → its output directions (more than one where the tree branches)."""
        out: dict[tuple[int, int], list[str]] = {}
        for b in sorted({int(b) for b in destinations} - {int(a)}):
            for r, c, d in self.route(a, b):
                if d not in out.setdefault((r, c), []):
                    out[(r, c)].append(d)
        return out
