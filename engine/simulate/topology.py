"""The simulated network as flat arrays: routers, their ports, links and terminals.

Routers sit on a ``width × height`` grid, index ``y · width + x`` (as the analytic model's
global router grid, and as BookSim2 numbers a mesh's nodes). Each router has four mesh
ports — E, W, S, N (+x, −x, +y, −y), the engine's link-slot order — and ``local`` terminal
ports, one per attached core. Output port ``o < 4`` of router ``r`` feeds input port
``o ^ 1`` of its neighbour (a flit leaving eastwards arrives from the west).

Every router output carries the engine's link id, so the simulator's per-link flit counts
line up with the analytic model's loads: router link ``4 · r + o``, a core's link into its
router ``4 · R + core``, the router's link to the core ``4 · R + n_cores + core``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.hardware import OFF_CHIP, Hardware, NocConstants

__all__ = ["DX", "DY", "Topology"]

DX = np.array([1, -1, 0, 0], dtype=np.int64)  # E, W, S, N
DY = np.array([0, 0, 1, -1], dtype=np.int64)


@dataclass(frozen=True, eq=False)
class Topology:
    """Routers, ports, links and terminals of one simulated mesh (all arrays read-only)."""

    width: int
    height: int
    local: int  # terminal ports per router
    node_router: np.ndarray  # per terminal (core): its router
    node_port: np.ndarray  # per terminal: its port on that router (4 + slot)
    nbr: np.ndarray  # (R, P): the router an output port feeds (-1: none); for local ports -1
    out_node: np.ndarray  # (R, P): the terminal a local output port feeds (-1 for mesh ports)
    link_id: np.ndarray  # (R, P): the engine link id of each output port (-1: none)
    inject_link: np.ndarray  # per terminal: engine link id of its link into the router
    latency: np.ndarray  # (R, P): cycles on the link behind each output port
    serialization: np.ndarray  # (R, P): cycles per flit on that link
    energy_pj: np.ndarray  # (R, P): energy per flit on that link
    inject_latency: np.ndarray  # per terminal
    inject_pj: np.ndarray  # per terminal
    n_link_ids: int

    @property
    def n_routers(self) -> int:
        return self.width * self.height

    @property
    def n_ports(self) -> int:
        return 4 + self.local

    @property
    def n_nodes(self) -> int:
        return int(self.node_router.size)

    @property
    def node_xy(self) -> tuple[np.ndarray, np.ndarray]:
        return self.node_router % self.width, self.node_router // self.width

    @property
    def link_energy_pj(self) -> np.ndarray:
        """Per engine link id: the energy of one flit crossing it."""
        out = np.zeros(self.n_link_ids)
        ports = self.link_id >= 0
        out[self.link_id[ports]] = self.energy_pj[ports]
        out[self.inject_link] = self.inject_pj
        return out

    @property
    def link_capacity(self) -> np.ndarray:
        """Per engine link id: the flits it can carry per cycle (0 for ids with no link)."""
        out = np.zeros(self.n_link_ids)
        ports = self.link_id >= 0
        out[self.link_id[ports]] = 1.0 / self.serialization[ports]
        out[self.inject_link] = 1.0
        return out

    @property
    def link_input(self) -> np.ndarray:
        """Per engine link id: the input port it feeds, as ``router · ports + port`` (-1 for a
        link into a core, which feeds no router buffer, and for ids with no link)."""
        out = np.full(self.n_link_ids, -1, dtype=np.int64)
        r, o = np.nonzero((self.link_id[:, :4] >= 0) & (self.nbr[:, :4] >= 0))
        out[self.link_id[r, o]] = self.nbr[r, o] * self.n_ports + (o ^ 1)
        out[self.inject_link] = self.node_router * self.n_ports + self.node_port
        return out

    def hops(self, src_node, dst_node) -> np.ndarray:
        """Routers a packet crosses from ``src_node`` to ``dst_node`` (Manhattan distance + 1)."""
        x, y = self.node_xy
        s, d = np.asarray(src_node), np.asarray(dst_node)
        return np.abs(x[s] - x[d]) + np.abs(y[s] - y[d]) + 1

    # ------------------------------------------------------------ construction
    @classmethod
    def mesh(cls, width: int, height: int, noc: NocConstants, local: int = 1) -> Topology:
        """A ``width × height`` mesh of one chip, ``local`` terminals per router, numbered
        ``router · local + slot`` (with one terminal per router: the router index)."""
        n_routers = width * height
        node = np.arange(n_routers * local)
        offchip = np.zeros((height, width, 4), dtype=bool)
        return cls._build(width, height, local, node // local, node % local, offchip, noc)

    @classmethod
    def of_hardware(cls, hardware: Hardware) -> Topology:
        """The global router grid of ``hardware`` (chips joined), one terminal per core."""
        ct = hardware.core_table
        kind = hardware.link_table["kind"][: 4 * hardware.n_routers]
        offchip = (kind == OFF_CHIP).reshape(hardware.grid_height, hardware.grid_width, 4)
        return cls._build(
            hardware.grid_width, hardware.grid_height, hardware.cores_per_router,
            ct["router"], ct["slot"], offchip, hardware.noc,
        )  # fmt: skip

    @classmethod
    def _build(cls, width, height, local, node_router, node_slot, offchip, noc) -> Topology:
        n_r, n_p, n_n = width * height, 4 + local, int(node_router.size)
        r = np.arange(n_r)
        x, y = r % width, r // width
        nbr = np.full((n_r, n_p), -1, dtype=np.int64)
        nx, ny = x[:, None] + DX[None, :], y[:, None] + DY[None, :]
        inside = (nx >= 0) & (nx < width) & (ny >= 0) & (ny < height)
        nbr[:, :4] = np.where(inside, ny * width + nx, -1)
        out_node = np.full((n_r, n_p), -1, dtype=np.int64)
        out_node[node_router, 4 + node_slot] = np.arange(n_n)
        link_id = np.full((n_r, n_p), -1, dtype=np.int64)
        link_id[:, :4] = np.where(inside, 4 * r[:, None] + np.arange(4)[None, :], -1)
        link_id[node_router, 4 + node_slot] = 4 * n_r + n_n + np.arange(n_n)
        off = offchip.reshape(n_r, 4) & inside
        latency = np.ones((n_r, n_p), dtype=np.int64)
        latency[:, :2] = noc.ew_latency
        latency[:, 2:4] = noc.ns_latency
        latency[:, :4] = np.where(off, noc.offchip_latency, latency[:, :4])
        latency[:, 4:] = noc.local_latency
        serialization = np.ones((n_r, n_p), dtype=np.int64)
        serialization[:, :4] = np.where(off, noc.offchip_serialization, 1)
        energy = np.zeros((n_r, n_p))
        energy[:, :2], energy[:, 2:4], energy[:, 4:] = noc.ew_pj, noc.ns_pj, noc.local_pj
        energy[:, :4] = np.where(off, noc.offchip_pj, energy[:, :4])
        topo = cls(
            width=width,
            height=height,
            local=local,
            node_router=np.asarray(node_router, dtype=np.int64),
            node_port=4 + np.asarray(node_slot, dtype=np.int64),
            nbr=nbr,
            out_node=out_node,
            link_id=link_id,
            inject_link=4 * n_r + np.arange(n_n, dtype=np.int64),
            latency=latency,
            serialization=serialization,
            energy_pj=energy,
            inject_latency=np.full(n_n, noc.local_latency, dtype=np.int64),
            inject_pj=np.full(n_n, noc.local_pj),
            n_link_ids=4 * n_r + 2 * n_n,
        )
        for a in (topo.node_router, topo.node_port, nbr, out_node, link_id, latency):
            a.flags.writeable = False
        return topo
