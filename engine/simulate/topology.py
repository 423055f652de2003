"""The simulated network as flat arrays: routers, their ports, links and terminals.

Routers sit on a ``width × height`` grid, index ``y · width + x`` (as the analytic model's
global router grid, and as BookSim2 numbers a mesh's nodes). Each router has four mesh
ports — E, W, S, N (+x, −x, +y, −y), the engine's link-slot order — and ``local`` terminal
ports, one per attached core. Output port ``o < 4`` of router ``r`` feeds input port
``o ^ 1`` of its neighbour (a flit leaving eastwards arrives from the west).

**Parallel meshes.** Hardware with ``links.meshes`` > 1 (Loihi 2 has two) has that many
copies of the router grid over the same cores: copy ``m`` holds routers ``r + m · R``
(``R = width · height``), its mesh ports connect only within the copy, a core injects into
the copy of its mesh (``node_mesh``, ``Hardware.core_table["mesh"]``) and the local output
port of its router in *every* copy delivers to it, so a core receives from every mesh and
its one server serves them all. ``node_router``, ``node_xy``, ``n_routers`` and the engine's
link ids stay those of the one grid; ``n_routers_all`` counts every copy's routers (the rows
of ``nbr`` and the other per-router arrays, the simulator's routers).

Link ids. Every router output carries an id, so the simulator's per-link flit counts line up
with the analytic model's loads. The *engine* link ids (``n_link_ids``, what the analytic
model and ``StepResult.link_flits`` index): router link ``4 · r + o``, a core's link into its
router ``4 · R + core``, the router's link to the core ``4 · R + n_cores + core``. Mesh
copy 0 and every core's link into its router carry exactly those ids; copy ``m`` ≥ 1 gets
ids of its own after them (``n_links`` in all): its router links from
``n_link_ids + (m − 1)(4 · R + n_cores)``, then its links to the cores. ``fold_links`` sums a
per-link array over the copies into engine ids, ``mesh_links`` splits it by copy. With one
mesh both numberings are the same.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.hardware import OFF_CHIP, Hardware, NocConstants
from engine.hardware.geometry import grid_neighbours

__all__ = ["Topology"]


@dataclass(frozen=True, eq=False)
class Topology:
    """Routers, ports, links and terminals of the simulated meshes (all arrays read-only)."""

    width: int
    height: int
    local: int  # terminal ports per router
    node_router: np.ndarray  # per terminal (core): its router on the grid (0 … R − 1)
    node_port: np.ndarray  # per terminal: its port on that router (4 + slot)
    nbr: np.ndarray  # (R·M, P): the router an output port feeds (-1: none); for local ports -1
    out_node: np.ndarray  # (R·M, P): the terminal a local output port feeds (-1: mesh ports)
    link_id: np.ndarray  # (R·M, P): the link id of each output port (-1: none; see the module)
    inject_link: np.ndarray  # per terminal: engine link id of its link into the router
    latency: np.ndarray  # (R·M, P): cycles on the link behind each output port
    serialization: np.ndarray  # (R·M, P): cycles per flit on that link
    energy_pj: np.ndarray  # (R·M, P): energy per flit on that link
    inject_latency: np.ndarray  # per terminal
    inject_pj: np.ndarray  # per terminal
    n_link_ids: int  # engine link ids: 4 · R + 2 · terminals
    meshes: int = 1  # parallel copies of the router grid
    node_mesh: np.ndarray | None = None  # per terminal: the copy it injects into (None: all 0)

    @property
    def n_routers(self) -> int:
        """Routers of the grid (of one mesh)."""
        return self.width * self.height

    @property
    def n_routers_all(self) -> int:
        """Routers of every mesh copy: the simulator's routers."""
        return self.width * self.height * self.meshes

    @property
    def n_ports(self) -> int:
        return 4 + self.local

    @property
    def n_nodes(self) -> int:
        return int(self.node_router.size)

    @property
    def n_links(self) -> int:
        """Link ids of every copy (the simulator's per-link arrays): ``n_link_ids`` with one
        mesh, and ``4 · R + n_nodes`` more for every further copy."""
        return self.n_link_ids + (self.meshes - 1) * (4 * self.n_routers + self.n_nodes)

    @property
    def node_xy(self) -> tuple[np.ndarray, np.ndarray]:
        return self.node_router % self.width, self.node_router // self.width

    @property
    def inject_router(self) -> np.ndarray:
        """Per terminal: the simulated router it injects into (its router in its mesh's copy)."""
        if self.meshes == 1:
            return self.node_router
        return self.node_router + self.node_mesh * self.n_routers

    def router_xy(self, router) -> tuple[np.ndarray, np.ndarray]:
        """(x, y) on the grid of simulated routers (of any copy)."""
        g = np.asarray(router) % self.n_routers
        return g % self.width, g // self.width

    def router_mesh(self, router) -> np.ndarray:
        """The copy (mesh) of simulated routers."""
        return np.asarray(router) // self.n_routers

    # ------------------------------------------------------------ per engine link id
    def _engine_view(self, table: np.ndarray, inject: np.ndarray, dtype, fill) -> np.ndarray:
        """Per engine link id, from mesh copy 0 (every copy's links are alike)."""
        out = np.full(self.n_link_ids, fill, dtype=dtype)
        rows = self.link_id[: self.n_routers]
        ports = rows >= 0
        out[rows[ports]] = table[: self.n_routers][ports]
        out[self.inject_link] = inject
        return out

    @property
    def link_energy_pj(self) -> np.ndarray:
        """Per engine link id: the energy of one flit crossing it."""
        return self._engine_view(self.energy_pj, self.inject_pj, float, 0.0)

    @property
    def link_capacity(self) -> np.ndarray:
        """Per engine link id: the flits it can carry per cycle on one mesh (0 for ids with
        no link)."""
        return self._engine_view(1.0 / self.serialization, 1.0, float, 0.0)

    @property
    def link_input(self) -> np.ndarray:
        """Per engine link id: the input port it feeds, as ``router · ports + port`` on the
        grid (-1 for a link into a core, which feeds no router buffer, and for ids with no
        link); ``fold_ports`` folds a per-port array of every copy onto these indices."""
        R = self.n_routers  # noqa: N806
        out = np.full(self.n_link_ids, -1, dtype=np.int64)
        r, o = np.nonzero((self.link_id[:R, :4] >= 0) & (self.nbr[:R, :4] >= 0))
        out[self.link_id[r, o]] = self.nbr[r, o] * self.n_ports + (o ^ 1)
        out[self.inject_link] = self.node_router * self.n_ports + self.node_port
        return out

    # ------------------------------------------------------------ folding the copies
    @property
    def link_engine(self) -> np.ndarray:
        """Per link id of every copy (``n_links``): the engine link id it is a copy of."""
        n, r4, n_n = self.n_link_ids, 4 * self.n_routers, self.n_nodes
        out = np.arange(self.n_links, dtype=np.int64)
        for m in range(1, self.meshes):
            base = n + (m - 1) * (r4 + n_n)
            out[base : base + r4] = np.arange(r4)
            out[base + r4 : base + r4 + n_n] = r4 + n_n + np.arange(n_n)
        return out

    def mesh_links(self, a: np.ndarray) -> np.ndarray:
        """A per-link array of every copy (last axis ``n_links``) split by mesh: shape
        ``(meshes, …, n_link_ids)``, mesh m's entries at engine ids (a core's link into its
        router counts on its own mesh, 0 on the others)."""
        a = np.asarray(a)
        n, r4, n_n = self.n_link_ids, 4 * self.n_routers, self.n_nodes
        if self.meshes == 1:
            return a[None, ..., :n].copy()
        out = np.zeros((self.meshes, *a.shape[:-1], n), dtype=a.dtype)
        out[0] = a[..., :n]
        inject = a[..., r4 : r4 + n_n]
        for m in range(self.meshes):
            if m > 0:
                base = n + (m - 1) * (r4 + n_n)
                out[m, ..., :r4] = a[..., base : base + r4]
                out[m, ..., r4 + n_n :] = a[..., base + r4 : base + r4 + n_n]
            out[m, ..., r4 : r4 + n_n] = np.where(self.node_mesh == m, inject, 0)
        return out

    def fold_links(self, a: np.ndarray) -> np.ndarray:
        """A per-link array of every copy (last axis ``n_links``), summed over the meshes
        into engine link ids (a new array)."""
        a = np.asarray(a)
        return a.copy() if self.meshes == 1 else self.mesh_links(a).sum(axis=0, dtype=a.dtype)

    def fold_ports(self, a: np.ndarray) -> np.ndarray:
        """A per-input-port array of every copy (last axis ``n_routers_all · ports``) as the
        largest over the copies, per port of the grid (last axis ``n_routers · ports``)."""
        a = np.asarray(a)
        if self.meshes == 1:
            return a.copy()
        per_copy = self.n_routers * self.n_ports
        return a.reshape(*a.shape[:-1], self.meshes, per_copy).max(axis=-2)

    def fold_routers(self, a: np.ndarray) -> np.ndarray:
        """A per-router array of every copy (first axis ``n_routers_all``) summed over the
        copies, per router of the grid."""
        a = np.asarray(a)
        if self.meshes == 1:
            return a.copy()
        return a.reshape(self.meshes, self.n_routers, *a.shape[1:]).sum(axis=0)

    def hops(self, src_node, dst_node) -> np.ndarray:
        """Routers a packet crosses from ``src_node`` to ``dst_node`` (Manhattan distance + 1)."""
        x, y = self.node_xy
        s, d = np.asarray(src_node), np.asarray(dst_node)
        return np.abs(x[s] - x[d]) + np.abs(y[s] - y[d]) + 1

    # ------------------------------------------------------------ construction
    @classmethod
    def mesh(cls, width: int, height: int, noc: NocConstants, local: int = 1) -> Topology:
        """A ``width × height`` mesh of one chip, ``local`` terminals per router, numbered
        ``router · local + slot`` (with one terminal per router: the router index); one mesh."""
        n_routers = width * height
        node = np.arange(n_routers * local)
        offchip = np.zeros((height, width, 4), dtype=bool)
        return cls._build(width, height, local, node // local, node % local, offchip, noc)

    @classmethod
    def of_hardware(cls, hardware: Hardware) -> Topology:
        """The global router grid of ``hardware`` (chips joined), one terminal per core, in
        ``links.meshes`` parallel copies (each core on its ``core_table["mesh"]``)."""
        ct = hardware.core_table
        kind = hardware.link_table["kind"][: 4 * hardware.n_routers]
        offchip = (kind == OFF_CHIP).reshape(hardware.grid_height, hardware.grid_width, 4)
        return cls._build(
            hardware.grid_width, hardware.grid_height, hardware.cores_per_router,
            ct["router"], ct["slot"], offchip, hardware.noc, meshes=hardware.links.meshes,
            node_mesh=ct["mesh"],
        )  # fmt: skip

    @classmethod
    def _build(cls, width, height, local, node_router, node_slot, offchip, noc, meshes=1,
               node_mesh=None) -> Topology:  # fmt: skip
        n_r, n_p, n_n = width * height, 4 + local, int(node_router.size)
        node_router = np.asarray(node_router, dtype=np.int64)
        node_slot = np.asarray(node_slot, dtype=np.int64)
        if node_mesh is not None:  # (a copy: the hardware's own table stays writeable)
            node_mesh = np.array(node_mesh, dtype=np.int64)
        r = np.arange(n_r)
        nbr = np.full((n_r, n_p), -1, dtype=np.int64)
        nbr[:, :4] = grid_neighbours(width, height)  # the hardware's own grid
        inside = nbr[:, :4] >= 0
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
        n_ids = 4 * n_r + 2 * n_n
        if meshes > 1:  # copy m: routers r + m·R, links renumbered after the engine's ids
            copies = np.arange(meshes)[:, None, None]
            nbr = np.where(nbr >= 0, nbr[None] + copies * n_r, -1).reshape(-1, n_p)
            base = n_ids + (copies - 1) * (4 * n_r + n_n)  # copy m's first link id
            # router link 4·r + o → base + 4·r + o; link to core n (4·R + n_n + n) → base + 4·R + n
            shift = np.where(np.arange(n_p) < 4, base, base - n_n)
            shift = np.where(copies == 0, 0, shift)  # copy 0 keeps the engine's ids
            link_id = np.where(link_id >= 0, link_id[None] + shift, -1).reshape(-1, n_p)
            out_node = np.tile(out_node, (meshes, 1))
            latency = np.tile(latency, (meshes, 1))
            serialization = np.tile(serialization, (meshes, 1))
            energy = np.tile(energy, (meshes, 1))
        topo = cls(
            width=width,
            height=height,
            local=local,
            node_router=node_router,
            node_port=4 + node_slot,
            nbr=nbr,
            out_node=out_node,
            link_id=link_id,
            inject_link=4 * n_r + np.arange(n_n, dtype=np.int64),
            latency=latency,
            serialization=serialization,
            energy_pj=energy,
            inject_latency=np.full(n_n, noc.local_latency, dtype=np.int64),
            inject_pj=np.full(n_n, noc.local_pj),
            n_link_ids=n_ids,
            meshes=int(meshes),
            node_mesh=np.zeros(n_n, dtype=np.int64) if node_mesh is None else node_mesh,
        )
        for a in (topo.node_router, topo.node_port, topo.node_mesh, nbr, out_node, link_id,
                  latency):  # fmt: skip
            a.flags.writeable = False
        return topo
