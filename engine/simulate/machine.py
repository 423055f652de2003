"""The simulator's state in Python: allocate, grow, advance, read back.

``Machine`` owns one simulated network — its ``Topology``, its ``NocConstants`` and the
kernel's arrays (``engine.simulate.kernel``) — and advances it span by span with
``advance``; when the kernel runs out of packet records or trace windows, ``advance``
grows the arrays and goes on, so callers never see it. A deadlock (no flit moved for the
watchdog's cycles while flits are in the network) raises ``SimulationError`` naming the
routers that hold flits.
"""

from __future__ import annotations

import numpy as np

from engine.errors import EvaluatorError
from engine.hardware import NocConstants
from engine.simulate import kernel
from engine.simulate import kernel as K
from engine.simulate.patterns import Pattern, build_pattern
from engine.simulate.topology import Topology

__all__ = ["Machine", "SimulationError"]

PACKET_FIELDS = (
    "next",
    "src",
    "lo",
    "hi",
    "size",
    "ctime",
    "itime",
    "atime",
    "hops",
    "meas",
    "done",
    "parent",
    "group",
)  # the rows of the packet table, in the kernel's PK_* order


class SimulationError(EvaluatorError):
    """A simulation that cannot finish (a deadlock)."""


class Machine:
    """One simulated network and everything in it."""

    def __init__(
        self,
        topology: Topology,
        noc: NocConstants,
        *,
        pattern: Pattern | None = None,
        multicast_branches: int = 1,
        sink_mode: int = 0,
        seed: int = 0,
        packets: int = 4096,
        dest: np.ndarray | None = None,
        window: int = 0,
        watchdog: int = 20_000,
    ):
        self.topology, self.noc, self.window = topology, noc, window
        R, P, V, D = topology.n_routers, topology.n_ports, noc.vcs, noc.buf  # noqa: N806
        B = max(1, multicast_branches)  # noqa: N806
        n_nodes = topology.n_nodes
        max_lat = int(max(topology.latency.max(), topology.inject_latency.max()))
        q = noc.st_delay + max_lat + 4
        qc = V * D + max_lat + noc.credit_delay + 8
        if pattern is None:
            pattern = build_pattern("uniform", topology.width, topology.height, n_nodes)
        x, y = topology.node_xy
        i64 = np.int64
        cfg = np.zeros(kernel.N_CF, dtype=i64)
        cfg[[K.CF_W, K.CF_H, K.CF_P, K.CF_V, K.CF_D, K.CF_B]] = (
            topology.width,
            topology.height,
            P,
            V,
            D,
            B,
        )
        cfg[[K.CF_RD, K.CF_VD, K.CF_SD, K.CF_ST, K.CF_CD]] = (
            noc.routing_delay, noc.vc_alloc_delay, noc.sw_alloc_delay, noc.st_delay,
            noc.credit_delay,
        )  # fmt: skip
        cfg[K.CF_ALLOC] = 0 if noc.allocator == "islip" else 1
        cfg[K.CF_ITERS] = noc.alloc_iters
        cfg[K.CF_YX] = 1 if noc.routing == "yx" else 0
        cfg[K.CF_SINK] = sink_mode
        cfg[K.CF_WATCHDOG] = watchdog
        cfg[K.CF_PATTERN] = pattern.kind
        cfg[K.CF_SHARED] = 1 if pattern.shared_row else 0
        cfg[K.CF_NODES] = n_nodes
        topo = np.stack([topology.nbr, topology.out_node, topology.link_id, topology.latency,
                         topology.serialization]).astype(i64)  # fmt: skip
        x, y = topology.node_xy
        nodes_s = np.stack([topology.node_router, topology.node_port, x, y,
                            topology.inject_latency]).astype(i64)  # fmt: skip
        vc = np.zeros((K.N_VC, R, P, V), dtype=i64)
        vc[[K.VC_PK, K.VC_VA_T, K.VC_SA_T, K.VC_SA_GR, K.VC_OWNER, K.VC_BLOCKED]] = -1
        vc[K.VC_CREDITS][topology.nbr >= 0] = D
        vc[K.VC_CREDITS][topology.out_node >= 0] = D
        br = np.zeros((K.N_BR, R, P, V, B), dtype=i64)
        br[[K.BR_OVC, K.BR_PK, K.BR_VAGR]] = -1
        node = np.zeros((K.N_ND, n_nodes), dtype=i64)
        node[[K.ND_QHEAD, K.ND_QTAIL]] = -1
        node[K.ND_LAST] = V - 1
        nodev = np.zeros((2, n_nodes, V), dtype=i64)
        nodev[K.NV_CRED] = D
        n_pk = max(packets, 4 * n_nodes + R * P * B + 16)
        ctr = np.zeros(K.N_CTR, dtype=i64)
        ctr[K.C_MEASURE_TO] = np.iinfo(np.int64).max
        ctr[K.C_WINDOW] = -1
        self.arrays = {
            "cfg": cfg,
            "topo": topo,
            "nodes_s": nodes_s,
            "vc": vc,
            "br": br,
            "buf": np.zeros((R, P, V, D), dtype=i64),
            "port": np.zeros((K.N_PT, R, P), dtype=i64),
            "lq": np.zeros((3, R, P, q), dtype=i64),
            "cq": np.zeros((2, R, P, qc), dtype=i64),
            "va_ptr": np.zeros((2, R, P * V * B), dtype=i64),
            "rbusy": np.zeros(R, dtype=i64),
            "act": np.zeros((2, R, P * V), dtype=i64),
            "node": node,
            "nodev": nodev,
            "ncq": np.zeros((2, n_nodes, qc), dtype=i64),
            "pk": np.zeros((K.N_PK, n_pk), dtype=i64),
            "dest": np.zeros(n_pk, dtype=i64) if dest is None else np.asarray(dest, dtype=i64),
            "dsvc": np.zeros(1 if dest is None else len(dest), dtype=i64),
            "rel_order": np.zeros(0, dtype=i64),
            "rel_off": np.zeros(0, dtype=i64),
            "grp_ptr": np.zeros(1, dtype=i64),
            "grp": np.zeros((3, 0), dtype=i64),
            "link_flits": np.zeros(topology.n_link_ids, dtype=i64),
            "win_link": np.zeros((1 if window else 0, topology.n_link_ids), dtype=np.int32),
            "win_occ": np.zeros((1 if window else 0, R * P), dtype=np.int32),
            "stall": np.zeros((R, 4), dtype=i64),
            "ctr": ctr,
            "rng": kernel.rng_seed(seed),
            "rheap": np.zeros(R, dtype=i64),
            "rpri": np.zeros(R),
            "rpos": np.full(R, -1, dtype=i64),
            "gheap": np.zeros(n_nodes, dtype=i64),
            "gpri": np.zeros(n_nodes),
            "gpos": np.full(n_nodes, -1, dtype=i64),
            "src_list": np.zeros(n_nodes, dtype=i64),
            **kernel.workspace(P, V, B),
            "perm": pattern.perm.astype(i64),
            "row_ptr": pattern.row_ptr.astype(i64),
            "dest_tab": pattern.dest.astype(i64),
            "cum": pattern.cum.astype(np.float64),
        }
        self.fraction = float(pattern.fraction)
        self.watchdog = watchdog

    # ------------------------------------------------------------ running
    @property
    def t(self) -> int:
        """The next cycle to simulate."""
        return int(self.arrays["ctr"][K.C_T])

    @property
    def in_flight(self) -> int:
        return int(self.arrays["ctr"][K.C_INFLIGHT])

    @property
    def n_packets(self) -> int:
        return int(self.arrays["ctr"][K.C_NPK])

    def measure(self, start: int, stop: int) -> None:
        """Count accepted flits arriving in [start, stop)."""
        self.arrays["ctr"][K.C_MEASURE_FROM] = start
        self.arrays["ctr"][K.C_MEASURE_TO] = stop

    def advance(
        self,
        t_end: int,
        *,
        inject_p: float = 0.0,
        packet_flits: int = 1,
        measured: bool = False,
        stop_when_idle: bool = False,
    ) -> int:
        """Simulate up to cycle ``t_end`` (exclusive); returns the kernel's final status."""
        a = self.arrays
        while True:
            status = kernel.run(
                a["cfg"], a["topo"], a["nodes_s"], a["vc"], a["br"], a["buf"], a["port"], a["lq"],
                a["cq"], a["va_ptr"], a["rbusy"], a["act"], a["node"], a["nodev"], a["ncq"], a["pk"],
                a["dest"], a["dsvc"], a["rel_order"], a["rel_off"], a["grp_ptr"], a["grp"], a["link_flits"],
                a["win_link"], a["win_occ"], a["stall"], a["ctr"], a["rng"], a["rheap"],
                a["rpri"], a["rpos"], a["gheap"], a["gpri"], a["gpos"], a["src_list"], a["perm"],
                a["row_ptr"], a["dest_tab"], a["cum"], self.fraction, a["req_in"], a["req_out"],
                a["m_in"], a["m_out"], a["cand"], a["sw_vc"], a["sw_br"], a["cur"], int(t_end),
                float(inject_p), int(packet_flits), 1 if measured else 0, int(self.window),
                bool(stop_when_idle),
            )  # fmt: skip
            if status == kernel.FULL:
                self._grow(t_end)
                continue
            if status == kernel.DEADLOCK:
                raise SimulationError(self._deadlock_message())
            return status

    def _grow(self, t_end: int) -> None:
        a = self.arrays
        cap = a["pk"].shape[1]
        topo = self.topology
        need = 1 + self.n_packets + 2 * topo.n_nodes + topo.n_routers * topo.n_ports * a["cfg"][K.CF_B]
        if need >= cap:
            new = max(2 * cap, need + 1024)
            grown = np.zeros((a["pk"].shape[0], new), dtype=np.int64)
            grown[:, :cap] = a["pk"]
            a["pk"] = grown
            if a["rel_order"].size == 0:  # synthetic packets keep their destination in dest[p]
                d = np.zeros(new, dtype=np.int64)
                d[: a["dest"].size] = a["dest"]
                a["dest"] = d
        if self.window and self.t // self.window >= a["win_link"].shape[0]:
            rows = max(2 * a["win_link"].shape[0], (t_end - 1) // self.window + 1)
            for name in ("win_link", "win_occ"):
                old = a[name]
                grown = np.zeros((rows, old.shape[1]), dtype=old.dtype)
                grown[: old.shape[0]] = old
                a[name] = grown

    def _deadlock_message(self) -> str:
        topo = self.topology
        held = self.arrays["vc"][K.VC_N].sum(axis=(1, 2))
        stuck = np.flatnonzero(held > 0)
        names = ", ".join(f"({r % topo.width},{r // topo.width})" for r in stuck[:12].tolist())
        more = f" and {stuck.size - 12} more" if stuck.size > 12 else ""
        return (
            f"the network deadlocked at cycle {self.t}: no flit moved for "
            f"{self.watchdog} cycles while {self.in_flight} were in flight; routers "
            f"holding flits: {names}{more}"
        )

    # ------------------------------------------------------------ reading back
    def packets(self) -> dict[str, np.ndarray]:
        """Every packet record so far (copies), by field name."""
        n = self.n_packets
        pk = self.arrays["pk"]
        return {name: pk[k, :n].copy() for k, name in enumerate(PACKET_FIELDS)}

    @property
    def dest(self) -> np.ndarray:
        return self.arrays["dest"]

    @property
    def link_flits(self) -> np.ndarray:
        return self.arrays["link_flits"]

    @property
    def accepted_flits(self) -> np.ndarray:
        return self.arrays["node"][K.ND_ACC]

    def stalls(self) -> dict[str, np.ndarray]:
        """Per router: cycles a VC waited because every output VC was held (``vc_busy``), lost
        VC allocation (``vc_lost``), had no downstream credit (``no_credit``), lost the switch
        (``switch_lost``)."""
        s = self.arrays["stall"]
        return {
            "vc_busy": s[:, K.S_VC_BUSY].copy(),
            "vc_lost": s[:, K.S_VC_LOST].copy(),
            "no_credit": s[:, K.S_NO_CREDIT].copy(),
            "switch_lost": s[:, K.S_SW_LOST].copy(),
        }
