"""A simulated step in the files of other NoC simulators, to cross-check it there.

* **BookSim2**: an ``anynet`` topology (``PREFIX.anynet``: each router's neighbours with the
  link latencies, and its cores), a configuration (``PREFIX.cfg``) with the router of the
  hardware's ``[noc]`` section, and the step's packets (``PREFIX.trace``: one line per
  packet and destination, ``cycle source destination flits``, the cycle the packet was
  ready at its source core). The lines are in the order the step injected the packets, so
  a replay that sends each source's packets in the order of their lines reproduces the
  step's traffic (every packet of a pipelined step is ready at cycle 0: the order is all
  that says which goes first). Stock BookSim2 routes an anynet by its own minimal-path
  tables, not X-then-Y, and has no trace injection: the trace is for builds that replay
  one; the configuration runs the topology with uniform traffic at the step's mean rate.
* **Noxim**: a traffic table (``src dst pir por t_on t_off t_period`` per line), one line
  per pair of routers that exchange packets, its rate the pair's packets per cycle from
  its first packet to the end of the step. Noxim has one core per tile: cores sharing a router
  are merged into that router's tile, and ids are Noxim's ``y · width + x``.

Hardware with parallel meshes (``links.meshes`` > 1, as Loihi 2's two) is exported as *one*
mesh — the copies are alike, and neither a stock BookSim2 anynet nor Noxim has a notion of a
core's mesh — carrying every packet; both files say so in a comment, since that mesh then
sees the traffic MeshScope spread over all of them (more contention than MeshScope's run).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from engine.io.outputs import atomic_open

__all__ = ["booksim_files", "noxim_table", "step_packets"]


def step_packets(result) -> dict[str, np.ndarray]:
    """Per packet and destination core of a simulated step (a ``StepResult``), in the order
    the step injected them: source core, destination core, the cycle it was ready, its
    flits, the cycle its head left the source."""
    machine = result.machine
    pk = machine.packets()
    roots = np.flatnonzero(pk["parent"] == np.arange(pk["parent"].size))
    count = pk["hi"][roots] - pk["lo"][roots]
    at = np.repeat(roots, count)
    first = np.repeat(pk["lo"][roots], count)
    offset = np.arange(at.size) - np.repeat(np.cumsum(count) - count, count)
    rows = {
        "src": pk["src"][at],
        "dst": machine.dest[first + offset],
        "cycle": pk["ctime"][at],
        "flits": pk["size"][at],
        "injected": pk["itime"][at],
    }
    order = np.lexsort((rows["injected"], rows["cycle"]))  # stable: a packet's copies together
    return {key: value[order] for key, value in rows.items()}


def _one_mesh_note(topo, comment: str) -> str:
    """A comment saying that a run of parallel meshes is written as one ('' for one mesh)."""
    if topo.meshes == 1:
        return ""
    return (
        f"{comment} NOTE: MeshScope simulated {topo.meshes} parallel meshes (links.meshes), each\n"
        f"{comment} core sending on its own; this file has ONE mesh carrying every packet, so\n"
        f"{comment} it sees more contention than MeshScope's run.\n"
    )


def booksim_files(result, hardware, prefix) -> list[Path]:
    """Write ``PREFIX.anynet``, ``PREFIX.cfg`` and ``PREFIX.trace``; returns the paths."""
    topo, noc = result.machine.topology, hardware.noc
    prefix = Path(prefix)
    paths = [prefix.with_name(prefix.name + s) for s in (".anynet", ".cfg", ".trace")]
    lines = []
    for r in range(topo.n_routers):
        parts = [f"router {r}"]
        for o in range(4):
            if topo.nbr[r, o] >= 0:
                parts.append(f"router {topo.nbr[r, o]} {topo.latency[r, o]}")
        # (a latency on a node link crashes BookSim2's anynet parser: core links are 1 cycle)
        parts += [f"node {core}" for core in np.flatnonzero(topo.node_router == r).tolist()]
        lines.append(" ".join(parts))
    packets = step_packets(result)
    rate = packets["flits"].sum() / max(1, result.step_cycles) / max(1, topo.n_nodes)
    allocator = "islip" if noc.allocator == "islip" else "separable_input_first"
    cfg = f"""// BookSim2 configuration of a MeshScope step: {result.mode},
// {result.messages} packets, {result.step_cycles} cycles simulated by MeshScope. Stock
// BookSim2 routes an anynet by minimal-path tables (not X-then-Y) and cannot replay
// {paths[2].name}; this runs the topology with uniform traffic at the step's mean rate.
{_one_mesh_note(topo, "//")}topology = anynet;
network_file = {paths[0].name};
routing_function = min;
num_vcs = {noc.vcs};
vc_buf_size = {noc.buf};
vc_allocator = {allocator};
sw_allocator = {allocator};
alloc_iters = {noc.alloc_iters};
routing_delay = {noc.routing_delay};
vc_alloc_delay = {noc.vc_alloc_delay};
sw_alloc_delay = {noc.sw_alloc_delay};
st_final_delay = {noc.st_delay};
credit_delay = {noc.credit_delay};
packet_size = {result.packet_flits};
traffic = uniform;
injection_rate = {rate:.6f};
injection_rate_uses_flits = 1;
sim_type = latency;
"""
    trace = "".join(
        f"{c} {s} {d} {f}\n"
        for c, s, d, f in zip(
            packets["cycle"].tolist(), packets["src"].tolist(), packets["dst"].tolist(),
            packets["flits"].tolist(), strict=True,
        )
    )  # fmt: skip
    for path, text in zip(paths, ("\n".join(lines) + "\n", cfg, trace), strict=True):
        with atomic_open(path, "w", what="BookSim2 file") as f:
            f.write(text)
    return paths


def noxim_table(result, path) -> Path:
    """Write the step as a Noxim traffic table; returns the path."""
    topo = result.machine.topology
    packets = step_packets(result)
    src = topo.node_router[packets["src"]]
    dst = topo.node_router[packets["dst"]]
    keep = src != dst  # a tile's own cores talk without the network
    src, dst, cycle = src[keep], dst[keep], packets["cycle"][keep]
    pair = src * topo.n_routers + dst
    pairs, inverse, counts = np.unique(pair, return_inverse=True, return_counts=True)
    start = np.full(pairs.size, np.iinfo(np.int64).max)
    stop = np.zeros(pairs.size, dtype=np.int64)
    np.minimum.at(start, inverse, cycle)
    np.maximum.at(stop, inverse, cycle)
    period = max(1, result.step_cycles)
    span = np.maximum(period - start, 1)  # from the pair's first packet to the step's end
    pir = np.minimum(counts / span, 1.0)
    lines = [
        f"% Noxim traffic table of a MeshScope step ({result.mode}): per pair of tiles",
        "% (id = y * width + x), src dst pir por t_on t_off t_period",
    ]
    lines += _one_mesh_note(topo, "%").splitlines()
    for s, d, p, on, off in zip(
        (pairs // topo.n_routers).tolist(), (pairs % topo.n_routers).tolist(), pir.tolist(),
        np.maximum(start - 1, 0).tolist(), [period] * pairs.size, strict=True,
    ):  # fmt: skip
        lines.append(f"{s} {d} {p:.6f} {p:.6f} {on} {off} {period + 1}")
    path = Path(path)
    with atomic_open(path, "w", what="Noxim traffic table") as f:
        f.write("\n".join(lines) + "\n")
    return path
