"""Given packets, simulated: each from a terminal to a terminal at a given cycle.

The third source beside the synthetic patterns and a mapping's step: a list of unicast
packets — source, destination, flits, the cycle each is ready at its source — replayed
through the routers, every terminal a sink that takes flits at once. It answers "what does
this exact traffic do" (a trace from another tool, a hand-made scenario for teaching, the
lone packet whose latency the closed form predicts).

    res = run_packets(Topology.mesh(4, 4, noc), noc, src=[0, 5], dst=[15, 15], ready=[0, 0])
    res.latency  # per packet, cycles from ready to its tail's arrival
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from engine.errors import SpecError
from engine.hardware import NocConstants
from engine.hardware.routing import XY, YX
from engine.simulate import records as F  # noqa: N812 - the kernel's fields and layout
from engine.simulate.machine import Machine
from engine.simulate.topology import Topology

__all__ = ["PacketRun", "run_packets"]


@dataclass(frozen=True, eq=False)
class PacketRun:
    """Per packet (in the order given): when it was ready, injected and arrived (its tail),
    and the routers it crossed; the flits of every link (engine link ids, every mesh's
    together: ``Topology.fold_links``); the cycles simulated."""

    ready: np.ndarray
    injected: np.ndarray
    arrived: np.ndarray
    hops: np.ndarray
    link_flits: np.ndarray = field(repr=False)
    cycles: int
    wall_s: float
    machine: Machine = field(repr=False)

    @property
    def latency(self) -> np.ndarray:
        return self.arrived - self.ready


def run_packets(
    topology: Topology,
    noc: NocConstants,
    src,
    dst,
    *,
    flits=1,
    ready=None,
    order=None,
    seed: int = 0,
    limit_cycles: int = 10_000_000,
) -> PacketRun:
    """Simulate unicast packets ``src[k] → dst[k]`` (terminal ids) of ``flits`` flits (one
    number or one per packet), packet k ready at its source at cycle ``ready[k]`` (default
    0) and routed in dimension order ``order[k]`` (``engine.hardware.routing.XY``/``YX``; default
    the routing's, drawn from ``seed`` where its packets take either). Packets of one source
    leave in the order of their ready cycles."""
    src = np.atleast_1d(np.asarray(src, dtype=np.int64))
    dst = np.atleast_1d(np.asarray(dst, dtype=np.int64))
    n = src.size
    size = np.broadcast_to(np.asarray(flits, dtype=np.int64), (n,)).copy()
    ready = np.zeros(n, dtype=np.int64) if ready is None else np.asarray(ready, dtype=np.int64)
    if dst.size != n or ready.size != n:
        raise SpecError("give as many destinations and ready cycles as sources")
    n_nodes = topology.n_nodes
    if n and (min(src.min(), dst.min()) < 0 or max(src.max(), dst.max()) >= n_nodes):
        raise SpecError(f"terminals are numbered 0..{n_nodes - 1}")
    if n and (size.min() < 1 or size.max() > 255 or ready.min() < 0):
        raise SpecError("packets have 1 to 255 flits and are ready at cycle 0 or later")
    start = time.perf_counter()
    if order is not None:
        order = np.broadcast_to(np.asarray(order, dtype=np.int64), (n,))
        if n and not np.isin(order, (XY, YX)).all():
            raise SpecError(f"a packet's order is {XY} (X then Y) or {YX} (Y then X)")
    machine = Machine(topology, noc, sink_mode=0, packets=n + 64, dest=dst, seed=seed)
    idx = np.arange(n, dtype=np.int64)
    machine.load_packets(src, idx, idx + 1, size, release=ready, order=order)
    status = machine.advance(limit_cycles, stop_when_idle=True)
    if status != F.IDLE_END:
        raise SpecError(f"the packets were not delivered within {limit_cycles} cycles")
    pk = machine.packets()
    return PacketRun(
        ready=pk["ctime"][:n].copy(),
        injected=pk["itime"][:n].copy(),
        arrived=pk["atime"][:n].copy(),
        hops=pk["hops"][:n].copy(),
        link_flits=topology.fold_links(machine.link_flits),
        cycles=machine.t,
        wall_s=time.perf_counter() - start,
        machine=machine,
    )
