"""The simulator's state in Python: allocate, grow, advance, read back.

``Machine`` owns one simulated network — its ``Topology``, its ``NocConstants`` and the
kernel's arrays (``engine.simulate.kernel``) — and advances it span by span with
``advance``; when the kernel runs out of packet records or trace windows, ``advance``
grows the arrays and goes on, so callers never see it.

A machine built with ``pool=True`` (synthetic sources) recycles its packet records: a
packet whose tail reached its terminal leaves the table for the kernel's log, which
``advance`` hands, a batch of rows at a time, to ``on_retire`` (the statistics stream) and
empties, so the table holds the packets in flight and queued at their sources, whatever the
run's length. With ``keep=True`` it also keeps every retired row (a trace or a walk reads
them): ``packets`` is then the run's whole table, numbered as the sources created them.

A deadlock (no flit moved for the watchdog's cycles while flits are in the network) raises
``SimulationError`` naming the routers that hold flits.

With parallel meshes (``Topology.meshes``) the machine simulates every copy's routers
(``Topology.n_routers_all``) and its per-link arrays have the copies' own link ids
(``Topology.n_links``); ``stalls`` and the readers of ``engine.simulate.step`` fold them
onto the one grid and the engine's link ids.
"""

from __future__ import annotations

import numpy as np

from engine.errors import EvaluatorError
from engine.hardware import NocConstants
from engine.hardware.routing import routings
from engine.simulate import kernel
from engine.simulate import records as F  # noqa: N812 - the kernel's fields and layout
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
    "route",
    "id",
)  # the rows of the packet table, in the kernel's PK_* order
LOG_FIELDS = ("id", "src", "dst", "ctime", "itime", "atime", "hops", "meas", "size", "route")
# a retired packet's row in the kernel's log (``records.L_*`` order)


# ``kernel.run``'s arguments after ``cfg``: typed tuples of the arrays (their fields are keys
# of ``Machine.arrays``)
KERNEL_TUPLES = (F.Net, F.State, F.Trace, F.Sources)


class SimulationError(EvaluatorError):
    """A simulation that cannot finish (a deadlock)."""


def run_ahead(topology: Topology, noc: NocConstants) -> int:
    """Cycles past the current one that a router may simulate at once: everything it receives
    comes at least ``d`` cycles after it was sent (a flit ``st_delay + latency + 1``, a credit
    ``latency + 1 + credit_delay``, an injected flit its core link's latency + 1), so at
    cycle t all it will read up to t + d − 1 is in its queues — up to t + d − 2 for flits
    of routers still to be visited in cycle t, and up to t + d for injections, which come
    first."""
    d_inject = int(topology.inject_latency.min()) + 1
    router_links = topology.latency[:, :4][topology.nbr[:, :4] >= 0]
    if router_links.size == 0:  # one router: only its cores send to it
        return d_inject
    d_router = int(router_links.min()) + 1 + min(noc.st_delay, noc.credit_delay)
    return min(d_inject, d_router - 1)


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
        unicast_kernel: bool = True,
        pool: bool = False,
        keep: bool = False,
    ):
        self.topology, self.noc, self.window = topology, noc, window
        self.routing, self.seed = routings[noc.routing], seed
        R, P, V, D = topology.n_routers_all, topology.n_ports, noc.vcs, noc.buf  # noqa: N806
        B = max(1, multicast_branches)  # noqa: N806
        n_nodes = topology.n_nodes
        max_lat = int(max(topology.latency.max(), topology.inject_latency.max()))
        ahead = run_ahead(topology, noc)
        ql = noc.st_delay + max_lat + 4 + ahead  # flits on a link at once, at most
        qc = V * D + max_lat + noc.credit_delay + 8  # credits on their way back, at most
        if pattern is None:
            pattern = build_pattern("uniform", topology.width, topology.height, n_nodes)
        i64 = np.int64
        if pool and (sink_mode != 0 or topology.meshes > 1 or B > 1):
            raise ValueError("recycled packet records need sink mode 0, one mesh and unicast")
        self.pool, self.keep = pool, keep
        self.on_retire = None  # called with each batch of retired rows (pool: see the module)
        self._kept: list[dict] = []  # (keep) the retired rows so far, batch by batch
        self._table = None  # (keep) the merged table, and the cycle it was merged at
        sq_slots = sq_cap = 0
        if topology.meshes > 1 and sink_mode == 1:
            # a core's server takes the packets of every mesh's copy of its router, in the
            # order they arrive, though one copy may have run ahead of another: tails wait in
            # ``sq`` until the cycle after they left, one slot per cycle (kernel.sinks._sq_push)
            sq_slots, sq_cap = ahead + 2, R * topology.local
        # the unicast kernel (kernel.router._cycle_unicast: the same cycle, leaner) runs
        # packets of one destination through allocations of one cycle
        self.unicast = bool(
            unicast_kernel and B == 1 and noc.vc_alloc_delay == 1 and noc.sw_alloc_delay == 1
            and P * V <= 62
        )  # fmt: skip
        vmask_x, vmask_y = (int(m) for m in self.routing.vc_masks(V))
        off = F.layout(P, V, B, D, ql, qc)
        cfg = F.Config(
            w=topology.width, h=topology.height, p=P, v=V, d=D, b=B,
            rd=noc.routing_delay, vd=noc.vc_alloc_delay, sd=noc.sw_alloc_delay,
            st_delay=noc.st_delay, cd=noc.credit_delay,
            alloc=0 if noc.allocator == "islip" else 1, iters=noc.alloc_iters,
            routing=self.routing.kernel, vmask_x=vmask_x, vmask_y=vmask_y, sink=sink_mode,
            watchdog=watchdog, pattern=pattern.kind, shared=1 if pattern.shared_row else 0,
            nodes=n_nodes, ahead=ahead, nr=R, sqs=sq_slots, sqc=sq_cap,
            unicast=int(self.unicast), pool=int(pool), **off,
        )  # fmt: skip
        self.cfg = cfg = cfg._replace(**{k: int(v) for k, v in cfg._asdict().items()})
        tp = np.stack(
            [
                topology.nbr,
                topology.out_node,
                topology.link_id,
                topology.latency,
                topology.serialization,
            ],
            axis=-1,
        ).astype(i64)  # (R, P, N_T)
        x, y = topology.node_xy
        ns = np.stack([topology.inject_router, topology.node_port, x, y,
                       topology.inject_latency], axis=-1).astype(i64)  # fmt: skip
        # every router's block
        st = np.zeros((R, cfg.rs), dtype=i64)
        vcs = self._records(st, "ovc", P * V, F.N_VC)
        vcs[:, :, [F.VC_PK, F.VC_VA_T, F.VC_SA_T, F.VC_SA_GR, F.VC_BLOCKED]] = -1
        ovs = self._records(st, "oov", P * V, F.N_OV).reshape(R, P, V, F.N_OV)
        ovs[..., F.OV_OWNER] = -1
        connected = (topology.nbr >= 0) | (topology.out_node >= 0)
        ovs[..., F.OV_CREDITS] = np.where(connected[:, :, None], D, 0)
        brs = self._records(st, "obr", P * V * B, F.N_BR)
        brs[:, :, [F.BR_OVC, F.BR_PK, F.BR_VAGR]] = -1
        misc = self._records(st, "omisc", 1, F.N_MISC + 3 * P * V)[:, 0]
        misc[:, F.M_X], misc[:, F.M_Y] = topology.router_xy(np.arange(R))  # within its copy
        misc[:, F.N_MISC : F.N_MISC + P * V] = np.arange(P * V) // V  # per input VC: its port
        misc[:, F.N_MISC + P * V : F.N_MISC + 2 * P * V] = np.arange(P * V) % V  # … its VC
        # every terminal's block
        nd = np.zeros((n_nodes, cfg.nds), dtype=i64)
        nd[:, [F.ND_QHEAD, F.ND_QTAIL]] = -1
        nd[:, F.ND_LAST] = V - 1
        nd[:, cfg.onv + F.NV_CRED : cfg.oncq : F.N_NV] = D
        n_pk = max(packets, 4 * n_nodes + R * P * B + 16)
        log_rows = 4 * R * P * (ahead + 1) + 65536 if pool else 1  # (kernel.run's margin)
        hops = topology.width + topology.height + 1  # the most a minimal route crosses
        ctr = np.zeros(F.N_CTR + hops * F.N_HOP, dtype=i64)  # counters, then a tracked route
        ctr[F.C_MEASURE_TO] = np.iinfo(np.int64).max
        ctr[F.C_WINDOW] = -1
        ctr[F.C_TRACK] = -1
        ctr[F.C_TRACK_ID] = -1
        ctr[F.C_NFREE] = n_pk if pool else 0
        self.arrays = {
            "cfg": cfg,
            "tp": tp.reshape(-1),
            "ns": ns.reshape(-1),
            "st": st.reshape(-1),
            "nd": nd.reshape(-1),
            "pk": np.zeros(n_pk * F.N_PK, dtype=i64),
            "dest": np.zeros(n_pk, dtype=i64) if dest is None else np.asarray(dest, dtype=i64),
            "dsvc": np.zeros(1 if dest is None else len(dest), dtype=i64),
            "rel_order": np.zeros(0, dtype=i64),
            "rel_off": np.zeros(0, dtype=i64),
            "grp_ptr": np.zeros(1, dtype=i64),
            "grp": np.zeros((3, 0), dtype=i64),
            "sq": np.zeros(max(1, sq_slots * (1 + sq_cap * F.N_SQ)), dtype=i64),
            "free": np.arange(n_pk - 1, -1, -1, dtype=i64) if pool else np.zeros(1, i64),
            "log": np.zeros(log_rows * F.N_LOG, dtype=i64),
            "link_flits": np.zeros(topology.n_links, dtype=i64),
            "win_link": np.zeros((1 if window else 0, topology.n_links), dtype=np.int32),
            "win_occ": np.zeros((1 if window else 0, R * P), dtype=np.int32),
            "win_wait": np.zeros((1 if window else 0, R * F.N_WAIT), dtype=np.int32),
            "ctr": ctr,
            "rng": kernel.rng_seed(seed),
            "dw": F.Wheel(
                due=np.full(R, F.NEVER, dtype=i64),
                wheel=np.zeros((F.WHEEL, 2 * R + 2), dtype=i64),
                wn=np.zeros(F.WHEEL, dtype=i64),
                fheap=np.zeros(R, dtype=i64),
                fpri=np.zeros(R),
                fpos=np.full(R, -1, dtype=i64),
                mark=np.zeros(R, dtype=i64),
            ),
            "gheap": np.zeros(n_nodes, dtype=i64),
            "gcal": np.zeros((F.GCAL, (n_nodes + 63) // 64), dtype=i64),
            "gpri": np.zeros(n_nodes),
            "gpos": np.full(n_nodes, -1, dtype=i64),
            "src_list": np.zeros(n_nodes, dtype=i64),
            "ws": kernel.workspace(P, V, B),
            "perm": pattern.perm.astype(i64),
            "row_ptr": pattern.row_ptr.astype(i64),
            "dest_tab": pattern.dest.astype(i64),
            "cum": pattern.cum.astype(np.float64),
        }
        self.fraction = float(pattern.fraction)
        self.watchdog = watchdog
        if pool:
            _blank(self.packet_table)

    def _records(self, st: np.ndarray, offset: str, count: int, fields: int) -> np.ndarray:
        """A view of every router's ``count`` records of ``fields`` at ``cfg.<offset>``."""
        at = getattr(self.cfg, offset)
        return st[:, at : at + count * fields].reshape(st.shape[0], count, fields)

    def router_records(self, offset: str, count: int, fields: int) -> np.ndarray:
        """Per router, a view of its records (e.g. ``"ovc"``, P·V, ``F.N_VC``)."""
        st = self.arrays["st"].reshape(self.topology.n_routers_all, -1)
        return self._records(st, offset, count, fields)

    @property
    def packet_table(self) -> np.ndarray:
        """Every packet record, one row each (a view: writes go to the simulation)."""
        return self.arrays["pk"].reshape(-1, F.N_PK)

    @property
    def terminal_table(self) -> np.ndarray:
        """Every terminal's block, one row each (a view)."""
        return self.arrays["nd"].reshape(self.topology.n_nodes, -1)

    def load_packets(
        self,
        src: np.ndarray,
        lo: np.ndarray,
        hi: np.ndarray,
        size,
        *,
        service: np.ndarray | None = None,
        group: np.ndarray | None = None,
        release: np.ndarray | None = None,
        opened: np.ndarray | None = None,
        order: np.ndarray | None = None,
    ) -> None:
        """Packets to send instead of (or beside) the synthetic sources.

        Packet k leaves terminal ``src[k]`` for the terminals ``dest[lo[k]:hi[k]]`` (the
        ``dest`` this machine was built with, in routing order: one for unicast, several
        for multicast) with ``size`` flits. ``service[j]``: cycles the server of the
        terminal takes for destination entry j (sink mode 1). Packets come in release
        groups (``group[k]``, default all 0): group g opens at ``opened[g]`` when that is
        ≥ 0, else once group g − 1 is wholly processed, and packet k enters its source's
        queue ``release[k]`` cycles after its group opened (default 0). ``order[k]``: its
        dimension order (``engine.hardware.routing.XY``/``YX``; default: the routing's, drawn from
        the machine's seed where packets take either, ``Routing.choose``), which a multicast
        packet's destinations follow.
        """
        src = np.asarray(src, dtype=np.int64)
        n = src.size
        group = np.zeros(n, dtype=np.int64) if group is None else np.asarray(group, np.int64)
        release = np.zeros(n, dtype=np.int64) if release is None else np.asarray(release, np.int64)
        n_groups = int(group.max(initial=-1)) + 1 if opened is None else len(opened)
        if opened is None:
            opened = np.full(n_groups, -1, dtype=np.int64)
            opened[:1] = 0
        elif n_groups and opened[0] < 0:  # the kernel reads group g − 1's state for g
            raise ValueError("group 0 has no group before it to wait for: give it a cycle")
        a = self.arrays
        if n + 2 * self.topology.n_nodes + 16 > a["pk"].size // F.N_PK:
            a["pk"] = np.zeros((n + 4 * self.topology.n_nodes + 64) * F.N_PK, dtype=np.int64)
        pk = self.packet_table[:n]
        pk[:, [F.PK_NEXT, F.PK_CTIME, F.PK_ITIME, F.PK_ATIME, F.PK_DONE]] = -1
        pk[:, F.PK_SRC] = src
        pk[:, F.PK_LO] = lo
        pk[:, F.PK_HI] = hi
        pk[:, F.PK_SIZE] = size
        pk[:, F.PK_HOPS] = 0
        pk[:, F.PK_MEAS] = 1
        pk[:, F.PK_PARENT] = np.arange(n)
        pk[:, F.PK_GROUP] = group
        pk[:, F.PK_ROUTE] = self.routing.choose(n, self.seed) if order is None else order
        pk[:, F.PK_ID] = np.arange(n)
        a["ctr"][F.C_NPK] = n
        n_dest = int(np.max(hi, initial=0))
        a["dsvc"] = (np.zeros(max(1, n_dest), dtype=np.int64) if service is None
                     else np.asarray(service, dtype=np.int64))  # fmt: skip
        order = np.lexsort((np.arange(n), release, group))
        a["rel_order"] = order.astype(np.int64)
        a["rel_off"] = release[order].astype(np.int64)
        a["grp_ptr"] = np.concatenate([[0], np.cumsum(np.bincount(group, minlength=n_groups))])
        grp = np.zeros((3, n_groups), dtype=np.int64)
        grp[F.G_OPEN] = opened
        deliveries = np.asarray(hi) - np.asarray(lo)  # one per destination entry
        grp[F.G_LEFT] = np.bincount(group, weights=deliveries, minlength=n_groups)
        grp[F.G_DONE] = -1
        a["grp"] = grp

    def track(self, packet: int, entry: int | None = None) -> None:
        """Log packet record ``packet``'s way through the routers (``hops``), hop by hop.

        ``entry``: the destination entry (an index into ``dest``) to follow when a
        multicast packet branches (default its first). Tracking does not change the run.
        """
        ctr, pk = self.arrays["ctr"], self.packet_table
        if self.pool:  # its record is known once it is created (kernel.sources._generate)
            ctr[F.C_TRACK_ID], ctr[F.C_TRACK], ctr[F.C_TRACK_K] = packet, -1, -1
            ctr[F.C_TRACK_N] = 0
            return
        ctr[F.C_TRACK] = packet
        ctr[F.C_TRACK_K] = pk[packet, F.PK_LO] if entry is None else entry
        ctr[F.C_TRACK_N] = 0

    def hops(self) -> np.ndarray:
        """The tracked packet's hops so far, one row each, in the kernel's ``H_*`` order."""
        ctr = self.arrays["ctr"]
        n = int(ctr[F.C_TRACK_N])
        return ctr[F.N_CTR : F.N_CTR + n * F.N_HOP].reshape(n, F.N_HOP).copy()

    @property
    def tracked(self) -> int:
        """The record the tracked packet travels in now (a multicast branch has its own)."""
        return int(self.arrays["ctr"][F.C_TRACK])

    # ------------------------------------------------------------ running
    @property
    def t(self) -> int:
        """The next cycle to simulate."""
        return int(self.arrays["ctr"][F.C_T])

    @property
    def in_flight(self) -> int:
        return int(self.arrays["ctr"][F.C_INFLIGHT])

    @property
    def n_packets(self) -> int:
        """Packets (records, or with ``pool`` packets created) so far."""
        return int(self.arrays["ctr"][F.C_NPK])

    def measure(self, start: int, stop: int) -> None:
        """Count accepted flits arriving in [start, stop)."""
        self.arrays["ctr"][F.C_MEASURE_FROM] = start
        self.arrays["ctr"][F.C_MEASURE_TO] = stop

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
            span = F.Span(
                t_end=int(t_end),
                inject_p=float(inject_p),
                size=int(packet_flits),
                fraction=self.fraction,
                measured=1 if measured else 0,
                window=int(self.window),
                stop_when_idle=bool(stop_when_idle),
            )
            status = kernel.run(
                a["cfg"], *(kind(*(a[f] for f in kind._fields)) for kind in KERNEL_TUPLES),
                a["dw"], a["ws"], span,
            )  # fmt: skip
            if self.pool:
                self._read_log()
            if status == F.FULL:
                self._grow(t_end)
                continue
            if status == F.DEADLOCK:
                raise SimulationError(self._deadlock_message())
            return status

    def _read_log(self) -> None:
        """The packets retired since the last call, to ``on_retire`` (and, with ``keep``, to
        the kept rows); the log is empty again."""
        a = self.arrays
        n = int(a["ctr"][F.C_LOG_N])
        if n == 0:
            return
        cols = a["log"].reshape(F.N_LOG, -1)  # (the kernel writes it column by column)
        batch = {name: cols[j, :n].copy() for j, name in enumerate(LOG_FIELDS)}
        a["ctr"][F.C_LOG_N] = 0
        if self.keep:
            self._kept.append(batch)
        if self.on_retire is not None:
            self.on_retire(batch)

    def _grow(self, t_end: int) -> None:
        a = self.arrays
        cap = a["pk"].size // F.N_PK
        topo = self.topology
        if self.pool and a["ctr"][F.C_NFREE] <= topo.n_nodes:  # more in flight: twice the records
            new = 2 * cap
            grown = np.zeros(new * F.N_PK, dtype=np.int64)
            grown[: a["pk"].size] = a["pk"]
            _blank(grown.reshape(new, F.N_PK)[cap:])
            a["pk"] = grown
            nfree = int(a["ctr"][F.C_NFREE])
            free = np.zeros(new, dtype=np.int64)
            free[:nfree] = a["free"][:nfree]
            free[nfree : nfree + new - cap] = np.arange(new - 1, cap - 1, -1)
            a["free"] = free
            a["ctr"][F.C_NFREE] = nfree + new - cap
            d = np.zeros(new, dtype=np.int64)
            d[:cap] = a["dest"][:cap]
            a["dest"] = d
        ahead = a["cfg"].ahead  # a router may make branches for ahead + 1 cycles
        branches = topo.n_routers_all * topo.n_ports * a["cfg"].b * (ahead + 1)
        need = 1 + self.n_packets + 2 * topo.n_nodes + branches
        if not self.pool and need >= cap:
            new = max(2 * cap, need + 1024)
            grown = np.zeros(new * F.N_PK, dtype=np.int64)
            grown[: a["pk"].size] = a["pk"]
            a["pk"] = grown
            if a["rel_order"].size == 0:  # synthetic packets keep their destination in dest[p]
                d = np.zeros(new, dtype=np.int64)
                d[: a["dest"].size] = a["dest"]
                a["dest"] = d
        last = (self.t + ahead) // self.window if self.window else 0
        if self.window and last >= a["win_link"].shape[0]:
            rows = max(2 * a["win_link"].shape[0], last + 1)  # as it goes
            for name in ("win_link", "win_occ", "win_wait"):
                old = a[name]
                grown = np.zeros((rows, old.shape[1]), dtype=old.dtype)
                grown[: old.shape[0]] = old
                a[name] = grown

    def _deadlock_message(self) -> str:
        topo = self.topology
        P, V = topo.n_ports, self.noc.vcs  # noqa: N806
        held = self.router_records("ovc", P * V, F.N_VC)[:, :, F.VC_N].sum(axis=1)
        stuck = np.flatnonzero(held > 0)
        x, y = topo.router_xy(stuck[:12])
        mesh = topo.router_mesh(stuck[:12])
        names = ", ".join(
            f"({a},{b})" + (f" on mesh {m}" if topo.meshes > 1 else "")
            for a, b, m in zip(x.tolist(), y.tolist(), mesh.tolist(), strict=True)
        )
        more = f" and {stuck.size - 12} more" if stuck.size > 12 else ""
        return (
            f"the network deadlocked at cycle {self.t}: no flit moved for "
            f"{self.watchdog} cycles while {self.in_flight} were in flight; routers "
            f"holding flits: {names}{more}"
        )

    # ------------------------------------------------------------ reading back
    def packets(self, *names: str) -> dict[str, np.ndarray]:
        """Every packet record so far (copies), by field name: ``names`` (``PACKET_FIELDS``),
        or all. The columns are gathered in one pass over the records (``kernel.columns``:
        a copy column by column reads the whole table once per column).

        With ``pool``, the records are the run's packets in the order they were created —
        the kept retired rows (``keep``) and the records in use — each its own packet
        (``parent``), its destination ``dest[lo]``."""
        names = names or PACKET_FIELDS
        if self.pool:
            table = self._merged()
            return {name: table[name].copy() for name in names}
        at = np.array([PACKET_FIELDS.index(name) for name in names], dtype=np.int64)
        cols = kernel.columns(self.arrays["pk"], self.n_packets, at)
        return dict(zip(names, cols, strict=True))

    def live_packets(self, *names: str) -> dict[str, np.ndarray]:
        """With ``pool``: the packets whose records are in use (created, not yet whole at
        their terminal), by field name (``PACKET_FIELDS``, and ``dst``), in record order."""
        a = self.arrays
        cap = a["pk"].size // F.N_PK
        want = [n for n in names if n != "dst"] + ["parent", "lo"]
        at = np.array([PACKET_FIELDS.index(name) for name in want], dtype=np.int64)
        cols = dict(zip(want, kernel.columns(a["pk"], cap, at), strict=True))
        live = cols["parent"] == np.arange(cap)
        out = {name: cols[name][live] for name in names if name != "dst"}
        if "dst" in names:
            out["dst"] = a["dest"][cols["lo"][live]]
        return out

    def _merged(self) -> dict[str, np.ndarray]:
        """(pool) The run's table: kept retired rows and records in use, by packet number."""
        if self._table is not None and self._table[0] == self.t:
            return self._table[1]
        if not self.keep:
            raise ValueError("this machine keeps no retired packets: build it with keep=True")
        fields = [f for f in LOG_FIELDS if f != "dst"]
        live = self.live_packets(*fields, "dst", "done")
        parts = [*self._kept, live]
        rows = {f: np.concatenate([part[f] for part in parts]) for f in (*fields, "dst")}
        n = rows["id"].size
        order = np.argsort(rows["id"], kind="stable")
        rows = {f: v[order] for f, v in rows.items()}
        if not np.array_equal(rows["id"], np.arange(n)):
            raise RuntimeError("the kept packets are not every packet of the run")
        ids = np.arange(n, dtype=np.int64)
        arrived = np.concatenate([np.ones(sum(p["id"].size for p in self._kept), bool),
                                  np.zeros(live["id"].size, bool)])[order]  # fmt: skip
        table = {
            **{f: rows[f] for f in fields},
            "next": np.full(n, -1, dtype=np.int64),
            "lo": ids,
            "hi": ids + 1,
            "done": np.where(arrived, rows["atime"], -1),  # sink mode 0: processed on arrival
            "parent": ids,
            "group": np.full(n, -1, dtype=np.int64),
            "dst": rows["dst"],
        }
        self._table = (self.t, table)
        return table

    @property
    def dest(self) -> np.ndarray:
        """Destination terminals: of destination entry ``lo`` (with ``pool``, of the packet
        numbered ``lo``: a synthetic packet's one entry is its number)."""
        if self.pool:
            return self._merged()["dst"]
        return self.arrays["dest"]

    @property
    def link_flits(self) -> np.ndarray:
        """Flits per link id of every mesh copy (``Topology.n_links``; ``Topology.fold_links``
        sums them into the engine's link ids)."""
        return self.arrays["link_flits"]

    @property
    def accepted_flits(self) -> np.ndarray:
        return self.terminal_table[:, F.ND_ACC]

    def stalls(self) -> dict[str, np.ndarray]:
        """Per router of the grid: cycles a VC waited because every output VC was held
        (``vc_busy``), lost VC allocation (``vc_lost``), had no downstream credit
        (``no_credit``), lost the switch (``switch_lost``); with parallel meshes, the router's
        copies summed."""
        s = self.topology.fold_routers(self.router_records("omisc", 1, F.N_MISC)[:, 0])
        s = s[:, F.M_STALL :]
        return {name: s[:, k].copy() for k, name in enumerate(F.STALLS)}

    def window_trace(self, n_windows: int) -> tuple[np.ndarray, np.ndarray]:
        """Of a traced run: per window, ``(occupancy, waits)`` — the most flits each input
        port of every copy held, those it held when the window opened included, and per
        router of the grid and reason (``F.W_*``: an output VC, a credit, the switch) the
        cycles its VCs waited (with parallel meshes, the router's copies summed) — with
        the windows after a router's last cycle and the waits still going on at ``t``
        completed as the kernel would have (``kernel.close_windows``)."""
        R, P = self.topology.n_routers_all, self.topology.n_ports  # noqa: N806
        a = self.arrays
        occ = np.zeros((n_windows, R * P), dtype=np.int32)
        waits = np.zeros((n_windows, R * F.N_WAIT), dtype=np.int32)
        rows = min(n_windows, a["win_occ"].shape[0])
        occ[:rows], waits[:rows] = a["win_occ"][:rows], a["win_wait"][:rows]
        kernel.close_windows(a["cfg"], a["st"], occ, waits, int(self.window), int(self.t))
        waits = waits.reshape(n_windows, R, F.N_WAIT).transpose(1, 0, 2)
        return occ, self.topology.fold_routers(waits).transpose(1, 0, 2)


def _blank(rows: np.ndarray) -> None:
    """Packet records (rows of the table) made free: no packet (``kernel.sinks._retire``)."""
    rows[:, [F.PK_PARENT, F.PK_CTIME, F.PK_ATIME]] = -1
    rows[:, F.PK_MEAS] = 0
