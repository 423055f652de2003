"""Where everything of a hardware is: the one place its grid is computed.

A core is ``(chip, x, y, slot)``; its global id is ``((chip * H + y) * W + x) * K + slot`` for
W×H routers per chip and K cores per router. Chips sit in a ``chips_x × chips_y`` grid
(chip = cy * chips_x + cx), and routing runs over the *global* router grid of
``(chips_x * W) × (chips_y * H)`` routers, so a message that crosses a chip boundary uses an
off-chip link.

Links have flat ids: router link ``4 * r + d`` (``r`` the global router index ``gy * GW + gx``,
``d`` in E, W, S, N), then one core→router and one router→core link per core. Router slots on
the mesh edge that have no neighbour are kept as always-empty ids so that the layout stays
arithmetic. ``grid_neighbours`` is that grid's adjacency, which the cycle-level simulator's
topology (``engine.simulate.topology``) reads too.
"""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np

from engine.errors import InvalidHardwareError

if TYPE_CHECKING:
    from engine.hardware.constants import LinkSpec

__all__ = [
    "CORE_TO_ROUTER",
    "DIRECTIONS",
    "DX",
    "DY",
    "LINK_KINDS",
    "OFF_CHIP",
    "ROUTER",
    "ROUTER_TO_CORE",
    "MeshGeometry",
    "grid_neighbours",
]

DIRECTIONS = ("E", "W", "S", "N")  # +x, -x, +y, -y; y grows downwards (row index)
DX = np.array([1, -1, 0, 0], dtype=np.int64)  # a step in each direction
DY = np.array([0, 0, 1, -1], dtype=np.int64)
LINK_KINDS = ("router", "off-chip", "core-to-router", "router-to-core")
ROUTER, OFF_CHIP, CORE_TO_ROUTER, ROUTER_TO_CORE = range(4)


def grid_neighbours(width: int, height: int) -> np.ndarray:
    """Per router of a ``width × height`` grid (index ``y · width + x``) and direction (E, W,
    S, N): the router that way, or -1 past the grid's edge. Shape ``(width · height, 4)``."""
    r = np.arange(width * height)
    nx = (r % width)[:, None] + DX[None, :]
    ny = (r // width)[:, None] + DY[None, :]
    inside = (nx >= 0) & (nx < width) & (ny >= 0) & (ny < height)
    return np.where(inside, ny * width + nx, -1)


class MeshGeometry:
    """The addressing of ``Hardware`` (``engine.hardware.system``): chips, routers, cores and
    links as numbers and tables, from its ``chips_x``, ``chips_y``, ``width``, ``height``,
    ``cores_per_router``, ``links`` and ``name``."""

    chips_x: int
    chips_y: int
    width: int
    height: int
    cores_per_router: int
    input_port: tuple[int, int, int, int]
    links: LinkSpec
    name: str

    @property
    def n_chips(self) -> int:
        return self.chips_x * self.chips_y

    @property
    def grid_width(self) -> int:
        return self.chips_x * self.width

    @property
    def grid_height(self) -> int:
        return self.chips_y * self.height

    @property
    def n_routers(self) -> int:
        return self.grid_width * self.grid_height

    @property
    def cores_per_chip(self) -> int:
        return self.width * self.height * self.cores_per_router

    @property
    def n_cores(self) -> int:
        return self.n_chips * self.cores_per_chip

    @cached_property
    def input_core(self) -> int:
        """Global id of the core at the input port: spikes from a network's spike sources
        enter the mesh through its link into its router (and travel on its mesh)."""
        return self.core_id(*self.input_port)

    @property
    def n_link_ids(self) -> int:
        return 4 * self.n_routers + 2 * self.n_cores

    def core_id(self, chip: int, x: int, y: int, slot: int) -> int:
        ok = (
            0 <= chip < self.n_chips
            and 0 <= x < self.width
            and 0 <= y < self.height
            and 0 <= slot < self.cores_per_router
        )
        if not ok:
            raise InvalidHardwareError(
                f"core ({chip}, {x}, {y}, {slot}) does not exist on {self.name}: chips 0.."
                f"{self.n_chips - 1}, x 0..{self.width - 1}, y 0..{self.height - 1}, "
                f"slot 0..{self.cores_per_router - 1}"
            )
        return ((chip * self.height + y) * self.width + x) * self.cores_per_router + slot

    def core_address(self, core: int) -> tuple[int, int, int, int]:
        k = self.cores_per_router
        slot, r = core % k, core // k
        x, r = r % self.width, r // self.width
        y, chip = r % self.height, r // self.height
        return int(chip), int(x), int(y), int(slot)

    @cached_property
    def core_table(self) -> dict[str, np.ndarray]:
        """Per global core id: chip, local x/y, slot, global router x/y, router index, and the
        mesh its messages travel on (``slot % links.meshes``: which of Loihi 2's two a message
        takes is not published; the slot's parity is this tool's illustrative rule)."""
        c = np.arange(self.n_cores)
        k, w, h = self.cores_per_router, self.width, self.height
        slot, r = c % k, c // k
        x, r = r % w, r // w
        y, chip = r % h, r // h
        gx = (chip % self.chips_x) * w + x
        gy = (chip // self.chips_x) * h + y
        return {
            "chip": chip,
            "x": x,
            "y": y,
            "slot": slot,
            "gx": gx,
            "gy": gy,
            "router": gy * self.grid_width + gx,
            "mesh": slot % self.links.meshes,
        }

    @cached_property
    def router_table(self) -> dict[str, np.ndarray]:
        """Per global router index: its grid position (``gx``, ``gy``), its chip, and its
        position on that chip (``x``, ``y``)."""
        r = np.arange(self.n_routers)
        gx, gy = r % self.grid_width, r // self.grid_width
        return {
            "gx": gx,
            "gy": gy,
            "chip": (gy // self.height) * self.chips_x + gx // self.width,
            "x": gx % self.width,
            "y": gy % self.height,
        }

    @cached_property
    def link_table(self) -> dict[str, np.ndarray]:
        """Per link id: kind (-1 for an edge slot with no neighbour), endpoints, cost factors."""
        n_r, n_c = self.n_routers, self.n_cores
        chip_of = self.router_table["chip"]
        nbr = grid_neighbours(self.grid_width, self.grid_height)
        valid = nbr >= 0
        n_chip = np.where(valid, chip_of[np.maximum(nbr, 0)], -1)
        kind_r = np.where(valid, np.where(n_chip == chip_of[:, None], ROUTER, OFF_CHIP), -1)
        kind = np.concatenate(
            [kind_r.ravel(), np.full(n_c, CORE_TO_ROUTER), np.full(n_c, ROUTER_TO_CORE)]
        )
        bw = np.array(
            [
                self.links.router_bits_per_us,
                self.links.offchip_bits_per_us,
                self.links.core_bits_per_us,
                self.links.core_bits_per_us,
            ]
        )
        us_per_message = np.where(kind >= 0, self.links.message_bits / bw[np.maximum(kind, 0)], 0.0)
        core_router = self.core_table["router"]
        return {
            "kind": kind.astype(np.int8),
            "us_per_message": us_per_message,
            # router index at each end (for core links, the core's router) and the core, if any
            "src_router": np.concatenate([np.repeat(np.arange(n_r), 4), core_router, core_router]),
            "dst_router": np.concatenate([nbr.ravel(), core_router, core_router]),
            "core": np.concatenate([np.full(4 * n_r, -1), np.arange(n_c), np.arange(n_c)]),
        }

    def router_address(self, router: int) -> tuple[int, int, int]:
        """(chip, x, y) of a global router index."""
        rt = self.router_table
        return int(rt["chip"][router]), int(rt["x"][router]), int(rt["y"][router])
