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

from html import escape

import numpy as np
import panel as pn
import param
from bokeh.models import (
    BasicTicker,
    ColorBar,
    ColumnDataSource,
    HoverTool,
    LinearColorMapper,
    NumeralTickFormatter,
    Range1d,
    Title,
)
from bokeh.plotting import figure

from engine.hardware import NocConstants
from engine.hardware.routing import routings
from engine.simulate import MODES
from explorer import scenes
from explorer.admission import place_text
from explorer.state import ExplorerState
from explorer.traffic_runner import (
    MAX_SIDE,
    SOURCES,
    Current,
    TrafficRun,
    TrafficRunner,
    simulate_traffic,
)
from explorer.views._page import (
    ICONS,
    LiveHTML,
    notify_error,
    session_scheduler,
    style_figure,
)
from explorer.views.glossary import labelled_player, term_help, with_terms
from explorer.views.load_curve import LoadCurve
from explorer.views.mesh_columns import (
    LOAD_PALETTE,
    MESH_PAD,
    TILE_SIZE,
    link_geometry,
    router_columns,
)
from explorer.views.mesh_figure import mesh_canvas
from explorer.views.traffic_frames import (
    BUFFER_PALETTE,
    FULL_COLOR,
    TRAFFIC_CSS,
    WAIT_COLORS,
    latency_counts,
    latency_edges,
    link_frame,
    router_frame,
    traffic_box,
)
from explorer.views.walk import WalkView

__all__ = ["TrafficView"]

CYCLES_HELP = (
    "The cycles traffic is offered for; the run then goes on until the packets under way "
    "are delivered, so the counter below may count more."
)
SYNTHETIC_PATTERNS = scenes.PATTERNS  # every pattern but a matrix file
WALK_COLOR = "#059669"  # a walked packet's route (apart from the links' oranges)


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
                             doc="how packets are routed (engine.hardware.routing)")  # fmt: skip
    seed = param.Integer(default=0, bounds=(0, None))
    running = param.Boolean(default=False)
    run = param.ClassSelector(class_=TrafficRun, default=None, allow_None=True)

    def __init__(self, **params):
        super().__init__(**params)
        if "multicast" not in params:  # as the hardware's NoC does (seneca's multicasts)
            self.multicast = bool(self.state.hardware.links.multicast)
        # the session's document (None in tests), and what runs a function on its thread
        self.doc = pn.state.curdoc if pn.state.curdoc and pn.state.curdoc.session_context else None
        self.schedule = session_scheduler(self.doc)
        self._runner = TrafficRunner(self.schedule, what="the simulation", gate=self.state.gate,
                                     waiting=self._waiting)  # fmt: skip
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
        self.counter = LiveHTML(  # beside the player, wrapping within the tab's width
            "", css=TRAFFIC_CSS, min_width=200, margin=(20, 10, 0, 10),
            div_params={"css_classes": ["traffic-counter"], "sizing_mode": "stretch_width"},
            sizing_mode="stretch_width",
        )  # fmt: skip
        self.summary = LiveHTML(
            "<span class='muted'>Simulate to see the run here.</span>", css=TRAFFIC_CSS,
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
            stylesheets=[TRAFFIC_CSS],
            width=360,
            margin=(4, 10),
        )
        self._figure_pane = pn.pane.Bokeh(None, margin=(0, 0))
        self._histogram = self._histogram_figure()
        self._links = self._routers = None
        self._edges = np.linspace(0, 1, 2)
        self._options = pn.FlexBox(margin=0, flex_wrap="wrap", align_items="flex-end")
        self._option_boxes: dict[str, list] = {}
        self.curve = LoadCurve(traffic=self)
        self.walker = WalkView(self)
        self._route = ColumnDataSource({"x": [], "y": []})
        self._stops = ColumnDataSource(
            {"x": [], "y": [], "size": [], "router": [], "waited": [], "why": []}
        )
        self.param.watch(self._show_options, "source")
        self._show_options()

    # ------------------------------------------------------------ controls
    def _controls(self) -> pn.Row:
        """The Simulate button, and beside it the run's settings: a card whose title says
        them in one line, opened to change them (closed, the run's mesh stays in view)."""
        source = pn.widgets.RadioButtonGroup.from_param(
            self.param.source, name="simulate", color="default", variant="outline", width=330,
        )  # fmt: skip
        self._settings_line = pn.pane.HTML(
            self._settings_title(), stylesheets=[TRAFFIC_CSS], margin=(0, 4), min_width=200,
            css_classes=["traffic-summary"], sizing_mode="stretch_width",
            styles={"white-space": "normal", "text-align": "left"},
        )  # fmt: skip
        self._settings = pn.Card(
            pn.FlexBox(
                source, self._options,
                pn.widgets.IntInput.from_param(self.param.seed, name="seed", width=120),
                flex_wrap="wrap", align_items="flex-end", sizing_mode="stretch_width", margin=0,
            ),
            header=self._settings_line, collapsed=True, sizing_mode="stretch_width",
            margin=(0, 5),
            styles={"flex": "1 1 0", "min-width": "0"},  # the rest of the row, no more
        )  # fmt: skip
        self.param.watch(
            lambda *events: setattr(self._settings_line, "object", self._settings_title()),
            ["source", "mode", "multicast", "pattern", "side", "rows", "rate", "packet_flits",
             "cycles", "routing", "seed"],
        )  # fmt: skip
        return pn.FlexBox(self._run_button, self._settings, margin=(4, 5), flex_wrap="nowrap",
                          align_items="flex-start", sizing_mode="stretch_width")  # fmt: skip

    def _settings_title(self) -> str:
        if self.source == SOURCES[0]:
            what = f"this mapping's step, {self.mode}" + (", multicast" if self.multicast else "")
        else:
            rows = self.rows or self.side
            what = (
                f"{self.pattern} on {self.side}×{rows} at {self.rate:g} flits/node/cycle, "
                f"{self.packet_flits}-flit packets, {self.cycles:,} cycles, "
                f"{routings[self.routing].label}"
            )
        return (
            f"<span data-testid='traffic-settings'><b>Settings</b> (open to change): "
            f"{escape(what)}; seed {self.seed}</span>"
        )

    def _show_options(self, *events) -> None:
        """The settings of the source chosen (each box built once, kept in sync)."""
        if self.source not in self._option_boxes:
            self._option_boxes[self.source] = self._option_items(self.source)
        self._options.objects = self._option_boxes[self.source]

    def _option_items(self, source: str) -> list:
        w = 180
        if source == SOURCES[0]:
            items = [
                pn.widgets.Select.from_param(self.param.mode, name="execution", width=w),
                pn.widgets.Checkbox.from_param(
                    self.param.multicast, name="multicast (a packet per spike)"
                ),
            ]
        else:
            items = [
                pn.widgets.Select.from_param(self.param.pattern, name="pattern", width=w),
                self._checked(pn.widgets.IntInput, "side", "mesh side", width=w),
                self._checked(pn.widgets.IntInput, "rows", "mesh rows (0: square)",
                              width=w),  # fmt: skip
                self._checked(pn.widgets.FloatInput, "rate", "offered flits/node/cycle",
                              step=0.01, width=w, description=term_help("flit")),  # fmt: skip
                self._checked(pn.widgets.IntInput, "packet_flits", "flits per packet", width=w,
                              description=term_help("flit")),
                self._checked(pn.widgets.IntInput, "cycles", "cycles", width=w,
                              description=CYCLES_HELP),
                pn.widgets.Select.from_param(
                    self.param.routing, name="routing", width=w,
                    options={routings[name].label: name for name in routings},
                ),
            ]  # fmt: skip
        return items

    def _checked(self, widget, name: str, label: str, **params):
        """A number box for the parameter ``name`` that refuses what is out of its bounds
        aloud: a notification names the bounds and the box shows the value in use again (a
        box linked to the parameter kept showing the refused number while the run used the
        old one)."""
        p = self.param[name]
        low, high = p.bounds
        # no start/end on the box: Bokeh's box keeps a number past them to itself (it showed
        # 1000, the server never heard of it); the parameter refuses it here, aloud
        params.setdefault("description", p.doc)
        box = widget(label=label, value=getattr(self, name), **params)

        def typed(event) -> None:
            if event.new == getattr(self, name):
                return
            try:
                setattr(self, name, event.new)
            except ValueError:
                within = f"from {low:g} to {high:g}" if high is not None else f"at least {low:g}"
                typed_text = "nothing" if event.new is None else f"{event.new:g}"
                notify_error(
                    f"The {label.split(' (')[0]} must be {within}, not {typed_text}: it stays "
                    f"{getattr(self, name):g}"
                )
                box.value = getattr(self, name)

        box.param.watch(typed, "value")
        self.param.watch(lambda event: setattr(box, "value", event.new), name)
        return box

    # ------------------------------------------------------------ simulating
    def _on_simulate(self, event=None) -> None:
        with pn.io.hold():  # Panel may call a button's handler without the document lock
            self.start_run()

    def start_run(self) -> None:
        """Simulate with the settings in a worker thread; ``show`` draws the run."""
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
        source, current = self.source, Current.of(self.state)  # the session as it is now
        self._runner.start(
            lambda cancel: simulate_traffic(current, source, **options), self.show,
            self._failed,
        )  # fmt: skip

    def simulate(self, source: str | None = None, **options) -> TrafficRun:
        """Simulate now (in this thread) and show the run; raises ``MeshScopeError``."""
        run = simulate_traffic(self.state, source or self.source, **options)
        self.show(run)
        return run

    def _failed(self, message: str) -> None:
        self.running = False
        self._run_button.disabled = False
        self.counter.object = ""
        notify_error(message)

    def _waiting(self, place: int) -> None:
        """The simulation's place in the server's line while it waits its turn."""
        if place:
            self.summary.object = (
                f"<span class='muted' data-testid='traffic-summary'>Waiting for the server: "
                f"{place_text(place)}…</span>"
            )

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
        p = mesh_canvas(
            hw, title=run.title, axis_labels=False,
            frame_width=int(round(ppr * (x1 - x0 + 2 * pad))),
            frame_height=int(round(ppr * (y1 - y0 + 2 * pad))),
            # the routers the run used, and the whole mesh a pan or zoom away
            x_range=Range1d(x0 - pad, x1 + pad, bounds=(-pad, gw - 1 + pad)),
            y_range=Range1d(y1 + pad, y0 - pad, bounds=(-pad, gh - 1 + pad)),
            tools="pan,wheel_zoom,reset,save",
        )  # fmt: skip
        if (x0, x1, y0, y1) != (0, gw - 1, 0, gh - 1):
            p.add_layout(Title(
                text=f"routers {x0}–{x1} × {y0}–{y1} of {gw}×{gh}, where the run went: "
                "zoom out for the rest", text_font_size="11px", text_font_style="italic",
                text_color="#6b7280", name="zoomed",
            ), "above")  # fmt: skip
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
        # explicit ranges: Bokeh cannot fit ranges to no bars; _draw fits them
        p = figure(
            title="packets delivered so far, by latency", width=360, height=230, tools="",
            toolbar_location=None, x_range=Range1d(0, 1), y_range=Range1d(0, 1),
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

    def __panel__(self):
        """The run — mesh, player and histogram in the first screen, under the one line of
        settings — then the walk and the load curve (``TrafficTab`` puts the scenes around
        it)."""
        return pn.Column(
            self._controls(),
            pn.Column(
                self.summary,
                pn.Row(
                    labelled_player(self.player),
                    self.counter,
                    margin=0,
                    sizing_mode="stretch_width",
                ),  # fmt: skip
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
            margin=0,
            sizing_mode="stretch_width",
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
    if offered is None or offered == trace.cycles:
        return ""
    warm = int(trace.meta.get("warmup", 0))
    if offered > trace.cycles:  # stopped past saturation, as BookSim2 stops
        return (
            f" (stopped there, of the {offered:,} asked for, {warm:,} warm-up and "
            f"{offered - warm:,} measured cycles: its latency passed BookSim2's threshold, past "
            "saturation)"
        )
    if warm:  # the warm-up's packets are not measured, but they are drawn
        return (
            f" (traffic offered for {warm:,} warm-up and {offered - warm:,} measured cycles, "
            "then the packets under way drain)"
        )
    return f" (traffic offered for {offered:,}, then the packets under way drain)"


def _listed(values):
    """A column Bokeh serializes (object arrays as lists)."""
    values = np.asarray(values)
    return values.tolist() if values.dtype == object else values
