"""The Traffic tab's frames: what one window of a traced run looks like, as columns.

``link_frame``, ``router_frame`` and ``latency_counts`` are numpy functions of a ``Trace``
and a window (tested without a browser); ``traffic_box`` is the part of the mesh a run
opens on. The tab's colours and its text's style live here too, for the view and the
load curve alike.
"""

from __future__ import annotations

import numpy as np

from engine.hardware import Hardware
from engine.simulate import Trace
from engine.simulate.trace import WAIT_REASONS
from explorer.views._page import FONT
from explorer.views.mesh_columns import interpolate_palette, load_colors

__all__ = [
    "BUFFER_PALETTE",
    "FULL_COLOR",
    "TRAFFIC_CSS",
    "WAIT_COLORS",
    "latency_counts",
    "latency_edges",
    "link_frame",
    "router_frame",
    "traffic_box",
]

ZOOM_SHARE = 0.5  # a run on at most this share of the mesh opens zoomed onto it
BUFFER_PALETTE = interpolate_palette(("#f4f6f9", "#c6dbef", "#6baed6", "#2171b5", "#08306b"), 64)
FULL_COLOR = "#e0115f"  # the outline of a router with a full input port
# a stalled router's cross, by what its VCs waited for most (``WAIT_REASONS``' order)
WAIT_COLORS = ("#111827", "#c026d3", "#9ca3af")
TRAFFIC_CSS = f"""
.traffic-counter {{ font-family: {FONT}; font-size: 14px; color: #1f2937; }}
.traffic-counter b {{ font-variant-numeric: tabular-nums; }}
.traffic-summary {{ font-family: {FONT}; font-size: 13px; color: #374151; line-height: 1.45; }}
.traffic-summary .muted {{ color: #6b7280; }}
table.compare {{ border-collapse: collapse; font-variant-numeric: tabular-nums; }}
table.compare td, table.compare th {{ padding: 2px 10px; text-align: right;
  border-bottom: 1px solid #e5e7eb; }}
table.compare td:first-child, table.compare th:first-child {{ text-align: left; }}
table.compare caption {{ text-align: left; color: #6b7280; }}
"""


def traffic_box(hardware: Hardware, geometry: dict, trace: Trace) -> tuple[int, int, int, int]:
    """The routers a run's view opens on, ``(x0, x1, y0, y1)`` inclusive: around every link
    (``link_geometry``) that carried a flit, one router more on each side and widened to the
    mesh's proportions, when that is at most ``ZOOM_SHARE`` of the mesh (a layer placed in a
    corner of a large mesh, where the whole mesh would show it a few pixels wide); else the
    whole mesh."""
    gw, gh = hardware.grid_width, hardware.grid_height
    whole = (0, gw - 1, 0, gh - 1)
    used = trace.link_flits.sum(axis=0)[geometry["link"]] > 0
    if not used.any():
        return whole
    # a segment's ends are within half a router of the routers (or cores) it joins
    xs = np.rint(np.concatenate([geometry["x0"][used], geometry["x1"][used]]))
    ys = np.rint(np.concatenate([geometry["y0"][used], geometry["y1"][used]]))
    x0, x1 = max(0, int(xs.min()) - 1), min(gw - 1, int(xs.max()) + 1)
    y0, y1 = max(0, int(ys.min()) - 1), min(gh - 1, int(ys.max()) + 1)
    # in the mesh's proportions, so that a run along one row opens as a band of the mesh,
    # not a strip a few pixels high that no zoom could widen
    bw, bh = x1 - x0 + 1, y1 - y0 + 1
    if bw * gh < bh * gw:
        x0, x1 = _widen(x0, x1, min(gw, -(-bh * gw // gh)), gw)
    else:
        y0, y1 = _widen(y0, y1, min(gh, -(-bw * gh // gw)), gh)
    if (x1 - x0 + 1) * (y1 - y0 + 1) > ZOOM_SHARE * gw * gh:
        return whole
    return x0, x1, y0, y1


def _widen(lo: int, hi: int, size: int, n: int) -> tuple[int, int]:
    """``[lo, hi]`` grown to ``size`` routers about its middle, kept within ``[0, n)``."""
    lo = max(0, min(lo - (size - (hi - lo + 1)) // 2, n - size))
    return lo, lo + size - 1


def link_frame(trace: Trace, links: np.ndarray, k: int) -> dict[str, np.ndarray]:
    """Window k on the links ``links`` (engine link ids): flits, busy share, colour, width."""
    flits = trace.link_flits[k][links]
    busy = np.clip(trace.utilization(k)[links], 0.0, 1.0)
    return {
        "flits": flits,
        "busy": busy,
        "color": load_colors(busy, 1.0),
        "width": np.where(flits > 0, 1.0 + 2.2 * busy, 0.7),
    }


def router_frame(trace: Trace, k: int, port_capacity: int, vcs: int) -> dict[str, np.ndarray]:
    """Window k per router: its fullest input port's flits and share of the port's buffers,
    and whether some port was full (``port_capacity`` flits: ``vcs`` virtual channels ×
    depth); its VCs stalled on average in the window (``stalled``, and by reason
    ``stalled_vc``, ``stalled_credit``, ``stalled_switch``: cycles waited over the window's
    cycles), the reason most of them waited for (``why``) and the cross that marks them
    (``stall_size`` 0: none; 1: every input VC stalled all the window)."""
    ports = int(trace.meta["ports"])
    occupancy = trace.occupancy[k].reshape(-1, ports)
    fullest = occupancy.max(axis=1)
    share = np.clip(fullest / max(port_capacity, 1), 0.0, 1.0)
    full = fullest >= port_capacity
    if trace.waits is None:  # a trace saved before waits were recorded
        waits = np.zeros((fullest.size, len(WAIT_REASONS)))
    else:
        waits = trace.waits[k] / float(trace.window)
    stalled = waits.sum(axis=1)
    most = waits.argmax(axis=1)
    return {
        "held": fullest,
        "share": share,
        "color": np.asarray(BUFFER_PALETTE, dtype=object)[
            np.minimum((share * len(BUFFER_PALETTE)).astype(int), len(BUFFER_PALETTE) - 1)
        ],
        "line_color": np.where(full, FULL_COLOR, "#dde2e8"),
        "line_width": np.where(full, 3.0, 1.0),
        "stalled": stalled,
        "stalled_vc": waits[:, 0],
        "stalled_credit": waits[:, 1],
        "stalled_switch": waits[:, 2],
        "why": np.where(stalled > 0, np.asarray(WAIT_REASONS, dtype=object)[most], "—"),
        "stall_color": np.asarray(WAIT_COLORS, dtype=object)[most],
        "stall_size": np.where(
            stalled > 0, 0.3 + 0.7 * np.clip(stalled / (ports * vcs), 0.0, 1.0), 0.0
        ),
    }


def latency_counts(trace: Trace, edges: np.ndarray, k: int) -> tuple[np.ndarray, int]:
    """Histogram (over ``edges``) of the latency of the packets arrived by the end of window
    k, and how many arrived."""
    p = trace.packets
    done = p["atime"] < (k + 1) * trace.window
    lat = (p["atime"] - p["ctime"])[done]
    return np.histogram(lat, bins=edges)[0], int(done.sum())


def latency_edges(trace: Trace, bins: int = 40) -> np.ndarray:
    """Bin edges over the whole run's latencies (fixed while the run plays)."""
    p = trace.packets
    lat = p["atime"] - p["ctime"]
    top = float(lat.max()) + 1 if lat.size else 1.0
    return np.linspace(0.0, top, bins + 1)
