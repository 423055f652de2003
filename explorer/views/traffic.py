"""The Traffic tab: the cycle-level simulator's run, window by window, to watch congestion.

Run the simulator on the current mapping's time step (pipelined or fall-through, unicast
or multicast) or on a synthetic pattern on a mesh of any shape up to 32 × 32 (the BookSim2
reference router); then play, pause, step and scrub through the recorded windows
(``pn.widgets.Player``):

* each link coloured and thickened by the share of the window it was busy (flits over
  what it can carry), so a saturated link is dark and wide;
* each router's tile coloured by its fullest input port (flits held over the port's
  buffers), outlined in red when a port was full: flits behind it wait, and the wait
  spreads upstream (back-pressure);
* a cross on each router whose packets stalled in the window, as large as the number of
  its virtual channels waiting on average and coloured by what most of them waited for: a
  credit (the next router's buffer was full — back-pressure), an output VC, or the switch;
* the cycle counter with the packets in flight and delivered, and the latency histogram
  of the packets delivered so far, which fills as the run goes.

The column builders (``link_frame``, ``router_frame``, ``latency_counts``) are numpy
functions of a ``Trace``, tested without a browser; ``TrafficView`` draws them.
"""

from __future__ import annotations

import io
import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, replace
from html import escape

import numpy as np
import panel as pn
import param
from bokeh.models import (
    BasicTicker,
    ColorBar,
    ColumnDataSource,
    FixedTicker,
    HoverTool,
    LinearColorMapper,
    NumeralTickFormatter,
    Range1d,
    Span,
    Title,
)
from bokeh.plotting import figure

from engine.errors import MeshScopeError, SpecError, failure_text
from engine.hardware import Hardware, NocConstants
from engine.pipeline import build_mapping, evaluate, resolve_hardware
from engine.placement.fill import MEASURED_US
from engine.routing import routings
from engine.simulate import (
    SyntheticRun,
    Trace,
    build_pattern,
    channel_load_bound,
    frame_window,
    read_curve,
    run_synthetic,
    simulate_step,
    traced_step,
)
from engine.simulate.step import MODES
from engine.simulate.sweep import SATURATION_FACTOR
from engine.simulate.trace import WAIT_REASONS
from engine.simulate.walk import walk_step, walk_synthetic
from explorer import scenes
from explorer.scenes import SCENES, Scene, encode_scene, parse_scene
from explorer.state import ExplorerState, upload_json
from explorer.views._page import (
    FONT,
    ICONS,
    LiveHTML,
    notify_error,
    notify_when_up,
    off_page,
    session_scheduler,
    style_figure,
)
from explorer.views.glossary import labelled_player, term_help, with_terms
from explorer.views.mesh_columns import (
    LOAD_PALETTE,
    MESH_PAD,
    TILE_SIZE,
    interpolate_palette,
    link_geometry,
    load_colors,
    router_columns,
)
from explorer.views.upload import UploadInput
from explorer.views.walk import WalkView

__all__ = [
    "FRAMES",
    "LoadCurve",
    "SWEEP_RATES",
    "curve_sentences",
    "sweep_points",
    "SCENE_LABELS",
    "SOURCES",
    "TrafficRun",
    "compare_table",
    "TrafficView",
    "latency_counts",
    "link_frame",
    "router_frame",
    "simulate_traffic",
    "traffic_box",
    "verdict",
]

CYCLES_HELP = (
    "The cycles traffic is offered for; the run then goes on until the packets under way "
    "are delivered, so the counter below may count more."
)
SCENE_FILE = "a scene file (.json, as Scene as JSON writes it)"
ZOOM_SHARE = 0.5  # a run on at most this share of the mesh opens zoomed onto it
FRAMES = 150  # windows a run is cut into (about; a short run has windows of one cycle)
SOURCES = ("this mapping's step", "a synthetic pattern")
SYNTHETIC_PATTERNS = scenes.PATTERNS  # every pattern but a matrix file
MAX_SIDE = 32  # the largest synthetic mesh a page may ask for
MAX_ROUTER_CYCLES = 40_000_000  # routers × cycles of one synthetic run a page may ask for
BUFFER_PALETTE = interpolate_palette(("#f4f6f9", "#c6dbef", "#6baed6", "#2171b5", "#08306b"), 64)
FULL_COLOR = "#e0115f"  # the outline of a router with a full input port
# a stalled router's cross, by what its VCs waited for most (``WAIT_REASONS``' order)
WAIT_COLORS = ("#111827", "#c026d3", "#9ca3af")
WALK_COLOR = "#059669"  # a walked packet's route (apart from the links' oranges)
_CSS = f"""
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
_SCENE_BUTTON_CSS = ":host .bk-btn { font-size: 12px; padding: 3px 9px; }"
SCENE_LABELS = {
    "uniform-below": "uniform, below saturation", "uniform-beyond": "uniform, beyond",
    "hotspot": "hotspot", "transpose-xy": "transpose, XY", "transpose-yx": "transpose, YX",
    "transpose-o1turn": "transpose, O1TURN", "square": "layer as a square",
    "x-shape": "… as an X", "diagonal": "… on a diagonal",
    "heuristics": "the four fill orders",
}  # fmt: skip


# ------------------------------------------------------------------ running
@dataclass(frozen=True, eq=False)
class TrafficRun:
    """One simulated run ready to play: its trace, the hardware it ran on (for drawing) and
    a sentence of figures."""

    trace: Trace
    hardware: Hardware
    title: str
    summary: str
    walker: Callable | None = None  # (source cores, destination cores, which) -> PacketWalk


def simulate_traffic(
    state: ExplorerState,
    source: str,
    *,
    mode: str = "pipelined",
    multicast: bool = False,
    pattern: str = "uniform",
    side: int = 8,
    rate: float = 0.1,
    packet_flits: int = 1,
    cycles: int = 2000,
    seed: int = 0,
    frames: int = FRAMES,
    routing: str = "xy",
    rows: int = 0,
) -> TrafficRun:
    """Simulate what the Traffic tab asked for, traced in about ``frames`` windows.

    ``source`` is one of ``SOURCES``: the state's current mapping (``mode``,
    ``multicast``; the session's cycle limit applies) or ``pattern`` on a mesh ``side``
    routers wide and ``rows`` deep (0: square) of the reference router at ``rate`` flits
    per node and cycle, measured for ``cycles`` cycles after no warm-up, routed
    ``routing`` (a name of ``engine.routing``'s registry). Raises ``SpecError`` for what the
    page may not ask;
    deterministic for a seed.
    """
    if source == SOURCES[0]:
        if state.mapping is None:
            raise SpecError("load a network and hardware first")
        mapped = state.mapped()
        options = {"mode": mode, "multicast": multicast, "seed": seed,
                   "limit_cycles": state.access.cycles}  # fmt: skip
        step = traced_step(mapped, frames=frames, **options)
        title = f"{state.network.name} on {state.hardware.name}: one {mode} step" + (
            " (multicast)" if multicast else ""
        )
        lat = step.latency
        summary = (
            f"The step took <b>{step.step_cycles:,} cycles = {step.step_us:,.2f} µs</b>, "
            f"bounded by {step.bound}; {step.messages:,} packets of {step.packet_flits} "
            f"flit{'s' if step.packet_flits != 1 else ''}, latency "
            f"{lat['avg_cycles']:,.1f} cycles on average, of which "
            f"{lat['queueing_avg_cycles']:,.1f} queueing. "
            f"<span class='muted'>Analytic model: {state.evaluation.latency_us:,.2f} µs.</span>"
        )

        def walker(src, dst, which):
            return walk_step(mapped, src, dst, which=which, first=step, **options)

        return TrafficRun(step.trace, state.hardware, title, summary, walker)
    if source != SOURCES[1]:
        raise SpecError(f"the Traffic tab simulates {' or '.join(SOURCES)}, not {source!r}")
    width, height = mesh_shape(side, rows)
    if width * height * cycles > MAX_ROUTER_CYCLES:
        most = MAX_ROUTER_CYCLES // (width * height)
        raise SpecError(
            f"{cycles:,} cycles on {width}×{height} routers is more than a page may ask for: "
            f"at most {most:,} cycles on this mesh (the command line has no such limit)"
        )
    spec = synthetic_spec(pattern, width, height)
    run = SyntheticRun(
        spec, width, height, rate=rate, packet_flits=packet_flits, warmup=0, cycles=cycles,
        drain_limit=min(20_000, 4 * cycles), window=frame_window(cycles, frames),
    )  # fmt: skip
    if routing not in routings:
        raise SpecError(f"routing is one of {', '.join(routings)}, not {routing!r}")
    noc = replace(NocConstants(), routing=routing)
    result = run_synthetic(noc, run, seed=seed)
    hardware = resolve_hardware(f"mesh:{width}x{height}")
    title = f"{pattern} traffic on a {width}×{height} mesh at {rate:g} flits/node/cycle" + (
        f", {routings[routing].label}" if routing != NocConstants().routing else ""
    )
    summary = (
        f"Packet latency <b>{result.latency_avg:,.1f} cycles</b> on average (zero-load "
        f"{result.zero_load_latency:,.1f}); accepted {result.accepted_flit_rate:.3f} of "
        f"{result.offered_flit_rate:.3f} offered flits/node/cycle; {verdict(result)}."
    )

    def walker(src, dst, which):
        return walk_synthetic(noc, run, src, dst, which=which, seed=seed, first=result)

    return TrafficRun(result.trace, hardware, title, summary, walker)


MIN_VERDICT_PACKETS = 200  # measured packets below which acceptance says nothing of saturation


def verdict(result) -> str:
    """What a synthetic run says of saturation, in words.

    Past saturation by BookSim2's test (latency over its threshold); or past it because the
    mesh accepted clearly less than was offered, which a run too short for the latency to
    reach the threshold shows first. "Clearly": short by more than 5 % of the offered
    flits, plus the flits a mesh below saturation still holds at the end (a zero-load
    latency's worth: the window opens on an empty mesh), plus three standard deviations of
    that in-flight count — and only over at least ``MIN_VERDICT_PACKETS`` measured packets.
    Or near saturation, latency over the sweep's mark of three times zero-load; else
    stable."""
    if not result.stable:
        return "<b>past saturation</b>: latency keeps growing"
    run = result.run
    flit_slots = run.width * run.height * run.cycles  # terminals × measured cycles
    offered = result.offered_flit_rate * flit_slots  # flits
    short = offered - result.accepted_flit_rate * flit_slots
    in_flight = result.offered_flit_rate * run.width * run.height * result.zero_load_latency
    noise = 3.0 * run.packet_flits * np.sqrt(max(1.0, in_flight / run.packet_flits))
    if (
        result.measured_packets >= MIN_VERDICT_PACKETS
        and short > 0.05 * offered + in_flight + noise
    ):
        return (
            "<b>past saturation</b>: the mesh accepts less than is offered, so the queues at "
            "the sources grow without end (a longer run would fail BookSim2's latency test)"
        )
    if result.latency_avg > SATURATION_FACTOR * result.zero_load_latency:
        return (
            f"<b>near saturation</b>: latency is over {SATURATION_FACTOR:g}× zero-load, where "
            "the sweep marks saturation"
        )
    return "stable"


# ------------------------------------------------------------------ latency against load
SWEEP_RATES = tuple(round(0.02 * k, 2) for k in range(1, 41))  # 0.02 … 0.80
SWEEP_WARMUP, SWEEP_CYCLES = 2000, 5000  # per point: about BookSim2's reading, in ~10 s a curve


def mesh_shape(side: int, rows: int = 0) -> tuple[int, int]:
    """The synthetic mesh a page asks for, ``(width, height)``: ``side`` routers wide and
    ``rows`` deep (0: as deep as wide), each 2 to ``MAX_SIDE``; else ``SpecError``."""
    width, height = int(side), int(rows) or int(side)
    if not (2 <= width <= MAX_SIDE and 2 <= height <= MAX_SIDE):
        raise SpecError(
            f"a synthetic mesh here is 2 to {MAX_SIDE} routers each way, not {width}×{height}"
        )
    return width, height


def synthetic_spec(pattern: str, width: int, height: int | None = None) -> str:
    """The pattern spec a page's choice stands for (a hotspot at the mesh's centre)."""
    height = width if height is None else height
    centre = (height // 2) * width + width // 2
    return f"hotspot:nodes={centre}" if pattern == "hotspot" else pattern


def sweep_points(
    pattern: str,
    side: int,
    packet_flits: int = 1,
    *,
    rates=SWEEP_RATES,
    seed: int = 0,
    cancel: threading.Event | None = None,
    on_point=None,
    routing: str = "xy",
    rows: int = 0,
) -> list[dict]:
    """Run ``pattern`` on a mesh ``side`` wide and ``rows`` deep (0: square) at each rate
    in turn, lowest first, until ``cancel`` is set or two rates in a row are past
    saturation (the curve has shown what it can); ``on_point(point)`` hears of each as it
    comes. Points are ``SyntheticResult.to_dict``."""
    width, height = mesh_shape(side, rows)
    spec = synthetic_spec(pattern, width, height)
    build_pattern(spec, width, height, width * height)  # a pattern the mesh cannot have fails
    base = SyntheticRun(
        spec, width, height, packet_flits=packet_flits, warmup=SWEEP_WARMUP, cycles=SWEEP_CYCLES,
        drain_limit=4 * SWEEP_CYCLES,
    )  # fmt: skip
    points, unstable = [], 0
    for rate in sorted(rates):
        if cancel is not None and cancel.is_set():
            break
        noc = replace(NocConstants(), routing=routing)
        point = run_synthetic(noc, replace(base, rate=rate), seed=seed).to_dict()
        points.append(point)
        if on_point is not None:
            on_point(point)
        unstable = 0 if point["stable"] else unstable + 1
        if unstable == 2:
            break
    return points


def curve_sentences(points, bound: float) -> tuple[str, str]:
    """One sentence on the zero-load latency, one on saturation, from the points so far."""
    zero, saturation = read_curve(points)
    if not np.isfinite(zero):
        return "Sweeping…", ""
    first = (
        f"<b>Zero-load latency {zero:,.1f} cycles</b>: what a packet takes through an empty "
        "mesh — each router's pipeline and each link on its route, and its flits one after "
        "another — measured at the lowest load."
    )
    if saturation is None:
        second = "<b>Saturated from the lowest rate</b>: even this load is more than it carries."
    elif len(points) == 0 or points[-1]["stable"] and points[-1]["rate"] == saturation:
        second = (
            f"Stable up to {saturation:.2f} flits/node/cycle so far (the routes' channel-load "
            f"bound allows at most {bound:.2f})."
        )
    else:
        second = (
            f"<b>Saturation at {saturation:.2f} flits/node/cycle</b>: beyond it packets arrive "
            "faster than the busiest channels drain them, queues grow without end and latency "
            f"explodes (the channel-load bound of these routes is {bound:.2f})."
        )
    return first, second


class LoadCurve(pn.viewable.Viewer):
    """Latency against offered load for the Traffic tab's synthetic pattern, point by point."""

    traffic = param.Parameter(doc="the TrafficView whose pattern, mesh and packets it sweeps")
    sweeping = param.Boolean(default=False)

    def __init__(self, **params):
        super().__init__(**params)
        doc = pn.state.curdoc
        self._schedule = session_scheduler(doc if doc is not None and doc.session_context else None)
        self._cancel = threading.Event()
        self._generation = 0  # sweeps started so far: a point says which one it is from
        self.button = pn.widgets.Button(label="Sweep offered load", width=180)
        self.button.on_click(self._on_click)
        self.points = ColumnDataSource({"rate": [], "latency": [], "accepted": [], "color": []})
        # explicit ranges: Bokeh cannot fit ranges to no data (``show`` fits the points)
        p = figure(
            title="latency against offered load", width=460, height=280, tools="hover,save",
            toolbar_location=None, y_axis_type="log", x_range=Range1d(0, 0.5),
            y_range=Range1d(10, 1000),
        )  # fmt: skip
        style_figure(p, "offered load (flits/node/cycle)", "packet latency (cycles)")
        # 20, 50, 100, 200, 500 …: Bokeh's log ticks label 100, 200, … 700 within a few
        # pixels once latency runs away
        p.yaxis.ticker = FixedTicker(
            ticks=[m * 10**e for e in range(7) for m in (1, 2, 5)], minor_ticks=[]
        )
        p.line("rate", "latency", source=self.points, line_color="#6b7280")
        p.scatter("rate", "latency", source=self.points, size=7, fill_color="color",
                  line_color="white", name="curve")  # fmt: skip
        p.hover.tooltips = [
            ("offered", "@rate{0.00}"), ("latency", "@latency{0,0.0} cycles"),
            ("accepted", "@accepted{0.000}"),
        ]  # fmt: skip
        self.zero_line = Span(dimension="width", line_dash="dashed", line_color="#2171b5",
                              location=None)  # fmt: skip
        self.saturation_line = Span(dimension="height", line_dash="dashed",
                                    line_color=FULL_COLOR, location=None)  # fmt: skip
        p.add_layout(self.zero_line)
        p.add_layout(self.saturation_line)
        self.figure = p
        self.text = LiveHTML(
            "<span class='muted'>Sweep the pattern chosen above from 0.02 flits/node/cycle "
            "up, one run per rate, until it saturates.</span>",
            css=_CSS, div_params={"css_classes": ["traffic-summary"], "width": 330}, width=330,
        )  # fmt: skip
        self._points: list[dict] = []
        self._bound = float("nan")

    def _on_click(self, event=None) -> None:
        with pn.io.hold():
            if self.sweeping:
                self._cancel.set()
                self.button.label = "Stopping…"
            else:
                self.start()

    def start(self) -> None:
        """Sweep the Traffic tab's synthetic pattern in the background (a notification if
        it cannot be built on the chosen mesh)."""
        t = self.traffic
        try:
            width, height = mesh_shape(t.side, t.rows)
            spec = synthetic_spec(t.pattern, width, height)
            pattern = build_pattern(spec, width, height, width * height)
        except MeshScopeError as e:
            notify_error(str(e))
            return
        self._bound = channel_load_bound(pattern, width, height, t.routing)
        # a sweep still running (a scene loaded during one) stops, and what it still
        # publishes is dropped: its points would mix into this curve
        self._cancel.set()
        self._generation += 1
        self._points = []
        self.points.data = {"rate": [], "latency": [], "accepted": [], "color": []}
        self.zero_line.location = self.saturation_line.location = None
        self._cancel = threading.Event()
        self.sweeping = True
        self.button.label = "Stop"
        self.text.object = f"Sweeping {t.pattern} on {width}×{height}…"
        args = (t.pattern, t.side, t.packet_flits, t.routing, t.rows, t.seed, self._cancel,
                self._generation)  # fmt: skip
        threading.Thread(target=self._sweep, args=args, name="meshscope-sweep", daemon=True).start()

    def _sweep(self, pattern, side, flits, routing, rows, seed, cancel, generation) -> None:
        # each publication carries every point so far: the page's next-tick callbacks were
        # seen to run out of order (and a point once went missing), so the curve takes the
        # longest list it has heard of, and the sweep's end brings the whole of it
        swept: list[dict] = []

        def on_point(point: dict) -> None:
            swept.append(point)
            so_far = list(swept)
            self._schedule(lambda: self.show(so_far, generation))

        try:
            sweep_points(pattern, side, flits, seed=seed, cancel=cancel, on_point=on_point,
                         routing=routing, rows=rows)  # fmt: skip
        except Exception as e:  # noqa: BLE001 - a page must hear of any failure
            message = failure_text(e, "the sweep")
            self._schedule(lambda: notify_error(message))
        final = list(swept)
        self._schedule(lambda: self._done(generation, final))

    def add(self, point: dict, generation: int | None = None) -> None:
        """Draw one more point (see ``show``)."""
        self.show([*self._points, point], generation)

    def show(self, points: list[dict], generation: int | None = None) -> None:
        """Draw a sweep's points so far and read the curve again. A list no longer than the
        one drawn (a publication that arrived late) or of an earlier sweep (``generation``)
        is dropped; the points are drawn and read in the order of their rates."""
        if generation is not None and generation != self._generation:
            return
        if len(points) <= len(self._points):
            return
        pts = self._points = sorted(points, key=lambda p: p["rate"])
        self.points.data = {
            "rate": [p["offered_flit_rate"] for p in pts],
            "latency": [p["latency_avg"] for p in pts],
            "accepted": [p["accepted_flit_rate"] for p in pts],
            "color": ["#2171b5" if p["stable"] else FULL_COLOR for p in pts],
        }
        latency = np.array(self.points.data["latency"], dtype=float)
        latency = latency[np.isfinite(latency) & (latency > 0)]
        if latency.size:
            self.figure.y_range.update(start=latency.min() / 1.4, end=latency.max() * 1.4)
        self.figure.x_range.update(start=0, end=1.08 * max(self.points.data["rate"]))
        zero, saturation = read_curve(pts)
        self.zero_line.location = zero if np.isfinite(zero) else None
        done = not pts[-1]["stable"]
        self.saturation_line.location = saturation if (saturation and done) else None
        first, second = curve_sentences(pts, self._bound)
        self.text.object = f"{first}<br><br>{second}"

    def _done(self, generation: int | None = None, points: list[dict] | None = None) -> None:
        if generation is not None and generation != self._generation:
            return  # an earlier sweep's end: the current one still runs
        if points:
            self.show(points, generation)
        self.sweeping = False
        self.button.label = "Sweep offered load"

    def __panel__(self):
        return pn.FlexBox(
            pn.Column(
                pn.pane.Markdown("**Latency against load** (the synthetic pattern above)",
                                 margin=(0, 5)),
                self.button, self.text,
            ),
            self.figure, flex_wrap="wrap", sizing_mode="stretch_width",
        )  # fmt: skip


# ------------------------------------------------------------------ frames
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


# ------------------------------------------------------------------ the view
class TrafficView(pn.viewable.Viewer):
    """Simulate, then play the run window by window."""

    state = param.ClassSelector(class_=ExplorerState)
    source = param.Selector(default=SOURCES[0], objects=list(SOURCES))
    mode = param.Selector(default=MODES[0], objects=list(MODES))
    multicast = param.Boolean(default=False)
    pattern = param.Selector(default="uniform", objects=list(SYNTHETIC_PATTERNS))
    side = param.Integer(default=8, bounds=(2, MAX_SIDE), doc="routers per side (per row)")
    rows = param.Integer(default=0, bounds=(0, MAX_SIDE),
                         doc="rows of routers; 0: as many as per side (a square)")  # fmt: skip
    rate = param.Number(default=0.1, bounds=(0.0, 1.0), doc="offered flits per node and cycle")
    packet_flits = param.Integer(default=1, bounds=(1, 32))
    cycles = param.Integer(default=2000, bounds=(10, 200_000), doc="measured cycles")
    routing = param.Selector(default="xy", objects=routings.names(),
                             doc="how packets are routed (engine.routing)")  # fmt: skip
    seed = param.Integer(default=0, bounds=(0, None))
    running = param.Boolean(default=False)
    loading = param.Boolean(default=False, doc="a scene's mapping is being loaded")
    run = param.ClassSelector(class_=TrafficRun, default=None, allow_None=True)
    scene = param.ClassSelector(class_=Scene, default=None, allow_None=True,
                                doc="the scene last loaded")  # fmt: skip

    def __init__(self, **params):
        super().__init__(**params)
        if "multicast" not in params:  # as the hardware's NoC does (seneca's multicasts)
            self.multicast = bool(self.state.hardware.links.multicast)
        self._doc = pn.state.curdoc if pn.state.curdoc and pn.state.curdoc.session_context else None
        self._schedule = session_scheduler(self._doc)
        self._run_button = pn.widgets.Button(
            label="Simulate", color="primary", icon=ICONS["play"], width=120
        )
        self._run_button.on_click(self._on_simulate)
        self.player = pn.widgets.Player(
            label="window", start=0, end=1, value=0, interval=180, loop_policy="once",
            show_loop_controls=False, width=420, disabled=True,
            visible_buttons=["first", "previous", "pause", "play", "next", "last"],
        )  # fmt: skip
        self.player.param.watch(self._on_frame, "value")
        self.counter = LiveHTML("", css=_CSS, div_params={"css_classes": ["traffic-counter"]})
        self.summary = LiveHTML(
            "<span class='muted'>Simulate to see the run here.</span>", css=_CSS,
            div_params={"css_classes": ["traffic-summary"], "width": 820}, width=820,
        )  # fmt: skip
        self.legend = pn.pane.HTML(
            with_terms(
                "<div class='traffic-summary'>Links: the share of the window each was busy. "
                "Routers: how full their fullest input port was; <b style='color:"
                f"{FULL_COLOR}'>outlined</b> when a port was full, so the flits behind it wait "
                "and the wait spreads upstream (back-pressure). A cross marks a router whose "
                "packets stalled, larger the more of its virtual channels waited: <b style='color:"
                f"{WAIT_COLORS[1]}'>for a credit</b> (the next buffer full), <b style='color:"
                f"{WAIT_COLORS[0]}'>for an output VC</b> (others hold them, often waiting for "
                f"credits themselves), <b style='color:{WAIT_COLORS[2]}'>for the switch</b>. "
                "Packets under way: created and not yet delivered, whether still queued at their "
                "source or in the mesh.</div>"
            ),
            stylesheets=[_CSS],
            width=360,
            margin=(4, 10),
        )
        self._figure_pane = pn.pane.Bokeh(None, margin=(0, 0))
        self._histogram = self._histogram_figure()
        self._links = self._routers = None
        self._edges = np.linspace(0, 1, 2)
        self._options = pn.Column(margin=0)
        self.curve = LoadCurve(traffic=self)
        self.walker = WalkView(self)
        self._route = ColumnDataSource({"x": [], "y": []})
        self._stops = ColumnDataSource(
            {"x": [], "y": [], "size": [], "router": [], "waited": [], "why": []}
        )
        self.param.watch(self._show_options, "source")
        self._show_options()
        self._build_scene_widgets()

    # ------------------------------------------------------------ controls
    def _controls(self) -> pn.Column:
        w = 100
        source = pn.widgets.RadioButtonGroup.from_param(
            self.param.source, name="simulate", color="default", variant="outline",
            orientation="vertical", width=2 * w,
        )  # fmt: skip
        return pn.Column(
            pn.pane.Markdown("**Simulate**", margin=(0, 5)),
            source,
            self._options,
            pn.widgets.IntInput.from_param(self.param.seed, name="seed", width=w),
            self._run_button,
            width=2 * w + 20,
            margin=(0, 5),
        )

    def _show_options(self, *events) -> None:
        w = 200
        if self.source == SOURCES[0]:
            items = [
                pn.widgets.Select.from_param(self.param.mode, name="execution", width=w),
                pn.widgets.Checkbox.from_param(
                    self.param.multicast, name="multicast (a packet per spike)"
                ),
            ]
        else:
            items = [
                pn.widgets.Select.from_param(self.param.pattern, name="pattern", width=w),
                pn.widgets.IntInput.from_param(self.param.side, name="mesh side", width=w),
                pn.widgets.IntInput.from_param(
                    self.param.rows, name="mesh rows (0: as many as the side)", width=w
                ),
                pn.widgets.FloatInput.from_param(
                    self.param.rate, name="offered flits/node/cycle", step=0.01, width=w,
                    description=term_help("flit"),
                ),
                pn.widgets.IntInput.from_param(
                    self.param.packet_flits, name="flits per packet", width=w,
                    description=term_help("flit"),
                ),
                pn.widgets.IntInput.from_param(
                    self.param.cycles, name="cycles", width=w, description=CYCLES_HELP
                ),
                pn.widgets.Select.from_param(
                    self.param.routing, name="routing", width=w,
                    options={routings[name].label: name for name in routings},
                ),
            ]  # fmt: skip
        self._options.objects = items

    # ------------------------------------------------------------ simulating
    def _on_simulate(self, event=None) -> None:
        with pn.io.hold():  # Panel may call a button's handler without the document lock
            self._start()

    def _start(self) -> None:
        if self.running:
            return
        options = {
            "mode": self.mode, "multicast": self.multicast, "pattern": self.pattern,
            "side": self.side, "rows": self.rows, "rate": self.rate,
            "packet_flits": self.packet_flits, "cycles": self.cycles, "seed": self.seed,
            "routing": self.routing,
        }  # fmt: skip
        self.running = True
        self._run_button.disabled = True
        self.counter.object = "simulating…"
        thread = threading.Thread(
            target=self._simulate, args=(self.source, options), name="meshscope-traffic",
            daemon=True,
        )  # fmt: skip
        thread.start()

    def simulate(self, source: str | None = None, **options) -> TrafficRun:
        """Simulate now (in this thread) and show the run; raises ``MeshScopeError``."""
        run = simulate_traffic(self.state, source or self.source, **options)
        self.show(run)
        return run

    def _simulate(self, source: str, options: dict) -> None:
        try:
            run = simulate_traffic(self.state, source, **options)
        except Exception as e:  # noqa: BLE001 - a page must hear of any failure
            message = failure_text(e, "the simulation")
            self._schedule(lambda: self._failed(message))
            return
        self._schedule(lambda: self.show(run))

    def _failed(self, message: str) -> None:
        self.running = False
        self._run_button.disabled = False
        self.counter.object = ""
        notify_error(message)

    def show(self, run: TrafficRun) -> None:
        """Draw ``run`` from its first window; then the view is no longer ``running``."""
        try:
            self.run = run
            trace = run.trace
            self._edges = latency_edges(trace)
            figure = self._mesh_figure(run)
            self._draw(0)  # every column the glyphs name, before the page sees them
            self._figure_pane.object = figure
            self.summary.object = (
                f"<span data-testid='traffic-summary'>{with_terms(run.summary)}</span>"
            )
            self.player.param.update(end=max(trace.n_windows - 1, 1), value=0, disabled=False)
            self.walker.reset(run)
        finally:
            self.running = False
            self._run_button.disabled = False

    def show_walk(self, walk) -> int | None:
        """Draw ``walk``'s route over the mesh, a dot per router sized by its wait, and go to
        the window in which its longest wait began; returns that cycle (None: no wait)."""
        xs = [h.router[0] for h in walk.hops]
        ys = [h.router[1] for h in walk.hops]
        self._route.data = {"x": xs, "y": ys}
        waited = [h.waited for h in walk.hops]
        self._stops.data = {
            "x": xs, "y": ys, "size": [8 + 2.5 * min(12.0, w**0.5) for w in waited],
            "router": [f"({x},{y})" for x, y in zip(xs, ys, strict=True)], "waited": waited,
            "why": ["; ".join(h.reasons()) or "no wait" for h in walk.hops],
        }  # fmt: skip
        worst = max(walk.hops, key=lambda h: h.waited)
        if worst.waited <= 0:
            if walk.at_source <= 0:
                return None
            cycle = walk.created  # it waited only at its source
        else:
            cycle = worst.arrive
        trace = self.run.trace
        self.player.value = int(min(cycle // trace.window, trace.n_windows - 1))
        return cycle

    # ------------------------------------------------------------ drawing
    def _mesh_figure(self, run: TrafficRun):
        hw = run.hardware
        gw, gh = hw.grid_width, hw.grid_height
        geometry = link_geometry(hw)
        pad = MESH_PAD
        x0, x1, y0, y1 = traffic_box(hw, geometry, run.trace)
        ppr = float(np.clip(min(400 / (x1 - x0 + 1), 460 / (y1 - y0 + 1)), 10, 90))
        self._link_px = max(1.0, 0.05 * ppr)
        p = figure(
            title=run.title, width=None, height=None,
            frame_width=int(round(ppr * (x1 - x0 + 2 * pad))),
            frame_height=int(round(ppr * (y1 - y0 + 2 * pad))),
            # the routers the run used, and the whole mesh a pan or zoom away
            x_range=Range1d(x0 - pad, x1 + pad, bounds=(-pad, gw - 1 + pad)),
            y_range=Range1d(y1 + pad, y0 - pad, bounds=(-pad, gh - 1 + pad)),
            tools="pan,wheel_zoom,reset,save", toolbar_location="right",
            background_fill_color="#fbfbfb", outline_line_color=None,
        )  # fmt: skip
        p.toolbar.logo = None
        p.title.text_font_size = "13px"
        if (x0, x1, y0, y1) != (0, gw - 1, 0, gh - 1):
            p.add_layout(Title(
                text=f"routers {x0}–{x1} × {y0}–{y1} of {gw}×{gh}, where the run went: "
                "zoom out for the rest", text_font_size="11px", text_font_style="italic",
                text_color="#6b7280", name="zoomed",
            ), "above")  # fmt: skip
        p.xgrid.visible = p.ygrid.visible = False
        for axis, n in ((p.xaxis, gw), (p.yaxis, gh)):
            axis.ticker = FixedTicker(ticks=list(range(0, n, max(1, n // 16))))
            axis.axis_line_color = axis.major_tick_line_color = axis.minor_tick_line_color = None
            axis.major_label_text_color = "#777777"
        self._link_ids = geometry["link"]
        self._links = ColumnDataSource({k: _listed(v) for k, v in geometry.items()})
        self._routers = ColumnDataSource(router_columns(hw))
        noc = hw.noc if run.trace.meta.get("kind") == "step" else NocConstants()
        self._vcs, self._port_capacity = noc.vcs, noc.vcs * noc.buf
        tiles = p.rect(
            "x", "y", width=TILE_SIZE, height=TILE_SIZE, source=self._routers,
            fill_color="color", fill_alpha=0.7, line_color="line_color", line_width="line_width",
            border_radius=max(2, int(0.08 * ppr)), name="routers",
        )  # fmt: skip
        links = p.segment(
            "x0", "y0", "x1", "y1", source=self._links, line_color="color",
            line_width="width_px", name="traffic-links",
        )  # fmt: skip
        self._stall_px = 0.5 * ppr  # a cross of size 1 spans half a tile
        crosses = p.scatter(
            "x", "y", source=self._routers, marker="x", size="stall_px",
            line_color="stall_color", line_width=max(1.5, 0.04 * ppr), name="stalls",
        )  # fmt: skip
        p.add_tools(
            HoverTool(renderers=[links], line_policy="interp", tooltips=[
                ("link", "@kind @direction (id @link)"), ("from → to", "@src → @dst"),
                ("flits in window", "@flits"), ("busy", "@busy{0%}"),
            ]),
            HoverTool(renderers=[tiles, crosses], tooltips=[
                ("router", "(@x{0}, @y{0})"), ("fullest input port", "@held flits"),
                ("of its buffers", "@share{0%}"),
                ("VCs stalled (mean)", "@stalled{0.0}, mostly for @why"),
                ("… for a credit", "@stalled_credit{0.0}"),
                ("… for an output VC", "@stalled_vc{0.0}"),
                ("… for the switch", "@stalled_switch{0.0}"),
            ]),
        )  # fmt: skip
        self._route.data = {"x": [], "y": []}
        self._stops.data = {k: [] for k in self._stops.data}
        p.line("x", "y", source=self._route, line_color=WALK_COLOR, line_width=4,
               line_alpha=0.9, line_join="round", name="walk-route")  # fmt: skip
        stops = p.scatter(
            "x", "y", size="size", source=self._stops, fill_color=WALK_COLOR,
            line_color="white", line_width=1.5, name="walk-stops",
        )  # fmt: skip
        p.add_tools(HoverTool(renderers=[stops], tooltips=[
            ("router", "@router"), ("waited", "@waited cycles"), ("why", "@why"),
        ]))  # fmt: skip
        p.add_layout(_share_bar(LOAD_PALETTE, "link busy in the window"), "below")
        p.add_layout(_share_bar(BUFFER_PALETTE, "fullest input port of the router"), "below")
        return p

    def _histogram_figure(self):
        # explicit ranges: Bokeh cannot fit ranges to no bars (``_draw`` fits them)
        p = figure(
            title="packets delivered so far, by latency", width=360, height=230,
            tools="", toolbar_location=None, x_range=Range1d(0, 1), y_range=Range1d(0, 1),
        )  # fmt: skip
        style_figure(p, "packet latency (cycles)", "packets")
        self._bars = ColumnDataSource({"left": [], "right": [], "top": []})
        p.quad(
            left="left", right="right", bottom=0, top="top", source=self._bars,
            fill_color="#2171b5", line_color="white", name="latency",
        )  # fmt: skip
        return p

    def _on_frame(self, event) -> None:
        if self.run is not None:
            with pn.io.hold():
                self._draw(int(event.new))

    def _draw(self, k: int) -> None:
        trace = self.run.trace
        k = int(np.clip(k, 0, trace.n_windows - 1))
        links = link_frame(trace, self._link_ids, k)
        links["width_px"] = links.pop("width") * self._link_px
        self._links.data.update({name: _listed(v) for name, v in links.items()})
        routers = router_frame(trace, k, self._port_capacity, self._vcs)
        routers["stall_px"] = routers["stall_size"] * self._stall_px
        self._routers.data.update({name: _listed(v) for name, v in routers.items()})
        counts, delivered = latency_counts(trace, self._edges, k)
        self._bars.data = {"left": self._edges[:-1], "right": self._edges[1:], "top": counts}
        self._histogram.x_range.update(start=self._edges[0], end=self._edges[-1])
        self._histogram.y_range.update(start=0, end=1.05 * max(int(counts.max(initial=0)), 1))
        start, stop = k * trace.window, min((k + 1) * trace.window, trace.cycles)
        span = f"cycle <b>{start:,}</b>" if trace.window == 1 else (
            f"cycles <b>{start:,}–{stop:,}</b>"
        )  # fmt: skip
        full = int(np.count_nonzero(routers["line_color"] == FULL_COLOR))
        pushed = int(np.count_nonzero(routers["stalled_credit"] >= 0.5))
        self.counter.object = "<span data-testid='traffic-counter'>" + (
            f"{span} of {trace.cycles:,}{_drained(trace)} · window {k + 1} of {trace.n_windows} · "
            f"<b>{trace.in_flight(k):,}</b> packets under way · <b>{delivered:,}</b> delivered"
            + (f" · <b style='color:{FULL_COLOR}'>{full}</b> routers with a full input"
               if full else "")
            + (f" · <b style='color:{WAIT_COLORS[1]}'>{pushed}</b> held back by full buffers"
               " downstream" if pushed else "")
        ) + "</span>"  # fmt: skip

    # ------------------------------------------------------------ scenes
    def _build_scene_widgets(self) -> None:
        self._scene_note = ""  # the scene's text while another one loads
        self._scene_buttons = []
        for name, scene in SCENES.items():
            button = pn.widgets.Button(
                label=SCENE_LABELS.get(name, name), description=None, margin=(2, 3),
                color="light", stylesheets=[_SCENE_BUTTON_CSS],
            )  # fmt: skip
            button.on_click(lambda event, scene=scene: self._on_scene(scene))
            self._scene_buttons.append(button)
        self._scene_text = LiveHTML(
            "<span class='muted'>A scene sets up a simulation that shows one thing about "
            "congestion, with a few words on what to look for. Share yours as a link or a "
            "file.</span>",
            css=_CSS, div_params={"css_classes": ["traffic-summary"], "width": 620}, width=620,
        )  # fmt: skip
        self._compare = LiveHTML("", css=_CSS, div_params={"css_classes": ["traffic-summary"]},
                                 margin=(0, 0, 0, 16))  # fmt: skip
        self._share_link = pn.widgets.TextInput(placeholder="link to this setup",
                                                width=200, margin=(2, 5))  # fmt: skip
        share = pn.widgets.Button(label="Share as link", width=200, margin=(2, 5))
        share.on_click(lambda event: self._on_share())
        self._scene_download = pn.widgets.FileDownload(
            callback=self._scene_json, filename="scene.json", label="Scene as JSON",
            embed=False, width=200, margin=(2, 5), variant="outline",
        )  # fmt: skip
        self._scene_upload = UploadInput(
            access=self.state.access, accept=".json", width=200, margin=(2, 5)
        )
        self._scene_upload.param.watch(self._on_scene_file, "value")
        self._share = pn.Column(
            pn.pane.Markdown("**Share**", margin=(10, 5, 0, 5)), share, self._share_link,
            self._scene_download,
            pn.pane.HTML("<div class='traffic-summary'>Open a scene file:</div>",
                         stylesheets=[_CSS], margin=(4, 5, 0, 5)),
            self._scene_upload, margin=0,
        )  # fmt: skip

    def _on_scene(self, scene: Scene) -> None:
        with pn.io.hold():
            self.load_scene(scene)

    def load_scene(self, scene: Scene) -> bool:
        """Set everything up as ``scene`` says and start its simulation (and its sweep or
        comparison); a scene that cannot load is a notification and changes nothing.

        Every name the scene holds goes through the session's ``access`` first (refused at
        once); a mapping scene's network is then resolved, partitioned and placed in a
        worker thread (``off_page``) — a page opened with a scene link is answered at once
        — and the rest follows on the page. Returns whether the scene was taken."""
        s = self.state
        if self.running or self.curve.sweeping or self.loading:
            notify_error(
                "a simulation, a sweep or a scene is under way: wait for it, or stop the sweep"
            )
            return False
        try:
            s.access.scene(scene)
        except MeshScopeError as e:
            self._scene_failed(scene, str(e))
            return False
        if scene.kind != "mapping":
            self._set_scene(scene)
            return True
        self.loading = True
        self._scene_note = self._scene_text.object
        self._scene_text.object = (
            f"<span class='muted'>Loading the scene <b>{escape(scene.title)}</b>…</span>"
        )
        off_page(
            self._doc,
            lambda: s.prepare(scene.network, scene.hardware, partition_spec=scene.partition,
                              placer=scene.placer),  # fmt: skip
            lambda prepared: self._scene_loaded(scene, prepared),
            lambda message: self._scene_failed(scene, message),
            what="loading the scene", name="meshscope-scene",
        )  # fmt: skip
        return True

    def _scene_loaded(self, scene: Scene, prepared) -> None:
        with pn.io.hold():
            try:
                self.state.adopt(prepared)
            except MeshScopeError as e:
                self._scene_failed(scene, str(e))
                return
            self.loading = False
            self._set_scene(scene)

    def _scene_failed(self, scene: Scene, message: str) -> None:
        if self.loading:
            self.loading = False
            self._scene_text.object = self._scene_note
        notify_when_up(f"The scene '{scene.title}' cannot load: {message}")

    def _set_scene(self, scene: Scene) -> None:
        """The Traffic tab's settings as ``scene`` says (its mapping loaded), then run."""
        settings = {"seed": scene.seed, "mode": scene.mode, "multicast": scene.multicast}
        if scene.kind == "synthetic":
            settings.update(
                source=SOURCES[1], pattern=scene.pattern, side=scene.side, rows=scene.rows,
                rate=scene.rate, packet_flits=scene.packet_flits, cycles=scene.cycles,
                routing=scene.routing,
            )  # fmt: skip
        else:
            settings["source"] = SOURCES[0]
        self.param.update(**settings, scene=scene)
        self._scene_text.object = (
            f"<span data-testid='scene-text'><b>{escape(scene.title)}.</b> "
            f"{with_terms(escape(scene.text))}</span>"
        )
        self._compare.object = ""
        self._start()
        if scene.sweep and scene.kind == "synthetic":
            self.curve.start()
        if scene.compare and scene.kind == "mapping":
            self._compare.object = "Comparing the placements…"
            threading.Thread(
                target=self._compare_placers, args=(scene,), name="meshscope-compare",
                daemon=True,
            ).start()  # fmt: skip

    def current_scene(self) -> Scene:
        """The Traffic tab's setup as a scene (the last scene loaded, if nothing changed)."""
        s = self.state
        common = {"seed": self.seed, "title": "A shared setup", "text": "(no notes yet)"}
        if self.source == SOURCES[1]:
            scene = Scene(
                kind="synthetic", pattern=self.pattern, side=self.side, rows=self.rows,
                rate=self.rate, packet_flits=self.packet_flits, cycles=self.cycles,
                routing=self.routing, **common,
            )  # fmt: skip
        else:
            scene = Scene(
                kind="mapping", network=s.network_spec, hardware=s.hardware_spec,
                placer=s.placer, partition=s.partition_spec, mode=self.mode,
                multicast=self.multicast, **common,
            )  # fmt: skip
        last = self.scene
        if last is not None:
            same = replace(
                scene, title=last.title, text=last.text, sweep=last.sweep, compare=last.compare
            )
            if same == last:
                return last
        return scene

    def share_query(self) -> str:
        """The ``?scene=`` value of the current setup: a built-in's name, or the scene."""
        scene = self.current_scene()
        return scene.name if scene.name in SCENES else encode_scene(scene)

    def _on_share(self) -> None:
        loc = pn.state.location
        base = ""
        if loc is not None and loc.hostname:
            port = f":{loc.port}" if loc.port else ""
            base = f"{loc.protocol}//{loc.hostname}{port}{loc.pathname}"
        self._share_link.value = f"{base}?scene={self.share_query()}"

    def _scene_json(self) -> io.StringIO:
        return io.StringIO(json.dumps(self.current_scene().to_dict(), indent=2) + "\n")

    def _on_scene_file(self, event) -> None:
        data, name = event.new, self._scene_upload.filename or "the file"
        if data is None:
            return  # cleared
        try:
            self.state.access.check_upload(name, len(data))
            scene = parse_scene(upload_json(name, data, SCENE_FILE))
        except MeshScopeError as e:
            notify_error(str(e) if str(e).startswith(name) else f"{name}: {e}")
            return
        with pn.io.hold():
            self.load_scene(scene)

    def _compare_placers(self, scene: Scene) -> None:
        s = self.state
        network, hardware, partition = s.network, s.hardware, s.mapping.partition
        rows = []
        try:
            for placer in scene.compare:
                mapped = build_mapping(network, hardware, partition=partition, placement=placer)
                step = simulate_step(
                    mapped, mode=scene.mode, multicast=scene.multicast, seed=scene.seed,
                    limit_cycles=s.access.cycles,
                )  # fmt: skip
                rows.append((placer, evaluate(mapped).latency_us, step.step_us))
        except Exception as e:  # noqa: BLE001 - a page must hear of any failure
            message = failure_text(e, "the comparison")
            self._schedule(lambda: (notify_error(message), self._show_compare([], False)))
            return
        measured = scene.name == "heuristics"
        self._schedule(lambda: self._show_compare(rows, measured))

    def _show_compare(self, rows, measured: bool) -> None:
        self._compare.object = (
            compare_table(rows, MEASURED_US if measured else None) if rows else ""
        )

    def __panel__(self):
        return pn.Column(
            pn.FlexBox(
                pn.pane.Markdown("**Scenes**", margin=(8, 5, 0, 5)),
                *self._scene_buttons,
                flex_wrap="wrap",
                sizing_mode="stretch_width",
                margin=0,
            ),
            pn.FlexBox(
                self._scene_text,
                self._compare,
                margin=(0, 5, 6, 5),
                flex_wrap="wrap",
                sizing_mode="stretch_width",
            ),
            self._main(),
            margin=0,
            sizing_mode="stretch_width",
        )

    def _main(self):
        return pn.FlexBox(
            pn.Column(self._controls(), self._share, margin=0),
            pn.Column(
                self.summary,
                labelled_player(self.player),
                self.counter,
                pn.FlexBox(
                    self._figure_pane,
                    pn.Column(self._histogram, self.legend),
                    flex_wrap="wrap",
                    sizing_mode="stretch_width",
                ),
                self.walker,
                self.curve,
                margin=(0, 10),
                sizing_mode="stretch_width",
            ),
            flex_wrap="wrap",
            sizing_mode="stretch_width",
        )


def compare_table(rows, measured: dict | None = None) -> str:
    """An HTML table of (placer, analytic µs, simulated µs) rows, each with its rank, and
    the measured µs (and rank) of the placers ``measured`` knows."""

    def ranks(values):
        order = np.argsort(np.argsort(values, kind="stable"), kind="stable") + 1
        return order.tolist()

    analytic = ranks([r[1] for r in rows])
    simulated = ranks([r[2] for r in rows])
    hw = ranks([measured[r[0]] for r in rows]) if measured else None
    head = "<tr><th>placement</th>" + ("<th>on the chip</th>" if measured else "")
    head += "<th>analytic</th><th>simulated</th></tr>"
    body = []
    for i, (placer, a, sim) in enumerate(rows):
        cells = f"<td>{escape(placer)}</td>"
        if measured:
            cells += f"<td>{measured[placer]:.2f} ({hw[i]})</td>"
        cells += f"<td>{a:,.2f} ({analytic[i]})</td><td>{sim:,.2f} ({simulated[i]})</td>"
        body.append(f"<tr>{cells}</tr>")
    return (
        "<table class='compare' data-testid='scene-compare'>"
        f"<caption>µs per step (rank)</caption>{head}{''.join(body)}</table>"
    )


def _share_bar(palette, title: str) -> ColorBar:
    """A horizontal colour bar of a share from 0 to 100 %."""
    return ColorBar(
        color_mapper=LinearColorMapper(palette=list(palette), low=0, high=1), title=title,
        orientation="horizontal", height=10, width=220, padding=6, bar_line_color=None,
        formatter=NumeralTickFormatter(format="0%"), ticker=BasicTicker(desired_num_ticks=5),
        title_text_font_size="12px", major_label_text_font_size="11px",
    )  # fmt: skip


def _drained(trace) -> str:
    """The counter's word on a synthetic run's cycles past those asked for (its drain)."""
    offered = trace.offered_cycles
    if offered is None or offered >= trace.cycles:
        return ""
    return f" (traffic offered for {offered:,}, then the packets under way drain)"


def _listed(values):
    """A column Bokeh serializes (object arrays as lists)."""
    values = np.asarray(values)
    return values.tolist() if values.dtype == object else values
