"""The hardware as placers see it: cores by router, and the block a placement stays in."""

from __future__ import annotations

import numpy as np

from engine.hardware import Hardware

__all__ = ["compact_block", "home_block", "router_cores"]


def router_cores(hardware: Hardware) -> np.ndarray:
    """Global core ids per global router index and slot: shape (n_routers, cores_per_router)."""
    ct = hardware.core_table
    out = np.empty((hardware.n_routers, hardware.cores_per_router), dtype=np.int64)
    out[ct["router"], ct["slot"]] = np.arange(hardware.n_cores)
    return out


def compact_block(n_routers: int, width: int, height: int) -> tuple[int, int, int, int]:
    """(x0, y0, w, h): the most square w×h block of at least ``n_routers``, centred."""
    w = min(int(np.ceil(np.sqrt(n_routers))), width)
    h = -(-n_routers // w)
    if h > height:
        h = height
        w = -(-n_routers // h)
    return (width - w) // 2, (height - h) // 2, w, h


def home_block(hardware: Hardware, n_parts: int) -> tuple[int, int, int, int]:
    """(x0, y0, w, h) of the routers a placement should stay in: the global grid, or the
    middle chip when the partitions fit on one chip (chip-to-chip links are costly)."""
    if hardware.n_chips == 1 or n_parts > hardware.cores_per_chip:
        return 0, 0, hardware.grid_width, hardware.grid_height
    cx, cy = (hardware.chips_x - 1) // 2, (hardware.chips_y - 1) // 2
    return cx * hardware.width, cy * hardware.height, hardware.width, hardware.height
