"""The Traffic tab's latency against offered load: a sweep of its synthetic pattern, drawn
point by point (``LoadCurve``) and read in two sentences (``curve_sentences``)."""

from __future__ import annotations

import numpy as np
import panel as pn
import param
from bokeh.models import ColumnDataSource, FixedTicker, HoverTool, Range1d, Span
from bokeh.plotting import figure

from engine.errors import MeshScopeError
from engine.simulate import build_pattern, channel_load_bound, read_curve
from engine.simulate.sweep import SATURATION_FACTOR, saturated
from explorer.admission import place_text
from explorer.traffic_runner import TrafficRunner, mesh_shape, sweep_points, synthetic_spec
from explorer.views._page import LiveHTML, notify_error, session_scheduler, style_figure
from explorer.views.traffic_frames import FULL_COLOR, TRAFFIC_CSS

__all__ = ["LoadCurve", "curve_sentences"]


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
    past = [p["rate"] for p in points if saturation is not None and p["rate"] > saturation]
    if saturation is None:
        second = "<b>Saturated from the lowest rate</b>: even this load is more than it carries."
    elif not past:
        second = (
            f"Below saturation up to {saturation:.2f} flits/node/cycle so far (the routes' "
            f"channel-load bound allows at most {bound:.2f})."
        )
    else:
        second = (
            f"<b>Saturation at {saturation:.2f} flits/node/cycle</b> (the next rate run, "
            f"{min(past):.2f}, is past it): beyond it packets arrive faster than the busiest "
            "channels drain them, queues grow without end and latency explodes — orange, "
            f"{SATURATION_FACTOR:g}× zero-load or more; a cross along the top, a run whose "
            "latency never settled (BookSim2's test). The channel-load bound of these "
            f"routes is {bound:.2f} flits/node/cycle."
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
        self._runner = TrafficRunner(
            self._schedule, what="the sweep", gate=self.traffic.state.gate,
            waiting=lambda place: place and setattr(
                self.text, "object", f"Waiting for the server: {place_text(place)}…"
            ),
        )  # fmt: skip
        self._generation = 0  # sweeps started so far: a point says which one it is from
        self.button = pn.widgets.Button(label="Sweep offered load", width=180)
        self.button.on_click(self._on_click)
        self.points = ColumnDataSource({"rate": [], "latency": [], "accepted": [], "color": []})
        p = figure(
            title="latency against offered load",
            width=460,
            height=280,
            tools="hover,save",
            toolbar_location=None,
            y_axis_type="log",
            x_range=Range1d(0, 0.5),
            y_range=Range1d(10, 1000),
        )  # fmt: skip  (explicit ranges: Bokeh cannot fit ranges to no data; show fits them)
        style_figure(p, "offered load (flits/node/cycle)", "packet latency (cycles)")
        # 20, 50, 100, 200, 500 …: Bokeh's log ticks label 100, 200, … 700 within a few
        # pixels once latency runs away
        p.yaxis.ticker = FixedTicker(
            ticks=[m * 10**e for e in range(7) for m in (1, 2, 5)], minor_ticks=[]
        )
        p.line("rate", "latency", source=self.points, line_color="#6b7280")
        curve = p.scatter("rate", "latency", source=self.points, size=7, fill_color="color",
                          line_color="white", name="curve")  # fmt: skip
        # a run that failed BookSim2's test has no latency to plot (it stopped while its queues
        # still grew, so what it had then falls as the rate rises): a cross along the top
        self.unstable = ColumnDataSource({"rate": [], "top": [], "accepted": []})
        gone = p.scatter("rate", "top", source=self.unstable, marker="x", size=11,
                         line_color=FULL_COLOR, line_width=2, name="unstable")  # fmt: skip
        p.hover.tooltips = [
            ("offered", "@rate{0.00}"), ("latency", "@latency{0,0.0} cycles"),
            ("accepted", "@accepted{0.000}"),
        ]  # fmt: skip
        gone_hover = HoverTool(renderers=[gone], tooltips=[
            ("offered", "@rate{0.00}"), ("unstable", "latency grows without end"),
            ("accepted", "@accepted{0.000}"),
        ])  # fmt: skip
        p.add_tools(gone_hover)
        p.hover.renderers = [curve]
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
            css=TRAFFIC_CSS, div_params={"css_classes": ["traffic-summary"], "width": 330},
            width=330,
        )  # fmt: skip
        self._points: list[dict] = []
        self._setup: tuple = ()  # the settings the curve drawn was swept with
        self._bound = float("nan")

    def _on_click(self, event=None) -> None:
        with pn.io.hold():
            if self.sweeping:
                self._runner.stop()
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
        # a sweep still running (a scene loaded during one) stops (the runner's start), and
        # what it still publishes is dropped: its points would mix into this curve
        self._generation += 1
        generation = self._generation
        self._points = []
        self._setup = self.setup_of(t)
        self.points.data = {"rate": [], "latency": [], "accepted": [], "color": []}
        self.unstable.data = {"rate": [], "top": [], "accepted": []}
        self.zero_line.location = self.saturation_line.location = None
        self.sweeping = True
        self.button.label = "Stop"
        self.text.object = f"Sweeping {t.pattern} on {width}×{height}…"
        # each publication carries every point so far: the page's next-tick callbacks were
        # seen to run out of order (and a point once went missing), so the curve takes the
        # longest list it has heard of, and the sweep's end brings the whole of it
        swept: list[dict] = []

        def on_point(point: dict) -> None:
            swept.append(point)
            so_far = list(swept)
            self._schedule(lambda: self.show(so_far, generation))

        def failed(message: str) -> None:
            notify_error(message)
            self._done(generation, list(swept))

        options = {"seed": t.seed, "routing": t.routing, "rows": t.rows, "cycles": t.cycles}
        self._runner.start(
            lambda cancel: sweep_points(t.pattern, t.side, t.packet_flits, cancel=cancel,
                                        on_point=on_point, **options),
            lambda points: self._done(generation, points),
            failed,
        )  # fmt: skip

    @staticmethod
    def setup_of(traffic) -> tuple:
        """What a sweep of ``traffic`` depends on (its rate aside)."""
        t = traffic
        return (t.pattern, t.side, t.rows, t.packet_flits, t.cycles, t.routing, t.seed)

    def cancel(self, why: str = "") -> None:
        """Stop the sweep under way at once, dropping what it still sends (a scene that
        takes over the tab); ``why`` is said in the curve's text."""
        if not self.sweeping:
            return
        self._generation += 1  # its late points and its end are dropped
        self._runner.stop()
        self.sweeping = False
        self.button.label = "Sweep offered load"
        self.text.object = f"<span class='muted'>Sweep stopped{why}.</span>"

    def stale(self) -> bool:
        """Whether the curve drawn is of other settings than the tab's now."""
        return bool(self._points) and self._setup != self.setup_of(self.traffic)

    def clear(self, why: str) -> None:
        """Drop the curve (``why``: the sentence in its place)."""
        self.cancel()
        self._generation += 1
        self._points = []
        self.points.data = {"rate": [], "latency": [], "accepted": [], "color": []}
        self.unstable.data = {"rate": [], "top": [], "accepted": []}
        self.zero_line.location = self.saturation_line.location = None
        self.text.object = f"<span class='muted' data-testid='curve-stale'>{why}</span>"

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
        zero, saturation = read_curve(pts)
        kept = [p for p in pts if p["stable"]]  # at the rate each was offered (measured)
        gone = [p for p in pts if not p["stable"]]  # at the rate swept: no latency to show
        self.points.data = {
            "rate": [p["offered_flit_rate"] for p in kept],
            "latency": [p["latency_avg"] for p in kept],
            "accepted": [p["accepted_flit_rate"] for p in kept],
            "color": [FULL_COLOR if saturated(p, zero) else "#2171b5" for p in kept],
        }
        latency = np.array(self.points.data["latency"], dtype=float)
        latency = latency[np.isfinite(latency) & (latency > 0)]
        if latency.size:
            self.figure.y_range.update(start=latency.min() / 1.4, end=latency.max() * 2.0)
        top = self.figure.y_range.end / 1.25  # (the log axis: just under the top)
        self.unstable.data = {
            "rate": [p["rate"] for p in gone], "top": [top] * len(gone),
            "accepted": [p["accepted_flit_rate"] for p in gone],
        }  # fmt: skip
        self.figure.x_range.update(start=0, end=1.08 * max(p["rate"] for p in pts))
        self.zero_line.location = zero if np.isfinite(zero) else None
        done = saturation is not None and any(p["rate"] > saturation for p in pts)
        self.saturation_line.location = saturation if done else None
        first, second = curve_sentences(pts, self._bound)
        self.text.object = f"<span data-testid='curve-text'>{first}<br><br>{second}</span>"

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
