"""A simulated run over time: what each link carried and how full each input got, window
by window, and every packet's life — saved as ``.npz`` and read back to scrub through.

A run traced with a window of ``w`` cycles records, for window ``k`` (cycles ``k·w`` to
``(k+1)·w``):

* ``link_flits[k, link]``: flits that entered each link (engine link ids, as the analytic
  model's loads), so ``utilization(k)`` is that over the link's capacity in the window;
* ``occupancy[k, router · ports + port]``: the most flits the input port's buffers held
  (all its virtual channels together), those it held when the window opened included: a
  full port where nothing moves stays full;
* ``waits[k, router, reason]``: the cycles the router's virtual channels spent waiting in
  the window — for an output VC (``WAIT_REASONS[0]``: every one was held, or another packet
  won it), for a credit from downstream (back-pressure: the next buffer is full), or for
  the switch (another input won it); a VC waiting for two windows counts in both.

and, per packet delivered (one record per destination core reached): its source and
destination terminals, the cycles it was created, injected and arrived, the routers it
crossed, and its zero-load (``transit``) latency, so that latency splits into transit and
queueing. The file holds plain arrays and one JSON header (``meta``): what ran, on what.

On hardware with parallel meshes (``links.meshes`` > 1) each link and input port has a copy
per mesh; the trace keeps the one grid: ``link_flits`` is every mesh's flits together,
``occupancy`` the fuller copy's, and ``link_busiest[k, link]`` the busier mesh's flits, which
``utilization`` reads (a link is as busy as its busier mesh, as the analytic model times it).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from engine.errors import InputFileError
from engine.io.files import MAX_FILE_BYTES, parse_json, read_npz
from engine.io.outputs import atomic_open

__all__ = ["PACKET_COLUMNS", "WAIT_REASONS", "Trace", "frame_window", "load_trace", "make_trace"]

FORMAT = "meshscope-trace"
VERSION = 1
PACKET_COLUMNS = ("src", "dst", "ctime", "itime", "atime", "hops", "transit")
WAIT_REASONS = ("output VC", "credit", "switch")  # the last axis of ``Trace.waits``


def frame_window(cycles: int, frames: int) -> int:
    """Cycles per window so that ``cycles`` make at most ``frames`` windows (at least 1)."""
    if frames < 1:
        raise ValueError("at least one frame")
    return max(1, -(-int(cycles) // frames))


@dataclass(frozen=True, eq=False)
class Trace:
    """One run, window by window (see the module's docstring)."""

    meta: dict  # kind ("step" | "synthetic"), width, height, ports, window, cycle_ns, …
    link_flits: np.ndarray = field(repr=False)  # (windows, link ids) int32
    occupancy: np.ndarray = field(repr=False)  # (windows, routers · ports) int32
    link_capacity: np.ndarray = field(repr=False)  # per link id: flits per cycle it can carry
    packets: dict = field(repr=False)  # PACKET_COLUMNS -> int64 arrays, one row per delivery
    stalls: dict = field(default_factory=dict, repr=False)  # per router, cycles by cause
    # (windows, link ids) int32: the busier mesh's flits, with parallel meshes (None: one)
    link_busiest: np.ndarray | None = field(default=None, repr=False)
    # (windows, routers, WAIT_REASONS) int32: cycles waited (None: a trace saved without)
    waits: np.ndarray | None = field(default=None, repr=False)

    @property
    def window(self) -> int:
        return int(self.meta["window"])

    @property
    def n_windows(self) -> int:
        return int(self.link_flits.shape[0])

    @property
    def cycles(self) -> int:
        """Every cycle the run simulated (a synthetic run's drain included)."""
        return int(self.meta["cycles"])

    @property
    def offered_cycles(self) -> int | None:
        """The cycles a synthetic run offered traffic (warm-up and measured cycles): after
        them it only delivered the packets under way. None for a mapping's step."""
        if "measured_cycles" not in self.meta:
            return None
        return int(self.meta.get("warmup", 0)) + int(self.meta["measured_cycles"])

    def utilization(self, k: int) -> np.ndarray:
        """Per link id: the share of window k's capacity its flits used (0 … 1); with
        parallel meshes, its busier mesh's flits over one mesh's capacity."""
        flits = self.link_flits if self.link_busiest is None else self.link_busiest
        return flits[k] / (self.window * np.maximum(self.link_capacity, 1e-12))

    def in_flight(self, k: int) -> int:
        """Packets created before the end of window k and not arrived by its start."""
        p = self.packets
        start, stop = k * self.window, (k + 1) * self.window
        return int(np.count_nonzero((p["ctime"] < stop) & (p["atime"] >= start)))

    def frame(self, k: int) -> dict:
        """Window k as the explorer draws it."""
        if not 0 <= k < self.n_windows:
            raise IndexError(f"window {k} of {self.n_windows}")
        return {
            "window": k,
            "start_cycle": k * self.window,
            "end_cycle": (k + 1) * self.window,
            "link_flits": self.link_flits[k],
            "utilization": self.utilization(k),
            "occupancy": self.occupancy[k],
            "in_flight": self.in_flight(k),
            "waits": None if self.waits is None else self.waits[k],
        }

    def latency(self) -> dict:
        """Per delivered packet: latency, its transit (zero-load) part and its queueing."""
        p = self.packets
        total = p["atime"] - p["ctime"]
        return {"latency": total, "transit": p["transit"], "queueing": total - p["transit"]}

    # ------------------------------------------------------------ files
    def save(self, path) -> None:
        """Write the trace as one ``.npz`` (whole or not at all)."""
        arrays = {
            "meta": np.frombuffer(json.dumps(self.meta).encode(), dtype=np.uint8),
            "link_flits": self.link_flits.astype(np.int32),
            "occupancy": self.occupancy.astype(np.int32),
            "link_capacity": self.link_capacity.astype(np.float64),
        }
        if self.link_busiest is not None:
            arrays["link_busiest"] = self.link_busiest.astype(np.int32)
        if self.waits is not None:
            arrays["waits"] = self.waits.astype(np.int32)
        for name in PACKET_COLUMNS:
            arrays[f"packet_{name}"] = np.asarray(self.packets[name], dtype=np.int64)
        for name, values in self.stalls.items():
            arrays[f"stall_{name}"] = np.asarray(values, dtype=np.int64)
        with atomic_open(path, "wb", what="trace file") as f:
            np.savez_compressed(f, **arrays)


def load_trace(path, *, max_bytes: int = MAX_FILE_BYTES) -> Trace:
    """A trace written by ``Trace.save``, or ``InputFileError`` saying what is wrong;
    ``max_bytes``: the most the file, and its arrays inflated, may hold (checked before they
    are inflated)."""
    path = Path(path)
    need = ["meta", "link_flits", "occupancy", "link_capacity"]
    need += [f"packet_{c}" for c in PACKET_COLUMNS]
    data = read_npz(path, "MeshScope trace", required=need, max_bytes=max_bytes)
    try:
        meta = parse_json(data["meta"].tobytes(), f"{path}: the trace's header")
    except InputFileError:
        raise InputFileError(f"{path}: the trace's header is not JSON") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise InputFileError(f"{path} is not a MeshScope trace (its header names no format)")
    if meta.get("version") != VERSION:
        raise InputFileError(
            f"{path} is a trace of version {meta.get('version')}; this MeshScope reads {VERSION}"
        )
    lf, occ, cap = data["link_flits"], data["occupancy"], data["link_capacity"]
    busiest = data.get("link_busiest")  # only a run of parallel meshes has it
    waits = data.get("waits")  # traces saved before it was recorded have none
    packets = {c: data[f"packet_{c}"] for c in PACKET_COLUMNS}
    ports = meta.get("ports")
    routers = (
        occ.shape[1] // ports if isinstance(ports, int) and ports > 0 and occ.ndim == 2 else -1
    )
    sizes = {a.size for a in packets.values()}
    if (
        lf.ndim != 2
        or occ.ndim != 2
        or lf.shape[0] != occ.shape[0]
        or cap.shape != (lf.shape[1],)
        or (busiest is not None and busiest.shape != lf.shape)
        or (waits is not None and waits.shape != (lf.shape[0], routers, len(WAIT_REASONS)))
        or len(sizes) != 1
        or not isinstance(meta.get("window"), int)
        or meta["window"] < 1
    ):
        raise InputFileError(f"{path}: the trace's arrays do not fit together")
    stalls = {k[len("stall_") :]: v for k, v in data.items() if k.startswith("stall_")}
    return Trace(meta, lf, occ, cap, packets, stalls, busiest, waits)


def make_trace(meta: dict, machine, topology, packets: dict) -> Trace:
    """The trace of a finished run of ``machine`` (traced with ``machine.window`` > 0),
    its parallel meshes folded onto the one grid (see the module)."""
    a = machine.arrays
    n_windows = max(1, -(-machine.t // machine.window))
    per_link = a["win_link"][:n_windows]  # every copy's link ids
    per_port, waits = machine.window_trace(n_windows)  # every copy's ports; the grid's routers
    if per_link.shape[0] < n_windows:  # the run ended before its last window opened
        pad = n_windows - per_link.shape[0]
        per_link = np.vstack([per_link, np.zeros((pad, per_link.shape[1]), np.int32)])
    link_flits = topology.fold_links(per_link)
    occupancy = topology.fold_ports(per_port)
    busiest = None
    if topology.meshes > 1:
        busiest = topology.mesh_links(per_link).max(axis=0)
    capacity = topology.link_capacity
    header = {
        "format": FORMAT,
        "version": VERSION,
        "width": topology.width,
        "height": topology.height,
        "ports": topology.n_ports,
        "meshes": topology.meshes,
        "window": machine.window,
        "cycles": machine.t,
        **meta,
    }
    return Trace(header, link_flits, occupancy, capacity, packets, machine.stalls(), busiest, waits)
