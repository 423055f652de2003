"""Walk one packet: its route hop by hop, each router's pipeline stages, and why it waited.

A run is simulated once to find the packets that went from a source to a destination;
one of them (the slowest, by default) is then followed through the same run simulated
again with that packet tracked (``Machine.track``): a seeded run is deterministic and
tracking does not change it. At every router the kernel logs when the packet's head
arrived, when its route was ready, when it won an output virtual channel and when its head
and tail left, and what it waited for on the way.

At a router, alone in the network, a head leaves ``routing + VC allocation + switch
allocation − 1`` cycles after it arrives (the switch traversal and the link follow). Every
cycle beyond that is a wait, split by stage:

* **behind** another packet in the same input VC (its route is computed once that
  packet's tail has left);
* **VC allocation**: every output VC it could take was held by other packets
  (``vc_busy`` cycles), or it lost the allocation to another head;
* **switch allocation**: the buffer ahead was full (no credit: back-pressure), or it lost
  the switch to another input, or the link was still sending an earlier flit.

The source core may hold it before the first router (its own earlier packets go first), and
a destination core processing earlier messages holds its tail's credit (``sink``).
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, replace

import numpy as np

from engine.errors import SpecError
from engine.hardware import Hardware, NocConstants
from engine.hardware.routing import ORDER_LABELS, ORDER_NAMES
from engine.simulate import records as F  # noqa: N812 - the kernel's fields and layout
from engine.simulate.synthetic import SyntheticRun, run_synthetic
from engine.simulate.zeroload import zero_load_cycles

__all__ = [
    "CHOICES", "Hop", "PacketWalk", "choose_packet", "endpoint_text", "parse_walk",
    "slowest_pair", "terminals_at", "walk_step", "walk_synthetic",
]  # fmt: skip

CHOICES = ("slowest", "median", "fastest", "first")  # which packet of the pair to follow
DIRECTIONS = ("east", "west", "south", "north")  # mesh ports 0–3 (+x, −x, +y, −y)


@dataclass(frozen=True)
class Hop:
    """The packet at one router (cycles are the run's)."""

    router: tuple[int, int]  # (x, y) on the global router grid (of its mesh, when several)
    came_from: str  # "west" (the neighbour it came from) or "core" (its own source core)
    arrive: int  # its head was written into the input buffer
    ready: int  # its route was computed: it may ask for an output VC
    vc_won: int  # it holds an output VC
    head_out: int  # its head won the switch (it crosses the switch and the link next)
    tail_out: int  # its tail won the switch
    out: str  # "east" … or "core" (it leaves the mesh here)
    behind: int  # cycles behind another packet in its input VC
    vc_alloc: int  # cycles of VC allocation beyond the pipeline's
    vc_busy: int  # … of them, every output VC it could take was held
    vc_lost: int  # VC allocations it lost
    switch: int  # cycles of switch allocation beyond the pipeline's
    no_credit: int  # … of them, the buffer ahead was full
    switch_lost: int  # switch allocations it lost
    link: int  # cycles from winning the switch to the next router's buffer (or the core's)
    lost_cycles: int = 0  # of ``switch``, the cycles the lost allocations cost
    body: int = 0  # cycles its tail left later than right behind its head

    @property
    def waited(self) -> int:
        return self.behind + self.vc_alloc + self.switch

    def reasons(self) -> list[str]:
        """Why it waited here, the longest wait first (empty: it did not)."""
        out = []
        if self.behind:
            out.append((self.behind, f"{self.behind:,} behind another packet in its input buffer"))
        if self.vc_alloc:
            parts = []
            if self.vc_busy:
                parts.append(f"every {self.out} VC held for {self.vc_busy:,}")
            if self.vc_lost:
                parts.append(f"lost {_times(self.vc_lost)} to other packets")
            why = f" ({'; '.join(parts)})" if parts else ""
            out.append((self.vc_alloc, f"{self.vc_alloc:,} for an output VC{why}"))
        if self.switch:
            parts = []
            if self.no_credit:
                parts.append(f"the buffer {self._ahead} was full for {self.no_credit:,}")
            if self.switch_lost:
                parts.append(
                    f"lost the switch {_times(self.switch_lost)} to other packets"
                    + (f", {self.lost_cycles:,} cycles" if self.lost_cycles != self.switch_lost
                       else "")
                )  # fmt: skip
            rest = self.switch - self.no_credit - self.lost_cycles
            if rest > 0:
                parts.append(f"{rest:,} while the link was still sending an earlier flit")
            why = f" ({'; '.join(parts)})" if parts else ""
            out.append((self.switch, f"{self.switch:,} for the switch{why}"))
        return [text for _, text in sorted(out, key=lambda w: -w[0])]

    @property
    def _ahead(self) -> str:
        return "of its core" if self.out == "core" else f"in the router to the {self.out}"


@dataclass(frozen=True)
class PacketWalk:
    """One packet's way from its source terminal to its destination, hop by hop."""

    src: int  # terminals (a step's cores)
    dst: int
    record: int  # the packet record followed (the run's numbering)
    flits: int
    created: int  # cycle it was created (entered its source's queue)
    injected: int  # its head left the source core
    arrived: int  # its tail reached the destination
    done: int  # the destination had processed it (= arrived when cores are sinks)
    service: int  # cycles the destination core's work on it took (0 when cores are sinks)
    ahead: int  # packets of its source core that left before it, created no later
    zero_load: int  # creation to arrival, alone in the network
    hops: tuple[Hop, ...]
    pipeline: int  # a router's cycles from a head's arrival to its switch grant, alone
    tail_lag: int  # cycles its tail reached the last router's switch later than alone
    candidates: int  # packets of this pair in the run
    choice: str
    route: str = "xy"  # its dimension order (engine.hardware.routing's ORDER_NAMES)

    @property
    def latency(self) -> int:
        return self.arrived - self.created

    @property
    def at_source(self) -> int:
        """Cycles queued at the source core before the head left it."""
        return self.injected - self.created

    def rows(self) -> list[dict]:
        """A table: one row per router, its stage cycles and why it waited."""
        return [
            {
                **asdict(h),
                "router": f"({h.router[0]},{h.router[1]})",
                "waited": h.waited,
                "why": "; ".join(h.reasons()) or "—",
            }
            for h in self.hops
        ]

    def sentences(self) -> list[str]:
        """The walk in a few sentences: how long, against alone, and the main waits."""
        extra = self.latency - self.zero_load
        n = len(self.hops)
        lines = [
            f"This packet of {self.flits} flit{'s' if self.flits != 1 else ''} was created at "
            f"cycle {self.created:,} and its tail arrived at {self.arrived:,}: "
            f"{self.latency:,} cycles across {n} router{'s' if n != 1 else ''}"
            + (f" ({ORDER_LABELS[ORDER_NAMES.index(self.route)]})" if self.route != "xy" else "")
            + ", against "
            f"{self.zero_load:,} alone in the network"
            + (f" ({extra:,} waiting)." if extra > 0 else ".")
        ]
        if self.at_source > 0:
            why = (
                f"behind {self.ahead:,} packet{'s' if self.ahead != 1 else ''} queued there "
                "before it (a core injects one flit per cycle, when its router has room)"
                if self.ahead
                else "until its router's input buffer had room"
            )
            lines.append(f"It waited {self.at_source:,} cycles at its source core, {why}.")
        worst = sorted(self.hops, key=lambda h: -h.waited)
        for h in worst[:3]:
            if h.waited <= 0:
                break
            x, y = h.router
            lines.append(f"At router ({x},{y}): {h.waited:,} cycles — {'; '.join(h.reasons())}.")
        if self.tail_lag > 0:
            lines.append(
                f"Its tail came {self.tail_lag:,} cycles later behind its head than it would "
                "alone: body flits waited for credits or lost the switch on the way."
            )
        if self.done > self.arrived:
            queued = self.done - self.arrived - self.service
            lines.append(
                f"The destination core then took {self.done - self.arrived:,} cycles to "
                f"process it: {self.service:,} of work"
                + (f" after {queued:,} on earlier messages." if queued > 0 else ".")
            )
        if extra <= 0:
            lines.append("It never waited: every stage took the pipeline's time.")
        return lines

    def to_dict(self) -> dict:
        d = {k: v for k, v in asdict(self).items() if k != "hops"}
        d["latency"] = self.latency
        d["at_source"] = self.at_source
        d["hops"] = self.rows()
        d["sentences"] = self.sentences()
        return d


def _names(terminals, topo) -> str:
    """Terminals as a person named them: a router ``(x,y)`` (all its cores, or its one), or
    cores ``(x,y):s`` (the page's notation: router and slot)."""
    t = np.unique(np.atleast_1d(terminals))
    routers = topo.node_router[t]
    xy = [(int(r % topo.width), int(r // topo.width)) for r in routers]
    if np.unique(routers).size == 1 and (t.size == topo.local or topo.local == 1):
        return f"router ({xy[0][0]},{xy[0][1]})"
    slots = topo.node_port[t] - 4
    named = ", ".join(f"({x},{y}):{int(c)}" for (x, y), c in zip(xy, slots, strict=True))
    return f"core{'s' if t.size > 1 else ''} {named}"


def _times(n: int) -> str:
    return "once" if n == 1 else f"{n} times"


# (x,y) or (x,y):s, the page's notation; x,y and x,y,s (the older form) too
_ADDRESS = re.compile(r"^\s*\(?\s*(\d+)\s*,\s*(\d+)\s*(?:,\s*(\d+)\s*)?\)?\s*(?::\s*(\d+)\s*)?$")


def terminals_at(hardware: Hardware, text: str) -> np.ndarray:
    """The cores (global ids, the simulator's terminals) ``text`` names: ``(x,y)`` — every
    core of the router at (x, y) of the whole board — or ``(x,y):s``, its slot ``s`` (the
    page's notation; ``x,y`` and ``x,y,s`` are read too). Raises ``SpecError`` saying what
    to write."""
    m = _ADDRESS.match(text or "")
    if m is None or (m[3] is not None and m[4] is not None):
        raise SpecError(
            f"name a router as (x,y) or a core as (x,y):slot (e.g. (3,1) or (3,1):0), not {text!r}"
        )
    x, y = int(m[1]), int(m[2])
    gw, gh = hardware.grid_width, hardware.grid_height
    if not (x < gw and y < gh):
        raise SpecError(f"({x},{y}) is off the {gw}×{gh} mesh: x is 0–{gw - 1}, y 0–{gh - 1}")
    table = hardware.core_table
    cores = np.flatnonzero(table["router"] == y * gw + x)
    slot = m[3] if m[3] is not None else m[4]
    if slot is not None:
        k = hardware.cores_per_router
        if int(slot) >= k:
            raise SpecError(f"router ({x},{y}) has cores 0–{k - 1}, not {slot}")
        cores = cores[table["slot"][cores] == int(slot)]
    return cores


def endpoint_text(hardware: Hardware, core: int) -> str:
    """How ``terminals_at`` names ``core``: ``(x,y)``, with ``:s`` when a router has several."""
    t = hardware.core_table
    text = f"({t['gx'][core]},{t['gy'][core]})"
    return text + (f":{t['slot'][core]}" if hardware.cores_per_router > 1 else "")


def parse_walk(hardware: Hardware, text: str):
    """``SRC->DST`` (each as ``terminals_at`` reads it) as two arrays of terminals, or None
    for ``slowest`` (the run's slowest packet). Raises ``SpecError``."""
    if text.strip() == "slowest":
        return None
    ends = text.split("->")
    if len(ends) != 2:
        raise SpecError(
            f"walk names a source and a destination as SRC->DST (e.g. 0,0->3,2 or 1,0,2->3,3), "
            f"or 'slowest', not {text!r}"
        )
    return terminals_at(hardware, ends[0]), terminals_at(hardware, ends[1])


def _delivered(pk) -> np.ndarray:
    """The packet records that reached a terminal: one destination each (a unicast packet,
    or the branch of a multicast one), arrived."""
    return np.flatnonzero((pk["hi"] - pk["lo"] == 1) & (pk["atime"] >= 0))


def slowest_pair(machine) -> tuple[int, int]:
    """The source and destination terminal of the run's slowest delivered packet."""
    pk = machine.packets()
    leaf = _delivered(pk)
    if leaf.size == 0:
        raise SpecError("no packet was delivered in this run: there is nothing to walk")
    j = leaf[np.argmax((pk["atime"] - pk["ctime"])[leaf])]
    return int(pk["src"][j]), int(machine.dest[pk["lo"][j]])


def choose_packet(machine, src, dst, which: str = "slowest") -> tuple[int, int, int]:
    """The packet of ``machine``'s run from terminal ``src`` to ``dst`` (each a terminal or
    several, e.g. the cores of one router) to follow: returns (its packet record as the
    source sent it, its destination entry, how many packets went that way). Raises
    ``SpecError`` when none did."""
    if which not in CHOICES:
        raise SpecError(f"the packet to walk is the {', '.join(CHOICES)} one, not {which!r}")
    pk = machine.packets()
    leaf = _delivered(pk)
    entry = pk["lo"][leaf]
    ok = np.isin(machine.dest[entry], dst) & np.isin(pk["src"][leaf], src)
    cand = leaf[ok]
    if cand.size == 0:
        raise SpecError(
            f"no packet went from {_names(src, machine.topology)} to "
            f"{_names(dst, machine.topology)} in this run; pick a source "
            "and destination that exchange traffic (a flow of the mapping, or a pair the "
            "pattern connects)"
        )
    lat = pk["atime"][cand] - pk["ctime"][cand]
    order = np.lexsort((cand, lat))  # by latency, then record: deterministic
    pick = {
        "slowest": order[-1],
        "fastest": order[0],
        "median": order[order.size // 2],
        "first": int(np.lexsort((cand, pk["ctime"][cand]))[0]),
    }[which]
    c = int(cand[pick])
    return int(pk["parent"][c]), int(pk["lo"][c]), int(cand.size)


def _walk(machine, noc: NocConstants, root: int, entry: int, candidates: int, which: str,
          flits: int) -> PacketWalk:  # fmt: skip
    topo = machine.topology
    pk = machine.packets()
    leaf = np.flatnonzero((pk["lo"] == entry) & (pk["hi"] - pk["lo"] == 1))
    leaf = leaf[pk["parent"][leaf] == root]
    if leaf.size != 1 or pk["atime"][leaf[0]] < 0:
        raise RuntimeError("the tracked run did not deliver the packet the first run did")
    c = int(leaf[0])
    src, dst = int(pk["src"][c]), int(machine.dest[entry])
    log = machine.hops()
    rd, vd, sd = noc.routing_delay, noc.vc_alloc_delay, noc.sw_alloc_delay
    gap = max(sd, 1)  # a body flit follows one switch allocation after the one before
    hops = []
    for j, row in enumerate(log):
        r, i, out = int(row[F.H_ROUTER]), int(row[F.H_IN]), int(row[F.H_OUT])
        arrive, ready, won = int(row[F.H_ARRIVE]), int(row[F.H_READY]), int(row[F.H_VA])
        head, tail = int(row[F.H_HEAD]), int(row[F.H_TAIL])
        nxt = int(log[j + 1][F.H_ARRIVE]) if j + 1 < len(log) else None
        if nxt is None:  # into the core: its head reaches it a link later than it left
            lat = int(topo.latency[r, out]) if out >= 0 else 0
            link = noc.st_delay + lat + 1
        else:
            link = nxt - head
        vc_alloc = won - ready - (vd - 1)
        switch = head - won - sd
        no_credit = min(int(row[F.H_NO_CREDIT]), switch)
        lost = int(row[F.H_SW_LOST])
        hops.append(
            Hop(
                router=tuple(int(c) for c in topo.router_xy(r)),  # on the grid (any mesh)
                came_from=DIRECTIONS[i] if i < 4 else "core",  # input W: from the west
                arrive=arrive,
                ready=ready,
                vc_won=won,
                head_out=head,
                tail_out=tail,
                out=DIRECTIONS[out] if 0 <= out < 4 else "core",
                behind=ready - arrive - rd,
                vc_alloc=vc_alloc,
                vc_busy=min(int(row[F.H_VC_BUSY]), vc_alloc),
                vc_lost=int(row[F.H_VC_LOST]),
                switch=switch,
                no_credit=no_credit,
                switch_lost=lost,
                link=link,
                lost_cycles=min(sd * lost, switch - no_credit),
                body=tail - head - (flits - 1) * gap,
            )  # fmt: skip
        )
    zero = int(zero_load_cycles(topo, noc, np.array([src]), np.array([dst]), flits,
                                pk["route"][c : c + 1])[0])  # fmt: skip
    injected = int(pk["itime"][c])
    roots = np.flatnonzero(pk["parent"] == np.arange(pk["src"].size))
    created = int(pk["ctime"][c])
    # the packets still queued at its source when it was created, that left before it
    ahead = int(
        np.count_nonzero(
            (pk["src"][roots] == src)
            & (pk["ctime"][roots] <= created)
            & (pk["itime"][roots] >= created)
            & (pk["itime"][roots] < injected)
        )
    )
    sinks_serve = machine.cfg.sink == 1
    return PacketWalk(
        src=src, dst=dst, record=c, flits=flits, created=created,
        injected=injected, arrived=int(pk["atime"][c]), done=int(pk["done"][c]),
        service=int(machine.arrays["dsvc"][entry]) if sinks_serve else 0, ahead=ahead,
        zero_load=zero, hops=tuple(hops), pipeline=rd + vd + sd - 1,
        tail_lag=hops[-1].body if hops else 0, candidates=candidates,
        choice=which, route=ORDER_NAMES[int(pk["route"][c])],
    )  # fmt: skip


def walk_step(mapped, src_core: int, dst_core: int, *, which: str = "slowest", first=None,
              **options) -> PacketWalk:  # fmt: skip
    """Follow one packet of a mapping's simulated step from ``src_core`` to ``dst_core``
    (global core ids). ``options`` go to ``simulate_step`` (mode, multicast, seed, spikes…);
    ``first``: that step's ``StepResult`` when it is already simulated."""
    from engine.simulate.step import simulate_step  # the mapping side, for steps only

    options = {k: v for k, v in options.items() if k not in ("window", "track")}
    if first is None:
        first = simulate_step(mapped, **options)
    root, entry, count = choose_packet(first.machine, src_core, dst_core, which)
    tracked = simulate_step(mapped, **options, track=(root, entry))
    return _walk(tracked.machine, mapped.hardware.noc, root, entry, count, which,
                 first.packet_flits)  # fmt: skip


def walk_synthetic(noc: NocConstants, run: SyntheticRun, src: int, dst: int, *,
                   which: str = "slowest", seed: int = 0, first=None) -> PacketWalk:  # fmt: skip
    """Follow one packet of a synthetic run (``run_synthetic``) from terminal ``src`` to
    ``dst``; ``first``: that run's ``SyntheticResult`` when it is already simulated and kept
    its packets (``keep_packets``, or a trace)."""
    run = replace(run, window=0)
    if first is None or not first.machine.keep:
        first = run_synthetic(noc, run, seed=seed, keep_packets=True)
    root, entry, count = choose_packet(first.machine, src, dst, which)
    tracked = run_synthetic(noc, run, seed=seed, track=root)
    return _walk(tracked.machine, noc, root, entry, count, which, run.packet_flits)
